"""The auditor query library and the read-only runner every auditor query goes through.

Each query is a ``.cypher`` file whose header says its name, the question it
answers, its parameters and an example; a ``NAME.ladybug.cypher`` beside it is
the embedded store's variant where the dialects differ. The runner loads them,
checks the parameters, refuses anything that would write before it reaches the
store — CREATE, MERGE, SET, DELETE, REMOVE, DROP, LOAD CSV, FOREACH, procedure
calls that are not known to be read-only — and runs the rest in a read
transaction, so even a query that slipped past the check could not write.
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gaf.errors import GafError, InvalidQuery, InvalidRecord, ReadOnlyViolation
from gaf.store.base import GafStore

LIBRARY = Path(__file__).parent / "library"

#: Clauses that write, in any Cypher dialect gaf speaks.
WRITE_CLAUSES = ("CREATE", "MERGE", "SET", "DELETE", "DETACH", "REMOVE", "DROP", "FOREACH", "LOAD", "COPY", "ALTER",
                 "INSTALL", "ATTACH", "IMPORT", "EXPORT", "BEGIN", "COMMIT", "ROLLBACK", "CHECKPOINT")  # fmt: skip
#: Procedures known not to write.
READ_PROCEDURES = frozenset({"db.labels", "db.relationshiptypes", "db.propertykeys", "db.schema.visualization",
                             "db.schema.nodetypeproperties", "db.schema.reltypeproperties", "table_info", "show_tables",
                             "db.indexes", "db.constraints"})  # fmt: skip

_STRINGS = re.compile(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"|`[^`]*`")
_COMMENTS = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*")


def check_read_only(cypher: str) -> None:
    """Refuse, before it reaches the store, a query that could write. Says which word and where."""
    text = _COMMENTS.sub(lambda m: " " * len(m.group()), cypher)
    text = _STRINGS.sub(lambda m: " " * len(m.group()), text)
    for match in _WORD.finditer(text):
        word = match.group().upper()
        line = text.count("\n", 0, match.start()) + 1
        if word in WRITE_CLAUSES:
            raise ReadOnlyViolation(
                f"{match.group()} writes; auditor queries are read-only",
                where=f"line {line}, column {match.start() - text.rfind(chr(10), 0, match.start())}",
                hint="queries run in read transactions; change data through gaf's own commands",
            )
        if word == "CALL":
            rest = text[match.end():].lstrip()
            proc = _WORD.match(rest)
            if proc is None or rest.startswith("{"):
                continue  # a subquery: its clauses are checked like the rest
            if proc.group().lower() not in READ_PROCEDURES:
                raise ReadOnlyViolation(
                    f"procedure {proc.group()} is not known to be read-only",
                    where=f"line {line}",
                    hint=f"read-only procedures: {', '.join(sorted(READ_PROCEDURES))}",
                )


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
        return store.read(cypher, params)
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
    return "\n".join(lines)


def favorites(queries: dict[str, Query]) -> bytes:
    """The library as a zip of .cypher files, which Neo4j Browser imports as favourites."""
    import zipfile

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as z:
        for q in sorted(queries.values(), key=lambda q: q.name):
            z.writestr(f"gaf/{q.name}.cypher", q.cypher)
    return buffer.getvalue()
