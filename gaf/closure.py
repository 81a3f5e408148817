"""Closure and replay: freeze a decision, compute its verdict, and recompute it later.

A closure is the replay contract of a decision: the GAF it judged, the question,
subject and time, the projection policy and the verdict rules by id and version,
the completeness declarations and how absence and uncertainty were treated, the
engine and its runtime conditions, and the canonicalisation that identifies all
of it. ``close`` writes the closure and its verdict in one transaction.
``replay`` recomputes the GAF and the verdict from what is stored and says
"identical", or names the layer that differs — inputs, projection policy,
accepted facts, rules, or runtime/engine — because "it changed" cannot be fixed
but "the rules changed" can.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any

from gaf.canonical import CANONICALISATION
from gaf.derive import Entry, LimitHit, Truth, limits_of, show
from gaf.errors import GafError, InvalidRecord, UnknownReference
from gaf.policies import check_established
from gaf.projection import IMPLEMENTATION, Evaluated, PolicyFacts, evaluate, ground_of, program_of
from gaf.projection.cone import cone_of
from gaf.records import (
    GAF,
    AcceptedFact,
    Closure,
    LimitReached,
    LogEntry,
    Projection,
    Proposition,
    Record,
    Verdict,
    VerdictRules,
    matches_pattern,
)
from gaf.signing import sign
from gaf.store.base import GafStore
from gaf.types import Interval, Progress, format_instant, no_progress
from gaf.verdict import ENGINE, Judgement, judge

if TYPE_CHECKING:  # cryptography is optional (gaf[signing])
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey


@dataclass
class Closed:
    """A closure, its verdict, and the judgement with its readable trace."""

    closure: Closure
    verdict: Verdict
    judgement: Judgement


def gaf_facts(store: GafStore, gaf: GAF, policy: Projection, as_of: datetime) -> tuple[PolicyFacts, dict[str, Proposition]]:
    """The GAF as a fact base: accepted facts true, unresolved unknown, rejected false."""
    found = store.get_many(gaf.facts)
    # Not a write to refuse (dangling): a stored GAF naming facts the store lacks is a damaged store, said by the GAF's id.
    missing = sorted(set(gaf.facts) - found.keys())
    if missing:
        raise UnknownReference(f"GAF {gaf.id} lists facts that are not stored: {', '.join(missing[:3])}", where=gaf.id)
    facts = store.get_many(gaf.facts, AcceptedFact)
    prop_ids = {f.proposition for f in facts.values()} | set(gaf.unresolved) | set(gaf.rejected)
    props = store.get_many(prop_ids, Proposition)
    entries = [Entry(ground_of(props[f.proposition]), Truth.TRUE, f.id) for f in facts.values()]
    entries += [Entry(ground_of(props[p]), Truth.UNKNOWN, p) for p in gaf.unresolved]
    entries += [Entry(ground_of(props[p]), Truth.FALSE, p) for p in gaf.rejected]
    return PolicyFacts(policy, entries, as_of), props


def close(  # boilerplate: a keyword-only signature, one parameter a line, as act() has
    store: GafStore,
    gaf_id: str,
    rules: VerdictRules,
    *,
    subject: str,
    as_of: datetime,
    closed_at: datetime,
    question: str | None = None,
    purpose: str | None = None,
    event: str | None = None,
    period: Interval | None = None,
    supersedes: list[str] | None = None,
    signing_key: Ed25519PrivateKey | None = None,
    progress: Progress = no_progress,
) -> Closed:
    """Freeze a GAF into a closure, judge it, and write both in one transaction.

    ``as_of`` is the transaction time the GAF was projected at (replay projects
    again at that time); ``closed_at`` is when the closure is made. Given a
    ``signing_key`` (``gaf.signing.private_key``), the closure is signed.
    """
    gaf = store.get(gaf_id)
    if not isinstance(gaf, GAF):
        raise UnknownReference(f"no GAF {gaf_id} in {store.location}", hint="project first; gaf project prints the GAF id")
    policy = store.get(gaf.projection, Projection)
    check_established(rules, policy)  # a condition nothing can make true is refused, not closed to "undetermined"
    if policy.scope.subjects and not any(matches_pattern(p, subject) for p in policy.scope.subjects):
        raise InvalidRecord(
            f"subject {subject!r} is outside the scope of {policy.ref} ({', '.join(policy.scope.subjects)})",
            hint="a policy's rules are complete only inside its scope; project under a policy that covers the subject",
        )
    evaluated = evaluate(store, policy, as_of=as_of, progress=progress)
    projected = _reprojected(evaluated, gaf)
    if projected.id != gaf.id:
        raise InvalidRecord(
            f"GAF {gaf.id} is not what {policy.ref} projects as of {format_instant(as_of)} (that is {projected.id})",
            where=gaf.id,
            hint="close a GAF at the as-of it was projected at (replay projects again at that time), or project again",
        )
    progress("reading the GAF's facts", len(gaf.facts), len(gaf.facts))
    facts, props = gaf_facts(store, gaf, policy, as_of)
    progress("judging", 0, None)
    judgement = _judge(rules, facts, subject, policy, gaf, props)
    closure = Closure(
        question=question or policy.question,
        purpose=purpose if purpose is not None else policy.purpose,
        subject=subject,
        event=event,
        period=period or policy.scope.period,
        as_of=as_of,
        gaf=gaf.id,
        completeness=sorted(d.id for d in facts.declarations),
        projection=policy.id,
        projection_version=policy.version,
        implementation=IMPLEMENTATION,
        rules=rules.id,
        rules_version=rules.version,
        engine=judgement.engine,
        bands=rules.bands,
        default_label=rules.default_label,
        canonicalisation=CANONICALISATION,
        supersedes=sorted(supersedes or []),
        excluded=[ex.id for ex in evaluated.exclusions],
        ignored_completeness=facts.ignored,
        limits=_limits_reached(subject, evaluated.conclusions.limits, [*facts.limits, *judgement.limits]),
        closed_at=closed_at,
    )
    if signing_key is not None:
        closure = sign(closure, signing_key)  # the id is the same either way
    verdict = _verdict_record(closure, judgement)
    # The exclusions were written with the GAF by ``accept``; written again here (a
    # no-op then) so a closure never points at a record that is not stored.
    # The cone is recorded with the closure, so impact finds the closure by what it reads.
    progress("writing the closure", 1, 1)
    store.put([rules, *evaluated.exclusions, closure, cone_of(closure, policy, rules), verdict], at=closed_at)
    return Closed(closure, verdict, judgement)


#: The most limits hit a closure lists; past that, the last entry counts the rest.
LIMITS_RECORDED = 100


def _limits_reached(subject: str, projected: Sequence[LimitHit], judged: Sequence[LimitHit]) -> list[LimitReached]:
    """The limits hit that a closure records: the projection's about its subject (a rule bound to
    it: ``gaf project`` says every one, for every subject) and every one hit judging it, at most
    ``LIMITS_RECORDED``, so a closure stays under the record size limit however many there are."""
    hits = limits_of([*(hit for hit in projected if any(value == subject for _, value in hit.bindings)), *judged])
    shown = hits[: LIMITS_RECORDED - 1] if len(hits) > LIMITS_RECORDED else hits
    listed = [LimitReached(rule=hit.rule, bindings=dict(hit.bindings), propositions=hit.propositions, limit=hit.limit,
                           reason=hit.text()) for hit in shown]  # fmt: skip
    if len(hits) > LIMITS_RECORDED:
        rest = hits[LIMITS_RECORDED - 1 :]
        listed.append(LimitReached(rule=f"{len(rest)} more", propositions=max(h.propositions for h in rest), limit=rest[0].limit,
                                   reason=f"and {len(rest)} more limits hit: gaf project lists every one"))  # fmt: skip
    return listed


def _reprojected(evaluated: Evaluated, gaf: GAF) -> GAF:
    """The GAF this evaluation gives for the facts a stored GAF accepted (those still candidates)."""
    candidate_ids = {c.id for c in evaluated.candidates}
    return evaluated.gaf([f for f in gaf.facts if f in candidate_ids])


def _verdict_record(closure: Closure, j: Judgement) -> Verdict:
    return Verdict(closure=closure.id, label=j.label, strength=j.strength, low=j.low, high=j.high, engine=j.engine, trace=j.trace())


def _judge(rules: VerdictRules, facts: PolicyFacts, subject: str, policy: Projection, gaf: GAF, props: dict[str, Proposition]) -> Judgement:
    judgement = judge(rules, facts, subject=subject)
    if not judgement.settles:
        return judgement
    # An unknown derived premise is settled by the unresolved claims-level facts beneath it.
    beneath = program_of(policy).beneath({s.split("(", 1)[0] for s in judgement.settles})
    extra = sorted(show(ground_of(props[p])) for p in gaf.unresolved if props[p].predicate in beneath)
    return replace(judgement, settles=tuple(sorted(set(judgement.settles) | set(extra))))


# ---------------------------------------------------------------------- what a closure rests on


@dataclass(frozen=True)
class Evidence:
    """The records a closure rests on, by id: what its GAF was made of and what weighed it —
    the GAF, its facts and their justifications, every evaluation of its propositions
    (accepted, rejected and unknown) with the claims each weighed, the claims the policy read
    and excluded (the closure's exclusions), derivations, the propositions, the completeness
    declarations relied on, the projection policy and the rules. Nothing made after the
    closure (verdicts, actions, reopens), and nothing of another closure.

    ``reproduced`` says whether evaluating the policy again at the closure's as-of gave its
    GAF: the evaluations of rejected and unknown propositions are not referenced by any
    record, and are found only that way. When it did not (``gaf replay`` names why), the
    evidence is what the stored records reference."""

    closure: str
    ids: frozenset[str]
    reproduced: bool


#: the kinds of record a closure's evidence reaches down to from what it names
_BENEATH = frozenset({"claim", "proposition", "completeness", "evaluation", "derivation", "fact", "source", "agent", "exclusion"})


def evidence(store: GafStore, closure_id: str) -> Evidence:
    """What ``closure_id`` rests on (see ``Evidence``)."""
    closure = store.get(closure_id)
    if not isinstance(closure, Closure):
        raise UnknownReference(f"no closure {closure_id} in {store.location}", hint="gaf history SUBJECT lists closures")
    gaf = store.get(closure.gaf, GAF)
    policy = store.get(closure.projection, Projection)
    ids = {closure.id, gaf.id, policy.id, closure.rules, *closure.completeness, *closure.excluded, *gaf.facts, *gaf.derivations,
           *gaf.unresolved, *gaf.rejected}  # fmt: skip
    facts = store.get_many(gaf.facts, AcceptedFact)
    ids |= {f.justification for f in facts.values()} | {f.proposition for f in facts.values()}
    evaluated = evaluate(store, policy, as_of=closure.as_of)
    reproduced = _reprojected(evaluated, gaf).id == gaf.id
    if reproduced:
        propositions = {f.proposition for f in facts.values()} | set(gaf.unresolved) | set(gaf.rejected)
        ids |= {e.id for e in evaluated.evaluations if e.proposition in propositions}
    # down from each record to the claims, propositions and declarations it names (not up:
    # what names these records — other GAFs, closures, verdicts — is not what this one rests on)
    level = sorted(ids)
    while level:
        named: set[str] = set()
        for record in store.get_many(level).values():
            for name, (_, kinds) in record.REFS.items():
                if set(kinds) & _BENEATH:
                    value = getattr(record, name)
                    named.update([value] if isinstance(value, str) else list(value or ()))
        level = sorted(named - ids)
        ids.update(level)
    return Evidence(closure.id, frozenset(ids), reproduced)


# ---------------------------------------------------------------------- replay


@dataclass
class Replay:
    """What replaying a closure found: identical, or the layers that differ and why."""

    closure: str
    identical: bool
    layers: list[dict[str, str]] = field(default_factory=list)
    gaf: str | None = None
    verdict: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"closure": self.closure, "identical": self.identical, "layers": self.layers, "gaf": self.gaf, "verdict": self.verdict}


Judge = Callable[..., Judgement]


def replay(store: GafStore, closure_id: str, *, engine: str = ENGINE, judge_with: Judge = judge) -> Replay:
    """Recompute a closure's GAF and verdict from the stored inputs and compare.

    Layers, in the order they are checked: inputs (the claims the projection
    reads), projection policy, accepted facts (the GAF and its members), rules,
    runtime/engine. Each record read is checked against its content id, so an
    edit made behind gaf's back is named where it happened.
    """
    closure = _read(store, closure_id, "closure")
    if not isinstance(closure, Closure):
        raise UnknownReference(f"no closure {closure_id} in {store.location}")
    out = Replay(closure=closure.id, identical=True)

    def differ(layer: str, detail: str) -> None:
        out.identical = False
        out.layers.append({"layer": layer, "detail": detail})

    policy = _checked(store, closure.projection, "projection policy", differ)
    rules = _checked(store, closure.rules, "rules", differ)
    stored_gaf = _checked(store, closure.gaf, "accepted facts", differ)
    stored_verdicts = store.find(Verdict, closure=closure.id)
    if not isinstance(policy, Projection) or not isinstance(rules, VerdictRules) or not isinstance(stored_gaf, GAF):
        return out
    try:
        evaluated = evaluate(store, policy, as_of=closure.as_of)
    except InvalidRecord as exc:
        differ("inputs", f"a claim no longer matches its id: {exc.message}")
        return out
    recomputed = _reprojected(evaluated, stored_gaf)
    out.gaf = recomputed.id
    if closure.implementation != IMPLEMENTATION:
        # Named first: a GAF that differs under another implementation says nothing about the inputs.
        differ("projection implementation", f"closure was projected by {closure.implementation}, replayed with {IMPLEMENTATION}")
    if recomputed.id != stored_gaf.id:
        lost = sorted(set(stored_gaf.facts) - {c.id for c in evaluated.candidates})
        detail = f"re-projecting gives GAF {recomputed.id}, the closure froze {stored_gaf.id}"
        if lost:
            detail += f"; {len(lost)} accepted fact(s) are no longer justified by the claims, e.g. {lost[0]}"
        if closure.implementation != IMPLEMENTATION:
            out.layers[-1]["detail"] += f": {detail}"
        else:
            differ("inputs", detail)
    for fact_id in stored_gaf.facts:
        try:
            fact = store.get(fact_id)
        except InvalidRecord as exc:
            differ("accepted facts", exc.message)
            continue
        if fact is None:
            differ("accepted facts", f"{fact_id} is in the GAF but not stored")
        elif isinstance(fact, AcceptedFact) and fact.projection != policy.id:
            differ("accepted facts", f"{fact_id} was accepted under another policy ({fact.projection})")
    if engine != closure.engine:
        differ("runtime/engine", f"closure was judged by {closure.engine}, replayed with {engine}")
    if any(layer["layer"] == "accepted facts" for layer in out.layers):
        return out  # the verdict cannot be recomputed from facts that no longer match their ids
    facts, _ = gaf_facts(store, stored_gaf, policy, closure.as_of)
    judgement = judge_with(rules, facts, subject=closure.subject)
    fresh = {"label": judgement.label, "strength": judgement.strength, "low": judgement.low, "high": judgement.high}
    out.verdict = fresh
    if not stored_verdicts:
        differ("verdict", "the closure has no stored verdict: it was deleted out of band")
    else:
        old = stored_verdicts[0]
        before = {"label": old.label, "strength": old.strength, "low": old.low, "high": old.high}
        if before != fresh and not _logged_with(store, closure.id, old.id):
            differ("tampering", f"the stored verdict {old.id} was not written by gaf: the write log's link that "
                                f"checkpoints the closure does not list it (verdict now {fresh}, stored {before})")  # fmt: skip
        elif before != fresh and out.identical:
            differ("runtime/engine", f"same inputs, rules and facts, but the verdict is now {fresh}, was {before}")
        elif before != fresh:
            out.layers[-1]["detail"] += f" (verdict now {fresh['label']} {fresh['strength']:+}, was {before['label']} {before['strength']:+})"
    return out


def _logged_with(store: GafStore, closure_id: str, verdict_id: str) -> bool:
    """Whether the write log's link that checkpoints a closure lists its verdict, written in the same
    transaction (a transaction's verdicts are its last ids logged, so its last link lists them all
    unless there are more than a link holds). True when it cannot say: a closure made before the
    log was kept, or a link that does not hold every verdict of its transaction (``gaf verify``
    checks the whole log)."""
    link_id = store.checkpoint_of(closure_id)
    link = store.get(link_id) if link_id else None
    if not isinstance(link, LogEntry):
        return True
    listed = link.written.get(Verdict.KIND, [])
    return verdict_id in listed or len(listed) < len(link.checkpoints)


def _read(store: GafStore, record_id: str, what: str) -> Record | None:
    try:
        return store.get(record_id)
    except InvalidRecord as exc:
        raise GafError(f"the stored {what} {record_id} no longer matches its id: {exc.what}", where=record_id) from None


def _checked(store: GafStore, record_id: str, layer: str, differ: Callable[[str, str], None]) -> Record | None:
    try:
        record = store.get(record_id)
    except InvalidRecord as exc:
        differ(layer, f"stored {record_id} no longer matches its content id: {exc.what}")
        return None
    if record is None:
        differ(layer, f"{record_id} is not stored")
    return record
