"""The API's OpenAPI document, built from the route table, so it lists exactly the routes served."""

from __future__ import annotations

import re
from typing import Any

from gaf import __version__
from gaf.web.app import Endpoint

#: The error object every refusal answers with.
ERROR = {
    "type": "object",
    "required": ["error", "what"],
    "properties": {"error": {"type": "string", "description": "the error's kind (gaf/errors.py)"},
                   "what": {"type": "string"}, "where": {"type": ["string", "null"]}, "hint": {"type": ["string", "null"]},
                   "errors": {"type": "array", "description": "a refused batch: each bad item's error"}},
}  # fmt: skip
#: The statuses every route may answer with besides success, and why.
REFUSALS = {"400": "bad input", "401": "no token, or one unknown, expired or revoked", "403": "the token's role or agent may not",
            "404": "an unknown id, key or policy", "409": "refused (e.g. no verdict for a closure)", "413": "a body over the limits",
            "422": "a batch with bad items: nothing written", "503": "the store is unreachable or locked"}  # fmt: skip


def document(endpoints: tuple[Endpoint, ...]) -> dict[str, Any]:
    """OpenAPI 3.1 for ``endpoints``: each route's parameters, body fields, role and answers."""
    paths: dict[str, dict[str, Any]] = {}
    for e in endpoints:
        operation: dict[str, Any] = {
            "operationId": e.run.__name__,
            "summary": e.summary,
            "description": f"Needs the {e.role.value} role.",
            "x-gaf-role": e.role.value,
            "parameters": [{"name": p.name, "in": p.where, "required": p.required or p.where == "path", "description": p.description,
                            "schema": {"type": p.type}} for p in e.params],  # fmt: skip
            "responses": {str(e.status): _success(e), **{code: {"description": why, "content": {"application/json": {
                "schema": {"$ref": "#/components/schemas/Error"}}}} for code, why in REFUSALS.items()}},  # fmt: skip
        }
        if e.batch:
            operation["requestBody"] = {"required": True, "content": {
                "application/json": {"schema": {"type": "array", "items": {"type": "object"}}},
                "application/x-ndjson": {"schema": {"type": "string", "description": "one record a line"}}}}  # fmt: skip
        elif e.body is not None:
            operation["requestBody"] = {"required": True, "content": {"application/json": {"schema": {
                "type": "object", "properties": {k: {"description": v} for k, v in e.body.items()},
                "required": [k for k, v in e.body.items() if "required" in v]}}}}  # fmt: skip
        paths.setdefault(e.path, {})[e.method.lower()] = operation
    return {
        "openapi": "3.1.0",
        "info": {"title": "gaf", "version": __version__,
                 "description": "Claims → Projection → Graph of Accepted Facts → Closure → Verdict → Action → Reopen, over HTTP."},
        "paths": paths,
        "components": {"schemas": {"Error": ERROR},
                       "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer", "description": "gaf token create"}}},
        "security": [{"bearer": []}],
    }  # fmt: skip


def path_params(path: str) -> list[str]:
    """The names of a path's ``{parameters}``."""
    return re.findall(r"\{(\w+)\}", path)


def _success(e: Endpoint) -> dict[str, Any]:
    media = e.streamed or "application/json"
    return {"description": "done", "content": {media: {"schema": {"type": "string"} if e.streamed else {}}}}
