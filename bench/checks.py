"""The price of the safety checks: auditor queries parsed and planned, and ``gaf verify`` (plain and deep).

    python -m bench checks [--stores ladybug,neo4j] [--claims 100000] [--repeat 30] [--json out.json]

On each store, through the library: the rent story (SPEC.md §12: its claims, policy and rules,
two closures, the second superseding the first), then ``--claims`` more claims (payments, one
statement each, from one source the policy trusts) ingested to give verify a store of size.

Measured, per store:

- every query of the auditor library (queries/library), ``--repeat`` times each, three ways:
  the parse alone (``queries.runner.check_read_only``), the query alone (``store.read`` — the
  baseline, no checks), and the whole read-only path (``queries.run``: parse, on Neo4j the
  server's plan through EXPLAIN, then the query): p50 and p95 of each, and the path's overhead
  over the query alone;
- ``verify`` and ``verify --deep`` of the whole store: seconds and records per second.

Neo4j is used when NEO4J_URI (with NEO4J_USER / NEO4J_PASSWORD) names a server whose database is
empty (or ``--empty-neo4j``: emptied first).
Run it alone: the machine's other work is the noise.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from bench import add_store_options, chosen_stores, open_neo4j, percentiles, save_result

ROOT = Path(__file__).resolve().parent.parent
RENT = ROOT / "examples" / "rent"
AT = datetime(2026, 7, 21, tzinfo=timezone.utc)
BEFORE_E = datetime(2026, 7, 15, tzinfo=timezone.utc)
SUBJECT = "rent:lease-17/2026-07"
console = Console(stderr=True)


def build(store: Any, claims: int) -> dict[str, Any]:
    """The rent story and ``claims`` more payment claims; the query parameters the library needs."""
    from gaf.closure import close
    from gaf.ledger import ingest
    from gaf.policies import publish, read_policy, read_rules
    from gaf.projection import project
    from gaf.records import Claim

    ingest(store, RENT / "claims.yaml", recorded_at=BEFORE_E)
    policy = publish(store, read_policy(store, RENT / "policy.yaml"), at=BEFORE_E)
    rules = publish(store, read_rules(RENT / "verdict-rules.yaml"), at=BEFORE_E)
    (clerk,) = store.find("agent", key="registry-clerk")
    first = project(store, policy, as_of=BEFORE_E, reviewer=clerk.id, at=BEFORE_E)
    c1 = close(store, first.gaf.id, rules, subject=SUBJECT, as_of=BEFORE_E, closed_at=BEFORE_E)
    ingest(store, RENT / "claim-e.yaml", recorded_at=AT)
    second = project(store, policy, as_of=AT, reviewer=clerk.id, at=AT)
    c2 = close(store, second.gaf.id, rules, subject=SUBJECT, as_of=AT, closed_at=AT, supersedes=[c1.closure.id])
    (bank,) = store.find("source", key="bank-ledger")
    (observer,) = store.find("agent", key="registry-clerk")
    seen = AT - timedelta(days=1)
    batch: list[Claim] = []
    for i in range(claims):
        batch.append(Claim(source=bank.id, observer=observer.id, observed_at=seen, recorded_at=seen, transformation="api_export",
                           statements=[{"subject": f"payment:bench-{i:07d}", "predicate": "paid", "polarity": "affirmed"}]))  # fmt: skip
        if len(batch) == 5000 or i == claims - 1:
            store.put(batch, at=AT)
            batch = []
    return {"subject": SUBJECT, "as_of": "2026-07-16T00:00:00.000Z", "reviewer": "registry-clerk",
            "policy": policy.name, "version": policy.version, "old": c1.closure.id, "new": c2.closure.id,
            "closure": c2.closure.id, "source": "bank-ledger"}  # fmt: skip


def _quantiles(samples: list[float]) -> dict[str, float]:
    """p50 and p95 of timings in seconds, as milliseconds."""
    found = percentiles([x * 1000 for x in samples])
    return {"p50_ms": found["p50"], "p95_ms": found["p95"]}


def _timed(work: Callable[[], Any], repeat: int) -> list[float]:
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        work()
        samples.append(time.perf_counter() - started)
    return samples


def measure(store: Any, params: dict[str, Any], repeat: int) -> dict[str, Any]:
    """Every library query three ways, then verify and verify --deep."""
    from gaf.verify import verify
    from queries import runner

    rows = []
    for name, query in sorted(runner.load().items()):
        cypher = query.for_dialect(store.dialect)
        given = {k: params[k] for k in query.params}
        alone = runner.run(store, query, given)  # the answer the path gives, and a warm-up
        assert store.read(cypher, given) == alone, name  # the path changes nothing about the answer
        parse = _timed(lambda: runner.check_read_only(cypher), repeat)  # noqa: B023 (timed at once)
        base = _timed(lambda: store.read(cypher, given), repeat)  # noqa: B023
        path = _timed(lambda: runner.run(store, query, given), repeat)  # noqa: B023
        rows.append({"query": name, "rows": len(alone), "parse": _quantiles(parse), "query_alone": _quantiles(base),
                     "read_only_path": _quantiles(path),
                     "overhead_p50_ms": round((statistics.median(path) - statistics.median(base)) * 1000, 3)})  # fmt: skip
    started = time.perf_counter()
    plain = verify(store)
    plain_s = time.perf_counter() - started
    started = time.perf_counter()
    deep = verify(store, deep=True)
    deep_s = time.perf_counter() - started
    return {
        "queries": rows,
        "verify": {"records": plain.checked, "seconds": round(plain_s, 2), "records_per_s": round(plain.checked / plain_s),
                   "ok": plain.ok},  # fmt: skip
        "verify_deep": {"records": deep.checked, "closures_replayed": deep.replayed, "seconds": round(deep_s, 2),
                        "records_per_s": round(deep.checked / deep_s), "ok": deep.ok},  # fmt: skip
    }


def _open(kind: str, tmp: Path, empty_neo4j: bool) -> Any:
    from gaf.store.ladybug import LadybugStore

    if kind == "ladybug":
        return LadybugStore(tmp / "store.lbug")
    return open_neo4j(empty_neo4j)


def run(stores: list[str], claims: int, repeat: int, empty_neo4j: bool = False) -> dict[str, Any]:
    out: dict[str, Any] = {"claims_added": claims, "repeat": repeat, "load_average": {"start": list(os.getloadavg())}, "stores": {}}
    for kind in stores:
        with tempfile.TemporaryDirectory(prefix="gaf-bench-checks-") as tmp:
            store = _open(kind, Path(tmp), empty_neo4j)
            try:
                console.print(f"{kind}: building the rent story and {claims:,} claims")
                params = build(store, claims)
                out["stores"][kind] = measure(store, params, repeat)
            finally:
                store.close()
    out["load_average"]["end"] = list(os.getloadavg())
    out["ok"] = all(s["verify"]["ok"] and s["verify_deep"]["ok"] for s in out["stores"].values())
    return out


def report(result: dict[str, Any]) -> None:
    for kind, found in result["stores"].items():
        t = Table(title=f"{kind}: auditor queries, {result['repeat']} runs each (ms)")
        for col in ("query", "rows", "parse p50/p95", "query alone p50/p95", "read-only path p50/p95", "overhead p50"):
            t.add_column(col, justify="left" if col == "query" else "right")
        for r in found["queries"]:
            t.add_row(r["query"], str(r["rows"]), f"{r['parse']['p50_ms']}/{r['parse']['p95_ms']}",
                      f"{r['query_alone']['p50_ms']}/{r['query_alone']['p95_ms']}",
                      f"{r['read_only_path']['p50_ms']}/{r['read_only_path']['p95_ms']}", str(r["overhead_p50_ms"]))  # fmt: skip
        console.print(t)
        v, d = found["verify"], found["verify_deep"]
        console.print(f"{kind}: verify {v['records']:,} records in {v['seconds']} s ({v['records_per_s']:,}/s); "
                      f"--deep {d['seconds']} s, {d['closures_replayed']} closures replayed ({d['records_per_s']:,} records/s)")  # fmt: skip
    console.print(f"load average at start {result['load_average']['start']}, at end {result['load_average']['end']}")


# boilerplate: a benchmark's entry point — its options, the run, the report, the saved result.
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench checks", description=__doc__.split("\n\n")[0])
    add_store_options(parser)
    parser.add_argument("--claims", type=int, default=100_000, help="payment claims added beside the rent story")
    parser.add_argument("--repeat", type=int, default=30, help="runs of each query, each way")
    args = parser.parse_args(argv)
    stores = chosen_stores(args, console)
    if stores is None:
        return 2
    result = run(stores, args.claims, args.repeat, args.empty_neo4j)
    result["python"] = sys.version.split()[0]
    report(result)
    save_result(result, args.json, console)
    return 0 if result["ok"] else 1
