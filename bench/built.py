"""Impact benchmark on a graph built by gaf itself: reach and the confirmed report, each beside a baseline.

    python -m bench built [--portfolios 1300] [--cases 4] [--claims 40] [--stores neo4j] [--json out.json]
    python -m bench built --report out.json        # print saved results again

bench/impact.py times the dependency walk on a graph written directly; its closures are
not projections, so there is nothing to recompute them from. Here the graph is made the
way a deployment makes it, through the library calls the CLI makes (issue 18):

* **claims**, seeded: ``--portfolios`` projection policies, each a portfolio whose scope is
  one subject pattern (``case:p17/*``), so a change reaches only its portfolio's closures;
  ``--cases`` cases per portfolio, ``--claims`` claims per case of one to three statements
  about the case, over ``--predicates`` predicates, from the portfolio's ``--per-portfolio``
  sources. The source pool is Zipf-skewed in how many portfolios a source feeds: the
  source of rank r feeds max(1, round(``--fan-out`` / r**``--skew``)) portfolios, so most
  feed one and the first feeds ``--fan-out`` — the sources sampled span a few dependents
  to about a thousand. Each policy trusts its sources (one authoritative), declares one
  source complete for one predicate, and derives ``clear`` with a ``not`` over that closed
  predicate; one set of verdict rules reads four predicates and ``clear``; one action
  policy and one grant cover every case.
* **the build**: ``gaf.ledger.ingest`` (agents, sources, claims, the grant and action
  policy), ``gaf.policies.publish`` (each policy, the rules), then per portfolio
  ``gaf.projection.project`` once (one GAF for the portfolio), ``gaf.closure.close`` once
  per case (a closure per case, judging the portfolio's GAF) and ``gaf.actions.act`` on the
  verdicts of ``--acted`` of the cases. No record is written any other way. The store is
  kept under ``--workdir`` with the parameters it was built from, so a second run with the
  same parameters skips the build (the Neo4j server's own data directory, the LadybugDB
  directory); its node and relationship counts are checked against the build's.

Then, for ``--queries`` sources (after ``--warmup`` unmeasured ones) drawn with ranks
log-uniform over the pool — as many sources of each order of magnitude of fan-out —, each
source's subgraph touched once unmeasured (warm latency), two pairs of variants in
alternating order:

* **reach** — ``impact.reached(store, impact.Change.removing(claims of the source))``
  beside a baseline without gaf's index: every closure in the store read, the standing
  ones (nothing supersedes them) kept, each one's policy scope and predicates tested in
  Python against the atoms of the source's claims. Both must name the same closures.
* **confirmed** — ``impact.source_invalidated(store, source)``, the whole report (walk,
  reach, recomputation of every reached closure) beside a baseline that takes the same
  reached closures and re-projects each one from the store, one by one: its policy, rules,
  GAF and recorded review policy, the cone's claims read again, evaluated without the
  source's claims, accepted, judged and compared with the stored verdict. Both must agree
  on which closures' verdicts change and on the verdict each changes to, or the benchmark
  fails.

Reported: p50/p95/max per variant, split by sources with ≤ 1,000 dependents (the walk's
affected records) and by reports reaching ≤ 100 closures; closures recomputed per second
by each; the build's rate per stage; machine facts and the load average before and after.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import random
import shutil
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

import impact
from bench import percentiles, save_result
from gaf.actions import act
from gaf.closure import close
from gaf.derive import Entry, Truth
from gaf.ledger import ingest
from gaf.policies import publish
from gaf.projection import PolicyFacts, cone_claims, cone_predicates, evaluate_over, ground_of, in_cone, project, recorded_review
from gaf.records import GAF, ActionPolicy, Agent, Claim, Closure, Grant, Projection, Source, Verdict, VerdictRules
from gaf.store import GafStore
from gaf.verdict import judge

console = Console(stderr=True)
#: The as-of every portfolio is projected and closed at; claims are seen before it.
AT = datetime(2026, 7, 15, tzinfo=UTC)
VALID = {"start": "2026-07-01", "end": "2026-08-01"}
#: The predicates the verdict rules read, and the one each policy declares closed (its
#: derivation ``clear(?R) :- READ[4](?R), not CLOSED(?R)`` leans on that silence).
READ = ("p0", "p1", "p2", "p3", "p4")
CLOSED = "p5"
#: Dependents, and reached closures, at or below which issue 18's goals apply.
GOAL_DEPENDENTS, GOAL_CLOSURES = 1000, 100
OBSERVER = Agent(key="observer", name="observer", agent_type="software")
REVIEWER = Agent(key="reviewer", name="reviewer", agent_type="person", roles=["reviewer"])
AUTHORITY = Agent(key="authority", name="an authority", agent_type="organisation", roles=["authority"])
NOTICE = "notice"
ACTIONS = ActionPolicy(name="notices", version=1, permits={NOTICE: ["yes", "no", "inconclusive", "undetermined"]})
GRANT = Grant(
    agent=AUTHORITY.id, action_kind=NOTICE, subjects=["case:*"], granted_by=AUTHORITY.id, granted_at=AT - timedelta(days=30)
)
RULES = VerdictRules(
    name="standing", version=1, conclusion="the case is in good standing",
    rules=[{"name": "paid", "role": "warrant", "condition": ["p0(?subject)", "p1(?subject)"]},
           {"name": "clear", "role": "warrant", "condition": ["clear(?subject)"]},
           {"name": "arrears", "role": "rebuttal", "condition": ["p2(?subject)"]},
           {"name": "disputed", "role": "rebuttal", "condition": ["p3(?subject)"]}],
    defeats=[{"attacker": "arrears", "attacked": "paid"}],
    bands=[{"label": "yes", "low": 0.25, "high": 1}, {"label": "no", "low": -1, "high": -0.25}],
)  # fmt: skip


# ---------------------------------------------------------------------- the claims


@dataclass(frozen=True)
class Shape:
    """What a built graph is drawn from: the cache key of a built store."""

    portfolios: int
    cases: int
    claims: int
    predicates: int
    per_portfolio: int
    fan_out: int
    skew: float
    acted: float
    seed: int


@dataclass
class Portfolio:
    """One projection policy, its cases, the claims about them, and the cases acted on."""

    policy: Projection
    cases: list[str]
    claims: list[Claim]
    acted: list[str]


@dataclass
class World:
    sources: list[Source]
    #: portfolios each source feeds, by source id (its rank is its place in ``sources``)
    feeds: dict[str, int]
    portfolios: list[Portfolio] = field(default_factory=list)


def draw(shape: Shape) -> World:
    """Every record the build writes before projecting, drawn from one seeded stream."""
    rng = random.Random(shape.seed)
    members = _assign(rng, shape)
    sources = [Source(key=f"src-{rank}", name=f"source {rank}") for rank in range(len(members))]
    world = World(sources, {s.id: len(m) for s, m in zip(sources, members, strict=True)})
    by_portfolio: list[list[Source]] = [[] for _ in range(shape.portfolios)]
    for source, feeds in zip(sources, members, strict=True):
        for p in feeds:
            by_portfolio[p].append(source)
    predicates = [f"p{i}" for i in range(shape.predicates)]
    tick = 0
    for p, own in enumerate(by_portfolio):
        rng.shuffle(own)
        pattern = f"case:p{p}/*"
        policy = Projection(
            name=f"portfolio-{p}", version=1, question="Is the case in good standing?", scope={"subjects": [pattern]},
            completeness=[{"source": own[0].id, "predicate": CLOSED, "subject": pattern, "valid": VALID, "as_of": "2026-07-10T00:00:00Z"}],
            trust=[{"source": s.id, "predicates": predicates, "authoritative": i == 0} for i, s in enumerate(own)],
            derivation_rules=[{"name": "clear", "version": 1, "head": "clear(?R)", "when": [f"{READ[4]}(?R)", f"not {CLOSED}(?R)"]}],
            conclusions=["clear"],
        )  # fmt: skip
        cases = [f"case:p{p}/{c}" for c in range(shape.cases)]
        claims = []
        for subject in cases:
            for _ in range(shape.claims):
                tick += 1
                seen = AT - timedelta(seconds=tick)
                statements = [{"subject": subject, "predicate": predicate, "polarity": "denied" if rng.random() < 0.15 else "affirmed"}
                              for predicate in rng.sample(predicates, rng.randint(1, 3))]  # fmt: skip
                claims.append(Claim(source=rng.choice(own).id, observer=OBSERVER.id, observed_at=seen, recorded_at=seen,
                                    transformation="api_export", statements=statements))  # fmt: skip
        acted = [s for s in cases if rng.random() < shape.acted]
        world.portfolios.append(Portfolio(policy, cases, claims, acted))
    return world


def _assign(rng: random.Random, shape: Shape) -> list[list[int]]:
    """The portfolios each source feeds, by rank: rank r feeds max(1, round(fan_out / r**skew))
    distinct portfolios, drawn among those with fewer than ``per_portfolio`` sources, until
    every portfolio has that many."""
    need = [shape.per_portfolio] * shape.portfolios
    open_ = list(range(shape.portfolios))
    out: list[list[int]] = []
    rank = 0
    while open_:
        rank += 1
        feeds = max(1, round(shape.fan_out / rank**shape.skew))
        picked = rng.sample(open_, min(feeds, len(open_)))
        for p in picked:
            need[p] -= 1
        out.append(sorted(picked))
        open_ = [p for p in open_ if need[p]] if any(not need[p] for p in picked) else open_
    return out


# ---------------------------------------------------------------------- the build


def build(store: GafStore, world: World, shape: Shape, *, chunk: int = 50) -> dict[str, Any]:
    """Write the world through gaf's library calls; return what was written and how fast."""
    took: dict[str, float] = {"ingest": 0.0, "publish": 0.0, "project": 0.0, "close": 0.0, "act": 0.0}
    counts = {"claims": 0, "closures": 0, "actions": 0}

    @contextmanager
    def timed(stage: str) -> Iterator[None]:
        started = time.perf_counter()
        yield
        took[stage] += time.perf_counter() - started

    with timed("ingest"):
        ingest(store, [OBSERVER, REVIEWER, AUTHORITY, *world.sources, ACTIONS, GRANT], recorded_at=AT)
    with timed("publish"):
        rules = publish(store, RULES, at=AT)
    started = time.perf_counter()
    total = len(world.portfolios)
    for start in range(0, total, chunk):
        group = world.portfolios[start : start + chunk]
        with timed("ingest"):
            ingest(store, [c for p in group for c in p.claims], recorded_at=AT)
        counts["claims"] += sum(len(p.claims) for p in group)
        for portfolio in group:
            with timed("publish"):
                policy = publish(store, portfolio.policy, at=AT)
            with timed("project"):
                gaf = project(store, policy, as_of=AT, reviewer=REVIEWER.id, at=AT).gaf
            acted = set(portfolio.acted)
            for subject in portfolio.cases:
                with timed("close"):
                    closed = close(store, gaf.id, rules, subject=subject, as_of=AT, closed_at=AT)
                counts["closures"] += 1
                if subject in acted:
                    with timed("act"):
                        act(store, verdict=closed.verdict.id, action_kind=NOTICE, subject=subject, authorised_by=AUTHORITY.id,
                            grant=GRANT.id, policy=ACTIONS.id, idempotency_key=f"{NOTICE}:{subject}", at=AT,
                            reason="the verdict calls for a notice")  # fmt: skip
                    counts["actions"] += 1
        done = start + len(group)
        spent = time.perf_counter() - started
        console.print(f"built {done:,}/{total:,} portfolios, {counts['closures']:,} closures in {spent:.0f} s "
                      f"(about {spent / done * (total - done):.0f} s to go)")  # fmt: skip
    seconds = sum(took.values())
    return {"seconds": round(seconds, 1), "stages": {k: round(v, 1) for k, v in took.items()}, **counts,
            "closures_per_s": round(counts["closures"] / seconds, 1)}  # fmt: skip


# ---------------------------------------------------------------------- the baselines


def baseline_reach(store: GafStore, claims: Sequence[Claim]) -> set[str]:
    """The standing closures whose policy reads an atom of these claims, found without gaf's
    index: every closure read, those some closure supersedes dropped, the scope of each
    one's policy tested against every atom."""
    atoms = {(s.subject, s.predicate) for c in claims for s in c.statements}
    closures = store.find(Closure)
    superseded = {old for c in closures for old in c.supersedes}
    policies = store.get_many({c.projection for c in closures}, Projection)
    cones = {pid: cone_predicates(p) for pid, p in policies.items()}
    return {c.id for c in closures if c.id not in superseded
            and any(in_cone(policies[c.projection], cones[c.projection], s, p) for s, p in atoms)}  # fmt: skip


Judged = tuple[str, float, float, float]


def baseline_confirm(store: GafStore, closure_ids: Sequence[str], dropped: set[str]) -> dict[str, Judged]:
    """Each closure re-projected from the store on its own, without the dropped claims, and
    judged again: the closures whose verdict changes, with the verdict each changes to."""
    moved = {}
    for cid in closure_ids:
        closure = store.get(cid, Closure)
        policy, rules = store.get(closure.projection, Projection), store.get(closure.rules, VerdictRules)
        review = recorded_review(store, store.get(closure.gaf, GAF))
        claims = [c for c in cone_claims(store, policy, closure.as_of) if c.id not in dropped]
        after = evaluate_over(policy, claims, as_of=closure.as_of)
        accepted, _ = review.split(after)
        entries = [Entry(ground_of(c.proposition), Truth.TRUE, c.fact.id) for c in accepted]
        entries += [Entry(ground_of(p), Truth.UNKNOWN, p.id) for p in after.unresolved]
        entries += [Entry(ground_of(p), Truth.FALSE, p.id) for p in after.rejected]
        j = judge(rules, PolicyFacts(policy, entries, after.as_of), subject=closure.subject)
        (stored,) = store.find(Verdict, closure=cid)
        if (j.label, j.strength, j.low, j.high) != (stored.label, stored.strength, stored.low, stored.high):
            moved[cid] = (j.label, j.strength, j.low, j.high)
    return moved


# ---------------------------------------------------------------------- the measurement


def sample(world: World, n: int, seed: int) -> list[str]:
    """``n`` distinct sources whose ranks are log-uniform over the pool: as many of each
    order of magnitude of fan-out (the few that feed many portfolios, the many that feed one)."""
    rng = random.Random(seed)
    ids = [s.id for s in world.sources]
    n = min(n, len(ids))
    picked: dict[str, None] = {}
    while len(picked) < n:
        picked.setdefault(ids[min(len(ids) - 1, int(math.exp(rng.uniform(0, math.log(len(ids))))) - 1)], None)
    return list(picked)


def measure(store: GafStore, name: str, sources: list[str], warmup: list[str]) -> dict[str, Any]:
    """Reach and the confirmed report for each source, gaf and baseline alternating, each pair checked."""
    for source in warmup:
        _pair(store, source, 0)
    rows = []
    for i, source in enumerate(sources):
        # Touch the source's subgraph once, unmeasured: both variants then run with its pages cached.
        walked = impact.walk(store, {source: "positive"}, trigger={"kind": "source_invalidated", "id": source}, required=source)
        row = {"source": source, "dependents": len(walked.affected), **_pair(store, source, i)}
        rows.append(row)
        console.print(f"{name} {i + 1}/{len(sources)}: {row['dependents']:,} dependents, {row['reached']} closures reached; "
                      f"reach {row['reach_ms']:.1f} / {row['reach_base_ms']:.1f} ms, "
                      f"confirmed {row['confirm_ms']:.0f} / {row['confirm_base_ms']:.0f} ms")  # fmt: skip
    return summarise(rows)


def _pair(store: GafStore, source: str, i: int) -> dict[str, Any]:
    """One source: reach and the confirmed report, each with its baseline, in alternating order."""
    took: dict[str, float] = {}
    out: dict[str, Any] = {}

    def timed(key: str, fn: Callable[[], Any]) -> Any:
        started = time.perf_counter()
        value = fn()
        took[key] = (time.perf_counter() - started) * 1000
        return value

    def reach() -> list[Closure]:
        return impact.reached(store, impact.Change.removing(store.find(Claim, source=source)))

    def reach_base() -> tuple[list[Claim], set[str]]:
        claims = store.find(Claim, source=source)
        return claims, baseline_reach(store, claims)

    for variant in ("gaf", "base") if i % 2 == 0 else ("base", "gaf"):
        if variant == "gaf":
            out["reached"] = timed("reach_ms", reach)
        else:
            out["claims"], out["reached_base"] = timed("reach_base_ms", reach_base)
    closures = sorted(c.id for c in out["reached"])
    if set(closures) != out["reached_base"]:
        raise SystemExit(f"reach and its baseline disagree on {source}: {sorted(set(closures) ^ out['reached_base'])[:3]}")
    dropped = {c.id for c in out["claims"]}
    for variant in ("gaf", "base") if i % 2 == 0 else ("base", "gaf"):
        if variant == "gaf":
            report = timed("confirm_ms", lambda: impact.source_invalidated(store, source))
        else:
            moved = timed("confirm_base_ms", lambda: baseline_confirm(store, closures, dropped))
    changed = {c.closure: c for c in report.closures if c.outcome == "verdict_changed"}
    after = {cid: (c.after or {}) for cid, c in changed.items()}
    found = {cid: (a.get("label"), a.get("strength"), a.get("low"), a.get("high")) for cid, a in after.items()}
    conf = report.confirmation or {}
    if not report.complete or conf.get("reached") != len(closures) or found != moved:
        raise SystemExit(f"the confirmed report and its baseline disagree on {source}: reached {conf.get('reached')} vs "
                         f"{len(closures)}, complete {report.complete}, {len(set(found.items()) ^ set(moved.items()))} verdicts differ")  # fmt: skip
    return {"reached": len(closures), "verdicts_changed": len(found), "outcomes": {k: v for k, v in conf.items() if k not in ("reached", "recomputed")},
            **{k: round(v, 2) for k, v in took.items()}}  # fmt: skip


def summarise(rows: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {"rows": rows}
    keys = ("reach_ms", "reach_base_ms", "confirm_ms", "confirm_base_ms")
    scopes = {
        "all": rows,
        "dependents_le_1000": [r for r in rows if r["dependents"] <= GOAL_DEPENDENTS],
        "dependents_gt_1000": [r for r in rows if r["dependents"] > GOAL_DEPENDENTS],
        "reached_le_100": [r for r in rows if r["reached"] <= GOAL_CLOSURES],
        "reached_gt_100": [r for r in rows if r["reached"] > GOAL_CLOSURES],
    }
    for scope, subset in scopes.items():
        if not subset:
            out[scope] = None
            continue
        s: dict[str, Any] = {k: percentiles([r[k] for r in subset]) for k in (*keys, "dependents", "reached")}
        for tier in ("reach", "confirm"):
            s[f"{tier}_speedup_p50"] = round(s[f"{tier}_base_ms"]["p50"] / max(s[f"{tier}_ms"]["p50"], 1e-9), 1)
        closures = sum(r["reached"] for r in subset)
        s["closures_per_s"] = round(closures / (sum(r["confirm_ms"] for r in subset) / 1000), 1)
        s["closures_per_s_base"] = round(closures / (sum(r["confirm_base_ms"] for r in subset) / 1000), 1)
        out[scope] = s
    return out


# ---------------------------------------------------------------------- the stores


def _counts(store: GafStore) -> tuple[int, int]:
    """Nodes and relationships in the store (the benchmark's own check, not a gaf question)."""
    nodes = store.read("MATCH (n) RETURN count(n) AS n")[0]["n"]
    rels = store.read("MATCH ()-[r]->() RETURN count(r) AS n")[0]["n"]
    return int(nodes), int(rels)


def _built(store: GafStore, stamp: Path, shape: Shape) -> dict[str, Any] | None:
    """What the store was built with, if it was built from this shape and still holds it."""
    if not stamp.is_file():
        return None
    done = json.loads(stamp.read_text())
    if done.get("shape") != asdict(shape):
        return None
    if list(_counts(store)) != [done["nodes"], done["rels"]]:
        console.print(f"{stamp.parent}: counts differ from the build's; building again")
        return None
    console.print(f"reusing the store built in {stamp.parent} ({done['nodes']:,} nodes, {done['rels']:,} relationships)")
    return done


def _build_into(store: GafStore, stamp: Path, world: World, shape: Shape) -> dict[str, Any]:
    done = _built(store, stamp, shape)
    if done is None:
        done = {"shape": asdict(shape), "build": build(store, world, shape)}
        done["nodes"], done["rels"] = _counts(store)
        stamp.write_text(json.dumps(done))
    return done


@contextmanager
def ladybug(args: argparse.Namespace, world: World, shape: Shape) -> Iterator[tuple[GafStore, dict[str, Any]]]:
    from gaf.store.ladybug import LadybugStore

    home = Path(args.workdir) / "ladybug"
    stamp = home / "built.json"
    if not (stamp.is_file() and json.loads(stamp.read_text()).get("shape") == asdict(shape)):
        shutil.rmtree(home, ignore_errors=True)
    home.mkdir(parents=True, exist_ok=True)
    store = LadybugStore(home / "store")
    try:
        done = _build_into(store, stamp, world, shape)
        import ladybug as lb

        yield store, {**done, "version": getattr(lb, "__version__", "?")}
    finally:
        store.close()


@contextmanager
def neo4j(args: argparse.Namespace, world: World, shape: Shape) -> Iterator[tuple[GafStore, dict[str, Any]]]:
    """The benchmark's own server (scripts/neo4j_local.py on WORKDIR/neo4j and ``--port``),
    whose data directory is the cache: built once per shape, started again for a re-run."""
    from bench.impact import _neo4j_local
    from gaf.store.neo4j import Neo4jStore

    home = Path(args.workdir) / "neo4j"
    local = _neo4j_local(home, args.port, args.heap, args.pagecache)
    local("start")
    try:
        env = dict(line.split("=", 1) for line in local("env", capture=True).stdout.split() if "=" in line)
        env = {k.removeprefix("export "): v.strip("'\"") for k, v in env.items()}
        store = Neo4jStore(env["NEO4J_URI"], user=env["NEO4J_USER"], password=env["NEO4J_PASSWORD"])
        try:
            stamp = home / "built.json"
            ours = stamp.is_file() and json.loads(stamp.read_text()).get("shape") == asdict(shape)
            if not ours and _counts(store)[0]:
                # Another shape's graph, or a build cut short: empty the benchmark's own database first.
                console.print(f"{home}: not built from these parameters; emptying it")
                with store._driver.session(database=store.database) as session:  # CALL … IN TRANSACTIONS: an implicit one
                    session.run("MATCH (n) CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 10000 ROWS").consume()
                stamp.unlink(missing_ok=True)
            store.init()
            done = _build_into(store, stamp, world, shape)
            version = store._driver.execute_query(
                "CALL dbms.components() YIELD versions RETURN versions[0] AS v", database_=store.database
            )
            yield store, {**done, "version": version.records[0]["v"], "heap": args.heap, "pagecache": args.pagecache}
        finally:
            store.close()
    finally:
        if not args.keep_server:
            local("stop")


# ---------------------------------------------------------------------- printing


def show(result: dict[str, Any]) -> None:
    out = Console(width=140)
    m = result["machine"]
    out.print(
        f"{result['date']}: {m['cpus']} cores, load average {m['load_before'][0]:.1f} before, {m['load_after'][0]:.1f} after"
    )
    for name, res in result["stores"].items():
        b = result["built"][name]
        out.print(f"{name} {b.get('version', '')}: {b['nodes']:,} nodes, {b['rels']:,} relationships; "
                  f"{b['build']['closures']:,} closures, {b['build']['claims']:,} claims, {b['build']['actions']:,} actions; "
                  f"built in {b['build']['seconds']:,.0f} s ({b['build']['stages']})")  # fmt: skip
        table = Table(title=f"{name}: impact source on a built graph — ms over {len(res['rows'])} sources")
        for column in ("sources", "dep. p50/max", "reached p50/max", "reach p50", "reach p95", "base p50", "base p95",
                       "confirmed p50", "confirmed p95", "base p50", "base p95", "closures/s", "base closures/s"):  # fmt: skip
            table.add_column(column, justify="left" if column == "sources" else "right")
        for scope, title in (("all", "all"), ("dependents_le_1000", "≤1,000 dep."), ("dependents_gt_1000", ">1,000 dep."),
                             ("reached_le_100", "≤100 closures"), ("reached_gt_100", ">100 closures")):  # fmt: skip
            s = res.get(scope)
            if not s:
                continue
            table.add_row(f"{title} ({s['reach_ms']['n']})", f"{s['dependents']['p50']:g} / {s['dependents']['max']:g}",
                          f"{s['reached']['p50']:g} / {s['reached']['max']:g}",
                          *(f"{s[k][q]:.1f}" for k in ("reach_ms", "reach_base_ms") for q in ("p50", "p95")),
                          *(f"{s[k][q]:.0f}" for k in ("confirm_ms", "confirm_base_ms") for q in ("p50", "p95")),
                          f"{s['closures_per_s']:,.0f}", f"{s['closures_per_s_base']:,.0f}")  # fmt: skip
        out.print(table)
    out.print(
        "reach = impact.reached; base = every closure read, its policy's scope tested in Python. confirmed = "
        "impact.source_invalidated; base = each reached closure re-projected from the store, one by one."
    )


# ---------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = argparse.ArgumentParser(prog="python -m bench built", description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    parser.add_argument("--portfolios", type=int, default=1300, help="projection policies, one subject pattern each")
    parser.add_argument("--cases", type=int, default=4, help="cases (closures) per portfolio")
    parser.add_argument("--claims", type=int, default=40, help="claims per case")
    parser.add_argument("--predicates", type=int, default=64, help="predicates claims state (at least 6)")
    parser.add_argument("--per-portfolio", type=int, default=6, help="sources per portfolio")
    parser.add_argument("--fan-out", type=int, default=32, help="portfolios the first source of the pool feeds")
    parser.add_argument("--skew", type=float, default=1.0, help="Zipf exponent of fan-out by rank")
    parser.add_argument("--acted", type=float, default=0.5, help="share of cases whose verdict is acted on")
    parser.add_argument("--seed", type=int, default=20261202)
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--stores", default="neo4j", help="neo4j, ladybug, or both (comma-separated)")
    parser.add_argument("--workdir", default="/tmp/gaf-bench-built", help="the built stores, kept for re-runs")
    # boilerplate: the benchmark-server options (port, heap, page cache, keep, json, report) are
    # declared by each benchmark that starts a server of its own, as bench/impact.py does.
    parser.add_argument("--port", type=int, default=7748)
    parser.add_argument("--heap", default="2g")
    parser.add_argument("--pagecache", default="3g")
    parser.add_argument("--keep-server", action="store_true", help="leave the benchmark Neo4j running")
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--report", type=Path, default=None, help="print a saved result and exit")
    args = parser.parse_args(argv)
    if args.report:
        show(json.loads(args.report.read_text()))
        return 0
    if args.predicates < 6:
        parser.error(f"--predicates must be at least 6 (the rules read p0-p5), got {args.predicates}")
    shape = Shape(**{name: getattr(args, name) for name in Shape.__dataclass_fields__})
    world = draw(shape)
    picked = sample(world, args.queries + args.warmup, args.seed)
    warm, measured = picked[: args.warmup], picked[args.warmup :]
    result: dict[str, Any] = {
        "benchmark": "built",
        "date": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "command": "python -m bench built " + " ".join(argv),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform(),
                    "load_before": os.getloadavg()},
        "args": {k: str(v) for k, v in vars(args).items() if k not in ("json", "report")},
        "sources": len(world.sources), "feeds_max": max(world.feeds.values()),
        "built": {}, "stores": {},
    }  # fmt: skip
    for name in args.stores.split(","):
        opener = {"neo4j": neo4j, "ladybug": ladybug}[name]
        with opener(args, world, shape) as (store, built):
            result["built"][name] = built
            result["stores"][name] = measure(store, name, measured, warm)
    result["machine"]["load_after"] = os.getloadavg()
    show(result)
    save_result(result, args.json, console)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
