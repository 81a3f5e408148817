"""Opening a store: an explicit target and settings in, a store out; nothing read behind the caller's back."""

from __future__ import annotations

from gaf.errors import StoreUnavailable
from gaf.settings import DEFAULT_STORE, Settings
from gaf.store.base import GafStore

__all__ = ["DEFAULT_STORE", "NEO4J_SCHEMES", "open_store", "store_target"]

NEO4J_SCHEMES = ("neo4j://", "neo4j+s://", "neo4j+ssc://", "bolt://", "bolt+s://", "bolt+ssc://")


def store_target(target: str | None = None, settings: Settings | None = None) -> str:
    """The store location that ``open_store`` would use: the target, else the settings' store."""
    return target or (settings or Settings()).store


def open_store(
    target: str | None = None,
    *,
    auth: tuple[str, str] | None = None,
    database: str | None = None,
    read_only: bool = False,
    settings: Settings | None = None,
) -> GafStore:
    """Open Neo4j for a Bolt URI, else the embedded LadybugDB store at a path.

    ``target`` defaults to ``settings.store``; ``auth`` (user, password) and ``database``
    default to the settings' Neo4j ones. ``settings`` defaults to ``Settings()``: the
    defaults, not the environment (``Settings.from_env()`` reads that). ``read_only``
    holds on both stores: a read-only store refuses every write.
    """
    settings = settings or Settings()
    where = store_target(target, settings)
    if where.startswith(NEO4J_SCHEMES):
        from gaf.store.neo4j import Neo4jStore

        user, password = auth or (settings.neo4j_user, settings.neo4j_password)
        return Neo4jStore(where, user=user, password=password, database=database or settings.neo4j_database,
                          read_only=read_only, retry_seconds=settings.neo4j_retry_seconds)  # fmt: skip
    if "://" in where:
        raise StoreUnavailable(
            f"unsupported store URI {where!r}",
            hint="use neo4j://, neo4j+s://, bolt:// or bolt+s:// for Neo4j, or a path for the embedded store",
        )
    from gaf.store.ladybug import LadybugStore

    return LadybugStore(where, read_only=read_only, wait=settings.lock_wait, cache_mb=settings.cache_mb)
