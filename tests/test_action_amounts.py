"""Actions that follow the facts (issue 19, item 4): an action's amount is computed from the
verdict's facts (quantity × price), checked against the grant, and — cumulative — against
what earlier executed actions on the subject already paid; compensated ones do not count; a
top-up names the action it completes; and two processes paying at once cannot both pay the
balance. The oracle is the order case's own arithmetic: 40 units at 2.50 is 100."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from datetime import timedelta
from decimal import Decimal

import pytest

from gaf import arith
from gaf.actions import ActionRefused, act, compensate, latest_status
from gaf.ledger import ingest
from gaf.store.base import GafStore
from tests.conftest import NOW, ROOT
from tests.test_aggregates import ORDER_CASE, _order_closed, receiving_log

DUE = 100  # 40 units ordered at 2.50 each


def _authority(store) -> dict[str, str]:
    ingest(store, ORDER_CASE / "authority.yaml", recorded_at=NOW)
    (agent,) = store.find("agent", key="accounts-payable")
    (grant,) = store.find("grant", action_kind="pay")
    (policy,) = store.find("action_policy", name="invoice-actions")
    return {"agent": agent.id, "grant": grant.id, "policy": policy.id}


def _pay(store, ids, verdict, key, **kw):
    return act(store, verdict=verdict, action_kind="pay", subject="order:po-1", authorised_by=ids["agent"], grant=ids["grant"],
               policy=ids["policy"], idempotency_key=key, at=kw.pop("at", NOW), **kw)  # fmt: skip


def test_an_amount_left_out_is_what_the_verdicts_facts_give(store):
    _, closed = _order_closed(store)
    ids = _authority(store)
    paid = _pay(store, ids, closed.verdict.id, "pay-1")
    assert paid.effect and paid.action.amount == DUE


def test_a_partial_payment_leaves_the_balance_and_a_full_one_after_it_pays_only_that(store):
    _, closed = _order_closed(store)
    ids = _authority(store)
    first = _pay(store, ids, closed.verdict.id, "part", amount=Decimal("60.50"))
    with pytest.raises(ActionRefused, match=r"amount 100 is more than the balance of 39\.5 \(100 due, 60\.5 paid by action:"):
        _pay(store, ids, closed.verdict.id, "full", amount=DUE)
    rest = _pay(store, ids, closed.verdict.id, "rest", tops_up=first.action.id)
    assert rest.effect and rest.action.amount == Decimal("39.5") and rest.action.tops_up == first.action.id
    assert ("TOPS_UP", first.action.id) in rest.action.edges()
    with pytest.raises(ActionRefused, match="pay on order:po-1 is paid in full: 100 of 100 already"):
        _pay(store, ids, closed.verdict.id, "again")
    assert store.find("action", idempotency_key="full") == [] and store.find("action", idempotency_key="again") == []


def test_an_amount_over_what_the_facts_give_is_refused_and_nothing_is_written(store):
    _, closed = _order_closed(store)
    ids = _authority(store)
    before = store.counts()
    with pytest.raises(ActionRefused, match="amount 120 is more than the 100 the verdict's facts give"):
        _pay(store, ids, closed.verdict.id, "too-much", amount=120)
    assert store.counts() == before


def test_a_compensated_payment_does_not_count_toward_the_limit(store):
    _, closed = _order_closed(store)
    ids = _authority(store)
    first = _pay(store, ids, closed.verdict.id, "first", amount=60)
    compensate(store, first.action.id, authorised_by=ids["agent"], grant=ids["grant"], policy=ids["policy"],
               idempotency_key="undo", at=NOW + timedelta(hours=1), reason="paid to the wrong account")  # fmt: skip
    assert latest_status(store, first.action.id).status == "compensated"
    again = _pay(store, ids, closed.verdict.id, "second", at=NOW + timedelta(hours=2))
    assert again.action.amount == DUE


def test_the_same_request_again_returns_the_first_even_when_its_amount_was_computed(store):
    _, closed = _order_closed(store)
    ids = _authority(store)
    first = _pay(store, ids, closed.verdict.id, "once")
    again = _pay(store, ids, closed.verdict.id, "once", at=NOW + timedelta(minutes=5))
    assert not again.effect and again.action.id == first.action.id


def test_a_top_up_of_an_action_on_another_subject_is_refused(store):
    _, closed = _order_closed(store)
    ids = _authority(store)
    with pytest.raises(ActionRefused, match="is not an earlier pay on order:po-1"):
        _pay(store, ids, closed.verdict.id, "top", amount=10, tops_up=closed.verdict.id)


def test_a_cumulative_limit_holds_when_two_processes_pay_at_once(store, tmp_path):
    _, closed = _order_closed(store)
    ids = _authority(store)
    target = store.location
    start = tmp_path / "start"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "GAF_LOCK_WAIT": "120"}
    if store.dialect == "ladybug":
        store.close()  # one writing process at a time: the test process lets go too
    payers = [
        subprocess.Popen(
            [sys.executable, "-m", "tests.workers", "pay", target, str(start), closed.verdict.id, ids["grant"], ids["policy"],
             ids["agent"], f"payer-{n}", "60"],
            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        for n in range(2)
    ]
    time.sleep(1.0)  # let both import gaf and wait at the line
    start.touch()
    results = []
    for payer in payers:
        out, err = payer.communicate(timeout=300)
        assert payer.returncode == 0, f"a payer failed (exit {payer.returncode}):\n{out}\n{err}"
        results.append(json.loads(out))
    assert sorted(r["executed"] for r in results) == [False, True], results
    (refused,) = [r for r in results if not r["executed"]]
    assert "more than the balance of 40" in refused["refused"]
    with GafStore.open(target) as reopened:
        paid = [a for a in reopened.find("action") if latest_status(reopened, a.id).status == "executed"]
        assert [a.amount for a in paid] == [60]


#: A third delivery the receiving log both records and denies: whether its 5 units count is
#: unknown, so the order has 40 or 45 units (delivered in full either way).
D3_CONTESTED = receiving_log('{subject: "delivery:d3", predicate: delivered, object: "order:po-1"}',
                             '{subject: "delivery:d3", predicate: quantity, value: 5}') + receiving_log(
    '{subject: "delivery:d3", predicate: delivered, object: "order:po-1", polarity: denied}', at="2026-07-08T12:00:00Z")


def test_an_amount_a_limit_left_unsettled_is_refused_naming_the_limit(store, tmp_path, monkeypatch):
    """An amount computed from a sum over deliveries, one of them of unknown standing, with the
    limit on completions set to 0: the sum is only known within bounds, so the amount is not
    settled, and the refusal says which limit left it so."""
    monkeypatch.setattr(arith, "COMPLETED_AT_MOST", 0)
    contested = tmp_path / "d3.yaml"
    contested.write_text(D3_CONTESTED, encoding="utf-8")
    ingest(store, ORDER_CASE / "claims.yaml", recorded_at=NOW)  # its sources first (_order_closed ingests it again: a no-op)
    ingest(store, contested, recorded_at=NOW)
    _, closed = _order_closed(store)
    assert closed.verdict.label == "pay"
    authority = tmp_path / "authority.yaml"
    summed = '''value: "?got * ?price"
      when: ["unit_price(?subject, ?price)", "?got = sum ?q over delivered(?d, ?subject), quantity(?d, ?q)"]'''
    ordered = '''value: "?n * ?price"
      when: ["ordered(?subject, ?n)", "unit_price(?subject, ?price)"]'''
    authority.write_text((ORDER_CASE / "authority.yaml").read_text().replace(ordered, summed), encoding="utf-8")
    ingest(store, authority, recorded_at=NOW)
    (agent,), (grant,), (policy,) = store.find("agent", key="accounts-payable"), store.find("grant"), store.find("action_policy")
    ids = {"agent": agent.id, "grant": grant.id, "policy": policy.id}
    said = r"the facts do not settle it; limit hit: .*1 linked unknown propositions, past the 0"
    with pytest.raises(ActionRefused, match=said):
        _pay(store, ids, closed.verdict.id, "pay-1")
