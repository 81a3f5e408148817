"""The one mapping from gaf records to PROV-O (SPEC.md §10).

Each record maps to triples on its own — what it is (entity, activity, agent,
plan), who it is attributed to, what it used and generated, and, where a role
matters, the qualified form (the policy as the plan of an association; a usage
that "relied on the absence of claims in this closed scope"). Because no triple
needs more than one record, the whole store can be exported as a stream, and
every other serialisation (PROV-N, PROV-JSON, PROV-XML) is produced from these
same triples.

IRIs come from content ids under a configurable base — ``urn:gaf:closure-12cc…`` for
``closure:12cc…``, the kind and the hash joined by a hyphen, so that every IRI is a
qualified name PROV-N and PROV-XML accept (``id:closure-12cc…``: a local part starts with a
letter and holds no ``:``, ``#`` or ``/``) — and an export names the very closure that was
decided; each record also carries its id as ``gaf:contentHash`` and its canonical JSON as
``gaf:record``. What the records imply but do not hold — a closure's closing, a verdict's
judging, an engine, a qualified influence — gets an IRI under the same base made from the
ids it joins, never a blank node, so two exports of the same records are the same triples.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from datetime import datetime
from typing import Any

from rdflib import Literal, Namespace, URIRef
from rdflib.namespace import RDF, RDFS, XSD

from gaf import records as r
from gaf.canonical import kind_prefix
from gaf.types import format_instant

PROV = Namespace("http://www.w3.org/ns/prov#")
GAF = Namespace("https://w3id.org/gaf#")
DEFAULT_BASE = "urn:gaf:"
#: The prefix every export binds to the base: ``id:closure-12cc…``.
ID_PREFIX = "id"

Triple = tuple[Any, Any, Any]


class Mapper:
    """Maps records to triples under one IRI base."""

    def __init__(self, base: str = DEFAULT_BASE, lookup: Callable[[str], r.Record | None] | None = None):
        """``lookup`` finds a record by id (among those exported, or in the store): an accepted
        fact is derived from the claims or facts its justification used, which its own record
        does not name. Without it, a fact's lineage stops at the activity that generated it."""
        self.base = base
        self.lookup = lookup
        #: the engines named so far, by IRI: an association with one declares it
        self._engines: dict[URIRef, str] = {}

    def iri(self, record_id: str) -> URIRef:
        """A record's IRI: ``closure:12cc…`` is ``{base}closure-12cc…``."""
        return URIRef(self.base + record_id.replace(":", "-", 1))

    def implied(self, what: str, record_id: str) -> URIRef:
        """The IRI of something a record implies, named by what it is and the record's hash:
        ``{base}closing-12cc…`` for the closing of ``closure:12cc…``."""
        return URIRef(f"{self.base}{what}-{record_id.partition(':')[2]}")

    def engine(self, name: str) -> URIRef:
        """An engine by name and version: ``gaf-hcategoriser/2`` is ``{base}engine-gaf-hcategoriser.2``."""
        iri = URIRef(f"{self.base}engine-{_safe(name)}")
        self._engines[iri] = name
        return iri

    def influence(self, what: str, *between: object) -> URIRef:
        """A qualified influence's IRI, made from the IRIs it joins (and its role or plan)."""
        return URIRef(f"{self.base}{what}-{_digest(*between)}")

    def triples(self, record: r.Record) -> Iterator[Triple]:
        """Every triple one record contributes."""
        s = self.iri(record.id)
        yield s, GAF.contentHash, Literal(record.id)
        yield s, GAF.record, Literal(record.body.decode("utf-8"))
        method = getattr(self, f"_{record.KIND}", None)
        if method is None:
            yield s, RDF.type, PROV.Entity
            yield s, RDF.type, GAF.PolicyRecord
            for name, (_, kinds) in record.REFS.items():
                for ref in _refs(getattr(record, name)):
                    if kind_prefix(ref) == "agent":
                        yield s, PROV.wasAttributedTo, self.iri(ref)
            if (at := record.time()) is not None:
                yield s, PROV.generatedAtTime, _time(at)
            return
        yield from method(s, record)

    # ------------------------------------------------------------------ agents and sources

    def _agent(self, s: URIRef, a: r.Agent) -> Iterator[Triple]:
        yield s, RDF.type, PROV.Agent
        yield s, RDF.type, {"person": PROV.Person, "organisation": PROV.Organization, "software": PROV.SoftwareAgent}[a.agent_type]
        yield s, RDFS.label, Literal(a.name)
        if a.acts_for:
            yield s, PROV.actedOnBehalfOf, self.iri(a.acts_for)

    def _source(self, s: URIRef, src: r.Source) -> Iterator[Triple]:
        yield s, RDF.type, PROV.Agent
        yield s, RDF.type, PROV.Entity  # a source is also an entity, so that it can be invalidated
        yield s, RDF.type, GAF.Source
        yield s, RDFS.label, Literal(src.name)
        if src.operator:
            yield s, PROV.wasAttributedTo, self.iri(src.operator)

    def _invalidation(self, s: URIRef, i: r.SourceInvalidation) -> Iterator[Triple]:
        yield from self._activity(s, GAF.SourceInvalidation, i.recorded_at, i.recorded_at)
        yield s, PROV.wasAssociatedWith, self.iri(i.by)
        source = self.iri(i.source)
        yield source, PROV.wasInvalidatedBy, s
        yield source, PROV.invalidatedAtTime, _time(i.recorded_at)
        yield s, RDFS.comment, Literal(f"invalid from {format_instant(i.invalid_from)}: {i.reason}")

    # ------------------------------------------------------------------ claims and propositions

    def _claim(self, s: URIRef, c: r.Claim) -> Iterator[Triple]:
        yield s, RDF.type, PROV.Entity
        yield s, RDF.type, GAF.Claim
        yield s, PROV.wasAttributedTo, self.iri(c.observer)
        yield s, GAF.fromSource, self.iri(c.source)
        yield s, PROV.wasAttributedTo, self.iri(c.source)
        yield s, PROV.generatedAtTime, _time(c.recorded_at)
        for st in c.statements:
            yield s, GAF.asserts if st.polarity == "affirmed" else GAF.denies, self.iri(st.proposition().id)

    def _proposition(self, s: URIRef, p: r.Proposition) -> Iterator[Triple]:
        yield s, RDF.type, PROV.Entity
        yield s, RDF.type, GAF.Proposition
        yield s, RDFS.label, Literal(r.statement_text(p.predicate, p.subject, p.object, p.value, unit=p.unit))

    def _completeness(self, s: URIRef, d: r.CompletenessDeclaration) -> Iterator[Triple]:
        yield s, RDF.type, PROV.Entity
        yield s, RDF.type, GAF.ClosedScope
        yield s, PROV.wasAttributedTo, self.iri(d.source)
        yield s, RDFS.label, Literal(f"{d.scope_text()} complete as of {format_instant(d.as_of)}")

    # ------------------------------------------------------------------ projection

    def _projection(self, s: URIRef, p: r.Projection) -> Iterator[Triple]:
        yield from self._plan(s, GAF.ProjectionPolicy, p.ref)
        for d in p.completeness:
            yield s, GAF.declares, self.iri(d.id)
        if p.revises:
            yield s, GAF.revises, self.iri(p.revises)
            yield s, PROV.wasRevisionOf, self.iri(p.revises)
        for ref in p.ratified:
            yield s, PROV.wasDerivedFrom, self.iri(ref)

    def _evaluation(self, s: URIRef, e: r.Evaluation) -> Iterator[Triple]:
        yield from self._activity(s, GAF.Evaluation)
        yield from self._associated(s, self.engine("gaf-projection"), self.iri(e.projection))
        yield s, GAF.evaluates, self.iri(e.proposition)
        yield s, RDFS.comment, Literal(f"{e.outcome.value}: {e.reason}")
        for role, claims in ((GAF.supporting, e.supporting), (GAF.refuting, e.refuting)):
            for claim in claims:
                yield from self._used(s, self.iri(claim), role)
        for scope in e.absent_in:
            yield from self._used(s, self.iri(scope), GAF.reliedOnAbsence)

    def _derivation(self, s: URIRef, d: r.Derivation) -> Iterator[Triple]:
        yield from self._activity(s, GAF.Derivation)
        yield from self._associated(s, self.engine("gaf-projection"), self.iri(d.projection))
        yield s, GAF.concludes, self.iri(d.conclusion)
        yield s, RDFS.label, Literal(d.rule)
        for premise in d.premises:
            if kind_prefix(premise) == "evaluation":
                yield s, PROV.wasInformedBy, self.iri(premise)  # an explicit rejection it relied on
            else:
                yield from self._used(s, self.iri(premise), GAF.premise)
        for scope in d.negative_premises:
            yield from self._used(s, self.iri(scope), GAF.reliedOnAbsence)

    def _fact(self, s: URIRef, f: r.AcceptedFact) -> Iterator[Triple]:
        yield s, RDF.type, PROV.Entity
        yield s, RDF.type, GAF.AcceptedFact
        yield s, PROV.wasGeneratedBy, self.iri(f.justification)
        yield s, GAF.states, self.iri(f.proposition)
        # Lineage a standard query follows (prov:wasDerivedFrom+): from the fact to every claim its
        # evaluation weighed, or to the facts its derivation used — and from those, on down.
        justification = self.lookup(f.justification) if self.lookup else None
        if isinstance(justification, r.Evaluation):
            for claim in sorted({*justification.supporting, *justification.refuting}):
                yield s, PROV.wasDerivedFrom, self.iri(claim)
        elif isinstance(justification, r.Derivation):
            for premise in justification.premises:
                if kind_prefix(premise) == "fact":
                    yield s, PROV.wasDerivedFrom, self.iri(premise)

    def _decision(self, s: URIRef, d: r.Decision) -> Iterator[Triple]:
        yield from self._activity(s, GAF.Acceptance, d.decided_at, d.decided_at)
        yield s, PROV.wasAssociatedWith, self.iri(d.reviewer)
        yield s, RDFS.comment, Literal(d.reason)
        for fact in d.accepted:
            yield s, GAF.accepted, self.iri(fact)
            yield self.iri(fact), PROV.wasAttributedTo, self.iri(d.reviewer)  # who let it in

    def _gaf(self, s: URIRef, g: r.GAF) -> Iterator[Triple]:
        yield s, RDF.type, PROV.Entity
        yield s, RDF.type, PROV.Collection
        yield s, RDF.type, GAF.GAF
        yield s, GAF.underPolicy, self.iri(g.projection)
        for fact in g.facts:
            yield s, PROV.hadMember, self.iri(fact)
            yield s, PROV.wasDerivedFrom, self.iri(fact)  # so lineage queries walk into the snapshot
        for p in g.unresolved:
            yield s, GAF.leavesUnresolved, self.iri(p)
        for p in g.rejected:
            yield s, GAF.rejects, self.iri(p)

    # ------------------------------------------------------------------ closure and verdict

    def _rules(self, s: URIRef, rules: r.VerdictRules) -> Iterator[Triple]:
        yield from self._plan(s, GAF.VerdictRules, rules.ref)

    @staticmethod
    def _decided(s: URIRef, cls: URIRef, label: str, activity: URIRef, basis: URIRef) -> Iterator[Triple]:
        """A decision entity (a closure, a verdict): generated by its activity, derived from
        the record it decided on, which the activity used."""
        yield s, RDF.type, PROV.Entity
        yield s, RDF.type, cls
        yield s, RDFS.label, Literal(label)
        yield s, PROV.wasGeneratedBy, activity
        yield s, PROV.wasDerivedFrom, basis
        yield activity, PROV.used, basis

    def _closure(self, s: URIRef, c: r.Closure) -> Iterator[Triple]:
        closing = self.implied("closing", c.id)
        yield from self._decided(s, GAF.Closure, f"{c.question} — {c.subject}", closing, self.iri(c.gaf))
        yield s, PROV.generatedAtTime, _time(c.closed_at)
        yield from self._activity(closing, GAF.Closing, c.closed_at, c.closed_at)
        yield from self._associated(closing, self.engine(c.engine), self.iri(c.rules))
        yield s, GAF.underPolicy, self.iri(c.projection)
        for scope in c.completeness:
            yield from self._used(closing, self.iri(scope), GAF.reliedOnAbsence)
        for old in c.supersedes:
            yield s, PROV.wasRevisionOf, self.iri(old)
            yield self.iri(old), PROV.wasInvalidatedBy, closing
            yield self.iri(old), PROV.invalidatedAtTime, _time(c.closed_at)
        bundle = self.implied("bundle", c.id)
        yield bundle, RDF.type, PROV.Bundle
        yield bundle, RDF.type, PROV.Entity
        yield bundle, PROV.wasDerivedFrom, s

    def _verdict(self, s: URIRef, v: r.Verdict) -> Iterator[Triple]:
        judging = self.implied("judging", v.id)
        label = f"{v.label} ({v.strength:+g}; interval {v.low:+g} … {v.high:+g})"
        yield from self._decided(s, GAF.Verdict, label, judging, self.iri(v.closure))
        yield from self._activity(judging, GAF.VerdictComputation)
        yield judging, PROV.wasAssociatedWith, self.engine(v.engine)
        yield from self._engine(v.engine)

    # ------------------------------------------------------------------ actions

    def _action_policy(self, s: URIRef, p: r.ActionPolicy) -> Iterator[Triple]:
        yield from self._plan(s, GAF.ActionPolicy, p.ref)

    def _grant(self, s: URIRef, g: r.Grant) -> Iterator[Triple]:
        yield s, RDF.type, PROV.Entity
        yield s, RDF.type, GAF.Grant
        yield s, PROV.wasAttributedTo, self.iri(g.granted_by)
        yield s, PROV.generatedAtTime, _time(g.granted_at)
        yield s, RDFS.label, Literal(f"{g.action_kind} for {', '.join(g.subjects)}")

    def _action(self, s: URIRef, a: r.Action) -> Iterator[Triple]:
        yield from self._activity(s, GAF.Action, a.requested_at)
        yield s, RDFS.label, Literal(f"{a.action_kind} on {a.subject}")
        yield s, PROV.used, self.iri(a.verdict)
        yield from self._associated(s, self.iri(a.authorised_by), self.iri(a.policy))
        yield s, GAF.underGrant, self.iri(a.grant)
        if a.compensates:
            yield s, GAF.compensates, self.iri(a.compensates)
            yield s, PROV.wasInformedBy, self.iri(a.compensates)

    def _action_status(self, s: URIRef, st: r.ActionStatus) -> Iterator[Triple]:
        yield s, RDF.type, PROV.Entity
        yield s, RDF.type, GAF.ActionStatus
        yield s, RDFS.label, Literal(st.status.value)
        yield s, PROV.wasGeneratedBy, self.iri(st.action)
        yield s, PROV.generatedAtTime, _time(st.at)

    def _reopen(self, s: URIRef, ro: r.Reopen) -> Iterator[Triple]:
        yield from self._activity(s, GAF.Reopen, ro.at, ro.at)
        yield s, RDFS.label, Literal(ro.trigger.value)
        if ro.cause:
            yield s, GAF.triggeredBy, self.iri(ro.cause)
        for c in ro.reopened:
            yield s, GAF.reopened, self.iri(c)

    def _policy(self, s: URIRef, p: r.RatifiedPolicy) -> Iterator[Triple]:
        yield from self._plan(s, GAF.RatifiedPolicy, f"{p.name}@{p.version}")
        yield s, PROV.wasAttributedTo, self.iri(p.authority)
        yield s, PROV.generatedAtTime, _time(p.ratified_at)
        if p.candidate:
            yield s, PROV.wasDerivedFrom, self.iri(p.candidate)
        if p.revises:
            yield s, PROV.wasRevisionOf, self.iri(p.revises)

    # ------------------------------------------------------------------ shapes used above

    def _plan(self, s: URIRef, cls: URIRef, label: str) -> Iterator[Triple]:
        yield s, RDF.type, PROV.Entity
        yield s, RDF.type, PROV.Plan
        yield s, RDF.type, cls
        yield s, RDFS.label, Literal(label)

    def _activity(self, s: URIRef, cls: URIRef, start: datetime | None = None, end: datetime | None = None) -> Iterator[Triple]:
        yield s, RDF.type, PROV.Activity
        yield s, RDF.type, cls
        if start is not None:
            yield s, PROV.startedAtTime, _time(start)
        if end is not None:
            yield s, PROV.endedAtTime, _time(end)

    @staticmethod
    def _qualified(
        activity: URIRef, direct: URIRef, qualified: URIRef, influence: URIRef, target_property: URIRef, target: URIRef,
        node: URIRef, detail: tuple[URIRef, URIRef],
    ) -> Iterator[Triple]:  # fmt: skip
        """A PROV relation and its qualified form: ``activity direct target``, and the
        influence node that says the same with one more detail (a plan, a role)."""
        yield activity, direct, target
        yield activity, qualified, node
        yield node, RDF.type, influence
        yield node, target_property, target
        yield node, *detail

    def _associated(self, activity: URIRef, agent: URIRef, plan: URIRef) -> Iterator[Triple]:
        """prov:wasAssociatedWith, and its qualified form naming the plan followed."""
        node = self.influence("association", activity, agent, plan)
        yield from self._qualified(activity, PROV.wasAssociatedWith, PROV.qualifiedAssociation, PROV.Association, PROV.agent,
                                   agent, node, (PROV.hadPlan, plan))  # fmt: skip
        if (name := self._engines.get(agent)) is not None:
            yield from self._engine(name)

    def _used(self, activity: URIRef, entity: URIRef, role: URIRef) -> Iterator[Triple]:
        """prov:used, and its qualified form with the role the entity played."""
        node = self.influence("usage", activity, entity, role)
        yield from self._qualified(activity, PROV.used, PROV.qualifiedUsage, PROV.Usage, PROV.entity, entity, node,
                                   (PROV.hadRole, role))  # fmt: skip
        yield role, RDF.type, PROV.Role

    def _engine(self, name: str) -> Iterator[Triple]:
        e = self.engine(name)
        yield e, RDF.type, PROV.Agent
        yield e, RDF.type, PROV.SoftwareAgent
        yield e, RDF.type, GAF.Engine
        yield e, RDFS.label, Literal(name)


def _time(at: datetime) -> Literal:
    return Literal(format_instant(at), datatype=XSD.dateTime)


def _refs(value: Any) -> list[str]:
    if value is None:
        return []
    return [value] if isinstance(value, str) else list(value)


def _digest(*parts: object) -> str:
    """A short, deterministic name part for what some IRIs join."""
    return hashlib.sha256("\n".join(map(str, parts)).encode("utf-8")).hexdigest()[:32]


def _safe(name: str) -> str:
    """A name as an IRI's local part every PROV format accepts: letters, digits, ``-`` and
    ``_`` kept, anything else a ``.``."""
    return "".join(c if (c.isascii() and c.isalnum()) or c in "-_" else "." for c in name)
