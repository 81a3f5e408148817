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

from gaf.errors import UnknownReference
from gaf.projection import Evaluated, cone_claims, evaluate_over
from gaf.records import Claim, Closure, CompletenessDeclaration, Projection, VerdictRules
from gaf.store.base import GafStore
from gaf.verdict import Judgement, judge

#: The observer synthetic claims are attributed to: they are hypotheses, never stored.
HYPOTHESIS = "agent:" + "0" * 64


@dataclass(frozen=True)
class Change:
    """One hypothetical change: retract a stored claim, or add a claim."""

    kind: str  # "retract" | "add"
    claim: Claim
    why: str

    def describe(self) -> str:
        stmts = "; ".join(f"{'NOT ' if s.polarity == 'denied' else ''}{s.predicate}({s.subject}"
                          f"{'' if (s.object if s.object is not None else s.value) is None else ', ' + str(s.object if s.object is not None else s.value)})"
                          for s in self.claim.statements)  # fmt: skip
        return f"{self.kind} {stmts}" + (f" [{self.claim.id}]" if self.kind == "retract" else "") + f" — {self.why}"


@dataclass
class Finding:
    changes: list[Change]
    old_label: str
    new_label: str
    old_strength: float
    new_strength: float
    rules_changed: list[str]

    def to_dict(self) -> dict[str, Any]:
        return {
            "changes": [c.describe() for c in self.changes], "old": {"label": self.old_label, "strength": self.old_strength},
            "new": {"label": self.new_label, "strength": self.new_strength}, "rules_changed": self.rules_changed,
        }  # fmt: skip


@dataclass
class WhatIf:
    """The report: the cone, how much was searched, and what would change the verdict."""

    closure: str
    label: str
    strength: float
    cone: dict[str, int]
    tried: int = 0
    complete: bool = True
    exhaustive: bool = True
    stopped: str | None = None
    findings: list[Finding] = field(default_factory=list)
    outside_cone: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "closure": self.closure, "label": self.label, "strength": self.strength, "cone": self.cone,
            "candidates_tried": self.tried, "complete": self.complete, "exhaustive": self.exhaustive,
            "stopped": self.stopped, "outside_cone_changes": self.outside_cone,
            "findings": [f.to_dict() for f in self.findings],
        }  # fmt: skip

    def text(self) -> str:
        lines = [f"{self.closure}: {self.label} {self.strength:+.3f}",
                 f"cone: {self.cone}; {self.tried} candidate change(s) tried; "
                 f"{'complete' if self.complete else 'INCOMPLETE: ' + (self.stopped or '')}; "
                 f"{'exhaustive within its bounds' if self.exhaustive else 'NOT exhaustive: a change outside the cone moved the verdict'}"]  # fmt: skip
        for f in self.findings:
            change = " AND ".join(c.describe() for c in f.changes)
            lines.append(f"  {f.old_label} {f.old_strength:+.3f} → {f.new_label} {f.new_strength:+.3f}: {change}")
        for o in self.outside_cone:
            lines.append(f"  outside the cone, yet it moved the verdict: {o}")
        return "\n".join(lines)


def _judge(policy: Projection, rules: VerdictRules, claims: list[Claim], closure: Closure) -> tuple[Judgement, Evaluated]:
    evaluated = evaluate_over(policy, claims, as_of=closure.as_of)
    return judge(rules, evaluated.fact_base(), subject=closure.subject), evaluated


def whatif(
    store: GafStore, closure_id: str, *, max_size: int = 2, seconds: float = 60.0, clock: Callable[[], float] = time.monotonic
) -> WhatIf:
    """Search the closure's cone, shortest changes first, for what would change its verdict."""
    closure = store.get(closure_id)
    if not isinstance(closure, Closure):
        raise UnknownReference(f"no closure {closure_id} in {store.location}")
    policy, rules = store.get(closure.projection), store.get(closure.rules)
    assert isinstance(policy, Projection) and isinstance(rules, VerdictRules)
    claims = cone_claims(store, policy, closure.as_of)
    base, evaluated = _judge(policy, rules, claims, closure)
    changes = _candidates(policy, closure, claims, evaluated)
    report = WhatIf(closure.id, base.label, base.strength,
                    cone={"claims": len({c.claim.id for c in changes if c.kind == "retract"}),
                          "unknown_premises": len(evaluated.unresolved), "closed_scopes": len(closure.completeness)})  # fmt: skip
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
            if after.label != base.label or after.strength != base.strength:
                moved = sorted(r.name for r, b in zip(after.rules, base.rules, strict=True) if r.activation != b.activation)
                report.findings.append(Finding(chosen, base.label, after.label, base.strength, after.strength, moved))
                if size == 1 and after.label != base.label:
                    flipped_singles.add(combo[0])
        if not report.complete:
            break
    _check_cone(report, policy, rules, claims, closure, base)
    return report


def _apply(claims: list[Claim], changes: list[Change]) -> list[Claim]:
    retracted = {c.claim.id for c in changes if c.kind == "retract"}
    return [c for c in claims if c.id not in retracted] + [c.claim for c in changes if c.kind == "add"]


def _candidates(policy: Projection, closure: Closure, claims: list[Claim], evaluated: Evaluated) -> list[Change]:
    """Retractions of the claims the facts rest on; claims settling each unknown premise either
    way; and claims falling into each closed scope the closure relied on."""
    out: list[Change] = []
    used = sorted({cid for ev in evaluated.evaluations for cid in (*ev.supporting, *ev.refuting)})
    by_id = {c.id: c for c in claims}
    for cid in used:
        out.append(Change("retract", by_id[cid], "a claim the facts rest on"))
    trusted = _trusted_sources(policy)
    derived = {r.head.predicate for r in policy.derivation_rules}
    for p in evaluated.unresolved:
        source = trusted.get(p.predicate)
        if source is None or p.predicate in derived:
            continue  # nothing a claim could settle: no source may establish it, or the rules decide it
        for polarity in ("affirmed", "denied"):
            st = {"subject": p.subject, "predicate": p.predicate, "object": p.object, "value": p.value, "polarity": polarity}
            out.append(Change("add", _hypothesis(source, st, closure.as_of), f"settles the unknown {p.predicate} ({polarity})"))
    for scope in sorted(policy.completeness, key=lambda d: d.id):
        if scope.id in closure.completeness:
            out.append(Change("add", _into_scope(scope, claims, closure.as_of), "falls into a closed scope the closure relied on"))
    return out


def _trusted_sources(policy: Projection) -> dict[str, str]:
    """For each predicate, the source whose word would settle it (authoritative first)."""
    out: dict[str, str] = {}
    for t in sorted(policy.trust, key=lambda t: (not t.authoritative, t.source)):
        for p in t.predicates:
            out.setdefault(p, t.source)
    return out


def _hypothesis(source: str, statement: dict[str, Any], at: datetime) -> Claim:
    return Claim(source=source, observer=HYPOTHESIS, observed_at=at, recorded_at=at, transformation="other",
                 scope="what-if", statements=[statement])  # fmt: skip


def _into_scope(scope: CompletenessDeclaration, claims: list[Claim], at: datetime) -> Claim:
    """A claim from the declaring source inside the scope: on a subject already in the cone if one fits."""
    subjects = sorted({s.subject for c in claims for s in c.statements if _fits(scope.subject, s.subject)})
    subject = subjects[0] if subjects else scope.subject.rstrip("*") + "what-if"
    st: dict[str, Any] = {"subject": subject, "predicate": scope.predicate, "valid": scope.valid.model_dump(mode="json")}
    if scope.object != "*":
        st["object"] = scope.object.rstrip("*") + ("what-if" if scope.object.endswith("*") else "")
    else:
        st["value"] = True
    if subject.endswith("what-if") or scope.subject == "*":
        st["subject"] = "what-if:payment" if scope.subject == "*" else subject
    return _hypothesis(scope.source, st, at)


def _fits(pattern: str, value: str) -> bool:
    return pattern == "*" or (value.startswith(pattern[:-1]) if pattern.endswith("*") else value == pattern)


def _check_cone(report: WhatIf, policy: Projection, rules: VerdictRules, claims: list[Claim], closure: Closure, base: Judgement) -> None:
    """Changes outside the cone must not move the verdict; if one does, the search was not exhaustive."""
    outside = [
        Change("add", _hypothesis(policy.trust[0].source if policy.trust else HYPOTHESIS.replace("agent", "source"),
                                  {"subject": "what-if:elsewhere", "predicate": p}, closure.as_of), "outside the cone")
        for p in sorted({p for t in policy.trust for p in t.predicates})[:10]
    ]  # fmt: skip
    for change in outside:
        after, _ = _judge(policy, rules, _apply(claims, [change]), closure)
        if after.label != base.label or after.strength != base.strength:
            report.exhaustive = False
            report.outside_cone.append(change.describe())
