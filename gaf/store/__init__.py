"""Stores: one append-only interface, Neo4j and the embedded LadybugDB behind it.

``gaf.store.open(target, *, auth, database, read_only, settings)`` opens one explicitly;
``GafStore.open(target)`` is the same with the environment's settings. Without a target
or $GAF_STORE, the store is the ``.gaf/store.lbug`` found in the working directory or a
parent (``find_store``); ``init_store`` makes one on purpose.
"""

from gaf.settings import DEFAULT_STORE, Settings
from gaf.store.base import GafStore, ItemError, WriteReport
from gaf.store.config import Initialised, find_store, init_store, open_store, shown, store_target
from gaf.store.questions import Questions, Reach, Snapshot

#: ``gaf.store.open(...)``: the explicit way to open a store (``open_store``).
open = open_store  # noqa: A001  (gaf.store.open, as the store interface names it)

__all__ = [
    "DEFAULT_STORE", "GafStore", "Initialised", "ItemError", "Questions", "Reach", "Settings", "Snapshot", "WriteReport",
    "find_store", "init_store", "open", "open_store", "shown", "store_target",
]  # fmt: skip
