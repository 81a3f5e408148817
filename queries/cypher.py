"""Cypher, read as the store reads it: the reading subset an auditor may run, and nothing else.

An auditor's query is only safe to send if gaf has understood every token of it the
way the store will. So this module tokenizes the text (string literals with their
escapes, backtick names with doubled backticks, both kinds of comment) and parses it
by recursive descent over the *reading* part of the openCypher grammar: MATCH,
OPTIONAL MATCH, WHERE, WITH, UNWIND, RETURN, ORDER BY, SKIP, LIMIT, UNION, CALL of a
read subquery, and CALL of a procedure on ``READ_PROCEDURES``; expressions with
list and pattern comprehensions, CASE, EXISTS/COUNT/COLLECT subqueries, parameters,
maps, and calls of the functions on ``READ_FUNCTIONS``. There is no production for
anything else, so a write, a file read, an administration command or a second
statement cannot parse: it is refused, naming the word and its line and column.
Procedure and function names are compared as parsed, so backticks, escapes,
comments and case cannot change which one is meant.

Where the text could be read two ways (a character some server takes for
whitespace, a ``\\u0027`` that an older lexer would have turned into a quote before
reading the string), the text is refused rather than guessed at.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from gaf.errors import InvalidQuery, ReadOnlyViolation

#: Procedures known not to write, read a file or administer: (lower-case) parsed names.
READ_PROCEDURES = frozenset({
    "db.labels", "db.relationshiptypes", "db.propertykeys", "db.schema.visualization",
    "db.schema.nodetypeproperties", "db.schema.reltypeproperties",  # Neo4j
    "table_info", "show_tables",  # LadybugDB
})  # fmt: skip

#: Functions known to be pure: they read their arguments and nothing else (lower-case names).
READ_FUNCTIONS = frozenset({
    # aggregates
    "count", "collect", "sum", "avg", "min", "max", "stdev", "stdevp", "percentilecont", "percentiledisc",
    # graph elements
    "id", "elementid", "labels", "label", "type", "keys", "properties", "nodes", "relationships", "startnode",
    "endnode", "length", "size",
    # lists
    "head", "last", "tail", "range", "reverse", "coalesce", "isempty", "list_concat", "list_contains",
    "list_extract", "list_sort", "list_distinct", "list_unique", "list_has_all",
    # strings
    "tostring", "tostringornull", "tolower", "toupper", "lower", "upper", "trim", "ltrim", "rtrim", "btrim",
    "substring", "left", "right", "replace", "split", "reverse", "char_length", "character_length", "concat",
    "starts_with", "ends_with", "contains", "prefix", "suffix", "lpad", "rpad", "normalize",
    # numbers and conversions
    "abs", "ceil", "floor", "round", "sign", "sqrt", "exp", "log", "log10", "e", "pi", "rand",
    "tointeger", "tointegerornull", "tofloat", "tofloatornull", "toboolean", "tobooleanornull",
    "to_int64", "to_double", "to_string", "nullif", "valuetype",
    # time
    "date", "datetime", "localdatetime", "localtime", "time", "duration", "timestamp",
    "date.truncate", "datetime.truncate", "datetime.fromepoch", "datetime.fromepochmillis",
    "duration.between", "duration.indays", "duration.inmonths", "duration.inseconds",
    "current_date", "current_timestamp", "date_part", "date_trunc",
})  # fmt: skip

#: Words that begin a write, a file read, an extension load, an administration command or a
#: transaction: none is part of the reading grammar, and a refusal names the one it met.
NOT_READS = frozenset({
    "CREATE", "MERGE", "SET", "DELETE", "DETACH", "REMOVE", "FOREACH", "LOAD", "COPY", "INSTALL", "UNINSTALL",
    "ATTACH", "EXPORT", "IMPORT", "SHOW", "TERMINATE", "USE", "ALTER", "GRANT", "DENY", "REVOKE", "DROP", "RENAME",
    "START", "STOP", "ENABLE", "DEALLOCATE", "REALLOCATE", "BEGIN", "COMMIT", "ROLLBACK", "CHECKPOINT", "INSERT",
    "UPDATE", "TRUNCATE", "COMMENT", "PROFILE", "EXPLAIN", "CYPHER", "FINISH",
})  # fmt: skip

#: The clauses an auditor's query may use, as docs/queries.md lists them.
READ_CLAUSES = ("MATCH", "OPTIONAL MATCH", "WHERE", "WITH", "UNWIND", "RETURN", "ORDER BY", "SKIP", "LIMIT",
                "UNION [ALL]", "CALL { subquery }", "CALL procedure(…) YIELD")  # fmt: skip

_SPACE = " \t\n\r\f\v"
#: Where a ``//`` comment ends: any character a lexer might take for the end of a line, so that
#: gaf never reads as comment what a store reads as query (the rest is then read as query).
_LINE_ENDS = "\n\r\u2028\u2029\x85\v\f"
_ESCAPES = {"\\": "\\", "'": "'", '"': '"', "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
#: Characters a ``\\uXXXX`` escape may not spell: a lexer that expands escapes before it reads
#: strings (as some Java-based ones did) would end the string or the name there.
_UNSAFE_ESCAPED = "'\"\\`"
_SYMBOLS = ("<>", "!=", "<=", ">=", "=~", "..", "||", "(", ")", "[", "]", "{", "}", ",", ".", ":", ";", "=", "<",
            ">", "+", "-", "*", "/", "%", "^", "|", "&", "!")  # fmt: skip
_NUMBER = re.compile(r"0x[0-9A-Fa-f]+|0o[0-7]+|(?:\d+(?:\.\d+)?|\.\d+)(?:[eE][+-]?\d+)?")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True)
class Token:
    """One token: its kind (name, quoted, string, number, param, symbol, end), value and place."""

    kind: str
    value: str
    line: int
    column: int

    @property
    def word(self) -> str | None:
        """An unquoted name in upper case (a keyword candidate); a quoted name is never a keyword."""
        return self.value.upper() if self.kind == "name" else None

    @property
    def where(self) -> str:
        return f"line {self.line}, column {self.column}"


def tokenize(text: str) -> list[Token]:
    """The tokens of ``text``, comments and whitespace dropped, ending with an ``end`` token."""
    return _Lexer(text).tokens()


class _Lexer:
    def __init__(self, text: str):
        self.text = text
        self.pos = 0

    def place(self, pos: int) -> tuple[int, int]:
        line = self.text.count("\n", 0, pos) + 1
        return line, pos - (self.text.rfind("\n", 0, pos) + 1) + 1

    def fail(self, what: str, pos: int, hint: str = "check the query against docs/queries.md") -> InvalidQuery:
        line, column = self.place(pos)
        return InvalidQuery(what, where=f"line {line}, column {column}", hint=hint)

    def tokens(self) -> list[Token]:
        out: list[Token] = []
        text = self.text
        while True:
            self.skip_space_and_comments()
            if self.pos >= len(text):
                out.append(Token("end", "", *self.place(self.pos)))
                return out
            start, c = self.pos, text[self.pos]
            line, column = self.place(start)
            if c in "'\"":
                out.append(Token("string", self.string(c), line, column))
            elif c == "`":
                out.append(Token("quoted", self.quoted(), line, column))
            elif c == "$":
                self.pos += 1
                if self.pos < len(text) and text[self.pos] == "`":
                    out.append(Token("param", self.quoted(), line, column))
                elif m := (_NAME.match(text, self.pos) or re.compile(r"\d+").match(text, self.pos)):
                    self.pos = m.end()
                    out.append(Token("param", m.group(), line, column))
                else:
                    raise self.fail("a parameter is $ followed by its name", start)
            elif (m := _NUMBER.match(text, start)) and not (c == "." and out and out[-1].kind in ("name", "quoted")):
                self.pos = m.end()
                if self.pos < len(text) and (text[self.pos].isalnum() or text[self.pos] == "_"):
                    raise self.fail(f"a number runs into a name: {text[start:self.pos + 1]!r}", start)
                out.append(Token("number", m.group(), line, column))
            elif m := _NAME.match(text, start):
                self.pos = m.end()
                if self.pos < len(text) and _letter_beyond_ascii(text[self.pos]):
                    raise self.fail(f"the name {text[start:self.pos + 1]!r}… has a letter beyond ASCII", start,
                                    "write such a name in backticks: `name`")  # fmt: skip
                out.append(Token("name", m.group(), line, column))
            elif symbol := next((s for s in _SYMBOLS if text.startswith(s, start)), None):
                self.pos += len(symbol)
                out.append(Token("symbol", symbol, line, column))
            elif _letter_beyond_ascii(c):
                raise self.fail(f"the name starting {c!r} has a letter beyond ASCII", start, "write such a name in backticks: `name`")
            else:
                raise self.fail(f"the character {c!r} (U+{ord(c):04X}) is not Cypher outside a string", start,
                                "only ASCII spaces, tabs and line breaks separate words; put other characters in quotes")  # fmt: skip

    def skip_space_and_comments(self) -> None:
        text = self.text
        while self.pos < len(text):
            if text[self.pos] in _SPACE:
                self.pos += 1
            elif text.startswith("//", self.pos):
                end = min((i for i in (text.find(c, self.pos) for c in _LINE_ENDS) if i >= 0), default=len(text))
                self.no_escapes(self.pos, end, "a comment")
                self.pos = end
            elif text.startswith("/*", self.pos):
                end = text.find("*/", self.pos + 2)
                if end < 0:
                    raise self.fail("a /* comment is never closed", self.pos)
                self.no_escapes(self.pos, end, "a comment")
                self.pos = end + 2
            else:
                return

    def no_escapes(self, start: int, end: int, what: str) -> None:
        """Refuse ``\\u`` inside a comment or backtick name: a lexer that expands escapes first
        would read ``// \\u000a CREATE …`` as a line break and then a write."""
        found = re.search(r"\\[uU]", self.text[start:end])
        if found:
            raise self.fail(f"{what} holds a unicode escape ({self.text[start + found.start():start + found.start() + 6]!r})",
                            start + found.start(), "write the character itself, or leave the escape out")  # fmt: skip

    def string(self, quote: str) -> str:
        text, start = self.text, self.pos
        self.pos += 1
        out: list[str] = []
        while True:
            if self.pos >= len(text):
                raise self.fail(f"a string opened with {quote} is never closed", start)
            c = text[self.pos]
            if c == quote:
                self.pos += 1
                return "".join(out)
            if c != "\\":
                out.append(c)
                self.pos += 1
                continue
            esc = text[self.pos + 1 : self.pos + 2]
            if esc in _ESCAPES:
                out.append(_ESCAPES[esc])
                self.pos += 2
            elif esc in ("u", "U"):
                digits = 4 if esc == "u" else 8
                hexa = text[self.pos + 2 : self.pos + 2 + digits]
                if len(hexa) != digits or not all(h in "0123456789abcdefABCDEF" for h in hexa):
                    raise self.fail(f"\\{esc} needs {digits} hex digits", self.pos)
                char = chr(int(hexa, 16)) if int(hexa, 16) <= 0x10FFFF else ""
                if not char or char in _UNSAFE_ESCAPED:
                    raise self.fail(f"the escape \\{esc}{hexa} spells {char!r}, which some lexers read as the string's end",
                                    self.pos, "write it as \\' \\\" or \\\\ instead")  # fmt: skip
                out.append(char)
                self.pos += 2 + digits
            else:
                raise self.fail(f"unknown escape \\{esc} in a string", self.pos,
                                "escapes are \\\\ \\' \\\" \\b \\f \\n \\r \\t \\uXXXX \\UXXXXXXXX")  # fmt: skip

    def quoted(self) -> str:
        """A backtick name; a doubled backtick inside it is one backtick."""
        text, start = self.text, self.pos
        self.pos += 1
        out: list[str] = []
        while True:
            end = text.find("`", self.pos)
            if end < 0:
                raise self.fail("a `name` is never closed", start)
            out.append(text[self.pos : end])
            self.pos = end + 1
            if not text.startswith("`", self.pos):
                break
            out.append("`")
            self.pos += 1
        self.no_escapes(start, self.pos, "a `name`")
        name = "".join(out)
        if not name:
            raise self.fail("an empty `` name", start)
        return name


def _letter_beyond_ascii(c: str) -> bool:
    return ord(c) > 127 and (c.isalnum() or c == "_")


@dataclass
class ReadQuery:
    """What a parsed read query uses: its clauses, functions and procedures (lower-case names)."""

    clauses: list[str] = field(default_factory=list)
    functions: set[str] = field(default_factory=set)
    procedures: set[str] = field(default_factory=set)


class _NoParse(Exception):
    """A production did not match here; the parser may try another."""

    def __init__(self, token: Token, expected: str):
        super().__init__(expected)
        self.token, self.expected = token, expected


def parse_read(text: str) -> ReadQuery:
    """Parse ``text`` as one reading query, or refuse it: ReadOnlyViolation for anything that is
    not a read (naming the word and its place), InvalidQuery for text that is not Cypher."""
    try:
        parser = _Parser(tokenize(text))
        parser.query()
        parser.expect_end()
    except _NoParse as exc:
        raise _refusal(exc.token, exc.expected) from None
    except RecursionError:
        raise InvalidQuery("the query is nested too deeply to read", hint="split it, or nest fewer brackets") from None
    return parser.found


def _refusal(token: Token, expected: str) -> InvalidQuery | ReadOnlyViolation:
    hint = "docs/queries.md lists what an auditor may run"
    if token.word in NOT_READS:
        return ReadOnlyViolation(f"{token.value} is not a read; auditor queries may only read", where=token.where, hint=hint)
    if token.value == ";" and token.kind == "symbol":
        return ReadOnlyViolation("';' starts a second statement; an auditor query is one statement", where=token.where,
                                 hint="send one query, without ';'")  # fmt: skip
    seen = "the end of the query" if token.kind == "end" else repr(token.value)
    return InvalidQuery(f"expected {expected}, found {seen}", where=token.where, hint=hint)


_COMPARISONS = ("=", "<>", "!=", "<", ">", "<=", ">=", "=~")


class _Parser:
    """Recursive descent over the reading subset; each method consumes one production."""

    def __init__(self, tokens: list[Token]):
        self.tokens = tokens
        self.pos = 0
        self.found = ReadQuery()
        #: where each expression parsed from a position ended (or why it failed): an expression
        #: reads the same wherever it stands, and remembering it keeps backtracking linear
        self.expressions: dict[int, int | _NoParse] = {}

    # ---------------------------------------------------------------- token helpers

    @property
    def tok(self) -> Token:
        return self.tokens[self.pos]

    def peek(self, ahead: int = 1) -> Token:
        return self.tokens[min(self.pos + ahead, len(self.tokens) - 1)]

    def at(self, *words: str) -> bool:
        return self.tok.word in words

    def at_symbol(self, *symbols: str) -> bool:
        return self.tok.kind == "symbol" and self.tok.value in symbols

    def accept(self, *words: str) -> bool:
        if self.at(*words):
            self.pos += 1
            return True
        return False

    def accept_symbol(self, *symbols: str) -> bool:
        if self.at_symbol(*symbols):
            self.pos += 1
            return True
        return False

    def expect(self, word: str) -> None:
        if not self.accept(word):
            raise _NoParse(self.tok, word)

    def expect_symbol(self, symbol: str) -> None:
        if not self.accept_symbol(symbol):
            raise _NoParse(self.tok, f"'{symbol}'")

    def expect_end(self) -> None:
        if self.tok.kind != "end":
            raise _NoParse(self.tok, "a reading clause or the end of the query")

    def name(self, what: str = "a name") -> str:
        """A symbolic name, bare or in backticks (any keyword may serve as a name where a name goes)."""
        if self.tok.kind in ("name", "quoted"):
            value = self.tok.value
            self.pos += 1
            return value
        raise _NoParse(self.tok, what)

    def variable(self) -> str:
        """A name that stands for a value: never a word that begins a write."""
        if self.tok.word in NOT_READS:
            raise _NoParse(self.tok, "a variable")
        return self.name("a variable")

    def attempt(self, production: Callable[[], None]) -> bool:
        """Whether ``production`` matched here; if not, nothing is consumed (only a syntax
        mismatch backtracks: a refused function or procedure is refused whichever reading wins)."""
        saved, found = self.pos, self.found
        self.found = ReadQuery(list(found.clauses), set(found.functions), set(found.procedures))
        try:
            production()
        except _NoParse:
            self.pos, self.found = saved, found
            return False
        return True

    # ---------------------------------------------------------------- clauses

    def query(self) -> None:
        self.single()
        while self.accept("UNION"):
            self.accept("ALL")
            self.found.clauses.append("UNION")
            self.single()

    def single(self) -> None:
        if not self.clause():
            raise _NoParse(self.tok, "a reading clause (MATCH, OPTIONAL MATCH, WITH, UNWIND, CALL, RETURN)")
        while self.clause():
            pass

    def clause(self) -> bool:
        """One reading clause, if one starts here."""
        if self.at("OPTIONAL") and self.peek().word in ("MATCH", "CALL"):
            self.pos += 1
            return self.clause()
        if self.accept("MATCH"):
            self.found.clauses.append("MATCH")
            self.match_mode()
            self.patterns()
            self.where()
        elif self.accept("UNWIND"):
            self.found.clauses.append("UNWIND")
            self.expression()
            self.expect("AS")
            self.variable()
        elif self.accept("WITH"):
            self.found.clauses.append("WITH")
            self.projection()
            self.where()
        elif self.accept("RETURN"):
            self.found.clauses.append("RETURN")
            self.projection()
        elif self.accept("CALL"):
            self.call()
        else:
            return False
        return True

    def match_mode(self) -> None:
        if self.at("USING"):
            raise _NoParse(self.tok, "a pattern (planner hints are not admitted)")

    def where(self) -> None:
        if self.accept("WHERE"):
            self.expression()

    def projection(self) -> None:
        self.accept("DISTINCT")
        if self.accept_symbol("*"):
            if not self.accept_symbol(","):
                return self.order_skip_limit()
        while True:
            self.expression()
            if self.accept("AS"):
                self.variable()
            if not self.accept_symbol(","):
                break
        self.order_skip_limit()

    def order_skip_limit(self) -> None:
        if self.accept("ORDER"):
            self.expect("BY")
            while True:
                self.expression()
                self.accept("ASC", "ASCENDING", "DESC", "DESCENDING")
                if not self.accept_symbol(","):
                    break
        if self.accept("SKIP", "OFFSET"):
            self.expression()
        if self.accept("LIMIT"):
            self.expression()

    def call(self) -> None:
        """``CALL { … }``, ``CALL (vars) { … }``, or ``CALL proc(args) YIELD …``."""
        if self.at_symbol("(", "{"):
            if self.accept_symbol("("):
                if not self.accept_symbol("*"):
                    while not self.at_symbol(")"):
                        self.variable()
                        if not self.accept_symbol(","):
                            break
                self.expect_symbol(")")
            self.expect_symbol("{")
            self.found.clauses.append("CALL {}")
            self.query()
            self.expect_symbol("}")
            if self.at("IN"):  # CALL { … } IN TRANSACTIONS: batched writes
                raise ReadOnlyViolation("CALL { … } IN TRANSACTIONS commits batches of writes; auditor queries may only read",
                                        where=self.tok.where, hint="docs/queries.md lists what an auditor may run")  # fmt: skip
            return
        start = self.tok
        procedure = self.qualified_name("a procedure name")
        if procedure.lower() not in READ_PROCEDURES:
            raise ReadOnlyViolation(f"procedure {procedure} is not known to be read-only", where=start.where,
                                    hint=f"read-only procedures: {', '.join(sorted(READ_PROCEDURES))}")  # fmt: skip
        self.found.procedures.add(procedure.lower())
        self.found.clauses.append("CALL procedure")
        if self.accept_symbol("("):
            self.arguments()
        if self.accept("YIELD"):
            if not self.accept_symbol("*"):
                while True:
                    self.name("a yielded column")
                    if self.accept("AS"):
                        self.variable()
                    if not self.accept_symbol(","):
                        break
            self.where()

    def qualified_name(self, what: str) -> str:
        """``a.b.c`` with each part bare or in backticks: the name as the store resolves it."""
        parts = [self.name(what)]
        while self.at_symbol(".") and self.peek().kind in ("name", "quoted"):
            self.pos += 1
            parts.append(self.name(what))
        return ".".join(parts)

    def arguments(self, close: str = ")") -> None:
        """The rest of ``( expr, … )`` after its opening parenthesis (or of a list literal's ``[ expr, … ]``
        with ``close="]"``)."""
        if self.accept_symbol(close):
            return
        while True:
            self.expression()
            if not self.accept_symbol(","):
                break
        self.expect_symbol(close)

    # ---------------------------------------------------------------- patterns

    def patterns(self) -> None:
        while True:
            self.path()
            if not self.accept_symbol(","):
                return

    def path(self) -> None:
        if self.tok.kind in ("name", "quoted") and self.peek().kind == "symbol" and self.peek().value == "=":
            self.variable()
            self.pos += 1
        if self.at("SHORTESTPATH", "ALLSHORTESTPATHS") and self.peek().value == "(":
            self.pos += 2
            self.chain()
            self.expect_symbol(")")
            return
        self.chain()

    def chain(self, need_relationship: bool = False) -> None:
        self.node()
        steps = 0
        while self.at_symbol("<", "-"):
            self.relationship()
            self.node()
            steps += 1
        if need_relationship and not steps:
            raise _NoParse(self.tok, "a relationship pattern")

    def node(self) -> None:
        self.expect_symbol("(")
        if self.tok.kind in ("name", "quoted"):
            self.variable()
        if self.accept_symbol(":"):
            self.label_expression()
        self.properties()
        self.where()
        self.expect_symbol(")")

    def properties(self) -> None:
        if self.at_symbol("{"):
            self.map_literal()
        elif self.tok.kind == "param":
            self.pos += 1

    def label_expression(self) -> None:
        """``A``, ``A:B``, ``A|B``, ``A&B``, ``!A``, ``%``, ``(…)`` — after the first colon."""
        while True:
            while self.accept_symbol("!"):
                pass
            if self.accept_symbol("("):
                self.label_expression()
                self.expect_symbol(")")
            elif not self.accept_symbol("%"):
                self.name("a label")
            if self.accept_symbol("|"):
                self.accept_symbol(":")  # the older spelling :A|:B
            elif not self.accept_symbol(":", "&"):
                return

    def relationship(self) -> None:
        self.accept_symbol("<")
        self.expect_symbol("-")
        if self.accept_symbol("["):
            if self.tok.kind in ("name", "quoted"):
                self.variable()
            if self.accept_symbol(":"):
                self.label_expression()
            if self.accept_symbol("*"):
                if self.tok.kind == "number":
                    self.pos += 1
                if self.accept_symbol(".."):
                    if self.tok.kind == "number":
                        self.pos += 1
            self.properties()
            self.where()
            self.expect_symbol("]")
        self.expect_symbol("-")
        self.accept_symbol(">")

    # ---------------------------------------------------------------- expressions

    def expression(self) -> None:
        start = self.pos
        known = self.expressions.get(start)
        if isinstance(known, _NoParse):
            raise known
        if known is not None:
            self.pos = known
            return
        try:
            self.binary(("OR",), lambda: self.binary(("XOR",), lambda: self.binary(("AND",), self.negation)))
        except _NoParse as exc:
            self.expressions[start] = exc
            raise
        self.expressions[start] = self.pos

    def binary(self, words: tuple[str, ...], operand: Callable[[], None]) -> None:
        operand()
        while self.accept(*words):
            operand()

    def negation(self) -> None:
        while self.accept("NOT"):
            pass
        self.comparison()

    def comparison(self) -> None:
        self.predicates()
        while self.accept_symbol(*_COMPARISONS):
            self.predicates()

    def predicates(self) -> None:
        self.additive()
        while True:
            if self.accept("STARTS", "ENDS"):
                self.expect("WITH")
                self.additive()
            elif self.accept("CONTAINS", "IN"):
                self.additive()
            elif self.accept("IS"):
                self.accept("NOT")
                self.expect("NULL")
            else:
                return

    def additive(self) -> None:
        self.multiplicative()
        while self.accept_symbol("+", "-", "||"):
            self.multiplicative()

    def multiplicative(self) -> None:
        self.power()
        while self.accept_symbol("*", "/", "%"):
            self.power()

    def power(self) -> None:
        self.unary()
        while self.accept_symbol("^"):
            self.unary()

    def unary(self) -> None:
        while self.accept_symbol("+", "-"):
            pass
        self.postfix()

    def postfix(self) -> None:
        self.atom()
        while True:
            if self.at_symbol(".") and self.peek().kind in ("name", "quoted"):
                self.pos += 1
                self.name("a property key")
            elif self.accept_symbol("["):
                if not self.at_symbol(".."):
                    self.expression()
                if self.accept_symbol(".."):
                    if not self.at_symbol("]"):
                        self.expression()
                self.expect_symbol("]")
            elif self.accept_symbol(":"):
                self.label_expression()
            else:
                return

    def atom(self) -> None:
        tok = self.tok
        if tok.kind in ("string", "number", "param"):
            self.pos += 1
        elif tok.word in ("TRUE", "FALSE", "NULL"):
            self.pos += 1
        elif tok.word == "CASE":
            self.case()
        elif tok.word in ("EXISTS", "COUNT", "COLLECT") and self.peek().value == "{" and self.peek().kind == "symbol":
            self.pos += 2
            self.found.clauses.append(f"{tok.word} {{}}")
            self.subquery_body()
            self.expect_symbol("}")
        elif self.at_symbol("["):
            self.list_like()
        elif self.at_symbol("{"):
            self.map_literal()
        elif self.at_symbol("("):
            if not self.attempt(lambda: self.chain(need_relationship=True)):
                self.pos += 1
                self.expression()
                self.expect_symbol(")")
        elif tok.kind in ("name", "quoted"):
            self.named()
        else:
            raise _NoParse(tok, "an expression")

    def named(self) -> None:
        """A variable, a map projection, or a function call (``ns.name(…)``, checked against READ_FUNCTIONS)."""
        start, saved = self.tok, self.pos
        function = self.qualified_name("a name")
        if not self.at_symbol("("):
            self.pos = saved
            self.variable()
            if self.at_symbol("{"):
                self.map_projection()
            return
        lower = function.lower()
        if start.kind == "name" and lower in ("all", "any", "none", "single", "reduce"):
            self.pos += 1
            return self.iteration(lower)
        if lower not in READ_FUNCTIONS:
            raise ReadOnlyViolation(f"function {function} is not known to be read-only", where=start.where,
                                    hint="docs/queries.md lists the functions an auditor may call")  # fmt: skip
        self.found.functions.add(lower)
        self.pos += 1
        if lower == "count" and self.accept_symbol("*"):
            self.expect_symbol(")")
            return
        self.accept("DISTINCT")
        self.arguments()

    def iteration(self, kind: str) -> None:
        """``all(x IN list WHERE p)`` and its kin, and ``reduce(acc = init, x IN list | expr)``."""
        self.found.functions.add(kind)
        if kind == "reduce":
            self.variable()
            self.expect_symbol("=")
            self.expression()
            self.expect_symbol(",")
        self.variable()
        self.expect("IN")
        self.expression()
        if kind == "reduce":
            self.expect_symbol("|")
            self.expression()
        else:
            self.where()
        self.expect_symbol(")")

    def case(self) -> None:
        self.expect("CASE")
        if not self.at("WHEN"):
            self.expression()
        self.expect("WHEN")
        while True:
            self.expression()
            self.expect("THEN")
            self.expression()
            if not self.accept("WHEN"):
                break
        if self.accept("ELSE"):
            self.expression()
        self.expect("END")

    def subquery_body(self) -> None:
        """The inside of ``EXISTS { … }`` / ``COUNT { … }`` / ``COLLECT { … }``: a query or patterns."""
        if self.tok.word in ("MATCH", "OPTIONAL", "WITH", "UNWIND", "CALL", "RETURN"):
            self.query()
        else:
            self.patterns()
            self.where()

    def list_like(self) -> None:
        """A list literal, a list comprehension ``[x IN l WHERE p | e]`` or a pattern comprehension."""
        self.expect_symbol("[")

        def comprehension() -> None:
            self.variable()
            self.expect("IN")
            self.expression()
            self.where()
            if self.accept_symbol("|"):
                self.expression()
            self.expect_symbol("]")

        def pattern_comprehension() -> None:
            self.path_variable()
            self.chain(need_relationship=True)
            self.where()
            self.expect_symbol("|")
            self.expression()
            self.expect_symbol("]")

        if self.attempt(pattern_comprehension) or self.attempt(comprehension):
            return
        self.arguments("]")

    def path_variable(self) -> None:
        if self.tok.kind in ("name", "quoted") and self.peek().kind == "symbol" and self.peek().value == "=":
            self.variable()
            self.pos += 1

    def map_literal(self) -> None:
        self.expect_symbol("{")
        if self.accept_symbol("}"):
            return
        while True:
            self.name("a map key")
            self.expect_symbol(":")
            self.expression()
            if not self.accept_symbol(","):
                break
        self.expect_symbol("}")

    def map_projection(self) -> None:
        """``n {.a, .*, key: expr, var}``."""
        self.expect_symbol("{")
        if self.accept_symbol("}"):
            return
        while True:
            if self.accept_symbol("."):
                if not self.accept_symbol("*"):
                    self.name("a property key")
            elif self.tok.kind in ("name", "quoted") and self.peek().value == ":" and self.peek().kind == "symbol":
                self.pos += 2
                self.expression()
            else:
                self.variable()
            if not self.accept_symbol(","):
                break
        self.expect_symbol("}")
