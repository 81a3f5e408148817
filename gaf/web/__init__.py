"""The web layer: ``gaf serve``'s HTTP JSON API over the library, and its tokens.

Beside the command line on the top floor: it calls library functions only. ``app`` holds
the door every request passes (tokens, limits, errors, headers), ``api`` the routes,
``openapi`` their document, ``tokens`` who may call, ``server`` the uvicorn run.
"""

from gaf.web.app import API, Endpoint, create_app, status_of
from gaf.web.server import check_no_auth, serve
from gaf.web.tokens import Issued, Role, Token, Tokens, tokens_file

__all__ = ["API", "Endpoint", "Issued", "Role", "Token", "Tokens", "check_no_auth", "create_app", "serve", "status_of", "tokens_file"]
