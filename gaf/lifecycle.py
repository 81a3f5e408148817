"""The policy lifecycle: a decision on one case is not a precedent until an authority says so.

Case Decision → Policy Candidate → Ratified Policy → (cases outside it) Policy
Exception in a review queue. A ratified policy carries its authority, scope,
exceptions, effective date and whether it is retroactive; projections cite it by
version, and a published version never changes. A waiver passes one decision
past one policy on a named authority, with the reason. Sway measures what a
proposed change would do to the decisions already taken, before anyone ratifies it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from gaf.closure import Closed
from gaf.errors import InvalidRecord, NotAnAuthority, UnknownReference
from gaf.policies import publish
from gaf.projection import evaluate
from gaf.records import (
    GAF,
    AcceptedFact,
    Agent,
    CaseDecision,
    Closure,
    PolicyCandidate,
    PolicyException,
    Projection,
    Proposition,
    RatifiedPolicy,
    Scope,
    VerdictRules,
    Waiver,
)
from gaf.reopen import verdict_of
from gaf.rules import DerivationRule
from gaf.store.base import GafStore
from gaf.types import Progress, counted, no_progress
from gaf.verdict import UNDETERMINED, judge
from gaf.whatif import Settling, settling

AUTHORITY_ROLE = "authority"


def decide_case(store: GafStore, closure: str, *, decided_by: str, decision: str, reason: str, at: datetime,
                settles: str | None = None) -> CaseDecision:  # fmt: skip
    """Record a person's decision on one case (optionally settling a policy exception).

    An exception raised for one closure is settled only by a decision on that closure,
    so the review queue never empties on a decision about another case.
    """
    exception = store.get(settles) if settles else None
    if isinstance(exception, PolicyException) and exception.closure not in (None, closure):
        raise InvalidRecord(f"{settles} was raised for {exception.closure}, not for {closure}",
                            hint="decide the exception's own closure (gaf policy queue --json shows it)")  # fmt: skip
    record = CaseDecision(closure=closure, decided_by=decided_by, decision=decision, reason=reason, decided_at=at, settles=settles)
    store.put([record], at=at)
    return record


def propose(store: GafStore, *, name: str, text: str, rule: DerivationRule, cases: list[str], proposed_by: str,
            at: datetime) -> PolicyCandidate:  # fmt: skip
    """Generalise case decisions into a candidate policy: a rule, not yet binding."""
    candidate = PolicyCandidate(name=name, text=text, rule=rule.model_dump(mode="json"), cases=sorted(cases),
                                proposed_by=proposed_by, proposed_at=at)  # fmt: skip
    store.put([candidate], at=at)
    return candidate


def ratify(
    store: GafStore, candidate: PolicyCandidate, *, authority: str, version: int, effective: datetime, at: datetime,
    retroactive: bool = False, scope: Scope | None = None, exceptions: list[str] | None = None,
) -> RatifiedPolicy:  # fmt: skip
    """Ratify a candidate on an authority's word; only an agent with the authority role may."""
    _require_authority(store, authority, "ratify a policy")
    previous = [p for p in store.find(RatifiedPolicy, name=candidate.name) if p.version < version]
    policy = RatifiedPolicy(
        name=candidate.name, version=version, candidate=candidate.id, authority=authority, text=candidate.text,
        rule=candidate.rule, scope=scope or Scope(), exceptions=exceptions or [], effective=effective,
        retroactive=retroactive, revises=max(previous, key=lambda p: p.version).id if previous else None, ratified_at=at,
    )  # fmt: skip
    return publish(store, policy, at=at)


def waive(store: GafStore, *, policy: str, closure: str, authority: str, reason: str, at: datetime) -> Waiver:
    """Let one decision past one policy, on a named authority, with the reason."""
    if not reason.strip():
        raise NotAnAuthority("a waiver needs a reason", hint="say why this decision may pass the policy")
    _require_authority(store, authority, "grant a waiver")
    waiver = Waiver(policy=policy, closure=closure, authority=authority, reason=reason, granted_at=at)
    store.put([waiver], at=at)
    return waiver


def _require_authority(store: GafStore, agent_id: str, what: str) -> Agent:
    agent = store.get(agent_id)
    if not isinstance(agent, Agent):
        raise UnknownReference(f"no agent {agent_id}")
    if AUTHORITY_ROLE not in agent.roles:
        raise NotAnAuthority(f"{agent.key} may not {what}: the agent has no {AUTHORITY_ROLE!r} role", where=agent_id)
    return agent


# ---------------------------------------------------------------------- exceptions and the review queue


def route_exceptions(store: GafStore, closed: Closed, at: datetime, settled: Settling | None = None) -> list[PolicyException]:
    """Cases the ratified policies cited by the closure's projection did not settle, queued for people.

    A case is outside a ratified policy when the verdict is undetermined and the
    policy's rule did not conclude anything about the case's subject. The reason says
    what would settle it (``gaf.whatif.settling``, or ``settled`` when the caller has it):
    the premises that alone move the verdict, grouped, and a count of the rest — bounded
    by a count, so the same closure always gives the same reason, and the same id.
    """
    if closed.verdict.label != UNDETERMINED:
        return []
    projection = store.get(closed.closure.projection, Projection)
    gaf = store.get(closed.closure.gaf, GAF)
    facts = store.get_many(gaf.facts, AcceptedFact)
    props = store.get_many({f.proposition for f in facts.values()}, Proposition)
    out = []
    for ref in projection.ratified:
        ratified = store.get(ref, RatifiedPolicy)
        head = DerivationRule.model_validate(ratified.rule).head.predicate
        concluded = any(p.predicate == head and closed.closure.subject in (p.subject, p.object) for p in props.values())
        if not concluded:
            settled = settled or settling(store, closed.closure.id)
            out.append(PolicyException(policy=ratified.id, subject=closed.closure.subject, closure=closed.closure.id,
                                       reason=f"outside {ratified.name}@{ratified.version}: its rule did not apply; "
                                              f"{settled.summary()}", raised_at=at))  # fmt: skip
    store.put(out, at=at)
    return out


def review_queue(store: GafStore) -> list[PolicyException]:
    """Policy exceptions waiting for a person, oldest first."""
    return store.review_queue()


def awaiting_ratification(store: GafStore) -> list[PolicyCandidate]:
    """Policy candidates no ratified policy ratifies yet: rules proposed from case decisions
    that an authority has still to accept or let lie, oldest first."""
    candidates = store.find(PolicyCandidate)
    ratified = {c for c, _, _ in store.dependents([c.id for c in candidates], ("RATIFIES",))}
    return sorted((c for c in candidates if c.id not in ratified), key=lambda c: (c.proposed_at, c.id))


# ---------------------------------------------------------------------- sway


@dataclass
class Sway:
    """What a proposed policy would do to the closures already decided under the current one."""

    current: str
    proposed: str
    judged: int = 0
    flips: list[dict[str, Any]] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"current": self.current, "proposed": self.proposed, "judged": self.judged,
                "flipped": len(self.flips), "flips": self.flips, "unchanged": len(self.unchanged)}  # fmt: skip


def sway(store: GafStore, current: Projection, proposed: Projection, *, progress: Progress = no_progress) -> Sway:
    """Re-project and re-judge, in memory, every standing closure under ``current`` with ``proposed``.

    Writes nothing. Each closure is replayed as of its own time under its own
    rules; a flip is a verdict whose label would change. ``progress`` is told the closures judged.
    """
    out = Sway(current=current.ref, proposed=proposed.ref)
    progress("finding the standing closures", 0, None)
    closures = [c for c in store.find(Closure, projection=current.id) if not store.superseded_by(c.id)]
    for closure in counted(closures, "judging the closures again", progress):
        rules = store.get(closure.rules, VerdictRules)
        before = verdict_of(store, closure.id)
        if before is None:
            raise UnknownReference(f"closure {closure.id} has no verdict", where=closure.id, hint="gaf verify checks the store")
        evaluated = evaluate(store, proposed, as_of=closure.as_of)
        after = judge(rules, evaluated.fact_base(), subject=closure.subject)
        out.judged += 1
        if after.label != before.label:
            out.flips.append({"closure": closure.id, "subject": closure.subject, "from": before.label, "to": after.label,
                              "strength": [before.strength, after.strength]})  # fmt: skip
        else:
            out.unchanged.append(closure.id)
    return out
