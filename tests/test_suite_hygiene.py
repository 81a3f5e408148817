"""The suite itself: it gives the same answer on every run and leaves nothing behind.

A property test that fails on one run and passes on the next is a fact about the seed,
not about gaf, so the default hypothesis profile is derandomized with a fixed budget and
no deadline; hunting with fresh examples is opt-in. A session stops the Neo4j server it
started — and only that one — even when tests fail, adopts a server it did not start
only when NEO4J_URI names it, and refuses a database that holds records it did not
write rather than empty it.

Sessions are run as they are run by hand, as `python -m pytest` in a subprocess, on a
tiny test file that loads this suite's conftest (`-p tests.conftest`), against a real
Neo4j: the suite's own, or one the session starts in a temporary home.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import neo4j
import pytest
from hypothesis import settings

from tests.conftest import CI_BUDGET, MARKER_LABEL, RANDOM_BUDGET, REFUSED, ROOT, Neo4jServer, docker_answers, neo4j_local, wipe

#: A tiny test file that uses the Neo4j store (emptied for it, as for every test).
USES_NEO4J = '''
    def test_uses_neo4j(neo4j_store):
        assert neo4j_store.counts() == {}
'''

#: A test to add to it that fails.
AND_FAILS = '''

    def test_fails_on_purpose():
        assert False, "a failing test must not keep the session's Neo4j alive"
'''

#: A property test with a budget of its own, and a report of what hypothesis ran.
REPORTS_PROFILE = '''
    import json

    from hypothesis import given, settings, strategies as st

    SEEN = []


    @settings(max_examples=7)
    @given(st.integers())
    def test_draws(n):
        SEEN.append(n)


    def test_report():
        current = settings()
        print("PROFILE " + json.dumps({
            "name": settings.get_current_profile_name(),
            "derandomize": current.derandomize,
            "deadline": current.deadline,
            "database": current.database,
            "max_examples": current.max_examples,
            "ran": len(SEEN),
        }))
'''

#: Environment variables that would point a session at a server or a profile.
CHOSEN = ("NEO4J_URI", "NEO4J_USER", "NEO4J_USERNAME", "NEO4J_PASSWORD", "GAF_HYPOTHESIS_PROFILE", "GAF_STORE")


def environment(**chosen: str) -> dict[str, str]:
    """This process's environment with nothing chosen for the session but `chosen`."""
    env = {k: v for k, v in os.environ.items() if k not in CHOSEN}
    return env | {"PYTHONPATH": str(ROOT)} | chosen


def session(where: Path, source: str, env: dict[str, str], *options: str) -> subprocess.CompletedProcess:
    """Run `python -m pytest` on `source` in `where`, with this suite's conftest loaded."""
    (where / "test_tiny.py").write_text(textwrap.dedent(source))
    command = [sys.executable, "-m", "pytest", "-p", "tests.conftest", "-p", "no:cacheprovider", "-q", "-s", *options, "test_tiny.py"]
    return subprocess.run(command, cwd=where, env=env, capture_output=True, text=True, timeout=600)


def reported_profile(done: subprocess.CompletedProcess) -> dict:
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(re.search(r"PROFILE (\{.*\})", done.stdout).group(1))


def jvms_of(home: Path) -> list[int]:
    """Pids of live processes that run a Neo4j on this home."""
    pids = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes().split(b"\0")
            state = (proc / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if state != "Z" and f"--home-dir={home}".encode() in cmdline:
            pids.append(int(proc.name))
    return pids


def count_nodes(driver: neo4j.Driver, label: str) -> int:
    with driver.session() as db:
        return db.run(f"MATCH (n:{label}) RETURN count(n) AS n").single()["n"]


# ---------------------------------------------------------------------- hypothesis profiles


def test_the_ci_profile_is_derandomized_with_a_fixed_budget_and_no_deadline():
    ci = settings.get_profile("ci")
    assert ci.derandomize is True
    assert ci.max_examples == CI_BUDGET
    assert ci.deadline is None
    assert ci.database is None
    assert ci.print_blob is True


def test_the_random_profile_draws_fresh_examples_with_a_larger_budget():
    hunting = settings.get_profile("random")
    assert hunting.derandomize is False
    assert hunting.max_examples == RANDOM_BUDGET > CI_BUDGET
    assert hunting.deadline is None
    assert hunting.database is None


def test_plain_pytest_runs_under_the_ci_profile(tmp_path):
    seen = reported_profile(session(tmp_path, REPORTS_PROFILE, environment()))
    assert seen == {"name": "ci", "derandomize": True, "deadline": None, "database": None, "max_examples": CI_BUDGET, "ran": 7}


@pytest.mark.parametrize("how", ["variable", "option"])
def test_the_random_profile_is_opt_in_and_scales_a_tests_own_budget(tmp_path, how):
    if how == "variable":
        done = session(tmp_path, REPORTS_PROFILE, environment(GAF_HYPOTHESIS_PROFILE="random"))
    else:
        done = session(tmp_path, REPORTS_PROFILE, environment(), "--hypothesis-profile=random")
    seen = reported_profile(done)
    assert seen["name"] == "random"
    assert seen["derandomize"] is False
    assert seen["max_examples"] == RANDOM_BUDGET
    # The test asked for 7 under "ci"; hunting runs it at the same factor as the profile.
    assert seen["ran"] == 7 * RANDOM_BUDGET // CI_BUDGET


def test_a_test_that_sets_its_own_derandomize_is_refused(tmp_path):
    source = '''
        from hypothesis import given, settings, strategies as st


        @settings(derandomize=False)
        @given(st.integers())
        def test_chooses_its_own_luck(n):
            pass
    '''
    done = session(tmp_path, source, environment())
    assert done.returncode == pytest.ExitCode.USAGE_ERROR
    assert "test_chooses_its_own_luck sets derandomize=False" in done.stderr + done.stdout


# ---------------------------------------------------------------------- Neo4j


def _fetched_lib() -> Path | None:
    """The Neo4j jars the suite's server runs on, if they are fetched."""
    lib = neo4j_local().LIB
    return lib if (lib / ".version").is_file() and any(lib.glob("neo4j-*.jar")) else None


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.mark.neo4j_only
def test_a_session_stops_the_neo4j_server_it_started_even_when_tests_fail(tmp_path):
    """The slow one: a session starts a JVM of its own (20–40 s) and must leave none behind."""
    if docker_answers():
        pytest.skip(reason="with a Docker engine the session's Neo4j is a container, which testcontainers removes")
    lib = _fetched_lib()
    if lib is None and not shutil.which("mvn"):
        pytest.skip(reason="no fetched Neo4j jars (.neo4j/lib) and no Maven to fetch them")
    home = tmp_path / "neo4j"
    if lib is not None:
        # Links to the suite server's jars (125 MB that need not be fetched twice).
        (home / "lib").mkdir(parents=True)
        for jar in lib.iterdir():
            (home / "lib" / jar.name).symlink_to(jar)
    work = tmp_path / "session"
    work.mkdir()
    env = environment(GAF_NEO4J_HOME=str(home), GAF_NEO4J_PORT=str(_free_port()))
    done = session(work, USES_NEO4J + AND_FAILS, env)
    try:
        output = done.stdout + done.stderr
        assert done.returncode == pytest.ExitCode.TESTS_FAILED, output
        assert "1 failed, 1 passed" in output
        started = int(re.search(r"starting Neo4j \S+ on \S+ \(pid (\d+)\)", output).group(1))
        assert f"stopping Neo4j (pid {started})" in output
        assert jvms_of(home) == []
    finally:
        for pid in jvms_of(home):  # only if the assertion above failed: leave nothing running
            os.kill(pid, signal.SIGKILL)


def _local_server_of_the_suite() -> int:
    """The pid of the scripts/neo4j_local.py server in this suite's home, else skip."""
    if docker_answers():
        pytest.skip(reason="with a Docker engine a session uses a container, not a running local server")
    pid = neo4j_local().running_pid()
    if not pid:
        pytest.skip(reason="no scripts/neo4j_local.py server runs in this suite's home (NEO4J_URI names another)")
    return pid


@pytest.mark.neo4j_only
def test_a_running_neo4j_server_is_used_only_when_neo4j_uri_names_it(tmp_path, neo4j_server: Neo4jServer, neo4j_driver):
    running = _local_server_of_the_suite()

    refused = session(tmp_path, USES_NEO4J, environment())
    output = refused.stdout + refused.stderr
    assert refused.returncode == REFUSED, output
    assert f"already running (pid {running}" in output
    assert "NEO4J_URI does not name it" in output
    assert "python scripts/neo4j_local.py stop" in output
    assert neo4j_local().running_pid() == running  # not stopped: this session did not start it

    named = session(tmp_path, USES_NEO4J, environment(NEO4J_URI=neo4j_server.uri, NEO4J_USER=neo4j_server.user, NEO4J_PASSWORD=neo4j_server.password))
    assert named.returncode == pytest.ExitCode.OK, named.stdout + named.stderr
    assert neo4j_local().running_pid() == running
    wipe(neo4j_driver)


@pytest.mark.neo4j_only
def test_a_neo4j_database_holding_records_the_suite_did_not_write_is_refused(tmp_path, neo4j_server: Neo4jServer, neo4j_driver):
    wipe(neo4j_driver)
    with neo4j_driver.session() as db:
        db.run(f"MATCH (m:{MARKER_LABEL}) DELETE m").consume()
        db.run("UNWIND range(1, 3) AS i CREATE (:SomeonesRecord {i: i})").consume()
    try:
        env = environment(NEO4J_URI=neo4j_server.uri, NEO4J_USER=neo4j_server.user, NEO4J_PASSWORD=neo4j_server.password)
        done = session(tmp_path, USES_NEO4J, env)
        output = done.stdout + done.stderr
        assert done.returncode == REFUSED, output
        assert f"the Neo4j database at {neo4j_server.uri} holds 3 nodes that this suite did not write" in output
        assert "refusing to empty it — point NEO4J_URI at an empty database" in output
        assert "passed" not in output
        assert count_nodes(neo4j_driver, "SomeonesRecord") == 3
    finally:
        wipe(neo4j_driver)
