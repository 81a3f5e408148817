"""Authorized actions: separate checks of authority, limits, idempotency, receipts, compensation."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from datetime import datetime, timedelta, timezone
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest

from gaf.actions import ActionRefused, WebhookExecutor, act, compensate, file_executor, latest_status, statuses
from gaf.records import Waiver
from tests.conftest import NOW, ROOT
from tests.rentcase import RENT_JULY, authority, close_both, first_closure

T = datetime(2026, 7, 16, tzinfo=timezone.utc)


def _act(store, ids, verdict, kind, key, **kw):
    return act(store, verdict=verdict, action_kind=kind, subject=kw.pop("subject", RENT_JULY), authorised_by=kw.pop("by", ids["agent"]),
               grant=kw.pop("grant", ids.get(f"grant:{kind}")), policy=ids["policy"], idempotency_key=key, at=kw.pop("at", T), **kw)  # fmt: skip


def test_an_undetermined_verdict_permits_a_request_for_the_allocation_not_a_collection_letter(store):
    c1 = first_closure(store)
    ids = authority(store)
    done = _act(store, ids, c1.verdict.id, "request-allocation", "k1")
    assert done.effect and done.status.status == "executed" and done.status.receipt["executor"] == "record-only"
    with pytest.raises(ActionRefused, match="does not let a verdict labelled 'undetermined' trigger 'collection-letter'"):
        _act(store, ids, c1.verdict.id, "collection-letter", "k2", amount=1000)
    assert store.find("action", idempotency_key="k2") == []


def test_the_same_key_never_causes_a_second_effect(store):
    c1 = first_closure(store)
    ids = authority(store)
    first = _act(store, ids, c1.verdict.id, "request-allocation", "same")
    again = _act(store, ids, c1.verdict.id, "request-allocation", "same", at=T + timedelta(hours=1))
    assert first.effect and not again.effect and again.action.id == first.action.id
    assert [s.status for s in statuses(store, first.action.id)] == ["requested", "authorised", "executed"]
    with pytest.raises(ActionRefused, match="already used .* for a different request"):
        _act(store, ids, c1.verdict.id, "request-allocation", "same", subject="rent:lease-17/2026-08")


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"grant": "grant:" + "0" * 64}, "no grant"),
        ({"by": "landlord"}, "is held by"),
        ({"subject": "rent:lease-99/2026-07"}, "does not cover subject"),
        ({"amount": 1500.0}, "over the grant's limit of 1000"),
    ],
)
def test_refusals_name_the_check_that_failed_and_write_nothing(store, change, message):
    c1 = first_closure(store)
    ids = authority(store)
    from gaf.records import ActionPolicy

    # a policy in which an undetermined verdict may trigger a collection letter, to reach the grant checks
    lenient = ActionPolicy(name="lenient", version=1, permits={"collection-letter": ["undetermined"]})
    store.put([lenient], at=NOW)
    ids = {**ids, "policy": lenient.id}
    if change.get("by") == "landlord":
        change = {"by": ids["landlord"]}
    before = store.counts()
    with pytest.raises(ActionRefused, match=message):
        _act(store, ids, c1.verdict.id, "collection-letter", "k", **{"amount": 900.0, **change})
    assert store.counts() == before


def test_frequency_limits_count_executed_actions_in_the_period(store):
    c1 = first_closure(store)
    ids = authority(store)  # request-allocation: at most 2 per 30 days
    _act(store, ids, c1.verdict.id, "request-allocation", "a")
    _act(store, ids, c1.verdict.id, "request-allocation", "b", at=T + timedelta(days=1))
    with pytest.raises(ActionRefused, match="allows 2 action.* per 30 days; 2 already executed"):
        _act(store, ids, c1.verdict.id, "request-allocation", "c", at=T + timedelta(days=2))
    assert _act(store, ids, c1.verdict.id, "request-allocation", "d", at=T + timedelta(days=31)).effect


def test_a_superseded_closure_permits_nothing(store):
    c1, c2 = close_both(store)
    ids = authority(store)
    with pytest.raises(ActionRefused, match="was superseded by " + c2.closure.id):
        _act(store, ids, c1.verdict.id, "request-allocation", "k")
    assert _act(store, ids, c2.verdict.id, "receipt", "r").effect


def test_a_waiver_lets_one_decision_past_the_action_policy(store):
    c1 = first_closure(store)
    ids = authority(store)
    waiver = Waiver(policy=ids["policy"], closure=c1.closure.id, authority=ids["landlord"],
                    reason="tenant asked for a receipt of what was received", granted_at=T)  # fmt: skip
    store.put([waiver], at=NOW)
    with pytest.raises(ActionRefused):
        _act(store, ids, c1.verdict.id, "receipt", "r1")
    assert _act(store, ids, c1.verdict.id, "receipt", "r2", waiver=waiver.id).effect


def test_compensation_is_a_new_linked_action_and_the_original_is_never_edited(store):
    _, c2 = close_both(store)
    ids = authority(store)
    receipt = _act(store, ids, c2.verdict.id, "receipt", "r")
    undo = compensate(store, receipt.action.id, authorised_by=ids["agent"], grant=ids["grant:receipt"], policy=ids["policy"],
                      idempotency_key="undo-r", at=T + timedelta(days=1), reason="sent to the wrong address")  # fmt: skip
    assert undo.effect and undo.action.compensates == receipt.action.id
    assert latest_status(store, receipt.action.id).status == "compensated"
    assert store.get(receipt.action.id) == receipt.action
    assert ("COMPENSATES", receipt.action.id) in store.edges_from(undo.action.id)
    with pytest.raises(ActionRefused, match="is compensated, not executed"):
        compensate(store, receipt.action.id, authorised_by=ids["agent"], grant=ids["grant:receipt"], policy=ids["policy"],
                   idempotency_key="undo-again", at=T + timedelta(days=2), reason="x")  # fmt: skip


def test_the_webhook_executor_posts_the_action_and_keeps_a_receipt(store):
    _, c2 = close_both(store)
    ids = authority(store)
    seen = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            seen.append((self.headers["Idempotency-Key"], json.loads(self.rfile.read(int(self.headers["Content-Length"])))))
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b"ok")

        def log_message(self, *args):
            pass

    server = HTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_port}/effects"
        done = _act(store, ids, c2.verdict.id, "receipt", "hook", executor=WebhookExecutor(url))
    finally:
        server.shutdown()
    assert done.status.receipt["status"] == 200 and seen[0][0] == "hook" and seen[0][1]["id"] == done.action.id


_RACE = """
import sys, json
from datetime import datetime, timezone
sys.path.insert(0, {root!r})
from gaf.store import GafStore
from gaf.actions import act, file_executor
ids = json.loads({ids!r})
with GafStore.open({target!r}) as store:
    done = act(store, verdict=ids["verdict"], action_kind="receipt", subject="rent:lease-17/2026-07",
               authorised_by=ids["agent"], grant=ids["grant:receipt"], policy=ids["policy"],
               idempotency_key="race", at=datetime(2026, 7, 22, tzinfo=timezone.utc),
               executor=file_executor({effects!r})())
print(done.effect)
"""


def test_two_processes_sending_the_same_key_cause_exactly_one_effect(store, tmp_path):
    _, c2 = close_both(store)
    ids = authority(store) | {"verdict": c2.verdict.id}
    effects = tmp_path / "effects.txt"
    target = store.location
    env = dict(os.environ, GAF_LOCK_WAIT="60")
    if store.dialect == "ladybug":
        store.close()  # the embedded store has one writer at a time: hand it over
    code = _RACE.format(root=str(ROOT), ids=json.dumps(ids), target=target, effects=str(effects))
    procs = [subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env) for _ in range(2)]
    results = [p.communicate(timeout=120) for p in procs]
    assert all(p.returncode == 0 for p in procs), results
    assert sorted(out.strip() for out, _ in results) == ["False", "True"]
    assert len(effects.read_text().splitlines()) == 1
