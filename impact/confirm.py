"""Impact confirmed by recomputation: which closures a change reaches, and what it does to each.

Two tiers. **Reach** over-approximates: a standing closure is reached when an atom the
change states or retracts falls into the cone of the closure's projection policy (a
subject its scope covers, a predicate it reads) — whatever the claim's source, trust,
interval or polarity. A change outside every cone leaves the claims each projection
reads exactly as they were, so it cannot move a GAF or a verdict: reach misses nothing.

**Confirmation** recomputes each reached closure in memory with the change applied —
the projection's own evaluation over the cone's claims (``evaluate_over``), the
candidates accepted as the review policy accepts them, judged under the closure's
rules — and compares with the unchanged world. Each closure is then:

* ``verdict_changed``: label, strength or interval moves (from → to, with the rules
  whose activation moved and the facts that did);
* ``basis_changed``: facts are lost, weakened, gained or settled otherwise, but the
  verdict holds;
* ``needs_review``: the outcome waits on a reviewer (a new candidate below the review
  policy's confidence would move the verdict if accepted) — never guessed;
* ``unaffected``: nothing it rests on moves (dropped from the report, counted).

A fact is *invalidated* when recomputation loses it and *weakened* when it survives on
fewer independent sources than before (counted by source, the way a policy counts
corroboration; an authoritative source lost is a source lost). Recomputation is
bounded by count and time; what is reached and not recomputed is ``not_confirmed``.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from gaf.derive import Entry, Truth, show
from gaf.projection import (
    Candidate,
    Evaluated,
    PolicyFacts,
    ReviewPolicy,
    cone_predicates,
    cones_claims,
    evaluate_over,
    ground_of,
    in_cone,
    recorded_reviews,
)
from gaf.records import GAF, Claim, Closure, Cone, Derivation, Evaluation, Projection, Proposition, Verdict, VerdictRules
from gaf.store import Questions
from gaf.store.schema import CONES_RECORDED
from gaf.types import Progress, format_instant, no_progress
from gaf.verdict import Judgement, Scores, judge

Outcome = Literal["verdict_changed", "basis_changed", "needs_review", "unaffected", "not_confirmed"]


@dataclass(frozen=True)
class Change:
    """A trigger as a change of the claims projections read: stored claims that stop
    counting, claims that arrive, and the (subject, predicate) atoms they touch."""

    dropped: frozenset[str]
    added: tuple[Claim, ...] = ()
    atoms: frozenset[tuple[str, str]] = frozenset()

    @classmethod
    def removing(cls, claims: Iterable[Claim]) -> Change:
        claims = list(claims)
        return cls(frozenset(c.id for c in claims), (), _atoms(claims))

    @classmethod
    def adding(cls, claims: Iterable[Claim]) -> Change:
        claims = tuple(claims)
        return cls(frozenset(), claims, _atoms(claims))


def _atoms(claims: Iterable[Claim]) -> frozenset[tuple[str, str]]:
    return frozenset((s.subject, s.predicate) for c in claims for s in c.statements)


@dataclass
class FactChange:
    """A fact of the stored GAF that the change loses (invalidated) or leaves on less support."""

    fact: str
    atom: str
    status: Literal["invalidated", "weakened"]
    sources_before: list[str]
    sources_after: list[str]

    def to_dict(self) -> dict[str, Any]:
        return {"fact": self.fact, "atom": self.atom, "status": self.status,
                "sources_before": self.sources_before, "sources_after": self.sources_after}  # fmt: skip


def _judged(j: Judgement | Verdict | None) -> dict[str, Any] | None:
    if j is None:
        return None
    return {"label": j.label, "strength": j.strength, "low": j.low, "high": j.high}


@dataclass
class ClosureImpact:
    """What the change does to one reached closure, found by recomputing it."""

    closure: str
    subject: str
    outcome: Outcome
    before: dict[str, Any] | None = None
    after: dict[str, Any] | None = None
    #: verdict rules whose activation moved
    rules_moved: list[str] = field(default_factory=list)
    facts: list[FactChange] = field(default_factory=list)
    #: atoms the changed world accepts that the stored GAF did not
    gained: list[str] = field(default_factory=list)
    #: atoms that moved between unresolved, rejected and absent
    resettled: list[str] = field(default_factory=list)
    #: new candidates below the review policy's confidence: a reviewer decides them
    awaiting_review: list[str] = field(default_factory=list)
    #: why it was not recomputed (not_confirmed only)
    reason: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "closure": self.closure, "subject": self.subject, "outcome": self.outcome,
            "before": self.before, "after": self.after, "rules_moved": self.rules_moved,
            "facts": [f.to_dict() for f in self.facts], "gained": self.gained, "resettled": self.resettled,
            "awaiting_review": self.awaiting_review, **({"reason": self.reason} if self.reason else {}),
        }  # fmt: skip


@dataclass
class Confirmation:
    """Every reached closure, recomputed or said not to be."""

    reached: int = 0
    recomputed: int = 0
    #: closures the change moves, or that could not be recomputed, by closure id
    closures: list[ClosureImpact] = field(default_factory=list)
    unaffected: int = 0

    @property
    def complete(self) -> bool:
        return self.recomputed == self.reached

    def summary(self) -> dict[str, int]:
        counts: dict[str, int] = defaultdict(int)
        for c in self.closures:
            counts[c.outcome] += 1
        return {"reached": self.reached, "recomputed": self.recomputed, "unaffected": self.unaffected, **dict(sorted(counts.items()))}


# ---------------------------------------------------------------------- reach


@dataclass(frozen=True)
class Reached:
    """The standing closures a change reaches, and how they were found."""

    closures: list[Closure]
    #: "cones": each closure's recorded cone, looked up by key; "policies": every projection
    #: policy's cone computed afresh (a store at a schema version before cones were recorded)
    by: Literal["cones", "policies"]
    note: str = ""


def reach(store: Questions, change: Change) -> Reached:
    """The standing closures whose cone holds an atom the change touches, by id.

    On a store at the current schema every closure's cone was recorded when it was closed
    (gaf/migrate.py backfills older ones), so reach starts from the keys the change's atoms
    fall under: the store finds the keys among the patterns that cover the atoms' subjects
    (each subject, and each of its prefixes with ``*``) and their predicates, they are
    paired up here atom by atom, and the store follows the matching keys to their closures.
    On an older store it reads every policy and computes each cone afresh — the same
    closures, slower — and says so."""
    version = store.schema_version()
    if version < CONES_RECORDED:
        note = (f"the store is at schema version {version}, before cones were recorded: reach read every "
                "projection policy instead of the cone index; run `gaf migrate` to record them")  # fmt: skip
        return Reached(_reached_by_policy(store, change), "policies", note)
    patterns = {pattern for subject in {s for s, _ in change.atoms} for pattern in _patterns_covering(subject)}
    keys = _matching_keys(store.cone_keys(patterns, {p for _, p in change.atoms}), change.atoms)
    found = store.get_many(store.standing_reading(keys), Closure)
    note = ""
    if store.count(Closure) > store.count(Cone):  # closures put without their cone (not by close or ingest)
        lacking = set(store.closures_without_cone())
        found |= {c.id: c for c in _reached_by_policy(store, change) if c.id in lacking}
        note = (f"{len(lacking)} closure(s) have no recorded cone (written without close or ingest): reach computed "
                "theirs from their policies; run `gaf migrate` to record them")  # fmt: skip
    return Reached([found[k] for k in sorted(found)], "cones", note)


def reached(store: Questions, change: Change) -> list[Closure]:
    """The standing closures a change reaches (``reach``), by id."""
    return reach(store, change).closures


def _patterns_covering(subject: str) -> list[str]:
    """Every pattern that covers a subject (``matches_pattern``): the subject itself, and each of
    its prefixes followed by ``*`` (``*`` alone among them)."""
    return [subject, *(subject[:end] + "*" for end in range(len(subject) + 1))]


def _matching_keys(keys: Iterable[tuple[str, str, str]], atoms: Iterable[tuple[str, str]]) -> list[str]:
    """The ids of the cone keys whose (predicate, subject pattern) covers any atom: an exact
    subject by equality, a ``prefix*`` by the atom subject's prefixes (``matches_pattern``)."""
    exact: dict[tuple[str, str], list[str]] = defaultdict(list)
    prefix: dict[tuple[str, str], list[str]] = defaultdict(list)
    for key_id, predicate, pattern in keys:
        if pattern.endswith("*"):
            prefix[(predicate, pattern[:-1])].append(key_id)
        else:
            exact[(predicate, pattern)].append(key_id)
    asked: dict[str, set[str]] = defaultdict(set)  # each subject once, with the predicates asked of it
    for subject, predicate in atoms:
        asked[subject].add(predicate)
    lengths = sorted({len(start) for _, start in prefix})  # only prefixes as long as some pattern's
    out: set[str] = set()
    for subject, predicates in asked.items():
        starts = [subject[:end] for end in lengths if end <= len(subject)]
        for predicate in predicates:
            out.update(exact.get((predicate, subject), ()))
            for start in starts:
                out.update(prefix.get((predicate, start), ()))
    return sorted(out)


def _reached_by_policy(store: Questions, change: Change) -> list[Closure]:
    """Reach without recorded cones: each policy's cone computed from the policy itself."""
    out: dict[str, Closure] = {}
    for policy in sorted(store.find(Projection), key=lambda p: p.id):
        predicates = cone_predicates(policy)
        if not any(in_cone(policy, predicates, subject, predicate) for subject, predicate in sorted(change.atoms)):
            continue
        out.update(store.get_many(store.standing_under(policy.id), Closure))
    return [out[k] for k in sorted(out)]


# ---------------------------------------------------------------------- confirmation


#: Confirmation's stage: the closures a change reached, each recomputed or left unconfirmed.
CONFIRMING = "confirming the closures"


def confirm(
    store: Questions, change: Change, closures: Iterable[Closure], *, count: int = 10_000, seconds: float | None = None,
    review: ReviewPolicy | None = None, clock: Callable[[], float] = time.monotonic, progress: Progress = no_progress,
) -> Confirmation:  # fmt: skip
    """Recompute each closure with the change applied, at most ``count`` of them and for at most
    ``seconds``; closures sharing a policy and an as-of share one evaluation. Each is accepted
    under the review policy its GAF recorded (``recorded_review``) unless ``review`` is given.
    ``progress`` is told the closures confirmed out of those reached: each recomputed, and each
    a limit leaves unconfirmed."""
    started = clock()
    groups: dict[tuple[str, str], list[Closure]] = defaultdict(list)
    for closure in closures:
        groups[(closure.projection, format_instant(closure.as_of))].append(closure)
    out = Confirmation(reached=sum(len(g) for g in groups.values()))
    done = 0
    progress(CONFIRMING, done, out.reached)
    read = _Read.of(store, [c for key in _within(groups, count) for c in groups[key]], review)
    scores: Scores = {}  # every closure's weighings, made once (gaf.verdict.judge)
    for key in sorted(groups):
        group = sorted(groups[key], key=lambda c: c.id)
        over = _over(out.recomputed + len(group), count, seconds, clock() - started)
        if over:
            out.closures += [ClosureImpact(c.id, c.subject, "not_confirmed", reason=over) for c in group]
            done += len(group)
            progress(CONFIRMING, done, out.reached)
            continue
        policy = read.policies[key[0]]
        as_of = group[0].as_of
        claims = read.cones[(policy.id, as_of)]
        before = evaluate_over(policy, claims, as_of=as_of)
        changed = [c for c in claims if c.id not in change.dropped] + [_arriving(n, policy, as_of) for n in change.added]
        after = evaluate_over(policy, changed, as_of=as_of)
        sources = {c.id: c.source for c in [*claims, *change.added]}
        bases: dict[tuple[str, str], _Basis] = {}
        for closure in group:
            key = (closure.gaf, closure.rules)
            if key not in bases:
                gaf = read.gafs[closure.gaf]
                bases[key] = _basis(policy, gaf, read.rules[closure.rules], read.reviews[gaf.id], before, after, sources)
            impact = _recompute(closure, read.verdicts.get(closure.id), bases[key], scores)
            out.recomputed += 1
            done += 1
            progress(CONFIRMING, done, out.reached)
            if impact.outcome == "unaffected":
                out.unaffected += 1
            else:
                out.closures.append(impact)
    out.closures.sort(key=lambda c: c.closure)
    return out


def _within(groups: dict[tuple[str, str], list[Closure]], count: int) -> list[tuple[str, str]]:
    """The groups the count limit lets ``confirm`` recompute (in its order: a group that does not
    fit is left, a smaller one after it may)."""
    out, total = [], 0
    for key in sorted(groups):
        if total + len(groups[key]) <= count:
            total += len(groups[key])
            out.append(key)
    return out


@dataclass(frozen=True)
class _Read:
    """What recomputing some closures reads besides their cones, read at once for all of them:
    their policies, GAFs, rules, the verdict stored for each, and each GAF's review policy."""

    policies: dict[str, Projection]
    gafs: dict[str, GAF]
    rules: dict[str, VerdictRules]
    #: closure id -> the verdict stored for it (the first by id), where one was
    verdicts: dict[str, Verdict]
    #: GAF id -> the review policy it is recomputed under
    reviews: dict[str, ReviewPolicy]
    #: (policy id, as-of) -> the claims of its cone (``cones_claims``)
    cones: dict[tuple[str, datetime], list[Claim]]

    @classmethod
    def of(cls, store: Questions, closures: list[Closure], review: ReviewPolicy | None) -> _Read:
        gafs = store.get_many({c.gaf for c in closures}, GAF)
        deciding = store.verdicts_of(c.id for c in closures)
        first = {closure: ids[0] for closure, ids in deciding.items()}
        stored = store.get_many(first.values(), Verdict)
        reviews = {g: review for g in gafs} if review is not None else recorded_reviews(store, gafs.values())
        policies = store.get_many({c.projection for c in closures}, Projection)
        return cls(
            policies=policies,
            gafs=gafs,
            rules=store.get_many({c.rules for c in closures}, VerdictRules),
            verdicts={closure: stored[v] for closure, v in first.items()},
            reviews=reviews,
            cones=cones_claims(store, [(policies[c.projection], c.as_of) for c in closures]),
        )


def _over(total: int, count: int, seconds: float | None, spent: float) -> str:
    if total > count:
        return f"recomputation limit of {count} closures reached"
    if seconds is not None and spent > seconds:
        return f"recomputation time limit {seconds:g} s reached"
    return ""


def _arriving(claim: Claim, policy: Projection, as_of: datetime) -> Claim:
    """A new claim as the closure's projection would have read it: recorded by its as-of
    (the same claim: recorded_at is not part of its id) — unless the policy's own cut-off
    had passed when it was recorded, in which case it never counts."""
    if policy.cutoff is not None and claim.recorded_at > policy.cutoff:
        return claim
    if claim.recorded_at <= as_of:
        return claim
    return Claim.model_validate({**claim.model_dump(exclude={"id"}), "recorded_at": as_of})


@dataclass
class _Basis:
    """What a change does to one stored GAF under one review policy: the same for every
    closure that judged that GAF (a projection covers its whole scope), so computed once."""

    rules: VerdictRules
    waiting: list[Candidate]
    facts: list[FactChange]
    gained: list[str]
    resettled: list[str]
    #: the fact bases judged, before and after the change (and after, with what awaits review accepted):
    #: one each for every closure of the GAF, so each predicate is indexed once, not once a subject
    judged_before: PolicyFacts
    judged_after: PolicyFacts
    judged_waiting: PolicyFacts | None


def _basis(
    policy: Projection, gaf: GAF, rules: VerdictRules, review: ReviewPolicy, before: Evaluated, after: Evaluated,
    sources: dict[str, str],
) -> _Basis:  # fmt: skip
    kept = set(gaf.facts)
    accepted_before = [c for c in before.candidates if c.fact.id in kept]
    previously_routed = {c.fact.id for c in review.split(before)[1]}
    # What the review policy accepts, and every fact the stored GAF accepted (a decision stands).
    accepted_after, routed = review.split(after)
    stated_before = {c.proposition.id: c.proposition for c in accepted_before}
    stated_after = {c.proposition.id: c.proposition for c in accepted_after}
    waiting = [c for c in routed if c.fact.id not in previously_routed]
    return _Basis(
        rules=rules,
        waiting=waiting,
        facts=_fact_changes(before, accepted_before, after, accepted_after, sources),
        gained=sorted(text(stated_after[p]) for p in stated_after.keys() - stated_before.keys()),
        resettled=sorted(f"{text(p)} {tag}" for tag, p in _settled(before) ^ _settled(after)),
        judged_before=_judged_facts(policy, before, accepted_before),
        judged_after=_judged_facts(policy, after, accepted_after),
        judged_waiting=_judged_facts(policy, after, accepted_after + waiting) if waiting else None,
    )


def _recompute(closure: Closure, stored: Verdict | None, b: _Basis, scores: Scores) -> ClosureImpact:
    rules = b.rules
    base = judge(rules, b.judged_before, subject=closure.subject, scores=scores)
    now = judge(rules, b.judged_after, subject=closure.subject, scores=scores)
    impact = ClosureImpact(closure.id, closure.subject, "unaffected", _judged(stored if stored is not None else base), _judged(now))
    impact.rules_moved = sorted(r.name for r, was in zip(now.rules, base.rules, strict=True) if r.activation != was.activation)
    impact.facts, impact.gained, impact.resettled = b.facts, b.gained, b.resettled
    impact.awaiting_review = sorted(text(c.proposition) for c in b.waiting)
    if b.judged_waiting is not None and _key(judge(rules, b.judged_waiting, subject=closure.subject, scores=scores)) != _key(now):
        impact.outcome = "needs_review"
    elif _key(now) != _key(base):
        impact.outcome = "verdict_changed"
    elif impact.facts or impact.gained or impact.resettled or impact.awaiting_review:
        impact.outcome = "basis_changed"
    return impact


def _key(j: Judgement) -> tuple[str, float, float, float]:
    return (j.label, j.strength, j.low, j.high)


def _settled(evaluated: Evaluated) -> set[tuple[str, Proposition]]:
    """The propositions left unresolved or rejected, each tagged with which."""
    return {("unresolved", p) for p in evaluated.unresolved} | {("rejected", p) for p in evaluated.rejected}


def text(p: Proposition) -> str:
    """A proposition as people read it, with its valid interval when it has one: two
    propositions of one atom (with and without an interval) are two facts."""
    when = f" over [{_at(p.valid.start)}, {_at(p.valid.end)})" if p.valid is not None else ""
    return show(ground_of(p)) + when


def _at(at: datetime | None) -> str:
    return format_instant(at) if at is not None else "…"


def _judged_facts(policy: Projection, evaluated: Evaluated, accepted: list[Candidate]) -> PolicyFacts:
    """The fact base a GAF of these accepted candidates is judged on (as ``close`` judges a stored GAF):
    each accepted fact true, each unresolved proposition unknown, each rejected one false."""
    entries = [Entry(ground_of(c.proposition), Truth.TRUE, c.fact.id) for c in accepted]
    entries += [Entry(ground_of(p), Truth.UNKNOWN, p.id) for p in evaluated.unresolved]
    entries += [Entry(ground_of(p), Truth.FALSE, p.id) for p in evaluated.rejected]
    return PolicyFacts(policy, entries, evaluated.as_of)


def _fact_changes(
    before: Evaluated, accepted_before: list[Candidate], after: Evaluated, accepted_after: list[Candidate],
    sources: dict[str, str],
) -> list[FactChange]:  # fmt: skip
    """Each accepted fact the change loses, or keeps on fewer independent sources."""
    now = {c.proposition.id: c for c in accepted_after}
    support_before = _support(before)
    support_after = _support(after)
    out = []
    for c in sorted(accepted_before, key=lambda c: c.fact.id):
        was = sorted({sources[i] for i in support_before(c) if i in sources})
        survivor = now.get(c.proposition.id)
        if survivor is None:
            out.append(FactChange(c.fact.id, text(c.proposition), "invalidated", was, []))
            continue
        left = sorted({sources[i] for i in support_after(survivor) if i in sources})
        if set(left) < set(was) or (set(left) != set(was) and len(left) < len(was)):
            out.append(FactChange(c.fact.id, text(c.proposition), "weakened", was, left))
    return out


def _support(evaluated: Evaluated) -> Callable[[Candidate], set[str]]:
    """The claims a candidate rests on: its evaluation's supporting claims, or, for a derived
    fact, those of the facts its derivation's premises are."""
    by_fact = {c.fact.id: c for c in evaluated.candidates}

    def claims_of(candidate: Candidate, seen: frozenset[str] = frozenset()) -> set[str]:
        j = candidate.justification
        if isinstance(j, Evaluation):
            return set(j.supporting)
        out: set[str] = set()
        if isinstance(j, Derivation):
            for premise in j.premises:
                if premise in by_fact and premise not in seen:
                    out |= claims_of(by_fact[premise], seen | {candidate.fact.id})
        return out

    return claims_of


__all__ = ["Change", "ClosureImpact", "Confirmation", "FactChange", "Outcome", "confirm", "reached"]
