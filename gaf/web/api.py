"""The routes of the JSON API: each one call of one library function, as the commands are.

A route reads its parameters, names its ids as people type them (``store.resolve_id``:
a whole id, a unique prefix, a key or NAME@VERSION), makes the library call the command
of the same name makes, and answers with the JSON that command prints with ``--json``.
Records written through a token carry its agent (``Call.agent``). The expensive reads —
queries, what-if, impact, export — run under the settings' row and time limits
(GAF_API_ROWS, GAF_API_SECONDS) and say in their answer when one was reached.
"""

from __future__ import annotations

import io
import json
import time
from decimal import Decimal, InvalidOperation
from typing import Any

import impact
import prov_export
import queries
from gaf import actions, closure, lifecycle, policies, projection
from gaf import reopen as reopening
from gaf import whatif as what_if
from gaf.errors import BatchRejected, GafError, InvalidValue, PayloadTooLarge, UnknownReference
from gaf.ledger import ingest
from gaf.policies import AnyVersioned
from gaf.records import ActionPolicy, PolicyCandidate, Projection, VerdictRules
from gaf.web.app import API, Call, Endpoint, Param, Streamed
from gaf.web.tokens import Role

# ---------------------------------------------------------------------- reading


def show(call: Call) -> dict[str, Any]:
    """``gaf show``: one record and the relationships leaving it."""
    record_id = call.store.resolve_id(call.need("id"))
    record = call.store.get(record_id)
    if record is None:
        raise UnknownReference(f"no record {record_id}", where="id", hint="GET /api/v1/records/{id} takes a prefix, key or NAME@VERSION")
    return {**record.to_json(), "edges": [{"rel": r, "target": t} for r, t in call.store.edges_from(record_id)]}


def verdict(call: Call) -> dict[str, Any]:
    """``gaf verdict --json``: a closure's verdict with its trace."""
    closure_id = call.store.resolve_id(call.need("closure"), ("closure",))
    found = call.store.find("verdict", closure=closure_id)
    if not found:
        raise GafError(f"no verdict for {closure_id}", where="closure", hint="POST /api/v1/close makes one")
    return found[0].to_json()


def history(call: Call) -> list[dict[str, Any]]:
    """``gaf history``: every closure about a subject, oldest first."""
    return reopening.history(call.store, call.need("subject"))


def whatif(call: Call) -> dict[str, Any]:
    """``gaf whatif``: the bounded search for what would change a verdict, within the API's time limit."""
    seconds = min(call.number("seconds", call.settings.api_seconds), call.settings.api_seconds)
    max_size = int(call.number("max_size", 2, whole=True))
    report = what_if.whatif(call.store, call.store.resolve_id(call.need("closure"), ("closure",)), max_size=max_size, seconds=seconds)
    return {**report.to_dict(), "limits": {"seconds": seconds, "max_size": max_size, "hit": not report.complete}}


def impact_source(call: Call) -> dict[str, Any]:
    """``gaf impact source``: everything that rests on a source, within the API's limits."""
    source_id = call.store.resolve_id(call.need("source"), ("source",))
    return _impact(call, impact.source_invalidated, source_id)


def impact_claim(call: Call) -> dict[str, Any]:
    """``gaf impact claim``: everything that rests on one claim, within the API's limits."""
    return _impact(call, impact.claim_retracted, call.store.resolve_id(call.need("claim"), ("claim",)))


def impact_run(call: Call) -> dict[str, Any]:
    """``gaf impact run``: everything that rests on a pipeline run found wrong, within the API's limits."""
    return _impact(call, impact.run_invalidated, call.need("run"))


def _impact(call: Call, question: Any, record_id: str) -> dict[str, Any]:
    chosen = impact.Limits(depth=int(call.number("max_depth", 64, whole=True)), count=int(call.number("max_count", 1_000_000, whole=True)),
                           seconds=min(call.number("seconds", call.settings.api_seconds), call.settings.api_seconds))  # fmt: skip
    as_of = call.time("as_of") if call.text("as_of", required=False) else None
    report = question(call.store, record_id, limits=chosen, as_of=as_of)
    return {**report.to_dict(), "limits": {"depth": chosen.depth, "count": chosen.count, "seconds": chosen.seconds,
                                           "hit": not report.complete}}  # fmt: skip


def query_list(call: Call) -> list[dict[str, Any]]:
    """``gaf query --list``: the auditor query library."""
    return [{"name": q.name, "params": q.params, "question": q.question} for q in queries.load().values()]


def query_named(call: Call) -> dict[str, Any]:
    """``gaf query NAME``: a named auditor query, read-only, its rows cut at the API's row limit."""
    library = queries.load()
    name = call.need("name")
    if name not in library:
        raise UnknownReference(f"no query named {name!r}", where="name", hint=f"known: {', '.join(sorted(library))}")
    return _rows(call, library[name])


def query_cypher(call: Call) -> dict[str, Any]:
    """``gaf query --cypher``: ad-hoc Cypher through the same read-only runner, its rows cut at the row limit."""
    return _rows(call, call.need("cypher"))


def _rows(call: Call, query: queries.Query | str) -> dict[str, Any]:
    params = call.body.get("params", {}) if isinstance(call.body, dict) else {}
    if not isinstance(params, dict):
        raise InvalidValue("params must be a JSON object of name → value", where="params")
    limit = min(int(call.number("max_rows", call.settings.api_rows, whole=True)), call.settings.api_rows)
    started = time.monotonic()
    rows = queries.run(call.store, query, params)
    return {"rows": [{k: _plain(v) for k, v in r.items()} for r in rows[:limit]], "count": min(len(rows), limit),
            "total": len(rows), "limits": {"rows": limit, "hit": len(rows) > limit},
            "seconds": round(time.monotonic() - started, 3)}  # fmt: skip


def _plain(value: Any) -> Any:
    """A value a query returned, as JSON can hold it (a time as its ISO text)."""
    return value if value is None or isinstance(value, str | int | float | bool | list | dict) else str(value)


#: The media type each PROV format is served as.
PROV_MEDIA = {"ttl": "text/turtle", "trig": "application/trig", "nt": "application/n-triples", "nq": "application/n-quads",
              "jsonld": "application/ld+json", "provn": "text/provenance-notation", "provjson": "application/json",
              "provxml": "application/xml"}  # fmt: skip


def export_prov(call: Call) -> Streamed:
    """``gaf export prov``: a closure's or a subject's lineage as PROV, streamed; a lineage past the
    API's row limit is refused, naming the limit (``gaf export prov`` has none)."""
    fmt = call.text("format", required=False, default="ttl") or "ttl"
    prov_export.check_format(fmt)
    closure_id, subject = call.text("closure", required=False), call.text("subject", required=False)
    if (closure_id is None) == (subject is None):
        raise InvalidValue("give exactly one of closure or subject", where="closure")
    known: dict[str, Any] = {}
    records = (prov_export.lineage(call.store, call.store.resolve_id(closure_id, ("closure",)), known=known) if closure_id
               else prov_export.subject_lineage(call.store, subject or "", known=known))  # fmt: skip
    if len(records) > call.settings.api_rows:
        raise PayloadTooLarge(f"the lineage holds {len(records)} records, over the API's limit of {call.settings.api_rows}",
                              where="closure" if closure_id else "subject", hint="gaf export prov has no such limit; or raise GAF_API_ROWS")  # fmt: skip
    result, text = prov_export.export(records, fmt, None, held=prov_export.bundles(call.store, records, known=known))
    data = (text or "").encode("utf-8")
    summary = result.to_dict()
    headers = {f"x-gaf-{k.replace('_', '-')}": str(v) for k, v in summary.items() if v is not None and k != "path"}
    chunks = (data[i : i + CHUNK] for i in range(0, len(data), CHUNK))
    return Streamed(chunks, PROV_MEDIA.get(fmt, "text/plain"), headers)


#: Bytes a streamed answer is sent in.
CHUNK = 64 * 1024


# ---------------------------------------------------------------------- writing


def submit_claims(call: Call) -> dict[str, Any]:
    """``gaf ingest``: claims (and their sources and agents), all or nothing, as a JSON list or NDJSON."""
    at = call.time("at")
    keep = call.settings.api_rows
    if call.body is None:  # NDJSON: read as a JSONL file is, its lines named body:LINE
        report = ingest(call.store, io.BytesIO(call.raw), recorded_at=at, fmt="jsonl", name="body", keep_ids=keep)
    else:
        report = ingest(call.store, call.body, recorded_at=at, keep_ids=keep)
    return {**report.to_dict(), "written_ids": report.write.written, "existing_ids": report.write.existing,
            "ids_cut": report.written + report.existing > len(report.write.written) + len(report.write.existing)}  # fmt: skip


def submit_lineage(call: Call) -> dict[str, Any]:
    """``gaf ingest --format openlineage``: OpenLineage events, as the OpenLineage HTTP transport
    posts them (one event, a JSON object, a request) or a JSON list of them, or NDJSON; all or
    nothing, their fields named ``body:N.field`` when refused: one bad event is its own error
    (400), several the batch's (422, each listed)."""
    at = call.time("at")
    if call.body is None:
        lines = call.raw
    elif isinstance(call.body, dict):  # a newline outside a JSON string is whitespace: one line, as sent
        lines = call.raw.replace(b"\r", b" ").replace(b"\n", b" ")
    else:
        lines = b"\n".join(json.dumps(event, ensure_ascii=False).encode("utf-8") for event in call.body)
    try:
        report = ingest(call.store, io.BytesIO(lines), recorded_at=at, fmt="openlineage", name="body",
                        keep_ids=call.settings.api_rows, lineage_skew=call.settings.lineage_skew)  # fmt: skip
    except BatchRejected as refused:
        if len(refused.errors) == 1:  # one bad event: its own typed error (400), the field's path in "where"
            raise refused.errors[0] from None
        raise
    return {**report.to_dict(), "written_ids": report.write.written, "existing_ids": report.write.existing}


def _versioned(call: Call, field: str, cls: type[AnyVersioned]) -> AnyVersioned:
    """A published policy or rule set named by NAME (its latest), NAME@VERSION, or its id or a prefix of one."""
    text = call.need(field)
    if ":" in text or "@" in text:
        return call.store.get(call.store.resolve_id(text, (cls.KIND,)), cls)
    return policies.resolve(call.store, text, cls, where=field)


def project(call: Call) -> dict[str, Any]:
    """``gaf project``: evaluate a policy, accept under the review policy, write the GAF; the acceptance is the token's agent's."""
    policy = _versioned(call, "policy", Projection)
    at = call.time("at")
    dry_run = call.flag("dry_run")
    result = projection.project(call.store, policy, as_of=call.time("as_of", at), reviewer=call.agent("reviewer"), at=at,
                                dry_run=dry_run, review=projection.ReviewPolicy(call.number("auto_accept_at", 1.0, positive=False)))  # fmt: skip
    return result.to_dict(written=not dry_run)


def close(call: Call) -> dict[str, Any]:
    """``gaf close``: freeze a GAF into a closure and judge it; an undetermined case outside policy is queued."""
    supersedes = call.body.get("supersedes", []) if isinstance(call.body, dict) else []
    if not isinstance(supersedes, list) or not all(isinstance(s, str) for s in supersedes):
        raise InvalidValue("supersedes must be a list of closure ids", where="supersedes")
    at = call.time("at")
    closed = closure.close(call.store, call.store.resolve_id(call.need("gaf"), ("gaf",)), _versioned(call, "rules", VerdictRules),
                           subject=call.need("subject"), as_of=call.time("as_of"), closed_at=at,
                           supersedes=[call.store.resolve_id(c, ("closure",)) for c in supersedes])  # fmt: skip
    exceptions = lifecycle.route_exceptions(call.store, closed, at)
    return {"closure": closed.closure.id, "verdict": closed.verdict.to_json(), "policy_exceptions": [e.to_json() for e in exceptions]}


def act(call: Call) -> dict[str, Any]:
    """``gaf act``: check and record one action on a verdict, authorised by the token's agent (record only: no webhook)."""
    s = call.store
    tops_up, waiver = call.text("tops_up", required=False), call.text("waiver", required=False)
    done = actions.act(
        s, verdict=s.resolve_id(call.need("verdict"), ("verdict",)), action_kind=call.need("kind"), subject=call.need("subject"),
        authorised_by=call.agent("by"), grant=s.resolve_id(call.need("grant"), ("grant",)),
        policy=_versioned(call, "policy", ActionPolicy).id, idempotency_key=call.need("key"), at=call.time("at"),
        amount=_amount(call), unit=call.text("unit", required=False),
        tops_up=s.resolve_id(tops_up, ("action",)) if tops_up else None, waiver=s.resolve_id(waiver, ("waiver",)) if waiver else None,
    )  # fmt: skip
    return done.to_dict()


def _amount(call: Call) -> Decimal | None:
    """An amount exactly as sent: a JSON number's text or a string, never through a float."""
    value = call.body.get("amount") if isinstance(call.body, dict) else None
    if value is None:
        return None
    try:
        if isinstance(value, bool | dict | list):
            raise InvalidOperation
        return Decimal(str(value).strip())
    except InvalidOperation:
        raise InvalidValue(f"amount {value!r} is not a number", where="amount", hint='write it as digits: "60.50"') from None


def decide(call: Call) -> dict[str, Any]:
    """``gaf policy decide``: the token's agent's decision on one case."""
    settles = call.text("settles", required=False)
    case = lifecycle.decide_case(call.store, call.store.resolve_id(call.need("closure"), ("closure",)), decided_by=call.agent("by"),
                                 decision=call.need("decision"), reason=call.need("reason"), at=call.time("at"),
                                 settles=call.store.resolve_id(settles, ("policy_exception",)) if settles else None)  # fmt: skip
    return case.to_json()


def ratify(call: Call) -> dict[str, Any]:
    """``gaf policy ratify``: ratify a candidate on the token's agent's word (an authority agent)."""
    candidate = call.store.get(call.store.resolve_id(call.need("candidate"), ("policy_candidate",)), PolicyCandidate)
    ratified = lifecycle.ratify(call.store, candidate, authority=call.agent("by"), version=int(call.number("version", None, whole=True)),
                                effective=call.time("effective"), retroactive=call.flag("retroactive"), at=call.time("at"))  # fmt: skip
    return ratified.to_json()


def reopen_source(call: Call) -> dict[str, Any]:
    """``gaf reopen source``: record a source invalidation by the token's agent and reopen what rested on it."""
    at = call.time("at")
    who = call.agent("by")
    done = reopening.after_invalidation(call.store, call.store.resolve_id(call.need("source"), ("source",)), impact=impact, by=who,
                                        reason=call.need("reason"), invalid_from=call.time("invalid_from"),
                                        reviewer=call.agent("reviewer", default=who), at=at, as_of=call.time("as_of", at))  # fmt: skip
    return done.to_dict()


def reopen_run(call: Call) -> dict[str, Any]:
    """``gaf reopen run``: record a run invalidation by the token's agent and reopen what rested on the run."""
    at = call.time("at")
    who = call.agent("by")
    done = reopening.after_run_invalidation(call.store, call.need("run"), impact=impact, by=who, reason=call.need("reason"),
                                            reviewer=call.agent("reviewer", default=who), at=at, as_of=call.time("as_of", at))  # fmt: skip
    return done.to_dict()


def reopen_appeal(call: Call) -> dict[str, Any]:
    """``gaf reopen appeal``: the token's agent's appeal, and the closure re-decided on what is known now."""
    at = call.time("at")
    who = call.agent("by")
    done = reopening.on_appeal(call.store, call.store.resolve_id(call.need("closure"), ("closure",)), by=who, grounds=call.need("grounds"),
                               reviewer=call.agent("reviewer", default=who), at=at, as_of=call.time("as_of", at))  # fmt: skip
    return done.to_dict()


def reopen_policy(call: Call) -> dict[str, Any]:
    """``gaf reopen policy``: re-decide the standing closures of an older policy version."""
    at = call.time("at")
    done = reopening.after_policy_change(call.store, _versioned(call, "old", Projection), impact=impact, reviewer=call.agent("reviewer"),
                                         at=at, as_of=call.time("as_of", at))  # fmt: skip
    return done.to_dict()


def openapi(call: Call) -> dict[str, Any]:
    """The OpenAPI document of these routes."""
    from gaf.web.openapi import document

    return document(ENDPOINTS)


# ---------------------------------------------------------------------- the route table

AT = "when it is recorded (ISO 8601); default now"
AS_OF = "the transaction time to answer as of (ISO 8601)"
LIMITED = (Param("seconds", "stop after this long (at most GAF_API_SECONDS); the answer says so", type="number"),)
IMPACT = (Param("as_of", AS_OF), Param("max_depth", "stop after this many hops", type="integer"),
          Param("max_count", "stop after this many records", type="integer"), *LIMITED)  # fmt: skip

# boilerplate: one Endpoint a route, its path, role, summary, call and parameters; the table is the API.
ENDPOINTS: tuple[Endpoint, ...] = (
    Endpoint("GET", f"{API}/openapi.json", Role.reader, "This document.", openapi),
    Endpoint("GET", f"{API}/records/{{id}}", Role.reader, "One record and the relationships leaving it (gaf show).", show,
             (Param("id", "an id, a unique prefix, a key or NAME@VERSION", "path", True),)),
    Endpoint("GET", f"{API}/closures/{{closure}}/verdict", Role.reader, "A closure's verdict with its trace (gaf verdict).", verdict,
             (Param("closure", "a closure id or a unique prefix", "path", True),)),
    Endpoint("GET", f"{API}/closures/{{closure}}/whatif", Role.reader, "What would change the verdict (gaf whatif).", whatif,
             (Param("closure", "a closure id or a unique prefix", "path", True),
              Param("max_size", "largest combination of changes tried", type="integer"), *LIMITED)),
    Endpoint("GET", f"{API}/history", Role.reader, "Every closure about a subject, oldest first (gaf history).", history,
             (Param("subject", "the subject, e.g. rent:lease-17/2026-07", required=True),)),
    Endpoint("GET", f"{API}/impact/source/{{source}}", Role.reader, "Everything that rests on a source (gaf impact source).",
             impact_source, (Param("source", "the source's key, id or prefix", "path", True), *IMPACT)),
    Endpoint("GET", f"{API}/impact/claim/{{claim}}", Role.reader, "Everything that rests on a claim (gaf impact claim).",
             impact_claim, (Param("claim", "the claim's id or prefix", "path", True), *IMPACT)),
    Endpoint("GET", f"{API}/impact/run/{{run}}", Role.reader, "Everything that rests on a pipeline run found wrong, with the dataset "
             "path to each (gaf impact run).", impact_run, (Param("run", "the OpenLineage runId, with or without run:", "path", True), *IMPACT)),
    Endpoint("GET", f"{API}/queries", Role.reader, "The auditor query library (gaf query --list).", query_list),
    Endpoint("POST", f"{API}/queries/{{name}}", Role.reader, "Run a named auditor query, read-only (gaf query NAME).", query_named,
             (Param("name", "the query's name", "path", True),),
             {"params": "object: the query's parameters, name → value", "max_rows": "integer: at most this many rows (≤ GAF_API_ROWS)"}),
    Endpoint("POST", f"{API}/query", Role.reader, "Run ad-hoc Cypher through the read-only runner (gaf query --cypher).", query_cypher,
             body={"cypher": "string, required: the query", "params": "object: its parameters",
                   "max_rows": "integer: at most this many rows (≤ GAF_API_ROWS)"}),
    Endpoint("GET", f"{API}/export/prov", Role.reader, "A closure's or subject's lineage as PROV, streamed (gaf export prov).",
             export_prov, (Param("closure", "a closure id or prefix"), Param("subject", "a subject (instead of closure)"),
                           Param("format", f"one of {', '.join(prov_export.FORMATS)}; default ttl")),
             streamed="text/turtle"),
    Endpoint("POST", f"{API}/claims", Role.writer, "Submit claims, sources and agents, all or nothing (gaf ingest).", submit_claims,
             (Param("at", AT),), batch=True, status=201),
    Endpoint("POST", f"{API}/lineage", Role.writer, "Submit OpenLineage events, all or nothing (gaf ingest --format openlineage); "
             "the OpenLineage HTTP transport's default path, its api_key sent as Authorization: Bearer.", submit_lineage,
             (Param("at", AT),), batch=True, one_or_many=True, status=201),
    Endpoint("POST", f"{API}/project", Role.writer, "Project a policy and write the GAF, accepted by the token's agent (gaf project).",
             project, body={"policy": "string, required: NAME, NAME@VERSION or id", "as_of": AS_OF + "; default at",
                            "at": AT, "auto_accept_at": "number: accept at or above this confidence (default 1)",
                            "dry_run": "boolean: evaluate only, write nothing", "reviewer": "the token's agent (another is refused)"},
             status=201),
    Endpoint("POST", f"{API}/close", Role.writer, "Freeze a GAF into a closure and judge it (gaf close).", close,
             body={"gaf": "string, required: the GAF id or prefix", "rules": "string, required: NAME, NAME@VERSION or id",
                   "subject": "string, required", "as_of": "string, required: " + AS_OF, "supersedes": "list of closure ids",
                   "at": AT}, status=201),
    Endpoint("POST", f"{API}/act", Role.authority, "Check and record one action on a verdict (gaf act; record only).", act,
             body={"verdict": "string, required", "kind": "string, required", "subject": "string, required",
                   "grant": "string, required", "policy": "string, required: the action policy", "key": "string, required: idempotency key",
                   "amount": "number or string: exact", "unit": "string", "tops_up": "an earlier action", "waiver": "a waiver",
                   "at": AT, "by": "the token's agent (another is refused)"}, status=201),
    Endpoint("POST", f"{API}/decide", Role.authority, "Record a decision on one case (gaf policy decide).", decide,
             body={"closure": "string, required", "decision": "string, required", "reason": "string, required",
                   "settles": "a policy exception it settles", "at": AT, "by": "the token's agent (another is refused)"}, status=201),
    Endpoint("POST", f"{API}/ratify", Role.authority, "Ratify a policy candidate (gaf policy ratify).", ratify,
             body={"candidate": "string, required", "version": "integer, required", "effective": "string, required: ISO 8601",
                   "retroactive": "boolean", "at": AT, "by": "the token's agent (another is refused)"}, status=201),
    Endpoint("POST", f"{API}/reopen/source", Role.authority, "Invalidate a source and reopen what rested on it (gaf reopen source).",
             reopen_source, body={"source": "string, required", "reason": "string, required", "invalid_from": "string, required",
                                  "as_of": AS_OF + "; default at", "at": AT, "by": "the token's agent", "reviewer": "the token's agent"},
             status=201),
    Endpoint("POST", f"{API}/reopen/run", Role.authority, "Declare a pipeline run wrong and reopen what rested on it (gaf reopen run).",
             reopen_run, body={"run": "string, required: the OpenLineage runId", "reason": "string, required",
                               "as_of": AS_OF + "; default at", "at": AT, "by": "the token's agent", "reviewer": "the token's agent"},
             status=201),
    Endpoint("POST", f"{API}/reopen/appeal", Role.authority, "Appeal a closure and re-decide it (gaf reopen appeal).", reopen_appeal,
             body={"closure": "string, required", "grounds": "string, required", "as_of": AS_OF + "; default at", "at": AT,
                   "by": "the token's agent", "reviewer": "the token's agent"}, status=201),
    Endpoint("POST", f"{API}/reopen/policy", Role.authority, "Re-decide the closures of an older policy version (gaf reopen policy).",
             reopen_policy, body={"old": "string, required: NAME@VERSION", "as_of": AS_OF + "; default at", "at": AT,
                                  "reviewer": "the token's agent"}, status=201),
)  # fmt: skip
