"""N-Triples written straight from the mapping's terms, in canonical form, sorted and distinct.

The mapping (``prov_export.mapping``) yields rdflib terms; a format that needs a graph
(Turtle, JSON-LD, the PROV documents) builds one. N-Triples needs none: each triple is one
line, so this module writes the line itself — in the canonical form of RDF 1.2 N-Triples
that RDFC-1.0 hashes (an IRI as ``<…>``; a literal's ``"``, ``\\``, and the control
characters escaped, ``\\t`` ``\\b`` ``\\n`` ``\\f`` ``\\r`` as themselves and the others as
``\\u00XX`` in upper case; no ``^^xsd:string``; a language tag in lower case).

The whole store's export is sorted and made distinct without a graph in memory
(``sorted_lines``): by the system's ``sort`` in a child process where there is one (lines
piped to it as they are made, so it sorts on the machine's other core while the records are
mapped; ``LC_ALL=C`` orders UTF-8 bytes, which is code-point order, Python's); otherwise in
this process (``SortedLines``): lines are gathered up to a bound, sorted, and spilled to a
temporary file, each distinct line once, and the runs are merged at the end. Either way each
distinct line is written once, in order, while it is hashed.
Because every node of gaf's PROV is an IRI (no blank nodes), the canonical N-Quads of the
graph *are* these lines in this order, so the sha256 of the file is the graph's RDFC-1.0
canonical hash (``export.canonical_hash``) — computed as the file is written, never by
loading it.
"""

from __future__ import annotations

import functools
import hashlib
import heapq
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterable, Iterator
from typing import IO, Any, Protocol

from rdflib import BNode, Literal, URIRef
from rdflib.namespace import XSD

from gaf.errors import ExportError

XSD_STRING = XSD.string

#: Characters a canonical N-Triples string escapes, and how.
_ECHAR = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\b": "\\b", "\f": "\\f"}
_ESCAPED = re.compile('["\\\\\x00-\x1f\x7f\ufffe\uffff]')
_CONTROL = re.compile("[\x00-\x1f\x7f\ufffe\uffff]")


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    return _ECHAR.get(char) or f"\\u{ord(char):04X}"


def _quoted(text: str) -> str:
    if _CONTROL.search(text):  # rare: a character by character rewrite
        return f'"{_ESCAPED.sub(_escape, text)}"'
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def term(t: Any) -> str:
    """One term as canonical N-Triples."""
    if isinstance(t, URIRef):
        return f"<{t}>"
    if isinstance(t, Literal):
        text = _quoted(t)
        if t.language:
            return f"{text}@{t.language.lower()}"
        if t.datatype is not None and t.datatype != XSD_STRING:
            return f"{text}^^<{t.datatype}>"
        return text
    if isinstance(t, BNode):
        return f"_:{t}"
    raise TypeError(f"not an RDF term: {t!r}")


def line(s: Any, p: Any, o: Any) -> str:
    """One triple as a canonical N-Triples line, its newline included."""
    return f"{term(s)} {term(p)} {term(o)} .\n"


def quad_lines(ds: Any) -> set[str]:
    """A dataset's distinct canonical N-Quads lines: a triple of the default graph as its
    N-Triples line, one of a named graph with the graph's IRI before the dot."""
    out: set[str] = set()
    default = ds.default_graph.identifier
    for s, p, o, c in ds.quads((None, None, None, None)):
        name = getattr(c, "identifier", c)
        if name is None or name == default:
            out.add(line(s, p, o))
        else:
            out.add(f"{term(s)} {term(p)} {term(o)} {term(URIRef(str(name)))} .\n")
    return out


def lines(triples: Iterable[tuple[Any, Any, Any]]) -> set[str]:
    """Some triples' distinct lines."""
    out: set[str] = set()
    gather(triples, out.add)
    return out


def gather(triples: Iterable[tuple[Any, Any, Any]], add: Callable[[str], object]) -> int:
    """Hand each triple's line to ``add``: the characters handed over."""
    size = 0
    for s, p, o in triples:
        # Nearly every triple: the exact type is the fast test, and joining the terms (str subclasses)
        # costs a third of formatting them into an f-string, which calls each one's __format__.
        if type(s) is URIRef and type(p) is URIRef:
            kind = type(o)
            if kind is URIRef:
                text = "".join(("<", s, "> <", p, "> <", o, "> .\n"))
            elif kind is Literal and o.datatype is None and o.language is None:  # a plain literal
                text = "".join(("<", s, "> <", p, "> ", _quoted(o), " .\n"))
            else:
                text = "".join(("<", s, "> <", p, "> ", term(o), " .\n"))
        else:
            text = line(s, p, o)
        add(text)
        size += len(text)
    return size


#: How much of the lines a sorter holds in memory before it spills a sorted run to disk.
SORT_BOUND = 64 * 2**20


def _copied(out: IO[str], chunks: Iterable[bytes]) -> tuple[int, str]:
    """Write sorted lines, already UTF-8, to the text file ``out`` (through its bytes): how many
    lines, and the sha256 of what was written."""
    digest = hashlib.sha256()
    count = 0
    out.flush()
    raw = out.buffer  # type: ignore[attr-defined]
    for chunk in chunks:
        raw.write(chunk)
        digest.update(chunk)
        count += chunk.count(b"\n")  # a line's one newline: N-Triples escapes those inside literals
    return count, digest.hexdigest()


class Sorter(Protocol):
    """Triples taken in any order and written as canonical lines, sorted and distinct."""

    def add(self, triples: Iterable[tuple[Any, Any, Any]]) -> None:
        """Some triples (a record's, say)."""

    def write(self, out: IO[str]) -> tuple[int, str]:
        """Write every distinct line, sorted, to ``out``: how many, and the sha256 of what was written."""

    def close(self) -> None:
        """Let go of what is held (a child process, run files), written or not."""


def sorted_lines(directory: str | os.PathLike[str], bound: int = SORT_BOUND) -> Sorter:
    """The sorter for a whole store's lines, in memory bounded by ``bound`` (its temporary files
    in ``directory``): the system's ``sort`` where there is one (``SystemSort``), else this
    process's (``SortedLines``)."""
    program = shutil.which("sort")
    return SystemSort(program, directory, bound) if program else SortedLines(directory, bound)


@functools.lru_cache(maxsize=8)
def _one_merge(program: str) -> list[str]:
    """GNU sort's option to merge all its spilled runs at once (it merges 16 at a time by
    default, so a 1M-record store's ~85 runs of 64 MiB went through two passes at the end, ~12 s
    more); nothing for another sort (BSD's has no such option)."""
    try:
        said = subprocess.run([program, "--version"], capture_output=True, env={"LC_ALL": "C"}, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    if b"GNU coreutils" not in said:
        return []
    import resource  # POSIX: GNU sort refuses a batch larger than its open files allow

    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    most = 1000 if soft == resource.RLIM_INFINITY else min(1000, soft - 8)
    return [f"--batch-size={most}"] if most > 16 else []


class SystemSort:
    """Lines piped, as they are made, to the system's ``sort -u`` in a child process (which uses
    the machine's other core while this one maps records), and its output copied to the file
    and hashed. Under ``LC_ALL=C`` it compares bytes, and UTF-8's byte order is code-point order,
    the order ``SortedLines`` and Python sort strings in: the same file either way (a test holds
    the two alike). ``-S`` bounds its buffer by ``bound``; past it, it spills runs to
    ``directory`` and merges them, as ``SortedLines`` does."""

    #: lines joined into one write to the pipe
    BATCH = 8192

    def __init__(self, program: str, directory: str | os.PathLike[str], bound: int = SORT_BOUND):
        env = {"LC_ALL": "C"}  # and nothing else of this process's environment: the program is named by its path
        self._child: subprocess.Popen[bytes] | None = subprocess.Popen(
            [program, "-u", "-S", f"{max(bound // 1024, 64)}K", *_one_merge(program), "-T", os.fspath(directory)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
        )  # fmt: skip
        self._held: list[str] = []

    def add(self, triples: Iterable[tuple[Any, Any, Any]]) -> None:
        """Some triples, as canonical lines, piped to ``sort`` a batch at a time."""
        gather(triples, self._held.append)
        if len(self._held) >= self.BATCH:
            self._pipe()

    def _pipe(self) -> None:
        child = self._running()
        assert child.stdin is not None
        try:
            child.stdin.write("".join(self._held).encode("utf-8"))
        except BrokenPipeError:
            self._failed()
        self._held = []

    def _running(self) -> subprocess.Popen[bytes]:
        if self._child is None:
            raise ExportError("the sort of this export's lines was closed")
        return self._child

    def _failed(self) -> None:
        """``sort`` stopped early: its own words (a full disk, say) as gaf's error."""
        child = self._running()
        if child.poll() is None:
            child.kill()
        assert child.stderr is not None
        err = child.stderr.read()
        self.close()
        raise ExportError(f"sorting the export's lines failed: {err.decode('utf-8', 'replace').strip() or f'sort exited {child.returncode}'}",
                          hint="sort spills to the output's directory: free space there, or write the export elsewhere")  # fmt: skip

    def input(self) -> int:
        """The file descriptor of ``sort``'s input, for a process that writes lines to it itself
        (``mapping_process.MappingProcess``): it must have closed its copy before ``write``."""
        child = self._running()
        assert child.stdin is not None
        return child.stdin.fileno()

    def check(self) -> None:
        """Raise ``sort``'s own error if it has stopped with one."""
        if self._running().poll() not in (None, 0):
            self._failed()

    def write(self, out: IO[str]) -> tuple[int, str]:
        """Close ``sort``'s input, then copy what it writes to ``out``, counting and hashing it."""
        if self._held:
            self._pipe()
        child = self._running()
        assert child.stdin is not None and child.stdout is not None
        try:
            child.stdin.close()  # flushes: a sort that stopped is a broken pipe here
        except BrokenPipeError:
            self._failed()
        stdout = child.stdout
        written = _copied(out, iter(lambda: stdout.read(1 << 20), b""))
        if child.wait() != 0:
            self._failed()
        self.close()
        return written

    def close(self) -> None:
        child, self._child = self._child, None
        if child is not None:
            stop(child)


def stop(child: subprocess.Popen[bytes]) -> int:
    """Stop a child process of the export (the sort, the mapping process) if it still runs, let
    go of its pipes (a broken one too) and wait for it: its exit status."""
    if child.poll() is None:
        child.kill()
    for stream in (child.stdin, child.stdout, child.stderr):
        if stream is not None:
            try:
                stream.close()
            except BrokenPipeError:
                pass
    return child.wait()


class SortedLines:
    """Triples gathered in any order and written as lines sorted and distinct, in memory
    bounded by ``bound`` characters: past it, the lines so far are sorted and spilled to a
    run file in ``directory``, and ``write`` merges the runs.

    Lines are appended to a list as they come, repeats and all, and made distinct once sorted:
    cheaper than asking a set about every line, and the list keeps the order records were read
    in — kind by kind, each in id order, so most of a record's lines sit near their place —
    which Python's sort runs through about four times faster than a set's hash order."""

    def __init__(self, directory: str | os.PathLike[str], bound: int = SORT_BOUND):
        self.directory = directory
        self.bound = bound
        self._held: list[str] = []
        self._size = 0
        self._runs: list[IO[str]] = []

    def add(self, triples: Iterable[tuple[Any, Any, Any]]) -> None:
        """Some triples (a record's, say), as canonical lines."""
        self._size += gather(triples, self._held.append)
        if self._size > self.bound:
            self._spill()

    def _sorted(self) -> list[str]:
        """The lines held, sorted, each once (``dict.fromkeys`` keeps the first of each in order,
        without a Python step per line), and the list emptied."""
        held = self._held
        self._held = []
        self._size = 0
        held.sort()
        return list(dict.fromkeys(held))

    def _spill(self) -> None:
        run = tempfile.TemporaryFile("w+", encoding="utf-8", dir=self.directory, prefix=".gaf-nt-run.")
        run.writelines(self._sorted())
        run.seek(0)
        self._runs.append(run)

    def _chunks(self, size: int = 8192) -> Iterator[list[str]]:
        """The distinct lines in order, ``size`` at a time."""
        held = self._sorted()
        if not self._runs:  # everything fitted: no merge
            for start in range(0, len(held), size):
                yield held[start : start + size]
            return
        chunk: list[str] = []
        previous = None
        for text in heapq.merge(held, *self._runs):
            if text != previous:
                chunk.append(text)
                previous = text
                if len(chunk) == size:
                    yield chunk
                    chunk = []
        if chunk:
            yield chunk

    def write(self, out: IO[str]) -> tuple[int, str]:
        """Write every distinct line, sorted, to ``out``: how many, and the sha256 of what was written."""
        try:
            return _copied(out, ("".join(chunk).encode("utf-8") for chunk in self._chunks()))
        finally:
            self.close()

    def close(self) -> None:
        for run in self._runs:
            run.close()
        self._runs = []
        self._held = []
