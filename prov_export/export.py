"""PROV exports: one closure's whole lineage, one subject, or the whole store.

Compliance tools consume W3C PROV; gaf's exports must load in other PROV tools,
carry a decision's lineage down to its claims and sources, and identify each
closure by the hash that was decided. Turtle, JSON-LD and N-Triples come from
rdflib (N-Triples and JSON-LD then sorted, so their bytes do not change from run to
run); PROV-N, PROV-JSON and PROV-XML are ``prov_export.document``'s reading of the very
same triples — there is no second mapping. The whole-store export streams N-Triples
record by record, so memory stays flat as the store grows.

Each export can also carry a canonical hash of the RDF itself: sha256 over the
RDFC-1.0 canonical N-Quads, computed by pyoxigraph.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from rdflib import Graph

from gaf.canonical import kind_of
from gaf.errors import ExportError, UnknownReference
from gaf.records import RECORD_TYPES, Closure, Record
from gaf.store.base import GafStore
from prov_export import document
from prov_export.mapping import DEFAULT_BASE, GAF, ID_PREFIX, PROV, Mapper

RDF_FORMATS = {"ttl": "turtle", "jsonld": "json-ld", "nt": "nt"}
PROV_FORMATS = {"provn": document.provn, "provjson": document.provjson, "provxml": document.provxml}
FORMATS = (*RDF_FORMATS, *PROV_FORMATS)
CANONICAL_HASH = "sha256 of RDFC-1.0 canonical N-Quads (pyoxigraph)"


def check_format(fmt: str) -> None:
    """Refuse a format this module cannot write, before anything is read or built: the one
    check, which ``export``, ``serialise`` and the CLI rely on."""
    if fmt not in FORMATS:
        raise ExportError(f"unknown format {fmt!r}", hint=f"one of: {', '.join(FORMATS)}")


# ---------------------------------------------------------------------- scopes


def lineage(store: GafStore, closure_id: str) -> list[Record]:
    """A closure's whole lineage: what it rests on down to claims and sources, and what executed it."""
    if not isinstance(store.get(closure_id), Closure):
        raise UnknownReference(f"no closure {closure_id} in {store.location}", hint="gaf history SUBJECT lists closures")
    verdicts = store.verdicts_deciding(closure_id)
    actions = store.actions_executing(verdicts)
    statuses = sorted(status.id for _, _, status in store.action_statuses(actions))
    found: set[str] = set()
    todo = [closure_id, *verdicts, *actions, *statuses]
    while todo:
        rid = todo.pop()
        if rid in found:
            continue
        found.add(rid)
        todo.extend(target for _, target in store.edges_from(rid) if target not in found)
    facts = [f for f in found if kind_of(f) == "fact"]
    found.update(store.decisions_accepting(facts))
    records = store.get_many(found)
    return [records[k] for k in sorted(records)]


def subject_lineage(store: GafStore, subject: str) -> list[Record]:
    """The lineage of every closure about a subject."""
    closures = store.find("closure", subject=subject)
    if not closures:
        raise UnknownReference(f"no closure about {subject!r} in {store.location}")
    out: dict[str, Record] = {}
    for c in closures:
        out.update((r.id, r) for r in lineage(store, c.id))
    return [out[k] for k in sorted(out)]


def all_records(store: GafStore, *, chunk: int = 2000) -> Iterator[Record]:
    """Every stored record of the chain, kind by kind, in id order, a chunk at a time (records
    about the store itself, its version stamps, are not provenance)."""
    for kind in sorted(k for k, cls in RECORD_TYPES.items() if not cls.ABOUT_THE_STORE):
        batch: list[str] = []
        for rid in store.ids(kind):
            batch.append(rid)
            if len(batch) >= chunk:
                yield from _fetch(store, batch)
                batch = []
        yield from _fetch(store, batch)


def _fetch(store: GafStore, ids: list[str]) -> Iterator[Record]:
    found = store.get_many(ids)
    yield from (found[i] for i in ids if i in found)


# ---------------------------------------------------------------------- building and writing


def graph(records: Iterable[Record], *, base: str = DEFAULT_BASE) -> Graph:
    """The PROV-O graph of some records."""
    g = Graph(bind_namespaces="core")
    g.bind("prov", PROV)
    g.bind("gaf", GAF)
    g.bind(ID_PREFIX, base)  # id:claim-3f2a… rather than an anonymous prefix, in every serialisation
    given = list(records)
    mapper = Mapper(base, lookup={r.id: r for r in given}.get)
    for record in given:
        for triple in mapper.triples(record):
            g.add(triple)
    return g


def serialise(g: Graph, fmt: str) -> str:
    """One graph in one of the supported formats."""
    check_format(fmt)
    if fmt == "nt":
        return "".join(sorted(set(g.serialize(format="nt").splitlines(keepends=True))))
    if fmt == "jsonld":
        return _sorted_jsonld(g.serialize(format="json-ld"))
    if fmt in RDF_FORMATS:
        return g.serialize(format=RDF_FORMATS[fmt])
    doc = document.read(g, {str(p): str(ns) for p, ns in g.namespaces()})
    return PROV_FORMATS[fmt](doc)


def _sorted_jsonld(text: str) -> str:
    """rdflib's JSON-LD in one order: nodes by id, each property's values sorted, keys sorted
    (rdflib lists them in the order its store's sets give, which changes from run to run)."""

    def order(value: object) -> object:
        if isinstance(value, list):
            return sorted((order(v) for v in value), key=lambda v: json.dumps(v, sort_keys=True, ensure_ascii=False))
        if isinstance(value, dict):
            return {k: order(v) for k, v in value.items()}
        return value

    return json.dumps(order(json.loads(text)), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def canonical_hash(g: Graph) -> str:
    """sha256 of the graph's RDFC-1.0 canonical N-Quads: equal graphs, equal hash."""
    import pyoxigraph as ox

    data = g.serialize(format="nt").encode("utf-8")
    dataset = ox.Dataset(q for q in ox.parse(data, format=ox.RdfFormat.N_TRIPLES))
    dataset.canonicalize(ox.CanonicalizationAlgorithm.RDFC_1_0)
    lines = sorted(f"{q} .\n" for q in dataset)
    return hashlib.sha256("".join(lines).encode("utf-8")).hexdigest()


@dataclass
class Exported:
    """What an export wrote: where, in which format, how many triples, and the RDF's canonical hash."""

    path: str | None
    format: str
    triples: int
    records: int
    canonical_hash: str | None = None

    def to_dict(self) -> dict[str, str | int | None]:
        return {"path": self.path, "format": self.format, "triples": self.triples, "records": self.records,
                "canonical_hash": self.canonical_hash, "canonical_hash_method": CANONICAL_HASH if self.canonical_hash else None}  # fmt: skip


def export(records: list[Record], fmt: str, out: str | Path | None, *, base: str = DEFAULT_BASE, with_hash: bool = True) -> tuple[Exported, str | None]:
    """Export some records; write to ``out`` (atomically) or return the text when ``out`` is None."""
    check_format(fmt)
    g = graph(records, base=base)
    text = serialise(g, fmt)
    result = Exported(str(out) if out else None, fmt, len(g), len(records), canonical_hash(g) if with_hash else None)
    if out is None:
        return result, text
    _atomic_write(Path(out), lambda f: f.write(text))
    return result, None


def stream_all(store: GafStore, out: str | Path, *, base: str = DEFAULT_BASE, progress: Callable[[int], None] | None = None) -> Exported:
    """The whole store as N-Triples, written record by record: memory stays flat."""
    mapper = Mapper(base, lookup=store.get)
    count = triples = 0

    def write(f: IO[str]) -> None:
        nonlocal count, triples
        for record in all_records(store):
            g = Graph()
            for triple in mapper.triples(record):
                g.add(triple)
            f.write(g.serialize(format="nt"))
            triples += len(g)
            count += 1
            if progress and count % 1000 == 0:
                progress(count)

    _atomic_write(Path(out), write)
    return Exported(str(out), "nt", triples, count)


def _atomic_write(path: Path, write: Callable[[IO[str]], object]) -> None:
    """Write to a temporary file beside ``path`` and rename it: no partial file is ever left."""
    directory = path.parent if str(path.parent) else Path(".")
    if not directory.is_dir():
        raise ExportError(f"cannot write {path}: no directory {directory}")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=directory)
    except OSError as exc:
        raise ExportError(f"cannot write {path}: {exc.strerror}") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            write(f)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
