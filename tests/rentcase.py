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
    return publish(store, read_policy(store, RENT / "policy.yaml"), at=NOW)


def agent_id(store: GafStore, key: str) -> str:
    (agent,) = store.find("agent", key=key)
    return agent.id


def close_both(store: GafStore, *, signing_key=None):
    """The rent case's two closures: before claim E (undetermined) and after (paid)."""
    from gaf.closure import close
    from gaf.policies import read_rules
    from gaf.projection import project

    policy = load(store, with_e=False)
    rules = publish(store, read_rules(RENT / "verdict-rules.yaml"), at=NOW)
    reviewer = agent_id(store, "registry-clerk")
    first = project(store, policy, as_of=BEFORE_E, reviewer=reviewer, at=BEFORE_E)
    c1 = close(store, first.gaf.id, rules, subject=RENT_JULY, as_of=BEFORE_E, closed_at=BEFORE_E, signing_key=signing_key)
    ingest(store, RENT / "claim-e.yaml", recorded_at=NOW)
    second = project(store, policy, as_of=AFTER_E, reviewer=reviewer, at=AFTER_E)
    c2 = close(store, second.gaf.id, rules, subject=RENT_JULY, as_of=AFTER_E, closed_at=AFTER_E, supersedes=[c1.closure.id],
               signing_key=signing_key)
    return c1, c2


def tamper(store: GafStore, record_id: str, **changes) -> None:
    """Edit a stored node behind gaf's back, as an attacker with database access would."""
    import json

    from gaf.canonical import kind_of
    from gaf.store.schema import label_of

    label = label_of(kind_of(record_id))
    (row,) = store.read(f"MATCH (n:{label} {{id: $id}}) RETURN n.body AS body", {"id": record_id})
    body = json.dumps(json.loads(row["body"]) | changes)
    store._write(lambda tx: tx.run(f"MATCH (n:{label} {{id: $id}}) SET n.body = $b", {"id": record_id, "b": body}))


def forge(store: GafStore, record) -> None:
    """CREATE a well-formed record's node through Cypher, behind gaf's back, laid out as gaf would
    lay it out (its id is right): no relationships, and nothing in the write log."""
    props = record.props()
    fields = "".join(f", {k}: ${k}" for k in sorted(props))
    params = {"id": record.id, "kind": record.KIND, "body": record.stored_body.decode(), **props}
    store._write(lambda tx: tx.run(f"CREATE (n:{record.LABEL} {{id: $id, kind: $kind, body: $body{fields}}})", params))


def authority(store: GafStore) -> dict[str, str]:
    """Ingest the rent case's grants and action policy; their ids by name."""
    from datetime import datetime, timezone

    ingest(store, RENT / "authority.yaml", recorded_at=datetime(2026, 1, 15, tzinfo=timezone.utc))
    out = {f"grant:{g.action_kind}": g.id for g in store.find("grant")}
    out["policy"] = store.find("action_policy", name="rent-actions")[0].id
    out["agent"] = agent_id(store, "letting-agent")
    out["landlord"] = agent_id(store, "landlord-a")
    return out


def first_closure(store: GafStore):
    """Only the first rent closure (undetermined), not superseded."""
    from gaf.closure import close
    from gaf.policies import read_rules
    from gaf.projection import project

    policy = load(store)
    rules = publish(store, read_rules(RENT / "verdict-rules.yaml"), at=NOW)
    first = project(store, policy, as_of=BEFORE_E, reviewer=agent_id(store, "registry-clerk"), at=BEFORE_E)
    return close(store, first.gaf.id, rules, subject=RENT_JULY, as_of=BEFORE_E, closed_at=BEFORE_E)


def ratified_allocation(store: GafStore, *, effective, retroactive: bool = False):
    """The allocation policy of SPEC.md §12: proposed from the July case, ratified by the letting agent."""
    from datetime import datetime, timezone

    import yaml

    from gaf.lifecycle import decide_case, propose, ratify
    from gaf.rules import DerivationRule

    ids = authority(store)
    at = datetime(2026, 7, 25, tzinfo=timezone.utc)
    july = store.find("closure", subject=RENT_JULY)[-1]
    case = decide_case(store, july.id, decided_by=ids["agent"], decision="allocate to July",
                       reason="receipt shows memo 'July rent'", at=at)  # fmt: skip
    rule = DerivationRule.model_validate(yaml.safe_load((RENT / "allocation-rule.yaml").read_text()))
    candidate = propose(store, name="rent-allocation", text="A payment from the tenant's registered account, by the due "
                        "date, equal to the rent, with no other debt open, is allocated to the current month's rent.",
                        rule=rule, cases=[case.id], proposed_by=ids["agent"], at=at)  # fmt: skip
    return ratify(store, candidate, authority=ids["agent"], version=1, effective=effective, retroactive=retroactive, at=at)


def closed_store(path) -> tuple[str, str]:
    """An embedded store at ``path`` with the rent case's two closures and the grants; their ids."""
    with GafStore.open(str(path)) as s:
        c1, c2 = close_both(s)
        authority(s)
    return c1.closure.id, c2.closure.id
