"""Where the store is: an explicit target, $GAF_STORE, or the embedded default."""

from __future__ import annotations

import os

from gaf.errors import StoreUnavailable
from gaf.store.base import GafStore

#: The embedded store a new user gets without configuring anything.
DEFAULT_STORE = ".gaf/store.lbug"

NEO4J_SCHEMES = ("neo4j://", "neo4j+s://", "neo4j+ssc://", "bolt://", "bolt+s://", "bolt+ssc://")


def store_target(target: str | None = None) -> str:
    """The store location that ``open_store`` would use."""
    return target or os.environ.get("GAF_STORE") or DEFAULT_STORE


def open_store(target: str | None = None, *, read_only: bool = False) -> GafStore:
    """Open Neo4j for a Bolt URI, else the embedded LadybugDB store at a path."""
    where = store_target(target)
    if where.startswith(NEO4J_SCHEMES):
        from gaf.store.neo4j import Neo4jStore

        return Neo4jStore(where)
    if "://" in where:
        raise StoreUnavailable(
            f"unsupported store URI {where!r}",
            hint="use neo4j://, neo4j+s://, bolt:// or bolt+s:// for Neo4j, or a path for the embedded store",
        )
    from gaf.store.ladybug import LadybugStore

    return LadybugStore(where, read_only=read_only)
