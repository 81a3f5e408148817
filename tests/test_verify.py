"""Tamper evidence: verify recomputes every id and link and names what was edited behind gaf's back."""

from __future__ import annotations

from gaf.verify import verify
from tests.rentcase import close_both, tamper


def test_an_untouched_store_verifies(store):
    close_both(store)
    report = verify(store)
    assert report.ok and report.checked == sum(store.counts().values())


def test_a_body_edited_through_cypher_is_named(store):
    _, c2 = close_both(store)
    tamper(store, c2.verdict.id, label="unpaid")
    (d,) = verify(store).discrepancies
    assert d.id == c2.verdict.id and "does not match its id" in d.problem


def test_a_property_edited_apart_from_the_body_is_named(store):
    c1, _ = close_both(store)
    store._write(lambda tx: tx.run("MATCH (n:Closure {id: $id}) SET n.subject = 'rent:someone-else'", {"id": c1.closure.id}))
    (d,) = verify(store).discrepancies
    assert d.id == c1.closure.id and "property subject" in d.problem


def test_a_relationship_removed_behind_gafs_back_is_named(store):
    c1, c2 = close_both(store)
    store._write(lambda tx: tx.run("MATCH (:Closure {id: $id})-[r:SUPERSEDES]->(:Closure) DELETE r", {"id": c2.closure.id}))
    (d,) = verify(store).discrepancies
    assert d.id == c2.closure.id and f"SUPERSEDES to {c1.closure.id} is missing" in d.problem
