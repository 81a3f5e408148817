"""Client processes for the fault and concurrency tests: gaf's own code, in a process of its own.

A fault test must be able to kill a client, or the server under it, at a known
point: in the middle of a transaction whose statements have all run but which is
not committed. ``--pause-at N`` gives it that point without touching the store's
code: the N-th write transaction of the process (its version stamp, when it declares a new
store, not counted) runs its statements, then the
process writes ``paused`` into the signal directory and waits for ``go`` (or for
the kill) before it lets the transaction commit. ``--pause-before N`` stops it at
the start of that transaction instead, before any statement is sent.

    python -m tests.workers [--pause-at|--pause-before N --signal DIR] ingest FILE [gaf ingest options]
    python -m tests.workers [--pause-at N --signal DIR] accept STORE GROUP
    python -m tests.workers write-loop STORE STOPFILE
    python -m tests.workers ingest-accept STORE FILE GROUP START_FILE
    python -m tests.workers pay STORE START_FILE VERDICT GRANT POLICY AGENT KEY AMOUNT

``ingest`` is the ``gaf ingest`` command itself. ``accept`` evaluates the
reliability policy and accepts, in one atomic batch, every candidate about the
payments of GROUP; it prints the ids it wrote or found. ``pay`` waits for START_FILE, then asks for one payment of AMOUNT on
``order:po-1`` under the order case's cumulative amount rule and prints whether it
executed, or why it was refused. ``ingest-accept`` waits
for START_FILE (so several processes start together), ingests FILE in small
batches, then accepts the candidates of GROUP, printing every id it was told is
stored.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from gaf.records import Agent, Claim, Record, Source
from gaf.store.base import GafStore

ROOT = Path(__file__).resolve().parent.parent
POLICY = ROOT / "tests" / "fixtures" / "reliability" / "policy.yaml"
#: The time every worker records and decides at, so a re-run writes the same ids.
AT = datetime(2026, 11, 30, 12, 0, tzinfo=timezone.utc)
BANK = Agent(key="bank", name="The bank", agent_type="organisation")
LEDGER = Source(key="ledger", name="The bank's ledger")


def payment_claims(group: str, indexes: range) -> list[Claim]:
    """One ledger claim per payment ``payment:GROUP-i``: the same index gives the same claim."""
    return [
        Claim(
            source=LEDGER.id,
            observer=BANK.id,
            observed_at="2026-07-05T10:00:00Z",
            recorded_at=AT,
            transformation="api_export",
            statements=[{"subject": f"payment:{group}-{i}", "predicate": "amount", "value": 100 + i}],
        )
        for i in indexes
    ]


def write_jsonl(path: Path, records: list[Record]) -> Path:
    """A claims file that declares the bank and its ledger, then the claims."""
    lines = [json.dumps(r.to_json()) for r in [BANK, LEDGER, *records]]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def ingest_order(claims: list[Claim]) -> list[str]:
    """The ids in the order ``gaf ingest`` writes them: agents, sources, then claims as read."""
    return [BANK.id, LEDGER.id, *(c.id for c in claims)]


def duplicated(store: GafStore) -> int:
    """Ids stored on more than one node of their label (the constraints should make this 0)."""
    extra = 0
    for label in sorted(store.schema().nodes):
        rows = store.read(f"MATCH (n:{label}) WITH n.id AS id, count(*) AS c WHERE c > 1 RETURN sum(c - 1) AS extra")
        extra += (rows[0]["extra"] or 0) if rows else 0
    return extra


# ---------------------------------------------------------------------- the pause


def pause_writes(at: int, signal: Path, *, before: bool = False, timeout: float = 120.0) -> None:
    """Make the ``at``-th write transaction of this process stop until told: before its commit
    (its statements all run), or with ``before`` at its start (nothing run yet)."""
    from gaf.store.ladybug import LadybugStore
    from gaf.store.neo4j import Neo4jStore

    from gaf.store.base import GafStore

    seen = [0]
    stamping = [False]

    def hold() -> None:
        if stamping[0]:
            return  # the version stamp a new store gets when it is declared is not one of the writes counted
        seen[0] += 1
        if seen[0] == at:
            (signal / "paused").write_text(str(at))
            deadline = time.monotonic() + timeout
            while not (signal / "go").exists() and time.monotonic() < deadline:
                time.sleep(0.05)

    def held(work: Callable) -> Callable:
        if before:
            return lambda tx: (hold(), work(tx))[1]
        return lambda tx: (out := work(tx), hold(), out)[2]

    for cls in (Neo4jStore, LadybugStore):
        original: Callable = cls._write

        def _write(self, work, _original=original):  # type: ignore[no-untyped-def]
            return _original(self, held(work))

        cls._write = _write  # type: ignore[method-assign]

    stamp: Callable = GafStore._stamp_if_new

    def _stamp_if_new(self):  # type: ignore[no-untyped-def]
        stamping[0] = True
        try:
            return stamp(self)
        finally:
            stamping[0] = False

    GafStore._stamp_if_new = _stamp_if_new  # type: ignore[method-assign]


# ---------------------------------------------------------------------- the commands


def accept_group(store: GafStore, group: str) -> dict[str, Any]:
    """Evaluate the reliability policy and accept the candidates about GROUP's payments, atomically."""
    from gaf.policies import get, publish, read_policy
    from gaf.projection import accept, evaluate

    publish(store, read_policy(store, POLICY), at=AT)
    policy = get(store, "ledger-amounts")
    evaluated = evaluate(store, policy, as_of=AT)
    chosen = [c for c in evaluated.candidates if c.proposition.subject.startswith(f"payment:{group}-")]
    report = accept(store, evaluated, chosen, reviewer=BANK.id, at=AT, reason=f"accept group {group}")
    return {
        "records": [r.id for r in report.records],
        "facts": [c.fact.id for c in chosen],
        "written": report.write.written,
        "existing": report.write.existing,
    }


def main(argv: list[str]) -> int:
    """Run one command; a typed error is printed as JSON with its exit code, as the CLI does."""
    from gaf.errors import GafError

    try:
        return _command(argv)
    except GafError as exc:
        print(json.dumps(exc.to_dict()))
        return exc.exit_code


def _command(argv: list[str]) -> int:
    if argv[:1] in (["--pause-at"], ["--pause-before"]):
        pause_writes(int(argv[1]), Path(argv[3]), before=argv[0] == "--pause-before")
        argv = argv[4:]
    command, args = argv[0], argv[1:]
    if command == "ingest":
        from gaf.cli import app

        app(["ingest", *args], prog_name="gaf")  # exits with the command's own code
    if command == "write-loop":
        from gaf.ledger import ingest

        store_at, stop = args
        batches = 0
        while not Path(stop).exists():  # a writer that opens, writes a batch and closes, again and again
            with GafStore.open(store_at) as store:
                ingest(store, [BANK, LEDGER, *payment_claims(f"loop{batches}", range(20))], recorded_at=AT)
            batches += 1
        print(json.dumps({"batches": batches}))
        return 0
    if command == "accept":
        store_at, group = args
        with GafStore.open(store_at) as store:
            print(json.dumps(accept_group(store, group)))
        return 0
    if command == "ingest-accept":
        from gaf.ledger import ingest

        store_at, path, group, start = args
        while not Path(start).exists():
            time.sleep(0.01)
        began = time.time()
        with GafStore.open(store_at) as store:
            report = ingest(store, path, recorded_at=AT, batch_size=250)
            out = accept_group(store, group)
        out["began"], out["ended"] = began, time.time()
        out["ingest_written"], out["ingest_existing"] = report.write.written, report.write.existing
        print(json.dumps(out))
        return 0
    if command == "pay":
        from gaf.actions import ActionRefused, act

        store_at, start, verdict, grant, policy, agent, key, amount = args
        while not Path(start).exists():
            time.sleep(0.01)
        with GafStore.open(store_at) as store:
            try:
                done = act(store, verdict=verdict, action_kind="pay", subject="order:po-1", authorised_by=agent, grant=grant,
                           policy=policy, idempotency_key=key, at=AT, amount=int(amount))  # fmt: skip
            except ActionRefused as exc:
                print(json.dumps({"executed": False, "refused": exc.message}))
                return 0
        print(json.dumps({"executed": done.effect, "refused": None}))
        return 0
    print(f"unknown command {command!r}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
