"""One value per subject: a predicate the policy declares functional is false for every value
but the one accepted, and two accepted values are a conflict the conflict rules settle.

The oracle is a plain reading of the policy's rules over what each source said
(``tests.worlds.one_value_world``), written out here without the weighing code.
"""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings

from gaf.derive import Truth, holds
from gaf.errors import UnestablishedPredicate
from gaf.policies import read_policy
from gaf.projection.candidates import evaluate_over
from gaf.rules import parse_clause
from tests.worlds import AT, PAYMENT, OneValueWorld, one_value_world


def _expected(world: OneValueWorld, value: int) -> Truth:
    """What ``amount(payment:1, value)`` is, by the policy's rules read plainly."""
    accepted = {v for v, voice in world.said if voice in ("authoritative", "trusted")}
    authoritative = {v for v, voice in world.said if voice == "authoritative"}
    if len(accepted) > 1:  # a conflict: the authoritative source's value wins when there is one
        final = authoritative if len(authoritative) == 1 else set()
    else:
        final = accepted
    if value in final:
        return Truth.TRUE
    if final:
        return Truth.FALSE  # another value is the one accepted
    voice = dict(world.said).get(value)
    return Truth.FALSE if voice == "denied" else Truth.UNKNOWN


@settings(max_examples=150)
@given(world=one_value_world())
@example(world=OneValueWorld(((900 % 4, "authoritative"),)))
@example(world=OneValueWorld(((0, "authoritative"), (1, "trusted"))))
@example(world=OneValueWorld(((0, "trusted"), (1, "trusted"))))
@example(world=OneValueWorld(((0, "authoritative"), (1, "authoritative"), (2, "contested"))))
def test_a_one_valued_predicate_is_false_for_every_value_but_the_accepted_one_and_a_conflict_is_settled_or_unknown(world):
    evaluated = evaluate_over(world.policy(), world.claims(), as_of=AT)
    facts = evaluated.fact_base()
    for value in range(4):
        found, _, _ = holds([parse_clause(f"amount(?subject, {value})")], facts, {"?subject": PAYMENT})
        assert found == _expected(world, value), (value, world)
    accepted = [c.proposition.value for c in evaluated.candidates if c.proposition.predicate == "amount"]
    assert len(accepted) <= 1  # never silently both


def test_the_conclusion_that_another_value_is_false_records_the_accepted_fact_it_rests_on():
    world = OneValueWorld(((900, "authoritative"),))
    rules = [{"name": "short", "head": "short(?p)", "when": ["payment(?p)", "not amount(?p, 1000)"]}]
    evaluated = evaluate_over(world.policy(rules), world.claims(), as_of=AT)
    (short,) = evaluated.candidate("short", PAYMENT)
    (accepted,) = [ev for ev in evaluated.evaluations if evaluated.propositions[ev.proposition].value == 900]
    assert accepted.id in short.justification.premises


def test_two_values_the_conflict_rules_cannot_settle_are_both_unknown_with_the_reason():
    world = OneValueWorld(((900, "trusted"), (1000, "trusted")))
    evaluated = evaluate_over(world.policy(), world.claims(), as_of=AT)
    amounts = [ev for ev in evaluated.evaluations if evaluated.propositions[ev.proposition].predicate == "amount"]
    assert {ev.outcome.value for ev in amounts} == {"unknown"}
    assert all("amount takes one value, and 1000, 900 are each accepted" in ev.reason for ev in amounts)


def test_a_one_value_declaration_of_a_predicate_no_source_states_is_refused(ladybug_store, tmp_path):
    from tests.conftest import RENT
    from tests.rentcase import load

    load(ladybug_store)
    text = (RENT / "policy.yaml").read_text().replace("name: rent-delinquency", "name: other\nfunctional: [ammount]")
    path = tmp_path / "policy.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(UnestablishedPredicate, match="functional names 'ammount'.*did you mean amount"):
        read_policy(ladybug_store, path)
