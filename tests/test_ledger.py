"""Claim ingest from files and Python: validate everything, then write, idempotently."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gaf.errors import BatchRejected, InvalidRecord
from gaf.ledger import ingest
from gaf.records import limits
from tests.conftest import NOW, RENT, small_graph


def _jsonl(path: Path, rows: list) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows), encoding="utf-8")
    return path


def test_rent_case_claims_are_ingested_with_their_sources_and_agents(store):
    report = ingest(store, RENT / "claims.yaml", recorded_at=NOW)
    assert (report.read, len(report.write.written), report.write.failed) == (13, 13, [])
    assert store.counts() == {"agent": 4, "claim": 4, "proposition": 22, "source": 5}
    (bank,) = store.find("source", key="bank-ledger")
    (ledger_claim,) = store.find("claim", source=bank.id)
    assert {s.predicate for s in ledger_claim.statements} == {"credited_to", "debited_from", "amount", "memo", "value_date"}
    assert ledger_claim.recorded_at.isoformat() == "2026-07-12T08:00:00+00:00"


def test_ingesting_the_same_file_twice_is_a_noop(store):
    ingest(store, RENT / "claims.yaml", recorded_at=NOW)
    again = ingest(store, RENT / "claims.yaml", recorded_at=NOW.replace(year=2027))
    assert again.write.written == [] and len(again.write.existing) == 13


def test_a_file_with_bad_lines_writes_nothing_and_names_every_bad_line(store, tmp_path):
    agent, source, claim, other = (r.to_json() for r in small_graph())
    broken = dict(other, observed_at="yesterday")
    path = _jsonl(tmp_path / "c.jsonl", [agent, source, claim, "{not json", broken])
    with pytest.raises(BatchRejected) as info:
        ingest(store, path, recorded_at=NOW)
    assert [e.where for e in info.value.errors] == [f"{path}:4", f"{path}:5"]
    assert "not JSON" in info.value.errors[0].what and "observed_at" in info.value.errors[1].what
    assert store.counts() == {}


def test_best_effort_writes_the_good_lines_and_reports_the_bad(store, tmp_path):
    agent, source, claim, other = (r.to_json() for r in small_graph())
    path = _jsonl(tmp_path / "c.jsonl", [agent, source, claim, {"kind": "rumour"}, other])
    report = ingest(store, path, recorded_at=NOW, mode="best_effort")
    assert len(report.write.written) == 4
    assert [(f.index, f.error.where) for f in report.write.failed] == [(3, f"{path}:4")]


def test_keys_resolve_to_ids_from_the_input_or_the_store(store, tmp_path):
    ingest(store, RENT / "claims.yaml", recorded_at=NOW)
    report = ingest(store, RENT / "claim-e.yaml", recorded_at=NOW)
    assert len(report.write.written) == 1  # claim E, whose source and observer are stored
    (receipts,) = store.find("source", key="transfer-receipts")
    (claim_e,) = store.find("claim", source=receipts.id)
    assert claim_e.observer == store.find("agent", key="bank")[0].id


def test_an_unknown_key_is_refused_with_its_line(store, tmp_path):
    path = tmp_path / "e.yaml"
    path.write_text((RENT / "claim-e.yaml").read_text())  # its source and observer are not stored here
    with pytest.raises(BatchRejected) as info:
        ingest(store, path, recorded_at=NOW)
    (error,) = info.value.errors
    assert error.where.startswith(f"{path}:") and "(source)" in error.where and "transfer-receipts" in error.what
    assert store.counts() == {}


def test_records_are_written_after_what_they_point_at_whatever_the_file_order(store, tmp_path):
    agent, source, claim, other = (r.to_json() for r in small_graph())
    path = _jsonl(tmp_path / "c.jsonl", [claim, other, source, agent])
    report = ingest(store, path, recorded_at=NOW, batch_size=1)
    assert len(report.write.written) == 4


def test_csv_rows_are_claims_with_one_statement(store, tmp_path):
    ingest(store, RENT / "claims.yaml", recorded_at=NOW)
    path = tmp_path / "c.csv"
    path.write_text(
        "source,observer,observed_at,transformation,subject,predicate,value,valid_from,valid_to\n"
        "bank-ledger,bank,2026-08-06T00:00:00Z,api_export,payment:tx-5001,amount,1000,2026-08-05,2026-08-06\n"
        "bank-ledger,bank,2026-08-06T00:00:00Z,api_export,payment:tx-5001,memo,August rent,,\n",
        encoding="utf-8",
    )
    report = ingest(store, path, recorded_at=NOW)
    claims = store.get_many(report.write.written)
    values = sorted((c.statements[0].predicate, c.statements[0].value) for c in claims.values())
    assert values == [("amount", 1000), ("memo", "August rent")]
    assert all(c.recorded_at == NOW for c in claims.values())


def test_unknown_csv_columns_are_refused(store, tmp_path):
    path = tmp_path / "c.csv"
    path.write_text("source,colour\nx,red\n", encoding="utf-8")
    with pytest.raises(InvalidRecord, match="unknown CSV columns"):
        ingest(store, path, recorded_at=NOW)


def test_invalid_yaml_names_the_line(store, tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("- kind: agent\n  key: [unclosed\n", encoding="utf-8")
    with pytest.raises(InvalidRecord) as info:
        ingest(store, path, recorded_at=NOW)
    assert info.value.where.startswith(f"{path}:")


def test_an_oversized_line_is_refused(store, tmp_path):
    agent = small_graph()[0].to_json()
    path = _jsonl(tmp_path / "big.jsonl", [agent, dict(agent, name="x" * 5000)])
    with limits(max_record_bytes=4096), pytest.raises(BatchRejected) as info:
        ingest(store, path, recorded_at=NOW)
    assert type(info.value.errors[0]).__name__ == "PayloadTooLarge" and info.value.errors[0].where == f"{path}:2"
    assert store.counts() == {}


def test_python_records_ingest_the_same_way(store):
    report = ingest(store, small_graph(), recorded_at=NOW)
    assert len(report.write.written) == 4
