"""The production store: Neo4j over Bolt, with the official driver.

Auditors and Neo4j Browser read the same graph gaf writes. Writes are managed
transactions, reads run in READ access mode, uniqueness constraints on ``id`` per
label make concurrent writers of the same record collide instead of duplicating
it, and every value is a parameter.

Failures are bounded and typed. The driver retries transient failures (deadlocks,
a leader switch, a lost connection) with exponential back-off for at most
GAF_NEO4J_RETRY_SECONDS (default 30); a collision with a concurrent writer is
retried here, a few times, with a short jittered back-off. What still fails
surfaces as StoreUnavailable or StoreError, never as a driver exception: a write
that failed may be run again as it is, because every write is idempotent by
content id.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import neo4j
from neo4j.exceptions import (
    AuthError,
    ClientError,
    ConfigurationError,
    ConstraintError,
    DriverError,
    IncompleteCommit,
    Neo4jError,
    ServiceUnavailable,
)

from gaf.canonical import kind_of
from gaf.errors import StoreError, StoreUnavailable
from gaf.settings import DEFAULT_RETRY_SECONDS, masked
from gaf.store.base import GafStore, PlanStep, Tx, WriteReport
from gaf.store.schema import INDEXED, UNIQUE_BY_LABEL, graph_schema, label_of

T = TypeVar("T")

#: A concurrent writer may create the same new id between our check and our
#: CREATE; the constraint refuses it and a retry then sees the id as existing.
CONSTRAINT_RETRIES = 5



class _Rows(list[Any]):
    """A parameter list whose repr is its length. The driver spells out every statement's
    parameters for its debug log whether debug logging is on or not (``" ".join(map(repr, …))``
    in the Bolt 5 ``run``): about 1 ms per thousand rows, paid in the write's critical path."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"<{len(self)} rows>"


class _Neo4jTx:
    def __init__(self, tx: neo4j.ManagedTransaction):
        self._tx = tx

    def run(self, cypher: str, params: dict[str, Any] | None = None) -> list[dict[str, Any]]:
        quiet = {k: _Rows(v) if type(v) is list else v for k, v in (params or {}).items()}
        return [record.data() for record in self._tx.run(cypher, quiet)]


def _plan(plan: dict[str, Any] | None) -> PlanStep:
    """The driver's plan (a dict of operatorType, args, children) as gaf's PlanStep.

    No plan at all is a step named so, which nothing admits: a query is run only once
    its plan has been read."""
    if not isinstance(plan, dict):
        return PlanStep("NoPlanFromTheServer")
    args = plan.get("args") or {}
    return PlanStep(
        operator=str(plan.get("operatorType") or "UnnamedStep").partition("@")[0],
        details=str(args.get("Details") or args.get("details") or ""),
        runtime=str(args.get("runtime") or args.get("Runtime") or ""),
        children=tuple(_plan(child) for child in plan.get("children") or ()),
    )


def without_password(uri: str) -> str:
    """A Neo4j URI as people may be told it: a password written into it (``bolt://u:pw@host``) masked."""
    return masked(uri)


class Neo4jStore(GafStore):
    """A gaf store in a Neo4j database (server, cluster or Aura)."""

    dialect = "neo4j"

    def __init__(
        self,
        uri: str,
        *,
        user: str = "neo4j",
        password: str = "",
        database: str = "neo4j",
        read_only: bool = False,
        retry_seconds: float = DEFAULT_RETRY_SECONDS,
    ):
        """Connect to ``uri`` as ``user``; nothing is read from the environment (see gaf.settings).

        ``retry_seconds`` bounds the driver's retries of one transaction that failed
        transiently; a read-only store runs every session in READ access mode and
        refuses writes and ``init``."""
        self.location = without_password(uri)  # what messages say: never a password written into the URI
        self._schema_checked = False
        #: whether every constraint gaf declares is in place (``optimistic_creates``), once asked
        self._ids_constrained: bool | None = None
        self.database = database
        self.read_only = read_only
        self.retry_seconds = retry_seconds
        try:
            # Server notifications (hints such as "this relationship type does not exist yet")
            # would be logged to stderr for every query; gaf's queries are fixed, so they are off.
            self._driver = neo4j.GraphDatabase.driver(uri, auth=(user, password), max_transaction_retry_time=retry_seconds,
                                                      notifications_min_severity="OFF")
            self._driver.verify_connectivity()
        except (ConfigurationError, ValueError) as exc:
            raise StoreUnavailable(
                f"cannot use Neo4j URI {self.location!r}: {str(exc).replace(uri, self.location)}",
                hint="use neo4j://host:7687 (routing) or bolt://host:7687 (direct)",
            ) from None
        except AuthError:
            self._driver.close()
            raise StoreUnavailable(
                f"Neo4j at {self.location} refused the credentials of user {user!r}",
                hint="set NEO4J_USER and NEO4J_PASSWORD in the environment",
            ) from None
        except ClientError as exc:  # e.g. the server's rate limit after repeated wrong passwords
            self._driver.close()
            raise StoreUnavailable(f"Neo4j at {self.location} refused the connection: {exc.message}", hint="check NEO4J_USER and NEO4J_PASSWORD") from None
        except (ServiceUnavailable, OSError) as exc:
            self._driver.close()
            raise StoreUnavailable(
                f"cannot reach Neo4j at {self.location}: {str(exc).replace(uri, self.location)}",
                hint="start it (docker compose up -d, or python scripts/neo4j_local.py start) "
                "or point GAF_STORE at a running server",
            ) from None

    def close(self) -> None:
        self._driver.close()

    def init(self) -> None:
        """Create the uniqueness constraint on id per label and the query indexes."""
        if self.read_only:
            raise StoreError(f"the store at {self.location} is open read-only", hint="gaf init needs write access")
        schema = graph_schema()
        statements = []
        for label in sorted(schema.nodes):
            # One node per id per label: concurrent writers collide, never duplicate.
            statements.append(f"CREATE CONSTRAINT gaf_{label}_id IF NOT EXISTS FOR (n:{label}) REQUIRE n.id IS UNIQUE")
            if unique := UNIQUE_BY_LABEL.get(label):
                # One record per name@version: concurrent publishers cannot fork a version.
                fields = ", ".join(f"n.{f}" for f in unique)
                statements.append(f"CREATE CONSTRAINT gaf_{label}_{'_'.join(unique)} IF NOT EXISTS FOR (n:{label}) REQUIRE ({fields}) IS UNIQUE")
            for prop in INDEXED.get(label, ()):
                statements.append(f"CREATE INDEX gaf_{label}_{prop} IF NOT EXISTS FOR (n:{label}) ON (n.{prop})")
        with self._failures(), self._session() as session:
            for statement in statements:
                try:
                    session.run(statement).consume()
                except neo4j.exceptions.ClientError as exc:
                    if " IS UNIQUE" not in statement:
                        raise
                    raise StoreError(f"{self.location} holds two records with one name, so it cannot declare that names are unique: {exc.message}",
                                     where=statement, hint="gaf verify names them; one of each pair was written behind gaf's back")  # fmt: skip
            session.run("CALL db.awaitIndexes(300)").consume()
        self._schema_checked = True
        self._stamp_if_new()

    def missing_constraints(self) -> list[str]:
        expected = {f"gaf_{label}_id" for label in graph_schema().nodes}
        expected |= {f"gaf_{label}_{'_'.join(unique)}" for label, unique in UNIQUE_BY_LABEL.items()}
        with self._failures(), self._session(neo4j.READ_ACCESS) as session:
            found = {row["name"] for row in session.run("SHOW CONSTRAINTS YIELD name RETURN name")}
        return sorted(expected - found)

    def _session(self, access: str = neo4j.WRITE_ACCESS) -> neo4j.Session:
        if self.read_only:
            access = neo4j.READ_ACCESS
        return self._driver.session(database=self.database, default_access_mode=access)

    def _ensure_schema(self) -> None:
        """Declare the schema before the first write of this process if any of it is missing.

        Without the constraints two writers could create the same id twice, and without
        an index a question scans its label; one cheap query per process makes sure they
        are all there.
        """
        if self._schema_checked:
            return
        # Every constraint brings its index, so gaf's indexes are one per label plus INDEXED's.
        expected = len(graph_schema().nodes) + len(UNIQUE_BY_LABEL) + sum(len(props) for props in INDEXED.values())
        with self._failures(), self._session(neo4j.READ_ACCESS) as session:
            found = session.run(
                "SHOW INDEXES YIELD name WHERE name STARTS WITH 'gaf_' RETURN count(*) AS n"
            ).single(strict=True)["n"]
        if found < expected:
            self.init()
        self._schema_checked = True

    def _write(self, work: Callable[[Tx], WriteReport]) -> WriteReport:
        self._ensure_schema()
        with self._failures(), self._session() as session:
            for attempt in range(CONSTRAINT_RETRIES):
                try:
                    return session.execute_write(lambda tx: work(_Neo4jTx(tx)))
                except ConstraintError as exc:
                    if attempt == CONSTRAINT_RETRIES - 1:
                        raise StoreError(f"concurrent writers kept colliding on {self.location}: {exc.message}") from None
                    # The other writer has committed; back off a little so the retry sees its ids.
                    time.sleep(random.uniform(0.01, 0.05) * 2**attempt)
        raise AssertionError("unreachable")

    def optimistic_creates(self) -> bool:
        # Only with every id constraint in place: without one, a second node would be created.
        self._ensure_schema()
        if self._ids_constrained is None:
            self._ids_constrained = not self.missing_constraints()
        return self._ids_constrained

    def _lock(self, tx: Tx, record_id: str) -> None:
        # Setting a property takes the node's write lock until the transaction ends. The
        # property is the store's own, never in the record's body or its id.
        tx.run(f"MATCH (n:{label_of(kind_of(record_id))} {{id: $id}}) SET n.gaf_locked = true", {"id": record_id})

    def _take_log_turn(self, tx: Tx) -> None:
        # Every appender locks the log's first link, so each reads the head the one before it
        # wrote. Taken last in the transaction (after its own writes), so held only to commit.
        tx.run("MATCH (l:LogEntry {seq: 0}) SET l.gaf_locked = true")

    def _read(self, work: Callable[[Tx], T]) -> T:
        with self._failures(), self._session(neo4j.READ_ACCESS) as session:
            return session.execute_read(lambda tx: work(_Neo4jTx(tx)))

    def read(
        self, cypher: str, params: dict[str, Any] | None = None, *, vet: Callable[[PlanStep], None] | None = None
    ) -> list[dict[str, Any]]:
        """The query's rows; with ``vet``, its plan first (EXPLAIN, in the same READ transaction)."""

        def work(tx: neo4j.ManagedTransaction) -> list[dict[str, Any]]:
            if vet is not None:
                vet(_plan(tx.run("EXPLAIN " + cypher, params or {}).consume().plan))
            return [record.data() for record in tx.run(cypher, params or {})]

        with self._failures(), self._session(neo4j.READ_ACCESS) as session:
            return session.execute_read(work)

    @contextmanager
    def _failures(self) -> Iterator[None]:
        """Turn what the driver raises once its retries are spent into gaf's typed errors."""
        try:
            yield
        except IncompleteCommit:
            raise StoreUnavailable(
                f"the connection to Neo4j at {self.location} was lost while a write was committing; "
                "it may or may not have been written",
                hint="run the same command again: writes are idempotent by content id",
            ) from None
        except DriverError as exc:
            raise StoreUnavailable(
                f"lost Neo4j at {self.location} and did not get it back within {self.retry_seconds:g} s: {exc}",
                hint="nothing of the unfinished transaction was written; when the server is back, run the same "
                "command again (raise GAF_NEO4J_RETRY_SECONDS to wait longer)",
            ) from None
        except Neo4jError as exc:
            if isinstance(exc, ClientError) and exc.code and ".Statement." in exc.code:
                raise  # a query gaf's callers sent (e.g. an auditor's): the query runner words it
            raise StoreError(f"Neo4j at {self.location} refused the transaction: {exc.message}", where=exc.code) from None
