"""Confirmation benchmark: impact's recomputation tier on closures made by projecting claims.

    python -m bench confirm [--subjects 200] [--claims 5] [--queries 10] [--json out.json]

The world is built through gaf's own paths on a fresh embedded store: ``--sources``
sources trusted (one authoritative) for four predicates, ``--subjects`` subjects under one
policy scoped to all of them, ``--claims`` claims per subject (seeded), one projection,
one closure per subject (``close``). Then, for ``--queries`` sources and as many stored
claims (drawn seeded), two variants, alternating, each timed:

* ``gaf``      — ``impact.source_invalidated`` / ``impact.claim_retracted``: the walk,
  reach, and confirmation of every reached closure (closures of one policy and as-of
  share one evaluation);
* ``baseline`` — what one writes without that grouping: for each closure the report
  reached, read its policy and rules, re-read the cone's claims from the store,
  re-project without the change and judge it again, one closure at a time.

Both must agree on which closures' verdicts change, or the benchmark fails. Reported:
latency p50/p95 per variant, closures recomputed per second, and the speed-up.
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from rich.console import Console

import impact
from bench.built import baseline_confirm
from gaf.closure import close
from gaf.ledger import ingest
from gaf.policies import publish
from gaf.projection import project
from gaf.records import Agent, Claim, Projection, Source, VerdictRules
from gaf.store import GafStore

console = Console(stderr=True)
AT = datetime(2026, 7, 15, tzinfo=timezone.utc)
PREDICATES = ("p0", "p1", "p2", "p3")


def build(store: GafStore, subjects: int, claims: int, sources: int, seed: int) -> tuple[list[str], list[str], list[str]]:
    """Write the world; return the closure ids, the source ids and the claim ids."""
    rng = random.Random(seed)
    observer = Agent(key="observer", name="observer", agent_type="software")
    pool = [Source(key=f"s{i}", name=f"source {i}") for i in range(sources)]
    policy = Projection(name="bench", version=1, question="q", scope={"subjects": ["case:*"]},
                        trust=[{"source": s.id, "predicates": list(PREDICATES), "authoritative": i == 0} for i, s in enumerate(pool)])  # fmt: skip
    rules = VerdictRules(name="bench", version=1, conclusion="c",
                         rules=[{"name": "w", "role": "warrant", "condition": ["p0(?subject)", "p1(?subject)"]},
                                {"name": "r", "role": "rebuttal", "condition": ["p2(?subject)"]}],
                         bands=[{"label": "yes", "low": 0.25, "high": 1}, {"label": "no", "low": -1, "high": -0.25}])  # fmt: skip
    said = []
    for n in range(subjects):
        for k in range(claims):
            seen = AT - timedelta(minutes=1 + n * claims + k)
            said.append(Claim(source=rng.choice(pool).id, observer=observer.id, observed_at=seen, recorded_at=seen,
                              transformation="api_export",
                              statements=[{"subject": f"case:{n}", "predicate": rng.choice(PREDICATES),
                                           "polarity": "denied" if rng.random() < 0.15 else "affirmed"}]))  # fmt: skip
    ingest(store, [observer, *pool, *said], recorded_at=AT)
    publish(store, policy, at=AT)
    publish(store, rules, at=AT)
    projected = project(store, policy, as_of=AT, reviewer=observer.id, at=AT)
    closures = [close(store, projected.gaf.id, rules, subject=f"case:{n}", as_of=AT, closed_at=AT).closure.id for n in range(subjects)]
    return closures, [s.id for s in pool], [c.id for c in said]


def baseline(store: GafStore, closure_ids: list[str], dropped: set[str]) -> set[str]:
    """Each closure recomputed on its own, from the store: the closures whose verdict changes
    (bench/built.py's baseline, the one re-projection written out without impact's code)."""
    return set(baseline_confirm(store, closure_ids, dropped))


def measure(store: GafStore, closures: list[str], triggers: list[tuple[str, str]]) -> dict[str, Any]:
    rows = []
    for i, (kind, rid) in enumerate(triggers):
        dropped = {c.id for c in store.find(Claim, source=rid)} if kind == "source" else {rid}
        took: dict[str, float] = {}
        for variant in ("gaf", "baseline") if i % 2 == 0 else ("baseline", "gaf"):
            started = time.perf_counter()
            if variant == "gaf":
                report = impact.source_invalidated(store, rid) if kind == "source" else impact.claim_retracted(store, rid)
            else:
                expected = baseline(store, closures, dropped)
            took[variant] = time.perf_counter() - started
        found = {c.closure for c in report.closures if c.outcome == "verdict_changed"}
        if found != expected or not report.complete:
            raise SystemExit(f"gaf and the baseline disagree on {kind} {rid}: {sorted(found ^ expected)[:3]}")
        assert report.confirmation is not None
        rows.append({"trigger": kind, "reached": report.confirmation["reached"], "moved": len(found),
                     "gaf_ms": took["gaf"] * 1000, "baseline_ms": took["baseline"] * 1000})  # fmt: skip
    return {"rows": rows, **{f"{v}_{q}": _quantile([r[f"{v}_ms"] for r in rows], q) for v in ("gaf", "baseline") for q in (50, 95)},
            "closures_per_s": sum(r["reached"] for r in rows) / (sum(r["gaf_ms"] for r in rows) / 1000)}  # fmt: skip


def _quantile(values: list[float], q: int) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench confirm", description=__doc__.splitlines()[0])
    parser.add_argument("--subjects", type=int, default=200)
    parser.add_argument("--claims", type=int, default=5, help="claims per subject")
    parser.add_argument("--sources", type=int, default=6)
    parser.add_argument("--queries", type=int, default=10, help="sources and as many claims")
    parser.add_argument("--seed", type=int, default=20261202)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="gaf-bench-confirm-") as tmp, GafStore.open(str(Path(tmp) / "store")) as store:
        started = time.perf_counter()
        closures, sources, claims = build(store, args.subjects, args.claims, args.sources, args.seed)
        built = time.perf_counter() - started
        rng = random.Random(args.seed)
        triggers = [("source", rng.choice(sources)) for _ in range(args.queries)] + [("claim", rng.choice(claims)) for _ in range(args.queries)]
        result = measure(store, closures, triggers)
    doc = {"benchmark": "confirm", "args": {k: str(v) for k, v in vars(args).items()}, "build_seconds": built,
           "closures": len(closures), **result, "speedup_p50": result["baseline_50"] / result["gaf_50"],
           "load_average": list(__import__("os").getloadavg())}  # fmt: skip
    console.print(f"{len(closures)} closures built in {built:.1f} s; gaf p50 {result['gaf_50']:.0f} ms p95 {result['gaf_95']:.0f} ms; "
                  f"baseline p50 {result['baseline_50']:.0f} ms p95 {result['baseline_95']:.0f} ms; "
                  f"×{doc['speedup_p50']:.1f}; {result['closures_per_s']:.0f} closures recomputed per second")  # fmt: skip
    if args.json:
        args.json.write_text(json.dumps(doc, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
