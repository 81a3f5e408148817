"""Tamper evidence: recompute every id and check every link, and name each discrepancy.

An audit store that silently alters a record is worse than none. Every record's
id is the hash of its content, so ``verify`` can recompute them all: a body
edited in place, a node property that no longer agrees with the body, a
relationship added or removed behind gaf's back, a supersession chain that is
broken or circular, a closure whose signature does not check — each is reported
with the record it concerns.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from gaf.errors import GafError
from gaf.projection.cone import cones_for
from gaf.records import RECORD_TYPES, Closure, Cone, Record, parse_body
from gaf.signing import signature_problem
from gaf.store.base import GafStore
from gaf.store.schema import CONES_RECORDED
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
    """How many records were checked and what was wrong with any of them."""

    checked: int = 0
    discrepancies: list[Discrepancy] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.discrepancies

    def to_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "checked": self.checked, "discrepancies": [d.to_dict() for d in self.discrepancies]}


def verify(store: GafStore, *, verify_key: str | None = None, progress: Progress = no_progress) -> VerifyReport:
    """Check every stored record against its id, its node properties and its relationships.

    A signed closure's signature is checked too; given ``verify_key`` (a public key as
    hex, ``gaf.signing.public_key``), every closure must be signed by that key.
    ``progress`` is told the records checked, out of all the store holds, every thousand
    and after each kind.
    """
    key = verify_key
    report = VerifyReport()
    closures: dict[str, Closure] = {}
    cones: dict[str, list[Cone]] = {}
    total = sum(store.count(cls) for cls in RECORD_TYPES.values())  # the store's own records (version stamps) too
    progress(CHECKING, 0, total)
    for kind, cls in sorted(RECORD_TYPES.items()):
        rows = store.stored_nodes(kind)
        held = store.held_members(rows)
        _check_unique(cls, rows, report)
        for row in rows:
            report.checked += 1
            record = _check_body(row, held.get(row["id"]), report)
            if record is None:
                continue
            stored = {c: row[c] for c in cls.COLUMNS}
            expected = record.props()
            for name in sorted(stored):
                if _normal(stored[name]) != _normal(expected[name]):
                    report.discrepancies.append(Discrepancy(record.id, f"property {name} is {stored[name]!r} on the node but {expected[name]!r} in the record"))
            _check_edges(store, record, report)
            if isinstance(record, Cone):
                cones.setdefault(record.closure, []).append(record)
            if isinstance(record, Closure):
                closures[record.id] = record
                if problem := signature_problem(record, key):
                    report.discrepancies.append(Discrepancy(record.id, problem))
            if report.checked % RECORDS_BATCH == 0:
                progress(CHECKING, report.checked, total)
        progress(CHECKING, report.checked, total)
    _check_chains(closures, report)
    _check_cones(store, closures, cones, report)
    return report


def _check_body(row: dict[str, Any], members: dict[str, list[str]] | None, report: VerifyReport) -> Record | None:
    """The record a node holds (its member lists read from its relationships), or None with the
    discrepancy said: a member relationship added or removed changes the record, so its id."""
    try:
        return parse_body(row["body"], row["id"], members)
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


def _check_edges(store: GafStore, record: Record, report: VerifyReport) -> None:
    expected = set(record.edges())
    found = set(store.edges_from(record.id))
    for rel, target in sorted(expected - found):
        report.discrepancies.append(Discrepancy(record.id, f"relationship {rel} to {target} is missing"))
    for rel, target in sorted(found - expected):
        report.discrepancies.append(Discrepancy(record.id, f"relationship {rel} to {target} is not in the record"))


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
