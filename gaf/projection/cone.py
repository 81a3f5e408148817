"""The cone: which claims a policy reads.

A policy reads only the claims that state something it may use — a predicate a
trusted source may establish, or one its rules mention — about a subject in its
scope, recorded by the cut-off, from a source not invalidated when observed. Everything
else in the ledger is outside the question and never weighed.
"""

from __future__ import annotations

import bisect
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime

from gaf.lineage import superseded_reports
from gaf.records import Claim, Closure, Cone, Projection, Record, Reruns, VerdictRules, matches_pattern, split_patterns
from gaf.rules import Atom, Not, Program, compile_rules
from gaf.store.base import GafStore
from gaf.store.questions import Questions
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


def cone_claims(store: Questions, policy: Projection, as_of: datetime) -> list[Claim]:
    """The claims recorded by the cut-off that state something in the question's cone, by id:
    not those of an invalidated source observed since, nor those a run invalidation voids, nor,
    under ``reruns: supersede``, the reports of a pipeline run a re-run of its job rewrote."""
    return cones_claims(store, [(policy, as_of)])[(policy.id, as_of)]


def cones_claims(store: Questions, questions: Iterable[tuple[Projection, datetime]]) -> dict[tuple[str, datetime], list[Claim]]:
    """``cone_claims`` of many (policy, as-of) questions, by (policy id, as-of): the ledger is asked
    once for each set of predicates the policies read, about the subjects of every policy reading
    that set (so nothing is read that none of them reads), invalidations and voids once for all;
    each question's cone is then kept from those claims as the store would have kept it."""
    questions = sorted({(p.id, as_of): (p, as_of) for p, as_of in questions}.values(), key=lambda q: (q[0].id, q[1]))
    policies = {p.id: p for p, _ in questions}
    reading: dict[frozenset[str], list[Projection]] = defaultdict(list)
    for policy in policies.values():
        reading[frozenset(cone_predicates(policy))].append(policy)
    found: dict[str, Claim] = {}
    for predicates, group in sorted(reading.items(), key=lambda kv: sorted(kv[0])):
        # The cut-off is applied below, not in the store's question: see gaf.store.questions.
        exact, prefixes = split_patterns(sorted({s for p in group for s in p.scope.subjects or ["*"]}))
        found.update((c.id, c) for c in store.cone_claims(exact, prefixes, sorted(predicates)))
    stating = _Stating(found.values())
    invalidations = store.invalidations({c.source for c in found.values()})
    voids = store.voids(found)
    out: dict[tuple[str, datetime], list[Claim]] = {}
    for policy, as_of in questions:
        stamp = format_instant(as_of)
        cutoff = format_instant(min(as_of, policy.cutoff) if policy.cutoff else as_of)
        invalid: dict[str, str] = {}
        for source, since, recorded in invalidations:
            if recorded <= stamp:
                invalid[source] = min(invalid.get(source, since), since)
        kept = [
            found[c] for c in stating.of(policy)
            if format_instant(found[c].recorded_at) <= cutoff and not _invalidated(found[c], invalid) and not (c in voids and voids[c] <= stamp)
        ]  # fmt: skip
        if policy.reruns is Reruns.supersede:
            rewritten = superseded_reports(store, kept, cutoff)
            kept = [c for c in kept if c.id not in rewritten]
        out[(policy.id, as_of)] = kept
    return out


def _invalidated(claim: Claim, invalid: dict[str, str]) -> bool:
    """A claim observed at or after its source's invalidation counts for nothing."""
    since = invalid.get(claim.source)
    return since is not None and format_instant(claim.observed_at) >= since


class _Stating:
    """Claims by the subjects and predicates they state (asserted or denied): which of them a
    policy's cone holds, found by exact subject and by prefix (a range of the sorted subjects)."""

    def __init__(self, claims: Iterable[Claim]):
        self.by_atom: dict[tuple[str, str], set[str]] = defaultdict(set)
        for claim in claims:
            for st in claim.statements:
                self.by_atom[(st.subject, st.predicate)].add(claim.id)
        self.subjects = sorted({subject for subject, _ in self.by_atom})

    def of(self, policy: Projection) -> list[str]:
        """The ids of the claims stating a predicate the policy reads about a subject in its scope, by id."""
        predicates = cone_predicates(policy)
        exact, prefixes = split_patterns(policy.scope.subjects or ["*"])
        subjects = set(exact)
        for prefix in prefixes:
            for subject in self.subjects[bisect.bisect_left(self.subjects, prefix):]:
                if not subject.startswith(prefix):
                    break
                subjects.add(subject)
        return sorted({c for s in subjects for p in predicates for c in self.by_atom.get((s, p), ())})


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
