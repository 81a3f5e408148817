"""Numbers as rules compute with them: exact arithmetic, and the bounds of what is not all known.

A rule that adds quantities or compares a total with a limit must give the answer an
accountant would: 0.1 + 0.2 is 0.3, and a total over a scope nobody declared complete is
not a total. So arithmetic here is exact (integers and decimals; ``+ - *`` never round,
``/`` rounds to ``DIVISION_DIGITS`` significant digits, half to even), and a value that is
only partly known is a ``Bound``: the interval it must lie in. A comparison with a bound
is true when it holds across the whole interval, false when it holds nowhere in it, and
unknown otherwise — never false from missing data.

An aggregate over the members a rule found (``aggregate``) is exact when every pattern it
read was closed and every member is known; otherwise it is a bound, following the table
in docs/projection.md: over an open scope, ``sum`` and ``count`` of non-negative parts and
``max`` give lower bounds, ``min`` an upper bound, anything else is unknown.

Pure: no records, no store; the evaluator (``gaf.derive``) calls it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from decimal import ROUND_HALF_EVEN, Context, Decimal, DivisionByZero, Inexact, InvalidOperation, Overflow
from typing import Any, Literal

from gaf.errors import InvalidArithmetic
from gaf.types import Quantity, to_number

#: Significant digits a quotient keeps (IEEE 754 decimal128), rounded half to even.
DIVISION_DIGITS = 34
#: The most digits a sum, difference or product may have: past it the rule is refused, never rounded.
EXACT_DIGITS = 200

_EXACT = Context(prec=EXACT_DIGITS, rounding=ROUND_HALF_EVEN, traps=[Inexact, InvalidOperation, DivisionByZero, Overflow])
_DIVIDE = Context(prec=DIVISION_DIGITS, rounding=ROUND_HALF_EVEN, traps=[InvalidOperation, DivisionByZero, Overflow])

Operator = Literal["+", "-", "*", "/"]
Kind = Literal["sum", "count", "min", "max"]
#: What a policy may declare of a predicate's values, so an open scope still bounds their sum.
Sign = Literal["non-negative", "non-positive"]

#: An exact number as rules hold one.
Number = int | Decimal
#: An endpoint of a bound: a number or text (min and max also order text), None for unbounded.
End = Number | str | None


@dataclass(frozen=True)
class Bound:
    """A value known only to lie in [low, high] (None: unbounded on that side), and the
    atoms whose settling would narrow it (patterns with ``None`` where anything may stand)."""

    low: End
    high: End
    settle: tuple[tuple[str, Any, Any], ...] = ()
    #: the unit both ends are in, if any
    unit: str | None = None

    def __str__(self) -> str:
        low = "-∞" if self.low is None else str(self.low)
        high = "∞" if self.high is None else str(self.high)
        return f"[{low}, {high}]" + (f" {self.unit}" if self.unit else "")


def unit_of(value: Any) -> str | None:
    """The unit a value is in (a ``Quantity``'s, a bound's), None for a plain number or text."""
    return value.unit if isinstance(value, (Quantity, Bound)) else None


def _bare(value: Any) -> Any:
    """A value without its unit: a quantity's amount, a bound's ends."""
    if isinstance(value, Quantity):
        return value.amount
    if isinstance(value, Bound) and value.unit is not None:
        return replace(value, unit=None)
    return value


def in_unit(unit: str | None, value: Any) -> Any:
    """A bare number or bound put back in its unit (the inverse of ``bare_members``)."""
    if unit is None:
        return value
    if isinstance(value, Bound):
        return replace(value, unit=unit)
    return Quantity(amount=value, unit=unit)


def _result_unit(op: Operator, left: Any, right: Any, where: str) -> str | None:
    """The unit of ``left op right``, or the refusal: arithmetic across units is an error, not a number."""
    lu, ru = unit_of(left), unit_of(right)
    if lu is None and ru is None:
        return None
    if op in ("+", "-"):
        if lu != ru:
            raise InvalidArithmetic(
                f"mixed units: {str(left)} {op} {str(right)}",
                where=where,
                hint="add and subtract amounts of one unit; write a plain number with its unit (1000 EUR)",
            )
        return lu
    if op == "*":
        if lu is not None and ru is not None:
            raise InvalidArithmetic(f"{str(left)} * {str(right)} multiplies two units", where=where,
                                    hint="multiply an amount by a plain number (a quantity, a rate)")  # fmt: skip
        return lu or ru
    if ru is not None and lu != ru:
        raise InvalidArithmetic(f"mixed units: {str(left)} / {str(right)}", where=where,
                                hint="divide an amount by a plain number, or by an amount of its own unit (a ratio)")  # fmt: skip
    return None if ru is not None else lu


def is_number(value: object) -> bool:
    return isinstance(value, (int, float, Decimal)) and not isinstance(value, bool)


def _exact(value: Any, where: str) -> Number:
    if not is_number(value):
        raise InvalidArithmetic(
            f"cannot compute with {value!r}: arithmetic takes numbers",
            where=where,
            hint="compare text with == or !=, or make the claim state a number",
        )
    return to_number(value)


def apply(op: Operator, left: Any, right: Any, *, where: str = "") -> Number | Bound | Quantity:
    """``left op right``, exactly; over a bound, the interval of every result it allows.

    Division by zero is refused (``InvalidArithmetic``), as is a result longer than
    ``EXACT_DIGITS`` digits, and arithmetic across units: a rule never gets a number it did
    not ask for. An amount keeps its unit (25 EUR * 2 is 50 EUR; 50 EUR / 25 EUR is 2)."""
    unit = _result_unit(op, left, right, where)
    bare = _apply(op, _bare(left), _bare(right), where)
    if unit is None:
        return bare
    return replace(bare, unit=unit) if isinstance(bare, Bound) else Quantity(amount=bare, unit=unit)


def _apply(op: Operator, left: Any, right: Any, where: str) -> Number | Bound:
    if isinstance(left, Bound) or isinstance(right, Bound):
        return _apply_bounds(op, _interval(left, where), _interval(right, where), where)
    a, b = _exact(left, where), _exact(right, where)
    if isinstance(a, int) and isinstance(b, int) and op != "/":
        return a + b if op == "+" else a - b if op == "-" else a * b
    try:
        if op == "/":
            if b == 0:
                raise InvalidArithmetic(
                    f"division by zero: {left} / {right}", where=where, hint="test the divisor first: ?d != 0"
                )
            result = _DIVIDE.divide(Decimal(a), Decimal(b))
        elif op == "+":
            result = _EXACT.add(Decimal(a), Decimal(b))
        elif op == "-":
            result = _EXACT.subtract(Decimal(a), Decimal(b))
        else:
            result = _EXACT.multiply(Decimal(a), Decimal(b))
    except (Inexact, Overflow):
        raise InvalidArithmetic(f"{left} {op} {right} has more than {EXACT_DIGITS} digits", where=where) from None
    return to_number(result)


_INF = Decimal("Infinity")


def _interval(value: Any, where: str) -> tuple[Decimal, Decimal, tuple[Any, ...]]:
    if isinstance(value, Bound):
        low = -_INF if value.low is None else Decimal(_exact(value.low, where))
        high = _INF if value.high is None else Decimal(_exact(value.high, where))
        return low, high, value.settle
    exact = Decimal(_exact(value, where))
    return exact, exact, ()


def _times(a: Decimal, b: Decimal) -> Decimal:
    # an unbounded end times zero is zero: the bound stands for finite values
    return Decimal(0) if a == 0 or b == 0 else a * b


def _apply_bounds(op: Operator, a: tuple[Decimal, Decimal, tuple[Any, ...]], b: tuple[Decimal, Decimal, tuple[Any, ...]], where: str) -> Number | Bound:
    (al, ah, asettle), (bl, bh, bsettle) = a, b
    settle = tuple(dict.fromkeys((*asettle, *bsettle)))
    if op == "+":
        low, high = al + bl, ah + bh
    elif op == "-":
        low, high = al - bh, ah - bl
    elif op == "*":
        ends = [_times(x, y) for x in (al, ah) for y in (bl, bh)]
        low, high = min(ends), max(ends)
    else:
        if bl == bh == 0:
            raise InvalidArithmetic("division by zero", where=where, hint="test the divisor first: ?d != 0")
        if bl <= 0 <= bh:
            return Bound(None, None, settle)  # the divisor may be zero or near it: nothing is bounded
        ends = [x / y for x in (al, ah) for y in (bl, bh) if y.is_finite() or x.is_finite()]
        low, high = min(ends, default=-_INF), max(ends, default=_INF)
    return _bound(low, high, settle)


def _bound(low: Decimal, high: Decimal, settle: tuple[Any, ...]) -> Number | Bound:
    lo = None if low.is_infinite() else to_number(low)
    hi = None if high.is_infinite() else to_number(high)
    if lo is not None and lo == hi:
        return lo  # a bound times zero: exactly known after all
    return Bound(lo, hi, settle)


def compare(op: str, left: Any, right: Any, *, where: str = "") -> bool | None:
    """Whether ``left op right`` holds: True, False, or None when a bound leaves it open.

    Numbers compare by value (25 == 25.00); text with text; ``==`` between a number and
    text is false, and ordering them is false, as it always was for plain terms. Amounts
    compare within one unit: 25 EUR == 25 USD is false, and ordering them is refused."""
    lu, ru = unit_of(left), unit_of(right)
    if lu is not None or ru is not None:
        if lu != ru:
            if op in ("==", "!="):
                return op == "!="
            raise InvalidArithmetic(f"cannot order {str(left)} and {str(right)}: mixed units", where=where,
                                    hint="compare amounts of one unit; write a plain number with its unit (1000 EUR)")  # fmt: skip
        left, right = _bare(left), _bare(right)
    if not isinstance(left, Bound) and not isinstance(right, Bound):
        return _plain(op, left, right)
    al, ah = (left.low, left.high) if isinstance(left, Bound) else (left, left)
    bl, bh = (right.low, right.high) if isinstance(right, Bound) else (right, right)
    if op in ("==", "!="):
        apart = _certainly_less(ah, bl) or _certainly_less(bh, al)
        same = None if not apart else False
        return None if same is None else (same if op == "==" else not same)
    if op in (">", ">="):
        op, al, ah, bl, bh = ("<" if op == ">" else "<="), bl, bh, al, ah
    strict = op == "<"
    if _certainly(ah, bl, strict):
        return True
    if _certainly(bh, al, not strict):  # b < a (or b <= a): a < b (or a <= b) cannot hold
        return False
    return None


def _certainly_less(a: End, b: End) -> bool:
    return a is not None and b is not None and _plain("<", a, b) is True


def _certainly(a: End, b: End, strict: bool) -> bool:
    """Whether every value up to ``a`` is below (or at most) every value from ``b``."""
    return a is not None and b is not None and bool(_plain("<" if strict else "<=", a, b))


def _plain(op: str, left: Any, right: Any) -> bool:
    numeric = is_number(left) and is_number(right)
    if op in ("==", "!="):
        same = left == right and (numeric or type(left) is type(right))
        return same if op == "==" else not same
    if not numeric and not (isinstance(left, str) and isinstance(right, str)):
        return False
    ordered: dict[str, bool] = {"<": left < right, "<=": left <= right, ">": left > right, ">=": left >= right}
    return ordered[op]


def sign_of(expr: Any, var_sign: Callable[[str], Sign | None], *, is_var: Callable[[Any], bool], parts: Callable[[Any], tuple[str, Any, Any] | None]) -> Sign | None:
    """The sign an expression's value is known to have, from the declared signs of its
    variables (``var_sign``) and its constants; None when it could be either.

    ``parts`` splits an expression node into (operator, left, right), None for a term."""
    split = parts(expr)
    if split is None:
        if is_var(expr):
            return var_sign(expr)
        if isinstance(expr, Quantity):
            expr = expr.amount
        if is_number(expr):
            return "non-negative" if expr >= 0 else "non-positive"
        return None
    op, left, right = split
    a = sign_of(left, var_sign, is_var=is_var, parts=parts)
    b = sign_of(right, var_sign, is_var=is_var, parts=parts)
    if a is None or b is None:
        return None
    if op in ("*", "/"):
        return "non-negative" if a == b else "non-positive"
    if op == "-":
        b = "non-positive" if b == "non-negative" else "non-negative"
    return a if a == b else None


def bare_members(values: Sequence[Any], where: str) -> tuple[list[Any], str | None]:
    """Members' values without their unit, and the one unit they share (an aggregate across units is refused)."""
    if all(type(v) is int for v in values):  # plain integers, the usual case: nothing to take off
        return list(values), None
    units = {unit_of(v) for v in values}
    if len(units) > 1:
        shown = ", ".join(sorted(u or "no unit" for u in units))
        raise InvalidArithmetic(f"an aggregate over mixed units ({shown})", where=where,
                                hint="aggregate amounts of one unit: narrow the members with a comparison or a unit in the pattern")  # fmt: skip
    return [_bare(v) for v in values], (units.pop() if units else None)


#: The most unknown propositions one group of an aggregate's members is evaluated in every
#: completion of (``aggregate``'s ``conditions``: 2**10 completions). Members that share none
#: come and go independently, so each group of members linked by shared propositions is
#: completed on its own; a group resting on more than this is taken member by member — an
#: interval as wide or wider, never one that misses a value.
COMPLETED_AT_MOST = 10


def aggregate(kind: Kind, known: Sequence[Any], possible: Sequence[Any], *, complete: bool, sign: Sign | None, where: str = "",
              conditions: Sequence[frozenset[Any]] | None = None,
              past: list[int] | None = None) -> tuple[bool | None, End, End]:  # fmt: skip
    """An aggregate over its members: whether it has a value (None: perhaps), and the
    interval that value lies in (equal ends: exact).

    ``known`` are the values of members that hold, ``possible`` of those that might;
    ``complete`` says no other member can exist (every pattern read was closed). ``sign``
    is what the policy declares of the summed values; a known value that contradicts it
    voids it, so a bound never rests on a declaration the data refutes.

    ``conditions``, where given, are for each possible member the unknown propositions it
    holds exactly when all of hold: members resting on one unknown delivery come and go
    together. Over a closed scope a sum, min or max is then evaluated in every completion of
    those propositions (``COMPLETED_AT_MOST`` of them at most), so each end of its interval is
    a value some completion gives (a count's ends, none of them and all, always are). Without
    them, each possible member is taken to come or go on its own: an interval that holds every
    value a completion gives, but whose ends may be values none gives. ``past``, where given,
    gains the number of propositions of each group of members past the limit (taken member by
    member): a limit hit, which the caller says."""
    if kind == "count":
        return True, len(known), (len(known) + len(possible)) if complete else None
    values = [*known, *possible]
    texts = [] if all(type(v) is int for v in values) else [v for v in values if isinstance(v, str)]
    if texts and (kind == "sum" or len(texts) != len(values)):
        shown = texts[0]
        raise InvalidArithmetic(
            f"{kind} over {shown!r}: {'sum adds numbers' if kind == 'sum' else 'min and max order numbers or text, not both'}",
            where=where,
            hint="narrow the aggregate to members whose value is a number",
        )
    if not texts:
        known = [v if type(v) is int else _exact(v, where) for v in known]
        possible = [v if type(v) is int else _exact(v, where) for v in possible]
    if complete and conditions is not None and possible:
        return _completed(kind, known, possible, conditions, where, past)
    if kind == "sum":
        if sign == "non-negative" and any(v < 0 for v in values) or sign == "non-positive" and any(v > 0 for v in values):
            sign = None
        total = _sum(known, where)
        low = total + _sum([v for v in possible if v < 0], where)
        high = total + _sum([v for v in possible if v > 0], where)
        if complete:
            return True, low, high
        return True, (low if sign == "non-negative" else None), (high if sign == "non-positive" else None)
    best = max if kind == "max" else min
    exists: bool | None = True if known else (False if complete and not possible else None)
    if exists is False:
        return False, None, None
    # max: at least the largest known member; at most the largest member there might be (min: mirrored)
    sure = best(known) if known else None
    widest = best(values) if complete else None
    narrowest = (max if kind == "min" else min)(possible) if not known and complete and possible else None
    inner = sure if sure is not None else narrowest
    return (exists, inner, widest) if kind == "max" else (exists, widest, inner)


def _completed(kind: Kind, known: Sequence[Any], possible: Sequence[Any], conditions: Sequence[frozenset[Any]],
               where: str, past: list[int] | None) -> tuple[bool | None, End, End]:  # fmt: skip
    """``aggregate`` (a sum, min or max: a count's interval is already exact) over a closed
    scope in every completion of the unknown propositions its possible members rest on (each
    true or false; a member holds when all of its own do).

    Members that share no proposition come and go independently, so the possible members are
    split into groups linked by shared propositions (``_linked``), each group's outcomes are
    enumerated on its own, and the ends combine: a sum's add up; a max is at least the largest
    of what each group that always brings a member brings at least, and at most the largest
    value there is (a min mirrored). A group resting on more than ``COMPLETED_AT_MOST``
    propositions is taken member by member. The known members are one more group, always
    there, with their one outcome."""
    outcomes: list[set[Any]] = []  # for each group, what it adds in each completion (a min or max: None, nothing)
    for members in _linked(conditions):
        unknowns = sorted(set().union(*(conditions[m] for m in members)), key=repr)
        if len(unknowns) > COMPLETED_AT_MOST:
            outcomes += [{possible[m], 0 if kind == "sum" else None} for m in members]  # each member comes or goes alone
            if past is not None:
                past.append(len(unknowns))
            continue
        bit = {u: 1 << i for i, u in enumerate(unknowns)}
        masks = [(possible[m], sum(bit[u] for u in conditions[m])) for m in members]
        results: set[Any] = set()
        for holding in range(1 << len(unknowns)):
            present = [v for v, mask in masks if mask & holding == mask]
            results.add(_sum(present, where) if kind == "sum" else (max if kind == "max" else min)(present) if present else None)
        outcomes.append(results)
    if kind == "sum":
        total = _sum(known, where)
        return True, _sum([total, *(min(r) for r in outcomes)], where), _sum([total, *(max(r) for r in outcomes)], where)
    best, worst = (max, min) if kind == "max" else (min, max)
    if known:
        outcomes.append({best(known)})
    there = [r - {None} for r in outcomes]
    # always bringing a member: the group's worst outcome still counts; else the overall worst is one group's worst
    always = [worst(values) for r, values in zip(outcomes, there) if None not in r]
    inner = best(always) if always else worst(worst(values) for values in there)
    outer = best(best(values) for values in there)
    exists: bool | None = True if always else None
    return (exists, inner, outer) if kind == "max" else (exists, outer, inner)


def _linked(conditions: Sequence[frozenset[Any]]) -> list[list[int]]:
    """The members (by position) in groups that share an unknown proposition, directly or through
    others; each group in member order, the groups by their first member. A union-find over the
    members, each joined to the first member that rested on each of its propositions: near linear."""
    parent = list(range(len(conditions)))

    def root(m: int) -> int:
        while parent[m] != m:
            parent[m] = parent[parent[m]]  # halve the path as it is walked
            m = parent[m]
        return m

    first: dict[Any, int] = {}  # each proposition's first member
    for m, condition in enumerate(conditions):
        for u in condition:
            other = first.setdefault(u, m)
            a, b = root(m), root(other)
            if a != b:
                parent[max(a, b)] = min(a, b)  # the group is named by its first member
    groups: dict[int, list[int]] = {}
    for m in range(len(conditions)):
        groups.setdefault(root(m), []).append(m)
    return [groups[r] for r in sorted(groups)]


def _sum(values: Sequence[Number], where: str) -> Number:
    if all(type(v) is int for v in values):
        return sum(values)  # integers: exact as they are
    try:
        total = Decimal(0)
        for v in values:
            total = _EXACT.add(total, Decimal(v))
    except (Inexact, Overflow):
        raise InvalidArithmetic(f"a sum of {len(values)} values has more than {EXACT_DIGITS} digits", where=where) from None
    return to_number(total)
