"""The cone: which claims a policy reads.

A policy reads only the claims that state something it may use — a predicate a
trusted source may establish, or one its rules mention — about a subject in its
scope, recorded by the cut-off, from a source not invalidated when observed. Everything
else in the ledger is outside the question and never weighed.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from gaf.records import Claim, Projection, matches_pattern
from gaf.rules import Atom, Not, RuleRef, resolve
from gaf.store.base import GafStore
from gaf.types import format_instant


def established_predicates(policy: Projection) -> set[str]:
    """Predicates some trusted source may establish (or the question's conclusions)."""
    return {p for t in policy.trust for p in t.predicates} | set(policy.conclusions)


def cone_predicates(policy: Projection) -> set[str]:
    """Every predicate the policy can read: those sources may establish, and those rules mention."""
    preds = established_predicates(policy)
    by_ref = {r.ref: r for r in policy.derivation_rules}
    for r in policy.derivation_rules:
        for b in r.bodies:
            for clause in b.when:
                inner = clause.not_ if isinstance(clause, Not) else clause
                if isinstance(inner, Atom) or isinstance(inner, RuleRef) and inner.rule in by_ref:
                    preds.add(resolve(inner, by_ref).predicate)
    return preds - {r.head.predicate for r in policy.derivation_rules} | set(policy.conclusions)


def cone_claims(store: GafStore, policy: Projection, as_of: datetime) -> list[Claim]:
    """The claims recorded by the cut-off that state something in the question's cone, by id."""
    cutoff = format_instant(min(as_of, policy.cutoff) if policy.cutoff else as_of)
    predicates = sorted(cone_predicates(policy))
    patterns = policy.scope.subjects or ["*"]
    exact = sorted(p for p in patterns if not p.endswith("*"))
    prefixes = sorted(p[:-1] for p in patterns if p.endswith("*"))
    # The cut-off is applied here, not in the store's question: see gaf.store.questions.
    found = store.cone_claims(exact, prefixes, predicates)
    invalid = store.invalidations({c.source for c in found}, as_of)
    return [c for c in found if format_instant(c.recorded_at) <= cutoff and not _invalidated(c, invalid)]


def invalidations(store: GafStore, sources: Iterable[str], as_of: datetime) -> dict[str, str]:
    """For each invalidated source among these, the earliest time from which its claims are void."""
    return store.invalidations(sources, as_of)


def _invalidated(claim: Claim, invalid: dict[str, str]) -> bool:
    """A claim observed at or after its source's invalidation counts for nothing."""
    since = invalid.get(claim.source)
    return since is not None and format_instant(claim.observed_at) >= since


def in_cone(policy: Projection, predicates: set[str], subject: str, predicate: str) -> bool:
    return predicate in predicates and any(matches_pattern(p, subject) for p in policy.scope.subjects or ["*"])
