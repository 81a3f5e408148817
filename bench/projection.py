"""Projection benchmarks: ``python -m bench.projection {cone,rules} --help``.

Two claims of gaf's design, each measured beside a baseline from the same run:

``cone``
    The work of evaluating a question follows the question's *cone* (the claims
    about its subjects and predicates), not the size of the ledger. Ledgers of
    several sizes are built deterministically: the rent case (examples/rent) plus
    synthetic claims about *other* leases, instalments, payments and accounts, with
    the same predicates and from the same sources. The fixed question (the rent
    policy with exact scope subjects) is evaluated on each; the figure is the time
    ratio largest/smallest, and the GAF id must be the same at every size. The
    reference beside it is a ledger-wide query over the same predicates, which does
    follow the ledger.

``rules``
    A recursive rule (transitive control over ownership) over a synthetic
    ownership forest, evaluated semi-naively and naively (the baseline) by
    ``gaf.derive.evaluate_rules`` over the same in-memory fact base; both must
    derive the same facts. ``--profile`` runs semi-naive under cProfile and prints
    the hotspots.

Neo4j connection: $NEO4J_URI, $NEO4J_USER, $NEO4J_PASSWORD (see
docs/benchmarks-projection.md for a private server). The Neo4j database is
emptied between ledger sizes: it must be empty or carry this benchmark's marker
node, or the run refuses to touch it.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import io
import json
import os
import platform
import pstats
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
RENT = ROOT / "examples" / "rent"
#: The transaction time the rent case is ingested at (as in the tests).
NOW = datetime(2026, 11, 30, 12, 0, tzinfo=timezone.utc)
#: After claim E was recorded: the question is asked as of then.
AS_OF = datetime(2026, 7, 21, tzinfo=timezone.utc)
#: The fixed question's subjects, exact (the stock policy has "payment:*").
CONE_SUBJECTS = ["rent:lease-17/2026-07", "lease:17", "payment:tx-4471"]
#: Claims in examples/rent/claims.yaml (A-D) and claim-e.yaml (E).
RENT_CLAIMS = 5
MARKER = "GafBenchProjection"


# ====================================================================== shared helpers


def machine() -> dict[str, Any]:
    info: dict[str, Any] = {
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "platform": platform.platform(),
    }
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                info["cpu"] = line.split(":", 1)[1].strip()
                break
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                info["ram_gib"] = round(int(line.split()[1]) / 2**20, 1)
    except OSError:
        pass
    try:
        info["git"] = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=False
        ).stdout.strip()
    except OSError:
        pass
    try:
        import neo4j

        info["neo4j_driver"] = neo4j.__version__
    except Exception:  # pragma: no cover - informational only
        pass
    try:
        import ladybug

        info["ladybug"] = getattr(ladybug, "__version__", "?")
    except Exception:  # pragma: no cover
        pass
    return info


def load_average() -> list[float]:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return []


def other_busy_processes(threshold: float = 20.0) -> list[str]:
    """Processes other than this one using more than ``threshold`` % CPU (to say the machine was shared)."""
    try:
        out = subprocess.run(
            ["ps", "-eo", "pid,pcpu,args", "--sort=-pcpu"], capture_output=True, text=True, check=False
        ).stdout.splitlines()[1:]
    except OSError:
        return []
    busy = []
    for line in out:
        pid, pcpu, args = line.strip().split(None, 2)
        if int(pid) == os.getpid() or float(pcpu) < threshold or args.startswith("ps -eo"):
            continue
        busy.append(f"{pid} {pcpu}% {args[:110]}")
    return busy


def median_time(fn: Callable[[], Any], runs: int, warmup: int) -> tuple[float, list[float], Any]:
    for _ in range(warmup):
        fn()
    times = []
    result = None
    for _ in range(runs):
        gc.collect()
        t = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), times, result


def table(headers: list[str], rows: list[list[Any]]) -> str:
    cells = [[str(h) for h in headers]] + [[str(c) for c in r] for r in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    lines = []
    for n, row in enumerate(cells):
        lines.append("  ".join(c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(row, widths))))
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f}"


# ====================================================================== 1. the cone


def synthetic_claims(count: int, seed: int, ids: dict[str, str]) -> Iterator[Any]:
    """``count`` claims about leases, instalments, payments and accounts other than the rent case's.

    Deterministic for (count, seed): a stream of "leases", each with a contract
    claim, and per month an instalment, a bank-ledger claim for its payment,
    often a transfer receipt allocating it, and now and then a party's message.
    Same predicates and sources as the rent case; never its subjects (lease 17,
    payment tx-4471), so the fixed question's cone does not grow. Every claim and
    every proposition is distinct.
    """
    from gaf.records import Claim

    rng = random.Random(seed)
    made = 0
    lease = 1000
    payment = 100_000

    def claim(source: str, observer: str, observed: datetime, transformation: str, statements: list[dict]) -> Claim:
        recorded = observed + timedelta(hours=rng.randint(1, 24 * 20))
        return Claim(
            source=ids[source],
            observer=ids[observer],
            observed_at=observed,
            recorded_at=recorded,
            transformation=transformation,
            statements=statements,
        )

    while True:
        lease += 1
        lid = f"lease:{lease}"
        amount = rng.randrange(500, 2500, 50)
        landlord_account = f"account:landlord-{lease}"
        tenant_account = f"account:tenant-{lease}"
        signed = datetime(2025, 1, 1, tzinfo=timezone.utc) + timedelta(days=rng.randint(0, 540))
        unit = [
            claim("contract-registry", "registry-clerk", signed, "document", [
                {"subject": lid, "predicate": "rent_amount", "value": amount},
                {"subject": lid, "predicate": "rent_due_day", "value": rng.randint(1, 28)},
                {"subject": lid, "predicate": "tenant", "object": f"tenant:{lease}"},
                {"subject": lid, "predicate": "landlord", "object": f"landlord:{lease % 997}"},
                {"subject": lid, "predicate": "landlord_account", "object": landlord_account},
            ]),
            claim("contract-registry", "registry-clerk", signed, "document", [
                {"subject": tenant_account, "predicate": "registered_account_of", "object": f"tenant:{lease}"},
            ]),
        ]  # fmt: skip
        for month in range(1, 13):
            instalment = f"rent:lease-{lease}/2026-{month:02d}"
            due = datetime(2026, month, 1, tzinfo=timezone.utc)
            payment += 1
            pid = f"payment:tx-{payment}"
            paid_at = due + timedelta(days=rng.randint(0, 20), minutes=rng.randint(0, 1439))
            unit.append(claim("contract-registry", "registry-clerk", signed, "document", [
                {"subject": instalment, "predicate": "instalment_of", "object": lid},
            ]))  # fmt: skip
            paid = amount if rng.random() < 0.9 else amount - 50
            unit.append(claim("bank-ledger", "bank", paid_at + timedelta(days=1), "api_export", [
                {"subject": pid, "predicate": "credited_to", "object": landlord_account},
                {"subject": pid, "predicate": "amount", "value": paid},
            ]))  # fmt: skip
            if rng.random() < 0.5:
                unit.append(claim("transfer-receipts", "bank", paid_at, "document", [
                    {"subject": pid, "predicate": "allocated_to", "object": instalment},
                ]))  # fmt: skip
            roll = rng.random()
            if roll < 0.125:
                unit.append(claim("landlord-messages", "landlord-a", due + timedelta(days=10), "message", [
                    {"subject": instalment, "predicate": "paid", "polarity": "denied"},
                ]))  # fmt: skip
            elif roll < 0.25:
                unit.append(claim("tenant-messages", "tenant-b", due + timedelta(days=11), "message", [
                    {"subject": instalment, "predicate": "paid"},
                ]))  # fmt: skip
        for c in unit:
            if made == count:
                return
            made += 1
            yield c


def cone_policy(store: Any) -> Any:
    """The rent policy with exact scope subjects (its "payment:*" would match every synthetic payment)."""
    from gaf.policies import policy_from_dict

    data = yaml.safe_load((RENT / "policy.yaml").read_text(encoding="utf-8"))
    data["scope"]["subjects"] = list(CONE_SUBJECTS)
    return policy_from_dict(store, data, where="bench cone policy")


def key_ids(store: Any) -> dict[str, str]:
    out = {}
    for kind, keys in (
        ("source", ["landlord-messages", "tenant-messages", "bank-ledger", "contract-registry", "transfer-receipts"]),
        ("agent", ["landlord-a", "tenant-b", "bank", "registry-clerk"]),
    ):
        for key in keys:
            (record,) = store.find(kind, key=key)
            out[key] = record.id
    return out


def build_ledger(store: Any, size: int, seed: int, batch: int, log: Callable[[str], None]) -> dict[str, Any]:
    """The rent case (with claim E) and ``size - 5`` synthetic claims, through ``store.put``."""
    from gaf.ledger import ingest

    started = time.perf_counter()
    ingest(store, RENT / "claims.yaml", recorded_at=NOW)
    ingest(store, RENT / "claim-e.yaml", recorded_at=NOW)
    ids = key_ids(store)
    pending: list[Any] = []
    written = 0
    build_s = put_s = 0.0
    last_log = time.perf_counter()
    stream = synthetic_claims(size - RENT_CLAIMS, seed, ids)
    while True:
        t = time.perf_counter()
        pending = [c for _, c in zip(range(batch), stream)]
        build_s += time.perf_counter() - t
        if not pending:
            break
        t = time.perf_counter()
        report = store.put(pending, at=NOW)
        put_s += time.perf_counter() - t
        if len(report.written) != len(pending):
            raise RuntimeError(f"expected {len(pending)} new claims, {len(report.written)} written (duplicates in the generator?)")
        written += len(pending)
        if time.perf_counter() - last_log > 30:
            rate = written / (time.perf_counter() - started)
            log(f"    {written:,}/{size - RENT_CLAIMS:,} synthetic claims ({rate:,.0f}/s)")
            last_log = time.perf_counter()
    return {
        "synthetic_claims": written,
        "claims": written + RENT_CLAIMS,
        "build_s": round(build_s, 1),
        "put_s": round(put_s, 1),
        "total_s": round(time.perf_counter() - started, 1),
    }


# A query that does follow the ledger, for contrast: every claim stating one of the
# cone's predicates, about any subject, recorded by the cut-off.
LEDGER_WIDE = (
    "MATCH (p:Proposition) WHERE p.predicate IN $predicates "
    "MATCH (c:Claim)-[:ASSERTS]->(p) WHERE c.recorded_at <= $cutoff RETURN count(DISTINCT c) AS n"
)


def measure_cone(store: Any, runs: int, warmup: int, reference_runs: int) -> dict[str, Any]:
    from gaf.projection import cone_claims, cone_predicates, evaluate, evaluate_over
    from gaf.types import format_instant

    policy = cone_policy(store)
    total, total_times, evaluated = median_time(lambda: evaluate(store, policy, as_of=AS_OF), runs, warmup)
    query, query_times, claims = median_time(lambda: cone_claims(store, policy, AS_OF), runs, warmup)
    memory, _, _ = median_time(lambda: evaluate_over(policy, claims, as_of=AS_OF), runs, warmup)
    # The baseline in the same run: the cone's two statements as a store before schema version 7
    # asks them (by the propositions' subject column), on the same ledger; the same claims.
    column, column_times, column_rows = median_time(lambda: _by_subject_column(store, policy), runs, warmup)
    keyed = store.cone_claims(sorted(CONE_SUBJECTS), [], sorted(cone_predicates(policy)))
    if sorted({r["id"] for r in column_rows}) != [c.id for c in keyed]:
        raise RuntimeError("the cone read by the subject column and through the subject keys differ")
    params = {"predicates": sorted(cone_predicates(policy)), "cutoff": format_instant(AS_OF)}
    wide, wide_times, rows = (
        median_time(lambda: store.read(LEDGER_WIDE, params), reference_runs, 1) if reference_runs else (None, [], [{"n": None}])
    )
    gaf = evaluated.gaf()
    return {
        "evaluate_s": total,
        "evaluate_runs_s": total_times,
        "cone_query_s": query,
        "cone_query_runs_s": query_times,
        "in_memory_s": memory,
        "column_query_s": column,
        "column_query_runs_s": column_times,
        "cone_claims": len(evaluated.claims),
        "evaluations": len(evaluated.evaluations),
        "candidates": len(evaluated.candidates),
        "unresolved": len(evaluated.unresolved),
        "gaf": gaf.id,
        "policy": policy.id,
        "ledger_wide_s": wide,
        "ledger_wide_runs_s": wide_times,
        "ledger_wide_claims": rows[0]["n"],
    }


def _by_subject_column(store: Any, policy: Any) -> list[dict[str, Any]]:
    """The cone's claims read as schema version 6 reads them (``_CONE_EXACT``), both statements."""
    from gaf.projection import cone_predicates
    from gaf.store.questions import _CONE_EXACT

    params = {"subjects": sorted(CONE_SUBJECTS), "predicates": sorted(cone_predicates(policy))}
    return [row for cypher in _CONE_EXACT.values() for row in store.read(cypher, params)]


def neo4j_driver() -> Any:
    import neo4j

    uri = os.environ.get("NEO4J_URI")
    if not uri:
        raise SystemExit("NEO4J_URI is not set: start a private server and eval its env (see docs/benchmarks-projection.md)")
    user = os.environ.get("NEO4J_USER") or os.environ.get("NEO4J_USERNAME") or "neo4j"
    driver = neo4j.GraphDatabase.driver(uri, auth=(user, os.environ.get("NEO4J_PASSWORD", "")))
    driver.verify_connectivity()
    return driver


def _neo4j_holds(driver: Any, size: int) -> bool:
    """Whether the database holds this benchmark's ledger of ``size`` claims (for --reuse)."""
    with driver.session() as session:
        marked = session.run(f"MATCH (m:{MARKER}) RETURN count(m) AS n").single()["n"]
        claims = session.run("MATCH (c:Claim) RETURN count(c) AS n").single()["n"]
    return bool(marked) and claims == size


def wipe_neo4j(driver: Any) -> None:
    """Empty the benchmark's database; refuse one that holds data and no benchmark marker."""
    with driver.session() as session:
        marked = session.run(f"MATCH (m:{MARKER}) RETURN count(m) AS n").single()["n"]
        other = session.run(f"MATCH (n) WHERE NOT n:{MARKER} RETURN count(n) > 0 AS any").single()["any"]
        if other and not marked:
            raise SystemExit(
                "NEO4J_URI points at a database with data and no benchmark marker; refusing to empty it. "
                "Point the benchmark at a private, empty server."
            )
        session.run("MATCH (n) CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 10000 ROWS").consume()
        session.run(f"CREATE (:{MARKER})").consume()


def _cone_params(store: Any) -> dict[str, Any]:
    from gaf.projection import cone_predicates
    from gaf.types import format_instant

    policy = cone_policy(store)
    return {"subjects": CONE_SUBJECTS, "predicates": sorted(cone_predicates(policy)), "cutoff": format_instant(AS_OF)}


def _walk(plan: Any, out: list[dict[str, Any]]) -> None:
    args = plan.get("args", {})
    out.append({
        "op": plan.get("operatorType", "?").split("@")[0], "details": args.get("Details", ""),
        "db_hits": args.get("DbHits"), "rows": args.get("Rows"), "estimated_rows": args.get("EstimatedRows"),
        "leaf": not plan.get("children"),
    })  # fmt: skip
    for child in plan.get("children", []):
        _walk(child, out)


def neo4j_plan(driver: Any, store: Any, *, profile: bool) -> dict[str, Any]:
    """The plan of the two cone queries: EXPLAIN shows the one in the plan cache, PROFILE runs it too.

    Returns, per relationship (ASSERTS/DENIES), where the plan starts (its leaf
    operators) and, when profiled, the total database hits.
    """
    from gaf.records import SubjectKey
    from gaf.store.questions import _CONE_KEYED

    params = {**_cone_params(store), "ids": sorted(SubjectKey(subject=s).id for s in CONE_SUBJECTS)}
    out: dict[str, Any] = {}
    with driver.session() as session:
        for rel, (_, cypher) in _CONE_KEYED.items():
            summary = session.run(("PROFILE " if profile else "EXPLAIN ") + cypher, params).consume()
            ops: list[dict[str, Any]] = []
            _walk(summary.profile if profile else summary.plan, ops)
            out[rel] = {
                "starts_at": [f"{o['op']} {o['details']}".strip() for o in ops if o["leaf"]],
                "db_hits": sum(int(o["db_hits"] or 0) for o in ops) if profile else None,
                "operators": ops,
            }
    return out


def plan_start(plan: dict[str, Any]) -> str:
    """A short name for where the cached ASSERTS plan starts: the index it seeks."""
    leaves = plan["ASSERTS"]["starts_at"]
    names = []
    for leaf in leaves:
        if "Proposition(subject)" in leaf:
            names.append("Proposition(subject)")
        elif "Claim(recorded_at)" in leaf:
            names.append("Claim(recorded_at)")
        elif "Unwind" in leaf:
            continue
        else:
            names.append(leaf.split(" ")[0])
    return "+".join(names) or "?"


# The ASSERTS cone query with the planner told where to start: the index on the
# question's subjects (the cone), or the one on recorded_at (every claim before
# the cut-off: the ledger). Both return the same rows.
HINTED = {
    "Proposition(subject)": "UNWIND $subjects AS s MATCH (p:Proposition {subject: s}) USING INDEX p:Proposition(subject) "
    "WHERE p.predicate IN $predicates MATCH (c:Claim)-[:ASSERTS]->(p) WHERE c.recorded_at <= $cutoff "
    "RETURN DISTINCT c.id AS id, c.body AS body",
    "Claim(recorded_at)": "UNWIND $subjects AS s MATCH (p:Proposition {subject: s}) WHERE p.predicate IN $predicates "
    "MATCH (c:Claim)-[:ASSERTS]->(p) USING INDEX c:Claim(recorded_at) WHERE c.recorded_at <= $cutoff "
    "RETURN DISTINCT c.id AS id, c.body AS body",
}


def neo4j_hinted(store: Any, runs: int) -> dict[str, Any]:
    """Median time of the ASSERTS cone query under each start the planner may choose."""
    params = _cone_params(store)
    out = {}
    rows_seen = set()
    for name, cypher in HINTED.items():
        median, times, rows = median_time(lambda: store.read(cypher, params), runs, 1)
        rows_seen.add(tuple(sorted(r["id"] for r in rows)))
        out[name] = {"seconds": median, "runs_s": times}
    out["same_rows"] = len(rows_seen) == 1
    return out


def neo4j_replan(driver: Any) -> None:
    """Resample the indexes and empty the plan cache: the next plan uses current statistics."""
    with driver.session() as session:
        session.run("CALL db.prepareForReplanning()").consume()


def run_cone(args: argparse.Namespace) -> dict[str, Any]:
    sizes = [int(s) for s in args.sizes.split(",")]
    stores = args.stores.split(",")
    log = _logger()
    out: dict[str, Any] = {"sizes": sizes, "stores": {}}
    for store_name in stores:
        results = []
        driver = neo4j_driver() if store_name == "neo4j" else None
        if driver is not None:
            with driver.session() as session:  # start from an empty plan cache: a known history
                session.run("CALL db.clearQueryCaches()").consume()
        for size in sizes:
            reuse = False
            if store_name == "neo4j":
                from gaf.store.neo4j import Neo4jStore

                reuse = args.reuse and _neo4j_holds(driver, size)
                if not reuse:
                    wipe_neo4j(driver)
                store = Neo4jStore(
                    os.environ["NEO4J_URI"],
                    user=os.environ.get("NEO4J_USER") or "neo4j",
                    password=os.environ.get("NEO4J_PASSWORD", ""),
                )
                store.init()
                where = None
            else:
                from gaf.store.ladybug import LadybugStore

                where = Path(args.tmp or tempfile.gettempdir()) / f"gaf-bench-cone-{size}-seed{args.seed}"
                reuse = args.reuse and (where / "store.lbug").exists()
                if not reuse:
                    shutil.rmtree(where, ignore_errors=True)
                store = LadybugStore(where / "store.lbug")
                if reuse and store.counts().get("claim") != size:
                    raise SystemExit(f"{where} does not hold a ledger of {size} claims; remove it or drop --reuse")
            try:
                log(f"[cone] {store_name}: {'reusing' if reuse else 'building'} a ledger of {size:,} claims")
                built = {"reused": True} if reuse else build_ledger(store, size, args.seed, args.batch, log)
                counts = store.counts()
                log(f"    {'reused' if reuse else 'built in ' + str(built['total_s']) + ' s'}; {counts.get('claim', 0):,} claims, "
                    f"{counts.get('proposition', 0):,} propositions; timing (load {load_average()})")
                load_before = load_average()
                row: dict[str, Any] = {"size": size, **built, "counts": counts, "load_before": load_before}
                if driver is not None:
                    # First as the server happens to plan it: the plan cache may hold a
                    # plan made for a smaller ledger (the cache outlives the wipe).
                    cached = measure_cone(store, args.runs, args.warmup, 0)
                    cached["plan"] = neo4j_plan(driver, store, profile=False)
                    row["cached_plan"] = cached
                    log(f"    with the plan in the cache ({plan_start(cached['plan'])}): evaluate median "
                        f"{ms(cached['evaluate_s'])} ms (cone query {ms(cached['cone_query_s'])} ms)")
                    neo4j_replan(driver)
                measured = measure_cone(store, args.runs, args.warmup, args.reference_runs)
                if driver is not None:
                    measured["plan"] = neo4j_plan(driver, store, profile=False)
                    measured["profile"] = neo4j_plan(driver, store, profile=True)
                    measured["hinted"] = neo4j_hinted(store, args.hint_runs) if args.hint_runs else None
                row.update(measured)
                row.update({"load_after": load_average(), "busy": other_busy_processes()})
                results.append(row)
                out["stores"][store_name] = results
                if getattr(args, "checkpoint", None):
                    args.checkpoint(out)
                log(f"    evaluate median {ms(measured['evaluate_s'])} ms (cone query {ms(measured['cone_query_s'])} ms); "
                    f"ledger-wide reference {ms(measured['ledger_wide_s'])} ms; gaf {measured['gaf']}")
            finally:
                store.close()
                if where is not None and not args.keep:
                    shutil.rmtree(where, ignore_errors=True)
        if driver is not None:
            if not args.keep:
                wipe_neo4j(driver)
            driver.close()
        out["stores"][store_name] = results
    print()
    print(cone_report(out))
    return out


def cone_report(out: dict[str, Any]) -> str:
    lines = []
    gafs = {r["gaf"] for rs in out["stores"].values() for r in rs}
    gafs |= {r["cached_plan"]["gaf"] for rs in out["stores"].values() for r in rs if "cached_plan" in r}
    for store_name, results in out["stores"].items():
        if not results:
            continue
        base = results[0]
        neo = "cached_plan" in base
        rows = []
        for r in results:
            row = [
                f"{r['size']:,}", f"{r['counts'].get('proposition', 0):,}", r["cone_claims"],
                ms(r["evaluate_s"]), ms(r["cone_query_s"]), ms(r["in_memory_s"]),
                f"{r['evaluate_s'] / base['evaluate_s']:.2f}x", ms(r["column_query_s"]),
            ]  # fmt: skip
            if neo:
                row += [plan_start(r["plan"]), r["profile"]["ASSERTS"]["db_hits"] + r["profile"]["DENIES"]["db_hits"]]
            row += [ms(r["ledger_wide_s"]), f"{r['ledger_wide_s'] / base['ledger_wide_s']:.1f}x"]
            if neo:
                c = r["cached_plan"]
                row += [ms(c["evaluate_s"]), plan_start(c["plan"])]
            row.append(r["gaf"][:16] + "…")
            rows.append(row)
        headers = ["claims", "propositions", "cone claims", "evaluate ms", "cone query ms", "in memory ms", "vs smallest",
                   "cone by subject column (schema 6) ms"]  # fmt: skip
        if neo:
            headers += ["plan starts at", "db hits"]
        headers += ["ledger-wide query ms", "vs smallest"]
        if neo:
            headers += ["evaluate ms, cached plan", "cached plan starts at"]
        headers.append("GAF id")
        lines.append(f"== {store_name}: evaluate(store, rent policy with exact subjects, as_of={AS_OF:%Y-%m-%d}) — "
                     "median of runs after warm-up" + ("; plans made with current statistics (db.prepareForReplanning)" if neo else ""))
        lines.append(table(headers, rows))
        last = results[-1]
        ratio = last["evaluate_s"] / base["evaluate_s"]
        lines.append(f"   largest/smallest: evaluate {ratio:.2f}x (goal < 3x: {'met' if ratio < 3 else 'NOT met'}); "
                     f"ledger-wide reference {last['ledger_wide_s'] / base['ledger_wide_s']:.1f}x; "
                     f"ledger grew {last['size'] / base['size']:.0f}x")
        if neo:
            c_ratio = last["cached_plan"]["evaluate_s"] / base["cached_plan"]["evaluate_s"]
            lines.append(f"   with whatever plan the cache held: largest/smallest {c_ratio:.2f}x")
            for r in results:
                h = r.get("hinted")
                if h:
                    lines.append(f"   {r['size']:,} claims, ASSERTS cone query forced to start at: " + "; ".join(
                        f"{k} {ms(v['seconds'])} ms" for k, v in h.items() if k != "same_rows")
                        + ("" if h["same_rows"] else " (DIFFERENT ROWS)"))
        lines.append("")
    lines.append(f"GAF id identical at every size and store: {'yes' if len(gafs) == 1 else 'NO'} ({', '.join(sorted(gafs))})")
    return "\n".join(lines)


# ====================================================================== 2. recursive rules


class OwnsFacts:
    """An in-memory fact base of ``owns`` facts, indexed by (predicate, subject); a closed world."""

    DECLARATION = "completeness:bench-owns-closed"

    def __init__(self, edges: list[tuple[str, str]]):
        from gaf.derive import Entry, Truth

        self.by_pred: dict[str, list[Any]] = defaultdict(list)
        self.by_subject: dict[tuple[str, str], list[Any]] = defaultdict(list)
        for parent, child in edges:
            e = Entry(("owns", parent, child), Truth.TRUE, f"evaluation:owns-{parent}-{child}")
            self.by_pred["owns"].append(e)
            self.by_subject[("owns", parent)].append(e)

    def match(self, predicate: str, subject: Any, obj: Any) -> list[Any]:
        entries = self.by_pred.get(predicate, []) if subject is None else self.by_subject.get((predicate, subject), [])
        return entries if obj is None else [e for e in entries if e.ground[2] == obj]

    def closed(self, predicate: str, subject: Any, obj: Any) -> str | None:
        # The ownership register is complete: no recorded owner means none.
        return self.DECLARATION if predicate == "owns" else None


def ownership_forest(owns: int, seed: int, max_depth: int) -> list[tuple[str, str]]:
    """``owns`` (parent, child) edges: a forest of random trees of depth at most ``max_depth``.

    Each tree has 10-300 companies; each new company is owned by a random
    earlier company of its tree that is not yet at the depth limit.
    """
    rng = random.Random(seed)
    edges: list[tuple[str, str]] = []
    company = 0
    while len(edges) < owns:
        size = rng.randint(10, 300)
        root = f"org:{company}"
        company += 1
        open_nodes = [(root, 0)]
        for _ in range(size - 1):
            if len(edges) == owns:
                break
            i = rng.randrange(len(open_nodes))
            parent, depth = open_nodes[i]
            child = f"org:{company}"
            company += 1
            edges.append((parent, child))
            if depth + 1 < max_depth:
                open_nodes.append((child, depth + 1))
    return edges


RULE_FORMS = {
    # the recursive atom first: its variables are unbound when it is matched
    "left": ("controls(?X, ?Z)", "owns(?Z, ?Y)"),
    # the recursive atom last: matched with ?Z bound, i.e. a lookup by subject
    "right": ("owns(?X, ?Z)", "controls(?Z, ?Y)"),
}


def control_rules(form: str = "left") -> list[Any]:
    from gaf.rules import body, rule

    return [rule("controls", "controls(?X, ?Y)", body("owns(?X, ?Y)"), body(*RULE_FORMS[form]))]


def expected_closure(edges: list[tuple[str, str]]) -> set[tuple[str, str]]:
    """The transitive closure by a plain walk up the (tree) parents: an independent check."""
    parent = {c: p for p, c in edges}
    out = set()
    for child in parent:
        p = parent.get(child)
        while p is not None:
            out.add((p, child))
            p = parent.get(p)
    return out


def summarize(conclusions: Any) -> dict[str, Any]:
    from gaf.derive import Truth

    facts = {g for g, d in conclusions.derived.items() if d.truth == Truth.TRUE}
    return {
        "derived": len(conclusions.derived),
        "true": len(facts),
        "justifications": sum(len(d.justifications) for d in conclusions.derived.values()),
        "rounds": conclusions.rounds,
        "dead_ends": len(conclusions.dead_ends),
    }


def fingerprint(conclusions: Any) -> set[tuple]:
    """What a run concluded, comparable across modes: each ground, its truth and its justifications' keys."""
    return {
        (g, int(d.truth), frozenset((k, int(j.truth)) for k, j in d.justifications.items()))
        for g, d in conclusions.derived.items()
    }


def run_rules(args: argparse.Namespace) -> dict[str, Any]:
    from gaf.derive import evaluate_rules

    log = _logger()
    sizes = [int(s) for s in args.owns.split(",")]
    naive_max = args.naive_max if args.naive_max is not None else max(sizes)
    rules = control_rules(args.form)
    out: dict[str, Any] = {"max_depth": args.max_depth, "form": args.form, "rule": str(rules[0]), "runs": []}
    for size in sizes:
        edges = ownership_forest(size, args.seed, args.max_depth)
        facts = OwnsFacts(edges)
        expected = expected_closure(edges)
        row: dict[str, Any] = {"owns": size, "closure": len(expected)}
        variants: list[tuple[str, Callable[[], Any]]] = [("semi-naive", lambda: evaluate_rules(rules, facts, mode="semi-naive"))]
        if size <= naive_max:
            variants.append(("naive", lambda: evaluate_rules(rules, facts, mode="naive")))
        reference = None
        for name, fn in variants:
            log(f"[rules] {size:,} owns facts ({args.form}-recursive): {name} (load {load_average()})")
            times = []
            cpu = []
            conclusions = None
            for _ in range(args.repeat):
                conclusions = None
                gc.collect()
                t, c = time.perf_counter(), time.process_time()
                conclusions = fn()
                times.append(time.perf_counter() - t)
                cpu.append(time.process_time() - c)
            summary = summarize(conclusions)
            got = {(g[1], g[2]) for g, d in conclusions.derived.items() if int(d.truth) == 2}
            fp = fingerprint(conclusions)
            if reference is None:
                reference = fp
            result = {**summary, "seconds": statistics.median(cpu), "wall_s": statistics.median(times), "runs_s": times, "cpu_runs_s": cpu,
                      "matches_closure": got == expected, "same_as_semi_naive": fp == reference}  # fmt: skip
            row[name] = result
            log(f"    {result['seconds']:.2f} s CPU ({result['wall_s']:.2f} s wall); {summary['derived']:,} derived in {summary['rounds']} rounds; "
                f"closure {'ok' if result['matches_closure'] else 'WRONG'}; same as semi-naive: {result['same_as_semi_naive']}")
            del conclusions, fp
            gc.collect()
        out["runs"].append(row)
    if args.profile:
        size = args.profile
        edges = ownership_forest(size, args.seed, args.max_depth)
        facts = OwnsFacts(edges)
        log(f"[rules] profiling gaf.derive semi-naive at {size:,} owns facts")
        profiler = cProfile.Profile(time.process_time)  # CPU time: the machine may be shared
        profiler.enable()
        evaluate_rules(rules, facts, mode="semi-naive")
        profiler.disable()
        stream = io.StringIO()
        stats = pstats.Stats(profiler, stream=stream)
        stats.sort_stats("tottime").print_stats(args.profile_top)
        stats.sort_stats("cumulative").print_stats(args.profile_top)
        out["profile"] = {"owns": size, "text": stream.getvalue()}
    print()
    print(rules_report(out))
    if args.profile:
        print()
        print(_trim_profile(out["profile"]["text"]))
    return out


def rules_report(out: dict[str, Any]) -> str:
    rows = []
    for r in out["runs"]:
        semi = r["semi-naive"]
        naive = r.get("naive")
        rows.append([
            f"{r['owns']:,}", f"{semi['derived']:,}", semi["rounds"], f"{semi['seconds']:.2f}",
            f"{naive['seconds']:.2f}" if naive else "not run",
            f"{naive['seconds'] / semi['seconds']:.2f}x" if naive else "-",
            ("yes" if naive["same_as_semi_naive"] else "NO") if naive else "-",
            "yes" if semi["matches_closure"] else "NO",
        ])  # fmt: skip
    return (
        f"== {out['rule']} — ownership forest, depth <= {out['max_depth']}; CPU seconds of this process (median of runs; wall time in --json)\n"
        + table(["owns facts", "derived", "rounds", "semi-naive s", "naive s (baseline)", "naive/semi", "same facts", "= closure"], rows)
    )


def _trim_profile(text: str) -> str:
    keep = []
    for line in text.splitlines():
        if line.strip() and not line.lstrip().startswith(("Ordered by", "List reduced")):
            keep.append(line.replace(str(ROOT) + "/", ""))
    return "\n".join(keep)


# ====================================================================== the command line


def _logger() -> Callable[[str], None]:
    started = time.perf_counter()

    def log(message: str) -> None:
        print(f"[{time.perf_counter() - started:7.1f}s] {message}", file=sys.stderr, flush=True)

    return log


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.projection", description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", help="also write the figures to this file")
    sub = parser.add_subparsers(dest="benchmark", required=True)

    cone = sub.add_parser("cone", help="evaluation time of a fixed question vs ledger size")
    cone.add_argument("--sizes", default="10000,100000,1000000", help="ledger sizes in claims (default %(default)s)")
    cone.add_argument("--stores", default="neo4j,ladybug", help="neo4j and/or ladybug (default %(default)s)")
    cone.add_argument("--seed", type=int, default=20260721)
    cone.add_argument("--batch", type=int, default=5000, help="claims per store.put (default %(default)s)")
    cone.add_argument("--runs", type=int, default=7, help="timed evaluations per size (median; default %(default)s)")
    cone.add_argument("--warmup", type=int, default=2)
    cone.add_argument("--reference-runs", type=int, default=3, help="timed runs of the ledger-wide query")
    cone.add_argument("--tmp", help="directory for the LadybugDB stores (default: the temp dir)")
    cone.add_argument("--keep", action="store_true", help="keep the last ledger (Neo4j) and the LadybugDB directories")
    cone.add_argument("--hint-runs", type=int, default=3,
                      help="Neo4j: timed runs of the cone query forced to start at each index (0: skip)")
    cone.add_argument("--reuse", action="store_true",
                      help="measure a kept ledger of the same size (and seed) instead of building it again")

    rules = sub.add_parser("rules", help="recursive rule: semi-naive vs naive")
    rules.add_argument("--owns", default="10000,30000,100000", help="owns facts per run (default %(default)s)")
    rules.add_argument("--naive-max", type=int, help="run naive only up to this many owns facts (default: all)")
    rules.add_argument("--max-depth", type=int, default=6, help="deepest ownership chain (default %(default)s)")
    rules.add_argument("--seed", type=int, default=20260721)
    rules.add_argument("--repeat", type=int, default=1, help="timed runs per mode (median)")
    rules.add_argument("--profile", type=int, metavar="OWNS", help="profile semi-naive at this many owns facts")
    rules.add_argument("--profile-top", type=int, default=25)
    rules.add_argument("--form", choices=sorted(RULE_FORMS), default="left",
                       help="left: controls(?X,?Z), owns(?Z,?Y) (default); right: owns(?X,?Z), controls(?Z,?Y)")

    args = parser.parse_args(argv)
    started = datetime.now(timezone.utc)
    meta = {
        "benchmark": args.benchmark,
        "date": started.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "command": "python -m bench.projection " + " ".join(argv if argv is not None else sys.argv[1:]),
        "args": {k: v for k, v in vars(args).items() if k != "checkpoint"},
        "machine": machine(),
        "load_at_start": load_average(),
        "busy_at_start": other_busy_processes(),
    }
    if meta["busy_at_start"]:
        print("note: the machine is shared; busy processes at start:\n  " + "\n  ".join(meta["busy_at_start"]), file=sys.stderr)
    if args.json:
        # Written after each ledger size too, so an interrupted run keeps what it measured.
        def checkpoint(partial: dict[str, Any]) -> None:
            Path(args.json).write_text(json.dumps({**meta, **partial, "partial": True}, indent=2, default=str) + "\n", encoding="utf-8")

        args.checkpoint = checkpoint
    out = run_cone(args) if args.benchmark == "cone" else run_rules(args)
    args.checkpoint = None
    meta["seconds"] = round((datetime.now(timezone.utc) - started).total_seconds(), 1)
    meta["load_at_end"] = load_average()
    if args.json:
        Path(args.json).write_text(json.dumps({**meta, **out}, indent=2, default=str) + "\n", encoding="utf-8")
        print(f"\nwrote {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
