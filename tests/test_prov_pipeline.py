"""PROV out for pipelines: from a verdict back through the pipeline runs to the raw datasets.

The question is decided on the reports of ``tests.test_lineage_runs.CORRECTED``'s first four
runs (seed → stage → total → report). The export is read with rdflib alone — a SPARQL walk
from the verdict through PROV-O's own relations, written here — and the datasets and runs it
reaches are compared with what the pipeline's definition says lies upstream of the published
dataset (``PIPE_READS``, ``PIPE_WRITES``), not with anything prov_export computed. ProvToolbox
(the reference implementation, from Maven Central) must read the PROV-N of it as gaf's own
PROV-JSON says, and every PROV term must be used within PROV-O's domains and ranges.
"""

from __future__ import annotations

import json

from prov.model import ProvDocument
from rdflib import RDFS, Graph, Literal, URIRef

from gaf.closure import evidence
from gaf.records import GAF, Claim, Closure, Projection, Verdict
from prov_export import bundles, export, lineage
from prov_export.mapping import Mapper
from tests.test_lineage_runs import CORRECTED, POLICY, decide
from tests.test_prov_export import _allowed, _loaded, _statements, _types, ontology, provtoolbox
from tests.worlds import PIPE_READS, PIPE_WRITES

#: From a verdict to its closure, GAF, facts, their evaluations and the claims they weighed,
#: then from each claim to the datasets it was derived from, their generating runs, what those
#: runs used, and so on upstream: PROV-O's relations only (and gaf's names for the chain's own).
UPSTREAM = """
PREFIX prov: <http://www.w3.org/ns/prov#>
PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>
SELECT DISTINCT ?dataset ?run WHERE {
  ?verdict (prov:wasDerivedFrom|prov:wasGeneratedBy|prov:used|prov:wasInformedBy)+ ?claim .
  ?claim prov:wasDerivedFrom ?written .
  ?written (prov:wasGeneratedBy/prov:used)* ?upstream .
  ?upstream rdfs:label ?dataset .
  OPTIONAL { ?upstream prov:wasGeneratedBy ?r . ?r rdfs:label ?run }
  FILTER(STRSTARTS(STR(?dataset), "dataset:"))
}
"""


def closure_evidence(store, closure: str) -> set[str]:
    return set(evidence(store, closure).ids)


def upstream_of(dataset: str) -> set[str]:
    """The datasets the pipeline's definition puts upstream of one, itself included."""
    found, todo = {dataset}, [dataset]
    while todo:
        here = todo.pop()
        writer = next(j for j, d in PIPE_WRITES.items() if d == here)
        for read in PIPE_READS[writer]:
            if read not in found:
                found.add(read)
                todo.append(read)
    return found


#: The question asked of the published dataset's test alone: the closure rests on the report
#: run's claim only, and the export must bring the upstream runs' reports to reach raw.
PUBLISHED_ONLY = Projection.model_validate({k: v for k, v in POLICY.to_json().items() if k != "id"}
                                           | {"scope": {"subjects": ["assertion:warehouse/published/*"]}})


def test_a_verdicts_export_walks_back_through_the_runs_to_the_raw_dataset(ladybug_store, tmp_path):
    store = ladybug_store
    closure = decide(store, CORRECTED.events()[:8], tmp_path, policy=PUBLISHED_ONLY)
    assert {str(c) for c in store.get(store.get(closure, Closure).gaf, GAF).facts} and len(
        [r for r in lineage(store, closure) if isinstance(r, Claim) and r.id in closure_evidence(store, closure)]) == 1
    (verdict,) = store.find(Verdict, closure=closure)
    records = lineage(store, closure)
    g = Graph().parse(data=export(records, "ttl", None, held=bundles(store, records))[1], format="turtle")
    start = Mapper().iri(verdict.id)
    rows = g.query(UPSTREAM, initBindings={"verdict": start})
    reached = {str(r.dataset).removeprefix("dataset:warehouse/") for r in rows}
    assert reached == upstream_of("published") == {"published", "summed", "staged", "raw"}
    runs = {str(r.run) for r in rows if r.run is not None}
    assert runs == {CORRECTED.runs[i].subject for i in range(4)}  # seed, stage, total and report: each wrote one
    jobs = {str(o) for o in g.objects(None, RDFS.label) if str(o).startswith("job:")}
    assert jobs == {f"job:dbt/{j}" for j in PIPE_WRITES}


def test_the_pipeline_in_prov_is_read_by_provtoolbox_as_gaf_states_it_and_keeps_prov_o_s_domains(ladybug_store, tmp_path):
    store = ladybug_store
    closure = decide(store, CORRECTED.events()[:8], tmp_path)
    records = lineage(store, closure)
    held = bundles(store, records)
    export(records, "provn", tmp_path / "pipeline.provn", held=held)
    provtoolbox().convert(tmp_path / "pipeline.provn", tmp_path / "pipeline.toolbox.json")
    converted = json.loads((tmp_path / "pipeline.toolbox.json").read_text())
    for content in converted.get("bundle", {}).values():
        content.pop("@id", None)  # ProvToolbox repeats a bundle's id inside it, a key prov does not know
    theirs = ProvDocument.deserialize(content=json.dumps(converted), format="json")
    ours = _loaded(export(records, "provjson", None, held=held)[1], "provjson")
    assert _statements(theirs) == _statements(ours)

    g = Graph().parse(data=export(records, "ttl", None, held=held)[1], format="turtle")
    onto = ontology()
    types = _types(g, onto)
    for s, p, o in g:
        for domain in onto.objects(p, RDFS.domain):
            assert types.get(s, set()) & _allowed(onto, domain), f"{s} {p}: subject is not a {domain}"
        for range_ in onto.objects(p, RDFS.range):
            if not isinstance(o, Literal):
                assert types.get(o, set()) & _allowed(onto, range_), f"{p} {o}: object is not a {range_}"


def test_a_reopened_runs_export_says_which_claims_the_run_invalidation_invalidated_and_provtoolbox_reads_it(ladybug_store, tmp_path):
    import impact
    from gaf import reopen
    from gaf.ledger import ingest
    from gaf.records import RunInvalidation
    from tests.test_lineage_runs import LATER, NOW, STEWARD, ndjson

    store = ladybug_store
    decide(store, CORRECTED.events()[:8], tmp_path)
    ingest(store, ndjson(CORRECTED.events(), tmp_path / "all.ndjson"), recorded_at=NOW, fmt="openlineage")
    done = reopen.after_run_invalidation(store, CORRECTED.runs[0].run_id, impact=impact, by=STEWARD.id, reason="corrected",
                                         reviewer=STEWARD.id, at=LATER, as_of=LATER)  # fmt: skip
    (event,) = store.find(RunInvalidation)
    records = lineage(store, done.superseded[0]["new"])
    held = bundles(store, records)
    g = Graph().parse(data=export(records, "ttl", None, held=held)[1], format="turtle")
    m = Mapper()
    invalidated = {str(s) for s in g.subjects(URIRef("http://www.w3.org/ns/prov#wasInvalidatedBy"), m.iri(event.id))}
    assert invalidated == {str(m.iri(c)) for c in event.claims if m.iri(c) in set(g.subjects())}  # each voided claim exported says so
    assert invalidated  # and some are: the reopen's cause brings them
    export(records, "provn", tmp_path / "reopened.provn", held=held)
    provtoolbox().convert(tmp_path / "reopened.provn", tmp_path / "reopened.toolbox.json")
    converted = json.loads((tmp_path / "reopened.toolbox.json").read_text())
    for content in converted.get("bundle", {}).values():
        content.pop("@id", None)
    assert _statements(ProvDocument.deserialize(content=json.dumps(converted), format="json")) == _statements(
        _loaded(export(records, "provjson", None, held=held)[1], "provjson"))
