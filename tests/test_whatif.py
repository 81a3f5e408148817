"""What would change this verdict? The bounded search over a closure's cone."""

from __future__ import annotations

from gaf.rules import atom
from gaf.whatif import search, whatif
from tests.rentcase import PAYMENT, RENT_JULY, close_both
from tests.worlds import SOURCES, SUBJECT, build, contested_premise_with_a_twin


def _changes(report) -> list[str]:
    return [" AND ".join(c.describe() for c in f.changes) for f in report.findings]


def test_on_the_first_closure_a_claim_establishing_the_allocation_flips_it_to_paid(store):
    c1, _ = close_both(store)
    before = store.counts()
    report = whatif(store, c1.closure.id)
    assert store.counts() == before  # the store is never written
    assert report.label == "undetermined" and report.complete and report.exhaustive
    flips = [f for f in report.findings if f.new_label == "paid"]
    assert len(flips) == 1 and len(flips[0].changes) == 1
    assert flips[0].changes[0].describe().startswith(f"add allocated_to({PAYMENT}, {RENT_JULY})")
    assert "paid-by-allocated-transfer" in flips[0].rules_changed


def test_on_the_first_closure_retracting_the_bank_ledger_claim_flips_it_to_unpaid(store):
    c1, _ = close_both(store)
    (ledger,) = store.find("source", key="bank-ledger")
    (claim_c,) = [c for c in store.find("claim") if c.source == ledger.id]
    report = whatif(store, c1.closure.id)
    assert report.interval == (-1.0, 1.0)  # both the warrant and the rebuttal unknown
    (found,) = [f for f in report.findings if [(c.kind, c.claim.id) for c in f.changes] == [("retract", claim_c.id)]]
    # Without the ledger's payment, the closed scope makes the arrears rebuttal hold, and
    # the tenant's "paid" and the landlord's "unpaid" are parties' statements of the
    # conclusion: excluded, they leave nothing unknown — a refutation, not undetermined.
    assert (found.old_label, found.new_label, found.flips) == ("undetermined", "unpaid", True)
    assert found.new_interval == (-1.0, -1.0)
    assert "arrears-established" in found.rules_changed


def test_on_the_second_closure_it_finds_what_would_bring_it_back(store):
    _, c2 = close_both(store)
    report = whatif(store, c2.closure.id, max_size=1)
    assert report.label == "paid"
    back = [f for f in report.findings if f.new_label == "undetermined"]
    assert any("allocated_to" in f.changes[0].describe() and f.changes[0].kind == "retract" for f in back)
    assert any(f.changes[0].why.startswith("falls into a closed scope") for f in report.findings)  # a reversal


def test_a_time_limit_stops_the_search_and_says_how_far_it_got(store):
    c1, _ = close_both(store)
    ticks = iter(range(1000))
    report = whatif(store, c1.closure.id, seconds=3, clock=lambda: next(ticks))
    assert not report.complete and "time limit 3 s" in report.stopped and report.tried < 10


def test_search_handles_boolean_and_numeric_premises():
    # po(?subject, ?N), order(?N): a rule makes another statement's value the subject of a
    # premise. No claim can state order(true) or order(12), so they are no candidates — and
    # the search says so by leaving them out, not with a validation error.
    for value in (True, 12, 2.5, "", " padded"):
        w = build(["p0", "p1"], [], [], [{"role": "warrant", "condition": [atom("p0", "?subject", "?V"), atom("p1", "?V")], "qualifier": 1.0}],
                  [], [(0, "p0", "affirmed")], {"p0": {"value": value}})  # fmt: skip
        report = search(w.policy, w.rules, w.claims, w.closure, max_size=1)
        assert report.complete and report.label == "undetermined"
        assert all(s.subject == SUBJECT for f in report.findings for c in f.changes for s in c.claim.statements)


def test_a_closed_scope_is_entered_with_the_value_a_rule_looks_for():
    # p0(?subject, 3) is false by absence inside the closed scope; only a claim carrying 3 makes it true.
    w = build(["p0"], ["p0"], [], [{"role": "warrant", "condition": [atom("p0", "?subject", 3)], "qualifier": 1.0}], [], [])
    report = search(w.policy, w.rules, w.claims, w.closure, max_size=1)
    assert report.label == "no"
    assert [c.describe() for f in report.findings if f.flips for c in f.changes] == ["add p0(case:1, 3) — falls into a closed scope the closure relied on"]


def test_denial_from_trusted_source_is_a_candidate():
    w = contested_premise_with_a_twin()
    report = search(w.policy, w.rules, w.claims, w.closure, max_size=1)
    assert report.label == "undetermined"
    adds = [c for f in report.findings if f.new_label == "no" for c in f.changes if c.kind == "add"]
    # The authoritative source's denial settles the atom, of the claimed proposition or of its
    # interval-less twin alike: projection weighs the propositions of one atom together (gaf-projection/3).
    assert sorted(str(c.claim.statements[0].valid) for c in adds) == sorted([str(w.claims[0].statements[0].valid), "None"])
    for change in adds:
        assert change.describe() == "add NOT p2(case:1) — settles the unknown p2 (denied)"
        assert change.claim.source == SOURCES[0]  # the authoritative source: the trusted one can only add to the conflict
