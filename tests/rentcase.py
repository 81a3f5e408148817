"""The rent case (SPEC.md §12) as fixtures shared by the tests of every stage."""

from __future__ import annotations

from datetime import datetime, timezone

from gaf.ledger import ingest
from gaf.policies import publish, read_policy
from gaf.records import Projection
from gaf.store import GafStore
from tests.conftest import NOW, RENT

#: Before claim E was recorded, and after.
BEFORE_E = datetime(2026, 7, 15, tzinfo=timezone.utc)
AFTER_E = datetime(2026, 7, 21, tzinfo=timezone.utc)
RENT_JULY = "rent:lease-17/2026-07"
PAYMENT = "payment:tx-4471"


def load(store: GafStore, *, with_e: bool = False) -> Projection:
    """Ingest the rent-case claims (and claim E), publish the policy, return it."""
    ingest(store, RENT / "claims.yaml", recorded_at=NOW)
    if with_e:
        ingest(store, RENT / "claim-e.yaml", recorded_at=NOW)
    return publish(store, read_policy(store, RENT / "policy.yaml"))


def agent_id(store: GafStore, key: str) -> str:
    (agent,) = store.find("agent", key=key)
    return agent.id
