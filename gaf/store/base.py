"""One store interface, written once over a transaction that runs Cypher.

The two stores (Neo4j and the embedded LadybugDB) differ only in how they open,
how they run a statement inside a transaction, and how they declare their schema.
Everything that decides *what* is written — expanding implied records, skipping
ids already stored, refusing unknown references, atomic or best-effort batches —
lives here, once, in the portable Cypher subset both speak. So the contract the
tests pin is the same code on both stores.

The interface is append-only by construction: it has ``put`` and reads, and no
update or delete. Supersession is new records pointing at old ones.
"""

from __future__ import annotations

import abc
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal, Protocol, Self, TypeVar

from gaf.canonical import kind_of
from gaf.errors import BatchRejected, GafError, InvalidRecord, StoreError, UnknownReference
from gaf.records import RECORD_TYPES, Record, parse_record
from gaf.store.questions import _EXISTING, STATEMENT_ROWS, Questions, Snapshot, chunks
from gaf.store.schema import GraphSchema, graph_schema, label_of
from gaf.types import format_instant

Mode = Literal["atomic", "best_effort"]
T = TypeVar("T")


class Tx(Protocol):
    """A transaction that runs one parameterised Cypher statement and returns rows."""

    def run(self, cypher: str, params: dict[str, Any] | None = None) -> list[dict[str, Any]]: ...


@dataclass
class ItemError:
    """Why one item of a best-effort batch was not written."""

    index: int
    id: str | None
    error: GafError

    def to_dict(self) -> dict[str, Any]:
        return {"index": self.index, "id": self.id, **self.error.to_dict()}


@dataclass
class WriteReport:
    """What a write did: ids newly written, ids already present (no-ops), items refused."""

    written: list[str] = field(default_factory=list)
    existing: list[str] = field(default_factory=list)
    failed: list[ItemError] = field(default_factory=list)

    def merge(self, other: WriteReport) -> None:
        self.written += other.written
        self.existing += other.existing
        self.failed += other.failed

    def to_dict(self) -> dict[str, Any]:
        return {
            "written": len(self.written),
            "existing": len(self.existing),
            "failed": [f.to_dict() for f in self.failed],
        }


class GafStore(Questions):
    """The store interface: append records, read them back, run read-only Cypher.

    Open one with ``GafStore.open(target)``: a ``neo4j://`` or ``bolt://`` URI
    opens Neo4j, anything else is the directory of an embedded LadybugDB store.
    """

    # ------------------------------------------------------------------ lifecycle

    @staticmethod
    def open(target: str | None = None, *, read_only: bool = False) -> GafStore:
        """Open the store at ``target``, or at $GAF_STORE, or the embedded default, with the
        environment's settings (``Settings.from_env()``): the convenience for scripts.

        ``gaf.store.open_store(target, auth=…, database=…, read_only=…, settings=…)`` is the
        explicit form, which reads nothing from the environment."""
        from gaf.settings import Settings
        from gaf.store.config import open_store

        return open_store(target, read_only=read_only, settings=Settings.from_env())

    @abc.abstractmethod
    def init(self) -> None:
        """Declare the schema, constraints and indexes; safe to run again."""

    @abc.abstractmethod
    def close(self) -> None:
        """Release the connection or the database file."""

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ what each store supplies

    #: whether the store was opened read-only (then every write is refused)
    read_only: bool = False

    @abc.abstractmethod
    def _write(self, work: Callable[[Tx], WriteReport]) -> WriteReport:
        """Run ``work`` in one write transaction, retrying transient failures."""

    @abc.abstractmethod
    def _read(self, work: Callable[[Tx], T]) -> T:
        """Run ``work`` in one read-only transaction."""

    def read(self, cypher: str, params: dict[str, Any] | None = None) -> list[dict[str, Any]]:
        """Run one query in a read-only transaction and return its rows as dicts.

        For the auditor query runner (queries/): gaf's own reads are the named
        questions of gaf.store.questions."""
        return self._read(lambda tx: tx.run(cypher, params))

    # ------------------------------------------------------------------ writing

    def put(self, records: Iterable[Record | dict[str, Any]], *, at: datetime, mode: Mode = "atomic") -> WriteReport:
        """Append records (and the records they imply) in one transaction.

        Ids already stored are no-ops and reported as ``existing``. In ``atomic``
        mode one bad item (malformed, or pointing at an id that is neither in the
        batch nor stored) refuses the batch with BatchRejected and writes nothing;
        in ``best_effort`` mode the bad items are reported in ``failed`` and the
        rest is written. Each node is stamped ``written_at``: the record's own time
        if it has one (a claim's recorded_at, a closure's closed_at), else ``at`` —
        passed in by the operation (always: a record without a time would be present
        in every "as of" question), so "as of" questions can be asked later.
        """
        if mode not in ("atomic", "best_effort"):
            raise InvalidRecord(f"unknown write mode {mode!r}", hint="use 'atomic' or 'best_effort'")
        if self.read_only:
            raise StoreError(f"the store at {self.location} is open read-only", hint="open it without read_only to write")
        batch, failed = _parse_items(records)
        if failed and mode == "atomic":
            raise BatchRejected([f.error for f in failed])
        stamp = format_instant(at)
        return self._write(lambda tx: _put_in(tx, batch, failed, mode, stamp))

    # ------------------------------------------------------------------ reading

    def _rows(self, cypher: str, params: dict[str, Any] | None = None) -> list[dict[str, Any]]:
        # Each named question (gaf.store.questions) in its own read transaction.
        return self.read(cypher, params)

    def snapshot(self, work: Callable[[Snapshot], T]) -> T:
        """Run ``work`` with the named questions answered in one read transaction:
        every answer describes one state of the graph, even while writers append."""
        return self._read(lambda tx: work(Snapshot(tx, self.dialect, self.location)))

    def schema(self) -> GraphSchema:
        return graph_schema()


# ---------------------------------------------------------------------- the write, once for both stores


def _parse_items(items: Iterable[Record | dict[str, Any]]) -> tuple[dict[int, Record], list[ItemError]]:
    """Records from the items given, by position, with an error for each item that is not one."""
    batch: dict[int, Record] = {}
    failed: list[ItemError] = []
    for index, item in enumerate(items):
        if isinstance(item, Record):
            batch[index] = item
            continue
        try:
            batch[index] = parse_record(item, where=f"item {index}")
        except GafError as exc:
            failed.append(ItemError(index, item.get("id") if isinstance(item, dict) else None, exc))
    return batch, failed


def _put_in(tx: Tx, items: dict[int, Record], failed: list[ItemError], mode: Mode, at: str | None) -> WriteReport:
    """The body of ``put``: decide inside the transaction, so the decision and the write agree."""
    report = WriteReport(failed=list(failed))
    given = list(items.values())
    batch = _expand(given)
    present = _existing_ids(tx, batch)
    report.existing = [r.id for r in given if r.id in present]
    new = {rid: r for rid, r in batch.items() if rid not in present}
    bad = _unresolved_refs(tx, new, present)
    if bad:
        position = {r.id: i for i, r in reversed(items.items())}
        errors = [ItemError(position.get(rid, -1), rid, err) for rid, err in sorted(bad.items())]
        if mode == "atomic":
            raise BatchRejected([e.error for e in errors])
        report.failed += errors
        # Rebuild from the surviving items, so a refused claim leaves no orphan propositions.
        survivors = [r for r in given if r.id not in bad and r.id not in present]
        new = {rid: r for rid, r in _expand(survivors).items() if rid not in present}
    _create(tx, list(new.values()), at, _inherited_times(list(new.values())))
    report.written = [r.id for r in given if r.id in new]
    return report


def _inherited_times(given: Sequence[Record]) -> dict[str, str]:
    """For each implied record, the earliest own time of the records of the batch implying it:
    a claim's propositions were known when the claim was recorded, not when it was ingested."""
    out: dict[str, str] = {}
    for record in given:
        own = record.time()
        if own is None:
            continue
        stamp = format_instant(own)
        for implied in record.implied():
            if implied.id not in out or stamp < out[implied.id]:
                out[implied.id] = stamp
    return out


def _expand(given: Sequence[Record]) -> dict[str, Record]:
    """The batch by id, with implied records added and duplicates dropped."""
    out: dict[str, Record] = {}
    for record in given:
        out.setdefault(record.id, record)
        for implied in record.implied():
            out.setdefault(implied.id, implied)
    return out


def _unresolved_refs(tx: Tx, new: dict[str, Record], present: set[str]) -> dict[str, GafError]:
    """Records whose references reach neither the batch nor the store, transitively.

    A record refused in best-effort mode takes down the records of the batch that
    point at it, so nothing is written with a dangling relationship.
    """
    targets = {t for r in new.values() for _, t in r.edges()} - new.keys() - present
    stored = _existing_ids(tx, targets)
    missing = targets - stored
    bad: dict[str, GafError] = {}
    changed = True
    while changed:
        changed = False
        for rid, record in new.items():
            if rid in bad:
                continue
            for rel, target in record.edges():
                if target in missing or target in bad:
                    bad[rid] = UnknownReference(
                        f"{rel} points at {target}, which is neither in the batch nor in the store"
                        + (" (it was itself refused)" if target in bad else ""),
                        where=rid,
                        hint="write the referenced record first, or in the same batch",
                    )
                    changed = True
                    break
    return bad


def _existing_ids(tx: Tx, ids: Iterable[str]) -> set[str]:
    found: set[str] = set()
    for label, group in _by_label(ids).items():
        for chunk in chunks(group, STATEMENT_ROWS):
            found.update(row["id"] for row in tx.run(_EXISTING[label], {"ids": chunk}))
    return found


def _create(tx: Tx, records: list[Record], at: str | None, inherited: dict[str, str]) -> None:
    """CREATE the new nodes, then their relationships: ids are known to be new."""
    by_label: dict[str, list[Record]] = defaultdict(list)
    for record in records:
        by_label[record.LABEL].append(record)
    for label, group in sorted(by_label.items()):
        for chunk in chunks(group, STATEMENT_ROWS):
            tx.run(_CREATE[label], {"rows": [_node_row(r, inherited.get(r.id, at)) for r in chunk]})
    edges: dict[tuple[str, str, str], list[dict[str, str]]] = defaultdict(list)
    for record in records:
        for rel, target in record.edges():
            edges[(rel, record.LABEL, label_of(kind_of(target)))].append({"s": record.id, "d": target})
    for (rel, src, dst), rows in sorted(edges.items()):
        for chunk in chunks(rows, STATEMENT_ROWS):
            tx.run(_link(rel, src, dst), {"rows": chunk})


def _node_row(record: Record, at: str | None) -> dict[str, Any]:
    own = record.time()
    written = format_instant(own) if own is not None else at
    return {"id": record.id, "kind": record.KIND, "body": record.body.decode("utf-8"), "written_at": written, **record.props()}


def _by_label(ids: Iterable[str]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = defaultdict(list)
    for rid in ids:
        out[label_of(kind_of(rid))].append(rid)
    return {label: sorted(group) for label, group in out.items()}


# ---------------------------------------------------------------------- the Cypher, built once per label
# Labels, relationship types and property names come from the record classes (a
# closed list in code); every value is a parameter.


def _create_statement(label: str, columns: Iterable[str]) -> str:
    props = ", ".join(f"{c}: r.{c}" for c in ("id", "kind", "body", "written_at", *columns))
    # Creates one node per row; callers guarantee the ids are new.
    return f"UNWIND $rows AS r CREATE (n:{label} {{{props}}})"


def _link(rel: str, src: str, dst: str) -> str:
    # Joins two stored nodes by id; two MATCH clauses keep it linear on LadybugDB.
    return f"UNWIND $rows AS r MATCH (a:{src} {{id: r.s}}) MATCH (b:{dst} {{id: r.d}}) CREATE (a)-[:{rel}]->(b)"


_CREATE = {cls.LABEL: _create_statement(cls.LABEL, cls.COLUMNS) for cls in RECORD_TYPES.values()}
