"""The verdict engine: the weighted h-Categoriser and Toulmin rules over a GAF."""

from __future__ import annotations

import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from gaf.derive import Entry, Truth
from gaf.projection import PolicyFacts
from gaf.records import Projection, VerdictRules
from gaf.projection import evaluate_over
from gaf.verdict import UNDETERMINED, Scores, _fixed_point, h_categoriser, judge, verdict_of
from tests.conftest import NOW
from tests.worlds import world

# ---------------------------------------------------------------------- h_categoriser


def test_an_unattacked_argument_keeps_its_weight():
    assert h_categoriser({"a": 0.7}, []) == {"a": 0.7}


def test_qualifiers_are_the_initial_weights():
    acc = h_categoriser({"w": 0.5, "r": 1.0}, [("r", "w")])
    assert acc == {"r": 1.0, "w": 0.25}


def test_an_attacker_of_an_attacker_restores_the_original():
    alone = h_categoriser({"w": 1.0, "r": 1.0}, [("r", "w")])["w"]
    restored = h_categoriser({"w": 1.0, "r": 1.0, "rr": 1.0}, [("r", "w"), ("rr", "r")])["w"]
    assert alone == 0.5 and restored == pytest.approx(2 / 3) and restored > alone


def test_strict_arguments_ignore_their_attackers():
    assert h_categoriser({"w": 1.0, "r": 1.0}, [("r", "w")], strict={"w"})["w"] == 1.0


def test_two_mutual_attackers_reach_the_golden_ratio_conjugate():
    acc = h_categoriser({"a": 1.0, "b": 1.0}, [("a", "b"), ("b", "a")])
    assert acc["a"] == pytest.approx((math.sqrt(5) - 1) / 2, abs=1e-11) and acc["a"] == acc["b"]


def test_bad_inputs_raise_value_error():
    with pytest.raises(ValueError, match="unknown argument"):
        h_categoriser({"a": 1.0}, [("a", "ghost")])
    with pytest.raises(ValueError, match="given twice"):
        h_categoriser({"a": 1.0, "b": 1.0}, [("a", "b"), ("a", "b")])
    with pytest.raises(ValueError, match=r"in \[0, 1\]"):
        h_categoriser({"a": 1.5}, [])


def test_verdict_maps_strength_onto_minus_one_to_one():
    assert (verdict_of(1.0), verdict_of(0.5), verdict_of(0.0)) == (1.0, 0.0, -1.0)


@st.composite
def graphs(draw, acyclic: bool = False):
    n = draw(st.integers(1, 9))
    names = [f"a{i}" for i in range(n)]
    weights = {a: draw(st.floats(0, 1)) for a in names}
    pairs = [(a, b) for i, a in enumerate(names) for j, b in enumerate(names) if (i < j if acyclic else i != j)]
    attacks = draw(st.lists(st.sampled_from(pairs), unique=True, max_size=15)) if pairs else []
    return weights, attacks


@settings(max_examples=200, deadline=None)
@given(graphs())
def test_every_strength_is_in_zero_one(graph):
    weights, attacks = graph
    assert all(0.0 <= v <= 1.0 for v in h_categoriser(weights, attacks).values())


@settings(max_examples=200, deadline=None)
@given(graphs(acyclic=True))
def test_the_acyclic_one_pass_equals_the_fixed_point(graph):
    weights, attacks = graph
    attackers = {a: sorted(x for x, y in attacks if y == a) for a in weights}
    fixed = _fixed_point(weights, attackers, 1e-14)
    one_pass = h_categoriser(weights, attacks)
    assert all(one_pass[a] == pytest.approx(fixed[a], abs=1e-12) for a in weights)


@settings(max_examples=200, deadline=None)
@given(graphs(), st.data())
def test_adding_an_attacker_never_raises_the_attacked_strength(graph, data):
    weights, attacks = graph
    target = data.draw(st.sampled_from(sorted(weights)))
    new = {**weights, "new": data.draw(st.floats(0, 1))}
    before = h_categoriser(weights, attacks)[target]
    after = h_categoriser(new, [*attacks, ("new", target)])[target]
    assert after <= before + 1e-12


@settings(max_examples=200, deadline=None)
@given(graphs(), st.data())
def test_raising_an_arguments_own_weight_never_lowers_its_strength(graph, data):
    weights, attacks = graph
    target = data.draw(st.sampled_from(sorted(weights)))
    higher = {**weights, target: data.draw(st.floats(weights[target], 1))}
    assert h_categoriser(higher, attacks)[target] >= h_categoriser(weights, attacks)[target] - 1e-12


@settings(max_examples=200, deadline=None)
@given(graphs(), st.randoms())
def test_results_do_not_depend_on_input_order(graph, rnd: random.Random):
    weights, attacks = graph
    shuffled_w = dict(rnd.sample(list(weights.items()), len(weights)))
    shuffled_a = rnd.sample(attacks, len(attacks))
    assert h_categoriser(shuffled_w, shuffled_a) == h_categoriser(weights, attacks)


# ---------------------------------------------------------------------- rules over a GAF

POLICY = Projection(name="p", version=1, question="q")


def facts(**truths: str) -> PolicyFacts:
    """A fact base of unary facts on subject s: name=true|false|unknown."""
    value = {"true": Truth.TRUE, "false": Truth.FALSE, "unknown": Truth.UNKNOWN}
    return PolicyFacts(POLICY, [Entry((p, "s", None), value[t], f"e-{p}") for p, t in truths.items()], NOW)


def rules(*rs: dict, defeats=(), aggregation="max") -> VerdictRules:
    return VerdictRules(
        name="r", version=1, conclusion="c", rules=list(rs), aggregation=aggregation,
        defeats=[{"attacker": a, "attacked": b} for a, b in defeats],
        bands=[{"label": "yes", "low": 0.5, "high": 1}, {"label": "no", "low": -1, "high": -0.5}],
    )  # fmt: skip


def r(name: str, role: str = "warrant", q: float = 1.0, strength: str = "defeasible", when: str | None = None) -> dict:
    return {"name": name, "role": role, "qualifier": q, "strength": strength, "condition": [when or f"{name}(?subject)"]}


def test_a_warrant_that_fires_establishes_the_conclusion():
    j = judge(rules(r("w")), facts(w="true"), subject="s")
    assert (j.label, j.strength) == ("yes", 1.0)


def test_no_warrant_fired_means_not_established_and_rules_are_not_applicable():
    j = judge(rules(r("w")), facts(w="false"), subject="s")
    assert (j.label, j.strength) == ("no", -1.0)
    assert j.rules[0].strength is None and j.rules[0].to_dict()["strength"] == "not applicable"


def test_a_rebuttal_halves_the_warrant_and_a_strict_warrant_ignores_it():
    defeasible = judge(rules(r("w"), r("x", "rebuttal"), defeats=[("x", "w")]), facts(w="true", x="true"), subject="s")
    assert (defeasible.label, defeasible.strength) == ("inconclusive", 0.0)
    strict = judge(rules(r("w", strength="strict"), r("x", "rebuttal"), defeats=[("x", "w")]), facts(w="true", x="true"), subject="s")
    assert strict.strength == 1.0


def test_a_defeater_only_attacks():
    j = judge(rules(r("w"), r("d", "defeater", 0.5, "defeater"), defeats=[("d", "w")]), facts(w="true", d="true"), subject="s")
    assert j.strength == pytest.approx(2 * (1 / 1.5) - 1)
    alone = judge(rules(r("w"), r("d", "defeater", 0.5, "defeater"), defeats=[("d", "w")]), facts(w="false", d="true"), subject="s")
    assert alone.strength == -1.0  # a defeater alone establishes nothing


def test_an_exception_to_an_exception_reinstates_the_warrant():
    rs = rules(r("w"), r("x", "rebuttal"), r("y", "rebuttal"), defeats=[("x", "w"), ("y", "x")])
    assert judge(rs, facts(w="true", x="true", y="true"), subject="s").strength == pytest.approx(2 * (2 / 3) - 1)


def test_cyclic_rebuttals_are_judged_not_refused():
    rs = rules(r("w"), r("x", "rebuttal"), r("y", "rebuttal"), defeats=[("x", "w"), ("y", "x"), ("x", "y")])
    j = judge(rs, facts(w="true", x="true", y="true"), subject="s")
    phi = (math.sqrt(5) - 1) / 2
    assert j.strength == pytest.approx(2 * (1 / (1 + phi)) - 1, abs=1e-11)


def test_several_warrants_combine_under_the_declared_aggregation():
    two = (r("w1", q=0.9), r("w2", q=0.3))
    f = facts(w1="true", w2="true")
    assert judge(rules(*two, aggregation="max"), f, subject="s").strength == pytest.approx(0.8)
    assert judge(rules(*two, aggregation="min"), f, subject="s").strength == pytest.approx(-0.4)
    assert judge(rules(*two, aggregation="mean"), f, subject="s").strength == pytest.approx(0.2)
    assert judge(rules(*reversed(two), aggregation="first"), f, subject="s").strength == pytest.approx(-0.4)


def test_an_unknown_premise_gives_an_interval_and_undetermined_with_what_would_settle_it():
    j = judge(rules(r("w")), facts(w="unknown"), subject="s")
    assert (j.label, j.low, j.high) == (UNDETERMINED, -1.0, 1.0)
    assert j.settles == ("w(s)",) and j.rules[0].activation == "unknown"


def test_an_unknown_that_cannot_change_the_label_leaves_it_determined():
    rs = rules(r("w", strength="strict"), r("x", "rebuttal", 0.2), defeats=[("x", "w")])
    j = judge(rs, facts(w="true", x="unknown"), subject="s")
    assert (j.label, j.low, j.high) == ("yes", 1.0, 1.0)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"defeats": [{"attacker": "ghost", "attacked": "w"}]}, "unknown rule 'ghost'"),
        ({"rules": [r("w", q=1.5)]}, "less than or equal to 1"),
        ({"rules": [r("w", "defeater", strength="strict")]}, "strict and a defeater"),
        ({"bands": [{"label": "a", "low": 0, "high": 1}, {"label": "b", "low": 0.5, "high": 0.7}]}, "overlap"),
    ],
)
def test_malformed_rule_sets_are_refused(change, message):
    base = {"name": "r", "version": 1, "conclusion": "c", "rules": [r("w")]}
    with pytest.raises(ValidationError, match=message):
        VerdictRules.model_validate(base | change)


def test_the_array_iteration_for_large_graphs_agrees_with_the_exact_one(monkeypatch):
    import gaf.verdict as engine

    rnd = random.Random(7)
    weights = {f"a{i}": rnd.random() for i in range(300)}
    attacks = {(f"a{rnd.randrange(300)}", f"a{i}") for i in range(300) for _ in range(3)}
    attacks = sorted((a, b) for a, b in attacks if a != b)
    exact = h_categoriser(weights, attacks)
    monkeypatch.setattr(engine, "VECTOR_THRESHOLD", 10)
    vectorised = h_categoriser(weights, attacks)
    assert max(abs(exact[a] - vectorised[a]) for a in weights) < 1e-11


@given(st.lists(world(), min_size=1, max_size=4))
def test_judging_with_shared_weighings_gives_what_judging_afresh_gives(worlds):
    """``judge(scores=…)``, as a confirmation judges many closures, against ``judge`` alone: one
    memo across worlds with different rule sets (keyed by the rules' id) and a second pass
    answered from it give every judgement field for field."""
    scores: Scores = {}
    for _ in range(2):
        for w in worlds:
            facts = evaluate_over(w.policy, w.claims, as_of=w.closure.as_of).fact_base()
            kept = judge(w.rules, facts, subject=w.closure.subject, scores=scores)
            assert kept == judge(w.rules, facts, subject=w.closure.subject)
    assert {rules_id for rules_id, _ in scores} <= {w.rules.id for w in worlds}
