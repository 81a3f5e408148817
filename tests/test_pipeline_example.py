"""The worked pipeline, really run: dbt on DuckDB through the real dbt-ol, reporting to gaf serve.

examples/pipeline/story.sh builds a small dbt project twice (the second time on a corrected
seed whose refund makes the report's ``positive`` test fail), with the OpenLineage client's
HTTP transport posting to ``gaf serve``; a decision rests on the report's tests; the first
build's report run is then found rewritten, its impact names the decision, and reopening it
re-decides it. Nothing is mocked: dbt-core, dbt-duckdb and openlineage-dbt run from the venv
``scripts/pipeline_env.py`` makes (PyPI), gaf serve is a real server on a free port.

The oracle is dbt's own account of what it did, read from its artifacts: ``run_results.json``
(each node's status, each test's pass or fail) and ``manifest.json`` (each test's model,
column and name; which nodes depend on which). Every test dbt ran must be in the store as the
assertion dbt-ol reports, with the success dbt recorded; every model dbt built must be an
output of a COMPLETE run; the runs voided must be the rewritten report run and the nodes dbt
says depend on it; the verdicts must follow dbt's test results. Under CI (``CI`` or
``GAF_REQUIRE_PIPELINE`` set) tools that cannot be installed fail the test; elsewhere it skips
saying why.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from gaf.records import Claim, RunInvalidation, Verdict
from gaf.store import open_store
from tests.conftest import ROOT

STORY = ROOT / "examples" / "pipeline" / "story.sh"
REPORT = "assertion:duckdb://shop.duckdb/shop.main.revenue_report/total/positive"
NAMESPACE = "duckdb://shop.duckdb"


def _tools() -> Path:
    spec = importlib.util.spec_from_file_location("pipeline_env", ROOT / "scripts" / "pipeline_env.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    try:
        return module.fetch()
    except module.PipelineEnvError as exc:
        if os.environ.get("CI") or os.environ.get("GAF_REQUIRE_PIPELINE"):
            pytest.fail(f"the pipeline tools are required here: {exc}")
        pytest.skip(reason=f"the pipeline tools could not be installed (python scripts/pipeline_env.py fetch): {exc}")


def _artifact(work: Path, name: str) -> dict[str, Any]:
    return json.loads((work / name).read_text())


def dbt_tests(manifest: dict[str, Any], results: dict[str, Any]) -> dict[str, bool]:
    """Each test dbt ran, as the assertion subject dbt-ol reports it, with whether it passed."""
    out = {}
    for r in results["results"]:
        node = manifest["nodes"][r["unique_id"]]
        if node["resource_type"] != "test":
            continue
        model = manifest["nodes"][node["attached_node"]]
        table = f"{model['database']}.{model['schema']}.{model['alias']}"
        column = f"/{node['column_name']}" if node.get("column_name") else ""
        out[f"assertion:{NAMESPACE}/{table}{column}/{node['test_metadata']['name']}"] = r["status"] == "pass"
    return out


def dbt_models(manifest: dict[str, Any], results: dict[str, Any]) -> set[str]:
    """The datasets of the models dbt built."""
    out = set()
    for r in results["results"]:
        node = manifest["nodes"][r["unique_id"]]
        if node["resource_type"] == "model" and r["status"] == "success":
            out.add(f"dataset:{NAMESPACE}/{node['database']}.{node['schema']}.{node['alias']}")
    return out


@pytest.fixture(params=["ladybug", "neo4j"])
def target(request, tmp_path) -> dict[str, str]:
    """Where the story writes: an embedded store of its own, or the session's Neo4j (emptied)."""
    if request.param == "ladybug":
        return {"GAF_STORE": str(tmp_path / "work" / "store.lbug")}
    server = request.getfixturevalue("neo4j_server")
    request.getfixturevalue("neo4j_store")  # empties the database
    return {"GAF_STORE": server.uri, "NEO4J_USER": server.user, "NEO4J_PASSWORD": server.password,
            "GAF_TOKENS": str(tmp_path / "tokens.json")}  # fmt: skip


def test_the_pipeline_story_reports_what_dbt_did_and_reopens_the_decision_its_corrected_run_reaches(tmp_path, target):
    _tools()
    work = tmp_path / "work"
    work.mkdir()
    env = {**os.environ, **target, "WORK": str(work), "PYTHONPATH": str(ROOT), "COLUMNS": "200"}
    env.pop("NEO4J_URI", None) if target["GAF_STORE"].endswith(".lbug") else None
    done = subprocess.run(["sh", str(STORY)], capture_output=True, text=True, env=env, timeout=900)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    manifest = _artifact(work, "manifest.json")
    first, second = _artifact(work, "run_results-1.json"), _artifact(work, "run_results-2.json")

    auth = (target["NEO4J_USER"], target["NEO4J_PASSWORD"]) if "NEO4J_USER" in target else None
    with open_store(target["GAF_STORE"], auth=auth, read_only=True) as store:
        claims = store.find(Claim)
        said = {(st.subject, st.value) for c in claims for st in c.statements if st.predicate == "success"}
        wrote = {st.object for c in claims for st in c.statements if st.predicate == "wrote"
                 and any(s.predicate == "state" and s.value == "COMPLETE" for s in c.statements)}  # fmt: skip
        (invalidation,) = store.find(RunInvalidation)
        voided = store.get_many(invalidation.claims, Claim).values()
        history = sorted(store.find("closure", subject=REPORT), key=lambda c: c.closed_at)
        labels = [store.find(Verdict, closure=c.id)[0].label for c in history]

    for build in (first, second):  # every test dbt ran is there, with the success dbt recorded
        tests = dbt_tests(manifest, build)
        assert len(tests) == 7 and set(tests.items()) <= said
    assert dbt_tests(manifest, second)[REPORT] is False and all(dbt_tests(manifest, first).values())
    assert dbt_models(manifest, first) | dbt_models(manifest, second) <= wrote and len(dbt_models(manifest, first)) == 3

    # the runs voided: the first build's report model run, and the nodes dbt says depend on it (its tests)
    report_model = next(k for k, n in manifest["nodes"].items() if n["resource_type"] == "model" and n["name"] == "revenue_report")
    children = {manifest["nodes"][k]["name"] for k in manifest["child_map"][report_model]}
    voided_jobs = {st.object.removeprefix("job:dbt/shop.main.shop.") for c in voided for st in c.statements if st.predicate == "of_job"}
    assert voided_jobs == {"revenue_report.build.run", "revenue_report.build.test"} and children
    assert invalidation.why == "rerun" and {c.observed_at for c in voided} and all(
        c.observed_at < min(v.observed_at for v in claims if v.id in invalidation.evidence) for c in voided)  # fmt: skip
    # the decision: published on the first build's passing tests, held once the first report run is voided
    assert labels == ["publish", "hold"]
    assert "closures, by the dataset path from the run" in done.stdout and f"dataset:{NAMESPACE}/shop.main.revenue_report" in done.stdout
