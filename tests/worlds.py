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

``world(values=True)`` draws worlds whose statements carry a second argument — an object
(a key) or a value of any type a statement allows (a boolean, an integer, a float, a
string) — and whose rules name those arguments, as constants or through a variable. Each
predicate keeps one argument (or none) throughout a world, so every claim about it states
one proposition: worlds of propositions that differ only in their argument, read alike by
``p(?subject)``, are for a test that wants them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any

from hypothesis import strategies as st

from gaf.records import GAF, Agent, Claim, Closure, Projection, Source, VerdictRules
from gaf.rules import Atom, Not, atom, not_

#: The closure's as-of: stored claims are seen before it, added ones arrive at it.
AT = datetime(2026, 7, 15, tzinfo=timezone.utc)
SUBJECT = "case:1"
BASE = ("p0", "p1", "p2", "p3")
POLARITIES = ("affirmed", "denied")
OBSERVER = Agent(key="observer", name="observer", agent_type="software").id
SOURCES = [Source(key=f"s{i}", name=f"source {i}").id for i in range(2)]
VALID = {"start": "2026-07-01", "end": "2026-08-01"}


#: A statement's second argument, as its fields: none ``{}``, ``{"object": key}`` or ``{"value": scalar}``.
Argument = dict[str, Any]


@dataclass(frozen=True)
class World:
    """What a closure is judged from, and what may be said in it."""

    policy: Projection
    rules: VerdictRules
    claims: list[Claim]
    closure: Closure
    #: each predicate's second argument, if it has one (``world(values=True)``)
    arguments: dict[str, Argument] = field(default_factory=dict)


def statement(predicate: str, polarity: str, argument: Argument | None = None) -> dict[str, Any]:
    """A statement about the world's subject over its valid interval."""
    return {"subject": SUBJECT, "predicate": predicate, **(argument or {}), "polarity": polarity, "valid": VALID}


def claim(source: str, predicate: str, polarity: str, n: int | None, argument: Argument | None = None) -> Claim:
    """The n-th stored claim, or (n is None) one arriving at the closure's as-of."""
    # Stored claims were seen before the closure's as-of; added ones arrive at it, as the
    # what-if search's hypotheses do (when a source speaks can decide which of its words counts).
    seen = AT if n is None else AT - timedelta(hours=1 + n)
    return Claim(source=source, observer=OBSERVER, observed_at=seen, recorded_at=seen,
                 transformation="api_export", statements=[statement(predicate, polarity, argument)])  # fmt: skip


def additions(arguments: dict[str, Argument] | None = None) -> list[Claim]:
    """Every claim that could be added to a world: from each source, about each base
    predicate (with its argument, if it has one), affirmed or denied, arriving at the
    closure's as-of."""
    arguments = arguments or {}
    return [claim(source, predicate, polarity, None, arguments.get(predicate)) for source in SOURCES for predicate in BASE
            for polarity in POLARITIES]  # fmt: skip


def scalars() -> st.SearchStrategy[Any]:
    """Every type of value a statement may carry, as canonical JSON can hold it: finite
    floats, and integers JSON holds exactly (within ±(2**53 - 1)).

    Strings are keys here: the projection names the atoms a derivation leaves unknown as
    propositions, taking a string for an object, and ``""`` or ``" x"`` is no object."""
    return st.one_of(st.booleans(), st.integers(-(2**53 - 1), 2**53 - 1), st.floats(allow_nan=False, allow_infinity=False),
                     _keys())  # fmt: skip


def _keys() -> st.SearchStrategy[str]:
    return st.text(alphabet="ab: ", min_size=1, max_size=3).filter(lambda k: k == k.strip())


def arguments() -> st.SearchStrategy[dict[str, Argument]]:
    """Each base predicate's second argument: none, an object, or a value.

    A world never holds both ``true`` and ``1`` (or ``false`` and ``0``): the derivation
    engine compares terms as Python does, where they are equal, though JSON and every
    proposition id tell them apart."""
    one = st.one_of(st.just({}), _keys().map(lambda k: {"object": k}), scalars().map(lambda v: {"value": v}))
    return st.fixed_dictionaries({p: one for p in BASE}).filter(_apart)


def _apart(arguments: dict[str, Argument]) -> bool:
    values = [v for a in arguments.values() for v in a.values()]
    flags = [v for v in values if isinstance(v, bool)]
    return not any(f == v for f in flags for v in values if not isinstance(v, bool) and isinstance(v, (int, float)))


@st.composite
def literal(draw, predicates, var: str) -> str:
    """A rule literal over one of the predicates, negated or not."""
    negated = draw(st.booleans())
    return f"{'not ' if negated else ''}{draw(st.sampled_from(predicates))}({var})"


@st.composite
def argued_literal(draw, predicates, var: str, arguments: dict[str, Argument], joins: bool = False) -> Atom | Not:
    """A rule literal whose second argument is absent or the predicate's own; with ``joins``,
    also ``p(var, ?V)`` or ``p(?V)``, so a value one statement carries becomes the subject
    of another premise.

    A constant is only ever the predicate's own argument: ``p(?R, 3)`` beside claims of
    ``p(x, 1)`` would make the derivation's trace name ``p(x, 3)``, a second proposition
    of an atom ``p(?subject)`` reads — a world of twins, which this one is not."""
    predicate = draw(st.sampled_from(predicates))
    own = [(var, v) for v in arguments.get(predicate, {}).values()]
    a = atom(predicate, *draw(st.sampled_from([(var, None), *own, *([(var, "?V"), ("?V", None)] if joins else [])])))
    return not_(a) if draw(st.booleans()) else a


#: A rule literal: its text (``not p1(?R)``) or, when it names a value, the clause itself.
RuleLiteral = str | Atom | Not


def _negated(literal: RuleLiteral) -> bool:
    return isinstance(literal, Not) or (isinstance(literal, str) and literal.startswith("not "))


def _positive_first(body: list[RuleLiteral], var: str) -> list[RuleLiteral]:
    # A rule needs a positive literal to bind its variables: the first one is made positive
    # if none is, and where no positive ``p(var, ?V)`` binds ``?V``, it is left out. The one
    # that binds it comes first: when nothing matches it, the atoms before it would be lost
    # from the unknown premises (the derivation engine keeps only the pattern it stopped at).
    if all(_negated(b) for b in body):
        first = body[0]
        body = [first.removeprefix("not ") if isinstance(first, str) else first.not_, *body[1:]]  # type: ignore[union-attr]
    binding = [b for b in body if isinstance(b, Atom) and b.object == "?V"]
    if binding:
        return [binding[0], *(b for b in body if b is not binding[0])]

    def unbound(a: Atom) -> Atom:
        return atom(a.predicate, var if a.subject == "?V" else a.subject, None if a.object == "?V" else a.object)

    return [b if isinstance(b, str) else not_(unbound(b.not_)) if isinstance(b, Not) else unbound(b) for b in body]  # type: ignore[arg-type]


def build(trusted: list[str], closed: list[str], derived: list[list[RuleLiteral]], verdict: list[dict[str, Any]],
          defeats: list[tuple[str, str]], claims: list[tuple[int, str, str]], arguments: dict[str, Argument] | None = None) -> World:  # fmt: skip
    """A world from plain values, the way ``world`` draws it — so a failing example can be
    written down and pinned.

    ``trusted``: the predicates the first source is authoritative for; ``closed``: the
    predicates it declares complete; ``derived``: the bodies of rules ``d0``, ``d1``, …;
    ``verdict``: rules ``r0``, ``r1``, … as ``{"role", "condition", "qualifier"}``;
    ``defeats``: (attacker, attacked) rule names; ``claims``: (source index, predicate,
    polarity), each carrying its predicate's argument from ``arguments``."""
    trust = [{"source": SOURCES[0], "predicates": sorted(trusted), "authoritative": True},
             {"source": SOURCES[1], "predicates": list(BASE)}]  # fmt: skip
    completeness = [{"source": SOURCES[0], "predicate": p, "subject": "case:*", "valid": VALID, "as_of": "2026-07-10T00:00:00Z"}
                    for p in sorted(closed)]  # fmt: skip
    rules = [{"name": f"d{k}", "version": 1, "head": f"d{k}(?R)", "when": _positive_first(body, "?R")} for k, body in enumerate(derived)]
    policy = Projection(name="random", version=1, question="q", completeness=completeness, trust=trust,
                        derivation_rules=rules, conclusions=[d["name"] for d in rules])  # fmt: skip
    verdict_rules = []
    for k, r in enumerate(verdict):
        rule = {"name": f"r{k}", "role": r["role"], "condition": _positive_first(r["condition"], "?subject"), "qualifier": r["qualifier"]}
        if r["role"] == "defeater":
            rule["strength"] = "defeater"
        verdict_rules.append(rule)
    judged = VerdictRules(name="random", version=1, conclusion="c", rules=verdict_rules,
                          defeats=[{"attacker": a, "attacked": w} for a, w in defeats],
                          bands=[{"label": "yes", "low": 0.25, "high": 1}, {"label": "no", "low": -1, "high": -0.25}])  # fmt: skip
    arguments = arguments or {}
    stored = [claim(SOURCES[s], p, polarity, n, arguments.get(p)) for n, (s, p, polarity) in enumerate(claims)]
    gaf = GAF(projection=policy.id, facts=[])
    closure = Closure(question="q", subject=SUBJECT, as_of=AT, gaf=gaf.id, completeness=[d.id for d in policy.completeness],
                      projection=policy.id, projection_version=1, implementation=policy.implementation,
                      rules=judged.id, rules_version=1, engine="gaf-hcategoriser/1", closed_at=AT)  # fmt: skip
    return World(policy, judged, stored, closure, arguments)


@st.composite
def world(draw, values: bool = False) -> World:
    """A random world: policy, verdict rules, up to four claims, and the closure.

    With ``values``, statements and base literals carry the world's ``arguments()``, and
    verdict conditions join on them. Derivation bodies take no ``?V``: derive binds it to
    nothing when a statement has no second argument, and the Derivation record refuses that."""
    # The first source is authoritative for some predicates; the second may state any of them.
    trusted = sorted(draw(st.sets(st.sampled_from(BASE), min_size=1)))
    closed = sorted(draw(st.sets(st.sampled_from(BASE), max_size=2)))
    argued = draw(arguments()) if values else {}
    base = argued_literal(BASE, "?R", argued) if values else literal(BASE, "?R")
    derived = [draw(st.lists(base, min_size=1, max_size=2)) for _ in range(draw(st.integers(0, 2)))]
    premises = (*BASE, *(f"d{k}" for k in range(len(derived))))
    verdict = []
    for k in range(draw(st.integers(1, 3))):
        role = "warrant" if k == 0 else draw(st.sampled_from(["warrant", "rebuttal", "defeater"]))
        conditions = (st.one_of(argued_literal(BASE, "?subject", argued, joins=True), literal(premises, "?subject")) if values
                      else literal(premises, "?subject"))  # fmt: skip
        condition = draw(st.lists(conditions, min_size=1, max_size=2))
        verdict.append({"role": role, "condition": condition, "qualifier": draw(st.sampled_from([0.5, 1.0]))})
    attackers = [f"r{k}" for k, r in enumerate(verdict) if r["role"] != "warrant"]
    warrants = [f"r{k}" for k, r in enumerate(verdict) if r["role"] == "warrant"]
    defeats = [(a, w) for a in attackers for w in warrants if draw(st.booleans())]
    claims = draw(st.lists(st.tuples(st.sampled_from(range(len(SOURCES))), st.sampled_from(BASE), st.sampled_from(POLARITIES)),
                           max_size=4, unique=True))  # fmt: skip
    return build(trusted, closed, derived, verdict, defeats, claims, argued)


# ---------------------------------------------------------------------- worlds with excluded claims

#: Who speaks in an excluding world: the two trusted sources, a source trusted for nothing,
#: and a party to the question (through the second source, trusted for the conclusions).
SPEAKERS = ("s0", "s1", "untrusted", "party")
PARTY_AGENT = Agent(key="party", name="a party to the question", agent_type="organisation")
REVIEWER_AGENT = Agent(key="reviewer", name="reviewer", agent_type="software")
UNTRUSTED_SOURCE = Source(key="s-untrusted", name="a source trusted for nothing")
#: Every agent and source record a world's claims and projections point at, to store first.
RECORDS = [Agent(key="observer", name="observer", agent_type="software"), PARTY_AGENT, REVIEWER_AGENT,
           *(Source(key=f"s{i}", name=f"source {i}") for i in range(2)), UNTRUSTED_SOURCE]  # fmt: skip


def with_exclusions(world: World, said: list[tuple[str, list[tuple[str, str]]]]) -> World:
    """The world with the party named and more claims: (speaker, [(predicate, polarity), …]).

    Each added claim may carry several statements, so one claim can be admitted for
    some propositions and not others: the first source states predicates it is not
    trusted for, the untrusted source states anything (denials inside closed scopes,
    derived conclusions), and the party states the conclusions the rules derive —
    through a source trusted for them, so that the party rule is what excludes it.
    """
    p = world.policy
    trust = [t.model_dump() for t in p.trust]
    trust[1]["predicates"] = sorted({*trust[1]["predicates"], *p.conclusions})
    policy = Projection(**{**p.model_dump(exclude={"id", "trust", "parties"}), "trust": trust, "parties": [PARTY_AGENT.id]})
    sources = {"s0": SOURCES[0], "s1": SOURCES[1], "untrusted": UNTRUSTED_SOURCE.id, "party": SOURCES[1]}
    added = []
    for n, (speaker, statements) in enumerate(said, start=len(world.claims)):
        seen = AT - timedelta(hours=1 + n)
        added.append(Claim(source=sources[speaker], observer=PARTY_AGENT.id if speaker == "party" else OBSERVER,
                           observed_at=seen, recorded_at=seen, transformation="api_export",
                           statements=[statement(pred, pol) for pred, pol in statements]))  # fmt: skip
    closure = Closure(**{**world.closure.model_dump(exclude={"id", "projection"}), "projection": policy.id})
    return World(policy, world.rules, [*world.claims, *added], closure, world.arguments)


@st.composite
def excluding_world(draw) -> World:
    """A random world (``world()``) with up to four more claims, each of one to three
    statements, from every kind of speaker: admitted for some propositions and not others."""
    base = draw(world())
    conclusions = list(base.policy.conclusions)
    predicates = {"s0": list(BASE), "s1": list(BASE), "untrusted": [*BASE, *conclusions], "party": [*BASE, *conclusions]}
    said = []
    for speaker in draw(st.lists(st.sampled_from(SPEAKERS), max_size=4)):
        statements = draw(st.lists(st.tuples(st.sampled_from(predicates[speaker]), st.sampled_from(POLARITIES)),
                                   min_size=1, max_size=3, unique_by=lambda s: s[0]))  # fmt: skip
        said.append((speaker, statements))
    return with_exclusions(base, said)


# ---------------------------------------------------------------------- worlds a test pins


def contested_premise_with_a_twin() -> World:
    """The README's failing run (issue 16): ``missed: add NOT p2(case:1) — brute force
    (undetermined → no)``.

    A trusted source both affirms and denies p2, so p2 is unknown; d0's trace names p2
    again without the claims' valid interval — a twin proposition of the same atom. Only
    the authoritative source's denial of the claimed p2 settles the atom: a denial of the
    twin leaves the claimed p2 unknown, and the atom with it."""
    return build(
        trusted=["p2"], closed=[], derived=[["not p2(?R)", "p2(?R)"]],
        verdict=[{"role": "warrant", "condition": ["p2(?subject)"], "qualifier": 1.0},
                 {"role": "rebuttal", "condition": ["not p2(?subject)"], "qualifier": 1.0}],
        defeats=[], claims=[(1, "p2", "affirmed"), (1, "p2", "denied")],
    )  # fmt: skip
