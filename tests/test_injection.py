"""Injection: Cypher written into a subject, a key or a query parameter is stored and read as data.

Every value gaf sends to a store is a parameter; labels, relationship types and
property names come from the record classes, a closed list in code. So text
that would delete the graph if it were spliced into a query is only a strange
subject, and the store around it is intact.
"""

from __future__ import annotations

import pytest

from gaf.errors import BatchRejected, UnknownKind
from gaf.ledger import ingest
from gaf.policies import policy_from_dict
from gaf.projection import evaluate
from gaf.records import Agent, Claim, Source
from gaf.verify import verify
from queries.runner import load, run
from tests.conftest import NOW
from tests.figures import record

ATTEMPTS = [
    "x'}) MATCH (n) DETACH DELETE n //",
    'x"}) MATCH (n) DETACH DELETE n //',
    "x` MATCH (n) DETACH DELETE n //",
    "x}) WITH 1 AS one MATCH (n) SET n.body = '{}' //",
    "$id'}) CALL { MATCH (n) DETACH DELETE n } //",
]


def test_an_injection_attempt_in_a_subject_is_stored_as_data_and_the_store_is_intact(store):
    agent = Agent(key="bank'}) MATCH (n) DETACH DELETE n //", name="x'); DROP TABLE Claim; --", agent_type="organisation")
    source = Source(key="ledger\"}) DETACH DELETE n //", name="A ledger")
    claims = [
        Claim(
            source=source.id, observer=agent.id, observed_at="2026-07-05T10:00:00Z", recorded_at=NOW,
            transformation="api_export", statements=[{"subject": evil, "predicate": "amount", "value": i}],
        )  # fmt: skip
        for i, evil in enumerate(ATTEMPTS)
    ]
    ingest(store, [agent, source], recorded_at=NOW)
    before = store.counts()
    ingest(store, [c.to_json() for c in claims], recorded_at=NOW)

    # Every record is there, with the text exactly as given, and nothing else moved.
    assert store.counts() == {**before, "claim": len(ATTEMPTS), "proposition": len(ATTEMPTS)}
    for claim, evil in zip(claims, ATTEMPTS, strict=True):
        assert store.get(claim.id) == claim
        (prop,) = store.find("proposition", subject=evil)
        assert prop.subject == evil
        assert store.read("MATCH (p:Proposition {subject: $s}) RETURN p.subject AS s", {"s": evil}) == [{"s": evil}]
    assert [a.id for a in store.find("agent", key=agent.key)] == [agent.id]
    assert [s.id for s in store.find("source", key=source.key)] == [source.id]

    # A policy whose scope is the same text, and an auditor query with it as a parameter, read it as data.
    policy = policy_from_dict(store, {
        "name": "injected", "version": 1, "question": "q", "scope": {"subjects": ATTEMPTS},
        "trust": [{"source": source.key, "predicates": ["amount"], "authoritative": True}],
    })  # fmt: skip
    assert sorted(c.proposition.subject for c in evaluate(store, policy, as_of=NOW).candidates) == sorted(ATTEMPTS)
    query = load()["unresolved-propositions-for-subject"]
    for evil in ATTEMPTS:
        run(store, query, {name: evil for name in query.params})
    with pytest.raises(BatchRejected) as info:
        ingest(store, [{"kind": "Claim) DETACH DELETE n //", "source": source.id}], recorded_at=NOW)
    assert isinstance(info.value.errors[0], UnknownKind)

    report = verify(store)
    assert report.ok and report.checked == store.read("MATCH (n) WHERE n.id IS NOT NULL RETURN count(n) AS n")[0]["n"]  # every record, counted apart from gaf
    record("injection", store=store.dialect, attempts=len(ATTEMPTS) + 3, stored_as_data=len(ATTEMPTS) + 2,
           records_checked=report.checked, records_lost=0)  # fmt: skip
