"""Ingest benchmark: gaf's ``put`` against a hand-written driver ingest of the same graph.

    python -m bench ingest [--nodes 1000000] [--stores neo4j,ladybug] [--batch 5000] [--json out.json]
    python -m bench ingest --report out.json [more.json ...]     # print saved results again

The graph (bench/graph.py) is built in memory, seeded, before anything is timed.
Then, per store, each variant writes it batch by batch into an emptied store and
only the writes are timed:

* ``raw``   — the baseline: the neo4j driver (or the ladybug connection) sending
  ``UNWIND $rows AS r CREATE (n:Label {...})`` and
  ``UNWIND $rows AS r MATCH (a:L1 {id: r.s}) MATCH (b:L2 {id: r.d}) CREATE (a)-[:REL]->(b)``
  for exactly the nodes and relationships gaf writes, one managed write
  transaction per batch, after the gaf store's ``init()`` (same constraints and
  indexes). Its rows are prepared before the clock starts (the time that takes
  is shown as ``prep``).
* ``gaf``   — ``GafStore.put(batch, at=…)`` in atomic mode, same batches, one call each.
* ``stream`` — ``GafStore.put_batches(batches, at=…)``: the same transactions, with
  batch n+1 prepared in a worker thread while batch n is written (what
  ``gaf.ledger.ingest`` uses).

Each variant's time is the wall time of its whole loop over the batches.

After every run the store's node and relationship counts (in total, per label
and per type) are checked against the graph. Neo4j is emptied between runs with
the raw driver, and only if every node in it carries a gaf label or the test
marker label ``GafTestDatabase``.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import importlib.util
import io
import json
import os
import platform
import pstats
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
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

from bench.graph import BatchPlan, Graph, build, plan
from gaf.records import RECORD_TYPES, LogEntry, Record, SchemaVersion
from gaf.store.base import STATEMENT_ROWS

ROOT = Path(__file__).resolve().parent.parent
MARKER_LABEL = "GafTestDatabase"
GAF_LABELS = sorted({cls.LABEL for cls in RECORD_TYPES.values()})
#: Relationships first: a dense node (a projection with a quarter of a million
#: UNDER relationships) detached in one inner transaction overflows the
#: transaction memory pool of a small heap (MemoryPoolOutOfMemoryError).
WIPE = (
    "MATCH ()-[r]->() CALL (r) { DELETE r } IN TRANSACTIONS OF 10000 ROWS",
    "MATCH (n) CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 10000 ROWS",
)

console = Console(stderr=True)


# ---------------------------------------------------------------------- results


@dataclass
class Run:
    store: str
    variant: str
    seconds: float
    records: int
    nodes: int
    rels: int
    batches: int
    client_cpu: float
    server_cpu: float | None
    other_cpu: float
    batch_p50: float
    batch_max: float
    counted_nodes: int
    counted_rels: int
    verified: bool
    note: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def records_per_s(self) -> float:
        return self.records / self.seconds

    @property
    def nodes_per_s(self) -> float:
        return self.nodes / self.seconds

    @property
    def rels_per_s(self) -> float:
        return self.rels / self.seconds


class Refused(RuntimeError):
    """The benchmark will not run here (a database holding someone's data, no server)."""


# ---------------------------------------------------------------------- Neo4j connection and hygiene


def _neo4j_local() -> Any:
    spec = importlib.util.spec_from_file_location("neo4j_local", ROOT / "scripts" / "neo4j_local.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def neo4j_target(wait_minutes: float) -> dict[str, Any]:
    """$NEO4J_URI if set, else the repo's local server (started if needed), waiting for it."""
    if os.environ.get("NEO4J_URI"):
        return {
            "uri": os.environ["NEO4J_URI"],
            "user": os.environ.get("NEO4J_USER") or os.environ.get("NEO4J_USERNAME") or "neo4j",
            "password": os.environ.get("NEO4J_PASSWORD", ""),
            "pid": None,
            "local": None,
        }
    deadline = time.monotonic() + wait_minutes * 60
    while True:
        try:
            module = _neo4j_local()
            info = module.start()
            return {**info, "local": module}
        except Exception as exc:  # the script may still be in the works: retry, as the brief says
            if time.monotonic() > deadline:
                raise Refused(f"no Neo4j: scripts/neo4j_local.py start failed for {wait_minutes:g} min: {exc}") from exc
            console.print(f"[yellow]Neo4j not available yet ({type(exc).__name__}: {exc}); retrying in 60 s[/]")
            time.sleep(60)


def _server_cpu(pid: int | None) -> float | None:
    """User+system CPU seconds of the server process so far (None if not local)."""
    if not pid:
        return None
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return None


def _busy_cpu() -> float:
    """CPU seconds the whole machine has spent busy (all processes), from /proc/stat."""
    try:
        fields = Path("/proc/stat").read_text().splitlines()[0].split()[1:]
        user, nice, system, _idle, _iowait, irq, softirq, steal = (int(f) for f in fields[:8])
        return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return 0.0


def check_wipeable(driver: Any, database: str) -> bool:
    """Refuse a database holding nodes that are neither gaf's nor the test marker; True if marked."""
    allowed = [*GAF_LABELS, MARKER_LABEL]
    with driver.session(database=database) as session:
        row = session.run(
            "MATCH (n) WHERE size(labels(n)) = 0 OR any(l IN labels(n) WHERE NOT l IN $allowed) "
            "RETURN count(n) AS n, collect(DISTINCT labels(n))[..5] AS sample",
            allowed=allowed,
        ).single()
        if row["n"]:
            raise Refused(
                f"the Neo4j database {database!r} holds {row['n']} node(s) that are not gaf's "
                f"(labels such as {row['sample']}); refusing to empty it — point NEO4J_URI at a scratch database"
            )
        return bool(session.run(f"MATCH (m:{MARKER_LABEL}) RETURN count(m) AS n").single()["n"])


def wipe(driver: Any, database: str) -> None:
    check_wipeable(driver, database)
    with driver.session(database=database) as session:
        for statement in WIPE:
            session.run(statement).consume()
        try:  # make the next run start without a pending checkpoint of the deletes
            session.run("CALL db.checkpoint()").consume()
        except Exception:  # noqa: BLE001 - not every edition allows it; only hygiene
            pass


def neo4j_counts(driver: Any, database: str) -> tuple[int, int, dict[str, int], dict[str, int]]:
    with driver.session(database=database) as session:
        labels = {r["l"]: r["n"] for r in session.run("MATCH (n) UNWIND labels(n) AS l RETURN l, count(*) AS n")}
        types = {r["t"]: r["n"] for r in session.run("MATCH ()-[r]->() RETURN type(r) AS t, count(*) AS n")}
        nodes = session.run("MATCH (n) RETURN count(n) AS n").single()["n"]
        rels = session.run("MATCH ()-[r]->() RETURN count(r) AS n").single()["n"]
    return _without_stamp(nodes, rels, labels, types)


def ladybug_counts(conn: Any) -> tuple[int, int, dict[str, int], dict[str, int]]:
    def rows(query: str) -> list[list[Any]]:
        return conn.execute(query).get_all()

    labels = {label: n for label, n in rows("MATCH (n) RETURN label(n), count(*)") if n}
    types = {label: n for label, n in rows("MATCH ()-[r]->() RETURN label(r), count(*)") if n}
    nodes = rows("MATCH (n) RETURN count(n)")[0][0]
    rels = rows("MATCH ()-[r]->() RETURN count(r)")[0][0]
    return _without_stamp(nodes, rels, labels, types)


def _without_stamp(nodes: int, rels: int, labels: dict[str, int], types: dict[str, int]) -> tuple[int, int, dict[str, int], dict[str, int]]:
    """The counts of the ingested graph: the store's schema version stamp and its write log, with
    the log's own relationships (gaf/records/schema.py), are not part of it."""
    own = {SchemaVersion.LABEL, LogEntry.LABEL}  # the subject keys are written with the propositions: counted
    own_rels = {rel for cls in (SchemaVersion, LogEntry) for rel, _ in cls.REFS.values()}
    nodes -= sum(labels.pop(label, 0) for label in own)
    rels -= sum(types.pop(rel, 0) for rel in own_rels)
    return nodes, rels, labels, types


# ---------------------------------------------------------------------- the timed loops


def _progress() -> Progress:
    """A rich progress bar; on a non-terminal (a log file) a line every 10 % instead."""
    if not console.is_terminal:
        return _LogProgress()  # type: ignore[return-value]
    return Progress(
        TextColumn("{task.description:<28}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("records"),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=console,
        refresh_per_second=4,
        transient=False,
    )


class _LogProgress:
    """The part of rich's Progress used here, printing plain lines for log files."""

    def __init__(self) -> None:
        self.tasks: dict[int, list[Any]] = {}

    def __enter__(self) -> _LogProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        pass

    def add_task(self, description: str, total: int) -> int:
        self.tasks[len(self.tasks)] = [description, total, 0, 0, time.monotonic()]
        return len(self.tasks) - 1

    def advance(self, task: int, amount: int) -> None:
        entry = self.tasks[task]
        entry[2] += amount
        tenth = min(10, int(10 * entry[2] / max(entry[1], 1)))
        if tenth > entry[3]:
            entry[3] = tenth
            console.print(f"{entry[0]}: {entry[2]:,}/{entry[1]:,} ({tenth * 10} %) after {time.monotonic() - entry[4]:.0f} s")


def timed_batches(label: str, batches: Sequence[Any], sizes: Sequence[int], write: Callable[[Any], None], pid: int | None):
    """Call ``write`` on each batch under a progress bar; time the loop."""
    latencies: list[float] = []
    gc.collect()
    cpu0, srv0, busy0 = time.process_time(), _server_cpu(pid), _busy_cpu()
    with _progress() as progress:
        task = progress.add_task(label, total=sum(sizes))
        # The whole loop is timed (a streaming writer works between calls too); the progress
        # display inside it costs microseconds per batch.
        began = time.perf_counter()
        for batch, size in zip(batches, sizes, strict=True):
            started = time.perf_counter()
            write(batch)
            latencies.append(time.perf_counter() - started)
            progress.advance(task, size)
        total = time.perf_counter() - began
    cpu, srv1, busy = time.process_time() - cpu0, _server_cpu(pid), _busy_cpu() - busy0
    server = srv1 - srv0 if srv0 is not None and srv1 is not None else None
    # Whatever else ran meanwhile (a test suite, a build) competes for the same cores.
    other = max(0.0, busy - cpu - (server or 0.0))
    return total, cpu, server, other, latencies


def _run_statements(tx: Any, statements: list[tuple[str, list[dict[str, Any]]]]) -> None:
    for cypher, rows in statements:
        tx.run(cypher, rows=rows).consume()


# ---------------------------------------------------------------------- the benchmark


@dataclass
class Context:
    args: argparse.Namespace
    graph: Graph
    batches: list[Sequence[Record]]
    sizes: list[int]
    plans: list[BatchPlan]
    prep_seconds: float
    runs: list[Run] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)


def _verify(ctx: Context, store: str, variant: str, counts: tuple[int, int, dict[str, int], dict[str, int]]) -> bool:
    nodes, rels, labels, types = counts
    labels = {k: v for k, v in labels.items() if k != MARKER_LABEL}
    ok = nodes == ctx.graph.nodes and rels == ctx.graph.rels and labels == ctx.graph.by_label and types == ctx.graph.by_rel
    colour = "green" if ok else "red"
    console.print(
        f"  [{colour}]{store}/{variant}: store holds {nodes:,} nodes and {rels:,} relationships; "
        f"graph has {ctx.graph.nodes:,} and {ctx.graph.rels:,} — {'same counts (per label and type too)' if ok else 'MISMATCH'}[/]"
    )
    if not ok:
        for name, got, want in (("label", labels, ctx.graph.by_label), ("type", types, ctx.graph.by_rel)):
            for key in sorted(set(got) | set(want)):
                if got.get(key) != want.get(key):
                    console.print(f"    [red]{name} {key}: store {got.get(key)} vs graph {want.get(key)}[/]")
    return ok


def _record(ctx: Context, store: str, variant: str, timing: tuple, counts: tuple, note: str = "", **extra: Any) -> Run:
    seconds, cpu, server_cpu, other_cpu, latencies = timing
    run = Run(
        store=store,
        variant=variant,
        seconds=seconds,
        records=len(ctx.graph.records),
        nodes=ctx.graph.nodes,
        rels=ctx.graph.rels,
        batches=len(ctx.batches),
        client_cpu=cpu,
        server_cpu=server_cpu,
        other_cpu=other_cpu,
        batch_p50=statistics.median(latencies),
        batch_max=max(latencies),
        counted_nodes=counts[0],
        counted_rels=counts[1],
        verified=_verify(ctx, store, variant, counts),
        note=note,
        extra=extra,
    )
    console.print(
        f"  {store}/{variant}: {seconds:.1f} s, {run.nodes_per_s:,.0f} nodes/s, {run.rels_per_s:,.0f} rels/s, "
        f"client CPU {cpu:.1f} s"
        + (f", server CPU {server_cpu:.1f} s" if server_cpu is not None else "")
        + f", other processes {other_cpu:.1f} CPU s"
    )
    if other_cpu > 0.1 * seconds:
        console.print(f"  [yellow]other processes used {other_cpu:.1f} CPU s during this run: the timing is disturbed[/]")
    ctx.runs.append(run)
    return run


def _profiled(path: Path | None, write: Callable[[Any], None]) -> tuple[Callable[[Any], None], cProfile.Profile | None]:
    if path is None:
        return write, None
    profiler = cProfile.Profile()

    def wrapped(batch: Any) -> None:
        profiler.enable()
        try:
            write(batch)
        finally:
            profiler.disable()

    return wrapped, profiler


def _dump_profile(profiler: cProfile.Profile | None, path: Path | None, name: str) -> None:
    if profiler is None or path is None:
        return
    path.mkdir(parents=True, exist_ok=True)
    target = path / f"{name}.prof"
    profiler.dump_stats(target)
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out)
    stats.sort_stats("tottime").print_stats(25)
    (path / f"{name}.txt").write_text(out.getvalue())
    console.print(f"  profile of {name} written to {target} (top functions by own time in {path / (name + '.txt')})")


def _streamed(store: Any, batches: list[Sequence[Record]], at: datetime) -> Callable[[Sequence[Record]], None]:
    """A write function for the ``stream`` variant: each call commits the next batch of one
    ``put_batches`` stream over all of them (which prepares the following batch meanwhile)."""
    stream = store.put_batches(batches, at=at)
    expected = iter(batches)

    def write(batch: Sequence[Record]) -> None:
        if batch is not next(expected):
            raise RuntimeError("the stream variant must be given the batches in order")
        next(stream)

    return write


def bench_neo4j(ctx: Context) -> None:
    import neo4j

    from gaf.store.neo4j import Neo4jStore

    args = ctx.args
    target = neo4j_target(args.wait_minutes)
    pid = target.get("pid")
    database = os.environ.get("NEO4J_DATABASE") or "neo4j"
    driver = neo4j.GraphDatabase.driver(target["uri"], auth=(target["user"], target["password"]))
    driver.verify_connectivity()
    store = Neo4jStore(target["uri"], user=target["user"], password=target["password"], database=database)
    marked = check_wipeable(driver, database)
    ctx.meta["neo4j"] = _neo4j_meta(driver, database, target)
    console.print(
        f"[bold]Neo4j[/] {ctx.meta['neo4j'].get('version')} at {target['uri']} (database {database}); "
        f"driver {ctx.meta['machine']['neo4j_driver']}, Rust codec {'on' if ctx.meta['machine']['neo4j_rust_ext'] else 'off'}"
    )

    def raw_write(batch: BatchPlan) -> None:
        with driver.session(database=database) as session:
            session.execute_write(_run_statements, batch.statements)

    written_at = datetime.now(timezone.utc)

    def gaf_write(batch: Sequence[Record]) -> None:
        store.put(batch, at=written_at)

    variants: dict[str, tuple[Callable[[Any], None], list[Any]]] = {"raw": (raw_write, ctx.plans)}
    if "gaf" in args.variants:
        variants["gaf"] = (gaf_write, ctx.batches)
    if "stream" in args.variants:
        variants["stream"] = (lambda batch: None, ctx.batches)  # a fresh stream per run, below

    try:
        if args.warmup:
            # Warm the server's JIT and query caches and the client: a few batches each, then wipe.
            wipe(driver, database)
            store.init()
            n = min(args.warmup, len(ctx.batches))
            console.print(f"  warm-up: {n} batch(es) per variant, not timed")
            for name, (write, batches) in variants.items():
                if name == "stream":
                    write = _streamed(store, batches[:n], written_at)
                for batch in batches[:n]:
                    write(batch)
                wipe(driver, database)
                store.init()
        order = [v for v in ("raw", "gaf", "stream") if v in variants]
        for rep in range(args.repeat):
            for name in order if rep % 2 == 0 else list(reversed(order)):
                write, batches = variants[name]
                if name == "stream":
                    write = _streamed(store, batches, written_at)
                wipe(driver, database)
                store.init()
                profile_dir = Path(args.profile) if args.profile else None
                write, profiler = _profiled(profile_dir, write)
                timing = timed_batches(f"neo4j {name}" + (f" #{rep + 1}" if args.repeat > 1 else ""), batches, ctx.sizes, write, pid)
                _dump_profile(profiler, profile_dir, f"neo4j-{name}")
                note = "cProfile on (not comparable)" if profiler else ""
                _record(ctx, "neo4j", name, timing, neo4j_counts(driver, database), note=note, rep=rep + 1)
    finally:
        if not args.keep:
            wipe(driver, database)
            if marked:
                with driver.session(database=database) as session:
                    session.run(f"CREATE (:{MARKER_LABEL})").consume()
        store.close()
        driver.close()


def _neo4j_meta(driver: Any, database: str, target: dict[str, Any]) -> dict[str, Any]:
    meta: dict[str, Any] = {"uri": target["uri"], "database": database}
    with driver.session(database=database) as session:
        for row in session.run("CALL dbms.components() YIELD name, versions, edition RETURN name, versions, edition"):
            meta["version"] = row["versions"][0]
            meta["edition"] = row["edition"]
        try:
            wanted = ["server.memory.heap.max_size", "server.memory.heap.initial_size", "server.memory.pagecache.size"]
            for row in session.run("SHOW SETTINGS YIELD name, value WHERE name IN $names RETURN name, value", names=wanted):
                meta[row["name"]] = row["value"]
        except Exception:  # noqa: BLE001 - older servers or restricted users
            pass
    local = target.get("local")
    if local is not None:  # what scripts/neo4j_local.py configures
        meta.setdefault("server.memory.heap.max_size", getattr(local, "HEAP_MAX", None))
        meta.setdefault("server.memory.heap.initial_size", getattr(local, "HEAP_INITIAL", None))
        meta.setdefault("server.memory.pagecache.size", getattr(local, "PAGE_CACHE", None))
        meta["started_by"] = "scripts/neo4j_local.py"
    return meta


def bench_ladybug(ctx: Context) -> None:
    import ladybug

    from gaf.store import GafStore
    from gaf.store.ladybug import LadybugStore

    args = ctx.args
    parent = Path(tempfile.mkdtemp(prefix="gaf-bench-", dir=args.tmp))
    ctx.meta["ladybug"] = {"version": getattr(ladybug, "__version__", None), "dir": str(parent)}
    console.print(f"[bold]LadybugDB[/] {ctx.meta['ladybug']['version']} (embedded) in {parent}")
    try:
        for rep in range(args.repeat):
            order = ["raw"] + [v for v in ("gaf", "stream") if v in args.variants]
            for name in order if rep % 2 == 0 else list(reversed(order)):
                path = parent / f"{name}-{rep}.lbug"
                if name == "raw":
                    LadybugStore(path).close()  # the same schema gaf declares
                    db = ladybug.Database(str(path))
                    conn = ladybug.Connection(db)

                    def raw_write(batch: BatchPlan, conn: Any = conn) -> None:
                        conn.execute("BEGIN TRANSACTION")
                        try:
                            for cypher, rows in batch.statements:
                                conn.execute(cypher, {"rows": rows})
                        except BaseException:
                            conn.execute("ROLLBACK")
                            raise
                        conn.execute("COMMIT")

                    timing = timed_batches(f"ladybug raw #{rep + 1}", ctx.plans, ctx.sizes, raw_write, None)
                    _record(ctx, "ladybug", name, timing, ladybug_counts(conn), rep=rep + 1)
                    conn.close()
                    db.close()
                else:
                    store = GafStore.open(str(path))
                    written_at = datetime.now(timezone.utc)
                    if name == "gaf":

                        def write(batch: Sequence[Record], store: Any = store, at: datetime = written_at) -> None:
                            store.put(batch, at=at)
                    else:
                        write = _streamed(store, ctx.batches, written_at)

                    timing = timed_batches(f"ladybug {name} #{rep + 1}", ctx.batches, ctx.sizes, write, None)
                    _record(ctx, "ladybug", name, timing, ladybug_counts(store._conn), rep=rep + 1)
                    store.close()
                _remove(path)
    finally:
        if not args.keep:
            shutil.rmtree(parent, ignore_errors=True)


def _remove(path: Path) -> None:
    """Delete a LadybugDB store (a file or a directory) and its side files (WAL, lock)."""
    for item in path.parent.glob(path.name + "*"):
        if item.is_dir():
            shutil.rmtree(item, ignore_errors=True)
        else:
            item.unlink(missing_ok=True)


# ---------------------------------------------------------------------- report


def _machine() -> dict[str, Any]:
    meminfo = Path("/proc/meminfo").read_text() if Path("/proc/meminfo").exists() else ""
    mem_kib = next((int(line.split()[1]) for line in meminfo.splitlines() if line.startswith("MemTotal:")), 0)
    cpu = ""
    if Path("/proc/cpuinfo").exists():
        cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines() if line.startswith("model name")), "")
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    except OSError:
        commit = ""
    import neo4j as neo4j_driver
    import pydantic

    try:
        import neo4j._rust  # noqa: F401 - the optional compiled codec (pip install neo4j-rust-ext)

        rust = True
    except ImportError:
        rust = False
    return {
        "cores": os.cpu_count(),
        "neo4j_rust_ext": rust,
        "cpu": cpu,
        "ram_gib": round(mem_kib / 2**20, 1),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "neo4j_driver": neo4j_driver.__version__,
        "pydantic": pydantic.VERSION,
        "git": commit,
    }


def report(doc: dict[str, Any]) -> None:
    """Print the results table of one results document (see ``to_json``)."""
    graph, runs = doc["graph"], [_run_of(r) for r in doc["runs"]]
    table = Table(
        title=f"ingest of {graph['nodes']:,} nodes / {graph['rels']:,} relationships "
        f"({graph['records']:,} records, batches of {doc['args']['batch']}, seed {graph['seed']}) — {doc['date']}",
        title_justify="left",
    )
    for column in (
        "store", "variant", "#", "seconds", "records/s", "nodes/s", "rels/s", "client CPU s",
        "server CPU s", "other CPU s", "batch p50/max s", "vs raw", "vs raw (CPU)", "counts",
    ):
        table.add_column(column, justify="left" if column in ("store", "variant", "counts") else "right")
    baselines = {(r.store, r.extra.get("rep")): r for r in runs if r.variant == "raw"}
    for run in runs:
        base = baselines.get((run.store, run.extra.get("rep")))
        ratio = cpu_ratio = "—"
        if base and run.variant != "raw":
            ratio = f"{base.seconds / run.seconds:.2f}"
            cpu_ratio = f"{_cpu(base) / _cpu(run):.2f}"
        table.add_row(
            run.store,
            run.variant + (f" ({run.note})" if run.note else ""),
            str(run.extra.get("rep", "")),
            f"{run.seconds:,.1f}",
            f"{run.records_per_s:,.0f}",
            f"{run.nodes_per_s:,.0f}",
            f"{run.rels_per_s:,.0f}",
            f"{run.client_cpu:,.1f}",
            "—" if run.server_cpu is None else f"{run.server_cpu:,.1f}",
            f"{run.other_cpu:,.1f}",
            f"{run.batch_p50:.2f}/{run.batch_max:.2f}",
            ratio,
            cpu_ratio,
            f"{run.counted_nodes:,} / {run.counted_rels:,} " + ("ok" if run.verified else "MISMATCH"),
        )
    out = Console()
    if not out.is_terminal:
        out = Console(width=220)
    out.print(table)
    print(
        "vs raw = raw seconds / variant seconds (throughput ratio; goal for gaf on Neo4j: >= 0.8); "
        "vs raw (CPU) = the same ratio of client + server CPU seconds, which other processes on the machine disturb less. "
        f"Graph built in {graph['build_seconds']:.1f} s; raw rows prepared in {graph['raw_prep_seconds']:.1f} s "
        "(outside the raw timing; gaf does the equivalent work inside put)."
    )
    for store in sorted({r.store for r in runs}):
        raws = [r.seconds for r in runs if r.store == store and r.variant == "raw"]
        for variant in sorted({r.variant for r in runs if r.store == store and r.variant != "raw" and not r.note}):
            mine = [r.seconds for r in runs if r.store == store and r.variant == variant and not r.note]
            if raws and mine:
                print(f"{store}: {variant}/raw throughput ratio, median over runs: {statistics.median(raws) / statistics.median(mine):.2f}")


def markdown(doc: dict[str, Any], path: str = "") -> str:
    """The results of one document as a Markdown table, for docs/benchmarks.md."""
    graph, runs = doc["graph"], [_run_of(r) for r in doc["runs"]]
    lines = [
        f"`{doc['command']}` — {doc['date']}" + (f" — `{path}`" if path else ""),
        "",
        f"{graph['nodes']:,} nodes, {graph['rels']:,} relationships, {graph['records']:,} records, batches of {doc['args']['batch']}",
        "",
        "| store | variant | seconds | records/s | nodes/s | rels/s | client CPU s | server CPU s | other CPU s | vs raw | vs raw (CPU) | counts |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    baselines = {(r.store, r.extra.get("rep")): r for r in runs if r.variant == "raw"}
    for run in runs:
        base = baselines.get((run.store, run.extra.get("rep")))
        ratio = cpu_ratio = "—"
        if base and run.variant != "raw":
            ratio, cpu_ratio = f"{base.seconds / run.seconds:.2f}", f"{_cpu(base) / _cpu(run):.2f}"
        server = "—" if run.server_cpu is None else f"{run.server_cpu:,.1f}"
        lines.append(
            f"| {run.store} | {run.variant} | {run.seconds:,.1f} | {run.records_per_s:,.0f} | {run.nodes_per_s:,.0f} | "
            f"{run.rels_per_s:,.0f} | {run.client_cpu:,.1f} | {server} | {run.other_cpu:,.1f} | {ratio} | {cpu_ratio} | "
            f"{'ok' if run.verified else 'MISMATCH'} |"
        )
    return "\n".join(lines) + "\n\n"


def _cpu(run: Run) -> float:
    """CPU seconds on the write's critical path: the client's, plus the server's when known."""
    return run.client_cpu + (run.server_cpu or 0.0)


def _run_of(data: dict[str, Any]) -> Run:
    names = set(Run.__dataclass_fields__)
    return Run(**{k: v for k, v in data.items() if k in names})


def to_json(ctx: Context) -> dict[str, Any]:
    graph = ctx.graph
    return {
        "benchmark": "ingest",
        "date": ctx.meta["date"],
        "command": ctx.meta["command"],
        "args": vars(ctx.args),
        "machine": ctx.meta["machine"],
        "load_average": ctx.meta.get("load_average"),
        "neo4j": ctx.meta.get("neo4j"),
        "ladybug": ctx.meta.get("ladybug"),
        "graph": {
            "seed": graph.seed,
            "cases": graph.cases,
            "records": len(graph.records),
            "nodes": graph.nodes,
            "rels": graph.rels,
            "by_label": graph.by_label,
            "by_rel": graph.by_rel,
            "build_seconds": graph.build_seconds,
            "raw_prep_seconds": ctx.prep_seconds,
        },
        "runs": [
            {
                **asdict(run),
                "records_per_s": run.records_per_s,
                "nodes_per_s": run.nodes_per_s,
                "rels_per_s": run.rels_per_s,
            }
            for run in ctx.runs
        ],
    }


# ---------------------------------------------------------------------- CLI


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench ingest", description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, default=1_000_000, help="nodes in the synthetic graph (about 3.2 relationships each)")
    parser.add_argument("--stores", default="neo4j,ladybug", help="comma-separated: neo4j, ladybug")
    parser.add_argument("--batch", type=int, default=5000, help="records per put / per transaction")
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON here")
    parser.add_argument("--seed", type=int, default=20260705)
    parser.add_argument("--repeat", type=int, default=1, help="runs per variant (order alternates between repeats)")
    parser.add_argument("--variants", default="raw,gaf", help="raw,gaf[,stream]: stream is put_batches, which prepares the next batch in a thread while one is written")
    parser.add_argument("--warmup", type=int, default=3, help="batches per variant written and wiped before timing (Neo4j; 0: none)")
    parser.add_argument("--profile", metavar="DIR", help="run every variant under cProfile and write DIR/<store>-<variant>.prof/.txt")
    parser.add_argument("--keep", action="store_true", help="leave the last run's data in the stores")
    parser.add_argument("--tmp", default=None, help="parent directory for the LadybugDB stores (default: system temp)")
    parser.add_argument("--wait-minutes", type=float, default=30, help="how long to wait for the local Neo4j to come up")
    args = parser.parse_args(argv)
    args.stores = [s.strip() for s in args.stores.split(",") if s.strip()]
    args.variants = [v.strip() for v in args.variants.split(",") if v.strip()]
    unknown = set(args.stores) - {"neo4j", "ladybug"}
    if unknown:
        parser.error(f"unknown store(s) {sorted(unknown)}")
    if args.batch <= 0 or args.nodes <= 0:
        parser.error("--batch and --nodes must be positive")
    return args


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["--report"]:  # re-print saved results: python -m bench ingest --report [--markdown] a.json ...
        paths = [a for a in argv[1:] if a != "--markdown"]
        for path in paths:
            doc = json.loads(Path(path).read_text())
            if "--markdown" in argv:
                print(markdown(doc, path), end="")
            else:
                report(doc)
        return 0
    args = parse_args(argv)
    meta = {
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "command": "python -m bench ingest " + " ".join(argv),
        "machine": _machine(),
        # the 1-, 5- and 15-minute load averages when the run started and ended: a benchmark is
        # only worth its figures on a machine that was otherwise idle (2 cores here)
        "load_average": {"start": list(os.getloadavg())},
    }
    with _progress() as progress:
        task = progress.add_task("building records", total=args.nodes)
        graph = build(args.nodes, seed=args.seed, progress=lambda n: progress.advance(task, n))
        batches = graph.batches(args.batch)
        sizes = [len(b) for b in batches]
        started = time.perf_counter()
        task = progress.add_task("preparing raw rows", total=len(graph.records))
        plans = []
        for batch_plan, size in zip(plan(batches, STATEMENT_ROWS), sizes, strict=True):
            plans.append(batch_plan)
            progress.advance(task, size)
        prep = time.perf_counter() - started
    console.print(
        f"graph: {graph.cases:,} cases, {len(graph.records):,} records → {graph.nodes:,} nodes, {graph.rels:,} relationships "
        f"({graph.rels / graph.nodes:.2f} per node), {len(batches)} batches of ≤{args.batch}; built in {graph.build_seconds:.1f} s"
    )
    ctx = Context(args=args, graph=graph, batches=batches, sizes=sizes, plans=plans, prep_seconds=prep, meta=meta)
    gc.freeze()  # the graph lives for the whole run: keep the collector from rescanning it
    try:
        if "neo4j" in args.stores:
            bench_neo4j(ctx)
        if "ladybug" in args.stores:
            bench_ladybug(ctx)
    except Refused as exc:
        console.print(f"[red]refused:[/] {exc}")
        return 1
    finally:
        if ctx.runs:
            meta["load_average"]["end"] = list(os.getloadavg())
            doc = to_json(ctx)
            report(doc)
            if args.json:
                Path(args.json).parent.mkdir(parents=True, exist_ok=True)
                Path(args.json).write_text(json.dumps(doc, indent=2, default=str) + "\n")
                console.print(f"results written to {args.json}")
    return 0 if all(r.verified for r in ctx.runs) else 1


if __name__ == "__main__":
    sys.exit(main())
