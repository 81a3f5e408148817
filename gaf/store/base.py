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
import gc
import threading
from collections import defaultdict
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from contextvars import copy_context
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any, Literal, Protocol, Self, TypeVar

from gaf.canonical import kind_of, kind_prefix
from gaf.errors import BatchRejected, GafError, InvalidRecord, PolicyConflict, StoreError, UnknownReference
from gaf.records import RECORD_TYPES, LogEntry, Record, SchemaVersion, max_record_bytes, parse_record
from gaf.store.questions import STATEMENT_ROWS, Questions, Snapshot, all_ids, chunks, dangling, existing_ids, log_head, named_alike
from gaf.store.schema import LOG_IDS_PER_ENTRY, LOG_KEPT, SCHEMA_VERSION, GraphSchema, graph_schema, label_of
from gaf.types import format_instant, to_instant

Mode = Literal["atomic", "best_effort"]
T = TypeVar("T")

#: Records per write transaction of a bulk load (``gaf ingest``) when the caller does not say,
#: on a store that sets no bound of its own (``GafStore.bulk_batch``).
BULK_BATCH = 2000


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


@dataclass(frozen=True)
class Compacted:
    """What compacting the embedded store did (``GafStore.compact``): its file's size before and
    after, the rows and relationships copied, and how long it took."""

    path: str
    bytes_before: int
    bytes_after: int
    nodes: int
    relationships: int
    seconds: float

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "seconds": round(self.seconds, 3)}


@dataclass(frozen=True)
class PlanStep:
    """One step of the plan a store made for a query without running it (Neo4j's EXPLAIN).

    The auditor query runner reads it before the query runs, so that the store's own
    reading of a query — not only gaf's — decides whether it is a read."""

    operator: str  # e.g. "ProcedureCall", "NodeByLabelScan" (Neo4j's "@neo4j" suffix dropped)
    details: str = ""  # the step's own account of itself, e.g. "db.labels() :: (label :: STRING)"
    runtime: str = ""  # on the plan's root: the runtime it was planned for (SYSTEM for administration)
    children: tuple[PlanStep, ...] = ()

    def walk(self) -> Iterator[PlanStep]:
        """This step and every step below it."""
        yield self
        for child in self.children:
            yield from child.walk()


class GafStore(Questions):
    """The store interface: append records, read them back, run read-only Cypher.

    Open one with ``GafStore.open(target)``: a ``neo4j://`` or ``bolt://`` URI
    opens Neo4j, anything else is the directory of an embedded LadybugDB store.
    """

    # ------------------------------------------------------------------ lifecycle

    @staticmethod
    def open(target: str | None = None, *, read_only: bool = False) -> GafStore:
        """Open the store at ``target``, or at $GAF_STORE, or the ``.gaf/store.lbug`` found in the
        working directory or a parent (none found: ``StoreNotFound``), with the environment's
        settings (``Settings.from_env()``): the convenience for scripts.

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

    def compact(self) -> Compacted | None:
        """Give back the space the store's file holds beyond its records; None where there is no
        file of gaf's to compact (Neo4j: its server manages its own store files). Every record,
        id and relationship stays the same."""
        return None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ what each store supplies

    #: whether the store was opened read-only (then every write is refused)
    read_only: bool = False
    #: the embedded store's page cache (LadybugDB's buffer pool) in MiB, from GAF_CACHE_MB; None:
    #: not capped (LadybugDB's default), and always None on Neo4j, whose server sizes its own
    cache_mb: int | None = None
    #: whether opening it first completed a recovery that a killed writer left pending (only
    #: the embedded store's readers ever do: a Neo4j server recovers itself)
    recovered: bool = False

    @abc.abstractmethod
    def _write(self, work: Callable[[Tx], WriteReport]) -> WriteReport:
        """Run ``work`` in one write transaction, retrying transient failures."""

    @abc.abstractmethod
    def _read(self, work: Callable[[Tx], T]) -> T:
        """Run ``work`` in one read-only transaction."""

    def read(
        self, cypher: str, params: dict[str, Any] | None = None, *, vet: Callable[[PlanStep], None] | None = None
    ) -> list[dict[str, Any]]:
        """Run one query in a read-only transaction and return its rows as dicts.

        For the auditor query runner (queries/): gaf's own reads are the named
        questions of gaf.store.questions. A store that can plan a query without
        running it (Neo4j) first shows ``vet`` the plan, in the same transaction, and
        runs nothing if ``vet`` raises; the embedded store makes no plan to show."""
        return self._read(lambda tx: tx.run(cypher, params))

    # ------------------------------------------------------------------ writing

    def put(
        self,
        records: Iterable[Record | dict[str, Any]],
        *,
        at: datetime,
        mode: Mode = "atomic",
        lock: str | None = None,
        guard: Callable[[Questions], None] | None = None,
        links: Sequence[tuple[str, str, str]] = (),
    ) -> WriteReport:
        """Append records (and the records they imply) in one transaction.

        Ids already stored are no-ops and reported as ``existing``. In ``atomic``
        mode one bad item (malformed, or pointing at an id that is neither in the
        batch nor stored) refuses the batch with BatchRejected and writes nothing;
        in ``best_effort`` mode the bad items are reported in ``failed`` and the
        rest is written. Each node is stamped ``written_at``: the record's own time
        if it has one (a claim's recorded_at, a closure's closed_at), else ``at`` —
        passed in by the operation (always: a record without a time would be present
        in every "as of" question), so "as of" questions can be asked later.

        ``guard`` is asked inside the write transaction, before anything is written,
        with the named questions answered in it; it refuses by raising, and then nothing
        is written. ``lock`` names a stored record whose lock the transaction takes
        first, so that writers guarding the same thing (a cumulative limit under one
        action policy) take turns: each one's guard sees what the one before wrote.

        ``links`` are (source id, relationship type, target id) that stored records declare
        and the store lacks, because they were stored before the relationship existed (what
        ``gaf migrate`` adds: a proposition's ``ABOUT``), written in the same transaction,
        after the records; each end must be stored or in the batch, or nothing is written.
        """
        self._check_writable(mode)
        # Prepared without ``at``: nothing is planned ahead for one batch, so a batch holding stored
        # records does not make its CREATE statements twice.
        return self._commit(_prepare(records, mode), mode, format_instant(at), lock=lock, guard=guard, links=links)

    def put_batches(
        self, batches: Iterable[Iterable[Record | dict[str, Any]]], *, at: datetime, mode: Mode = "atomic"
    ) -> Iterator[WriteReport]:
        """``put`` each batch in turn, one transaction each, yielding each batch's report once it
        is committed — with batch *n+1* prepared in a worker thread while batch *n* is in the
        database (preparing needs nothing from the store; the driver waits without the GIL).

        The same writes and refusals as a loop of ``put``: in ``atomic`` mode a refused batch
        raises BatchRejected there, and the batches before it stay written. For bulk loads
        (``gaf.ledger.ingest`` writes through it)."""
        self._check_writable(mode)
        stamp = format_instant(at)
        source = iter(batches)
        # A batch is written without asking which of the records given are stored (``optimistic``)
        # while the batches before it were all new; once one held records already stored (a
        # file ingested again), the next asks first, as ``put`` does.
        allowed = optimistic = self.optimistic_creates()
        # Where writes are optimistic, the worker also asks which of the ids a batch implies or points
        # at are stored, in a read of its own while the batch before is written (``_Prepared.seen``).
        ask = self._stored_among if allowed else None
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="gaf-prepare") as pool:
            first = next(source, None)
            # Each batch is prepared in a copy of the caller's context (record size limits live there).
            pending = pool.submit(copy_context().run, _prepare_bulk, first, mode, stamp, ask) if first is not None else None
            before: set[str] | None = set()  # the ids the batch before stored (None: not all of them)
            while pending is not None:
                ready = pending.result()
                following = next(source, None)
                pending = pool.submit(copy_context().run, _prepare_bulk, following, mode, stamp, ask) if following is not None else None
                ready[2].add_stored_before(before)
                with _gc_paused():
                    report = self._commit(ready, mode, stamp, optimistic=optimistic)
                optimistic = allowed and not report.existing
                before = None if report.failed else set(ready[2].batch)
                self._after_bulk_batch(len(ready[2].batch))
                yield report

    def _stored_among(self, ids: Collection[str]) -> set[str]:
        """Which of these ids are stored, asked in a read transaction of its own."""
        return self._read(lambda tx: existing_ids(tx.run, ids))

    def bulk_batch(self, asked: int | None = None) -> int:
        """How many records one transaction of a bulk load holds: ``asked`` when the caller says,
        else what this store takes (``BULK_BATCH``; the embedded store's follows its page cache)."""
        return asked or BULK_BATCH

    def _after_bulk_batch(self, records: int) -> None:
        """Told after each committed batch of ``put_batches`` how many records it held (implied
        ones included): a store whose memory grows with what one opening of it wrote (the
        embedded store) lets that memory go here. Neo4j's server keeps its own."""

    def _stamp_if_new(self) -> None:
        """Stamp a store declared from nothing with the current schema version (each store's
        ``init`` calls this once its schema is declared). A store that already holds records
        and no stamp keeps version 1 until ``gaf migrate``. The stamp has no time of its own
        (``written_at`` is null, as for a record present in every "as of" question): the
        shape holds from the store's beginning."""
        if self.read_only or self.stamped_version() is not None or self.holds_records():
            return
        stamp = SchemaVersion(version=SCHEMA_VERSION)
        self._commit(_prepare([stamp], "atomic"), "atomic", None)

    def _check_writable(self, mode: str) -> None:
        if mode not in ("atomic", "best_effort"):
            raise InvalidRecord(f"unknown write mode {mode!r}", hint="use 'atomic' or 'best_effort'")
        if self.read_only:
            raise StoreError(f"the store at {self.location} is open read-only", hint="open it without read_only to write")

    def _commit(
        self,
        ready: _Ready,
        mode: Mode,
        stamp: str | None,
        *,
        lock: str | None = None,
        guard: Callable[[Questions], None] | None = None,
        links: Sequence[tuple[str, str, str]] = (),
        optimistic: bool = False,
    ) -> WriteReport:
        """Write a prepared batch in one transaction. ``optimistic``: the first attempt takes the
        records given to be new, asking only about the records they imply and the ids the batch
        points at outside it (``optimistic_creates``); if one was stored after all, the store
        refuses the second node and ``_write`` runs the transaction again, and every attempt after
        the first asks."""
        batch, failed, prepared = ready
        attempts = 0

        def work(tx: Tx) -> WriteReport:
            nonlocal attempts
            trust_new = optimistic and attempts == 0
            attempts += 1
            if lock is not None:
                self._lock(tx, lock)
            if guard is not None:
                guard(Snapshot(tx, self.dialect, self.location))
            report, new = _put_in(tx, batch, prepared, failed, mode, stamp, trust_new=trust_new)
            if links:
                _link_stored(tx, links)
            if new:
                _log(tx, new, prepared, stamp, self._take_log_turn)
            return report

        return self._write(work)

    def optimistic_creates(self) -> bool:
        """Whether a bulk write may create a batch's records without first asking which of them
        are stored: the store refuses a second node with an id it holds, and ``_write`` then runs
        the transaction again (Neo4j, its id constraints in place). Not the embedded store, whose
        writes are not retried."""
        return False

    def _lock(self, tx: Tx, record_id: str) -> None:
        """Take a stored record's write lock for the rest of the transaction (each store knows how).

        The embedded store needs none: one process writes it at a time, and its writes are
        one transaction after another."""

    def _take_log_turn(self, tx: Tx) -> None:
        """Make concurrent writers append to the write log one after another, for the rest of the
        transaction (each store knows how); the embedded store has one writer at a time."""

    def missing_constraints(self) -> list[str]:
        """The constraints gaf declares that the store lacks, by name (``gaf verify`` names them).
        The embedded store's keys are part of its tables, so it lacks none."""
        return []

    # ------------------------------------------------------------------ reading

    def _rows(self, cypher: str, params: dict[str, Any] | None = None) -> list[dict[str, Any]]:
        # Each named question (gaf.store.questions) in its own read transaction.
        return self.read(cypher, params)

    def snapshot(self, work: Callable[[Questions], T]) -> T:
        return self._read(lambda tx: work(Snapshot(tx, self.dialect, self.location)))

    def schema(self) -> GraphSchema:
        return graph_schema()


# ---------------------------------------------------------------------- the write, once for both stores


#: A batch made ready to write: its records by position, the items refused, what they imply.
_Ready = tuple[dict[int, Record], list["ItemError"], "_Prepared"]


def _prepare(records: Iterable[Record | dict[str, Any]], mode: Mode, at: str | None = None) -> _Ready:
    """Parse a batch and compute everything about it that does not depend on the store (to be
    written at ``at``); in atomic mode a malformed item refuses it here, before any transaction opens."""
    batch, failed = _parse_items(records)
    if failed and mode == "atomic":
        raise BatchRejected([f.error for f in failed])
    return batch, failed, _Prepared(list(batch.values()), at)


def _prepare_bulk(
    records: Iterable[Record | dict[str, Any]], mode: Mode, at: str, ask: Callable[[Collection[str]], set[str]] | None
) -> _Ready:
    """``_prepare`` for ``put_batches``, the cyclic garbage collector paused (``_gc_paused``); with
    ``ask``, the batch's ids outside what it was given asked about beforehand (``_Prepared.seen``)."""
    with _gc_paused():
        ready = _prepare(records, mode, at)
        if ask is not None:
            prep = ready[2]
            prep.seen = ask([*prep.implied, *prep.outside])
        return ready


_gc_lock = threading.Lock()
_gc_pauses = 0
_gc_resume = False


@contextmanager
def _gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector for the block (in every thread: it is the process's),
    resuming it when the last such block ends if it was on when the first began.

    A bulk load's batches are millions of acyclic rows, tuples and lists, freed by reference
    counting: the collector only walks them, and every record held besides. Measured at 100k
    records, that walk was a fifth of preparing the batches, and it holds the interpreter lock,
    so the thread writing the batch before waited on it too. Nothing is lost: cycles made
    meanwhile are collected once it resumes."""
    global _gc_pauses, _gc_resume
    with _gc_lock:
        if _gc_pauses == 0:
            _gc_resume = gc.isenabled()
            gc.disable()
        _gc_pauses += 1
    try:
        yield
    finally:
        with _gc_lock:
            _gc_pauses -= 1
            if _gc_pauses == 0 and _gc_resume:
                gc.enable()


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


class _Prepared:
    """Everything about a batch that does not depend on what the store holds, computed once,
    before the write transaction opens (a retried transaction does not compute it again).

    Each record's implied records, relationships and node row are built here once: for a
    claim, each of those rebuilds and hashes every proposition it states, which was most
    of a put's client time when they were recomputed at each step."""

    def __init__(self, given: list[Record], at: str | None = None):
        self.given = given
        self.batch: dict[str, Record] = {}
        #: the ids each given record implies (its propositions, for a claim)
        self.implies: dict[str, list[str]] = {}
        #: the own time of each given record that has one, in the stored form
        self.times: dict[str, str] = {}
        for record in given:
            self.batch.setdefault(record.id, record)
            implied = record.implied_all()
            self.implies.setdefault(record.id, [r.id for r in implied])
            for other in implied:
                self.batch.setdefault(other.id, other)
            own = record.time()
            if own is not None:
                self.times[record.id] = format_instant(own)
        #: the ids of the records the batch implies that it was not given
        self.implied = [rid for rid in self.batch if rid not in self.implies]
        self.edges: dict[str, list[tuple[str, str]]] = {rid: r.edges() for rid, r in self.batch.items()}
        #: ids the batch points at that it does not hold: stored, or missing
        self.outside = {t for edges in self.edges.values() for _, t in edges} - self.batch.keys()
        #: each record's node row, but for written_at (which depends on what is new)
        self.rows: dict[str, dict[str, Any]] = {rid: _node_row(r) for rid, r in self.batch.items()}
        #: the CREATE statements for when every record of the batch is new, written at ``at``
        #: (given by ``put_batches`` only: a bulk load makes them while the batch before is in the database)
        self.planned: tuple[str, _Statements] | None = None
        if at is not None:
            self.planned = (at, _create_statements(list(self.batch), self, at))
        #: the implied and outside ids a read before the write transaction found stored (``put_batches``):
        #: still stored at the write, the store being append-only, so the write need not ask about them
        #: again; None when not asked
        self.seen: set[str] | None = None

    def add_stored_before(self, ids: set[str] | None) -> None:
        """Count as seen stored the ids of the batch written just before this one, as far as this
        one implies or points at them: the worker's read may have been answered before that batch
        committed. ``ids`` None (that batch was not written whole): forget ``seen``, the write asks."""
        if self.seen is None:
            return
        if ids is None:
            self.seen = None
            return
        self.seen |= ids.intersection(self.implied) | (ids & self.outside)


def _put_in(
    tx: Tx, items: dict[int, Record], prep: _Prepared, failed: list[ItemError], mode: Mode, at: str | None, *,
    trust_new: bool = False,
) -> tuple[WriteReport, list[str]]:
    """The body of ``put``: decide inside the transaction, so the decision and the write agree.
    Returns the report and every id created (implied records included), in batch order.
    ``trust_new``: take the records given to be new, asking only about the records they imply
    (a proposition two claims state, often stored by an earlier batch) and the ids the batch
    points at outside it (``GafStore._commit``'s optimistic attempt: the store refuses a stored id)."""
    report = WriteReport(failed=list(failed))
    if trust_new and prep.seen is not None:
        # Asked beforehand (``_Prepared.seen``). An implied record stored since is refused by the
        # store as a second node (the transaction then runs again and asks); a target not seen is
        # asked about here, as another writer may have stored it since.
        stored = prep.seen
        if unseen := prep.outside - stored:
            stored = stored | _existing_ids(tx, unseen)
    else:
        # One existence question answers both "which are already stored" and "which targets resolve".
        stored = _existing_ids(tx, [*prep.implied, *prep.outside] if trust_new else [*prep.batch, *prep.outside])
    present = stored & prep.batch.keys()
    report.existing = [r.id for r in prep.given if r.id in present]
    new = [rid for rid in prep.batch if rid not in present]
    forks = _forks(tx, [prep.batch[rid] for rid in new])
    bad = _unresolved(new, prep.edges, (prep.outside - stored) | forks.keys()) | forks
    if bad:
        position = {r.id: i for i, r in reversed(items.items())}
        errors = [ItemError(position.get(rid, -1), rid, err) for rid, err in sorted(bad.items())]
        if mode == "atomic":
            raise BatchRejected([e.error for e in errors])
        report.failed += errors
        # Keep only what the surviving items bring, so a refused claim leaves no orphan propositions.
        keep: set[str] = set()
        for record in prep.given:
            if record.id not in bad and record.id not in present:
                keep.add(record.id)
                keep.update(i for i in prep.implies[record.id] if i not in present)
        new = [rid for rid in new if rid in keep]
    _create(tx, new, prep, at)
    written = set(new)
    report.written = [r.id for r in prep.given if r.id in written]
    return report, new


#: Kinds a transaction's last link lists (after the rest), beside the closures it checkpoints, so a
#: replay finds a closure's verdict in the link that checkpoints it.
_CHECKPOINTED = frozenset({"closure", "verdict", "cone"})


def _log(tx: Tx, new: list[str], prep: _Prepared, at: str | None, take_turn: Callable[[Tx], None]) -> None:
    """Append to the write log (``LogEntry``) the links listing the ids this transaction created,
    chained to the head, the last one checkpointing the closures among them — in the same
    transaction, so a record and its mention in the log are written together or not at all.

    A store without a log (written before schema version 5) starts one only with the stamp that
    brings it to version 5 (``gaf migrate``, or the stamp of a new store): the ids stored before
    are then logged first, marked ``migrated``."""
    take_turn(tx)
    head = log_head(tx.run)
    migrated: list[str] = []
    if head is None:
        if not any(isinstance(r, SchemaVersion) and r.version >= LOG_KEPT for r in (prep.batch[i] for i in new)):
            return  # an older store, until gaf migrate brings it to the version that keeps the log
        created = set(new)
        migrated = [rid for rid in all_ids(tx.run) if rid not in created]
    prev, seq = (head[0], head[1] + 1) if head else (None, 0)
    closures = sorted(rid for rid in new if kind_prefix(rid) == "closure")
    links: list[Record] = []
    # A link lists as many ids as keep it under the record size limit (ids are ~80 bytes in JSON).
    per_link = max(1, min(LOG_IDS_PER_ENTRY, (max_record_bytes() - 1024) // 100))
    groups = [(list(c), True) for c in chunks(migrated, per_link)] + [
        (list(c), False) for c in chunks(sorted(new, key=lambda rid: (kind_prefix(rid) in _CHECKPOINTED, rid)), per_link)
    ]
    for n, (ids, before) in enumerate(groups):
        written: dict[str, list[str]] = defaultdict(list)
        for rid in ids:
            written[kind_prefix(rid)].append(rid)
        last = n == len(groups) - 1
        link = LogEntry(seq=seq, prev=prev, written=dict(written), checkpoints=closures if last else [],
                        migrated=before, at=to_instant(at) if at else None)  # fmt: skip
        links.append(link)
        prev, seq = link.id, seq + 1
    ready = _Prepared(links)
    _create(tx, [r.id for r in links], ready, at)


def _inherited_times(new: list[str], prep: _Prepared) -> dict[str, str]:
    """For each implied record, the earliest own time of the new records of the batch implying it:
    a claim's propositions were known when the claim was recorded, not when it was ingested."""
    out: dict[str, str] = {}
    for rid in new:
        stamp = prep.times.get(rid)
        if stamp is None:
            continue
        for implied in prep.implies.get(rid, ()):
            if implied not in out or stamp < out[implied]:
                out[implied] = stamp
    return out


def _unresolved(new: list[str], edges: dict[str, list[tuple[str, str]]], missing: set[str]) -> dict[str, GafError]:
    """The new records whose references reach neither the batch nor the store, transitively
    (``gaf.store.questions.dangling``), each with the error that refuses it.

    ``missing`` is what the batch points at that the store does not hold. A record
    refused in best-effort mode takes down the records of the batch that point at it,
    so nothing is written with a dangling relationship.
    """
    refused = dangling({rid: edges[rid] for rid in new}, missing) if missing else {}
    return {
        rid: UnknownReference(
            f"{rel} points at {target}, which is neither in the batch nor in the store"
            + (" (it was itself refused)" if target in refused else ""),
            where=rid,
            hint="write the referenced record first, or in the same batch",
        )
        for rid, (rel, target) in refused.items()
    }


def _forks(tx: Tx, new: list[Record]) -> dict[str, GafError]:
    """The new records that would give a second record the values of a ``UNIQUE`` name (a policy's
    name@version published again with other content), stored or earlier in the batch — each with
    the error that refuses it. Asked inside the write transaction; on Neo4j a uniqueness
    constraint backs it against a writer committing between the question and the write."""
    out: dict[str, GafError] = {}
    first: dict[tuple[str, tuple[Any, ...]], str] = {}
    for record in new:
        if record.UNIQUE:
            named = first.setdefault((record.KIND, tuple(record.props()[f] for f in record.UNIQUE)), record.id)
            if named != record.id:
                out[record.id] = _fork(record, [named], "earlier in the same batch")
    by_id = {r.id: r for r in new}
    for rid, others in named_alike(tx.run, new).items():
        out.setdefault(rid, _fork(by_id[rid], others, "stored"))
    return out


def _fork(record: Record, others: list[str], where: str) -> PolicyConflict:
    name = "@".join(str(record.props()[f]) for f in record.UNIQUE)
    return PolicyConflict(f"{record.KIND} {name} is already {where} with other content ({', '.join(others)})",
                          where=record.id, hint="publish the change under the next version")  # fmt: skip


def _existing_ids(tx: Tx, ids: Iterable[str]) -> set[str]:
    return existing_ids(tx.run, ids)


#: Statements to run, each with its rows: ``tx.run(cypher, {"rows": rows})``.
_Statements = list[tuple[str, list[dict[str, Any]]]]


def _create(tx: Tx, new: list[str], prep: _Prepared, at: str | None) -> None:
    """CREATE the new nodes, then their relationships: ids are known to be new. When every
    record of the batch is new (a bulk load, nearly always) the statements planned with the
    batch are run (``_Prepared.planned``, made beside the previous batch's write)."""
    planned = prep.planned
    if planned is not None and planned[0] == at and len(new) == len(prep.batch):  # new is then the batch, in order
        statements = planned[1]
    else:
        statements = _create_statements(new, prep, at)
    for cypher, rows in statements:
        tx.run(cypher, {"rows": rows})


def _create_statements(new: list[str], prep: _Prepared, at: str | None) -> _Statements:
    """The CREATE statements of these new records of a batch: node rows by label, each stamped
    with its written_at (its own time, the earliest own time of the new records implying it, or
    ``at``), then their relationships."""
    inherited = _inherited_times(new, prep)
    by_label: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for rid in new:
        row = prep.rows[rid]
        if row["written_at"] is None:
            row = {**row, "written_at": inherited.get(rid, at)}
        by_label[prep.batch[rid].LABEL].append(row)
    out: _Statements = [(_CREATE[label], list(chunk)) for label, rows in sorted(by_label.items()) for chunk in chunks(rows, STATEMENT_ROWS)]
    return out + _link_statements((rid, rel, target) for rid in new for rel, target in prep.edges[rid])


def _write_links(tx: Tx, links: Iterable[tuple[str, str, str]]) -> None:
    """CREATE relationships (source id, type, target id) between stored nodes."""
    for cypher, rows in _link_statements(links):
        tx.run(cypher, {"rows": rows})


def _link_statements(links: Iterable[tuple[str, str, str]]) -> _Statements:
    """Statements creating relationships (source id, type, target id), grouped by type and the two
    ends' labels, one per group and chunk. The ids were checked when their records were parsed
    (``Ref``) or by the caller (``_link_stored``): the kind is read without the check, which on a
    large ingest cost a regex per end of every relationship."""
    groups: dict[tuple[str, str, str], list[dict[str, Any]]] = defaultdict(list)
    for source, rel, target in links:
        groups[(rel, _LABEL[kind_prefix(source)], _LABEL[kind_prefix(target)])].append({"s": source, "d": target})
    return [(_link(rel, src, dst), list(chunk)) for (rel, src, dst), pairs in sorted(groups.items()) for chunk in chunks(pairs, STATEMENT_ROWS)]


def _link_stored(tx: Tx, links: Sequence[tuple[str, str, str]]) -> None:
    """CREATE relationships between stored records (``put``'s ``links``): each a relationship the
    schema declares between the two ends' labels, and both ends stored, else nothing is written."""
    declared = graph_schema().rels
    for source, rel, target in links:
        ends = (label_of(kind_of(source)), label_of(kind_of(target)))
        if ends not in declared.get(rel, []):
            raise InvalidRecord(f"no relationship {rel} from {ends[0]} to {ends[1]} is declared", where=source)
    ends_of = {i for source, _, target in links for i in (source, target)}
    if missing := sorted(ends_of - existing_ids(tx.run, ends_of)):
        raise UnknownReference(f"{missing[0]} is not stored: a relationship cannot be added to it", where=missing[0],
                               hint="write the record first")  # fmt: skip
    _write_links(tx, links)


def _node_row(record: Record) -> dict[str, Any]:
    """A record's node: its id, kind, body and copied properties; written_at is its own time,
    or None for ``_create`` to fill in."""
    own = record.time()
    written = format_instant(own) if own is not None else None
    body = record.stored_body.decode("utf-8")  # member lists are the relationships written beside it
    return {"id": record.id, "kind": record.KIND, "body": body, "written_at": written, **record.props()}


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
#: Each kind's label (``label_of`` as a dict lookup, for the write path's every relationship end).
_LABEL = {kind: cls.LABEL for kind, cls in RECORD_TYPES.items()}
