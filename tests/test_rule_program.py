"""The rule language compiled once: a policy's rules checked, resolved and stratified into one program."""

from __future__ import annotations

import pytest

import gaf.derive
from gaf.derive import Entry, Truth, evaluate_rules
from gaf.errors import RuleError
from gaf.rules import Atom, DerivationRule, Not, RuleRef, compile_rules


def _rule(name: str, head: str, *when: str) -> DerivationRule:
    return DerivationRule.model_validate({"name": name, "version": 1, "head": head, "when": list(when)})


RULES = [
    _rule("overdue", "overdue(?R)", "due(?R)", "not paid@1(?R)"),
    _rule("paid", "paid(?R)", "allocated_to(?P, ?R)", "amount(?P, ?A)", "rent(?R, ?A)"),
    _rule("flagged", "flagged(?R)", "overdue@1(?R)"),
]


class Facts:
    """A plain fact base: the given entries true, everything else absent — in a closed scope for
    the ``closed`` predicates (a declaration named after the predicate), else in an open one."""

    def __init__(self, *grounds: tuple[str, str, str | None], closed: tuple[str, ...] = ()):
        self.entries = [Entry(g, Truth.TRUE, f"e{i}") for i, g in enumerate(grounds)]
        self.closed_predicates = closed

    def match(self, predicate, subject, obj):
        return [e for e in self.entries if e.ground[0] == predicate and subject in (None, e.ground[1])
                and obj in (None, e.ground[2])]  # fmt: skip

    def closed(self, predicate, subject, obj):
        return f"complete-{predicate}" if predicate in self.closed_predicates else None


def test_a_program_resolves_every_rule_reference_to_the_atom_it_stands_for_and_stratifies():
    program = compile_rules(RULES)
    clauses = [c for r in program.rules for body in r.bodies for c in body]
    assert not any(isinstance(c, RuleRef) or isinstance(c, Not) and isinstance(c.not_, RuleRef) for c in clauses)
    assert Not.model_validate({"not": Atom(predicate="paid", subject="?R")}) in clauses
    level = {r.ref: n for n, stratum in enumerate(program.strata) for r in stratum}
    assert level["paid@1"] < level["overdue@1"] <= level["flagged@1"]  # not paid: paid is complete first
    assert program.heads == {"overdue", "paid", "flagged"}


def test_what_a_program_reads_and_what_a_derived_predicate_rests_on():
    program = compile_rules(RULES)
    assert program.reads() == {"due", "paid", "allocated_to", "amount", "rent", "overdue"}
    assert program.beneath({"flagged"}) == {"due", "allocated_to", "amount", "rent"}
    assert program.beneath({"due"}) == set()  # not derived: nothing beneath it


def test_evaluating_a_program_never_goes_back_to_the_resolver(monkeypatch):
    program = compile_rules(RULES)

    def refuse(*_):
        raise AssertionError("the evaluator called the resolver")

    monkeypatch.setattr(gaf.derive, "resolve", refuse)
    conclusions = evaluate_rules(program, Facts(("due", "r1", None), ("due", "r2", None), ("allocated_to", "p1", "r2"),
                                                ("amount", "p1", 900), ("rent", "r2", 900), closed=("allocated_to",)))  # fmt: skip
    truths = {g: d.truth for g, d in conclusions.derived.items() if d.truth != Truth.FALSE}
    # not over a derived predicate is the negation of what its rule derived: the payments are
    # complete and r1 has none, so it is overdue
    assert truths == {("paid", "r2", None): Truth.TRUE, ("overdue", "r1", None): Truth.TRUE, ("flagged", "r1", None): Truth.TRUE}
    # with the payments open, r1 might have one nobody has reported yet: overdue is unknown, not true
    open_scope = evaluate_rules(program, Facts(("due", "r1", None), ("due", "r2", None), ("allocated_to", "p1", "r2"),
                                               ("amount", "p1", 900), ("rent", "r2", 900)))  # fmt: skip
    assert open_scope.derived[("overdue", "r1", None)].truth == Truth.UNKNOWN


def test_a_rule_set_that_cannot_be_compiled_is_refused_naming_the_rule():
    with pytest.raises(RuleError, match="paid@2"):
        compile_rules([_rule("overdue", "overdue(?R)", "due(?R)", "not paid@2(?R)"), RULES[1]])
