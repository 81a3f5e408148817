"""OpenLineage in: ``python -m bench lineage --events 10000``.

A recorded stream of OpenLineage events, made deterministically from a seed in the shape
``dbt-ol`` really emits (examples/pipeline/README.md): invocations of a dbt project over a
DAG of models, each invocation a parent run, each model a run (START, then COMPLETE or now
and then FAIL) writing its dataset with ``schema``, ``columnLineage``, ``outputStatistics``
and ``dbt_model`` facets and reading the models upstream, and each model's tests a run of
their own whose input carries ``dataQualityAssertions`` (a failure now and then).

On each store, three ingests of the same stream into an empty store, in the same run:
the plain ingest of the equivalent gaf items (what ``gaf.lineage.event_items`` makes of
each event, as gaf JSONL: the baseline), ``gaf.ledger.ingest(..., fmt="openlineage")`` of
the NDJSON, and ``POST /api/v1/lineage`` through a real ``gaf serve`` with N concurrent
clients, one event a request, as the OpenLineage HTTP transport sends them. Events per
second for each, the ratios against the goals (openlineage ≥ 0.8× plain, HTTP ≥ 0.5×), and
the check that the three leave the same store: the same record ids, kind by kind.
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
from bench.api import _serve

ROOT = Path(__file__).resolve().parent.parent
console = Console(stderr=True)
#: When the stream starts; it is ingested a day after its last event (passed in, as everywhere in gaf).
START = datetime(2026, 10, 1, tzinfo=timezone.utc)
PRODUCER = "https://github.com/OpenLineage/OpenLineage/tree/1.54.0/integration/dbt"
NAMESPACE = "duckdb://warehouse.duckdb"
#: The project's models: name → the models it reads (a DAG, in build order).
MODELS = {
    "stg_orders": [], "stg_payments": [], "stg_customers": [],
    "orders_enriched": ["stg_orders", "stg_customers"], "payments_by_order": ["stg_payments"],
    "daily_revenue": ["orders_enriched", "payments_by_order"], "quarterly": ["daily_revenue"],
    "revenue_report": ["quarterly"], "customer_ltv": ["orders_enriched", "payments_by_order"],
}  # fmt: skip
COLUMNS = ("id", "amount", "day", "customer", "status")
TESTS = ("not_null", "unique", "accepted_values", "relationships", "positive")


def _uuid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def _dataset(model: str) -> dict[str, str]:
    return {"namespace": NAMESPACE, "name": f"warehouse.main.{model}"}


def _event(kind: str, at: datetime, job: str, run: str, parent: str | None, **rest: Any) -> dict[str, Any]:
    facets: dict[str, Any] = {"dbt_version": {"_producer": PRODUCER, "_schemaURL": "https://openlineage.io/spec/facets/1-0-0/DbtVersionRunFacet.json", "version": "1.10.23"}}  # fmt: skip
    if parent is not None:
        facets["parent"] = {"_producer": PRODUCER, "_schemaURL": "https://openlineage.io/spec/facets/1-0-0/ParentRunFacet.json",
                            "run": {"runId": parent}, "job": {"namespace": "dbt", "name": "dbt-run-warehouse"}}  # fmt: skip
    return {"eventType": kind, "eventTime": at.strftime("%Y-%m-%dT%H:%M:%S.%fZ"), "producer": PRODUCER,
            "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
            "run": {"runId": run, "facets": facets}, "job": {"namespace": "dbt", "name": job}, **rest}  # fmt: skip


def events(n: int, seed: int = 7) -> list[dict[str, Any]]:
    """``n`` events (the last invocation cut where the count is reached), the same for a seed."""
    rng = random.Random(seed)
    out: list[dict[str, Any]] = []
    at = START
    while len(out) < n:
        parent = _uuid(rng)
        out.append(_event("START", at, "dbt-run-warehouse", parent, None))
        for model, reads in MODELS.items():
            run, tests = _uuid(rng), _uuid(rng)
            inputs = [_dataset(r) for r in reads]
            at += timedelta(seconds=rng.randint(1, 30))
            out.append(_event("START", at, f"warehouse.main.{model}.build.run", run, parent, inputs=inputs))
            at += timedelta(seconds=rng.randint(1, 120), microseconds=rng.randint(0, 999_999))
            cols = rng.sample(COLUMNS, 3)
            output = _dataset(model) | {
                "facets": {"schema": {"_producer": PRODUCER, "_schemaURL": "s", "fields": [{"name": c, "type": rng.choice(("INTEGER", "DECIMAL(12,2)", "DATE", "VARCHAR"))} for c in cols]},
                           "columnLineage": {"_producer": PRODUCER, "_schemaURL": "s", "fields": {c: {"inputFields": [{"namespace": NAMESPACE, "name": f"warehouse.main.{r}", "field": c} for r in reads]} for c in cols if reads}},
                           "dbt_model": {"_producer": PRODUCER, "_schemaURL": "s", "materialization": rng.choice(("table", "view")), "tags": []}},
                "outputFacets": {"outputStatistics": {"_producer": PRODUCER, "_schemaURL": "s", "rowCount": rng.randint(0, 10**7), "size": rng.randint(0, 10**10)}},
            }  # fmt: skip
            failed = rng.random() < 0.03
            out.append(_event("FAIL" if failed else "COMPLETE", at, f"warehouse.main.{model}.build.run", run, parent, inputs=inputs,
                              outputs=[] if failed else [output]))  # fmt: skip
            if failed:
                continue
            at += timedelta(seconds=rng.randint(1, 30))
            assertions = [{"assertion": t, "column": rng.choice(cols), "success": rng.random() > 0.05, "severity": "error"}
                          for t in rng.sample(TESTS, rng.randint(1, 3))]  # fmt: skip
            tested = _dataset(model) | {"facets": {"dataQualityAssertions": {"_producer": PRODUCER, "_schemaURL": "s", "assertions": assertions}}}
            out.append(_event("START", at, f"warehouse.main.{model}.build.test", tests, parent, inputs=[tested]))
            out.append(_event("COMPLETE", at + timedelta(seconds=1), f"warehouse.main.{model}.build.test", tests, parent, inputs=[tested]))
        at += timedelta(minutes=rng.randint(5, 600))
        out.append(_event("COMPLETE", at, "dbt-run-warehouse", parent, None))
        at += timedelta(hours=rng.randint(1, 24))
    return out[:n]


def write_ndjson(stream: list[dict[str, Any]], path: Path) -> Path:
    with path.open("w", encoding="utf-8") as f:
        for e in stream:
            f.write(json.dumps(e, ensure_ascii=False) + "\n")
    return path


def write_items(stream: list[dict[str, Any]], path: Path, at: datetime) -> Path:
    """The gaf items the events become, as gaf's own JSONL: the plain ingest's input."""
    from gaf.lineage import event_items

    with path.open("w", encoding="utf-8") as f:
        for i, e in enumerate(stream):
            for item in event_items(e, at=at, where=f"event {i}"):
                f.write(json.dumps(item, ensure_ascii=False) + "\n")
    return path


def stored_ids(store: Any) -> dict[str, list[str]]:
    """Every record id by kind, but the store's own (its version stamp, its write log)."""
    from gaf.records import RECORD_TYPES

    return {kind: sorted(store.ids(kind)) for kind, cls in sorted(RECORD_TYPES.items()) if not cls.ABOUT_THE_STORE}


# ---------------------------------------------------------------------- the three ingests


def _fresh(kind: str, tmp: Path, name: str) -> Any:
    """An empty store for one way in: an embedded one of its own, or the Neo4j database emptied
    (``run`` has checked that it held nothing, or was told it may be emptied)."""
    return _ladybug(tmp / name) if kind == "ladybug" else open_neo4j(True)


def _ladybug(where: Path) -> Any:
    from gaf.store.ladybug import LadybugStore

    where.mkdir(parents=True, exist_ok=True)
    return LadybugStore(where / "store.lbug")


def library_ingest(kind: str, tmp: Path, name: str, path: Path, fmt: str | None, at: datetime) -> tuple[float, dict[str, list[str]]]:
    from gaf.ledger import ingest

    store = _fresh(kind, tmp, name)
    try:
        started = time.perf_counter()
        ingest(store, path, recorded_at=at, fmt=fmt)
        took = time.perf_counter() - started
        return took, stored_ids(store)
    finally:
        store.close()


def http_ingest(kind: str, tmp: Path, stream: list[dict[str, Any]], clients: int, at: datetime) -> tuple[float, dict[str, list[str]], int]:
    """``POST /api/v1/lineage``, one event a request, ``clients`` at a time; the seconds, the ids
    stored, and how many requests failed."""
    import httpx

    from gaf.records import Agent
    from gaf.web import Role, Tokens

    store = _fresh(kind, tmp, "http")
    steward = Agent(key="bench-steward", name="the bench's data steward", agent_type="software")
    store.put([steward], at=at)
    target = store.location
    store.close()
    tokens = tmp / "tokens.json"
    secret = Tokens(tokens).create(agent=steward.id, role=Role.writer, at=at).secret
    env = {**os.environ, "GAF_TOKENS": str(tokens), "PYTHONPATH": str(ROOT)}
    server, url = _serve(target, env)
    failed: list[str] = []
    lock = threading.Lock()
    try:
        def worker(c: int) -> None:
            with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {secret}"}, timeout=120) as client:
                for e in stream[c::clients]:
                    answer = client.post("/api/v1/lineage", json=e, params={"at": at.isoformat()})
                    if answer.status_code != 201:
                        with lock:
                            failed.append(f"{answer.status_code} {answer.text[:200]}")

        started = time.perf_counter()
        threads = [threading.Thread(target=worker, args=(c,)) for c in range(clients)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        took = time.perf_counter() - started
    finally:
        server.terminate()
        server.wait(timeout=60)
    again = _ladybug(tmp / "http") if kind == "ladybug" else open_neo4j(again=True)
    try:
        ids = stored_ids(again)
    finally:
        again.close()
    ids["agent"] = [i for i in ids["agent"] if i != steward.id]  # the token's agent, not the stream's
    return took, ids, len(failed)


def one_store(kind: str, tmp: Path, stream: list[dict[str, Any]], clients: int) -> dict[str, Any]:
    at = datetime.fromisoformat(stream[-1]["eventTime"].replace("Z", "+00:00")) + timedelta(days=1)
    ndjson, items = write_ndjson(stream, tmp / "events.ndjson"), write_items(stream, tmp / "items.jsonl", at)
    console.print(f"{kind}: plain ingest of the equivalent gaf items")
    plain_s, plain = library_ingest(kind, tmp, "plain", items, None, at)
    console.print(f"{kind}: gaf ingest --format openlineage")
    ol_s, ol = library_ingest(kind, tmp, "openlineage", ndjson, "openlineage", at)
    console.print(f"{kind}: POST /api/v1/lineage, {clients} clients")
    http_s, http, failed = http_ingest(kind, tmp, stream, clients, at)
    n = len(stream)
    rate = {"plain": round(n / plain_s, 1), "openlineage": round(n / ol_s, 1), "http": round(n / http_s, 1)}
    return {
        "seconds": {"plain": round(plain_s, 2), "openlineage": round(ol_s, 2), "http": round(http_s, 2)},
        "events_per_s": rate,
        "ratios": {"openlineage_over_plain": round(rate["openlineage"] / rate["plain"], 2), "http_over_plain": round(rate["http"] / rate["plain"], 2)},
        "goals": {"openlineage_over_plain": 0.8, "http_over_plain": 0.5},
        "records": {k: len(v) for k, v in ol.items() if v},
        "same_store": {"openlineage_is_plain": ol == plain, "http_is_openlineage": http == ol, "http_failed_requests": failed},
    }  # fmt: skip


def run(stores: list[str], n: int, clients: int, seed: int = 7, empty_neo4j: bool = False) -> dict[str, Any]:
    if "neo4j" in stores:
        open_neo4j(empty_neo4j).close()  # refuses a database that holds nodes, unless told to empty it
    stream = events(n, seed)
    out: dict[str, Any] = {"events": n, "seed": seed, "clients": clients, "cpus": os.cpu_count(),
                           "load_average": {"start": list(os.getloadavg())}, "stores": {}}  # fmt: skip
    for kind in stores:
        with tempfile.TemporaryDirectory(prefix="gaf-bench-lineage-") as tmp:
            out["stores"][kind] = one_store(kind, Path(tmp), stream, clients)
    out["load_average"]["end"] = list(os.getloadavg())
    out["ok"] = all(s["same_store"]["openlineage_is_plain"] and s["same_store"]["http_is_openlineage"]
                    and not s["same_store"]["http_failed_requests"] for s in out["stores"].values())  # fmt: skip
    return out


def report(result: dict[str, Any]) -> None:
    t = Table(title=f"OpenLineage in: {result['events']:,} events ({result['clients']} HTTP clients)")
    for column in ("store", "way in", "seconds", "events/s", "× plain", "goal"):
        t.add_column(column, justify="left" if column in ("store", "way in") else "right")
    for kind, found in result["stores"].items():
        ratio = {"plain": "1.00", "openlineage": str(found["ratios"]["openlineage_over_plain"]), "http": str(found["ratios"]["http_over_plain"])}
        goal = {"plain": "", "openlineage": "≥ 0.8", "http": "≥ 0.5"}
        for way in ("plain", "openlineage", "http"):
            t.add_row(kind, way, str(found["seconds"][way]), f"{found['events_per_s'][way]:,}", ratio[way], goal[way])
    console.print(t)
    for kind, found in result["stores"].items():
        same = found["same_store"]
        console.print(f"{kind}: {sum(found['records'].values()):,} records; the same store every way in: "
                      f"{same['openlineage_is_plain'] and same['http_is_openlineage']} ({same['http_failed_requests']} requests refused)")  # fmt: skip
    console.print(f"load average at start {result['load_average']['start']}, at end {result['load_average']['end']}")


# boilerplate: a benchmark's entry point — its options, the run, the report, the saved result.
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench lineage", description=__doc__.split("\n\n")[0])
    add_store_options(parser)
    parser.add_argument("--events", type=int, default=10_000, help="how many events the stream holds")
    parser.add_argument("--clients", type=int, default=4, help="concurrent HTTP clients")
    parser.add_argument("--seed", type=int, default=7, help="the stream's seed: the same seed, the same events")
    args = parser.parse_args(argv)
    stores = chosen_stores(args, console)
    if stores is None:
        return 2
    result = run(stores, args.events, args.clients, args.seed, args.empty_neo4j)
    report(result)
    save_result(result, args.json, console)
    return 0 if result["ok"] else 1
