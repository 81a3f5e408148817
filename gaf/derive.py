"""Three-valued, stratified, semi-naive evaluation of derivation rules.

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

from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any, Literal, Protocol

from gaf.records import statement_text
from gaf.rules import (
    Atom,
    Body,
    Clause,
    Compare,
    CompiledRule,
    DerivationRule,
    Not,
    Program,
    RuleRef,
    Term,
    compile_rules,
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

#: Which body position must match the last round's new facts (semi-naive), or None: every position may match anything.
Restriction = tuple[int, set[Ground]] | None

#: A body that stopped on an open pattern it could not bind: the rule, the pattern, the bindings so far.
DeadEnd = tuple[str, Atom, dict[str, Any]]


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


@dataclass(frozen=True)
class Premise:
    """One atom a justification used, with its truth and where it came from."""

    ground: Ground
    truth: Truth
    derived: bool
    evidence: str | None


#: What tells one justification of a conclusion from another: its rule, body and bindings.
JustificationKey = tuple[str, int, tuple[tuple[str, Any], ...]]


@dataclass
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
    def key(self) -> JustificationKey:
        return (self.rule, self.body, self.bindings)


@dataclass
class Derived:
    """A conclusion: its truth (the best of its justifications) and every justification."""

    ground: Ground
    truth: Truth = Truth.FALSE
    justifications: dict[JustificationKey, Justification] = field(default_factory=dict)


@dataclass
class Conclusions:
    """What a rule set concluded over a fact base."""

    derived: dict[Ground, Derived]
    open_predicates: set[str]
    rounds: int
    #: patterns that stopped a body because nothing was known and the scope was open
    dead_ends: list[DeadEnd]

    def truth(self, ground: Ground) -> Truth:
        d = self.derived.get(ground)
        return d.truth if d else Truth.FALSE


Mode = Literal["semi-naive", "naive"]


def evaluate_rules(rules: Sequence[DerivationRule] | Program, facts: FactBase, *, mode: Mode = "semi-naive") -> Conclusions:
    """Evaluate a program (or the rules, compiled here) stratum by stratum to a fixpoint over ``facts``.

    The program's clauses are already resolved: evaluation never goes back to the
    parser or the resolver."""
    program = rules if isinstance(rules, Program) else compile_rules(rules)
    state = _State(facts=facts, by_ref={}, derived={}, idb=set(program.heads))
    for stratum in program.strata:
        state.current = {r.rule.head.predicate for r in stratum}
        _fixpoint(state, stratum, mode)
        state.done |= state.current
    return Conclusions(state.derived, state.open, state.rounds, state.dead_ends)


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
    dead_ends: list[DeadEnd] = field(default_factory=list)
    #: derived grounds by predicate, for matching
    index: dict[str, dict[Ground, Derived]] = field(default_factory=lambda: defaultdict(dict))


def _fixpoint(state: _State, stratum: Sequence[CompiledRule], mode: Mode) -> None:
    delta: set[Ground] | None = None  # None: the first round sees everything
    while True:
        state.rounds += 1
        changed: set[Ground] = set()
        for compiled in stratum:
            r = compiled.rule
            for number, clauses in enumerate(compiled.bodies):
                for restrict in _restrictions(state, clauses, delta, mode):
                    for j in _solve(state, r, number, clauses, restrict):
                        if _record(state, r, j):
                            changed.add(_ground(r.head, dict(j.bindings)))
        if not changed:
            return
        delta = changed


def _restrictions(state: _State, clauses: Sequence[Clause], delta: set[Ground] | None, mode: Mode) -> Iterator[Restriction]:
    """Which body position must match the last round's new facts (semi-naive)."""
    if delta is None or mode == "naive":
        yield None
        return
    for position, clause in enumerate(clauses):
        if isinstance(clause, (Atom, RuleRef)) and _atom(state, clause).predicate in state.current:
            yield (position, delta)


def _record(state: _State, r: DerivationRule, j: Justification) -> bool:
    ground = _ground(r.head, dict(j.bindings))
    d = state.derived.get(ground)
    if d is None:
        d = state.derived[ground] = Derived(ground)
        state.index[ground[0]][ground] = d
    if j.key in d.justifications and d.justifications[j.key].truth >= j.truth:
        return False
    state.seq += 1
    j.seq = state.seq
    d.justifications[j.key] = j
    before = d.truth
    d.truth = max(d.truth, j.truth)
    return d.truth != before or j.truth == Truth.TRUE


def _ground(a: Atom, binding: dict[str, Any]) -> Ground:
    return (a.predicate, _value(a.subject, binding), _value(a.object, binding) if a.object is not None else None)


def _value(term: Term | None, binding: dict[str, Any]) -> Any:
    if is_var(term):
        return binding.get(term)
    return None if is_wild(term) else term


def _bound(term: Term | None, binding: dict[str, Any]) -> bool:
    return term is not None and not is_wild(term) and (not is_var(term) or term in binding)


@dataclass
class _Branch:
    binding: dict[str, Any]
    truth: Truth
    premises: list[Premise]
    negatives: list[str]
    unresolved: list[Ground]


def _solve(
    state: _State, r: DerivationRule, number: int, clauses: Sequence[Clause], restrict: Restriction
) -> Iterator[Justification]:
    b = r.bodies[number]
    start = _Branch({}, Truth.TRUE, [], [], [])
    for branch in _clauses(state, r, clauses, 0, start, restrict):
        bindings = tuple(sorted(branch.binding.items()))
        confidence = b.confidence * min(
            (_confidence(state, p.ground) for p in branch.premises if p.derived), default=1.0
        )
        yield Justification(
            rule=r.ref,
            body=number,
            bindings=bindings,
            truth=branch.truth,
            confidence=round(confidence, 12),
            premises=tuple(branch.premises),
            negatives=tuple(sorted(set(branch.negatives))),
            unresolved=tuple(sorted(set(branch.unresolved), key=repr)),
        )


def _confidence(state: _State, ground: Ground) -> float:
    d = state.derived.get(ground)
    if d is None:
        return 1.0
    return max((j.confidence for j in d.justifications.values() if j.truth == d.truth), default=1.0)


def _atom(state: _State, clause: Atom | RuleRef) -> Atom:
    """The atom a clause stands for: itself in a compiled program; a rule reference in the
    raw clauses ``holds`` is asked about is resolved against the rules it was given."""
    return clause if isinstance(clause, Atom) else resolve(clause, state.by_ref)


def _clauses(
    state: _State, r: DerivationRule, clauses: Sequence[Clause], i: int, branch: _Branch, restrict: Restriction
) -> Iterator[_Branch]:
    if i == len(clauses):
        yield branch
        return
    clause = clauses[i]
    if isinstance(clause, Compare):
        if _compare(clause, branch.binding):
            yield from _clauses(state, r, clauses, i + 1, branch, restrict)
        return
    if isinstance(clause, Not):
        yield from _negation(state, r, clause, clauses, i, branch, restrict)
        return
    a = _atom(state, clause)
    only = restrict[1] if restrict is not None and restrict[0] == i else None
    entries = _entries(state, a, branch.binding, only)
    usable = [e for e in entries if e.truth != Truth.FALSE]
    for e in usable:
        binding = _unify(a, e.ground, branch.binding)
        if binding is None:
            continue
        derived = a.predicate in state.idb
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
    if a.vars() - branch.binding.keys():
        _dead_end(state, r, a, branch.binding)
        return
    ground = _ground(a, branch.binding)
    yield from _clauses(
        state, r, clauses, i + 1,
        _Branch(branch.binding, min(branch.truth, Truth.UNKNOWN), branch.premises, branch.negatives, [*branch.unresolved, ground]),
        restrict,
    )  # fmt: skip


def _negation(
    state: _State, r: DerivationRule, clause: Not, clauses: Sequence[Clause], i: int, branch: _Branch, restrict: Restriction
) -> Iterator[_Branch]:
    """``clause``, the ``i``-th of ``clauses``, on this branch; then the clauses after it."""
    a = _atom(state, clause.not_)
    entries = _entries(state, a, branch.binding, None)
    premises, negatives, unresolved = branch.premises, branch.negatives, branch.unresolved
    derived = a.predicate in state.idb
    if not entries:
        closed = _absence(state, a, branch.binding)
        if closed is None:  # nothing known and the scope is open
            inner = Truth.UNKNOWN
            unresolved = [*unresolved, _ground(a, branch.binding)]
        else:
            inner = Truth.FALSE
            if closed:  # the completeness declaration this conclusion rests on
                negatives = [*negatives, closed]
    else:
        inner = max(e.truth for e in entries)
        if inner == Truth.FALSE and not derived and not _ground_pattern(a, branch.binding):
            # Denials of some groundings say nothing of the others: only a closed scope does.
            closed = _absence(state, a, branch.binding)
            if closed is None:
                inner = Truth.UNKNOWN
                unresolved = [*unresolved, _ground(a, branch.binding)]
            elif closed:
                negatives = [*negatives, closed]
        if inner == Truth.FALSE:  # explicitly denied or rejected: not the same as absent
            premises = [*premises, *(Premise(e.ground, e.truth, derived, e.evidence) for e in entries)]
        elif inner == Truth.UNKNOWN:
            unresolved = [*unresolved, *(e.ground for e in entries if e.truth == Truth.UNKNOWN)]
    value = inner.negate()
    if value == Truth.FALSE:
        return
    yield from _clauses(state, r, clauses, i + 1, _Branch(branch.binding, min(branch.truth, value), premises, negatives, unresolved), restrict)


def _ground_pattern(a: Atom, binding: dict[str, Any]) -> bool:
    """Whether an atom names one proposition (a missing object stands for a unary predicate)."""
    return _bound(a.subject, binding) and (a.object is None or _bound(a.object, binding))


def _absence(state: _State, a: Atom, binding: dict[str, Any]) -> str | None:
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
    subject = _value(a.subject, binding) if _bound(a.subject, binding) else None
    obj = _value(a.object, binding) if _bound(a.object, binding) else None
    return state.facts.closed(a.predicate, subject, obj)


def _dead_end(state: _State, r: DerivationRule, a: Atom, binding: dict[str, Any]) -> None:
    """A body stopped on an open pattern it could not bind: its head may be unknown."""
    state.dead_ends.append((r.ref, a, dict(binding)))
    state.open.add(r.head.predicate)


def _entries(state: _State, a: Atom, binding: dict[str, Any], only: set[Ground] | None) -> list[Entry]:
    subject = _value(a.subject, binding) if _bound(a.subject, binding) else None
    obj = _value(a.object, binding) if _bound(a.object, binding) else None
    if a.predicate not in state.idb:
        return state.facts.match(a.predicate, subject, obj)
    out = []
    for ground, d in state.index.get(a.predicate, {}).items():
        if only is not None and ground not in only:
            continue
        if (subject is None or ground[1] == subject) and (obj is None or ground[2] == obj):
            out.append(Entry(ground, d.truth))
    return out


def _unify(a: Atom, ground: Ground, binding: dict[str, Any]) -> dict[str, Any] | None:
    out = dict(binding)
    for term, value in ((a.subject, ground[1]), (a.object, ground[2])):
        if term is None or is_wild(term):
            continue
        if is_var(term):
            if term in out and out[term] != value:
                return None
            out[term] = value
        elif term != value:
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
    ordered: dict[str, bool] = {"<": left < right, "<=": left <= right, ">": left > right, ">=": left >= right}
    return ordered[c.op]


def show(ground: Ground) -> str:
    """A ground atom as people write it: ``predicate(subject, object)``, through the one
    statement text (``gaf.records.ledger.statement_text``).

    A ground atom differs from a statement in two ways, kept here: it holds one target for
    object and value, so non-empty text is written bare, as an object is; and a pattern's
    open subject (None) is written ``_``."""
    predicate, subject, target = ground
    as_object = target if isinstance(target, str) and target else None
    return statement_text(predicate, "_" if subject is None else subject, as_object, None if as_object is not None else target)


def holds(
    clauses: Sequence[Clause], facts: FactBase, binding: dict[str, Any], by_ref: dict[str, DerivationRule] | None = None
) -> tuple[Truth, list[str], list[str]]:
    """Whether a condition holds on a fact base, three-valued, and what it rests on.

    Returns the truth (TRUE if some way of satisfying it holds, UNKNOWN if none
    holds but one might, FALSE otherwise), the evidence ids of the facts a
    holding (or best) way used, and the unresolved premises that leave it unknown.
    """
    truth, used, unknown = holds_grounds(clauses, facts, binding, by_ref)
    return truth, used, sorted({show(g) for g in unknown})


def holds_grounds(
    clauses: Sequence[Clause], facts: FactBase, binding: dict[str, Any], by_ref: dict[str, DerivationRule] | None = None
) -> tuple[Truth, list[str], set[Ground]]:
    """``holds``, with the unresolved premises as ground atoms rather than as text.

    ``by_ref`` resolves rule references in the clauses (``not paid@1(?x)``): the
    derivation rules of the policy when the clauses are a rule body."""
    if not clauses:
        return Truth.TRUE, [], set()
    head = Atom(predicate="condition", subject="?subject")
    condition = DerivationRule(name="condition", head=head, bodies=[Body(when=list(clauses))])
    state = _State(facts=facts, by_ref=by_ref or {}, derived={}, idb=set())
    best: _Branch | None = None
    unknown: set[Ground] = set()
    for branch in _clauses(state, condition, condition.bodies[0].when, 0, _Branch(dict(binding), Truth.TRUE, [], [], []), None):
        if branch.truth == Truth.UNKNOWN:
            unknown.update(branch.unresolved)
            unknown.update(p.ground for p in branch.premises if p.truth == Truth.UNKNOWN)
        if best is None or branch.truth > best.truth:
            best = branch
    for _, a, b in state.dead_ends:
        unknown.add(_ground(a, b))
    truth = best.truth if best is not None else (Truth.UNKNOWN if state.dead_ends else Truth.FALSE)
    used = sorted({p.evidence for p in best.premises if p.evidence}) if best is not None else []
    return truth, used, unknown if truth != Truth.TRUE else set()
