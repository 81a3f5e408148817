"""Benchmark the verdict engine: the h-Categoriser at scale, and one decision's verdict.

    python -m bench.verdict [--sizes 10000,100000,1000000] [--baseline-rounds 3] [--json out.json]

1. Random argument graphs with 3 attacks per argument, acyclic (attackers
   always earlier) and cyclic (attackers anywhere), against a straightforward
   dict-based Jacobi iteration measured in the same run on the same graph. Where
   the baseline would take too long it runs ``--baseline-rounds`` rounds and its
   time is extrapolated to the rounds gaf needed — the report says so.
2. The per-decision path: ``judge`` on the rent case's verdict rules, in
   microseconds (median of many).
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import time
from datetime import datetime, timezone

import numpy as np

from gaf.verdict import EPSILON, vector_fixed_point


def random_graph(n: int, *, cyclic: bool, seed: int = 20261130) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Weights in (0, 1] and three attacks per argument (attackers earlier unless cyclic)."""
    rng = np.random.default_rng(seed)
    w = rng.uniform(0.05, 1.0, n)
    dst = np.repeat(np.arange(n), 3)
    if cyclic:
        src = rng.integers(0, n, 3 * n)
    else:
        src = (rng.random(3 * n) * dst).astype(np.int64)  # an earlier argument (0 attacks itself: dropped below)
    keep = src != dst
    return w, src[keep], dst[keep]


def dict_jacobi(w: np.ndarray, src: np.ndarray, dst: np.ndarray, epsilon: float, max_rounds: int | None) -> tuple[dict, int]:
    """The baseline: the formula over dicts, one Python loop per round."""
    weights = {i: float(x) for i, x in enumerate(w)}
    attackers: dict[int, list[int]] = {i: [] for i in weights}
    for a, b in zip(src.tolist(), dst.tolist(), strict=True):
        attackers[b].append(a)
    acc = dict(weights)
    rounds = 0
    while True:
        new = {a: weights[a] / (1.0 + sum(acc[b] for b in attackers[a])) for a in weights}
        delta = max(abs(new[a] - acc[a]) for a in weights)
        acc = new
        rounds += 1
        if delta <= epsilon or (max_rounds is not None and rounds >= max_rounds):
            return acc, rounds


def vector_rounds(w: np.ndarray, src: np.ndarray, dst: np.ndarray, epsilon: float) -> int:
    acc, rounds = w.copy(), 0
    while True:
        new = w / (1.0 + np.bincount(dst, weights=acc[src], minlength=len(w)))
        rounds += 1
        done = float(np.max(np.abs(new - acc))) <= epsilon
        acc = new
        if done:
            return rounds


def scale(sizes: list[int], baseline_rounds: int) -> list[dict]:
    rows = []
    for n in sizes:
        for cyclic in (False, True):
            w, src, dst = random_graph(n, cyclic=cyclic)
            t = time.perf_counter()
            acc = vector_fixed_point(w, src, dst, EPSILON)
            ours = time.perf_counter() - t
            rounds = vector_rounds(w, src, dst, EPSILON)
            full = n <= 100_000
            t = time.perf_counter()
            base_acc, base_rounds = dict_jacobi(w, src, dst, EPSILON, None if full else baseline_rounds)
            base = time.perf_counter() - t
            per_round = base / base_rounds
            base_total = base if full else per_round * rounds
            agree = max(abs(base_acc[i] - acc[i]) for i in range(0, n, max(1, n // 1000))) if full else None
            rows.append({
                "arguments": n, "attacks": int(len(src)), "graph": "cyclic" if cyclic else "acyclic", "rounds": rounds,
                "gaf_seconds": ours, "baseline_seconds": base_total, "baseline_measured_rounds": base_rounds,
                "baseline_extrapolated": not full, "speedup": base_total / ours, "max_difference": agree,
            })  # fmt: skip
            print(f"{n:>9} {rows[-1]['graph']:8} rounds {rounds:3}  gaf {ours:8.3f} s  baseline {base_total:9.2f} s"
                  f"{' (extrapolated from ' + str(base_rounds) + ' rounds)' if not full else ''}  ×{rows[-1]['speedup']:.1f}")  # fmt: skip
    return rows


def per_decision(repeat: int = 2000) -> dict:
    """``judge`` on the rent case's rules over a small GAF, as a closure does it."""
    from pathlib import Path

    from gaf.derive import Entry, Truth
    from gaf.policies import read_rules
    from gaf.projection import PolicyFacts
    from gaf.records import Projection
    from gaf.verdict import judge

    rules = read_rules(Path(__file__).resolve().parent.parent / "examples" / "rent" / "verdict-rules.yaml")
    subject = "rent:lease-17/2026-07"
    facts = PolicyFacts(Projection(name="p", version=1, question="q"), [
        Entry(("paid", subject, None), Truth.UNKNOWN, "e1"), Entry(("delinquent", subject, None), Truth.UNKNOWN, "e2"),
        Entry(("allocated_to", "payment:tx-4471", subject), Truth.UNKNOWN, "e3"),
    ], datetime(2026, 7, 15, tzinfo=timezone.utc))  # fmt: skip
    samples = []
    for _ in range(repeat):
        t = time.perf_counter()
        judge(rules, facts, subject=subject)
        samples.append(time.perf_counter() - t)
    return {"rules": len(rules.rules), "unknown_rules": 2, "median_us": statistics.median(samples) * 1e6,
            "p95_us": sorted(samples)[int(0.95 * len(samples))] * 1e6, "repeat": repeat}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--baseline-rounds", type=int, default=3)
    parser.add_argument("--json")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    print("h-Categoriser: vectorised fixed point (gaf) against a dict-based Jacobi iteration, same graphs, same run")
    rows = scale(sizes, args.baseline_rounds)
    decision = per_decision()
    print(f"per decision: judge() on the rent rules ({decision['rules']} rules, 2 unknown): "
          f"median {decision['median_us']:.0f} µs, p95 {decision['p95_us']:.0f} µs")
    if args.json:
        Path = __import__("pathlib").Path
        Path(args.json).write_text(json.dumps({"benchmark": "verdict", "date": datetime.now(timezone.utc).isoformat(),
                                               "command": "python -m bench.verdict " + " ".join(f"--{k.replace('_', '-')} {v}" for k, v in vars(args).items() if v),
                                               "scale": rows, "per_decision": decision}, indent=2))  # fmt: skip
    assert all(math.isfinite(r["speedup"]) for r in rows)


if __name__ == "__main__":
    main()
