"""The whole-store export's mapping, in a process of its own: the reading stays in the export's
process, the mapping runs on the machine's other core.

A whole store's export is two jobs of about the same size — reading the records (queries, and
each body parsed and checked against its id) and mapping them to N-Triples lines — and the
sort is a third, smaller one. ``stream_all`` reads; a ``MappingProcess`` (a second Python
interpreter, started with ``sys.executable``) takes the records a chunk at a time, maps them
with the one ``Mapper`` and writes their canonical lines straight into the system sort's
input, so the three run side by side and an export takes little longer than its reading.

Records cross the pipe pickled, each chunk one frame: its length (8 bytes, little-endian),
then ``pickle.dumps((records, justifications))``. The child only ever reads frames its parent
wrote. Anything that goes wrong in it (its own error, or a sort that stopped reading) ends it
with a non-zero exit and its last words on its standard error, which the parent reads into
gaf's error: never a traceback in the user's face, never a half-written file.
"""

from __future__ import annotations

import io
import json
import pickle
import struct
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import IO, Any

from pydantic import BaseModel

from gaf.errors import ExportError
from gaf.records import Record
from prov_export import ntriples
from prov_export.mapping import Mapper

#: A frame's header: the length of the pickle that follows.
FRAME = struct.Struct("<Q")

#: What the child runs: the directories gaf and prov_export are imported from (so it imports the
#: very modules its parent runs, installed or not), then ``serve`` on its standard streams.
_BOOT = ("import json, sys\n"
         "given = json.loads(sys.argv[1])\n"
         "sys.path[:0] = given['path']\n"
         "from prov_export.mapping_process import serve\n"
         "serve(sys.stdin.buffer, sys.stdout.buffer, given['base'])\n")  # fmt: skip


def _roots() -> list[str]:
    """The directories this package and gaf are imported from."""
    import gaf

    return sorted({str(Path(__file__).resolve().parent.parent), str(Path(gaf.__file__).resolve().parent.parent)})


class MappingProcess:
    """A child process that maps records, chunk by chunk, to canonical N-Triples lines written
    to the file descriptor ``into`` (the system sort's input: ``ntriples.SystemSort.input``)."""

    def __init__(self, base: str, into: int):
        Mapper(base)  # a base that is not an IRI is refused here, in the caller's process
        self._errors: IO[bytes] = tempfile.TemporaryFile(prefix=".gaf-mapping-errors.")
        try:
            self._child: subprocess.Popen[bytes] | None = subprocess.Popen(
                [sys.executable, "-c", _BOOT, json.dumps({"base": base, "path": _roots()})],
                stdin=subprocess.PIPE, stdout=into, stderr=self._errors,
            )  # fmt: skip
        except BaseException:
            self._errors.close()
            raise

    def add(self, records: list[Record], found: dict[str, Record]) -> None:
        """Some records, with the records their mapping looks up (an accepted fact's justification)."""
        child = self._running()
        assert child.stdin is not None
        data = dumps((records, found))
        try:
            child.stdin.write(FRAME.pack(len(data)))
            child.stdin.write(data)
        except BrokenPipeError:
            self._failed()

    def finish(self) -> None:
        """No more records: wait until every line is written (and the child has let go of the
        sort's input, so that the sort sees its end)."""
        child = self._running()
        assert child.stdin is not None
        try:
            child.stdin.close()
        except BrokenPipeError:
            self._failed()
        if child.wait() != 0:
            self._failed()
        self.close()

    def _running(self) -> subprocess.Popen[bytes]:
        if self._child is None:
            raise ExportError("the process mapping this export's records was closed")
        return self._child

    def _failed(self) -> None:
        """The child stopped early: its last words as gaf's error."""
        child, self._child = self._running(), None  # stopped here, so that close() does not stop it again
        ntriples.stop(child)
        self._errors.seek(0)
        words = [w for w in self._errors.read().decode("utf-8", "replace").splitlines() if w.strip()]
        self.close()
        raise ExportError(f"mapping the records failed in its process: {words[-1].strip() if words else f'exit status {child.returncode}'}",
                          hint="a bug in gaf if the sort did not stop first: please report it with the command")  # fmt: skip

    def close(self) -> None:
        """Stop the child if it still runs, and let go of its streams."""
        child, self._child = self._child, None
        if child is not None:
            ntriples.stop(child)
        self._errors.close()


class _Pickler(pickle.Pickler):
    """Records pickled by their parts: pydantic's own way (``__reduce_ex__`` and ``__getstate__``,
    a dict made for each model) costs the reading process about 40% more, and it is that
    process the export waits for."""

    def reducer_override(self, obj: Any) -> Any:
        if isinstance(obj, BaseModel):
            return _model, (type(obj), obj.__dict__, obj.__pydantic_fields_set__, obj.__pydantic_extra__, obj.__pydantic_private__)
        return NotImplemented


def dumps(value: Any) -> bytes:
    """``value`` pickled, its models (records, and the models inside them) by their parts."""
    out = io.BytesIO()
    _Pickler(out, protocol=pickle.HIGHEST_PROTOCOL).dump(value)
    return out.getvalue()


def _model(cls: type[BaseModel], fields: dict[str, Any], given: set[str], extra: Any, private: Any) -> BaseModel:
    """A model made again from its parts, as pydantic's own unpickling does (no validation: the
    parts are those of a model that was valid)."""
    model = cls.__new__(cls)
    for name, value in (("__dict__", fields), ("__pydantic_fields_set__", given), ("__pydantic_extra__", extra),
                        ("__pydantic_private__", private)):  # fmt: skip
        object.__setattr__(model, name, value)
    return model


#: Lines joined into one write to the sort: a frame's lines at once (some 7 MB, twice over as text
#: and as bytes) held the mapping process at about 125 MB, against 80 MB this way.
BATCH = 8192


def serve(frames: IO[bytes], out: IO[bytes], base: str) -> None:
    """The child's side: map each frame's records, in order, with one ``Mapper`` (as the export
    would in its own process) and write their lines to ``out``, ``BATCH`` lines at a time."""
    mapper = Mapper(base)
    held: list[str] = []
    while header := frames.read(FRAME.size):
        (size,) = FRAME.unpack(header)
        records, found = _frame(frames, size)
        mapper.lookup = found.get
        for record in records:
            ntriples.gather(mapper.triples(record), held.append)
            if len(held) >= BATCH:
                out.write("".join(held).encode("utf-8"))
                held = []
    out.write("".join(held).encode("utf-8"))
    out.flush()


def _frame(frames: IO[bytes], size: int) -> tuple[list[Record], dict[str, Record]]:
    data = frames.read(size)
    if len(data) != size:
        raise ExportError(f"a frame of records ended after {len(data)} of {size} bytes")
    loaded: Any = pickle.loads(data)  # written by this process's parent (MappingProcess.add), and only by it
    return loaded  # type: ignore[no-any-return]
