"""Runs that fail or are corrected: what rests on a run found wrong, and reopening it.

Two oracles, neither of which reads ``gaf.lineage``'s walk:

* which runs rest on the bad one is found by replaying the pipeline forward in time
  (``downstream_by_replay``): each run, in the order they began, read of each input the
  version the last run to complete a write of it before then wrote; a run is tainted when it
  is the bad one or read a version a tainted run wrote. gaf walks the other way, from the
  bad run's outputs to their readers, dataset by dataset, through the store's questions.
* what reopening the run decides is what a fresh store decides when the tainted runs'
  events were never sent (``decide``): the same policy, rules and times, no invalidation.

Worlds are ``tests.worlds.pipeline_world``: runs of a four-job pipeline that overlap in time,
some failing, some reported failed after completing.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings

import impact
from gaf import reopen
from gaf.closure import close
from gaf.errors import StoreError, UnknownReference
from gaf.ledger import ingest
from gaf.lineage import resting_on_run
from gaf.policies import publish
from gaf.projection import project
from gaf.records import Agent, Claim, Closure, Projection, RunInvalidation, Source, Verdict, VerdictRules
from gaf.store.ladybug import LadybugStore
from gaf.store.schema import SCHEMA_VERSION
from tests.worlds import PIPE_JOBS, PIPE_READS, PIPE_START, PIPE_WRITES, PipelineWorld, PipeRun, pipeline_world

#: When the events are ingested and the question decided; when the run is reopened.
NOW = datetime(2026, 11, 1, tzinfo=timezone.utc)
LATER = NOW + timedelta(days=1)
STEWARD = Agent(key="steward", name="data steward", agent_type="person")
JOBS = [Source(key=f"job:dbt/{j}", name=f"job:dbt/{j}") for j in PIPE_JOBS]
SUBJECT = "assertion:warehouse/published/total/positive"
POLICY = Projection(name="publish-report", version=1, question="May the quarterly report be published?",
                    scope={"subjects": ["assertion:*"]}, trust=[{"source": s.id, "predicates": ["success"]} for s in JOBS],
                    functional=["success"])  # fmt: skip
#: The same question under a policy for which a re-run of a job supersedes the run it rewrote.
SUPERSEDING = Projection.model_validate({k: v for k, v in POLICY.to_json().items() if k != "id"} | {"reruns": "supersede"})
RULES = VerdictRules(
    name="publish-report", version=1, conclusion="The report may be published.",
    rules=[{"name": "its-test-passed", "role": "warrant", "condition": ["success(?subject, true)"], "qualifier": 1.0},
           {"name": "its-test-failed", "role": "rebuttal", "condition": ["success(?subject, false)"], "qualifier": 1.0}],
    defeats=[{"attacker": "its-test-failed", "attacked": "its-test-passed"}],
    bands=[{"label": "publish", "low": 0.25, "high": 1}, {"label": "hold", "low": -1, "high": -0.25}],
)  # fmt: skip


# ---------------------------------------------------------------------- the oracles


def downstream_by_replay(world: PipelineWorld) -> set[int]:
    """The runs resting on the bad one, replaying the pipeline forward: a run read, of each
    input, what the last run to complete a write of it before the reader began wrote."""
    writes = sorted((r.completed, r.index, PIPE_WRITES[r.job]) for r in world.runs if r.completed is not None)
    tainted = {world.bad}
    for run in sorted(world.runs, key=lambda r: r.began):
        for dataset in PIPE_READS[run.job]:
            before = [(at, i) for at, i, d in writes if d == dataset and at <= run.began and i != run.index]
            if before and max(before)[1] in tainted:
                tainted.add(run.index)
    return tainted


def why_by_reading(world: PipelineWorld) -> str:
    """Why the bad run is wrong, read off the world: a FAIL after its COMPLETE, else a later
    completed run of its job (which writes the same dataset), else nothing shows it."""
    bad = world.runs[world.bad]
    if bad.completed is not None and bad.failed is not None and bad.failed > bad.completed:
        return "failed_after_complete"
    if bad.completed is not None and any(r.job == bad.job and r.completed is not None and r.completed > bad.completed for r in world.runs):
        return "rerun"
    return "declared"


def rewritten_by_reading(world: PipelineWorld) -> set[int]:
    """The runs a later completed run of the same job rewrote (a job writes one dataset), and
    those reported failed after they completed."""
    return {r.index for r in world.runs if r.completed is not None
            and (any(u.job == r.job and u.completed is not None and u.completed > r.completed for u in world.runs)
                 or (r.failed is not None and r.failed > r.completed))}  # fmt: skip


@contextmanager
def two_stores(tmp_path: Path) -> Iterator[tuple[LadybugStore, LadybugStore, Path]]:
    """A store for the world and a fresh one for the truth, in a directory of their own (one per example)."""
    with tempfile.TemporaryDirectory(dir=tmp_path) as tmp:
        here = Path(tmp)
        store, fresh = LadybugStore(here / "s.lbug"), LadybugStore(here / "fresh.lbug")
        try:
            yield store, fresh, here
        finally:
            store.close()
            fresh.close()


def ndjson(events: list[dict[str, Any]], path: Path) -> Path:
    path.write_text("".join(json.dumps(e) + "\n" for e in events))
    return path


def decide(store, events: list[dict[str, Any]], tmp: Path, at: datetime = NOW, policy: Projection = POLICY) -> str:
    """Ingest the events and decide the publication question as of ``at``: the closure's id."""
    ingest(store, [STEWARD, *JOBS], recorded_at=NOW)
    if events:
        ingest(store, ndjson(events, tmp / "events.ndjson"), recorded_at=NOW, fmt="openlineage")
    policy, rules = publish(store, policy, at=NOW), publish(store, RULES, at=NOW)
    projected = project(store, policy, as_of=at, reviewer=STEWARD.id, at=at)
    return close(store, projected.gaf.id, rules, subject=SUBJECT, as_of=at, closed_at=at).closure.id


def verdict(store, closure_id: str) -> tuple[str, float]:
    (v,) = store.find(Verdict, closure=closure_id)
    return v.label, v.strength


def without(world: PipelineWorld, runs: set[int]) -> list[dict[str, Any]]:
    ids = {world.runs[i].run_id for i in runs}
    return [e for e in world.events() if e["run"]["runId"] not in ids]


# ---------------------------------------------------------------------- a hand-made history


def _run(index: int, job: str, minutes: int, *, success: bool = True, failed_after: int | None = None, completes: bool = True) -> PipeRun:
    began = PIPE_START + timedelta(minutes=minutes)
    completed = began + timedelta(minutes=2, seconds=index + 1) if completes else None
    failed = (completed or began) + timedelta(minutes=failed_after) if failed_after is not None else None
    return PipeRun(index, job, began, completed, failed, success)


#: The seed runs and completes; the pipeline builds the report on it (its test passes); the
#: seed is corrected and re-run, and the report built again on it fails its test.
CORRECTED = PipelineWorld(
    [_run(0, "seed", 0), _run(1, "stage", 10), _run(2, "total", 20), _run(3, "report", 30),
     _run(4, "seed", 40), _run(5, "stage", 50), _run(6, "total", 60), _run(7, "report", 70, success=False)],
    bad=0,
)  # fmt: skip


def test_a_corrected_seed_reaches_the_publication_through_every_dataset_it_fed(store, tmp_path):
    closure = decide(store, CORRECTED.events()[:8], tmp_path)  # every event of runs 0 to 3, none of the re-run yet
    assert verdict(store, closure)[0] == "publish"
    ingest(store, ndjson(CORRECTED.events(), tmp_path / "all.ndjson"), recorded_at=NOW, fmt="openlineage")

    found = resting_on_run(store, CORRECTED.runs[0].run_id)
    assert found.why == "rerun" and found.wrote == ["dataset:warehouse/raw"]
    assert {p[-1] for p in found.claims.values()} == {CORRECTED.runs[i].subject for i in downstream_by_replay(CORRECTED)} \
        == {CORRECTED.runs[i].subject for i in range(4)}
    report_run = CORRECTED.runs[3].subject
    assert [p for p in found.claims.values() if p[-1] == report_run][0] == [
        CORRECTED.runs[0].subject, "dataset:warehouse/raw", CORRECTED.runs[1].subject, "dataset:warehouse/staged",
        CORRECTED.runs[3].subject]  # report read staged (and summed): the first path found, by dataset order

    report = impact.run_invalidated(store, CORRECTED.runs[0].subject)
    (moved,) = report.closures
    assert moved.closure == closure and moved.after is not None and moved.after["label"] == "hold"
    assert any(a.kind == "closure" and a.id == closure for a in report.affected)

    done = reopen.after_run_invalidation(store, CORRECTED.runs[0].run_id, impact=impact, by=STEWARD.id,
                                         reason="the seed was corrected", reviewer=STEWARD.id, at=NOW, as_of=NOW)  # fmt: skip
    (step,) = done.superseded
    assert step["old"] == closure and (step["old_label"], step["new_label"]) == ("publish", "hold")
    (event,) = store.find(RunInvalidation)
    assert event.why == "rerun" and set(event.claims) == set(found.claims) and done.event.cause == event.id
    fresh = LadybugStore(tmp_path / "fresh.lbug")
    try:
        truth = verdict(fresh, decide(fresh, without(CORRECTED, downstream_by_replay(CORRECTED)), tmp_path))
    finally:
        fresh.close()
    assert verdict(store, step["new"]) == truth


def test_a_run_no_claim_reports_is_refused_and_an_old_store_must_migrate_first(store):
    with pytest.raises(UnknownReference, match="no claim .* reports the run"):
        resting_on_run(store, "00000000-0000-4000-8000-000000000099")
    assert store.find(RunInvalidation) == []


def test_a_store_older_than_version_6_must_migrate_before_a_run_is_reopened_and_then_can(store, tmp_path):
    from gaf.migrate import migrate
    from gaf.records import SchemaVersion
    from gaf.store.schema import SCHEMA_VERSION

    closure = decide(store, CORRECTED.events(), tmp_path)
    store._write(lambda tx: tx.run("MATCH (s:SchemaVersion) DELETE s"))  # as gaf before run invalidations left it
    store.put([SchemaVersion(version=5, at=NOW)], at=NOW)
    assert store.schema_version() == 5
    counts = store.counts()
    with pytest.raises(StoreError, match="gaf migrate"):
        reopen.after_run_invalidation(store, CORRECTED.runs[0].run_id, impact=impact, by=STEWARD.id, reason="r",
                                      reviewer=STEWARD.id, at=NOW, as_of=NOW)  # fmt: skip
    assert store.counts() == counts
    done = migrate(store, at=LATER)
    assert (done.before, done.after) == (5, SCHEMA_VERSION)
    assert any("run invalidations" in v.note for v in store.find(SchemaVersion) if v.version == SCHEMA_VERSION)
    reopened = reopen.after_run_invalidation(store, CORRECTED.runs[0].run_id, impact=impact, by=STEWARD.id, reason="r",
                                             reviewer=STEWARD.id, at=LATER, as_of=LATER)  # fmt: skip
    assert [s["old"] for s in reopened.superseded] == [closure]


# ---------------------------------------------------------------------- random pipelines


@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@example(CORRECTED)
@given(pipeline_world())
def test_the_runs_resting_on_a_bad_run_are_those_a_forward_replay_of_the_pipeline_finds(tmp_path, world):
    with tempfile.TemporaryDirectory(dir=tmp_path) as tmp:
        store = LadybugStore(Path(tmp) / "s.lbug")
        try:
            ingest(store, ndjson(world.events(), Path(tmp) / "e.ndjson"), recorded_at=NOW, fmt="openlineage")
            found = resting_on_run(store, world.runs[world.bad].subject)
        finally:
            store.close()
    by_subject = {r.subject: r for r in world.runs}
    assert {p[-1] for p in found.claims.values()} == {world.runs[i].subject for i in downstream_by_replay(world)}
    assert found.why == why_by_reading(world)
    for path in found.claims.values():  # each step: a run wrote the dataset, the next read it
        for writer, dataset, reader in zip(path[0::2], path[1::2], path[2::2]):
            assert dataset == f"dataset:warehouse/{PIPE_WRITES[by_subject[writer].job]}"
            assert dataset.removeprefix("dataset:warehouse/") in PIPE_READS[by_subject[reader].job]


@settings(max_examples=15, suppress_health_check=[HealthCheck.function_scoped_fixture])
@example(CORRECTED)
@given(pipeline_world())
def test_reopening_a_run_decides_what_a_store_that_never_heard_from_its_downstream_decides(tmp_path, world):
    with two_stores(tmp_path) as (store, fresh, here):
        closure = decide(store, world.events(), here)
        before = verdict(store, closure)
        truth = verdict(fresh, decide(fresh, without(world, downstream_by_replay(world)), here, at=LATER))
        report = impact.run_invalidated(store, world.runs[world.bad].subject)
        moved = {c.closure: c for c in report.closures}
        if closure in moved:
            after = moved[closure].after
            assert after is not None and (after["label"], after["strength"]) == truth
        else:
            assert before == truth, "impact says the closure holds; deciding again without the run moves it"
        done = reopen.after_run_invalidation(store, world.runs[world.bad].run_id, impact=impact, by=STEWARD.id,
                                             reason="found wrong", reviewer=STEWARD.id, at=LATER, as_of=LATER)  # fmt: skip
        standing = done.superseded[0]["new"] if done.superseded else closure
        assert store.superseded_by(closure) == ([standing] if done.superseded else [])
        assert verdict(store, standing) == truth
        assert store.get(standing, Closure).subject == SUBJECT


def test_the_workbench_page_of_a_run_names_each_decision_with_its_dataset_path(store, tmp_path):
    from gaf.web.pages import impact_run_page, record_page

    closure = decide(store, CORRECTED.events()[:8], tmp_path)
    ingest(store, ndjson(CORRECTED.events(), tmp_path / "all.ndjson"), recorded_at=NOW, fmt="openlineage")
    title, html = impact_run_page(store, CORRECTED.runs[0].run_id, "", 60.0)
    assert title == f"Impact of {CORRECTED.runs[0].subject}"
    assert "Why the run is wrong: rerun" in html and "dataset:warehouse/raw" in html
    section = html[html.index('id="paths"'):html.index('id="decisions"')]
    assert closure in section and "dataset:warehouse/staged" in section  # report's claim: seed → raw → stage → staged → report
    (report,) = [c for c in store.find(Claim) if c.observed_at == CORRECTED.runs[0].completed]
    _, page = record_page(store, report.id)
    assert f'href="/impact/run/{CORRECTED.runs[0].subject}"' in page  # a report's page leads to its run's impact


#: The report's last run passes its test, then is reported failed: under ``supersede`` it does
#: not stand, nor does the run before it, which it rewrote.
FAILED_LAST = PipelineWorld([_run(0, "report", 0, success=False), _run(1, "report", 10, failed_after=20)], bad=1)


@settings(max_examples=15, suppress_health_check=[HealthCheck.function_scoped_fixture])
@example(CORRECTED)
@example(FAILED_LAST)
@given(pipeline_world())
def test_under_reruns_supersede_a_policy_decides_what_a_store_without_the_rewritten_runs_decides(tmp_path, world):
    with two_stores(tmp_path) as (store, fresh, here):
        got = verdict(store, decide(store, world.events(), here, policy=SUPERSEDING))
        truth = verdict(fresh, decide(fresh, without(world, rewritten_by_reading(world)), here))
    assert got == truth
    if world == CORRECTED:
        assert got[0] == "hold"  # the corrected report's failed test stands; the first report's pass is rewritten


def test_the_cli_reports_and_reopens_a_run_as_the_library_does_and_refuses_an_unknown_one(tmp_path):
    import os
    import subprocess
    import sys

    store_dir = tmp_path / "s.lbug"
    store = LadybugStore(store_dir)
    try:
        closure = decide(store, CORRECTED.events()[:8], tmp_path)
        ingest(store, ndjson(CORRECTED.events(), tmp_path / "all.ndjson"), recorded_at=NOW, fmt="openlineage")
        direct = impact.run_invalidated(store, CORRECTED.runs[0].subject).to_dict()
    finally:
        store.close()
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1]), "COLUMNS": "80"}

    def gaf(*a: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "gaf", *a, "--store", str(store_dir)], capture_output=True, text=True, env=env)

    reported = gaf("impact", "run", CORRECTED.runs[0].run_id, "--json", "--quiet")
    assert reported.returncode == 0, reported.stderr
    assert json.loads(reported.stdout) == json.loads(json.dumps(direct))
    table = gaf("impact", "run", CORRECTED.runs[0].run_id, "--quiet")
    assert "the run is wrong: rerun" in table.stdout and "dataset:warehouse/raw" in table.stdout
    assert max(map(len, table.stdout.splitlines())) <= 80
    unknown = gaf("impact", "run", "00000000-0000-4000-8000-000000000099", "--json")
    assert unknown.returncode == 2 and json.loads(unknown.stdout)["error"] == "UnknownReference"
    done = gaf("reopen", "run", CORRECTED.runs[0].run_id, "--by", "steward", "--reason", "the seed was corrected",
               "--reviewer", "steward", "--as-of", "2026-11-02", "--at", "2026-11-02T00:00:00Z", "--json", "--quiet")
    assert done.returncode == 0, done.stderr
    (step,) = json.loads(done.stdout)["superseded"]
    assert step["old"] == closure and (step["old_label"], step["new_label"]) == ("publish", "hold")


def test_an_embedded_store_declared_before_run_invalidations_gains_their_table_and_relationships_and_migrates(tmp_path):
    """A store file shaped as the gaf of version 5 left it (no RunInvalidation table, TRIGGERED_BY
    and DECLARED_BY without its pairs: dropped here from a new store) is brought to the new
    shape when opened for writing; ``gaf migrate`` stamps it, and a run can be reopened in it."""
    from gaf.migrate import migrate
    from gaf.records import SchemaVersion

    path = tmp_path / "old.lbug"
    old = LadybugStore(path)
    try:
        closure = decide(old, CORRECTED.events(), tmp_path)
        old._write(lambda tx: tx.run("MATCH (s:SchemaVersion) DELETE s"))
        old.put([SchemaVersion(version=5, at=NOW)], at=NOW)  # as the gaf of version 5 stamped it
        for ddl in ("DROP TABLE VOIDS", "DROP TABLE EVIDENCED_BY", "ALTER TABLE TRIGGERED_BY DROP FROM Reopen TO RunInvalidation",
                    "ALTER TABLE DECLARED_BY DROP FROM RunInvalidation TO Agent", "DROP TABLE RunInvalidation"):  # fmt: skip
            old._conn.execute(ddl)
    finally:
        old.close()
    store = LadybugStore(path)  # opened for writing: the table and the pairs are declared again
    try:
        assert store.schema_version() == 5
        assert (migrate(store, at=LATER).before, store.schema_version()) == (5, SCHEMA_VERSION)
        done = reopen.after_run_invalidation(store, CORRECTED.runs[0].run_id, impact=impact, by=STEWARD.id, reason="r",
                                             reviewer=STEWARD.id, at=LATER, as_of=LATER)  # fmt: skip
        assert [s["old"] for s in done.superseded] == [closure] and len(store.find(RunInvalidation)) == 1
    finally:
        store.close()
