"""A bulk ingest into the embedded store under a capped page cache: its batches and its openings
follow the cap, so a load that ran LadybugDB's buffer pool out now writes every record; and a
reader of a whole kind lets go of what its lookups cached as it reads.

LadybugDB-only: Neo4j's server sizes its own memory, and GAF_CACHE_MB does not reach it.
"""

from __future__ import annotations

import json

import pytest

from typer.testing import CliRunner

from bench.ingest_memory import write_claims
from gaf.cli import app
from gaf.ledger import ingest
from gaf.settings import MIN_CACHE_MB
from gaf.store.base import BULK_BATCH
from gaf.store.ladybug import BULK_RECORDS_PER_MB, LadybugStore
from gaf.verify import verify
from tests.conftest import NOW, RENT

#: Claims of the ingest-memory benchmark's file (2 to 4 statements each) enough to run a 64 MiB
#: pool out before the cap was followed: in batches of 2,000 the second failed ("buffer pool is
#: full"), and in batches of 500 without reopening a checkpoint failed at about 4,500 claims.
CLAIMS = 6000


def test_an_ingest_under_the_smallest_page_cache_writes_every_record_and_verifies(tmp_path, monkeypatch):
    path = tmp_path / "claims.jsonl"
    write_claims(path, CLAIMS)
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    keyed = sum(1 for item in lines if item["kind"] != "claim")
    reopened = []
    original = LadybugStore._reopen
    monkeypatch.setattr(LadybugStore, "_reopen", lambda self, *args, **kwargs: (reopened.append(1), original(self, *args, **kwargs)))
    with LadybugStore(tmp_path / "store.lbug", cache_mb=MIN_CACHE_MB) as store:
        report = ingest(store, path, recorded_at=NOW, keep_ids=0)
        assert (report.read, report.written, report.existing, report.write.failed) == (len(lines), len(lines), 0, [])
        # counted a second way: the records read back, after the reopenings, against the file's lines
        assert (len(store.find("claim")), len(store.find("source")) + len(store.find("agent"))) == (CLAIMS, keyed)
        checked = verify(store)
        assert checked.ok, checked.discrepancies[:3]
    assert reopened, "a load of this size closes and opens the database again at least once"


def test_the_embedded_store_batches_what_its_page_cache_holds_and_an_asked_size_is_kept(tmp_path):
    with LadybugStore(tmp_path / "capped.lbug", cache_mb=MIN_CACHE_MB) as capped:
        assert capped.bulk_batch() == MIN_CACHE_MB * BULK_RECORDS_PER_MB < BULK_BATCH
        assert capped.bulk_batch(3000) == 3000  # the caller's choice, refused typed if the cache cannot hold it
    with LadybugStore(tmp_path / "uncapped.lbug") as uncapped:
        assert uncapped.bulk_batch() == BULK_BATCH


def test_gaf_ingest_says_the_page_cache_cap_it_wrote_under_and_nothing_when_there_is_none(tmp_path):
    runner = CliRunner()
    claims = str(RENT / "claims.yaml")
    capped = runner.invoke(app, ["ingest", claims, "--store", str(tmp_path / "a.lbug"), "--json"], env={"GAF_CACHE_MB": "96"})
    plain = runner.invoke(app, ["ingest", claims, "--store", str(tmp_path / "b.lbug"), "--json"], env={"GAF_CACHE_MB": None})
    assert capped.exit_code == plain.exit_code == 0, capped.output + plain.output
    assert json.loads(capped.stdout)["page_cache_mb"] == 96 and "page_cache_mb" not in json.loads(plain.stdout)
    told = runner.invoke(app, ["ingest", claims, "--store", str(tmp_path / "a.lbug")], env={"GAF_CACHE_MB": "96", "COLUMNS": "200"})
    assert "page cache capped at 96 MiB by GAF_CACHE_MB" in " ".join(told.stdout.split())


@pytest.mark.parametrize(
    ("per_opening", "before_a_kind", "openings"),
    [
        (300, 10**6, 1 + 3 + 1),  # the opening; after 300, 600 and 900 claims; at the sources' first chunk (300 since)
        (10**6, 200, 1 + 1),  # the opening; before the sources (1,200 since)
    ],
)
def test_a_reader_of_whole_kinds_lets_go_of_its_page_cache_as_it_looks_records_up_and_misses_none(
    tmp_path, monkeypatch, per_opening, before_a_kind, openings
):
    # LadybugDB keeps every key-index page a lookup read until the database closes: reading a
    # 1M-record store by id ran a 128 MiB pool out (docs/benchmarks-prov.md). A reader closes and
    # opens it again after every LOOKUPS_PER_OPENING records it looked up, and before a kind past
    # LOOKUPS_BEFORE_A_KIND.
    from gaf.store import ladybug as embedded

    path = tmp_path / "claims.jsonl"
    write_claims(path, 1200)
    with LadybugStore(tmp_path / "store.lbug") as writer:
        ingest(writer, path, recorded_at=NOW, keep_ids=0)
        expected = sorted(c.id for c in writer.find("claim"))  # another statement than the reader's: its filtered listing
    monkeypatch.setattr(embedded, "LOOKUPS_PER_OPENING", per_opening)
    monkeypatch.setattr(embedded, "LOOKUPS_BEFORE_A_KIND", before_a_kind)
    opened = []
    original = embedded._open_database
    monkeypatch.setattr(embedded, "_open_database", lambda *args, **kwargs: (opened.append(1), original(*args, **kwargs))[1])
    with LadybugStore(tmp_path / "store.lbug", read_only=True, cache_mb=MIN_CACHE_MB) as reader:
        got = list(reader.records("claim", chunk=100))
        assert list(reader.records("source", chunk=100)) == sorted(reader.find("source"), key=lambda s: s.id)
    assert [c.id for c in got] == expected and len(expected) == 1200
    assert len(opened) == openings
