"""The whole store's PROV as N-Triples: canonical lines, sorted and distinct, hashed as written.

The oracle is the graph, built the slow way (every record's triples in one rdflib Graph),
and pyoxigraph, which writes canonical N-Triples and canonicalises by RDFC-1.0 on its own:
the streamed file must be exactly the graph's canonical lines, its hash the graph's
canonical hash, however small the memory bound that splits the sort into runs.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import pickle
import shutil
import subprocess
import sys
import tempfile
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from zoneinfo import ZoneInfo

import pyoxigraph as ox
import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from rdflib import Literal, URIRef
from rdflib.namespace import XSD

from gaf.errors import ExportError
from gaf.types import format_instant
from prov_export import canonical_hash, export, graph, lineage, stream_all
from prov_export import mapping_process, ntriples
from prov_export.export import STREAMED_HASH, all_records, chunks
from prov_export.mapping import DEFAULT_BASE, Mapper, _plain, _time
from prov_export.ntriples import SortedLines, SystemSort, lines, term
from tests.conftest import ROOT
from tests.rentcase import close_both


def canonical_lines(g) -> str:
    """The graph's triples as pyoxigraph writes them, one per line, sorted: canonical N-Triples
    of a graph without blank nodes."""
    triples = ox.parse(g.serialize(format="nt").encode("utf-8"), format=ox.RdfFormat.N_TRIPLES)
    return "".join(sorted({f"{t} .\n" for t in triples}))


@pytest.fixture(params=["system sort", "in process"])
def sorter(request, monkeypatch):
    """Each way the export sorts its lines: the system's ``sort`` (where there is one), and this
    process's, which an export uses on a machine without one."""
    if request.param == "in process":
        monkeypatch.setattr(ntriples.shutil, "which", lambda name: None)
    else:
        assert ntriples.shutil.which("sort"), "no sort program on PATH"
    return request.param


def test_the_whole_store_is_its_graphs_canonical_lines_sorted_distinct_and_hashed_as_written(store, tmp_path, sorter):
    close_both(store)
    g = graph(list(all_records(store)))
    expected = canonical_lines(g)
    runs = tmp_path / "runs"
    runs.mkdir()
    for bound, out in ((1 << 26, tmp_path / "one-run.nt"), (4096, runs / "many-runs.nt")):  # 4 KiB: hundreds of runs to merge
        result = stream_all(store, out, sort_bound=bound)
        written = out.read_bytes()
        assert written.decode("utf-8") == expected, f"bound {bound}: not the graph's canonical lines"
        assert result.triples == len(g) == expected.count("\n")
        assert result.canonical_hash == hashlib.sha256(written).hexdigest() == canonical_hash(g)
        assert result.to_dict()["canonical_hash_method"] == STREAMED_HASH
    assert sorted(p.name for p in runs.iterdir()) == ["many-runs.nt"], "a sorted run was left behind"


def test_a_closures_nt_export_is_canonical_so_its_file_hash_is_its_canonical_hash(ladybug_store, tmp_path):
    _, c2 = close_both(ladybug_store)
    records = lineage(ladybug_store, c2.closure.id)
    result, _ = export(records, "nt", tmp_path / "july.nt")
    written = (tmp_path / "july.nt").read_bytes()
    assert written.decode("utf-8") == canonical_lines(graph(records))
    assert hashlib.sha256(written).hexdigest() == result.canonical_hash


#: Well-formed BCP 47 tags, in any case; datatypes rdflib does not normalise.
LANGUAGES = st.sampled_from(["en", "EN-gb", "de-CH-1996", "zh-Hant-TW", "sr-Latn", "pt-BR"])
DATATYPES = st.sampled_from(["http://www.w3.org/2001/XMLSchema#string", "urn:gaf:test-type", "https://w3id.org/gaf#amount"])


@given(text=st.text(), language=st.none() | LANGUAGES, datatype=st.none() | DATATYPES)
@example(text='"\\\n\r\t\b\f\x00\x07\x0b\x0e\x1f\x7f\x80\u2028é😀\ufffe\uffff', language=None, datatype=None)
@example(text="x", language="en-GB", datatype=None)
def test_a_literal_is_written_as_pyoxigraph_writes_it_canonically(text, language, datatype):
    if language is not None:
        ours, theirs = Literal(text, lang=language), ox.Literal(text, language=language)
    elif datatype is not None:
        ours, theirs = Literal(text, datatype=URIRef(datatype)), ox.Literal(text, datatype=ox.NamedNode(datatype))
    else:
        ours, theirs = Literal(text), ox.Literal(text)
    assert term(ours) == str(theirs)


@given(text=st.text())
@example(text='"\\\n\r\t\b\f\x00\x07\x7f\u2028é😀\ufffe\uffff')
def test_the_mappings_plain_literal_is_rdflibs_literal_and_is_written_as_pyoxigraph_writes_it(text):
    ours, theirs = _plain(text), Literal(text)
    assert (ours, hash(ours), ours.value, ours.datatype, ours.language, ours.n3()) == (
        theirs, hash(theirs), theirs.value, theirs.datatype, theirs.language, theirs.n3())  # fmt: skip
    assert ours.eq(theirs)
    s, p = URIRef("urn:gaf:claim-1"), URIRef("https://w3id.org/gaf#record")
    assert lines([(s, p, ours)]) == {f"{ox.Triple(ox.NamedNode(s), ox.NamedNode(p), ox.Literal(text))} .\n"}



@given(at=st.datetimes(timezones=st.timezones()))
@example(at=datetime(2026, 7, 20, 9, 30, tzinfo=timezone.utc))
@example(at=datetime(2026, 7, 20, 9, 30, 1, 123456, tzinfo=timezone.utc))
@example(at=datetime(999, 5, 5, tzinfo=timezone.utc))
def test_the_mappings_time_is_rdflibs_datetime_literal_of_the_instant_written_as_gaf_writes_it(at):
    """What the mapping makes of a time is the literal rdflib makes of ``format_instant``'s text,
    lexical form (normalised by rdflib), value and all, however it is made."""
    ours, theirs = _time(at), Literal(format_instant(at), datatype=XSD.dateTime)
    assert (str(ours), ours, hash(ours), ours.value, ours.datatype, ours.language, ours.ill_typed, ours.n3()) == (
        str(theirs), theirs, hash(theirs), theirs.value, theirs.datatype, theirs.language, theirs.ill_typed, theirs.n3())  # fmt: skip
    assert term(ours) == term(theirs)

def test_one_instant_given_in_two_zones_is_one_time_in_utc():
    """Found by the random profile: ``format_instant`` wrote a time given in another zone as its
    wall-clock reading with a Z (21:00 at UTC-3 as 21:00 UTC), and the mapping's time literals,
    kept by instant, then gave that text for the same instant given in UTC."""
    west = datetime(1999, 12, 31, 21, 0, 1, tzinfo=ZoneInfo("Etc/GMT+3"))
    utc = datetime(2000, 1, 1, 0, 0, 1, tzinfo=ZoneInfo("UTC"))
    assert format_instant(west) == format_instant(utc) == "2000-01-01T00:00:01.000Z"
    assert str(_time(west)) == str(_time(utc)) == "2000-01-01T00:00:01+00:00"


TEXTS = st.text(st.characters(blacklist_categories=("Cs",)), max_size=6)  # any character UTF-8 can carry: no lone surrogates


@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 2), TEXTS), max_size=60))
@example([(0, 0, "é"), (0, 0, "z"), (0, 0, "\x7f"), (0, 0, "😀"), (0, 0, "\uffff"), (0, 0, "\ufffd"), (0, 0, "é")])
def test_the_system_sort_writes_the_bytes_python_sorts_the_lines_into(triples):
    """The oracle is Python's own ``sorted(set(...))`` of the lines: the system's ``sort`` under
    ``LC_ALL=C`` (bytes) and the in-process sorter must both write exactly that, whatever the
    characters (UTF-8 byte order is code-point order only if nothing re-orders them), with a
    buffer small enough to spill runs."""
    made = [(URIRef(f"urn:gaf:s-{a}"), URIRef(f"urn:gaf:p-{b}"), Literal(text)) for a, b, text in triples]
    expected = "".join(sorted(lines(made)))
    for sorter in (SystemSort(ntriples.shutil.which("sort"), tempfile.gettempdir(), bound=1024), SortedLines(tempfile.gettempdir(), bound=64)):
        try:
            for i in range(0, len(made), 7):  # as records come: a few triples at a time
                sorter.add(made[i : i + 7])
            out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", newline="")
            count, digest = sorter.write(out)
            out.flush()
            written = out.buffer.getvalue()
        finally:
            sorter.close()
        assert written.decode("utf-8") == expected, type(sorter).__name__
        assert (count, digest) == (expected.count("\n"), hashlib.sha256(written).hexdigest())


def test_a_sort_that_fails_is_an_export_error_and_leaves_no_file(ladybug_store, tmp_path, monkeypatch):
    """A ``sort`` that stops (here a program that exits at once, as sort would on a full disk)
    makes the export a typed error, and neither the output nor a temporary file is left."""
    close_both(ladybug_store)
    false = shutil.which("false")
    monkeypatch.setattr(ntriples.shutil, "which", lambda name: false)
    out = tmp_path / "out"
    out.mkdir()
    with pytest.raises(ExportError, match="sorting the export's lines failed") as failed:
        stream_all(ladybug_store, out / "all.nt")
    assert "free space" in failed.value.hint
    assert list(out.iterdir()) == []


def test_an_output_that_exists_is_refused_before_the_store_is_read(ladybug_store, tmp_path):
    close_both(ladybug_store)
    kept = tmp_path / "all.nt"
    kept.write_text("mine")
    told = []
    with pytest.raises(ExportError, match="exists"):
        stream_all(ladybug_store, kept, progress=lambda *a: told.append(a))
    assert told == [] and kept.read_text() == "mine"


@contextmanager
def umask(mask: int):
    old = os.umask(mask)
    try:
        yield
    finally:
        os.umask(old)


def test_exports_get_the_users_umask_and_an_existing_file_is_kept_unless_forced(ladybug_store, tmp_path):
    _, c2 = close_both(ladybug_store)
    records = lineage(ladybug_store, c2.closure.id)
    for mask, mode in ((0o022, 0o644), (0o077, 0o600), (0o002, 0o664)):
        with umask(mask):
            export(records, "ttl", tmp_path / f"july-{mask:o}.ttl")
            stream_all(ladybug_store, tmp_path / f"all-{mask:o}.nt")
        assert (tmp_path / f"july-{mask:o}.ttl").stat().st_mode & 0o777 == mode
        assert (tmp_path / f"all-{mask:o}.nt").stat().st_mode & 0o777 == mode
    kept = tmp_path / "july-22.ttl"
    before = kept.read_bytes()
    kept.write_text("mine")
    with pytest.raises(ExportError, match="exists") as refused:
        export(records, "ttl", kept)
    assert "--force" in refused.value.hint
    with pytest.raises(ExportError, match="exists"):
        stream_all(ladybug_store, kept)
    assert kept.read_text() == "mine"
    export(records, "ttl", kept, force=True)
    assert kept.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == [], "a temporary file was left"


def _gaf(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("GAF_STORE", "NEO4J_URI")} | {"PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "gaf", *args], capture_output=True, text=True, cwd=cwd, env=env)


def test_the_cli_summary_under_json_goes_to_stdout_and_a_second_export_needs_force(tmp_path):
    from gaf.store import GafStore

    path = str(tmp_path / "s.lbug")
    with GafStore.open(path) as s:
        close_both(s)
    done = _gaf("export", "prov", "--all", "--format", "nt", "--out", "all.nt", "--json", "--store", path, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    written = (tmp_path / "all.nt").read_bytes()
    assert summary["triples"] == written.count(b"\n") == len(set(written.splitlines()))
    assert summary["canonical_hash"] == hashlib.sha256(written).hexdigest()
    again = _gaf("export", "prov", "--all", "--format", "nt", "--out", "all.nt", "--store", path, cwd=tmp_path)
    assert again.returncode != 0 and "exists" in again.stderr and "--force" in again.stderr and "Traceback" not in again.stderr
    forced = _gaf("export", "prov", "--all", "--format", "nt", "--out", "all.nt", "--force", "--json", "--store", path, cwd=tmp_path)
    assert forced.returncode == 0 and json.loads(forced.stdout) == summary
    nowhere = _gaf("export", "prov", "--all", "--format", "nt", "--json", "--store", path, cwd=tmp_path)
    refusal = json.loads(nowhere.stdout)  # under --json, an error is JSON on stdout too
    assert nowhere.returncode != 0 and "--out" in refusal["hint"] and "Traceback" not in nowhere.stderr


def test_a_mapping_process_that_fails_is_an_export_error_with_its_words_and_leaves_no_file(ladybug_store, tmp_path, monkeypatch):
    """The process that maps the records (beside the system's sort) stopping early — here one
    that says why and exits at once — makes the export a typed error quoting it; nothing is
    left behind and no process keeps running."""
    close_both(ladybug_store)
    assert ntriples.shutil.which("sort"), "no sort program on PATH"
    monkeypatch.setattr(mapping_process, "_BOOT", "import sys; sys.stderr.write('Traceback\\nMemoryError: no room\\n'); sys.exit(3)")
    out = tmp_path / "out"
    out.mkdir()
    started = set(_descendants())
    with pytest.raises(ExportError, match="mapping the records failed in its process: MemoryError: no room"):
        stream_all(ladybug_store, out / "all.nt")
    assert list(out.iterdir()) == []
    assert set(_descendants()) <= started, "a child process was left running"


def test_the_mapping_process_writes_the_lines_this_process_would(ladybug_store, tmp_path):
    """``mapping_process.serve`` fed the store's chunks as ``MappingProcess`` frames them writes
    exactly the lines mapping them here gives, repeats and all (the sort makes them distinct)."""
    close_both(ladybug_store)
    frames = io.BytesIO()
    here: list[str] = []
    mapper = Mapper()
    for records, found in chunks(ladybug_store, size=7):  # small chunks: facts and their justifications split across frames
        data = pickle.dumps((records, found))
        frames.write(mapping_process.FRAME.pack(len(data)) + data)
        mapper.lookup = found.get
        for record in records:
            here += lines_of(mapper.triples(record))
    frames.seek(0)
    out = io.BytesIO()
    mapping_process.serve(frames, out, DEFAULT_BASE)
    assert out.getvalue().decode("utf-8") == "".join(here)
    assert any("wasDerivedFrom" in text for text in here), "no fact's lineage was mapped"


def lines_of(triples) -> list[str]:
    """Each triple's line, written by ``ntriples.line`` (the slow, general form)."""
    return [ntriples.line(s, p, o) for s, p, o in triples]


def _descendants() -> list[int]:
    """This process's child processes (and theirs)."""
    found: list[int] = []
    todo = [str(os.getpid())]
    while todo:
        pid = todo.pop()
        for task in Path(f"/proc/{pid}/task").glob("*"):
            try:
                kids = (task / "children").read_text().split()
            except OSError:
                continue
            found += map(int, kids)
            todo += kids
    return found


def test_the_system_sort_merges_its_runs_at_once_within_the_open_files_allowed(tmp_path):
    """GNU sort is asked to merge every spilled run in one pass, with a batch its open-file limit
    allows (it refuses a larger one): under a low limit the export's sort still runs, and writes
    the lines Python sorts them into."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    program = ntriples.shutil.which("sort")
    made = [(URIRef(f"urn:t:{i % 997}"), URIRef("urn:p"), Literal(f"line {i}")) for i in range(20_000)]
    expected = "".join(sorted(set(lines(made))))
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (64, hard))
        ntriples._one_merge.cache_clear()
        asked = ntriples._one_merge(program)
        assert asked == [] or int(asked[0].partition("=")[2]) <= 56, asked
        sorter = SystemSort(program, tmp_path, bound=4096)  # runs of a few KiB: hundreds to merge
        try:
            sorter.add(made)
            with open(tmp_path / "out.nt", "w", encoding="utf-8") as out:
                sorter.write(out)
        finally:
            sorter.close()
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
        ntriples._one_merge.cache_clear()
    assert (tmp_path / "out.nt").read_text(encoding="utf-8") == expected
    assert [p.name for p in tmp_path.iterdir()] == ["out.nt"]


def test_where_no_python_can_be_started_the_records_are_mapped_here_into_the_same_bytes(ladybug_store, tmp_path, monkeypatch):
    """An embedded interpreter names no ``sys.executable`` (and starting one can fail): the export
    then maps in its own process, into the very bytes the mapping process writes."""
    close_both(ladybug_store)
    stream_all(ladybug_store, tmp_path / "two.nt")
    monkeypatch.setattr(sys, "executable", "")
    started = set(_descendants())
    here = stream_all(ladybug_store, tmp_path / "one.nt")
    assert (tmp_path / "one.nt").read_bytes() == (tmp_path / "two.nt").read_bytes()
    assert here.canonical_hash == hashlib.sha256((tmp_path / "two.nt").read_bytes()).hexdigest()
    monkeypatch.setattr(sys, "executable", str(tmp_path / "no-such-python"))
    stream_all(ladybug_store, tmp_path / "three.nt")
    assert (tmp_path / "three.nt").read_bytes() == (tmp_path / "two.nt").read_bytes()
    assert set(_descendants()) <= started
