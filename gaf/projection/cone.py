"""The cone: which claims a policy reads.

A policy reads only the claims that state something it may use — a predicate a
trusted source may establish, or one its rules mention — about a subject in its
scope, recorded by the cut-off, from a source not invalidated when observed. Everything
else in the ledger is outside the question and never weighed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from datetime import datetime

from gaf.lineage import superseded_reports
from gaf.records import Claim, Closure, Cone, Projection, Record, Reruns, VerdictRules, matches_pattern, split_patterns
from gaf.rules import Atom, Not, Program, compile_rules
from gaf.store.base import GafStore
from gaf.types import format_instant


def established_predicates(policy: Projection) -> set[str]:
    """Predicates some trusted source may establish (or the question's conclusions)."""
    return {p for t in policy.trust for p in t.predicates} | set(policy.conclusions)


#: Compiled programs by policy id (ids are content hashes: one id, one program).
_PROGRAMS: dict[str, Program] = {}
_PROGRAMS_MAX = 1024


def program_of(policy: Projection) -> Program:
    """The policy's derivation rules compiled once: checked (every predicate derived or one a
    trusted source may establish), rule references resolved, stratified."""
    found = _PROGRAMS.get(policy.id)
    if found is None:
        found = compile_rules(policy.derivation_rules, known_predicates=established_predicates(policy))
        if len(_PROGRAMS) >= _PROGRAMS_MAX:
            _PROGRAMS.clear()
        _PROGRAMS[policy.id] = found
    return found


def cone_predicates(policy: Projection) -> set[str]:
    """Every predicate the policy can read: those sources may establish, and those rules mention."""
    program = program_of(policy)
    return (established_predicates(policy) | program.reads()) - program.heads | set(policy.conclusions)


def cone_claims(store: GafStore, policy: Projection, as_of: datetime) -> list[Claim]:
    """The claims recorded by the cut-off that state something in the question's cone, by id:
    not those of an invalidated source observed since, nor those a run invalidation voids, nor,
    under ``reruns: supersede``, the reports of a pipeline run a re-run of its job rewrote."""
    cutoff = format_instant(min(as_of, policy.cutoff) if policy.cutoff else as_of)
    predicates = sorted(cone_predicates(policy))
    patterns = policy.scope.subjects or ["*"]
    exact, prefixes = split_patterns(patterns)
    # The cut-off is applied here, not in the store's question: see gaf.store.questions.
    found = store.cone_claims(exact, prefixes, predicates)
    invalid = store.invalidations({c.source for c in found}, as_of)
    voided = store.voided([c.id for c in found], as_of)
    kept = [c for c in found if format_instant(c.recorded_at) <= cutoff and not _invalidated(c, invalid) and c.id not in voided]
    if policy.reruns is Reruns.supersede:
        rewritten = superseded_reports(store, kept, cutoff)
        kept = [c for c in kept if c.id not in rewritten]
    return kept


def _invalidated(claim: Claim, invalid: dict[str, str]) -> bool:
    """A claim observed at or after its source's invalidation counts for nothing."""
    since = invalid.get(claim.source)
    return since is not None and format_instant(claim.observed_at) >= since


def in_cone(policy: Projection, predicates: set[str], subject: str, predicate: str) -> bool:
    return predicate in predicates and any(matches_pattern(p, subject) for p in policy.scope.subjects or ["*"])


def verdict_reads(rules: VerdictRules) -> set[str]:
    """Every predicate a verdict rule's condition names, positively or under ``not``."""
    return {
        inner.predicate
        for rule in rules.rules
        for clause in rule.condition
        if isinstance(inner := clause.not_ if isinstance(clause, Not) else clause, Atom)
    }


def cones_for(closures: Iterable[Closure], find: Callable[[list[str]], Mapping[str, Record]]) -> dict[str, Cone]:
    """The cone ``close`` records (``cone_of``) for each of these closures, by closure id, their
    policies and rules found by ``find`` (ids to the records found, e.g. ``store.get_many``) in
    one call; a closure whose policy or rules are not found gets none."""
    closures = list(closures)
    found = find(sorted({c.projection for c in closures} | {c.rules for c in closures}))
    out: dict[str, Cone] = {}
    for closure in closures:
        policy, rules = found.get(closure.projection), found.get(closure.rules)
        if isinstance(policy, Projection) and isinstance(rules, VerdictRules):
            out[closure.id] = cone_of(closure, policy, rules)
    return out


def cone_of(closure: Closure, policy: Projection, rules: VerdictRules) -> Cone:
    """The cone a closure reads, to be recorded with it: its policy's subject patterns × the
    predicates its projection and its verdict rules read (a predicate the rules derive is
    read through what derives it), with the closed scopes the closure assumed."""
    program = program_of(policy)
    predicates = cone_predicates(policy) | (verdict_reads(rules) - program.heads)
    return Cone(
        closure=closure.id,
        subjects=sorted(set(policy.scope.subjects or ["*"])),
        predicates=sorted(predicates),
        completeness=list(closure.completeness),
    )
