"""The benchmarks' shape: every module imports, every benchmark has ``main(argv) -> int``,
``python -m bench`` exits with its code, and the verdict benchmark runs and fails on a
mismatch. At tiny sizes and in memory only: no figures, no Neo4j."""

from __future__ import annotations

import importlib
import inspect
import json
import subprocess
import sys
from pathlib import Path

import pytest

import bench.__main__ as entry
import gaf.verdict

ROOT = Path(__file__).resolve().parents[1]
TINY = ["--sizes", "10", "--repeat", "2", "--seconds", "0.2"]


@pytest.mark.parametrize("name", entry.modules())
def test_every_bench_module_imports(name):
    importlib.import_module(f"bench.{name}")


def test_helpers_are_modules_of_the_package():
    assert entry.HELPERS <= set(entry.modules())
    assert set(entry.benchmarks()) == set(entry.modules()) - entry.HELPERS


@pytest.mark.parametrize("name", entry.benchmarks())
def test_every_benchmark_has_main_argv_returning_an_exit_code(name):
    main = importlib.import_module(f"bench.{name}").main
    params = list(inspect.signature(main).parameters.values())
    assert [p.name for p in params] == ["argv"], name
    assert params[0].default is None and str(params[0].annotation) == "list[str] | None", name
    assert str(inspect.signature(main).return_annotation) == "int", name


def test_the_entry_point_refuses_what_is_not_a_benchmark(capsys):
    assert entry.main([]) == 2
    assert entry.main(["--help"]) == 0
    assert entry.main(["graph"]) == 2 and "helper" in capsys.readouterr().err
    assert entry.main(["no-such-benchmark"]) == 2


def test_the_verdict_benchmark_times_judge_on_both_paths_and_records_the_load(tmp_path):
    out = tmp_path / "verdict.json"
    assert entry.main(["verdict", *TINY, "--json", str(out)]) == 0
    result = json.loads(out.read_text())
    assert result["equal"] is True and len(result["machine"]["load_before"]) == 3 and "load_after" in result["machine"]
    assert [(r["case"], r["graph"]) for r in result["sizes"]] == [("rent", "acyclic"), ("synthetic", "acyclic"), ("synthetic", "cyclic")]
    for row in result["sizes"]:
        judge, array = row["variants"]["judge"], row["variants"]["array"]
        assert row["path"] == "python" and row["compared_with"] == "array" and row["equal"]
        assert judge["paths"]["array"] == 0 and array["paths"]["array"] == row["weighings"]
        assert judge["runs"] >= 1 and array["runs"] == judge["runs"]
    acyclic, cyclic = result["sizes"][1]["variants"]["judge"]["paths"], result["sizes"][2]["variants"]["judge"]["paths"]
    assert acyclic["topological"] > 0 and cyclic["fixed_point"] > 0
    assert gaf.verdict.VECTOR_THRESHOLD == result["vector_threshold"]  # restored after forcing the other path


def test_the_verdict_benchmark_fails_when_the_paths_disagree(tmp_path, monkeypatch):
    shipped = gaf.verdict._vectorised
    monkeypatch.setattr(gaf.verdict, "_vectorised", lambda *a: {k: v / 2 for k, v in shipped(*a).items()})
    out = tmp_path / "verdict.json"
    assert entry.main(["verdict", *TINY, "--graphs", "acyclic", "--json", str(out)]) == 1
    result = json.loads(out.read_text())
    assert result["equal"] is False and any(r["differences"] for r in result["sizes"])


def test_python_m_bench_exits_with_the_benchmark_code(tmp_path):
    run = [sys.executable, "-m", "bench", "verdict", *TINY, "--graphs", "acyclic", "--json", str(tmp_path / "v.json")]
    assert subprocess.run(run, cwd=ROOT, capture_output=True, timeout=300).returncode == 0
    bad = subprocess.run([sys.executable, "-m", "bench", "verdict", "--graphs", "sideways"], cwd=ROOT, capture_output=True, timeout=300)
    assert bad.returncode == 2


def test_the_ingest_benchmark_runs_gaf_beside_raw_on_the_embedded_store_and_records_the_load(tmp_path):
    # A tiny run on LadybugDB only (no Neo4j): every variant writes the same graph, counts verified.
    from bench import ingest

    out = tmp_path / "ingest.json"
    assert ingest.main(["--nodes", "1500", "--stores", "ladybug", "--variants", "raw,gaf", "--json", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert {r["variant"] for r in doc["runs"]} >= {"raw", "gaf"} and all(r["verified"] for r in doc["runs"])
    assert len(doc["load_average"]["start"]) == 3 and len(doc["load_average"]["end"]) == 3


def test_the_rules_benchmark_derives_the_closure_in_both_modes_and_both_forms(tmp_path):
    # A tiny ownership forest: semi-naive and naive derive the same facts, equal to the walked closure.
    from bench import projection

    for form in ("left", "right"):
        out = tmp_path / f"rules-{form}.json"
        assert projection.main(["--json", str(out), "rules", "--form", form, "--owns", "200"]) == 0
        (row,) = json.loads(out.read_text())["runs"]
        for mode in ("semi-naive", "naive"):
            assert row[mode]["matches_closure"] and row[mode]["same_as_semi_naive"], (form, mode)


def test_the_confirmation_benchmark_runs_and_checks_gaf_against_recomputing_one_closure_at_a_time(tmp_path):
    import bench.confirm

    out = tmp_path / "confirm.json"
    assert bench.confirm.main(["--subjects", "6", "--claims", "3", "--queries", "2", "--json", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert doc["closures"] == 6 and len(doc["rows"]) == 4 and all(r["reached"] == 6 for r in doc["rows"])


def test_the_built_impact_benchmark_builds_through_gaf_and_checks_reach_and_confirmation_against_their_baselines(tmp_path, monkeypatch):
    # A tiny graph on LadybugDB only (no Neo4j): built by ingest, publish, project, close and act,
    # every source's reach and confirmed report checked against the baselines, the build kept.
    import bench.built

    tiny = ["--stores", "ladybug", "--portfolios", "6", "--cases", "2", "--claims", "6", "--predicates", "8",
            "--per-portfolio", "3", "--fan-out", "4", "--queries", "4", "--warmup", "1", "--workdir", str(tmp_path / "work")]  # fmt: skip
    out = tmp_path / "built.json"
    assert bench.built.main([*tiny, "--json", str(out)]) == 0
    doc = json.loads(out.read_text())
    built, res = doc["built"]["ladybug"], doc["stores"]["ladybug"]
    assert built["build"]["closures"] == 12 and built["build"]["actions"] > 0 and built["nodes"] > 0
    assert len(res["rows"]) == 4 and all(r["reached"] % 2 == 0 and r["reached"] > 0 for r in res["rows"])
    assert max(r["reached"] for r in res["rows"]) > 2  # the sample holds a source that feeds several portfolios
    assert len(doc["machine"]["load_before"]) == 3 and len(doc["machine"]["load_after"]) == 3
    # A second run with the same parameters reuses the store; a baseline that misses a closure fails the run.
    monkeypatch.setattr(bench.built, "build", lambda *a, **k: pytest.fail("the store was built again"))
    shipped = bench.built.baseline_reach
    monkeypatch.setattr(bench.built, "baseline_reach", lambda store, claims: set(sorted(shipped(store, claims))[1:]))
    with pytest.raises(SystemExit, match="reach and its baseline disagree"):
        bench.built.main(tiny)


def test_the_ingest_memory_benchmark_runs_gaf_ingest_as_a_child_and_records_its_peak_the_pool_cap_and_where_the_text_lies(tmp_path):
    from bench import ingest_memory

    out = tmp_path / "memory.json"
    assert ingest_memory.main(["--sizes", "30", "--json", str(out)]) == 0
    doc = json.loads(out.read_text())
    (row,) = doc["sizes"]
    assert doc["cache_mb"] == 128 and row["ladybug"]["report"]["written"] == 30 + 240  # the claims, the agents and sources
    assert row["ladybug"]["peak_rss_mb"] > 0 and len(doc["machine"]["load_before"]) == 3
    # where the store's text lies after it: 30 claims, and the log listing every id written
    text = row["ladybug"]["text"]
    assert text["Claim"]["rows"] == 30 and {"Proposition", "LogEntry", "Agent", "Source"} <= text.keys()
    for label, t in text.items():  # one node group holds fewer than 131,072 rows: it is the newest
        assert t["newest_group_bytes"] == t["body_bytes"] >= t["largest_body"] > 0, label


def test_the_members_benchmark_reads_every_fact_back_and_reports_nodes_smaller_than_the_whole_records(tmp_path):
    from bench import members

    out = tmp_path / "members.json"
    assert members.main(["--facts", "40", "--excluded", "4", "--cache-mb", "128", "--json", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert doc["ok"] and doc["checks"]["facts in the GAF read back"] == 40 and doc["checks"]["exclusions listed by the closure"] == 4
    for kind in ("gaf", "decision", "closure"):
        assert doc["bytes"][kind]["stored"] < doc["bytes"][kind]["whole"], kind


def test_the_checks_benchmark_times_every_library_query_three_ways_and_verify_on_the_embedded_store(tmp_path):
    from bench import checks
    from queries import runner

    out = tmp_path / "checks.json"
    assert checks.main(["--claims", "50", "--repeat", "2", "--json", str(out)]) == 0
    doc = json.loads(out.read_text())
    found = doc["stores"]["ladybug"]
    assert [r["query"] for r in found["queries"]] == sorted(runner.load())  # every query of the library, none skipped
    assert all(r["rows"] > 0 for r in found["queries"] if r["query"] in ("why-verdict", "gaf-diff", "what-rests-on-source"))
    assert found["verify"]["ok"] and found["verify_deep"]["closures_replayed"] == 2


def test_the_api_benchmark_serves_the_store_loads_it_and_finds_every_written_claim_stored_once(tmp_path):
    from bench import api

    out = tmp_path / "api.json"
    assert api.main(["--clients", "2", "--seconds", "2", "--json", str(out)]) == 0
    doc = json.loads(out.read_text())
    found = doc["stores"]["ladybug"]
    lost = found["nothing_lost"]
    assert found["http"]["errors"] == found["library"]["errors"] == 0
    assert found["http"]["submit"]["requests"] > 0 and found["http"]["verdict"]["requests"] > 0
    # every claim an answer reported written is stored, once, and the store grew by exactly those
    assert lost["ok"] and lost["answered_written"] == lost["stored"] == lost["claims_after"] - lost["claims_before"] > 0


def test_the_checks_benchmark_opens_neo4j_with_the_credentials_the_store_takes_and_empties_it_when_told(neo4j_store, neo4j_server, tmp_path, monkeypatch):
    from bench import checks

    monkeypatch.setenv("NEO4J_URI", neo4j_server.uri)
    out = tmp_path / "checks.json"
    assert checks.main(["--stores", "neo4j", "--claims", "10", "--repeat", "1", "--empty-neo4j", "--json", str(out)]) == 0
    found = json.loads(out.read_text())["stores"]["neo4j"]
    assert found["verify"]["ok"] and found["verify_deep"]["closures_replayed"] == 2
    with pytest.raises(SystemExit, match="holds .* nodes"):  # a database that holds nodes is not emptied unless told
        checks.main(["--stores", "neo4j", "--claims", "10", "--repeat", "1"])


def test_the_lineage_benchmark_ingests_the_stream_three_ways_into_the_same_store_and_reports_the_ratios(tmp_path):
    # A small stream on LadybugDB only (no Neo4j): plain, --format openlineage, HTTP one a request and batched.
    from bench import lineage

    out = tmp_path / "lineage.json"
    assert lineage.main(["--events", "120", "--clients", "2", "--batch", "25", "--json", str(out)]) == 0
    doc = json.loads(out.read_text())
    found = doc["stores"]["ladybug"]
    assert doc["ok"] and found["same_store"]["ok"] and found["same_store"]["differ"] == {}
    assert len(set(found["same_store"]["records"].values())) == 1 and found["same_store"]["counts"]["plain"]["claim"] == 120
    for name in ("plain", "ingest", "http", "http_batched"):
        assert found[name]["events"] == 120 and found[name]["per_s"] > 0 and found[name]["seconds"] > 0, name
    for name in ("http", "http_batched"):
        assert found[name]["errors"] == 0 and found[name]["nothing_lost"]["ok"] and found[name]["nothing_lost"]["answered"] > 0
    assert (found["http"]["requests"], found["http_batched"]["requests"]) == (120, 5)
    assert set(found["ratios"]) == {"ingest", "http", "http_batched"} and set(found["goals_met"]) == {"ingest", "http"}
    assert found["ratios"]["ingest"] == round(found["ingest"]["per_s"] / found["plain"]["per_s"], 2)
    assert doc["event_types"]["COMPLETE"] > doc["event_types"]["FAIL"] > 0 and len(doc["load_average"]["end"]) == 3


def test_the_lineage_benchmark_stream_is_deterministic_and_carries_every_facet_gaf_maps_and_one_it_keeps_whole():
    from bench.lineage import stream
    from gaf.lineage import FACETS

    events = stream(200)
    assert events == stream(200) and events != stream(200, seed=26) and len(events) == 200
    named = {name for e in events for d in e["outputs"] + e["inputs"] for name in d["facets"]}
    assert set(FACETS) <= named and "gafBench_cost" in named


def test_the_lineage_benchmark_finds_a_store_that_differs_by_one_record():
    from bench.lineage import same_store

    plain = {"claim": {"a", "b"}, "source": {"s"}}
    assert same_store({"plain": plain, "ingest": {k: set(v) for k, v in plain.items()}})["ok"]
    found = same_store({"plain": plain, "ingest": plain, "http": {"claim": {"a"}, "source": {"s"}, "agent": {"x"}}})
    assert not found["ok"] and found["differ"] == {"http": {"agent": {"missing": 0, "extra": 1}, "claim": {"missing": 1, "extra": 0}}}
