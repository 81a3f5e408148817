"""Acceptance: what a reviewer accepted, written with a decision-log entry in one transaction.

``accept`` writes the chosen candidates, their evidence and a decision that names
who, when and why; ``project`` evaluates, accepts what a review policy allows and
writes the GAF snapshot, in one call.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from gaf.derive import show
from gaf.errors import BatchRejected, GafError, InvalidRecord, UnknownReference
from gaf.projection.candidates import Candidate, Evaluated, evaluate
from gaf.projection.facts import ground_of
from gaf.records import GAF, Decision, Derivation, Projection, Proposition, Record, ReviewSettings
from gaf.records.ledger import statement_text
from gaf.store.base import GafStore, ItemError, WriteReport
from gaf.store.questions import Questions
from gaf.types import Progress, no_progress


@dataclass(frozen=True)
class ReviewPolicy:
    """Which candidates are accepted without a person: those at or above a confidence, and
    those a decision already accepted exactly (``keep``: fact ids, whose justification is
    part of the id — the same evidence, already reviewed)."""

    auto_accept_at: float = 1.0
    keep: frozenset[str] = frozenset()

    def split(self, evaluated: Evaluated) -> tuple[list[Candidate], list[Candidate]]:
        """(accepted automatically, routed to a person), each by id."""
        auto = [c for c in evaluated.candidates if c.confidence >= self.auto_accept_at or c.id in self.keep]
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
    review: ReviewSettings | None = None,
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
        accepted=[c.id for c in chosen], refused=sorted(refused), review=review,
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
    by_id = {c.id: c for c in chosen}
    premises = {
        c.id: [("premise", p) for p in c.justification.premises if p.startswith("fact:")]
        if isinstance(c.justification, Derivation) else []
        for c in chosen
    }  # fmt: skip
    return {
        fact: UnknownReference(
            f"{show(ground_of(by_id[fact].proposition))} rests on {premise}, which is neither accepted here nor stored",
            where=fact,
            hint="accept its premises in the same decision, or first",
        )
        for fact, (_, premise) in store.unresolved(premises).items()
    }


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

    def to_dict(self, *, written: bool) -> dict[str, Any]:
        """What the projection found, as ``gaf project --json`` and the API answer it: each
        proposition as people read it, beside the fact or claim id it stands for."""
        evaluated = self.evaluated
        return {
            "policy": evaluated.policy.ref,
            "as_of": evaluated.as_of.isoformat(),
            "gaf": self.gaf.id,
            "written": written,
            "accepted": [{"fact": c.id, "proposition": _text(c.proposition), "confidence": c.confidence,
                          "by": c.justification.id} for c in self.accepted],  # fmt: skip
            "routed_to_review": [{"fact": c.id, "proposition": _text(c.proposition), "confidence": c.confidence} for c in self.routed],
            "unresolved": [_text(p) for p in evaluated.unresolved],
            "rejected": [_text(p) for p in evaluated.rejected],
            "excluded": [{"claim": ex.claim, "proposition": _text(evaluated.propositions[ex.proposition]), "reason": ex.reason}
                         for ex in evaluated.exclusions],  # fmt: skip
            "ignored_completeness": [d.model_dump(mode="json") for d in evaluated.ignored_completeness],
            "limits": [hit.text() for hit in evaluated.conclusions.limits],
        }


def _text(p: Proposition) -> str:
    """A proposition as people read it (``gaf.records.ledger.statement_text``)."""
    return statement_text(p.predicate, p.subject, p.object, p.value, unit=p.unit)


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
    progress: Progress = no_progress,
) -> Projected:
    """Evaluate, accept what the review policy allows, and write the GAF: one transaction.

    Candidates below the review policy's confidence are routed to a person and
    left out of this GAF; they are returned in ``routed``. A dry run evaluates and
    splits the same way and writes nothing: the GAF it returns is the one a real
    run would write.
    """
    evaluated = evaluate(store, policy, as_of=as_of, progress=progress)
    auto, routed = review.split(evaluated)
    # The threshold is recorded when it is not the default, so a recomputation uses the same one.
    settings = ReviewSettings(auto_accept_at=review.auto_accept_at) if review.auto_accept_at != 1.0 else None
    progress("checking" if dry_run else "writing the accepted facts", len(auto), len(auto))
    report = accept(store, evaluated, auto, reviewer=reviewer, at=at, reason=reason, with_gaf=True, dry_run=dry_run, review=settings)
    return Projected(evaluated, evaluated.gaf([c.id for c in auto]), auto, routed, report)


def recorded_review(store: Questions, gaf: GAF) -> ReviewPolicy:
    """The review policy a GAF was accepted under, as its decisions recorded it, keeping every
    fact it accepted: recomputing with it never drops a fact a person or the policy accepted."""
    return recorded_reviews(store, [gaf])[gaf.id]


def recorded_reviews(store: Questions, gafs: Iterable[GAF]) -> dict[str, ReviewPolicy]:
    """``recorded_review`` for many GAFs, their decisions read at once: GAF id -> the lowest
    threshold of the decisions that accepted any of its facts (1.0 when none recorded one)."""
    gafs = list(gafs)
    facts = sorted({f for gaf in gafs for f in gaf.facts})
    decisions = store.get_many(store.decisions_accepting(facts), Decision) if facts else {}
    thresholds: dict[str, list[float]] = defaultdict(list)
    for decision in decisions.values():
        if decision.review is not None:
            for fact in decision.accepted:
                thresholds[fact].append(decision.review.auto_accept_at)
    out = {}
    for gaf in gafs:
        found = [t for fact in gaf.facts for t in thresholds.get(fact, ())]
        out[gaf.id] = ReviewPolicy(auto_accept_at=min(found, default=1.0), keep=frozenset(gaf.facts))
    return out
