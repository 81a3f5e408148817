"""Store size benchmark: what the embedded store's file holds, beside what its records need.

    python -m bench store_size [--sizes 1000,10000] [--sessions 10] [--baseline REV] [--json out.json]
    python -m bench store_size --report out.json          # print saved results again

Two measurements, each into a fresh embedded store:

- the rent story (``examples/rent/story.sh``, README command 1): the store file's size at the
  end, and the story's wall time; with ``--baseline REV`` the same story again with gaf as it
  was at git revision REV (``git archive``), in the same run — a before-and-after;
- a ledger of N claims (the synthetic claims of bench/ingest_memory.py) ingested by
  ``gaf ingest`` in ``--sessions`` files of equal size, one opening of the store each, as a
  user's daily loads would: the file's size after, then ``gaf compact``'s report (size after,
  records and relationships copied, seconds) and the bytes per record of each.

For each store LadybugDB's own account of its pages (``CALL disk_size_info()``: node tables,
primary-key index, relationship tables, free pages) is recorded beside the size, and for the
rent story the rows of each node table (the keys its primary-key indexes hold).

A third measurement, ``--keys``, is LadybugDB's alone, without gaf: one node table holding N
primary keys shaped like gaf's ids (a kind, a colon, 64 hex digits), and the same with INT64
keys — what the index costs on disk for N keys in one table, the least any schema holding
those keys in that engine could pay.

A fourth, ``--tables``: what opening a store costs in memory, each in a fresh process (RSS
before and after, and LadybugDB's own count of its buffer pool, ``CALL bm_info()``): gaf's empty
store opened read-only, and LadybugDB alone with N empty node tables, its pool capped at 128 MiB
as a bulk load caps it.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from bench.ingest_memory import export_revision, write_claims

ROOT = Path(__file__).resolve().parent.parent
console = Console(stderr=True)


def _rows_of(store: Path, *queries: str) -> list[list[Any]]:
    """Each query's rows, asked of the store opened read-only (LadybugDB alone, no gaf)."""
    import ladybug

    database = ladybug.Database(str(store), read_only=True)
    try:
        conn = ladybug.Connection(database)
        out = []
        for query in queries:
            result = conn.execute(query)
            assert not isinstance(result, list)
            out.append(result.get_all())
        return out
    finally:
        database.close()


def pages(store: Path) -> dict[str, int]:
    """LadybugDB's account of the file's bytes, by category."""
    (rows,) = _rows_of(store, "CALL disk_size_info() RETURN category, CAST(sum(size_bytes) AS INT64)")
    return {str(category): int(size) for category, size in rows}


def rows_by_table(store: Path) -> dict[str, int]:
    """The rows of each node table that holds any: the keys its primary-key index holds."""
    (tables,) = _rows_of(store, "CALL show_tables() WHERE type = 'NODE' RETURN name")
    names = sorted(str(name) for (name,) in tables)
    counts = _rows_of(store, *(f"MATCH (n:{name}) RETURN count(n)" for name in names))
    return {name: int(rows[0][0]) for name, rows in zip(names, counts, strict=True) if rows[0][0]}


def key_index(folder: Path, keys: int, key_type: str) -> dict[str, Any]:
    """One LadybugDB node table holding ``keys`` primary keys (no other column), checkpointed: the
    file's bytes and its index's, by LadybugDB's own account."""
    import hashlib

    import ladybug

    store = folder / f"keys-{key_type}-{keys}.lbug"
    database = ladybug.Database(str(store))
    try:
        conn = ladybug.Connection(database)
        conn.execute(f"CREATE NODE TABLE K(id {key_type}, PRIMARY KEY(id))")
        ids: list[Any] = (
            [f"claim:{hashlib.sha256(str(n).encode()).hexdigest()}" for n in range(keys)] if key_type == "STRING" else list(range(keys))
        )
        conn.execute("UNWIND $ids AS i CREATE (:K {id: i})", {"ids": ids})
        conn.execute("CHECKPOINT")
    finally:
        database.close()
    p = pages(store)
    return {"keys": keys, "type": key_type, "bytes": store.stat().st_size, "index_bytes": p.get("index", 0), "pages": p}


_MAKE = """
import sys
what, path, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
if what == "gaf":
    from gaf.store.ladybug import LadybugStore
    LadybugStore(path, cache_mb=128).close()
else:
    import ladybug
    database = ladybug.Database(path, buffer_pool_size=128 * 2**20)
    conn = ladybug.Connection(database)
    for n in range(count):
        conn.execute(f"CREATE NODE TABLE T{n}(id STRING, PRIMARY KEY(id))")
    conn.execute("CHECKPOINT")
    database.close()
"""

_OPEN = """
import json, sys
import ladybug
def rss():
    return int(open("/proc/self/status").read().split("VmRSS:")[1].split()[0]) * 1024
before = rss()
database = ladybug.Database(sys.argv[1], read_only=True, buffer_pool_size=128 * 2**20)
conn = ladybug.Connection(database)
after = rss()
tables = conn.execute("CALL show_tables() WHERE type = 'NODE' RETURN count(*)").get_all()[0][0]
pool = conn.execute("CALL bm_info() RETURN *").get_all()[0][1]
print(json.dumps({"node_tables": tables, "rss_before": before, "rss_after": after, "pool_bytes": pool}))
"""


def open_cost(folder: Path, what: str, tables: int = 0) -> dict[str, Any]:
    """RSS a fresh process gains opening a store read-only (pool capped at 128 MiB): gaf's empty
    store (``what="gaf"``, declared by gaf in a process before), or LadybugDB alone with
    ``tables`` empty node tables."""
    path = folder / f"open-{what}-{tables}.lbug"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    subprocess.run([sys.executable, "-c", _MAKE, what, str(path), str(tables)], cwd=ROOT, env=env, check=True, timeout=600)
    done = subprocess.run([sys.executable, "-c", _OPEN, str(path)], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        raise RuntimeError(f"opening {what} failed: {done.stderr[-2000:]}")
    row = {"store": what, **json.loads(done.stdout.strip().splitlines()[-1])}
    row["rss_gained"] = row["rss_after"] - row["rss_before"]
    return row


def _gaf(args: list[str], store: Path, code: Path = ROOT) -> dict[str, Any]:
    env = {**os.environ, "GAF_STORE": str(store), "PYTHONPATH": str(code), "PYTHONFAULTHANDLER": "1"}
    done = subprocess.run([sys.executable, "-m", "gaf", *args, "--json"], cwd=code, env=env, capture_output=True, text=True, timeout=3600)
    if done.returncode != 0:
        raise RuntimeError(f"gaf {' '.join(args)} failed ({done.returncode}): {done.stderr[-2000:]}")
    return dict(json.loads(done.stdout))


def rent_story(folder: Path, code: Path, label: str) -> dict[str, Any]:
    store = folder / label / "rent.lbug"
    env = {**os.environ, "GAF_STORE": str(store), "PYTHONPATH": str(code)}
    console.print(f"the rent story with {label} …")
    started = time.perf_counter()
    done = subprocess.run(["sh", str(code / "examples/rent/story.sh")], env=env, capture_output=True, text=True, timeout=1800)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"the rent story failed with {label}: {done.stderr[-2000:]}")
    return {"gaf": label, "bytes": store.stat().st_size, "seconds": round(seconds, 1), "pages": pages(store), "rows": rows_by_table(store)}


def ledger(folder: Path, claims: int, sessions: int) -> dict[str, Any]:
    source = folder / f"claims-{claims}.jsonl"
    write_claims(source, claims)
    lines = source.read_text(encoding="utf-8").splitlines(keepends=True)
    keyed = [line for line in lines if '"kind": "claim"' not in line]
    stated = [line for line in lines if '"kind": "claim"' in line]
    store = folder / f"ledger-{claims}" / "store.lbug"
    console.print(f"ingesting {claims:,} claims in {sessions} sessions …")
    started = time.perf_counter()
    per = -(-len(stated) // sessions)
    for n in range(sessions):
        part = folder / f"part-{n}.jsonl"
        part.write_text("".join(keyed + stated[n * per : (n + 1) * per]), encoding="utf-8")
        _gaf(["ingest", str(part), "--quiet", "--at", f"2026-07-{n % 28 + 1:02d}T09:00:00Z"], store)
        part.unlink()
    ingest_seconds = time.perf_counter() - started
    before = store.stat().st_size
    before_pages = pages(store)
    compacted = _gaf(["compact"], store)
    after_pages = pages(store)
    records = int(compacted["nodes"])
    source.unlink()
    return {
        "claims": claims, "sessions": sessions, "ingest_seconds": round(ingest_seconds, 1),
        "bytes": before, "pages": before_pages, "compacted": compacted, "compacted_pages": after_pages,
        "bytes_per_record": round(before / records), "compacted_bytes_per_record": round(int(compacted["bytes_after"]) / records),
    }  # fmt: skip


def _table(title: str, columns: tuple[str, ...]) -> Table:
    table = Table(title=title)
    for column in columns:
        table.add_column(column, justify="right")
    return table


def show(result: dict[str, Any]) -> None:
    mib = 2**20
    story = Table(title="the rent story's store (examples/rent/story.sh)")
    for column in ("gaf", "store MiB", "records+index MiB", "relationships MiB", "free MiB", "seconds"):
        story.add_column(column, justify="right")
    for run in result["rent"]:
        p = run["pages"]
        story.add_row(run["gaf"], f"{run['bytes'] / mib:.1f}", f"{(p.get('node_table', 0) + p.get('index', 0)) / mib:.1f}",
                      f"{p.get('rel_table', 0) / mib:.1f}", f"{p.get('free_space', 0) / mib:.1f}", str(run["seconds"]))  # fmt: skip
    console.print(story)
    ledgers = _table("a ledger ingested in sessions, then `gaf compact`",
                     ("claims", "sessions", "records", "store MiB", "B/record", "compacted MiB", "B/record ", "compact s"))  # fmt: skip
    for row in result["ledgers"]:
        c = row["compacted"]
        ledgers.add_row(f"{row['claims']:,}", str(row["sessions"]), f"{c['nodes']:,}", f"{row['bytes'] / mib:.1f}", f"{row['bytes_per_record']:,}",
                        f"{c['bytes_after'] / mib:.1f}", f"{row['compacted_bytes_per_record']:,}", str(c["seconds"]))  # fmt: skip
    console.print(ledgers)
    if result.get("keys"):
        index = _table("LadybugDB alone: one node table of N primary keys, checkpointed", ("keys", "key type", "file KiB", "index KiB", "index B/key"))
        for row in result["keys"]:
            index.add_row(f"{row['keys']:,}", row["type"], f"{row['bytes'] / 1024:,.0f}", f"{row['index_bytes'] / 1024:,.0f}",
                          f"{row['index_bytes'] / row['keys']:,.0f}")  # fmt: skip
        console.print(index)
    if result.get("open"):
        opened = _table("opening a store read-only, in a fresh process (pool capped at 128 MiB)",
                        ("store", "node tables", "RSS gained MB", "in the pool MiB", "MB a node table"))  # fmt: skip
        for row in result["open"]:
            per = f"{row['rss_gained'] / row['node_tables'] / 1e6:.1f}" if row["node_tables"] else "–"
            opened.add_row(row["store"], str(row["node_tables"]), f"{row['rss_gained'] / 1e6:.0f}", f"{row['pool_bytes'] / 2**20:.0f}", per)
        console.print(opened)
    for run in result["rent"]:
        if run.get("rows"):
            rows = run["rows"]
            console.print(f"{run['gaf']}: {sum(rows.values()):,} keys in {len(rows)} node tables "
                          f"(most: {', '.join(f'{t} {n}' for t, n in sorted(rows.items(), key=lambda kv: -kv[1])[:5])})")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench store_size", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1000,10000", help="claims in each ledger, comma-separated")
    parser.add_argument("--sessions", type=int, default=10, help="gaf ingest runs each ledger is split into")
    parser.add_argument("--baseline", help="a git revision to run the rent story with too, in the same run")
    parser.add_argument("--keys", default="10,100,256,1000,3000", help="primary keys in one LadybugDB table, comma-separated ('' skips it)")
    parser.add_argument("--tables", default="1,10,34", help="empty node tables LadybugDB alone opens, comma-separated ('' skips it)")
    parser.add_argument("--json", type=Path, help="write the results here")
    parser.add_argument("--report", type=Path, help="print results saved by --json, run nothing")
    args = parser.parse_args(argv)
    if args.report:
        show(json.loads(args.report.read_text(encoding="utf-8")))
        return 0
    with tempfile.TemporaryDirectory(prefix="gaf-bench-size-") as scratch:
        folder = Path(scratch)
        rent = [rent_story(folder, ROOT, "this gaf")]
        if args.baseline:
            rent.append(rent_story(folder, export_revision(args.baseline, folder), f"gaf at {args.baseline}"))
        ledgers = [ledger(folder, int(n), args.sessions) for n in args.sizes.split(",") if n]
        keys = [key_index(folder, int(n), t) for t in ("STRING", "INT64") for n in args.keys.split(",") if n]
        opened = [open_cost(folder, "gaf"), *(open_cost(folder, "ladybug", int(n)) for n in args.tables.split(",") if n)]
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    result = {"when": datetime.now(timezone.utc).isoformat(timespec="seconds"), "commit": commit, "machine": platform.node(),
              "load": os.getloadavg(), "rent": rent, "ledgers": ledgers, "keys": keys, "open": opened}  # fmt: skip
    show(result)
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return 0
