"""Projection: from open claims to the premises of one decision.

Building the premises of a decision is a declared procedure, distinct from
judging them. A projection policy (a ``Projection`` record) says which sources
may establish which predicates, how conflicts are settled, where the absence of a
claim counts as false, and which derivation rules apply. ``evaluate`` applies it
to the claims in the question's cone and returns evaluations and candidate facts,
each with its evidence; it writes nothing. ``accept`` writes what a reviewer
accepted, with a decision-log entry, in one transaction; ``project`` does both
under a review policy and returns the GAF snapshot.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from gaf.derive import Conclusions, Entry, Ground, Justification, Truth, evaluate_rules, holds, show
from gaf.errors import BatchRejected, GafError, InvalidRecord, UnknownReference
from gaf.records import (
    GAF,
    AbsenceMeaning,
    AcceptedFact,
    Claim,
    CompletenessDeclaration,
    ConflictPolicy,
    ConflictStrategy,
    Decision,
    Derivation,
    Evaluation,
    Exclusion,
    IgnoredDeclaration,
    Outcome,
    Polarity,
    Projection,
    Proposition,
    Record,
    matches_pattern,
)
from gaf.rules import Atom, Not, RuleRef, check_rules, resolve
from gaf.store.base import GafStore, ItemError, WriteReport
from gaf.types import format_instant

#: What this module computes, named in every closure it makes. Bumped whenever the
#: same claims and policy can give another GAF, so replaying an older closure names
#: the implementation layer instead of failing somewhere obscure.
#: 2: a claim the policy does not admit as evidence is excluded (an Exclusion record),
#:    not evaluated: it no longer leaves its proposition "unknown" in the GAF.
IMPLEMENTATION = "gaf-projection/2"

# ---------------------------------------------------------------------- the cone


def established_predicates(policy: Projection) -> set[str]:
    """Predicates some trusted source may establish (or the question's conclusions)."""
    return {p for t in policy.trust for p in t.predicates} | set(policy.conclusions)


def cone_predicates(policy: Projection) -> set[str]:
    """Every predicate the policy can read: those sources may establish, and those rules mention."""
    preds = {p for t in policy.trust for p in t.predicates} | set(policy.conclusions)
    by_ref = {r.ref: r for r in policy.derivation_rules}
    for r in policy.derivation_rules:
        for b in r.bodies:
            for clause in b.when:
                inner = clause.not_ if isinstance(clause, Not) else clause
                if isinstance(inner, Atom) or isinstance(inner, RuleRef) and inner.rule in by_ref:
                    preds.add(resolve(inner, by_ref).predicate)
    return preds - {r.head.predicate for r in policy.derivation_rules} | set(policy.conclusions)


def cone_claims(store: GafStore, policy: Projection, as_of: datetime) -> list[Claim]:
    """The claims recorded by the cut-off that state something in the question's cone, by id."""
    cutoff = format_instant(min(as_of, policy.cutoff) if policy.cutoff else as_of)
    predicates = sorted(cone_predicates(policy))
    patterns = policy.scope.subjects or ["*"]
    exact = sorted(p for p in patterns if not p.endswith("*"))
    prefixes = sorted(p[:-1] for p in patterns if p.endswith("*"))
    # The cut-off is applied here, not in the store's question: see gaf.store.questions.
    found = store.cone_claims(exact, prefixes, predicates)
    invalid = store.invalidations({c.source for c in found}, as_of)
    return [c for c in found if format_instant(c.recorded_at) <= cutoff and not _invalidated(c, invalid)]


def invalidations(store: GafStore, sources: Iterable[str], as_of: datetime) -> dict[str, str]:
    """For each invalidated source among these, the earliest time from which its claims are void."""
    return store.invalidations(sources, as_of)


def _invalidated(claim: Claim, invalid: dict[str, str]) -> bool:
    """A claim observed at or after its source's invalidation counts for nothing."""
    since = invalid.get(claim.source)
    return since is not None and format_instant(claim.observed_at) >= since


def in_cone(policy: Projection, predicates: set[str], subject: str, predicate: str) -> bool:
    return predicate in predicates and any(matches_pattern(p, subject) for p in policy.scope.subjects or ["*"])


# ---------------------------------------------------------------------- evaluating claims


def evaluate_claims(policy: Projection, claims: Iterable[Claim]) -> tuple[list[Evaluation], list[Exclusion]]:
    """One evaluation per proposition some admitted claim states, and one exclusion per claim not admitted.

    Relational: a claim is weighed per proposition, so one claim can support one
    proposition and refute another, or be evidence for a date and not for a purpose.
    A claim that is not admitted for a proposition (its source is not trusted for
    the predicate, or a party states the conclusion) is kept out of the evaluation
    altogether — out of its claims, its reason and so its id — and its proposition
    is evaluated only if some admitted claim states it. Excluded is inert: removing
    every excluded claim leaves every evaluation, fact and GAF hash the same.
    """
    predicates = cone_predicates(policy)
    trusted = {(t.source, p) for t in policy.trust for p in t.predicates}
    stated: dict[str, tuple[Proposition, list[tuple[Claim, Polarity]]]] = {}
    exclusions: dict[str, Exclusion] = {}
    for claim in sorted(claims, key=lambda c: c.id):
        for st in claim.statements:
            if not in_cone(policy, predicates, st.subject, st.predicate):
                continue
            prop = Proposition.shared(subject=st.subject, predicate=st.predicate, object=st.object, value=st.value, valid=st.valid)
            why = _excluded_because(policy, trusted, claim, prop.predicate)
            if why is None:
                stated.setdefault(prop.id, (prop, []))[1].append((claim, st.polarity))
            else:
                ex = Exclusion.shared(claim=claim.id, proposition=prop.id, projection=policy.id, reason=why)
                exclusions[ex.id] = ex
    evaluations = [_evaluate(policy, prop, said) for _, (prop, said) in sorted(stated.items())]
    return evaluations, [exclusions[k] for k in sorted(exclusions)]


def _excluded_because(policy: Projection, trusted: set[tuple[str, str]], claim: Claim, predicate: str) -> str | None:
    """Why a claim is not evidence for a predicate under the policy, or None if it is."""
    if (claim.source, predicate) not in trusted:
        return f"its source may not establish {predicate}"
    if predicate in policy.conclusions and claim.observer in policy.parties:
        return "a party's statement of the conclusion is not evidence of it"
    return None


def _evaluate(policy: Projection, prop: Proposition, said: list[tuple[Claim, Polarity]]) -> Evaluation:
    """Weigh the admitted claims about one proposition."""
    conflict = _conflict_for(policy, prop.predicate)
    counted: dict[Polarity, list[Claim]] = {Polarity.affirmed: [], Polarity.denied: []}
    for claim, polarity in said:
        counted[polarity].append(claim)
    outcome, reason = _weigh(policy, conflict, counted)
    return Evaluation.shared(
        proposition=prop.id,
        projection=policy.id,
        outcome=outcome,
        reason=reason,
        supporting=sorted(c.id for c in counted[Polarity.affirmed]),
        refuting=sorted(c.id for c in counted[Polarity.denied]),
    )


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


def _short(record_id: str) -> str:
    return record_id[: record_id.index(":") + 13]


# ---------------------------------------------------------------------- the fact base rules read


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
        scope = f"{d.predicate}({d.subject}{'' if d.object == '*' else ', ' + d.object})"
        ignored.append(IgnoredDeclaration(declaration=d.id, reason=f"{scope}: {why}"))
    return used, ignored


def declaration_problems(policy: Projection) -> list[IgnoredDeclaration]:
    """The declarations that close no scope whenever the policy is projected (said at ``policy add``)."""
    return closed_scopes(policy, datetime.max.replace(tzinfo=timezone.utc))[1]


def _interval(i: Any) -> str:
    start = format_instant(i.start) if i.start else "-inf"
    end = format_instant(i.end) if i.end else "+inf"
    return f"[{start}, {end})"


class PolicyFacts:
    """Facts as rules read them, with the policy's closed scopes.

    Absence inside a declared complete scope (by a source trusted for the
    predicate, declared by ``as_of``, covering the question's period, for a
    predicate whose absence means false) is false; a predicate the policy's rules
    derive is closed by those rules; everything else absent is unknown.
    """

    def __init__(self, policy: Projection, entries: Iterable[Entry], as_of: datetime):
        self.by_pred: dict[str, list[Entry]] = defaultdict(list)
        for e in entries:
            self.by_pred[e.ground[0]].append(e)
        self.derived = {r.head.predicate for r in policy.derivation_rules}
        self._rules = sorted(policy.derivation_rules, key=lambda r: r.ref)
        self.by_ref = {r.ref: r for r in self._rules}
        self._asking: set[Ground] = set()
        self.declarations, self.ignored = closed_scopes(policy, as_of)

    def match(self, predicate: str, subject: Any, obj: Any) -> list[Entry]:
        return [
            e for e in self.by_pred.get(predicate, [])
            if (subject is None or e.ground[1] == subject) and (obj is None or e.ground[2] == obj)
        ]  # fmt: skip

    def closed(self, predicate: str, subject: Any, obj: Any) -> str | None:
        if predicate in self.derived:
            # Closed by the rules — unless, asked about one subject, some body of a rule
            # for it might still hold there: premises absent outside a closed scope bind
            # nothing bottom-up, yet leave the conclusion open (unknown), not false.
            return None if subject is not None and self._may_derive(predicate, subject, obj) else ""
        for d in self.declarations:
            if d.covers(predicate, subject, obj):
                return d.id
        return None


    def _may_derive(self, predicate: str, subject: Any, obj: Any) -> bool:
        """Whether some body of a rule for predicate(subject, obj) is not false, top-down."""
        ground = (predicate, subject, obj)
        if ground in self._asking:
            return False  # a recursive rule asking for itself: that way derives nothing
        self._asking.add(ground)
        try:
            for rule in self._rules:
                binding = bind_head(rule.head, predicate, subject, obj)
                if binding is None:
                    continue
                for body in rule.bodies:
                    if holds(body.when, self, binding, self.by_ref)[0] != Truth.FALSE:
                        return True
            return False
        finally:
            self._asking.discard(ground)


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


# ---------------------------------------------------------------------- candidates


@dataclass(frozen=True)
class Candidate:
    """A fact the policy would admit, with the record that justifies it and its evidence."""

    fact: AcceptedFact
    proposition: Proposition
    justification: Evaluation | Derivation
    confidence: float
    evidence: dict[str, Any]
    #: the order the evaluator found it in (0 for facts straight from evaluations)
    seq: int = 0

    @property
    def id(self) -> str:
        return self.fact.id


@dataclass
class Evaluated:
    """What a policy makes of the claims in a question's cone, before anyone accepts anything."""

    policy: Projection
    as_of: datetime
    claims: list[Claim]
    evaluations: list[Evaluation]
    #: claims read and not admitted, per proposition: never part of the GAF or the fact base
    exclusions: list[Exclusion]
    candidates: list[Candidate]
    derivations: list[Derivation]
    unresolved: list[Proposition]
    rejected: list[Proposition]
    propositions: dict[str, Proposition]
    conclusions: Conclusions
    #: candidate facts by proposition id (several when independently justified)
    by_proposition: dict[str, list[Candidate]] = field(default_factory=dict)

    def candidate(self, predicate: str, subject: str, obj: Any = None) -> list[Candidate]:
        """The candidates for one proposition pattern (obj None: any)."""
        return [
            c for c in self.candidates
            if c.proposition.predicate == predicate and c.proposition.subject == subject
            and (obj is None or obj in (c.proposition.object, c.proposition.value))
        ]  # fmt: skip

    def why_not(self, predicate: str, subject: str, obj: Any = None) -> dict[str, Any]:
        """Why a proposition is not an accepted candidate: its evaluation, or the atom a rule stopped on."""
        ground: Ground = (predicate, subject, obj)
        if self.candidate(predicate, subject, obj):
            return {"proposition": _show(ground), "status": "accepted"}
        out: dict[str, Any] = {"proposition": _show(ground), "status": "not derived", "reasons": []}
        for ev in self.evaluations:
            p = self.propositions[ev.proposition]
            if (p.predicate, p.subject) == (predicate, subject) and obj in (None, p.object, p.value):
                out["status"] = ev.outcome.value
                out["reasons"].append({"evaluation": ev.id, "outcome": ev.outcome.value, "reason": ev.reason})
        derived = self.conclusions.derived.get(ground)
        if derived is not None:
            out["status"] = "unknown" if derived.truth == Truth.UNKNOWN else out["status"]
            for j in derived.justifications.values():
                out["reasons"].append({
                    "rule": j.rule, "body": j.body + 1, "truth": j.truth.name.lower(),
                    "unresolved": [_show(u) for u in j.unresolved],
                })  # fmt: skip
        for rule_ref, a, binding in self.conclusions.dead_ends:
            if any(r.ref == rule_ref and r.head.predicate == predicate for r in self.policy.derivation_rules):
                out["reasons"].append({"rule": rule_ref, "stopped_at": str(a), "bindings": binding, "truth": "unknown"})
        if not out["reasons"]:
            rules = [r.ref for r in self.policy.derivation_rules if r.head.predicate == predicate]
            why = (f"every body of {', '.join(rules)} is false for it" if rules
                   else "no admitted claim in the cone states it and no rule derives it")
            out["status"] = "false" if rules else out["status"]
            out["reasons"].append({"reason": why})
        # Excluded claims are shown last and decide nothing: they are not evidence here.
        for ex in self.exclusions:
            p = self.propositions[ex.proposition]
            if (p.predicate, p.subject) == (predicate, subject) and obj in (None, p.object, p.value):
                out["reasons"].append({"exclusion": ex.id, "claim": ex.claim, "excluded": ex.reason})
        return out

    @property
    def ignored_completeness(self) -> list[IgnoredDeclaration]:
        """The policy's completeness declarations that close no scope as of this evaluation, and why."""
        return closed_scopes(self.policy, self.as_of)[1]

    def fact_base(self) -> PolicyFacts:
        """The evaluation as verdict rules would read its GAF if every candidate were accepted."""
        entries = [Entry(ground_of(c.proposition), Truth.TRUE, c.id) for c in self.candidates]
        entries += [Entry(ground_of(p), Truth.UNKNOWN, p.id) for p in self.unresolved]
        entries += [Entry(ground_of(p), Truth.FALSE, p.id) for p in self.rejected]
        return PolicyFacts(self.policy, entries, self.as_of)

    def gaf(self, accepted: Iterable[str] | None = None) -> GAF:
        """The snapshot of the accepted candidates (all of them when ``accepted`` is None)."""
        chosen = self._chosen(accepted)
        return GAF(
            projection=self.policy.id,
            facts=[c.fact.id for c in chosen],
            derivations=[c.justification.id for c in chosen if isinstance(c.justification, Derivation)],
            unresolved=[p.id for p in self.unresolved],
            rejected=[p.id for p in self.rejected],
        )

    def _chosen(self, accepted: Iterable[str] | None) -> list[Candidate]:
        if accepted is None:
            return list(self.candidates)
        wanted = set(accepted)
        unknown = wanted - {c.id for c in self.candidates}
        if unknown:
            raise InvalidRecord(f"not candidates of this evaluation: {', '.join(sorted(unknown))}")
        return [c for c in self.candidates if c.id in wanted]


def evaluate(store: GafStore, policy: Projection, *, as_of: datetime) -> Evaluated:
    """Evaluate a policy against the claims recorded by ``as_of``: writes nothing.

    The same store contents, policy and ``as_of`` always give the same evaluations,
    candidates and ids, whatever order the claims arrived in.
    """
    claims = cone_claims(store, policy, as_of)
    return evaluate_over(policy, claims, as_of=as_of)


def evaluate_over(policy: Projection, claims: Iterable[Claim], *, as_of: datetime) -> Evaluated:
    """``evaluate`` over claims already in hand (e.g. an in-memory what-if copy)."""
    check_rules(policy.derivation_rules, known_predicates=established_predicates(policy))
    cutoff = min(as_of, policy.cutoff) if policy.cutoff else as_of
    claims = sorted((c for c in claims if c.recorded_at <= cutoff), key=lambda c: c.id)
    evaluations, exclusions = evaluate_claims(policy, claims)
    props: dict[str, Proposition] = {}
    for claim in claims:
        for st in claim.statements:
            p = st.proposition()
            props[p.id] = p
    facts = PolicyFacts(policy, evaluated_entries(evaluations, props), as_of)
    conclusions = evaluate_rules(policy.derivation_rules, facts)
    return _candidates(policy, as_of, claims, evaluations, exclusions, props, conclusions)


def _candidates(
    policy: Projection,
    as_of: datetime,
    claims: list[Claim],
    evaluations: list[Evaluation],
    exclusions: list[Exclusion],
    props: dict[str, Proposition],
    conclusions: Conclusions,
) -> Evaluated:
    by_ground: dict[Ground, list[Candidate]] = defaultdict(list)
    derived_preds = {r.head.predicate for r in policy.derivation_rules}
    for ev in evaluations:
        p = props[ev.proposition]
        if ev.outcome == Outcome.accepted and p.predicate not in derived_preds:
            fact = AcceptedFact.shared(proposition=p.id, justification=ev.id, projection=policy.id)
            evidence: dict[str, Any] = {"evaluation": ev.id, "reason": ev.reason, "claims": ev.supporting}
            by_ground[ground_of(p)].append(Candidate(fact, p, ev, 1.0, evidence))
    derivations: list[Derivation] = []
    unresolved: dict[str, Proposition] = {}
    # Justifications in the order they were found: premises always come first.
    ordered = sorted(
        ((j, d.ground) for d in conclusions.derived.values() for j in d.justifications.values()),
        key=lambda item: item[0].seq,
    )
    for j, ground in ordered:
        prop = proposition_of(ground)
        if j.truth == Truth.UNKNOWN:
            unresolved[prop.id] = prop
            for u in j.unresolved:
                if u[1] is None:
                    continue  # a pattern (not credit(_, x)), not one proposition: kept in the trace
                up = proposition_of(u)
                unresolved.setdefault(up.id, up)
            continue
        premises = _premise_facts(j, by_ground)
        derivation = Derivation.shared(
            rule=f"{j.rule}#{j.body + 1}",
            bindings={k.lstrip("?"): v for k, v in j.bindings},
            premises=premises,
            negative_premises=list(j.negatives),
            conclusion=prop.id,
            projection=policy.id,
            confidence=j.confidence,
        )
        derivations.append(derivation)
        fact = AcceptedFact.shared(proposition=prop.id, justification=derivation.id, projection=policy.id)
        evidence = {
            "rule": j.rule, "body": j.body + 1, "bindings": dict(derivation.bindings),
            "premises": [_evidence_of(p.ground, by_ground) for p in j.premises],
            "relied_on_absence": list(j.negatives),
        }  # fmt: skip
        by_ground[ground].append(Candidate(fact, prop, derivation, j.confidence, evidence, j.seq))
        props[prop.id] = prop
    accepted_props = {c.proposition.id for cs in by_ground.values() for c in cs}
    for ev in evaluations:
        if ev.outcome == Outcome.unknown and ev.proposition not in accepted_props:
            unresolved.setdefault(ev.proposition, props[ev.proposition])
    for pid in list(unresolved):
        if pid in accepted_props:
            del unresolved[pid]
    for p in unresolved.values():
        props.setdefault(p.id, p)
    rejected = sorted(
        (props[ev.proposition] for ev in evaluations if ev.outcome == Outcome.rejected), key=lambda p: p.id
    )
    candidates = sorted((c for cs in by_ground.values() for c in cs), key=lambda c: c.id)
    by_prop: dict[str, list[Candidate]] = defaultdict(list)
    for c in candidates:
        by_prop[c.proposition.id].append(c)
    return Evaluated(
        policy=policy,
        as_of=as_of,
        claims=claims,
        evaluations=evaluations,
        exclusions=exclusions,
        candidates=candidates,
        derivations=sorted(derivations, key=lambda d: d.id),
        unresolved=sorted(unresolved.values(), key=lambda p: p.id),
        rejected=rejected,
        propositions=props,
        conclusions=conclusions,
        by_proposition=dict(by_prop),
    )


def ground_of(p: Proposition) -> Ground:
    """The ground atom a proposition states."""
    return (p.predicate, p.subject, p.object if p.object is not None else p.value)


def proposition_of(ground: Ground) -> Proposition:
    """The proposition a ground atom stands for."""
    predicate, subject, target = ground
    if target is None:
        return Proposition.shared(subject=subject, predicate=predicate)
    if isinstance(target, str):
        return Proposition.shared(subject=subject, predicate=predicate, object=target)
    return Proposition.shared(subject=subject, predicate=predicate, value=target)


def _premise_facts(j: Justification, by_ground: dict[Ground, list[Candidate]]) -> list[str]:
    """The accepted-fact ids a justification rests on (rejections it relied on, by evaluation)."""
    out: set[str] = set()
    for p in j.premises:
        if p.truth == Truth.FALSE:
            # an explicit rejection: the evaluation itself (a false premise is always a stored one, so it has an id)
            if p.evidence is not None:
                out.add(p.evidence)
            continue
        out.update(c.fact.id for c in by_ground.get(p.ground, []) if c.seq < j.seq)
    return sorted(out)


def _evidence_of(ground: Ground, by_ground: dict[Ground, list[Candidate]]) -> dict[str, Any]:
    return {"atom": _show(ground), "supports": [c.evidence for c in by_ground.get(ground, [])]}


def _show(ground: Ground) -> str:
    return show(ground)


# ---------------------------------------------------------------------- review and acceptance


@dataclass(frozen=True)
class ReviewPolicy:
    """Which candidates are accepted without a person: those at or above a confidence."""

    auto_accept_at: float = 1.0

    def split(self, evaluated: Evaluated) -> tuple[list[Candidate], list[Candidate]]:
        """(accepted automatically, routed to a person), each by id."""
        auto = [c for c in evaluated.candidates if c.confidence >= self.auto_accept_at]
        auto_ids = {c.id for c in auto}
        # A derived fact is only accepted with every premise it rests on.
        changed = True
        while changed:
            changed = False
            for c in list(auto):
                needs = set(c.justification.premises) if isinstance(c.justification, Derivation) else set()
                facts = {n for n in needs if n.startswith("fact:")}
                if not facts <= auto_ids:
                    auto.remove(c)
                    auto_ids.discard(c.id)
                    changed = True
        routed = [c for c in evaluated.candidates if c.id not in auto_ids]
        return auto, routed


@dataclass
class AcceptReport:
    """What an acceptance wrote (or, in a dry run, would write)."""

    decision: Decision
    records: list[Record]
    write: WriteReport
    dry_run: bool

    def to_dict(self) -> dict[str, Any]:
        return {
            "decision": self.decision.id,
            "dry_run": self.dry_run,
            "would_write" if self.dry_run else "records": [r.id for r in self.records],
            **({} if self.dry_run else self.write.to_dict()),
        }


def accept(
    store: GafStore,
    evaluated: Evaluated,
    candidates: Iterable[Candidate | str],
    *,
    reviewer: str,
    at: datetime,
    reason: str,
    refused: Iterable[str] = (),
    atomic: bool = True,
    dry_run: bool = False,
    with_gaf: bool = False,
) -> AcceptReport:
    """Write accepted candidates, their evidence and a decision-log entry in one transaction.

    Nothing enters the store except by a decision that names who, when and why.
    In atomic mode one bad candidate (e.g. a derived fact whose premise is neither
    accepted here nor stored) refuses the whole batch; otherwise the bad ones are
    reported in ``write.failed`` and the decision lists only what was accepted.
    ``dry_run`` writes nothing and reports the records it would write.
    """
    by_id = {c.id: c for c in evaluated.candidates}
    chosen: list[Candidate] = []
    for c in candidates:
        cid = c if isinstance(c, str) else c.id
        if cid not in by_id:
            raise InvalidRecord(f"{cid} is not a candidate of this evaluation", hint="evaluate again and accept its candidates")
        chosen.append(by_id[cid])
    chosen.sort(key=lambda c: c.id)
    bad = _unsupported(store, chosen)
    if bad and atomic:
        raise BatchRejected(list(bad.values()))
    failed = [ItemError(i, c.id, bad[c.id]) for i, c in enumerate(chosen) if c.id in bad]
    chosen = [c for c in chosen if c.id not in bad]
    decision = Decision(
        reviewer=reviewer, decided_at=at, reason=reason,
        accepted=[c.id for c in chosen], refused=sorted(refused),
    )  # fmt: skip
    records = _records_for(evaluated, chosen)
    if with_gaf:
        records.append(evaluated.gaf([c.id for c in chosen]))
    records.append(decision)
    if dry_run:
        present = store.exists(r.id for r in records)
        return AcceptReport(decision, [r for r in records if r.id not in present], WriteReport(failed=failed), True)
    report = store.put(records, at=at)
    report.failed = failed
    return AcceptReport(decision, records, report, False)


def _unsupported(store: GafStore, chosen: list[Candidate]) -> dict[str, GafError]:
    """Chosen derived facts whose premises are neither chosen too nor already stored.

    A derived fact is only as good as what it rests on; accepting it without its
    premises would write a proof with a hole in it.
    """
    chosen_ids = {c.id for c in chosen}
    premises = {p for c in chosen if isinstance(c.justification, Derivation) for p in c.justification.premises}
    stored = store.exists(premises - chosen_ids)
    bad: dict[str, GafError] = {}
    changed = True
    while changed:
        changed = False
        for c in chosen:
            if c.id in bad or not isinstance(c.justification, Derivation):
                continue
            missing = [p for p in c.justification.premises
                       if p.startswith("fact:") and (p in bad or p not in chosen_ids and p not in stored)]  # fmt: skip
            if missing:
                bad[c.id] = UnknownReference(
                    f"{_show(ground_of(c.proposition))} rests on {missing[0]}, which is neither accepted here nor stored",
                    where=c.id,
                    hint="accept its premises in the same decision, or first",
                )
                changed = True
    return bad


def _records_for(evaluated: Evaluated, chosen: list[Candidate]) -> list[Record]:
    """The policy, the propositions and evaluations behind the chosen facts, and the facts."""
    out: dict[str, Record] = {evaluated.policy.id: evaluated.policy}
    for ev in evaluated.evaluations:
        out.setdefault(ev.proposition, evaluated.propositions[ev.proposition])
        out.setdefault(ev.id, ev)
    for ex in evaluated.exclusions:
        out.setdefault(ex.proposition, evaluated.propositions[ex.proposition])
        out.setdefault(ex.id, ex)
    for p in evaluated.unresolved + evaluated.rejected:
        out.setdefault(p.id, p)
    for c in chosen:
        out.setdefault(c.proposition.id, c.proposition)
        out.setdefault(c.justification.id, c.justification)
        out.setdefault(c.fact.id, c.fact)
    return list(out.values())


@dataclass
class Projected:
    """The result of ``project``: the evaluation, what was accepted, the GAF, and what was
    written (for a dry run, what would have been)."""

    evaluated: Evaluated
    gaf: GAF
    accepted: list[Candidate]
    routed: list[Candidate]
    report: AcceptReport


def project(
    store: GafStore,
    policy: Projection,
    *,
    as_of: datetime,
    reviewer: str,
    at: datetime,
    review: ReviewPolicy = ReviewPolicy(),
    reason: str = "accepted automatically under the review policy",
    dry_run: bool = False,
) -> Projected:
    """Evaluate, accept what the review policy allows, and write the GAF: one transaction.

    Candidates below the review policy's confidence are routed to a person and
    left out of this GAF; they are returned in ``routed``. A dry run evaluates and
    splits the same way and writes nothing: the GAF it returns is the one a real
    run would write.
    """
    evaluated = evaluate(store, policy, as_of=as_of)
    auto, routed = review.split(evaluated)
    report = accept(store, evaluated, auto, reviewer=reviewer, at=at, reason=reason, with_gaf=True, dry_run=dry_run)
    return Projected(evaluated, evaluated.gaf([c.id for c in auto]), auto, routed, report)
