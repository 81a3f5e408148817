"""Tampering cannot hide: what an attacker with write access to the database does behind gaf's back
— delete a record, insert a well-formed one, replace a verdict by a re-hashed forgery, copy a node,
drop a constraint, cut or rewrite the write log — is named by ``gaf verify`` (and a forged verdict by
replay as tampering, not as an engine difference).

The oracle is the attack itself: the set of ids each test deleted or inserted, kept apart from
gaf, against the ids verify names. Each test prints its counts (tampers tried, detected) for
docs/reliability.md.
"""

from __future__ import annotations

import json

from typer.testing import CliRunner

from gaf.canonical import kind_of
from gaf.cli import app
from gaf.closure import replay
from gaf.records import RECORD_TYPES, LogEntry, Verdict, parse_record
from gaf.store import GafStore
from gaf.store.schema import label_of
from gaf.verify import verify
from tests.rentcase import close_both, forge

DELETED = "is not stored: deleted or replaced out of band"
INSERTED = "is stored but no write logged it"


def _ids(store: GafStore, label: str) -> list[str]:
    return sorted(r["id"] for r in store.read(f"MATCH (n:{label}) RETURN n.id AS id"))


def _delete(store: GafStore, record_id: str) -> None:
    label = label_of(kind_of(record_id))
    store._write(lambda tx: tx.run(f"MATCH (n:{label} {{id: $id}}) DETACH DELETE n", {"id": record_id}))


def _named(store: GafStore, phrase: str, **kwargs) -> set[str]:
    return {d.id for d in verify(store, **kwargs).discrepancies if phrase in d.problem}


def _report(what: str, store: GafStore, tried: int, detected: int) -> None:
    print(f"\ntamper suite [{store.dialect}] {what}: {tried} tried, {detected} detected")


def test_a_record_of_any_kind_deleted_out_of_band_is_named_by_the_write_log(store):
    close_both(store)
    assert verify(store).ok
    deleted: set[str] = set()
    kinds = [cls for cls in RECORD_TYPES.values() if cls is not LogEntry]
    for cls in kinds:
        ids = _ids(store, cls.LABEL)
        if not ids:
            continue
        victim = ids[len(ids) // 2]
        _delete(store, victim)
        deleted.add(victim)
        assert _named(store, DELETED) == deleted, cls.KIND
    _report("deletions, one per kind, cumulative", store, len(deleted), len(deleted))
    assert len(deleted) >= 15  # the rent case holds records of that many kinds


def test_well_formed_records_inserted_out_of_band_are_named_by_the_write_log(store):
    close_both(store)
    inserted: set[str] = set()
    for label, field, value in [("Claim", "transformation", "other"), ("Proposition", "subject", "payment:tx-9999"),
                                ("Verdict", "label", "unpaid"), ("Source", "key", "forged-bank"),
                                ("Agent", "key", "forged-clerk")]:  # fmt: skip
        original = store.get(_ids(store, label)[0])
        body = original.to_json() | {field: value}
        body.pop("id")
        forged = parse_record(body)
        forge(store, forged)
        inserted.add(forged.id)
        assert _named(store, INSERTED) == inserted, label
    _report("insertions of well-formed records", store, len(inserted), len(inserted))


def test_a_verdict_replaced_by_a_rehashed_forgery_is_named_as_tampering_by_verify_and_replay(store):
    _, c2 = close_both(store)
    real = c2.verdict
    forged = Verdict.model_validate(real.model_dump(exclude={"id"}) | {"label": "unpaid", "strength": -0.5})
    assert forged.id != real.id  # a valid id: it is the forgery's own content hash
    _delete(store, real.id)
    forge(store, forged)
    store._write(lambda tx: tx.run("MATCH (v:Verdict {id: $v}) MATCH (c:Closure {id: $c}) CREATE (v)-[:DECIDES]->(c)",
                                   {"v": forged.id, "c": c2.closure.id}))  # fmt: skip
    problems = {d.id: d.problem for d in verify(store).discrepancies}
    assert DELETED in problems.pop(real.id) and INSERTED in problems.pop(forged.id) and not problems
    found = replay(store, c2.closure.id)
    assert [layer["layer"] for layer in found.layers] == ["tampering"] and forged.id in found.layers[0]["detail"]
    _report("verdict replaced by a forgery", store, 1, 1)


def test_a_deleted_verdict_is_named_by_verify_and_by_replay(store):
    c1, _ = close_both(store)
    _delete(store, c1.verdict.id)
    problems = {d.id: d.problem for d in verify(store).discrepancies}
    assert "has no verdict" in problems.pop(c1.closure.id) and DELETED in problems.pop(c1.verdict.id) and not problems
    assert [layer["layer"] for layer in replay(store, c1.closure.id).layers] == ["verdict"]


def test_a_link_of_the_write_log_cut_out_is_named(store):
    close_both(store)
    links = sorted(store.get_many(_ids(store, "LogEntry"), LogEntry).values(), key=lambda link: link.seq)
    victim = links[len(links) // 2]
    _delete(store, victim.id)
    problems = [d.problem for d in verify(store).discrepancies]
    assert any(f"link {victim.seq} of the write log is missing" in p for p in problems)
    assert any(f"relationship FOLLOWS to {victim.id} is missing" in p for p in problems)  # the next link names it
    _report("write-log link cut out", store, 1, 1)


def test_a_log_rewritten_consistently_passes_alone_and_is_named_against_a_head_noted_before(store):
    """An attacker who inserts a source and rebuilds the whole log with it leaves a store that agrees
    with itself; a head kept elsewhere is what names it (as transparency logs do)."""
    close_both(store)
    noted = verify(store).head
    assert noted is not None
    forge(store, parse_record({"kind": "source", "key": "forged-bank", "name": "a bank nobody registered"}))
    store._write(lambda tx: tx.run("MATCH (l:LogEntry) DETACH DELETE l"))
    everything = sorted(i for cls in RECORD_TYPES.values() if cls is not LogEntry for i in _ids(store, cls.LABEL))
    by_kind: dict[str, list[str]] = {}
    for rid in everything:
        by_kind.setdefault(kind_of(rid), []).append(rid)
    forge(store, LogEntry(seq=0, written=by_kind))
    alone = verify(store)
    assert alone.ok and alone.head != noted
    assert _named(store, "the log was rewritten", head=noted) == {noted}
    _report("log rewritten consistently, caught by a noted head", store, 1, 1)


def test_a_node_copied_after_its_constraint_was_dropped_is_named(store):
    c1, _ = close_both(store)
    if store.dialect == "neo4j":
        store._write(lambda tx: tx.run("DROP CONSTRAINT gaf_Closure_id IF EXISTS"))
    try:
        try:
            forge(store, store.get(c1.closure.id))
        except Exception as exc:  # the embedded store's primary key refuses the copy outright
            assert store.dialect == "ladybug", exc
            assert verify(store).ok
            _report("node copied (the primary key refused it)", store, 1, 1)
            return
        problems: dict[str, list[str]] = {}
        for d in verify(store).discrepancies:
            problems.setdefault(d.id, []).append(d.problem)
        assert any("is stored on 2 nodes" in p for p in problems[c1.closure.id])
        assert any("constraint is missing" in p for p in problems["gaf_Closure_id"])
        _report("node copied after its constraint was dropped", store, 1, 1)
    finally:
        if store.dialect == "neo4j":
            store._write(lambda tx: tx.run("MATCH (n:Closure {id: $id}) WITH n SKIP 1 DETACH DELETE n", {"id": c1.closure.id}))
            store.init()


def test_verify_deep_replays_every_closure_and_the_cli_prints_the_head(store, tmp_path):
    c1, c2 = close_both(store)
    report = verify(store, deep=True)
    assert report.ok and report.replayed == 2
    if store.dialect != "ladybug":
        return
    store.close()  # the CLI opens it itself
    result = CliRunner().invoke(app, ["verify", "--deep", "--store", store.location, "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["replayed"] == 2 and data["log"]["head"] == report.head
    gone = CliRunner().invoke(app, ["verify", "--store", store.location, "--head", "log_entry:" + "0" * 64])
    assert gone.exit_code == 4 and "not in the store's write log" in gone.stdout
    mistaken = CliRunner().invoke(app, ["verify", "--store", store.location, "--head", c1.closure.id])
    assert mistaken.exit_code == 2 and "is not a log head" in mistaken.output


def test_every_write_transaction_is_one_link_chained_to_the_one_before(store):
    """The log's shape against an independent count: links numbered 0..n-1, each following the one
    before, listing together exactly the stored ids (counted by Cypher, not by gaf)."""
    close_both(store)
    links = sorted(store.get_many(_ids(store, "LogEntry"), LogEntry).values(), key=lambda link: link.seq)
    assert [link.seq for link in links] == list(range(len(links)))
    assert [link.prev for link in links] == [None, *(link.id for link in links[:-1])]
    listed = [rid for link in links for rid in link.ids()]
    stored = [i for cls in RECORD_TYPES.values() if cls is not LogEntry for i in _ids(store, cls.LABEL)]
    assert sorted(listed) == sorted(stored) and len(set(listed)) == len(listed)
    closing = [link for link in links if link.checkpoints]
    assert sorted(c for link in closing for c in link.checkpoints) == _ids(store, "Closure")
