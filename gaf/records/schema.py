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
from gaf.types import Instant, Text


class SchemaVersion(Record):
    """The store follows schema ``version``; ``migrated_from`` and ``backfilled`` say how it
    got there (absent for a store stamped when it was created). Identity is the version
    alone, so stamping a version twice, or two processes stamping one store, is one record."""

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
