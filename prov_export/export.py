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
import sys
import tempfile
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from rdflib import Dataset, Graph, URIRef

from gaf.canonical import kind_of
from gaf.closure import Evidence, evidence
from gaf.errors import ExportError, UnknownReference
from gaf.lineage import upstream_reports
from gaf.records import RECORD_TYPES, AcceptedFact, Claim, Closure, Record, record_type
from gaf.store.base import GafStore
from gaf.types import Progress, no_progress
from prov_export import document, ntriples
from prov_export.mapping import DEFAULT_BASE, GAF, ID_PREFIX, PROV, Mapper, Triple
from prov_export.mapping_process import MappingProcess

RDF_FORMATS = {"ttl": "turtle", "jsonld": "json-ld", "nt": "nt"}
#: Formats with named graphs: each closure's bundle is the graph named by the closure's IRI.
DATASET_FORMATS = {"trig": "trig", "nq": "nquads"}
PROV_FORMATS = {"provn": document.provn, "provjson": document.provjson, "provxml": document.provxml}
FORMATS = (*RDF_FORMATS, *DATASET_FORMATS, *PROV_FORMATS)
#: What a closure's bundle holds, by record id: see ``bundles``.
Bundles = dict[str, frozenset[str]]
CANONICAL_HASH = "sha256 of RDFC-1.0 canonical N-Quads (pyoxigraph)"
STREAMED_HASH = "sha256 of the sorted distinct canonical N-Triples lines, as written (RDFC-1.0 canonical N-Quads: no blank nodes)"


def check_format(fmt: str) -> None:
    """Refuse a format this module cannot write, before anything is read or built: the one
    check, which ``export``, ``serialise`` and the CLI rely on."""
    if fmt not in FORMATS:
        raise ExportError(f"unknown format {fmt!r}", hint=f"one of: {', '.join(FORMATS)}")


# ---------------------------------------------------------------------- scopes


#: Each closure's evidence, by id, for a caller that asks for a lineage and then its bundles
#: (``gaf.closure.evidence`` evaluates the policy again: worth doing once per closure).
Evidences = dict[str, Evidence]


def _evidence(store: GafStore, closure_id: str, known: Evidences | None) -> Evidence:
    if known is None:
        return evidence(store, closure_id)
    if closure_id not in known:
        known[closure_id] = evidence(store, closure_id)
    return known[closure_id]


def lineage(store: GafStore, closure_id: str, *, known: Evidences | None = None) -> list[Record]:
    """A closure's whole lineage: what it rests on down to claims and sources (its bundle:
    ``gaf.closure.evidence``), what executed it, and the reopens that made it or reopened it.
    ``known`` keeps the evidence found, for ``bundles`` to use again."""
    if not isinstance(store.get(closure_id), Closure):
        raise UnknownReference(f"no closure {closure_id} in {store.location}", hint="gaf history SUBJECT lists closures")
    verdicts = store.verdicts_deciding(closure_id)
    actions = store.actions_executing(verdicts)
    statuses = sorted(status.id for _, _, status in store.action_statuses(actions))
    reopens = sorted({d for _, d, _ in store.dependents([closure_id], ["REOPENS", "PRODUCED"])})  # what reopened it, what made it
    found: set[str] = set()
    _reach(store, [closure_id, *verdicts, *actions, *statuses, *reopens], found)
    bundled: set[str] = set()
    while closures := sorted(c for c in found if kind_of(c) == "closure" and c not in bundled):  # and those it revises, whole
        bundled.update(closures)
        _reach(store, sorted({i for c in closures for i in _evidence(store, c, known).ids} - found), found)
    # The decisions that let its facts in, with the reviewers who made them (and whom they act
    # for), but not the other facts a decision accepted: those are other closures' lineage.
    decisions = store.decisions_accepting([f for f in found if kind_of(f) == "fact"])
    found.update(decisions)
    _reach(store, [t for d in decisions for _, t in store.edges_from(d) if kind_of(t) == "agent"], found)
    records = store.get_many(found)
    # A pipeline's reports (OpenLineage claims) bring the reports of the runs upstream of them,
    # outside the closure's bundle: so a walk goes from the verdict back to the raw datasets.
    reports = [r for r in records.values() if isinstance(r, Claim) and r.scope == "openlineage"]
    if reports and (upstream := [c.id for c in upstream_reports(store, reports) if c.id not in found]):
        _reach(store, upstream, found)
        records = store.get_many(found)
    return [records[k] for k in sorted(records)]


def _reach(store: GafStore, start: list[str], found: set[str]) -> None:
    """Add to ``found`` the records ``start`` names and every record they reference, transitively
    (but not records about the store itself, a proposition's subject key: they are not provenance)."""
    todo = list(start)
    while todo:
        rid = todo.pop()
        if rid in found:
            continue
        found.add(rid)
        targets = (target for _, target in store.edges_from(rid) if target not in found)
        todo.extend(t for t in targets if not record_type(kind_of(t)).ABOUT_THE_STORE)


def bundles(store: GafStore, records: Iterable[Record], *, known: Evidences | None = None) -> Bundles:
    """For each closure among ``records``, the ids of those records its bundle holds: what it
    rests on (``gaf.closure.evidence``, or ``known`` where a lineage already found it) — and so
    nothing made after it, and nothing of another closure."""
    given = {r.id for r in records}
    return {c: _evidence(store, c, known).ids & given for c in sorted(i for i in given if kind_of(i) == "closure")}


def subject_lineage(store: GafStore, subject: str, *, known: Evidences | None = None) -> list[Record]:
    """The lineage of every closure about a subject."""
    closures = store.find("closure", subject=subject)
    if not closures:
        raise UnknownReference(f"no closure about {subject!r} in {store.location}")
    out: dict[str, Record] = {}
    for c in closures:
        out.update((r.id, r) for r in lineage(store, c.id, known=known))
    return [out[k] for k in sorted(out)]


def all_records(store: GafStore, *, chunk: int = 2000) -> Iterator[Record]:
    """Every stored record of the chain, kind by kind, in id order, a chunk at a time
    (``GafStore.records``, which also lets the embedded store's reader let go of what its lookups
    cached); records about the store itself, its version stamps, are not provenance; kinds an
    older embedded store opened read-only has no table for, it holds none of."""
    declared = store.labels()
    for kind in sorted(k for k, cls in RECORD_TYPES.items() if not cls.ABOUT_THE_STORE and cls.LABEL in declared):
        yield from store.records(kind, chunk=chunk)


# ---------------------------------------------------------------------- building and writing


def graph(records: Iterable[Record], *, base: str = DEFAULT_BASE) -> Graph:
    """The PROV-O graph of some records."""
    g = Graph(bind_namespaces="core")
    for prefix, namespace in _prefixes(base).items():  # id:claim-3f2a… rather than an anonymous prefix, in every serialisation
        g.bind(prefix, namespace)
    given = list(records)
    mapper = Mapper(base, lookup={r.id: r for r in given}.get)
    for record in given:
        for triple in mapper.triples(record):
            g.add(triple)
    return g


def dataset(records: Iterable[Record], held: Bundles, *, base: str = DEFAULT_BASE) -> Dataset:
    """The PROV-O dataset of some records: each closure's bundle a graph named by the closure's
    IRI, holding the triples of the records in ``held[closure]``; everything else — what no
    bundle holds, and what a closure states about itself from outside (``Mapper.beside``) —
    in the default graph. The union of its graphs is ``graph(records)``."""
    given = list(records)
    mapper = Mapper(base, lookup={r.id: r for r in given}.get)
    ds = Dataset(default_union=False)
    for prefix, namespace in _prefixes(base).items():
        ds.bind(prefix, namespace)
    holders: dict[str, list[str]] = {}
    for closure, ids in sorted(held.items()):
        for rid in ids:
            holders.setdefault(rid, []).append(closure)
    default = ds.default_graph
    for record in given:
        inside = holders.get(record.id)
        triples = list(mapper.bundled(record))
        for closure in inside or ():
            named = ds.graph(mapper.iri(closure))
            for triple in triples:
                named.add(triple)
        if not inside:
            for triple in triples:
                default.add(triple)
        for triple in mapper.beside(record):
            default.add(triple)
    return ds


def _prefixes(base: str) -> dict[str, str]:
    return {"prov": str(PROV), "gaf": str(GAF), ID_PREFIX: base}


def serialise(g: Graph, fmt: str) -> str:
    """One graph in one of the supported formats (a dataset's graphs, for the formats that have them)."""
    check_format(fmt)
    if fmt in DATASET_FORMATS and not isinstance(g, Dataset):
        raise ExportError(f"{fmt} needs a dataset (named graphs), not a graph", hint="prov_export.export.dataset(records, bundles)")
    if isinstance(g, Dataset):
        if fmt == "nq":
            return "".join(sorted(ntriples.quad_lines(g)))
        if fmt == "trig":
            return _trig(g)
        if fmt in PROV_FORMATS:
            prefixes = {str(p): str(ns) for p, ns in g.namespaces()}
            return PROV_FORMATS[fmt](document.read_dataset(_graphs(g), prefixes))
        g = _union(g)
    if fmt == "nt":
        return "".join(sorted(ntriples.lines(g)))
    if fmt == "jsonld":
        return _sorted_jsonld(g.serialize(format="json-ld"))
    if fmt in RDF_FORMATS:
        return g.serialize(format=RDF_FORMATS[fmt])
    doc = document.read(g, {str(p): str(ns) for p, ns in g.namespaces()})
    return PROV_FORMATS[fmt](doc)


def _trig(ds: Dataset) -> str:
    """TriG in one order: the prefixes, the default graph, then each named graph by IRI, each
    written by rdflib's Turtle writer (which sorts; its TriG writer orders graphs as its store's
    sets do, which changes from run to run)."""
    prefixes = _prefixes(str(dict(ds.namespaces())[ID_PREFIX]))
    out: list[str] = []
    for name, triples in sorted(_graphs(ds).items(), key=lambda kv: "" if kv[0] is None else str(kv[0])):
        g = Graph(bind_namespaces="core")
        for prefix, namespace in prefixes.items():
            g.bind(prefix, namespace)
        for triple in triples:
            g.add(triple)
        text = g.serialize(format="turtle")
        head = [line for line in text.splitlines(keepends=True) if line.startswith("@prefix")]
        body = "".join(line for line in text.splitlines(keepends=True) if not line.startswith("@prefix")).strip("\n")
        if not out:
            out.append("".join(sorted(set(head) | {f"@prefix {p}: <{ns}> .\n" for p, ns in prefixes.items()})) + "\n")
        if name is None:
            out.append(body + "\n\n")
        else:
            label = g.namespace_manager.normalizeUri(name)
            out.append(f"{label} {{\n" + "".join(f"    {line}" if line.strip() else line for line in body.splitlines(keepends=True)) + "\n}\n\n")
    return "".join(out)


def _graphs(ds: Dataset) -> dict[URIRef | None, list[Triple]]:
    """A dataset's triples by graph: None for the default graph, else the graph's IRI."""
    out: dict[URIRef | None, list[Triple]] = {}
    for s, p, o, c in ds.quads((None, None, None, None)):
        name = getattr(c, "identifier", c)
        key = None if name is None or name == ds.default_graph.identifier else URIRef(str(name))
        out.setdefault(key, []).append((s, p, o))
    return out


def _union(ds: Dataset) -> Graph:
    g = Graph(bind_namespaces="core")
    for prefix, namespace in ds.namespaces():
        g.bind(prefix, namespace)
    for s, p, o, _ in ds.quads((None, None, None, None)):
        g.add((s, p, o))
    return g


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
    """sha256 of the graph's (or dataset's) RDFC-1.0 canonical N-Quads: equal graphs, equal hash."""
    import pyoxigraph as ox

    if isinstance(g, Dataset):
        data, syntax = "".join(ntriples.quad_lines(g)).encode("utf-8"), ox.RdfFormat.N_QUADS
    else:
        data, syntax = g.serialize(format="nt").encode("utf-8"), ox.RdfFormat.N_TRIPLES
    quads = ox.Dataset(q for q in ox.parse(data, format=syntax))
    quads.canonicalize(ox.CanonicalizationAlgorithm.RDFC_1_0)
    lines = sorted(f"{q} .\n" for q in quads)
    return hashlib.sha256("".join(lines).encode("utf-8")).hexdigest()


@dataclass
class Exported:
    """What an export wrote: where, in which format, how many triples, and the RDF's canonical hash."""

    path: str | None
    format: str
    triples: int
    records: int
    canonical_hash: str | None = None

    #: how the hash was computed: from the graph (pyoxigraph) or from the lines as they were written
    hash_method: str = CANONICAL_HASH

    def to_dict(self) -> dict[str, str | int | None]:
        return {"path": self.path, "format": self.format, "triples": self.triples, "records": self.records,
                "canonical_hash": self.canonical_hash, "canonical_hash_method": self.hash_method if self.canonical_hash else None}  # fmt: skip


def export(records: list[Record], fmt: str, out: str | Path | None, *, base: str = DEFAULT_BASE, with_hash: bool = True,
           force: bool = False, held: Bundles | None = None) -> tuple[Exported, str | None]:  # fmt: skip
    """Export some records; write to ``out`` (atomically; a file there is kept unless ``force``)
    or return the text when ``out`` is None. With ``held`` (``bundles``), each closure's bundle
    is a named graph in TriG and N-Quads and a ``bundle`` in PROV-N, PROV-JSON and PROV-XML;
    the formats without graphs (Turtle, N-Triples, JSON-LD) hold the same triples, merged."""
    check_format(fmt)
    if fmt in DATASET_FORMATS and held is None:
        raise ExportError(f"{fmt} holds each closure's bundle as a named graph: which records each holds is needed",
                          hint="pass held=prov_export.bundles(store, records)")  # fmt: skip
    g = graph(records, base=base)
    ds = dataset(records, held, base=base) if held is not None and fmt not in RDF_FORMATS else None
    text = serialise(ds if ds is not None else g, fmt)
    hashed = ds if ds is not None and fmt in DATASET_FORMATS else g  # the named graphs are part of what a dataset says
    result = Exported(str(out) if out else None, fmt, len(g), len(records), canonical_hash(hashed) if with_hash else None)
    if out is None:
        return result, text
    _atomic_write(Path(out), lambda f: f.write(text), force=force)
    return result, None


#: How many records ``chunks`` reads together (and a mapping process takes in one frame).
CHUNK = 2000


def chunks(store: GafStore, *, size: int = CHUNK) -> Iterator[tuple[list[Record], dict[str, Record]]]:
    """Every record of the store (``all_records``), ``size`` at a time, each chunk with what its
    mapping looks up: the justifications of its accepted facts, read together rather than one
    read per fact (an accepted fact's lineage runs through its justification's inputs)."""
    held: list[Record] = []
    for record in all_records(store):
        held.append(record)
        if len(held) == size:
            yield held, _justifications(store, held)
            held = []
    if held:
        yield held, _justifications(store, held)


def _justifications(store: GafStore, records: list[Record]) -> dict[str, Record]:
    wanted = sorted({r.justification for r in records if isinstance(r, AcceptedFact)})
    return store.get_many(wanted, keep=False) if wanted else {}  # each read once: not kept in parse_body's memo


def mapped(store: GafStore, mapper: Mapper) -> Iterator[tuple[Record, Iterator[Triple]]]:
    """Every record of the store (``chunks``) with its triples, mapped in this process."""
    for records, found in chunks(store):
        mapper.lookup = found.get
        for record in records:
            yield record, mapper.triples(record)
    mapper.lookup = None


#: The stage of a streamed export: told the records read for mapping, a chunk at a time.
MAPPING = "mapping the records"


def stream_all(store: GafStore, out: str | Path, *, base: str = DEFAULT_BASE, progress: Progress = no_progress,
               force: bool = False, sort_bound: int = ntriples.SORT_BOUND) -> Exported:  # fmt: skip
    """The whole store as N-Triples, sorted and distinct, in memory bounded by ``sort_bound``
    (``ntriples.sorted_lines``) and never a graph: each record's triples become lines as it is
    read. With the system's ``sort``, the records are mapped in a second process
    (``mapping_process``) that writes their lines straight to it, while this one reads the
    next; without, here. The hash is taken from the lines as they are written: the graph's
    canonical hash. ``progress`` is told the records read for mapping, out of all the store's
    counts hold, a chunk at a time and at the end. An output that cannot be written is refused
    before the store is read."""
    path = Path(out)
    _writable(path, force=force)
    mapper = Mapper(base)
    total = sum(store.counts().values())  # the records ``all_records`` reads: none about the store itself
    count = 0
    written: dict[str, Any] = {}
    sorter = ntriples.sorted_lines(path.parent if str(path.parent) else ".", bound=sort_bound)
    mapping = _mapping_process(base, sorter)
    try:
        progress(MAPPING, count, total)
        try:
            for records, found in chunks(store):
                if mapping is not None:
                    mapping.add(records, found)
                else:
                    mapper.lookup = found.get
                    for record in records:
                        sorter.add(mapper.triples(record))
                count += len(records)
                progress(MAPPING, count, total)
            if mapping is not None:
                mapping.finish()
        except ExportError:
            if isinstance(sorter, ntriples.SystemSort):
                sorter.check()  # a sort that stopped is why its writer failed: say so
            raise

        def write(f: IO[str]) -> None:
            written["triples"], written["hash"] = sorter.write(f)

        _atomic_write(path, write, force=force)
    finally:
        if mapping is not None:
            mapping.close()
        sorter.close()
    return Exported(str(out), "nt", written["triples"], count, written["hash"], STREAMED_HASH)


def _mapping_process(base: str, sorter: ntriples.Sorter) -> MappingProcess | None:
    """A process to map the records in, writing to the system's sort; None (map them here) where
    there is no system sort, or no Python to start (an embedded interpreter names none)."""
    if not isinstance(sorter, ntriples.SystemSort) or not sys.executable:
        return None
    try:
        return MappingProcess(base, sorter.input())
    except OSError:
        return None


def _atomic_write(path: Path, write: Callable[[IO[str]], object], *, force: bool = False) -> None:
    """Write to a temporary file beside ``path`` and rename it: no partial file is ever left,
    and the file gets the mode any new file of the user's gets (their umask). A file already
    at ``path`` is kept unless ``force``."""
    directory = _writable(path, force=force)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=directory)
    except OSError as exc:
        raise ExportError(f"cannot write {path}: {exc.strerror}") from None
    try:
        os.fchmod(fd, 0o666 & ~_umask())
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            write(f)
        os.replace(tmp, path)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise ExportError(f"cannot write {path}: {exc.strerror or exc}") from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _writable(path: Path, *, force: bool = False) -> Path:
    """The directory ``path`` is written in, refusing a missing one, or a file already at
    ``path`` unless ``force``."""
    directory = path.parent if str(path.parent) else Path(".")
    if not directory.is_dir():
        raise ExportError(f"cannot write {path}: no directory {directory}")
    if path.exists() and not force:
        raise ExportError(f"{path} exists", hint="--force replaces it; or give another --out")
    return directory


def _umask() -> int:
    """The process's umask (reading it means setting it: it is set straight back)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask
