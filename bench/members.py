"""Records that do not grow with the ledger: project and close over N facts under the default record limit.

    python -m bench members [--facts 100000] [--excluded 10000] [--cache-mb 0] [--json out.json]

One trusted, authoritative source affirms ``held(item:i)`` for ``--facts`` items, one
claim each; a source trusted for nothing says the same of ``--excluded`` of them (an
exclusion each, which the closure lists). Through the library, on a new embedded store, with the built-in record limit
(1 MiB): ``ingest`` the claims, ``publish`` the policy and rules, ``project`` once (one
GAF of every fact) and ``close`` one item. Reported: the wall time of each stage, the
process's peak RSS, and for the GAF, the decision and the closure the bytes their nodes
hold (``stored_body``) beside — the baseline, from the same records in the same run —
the bytes of the whole record (``body``), which is what a node held before member lists
were left to the relationships (schema version 4) and what the limit refused. Checked: the
GAF read back from the store lists every fact, and the verdict is the one the rules give.
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from bench import save_result

AT = datetime(2026, 7, 20, tzinfo=timezone.utc)
console = Console(stderr=True)


def _records(facts: int, excluded: int) -> tuple[list[Any], Any, Any, str]:
    from gaf.records import Agent, Claim, Projection, Source, VerdictRules

    observer = Agent(key="loader", name="loader", agent_type="software")
    reviewer = Agent(key="reviewer", name="reviewer", agent_type="person")
    trusted, other = Source(key="register", name="register"), Source(key="gossip", name="gossip")
    seen = AT - timedelta(days=1)

    def said(source: Source, predicate: str, i: int) -> Claim:
        return Claim(source=source.id, observer=observer.id, observed_at=seen, recorded_at=seen, transformation="api_export",
                     statements=[{"subject": f"item:{i:07d}", "predicate": predicate, "polarity": "affirmed"}])  # fmt: skip

    claims = [said(trusted, "held", i) for i in range(facts)] + [said(other, "held", i) for i in range(excluded)]
    policy = Projection(name="inventory", version=1, question="is the item held?", scope={"subjects": ["item:*"]},
                        trust=[{"source": trusted.id, "predicates": ["held"], "authoritative": True}])  # fmt: skip
    rules = VerdictRules(name="held", version=1, conclusion="held",
                         rules=[{"name": "held", "role": "warrant", "condition": ["held(?subject)"], "qualifier": 0.8}],
                         bands=[{"label": "held", "low": 0.25, "high": 1}])  # fmt: skip
    return [observer, reviewer, trusted, other, *claims], policy, rules, reviewer.id


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run(facts: int, excluded: int, cache_mb: int, workdir: Path) -> dict[str, Any]:
    from gaf.closure import close
    from gaf.ledger import ingest
    from gaf.policies import publish
    from gaf.projection import project
    from gaf.records import GAF, Closure, Decision, current_limits
    from gaf.store.ladybug import LadybugStore

    records, policy, rules, reviewer = _records(facts, excluded)
    times: dict[str, float] = {}
    with LadybugStore(workdir / "members.lbug", cache_mb=cache_mb or None) as store:
        store.init()
        start = time.perf_counter()
        ingest(store, records, recorded_at=AT)
        times["ingest"] = time.perf_counter() - start
        del records
        start = time.perf_counter()
        stored_policy, stored_rules = publish(store, policy, at=AT), publish(store, rules, at=AT)
        projected = project(store, stored_policy, as_of=AT, reviewer=reviewer, at=AT)
        times["project"] = time.perf_counter() - start
        start = time.perf_counter()
        closed = close(store, projected.gaf.id, stored_rules, subject="item:0000000", as_of=AT, closed_at=AT)
        times["close"] = time.perf_counter() - start
        start = time.perf_counter()
        gaf = store.get(projected.gaf.id, GAF)
        times["read the GAF back"] = time.perf_counter() - start
        (decision,) = store.find(Decision)
        closure = store.get(closed.closure.id, Closure)
        sizes = {r.KIND: {"stored": len(r.stored_body), "whole": len(r.body)} for r in (gaf, decision, closure)}
        checks = {"facts in the GAF read back": len(gaf.facts), "exclusions listed by the closure": len(closure.excluded),
                  "verdict": closed.verdict.label}  # fmt: skip
    ok = checks == {"facts in the GAF read back": facts, "exclusions listed by the closure": excluded, "verdict": "held"}
    return {"facts": facts, "excluded": excluded, "cache_mb": cache_mb, "limit": current_limits().max_record_bytes,
            "seconds": times, "peak_rss_mb": round(_peak_mb(), 1), "bytes": sizes, "checks": checks, "ok": ok}  # fmt: skip


def report(result: dict[str, Any]) -> None:
    table = Table(title=f"{result['facts']:,} facts, {result['excluded']:,} exclusions; record limit {result['limit']:,} bytes")
    for header in ("record", "node holds (bytes)", "whole record (bytes): the node before"):
        table.add_column(header, justify="right")
    for kind, b in result["bytes"].items():
        table.add_row(kind, f"{b['stored']:,}", f"{b['whole']:,}")
    console.print(table)
    console.print(", ".join(f"{k} {v:.1f} s" for k, v in result["seconds"].items()) + f"; peak RSS {result['peak_rss_mb']} MB")
    console.print(f"checks: {result['checks']} — {'ok' if result['ok'] else 'WRONG'}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench members", description=__doc__.split("\n\n")[0])
    parser.add_argument("--facts", type=int, default=100_000)
    parser.add_argument("--excluded", type=int, default=10_000)
    parser.add_argument("--cache-mb", type=int, default=0, help="the embedded store's buffer pool (0: LadybugDB's default)")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="gaf-bench-members-") as tmp:
        result = run(args.facts, args.excluded, args.cache_mb, Path(tmp))
    result["python"] = sys.version.split()[0]
    report(result)
    save_result(result, args.json, console)
    return 0 if result["ok"] else 1
