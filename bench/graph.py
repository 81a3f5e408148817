"""A synthetic, seeded provenance graph of gaf records, and the raw write plan for it.

The graph is a set of independent *cases* (a lease, say), each shaped like the
chain gaf is for:

* a few agents, sources, projections (with completeness declarations) and
  verdict-rule sets shared by every case, written first;
* per case: 3–6 propositions about the subject, 3–6 claims from different
  sources each asserting (or now and then denying) 2–4 of them — so most
  propositions are stated by several claims —, one evaluation per proposition
  citing every claim for and against it, an accepted fact per accepted
  evaluation, sometimes a derivation over 2–3 facts with its derived
  proposition and fact, a GAF snapshot, sometimes a reviewer's decision, a
  closure and a verdict. (Actions are left out: their record kind was still
  being reworked when this was written.)

That gives about 22 nodes and 75 relationships per case (≈ 3.4 relationships
per node); the number of cases is chosen to reach the requested node count.
Records are emitted in dependency order, so any consecutive batch only points
at records of the same batch or earlier ones, which ``put`` in atomic mode needs.

Everything is built before any timing starts. ``plan()`` turns the batches into
the rows and Cypher a hand-written ingest would send — the same nodes (the
records and the propositions they imply, each once), the same properties
(``id``, ``kind``, ``body``, ``written_at`` where gaf stamps it, and ``record.props()``) and the same relationships
(``record.edges()``), grouped the way ``GafStore.put`` groups them.
"""

from __future__ import annotations

import itertools
import random
import time
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any

from gaf.canonical import kind_of
from gaf.records import (
    GAF,
    AcceptedFact,
    Agent,
    Claim,
    Closure,
    CompletenessDeclaration,
    Decision,
    Derivation,
    Evaluation,
    Projection,
    Proposition,
    Record,
    Source,
    Statement,
    TrustRule,
    Verdict,
    VerdictRule,
    VerdictRules,
)
from gaf.store import base as _gaf_base
from gaf.store.schema import label_of
from gaf.types import format_instant

EPOCH = datetime(2025, 1, 1, tzinfo=timezone.utc)
#: Statements a case can make: predicate -> how to draw the object/value.
PREDICATES = (
    "tenant",
    "landlord",
    "rent_amount",
    "deposit_amount",
    "deposit_paid",
    "paid_on_time",
    "arrears",
    "notice_served",
    "address",
)
TRANSFORMATIONS = ("api_export", "document", "ocr", "human_entry", "llm_extraction", "message")
N_AGENTS = 200
N_SOURCES = 40
N_PROJECTIONS = 4
#: Expected nodes per case, used only to size the progress bar.
NODES_PER_CASE = 22


def node_count(record: Record) -> int:
    """Nodes a record adds on its own (itself and what it implies), before dedup."""
    return 1 + len(record.implied_all())


@dataclass
class Graph:
    """The records to write, in dependency order, and what the store should hold after."""

    records: list[Record]
    nodes: int
    rels: int
    cases: int
    seed: int
    build_seconds: float
    by_label: dict[str, int] = field(default_factory=dict)
    by_rel: dict[str, int] = field(default_factory=dict)

    def batches(self, size: int) -> list[Sequence[Record]]:
        return [self.records[i : i + size] for i in range(0, len(self.records), size)]


def build(
    target_nodes: int,
    *,
    seed: int = 20260705,
    sources: int = N_SOURCES,
    skew: float = 0.0,
    progress: Callable[[int], None] | None = None,
) -> Graph:
    """Records until ``target_nodes`` distinct nodes exist (the shared ones included).

    ``sources`` is the size of the shared source pool; with ``skew`` > 0 a case draws
    its sources with Zipf weights 1/rank**skew, so a few sources feed many cases and
    most feed a handful (the shape impact analysis meets: fan-outs over orders of
    magnitude). ``skew`` 0 draws uniformly, as the ingest benchmark always has.
    """
    started = time.perf_counter()
    maker = _Maker(random.Random(seed), sources=sources, skew=skew)
    records: list[Record] = []
    seen: set[str] = set()
    by_label: dict[str, int] = defaultdict(int)
    by_rel: dict[str, int] = defaultdict(int)
    rels = 0

    def add(group: list[Record]) -> None:
        nonlocal rels
        added = 0
        for record in group:
            records.append(record)
            for node in (record, *record.implied_all()):
                if node.id in seen:
                    continue
                seen.add(node.id)
                added += 1
                by_label[node.LABEL] += 1
                for rel, _ in node.edges():
                    by_rel[rel] += 1
                    rels += 1
        if progress:
            progress(added)

    add(maker.shared())
    cases = 0
    while len(seen) < target_nodes:
        add(maker.case(cases))
        cases += 1
    return Graph(
        records=records,
        nodes=len(seen),
        rels=rels,
        cases=cases,
        seed=seed,
        build_seconds=time.perf_counter() - started,
        by_label=dict(sorted(by_label.items())),
        by_rel=dict(sorted(by_rel.items())),
    )


class _Maker:
    """Draws the records of the graph from one seeded random stream."""

    def __init__(self, rng: random.Random, *, sources: int = N_SOURCES, skew: float = 0.0):
        self.rng = rng
        self.tick = 0
        self.n_sources = sources
        self.cumulative = list(itertools.accumulate(1 / (rank + 1) ** skew for rank in range(sources))) if skew > 0 else None

    def pick_sources(self, k: int) -> list[Source]:
        """k distinct sources: uniformly, or by Zipf weight when skewed."""
        if self.cumulative is None:
            return self.rng.sample(self.sources, k)
        picked: dict[str, Source] = {}
        while len(picked) < k:
            source = self.rng.choices(self.sources, cum_weights=self.cumulative)[0]
            picked.setdefault(source.id, source)
        return list(picked.values())

    def at(self) -> datetime:
        """A fresh instant (one second later each call): keeps claims distinct."""
        self.tick += 1
        return EPOCH + timedelta(seconds=self.tick)

    # ------------------------------------------------------------------ shared records

    def shared(self) -> list[Record]:
        rng = self.rng
        out: list[Record] = []
        orgs = [
            Agent(key=f"org-{i}", name=f"Organisation {i}", agent_type="organisation", roles=["issuer"]) for i in range(20)
        ]
        out += orgs
        self.agents: list[Agent] = list(orgs)
        for i in range(N_AGENTS - len(orgs)):
            if i % 4 == 0:
                agent = Agent(key=f"bot-{i}", name=f"Extractor {i}", agent_type="software", roles=["extractor"])
            else:
                agent = Agent(
                    key=f"person-{i}",
                    name=f"Person {i}",
                    agent_type="person",
                    roles=rng.sample(["observer", "reviewer", "authority"], 2),
                    acts_for=rng.choice(orgs).id,
                )
            self.agents.append(agent)
            out.append(agent)
        self.reviewers = [a for a in self.agents if "reviewer" in a.roles]
        self.sources = [
            Source(
                key=f"src-{i}",
                name=f"Source {i}",
                description=f"ledger export #{i}" if i % 2 else "",
                operator=rng.choice(orgs).id,
            )
            for i in range(self.n_sources)
        ]
        out += self.sources
        self.projections: list[Projection] = []
        for i in range(N_PROJECTIONS):
            completeness = [
                CompletenessDeclaration(
                    source=self.sources[(i * 3 + j) % self.n_sources].id,
                    subject="lease:*",
                    predicate=PREDICATES[(i + j) % len(PREDICATES)],
                    valid={"start": "2025-01-01", "end": "2026-01-01"},
                    as_of="2026-01-15",
                )
                for j in range(3)
            ]
            self.projections.append(
                Projection(
                    name=f"tenancy-{i}",
                    version=1,
                    question="Is the tenant in good standing?",
                    cutoff="2026-01-31",
                    completeness=completeness,
                    trust=[TrustRule(source=s.id, predicates=list(PREDICATES[:4]), authoritative=True) for s in self.sources[:3]],
                )
            )
        out += self.projections
        self.rules = [
            VerdictRules(
                name=f"good-standing-{i}",
                version=1,
                conclusion="tenant in good standing",
                rules=[VerdictRule(name="paid", role="warrant"), VerdictRule(name="arrears", role="rebuttal")],
                defeats=[{"attacker": "arrears", "attacked": "paid"}],
                bands=[{"label": "good_standing", "low": 0.25, "high": 1}, {"label": "not_good_standing", "low": -1, "high": -0.25}],
            )
            for i in range(2)
        ]
        out += self.rules
        return out

    # ------------------------------------------------------------------ one case

    def statement(self, subject: str, predicate: str) -> Statement:
        rng = self.rng
        if predicate in ("tenant", "landlord"):
            return Statement(subject=subject, predicate=predicate, object=f"person:{rng.randrange(10**6)}")
        if predicate in ("rent_amount", "deposit_amount", "arrears"):
            return Statement(subject=subject, predicate=predicate, value=rng.randrange(100, 5000) * 100)
        if predicate == "address":
            return Statement(subject=subject, predicate=predicate, value=f"{rng.randrange(1, 300)} High Street, Flat {rng.randrange(1, 40)}")
        month = rng.randrange(1, 12)
        return Statement(
            subject=subject,
            predicate=predicate,
            value=rng.random() < 0.8,
            valid={"start": f"2025-{month:02d}-01", "end": f"2025-{month + 1:02d}-01"},
        )

    def case(self, n: int) -> list[Record]:
        rng = self.rng
        subject = f"lease:{n:08d}"
        projection = self.projections[n % N_PROJECTIONS]
        statements = [self.statement(subject, p) for p in rng.sample(PREDICATES, rng.randint(3, 6))]
        props = [s.proposition() for s in statements]
        out: list[Record] = []

        # Claims: several sources, each stating a few of the case's propositions.
        support: dict[str, list[str]] = defaultdict(list)
        refute: dict[str, list[str]] = defaultdict(list)
        for source in self.pick_sources(rng.randint(3, 6)):
            picked = rng.sample(range(len(statements)), min(len(statements), rng.randint(2, 4)))
            said = []
            for i in picked:
                denied = rng.random() < 0.1
                said.append(Statement.model_validate({**statements[i].model_dump(), "polarity": "denied"}) if denied else statements[i])
            observed = self.at()
            claim = Claim(
                source=source.id,
                observer=rng.choice(self.agents).id,
                observed_at=observed,
                recorded_at=observed + timedelta(minutes=5),
                transformation=rng.choice(TRANSFORMATIONS),
                statements=said,
                payload_digest=f"sha256:{rng.getrandbits(256):064x}" if rng.random() < 0.5 else None,
                failure_modes=["ocr_misread"] if rng.random() < 0.1 else [],
            )
            out.append(claim)
            for i, s in zip(picked, said, strict=True):
                (refute if s.polarity == "denied" else support)[props[i].id].append(claim.id)

        # Evaluations and accepted facts.
        facts: list[AcceptedFact] = []
        rejected: list[str] = []
        unresolved: list[str] = []
        for prop in props:
            pro, con = support.get(prop.id, []), refute.get(prop.id, [])
            if not pro and not con:
                continue  # no claim picked it: it is not in the graph
            outcome = "accepted" if len(pro) > len(con) else "rejected" if len(con) > len(pro) else "unknown"
            evaluation = Evaluation(
                proposition=prop.id,
                projection=projection.id,
                outcome=outcome,
                reason=f"{len(pro)} claim(s) for, {len(con)} against",
                supporting=sorted(pro),
                refuting=sorted(con),
                absent_in=[projection.completeness[0].id] if outcome == "unknown" else [],
            )
            out.append(evaluation)
            if outcome == "accepted":
                fact = AcceptedFact(proposition=prop.id, justification=evaluation.id, projection=projection.id)
                facts.append(fact)
                out.append(fact)
            elif outcome == "rejected":
                rejected.append(prop.id)
            else:
                unresolved.append(prop.id)

        # Sometimes a derivation over a few facts, with its conclusion admitted as a fact.
        derivations: list[Derivation] = []
        if len(facts) >= 2 and rng.random() < 0.5:
            conclusion = Proposition(subject=subject, predicate="in_good_standing", value=True)
            premises = rng.sample(facts, min(len(facts), rng.randint(2, 3)))
            derivation = Derivation(
                rule="good-standing/v1",
                bindings={"subject": subject},
                premises=sorted(f.id for f in premises),
                conclusion=conclusion.id,
                projection=projection.id,
            )
            derived = AcceptedFact(proposition=conclusion.id, justification=derivation.id, projection=projection.id)
            out += [conclusion, derivation, derived]
            derivations.append(derivation)
            facts.append(derived)

        # The snapshot, an occasional review decision, the closure and its verdict.
        gaf = GAF(
            projection=projection.id,
            facts=[f.id for f in facts],
            derivations=[d.id for d in derivations],
            unresolved=unresolved,
            rejected=rejected,
        )
        out.append(gaf)
        if facts and rng.random() < 0.3:
            out.append(
                Decision(
                    reviewer=rng.choice(self.reviewers).id,
                    decided_at=self.at(),
                    reason="checked against the ledger",
                    accepted=sorted(f.id for f in facts),
                )
            )
        closed = self.at()
        closure = Closure(
            question="Is the tenant in good standing?",
            subject=subject,
            as_of=closed,
            gaf=gaf.id,
            completeness=[c.id for c in projection.completeness],
            projection=projection.id,
            projection_version=1,
            implementation="gaf-projection/1",
            rules=self.rules[n % len(self.rules)].id,
            rules_version=1,
            engine="gaf-verdict/1",
            closed_at=closed,
        )
        strength = round(rng.uniform(-1, 1), 3)
        verdict = Verdict(
            closure=closure.id,
            label="good_standing" if strength > 0 else "not_good_standing",
            strength=strength,
            low=max(-1.0, strength - 0.25),
            high=min(1.0, strength + 0.25),
            engine="gaf-verdict/1",
            trace={"facts": len(facts), "rejected": len(rejected)},
        )
        out += [closure, verdict]
        return out


# ---------------------------------------------------------------------- the raw write plan


#: Node properties gaf writes besides id, kind, body and the record's columns: the
#: ``written_at`` stamp (the record's own time, else the ``at`` of the put), when
#: this version of gaf writes it.
STAMPED = any("written_at: r.written_at" in cypher for cypher in getattr(_gaf_base, "_CREATE", {}).values())


def node_row(record: Record) -> dict[str, Any]:
    """The properties of a record's node, as gaf stores them (put without ``at``)."""
    row = {"id": record.id, "kind": record.KIND, "body": record.body.decode()}
    if STAMPED:
        own = record.time()
        row["written_at"] = format_instant(own) if own is not None else None
    return row | record.props()


def create_cypher(label: str, columns: Sequence[str]) -> str:
    fixed = ("id", "kind", "body", "written_at") if STAMPED else ("id", "kind", "body")
    props = ", ".join(f"{c}: r.{c}" for c in (*fixed, *columns))
    return f"UNWIND $rows AS r CREATE (n:{label} {{{props}}})"


def link_cypher(rel: str, src: str, dst: str) -> str:
    return f"UNWIND $rows AS r MATCH (a:{src} {{id: r.s}}) MATCH (b:{dst} {{id: r.d}}) CREATE (a)-[:{rel}]->(b)"


@dataclass
class BatchPlan:
    """One transaction of the hand-written ingest: statements with their rows."""

    statements: list[tuple[str, list[dict[str, Any]]]]
    nodes: int
    rels: int


def plan(batches: Sequence[Sequence[Record]], statement_rows: int) -> Iterator[BatchPlan]:
    """The statements a hand-written ingest sends for each batch.

    Each node once (a proposition implied by claims of several batches is
    created in the first), nodes per label then relationships per (type, from
    label, to label), in chunks of ``statement_rows`` rows.
    """
    seen: set[str] = set()
    for batch in batches:
        nodes: dict[str, list[dict[str, Any]]] = defaultdict(list)
        edges: dict[tuple[str, str, str], list[dict[str, str]]] = defaultdict(list)
        columns: dict[str, Sequence[str]] = {}
        for record in batch:
            for node in (record, *record.implied_all()):
                if node.id in seen:
                    continue
                seen.add(node.id)
                columns[node.LABEL] = tuple(node.COLUMNS)
                nodes[node.LABEL].append(node_row(node))
                for rel, target in node.edges():
                    edges[(rel, node.LABEL, label_of(kind_of(target)))].append({"s": node.id, "d": target})
        statements: list[tuple[str, list[dict[str, Any]]]] = []
        for label, rows in sorted(nodes.items()):
            cypher = create_cypher(label, columns[label])
            statements += [(cypher, rows[i : i + statement_rows]) for i in range(0, len(rows), statement_rows)]
        for (rel, src, dst), rows in sorted(edges.items()):
            cypher = link_cypher(rel, src, dst)
            statements += [(cypher, rows[i : i + statement_rows]) for i in range(0, len(rows), statement_rows)]
        yield BatchPlan(
            statements=statements,
            nodes=sum(len(r) for r in nodes.values()),
            rels=sum(len(r) for r in edges.values()),
        )
