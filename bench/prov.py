"""PROV export benchmark: the whole store as N-Triples, streamed by gaf, against rdflib Graph-then-serialize.

    python -m bench prov [--sizes 10000,100000,1000000] [--json bench/results/prov.json]
    python -m bench prov --report bench/results/prov.json      # print saved results again

For each size, bench/graph.py's synthetic provenance graph (cases of claims,
evaluations, accepted facts, derivations, GAFs, closures and verdicts) is drawn
to that many records (nodes: propositions are stored records too), with
bench/impact.py's defaults (a pool of records/50 sources, Zipf-skewed use, its
seed), written as gaf's own node rows and edges to CSV and bulk-loaded with
``COPY FROM`` into an embedded LadybugDB store declared by ``LadybugStore``
(``write_csv`` and ``load_ladybug`` of bench/impact.py; loading is not
measured). ``--reuse-csv DIR`` uses a graph bench/impact.py already drew, when
its arguments are the same (it is only read). Then each variant
runs in a fresh child process of its own (``python -m bench prov --child …``),
one after the other, opening the store read-only:

* ``read``   — ``prov_export.export.all_records(store)`` only: every record, kind
  by kind, ids then bodies a chunk of 2,000 at a time, each body parsed and
  checked against its id. What both exports spend reading.
* ``gaf``    — ``prov_export.stream_all(store, out)``: what ``gaf export prov --all
  --format nt --out FILE`` runs — the records read the same way
  (``prov_export.export.mapped``: ``all_records``, an accepted fact's justification
  fetched with those of the 2,000 facts beside it), each record's triples written as
  canonical N-Triples lines by ``prov_export.ntriples`` (no rdflib Graph), piped to the
  system's ``sort -u`` in a child process (a 64 MiB buffer; past it, sorted runs spilled
  and merged) and its output copied to the file and hashed. The child's CPU seconds and
  peak resident set (its VmHWM, sampled with the RSS) are reported beside the table
  (``children_*`` in the JSON), not in its columns, which are the export's own process.
* ``rdflib`` — **the baseline**: the same records and triples (``mapped``), added to one
  ``rdflib.Graph``, then ``Graph.serialize(destination=out, format="nt")``.

Measured in each child: wall seconds from the first record read to the file
closed; the seconds spent reading (``all_records`` and the store's ``get_many``
outside it are wrapped with a timer in the child: the ``read`` share of the two
exports; *serialisation* is the wall seconds less those); process CPU
seconds; and memory. Once the store is open and everything imported, the
child's resident set is read (*ready*, ``/proc/self/statm``) and its peak is
reset to it (``/proc/self/clear_refs`` ← 5 resets ``VmHWM``); at the end
``VmHWM`` (``/proc/self/status``) is the *peak* resident set of the export
itself, and *peak − ready* what the export added. (Not ``ru_maxrss``: in a
child started by fork and exec, Linux carries the peak of the pre-exec image —
the parent's resident set — into it, and the reset does not clear that; the
whole-life ``ru_maxrss`` is kept in the JSON as ``life_peak_mb``. Where the reset is
refused, the peak is the whole process life, and the JSON says so.) The resident set includes the LadybugDB pages the reads touched (its
buffer pool lives in the process), which the ``read`` variant shows on its own.
RSS is also sampled every 0.25 s to show whether it stays flat. ``--cache-mb N`` caps that
buffer pool at N MiB in every variant (what GAF_CACHE_MB does for gaf's commands).

Checked after each size: the set of distinct triples of the two files is the same
— exactly, as sets of triples parsed back by pyoxigraph (each written in its
canonical form, so rdflib's and gaf's escaping cannot differ), up to
``--exact-max`` records; by 64-bit hashes of the canonical lines above. Throughput
is distinct triples ÷ wall seconds for both.

The baseline holds the whole graph in memory (roughly 1 KB per triple). Before
running it, the runner estimates its peak from the smaller sizes of the same run
and skips it — saying so — if that would not fit in ``MemAvailable`` less
``--headroom-gb``; ``--baseline-max`` caps it by hand.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import resource
import subprocess
import sys
import threading
import time
from argparse import Namespace
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

ROOT = Path(__file__).resolve().parent.parent
console = Console(stderr=True)
VARIANTS = ("read", "gaf", "rdflib")
PAGE = os.sysconf("SC_PAGE_SIZE")


# ---------------------------------------------------------------------- memory


def _rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * PAGE


def _maxrss_bytes() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # KiB on Linux


def _hwm_bytes(pid: int | None = None) -> int:
    """A process's peak RSS (VmHWM; this one's by default): unlike ru_maxrss it is not raised by
    exited threads' snapshots, nor, in a child, by the image it had before exec. 0 for a child
    that has gone."""
    try:
        with open(f"/proc/{pid or 'self'}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return 0
    return _maxrss_bytes() if pid is None else 0


def _children(pid: str = "self") -> list[int]:
    """A process's descendants (this one's by default): the export's mapping process and the
    system's sort it writes to."""
    pids: list[int] = []
    try:
        tasks = list(Path(f"/proc/{pid}/task").iterdir())
    except OSError:
        return pids
    for task in tasks:
        try:
            found = [int(p) for p in (task / "children").read_text().split()]
        except OSError:
            continue
        for child in found:
            pids += [child, *_children(str(child))]
    return pids


def _name(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return "?"


def _reset_peak() -> bool:
    """Reset the process's peak RSS (VmHWM) to its current RSS (Linux ≥ 4.0)."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def _mem_available() -> int:
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    return 0


class _Sampler(threading.Thread):
    """The resident set every ``every`` seconds, while the export runs."""

    def __init__(self, every: float = 0.25):
        super().__init__(daemon=True)
        self.every = every
        self.samples: list[tuple[float, int]] = []
        self._done = threading.Event()
        self._t0 = time.perf_counter()
        self.peaks: dict[int, tuple[str, int]] = {}

    def run(self) -> None:
        while not self._done.wait(self.every):
            self.samples.append((time.perf_counter() - self._t0, _rss_bytes()))
            for pid in _children():
                name, peak = self.peaks.get(pid, (_name(pid), 0))
                self.peaks[pid] = (name, max(peak, _hwm_bytes(pid)))

    @property
    def children_peak(self) -> int:
        """The sum of the peak resident sets (VmHWM, which starts afresh at exec) the export's
        descendant processes (its mapping process, the system's sort) had reached at a sample:
        their last 0.25 s may be missed."""
        return sum(peak for _, peak in self.peaks.values())

    def children_peaks(self) -> dict[str, float]:
        """Each descendant's peak (MB), by program name."""
        out: dict[str, float] = {}
        for name, peak in self.peaks.values():
            out[name] = out.get(name, 0) + peak / 2**20
        return out

    def stop(self) -> list[tuple[float, int]]:
        self._done.set()
        self.join()
        return self.samples


def _profile(samples: list[tuple[float, int]], points: int = 10) -> list[list[float]]:
    """The RSS (MB) at ``points`` evenly spaced moments of the run."""
    if not samples:
        return []
    step = max(1, len(samples) // points)
    picked = samples[step - 1 :: step][:points]
    if picked[-1] != samples[-1]:
        picked.append(samples[-1])
    return [[round(t, 1), round(rss / 2**20, 1)] for t, rss in picked]


# ---------------------------------------------------------------------- one variant, in its own process


def child(variant: str, store_path: str, out: str, total: int, cache_mb: int = 0) -> dict[str, Any]:
    """Run one variant on the store at ``store_path`` (LadybugDB's buffer pool capped at ``cache_mb``
    MiB, as GAF_CACHE_MB does; 0: its default); everything it measured."""
    import importlib

    from rdflib import Graph

    from gaf.store.ladybug import LadybugStore
    from prov_export.mapping import DEFAULT_BASE, Mapper

    pe = importlib.import_module("prov_export.export")  # the module: the package's ``export`` is the function
    store = LadybugStore(store_path, read_only=True, cache_mb=cache_mb or None)
    reading = {"seconds": 0.0, "records": 0}
    unwrapped = pe.all_records

    def timed_records(s: Any, **kw: Any) -> Any:
        """all_records, with the time spent producing each record added up."""
        it = iter(unwrapped(s, **kw))
        while True:
            started = time.perf_counter()
            inside["records"] = True
            try:
                record = next(it)
            except StopIteration:
                reading["seconds"] += time.perf_counter() - started
                return
            finally:
                inside["records"] = False
            reading["seconds"] += time.perf_counter() - started
            reading["records"] += 1
            yield record

    pe.all_records = timed_records  # stream_all looks it up at call time
    inside = {"records": False}
    unwrapped_get_many = store.get_many

    def timed_get_many(ids: Any, *args: Any, **kw: Any) -> Any:
        """get_many outside all_records (an accepted fact's justification) is reading too."""
        if inside["records"]:
            return unwrapped_get_many(ids, *args, **kw)
        started = time.perf_counter()
        try:
            return unwrapped_get_many(ids, *args, **kw)
        finally:
            reading["seconds"] += time.perf_counter() - started

    store.get_many = timed_get_many  # type: ignore[method-assign]
    opened_peak = _hwm_bytes()  # opening the store can peak above where it settles
    ready = _rss_bytes()
    reset = _reset_peak()
    result: dict[str, Any] = {"variant": variant}
    sampler = _Sampler()
    bar = Progress(TextColumn(f"{variant}: records"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                   TimeRemainingColumn(), console=console, transient=True)  # fmt: skip
    task = bar.add_task(variant, total=total)
    cpu0 = time.process_time()
    sampler.start()
    started = time.perf_counter()
    with bar:
        if variant == "read":
            n = 0
            for _ in pe.all_records(store):
                n += 1
                if n % 1000 == 0:
                    bar.update(task, completed=n)
            result["records"] = n
        elif variant == "gaf":
            exported = pe.stream_all(store, out, base=DEFAULT_BASE, progress=lambda _, n, __: bar.update(task, completed=n))
            result["records"] = exported.records
            result["lines"] = exported.triples
        elif variant == "rdflib":
            g = Graph()
            n = 0
            for _, triples in pe.mapped(store, Mapper(DEFAULT_BASE)):  # the records and triples stream_all writes
                for triple in triples:
                    g.add(triple)
                n += 1
                if n % 1000 == 0:
                    bar.update(task, completed=n)
            built = time.perf_counter()
            result["build_seconds"] = built - started
            result["graph_triples"] = len(g)
            result["built_rss_mb"] = _rss_bytes() / 2**20
            g.serialize(destination=out, format="nt", encoding="utf-8")
            result["serialize_seconds"] = time.perf_counter() - built
            result["records"] = n
            result["lines"] = len(g)
        else:
            raise SystemExit(f"unknown variant {variant!r}")
    seconds = time.perf_counter() - started
    cpu = time.process_time() - cpu0
    children = os.times()  # the CPU of the export's own child processes (the system's sort), once waited for
    samples = sampler.stop()
    peak = _hwm_bytes() if reset else _maxrss_bytes()
    life_peak = _maxrss_bytes()
    store.close()
    result.update(
        seconds=seconds,
        cpu_seconds=cpu,
        read_seconds=reading["seconds"],
        records_read=reading["records"],
        opened_peak_mb=opened_peak / 2**20,
        ready_mb=ready / 2**20,
        peak_mb=peak / 2**20,
        peak_scope="VmHWM from ready to the end (reset through /proc/self/clear_refs)" if reset else "ru_maxrss, whole process life",
        life_peak_mb=life_peak / 2**20,
        added_mb=(peak - ready) / 2**20,
        rss_profile=_profile(samples),
        sampled_max_mb=max((rss for _, rss in samples), default=0) / 2**20,  # every 0.25 s: misses short peaks
        out_bytes=Path(out).stat().st_size if variant != "read" else None,
        children_cpu_seconds=children.children_user + children.children_system,
        children_peak_mb=sampler.children_peak / 2**20,
        children_peaks_mb=sampler.children_peaks(),
    )
    return result


def run_child(variant: str, store_path: Path, out: Path, total: int, cache_mb: int = 0) -> dict[str, Any]:
    """``child`` in a fresh interpreter; its JSON result."""
    cmd = [sys.executable, "-m", "bench", "prov", "--child", variant, "--store", str(store_path), "--out", str(out),
           "--total", str(total), "--cache-mb", str(cache_mb)]  # fmt: skip
    proc = subprocess.run(cmd, cwd=ROOT, stdout=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"{variant}: child exited with {proc.returncode}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


# ---------------------------------------------------------------------- checking the outputs


def line_hashes(path: Path) -> Any:
    """Sorted distinct 64-bit hashes of the file's non-empty lines, and the number of non-empty lines."""
    from array import array

    import numpy as np

    hashes = array("Q")
    lines = 0
    with path.open("rb") as f:
        for line in f:
            line = line.rstrip(b"\n")
            if not line:
                continue
            lines += 1
            hashes.append(int.from_bytes(hashlib.blake2b(line, digest_size=8).digest(), "little"))
    return np.unique(np.frombuffer(hashes, dtype=np.uint64)), lines


def check(gaf_out: Path, base_out: Path | None, exact: bool) -> dict[str, Any]:
    """Distinct triples of each file, and whether the two sets are the same."""
    import numpy as np

    ours, lines = line_hashes(gaf_out)
    out: dict[str, Any] = {"gaf_lines": lines, "gaf_distinct": int(len(ours))}
    if base_out is None:
        out["method"] = "gaf file only (no baseline at this size)"
        return out
    canonical = canonical_copy(base_out)
    theirs, base_lines = line_hashes(canonical)
    out.update(rdflib_lines=base_lines, rdflib_distinct=int(len(theirs)))
    if exact:
        a = {x for x in gaf_out.read_text("utf-8").splitlines() if x}
        b = {x for x in canonical.read_text("utf-8").splitlines() if x}
        out.update(method="exact: sets of canonical N-Triples lines (the baseline's parsed back by pyoxigraph)", same=a == b,
                   only_gaf=len(a - b), only_rdflib=len(b - a))  # fmt: skip
    else:
        out.update(method="sets of 64-bit blake2b hashes of canonical N-Triples lines (the baseline's parsed back by pyoxigraph)",
                   same=bool(len(ours) == len(theirs) and np.array_equal(ours, theirs)))  # fmt: skip
    canonical.unlink()
    return out


def canonical_copy(path: Path) -> Path:
    """The file's triples as pyoxigraph writes them, canonical N-Triples, one per line (parsed
    as a stream: rdflib and gaf may escape a character differently, the triples must be the same)."""
    import pyoxigraph as ox

    target = path.with_suffix(".canonical.nt")
    with path.open("rb") as source, target.open("w", encoding="utf-8") as f:
        for triple in ox.parse(source, format=ox.RdfFormat.N_TRIPLES):
            f.write(f"{triple} .\n")
    return target


# ---------------------------------------------------------------------- one size


def measure_size(size: int, args: Namespace, result: dict[str, Any]) -> dict[str, Any]:
    from bench.impact import load_ladybug, write_csv

    work = Path(args.workdir) / f"n{size}"
    sources = args.sources or max(40, size // 50)
    csv_dir = work / "csv"
    for other in args.reuse_csv:  # a graph another benchmark drew with the same arguments (read, never rewritten)
        marker = Path(other) / "graph.json"
        if marker.is_file() and json.loads(marker.read_text())["args"] == {"nodes": size, "sources": sources, "skew": args.skew, "seed": args.seed}:
            csv_dir = Path(other)
    shape = write_csv(csv_dir, size, sources, args.skew, args.seed)
    store, meta = load_ladybug(csv_dir, shape, Namespace(ladybug_dir=str(work / "ladybug-store")))
    meta["csv"] = str(csv_dir)
    store.close()
    store_path = work / "ladybug-store" / "store"
    entry: dict[str, Any] = {"records": shape["nodes"], "relationships": shape["rels"], "cases": shape["cases"], "graph_args": shape["args"],
                             "by_label": shape["by_label"], "loading": meta, "variants": {}}  # fmt: skip
    outs = {v: work / f"{v}.nt" for v in VARIANTS}
    runs: dict[str, list[dict[str, Any]]] = {v: [] for v in args.variants}
    for rep in range(args.repeat):
        order = args.variants if rep % 2 == 0 else args.variants[::-1]  # the order reverses every other repeat
        for variant in order:
            if variant == "rdflib" and rep == 0:
                skip = baseline_skip(size, entry, runs, result, args)
                if skip:
                    entry["variants"]["rdflib"] = {"skipped": skip}
                    console.print(f"[yellow]rdflib baseline skipped at {size:,}: {skip}[/]")
            if "skipped" in entry["variants"].get(variant, {}):
                continue
            outs[variant].unlink(missing_ok=True)
            load = os.getloadavg()
            console.print(f"{size:,} records: {variant}, run {rep + 1}/{args.repeat} (load average {load[0]:.1f}, "
                          f"{_mem_available() / 2**30:.1f} GiB available)")  # fmt: skip
            res = run_child(variant, store_path, outs[variant], shape["nodes"], args.cache_mb)
            res["load_before"], res["load_after"] = load, os.getloadavg()
            runs[variant].append(res)
            console.print(f"  {res['seconds']:.1f} s, peak {res['peak_mb']:,.0f} MB (ready {res['ready_mb']:,.0f} MB)")
    for variant, done in runs.items():
        if done:
            entry["variants"][variant] = summary(done)
    if "gaf" not in entry["variants"]:
        return entry
    ran_base = "skipped" not in entry["variants"].get("rdflib", {"skipped": True})
    entry["check"] = check(outs["gaf"], outs["rdflib"] if ran_base else None, exact=size <= args.exact_max)
    triples = entry["check"]["gaf_distinct"]
    entry["triples"] = triples
    if "gaf" in entry["variants"] and entry["variants"]["gaf"]["lines"] != entry["check"]["gaf_lines"]:
        raise SystemExit(f"{size:,}: stream_all counted {entry['variants']['gaf']['lines']:,} triples, its file has "
                         f"{entry['check']['gaf_lines']:,} lines")  # fmt: skip
    if ran_base and not entry["check"]["same"]:
        raise SystemExit(f"{size:,}: gaf and the rdflib baseline exported different triples: {entry['check']}")
    for res in entry["variants"].values():
        if "seconds" in res:
            res["triples_per_s"] = triples / res["seconds"] if res["variant"] != "read" else None
            res["records_per_s"] = res["records"] / res["seconds"]
    if not args.keep_files:
        for path in outs.values():
            path.unlink(missing_ok=True)
    return entry


def summary(done: list[dict[str, Any]]) -> dict[str, Any]:
    """The run with the median wall time, with the medians of wall and CPU seconds and every run's figures."""
    import statistics

    median = sorted(done, key=lambda r: r["seconds"])[(len(done) - 1) // 2]
    keep = ("seconds", "cpu_seconds", "read_seconds", "peak_mb", "added_mb", "load_before")
    return median | {
        "seconds": statistics.median(r["seconds"] for r in done),
        "cpu_seconds": statistics.median(r["cpu_seconds"] for r in done),
        "read_seconds": statistics.median(r["read_seconds"] for r in done),
        "peak_mb_max": max(r["peak_mb"] for r in done),
        "runs": [{k: r[k] for k in keep} for r in done],
    }


def baseline_skip(size: int, entry: dict[str, Any], runs: dict[str, list[dict[str, Any]]], result: dict[str, Any],
                  args: Namespace) -> str | None:  # fmt: skip
    """Why the rdflib baseline is not run at this size, or None to run it."""
    if args.baseline_max and size > args.baseline_max:
        return f"--baseline-max {args.baseline_max:,}"
    measured = [(e["variants"]["rdflib"], e["variants"]["gaf"].get("lines") or 1, e["records"]) for e in result["sizes"].values()
                if "seconds" in e["variants"].get("rdflib", {})]  # fmt: skip
    if not measured:
        return None
    base, lines, records = max(measured, key=lambda m: m[1])
    per_line = base["added_mb"] * 2**20 / lines  # what the graph added per line of gaf's output, at the largest size run
    lines_here = runs["gaf"][0]["lines"] if runs.get("gaf") else lines * size / records
    need = base["ready_mb"] * 2**20 + per_line * lines_here
    available = _mem_available() - args.headroom_gb * 2**30
    entry["baseline_estimate"] = {"need_gb": round(need / 2**30, 1), "available_gb": round(available / 2**30, 1),
                                  "from_size_lines": lines}  # fmt: skip
    if need > available:
        return (f"estimated peak {need / 2**30:.1f} GiB ({per_line:.0f} B per output line at the largest size measured) "
                f"> {available / 2**30:.1f} GiB available less {args.headroom_gb} GiB headroom")  # fmt: skip
    return None


# ---------------------------------------------------------------------- printing


def _peak_all(v: dict[str, Any]) -> float:
    """A variant's peak with its child processes' peaks (MB): the export's memory, all told."""
    return float(v["peak_mb"] + v.get("children_peak_mb", 0))


def show(result: dict[str, Any]) -> None:
    out = Console(width=170)
    m = result["machine"]
    cache = f"{result['args']['cache_mb']} MiB" if result["args"].get("cache_mb") else "LadybugDB's default"
    out.print(f"{m['cpus']} CPUs, {m['mem_total_gb']} GiB RAM; Python {m['python']}, rdflib {m['rdflib']}, "
              f"LadybugDB {m['ladybug']} (buffer pool: {cache}); load average {m['load_before'][0]:.1f} before, {m.get('load_after', [0])[0]:.1f} after")  # fmt: skip
    table = Table(title="PROV export of the whole store as N-Triples (LadybugDB store, each variant in its own process)")
    for column in ("records", "triples", "variant", "seconds", "in reads s", "serialising s", "CPU s", "CPU s, all", "triples/s",
                   "ready MB", "peak MB", "peak MB, all", "peak−ready MB", "×rdflib", "×rdflib serialising", "check"):  # fmt: skip
        table.add_column(column, justify="left" if column in ("variant", "check") else "right")
    for size, e in result["sizes"].items():
        base = e["variants"].get("rdflib", {})
        for name in VARIANTS:
            v = e["variants"].get(name)
            if v is None:
                continue
            if "skipped" in v:
                table.add_row("", "", name, "not run", "", "", "", "", "", "", "", "", "", "", "", "see below")
                continue
            both = "seconds" in base and name == "gaf"
            ratio = f"{base['seconds'] / v['seconds']:.2f}" if both else "—"
            serialising = v["seconds"] - v["read_seconds"]
            ratio_ser = f"{(base['seconds'] - base['read_seconds']) / serialising:.2f}" if both else "—"
            tps = f"{v['triples_per_s']:,.0f}" if v.get("triples_per_s") else "—"
            chk = ("same set" if e["check"].get("same") else "differ") if name == "gaf" and "same" in e["check"] else ""
            first = name == next(iter(e["variants"]))
            table.add_row(f"{e['records']:,}" if first else "", f"{e.get('triples', 0):,}" if first else "", name,
                          f"{v['seconds']:.1f}", f"{v['read_seconds']:.1f}",
                          f"{serialising:.1f}" if name != "read" else "—", f"{v['cpu_seconds']:.1f}",
                          f"{v['cpu_seconds'] + v.get('children_cpu_seconds', 0):.1f}", tps, f"{v['ready_mb']:,.0f}", f"{v['peak_mb']:,.0f}",
                          f"{_peak_all(v):,.0f}", f"{v['added_mb']:,.0f}", ratio, ratio_ser, chk)  # fmt: skip
    out.print(table)
    out.print(f"seconds and CPU s: medians over {result['args'].get('repeat', 1)} run(s) per variant; "
              "memory: the run with the median wall time. "
              "triples = distinct triples (the same set in both files where checked); triples/s = distinct triples ÷ wall "
              "seconds, reading included; in reads = seconds inside all_records; ready = the child's RSS once the store is "
              "open; serialising = seconds less in reads; peak = its VmHWM during the export (reset at ready); ×rdflib = rdflib seconds ÷ gaf "
              "seconds (serialising: the same for seconds less reads); ', all': with its child processes' (the mapping process, the sort)")  # fmt: skip
    gafs = [(int(size), e["variants"]["gaf"]) for size, e in result["sizes"].items() if "peak_mb" in e["variants"].get("gaf", {})]
    for (small, a), (large, b) in zip(gafs, gafs[1:]):
        out.print(f"gaf's peak at {large:,} ÷ its peak at {small:,}: {b['peak_mb'] / a['peak_mb']:.2f}× its own process, "
                  f"{_peak_all(b) / _peak_all(a):.2f}× with its child processes")  # fmt: skip
    for size, e in result["sizes"].items():
        if "check" not in e:
            continue
        c = e["check"]
        gaf = e["variants"]["gaf"]
        if "skipped" in e["variants"].get("rdflib", {}):
            out.print(f"{int(size):,}: [bold]rdflib baseline not run[/]: {e['variants']['rdflib']['skipped']}")
        extra = f"; rdflib graph built in {e['variants']['rdflib']['build_seconds']:.1f} s, serialised in " \
                f"{e['variants']['rdflib']['serialize_seconds']:.1f} s" if "seconds" in e["variants"].get("rdflib", {}) else ""
        each = ", ".join(f"{name} {mb:,.0f}" for name, mb in sorted(gaf.get("children_peaks_mb", {}).items()))
        sort = f"; its child processes: {gaf['children_cpu_seconds']:.1f} CPU s, peaks {each or round(gaf['children_peak_mb'])} MB " \
               f"(not in the table's peak; with it: {gaf['peak_mb'] + gaf['children_peak_mb']:,.0f} MB)" if gaf.get("children_cpu_seconds") else ""
        out.print(f"{int(size):,}: gaf wrote {c['gaf_lines']:,} lines for {c['gaf_distinct']:,} distinct triples{sort}; "
                  f"check: {c['method']}{extra}; gaf RSS (s, MB): {gaf['rss_profile']}")  # fmt: skip


# ---------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = argparse.ArgumentParser(prog="python -m bench prov", description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    parser.add_argument("--sizes", default="10000,100000,1000000", help="records in the store, comma-separated")
    parser.add_argument("--sources", type=int, default=None, help="source pool (default: records / 50, as bench/impact.py)")
    parser.add_argument("--skew", type=float, default=1.0, help="Zipf exponent of source use (0 = uniform)")
    parser.add_argument("--seed", type=int, default=20261130)
    parser.add_argument("--reuse-csv", action="append", default=[], metavar="DIR",
                        help="a graph CSV directory of bench/impact.py to use when drawn with the same arguments")
    parser.add_argument("--workdir", default="/tmp/gaf-bench-prov", help="graph CSV, stores and output files")
    parser.add_argument("--repeat", type=int, default=1, help="runs of each variant, the order reversing every other one")
    parser.add_argument("--variants", default=",".join(VARIANTS), help="of read,gaf,rdflib (gaf is needed for the check)")
    parser.add_argument("--baseline-max", type=int, default=0, help="largest size to run the rdflib baseline at (0: by memory)")
    parser.add_argument("--headroom-gb", type=float, default=3.0, help="memory to leave free when judging the baseline")
    parser.add_argument("--exact-max", type=int, default=100_000, help="compare triple sets exactly up to this size")
    parser.add_argument("--cache-mb", type=int, default=0,
                        help="cap LadybugDB's buffer pool at this many MiB in every variant, as GAF_CACHE_MB does (0: its default)")
    parser.add_argument("--keep-files", action="store_true", help="keep the exported N-Triples files")
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--report", type=Path, default=None, help="print a saved result and exit")
    parser.add_argument("--child", choices=VARIANTS, help=argparse.SUPPRESS)
    parser.add_argument("--store", help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    parser.add_argument("--total", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(child(args.child, args.store, args.out, args.total, args.cache_mb)))
        return 0
    if args.report:
        show(json.loads(args.report.read_text()))
        return 0
    import ladybug
    import rdflib

    sizes = [int(s) for s in args.sizes.split(",")]
    args.variants = [v for v in VARIANTS if v in args.variants.split(",")]
    result: dict[str, Any] = {
        "benchmark": "prov",
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "command": "python -m bench prov " + " ".join(argv),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "rdflib": rdflib.__version__,
                    "ladybug": getattr(ladybug, "__version__", "?"), "load_before": os.getloadavg(),
                    "mem_total_gb": round(os.sysconf("SC_PHYS_PAGES") * PAGE / 2**30, 1),
                    "mem_available_gb_before": round(_mem_available() / 2**30, 1)},  # fmt: skip
        "args": {k: v for k, v in vars(args).items() if k not in ("json", "report", "child", "store", "out", "total")},
        "sizes": {},
    }
    for size in sizes:
        result["sizes"][str(size)] = measure_size(size, args, result)
        result["machine"]["load_after"] = os.getloadavg()
        if args.json:  # after every size, so a long run keeps what it measured
            args.json.write_text(json.dumps(result, indent=1) + "\n")
    show(result)
    if args.json:
        console.print(f"saved {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
