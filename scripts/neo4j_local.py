#!/usr/bin/env python3
"""Run a private Neo4j Community server for gaf without Docker.

There is no Docker engine on the development and CI machines, and the Neo4j
tarball is not on any registry we can reach, but Maven Central carries every
jar of the server.  This script rebuilds the tarball's lib/ with Maven
(scripts/neo4j-pom.xml), writes its own neo4j.conf, and runs the server's JVM
directly as a detached process bound to 127.0.0.1.

Everything at run time lives under <repo>/.neo4j/ (gitignored), which doubles
as NEO4J_HOME: lib/, conf/, data/, logs/, run/ (pid, port, password), tmp/.

CLI:   python scripts/neo4j_local.py start|stop|status|env|fetch
       eval "$(python scripts/neo4j_local.py env)"
Import: fetch(), start() -> dict, stop(pid=None), status() -> dict

       python scripts/neo4j_local.py admin ARGS…   (neo4j-admin on this home,
       e.g. `admin database import full …` while the server is stopped)

Environment: GAF_NEO4J_HOME (server directory, default .neo4j/),
GAF_NEO4J_PORT (Bolt port, default 7687), GAF_NEO4J_HEAP and
GAF_NEO4J_PAGECACHE (memory; default 1g and 256m), NEO4J_PASSWORD (initial
password; default: random, kept in .neo4j/run/password), JAVA_HOME (else
`java` on PATH; Neo4j 5.26 needs Java 17 or 21).
"""

from __future__ import annotations

import os
import re
import secrets
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
POM = REPO / "scripts" / "neo4j-pom.xml"
# GAF_NEO4J_HOME runs a second, independent server (e.g. tests beside a benchmark).
HOME = Path(os.environ.get("GAF_NEO4J_HOME") or REPO / ".neo4j").resolve()
LIB = HOME / "lib"
CONF = HOME / "conf"
DATA = HOME / "data"
LOGS = HOME / "logs"
RUN = HOME / "run"
TMP = HOME / "tmp"
LIB_MARKER = LIB / ".version"
PID_FILE = RUN / "neo4j.pid"
PORT_FILE = RUN / "neo4j.port"
PASSWORD_FILE = RUN / "password"
CONSOLE_LOG = LOGS / "console.log"
MAVEN_LOG = LOGS / "maven.log"

# Newest first.  The 5.26 LTS line is the last one that runs on Java 17; the
# calendar versions (2025.x) need Java 21.  5.26.29 is not on Maven Central
# for the assembly artifact, so it is not listed.
VERSIONS = ("5.26.30", "5.26.12")
SUPPORTED_JAVA = (17, 21)
USER = "neo4j"
DEFAULT_PORT = 7687
ENTRY_POINT = "org.neo4j.server.CommunityEntryPoint"
ADMIN_ENTRY_POINT = "org.neo4j.server.startup.Neo4jAdminCommand"
READY_TIMEOUT_S = 120
STOP_TIMEOUT_S = 30

# The same flags go into neo4j.conf (for anyone using the stock launcher on
# this home) and onto our own java command line.  Without the --add-opens
# Neo4j cannot reach file descriptors for native I/O advice.
JVM_FLAGS = (
    "--add-opens=java.base/java.nio=ALL-UNNAMED",
    "--add-opens=java.base/java.io=ALL-UNNAMED",
    "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
    "-XX:-OmitStackTraceInFastThrow",
    "-Dio.netty.tryReflectionSetAccessible=true",
    "-Djdk.nio.maxCachedBufferSize=1024",
    "-Dlog4j2.disable.jmx=true",
    f"-Djna.tmpdir={TMP}",
    f"-Djava.io.tmpdir={TMP}",
    "-Dfile.encoding=UTF-8",
)
# Small by default (tests, the story); a benchmark over a large graph raises them with
# GAF_NEO4J_HEAP and GAF_NEO4J_PAGECACHE (e.g. 2g and 4g).
HEAP_MAX = os.environ.get("GAF_NEO4J_HEAP", "1g")
HEAP_INITIAL = "512m" if HEAP_MAX == "1g" else HEAP_MAX
PAGE_CACHE = os.environ.get("GAF_NEO4J_PAGECACHE", "256m")


class Neo4jLocalError(RuntimeError):
    """A failure with a message meant for the person running the script."""


def log(message: str) -> None:
    print(message, flush=True)


# --- fetching ---------------------------------------------------------------


def fetched_version() -> str | None:
    """The version whose jars are complete in lib/, or None.

    A version dropped from VERSIONS counts as absent, so editing VERSIONS is
    enough to move every checkout to a new release.
    """
    if LIB_MARKER.is_file() and any(LIB.glob("neo4j-*.jar")):
        version = LIB_MARKER.read_text().strip()
        return version if version in VERSIONS else None
    return None


def fetch() -> str:
    """Make lib/ hold the server jars; return the version.  Quick when done."""
    version = fetched_version()
    if version:
        return version
    if not shutil.which("mvn"):
        raise Neo4jLocalError("Maven (mvn) is not on PATH; install it, e.g. apt-get install maven")
    for version in VERSIONS:
        log(f"fetching Neo4j {version} jars with Maven…")
        started = time.monotonic()
        if _maven_copy(version, offline=True) or _maven_copy(version, offline=False):
            log(f"fetched Neo4j {version} jars in {time.monotonic() - started:.0f} s")
            return version
        log(f"Neo4j {version} did not resolve (see {MAVEN_LOG}); trying an older one")
    raise Neo4jLocalError(f"no Neo4j version of {VERSIONS} resolved; see {MAVEN_LOG}")


def _maven_copy(version: str, offline: bool) -> bool:
    """Copy the jars into a scratch dir, then swap it in, so lib/ is never half-filled."""
    partial = HOME / "lib.partial"
    shutil.rmtree(partial, ignore_errors=True)
    LOGS.mkdir(parents=True, exist_ok=True)
    command = ["mvn", "-B", "-q", "-f", str(POM), f"-Dneo4j.version={version}",
               f"-Dneo4j.lib={partial}", "dependency:copy-dependencies"]
    if offline:
        command.insert(1, "-o")
    with MAVEN_LOG.open("a") as out:
        out.write(f"\n$ {shlex.join(command)}\n")
        out.flush()
        ok = subprocess.run(command, stdout=out, stderr=subprocess.STDOUT, cwd=REPO).returncode == 0
    if not ok or not any(partial.glob("neo4j-*.jar")):
        shutil.rmtree(partial, ignore_errors=True)
        return False
    (partial / ".version").write_text(version + "\n")
    shutil.rmtree(LIB, ignore_errors=True)
    partial.rename(LIB)
    return True


# --- java, config, password -------------------------------------------------


def java_binary() -> str:
    """JAVA_HOME's java if set, else the one on PATH; refuse versions Neo4j 5.26 rejects."""
    java_home = os.environ.get("JAVA_HOME")
    java = str(Path(java_home) / "bin" / "java") if java_home else shutil.which("java")
    if not java or not Path(java).exists():
        raise Neo4jLocalError("no java found: set JAVA_HOME or put Java 17 on PATH")
    banner = subprocess.run([java, "-version"], capture_output=True, text=True).stderr
    match = re.search(r'version "(\d+)', banner)
    major = int(match.group(1)) if match else None
    if major not in SUPPORTED_JAVA:
        raise Neo4jLocalError(f"{java} is Java {major}; Neo4j 5.26 needs Java 17 or 21 "
                              "(set JAVA_HOME to one of those)")
    return java


def bolt_port() -> int:
    """The port to start on: GAF_NEO4J_PORT or 7687."""
    return int(os.environ.get("GAF_NEO4J_PORT", DEFAULT_PORT))


def current_port() -> int:
    """The port the running server was started on, else the one to start on."""
    return (running_pid() and _read_int(PORT_FILE)) or bolt_port()


def write_config(port: int) -> None:
    """Write neo4j.conf on every start so port and settings changes take effect.

    Strict validation is on by default, so every key here is one the server knows.
    """
    lines = [
        "server.default_listen_address=127.0.0.1",
        "server.default_advertised_address=127.0.0.1",
        f"server.bolt.listen_address=127.0.0.1:{port}",
        f"server.bolt.advertised_address=127.0.0.1:{port}",
        "server.http.enabled=false",
        "server.https.enabled=false",
        # The server-side routing connector (port 7688) is only opened when this is on.
        "dbms.routing.enabled=false",
        "dbms.usage_report.enabled=false",
        "dbms.security.auth_enabled=true",
        "db.tx_log.preallocate=false",
        "db.store.files.preallocate=false",
        f"server.memory.heap.initial_size={HEAP_INITIAL}",
        f"server.memory.heap.max_size={HEAP_MAX}",
        f"server.memory.pagecache.size={PAGE_CACHE}",
        *(f"server.jvm.additional={flag}" for flag in JVM_FLAGS),
    ]
    CONF.mkdir(parents=True, exist_ok=True)
    (CONF / "neo4j.conf").write_text("# Written by scripts/neo4j_local.py; edits are overwritten.\n"
                                     + "\n".join(lines) + "\n")


def password() -> str:
    """The neo4j user's password: stored once, from NEO4J_PASSWORD or random."""
    wanted = os.environ.get("NEO4J_PASSWORD")
    if PASSWORD_FILE.is_file():
        stored = PASSWORD_FILE.read_text().strip()
        if wanted and wanted != stored:
            raise Neo4jLocalError(
                f"NEO4J_PASSWORD differs from the password this server was set up with "
                f"({PASSWORD_FILE}); unset NEO4J_PASSWORD, or stop the server and delete "
                f"{DATA} and {PASSWORD_FILE} to start afresh")
        return stored
    if wanted is not None and len(wanted) < 8:
        raise Neo4jLocalError("NEO4J_PASSWORD must be at least 8 characters (Neo4j's minimum)")
    chosen = wanted or secrets.token_hex(16)
    RUN.mkdir(parents=True, exist_ok=True)
    fd = os.open(PASSWORD_FILE, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as out:
        out.write(chosen + "\n")
    return chosen


def set_initial_password(java: str, secret: str) -> None:
    """Seed the password before the first start; later starts keep the system database's."""
    if (DATA / "databases" / "system").exists():
        return
    env = dict(os.environ, NEO4J_HOME=str(HOME), NEO4J_CONF=str(CONF))
    result = subprocess.run(
        [java, "-cp", classpath(), *JVM_FLAGS, ADMIN_ENTRY_POINT,
         "dbms", "set-initial-password", secret],
        env=env, capture_output=True, text=True)
    if result.returncode != 0:
        raise Neo4jLocalError("neo4j-admin set-initial-password failed:\n"
                              + result.stdout + result.stderr)


def admin(args: list[str]) -> int:
    """Run neo4j-admin on this home (its conf, data and lib); return its exit code."""
    java = java_binary()
    fetch()
    if not (CONF / "neo4j.conf").is_file():
        write_config(bolt_port())
    env = dict(os.environ, NEO4J_HOME=str(HOME), NEO4J_CONF=str(CONF))
    return subprocess.run([java, "-cp", classpath(), *JVM_FLAGS, f"-Xmx{HEAP_MAX}", ADMIN_ENTRY_POINT, *args],
                          env=env).returncode


def classpath() -> str:
    """conf/ before lib/, as the stock launcher has it."""
    return f"{CONF}/*:{LIB}/*"


# --- process ----------------------------------------------------------------


# Servers this Python process launched, kept so that an importer (e.g. a test
# session) can reap them and Python does not warn that they still run.
_LAUNCHED: dict[int, subprocess.Popen] = {}


def _read_int(path: Path) -> int | None:
    try:
        return int(path.read_text().strip())
    except (OSError, ValueError):
        return None


def _is_our_server(pid: int) -> bool:
    """True if pid is a live (not zombie) JVM running our home's entry point.

    Checking the command line guards against a recycled pid.
    """
    child = _LAUNCHED.get(pid)
    if child and child.poll() is not None:  # reaps it, so it is no zombie
        del _LAUNCHED[pid]
        return False
    if child:
        # We launched it and it has not exited: ours. (Its /proc cmdline can read
        # empty for a moment while the JVM starts on a loaded machine.)
        return True
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except (OSError, IndexError):
        return False
    return (state != "Z" and ENTRY_POINT.encode() in cmdline
            and f"--home-dir={HOME}".encode() in cmdline)


def running_pid() -> int | None:
    pid = _read_int(PID_FILE)
    return pid if pid and _is_our_server(pid) else None


def port_in_use(port: int) -> bool:
    with socket.socket() as probe:
        probe.settimeout(1)
        return probe.connect_ex(("127.0.0.1", port)) == 0


def launch(java: str, port: int) -> int:
    """Start the server JVM detached from us, the way `neo4j console` would run it."""
    for directory in (LOGS, RUN, TMP):
        directory.mkdir(parents=True, exist_ok=True)
    command = [java, "-cp", classpath(), *JVM_FLAGS,
               f"-Xms{HEAP_INITIAL}", f"-Xmx{HEAP_MAX}", ENTRY_POINT,
               f"--home-dir={HOME}", f"--config-dir={CONF}", "--console-mode"]
    with CONSOLE_LOG.open("a") as out:
        out.write(f"\n$ {shlex.join(command)}\n")
        out.flush()
        process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=out,
                                   stderr=subprocess.STDOUT, cwd=HOME,
                                   start_new_session=True)
    _LAUNCHED[process.pid] = process
    PID_FILE.write_text(f"{process.pid}\n")
    PORT_FILE.write_text(f"{port}\n")
    return process.pid


def _wait_gone(pid: int, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not _is_our_server(pid):
            return True
        time.sleep(0.25)
    return not _is_our_server(pid)


# --- readiness --------------------------------------------------------------


def answers(uri: str, secret: str) -> bool:
    """True if the server runs `RETURN 1` now; raises on a wrong password.

    Failing fast on auth matters: Neo4j locks the user after repeated failures.
    """
    try:
        import neo4j
    except ImportError as err:
        raise Neo4jLocalError("the neo4j Python driver is missing: pip install neo4j") from err
    try:
        with neo4j.GraphDatabase.driver(uri, auth=(USER, secret), connection_timeout=2,
                                        max_transaction_retry_time=0) as driver:
            records, _, _ = driver.execute_query("RETURN 1 AS one")
            return records[0]["one"] == 1
    except neo4j.exceptions.AuthError as err:
        raise Neo4jLocalError(f"Neo4j at {uri} refused the password in {PASSWORD_FILE} ({err}); "
                              f"if the data predates that file, delete {DATA}") from err
    except (neo4j.exceptions.DriverError, neo4j.exceptions.Neo4jError, OSError):
        return False


def wait_ready(pid: int, uri: str, secret: str) -> float:
    """Poll until RETURN 1 answers; return seconds taken."""
    started = time.monotonic()
    while time.monotonic() - started < READY_TIMEOUT_S:
        if not _is_our_server(pid):
            raise Neo4jLocalError(f"Neo4j (pid {pid}) exited during startup\n{log_tails()}")
        if answers(uri, secret):
            return time.monotonic() - started
        time.sleep(1)
    raise Neo4jLocalError(
        f"Neo4j did not answer RETURN 1 within {READY_TIMEOUT_S} s\n{log_tails()}")


def log_tails(lines: int = 50) -> str:
    """The end of console.log (JVM errors land only there) and neo4j.log."""
    parts = []
    for path in (CONSOLE_LOG, LOGS / "neo4j.log"):
        if path.is_file():
            tail = path.read_text(errors="replace").splitlines()[-lines:]
            parts.append(f"--- last {len(tail)} lines of {path} ---\n" + "\n".join(tail))
    parts.append(f"(more detail in {LOGS / 'debug.log'})")
    return "\n".join(parts)


# --- public API ---------------------------------------------------------------


def _info(pid: int | None, port: int) -> dict:
    return {"uri": f"bolt://127.0.0.1:{port}", "user": USER, "password": password(), "pid": pid}


def start() -> dict:
    """Start the server if needed and wait until it answers; return connection info."""
    pid = running_pid()
    if pid:
        info = _info(pid, current_port())
        wait_ready(pid, info["uri"], info["password"])
        log(f"Neo4j already running on {info['uri']} (pid {pid})")
        return info
    PID_FILE.unlink(missing_ok=True)
    port = bolt_port()
    if port_in_use(port):
        raise Neo4jLocalError(f"port {port} on 127.0.0.1 is taken by something that is not this "
                              f"repo's Neo4j; free it or set GAF_NEO4J_PORT to another port")
    java = java_binary()
    version = fetch()
    write_config(port)
    secret = password()
    set_initial_password(java, secret)
    info = _info(launch(java, port), port)
    log(f"starting Neo4j {version} on {info['uri']} (pid {info['pid']})…")
    try:
        seconds = wait_ready(info["pid"], info["uri"], secret)
    except Neo4jLocalError:
        stop()  # leave no half-started server behind
        raise
    log(f"Neo4j answered RETURN 1 after {seconds:.1f} s")
    return info


def stop(pid: int | None = None) -> None:
    """SIGTERM our server, give it time to check-point, then SIGKILL.

    pid is the server to stop, as start() returned it, so that a test session stops
    the server it started and no other; without it, the one in the pid file.
    """
    wanted = pid
    pid = running_pid() if wanted is None else (wanted if _is_our_server(wanted) else None)
    if not pid:
        log("Neo4j is not running" if wanted is None else f"Neo4j (pid {wanted}) is not running")
        if wanted is None or _read_int(PID_FILE) == wanted:
            PID_FILE.unlink(missing_ok=True)
        return
    log(f"stopping Neo4j (pid {pid})…")
    os.kill(pid, signal.SIGTERM)
    if not _wait_gone(pid, STOP_TIMEOUT_S):
        log(f"Neo4j did not stop within {STOP_TIMEOUT_S} s; killing it")
        os.kill(pid, signal.SIGKILL)
        _wait_gone(pid, 5)
    if _read_int(PID_FILE) == pid:
        PID_FILE.unlink(missing_ok=True)
    log("Neo4j stopped")


def status() -> dict:
    """Whether our server runs and answers, without starting anything."""
    pid = running_pid()
    if not pid:
        return {"running": False, "answering": False, "pid": None}
    info = _info(pid, current_port())
    return {**info, "running": True, "answering": answers(info["uri"], info["password"])}


def env_lines() -> str:
    """Shell exports for the server, for `eval "$(… env)"`."""
    info = _info(None, current_port())
    return (f"export NEO4J_URI={info['uri']} NEO4J_USER={USER} "
            f"NEO4J_PASSWORD={shlex.quote(info['password'])}")


def main(argv: list[str]) -> int:
    commands = ("start", "stop", "status", "env", "fetch", "admin")
    if argv and argv[0] == "admin":
        try:
            return admin(argv[1:])
        except Neo4jLocalError as err:
            print(f"error: {err}", file=sys.stderr)
            return 1
    if len(argv) != 1 or argv[0] not in commands:
        print(f"usage: {Path(__file__).name} {'|'.join(commands)}", file=sys.stderr)
        return 2
    command = argv[0]
    try:
        if command == "start":
            info = start()
            log(f"connect with: {info['uri']} user {info['user']} "
                f"(password in {PASSWORD_FILE}; or eval \"$(python {sys.argv[0]} env)\")")
        elif command == "stop":
            stop()
        elif command == "fetch":
            log(f"Neo4j {fetch()} jars are in {LIB}")
        elif command == "env":
            print(env_lines())
        else:
            state = status()
            if not state["running"]:
                log("Neo4j is stopped")
                return 3
            answering = "answers RETURN 1" if state["answering"] else "is NOT answering"
            log(f"Neo4j is running on {state['uri']} (pid {state['pid']}) and {answering}")
            return 0 if state["answering"] else 1
    except Neo4jLocalError as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
