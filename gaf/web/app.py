"""The ASGI application ``gaf serve`` runs: the routes of the API, behind one door.

Every request goes through the same steps, in this order, so no route can skip one: the
token is checked (``Authorization: Bearer …``; none, unknown, expired or revoked is 401),
its role against the route's (403), the body read under the ingest limits as it arrives
(413 past them, before anything is parsed), then the route's one library call, run in a
worker thread while it holds the store (one call at a time: the embedded store has one
connection). A gaf error becomes its HTTP status and a JSON body ``{"error", "what",
"where", "hint"}``; anything else becomes a 500 that says nothing of the code, its trace
going to the server's log. Every response carries the security headers.

The HTML pages of the auditor's workbench are routes beside these (``gaf/web/pages.py``),
behind the same tokens (sent once through a sign-in form, then kept in a cookie).
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

import anyio.to_thread
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import BaseRoute, Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from gaf.errors import (
    AccessDenied,
    BatchRejected,
    ExitCode,
    GafError,
    InvalidRecord,
    InvalidValue,
    NotAuthenticated,
    PayloadTooLarge,
    UnknownPolicy,
    UnknownReference,
)
from gaf.records import limits
from gaf.settings import Settings
from gaf.store import GafStore
from gaf.types import to_instant
from gaf.web.tokens import Role, Token, Tokens, require

log = logging.getLogger("gaf.web")

#: Where the API lives; a later version of it gets a path of its own.
API = "/api/v1"

#: Headers on every response: no sniffing, nothing from elsewhere, never in a frame, no referrer.
SECURITY_HEADERS = {
    "x-content-type-options": "nosniff",
    "content-security-policy": "default-src 'self'",
    "x-frame-options": "DENY",
    "referrer-policy": "no-referrer",
}

#: The HTTP status of each error family (gaf/errors.py's exit codes); the classes below are narrower.
FAMILY_STATUS = {ExitCode.BAD_INPUT: 400, ExitCode.STORE: 503, ExitCode.DENIED: 403, ExitCode.REFUSED: 409, ExitCode.DIFFERS: 409}
#: Narrower statuses, most specific first: the first class an error is an instance of decides.
CLASS_STATUS: tuple[tuple[type[GafError], int], ...] = (
    (NotAuthenticated, 401),
    (AccessDenied, 403),
    (PayloadTooLarge, 413),
    (UnknownReference, 404),
    (UnknownPolicy, 404),
    (BatchRejected, 422),
)


def status_of(error: GafError) -> int:
    """The one HTTP status a gaf error maps to: its class's where narrower, else its family's."""
    for cls, status in CLASS_STATUS:
        if isinstance(error, cls):
            return status
    return FAMILY_STATUS.get(error.exit_code, 409)


def error_response(error: GafError) -> JSONResponse:
    headers = {"www-authenticate": "Bearer"} if isinstance(error, NotAuthenticated) else None
    return JSONResponse(error.to_dict(), status_code=status_of(error), headers=headers)


@dataclass(frozen=True)
class Param:
    """A query or path parameter of a route, as its OpenAPI document describes it."""

    name: str
    description: str
    where: str = "query"
    required: bool = False
    type: str = "string"


@dataclass
class Call:
    """One request as a route sees it: the store, the settings, who is calling and what they sent."""

    store: GafStore
    settings: Settings
    token: Token | None
    params: dict[str, str]
    body: Any
    raw: bytes
    content_type: str
    now: datetime

    def text(self, name: str, *, required: bool = True, default: str | None = None) -> str | None:
        """A parameter or body field that is text; a missing required one is refused naming it."""
        value = self.params.get(name)
        if value is None and isinstance(self.body, dict):
            value = self.body.get(name)
        if value is None or value == "":
            if required:
                raise InvalidValue(f"{name} is required", where=name)
            return default
        if not isinstance(value, str):
            raise InvalidValue(f"{name} must be text, got {json.dumps(value)}", where=name)
        return value

    def need(self, name: str) -> str:
        """A required text parameter or field."""
        value = self.text(name)
        assert value is not None
        return value

    def number(self, name: str, default: float | None, *, whole: bool = False, positive: bool = True) -> float:
        """A number given as a parameter (text) or a body field; the default when absent (None: required)."""
        value: Any = self.params.get(name)
        if value is None and isinstance(self.body, dict):
            value = self.body.get(name)
        if value is None:
            if default is None:
                raise InvalidValue(f"{name} is required", where=name)
            return default
        try:
            number = int(value) if whole else float(value)
        except (TypeError, ValueError):
            raise InvalidValue(f"{name} must be a {'whole ' if whole else ''}number, got {value!r}", where=name) from None
        if isinstance(value, bool) or positive and not number > 0:
            raise InvalidValue(f"{name} must be positive, got {value!r}", where=name)
        return number

    def flag(self, name: str) -> bool:
        value: Any = self.params.get(name)
        if value is None and isinstance(self.body, dict):
            value = self.body.get(name, False)
        if value in (True, "true", "1"):
            return True
        if value in (False, None, "false", "0"):
            return False
        raise InvalidValue(f"{name} must be true or false, got {value!r}", where=name)

    def time(self, name: str, default: datetime | None = None) -> datetime:
        """A time field (ISO 8601); ``default`` (else now) when absent."""
        text = self.text(name, required=False)
        if text is None:
            return default or self.now
        return to_instant(text)

    def agent(self, field: str, *, default: str | None = None) -> str:
        """The agent a record written by this request carries: the token's. A body naming
        another agent in ``field`` is refused (403); without a token (``--no-auth``) the body
        names it, or ``default`` stands."""
        named = self.text(field, required=self.token is None and default is None)
        chosen = self.store.resolve_id(named, ("agent",)) if named else None
        if self.token is None:
            return chosen or default or ""
        if chosen is not None and chosen != self.token.agent:
            raise AccessDenied(f"{field} names {chosen}, but the token {self.token.id} belongs to {self.token.agent}",
                               where=field, hint=f"leave {field} out (it is the token's agent), or use that agent's token")  # fmt: skip
        return self.token.agent


@dataclass(frozen=True)
class Streamed:
    """A route's answer that is not JSON: its chunks, its media type and the headers that describe it."""

    chunks: Iterator[bytes]
    media_type: str
    headers: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Endpoint:
    """One route of the API: what it does, who may call it, and the one library call it makes."""

    method: str
    path: str
    role: Role
    summary: str
    run: Callable[[Call], Any]
    params: tuple[Param, ...] = ()
    #: the body's fields, name → description (a JSON object); None: no body
    body: dict[str, str] | None = None
    #: the body is a batch of records (a JSON list, or NDJSON), read under the input limit
    batch: bool = False
    #: a batch that may also be one JSON object (an OpenLineage client posts one event a request)
    one_or_many: bool = False
    #: the answer's media type when it is streamed rather than JSON
    streamed: str | None = None
    #: a status other than 200 for success (201 for what was written)
    status: int = 200


class App:
    """What every request is served with: the store (held for the app's life), settings, tokens, a clock."""

    def __init__(self, store: GafStore, settings: Settings, tokens: Tokens | None, clock: Callable[[], datetime]):
        self.store, self.settings, self.tokens, self.clock = store, settings, tokens, clock
        self.held = threading.Lock()  # one library call at a time: the embedded store has one connection

    def authenticate(self, request: Request) -> Token | None:
        """The token the request carries, checked; None when the app runs without auth."""
        if self.tokens is None:
            return None
        scheme, _, secret = request.headers.get("authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not secret.strip():
            raise NotAuthenticated("no token: send Authorization: Bearer <token>", where="Authorization",
                                   hint="gaf token create --agent KEY --role reader prints one")  # fmt: skip
        return self.tokens.check(secret.strip(), self.clock())

    async def read_body(self, request: Request, endpoint: Endpoint) -> tuple[bytes, Any, str]:
        """The body, refused past its limit while it arrives (a batch: the ingest limits, the input
        whole and each NDJSON line a record; any other body: one record's), then parsed."""
        kind = request.headers.get("content-type", "application/json").split(";")[0].strip().lower()
        if endpoint.body is None and not endpoint.batch:
            return b"", None, kind
        total = self.settings.max_input_bytes if endpoint.batch else self.settings.max_record_bytes
        ndjson = endpoint.batch and kind in NDJSON_TYPES
        declared = request.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > total:
            raise _too_large(int(declared), total, "body")
        chunks: list[bytes] = []
        size = line = 0
        async for chunk in request.stream():
            size += len(chunk)
            if size > total:
                raise _too_large(size, total, "body")
            if ndjson:
                line = _longest_line(chunk, line, self.settings.max_record_bytes, sum(c.count(b"\n") for c in chunks))
            chunks.append(chunk)
        raw = b"".join(chunks)
        if ndjson:
            return raw, None, kind
        if kind not in JSON_TYPES:
            raise InvalidValue(f"the body is {kind}, not JSON", where="Content-Type",
                               hint="send application/json" + (" or application/x-ndjson" if endpoint.batch else ""))  # fmt: skip
        try:
            parsed = json.loads(raw) if raw.strip() else ({} if not endpoint.batch else None)
        except (ValueError, UnicodeDecodeError) as exc:
            where = f"body line {exc.lineno} column {exc.colno}" if isinstance(exc, json.JSONDecodeError) else "body"
            raise InvalidValue(f"the body is not JSON: {getattr(exc, 'msg', exc)}", where=where,
                               hint="send one JSON value" + (": a list of records" if endpoint.batch else ": an object"))  # fmt: skip
        wanted = (list, dict) if endpoint.one_or_many else list if endpoint.batch else dict
        if not isinstance(parsed, wanted):
            raise InvalidValue(f"the body must be a JSON {'list of records' if endpoint.batch else 'object'}", where="body")
        return raw, parsed, kind

    def serve(self, endpoint: Endpoint) -> Callable[[Request], Any]:
        async def answer(request: Request) -> Response:
            try:
                token = self.authenticate(request)
                require(token, endpoint.role)
                raw, body, kind = await self.read_body(request, endpoint)
                call = Call(self.store, self.settings, token, {**request.query_params, **request.path_params}, body, raw, kind,
                            self.clock())  # fmt: skip
                result = await anyio.to_thread.run_sync(self._run, endpoint, call)
            except GafError as exc:
                return error_response(exc)
            except Exception:  # never a traceback in a response: it goes to the log
                log.exception("%s %s failed", request.method, request.url.path)
                return JSONResponse({"error": "InternalError", "what": "the server failed on this request", "where": None,
                                     "hint": "the server's log has the detail"}, status_code=500)  # fmt: skip
            if isinstance(result, Streamed):
                return StreamingResponse(result.chunks, media_type=result.media_type, headers=result.headers)
            return JSONResponse(result, status_code=endpoint.status)

        return answer

    def _run(self, endpoint: Endpoint, call: Call) -> Any:
        """The route's library call, holding the store, under the settings' record limits; a value
        that does not parse is bad input, as on the command line."""
        with self.held, limits(max_record_bytes=self.settings.max_record_bytes, max_input_bytes=self.settings.max_input_bytes):
            try:
                return endpoint.run(call)
            except GafError:
                raise
            except ValueError as exc:
                raise InvalidRecord(str(exc)) from None


JSON_TYPES = ("application/json", "text/json", "")
NDJSON_TYPES = ("application/x-ndjson", "application/ndjson", "application/jsonl", "application/json-seq")


def _too_large(size: int, limit: int, where: str) -> PayloadTooLarge:
    return PayloadTooLarge(f"{where} of {size} bytes or more is over the limit of {limit} bytes; nothing was read further",
                           where=where, hint="send less at a time, or raise GAF_MAX_INPUT_BYTES / GAF_MAX_RECORD_BYTES")  # fmt: skip


def _longest_line(chunk: bytes, running: int, limit: int, lines_before: int) -> int:
    """The length of the NDJSON line still open after ``chunk`` (``running`` before it), refusing a line past ``limit``."""
    for number, piece in enumerate(chunk.split(b"\n")):
        running = (running if number == 0 else 0) + len(piece)
        if running > limit:
            raise _too_large(running, limit, f"body line {lines_before + number + 1}")
    return running


class SecurityHeaders:
    """Add the security headers to every response, and ``Cache-Control: no-store`` to the API's."""

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        api = scope["path"].startswith(API)

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = [(k, v) for k, v in message.get("headers", []) if k.decode().lower() not in SECURITY_HEADERS]
                headers += [(k.encode(), v.encode()) for k, v in SECURITY_HEADERS.items()]
                if api:
                    headers.append((b"cache-control", b"no-store"))
                message["headers"] = headers
            await send(message)

        await self.app(scope, receive, with_headers)


async def _no_route(request: Request, exc: Exception) -> Response:
    """Starlette's own refusals (no such route, a method the route lacks) as gaf's JSON errors."""
    status = exc.status_code if isinstance(exc, HTTPException) else 500
    kinds = {404: "UnknownRoute", 405: "MethodNotAllowed"}
    return JSONResponse({"error": kinds.get(status, "HTTPError"), "what": f"{request.method} {request.url.path}: "
                         f"{'no such route' if status == 404 else 'method not allowed' if status == 405 else 'refused'}",
                         "where": request.url.path, "hint": f"GET {API}/openapi.json lists the routes"}, status_code=status)  # fmt: skip


def utc_now() -> datetime:
    return datetime.now(timezone.utc)


def create_app(store: GafStore, settings: Settings, tokens: Tokens | None, *, clock: Callable[[], datetime] = utc_now) -> Starlette:
    """The API over ``store``: every route of ``gaf.web.api.ENDPOINTS`` and its OpenAPI document,
    and beside it the auditor's pages (``gaf.web.pages``).

    ``tokens`` None serves without auth (``gaf serve --no-auth``, this machine only): every
    route is open and a body names the agent a write is recorded under."""
    from gaf.web import pages
    from gaf.web.api import ENDPOINTS

    app = App(store, settings, tokens, clock)
    routes: list[BaseRoute] = [Route(e.path, app.serve(e), methods=[e.method]) for e in ENDPOINTS]
    routes += pages.routes(app)  # the auditor's pages, beside the API, through the same tokens
    web = Starlette(routes=routes, exception_handlers={HTTPException: _no_route})
    web.add_middleware(SecurityHeaders)
    web.state.gaf = app
    return web
