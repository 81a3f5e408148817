"""What rests on this? Impact analysis over the stored dependency graph.

When a source is invalidated, a claim retracted, a new claim falls into a scope
that was declared complete, or a policy changes, every accepted fact, GAF,
closure, verdict and action that rested on it must be reviewed — and each must
say *why* (the path from the trigger) and *how badly*: a fact that keeps another
independent justification is only weakened; a GAF that loses a fact, and every
closure, verdict and action on it, is invalidated.

The walk is a breadth-first search run as Cypher in one read transaction. On
Neo4j the whole report is one statement (a pruning breadth-first expand over the
dependency relationships, the edges among what it reached, and the sibling facts
support counting needs), as on LadybugDB within its bound on hops; as-of questions
walk level by level, one batched statement per label per level, and so does a walk
whose one statement overran its time limit (to say at which depth the limit stops it).
Limits on depth, count and time are explicit, and a report that hit one says so:
impact is never truncated silently.
"""

from __future__ import annotations

import gc
import time
from collections import defaultdict
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Literal

from gaf.actions import status_order
from gaf.canonical import kind_of, kind_prefix
from gaf.errors import InvalidRecord, UnknownReference
from gaf.lineage import resting_on_run
from gaf.records import GAF, ActionStatus, Claim, Closure, Record
from gaf.store import Questions
from gaf.types import Interval, Progress, format_instant, no_progress
from impact.confirm import Change, ClosureImpact, Confirmation, confirm, reach

Reason = Literal["positive", "negative", "policy", "cone"]
#: invalidated: recomputation loses it, or its verdict moves; weakened: it survives on less
#: support, or its basis moves while its verdict holds; unconfirmed: reached, not recomputed
Status = Literal["invalidated", "weakened", "unconfirmed"]

#: Relationships along which a record depends on another (dependent → dependency).
#: EVALUATES, LEAVES_UNRESOLVED and REJECTS matter when new evidence names a proposition.
POSITIVE = ("FROM_SOURCE", "SUPPORTED_BY", "REFUTED_BY", "JUSTIFIED_BY", "USED", "CONTAINS", "INCLUDES",
            "CLOSES", "DECIDES", "EXECUTES", "COMPENSATES", "EVALUATES", "LEAVES_UNRESOLVED", "REJECTS")  # fmt: skip
#: Relationships along which a record relied on the absence of claims in a closed scope.
NEGATIVE = ("RELIED_ON_ABSENCE", "ASSUMES_COMPLETE")
#: Policy dependencies (closure → projection policy, closure → verdict rules) are not
#: walked: a policy change starts from the closures decided under it.

#: Kinds reported (the walk passes through others, such as completeness declarations).
REPORTED = ("claim", "evaluation", "fact", "derivation", "gaf", "closure", "verdict", "action")


@dataclass
class Affected:
    """One record that must be reviewed, and why."""

    id: str
    kind: str
    reason: Reason
    status: Status
    path: list[str]

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "kind": self.kind, "reason": self.reason, "status": self.status, "path": self.path}


@dataclass
class ImpactReport:
    """Every affected record with its path and status, totals, and whether the walk was complete."""

    trigger: dict[str, Any]
    affected: list[Affected]
    complete: bool = True
    cut: list[str] = field(default_factory=list)
    as_of: str | None = None
    #: affected actions that were executed and now need cancellation or compensation
    to_compensate: list[str] = field(default_factory=list)
    #: edges among the trigger and the affected records: (dependent, relationship, dependency)
    edges: list[tuple[str, str, str]] = field(default_factory=list)
    #: each reached closure the change moves (or that was not recomputed), found by recomputing it
    closures: list[ClosureImpact] = field(default_factory=list)
    #: reached / recomputed / unaffected / per outcome (None: not confirmed by recomputation)
    confirmation: dict[str, int] | None = None
    #: executed actions under closures whose basis moved but whose verdict holds: a person looks
    to_review: list[str] = field(default_factory=list)
    #: what a reader should know about how the report was made (not a limit: see ``cut``)
    notes: list[str] = field(default_factory=list)

    def totals(self) -> dict[str, dict[str, int]]:
        out: dict[str, dict[str, int]] = defaultdict(lambda: {"invalidated": 0, "weakened": 0, "unconfirmed": 0})
        for a in self.affected:
            out[a.kind][a.status] += 1
        return {k: dict(v) for k, v in sorted(out.items())}

    def by_id(self) -> dict[str, Affected]:
        return {a.id: a for a in self.affected}

    def to_dict(self) -> dict[str, Any]:
        return {
            "complete": self.complete,
            "cut": self.cut,
            "trigger": self.trigger,
            "as_of": self.as_of,
            "totals": self.totals(),
            "to_compensate": self.to_compensate,
            "to_review": self.to_review,
            "notes": self.notes,
            "confirmation": self.confirmation,
            "closures": [c.to_dict() for c in self.closures],
            "affected": [a.to_dict() for a in self.affected],
            "edges": [list(e) for e in self.edges],
        }


@dataclass(frozen=True)
class Limits:
    """How far a walk may go; a walk that reaches a limit stops there and says so."""

    depth: int = 64
    count: int = 1_000_000
    seconds: float | None = None
    #: closures recomputed at most (the rest are reported reached, not confirmed)
    recompute: int = 10_000

    def __post_init__(self) -> None:
        whole = (self.depth, self.count, self.recompute)
        if not all(isinstance(n, int) and n >= 1 for n in whole):
            raise InvalidRecord(f"impact limits must be positive whole numbers, got depth={self.depth!r} count={self.count!r} "
                                f"recompute={self.recompute!r}")  # fmt: skip
        if self.seconds is not None and not self.seconds > 0:
            raise InvalidRecord(f"impact time limit must be positive, got {self.seconds!r} s")

    def overran(self, started: float) -> bool:
        """Whether work begun at ``started`` (``time.monotonic()``) has run past the time limit, if there is one."""
        return self.seconds is not None and time.monotonic() - started > self.seconds


#: Every dependency relationship a walk follows.
DEPENDENCY = tuple(sorted(set(POSITIVE + NEGATIVE)))


# ---------------------------------------------------------------------- the walk


#: The walk's stage: records reached so far, their number not known before the walk ends.
WALKING = "walking the dependencies"


def walk(
    store: Questions,
    triggers: dict[str, Reason],
    *,
    trigger: dict[str, Any],
    as_of: datetime | None = None,
    limits: Limits = Limits(),
    progress: Progress = no_progress,
    required: str | None = None,
) -> ImpactReport:
    """Everything downstream of the trigger records, with statuses and paths.

    The whole report is read in one read-only transaction: it describes one state
    of the graph, even while writers append to it. ``required`` names a trigger that
    must exist in the store (checked in the same transaction). ``progress`` is told the
    records reached (the triggers among them) after each level of the walk.
    """
    for rid in triggers:
        kind_of(rid)  # a malformed id is a typed error before anything runs
    return store.snapshot(lambda q: _walk(q, triggers, trigger, as_of, limits, progress, required))


@dataclass
class _Expansion:
    """What a breadth-first expansion found: each record's parent (first target it was
    reached from), its reason, every dependency edge among them, and what was cut."""

    parent: dict[str, str | None]
    reason: dict[str, Reason]
    edges: list[tuple[str, str, str]]
    cut: list[str]
    depth: int = 0
    #: the triggers found in the store (the at-once statement reports them; the level-wise
    #: walk checks only the required one)
    found: set[str] = field(default_factory=set)
    #: for each fact reached, the justifications of its siblings (None: not read yet)
    siblings: dict[str, list[str]] | None = None

    @classmethod
    def start(cls, triggers: dict[str, Reason]) -> _Expansion:
        return cls(parent={t: None for t in triggers}, reason=dict(triggers), edges=[], cut=[])

    def level(self, rows: Iterable[tuple[str, str, str]]) -> list[str]:
        """Take one level's (target, dependent, relationship) rows; return the new records.

        Rows are taken in sorted order so that parents, and so paths, do not depend on
        the order a store returns rows in, nor on which expansion found them."""
        found = []
        for target, rid, rel in sorted(rows):
            self.edges.append((rid, rel, target))
            if rid not in self.parent:
                self.parent[rid] = target
                self.reason[rid] = "negative" if rel in NEGATIVE else self.reason[target]
                found.append(rid)
        self.depth += 1
        return sorted(found)


def _expand_by_level(
    q: Questions, triggers: dict[str, Reason], as_of: datetime | None, limits: Limits, progress: Progress
) -> _Expansion:
    """One batched statement per label per level; honours every limit and as-of."""
    started = time.monotonic()
    out = _Expansion.start(triggers)
    frontier = sorted(triggers)
    while frontier:
        if out.depth >= limits.depth:
            out.cut.append(f"depth limit {limits.depth} reached with {len(frontier)} records still to expand")
            break
        if limits.overran(started):
            out.cut.append(f"time limit {limits.seconds:g} s reached at depth {out.depth}")
            break
        frontier = out.level(q.dependents(frontier, DEPENDENCY, as_of))
        if len(out.parent) > limits.count:
            out.cut.append(f"count limit {limits.count} reached at depth {out.depth}")
            break
        progress(WALKING, len(out.parent), None)
    return out


def _expand_at_once(q: Questions, triggers: dict[str, Reason], limits: Limits) -> _Expansion | None:
    """The whole expansion in one statement per trigger label, where the store can (present state).

    The levels are then replayed in memory over the edges found, so the result is the
    one the level-wise expansion gives. When the store cannot, or a depth or count limit
    would cut the walk, returns None and the level-wise expansion reports precisely where
    it stopped."""
    reach = q.reach(sorted(triggers), DEPENDENCY, depth=limits.depth, cap=limits.count + 1)
    if reach is None:
        return None
    rows, found, siblings = reach.edges, reach.found, reach.siblings
    if len({rid for _, rid, _ in rows} | set(triggers)) > limits.count:
        return None  # the statement stopped at count + 1 records: the level-wise walk says where
    by_target: dict[str, list[tuple[str, str, str]]] = defaultdict(list)
    for row in rows:
        by_target[row[0]].append(row)
    out = _Expansion.start(triggers)
    frontier = sorted(triggers)
    while frontier:
        if out.depth >= limits.depth:
            return None
        frontier = out.level(row for target in frontier for row in by_target.get(target, ()))
    out.found = found
    out.siblings = None if siblings is None else {fact: sorted(js) for fact, js in siblings.items()}
    return out


def _walk(
    q: Questions, triggers: dict[str, Reason], trigger: dict[str, Any], as_of: datetime | None,
    limits: Limits, progress: Progress, required: str | None,
) -> ImpactReport:  # fmt: skip
    stamp = format_instant(as_of) if as_of else None
    expanded = None
    if stamp is None:
        # One statement, bounded by the count limit; under a time limit it is kept only if it finished within
        # it, else the level-wise walk says at which depth the limit stops it (as it would have from the start).
        started = time.monotonic()
        expanded = _expand_at_once(q, triggers, limits)
        if limits.overran(started):
            expanded = None
    if expanded is None:
        if required is not None and not q.has(required):
            raise UnknownReference(f"no {kind_prefix(required)} {required} in {q.location}")
        expanded = _expand_by_level(q, triggers, as_of, limits, progress)
        expanded.found = {required} if required is not None else set()
    else:
        progress(WALKING, len(expanded.parent), None)
    if required is not None and required not in expanded.found:
        raise UnknownReference(f"no {kind_prefix(required)} {required} in {q.location}")
    parent, reason, edges, cut = expanded.parent, expanded.reason, expanded.edges, expanded.cut
    kinds = {rid: kind_prefix(rid) for rid in parent}
    if expanded.siblings is None:
        expanded.siblings = q.fact_siblings([r for r, kind in kinds.items() if kind == "fact"], as_of)
    statuses = _statuses(kinds, edges, triggers, expanded.siblings)
    affected = [
        Affected(rid, kinds[rid], reason[rid], statuses[rid], _path(parent, rid))
        for rid in sorted(parent, key=lambda r: (_RANK.get(kinds[r], -1), r))
        if rid not in triggers and kinds[rid] in _RANK
    ]
    report = ImpactReport(trigger=trigger, affected=affected, complete=not cut, cut=cut, as_of=stamp,
                          edges=sorted(set(edges)))  # fmt: skip
    report.to_compensate = _executed_actions(q, [a.id for a in affected if a.kind == "action"], stamp)
    return report


_RANK = {kind: rank for rank, kind in enumerate(REPORTED)}


def _path(parent: dict[str, str | None], rid: str) -> list[str]:
    path = [rid]
    while (up := parent[path[-1]]) is not None:
        path.append(up)
    return path[::-1]


def _statuses(
    kinds: dict[str, str], edges: list[tuple[str, str, str]], triggers: dict[str, Reason], siblings: dict[str, list[str]]
) -> dict[str, Status]:
    """Invalidated or weakened, to a fixpoint (a status only ever worsens), for each record
    reached (``kinds``: each one's kind).

    A fact whose justification is invalidated is only weakened while another
    fact of the same proposition under the same projection keeps a justification
    that is not invalidated (support counting). A derivation or GAF is weakened
    when what it rests on is only weakened, invalidated when any of it is
    invalidated. Everything else inherits the worst status of what it rests on.
    """
    deps: dict[str, set[str]] = defaultdict(set)
    for dependent, _, dependency in edges:
        deps[dependent].add(dependency)
    status: dict[str, Status] = {r: ("invalidated" if r in triggers else "weakened") for r in kinds}
    changed = True
    while changed:
        changed = False
        for rid, kind in kinds.items():
            if rid in triggers or status[rid] == "invalidated":
                continue
            worst = any(status.get(d) == "invalidated" for d in deps[rid])
            if worst and kind == "fact":
                worst = not any(status.get(j) != "invalidated" for j in siblings.get(rid, ()))
            if worst:
                status[rid] = "invalidated"
                changed = True
    return status


def _executed_actions(q: Questions, actions: list[str], stamp: str | None) -> list[str]:
    """The affected actions whose effect stands (latest status, as of the stamp, is executed):
    not those already compensated, and not the compensations themselves — undoing an effect
    of a decision now in doubt needs no undoing."""
    if not actions:
        return []
    latest: dict[str, ActionStatus] = {}
    for action, compensates, status in q.action_statuses(actions):
        if compensates:
            continue
        if stamp is not None and format_instant(status.at) > stamp:
            continue
        seen = latest.get(action)
        if seen is None or status_order(status) > status_order(seen):
            latest[action] = status
    return sorted(a for a, status in latest.items() if status.status == "executed")


# ---------------------------------------------------------------------- the questions


def source_invalidated(store: Questions, source_id: str, **kw: Any) -> ImpactReport:
    """Everything that rests on a source: its claims and all that was built on them, each
    reached closure confirmed by recomputing it without the source's claims."""
    _require_kind(source_id, "source")

    def report(q: Questions) -> ImpactReport:
        walked = walk(q, {source_id: "positive"}, trigger={"kind": "source_invalidated", "id": source_id}, required=source_id, **kw)
        return _confirmed(q, walked, Change.removing(q.find(Claim, source=source_id)), **kw)

    with paused_collection():
        return store.snapshot(report)


def claim_retracted(store: Questions, claim_id: str, **kw: Any) -> ImpactReport:
    """Everything that rests on one claim, each reached closure confirmed by recomputing it without the claim."""
    _require_kind(claim_id, "claim")

    def report(q: Questions) -> ImpactReport:
        walked = walk(q, {claim_id: "positive"}, trigger={"kind": "claim_retracted", "id": claim_id}, required=claim_id, **kw)
        return _confirmed(q, walked, Change.removing([q.get(claim_id, Claim)]), **kw)

    with paused_collection():
        return store.snapshot(report)


def run_invalidated(store: Questions, run: str, **kw: Any) -> ImpactReport:
    """Everything that rests on a pipeline run found wrong (``gaf.lineage.resting_on_run``): its
    reports, those of the runs downstream of what it wrote, and all built on them, each reached
    closure confirmed by recomputing it without those claims. The trigger says why the run is
    wrong and, for each claim, the path of runs and datasets from the run to it."""

    def report(q: Questions) -> ImpactReport:
        found = resting_on_run(q, run)
        trigger = {"kind": "run_invalidated", "id": found.run} | found.to_dict()
        walked = walk(q, dict.fromkeys(found.claims, "positive"), trigger=trigger, **kw)
        return _confirmed(q, walked, Change.removing(q.get_many(found.claims, Claim).values()), **kw)

    with paused_collection():
        return store.snapshot(report)


def new_claim(store: Questions, claim: Claim, **kw: Any) -> ImpactReport:
    """What new evidence would disturb: every closed scope it falls into and all that relied
    on the absence of claims there (negative dependencies), every evaluation and GAF
    that already weighed, left unresolved or rejected a proposition it states (positive),
    and every closure whose cone it falls into — each confirmed by recomputing it with the claim."""

    def report(q: Questions) -> ImpactReport:
        scopes = scopes_hit(q, claim)
        stated = sorted(q.exists({st.proposition().id for st in claim.statements}))
        triggers: dict[str, Reason] = {p: "positive" for p in stated}
        triggers.update({d: "negative" for d in scopes})
        trigger = {"kind": "new_claim", "id": claim.id, "scopes": scopes, "propositions": stated}
        return _confirmed(q, walk(q, triggers, trigger=trigger, **kw), Change.adding([claim]), **kw)

    with paused_collection():
        return store.snapshot(report)


@contextmanager
def paused_collection() -> Iterator[None]:
    """Python's cyclic garbage collector held off while a report is made: a report builds tens of
    thousands of short-lived records and few cycles, and each collection would traverse the whole
    heap (measured on the 500-closure world: about a sixth of the report's time). What it leaves
    is collected when the collector runs again."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def _confirmed(
    store: Questions, report: ImpactReport, change: Change, *, limits: Limits = Limits(), as_of: datetime | None = None,
    progress: Progress = no_progress, **_: Any,
) -> ImpactReport:  # fmt: skip
    """The walk's report with every reached closure recomputed: statuses of facts, GAFs, closures,
    verdicts and actions become what recomputation finds; unaffected ones leave the report.
    ``progress`` is told the closures confirmed (``confirm``).

    As-of questions ask what the graph said then; they are walked, not recomputed."""
    if as_of is not None:
        return report
    found = reach(store, change)
    if found.note:
        report.notes.append(found.note)
    standing = {c.id: c for c in found.closures}
    for a in report.affected:  # a closure the walk reached and the cone did not (none should be)
        if a.kind == "closure" and a.id not in standing and not store.superseded_by(a.id):
            standing[a.id] = store.get(a.id, Closure)
    confirmation = confirm(store, change, [standing[k] for k in sorted(standing)], count=limits.recompute, seconds=limits.seconds,
                           progress=progress)  # fmt: skip
    _restate(store, report, confirmation, standing)
    return report


def _restate(store: Questions, report: ImpactReport, conf: Confirmation, closures: dict[str, Closure]) -> None:
    """Statuses of what each recomputed closure rests on become recomputation's; what belongs to no
    recomputed closure (a GAF never closed, a claim, an evaluation) keeps the walk's."""
    walked = report.by_id()
    origin = str(report.trigger["id"])
    moved = {c.closure: c for c in conf.closures}
    covered: set[str] = set()  # every record whose status recomputation decides
    status: dict[str, Status] = {}
    recomputed = {cid: c for cid, c in closures.items() if cid not in moved or moved[cid].outcome != "not_confirmed"}
    gafs = store.get_many({c.gaf for c in recomputed.values()}, GAF)
    deciding = store.verdicts_of(recomputed)
    executing = store.actions_of(v for vs in deciding.values() for v in vs)
    for cid, closure in sorted(closures.items()):
        found = moved.get(cid)
        if found is not None and found.outcome == "not_confirmed":
            status[cid] = "unconfirmed"
            continue
        gaf = gafs[closure.gaf]
        verdicts = deciding.get(cid, [])
        actions = sorted({a for v in verdicts for a in executing.get(v, ())})
        covered.update([cid, gaf.id, *gaf.facts, *gaf.derivations, *verdicts, *actions])
        if found is None:
            continue  # unaffected
        changed: Status = "invalidated" if found.outcome in ("verdict_changed", "needs_review") else "weakened"
        for rid in [cid, *verdicts, *actions]:
            status[rid] = changed
        for f in found.facts:
            if status.get(f.fact) != "invalidated":
                status[f.fact] = f.status
        lost = any(f.status == "invalidated" for f in found.facts) or found.gained or found.resettled
        status[gaf.id] = "invalidated" if lost or status.get(gaf.id) == "invalidated" else "weakened"
    # A derivation shares the status of the fact it justifies.
    for dependent, rel, dependency in report.edges:
        if rel == "JUSTIFIED_BY" and kind_prefix(dependency) == "derivation" and dependent in status:
            status.setdefault(dependency, status[dependent])
    kept = [a for a in report.affected if a.id not in covered and a.id not in status]
    for rid, st in status.items():
        a = walked.get(rid)
        kept.append(Affected(rid, kind_prefix(rid), a.reason if a else "cone", st, a.path if a else [origin, rid]))
    report.affected = sorted(kept, key=lambda a: (_RANK.get(a.kind, -1), a.id))
    # The walk already found which of its actions stand executed; only the others are asked. An
    # action of a recomputed closure has recomputation's status, none if its closure is unaffected
    # (the walk's may say invalidated: it reached the action, and recomputation found nothing moved).
    executed = set(report.to_compensate) | set(_executed_now(store, [a.id for a in report.affected if a.kind == "action" and a.id not in walked]))
    settled = {a: status.get(a) if a in covered else walked[a].status if a in walked else None for a in executed}
    report.to_compensate = sorted(a for a, st in settled.items() if st == "invalidated")
    report.to_review = sorted(a for a, st in settled.items() if st is not None and st != "invalidated")
    report.closures = conf.closures
    report.confirmation = conf.summary()
    if not conf.complete:
        report.complete = False
        report.cut.append(f"{conf.reached - conf.recomputed} of {conf.reached} reached closures not recomputed")


def _executed_now(store: Questions, actions: list[str]) -> list[str]:
    return store.snapshot(lambda q: _executed_actions(q, actions, None))


def scopes_hit(store: Questions, claim: Claim) -> list[str]:
    """The closed scopes a claim falls into: same source and predicate, matching subject
    and object patterns, valid time overlapping the declared interval."""
    hit = []
    for decl in store.completeness_of(claim.source, {s.predicate for s in claim.statements}):
        for st in claim.statements:
            target = st.object if st.object is not None else st.value
            when = st.valid or _instant_interval(claim.observed_at)
            if decl.covers(st.predicate, st.subject, target) and decl.valid.overlaps(when):
                hit.append(decl.id)
                break
    return sorted(hit)


def _instant_interval(at: datetime) -> Interval:
    return Interval(start=at, end=at + timedelta(milliseconds=1))


def policy_changed(
    store: Questions, policy_id: str, *, effective: datetime | None = None, retroactive: bool = False, **kw: Any
) -> ImpactReport:
    """Every closure decided under a policy or rules version that a change would reach:
    those closed on or after the effective date, or all of them if the change is retroactive."""
    kind = kind_of(policy_id)
    if kind not in ("projection", "rules"):
        raise InvalidRecord(f"{policy_id} is not a projection policy or verdict rules id")
    _require(store, policy_id, kind)
    cutoff = format_instant(effective) if effective and not retroactive else None
    closures = [c for c, closed_at in store.closures_under(policy_id) if cutoff is None or closed_at >= cutoff]
    trigger = {"kind": "policy_change", "id": policy_id, "effective": cutoff, "retroactive": retroactive, "closures": sorted(closures)}
    report = walk(store, {c: "policy" for c in closures}, trigger=trigger, **kw)
    # The closures are the first affected records here, not mere triggers: report them.
    head = [Affected(c, "closure", "policy", "invalidated", [policy_id, c]) for c in sorted(closures)]
    for a in report.affected:
        a.path = [policy_id, *a.path]
    report.affected = head + report.affected
    report.edges = sorted(set(report.edges) | {(c, "UNDER" if kind == "projection" else "JUDGED_BY", policy_id) for c in closures})
    return report


def _require_kind(record_id: str, kind: str) -> None:
    if kind_of(record_id) != kind:
        raise InvalidRecord(f"{record_id} is not a {kind} id")


def _require(store: Questions, record_id: str, kind: str) -> Record:
    _require_kind(record_id, kind)
    record = store.get(record_id)
    if record is None:
        raise UnknownReference(f"no {kind} {record_id} in {store.location}")
    return record


__all__ = [
    "Affected", "ImpactReport", "Limits", "claim_retracted", "new_claim", "paused_collection", "policy_changed",
    "scopes_hit", "source_invalidated", "walk",
]  # fmt: skip
