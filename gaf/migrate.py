"""Bringing a store written by an older gaf to the current stored shape: ``gaf migrate``.

A migration only ever adds records and relationships. It writes what the current shape has
and the old one lacked, for the records already there — from version 1 to 2, the ``Cone`` of
every closure made before cones were recorded, computed from the closure's own policy and
rules exactly as ``close`` computes it; to 7, the ``SubjectKey`` of every subject and the
``ABOUT`` relationship from each proposition to it — and a ``SchemaVersion`` stamp saying
what it did, all in one transaction: a migration that fails leaves the store as it was. No id
changes and nothing is rewritten, so ``gaf verify`` and every replay answer as before.
Running it again finds nothing to do and writes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from gaf.errors import StoreError, UnknownReference
from gaf.projection.cone import cones_for
from gaf.records import Closure, Cone, Record, SchemaVersion, SubjectKey
from gaf.store import GafStore
from gaf.store.schema import CONES_RECORDED, LOG_KEPT, MEMBERS_HELD, RUNS_VOIDABLE, SCHEMA_VERSION, SUBJECTS_KEYED, UNITS_RECORDED


@dataclass
class Migrated:
    """What a migration did: the version before and after, and the records it wrote by kind."""

    before: int
    after: int
    backfilled: dict[str, int] = field(default_factory=dict)
    stamp: str | None = None

    @property
    def changed(self) -> bool:
        return self.before != self.after or any(self.backfilled.values())

    def summary(self) -> str:
        if not self.changed:
            return f"the store is at schema version {self.after}, the current one: nothing to migrate"
        wrote = ", ".join(f"{n} {kind}" for kind, n in sorted(self.backfilled.items()) if n) or "no records"
        if self.before == self.after:
            return f"the store is at schema version {self.after}; wrote {wrote} for records stored without them"
        return f"migrated the store from schema version {self.before} to {self.after}: wrote {wrote} for records made before"

    def to_dict(self) -> dict[str, Any]:
        return {"before": self.before, "after": self.after, "changed": self.changed,
                "backfilled": dict(sorted(self.backfilled.items())), "stamp": self.stamp}  # fmt: skip


def migrate(store: GafStore, *, at: datetime, dry_run: bool = False) -> Migrated:
    """Bring the store to the current schema version (``SCHEMA_VERSION``), in one transaction.

    A store already at the current version is left alone. A store stamped with a later
    version than this gaf knows is refused: it was written by a newer gaf."""
    before = store.schema_version()
    if before > SCHEMA_VERSION:
        raise StoreError(
            f"the store at {store.location} is at schema version {before}; this gaf knows versions up to {SCHEMA_VERSION}",
            hint="it was written by a newer gaf: upgrade gaf to read and migrate it",
        )
    # Closures put without their cone into a store already at this version are repaired too, and
    # so are propositions without their subject's key.
    cones = _cones_for_closures_without_one(store)
    unkeyed = store.unkeyed_propositions()
    if before == SCHEMA_VERSION and not cones and not unkeyed:
        return Migrated(before, before)
    keys = {subject: SubjectKey(subject=subject) for subject in sorted({subject for _, subject in unkeyed})}
    stored = store.exists(k.id for k in keys.values())
    new_keys = [k for k in keys.values() if k.id not in stored]
    backfilled = {kind: n for kind, n in (("cone", len(cones)), ("subject_key", len(new_keys))) if n}
    records: list[Record] = [*cones, *new_keys]
    links = [(pid, "ABOUT", keys[subject].id) for pid, subject in unkeyed]
    stamp = None
    if before < SCHEMA_VERSION:
        made = SchemaVersion(version=SCHEMA_VERSION, migrated_from=before, backfilled=backfilled, at=at,
                             note=_what_changed(before, len(cones)))  # fmt: skip
        records.append(made)
        stamp = made.id
    if not dry_run:
        store.put(records, at=at, links=links)
    return Migrated(before, SCHEMA_VERSION, backfilled, stamp)


def _what_changed(before: int, cones: int) -> str:
    """The migration's note: what it did for each version it crossed."""
    done = []
    if before < CONES_RECORDED or cones:
        done.append("cones recorded for closures made before cones were recorded")
    if before < UNITS_RECORDED:
        done.append("columns for units and top-ups declared (nothing to backfill)")
    if before < MEMBERS_HELD:
        done.append("member lists of GAFs, decisions and closures read from their relationships (nothing to rewrite)")
    if before < LOG_KEPT:
        done.append("the write log begun: the records stored before are its first links, marked migrated")
    if before < RUNS_VOIDABLE:
        done.append("run invalidations declared (nothing to backfill)")
    if before < SUBJECTS_KEYED:
        done.append("subject keys written for the subjects of the propositions stored before, each proposition linked to its key")
    return "; ".join(done)


def _cones_for_closures_without_one(store: GafStore) -> list[Cone]:
    """The cone ``close`` would have recorded, for each closure that has none, by closure id."""
    closures = store.get_many(store.closures_without_cone(), Closure)
    cones = cones_for(closures.values(), store.get_many)
    if missing := sorted(closures.keys() - cones.keys()):
        raise UnknownReference(f"closure {missing[0]} points at a policy or rules not in {store.location}",
                               hint="gaf verify names what is missing")  # fmt: skip
    return [cones[k] for k in sorted(cones)]
