"""Settings: everything gaf takes from the environment, read in one place, once.

The library reads no environment variable of its own accord: a caller passes
``Settings`` (or the values in it) to what needs them. ``Settings.from_env()`` is
the one reader; the CLI calls it when a command starts, and a service calls it at
start-up. A value that does not parse is refused here, naming the variable.

| variable | setting | default |
|---|---|---|
| GAF_STORE | ``store``: a Bolt URI or the embedded store's path | ``.gaf/store.lbug`` |
| NEO4J_USER (or NEO4J_USERNAME) | ``neo4j_user`` | ``neo4j`` |
| NEO4J_PASSWORD | ``neo4j_password`` | empty |
| NEO4J_DATABASE | ``neo4j_database`` | ``neo4j`` |
| GAF_NEO4J_RETRY_SECONDS | ``neo4j_retry_seconds``: how long the driver retries a transient failure | 30 |
| GAF_LOCK_WAIT | ``lock_wait``: seconds to wait for another process's lock on the embedded store, and for a reader to wait out a writer's checkpoint | 0 for the lock, 10 for the checkpoint |
| GAF_SIGNING_KEY | ``signing_key``: the Ed25519 seed closures are signed with (gaf.signing.private_key parses it) | unsigned |
| GAF_VERIFY_KEY | ``verify_key``: the public key ``gaf verify`` requires on every closure (gaf.signing.public_key) | none |
| GAF_MAX_RECORD_BYTES | ``max_record_bytes``: the largest record's canonical JSON (and JSONL line) | 1 MiB |
| GAF_MAX_INPUT_BYTES | ``max_input_bytes``: the largest input file read whole (policy, rules; ingest streams) | 256 MiB |
| GAF_CACHE_MB | ``cache_mb``: the embedded store's page cache (LadybugDB's buffer pool), in MiB, at least 64; it also bounds a query's working memory | LadybugDB's: 80% of the machine's memory, filled as pages are read |

The two size limits reach the records through ``gaf.records.limits(...)``, a context the
CLI enters for each command with its Settings; a library caller enters it the same way.

Secrets (the Neo4j password, the signing key) come from the environment, never from the
repository, and never appear in a Settings' repr.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

from gaf.errors import InvalidRecord, StoreUnavailable

#: The embedded store a new user gets without configuring anything.
DEFAULT_STORE = ".gaf/store.lbug"
#: Default bound, in seconds, on the Neo4j driver's retries of one transaction.
DEFAULT_RETRY_SECONDS = 30.0
#: Default largest canonical record, in bytes (GAF_MAX_RECORD_BYTES; gaf.records.limits in Python).
DEFAULT_MAX_RECORD_BYTES = 1 << 20
#: Default largest input file, in bytes (GAF_MAX_INPUT_BYTES; gaf.records.limits in Python).
DEFAULT_MAX_INPUT_BYTES = 256 << 20
#: The smallest page cache (GAF_CACHE_MB) an embedded store is opened with: below it, writing
#: the rent example's claims already runs out.
MIN_CACHE_MB = 64


@dataclass(frozen=True)
class Settings:
    """Where the store is and how to reach it; the defaults are what a new user gets."""

    store: str = DEFAULT_STORE
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
    #: None: LadybugDB's own default
    cache_mb: int | None = None

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        """The settings the environment (``os.environ`` unless given) names; unset means the default."""
        env = os.environ if env is None else env
        return cls(
            store=env.get("GAF_STORE") or DEFAULT_STORE,
            neo4j_user=env.get("NEO4J_USER") or env.get("NEO4J_USERNAME") or "neo4j",
            neo4j_password=env.get("NEO4J_PASSWORD", ""),
            neo4j_database=env.get("NEO4J_DATABASE") or "neo4j",
            neo4j_retry_seconds=_seconds(env, "GAF_NEO4J_RETRY_SECONDS", DEFAULT_RETRY_SECONDS),
            lock_wait=_optional_seconds(env, "GAF_LOCK_WAIT"),
            signing_key=env.get("GAF_SIGNING_KEY", ""),
            verify_key=env.get("GAF_VERIFY_KEY", ""),
            max_record_bytes=_bytes(env, "GAF_MAX_RECORD_BYTES", DEFAULT_MAX_RECORD_BYTES),
            max_input_bytes=_bytes(env, "GAF_MAX_INPUT_BYTES", DEFAULT_MAX_INPUT_BYTES),
            cache_mb=_megabytes(env, "GAF_CACHE_MB"),
        )

    def __repr__(self) -> str:  # never print the password
        return (f"Settings(store={self.store!r}, neo4j_user={self.neo4j_user!r}, neo4j_password=<{len(self.neo4j_password)} chars>, "
                f"neo4j_database={self.neo4j_database!r}, neo4j_retry_seconds={self.neo4j_retry_seconds}, "
                f"lock_wait={self.lock_wait}, signing_key=<{'set' if self.signing_key else 'unset'}>, "
                f"verify_key={self.verify_key!r}, max_record_bytes={self.max_record_bytes}, "
                f"max_input_bytes={self.max_input_bytes}, cache_mb={self.cache_mb})")  # fmt: skip


def _seconds(env: Mapping[str, str], variable: str, default: float) -> float:
    found = _optional_seconds(env, variable)
    return default if found is None else found


def _optional_seconds(env: Mapping[str, str], variable: str) -> float | None:
    """Seconds from the environment, or None when the variable is not set."""
    raw = env.get(variable)
    if raw is None or raw.strip() == "":
        return None
    try:
        value = float(raw)
    except ValueError:
        raise StoreUnavailable(f"{variable} must be a number of seconds, got {raw!r}", where=variable) from None
    if not value >= 0:
        raise StoreUnavailable(f"{variable} must not be negative, got {raw!r}", where=variable)
    return value


def _bytes(env: Mapping[str, str], variable: str, default: int) -> int:
    """A size limit in bytes: a positive integer, refused naming the variable otherwise."""
    raw = env.get(variable)
    if raw is None:
        return default
    try:
        limit = int(raw)
    except ValueError:
        raise InvalidRecord(f"{variable} must be an integer, got {raw!r}") from None
    if limit <= 0:
        raise InvalidRecord(f"{variable} must be positive, got {limit}")
    return limit


def _megabytes(env: Mapping[str, str], variable: str) -> int | None:
    """A size in MiB, or None when the variable is not set: a positive integer, refused naming the variable otherwise."""
    raw = env.get(variable)
    if raw is None or raw.strip() == "":
        return None
    try:
        size = int(raw)
    except ValueError:
        raise StoreUnavailable(f"{variable} must be a whole number of MiB, got {raw!r}", where=variable) from None
    if size < MIN_CACHE_MB:
        raise StoreUnavailable(f"{variable} must be at least {MIN_CACHE_MB} MiB, got {size}", where=variable)
    return size
