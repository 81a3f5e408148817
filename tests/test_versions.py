"""Versions cannot fork (issue 24, item 3): one record per name@version, whoever writes it.

A policy, rule set, action policy or ratified policy is named by its name and version
(``Record.UNIQUE``). Publishing other content under a name@version that exists is
refused by every write path — ``publish``, ``store.put`` (atomic and best-effort), ingest —
inside the write transaction, and on Neo4j by a uniqueness constraint as well, so writers
racing each other cannot both succeed. The oracle is the store's own count of records under
the name, read after the fact, and ``gaf verify``, which names a second record that got in
behind gaf's back.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gaf.errors import BatchRejected, PolicyConflict
from gaf.ledger import ingest
from gaf.policies import publish
from gaf.records import VerdictRules
from gaf.store import GafStore
from gaf.verify import verify
from tests.conftest import NOW
from tests.rentcase import forge

ROOT = Path(__file__).resolve().parents[1]
#: Processes publishing one name@version at once, each with its own content.
RACERS = 4


def _rules(qualifier: float, name: str = "forkable") -> VerdictRules:
    return VerdictRules(name=name, version=1, conclusion="c",
                        rules=[{"name": "r", "role": "warrant", "condition": ["p(?subject)"], "qualifier": qualifier}],
                        bands=[{"label": "yes", "low": 0.25, "high": 1}])  # fmt: skip


def _named(store: GafStore, name: str = "forkable") -> list[str]:
    return sorted(r.id for r in store.find(VerdictRules, name=name, version=1))


def test_other_content_under_a_published_name_and_version_is_refused_by_every_write_path(store):
    first = publish(store, _rules(0.5), at=NOW)
    assert publish(store, _rules(0.5), at=NOW) == first  # the same content again: a no-op
    with pytest.raises(PolicyConflict, match="forkable@1"):
        publish(store, _rules(0.6), at=NOW)
    with pytest.raises(BatchRejected) as refused:
        store.put([_rules(0.7)], at=NOW)
    assert [type(e) for e in refused.value.errors] == [PolicyConflict]
    report = ingest(store, [_rules(0.8).to_json()], recorded_at=NOW, mode="best_effort")
    assert report.write.written == [] and [type(f.error) for f in report.write.failed] == [PolicyConflict]
    kept = store.put([_rules(0.9), _rules(0.5, name="other")], at=NOW, mode="best_effort")
    assert kept.written == [_rules(0.5, name="other").id] and [f.id for f in kept.failed] == [_rules(0.9).id]
    with pytest.raises(BatchRejected):  # two under one name in one batch, neither stored before
        store.put([_rules(0.1, name="twice"), _rules(0.2, name="twice")], at=NOW)
    assert _named(store) == [first.id] and _named(store, "twice") == []
    assert verify(store).ok


def test_racing_publishers_of_one_name_and_version_leave_one_record(store, tmp_path):
    """RACERS processes run ``gaf rules add`` of other content under one name@version at once:
    exactly one is published, every other one is refused as a conflict (exit 2), none is lost
    to a store error."""
    files = []
    for i in range(RACERS):
        path = tmp_path / f"rules-{i}.yaml"
        path.write_text(
            "name: raced\nversion: 1\nconclusion: c\nbands: [{label: yes, low: 0.25, high: 1}]\n"
            f"rules: [{{name: r, role: warrant, condition: ['p(?subject)'], qualifier: 0.{i + 1}}}]\n"
        )
        files.append(path)
    target = store.location
    if store.dialect == "ladybug":
        store.close()  # one writer at a time on the embedded store: the test process lets go
    start = tmp_path / "start"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "GAF_LOCK_WAIT": "120"}
    go = "import pathlib, sys, time\nwhile not pathlib.Path(sys.argv[1]).exists(): time.sleep(0.005)\nfrom gaf.cli import main\nsys.argv = ['gaf', *sys.argv[2:]]\nmain()"
    racers = [subprocess.Popen([sys.executable, "-c", go, str(start), "rules", "add", str(f), "--store", target, "--at", "2026-07-14"],
                               cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
              for f in files]  # fmt: skip
    time.sleep(1.5)  # every racer has imported gaf and waits at the line
    start.touch()
    done = [(r.wait(timeout=300), r.stderr.read()) for r in racers]
    codes = sorted(code for code, _ in done)
    assert codes == [0] + [2] * (RACERS - 1), done
    assert all("already" in err for code, err in done if code == 2), done
    with GafStore.open(target) as reopened:
        assert len(_named(reopened, "raced")) == 1
        assert verify(reopened).ok


def test_verify_names_two_records_under_one_name_and_version_written_behind_gafs_back(store):
    first = publish(store, _rules(0.5), at=NOW)
    forged = _rules(0.6)
    if store.dialect == "neo4j":
        store._write(lambda tx: tx.run("DROP CONSTRAINT gaf_VerdictRules_name_version IF EXISTS"))
    try:
        forge(store, forged)
        found = [(d.id, d.problem) for d in verify(store).discrepancies]
        dropped = [("gaf_VerdictRules_name_version", "the store's constraint is missing: two nodes could share an id or a name@version "
                    "(gaf init declares it)")] if store.dialect == "neo4j" else []  # fmt: skip
        assert found == [(max(first.id, forged.id), f"rules forkable@1 is also {min(first.id, forged.id)}: two records under one name@version"),
                         *dropped,
                         (forged.id, "is stored but no write logged it: inserted out of band (a forgery, if it stands in for a record the log lists)")]  # fmt: skip
    finally:
        if store.dialect == "neo4j":
            store._write(lambda tx: tx.run("MATCH (n:VerdictRules {id: $id}) DETACH DELETE n", {"id": forged.id}))
            store.init()
