"""Faults: a client or the Neo4j server killed in the middle of a write loses nothing and duplicates nothing.

The promise (docs/reliability.md): a write transaction is all or nothing, so a
kill leaves whole batches and no part of one; every record's id is its content,
so running the same command again finishes the work and writes nothing twice.

The server tests SIGKILL a Neo4j JVM of their own (started with
scripts/neo4j_local.py under a temporary home, on a free port, from the jars
already fetched), never the server the rest of the suite uses. Clients are
stopped at a known point — every statement of their transaction run, the commit
not yet sent — by tests/workers.py, then killed.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import neo4j
import pytest

from gaf.ledger import ingest
from gaf.policies import publish, read_policy
from gaf.store import GafStore
from gaf.store.neo4j import Neo4jStore
from tests.conftest import ROOT
from tests.figures import record
from tests.workers import AT, POLICY, accept_group, duplicated, ingest_order, payment_claims, write_jsonl

SCRIPT = ROOT / "scripts" / "neo4j_local.py"
#: Claims per ingest and records per write transaction: several batches, each large.
CLAIMS, BATCH = 2000, 400
#: The write transaction a worker is stopped in: two batches committed before it.
PAUSE_AT = 3
#: How many ids gaf ingest has committed when the third batch is stopped.
COMMITTED = (PAUSE_AT - 1) * BATCH
#: Payments accepted in one atomic batch.
ACCEPTED = 600
#: Claims of the client that waits out a server restart (one transaction).
WAITING = 300


# ---------------------------------------------------------------------- a Neo4j of the fault tests' own


def _fetched_lib() -> Path | None:
    """A lib/ of Neo4j jars already fetched: this checkout's, or the suite's server home's."""
    homes = [os.environ.get("GAF_NEO4J_HOME"), str(ROOT / ".neo4j")]
    for home in filter(None, homes):
        lib = Path(home) / "lib"
        if (lib / ".version").is_file() and any(lib.glob("neo4j-*.jar")):
            return lib
    return None


def _java() -> bool:
    home = os.environ.get("JAVA_HOME")
    return bool(home and Path(home, "bin", "java").exists() or shutil.which("java"))


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@dataclass
class DedicatedNeo4j:
    """A Neo4j server this module may kill: its home, port and credentials."""

    home: Path
    port: int

    @property
    def uri(self) -> str:
        return f"bolt://127.0.0.1:{self.port}"

    @property
    def password(self) -> str:
        return (self.home / "run" / "password").read_text().strip()

    def env(self) -> dict[str, str]:
        """The environment of a process using this server (and only it)."""
        env = {k: v for k, v in os.environ.items() if k not in ("NEO4J_URI", "NEO4J_PASSWORD", "GAF_STORE")}
        return env | {"GAF_NEO4J_HOME": str(self.home), "GAF_NEO4J_PORT": str(self.port), "PYTHONPATH": str(ROOT)}

    def script(self, command: str) -> None:
        done = subprocess.run([sys.executable, str(SCRIPT), command], env=self.env(), capture_output=True, text=True, timeout=300)
        if done.returncode != 0:
            raise RuntimeError(f"neo4j_local.py {command} failed:\n{done.stdout}{done.stderr}")

    def kill(self) -> int:
        """SIGKILL the JVM, as a power cut or the OOM killer would, and wait until it is gone."""
        pid = int((self.home / "run" / "neo4j.pid").read_text())
        os.kill(pid, signal.SIGKILL)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
            except OSError:
                break
            if state == "Z":
                break
            time.sleep(0.1)
        return pid

    def store(self) -> Neo4jStore:
        return Neo4jStore(self.uri, user="neo4j", password=self.password)

    def wipe(self) -> None:
        with neo4j.GraphDatabase.driver(self.uri, auth=("neo4j", self.password)) as driver, driver.session() as session:
            session.run("MATCH (n) CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 10000 ROWS").consume()


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> Iterator[DedicatedNeo4j]:
    lib = _fetched_lib()
    if not _java():
        pytest.skip(reason="the fault tests run a Neo4j of their own and need Java 17 or 21 (JAVA_HOME or java on PATH)")
    if lib is None and not shutil.which("mvn"):
        pytest.skip(reason="the fault tests run a Neo4j of their own: no fetched jars (.neo4j/lib) and no Maven to fetch them")
    home = tmp_path_factory.mktemp("neo4j-faults")
    if lib is not None:
        # The jars, not a copy: links to the suite server's lib/ (125 MB that need not be fetched twice).
        (home / "lib").mkdir()
        for jar in lib.iterdir():
            (home / "lib" / jar.name).symlink_to(jar)
    dedicated = DedicatedNeo4j(home, _free_port())
    dedicated.script("start")
    try:
        with dedicated.store() as store:
            store.init()
        yield dedicated
    finally:
        dedicated.script("stop")


@pytest.fixture
def neo4j_target(server: DedicatedNeo4j, monkeypatch) -> DedicatedNeo4j:
    """The dedicated server, emptied, and this process's credentials pointed at it."""
    server.wipe()
    monkeypatch.setenv("NEO4J_USER", "neo4j")
    monkeypatch.setenv("NEO4J_PASSWORD", server.password)
    return server


@pytest.fixture(params=["neo4j", "ladybug"])
def target(request, tmp_path) -> tuple[str, dict[str, str]]:
    """Where a client test writes, and the environment its processes need."""
    if request.param == "ladybug":
        return str(tmp_path / "store.lbug"), {**os.environ, "PYTHONPATH": str(ROOT)}
    dedicated: DedicatedNeo4j = request.getfixturevalue("neo4j_target")
    return dedicated.uri, dedicated.env() | {"NEO4J_USER": "neo4j", "NEO4J_PASSWORD": dedicated.password}


# ---------------------------------------------------------------------- workers


def worker(args: list[str], env: dict[str, str], signal_dir: Path | None = None, pause_at: int = 0, *, before: bool = False) -> subprocess.Popen:
    flag = "--pause-before" if before else "--pause-at"
    pause = [flag, str(pause_at), "--signal", str(signal_dir)] if signal_dir else []
    return subprocess.Popen(
        [sys.executable, "-m", "tests.workers", *pause, *args],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


def wait_paused(process: subprocess.Popen, signal_dir: Path, timeout: float = 180) -> None:
    deadline = time.monotonic() + timeout
    while not (signal_dir / "paused").exists():
        if process.poll() is not None:
            out, err = process.communicate()
            pytest.fail(f"the worker ended before its transaction paused (exit {process.returncode}):\n{out}\n{err}")
        if time.monotonic() > deadline:
            process.kill()
            pytest.fail("the worker did not reach its paused transaction")
        time.sleep(0.05)


def finish(args: list[str], env: dict[str, str]) -> dict:
    """Run a worker to the end; it must succeed. Its JSON output, if it printed one."""
    process = worker(args, env)
    out, err = process.communicate(timeout=600)
    assert process.returncode == 0, f"exit {process.returncode}:\n{out}\n{err}"
    return json.loads(out) if out.strip().startswith("{") else {}


def ingest_args(path: Path, where: str, batch: int = BATCH) -> list[str]:
    return ["ingest", str(path), "--store", where, "--batch-size", str(batch), "--json"]


# ---------------------------------------------------------------------- what a store holds


def claims_without_their_propositions(store: GafStore) -> int:
    """Claims whose ASSERTS relationship is missing: a claim written without the rest of its batch."""
    return store.read("MATCH (c:Claim) WHERE NOT (c)-[:ASSERTS]->(:Proposition) RETURN count(c) AS n")[0]["n"]


def stored(store: GafStore, ids: list[str]) -> set[str]:
    return store.exists(ids)


def _open(where: str) -> GafStore:
    return GafStore.open(where)


def _check_whole_batches(where: str, order: list[str], expected: int) -> None:
    """Exactly the first ``expected`` ids of the ingest order are stored: whole batches, nothing of the next."""
    with _open(where) as store:
        found = stored(store, order)
        assert found == set(order[:expected]), f"{len(found)} of the ingest's ids stored, expected the first {expected}"
        assert duplicated(store) == 0
        assert claims_without_their_propositions(store) == 0


def _check_complete(where: str, order: list[str], claims: int) -> None:
    with _open(where) as store:
        assert stored(store, order) == set(order)
        assert store.counts()["claim"] == claims
        assert duplicated(store) == 0
        assert claims_without_their_propositions(store) == 0


# ---------------------------------------------------------------------- a killed client


def test_a_client_killed_mid_ingest_leaves_whole_batches_and_a_rerun_finishes(target, tmp_path):
    where, env = target
    claims = payment_claims("k", range(CLAIMS))
    order = ingest_order(claims)
    path = write_jsonl(tmp_path / "claims.jsonl", claims)
    signal_dir = tmp_path

    client = worker(ingest_args(path, where), env, signal_dir, PAUSE_AT)
    wait_paused(client, signal_dir)
    client.send_signal(signal.SIGKILL)
    client.wait(timeout=30)
    assert client.returncode == -signal.SIGKILL

    _check_whole_batches(where, order, COMMITTED)
    rerun = finish(ingest_args(path, where), env)
    assert rerun["written"] == len(order) - COMMITTED and rerun["existing"] == COMMITTED and not rerun["failed"]
    _check_complete(where, order, CLAIMS)
    with _open(where) as store:
        again = ingest(store, path, recorded_at=AT)
    assert again.write.written == [] and len(again.write.existing) == len(order)
    record(
        "faults", fault="client SIGKILL mid-ingest", store=_dialect(where),
        records_in_input=len(order), batches_committed_before_kill=PAUSE_AT - 1, partial_batches_visible=0,
        records_checked=len(order), duplicated=0, lost=0,
    )  # fmt: skip


def _dialect(where: str) -> str:
    return "neo4j" if "://" in where else "ladybug"


def _accept_setup(where: str, env: dict[str, str], tmp_path: Path, group: str) -> dict[str, int]:
    """The payments of ``group`` ingested and the reliability policy published; the store's counts."""
    path = write_jsonl(tmp_path / f"{group}.jsonl", payment_claims(group, range(ACCEPTED)))
    finish(ingest_args(path, where), env)
    with _open(where) as store:
        publish(store, read_policy(store, POLICY), at=AT)
        return store.counts()


def test_a_client_killed_mid_accept_writes_nothing_of_the_batch(target, tmp_path):
    where, env = target
    before = _accept_setup(where, env, tmp_path, "a")
    signal_dir = tmp_path / "signal"
    signal_dir.mkdir()

    client = worker(["accept", where, "a"], env, signal_dir, 1)
    wait_paused(client, signal_dir)
    client.send_signal(signal.SIGKILL)
    client.wait(timeout=30)

    with _open(where) as store:
        assert store.counts() == before
        assert duplicated(store) == 0
    done = finish(["accept", where, "a"], env)
    with _open(where) as store:
        assert stored(store, done["records"]) == set(done["records"])
        assert store.counts()["fact"] == ACCEPTED and store.counts()["decision"] == 1
        assert duplicated(store) == 0
    with _open(where) as store:
        again = accept_group(store, "a")
    assert again["written"] == [] and again["records"] == done["records"]
    record(
        "faults", fault="client SIGKILL mid-accept (atomic batch)", store=_dialect(where),
        records_in_batch=len(done["records"]), partial_batches_visible=0, records_checked=len(done["records"]),
        duplicated=0, lost=0,
    )  # fmt: skip


# ---------------------------------------------------------------------- a killed server


def test_a_server_killed_mid_ingest_and_mid_accept_loses_and_duplicates_nothing(neo4j_target, tmp_path):
    """Three clients in open transactions when the JVM dies: two give up after 1 s, one retries until it is back.

    The ingest is about to commit; the accept batch and the patient ingest are at the start of
    theirs. (The write log lets one transaction at a time reach its commit on Neo4j: each takes
    its turn at the log, held to its commit, so two paused before their commits would wait on
    each other.)"""
    server = neo4j_target
    env = server.env() | {"NEO4J_USER": "neo4j", "NEO4J_PASSWORD": server.password, "GAF_NEO4J_RETRY_SECONDS": "1"}
    where = server.uri
    _accept_setup(where, env, tmp_path, "a")
    claims = payment_claims("s", range(CLAIMS))
    order = ingest_order(claims)
    path = write_jsonl(tmp_path / "s.jsonl", claims)
    patient = payment_claims("w", range(WAITING))
    patient_path = write_jsonl(tmp_path / "w.jsonl", patient)
    signals = {name: tmp_path / name for name in ("ingest", "accept", "patient")}
    for directory in signals.values():
        directory.mkdir()

    ingesting = worker(ingest_args(path, where), env, signals["ingest"], PAUSE_AT)
    accepting = worker(["accept", where, "a"], env, signals["accept"], 1, before=True)
    # A client whose transaction has sent nothing yet, willing to wait out a restart: the
    # driver's bounded back-off carries it over. (A commit cut off in flight is not retried:
    # its outcome is unknown, so gaf says so and the command is run again.)
    waiting = worker(ingest_args(patient_path, where, batch=WAITING + 2), env | {"GAF_NEO4J_RETRY_SECONDS": "300"},
                     signals["patient"], 1, before=True)
    for client, name in ((ingesting, "ingest"), (accepting, "accept"), (waiting, "patient")):
        wait_paused(client, signals[name])
    server.kill()
    for directory in signals.values():
        (directory / "go").touch()
    for client in (ingesting, accepting):
        out, err = client.communicate(timeout=120)
        # The commit finds no server: a typed error and exit code 3, not a traceback.
        assert client.returncode == 3 and "Traceback" not in err, (client.returncode, out, err)
        assert json.loads(out)["error"] == "StoreUnavailable", (out, err)

    started = time.monotonic()
    server.script("start")
    restart_s = time.monotonic() - started
    _check_whole_batches(where, order, COMMITTED)
    with _open(where) as store:
        after = store.counts()
        assert "fact" not in after and "decision" not in after and "evaluation" not in after

    out, err = waiting.communicate(timeout=600)
    assert waiting.returncode == 0, (out, err)
    assert json.loads(out)["written"] == WAITING and json.loads(out)["existing"] == 2
    finish(ingest_args(path, where), env)
    done = finish(["accept", where, "a"], env)
    _check_complete(where, order, ACCEPTED + CLAIMS + WAITING)
    with _open(where) as store:
        assert stored(store, done["facts"]) == set(done["facts"]) and store.counts()["fact"] == ACCEPTED
        assert store.counts()["decision"] == 1
        assert stored(store, [c.id for c in patient]) == {c.id for c in patient}
    record(
        "faults", fault="server SIGKILL mid-ingest and mid-accept", store="neo4j",
        records_in_input=len(order), records_in_batch=len(done["records"]), partial_batches_visible=0,
        clients_failed_typed=2, clients_retried_through_restart=1,
        records_checked=len(order) + len(done["records"]) + WAITING, restart_seconds=round(restart_s, 1),
        duplicated=0, lost=0,
    )  # fmt: skip
