"""Records that do not grow with the ledger (issue 21, item 6).

A GAF lists every fact it accepted, a decision every fact it accepted, a closure every
exclusion it read: lists as long as the ledger. Their members are the relationships
written beside the node (CONTAINS, ACCEPTED, LISTS_EXCLUSION, …), so the stored body
leaves them out (``Record.MEMBERS``) and a store reads them back from there. The id
still hashes the whole record, lists included: what a GAF id means is unchanged.

The oracles: the id recomputed here with hashlib over the record's JSON, written out
by hand; and a world whose every member is known from how it was built (one fact per
case for what a trusted authoritative source affirms, one derived fact per case, one
rejected proposition per denial inside a closed scope, one exclusion per claim of a
source trusted for nothing).
"""

from __future__ import annotations

import hashlib
import json
from datetime import timedelta

from hypothesis import given
from hypothesis import strategies as st

from gaf.records import GAF, AcceptedFact, Closure, Decision, Proposition, limits
from gaf.verify import verify
from tests.impact_truth import materialise
from tests.worlds import AT, build_ledger

#: A record size limit far below the whole GAF of ``CASES`` cases, and above every other record.
LIMIT = 8 * 1024
CASES = 120


def _hand_id(kind: str, fields: dict) -> str:
    """A content id as docs/records.md defines it, for ids and keys made of ASCII only:
    sha256 of the sorted, compact JSON of the record's fields (JCS agrees with it there)."""
    body = json.dumps({"kind": kind, **fields}, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return f"{kind}:{hashlib.sha256(body.encode()).hexdigest()}"


_hex_ids = st.lists(st.text("0123456789abcdef", min_size=64, max_size=64), max_size=40)


@given(facts=_hex_ids, rejected=_hex_ids)
def test_a_gaf_id_hashes_its_whole_membership_as_it_always_did(facts, rejected):
    projection = "projection:" + "0" * 64
    gaf = GAF(projection=projection, facts=[f"fact:{h}" for h in facts], rejected=[f"proposition:{h}" for h in rejected])
    fields = {"projection": projection}
    if facts:
        fields["facts"] = sorted({f"fact:{h}" for h in facts})
    if rejected:
        fields["rejected"] = sorted({f"proposition:{h}" for h in rejected})
    assert gaf.id == _hand_id("gaf", fields)
    stored = json.loads(gaf.stored_body)
    assert stored == {"kind": "gaf", "projection": projection}  # the members are the relationships
    assert json.loads(gaf.body) == {"kind": "gaf", **fields}


def test_a_list_that_is_not_a_sorted_set_stays_in_the_body():
    """The relationships give members back sorted and once each: any other list could not be rebuilt."""
    reviewer = "agent:" + "1" * 64
    facts = ["fact:" + "b" * 64, "fact:" + "a" * 64]
    decision = Decision(reviewer=reviewer, decided_at="2026-07-10T00:00:00Z", reason="r", accepted=facts)
    assert json.loads(decision.stored_body)["accepted"] == facts
    fields = {"reviewer": reviewer, "decided_at": "2026-07-10T00:00:00.000Z", "reason": "r", "accepted": facts}  # instants to the millisecond
    assert decision.id == _hand_id("decision", fields)


def _world(cases: int):
    """Per case: s0 (trusted, authoritative, complete for p1) affirms p0 and denies p1; every
    other case s2 (trusted for nothing) affirms p2. ``d0`` holds where p0 and not p1."""
    said = [(0, [(f"case:{i}", "p0", "affirmed", True), (f"case:{i}", "p1", "denied", True)]) for i in range(cases)]
    said += [(2, [(f"case:{i}", "p2", "affirmed", True)]) for i in range(0, cases, 2)]
    verdict = [{"role": "warrant", "condition": ["p0(?subject)"], "qualifier": 0.5}]
    return build_ledger([(["p0", "p1"], True), (["p2"], False)], 1, [(0, "p1")], [["p0(?R)", "not p1(?R)"]],
                        verdict, [], said, ["case:0", "case:1"])  # fmt: skip


def test_a_gaf_far_over_the_record_limit_is_stored_under_it_and_read_back_whole(store):
    world = _world(CASES)
    with limits(max_record_bytes=LIMIT):
        made = materialise(store, world)
        gaf = store.get(made.gaf, GAF)
        closure = store.get(made.closures["case:0"], Closure)
        (decision,) = store.find(Decision)
        facts = store.get_many(gaf.facts, AcceptedFact)
        atoms = store.get_many([f.proposition for f in facts.values()], Proposition)
        rejected = store.get_many(gaf.rejected, Proposition)
    assert len(gaf.body) > 4 * LIMIT  # what the node would have had to hold
    cases = {f"case:{i}" for i in range(CASES)}
    assert sorted((a.predicate, a.subject) for a in atoms.values()) == sorted((p, c) for p in ("d0", "p0") for c in cases)
    assert sorted((a.predicate, a.subject) for a in rejected.values()) == sorted(("p1", c) for c in cases)
    assert decision.accepted == gaf.facts and len(closure.excluded) == CASES // 2
    for kind in ("gaf", "decision", "closure"):
        assert all(len(row["body"]) <= LIMIT for row in store.stored_nodes(kind)), kind
    report = verify(store)
    assert report.ok, report.discrepancies


def test_a_member_relationship_removed_behind_gafs_back_changes_the_record_and_is_named(store):
    made = materialise(store, _world(6))
    gaf = store.get(made.gaf, GAF)
    victim = gaf.facts[0]
    store._write(lambda tx: tx.run("MATCH (:GAF {id: $id})-[r:CONTAINS]->(:AcceptedFact {id: $f}) DELETE r", {"id": gaf.id, "f": victim}))
    found = {(d.id, "does not match its id" in d.problem) for d in verify(store).discrepancies}
    assert found == {(gaf.id, True)}



def test_member_lists_read_together_are_each_records_own_whatever_ids_are_asked_for(store):
    """Members are read for a sorted chunk of records at a time, asked for by the chunk's id range
    as well as its list, so the records between two asked-for ids must not lend theirs. A ledger
    that grows a case a day has a GAF a day, each with members of its own. The oracles: each
    GAF read on its own, and its id, which hashes its member lists (a member lent by a neighbour
    would make the record fail its id check as it is read)."""
    ids = sorted({materialise(store, _world(cases), at=AT + timedelta(days=cases)).gaf for cases in range(2, 14)})
    assert len(ids) == 12
    alone = {gid: store.get(gid, GAF) for gid in ids}
    assert all(alone[gid].facts for gid in ids)
    assert all("facts" not in json.loads(row["body"]) for row in store.stored_nodes("gaf"))  # read from relationships
    for asked in (ids[::3], ids[1::4][::-1], [ids[0], ids[-1]], ids):  # gaps, reversed, the two ends, all
        together = store.get_many(asked, GAF)
        assert together == {gid: alone[gid] for gid in asked}
    assert [g.id for g in store.records("gaf")] == ids
