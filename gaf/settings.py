"""Settings: everything gaf takes from the environment, read in one place, once.

The library reads no environment variable of its own accord: a caller passes
``Settings`` (or the values in it) to what needs them. ``Settings.from_env()`` is
the one reader; the CLI calls it when a command starts, and a service calls it at
start-up. A value that does not parse is refused here, naming the variable and the
form it takes (``InvalidValue``, exit code 2: ``GAF_LOCK_WAIT=abc``, ``nan``, ``inf``
or a number out of its range, each ``SPANS`` says); a variable set blank is unset.

| variable | setting | default |
|---|---|---|
| GAF_STORE | ``store``: a Bolt URI or the embedded store's path; a value that looks like a mistyped URI is refused | None: the ``.gaf/store.lbug`` found in the working directory or a parent (``gaf.store.find_store``) |
| HOME | ``home``: where that search stops (it looks no higher) | the filesystem root |
| NEO4J_USER (or NEO4J_USERNAME) | ``neo4j_user`` | ``neo4j`` |
| NEO4J_PASSWORD | ``neo4j_password`` | empty |
| NEO4J_DATABASE | ``neo4j_database`` | ``neo4j`` |
| GAF_NEO4J_RETRY_SECONDS | ``neo4j_retry_seconds``: how long the driver retries a transient failure | 30 |
| GAF_LOCK_WAIT | ``lock_wait``: seconds to wait for another process's lock on the embedded store, and for a reader to wait out a writer's checkpoint | 0 for the lock, 10 for the checkpoint |
| GAF_SIGNING_KEY | ``signing_key``: the Ed25519 seed closures are signed with (gaf.signing.private_key parses it) | unsigned |
| GAF_VERIFY_KEY | ``verify_key``: the public key ``gaf verify`` requires on every closure (gaf.signing.public_key) | none |
| GAF_MAX_RECORD_BYTES | ``max_record_bytes``: the largest record's canonical JSON (and JSONL line) | 1 MiB |
| GAF_MAX_INPUT_BYTES | ``max_input_bytes``: the largest input file read whole (policy, rules), and stdin ``gaf ingest -`` copies (a file it ingests is streamed) | 256 MiB |
| COLUMNS | ``columns``: the width the command line's tables and messages wrap at when its output is not a terminal (piped, they are not wrapped) | the terminal's width; none when piped |
| GAF_TOKENS | ``tokens``: the file ``gaf serve``'s API tokens are kept in (hashed, outside the graph) | ``tokens.json`` beside the embedded store; required for Neo4j |
| GAF_SERVE_HOST | ``serve_host``: the address ``gaf serve`` listens on | 127.0.0.1 |
| GAF_SERVE_PORT | ``serve_port``: the port it listens on | 8000 |
| GAF_API_ROWS | ``api_rows``: the most rows an API query, and records an API export, answers with (the answer says when it was cut) | 10000 |
| GAF_API_SECONDS | ``api_seconds``: the time an API what-if or impact walk may take (the answer says when it stopped) | 30 |
| GAF_CACHE_MB | ``cache_mb``: the embedded store's page cache (LadybugDB's buffer pool), in MiB, at least 64; it also bounds a query's working memory | LadybugDB's: 80% of the machine's memory, filled as pages are read |

The two size limits reach the records through ``gaf.records.limits(...)``, a context the
CLI enters for each command with its Settings; a library caller enters it the same way.

Secrets (the Neo4j password, the signing key) come from the environment, never from the
repository, and never appear in a Settings' repr.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass

from gaf.errors import StoreUnavailable
from gaf.types import MAX_SECONDS, Span

#: The embedded store ``gaf init`` makes in the working directory, and the one a library caller's
#: ``Settings()`` names; from the environment, an unset GAF_STORE means "find it" instead.
DEFAULT_STORE = ".gaf/store.lbug"
#: The URI schemes gaf opens Neo4j for; any other value names the embedded store's path.
NEO4J_SCHEMES = ("neo4j://", "neo4j+s://", "neo4j+ssc://", "bolt://", "bolt+s://", "bolt+ssc://")
#: A value that starts as a URI does: a word of two letters or more, then ':' (and any slashes) or
#: '//' — ``neo4j//localhost:7687``, ``bolt:/x``, ``localhost:7687``. A one-letter word is a drive.
_URI_LIKE = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.\-]+)(?P<sep>:/*|//+)(?P<rest>.*)", re.DOTALL)
#: Default bound, in seconds, on the Neo4j driver's retries of one transaction.
DEFAULT_RETRY_SECONDS = 30.0
#: Default largest canonical record, in bytes (GAF_MAX_RECORD_BYTES; gaf.records.limits in Python).
DEFAULT_MAX_RECORD_BYTES = 1 << 20
#: Default largest input file, in bytes (GAF_MAX_INPUT_BYTES; gaf.records.limits in Python).
DEFAULT_MAX_INPUT_BYTES = 256 << 20
#: How far (seconds) an OpenLineage eventTime may lie after the ingest's time (GAF_LINEAGE_SKEW).
DEFAULT_LINEAGE_SKEW = 300.0
#: Where ``gaf serve`` listens unless told: this machine only.
DEFAULT_SERVE_HOST = "127.0.0.1"
DEFAULT_SERVE_PORT = 8000
#: The most rows an API query answers with, and records an API export holds (GAF_API_ROWS).
DEFAULT_API_ROWS = 10_000
#: How long an API what-if or impact walk may run, in seconds (GAF_API_SECONDS).
DEFAULT_API_SECONDS = 30.0
#: The smallest page cache (GAF_CACHE_MB) an embedded store is opened with: below it, writing
#: the rent example's claims already runs out.
MIN_CACHE_MB = 64


@dataclass(frozen=True)
class Settings:
    """Where the store is and how to reach it. ``Settings()`` names ``.gaf/store.lbug`` in the
    working directory, for a library caller; ``from_env()`` without GAF_STORE names none, so
    the store is found as the command line finds it."""

    #: None: not named, so found (``gaf.store.find_store``: ``.gaf/store.lbug`` here or in a parent)
    store: str | None = DEFAULT_STORE
    #: where that search stops; None: at the filesystem root
    home: str | None = None
    neo4j_user: str = "neo4j"
    neo4j_password: str = ""
    neo4j_database: str = "neo4j"
    neo4j_retry_seconds: float = DEFAULT_RETRY_SECONDS
    #: None: not set (no wait for another writer's lock; 10 s for a reader to wait out a checkpoint)
    lock_wait: float | None = None
    signing_key: str = ""
    verify_key: str = ""
    max_record_bytes: int = DEFAULT_MAX_RECORD_BYTES
    max_input_bytes: int = DEFAULT_MAX_INPUT_BYTES
    lineage_skew: float = DEFAULT_LINEAGE_SKEW
    #: None: LadybugDB's own default
    cache_mb: int | None = None
    #: None: the terminal's width, or no wrapping when the output is piped (the CLI's consoles)
    columns: int | None = None
    #: None: ``tokens.json`` beside the embedded store (``gaf.web.tokens.tokens_file``)
    tokens: str | None = None
    serve_host: str = DEFAULT_SERVE_HOST
    serve_port: int = DEFAULT_SERVE_PORT
    api_rows: int = DEFAULT_API_ROWS
    api_seconds: float = DEFAULT_API_SECONDS

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        """The settings the environment (``os.environ`` unless given) names; unset means the default."""
        env = os.environ if env is None else env
        return cls(
            store=store_name(env["GAF_STORE"], "GAF_STORE") if env.get("GAF_STORE") else None,
            home=env.get("HOME") or None,
            neo4j_user=env.get("NEO4J_USER") or env.get("NEO4J_USERNAME") or "neo4j",
            neo4j_password=env.get("NEO4J_PASSWORD", ""),
            neo4j_database=env.get("NEO4J_DATABASE") or "neo4j",
            neo4j_retry_seconds=_seconds(env, "GAF_NEO4J_RETRY_SECONDS", DEFAULT_RETRY_SECONDS),
            lock_wait=_number(env, "GAF_LOCK_WAIT"),
            signing_key=env.get("GAF_SIGNING_KEY", ""),
            verify_key=env.get("GAF_VERIFY_KEY", ""),
            max_record_bytes=_whole(env, "GAF_MAX_RECORD_BYTES", DEFAULT_MAX_RECORD_BYTES),
            max_input_bytes=_whole(env, "GAF_MAX_INPUT_BYTES", DEFAULT_MAX_INPUT_BYTES),
            lineage_skew=_seconds(env, "GAF_LINEAGE_SKEW", DEFAULT_LINEAGE_SKEW),
            cache_mb=_optional_whole(env, "GAF_CACHE_MB"),
            columns=int(env["COLUMNS"]) if env.get("COLUMNS", "").isdigit() else None,  # a shell's, not gaf's: no refusal
            tokens=env.get("GAF_TOKENS") or None,
            serve_host=env.get("GAF_SERVE_HOST") or DEFAULT_SERVE_HOST,
            serve_port=_whole(env, "GAF_SERVE_PORT", DEFAULT_SERVE_PORT),
            api_rows=_whole(env, "GAF_API_ROWS", DEFAULT_API_ROWS),
            api_seconds=_seconds(env, "GAF_API_SECONDS", DEFAULT_API_SECONDS),
        )

    def __repr__(self) -> str:  # never print the password
        return (f"Settings(store={self.store!r}, home={self.home!r}, neo4j_user={self.neo4j_user!r}, neo4j_password=<{len(self.neo4j_password)} chars>, "
                f"neo4j_database={self.neo4j_database!r}, neo4j_retry_seconds={self.neo4j_retry_seconds}, "
                f"lock_wait={self.lock_wait}, signing_key=<{'set' if self.signing_key else 'unset'}>, "
                f"verify_key={self.verify_key!r}, max_record_bytes={self.max_record_bytes}, "
                f"max_input_bytes={self.max_input_bytes}, cache_mb={self.cache_mb}, columns={self.columns}, tokens={self.tokens!r}, "
                f"serve_host={self.serve_host!r}, serve_port={self.serve_port}, api_rows={self.api_rows}, api_seconds={self.api_seconds})")  # fmt: skip


#: A password in a store name, URI or not: what follows the user and a colon, up to the '@' before the host.
_PASSWORD = re.compile(r"(?P<user>(?:^|[:/])[^:/@\s]*):(?P<password>[^/@\s]*)@")


def masked(value: str) -> str:
    """A store name as people may be told it: a password written into it (``bolt://ada:pw@host``,
    mistyped or not) masked as ``***``, so no message, log or --json output carries it."""
    return _PASSWORD.sub(lambda m: f"{m['user']}:***@", value)


def store_name(value: str, where: str) -> str:
    """A store named by ``where`` (GAF_STORE, --store): a Neo4j URI, or a path — never a URI
    mistyped into a path, which would create an embedded store at ./neo4j/localhost:7687 and
    write there without a word. A value that starts as a URI does (a word, then ':' or '//')
    and is not one of NEO4J_SCHEMES is refused with the URI it probably meant; a path that
    really starts so is written with ``./`` in front."""
    if value.startswith(NEO4J_SCHEMES):
        return value
    if _URI_LIKE.match(value) is None and "://" not in value:
        return value
    value = masked(value)  # everything below tells it
    looks = _URI_LIKE.match(value)
    what = f"unsupported store URI {value!r}" if looks is None or looks["sep"] == "://" else f"{value!r} looks like a mistyped URI, not a path"
    raise StoreUnavailable(what, where=where, hint=_meant(value, looks))


def _meant(value: str, looks: re.Match[str] | None) -> str:
    """What a store name that is not one probably meant, as the fix to print."""
    schemes = "a Neo4j URI starts neo4j://, neo4j+s://, bolt:// or bolt+s://"
    as_path = "" if "://" in value else f" If it is a path, write ./{value}"
    if looks is None:
        return f"{schemes}, and a path holds no '://'"
    scheme, rest = looks["scheme"].lower(), looks["rest"].lstrip("/:")
    if f"{scheme}://" in NEO4J_SCHEMES:
        return f"did you mean {scheme}://{rest or 'localhost:7687'}?{as_path}"
    if scheme in ("http", "https"):  # Neo4j Browser's address: Bolt listens on another port
        return f"did you mean neo4j://{rest.split('/')[0].rpartition('@')[2].split(':')[0] or 'localhost'}:7687?"
    if looks["sep"] == ":" and rest.isdigit():  # host:port
        return f"did you mean neo4j://{looks['scheme']}:{rest}?{as_path}"
    return f"{schemes}.{as_path}"


#: What each number the environment gives may be (``gaf.types.Span``): a value outside is refused
#: naming the variable and this form, the same way a command-line option's is.
SPANS: dict[str, Span] = {
    "GAF_NEO4J_RETRY_SECONDS": Span(0, MAX_SECONDS, unit="seconds", example="GAF_NEO4J_RETRY_SECONDS=30"),
    "GAF_LOCK_WAIT": Span(0, MAX_SECONDS, unit="seconds", example="GAF_LOCK_WAIT=30"),
    "GAF_MAX_RECORD_BYTES": Span(1, whole=True, unit="bytes", example="GAF_MAX_RECORD_BYTES=1048576"),
    "GAF_MAX_INPUT_BYTES": Span(1, whole=True, unit="bytes", example="GAF_MAX_INPUT_BYTES=268435456"),
    "GAF_CACHE_MB": Span(MIN_CACHE_MB, whole=True, unit="MiB", example="GAF_CACHE_MB=512"),
    "GAF_SERVE_PORT": Span(1, 65535, whole=True, example="GAF_SERVE_PORT=8000"),
    "GAF_API_ROWS": Span(1, whole=True, example="GAF_API_ROWS=10000"),
    "GAF_API_SECONDS": Span(0, MAX_SECONDS, unit="seconds", example="GAF_API_SECONDS=30"),
    "GAF_LINEAGE_SKEW": Span(0, MAX_SECONDS, unit="seconds", example="GAF_LINEAGE_SKEW=300"),
}


def _number(env: Mapping[str, str], variable: str) -> int | float | None:
    """A number from the environment, or None when the variable is unset or blank (as a shell's
    ``export VAR=`` leaves it); refused with InvalidValue naming the variable and its form otherwise."""
    raw = env.get(variable)
    if raw is None or raw.strip() == "":
        return None
    return SPANS[variable].read(raw, variable)


def _seconds(env: Mapping[str, str], variable: str, default: float) -> float:
    found = _number(env, variable)
    return default if found is None else float(found)


def _whole(env: Mapping[str, str], variable: str, default: int) -> int:
    found = _optional_whole(env, variable)
    return default if found is None else found


def _optional_whole(env: Mapping[str, str], variable: str) -> int | None:
    found = _number(env, variable)
    return None if found is None else int(found)
