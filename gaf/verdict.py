"""The verdict engine: an embedded weighted h-Categoriser over Toulmin rules.

A verdict is computed, not judged. Each verdict rule that activates on the GAF
becomes an argument whose initial weight is its qualifier; defeat edges say which
argument attacks which; Amgoud's h-Categoriser gives every argument its strength,

    Acc(a) = w(a) / (1 + Σ Acc(b) for b attacking a),

and the verdict on the conclusion is 2·Acc − 1 in [−1, 1] over the warrants,
combined by a declared aggregation. Strict rules ignore their attackers (Nute);
defeaters only attack. A rule whose condition is unknown is neither fired nor
dropped: the verdict is computed with it taken each way, and a verdict whose
interval straddles a label boundary is "undetermined", with the unknown premises
that would settle it named in the trace.

Everything here is pure: no store, no clock. The same closure and the same
engine version give the same verdict, bit for bit (sorted iteration, a declared
precision, results rounded to it).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from gaf.derive import FactBase, LimitHit, Truth, holds, limits_of
from gaf.errors import InvalidRecord
from gaf.records import Band, Role, Strength, VerdictRule, VerdictRules
from gaf.records.base import kept
from gaf.types import Scalar

if TYPE_CHECKING:  # numpy is imported where the arrays are built, so judging small graphs never loads it
    import numpy as np
    import numpy.typing as npt

#: The engine version a closure records; change it whenever results could change.
#: 2: a derived premise whose rule's premises are merely absent outside a closed
#:    scope reads as unknown, not false (changed by the what-if work, 2ae8d37).
ENGINE = "gaf-hcategoriser/2"
#: Declared precision: fixed-point tolerance, and digits results are rounded to.
EPSILON = 1e-12
DIGITS = 12
#: Verdicts with more unknown rules than this are refused rather than guessed.
MAX_UNKNOWN = 16
#: Above this many arguments the iteration runs on arrays (decisions stay far below it).
VECTOR_THRESHOLD = 5000
UNDETERMINED = "undetermined"

# ---------------------------------------------------------------------- the core function


def h_categoriser(
    weights: Mapping[str, float],
    attacks: Iterable[tuple[str, str]],
    *,
    strict: frozenset[str] | set[str] = frozenset(),
    epsilon: float = EPSILON,
) -> dict[str, float]:
    """Amgoud's weighted h-Categoriser: the strength of every activated argument.

    ``weights`` maps each activated argument to its initial weight in [0, 1];
    ``attacks`` holds (attacker, attacked) pairs among them. Arguments in
    ``strict`` ignore their attackers. Exact in one topological pass when the
    attack graph is acyclic; otherwise the fixed point, iterated until no strength
    moves by more than ``epsilon`` (the iteration converges: the function is a
    contraction in the alternating sense shown by Pu et al., 2014).
    """
    for name, w in weights.items():
        if not isinstance(w, (int, float)) or isinstance(w, bool) or not 0.0 <= w <= 1.0 or math.isnan(w):
            raise ValueError(f"weight of {name!r} must be in [0, 1], got {w!r}")
    attackers: dict[str, list[str]] = {a: [] for a in weights}
    seen: set[tuple[str, str]] = set()
    for pair in attacks:
        attacker, attacked = pair
        for end in (attacker, attacked):
            if end not in weights:
                raise ValueError(f"attack {attacker!r} → {attacked!r} names unknown argument {end!r}")
        if pair in seen:
            raise ValueError(f"attack {attacker!r} → {attacked!r} is given twice")
        seen.add((attacker, attacked))
        if attacked not in strict:
            attackers[attacked].append(attacker)
    if len(weights) > VECTOR_THRESHOLD:
        return _vectorised(weights, attackers, epsilon)
    for a in attackers:
        attackers[a].sort()
    order = _topological(attackers)
    if order is not None:
        acc: dict[str, float] = {}
        for a in order:
            acc[a] = weights[a] / (1.0 + math.fsum(acc[b] for b in attackers[a]))
        return {a: acc[a] for a in sorted(weights)}
    return _fixed_point(weights, attackers, epsilon)


def _topological(attackers: dict[str, list[str]]) -> list[str] | None:
    """An order where every argument comes after its attackers, or None if there is a cycle."""
    pending = {a: len(bs) for a, bs in attackers.items()}
    attacks_of: dict[str, list[str]] = {a: [] for a in attackers}
    for a, bs in attackers.items():
        for b in bs:
            attacks_of[b].append(a)
    ready = sorted(a for a, n in pending.items() if n == 0)
    order: list[str] = []
    while ready:
        a = ready.pop()
        order.append(a)
        for c in attacks_of[a]:
            pending[c] -= 1
            if pending[c] == 0:
                ready.append(c)
    return order if len(order) == len(attackers) else None


def _fixed_point(weights: Mapping[str, float], attackers: dict[str, list[str]], epsilon: float) -> dict[str, float]:
    names = sorted(weights)
    acc = {a: float(weights[a]) for a in names}
    for _ in range(100_000):
        new = {a: weights[a] / (1.0 + math.fsum(acc[b] for b in attackers[a])) for a in names}
        delta = max((abs(new[a] - acc[a]) for a in names), default=0.0)
        acc = new
        if delta <= epsilon:
            return acc
    raise ArithmeticError("h-Categoriser did not converge")  # pragma: no cover - a contraction always converges


def _vectorised(weights: Mapping[str, float], attackers: dict[str, list[str]], epsilon: float) -> dict[str, float]:
    """The same iteration over arrays, for argument graphs far larger than a decision's.

    Each round sums every argument's attackers with one ``bincount`` over the
    attack list. On an acyclic graph the values stop moving after depth + 1
    rounds and are the exact h-Categoriser values (up to the order floats are
    summed in); on a cyclic one the loop stops at ``epsilon``.
    """
    import numpy as np

    names = sorted(weights)
    index = {a: i for i, a in enumerate(names)}
    w = np.fromiter((weights[a] for a in names), dtype=np.float64, count=len(names))
    pairs = [(index[b], index[a]) for a, bs in attackers.items() for b in bs]
    src = np.fromiter((p[0] for p in pairs), dtype=np.int64, count=len(pairs))
    dst = np.fromiter((p[1] for p in pairs), dtype=np.int64, count=len(pairs))
    acc = vector_fixed_point(w, src, dst, epsilon)
    return dict(zip(names, acc.tolist(), strict=True))


def vector_fixed_point(
    w: npt.NDArray[np.float64], src: npt.NDArray[np.int64], dst: npt.NDArray[np.int64], epsilon: float = EPSILON
) -> npt.NDArray[np.float64]:
    """Acc = w / (1 + Σ Acc[attackers]) on arrays: weights, and attack (source, target) indexes."""
    import numpy as np

    acc = w.copy()
    for _ in range(100_000):
        new = w / (1.0 + np.bincount(dst, weights=acc[src], minlength=len(w)))
        delta = float(np.max(np.abs(new - acc))) if len(w) else 0.0
        acc = new
        if delta <= epsilon:
            return acc
    raise ArithmeticError("h-Categoriser did not converge")  # pragma: no cover


def verdict_of(acc: float) -> float:
    """The verdict in [−1, 1] of a strength in [0, 1]."""
    return 2.0 * acc - 1.0


# ---------------------------------------------------------------------- judging a GAF


# boilerplate: RuleTrace and Judgement below are frozen dataclasses declaring their fields one per line with a type,
# as the record classes and the compiled clauses of gaf/derive.py do; the shapes repeat by design.
@dataclass(frozen=True)
class RuleTrace:
    """One rule in a verdict's trace."""

    name: str
    role: str
    strength_class: str
    qualifier: float
    backing: str
    activation: str  # "true" | "false" | "unknown"
    attackers: tuple[str, ...]
    strength: float | None  # None: not applicable (did not fire)
    facts: tuple[str, ...]
    unknown_premises: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        out = {k: getattr(self, k) for k in self.__dataclass_fields__}
        out["attackers"] = list(self.attackers)
        out["facts"] = list(self.facts)
        out["unknown_premises"] = list(self.unknown_premises)
        if self.strength is None:
            out["strength"] = "not applicable"
        return out


@dataclass(frozen=True)
class Judgement:
    """A verdict before it is a record: label, strength, interval and trace."""

    label: str
    strength: float
    low: float
    high: float
    rules: tuple[RuleTrace, ...]
    settles: tuple[str, ...]
    engine: str = ENGINE
    #: limits the rules' conditions hit (``gaf.derive.LimitHit``): the closure records them
    limits: tuple[LimitHit, ...] = ()

    def trace(self) -> dict[str, Any]:
        return {
            "engine": self.engine,
            "rules": [r.to_dict() for r in self.rules],
            "interval": [self.low, self.high],
            "would_settle": list(self.settles),
        }

    def text(self, settle: Sequence[str] | None = None) -> str:
        """The trace as people read it; ``settle``: the lines to show for what would settle it
        (``gaf.whatif.Settling.lines``), in place of every unknown premise the trace names."""
        lines = [f"verdict {self.label}: {self.strength:+.3f} (interval {self.low:+.3f} … {self.high:+.3f})"]
        for r in self.rules:
            state = "not applicable" if r.strength is None else f"strength {r.strength:.3f}"
            attacked = f", attacked by {', '.join(r.attackers)}" if r.attackers else ""
            lines.append(f"  {r.role:9} {r.name} [{r.strength_class}, q={r.qualifier:g}] activation={r.activation}: {state}{attacked}")
            if r.backing:
                lines.append(f"            backing: {r.backing}")
            for u in r.unknown_premises:
                lines.append(f"            unknown: {u}")
        if settle is not None:
            lines += settle
        elif self.settles:
            lines.append("  would settle it: " + "; ".join(self.settles))
        return "\n".join(lines)


#: Weighings already made, by (rules id, the rules active): ``judge``'s ``scores``.
Scores = dict[tuple[str, frozenset[str]], tuple[float, dict[str, float]]]


def judge(rules: VerdictRules, facts: FactBase, *, subject: str, scores: Scores | None = None) -> Judgement:
    """Judge one subject against the facts of a GAF under a versioned rule set. A caller
    judging many subjects under the same rules passes one ``scores`` to all of them: a
    weighing is a pure function of the rules (by id: a content hash) and the rules active,
    so each is made once."""
    prepared = _prepared(rules)
    activation: dict[str, tuple[Truth, list[str], list[str]]] = {}
    hits: list[LimitHit] = []
    for r, params, _, _ in prepared.ordered:
        found: list[LimitHit] = []
        activation[r.name] = holds(r.condition, facts, {"?subject": subject, **params}, limits=found)
        hits += [replace(hit, rule=f"the condition of {r.name}") for hit in found]
    known = {n for n, (t, _, _) in activation.items() if t == Truth.TRUE}
    unknown = sorted(n for n, (t, _, _) in activation.items() if t == Truth.UNKNOWN)
    if len(unknown) > MAX_UNKNOWN:
        raise InvalidRecord(
            f"{len(unknown)} rules have unknown activation; at most {MAX_UNKNOWN} can be weighed exhaustively",
            hint="settle some premises first",
        )
    weigh = _score if scores is None else _kept_score(scores)
    point, acc = weigh(rules, known)
    values = [weigh(rules, known | set(chosen))[0] for k in range(len(unknown) + 1) for chosen in itertools.combinations(unknown, k)]
    low, high = min(values), max(values)
    label = _label(rules.bands, rules.default_label, low, high)
    traces = []
    attack_map = prepared.attacks
    for r, _, role, strength_class in prepared.ordered:
        truth, used, unknown_premises = activation[r.name]
        traces.append(RuleTrace(
            name=r.name, role=role, strength_class=strength_class, qualifier=r.qualifier, backing=r.backing,
            activation=truth.name.lower(),
            attackers=tuple(sorted(a for a in attack_map.get(r.name, ()) if a in known)),
            strength=_round(acc[r.name]) if r.name in acc else None,
            facts=tuple(sorted(set(used))), unknown_premises=tuple(sorted(set(unknown_premises))),
        ))  # fmt: skip
    settles = tuple(sorted({u for n in unknown for u in activation[n][2]})) if label == UNDETERMINED else ()
    return Judgement(label, _round(point), _round(low), _round(high), tuple(traces), settles, limits=tuple(limits_of(hits)))


@dataclass(frozen=True)
class _Prepared:
    """What judging reads of a rule set whatever the subject, read once for every subject."""

    #: each rule by name, with its parameters as bindings, its role and its strength class
    ordered: tuple[tuple[VerdictRule, dict[str, Scalar], str, str], ...]
    #: each rule's attackers
    attacks: dict[str, list[str]]


#: Rule sets prepared for judging, by id (a content hash: one id, one rule set).
_PREPARED: dict[str, _Prepared] = {}
_PREPARED_MAX = 1_000


def _prepared(rules: VerdictRules) -> _Prepared:
    def prepare() -> _Prepared:
        ordered = sorted(rules.rules, key=lambda r: r.name)
        return _Prepared(tuple((r, rule_params(r), r.role.value, r.strength.value) for r in ordered), _attacks(rules))

    return kept(_PREPARED, _PREPARED_MAX, rules.id, prepare)


def rule_params(r: VerdictRule) -> dict[str, Scalar]:
    """A rule's parameters as bindings of its condition's variables."""
    return {f"?{k}": v for k, v in r.params.items()}


def _attacks(rules: VerdictRules) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for d in rules.defeats:
        out.setdefault(d.attacked, []).append(d.attacker)
    return out


#: Weighings one ``scores`` keeps at most (dropped whole past it, as ``kept`` does).
SCORES_MAX = 100_000


def _kept_score(scores: Scores) -> Callable[[VerdictRules, set[str]], tuple[float, dict[str, float]]]:
    def weigh(rules: VerdictRules, active: set[str]) -> tuple[float, dict[str, float]]:
        return kept(scores, SCORES_MAX, (rules.id, frozenset(active)), lambda: _score(rules, active))

    return weigh


def _score(rules: VerdictRules, active: set[str]) -> tuple[float, dict[str, float]]:
    """The verdict on the conclusion when exactly ``active`` rules fired, and each strength."""
    by_name = {r.name: r for r in rules.rules}
    weights = {n: by_name[n].qualifier for n in sorted(active)}
    attacks = sorted((d.attacker, d.attacked) for d in rules.defeats if d.attacker in active and d.attacked in active)
    strict = frozenset(n for n in active if by_name[n].strength == Strength.strict)
    acc = h_categoriser(weights, attacks, strict=strict)
    warrants = [acc[r.name] for r in rules.rules if r.name in active and r.role == Role.warrant]
    if not warrants:
        return -1.0, acc  # no warrant applies: the conclusion is not supported at all
    aggregations: dict[str, Callable[[list[float]], float]] = {
        "max": lambda xs: max(xs),
        "min": lambda xs: min(xs),
        "mean": lambda xs: math.fsum(xs) / len(xs),
        "first": lambda xs: xs[0],
    }
    combined = aggregations[rules.aggregation](warrants)
    return _round(verdict_of(combined)), acc


def _label(bands: list[Band], default: str, low: float, high: float) -> str:
    def one(v: float) -> str:
        return next((b.label for b in bands if b.low <= v <= b.high), default)

    first = one(low)
    if first != one(high) or any(low < b.low <= high or low <= b.high < high for b in bands):
        return UNDETERMINED
    return first


def _round(x: float) -> float:
    return round(x, DIGITS) + 0.0
