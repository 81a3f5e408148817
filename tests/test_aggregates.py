"""Arithmetic and aggregates in rules: exact over closed scopes, honest bounds over open ones.

The oracle is a plain Python computation over every completion of a random quantity world
(``tests.worlds.quantity_world``): each atom that is unknown either holds or does not, and
where a scope is open, members nobody stated may exist, with any value the policy allows.
A comparison the engine calls true must hold in every completion, false in none, and
unknown must mean some completions go each way — never false from missing data.
"""

from __future__ import annotations

import decimal
import itertools
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

from gaf import arith
from gaf.closure import close
from gaf.derive import Entry, EntryIndex, Truth, evaluate_rules, holds
from gaf.errors import InvalidArithmetic, InvalidRecord, RuleError
from gaf.ledger import ingest
from gaf.policies import publish, read_policy, read_rules
from gaf.projection import project
from gaf.projection.candidates import evaluate_over
from gaf.projection.cone import program_of
from gaf.projection.facts import PolicyFacts
from gaf.records import Derivation
from gaf.rules import DerivationRule, compile_rules, parse_clause
from gaf.types import number_text, to_number
from tests.conftest import NOW
from tests.test_rule_program import Facts  # a plain fact base: the given atoms true, every scope open
from tests.worlds import AT, ORDER, GroupedWorld, MemberWorld, QuantityWorld, grouped_world, member_world, quantity_world

#: An unstated member's value, as large as no threshold reaches: the extremes decide every comparison.
HUGE = 10**6

#: The aggregates checked, as the text of one clause: each reads the same members.
AGGREGATES = {
    "sum": "?t = sum ?q over delivered(?d, ?o), qty(?d, ?q)",
    "count": "?t = count over delivered(?d, ?o)",
    "max": "?t = max ?q over delivered(?d, ?o), qty(?d, ?q)",
    "min": "?t = min ?q over delivered(?d, ?o), qty(?d, ?q)",
}


def _rules(threshold: int) -> list[dict[str, Any]]:
    return [
        {"name": f"{kind}_{name}", "version": 1, "head": f"{kind}_{name}(?o)",
         "when": ["order(?o)", clause, f"?t {op} {threshold}"]}
        for kind, clause in AGGREGATES.items() for name, op in (("ge", ">="), ("le", "<="))
    ]  # fmt: skip


def _choices(status: str, is_open: bool) -> list[bool]:
    """Whether an atom holds, in the completions its status allows."""
    if status == "accepted":
        return [True]
    if status == "unknown":
        return [True, False]
    if status == "absent" and is_open:
        return [True, False]  # unstated and open: only an unstated member stands for it (see _extras)
    return [False]


def _completions(world: QuantityWorld, kind: str) -> list[list[int] | None]:
    """Every completion's members' values (count: one per delivery), by plain enumeration.

    A delivery stated as absent in an open scope is not found by the rule at all: what it
    could add is what an unstated member adds, so it enters through the extras only."""
    delivered_open = "delivered" not in world.closed
    qty_open = "qty" not in world.closed
    per_delivery = []
    for k, status in enumerate(world.delivered):
        options: list[list[int]] = []
        for is_in in _choices(status, False) if status != "absent" else [False]:
            if not is_in:
                options.append([])
                continue
            if kind == "count":
                options.append([1])
                continue
            picks = [[v] if s == "accepted" else [v, None] if s == "unknown" else [None] for v, s in world.quantities[k]]
            for chosen in itertools.product(*picks) if picks else [()]:
                options.append([v for v in chosen if v is not None])
        per_delivery.append(options)
    can_be_in = any(s in ("accepted", "unknown") for s in world.delivered)
    extra = delivered_open or (kind != "count" and qty_open and can_be_in)
    extras: list[list[int]] = [[]]
    if extra:
        if kind in ("sum", "count"):
            signed = world.signed or kind == "count"
            extras += [[HUGE]] + ([] if signed else [[-HUGE]])
        else:
            extras += [[HUGE], [-HUGE]]
    out: list[list[int] | None] = []
    for parts in itertools.product(*per_delivery) if per_delivery else [()]:
        for more in extras:
            out.append([v for part in parts for v in part] + more)
    return out


def _value(kind: str, members: list[int]) -> int | None:
    if kind == "sum":
        return sum(members)
    if kind == "count":
        return len(members) if HUGE not in members else HUGE
    if not members:
        return None
    return max(members) if kind == "max" else min(members)


def _oracle(world: QuantityWorld, kind: str, op: str, threshold: int) -> Truth:
    held = []
    for members in _completions(world, kind):
        value = _value(kind, members or [])
        held.append(value is not None and (value >= threshold if op == "ge" else value <= threshold))
    return Truth.TRUE if all(held) else Truth.FALSE if not any(held) else Truth.UNKNOWN


def _engine(world: QuantityWorld, threshold: int) -> dict[str, Truth]:
    policy = world.policy(_rules(threshold))
    evaluated = evaluate_over(policy, world.claims(), as_of=AT)
    out = {}
    for rule in policy.derivation_rules:
        predicate = rule.head.predicate
        if evaluated.candidate(predicate, ORDER):
            out[predicate] = Truth.TRUE
        elif any(p.predicate == predicate and p.subject == ORDER for p in evaluated.unresolved):
            out[predicate] = Truth.UNKNOWN
        else:
            out[predicate] = Truth.FALSE
    return out


def _answers(world: QuantityWorld, threshold: int) -> list[tuple[str, Truth, Truth]]:
    """Each aggregate rule's answer, gaf's and every completion's: (rule, found, expected)."""
    found = _engine(world, threshold)
    return [(f"{kind}_{op}", found[f"{kind}_{op}"], _oracle(world, kind, op, threshold)) for kind in AGGREGATES for op in ("ge", "le")]


@settings(max_examples=150)
@given(world=quantity_world(), threshold=st.integers(-2, 16))
@example(world=QuantityWorld(("accepted", "accepted"), (((5, "accepted"),), ((7, "accepted"),)), frozenset(), True), threshold=12)
@example(world=QuantityWorld(("accepted",), (((5, "accepted"), (3, "unknown")),), frozenset({"delivered", "qty"}), False), threshold=6)
@example(world=QuantityWorld((), (), frozenset({"delivered"}), True), threshold=0)
# Found by the random profile: one unknown delivery with two accepted quantities, 0 and 1, brings
# both or neither, so the max is 1 or there is none: `max <= 0` is false, not unknown.
@example(world=QuantityWorld(("unknown", "accepted"), (((0, "accepted"), (1, "accepted")), ()), frozenset({"delivered", "qty"}), False),
         threshold=0)  # fmt: skip
# The same for a sum: -3 and 5 come together or not at all, so the sum is 2 or 0, never below 0.
@example(world=QuantityWorld(("unknown",), (((-3, "accepted"), (5, "accepted")),), frozenset({"delivered", "qty"}), False), threshold=0)
def test_an_aggregate_is_exact_over_closed_scopes_and_a_bound_every_completion_respects_over_open_ones(world, threshold):
    for rule, found, expected in _answers(world, threshold):
        assert found == expected, (rule, threshold, world)


@settings(max_examples=100)
@given(world=quantity_world(), threshold=st.integers(-2, 16))
@example(world=QuantityWorld(("unknown",), (((-3, "accepted"), (5, "accepted")),), frozenset({"delivered", "qty"}), False), threshold=0)
def test_past_the_completions_it_evaluates_an_aggregate_is_less_precise_but_never_wrong(world, threshold):
    """With no completion evaluated (``COMPLETED_AT_MOST`` 0: each member that might hold taken on
    its own), an aggregate's comparison may be unknown where every completion agrees, but it is
    never true or false where some completion says otherwise."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(arith, "COMPLETED_AT_MOST", 0)
        answers = _answers(world, threshold)
    for rule, found, expected in answers:
        assert found in (expected, Truth.UNKNOWN), (rule, threshold, world)


@settings(max_examples=150)
@given(world=member_world())
# Pairs of members on one proposition each (-3 and 5: a sum of 0 or 2 per pair), and nine members on
# a proposition of their own: twelve in all, once past the limit and taken member by member
@example(world=MemberWorld("sum", (), tuple((-3 if i % 2 else 5, frozenset({f"u{i // 2}.0"})) for i in range(6))
                           + tuple((v, frozenset({f"u{3 + i}.0"})) for i, v in enumerate([2, -1, 4, 4, -2, 0, 1, 1, 3]))))
def test_members_linked_only_within_small_groups_are_completed_exactly_however_many_unknowns_in_all(world):
    """Members that share no unknown proposition come and go independently: each group linked by
    shared propositions is completed on its own, so the interval is every completion's, exactly,
    when no group rests on more than ``COMPLETED_AT_MOST`` propositions — whatever the total."""
    found = arith.aggregate(world.kind, list(world.known), [v for v, _ in world.possible], complete=True, sign=None,
                            conditions=[c for _, c in world.possible])  # fmt: skip
    assert found == world.outcomes(), world


@settings(max_examples=100)
@given(world=member_world(block=4), limit=st.integers(0, 3))
def test_a_group_of_members_past_the_completions_it_evaluates_is_taken_member_by_member_and_never_wrong(world, limit):
    """A group resting on more propositions than the limit is taken member by member: the interval
    holds every completion's value, and whether there is a value is never said wrongly."""
    past: list[int] = []
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(arith, "COMPLETED_AT_MOST", limit)
        exists, low, high = arith.aggregate(world.kind, list(world.known), [v for v, _ in world.possible], complete=True,
                                            sign=None, conditions=[c for _, c in world.possible], past=past)  # fmt: skip
    always, least, most = world.outcomes()
    assert exists in (always, None), world
    if least is not None:
        assert low <= least and most <= high, world
    # every group past the limit is said, with how many propositions it rests on; none other is
    assert sorted(past) == sorted(len(g) for g in world.groups() if len(g) > limit), world
    if not past:  # no group past the limit: exact
        assert (exists, low, high) == (always, least, most), world


class _EachGroup:
    """gaf's fact base less what lets an aggregate be read as one join of closed facts
    (``closed_everywhere``, ``lookup``): every aggregate is evaluated where it is met, one
    group at a time, as evaluation did before joins."""

    def __init__(self, facts: PolicyFacts):
        self.facts = facts

    def match(self, predicate: str, subject: Any, obj: Any) -> list[Entry]:
        return self.facts.match(predicate, subject, obj)

    def closed(self, predicate: str, subject: Any, obj: Any) -> str | None:
        return self.facts.closed(predicate, subject, obj)

    def sign(self, predicate: str) -> Any:
        return self.facts.sign(predicate)


@settings(max_examples=150)
@given(world=grouped_world())
@example(world=GroupedWorld((("order", "order:0", None, "TRUE"), ("line", "line:0", "order:0", "TRUE"), ("amount", "line:0", 4, "TRUE"),
                             ("line", "line:1", "order:0", "UNKNOWN"), ("amount", "line:1", 2, "TRUE"), ("line", "line:0", "order:0", "TRUE")),
                            frozenset({"order", "line", "amount"}), frozenset(), True))  # fmt: skip
def test_an_aggregate_joined_once_for_every_group_concludes_what_evaluating_it_group_by_group_concludes(world):
    """Every conclusion, justification (premises, their order, closed scopes relied on, what
    would settle it) and dead end the same, whichever way the members were found."""
    policy = world.policy()
    entries = [Entry((p, s, o), Truth[t], f"e{n}") for n, (p, s, o, t) in enumerate(world.facts)]
    joined = evaluate_rules(program_of(policy), PolicyFacts(policy, entries, AT))
    each = evaluate_rules(program_of(policy), _EachGroup(PolicyFacts(policy, entries, AT)))
    assert joined.derived == each.derived
    assert (joined.open_predicates, joined.rounds, joined.dead_ends) == (each.open_predicates, each.rounds, each.dead_ends)


@given(world=grouped_world(), again=st.booleans())
def test_an_entry_index_lists_under_each_key_the_entries_with_that_argument_in_the_fact_bases_order(world, again):
    """What a join and ``match`` look up (``EntryIndex``) against a filter of every entry; and
    ``unique_grounds`` against a count of the grounds — with the first entry given twice, the
    same object (``again``), and for ``line`` asked when only the index by object was built."""
    entries = [Entry((p, s, o), Truth[t], f"e{n}") for n, (p, s, o, t) in enumerate(world.facts)]
    entries += entries[:1] if again else []
    facts = PolicyFacts(world.policy(), entries, AT)
    facts.lookup("line", 2)
    for predicate in ("order", "line", "amount"):
        of_predicate = [e for e in entries if e.ground[0] == predicate]
        assert facts.unique_grounds(predicate) == (len({e.ground for e in of_predicate}) == len(of_predicate))
        for position in (1, 2):
            index = EntryIndex(of_predicate, position)
            for key in {e.ground[position] for e in of_predicate} | {"nobody"}:
                assert list(index.get(key)) == [e for e in of_predicate if e.ground[position] == key]


# ---------------------------------------------------------------------- on a store, through the chain

ORDER_CASE = Path(__file__).resolve().parent.parent / "examples" / "order"


def receiving_log(*statements: str, at: str = "2026-07-08T11:00:00Z") -> str:
    """One claim of the order case's receiving log, as YAML, stating these (flow mappings)."""
    said = "".join(f"    - {st}\n" for st in statements)
    return (f"- kind: claim\n  source: receiving-log\n  observer: buyer\n  observed_at: {at}\n"
            f"  transformation: api_export\n  statements:\n{said}")  # fmt: skip


def _order_closed(store, tmp_path: Path | None = None, *, second: int = 25, closed: bool | str = True):
    """The order case closed on a store: the second delivery's quantity as given, and the
    receiving log's completeness declarations kept (closed), dropped (an open scope), or
    ``"one value"``: deliveries closed, and each delivery's quantity one-valued instead."""
    claims, policy_file = ORDER_CASE / "claims.yaml", ORDER_CASE / "policy.yaml"
    if tmp_path is not None:
        claims = tmp_path / "claims.yaml"
        claims.write_text((ORDER_CASE / "claims.yaml").read_text().replace("value: 25", f"value: {second}"), encoding="utf-8")
        data = yaml.safe_load((ORDER_CASE / "policy.yaml").read_text())
        if not closed:
            del data["completeness"]
        elif closed == "one value":
            data["completeness"] = [d for d in data["completeness"] if d["predicate"] != "quantity"]
            data["functional"] = ["quantity"]
        policy_file = tmp_path / "policy.yaml"
        policy_file.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    ingest(store, claims, recorded_at=NOW)
    policy = publish(store, read_policy(store, policy_file), at=NOW)
    rules = publish(store, read_rules(ORDER_CASE / "verdict-rules.yaml"), at=NOW)
    (buyer,) = store.find("agent", key="buyer")
    projected = project(store, policy, as_of=NOW, reviewer=buyer.id, at=NOW)
    return policy, close(store, projected.gaf.id, rules, subject="order:po-1", as_of=NOW, closed_at=NOW)


def test_a_sum_over_a_closed_scope_decides_on_the_store_and_records_its_members_and_the_scopes(store):
    policy, closed = _order_closed(store)
    assert closed.verdict.label == "pay"
    (derivation,) = [d for d in store.find(Derivation) if d.rule.startswith("delivered_in_full@1")]
    assert derivation.bindings == {"o": "order:po-1", "n": 40, "got": 40}
    stated = {store.get(store.get(f).proposition).subject for f in derivation.premises}
    assert stated == {"order:po-1", "delivery:d1", "delivery:d2"}  # the order and every member, each delivery and quantity
    assert len(derivation.premises) == 5
    assert sorted(derivation.negative_premises) == sorted(d.id for d in policy.completeness)


@pytest.mark.parametrize(
    ("second", "closed", "label"),
    [
        (25, False, "pay"),  # the known deliveries reach 40: more could only add to it
        (20, False, "undetermined"),  # 35 known, the scope open: a delivery nobody logged could make up the rest
        (20, True, "hold"),  # 35, and the log is complete: short, not unknown
        (20, "one value", "hold"),  # deliveries complete, and a delivery has one quantity: 35 is exact
    ],
)
def test_over_an_open_scope_a_sum_is_a_lower_bound_true_once_reached_and_unknown_before(store, tmp_path, second, closed, label):
    _, made = _order_closed(store, tmp_path, second=second, closed=closed)
    assert made.verdict.label == label


# ---------------------------------------------------------------------- bad input


def _policy_with(tmp_path: Path, rules: list[dict[str, Any]]) -> Path:
    data = yaml.safe_load((ORDER_CASE / "policy.yaml").read_text())
    data["derivation_rules"] = rules
    data["conclusions"] = sorted({r["head"].split("(")[0] for r in rules})
    path = tmp_path / "policy.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("rules", "error", "message", "rule"),
    [
        ([{"name": "share", "head": "share(?o, ?s)", "when": ["ordered(?o, ?n)", "?s = ?n / 0"]}],
         InvalidArithmetic, "division by zero", "share@1"),
        ([{"name": "start", "head": "n(?o, ?x)", "when": ["ordered(?o, ?x)"]},
          {"name": "grow", "head": "n(?o, ?y)", "when": ["n(?o, ?x)", "?y = ?x + 1"]}],
         RuleError, "unbounded recursion through arithmetic", "grow@1"),
        ([{"name": "n", "head": "n(?x + 1)", "when": ["n(?x)"]}], InvalidRecord, "arithmetic inside an atom", "n"),
        ([{"name": "big", "head": "big(?o)", "when": ["order_total(?o, ?t)", "?t > 10"]},
          {"name": "total", "head": "order_total(?o, ?t)",
           "when": ["ordered(?o, ?n)", "?t = sum ?q over delivered(?d, ?o), quantity(?d, ?q), not big(?o)"]}],
         RuleError, "(aggregates over|negate through recursion)", "total@1"),
        ([{"name": "twice", "head": "twice(?o, ?a)", "when": ["ordered(?o, ?n)", "?a = ?b + 1", "?b = ?a - 1"]}],
         RuleError, "needs", "twice@1"),
        ([{"name": "cap", "head": "cap(?o, ?c)", "when": ["ordered(?o, ?n)", "?c = 1000 EUR + 5 USD"]}],
         InvalidArithmetic, "mixed units: 1000 EUR \\+ 5 USD", "cap@1"),
    ],
    ids=["division-by-zero", "recursion-through-arithmetic", "arithmetic-in-a-head", "aggregate-over-its-own-stratum",
         "values-that-need-each-other", "mixed-units-in-literals"],
)
def test_bad_arithmetic_is_refused_naming_file_line_and_rule_before_anything_is_written(ladybug_store, tmp_path, rules, error, message, rule):
    ingest(ladybug_store, ORDER_CASE / "claims.yaml", recorded_at=NOW)
    before = ladybug_store.counts()
    path = _policy_with(tmp_path, rules)
    with pytest.raises(error, match=message) as info:
        read_policy(ladybug_store, path)
    where = info.value.where or ""
    assert where.startswith(f"{path}:") and rule in where + info.value.what
    line = int(where.split(":")[1].split(" ")[0])
    assert path.read_text().splitlines()[line - 1].strip().startswith(("- name:", "name:", "head:", "when:", "-"))
    assert ladybug_store.counts() == before


def test_an_aggregate_over_a_predicate_that_depends_on_it_is_refused_as_an_aggregate_over_its_own_stratum():
    rules = [
        DerivationRule.model_validate({"name": "total", "head": "order_total(?o, ?t)",
                                       "when": ["ordered(?o, ?n)", "?t = sum ?q over shipped(?d, ?o), quantity(?d, ?q)"]}),
        DerivationRule.model_validate({"name": "shipped", "head": "shipped(?d, ?o)",
                                       "when": ["delivered(?d, ?o)", "order_total(?o, ?t)"]}),
    ]  # fmt: skip
    with pytest.raises(RuleError, match="aggregates over shipped, which depends on order_total itself"):
        compile_rules(rules)


@pytest.mark.parametrize("kind", ["ladybug", "neo4j"])
def test_a_division_by_a_zero_the_data_holds_is_refused_and_nothing_is_written(kind, request, tmp_path):
    store = request.getfixturevalue(f"{kind}_store")
    claims = tmp_path / "claims.yaml"
    claims.write_text((ORDER_CASE / "claims.yaml").read_text().replace("value: 40", "value: 0"), encoding="utf-8")
    rules = [{"name": "per_unit", "head": "per_unit(?o, ?u)", "when": ["ordered(?o, ?n)", "unit_price(?o, ?p)", "?u = ?p / ?n"]}]
    ingest(store, claims, recorded_at=NOW)
    policy = publish(store, read_policy(store, _policy_with(tmp_path, rules)), at=NOW)
    (buyer,) = store.find("agent", key="buyer")
    before = store.counts()
    with pytest.raises(InvalidArithmetic, match="division by zero") as info:
        project(store, policy, as_of=NOW, reviewer=buyer.id, at=NOW)
    assert "per_unit@1" in (info.value.where or "")
    assert store.counts() == before


# ---------------------------------------------------------------------- arithmetic


_decimals = st.decimals(allow_nan=False, allow_infinity=False, places=6, min_value=-10**9, max_value=10**9)
_PYTHON = decimal.Context(prec=100)
_QUOTIENT = decimal.Context(prec=34, rounding=decimal.ROUND_HALF_EVEN)


@settings(max_examples=200)
@given(a=_decimals, b=_decimals, op=st.sampled_from(["+", "-", "*", "/"]))
@example(a=Decimal("0.1"), b=Decimal("0.2"), op="+")
@example(a=Decimal("1"), b=Decimal("3"), op="/")
def test_arithmetic_in_a_rule_is_exact_as_pythons_decimal_computes_it(a, b, op):
    assume(op != "/" or b != 0)
    a, b = to_number(a), to_number(b)
    expected = {
        "+": lambda: _PYTHON.add(Decimal(a), Decimal(b)), "-": lambda: _PYTHON.subtract(Decimal(a), Decimal(b)),
        "*": lambda: _PYTHON.multiply(Decimal(a), Decimal(b)), "/": lambda: _QUOTIENT.divide(Decimal(a), Decimal(b)),
    }[op]()  # fmt: skip
    facts = Facts(("x", "s", a), ("y", "s", b))
    clauses = [parse_clause("x(?subject, ?a)"), parse_clause("y(?subject, ?b)"), parse_clause(f"?c = ?a {op} ?b")]
    rule = DerivationRule.model_validate({"name": "c", "head": "c(?s, ?c)", "when": ["x(?s, ?a)", "y(?s, ?b)", f"?c = ?a {op} ?b"]})
    ((ground, derived),) = evaluate_rules([rule], facts).derived.items()
    assert ground[2] == expected and derived.truth == Truth.TRUE
    assert holds([*clauses, parse_clause(f"?c == {number_text(to_number(expected))}")], facts, {"?subject": "s"})[0] == Truth.TRUE


def test_a_comparison_written_before_the_atom_that_binds_it_reads_as_if_written_after():
    facts = Facts(("rent_amount", "lease:17", 1200))
    early = DerivationRule.model_validate({"name": "big", "head": "big(?L)", "when": ["?A >= 1000", "rent_amount(?L, ?A)"]})
    assert evaluate_rules([early], facts).truth(("big", "lease:17", None)) == Truth.TRUE


@pytest.mark.parametrize(("limit", "truth"), [(100, Truth.FALSE), (99.99, Truth.TRUE)])
def test_a_verdict_condition_computes_with_the_facts_it_reads(limit, truth):
    facts = Facts(("ordered", "order:po-1", 40), ("unit_price", "order:po-1", Decimal("2.5")))
    condition = [parse_clause(c) for c in ("ordered(?subject, ?n)", "unit_price(?subject, ?p)", f"?n * ?p > {limit}")]
    assert holds(condition, facts, {"?subject": "order:po-1"})[0] == truth


def test_a_verdict_condition_that_reads_a_value_nothing_binds_is_refused_when_the_rule_set_is_read(tmp_path):
    data = yaml.safe_load((ORDER_CASE / "verdict-rules.yaml").read_text())
    data["rules"][1]["condition"] = ["ordered(?subject, ?n)", "?n * ?price > ?limit"]  # ?price: bound by nothing
    path = tmp_path / "rules.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    with pytest.raises(RuleError, match=r"uses unbound \?price") as info:
        read_rules(path)
    assert info.value.where == f"{path}: rule over-the-limit"
