"""What-if benchmark: candidate changes judged per second, against re-projecting from the store.

    python -m bench whatif [--facts 10,100,1000] [--seconds 30] [--store DIR|bolt://…] [--json out.json]
    python -m bench whatif --report out.json

For each size a closure is built through gaf's own chain on a fresh store:
``--facts`` payments for one tenancy, each stated by one claim of a bank ledger
(authoritative, with a closed scope for July), a derivation rule that finds a
month paid when an allocated payment of the agreed amount reached the landlord's
account, a rule that finds it in arrears when nothing did, and verdict rules
over both (the rent case, scaled up). Every payment's amount and account are
accepted facts, so the cone holds about 2 × ``--facts`` facts.

Then the same candidate changes (``gaf.whatif``'s own list for that closure:
each retraction, each settling or contesting claim, each claim into a closed
scope) are judged by two variants, each for at most ``--seconds``:

* ``gaf``      — ``gaf.whatif.search``: the cone read once, every candidate
  re-projected and re-judged in memory;
* ``baseline`` — for every candidate, the cone re-read from the store
  (``cone_claims``), then re-projected and re-judged: the naive way.

Among the candidates both tried, the baseline must see exactly gaf's findings
move the verdict (checked). gaf's time includes judging the closure itself and
the cone check (a few judgements not counted as candidates): conservative for
gaf. Both variants run in one process, so the baseline also profits from the
records ``Record.shared`` keeps from gaf's run.
Reported: candidates per second for each, and the ratio.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from bench import save_result
from gaf.closure import close
from gaf.policies import publish
from gaf.projection import cone_claims, project
from gaf.records import Agent, Claim, Projection, Source, VerdictRules
from gaf.store.base import GafStore
from gaf.whatif import _apply, _candidates, _judge, search

console = Console(stderr=True)
JULY = datetime(2026, 7, 1, tzinfo=timezone.utc)
AS_OF = datetime(2026, 7, 20, tzinfo=timezone.utc)
#: When the benchmark's records are written (transaction time): fixed, so runs compare.
NOW = datetime(2026, 7, 20, tzinfo=timezone.utc)
RENT = "rent:lease-1/2026-07"
LEASE = "lease:1"
ACCOUNT = "account:landlord"
VALID = {"start": "2026-07-01", "end": "2026-08-01"}


def build(store: GafStore, payments: int) -> tuple[Any, Projection, VerdictRules]:
    """Store the case with ``payments`` payments, project it and close it; return the closure."""
    clerk = Agent(key="clerk", name="Registry clerk", agent_type="person", roles=["reviewer"])
    ledger = Source(key="ledger", name="Bank ledger")
    registry = Source(key="registry", name="Contract registry")
    receipts = Source(key="receipts", name="Transfer receipts")
    store.put([clerk, ledger, registry, receipts], at=NOW)

    def claim(source: Source, statements: list[dict], n: int) -> Claim:
        seen = JULY + timedelta(minutes=n)
        return Claim(source=source.id, observer=clerk.id, observed_at=seen, recorded_at=seen,
                     transformation="api_export", statements=statements)  # fmt: skip

    claims = [claim(registry, [
        {"subject": RENT, "predicate": "instalment_of", "object": LEASE},
        {"subject": LEASE, "predicate": "rent_amount", "value": 1000},
        {"subject": LEASE, "predicate": "landlord_account", "object": ACCOUNT},
    ], 0)]  # fmt: skip
    for i in range(payments):
        payment = f"payment:{i:05d}"
        claims.append(claim(ledger, [
            {"subject": payment, "predicate": "credited_to", "object": ACCOUNT, "valid": VALID},
            {"subject": payment, "predicate": "amount", "value": 1000 if i % 3 == 0 else 10 * (i % 97 + 1)},
        ], i + 1))  # fmt: skip
    store.put(claims, at=NOW)
    policy = publish(store, Projection.model_validate({
        "name": f"rent-{payments}", "version": 1, "question": "Is July's rent paid?",
        "scope": {"subjects": [RENT, LEASE, "payment:*"]},
        "completeness": [{"source": ledger.id, "predicate": "credited_to", "object": ACCOUNT, "valid": VALID,
                          "as_of": "2026-07-10T00:00:00Z"}],
        "trust": [{"source": ledger.id, "predicates": ["credited_to", "amount"], "authoritative": True},
                  {"source": registry.id, "predicates": ["instalment_of", "rent_amount", "landlord_account"], "authoritative": True},
                  {"source": receipts.id, "predicates": ["allocated_to"]}],
        "derivation_rules": [
            {"name": "paid", "version": 1, "head": "paid(?R)", "when": [
                "instalment_of(?R, ?L)", "rent_amount(?L, ?A)", "landlord_account(?L, ?Acct)",
                "credited_to(?P, ?Acct)", "amount(?P, ?A)", "allocated_to(?P, ?R)"]},
            {"name": "delinquent", "version": 1, "head": "delinquent(?R)", "when": [
                "instalment_of(?R, ?L)", "landlord_account(?L, ?Acct)", "not credited_to(_, ?Acct)"]},
        ],
    }), at=NOW)  # fmt: skip
    rules = publish(store, VerdictRules.model_validate({
        "name": f"rent-paid-{payments}", "version": 1, "conclusion": "paid",
        "bands": [{"label": "paid", "low": 0.5, "high": 1}, {"label": "unpaid", "low": -1, "high": -0.5}],
        "rules": [{"name": "paid", "role": "warrant", "condition": ["paid(?subject)"]},
                  {"name": "arrears", "role": "rebuttal", "condition": ["delinquent(?subject)"]}],
        "defeats": [{"attacker": "arrears", "attacked": "paid"}],
    }), at=NOW)  # fmt: skip
    result = project(store, policy, as_of=AS_OF, reviewer=clerk.id, at=AS_OF)
    closed = close(store, result.gaf.id, rules, subject=RENT, as_of=AS_OF, closed_at=AS_OF)
    return closed.closure, policy, rules


def run_size(store: GafStore, payments: int, seconds: float) -> dict[str, Any]:
    closure, policy, rules = build(store, payments)
    claims = cone_claims(store, policy, closure.as_of)
    base, evaluated = _judge(policy, rules, claims, closure)
    changes = _candidates(policy, rules, closure, claims, evaluated)
    facts = len(evaluated.candidates)

    started = time.perf_counter()
    report = search(policy, rules, claims, closure, max_size=1, seconds=seconds)
    gaf_seconds = time.perf_counter() - started

    verdicts: list[tuple[str, float, float, float]] = []
    started = time.perf_counter()
    for change in changes:
        if time.perf_counter() - started > seconds:
            break
        fresh = cone_claims(store, policy, closure.as_of)  # the naive way: back to the store every time
        after, _ = _judge(policy, rules, _apply(fresh, [change]), closure)
        verdicts.append((after.label, after.strength, after.low, after.high))
    base_seconds = time.perf_counter() - started

    # Same answers, both ways: among the candidates both judged, the baseline saw exactly
    # gaf's findings move the verdict (label, strength or interval).
    tried_by_both = min(report.tried, len(verdicts))
    moved = {(changes[i].kind, changes[i].claim.id) for i in range(tried_by_both)
             if verdicts[i] != (base.label, base.strength, base.low, base.high)}  # fmt: skip
    found = {(c.kind, c.claim.id) for f in report.findings for c in f.changes}
    judged = {(c.kind, c.claim.id) for c in changes[:tried_by_both]}
    if moved != found & judged:
        raise SystemExit(f"{payments} payments: gaf and the baseline disagree on {len(moved ^ (found & judged))} change(s)")
    return {
        "payments": payments, "facts_in_cone": facts, "claims_in_cone": len(claims), "candidates": len(changes),
        "label": base.label, "findings": len(report.findings),
        "gaf": {"tried": report.tried, "seconds": round(gaf_seconds, 3), "per_s": round(report.tried / gaf_seconds, 2),
                "complete": report.complete},
        "baseline": {"tried": len(verdicts), "seconds": round(base_seconds, 3), "per_s": round(len(verdicts) / base_seconds, 2)},
        "ratio": round((report.tried / gaf_seconds) / (len(verdicts) / base_seconds), 2),
    }  # fmt: skip


def show(result: dict[str, Any]) -> None:
    out = Console(width=120)
    out.print(f"store: {result['store']}; load average {result['machine']['load_before'][0]:.1f} before, "
              f"{result['machine']['load_after'][0]:.1f} after; time budget {result['args']['seconds']} s per variant and size")  # fmt: skip
    table = Table(title="gaf whatif — candidate changes judged per second")
    for column in ("facts in cone", "claims", "candidates", "gaf tried", "gaf /s", "baseline tried", "baseline /s", "×"):
        table.add_column(column, justify="right")
    for r in result["sizes"]:
        table.add_row(str(r["facts_in_cone"]), str(r["claims_in_cone"]), str(r["candidates"]), str(r["gaf"]["tried"]),
                      f"{r['gaf']['per_s']:.1f}", str(r["baseline"]["tried"]), f"{r['baseline']['per_s']:.1f}", f"{r['ratio']:.2f}")  # fmt: skip
    out.print(table)
    out.print("gaf = the cone read once, each candidate re-projected and re-judged in memory; "
              "baseline = the cone re-read from the store for each candidate")


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = argparse.ArgumentParser(prog="python -m bench whatif", description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    parser.add_argument("--facts", default="10,100,1000", help="cone sizes, as payments (≈ 2 facts each)")
    parser.add_argument("--seconds", type=float, default=30.0, help="time budget per variant and size")
    parser.add_argument("--store", default=None, help="a neo4j:// or bolt:// URI or a directory (records are content-addressed: rerunning adds nothing); default a fresh embedded store")
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--report", type=Path, default=None)
    args = parser.parse_args(argv)
    if args.report:
        show(json.loads(args.report.read_text()))
        return 0
    result: dict[str, Any] = {
        "benchmark": "whatif", "date": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "command": "python -m bench whatif " + " ".join(argv), "args": vars(args) | {"json": str(args.json)},
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "load_before": os.getloadavg()},
        "sizes": [],
    }  # fmt: skip
    for payments in (int(n) // 2 for n in args.facts.split(",")):
        work = Path(tempfile.mkdtemp(prefix="gaf-bench-whatif-"))
        store = GafStore.open(args.store or str(work / "store"))
        result["store"] = store.dialect
        try:
            console.print(f"{payments} payments: building the closure…")
            row = run_size(store, max(payments, 1), args.seconds)
            console.print(f"  {row['facts_in_cone']} facts, {row['candidates']} candidates: gaf {row['gaf']['per_s']}/s, "
                          f"baseline {row['baseline']['per_s']}/s")  # fmt: skip
            result["sizes"].append(row)
        finally:
            store.close()
            shutil.rmtree(work, ignore_errors=True)
    result["machine"]["load_after"] = os.getloadavg()
    show(result)
    save_result(result, args.json, console)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
