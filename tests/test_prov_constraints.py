"""PROV-CONSTRAINTS on gaf's PROV-O export, on random stores.

The oracle is the W3C PROV-CONSTRAINTS recommendation as this file reads it over the plain
RDF graph, not prov_export's code: PROV-O's class hierarchy, the event ordering of section
5.2, the typing and impossibility constraints of section 5.3, and the uniqueness of
section 5.1 for times. Every check counts the instances it actually tested, because a
check that never fires proves nothing; docs/prov-mapping.md names which are checked.
"""

from __future__ import annotations

import tempfile
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from rdflib import Graph, Literal, Namespace, URIRef
from rdflib.namespace import RDF

import impact
from gaf.policies import get, revise
from gaf.records import Projection
from gaf.reopen import after_invalidation, after_policy_change
from prov_export import graph, lineage, stream_all
from tests.impact_truth import embedded, materialise
from tests.worlds import AT, LONG_AGO, REVIEWER_AGENT, LedgerWorld, build_ledger, ledger_world

#: The PROV namespace, spelled here rather than imported: the checks read PROV, not gaf.
PROV = Namespace("http://www.w3.org/ns/prov#")
ENTITY, ACTIVITY, AGENT, COLLECTION = PROV.Entity, PROV.Activity, PROV.Agent, PROV.Collection

#: PROV-O's subclasses of the element classes (each names its direct superclass).
SUPERCLASS = {
    PROV.Plan: ENTITY, PROV.Bundle: ENTITY, COLLECTION: ENTITY, PROV.EmptyCollection: COLLECTION,
    PROV.Person: AGENT, PROV.Organization: AGENT, PROV.SoftwareAgent: AGENT,
}  # fmt: skip

#: Constraint 50 (typing): what the subject and the object of each relation must be.
TYPING = {
    PROV.used: (ACTIVITY, ENTITY), PROV.wasGeneratedBy: (ENTITY, ACTIVITY), PROV.wasInvalidatedBy: (ENTITY, ACTIVITY),
    PROV.wasInformedBy: (ACTIVITY, ACTIVITY), PROV.wasStartedBy: (ACTIVITY, ENTITY), PROV.wasEndedBy: (ACTIVITY, ENTITY),
    PROV.wasDerivedFrom: (ENTITY, ENTITY), PROV.wasRevisionOf: (ENTITY, ENTITY), PROV.wasQuotedFrom: (ENTITY, ENTITY),
    PROV.hadPrimarySource: (ENTITY, ENTITY), PROV.wasAttributedTo: (ENTITY, AGENT), PROV.wasAssociatedWith: (ACTIVITY, AGENT),
    PROV.actedOnBehalfOf: (AGENT, AGENT), PROV.hadMember: (COLLECTION, ENTITY), PROV.specializationOf: (ENTITY, ENTITY),
    PROV.alternateOf: (ENTITY, ENTITY),
}  # fmt: skip
#: The same for the qualified forms: what the influence node's property names (``prov:hadPlan``:
#: the plan of an association is an entity, constraint 50), and which element a time belongs to.
QUALIFIED_TYPING = {
    PROV.entity: ENTITY, PROV.activity: ACTIVITY, PROV.agent: AGENT, PROV.hadActivity: ACTIVITY, PROV.hadPlan: ENTITY,
}  # fmt: skip
TIMED = {PROV.generatedAtTime: ENTITY, PROV.invalidatedAtTime: ENTITY, PROV.startedAtTime: ACTIVITY, PROV.endedAtTime: ACTIVITY}

#: The derivations: prov:wasDerivedFrom and its subproperties.
DERIVATIONS = (PROV.wasDerivedFrom, PROV.wasRevisionOf, PROV.wasQuotedFrom, PROV.hadPrimarySource)
#: The influence classes of the relations constraints 53 and 54 name (a revision, quotation or
#: primary source is a derivation, which those constraints leave out).
RELATION_CLASSES = {
    PROV.Usage: "used", PROV.Generation: "wasGeneratedBy", PROV.Invalidation: "wasInvalidatedBy",
    PROV.Start: "wasStartedBy", PROV.End: "wasEndedBy", PROV.Communication: "wasInformedBy",
    PROV.Attribution: "wasAttributedTo", PROV.Association: "wasAssociatedWith", PROV.Delegation: "actedOnBehalfOf",
}  # fmt: skip

# Names of the checks, as counted and reported: PROV-CONSTRAINTS' numbers and names.
START_END = "30 start-precedes-end"
USAGE_IN = "33 usage-within-activity"
GENERATION_IN = "34 generation-within-activity"
INFORMED = "35 wasInformedBy-ordering"
GENERATION_INVALIDATION = "36 generation-precedes-invalidation"
GENERATION_USAGE = "37 generation-precedes-usage"
USAGE_INVALIDATION = "38 usage-precedes-invalidation"
DERIVED = "42 derivation-generation-generation-ordering"
REVISED = "42 derivation-generation-generation-ordering (wasRevisionOf)"
ASSOCIATED = "47 wasAssociatedWith-ordering"
ATTRIBUTED = "48 wasAttributedTo-ordering"
DELEGATED = "49 actedOnBehalfOf-ordering"
#: Not a PROV-CONSTRAINTS rule: an invalidation within its activity, as 34 holds a generation.
INVALIDATION_IN = "invalidation-within-activity (34's analogue)"
ACYCLIC = "derivation acyclicity (42: strictly-precedes)"
STRICT = "no cycle through strictly-precedes (section 6 validity)"
ONE_GENERATION = "39 generation-generation-ordering: one generation time"
ONE_INVALIDATION = "40 invalidation-invalidation-ordering: one invalidation time"
ONE_START = "28/31 unique-startTime: one start time"
ONE_END = "29/32 unique-endTime: one end time"
TYPED = "50 typing"
TIMED_TYPED = "50 typing (times)"
DISJOINT = "55 entity-activity-disjoint"
OVERLAP = "53/54 impossible-(object-)property-overlap"

#: What every random store exercises: guaranteed by how ``stored`` builds it (several
#: subjects, each closure superseded, a source invalidated).
ALWAYS = (START_END, USAGE_IN, GENERATION_IN, GENERATION_INVALIDATION, USAGE_INVALIDATION, REVISED, INVALIDATION_IN,
          ACYCLIC, STRICT, ONE_GENERATION, ONE_INVALIDATION, ONE_START, ONE_END, TYPED, TIMED_TYPED, DISJOINT, OVERLAP)  # fmt: skip
#: What a store whose GAF has a member exercises too: claims' times reach the GAF's closing.
WITH_FACTS = (GENERATION_USAGE, DERIVED)


@dataclass
class Findings:
    """How many instances of each constraint were checked, and every one that failed."""

    checked: Counter = field(default_factory=Counter)
    violations: list[str] = field(default_factory=list)
    #: nodes a graph that is not self-contained names without describing: typed by inference
    inferred: set[URIRef] = field(default_factory=set)

    def fail(self, constraint: str, what: str) -> None:
        self.violations.append(f"{constraint}: {what}")

    def failed(self, constraint: str) -> bool:
        return any(v.startswith(constraint + ":") for v in self.violations)


def check(g: Graph, *, self_contained: bool = True) -> Findings:
    """Every constraint this file checks, over one PROV-O graph.

    A self-contained graph (a whole store's export) must state the type constraint 50
    requires of every node a relation names. A part of one (a closure's lineage) may name
    a node it does not describe: there, as PROV-CONSTRAINTS does, the type is inferred
    from the relation, and only a contradiction (constraint 55) is a violation."""
    found = Findings()
    types = _types(g)
    _check_typing(g, types, found, self_contained)
    times = _times(g, found)
    _check_order(g, types, times, found)
    return found


# ---------------------------------------------------------------------- typing (5.3)


def _types(g: Graph) -> dict[URIRef, set[URIRef]]:
    """Each node's classes, closed under PROV-O's subclasses."""
    types: dict[URIRef, set[URIRef]] = defaultdict(set)
    for node, cls in g.subject_objects(RDF.type):
        while cls is not None:
            types[node].add(cls)
            cls = SUPERCLASS.get(cls)
    return types


def _check_typing(g: Graph, types: dict, found: Findings, self_contained: bool) -> None:
    def typed(node, cls: URIRef, constraint: str, what: str) -> None:
        found.checked[constraint] += 1
        if cls in types[node]:
            return
        if self_contained:
            found.fail(constraint, f"{what}: {node} is not a prov:{cls.fragment}")
        else:
            found.inferred.add(node)
            while cls is not None:
                types[node].add(cls)
                cls = SUPERCLASS.get(cls)

    for relation, (domain, range_) in TYPING.items():
        for s, o in g.subject_objects(relation):
            typed(s, domain, TYPED, f"{s} prov:{relation.fragment} {o}")
            typed(o, range_, TYPED, f"{s} prov:{relation.fragment} {o}")
    for prop, range_ in QUALIFIED_TYPING.items():
        for node, o in g.subject_objects(prop):
            typed(o, range_, TYPED, f"{node} prov:{prop.fragment} {o}")
    for prop, domain in TIMED.items():
        for s in g.subjects(prop):
            typed(s, domain, TIMED_TYPED, f"{s} prov:{prop.fragment}")
    for node, classes in types.items():
        if ENTITY in classes or ACTIVITY in classes:
            found.checked[DISJOINT] += 1
            if ENTITY in classes and ACTIVITY in classes:
                found.fail(DISJOINT, f"{node} is both a prov:Entity and a prov:Activity")
        relations = {RELATION_CLASSES[c] for c in classes if c in RELATION_CLASSES}
        if relations:
            found.checked[OVERLAP] += 1
            if len(relations) > 1:
                found.fail(OVERLAP, f"{node} identifies {sorted(relations)}")
            if classes & {ENTITY, ACTIVITY, AGENT}:
                found.fail(OVERLAP, f"{node} identifies both a relation and an element")


# ---------------------------------------------------------------------- times and their uniqueness (5.1)


@dataclass
class Times:
    """Each event's time, where the graph gives one: from the direct properties and the
    qualified influences' ``prov:atTime``, which must agree."""

    generated: dict[URIRef, datetime] = field(default_factory=dict)
    invalidated: dict[URIRef, datetime] = field(default_factory=dict)
    started: dict[URIRef, datetime] = field(default_factory=dict)
    ended: dict[URIRef, datetime] = field(default_factory=dict)
    #: a qualified usage's own time, by the influence node
    used: dict[URIRef, datetime] = field(default_factory=dict)


def _times(g: Graph, found: Findings) -> Times:
    said: dict[str, dict[URIRef, set[datetime]]] = {k: defaultdict(set) for k in ("generated", "invalidated", "started", "ended")}
    for kind, direct, qualified in (("generated", PROV.generatedAtTime, PROV.qualifiedGeneration),
                                    ("invalidated", PROV.invalidatedAtTime, PROV.qualifiedInvalidation),
                                    ("started", PROV.startedAtTime, PROV.qualifiedStart),
                                    ("ended", PROV.endedAtTime, PROV.qualifiedEnd)):  # fmt: skip
        for node, t in g.subject_objects(direct):
            said[kind][node].add(_instant(t))
        for node, influence in g.subject_objects(qualified):
            for t in g.objects(influence, PROV.atTime):
                said[kind][node].add(_instant(t))
    times = Times()
    for kind, name in (
        ("generated", ONE_GENERATION),
        ("invalidated", ONE_INVALIDATION),
        ("started", ONE_START),
        ("ended", ONE_END),
    ):
        for node, instants in said[kind].items():
            found.checked[name] += 1
            if len(instants) > 1:
                found.fail(name, f"{node} has {len(instants)} {kind} times: {sorted(map(str, instants))}")
            getattr(times, kind)[node] = min(instants)
    for _, usage in g.subject_objects(PROV.qualifiedUsage):
        for t in g.objects(usage, PROV.atTime):
            times.used[usage] = _instant(t)
    return times


def _instant(t: Literal) -> datetime:
    value = t.toPython()
    assert isinstance(value, datetime) and value.tzinfo is not None, f"not an xsd:dateTime with a zone: {t!r}"
    return value


# ---------------------------------------------------------------------- event ordering (5.2)


#: An event: its kind (generation, invalidation, start, end, usage) and what it is of.
Event = tuple


def _check_order(g: Graph, types: dict, times: Times, found: Findings) -> None:
    """PROV-CONSTRAINTS orders events, not times: each rule says one event precedes
    (≼) or strictly precedes (≺) another. The events are each entity's generation and
    invalidation, each activity's start and end and each usage; an event's time, where
    the graph gives one, bounds every event before and after it. So each rule is checked
    wherever the latest time known to precede its first event and the earliest time known
    to follow its second exist (directly or through other rules), and no strictly-preceding
    edge may lie on a cycle."""
    edges: list[tuple[Event, Event, bool, str, str]] = []

    def precedes(before: Event, after: Event, constraint: str, why: str, strict: bool = False) -> None:
        edges.append((before, after, strict, constraint, why))

    def gen(e):
        return ("generation", e)

    def inv(e):
        return ("invalidation", e)

    def start(a):
        return ("start", a)

    def end(a):
        return ("end", a)

    activities = {n for n, c in types.items() if ACTIVITY in c} | set(times.started) | set(times.ended)
    for a in activities:
        precedes(start(a), end(a), START_END, f"{a}")
    entities = {n for n, c in types.items() if ENTITY in c} | set(times.generated) | set(times.invalidated)
    for e in entities:
        precedes(gen(e), inv(e), GENERATION_INVALIDATION, f"{e}")

    qualified_usages = set()
    for a, usage in g.subject_objects(PROV.qualifiedUsage):
        for e in g.objects(usage, PROV.entity):
            qualified_usages.add((a, e))
            use = ("usage", usage)
            _usage(precedes, use, a, e, start, end, gen, inv)
    for a, e in g.subject_objects(PROV.used):
        if (a, e) not in qualified_usages:
            _usage(precedes, ("usage", a, e), a, e, start, end, gen, inv)

    generated_by = set(g.subject_objects(PROV.wasGeneratedBy))
    generated_by |= {(e, a) for e, q in g.subject_objects(PROV.qualifiedGeneration) for a in g.objects(q, PROV.activity)}
    for e, a in generated_by:
        precedes(start(a), gen(e), GENERATION_IN, f"{e} generated by {a}")
        precedes(gen(e), end(a), GENERATION_IN, f"{e} generated by {a}")
    invalidated_by = set(g.subject_objects(PROV.wasInvalidatedBy))
    invalidated_by |= {(e, a) for e, q in g.subject_objects(PROV.qualifiedInvalidation) for a in g.objects(q, PROV.activity)}
    for e, a in invalidated_by:
        precedes(start(a), inv(e), INVALIDATION_IN, f"{e} invalidated by {a}")
        precedes(inv(e), end(a), INVALIDATION_IN, f"{e} invalidated by {a}")
    for a2, a1 in g.subject_objects(PROV.wasInformedBy):
        precedes(start(a1), end(a2), INFORMED, f"{a2} informed by {a1}")

    derived = {(e2, e1, p) for p in DERIVATIONS for e2, e1 in g.subject_objects(p)}
    derived |= {
        (e2, e1, PROV.wasDerivedFrom) for e2, q in g.subject_objects(PROV.qualifiedDerivation) for e1 in g.objects(q, PROV.entity)
    }
    for e2, e1, p in derived:
        found.checked[ACYCLIC] += 1
        precedes(gen(e1), gen(e2), REVISED if p == PROV.wasRevisionOf else DERIVED, f"{e2} {p.fragment} {e1}", strict=True)

    for e, ag in g.subject_objects(PROV.wasAttributedTo):
        precedes(gen(ag), gen(e), ATTRIBUTED, f"{e} attributed to {ag}")
        precedes(start(ag), gen(e), ATTRIBUTED, f"{e} attributed to {ag}")
    for a, ag in g.subject_objects(PROV.wasAssociatedWith):
        precedes(start(a), inv(ag), ASSOCIATED, f"{a} associated with {ag}")
        precedes(gen(ag), end(a), ASSOCIATED, f"{a} associated with {ag}")
        precedes(start(a), end(ag), ASSOCIATED, f"{a} associated with {ag}")
        precedes(start(ag), end(a), ASSOCIATED, f"{a} associated with {ag}")
    for ag2, ag1 in g.subject_objects(PROV.actedOnBehalfOf):
        precedes(gen(ag1), inv(ag2), DELEGATED, f"{ag2} on behalf of {ag1}")
        precedes(start(ag1), end(ag2), DELEGATED, f"{ag2} on behalf of {ag1}")

    own: dict[Event, datetime] = {}
    for kind, stated in (
        ("generation", times.generated),
        ("invalidation", times.invalidated),
        ("start", times.started),
        ("end", times.ended),
    ):
        own.update({(kind, node): t for node, t in stated.items()})
    own.update({("usage", usage): t for usage, t in times.used.items()})
    earliest, latest = _bounds(edges, own)
    for before, after, strict, constraint, why in edges:
        if before in latest and after in earliest:
            found.checked[constraint] += 1
            if latest[before] > earliest[after]:
                found.fail(
                    constraint,
                    f"{why}: the {before[0]} is at or after {latest[before]}, the {after[0]} at or before {earliest[after]}",
                )
    for before, after, _, constraint, why in _on_cycles(edges):
        found.fail(ACYCLIC if constraint in (DERIVED, REVISED) else STRICT, f"{why} ({constraint}) lies on a cycle")
    found.checked[STRICT] += sum(1 for edge in edges if edge[2])


def _usage(precedes, use: Event, a, e, start, end, gen, inv) -> None:
    precedes(start(a), use, USAGE_IN, f"{a} used {e}")
    precedes(use, end(a), USAGE_IN, f"{a} used {e}")
    precedes(gen(e), use, GENERATION_USAGE, f"{a} used {e}")
    precedes(use, inv(e), USAGE_INVALIDATION, f"{a} used {e}")


def _bounds(edges, own: dict[Event, datetime]) -> tuple[dict[Event, datetime], dict[Event, datetime]]:
    """For each event, the earliest time known to follow it (its own or a later event's)
    and the latest time known to precede it: the fixpoint over the precedence edges."""
    after, before = defaultdict(list), defaultdict(list)
    for x, y, *_ in edges:
        after[x].append(y)
        before[y].append(x)

    def spread(start: dict, nexts: dict, better) -> dict:
        bound = dict(start)
        work = list(bound)
        while work:
            node = work.pop()
            for other in nexts[node]:
                if other not in bound or better(bound[node], bound[other]):
                    bound[other] = bound[node]
                    work.append(other)
        return bound

    latest = spread(own, after, lambda mine, theirs: mine > theirs)  # the latest time at or before each event
    earliest = spread(own, before, lambda mine, theirs: mine < theirs)  # the earliest time at or after it
    return earliest, latest


def _on_cycles(edges) -> list:
    """The strictly-preceding edges that lie on a cycle of the precedence graph (Tarjan's
    strongly connected components, iteratively): PROV-CONSTRAINTS' strictly-precedes is irreflexive."""
    nexts = defaultdict(list)
    for x, y, *_ in edges:
        nexts[x].append(y)
    index: dict = {}
    low: dict = {}
    component: dict = {}
    stack: list = []
    on_stack: set = set()
    counter = 0
    for root in list(nexts):
        if root in index:
            continue
        work = [(root, iter(nexts[root]))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(nexts[child])))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component[member] = node
                    if member == node:
                        break
    return [edge for edge in edges if edge[2] and component.get(edge[0], edge[0]) == component.get(edge[1], edge[1])]


# ---------------------------------------------------------------------- random stores

LATER = AT + timedelta(days=1)


def stored(store, world: LedgerWorld) -> str:
    """Write and decide the world, then change its policy (every closure is superseded:
    revisions, invalidations by the new closings) and invalidate one source (an entity
    invalidated by an activity) a little later. Returns a closure the policy change made."""
    made = materialise(store, world)
    v1 = get(store, world.policy.name, 1)
    revise(store, Projection.model_validate(world.policy.model_dump(exclude={"id"}) | {"question": "q, revised"}), at=LATER)
    changed = after_policy_change(store, v1, impact=impact, reviewer=REVIEWER_AGENT.id, at=LATER, as_of=LATER)
    assert len(changed.superseded) == len(made.closures), changed.superseded
    later = LATER + timedelta(hours=1)
    after_invalidation(store, world.sources[0].id, impact=impact, by=REVIEWER_AGENT.id, reason="withdrawn", invalid_from=LONG_AGO,
                       reviewer=REVIEWER_AGENT.id, at=later, as_of=later)  # fmt: skip
    return store.superseded_by(changed.superseded[0]["old"])[0]


#: A world whose GAF certainly holds a fact: an authoritative source affirms p0 of case:1.
WITH_A_FACT = build_ledger(
    trust=[(["p0", "p1", "p2", "p3"], True)], untrusted=1, closed=[(0, "p1")], derived=[["p0(?R)", "not p1(?R)"]],
    verdict=[{"role": "warrant", "condition": ["d0(?subject)"], "qualifier": 1.0}], defeats=[],
    claims=[(0, [("case:1", "p0", "affirmed", True)]), (1, [("case:1", "p1", "affirmed", True)])],
    subjects=["case:1", "case:2"], acted=["case:1"],
)  # fmt: skip


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(world=ledger_world())
@example(world=WITH_A_FACT)
def test_the_export_of_a_random_store_satisfies_prov_constraints(world, tmp_path):
    """The whole store's export, and a standing closure's lineage graph, on random stored
    worlds decided, reopened on a policy change and with a source invalidated."""
    with embedded(tmp_path)("prov") as store:
        standing = stored(store, world)
        out = Path(tempfile.mkdtemp(dir=tmp_path)) / "all.nt"
        stream_all(store, out)
        whole = Graph().parse(out, format="nt")
        closure = graph(lineage(store, standing))
    part = check(closure, self_contained=False)
    assert not part.violations, "\n".join(part.violations[:20])
    # A lineage may name a fact it leaves out (a reviewer's decision accepted others), but it
    # describes every agent it names: the reviewers whose decisions let its facts in among them.
    named = {o for p in (PROV.wasAttributedTo, PROV.wasAssociatedWith, PROV.agent, PROV.actedOnBehalfOf) for o in closure.objects(None, p)}
    assert {a for a in named if (a, RDF.type, AGENT) not in closure} == set()
    found = check(whole)
    assert not found.violations, "\n".join(found.violations[:20])
    fired = ALWAYS + (WITH_FACTS if any(whole.triples((None, PROV.hadMember, None))) else ())
    assert all(found.checked[c] for c in fired), {c: found.checked[c] for c in fired}
    # The same check fails the same export once something it derives from is said to derive from it.
    derived, source = next(iter(whole.subject_objects(PROV.wasDerivedFrom)))
    broken = Graph() + whole
    broken.add((source, PROV.wasDerivedFrom, derived))
    assert check(broken).failed(ACYCLIC)


# ---------------------------------------------------------------------- each check can fail

EX = Namespace("urn:ex:")

#: A small valid account: a claim generated at 08:00, weighed by an evaluation from 09:00 to
#: 10:00 that generated a fact, kept in a collection that a closing (11:00) used and that a
#: closure derives from; a later closing (12:00) revises the closure and invalidates it.
VALID = f"""
@prefix prov: <{PROV}> .
@prefix ex: <{EX}> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
ex:source a prov:Agent, prov:Entity .
ex:engine a prov:SoftwareAgent .
ex:policy a prov:Plan .
ex:claim a prov:Entity ; prov:generatedAtTime "2026-07-15T08:00:00Z"^^xsd:dateTime ; prov:wasAttributedTo ex:source .
ex:evaluation a prov:Activity ; prov:startedAtTime "2026-07-15T09:00:00Z"^^xsd:dateTime ;
    prov:endedAtTime "2026-07-15T10:00:00Z"^^xsd:dateTime ; prov:used ex:claim ;
    prov:qualifiedUsage ex:usage ; prov:wasAssociatedWith ex:engine ;
    prov:qualifiedAssociation [ a prov:Association ; prov:agent ex:engine ; prov:hadPlan ex:policy ] .
ex:usage a prov:Usage ; prov:entity ex:claim .
ex:fact a prov:Entity ; prov:wasGeneratedBy ex:evaluation ; prov:wasDerivedFrom ex:claim .
ex:gaf a prov:Collection ; prov:hadMember ex:fact ; prov:wasDerivedFrom ex:fact .
ex:closing a prov:Activity ; prov:startedAtTime "2026-07-15T11:00:00Z"^^xsd:dateTime ;
    prov:endedAtTime "2026-07-15T11:00:00Z"^^xsd:dateTime ; prov:used ex:gaf .
ex:closure a prov:Entity ; prov:wasGeneratedBy ex:closing ; prov:generatedAtTime "2026-07-15T11:00:00Z"^^xsd:dateTime ;
    prov:wasDerivedFrom ex:gaf ; prov:invalidatedAtTime "2026-07-15T12:00:00Z"^^xsd:dateTime ; prov:wasInvalidatedBy ex:reclosing .
ex:reclosing a prov:Activity ; prov:startedAtTime "2026-07-15T12:00:00Z"^^xsd:dateTime ;
    prov:endedAtTime "2026-07-15T12:00:00Z"^^xsd:dateTime .
ex:closure2 a prov:Entity ; prov:wasGeneratedBy ex:reclosing ; prov:generatedAtTime "2026-07-15T12:00:00Z"^^xsd:dateTime ;
    prov:wasRevisionOf ex:closure .
ex:judging a prov:Activity ; prov:used ex:closure .
"""


def _at(text: str) -> Literal:
    return Literal(f"2026-07-15T{text}:00Z", datatype=URIRef("http://www.w3.org/2001/XMLSchema#dateTime"))


def _qualified_generation(g: Graph) -> None:
    g.add((EX.closure, PROV.qualifiedGeneration, EX.generation))
    g.add((EX.generation, RDF.type, PROV.Generation))
    g.add((EX.generation, PROV.atTime, _at("11:30")))


#: One broken graph per constraint: what is added (or replaced) and the check that must say so.
BROKEN = {
    "the evaluation ends before it starts": (START_END, [(EX.evaluation, PROV.endedAtTime, _at("08:30"))], [(EX.evaluation, PROV.endedAtTime, None)]),
    "the claim is generated after the evaluation that used it ended": (GENERATION_USAGE, [(EX.claim, PROV.generatedAtTime, _at("10:30"))], [(EX.claim, PROV.generatedAtTime, None)]),
    "the closure is generated outside its closing": (GENERATION_IN, [(EX.closure, PROV.generatedAtTime, _at("10:59"))], [(EX.closure, PROV.generatedAtTime, None)]),
    "the closure is invalidated before it is generated": (GENERATION_INVALIDATION, [(EX.closure, PROV.invalidatedAtTime, _at("10:00"))], [(EX.closure, PROV.invalidatedAtTime, None)]),
    "the closure is used after it is invalidated": (USAGE_INVALIDATION, [(EX.judging, PROV.startedAtTime, _at("13:00"))], []),
    "a usage's own time is after its activity ended": (USAGE_IN, [(EX.usage, PROV.atTime, _at("10:30"))], []),
    "a fact is derived from a claim generated after the closure": (DERIVED, [(EX.claim, PROV.generatedAtTime, _at("11:30"))], [(EX.claim, PROV.generatedAtTime, None)]),
    "a revision is generated before what it revises": (REVISED, [(EX.closure2, PROV.generatedAtTime, _at("10:00"))], [(EX.closure2, PROV.generatedAtTime, None)]),
    "the closure is invalidated outside the activity that invalidated it": (INVALIDATION_IN, [(EX.reclosing, PROV.startedAtTime, _at("12:30")), (EX.reclosing, PROV.endedAtTime, _at("12:30")), (EX.closure2, PROV.generatedAtTime, _at("12:30"))], [(EX.reclosing, PROV.startedAtTime, None), (EX.reclosing, PROV.endedAtTime, None), (EX.closure2, PROV.generatedAtTime, None)]),
    "the claim is derived from the fact: a cycle": (ACYCLIC, [(EX.claim, PROV.wasDerivedFrom, EX.fact)], []),
    "an entity is derived from itself": (ACYCLIC, [(EX.fact, PROV.wasDerivedFrom, EX.fact)], []),
    "a revision cycle": (ACYCLIC, [(EX.closure, PROV.wasRevisionOf, EX.closure2)], []),
    "the fact is also an activity": (DISJOINT, [(EX.fact, RDF.type, PROV.Activity)], []),
    "the fact is generated by an agent": (TYPED, [(EX.fact, PROV.wasGeneratedBy, EX.engine)], []),
    "a collection's member is not an entity": (TYPED, [(EX.gaf, PROV.hadMember, EX.engine)], []),
    "a plan is an activity": (TYPED, [(EX.closing, PROV.qualifiedAssociation, EX.bad), (EX.bad, PROV.agent, EX.engine), (EX.bad, PROV.hadPlan, EX.judging)], []),
    "an activity has a generation time": (TIMED_TYPED, [(EX.judging, PROV.generatedAtTime, _at("11:00"))], []),
    "a usage is also a generation": (OVERLAP, [(EX.usage, RDF.type, PROV.Generation)], []),
    "the claim has two generation times": (ONE_GENERATION, [(EX.claim, PROV.generatedAtTime, _at("08:01"))], []),
    "a qualified generation disagrees with the generation time": (ONE_GENERATION, _qualified_generation, []),
    "the closure has two invalidation times": (ONE_INVALIDATION, [(EX.closure, PROV.invalidatedAtTime, _at("12:01"))], []),
    "the closing has two start times": (ONE_START, [(EX.closing, PROV.startedAtTime, _at("10:59"))], []),
    "the closing has two end times": (ONE_END, [(EX.closing, PROV.endedAtTime, _at("11:01"))], []),
}  # fmt: skip


def test_the_valid_account_passes_every_check_it_fires():
    found = check(Graph().parse(data=VALID, format="turtle"))
    assert not found.violations, found.violations
    assert all(found.checked[c] for c in (*ALWAYS, *WITH_FACTS)), found.checked


@pytest.mark.parametrize("what", list(BROKEN))
def test_each_check_reports_the_account_that_breaks_it(what):
    constraint, added, removed = BROKEN[what]
    g = Graph().parse(data=VALID, format="turtle")
    for triple in removed:
        g.remove(triple)
    if callable(added):
        added(g)
    else:
        for triple in added:
            g.add(triple)
    found = check(g)
    assert found.failed(constraint), (constraint, found.violations)


def test_a_part_of_an_export_may_name_what_it_does_not_describe_but_not_contradict_it():
    g = Graph().parse(data=VALID, format="turtle")
    g.add((EX.fact, PROV.wasAttributedTo, EX.reviewer))  # the reviewer is named, not described
    assert check(g).failed(TYPED)
    part = check(g, self_contained=False)
    assert not part.violations and part.inferred == {EX.reviewer}
    g.add((EX.elsewhere, PROV.used, EX.reviewer))
    g.add((EX.reviewer, PROV.wasGeneratedBy, EX.elsewhere))  # an agent, an activity and an entity, by inference
    g.add((EX.other, PROV.wasInformedBy, EX.reviewer))
    assert check(g, self_contained=False).failed(DISJOINT)
