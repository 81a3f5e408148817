"""Closures and replay: the rent case's verdicts, on both stores, and every layer of replay."""

from __future__ import annotations

import pytest

from gaf.closure import close, replay
from gaf.errors import UnknownReference
from gaf.policies import read_rules
from gaf.verdict import judge
from tests.conftest import RENT
from tests.rentcase import AFTER_E, BEFORE_E, PAYMENT, RENT_JULY, close_both, tamper


def test_the_first_rent_closure_is_undetermined_and_names_the_unknown_allocation(store):
    c1, _ = close_both(store)
    assert c1.verdict.label == "undetermined" and (c1.verdict.low, c1.verdict.high) == (-1.0, 1.0)
    assert f"allocated_to({PAYMENT}, {RENT_JULY})" in c1.verdict.trace["would_settle"]
    warrant = next(r for r in c1.verdict.trace["rules"] if r["name"] == "paid-by-allocated-transfer")
    assert warrant["activation"] == "unknown" and warrant["strength"] == "not applicable"


def test_after_claim_e_a_new_closure_says_paid_and_supersedes_the_first(store):
    c1, c2 = close_both(store)
    assert (c2.verdict.label, c2.verdict.strength) == ("paid", 1.0)
    assert c2.closure.supersedes == [c1.closure.id]
    assert store.get(c1.closure.id) == c1.closure  # the old closure stays readable
    rows = store.read("MATCH (n:Closure)-[:SUPERSEDES]->(o:Closure) RETURN n.id AS new, o.id AS old")
    assert rows == [{"new": c2.closure.id, "old": c1.closure.id}]


def test_the_closure_freezes_what_a_replay_needs(store):
    c1, _ = close_both(store)
    closure = c1.closure
    assert closure.projection_version == 1 and closure.rules_version == 1
    assert closure.engine == "gaf-hcategoriser/2" and closure.canonicalisation == "RFC8785-JCS+sha256"
    assert closure.completeness and closure.as_of == BEFORE_E and closure.subject == RENT_JULY
    assert {rel for rel, _ in store.edges_from(closure.id)} >= {"CLOSES", "UNDER", "JUDGED_BY", "ASSUMES_COMPLETE"}


def test_closures_and_verdicts_are_the_same_records_on_both_stores(ladybug_store, neo4j_store):
    ids = []
    for store in (ladybug_store, neo4j_store):
        c1, c2 = close_both(store)
        ids.append((c1.closure.id, c1.verdict.id, c2.closure.id, c2.verdict.id))
        assert replay(store, c1.closure.id).identical and replay(store, c2.closure.id).identical
    assert ids[0] == ids[1]


def test_replay_of_an_untouched_closure_is_identical(store):
    _, c2 = close_both(store)
    report = replay(store, c2.closure.id)
    assert report.identical and report.layers == [] and report.gaf == c2.closure.gaf
    assert report.verdict["label"] == "paid"


def _layers(report) -> list[str]:
    return [layer["layer"] for layer in report.layers]


def test_a_changed_claim_is_reported_as_the_inputs_layer(store):
    _, c2 = close_both(store)
    (claim_e,) = [c for c in store.find("claim") if any(s.predicate == "allocated_to" for s in c.statements)]
    tamper(store, claim_e.id, scope="edited after the decision")
    report = replay(store, c2.closure.id)
    assert _layers(report) == ["inputs"] and claim_e.id in report.layers[0]["detail"]


def test_a_changed_policy_is_reported_as_the_projection_policy_layer(store):
    _, c2 = close_both(store)
    tamper(store, c2.closure.projection, purpose="quietly changed")
    assert _layers(replay(store, c2.closure.id)) == ["projection policy"]


def test_a_changed_accepted_fact_is_reported_as_the_accepted_facts_layer(store):
    _, c2 = close_both(store)
    gaf = store.get(c2.closure.gaf)
    fact = store.get(gaf.facts[0])
    tamper(store, fact.id, justification=fact.justification[:-1] + ("0" if fact.justification[-1] != "0" else "1"))
    assert "accepted facts" in _layers(replay(store, c2.closure.id))


def test_changed_rules_are_reported_as_the_rules_layer(store):
    _, c2 = close_both(store)
    tamper(store, c2.closure.rules, aggregation="min")
    assert _layers(replay(store, c2.closure.id)) == ["rules"]


def test_another_engine_is_reported_as_the_runtime_engine_layer(store):
    _, c2 = close_both(store)
    assert _layers(replay(store, c2.closure.id, engine="gaf-hcategoriser/0")) == ["runtime/engine"]

    def defective(rules, facts, *, subject):
        j = judge(rules, facts, subject=subject)
        return type(j)("inconclusive", 0.0, 0.0, 0.0, j.rules, j.settles, j.engine)

    report = replay(store, c2.closure.id, judge_with=defective)
    assert _layers(report) == ["runtime/engine"] and "verdict is now" in report.layers[0]["detail"]


def test_closing_a_gaf_that_does_not_exist_writes_nothing(store):
    rules = read_rules(RENT / "verdict-rules.yaml")
    with pytest.raises(UnknownReference, match="no GAF"):
        close(store, "gaf:" + "0" * 64, rules, subject=RENT_JULY, as_of=AFTER_E, closed_at=AFTER_E)
    assert store.counts() == {}
