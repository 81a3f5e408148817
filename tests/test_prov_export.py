"""PROV-O export: valid PROV that rdflib and prov load, within PROV-O's domains and ranges."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import tempfile
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path

import prov
import pytest
from hypothesis import HealthCheck, given, settings
from prov.model import ProvDocument
from rdflib import BNode, Graph, Literal, URIRef
from rdflib.collection import Collection
from rdflib.namespace import OWL, RDF, RDFS

from gaf.errors import UnknownReference
from prov_export import (
    FORMATS,
    PROV,
    ExportError,
    Mapper,
    bundles,
    canonical_hash,
    export,
    graph,
    lineage,
    stream_all,
    subject_lineage,
)
from prov_export.mapping import GAF as GAF_NS
from tests.conftest import ROOT
from tests.impact_truth import embedded, materialise
from tests.rentcase import RENT_JULY, close_both
from tests.worlds import ledger_world

SHARED_PROV_O = ROOT.parent / "shared" / "prov-o" / "prov-o.ttl"
FIXTURE = Path(__file__).parent / "fixtures" / "prov-o-axioms.ttl"
VOCABULARY = ROOT / "prov_export" / "vocabulary.ttl"
RDF_PARSE = {"ttl": "turtle", "jsonld": "json-ld", "nt": "nt"}


def ontology() -> Graph:
    g = Graph().parse(SHARED_PROV_O if SHARED_PROV_O.exists() else FIXTURE)
    return g.parse(VOCABULARY)


def iri(record_id: str) -> URIRef:
    return Mapper().iri(record_id)


#: PROV-O's classes of the three kinds of element, and its starting-point properties with the
#: PROV-DM relation each states: the test's own reading of PROV-O, not prov_export's.
ELEMENT_CLASSES = {
    PROV.Entity: "entity", PROV.Plan: "entity", PROV.Collection: "entity", PROV.Bundle: "entity",
    PROV.Activity: "activity", PROV.Agent: "agent", PROV.Person: "agent", PROV.Organization: "agent",
    PROV.SoftwareAgent: "agent",
}  # fmt: skip
STARTING_POINTS = {
    PROV.wasGeneratedBy: "Generation", PROV.used: "Usage", PROV.wasInformedBy: "Communication",
    PROV.wasInvalidatedBy: "Invalidation", PROV.wasDerivedFrom: "Derivation", PROV.wasRevisionOf: "Derivation",
    PROV.wasAttributedTo: "Attribution", PROV.wasAssociatedWith: "Association", PROV.actedOnBehalfOf: "Delegation",
    PROV.hadMember: "Membership",
}  # fmt: skip
PROV_XSD = Path(prov.__file__).parent / "tests" / "schemas" / "prov.xsd"


def _loaded(text: str, fmt: str) -> ProvDocument:
    return ProvDocument.deserialize(content=text, format={"provjson": "json", "provxml": "xml"}[fmt])


def _name(q) -> str | None:
    return None if q is None else str(getattr(q, "uri", q))


def _records(doc: ProvDocument) -> list:
    """Every record of a document, its bundles' included."""
    return [*doc.get_records(), *(r for b in doc.bundles for r in b.get_records())]


def _statements(doc: ProvDocument) -> set:
    """What a document states, as prov read it: each record's type, its identifier (a
    relation's blank one left out: tools name those as they like), and its attributes."""
    out = set()
    for bundle, records in ((None, doc.get_records()), *((_name(b.identifier), b.get_records()) for b in doc.bundles)):
        for r in records:
            identifier = _name(r.identifier)
            if r.is_relation() and (identifier is None or "_:" in identifier):
                identifier = None
            attributes = tuple(sorted((_name(k), _name(v) if hasattr(v, "uri") else str(v)) for k, v in r.attributes))
            out.add((bundle, _name(r.get_type()), identifier, attributes))
    return out


def _rdf_reading(g: Graph) -> tuple[set, set]:
    """The elements and the relations (kind, first, second argument) some PROV-O triples
    state, read off the triples by PROV-O's starting-point terms; an entity generated at a
    time by no activity named is a generation with the activity left out."""
    elements = {(ELEMENT_CLASSES[t], str(s)) for s, t in g.subject_objects(RDF.type) if t in ELEMENT_CLASSES}
    relations = {(STARTING_POINTS[p], str(s), str(o)) for s, p, o in g if p in STARTING_POINTS}
    for when, relation in ((PROV.generatedAtTime, "Generation"), (PROV.invalidatedAtTime, "Invalidation")):
        for s in set(g.subjects(when, None)):
            if not any(k == relation and first == str(s) for k, first, _ in relations):
                relations.add((relation, str(s), None))
    return elements, relations


def _doc_reading(doc: ProvDocument) -> tuple[set, set]:
    elements, relations = set(), set()
    for r in _records(doc):
        kind = _name(r.get_type()).removeprefix(str(PROV))
        if r.is_relation():
            args = [_name(v) for _, v in r.formal_attributes]
            relations.add((kind, args[0], args[1]))
        else:
            elements.add((kind.lower(), _name(r.identifier)))
    return elements, relations


#: PROV-O's qualified properties the export uses: the relation each qualifies, the PROV-DM
#: argument its subject is, and the one each property of the influence node fills.
QUALIFIED_FORMS = {
    PROV.qualifiedDerivation: ("Derivation", "generatedEntity",
                               {PROV.entity: "usedEntity", PROV.hadActivity: "activity", PROV.hadGeneration: "generation",
                                PROV.hadUsage: "usage"}),
    PROV.qualifiedRevision: ("Derivation", "generatedEntity",
                             {PROV.entity: "usedEntity", PROV.hadActivity: "activity", PROV.hadUsage: "usage"}),
    PROV.qualifiedAttribution: ("Attribution", "entity", {PROV.agent: "agent"}),
    PROV.qualifiedAssociation: ("Association", "activity", {PROV.agent: "agent", PROV.hadPlan: "plan"}),
    PROV.qualifiedUsage: ("Usage", "activity", {PROV.entity: "entity"}),
}  # fmt: skip


def _rdf_qualified(g: Graph) -> set:
    """Each qualified influence of some PROV-O triples as the PROV-DM relation it is: its kind,
    its IRI, its arguments by name, its roles and its types other than the influence class."""
    out = set()
    for s, p, node in g:
        if p not in QUALIFIED_FORMS:
            continue
        kind, first, fills = QUALIFIED_FORMS[p]
        args = {(first, str(s))} | {(name, str(o)) for q, name in fills.items() for o in g.objects(node, q)}
        roles = frozenset(str(o) for o in g.objects(node, PROV.hadRole))
        types = frozenset(str(o) for o in g.objects(node, RDF.type) if o != PROV[kind])
        out.add((kind, str(node), frozenset(args), roles, types))
    return out


def _doc_qualified(doc: ProvDocument) -> set:
    """The same, of the relations of a document that have an identifier of their own."""
    out = set()
    for r in _records(doc):
        identifier = _name(r.identifier)
        if not r.is_relation() or identifier is None or "_:" in identifier:
            continue
        kind = _name(r.get_type()).removeprefix(str(PROV))
        args = {(_name(k).removeprefix(str(PROV)), _name(v)) for k, v in r.formal_attributes if v is not None}
        args = {(k, v) for k, v in args if k != "time"}
        attributes = [(_name(k), _name(v)) for k, v in r.attributes]
        roles = frozenset(v for k, v in attributes if k == str(PROV.role))
        types = frozenset(v for k, v in attributes if k == str(PROV.type))
        out.add((kind, identifier, frozenset(args), roles, types))
    return out


def _times(doc: ProvDocument) -> set:
    """Each generation's and invalidation's (entity, time), and each activity's start and end."""
    out = set()
    for r in _records(doc):
        formal = {_name(k).removeprefix(str(PROV)): v for k, v in r.formal_attributes}
        if r.is_relation() and formal.get("time") is not None:
            out.add((_name(r.get_type()).removeprefix(str(PROV)), _name(formal.get("entity")), formal["time"]))
        elif not r.is_relation():
            out |= {(name, _name(r.identifier), formal[name]) for name in ("startTime", "endTime") if formal.get(name) is not None}
    return out


def _rdf_times(g: Graph) -> set:
    out = {("Generation", str(s), o.toPython()) for s, o in g.subject_objects(PROV.generatedAtTime)}
    out |= {("Invalidation", str(s), o.toPython()) for s, o in g.subject_objects(PROV.invalidatedAtTime)}
    out |= {("startTime", str(s), o.toPython()) for s, o in g.subject_objects(PROV.startedAtTime)}
    return out | {("endTime", str(s), o.toPython()) for s, o in g.subject_objects(PROV.endedAtTime)}


def test_every_rdf_format_parses_back_to_the_same_triples(store):
    _, c2 = close_both(store)
    records = lineage(store, c2.closure.id)
    reference = graph(records)
    for fmt in RDF_PARSE:
        result, text = export(records, fmt, None)
        back = Graph().parse(data=text, format=RDF_PARSE[fmt])
        assert result.triples == len(reference) and len(back) == len(reference), fmt
        assert set(back) == set(reference), fmt


def test_prov_json_and_prov_xml_state_what_the_rdf_states_and_load_as_one_document(store):
    """Every element and starting-point relation of the RDF, and no other, in PROV-JSON and
    PROV-XML as prov reads them; each time as the generation, invalidation, start or end it
    is; a usage stated once, whether or not it is also qualified; each qualified influence
    one relation identified by its IRI, with the arguments (a derivation's activity and
    usage), roles and types of its node; and the two formats the same document, record for
    record."""
    _, c2 = close_both(store)
    records = lineage(store, c2.closure.id)
    g = graph(records)
    held = bundles(store, records)
    docs = {fmt: _loaded(export(records, fmt, None, held=held)[1], fmt) for fmt in ("provjson", "provxml")}
    assert str(iri(c2.closure.id)) in {str(iri(c)) for c in held}  # and the closure it revises, with its own bundle
    assert all(sorted(_name(b.identifier) for b in doc.bundles) == sorted(str(iri(c)) for c in held) for doc in docs.values())
    elements, relations = _rdf_reading(g)
    for fmt, doc in docs.items():
        found_elements, found_relations = _doc_reading(doc)
        assert found_elements == elements, fmt
        assert found_relations == relations, fmt
        assert _times(doc) == _rdf_times(g), fmt
        assert _doc_qualified(doc) == _rdf_qualified(g), fmt
        for account in (doc, *doc.bundles):  # within one account (a bundle may repeat what another states)
            usages = [[_name(v) for _, v in r.formal_attributes][:2] for r in account.get_records() if _name(r.get_type()) == str(PROV.Usage)]
            assert len(usages) == len({tuple(u) for u in usages}), f"{fmt}: a usage stated twice"
    assert _statements(docs["provjson"]) == _statements(docs["provxml"])
    assert {kind for kind, *_ in _rdf_qualified(g)} == {"Derivation", "Attribution", "Association", "Usage"}
    counts = Counter(kind for kind, _ in elements)
    assert counts["entity"] > 10 and counts["activity"] > 5 and counts["agent"] >= 3 and len(relations) > 20


def test_provtoolbox_reads_each_provn_export_as_the_document_prov_json_states(store, tmp_path):
    """The reference implementation, ProvToolbox (from Maven Central), parses the PROV-N of a
    closure's and of a subject's lineage and writes it as PROV-JSON, which prov loads equal,
    record for record, to gaf's own PROV-JSON of the same records."""
    c1, _ = close_both(store)
    toolbox = provtoolbox()
    for name, records in (("closure", lineage(store, c1.closure.id)), ("subject", subject_lineage(store, RENT_JULY))):
        held = bundles(store, records)
        export(records, "provn", tmp_path / f"{name}.provn", held=held)
        toolbox.convert(tmp_path / f"{name}.provn", tmp_path / f"{name}.toolbox.json")
        converted = json.loads((tmp_path / f"{name}.toolbox.json").read_text())
        for content in converted.get("bundle", {}).values():
            content.pop("@id", None)  # ProvToolbox repeats a bundle's id inside it, a key prov does not know
        theirs = ProvDocument.deserialize(content=json.dumps(converted), format="json")
        ours = _loaded(export(records, "provjson", None, held=held)[1], "provjson")
        assert len(theirs.bundles) == len(ours.bundles) == len(held) >= 1, name
        assert _statements(theirs) == _statements(ours), name
        assert len(_statements(ours)) > 50


def test_prov_xml_is_valid_against_the_w3c_schema(store):
    from lxml import etree

    schema = etree.XMLSchema(etree.parse(str(PROV_XSD)))
    _, c2 = close_both(store)
    for records in (lineage(store, c2.closure.id), subject_lineage(store, RENT_JULY)):
        _, text = export(records, "provxml", None, held=bundles(store, records))
        assert "<prov:bundleContent " in text
        document = etree.fromstring(text.encode("utf-8"))
        assert schema.validate(document), [f"{e.line}: {e.message}" for e in list(schema.error_log)[:5]]


def test_every_format_is_the_same_bytes_whatever_the_hash_seed_and_the_store(ladybug_store, neo4j_store, tmp_path):
    """Each format's bytes depend on the records only: exported from the same closure on
    both stores, and by two processes with different PYTHONHASHSEEDs."""
    texts = {}
    for name, store in (("ladybug", ladybug_store), ("neo4j", neo4j_store)):
        _, c2 = close_both(store)
        records = lineage(store, c2.closure.id)
        held = bundles(store, records)
        texts[name] = {fmt: export(records, fmt, None, held=held)[1] for fmt in FORMATS}
    assert texts["ladybug"] == texts["neo4j"]
    assert f"\nid:{iri(c2.closure.id).removeprefix('urn:gaf:')} {{\n" in texts["neo4j"]["trig"]  # the bundle, a named graph
    dump, held_file = tmp_path / "records.jsonl", tmp_path / "bundles.json"
    dump.write_text("".join(r.body.decode("utf-8") + "\n" for r in records))
    held_file.write_text(json.dumps({k: sorted(v) for k, v in held.items()}))
    script = (
        "import sys, json; from gaf.records import parse_record; from prov_export import FORMATS, export\n"
        "rs = [parse_record(json.loads(line)) for line in open(sys.argv[1])]\n"
        "held = {k: frozenset(v) for k, v in json.load(open(sys.argv[2])).items()}\n"
        "print(json.dumps({f: export(rs, f, None, held=held)[1] for f in FORMATS}))"
    )
    for seed in ("1", "2"):
        run = subprocess.run([sys.executable, "-c", script, str(dump), str(held_file)], capture_output=True, text=True, check=True,
                             env={**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(ROOT)})  # fmt: skip
        assert json.loads(run.stdout) == texts["neo4j"], f"PYTHONHASHSEED={seed}"


def provtoolbox():
    """scripts/provtoolbox.py as a module (it is a script, not part of the package): never
    skipped — without Java or Maven, the test fails saying which."""
    spec = importlib.util.spec_from_file_location("provtoolbox", ROOT / "scripts" / "provtoolbox.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


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
    new, old = iri(c2.closure.id), iri(c1.closure.id)
    assert str(new) == "urn:gaf:closure-" + c2.closure.id.removeprefix("closure:")
    assert (new, PROV.wasRevisionOf, old) in g
    assert (old, PROV.wasInvalidatedBy, Mapper().implied("closing", c2.closure.id)) in g
    assert (new, URIRef("https://w3id.org/gaf#contentHash"), Literal(c2.closure.id)) in g
    assert (new, RDF.type, PROV.Bundle) in g  # the closure is the bundle of what it rests on
    # the lineage reaches down to the claims and their sources
    kinds = {str(s).removeprefix("urn:gaf:").split("-")[0] for s in g.subjects(RDF.type, PROV.Entity)}
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
            found = {str(row.c).removeprefix("urn:gaf:").replace("-", ":", 1)
                     for row in g.query(query, initNs={"prov": PROV, "gaf": GAF_NS}, initBindings={"v": iri(verdict.id)})}
            assert found == expected
    for decision in store.find(Decision):
        for fact in decision.accepted:
            assert (iri(fact), PROV.wasAttributedTo, iri(decision.reviewer)) in whole


def _record_id(term) -> str:
    return str(term).removeprefix("urn:gaf:").replace("-", ":", 1)


#: Each qualified derivation of a fact: what it is derived from, through which activity, and the
#: role of that activity's usage of it — only where the usage is one the activity states.
DERIVATIONS = """SELECT ?source ?activity ?role WHERE {
  ?fact prov:qualifiedDerivation ?d . ?d a prov:Derivation ; prov:entity ?source ; prov:hadActivity ?activity ; prov:hadUsage ?u .
  ?fact prov:wasDerivedFrom ?source ; prov:wasGeneratedBy ?activity .
  ?activity prov:qualifiedUsage ?u . ?u a prov:Usage ; prov:entity ?source ; prov:hadRole ?role .
}"""
#: Each qualified attribution of an entity: its type other than prov:Attribution, and the agent.
ATTRIBUTIONS = """SELECT ?kind ?agent WHERE {
  ?entity prov:qualifiedAttribution ?a . ?a a prov:Attribution, ?kind ; prov:agent ?agent . ?entity prov:wasAttributedTo ?agent .
  FILTER (?kind != prov:Attribution)
}"""
#: Each role an agent played in an activity, by its qualified association.
ASSOCIATIONS = """SELECT ?agent ?role WHERE {
  ?activity prov:qualifiedAssociation ?a . ?a a prov:Association ; prov:agent ?agent ; prov:hadRole ?role .
  ?activity prov:wasAssociatedWith ?agent .
}"""


def _weighed(justification) -> set[tuple[str, str]]:
    """The oracle, read off a justification record: what the fact it justifies rests on, each
    with the role it played — an evaluation's supporting and refuting claims and the closed
    scopes it relied on, a derivation's premise facts (not the rejections it relied on: those
    are activities) and its negative premises."""
    from gaf.records import Evaluation

    if isinstance(justification, Evaluation):
        return ({(c, "supporting") for c in justification.supporting} | {(c, "refuting") for c in justification.refuting}
                | {(s, "reliedOnAbsence") for s in justification.absent_in})  # fmt: skip
    return {(p, "premise") for p in justification.premises if p.startswith("fact:")} | {(s, "reliedOnAbsence") for s in justification.negative_premises}


def _check_qualified_lineage(store, g: Graph) -> Counter:
    """Every accepted fact, claim and acceptance in ``g`` has the qualified influences its
    records say it has, and no other: each fact one derivation per entity its justification
    lists, through that justification, in that entity's role, and no unqualified one besides;
    each claim attributed to its observer and to its source, by type; each fact to the
    reviewer of each decision that accepted it; each decision associated with its reviewer
    in role gaf:reviewer. What was checked, counted by role and type."""
    from gaf.records import AcceptedFact, Claim, Decision

    ns = {"prov": PROV, "gaf": GAF_NS}
    local = lambda term: str(term).removeprefix(str(GAF_NS))  # noqa: E731
    checked: Counter = Counter()
    reviewers: dict[str, set[tuple[str, str]]] = {}
    for decision in store.find(Decision):
        for fact in decision.accepted:
            reviewers.setdefault(fact, set()).add(("ReviewerAttribution", decision.reviewer))
    for node in g.subjects(RDF.type, GAF_NS.AcceptedFact):
        fact = store.get(_record_id(node), AcceptedFact)
        expected = {(ref, fact.justification, role) for ref, role in _weighed(store.get(fact.justification))}
        found = {(_record_id(row.source), _record_id(row.activity), local(row.role))
                 for row in g.query(DERIVATIONS, initNs=ns, initBindings={"fact": node})}  # fmt: skip
        assert found == expected, fact.id
        assert len(set(g.objects(node, PROV.qualifiedDerivation))) == len(expected), f"{fact.id}: a derivation unqualified or doubled"
        assert {_record_id(o) for o in g.objects(node, PROV.wasDerivedFrom)} == {ref for ref, _ in _weighed(store.get(fact.justification))}
        attributed = {(local(row.kind), _record_id(row.agent)) for row in g.query(ATTRIBUTIONS, initNs=ns, initBindings={"entity": node})}
        assert attributed == reviewers.get(fact.id, set()), fact.id
        checked.update(role for *_, role in expected)
        checked["fact"] += 1
    for node in g.subjects(RDF.type, GAF_NS.Claim):
        claim = store.get(_record_id(node), Claim)
        attributed = {(local(row.kind), _record_id(row.agent)) for row in g.query(ATTRIBUTIONS, initNs=ns, initBindings={"entity": node})}
        assert attributed == {("ObserverAttribution", claim.observer), ("SourceAttribution", claim.source)}, claim.id
        checked["claim"] += 1
    for node in g.subjects(RDF.type, GAF_NS.Acceptance):
        decision = store.get(_record_id(node), Decision)
        roles = {(_record_id(row.agent), local(row.role)) for row in g.query(ASSOCIATIONS, initNs=ns, initBindings={"activity": node})}
        assert roles == {(decision.reviewer, "reviewer")}, decision.id
        checked["decision"] += 1
    return checked


def test_each_fact_is_derived_through_its_justification_and_each_attribution_says_in_what_capacity(store, tmp_path):
    """The qualified lineage, checked against the records: in each rent closure's export and
    the whole store's, and in the access example's (where absence in a closed scope means
    "no"), a fact's derivations name exactly what its justification record lists, with that
    justification as the activity and, through the usage, the role; a claim's observer and
    source are told apart, and so is the reviewer, both as the fact's attribution and as the
    acceptance's association."""
    from gaf.ledger import ingest
    from gaf.policies import publish, read_policy
    from gaf.projection import project
    from gaf.store.ladybug import LadybugStore
    from tests.rentcase import agent_id

    closures = close_both(store)
    stream_all(store, tmp_path / "rent.nt")
    checked: Counter = Counter()
    for g in (*(graph(lineage(store, closed.closure.id)) for closed in closures), Graph().parse(tmp_path / "rent.nt", format="nt")):
        checked += _check_qualified_lineage(store, g)
    access = ROOT / "examples" / "access"
    at = datetime(2026, 3, 2, 9, 30, tzinfo=timezone.utc)
    with LadybugStore(tmp_path / "access.lbug") as other:
        for batch in ("claims.yaml", "authority.yaml"):
            ingest(other, access / batch, recorded_at=at)
        project(other, publish(other, read_policy(other, access / "policy.yaml"), at=at), as_of=at,
                reviewer=agent_id(other, "security-desk"), at=at)  # fmt: skip
        stream_all(other, tmp_path / "access.nt")
        checked += _check_qualified_lineage(other, Graph().parse(tmp_path / "access.nt", format="nt"))
    assert all(checked[k] for k in ("supporting", "premise", "reliedOnAbsence", "claim", "decision")), checked


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(world=ledger_world())
def test_the_qualified_lineage_is_the_records_on_random_stores(world, tmp_path):
    """The same, on random stored worlds: closed scopes relied on, by evaluations and by
    derivations under ``not``, refuting claims, several sources and subjects."""
    with embedded(tmp_path)("prov") as store:
        materialise(store, world)
        out = Path(tempfile.mkdtemp(dir=tmp_path)) / "all.nt"
        stream_all(store, out)
        checked = _check_qualified_lineage(store, Graph().parse(out, format="nt"))
    assert checked["claim"] and checked["decision"], checked
