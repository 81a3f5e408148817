"""The impact oracle pinned: what deciding again says a change does, on cases whose answer is known.

``tests/impact_truth.py`` is what impact analysis is checked against, so it is checked first:
on small worlds where reasoning says what must happen (the only source of a fact goes, one
of two corroborating sources goes, an untrusted source speaks, a claim falls into a closed
scope a ``not`` relied on), and on random stored worlds, where a change that changes nothing
must leave every closure unaffected and a change by a source the policy does not trust must too
(excluded is inert).
"""

from __future__ import annotations

from dataclasses import replace

from hypothesis import HealthCheck, given, settings

from gaf.store.ladybug import LadybugStore
from tests.impact_truth import Stated, Support, decide, embedded, fact_status, materialise, truth, truths
from tests.worlds import AT, VALID, LedgerWorld, Trigger, build_ledger, changed_world, said, statement

WINDOW = ("2026-07-01T00:00:00.000Z", "2026-08-01T00:00:00.000Z")


def warrant(*condition: str) -> list[dict]:
    return [{"role": "warrant", "condition": list(condition), "qualifier": 1.0}]


def affirmed(subject: str, predicate: str, valid: bool = True) -> tuple[str, str, str, bool]:
    return (subject, predicate, "affirmed", valid)


def p(predicate: str, subject: str, valid: bool = True) -> Stated:
    return Stated(predicate, subject, None, WINDOW if valid else None)


def new_claim(world: LedgerWorld, source: int, predicate: str, subject: str, polarity: str = "affirmed") -> Trigger:
    return Trigger.add(said(world.sources[source].id, [statement(predicate, polarity, subject=subject)], None))


def corroborated(corroboration: int = 1) -> LedgerWorld:
    """s0 and s1, neither authoritative, both affirm p0(case:1); the warrant needs p0."""
    return build_ledger(trust=[(["p0"], False), (["p0", "p1", "p2", "p3"], False)], untrusted=1, closed=[], derived=[],
                        verdict=warrant("p0(?subject)"), defeats=[],
                        claims=[(0, [affirmed("case:1", "p0")]), (1, [affirmed("case:1", "p0"), affirmed("case:2", "p1")])],
                        subjects=["case:1", "case:2"], acted=["case:1"], corroboration=corroboration)  # fmt: skip


def closed_scope() -> LedgerWorld:
    """d0 :- p0, not p1, and s0 has declared p1 complete: with p0(case:1) from s0 and no p1, d0 holds."""
    return build_ledger(trust=[(["p0", "p1"], True), (["p0", "p1", "p2", "p3"], False)], untrusted=1, closed=[(0, "p1")],
                        derived=[["p0(?R)", "not p1(?R)"]], verdict=warrant("d0(?subject)"), defeats=[],
                        claims=[(0, [affirmed("case:1", "p0")]), (1, [affirmed("case:2", "p2")])],
                        subjects=["case:1", "case:2"], acted=["case:1"])  # fmt: skip


def test_losing_the_only_source_of_a_fact_the_warrant_needs_changes_the_verdict(tmp_path):
    world = build_ledger(trust=[(["p0"], False), (["p0", "p1", "p2", "p3"], False)], untrusted=1, closed=[], derived=[],
                         verdict=warrant("p0(?subject)"), defeats=[],
                         claims=[(0, [affirmed("case:1", "p0"), affirmed("case:2", "p0")]), (1, [affirmed("case:2", "p0")])],
                         subjects=["case:1", "case:2"], acted=["case:1", "case:2"])  # fmt: skip
    found = truth(world, Trigger.invalidate(world.sources[0].id), tmp_path)
    one, two = found.of("case:1"), found.of("case:2")
    assert one.before.label == "yes" and one.after.label != "yes"
    assert one.status == "verdict changes" and one.facts[p("p0", "case:1")] == "invalidated"
    # case:2 keeps p0 on s1: its fact is weakened, its verdict holds, and its action is only to review.
    assert two.status == "basis changes, verdict holds" and two.facts[p("p0", "case:2")] == "weakened"
    assert found.to_compensate == list(one.actions) and found.to_review == list(two.actions)


def test_losing_one_of_two_corroborating_sources_weakens_the_fact_and_keeps_the_verdict(tmp_path):
    world = corroborated()
    found = truth(world, Trigger.invalidate(world.sources[1].id), tmp_path)
    one = found.of("case:1")
    assert one.facts[p("p0", "case:1")] == "weakened"
    assert one.now.accepted[p("p0", "case:1")].sources == {world.sources[0].id}
    assert one.before == one.after and one.status == "basis changes, verdict holds"
    assert found.to_compensate == [] and found.to_review == list(one.actions)
    # case:2's closure shares the GAF, which lost p1(case:2): its basis changed, its verdict did not.
    assert found.of("case:2").facts[p("p1", "case:2")] == "invalidated"


def test_where_two_sources_are_needed_losing_one_of_two_loses_the_fact_and_the_verdict(tmp_path):
    world = corroborated(corroboration=2)
    found = truth(world, Trigger.invalidate(world.sources[1].id), tmp_path)
    one = found.of("case:1")
    assert one.before.label == "yes" and one.status == "verdict changes"
    assert one.facts[p("p0", "case:1")] == "invalidated" and p("p0", "case:1") in one.now.unresolved


def test_an_authoritative_source_outweighs_any_number_of_others():
    alone = Support(frozenset({"source:a"}), authoritative=True)
    two_others = Support(frozenset({"source:b", "source:c"}), authoritative=False)
    assert fact_status(alone, two_others) == "weakened" and fact_status(two_others, alone) == "strengthened"


def test_a_new_claim_from_an_untrusted_source_changes_nothing(tmp_path):
    world = closed_scope()
    untrusted = len(world.policy.trust)
    spoken = (("p1", "case:1", "affirmed"), ("p0", "case:1", "denied"), ("p0", "case:3", "affirmed"))
    for found in truths(world, [new_claim(world, untrusted, pred, subject, pol) for pred, subject, pol in spoken], tmp_path):
        assert set(found.statuses.values()) == {"unaffected"}, str(found)


def test_a_new_claim_inside_the_closed_scope_a_not_relied_on_defeats_the_derivation(tmp_path):
    world = closed_scope()
    # From the source that declared the scope, and from another trusted source alike.
    for found in truths(world, [new_claim(world, source, "p1", "case:1") for source in (0, 1)], tmp_path):
        one = found.of("case:1")
        assert one.was.accepted.keys() >= {Stated("d0", "case:1", None, None)}
        assert one.facts[Stated("d0", "case:1", None, None)] == "invalidated"
        assert one.facts[p("p1", "case:1")] == "added"
        assert one.before.label == "yes" and one.status == "verdict changes" and found.to_compensate == list(one.actions)


def test_retracting_the_denial_that_left_a_fact_contested_settles_the_verdict(tmp_path):
    world = build_ledger(trust=[(["p0"], False), (["p0", "p1", "p2", "p3"], False)], untrusted=1, closed=[], derived=[],
                         verdict=warrant("p0(?subject)"), defeats=[],
                         claims=[(0, [affirmed("case:1", "p0")]), (1, [("case:1", "p0", "denied", True)])],
                         subjects=["case:1", "case:2"])  # fmt: skip
    found = truth(world, Trigger.retract(world.claims[1].id), tmp_path)
    one = found.of("case:1")
    assert one.before.label == "undetermined" and one.after.label == "yes"
    assert p("p0", "case:1") in one.was.unresolved and one.facts[p("p0", "case:1")] == "added"


def test_retracting_a_claim_whose_source_says_the_same_elsewhere_leaves_the_closure_unaffected(tmp_path):
    world = build_ledger(trust=[(["p0"], False), (["p0", "p1", "p2", "p3"], False)], untrusted=1, closed=[], derived=[],
                         verdict=warrant("p0(?subject)"), defeats=[],
                         claims=[(0, [affirmed("case:1", "p0")]), (0, [affirmed("case:1", "p0"), affirmed("case:2", "p1")])],
                         subjects=["case:1", "case:2"])  # fmt: skip
    found = truth(world, Trigger.retract(world.claims[0].id), tmp_path)
    one = found.of("case:1")
    # The GAF is another (the evaluation cites one claim fewer), but the support counts the same.
    assert one.was.gaf != one.now.gaf and one.status == "unaffected"


def test_a_new_claim_about_a_subject_without_a_closure_changes_the_basis_every_closure_shares(tmp_path):
    world = corroborated()
    found = truth(world, new_claim(world, 0, "p0", "case:3"), tmp_path)
    assert found.statuses == {"case:1": "basis changes, verdict holds", "case:2": "basis changes, verdict holds"}
    assert found.of("case:1").facts[p("p0", "case:3")] == "added"


def test_an_invalidated_source_counts_as_its_claims_gone_and_its_closed_scopes_still_closed(tmp_path):
    world = build_ledger(trust=[(["p0", "p1"], False), (["p0", "p1", "p2", "p3"], False)], untrusted=1, closed=[(0, "p1")],
                         derived=[["p0(?R)", "not p1(?R)"]], verdict=warrant("d0(?subject)"), defeats=[],
                         claims=[(0, [affirmed("case:2", "p1")]), (1, [affirmed("case:1", "p0"), affirmed("case:2", "p0")])],
                         subjects=["case:1", "case:2"])  # fmt: skip
    s0 = world.sources[0].id
    stores = embedded(tmp_path)
    invalidated = decide(stores, "invalidated", Trigger.invalidate(s0).applied(world))
    without = decide(stores, "without", replace(world, claims=[c for c in world.claims if c.source != s0]))
    assert invalidated.basis == without.basis and invalidated.verdicts == without.verdicts
    # Without s0's p1(case:2), its own declaration makes p1(case:2) false: d0(case:2) now holds.
    found = truth(world, Trigger.invalidate(s0), tmp_path)
    assert found.of("case:2").facts[Stated("d0", "case:2", None, None)] == "added"
    assert found.statuses == {"case:1": "basis changes, verdict holds", "case:2": "verdict changes"}


def test_an_invalidation_voids_only_the_claims_observed_from_its_time_on(tmp_path):
    # s0's first claim was seen an hour before the as-of, its second two hours before.
    world = build_ledger(trust=[(["p0", "p1"], False), (["p0", "p1", "p2", "p3"], False)], untrusted=1, closed=[], derived=[],
                         verdict=warrant("p0(?subject)"), defeats=[],
                         claims=[(0, [affirmed("case:1", "p0")]), (0, [affirmed("case:2", "p0")])],
                         subjects=["case:1", "case:2"])  # fmt: skip
    found = truth(world, Trigger.invalidate(world.sources[0].id, since=world.claims[0].observed_at), tmp_path)
    assert found.statuses == {"case:1": "verdict changes", "case:2": "basis changes, verdict holds"}
    assert found.of("case:2").facts[p("p0", "case:2")] == "unchanged"


def test_the_truth_reports_on_the_closures_a_caller_materialises(tmp_path):
    world = corroborated()
    with LadybugStore(tmp_path / "caller.lbug") as store:
        made = materialise(store, world, AT)
    found = truth(world, Trigger.invalidate(world.sources[1].id), tmp_path)
    assert sorted(found.closures) == sorted(made.closures.values())
    assert sorted(a for c in found.closures.values() for a in c.actions) == sorted(made.actions.values())


def _speaker(world: LedgerWorld, change: Trigger) -> str:
    if change.kind == "invalidate":
        return change.id
    if change.claim is not None:
        return change.claim.source
    return next(c.source for c in world.claims if c.id == change.id)


NOTHING = said("source:" + "0" * 64, [statement("p0", "affirmed", valid=VALID)], 999).id


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(drawn=changed_world())
def test_on_random_worlds_no_change_leaves_every_closure_unaffected_and_so_does_an_untrusted_source(tmp_path, drawn):
    world, change = drawn
    found, same = truths(world, [change, Trigger.retract(NOTHING)], tmp_path)
    assert sorted(c.subject for c in found.closures.values()) == sorted(world.subjects)
    if not world.trusted(_speaker(world, change)):
        assert set(found.statuses.values()) == {"unaffected"}, str(found)
    assert set(same.statuses.values()) == {"unaffected"}, str(same)
    # Deciding the same world in another store makes the very same closures.
    assert all(c.recomputed == c.closure for c in same.closures.values())
