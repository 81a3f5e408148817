"""Long work says how far it got (issue 21, item 5): project, close and whatif tell a progress
callback their stages and counts; the CLI shows them through its Ticker (tests/test_ingest_stream.py
pins what a terminal and a log are told). The oracle is the world: how many claims it holds,
how many facts were accepted, how many combinations of changes a search of its size has."""

from __future__ import annotations

import math

from gaf.closure import close
from gaf.ledger import ingest
from gaf.policies import publish
from gaf.projection import project
from gaf.whatif import whatif
from tests.impact_truth import ACTIONS, AGENTS, GRANT
from tests.worlds import AT, REVIEWER_AGENT, build_ledger

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
