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

Derived facts are indexed by predicate, by (predicate, subject) and by (predicate,
object), so a derived atom with a bound argument is a lookup rather than a scan; a
semi-naive round reads the last round's new facts through the same index. Every
lookup lists its facts in the order they were first found, so the justifications,
and the order they are found in, do not depend on which lookup answered.
"""

from __future__ import annotations

import gc
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from enum import IntEnum
from itertools import chain
from operator import is_, itemgetter
from typing import Any, Literal, NamedTuple, Protocol

import gaf.arith
from gaf.arith import Bound, Sign, aggregate, apply, bare_members, compare, in_unit, sign_of
from gaf.records import statement_text
from gaf.records.base import kept
from gaf.rules import (
    Aggregate,
    Arith,
    Atom,
    Clause,
    Compare,
    CompiledRule,
    DerivationRule,
    Let,
    Not,
    Program,
    RuleRef,
    Term,
    compile_rules,
    is_var,
    is_wild,
    provided,
    resolve,
    schedule,
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

#: Where a pattern leaves an object open (``qty(d1, _)``): a ground atom holding it stands for
#: every proposition the pattern matches, not for one; an open subject is None.
ANY = "_"


def is_pattern(ground: Ground) -> bool:
    """Whether a ground atom is a pattern (an open subject or object), not one proposition."""
    return ground[1] is None or ground[2] == ANY


#: A body that stopped on an open pattern it could not bind: the rule, the pattern, the bindings so far.
DeadEnd = tuple[str, Atom, dict[str, Any]]


class Entry(NamedTuple):
    """One ground atom as rules read it: its truth, the record that says so, and whether
    the rules derived it. What a fact base holds, and what a justification cites as a
    premise — the entry a body matched, as it was read, so citing it makes nothing new.

    A named tuple: a large aggregate cites one per member (``python -m bench aggregates``)."""

    ground: Ground
    truth: Truth
    evidence: str | None = None
    derived: bool = False


class FactBase(Protocol):
    """The facts rules read: accepted, rejected and unknown propositions, and closed scopes.

    A fact base may also let evaluation read an aggregate over its facts as a join (``_joined``):
    then it has ``closed_everywhere(predicate)``, the declaration closing every pattern of the
    predicate, if one does, and ``lookup(predicate, position)``, its entries by subject (1) or by
    object (2) as an ``EntryIndex``, or all of them (0), in ``match``'s order; and, optionally,
    ``unique_grounds(predicate)``, whether no two of its entries share a ground."""

    def match(self, predicate: str, subject: Any, obj: Any) -> list[Entry]:
        """Entries for a predicate whose subject/object equal the given ones (None: any)."""
        ...

    def closed(self, predicate: str, subject: Any, obj: Any) -> str | None:
        """The id of a completeness declaration that closes this pattern, if any."""
        ...


class EntryIndex:
    """A predicate's entries by one argument, each key's in the fact base's order: a key with
    one entry (most keys of most predicates) maps to it in ``one``, a key with more to their
    list in ``many`` (its first also in ``one``). Not a list for every key: a list is an object
    the cycle collector walks, and a fact base of 100,000 facts would make as many."""

    __slots__ = ("one", "many")

    def __init__(self, entries: Iterable[Entry], position: int):
        self.one: dict[Any, Entry] = {}
        self.many: dict[Any, list[Entry]] = {}
        one, many = self.one, self.many
        for e in entries:
            key = e[0][position]
            first = one.get(key)
            if first is None:
                one[key] = e
                continue
            bucket = many.get(key)
            if bucket is None:
                many[key] = [first, e]
            else:
                bucket.append(e)

    def get(self, key: Any, default: Sequence[Entry] = ()) -> Sequence[Entry]:
        """The entries under ``key``, in order (``default`` if none)."""
        bucket = self.many.get(key)
        if bucket is not None:
            return bucket
        e = self.one.get(key)
        return default if e is None else (e,)


def declared_sign(facts: FactBase, predicate: str) -> Sign | None:
    """What the fact base's policy declares of a predicate's values (``sign``), if it says
    anything: a fact base without declarations bounds no sum over an open scope."""
    sign = getattr(facts, "sign", None)
    return sign(predicate) if sign is not None else None


#: One atom a justification used: the entry its body matched (``Entry``).
Premise = Entry
_DERIVED = itemgetter(3)  # an entry's ``derived``, read without a Python-level loop


#: What tells one justification of a conclusion from another: its rule, body and bindings.
JustificationKey = tuple[str, int, tuple[tuple[str, Any], ...]]


@dataclass(slots=True)
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


@dataclass(frozen=True, slots=True, order=True)
class LimitHit:
    """A limit evaluation hit, said rather than passed over: an aggregate of ``rule`` (with the
    values bound around it) whose members that might hold are linked through more unknown
    propositions than ``gaf.arith.COMPLETED_AT_MOST`` completes. Those members were each taken
    to come or go on their own: its interval holds every value the data allows, but may be
    wider, and a comparison with it may be unknown where every completion would agree."""

    rule: str
    bindings: tuple[tuple[str, str], ...]
    propositions: int
    #: the limit it went past
    limit: int

    def text(self) -> str:
        where = ", ".join(f"{k}={v if len(v) <= 80 else v[:79] + '…'}" for k, v in self.bindings)  # a long text shortened
        return (f"{self.rule}{f' ({where})' if where else ''}: an aggregate's members rest on {self.propositions} linked unknown "
                f"propositions, past the {self.limit} gaf completes; each was taken on its own, so its interval may be "
                f"wider than the data allows")  # fmt: skip


def limits_of(hits: Sequence[LimitHit]) -> list[LimitHit]:
    """Each limit hit once, in order (an aggregate met again in a later round is one hit)."""
    return sorted(set(hits))


@dataclass
class Conclusions:
    """What a rule set concluded over a fact base."""

    derived: dict[Ground, Derived]
    open_predicates: set[str]
    rounds: int
    #: patterns that stopped a body because nothing was known and the scope was open
    dead_ends: list[DeadEnd]
    #: limits evaluation hit (``LimitHit``): said in the output and in the closure's record
    limits: list[LimitHit] = field(default_factory=list)

    def truth(self, ground: Ground) -> Truth:
        d = self.derived.get(ground)
        return d.truth if d else Truth.FALSE


Mode = Literal["semi-naive", "naive"]


def evaluate_rules(rules: Sequence[DerivationRule] | Program, facts: FactBase, *, mode: Mode = "semi-naive") -> Conclusions:
    """Evaluate a program (or the rules, compiled here) stratum by stratum to a fixpoint over ``facts``.

    The program's clauses are already resolved: evaluation never goes back to the
    parser or the resolver."""
    program = rules if isinstance(rules, Program) else compile_rules(rules)
    state = _State(facts=facts, idb=set(program.heads), joins={})
    strata = []
    for stratum in program.strata:
        current = {r.rule.head.predicate for r in stratum}
        bodies = _bodies(stratum, current)
        strata.append((current, bodies))
        for body in bodies:
            state.bodies_of.setdefault(body.head.predicate, []).append(body)
    with _cyclic_gc_paused():
        for current, bodies in strata:
            state.current = current
            _fixpoint(state, bodies, mode)
            state.done |= state.current
    return Conclusions(state.index.grounds, state.open, state.rounds, state.dead_ends, limits_of(state.limits))


@contextmanager
def _cyclic_gc_paused() -> Iterator[None]:
    """Python's cycle collector paused while a fixpoint runs, and resumed after if it was on.

    Evaluation allocates a branch, a binding and premises per way a body holds and frees
    them by reference counting (they form no cycles), but every allocation counts towards
    the collector's next pass, and each full pass walks every live object — the whole fact
    base. Measured by ``python -m bench aggregates``: a third of a large sum's time."""
    paused = gc.isenabled()
    if paused:
        gc.disable()
    try:
        yield
    finally:
        if paused:
            gc.enable()


# ---------------------------------------------------------------------- clauses as evaluation reads them

# How an argument of a pattern is read, decided once when its clause is compiled, so
# matching never asks is_var or is_wild again.
_ABSENT, _WILD, _VAR, _CONSTANT = 0, 1, 2, 3


def _kind(term: Term | None) -> int:
    if term is None:
        return _ABSENT
    if is_wild(term):
        return _WILD
    return _VAR if is_var(term) else _CONSTANT


# boilerplate: the compiled clauses below (_Pattern, _Negation, _Test, _Let, _Aggregate) and _Body after them are
# frozen slotted dataclasses declaring their fields one per line with a type; the shapes repeat from class to class.
@dataclass(frozen=True, slots=True)
class _Pattern:
    """An atom with each argument's kind decided: what matching and grounding read."""

    atom: Atom
    predicate: str
    subject_kind: int
    subject: Any
    object_kind: int
    object: Any
    vars: frozenset[str]

    @classmethod
    def of(cls, a: Atom) -> _Pattern:
        return cls(a, a.predicate, _kind(a.subject), a.subject, _kind(a.object), a.object, frozenset(a.vars()))


@dataclass(frozen=True, slots=True)
class _Negation:
    pattern: _Pattern


#: An argument read from an expression (``?q * ?p``) rather than a term.
_EXPRESSION = 4


def _operand_kind(operand: Any) -> int:
    return _EXPRESSION if isinstance(operand, Arith) else _kind(operand)


@dataclass(frozen=True, slots=True)
class _Test:
    """A comparison with each side's kind decided."""

    left_kind: int
    left: Any
    op: str
    right_kind: int
    right: Any


@dataclass(frozen=True, slots=True)
class _Let:
    """``?v = expression``: binds ``?v``, or tests it when it is bound already."""

    var: str
    kind: int
    value: Any


@dataclass(frozen=True, slots=True)
class _Aggregate:
    """An aggregate with what it ranges over compiled, and the sign its summed value has
    by the declarations of the predicates that bind it (decided per fact base)."""

    var: str
    kind: str
    of_kind: int
    of: Any
    clauses: tuple[_Compiled, ...]
    #: the variables its clauses bind, sorted: those not bound around it tell its members apart
    binds: tuple[str, ...]


_Compiled = _Pattern | _Negation | _Test | _Let | _Aggregate


def _compiled(clause: Clause, by_ref: dict[str, DerivationRule]) -> _Compiled:
    """A clause as evaluation reads it; a rule reference (only in the raw clauses ``holds``
    is asked about — a program has none left) is resolved against ``by_ref``."""
    if isinstance(clause, Compare):
        return _Test(_operand_kind(clause.left), clause.left, clause.op, _operand_kind(clause.right), clause.right)
    if isinstance(clause, Let):
        return _Let(clause.let, _operand_kind(clause.be), clause.be)
    if isinstance(clause, Aggregate):
        # what its own clauses cannot bind comes from the body around it
        outside = clause.inner_vars() - {v for c in clause.over for v in provided(c)}
        inner = tuple(_compiled(c, by_ref) for c in schedule(clause.over, outside))
        binds = tuple(sorted({v for c in clause.over for v in provided(c)}))
        return _Aggregate(clause.let, clause.aggregate, _operand_kind(clause.of), clause.of, inner, binds)
    if isinstance(clause, Not):
        return _Negation(_Pattern.of(_atom(clause.not_, by_ref)))
    return _Pattern.of(_atom(clause, by_ref))


def _atom(clause: Atom | RuleRef, by_ref: dict[str, DerivationRule]) -> Atom:
    return clause if isinstance(clause, Atom) else resolve(clause, by_ref)


@dataclass(frozen=True, slots=True)
class _Body:
    """One body of a rule, compiled: what its justifications name, and its clauses."""

    rule: str
    head: _Pattern
    number: int
    confidence: float
    clauses: tuple[_Compiled, ...]
    #: positions of its positive atoms over what the stratum derives: where a semi-naive round restricts it
    recursive: tuple[int, ...]


def _bodies(stratum: Sequence[CompiledRule], current: set[str]) -> list[_Body]:
    """Every body of the stratum's rules, in evaluation order, compiled once for the whole fixpoint."""
    out = []
    for r in stratum:
        head = _Pattern.of(r.rule.head)
        for number, clauses in enumerate(r.bodies):
            compiled = tuple(_compiled(c, {}) for c in clauses)
            recursive = tuple(i for i, c in enumerate(compiled) if isinstance(c, _Pattern) and c.predicate in current)
            out.append(_Body(r.ref, head, number, r.rule.bodies[number].confidence, compiled, recursive))
    return out


# ---------------------------------------------------------------------- the derived facts


@dataclass(slots=True)
class _Index:
    """Derived facts, in the order they were first found, by ground, by predicate, by
    (predicate, subject) and by (predicate, object): every lookup lists its facts in that order.

    The lookups by subject and by object are built when first asked for, then kept up to
    date: a rule set that never binds an argument of a derived atom (a left-recursive rule)
    does not pay for them."""

    grounds: dict[Ground, Derived] = field(default_factory=dict)
    by_predicate: defaultdict[str, dict[Ground, Derived]] = field(default_factory=lambda: defaultdict(dict))
    by_subject: defaultdict[tuple[str, Any], dict[Ground, Derived]] | None = None
    by_object: defaultdict[tuple[str, Any], dict[Ground, Derived]] | None = None

    def add(self, d: Derived) -> None:
        g = d.ground
        self.grounds[g] = d
        self.by_predicate[g[0]][g] = d
        if self.by_subject is not None:
            self.by_subject[(g[0], g[1])][g] = d
        if self.by_object is not None:
            self.by_object[(g[0], g[2])][g] = d

    def match(self, predicate: str, subject: Any, obj: Any) -> list[Entry]:
        """The facts of a predicate whose subject/object equal the given ones (None: any)."""
        if subject is not None and obj is not None:
            d = self.grounds.get((predicate, subject, obj))
            return [] if d is None else [Entry(d.ground, d.truth, None, True)]
        if subject is not None:
            if self.by_subject is None:
                self.by_subject = _by_argument(self.grounds, 1)
            found = self.by_subject.get((predicate, subject))
        elif obj is not None:
            if self.by_object is None:
                self.by_object = _by_argument(self.grounds, 2)
            found = self.by_object.get((predicate, obj))
        else:
            found = self.by_predicate.get(predicate)
        return [Entry(g, d.truth, None, True) for g, d in found.items()] if found else []


def _by_argument(grounds: dict[Ground, Derived], position: int) -> defaultdict[tuple[str, Any], dict[Ground, Derived]]:
    """The facts by (predicate, the argument at ``position``), each group in the order of ``grounds``."""
    out: defaultdict[tuple[str, Any], dict[Ground, Derived]] = defaultdict(dict)
    for g, d in grounds.items():
        out[(g[0], g[position])][g] = d
    return out


#: Where each way a body holds goes, as it is found: recorded as a conclusion, or kept as an aggregate's member.
Emit = Callable[["_Branch"], None]

#: Which body position must match the last round's new facts (semi-naive), or None: every position may match anything.
Restriction = tuple[int, _Index] | None


@dataclass(slots=True)
class _State:
    facts: FactBase
    idb: set[str]
    current: set[str] = field(default_factory=set)
    done: set[str] = field(default_factory=set)
    open: set[str] = field(default_factory=set)
    rounds: int = 0
    seq: int = 0
    dead_ends: list[DeadEnd] = field(default_factory=list)
    index: _Index = field(default_factory=_Index)
    #: when each derived fact was first found: a round's new facts are read in this order
    position: dict[Ground, int] = field(default_factory=dict)
    #: inside an aggregate: each pattern its clauses read, with why absence there is false (None: open)
    watch: list[tuple[Ground, str | None]] | None = None
    #: every compiled body, by the predicate its head concludes: what ``_may_hold`` asks top-down
    bodies_of: dict[str, list[_Body]] = field(default_factory=dict)
    #: what ``_may_hold`` found for a derived atom of a finished stratum, and the atoms being asked now
    possible: dict[Ground, bool] = field(default_factory=dict)
    asking: set[Ground] = field(default_factory=set)
    #: limits an aggregate hit (``LimitHit``)
    limits: list[LimitHit] = field(default_factory=list)
    #: the sign of what each aggregate adds up, by the clause's id (``_sign``)
    signs: dict[int, Sign | None] = field(default_factory=dict)
    #: each aggregate over closed fact-base atoms, joined once for every binding around it (``_joined``),
    #: by the clause's id and the variables bound around it; None: each aggregate is evaluated where it
    #: is met (a condition asked once)
    joins: dict[tuple[int, tuple[str, ...]], _Join | None] | None = None


def _fixpoint(state: _State, bodies: Sequence[_Body], mode: Mode) -> None:
    delta: _Index | None = None  # None: the first round sees everything
    while True:
        state.rounds += 1
        changed: set[Ground] = set()
        for body in bodies:
            restrictions: Sequence[Restriction] = (
                [None] if delta is None or mode == "naive" else [(position, delta) for position in body.recursive]
            )
            for restrict in restrictions:
                _solve(state, body, restrict, changed)
        if not changed:
            return
        delta = _Index()
        for ground in sorted(changed, key=state.position.__getitem__):
            delta.add(state.index.grounds[ground])


def _record(state: _State, ground: Ground, j: Justification) -> bool:
    d = state.index.grounds.get(ground)
    if d is None:
        d = Derived(ground)
        state.index.add(d)
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


def _value(kind: int, term: Any, binding: dict[str, Any]) -> Any:
    """A term's value on a branch: None when it is absent, a wildcard or an unbound variable."""
    if kind == _VAR:
        return binding.get(term)
    return term if kind == _CONSTANT else None


def _bound(kind: int, term: Any, binding: dict[str, Any]) -> bool:
    return kind == _CONSTANT or (kind == _VAR and term in binding)


def _pattern(a: _Pattern, binding: dict[str, Any]) -> Ground:
    """An atom on a branch as a pattern: an unbound subject None, an unbound object ``ANY``."""
    obj = _value(a.object_kind, a.object, binding)
    if obj is None and a.object_kind in (_VAR, _WILD):
        obj = ANY
    return (a.predicate, _value(a.subject_kind, a.subject, binding), obj)


def _ground(a: _Pattern, binding: dict[str, Any]) -> Ground:
    return (a.predicate, _value(a.subject_kind, a.subject, binding), _value(a.object_kind, a.object, binding))


@dataclass(slots=True)
class _Branch:
    binding: dict[str, Any]
    truth: Truth
    premises: list[Premise]
    negatives: list[str]
    unresolved: list[Ground]


def _solve(state: _State, body: _Body, restrict: Restriction, changed: set[Ground]) -> None:
    """Each way the body holds, recorded as the head it concludes with its justification
    as soon as it is found (a later branch of the same round reads it); ``changed`` gains
    the heads whose truth or justifications that changed."""

    def conclude(branch: _Branch) -> None:
        if any(isinstance(v, Bound) for v in branch.binding.values()):
            if any(isinstance(branch.binding.get(v), Bound) for v in body.head.vars):
                # the head would carry a value known only within bounds: no conclusion, and it stays open
                _dead_end(state, body, body.head, {k: v for k, v in branch.binding.items() if not isinstance(v, Bound)})
                return
            branch.binding = {k: v for k, v in branch.binding.items() if not isinstance(v, Bound)}
        # Confidences are at most 1, so starting at 1 is min(..., default=1.0).
        weakest = 1.0
        for p in branch.premises if any(map(_DERIVED, branch.premises)) else ():
            if p.derived:
                confidence = _confidence(state, p.ground)
                if confidence < weakest:
                    weakest = confidence
        ground = _ground(body.head, branch.binding)
        j = Justification(
            rule=body.rule,
            body=body.number,
            bindings=tuple(sorted(branch.binding.items())),
            truth=branch.truth,
            confidence=round(body.confidence * weakest, 12),
            premises=tuple(branch.premises),
            negatives=tuple(sorted(set(branch.negatives))) if branch.negatives else (),
            unresolved=tuple(sorted(set(branch.unresolved), key=repr)) if branch.unresolved else (),
        )
        if _record(state, ground, j):
            changed.add(ground)

    _clauses(state, body, 0, _Branch({}, Truth.TRUE, [], [], []), restrict, conclude)


def _confidence(state: _State, ground: Ground) -> float:
    d = state.index.grounds.get(ground)
    if d is None:
        return 1.0
    return max((j.confidence for j in d.justifications.values() if j.truth == d.truth), default=1.0)


def _clauses(state: _State, body: _Body, i: int, branch: _Branch, restrict: Restriction, emit: Emit) -> None:
    """Each way the clauses from the ``i``-th on hold on this branch, handed to ``emit`` as it is found."""
    if i == len(body.clauses):
        emit(branch)
        return
    clause = body.clauses[i]
    if type(clause) is not _Pattern:  # atoms are most clauses: they pass one test, not five
        _special(state, body, clause, i, branch, restrict, emit)
        return
    a = clause
    only = restrict[1] if restrict is not None and restrict[0] == i else None
    entries = _entries(state, a, branch.binding, only)
    if state.watch is not None:
        state.watch.append((_pattern(a, branch.binding), _absence(state, a, branch.binding)))
    usable = [e for e in entries if e.truth != Truth.FALSE]
    derived = a.predicate in state.idb
    for e in usable:
        binding = _unify(a, e.ground, branch.binding)
        if binding is None:
            continue
        _clauses(
            state, body, i + 1,
            _Branch(binding, min(branch.truth, e.truth), [*branch.premises, e],
                    branch.negatives, branch.unresolved),
            restrict, emit,
        )  # fmt: skip
    if usable or only is not None:
        return  # matched, or this pass only looks at new facts
    if entries and (derived or _ground_pattern(a, branch.binding)):
        return  # explicitly false
    # Nothing that holds or might is known of this atom — nothing at all, or denials of some of its
    # groundings, which say nothing of the others: false inside a closed scope, else unknown.
    if _absence(state, a, branch.binding) is not None:
        return
    if any(v not in branch.binding for v in a.vars):
        _dead_end(state, body, a, branch.binding)
        return
    ground = _ground(a, branch.binding)
    _clauses(
        state, body, i + 1,
        _Branch(branch.binding, min(branch.truth, Truth.UNKNOWN), branch.premises, branch.negatives, [*branch.unresolved, ground]),
        restrict, emit,
    )  # fmt: skip


def _special(state: _State, body: _Body, clause: _Compiled, i: int, branch: _Branch, restrict: Restriction, emit: Emit) -> None:
    """A clause that is not an atom: a test, a computed value, an aggregate, a negation."""
    if isinstance(clause, _Test):
        truth = _test(clause.op, _operand(clause.left_kind, clause.left, branch.binding, body),
                      _operand(clause.right_kind, clause.right, branch.binding, body), body.rule)  # fmt: skip
        _then(state, body, i, branch, restrict, truth, emit)
        return
    if isinstance(clause, _Let):
        value = _operand(clause.kind, clause.value, branch.binding, body)
        if clause.var in branch.binding:  # bound already: a test that it equals the value
            _then(state, body, i, branch, restrict, _test("==", branch.binding[clause.var], value, body.rule), emit)
            return
        _clauses(state, body, i + 1, replace(branch, binding={**branch.binding, clause.var: value}), restrict, emit)
        return
    if isinstance(clause, _Aggregate):
        after = _aggregate(state, body, clause, branch)
        if after is not None:
            _clauses(state, body, i + 1, after, restrict, emit)
        return
    if isinstance(clause, _Negation):
        _negation(state, body, clause.pattern, i, branch, restrict, emit)
        return


def _negation(state: _State, body: _Body, a: _Pattern, i: int, branch: _Branch, restrict: Restriction, emit: Emit) -> None:
    """``not a``, the ``i``-th clause of ``body``, on this branch; then the clauses after it."""
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
            premises = [*premises, *entries]
        elif inner == Truth.UNKNOWN:
            unresolved = [*unresolved, *(e.ground for e in entries if e.truth == Truth.UNKNOWN)]
    value = inner.negate()
    if value == Truth.FALSE:
        return
    _clauses(state, body, i + 1, _Branch(branch.binding, min(branch.truth, value), premises, negatives, unresolved), restrict, emit)


def _ground_pattern(a: _Pattern, binding: dict[str, Any]) -> bool:
    """Whether an atom names one proposition (a missing object stands for a unary predicate)."""
    return _bound(a.subject_kind, a.subject, binding) and (a.object_kind == _ABSENT or _bound(a.object_kind, a.object, binding))


def _absence(state: _State, a: _Pattern, binding: dict[str, Any]) -> str | None:
    """Why absence means false here: a declaration id, "" when the rules settle it, None when unknown.

    A derived predicate of a finished stratum is defined by its rules: an atom of it that was
    not concluded is false unless some body of its rules might still hold there in some
    completion of the facts (``_may_hold``) — asked of the atom itself, not of the whole
    predicate, so what is known of one subject never settles another. Inside the stratum
    being computed, a missing conclusion is simply not derived yet.
    """
    subject, obj = _value(a.subject_kind, a.subject, binding), _value(a.object_kind, a.object, binding)
    if a.predicate in state.idb:
        if a.predicate in state.current:
            return ""
        return None if _may_hold(state, a.predicate, subject, obj) else ""
    return state.facts.closed(a.predicate, subject, obj)


def _may_hold(state: _State, predicate: str, subject: Any, obj: Any) -> bool:
    """Whether predicate(subject, obj) — None: any — might be concluded: some body of a rule for
    it, its head bound to the atom, is not false when asked top-down (a body that stops on an
    open pattern it cannot bind might hold). Bottom-up, such a pattern was asked with nothing
    bound, so what was known of other subjects could hide that it is open for this one. A rule
    asking for itself derives nothing that way — as ``PolicyFacts._may_derive`` reads it."""
    ground = (predicate, subject, obj)
    known = state.possible.get(ground)
    if known is not None:
        return known
    if ground in state.asking:
        return False
    top = not state.asking
    state.asking.add(ground)
    found = False
    try:
        for body in state.bodies_of.get(predicate, ()):
            binding = _head_binding(body.head, subject, obj)
            if binding is None:
                continue
            probe = _State(facts=state.facts, idb=state.idb, index=state.index, bodies_of=state.bodies_of, possible=state.possible,
                           asking=state.asking, joins=state.joins)  # fmt: skip
            branches: list[_Branch] = []
            _clauses(probe, body, 0, _Branch(binding, Truth.TRUE, [], [], []), None, branches.append)
            if branches or probe.dead_ends:
                found = True
                break
    finally:
        state.asking.discard(ground)
    if top:  # an answer found while another atom was being asked may rest on that one's guard
        state.possible[ground] = found
    return found


def _head_binding(head: _Pattern, subject: Any, obj: Any) -> dict[str, Any] | None:
    """The bindings making a rule's head name predicate(subject, obj) (None: any), or None if it cannot."""
    binding: dict[str, Any] = {}
    for kind, term, value in ((head.subject_kind, head.subject, subject), (head.object_kind, head.object, obj)):
        if value is None or kind in (_ABSENT, _WILD):
            continue
        if kind == _VAR:
            if binding.setdefault(term, value) != value:
                return None
        elif term != value:
            return None
    return binding


def _dead_end(state: _State, body: _Body, a: _Pattern, binding: dict[str, Any]) -> None:
    """A body stopped on an open pattern it could not bind: its head may be unknown."""
    state.dead_ends.append((body.rule, a.atom, dict(binding)))
    state.open.add(body.head.predicate)


def _entries(state: _State, a: _Pattern, binding: dict[str, Any], only: _Index | None) -> list[Entry]:
    """What is known of the atom on this branch: from the fact base, or derived (only: the last round's new facts)."""
    subject, obj = _value(a.subject_kind, a.subject, binding), _value(a.object_kind, a.object, binding)
    if a.predicate not in state.idb:
        return state.facts.match(a.predicate, subject, obj)
    return (state.index if only is None else only).match(a.predicate, subject, obj)


def _unify(a: _Pattern, ground: Ground, binding: dict[str, Any]) -> dict[str, Any] | None:
    out = dict(binding)
    if _bind(a.subject_kind, a.subject, ground[1], out) and _bind(a.object_kind, a.object, ground[2], out):
        return out
    return None


def _bind(kind: int, term: Any, value: Any, out: dict[str, Any]) -> bool:
    """Whether one argument matches ``value``, binding its variable in ``out`` if it is one."""
    if kind == _VAR:
        if term in out and out[term] != value:
            return False
        out[term] = value
        return True
    return kind != _CONSTANT or term == value


def _operand(kind: int, term: Any, binding: dict[str, Any], body: _Body) -> Any:
    """A term's or an expression's value on a branch (a ``Bound`` where only bounds are known)."""
    if kind != _EXPRESSION:
        return _value(kind, term, binding)
    left = _operand(_operand_kind(term.left), term.left, binding, body)
    right = _operand(_operand_kind(term.right), term.right, binding, body)
    return apply(term.op, left, right, where=body.rule)


#: A test's outcome: its truth, and what would settle it when a bound leaves it unknown.
Tested = tuple[Truth, tuple[Ground, ...]]


def _test(op: str, left: Any, right: Any, where: str = "") -> Tested:
    held = compare(op, left, right, where=where)
    if held is not None:
        return (Truth.TRUE if held else Truth.FALSE), ()
    settle = tuple(g for side in (left, right) if isinstance(side, Bound) for g in side.settle)
    return Truth.UNKNOWN, settle


def _then(state: _State, body: _Body, i: int, branch: _Branch, restrict: Restriction, tested: Tested, emit: Emit) -> None:
    """The clauses after a test, on a branch as true as the test left it."""
    truth, settle = tested
    if truth == Truth.FALSE:
        return
    if truth == Truth.TRUE:
        _clauses(state, body, i + 1, branch, restrict, emit)
        return
    _clauses(
        state, body, i + 1, replace(branch, truth=min(branch.truth, truth), unresolved=[*branch.unresolved, *settle]), restrict, emit
    )


def _aggregate(state: _State, body: _Body, clause: _Aggregate, branch: _Branch) -> _Branch | None:
    """The branch with the aggregate's value bound (None: a min or max over nothing, which has
    no value): exact when its members are all known and
    every pattern they were found through is closed, else the bound they allow (``gaf.arith``).

    The members are the distinct bindings of the variables its clauses bind, so one
    proposition counts once however many claims stated it. The premises of the members
    that hold become the branch's, and, when the value is exact, the closed scopes it
    relied on its negative premises."""
    found = _joined(state, body, clause, branch) or _members(state, body, clause, branch)
    complete = not found.open_patterns and not found.stopped_at
    of = [*found.values, *(v for v, _ in found.maybe)] if found.maybe else found.values
    if complete and not found.maybe and (clause.kind == "count" or clause.kind == "sum" and all(type(v) is int for v in of)):
        # every member holds and no other can, counted or integers summed (the usual case): exact,
        # as ``gaf.arith.aggregate`` gives it, without its general path
        return _Branch({**branch.binding, clause.var: sum(of) if clause.kind == "sum" else len(of)}, branch.truth,
                       [*branch.premises, *found.premises], [*branch.negatives, *found.negatives, *found.relied_on],
                       branch.unresolved)  # fmt: skip
    unit = None
    if not all(type(v) is int for v in of) and any(isinstance(v, Bound) for v in of):
        exists: bool | None = None
        low = high = None
    else:
        sign = _sign(state, clause) if clause.kind == "sum" else None
        values, unit = bare_members(of, body.rule) if clause.of is not None else (of, None)
        known = len(found.values)
        past: list[int] = []
        exists, low, high = aggregate(
            clause.kind, values[:known], values[known:], complete=complete, sign=sign, where=body.rule,  # type: ignore[arg-type]
            conditions=found.conditions, past=past,
        )  # fmt: skip
        if past:
            bindings = tuple(sorted((k.lstrip("?"), _shown(v)) for k, v in branch.binding.items() if not isinstance(v, Bound)))
            state.limits.append(LimitHit(body.rule, bindings, max(past), gaf.arith.COMPLETED_AT_MOST))
    if exists is False:
        return None  # min or max over nothing: there is no such value
    settle = tuple(dict.fromkeys([*found.open_patterns, *found.stopped_at, *(u for _, unresolved in found.maybe for u in unresolved)]))
    value: Any = in_unit(unit, low) if exists and low is not None and low == high else Bound(low, high, settle, unit)
    premises = [*branch.premises, *found.premises]
    negatives = [*branch.negatives, *found.negatives]
    if complete and not isinstance(value, Bound):
        negatives += found.relied_on
    truth = branch.truth if exists else min(branch.truth, Truth.UNKNOWN)
    unresolved = branch.unresolved if exists else [*branch.unresolved, *settle]
    return _Branch({**branch.binding, clause.var: value}, truth, premises, negatives, unresolved)


@dataclass(slots=True)
class _Found:
    """An aggregate's members as its value and justification read them: the values of the
    members that hold, in order, and their premises and the closed scopes they relied on, one
    member's after another's; each member that might hold (its value, and what would settle
    it); the patterns its clauses read that are open, and the
    closed scopes that made absence false in the others (one for each pattern read); and the
    patterns a body stopped at, unbound. And, where they say it, for each member that might hold
    the unknown propositions it holds exactly when all of hold (``gaf.arith.aggregate``): None
    where its clauses are not all atoms, or a member was found more than one way."""

    values: list[Any]
    premises: list[Entry]
    negatives: list[str]
    maybe: list[tuple[Any, Sequence[Ground]]]
    open_patterns: Sequence[Ground]
    relied_on: list[str]
    stopped_at: Sequence[Ground]
    conditions: list[frozenset[Ground]] | None = None


def _members(state: _State, body: _Body, clause: _Aggregate, branch: _Branch) -> _Found:
    """An aggregate's members, found by evaluating its clauses as a body on the branch."""
    local = tuple(v for v in clause.binds if v not in branch.binding)  # a member is a binding of these
    inner = _Body(body.rule, body.head, body.number, 1.0, clause.clauses, ())
    outer_watch, dead_ends = state.watch, len(state.dead_ends)
    was_open = set(state.open)
    state.watch = []
    members: dict[tuple[Any, ...], _Branch] = {}
    twice = False  # a member found more than one way holds when any of them does

    def member(found: _Branch) -> None:
        nonlocal twice
        key = tuple(found.binding.get(v) for v in local)
        best = members.get(key)
        twice = twice or best is not None
        if best is None or found.truth > best.truth:
            members[key] = found

    try:
        _clauses(state, inner, 0, _Branch(dict(branch.binding), Truth.TRUE, [], [], []), None, member)
        watched = state.watch or []
        stopped = state.dead_ends[dead_ends:]
    finally:
        state.watch = outer_watch
        del state.dead_ends[dead_ends:]
        state.open = was_open
    values: list[Any] = []
    premises: list[Entry] = []
    negatives: list[str] = []
    maybe: list[tuple[Any, Sequence[Ground]]] = []
    conditions: list[frozenset[Ground]] | None = None if twice or not _atoms_only(clause) else []
    for m in members.values():
        value = None if clause.of is None else _operand(clause.of_kind, clause.of, m.binding, body)
        if m.truth == Truth.TRUE:
            values.append(value)
            premises += m.premises
            negatives += m.negatives
        else:
            maybe.append((value, m.unresolved))
            if conditions is not None:
                conditions.append(_unknowns(m.premises, m.unresolved))
    open_patterns, relied_on = [g for g, why in watched if why is None], [why for _, why in watched if why]
    stopped_at = [_pattern(_Pattern.of(a), b) for _, a, b in stopped]
    return _Found(values, premises, negatives, maybe, open_patterns, relied_on, stopped_at, _sound(conditions))


def _atoms_only(clause: _Aggregate) -> bool:
    """Whether an aggregate's clauses are all atoms: a member then holds exactly when every
    proposition it matched does (a ``not`` or a comparison would hold on other terms)."""
    return all(type(c) is _Pattern for c in clause.clauses)


def _unknowns(premises: Sequence[Entry], unresolved: Sequence[Ground] = ()) -> frozenset[Ground]:
    """What a member that might hold rests on: the unknown propositions it matched, and the
    atoms it found nothing of in an open scope."""
    return frozenset([*(p.ground for p in premises if p.truth == Truth.UNKNOWN), *unresolved])


def _sound(conditions: list[frozenset[Ground]] | None) -> list[frozenset[Ground]] | None:
    """The members' conditions, or None if one rests on nothing unknown (then it would hold in
    every completion, which its truth denies: the conditions do not say why it might not)."""
    return None if conditions is None or not all(conditions) else conditions


@dataclass(slots=True)
class _Join:
    """An aggregate's clauses as a join for each group it is asked about (by the values of
    the variables bound around it, ``_group_key``): its atoms, the variables bound around it
    (``outer``), the declaration closing each atom, where the fact base's entries are looked
    up, and each group's members once asked for."""

    outer: tuple[str, ...]
    declarations: tuple[str, ...]
    #: each atom's step, from a row holding the group's values
    steps: tuple[_Step, ...]
    #: the variables a row's values hold, in order: ``outer``, then those each atom binds
    slots: tuple[str, ...]
    #: what picks a member's key (the values of the variables not bound around) out of a row's values
    local: Callable[[tuple[Any, ...]], Any]
    #: the slot of the variable aggregated (None: a count; -1: an expression)
    of: int | None
    #: whether a group's rows are its distinct members: every argument of the atoms is a constant or
    #: a variable, and no two facts of an atom's predicate share a ground (``unique_grounds``), so
    #: two rows, choosing different facts, bind some variable not bound around differently
    distinct: bool
    #: each group's members once asked for (values are computed when a branch first needs them)
    found: dict[Any, _Found] = field(default_factory=dict)


def _joined(state: _State, body: _Body, clause: _Aggregate, branch: _Branch) -> _Found | None:
    """An aggregate's members as ``_members`` finds them, when its clauses are atoms of the
    fact base that one declaration closes everywhere (``closed_everywhere``), its first atom
    binds every variable bound around it, and what it aggregates reads only its own
    variables. Then no atom can be unknown for want of data or stop a body, and what the
    atoms read depends on the group alone: the atoms are joined set at a time for the group,
    starting from a row holding its values (so the first atom is looked up by an outer
    variable, by a constant then checked, or scanned when nothing is bound around the
    aggregate), and each group is joined
    once however many branches read it — an aggregate met once per subject costs a pass over
    that subject's facts, not over all of them (``python -m bench aggregates``). None for any
    other aggregate, or where evaluation keeps no joins.

    The same members in the same order, with the same premises: a group's rows are those of
    a nested loop over the atoms (each atom's facts in the fact base's order) whose outer
    values equal the branch's; a member is the first row of its binding with that binding's
    best truth; a clause's declaration is relied on when the group read that clause."""
    if state.joins is None:
        return None
    outer = tuple(v for v in clause.binds if v in branch.binding)
    key = (id(clause), outer)
    if key not in state.joins:
        state.joins[key] = _plan_join(state, clause, outer)
    join = state.joins[key]
    if join is None:
        return None
    group = _group_key(branch.binding, outer)
    found = join.found.get(group)
    if found is None:
        found = join.found[group] = _group(join, group, clause, body)
    return found


def _group(join: _Join, group: Any, clause: _Aggregate, body: _Body) -> _Found:
    """One group's members as ``_members`` finds them: its rows joined breadth first, one atom
    at a time, from a row holding the group's values, then its distinct members, their values."""
    slots, steps = join.slots, join.steps
    seed = (group,) if len(join.outer) == 1 else group
    if len(steps) == 2 and (paired := _held_pair(seed, join)) is not None:
        return _Found(paired[0], paired[1], [], [], (), list(join.declarations[: 2 if paired[2] else 1]), (), [])
    rows: list[_Row] = [(seed, (), Truth.TRUE)]
    read = 1  # a group with a row before an atom reads that atom's clause (the first always)
    for i, step in enumerate(steps[:-1]):
        rows = _extend(rows, step)
        if rows:
            read = i + 2
    relied_on = list(join.declarations[:read])
    held = _held(rows, steps[-1], join)
    if held is not None:
        return _Found(held[0], held[1], [], [], (), relied_on, (), [])
    rows = _extend(rows, steps[-1])
    local = join.local
    keys = list(map(local, map(_VALUES, rows)))
    # a member found in more than one row holds when any of them does: no conditions then
    distinct = len(set(keys)) == len(rows)
    conditions: list[frozenset[Ground]] | None = [] if distinct else None
    members = rows
    if not distinct:
        best: dict[Any, _Row] = {}
        for member, row in zip(keys, rows):
            was = best.get(member)
            if was is None or row[2] > was[2]:
                best[member] = row
        members = list(best.values())
    of = join.of
    true = Truth.TRUE
    if all(row[2] is true for row in members):  # every row holds: the members' values and premises, read straight off
        if of is None:
            values: list[Any] = [None] * len(members)
        elif of >= 0:
            values = list(map(itemgetter(of), map(_VALUES, members)))
        else:
            values = [_operand(clause.of_kind, clause.of, dict(zip(slots, values)), body) for values, _, _ in members]
        return _Found(values, list(chain.from_iterable(map(_PREMISES, members))), [], [], (), relied_on, (),
                      conditions)  # fmt: skip
    values = []
    premises: list[Entry] = []
    maybe: list[tuple[Any, Sequence[Ground]]] = []
    for row_values, used, truth in members:
        if of is None:
            value = None
        elif of >= 0:
            value = row_values[of]
        else:
            value = _operand(clause.of_kind, clause.of, dict(zip(slots, row_values)), body)
        if truth == Truth.TRUE:
            values.append(value)
            premises += used
        else:
            maybe.append((value, ()))
            if conditions is not None:
                conditions.append(_unknowns(used))
    return _Found(values, premises, [], maybe, (), relied_on, (), _sound(conditions))


def _plan_join(state: _State, clause: _Aggregate, outer: tuple[str, ...]) -> _Join | None:
    """How ``_group`` joins an aggregate's atoms for a group (each atom's step, the variables a
    row holds, whether rows are distinct members), if ``_joined`` may read the aggregate so."""
    everywhere = getattr(state.facts, "closed_everywhere", None)
    lookup = getattr(state.facts, "lookup", None)
    patterns = [c for c in clause.clauses if type(c) is _Pattern and c.predicate not in state.idb]
    if everywhere is None or lookup is None or not patterns or len(patterns) != len(clause.clauses):
        return None
    of_vars: set[str] = set()
    if clause.of_kind == _VAR:
        of_vars = {clause.of}
    elif clause.of_kind == _EXPRESSION:
        of_vars = clause.of.vars()
    if not set(outer) <= patterns[0].vars or of_vars & set(outer) or not of_vars <= set(clause.binds):
        return None
    declarations = tuple(everywhere(c.predicate) for c in patterns)
    if None in declarations:
        return None
    slots = list(outer)
    steps = tuple(_step(a, slots, lookup) for a in patterns)
    of = None if clause.of is None else (slots.index(clause.of) if clause.of_kind == _VAR else -1)
    unique = getattr(state.facts, "unique_grounds", None)
    distinct = unique is not None and all(
        a.subject_kind in (_VAR, _CONSTANT) and a.object_kind in (_VAR, _CONSTANT) and unique(a.predicate) for a in patterns
    )
    local = _picker(tuple(i for i, v in enumerate(slots) if v not in outer))
    return _Join(outer, declarations, steps, tuple(slots), local, of, distinct)


def _held(rows: list[_Row], step: _Step, join: _Join) -> tuple[list[Any], list[Entry]] | None:
    """The values and premises (``_group``'s, one member's after another's) of the rows' extension
    by the last atom, when every row and every fact it adds holds, the atom is a lookup with
    nothing to check, and the members are told apart (by their keys, or by ``join.distinct``):
    the usual case, without making the rows. None otherwise: ``_extend`` then makes them."""
    of, index = join.of, step.index
    if index is None or not step.plain or of == -1:
        return None
    true = Truth.TRUE
    key, first, stop, local = step.key, step.first, step.stop, join.local
    width = len(join.slots) - (stop - first)  # how many values a row holds before this atom
    values: list[Any] = []
    premises: list[Entry] = []
    keys: list[Any] | None = None if join.distinct else []
    for row_values, used, truth in rows:
        value = row_values[key]
        if truth is not true or value is None:
            return None
        for e in index.get(value):
            if e[1] is not true:
                return None
            if of is not None:
                values.append(row_values[of] if of < width else e[0][first + of - width])
            if keys is not None:
                keys.append(local(row_values + e[0][first:stop]))
            premises += used
            premises.append(e)
    if keys is not None and len(set(keys)) != len(keys):
        return None
    # a member's premises are one fact of each atom
    return values if of is not None else [None] * (len(premises) // len(join.steps)), premises


def _held_pair(seed: tuple[Any, ...], join: _Join) -> tuple[list[Any], list[Entry], bool] | None:
    """``_held`` for a join of two atoms, each a lookup with nothing to check, from the row
    holding the group's values, without making the first atom's rows either: the members'
    values and premises, and whether the first atom found anything (then the group read the
    second). None where ``_held`` would give None, or the members are not told apart by
    ``join.distinct``."""
    before, step = join.steps
    of, first_entries, second_entries = join.of, before.index, step.index
    if first_entries is None or second_entries is None or not (before.plain and step.plain and join.distinct) or of == -1:
        return None
    true = Truth.TRUE
    # A row's slots: the group's values, then what the first atom's ground gives, then the second's.
    width, width1 = len(seed), len(seed) + before.stop - before.first
    key_slot = step.key  # the slot the second atom is looked up by: a group value, or from the first ground
    # The value aggregated comes from one of the grounds: ``_plan_join`` refuses an aggregate that
    # reads a variable bound around it.
    of_slot = -1 if of is None else of
    in_second = of_slot >= width1
    of_at = (step.first + of_slot - width1) if in_second else (before.first + of_slot - width)
    one, many = second_entries.one, second_entries.many
    found = first_entries.get(seed[before.key])
    values: list[Any] = []
    premises: list[Entry] = []
    for e1 in found:
        g1 = e1[0]
        if e1[1] is not true:
            return None
        value = seed[key_slot] if key_slot < width else g1[before.first + key_slot - width]
        if value is None:
            return None
        # ``second_entries.get(value)``, without a call for each row: the loop a large sum spends its time in
        bucket: Sequence[Entry] | None = many.get(value) if many else None
        if bucket is None:  # the usual case: one entry, or none
            only = one.get(value)
            if only is None:
                continue
            bucket = (only,)
        for e in bucket:
            if e[1] is not true:
                return None
            if of is not None:
                values.append(e[0][of_at] if in_second else g1[of_at])
            premises.append(e1)
            premises.append(e)
    return values if of is not None else [None] * (len(premises) // 2), premises, bool(found)


def _group_key(binding: dict[str, Any], outer: tuple[str, ...]) -> Any:
    """The group a branch reads: the value of the one variable bound around the aggregate,
    or the tuple of them (``_group`` starts a group's rows from these values)."""
    return binding[outer[0]] if len(outer) == 1 else tuple(binding[v] for v in outer)


#: A row of a join: the values of its variables in slot order, the facts it used, its truth.
_Row = tuple[tuple[Any, ...], tuple[Entry, ...], Truth]
_VALUES, _PREMISES = itemgetter(0), itemgetter(1)


def _picker(at: tuple[int, ...]) -> Callable[[tuple[Any, ...]], Any]:
    """What picks the values at some positions out of a row's values: one value picked
    alone, several as a tuple (a member's key: compared, never read)."""
    if not at:
        return lambda values: ()
    return itemgetter(*at)


@dataclass(frozen=True, slots=True)
class _Step:
    """How one atom of a join extends a row, decided once for the join. Its arguments whose
    value is known before the row is extended — a constant, or a variable the row holds — are
    ``known`` (position, from the row?, the slot or the constant), in argument order; the atom's
    entries are looked up in ``index``, the predicate's ``EntryIndex`` by the first of them
    (None: none is known, ``every`` entry is scanned), whose value is ``key`` (a slot of the row
    when ``from_row``, else the constant), and the rest are ``checks``; a row whose looked-up
    value is None scans ``every`` entry and checks all of ``known``, as ``match`` would. A new
    variable met twice is checked against its first position (``again``), and the row gains
    the slice ``first``:``stop`` of each ground it takes."""

    index: EntryIndex | None
    every: list[Entry]
    from_row: bool
    key: Any
    known: tuple[tuple[int, bool, Any], ...]
    checks: tuple[tuple[int, bool, Any], ...]
    again: tuple[tuple[int, int], ...]
    first: int
    stop: int

    @property
    def plain(self) -> bool:
        """Whether the atom is a lookup by a value the row holds with nothing else to check (the
        usual step: ``_held`` and ``_held_pair`` read it without making rows)."""
        return self.index is not None and self.from_row and not self.checks and not self.again


def _step(a: _Pattern, slots: list[str], lookup: Callable[[str, int], Any]) -> _Step:
    """One atom's step of a join after the atoms that bound ``slots``, as ``match`` and
    ``_unify`` would read it; ``slots`` gains the variables the atom binds."""
    # Each argument is read one of four ways: a value known before the row (a constant or a
    # variable an earlier atom bound: looked up, or checked), a variable bound here (written),
    # the same new variable again (checked against the first), or not at all.
    known: list[tuple[int, bool, Any]] = []  # (position, from the row?, constant or slot)
    written: list[int] = []
    again: list[tuple[int, int]] = []
    new: dict[str, int] = {}
    for position, kind, term in ((1, a.subject_kind, a.subject), (2, a.object_kind, a.object)):
        if kind == _CONSTANT:
            known.append((position, False, term))
        elif kind == _VAR and term in slots:
            known.append((position, True, slots.index(term)))
        elif kind == _VAR and term in new:
            again.append((position, new[term]))
        elif kind == _VAR:
            new[term] = position
            written.append(position)
    slots += new
    by, from_row, key = known[0] if known else (0, False, 0)  # look up by the first known argument (0: none, scan)
    # what a fact adds to a row's values: its subject, its object, both or neither (a ground is
    # (predicate, subject, object), and the written positions are in order)
    first, stop = (written[0], written[-1] + 1) if written else (0, 0)
    return _Step(lookup(a.predicate, by) if by else None, lookup(a.predicate, 0), from_row, key, tuple(known), tuple(known[1:]),
                 tuple(again), first, stop)  # fmt: skip


def _extend(rows: list[_Row], step: _Step) -> list[_Row]:
    """Every row extended by each usable fact of one atom that agrees with it (``_step``)."""
    from_row, key, index, every, again = step.from_row, step.key, step.index, step.every, step.again
    first, stop = step.first, step.stop
    out: list[_Row] = []
    append = out.append
    false = Truth.FALSE
    for values, premises, truth in rows:
        if index is not None:
            value = values[key] if from_row else key
            facts = every if value is None else index.get(value)  # a None value binds nothing: match scans
            checks_here = step.known if value is None else step.checks
        else:
            facts, checks_here = every, step.checks
        if not checks_here and not again:  # nothing to check: every fact that is not false extends the row
            for e in facts:
                g, t, _, _ = e
                if t is not false:
                    append((values + g[first:stop], premises + (e,), truth if t is truth or truth < t else t))
            continue
        for e in facts:
            g, t, _, _ = e
            if t is false:
                continue
            if checks_here and any(g[p] != (values[k] if row else k) for p, row, k in checks_here):
                continue
            if again and any(g[p] != g[q] for p, q in again):
                continue
            append((values + g[first:stop], premises + (e,), truth if t is truth or truth < t else t))
    return out


def _sign(state: _State, clause: _Aggregate) -> Sign | None:
    """The sign of what a sum adds, from the declared signs of the predicates whose values it
    reads: asked once per aggregate of an evaluation."""
    if id(clause) in state.signs:
        return state.signs[id(clause)]
    by_var: dict[str, Sign | None] = {}
    for c in clause.clauses:
        if isinstance(c, _Pattern) and c.object_kind == _VAR:
            declared = declared_sign(state.facts, c.predicate)
            if c.object in by_var and by_var[c.object] != declared:
                declared = None
            by_var[c.object] = declared
    sign = state.signs[id(clause)] = sign_of(
        clause.of,
        lambda v: by_var.get(v),
        is_var=is_var,
        parts=lambda e: (e.op, e.left, e.right) if isinstance(e, Arith) else None,
    )
    return sign


def _shown(value: Any) -> str:
    """A bound value as a statement writes it (text bare)."""
    return value if isinstance(value, str) else show(("", "_", value)).partition(", ")[2][:-1]


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
    clauses: Sequence[Clause], facts: FactBase, binding: dict[str, Any], by_ref: dict[str, DerivationRule] | None = None,
    limits: list[LimitHit] | None = None,
) -> tuple[Truth, list[str], list[str]]:
    """Whether a condition holds on a fact base, three-valued, and what it rests on.

    Returns the truth (TRUE if some way of satisfying it holds, UNKNOWN if none
    holds but one might, FALSE otherwise), the evidence ids of the facts a
    holding (or best) way used, and the unresolved premises that leave it unknown.
    ``limits``, where given, gains the limits its evaluation hit (``LimitHit``).
    """
    truth, used, unknown = holds_grounds(clauses, facts, binding, by_ref, limits)
    return truth, used, sorted({show(g) for g in unknown})


#: A condition is evaluated as the one body of a rule concluding this, which nothing reads.
_CONDITION = _Pattern.of(Atom(predicate="condition", subject="?subject"))


def holds_grounds(
    clauses: Sequence[Clause], facts: FactBase, binding: dict[str, Any], by_ref: dict[str, DerivationRule] | None = None,
    limits: list[LimitHit] | None = None,
) -> tuple[Truth, list[str], set[Ground]]:
    """``holds``, with the unresolved premises as ground atoms rather than as text.

    ``by_ref`` resolves rule references in the clauses (``not paid@1(?x)``): the
    derivation rules of the policy when the clauses are a rule body."""
    if not clauses:
        return Truth.TRUE, [], set()
    # a published condition is read, not refused, here
    state, branches = _condition(clauses, facts, binding, by_ref or {}, strict=False)
    if limits is not None:
        limits += state.limits
    best: _Branch | None = None
    unknown: set[Ground] = set()
    for branch in branches:
        if branch.truth == Truth.UNKNOWN:
            unknown.update(branch.unresolved)
            unknown.update(p.ground for p in branch.premises if p.truth == Truth.UNKNOWN)
        if best is None or branch.truth > best.truth:
            best = branch
    for _, a, b in state.dead_ends:
        unknown.add(_ground(_Pattern.of(a), b))
    truth = best.truth if best is not None else (Truth.UNKNOWN if state.dead_ends else Truth.FALSE)
    used = sorted({p.evidence for p in best.premises if p.evidence}) if best is not None else []
    return truth, used, unknown if truth != Truth.TRUE else set()


def solutions(clauses: Sequence[Clause], facts: FactBase, binding: dict[str, Any],
              limits: list[LimitHit] | None = None) -> list[tuple[Truth, dict[str, Any], list[str]]]:  # fmt: skip
    """Every way a condition holds or might on a fact base: its truth, its bindings and the
    evidence ids of the facts it used — what a computed value (an action's amount) is read from.
    ``limits``, where given, gains the limits its evaluation hit (``LimitHit``)."""
    state, branches = _condition(clauses, facts, binding, {}, strict=True)
    if limits is not None:
        limits += state.limits
    return [(b.truth, b.binding, sorted({p.evidence for p in b.premises if p.evidence})) for b in branches]


#: Conditions compiled, by their clauses, the variables bound when they are asked and whether a
#: clause order is refused: a verdict rule's condition is asked for every subject it judges, and
#: ordering and compiling it again each time was some 30% of judging (``python -m bench verdict``,
#: 2026-12-06: 10 rules 824 → 593 µs a judgement, 100 rules 8,062 → 5,579 µs).
_CONDITIONS: dict[tuple[tuple[Clause, ...], frozenset[str], bool], _Body] = {}
_CONDITIONS_MAX = 10_000
#: The last condition compiled for each sequence of clauses, by the sequence's identity, with its clauses (``_condition``).
_BY_IDENTITY: dict[int, tuple[tuple[Clause, ...], frozenset[str], bool, _Body]] = {}


def _condition_body(clauses: tuple[Clause, ...], bound: frozenset[str], by_ref: dict[str, DerivationRule], strict: bool) -> _Body:
    """A condition compiled as the one body of a rule nothing reads, its clauses in an order they
    can be evaluated in with ``bound`` bound."""
    ordered = schedule(clauses, bound, strict=strict)
    return _Body("condition@1", _CONDITION, 0, 1.0, tuple(_compiled(c, by_ref) for c in ordered), ())


def _condition(
    clauses: Sequence[Clause], facts: FactBase, binding: dict[str, Any], by_ref: dict[str, DerivationRule], *, strict: bool
) -> tuple[_State, list[_Branch]]:
    """A condition evaluated as the one body of a rule nothing reads: the state it runs in
    (its dead ends are read after), and each way it holds or might."""
    bound = frozenset(binding)
    # The same clauses (one rule's condition, asked for subject after subject) are found by identity first,
    # clause by clause (the entry holds them, so no id is reused while it is kept); else by value, each hashed.
    last = None if by_ref else _BY_IDENTITY.get(id(clauses))
    if last is not None and last[1] == bound and last[2] == strict and len(last[0]) == len(clauses) and all(map(is_, last[0], clauses)):
        condition = last[3]
    else:
        key = (tuple(clauses), bound, strict)
        try:
            keyed = not by_ref and hash(key) is not None  # rule references are resolved against the rules given: not kept
        except TypeError:  # a clause that cannot be a key (an aggregate holds a list of clauses): compiled for this call
            keyed = False
        if keyed:
            condition = kept(_CONDITIONS, _CONDITIONS_MAX, key, lambda: _condition_body(key[0], key[1], {}, strict))
            if len(_BY_IDENTITY) >= _CONDITIONS_MAX:
                _BY_IDENTITY.clear()
            _BY_IDENTITY[id(clauses)] = (key[0], bound, strict, condition)
        else:
            condition = _condition_body(key[0], key[1], by_ref, strict)
    state = _State(facts=facts, idb=set())
    branches: list[_Branch] = []
    _clauses(state, condition, 0, _Branch(dict(binding), Truth.TRUE, [], [], []), None, branches.append)
    return state, branches
