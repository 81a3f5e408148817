"""Long work says how far it got (issue 21, item 5): project, close, whatif, sway, verify, impact
(its walk and its confirmation), the reopen workflows, the PROV export of a whole store and ingest
tell one progress callback (``gaf.types.Progress``) their stages and counts; the CLI shows them
through its Ticker (tests/test_ingest_stream.py pins what a terminal and a log are told). The
oracle is the world: how many claims it holds, how many closures it decided, how many
combinations of changes a search of its size has, how many items a file holds."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from typer.testing import CliRunner

import impact
from gaf.cli import app
from gaf.cli import output
from gaf.closure import close
from gaf.ledger import CHECKING as ITEMS_CHECKED
from gaf.ledger import WRITING, ingest
from gaf.lifecycle import sway
from gaf.policies import publish
from gaf.projection import project
from gaf.records import Closure, Projection, Source
from gaf.reopen import FOLLOWING, REOPENING, after_invalidation, after_new_claims, on_appeal
from gaf.verify import CHECKING, verify
from gaf.whatif import whatif
from impact.analysis import WALKING
from impact.confirm import CONFIRMING
from prov_export.export import MAPPING, stream_all
from tests.conftest import NOW, RENT, ROOT
from tests.impact_truth import ACTIONS, AGENTS, GRANT, embedded, materialise
from tests.rentcase import AFTER_E, agent_id, close_both, closed_store
from tests.worlds import AT, REVIEWER_AGENT, build_ledger, ledger_world

CASES = 5


def _world():
    said = [(0, [(f"case:{i}", "p0", "affirmed", True)]) for i in range(CASES)]
    said += [(1, [(f"case:{i}", "p1", "denied", True)]) for i in range(CASES)]
    verdict = [{"role": "warrant", "condition": ["p0(?subject)"], "qualifier": 0.5},
               {"role": "rebuttal", "condition": ["p1(?subject)"], "qualifier": 0.5}]  # fmt: skip
    return build_ledger([(["p0"], True), (["p1"], False)], 0, [], [], verdict, [], said, ["case:0"])


class Told:
    def __init__(self) -> None:
        self.calls: list[tuple[str, int, int | None]] = []

    def __call__(self, stage: str, done: int, total: int | None = None) -> None:
        self.calls.append((stage, done, total))

    def stages(self) -> list[str]:
        return list(dict.fromkeys(stage for stage, _, _ in self.calls))

    def of(self, stage: str) -> list[tuple[int, int | None]]:
        return [(done, total) for s, done, total in self.calls if s == stage]

    def last(self, stage: str) -> tuple[int, int | None]:
        return self.of(stage)[-1]

    def check(self) -> None:
        """Within each stage: one total, counts that never go back nor past it, the last count the total."""
        for stage in self.stages():
            counts = self.of(stage)
            assert len({total for _, total in counts}) == 1, (stage, counts)
            assert [done for done, _ in counts] == sorted(done for done, _ in counts), (stage, counts)
            total = counts[0][1]
            if total is not None:
                assert all(done <= total for done, _ in counts) and counts[-1][0] == total, (stage, counts)


def test_project_close_and_whatif_tell_their_stages_with_counts_from_the_world(ladybug_store):
    store, world = ladybug_store, _world()
    ingest(store, [*AGENTS, *world.sources, *world.claims, ACTIONS, GRANT], recorded_at=AT)
    policy, rules = publish(store, world.policy, at=AT), publish(store, world.rules, at=AT)

    told = Told()
    projected = project(store, policy, as_of=AT, reviewer=REVIEWER_AGENT.id, at=AT, progress=told)
    assert told.stages() == ["reading the claims", "weighing the claims", "writing the accepted facts"]
    assert ("weighing the claims", len(world.claims), len(world.claims)) in told.calls
    assert told.calls[-1] == ("writing the accepted facts", len(projected.accepted), len(projected.accepted))

    told = Told()
    closed = close(store, projected.gaf.id, rules, subject="case:0", as_of=AT, closed_at=AT, progress=told)
    assert told.stages() == ["reading the claims", "weighing the claims", "reading the GAF's facts", "judging", "writing the closure"]
    assert ("reading the GAF's facts", len(projected.gaf.facts), len(projected.gaf.facts)) in told.calls

    told = Told()
    report = whatif(store, closed.closure.id, max_size=2, progress=told)
    assert report.complete and told.stages() == ["reading the cone", "trying changes"]
    tried = [(done, total) for stage, done, total in told.calls if stage == "trying changes"]
    total = tried[0][1]
    assert [done for done, _ in tried] == list(range(total + 1)) and {t for _, t in tried} == {total}
    # as many combinations as n changes give at sizes 1 and 2, for the n that total names
    assert any(math.comb(n, 1) + math.comb(n, 2) == total for n in range(1, 200)) and report.tried <= total


# ---------------------------------------------------------------------- the library tells, on random worlds


# each example decides its world in a fresh store of its own under tmp_path (``embedded``)
@settings(max_examples=8, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(world=ledger_world())
def test_on_random_worlds_verify_sway_impact_and_export_count_up_to_what_the_world_holds(tmp_path, world):
    with embedded(tmp_path)("progress") as store:
        made = materialise(store, world)
        (policy,) = store.find(Projection, name=world.policy.name)

        told = Told()
        assert sway(store, policy, policy, progress=told).judged == len(world.subjects)
        told.check()
        assert told.last("judging the closures again") == (len(world.subjects),) * 2

        told = Told()
        checked = verify(store, progress=told).checked
        told.check()
        assert told.stages() == [CHECKING]
        # every claim and source is a record checked, and so is every closure decided
        assert told.last(CHECKING) == (checked, checked)
        assert checked >= len(world.claims) + len(world.sources) + len(made.closures)

        told = Told()
        exported = stream_all(store, tmp_path / "store.nt", force=True, progress=told)
        told.check()
        # every record verify checked but those about the store itself: its version stamps, write log and subject keys
        mapped = checked - sum(len(store.find(kind)) for kind in ("schema_version", "log_entry", "subject_key"))
        assert told.last(MAPPING) == (exported.records, exported.records) == (mapped, mapped)

        # A source's claims fall into every closure's cone (one policy over case:*, every predicate
        # read): all closures are confirmed when it said anything, none when not.
        spoke = {c.source for c in world.claims}
        for source in world.sources:
            told = Told()
            report = impact.source_invalidated(store, source.id, progress=told)
            told.check()
            assert told.stages() == [WALKING, CONFIRMING], source.key
            reached = len(world.subjects) if source.id in spoke else 0
            assert told.last(CONFIRMING) == (reached, reached), source.key
            # the walk's count is the source and every record found resting on something it reached
            walked = {source.id} | {dependent for dependent, _, _ in report.edges}
            assert told.last(WALKING)[0] == len(walked) >= 1 + sum(c.source == source.id for c in world.claims), source.key


# ---------------------------------------------------------------------- the library tells, on the rent case


def test_ingest_counts_the_items_of_the_file_then_the_records_written(store):
    told = Told()
    report = ingest(store, RENT / "claims.yaml", recorded_at=NOW, batch_size=3, progress=told)
    told.check()
    items = len(yaml.safe_load((RENT / "claims.yaml").read_text()))
    assert told.stages() == [ITEMS_CHECKED, WRITING]
    assert told.last(ITEMS_CHECKED) == (items, None) and report.read == items
    written = report.to_dict()["written"]
    assert told.last(WRITING) == (items, items) and written == items  # each item one record (its propositions go with it)
    assert [done for done, _ in told.of(WRITING)] == [*range(0, items, 3), items]  # one report a batch


def test_a_reopen_counts_the_closures_it_reconsiders_after_the_impact_stages(store):
    first, second = close_both(store)
    clerk = agent_id(store, "registry-clerk")
    told = Told()
    on_appeal(store, second.closure.id, by=agent_id(store, "tenant-b"), grounds="g", reviewer=clerk, at=NOW, as_of=AFTER_E,
              progress=told)  # fmt: skip
    told.check()
    assert told.stages() == [REOPENING] and told.last(REOPENING) == (1, 1)

    told = Told()
    (ledger,) = store.find(Source, key="bank-ledger")
    standing = [c for c in store.find(Closure) if not store.superseded_by(c.id)]  # the bank's ledger is in every one's cone
    done = after_invalidation(store, ledger.id, impact=impact, by=clerk, reason="r", invalid_from=AFTER_E, reviewer=clerk,
                              at=NOW, as_of=NOW, progress=told)  # fmt: skip
    told.check()
    assert told.stages() == [WALKING, CONFIRMING, REOPENING]
    # every closure the impact analysis reported is reconsidered, the superseded ones left as they stand
    reached = [i for i in done.event.impact if i.startswith("closure:")]
    assert told.last(REOPENING) == (len(reached), len(reached)) and len(reached) >= 1
    assert told.last(CONFIRMING) == (len(standing), len(standing)) == (1, 1)

    told = Told()
    (claim_e,) = ingest(store, RENT / "claim-e.yaml", recorded_at=NOW).write.existing
    after_new_claims(store, [store.get(claim_e)], impact=impact, reviewer=clerk, at=NOW, as_of=NOW, progress=told)
    told.check()
    assert told.stages() == [FOLLOWING] and told.last(FOLLOWING) == (1, 1)


# ---------------------------------------------------------------------- the CLI shows


runner = CliRunner()


@pytest.fixture
def rent(tmp_path) -> str:
    """An embedded store with the rent case closed twice: its path."""
    path = str(tmp_path / "rent.lbug")
    closed_store(path)
    return path


LOOKS = {"verify": ["verify"], "impact": ["impact", "source", "bank-ledger"]}


def _progress_lines(stderr: str, command: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith(f"{command}") and "/s)" in line]


@pytest.mark.parametrize("command", sorted(LOOKS))
def test_verify_and_impact_tell_a_log_nothing_within_its_first_seconds_with_json_or_without(rent, command):
    for flags in ([], ["--json"]):
        result = runner.invoke(app, [*LOOKS[command], "--store", rent, *flags])
        assert result.exit_code == 0, result.output
        assert result.stderr == "", (flags, result.stderr)  # read-only: not even the store line
    # Piped, as a script runs it: stdout is the output alone, stderr empty.
    piped = subprocess.run([sys.executable, "-m", "gaf", *LOOKS[command], "--store", rent, "--json"], capture_output=True,
                           text=True, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120)  # fmt: skip
    assert piped.returncode == 0 and piped.stderr == "", piped.stderr
    json.loads(piped.stdout)


@pytest.mark.parametrize("command", sorted(LOOKS))
def test_verify_and_impact_tell_a_log_their_stages_once_past_its_wait_and_nothing_with_quiet(rent, command, monkeypatch):
    monkeypatch.setattr(output, "PROGRESS_EVERY", 0.0)  # every piece of work is long: the log is told at once
    told = runner.invoke(app, [*LOOKS[command], "--store", rent, "--json"])
    assert told.exit_code == 0, told.output
    json.loads(told.stdout)  # stdout stays the JSON alone
    lines = _progress_lines(told.stderr, command)
    assert lines, told.stderr
    last = "verify: checking the records" if command == "verify" else "impact source bank-ledger: confirming the closures"
    assert lines[-1].startswith(last), lines
    quiet = runner.invoke(app, [*LOOKS[command], "--store", rent, "--json", "--quiet"])
    assert quiet.exit_code == 0 and quiet.stderr == "", quiet.stderr
