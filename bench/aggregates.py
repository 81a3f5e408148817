"""Aggregates in rules against a plain Python group-by of the same facts, and the rent case per decision.

``python -m bench aggregates``: ``--facts`` member facts (each a line with an amount,
``line_of(line:i, order:g)`` and ``amount(line:i, v)``) grouped under ``--groups``
orders, both scopes declared complete; the rule
``total(?o, ?t) :- order(?o), ?t = sum ?v over line_of(?l, ?o), amount(?l, ?v)``
evaluated semi-naive over them (the projection's own fact base, ``PolicyFacts``),
against a dictionary group-by computing the same totals in the same run, and a third
loop that also keeps each total's facts (what any evaluator that can say what a total
rests on must at least do). The totals are compared, so a fast wrong answer fails the
benchmark.

``--rent`` also times the rent case's projection per decision (``evaluate_over``, the
claims in memory) in this tree and, as the baseline, in a git worktree of ``--before``
(default ``HEAD``), each in its own process, alternately, in the same run: the cost of
the new language where it is not used. Each process decides 60 times and gives its median;
the figure is the median of ``--repeat`` processes' (a process that ran beside a burst of
other work moves one figure, not the pooled runs).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from rich.console import Console

from bench import save_result

ROOT = Path(__file__).resolve().parent.parent
AT = datetime(2026, 7, 20, tzinfo=timezone.utc)


def _world(facts: int, groups: int) -> tuple[Any, list[Any]]:
    from gaf.derive import Entry, Truth
    from gaf.records import Projection, Source

    source = Source(key="ledger", name="ledger").id
    policy = Projection(
        name="totals", version=1, question="what does each order come to?",
        trust=[{"source": source, "predicates": ["order", "line_of", "amount"], "authoritative": True}],
        completeness=[{"source": source, "predicate": p, "subject": "*", "as_of": "2026-07-01T00:00:00Z",
                       "valid": {"start": "2026-07-01", "end": "2026-08-01"}} for p in ("line_of", "amount")],
        scope={"period": {"start": "2026-07-01", "end": "2026-08-01"}},
        signs={"amount": "non-negative"},
        conclusions=["total"],
        derivation_rules=[{"name": "total", "version": 1, "head": "total(?o, ?t)",
                           "when": ["order(?o)", "?t = sum ?v over line_of(?l, ?o), amount(?l, ?v)"]}],
    )  # fmt: skip
    entries = [Entry(("order", f"order:{g}", None), Truth.TRUE, f"o{g}") for g in range(groups)]
    for i in range(facts):
        order, value = f"order:{i % groups}", (i * 7919) % 1000
        entries.append(Entry(("line_of", f"line:{i}", order), Truth.TRUE, f"l{i}"))
        entries.append(Entry(("amount", f"line:{i}", value), Truth.TRUE, f"a{i}"))
    return policy, entries


def _engine(policy: Any, entries: list[Any]) -> tuple[float, dict[str, Any]]:
    from gaf.derive import evaluate_rules
    from gaf.projection.cone import program_of
    from gaf.projection.facts import PolicyFacts

    started = time.perf_counter()
    facts = PolicyFacts(policy, entries, AT)
    conclusions = evaluate_rules(program_of(policy), facts)
    elapsed = time.perf_counter() - started
    return elapsed, {g[1]: g[2] for g, d in conclusions.derived.items() if d.truth.name == "TRUE"}


def _group_by(entries: list[Any]) -> tuple[float, dict[str, Any]]:
    """The same totals, the way a person would write them: two dictionaries and a loop."""
    started = time.perf_counter()
    order_of: dict[str, str] = {}
    amount_of: dict[str, Any] = {}
    orders = []
    for e in entries:
        predicate, subject, target = e.ground
        if predicate == "line_of":
            order_of[subject] = target
        elif predicate == "amount":
            amount_of[subject] = target
        elif predicate == "order":
            orders.append(subject)
    totals: dict[str, Any] = dict.fromkeys(orders, 0)
    for line, order in order_of.items():
        if order in totals and line in amount_of:
            totals[order] += amount_of[line]
    return time.perf_counter() - started, totals


def _kept(entries: list[Any]) -> tuple[float, dict[str, Any]]:
    """The same totals, each with the facts it rests on, by hand: the group-by's loop that
    also keeps, for each order, the entries of its lines and amounts — the least any
    evaluator that can say what a total rests on does (no closed scopes, no unknowns)."""
    started = time.perf_counter()
    lines_of: dict[str, list[Any]] = {}
    amounts_of: dict[str, list[Any]] = {}
    orders = []
    for e in entries:
        predicate = e.ground[0]
        if predicate == "line_of":
            lines_of.setdefault(e.ground[2], []).append(e)
        elif predicate == "amount":
            amounts_of.setdefault(e.ground[1], []).append(e)
        elif predicate == "order":
            orders.append(e.ground[1])
    totals: dict[str, Any] = {}
    for order in orders:
        total, used = 0, []
        for line in lines_of.get(order, ()):
            for amount in amounts_of.get(line.ground[1], ()):
                total += amount.ground[2]
                used += (line, amount)
        totals[order] = (total, tuple(used))
    elapsed = time.perf_counter() - started
    return elapsed, {order: total for order, (total, _) in totals.items()}


_RENT = """
import json, sys, time
from datetime import datetime, timezone
sys.path.insert(0, sys.argv[1])
import pathlib, tempfile
from gaf.ledger import ingest
from gaf.policies import read_policy
from gaf.projection.candidates import evaluate_over
from gaf.records import Claim
from gaf.store.ladybug import LadybugStore
at = datetime(2026, 7, 21, tzinfo=timezone.utc)
rent = pathlib.Path(sys.argv[1]) / "examples" / "rent"
with LadybugStore(pathlib.Path(tempfile.mkdtemp()) / "s.lbug") as store:
    ingest(store, rent / "claims.yaml", recorded_at=at)
    ingest(store, rent / "claim-e.yaml", recorded_at=at)
    policy = read_policy(store, rent / "policy.yaml")
    claims = store.find(Claim)
repeat = int(sys.argv[2])
times = []
for _ in range(repeat):
    started = time.perf_counter()
    evaluate_over(policy, claims, as_of=at)
    times.append(time.perf_counter() - started)
print(json.dumps(times))
"""


def _rent(tree: Path, repeat: int) -> list[float]:
    run = subprocess.run([sys.executable, "-c", _RENT, str(tree), str(repeat)], capture_output=True, text=True, check=True)
    return [float(t) for t in json.loads(run.stdout.strip().splitlines()[-1])]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench aggregates", description=__doc__.split("\n\n")[0])
    parser.add_argument("--facts", type=int, default=100_000, help="member facts (lines), default 100000")
    parser.add_argument("--groups", type=int, default=10_000, help="subjects they are grouped by, default 10000")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each, default 3 (the median is reported)")
    parser.add_argument("--rent", action="store_true", help="also time the rent case per decision, this tree vs --before")
    parser.add_argument("--before", default="HEAD", help="the baseline commit for --rent, default HEAD")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    args = parser.parse_args(argv)
    console = Console()
    policy, entries = _world(args.facts, args.groups)
    engine_times, plain_times, kept_times = [], [], []
    for _ in range(args.repeat):
        plain, expected = _group_by(entries)
        kept, by_hand = _kept(entries)
        took, found = _engine(policy, entries)
        for name, totals in (("rule", found), ("loop keeping facts", by_hand)):
            if totals != expected:
                console.print(f"[red]the {name}'s totals differ from the group-by's: {len(set(totals.items()) ^ set(expected.items()))} differ[/red]")
                return 1
        engine_times.append(took)
        plain_times.append(plain)
        kept_times.append(kept)
    engine, plain, kept = statistics.median(engine_times), statistics.median(plain_times), statistics.median(kept_times)
    result: dict[str, Any] = {
        "facts": args.facts, "groups": args.groups, "repeat": args.repeat,
        "engine_s": round(engine, 4), "group_by_s": round(plain, 4), "ratio": round(engine / plain, 2) if plain else None,
        "kept_s": round(kept, 4), "kept_ratio": round(kept / plain, 2) if plain else None,
    }  # fmt: skip
    console.print(f"sum over {args.facts} facts in {args.groups} groups: rule {engine:.3f} s, group-by {plain:.3f} s, "
                  f"ratio {result['ratio']}×; the loop that also keeps each total's facts {kept:.3f} s, "
                  f"{result['kept_ratio']}×", soft_wrap=True)  # fmt: skip
    if args.rent:
        with tempfile.TemporaryDirectory() as scratch:
            before = Path(scratch) / "before"
            subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(before), args.before], check=True,
                           capture_output=True)  # fmt: skip
            try:
                after_times, before_times = [], []
                for i in range(args.repeat):  # alternately, each first in turn, so drift hits both alike
                    for times, tree in ((before_times, before), (after_times, ROOT))[:: 1 if i % 2 else -1]:
                        times.append(statistics.median(_rent(tree, 60)))
            finally:
                subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(before)], check=True)
        result["rent_per_decision_ms"] = {
            "before": round(statistics.median(before_times) * 1000, 3), "after": round(statistics.median(after_times) * 1000, 3),
            "before_commit": args.before,
        }  # fmt: skip
        console.print(f"rent case per decision: {result['rent_per_decision_ms']['before']} ms at {args.before}, "
                      f"{result['rent_per_decision_ms']['after']} ms now")  # fmt: skip
    save_result(result, args.json, console)
    return 0


if __name__ == "__main__":
    sys.exit(main())
