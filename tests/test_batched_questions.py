"""The questions impact asks of many records at once answer what the records themselves say.

Recomputing hundreds of closures asks the store, for all of them together, which claims each
policy's cone reads (``cones_claims``), which verdicts decide each closure (``verdicts_of``),
which actions execute each verdict (``actions_of``), what became of each action
(``action_statuses``) and which facts share each fact's proposition (``fact_siblings``).
Each is checked against an oracle that reads the records whole and answers in Python: the
cone by testing every stored claim against the policy's scope, predicates and cut-off and
every stored invalidation; the others from the records' own reference fields. On
LadybugDB, which answers a long list of ids by scanning the label and a short one record
by record, both ways are checked.
"""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime

import pytest
from hypothesis import HealthCheck, given, settings

import gaf.store.questions as questions
from bench.built import Shape, build, draw
from gaf.projection import cone_predicates, cones_claims
from gaf.records import AcceptedFact, Action, ActionStatus, Claim, Projection, SourceInvalidation, Verdict, matches_pattern
from gaf.store import GafStore
from gaf.types import format_instant
from tests.worlds import AT, RECORDS, REVIEWER_AGENT, ConeQuestions, cone_questions

#: Enough closures that LadybugDB scans for them as the store is configured.
SCAN_AT = questions.SCAN_AT
SMALL = Shape(portfolios=9, cases=4, claims=4, predicates=8, per_portfolio=1, fan_out=9, skew=1.0, acted=0.5, seed=5)


def _cone_truth(store: GafStore, policy: Projection, as_of: datetime) -> list[str]:
    """The claims a policy's cone reads as of a time, from every stored claim and invalidation."""
    predicates = cone_predicates(policy)
    cutoff = min(as_of, policy.cutoff) if policy.cutoff else as_of
    invalidations = [i for i in store.records("invalidation") if isinstance(i, SourceInvalidation) and i.recorded_at <= as_of]
    out = []
    for claim in store.records("claim"):
        assert isinstance(claim, Claim)
        reads = any(s.predicate in predicates and any(matches_pattern(p, s.subject) for p in policy.scope.subjects or ["*"])
                    for s in claim.statements)  # fmt: skip
        void = any(i.source == claim.source and claim.observed_at >= i.invalid_from for i in invalidations)
        if reads and claim.recorded_at <= cutoff and not void:
            out.append(claim.id)
    return sorted(out)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(drawn=cone_questions())
def test_the_cones_of_many_questions_asked_at_once_are_each_policys_own_on_both_stores(store, drawn: ConeQuestions):
    # The store accumulates the worlds of earlier examples: the oracle reads whatever it holds.
    world = drawn.world
    store.put([*RECORDS, REVIEWER_AGENT, *world.sources, *world.claims, *world.invalidations], at=AT)
    together = cones_claims(store, drawn.questions)
    for policy, as_of in drawn.questions:
        truth = _cone_truth(store, policy, as_of)
        assert [c.id for c in together[(policy.id, as_of)]] == truth, (policy.scope.subjects, format_instant(as_of))
        assert [c.id for c in cones_claims(store, [(policy, as_of)])[(policy.id, as_of)]] == truth


def _pairs(records, field: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = defaultdict(list)
    for record in records:
        out[getattr(record, field)].append(record.id)
    return {k: sorted(v) for k, v in sorted(out.items())}


def _siblings_truth(facts: list[AcceptedFact]) -> dict[str, list[str]]:
    """For each fact, the justifications of the other facts of its proposition under its projection."""
    alike: dict[tuple[str, str], list[AcceptedFact]] = defaultdict(list)
    for f in facts:
        alike[(f.proposition, f.projection)].append(f)
    out = {f.id: sorted({g.justification for g in alike[(f.proposition, f.projection)] if g.id != f.id}) for f in facts}
    return {k: v for k, v in sorted(out.items()) if v}


def _check_batched_questions(store: GafStore) -> None:
    closures = sorted(store.ids("closure"))
    verdicts = [v for v in store.records("verdict") if isinstance(v, Verdict)]
    actions = [a for a in store.records("action") if isinstance(a, Action)]
    facts = [f for f in store.records("fact") if isinstance(f, AcceptedFact)]
    assert verdicts and actions and len(closures) >= SCAN_AT
    assert store.verdicts_of(closures) == _pairs(verdicts, "closure")
    assert store.verdicts_of(closures[:3]) == {c: v for c, v in _pairs(verdicts, "closure").items() if c in closures[:3]}
    assert store.actions_of(v.id for v in verdicts) == _pairs(actions, "verdict")
    siblings = _siblings_truth(facts)
    assert store.fact_siblings([f.id for f in facts]) == siblings
    statuses = sorted((s.action, s.id) for s in store.records("action_status") if isinstance(s, ActionStatus))
    compensates = {a.id: a.compensates for a in actions}
    assert sorted((a, c, s.id) for a, c, s in store.action_statuses([a.id for a in actions])) == sorted(
        (a, compensates[a], s) for a, s in statuses)
    # Each closure's verdicts as the one-closure question gives them, and each verdict's actions.
    assert all(store.verdicts_of([c]).get(c, []) == store.verdicts_deciding(c) for c in closures)
    assert all(store.actions_of([v.id]).get(v.id, []) == store.actions_executing([v.id]) for v in verdicts)


def test_closures_verdicts_actions_and_fact_siblings_asked_at_once_are_what_the_records_say_on_both_stores(store):
    build(store, draw(SMALL), SMALL)
    _check_batched_questions(store)


def test_ladybug_answers_the_same_by_scanning_a_label_as_record_by_record(ladybug_store, monkeypatch):
    build(ladybug_store, draw(SMALL), SMALL)
    monkeypatch.setattr(questions, "SCAN_SHARE", 10**9)  # every list of at least SCAN_AT ids scans
    _check_batched_questions(ladybug_store)
    monkeypatch.setattr(questions, "SCAN_AT", 10**9)  # no list scans: one statement per id
    _check_batched_questions(ladybug_store)
