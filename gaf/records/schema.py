"""Records about the store itself: which version of gaf's stored shape its records follow.

A store's schema version is the highest ``SchemaVersion`` it holds. A store declared
from nothing is stamped with the current version when its schema is declared; a store
that already holds records and no stamp was written before versions were recorded
(version 1). ``gaf migrate`` brings an older store to the current version and records
what it did as a new stamp (gaf/migrate.py); nothing already stored is changed.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import NonNegativeInt, PositiveInt

from gaf.records.base import Record
from gaf.types import Instant, Ref, Text


class SchemaVersion(Record):
    """The store follows schema ``version``; ``migrated_from`` and ``backfilled`` say how it
    got there (absent for a store stamped when it was created). Identity is the version
    alone, so stamping a version twice, or two processes stamping one store, is one record."""

    FEW = True

    kind: Literal["schema_version"] = "schema_version"
    LABEL: ClassVar[str] = "SchemaVersion"
    TIME_FIELD: ClassVar = "at"
    NON_IDENTITY: ClassVar = frozenset({"at", "migrated_from", "backfilled", "note"})
    ABOUT_THE_STORE: ClassVar = True

    version: PositiveInt
    migrated_from: PositiveInt | None = None
    #: records the migration wrote for records made before, by kind
    backfilled: dict[str, NonNegativeInt] = {}
    note: Text = ""
    at: Instant | None = None


class LogEntry(Record):
    """One link of the store's write log: the ids one write transaction created, chained to the
    link before it by its id (a hash of this body, ``prev`` included), so a record deleted,
    inserted or replaced behind gaf's back shows as a difference between the log and the store
    that ``gaf verify`` names, and rewriting the log means re-hashing every link after the change.

    ``seq`` numbers the links from 0 with no gap; no two links share one (``UNIQUE``: on Neo4j a
    constraint, so concurrent writers take turns). A transaction that writes more ids than
    ``LOG_IDS_PER_ENTRY`` writes several links. ``written`` holds the ids by kind, sorted.
    ``checkpoints`` are the closures the transaction closed: the link is the log's head at each,
    linked to it (``CHECKPOINTS``), so a closure names the state of the store it was made in.
    ``migrated`` marks the links ``gaf migrate`` wrote for the records stored before the log was
    kept (schema version 5): what they list was there when the log began, not seen being written."""

    kind: Literal["log_entry"] = "log_entry"
    LABEL: ClassVar[str] = "LogEntry"
    TIME_FIELD: ClassVar = "at"
    ABOUT_THE_STORE: ClassVar = True
    REFS: ClassVar = {"prev": ("FOLLOWS", ("log_entry",)), "checkpoints": ("CHECKPOINTS", ("closure",))}
    UNIQUE: ClassVar = ("seq",)

    seq: NonNegativeInt
    prev: Ref | None = None
    written: dict[str, list[Ref]] = {}
    checkpoints: list[Ref] = []
    migrated: bool = False
    at: Instant | None = None

    def ids(self) -> list[str]:
        """Every id the link lists, whatever its kind."""
        return [rid for kind in sorted(self.written) for rid in self.written[kind]]
