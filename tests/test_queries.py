"""The auditor query library: every query pinned on the rent case, on both stores; writes refused."""

from __future__ import annotations

import pytest

import queries
from gaf.actions import act
from gaf.errors import ReadOnlyViolation
from gaf.lifecycle import waive
from tests.rentcase import AFTER_E, PAYMENT, RENT_JULY, authority, close_both

LIBRARY = queries.load()


@pytest.fixture
def rent(store):
    c1, c2 = close_both(store)
    ids = authority(store)
    done = act(store, verdict=c2.verdict.id, action_kind="receipt", subject=RENT_JULY, authorised_by=ids["agent"],
               grant=ids["grant:receipt"], policy=ids["policy"], idempotency_key="k", at=AFTER_E)  # fmt: skip
    w = waive(store, policy=ids["policy"], closure=c1.closure.id, authority=ids["agent"], reason="tenant asked", at=AFTER_E)
    return store, c1, c2, done.action, w


def _run(store, name, **params):
    return queries.run(store, LIBRARY[name], params)


def test_why_verdict_names_facts_claims_sources_and_versions(rent):
    store, _, c2, _, _ = rent
    rows = _run(store, "why-verdict", closure=c2.closure.id)
    assert {(r["verdict"], r["policy"], r["policy_version"], r["rules"], r["rules_version"]) for r in rows} == {
        ("paid", "rent-delinquency", 1, "rent-paid", 1)
    }
    sources = {(r["predicate"], r["source"]) for r in rows}
    assert ("allocated_to", "transfer-receipts") in sources and ("credited_to", "bank-ledger") in sources
    assert ("paid", None) in sources  # derived, not claimed


def test_what_rests_on_source_lists_the_ledgers_facts_in_both_closures(rent):
    store, c1, c2, _, _ = rent
    rows = _run(store, "what-rests-on-source", source="bank-ledger")
    assert {r["predicate"] for r in rows} == {"credited_to", "debited_from", "amount", "memo"}
    assert {r["closure"] for r in rows} == {c1.closure.id, c2.closure.id}


def test_facts_accepted_under_policy(rent):
    store, *_ = rent
    rows = _run(store, "facts-accepted-under-policy", policy="rent-delinquency", version=1)
    assert {r["justified_by"] for r in rows} == {"evaluation", "derivation"}
    assert [r["subject"] for r in rows if r["predicate"] == "paid"] == [RENT_JULY]


def test_unresolved_propositions_for_subject(rent):
    store, c1, *_ = rent
    rows = _run(store, "unresolved-propositions-for-subject", subject=PAYMENT)
    assert [(r["predicate"], r["closure"]) for r in rows] == [("allocated_to", c1.closure.id)]


def test_relied_on_absence_names_the_closed_scopes(rent):
    store, c1, c2, _, _ = rent
    rows = _run(store, "relied-on-absence")
    assert {r["closure"] for r in rows} == {c1.closure.id, c2.closure.id}
    assert {(r["predicate"], r["complete_source"]) for r in rows} == {("credited_to", "bank-ledger"), ("reversed", "bank-ledger")}
    assert _run(store, "derivations-relying-on-absence") == []  # in the rent case no derivation used absence


def test_superseded_closures_and_why(rent):
    store, c1, c2, _, _ = rent
    (row,) = _run(store, "superseded-closures-and-why")
    assert (row["superseded"], row["old_verdict"], row["superseding"], row["new_verdict"]) == (c1.closure.id, "undetermined", c2.closure.id, "paid")


def test_actions_and_authorities(rent):
    store, _, _, action, _ = rent
    (row,) = _run(store, "actions-and-authorities")
    assert (row["action"], row["verdict"], row["authorised_by"], row["grant_from"], row["action_policy"]) == (
        action.id, "paid", "letting-agent", "landlord-a", "rent-actions")
    assert sorted(row["statuses"]) == ["authorised", "executed", "requested"]


def test_gaf_diff_between_the_two_closures(rent):
    store, c1, c2, _, _ = rent
    rows = _run(store, "gaf-diff", old=c1.closure.id, new=c2.closure.id)
    assert sorted((r["change"], r["predicate"]) for r in rows) == [("added", "allocated_to"), ("added", "memo"), ("added", "paid")]


def test_waivers_granted(rent):
    store, c1, _, _, w = rent
    (row,) = _run(store, "waivers-granted")
    assert (row["waiver"], row["authority"], row["closure"], row["policy_kind"], row["reason"]) == (
        w.id, "letting-agent", c1.closure.id, "action_policy", "tenant asked")


def test_decisions_by_reviewer(rent):
    store, *_ = rent
    rows = _run(store, "decisions-by-reviewer", reviewer="registry-clerk")
    assert [r["accepted"] for r in rows] == [10, 13]


def test_closures_as_of(rent):
    store, c1, c2, _, _ = rent
    then = _run(store, "closures-as-of", subject=RENT_JULY, as_of="2026-07-16T00:00:00.000Z")
    assert [(r["closure"], r["verdict"], r["standing"]) for r in then] == [(c1.closure.id, "undetermined", True)]
    now = _run(store, "closures-as-of", subject=RENT_JULY, as_of="2026-12-01T00:00:00.000Z")
    assert [(r["closure"], r["standing"]) for r in now] == [(c1.closure.id, False), (c2.closure.id, True)]


def test_every_library_query_has_a_fixture_test():
    tested = {name for name in LIBRARY if f'"{name}"' in open(__file__).read()}
    assert tested == set(LIBRARY)


@pytest.mark.parametrize(
    "cypher",
    [
        "MATCH (c:Claim) SET c.scope = 'x'",
        "CREATE (:Claim {id: 'x'})",
        "MATCH (c:Claim) DETACH DELETE c",
        "MERGE (a:Agent {id: 'x'}) RETURN a",
        "MATCH (c) REMOVE c.scope",
        "CALL apoc.create.node(['X'], {})",
        "LOAD CSV FROM 'file:///x' AS row RETURN row",
    ],
)
def test_a_query_that_would_write_is_refused_before_it_reaches_the_store(store, cypher):
    before = store.counts()
    with pytest.raises(ReadOnlyViolation):
        queries.run(store, cypher)
    assert store.counts() == before


def test_write_words_inside_strings_and_comments_are_not_writes(store):
    assert queries.run(store, "// SET nothing\nRETURN 'CREATE' AS word") == [{"word": "CREATE"}]


def test_missing_and_unknown_parameters_are_named(store):
    from gaf.errors import InvalidRecord

    with pytest.raises(InvalidRecord, match="needs closure"):
        queries.run(store, LIBRARY["why-verdict"], {})
    with pytest.raises(InvalidRecord, match="takes no colour"):
        queries.run(store, LIBRARY["relied-on-absence"], {"colour": "red"})
