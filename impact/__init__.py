"""Impact analysis: what rests on a source, a claim, a closed scope or a policy version."""

from impact.analysis import (
    Affected,
    ImpactReport,
    Limits,
    claim_retracted,
    new_claim,
    policy_changed,
    scopes_hit,
    source_invalidated,
    walk,
)

__all__ = [
    "Affected",
    "ImpactReport",
    "Limits",
    "claim_retracted",
    "new_claim",
    "policy_changed",
    "scopes_hit",
    "source_invalidated",
    "walk",
]
