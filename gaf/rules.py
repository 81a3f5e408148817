"""The derivation language: rules as data a domain expert can read and version.

A rule names a conclusion (its head) and one or more alternative bodies, each a
conjunction of clauses with its own confidence. Clauses are fact patterns
(``rent_amount(?L, ?A)``), comparisons (``?A >= 1000``), negation
(``not credited_to(_, ?Acct)``) and references to other rules by version
(``paid@1(?R)``), so one definition serves many rules.

The same structure has two spellings: YAML/JSON (each clause a short string or
the equivalent mapping) and the Python builder below (``atom``, ``cmp``, ``not_``,
``ref``, ``rule``). There is no second, hidden structure: the builder returns the
very models that YAML is read into, and their canonical JSON is what gets hashed.

Terms: ``?name`` is a variable, ``_`` matches anything (only inside ``not``), and
anything else is a constant — a bare token (``lease:17``), a quoted string, a
number, ``true`` or ``false``. An atom's second argument matches a proposition's
object, or its value when it has no object.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from decimal import Decimal
from typing import Annotated, Any, Literal, TypeGuard

from pydantic import BeforeValidator, ConfigDict, Field, PositiveInt, ValidationError, model_validator

from gaf.errors import InvalidValue, RuleError, UnestablishedPredicate
from gaf.types import Key, Scalar, Text, Value, number_text, to_number

Term = Scalar

COMPARATORS = ("==", "!=", "<=", ">=", "<", ">")

#: The operator of a comparison clause.
Comparator = Literal["==", "!=", "<", "<=", ">", ">="]


def closest(name: str, known: Iterable[str]) -> str | None:
    """The known name most like ``name``, to suggest when one looks misspelt (None if none is close)."""
    found = difflib.get_close_matches(name, sorted(set(known) - {name}), n=1, cutoff=0.6)
    return found[0] if found else None


def is_var(term: object) -> TypeGuard[str]:
    return isinstance(term, str) and term.startswith("?") and len(term) > 1


def is_wild(term: object) -> bool:
    return term == "_"


# ---------------------------------------------------------------------- clauses


class Atom(Value):
    """A fact pattern: predicate(subject[, object or value])."""

    predicate: Key
    subject: Term
    object: Term | None = None

    def terms(self) -> list[Term]:
        return [self.subject] if self.object is None else [self.subject, self.object]

    def vars(self) -> set[str]:
        return {t for t in self.terms() if is_var(t)}

    def __str__(self) -> str:
        return f"{self.predicate}({', '.join(_show(t) for t in self.terms())})"


class Compare(Value):
    """A comparison between two bound terms."""

    left: Term
    op: Comparator
    right: Term

    def vars(self) -> set[str]:
        return {t for t in (self.left, self.right) if is_var(t)}

    def __str__(self) -> str:
        return f"{_show(self.left)} {self.op} {_show(self.right)}"


class RuleRef(Value):
    """A use of another rule's conclusion, pinned to its version: ``name@version(args)``."""

    rule: Annotated[str, Field(pattern=r"^[^@\s]+@[1-9][0-9]*$")]
    args: list[Term]

    def vars(self) -> set[str]:
        return {t for t in self.args if is_var(t)}

    def __str__(self) -> str:
        return f"{self.rule}({', '.join(_show(t) for t in self.args)})"


class Not(Value):
    """Negation of one atom or rule reference.

    Over claims, ``not`` is true only inside a declared complete scope and
    unknown elsewhere; over another rule's conclusion it is the negation of what
    that rule derived (rules define their conclusions completely).
    """

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True, serialize_by_alias=True)

    not_: Atom | RuleRef = Field(alias="not")

    def vars(self) -> set[str]:
        return self.not_.vars()

    def __str__(self) -> str:
        return f"not {self.not_}"


Clause = Atom | Compare | RuleRef | Not


def _clause(value: Any) -> Any:
    """Read a clause from its text or mapping spelling."""
    if isinstance(value, str):
        return parse_clause(value)
    if isinstance(value, dict) and "not" in value and isinstance(value["not"], (str, list)):
        inner = value["not"]
        if isinstance(inner, list):
            if len(inner) != 1:
                raise ValueError("not(...) takes one atom; name the conjunction as a rule and negate that")
            inner = inner[0]
        return {"not": parse_clause(inner) if isinstance(inner, str) else inner}
    return value


ClauseField = Annotated[Clause, BeforeValidator(_clause)]


class Body(Value):
    """One way to reach the conclusion: clauses that must all hold, and its confidence."""

    when: list[ClauseField] = Field(min_length=1)
    confidence: Annotated[float, Field(gt=0, le=1)] = 1.0


def _head(value: Any) -> Any:
    if isinstance(value, str):
        clause = parse_clause(value)
        if not isinstance(clause, Atom):
            raise ValueError(f"a head must be a plain atom, got {value!r}")
        return clause
    return value


class DerivationRule(Value):
    """A named, versioned derivation: head ⇐ body₁ | body₂ | …"""

    name: Key
    version: PositiveInt = 1
    head: Annotated[Atom, BeforeValidator(_head)]
    bodies: list[Body] = Field(min_length=1)
    backing: Text = ""

    @model_validator(mode="before")
    @classmethod
    def _single_body(cls, data: Any) -> Any:
        """``when:`` (and ``confidence:``) at the top is shorthand for one body."""
        if isinstance(data, dict) and "when" in data:
            data = dict(data)
            body = {"when": data.pop("when")}
            if "confidence" in data:
                body["confidence"] = data.pop("confidence")
            more = data.get("bodies") or []
            if not isinstance(more, list):
                raise ValueError("bodies must be a list of bodies")
            data["bodies"] = [body, *more]
        return data

    @property
    def ref(self) -> str:
        return f"{self.name}@{self.version}"

    def __str__(self) -> str:
        bodies = " | ".join(", ".join(str(c) for c in b.when) for b in self.bodies)
        return f"{self.ref}: {self.head} :- {bodies}"


# ---------------------------------------------------------------------- the Python builder


def atom(predicate: str, subject: Term, object: Term | None = None) -> Atom:
    """A fact pattern, e.g. ``atom("rent_amount", "?L", "?A")``."""
    return Atom(predicate=predicate, subject=subject, object=object)


def cmp(left: Term, op: Comparator, right: Term) -> Compare:
    """A comparison, e.g. ``cmp("?A", ">=", 1000)``."""
    return Compare(left=left, op=op, right=right)


def not_(clause: Atom | RuleRef) -> Not:
    """The negation of one atom or rule reference."""
    return Not.model_validate({"not": clause})


def ref(rule_ref: str, *args: Term) -> RuleRef:
    """A use of another rule, e.g. ``ref("paid@1", "?R")``."""
    return RuleRef(rule=rule_ref, args=list(args))


def body(*clauses: Clause | str, confidence: float = 1.0) -> Body:
    # validated from the data spelling: a clause given as text is read by the field's validator
    return Body.model_validate({"when": list(clauses), "confidence": confidence})


def rule(name: str, head: Atom | str, *bodies: Body, version: int = 1, backing: str = "") -> DerivationRule:
    """A derivation rule, e.g. ``rule("paid", "paid(?R)", body("allocated_to(?P, ?R)"))``."""
    # validated from the data spelling: a head given as text is read by the field's validator
    return DerivationRule.model_validate(
        {"name": name, "version": version, "head": head, "bodies": list(bodies), "backing": backing}
    )


# ---------------------------------------------------------------------- the text spelling

_TOKEN = re.compile(
    r"""\s*(?:
        (?P<str>"(?:[^"\\]|\\.)*")
      | (?P<op>==|!=|<=|>=|<|>)
      | (?P<punct>[(),])
      | (?P<word>[^\s(),"=!<>]+)
    )""",
    re.VERBOSE,
)
_NUMBER = re.compile(r"^-?\d+(\.\d+)?([eE][-+]?\d+)?$")


def parse_clause(text: str) -> Clause:
    """Read ``pred(a, b)``, ``not pred(a)``, ``name@1(a)`` or ``?x >= 3``."""
    try:
        clause, rest = _clause_tokens(_tokens(text))
    except InvalidValue:
        raise
    except (IndexError, ValueError, ValidationError) as exc:
        raise InvalidValue(f"cannot read clause {text!r}: {exc}") from None
    if rest:
        raise InvalidValue(f"cannot read clause {text!r}: unexpected {rest[0][1]!r}")
    return clause


def _tokens(text: str) -> list[tuple[str, str]]:
    out, pos = [], 0
    while pos < len(text):
        if text[pos:].strip() == "":
            break
        match = _TOKEN.match(text, pos)
        if not match:
            raise InvalidValue(f"cannot read clause {text!r} at {text[pos:]!r}")
        kind = match.lastgroup or ""
        out.append((kind, match.group(kind)))
        pos = match.end()
    return out


def _clause_tokens(tokens: list[tuple[str, str]]) -> tuple[Clause, list[tuple[str, str]]]:
    if tokens and tokens[0] == ("word", "not"):
        inner, rest = _clause_tokens(tokens[1:])
        if not isinstance(inner, (Atom, RuleRef)):
            raise ValueError("not takes an atom or a rule reference")
        return Not.model_validate({"not": inner}), rest
    if len(tokens) >= 3 and tokens[1][0] == "op":
        # the operator token is text: validating the clause reads it as a Comparator
        return Compare.model_validate({"left": _term(tokens[0]), "op": tokens[1][1], "right": _term(tokens[2])}), tokens[3:]
    kind, name = tokens[0]
    if kind != "word" or tokens[1] != ("punct", "("):
        raise ValueError("expected name(arguments)")
    args, rest = _args(tokens[2:])
    if "@" in name:
        return RuleRef(rule=name, args=args), rest
    if not 1 <= len(args) <= 2:
        raise ValueError(f"{name} takes a subject and at most one object, got {len(args)} arguments")
    return Atom(predicate=name, subject=args[0], object=args[1] if len(args) == 2 else None), rest


def _args(tokens: list[tuple[str, str]]) -> tuple[list[Term], list[tuple[str, str]]]:
    args: list[Term] = []
    while True:
        if tokens[0] == ("punct", ")"):
            return args, tokens[1:]
        args.append(_term(tokens[0]))
        tokens = tokens[1:]
        if tokens[0] == ("punct", ","):
            tokens = tokens[1:]
        elif tokens[0] != ("punct", ")"):
            raise ValueError(f"expected ',' or ')', got {tokens[0][1]!r}")


def _term(token: tuple[str, str]) -> Term:
    kind, text = token
    if kind == "str":
        return bytes(text[1:-1], "utf-8").decode("unicode_escape")
    if kind != "word":
        raise ValueError(f"expected a term, got {text!r}")
    if text in ("true", "false"):
        return text == "true"
    if _NUMBER.match(text):
        return to_number(Decimal(text)) if any(c in text for c in ".eE") else int(text)
    return text


def _show(term: Term) -> str:
    """A term as the rule language writes it, so a rule's text parses back into the same rule:
    text that would read as a number, a keyword or punctuation is quoted. Statements are
    shown for people by ``gaf.records.ledger.statement_text``, which does not quote."""
    if isinstance(term, bool):
        return "true" if term else "false"
    if isinstance(term, str) and (is_var(term) or is_wild(term) or re.fullmatch(r"[^\s(),\"=!<>]+", term)):
        if not _NUMBER.match(term) and term not in ("true", "false", "not"):
            return term
    if isinstance(term, str):
        return '"' + term.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(term, (int, Decimal)):
        return number_text(term)
    return repr(term)


# ---------------------------------------------------------------------- checking a rule set


def check_rules(rules: Iterable[DerivationRule], *, known_predicates: set[str] | None = None) -> list[list[DerivationRule]]:
    """Refuse rule sets that cannot be evaluated soundly; return them in strata.

    Checks: no two rules share name@version; every head variable and every
    variable under ``not`` or in a comparison is bound by a positive atom of the
    same body; every rule reference names an existing name@version with the
    right arity; every predicate is derived by a rule or (when ``known_predicates``
    is given) one the policy lets some source establish; and no predicate depends
    on its own negation (stratification). Strata come lowest first.
    """
    rules = list(rules)
    by_ref: dict[str, DerivationRule] = {}
    for r in rules:
        if r.ref in by_ref:
            raise RuleError(f"rule {r.ref} is defined twice", where=r.ref)
        by_ref[r.ref] = r
    derived = {r.head.predicate for r in rules}
    for r in rules:
        _check_rule(r, by_ref, derived, known_predicates)
    return _strata(rules, by_ref)


def _check_rule(r: DerivationRule, by_ref: dict[str, DerivationRule], derived: set[str], known: set[str] | None) -> None:
    if any(is_wild(t) for t in r.head.terms()):
        raise RuleError("a head cannot contain _", where=r.ref)
    for number, b in enumerate(r.bodies, start=1):
        where = f"{r.ref} body {number}"
        bound: set[str] = set()
        for clause in b.when:
            if isinstance(clause, RuleRef):
                _check_ref(clause, by_ref, where)
            if isinstance(clause, Not) and isinstance(clause.not_, RuleRef):
                _check_ref(clause.not_, by_ref, where)
            for a in _atoms_of(clause):
                if known is not None and a.predicate not in derived and a.predicate not in known:
                    near = closest(a.predicate, derived | known)
                    raise UnestablishedPredicate(
                        f"predicate {a.predicate!r} is neither derived by a rule nor established by any trusted source"
                        + (f"; did you mean {near}?" if near else ""),
                        where=where,
                        hint="add a trust rule for a source that states it, or a rule that derives it",
                    )
            if isinstance(clause, (Atom, RuleRef)):
                if any(is_wild(t) for t in _terms(clause)):
                    raise RuleError(f"_ is only allowed under not, in {clause}", where=where)
                bound |= clause.vars()
        for clause in b.when:
            if isinstance(clause, Not):
                free = clause.vars() - bound
                if free:
                    raise RuleError(
                        f"variable {', '.join(sorted(free))} appears only under not in {clause}",
                        where=where,
                        hint="bind it with a positive atom, or write _ if any value will do",
                    )
            if isinstance(clause, Compare) and clause.vars() - bound:
                raise RuleError(f"comparison {clause} uses unbound {', '.join(sorted(clause.vars() - bound))}", where=where)
        unbound = r.head.vars() - bound
        if unbound:
            raise RuleError(f"head variable {', '.join(sorted(unbound))} of {r.head} is not bound by the body", where=where)


def _check_ref(clause: RuleRef, by_ref: dict[str, DerivationRule], where: str) -> None:
    target = by_ref.get(clause.rule)
    if target is None:
        raise RuleError(f"reference to unknown rule {clause.rule}", where=where, hint=f"known: {', '.join(sorted(by_ref))}")
    if len(clause.args) != len(target.head.terms()):
        raise RuleError(f"{clause} passes {len(clause.args)} arguments; {target.head} takes {len(target.head.terms())}", where=where)


def _terms(clause: Atom | RuleRef) -> list[Term]:
    return clause.terms() if isinstance(clause, Atom) else clause.args


def _atoms_of(clause: Clause) -> Iterator[Atom]:
    if isinstance(clause, Atom):
        yield clause
    elif isinstance(clause, Not) and isinstance(clause.not_, Atom):
        yield clause.not_


def resolve(clause: Atom | RuleRef, by_ref: dict[str, DerivationRule]) -> Atom:
    """The atom a clause stands for: a rule reference becomes its rule's head predicate."""
    if isinstance(clause, Atom):
        return clause
    head = by_ref[clause.rule].head
    return Atom(predicate=head.predicate, subject=clause.args[0], object=clause.args[1] if len(clause.args) > 1 else None)


def _strata(rules: list[DerivationRule], by_ref: dict[str, DerivationRule]) -> list[list[DerivationRule]]:
    """Group rules into strata; a predicate may not depend negatively on itself."""
    derived = {r.head.predicate for r in rules}
    edges: dict[str, set[tuple[str, bool]]] = {p: set() for p in derived}
    for r in rules:
        for b in r.bodies:
            for clause in b.when:
                negative = isinstance(clause, Not)
                inner = clause.not_ if isinstance(clause, Not) else clause
                if isinstance(inner, (Atom, RuleRef)):
                    pred = resolve(inner, by_ref).predicate
                    if pred in derived:
                        edges[r.head.predicate].add((pred, negative))
    level = {p: 0 for p in derived}
    # Bellman-Ford style: a negative edge forces a strictly higher stratum.
    for _ in range(len(derived) + 1):
        changed = False
        for head, deps in edges.items():
            for dep, negative in deps:
                need = level[dep] + (1 if negative else 0)
                if level[head] < need:
                    level[head] = need
                    changed = True
        if not changed:
            break
    else:
        cycle = sorted(p for p, deps in edges.items() if any(neg for _, neg in deps))
        raise RuleError(
            f"the rules negate through recursion (unstratifiable): {', '.join(cycle)}",
            hint="a predicate may not depend on its own negation, directly or through other rules",
        )
    strata: dict[int, list[DerivationRule]] = {}
    for r in sorted(rules, key=lambda r: r.ref):
        strata.setdefault(level[r.head.predicate], []).append(r)
    return [strata[k] for k in sorted(strata)]


# ---------------------------------------------------------------------- the compiled program


def _resolved(clause: Clause, by_ref: dict[str, DerivationRule]) -> Clause:
    """A clause with any rule reference replaced by the atom it stands for."""
    if isinstance(clause, RuleRef):
        return resolve(clause, by_ref)
    if isinstance(clause, Not) and isinstance(clause.not_, RuleRef):
        return Not.model_validate({"not": resolve(clause.not_, by_ref)})
    return clause


@dataclass(frozen=True)
class CompiledRule:
    """One rule as the evaluator runs it: its bodies' clauses with rule references resolved."""

    rule: DerivationRule
    bodies: tuple[tuple[Clause, ...], ...]

    @property
    def ref(self) -> str:
        return self.rule.ref


@dataclass(frozen=True)
class Program:
    """A rule set compiled once: checked, every rule reference resolved to the atom it
    stands for (``paid@1(?m)`` → ``paid(?m)``), and stratified, lowest stratum first.

    The evaluator (``gaf.derive``) runs a program without calling back into the parser
    or the resolver, and the questions asked of a rule set — which predicates its bodies
    read, which claim-level predicates a derived one rests on — are answered here, once.
    """

    rules: tuple[CompiledRule, ...]
    strata: tuple[tuple[CompiledRule, ...], ...]
    #: the predicates the rules conclude
    heads: frozenset[str]

    def reads(self) -> set[str]:
        """Every predicate a rule body reads, positively or under ``not``."""
        return {a.predicate for r in self.rules for body in r.bodies for c in body for a in _atoms_of(c)}

    def beneath(self, predicates: Iterable[str]) -> set[str]:
        """The predicates no rule concludes that the rules for these reach, transitively."""
        by_head: dict[str, list[CompiledRule]] = {}
        for r in self.rules:
            by_head.setdefault(r.rule.head.predicate, []).append(r)
        seen: set[str] = set()
        todo = [p for p in predicates if p in self.heads]
        out: set[str] = set()
        while todo:
            p = todo.pop()
            if p in seen:
                continue
            seen.add(p)
            for r in by_head.get(p, []):
                for body in r.bodies:
                    for q in {a.predicate for c in body for a in _atoms_of(c)}:
                        if q in self.heads:
                            todo.append(q)
                        else:
                            out.add(q)
        return out


def compile_rules(rules: Iterable[DerivationRule], *, known_predicates: set[str] | None = None) -> Program:
    """Check a rule set (``check_rules``), resolve its rule references and stratify it: the program."""
    rules = list(rules)
    strata = check_rules(rules, known_predicates=known_predicates)
    by_ref = {r.ref: r for r in rules}
    compiled = {r.ref: CompiledRule(r, tuple(tuple(_resolved(c, by_ref) for c in b.when) for b in r.bodies)) for r in rules}
    return Program(
        rules=tuple(compiled[r.ref] for r in rules),
        strata=tuple(tuple(compiled[r.ref] for r in stratum) for stratum in strata),
        heads=frozenset(r.head.predicate for r in rules),
    )
