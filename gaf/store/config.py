"""Opening a store: an explicit target and settings in, a store out; nothing read behind the caller's back.

A store is named (a target, ``--store``; else the settings' store, ``$GAF_STORE``) or, when
the settings name none, found as git finds a repository: ``.gaf/store.lbug`` in the working
directory or the nearest parent, looking no higher than the home directory. Without either,
nothing is opened: a write would make a second store where nobody looks for it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from gaf.errors import StoreNotFound
from gaf.settings import DEFAULT_STORE, NEO4J_SCHEMES, Settings, store_name
from gaf.store.base import GafStore

__all__ = ["DEFAULT_STORE", "NEO4J_SCHEMES", "Initialised", "find_store", "init_store", "open_store", "shown", "store_target"]


def find_store(start: Path, home: Path | None = None) -> Path | None:
    """The ``.gaf/store.lbug`` in ``start`` or its nearest parent that has one, or None.

    The search stops at ``home`` (which is looked in, nothing above it) when ``start`` is
    inside it, else at the filesystem root, so a store in another user's or the system's
    directories is never picked up from below."""
    start = start.resolve()
    stop = home.resolve() if home is not None else None
    for directory in (start, *start.parents):
        candidate = directory / DEFAULT_STORE
        if candidate.exists():
            return candidate
        if directory == stop:
            return None
    return None


def store_target(target: str | None = None, settings: Settings | None = None, *, cwd: Path | None = None) -> str:
    """The store location that ``open_store`` would use: the target, else the settings' store,
    else the one ``find_store`` finds from ``cwd`` (the working directory) up to the settings'
    home. A name that looks like a mistyped URI is refused (``gaf.settings.store_name``);
    finding none is refused with ``StoreNotFound``."""
    settings = settings or Settings()
    if target:
        return store_name(target, "--store")
    if settings.store:
        return store_name(settings.store, "GAF_STORE")
    start = cwd or Path.cwd()
    home = Path(settings.home) if settings.home else None
    found = find_store(start, home)
    if found is None:
        above = f" up to {home}" if home is not None and start.resolve().is_relative_to(home.resolve()) else ""
        raise StoreNotFound(
            f"no gaf store here or in any parent directory ({DEFAULT_STORE} in {start}{above})",
            hint="run `gaf init` to create one here, or name one with --store or GAF_STORE (a path, or neo4j://host:7687)",
        )
    return str(found)


def open_store(
    target: str | None = None,
    *,
    auth: tuple[str, str] | None = None,
    database: str | None = None,
    read_only: bool = False,
    settings: Settings | None = None,
) -> GafStore:
    """Open Neo4j for a Bolt URI, else the embedded LadybugDB store at a path.

    ``target`` defaults to ``settings.store``, and that (when None) to the store
    ``find_store`` finds; ``auth`` (user, password) and ``database`` default to the
    settings' Neo4j ones. ``settings`` defaults to ``Settings()``: the defaults, not the
    environment (``Settings.from_env()`` reads that). ``read_only`` holds on both stores:
    a read-only store refuses every write.
    """
    settings = settings or Settings()
    where = store_target(target, settings)
    if where.startswith(NEO4J_SCHEMES):
        from gaf.store.neo4j import Neo4jStore

        user, password = auth or (settings.neo4j_user, settings.neo4j_password)
        return Neo4jStore(where, user=user, password=password, database=database or settings.neo4j_database,
                          read_only=read_only, retry_seconds=settings.neo4j_retry_seconds)  # fmt: skip
    from gaf.store.ladybug import LadybugStore

    return LadybugStore(where, read_only=read_only, wait=settings.lock_wait, cache_mb=settings.cache_mb)


@dataclass(frozen=True)
class Initialised:
    """What ``init_store`` did: where the store is (as ``shown``), and whether it was made now."""

    location: str
    dialect: str
    created: bool

    def to_dict(self) -> dict[str, str | bool]:
        return {"store": self.location, "dialect": self.dialect, "initialised": True, "created": self.created}


def init_store(target: str | None = None, *, settings: Settings | None = None, cwd: Path | None = None) -> Initialised:
    """Create a store on purpose, or declare the schema of one that exists (a no-op when it is
    already declared): at the target, else the settings' store, else ``.gaf/store.lbug`` in
    ``cwd`` (the working directory) — never a store found in a parent, since making one here
    is what was asked."""
    settings = settings or Settings()
    named = store_target(target, settings) if target or settings.store else str((cwd or Path.cwd()) / DEFAULT_STORE)
    embedded = not named.startswith(NEO4J_SCHEMES)
    was_there = embedded and Path(named).exists()
    with open_store(named, settings=settings) as store:
        # an embedded store declares its schema as it opens; a Neo4j one was there if it is stamped or holds records
        created = not was_there if embedded else store.stamped_version() is None and not store.holds_records()
        store.init()
        return Initialised(shown(store), store.dialect, created)


def shown(store: GafStore) -> str:
    """Where a store is, as people are told: an embedded store's absolute path, a Neo4j URI
    without any password written into it."""
    if not store.location.startswith(NEO4J_SCHEMES):
        return os.path.abspath(store.location)  # made absolute and normalised, symlinks kept as named
    return store.location  # a Neo4j store's location is its URI with any password masked
