# STALE PROTOTYPE — not applied to gaf/. Compared with gaf/derive.py at dbe412c (and its
# uncommitted typing-only edits), what this file proposes and gaf/ does not have, each marked PROTO:
#   PROTO 1. Semi-naive rounds read the last round's new facts from a delta grouped by predicate
#            (and by (predicate, subject) / (predicate, object)), in index order; gaf/ passes a
#            set and _entries scans every derived fact of the predicate, skipping those not in it.
#   PROTO 2. Derived facts indexed by (predicate, subject) and (predicate, object) (_State.by_subject,
#            by_object, position), so a derived atom with a bound argument is a dict lookup; gaf/
#            has only index[predicate] (quadratic for right-recursive rules).
#   PROTO 3. Clauses compiled once per evaluation (_CAtom, _State.compiled: RuleRef resolved once,
#            terms classified once); gaf/ calls resolve() and is_var/is_wild on every match.
#   PROTO 4. The head ground computed once per justification (_solve yields it); gaf/ computes it
#            in _record and again in _fixpoint.
#   PROTO 5. slots=True on Premise, Justification and _Branch; no sort of empty lists; a loop for
#            the weakest premise's confidence.
# Behind gaf/, so not a drop-in: it lacks b4c6887 (a negated pattern with an unbound argument over
# claims, found false, is unknown unless a closed scope covers it: _ground_pattern and the _absence
# check in _negation) and 2ae8d37 (holds(..., by_ref) and holds_grounds, which gaf.projection and
# gaf.whatif call). Applying it means porting PROTO 1-5 onto today's gaf/derive.py. Measured
# (docs/benchmarks-projection.md, before b4c6887): right-recursive rule 22x-71x at 1,000-2,000 facts;
# left-recursive 1.1-1.4x. Used by python -m bench.projection rules --proto.
"""PROTOTYPE (bench only): gaf/derive.py with proposed speed-ups, to measure them.

A copy of gaf/derive.py; nothing in gaf imports it. ``python -m bench.projection
rules --proto`` runs it beside the original on the same input and checks that
it reaches the same conclusions with the same justifications in the same order
(the ``seq`` of every justification). The changes, each marked ``PROTO``:

1. Semi-naive rounds read the last round's new facts directly (in the order the
   index holds them) instead of scanning every derived fact of the predicate
   and skipping those not new: O(|delta|) per restricted clause, not O(|IDB|).
2. Derived facts are also indexed by (predicate, subject) and (predicate,
   object), so an IDB atom with a bound argument is a dict lookup instead of a
   scan of all derived facts of that predicate (quadratic for right-recursive
   rules such as ``owns(?X, ?Z), controls(?Z, ?Y)``).
3. Clauses are compiled once per evaluation: RuleRef resolved once (it builds a
   pydantic Atom per call otherwise), each term classified once (variable,
   wildcard or constant) instead of calling is_var/is_wild per match.
4. The head ground is computed once per justification (it was computed twice,
   each time converting the bindings back to a dict).

Original docstring:

Three-valued, stratified, semi-naive evaluation of derivation rules.

Pure: it reads a fact base and returns what the rules conclude, writing nothing.
Truth is Kleene's: TRUE, FALSE or UNKNOWN. A premise that is unresolved makes the
conclusion unknown rather than false; a ``not`` over claims is true only where the
fact base says the scope is closed (a completeness declaration), and unknown
elsewhere; a ``not`` over another rule's conclusion negates what that rule derived,
which is complete once the lower stratum is done.

Every conclusion keeps each of its justifications — rule, body, bindings, the
premises that held, the closed scopes whose absence it relied on — so a fact with
two independent supports survives the loss of one. A justification only cites
premises found before it, so the proof objects form a DAG even when the rules
are recursive.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any, Literal, Protocol

from gaf.rules import (
    Atom,
    Compare,
    DerivationRule,
    Not,
    RuleRef,
    Term,
    check_rules,
    is_var,
    is_wild,
    resolve,
)


class Truth(IntEnum):
    """Kleene's three truth values, ordered so that AND is min and OR is max."""

    FALSE = 0
    UNKNOWN = 1
    TRUE = 2

    def negate(self) -> Truth:
        return Truth(2 - self)


#: A ground atom: (predicate, subject, object-or-value or None).
Ground = tuple[str, Any, Any]


@dataclass(frozen=True)
class Entry:
    """What the fact base holds for one ground atom, and the record that says so."""

    ground: Ground
    truth: Truth
    evidence: str | None = None


class FactBase(Protocol):
    """The facts rules read: accepted, rejected and unknown propositions, and closed scopes."""

    def match(self, predicate: str, subject: Any, obj: Any) -> list[Entry]:
        """Entries for a predicate whose subject/object equal the given ones (None: any)."""
        ...

    def closed(self, predicate: str, subject: Any, obj: Any) -> str | None:
        """The id of a completeness declaration that closes this pattern, if any."""
        ...


@dataclass(frozen=True, slots=True)  # PROTO 5: slots
class Premise:
    """One atom a justification used, with its truth and where it came from."""

    ground: Ground
    truth: Truth
    derived: bool
    evidence: str | None


@dataclass(slots=True)  # PROTO 5: slots
class Justification:
    """One way a conclusion was reached: the proof object of a derivation."""

    rule: str
    body: int
    bindings: tuple[tuple[str, Any], ...]
    truth: Truth
    confidence: float
    premises: tuple[Premise, ...]
    negatives: tuple[str, ...]
    unresolved: tuple[Ground, ...]
    #: when it was found: a justification only cites premises found before it
    seq: int = 0

    @property
    def key(self) -> tuple:
        return (self.rule, self.body, self.bindings)


@dataclass
class Derived:
    """A conclusion: its truth (the best of its justifications) and every justification."""

    ground: Ground
    truth: Truth = Truth.FALSE
    justifications: dict[tuple, Justification] = field(default_factory=dict)


@dataclass
class Conclusions:
    """What a rule set concluded over a fact base."""

    derived: dict[Ground, Derived]
    open_predicates: set[str]
    rounds: int
    #: patterns that stopped a body because nothing was known and the scope was open
    dead_ends: list[tuple[str, Atom, dict[str, Any]]]

    def truth(self, ground: Ground) -> Truth:
        d = self.derived.get(ground)
        return d.truth if d else Truth.FALSE


Mode = Literal["semi-naive", "naive"]


def evaluate_rules(rules: Sequence[DerivationRule], facts: FactBase, *, mode: Mode = "semi-naive") -> Conclusions:
    """Evaluate the rules stratum by stratum to a fixpoint over ``facts``."""
    strata = check_rules(rules)
    by_ref = {r.ref: r for r in rules}
    state = _State(facts=facts, by_ref=by_ref, derived={}, idb={r.head.predicate for r in rules})
    for stratum in strata:
        state.current = {r.head.predicate for r in stratum}
        _fixpoint(state, stratum, mode)
        state.done |= state.current
    return Conclusions(state.derived, state.open, state.rounds, state.dead_ends)


# PROTO 3: terms classified once. A compiled atom keeps, per argument, its kind
# and its value (variable name or constant).
_NONE, _WILD, _VAR, _CONST = 0, 1, 2, 3


def _kind(term: Any) -> int:
    if term is None:
        return _NONE
    if is_wild(term):
        return _WILD
    if is_var(term):
        return _VAR
    return _CONST


class _CAtom:
    __slots__ = ("atom", "predicate", "sk", "sv", "ok", "ov", "vars")

    def __init__(self, atom: Atom):
        self.atom = atom
        self.predicate = atom.predicate
        self.sk, self.sv = _kind(atom.subject), atom.subject
        self.ok, self.ov = _kind(atom.object), atom.object
        self.vars = atom.vars()


@dataclass
class _State:
    facts: FactBase
    by_ref: dict[str, DerivationRule]
    derived: dict[Ground, Derived]
    idb: set[str]
    current: set[str] = field(default_factory=set)
    done: set[str] = field(default_factory=set)
    open: set[str] = field(default_factory=set)
    rounds: int = 0
    seq: int = 0
    dead_ends: list = field(default_factory=list)
    #: derived grounds by predicate, for matching
    index: dict[str, dict[Ground, Derived]] = field(default_factory=lambda: defaultdict(dict))
    #: PROTO 2: derived grounds by (predicate, subject) and (predicate, object), in index order
    by_subject: dict[tuple[str, Any], dict[Ground, Derived]] = field(default_factory=lambda: defaultdict(dict))
    by_object: dict[tuple[str, Any], dict[Ground, Derived]] = field(default_factory=lambda: defaultdict(dict))
    #: PROTO 1: where each ground sits in the index (its insertion number)
    position: dict[Ground, int] = field(default_factory=dict)
    #: PROTO 3: compiled clauses, by the id of the clause object of the rule
    compiled: dict[int, _CAtom] = field(default_factory=dict)


def _compile(state: _State, clause: Atom | RuleRef) -> _CAtom:
    c = state.compiled.get(id(clause))
    if c is None:
        # The rules outlive the evaluation, so a clause's id is stable while this cache lives.
        c = state.compiled[id(clause)] = _CAtom(resolve(clause, state.by_ref))
    return c


def _fixpoint(state: _State, stratum: list[DerivationRule], mode: Mode) -> None:
    delta: dict[str, list[Ground]] | None = None  # None: the first round sees everything
    while True:
        state.rounds += 1
        changed: set[Ground] = set()
        for r in stratum:
            for number, b in enumerate(r.bodies):
                for restrict in _restrictions(state, b.when, delta, mode):
                    for ground, j in _solve(state, r, number, restrict):
                        if _record(state, ground, j):  # PROTO 4: the ground comes with the justification
                            changed.add(ground)
        if not changed:
            return
        # PROTO 1: the new facts by predicate (and by subject, by object), in the order the index holds them
        delta = {}
        for g in sorted(changed, key=state.position.__getitem__):
            for key in (g[0], (g[0], 0, g[1]), (g[0], 1, g[2])):
                delta.setdefault(key, []).append(g)


def _restrictions(state: _State, clauses: list, delta: dict[str, list[Ground]] | None, mode: Mode) -> Iterator[tuple[int, dict[str, list[Ground]]] | None]:
    """Which body position must match the last round's new facts (semi-naive)."""
    if delta is None or mode == "naive":
        yield None
        return
    for position, clause in enumerate(clauses):
        if isinstance(clause, (Atom, RuleRef)) and _compile(state, clause).predicate in state.current:
            yield (position, delta)


def _record(state: _State, ground: Ground, j: Justification) -> bool:
    d = state.derived.get(ground)
    if d is None:
        d = state.derived[ground] = Derived(ground)
        state.index[ground[0]][ground] = d
        state.by_subject[(ground[0], ground[1])][ground] = d
        state.by_object[(ground[0], ground[2])][ground] = d
        state.position[ground] = len(state.position)
    key = j.key
    old = d.justifications.get(key)
    if old is not None and old.truth >= j.truth:
        return False
    state.seq += 1
    j.seq = state.seq
    d.justifications[key] = j
    before = d.truth
    d.truth = max(d.truth, j.truth)
    return d.truth != before or j.truth == Truth.TRUE


def _ground(a: Atom, binding: dict[str, Any]) -> Ground:
    return (a.predicate, _value(a.subject, binding), _value(a.object, binding) if a.object is not None else None)


def _cground(c: _CAtom, binding: dict[str, Any]) -> Ground:
    return (c.predicate, _cvalue(c.sk, c.sv, binding), _cvalue(c.ok, c.ov, binding) if c.ok != _NONE else None)


def _value(term: Term | None, binding: dict[str, Any]) -> Any:
    if is_var(term):
        return binding.get(term)  # type: ignore[arg-type]
    return None if is_wild(term) else term


def _cvalue(kind: int, term: Any, binding: dict[str, Any]) -> Any:
    if kind == _VAR:
        return binding.get(term)
    return term if kind == _CONST else None


def _cbound_value(kind: int, term: Any, binding: dict[str, Any]) -> Any:
    """The value of a term if it is bound (a constant, or a bound variable), else None."""
    if kind == _CONST:
        return term
    if kind == _VAR and term in binding:
        return binding[term]
    return None


def _bound(term: Term | None, binding: dict[str, Any]) -> bool:
    return term is not None and not is_wild(term) and (not is_var(term) or term in binding)


@dataclass(slots=True)  # PROTO 5: slots
class _Branch:
    binding: dict[str, Any]
    truth: Truth
    premises: list[Premise]
    negatives: list[str]
    unresolved: list[Ground]


def _solve(state: _State, r: DerivationRule, number: int, restrict) -> Iterator[tuple[Ground, Justification]]:
    b = r.bodies[number]
    head = _compile(state, r.head)
    ref = r.ref
    start = _Branch({}, Truth.TRUE, [], [], [])
    for branch in _clauses(state, r, b.when, 0, start, restrict):
        bindings = tuple(sorted(branch.binding.items()))
        # PROTO 5: no generator, no sort of empty lists
        weakest = 1.0
        for p in branch.premises:
            if p.derived:
                c = _confidence(state, p.ground)
                if c < weakest:
                    weakest = c
        yield _cground(head, branch.binding), Justification(
            rule=ref,
            body=number,
            bindings=bindings,
            truth=branch.truth,
            confidence=round(b.confidence * weakest, 12),
            premises=tuple(branch.premises),
            negatives=tuple(sorted(set(branch.negatives))) if branch.negatives else (),
            unresolved=tuple(sorted(set(branch.unresolved), key=repr)) if branch.unresolved else (),
        )


def _confidence(state: _State, ground: Ground) -> float:
    d = state.derived.get(ground)
    if d is None:
        return 1.0
    return max((j.confidence for j in d.justifications.values() if j.truth == d.truth), default=1.0)


def _clauses(state: _State, r: DerivationRule, clauses: list, i: int, branch: _Branch, restrict) -> Iterator[_Branch]:
    if i == len(clauses):
        yield branch
        return
    clause = clauses[i]
    if isinstance(clause, Compare):
        if _compare(clause, branch.binding):
            yield from _clauses(state, r, clauses, i + 1, branch, restrict)
        return
    if isinstance(clause, Not):
        yield from _negation(state, r, clauses, i, branch, restrict)
        return
    a = _compile(state, clause)
    only = restrict[1] if restrict is not None and restrict[0] == i else None
    entries = _entries(state, a, branch.binding, only)
    usable = [e for e in entries if e.truth != Truth.FALSE]
    if usable:
        derived = a.predicate in state.idb
        for e in usable:
            binding = _unify(a, e.ground, branch.binding)
            if binding is None:
                continue
            yield from _clauses(
                state, r, clauses, i + 1,
                _Branch(binding, min(branch.truth, e.truth), [*branch.premises, Premise(e.ground, e.truth, derived, e.evidence)],
                        branch.negatives, branch.unresolved),
                restrict,
            )  # fmt: skip
    if usable or entries or only is not None:
        return  # matched, or explicitly false, or this pass only looks at new facts
    # Nothing is known about this atom: false inside a closed scope, else unknown.
    if _absence(state, a, branch.binding) is not None:
        return
    if a.vars - branch.binding.keys():
        _dead_end(state, r, a.atom, branch.binding)
        return
    ground = _cground(a, branch.binding)
    yield from _clauses(
        state, r, clauses, i + 1,
        _Branch(branch.binding, min(branch.truth, Truth.UNKNOWN), branch.premises, branch.negatives, [*branch.unresolved, ground]),
        restrict,
    )  # fmt: skip


def _negation(state: _State, r: DerivationRule, clauses: list, i: int, branch: _Branch, restrict) -> Iterator[_Branch]:
    a = _compile(state, clauses[i].not_)
    entries = _entries(state, a, branch.binding, None)
    premises, negatives, unresolved = branch.premises, branch.negatives, branch.unresolved
    derived = a.predicate in state.idb
    if not entries:
        closed = _absence(state, a, branch.binding)
        if closed is None:  # nothing known and the scope is open
            inner = Truth.UNKNOWN
            unresolved = [*unresolved, _cground(a, branch.binding)]
        else:
            inner = Truth.FALSE
            if closed:  # the completeness declaration this conclusion rests on
                negatives = [*negatives, closed]
    else:
        inner = max(e.truth for e in entries)
        if inner == Truth.FALSE:  # explicitly denied or rejected: not the same as absent
            premises = [*premises, *(Premise(e.ground, e.truth, derived, e.evidence) for e in entries)]
        elif inner == Truth.UNKNOWN:
            unresolved = [*unresolved, *(e.ground for e in entries if e.truth == Truth.UNKNOWN)]
    value = inner.negate()
    if value == Truth.FALSE:
        return
    yield from _clauses(state, r, clauses, i + 1, _Branch(branch.binding, min(branch.truth, value), premises, negatives, unresolved), restrict)


def _absence(state: _State, a: _CAtom, binding: dict[str, Any]) -> str | None:
    """Why absence means false here: a declaration id, "" when the rules settle it, None when unknown.

    A derived predicate is defined completely by its rules once its stratum is
    done — unless some body stopped on an open pattern it could not bind, which
    leaves the predicate open. Inside the stratum being computed, a missing
    conclusion is simply not derived yet.
    """
    if a.predicate in state.idb:
        if a.predicate in state.current or a.predicate not in state.open:
            return ""
        return None
    subject = _cbound_value(a.sk, a.sv, binding)
    obj = _cbound_value(a.ok, a.ov, binding)
    return state.facts.closed(a.predicate, subject, obj)


def _dead_end(state: _State, r: DerivationRule, a: Atom, binding: dict[str, Any]) -> None:
    """A body stopped on an open pattern it could not bind: its head may be unknown."""
    state.dead_ends.append((r.ref, a, dict(binding)))
    state.open.add(r.head.predicate)


def _entries(state: _State, a: _CAtom, binding: dict[str, Any], only: dict[str, list[Ground]] | None) -> list[Entry]:
    subject = _cbound_value(a.sk, a.sv, binding)
    obj = _cbound_value(a.ok, a.ov, binding)
    predicate = a.predicate
    if predicate not in state.idb:
        return state.facts.match(predicate, subject, obj)
    derived = state.derived
    if only is not None:
        # PROTO 1: only the last round's new facts, in index order (by a bound argument when there is one)
        key = predicate if subject is None and obj is None else (predicate, 0, subject) if subject is not None else (predicate, 1, obj)
        return [
            Entry(g, derived[g].truth) for g in only.get(key, ())
            if (subject is None or g[1] == subject) and (obj is None or g[2] == obj)
        ]  # fmt: skip
    # PROTO 2: a bound argument is a lookup
    if subject is not None and obj is not None:
        d = derived.get((predicate, subject, obj))
        return [Entry(d.ground, d.truth)] if d is not None else []
    if subject is not None:
        return [Entry(g, d.truth) for g, d in state.by_subject.get((predicate, subject), {}).items()]
    if obj is not None:
        return [Entry(g, d.truth) for g, d in state.by_object.get((predicate, obj), {}).items()]
    return [Entry(g, d.truth) for g, d in state.index.get(predicate, {}).items()]


def _unify(a: _CAtom, ground: Ground, binding: dict[str, Any]) -> dict[str, Any] | None:
    out = dict(binding)
    for kind, term, value in ((a.sk, a.sv, ground[1]), (a.ok, a.ov, ground[2])):
        if kind == _VAR:
            if term in out and out[term] != value:
                return None
            out[term] = value
        elif kind == _CONST and term != value:
            return None
    return out


def _compare(c: Compare, binding: dict[str, Any]) -> bool:
    left, right = _value(c.left, binding), _value(c.right, binding)
    numeric = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (left, right))
    if c.op in ("==", "!="):
        same = left == right and (numeric or type(left) is type(right))
        return same if c.op == "==" else not same
    if not numeric and not (isinstance(left, str) and isinstance(right, str)):
        return False
    return {"<": left < right, "<=": left <= right, ">": left > right, ">=": left >= right}[c.op]


def show(ground: Ground) -> str:
    """A ground atom as people write it: ``predicate(subject, object)``."""
    predicate, subject, target = ground
    if target is None:
        return f"{predicate}({'_' if subject is None else subject})"
    shown = target if isinstance(target, str) and target else json.dumps(target, ensure_ascii=False)
    return f"{predicate}({'_' if subject is None else subject}, {shown})"


def holds(clauses: Sequence, facts: FactBase, binding: dict[str, Any]) -> tuple[Truth, list[str], list[str]]:
    """Whether a condition holds on a fact base, three-valued, and what it rests on.

    Returns the truth (TRUE if some way of satisfying it holds, UNKNOWN if none
    holds but one might, FALSE otherwise), the evidence ids of the facts a
    holding (or best) way used, and the unresolved premises that leave it unknown.
    """
    if not clauses:
        return Truth.TRUE, [], []
    condition = DerivationRule(name="condition", head=Atom(predicate="condition", subject="?subject"), bodies=[{"when": list(clauses)}])
    state = _State(facts=facts, by_ref={}, derived={}, idb=set())
    best: _Branch | None = None
    unknown: set[str] = set()
    for branch in _clauses(state, condition, condition.bodies[0].when, 0, _Branch(dict(binding), Truth.TRUE, [], [], []), None):
        if branch.truth == Truth.UNKNOWN:
            unknown.update(show(g) for g in branch.unresolved)
            unknown.update(show(p.ground) for p in branch.premises if p.truth == Truth.UNKNOWN)
        if best is None or branch.truth > best.truth:
            best = branch
    for _, a, b in state.dead_ends:
        unknown.add(show(_ground(a, b)))
    truth = best.truth if best is not None else (Truth.UNKNOWN if state.dead_ends else Truth.FALSE)
    used = sorted({p.evidence for p in best.premises if p.evidence}) if best is not None else []
    return truth, used, sorted(unknown) if truth != Truth.TRUE else []
