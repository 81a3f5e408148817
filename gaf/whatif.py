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
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from pydantic import TypeAdapter, ValidationError

from gaf.derive import Ground, holds_grounds, is_pattern, show
from gaf.errors import UnknownReference
from gaf.projection import Evaluated, bind_head, cone_claims, evaluate_over, ground_of, proposition_of
from gaf.records import (
    Claim,
    Closure,
    CompletenessDeclaration,
    Projection,
    Proposition,
    Statement,
    Transformation,
    Verdict,
    VerdictRules,
    matches_pattern,
    statement_text,
)
from gaf.rules import Atom, Not, is_var, is_wild
from gaf.store.base import GafStore
from gaf.types import Key, Progress, no_progress
from gaf.verdict import UNDETERMINED, Judgement, judge, rule_params

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
    store: GafStore, closure_id: str, *, max_size: int = 2, seconds: float = 60.0, clock: Callable[[], float] = time.monotonic,
    progress: Progress = no_progress,
) -> WhatIf:  # fmt: skip
    """Search the closure's cone, shortest changes first, for what would change its verdict.

    Reads the closure, its policy, its rules and the claims its projection saw; the
    search itself runs in memory (``search``) and never writes the store."""
    closure = store.get(closure_id, Closure)
    policy, rules = store.get(closure.projection, Projection), store.get(closure.rules, VerdictRules)
    progress("reading the cone", 0, None)
    claims = cone_claims(store, policy, closure.as_of)
    return search(policy, rules, claims, closure, max_size=max_size, seconds=seconds, clock=clock, progress=progress)


def _moved(after: Judgement, base: Judgement) -> bool:
    return (after.label, after.strength, after.low, after.high) != (base.label, base.strength, base.low, base.high)


def search(
    policy: Projection, rules: VerdictRules, claims: list[Claim], closure: Closure, *, max_size: int = 2,
    seconds: float = 60.0, clock: Callable[[], float] = time.monotonic, progress: Progress = no_progress,
) -> WhatIf:  # fmt: skip
    """The bounded, shortest-first search over the cone of a closure, given its inputs; ``progress``
    is told the combinations of changes tried (and skipped) out of all there are up to ``max_size``."""
    base, evaluated = _judge(policy, rules, claims, closure)
    changes = _candidates(policy, rules, closure, claims, evaluated)
    report = WhatIf(closure.id, base.label, base.strength,
                    cone={"claims": len({c.claim.id for c in changes if c.kind == "retract"}),
                          "unknown_premises": len({ground_of(p) for p in _all_unknown(rules, evaluated, closure.subject)}),
                          "closed_scopes": len(closure.completeness)},
                    interval=(base.low, base.high))  # fmt: skip
    deadline = clock() + seconds
    flipped_singles: set[int] = set()
    combinations = sum(math.comb(len(changes), size) for size in range(1, max_size + 1))
    seen = 0
    for size in range(1, max_size + 1):
        for combo in itertools.combinations(range(len(changes)), size):
            progress("trying changes", seen, combinations)
            seen += 1
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
    if report.complete:
        progress("trying changes", combinations, combinations)
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
    # The unknown premises: propositions the projection left unresolved, and the atoms the
    # verdict rules found unknown — including ones no claim mentions at all (open world).
    unknown = _all_unknown(rules, evaluated, closure.subject)
    for p in unknown:
        out += _settlers(policy, rules, closure, p)
    for ev in sorted(evaluated.evaluations, key=lambda e: e.id):
        if ev.outcome.value in ("accepted", "rejected") and ev.proposition not in {p.id for p in unknown}:
            p = evaluated.propositions[ev.proposition]
            polarity = "denied" if ev.outcome.value == "accepted" else "affirmed"
            out += _stating(policy, p, polarity, f"contests the {ev.outcome.value} {p.predicate}", closure.as_of)
    for scope in sorted(policy.completeness, key=lambda d: d.id):
        if scope.id in closure.completeness:
            named = [a for a in _named(policy, rules, scope.predicate) if matches_pattern(scope.object, a)]
            into = {c.id: c for c in (_into_scope(scope, claims, closure.as_of, closure.subject, a) for a in [None, *named])}
            out += [Change("add", c, "falls into a closed scope the closure relied on") for c in into.values()]
    return out


def _settlers(policy: Projection, rules: VerdictRules, closure: Closure, p: Proposition) -> list[Change]:
    """The claims that would settle an unknown premise, affirmed and denied, from each source
    the policy trusts for it. An atom with no argument may stand for a pattern (``p(x, ?V)``
    that nothing matched): it is also settled with each argument the rules look for, as a
    closed scope is entered."""
    named = _named(policy, rules, p.predicate) if p.object is None and p.value is None else []
    # p's subject is a key, so _statable refuses none of these: dropping None only says so
    statable = [q for a in named if (q := _statable((p.predicate, p.subject, a))) is not None]
    return [change for q in [p, *statable] for polarity in ("affirmed", "denied")
            for change in _stating(policy, q, polarity, f"settles the unknown {p.predicate} ({polarity})", closure.as_of)]  # fmt: skip


def _stating(policy: Projection, p: Proposition, polarity: str, why: str, at: datetime) -> list[Change]:
    """A claim stating ``p`` with ``polarity`` from each source the policy trusts for its
    predicate, authoritative first (which source speaks can decide whether a claim counts);
    none for a predicate the policy's rules derive: the rules decide it, not a claim."""
    if p.predicate in {r.head.predicate for r in policy.derivation_rules}:
        return []
    st = {"subject": p.subject, "predicate": p.predicate, "object": p.object, "value": p.value, "unit": p.unit, "polarity": polarity,
          "valid": p.valid.model_dump(mode="json") if p.valid else None}  # the same proposition, interval included
    return [Change("add", _hypothesis(source, st, at), why) for source in _trusted_sources(policy).get(p.predicate, ())]


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


# ---------------------------------------------------------------------- what would settle a verdict

#: How many unknown premises ``settling`` tries, each settled both ways: a count, never a
#: time, so it finds the same on every run — a policy exception's reason, which is stored
#: and hashed, quotes what it finds.
SETTLE_TRIES = 64
#: How many groups of premises a reader is shown, and examples of each; the rest is counted.
GROUPS_SHOWN, EXAMPLES_SHOWN = 4, 3


@dataclass(frozen=True)
class Settling:
    """What would settle an undetermined verdict: the unknown premises that, settled alone —
    affirmed or denied by a claim from a source the policy trusts, as the what-if search
    settles them — move its label; and every other unknown premise, counted.

    A verdict's trace names every unknown premise beneath it, which on a ledger of fifty
    payments is each payment against each instalment; a person needs the few whose value
    decides the case. This is read when a verdict is shown, from the closure's cone — never
    stored in the verdict, whose id stays what it was."""

    closure: str
    #: the verdict's label as its cone gives it today (what the premises were tried against)
    label: str
    #: the premises that, settled alone, move the label (sorted as written)
    movers: tuple[Ground, ...] = ()
    #: every other unknown premise, as written: the trace's and the cone's, sorted
    rest: tuple[str, ...] = ()
    #: those of ``rest`` not tried because ``tries`` were
    untried: tuple[str, ...] = ()
    tries: int = SETTLE_TRIES
    #: the label the stored verdict has, when the cone no longer gives it (then nothing was tried)
    stored_label: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"closure": self.closure, "label": self.label, "stored_label": self.stored_label,
                "would_settle": [show(g) for g in self.movers], "rest": list(self.rest), "untried": list(self.untried),
                "tries": self.tries}  # fmt: skip

    def lines(self) -> list[str]:
        """As a verdict's text shows it: a line per group of premises, a line for the rest."""
        if not (self.movers or self.rest or self.stored_label):
            return []
        if self.stored_label is not None:
            head = [f"  would settle it: not tried — its cone now gives {self.label}, not {self.stored_label} (gaf replay says why)"]
        elif self.movers:
            groups = _groups(self.movers)
            each = "each " if len(self.movers) > 1 else ""
            head = [f"  would settle it, {each}alone (affirmed or denied): {_premises(len(self.movers))}"]
            head += [f"    {_group_text(g)}" for g in groups[:GROUPS_SHOWN]]
            if len(groups) > GROUPS_SHOWN:
                more = groups[GROUPS_SHOWN:]
                head.append(f"    … and {sum(len(g) for g in more)} more in {len(more)} more group(s)")
        else:
            head = ["  would settle it: no unknown premise alone (gaf whatif --max-size 2 tries them in pairs)"]
        return head + ([f"  … and {self._rest_text()}"] if self.rest else [])

    def summary(self) -> str:
        """The same on one line, as a policy exception's reason quotes it."""
        if self.stored_label is not None:
            settle = f"not tried: its cone now gives {self.label}, not {self.stored_label}"
        elif self.movers:
            groups = _groups(self.movers)
            settle = "; ".join(_group_text(g) for g in groups[:GROUPS_SHOWN])
            if len(groups) > GROUPS_SHOWN:
                settle += f"; … and {sum(len(g) for g in groups[GROUPS_SHOWN:])} more"
        else:
            settle = "no unknown premise alone"
        return f"would settle it, each alone: {settle}" + (f"; and {self._rest_text()}" if self.rest else "")

    def _rest_text(self) -> str:
        counts: dict[str, int] = {}
        for text in self.rest:
            predicate = text.split("(", 1)[0]
            counts[predicate] = counts.get(predicate, 0) + 1
        by = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
        shown = ", ".join(f"{p} {n}" for p, n in by[:GROUPS_SHOWN]) + (", …" if len(by) > GROUPS_SHOWN else "")
        if not self.untried:
            return f"{_premises(len(self.rest), 'more')} that {'does' if len(self.rest) == 1 else 'do'} not ({shown})"
        return (f"{_premises(len(self.rest), 'more')} ({shown}): {len(self.rest) - len(self.untried)} do not, "
                f"{len(self.untried)} not tried (only the first {self.tries} are; gaf verdict --tries N tries more)")  # fmt: skip


def _premises(n: int, more: str = "") -> str:
    """``3 unknown premises``, ``1 more unknown premise``."""
    return f"{n} {more + ' ' if more else ''}unknown premise{'' if n == 1 else 's'}"


def _groups(movers: tuple[Ground, ...]) -> list[list[Ground]]:
    """Premises grouped by predicate and by the argument they share — the subject or the
    target, whichever has fewer values — largest group first."""
    by_predicate: dict[str, list[Ground]] = {}
    for g in movers:
        by_predicate.setdefault(g[0], []).append(g)
    groups: list[list[Ground]] = []
    for grounds in by_predicate.values():
        position = 1 if len({repr(g[1]) for g in grounds}) <= len({repr(g[2]) for g in grounds}) else 2
        shared: dict[str, list[Ground]] = {}
        for g in grounds:
            shared.setdefault(repr(g[position]), []).append(g)
        groups += shared.values()
    return sorted(groups, key=lambda g: (-len(g), show(g[0])))


def _group_text(group: list[Ground]) -> str:
    """One premise as written, or the group's pattern, its size and a few of what varies."""
    if len(group) == 1:
        return show(group[0])
    predicate, subject, target = group[0]
    if all(g[1] == subject for g in group):  # p(s, …): what varies is the target
        prefix = show((predicate, subject, "…"))[: -len("…)")]
        pattern, varying = show((predicate, subject, "…")), [show(g)[len(prefix) : -1] for g in group]
    else:  # p(…, o): what varies is the subject
        pattern, varying = show((predicate, "…", target)), [str(g[1]) for g in group]
    more = f", … and {len(group) - EXAMPLES_SHOWN} more" if len(group) > EXAMPLES_SHOWN else ""
    return f"{pattern} ×{len(group)}: {', '.join(varying[:EXAMPLES_SHOWN])}{more}"


def settling(store: GafStore, closure_id: str, *, tries: int = SETTLE_TRIES) -> Settling:
    """What would settle the verdict of ``closure_id`` (see ``Settling``); nothing for a
    verdict that is not undetermined. Reads the closure's cone; writes nothing."""
    closure = store.get(closure_id, Closure)
    found = store.find(Verdict, closure=closure.id)
    if not found:
        raise UnknownReference(f"no verdict for {closure.id}", where=closure.id, hint="gaf close makes one")
    verdict = found[0]
    if verdict.label != UNDETERMINED:
        return Settling(closure.id, verdict.label, tries=tries)
    policy, rules = store.get(closure.projection, Projection), store.get(closure.rules, VerdictRules)
    claims = cone_claims(store, policy, closure.as_of)
    return settling_over(policy, rules, claims, closure, label=verdict.label, named=verdict.trace.get("would_settle", []), tries=tries)


def settling_over(
    policy: Projection, rules: VerdictRules, claims: list[Claim], closure: Closure, *, label: str | None = None,
    named: Sequence[str] = (), tries: int = SETTLE_TRIES,
) -> Settling:  # fmt: skip
    """``settling`` over a closure's inputs in hand; ``label`` and ``named``: its stored
    verdict's label and the unknown premises its trace names.

    The premises are what-if's unknown premises, tried in a fixed order — those the verdict
    rules reach from the closure's subject first, then the rest of the cone's — each with
    what-if's own claims settling it (``_settlers``), until one moves the label; at most
    ``tries`` of them, the others counted as not tried. A premise no claim can state (one the
    rules derive, one no source is trusted for) is not tried: it is among the rest."""
    base, evaluated = _judge(policy, rules, claims, closure)
    if label is not None and base.label != label:
        return Settling(closure.id, base.label, rest=tuple(sorted(set(named))), tries=tries, stored_label=label)
    if base.label != UNDETERMINED:
        return Settling(closure.id, base.label, tries=tries)
    unknown = _all_unknown(rules, evaluated, closure.subject)
    reached = {ground_of(p): n for n, p in enumerate(_unknown_premises(rules, evaluated, closure.subject))}
    ordered = sorted(unknown, key=lambda p: (reached.get(ground_of(p), len(reached)), p.id))
    settlers: dict[Ground, list[Change]] = {}
    for p in ordered:
        for change in _settlers(policy, rules, closure, p):
            (statement,) = change.claim.statements
            settlers.setdefault(ground_of(statement.proposition()), []).append(change)
    movers: list[Ground] = []
    untried: list[str] = []
    for n, (ground, changes) in enumerate(settlers.items()):
        if n >= tries:
            untried.append(show(ground))
        elif any(_judge(policy, rules, _apply(claims, [c]), closure)[0].label != base.label for c in changes):
            movers.append(ground)
    written = {show(g) for g in movers}
    premises = set(named) | {show(ground_of(p)) for p in unknown} | {show(g) for g in settlers}
    return Settling(closure.id, base.label, tuple(sorted(movers, key=show)), tuple(sorted(premises - written)),
                    tuple(sorted(untried)), tries)  # fmt: skip
