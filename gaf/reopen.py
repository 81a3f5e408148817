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

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from gaf.closure import close
from gaf.projection import ReviewPolicy, project
from gaf.records import Closure, Projection, RatifiedPolicy, Reopen, Trigger, Verdict, VerdictRules
from gaf.store.base import GafStore


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
    review: ReviewPolicy = ReviewPolicy(),
) -> Reopened:
    """Re-project and re-judge each closure reached, superseding it; record the event.

    ``policy`` is the projection version to re-project under when the trigger is
    a policy change; otherwise each closure keeps the version it was decided under.
    Closures already superseded are left alone: only the head of a chain is reopened.
    """
    trigger = Trigger(trigger)
    done: list[dict[str, Any]] = []
    superseding: list[str] = []
    reopened: list[str] = []
    for closure_id in sorted(set(closures)):
        old = store.get(closure_id, Closure)
        if store.superseded_by(old.id):
            continue
        chosen = policy if policy is not None else store.get(old.projection, Projection)
        rules = store.get(old.rules, VerdictRules)
        # A closure decided later than the reopen's time is re-projected as of its own time, never earlier.
        when = max(as_of, old.as_of)
        projected = project(store, chosen, as_of=when, reviewer=reviewer, at=at, review=review,
                            reason=f"reopened ({trigger.value}): {reason}".strip())  # fmt: skip
        if projected.gaf.id == old.gaf and chosen.id == old.projection:
            continue  # the same premises under the same policy: nothing to supersede
        new = close(store, projected.gaf.id, rules, subject=old.subject, as_of=when, closed_at=at, question=old.question,
                    purpose=old.purpose, event=old.event, period=old.period, supersedes=[old.id])  # fmt: skip
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


def superseded_by(store: GafStore, closure_id: str) -> list[str]:
    """The closures that supersede this one (``store.superseded_by``)."""
    return store.superseded_by(closure_id)


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
