"""Nothing silent: a declaration that closes nothing, or a GAF closed at the wrong time, is said.

A completeness declaration that does not cover the question's period, or whose source
is not trusted for its predicate, used to be dropped without a word — and the closure
recorded for ever, on the strength of an absence nobody vouched for. Now it is warned
at ``policy add`` and ``project`` and listed with its reason in the closure; a GAF
closed at another as-of than the one it was projected at is refused with both.
"""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from gaf import arith
from gaf.cli import app
from gaf.closure import close, replay
from gaf.closure import LIMITS_RECORDED, _limits_reached
from gaf.derive import Entry, LimitHit, Truth
from gaf.errors import InvalidRecord
from gaf.ledger import ingest
from gaf.policies import publish, read_policy, read_rules
from gaf.projection import closed_scopes, project
from gaf.projection.facts import PolicyFacts
from gaf.records import VerdictRules
from gaf.verdict import judge
from tests.conftest import NOW, RENT
from tests.rentcase import AFTER_E, BEFORE_E, RENT_JULY, agent_id
from tests.test_aggregates import ORDER_CASE, receiving_log
from tests.worlds import AT, GroupedWorld

runner = CliRunner()

#: The business reading of "July": an end on the last day, which half-open intervals leave out.
LAST_DAY = "valid: {start: 2026-07-01, end: 2026-07-31}"


def _policy_with(tmp_path: Path, *, short_credit: bool = False, untrusted_reversals: bool = False) -> Path:
    """The rent policy, its credit declaration ending on 31 July and/or its reversal one made by the tenant."""
    text = (RENT / "policy.yaml").read_text(encoding="utf-8")
    if short_credit:  # the first valid interval in the file is the credit declaration's
        text = text.replace("valid: {start: 2026-07-01, end: 2026-08-01}", LAST_DAY, 1)
    if untrusted_reversals:
        text = text.replace("  - source: bank-ledger           # ... and for reversals of July payments", "  - source: tenant-messages", 1)
    path = tmp_path / "policy.yaml"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture(params=["ladybug", "neo4j"])
def target(request, tmp_path) -> str:
    if request.param == "ladybug":
        return str(tmp_path / "cli.lbug")
    return request.getfixturevalue("neo4j_store").location


def test_a_declaration_ending_on_the_last_day_is_warned_at_policy_add_and_project(target, tmp_path):
    assert runner.invoke(app, ["ingest", str(RENT / "claims.yaml"), "--store", target]).exit_code == 0
    added = runner.invoke(app, ["policy", "add", str(_policy_with(tmp_path, short_credit=True)), "--store", target])
    assert added.exit_code == 0, added.output
    assert "closes no scope" in added.stderr and "interval ends are exclusive" in added.stderr
    assert "credited_to(*, account:landlord-a): covers" in added.stderr
    projected = runner.invoke(app, ["project", "rent-delinquency", "--reviewer", "registry-clerk",
                                    "--as-of", "2026-12-01", "--store", target, "--json"])  # fmt: skip
    assert projected.exit_code == 0, projected.output
    assert "closes no scope" in projected.stderr
    (ignored,) = json.loads(projected.stdout)["ignored_completeness"]
    assert "covers [2026-07-01T00:00:00.000Z, 2026-07-31T00:00:00.000Z)" in ignored["reason"]


def test_a_closure_lists_the_declarations_it_ignored_and_the_claims_it_excluded(store, tmp_path):
    ingest(store, RENT / "claims.yaml", recorded_at=NOW)
    policy = publish(store, read_policy(store, _policy_with(tmp_path, short_credit=True, untrusted_reversals=True)), at=NOW)
    used, ignored = closed_scopes(policy, BEFORE_E)
    assert used == []
    reasons = sorted(i.reason for i in ignored)
    assert reasons[0].startswith("credited_to(*, account:landlord-a): covers [2026-07-01T00:00:00.000Z, 2026-07-31T00:00:00.000Z)")
    assert reasons[1] == "reversed(payment:*): its source is not trusted for reversed, so its silence proves nothing"
    rules = publish(store, read_rules(RENT / "verdict-rules.yaml"), at=NOW)
    at = NOW + timedelta(hours=1)
    projected = project(store, policy, as_of=at, reviewer=agent_id(store, "registry-clerk"), at=at)
    closed = close(store, projected.gaf.id, rules, subject=RENT_JULY, as_of=at, closed_at=at)
    assert [i.reason for i in closed.closure.ignored_completeness] == [i.reason for i in ignored]
    assert closed.closure.completeness == []
    # The landlord's "unpaid" and the tenant's "paid" are listed, with why, and stored.
    excluded = store.get_many(closed.closure.excluded)
    assert len(excluded) == 2 and {e.reason for e in excluded.values()} == {"a party's statement of the conclusion is not evidence of it"}
    assert replay(store, closed.closure.id).identical


def test_closing_a_gaf_at_another_as_of_than_it_was_projected_at_is_refused(store):
    ingest(store, RENT / "claims.yaml", recorded_at=NOW)
    policy = publish(store, read_policy(store, RENT / "policy.yaml"), at=NOW)
    rules = publish(store, read_rules(RENT / "verdict-rules.yaml"), at=NOW)
    first = project(store, policy, as_of=BEFORE_E, reviewer=agent_id(store, "registry-clerk"), at=BEFORE_E)
    ingest(store, RENT / "claim-e.yaml", recorded_at=NOW)  # recorded on 20 July, by its own account
    with pytest.raises(InvalidRecord, match="is not what rent-delinquency@1 projects as of 2026-07-21T00:00:00.000Z") as refused:
        close(store, first.gaf.id, rules, subject=RENT_JULY, as_of=AFTER_E, closed_at=AFTER_E)
    assert "close a GAF at the as-of it was projected at" in (refused.value.hint or "")
    assert store.find("closure") == []  # nothing written
    assert close(store, first.gaf.id, rules, subject=RENT_JULY, as_of=BEFORE_E, closed_at=AFTER_E).closure.as_of == BEFORE_E


# ---------------------------------------------------------------------- a limit an aggregate hits

ORDER = ORDER_CASE

#: The receiving log says both that delivery d2 reached the order and that it did not: whether d2
#: (and its 25 units) counts is unknown, so the sum rests on one unknown proposition.
CONTESTED_D2 = receiving_log('{subject: "delivery:d2", predicate: delivered, object: "order:po-1", polarity: denied}')


def _close(gaf: str, target: str) -> list[str]:
    return ["close", gaf, "--rules", "pay-invoice", "--subject", "order:po-1", "--as-of", "2026-07-10",
            "--at", "2026-07-10T00:00:00Z", "--store", target, "--json"]  # fmt: skip


def _order_with_d2_contested(target, tmp_path: Path) -> list[str]:
    """The CLI's steps up to the projection of the order case with d2's delivery contested."""
    contested = tmp_path / "contested.yaml"
    contested.write_text(CONTESTED_D2, encoding="utf-8")
    steps = [["ingest", str(ORDER / "claims.yaml")], ["ingest", str(contested)], ["policy", "add", str(ORDER / "policy.yaml")],
             ["rules", "add", str(ORDER / "verdict-rules.yaml")]]
    for args in steps:
        done = runner.invoke(app, [*args, "--store", target, "--at", "2026-07-10T00:00:00Z"])
        assert done.exit_code == 0, done.output
    return ["project", "order-delivered", "--reviewer", "buyer", "--as-of", "2026-07-10", "--at", "2026-07-10T00:00:00Z",
            "--store", target]  # fmt: skip


def test_an_aggregate_past_the_completions_it_evaluates_is_warned_at_project_and_close_and_recorded_in_the_closure(
    target, tmp_path, monkeypatch
):
    """The limit on completions (``gaf.arith.COMPLETED_AT_MOST``, set to 0 here so one unknown
    delivery passes it) is said where it is hit: a warning at project and at close, the
    projection's JSON, and the closure's record, with the rule, the values bound and how far
    past the limit the members were."""
    monkeypatch.setattr(arith, "COMPLETED_AT_MOST", 0)
    projected = runner.invoke(app, [*_order_with_d2_contested(target, tmp_path), "--json"])
    assert projected.exit_code == 0, projected.output
    said = "delivered_in_full@1 (n=40, o=order:po-1): an aggregate's members rest on 1 linked unknown propositions, past the 0"
    assert f"warning: limit hit: {said}" in projected.stderr
    assert [hit.startswith(said) for hit in json.loads(projected.stdout)["limits"]] == [True]
    closed = runner.invoke(app, _close(json.loads(projected.stdout)["gaf"], target))
    assert closed.exit_code == 0, closed.output
    assert f"warning: limit hit: {said}" in closed.stderr
    assert [hit.startswith(said) for hit in json.loads(closed.stdout)["limits"]] == [True]
    shown = runner.invoke(app, ["show", json.loads(closed.stdout)["closure"], "--store", target, "--json"])
    (limit,) = json.loads(shown.stdout)["limits"]
    assert limit["rule"] == "delivered_in_full@1" and limit["bindings"] == {"n": "40", "o": "order:po-1"}
    assert (limit["propositions"], limit["limit"]) == (1, 0) and limit["reason"].startswith(said)
    verdict = runner.invoke(app, ["verdict", json.loads(closed.stdout)["closure"], "--store", target])
    assert verdict.exit_code == 0 and f"limit hit: {said}" in verdict.stdout, verdict.output


def test_within_the_completions_it_evaluates_nothing_is_warned_and_the_closure_holds_no_limits(target, tmp_path):
    projected = runner.invoke(app, [*_order_with_d2_contested(target, tmp_path), "--json"])
    assert projected.exit_code == 0, projected.output
    assert "limit hit" not in projected.stderr and json.loads(projected.stdout)["limits"] == []
    closed = runner.invoke(app, _close(json.loads(projected.stdout)["gaf"], target))
    assert closed.exit_code == 0 and "limit hit" not in closed.stderr, closed.output
    shown = runner.invoke(app, ["show", json.loads(closed.stdout)["closure"], "--store", target, "--json"])
    assert json.loads(shown.stdout)["limits"] == []
    verdict = runner.invoke(app, ["verdict", json.loads(closed.stdout)["closure"], "--store", target])
    assert verdict.exit_code == 0 and "limit hit" not in verdict.stdout, verdict.output


class _AllClosed:
    """A fact base of the given entries (ground, truth), every scope closed."""

    def __init__(self, *entries: tuple[tuple[str, str, Any], Truth]):
        self.entries = [Entry(g, t, f"e{i}") for i, (g, t) in enumerate(entries)]

    def match(self, predicate, subject, obj):
        return [e for e in self.entries if e.ground[0] == predicate and subject in (None, e.ground[1])
                and obj in (None, e.ground[2])]  # fmt: skip

    def closed(self, predicate, subject, obj):
        return f"complete-{predicate}"

    def sign(self, predicate):
        return None


def test_a_limit_a_verdict_condition_hits_is_named_by_its_verdict_rule(monkeypatch):
    """A verdict rule whose condition sums members resting on more unknown propositions than the
    limit: the judgement carries the hit, named by the verdict rule, for the closure to record."""
    monkeypatch.setattr(arith, "COMPLETED_AT_MOST", 1)
    data = yaml.safe_load((ORDER / "verdict-rules.yaml").read_text())
    data["rules"][0]["condition"] = ["?t = sum ?v over line(?l, ?subject), amount(?l, ?v)", "?t >= 5"]
    facts = _AllClosed((("line", "line:1", "order:1"), Truth.UNKNOWN), (("amount", "line:1", 5), Truth.UNKNOWN),
                       (("line", "line:2", "order:1"), Truth.UNKNOWN), (("amount", "line:2", 3), Truth.TRUE))  # fmt: skip
    judged = judge(VerdictRules.model_validate(data), facts, subject="order:1")
    (hit,) = judged.limits  # line:1 rests on two propositions, past the limit; line:2 on one, within it
    assert (hit.rule, hit.bindings) == ("the condition of delivered-in-full", (("subject", "order:1"),))
    assert (hit.propositions, hit.limit) == (2, 1)
    monkeypatch.setattr(arith, "COMPLETED_AT_MOST", 2)
    assert judge(VerdictRules.model_validate(data), facts, subject="order:1").limits == ()


def test_a_closure_records_the_limits_hit_about_its_subject_and_judging_it_at_most_a_hundred():
    """``gaf project`` says every limit hit, for every subject; a closure records those bound to its
    subject and those hit judging it — at most ``LIMITS_RECORDED``, the last counting the rest, so
    that a projection with many hits cannot push a closure past the record size limit."""
    about = [LimitHit("total@1", (("o", f"order:{n}"),), 11, 10) for n in range(3)]
    judged = [LimitHit("the condition of pay", (("subject", "order:1"),), 12, 10)]
    kept = _limits_reached("order:1", about, judged)
    assert [(k.rule, k.bindings) for k in kept] == [("the condition of pay", {"subject": "order:1"}), ("total@1", {"o": "order:1"})]
    many = [LimitHit("total@1", (("o", "order:1"), ("x", f"{n:03}")), 11, 10) for n in range(150)]
    kept = _limits_reached("order:1", many, [])
    assert len(kept) == LIMITS_RECORDED and kept[-1].reason == "and 51 more limits hit: gaf project lists every one"
    assert [k.bindings["x"] for k in kept[:-1]] == [f"{n:03}" for n in range(99)]


def test_a_limit_hit_asking_whether_a_rule_might_hold_for_one_subject_is_said_with_the_evaluations(monkeypatch):
    """Asked whether a derived atom about one subject might hold (``PolicyFacts._may_derive``, when
    a pattern reads it), the rule's aggregate can hit the limit too: the fact base keeps the hit,
    and the projection's conclusions say it with their own."""
    monkeypatch.setattr(arith, "COMPLETED_AT_MOST", 0)
    world = GroupedWorld((("order", "order:0", None, "TRUE"), ("line", "line:0", "order:0", "UNKNOWN"), ("amount", "line:0", 4, "TRUE")),
                         frozenset({"order", "line", "amount"}), frozenset(), True)  # fmt: skip
    policy = world.policy()
    facts = PolicyFacts(policy, [Entry((p, s, o), Truth[t], f"e{n}") for n, (p, s, o, t) in enumerate(world.facts)], AT)
    assert facts.closed("agg_sum", "order:0", None) is None  # it might hold: open, and asked by evaluating its body
    assert {hit.rule for hit in facts.limits} == {"agg_sum@1"} and all(hit.propositions == 1 for hit in facts.limits)
