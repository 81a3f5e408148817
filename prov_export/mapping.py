"""The one mapping from gaf records to PROV-O (SPEC.md §10).

Each record maps to triples on its own — what it is (entity, activity, agent,
plan), who it is attributed to, what it used and generated, and, where a role
matters, the qualified form (the policy as the plan of an association; a usage
that "relied on the absence of claims in this closed scope"; a claim's attribution
to its observer and to its source, told apart by type; a fact's derivation from a
claim through the evaluation that weighed it and that evaluation's usage of it).
Because no triple needs more than one record (an accepted fact also reads its
justification, through ``lookup``), the whole store can be exported as a stream, and
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
from functools import lru_cache
from itertools import chain
from typing import Any

from rdflib import Literal, Namespace, URIRef
from rdflib import namespace as _rdflib
from rdflib.term import _is_valid_uri

from gaf import records as r
from gaf.canonical import kind_prefix
from gaf.errors import ExportError
from gaf.types import format_instant


class _Namespace(Namespace):
    """A namespace whose terms are made once: after its first use ``PROV.used`` is an
    attribute, not a new, checked URIRef (rdflib makes one on every access, which the
    mapper, at a dozen terms a record, would pay millions of times in a store's export)."""

    def __getattr__(self, name: str) -> URIRef:
        if name.startswith("__"):
            raise AttributeError(name)
        term = self.term(name)
        self.__dict__[name] = term
        return term


class _Defined:
    """rdflib's RDF, RDFS and XSD, each term looked up once (their attribute access is a
    metaclass call every time)."""

    def __init__(self, namespace: Any):
        self._namespace = namespace

    def __getattr__(self, name: str) -> URIRef:
        term: URIRef = getattr(self._namespace, name)
        setattr(self, name, term)
        return term


PROV = _Namespace("http://www.w3.org/ns/prov#")
GAF = _Namespace("https://w3id.org/gaf#")
RDF, RDFS, XSD = _Defined(_rdflib.RDF), _Defined(_rdflib.RDFS), _Defined(_rdflib.XSD)
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
        if not _is_valid_uri(base):
            raise ExportError(f"not an IRI base: {base!r}", hint="an absolute IRI without spaces, quotes or <>, e.g. urn:gaf: or https://gaf.example.org/")
        self.base = base
        self.lookup = lookup
        #: the engines named so far, by IRI: an association with one declares it
        self._engines: dict[URIRef, str] = {}
        self._engine_iris: dict[str, URIRef] = {}

    def iri(self, record_id: str) -> URIRef:
        """A record's IRI: ``closure:12cc…`` is ``{base}closure-12cc…``."""
        return _iri(self.base + record_id.replace(":", "-", 1))

    def implied(self, what: str, record_id: str) -> URIRef:
        """The IRI of something a record implies, named by what it is and the record's hash:
        ``{base}closing-12cc…`` for the closing of ``closure:12cc…``."""
        return _iri(f"{self.base}{what}-{record_id.partition(':')[2]}")

    def engine(self, name: str) -> URIRef:
        """An engine by name and version: ``gaf-hcategoriser/2`` is ``{base}engine-gaf-hcategoriser.2``."""
        iri = self._engine_iris.get(name)
        if iri is None:  # once per engine: every evaluation and derivation names the projection's
            iri = self._engine_iris[name] = URIRef(f"{self.base}engine-{_safe(name)}")
            self._engines[iri] = name
        return iri

    def influence(self, what: str, *between: str) -> URIRef:
        """A qualified influence's IRI, made from the IRIs it joins (and its role or plan)."""
        return _iri(f"{self.base}{what}-{_digest(*between)}")

    def triples(self, record: r.Record) -> Iterator[Triple]:
        """Every triple one record contributes: ``bundled`` and ``beside`` together."""
        return chain(self.bundled(record), self.beside(record))

    def beside(self, record: r.Record) -> Iterator[Triple]:
        """What a record states about closures from outside them, in a dataset's default graph:
        a closure is a ``prov:Bundle`` (its IRI names the graph of what it rests on), and it is
        a revision of the closures it supersedes. Kept out of the bundle, so that a closure's
        bundle never changes after it is made."""
        if isinstance(record, r.Closure):
            yield from self._revisions(self.iri(record.id), record)

    def bundled(self, record: r.Record) -> Iterator[Triple]:
        """The triples a record states about itself, in a bundle that holds it (or in the
        default graph, when none does)."""
        s = self.iri(record.id)
        yield s, GAF.contentHash, _plain(record.id)
        yield s, GAF.record, _plain(record.body.decode("utf-8"))
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
        yield s, RDFS.label, _plain(a.name)
        if a.acts_for:
            yield s, PROV.actedOnBehalfOf, self.iri(a.acts_for)

    def _source(self, s: URIRef, src: r.Source) -> Iterator[Triple]:
        yield s, RDF.type, PROV.Agent
        yield s, RDF.type, PROV.Entity  # a source is also an entity, so that it can be invalidated
        yield s, RDF.type, GAF.Source
        yield s, RDFS.label, _plain(src.name)
        if src.operator:
            yield s, PROV.wasAttributedTo, self.iri(src.operator)

    def _invalidation(self, s: URIRef, i: r.SourceInvalidation) -> Iterator[Triple]:
        yield from self._activity(s, GAF.SourceInvalidation, i.recorded_at, i.recorded_at)
        yield s, PROV.wasAssociatedWith, self.iri(i.by)
        source = self.iri(i.source)
        yield source, PROV.wasInvalidatedBy, s
        yield source, PROV.invalidatedAtTime, _time(i.recorded_at)
        yield s, RDFS.comment, _plain(f"invalid from {format_instant(i.invalid_from)}: {i.reason}")

    def _run_invalidation(self, s: URIRef, i: r.RunInvalidation) -> Iterator[Triple]:
        """A pipeline run declared wrong: an activity that invalidated every claim it voids."""
        yield from self._activity(s, GAF.RunInvalidation, i.recorded_at, i.recorded_at)
        yield s, PROV.wasAssociatedWith, self.iri(i.by)
        for claim in i.claims:
            yield self.iri(claim), PROV.wasInvalidatedBy, s
            yield self.iri(claim), PROV.invalidatedAtTime, _time(i.recorded_at)
        for claim in i.evidence:
            yield from self._used(s, self.iri(claim), GAF.evidence)
        yield s, RDFS.comment, _plain(f"{i.run} ({i.why}; wrote {', '.join(i.wrote) or 'nothing'}): {i.reason}")

    # ------------------------------------------------------------------ claims and propositions

    def _claim(self, s: URIRef, c: r.Claim) -> Iterator[Triple]:
        yield s, RDF.type, PROV.Entity
        yield s, RDF.type, GAF.Claim
        yield from self._attributed(s, self.iri(c.observer), GAF.ObserverAttribution)
        yield s, GAF.fromSource, self.iri(c.source)
        yield from self._attributed(s, self.iri(c.source), GAF.SourceAttribution)
        yield s, PROV.generatedAtTime, _time(c.recorded_at)
        for st in c.statements:
            yield s, GAF.asserts if st.polarity == "affirmed" else GAF.denies, self.iri(st.proposition_id())
        if c.scope == "openlineage":
            yield from self._pipeline(s, c)

    def pipeline_node(self, what: str, key: str) -> URIRef:
        """A run, job or dataset an OpenLineage report names, by its key (``run:<runId>``,
        ``job:<ns>/<name>``, ``dataset:<ns>/<name>``): ``{base}dataset-<digest of the key>``."""
        return _iri(f"{self.base}{what}-{_digest(key)}")

    def _pipeline(self, s: URIRef, c: r.Claim) -> Iterator[Triple]:
        """What an OpenLineage report says of its pipeline (docs/openlineage.md): each run a
        ``prov:Activity`` (``gaf:PipelineRun``) associated with the producer under its job's plan
        (``prov:Plan``, ``gaf:PipelineJob``); each dataset a ``prov:Entity`` (``gaf:Dataset``) the run
        used (read, role ``gaf:input``) or that it generated (wrote); the claim ``gaf:reportsOn``
        the run and ``prov:wasDerivedFrom`` each dataset the run wrote, so a walk goes from a
        verdict's claims through the runs to the datasets they read."""
        for st in c.statements:
            if not st.subject.startswith("run:") or st.object is None:
                continue
            run = self.pipeline_node("run", st.subject)
            if st.predicate == "of_job":
                job = self.pipeline_node("job", st.object)
                yield from self._activity(run, GAF.PipelineRun)
                yield run, RDFS.label, _plain(st.subject)
                yield job, RDF.type, PROV.Entity
                yield job, RDF.type, PROV.Plan
                yield job, RDF.type, GAF.PipelineJob
                yield job, RDFS.label, _plain(st.object)
                yield from self._associated(run, self.iri(c.observer), (PROV.hadPlan, job))
                yield s, GAF.reportsOn, run
            elif st.predicate in ("read", "wrote"):
                data = self.pipeline_node("dataset", st.object)
                yield data, RDF.type, PROV.Entity
                yield data, RDF.type, GAF.Dataset
                yield data, RDFS.label, _plain(st.object)
                if st.predicate == "read":
                    yield from self._used(run, data, GAF.input)
                else:
                    yield data, PROV.wasGeneratedBy, run
                    yield s, PROV.wasDerivedFrom, data

    def _proposition(self, s: URIRef, p: r.Proposition) -> Iterator[Triple]:
        yield s, RDF.type, PROV.Entity
        yield s, RDF.type, GAF.Proposition
        yield s, RDFS.label, _plain(r.statement_text(p.predicate, p.subject, p.object, p.value, unit=p.unit))

    def _completeness(self, s: URIRef, d: r.CompletenessDeclaration) -> Iterator[Triple]:
        yield s, RDF.type, PROV.Entity
        yield s, RDF.type, GAF.ClosedScope
        yield s, PROV.wasAttributedTo, self.iri(d.source)
        yield s, RDFS.label, _plain(f"{d.scope_text()} complete as of {format_instant(d.as_of)}")

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
        yield from self._associated(s, self.engine("gaf-projection"), (PROV.hadPlan, self.iri(e.projection)))
        yield s, GAF.evaluates, self.iri(e.proposition)
        yield s, RDFS.comment, _plain(f"{e.outcome.value}: {e.reason}")
        for ref, role in _inputs(e):
            yield from self._used(s, self.iri(ref), role)

    def _derivation(self, s: URIRef, d: r.Derivation) -> Iterator[Triple]:
        yield from self._activity(s, GAF.Derivation)
        yield from self._associated(s, self.engine("gaf-projection"), (PROV.hadPlan, self.iri(d.projection)))
        yield s, GAF.concludes, self.iri(d.conclusion)
        yield s, RDFS.label, _plain(d.rule)
        for premise in d.premises:
            if kind_prefix(premise) == "evaluation":
                yield s, PROV.wasInformedBy, self.iri(premise)  # an explicit rejection it relied on
        for ref, role in _inputs(d):
            yield from self._used(s, self.iri(ref), role)

    def _fact(self, s: URIRef, f: r.AcceptedFact) -> Iterator[Triple]:
        yield s, RDF.type, PROV.Entity
        yield s, RDF.type, GAF.AcceptedFact
        yield s, PROV.wasGeneratedBy, self.iri(f.justification)
        yield s, GAF.states, self.iri(f.proposition)
        # Lineage a standard query follows (prov:wasDerivedFrom+): from the fact to everything the
        # activity that generated it used — its evaluation's claims, its derivation's premise facts,
        # and the closed scopes either relied on — and from those, on down.
        justification = self.lookup(f.justification) if self.lookup else None
        if isinstance(justification, (r.Evaluation, r.Derivation)):
            activity = self.iri(f.justification)
            for ref, role in _inputs(justification):
                yield from self._derived(s, self.iri(ref), activity, role)

    def _decision(self, s: URIRef, d: r.Decision) -> Iterator[Triple]:
        yield from self._activity(s, GAF.Acceptance, d.decided_at, d.decided_at)
        reviewer = self.iri(d.reviewer)
        yield from self._associated(s, reviewer, (PROV.hadRole, GAF.reviewer))
        yield GAF.reviewer, RDF.type, PROV.Role
        yield s, RDFS.comment, _plain(d.reason)
        for fact in d.accepted:
            yield s, GAF.accepted, self.iri(fact)
            yield from self._attributed(self.iri(fact), reviewer, GAF.ReviewerAttribution)  # who let it in

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
        yield s, RDFS.label, _plain(label)
        yield s, PROV.wasGeneratedBy, activity
        yield s, PROV.wasDerivedFrom, basis
        yield activity, PROV.used, basis

    def _closure(self, s: URIRef, c: r.Closure) -> Iterator[Triple]:
        closing = self.implied("closing", c.id)
        yield from self._decided(s, GAF.Closure, f"{c.question} — {c.subject}", closing, self.iri(c.gaf))
        yield s, PROV.generatedAtTime, _time(c.closed_at)
        yield from self._activity(closing, GAF.Closing, c.closed_at, c.closed_at)
        yield from self._associated(closing, self.engine(c.engine), (PROV.hadPlan, self.iri(c.rules)))
        yield s, GAF.underPolicy, self.iri(c.projection)
        for scope in c.completeness:
            yield from self._used(closing, self.iri(scope), GAF.reliedOnAbsence)
        for exclusion in c.excluded:
            yield s, GAF.listsExclusion, self.iri(exclusion)

    def _revisions(self, s: URIRef, c: r.Closure) -> Iterator[Triple]:
        """A closure as a bundle, and as a revision of each closure it supersedes: its closing used
        the old closure (in the role superseded) and invalidated it, and the revision is qualified
        with that activity and usage (the reopen that led to it informed the closing: ``_reopen``)."""
        yield s, RDF.type, PROV.Bundle
        closing = self.implied("closing", c.id)
        for old in c.supersedes:
            previous = self.iri(old)
            yield from self._used(closing, previous, GAF.superseded)
            usage = self._usage(closing, previous, GAF.superseded)
            yield from self._qualified(s, PROV.wasRevisionOf, previous, PROV.qualifiedRevision,
                                       self.influence("revision", s, previous), PROV.Revision,
                                       (PROV.entity, previous), (PROV.hadActivity, closing), (PROV.hadUsage, usage))  # fmt: skip
            yield previous, PROV.wasInvalidatedBy, closing
            yield previous, PROV.invalidatedAtTime, _time(c.closed_at)

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
        yield s, RDFS.label, _plain(f"{g.action_kind} for {', '.join(g.subjects)}")

    def _action(self, s: URIRef, a: r.Action) -> Iterator[Triple]:
        yield from self._activity(s, GAF.Action, a.requested_at)
        yield s, RDFS.label, _plain(f"{a.action_kind} on {a.subject}")
        yield s, PROV.used, self.iri(a.verdict)
        yield from self._associated(s, self.iri(a.authorised_by), (PROV.hadPlan, self.iri(a.policy)))
        yield s, GAF.underGrant, self.iri(a.grant)
        if a.compensates:
            yield s, GAF.compensates, self.iri(a.compensates)
            yield s, PROV.wasInformedBy, self.iri(a.compensates)

    def _action_status(self, s: URIRef, st: r.ActionStatus) -> Iterator[Triple]:
        yield s, RDF.type, PROV.Entity
        yield s, RDF.type, GAF.ActionStatus
        yield s, RDFS.label, _plain(st.status.value)
        yield s, PROV.wasGeneratedBy, self.iri(st.action)
        yield s, PROV.generatedAtTime, _time(st.at)

    def _reopen(self, s: URIRef, ro: r.Reopen) -> Iterator[Triple]:
        """The reopen as an activity: it used what triggered it (an invalidation, itself an
        activity, informed it), used each closure it reopened, and informed the closing of each
        closure that superseded one; the impact it found is named, record by record."""
        yield from self._activity(s, GAF.Reopen, ro.at, ro.at)
        yield s, RDFS.label, _plain(ro.trigger.value)
        if ro.reason:
            yield s, RDFS.comment, _plain(ro.reason)
        if ro.cause:
            cause = self.iri(ro.cause)
            yield s, GAF.triggeredBy, cause
            if kind_prefix(ro.cause) in ("invalidation", "run_invalidation"):
                yield s, PROV.wasInformedBy, cause
            else:
                yield from self._used(s, cause, GAF.trigger)
        for c in ro.reopened:
            yield s, GAF.reopened, self.iri(c)
            yield from self._used(s, self.iri(c), GAF.reopenedClosure)
        for c in ro.superseding:
            yield self.implied("closing", c), PROV.wasInformedBy, s
        for ref in ro.impact:
            yield s, GAF.foundImpact, self.iri(ref)

    def _exclusion(self, s: URIRef, x: r.Exclusion) -> Iterator[Triple]:
        """A claim the policy read and did not admit as evidence for a proposition, and why."""
        yield s, RDF.type, PROV.Entity
        yield s, RDF.type, GAF.Exclusion
        yield s, GAF.excludes, self.iri(x.claim)
        yield s, GAF.excludedFrom, self.iri(x.proposition)
        yield s, GAF.underPolicy, self.iri(x.projection)
        yield s, RDFS.comment, _plain(x.reason)

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
        yield s, RDFS.label, _plain(label)

    def _activity(self, s: URIRef, cls: URIRef, start: datetime | None = None, end: datetime | None = None) -> Iterator[Triple]:
        yield s, RDF.type, PROV.Activity
        yield s, RDF.type, cls
        if start is not None:
            yield s, PROV.startedAtTime, _time(start)
        if end is not None:
            yield s, PROV.endedAtTime, _time(end)

    @staticmethod
    def _qualified(
        subject: URIRef, direct: URIRef, target: URIRef, qualified: URIRef, node: URIRef, influence: URIRef,
        *details: tuple[URIRef, URIRef],
    ) -> Iterator[Triple]:  # fmt: skip
        """A PROV relation and its qualified form: ``subject direct target``, and the
        influence node that says the same with more (the target, then a plan, a role, an activity)."""
        yield subject, direct, target
        yield subject, qualified, node
        yield node, RDF.type, influence
        for detail in details:
            yield node, *detail

    def _associated(self, activity: URIRef, agent: URIRef, detail: tuple[URIRef, URIRef]) -> Iterator[Triple]:
        """prov:wasAssociatedWith, and its qualified form naming the plan followed
        (``prov:hadPlan``) or the role the agent played (``prov:hadRole``)."""
        node = self.influence("association", activity, agent, detail[1])
        yield from self._qualified(activity, PROV.wasAssociatedWith, agent, PROV.qualifiedAssociation, node, PROV.Association,
                                   (PROV.agent, agent), detail)  # fmt: skip
        if (name := self._engines.get(agent)) is not None:
            yield from self._engine(name)

    def _attributed(self, entity: URIRef, agent: URIRef, kind: URIRef) -> Iterator[Triple]:
        """prov:wasAttributedTo, and its qualified form typed with the capacity the agent
        answers for the entity in (observer, source, reviewer). A type, not a role: PROV-O
        gives ``prov:hadRole`` to usages, generations, associations, starts and ends only, and
        PROV-DM an attribution no ``prov:role`` — but any relation a ``prov:type``."""
        node = self.influence("attribution", entity, agent, kind)
        yield from self._qualified(entity, PROV.wasAttributedTo, agent, PROV.qualifiedAttribution, node, PROV.Attribution,
                                   (PROV.agent, agent), (RDF.type, kind))  # fmt: skip

    def _usage(self, activity: URIRef, entity: URIRef, role: URIRef) -> URIRef:
        """The IRI of an activity's qualified usage of an entity in a role: made where the
        activity is mapped, and named again by a derivation through it."""
        return self.influence("usage", activity, entity, role)

    def _used(self, activity: URIRef, entity: URIRef, role: URIRef) -> Iterator[Triple]:
        """prov:used, and its qualified form with the role the entity played."""
        yield from self._qualified(activity, PROV.used, entity, PROV.qualifiedUsage, self._usage(activity, entity, role),
                                   PROV.Usage, (PROV.entity, entity), (PROV.hadRole, role))  # fmt: skip
        yield role, RDF.type, PROV.Role

    def _derived(self, entity: URIRef, source: URIRef, activity: URIRef, role: URIRef) -> Iterator[Triple]:
        """prov:wasDerivedFrom, and its qualified form naming the activity that generated the
        entity and its usage of the source, whose ``prov:hadRole`` says how the source counted
        (the derivation carries none: PROV-O gives a role to the usage, not the derivation)."""
        usage = self._usage(activity, source, role)
        node = self.influence("derivation", entity, source, usage)
        yield from self._qualified(entity, PROV.wasDerivedFrom, source, PROV.qualifiedDerivation, node, PROV.Derivation,
                                   (PROV.entity, source), (PROV.hadActivity, activity), (PROV.hadUsage, usage))  # fmt: skip

    def _engine(self, name: str) -> Iterator[Triple]:
        e = self.engine(name)
        yield e, RDF.type, PROV.Agent
        yield e, RDF.type, PROV.SoftwareAgent
        yield e, RDF.type, GAF.Engine
        yield e, RDFS.label, _plain(name)


def _iri(value: str) -> URIRef:
    """An IRI made of the checked base and a record id's kind and hex hash (or an implied
    node's name): valid by construction, so rdflib's check of every character is skipped."""
    return str.__new__(URIRef, value)


def _plain(text: str) -> Literal:
    """A plain literal (xsd:string): what ``Literal(text)`` makes — a string's lexical form is
    itself, and so is its value — without rdflib's datatype checks and conversions, which cost
    more than the rest of a triple (a record has two plain literals or more: its id and its
    canonical JSON)."""
    return _made(text, None, text, None)


def _made(lexical: str, datatype: URIRef | None, value: Any, ill_typed: bool | None) -> Literal:
    """A literal with its parts set as rdflib's constructor would set them, without running it:
    ``_plain`` and ``_time`` say which parts, and their tests hold them to rdflib's own."""
    literal = str.__new__(Literal, lexical)
    literal._language = None
    literal._datatype = datatype
    literal._value = value
    literal._ill_typed = ill_typed
    return literal


@lru_cache(maxsize=4096)
def _time(at: datetime) -> Literal:
    """A time as xsd:dateTime, the very literal ``Literal(format_instant(at), datatype=XSD.dateTime)``
    is — rdflib normalises the lexical form to its value's ``isoformat()`` (``…T09:30:00+00:00``,
    ``….123000+00:00``) — made without rdflib's parsing and casting, which cost more than the
    rest of the record's triples (a test holds the two alike over random times). A year before
    1000, which ``format_instant`` writes with fewer than four digits, goes through rdflib."""
    lexical = format_instant(at)
    if at.year < 1000:
        return Literal(lexical, datatype=XSD.dateTime)
    value = datetime.fromisoformat(lexical[:-1] + "+00:00")
    return _made(value.isoformat(), XSD.dateTime, value, False)


def _inputs(activity: r.Evaluation | r.Derivation) -> Iterator[tuple[str, URIRef]]:
    """What an evaluation or a derivation used, each with its role: the claims it weighed
    (supporting, refuting) or the facts it reasoned from (premise), and the closed scopes in
    which it relied on the absence of claims. The activity's usages and the derivations of
    the fact it generates are both made from this one list, so they name the same usages."""
    if isinstance(activity, r.Evaluation):
        yield from ((claim, GAF.supporting) for claim in activity.supporting)
        yield from ((claim, GAF.refuting) for claim in activity.refuting)
        scopes = activity.absent_in
    else:
        yield from ((p, GAF.premise) for p in activity.premises if kind_prefix(p) != "evaluation")  # a rejection informs, is not used
        scopes = activity.negative_premises
    yield from ((scope, GAF.reliedOnAbsence) for scope in scopes)


def _refs(value: Any) -> list[str]:
    if value is None:
        return []
    return [value] if isinstance(value, str) else list(value)


def _digest(*parts: str) -> str:
    """A short, deterministic name part for what some IRIs join."""
    return hashlib.sha256("\n".join(parts).encode("utf-8")).hexdigest()[:32]


def _safe(name: str) -> str:
    """A name as an IRI's local part every PROV format accepts: letters, digits, ``-`` and
    ``_`` kept, anything else a ``.``."""
    return "".join(c if (c.isascii() and c.isalnum()) or c in "-_" else "." for c in name)
