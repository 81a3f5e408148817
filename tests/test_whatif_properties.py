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

from datetime import datetime, timedelta, timezone

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gaf.records import GAF, Agent, Claim, Closure, Projection, Source, VerdictRules
from gaf.whatif import Change, _apply, _judge, search

AT = datetime(2026, 7, 15, tzinfo=timezone.utc)
SUBJECT = "case:1"
BASE = ("p0", "p1", "p2", "p3")
OBSERVER = Agent(key="observer", name="observer", agent_type="software").id
SOURCES = [Source(key=f"s{i}", name=f"source {i}").id for i in range(2)]
VALID = {"start": "2026-07-01", "end": "2026-08-01"}


def _statement(predicate: str, polarity: str) -> dict:
    return {"subject": SUBJECT, "predicate": predicate, "polarity": polarity, "valid": VALID}


def _claim(source: str, predicate: str, polarity: str, n: int | None) -> Claim:
    # Stored claims were seen before the closure's as-of; added ones arrive at it, as the
    # search's hypotheses do (when a source speaks can decide which of its words counts).
    seen = AT if n is None else AT - timedelta(hours=1 + n)
    return Claim(source=source, observer=OBSERVER, observed_at=seen, recorded_at=seen,
                 transformation="api_export", statements=[_statement(predicate, polarity)])  # fmt: skip


@st.composite
def literal(draw, predicates, var: str) -> str:
    negated = draw(st.booleans())
    return f"{'not ' if negated else ''}{draw(st.sampled_from(predicates))}({var})"


@st.composite
def case(draw):
    # The first source is authoritative for some predicates; the second may state any of them.
    trust = [{"source": SOURCES[0], "predicates": sorted(draw(st.sets(st.sampled_from(BASE), min_size=1))), "authoritative": True},
             {"source": SOURCES[1], "predicates": list(BASE)}]  # fmt: skip
    closed = sorted(draw(st.sets(st.sampled_from(BASE), max_size=2)))
    completeness = [{"source": SOURCES[0], "predicate": p, "subject": "case:*", "valid": VALID, "as_of": "2026-07-10T00:00:00Z"}
                    for p in closed]  # fmt: skip
    derived = []
    for k in range(draw(st.integers(0, 2))):
        body = draw(st.lists(literal(BASE, "?R"), min_size=1, max_size=2))
        if all(b.startswith("not ") for b in body):
            body = [body[0].removeprefix("not "), *body[1:]]  # a rule needs a positive literal to bind ?R
        derived.append({"name": f"d{k}", "version": 1, "head": f"d{k}(?R)", "when": body})
    policy = Projection(name="random", version=1, question="q", completeness=completeness, trust=trust,
                        derivation_rules=derived, conclusions=[d["name"] for d in derived])  # fmt: skip
    premises = (*BASE, *(d["name"] for d in derived))
    rules = []
    for k in range(draw(st.integers(1, 3))):
        role = "warrant" if k == 0 else draw(st.sampled_from(["warrant", "rebuttal", "defeater"]))
        condition = draw(st.lists(literal(premises, "?subject"), min_size=1, max_size=2))
        if all(c.startswith("not ") for c in condition):
            condition = [condition[0].removeprefix("not "), *condition[1:]]
        rule = {"name": f"r{k}", "role": role, "condition": condition, "qualifier": draw(st.sampled_from([0.5, 1.0]))}
        if role == "defeater":
            rule["strength"] = "defeater"
        rules.append(rule)
    attackers = [r["name"] for r in rules if r["role"] != "warrant"]
    warrants = [r["name"] for r in rules if r["role"] == "warrant"]
    defeats = [{"attacker": a, "attacked": w} for a in attackers for w in warrants if draw(st.booleans())]
    verdict_rules = VerdictRules(name="random", version=1, conclusion="c", rules=rules, defeats=defeats,
                                 bands=[{"label": "yes", "low": 0.25, "high": 1}, {"label": "no", "low": -1, "high": -0.25}])  # fmt: skip
    claims = []
    for n, (source, predicate, polarity) in enumerate(
        draw(st.lists(st.tuples(st.sampled_from(SOURCES), st.sampled_from(BASE), st.sampled_from(["affirmed", "denied"])),
                      max_size=4, unique=True))):  # fmt: skip
        claims.append(_claim(source, predicate, polarity, n))
    gaf = GAF(projection=policy.id, facts=[])
    closure = Closure(question="q", subject=SUBJECT, as_of=AT, gaf=gaf.id, completeness=[d.id for d in policy.completeness],
                      projection=policy.id, projection_version=1, implementation=policy.implementation,
                      rules=verdict_rules.id, rules_version=1, engine="gaf-hcategoriser/1", closed_at=AT)  # fmt: skip
    return policy, verdict_rules, claims, closure


def _universe(claims: list[Claim]) -> list[Change]:
    """Every single change the brute force tries: each retraction, each possible added claim."""
    out = [Change("retract", c, "brute force") for c in claims]
    for source in SOURCES:
        for predicate in BASE:
            for polarity in ("affirmed", "denied"):
                out.append(Change("add", _claim(source, predicate, polarity, None), "brute force"))
    return out


def _effect(change: Change) -> tuple:
    """What a change does, whoever the added claim is attributed to."""
    if change.kind == "retract":
        return ("retract", change.claim.id)
    (s,) = change.claim.statements
    return ("add", s.subject, s.predicate, s.polarity)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case())
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
