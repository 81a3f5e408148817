"""OpenLineage events in, three ways, into empty stores: the same store each way, and how fast.

    python -m bench lineage [--events 10000] [--stores ladybug,neo4j] [--clients 4] [--batch 100] [--json out.json]

A recorded stream of ``--events`` OpenLineage RunEvents (``stream``: deterministic from
``--seed``) is written as NDJSON: dbt-like jobs over a DAG of datasets, each run a START then a
COMPLETE (or a FAIL), with the facets gaf maps (schema, outputStatistics, dataQualityAssertions,
columnLineage) and ones it keeps whole (jobType, processing_engine, errorMessage and an unknown
``gafBench_cost``). Then on each store, each run into an empty store, same machine, same run:

- **plain** — the baseline: the equivalent gaf items (what ``gaf.lineage.event_items`` makes of
  each event, written beforehand as gaf JSONL) through ``gaf.ledger.ingest``;
- **ingest** — ``gaf.ledger.ingest(..., fmt="openlineage")`` of the NDJSON (``gaf ingest --format
  openlineage``);
- **http** — ``POST /api/v1/lineage`` to a ``gaf serve`` process of its own, ``--clients``
  threads each posting one event a request (as the OpenLineage HTTP transport sends them);
- **http_batched** — the same with ``--batch`` events a request (a JSON list); 0 skips it.

Reported: events per second of each, the ratios ingest/plain and http/plain beside their goals
(≥ 0.8 and ≥ 0.5, issue 25), whether every run left the same store (the same record ids, kind
by kind), and that nothing was lost (every id an HTTP answer reported written or existing is
stored). Every run passes the same recorded time (``?at=`` over HTTP), so the ids can agree.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import tempfile
import threading
import time
import uuid
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from bench import add_store_options, chosen_stores, open_neo4j, save_result
from bench.api import ROOT, _serve
from bench.checks import _open as open_bench_store

console = Console(stderr=True)

#: When the stream begins; every event is before RECORDED, the time every run records them at.
BEGIN = datetime(2026, 11, 1, tzinfo=timezone.utc)
RECORDED = datetime(2026, 12, 1, tzinfo=timezone.utc)
PRODUCER = "https://github.com/OpenLineage/OpenLineage/tree/1.40.0/integration/dbt"
SPEC = "https://openlineage.io/spec/2-0-2/OpenLineage.json"
WAREHOUSE = "duckdb://warehouse"
#: The goals of issue 25: each run's events per second over the plain ingest's.
GOALS = {"ingest": 0.8, "http": 0.5}
RUNS = ("plain", "ingest", "http", "http_batched")


# ---------------------------------------------------------------------- the recorded stream


def _facet(schema: str, **body: Any) -> dict[str, Any]:
    return {"_producer": PRODUCER, "_schemaURL": f"{SPEC}#/$defs/{schema}", **body}


def _pipeline(rng: random.Random, sources: int, models: int) -> list[dict[str, Any]]:
    """The DAG: ``sources`` seed tables, then ``models`` models each reading one to three tables
    made before it; every table with its columns (name, type)."""
    types = ("INTEGER", "VARCHAR", "DATE", "DECIMAL(18,2)", "BOOLEAN")
    tables: list[dict[str, Any]] = []
    for i in range(sources + models):
        name = f"main.raw_{i:03d}" if i < sources else f"main.model_{i - sources:03d}"
        columns = [("id", "INTEGER")] + [(f"col_{c}", rng.choice(types)) for c in range(rng.randint(2, 6))]
        reads = [] if i < sources else sorted(rng.sample(range(i), rng.randint(1, min(3, i))))
        tables.append({"name": name, "columns": columns, "reads": reads})
    return tables


def _dataset(table: dict[str, Any]) -> dict[str, Any]:
    fields = [{"name": n, "type": t} for n, t in table["columns"]]
    return {"namespace": WAREHOUSE, "name": table["name"], "facets": {"schema": _facet("SchemaDatasetFacet", fields=fields)}}


def stream(events: int, seed: int = 25, *, sources: int = 8, models: int = 40) -> list[dict[str, Any]]:
    """``events`` OpenLineage RunEvents, the same for the same seed: the pipeline's models run in
    order again and again, each run a START naming what it reads, then a COMPLETE (what it wrote,
    with row counts, schema, dbt tests as assertions and column lineage) or, one run in 15, a FAIL;
    the stream is cut after ``events``. Times rise from BEGIN, a few seconds an event."""
    rng = random.Random(seed)
    tables = _pipeline(rng, sources, models)
    out: list[dict[str, Any]] = []
    at = BEGIN
    while len(out) < events:
        for i, table in enumerate(tables[sources:], start=sources):
            run = {"runId": str(uuid.UUID(int=rng.getrandbits(128), version=4)),
                   "facets": {"processing_engine": _facet("ProcessingEngineRunFacet", version="1.9.1", name="dbt", openlineageAdapterVersion="1.40.0")}}  # fmt: skip
            job = {"namespace": "dbt", "name": f"jaffle.{table['name']}",
                   "facets": {"jobType": _facet("JobTypeJobFacet", processingType="BATCH", integration="DBT", jobType="MODEL")}}  # fmt: skip
            inputs = [_dataset(tables[r]) for r in table["reads"]]
            base = {"producer": PRODUCER, "schemaURL": f"{SPEC}#/$defs/RunEvent", "job": job, "inputs": inputs}
            at += timedelta(seconds=rng.randint(1, 5))
            out.append({**base, "eventType": "START", "eventTime": at.isoformat().replace("+00:00", "Z"), "run": run, "outputs": []})
            at += timedelta(seconds=rng.randint(1, 30))
            end = {**base, "eventTime": at.isoformat().replace("+00:00", "Z")}
            if rng.randrange(15) == 0:
                failed = {**run, "facets": {**run["facets"], "errorMessage": _facet("ErrorMessageRunFacet", message="Database Error in model", programmingLanguage="SQL")}}  # fmt: skip
                out.append({**end, "eventType": "FAIL", "run": failed, "outputs": []})
            else:
                out.append({**end, "eventType": "COMPLETE", "run": run, "outputs": [_output(rng, tables, table)]})
            if len(out) >= events:
                break
    return out[:events]


def _output(rng: random.Random, tables: list[dict[str, Any]], table: dict[str, Any]) -> dict[str, Any]:
    """What a model wrote: its schema, row and byte counts, its dbt tests and its columns' lineage."""
    out = _dataset(table)
    rows = rng.randint(0, 5_000_000)
    columns = [n for n, _ in table["columns"]]
    tests = [{"assertion": "not_null", "success": rng.random() > 0.05, "column": "id"},
             {"assertion": "unique", "success": rng.random() > 0.05, "column": "id"}]  # fmt: skip
    tests += [{"assertion": "accepted_values", "success": rng.random() > 0.1, "column": rng.choice(columns)}]
    lineage = {c: {"inputFields": [{"namespace": WAREHOUSE, "name": tables[r]["name"], "field": rng.choice([n for n, _ in tables[r]["columns"]])}
                                   for r in table["reads"]]} for c in columns}  # fmt: skip
    out["facets"] |= {
        "outputStatistics": _facet("OutputStatisticsOutputDatasetFacet", rowCount=rows, size=rows * rng.randint(40, 400)),
        "dataQualityAssertions": _facet("DataQualityAssertionsDatasetFacet", assertions=tests),
        "columnLineage": _facet("ColumnLineageDatasetFacet", fields=lineage),
        "gafBench_cost": _facet("GafBenchCostFacet", credits=round(rng.random() * 10, 3), warehouse="xs"),  # unknown: kept whole
    }
    return out


def write_stream(events: list[dict[str, Any]], ndjson: Path, jsonl: Path) -> None:
    """The stream as NDJSON, and the equivalent gaf items (``event_items`` of each) as gaf JSONL."""
    from gaf.lineage import event_items

    ndjson.write_text("".join(json.dumps(e, ensure_ascii=False) + "\n" for e in events))
    with jsonl.open("w") as f:
        for i, event in enumerate(events, start=1):
            for item in event_items(event, at=RECORDED, where=f"event {i}"):
                f.write(json.dumps(item, ensure_ascii=False) + "\n")


# ---------------------------------------------------------------------- the runs


def _post_all(url: str, secret: str, bodies: list[Any], clients: int) -> dict[str, Any]:
    """Every body posted to /api/v1/lineage by ``clients`` threads (body i by thread i mod
    clients), each with its own connection; the ids each answer reported, and every failure."""
    import httpx

    lock = threading.Lock()
    answered: set[str] = set()
    errors: list[str] = []

    def worker(c: int) -> None:
        with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {secret}"}, timeout=300) as client:
            for body in bodies[c::clients]:
                try:
                    answer = client.post("/api/v1/lineage", json=body, params={"at": RECORDED.isoformat()})
                    found = answer.json() if answer.status_code == 201 else None
                    if found is None:
                        raise RuntimeError(f"{answer.status_code} {answer.text[:200]}")
                    with lock:
                        answered.update(found["written_ids"], found["existing_ids"])
                except Exception as exc:  # noqa: BLE001 - every failure is the finding
                    with lock:
                        errors.append(f"{type(exc).__name__}: {exc}"[:300])

    threads = [threading.Thread(target=worker, args=(c,)) for c in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return {"answered": answered, "errors": errors}


def _held(store: Any) -> dict[str, set[str]]:
    """Every record id the store holds, by kind."""
    return {kind: set(store.ids(kind)) for kind, n in sorted(store.counts().items()) if n}


def one_run(kind: str, name: str, tmp: Path, events: list[dict[str, Any]], files: dict[str, Path], clients: int, batch: int,
            empty: bool) -> tuple[dict[str, Any], dict[str, set[str]]]:  # fmt: skip
    """One run into an empty store: its seconds and events per second, and the ids it left by kind."""
    where = tmp / name
    where.mkdir()
    store = open_bench_store(kind, where, empty)
    if name in ("plain", "ingest"):
        from gaf.ledger import ingest

        try:
            started = time.perf_counter()
            report = ingest(store, files["jsonl" if name == "plain" else "ndjson"], recorded_at=RECORDED,
                            fmt="jsonl" if name == "plain" else "openlineage", keep_ids=0)  # fmt: skip
            took = time.perf_counter() - started
            return _rate({"events": len(events), "seconds": took, "written": report.written}), _held(store)
        finally:
            store.close()
    target = store.location
    store.close()
    return _over_http(kind, name, where, target, events, clients, batch)


def _over_http(kind: str, name: str, where: Path, target: str, events: list[dict[str, Any]], clients: int,
               batch: int) -> tuple[dict[str, Any], dict[str, set[str]]]:  # fmt: skip
    """The events posted to a ``gaf serve`` of their own, one a request (``http``) or ``batch`` a
    request (``http_batched``); then the store opened again: every id an answer reported is held."""
    from gaf.web import Role, Tokens

    tokens = where / "tokens.json"
    secret = Tokens(tokens).create(agent="agent:bench-lineage", role=Role.writer, at=RECORDED).secret
    env = {**os.environ, "GAF_TOKENS": str(tokens), "PYTHONPATH": str(ROOT)}
    bodies: list[Any] = list(events) if name == "http" else [events[i : i + batch] for i in range(0, len(events), batch)]
    server, url = _serve(target, env)
    try:
        started = time.perf_counter()
        posted = _post_all(url, secret, bodies, clients)
        took = time.perf_counter() - started
    finally:
        server.terminate()
        server.wait(timeout=60)
    reopened = open_bench_store(kind, where, False) if kind == "ladybug" else open_neo4j(again=True)
    try:
        held = _held(reopened)
    finally:
        reopened.close()
    lost = sorted(posted["answered"] - set().union(*held.values()))
    out = {"events": len(events), "seconds": took, "clients": clients, "requests": len(bodies), "errors": len(posted["errors"]),
           "error_examples": posted["errors"][:3],
           "nothing_lost": {"answered": len(posted["answered"]), "lost": len(lost), "lost_examples": lost[:5], "ok": not lost}}  # fmt: skip
    if name == "http_batched":
        out["batch"] = batch
    return _rate(out), held


def _rate(out: dict[str, Any]) -> dict[str, Any]:
    out["seconds"] = round(out["seconds"], 3)
    out["per_s"] = round(out["events"] / out["seconds"], 1) if out["seconds"] else None
    return out


def one_store(kind: str, tmp: Path, events: list[dict[str, Any]], files: dict[str, Path], clients: int, batch: int,
              empty_neo4j: bool) -> dict[str, Any]:  # fmt: skip
    """The runs on one store, each into an empty store; their rates, ratios and the same-store check."""
    out: dict[str, Any] = {}
    held: dict[str, dict[str, set[str]]] = {}
    names = [n for n in RUNS if n != "http_batched" or batch > 0]
    for i, name in enumerate(names):
        console.print(f"{kind}: {name}, {len(events):,} events")
        # Neo4j: the first run empties the database only when told it may; the later ones empty what this bench wrote
        out[name], held[name] = one_run(kind, name, tmp, events, files, clients, batch, empty_neo4j or i > 0)
    plain = out["plain"]["per_s"]
    out["ratios"] = {n: round(out[n]["per_s"] / plain, 2) if plain else None for n in names if n != "plain"}
    out["goals_met"] = {n: out["ratios"][n] is not None and out["ratios"][n] >= goal for n, goal in GOALS.items()}
    out["same_store"] = same_store(held)
    return out


def same_store(held: dict[str, dict[str, set[str]]]) -> dict[str, Any]:
    """Whether every run left the same records: the same ids, kind by kind, as the plain ingest."""
    base = held["plain"]
    differ = {}
    for name, ids in held.items():
        kinds = sorted(set(base) | set(ids))
        diff = {k: {"missing": len(base.get(k, set()) - ids.get(k, set())), "extra": len(ids.get(k, set()) - base.get(k, set()))}
                for k in kinds if base.get(k, set()) != ids.get(k, set())}  # fmt: skip
        if diff:
            differ[name] = diff
    return {"counts": {name: {k: len(v) for k, v in ids.items()} for name, ids in held.items()},
            "records": {name: sum(len(v) for v in ids.values()) for name, ids in held.items()}, "differ": differ, "ok": not differ}  # fmt: skip


def run(stores: list[str], events: int, clients: int, batch: int, seed: int = 25, empty_neo4j: bool = False) -> dict[str, Any]:
    out: dict[str, Any] = {"events": events, "seed": seed, "clients": clients, "batch": batch, "goals": GOALS, "cpus": os.cpu_count(),
                           "load_average": {"start": list(os.getloadavg())}, "stores": {}}  # fmt: skip
    recorded = stream(events, seed)
    with tempfile.TemporaryDirectory(prefix="gaf-bench-lineage-") as tmp:
        files = {"ndjson": Path(tmp) / "events.ndjson", "jsonl": Path(tmp) / "items.jsonl"}
        write_stream(recorded, files["ndjson"], files["jsonl"])
        out["bytes"] = {k: p.stat().st_size for k, p in files.items()}
        out["event_types"] = {t: sum(e["eventType"] == t for e in recorded) for t in ("START", "COMPLETE", "FAIL")}
        for kind in stores:
            store_dir = Path(tmp) / kind
            store_dir.mkdir()
            out["stores"][kind] = one_store(kind, store_dir, recorded, files, clients, batch, empty_neo4j)
    out["load_average"]["end"] = list(os.getloadavg())
    out["ok"] = all(s["same_store"]["ok"] and all(s[n].get("errors", 0) == 0 and s[n].get("nothing_lost", {"ok": True})["ok"]
                                                  for n in RUNS if n in s) for s in out["stores"].values())  # fmt: skip
    return out


def report(result: dict[str, Any]) -> None:
    t = Table(title=f"OpenLineage in: {result['events']:,} events, {result['clients']} HTTP clients")
    for column in ("store", "run", "seconds", "events/s", "× plain", "goal", "errors", "lost"):
        t.add_column(column, justify="left" if column in ("store", "run") else "right")
    for kind, found in result["stores"].items():
        for name in RUNS:
            if name not in found:
                continue
            r = found[name]
            goal = GOALS.get(name)
            t.add_row(kind, name if name != "http_batched" else f"http, {r['batch']} a request", f"{r['seconds']:,}", f"{r['per_s']:,}",
                      str(found["ratios"].get(name, "1.0")), f"≥ {goal}" if goal else "", str(r.get("errors", "")),
                      str(r["nothing_lost"]["lost"]) if "nothing_lost" in r else "")  # fmt: skip
    console.print(t)
    for kind, found in result["stores"].items():
        same = found["same_store"]
        console.print(f"{kind}: records {same['records']}; " + ("every run left the same store" if same["ok"] else f"DIFFER {same['differ']}"))
    console.print(f"load average at start {result['load_average']['start']}, at end {result['load_average']['end']}")


# boilerplate: a benchmark's entry point — its options, the run, the report, the saved result.
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench lineage", description=__doc__.split("\n\n")[0])
    add_store_options(parser)
    parser.add_argument("--events", type=int, default=10_000, help="how many OpenLineage events the recorded stream holds")
    parser.add_argument("--clients", type=int, default=4, help="concurrent HTTP clients")
    parser.add_argument("--batch", type=int, default=100, help="events a request in the batched HTTP run (0: no such run)")
    parser.add_argument("--seed", type=int, default=25, help="the stream's seed")
    args = parser.parse_args(argv)
    stores = chosen_stores(args, console)
    if stores is None:
        return 2
    result = run(stores, args.events, args.clients, args.batch, args.seed, args.empty_neo4j)
    report(result)
    save_result(result, args.json, console)
    return 0 if result["ok"] else 1
