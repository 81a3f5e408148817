"""Impact analysis: what rests on a source, a claim, a pipeline run, a closed scope or a policy version."""

from impact.analysis import (
    Affected,
    ImpactReport,
    Limits,
    claim_retracted,
    new_claim,
    paused_collection,
    policy_changed,
    run_invalidated,
    scopes_hit,
    source_invalidated,
    walk,
)
from impact.confirm import Change, ClosureImpact, Confirmation, FactChange, Reached, confirm, reach, reached

__all__ = [
    "Affected",
    "Change",
    "ClosureImpact",
    "Confirmation",
    "FactChange",
    "ImpactReport",
    "Limits",
    "Reached",
    "claim_retracted",
    "confirm",
    "new_claim",
    "paused_collection",
    "policy_changed",
    "reach",
    "reached",
    "run_invalidated",
    "scopes_hit",
    "source_invalidated",
    "walk",
]
