"""Verdict benchmark: ``gaf.verdict.judge`` at decision sizes, on both of its weighing paths.

    python -m bench verdict [--sizes 10,100,1000,10000] [--graphs acyclic,cyclic] [--seconds 10] [--json PATH]
    python -m bench verdict --report bench/results/verdict.json      # print saved results again

What is timed is ``judge(rules, facts, subject=...)``, the call a closure makes
(gaf/closure.py): every verdict rule's condition read three-valued on the fact
base, then one weighing per combination of the rules whose activation is unknown
(2^unknown + 1), each an ``h_categoriser`` over the rules active in it.

``h_categoriser`` weighs in one of three ways, chosen per weighing:

* ``topological`` — pure Python, one exact pass, when the attack graph among the
  active rules is acyclic;
* ``fixed point`` — pure Python, the Jacobi iteration to ``EPSILON``, when it
  has a cycle;
* ``array`` — numpy, the same iteration over arrays (``vector_fixed_point``),
  when more than ``VECTOR_THRESHOLD`` rules are active (5,000: far more than a
  decision has — a rule set that large is near or over the default 1 MiB record
  limit; each size says whether its rules fit, ``within_record_limit``).

Each size is a decision: the rent case (examples/rent/verdict-rules.yaml, the
three rules of SPEC.md §12 on a hand-made fact base), then synthetic rule sets
of ``--sizes`` rules — warrants, rebuttals and defeaters, some strict; each
condition one or two atoms, some with parameters; a fact base as a closure has
it (accepted facts true, rejected false, ``--unknown`` unresolved), with as many
facts again about other subjects; defeat edges among nearby rules, acyclic, or
``cyclic`` with mutual attacks between rebuttals.

At every size two variants run on the same rules and facts, interleaved:

* ``judge`` — as shipped: the path ``VECTOR_THRESHOLD`` picks;
* the other path — ``VECTOR_THRESHOLD`` set for this process so every weighing
  takes the path ``judge`` did not (``array`` below the threshold, pure Python
  above it).

Which path each variant took is observed, not inferred: one untimed run per
variant counts the calls of the weighing functions (``paths`` in the result).
The two variants' judgements (label, strength, interval, every rule's trace)
must be equal; a size where they differ is reported and the run exits with 1.
The machine's load average is recorded before and after (``machine``); the
result goes to bench/results/verdict.json unless ``--json`` names another file.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import fields
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

import gaf.verdict as engine
from gaf.canonical import canonical_json
from gaf.derive import Entry, Truth
from gaf.errors import PayloadTooLarge
from gaf.projection import PolicyFacts
from gaf.records import Band, Defeat, Projection, VerdictRule, VerdictRules
from gaf.verdict import Judgement, judge

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results" / "verdict.json"
RENT_RULES = ROOT / "examples" / "rent" / "verdict-rules.yaml"
AS_OF = datetime(2026, 7, 15, tzinfo=timezone.utc)
SUBJECT = "case:000001"
OTHER = "case:000002"
POLICY = Projection(name="bench-verdict", version=1, question="Is the conclusion established?")
console = Console(stderr=True)


# ---------------------------------------------------------------------- decisions


class Decision:
    """One decision to judge: rules, the fact base a closure would hand ``judge``, the subject."""

    def __init__(self, case: str, graph: str, rules: VerdictRules, entries: list[Entry], subject: str, *, fits: bool):
        self.case, self.graph, self.rules, self.subject, self.fits = case, graph, rules, subject, fits
        self.entries = entries
        self.facts = PolicyFacts(POLICY, entries, AS_OF)
        self.record_bytes = len(canonical_json(
            {"kind": rules.KIND, **rules.model_dump(mode="json", exclude={"id", "kind"}, exclude_defaults=True)}
        ))  # fmt: skip

    def judge(self) -> Judgement:
        return judge(self.rules, self.facts, subject=self.subject)


def rent() -> Decision:
    """The rent case's verdict rules on a small fact base: three premises unresolved."""
    from gaf.policies import read_rules

    subject = "rent:lease-17/2026-07"
    entries = [
        Entry(("paid", subject, None), Truth.UNKNOWN, "e1"), Entry(("delinquent", subject, None), Truth.UNKNOWN, "e2"),
        Entry(("allocated_to", "payment:tx-4471", subject), Truth.UNKNOWN, "e3"),
    ]  # fmt: skip
    return Decision("rent", "acyclic", read_rules(RENT_RULES), entries, subject, fits=True)


def synthetic(n: int, *, cyclic: bool, unknown: int, seed: int) -> Decision:
    """``n`` verdict rules and the facts they read: about 70 % fire, ``unknown`` are unresolved."""
    rng = random.Random(f"{seed}/{n}/{cyclic}")
    shared = max(2, n // 20)  # predicates shared by several rules, told apart by their object
    rules: list[VerdictRule] = []
    entries: list[Entry] = []
    undecided = {round((k + 1) * n / (unknown + 1)) for k in range(unknown)} if n > unknown else set(range(1, n))
    role_of = ["warrant", "rebuttal", "rebuttal", "defeater"]
    for i in range(n):
        name = f"r{i:05d}"
        role = role_of[i % 4] if i else "warrant"
        strength = "defeater" if role == "defeater" else "strict" if i % 40 in (8, 13) else "defeasible"
        truth = Truth.UNKNOWN if i in undecided else Truth.TRUE if rng.random() < 0.7 else Truth.FALSE
        rule: dict[str, Any] = {"name": name, "role": role, "strength": strength, "qualifier": rng.choice((1.0, 0.9, 0.8, 0.6, 0.5))}
        shape = i % 3
        if shape == 0:  # a shared predicate with a constant object
            predicate, obj = f"f{i % shared}", f"o{i}"
            rule["condition"] = [f"{predicate}(?subject, {obj})"]
            entries += [Entry((predicate, SUBJECT, obj), truth, f"e:{i}"), Entry((predicate, OTHER, obj), Truth.TRUE, f"x:{i}")]
        elif shape == 1:  # a join through a variable, as the rent case's payment-reversed
            item = f"item:{i}"
            rule["condition"] = [f"held{i}(?x, ?subject)", f"checked{i}(?x)"]
            entries += [Entry((f"held{i}", item, SUBJECT), Truth.TRUE, f"h:{i}"), Entry((f"checked{i}", item, None), truth, f"e:{i}"),
                        Entry((f"held{i}", f"item:o{i}", OTHER), Truth.TRUE, f"x:{i}")]  # fmt: skip
        else:  # a parameter bound as a variable
            predicate = f"g{i % shared}"
            rule["params"] = {"level": i}
            rule["condition"] = [f"{predicate}(?subject, ?level)"]
            entries += [Entry((predicate, SUBJECT, i), truth, f"e:{i}"), Entry((predicate, OTHER, i), Truth.TRUE, f"x:{i}")]
        rules.append(VerdictRule.model_validate(rule))
    attackable = [i for i in range(n) if role_of[i % 4] != "defeater" or i == 0]
    defeats: set[tuple[str, str]] = set()
    for i in range(1, n):
        if rules[i].role.value == "warrant":
            continue
        earlier = [j for j in attackable if i - 9 <= j < i]
        for j in rng.sample(earlier, min(len(earlier), rng.choice((1, 1, 2)))):
            defeats.add((rules[i].name, rules[j].name))
            if cyclic and rules[i].role.value == "rebuttal" and rules[j].role.value == "rebuttal" and rng.random() < 0.5:
                defeats.add((rules[j].name, rules[i].name))  # a mutual attack: a cycle
    doc: dict[str, Any] = {
        "name": f"bench-{n}-{'cyclic' if cyclic else 'acyclic'}", "version": 1, "conclusion": "The conclusion holds.",
        "rules": rules, "defeats": [Defeat(attacker=a, attacked=b) for a, b in sorted(defeats)], "aggregation": "mean",
        "bands": [Band(label="yes", low=0.5, high=1.0), Band(label="no", low=-1.0, high=-0.5)],
    }  # fmt: skip
    try:
        built, fits = VerdictRules.model_validate(doc), True
    except PayloadTooLarge:
        # Over the default record limit: judge it anyway (judge reads no record bytes), checked as model_validate would.
        built, fits = VerdictRules.model_construct(**doc, default_label="inconclusive"), False
        VerdictRules._consistent(built)
    return Decision("synthetic", "cyclic" if cyclic else "acyclic", built, entries, SUBJECT, fits=fits)


# ---------------------------------------------------------------------- paths


PYTHON, ARRAY = "python", "array"


@contextlib.contextmanager
def forced(path: str | None) -> Iterator[None]:
    """Every weighing on ``path`` (None: as shipped), by setting VECTOR_THRESHOLD in this process."""
    shipped = engine.VECTOR_THRESHOLD
    if path is not None:
        engine.VECTOR_THRESHOLD = -1 if path == ARRAY else sys.maxsize
    try:
        yield
    finally:
        engine.VECTOR_THRESHOLD = shipped


@contextlib.contextmanager
def counted() -> Iterator[dict[str, int]]:
    """Count the weighings by the path h_categoriser took (wrapping its three functions)."""
    counts = {"topological": 0, "fixed_point": 0, "array": 0}
    originals = {name: getattr(engine, name) for name in ("_topological", "_fixed_point", "_vectorised")}

    def wrap(name: str, key: str | None) -> Callable[..., Any]:
        def call(*args: Any) -> Any:
            out = originals[name](*args)
            if key is not None and (key != "topological" or out is not None):
                counts[key] += 1
            return out

        return call

    engine._topological = wrap("_topological", "topological")
    engine._fixed_point = wrap("_fixed_point", "fixed_point")
    engine._vectorised = wrap("_vectorised", "array")
    try:
        yield counts
    finally:
        for name, fn in originals.items():
            setattr(engine, name, fn)


def path_name(counts: dict[str, int]) -> str:
    """PYTHON or ARRAY: which side of VECTOR_THRESHOLD the weighings were on (both: "mixed")."""
    python = counts["topological"] + counts["fixed_point"]
    return "mixed" if python and counts["array"] else ARRAY if counts["array"] else PYTHON


def path_detail(counts: dict[str, int]) -> str:
    """The weighings by path, e.g. "fixed point ×5"."""
    return " + ".join(f"{key.replace('_', ' ')} ×{n}" for key, n in counts.items() if n) or "none"


def differences(a: Judgement, b: Judgement, limit: int = 5) -> list[str]:
    """What differs between two judgements, field by field and rule by rule (empty: equal)."""
    out = []
    for f in fields(Judgement):
        x, y = getattr(a, f.name), getattr(b, f.name)
        if f.name == "rules":
            for ra, rb in zip(x, y, strict=False):
                out += [f"rule {ra.name}: {g.name} {getattr(ra, g.name)!r} ≠ {getattr(rb, g.name)!r}"
                        for g in fields(ra) if getattr(ra, g.name) != getattr(rb, g.name)]  # fmt: skip
            if len(x) != len(y):
                out.append(f"{len(x)} rules ≠ {len(y)} rules")
        elif x != y:
            out.append(f"{f.name}: {x!r} ≠ {y!r}")
    return out[:limit]


# ---------------------------------------------------------------------- one size


def measure(decision: Decision, *, repeat: int, seconds: float) -> dict[str, Any]:
    """Both variants on one decision: paths taken, outputs compared, then timed interleaved."""
    with counted() as counts:
        shipped = decision.judge()
    taken = path_name(counts)
    other = PYTHON if taken == ARRAY else ARRAY
    variants: dict[str, dict[str, Any]] = {"judge": {"forced": None, "paths": dict(counts)}}
    with forced(other), counted() as counts:
        alternative = decision.judge()
    variants[other] = {"forced": other, "paths": dict(counts)}
    diff = differences(shipped, alternative)

    samples: dict[str, list[float]] = {name: [] for name in variants}
    started = time.perf_counter()
    for round_ in range(repeat):
        order = list(variants) if round_ % 2 == 0 else list(reversed(variants))
        for name in order:
            with forced(variants[name]["forced"]):
                t = time.perf_counter()
                decision.judge()
                samples[name].append(time.perf_counter() - t)
        if time.perf_counter() - started > 2 * seconds:
            break
    for name, xs in samples.items():
        xs.sort()
        variants[name].update({
            "runs": len(xs), "median_us": round(statistics.median(xs) * 1e6, 1), "min_us": round(xs[0] * 1e6, 1),
            "p95_us": round(xs[min(len(xs) - 1, int(0.95 * len(xs)))] * 1e6, 1) if len(xs) >= 20 else None,
        })  # fmt: skip
    activation = [r.activation for r in shipped.rules]
    return {
        "case": decision.case, "graph": decision.graph, "rules": len(decision.rules.rules),
        "defeats": len(decision.rules.defeats), "facts": len(decision.entries),
        "fired": activation.count("true"), "unknown": activation.count("unknown"),
        "weighings": 2 ** activation.count("unknown") + 1,
        "record_bytes": decision.record_bytes, "within_record_limit": decision.fits,
        "path": taken, "compared_with": other, "equal": not diff, "differences": diff,
        "label": shipped.label, "strength": shipped.strength, "interval": [shipped.low, shipped.high],
        "variants": variants,
        "ratio": round(variants[other]["median_us"] / variants["judge"]["median_us"], 3),
    }  # fmt: skip


# ---------------------------------------------------------------------- report


def show(result: dict[str, Any]) -> None:
    out = Console(width=140)
    machine = result["machine"]
    out.print(f"{result['engine']}, VECTOR_THRESHOLD {result['vector_threshold']}; load average "
              f"{machine['load_before'][0]:.1f} before, {machine['load_after'][0]:.1f} after, {machine['cpus']} cpus")  # fmt: skip
    table = Table(title="gaf verdict — judge() per decision, µs (median of runs)")
    for column in ("case", "graph", "rules", "defeats", "facts", "fired", "unknown", "judge path", "judge µs",
                   "other path", "other µs", "other/judge", "runs", "equal"):  # fmt: skip
        table.add_column(column, justify="left" if column in ("case", "graph", "judge path", "other path") else "right")
    for r in result["sizes"]:
        v = r["variants"]
        table.add_row(r["case"], r["graph"], f"{r['rules']:,}", f"{r['defeats']:,}", f"{r['facts']:,}", f"{r['fired']:,}",
                      str(r["unknown"]), path_detail(v["judge"]["paths"]), f"{v['judge']['median_us']:,.0f}",
                      path_detail(v[r["compared_with"]]["paths"]),
                      f"{v[r['compared_with']]['median_us']:,.0f}", f"{r['ratio']:.2f}", str(v["judge"]["runs"]),
                      "yes" if r["equal"] else "[red]NO[/]")  # fmt: skip
    out.print(table)
    out.print("judge path = the weighings of one judge() as shipped, by path (topological and fixed point: pure Python; "
              "array: numpy); other path = the same judge() with VECTOR_THRESHOLD set so every weighing takes the other side")  # fmt: skip
    for r in result["sizes"]:
        if not r["within_record_limit"]:
            out.print(f"{r['rules']:,} rules ({r['graph']}): the rule set is {r['record_bytes']:,} bytes, over the default "
                      "record limit — a closure could not store it without raising GAF_MAX_RECORD_BYTES")  # fmt: skip
        for d in r["differences"]:
            out.print(f"[red]{r['case']} {r['rules']} {r['graph']}: {d}[/]")


def _commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    except OSError:
        return ""


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = argparse.ArgumentParser(prog="python -m bench verdict", description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    parser.add_argument("--sizes", default="10,100,1000,10000", help="synthetic rule sets, in rules (the rent case always runs first)")
    parser.add_argument("--graphs", default="acyclic,cyclic", help="acyclic and/or cyclic defeat graphs")
    parser.add_argument("--unknown", type=int, default=2, help="rules left unresolved per synthetic decision (2^k + 1 weighings)")
    parser.add_argument("--repeat", type=int, default=200, help="at most this many timed runs per variant and size")
    parser.add_argument("--seconds", type=float, default=10.0, help="time budget per variant and size")
    parser.add_argument("--seed", type=int, default=20261130)
    parser.add_argument("--json", type=Path, default=RESULTS, help="where to write the result (default %(default)s)")
    parser.add_argument("--report", type=Path, default=None, help="print a saved result and exit")
    args = parser.parse_args(argv)
    if args.report:
        saved = json.loads(args.report.read_text())
        if "sizes" not in saved:
            console.print(f"{args.report} was written by the earlier verdict benchmark (array path against a dict loop); run this one again")
            return 2
        show(saved)
        return 0
    graphs = [g for g in args.graphs.split(",") if g]
    if not set(graphs) <= {"acyclic", "cyclic"} or not graphs:
        parser.error("--graphs takes acyclic and/or cyclic")
    if not 0 <= args.unknown <= engine.MAX_UNKNOWN or args.repeat < 1:
        parser.error(f"--unknown must be 0 … {engine.MAX_UNKNOWN} and --repeat at least 1")
    import numpy

    result: dict[str, Any] = {
        "benchmark": "verdict", "date": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "command": "python -m bench verdict " + " ".join(argv), "commit": _commit(),
        "args": {k: v for k, v in vars(args).items() if k not in ("json", "report")},
        "engine": engine.ENGINE, "vector_threshold": engine.VECTOR_THRESHOLD, "epsilon": engine.EPSILON, "digits": engine.DIGITS,
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "numpy": numpy.__version__,
                    "load_before": os.getloadavg()},
        "sizes": [],
    }  # fmt: skip
    decisions: list[Callable[[], Decision]] = [rent]
    for n in (int(s) for s in args.sizes.split(",") if s):
        for graph in graphs:
            decisions.append(lambda n=n, graph=graph: synthetic(n, cyclic=graph == "cyclic", unknown=args.unknown, seed=args.seed))
    for make in decisions:
        decision = make()
        row = measure(decision, repeat=args.repeat, seconds=args.seconds)
        console.print(f"{row['case']} {row['rules']:,} rules, {row['graph']}: judge ({row['path']}) "
                      f"{row['variants']['judge']['median_us']:,.0f} µs, {row['compared_with']} "
                      f"{row['variants'][row['compared_with']]['median_us']:,.0f} µs, "
                      f"{'equal' if row['equal'] else 'DIFFERENT'}")  # fmt: skip
        result["sizes"].append(row)
    result["machine"]["load_after"] = os.getloadavg()
    result["equal"] = all(r["equal"] for r in result["sizes"])
    show(result)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(result, indent=1) + "\n")
        console.print(f"saved {args.json}")
    if not result["equal"]:
        console.print("[red]the paths judge can take gave different judgements (above): a failure, not a figure[/]")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
