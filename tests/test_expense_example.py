"""The third worked example: a travel-expense claim (examples/expense, issue 19 item 5) runs
end to end from its story script on both stores, and every outcome is pinned.

It needs everything issue 19 built: a sum of card lines in EUR (exact: the card statement
is complete for the trip), a per-diem × the trip's length with its unit, one amount per card
line (a misread receipt loses to the card), the traveller's own "within policy" set aside as
a party's statement, a reimbursement computed from the verdict's facts, a partial payment
that leaves a balance, a late card line that reopens the case, and a top-up that pays only
the balance — then nothing more.
"""

from __future__ import annotations

import os
import subprocess
from decimal import Decimal

import pytest

from gaf.actions import latest_status
from gaf.reopen import history
from gaf.store import GafStore
from tests.conftest import ROOT

EXPENSE = ROOT / "examples" / "expense"
TRIP = "expense:trip-42"


def _story(store: str) -> str:
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    env = dict(os.environ, GAF_STORE=store, COLUMNS="200", PYTHONPATH=path)
    result = subprocess.run(["sh", str(EXPENSE / "story.sh")], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, env=env, timeout=900)  # fmt: skip
    assert result.returncode == 0, result.stdout[-6000:]
    return " ".join(result.stdout.split())


def _step(out: str, n: int) -> str:
    return out.split(f"== {n}. ")[1].split(f"== {n + 1}. ")[0] if f"== {n + 1}. " in out else out.split(f"== {n}. ")[1]


@pytest.mark.parametrize("kind", ["ladybug", "neo4j"])
def test_the_expense_story_pins_every_outcome_on_both_stores(kind, request):
    store = request.getfixturevalue(f"{kind}_store")
    target = store.location
    if kind == "ladybug":
        store.close()  # one writing process at a time: the story's gaf commands write it
    out = _story(target)
    projected = _step(out, 2)
    assert "spent(expense:trip-42, 107.5 EUR)" in projected and "accepted │ within_policy(expense:trip-42)" in projected
    assert "rejected │ amount(card-line:882, 26 EUR)" in projected  # the misread receipt loses to the card
    assert "a party's statement of the conclusion is not evidence of it" in projected
    assert "reimburse: +1.000" in _step(out, 3)
    assert "amount 107.5 EUR is more than the balance of 27.5 EUR (107.5 EUR due, 80 EUR paid by action:" in _step(out, 4)
    assert "reimburse → closure:" in _step(out, 5) and "reimburse: +1.000" in _step(out, 5)
    assert "executed: 37.5 EUR, topping up action:" in _step(out, 6)
    assert "reimburse on expense:trip-42 is paid in full: 117.5 EUR of 117.5 EUR already" in _step(out, 7)
    with GafStore.open(target, read_only=True) as s:
        closures = history(s, TRIP)
        assert [c["label"] for c in closures] == ["reimburse", "reimburse"] and closures[0]["superseded_by"]
        paid = sorted((a.amount, a.unit) for a in s.find("action") if latest_status(s, a.id).status == "executed")
        assert paid == [(Decimal("37.5"), "EUR"), (80, "EUR")]
    again = _story(target)
    assert "0 written, 11 already stored" in again
    assert "executed: 37.5 EUR, topping up action:" in _step(again, 6)  # the same key: the first payment, no second
    with GafStore.open(target, read_only=True) as s:
        assert len([a for a in s.find("action") if latest_status(s, a.id).status == "executed"]) == 2
