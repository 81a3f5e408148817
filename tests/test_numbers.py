"""Numbers are exact decimals, never floats — and no id written before changes (issue 19, item 2).

The oracles are outside gaf: `rfc8785` (the reference canonicaliser) for what a float's
bytes always were, Python's `decimal` for what a comparison of two written numbers is.
"""

from __future__ import annotations

import hashlib
import json
from datetime import datetime, timezone
from decimal import Decimal
from pathlib import Path

import pytest
import rfc8785
from hypothesis import given, settings
from hypothesis import strategies as st

from gaf.derive import Entry, Truth, evaluate_rules
from gaf.ledger import ingest
from gaf.records import Claim, Proposition, statement_text
from gaf.rules import DerivationRule
from gaf.types import DECIMAL_TAG, number_text

AT = datetime(2026, 7, 15, tzinfo=timezone.utc)


def _old_id(value: float) -> str:
    """The id a proposition with this float value had: rfc8785 over the body with the float."""
    body = {"kind": "proposition", "predicate": "amount", "subject": "s", "value": value}
    return "proposition:" + hashlib.sha256(rfc8785.dumps(body)).hexdigest()


@settings(max_examples=300)
@given(st.floats(allow_nan=False, allow_infinity=False, width=64))
def test_a_float_value_keeps_the_id_it_always_had(value):
    assert Proposition(subject="s", predicate="amount", value=value).id == _old_id(value)


@pytest.mark.parametrize("written", ["25", "25.0", "25.00", "2.5e1"])
def test_25_25_0_and_25_00_are_one_value_with_one_id(written):
    p = Proposition.model_validate({"subject": "s", "predicate": "amount", "value": Decimal(written)})
    assert p.value == 25 and type(p.value) is int
    assert p.id == Proposition(subject="s", predicate="amount", value=25).id


def test_a_decimal_no_double_carries_is_kept_exactly_and_spelled_as_a_tagged_string():
    exact = Decimal("0.1000000000000000000001")
    p = Proposition(subject="s", predicate="amount", value=exact)
    assert p.value == exact and p.value != Decimal("0.1")
    assert f'"value":{{"{DECIMAL_TAG}":"0.1000000000000000000001"}}'.encode() in p.body
    assert Proposition.model_validate_json(p.body).value == exact  # read back from its own body
    assert p.id != Proposition(subject="s", predicate="amount", value=Decimal("0.1")).id
    assert statement_text("amount", "s", None, exact) == "amount(s, 0.1000000000000000000001)"


@pytest.mark.parametrize("bad", [float("inf"), float("nan"), Decimal("Infinity"), {DECIMAL_TAG: "12,5"}])
def test_a_number_that_is_not_finite_or_not_a_decimal_is_refused(bad):
    with pytest.raises(ValueError):
        Proposition(subject="s", predicate="amount", value=bad)


CLAIMS = """
- {{kind: agent, key: clerk, name: A clerk, agent_type: person}}
- {{kind: source, key: ledger, name: The ledger}}
- kind: claim
  source: ledger
  observer: clerk
  observed_at: 2026-07-02T00:00:00Z
  recorded_at: 2026-07-02T00:00:00Z
  transformation: message
  statements:
    - {{subject: "payment:1", predicate: amount, value: {a}}}
    - {{subject: "payment:2", predicate: amount, value: {b}}}
"""


def _claim_file(path: Path, a: str, b: str) -> Path:
    """The claim of CLAIMS with these two numbers as written, in YAML or as JSON lines."""
    if path.suffix == ".yaml":
        path.write_text(CLAIMS.format(a=a, b=b), encoding="utf-8")
    else:
        import yaml

        items = yaml.safe_load(CLAIMS.format(a='"A"', b='"B"'))
        lines = [json.dumps(item, default=str).replace('"A"', a).replace('"B"', b) for item in items]
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("suffix", [".yaml", ".jsonl"])
@pytest.mark.parametrize("kind", ["ladybug", "neo4j"])
def test_numbers_written_in_a_claim_file_are_stored_and_read_back_exactly_on_both_stores(kind, suffix, request, tmp_path):
    store = request.getfixturevalue(f"{kind}_store")
    ingest(store, _claim_file(tmp_path / f"claims{suffix}", "12345678901234567.89", "25.00"), recorded_at=AT)
    (claim,) = store.find(Claim)
    assert [s.value for s in claim.statements] == [Decimal("12345678901234567.89"), 25]
    # 25.00, 25.0 and 25 are one value: the same file with 25 is the same claim, a no-op
    again = _claim_file(tmp_path / f"again{suffix}", "12345678901234567.89", "25")
    assert ingest(store, again, recorded_at=AT).write.written == []


def _facts(value: Decimal):
    class Facts:
        entries = [Entry(("amount", "p", value), Truth.TRUE, "e0")]

        def match(self, predicate, subject, obj):
            return [e for e in self.entries if e.ground[0] == predicate and subject in (None, e.ground[1])
                    and obj in (None, e.ground[2])]  # fmt: skip

        def closed(self, predicate, subject, obj):
            return None

    return Facts()


decimals = st.decimals(allow_nan=False, allow_infinity=False, places=25, min_value=-10**6, max_value=10**6)


@settings(max_examples=200)
@given(value=decimals, bound=decimals, op=st.sampled_from(["<", "<=", ">", ">=", "==", "!="]))
def test_a_comparison_in_a_rule_is_exact_as_pythons_decimal_says(value, bound, op):
    rule = DerivationRule.model_validate(
        {"name": "big", "version": 1, "head": "big(?P)", "when": ["amount(?P, ?A)", f"?A {op} {number_text(Proposition(subject='s', predicate='x', value=bound).value)}"]}
    )
    got = evaluate_rules([rule], _facts(Proposition(subject="p", predicate="amount", value=value).value))
    truth = {"<": value < bound, "<=": value <= bound, ">": value > bound, ">=": value >= bound,
             "==": value == bound, "!=": value != bound}[op]  # fmt: skip
    assert (got.truth(("big", "p", None)) == Truth.TRUE) == truth


@pytest.mark.parametrize("amount", [Decimal("25.00"), Decimal("0.1"), Decimal("123456789.123456789"), 7])
def test_an_amount_column_holds_the_nearest_double_while_the_body_keeps_the_exact_decimal(amount):
    # The oracle is float() of the amount written by hand, not the record's own conversion.
    from gaf.records import Agent, Grant, parse_body

    agent = Agent(key="clerk", name="clerk", agent_type="person").id
    grant = Grant(agent=agent, action_kind="pay", max_amount=amount, granted_by=agent,
                  granted_at=datetime(2026, 7, 1, tzinfo=timezone.utc))  # fmt: skip
    column = grant.props()["max_amount"]
    assert isinstance(column, (int, float)) and column == float(amount)
    assert list(grant.props()) == list(Grant.COLUMNS)
    assert parse_body(grant.body, grant.id).max_amount == Decimal(amount)  # exact, and read back
