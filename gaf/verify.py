"""Tamper evidence: recompute every id and check every link, and name each discrepancy.

An audit store that silently alters a record is worse than none. Every record's
id is the hash of its content, so ``verify`` can recompute them all: a body
edited in place, a node property that no longer agrees with the body, a
relationship added or removed behind gaf's back, a supersession chain that is
broken or circular, a closure whose signature does not check — each is reported
with the record it concerns.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from gaf.closure import replay
from gaf.canonical import ID_PATTERN
from gaf.errors import GafError, InvalidValue
from gaf.projection.cone import cones_for
from gaf.records import RECORD_TYPES, Closure, Cone, LogEntry, Record, Verdict, parse_body
from gaf.signing import signature_problem
from gaf.store.base import GafStore
from gaf.store.schema import CONES_RECORDED, LOG_KEPT, SUBJECTS_KEYED
from gaf.types import Progress, no_progress

#: The one stage of a verify, and how many records are checked between two reports of it.
CHECKING = "checking the records"
RECORDS_BATCH = 1000


@dataclass
class Discrepancy:
    id: str
    problem: str

    def to_dict(self) -> dict[str, str]:
        return {"id": self.id, "problem": self.problem}


@dataclass
class VerifyReport:
    """How many records were checked and what was wrong with any of them, with the write log's
    head (its last link, what a reader notes down to check later with ``head=``) and how many
    closures a deep verify replayed."""

    checked: int = 0
    discrepancies: list[Discrepancy] = field(default_factory=list)
    head: str | None = None
    logged: int = 0
    replayed: int | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.discrepancies

    def to_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "checked": self.checked, "discrepancies": [d.to_dict() for d in self.discrepancies],
                "log": {"head": self.head, "logged": self.logged}, "replayed": self.replayed, "notes": self.notes}  # fmt: skip


def verify(
    store: GafStore, *, verify_key: str | None = None, deep: bool = False, head: str | None = None,
    progress: Progress = no_progress,
) -> VerifyReport:  # fmt: skip
    """Check every stored record against its id, its node properties and its relationships; that
    every reference resolves, each closure has one verdict and no id is stored twice; and, from
    schema version 5, the store against its write log: a record deleted, inserted or replaced
    behind gaf's back is named, and so is a link of the log removed or rewritten.

    A signed closure's signature is checked too; given ``verify_key`` (a public key as
    hex, ``gaf.signing.public_key``), every closure must be signed by that key. Given ``head``
    (a log head noted before, ``VerifyReport.head``), the log must still hold that link: a log
    rewritten from some link on is named even if rewritten consistently. ``deep`` replays every
    closure (``gaf.closure.replay``) and names each that does not replay identically.
    ``progress`` is told the records checked, out of all the store holds, every thousand
    and after each kind.
    """
    if head is not None and not (ID_PATTERN.match(head) and head.startswith(f"{LogEntry.KIND}:")):
        raise InvalidValue(f"{head!r} is not a log head", where="--head",
                           hint="give the whole log_entry:… id gaf verify printed as the head")  # fmt: skip
    key = verify_key
    report = VerifyReport()
    closures: dict[str, Closure] = {}
    cones: dict[str, list[Cone]] = {}
    verdicts: dict[str, list[str]] = {}
    links: list[LogEntry] = []
    stored: set[str] = set()
    dangling: list[tuple[str, str, str]] = []
    # Every kind the store can hold (an embedded store made by an older gaf, opened read-only, has
    # no table for the kinds added since: it holds none of them).
    declared = store.labels()
    kinds = {kind: cls for kind, cls in sorted(RECORD_TYPES.items()) if cls.LABEL in declared}
    total = sum(store.count(cls) for cls in kinds.values())  # the store's own records (version stamps) too
    keyed = store.schema_version() >= SUBJECTS_KEYED  # before, a proposition may lack its ABOUT (gaf migrate links it)
    progress(CHECKING, 0, total)
    for kind, cls in kinds.items():
        rows = store.stored_nodes(kind)
        held = store.held_members(rows)
        edges = store.edges_of_kind(kind)
        _check_unique(cls, rows, report)
        _check_twice(rows, report)
        for row in rows:
            report.checked += 1
            if kind != LogEntry.KIND:
                stored.add(row["id"])
            if kind == Verdict.KIND:  # from the node, so a verdict whose body was edited still decides its closure
                verdicts.setdefault(row["closure"], []).append(row["id"])
            record = _check_body(row, held.get(row["id"]), report)
            if record is None:
                continue
            stored_props = {c: row[c] for c in cls.COLUMNS}
            expected = record.props()
            for name in sorted(stored_props):
                if _normal(stored_props[name]) != _normal(expected[name]):
                    report.discrepancies.append(Discrepancy(record.id, f"property {name} is {stored_props[name]!r} on the node but {expected[name]!r} in the record"))
            dangling += [d for d in _check_edges(record, edges.get(record.id, []), report) if keyed or d[1] != "ABOUT"]
            if isinstance(record, Cone):
                cones.setdefault(record.closure, []).append(record)
            if isinstance(record, LogEntry):
                links.append(record)
            if isinstance(record, Closure):
                closures[record.id] = record
                if problem := signature_problem(record, key):
                    report.discrepancies.append(Discrepancy(record.id, problem))
            if report.checked % RECORDS_BATCH == 0:
                progress(CHECKING, report.checked, total)
        progress(CHECKING, report.checked, total)
    every = stored | {link.id for link in links}
    for rid, rel, target in dangling:
        if target not in every:
            report.discrepancies.append(Discrepancy(rid, f"relationship {rel} to {target} is missing: {target} is not stored"))
        else:
            report.discrepancies.append(Discrepancy(rid, f"relationship {rel} to {target} is missing"))
    for missing in store.missing_constraints():
        report.discrepancies.append(Discrepancy(missing, "the store's constraint is missing: two nodes could share an id or a name@version (gaf init declares it)"))
    _check_verdicts(closures, verdicts, report)
    _check_chains(closures, report)
    _check_cones(store, closures, cones, report)
    _check_log(store, links, stored, head, report)
    if deep:
        _replay_all(store, sorted(closures), report)
    return report


def _check_twice(rows: list[dict[str, Any]], report: VerifyReport) -> None:
    """No id is stored on two nodes, whatever the store's constraints say (a constraint can be
    dropped, and a node copied behind gaf's back)."""
    seen = Counter(row["id"] for row in rows)
    for rid in sorted(r for r, n in seen.items() if n > 1):
        report.discrepancies.append(Discrepancy(rid, f"is stored on {seen[rid]} nodes: one id, one record"))


def _check_verdicts(closures: dict[str, Closure], verdicts: dict[str, list[str]], report: VerifyReport) -> None:
    """A closure has exactly one verdict (written in its transaction), and a verdict decides a stored
    closure: a deleted verdict would leave the closure undecided with nothing else to say so."""
    for cid in sorted(closures):
        found = verdicts.get(cid, [])
        if not found:
            report.discrepancies.append(Discrepancy(cid, "the closure has no verdict: it was deleted out of band, or never written"))
        elif len(found) > 1:
            report.discrepancies.append(Discrepancy(cid, f"the closure has {len(found)} verdicts ({', '.join(sorted(found))}): a closure is decided once"))
    for cid in sorted(verdicts.keys() - closures.keys()):
        for vid in sorted(verdicts[cid]):
            report.discrepancies.append(Discrepancy(vid, f"decides {cid}, which is not stored"))


def _check_log(store: GafStore, links: list[LogEntry], stored: set[str], head: str | None, report: VerifyReport) -> None:
    """The write log against the store: its links numbered from 0 without a gap, each naming the one
    before it; every id it lists stored, and every stored id listed — so a record deleted, inserted
    or replaced (the forgery's id is not the original's) is named. A store before schema version 5
    keeps no log: said in the report's notes, not passed over in silence."""
    if not links:
        if store.schema_version() >= LOG_KEPT:
            report.discrepancies.append(Discrepancy("log_entry", "the store is at schema version 5 or later but holds no write log: it was deleted"))
        else:
            report.notes.append("the store keeps no write log (schema version before 5): records deleted or inserted out of band cannot be named; gaf migrate begins the log")
        if head is not None:
            report.discrepancies.append(Discrepancy(head, "the log head given is not in the store's write log"))
        return
    by_seq: dict[int, list[LogEntry]] = {}
    for link in links:
        by_seq.setdefault(link.seq, []).append(link)
    last = max(by_seq)
    report.head = sorted(by_seq[last], key=lambda x: x.id)[0].id
    prev: str | None = None
    for seq in range(last + 1):
        here = by_seq.get(seq)
        if not here:
            report.discrepancies.append(Discrepancy(f"log_entry#{seq}", f"link {seq} of the write log is missing (deleted out of band)"))
            prev = None
            continue
        link = here[0]
        if seq > 0 and prev is not None and link.prev != prev:
            report.discrepancies.append(Discrepancy(link.id, f"link {seq} of the write log follows {link.prev}, not link {seq - 1} ({prev})"))
        if seq == 0 and link.prev is not None:
            report.discrepancies.append(Discrepancy(link.id, f"the write log's first link follows {link.prev}"))
        prev = link.id
    listed: dict[str, int] = {}
    for link in sorted(links, key=lambda x: (x.seq, x.id)):
        for rid in link.ids():
            if rid in listed:
                report.discrepancies.append(Discrepancy(rid, f"is listed by links {listed[rid]} and {link.seq} of the write log: written once, logged once"))
            listed.setdefault(rid, link.seq)
    report.logged = len(listed)
    for rid in sorted(listed.keys() - stored):
        report.discrepancies.append(Discrepancy(rid, f"was written (link {listed[rid]} of the write log lists it) but is not stored: deleted or replaced out of band"))
    for rid in sorted(stored - listed.keys()):
        report.discrepancies.append(Discrepancy(rid, "is stored but no write logged it: inserted out of band (a forgery, if it stands in for a record the log lists)"))
    if head is not None and head not in {link.id for link in links}:
        report.discrepancies.append(Discrepancy(head, "the log head given is not in the store's write log: the log was rewritten since it was noted"))


def _replay_all(store: GafStore, closure_ids: list[str], report: VerifyReport) -> None:
    """Replay every closure; each that does not replay identically is named with its layers."""
    report.replayed = 0
    for cid in closure_ids:
        try:
            found = replay(store, cid)
        except GafError as exc:
            report.discrepancies.append(Discrepancy(cid, f"does not replay: {exc.what}"))
            continue
        report.replayed += 1
        if not found.identical:
            layers = "; ".join(f"{layer['layer']}: {layer['detail']}" for layer in found.layers)
            report.discrepancies.append(Discrepancy(cid, f"does not replay identically — {layers}"))


def _check_body(row: dict[str, Any], members: dict[str, list[str]] | None, report: VerifyReport) -> Record | None:
    """The record a node holds (its member lists read from its relationships), or None with the
    discrepancy said: a member relationship added or removed changes the record, so its id."""
    try:
        return parse_body(row["body"], row["id"], members, keep=False)
    except GafError as exc:
        report.discrepancies.append(Discrepancy(row["id"], f"the stored record does not match its id: {exc.what}"))
    except (ValueError, TypeError) as exc:
        report.discrepancies.append(Discrepancy(row["id"], f"the stored body is not a record: {exc}"))
    return None


def _check_unique(cls: type[Record], rows: list[dict[str, Any]], report: VerifyReport) -> None:
    """No two records of a kind share the values that name one (a policy's name@version): a
    second one forks a version that projections and closures name by name."""
    if not cls.UNIQUE:
        return
    named: dict[tuple[Any, ...], list[str]] = {}
    for row in rows:
        named.setdefault(tuple(row[f] for f in cls.UNIQUE), []).append(row["id"])
    for values, ids in sorted(named.items(), key=lambda kv: kv[1][0]):
        for rid in sorted(ids)[1:]:
            name = "@".join(str(v) for v in values)
            report.discrepancies.append(Discrepancy(rid, f"{cls.KIND} {name} is also {sorted(ids)[0]}: two records under one name@version"))


def _check_edges(record: Record, stored: list[tuple[str, str]], report: VerifyReport) -> list[tuple[str, str, str]]:
    """Names each relationship the store holds (``stored``) that the record does not; returns the
    record's relationships the store lacks, (id, type, target), said once every stored id is known."""
    expected = set(record.edges())
    found = set(stored)
    for rel, target in sorted(found - expected):
        report.discrepancies.append(Discrepancy(record.id, f"relationship {rel} to {target} is not in the record"))
    return [(record.id, rel, target) for rel, target in sorted(expected - found)]


def _check_cones(store: GafStore, closures: dict[str, Closure], cones: dict[str, list[Cone]], report: VerifyReport) -> None:
    """From the schema version that records cones, every closure has one cone, and it is the
    cone its policy and rules give: a closure without its cone would be invisible to impact."""
    if store.schema_version() < CONES_RECORDED:
        return
    expected = cones_for(closures.values(), store.get_many)
    for cid in sorted(closures):
        found = cones.get(cid, [])
        if not found:
            report.discrepancies.append(Discrepancy(cid, "the closure has no recorded cone: impact cannot reach it (gaf migrate records one)"))
        for cone in found:
            if cid in expected and cone.id != expected[cid].id:
                report.discrepancies.append(Discrepancy(cone.id, f"the cone recorded for {cid} is not what its policy and rules read ({expected[cid].id})"))


def _check_chains(closures: dict[str, Closure], report: VerifyReport) -> None:
    """Every closure a closure supersedes exists, and no chain comes back on itself."""
    for c in closures.values():
        for old in c.supersedes:
            if old not in closures:
                report.discrepancies.append(Discrepancy(c.id, f"supersedes {old}, which is not stored"))
    for start in closures:
        seen, todo = set(), [start]
        while todo:
            current = todo.pop()
            for old in closures[current].supersedes if current in closures else ():
                if old == start:
                    report.discrepancies.append(Discrepancy(start, "its supersession chain comes back to it"))
                    todo = []
                    break
                if old not in seen:
                    seen.add(old)
                    todo.append(old)


def _normal(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value
