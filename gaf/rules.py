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
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Annotated, Any, Literal, TypeGuard

from pydantic import BeforeValidator, ConfigDict, Field, PositiveInt, ValidationError, model_validator

from gaf.arith import apply, compare, is_number
from gaf.errors import InvalidArithmetic, InvalidValue, RuleError, UnestablishedPredicate
from gaf.types import Key, Quantity, Scalar, Text, Value, number_text, to_number

#: A term: a variable, ``_``, or a constant — text, a boolean, an exact number, an amount in a unit (``25 EUR``).
Term = Scalar | Quantity

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


#: The operator of an arithmetic expression.
Operator = Literal["+", "-", "*", "/"]
_PRECEDENCE = {"+": 1, "-": 1, "*": 2, "/": 2}


class Arith(Value):
    """An arithmetic expression over exact numbers: ``?q * ?price``, ``?total - ?paid``.

    Written as data it is ``{"op": "*", "left": "?q", "right": "?price"}``; in clause text
    the operator stands between spaces (``?q * ?price``), because keys such as
    ``2026-07-01`` or ``doc/1`` hold the same characters."""

    op: Operator
    left: Operand
    right: Operand

    def vars(self) -> set[str]:
        return _operand_vars(self.left) | _operand_vars(self.right)

    def __str__(self) -> str:
        def side(operand: Operand, right: bool) -> str:
            if isinstance(operand, Arith):
                inner, outer = _PRECEDENCE[operand.op], _PRECEDENCE[self.op]
                if inner < outer or (right and inner == outer):
                    return f"({operand})"
                return str(operand)
            return _show(operand)

        return f"{side(self.left, False)} {self.op} {side(self.right, True)}"


#: What arithmetic and comparisons take: a term, or an expression of terms.
Operand = Term | Arith
Arith.model_rebuild()


def _operand_vars(operand: Operand | None) -> set[str]:
    if isinstance(operand, Arith):
        return operand.vars()
    return {operand} if is_var(operand) else set()


def divisors(operand: Operand | None) -> Iterator[Operand]:
    """Every right-hand side of a division in an expression."""
    if isinstance(operand, Arith):
        if operand.op == "/":
            yield operand.right
        yield from divisors(operand.left)
        yield from divisors(operand.right)


class Compare(Value):
    """A comparison between two bound terms or expressions: ``?A >= 1000``, ``?q * ?p <= ?limit``."""

    left: Operand
    op: Comparator
    right: Operand

    def vars(self) -> set[str]:
        return _operand_vars(self.left) | _operand_vars(self.right)

    def __str__(self) -> str:
        return f"{_show_operand(self.left)} {self.op} {_show_operand(self.right)}"


class Let(Value):
    """``?total = ?q * ?price``: binds a variable to a value computed from bound ones
    (when the variable is bound already, it tests that it equals the value)."""

    let: Annotated[str, Field(pattern=r"^\?[A-Za-z_][A-Za-z0-9_]*$")]
    be: Operand

    def vars(self) -> set[str]:
        return {self.let} | _operand_vars(self.be)

    def __str__(self) -> str:
        return f"{self.let} = {_show_operand(self.be)}"


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


#: What an aggregate ranges over: any clause but another aggregate.
InnerClause = Atom | Compare | RuleRef | Not | Let

#: What an aggregate computes over its members.
AggregateKind = Literal["sum", "count", "min", "max"]


def _inner_clause(value: Any) -> Any:
    clause = _clause(value)
    if isinstance(clause, Aggregate):
        raise ValueError(f"aggregates do not nest: {clause}; derive the inner one with a rule of its own")
    return clause


class Aggregate(Value):
    """``?total = sum ?q over received(?d, ?o), quantity(?d, ?q)``: one value over a group.

    The members are the distinct ways the ``over`` clauses hold, with the variables bound
    before the aggregate (here ``?o``) fixing the group; ``sum``, ``min`` and ``max`` read
    ``of`` for each member, ``count`` counts them. The members are accepted propositions,
    never claims: a receipt three sources confirm counts once. Over a closed scope the
    value is exact; over an open one it is a bound (see ``gaf.arith``). An aggregate reads
    only what lower strata conclude."""

    let: Annotated[str, Field(pattern=r"^\?[A-Za-z_][A-Za-z0-9_]*$")]
    aggregate: AggregateKind
    of: Operand | None = None
    over: list[Annotated[InnerClause, BeforeValidator(_inner_clause)]] = Field(min_length=1)

    @model_validator(mode="after")
    def _what_it_reads(self) -> Aggregate:
        if self.aggregate == "count" and self.of is not None:
            raise ValueError(f"count counts members and takes no value: write {self.let} = count over ...")
        if self.aggregate != "count" and self.of is None:
            raise ValueError(f"{self.aggregate} needs the value it reads: {self.let} = {self.aggregate} ?x over ...")
        return self

    def vars(self) -> set[str]:
        """The variables it shares with the rest of the body: its result (inner ones are its own)."""
        return {self.let}

    def inner_vars(self) -> set[str]:
        return _operand_vars(self.of) | {v for c in self.over for v in c.vars()}

    def __str__(self) -> str:
        of = f" {_show_operand(self.of)}" if self.of is not None else ""
        return f"{self.let} = {self.aggregate}{of} over {', '.join(str(c) for c in self.over)}"


Clause = Atom | Compare | RuleRef | Not | Let | Aggregate


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
      | (?P<op>==|!=|<=|>=|<|>|=)
      | (?P<punct>[(),])
      | (?P<word>[^\s(),"=!<>]+)
    )""",
    re.VERBOSE,
)
_NUMBER = re.compile(r"^-?\d+(\.\d+)?([eE][-+]?\d+)?$")
_VARIABLE = re.compile(r"^\?[A-Za-z_][A-Za-z0-9_]*$")
_ARITHMETIC = ("+", "-", "*", "/")
_AGGREGATES = ("sum", "count", "min", "max")

Token = tuple[str, str]


def parse_clause(text: str) -> Clause:
    """Read ``pred(a, b)``, ``not pred(a)``, ``name@1(a)``, ``?x >= 3``, ``?t = ?q * ?p`` or
    ``?n = count over receipt(?r, ?trip)``."""
    try:
        clause, rest = _clause_tokens(_tokens(text))
    except InvalidValue:
        raise
    except ValidationError as exc:
        message = str(exc.errors(include_url=False)[0]["msg"]).removeprefix("Value error, ")
        raise InvalidValue(f"cannot read clause {text!r}: {message}") from None
    except (IndexError, ValueError) as exc:
        raise InvalidValue(f"cannot read clause {text!r}: {exc}") from None
    if rest:
        raise InvalidValue(f"cannot read clause {text!r}: unexpected {rest[0][1]!r}")
    return clause


def parse_expression(text: str) -> Operand:
    """Read an arithmetic expression: ``?n * ?price``, ``(?a + ?b) / 2``, ``1000 EUR``."""
    try:
        value, rest = _expr(_tokens(text))
    except InvalidValue:
        raise
    except (IndexError, ValueError, ValidationError) as exc:
        raise InvalidValue(f"cannot read expression {text!r}: {exc}") from None
    if rest:
        raise InvalidValue(f"cannot read expression {text!r}: unexpected {rest[0][1]!r}")
    return value


def _tokens(text: str) -> list[Token]:
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


def _top_level(tokens: list[Token]) -> Iterator[tuple[int, Token]]:
    """The tokens outside any parentheses, with their positions."""
    depth = 0
    for i, token in enumerate(tokens):
        if token == ("punct", "("):
            depth += 1
        elif token == ("punct", ")"):
            depth -= 1
        elif depth == 0:
            yield i, token


def _clause_tokens(tokens: list[Token]) -> tuple[Clause, list[Token]]:
    if tokens and tokens[0] == ("word", "not"):
        inner, rest = _clause_tokens(tokens[1:])
        if not isinstance(inner, (Atom, RuleRef)):
            raise ValueError("not takes an atom or a rule reference")
        return Not.model_validate({"not": inner}), rest
    if len(tokens) >= 2 and tokens[1] == ("op", "=") and tokens[0][0] == "word" and tokens[0][1].startswith("?"):
        variable = str(_term(tokens[0]))
        rest = tokens[2:]
        if rest and rest[0][0] == "word" and rest[0][1] in _AGGREGATES and any(t == ("word", "over") for _, t in _top_level(rest)):
            return _aggregate(variable, rest), []
        value, rest = _expr(rest)
        return Let(let=variable, be=value), rest
    operators = [t for _, t in _top_level(tokens) if t[0] == "op"]
    if operators:
        if operators[0] == ("op", "="):
            raise ValueError("= binds a variable (?x = ?a + 1); compare with ==")
        left, rest = _expr(tokens)
        if not rest or rest[0][0] != "op":
            raise ValueError("expected a comparison (== != < <= > >=)")
        op = rest[0][1]
        right, rest = _expr(rest[1:])
        # the operator token is text: validating the clause reads it as a Comparator
        return Compare.model_validate({"left": left, "op": op, "right": right}), rest
    kind, name = tokens[0]
    if kind != "word" or tokens[1] != ("punct", "("):
        raise ValueError("expected name(arguments)")
    args, rest = _args(tokens[2:])
    if "@" in name:
        return RuleRef(rule=name, args=args), rest
    if not 1 <= len(args) <= 2:
        raise ValueError(f"{name} takes a subject and at most one object, got {len(args)} arguments")
    return Atom(predicate=name, subject=args[0], object=args[1] if len(args) == 2 else None), rest


def _aggregate(variable: str, tokens: list[Token]) -> Aggregate:
    """``sum ?q over a(..), b(..)`` after ``?total =``: the aggregate, its value, its clauses."""
    kind, rest = tokens[0][1], tokens[1:]
    of: Operand | None = None
    if rest[0] != ("word", "over"):
        of, rest = _expr(rest)
        if not rest or rest[0] != ("word", "over"):
            raise ValueError(f"expected over after {kind} {_show_operand(of)}")
    rest = rest[1:]
    clauses: list[Clause] = []
    start = 0
    cuts = [i for i, t in _top_level(rest) if t == ("punct", ",")] + [len(rest)]
    for cut in cuts:
        part = rest[start:cut]
        if not part:
            raise ValueError(f"{kind} over nothing: name what it ranges over")
        clause, left = _clause_tokens(part)
        if left:
            raise ValueError(f"unexpected {left[0][1]!r}")
        clauses.append(clause)
        start = cut + 1
    return Aggregate.model_validate({"let": variable, "aggregate": kind, "of": of, "over": clauses})


# boilerplate: _expr and _product below are one function a precedence level, as recursive descent writes a grammar;
# folding them into one parametrised loop would add a call per level to every nested operand, for two short functions.
def _expr(tokens: list[Token]) -> tuple[Operand, list[Token]]:
    """``a + b * (c - d)``: sums of products, ``*`` and ``/`` binding tighter."""
    left, tokens = _product(tokens)
    while tokens and tokens[0] in (("word", "+"), ("word", "-")):
        op = tokens[0][1]
        right, tokens = _product(tokens[1:])
        left = Arith.model_validate({"op": op, "left": left, "right": right})
    return left, tokens


def _product(tokens: list[Token]) -> tuple[Operand, list[Token]]:
    left, tokens = _operand(tokens)
    while tokens and tokens[0] in (("word", "*"), ("word", "/")):
        op = tokens[0][1]
        right, tokens = _operand(tokens[1:])
        left = Arith.model_validate({"op": op, "left": left, "right": right})
    return left, tokens


def _operand(tokens: list[Token]) -> tuple[Operand, list[Token]]:
    if tokens[0] == ("punct", "("):
        inner, rest = _expr(tokens[1:])
        if not rest or rest[0] != ("punct", ")"):
            raise ValueError("a ( is not closed")
        return inner, rest[1:]
    if tokens[0][0] == "word" and tokens[0][1] in _ARITHMETIC:
        raise ValueError(f"expected a value before {tokens[0][1]!r}")
    if len(tokens) > 1 and tokens[1] == ("punct", "("):
        raise ValueError(f"{tokens[0][1]}(...) is an atom: an atom is a clause of its own, not a value")
    return _with_unit(_term(tokens[0]), tokens[1:])


_UNIT = re.compile(r"^[A-Za-z%][A-Za-z0-9_/%]*$")
_KEYWORDS = ("over", "not", "true", "false", *_AGGREGATES)


def _with_unit(term: Term, tokens: list[Token]) -> tuple[Term, list[Token]]:
    """A number followed by a unit word (``1000 EUR``) is one amount; anything else is left as it was."""
    if (
        isinstance(term, (int, Decimal)) and not isinstance(term, bool) and tokens and tokens[0][0] == "word"
        and _UNIT.match(tokens[0][1]) and tokens[0][1] not in _KEYWORDS
    ):  # fmt: skip
        return Quantity(amount=term, unit=tokens[0][1]), tokens[1:]
    return term, tokens


def _args(tokens: list[Token]) -> tuple[list[Term], list[Token]]:
    args: list[Term] = []
    while True:
        if tokens[0] == ("punct", ")"):
            return args, tokens[1:]
        term, tokens = _with_unit(_term(tokens[0]), tokens[1:])
        args.append(term)
        if tokens[0] == ("punct", ","):
            tokens = tokens[1:]
        elif tokens[0][0] == "word" and tokens[0][1] in _ARITHMETIC:
            raise ValueError(
                f"arithmetic inside an atom's arguments ({tokens[0][1]}): compute the value first "
                "(?y = ?x + 1) and pass the variable"
            )
        elif tokens[0] != ("punct", ")"):
            raise ValueError(f"expected ',' or ')', got {tokens[0][1]!r}")


def _term(token: Token) -> Term:
    kind, text = token
    if kind == "str":
        return bytes(text[1:-1], "utf-8").decode("unicode_escape")
    if kind != "word":
        raise ValueError(f"expected a term, got {text!r}")
    if text in ("true", "false"):
        return text == "true"
    if _NUMBER.match(text):
        return to_number(Decimal(text)) if any(c in text for c in ".eE") else int(text)
    if text.startswith("?") and len(text) > 1 and not _VARIABLE.match(text):
        raise ValueError(
            f"{text!r} is not a variable name (a ? then letters, digits and _); "
            "arithmetic takes spaces around its operator: ?x + 1"
        )
    return text


def _show_operand(operand: Operand | None) -> str:
    return str(operand) if isinstance(operand, Arith) else "" if operand is None else _show(operand)


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
    if isinstance(term, Quantity):
        return str(term)
    return repr(term)


# ---------------------------------------------------------------------- checking a rule set


def check_rules(rules: Iterable[DerivationRule], *, known_predicates: set[str] | None = None) -> list[list[DerivationRule]]:
    """Refuse rule sets that cannot be evaluated soundly; return them in strata.

    Checks: no two rules share name@version; every head variable, and every variable
    under ``not``, in a comparison or in arithmetic, is bound in the same body (by a
    positive atom, a ``?x = ...`` or an aggregate) and the body can be computed in
    some order; every rule reference names an existing name@version with the right
    arity; every predicate is derived by a rule or (when ``known_predicates`` is
    given) one the policy lets some source establish; no division by a literal zero;
    no predicate depends on its own negation or aggregates over its own stratum
    (stratification); and no recursive rule concludes a value it computed, which
    could count for ever (``n(?y) :- n(?x), ?y = ?x + 1``). Strata come lowest first.
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
        bound = check_body(b.when, set(), where, by_ref=by_ref, derived=derived, known=known)
        unbound = r.head.vars() - bound
        if unbound:
            raise RuleError(f"head variable {', '.join(sorted(unbound))} of {r.head} is not bound by the body", where=where)


def check_body(
    clauses: Sequence[Clause],
    given: set[str],
    where: str,
    *,
    by_ref: dict[str, DerivationRule] | None = None,
    derived: set[str] = frozenset(),  # type: ignore[assignment]
    known: set[str] | None = None,
) -> set[str]:
    """Check one conjunction (a rule body, a verdict condition, what an aggregate ranges
    over) with the variables ``given`` bound from outside; return every variable it binds.

    Refuses what cannot be evaluated soundly, naming ``where``: an unbound variable under
    ``not``, in a comparison or in arithmetic; ``_`` outside ``not``; a rule reference to
    no rule; a predicate nothing establishes; a division by a literal zero; clauses that
    need each other's values first."""
    by_ref = by_ref or {}
    bound = set(given)
    for clause in clauses:
        for inner in (clause, *(clause.over if isinstance(clause, Aggregate) else ())):
            if isinstance(inner, RuleRef):
                _check_ref(inner, by_ref, where)
            if isinstance(inner, Not) and isinstance(inner.not_, RuleRef):
                _check_ref(inner.not_, by_ref, where)
        for a in atoms_of(clause):
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
        bound |= provided(clause)
    for clause in clauses:
        if isinstance(clause, Not):
            free = clause.vars() - bound
            if free:
                raise RuleError(
                    f"variable {', '.join(sorted(free))} appears only under not in {clause}",
                    where=where,
                    hint="bind it with a positive atom, or write _ if any value will do",
                )
        if isinstance(clause, (Compare, Let)):
            free = (clause.vars() - {clause.let} if isinstance(clause, Let) else clause.vars()) - bound
            if free:
                what = "comparison" if isinstance(clause, Compare) else "value"
                raise RuleError(f"{what} {clause} uses unbound {', '.join(sorted(free))}", where=where)
        for side in _operands(clause):
            for divisor in divisors(side):
                if not isinstance(divisor, Arith) and not is_var(divisor) and is_number(divisor) and divisor == 0:
                    raise InvalidArithmetic(f"division by zero in {clause}", where=where)
            _constant_value(side, where)  # what the literals alone compute: mixed units are refused here
        if isinstance(clause, Compare) and not clause.vars():
            compare(clause.op, _constant_value(clause.left, where), _constant_value(clause.right, where), where=where)
        if isinstance(clause, Aggregate):
            _check_aggregate(clause, bound, where, by_ref, derived, known)
    schedule(clauses, given, where=where)
    return bound


def _constant_value(operand: Operand | None, where: str) -> Any:
    """The value of the parts of an expression made of literals only (``1000 EUR + 5 USD`` is
    refused here, before any data is read); ``None`` where a variable is involved."""
    if isinstance(operand, Arith):
        left, right = _constant_value(operand.left, where), _constant_value(operand.right, where)
        if left is None or right is None:
            return None
        return apply(operand.op, left, right, where=where)
    return None if operand is None or is_var(operand) else operand


def _check_aggregate(
    clause: Aggregate, bound: set[str], where: str, by_ref: dict[str, DerivationRule], derived: set[str], known: set[str] | None
) -> None:
    if clause.let in clause.inner_vars():
        raise RuleError(f"{clause.let} is what {clause} computes; it cannot also range over it", where=where)
    group = clause.inner_vars() & (bound - {clause.let})
    inner = check_body(clause.over, group, where, by_ref=by_ref, derived=derived, known=known)
    free = _operand_vars(clause.of) - inner
    if free:
        raise RuleError(f"{clause.aggregate} reads {', '.join(sorted(free))}, which nothing it ranges over binds", where=where)


def provided(clause: Clause) -> set[str]:
    """The variables a clause binds for the clauses after it."""
    if isinstance(clause, (Atom, RuleRef)):
        return clause.vars()
    if isinstance(clause, (Let, Aggregate)):
        return {clause.let}
    return set()


def _needs(clause: Clause, bindable: set[str]) -> set[str]:
    """The variables that must be bound before a clause can be evaluated."""
    if isinstance(clause, (Atom, RuleRef)):
        return set()
    if isinstance(clause, Let):
        return _operand_vars(clause.be)
    if isinstance(clause, Aggregate):
        return clause.inner_vars() & (bindable - {clause.let})
    return clause.vars()


def _operands(clause: Clause) -> Iterator[Operand | None]:
    if isinstance(clause, Compare):
        yield clause.left
        yield clause.right
    elif isinstance(clause, Let):
        yield clause.be
    elif isinstance(clause, Aggregate):
        yield clause.of
        for inner in clause.over:
            yield from _operands(inner)


def schedule(clauses: Sequence[Clause], given: Iterable[str] = (), *, where: str = "", strict: bool = True) -> tuple[Clause, ...]:
    """The clauses in an order they can be evaluated in: atoms where they were written, and
    each test, ``not``, computed value and aggregate as soon as what it reads is bound.

    ``?A >= 1000, rent_amount(?L, ?A)`` reads as written in any order; a value two clauses
    compute from each other is refused — unless ``strict`` is off, for conditions published
    before they were checked, which keep the rest in the order written (as they were read)."""
    bound = set(given)
    bindable = bound | {v for c in clauses for v in provided(c)}
    out: list[Clause] = []
    pending: list[Clause] = []

    def flush() -> None:
        ready = next((c for c in pending if _needs(c, bindable) <= bound), None)
        while ready is not None:
            pending.remove(ready)
            out.append(ready)
            bound.update(provided(ready))
            ready = next((c for c in pending if _needs(c, bindable) <= bound), None)

    for clause in clauses:
        if _needs(clause, bindable) <= bound:
            out.append(clause)
            bound.update(provided(clause))
            flush()
        else:
            pending.append(clause)
    if pending and not strict:
        return (*out, *pending)
    if pending:
        missing = sorted(_needs(pending[0], bindable) - bound)
        raise RuleError(
            f"{pending[0]} needs {', '.join(missing)} first, and nothing can bind it before",
            where=where or None,
            hint="a value computed from another must not be needed to compute that one",
        )
    return tuple(out)


def _check_ref(clause: RuleRef, by_ref: dict[str, DerivationRule], where: str) -> None:
    target = by_ref.get(clause.rule)
    if target is None:
        raise RuleError(f"reference to unknown rule {clause.rule}", where=where, hint=f"known: {', '.join(sorted(by_ref))}")
    if len(clause.args) != len(target.head.terms()):
        raise RuleError(f"{clause} passes {len(clause.args)} arguments; {target.head} takes {len(target.head.terms())}", where=where)


def _terms(clause: Atom | RuleRef) -> list[Term]:
    return clause.terms() if isinstance(clause, Atom) else clause.args


def atoms_of(clause: Clause) -> Iterator[Atom]:
    """The atoms a clause reads, positive or negated, inside an aggregate too (rule references
    are not atoms until resolved: a program has none left)."""
    if isinstance(clause, Atom):
        yield clause
    elif isinstance(clause, Not) and isinstance(clause.not_, Atom):
        yield clause.not_
    elif isinstance(clause, Aggregate):
        for inner in clause.over:
            yield from atoms_of(inner)



def resolve(clause: Atom | RuleRef, by_ref: dict[str, DerivationRule]) -> Atom:
    """The atom a clause stands for: a rule reference becomes its rule's head predicate."""
    if isinstance(clause, Atom):
        return clause
    head = by_ref[clause.rule].head
    return Atom(predicate=head.predicate, subject=clause.args[0], object=clause.args[1] if len(clause.args) > 1 else None)


def _reads(clause: Clause, by_ref: dict[str, DerivationRule]) -> Iterator[tuple[str, str]]:
    """The predicates a clause reads, each with how: "positive", "negative" or "aggregate"."""
    if isinstance(clause, Aggregate):
        for inner in clause.over:
            for predicate, _ in _reads(inner, by_ref):
                yield predicate, "aggregate"
        return
    negative = isinstance(clause, Not)
    inner = clause.not_ if isinstance(clause, Not) else clause
    if isinstance(inner, (Atom, RuleRef)) and (not isinstance(inner, RuleRef) or inner.rule in by_ref):
        yield resolve(inner, by_ref).predicate, "negative" if negative else "positive"


def _strata(rules: list[DerivationRule], by_ref: dict[str, DerivationRule]) -> list[list[DerivationRule]]:
    """Group rules into strata: a predicate may not depend on its own negation, nor aggregate
    over its own stratum; a recursive rule may not conclude a value it computed."""
    derived = {r.head.predicate for r in rules}
    edges: dict[str, set[tuple[str, str, str]]] = {p: set() for p in derived}
    for r in rules:
        for b in r.bodies:
            for clause in b.when:
                for predicate, how in _reads(clause, by_ref):
                    if predicate in derived:
                        edges[r.head.predicate].add((predicate, how, r.ref))
    component = _components({p: {q for q, _, _ in deps} for p, deps in edges.items()})
    for head, deps in sorted(edges.items()):
        for dep, how, ref in sorted(deps):
            if how != "positive" and component[dep] == component[head]:
                if how == "negative":
                    raise RuleError(
                        f"the rules negate through recursion (unstratifiable): {head} depends on not {dep}, which depends on {head}",
                        where=ref,
                        hint="a predicate may not depend on its own negation, directly or through other rules",
                    )
                raise RuleError(
                    f"rule {ref} aggregates over {dep}, which depends on {head} itself: an aggregate reads only lower strata",
                    where=ref,
                    hint="aggregate over predicates that do not depend on the rule's own conclusion",
                )
    _check_bounded_recursion(rules, by_ref, component)
    # A component sits at or above every component it reads; strictly above one it negates or aggregates.
    above: dict[int, set[tuple[int, bool]]] = defaultdict(set)
    for head, deps in edges.items():
        for dep, how, _ in deps:
            if component[dep] != component[head]:
                above[component[head]].add((component[dep], how != "positive"))
    levels: dict[int, int] = {}

    def level_of(c: int) -> int:
        if c not in levels:
            levels[c] = max((level_of(d) + strict for d, strict in sorted(above[c])), default=0)
        return levels[c]

    level = {p: level_of(component[p]) for p in derived}
    strata: dict[int, list[DerivationRule]] = {}
    for r in sorted(rules, key=lambda r: r.ref):
        strata.setdefault(level[r.head.predicate], []).append(r)
    return [strata[k] for k in sorted(strata)]


def _components(graph: dict[str, set[str]]) -> dict[str, int]:
    """Each node's strongly connected component (Tarjan), numbered; nodes in one share a number."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: dict[str, int] = {}

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in graph:
                continue
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            number = len(set(out.values()))
            while True:
                w = stack.pop()
                on_stack.discard(w)
                out[w] = number
                if w == v:
                    break

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def _check_bounded_recursion(rules: list[DerivationRule], by_ref: dict[str, DerivationRule], component: dict[str, int]) -> None:
    """A recursive rule may conclude only values its premises hold: one it computed could
    grow without end (``n(?y) :- n(?x), ?y = ?x + 1``), so it is refused here, before any run."""
    for r in rules:
        head = r.head.predicate
        for number, b in enumerate(r.bodies, start=1):
            recursive = any(
                how == "positive" and component.get(p) == component[head] for c in b.when for p, how in _reads(c, by_ref)
            )
            if not recursive:
                continue
            from_atoms = {v for c in b.when if isinstance(c, (Atom, RuleRef)) for v in c.vars()}
            computed = {c.let for c in b.when if isinstance(c, (Let, Aggregate))} - from_atoms
            grows = sorted(r.head.vars() & computed)
            if grows:
                raise RuleError(
                    f"unbounded recursion through arithmetic: {r.head} is concluded from itself with "
                    f"{', '.join(grows)} computed, so each round could make a new value",
                    where=f"{r.ref} body {number}",
                    hint="a recursive rule may conclude only values its premises hold; compute the value in a rule above the recursion",
                )


# ---------------------------------------------------------------------- the compiled program


def _resolved(clause: Clause, by_ref: dict[str, DerivationRule]) -> Clause:
    """A clause with any rule reference replaced by the atom it stands for."""
    if isinstance(clause, Aggregate):
        return clause.model_copy(update={"over": [_resolved(c, by_ref) for c in clause.over]})
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
        """Every predicate a rule body reads, positively, under ``not`` or in an aggregate."""
        return {a.predicate for r in self.rules for body in r.bodies for c in body for a in atoms_of(c)}

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
                    for q in {a.predicate for c in body for a in atoms_of(c)}:
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
    compiled = {
        r.ref: CompiledRule(r, tuple(schedule([_resolved(c, by_ref) for c in b.when]) for b in r.bodies)) for r in rules
    }
    return Program(
        rules=tuple(compiled[r.ref] for r in rules),
        strata=tuple(tuple(compiled[r.ref] for r in stratum) for stratum in strata),
        heads=frozenset(r.head.predicate for r in rules),
    )
