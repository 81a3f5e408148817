"""Compacting the embedded store: a new file, the same records, relationships and answers.

The oracle is the store read before the compaction, by plain queries over every label and
every relationship, by ``gaf verify`` and by a replay of every closure — none of which goes
through the copying code — compared with the same reads after it.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from typer.testing import CliRunner

from gaf.cli import app
from gaf.closure import replay
from gaf.errors import ReadOnlyViolation
from gaf.ledger import ingest
from gaf.store.ladybug import LadybugStore
from gaf.store.schema import graph_schema
from gaf.verify import verify
from tests.conftest import RENT
from tests.impact_truth import materialise
from tests.worlds import AT, LedgerWorld, ledger_world, said, statement

runner = CliRunner()


def _held(store: LadybugStore) -> dict[str, Any]:
    """Everything a reader can tell of the store: every node's properties, every relationship,
    what verify reports and what each closure's replay answers."""
    nodes = store.read("MATCH (n) RETURN n.id AS id, n.kind AS kind, n.body AS body, n.written_at AS written_at ORDER BY id")
    edges = store.read("MATCH (a)-[r]->(b) RETURN a.id AS source, label(r) AS rel, b.id AS target ORDER BY source, rel, target")
    closures = [row["id"] for row in nodes if row["kind"] == "closure"]
    return {
        "nodes": nodes,
        "edges": edges,
        "verify": verify(store).to_dict(),
        "replays": {c: replay(store, c).to_dict() for c in closures},
    }


def _written_twice(path: Path, world: LedgerWorld) -> None:
    """The world, decided in one opening of the store; one more claim in a second, so the file
    holds what a second checkpoint leaves behind."""
    store = LadybugStore(path)
    store.auto_compact = False
    try:
        materialise(store, world)
    finally:
        store.close()
    store = LadybugStore(path)
    store.auto_compact = False
    try:
        late = said(world.sources[0].id, [statement("p", "affirmed", subject="case:late")], None)
        ingest(store, [late], recorded_at=AT + timedelta(hours=1))
    finally:
        store.close()


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(world=ledger_world())
def test_compacting_keeps_every_record_relationship_and_answer_and_the_file_shrinks(world, tmp_path_factory):
    path = tmp_path_factory.mktemp("compact") / "store.lbug"
    _written_twice(path, world)
    store = LadybugStore(path)
    store.auto_compact = False
    try:
        before = _held(store)
        size = path.stat().st_size
        done = store.compact()
        assert done is not None
        assert (done.bytes_before, done.bytes_after) == (size, path.stat().st_size)
        assert done.bytes_after < done.bytes_before
        assert done.nodes == len(before["nodes"]) and done.relationships == len(before["edges"])
        assert _held(store) == before
        # The compacted store takes writes as before, in the same opening.
        later = said(world.sources[0].id, [statement("p", "denied", subject="case:later")], None)
        assert ingest(store, [later], recorded_at=AT + timedelta(hours=2)).written
        assert verify(store).ok
    finally:
        store.close()
    assert not list(path.parent.glob("*.compacting*"))


def _read_back(path: Path) -> dict[str, Any]:
    reader = LadybugStore(path, read_only=True)
    try:
        return _held(reader)
    finally:
        reader.close()


KILLED_BEFORE_THE_RENAME = """
import os, sys
import gaf.store.ladybug as ladybug_store
from gaf.store.ladybug import LadybugStore
ladybug_store.put_in_place = lambda copy, target: os._exit(9)  # the copy is whole and on disk; killed before the rename
store = LadybugStore(sys.argv[1])
store.compact()
"""


def test_a_compaction_killed_before_its_copy_is_in_place_leaves_the_store_as_it_was(tmp_path):
    path = tmp_path / "rent.lbug"
    assert runner.invoke(app, ["ingest", str(RENT / "claims.yaml"), "--store", str(path), "--at", "2026-07-12T09:00:00Z"]).exit_code == 0
    held = _read_back(path)
    killed = subprocess.run([sys.executable, "-c", KILLED_BEFORE_THE_RENAME, str(path)], capture_output=True, text=True, timeout=120)
    assert killed.returncode == 9, killed.stderr
    assert (tmp_path / "rent.lbug.compacting").exists()  # the copy it made, never put in place
    assert (tmp_path / "rent.lbug.compacting.parts").is_dir()  # and the folder it copied big tables through
    assert _read_back(path) == held
    # The next writer removes the stale copy; the store verifies and holds what it held.
    verified = runner.invoke(app, ["verify", "--store", str(path), "--json"])
    assert verified.exit_code == 0 and json.loads(verified.stdout)["ok"], verified.output
    stats = json.loads(runner.invoke(app, ["stats", "--store", str(path), "--json"]).stdout)
    assert stats["counts"] == {"agent": 4, "claim": 4, "proposition": 22, "source": 5}
    store = LadybugStore(path)
    store.close()
    assert not (tmp_path / "rent.lbug.compacting").exists()
    assert not (tmp_path / "rent.lbug.compacting.parts").exists()


def test_a_reader_cannot_compact(tmp_path):
    path = tmp_path / "store.lbug"
    LadybugStore(path).close()
    reader = LadybugStore(path, read_only=True)
    try:
        with pytest.raises(ReadOnlyViolation, match="read-only"):
            reader.compact()
    finally:
        reader.close()


def test_gaf_compact_reports_what_it_gave_back_and_changes_no_answer(tmp_path):
    path = tmp_path / "rent.lbug"
    for file in ("claims.yaml", "authority.yaml"):
        assert runner.invoke(app, ["ingest", str(RENT / file), "--store", str(path), "--at", "2026-07-12T09:00:00Z"]).exit_code == 0
    before = runner.invoke(app, ["verify", "--store", str(path), "--json"]).stdout
    size = os.path.getsize(path)
    done = runner.invoke(app, ["compact", "--store", str(path), "--json"])
    assert done.exit_code == 0, done.output
    report = json.loads(done.stdout)
    assert report["compacted"] is True and report["bytes_before"] == size and report["bytes_after"] == os.path.getsize(path)
    assert report["bytes_after"] < size
    assert runner.invoke(app, ["verify", "--store", str(path), "--json"]).stdout == before
    human = runner.invoke(app, ["compact", "--store", str(path)], env={"COLUMNS": "200"})
    assert human.exit_code == 0 and "compacted" in human.stdout and "MiB →" in human.stdout


def test_gaf_compact_on_neo4j_says_there_is_nothing_to_compact(neo4j_store):
    done = runner.invoke(app, ["compact", "--store", neo4j_store.location, "--json"])
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout) == {"compacted": False, "store": neo4j_store.location, "why": "Neo4j manages its own store files"}


COMPACT_THROUGH_FILES = """
import sys
import gaf.store.ladybug_compact as compacting
from gaf.store.ladybug import LadybugStore
compacting.COPY_ROWS = 3  # every kind with more than three records goes by COPY, through a Parquet file
store = LadybugStore(sys.argv[1])
store.auto_compact = False
print(store.compact().nodes)
store.close()
"""


@pytest.mark.parametrize("folder", ["plain", "o'brien"], ids=["beside-the-store", "a-quote-in-the-path"])
def test_compacting_big_tables_through_files_keeps_everything(tmp_path, folder):
    # In a process of its own, so COPY_ROWS is set before anything reads it. A path that cannot be
    # written into a statement as it is sends the files to a temporary folder instead.
    path = tmp_path / folder / "rent.lbug"
    path.parent.mkdir()
    for file in ("claims.yaml", "authority.yaml"):
        assert runner.invoke(app, ["ingest", str(RENT / file), "--store", str(path), "--at", "2026-07-12T09:00:00Z"]).exit_code == 0
    held = _read_back(path)
    done = subprocess.run([sys.executable, "-c", COMPACT_THROUGH_FILES, str(path)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    assert int(done.stdout) == len(held["nodes"])
    assert _read_back(path) == held
    assert not list(path.parent.glob("rent.lbug.compacting*"))  # nor the folder the files went through


def _key_indexed(path: Path) -> set[str]:
    """The node tables whose primary keys LadybugDB keeps a hash index for, by its own account
    of the file's pages (an index's pages are named ``<table>._PK:…``)."""
    import ladybug

    database = ladybug.Database(str(path), read_only=True)
    try:
        result = ladybug.Connection(database).execute("CALL disk_size_info() RETURN category, name")
        assert not isinstance(result, list)
        return {str(name).split(".", 1)[0] for category, name in result.get_all() if category == "index"}
    finally:
        database.close()


def test_kinds_a_store_holds_few_of_keep_no_key_index_and_compacting_an_older_store_drops_theirs(tmp_path, monkeypatch):
    # A store as gaf declared it before Record.FEW: every kind's table with a key index.
    import gaf.store.ladybug as embedded

    declared = graph_schema()
    assert {"Source", "Agent", "Projection"} <= declared.few and "Claim" not in declared.few
    monkeypatch.setattr(embedded, "graph_schema", lambda: dataclasses.replace(declared, few=frozenset()))
    path = tmp_path / "rent.lbug"
    for file in ("claims.yaml", "authority.yaml"):
        assert runner.invoke(app, ["ingest", str(RENT / file), "--store", str(path), "--at", "2026-07-12T09:00:00Z"]).exit_code == 0
    monkeypatch.undo()
    assert {"Source", "Agent", "Claim"} <= _key_indexed(path)
    held = _read_back(path)

    done = runner.invoke(app, ["compact", "--store", str(path), "--json"])
    assert done.exit_code == 0, done.output
    assert _key_indexed(path) & declared.few == set() and "Claim" in _key_indexed(path)
    assert _read_back(path) == held
    # Without its index a kind still holds one record an id: the same files again write nothing.
    again = runner.invoke(app, ["ingest", str(RENT / "authority.yaml"), "--store", str(path), "--at", "2026-07-13T09:00:00Z", "--json"])
    assert again.exit_code == 0, again.output
    assert json.loads(again.stdout)["written"] == 0
    assert _read_back(path)["nodes"] == held["nodes"]

    # A store made now declares those kinds without an index from the start.
    fresh = tmp_path / "fresh.lbug"
    assert runner.invoke(app, ["ingest", str(RENT / "claims.yaml"), "--store", str(fresh), "--at", "2026-07-12T09:00:00Z"]).exit_code == 0
    assert _key_indexed(fresh) & declared.few == set() and "Claim" in _key_indexed(fresh)


def test_a_write_command_says_when_closing_compacted_the_store_and_when_that_was_refused(tmp_path, monkeypatch):
    import gaf.store.ladybug as embedded
    from gaf.errors import StoreError

    path = tmp_path / "rent.lbug"
    at = ["--at", "2026-07-12T09:00:00Z"]
    # Closing compacts when the file is mostly not its records; here every closing is told it is.
    monkeypatch.setattr(embedded, "worth_compacting", lambda conn, size: True)
    done = runner.invoke(app, ["ingest", str(RENT / "claims.yaml"), "--store", str(path), *at])
    assert done.exit_code == 0, done.output
    assert "on closing:" in done.stderr and "MiB →" in done.stderr and "records" in done.stderr
    assert "compacted" not in done.stdout  # stdout stays the command's own output
    first = _nodes(path)

    def refused(self):
        raise StoreError("the page cache is too small for the copy")

    monkeypatch.setattr(embedded.LadybugStore, "compact", refused)
    again = runner.invoke(app, ["ingest", str(RENT / "authority.yaml"), "--store", str(path), *at, "--json"])
    assert again.exit_code == 0, again.output
    written = json.loads(again.stdout)["written"]  # still one JSON document
    assert "was not compacted on closing: the page cache is too small for the copy" in again.stderr
    assert "whole as it was" in again.stderr
    monkeypatch.undo()
    assert written > 0 and _nodes(path) > first  # the store holds what both files wrote


def _nodes(path: Path) -> int:
    store = LadybugStore(path, read_only=True)
    try:
        return int(store.read("MATCH (n) RETURN count(n) AS n")[0]["n"])
    finally:
        store.close()
