"""The HTTP API: ``serve``, and the tokens that open it (``token create/list/revoke``)."""

from __future__ import annotations

from typing import Annotated, Any, Optional

import typer

from gaf.cli.common import AtOpt, FormatOpt, JsonOpt, StoreOpt, app, command, group, number_option, open_store, or_now, settings
from gaf.cli.output import chosen_format, emit, emit_rows, out, print_rows
from gaf.records import Agent
from gaf.types import Span
from gaf.store import store_target
from gaf.web import Role, Tokens, serve as run_server, tokens_file
from gaf.web.tokens import expiry

# boilerplate: each command declares its own options in its signature (typer reads them from there), so the
# --store/--json option lines and the open-call-emit shape of a body repeat from command to command.

token_app = group("API tokens for gaf serve: made for one agent and role, kept hashed beside the store, never in the graph.")
app.add_typer(token_app, name="token")


@command(app)
def serve(
    host: Annotated[Optional[str], typer.Option(help="The address to listen on; default $GAF_SERVE_HOST, else 127.0.0.1.")] = None,
    port: Annotated[Optional[int], number_option("--port", Span(1, 65535, whole=True, example="--port 8000"), help="The port; default $GAF_SERVE_PORT, else 8000.")] = None,
    no_auth: Annotated[bool, typer.Option("--no-auth", help="Serve without tokens: only on 127.0.0.1 or localhost.")] = False,
    store: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Serve the HTTP JSON API over the store until interrupted (docs/web.md).

    Every route needs a token (Authorization: Bearer …) made with gaf token
    create; the OpenAPI document is at /api/v1/openapi.json. On the embedded
    store the server holds the store for writing: other processes' writes are
    refused (exit 3) until it stops.

    [b]Examples[/b]

      gaf token create --agent registry-clerk --role writer
      gaf serve --port 8000
      gaf serve --no-auth          # this machine only
    """
    chosen = settings()
    def announce(where: dict[str, Any]) -> None:
        tokens = f"tokens in {where['tokens']}" if where["tokens"] else "[bold red]no auth[/]"
        emit(as_json, where, lambda: out.print(f"serving {where['url']} over {where['store']} ({tokens})", highlight=False))

    run_server(store, chosen, host=host or chosen.serve_host, port=port or chosen.serve_port, no_auth=no_auth, announce=announce)


@command(token_app, "create")
def token_create(
    agent: Annotated[str, typer.Option(help="Key or id of the agent the token acts as.")],
    role: Annotated[Role, typer.Option(help="reader (every read), writer (also claims, project, close) or authority (also act, decide, ratify, reopen).")],
    expires: Annotated[Optional[str], typer.Option(help="When it stops working: a duration (30d, 12h, 2w) or an ISO 8601 time; default never.")] = None,
    at: AtOpt = None,
    store: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Make a token for one agent and role; its secret is printed once and kept nowhere.

    The token file ($GAF_TOKENS, else tokens.json beside the embedded store)
    holds its sha256 only, with mode 0600.

    [b]Examples[/b]

      gaf token create --agent registry-clerk --role writer --expires 30d
    """
    made = or_now(at)
    with open_store(store, read_only=True) as s:
        agent_id = s.get(s.resolve_id(agent, ("agent",)), Agent).id
        issued = Tokens(tokens_file(settings(), s.location)).create(agent=agent_id, role=role, at=made, expires=expiry(expires, made))
    emit(as_json, issued.to_dict(), lambda: out.print(
        f"token {issued.token.id} ({role.value}) for {agent_id}\nsecret (shown once): {issued.secret}", highlight=False, soft_wrap=True))  # fmt: skip


@command(token_app, "list")
def token_list(at: AtOpt = None, store: StoreOpt = None, as_json: JsonOpt = False, fmt: FormatOpt = None) -> None:
    """List the tokens, their agents, roles, and whether each is active, expired or revoked (never a secret).

    [b]Examples[/b]

      gaf token list --json
    """
    now = or_now(at)
    tokens = Tokens(tokens_file(settings(), store_target(store, settings())))
    emit_rows(chosen_format(as_json, fmt), (t.to_dict(now) for t in tokens.all()),
              lambda rows: print_rows(rows, ("id", "agent", "role", "state", "expires_at")))  # fmt: skip


@command(token_app, "revoke")
def token_revoke(
    token_id: Annotated[str, typer.Argument(help="The token's id (gaf token list shows them).")],
    at: AtOpt = None,
    store: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Revoke a token: from now on every request with it is refused (401); it stays listed.

    [b]Examples[/b]

      gaf token revoke 3f2a9c01be44
    """
    token = Tokens(tokens_file(settings(), store_target(store, settings()))).revoke(token_id, at=or_now(at))
    emit(as_json, token.to_dict(), lambda: out.print(f"revoked {token.id} at {token.revoked_at}", highlight=False))
