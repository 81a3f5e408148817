"""Shared fixtures: a real Neo4j server and a fresh embedded store per test.

Neo4j comes from, in order: $NEO4J_URI (with $NEO4J_USER / $NEO4J_PASSWORD), a
testcontainers Neo4j when a Docker engine answers, or the local server that
scripts/neo4j_local.py fetches from Maven Central and starts. It is always the
real server, and never skipped: if none of the three works, those tests fail, loudly.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

import neo4j
import pytest

from gaf.store import GafStore
from gaf.store.ladybug import LadybugStore
from gaf.store.neo4j import Neo4jStore

ROOT = Path(__file__).resolve().parent.parent
RENT = ROOT / "examples" / "rent"
#: The transaction time tests ingest at: passed in, never read from a clock.
NOW = datetime(2026, 11, 30, 12, 0, tzinfo=timezone.utc)

#: A node that marks a database as a gaf test database, safe to wipe.
MARKER_LABEL = "GafTestDatabase"


@dataclass(frozen=True)
class Neo4jServer:
    uri: str
    user: str
    password: str


def _docker_answers() -> bool:
    if shutil.which("docker") is None:
        return False
    try:
        return subprocess.run(["docker", "info"], capture_output=True, timeout=10).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def _local_server() -> Neo4jServer:
    spec = importlib.util.spec_from_file_location("neo4j_local", ROOT / "scripts" / "neo4j_local.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    info = module.start()
    return Neo4jServer(info["uri"], info["user"], info["password"])


@pytest.fixture(scope="session")
def neo4j_server() -> Iterator[Neo4jServer]:
    if os.environ.get("NEO4J_URI"):
        yield Neo4jServer(
            os.environ["NEO4J_URI"],
            os.environ.get("NEO4J_USER") or os.environ.get("NEO4J_USERNAME") or "neo4j",
            os.environ.get("NEO4J_PASSWORD", ""),
        )
    elif _docker_answers():
        from testcontainers.neo4j import Neo4jContainer

        with Neo4jContainer("neo4j:5.26-community") as container:
            yield Neo4jServer(container.get_connection_url(), "neo4j", container.password)
    else:
        yield _local_server()


@pytest.fixture(scope="session")
def neo4j_driver(neo4j_server: Neo4jServer) -> Iterator[neo4j.Driver]:
    driver = neo4j.GraphDatabase.driver(neo4j_server.uri, auth=(neo4j_server.user, neo4j_server.password))
    driver.verify_connectivity()
    yield driver
    driver.close()


def wipe(driver: neo4j.Driver) -> None:
    """Empty the test database, refusing to touch one that holds data of its own.

    The store has no delete (records are append-only); tests isolate themselves
    by emptying a database that carries the test marker, through the raw driver.
    """
    with driver.session() as session:
        marked = session.run(f"MATCH (m:{MARKER_LABEL}) RETURN count(m) AS n").single()["n"]
        other = session.run(f"MATCH (n) WHERE NOT n:{MARKER_LABEL} RETURN count(n) AS n").single()["n"]
        if other and not marked:
            pytest.fail(
                "NEO4J_URI points at a database with data and no test marker; "
                "refusing to wipe it — point the tests at an empty database"
            )
        session.run("MATCH (n) CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 10000 ROWS").consume()
        session.run(f"CREATE (:{MARKER_LABEL})").consume()


@pytest.fixture
def neo4j_store(neo4j_server: Neo4jServer, neo4j_driver: neo4j.Driver, monkeypatch) -> Iterator[Neo4jStore]:
    wipe(neo4j_driver)
    monkeypatch.setenv("NEO4J_USER", neo4j_server.user)
    monkeypatch.setenv("NEO4J_PASSWORD", neo4j_server.password)
    store = Neo4jStore(neo4j_server.uri)
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
