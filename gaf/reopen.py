"""Reopen: a closed world stays reopenable, and history is never rewritten.

New evidence, a source invalidation, a policy change, an appeal or a defect
report is recorded as an event. The closures it reaches (found by impact
analysis, which is handed in: gaf does not depend on the impact package) are
re-projected under the right policy version, judged again under the same rules,
and the new closures point at the old ones with SUPERSEDES. The old closures stay
readable; executed actions on them are flagged for cancellation or
compensation, never edited.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

from gaf.closure import close
from gaf.errors import StoreError, UnknownReference
from gaf.lineage import resting_on_run
from gaf.policies import get as published
from gaf.projection import ReviewPolicy, project, recorded_review
from gaf.records import (
    GAF,
    Agent,
    Appeal,
    Claim,
    Closure,
    Projection,
    RatifiedPolicy,
    Reopen,
    RunInvalidation,
    Source,
    SourceInvalidation,
    Trigger,
    Verdict,
    VerdictRules,
)
from gaf.store.base import GafStore
from gaf.store.schema import RUNS_VOIDABLE
from gaf.types import Progress, counted, no_progress

if TYPE_CHECKING:  # cryptography is optional (gaf[signing])
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey


#: A reopen's stage (the closures reached, each re-decided or left as it stands), and that of
#: reopening after new claims (the claims followed).
REOPENING = "reopening the closures"
FOLLOWING = "following the new claims"


@dataclass
class Reopened:
    """What a reopen did: the event, and for each reopened closure its successor."""

    event: Reopen
    superseded: list[dict[str, Any]] = field(default_factory=list)
    to_compensate: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"reopen": self.event.id, "trigger": self.event.trigger.value, "superseded": self.superseded,
                "to_compensate": self.to_compensate}  # fmt: skip


def reopen(
    store: GafStore,
    *,
    trigger: Trigger | str,
    closures: Iterable[str],
    reviewer: str,
    at: datetime,
    as_of: datetime,
    cause: str | None = None,
    reason: str = "",
    impact: Iterable[str] = (),
    to_compensate: Iterable[str] = (),
    policy: Projection | None = None,
    review: ReviewPolicy | None = None,
    signing_key: Ed25519PrivateKey | None = None,
    progress: Progress = no_progress,
) -> Reopened:
    """Re-project and re-judge each closure reached, superseding it; record the event.

    ``policy`` is the latest projection version when the trigger is a policy change:
    each closure is re-projected under the version that governs it
    (``governing_policy``); otherwise each closure keeps the version it was decided under.
    Closures already superseded are left alone: only the head of a chain is reopened.
    Each is re-projected under the review policy its GAF was accepted under
    (``recorded_review``: its threshold, and every fact it accepted kept), unless ``review``
    is given. ``progress`` is told the closures reopened, out of those reached, after each.
    """
    trigger = Trigger(trigger)
    done: list[dict[str, Any]] = []
    superseding: list[str] = []
    reopened: list[str] = []
    for closure_id in counted(sorted(set(closures)), REOPENING, progress):
        old = store.get(closure_id, Closure)
        if store.superseded_by(old.id):
            continue
        chosen = governing_policy(store, old, policy) if policy is not None else store.get(old.projection, Projection)
        rules = store.get(old.rules, VerdictRules)
        # A closure decided later than the reopen's time is re-projected as of its own time, never earlier.
        when = max(as_of, old.as_of)
        reviewed = review if review is not None else recorded_review(store, store.get(old.gaf, GAF))
        projected = project(store, chosen, as_of=when, reviewer=reviewer, at=at, review=reviewed,
                            reason=f"reopened ({trigger.value}): {reason}".strip())  # fmt: skip
        if projected.gaf.id == old.gaf and chosen.id == old.projection:
            continue  # the same premises under the same policy: nothing to supersede
        new = close(store, projected.gaf.id, rules, subject=old.subject, as_of=when, closed_at=at, question=old.question,
                    purpose=old.purpose, event=old.event, period=old.period, supersedes=[old.id],
                    signing_key=signing_key)  # fmt: skip
        before = verdict_of(store, old.id)
        reopened.append(old.id)
        superseding.append(new.closure.id)
        done.append({
            "old": old.id, "new": new.closure.id,
            "old_label": before.label if before else None, "new_label": new.verdict.label,
            "changed": before is None or before.label != new.verdict.label,
        })  # fmt: skip
    event = Reopen(trigger=trigger, cause=cause, reason=reason, impact=sorted(set(impact)), reopened=reopened,
                   superseding=superseding, at=at)  # fmt: skip
    store.put([event], at=at)
    return Reopened(event, done, sorted(set(to_compensate)))


def verdict_of(store: GafStore, closure_id: str) -> Verdict | None:
    found = store.find(Verdict, closure=closure_id)
    return found[0] if found else None


def history(store: GafStore, subject: str) -> list[dict[str, Any]]:
    """Every closure about a subject, oldest first, with its verdict and its place in the chain."""
    out = []
    closures = sorted(store.find(Closure, subject=subject), key=lambda c: (c.closed_at, c.id))
    for c in closures:
        v = verdict_of(store, c.id)
        out.append({
            "closure": c.id, "closed_at": c.closed_at.isoformat(), "as_of": c.as_of.isoformat(),
            "gaf": c.gaf, "projection": c.projection, "projection_version": c.projection_version,
            "label": v.label if v else None, "strength": v.strength if v else None,
            "supersedes": c.supersedes, "superseded_by": store.superseded_by(c.id),
        })  # fmt: skip
    return out


def governing_policy(store: GafStore, closure: Closure, latest: Projection) -> Projection:
    """The projection version a reopened closure is re-decided under.

    A later version governs the closure only if every ratified policy it newly
    cites is retroactive or took effect by the time the closure was decided.
    """
    if latest.id == closure.projection:
        return latest
    old = store.get(closure.projection, Projection)
    for ref in sorted(set(latest.ratified) - set(old.ratified)):
        ratified = store.get(ref)
        if isinstance(ratified, RatifiedPolicy) and not ratified.retroactive and closure.closed_at < ratified.effective:
            return old
    return latest


# ---------------------------------------------------------------------- the workflows: an event, its impact, the reopen
# Impact analysis sits above the chain (gaf does not import the impact package), so each
# workflow is handed the analysis to use: the ``impact`` package itself, or anything with
# the same four questions.


class Affected(Protocol):
    id: str
    kind: str


class ImpactReport(Protocol):
    @property
    def affected(self) -> Sequence[Affected]: ...

    @property
    def to_compensate(self) -> Sequence[str]: ...


class Impact(Protocol):
    """The impact questions a reopen workflow asks (the ``impact`` package answers them)."""

    def source_invalidated(self, store: GafStore, source_id: str, *, progress: Progress = ...) -> ImpactReport: ...

    def new_claim(self, store: GafStore, claim: Claim) -> ImpactReport: ...

    def run_invalidated(self, store: GafStore, run: str, *, progress: Progress = ...) -> ImpactReport: ...

    def policy_changed(
        self, store: GafStore, policy_id: str, *, effective: datetime | None = ..., retroactive: bool = ...,
        progress: Progress = ...,
    ) -> ImpactReport: ...


def _reopen_reached(
    store: GafStore, report: ImpactReport, *, trigger: Trigger, cause: str, reviewer: str, at: datetime, as_of: datetime,
    reason: str, policy: Projection | None = None, signing_key: Ed25519PrivateKey | None = None,
    progress: Progress = no_progress,
) -> Reopened:  # fmt: skip
    closures = [a.id for a in report.affected if a.kind == "closure"]
    return reopen(store, trigger=trigger, cause=cause, closures=closures, reviewer=reviewer, at=at, as_of=as_of,
                  reason=reason, impact=[a.id for a in report.affected], to_compensate=report.to_compensate,
                  policy=policy, signing_key=signing_key, progress=progress)  # fmt: skip


def after_new_claims(
    store: GafStore, claims: Iterable[Claim], *, impact: Impact, reviewer: str, at: datetime, as_of: datetime,
    signing_key: Ed25519PrivateKey | None = None, progress: Progress = no_progress,
) -> list[Reopened]:  # fmt: skip
    """Reopen every standing closure that stored claims reach (new evidence), one reopen per claim, by claim id;
    ``progress`` is told the claims followed, after each (one claim's walk and reopen are too quick to tell)."""
    out = []
    for claim in counted(sorted(claims, key=lambda c: c.id), FOLLOWING, progress):
        report = impact.new_claim(store, claim)
        out.append(_reopen_reached(store, report, trigger=Trigger.new_claim, cause=claim.id, reviewer=reviewer, at=at,
                                   as_of=as_of, reason=f"new claim {claim.id}", signing_key=signing_key))  # fmt: skip
    return out


def after_invalidation(
    store: GafStore, source_id: str, *, impact: Impact, by: str, reason: str, invalid_from: datetime, reviewer: str,
    at: datetime, as_of: datetime, signing_key: Ed25519PrivateKey | None = None, progress: Progress = no_progress,
) -> Reopened:  # fmt: skip
    """Record that a source is invalid from a time on, and reopen every standing closure that rested on it.

    What rested on the source is found before the invalidation is written, so the walk
    sees the graph the closures were decided on. ``progress`` is told the impact
    analysis's stages (the walk, the confirmation), then the reopen's."""
    store.get(source_id, Source)
    event = SourceInvalidation(source=source_id, by=by, reason=reason, invalid_from=invalid_from, recorded_at=as_of)
    report = impact.source_invalidated(store, source_id, progress=progress)
    store.put([event], at=at)
    return _reopen_reached(store, report, trigger=Trigger.source_invalidated, cause=event.id, reviewer=reviewer, at=at,
                           as_of=as_of, reason=reason, signing_key=signing_key, progress=progress)  # fmt: skip


def after_run_invalidation(
    store: GafStore, run: str, *, impact: Impact, by: str, reason: str, reviewer: str, at: datetime, as_of: datetime,
    signing_key: Ed25519PrivateKey | None = None, progress: Progress = no_progress,
) -> Reopened:  # fmt: skip
    """Record that a pipeline run was wrong, and reopen every standing closure that rested on it.

    What rests on the run (its reports and those of the runs downstream of what it wrote,
    ``gaf.lineage.resting_on_run``) is found before the invalidation is written, so the walk
    sees the graph the closures were decided on; the invalidation voids those claims for every
    projection as of its recording on. ``progress`` is told the impact analysis's stages, then
    the reopen's. A store older than schema version 6 is refused: ``gaf migrate`` first."""
    if store.schema_version() < RUNS_VOIDABLE:
        raise StoreError(f"the store at {store.location} is at schema version {store.schema_version()}, which cannot hold "
                         f"run invalidations (version {RUNS_VOIDABLE} on)", hint="run `gaf migrate` first")  # fmt: skip
    store.get(by, Agent)
    found = resting_on_run(store, run)
    report = impact.run_invalidated(store, found.run, progress=progress)
    event = RunInvalidation(run=found.run, why=found.why, wrote=found.wrote, claims=sorted(found.claims),
                            evidence=found.evidence, by=by, reason=reason, recorded_at=as_of)  # fmt: skip
    store.put([event], at=at)
    return _reopen_reached(store, report, trigger=Trigger.run_invalidated, cause=event.id, reviewer=reviewer, at=at,
                           as_of=as_of, reason=reason, signing_key=signing_key, progress=progress)  # fmt: skip


def after_policy_change(
    store: GafStore, previous: Projection, *, impact: Impact, reviewer: str, at: datetime, as_of: datetime,
    signing_key: Ed25519PrivateKey | None = None, progress: Progress = no_progress,
) -> Reopened:  # fmt: skip
    """Re-decide the standing closures decided under ``previous`` now that its policy has a later version.

    Every closure under ``previous`` is reached; each is re-projected under the version
    that governs it (``governing_policy``): the latest, unless a ratified policy the
    latest newly cites took effect after the closure was decided and is not retroactive.
    When a change takes effect is the ratified policy's to say, not the caller's. ``progress`` is
    told the walk's stage, then the reopen's."""
    latest = published(store, previous.name)
    if not isinstance(latest, Projection):
        raise UnknownReference(f"{previous.name} is not a projection policy", where=previous.id)
    report = impact.policy_changed(store, previous.id, retroactive=True, progress=progress)
    return _reopen_reached(store, report, trigger=Trigger.policy_change, cause=latest.id, reviewer=reviewer, at=at,
                           as_of=as_of, reason=f"{previous.ref} → {latest.ref}", policy=latest,
                           signing_key=signing_key, progress=progress)  # fmt: skip


def on_appeal(
    store: GafStore, closure_id: str, *, by: str, grounds: str, reviewer: str, at: datetime, as_of: datetime,
    signing_key: Ed25519PrivateKey | None = None, progress: Progress = no_progress,
) -> Reopened:  # fmt: skip
    """Record an appeal against a closure and re-decide it on what is known as of ``as_of``;
    ``progress`` is told the reopen's stage."""
    store.get(closure_id, Closure)
    appeal = Appeal(closure=closure_id, by=by, grounds=grounds, filed_at=at)
    store.put([appeal], at=at)
    return reopen(store, trigger=Trigger.appeal, cause=appeal.id, closures=[closure_id], reviewer=reviewer, at=at,
                  as_of=as_of, reason=grounds, signing_key=signing_key, progress=progress)  # fmt: skip
