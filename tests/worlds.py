"""Random worlds: the project's one generator of small, in-memory GAF inputs.

Property tests need the same thing again and again — a projection policy, verdict rules,
claims and the closure they would be judged in — drawn at random but small enough that
brute force over every possible change stays cheap. This module is where such worlds are
made, so a property test says what it checks and never how to build a world; a test that
needs a new kind of world (parties, untrusted sources, claims with several statements)
adds an option to ``world`` here rather than writing a second generator.

A world is one subject (``SUBJECT``), a handful of base predicates (``BASE``), two
sources (``SOURCES``: the first authoritative for some predicates and the only one that
declares closed scopes, the second trusted for all of them), derivation rules with
negation, and verdict rules with warrants, rebuttals, defeaters and attacks. Nothing is
stored: the records are built in memory and handed to the engines directly.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any, NamedTuple

from hypothesis import strategies as st

from gaf.records import GAF, Agent, Claim, Closure, Projection, Source, VerdictRules

#: The closure's as-of: stored claims are seen before it, added ones arrive at it.
AT = datetime(2026, 7, 15, tzinfo=timezone.utc)
SUBJECT = "case:1"
BASE = ("p0", "p1", "p2", "p3")
POLARITIES = ("affirmed", "denied")
OBSERVER = Agent(key="observer", name="observer", agent_type="software").id
SOURCES = [Source(key=f"s{i}", name=f"source {i}").id for i in range(2)]
VALID = {"start": "2026-07-01", "end": "2026-08-01"}


class World(NamedTuple):
    """What a closure is judged from: unpacks as ``policy, rules, claims, closure``."""

    policy: Projection
    rules: VerdictRules
    claims: list[Claim]
    closure: Closure


def statement(predicate: str, polarity: str) -> dict[str, Any]:
    """A statement about the world's subject over its valid interval."""
    return {"subject": SUBJECT, "predicate": predicate, "polarity": polarity, "valid": VALID}


def claim(source: str, predicate: str, polarity: str, n: int | None) -> Claim:
    """The n-th stored claim, or (n is None) one arriving at the closure's as-of."""
    # Stored claims were seen before the closure's as-of; added ones arrive at it, as the
    # what-if search's hypotheses do (when a source speaks can decide which of its words counts).
    seen = AT if n is None else AT - timedelta(hours=1 + n)
    return Claim(source=source, observer=OBSERVER, observed_at=seen, recorded_at=seen,
                 transformation="api_export", statements=[statement(predicate, polarity)])  # fmt: skip


def additions() -> list[Claim]:
    """Every claim that could be added to a world: from each source, about each base
    predicate, affirmed or denied, arriving at the closure's as-of."""
    return [claim(source, predicate, polarity, None) for source in SOURCES for predicate in BASE for polarity in POLARITIES]


@st.composite
def literal(draw, predicates, var: str) -> str:
    """A rule literal over one of the predicates, negated or not."""
    negated = draw(st.booleans())
    return f"{'not ' if negated else ''}{draw(st.sampled_from(predicates))}({var})"


def _positive_first(body: list[str]) -> list[str]:
    # A rule needs a positive literal to bind its variable.
    if all(b.startswith("not ") for b in body):
        return [body[0].removeprefix("not "), *body[1:]]
    return body


def build(trusted: list[str], closed: list[str], derived: list[list[str]], verdict: list[dict[str, Any]],
          defeats: list[tuple[str, str]], claims: list[tuple[str, str, str]]) -> World:  # fmt: skip
    """A world from plain values, the way ``world`` draws it — so a failing example can be
    written down and pinned.

    ``trusted``: the predicates the first source is authoritative for; ``closed``: the
    predicates it declares complete; ``derived``: the bodies of rules ``d0``, ``d1``, …;
    ``verdict``: rules ``r0``, ``r1``, … as ``{"role", "condition", "qualifier"}``;
    ``defeats``: (attacker, attacked) rule names; ``claims``: (source index, predicate, polarity)."""
    trust = [{"source": SOURCES[0], "predicates": sorted(trusted), "authoritative": True},
             {"source": SOURCES[1], "predicates": list(BASE)}]  # fmt: skip
    completeness = [{"source": SOURCES[0], "predicate": p, "subject": "case:*", "valid": VALID, "as_of": "2026-07-10T00:00:00Z"}
                    for p in sorted(closed)]  # fmt: skip
    rules = [{"name": f"d{k}", "version": 1, "head": f"d{k}(?R)", "when": _positive_first(body)} for k, body in enumerate(derived)]
    policy = Projection(name="random", version=1, question="q", completeness=completeness, trust=trust,
                        derivation_rules=rules, conclusions=[d["name"] for d in rules])  # fmt: skip
    verdict_rules = []
    for k, r in enumerate(verdict):
        rule = {"name": f"r{k}", "role": r["role"], "condition": _positive_first(r["condition"]), "qualifier": r["qualifier"]}
        if r["role"] == "defeater":
            rule["strength"] = "defeater"
        verdict_rules.append(rule)
    judged = VerdictRules(name="random", version=1, conclusion="c", rules=verdict_rules,
                          defeats=[{"attacker": a, "attacked": w} for a, w in defeats],
                          bands=[{"label": "yes", "low": 0.25, "high": 1}, {"label": "no", "low": -1, "high": -0.25}])  # fmt: skip
    stored = [claim(SOURCES[s], predicate, polarity, n) for n, (s, predicate, polarity) in enumerate(claims)]
    gaf = GAF(projection=policy.id, facts=[])
    closure = Closure(question="q", subject=SUBJECT, as_of=AT, gaf=gaf.id, completeness=[d.id for d in policy.completeness],
                      projection=policy.id, projection_version=1, implementation=policy.implementation,
                      rules=judged.id, rules_version=1, engine="gaf-hcategoriser/1", closed_at=AT)  # fmt: skip
    return World(policy, judged, stored, closure)


@st.composite
def world(draw) -> World:
    """A random world: policy, verdict rules, up to four claims, and the closure."""
    # The first source is authoritative for some predicates; the second may state any of them.
    trusted = sorted(draw(st.sets(st.sampled_from(BASE), min_size=1)))
    closed = sorted(draw(st.sets(st.sampled_from(BASE), max_size=2)))
    derived = [draw(st.lists(literal(BASE, "?R"), min_size=1, max_size=2)) for _ in range(draw(st.integers(0, 2)))]
    premises = (*BASE, *(f"d{k}" for k in range(len(derived))))
    verdict = []
    for k in range(draw(st.integers(1, 3))):
        role = "warrant" if k == 0 else draw(st.sampled_from(["warrant", "rebuttal", "defeater"]))
        condition = draw(st.lists(literal(premises, "?subject"), min_size=1, max_size=2))
        verdict.append({"role": role, "condition": condition, "qualifier": draw(st.sampled_from([0.5, 1.0]))})
    attackers = [f"r{k}" for k, r in enumerate(verdict) if r["role"] != "warrant"]
    warrants = [f"r{k}" for k, r in enumerate(verdict) if r["role"] == "warrant"]
    defeats = [(a, w) for a in attackers for w in warrants if draw(st.booleans())]
    claims = draw(st.lists(st.tuples(st.sampled_from(range(len(SOURCES))), st.sampled_from(BASE), st.sampled_from(POLARITIES)),
                           max_size=4, unique=True))  # fmt: skip
    return build(trusted, closed, derived, verdict, defeats, claims)
