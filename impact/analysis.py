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
support counting needs); as-of questions, time limits and LadybugDB walk level by
level, one batched statement per label per level. Limits on depth, count and time
are explicit, and a report that hit one says so: impact is never truncated silently.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Literal

from gaf.actions import status_order
from gaf.canonical import kind_of
from gaf.errors import InvalidRecord, UnknownReference
from gaf.records import AcceptedFact, ActionStatus, Claim, CompletenessDeclaration, Record, parse_body
from gaf.store.base import STATEMENT_ROWS, GafStore, Tx, _chunks
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

    def __post_init__(self) -> None:
        if not (isinstance(self.depth, int) and self.depth >= 1 and isinstance(self.count, int) and self.count >= 1):
            raise InvalidRecord(f"impact limits must be positive whole numbers, got depth={self.depth!r} count={self.count!r}")
        if self.seconds is not None and not self.seconds > 0:
            raise InvalidRecord(f"impact time limit must be positive, got {self.seconds!r} s")


# ---------------------------------------------------------------------- the Cypher


def _incoming() -> dict[str, list[tuple[str, str]]]:
    """For each label: the (relationship, dependent label) pairs that point at it."""
    out: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for rel, pairs in graph_schema().rels.items():
        if rel in POSITIVE + NEGATIVE:
            for src, dst in pairs:
                out[dst].append((rel, src))
    return {k: sorted(v) for k, v in out.items()}


INCOMING = _incoming()


def _dependents_query(dst: str, rels: tuple[str, ...], dialect: str, as_of: bool) -> str:
    # Records that depend, through any of rels, on the record {ID} of label dst — written
    # (transaction time) by $as_of in the as-of variant — with the relationship type. One
    # row whose list holds every (target, dependent, relationship): far cheaper for the
    # driver to decode than one record per edge.
    when = "WHERE x.written_at IS NULL OR x.written_at <= $as_of " if as_of else ""
    rel_type = "label(r)" if dialect == "ladybug" else "type(r)"
    return f"MATCH (t:{dst} {{{{id: {{ID}}}}}})<-[r:{'|'.join(rels)}]-(x) {when}RETURN collect([{{ID}}, x.id, {rel_type}]) AS rows"


DEPENDENTS = {
    (dst, dialect, as_of): _dependents_query(dst, tuple(sorted({rel for rel, _ in pairs})), dialect, as_of)
    for dst, pairs in INCOMING.items() for dialect in ("neo4j", "ladybug") for as_of in (False, True)
}  # fmt: skip


def _lookup(tx: Tx, dialect: str, template: str, ids: list[str], params: dict[str, Any] | None = None) -> list[list[Any]]:
    """The rows a per-record query template collects, for many records.

    ``template`` names the record as ``{ID}`` and returns one ``rows`` list. Neo4j
    answers all records in one ``UNWIND`` statement (an index seek per id).
    LadybugDB only uses its primary-key index for a literal or parameter match,
    not for one fed by ``UNWIND`` (it scans the table), so there each record is
    one small indexed statement.
    """
    extra = params or {}
    if dialect == "ladybug":
        single = template.format(ID="$id")
        return [row for rid in ids for got in tx.run(single, {"id": rid, **extra}) for row in got["rows"]]
    batched = "UNWIND $ids AS i " + template.format(ID="i")
    out: list[list[Any]] = []
    for chunk in _chunks(ids, STATEMENT_ROWS):
        for got in tx.run(batched, {"ids": list(chunk), **extra}):
            out.extend(got["rows"])
    return out


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
    required: str | None = None,
) -> ImpactReport:
    """Everything downstream of the trigger records, with statuses and paths.

    The whole report is read in one read-only transaction: it describes one state
    of the graph, even while writers append to it. ``required`` names a trigger that
    must exist in the store (checked in the same transaction).
    """
    for rid in triggers:
        kind_of(rid)  # a malformed id is a typed error before anything runs
    where = store.location
    return store._read(lambda tx: _walk(tx, store.dialect, triggers, trigger, as_of, limits, progress, required, where))


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
    tx: Tx, dialect: str, triggers: dict[str, Reason], stamp: str | None, limits: Limits, progress: Progress | None
) -> _Expansion:
    """One batched statement per label per level; honours every limit and as-of."""
    started = time.monotonic()
    out = _Expansion.start(triggers)
    frontier = sorted(triggers)
    while frontier:
        if out.depth >= limits.depth:
            out.cut.append(f"depth limit {limits.depth} reached with {len(frontier)} records still to expand")
            break
        if limits.seconds is not None and time.monotonic() - started > limits.seconds:
            out.cut.append(f"time limit {limits.seconds:g} s reached at depth {out.depth}")
            break
        rows: list[tuple[str, str, str]] = []
        for dst, ids in _by_label(frontier).items():
            if dst in INCOMING:
                template = DEPENDENTS[(dst, dialect, stamp is not None)]
                rows += [tuple(row) for row in _lookup(tx, dialect, template, ids, {"as_of": stamp} if stamp else None)]
        frontier = out.level(rows)
        if len(out.parent) > limits.count:
            out.cut.append(f"count limit {limits.count} reached at depth {out.depth}")
            break
        if progress:
            progress(len(out.parent), out.depth)
    return out


#: Every dependency relationship, as one alternation for a variable-length pattern.
_ALL = "|".join(sorted(set(POSITIVE + NEGATIVE)))
# Everything that depends on the given records of one label, in one statement: Neo4j plans
# the DISTINCT end nodes of a variable-length pattern as a pruning breadth-first expand,
# which visits each record once. Then every dependency edge leaving what was reached, and
# for each fact reached the justifications of the other facts of its proposition under
# its projection (for support counting) — the whole report in one round trip.
_REACH = (
    "MATCH (t:{label}) WHERE t.id IN $ids "
    "WITH collect(t) AS ts "
    "WITH [t IN ts | t.id] AS found, COLLECT {{ UNWIND ts AS t MATCH (t)<-[:{rels}*1..{depth}]-(x) "
    "RETURN DISTINCT x LIMIT $cap }} AS xs "
    "CALL {{ WITH xs UNWIND xs AS x MATCH (x)-[r:{rels}]->(y) RETURN collect([y.id, x.id, type(r)]) AS rows }} "
    "CALL {{ WITH xs UNWIND xs AS f WITH f WHERE f:AcceptedFact "
    "MATCH (f)-[:STATES]->(:Proposition)<-[:STATES]-(g:AcceptedFact) WHERE g.id <> f.id AND g.projection = f.projection "
    "RETURN collect([f.id, g.justification]) AS siblings }} "
    "RETURN found, rows, siblings"
)


def _expand_at_once(tx: Tx, triggers: dict[str, Reason], limits: Limits) -> _Expansion | None:
    """The whole expansion in one statement per trigger label (Neo4j, present state).

    The levels are then replayed in memory over the edges found, so the result is the
    one the level-wise expansion gives. When a depth or count limit would cut the walk,
    returns None and the level-wise expansion reports precisely where it stopped."""
    rows: set[tuple[str, str, str]] = set()
    found: set[str] = set()
    siblings: dict[str, set[str]] = defaultdict(set)
    for label, ids in _by_label(sorted(triggers)).items():
        cypher = _REACH.format(label=label, rels=_ALL, depth=limits.depth)
        for got in tx.run(cypher, {"ids": ids, "cap": limits.count + 1}):
            found.update(got["found"])
            rows.update(tuple(row) for row in got["rows"])
            for fact, justification in got["siblings"]:
                siblings[fact].add(justification)
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
    out.siblings = {fact: sorted(js) for fact, js in siblings.items()}
    return out


def _walk(
    tx: Tx, dialect: str, triggers: dict[str, Reason], trigger: dict[str, Any], as_of: datetime | None,
    limits: Limits, progress: Progress | None, required: str | None, where: str,
) -> ImpactReport:  # fmt: skip
    stamp = format_instant(as_of) if as_of else None
    expanded = None
    if dialect == "neo4j" and stamp is None and limits.seconds is None:
        expanded = _expand_at_once(tx, triggers, limits)
    if expanded is None:
        if required is not None and not _lookup(tx, dialect, _EXISTS[label_of(_kind(required))], [required]):
            raise UnknownReference(f"no {_kind(required)} {required} in {where}")
        expanded = _expand_by_level(tx, dialect, triggers, stamp, limits, progress)
        expanded.found = {required} if required is not None else set()
    elif progress:
        progress(len(expanded.parent), expanded.depth)
    if required is not None and required not in expanded.found:
        raise UnknownReference(f"no {_kind(required)} {required} in {where}")
    parent, reason, edges, cut = expanded.parent, expanded.reason, expanded.edges, expanded.cut
    if expanded.siblings is None:
        expanded.siblings = _siblings(tx, dialect, [r for r in parent if _kind(r) == "fact"], stamp)
    statuses = _statuses(parent, edges, triggers, expanded.siblings)
    affected = [
        Affected(rid, _kind(rid), reason[rid], statuses[rid], _path(parent, rid))
        for rid in sorted(parent, key=lambda r: (_RANK.get(_kind(r), -1), r))
        if rid not in triggers and _kind(rid) in _RANK
    ]
    report = ImpactReport(trigger=trigger, affected=affected, complete=not cut, cut=cut, as_of=stamp,
                          edges=sorted(set(edges)))  # fmt: skip
    report.to_compensate = _executed_actions(tx, dialect, [a.id for a in affected if a.kind == "action"], stamp)
    return report


def _by_label(ids: Iterable[str]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = defaultdict(list)
    for rid in ids:
        out[label_of(_kind(rid))].append(rid)
    return out


_RANK = {kind: rank for rank, kind in enumerate(REPORTED)}


def _kind(rid: str) -> str:
    # Trigger ids are checked by kind_of when the walk starts; the rest are read back from
    # the store: no regex needed.
    return rid[: rid.index(":")]


def _path(parent: dict[str, str | None], rid: str) -> list[str]:
    path = [rid]
    while (up := parent[path[-1]]) is not None:
        path.append(up)
    return path[::-1]


def _statuses(
    parent: dict[str, str | None], edges: list[tuple[str, str, str]], triggers: dict[str, Reason],
    siblings: dict[str, list[str]],
) -> dict[str, Status]:  # fmt: skip
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
    status: dict[str, Status] = {r: ("invalidated" if r in triggers else "weakened") for r in parent}
    changed = True
    while changed:
        changed = False
        for rid in parent:
            if rid in triggers or status[rid] == "invalidated":
                continue
            worst = any(status.get(d) == "invalidated" for d in deps[rid])
            if worst and _kind(rid) == "fact":
                worst = not any(status.get(j) != "invalidated" for j in siblings.get(rid, ()))
            if worst:
                status[rid] = "invalidated"
                changed = True
    return status


# The justifications of other facts that state the same proposition under the same projection
# (found through the proposition node, so no property index is needed on either store).
_SIBLINGS = (
    "MATCH (f:AcceptedFact {{{{id: {{ID}}}}}})-[:STATES]->(:Proposition)<-[:STATES]-(g:AcceptedFact) "
    "WHERE g.id <> f.id AND g.projection = f.projection {when}RETURN collect([{{ID}}, g.justification]) AS rows"
)


def _siblings(tx: Tx, dialect: str, facts: list[str], stamp: str | None) -> dict[str, list[str]]:
    template = _SIBLINGS.format(when="AND (g.written_at IS NULL OR g.written_at <= $as_of) " if stamp else "")
    out: dict[str, list[str]] = defaultdict(list)
    for fact, justification in _lookup(tx, dialect, template, facts, {"as_of": stamp} if stamp else None):
        out[fact].append(justification)
    return out


# Whether a record exists (the trigger of a question).
_EXISTS = {label: f"MATCH (t:{label} {{{{id: {{ID}}}}}}) RETURN collect([t.id]) AS rows" for label in graph_schema().nodes}

# The statuses recorded for some actions.
_STATUSES = "MATCH (s:ActionStatus)-[:STATUS_OF]->(a:Action {{id: {ID}}}) RETURN collect([a.id, s.id, s.body, a.compensates]) AS rows"


def _executed_actions(tx: Tx, dialect: str, actions: list[str], stamp: str | None) -> list[str]:
    """The affected actions whose effect stands (latest status, as of the stamp, is executed):
    not those already compensated, and not the compensations themselves — undoing an effect
    of a decision now in doubt needs no undoing."""
    if not actions:
        return []
    latest: dict[str, ActionStatus] = {}
    for action, status_id, body, compensates in _lookup(tx, dialect, _STATUSES, actions):
        if compensates:
            continue
        status = parse_body(body, status_id)
        assert isinstance(status, ActionStatus)
        if stamp is not None and format_instant(status.at) > stamp:
            continue
        seen = latest.get(action)
        if seen is None or status_order(status) > status_order(seen):
            latest[action] = status
    return sorted(a for a, status in latest.items() if status.status == "executed")


# ---------------------------------------------------------------------- the questions


def source_invalidated(store: GafStore, source_id: str, **kw: Any) -> ImpactReport:
    """Everything that rests on a source: its claims and all that was built on them."""
    _require_kind(source_id, "source")
    return walk(store, {source_id: "positive"}, trigger={"kind": "source_invalidated", "id": source_id}, required=source_id, **kw)


def claim_retracted(store: GafStore, claim_id: str, **kw: Any) -> ImpactReport:
    """Everything that rests on one claim."""
    _require_kind(claim_id, "claim")
    return walk(store, {claim_id: "positive"}, trigger={"kind": "claim_retracted", "id": claim_id}, required=claim_id, **kw)


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


def _require_kind(record_id: str, kind: str) -> None:
    if kind_of(record_id) != kind:
        raise InvalidRecord(f"{record_id} is not a {kind} id")


def _require(store: GafStore, record_id: str, kind: str) -> Record:
    _require_kind(record_id, kind)
    record = store.get(record_id)
    if record is None:
        raise UnknownReference(f"no {kind} {record_id} in {store.location}")
    return record


__all__ = [
    "Affected", "ImpactReport", "Limits", "claim_retracted", "new_claim", "policy_changed",
    "scopes_hit", "source_invalidated", "walk",
]  # fmt: skip
