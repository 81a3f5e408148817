"""PROV-O export: valid PROV that rdflib and prov load, within PROV-O's domains and ranges."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from prov.model import ProvDocument
from rdflib import BNode, Graph, Literal, URIRef
from rdflib.collection import Collection
from rdflib.namespace import OWL, RDF, RDFS

from gaf.errors import UnknownReference
from prov_export import FORMATS, PROV, ExportError, canonical_hash, export, graph, lineage, stream_all, subject_lineage
from prov_export.mapping import GAF as GAF_NS
from tests.conftest import ROOT
from tests.rentcase import RENT_JULY, close_both

SHARED_PROV_O = ROOT.parent / "shared" / "prov-o" / "prov-o.ttl"
FIXTURE = Path(__file__).parent / "fixtures" / "prov-o-axioms.ttl"
VOCABULARY = ROOT / "prov_export" / "vocabulary.ttl"
RDF_PARSE = {"ttl": "turtle", "jsonld": "json-ld", "nt": "nt"}


def ontology() -> Graph:
    g = Graph().parse(SHARED_PROV_O if SHARED_PROV_O.exists() else FIXTURE)
    return g.parse(VOCABULARY)


def _prov_counts(doc: ProvDocument) -> Counter:
    counts: Counter = Counter()
    for record in doc.get_records():
        counts["relation" if record.is_relation() else type(record).__name__] += 1
    return counts


def test_every_format_loads_back_into_the_same_provenance(store):
    _, c2 = close_both(store)
    records = lineage(store, c2.closure.id)
    reference = graph(records)
    counts = None
    for fmt in FORMATS:
        result, text = export(records, fmt, None)
        assert result.triples == len(reference)
        if fmt in RDF_PARSE:
            back = Graph().parse(data=text, format=RDF_PARSE[fmt])
            assert len(back) == len(reference), fmt
            doc = ProvDocument.deserialize(content=back.serialize(format="turtle"), format="rdf", rdf_format="turtle")
        elif fmt == "provjson":
            doc = ProvDocument.deserialize(content=text, format="json")
        elif fmt == "provxml":
            doc = ProvDocument.deserialize(content=text, format="xml")
        else:
            assert text.startswith("document") and "wasRevisionOf" in text
            continue
        found = _prov_counts(doc)
        counts = counts or found
        assert found == counts, fmt
    assert counts["ProvEntity"] > 10 and counts["ProvActivity"] > 5 and counts["ProvAgent"] >= 3 and counts["relation"] > 20


def _types(g: Graph, onto: Graph) -> dict:
    """Each node's types, closed under rdfs:subClassOf."""
    parents: dict = {}
    for s, o in onto.subject_objects(RDFS.subClassOf):
        parents.setdefault(s, set()).add(o)

    def close(t, seen=None):
        seen = seen or set()
        if t in seen:
            return seen
        seen.add(t)
        for p in parents.get(t, ()):
            close(p, seen)
        return seen

    out: dict = {}
    for s, t in g.subject_objects(RDF.type):
        out.setdefault(s, set()).update(close(t))
    return out


def _allowed(onto: Graph, node) -> set:
    """A domain or range: a class, or the union of several."""
    union = onto.value(node, OWL.unionOf)
    return set(Collection(onto, union)) if union is not None else {node}


def test_every_prov_term_is_defined_and_used_within_its_domain_and_range(store):
    _, c2 = close_both(store)
    g = graph(lineage(store, c2.closure.id))
    onto = ontology()
    types = _types(g, onto)
    classes = set(onto.subjects(RDF.type, OWL.Class))
    properties = set(onto.subjects(RDF.type, OWL.ObjectProperty)) | set(onto.subjects(RDF.type, OWL.DatatypeProperty))
    for s, p, o in g:
        if p == RDF.type and str(o).startswith(str(PROV)):
            assert o in classes, f"{o} is not a PROV-O class"
        if not str(p).startswith(str(PROV)):
            continue
        assert p in properties, f"{p} is not a PROV-O property"
        for domain in onto.objects(p, RDFS.domain):
            assert types.get(s, set()) & _allowed(onto, domain), f"{s} {p}: subject is not a {domain}"
        for range_ in onto.objects(p, RDFS.range):
            if isinstance(o, Literal):
                continue
            assert types.get(o, set()) & _allowed(onto, range_), f"{p} {o}: object is not a {range_}"


def test_times_respect_prov_constraints_ordering(store):
    from gaf.actions import act
    from tests.rentcase import AFTER_E, authority

    _, c2 = close_both(store)
    ids = authority(store)
    act(store, verdict=c2.verdict.id, action_kind="receipt", subject=RENT_JULY, authorised_by=ids["agent"],
        grant=ids["grant:receipt"], policy=ids["policy"], idempotency_key="k", at=AFTER_E)  # fmt: skip
    g = graph(lineage(store, c2.closure.id))
    generated = {s: o.toPython() for s, o in g.subject_objects(PROV.generatedAtTime)}
    started = {s: o.toPython() for s, o in g.subject_objects(PROV.startedAtTime)}
    ended = {s: o.toPython() for s, o in g.subject_objects(PROV.endedAtTime)}
    for activity in started.keys() & ended.keys():
        assert started[activity] <= ended[activity]
    checked = 0
    for activity, entity in g.subject_objects(PROV.used):  # generation precedes usage
        use = ended.get(activity) or started.get(activity)
        if use is not None and entity in generated:
            assert generated[entity] <= use, (activity, entity)
            checked += 1
    for entity, activity in g.subject_objects(PROV.wasGeneratedBy):  # generation within the generating activity
        if entity in generated and activity in started:
            assert started[activity] <= generated[entity]
            checked += 1
    for entity, when in g.subject_objects(PROV.invalidatedAtTime):  # invalidation follows generation
        if entity in generated:
            assert generated[entity] <= when.toPython()
            checked += 1
    assert checked >= 5


def test_the_second_closure_exports_its_supersession_of_the_first(store):
    c1, c2 = close_both(store)
    g = graph(lineage(store, c2.closure.id))
    new, old = URIRef("urn:gaf:" + c2.closure.id), URIRef("urn:gaf:" + c1.closure.id)
    assert (new, PROV.wasRevisionOf, old) in g
    assert (old, PROV.wasInvalidatedBy, URIRef(f"{new}#closing")) in g
    assert (new, URIRef("https://w3id.org/gaf#contentHash"), Literal(c2.closure.id)) in g
    assert (URIRef(f"{new}#bundle"), RDF.type, PROV.Bundle) in g
    # the lineage reaches down to the claims and their sources
    kinds = {str(s).split(":")[2] for s in g.subjects(RDF.type, PROV.Entity) if str(s).startswith("urn:gaf:")}
    assert {"claim", "fact", "gaf", "closure", "verdict", "source"} <= kinds


def test_the_canonical_hash_is_the_same_on_both_stores(ladybug_store, neo4j_store):
    hashes = []
    for store in (ladybug_store, neo4j_store):
        _, c2 = close_both(store)
        hashes.append(canonical_hash(graph(lineage(store, c2.closure.id))))
    assert hashes[0] == hashes[1]


def test_a_subject_export_and_the_streamed_whole_store_export(store, tmp_path):
    close_both(store)
    by_subject = graph(subject_lineage(store, RENT_JULY))
    out = tmp_path / "all.nt"
    result = stream_all(store, out)
    everything = Graph().parse(out, format="nt")
    assert result.records == sum(store.counts().values())
    named = lambda g: {t for t in g if not any(isinstance(x, BNode) for x in t)}  # noqa: E731 - blank nodes are renamed on parsing
    assert len(everything) >= len(by_subject) and named(by_subject) <= named(everything)


def test_bad_requests_leave_no_partial_file(store, tmp_path):
    _, c2 = close_both(store)
    tmp_path = tmp_path / "exports"
    tmp_path.mkdir()
    with pytest.raises(UnknownReference):
        lineage(store, "closure:" + "0" * 64)
    with pytest.raises(UnknownReference):
        subject_lineage(store, "nobody")
    records = lineage(store, c2.closure.id)
    with pytest.raises(ExportError, match="unknown format"):
        export(records, "rdfxml", tmp_path / "x.rdf")
    with pytest.raises(ExportError, match="no directory"):
        export(records, "ttl", tmp_path / "missing" / "x.ttl")
    assert list(tmp_path.iterdir()) == []
    result, _ = export(records, "jsonld", tmp_path / "x.jsonld")
    assert json.loads((tmp_path / "x.jsonld").read_text()) and result.canonical_hash and list(tmp_path.iterdir()) == [tmp_path / "x.jsonld"]


def _claims_behind(store, closure_id: str) -> set[str]:
    """The oracle, read off the records: every claim a closure's accepted facts rest on — each
    fact's evaluation's claims, or through its derivation the facts it used, on down."""
    from gaf.records import GAF, AcceptedFact, Closure, Derivation, Evaluation

    gaf = store.get(store.get(closure_id, Closure).gaf, GAF)
    claims: set[str] = set()
    todo, seen = list(gaf.facts), set()
    while todo:
        fact_id = todo.pop()
        if fact_id in seen:
            continue
        seen.add(fact_id)
        justification = store.get(store.get(fact_id, AcceptedFact).justification)
        if isinstance(justification, Evaluation):
            claims |= {*justification.supporting, *justification.refuting}
        elif isinstance(justification, Derivation):
            todo += [p for p in justification.premises if p.startswith("fact:")]
    return claims


def test_a_lineage_query_walks_from_each_verdict_to_every_claim_it_rests_on(store, tmp_path):
    """`prov:wasDerivedFrom+` from a verdict reaches its closure, the GAF, every accepted fact and
    every claim behind them — in the closure's own export and in the whole-store export — and
    each accepted fact is attributed to the reviewer who accepted it."""
    from gaf.records import Decision, Verdict

    closures = close_both(store)
    out = tmp_path / "all.nt"
    stream_all(store, out)
    whole = Graph().parse(out, format="nt")
    query = ("SELECT DISTINCT ?c WHERE { ?v prov:wasDerivedFrom+ ?c . ?c a gaf:Claim }")
    for closed in closures:
        expected = _claims_behind(store, closed.closure.id)
        assert expected, "the rent closures rest on claims"
        (verdict,) = store.find(Verdict, closure=closed.closure.id)
        for g in (graph(lineage(store, closed.closure.id)), whole):
            found = {str(row.c).removeprefix("urn:gaf:") for row in g.query(query, initNs={"prov": PROV, "gaf": GAF_NS},
                                                                             initBindings={"v": URIRef("urn:gaf:" + verdict.id)})}
            assert found == expected
    for decision in store.find(Decision):
        for fact in decision.accepted:
            assert (URIRef("urn:gaf:" + fact), PROV.wasAttributedTo, URIRef("urn:gaf:" + decision.reviewer)) in whole
