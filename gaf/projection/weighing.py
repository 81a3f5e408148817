"""Weighing: what the admitted claims about each proposition come to under a policy.

A claim counts as evidence for a proposition only when the policy admits it (its
source is trusted for the predicate, and no party states the conclusion); the
admitted claims are weighed by the policy's conflict rules into accepted, rejected
or unknown, each with its reason. They are weighed per atom as the rules read it,
so propositions the rules cannot tell apart are settled together. The policy's
completeness declarations are checked here too: which close a scope, and why the
others do not.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from datetime import datetime, timezone
from decimal import Decimal
from typing import Any

from gaf.derive import Ground
from gaf.projection.cone import cone_predicates, in_cone
from gaf.records import (
    AbsenceMeaning,
    Claim,
    CompletenessDeclaration,
    ConflictPolicy,
    ConflictStrategy,
    Evaluation,
    Exclusion,
    IgnoredDeclaration,
    Outcome,
    Polarity,
    Projection,
    Proposition,
)
from gaf.types import format_instant, number_text


def evaluate_claims(policy: Projection, claims: Iterable[Claim]) -> tuple[list[Evaluation], list[Exclusion]]:
    """One evaluation per proposition some admitted claim states, and one exclusion per claim not admitted.

    Relational: a claim is weighed per proposition, so one claim can support one
    proposition and refute another, or be evidence for a date and not for a purpose.
    A claim that is not admitted for a proposition (its source is not trusted for
    the predicate, or a party states the conclusion) is kept out of the evaluation
    altogether — out of its claims, its reason and so its id — and its proposition
    is evaluated only if some admitted claim states it. Excluded is inert: removing
    every excluded claim leaves every evaluation, fact and GAF hash the same.

    Propositions of one atom are weighed together (``_weighed_together``), each
    still evaluated under its own id.
    """
    predicates = cone_predicates(policy)
    trusted = {(t.source, p) for t in policy.trust for p in t.predicates}
    stated: dict[str, tuple[Proposition, list[tuple[Claim, Polarity]]]] = {}
    exclusions: dict[str, Exclusion] = {}
    for claim in sorted(claims, key=lambda c: c.id):
        for st in claim.statements:
            if not in_cone(policy, predicates, st.subject, st.predicate):
                continue
            prop = Proposition.shared(subject=st.subject, predicate=st.predicate, object=st.object, value=st.value, unit=st.unit,
                                      valid=st.valid)  # fmt: skip
            why = _excluded_because(policy, trusted, claim, prop.predicate)
            if why is None:
                stated.setdefault(prop.id, (prop, []))[1].append((claim, st.polarity))
            else:
                ex = Exclusion.shared(claim=claim.id, proposition=prop.id, projection=policy.id, reason=why)
                exclusions[ex.id] = ex
    evaluations = [ev for twins in _weighed_together(stated) for ev in _evaluate(policy, twins)]
    if policy.functional:
        evaluations = _one_value(policy, evaluations, stated)
    return sorted(evaluations, key=lambda e: e.proposition), [exclusions[k] for k in sorted(exclusions)]


def _one_value(
    policy: Projection, evaluations: list[Evaluation], stated: dict[str, tuple[Proposition, list[tuple[Claim, Polarity]]]]
) -> list[Evaluation]:
    """A functional predicate takes one value per subject at a time: where two different values
    of one are accepted over overlapping valid times, that is a conflict, settled by the policy's
    conflict rules as any other — an authoritative source's value wins over the others (or, under
    corroboration, the value more sources affirm) — and left unknown, both, when they do not
    settle it. Never silently both."""
    functional = set(policy.functional)
    authoritative = {t.source for t in policy.trust if t.authoritative}
    by_subject: dict[tuple[str, str], list[Evaluation]] = defaultdict(list)
    for ev in evaluations:
        prop = stated[ev.proposition][0]
        if ev.outcome == Outcome.accepted and prop.predicate in functional:
            by_subject[(prop.predicate, prop.subject)].append(ev)
    changed: dict[str, Evaluation] = {}
    for (predicate, _), accepted in sorted(by_subject.items()):
        clashing = [ev for ev in accepted if any(_clash(stated[ev.proposition][0], stated[o.proposition][0]) for o in accepted)]
        if not clashing:
            continue
        conflict = _conflict_for(policy, predicate)

        def weight(ev: Evaluation) -> tuple[bool, int]:
            sources = {c.source for c, polarity in stated[ev.proposition][1] if polarity == Polarity.affirmed}
            return bool(sources & authoritative), len(sources)

        weights = {ev.id: weight(ev) for ev in clashing}
        if conflict.strategy == ConflictStrategy.authoritative_wins:
            winners = [ev for ev in clashing if weights[ev.id][0]]
        elif conflict.strategy == ConflictStrategy.corroboration:
            most = max(n for _, n in weights.values())
            winners = [ev for ev in clashing if weights[ev.id][1] == most]
        else:
            winners = []
        values = ", ".join(sorted(_target_text(stated[ev.proposition][0]) for ev in clashing))
        for ev in clashing:
            if len(winners) == 1 and ev.id != winners[0].id:
                won = _target_text(stated[winners[0].proposition][0])
                outcome, reason = Outcome.rejected, f"{predicate} takes one value, and {values} were each accepted: {won} wins by the conflict rules"
            elif len(winners) == 1:
                continue
            else:
                outcome, reason = Outcome.unknown, f"conflict: {predicate} takes one value, and {values} are each accepted"
            changed[ev.id] = Evaluation.shared(
                proposition=ev.proposition, projection=ev.projection, outcome=outcome, reason=reason,
                supporting=ev.supporting, refuting=ev.refuting,
            )  # fmt: skip
    return [changed.get(ev.id, ev) for ev in evaluations]


def _clash(a: Proposition, b: Proposition) -> bool:
    """Two values of one predicate for one subject, over valid times that overlap (none: always)."""
    if ground_of(a) == ground_of(b):
        return False
    if a.valid is None or b.valid is None:
        return True
    starts_before_b_ends = a.valid.start is None or b.valid.end is None or a.valid.start < b.valid.end
    starts_before_a_ends = b.valid.start is None or a.valid.end is None or b.valid.start < a.valid.end
    return starts_before_b_ends and starts_before_a_ends


def _target_text(p: Proposition) -> str:
    target = p.target
    return number_text(target) if isinstance(target, (int, Decimal)) and not isinstance(target, bool) else str(target)


def _weighed_together(
    stated: dict[str, tuple[Proposition, list[tuple[Claim, Polarity]]]],
) -> list[list[tuple[Proposition, list[tuple[Claim, Polarity]]]]]:
    """The stated propositions grouped by the atom the rules read, each group by proposition id.

    A proposition's id includes its valid interval, so ``p(x)`` said with no interval and
    ``p(x)`` said over July are two propositions; yet derivation and verdict rules match
    atoms by predicate, subject and target alone (``ground_of``: object or value, compared
    as the rules compare them) and read no interval. Weighed apart, an affirmation of one
    and a denial of the other would both stand — the atom true and false at once to the
    rules, an authoritative source's word no longer winning, a conflict no longer
    unresolved. So the condition is exactly the rules' own: the same ground atom, whatever
    the intervals. Intervals are not compared with the question's period either: nothing
    in projection reads a statement's interval, so a statement that covers the period and
    one that does not are the same atom to the rules, and must be weighed as one.
    """
    atoms: dict[Ground, list[str]] = defaultdict(list)
    for pid, (prop, _) in sorted(stated.items()):
        atoms[ground_of(prop)].append(pid)
    return [[stated[pid] for pid in pids] for pids in atoms.values()]


def ground_of(p: Proposition) -> Ground:
    """The ground atom a proposition states: what derivation and verdict rules read of it."""
    return (p.predicate, p.subject, p.target)


def _excluded_because(policy: Projection, trusted: set[tuple[str, str]], claim: Claim, predicate: str) -> str | None:
    """Why a claim is not evidence for a predicate under the policy, or None if it is."""
    if (claim.source, predicate) not in trusted:
        return f"its source may not establish {predicate}"
    if predicate in policy.conclusions and claim.observer in policy.parties:
        return "a party's statement of the conclusion is not evidence of it"
    return None


def _evaluate(policy: Projection, twins: list[tuple[Proposition, list[tuple[Claim, Polarity]]]]) -> list[Evaluation]:
    """Weigh the admitted claims about one atom, once, and evaluate each of its propositions so.

    Every proposition of the atom gets its own evaluation, with the one outcome and every
    claim it was weighed from: a fact rests on all of them, and losing any may move it.
    """
    conflict = _conflict_for(policy, twins[0][0].predicate)
    counted: dict[Polarity, list[Claim]] = {Polarity.affirmed: [], Polarity.denied: []}
    for _, said in twins:
        for claim, polarity in said:
            counted[polarity].append(claim)
    outcome, reason = _weigh(policy, conflict, counted)
    if len(twins) > 1:
        reason += f"; weighed with {len(twins) - 1} other proposition(s) of the same atom"
    return [
        Evaluation.shared(
            proposition=prop.id,
            projection=policy.id,
            outcome=outcome,
            reason=reason,
            supporting=sorted({c.id for c in counted[Polarity.affirmed]}),
            refuting=sorted({c.id for c in counted[Polarity.denied]}),
        )
        for prop, _ in twins
    ]


def _conflict_for(policy: Projection, predicate: str) -> ConflictPolicy:
    for rule in policy.evaluation_rules:
        if predicate in rule.predicates:
            return rule.conflict
    return policy.conflict


def _weigh(policy: Projection, conflict: ConflictPolicy, counted: dict[Polarity, list[Claim]]) -> tuple[Outcome, str]:
    authoritative = {t.source for t in policy.trust if t.authoritative}
    sides = {}
    for polarity, claims in counted.items():
        sources = {c.source for c in claims}
        sides[polarity] = (bool(sources & authoritative), len(sources))
    (a_auth, a_n), (d_auth, d_n) = sides[Polarity.affirmed], sides[Polarity.denied]
    enough = conflict.corroboration
    if a_n and not d_n:
        if a_auth or a_n >= enough:
            return Outcome.accepted, "established by an authoritative source" if a_auth else f"corroborated by {a_n} source(s)"
        return Outcome.unknown, f"needs {enough} independent sources, has {a_n}"
    if d_n and not a_n:
        if d_auth or d_n >= enough:
            return Outcome.rejected, "denied by an authoritative source" if d_auth else f"denied by {d_n} source(s)"
        return Outcome.unknown, f"a denial needs {enough} independent sources, has {d_n}"
    if conflict.strategy == ConflictStrategy.authoritative_wins and a_auth != d_auth:
        return (Outcome.accepted, "conflict: the authoritative source affirms") if a_auth else (
            Outcome.rejected, "conflict: the authoritative source denies")
    if conflict.strategy == ConflictStrategy.corroboration and a_n != d_n and max(a_n, d_n) >= enough:
        return (Outcome.accepted, f"conflict: {a_n} sources affirm, {d_n} deny") if a_n > d_n else (
            Outcome.rejected, f"conflict: {d_n} sources deny, {a_n} affirm")
    return Outcome.unknown, f"conflict left unresolved ({a_n} source(s) affirm, {d_n} deny)"


def closed_scopes(policy: Projection, as_of: datetime) -> tuple[list[CompletenessDeclaration], list[IgnoredDeclaration]]:
    """The policy's completeness declarations that close a scope as of a time, and the others with why.

    A declaration closes its scope only when its source is trusted for the
    predicate (an untrusted source's silence proves nothing), absence of the
    predicate means false, it was declared by ``as_of``, and its interval covers
    the question's whole period. One that fails is not dropped in silence: it is
    returned with the reason, reported at ``policy add`` and ``project``, and
    listed in the closure — the usual mistake is an end read as inclusive.
    """
    trusted = {(t.source, p) for t in policy.trust for p in t.predicates}
    period = policy.scope.period
    used: list[CompletenessDeclaration] = []
    ignored: list[IgnoredDeclaration] = []
    for d in sorted(policy.completeness, key=lambda d: d.id):
        if (d.source, d.predicate) not in trusted:
            why = f"its source is not trusted for {d.predicate}, so its silence proves nothing"
        elif policy.absence.get(d.predicate, AbsenceMeaning.false) != AbsenceMeaning.false:
            why = f"the policy says absence of {d.predicate} means unknown"
        elif d.as_of > as_of:
            why = f"declared as of {format_instant(d.as_of)}, after the question's as-of {format_instant(as_of)}"
        elif period is not None and not d.valid.covers(period):
            why = (f"covers {_interval(d.valid)}, not the whole of the question's period {_interval(period)} "
                   "(interval ends are exclusive: to include the last day, end at the next day)")  # fmt: skip
        else:
            used.append(d)
            continue
        ignored.append(IgnoredDeclaration(declaration=d.id, reason=f"{d.scope_text()}: {why}"))
    return used, ignored


def declaration_problems(policy: Projection) -> list[IgnoredDeclaration]:
    """The declarations that close no scope whenever the policy is projected (said at ``policy add``)."""
    return closed_scopes(policy, datetime.max.replace(tzinfo=timezone.utc))[1]


def _interval(i: Any) -> str:
    start = format_instant(i.start) if i.start else "-inf"
    end = format_instant(i.end) if i.end else "+inf"
    return f"[{start}, {end})"
