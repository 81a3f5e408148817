"""Impact benchmark: how fast ``gaf impact source`` answers on a graph of about 1M nodes.

    python -m bench impact [--nodes 1000000] [--stores neo4j,ladybug] [--queries 100] [--json out.json]
    python -m bench impact --report out.json        # print saved results again

The graph is bench/graph.py's synthetic provenance graph (cases of claims,
evaluations, accepted facts, derivations, GAFs, closures and verdicts), drawn
with a large source pool whose use is Zipf-skewed (``--sources``, ``--skew``):
most sources feed a handful of cases, a few feed thousands, so the sources
sampled span fan-outs from a few dependents to tens of thousands.

Loading is not what is measured (bench/ingest.py measures writes), so the graph
is written once as CSV and bulk-loaded: ``neo4j-admin database import full`` into
a benchmark server of its own (scripts/neo4j_local.py on ``--neo4j-home``/``--port``),
then ``GafStore.init()`` for gaf's constraints and indexes; ``COPY FROM`` into
LadybugDB tables declared by ``LadybugStore.init()``. The rows are gaf's own
(``bench.graph.node_row`` and ``Record.edges()``), so the stores hold exactly
what gaf would have written.

Then, for ``--queries`` sources drawn at random (seeded) from the pool, after
``--warmup`` unmeasured rounds, each source's subgraph touched once unmeasured (so
both variants are timed with its pages cached: warm latency), in alternating order:

* ``gaf``      — ``impact.walk(store, {source: "positive"}, …)``: the dependency walk's
  whole report (reach over the graph, support counting, statuses, paths, executed
  actions) — on Neo4j one statement, on LadybugDB a level-wise walk. This is the
  walk tier of ``gaf impact source``; the confirmation tier (impact/confirm.py:
  recomputing each reached closure) is not measured here, because this graph's
  closures are written directly, not made by projecting claims;
* ``baseline`` — a breadth-first walk in Python that issues one query per
  record reached (``MATCH (t:Label {id: $id})<-[:R1|R2|…]-(x) RETURN x.id``)
  in one read transaction of the same store: what one writes without gaf. Its
  relationship list is written out in this file, not taken from gaf.

Each pair is checked: the baseline's reachable set (reported kinds) must equal
gaf's affected set, or the benchmark fails. Reported: latency p50/p95/max per
variant and store, overall and for sources with ≤ 1,000 dependents, and the
speed-up (baseline ÷ gaf) of the medians.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table

from bench import save_result
from bench.graph import _Maker, node_row
from gaf.canonical import kind_of
from gaf.store.base import GafStore
from gaf.store.schema import graph_schema, label_of
from impact.analysis import REPORTED, ImpactReport, walk

ROOT = Path(__file__).resolve().parent.parent
console = Console(stderr=True)
#: Dependents at or below which the p95 goal (100 ms) applies.
GOAL_DEPENDENTS = 1000
NEO4J_TYPES = {"STRING": "string", "INT64": "long", "DOUBLE": "double", "BOOLEAN": "boolean", "STRING[]": "string[]"}


# ---------------------------------------------------------------------- the graph, as CSV


def write_csv(directory: Path, nodes: int, sources: int, skew: float, seed: int) -> dict[str, Any]:
    """Draw the graph case by case and stream it to CSV files; return its shape.

    Per label one data file for Neo4j (lists joined by ';') and one for LadybugDB
    (lists as [a,b]); per (relationship, from label, to label) one file of id pairs.
    """
    marker = directory / "graph.json"
    if marker.is_file():
        shape = json.loads(marker.read_text())
        if shape["args"] == {"nodes": nodes, "sources": sources, "skew": skew, "seed": seed}:
            console.print(f"reusing the graph CSV in {directory}")
            return shape
    shutil.rmtree(directory, ignore_errors=True)
    (directory / "neo4j").mkdir(parents=True)
    (directory / "ladybug").mkdir()
    (directory / "rels").mkdir()
    schema = graph_schema()
    started = time.perf_counter()
    maker = _Maker(random.Random(seed), sources=sources, skew=skew)
    files: dict[Any, Any] = {}
    writers: dict[Any, Any] = {}
    seen: set[str] = set()
    by_label: dict[str, int] = defaultdict(int)
    by_rel: dict[str, int] = defaultdict(int)

    def writer(key: Any, path: Path) -> Any:
        if key not in writers:
            files[key] = path.open("w", newline="")
            writers[key] = csv.writer(files[key])
        return writers[key]

    def add(records: list[Any]) -> int:
        added = 0
        for record in records:
            for node in (record, *record.implied_all()):
                if node.id in seen:
                    continue
                seen.add(node.id)
                added += 1
                label = node.LABEL
                by_label[label] += 1
                row = node_row(node)
                columns = ["id", "kind", "body", "written_at", *schema.nodes[label]]
                writer(("n", label), directory / "neo4j" / f"{label}.csv").writerow(
                    [";".join(v) if isinstance(v := row.get(c), list) else _cell(v) for c in columns])
                writer(("l", label), directory / "ladybug" / f"{label}.csv").writerow(
                    ["[" + ",".join(v) + "]" if isinstance(v := row.get(c), list) else _cell(v) for c in columns])
                for rel, target in node.edges():
                    dst = label_of(kind_of(target))
                    by_rel[rel] += 1
                    writer(("r", rel, label, dst), directory / "rels" / f"{rel}.{label}.{dst}.csv").writerow([node.id, target])
        return added

    with Progress(TextColumn("drawing the graph"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  TimeRemainingColumn(), console=console) as bar:  # fmt: skip
        task = bar.add_task("graph", total=nodes)
        bar.advance(task, add(maker.shared()))
        cases = 0
        while len(seen) < nodes:
            bar.advance(task, add(maker.case(cases)))
            cases += 1
    for handle in files.values():
        handle.close()
    for label in by_label:
        columns = schema.nodes[label]
        header = ["id:ID", "kind", "body", "written_at", *(f"{c}:{NEO4J_TYPES[t]}" for c, t in columns.items())]
        (directory / "neo4j" / f"{label}.header.csv").write_text(",".join(header) + "\n")
    shape = {
        "args": {"nodes": nodes, "sources": sources, "skew": skew, "seed": seed},
        "nodes": len(seen), "rels": sum(by_rel.values()), "cases": cases,
        "by_label": dict(sorted(by_label.items())), "by_rel": dict(sorted(by_rel.items())),
        "sources": [s.id for s in maker.sources], "draw_seconds": round(time.perf_counter() - started, 1),
    }  # fmt: skip
    marker.write_text(json.dumps(shape))
    return shape


def _cell(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return value


# ---------------------------------------------------------------------- loading


def _neo4j_local(home: Path, port: int, heap: str, pagecache: str) -> Callable[..., subprocess.CompletedProcess[str]]:
    """scripts/neo4j_local.py on the benchmark's own server directory and port."""
    env = dict(os.environ, GAF_NEO4J_HOME=str(home), GAF_NEO4J_PORT=str(port),
               GAF_NEO4J_HEAP=heap, GAF_NEO4J_PAGECACHE=pagecache)  # fmt: skip
    env.pop("NEO4J_PASSWORD", None)

    def run(*args: str, capture: bool = False) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, str(ROOT / "scripts" / "neo4j_local.py"), *args], env=env, text=True,
                              capture_output=capture, check=True)  # fmt: skip

    return run


def load_neo4j(directory: Path, shape: dict[str, Any], args: argparse.Namespace) -> tuple[GafStore, dict[str, Any]]:
    local = _neo4j_local(Path(args.neo4j_home), args.port, args.heap, args.pagecache)
    loaded = Path(args.neo4j_home) / "loaded.json"
    fresh = not (loaded.is_file() and json.loads(loaded.read_text()) == shape["args"])
    meta: dict[str, Any] = {}
    if fresh:
        local("stop")
        started = time.perf_counter()
        files = []
        for label in shape["by_label"]:
            files.append(f"--nodes={label}={directory / 'neo4j' / f'{label}.header.csv'},{directory / 'neo4j' / f'{label}.csv'}")
        (directory / "rels.header.csv").write_text(":START_ID,:END_ID\n")
        for path in sorted((directory / "rels").glob("*.csv")):
            rel = path.name.split(".")[0]
            files.append(f"--relationships={rel}={directory / 'rels.header.csv'},{path}")
        console.print(f"neo4j-admin database import full: {shape['nodes']:,} nodes, {shape['rels']:,} relationships")
        local("admin", "database", "import", "full", "neo4j", "--overwrite-destination=true", "--array-delimiter=;",
              "--skip-bad-relationships=false", "--threads=2", f"--report-file={directory / 'import.report'}", *files)  # fmt: skip
        meta["import_seconds"] = round(time.perf_counter() - started, 1)
    local("start")
    env = dict(line.split("=", 1) for line in local("env", capture=True).stdout.split() if "=" in line)
    env = {k.removeprefix("export "): v.strip("'\"") for k, v in env.items()}
    from gaf.store.neo4j import Neo4jStore

    store = Neo4jStore(env["NEO4J_URI"], user=env["NEO4J_USER"], password=env["NEO4J_PASSWORD"])
    if fresh:
        started = time.perf_counter()
        store.init()  # gaf's uniqueness constraints and indexes, built over the imported graph
        meta["index_seconds"] = round(time.perf_counter() - started, 1)
        loaded.write_text(json.dumps(shape["args"]))
    meta.update(uri=env["NEO4J_URI"], heap=args.heap, pagecache=args.pagecache)
    with store._driver.session(database=store.database) as session:
        record = session.run("CALL dbms.components() YIELD versions RETURN versions[0] AS v").single()
        meta["version"] = record["v"]
        counts = session.run("MATCH (n) WHERE NOT n:SchemaVersion AND NOT n:LogEntry WITH count(n) AS n "
                             "MATCH (a)-[r]->() WHERE NOT a:LogEntry RETURN n, count(r) AS r").single()  # the store's own records
    _check_counts(shape, counts["n"], counts["r"], "neo4j")
    return store, meta


def load_ladybug(directory: Path, shape: dict[str, Any], args: argparse.Namespace) -> tuple[GafStore, dict[str, Any]]:
    from gaf.store.ladybug import LadybugStore

    path = Path(args.ladybug_dir) / "store"
    loaded = Path(args.ladybug_dir) / "loaded.json"
    meta: dict[str, Any] = {}
    if not (loaded.is_file() and json.loads(loaded.read_text()) == shape["args"]):
        shutil.rmtree(args.ladybug_dir, ignore_errors=True)
        Path(args.ladybug_dir).mkdir(parents=True)
        started = time.perf_counter()
        store = LadybugStore(path)  # declares the tables
        conn = store._conn
        for label in shape["by_label"]:
            conn.execute(f"COPY {label} FROM '{directory / 'ladybug' / f'{label}.csv'}' (header=false)")
        for file in sorted((directory / "rels").glob("*.csv")):
            rel, src, dst = file.name.split(".")[:3]
            conn.execute(f"COPY `{rel}` FROM '{file}' (from='{src}', to='{dst}', header=false)")
        meta["copy_seconds"] = round(time.perf_counter() - started, 1)
        loaded.write_text(json.dumps(shape["args"]))
    else:
        store = LadybugStore(path)
    # the version stamp and the write log are about the store, not the imported graph
    nodes = store.read("MATCH (n) WHERE NOT label(n) IN ['SchemaVersion', 'LogEntry'] RETURN count(n) AS n")[0]["n"]
    rels = store.read("MATCH (a)-[r]->() WHERE label(a) <> 'LogEntry' RETURN count(r) AS n")[0]["n"]
    _check_counts(shape, nodes, rels, "ladybug")
    import ladybug

    meta["version"] = getattr(ladybug, "__version__", "?")
    return store, meta


def _check_counts(shape: dict[str, Any], nodes: int, rels: int, store: str) -> None:
    if (nodes, rels) != (shape["nodes"], shape["rels"]):
        raise SystemExit(f"{store} holds {nodes:,} nodes and {rels:,} relationships; the graph has "
                         f"{shape['nodes']:,} and {shape['rels']:,}")  # fmt: skip
    console.print(f"{store}: {nodes:,} nodes, {rels:,} relationships loaded")


# ---------------------------------------------------------------------- the two walks


#: Per label, the relationships through which a record of that label is depended on —
#: written out here from the record model (dependent -[REL]-> dependency), not taken from
#: impact/analysis.py, so that a relationship the walk forgot is a disagreement.
BASELINE_RELS = {
    "Source": "FROM_SOURCE",
    "Claim": "REFUTED_BY|SUPPORTED_BY",
    "Evaluation": "JUSTIFIED_BY|USED",
    "AcceptedFact": "CONTAINS|USED",
    "Derivation": "INCLUDES|JUSTIFIED_BY",
    "GAF": "CLOSES",
    "Closure": "DECIDES",
    "Verdict": "EXECUTES",
    "Completeness": "ASSUMES_COMPLETE|RELIED_ON_ABSENCE",
    "Proposition": "EVALUATES|LEAVES_UNRESOLVED|REJECTS",
    "Action": "COMPENSATES",
}


def baseline_walk(store: GafStore, source: str) -> tuple[set[str], int]:
    """Breadth-first, one query per record reached, all in one read transaction (so the
    baseline pays for round trips, not for transactions): the reachable ids and the query count."""

    def walk(tx: Any) -> tuple[set[str], int]:
        seen = {source}
        frontier = [source]
        queries = 0
        while frontier:
            found = []
            for rid in frontier:
                label = label_of(kind_of(rid))
                rels = BASELINE_RELS.get(label)
                if rels is None:
                    continue
                queries += 1
                for row in tx.run(f"MATCH (t:{label} {{id: $id}})<-[:{rels}]-(x) RETURN x.id AS id", {"id": rid}):
                    if row["id"] not in seen:
                        seen.add(row["id"])
                        found.append(row["id"])
            frontier = found
        return seen, queries

    return store._read(walk)


def dependency_walk(store: GafStore, source: str) -> set[str]:
    """The store's dependency question alone, as impact's walk asks it, in one snapshot, with none
    of the report's other work (statuses, support counting, paths): ``Questions.reach`` (the whole
    expansion in the store and its edges; on Neo4j also the siblings of the facts it reached) where
    the store answers it, else breadth-first through ``Questions.dependents`` (one batched question per
    label per level)."""
    from impact.analysis import DEPENDENCY, Limits

    limits = Limits()

    def work(q: Any) -> set[str]:
        reach = q.reach([source], DEPENDENCY, depth=limits.depth, cap=limits.count + 1)
        if reach is not None:
            return {source} | {d for _, d, _ in reach.edges}
        seen = {source}
        frontier = [source]
        while frontier:
            frontier = sorted({d for _, d, _ in q.dependents(frontier, DEPENDENCY)} - seen)
            seen.update(frontier)
        return seen

    reached: set[str] = store.snapshot(work)
    return reached


def source_invalidated(store: GafStore, source: str) -> ImpactReport:
    """The walk tier of ``impact.source_invalidated``."""
    return walk(store, {source: "positive"}, trigger={"kind": "source_invalidated", "id": source}, required=source)


def measure(store: GafStore, name: str, sources: list[str], warmup: list[str]) -> dict[str, Any]:
    """Latency of gaf's report and of the baseline walk for each source, checked against each other."""
    for source in warmup:
        source_invalidated(store, source)
        baseline_walk(store, source)
    rows = []
    with Progress(TextColumn(f"{name}: impact source"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  TimeRemainingColumn(), console=console) as bar:  # fmt: skip
        task = bar.add_task(name, total=len(sources))
        for i, source in enumerate(sources):
            # Touch the source's subgraph once, unmeasured, so that neither variant pays for
            # pulling its pages into the page cache on the other's behalf: warm latency.
            baseline_walk(store, source)
            order = ("gaf", "dependents", "baseline") if i % 2 == 0 else ("baseline", "dependents", "gaf")
            took: dict[str, float] = {}
            for variant in order:
                started = time.perf_counter()
                if variant == "gaf":
                    report = source_invalidated(store, source)
                elif variant == "dependents":
                    asked = dependency_walk(store, source)
                else:
                    reached, queries = baseline_walk(store, source)
                took[variant] = time.perf_counter() - started
            affected = {a.id for a in report.affected}
            expected = {r for r in reached if r != source and kind_of(r) in REPORTED}
            if not report.complete or affected != expected:
                raise SystemExit(f"{name}: gaf and the baseline disagree on {source}: "
                                 f"{len(affected ^ expected)} records differ")  # fmt: skip
            if {r for r in asked if r != source and kind_of(r) in REPORTED} != expected:
                raise SystemExit(f"{name}: the dependency question and the baseline disagree on {source}")
            rows.append({"source": source, "dependents": len(affected), "gaf_ms": took["gaf"] * 1000,
                         "dependents_ms": took["dependents"] * 1000,
                         "baseline_ms": took["baseline"] * 1000, "baseline_queries": queries})  # fmt: skip
            bar.advance(task)
    return summarise(rows)


def summarise(rows: list[dict[str, Any]]) -> dict[str, Any]:
    def stats(subset: list[dict[str, Any]], key: str) -> dict[str, float] | None:
        if not subset:
            return None
        values = sorted(r[key] for r in subset)
        return {"p50": round(statistics.median(values), 2), "p95": round(_percentile(values, 95), 2),
                "max": round(values[-1], 2), "n": len(values)}  # fmt: skip

    small = [r for r in rows if r["dependents"] <= GOAL_DEPENDENTS]
    out: dict[str, Any] = {"rows": rows}
    for scope, subset in (("all", rows), ("le_1000", small), ("gt_1000", [r for r in rows if r["dependents"] > GOAL_DEPENDENTS])):
        gaf, base = stats(subset, "gaf_ms"), stats(subset, "baseline_ms")
        asked = stats(subset, "dependents_ms") if subset and "dependents_ms" in subset[0] else None
        out[scope] = {"gaf": gaf, "baseline": base, "question": asked,
                      "question_vs_baseline": {p: round(base[p] / asked[p], 2) for p in ("p50", "p95")} if asked and base else None,
                      "speedup_p50": round(base["p50"] / gaf["p50"], 1) if gaf and base else None,
                      "speedup_total": round(sum(r["baseline_ms"] for r in subset) / sum(r["gaf_ms"] for r in subset), 1) if subset else None,
                      "dependents": stats(subset, "dependents")}  # fmt: skip
    return out


def _percentile(values: list[float], pct: float) -> float:
    """Nearest-rank percentile of sorted values."""
    rank = max(1, -(-len(values) * pct // 100))
    return values[int(rank) - 1]


# ---------------------------------------------------------------------- printing


def show(result: dict[str, Any]) -> None:
    shape = result["graph"]
    out = Console(width=160)
    out.print(f"graph: {shape['nodes']:,} nodes, {shape['rels']:,} relationships, {shape['cases']:,} cases, "
              f"{len(shape['sources']):,} sources (Zipf skew {shape['args']['skew']}); "
              f"load average {result['machine']['load_before'][0]:.1f} before, {result['machine'].get('load_after', [0])[0]:.1f} after")  # fmt: skip
    table = Table(title=f"gaf impact source — latency in ms over {result['args']['queries']} random sources")
    columns = ("store", "sources", "dependents p50/max", "gaf p50", "gaf p95", "base p50", "base p95", "×p50", "×total",
               "question p50", "question p95", "base ÷ question p50/p95")  # fmt: skip
    for column in columns:
        table.add_column(column, justify="left" if column in ("store", "sources") else "right")
    for store, res in result["stores"].items():
        for scope, title in (("all", "all"), ("le_1000", "≤1,000 dep."), ("gt_1000", ">1,000 dep.")):
            s = res[scope]
            if not s["gaf"]:
                continue
            table.add_row(store, f"{title} ({s['gaf']['n']})", f"{s['dependents']['p50']:g} / {s['dependents']['max']:g}",
                          f"{s['gaf']['p50']:.1f}", f"{s['gaf']['p95']:.1f}", f"{s['baseline']['p50']:.1f}",
                          f"{s['baseline']['p95']:.1f}", f"{s['speedup_p50']}", f"{s['speedup_total']}",
                          *_question_cells(s))  # fmt: skip
    out.print(table)
    out.print("base = one query per record reached (Python BFS through the same store); ×p50 = base p50 ÷ gaf p50; "
              "×total = base total ÷ gaf total; question = the store's dependency question alone "
              "(Questions.reach where the store answers it, else Questions.dependents level by level; one snapshot), "
              "without the report's other work")


def _question_cells(s: dict[str, Any]) -> list[str]:
    """The dependency question's columns (a result saved before it was measured has none)."""
    q, r = s.get("question"), s.get("question_vs_baseline")
    if not q or not r:
        return ["—", "—", "—"]
    return [f"{q['p50']:.1f}", f"{q['p95']:.1f}", f"{r['p50']:g} / {r['p95']:g}"]


# ---------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = argparse.ArgumentParser(prog="python -m bench impact", description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    parser.add_argument("--nodes", type=int, default=1_000_000)
    parser.add_argument("--sources", type=int, default=None, help="source pool (default: nodes / 50)")
    parser.add_argument("--skew", type=float, default=1.0, help="Zipf exponent of source use (0 = uniform)")
    parser.add_argument("--seed", type=int, default=20261130)
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--stores", default="neo4j,ladybug")
    parser.add_argument("--workdir", default="/tmp/gaf-bench-impact", help="graph CSV and the embedded store")
    parser.add_argument("--neo4j-home", default=None, help="benchmark server directory (default: WORKDIR/neo4j)")
    parser.add_argument("--port", type=int, default=7747)
    parser.add_argument("--heap", default="2g")
    parser.add_argument("--pagecache", default="3g")
    parser.add_argument("--keep-server", action="store_true", help="leave the benchmark Neo4j running")
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--report", type=Path, default=None, help="print a saved result and exit")
    args = parser.parse_args(argv)
    if args.report:
        show(json.loads(args.report.read_text()))
        return 0
    work = Path(args.workdir)
    args.neo4j_home = args.neo4j_home or str(work / "neo4j")
    args.ladybug_dir = str(work / "ladybug-store")
    sources = args.sources or max(40, args.nodes // 50)
    shape = write_csv(work / "csv", args.nodes, sources, args.skew, args.seed)
    picked = random.Random(args.seed).sample(shape["sources"], args.queries + args.warmup)
    warm, measured = picked[: args.warmup], picked[args.warmup :]
    result: dict[str, Any] = {
        "benchmark": "impact",
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "command": "python -m bench impact " + " ".join(argv),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "load_before": os.getloadavg()},
        "args": {k: v for k, v in vars(args).items() if k not in ("json", "report")} | {"sources": sources},
        "graph": shape,
        "stores": {},
        "loading": {},
    }
    for name in args.stores.split(","):
        loader = {"neo4j": load_neo4j, "ladybug": load_ladybug}[name]
        store, meta = loader(work / "csv", shape, args)
        try:
            result["loading"][name] = meta
            result["stores"][name] = measure(store, name, measured, warm)
        finally:
            store.close()
            if name == "neo4j" and not args.keep_server:
                _neo4j_local(Path(args.neo4j_home), args.port, args.heap, args.pagecache)("stop")
    result["machine"]["load_after"] = os.getloadavg()
    show(result)
    save_result(result, args.json, console)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
