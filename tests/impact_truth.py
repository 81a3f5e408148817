"""The truth about impact: what a change really does to each closure, found by deciding again.

Impact analysis says which closures, verdicts, facts and actions a change reaches, and how.
To check it on random worlds the answer has to be known some other way, and the simplest
other way is to do the work again: store the world as it was in a fresh store and decide it
(ingest, publish, project, close each subject, act), store the world as the change leaves it
in another fresh store and decide it under the same policy, rules and as-of, and compare,
closure by closure. Everything is written through the functions users call, so the truth is
gaf's own answer, not a second opinion; nothing here reads ``impact`` — it is what impact is
measured against.

Facts are compared by what they state (``Stated``: predicate, subject, argument and valid
interval), never by id: a fact's id names the evaluation or derivation that justifies it, so
it changes whenever the claims beneath it do, though the fact stands. A fact's support is
counted the way the policy counts it: the independent (distinct) sources its admitted
claims come from — for a derived fact, those beneath every premise of every derivation of
it, a rejection it relied on counting its denying sources — and whether one of them is
authoritative, which outweighs any number that are not. A fact kept on less is *weakened*;
one lost is *invalidated*.

All the subjects of a world are projected together (the policy's scope is every case), so
their closures share one GAF: a change to any subject's facts changes the basis of every
closure, as it changes the GAF a reopen would judge. ``Stated.subject`` tells them apart.

A source invalidation is what gaf records: a ``SourceInvalidation`` (a record, never a
deletion), written at the as-of the world is decided at, as ``gaf.reopen.after_invalidation``
writes it. The projection's cone then leaves out every claim of that source observed at or
after ``invalid_from`` (``gaf.projection.cone``), counting the invalidations recorded by the
as-of. Claims observed before it still count, and so do the source's completeness
declarations: they are part of the published policy, not claims, and nothing in the
projection reads invalidations beside claims. With ``invalid_from`` before the source's first
claim (the default, ``LONG_AGO``) the truth is therefore the world without that source's
claims, its declarations still closing their scopes — ``tests/test_impact_truth.py`` pins
that the two are the same.

The store is a parameter (``Stores``): by default each world gets a fresh embedded store
(a LadybugDB directory under the test's temporary path), opened and removed one at a time, so
the same oracle runs on a single Neo4j database wiped between worlds.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, Literal, NamedTuple

import gaf.store
from gaf.actions import act
from gaf.closure import close
from gaf.derive import show
from gaf.ledger import ingest
from gaf.policies import publish
from gaf.projection import project
from gaf.records import (
    GAF,
    AcceptedFact,
    ActionPolicy,
    Agent,
    Claim,
    Derivation,
    Evaluation,
    Grant,
    Projection,
    Proposition,
    Verdict,
)
from gaf.store import GafStore
from gaf.types import format_instant
from tests.worlds import AT, OBSERVER, REVIEWER_AGENT, LedgerWorld, Trigger

# ---------------------------------------------------------------------- storing a world

#: Who may act on a verdict: an authority holding a grant for every case, under an action
#: policy that lets any verdict trigger a notice, so an action is never refused for its label.
AUTHORITY = Agent(key="authority", name="an authority", agent_type="organisation", roles=["authority"])
NOTICE = "notice"
ACTIONS = ActionPolicy(name="notices", version=1, permits={NOTICE: ["yes", "no", "inconclusive", "undetermined"]})
GRANT = Grant(agent=AUTHORITY.id, action_kind=NOTICE, subjects=["case:*"], granted_by=AUTHORITY.id,
              granted_at=AT - timedelta(days=30))  # fmt: skip
#: The agents a stored world's records point at: the claims' observer, the reviewer who
#: accepts projections and declares invalidations, and the authority.
AGENTS = [Agent(key="observer", name="observer", agent_type="software"), REVIEWER_AGENT, AUTHORITY]
assert AGENTS[0].id == OBSERVER


@dataclass(frozen=True)
class Made:
    """What ``materialise`` wrote: the GAF, and per subject its closure and any action on its verdict."""

    gaf: str
    #: the closure of each subject, by subject
    closures: dict[str, str]
    #: the action executing each acted-on subject's verdict, by subject
    actions: dict[str, str]


def materialise(store: GafStore, world: LedgerWorld, at: datetime = AT) -> Made:
    """Write a world through gaf's public paths and decide it as of ``at``.

    Ingest the agents, sources, claims and invalidations (and the authority's grant and
    action policy); publish the policy and the verdict rules; project once (every subject
    is in the policy's scope), close one closure per subject, and act on the verdicts of
    the subjects in ``world.acted``. The same world and ``at`` write the same ids in any
    store, so a caller's closures are the ones ``truth`` reports on.
    """
    ingest(store, [*AGENTS, *world.sources, *world.claims, *world.invalidations, ACTIONS, GRANT], recorded_at=at)
    policy = publish(store, world.policy, at=at)
    rules = publish(store, world.rules, at=at)
    projected = project(store, policy, as_of=at, reviewer=REVIEWER_AGENT.id, at=at)
    closures, actions = {}, {}
    for subject in world.subjects:
        closed = close(store, projected.gaf.id, rules, subject=subject, as_of=at, closed_at=at)
        closures[subject] = closed.closure.id
        if subject in world.acted:
            acted = act(store, verdict=closed.verdict.id, action_kind=NOTICE, subject=subject, authorised_by=AUTHORITY.id,
                        grant=GRANT.id, policy=ACTIONS.id, idempotency_key=f"{NOTICE}:{subject}", at=at,
                        reason="the verdict calls for a notice")  # fmt: skip
            actions[subject] = acted.action.id
    return Made(projected.gaf.id, closures, actions)


# ---------------------------------------------------------------------- what a store decided


class Judged(NamedTuple):
    """A verdict as the comparison reads it."""

    label: str
    strength: float
    low: float
    high: float

    def __str__(self) -> str:
        return f"{self.label} {self.strength:+.3f} [{self.low:+.3f}, {self.high:+.3f}]"


class Stated(NamedTuple):
    """What a proposition states, the same in every store: predicate, subject, its object
    or value, and its valid interval (start, end) when it has one."""

    predicate: str
    subject: str
    target: Any
    valid: tuple[str | None, str | None] | None

    def __str__(self) -> str:
        return show((self.predicate, self.subject, self.target)) + (f" over [{self.valid[0]}, {self.valid[1]})" if self.valid else "")


@dataclass(frozen=True)
class Support:
    """The independent sources a fact rests on, and whether one of them is authoritative."""

    sources: frozenset[str]
    authoritative: bool

    @property
    def weight(self) -> tuple[bool, int]:
        """How the policy ranks support: an authoritative source first, then how many sources."""
        return (self.authoritative, len(self.sources))


@dataclass(frozen=True)
class Basis:
    """What a GAF says, by what its propositions state: the accepted ones with their
    support, the unresolved ones and the rejected ones."""

    gaf: str
    accepted: dict[Stated, Support]
    unresolved: frozenset[Stated]
    rejected: frozenset[Stated]


@dataclass(frozen=True)
class Decided:
    """One store's decisions on a world: what it wrote, the GAF's basis, and each subject's verdict."""

    made: Made
    basis: Basis
    verdicts: dict[str, Judged]


def decided(store: GafStore, world: LedgerWorld, at: datetime = AT) -> Decided:
    """Materialise a world in a store and read back what was decided, in terms every store shares."""
    made = materialise(store, world, at)
    verdicts = {}
    for subject, closure in made.closures.items():
        (v,) = store.find(Verdict, closure=closure)
        verdicts[subject] = Judged(v.label, v.strength, v.low, v.high)
    return Decided(made, basis(store, made.gaf, world.policy), verdicts)


def basis(store: GafStore, gaf_id: str, policy: Projection) -> Basis:
    """A stored GAF's basis, read through the store's typed questions."""
    g = store.get(gaf_id, GAF)
    facts = store.get_many(g.facts, AcceptedFact)
    justifications = store.get_many({f.justification for f in facts.values()})
    # A derivation's premises are facts of the same GAF (a derived fact is accepted only with
    # its premises), or the evaluations of the rejections it relied on.
    premises = {p for j in justifications.values() if isinstance(j, Derivation) for p in j.premises}
    evaluations = {**{k: j for k, j in justifications.items() if isinstance(j, Evaluation)},
                   **store.get_many({p for p in premises if p.startswith("evaluation:")}, Evaluation)}  # fmt: skip
    claims = store.get_many({c for e in evaluations.values() for c in (*e.supporting, *e.refuting)}, Claim)
    props = store.get_many({f.proposition for f in facts.values()} | set(g.unresolved) | set(g.rejected), Proposition)
    authoritative = {t.source for t in policy.trust if t.authoritative}
    memo: dict[str, frozenset[str]] = {}

    def sources_of(fact_id: str) -> frozenset[str]:
        if fact_id not in memo:
            j = justifications[facts[fact_id].justification]
            if isinstance(j, Evaluation):
                memo[fact_id] = frozenset(claims[c].source for c in j.supporting)
            else:
                assert isinstance(j, Derivation)
                memo[fact_id] = frozenset().union(*(
                    sources_of(p) if p.startswith("fact:") else frozenset(claims[c].source for c in evaluations[p].refuting)
                    for p in j.premises))  # fmt: skip
        return memo[fact_id]

    by_stated: dict[Stated, set[str]] = {}
    for fid in g.facts:
        by_stated.setdefault(stated(props[facts[fid].proposition]), set()).update(sources_of(fid))
    accepted = {s: Support(frozenset(src), bool(src & authoritative)) for s, src in by_stated.items()}
    return Basis(g.id, accepted, frozenset(stated(props[p]) for p in g.unresolved), frozenset(stated(props[p]) for p in g.rejected))


def stated(p: Proposition) -> Stated:
    valid = (_instant(p.valid.start), _instant(p.valid.end)) if p.valid is not None else None
    return Stated(p.predicate, p.subject, p.object if p.object is not None else p.value, valid)


def _instant(at: datetime | None) -> str | None:
    return format_instant(at) if at is not None else None


# ---------------------------------------------------------------------- the comparison

FactStatus = Literal["invalidated", "weakened", "unchanged", "strengthened", "added"]
ClosureStatus = Literal["verdict changes", "basis changes, verdict holds", "unaffected"]


def fact_status(was: Support | None, now: Support | None) -> FactStatus:
    """Lost, kept on less support, kept on as much, kept on more, or newly accepted."""
    if now is None:
        return "invalidated"
    if was is None:
        return "added"
    return "weakened" if now.weight < was.weight else "strengthened" if now.weight > was.weight else "unchanged"


@dataclass(frozen=True)
class ClosureTruth:
    """One original closure, decided again after the change: its verdict and basis before and after."""

    subject: str
    #: the original closure's id, and the one deciding the changed world makes for the subject
    closure: str
    recomputed: str
    before: Judged
    after: Judged
    was: Basis
    now: Basis
    #: the actions executing the original verdict
    actions: tuple[str, ...]

    @property
    def verdict_changes(self) -> bool:
        return self.before != self.after

    @property
    def facts(self) -> dict[Stated, FactStatus]:
        """The status of every proposition accepted before or after."""
        return {s: fact_status(self.was.accepted.get(s), self.now.accepted.get(s))
                for s in sorted({*self.was.accepted, *self.now.accepted}, key=str)}  # fmt: skip

    def with_status(self, status: FactStatus) -> list[Stated]:
        return [s for s, st in self.facts.items() if st == status]

    @property
    def basis_changes(self) -> bool:
        """Whether what the closure rests on moved: a fact lost, weakened or added, or a
        proposition became or stopped being unresolved or rejected. A fact only strengthened (a
        new claim corroborating it) moves nothing: impact reports no such closure, and its
        actions need no review."""
        return (any(st in ("invalidated", "weakened", "added") for st in self.facts.values())
                or self.was.unresolved != self.now.unresolved or self.was.rejected != self.now.rejected)  # fmt: skip

    @property
    def status(self) -> ClosureStatus:
        if self.verdict_changes:
            return "verdict changes"
        return "basis changes, verdict holds" if self.basis_changes else "unaffected"

    def __str__(self) -> str:
        lines = [f"{self.subject} ({self.closure}): {self.status}: {self.before} → {self.after}"]
        lines += [f"  {st}: {s}" for s, st in self.facts.items() if st != "unchanged"]
        for what, was, now in (("unresolved", self.was.unresolved, self.now.unresolved), ("rejected", self.was.rejected, self.now.rejected)):
            lines += [f"  no longer {what}: {s}" for s in sorted(was - now, key=str)]
            lines += [f"  now {what}: {s}" for s in sorted(now - was, key=str)]
        return "\n".join(lines)


@dataclass(frozen=True)
class Truth:
    """What a change does to every closure of a world, by the original closure's id."""

    trigger: Trigger
    closures: dict[str, ClosureTruth]

    def of(self, subject: str) -> ClosureTruth:
        (found,) = [c for c in self.closures.values() if c.subject == subject]
        return found

    @property
    def statuses(self) -> dict[str, ClosureStatus]:
        """Each subject's closure status."""
        return {c.subject: c.status for c in self.closures.values()}

    @property
    def to_compensate(self) -> list[str]:
        """The executed actions whose closure's verdict changes."""
        return sorted(a for c in self.closures.values() if c.verdict_changes for a in c.actions)

    @property
    def to_review(self) -> list[str]:
        """The executed actions whose closure's basis changed but whose verdict holds."""
        return sorted(a for c in self.closures.values() if c.status == "basis changes, verdict holds" for a in c.actions)

    def __str__(self) -> str:
        return "\n".join([str(self.trigger), *(str(c) for c in self.closures.values())])


# ---------------------------------------------------------------------- the oracle

#: Stores to decide worlds in: called with a name, it gives an empty store for the
#: duration of a ``with`` block. One is open at a time.
Stores = Callable[[str], AbstractContextManager[GafStore]]


def embedded(tmp_path: Path) -> Stores:
    """Fresh embedded stores, each a LadybugDB directory of its own under ``tmp_path``,
    removed when done with (a property test decides many worlds in one temporary path)."""

    @contextmanager
    def fresh(name: str) -> Iterator[GafStore]:
        where = Path(tempfile.mkdtemp(prefix=f"{name}-", dir=tmp_path))
        try:
            with gaf.store.open(str(where / "store.lbug")) as store:
                yield store
        finally:
            shutil.rmtree(where, ignore_errors=True)

    return fresh


def decide(stores: Stores, name: str, world: LedgerWorld, at: datetime = AT) -> Decided:
    """A world decided in a fresh store from ``stores``."""
    with stores(name) as store:
        return decided(store, world, at)


def truth(world: LedgerWorld, trigger: Trigger, tmp_path: Path, *, stores: Stores | None = None, at: datetime = AT) -> Truth:
    """What ``trigger`` does to each closure of ``world``, found by deciding both worlds afresh.

    The world is decided in one fresh store and ``trigger.applied(world)`` in another,
    under the same policy, rules and as-of; each original closure is reported with its
    verdict (label, strength, low, high) and its GAF's basis before and after, so a caller
    can classify it (``ClosureTruth.status``) and each of its facts (``ClosureTruth.facts``).
    """
    (found,) = truths(world, [trigger], tmp_path, stores=stores, at=at)
    return found


def truths(world: LedgerWorld, triggers: Sequence[Trigger], tmp_path: Path, *, stores: Stores | None = None,
           at: datetime = AT) -> list[Truth]:  # fmt: skip
    """``truth`` for several triggers on one world, which is decided once."""
    stores = stores or embedded(tmp_path)
    before = decide(stores, "before", world, at)
    return [compare(before, decide(stores, "after", t.applied(world), at), t) for t in triggers]


def compare(before: Decided, after: Decided, trigger: Trigger) -> Truth:
    """Each closure of ``before`` beside the same subject's closure in ``after``."""
    closures = {}
    for subject, closure in before.made.closures.items():
        actions = tuple(a for s, a in before.made.actions.items() if s == subject)
        closures[closure] = ClosureTruth(subject, closure, after.made.closures[subject], before.verdicts[subject],
                                         after.verdicts[subject], before.basis, after.basis, actions)  # fmt: skip
    return Truth(trigger, closures)
