# PROTOTYPE, PARTLY APPLIED. P1-P3 below are in gaf/store/base.py `put` since the commit that wrote this
# line (`_Prepared`: each record's implied records, relationships and node row computed once, before
# the transaction; one existence query for the batch and what it points at), keeping gaf's
# `_inherited_times`. What is left here and not in gaf/:
#   P4. Pipeline: batch n+1 prepared in a worker thread while batch n is written. Measured slower
#       than proto (0.96x on Neo4j, 0.80x on LadybugDB at 20k, bench/results/ingest-*.json), so not
#       applied; kept for `python -m bench ingest --variants ...,pipe`.
# `put` below is the pre-application copy the `proto` variant measures (it stamps implied records
# with `at`, not with the claim's own time, so it is not a drop-in).
"""A prototype of a cheaper ``GafStore.put``, to measure proposed changes to gaf/store/base.py.

This is a copy of ``put`` / ``_put_in`` (atomic and best-effort alike) with three
changes, none of which alters what is written or what is refused:

1. **Each record's edges and implied records are computed once per put.** In
   gaf/store/base.py ``record.edges()`` runs three times per record (the target
   set and the loop of ``_unresolved_refs``, and ``_create``) and
   ``record.implied()`` once more in ``_expand``; for a claim, each of those
   rebuilds and re-hashes every proposition it states (a pydantic model with
   canonical JSON and sha256), which is most of the client's time.
2. **Rows are built before the transaction opens.** Node rows and relationship
   rows for the whole expanded batch are prepared outside the managed write
   transaction, so a retried transaction does not prepare them again and the
   transaction is open only while the database works.
3. **One existence check instead of two.** The ids of the batch and the ids it
   points at outside the batch are known before the transaction, so one
   ``UNWIND $ids MATCH`` per label answers both "which are already stored" and
   "which targets resolve".

Nothing here is imported by gaf; ``python -m bench ingest --variants raw,gaf,proto``
measures it beside the real ``put``.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from datetime import datetime
from typing import Any

from gaf.canonical import kind_of
from gaf.errors import BatchRejected, GafError, InvalidRecord, UnknownReference
from gaf.records import Record
from gaf.store.base import (
    _CREATE,
    GafStore,
    ItemError,
    Mode,
    Tx,
    WriteReport,
    _existing_ids,
    _link,
    _node_row,
    _parse_items,
)
from gaf.store.questions import STATEMENT_ROWS, chunks
from gaf.store.schema import label_of
from gaf.types import format_instant


def put(
    store: GafStore, records: Iterable[Record | dict[str, Any]], *, mode: Mode = "atomic", at: datetime | None = None
) -> WriteReport:
    if mode not in ("atomic", "best_effort"):
        raise InvalidRecord(f"unknown write mode {mode!r}", hint="use 'atomic' or 'best_effort'")
    items, failed = _parse_items(records)
    if failed and mode == "atomic":
        raise BatchRejected([f.error for f in failed])
    prepared = _Prepared(list(items.values()), format_instant(at) if at is not None else None)
    return store._write(lambda tx: _put_in(tx, items, prepared, failed, mode))


class _Prepared:
    """Everything about a batch that does not depend on what the store holds."""

    def __init__(self, given: list[Record], at: str | None = None):
        self.given = given
        self.batch: dict[str, Record] = {}
        #: implied ids of each given record, for best-effort rebuilds
        self.implies: dict[str, list[str]] = {}
        for record in given:
            self.batch.setdefault(record.id, record)
            implied = record.implied()
            self.implies.setdefault(record.id, [r.id for r in implied])
            for other in implied:
                self.batch.setdefault(other.id, other)
        self.edges: dict[str, list[tuple[str, str]]] = {rid: r.edges() for rid, r in self.batch.items()}
        self.outside = {t for edges in self.edges.values() for _, t in edges} - self.batch.keys()
        self.rows: dict[str, dict[str, Any]] = {rid: _node_row(r, at) for rid, r in self.batch.items()}


def _put_in(tx: Tx, items: dict[int, Record], prep: _Prepared, failed: list[ItemError], mode: Mode) -> WriteReport:
    report = WriteReport(failed=list(failed))
    stored = _existing_ids(tx, [*prep.batch, *prep.outside])
    present = stored & prep.batch.keys()
    report.existing = [r.id for r in prep.given if r.id in present]
    new = [rid for rid in prep.batch if rid not in present]
    missing = prep.outside - stored
    bad = _unresolved(new, prep.edges, missing) if missing else {}
    if bad:
        position = {r.id: i for i, r in reversed(items.items())}
        errors = [ItemError(position.get(rid, -1), rid, err) for rid, err in sorted(bad.items())]
        if mode == "atomic":
            raise BatchRejected([e.error for e in errors])
        report.failed += errors
        # Keep only what the surviving given records bring, so a refused claim leaves no orphans.
        keep: set[str] = set()
        for record in prep.given:
            if record.id not in bad and record.id not in present:
                keep.add(record.id)
                keep.update(i for i in prep.implies[record.id] if i not in present)
        new = [rid for rid in new if rid in keep]
    _create(tx, new, prep)
    written = set(new)
    report.written = [r.id for r in prep.given if r.id in written]
    return report


def _unresolved(new: list[str], edges: dict[str, list[tuple[str, str]]], missing: set[str]) -> dict[str, GafError]:
    bad: dict[str, GafError] = {}
    changed = True
    while changed:
        changed = False
        for rid in new:
            if rid in bad:
                continue
            for rel, target in edges[rid]:
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


def _create(tx: Tx, new: list[str], prep: _Prepared) -> None:
    by_label: dict[str, list[dict[str, Any]]] = defaultdict(list)
    links: dict[tuple[str, str, str], list[dict[str, str]]] = defaultdict(list)
    for rid in new:
        label = prep.batch[rid].LABEL
        by_label[label].append(prep.rows[rid])
        for rel, target in prep.edges[rid]:
            links[(rel, label, label_of(kind_of(target)))].append({"s": rid, "d": target})
    for label, rows in sorted(by_label.items()):
        for chunk in chunks(rows, STATEMENT_ROWS):
            tx.run(_CREATE[label], {"rows": list(chunk)})
    for (rel, src, dst), rows in sorted(links.items()):
        for chunk in chunks(rows, STATEMENT_ROWS):
            tx.run(_link(rel, src, dst), {"rows": list(chunk)})


class Pipeline:
    """``put`` for a stream of batches that prepares batch n+1 while batch n is written.

    The preparation (expanding implied records, edges, node rows) is pure Python
    and needs nothing from the store, so a worker thread can do it while the main
    thread waits on the database (the driver releases the GIL while it waits).
    Call it once per batch, in order, giving the whole batch list up front.
    """

    def __init__(self, store: GafStore, batches: list[list[Record]]):
        from concurrent.futures import ThreadPoolExecutor

        self.store = store
        self.batches = batches
        self.pool = ThreadPoolExecutor(max_workers=1)
        self.next = 0
        self.pending = self.pool.submit(_Prepared, list(batches[0])) if batches else None

    def put(self, batch: list[Record]) -> WriteReport:
        assert batch is self.batches[self.next], "Pipeline.put must get the batches in order"
        prepared = self.pending.result()
        self.next += 1
        self.pending = self.pool.submit(_Prepared, list(self.batches[self.next])) if self.next < len(self.batches) else None
        items = dict(enumerate(prepared.given))
        return self.store._write(lambda tx: _put_in(tx, items, prepared, [], "atomic"))

    def close(self) -> None:
        self.pool.shutdown()
