"""Streaming ingest: a file or stdin read twice, never held whole, and still all or nothing."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import tracemalloc
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gaf import ledger
from gaf.cli import app
from gaf.cli.output import Ticker
from gaf.errors import BatchRejected, UnknownFormat
from gaf.ledger import ingest, items_of
from gaf.records import Claim
from gaf.store import GafStore
from tests import rentcase
from tests.conftest import NOW, ROOT
from tests.workers import BANK, LEDGER, payment_claims, write_jsonl


def _stored_ids(store: GafStore) -> set[str]:
    return {r.id for kind in ("agent", "source", "claim", "proposition") for r in store.find(kind)}


def _oracle(claims: list[Claim]) -> set[str]:
    """The ids the input holds, computed by the record classes themselves, not by ingest."""
    return {BANK.id, LEDGER.id} | {c.id for c in claims} | {p.id for c in claims for p in c.implied()}


def test_a_file_stdin_and_python_items_write_the_ids_the_record_classes_compute(store, tmp_path):
    claims = payment_claims("s", range(300))
    path = write_jsonl(tmp_path / "claims.jsonl", claims)
    from_file = ingest(store, path, recorded_at=NOW, batch_size=64)
    assert (from_file.read, from_file.written, from_file.existing) == (302, 302, 0)
    assert _stored_ids(store) == _oracle(claims)
    from_stdin = ingest(store, io.BytesIO(path.read_bytes()), fmt="jsonl", name="<stdin>", recorded_at=NOW, batch_size=64)
    from_items = ingest(store, [json.loads(line) for line in path.read_text().splitlines()], recorded_at=NOW)
    for again in (from_stdin, from_items):  # the same ids: every record is already stored
        assert (again.written, again.existing) == (0, 302) and set(again.write.existing) == {BANK.id, LEDGER.id, *(c.id for c in claims)}
    assert _stored_ids(store) == _oracle(claims)


def test_gaf_ingest_dash_reads_stdin_into_the_same_store_as_the_file(tmp_path):
    claims = payment_claims("d", range(40))
    path = write_jsonl(tmp_path / "claims.jsonl", claims)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for name, argv, stdin in (("file", [str(path)], None), ("stdin", ["-", "--format", "jsonl"], path.read_bytes())):
        target = str(tmp_path / f"{name}.lbug")
        done = subprocess.run([sys.executable, "-m", "gaf", "ingest", *argv, "--store", target, "--json"], input=stdin,
                              capture_output=True, env=env, cwd=tmp_path, timeout=120)  # fmt: skip
        assert done.returncode == 0, done.stderr.decode()
        assert json.loads(done.stdout)["written"] == 42
        with GafStore.open(target, read_only=True) as s:
            assert _stored_ids(s) == _oracle(claims)
    assert not list(tmp_path.glob("gaf-ingest-*"))  # nothing spooled is left behind here either


@pytest.mark.parametrize("fault", ["invalid", "unknown source"])
def test_a_bad_last_line_of_a_long_file_writes_nothing_and_names_the_file_and_line(store, tmp_path, fault):
    rentcase.load(store)
    before = store.counts()
    claims = payment_claims("late", range(1500))
    last = {k: v for k, v in claims[-1].to_json().items() if k != "id"}
    last = {**last, "observed_at": "yesterday"} if fault == "invalid" else {**last, "source": "source:" + "0" * 64}
    path = write_jsonl(tmp_path / "claims.jsonl", claims[:-1])
    with path.open("a", encoding="utf-8") as out:
        out.write(json.dumps(last) + "\n")
    with pytest.raises(BatchRejected) as info:
        ingest(store, path, recorded_at=NOW, batch_size=100)  # fifteen batches would have been written
    (error,) = info.value.errors
    assert error.where == f"{path}:1502" and info.value.where == str(path)
    assert ("observed_at" if fault == "invalid" else "not stored") in error.what
    assert store.counts() == before


def test_checking_a_file_holds_ids_only_so_its_memory_barely_grows_with_the_file(ladybug_store, tmp_path):
    # The first pass keeps 12 bytes an id (a claim and its one proposition here); holding the
    # records, as ingest did before, takes some five kilobytes a claim.
    def peak(n: int) -> int:
        path = write_jsonl(tmp_path / f"claims-{n}.jsonl", payment_claims(f"m{n}", range(n)))
        tracemalloc.start()
        try:
            ledger._check(ladybug_store, lambda: items_of(path), NOW, ranks=None)
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    small, large = peak(1000), peak(10_000)
    assert large - small < 9000 * 2 * 12 * 2 + 256 * 1024, (small, large)


def test_a_stream_without_a_format_is_refused_with_a_typed_error_and_nothing_is_written(ladybug_store, tmp_path):
    path = write_jsonl(tmp_path / "claims.jsonl", payment_claims("f", range(3)))
    with pytest.raises(UnknownFormat, match="format of a stream"):
        ingest(ladybug_store, io.BytesIO(path.read_bytes()), recorded_at=NOW)
    assert ladybug_store.counts() == {}
    target = str(tmp_path / "cli.lbug")
    refused = CliRunner().invoke(app, ["ingest", "-", "--store", target, "--json"], input=path.read_bytes())
    assert refused.exit_code == 2 and json.loads(refused.stdout)["error"] == "UnknownFormat", refused.output
    assert CliRunner().invoke(app, ["ingest", "-", "--format", "jsonl", "--store", target], input=path.read_bytes()).exit_code == 0


def test_a_yaml_list_is_read_item_by_item(tmp_path):
    # The first items come out before the parser reaches the broken end; an anchor of one item serves a later one.
    path = tmp_path / "claims.yaml"
    path.write_text("- &bank {kind: agent, key: bank, name: The bank, agent_type: organisation}\n"
                    "- *bank\n- {kind: source, key: ledger\n", encoding="utf-8")  # fmt: skip
    items = items_of(path)
    first, second = next(items), next(items)
    assert first.data == second.data and first.where == f"{path}:1"
    with pytest.raises(ledger.InvalidRecord, match=r"not valid YAML") as info:
        next(items)
    assert info.value.where.startswith(f"{path}:")


def test_records_given_before_what_they_point_at_are_written_after_it(store, ladybug_store):
    # A whole store's records in reverse dependency order, one record a batch: each one pointing
    # at a later one is held back until what it points at is written.
    rentcase.load(ladybug_store)
    rentcase.close_both(ladybug_store)
    kinds = ladybug_store.counts()
    records = [r for kind in kinds for r in ladybug_store.find(kind)]
    records.sort(key=lambda r: (r.KIND != "claim", r.id), reverse=True)
    report = ingest(store, records, recorded_at=NOW, batch_size=1)
    assert report.write.failed == []
    assert {r.id for kind in kinds for r in store.find(kind)} == {r.id for r in records}


def test_progress_tells_a_log_nothing_for_ten_seconds_then_each_stage_every_ten_seconds_and_the_last_counts(capsys):
    now = [0.0]
    with Ticker("ingest x.jsonl", clock=lambda: now[0]) as tick:
        tick("checked", 1000)
        now[0] = 9.5
        tick("checked", 3000)  # quick work tells a log nothing, however loaded the machine
        now[0] = 10.5
        tick("checked", 9000)
        now[0] = 11.0
        tick("checked", 9500)
        now[0] = 12.0
        tick("written", 2000, 9000)
        now[0] = 13.0
        tick("written", 9000, 9000)
    assert capsys.readouterr().err.splitlines() == [
        "ingest x.jsonl: checked 9,000 (857/s)",
        "ingest x.jsonl: written 2,000/9,000 (2,000,000/s)",
        "ingest x.jsonl: written 9,000/9,000 (9,000/s)",
    ]
    with Ticker("quick", clock=lambda: now[0]) as tick:
        now[0] += 9.9
        tick("checked", 5)
    assert capsys.readouterr().err == ""
    with Ticker("quiet", quiet=True, clock=lambda: now[0]) as tick:
        now[0] += 5
        tick("checked", 1)
    assert capsys.readouterr().err == ""


def test_a_bulk_write_leaves_the_cyclic_collector_as_it_found_it_on_and_off(store, tmp_path):
    # put_batches pauses the collector while it prepares and writes each batch (its rows are
    # acyclic): afterwards it is on again if it was on, and still off if the caller had it off.
    import gc

    claims = payment_claims("gc", range(40))
    assert gc.isenabled()
    ingest(store, write_jsonl(tmp_path / "first.jsonl", claims[:20]), recorded_at=NOW, batch_size=8)
    assert gc.isenabled()
    gc.disable()
    try:
        ingest(store, write_jsonl(tmp_path / "second.jsonl", claims[20:]), recorded_at=NOW, batch_size=8)
        assert not gc.isenabled()
    finally:
        gc.enable()
    assert _stored_ids(store) == _oracle(claims)


def test_the_collector_resumes_once_when_the_last_of_several_overlapping_pauses_ends():
    import gc
    import threading

    from gaf.store.base import _gc_paused

    entered = threading.Barrier(3)
    leave = [threading.Event(), threading.Event()]

    def bulk(n: int) -> None:
        with _gc_paused():
            entered.wait()
            leave[n].wait()

    threads = [threading.Thread(target=bulk, args=(n,)) for n in range(2)]
    for t in threads:
        t.start()
    entered.wait()
    assert not gc.isenabled()  # paused for every thread while any bulk block runs
    leave[0].set()
    threads[0].join()
    assert not gc.isenabled()  # the first to leave does not resume it under the other
    leave[1].set()
    threads[1].join()
    assert gc.isenabled()


def test_the_driver_debug_log_of_a_bulk_write_names_row_counts_not_every_row(neo4j_store, caplog, tmp_path):
    # The Neo4j driver spells out each statement's parameters for its debug log whether or not
    # debug logging is on; gaf hands it rows whose spelling is their count, so a bulk write
    # pays nothing for it and a debug log stays readable.
    import logging

    claims = payment_claims("log", range(30))
    with caplog.at_level(logging.DEBUG, logger="neo4j"):
        ingest(neo4j_store, write_jsonl(tmp_path / "claims.jsonl", claims), recorded_at=NOW, batch_size=50)
    runs = [r.getMessage() for r in caplog.records if " C: RUN " in r.getMessage()]
    assert runs and any("rows>" in line for line in runs)
    assert not any(claims[0].id in line for line in runs)
