"""Shared fixtures: a real Neo4j server and a fresh embedded store per test.

Neo4j comes from, in order: $NEO4J_URI (with $NEO4J_USER / $NEO4J_PASSWORD), a
testcontainers Neo4j when a Docker engine answers, or the local server that
scripts/neo4j_local.py fetches from Maven Central and starts. It is always the
real server, and never skipped: if none of the three works, those tests fail, loudly.
A session stops the local server it started, and refuses one it did not start unless
NEO4J_URI names it; it never empties a database holding records it did not write.

Hypothesis runs under the "ci" profile: derandomized, a fixed budget, no deadline, so
the suite gives the same answer on every run. GAF_HYPOTHESIS_PROFILE=random (or
--hypothesis-profile=random) hunts with fresh examples and ten times the budget.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

import neo4j
import pytest
from hypothesis import HealthCheck, settings

from gaf.store import GafStore
from gaf.store.ladybug import LadybugStore
from gaf.store.neo4j import Neo4jStore

ROOT = Path(__file__).resolve().parent.parent
RENT = ROOT / "examples" / "rent"
#: The transaction time tests ingest at: passed in, never read from a clock.
NOW = datetime(2026, 11, 30, 12, 0, tzinfo=timezone.utc)

#: A node that marks a database as a gaf test database, safe to wipe.
MARKER_LABEL = "GafTestDatabase"
#: The exit code of a session that refuses the Neo4j it was given.
REFUSED = pytest.ExitCode.USAGE_ERROR

#: Examples per property test under "ci", and under "random" (hunting).
CI_BUDGET, RANDOM_BUDGET = 100, 1000

# A suite that passes on one run and fails on the next tells nobody anything, so the
# default profile draws the same examples every run (derandomize), and nothing depends
# on the clock (no deadline, no too_slow health check) or on an earlier run (no example
# database; print_blob prints the @reproduce_failure line for a failure instead).
settings.register_profile(
    "ci",
    derandomize=True,
    max_examples=CI_BUDGET,
    deadline=None,
    print_blob=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
# Hunting for new counterexamples: "ci" with fresh random examples, ten times as many. A
# failure found here becomes an @example on its test, so that "ci" tries it on every run.
settings.register_profile("random", settings.get_profile("ci"), derandomize=False, max_examples=RANDOM_BUDGET)
# hypothesis' own --hypothesis-profile, when given, is loaded after this and wins.
settings.load_profile(os.environ.get("GAF_HYPOTHESIS_PROFILE", "ci"))


#: The fixtures that reach a Neo4j server: a test using any of them is marked ``neo4j``.
NEO4J_FIXTURES = frozenset({"neo4j_server", "neo4j_driver", "neo4j_store"})


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Hold every property test to the loaded profile's randomness, and scale its own budget.

    A test may name its own budget (a slow one runs 25, a cheap one 400); under "random"
    that grows by the profile's factor too, so hunting really runs more. A test
    may not choose its own derandomize: then "ci" would not be what every run does.
    hypothesis has no public per-test scaling, so this rewrites the settings that
    @settings leaves on the test function (the attribute hypothesis reads when it runs).
    """
    profile = settings.default
    scale = profile.max_examples / CI_BUDGET
    seen: set[int] = set()
    for item in items:
        if NEO4J_FIXTURES & set(getattr(item, "fixturenames", ())):
            # `-k "not neo4j"` leaves out every test that reaches a server, not only the
            # store-parametrised ones whose id says [neo4j].
            item.add_marker(pytest.mark.neo4j)
    for item in items:
        test = getattr(item, "function", None)
        own = getattr(test, "_hypothesis_internal_use_settings", None)
        if own is None or id(test) in seen:
            continue
        seen.add(id(test))
        if own.derandomize != profile.derandomize:
            raise pytest.UsageError(
                f"{item.nodeid} sets derandomize={own.derandomize}; the profile "
                f"{settings.get_current_profile_name()!r} decides that for every test — remove it"
            )
        if scale != 1 and own.max_examples != profile.max_examples:
            test._hypothesis_internal_use_settings = settings(own, max_examples=round(own.max_examples * scale))


@dataclass(frozen=True)
class Neo4jServer:
    uri: str
    user: str
    password: str


def docker_answers() -> bool:
    if shutil.which("docker") is None:
        return False
    try:
        return subprocess.run(["docker", "info"], capture_output=True, timeout=10).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def neo4j_local():
    """scripts/neo4j_local.py as a module (it is a script, not part of the package)."""
    spec = importlib.util.spec_from_file_location("neo4j_local", ROOT / "scripts" / "neo4j_local.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@contextmanager
def _local_server() -> Iterator[Neo4jServer]:
    """Start this checkout's Neo4j for the session, and stop that one (by its pid) at the end.

    A server already running was started by someone else, who may still be using it, so
    the session neither adopts it silently nor stops it: it says how to do either.
    """
    local = neo4j_local()
    running = local.running_pid()
    if running:
        pytest.exit(
            f"a Neo4j server from scripts/neo4j_local.py is already running (pid {running}, home "
            f"{local.HOME}, bolt://127.0.0.1:{local.current_port()}) and NEO4J_URI does not "
            f"name it; the suite uses a server it did not start only when NEO4J_URI names it — to use "
            f'it: eval "$(python scripts/neo4j_local.py env)"; to stop it: python scripts/neo4j_local.py stop',
            returncode=REFUSED,
        )
    info = local.start()
    try:
        yield Neo4jServer(info["uri"], info["user"], info["password"])
    finally:
        local.stop(info["pid"])


@contextmanager
def _any_server() -> Iterator[Neo4jServer]:
    """The server NEO4J_URI names, else a container, else this checkout's own."""
    if os.environ.get("NEO4J_URI"):
        yield Neo4jServer(
            os.environ["NEO4J_URI"],
            os.environ.get("NEO4J_USER") or os.environ.get("NEO4J_USERNAME") or "neo4j",
            os.environ.get("NEO4J_PASSWORD", ""),
        )
    elif docker_answers():
        from testcontainers.neo4j import Neo4jContainer

        with Neo4jContainer("neo4j:5.26-community") as container:
            yield Neo4jServer(container.get_connection_url(), "neo4j", container.password)
    else:
        with _local_server() as server:
            yield server


def _connect(server: Neo4jServer) -> neo4j.Driver:
    driver = neo4j.GraphDatabase.driver(server.uri, auth=(server.user, server.password))
    try:
        driver.verify_connectivity()
    except BaseException:
        driver.close()
        raise
    return driver


def refuse_foreign_database(server: Neo4jServer, driver: neo4j.Driver) -> None:
    """End the session if the database holds nodes and no test marker: records it did not write.

    Tests empty the database before each test; a database without the marker may be
    someone's real store, and records are never to be deleted, so nothing is emptied.
    """
    with driver.session() as session:
        marked = session.run(f"MATCH (m:{MARKER_LABEL}) RETURN count(m) AS n").single()["n"]
        foreign = session.run(f"MATCH (n) WHERE NOT n:{MARKER_LABEL} RETURN count(n) AS n").single()["n"]
    if foreign and not marked:
        pytest.exit(
            f"the Neo4j database at {server.uri} holds {foreign} nodes that this suite did not "
            f"write; refusing to empty it — point NEO4J_URI at an empty database",
            returncode=REFUSED,
        )


@pytest.fixture(scope="session")
def neo4j_server() -> Iterator[Neo4jServer]:
    """The session's Neo4j, checked once, at its first use, to hold nothing but test data."""
    with _any_server() as server:
        with _connect(server) as driver:
            refuse_foreign_database(server, driver)
        yield server


@pytest.fixture(scope="session")
def neo4j_driver(neo4j_server: Neo4jServer) -> Iterator[neo4j.Driver]:
    with _connect(neo4j_server) as driver:
        yield driver


def wipe(driver: neo4j.Driver) -> None:
    """Empty the test database and mark it as one.

    The store has no delete (records are append-only); tests isolate themselves by
    emptying the database through the raw driver. neo4j_server has made sure, once per
    session, that it holds nothing but what tests wrote.
    """
    with driver.session() as session:
        session.run("MATCH (n) CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 10000 ROWS").consume()
        session.run(f"CREATE (:{MARKER_LABEL})").consume()


@pytest.fixture
def neo4j_store(neo4j_server: Neo4jServer, neo4j_driver: neo4j.Driver, monkeypatch) -> Iterator[Neo4jStore]:
    wipe(neo4j_driver)
    monkeypatch.setenv("NEO4J_USER", neo4j_server.user)
    monkeypatch.setenv("NEO4J_PASSWORD", neo4j_server.password)
    store = Neo4jStore(neo4j_server.uri, user=neo4j_server.user, password=neo4j_server.password)
    store.init()
    yield store
    store.close()


@pytest.fixture
def ladybug_store(tmp_path: Path) -> Iterator[LadybugStore]:
    store = LadybugStore(tmp_path / "store.lbug")
    yield store
    store.close()


@pytest.fixture(params=["ladybug", "neo4j"])
def store(request) -> GafStore:
    """Each contract test runs once on each store."""
    return request.getfixturevalue(f"{request.param}_store")


def small_graph(tag: str = "t") -> list:
    """An agent, a source and two claims that point at them: a minimal valid batch."""
    from gaf.records import Agent, Claim, Source

    agent = Agent(key=f"observer-{tag}", name="An observer", agent_type="person")
    source = Source(key=f"source-{tag}", name="A source")
    claims = [
        Claim(
            source=source.id,
            observer=agent.id,
            observed_at="2026-07-05T10:00:00Z",
            recorded_at=NOW,
            transformation="api_export",
            statements=[{"subject": f"payment:{tag}-{i}", "predicate": "amount", "value": 1000 + i}],
        )
        for i in range(2)
    ]
    return [agent, source, *claims]
