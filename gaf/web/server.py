"""``gaf serve``: the API run by uvicorn over one store, held open for the server's life."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gaf.errors import InvalidValue
from gaf.settings import Settings
from gaf.store import open_store
from gaf.web.app import create_app
from gaf.web.tokens import Tokens, tokens_file

#: The hosts ``--no-auth`` is allowed on: this machine only.
LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")


def check_no_auth(host: str, no_auth: bool) -> None:
    """Refuse to serve without tokens anywhere but this machine."""
    if no_auth and host not in LOCAL_HOSTS:
        raise InvalidValue(f"--no-auth serves every route to anyone who can reach {host}", where="--no-auth",
                           hint="serve on 127.0.0.1 (the default), or leave --no-auth out and use tokens")  # fmt: skip


def serve(target: str | None, settings: Settings, *, host: str, port: int, no_auth: bool = False,
          announce: Callable[[dict[str, Any]], None] | None = None) -> None:  # fmt: skip
    """Open the store for writing (on the embedded store, no other process writes it while this
    runs) and serve the API on ``host:port`` until interrupted; ``announce`` is told where
    (the URL, the store, the token file) once the store is open."""
    import uvicorn

    check_no_auth(host, no_auth)
    with open_store(target, settings=settings) as store:
        tokens = None if no_auth else Tokens(tokens_file(settings, store.location))
        app = create_app(store, settings, tokens)
        if announce is not None:
            announce({"url": f"http://{host}:{port}/api/v1/", "store": store.location, "tokens": str(tokens.path) if tokens else None})
        uvicorn.run(app, host=host, port=port, log_level="info", server_header=False)
