"""Crash recovery for readers: a writer killed during `gaf close` never leaves the embedded store unreadable.

The finding (issue 24): LadybugDB checkpoints a writer's log into the database as the
writer closes it; a writer killed in that checkpoint leaves a recovery pending, and
LadybugDB refuses every read-only open until something opens the store for writing.
gaf's readers now complete the recovery themselves when no writer holds the store
(gaf/store/ladybug.py), so the first read after the kill succeeds.

The test kills a real `gaf close` (SIGKILL, as the OOM killer would) KILLS times on
copies of one small store (the rent case, projected and not yet closed). The kill
moments are set from what the writer does, not from a clock: half are spread over the
writer's time with the store open (from the `store: …` line it prints once it has
opened the store), half over its checkpoint (from the checkpoint file's appearance),
at delays measured on one uninterrupted close. Whatever moment each kill lands on, the
read that follows must succeed, the store must verify, and it must hold the records of
the close entirely or not at all, compared with the store an uninterrupted close leaves
(the oracle).

Only the embedded store: a Neo4j server runs its own recovery as it starts, and a
killed client's open transaction is rolled back by the server (tests/test_faults.py).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

from gaf.errors import StoreLocked
from gaf.policies import publish, read_rules
from gaf.projection import project
from gaf.records import RECORD_TYPES
from gaf.store import GafStore
from gaf.store.ladybug import LadybugStore, _writer_holds
from gaf.verify import verify
from tests.conftest import NOW, RENT, ROOT
from tests.figures import record
from tests.rentcase import BEFORE_E, RENT_JULY, agent_id, load

#: Writers killed per run (issue 24 asks for 20).
KILLS = 20
#: The writer has the store open: its clock starts at the ``store: …`` line a writing command prints.
OPENED = "opened"
#: The log LadybugDB is checkpointing into the database, beside the store (while it exists, a kill
#: leaves a recovery pending).
CHECKPOINT = "store.lbug.wal.checkpoint"
#: What the CLI says on stderr when it completed a recovery before reading.
RECOVERED = "its recovery was completed before reading"
#: The environment of every gaf process: this checkout's code, the default waits.
ENV = {k: v for k, v in os.environ.items() if k not in ("GAF_LOCK_WAIT", "GAF_STORE")} | {"PYTHONPATH": str(ROOT)}


@dataclass(frozen=True)
class World:
    """A store ready to be closed (the rent case, projected), kept aside to be copied for each kill."""

    template: Path
    gaf: str
    before: frozenset[str]


def stored_ids(store: GafStore) -> frozenset[str]:
    return frozenset(i for kind in RECORD_TYPES for i in store.ids(kind))


@pytest.fixture(scope="module")
def world(tmp_path_factory) -> World:
    template = tmp_path_factory.mktemp("template")
    with GafStore.open(str(template / "store.lbug")) as store:
        policy = load(store)
        publish(store, read_rules(RENT / "verdict-rules.yaml"), at=NOW)
        projected = project(store, policy, as_of=BEFORE_E, reviewer=agent_id(store, "registry-clerk"), at=BEFORE_E)
        before = stored_ids(store)
    return World(template, projected.gaf.id, before)


def copy(world: World, directory: Path) -> Path:
    """A fresh copy of the world's store in ``directory``; its database file."""
    shutil.copytree(world.template, directory)
    return directory / "store.lbug"


def start_close(world: World, store: Path) -> subprocess.Popen:
    """`gaf close` of the world's GAF, as a user runs it."""
    args = ["close", world.gaf, "--rules", "rent-paid", "--subject", RENT_JULY, "--as-of", "2026-07-15",
            "--at", "2026-07-15T12:00:00Z", "--store", str(store)]  # fmt: skip
    return subprocess.Popen([sys.executable, "-m", "gaf", *args], cwd=ROOT, env=ENV, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)  # fmt: skip


def opened(writer: subprocess.Popen) -> float | None:
    """The moment the writer has the store open (a writing command says ``store: …`` on stderr
    then), or None when it ends first."""
    for line in writer.stderr:
        if line.startswith("store: "):
            return time.monotonic()
    return None


def appears(path: Path, writer: subprocess.Popen) -> float | None:
    """The moment ``path`` appears (polled every millisecond), or None when the writer ends first."""
    while not path.exists():
        if writer.poll() is not None:
            return None
        time.sleep(0.001)
    return time.monotonic()


def gone(path: Path, writer: subprocess.Popen) -> float:
    while path.exists() and writer.poll() is None:
        time.sleep(0.001)
    return time.monotonic()


@dataclass(frozen=True)
class Uninterrupted:
    """What one close that nobody kills leaves, and how long its phases took: the oracle and the clock."""

    after: frozenset[str]
    reported: frozenset[str]
    open_span: float  # from the moment it had the store open to its exit
    checkpoint_span: float  # while its log was being checkpointed


def reported_ids(out: str) -> frozenset[str]:
    """The closure a close printed as written (``closure <id>``, its first line; nothing when it
    was killed before printing)."""
    return frozenset(line.split()[1] for line in out.splitlines()[:1] if line.startswith("closure closure:"))


@pytest.fixture(scope="module")
def uninterrupted(world: World, tmp_path_factory) -> Uninterrupted:
    store = copy(world, tmp_path_factory.mktemp("calibration") / "store")
    writer = start_close(world, store)
    logged = opened(writer)
    checkpointing = appears(store.parent / CHECKPOINT, writer)
    checkpointed = gone(store.parent / CHECKPOINT, writer)
    out, err = writer.communicate(timeout=120)
    ended = time.monotonic()
    assert writer.returncode == 0, err
    assert logged is not None and checkpointing is not None, "the close did not say where it wrote, or checkpointed nothing"
    with GafStore.open(str(store), read_only=True) as s:
        after = stored_ids(s)
    assert after > world.before and len(reported_ids(out)) == 1 and reported_ids(out) <= after
    return Uninterrupted(after, reported_ids(out), ended - logged, checkpointed - checkpointing)


def kill_plan(clock: Uninterrupted) -> list[tuple[str, float]]:
    """Where each kill lands: (what starts its clock, the delay after it). Half spread over the
    writer's time with the store open (OPENED), half over its checkpoint (the file's appearance)."""
    half = KILLS // 2
    spread = [(OPENED, clock.open_span * (k + 0.5) / half) for k in range(half)]
    in_checkpoint = [(CHECKPOINT, clock.checkpoint_span * k / half) for k in range(KILLS - half)]
    return spread + in_checkpoint


def kill_at(world: World, store: Path, marker: str, delay: float) -> tuple[bool, frozenset[str]]:
    """Start a close, SIGKILL it ``delay`` seconds after ``marker`` (OPENED, or a file appearing);
    whether it was killed (it may have finished first) and the ids it had reported written."""
    writer = start_close(world, store)
    started = opened(writer) if marker == OPENED else appears(store.parent / marker, writer)
    if started is not None:
        time.sleep(max(0.0, started + delay - time.monotonic()))
        writer.send_signal(signal.SIGKILL)
    out, _ = writer.communicate(timeout=120)
    return writer.returncode == -signal.SIGKILL, reported_ids(out)


@dataclass(frozen=True)
class Outcome:
    """What one kill did and what the reads after it found."""

    killed: bool
    left_checkpoint: bool  # the writer's checkpoint files were still there
    recovered: bool  # the first read completed a recovery
    committed: bool  # the close was stored (whole: anything else fails the reads' checks)


def kill_then_read(world: World, clock: Uninterrupted, directory: Path, marker: str, delay: float) -> Outcome:
    """Kill one close, then read: every read succeeds, the store verifies, the close is whole or absent."""
    store = copy(world, directory)
    killed, reported = kill_at(world, store, marker, delay)
    left_checkpoint = (store.parent / "store.lbug.checkpoint.intent.lock").exists()
    where = f"kill at {marker} + {delay:.3f} s"

    # the first read after the kill: an auditor's read-only command, with the default waits
    read = subprocess.run([sys.executable, "-m", "gaf", "history", RENT_JULY, "--store", str(store), "--json"],
                          cwd=ROOT, env=ENV, capture_output=True, text=True, timeout=120)  # fmt: skip
    assert read.returncode == 0, f"{where}: {read.stdout}{read.stderr}"
    history = json.loads(read.stdout)

    with GafStore.open(str(store), read_only=True) as s:  # the second read: nothing left to recover
        assert not s.recovered
        ids = stored_ids(s)
        report = verify(s)
        verdicts = {c: s.verdicts_deciding(c) for c in s.ids("closure")}
    assert report.ok, [d.to_dict() for d in report.discrepancies]
    assert ids in (world.before, clock.after), f"{where}: the close is partly stored: {sorted(ids ^ world.before)}"
    assert reported <= ids, f"{where}: the writer reported {sorted(reported - ids)} written, and they are gone"
    assert all(len(v) == 1 for v in verdicts.values()), verdicts
    assert [(h["closure"], h["label"] is not None) for h in history] == [(c, True) for c in sorted(verdicts)]
    return Outcome(killed, left_checkpoint, RECOVERED in read.stderr, ids == clock.after)


def test_every_read_after_a_writer_killed_during_close_succeeds_and_finds_the_close_whole_or_absent(world, uninterrupted, tmp_path):
    plan = kill_plan(uninterrupted)
    with ThreadPoolExecutor(max_workers=2) as pool:  # two kills at a time: the processes mostly start up and wait
        runs = [pool.submit(kill_then_read, world, uninterrupted, tmp_path / f"kill-{n}", *at) for n, at in enumerate(plan)]
        outcomes = [run.result() for run in runs]
    kills = sum(o.killed for o in outcomes)
    recoveries = sum(o.recovered for o in outcomes)
    # the runs above must have exercised what they test: kills that landed, and recoveries run by readers
    assert kills >= KILLS // 2, f"only {kills} of {KILLS} writers were still running when their kill came"
    assert recoveries >= 1, "no kill left a recovery pending: the kills missed the checkpoint"
    record("crash recovery", store="ladybug", writer="gaf close", kills_planned=KILLS, kills=kills,
           kills_leaving_checkpoint_files=sum(o.left_checkpoint for o in outcomes), reads_after=2 * KILLS,
           reads_failed=0, recoveries_run=recoveries, closes_stored_whole=sum(o.committed for o in outcomes),
           closes_absent=sum(not o.committed for o in outcomes), partial=0, lost=0)  # fmt: skip


@pytest.fixture
def pending(world: World, uninterrupted: Uninterrupted, tmp_path) -> Path:
    """A store whose writer was killed in its checkpoint, leaving a recovery pending."""
    for attempt in range(5):
        store = copy(world, tmp_path / f"attempt-{attempt}")
        kill_at(world, store, CHECKPOINT, 0.0)
        if (store.parent / CHECKPOINT).exists():
            return store
    pytest.fail("five writers killed as their checkpoint began left no recovery pending")


def hold_write_lock(store: Path) -> subprocess.Popen:
    """Another process holding the store's write lock, as a live writer does (LadybugDB's lock is a
    POSIX record lock on the database file); it lets go when its stdin closes."""
    code = ("import fcntl, sys; f = open(sys.argv[1], 'rb+'); fcntl.lockf(f, fcntl.LOCK_EX); print('held', flush=True); "
            "sys.stdin.read()")  # fmt: skip
    holder = subprocess.Popen([sys.executable, "-c", code, str(store)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "held"
    return holder


def test_a_reader_waits_for_a_writer_holding_a_pending_store_and_then_says_what_to_do(pending):
    holder = hold_write_lock(pending)
    try:
        started = time.monotonic()
        with pytest.raises(StoreLocked) as refused:
            LadybugStore(pending, read_only=True, wait=0.5)
        assert time.monotonic() - started >= 0.5  # it waited the lock wait out
        assert "GAF_LOCK_WAIT" in refused.value.hint and "checkpoint" in refused.value.message
        assert (pending.parent / CHECKPOINT).exists()  # nothing was recovered under a writer's feet
    finally:
        holder.stdin.close()
        holder.wait(timeout=30)
    with LadybugStore(pending, read_only=True, wait=0.5) as reader:  # the writer gone, the reader recovers
        assert reader.recovered and verify(reader).ok


def test_a_reader_never_probes_the_lock_of_a_writer_in_its_own_process(world, tmp_path):
    """POSIX takes a process's lock on a file away when it unlocks any descriptor of that file: a
    reader probing the lock of a store this process writes would leave that writer unguarded."""
    store = copy(world, tmp_path / "own")
    with LadybugStore(store):
        assert _writer_holds(store)  # this process's writer, known without touching the lock
        second = subprocess.run([sys.executable, "-c", "import ladybug, sys; ladybug.Database(sys.argv[1])", str(store)],
                                capture_output=True, text=True, timeout=60)  # fmt: skip
        assert second.returncode != 0 and "lock" in second.stderr.lower()  # our writer still holds the store
    assert not _writer_holds(store)
