"""What-if on random rule graphs: findings are real, and no flipping single change is missed.

Each example draws a small projection policy (trusted sources, closed scopes,
derivation rules with negation), verdict rules (warrants, rebuttals, defeaters,
attacks) and claims about one subject, all in memory. The search must report
only changes that really move the verdict, and — run without bounds being hit —
every single change that flips the label, as found by brute force over a wider
universe: retracting any claim, or adding any claim (from any source, affirmed
or denied, arriving at the closure's as-of) about any base predicate.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings

from gaf.records import Claim
from gaf.whatif import Change, _apply, _judge, search
from tests.worlds import additions, world


def _universe(claims: list[Claim]) -> list[Change]:
    """Every single change the brute force tries: each retraction, each possible added claim."""
    return [Change("retract", c, "brute force") for c in claims] + [Change("add", c, "brute force") for c in additions()]


def _effect(change: Change) -> tuple:
    """What a change does, whoever the added claim is attributed to."""
    if change.kind == "retract":
        return ("retract", change.claim.id)
    (s,) = change.claim.statements
    return ("add", s.subject, s.predicate, s.polarity)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(world())
def test_every_finding_moves_the_verdict_and_no_flipping_single_change_is_missed(drawn):
    policy, rules, claims, closure = drawn
    report = search(policy, rules, claims, closure, max_size=1, seconds=600)
    assert report.complete
    base, _ = _judge(policy, rules, claims, closure)
    for finding in report.findings:  # real: applying the change gives what the report says
        after, _ = _judge(policy, rules, _apply(claims, finding.changes), closure)
        assert (after.label, after.strength, (after.low, after.high)) == (finding.new_label, finding.new_strength, finding.new_interval)
        assert (after.label, after.strength, after.low, after.high) != (base.label, base.strength, base.low, base.high)
    found = {_effect(c) for f in report.findings if f.flips for c in f.changes}
    for change in _universe(claims):  # complete: every single change that flips the label is found
        after, _ = _judge(policy, rules, _apply(claims, [change]), closure)
        if after.label != base.label:
            assert _effect(change) in found, f"missed: {change.describe()} ({base.label} → {after.label})"
