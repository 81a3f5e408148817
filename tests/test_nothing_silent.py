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

import pytest
from typer.testing import CliRunner

from gaf.cli import app
from gaf.closure import close, replay
from gaf.errors import InvalidRecord
from gaf.ledger import ingest
from gaf.policies import publish, read_policy, read_rules
from gaf.projection import closed_scopes, project
from tests.conftest import NOW, RENT
from tests.rentcase import AFTER_E, BEFORE_E, RENT_JULY, agent_id

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
