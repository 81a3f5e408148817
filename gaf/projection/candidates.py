"""Candidates: the facts a policy would admit, each with what justifies it, before anyone accepts one.

``evaluate`` applies a policy to the claims in the question's cone — weighing them,
then running its derivation rules over the fact base — and returns evaluations and
candidate facts, each with its evidence; it writes nothing.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from gaf.derive import Conclusions, Entry, Ground, Justification, Truth, evaluate_rules, is_pattern, limits_of, show
from gaf.errors import InvalidRecord
from gaf.projection.cone import cone_claims, program_of
from gaf.projection.facts import PolicyFacts, evaluated_entries, ground_of, proposition_of
from gaf.projection.weighing import closed_scopes, evaluate_claims
from gaf.records import (
    GAF,
    AcceptedFact,
    Claim,
    Derivation,
    Evaluation,
    Exclusion,
    IgnoredDeclaration,
    Outcome,
    Projection,
    Proposition,
)
from gaf.store.base import GafStore
from gaf.types import Progress, no_progress


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
            return {"proposition": show(ground), "status": "accepted"}
        out: dict[str, Any] = {"proposition": show(ground), "status": "not derived", "reasons": []}
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
                    "unresolved": [show(u) for u in j.unresolved],
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


def evaluate(store: GafStore, policy: Projection, *, as_of: datetime, progress: Progress = no_progress) -> Evaluated:
    """Evaluate a policy against the claims recorded by ``as_of``: writes nothing.

    The same store contents, policy and ``as_of`` always give the same evaluations,
    candidates and ids, whatever order the claims arrived in. ``progress`` is told when the
    claims are being read and when they are weighed.
    """
    progress("reading the claims", 0, None)
    claims = cone_claims(store, policy, as_of)
    progress("weighing the claims", len(claims), len(claims))
    return evaluate_over(policy, claims, as_of=as_of)


def evaluate_over(policy: Projection, claims: Iterable[Claim], *, as_of: datetime) -> Evaluated:
    """``evaluate`` over claims already in hand (e.g. an in-memory what-if copy)."""
    program = program_of(policy)  # refuses rules that read what nothing establishes, before any work
    cutoff = min(as_of, policy.cutoff) if policy.cutoff else as_of
    claims = sorted((c for c in claims if c.recorded_at <= cutoff), key=lambda c: c.id)
    evaluations, exclusions = evaluate_claims(policy, claims)
    props: dict[str, Proposition] = {}
    for claim in claims:
        for st in claim.statements:
            p = st.proposition()
            props[p.id] = p
    facts = PolicyFacts(policy, evaluated_entries(evaluations, props), as_of)
    conclusions = evaluate_rules(program, facts)
    conclusions.limits = limits_of([*conclusions.limits, *facts.limits])
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
                if is_pattern(u):
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
    return {"atom": show(ground), "supports": [c.evidence for c in by_ground.get(ground, [])]}
