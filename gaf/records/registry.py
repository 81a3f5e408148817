"""Every record kind by name, and reading records from JSON into their classes.

``RECORD_TYPES`` names the kinds in the order of the chain. The stores build their
schema from it and ``json_schema`` (``gaf schema``) lists the kinds in its order, so a
new kind is a class in the module of its stage and one entry here.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import ValidationError

from gaf.errors import InvalidRecord, UnknownKind
from gaf.records.actions import Action, ActionPolicy, ActionStatus, Grant
from gaf.records.base import STORED_BODY, Record, kept, max_record_bytes
from gaf.records.ledger import (
    Agent,
    Claim,
    CompletenessDeclaration,
    Proposition,
    RunInvalidation,
    Source,
    SourceInvalidation,
    SubjectKey,
)
from gaf.records.lifecycle import CaseDecision, PolicyCandidate, PolicyException, RatifiedPolicy, Waiver
from gaf.records.projection import GAF, AcceptedFact, Decision, Derivation, Evaluation, Exclusion, Projection
from gaf.records.reopen import Appeal, Reopen
from gaf.records.schema import LogEntry, SchemaVersion
from gaf.records.verdict import Closure, Cone, ConeKey, Verdict, VerdictRules

#: kind name -> record class, in the order of the chain; a kind not named here is neither stored nor read.
RECORD_TYPES: dict[str, type[Record]] = {
    cls.KIND: cls
    for cls in (
        Agent, Source, SourceInvalidation, SubjectKey, Proposition, Claim, RunInvalidation,
        CompletenessDeclaration, Projection, Evaluation, Exclusion, Derivation, AcceptedFact, Decision, GAF,
        VerdictRules, Closure, ConeKey, Cone, Verdict,
        Grant, ActionPolicy, Action, ActionStatus, Reopen,
        CaseDecision, PolicyCandidate, RatifiedPolicy, PolicyException, Waiver, Appeal,
        SchemaVersion, LogEntry,
    )
}  # fmt: skip


def record_type(kind: str, *, where: str | None = None) -> type[Record]:
    """The record class of a kind name, or UnknownKind naming the kinds there are."""
    try:
        return RECORD_TYPES[kind]
    except (KeyError, TypeError):
        raise UnknownKind(
            f"unknown record kind {kind!r}",
            where=where,
            hint=f"known kinds: {', '.join(sorted(RECORD_TYPES))}",
        ) from None


def parse_record(data: Any, *, where: str | None = None, kind: str | None = None, stored: bytes | None = None) -> Record:
    """Build a record from a JSON object, turning every failure into a typed error.

    The object names its kind in ``kind`` (or the caller passes ``kind``); an ``id``
    in the object is checked against the content — against ``stored``, the bytes the object
    was read from, when they are the record's whole body (``Record._identified_by``).
    """
    if not isinstance(data, dict):
        raise InvalidRecord(f"a record must be a JSON object, got {type(data).__name__}", where=where)
    kind = kind or data.get("kind")
    if kind is None:
        raise InvalidRecord("record has no 'kind'", where=where, hint=f"one of: {', '.join(sorted(RECORD_TYPES))}")
    cls = record_type(kind, where=where)
    try:
        return cls.model_validate(data, context={STORED_BODY: stored} if stored is not None else None)
    except ValidationError as exc:
        raise InvalidRecord(_describe(exc, kind), where=where) from None
    except InvalidRecord as exc:
        if exc.where is None and where is not None:
            exc.where = where
            exc.args = (exc.message,)
        raise


def parse_body(body: str | bytes, record_id: str, members: dict[str, list[str]] | None = None, *, keep: bool = True) -> Record:
    """Read a stored body back into its record, checking it still matches its id. ``members``
    are the member lists the body leaves to the record's relationships (``Record.stored_body``),
    as the store read them back.

    A pure function of its arguments (and the record size limit in force), so a body read
    before, byte for byte, under the same id, members and limit, gives back the record checked
    then: a server reading the same records for page after page checks each once. A body that
    differs in one byte is parsed and checked afresh. The memo is dropped whole past
    ``_READ_MAX`` entries; a reader that reads each record once (``gaf verify``) passes
    ``keep=False``. Records are shared between readers: read them, never change them."""
    key = (record_id, body, tuple(sorted((k, tuple(v)) for k, v in members.items())) if members else (), max_record_bytes())

    def read() -> Record:
        stored = None if members else body.encode("utf-8") if isinstance(body, str) else body
        return parse_record(json.loads(body) | (members or {}) | {"id": record_id}, where=record_id, stored=stored)

    return kept(_READ, _READ_MAX, key, read, keep=keep)


#: Records read back from stored bodies, by (id, body, members, size limit): see ``parse_body``.
_READ: dict[tuple[str, str | bytes, tuple[tuple[str, tuple[str, ...]], ...], int], Record] = {}
_READ_MAX = 20_000


def _describe(exc: ValidationError, kind: str) -> str:
    parts = []
    for err in exc.errors(include_url=False)[:5]:
        loc = ".".join(str(p) for p in err["loc"]) or "(record)"
        parts.append(f"{loc}: {err['msg']}")
    more = exc.error_count() - len(parts)
    tail = f"; and {more} more" if more > 0 else ""
    return f"invalid {kind}: " + "; ".join(parts) + tail


def json_schema() -> dict[str, Any]:
    """The JSON Schema of every record kind, for integrators."""
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "gaf records",
        "oneOf": [{"$ref": f"#/$defs/{cls.__name__}"} for cls in RECORD_TYPES.values()],
        "$defs": _merged_defs(),
    }


def _merged_defs() -> dict[str, Any]:
    defs: dict[str, Any] = {}
    for cls in RECORD_TYPES.values():
        schema = cls.model_json_schema(ref_template="#/$defs/{model}")
        defs.update(schema.pop("$defs", {}))
        defs[cls.__name__] = schema
    return defs
