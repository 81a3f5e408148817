"""The HTTP API under load: clients submitting claims and reading verdicts, beside the library.

    python -m bench api [--stores ladybug,neo4j] [--clients 4] [--seconds 60] [--json out.json]

On each store, through the library: the rent story (SPEC.md §12: its claims, policy and rules,
two closures), and a writer token for the registry clerk. Then two runs of the same work, each
``--seconds`` long:

- **http** — ``gaf serve`` started as its own process (``python -m gaf serve``, as a user starts
  it) and ``--clients`` client threads, each with its own connection, each looping: submit one
  new claim (``POST /api/v1/claims``: a payment, one statement, its subject unique to the
  client and the request), then read the closure's verdict (``GET /api/v1/closures/…/verdict``);
- **library** — the baseline: the same loop in one process and one thread, through the calls
  the routes make (``gaf.ledger.ingest`` of the claim, the verdict found by its closure), with
  no HTTP, no server and no second process.

Reported per run: requests per second of each kind, p50/p95 latency in milliseconds, errors
(any answer but 201/200 — there must be none), and HTTP's overhead as the ratio of the two
rates. Then nothing is lost: after the server stops, the store is opened again and every claim
an answer said was written is stored, each once (its id stored; the count of claims grown by
exactly the number written), and no claim was written that no answer reported.

Neo4j is used when NEO4J_URI (with NEO4J_USER / NEO4J_PASSWORD) names a server whose database is
empty (or ``--empty-neo4j``: emptied first). Run it alone: the machine's other work is the noise.
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from bench import add_store_options, chosen_stores, open_neo4j, percentiles, save_result
from bench.checks import AT, build
from bench.checks import _open as open_bench_store

ROOT = Path(__file__).resolve().parent.parent
console = Console(stderr=True)
#: When the benchmark's claims were observed and recorded: passed in, as everywhere in gaf.
SEEN = AT + timedelta(days=1)


def claim_body(source: str, observer: str, subject: str) -> dict[str, Any]:
    """One payment claim, as a client would submit it."""
    return {"kind": "claim", "source": source, "observer": observer, "observed_at": SEEN.isoformat(), "recorded_at": SEEN.isoformat(),
            "transformation": "api_export", "statements": [{"subject": subject, "predicate": "paid", "polarity": "affirmed"}]}  # fmt: skip


class Tally:
    """What one run's workers did: latencies by kind, errors, and the claim ids answers reported written."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.seconds: dict[str, list[float]] = {"submit": [], "verdict": []}
        self.errors: list[str] = []
        self.written: list[str] = []

    def add(self, kind: str, took: float, error: str | None = None, written: list[str] | None = None) -> None:
        with self.lock:
            self.seconds[kind].append(took)
            if error:
                self.errors.append(error)
            self.written.extend(written or [])

    def summary(self, wall: float) -> dict[str, Any]:
        out: dict[str, Any] = {"seconds": round(wall, 2), "errors": len(self.errors), "error_examples": self.errors[:3],
                               "claims_written": len(self.written)}  # fmt: skip
        total = 0
        for kind, samples in self.seconds.items():
            total += len(samples)
            found = percentiles([s * 1000 for s in samples]) if samples else {"p50": 0, "p95": 0, "max": 0, "n": 0}
            out[kind] = {"requests": len(samples), "per_s": round(len(samples) / wall, 1), "p50_ms": found["p50"], "p95_ms": found["p95"]}
        out["per_s"] = round(total / wall, 1)
        return out


def _loop(until: float, tally: Tally, submit: Callable[[int], list[str]], read: Callable[[], None]) -> None:
    """Submit a claim, read the verdict, until the deadline; every failure is counted, never raised."""
    n = 0
    while time.monotonic() < until:
        for kind in ("submit", "verdict"):
            started = time.perf_counter()
            try:
                written = submit(n) if kind == "submit" else (read() or [])
                tally.add(kind, time.perf_counter() - started, written=written)
            except Exception as exc:  # noqa: BLE001 - every failure is the finding
                tally.add(kind, time.perf_counter() - started, error=f"{type(exc).__name__}: {exc}"[:300])
        n += 1


# ---------------------------------------------------------------------- the library, in one process


def library_run(store: Any, params: dict[str, Any], seconds: float) -> dict[str, Any]:
    from gaf.ledger import ingest

    tally = Tally()

    def submit(n: int) -> list[str]:
        report = ingest(store, [claim_body(params["source_id"], params["observer_id"], f"payment:lib-{n:07d}")], recorded_at=SEEN)
        return list(report.write.written)

    def read() -> None:
        if not store.find("verdict", closure=params["closure"]):
            raise AssertionError("no verdict")

    started = time.monotonic()
    _loop(started + seconds, tally, submit, read)
    return tally.summary(time.monotonic() - started)


# ---------------------------------------------------------------------- over HTTP, a server of its own


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _serve(target: str, env: dict[str, str]) -> tuple[subprocess.Popen[str], str]:
    """``gaf serve`` on a free port, waited for until it answers."""
    import httpx

    port = _free_port()
    server = subprocess.Popen([sys.executable, "-m", "gaf", "serve", "--store", target, "--port", str(port)], cwd=ROOT, env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit(f"gaf serve stopped: {server.stderr.read() if server.stderr else ''}")
        try:
            httpx.get(f"{url}/api/v1/openapi.json", timeout=1)
            return server, url
        except httpx.TransportError:
            time.sleep(0.1)
    server.kill()
    raise SystemExit("gaf serve did not answer within 60 s")


def http_run(url: str, secret: str, params: dict[str, Any], clients: int, seconds: float) -> dict[str, Any]:
    import httpx

    tally = Tally()
    headers = {"Authorization": f"Bearer {secret}"}

    def worker(c: int, until: float) -> None:
        with httpx.Client(base_url=url, headers=headers, timeout=120) as client:

            def submit(n: int) -> list[str]:
                body = claim_body(params["source_id"], params["observer_id"], f"payment:http-{c}-{n:07d}")
                answer = client.post("/api/v1/claims", json=[body], params={"at": SEEN.isoformat()})
                if answer.status_code != 201:
                    raise RuntimeError(f"{answer.status_code} {answer.text[:200]}")
                found = answer.json()
                if found.get("ids_cut"):
                    raise RuntimeError("the answer cut its ids")
                return list(found["written_ids"])

            def read() -> None:
                answer = client.get(f"/api/v1/closures/{params['closure']}/verdict")
                if answer.status_code != 200:
                    raise RuntimeError(f"{answer.status_code} {answer.text[:200]}")

            _loop(until, tally, submit, read)

    started = time.monotonic()
    threads = [threading.Thread(target=worker, args=(c, started + seconds)) for c in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return tally.summary(time.monotonic() - started) | {"clients": clients, "written_ids": sorted(tally.written)}


# ---------------------------------------------------------------------- one store


def one_store(kind: str, tmp: Path, clients: int, seconds: float, empty_neo4j: bool) -> dict[str, Any]:
    from gaf.records import Claim
    from gaf.settings import Settings
    from gaf.web import Role, Tokens

    store = open_bench_store(kind, tmp, empty_neo4j)
    try:
        params = build(store, 0)
        (bank,) = store.find("source", key="bank-ledger")
        (clerk,) = store.find("agent", key="registry-clerk")
        params |= {"source_id": bank.id, "observer_id": clerk.id}
        console.print(f"{kind}: the library alone, one thread, {seconds:g} s")
        library = library_run(store, params, seconds)
        before = store.counts().get("claim", 0)
        target = store.location
    finally:
        store.close()

    tokens = tmp / "tokens.json"
    secret = Tokens(tokens).create(agent=params["observer_id"], role=Role.writer, at=datetime.now(timezone.utc)).secret
    env = {**os.environ, "GAF_TOKENS": str(tokens), "PYTHONPATH": str(ROOT)}
    console.print(f"{kind}: gaf serve and {clients} clients, {seconds:g} s")
    server, url = _serve(target, env)
    try:
        http = http_run(url, secret, params, clients, seconds)
    finally:
        server.terminate()
        server.wait(timeout=60)

    reopened = open_bench_store(kind, tmp, False) if kind == "ladybug" else open_neo4j(again=True)
    try:
        written = http.pop("written_ids")
        stored = reopened.exists(set(written))
        after = reopened.counts().get("claim", 0)
        lost = sorted(set(written) - set(stored))
        claims = reopened.get_many(written, Claim) if written and not lost else []  # each read back whole, as a claim
    finally:
        reopened.close()
    nothing_lost = {"answered_written": len(written), "stored": len(stored), "distinct": len(set(written)), "lost": lost[:5],
                    "claims_before": before, "claims_after": after,
                    "ok": not lost and len(set(written)) == len(written) == after - before and len(claims) == len(written)}  # fmt: skip
    return {"library": library, "http": http, "overhead": round(library["per_s"] / http["per_s"], 2) if http["per_s"] else None,
            "nothing_lost": nothing_lost, "settings": {"cache_mb": Settings.from_env().cache_mb}}  # fmt: skip


def run(stores: list[str], clients: int, seconds: float, empty_neo4j: bool = False) -> dict[str, Any]:
    out: dict[str, Any] = {"clients": clients, "seconds": seconds, "cpus": os.cpu_count(),
                           "load_average": {"start": list(os.getloadavg())}, "stores": {}}  # fmt: skip
    for kind in stores:
        with tempfile.TemporaryDirectory(prefix="gaf-bench-api-") as tmp:
            out["stores"][kind] = one_store(kind, Path(tmp), clients, seconds, empty_neo4j)
    out["load_average"]["end"] = list(os.getloadavg())
    out["ok"] = all(s["http"]["errors"] == 0 and s["library"]["errors"] == 0 and s["nothing_lost"]["ok"] for s in out["stores"].values())
    return out


def report(result: dict[str, Any]) -> None:
    t = Table(title=f"the API under load: {result['clients']} clients, {result['seconds']:g} s a run")
    for column in ("store", "run", "request", "per s", "p50 ms", "p95 ms", "errors"):
        t.add_column(column, justify="left" if column in ("store", "run", "request") else "right")
    for kind, found in result["stores"].items():
        for run_name in ("http", "library"):
            r = found[run_name]
            for request in ("submit", "verdict"):
                q = r[request]
                t.add_row(kind, run_name, request, f"{q['per_s']:,}", str(q["p50_ms"]), str(q["p95_ms"]), str(r["errors"]))
    console.print(t)
    for kind, found in result["stores"].items():
        lost = found["nothing_lost"]
        console.print(f"{kind}: library/http rate {found['overhead']}×; {lost['answered_written']:,} claims answered written, "
                      f"{lost['stored']:,} stored, claims {lost['claims_before']:,} → {lost['claims_after']:,}: "
                      f"{'nothing lost' if lost['ok'] else 'LOST ' + str(lost['lost'])}")  # fmt: skip
    console.print(f"load average at start {result['load_average']['start']}, at end {result['load_average']['end']}")


# boilerplate: a benchmark's entry point — its options, the run, the report, the saved result.
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench api", description=__doc__.split("\n\n")[0])
    add_store_options(parser)
    parser.add_argument("--clients", type=int, default=4, help="concurrent HTTP clients")
    parser.add_argument("--seconds", type=float, default=60.0, help="how long each run lasts")
    args = parser.parse_args(argv)
    stores = chosen_stores(args, console)
    if stores is None:
        return 2
    result = run(stores, args.clients, args.seconds, args.empty_neo4j)
    report(result)
    save_result(result, args.json, console)
    return 0 if result["ok"] else 1
