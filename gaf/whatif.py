"""What would change this verdict? An exhaustive, bounded search over its cone.

The first question of every appeal. Seed 004's method: search, shortest first,
exactly the inputs that can change the answer — here the claims the closure's
facts rest on, the premises it left unknown, and the closed scopes it relied on
— within stated bounds, re-projecting and re-judging each candidate change on an
in-memory copy (the store is never written), and say whether the search was
complete and whether the cone was right: a sample of changes outside the cone
must leave the verdict alone, and if one does not, the report says so and names it.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from pydantic import TypeAdapter, ValidationError

from gaf.derive import Ground, holds_grounds, is_pattern
from gaf.projection import Evaluated, bind_head, cone_claims, evaluate_over, ground_of, proposition_of
from gaf.records import (
    Claim,
    Closure,
    CompletenessDeclaration,
    Projection,
    Proposition,
    Statement,
    Transformation,
    VerdictRules,
    matches_pattern,
    statement_text,
)
from gaf.rules import Atom, Not, is_var, is_wild
from gaf.store.base import GafStore
from gaf.types import Key
from gaf.verdict import Judgement, judge, rule_params

#: The observer synthetic claims are attributed to: they are hypotheses, never stored.
HYPOTHESIS = "agent:" + "0" * 64


@dataclass(frozen=True)
class Change:
    """One hypothetical change: retract a stored claim, or add a claim."""

    kind: str  # "retract" | "add"
    claim: Claim
    why: str

    def describe(self) -> str:
        stmts = "; ".join(statement_text(s.predicate, s.subject, s.object, s.value, denied=s.polarity == "denied", unit=s.unit)
                          for s in self.claim.statements)  # fmt: skip
        return f"{self.kind} {stmts}" + (f" [{self.claim.id}]" if self.kind == "retract" else "") + f" — {self.why}"


@dataclass
class Finding:
    """A change that moves the verdict: its label, or its strength — the point and the
    interval the unknown premises leave open (an undetermined verdict's strength is that
    interval, so narrowing it is a change even when the label stays)."""

    changes: list[Change]
    old_label: str
    new_label: str
    old_strength: float
    new_strength: float
    rules_changed: list[str]
    old_interval: tuple[float, float] = (0.0, 0.0)
    new_interval: tuple[float, float] = (0.0, 0.0)

    @property
    def flips(self) -> bool:
        return self.new_label != self.old_label

    def to_dict(self) -> dict[str, Any]:
        return {
            "changes": [c.describe() for c in self.changes], "flips_label": self.flips,
            "old": {"label": self.old_label, "strength": self.old_strength, "interval": list(self.old_interval)},
            "new": {"label": self.new_label, "strength": self.new_strength, "interval": list(self.new_interval)},
            "rules_changed": self.rules_changed,
        }  # fmt: skip


@dataclass
class WhatIf:
    """The report: the cone, how much was searched, and what would change the verdict."""

    closure: str
    label: str
    strength: float
    cone: dict[str, int]
    interval: tuple[float, float] = (0.0, 0.0)
    tried: int = 0
    complete: bool = True
    exhaustive: bool = True
    stopped: str | None = None
    findings: list[Finding] = field(default_factory=list)
    outside_cone: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "closure": self.closure, "label": self.label, "strength": self.strength, "interval": list(self.interval), "cone": self.cone,
            "candidates_tried": self.tried, "complete": self.complete, "exhaustive": self.exhaustive,
            "stopped": self.stopped, "outside_cone_changes": self.outside_cone,
            "findings": [f.to_dict() for f in self.findings],
        }  # fmt: skip

    def text(self) -> str:
        lines = [f"{self.closure}: {self.label} {_strength(self.strength, self.interval)}",
                 f"cone: {self.cone}; {self.tried} candidate change(s) tried; "
                 f"{'complete' if self.complete else 'INCOMPLETE: ' + (self.stopped or '')}; "
                 f"{'exhaustive within its bounds' if self.exhaustive else 'NOT exhaustive: a change outside the cone moved the verdict'}"]  # fmt: skip
        for f in self.findings:
            change = " AND ".join(c.describe() for c in f.changes)
            lines.append(f"  {f.old_label} {_strength(f.old_strength, f.old_interval)} → "
                         f"{f.new_label} {_strength(f.new_strength, f.new_interval)}: {change}")
        for o in self.outside_cone:
            lines.append(f"  outside the cone, yet it moved the verdict: {o}")
        return "\n".join(lines)


def _strength(point: float, interval: tuple[float, float]) -> str:
    low, high = interval
    return f"{point:+.3f}" if low == high else f"{point:+.3f} [{low:+.3f} … {high:+.3f}]"


def _judge(policy: Projection, rules: VerdictRules, claims: list[Claim], closure: Closure) -> tuple[Judgement, Evaluated]:
    evaluated = evaluate_over(policy, claims, as_of=closure.as_of)
    return judge(rules, evaluated.fact_base(), subject=closure.subject), evaluated


def whatif(
    store: GafStore, closure_id: str, *, max_size: int = 2, seconds: float = 60.0, clock: Callable[[], float] = time.monotonic
) -> WhatIf:
    """Search the closure's cone, shortest changes first, for what would change its verdict.

    Reads the closure, its policy, its rules and the claims its projection saw; the
    search itself runs in memory (``search``) and never writes the store."""
    closure = store.get(closure_id, Closure)
    policy, rules = store.get(closure.projection, Projection), store.get(closure.rules, VerdictRules)
    claims = cone_claims(store, policy, closure.as_of)
    return search(policy, rules, claims, closure, max_size=max_size, seconds=seconds, clock=clock)


def _moved(after: Judgement, base: Judgement) -> bool:
    return (after.label, after.strength, after.low, after.high) != (base.label, base.strength, base.low, base.high)


def search(
    policy: Projection, rules: VerdictRules, claims: list[Claim], closure: Closure, *, max_size: int = 2,
    seconds: float = 60.0, clock: Callable[[], float] = time.monotonic,
) -> WhatIf:  # fmt: skip
    """The bounded, shortest-first search over the cone of a closure, given its inputs."""
    base, evaluated = _judge(policy, rules, claims, closure)
    changes = _candidates(policy, rules, closure, claims, evaluated)
    report = WhatIf(closure.id, base.label, base.strength,
                    cone={"claims": len({c.claim.id for c in changes if c.kind == "retract"}),
                          "unknown_premises": len({ground_of(p) for p in _all_unknown(rules, evaluated, closure.subject)}),
                          "closed_scopes": len(closure.completeness)},
                    interval=(base.low, base.high))  # fmt: skip
    deadline = clock() + seconds
    flipped_singles: set[int] = set()
    for size in range(1, max_size + 1):
        for combo in itertools.combinations(range(len(changes)), size):
            if clock() > deadline:
                report.complete = False
                report.stopped = f"time limit {seconds:g} s reached during changes of size {size}"
                break
            if size > 1 and any(i in flipped_singles for i in combo):
                continue  # a smaller change already does it: report the shortest
            chosen = [changes[i] for i in combo]
            after, _ = _judge(policy, rules, _apply(claims, chosen), closure)
            report.tried += 1
            if _moved(after, base):
                moved = sorted(r.name for r, b in zip(after.rules, base.rules, strict=True) if r.activation != b.activation)
                report.findings.append(Finding(chosen, base.label, after.label, base.strength, after.strength, moved,
                                               (base.low, base.high), (after.low, after.high)))  # fmt: skip
                if size == 1 and after.label != base.label:
                    flipped_singles.add(combo[0])
        if not report.complete:
            break
    _check_cone(report, policy, rules, claims, closure, base)
    return report


def _apply(claims: list[Claim], changes: list[Change]) -> list[Claim]:
    retracted = {c.claim.id for c in changes if c.kind == "retract"}
    return [c for c in claims if c.id not in retracted] + [c.claim for c in changes if c.kind == "add"]


def _unknown_premises(rules: VerdictRules, evaluated: Evaluated, subject: str) -> list[Proposition]:
    """The ground atoms (with a subject) that leave some verdict rule's activation unknown,
    followed down through the derivation rules to the claimable atoms beneath them."""
    facts = evaluated.fact_base()
    pending: list[Ground] = []
    for rule in sorted(rules.rules, key=lambda r: r.name):
        _, _, unknown = holds_grounds(rule.condition, facts, {"?subject": subject, **rule_params(rule)})
        pending += sorted(unknown, key=repr)
    seen: set[Ground] = set()
    out = []
    while pending:
        ground = pending.pop(0)
        if ground in seen or is_pattern(ground):
            continue
        seen.add(ground)
        statable = _statable(ground)
        if statable is not None:
            out.append(statable)
        for compiled in sorted(facts.program.rules, key=lambda r: r.ref):
            binding = bind_head(compiled.rule.head, *ground)
            if binding is None:
                continue
            for clauses in compiled.bodies:
                pending += sorted(holds_grounds(clauses, facts, binding)[2], key=repr)
    return out


_KEY: TypeAdapter[str] = TypeAdapter(Key)


def _is_key(value: Any) -> bool:
    try:
        _KEY.validate_python(value)
    except ValidationError:
        return False
    return True


def _statable(ground: Ground) -> Proposition | None:
    """The proposition a claim would state to settle a ground atom, or None if no statement can.

    Rules bind variables to whatever statements carry, so a premise's subject can be
    another statement's value (``po(?subject, ?N), order(?N)`` with ``N = 12`` or ``true``)
    and its argument a string no key can be (``""``). A statement's subject is a key, so
    the first kind no claim can settle; the second is a value, not an object."""
    predicate, subject, target = ground
    if not _is_key(subject):
        return None
    if isinstance(target, str) and not _is_key(target):
        return Proposition.shared(subject=subject, predicate=predicate, value=target)
    return proposition_of(ground)


def _all_unknown(rules: VerdictRules, evaluated: Evaluated, subject: str) -> list[Proposition]:
    """The unknown premises: every proposition the projection left unresolved, then the atoms
    only the verdict rules reach (with no interval: an atom carries none).

    One ground atom can be stated by several propositions that differ only in their valid
    interval — the one a claim made, and the bare atom a derivation's trace names. Each is
    kept, and tried: projection weighs the propositions of one atom together
    (gaf-projection/3), so a claim about either settles the atom the same way."""
    by_id = {p.id: p for p in evaluated.unresolved}
    stated = {ground_of(p) for p in by_id.values()}
    for p in _unknown_premises(rules, evaluated, subject):
        if ground_of(p) not in stated:
            by_id.setdefault(p.id, p)
    return sorted(by_id.values(), key=lambda p: p.id)


def _candidates(policy: Projection, rules: VerdictRules, closure: Closure, claims: list[Claim], evaluated: Evaluated) -> list[Change]:
    """The single changes of the cone, in a fixed order:

    * retracting each claim the evaluations rest on;
    * a claim settling each unknown premise, either way (one with no argument also with
      each argument the rules look for);
    * a claim contesting each accepted or rejected premise (the opposite polarity);
    * a claim falling into each closed scope the closure relied on, and one more for each
      argument the rules look for in it (``p(?x, true)``, ``p(?x, ?amount)`` with a parameter).

    Added claims come from each source the policy trusts for the predicate,
    authoritative first: which source speaks can decide whether a claim counts."""
    out: list[Change] = []
    used = sorted({cid for ev in evaluated.evaluations for cid in (*ev.supporting, *ev.refuting)})
    by_id = {c.id: c for c in claims}
    for cid in used:
        out.append(Change("retract", by_id[cid], "a claim the facts rest on"))
    trusted = _trusted_sources(policy)
    derived = {r.head.predicate for r in policy.derivation_rules}

    def add(p: Proposition, polarity: str, why: str) -> None:
        if p.predicate in derived:
            return  # the rules decide it, not a claim
        st = {"subject": p.subject, "predicate": p.predicate, "object": p.object, "value": p.value, "unit": p.unit, "polarity": polarity,
              "valid": p.valid.model_dump(mode="json") if p.valid else None}  # the same proposition, interval included
        for source in trusted.get(p.predicate, ()):
            out.append(Change("add", _hypothesis(source, st, closure.as_of), why))

    # The unknown premises: propositions the projection left unresolved, and the atoms the
    # verdict rules found unknown — including ones no claim mentions at all (open world).
    # An atom with no argument may stand for a pattern (``p(x, ?V)`` that nothing matched):
    # it is also tried with each argument the rules look for, as a closed scope is entered.
    unknown = _all_unknown(rules, evaluated, closure.subject)
    for p in unknown:
        named = _named(policy, rules, p.predicate) if p.object is None and p.value is None else []
        # p's subject is a key, so _statable refuses none of these: dropping None only says so
        statable = [q for a in named if (q := _statable((p.predicate, p.subject, a))) is not None]
        for q in [p, *statable]:
            for polarity in ("affirmed", "denied"):
                add(q, polarity, f"settles the unknown {p.predicate} ({polarity})")
    for ev in sorted(evaluated.evaluations, key=lambda e: e.id):
        if ev.outcome.value in ("accepted", "rejected") and ev.proposition not in {p.id for p in unknown}:
            p = evaluated.propositions[ev.proposition]
            polarity = "denied" if ev.outcome.value == "accepted" else "affirmed"
            add(p, polarity, f"contests the {ev.outcome.value} {p.predicate}")
    for scope in sorted(policy.completeness, key=lambda d: d.id):
        if scope.id in closure.completeness:
            named = [a for a in _named(policy, rules, scope.predicate) if matches_pattern(scope.object, a)]
            into = {c.id: c for c in (_into_scope(scope, claims, closure.as_of, closure.subject, a) for a in [None, *named])}
            out += [Change("add", c, "falls into a closed scope the closure relied on") for c in into.values()]
    return out


def _named(policy: Projection, rules: VerdictRules, predicate: str) -> list[Any]:
    """The constants the rules read a predicate's second argument as, in a fixed order:
    ``p(?x, true)``, or ``p(?x, ?amount)`` where a verdict rule's parameter gives ``?amount``.
    Inside a closed scope, only a claim carrying one of them makes such an atom true."""
    read = [(c, rule_params(r)) for r in rules.rules for c in r.condition]
    read += [(c, {}) for d in policy.derivation_rules for b in d.bodies for c in b.when]
    out: dict[tuple[str, str], Any] = {}
    for clause, params in read:
        a = clause.not_ if isinstance(clause, Not) else clause
        if not isinstance(a, Atom) or a.predicate != predicate or a.object is None or is_wild(a.object):
            continue
        if is_var(a.object) and a.object not in params:
            continue
        value = params.get(a.object, a.object) if is_var(a.object) else a.object
        out.setdefault((type(value).__name__, repr(value)), value)  # true, 1 and 1.0 are three
    return [out[k] for k in sorted(out)]


def _trusted_sources(policy: Projection) -> dict[str, list[str]]:
    """For each predicate, the sources whose word counts for it (authoritative first)."""
    out: dict[str, list[str]] = {}
    for t in sorted(policy.trust, key=lambda t: (not t.authoritative, t.source)):
        for p in t.predicates:
            if t.source not in out.setdefault(p, []):
                out[p].append(t.source)
    return out


def _hypothesis(source: str, statement: dict[str, Any], at: datetime) -> Claim:
    return Claim(source=source, observer=HYPOTHESIS, observed_at=at, recorded_at=at, transformation=Transformation.other,
                 scope="what-if", statements=[Statement.model_validate(statement)])  # fmt: skip


def _into_scope(scope: CompletenessDeclaration, claims: list[Claim], at: datetime, subject: str, named: Any = None) -> Claim:
    """A claim from the declaring source inside the scope: about the closure's subject if it
    fits, else on a subject already in the cone if one fits; carrying the argument a rule
    names if one is given."""
    subjects = sorted({s.subject for c in claims for s in c.statements if matches_pattern(scope.subject, s.subject)})
    if matches_pattern(scope.subject, subject):
        subjects = [subject]
    subject = subjects[0] if subjects else scope.subject.rstrip("*") + "what-if"
    st: dict[str, Any] = {"subject": subject, "predicate": scope.predicate, "valid": scope.valid.model_dump(mode="json")}
    if named is not None:
        st["object" if _is_key(named) else "value"] = named
    elif scope.object != "*":
        st["object"] = scope.object.rstrip("*") + ("what-if" if scope.object.endswith("*") else "")
    else:
        st["value"] = True
    if subject.endswith("what-if") or scope.subject == "*":
        st["subject"] = "what-if:payment" if scope.subject == "*" else subject
    return _hypothesis(scope.source, st, at)


def _check_cone(report: WhatIf, policy: Projection, rules: VerdictRules, claims: list[Claim], closure: Closure, base: Judgement) -> None:
    """Changes outside the cone must not move the verdict; if one does, the search was not exhaustive."""
    outside = [
        Change("add", _hypothesis(policy.trust[0].source if policy.trust else HYPOTHESIS.replace("agent", "source"),
                                  {"subject": "what-if:elsewhere", "predicate": p}, closure.as_of), "outside the cone")
        for p in sorted({p for t in policy.trust for p in t.predicates})[:10]
    ]  # fmt: skip
    for change in outside:
        after, _ = _judge(policy, rules, _apply(claims, [change]), closure)
        if _moved(after, base):
            report.exhaustive = False
            report.outside_cone.append(change.describe())
