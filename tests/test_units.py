"""Amounts with units (issue 19, item 2, second half): a value may carry a unit or currency;
25 EUR and 25 USD are two values, arithmetic keeps the unit, and arithmetic across units is
refused, never a number. The oracles: the reference canonicaliser (rfc8785) for the ids a
value without a unit always had, Python's own arithmetic for totals.
"""

from __future__ import annotations

import hashlib
from datetime import datetime, timezone
from decimal import Decimal
from pathlib import Path

import pytest
import rfc8785
from hypothesis import given, settings
from hypothesis import strategies as st

from gaf.errors import InvalidArithmetic
from gaf.ledger import ingest
from gaf.projection.candidates import evaluate_over
from gaf.records import Agent, Claim, Projection, Proposition, Source, Statement
from gaf.types import Quantity

AT = datetime(2026, 7, 20, tzinfo=timezone.utc)
SOURCE = Source(key="receipts", name="receipts").id
OBSERVER = Agent(key="clerk", name="clerk", agent_type="person").id


def _claim(statements: list[dict]) -> Claim:
    return Claim(source=SOURCE, observer=OBSERVER, observed_at=AT, recorded_at=AT, transformation="api_export", statements=statements)


def _policy(*when: str, head: str = "within(?t, ?s)") -> Projection:
    scope = {"source": SOURCE, "subject": "*", "as_of": "2026-07-01T00:00:00Z", "valid": {"start": "2026-07-01", "end": "2026-08-01"}}
    return Projection(
        name="expenses", version=1, question="within the allowance?",
        trust=[{"source": SOURCE, "predicates": ["receipt", "cost"], "authoritative": True}],
        completeness=[scope | {"predicate": "receipt"}, scope | {"predicate": "cost"}],
        scope={"period": {"start": "2026-07-01", "end": "2026-08-01"}},
        conclusions=[head.split("(")[0]],
        derivation_rules=[{"name": head.split("(")[0], "version": 1, "head": head, "when": list(when)}],
    )  # fmt: skip


def _receipts(costs: list[tuple[Decimal, str]]) -> list[Claim]:
    return [
        _claim([{"subject": "trip:1", "predicate": "receipt", "object": f"r:{i}"},
                {"subject": f"r:{i}", "predicate": "cost", "value": amount, "currency": unit}])
        for i, (amount, unit) in enumerate(costs)
    ]  # fmt: skip


def test_a_currency_is_a_values_unit_and_25_eur_and_25_usd_are_two_propositions():
    eur = Statement.model_validate({"subject": "p:1", "predicate": "amount", "value": 25.00, "currency": "EUR"})
    usd = Statement.model_validate({"subject": "p:1", "predicate": "amount", "value": 25, "unit": "USD"})
    assert eur.unit == "EUR" and eur.proposition().target == Quantity(amount=25, unit="EUR")
    assert eur.proposition().id != usd.proposition().id
    assert eur.proposition().id == Statement.model_validate({"subject": "p:1", "predicate": "amount", "value": 25, "unit": "EUR"}).proposition().id


def test_a_value_without_a_unit_keeps_the_id_it_always_had():
    body = {"kind": "proposition", "predicate": "amount", "subject": "s", "value": 25}
    assert Proposition(subject="s", predicate="amount", value=25).id == "proposition:" + hashlib.sha256(rfc8785.dumps(body)).hexdigest()


def test_a_unit_without_a_number_is_refused_saying_what_goes_with_it():
    with pytest.raises(ValueError, match="a unit or currency goes with a numeric value"):
        Statement.model_validate({"subject": "p:1", "predicate": "memo", "value": "July rent", "currency": "EUR"})


amounts = st.decimals(min_value=0, max_value=10**6, places=2, allow_nan=False, allow_infinity=False)


@settings(max_examples=100)
@given(costs=st.lists(amounts, max_size=4, unique=True), allowance=amounts)
def test_a_sum_of_amounts_keeps_their_unit_and_is_what_python_adds_up(costs, allowance):
    policy = _policy("receipt(?t, ?any)", "?s = sum ?c over receipt(?t, ?r), cost(?r, ?c)", f"?s <= {allowance} EUR")
    evaluated = evaluate_over(policy, _receipts([(c, "EUR") for c in costs]), as_of=AT)
    found = {c.proposition.target for c in evaluated.candidates if c.proposition.predicate == "within"}
    total = sum(costs, Decimal(0))
    assert found == ({Quantity(amount=total, unit="EUR")} if costs and total <= allowance else set())


@pytest.mark.parametrize(
    ("when", "message"),
    [
        (["receipt(?t, ?any)", "?s = sum ?c over receipt(?t, ?r), cost(?r, ?c)"], "an aggregate over mixed units"),
        (["receipt(?t, ?r)", "cost(?r, ?c)", "?c <= 25 USD", "?s = ?c"], "cannot order .* EUR and 25 USD: mixed units"),
        (["receipt(?t, ?r)", "cost(?r, ?c)", "?s = ?c + 1"], r"mixed units: [0-9.]+ (EUR|USD) \+ 1"),
        (["receipt(?t, ?r)", "cost(?r, ?c)", "?s = ?c * ?c"], "multiplies two units"),
    ],
    ids=["sum-across-currencies", "ordering-across-currencies", "amount-plus-plain-number", "unit-times-unit"],
)
def test_arithmetic_across_units_is_refused_naming_the_rule(when, message):
    claims = _receipts([(Decimal("12.5"), "EUR"), (Decimal("7.5"), "USD")])
    with pytest.raises(InvalidArithmetic, match=message) as info:
        evaluate_over(_policy(*when), claims, as_of=AT)
    assert info.value.where == "within@1"


def test_amounts_divide_into_a_plain_ratio_and_scale_by_plain_numbers():
    claims = _receipts([(Decimal("12.5"), "EUR")])
    policy = _policy("receipt(?t, ?r)", "cost(?r, ?c)", "?s = ?c * 2 / (?c / 2)")
    (within,) = [c for c in evaluate_over(policy, claims, as_of=AT).candidates if c.proposition.predicate == "within"]
    assert within.proposition.target == 4  # EUR * 2 / (EUR / 2): EUR over EUR, a plain number


CLAIMS = """
- {kind: agent, key: clerk, name: A clerk, agent_type: person}
- {kind: source, key: card, name: The card statement}
- kind: claim
  source: card
  observer: clerk
  observed_at: 2026-07-02T00:00:00Z
  transformation: api_export
  statements:
    - {subject: "line:1", predicate: amount, value: 25.00, currency: EUR}
    - {subject: "line:2", predicate: amount, value: 1234567.895, unit: JPY}
"""


@pytest.mark.parametrize("kind", ["ladybug", "neo4j"])
def test_an_amount_with_its_currency_is_stored_and_read_back_on_both_stores(kind, request, tmp_path: Path):
    store = request.getfixturevalue(f"{kind}_store")
    path = tmp_path / "claims.yaml"
    path.write_text(CLAIMS, encoding="utf-8")
    ingest(store, path, recorded_at=AT)
    (claim,) = store.find(Claim)
    assert [(s.value, s.unit) for s in claim.statements] == [(25, "EUR"), (Decimal("1234567.895"), "JPY")]
    assert ingest(store, path, recorded_at=AT).write.written == []  # the same file again: a no-op


def test_a_csv_claim_file_carries_a_currency_column(ladybug_store, tmp_path: Path):
    (tmp_path / "claims.yaml").write_text(CLAIMS.split("- kind: claim")[0], encoding="utf-8")
    ingest(ladybug_store, tmp_path / "claims.yaml", recorded_at=AT)
    (source,) = ladybug_store.find("source", key="card")
    (clerk,) = ladybug_store.find("agent", key="clerk")
    csv = tmp_path / "card.csv"
    csv.write_text("source,observer,observed_at,transformation,subject,predicate,value,currency\n"
                   f"{source.id},{clerk.id},2026-07-02T00:00:00Z,api_export,line:3,amount,19.90,EUR\n", encoding="utf-8")  # fmt: skip
    ingest(ladybug_store, csv, recorded_at=AT)
    (claim,) = ladybug_store.find(Claim)
    assert [(s.value, s.unit) for s in claim.statements] == [(Decimal("19.9"), "EUR")]
