"""API tokens: who may call ``gaf serve``, as which agent, in which role, until when.

A token is a random secret handed to its holder once; only its sha256 is kept, in a small
JSON file beside the store (``tokens.json`` next to ``.gaf/store.lbug``, or $GAF_TOKENS),
never in the graph: an auditor's Cypher reads the graph, and must not read who may write
to it. The file is written whole to a temporary file and renamed (never half written),
with mode 0600. Each token belongs to one gaf agent, and records written through it carry
that agent and no other.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
import tempfile
from dataclasses import asdict, dataclass, replace
from datetime import datetime, timedelta
from enum import Enum
from pathlib import Path
from typing import Any

from gaf.errors import AccessDenied, InvalidValue, NotAuthenticated, StoreUnavailable, UnknownReference
from gaf.settings import NEO4J_SCHEMES, Settings
from gaf.types import to_instant

#: What a secret starts with, so a leaked one is recognised for what it is.
SECRET_PREFIX = "gaf_"
#: The file's name beside the embedded store.
TOKENS_FILE = "tokens.json"


class Role(str, Enum):
    """What a token may do; each role may do what the roles before it may.

    reader: every read (records, verdicts, history, impact, what-if, queries, exports);
    writer: also submit claims, project and close; authority: also act, decide, ratify, reopen."""

    reader = "reader"
    writer = "writer"
    authority = "authority"

    def allows(self, needed: Role) -> bool:
        order = list(Role)
        return order.index(self) >= order.index(needed)


# boilerplate: a dataclass of the fields a token keeps, one per line with a type, as the records in gaf/records declare
# theirs; the shape repeats by design.
@dataclass(frozen=True)
class Token:
    """One token as kept: never its secret, only the secret's sha256."""

    id: str
    agent: str
    role: Role
    sha256: str
    created_at: str
    expires_at: str | None = None
    revoked_at: str | None = None

    def state(self, now: datetime) -> str:
        """active, expired or revoked, at ``now``."""
        if self.revoked_at is not None:
            return "revoked"
        if self.expires_at is not None and to_instant(self.expires_at) <= now:
            return "expired"
        return "active"

    def to_dict(self, now: datetime | None = None) -> dict[str, Any]:
        out = {k: v for k, v in asdict(self).items() if k != "sha256"}
        out["role"] = self.role.value
        if now is not None:
            out["state"] = self.state(now)
        return out


@dataclass(frozen=True)
class Issued:
    """A token just made, with its secret: shown once, kept nowhere."""

    token: Token
    secret: str

    def to_dict(self) -> dict[str, Any]:
        return {**self.token.to_dict(), "secret": self.secret}


def digest(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


_DURATION = re.compile(r"(\d+)([smhdw])")
_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks"}


def expiry(text: str | None, at: datetime) -> datetime | None:
    """When a token made at ``at`` expires: a duration (``30d``, ``12h``, ``2w``) or an
    instant (ISO 8601); None: never."""
    if text is None:
        return None
    if m := _DURATION.fullmatch(text.strip()):
        return at + timedelta(**{_UNITS[m.group(2)]: int(m.group(1))})
    try:
        when = to_instant(text)
    except (InvalidValue, ValueError):
        raise InvalidValue(f"--expires {text!r} is neither a duration nor a time", where="--expires",
                           hint="a duration (30d, 12h, 2w) or an ISO 8601 time") from None  # fmt: skip
    if when <= at:
        raise InvalidValue(f"--expires {text} is not after the token is made ({at.isoformat()})", where="--expires")
    return when


def tokens_file(settings: Settings, store_location: str) -> Path:
    """Where the tokens of the store at ``store_location`` are kept: $GAF_TOKENS, else
    ``tokens.json`` beside the embedded store. A Neo4j store has no directory of gaf's, so
    there GAF_TOKENS must say."""
    if settings.tokens:
        return Path(settings.tokens)
    if store_location.startswith(NEO4J_SCHEMES):
        raise StoreUnavailable(f"the store {store_location} is a server: where its API tokens are kept is not known",
                               where="GAF_TOKENS", hint="set GAF_TOKENS to a file path, e.g. ~/.config/gaf/tokens.json")  # fmt: skip
    return Path(store_location).resolve().parent / TOKENS_FILE


class Tokens:
    """The token file: made, listed, revoked, and asked whether a secret opens the API."""

    def __init__(self, path: str | Path):
        self.path = Path(path)

    def all(self) -> list[Token]:
        """Every token kept, by id; an absent file holds none."""
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return []
        except OSError as exc:
            raise StoreUnavailable(f"cannot read the token file {self.path}: {exc.strerror}") from None
        try:
            rows = json.loads(text)["tokens"]
            return sorted((Token(**{**row, "role": Role(row["role"])}) for row in rows), key=lambda t: t.id)
        except (ValueError, KeyError, TypeError) as exc:
            raise StoreUnavailable(f"the token file {self.path} does not read: {exc}",
                                   hint="it is gaf's own file; restore it, or move it away and make new tokens") from None  # fmt: skip

    def create(self, *, agent: str, role: Role, at: datetime, expires: datetime | None = None) -> Issued:
        """A new token for ``agent`` (an agent's id) in ``role``; its secret is returned, its hash kept."""
        secret = SECRET_PREFIX + secrets.token_urlsafe(32)
        token = Token(id=secrets.token_hex(6), agent=agent, role=role, sha256=digest(secret), created_at=at.isoformat(),
                      expires_at=expires.isoformat() if expires else None)  # fmt: skip
        self._save([*self.all(), token])
        return Issued(token, secret)

    def revoke(self, token_id: str, *, at: datetime) -> Token:
        """Revoke a token from ``at`` on (kept, so the list says who had it and when it ended)."""
        kept = self.all()
        found = [t for t in kept if t.id == token_id]
        if not found:
            raise UnknownReference(f"no token {token_id!r} in {self.path}", where="ID", hint="gaf token list shows them")
        if found[0].revoked_at is not None:
            return found[0]
        revoked = replace(found[0], revoked_at=at.isoformat())
        self._save([revoked if t.id == token_id else t for t in kept])
        return revoked

    def check(self, secret: str, now: datetime) -> Token:
        """The active token a presented secret is, or ``NotAuthenticated`` saying why not."""
        presented = digest(secret)
        found = [t for t in self.all() if secrets.compare_digest(t.sha256, presented)]
        if not found:
            raise NotAuthenticated("the token is not known", where="Authorization", hint="gaf token create makes one")
        state = found[0].state(now)
        if state != "active":
            raise NotAuthenticated(f"the token {found[0].id} is {state}", where="Authorization",
                                   hint="ask for a new token (gaf token create)")  # fmt: skip
        return found[0]

    def _save(self, tokens: list[Token]) -> None:
        """The whole file, to a temporary file beside it (mode 0600) renamed over it."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        body = json.dumps({"tokens": [{**asdict(t), "role": t.role.value} for t in sorted(tokens, key=lambda t: t.id)]},
                          indent=2) + "\n"  # fmt: skip
        handle, temporary = tempfile.mkstemp(dir=self.path.parent, prefix=".tokens-", suffix=".json")
        try:
            os.fchmod(handle, 0o600)
            with os.fdopen(handle, "w", encoding="utf-8") as f:
                f.write(body)
            os.replace(temporary, self.path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise


def require(token: Token | None, needed: Role) -> None:
    """Refuse a request whose token's role is below ``needed`` (no token: the API runs without auth)."""
    if token is not None and not token.role.allows(needed):
        raise AccessDenied(f"this needs the {needed.value} role; the token {token.id} is {token.role.value}",
                           where="Authorization", hint=f"use a token made with --role {needed.value}")  # fmt: skip
