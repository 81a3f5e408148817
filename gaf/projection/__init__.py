"""Projection: from open claims to the premises of one decision.

Building the premises of a decision is a declared procedure, distinct from
judging them. A projection policy (a ``Projection`` record) says which sources
may establish which predicates, how conflicts are settled, where the absence of a
claim counts as false, and which derivation rules apply. ``evaluate`` applies it
to the claims in the question's cone and returns evaluations and candidate facts,
each with its evidence; it writes nothing. ``accept`` writes what a reviewer
accepted, with a decision-log entry, in one transaction; ``project`` does both
under a review policy and returns the GAF snapshot.

The package holds one concept a module, in the order a projection runs:
``cone`` (which claims a policy reads), ``weighing`` (what the admitted claims
about each proposition come to), ``facts`` (the fact base derivation rules read),
``candidates`` (``evaluate``: the facts the policy would admit) and ``acceptance``
(``accept`` and ``project``: what is written, and under whose decision).
"""

from __future__ import annotations

from gaf.projection.acceptance import AcceptReport, Projected, ReviewPolicy, accept, project, recorded_review, recorded_reviews
from gaf.projection.candidates import Candidate, Evaluated, evaluate, evaluate_over
from gaf.projection.cone import cone_claims, cone_predicates, cones_claims, established_predicates, in_cone, program_of
from gaf.projection.facts import TRUTH_OF, PolicyFacts, bind_head, evaluated_entries, ground_of, proposition_of
from gaf.projection.weighing import closed_scopes, declaration_problems, evaluate_claims

#: What this package computes, named in every closure it makes. Bumped whenever the
#: same claims and policy can give another GAF, so replaying an older closure names
#: the implementation layer instead of failing somewhere obscure.
#: 2: a claim the policy does not admit as evidence is excluded (an Exclusion record),
#:    not evaluated: it no longer leaves its proposition "unknown" in the GAF.
#: 3: propositions of one atom as the rules read it (the same predicate, subject and target,
#:    over different valid intervals) are weighed together, each keeping its id and its own
#:    evaluation: an affirmation with no interval and a denial over July are one conflict.
#: 4: a derived atom no rule concluded reads false only when no body of its rules might hold
#:    for it, asked of that atom (gaf.derive._may_hold): before, what was known of one subject
#:    could settle another (a hold on r3 made ``not blocked(r1)`` true), and denials of some
#:    groundings of an open pattern read as if the pattern were false.
#: 5: an aggregate over a closed scope weighs the members that might hold in every completion of
#:    the unknown propositions they rest on (gaf.arith.aggregate's ``conditions``): members resting
#:    on one unknown delivery come and go together, so `max <= 0` over quantities 0 and 1 of one
#:    unknown delivery is false, where /4 took each member on its own and left it unknown.
#: 6: those completions are made for each group of members linked by the propositions they rest
#:    on, by itself (gaf.arith._linked): members sharing none come and go independently, so the
#:    limit of ten propositions (``COMPLETED_AT_MOST``) applies to a group, where /5 took every
#:    member on its own once all of them together rested on more than ten.
IMPLEMENTATION = "gaf-projection/6"

__all__ = [
    "IMPLEMENTATION",
    "TRUTH_OF",
    "AcceptReport",
    "Candidate",
    "Evaluated",
    "PolicyFacts",
    "Projected",
    "ReviewPolicy",
    "accept",
    "bind_head",
    "closed_scopes",
    "cone_claims",
    "cones_claims",
    "cone_predicates",
    "declaration_problems",
    "established_predicates",
    "evaluate",
    "evaluate_claims",
    "evaluate_over",
    "evaluated_entries",
    "ground_of",
    "in_cone",
    "program_of",
    "project",
    "proposition_of",
    "recorded_review",
    "recorded_reviews",
]
