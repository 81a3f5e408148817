"""The auditor query library and the read-only runner every auditor query goes through.

Each query is a ``.cypher`` file whose header says its name, the question it
answers, its parameters and an example; a ``NAME.ladybug.cypher`` beside it is
the embedded store's variant where the dialects differ. The runner loads them,
checks the parameters, and lets a query through three gates, each of which would
stop a write on its own:

1. gaf's own parse (queries/cypher.py): only the reading subset of Cypher, with
   functions and procedures from allow-lists, matched on the parsed name;
2. on Neo4j, the server's plan (EXPLAIN, in the same read transaction): no step
   that writes, loads a file, administers, or calls a procedure off the list;
3. the store's own read-only mode: a READ transaction on Neo4j, and on the
   embedded store a read-only transaction — in a database that the auditor's
   commands (``gaf query``) open read-only.
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gaf.errors import GafError, InvalidQuery, InvalidRecord, ReadOnlyViolation
from gaf.store.base import GafStore, PlanStep
from queries.cypher import READ_CLAUSES, READ_FUNCTIONS, READ_PROCEDURES, ReadQuery, parse_read

LIBRARY = Path(__file__).parent / "library"

#: Operators of a Neo4j plan that write, read files, take locks for a write, or administer
#: (matched as prefixes of the operator's name): a read's plan has none of them.
NOT_READ_OPERATORS = ("Create", "Merge", "Set", "Delete", "DetachDelete", "Remove", "Foreach", "LoadCSV",
                      "Transaction", "Lock", "AssertSame", "AssertingMulti", "Show", "Terminate", "Drop", "Alter",
                      "Grant", "Deny", "Revoke", "Start", "Stop", "Enable", "Rename", "Deallocate", "Reallocate",
                      "DoNothingIfExists", "Ensure", "AssertAllowed", "AssertNot", "SystemProcedureCall", "Copy",
                      "NoPlanFromTheServer", "UnnamedStep")  # a plan gaf could not read is no read  # fmt: skip
#: Neo4j plans administration and schema commands in runtimes of their own.
NOT_READ_RUNTIMES = frozenset({"SYSTEM", "SCHEMA"})


def check_read_only(cypher: str) -> ReadQuery:
    """Refuse, before it reaches the store, a query that is not a read: it must parse as one
    statement of the reading subset of Cypher (queries/cypher.py), calling only read-only
    functions and procedures. Says which word and where."""
    return parse_read(cypher)


def check_plan(plan: PlanStep) -> None:
    """Refuse a query whose plan (the store's own EXPLAIN, before it runs) has a step that
    writes, reads a file, administers, or calls a procedure not known to be read-only.

    The store's planner read the query, not gaf's parser: a query the parser mis-read as a
    read is still refused here."""
    hint = "docs/queries.md lists what an auditor may run"
    if plan.runtime.upper() in NOT_READ_RUNTIMES:
        raise ReadOnlyViolation(f"the store plans this query as a {plan.runtime} command, not a read", hint=hint)
    for step in plan.walk():
        if step.operator.startswith(NOT_READ_OPERATORS):
            raise ReadOnlyViolation(f"the store's plan for this query has a {step.operator} step, which is not a read",
                                    where=step.details or None, hint=hint)  # fmt: skip
        if step.operator.startswith("ProcedureCall"):
            name = step.details.partition("(")[0].replace("`", "").strip()
            if name.lower() not in READ_PROCEDURES:
                raise ReadOnlyViolation(f"the store's plan calls procedure {name or '(unnamed)'}, not known to be read-only",
                                        where=step.details or None,
                                        hint=f"read-only procedures: {', '.join(sorted(READ_PROCEDURES))}")  # fmt: skip


@dataclass(frozen=True)
class Query:
    """One named auditor query, read from its .cypher file."""

    name: str
    question: str
    params: dict[str, str]
    example: str
    cypher: str
    variants: dict[str, str] = field(default_factory=dict)

    def for_dialect(self, dialect: str) -> str:
        return self.variants.get(dialect, self.cypher)


def _header(text: str, path: Path) -> dict[str, str]:
    out: dict[str, str] = {}
    for line in text.splitlines():
        if not line.startswith("//"):
            break
        key, _, value = line[2:].strip().partition(":")
        out[key.strip()] = value.strip()
    for key in ("name", "question", "params", "example"):
        if key not in out:
            raise InvalidRecord(f"query file has no '// {key}:' header line", where=str(path))
    return out


def _params(spec: str) -> dict[str, str]:
    """``closure (a closure id), as_of (…)`` → {name: description}; "(none)" → {}."""
    if spec.strip() in ("(none)", ""):
        return {}
    out = {}
    for part in re.finditer(r"(\w+)\s*\(([^)]*)\)", spec):
        out[part.group(1)] = part.group(2)
    return out


def load(directory: Path = LIBRARY) -> dict[str, Query]:
    """Every query of a library directory, by name."""
    queries: dict[str, Query] = {}
    variants: dict[str, dict[str, str]] = {}
    for path in sorted(directory.glob("*.cypher")):
        stem = path.name[: -len(".cypher")]
        if "." in stem:  # NAME.dialect.cypher
            name, dialect = stem.split(".", 1)
            variants.setdefault(name, {})[dialect] = path.read_text(encoding="utf-8")
            continue
        text = path.read_text(encoding="utf-8")
        head = _header(text, path)
        check_read_only(text)
        queries[head["name"]] = Query(head["name"], head["question"], _params(head["params"]), head["example"], text)
    for name, found in variants.items():
        if name in queries:
            queries[name] = Query(**{**queries[name].__dict__, "variants": found})
    return queries


def run(store: GafStore, query: Query | str, params: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """Run a named query (or ad-hoc Cypher) read-only, after checking its parameters."""
    params = dict(params or {})
    if isinstance(query, str):
        cypher = query
    else:
        missing = sorted(set(query.params) - set(params))
        unknown = sorted(set(params) - set(query.params))
        if missing or unknown:
            raise InvalidRecord(
                f"query {query.name} " + (f"needs {', '.join(missing)}" if missing else f"takes no {', '.join(unknown)}"),
                hint="parameters: " + (", ".join(f"{k} ({v})" for k, v in query.params.items()) or "none"),
            )
        cypher = query.for_dialect(store.dialect)
    check_read_only(cypher)
    try:
        return store.read(cypher, params, vet=check_plan)
    except GafError:
        raise
    except Exception as exc:  # the server's own refusal, e.g. a write in a read transaction
        message = str(getattr(exc, "message", exc))
        if "write" in message.lower() and "read" in message.lower():
            raise ReadOnlyViolation(f"the store refused a write in a read-only transaction: {message}") from None
        code = str(getattr(exc, "code", "") or "")
        if ".Statement." in code:  # Neo4j: the query as written is refused
            raise InvalidQuery(f"Neo4j refused the query: {message}", where=code,
                               hint="check the query's spelling against docs/queries.md") from None  # fmt: skip
        raise GafError(f"the query failed on {store.location}: {message}") from None


def parse_param(text: str) -> tuple[str, Any]:
    """``name=value``: integers and booleans as such, anything else a string."""
    name, sep, value = text.partition("=")
    if not sep or not name:
        raise InvalidRecord(f"parameter {text!r} is not name=value")
    if re.fullmatch(r"-?\d+", value):
        return name, int(value)
    if value in ("true", "false"):
        return name, value == "true"
    return name, value


def reference(queries: dict[str, Query]) -> str:
    """The query library reference in Markdown, generated from the .cypher headers."""
    lines = ["# Auditor query library", "",
             "Generated from the headers of `queries/library/*.cypher` by `gaf query --reference`; do not edit by hand.",
             "Every query runs read-only: `gaf query NAME --param key=value`.", ""]  # fmt: skip
    for q in sorted(queries.values(), key=lambda q: q.name):
        params = ", ".join(f"`{k}` ({v})" for k, v in q.params.items()) or "none"
        dialects = "Neo4j and LadybugDB" + (f" (LadybugDB variant: {', '.join(q.variants)})" if q.variants else "")
        lines += [f"## {q.name}", "", q.question, "", f"- parameters: {params}", f"- runs on: {dialects}",
                  f"- example: `{q.example}`", ""]  # fmt: skip
    return "\n".join(lines + _what_an_auditor_may_run())


def _what_an_auditor_may_run() -> list[str]:
    """The allow-lists the runner enforces, as the reference states them (generated, so never stale)."""
    return [
        "## What an auditor may run", "",
        "A library query and an ad-hoc `--cypher` go through the same three gates, each of which stops a",
        "write on its own: gaf parses the query (the reading subset of openCypher, `queries/cypher.py`);",
        "on Neo4j the server's own plan (`EXPLAIN`, in the same READ transaction) may hold no step that",
        "writes, loads a file, administers or calls a procedure off the list; and the query runs in a",
        "READ transaction, on the embedded store in a database `gaf query` opens read-only.", "",
        "- clauses: " + ", ".join(f"`{c}`" for c in READ_CLAUSES),
        "- expressions: literals, `$parameters`, maps, lists, list and pattern comprehensions, `CASE`,",
        "  `EXISTS { … }`, `COUNT { … }`, `COLLECT { … }`, map projections, `all`/`any`/`none`/`single`, `reduce`",
        "- functions: " + ", ".join(f"`{f}`" for f in sorted(READ_FUNCTIONS)),
        "- procedures: " + ", ".join(f"`{p}`" for p in sorted(READ_PROCEDURES)),
        "", "Names are compared as parsed, whatever their case, backticks or comments. Everything else is",
        "refused before it reaches the store, naming the word and its line and column: `CREATE`, `MERGE`,",
        "`SET`, `DELETE`, `REMOVE`, `FOREACH`, `LOAD CSV`, `COPY`, `LOAD FROM`, `INSTALL`, `ATTACH`,",
        "`EXPORT`/`IMPORT DATABASE`, `SHOW`, `TERMINATE`, `USE`, schema and user commands, `CALL { … } IN",
        "TRANSACTIONS`, a second statement after `;`, and any other function or procedure. So is text that",
        "could be read two ways: a name with letters beyond ASCII outside backticks (write `` `naïve` ``), a",
        "character other than ASCII whitespace between words, and a `\\u` escape in a comment or backtick",
        "name, or one that spells a quote or backslash in a string.", "",
    ]  # fmt: skip


def favorites(queries: dict[str, Query]) -> bytes:
    """The library as a zip of .cypher files, which Neo4j Browser imports as favourites."""
    import zipfile

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as z:
        for q in sorted(queries.values(), key=lambda q: q.name):
            z.writestr(f"gaf/{q.name}.cypher", q.cypher)
    return buffer.getvalue()
