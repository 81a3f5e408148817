"""Stores: one append-only interface, Neo4j and the embedded LadybugDB behind it."""

from gaf.store.base import GafStore, ItemError, WriteReport
from gaf.store.questions import Questions, Reach, Snapshot
from gaf.store.config import DEFAULT_STORE, open_store, store_target

__all__ = ["DEFAULT_STORE", "GafStore", "ItemError", "WriteReport", "Questions", "Reach", "Snapshot", "open_store", "store_target"]
