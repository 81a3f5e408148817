"""What rests on this? Impact analysis over the stored dependency graph.

When a source is invalidated, a claim retracted, a new claim falls into a scope
that was declared complete, or a policy changes, every accepted fact, GAF,
closure, verdict and action that rested on it must be reviewed — and each must
say *why* (the path from the trigger) and *how badly*: a fact that keeps another
independent justification is only weakened; a GAF that loses a fact, and every
closure, verdict and action on it, is invalidated.

The walk is a breadth-first search run as Cypher in read transactions, one
batched query per dependency relationship per level, so it costs a handful of
indexed round trips whatever the fan-out. Limits on depth, count and time are
explicit, and a report that hit one says so: impact is never truncated silently.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Literal

from gaf.canonical import kind_of
from gaf.errors import InvalidRecord, UnknownReference
from gaf.records import AcceptedFact, ActionStatus, Claim, CompletenessDeclaration, Record, parse_body
from gaf.store.base import GafStore
from gaf.store.schema import graph_schema, label_of
from gaf.types import Interval, format_instant

Reason = Literal["positive", "negative", "policy"]
Status = Literal["invalidated", "weakened"]

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

    def totals(self) -> dict[str, dict[str, int]]:
        out: dict[str, dict[str, int]] = defaultdict(lambda: {"invalidated": 0, "weakened": 0})
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
            "affected": [a.to_dict() for a in self.affected],
            "edges": [list(e) for e in self.edges],
        }


@dataclass(frozen=True)
class Limits:
    """How far a walk may go; a walk that reaches a limit stops there and says so."""

    depth: int = 64
    count: int = 1_000_000
    seconds: float | None = None


# ---------------------------------------------------------------------- the Cypher, one statement per edge kind


def _incoming() -> dict[str, list[tuple[str, str]]]:
    """For each label: the (relationship, dependent label) pairs that point at it."""
    out: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for rel, pairs in graph_schema().rels.items():
        if rel in POSITIVE + NEGATIVE:
            for src, dst in pairs:
                out[dst].append((rel, src))
    return {k: sorted(v) for k, v in out.items()}


INCOMING = _incoming()


def _dependents_query(dst: str, rel: str, src: str, as_of: bool) -> str:
    # Records of label src that depend, through rel, on any of the given records
    # of label dst — written (transaction time) by $as_of in the as-of variant.
    when = "WHERE x.written_at IS NULL OR x.written_at <= $as_of " if as_of else ""
    return f"UNWIND $ids AS i MATCH (t:{dst} {{id: i}})<-[:{rel}]-(x:{src}) {when}RETURN i AS target, x.id AS id"


DEPENDENTS = {
    (dst, rel, src, as_of): _dependents_query(dst, rel, src, as_of)
    for dst, pairs in INCOMING.items() for rel, src in pairs for as_of in (False, True)
}  # fmt: skip


# ---------------------------------------------------------------------- the walk


Progress = Callable[[int, int], None]


def walk(
    store: GafStore,
    triggers: dict[str, Reason],
    *,
    trigger: dict[str, Any],
    as_of: datetime | None = None,
    limits: Limits = Limits(),
    progress: Progress | None = None,
) -> ImpactReport:
    """Everything downstream of the trigger records, with statuses and paths."""
    stamp = format_instant(as_of) if as_of else None
    started = time.monotonic()
    parent: dict[str, str | None] = {t: None for t in triggers}
    reason: dict[str, Reason] = dict(triggers)
    edges: list[tuple[str, str, str]] = []
    frontier = sorted(triggers)
    depth = 0
    cut: list[str] = []
    while frontier:
        if depth >= limits.depth:
            cut.append(f"depth limit {limits.depth} reached with {len(frontier)} records still to expand")
            break
        if limits.seconds is not None and time.monotonic() - started > limits.seconds:
            cut.append(f"time limit {limits.seconds:g} s reached at depth {depth}")
            break
        found: list[str] = []
        for dst, ids in _by_label(frontier).items():
            for rel, src in INCOMING.get(dst, []):
                params = {"ids": ids, "as_of": stamp} if stamp else {"ids": ids}
                for row in store.read(DEPENDENTS[(dst, rel, src, stamp is not None)], params):
                    edges.append((row["id"], rel, row["target"]))
                    if row["id"] not in parent:
                        parent[row["id"]] = row["target"]
                        reason[row["id"]] = "negative" if rel in NEGATIVE else reason[row["target"]]
                        found.append(row["id"])
        depth += 1
        if len(parent) > limits.count:
            cut.append(f"count limit {limits.count} reached at depth {depth}")
            break
        if progress:
            progress(len(parent), depth)
        frontier = sorted(found)
    statuses = _statuses(store, parent, edges, triggers)
    affected = [
        Affected(rid, kind_of(rid), reason[rid], statuses[rid], _path(parent, rid))
        for rid in sorted(parent, key=lambda r: (REPORTED.index(kind_of(r)) if kind_of(r) in REPORTED else -1, r))
        if rid not in triggers and kind_of(rid) in REPORTED
    ]
    report = ImpactReport(trigger=trigger, affected=affected, complete=not cut, cut=cut, as_of=stamp,
                          edges=sorted(set(edges)))  # fmt: skip
    report.to_compensate = _executed_actions(store, [a.id for a in affected if a.kind == "action"], stamp)
    return report


def _by_label(ids: Iterable[str]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = defaultdict(list)
    for rid in ids:
        out[label_of(kind_of(rid))].append(rid)
    return out


def _path(parent: dict[str, str | None], rid: str) -> list[str]:
    path = [rid]
    while (up := parent[path[-1]]) is not None:
        path.append(up)
    return path[::-1]


def _statuses(store: GafStore, parent: dict[str, str | None], edges: list[tuple[str, str, str]], triggers: dict[str, Reason]) -> dict[str, Status]:
    """Invalidated or weakened, to a fixpoint (a status only ever worsens).

    A fact whose justification is invalidated is only weakened while another
    fact of the same proposition under the same projection keeps a justification
    that is not invalidated (support counting). A derivation or GAF is weakened
    when what it rests on is only weakened, invalidated when any of it is
    invalidated. Everything else inherits the worst status of what it rests on.
    """
    deps: dict[str, set[str]] = defaultdict(set)
    for dependent, _, dependency in edges:
        deps[dependent].add(dependency)
    facts = [r for r in parent if kind_of(r) == "fact"]
    siblings = _siblings(store, facts)
    status: dict[str, Status] = {r: ("invalidated" if r in triggers else "weakened") for r in parent}
    changed = True
    while changed:
        changed = False
        for rid in parent:
            if rid in triggers or status[rid] == "invalidated":
                continue
            worst = any(status.get(d) == "invalidated" for d in deps[rid])
            if worst and kind_of(rid) == "fact":
                worst = not any(status.get(j) != "invalidated" for j in siblings.get(rid, ()))
            if worst:
                status[rid] = "invalidated"
                changed = True
    return status


# The justifications of other facts that state the same proposition under the same projection.
_SIBLINGS = (
    "UNWIND $rows AS r MATCH (f:AcceptedFact {proposition: r.proposition, projection: r.projection}) "
    "WHERE f.id <> r.id RETURN r.id AS fact, f.justification AS justification"
)


def _siblings(store: GafStore, facts: list[str]) -> dict[str, list[str]]:
    records = store.get_many(facts)
    rows = [{"id": f.id, "proposition": f.proposition, "projection": f.projection}
            for f in records.values() if isinstance(f, AcceptedFact)]  # fmt: skip
    out: dict[str, list[str]] = defaultdict(list)
    for start in range(0, len(rows), 5000):
        for row in store.read(_SIBLINGS, {"rows": rows[start : start + 5000]}):
            out[row["fact"]].append(row["justification"])
    return out


# The statuses recorded for some actions.
_STATUSES = "UNWIND $ids AS i MATCH (s:ActionStatus)-[:STATUS_OF]->(a:Action {id: i}) RETURN a.id AS action, s.body AS body, s.id AS id"


def _executed_actions(store: GafStore, actions: list[str], stamp: str | None) -> list[str]:
    if not actions:
        return []
    executed = set()
    for row in store.read(_STATUSES, {"ids": actions}):
        status = parse_body(row["body"], row["id"])
        assert isinstance(status, ActionStatus)
        if status.status == "executed" and (stamp is None or format_instant(status.at) <= stamp):
            executed.add(row["action"])
    return sorted(executed)


# ---------------------------------------------------------------------- the questions


def source_invalidated(store: GafStore, source_id: str, **kw: Any) -> ImpactReport:
    """Everything that rests on a source: its claims and all that was built on them."""
    _require(store, source_id, "source")
    return walk(store, {source_id: "positive"}, trigger={"kind": "source_invalidated", "id": source_id}, **kw)


def claim_retracted(store: GafStore, claim_id: str, **kw: Any) -> ImpactReport:
    """Everything that rests on one claim."""
    _require(store, claim_id, "claim")
    return walk(store, {claim_id: "positive"}, trigger={"kind": "claim_retracted", "id": claim_id}, **kw)


def new_claim(store: GafStore, claim: Claim, **kw: Any) -> ImpactReport:
    """What new evidence would disturb: every closed scope it falls into and all that relied
    on the absence of claims there (negative dependencies), and every evaluation and GAF
    that already weighed, left unresolved or rejected a proposition it states (positive)."""
    scopes = scopes_hit(store, claim)
    stated = sorted(store.exists({st.proposition().id for st in claim.statements}))
    triggers: dict[str, Reason] = {p: "positive" for p in stated}
    triggers.update({d: "negative" for d in scopes})
    trigger = {"kind": "new_claim", "id": claim.id, "scopes": scopes, "propositions": stated}
    return walk(store, triggers, trigger=trigger, **kw)


# Completeness declarations of one source for some predicates.
_SCOPES = "MATCH (d:Completeness) WHERE d.source = $source AND d.predicate IN $predicates RETURN d.id AS id, d.body AS body"


def scopes_hit(store: GafStore, claim: Claim) -> list[str]:
    """The closed scopes a claim falls into: same source and predicate, matching subject
    and object patterns, valid time overlapping the declared interval."""
    rows = store.read(_SCOPES, {"source": claim.source, "predicates": sorted({s.predicate for s in claim.statements})})
    hit = []
    for row in rows:
        decl = parse_body(row["body"], row["id"])
        assert isinstance(decl, CompletenessDeclaration)
        for st in claim.statements:
            target = st.object if st.object is not None else st.value
            when = st.valid or _instant_interval(claim.observed_at)
            if decl.covers(st.predicate, st.subject, target) and decl.valid.overlaps(when):
                hit.append(decl.id)
                break
    return sorted(hit)


def _instant_interval(at: datetime) -> Interval:
    return Interval(start=at, end=at + timedelta(milliseconds=1))


# Closures decided under a projection policy or verdict rules version, with when they were closed.
_UNDER = {
    "projection": "MATCH (c:Closure)-[:UNDER]->(p:Projection {id: $id}) RETURN c.id AS id, c.closed_at AS closed_at",
    "rules": "MATCH (c:Closure)-[:JUDGED_BY]->(p:VerdictRules {id: $id}) RETURN c.id AS id, c.closed_at AS closed_at",
}


def policy_changed(
    store: GafStore, policy_id: str, *, effective: datetime | None = None, retroactive: bool = False, **kw: Any
) -> ImpactReport:
    """Every closure decided under a policy or rules version that a change would reach:
    those closed on or after the effective date, or all of them if the change is retroactive."""
    kind = kind_of(policy_id)
    if kind not in _UNDER:
        raise InvalidRecord(f"{policy_id} is not a projection policy or verdict rules id")
    _require(store, policy_id, kind)
    cutoff = format_instant(effective) if effective and not retroactive else None
    closures = [r["id"] for r in store.read(_UNDER[kind], {"id": policy_id}) if cutoff is None or r["closed_at"] >= cutoff]
    trigger = {"kind": "policy_change", "id": policy_id, "effective": cutoff, "retroactive": retroactive, "closures": sorted(closures)}
    report = walk(store, {c: "policy" for c in closures}, trigger=trigger, **kw)
    # The closures are the first affected records here, not mere triggers: report them.
    head = [Affected(c, "closure", "policy", "invalidated", [policy_id, c]) for c in sorted(closures)]
    for a in report.affected:
        a.path = [policy_id, *a.path]
    report.affected = head + report.affected
    report.edges = sorted(set(report.edges) | {(c, "UNDER" if kind == "projection" else "JUDGED_BY", policy_id) for c in closures})
    return report


def _require(store: GafStore, record_id: str, kind: str) -> Record:
    if kind_of(record_id) != kind:
        raise InvalidRecord(f"{record_id} is not a {kind} id")
    record = store.get(record_id)
    if record is None:
        raise UnknownReference(f"no {kind} {record_id} in {store.location}")
    return record


__all__ = [
    "Affected", "ImpactReport", "Limits", "claim_retracted", "new_claim", "policy_changed",
    "scopes_hit", "source_invalidated", "walk",
]  # fmt: skip
