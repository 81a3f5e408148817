"""The fact base rules read: evaluated propositions as ground atoms, with closed scopes.

Derivation rules read facts, not records: each evaluated proposition is a ground
atom that is true, false or unknown, with its evaluation as evidence. Whether an
absent atom is false or unknown is the policy's to say, through its closed scopes
and the predicates its own rules derive.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import replace
from datetime import datetime
from operator import itemgetter
from typing import Any

from gaf.arith import Sign
from gaf.derive import Entry, EntryIndex, Ground, LimitHit, Truth, holds
from gaf.projection.cone import program_of
from gaf.projection.weighing import closed_scopes
from gaf.projection.weighing import ground_of as ground_of  # weighed by it there, read by it here: one definition
from gaf.records import CompletenessDeclaration, Evaluation, Outcome, Projection, Proposition
from gaf.rules import Atom
from gaf.types import Quantity


class PolicyFacts:
    """Facts as rules read them, with the policy's closed scopes.

    Absence inside a declared complete scope (by a source trusted for the
    predicate, declared by ``as_of``, covering the question's period, for a
    predicate whose absence means false) is false; a predicate the policy's rules
    derive is closed by those rules; everything else absent is unknown.
    """

    def __init__(self, policy: Projection, entries: Iterable[Entry], as_of: datetime):
        self.policy = policy
        self.by_pred: dict[str, list[Entry]] = defaultdict(list)
        for e in entries:
            self.by_pred[e.ground[0]].append(e)
        # for each predicate, its entries by subject and by object, built when first asked for: a
        # pattern with a bound argument is a lookup, not a scan, and a predicate never read so is not indexed
        self._by_subject: dict[str, EntryIndex] = {}
        self._by_object: dict[str, EntryIndex] = {}
        self._unique: dict[str, bool] = {}
        self.functional = frozenset(policy.functional)
        #: for each functional predicate and subject, the values accepted, with their evidence
        self.values: dict[tuple[str, Any], dict[Any, str | None]] = defaultdict(dict)
        for predicate in sorted(self.functional):
            for e in self.by_pred.get(predicate, ()):
                if e.truth == Truth.TRUE:
                    self.values[(predicate, e.ground[1])][e.ground[2]] = e.evidence
        self.program = program_of(policy)
        self.derived = set(self.program.heads)
        self._rules = sorted(self.program.rules, key=lambda r: r.ref)
        self._asking: set[Ground] = set()
        #: limits hit asking whether a rule might hold (``_may_derive``): the evaluation's, said with its own
        self.limits: list[LimitHit] = []
        self.declarations, self.ignored = closed_scopes(policy, as_of)
        # the declarations by predicate, in id order, so the first that covers a pattern is the one named
        self._declared: dict[str, list[CompletenessDeclaration]] = defaultdict(list)
        for d in self.declarations:
            self._declared[d.predicate].append(d)

    def match(self, predicate: str, subject: Any, obj: Any) -> list[Entry]:
        if subject is not None:
            found = self.lookup(predicate, 1).get(subject, [])
            if obj is not None:
                found = [e for e in found if e.ground[2] == obj]
        elif obj is not None:
            found = self.lookup(predicate, 2).get(obj, [])
        else:
            found = self.by_pred.get(predicate, [])
        if predicate not in self.functional:
            return list(found)
        # One value per subject: once one is accepted, every other is false, and says which fact made it so.
        found = [self._one_value(e) for e in found]
        if not found and subject is not None and obj is not None and self.values.get((predicate, subject)):
            found = [self._one_value(Entry((predicate, subject, obj), Truth.UNKNOWN))]
        return found

    def _one_value(self, e: Entry) -> Entry:
        accepted = self.values.get((e.ground[0], e.ground[1]))
        if e.truth == Truth.TRUE or not accepted or e.ground[2] in accepted:
            return e
        return Entry(e.ground, Truth.FALSE, next(iter(accepted.values())))

    def sign(self, predicate: str) -> Sign | None:
        """What the policy declares of the predicate's values (``signs``), if anything."""
        return self.policy.signs.get(predicate)

    def closed(self, predicate: str, subject: Any, obj: Any) -> str | None:
        if predicate in self.derived:
            # Closed by the rules — unless, asked about one subject, some body of a rule
            # for it might still hold there: premises absent outside a closed scope bind
            # nothing bottom-up, yet leave the conclusion open (unknown), not false.
            return None if subject is not None and self._may_derive(predicate, subject, obj) else ""
        for d in self._declared.get(predicate, ()):
            if d.covers(predicate, subject, obj):
                return d.id
        if subject is not None and self.values.get((predicate, subject)):
            return ""  # a functional predicate with its one value accepted: no other value holds
        return None

    def closed_everywhere(self, predicate: str) -> str | None:
        """The declaration ``closed`` names for every pattern of a predicate, if one does: a
        predicate of the facts (neither derived nor one value per subject, which ``closed``
        and ``match`` read otherwise) whose first declaration in id order covers any
        subject and any object. An aggregate over such predicates is a plain join."""
        if predicate in self.derived or predicate in self.functional:
            return None
        declared = self._declared.get(predicate)
        if declared and declared[0].subject == "*" and declared[0].object == "*":
            return declared[0].id
        return None

    def lookup(self, predicate: str, position: int) -> Any:
        """A predicate's entries as ``match`` reads them, for a join: by subject (``position``
        1) or by object (2), an ``EntryIndex``, or all of them (0), in the fact base's order. Only for
        a predicate ``closed_everywhere`` names, whose entries ``match`` returns as they are."""
        if position == 0:
            return self.by_pred.get(predicate, [])
        return _indexed(self._by_subject if position == 1 else self._by_object, self.by_pred, predicate, position)

    def unique_grounds(self, predicate: str) -> bool:
        """Whether no two of a predicate's entries share a ground: then the rows of a join,
        each a different choice of entries, bind its variables differently. Asked once, of an
        index a join built (by object if only that one was, else by subject): two entries
        under one key share a ground when they share the other argument."""
        unique = self._unique.get(predicate)
        if unique is None:
            position = 2 if predicate in self._by_object and predicate not in self._by_subject else 1
            index = _indexed(self._by_subject if position == 1 else self._by_object, self.by_pred, predicate, position)
            ground, argument = itemgetter(0), itemgetter(3 - position)
            unique = self._unique[predicate] = all(
                len(set(map(argument, map(ground, bucket)))) == len(bucket) for bucket in index.many.values()
            )
        return unique

    def _may_derive(self, predicate: str, subject: Any, obj: Any) -> bool:
        """Whether some body of a rule for predicate(subject, obj) is not false, top-down."""
        ground = (predicate, subject, obj)
        if ground in self._asking:
            return False  # a recursive rule asking for itself: that way derives nothing
        self._asking.add(ground)
        try:
            for compiled in self._rules:
                binding = bind_head(compiled.rule.head, predicate, subject, obj)
                if binding is None:
                    continue
                for clauses in compiled.bodies:
                    hits: list[LimitHit] = []
                    truth = holds(clauses, self, binding, limits=hits)[0]
                    self.limits += [replace(hit, rule=compiled.ref) for hit in hits]  # named by the rule asked about
                    if truth != Truth.FALSE:
                        return True
            return False
        finally:
            self._asking.discard(ground)


def _indexed(indexes: dict[str, EntryIndex], by_pred: dict[str, list[Entry]], predicate: str, position: int) -> EntryIndex:
    """A predicate's entries by the argument at ``position`` (1 subject, 2 object): built the
    first time it is asked for, then kept."""
    index = indexes.get(predicate)
    if index is None:
        index = indexes[predicate] = EntryIndex(by_pred.get(predicate, ()), position)
    return index


def bind_head(head: Atom, predicate: str, subject: Any, obj: Any) -> dict[str, Any] | None:
    """Bindings making a rule head name predicate(subject, obj), or None if it cannot."""
    if head.predicate != predicate:
        return None
    binding: dict[str, Any] = {}
    for term, value in ((head.subject, subject), (head.object, obj)):
        if value is None or term is None:
            continue
        if isinstance(term, str) and term.startswith("?"):
            if binding.setdefault(term, value) != value:
                return None
        elif term != value:
            return None
    return binding


TRUTH_OF = {Outcome.accepted: Truth.TRUE, Outcome.rejected: Truth.FALSE, Outcome.unknown: Truth.UNKNOWN}


def evaluated_entries(evaluations: Iterable[Evaluation], props: dict[str, Proposition]) -> list[Entry]:
    """Each evaluated proposition as a fact-base entry, with its evaluation as evidence."""
    return [Entry(ground_of(props[ev.proposition]), TRUTH_OF[ev.outcome], ev.id) for ev in evaluations]


def proposition_of(ground: Ground) -> Proposition:
    """The proposition a ground atom stands for."""
    predicate, subject, target = ground
    if target is None:
        return Proposition.shared(subject=subject, predicate=predicate)
    if isinstance(target, str):
        return Proposition.shared(subject=subject, predicate=predicate, object=target)
    if isinstance(target, Quantity):
        return Proposition.shared(subject=subject, predicate=predicate, value=target.amount, unit=target.unit)
    return Proposition.shared(subject=subject, predicate=predicate, value=target)
