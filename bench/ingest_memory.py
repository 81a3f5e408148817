"""Ingest memory benchmark: peak RSS and wall time of ``gaf ingest FILE`` as the file grows.

    python -m bench ingest_memory [--sizes 2000,20000] [--stores ladybug,neo4j] [--cache-mb 128] [--baseline REV] [--json out.json]
    python -m bench ingest_memory --report out.json          # print saved results again

For each size N a JSONL file is written — the agents and sources of the synthetic graph
(bench/graph.py), then N claims of 2 to 4 statements naming them by key, drawn from one
seeded stream, one line at a time (the file is never held) — and ``python -m gaf ingest
FILE --json --quiet`` runs on it as a subprocess, alone, into an empty store. Its peak
resident set is the kernel's own count for that one child (``os.wait4``'s ``ru_maxrss``),
its wall time the subprocess's. The embedded store's buffer pool is capped with
GAF_CACHE_MB (``--cache-mb``), and the cap is in the output: it is part of the peak.

``--baseline REV`` runs each ingest a second time, in the same run on the same file, with gaf as
it was at git revision REV (``git archive`` into a temporary directory): a before-and-after.

Neo4j runs only with ``--stores neo4j`` and NEO4J_URI set; the database is emptied before
each size (only if every node in it is gaf's, as bench/ingest.py checks). Issue 21's goal
is 1M claims under 300 MB peak on both stores.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from bench.graph import PREDICATES, TRANSFORMATIONS, _Maker
from gaf.records import Agent, Source

ROOT = Path(__file__).resolve().parent.parent
console = Console(stderr=True)


def write_claims(path: Path, n: int, seed: int = 7) -> int:
    """A JSONL file of the graph's agents and sources and ``n`` claims naming them by key; its size in bytes."""
    maker = _Maker(random.Random(seed))
    keyed = [r for r in maker.shared() if isinstance(r, (Agent, Source))]
    rng = maker.rng
    with path.open("w", encoding="utf-8") as out:
        for record in keyed:
            out.write(json.dumps(record.to_json()) + "\n")
        for i in range(n):
            subject = f"lease:{i // 4:08d}"
            statements = [maker.statement(subject, p).model_dump(mode="json", exclude_none=True)
                          for p in rng.sample(PREDICATES, rng.randint(2, 4))]  # fmt: skip
            observed = maker.at()
            claim = {
                "kind": "claim",
                "source": rng.choice(maker.sources).key,
                "observer": rng.choice(maker.agents).key,
                "observed_at": observed.isoformat().replace("+00:00", "Z"),
                "transformation": rng.choice(TRANSFORMATIONS),
                "statements": statements,
            }
            out.write(json.dumps(claim) + "\n")
    return path.stat().st_size


def run_ingest(path: Path, store: str, cache_mb: int, code: Path = ROOT) -> dict[str, Any]:
    """``python -m gaf ingest`` on one file as a child process, with gaf from ``code``: its exit
    code, wall time, peak RSS and report."""
    env = {**os.environ, "GAF_STORE": store, "GAF_CACHE_MB": str(cache_mb), "PYTHONPATH": str(code)}
    command = [sys.executable, "-m", "gaf", "ingest", str(path), "--json", "--quiet"]
    with tempfile.TemporaryFile() as stdout, tempfile.TemporaryFile() as stderr:
        started = time.perf_counter()
        child = subprocess.Popen(command, cwd=code, env=env, stdout=stdout, stderr=stderr)
        _, status, usage = os.wait4(child.pid, 0)  # this child's own peak, not the largest of all children so far
        seconds = time.perf_counter() - started
        child.returncode = os.waitstatus_to_exitcode(status)
        stdout.seek(0)
        stderr.seek(0)
        output, errors = stdout.read().decode(), stderr.read().decode()
    report = json.loads(output) if output.strip().startswith("{") else None
    return {"exit": child.returncode, "seconds": round(seconds, 2), "peak_rss_mb": round(usage.ru_maxrss / 1024, 1),
            "report": report, "stderr": errors[-2000:]}  # fmt: skip


def _empty_neo4j(uri: str) -> None:
    import neo4j

    from bench.ingest import wipe

    auth = (os.environ.get("NEO4J_USER", "neo4j"), os.environ.get("NEO4J_PASSWORD", ""))
    with neo4j.GraphDatabase.driver(uri, auth=auth) as driver:
        wipe(driver, os.environ.get("NEO4J_DATABASE", "neo4j"))


def export_revision(revision: str, folder: Path) -> Path:
    """gaf's tree at a git revision, written out under ``folder``, for a baseline run."""
    target = folder / "baseline"
    target.mkdir()
    archive = subprocess.run(["git", "archive", revision], cwd=ROOT, capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(target)], input=archive, check=True)
    return target


def measure(size: int, stores: list[str], cache_mb: int, folder: Path, baseline: Path | None = None) -> dict[str, Any]:
    path = folder / f"claims-{size}.jsonl"
    started = time.perf_counter()
    file_bytes = write_claims(path, size)
    row: dict[str, Any] = {"claims": size, "file_mb": round(file_bytes / 2**20, 1), "write_file_seconds": round(time.perf_counter() - started, 1)}
    runs = [(store, ROOT, store) for store in stores] + ([(f"{store} (baseline)", baseline, store) for store in stores] if baseline else [])
    for label, code, store in runs:
        if store == "ladybug":
            target = str(folder / f"store-{size}-{len(row)}" / "store.lbug")
        else:
            target = os.environ["NEO4J_URI"]
            _empty_neo4j(target)
        console.print(f"ingesting {size:,} claims ({row['file_mb']} MB) into {label} …")
        row[label] = run_ingest(path, target, cache_mb, code)
        if store == "ladybug" and code == ROOT and row[label]["exit"] == 0:
            row[label]["text"] = text_by_label(Path(target))
        if store == "ladybug":
            shutil.rmtree(Path(target).parent, ignore_errors=True)  # the next run's disk, not this one's
    path.unlink()
    return row


#: Rows of one node group of a LadybugDB node table (2**17): a checkpoint rewrites a table's newest group whole.
NODE_GROUP_ROWS = 131_072


def text_by_label(path: Path) -> dict[str, dict[str, int]]:
    """The body text each node table of an embedded store holds after the ingest: rows, bytes of
    ``body`` in all and in the newest node group (what a checkpoint rewrites whole, and so what
    the buffer pool must hold while it runs; docs/benchmarks.md, point 3), and the largest body."""
    from gaf.store.ladybug import LadybugStore
    from gaf.store.schema import graph_schema

    out: dict[str, dict[str, int]] = {}
    store = LadybugStore(path, read_only=True)
    try:
        for label in sorted(graph_schema().nodes):
            (row,) = store.read(
                f"MATCH (n:{label}) WITH n, offset(id(n)) AS o RETURN count(n) AS rows, max(o) AS last, sum(size(n.body)) AS bytes, "
                "max(size(n.body)) AS largest"
            )  # fmt: skip
            if not row["rows"]:
                continue
            start = int(row["last"]) // NODE_GROUP_ROWS * NODE_GROUP_ROWS
            (newest,) = store.read(f"MATCH (n:{label}) WHERE offset(id(n)) >= $start RETURN sum(size(n.body)) AS bytes", {"start": start})
            out[label] = {"rows": int(row["rows"]), "body_bytes": int(row["bytes"]), "newest_group_bytes": int(newest["bytes"]),
                          "largest_body": int(row["largest"])}  # fmt: skip
    finally:
        store.close()
    return out


def show(result: dict[str, Any]) -> None:
    table = Table(title=f"gaf ingest FILE: peak RSS (embedded store's buffer pool capped at {result['cache_mb']} MiB)")
    for column in ("claims", "file MB", "store", "exit", "seconds", "claims/s", "peak RSS MB", "written"):
        table.add_column(column, justify="right")
    for row in result["sizes"]:
        for store in [label for label in row if isinstance(row[label], dict)]:
            run = row[store]
            written = (run["report"] or {}).get("written", (run["report"] or {}).get("error", "-"))
            rate = f"{row['claims'] / run['seconds']:,.0f}" if run["seconds"] else "-"
            table.add_row(f"{row['claims']:,}", str(row["file_mb"]), store, str(run["exit"]), str(run["seconds"]), rate,
                          str(run["peak_rss_mb"]), str(written))  # fmt: skip
    Console().print(table)
    for row in result["sizes"]:
        text = (row.get("ladybug") or {}).get("text")
        if not text:
            continue
        table = Table(title=f"{row['claims']:,} claims: body text by node table (newest group: what a checkpoint rewrites whole)")
        for column in ("table", "rows", "body MB", "newest group MB", "largest body"):
            table.add_column(column, justify="right")
        for label, t in sorted(text.items(), key=lambda item: -item[1]["body_bytes"]):
            table.add_row(label, f"{t['rows']:,}", f"{t['body_bytes'] / 2**20:.2f}", f"{t['newest_group_bytes'] / 2**20:.2f}", f"{t['largest_body']:,}")
        Console().print(table)


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench ingest_memory", description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="2000,20000", help="claims per file, comma-separated")
    parser.add_argument("--stores", default="ladybug", help="ladybug and/or neo4j (neo4j needs NEO4J_URI)")
    parser.add_argument("--cache-mb", type=int, default=128, help="LadybugDB's buffer pool, MiB (GAF_CACHE_MB)")
    parser.add_argument("--baseline", metavar="REV", help="run each ingest again with gaf at this git revision (before and after)")
    parser.add_argument("--json", type=Path, help="write the results here")
    parser.add_argument("--report", type=Path, help="print saved results again")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parse_args(argv)
    if args.report:
        show(json.loads(args.report.read_text()))
        return 0
    stores = [s for s in args.stores.split(",") if s]
    if unknown := set(stores) - {"ladybug", "neo4j"}:
        console.print(f"unknown store(s) {sorted(unknown)}: use ladybug and/or neo4j")
        return 2
    if "neo4j" in stores and not os.environ.get("NEO4J_URI"):
        console.print("--stores neo4j needs NEO4J_URI (and NEO4J_USER, NEO4J_PASSWORD)")
        return 2
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    result: dict[str, Any] = {
        "benchmark": "ingest_memory",
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "command": "python -m bench ingest_memory " + " ".join(argv),
        "git": commit,
        "cache_mb": args.cache_mb,
        "stores": stores,
        "baseline": args.baseline,
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "load_before": os.getloadavg()},
        "sizes": [],
    }
    failed = False
    with tempfile.TemporaryDirectory(prefix="gaf-bench-ingest-") as folder:
        baseline = export_revision(args.baseline, Path(folder)) if args.baseline else None
        for size in (int(s) for s in args.sizes.split(",")):
            row = measure(size, stores, args.cache_mb, Path(folder), baseline)
            result["sizes"].append(row)
            failed |= any(row[s]["exit"] != 0 for s in stores)  # the baseline may fail: that is what it shows
            result["machine"]["load_after"] = os.getloadavg()
            if args.json:  # after every size, so a long run keeps what it measured
                args.json.write_text(json.dumps(result, indent=1) + "\n")
    show(result)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
