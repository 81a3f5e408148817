"""The graph shape of the records, derived from their declarations.

Both stores build their schema from here: node labels and property columns from
each record class, relationship types (with the labels they join) from each
class's references. Nothing here names a record kind by hand, so a new record
kind needs no change to either store.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gaf.records import RECORD_TYPES, Record

#: The version of the stored shape this gaf writes, and what each version added. A store's
#: version is its highest ``SchemaVersion`` record (gaf/records/schema.py); ``gaf migrate``
#: brings an older store here (gaf/migrate.py), keeping every id.
#:
#: 1. the records of the chain, as written before versions were recorded;
#: 2. a ``Cone`` for every closure (what it reads, keyed by ``ConeKey``), which impact's
#:    reach looks up instead of reading every policy;
#: 3. units and actions that follow the facts: the columns ``Proposition.unit``,
#:    ``Action.unit``, ``Action.tops_up`` and ``Grant.unit`` (and the ``TOPS_UP``
#:    relationship). Nothing to backfill: records made before have none; the embedded
#:    store adds the columns when it is opened for writing (``gaf migrate`` does);
#: 4. member lists held by relationships only: a GAF's facts, derivations, unresolved and
#:    rejected propositions, a decision's accepted facts and a closure's exclusions
#:    (``Record.MEMBERS``) are left out of the node's body and read back from the
#:    relationships that were always written beside it, so a node stays under the record
#:    size limit however large the GAF. Ids hash the whole record as before. Nothing to
#:    rewrite: a body that still holds its lists (written before) is read as it is.
#: 5. the write log: every write transaction appends ``LogEntry`` links listing the ids it
#:    created, hash-chained (gaf/records/schema.py), so ``gaf verify`` names a record deleted,
#:    inserted or replaced out of band. ``gaf migrate`` logs the records already stored as
#:    the log's first links (marked ``migrated``); a store at version 4 keeps no log until then.
#: 6. run invalidations: the ``RunInvalidation`` label (a pipeline run declared wrong, voiding
#:    the claims made from it and from what read its outputs) with its ``VOIDS`` and
#:    ``EVIDENCED_BY`` relationships, and a reopen it triggers. Nothing to backfill; projection
#:    reads voided claims only from a store at this version (``gaf migrate`` brings one here).
#: 7. subject keys: a ``SubjectKey`` node for every subject a proposition is about, joined to
#:    each such proposition by ``ABOUT``, so the propositions about a subject are found from a
#:    primary key (the embedded store has no other index: projection's cone read every
#:    proposition). ``gaf migrate`` writes the keys of the subjects stored before and links each
#:    proposition to its key; until then projection reads a cone as before, by the subject column.
SCHEMA_VERSION = 7
#: The first version in which every closure has its cone recorded.
CONES_RECORDED = 2
#: The first version whose stored shape has units and top-ups.
UNITS_RECORDED = 3
#: The first version whose nodes may leave their member lists to their relationships.
MEMBERS_HELD = 4
#: The first version whose writes are logged.
LOG_KEPT = 5
#: The first version that can hold run invalidations.
RUNS_VOIDABLE = 6
#: The first version in which every proposition is linked to its subject's key.
SUBJECTS_KEYED = 7
#: The most ids one link of the write log lists (a transaction that writes more writes several):
#: a link stays well under the record size limit.
LOG_IDS_PER_ENTRY = 1000

#: Node properties that Cypher filters on often enough to deserve an index.
INDEXED: dict[str, tuple[str, ...]] = {
    "Claim": ("source", "recorded_at", "observed_at"),
    "Proposition": ("subject", "predicate"),
    "SubjectKey": ("subject",),
    "Completeness": ("source", "predicate"),
    "Projection": ("name",),
    "VerdictRules": ("name",),
    "Closure": ("subject", "closed_at"),
    "ConeKey": ("pattern", "predicate"),
    "Action": ("idempotency_key", "verdict"),
    "Grant": ("agent",),
    "Source": ("key",),
    "Agent": ("key",),
    "RatifiedPolicy": ("name",),
}


#: Labels whose records are named by some of their properties (``Record.UNIQUE``: a policy's
#: name and version), which no two nodes of the label may share.
UNIQUE_BY_LABEL: dict[str, tuple[str, ...]] = {cls.LABEL: cls.UNIQUE for cls in RECORD_TYPES.values() if cls.UNIQUE}


@dataclass(frozen=True)
class GraphSchema:
    """Labels with their columns, and relationship types with their (from, to) label pairs."""

    nodes: dict[str, dict[str, str]]
    rels: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    #: labels of the kinds a store holds few of (``Record.FEW``): no key index on the embedded store
    few: frozenset[str] = frozenset()


def label_of(kind: str) -> str:
    return RECORD_TYPES[kind].LABEL


def graph_schema() -> GraphSchema:
    """The schema both stores declare, built from the record classes."""
    nodes = {cls.LABEL: dict(cls.COLUMNS) for cls in RECORD_TYPES.values()}
    pairs: dict[str, set[tuple[str, str]]] = {}
    for cls in RECORD_TYPES.values():
        for rel, kinds in _declared_rels(cls):
            for kind in kinds:
                pairs.setdefault(rel, set()).add((cls.LABEL, label_of(kind)))
    few = frozenset(cls.LABEL for cls in RECORD_TYPES.values() if cls.FEW)
    return GraphSchema(nodes=nodes, rels={rel: sorted(p) for rel, p in sorted(pairs.items())}, few=few)


def _declared_rels(cls: type[Record]) -> list[tuple[str, tuple[str, ...]]]:
    return [*cls.REFS.values(), *cls.IMPLIED_RELS.items()]
