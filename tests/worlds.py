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

``ledger_world()`` draws the larger worlds impact analysis is checked on, made to be
stored: several sources (trusted, authoritative, trusted for nothing), several subjects
under one policy scoped to every case, claims of several statements with and without a
valid interval, closed scopes from any source, derivation rules with ``not`` over closed
and derived predicates, a closure per subject and actions on some verdicts; ``trigger``
draws a change to one (a source invalidated, a claim retracted, a new claim).
``tests/impact_truth.py`` stores them through gaf's own paths.

``cone_questions()`` draws a stored world's ledger with source invalidations recorded at
several times, and several (policy, as-of) questions of other scopes, predicates and cut-offs
about it: what the cone of each reads, asked one at a time or all at once.

``hold_world()`` draws several subjects, each due or not and held or not under holds of
several kinds, with the holds declared complete for some subjects only, and a rule that
reads ``not`` over whether a subject is held — so what is known of one subject must never
settle another.

``openlineage_event()`` draws OpenLineage run, job and dataset events with the facets gaf
maps (schema, output statistics, data-quality assertions, column lineage) and unknown ones,
over a few shared job and dataset names.

``grouped_world()`` draws facts, not claims: many orders with lines and amounts, each
fact true, unknown or false, some stated twice, some lines in no order, some scopes
closed — what an aggregate ranges over group by group (``GROUPED_AGGREGATES``).

``payments_world()`` draws the rent case in small, in memory: several payments and
instalments, ``allocated(P, R)`` between them, and a closure about one instalment — so a
verdict rests on atoms about other subjects, most of which cannot move it.

``member_world()`` draws an aggregate's members as ``gaf.arith.aggregate`` reads them over a
closed scope — values that hold, and values that might, each on a set of unknown
propositions, in blocks — with every completion's outcome by plain enumeration.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta, timezone
from typing import Any, Literal

from hypothesis import strategies as st

from gaf.records import GAF, Agent, Claim, Closure, Projection, Source, SourceInvalidation, VerdictRules, statement_text
from gaf.rules import Atom, Not, atom, not_
from gaf.types import format_instant

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


def statement(predicate: str, polarity: str, argument: Argument | None = None, *, subject: str = SUBJECT,
              valid: dict[str, str] | None = VALID) -> dict[str, Any]:  # fmt: skip
    """A statement about the world's subject (or another) over the valid interval (or, valid=None, none)."""
    return {"subject": subject, "predicate": predicate, **(argument or {}), "polarity": polarity, **({"valid": valid} if valid else {})}


def said(source: str, statements: list[dict[str, Any]], n: int | None, observer: str = OBSERVER) -> Claim:
    """The n-th stored claim making these statements, or (n is None) one arriving at the closure's as-of."""
    # Stored claims were seen before the closure's as-of; added ones arrive at it, as the
    # what-if search's hypotheses do (when a source speaks can decide which of its words counts).
    seen = AT if n is None else AT - timedelta(hours=1 + n)
    return Claim(source=source, observer=observer, observed_at=seen, recorded_at=seen, transformation="api_export",
                 statements=statements)  # fmt: skip


def claim(source: str, predicate: str, polarity: str, n: int | None, argument: Argument | None = None) -> Claim:
    """The n-th stored claim of one statement, or (n is None) one arriving at the closure's as-of."""
    return said(source, [statement(predicate, polarity, argument)], n)


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


def statements() -> st.SearchStrategy[dict[str, Any]]:
    """A statement as a claim's input spells it: an object, a value (any scalar, or an exact
    decimal with or without a unit or currency), or neither; a valid interval with either
    end open, or none; affirmed or denied. Some are refused as statements (a unit on a
    number that is not exact): the caller keeps those a ``Statement`` accepts."""
    days = st.dates(min_value=datetime(1990, 1, 1).date(), max_value=datetime(2100, 1, 1).date()).map(lambda d: d.isoformat())
    exact = st.decimals(allow_nan=False, allow_infinity=False, places=2, min_value=-(10**12), max_value=10**12)
    target = st.one_of(
        st.just({}),
        _keys().map(lambda k: {"object": k}),
        scalars().map(lambda v: {"value": v}),
        st.tuples(st.one_of(exact, st.integers(-(10**9), 10**9)), st.sampled_from(["EUR", "USD", "kg", "%"]),
                  st.sampled_from(["unit", "currency"])).map(lambda t: {"value": t[0], t[2]: t[1]}),
    )  # fmt: skip
    valid = st.one_of(st.none(), st.fixed_dictionaries({}, optional={"start": days, "end": days}))
    return st.builds(
        lambda subject, predicate, argument, valid, polarity: {
            "subject": subject, "predicate": predicate, **argument, "polarity": polarity, **({"valid": valid} if valid is not None else {})
        },
        _keys(), _keys(), target, valid, st.sampled_from(POLARITIES),
    )  # fmt: skip


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
    completeness = [complete(SOURCES[0], p) for p in sorted(closed)]
    rules = derivation_rules(derived)
    policy = Projection(name="random", version=1, question="q", completeness=completeness, trust=trust,
                        derivation_rules=rules, conclusions=[d["name"] for d in rules])  # fmt: skip
    judged = verdict_rules(verdict, defeats)
    arguments = arguments or {}
    stored = [claim(SOURCES[s], p, polarity, n, arguments.get(p)) for n, (s, p, polarity) in enumerate(claims)]
    gaf = GAF(projection=policy.id, facts=[])
    closure = Closure(question="q", subject=SUBJECT, as_of=AT, gaf=gaf.id, completeness=[d.id for d in policy.completeness],
                      projection=policy.id, projection_version=1, implementation=policy.implementation,
                      rules=judged.id, rules_version=1, engine="gaf-hcategoriser/1", closed_at=AT)  # fmt: skip
    return World(policy, judged, stored, closure, arguments)


def complete(source: str, predicate: str) -> dict[str, Any]:
    """A source's declaration that it is complete for a predicate about every case, over the valid interval."""
    return {"source": source, "predicate": predicate, "subject": "case:*", "valid": VALID, "as_of": "2026-07-10T00:00:00Z"}


def derivation_rules(derived: list[list[RuleLiteral]]) -> list[dict[str, Any]]:
    """Rules ``d0``, ``d1``, … of one variable from their bodies (a positive literal first)."""
    return [{"name": f"d{k}", "version": 1, "head": f"d{k}(?R)", "when": _positive_first(body, "?R")} for k, body in enumerate(derived)]


def verdict_rules(verdict: list[dict[str, Any]], defeats: list[tuple[str, str]]) -> VerdictRules:
    """Rules ``r0``, ``r1``, … from ``{"role", "condition", "qualifier"}``, with the defeat
    edges between them, labelled yes and no by bands."""
    rules = []
    for k, r in enumerate(verdict):
        rule = {"name": f"r{k}", "role": r["role"], "condition": _positive_first(r["condition"], "?subject"), "qualifier": r["qualifier"]}
        if r["role"] == "defeater":
            rule["strength"] = "defeater"
        rules.append(rule)
    return VerdictRules(name="random", version=1, conclusion="c", rules=rules,
                        defeats=[{"attacker": a, "attacked": w} for a, w in defeats],
                        bands=[{"label": "yes", "low": 0.25, "high": 1}, {"label": "no", "low": -1, "high": -0.25}])  # fmt: skip


def judgement(draw: st.DrawFn, conditions: st.SearchStrategy[RuleLiteral]) -> tuple[list[dict[str, Any]], list[tuple[str, str]]]:
    """Draw one to three verdict rules (the first a warrant) whose conditions come from
    ``conditions``, and defeat edges from the attackers to the warrants: what ``build``'s
    ``verdict`` and ``defeats`` take.

    A function of the caller's ``draw``, not a strategy of its own, so that ``world`` draws
    the same examples it drew before ``ledger_world`` shared this with it."""
    verdict = []
    for k in range(draw(st.integers(1, 3))):
        role = "warrant" if k == 0 else draw(st.sampled_from(["warrant", "rebuttal", "defeater"]))
        condition = draw(st.lists(conditions, min_size=1, max_size=2))
        verdict.append({"role": role, "condition": condition, "qualifier": draw(st.sampled_from([0.5, 1.0]))})
    attackers = [f"r{k}" for k, r in enumerate(verdict) if r["role"] != "warrant"]
    warrants = [f"r{k}" for k, r in enumerate(verdict) if r["role"] == "warrant"]
    return verdict, [(a, w) for a in attackers for w in warrants if draw(st.booleans())]


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
    conditions = (st.one_of(argued_literal(BASE, "?subject", argued, joins=True), literal(premises, "?subject")) if values
                  else literal(premises, "?subject"))  # fmt: skip
    verdict, defeats = judgement(draw, conditions)
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


def with_exclusions(world: World, spoken: list[tuple[str, list[tuple[str, str]]]]) -> World:
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
    added = [said(sources[speaker], [statement(pred, pol) for pred, pol in statements], n,
                  PARTY_AGENT.id if speaker == "party" else OBSERVER)
             for n, (speaker, statements) in enumerate(spoken, start=len(world.claims))]  # fmt: skip
    closure = Closure(**{**world.closure.model_dump(exclude={"id", "projection"}), "projection": policy.id})
    return World(policy, world.rules, [*world.claims, *added], closure, world.arguments)


@st.composite
def excluding_world(draw) -> World:
    """A random world (``world()``) with up to four more claims, each of one to three
    statements, from every kind of speaker: admitted for some propositions and not others."""
    base = draw(world())
    conclusions = list(base.policy.conclusions)
    predicates = {"s0": list(BASE), "s1": list(BASE), "untrusted": [*BASE, *conclusions], "party": [*BASE, *conclusions]}
    spoken = []
    for speaker in draw(st.lists(st.sampled_from(SPEAKERS), max_size=4)):
        statements = draw(st.lists(st.tuples(st.sampled_from(predicates[speaker]), st.sampled_from(POLARITIES)),
                                   min_size=1, max_size=3, unique_by=lambda s: s[0]))  # fmt: skip
        spoken.append((speaker, statements))
    return with_exclusions(base, spoken)


# ---------------------------------------------------------------------- stored worlds, and what changes them

#: The subjects a stored world may be about (each gets a closure), and the policy's scope.
SUBJECTS = ("case:1", "case:2", "case:3", "case:4")
#: Every source a stored world may name; the first two are ``SOURCES``' own records.
LEDGER_SOURCES = [Source(key=f"s{i}", name=f"source {i}") for i in range(6)]
#: From when an invalidated source's claims are void, unless a trigger says otherwise: before any of them.
LONG_AGO = AT - timedelta(days=365)

#: Polarities as a stored world draws them: three affirmations to a denial.
LEANING = ("affirmed", "affirmed", "affirmed", "denied")
#: One statement of a stored claim, as plain values: (subject, predicate, polarity, over the valid interval?).
Said = tuple[str, str, str, bool]


@dataclass(frozen=True)
class LedgerWorld:
    """A world to be stored and decided through gaf's own paths, one closure per subject.

    Several sources — some trusted, some authoritative for what they are trusted for,
    some trusted for nothing — speak about several subjects under one policy whose
    scope is every case; each subject in ``subjects`` is closed once, and the verdicts
    of those in ``acted`` are executed by an action. ``invalidations`` are source
    invalidations the ledger holds (a trigger adds one). Nothing here is stored:
    ``tests.impact_truth.materialise`` writes it.
    """

    policy: Projection
    rules: VerdictRules
    #: every source the world names, trusted or not, whether or not it said anything
    sources: list[Source]
    claims: list[Claim]
    subjects: list[str]
    acted: list[str]
    invalidations: list[SourceInvalidation] = field(default_factory=list)

    def trusted(self, source: str) -> bool:
        """Whether the policy lets a source establish anything."""
        return any(t.source == source for t in self.policy.trust)


def build_ledger(trust: list[tuple[list[str], bool]], untrusted: int, closed: list[tuple[int, str]],
                 derived: list[list[RuleLiteral]], verdict: list[dict[str, Any]], defeats: list[tuple[str, str]],
                 claims: list[tuple[int, list[Said]]], subjects: Sequence[str], acted: Sequence[str] = (),
                 corroboration: int = 1) -> LedgerWorld:  # fmt: skip
    """A stored world from plain values, the way ``ledger_world`` draws it — so a failing
    example can be written down and pinned.

    ``trust``: for sources s0, s1, …, the predicates each may establish and whether it is
    authoritative; then ``untrusted`` more sources, trusted for nothing. ``closed``:
    (source index, predicate) declared complete for every case. ``derived``: the bodies of
    ``d0``, ``d1``, … (a body may name an earlier ``d``). ``verdict`` and ``defeats`` as
    ``build`` takes them. ``claims``: (source index, statements), the n-th seen n + 1
    hours before the as-of. ``corroboration``: how many independent sources a proposition
    needs when none is authoritative."""
    sources = LEDGER_SOURCES[: len(trust) + untrusted]
    rules = derivation_rules(derived)
    policy = Projection(
        name="ledger", version=1, question="q", scope={"subjects": ["case:*"]},
        completeness=[complete(sources[i].id, p) for i, p in sorted(closed)],
        trust=[{"source": sources[i].id, "predicates": sorted(preds), "authoritative": auth} for i, (preds, auth) in enumerate(trust)],
        conflict={"corroboration": corroboration}, derivation_rules=rules, conclusions=[d["name"] for d in rules],
    )  # fmt: skip
    stored = [said(sources[i].id, [statement(p, polarity, subject=subject, valid=VALID if valid else None)
                                   for subject, p, polarity, valid in statements], n)
              for n, (i, statements) in enumerate(claims)]  # fmt: skip
    return LedgerWorld(policy, verdict_rules(verdict, defeats), sources, stored, list(subjects), list(acted))


@st.composite
def ledger_world(draw) -> LedgerWorld:
    """A random stored world: three to six sources (one or two trusted for nothing), two to
    four subjects, five to thirty claims of one to three statements (some over the valid
    interval, some without one, affirmed and denied), closed scopes declared by any source,
    derivation rules with ``not`` over base and earlier derived predicates, verdict rules,
    and actions on some verdicts."""
    trust = [(sorted(draw(st.sets(st.sampled_from(BASE), min_size=1))), draw(st.booleans())) for _ in range(draw(st.integers(2, 4)))]
    # Every base predicate is one some trusted source may establish: verdict rules may read any of them.
    uncovered = set(BASE) - {p for preds, _ in trust for p in preds}
    trust[-1] = (sorted({*trust[-1][0], *uncovered}), trust[-1][1])
    untrusted = draw(st.integers(1, 2))
    n = len(trust) + untrusted
    # Trusted sources declare some of what they are trusted for complete; an untrusted one may
    # declare anything, and its declaration closes nothing.
    closed = [(i, p) for i, (preds, _) in enumerate(trust) for p in sorted(draw(st.sets(st.sampled_from(preds), max_size=2)))]
    closed += draw(st.lists(st.tuples(st.integers(len(trust), n - 1), st.sampled_from(BASE)), max_size=1))
    subjects = list(SUBJECTS[: draw(st.integers(2, 4))])
    derived = [draw(st.lists(literal((*BASE, *(f"d{j}" for j in range(k))), "?R"), min_size=1, max_size=2))
               for k in range(draw(st.integers(0, 3)))]  # fmt: skip
    verdict, defeats = judgement(draw, literal((*BASE, *(f"d{k}" for k in range(len(derived)))), "?subject"))
    # Mostly affirmed: where every proposition is both affirmed and denied, nothing is accepted.
    statements = st.tuples(st.sampled_from(subjects), st.sampled_from(BASE), st.sampled_from(LEANING), st.booleans())
    claims = draw(st.lists(st.tuples(st.integers(0, n - 1), st.lists(statements, min_size=1, max_size=3, unique_by=lambda s: s[:2])),
                           min_size=5, max_size=30))  # fmt: skip
    acted = draw(st.lists(st.sampled_from(subjects), max_size=2, unique=True))
    return build_ledger(trust, untrusted, closed, derived, verdict, defeats, claims, subjects, acted,
                        corroboration=draw(st.sampled_from([1, 2])))  # fmt: skip


@dataclass(frozen=True)
class Trigger:
    """One change to a stored world that impact analysis is asked about: a source
    invalidated (from ``since`` on), a stored claim retracted, or a new claim arriving at
    the as-of. ``id`` is the source's or the claim's; ``claim`` is the claim added."""

    kind: Literal["invalidate", "retract", "add"]
    id: str
    claim: Claim | None = None
    since: datetime = LONG_AGO

    @classmethod
    def invalidate(cls, source: str, since: datetime = LONG_AGO) -> Trigger:
        return cls("invalidate", source, since=since)

    @classmethod
    def retract(cls, claim_id: str) -> Trigger:
        return cls("retract", claim_id)

    @classmethod
    def add(cls, claim: Claim) -> Trigger:
        return cls("add", claim.id, claim)

    def invalidation(self) -> SourceInvalidation:
        """The record of an invalidation, recorded at the as-of, as ``gaf.reopen.after_invalidation``
        writes it: what a store holding the world is given to tell it of the change."""
        assert self.kind == "invalidate"
        return SourceInvalidation(source=self.id, by=REVIEWER_AGENT.id, reason="the trigger", invalid_from=self.since, recorded_at=AT)

    def applied(self, world: LedgerWorld) -> LedgerWorld:
        """The world after the change: with the invalidation recorded, without the claim, or with it."""
        if self.kind == "invalidate":
            return replace(world, invalidations=[*world.invalidations, self.invalidation()])
        if self.kind == "retract":
            return replace(world, claims=[c for c in world.claims if c.id != self.id])
        assert self.claim is not None
        return world if any(c.id == self.id for c in world.claims) else replace(world, claims=[*world.claims, self.claim])

    def __str__(self) -> str:
        if self.claim is not None:
            return f"add {self.id} from {self.claim.source}: " + ", ".join(
                statement_text(s.predicate, s.subject, denied=s.polarity == "denied") + ("@valid" if s.valid else "")
                for s in self.claim.statements)  # fmt: skip
        return f"{self.kind} {self.id}" + (f" from {format_instant(self.since)}" if self.kind == "invalidate" else "")


@st.composite
def trigger(draw, world: LedgerWorld) -> Trigger:
    """A change drawn from the world: invalidate one of its sources, retract one of its
    claims, or add a claim from one of its sources about any subject — one it has no
    closure for, too — stating base or derived predicates."""
    kind = draw(st.sampled_from(["invalidate", "retract", "add"]))
    if kind == "invalidate":
        return Trigger.invalidate(draw(st.sampled_from(world.sources)).id)
    if kind == "retract":
        return Trigger.retract(draw(st.sampled_from(world.claims)).id)
    statements = draw(st.lists(st.tuples(st.sampled_from(SUBJECTS), st.sampled_from([*BASE, *world.policy.conclusions]),
                                         st.sampled_from(POLARITIES), st.booleans()),
                               min_size=1, max_size=2, unique_by=lambda s: s[:2]))  # fmt: skip
    source = draw(st.sampled_from(world.sources)).id
    return Trigger.add(said(source, [statement(p, pol, subject=s, valid=VALID if v else None) for s, p, pol, v in statements], None))


@st.composite
def changed_world(draw) -> tuple[LedgerWorld, Trigger]:
    """A random stored world and a change drawn from it."""
    w = draw(ledger_world())
    return w, draw(trigger(w))


#: Subject patterns a cone question's policy may be scoped to, over ``SUBJECTS``.
SCOPES = ("*", "case:*", "case:1", "case:2", "case:1*", "case:3", "other:*")


@dataclass(frozen=True)
class ConeQuestions:
    """A stored world's ledger with source invalidations recorded at several times, and
    several (policy, as-of) questions about it: policies of other scopes, predicates and
    cut-offs than the world's own, as-ofs before and after the invalidations."""

    world: LedgerWorld
    questions: list[tuple[Projection, datetime]]


@st.composite
def cone_questions(draw) -> ConeQuestions:
    """A ``ledger_world`` with up to three invalidations (from any time, recorded at any time
    within the claims' span) and two to six questions: each a policy trusting some of the
    world's sources for some predicates, scoped to one or two ``SCOPES``, with or without a
    cut-off, asked as of ``AT`` or some hours before."""
    world = draw(ledger_world())
    hours = st.integers(0, 36)
    invalidations = [
        SourceInvalidation(source=draw(st.sampled_from(world.sources)).id, by=REVIEWER_AGENT.id, reason="drawn",
                           invalid_from=AT - timedelta(hours=draw(hours)), recorded_at=AT - timedelta(hours=draw(hours)))
        for _ in range(draw(st.integers(0, 3)))
    ]  # fmt: skip
    questions = []
    for n in range(draw(st.integers(2, 6))):
        # Few predicate sets, so that policies often read the same ones (and are asked together).
        trust = [{"source": source.id, "predicates": list(draw(st.sampled_from([BASE, BASE[:2], BASE[2:3]])))}
                 for source in draw(st.lists(st.sampled_from(world.sources), min_size=1, max_size=2, unique=True))]  # fmt: skip
        cutoff = draw(st.none() | hours.map(lambda h: AT - timedelta(hours=h)))
        policy = Projection(name=f"cone-{n}", version=1, question="q", trust=trust, cutoff=cutoff,
                            scope={"subjects": draw(st.lists(st.sampled_from(SCOPES), min_size=1, max_size=2, unique=True))})  # fmt: skip
        questions.append((policy, AT - timedelta(hours=draw(st.sampled_from([0, 0, 3, 12])))))
    return ConeQuestions(replace(world, invalidations=invalidations), questions)


# ---------------------------------------------------------------------- worlds a test pins


def contested_premise_with_a_twin() -> World:
    """The README's failing run (issue 16): ``missed: add NOT p2(case:1) — brute force
    (undetermined → no)``.

    A trusted source both affirms and denies p2, so p2 is unknown; d0's trace names p2
    again without the claims' valid interval — a twin proposition of the same atom. Only
    the authoritative source's denial settles the atom; since gaf-projection/3 weighs the
    propositions of one atom together, a denial of the twin settles it as well."""
    return build(
        trusted=["p2"], closed=[], derived=[["not p2(?R)", "p2(?R)"]],
        verdict=[{"role": "warrant", "condition": ["p2(?subject)"], "qualifier": 1.0},
                 {"role": "rebuttal", "condition": ["not p2(?subject)"], "qualifier": 1.0}],
        defeats=[], claims=[(1, "p2", "affirmed"), (1, "p2", "denied")],
    )  # fmt: skip


# ---------------------------------------------------------------------- worlds of quantities

#: The order a quantity world is about, and the deliveries that may be made against it.
ORDER = "case:1"
DELIVERIES = tuple(f"delivery:{k}" for k in range(3))
#: What the claims make of one atom: accepted (s0 affirms), rejected (s0 denies), unknown
#: (s1 affirms and denies), or nothing said.
STATUSES = ("accepted", "rejected", "unknown", "absent")


@dataclass(frozen=True)
class QuantityWorld:
    """An order, up to three deliveries against it, each delivery's quantities, and a policy
    that may declare the deliveries and the quantities complete and their values non-negative.

    ``delivered[k]`` is what the claims make of ``delivered(delivery:k, case:1)``;
    ``quantities[k]`` lists (value, status) for ``qty(delivery:k, value)``."""

    delivered: tuple[str, ...]
    quantities: tuple[tuple[tuple[int, str], ...], ...]
    closed: frozenset[str]
    signed: bool

    def claims(self) -> list[Claim]:
        spoken = [(ORDER, "order", "s0", "affirmed", {})]
        for k, status in enumerate(self.delivered):
            spoken += _spoken(DELIVERIES[k], "delivered", status, {"object": ORDER})
            for value, qty_status in self.quantities[k]:
                spoken += _spoken(DELIVERIES[k], "qty", qty_status, {"value": value})
        return [said(SOURCES[int(source[1])], [statement(p, polarity, argument, subject=subject)], n)
                for n, (subject, p, source, polarity, argument) in enumerate(spoken)]  # fmt: skip

    def policy(self, rules: list[dict[str, Any]]) -> Projection:
        trust = [{"source": SOURCES[0], "predicates": ["delivered", "order", "qty"], "authoritative": True},
                 {"source": SOURCES[1], "predicates": ["delivered", "order", "qty"]}]  # fmt: skip
        completeness = [{"source": SOURCES[0], "predicate": p, "subject": "*", "valid": VALID, "as_of": "2026-07-10T00:00:00Z"}
                        for p in sorted(self.closed)]  # fmt: skip
        return Projection(name="quantities", version=1, question="is the order delivered?", trust=trust,
                          completeness=completeness, derivation_rules=rules, conclusions=[r["name"] for r in rules],
                          signs={"qty": "non-negative"} if self.signed else {})  # fmt: skip


def _spoken(subject: str, predicate: str, status: str, argument: Argument) -> list[tuple[str, str, str, str, Argument]]:
    """The statements that give an atom its status: (subject, predicate, source, polarity, argument)."""
    if status == "accepted":
        return [(subject, predicate, "s0", "affirmed", argument)]
    if status == "rejected":
        return [(subject, predicate, "s0", "denied", argument)]
    if status == "unknown":
        return [(subject, predicate, "s1", "affirmed", argument), (subject, predicate, "s1", "denied", argument)]
    return []


@st.composite
def quantity_world(draw) -> QuantityWorld:
    """A random quantity world: each delivery's status, one or two quantities each with its
    own status, which of ``delivered`` and ``qty`` are declared complete, and whether the
    policy declares quantities non-negative (values may then be negative only when it does not)."""
    signed = draw(st.booleans())
    values = st.integers(0, 9) if signed else st.integers(-3, 9)
    n = draw(st.integers(0, len(DELIVERIES)))
    delivered = tuple(draw(st.sampled_from(STATUSES)) for _ in range(n))
    quantities = tuple(
        tuple(draw(st.lists(st.tuples(values, st.sampled_from(STATUSES)), max_size=2, unique_by=lambda q: q[0])))
        for _ in range(n)
    )
    closed = frozenset(draw(st.sets(st.sampled_from(["delivered", "qty"]))))
    return QuantityWorld(delivered, quantities, closed, signed)


# ---------------------------------------------------------------------- worlds of one-valued predicates

#: How one value of a one-valued predicate is spoken of: s0 (authoritative) affirms it, s1
#: (trusted) affirms it, s1 both affirms and denies it, s0 denies it.
VOICES = ("authoritative", "trusted", "contested", "denied")
PAYMENT = "payment:1"


@dataclass(frozen=True)
class OneValueWorld:
    """A payment whose ``amount`` takes one value, and what is said of up to three values."""

    said: tuple[tuple[int, str], ...]

    def claims(self) -> list[Claim]:
        spoken = [("s0", PAYMENT, "payment", "affirmed", {})]
        for value, voice in self.said:
            argument = {"value": value}
            if voice == "authoritative":
                spoken.append(("s0", PAYMENT, "amount", "affirmed", argument))
            elif voice == "trusted":
                spoken.append(("s1", PAYMENT, "amount", "affirmed", argument))
            elif voice == "contested":
                spoken += [("s1", PAYMENT, "amount", "affirmed", argument), ("s1", PAYMENT, "amount", "denied", argument)]
            else:
                spoken.append(("s0", PAYMENT, "amount", "denied", argument))
        return [said(SOURCES[int(source[1])], [statement(p, polarity, argument, subject=subject)], n)
                for n, (source, subject, p, polarity, argument) in enumerate(spoken)]  # fmt: skip

    def policy(self, rules: list[dict[str, Any]] | None = None) -> Projection:
        trust = [{"source": SOURCES[0], "predicates": ["amount", "payment"], "authoritative": True},
                 {"source": SOURCES[1], "predicates": ["amount"]}]  # fmt: skip
        rules = rules or []
        return Projection(name="one-value", version=1, question="what was paid?", trust=trust, functional=["amount"],
                          derivation_rules=rules, conclusions=[r["name"] for r in rules])  # fmt: skip


@st.composite
def one_value_world(draw) -> OneValueWorld:
    """Up to three values of the payment's amount, each spoken of in one of the ``VOICES``."""
    said_of = draw(st.lists(st.tuples(st.integers(0, 3), st.sampled_from(VOICES)), max_size=3, unique_by=lambda s: s[0]))
    return OneValueWorld(tuple(said_of))


# ---------------------------------------------------------------------- worlds of payments and instalments

#: The instalments and payments a payments world may speak of; its closure is about the first instalment.
INSTALMENTS = tuple(f"rent:{k}" for k in range(3))
PAYMENTS = tuple(f"payment:{k}" for k in range(3))
#: The claim-level predicates of a payments world: ``allocated(P, R)`` and three of one argument.
PAYMENT_PREDICATES = ("instalment", "credited", "reversed", "allocated")
#: The rent case in small: an instalment is paid by a credited payment allocated to it and
#: not reversed; it is in arrears when it is not paid. As in the rent case, the payments are
#: those a ledger complete for ``credited`` lists, so every rule binds its payment there first.
PAYMENT_RULES = [
    {"name": "paid", "version": 1, "head": "paid(?R)",
     "when": ["instalment(?R)", "credited(?P)", "allocated(?P, ?R)", "not reversed(?P)"]},
    {"name": "delinquent", "version": 1, "head": "delinquent(?R)", "when": ["instalment(?R)", "not paid(?R)"]},
]  # fmt: skip
#: The verdict rules a payments world draws from: (role, condition).
PAYMENT_VERDICT = [("warrant", ["paid(?subject)"]), ("rebuttal", ["delinquent(?subject)"]),
                   ("defeater", ["credited(?p)", "allocated(?p, ?subject)", "reversed(?p)"]),
                   ("rebuttal", ["credited(?p)", "reversed(?p)", "not allocated(?p, ?subject)"])]  # fmt: skip


def build_payments(trusted: list[str], closed: list[str], said_of: dict[tuple[str, ...], str], verdict: list[tuple[int, float]],
                   defeats: list[tuple[str, str]]) -> World:  # fmt: skip
    """A payments world from plain values, the way ``payments_world`` draws it.

    ``trusted``: the predicates besides ``credited`` the first source is authoritative
    for (the second is trusted for all); ``closed``: those besides ``credited`` it declares
    complete for every payment and instalment; ``said_of``: what the claims make of each atom — ``(predicate, subject)``
    or ``("allocated", payment, instalment)`` — one of ``STATUSES``; ``verdict``: rules
    ``r0``, ``r1``, … as (index into ``PAYMENT_VERDICT``, qualifier); ``defeats`` as
    ``build`` takes them."""
    trust = [{"source": SOURCES[0], "predicates": sorted({"credited", *trusted}), "authoritative": True},
             {"source": SOURCES[1], "predicates": list(PAYMENT_PREDICATES)}]  # fmt: skip
    completeness = [{"source": SOURCES[0], "predicate": p, "subject": "*", "valid": VALID, "as_of": "2026-07-10T00:00:00Z"}
                    for p in sorted({"credited", *closed})]  # fmt: skip
    policy = Projection(name="payments", version=1, question="is the instalment paid?", completeness=completeness, trust=trust,
                        derivation_rules=PAYMENT_RULES, conclusions=[r["name"] for r in PAYMENT_RULES])  # fmt: skip
    rules = [{"role": PAYMENT_VERDICT[k][0], "condition": PAYMENT_VERDICT[k][1], "qualifier": q} for k, q in verdict]
    judged = verdict_rules(rules, defeats)
    spoken = []
    for atom_of, status in sorted(said_of.items()):
        predicate, subject, *target = atom_of
        spoken += _spoken(subject, predicate, status, {"object": target[0]} if target else {})
    claims = [said(SOURCES[int(source[1])], [statement(p, polarity, argument, subject=subject)], n)
              for n, (subject, p, source, polarity, argument) in enumerate(spoken)]  # fmt: skip
    gaf = GAF(projection=policy.id, facts=[])
    closure = Closure(question="q", subject=INSTALMENTS[0], as_of=AT, gaf=gaf.id, completeness=[d.id for d in policy.completeness],
                      projection=policy.id, projection_version=1, implementation=policy.implementation,
                      rules=judged.id, rules_version=1, engine="gaf-hcategoriser/2", closed_at=AT)  # fmt: skip
    return World(policy, judged, claims, closure)


def payment_atoms(payments: Sequence[str] = PAYMENTS, instalments: Sequence[str] = INSTALMENTS) -> list[tuple[str, ...]]:
    """Every claim-level atom of a payments world over these payments and instalments."""
    return ([("instalment", r) for r in instalments] + [(p, s) for p in ("credited", "reversed") for s in payments]
            + [("allocated", s, r) for s in payments for r in instalments])  # fmt: skip


@st.composite
def payments_world(draw) -> World:
    """A random payments world: one to three payments and instalments, each atom about them
    accepted, rejected, unknown (a trusted source both affirms and denies it) or not said;
    ``credited`` and some other predicates with an authoritative source, ``credited`` and up
    to two others closed; one to three verdict rules (the first the warrant ``paid``) and
    attacks from the others on the warrant."""
    payments = PAYMENTS[: draw(st.integers(1, len(PAYMENTS)))]
    instalments = INSTALMENTS[: draw(st.integers(1, len(INSTALMENTS)))]
    trusted = sorted(draw(st.sets(st.sampled_from(PAYMENT_PREDICATES))))
    closed = sorted(draw(st.sets(st.sampled_from(PAYMENT_PREDICATES), max_size=2)))
    leaning = st.sampled_from(["accepted", "unknown", "unknown", "absent", "rejected"])
    said_of = {a: draw(leaning) for a in payment_atoms(payments, instalments)}
    said_of |= {("instalment", r): draw(st.sampled_from(["accepted", "accepted", "unknown"])) for r in instalments}
    others = draw(st.lists(st.sampled_from(range(1, len(PAYMENT_VERDICT))), max_size=2, unique=True))
    verdict = [(k, draw(st.sampled_from([0.5, 1.0]))) for k in [0, *others]]
    attackers = [f"r{n}" for n, (k, _) in enumerate(verdict) if PAYMENT_VERDICT[k][0] != "warrant"]
    return build_payments(trusted, closed, said_of, verdict, [(a, "r0") for a in attackers if draw(st.booleans())])


# ---------------------------------------------------------------------- impact reports, for the picture


#: The chain's kinds in order: a record of the picture's random reports depends only on earlier ones.
CHAIN = ("claim", "evaluation", "fact", "derivation", "gaf", "closure", "verdict", "action")


@st.composite
def impact_report(draw) -> Any:
    """A random report shaped like the chain — a source, then records of each kind, each depending
    on one to three records of earlier kinds (facts also on derivations, as derived facts do), each
    with a status and a path from the source — without a store: the picture's input, and its oracle."""
    from impact import Affected, ImpactReport

    source = "source:" + "0" * 64
    made: list[str] = [source]
    path = {source: [source]}
    affected, edges = [], set()
    for position, kind in enumerate(CHAIN):
        for n in range(draw(st.integers(0, 30 if kind in ("claim", "evaluation", "fact") else 12))):
            rid = f"{kind}:{position:02d}{n:062x}"
            upstream = draw(st.lists(st.sampled_from(made), min_size=1, max_size=3, unique=True))
            for dependency in upstream:
                edges.add((rid, "USED", dependency))
            path[rid] = [*path[upstream[0]], rid]
            status = draw(st.sampled_from(["invalidated", "weakened", "unconfirmed"]))
            affected.append(Affected(rid, kind, "positive", status, path[rid]))
            made.append(rid)
    return ImpactReport({"kind": "source_invalidated", "id": source}, affected, edges=sorted(edges))


# ---------------------------------------------------------------------- worlds of holds, subject by subject

#: The cases a hold world is about, and the kinds of hold that may be stated on a case.
HELD_CASES = ("case:1", "case:2", "case:3")
HOLDS = ("hold:a", "hold:b")
#: How a case's holds are read: by any hold (``hold(?c, ?h)``), by one kind (``hold(?c, hold:a)``),
#: through a second derived step (``held`` from ``blocked``), or by ``not`` over the pattern itself.
HOLD_RULES = {
    "any": [("blocked", "blocked(?c)", ["hold(?c, ?h)"]), ("flagged", "flagged(?c)", ["case(?c)", "due(?c)", "not blocked@1(?c)"])],
    "one kind": [("blocked", "blocked(?c)", ["hold(?c, hold:a)"]),
                 ("flagged", "flagged(?c)", ["case(?c)", "due(?c)", "not blocked@1(?c)"])],
    "two steps": [("blocked", "blocked(?c)", ["hold(?c, ?h)"]), ("held", "held(?c)", ["blocked@1(?c)"]),
                  ("flagged", "flagged(?c)", ["case(?c)", "due(?c)", "not held@1(?c)"])],
    "not the pattern": [("flagged", "flagged(?c)", ["case(?c)", "due(?c)", "not hold(?c, _)"])],
}  # fmt: skip


@dataclass(frozen=True)
class HoldWorld:
    """Cases, each due or not (``due[k]``, one of ``STATUSES``) and with a status for each kind of
    hold (``holds[k][j]``); the holds declared complete for the cases in ``closed``, and ``due``
    for every case when ``due_closed``. ``rules`` names an entry of ``HOLD_RULES``."""

    due: tuple[str, ...]
    holds: tuple[tuple[str, ...], ...]
    closed: frozenset[str]
    due_closed: bool
    rules: str

    def claims(self) -> list[Claim]:
        spoken = []
        for k, case in enumerate(HELD_CASES):
            spoken += [(case, "case", "s0", "affirmed", {})]
            spoken += _spoken(case, "due", self.due[k], {})
            for j, kind in enumerate(HOLDS):
                spoken += _spoken(case, "hold", self.holds[k][j], {"object": kind})
        return [said(SOURCES[int(source[1])], [statement(p, polarity, argument, subject=subject)], n)
                for n, (subject, p, source, polarity, argument) in enumerate(spoken)]  # fmt: skip

    def policy(self) -> Projection:
        predicates = ["case", "due", "hold"]
        trust = [{"source": SOURCES[0], "predicates": predicates, "authoritative": True},
                 {"source": SOURCES[1], "predicates": predicates}]  # fmt: skip
        declared = [{"source": SOURCES[0], "predicate": "hold", "subject": case, "valid": VALID, "as_of": "2026-07-10T00:00:00Z"}
                    for case in sorted(self.closed)]  # fmt: skip
        if self.due_closed:
            declared.append(complete(SOURCES[0], "due"))
        rules = [{"name": name, "version": 1, "head": head, "when": when} for name, head, when in HOLD_RULES[self.rules]]
        return Projection(name="holds", version=1, question="which cases are flagged?", trust=trust, completeness=declared,
                          derivation_rules=rules, conclusions=sorted({name for name, _, _ in HOLD_RULES[self.rules]}))  # fmt: skip


@st.composite
def hold_world(draw) -> HoldWorld:
    """A random hold world: each case's due and hold statuses, the cases whose holds are complete."""
    statuses = st.sampled_from(STATUSES)
    due = tuple(draw(statuses) for _ in HELD_CASES)
    holds = tuple(tuple(draw(statuses) for _ in HOLDS) for _ in HELD_CASES)
    closed = frozenset(draw(st.sets(st.sampled_from(HELD_CASES))))
    return HoldWorld(due, holds, closed, draw(st.booleans()), draw(st.sampled_from(sorted(HOLD_RULES))))


# ---------------------------------------------------------------------- OpenLineage events

#: Names OpenLineage events draw from: a few, so events meet on jobs and datasets.
OL_NAMES = ("orders", "revenue", "main.customers", " padded ", "shop/eu")


def _ol_dataset(draw: st.DrawFn, side: str) -> dict[str, Any]:
    facets: dict[str, Any] = {}
    if draw(st.booleans()):
        facets["schema"] = {"fields": [{"name": n, "type": t} for n, t in
                                       draw(st.lists(st.tuples(st.sampled_from(("id", "amount", "day")), st.sampled_from(("INTEGER", "TEXT"))), max_size=3, unique_by=lambda f: f[0]))]}  # fmt: skip
    if draw(st.booleans()):
        facets["dataQualityAssertions"] = {"assertions": [{"assertion": a, "success": ok, **({"column": c} if c else {})} for a, ok, c in
                                                          draw(st.lists(st.tuples(st.sampled_from(("not_null", "unique")), st.booleans(), st.sampled_from((None, "id", "amount"))), max_size=3, unique_by=lambda a: (a[0], a[2])))]}  # fmt: skip
    if draw(st.booleans()):
        facets["columnLineage"] = {"fields": {"total": {"inputFields": [{"namespace": "db", "name": "orders", "field": "amount"}]}}}
    if draw(st.booleans()):  # a facet gaf has no line for: kept whole
        facets["custom_" + draw(st.sampled_from(("owner", "tags")))] = {"_producer": "p", "_schemaURL": "s", "x": draw(st.integers(-5, 10**20))}
    dataset: dict[str, Any] = {"namespace": draw(st.sampled_from(("db", "s3://bucket"))), "name": draw(st.sampled_from(OL_NAMES)), "facets": facets}
    if side == "outputs" and draw(st.booleans()):
        dataset["outputFacets"] = {"outputStatistics": {"rowCount": draw(st.integers(0, 10**15)), "size": draw(st.integers(0, 10**18))}}
    return dataset


@st.composite
def openlineage_event(draw: st.DrawFn, before: datetime = datetime(2026, 11, 30, tzinfo=timezone.utc)) -> dict[str, Any]:
    """One valid OpenLineage event (mostly RunEvents, some JobEvents and DatasetEvents) with the
    facets gaf maps (schema, outputStatistics, dataQualityAssertions, columnLineage) and ones it
    keeps whole, its eventTime up to a year before ``before``."""
    kind = draw(st.sampled_from(("run", "run", "job", "dataset")))
    at = before - timedelta(seconds=draw(st.integers(0, 365 * 86400)))
    event: dict[str, Any] = {"eventTime": at.strftime("%Y-%m-%dT%H:%M:%S.%fZ"), "producer": draw(st.sampled_from(("https://github.com/OpenLineage/OpenLineage/tree/1.40.0/integration/dbt", "https://example.com/spark"))),
                             "schemaURL": f"https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/{kind.title()}Event"}  # fmt: skip
    if kind == "dataset":
        event["dataset"] = _ol_dataset(draw, "outputs")
        return event
    event["job"] = {"namespace": draw(st.sampled_from(("dbt", "airflow"))), "name": draw(st.sampled_from(OL_NAMES))}
    event["inputs"] = [_ol_dataset(draw, "inputs") for _ in range(draw(st.integers(0, 2)))]
    event["outputs"] = [_ol_dataset(draw, "outputs") for _ in range(draw(st.integers(0, 2)))]
    if kind == "run":
        event["eventType"] = draw(st.sampled_from(("START", "RUNNING", "COMPLETE", "FAIL", "ABORT", "OTHER")))
        event["run"] = {"runId": str(draw(st.uuids())), "facets": {}}
        if draw(st.booleans()):
            event["run"]["facets"]["nominalTime"] = {"_producer": "p", "_schemaURL": "s", "nominalStartTime": event["eventTime"]}
    return event


# ---------------------------------------------------------------------- pipelines: runs over time

#: A small pipeline: each job writes one dataset and reads those before it (``PIPE_READS``).
PIPE_JOBS = ("seed", "stage", "total", "report")
PIPE_WRITES = {"seed": "raw", "stage": "staged", "total": "summed", "report": "published"}
PIPE_READS = {"seed": (), "stage": ("raw",), "total": ("staged",), "report": ("summed", "staged")}
#: How a run ends: completes; fails; completes, then is reported failed (or aborted) after.
ENDINGS = ("complete", "complete", "fail", "complete_then_fail")
PIPE_START = datetime(2026, 10, 1, tzinfo=timezone.utc)
PIPE_PRODUCER = "https://github.com/OpenLineage/OpenLineage/tree/1.40.0/integration/dbt"


@dataclass(frozen=True)
class PipeRun:
    """One run of a pipeline job: when it began and wrote (its COMPLETE), how it ended, what its
    output's data-quality assertion said."""

    index: int
    job: str
    began: datetime
    completed: datetime | None
    failed: datetime | None
    success: bool

    @property
    def run_id(self) -> str:
        return f"00000000-0000-4000-8000-{self.index:012d}"

    @property
    def subject(self) -> str:
        return f"run:{self.run_id}"


@dataclass(frozen=True)
class PipelineWorld:
    runs: list[PipeRun]
    #: the run found wrong
    bad: int

    def events(self) -> list[dict[str, Any]]:
        """The OpenLineage RunEvents the runs emit (START; COMPLETE with its output's assertion;
        FAIL or ABORT), as a dbt-ol wrapper would, in time order."""
        out = []
        for r in self.runs:
            inputs = [{"namespace": "warehouse", "name": d} for d in PIPE_READS[r.job]]
            base = {"producer": PIPE_PRODUCER, "job": {"namespace": "dbt", "name": r.job}, "run": {"runId": r.run_id}, "inputs": inputs}
            out.append(base | {"eventType": "START", "eventTime": format_instant(r.began)})
            if r.completed is not None:
                output = {"namespace": "warehouse", "name": PIPE_WRITES[r.job],
                          "facets": {"dataQualityAssertions": {"assertions": [{"assertion": "positive", "column": "total", "success": r.success}]}}}  # fmt: skip
                out.append(base | {"eventType": "COMPLETE", "eventTime": format_instant(r.completed), "outputs": [output]})
            if r.failed is not None:
                out.append(base | {"eventType": "FAIL" if r.index % 2 else "ABORT", "eventTime": format_instant(r.failed)})
        return sorted(out, key=lambda e: (e["eventTime"], e["run"]["runId"], e["eventType"]))


@st.composite
def pipeline_world(draw: st.DrawFn) -> PipelineWorld:
    """Two to nine runs of the pipeline's jobs, begun ten minutes apart and lasting one to
    twenty-five (so runs overlap and a reader may begin before or after a writer completes),
    each ending as ``ENDINGS`` says; no two events at the same time. One run is the bad one."""
    runs = []
    for i in range(draw(st.integers(2, 9))):
        began = PIPE_START + timedelta(minutes=10 * i)
        ending = draw(st.sampled_from(ENDINGS))
        done = began + timedelta(minutes=draw(st.integers(1, 25)), seconds=i + 1)
        completed = done if ending != "fail" else None
        failed = done + timedelta(minutes=draw(st.integers(1, 30))) if ending == "complete_then_fail" else done if ending == "fail" else None
        runs.append(PipeRun(i, draw(st.sampled_from(PIPE_JOBS)), began, completed, failed, draw(st.booleans())))
    return PipelineWorld(runs, draw(st.integers(0, len(runs) - 1)))


# ---------------------------------------------------------------------- facts in groups, for aggregates

#: Aggregates of every shape an aggregate clause can take over grouped facts: each grouped by
#: the order its rule's first atom binds (or over everything), reading one, two or three
#: atoms, a value or an expression of it, constants, a variable read twice, a comparison.
GROUPED_AGGREGATES = {
    "sum": "?t = sum ?v over line(?l, ?o), amount(?l, ?v)",
    "count": "?t = count over line(?l, ?o)",
    "max": "?t = max ?v over line(?l, ?o), amount(?l, ?v)",
    "min": "?t = min ?v over line(?l, ?o), amount(?l, ?v)",
    "doubled": "?t = sum ?v * 2 over line(?l, ?o), amount(?l, ?v)",
    "priced": "?t = count over line(?l, ?o), amount(?l, ?v)",
    "again": "?t = sum ?v over line(?l, ?o), amount(?l, ?v), line(?l, ?o)",
    "fixed": "?t = count over line(?l, ?o), amount(?l, 3)",
    "self": "?t = count over line(?o, ?o)",
    "later": "?t = count over amount(?l, 3), line(?l, ?o)",
    "filtered": "?t = sum ?v over line(?l, ?o), amount(?l, ?v), ?v > 1",
}

#: What a grouped world's facts may be: true, unknown or false.
FACT_TRUTHS = ("TRUE", "TRUE", "TRUE", "UNKNOWN", "FALSE")


@dataclass(frozen=True)
class GroupedWorld:
    """Orders, lines in them and amounts of lines, as a fact base's entries: ``facts`` are
    (predicate, subject, object, truth) in the order the fact base lists them; ``closed``
    the predicates declared complete everywhere; ``narrow`` those also declared complete
    for one subject (where that declaration's id sorts first, it is the one a pattern about
    that subject names, and no one declaration closes the predicate everywhere)."""

    facts: tuple[tuple[str, str, Any, str], ...]
    closed: frozenset[str]
    narrow: frozenset[str]
    signed: bool

    def policy(self) -> Projection:
        source = SOURCES[0]
        predicates = ["order", "line", "amount"]
        completeness = [{"source": source, "predicate": p, "subject": subject, "valid": VALID, "as_of": "2026-07-10T00:00:00Z"}
                        for p in predicates for subject in (["*"] if p in self.closed else []) + (["line:0"] if p in self.narrow else [])]  # fmt: skip
        rules = [{"name": f"agg_{name}", "version": 1, "head": f"agg_{name}(?o, ?t)", "when": ["order(?o)", clause]}
                 for name, clause in GROUPED_AGGREGATES.items()]  # fmt: skip
        rules.append({"name": "everything", "version": 1, "head": "everything(?t)", "when": ["?t = count over line(?l, ?o)"]})
        return Projection(name="grouped", version=1, question="what does each order come to?",
                          trust=[{"source": source, "predicates": predicates, "authoritative": True}],
                          completeness=completeness, scope={"period": VALID}, derivation_rules=rules,
                          conclusions=[r["name"] for r in rules], signs={"amount": "non-negative"} if self.signed else {})  # fmt: skip


@st.composite
def grouped_world(draw) -> GroupedWorld:
    """A random grouped world: up to five orders and twelve lines, each line in an order (or
    in one nobody ordered, or in none), up to two amounts a line, facts stated twice. Half the
    worlds are settled, the usual case: every fact true and every predicate closed everywhere."""
    orders = draw(st.integers(0, 5))
    lines = draw(st.integers(0, 12))
    signed = draw(st.booleans())
    settled = draw(st.booleans())
    values = st.integers(0, 9) if signed else st.integers(-3, 9)
    truths = st.just("TRUE") if settled else st.sampled_from(FACT_TRUTHS)
    facts: list[tuple[str, str, Any, str]] = [("order", f"order:{g}", None, draw(truths)) for g in range(orders)]
    facts += [("line", f"order:{g}", f"order:{g}", draw(truths)) for g in range(orders) if draw(st.booleans())]  # an order its own line
    for i in range(lines):
        for g in draw(st.lists(st.integers(0, orders), max_size=2)):  # order:{orders}: one nobody ordered
            facts.append(("line", f"line:{i}", f"order:{g}", draw(truths)))
        for v in draw(st.lists(values, max_size=2)):
            facts.append(("amount", f"line:{i}", v, draw(truths)))
    facts += draw(st.lists(st.sampled_from(facts), max_size=3)) if facts else []  # stated twice
    order = draw(st.permutations(range(len(facts))))
    closed = {"order", "line", "amount"} if settled else draw(st.sets(st.sampled_from(["order", "line", "amount"])))
    narrow = set() if settled else draw(st.sets(st.sampled_from(["line", "amount"])))
    return GroupedWorld(tuple(facts[i] for i in order), frozenset(closed), frozenset(narrow), signed)


# ---------------------------------------------------------------------- an aggregate's members, as gaf.arith reads them


@dataclass(frozen=True)
class MemberWorld:
    """An aggregate's members over a closed scope, as ``gaf.arith.aggregate`` reads them: the
    values of the members that hold, and of each member that might hold, the value and the
    unknown propositions it holds exactly when all of hold. The propositions come in blocks and a
    member rests on propositions of one block, so no group of members linked by shared
    propositions rests on more than a block's; there may be more propositions in all than
    ``gaf.arith.COMPLETED_AT_MOST``."""

    kind: str
    known: tuple[int, ...]
    possible: tuple[tuple[int, frozenset[str]], ...]

    def groups(self) -> list[set[str]]:
        """The propositions of each group of members linked by propositions they share, directly or
        through others: merged pairwise until no two groups share one."""
        groups = [set(c) for _, c in self.possible]
        merged = True
        while merged:
            merged = False
            for i, j in itertools.combinations(range(len(groups)), 2):
                if groups[i] & groups[j]:
                    groups[i] |= groups.pop(j)
                    merged = True
                    break
        return groups

    def outcomes(self) -> tuple[bool | None, Any, Any]:
        """Whether the aggregate has a value (None: in some completions), and the least and most
        it is, by plain enumeration of every completion (each proposition true or false)."""
        unknowns = sorted(set().union(*(c for _, c in self.possible)))
        results = set()
        for bits in itertools.product((False, True), repeat=len(unknowns)):
            holding = {u for u, b in zip(unknowns, bits) if b}
            present = [*self.known, *(v for v, c in self.possible if c <= holding)]
            if self.kind == "sum":
                results.add(sum(present))
            else:
                results.add((max if self.kind == "max" else min)(present) if present else None)
        values = [r for r in results if r is not None]
        exists = True if None not in results else (None if values else False)
        return exists, min(values, default=None), max(values, default=None)


@st.composite
def member_world(draw, block: int = 3, unknowns: int = 13) -> MemberWorld:
    """A random set of members: blocks of at most ``block`` propositions, at most ``unknowns`` in
    all, up to three members that hold and up to twelve that might, each on a non-empty set of
    one block's propositions."""
    sizes: list[int] = []
    for size in draw(st.lists(st.integers(1, block), min_size=1, max_size=8)):
        if sum(sizes) + size <= unknowns:
            sizes.append(size)
    blocks = [[f"u{b}.{i}" for i in range(size)] for b, size in enumerate(sizes)]
    values = st.integers(-3, 9)
    possible = []
    for _ in range(draw(st.integers(1, 12))):
        props = blocks[draw(st.integers(0, len(blocks) - 1))]
        possible.append((draw(values), frozenset(draw(st.sets(st.sampled_from(props), min_size=1)))))
    known = tuple(draw(st.lists(values, max_size=3)))
    return MemberWorld(draw(st.sampled_from(["sum", "min", "max"])), known, tuple(possible))
