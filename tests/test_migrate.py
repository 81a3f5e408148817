"""`gaf migrate` on a store written by the gaf before schema versions: every id kept, every
cone recorded, replay and verify as before, and impact's reach the same through the index.

The old store is tests/fixtures/legacy-v1/rent.jsonl: every record (with its written_at)
of the rent story (examples/rent/story.sh) as gaf at commit fe049df wrote it — before
cones and schema versions existed, member lists kept in the body — and rent-answers.json, what that gaf's own `verify`
and `replay` answered on it. Loading it writes the same records at the same times; a
store of that gaf had no version stamp, so the stamp a store gets when it is created
is removed through the raw database (the store has no delete).
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

import pytest
from typer.testing import CliRunner

import impact
from gaf.cli import app
from gaf.closure import replay
from gaf.errors import StoreError
from gaf.ledger import ingest
from gaf.migrate import migrate
from gaf.records import (
    GAF,
    RECORD_TYPES,
    Claim,
    Closure,
    Cone,
    Evaluation,
    Proposition,
    Record,
    SchemaVersion,
    SubjectKey,
    matches_pattern,
    parse_record,
)
from gaf.store import GafStore
from gaf.store.ladybug import LadybugStore
from gaf.store.schema import SCHEMA_VERSION
from gaf.types import to_instant
from gaf.verify import verify

LEGACY = Path(__file__).parent / "fixtures" / "legacy-v1"
AT = datetime(2026, 12, 2, 9, 0, tzinfo=timezone.utc)


def load_legacy(store: GafStore, name: str = "rent") -> dict[str, Record]:
    """Write the old store's records with the written_at it gave them, and leave it unstamped.

    Each record is written after what it points at, at its old written_at (a record with a
    time of its own, a claim's recorded_at, is stamped with that whatever the batch's time)."""
    records: dict[str, Record] = {}
    written: dict[str, str] = {}
    for line in (LEGACY / f"{name}.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        records[row["id"]] = parse_record(row["record"] | {"id": row["id"]})
        written[row["id"]] = row["written_at"]
    order: list[str] = []

    def visit(rid: str) -> None:
        if rid in records and rid not in order:
            for _, target in records[rid].edges():
                visit(target)
            order.append(rid)

    for rid in records:
        visit(rid)
    for rid in order:
        store.put([records[rid]], at=to_instant(written[rid]))
    store._write(lambda tx: tx.run("MATCH (s:SchemaVersion) DELETE s"))  # the old gaf wrote no stamp
    store._write(lambda tx: tx.run("MATCH (l:LogEntry) DETACH DELETE l"))  # nor a write log
    store._write(lambda tx: tx.run("MATCH (k:SubjectKey) DETACH DELETE k"))  # nor subject keys (schema 7)
    # The old gaf kept member lists in the body (schema 4 leaves them to the relationships).
    whole = [{"id": r.id, "label": r.LABEL, "body": r.body.decode()} for r in records.values() if r.stored_body != r.body]
    assert {w["label"] for w in whole} >= {"GAF", "Decision"}
    for w in whole:
        store._write(lambda tx, w=w: tx.run(f"MATCH (n:{w['label']} {{id: $id}}) SET n.body = $body", w))
    stamped = {r["id"]: r["w"] for cls in RECORD_TYPES.values() for r in store.read(f"MATCH (n:{cls.LABEL}) RETURN n.id AS id, n.written_at AS w")}
    assert stamped == written
    return records


def answers(name: str = "rent") -> dict:
    return json.loads((LEGACY / f"{name}-answers.json").read_text(encoding="utf-8"))


def stored_ids(store: GafStore) -> set[str]:
    return {rid for kind in store.counts() for rid in store.ids(kind)}


def test_a_store_made_before_versions_is_version_1_and_a_new_store_is_stamped_current(store):
    assert store.schema_version() == SCHEMA_VERSION
    assert [s.version for s in store.find(SchemaVersion)] == [SCHEMA_VERSION]
    load_legacy(store)
    assert store.schema_version() == 1
    assert len(store.closures_without_cone()) == len(answers()["replays"]) == 4


def test_migrate_records_every_closures_cone_keeping_every_id_replay_and_verify(store):
    old = load_legacy(store)
    closures = sorted(answers()["replays"])
    before_ids = stored_ids(store)
    assert before_ids == set(old)
    replays_before = {c: replay(store, c).to_dict() for c in closures}
    assert verify(store).ok

    done = migrate(store, at=AT)

    subjects = {r.subject for r in old.values() if isinstance(r, Proposition)}
    assert (done.before, done.after, done.backfilled) == (1, SCHEMA_VERSION, {"cone": 4, "subject_key": len(subjects)})
    assert store.schema_version() == SCHEMA_VERSION and store.closures_without_cone() == []
    after_ids = stored_ids(store)
    assert before_ids <= after_ids  # nothing lost; what was added is cones and their keys (and the stamp, not counted)
    assert {i.split(":")[0] for i in after_ids - before_ids} == {"cone", "cone_key"}
    for rid in before_ids:
        assert store.get(rid) == old[rid]  # nothing rewritten
    assert {c: replay(store, c).to_dict() for c in closures} == replays_before
    report = verify(store)
    assert report.ok, report.discrepancies
    for closure_id, then in answers()["replays"].items():
        # what the gaf that made the store answered; a later projection implementation is named, never hidden
        now = replays_before[closure_id]
        assert now["verdict"] == then["verdict"]
        assert [layer["layer"] for layer in now["layers"]] in ([], ["projection implementation"])


def test_each_backfilled_cone_holds_every_atom_its_closure_was_decided_on(store):
    load_legacy(store)
    migrate(store, at=AT)
    for closure_id in answers()["replays"]:
        closure = store.get(closure_id, Closure)
        (cone,) = store.find(Cone, closure=closure_id)
        gaf = store.get(closure.gaf, GAF)
        evaluations = store.find(Evaluation, projection=closure.projection)
        # the truth, read off the records the closure rests on: each proposition its policy weighed
        props = store.get_many(sorted({e.proposition for e in evaluations}), Proposition)
        read = {(p.subject, p.predicate) for p in props.values()}
        assert read and gaf.id
        for subject, predicate in read:
            assert predicate in cone.predicates and any(matches_pattern(p, subject) for p in cone.subjects), (subject, predicate)


def test_migrate_again_writes_nothing_and_a_dry_run_writes_nothing(store):
    load_legacy(store)
    counts = store.counts()
    dry = migrate(store, at=AT, dry_run=True)
    assert dry.changed and store.counts() == counts and store.schema_version() == 1
    migrate(store, at=AT)
    counts = store.counts()
    again = migrate(store, at=datetime(2026, 12, 3, tzinfo=timezone.utc))
    assert not again.changed and again.backfilled == {} and store.counts() == counts


def test_migrate_refuses_a_store_stamped_by_a_newer_gaf(store):
    store.put([SchemaVersion(version=SCHEMA_VERSION + 1, at=AT)], at=AT)
    with pytest.raises(StoreError, match="newer gaf"):
        migrate(store, at=AT)


def test_reach_reads_every_policy_on_an_old_store_says_so_and_finds_what_the_cone_index_finds(store):
    """The same impact reports before and after migrating, for every source of the rent
    story: the old store's reach (each policy's cone computed afresh) and the recorded
    cones reach the same closures with the same outcomes; only the old one carries a note."""
    old = load_legacy(store)
    sources = sorted(rid for rid, r in old.items() if r.KIND == "source")
    before = {s: impact.source_invalidated(store, s).to_dict() for s in sources}
    migrate(store, at=AT)
    after = {s: impact.source_invalidated(store, s).to_dict() for s in sources}
    for s in sources:
        assert [n for n in before[s]["notes"] if "gaf migrate" in n], s
        assert after[s]["notes"] == []
        assert {**before[s], "notes": []} == after[s], s
    assert any(report["closures"] for report in after.values())  # the rent story's sources do move closures


def test_migrate_links_every_proposition_to_its_subjects_key_and_the_cone_reads_the_same_claims_through_it(store):
    old = load_legacy(store)
    propositions = {r.id: r for r in old.values() if isinstance(r, Proposition)}
    claims = [r for r in old.values() if isinstance(r, Claim)]
    assert {pid for pid, _ in store.unkeyed_propositions()} == set(propositions)

    def cone(subjects: list[str], prefixes: list[str], predicates: list[str]) -> list[str]:
        return [c.id for c in store.cone_claims(subjects, prefixes, predicates)]

    def truth(subjects: list[str], prefixes: list[str], predicates: list[str]) -> list[str]:
        # The claims themselves, read in Python: any statement about one of the subjects (or a
        # subject with one of the prefixes) with one of the predicates.
        return sorted(c.id for c in claims if any(
            st.predicate in predicates and (st.subject in subjects or any(st.subject.startswith(p) for p in prefixes))
            for st in c.statements))  # fmt: skip

    every_predicate = sorted({p.predicate for p in propositions.values()})
    every_subject = sorted({p.subject for p in propositions.values()})
    questions = [
        (every_subject[:3], [], every_predicate),
        ([], ["payment:", "rent:"], every_predicate[:4]),
        (every_subject[-2:], ["lease:"], every_predicate),
        (["no-such:subject"], ["no-such:"], every_predicate),
    ]
    before = [cone(*q) for q in questions]  # an unmigrated store: the subject column
    migrate(store, at=AT)
    assert store.unkeyed_propositions() == []
    for pid, proposition in sorted(propositions.items()):
        key = SubjectKey(subject=proposition.subject)
        assert ("ABOUT", key.id) in store.edges_from(pid) and store.get(key.id) == key
    assert [cone(*q) for q in questions] == before == [truth(*q) for q in questions]
    assert any(before)
    again = migrate(store, at=AT)
    assert not again.changed and store.unkeyed_propositions() == []


def test_an_embedded_store_made_before_subject_keys_opened_read_only_verifies_and_reads_its_cone(tmp_path):
    location = tmp_path / "old.lbug"
    with LadybugStore(location) as made:
        old = load_legacy(made)
        made._conn.execute("DROP TABLE ABOUT")  # the gaf that made it declared neither
        made._conn.execute("DROP TABLE SubjectKey")
    claims = sorted(r.id for r in old.values() if isinstance(r, Claim) and any(st.subject.startswith("payment:") for st in r.statements))
    with LadybugStore(location, read_only=True) as store:
        assert "SubjectKey" not in store.labels() and store.schema_version() == 1
        report = verify(store)
        assert report.ok, report.discrepancies
        assert report.checked == len(old)
        predicates = sorted({st.predicate for r in old.values() if isinstance(r, Claim) for st in r.statements})
        assert [c.id for c in store.cone_claims([], ["payment:"], predicates)] == claims != []


def test_the_cli_migrates_an_old_store_once_and_then_says_there_is_nothing_to_do(tmp_path):
    location = str(tmp_path / "old.lbug")
    with LadybugStore(location) as old:
        load_legacy(old)
    runner = CliRunner()
    first = runner.invoke(app, ["migrate", "--store", location, "--json"])
    assert first.exit_code == 0, first.output
    subjects = {json.loads(line)["record"]["subject"] for line in (LEGACY / "rent.jsonl").read_text(encoding="utf-8").splitlines()
                if json.loads(line)["record"]["kind"] == "proposition"}  # fmt: skip
    assert json.loads(first.stdout) | {"stamp": None} == {
        "before": 1, "after": SCHEMA_VERSION, "changed": True, "backfilled": {"cone": 4, "subject_key": len(subjects)},
        "stamp": None, "dry_run": False}  # fmt: skip
    second = runner.invoke(app, ["migrate", "--store", location])
    assert second.exit_code == 0 and "nothing to migrate" in second.stdout


def test_verify_names_a_closure_whose_cone_was_removed_behind_gafs_back(store):
    """From schema 2 on, a closure without its cone is invisible to impact's reach: tampering."""
    load_legacy(store)
    migrate(store, at=AT)
    assert verify(store).ok
    victim = sorted(answers()["replays"])[0]
    store._write(lambda tx: tx.run("MATCH (c:Cone)-[:CONE_OF]->(:Closure {id: $id}) DETACH DELETE c", {"id": victim}))
    report = verify(store)
    problems = {d.id: d.problem for d in report.discrepancies}
    assert "no recorded cone" in problems.pop(victim)
    (cone,) = problems  # and the write log, begun by the migration, misses the cone it listed
    assert cone.startswith("cone:") and "is not stored" in problems[cone]


def _legacy_records(name: str = "rent") -> list[dict]:
    lines = (LEGACY / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line)["record"] | {"id": json.loads(line)["id"]} for line in lines]


def test_ingesting_closures_exported_from_an_old_store_records_their_cones(store):
    """`gaf ingest` of another store's records keeps the invariant `close` keeps: every closure
    is stored with the cone impact finds it by."""
    report = ingest(store, _legacy_records(), recorded_at=AT)
    assert not report.write.failed
    assert store.schema_version() == SCHEMA_VERSION and store.closures_without_cone() == []
    assert store.count(Cone) == store.count(Closure) == 4
    assert verify(store).ok


def test_a_closure_put_without_its_cone_is_still_reached_said_so_and_repaired_by_migrate(store):
    old = load_legacy(store)
    migrate(store, at=AT)
    # Another closure of the same GAF, put directly (no close, no ingest): no cone is recorded for it.
    first = store.get(sorted(answers()["replays"])[0], Closure)
    extra = Closure.model_validate(first.model_dump() | {"id": "", "question": first.question + " (copied)"})
    store.put([extra], at=AT)
    assert store.closures_without_cone() == [extra.id]
    claims = [r for r in old.values() if r.KIND == "claim"]
    found = impact.reach(store, impact.Change.removing(claims))
    assert extra.id in {c.id for c in found.closures} and "no recorded cone" in found.note
    repaired = migrate(store, at=AT)
    assert repaired.changed and (repaired.before, repaired.after, repaired.backfilled) == (SCHEMA_VERSION, SCHEMA_VERSION, {"cone": 1})
    assert store.closures_without_cone() == [] and impact.reach(store, impact.Change.removing(claims)).note == ""
