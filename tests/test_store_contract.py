"""The store contract: every test here runs on Neo4j and on LadybugDB alike."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gaf.errors import BatchRejected, InvalidRecord, UnknownReference
from gaf.records import Agent, Claim, Record, Source, parse_body
from gaf.store import GafStore
from tests.conftest import NOW, small_graph
from tests.worlds import ledger_world


def test_stored_records_read_back_with_ids_that_match_their_content(store):
    batch = small_graph()
    report = store.put(batch, at=NOW)
    assert sorted(report.written) == sorted(r.id for r in batch)
    for record in batch:
        assert store.get(record.id) == record
    row = store.read("MATCH (n:Claim {id: $id}) RETURN n.body AS body", {"id": batch[2].id})[0]
    assert parse_body(row["body"], batch[2].id) == batch[2]


def test_reingest_is_a_noop_that_reports_the_existing_ids(store):
    batch = small_graph()
    store.put(batch, at=NOW)
    before = store.counts()
    again = store.put(batch, at=NOW)
    assert again.written == [] and sorted(again.existing) == sorted(r.id for r in batch)
    assert store.counts() == before
    assert store.read("MATCH (:Claim)-[r:FROM_SOURCE]->(:Source) RETURN count(r) AS n")[0]["n"] == 2


def test_reingest_with_a_later_recorded_at_keeps_the_first_record(store):
    agent, source, claim, _ = small_graph()
    store.put([agent, source, claim], at=NOW)
    later = Claim.model_validate({**claim.model_dump(exclude={"id"}), "recorded_at": "2027-01-01T00:00:00Z"})
    assert later.id == claim.id
    assert store.put([later], at=NOW).existing == [claim.id]
    assert store.get(claim.id).recorded_at == NOW


def test_implied_propositions_are_written_once_and_linked(store):
    agent, source, claim, _ = small_graph()
    twin = Claim.model_validate({**claim.model_dump(exclude={"id"}), "observed_at": "2026-07-06T00:00:00Z"})
    store.put([agent, source, claim, twin], at=NOW)
    (prop,) = claim.implied()
    assert store.counts()["proposition"] == 1
    rows = store.read("MATCH (c:Claim)-[:ASSERTS]->(p:Proposition {id: $id}) RETURN c.id AS id ORDER BY id", {"id": prop.id})
    assert [r["id"] for r in rows] == sorted([claim.id, twin.id])


def test_implied_propositions_are_stamped_with_the_claims_time_not_the_ingest_time(store):
    from datetime import datetime, timezone

    from gaf.types import format_instant

    agent, source, claim, _ = small_graph()
    store.put([agent, source, claim], at=datetime(2027, 1, 1, tzinfo=timezone.utc))  # ingested long after
    (prop,) = claim.implied()
    (row,) = store.read("MATCH (p:Proposition {id: $id}) RETURN p.written_at AS at", {"id": prop.id})
    assert row["at"] == format_instant(claim.recorded_at)  # an as-of question sees the claim and what it states together
    (row,) = store.read("MATCH (a:Agent {id: $id}) RETURN a.written_at AS at", {"id": agent.id})
    assert row["at"] == "2027-01-01T00:00:00.000Z"  # a record without a time of its own takes the operation's


def test_an_atomic_batch_with_one_malformed_record_writes_nothing(store):
    batch = [r.to_json() for r in small_graph()]
    batch[3]["observed_at"] = "not a time"
    with pytest.raises(BatchRejected) as info:
        store.put(batch, at=NOW)
    assert len(info.value.errors) == 1 and "observed_at" in info.value.errors[0].what
    assert store.counts() == {}


def test_an_atomic_batch_with_one_unknown_reference_writes_nothing(store):
    agent, source, claim, other = small_graph()
    stray = Claim.model_validate({**other.model_dump(exclude={"id"}), "observer": "agent:" + "0" * 64})
    with pytest.raises(BatchRejected) as info:
        store.put([agent, source, claim, stray], at=NOW)
    (error,) = info.value.errors
    assert isinstance(error, UnknownReference) and error.where == stray.id and "agent:000" in error.what
    assert store.counts() == {}


def test_best_effort_reports_each_bad_item_and_writes_the_rest(store):
    agent, source, claim, other = small_graph()
    stray = Claim.model_validate({**other.model_dump(exclude={"id"}), "observer": "agent:" + "0" * 64})
    report = store.put([agent, source, claim, {"kind": "claim", "source": 3}, stray], mode="best_effort", at=NOW)
    assert sorted(report.written) == sorted([agent.id, source.id, claim.id])
    assert [(f.index, type(f.error).__name__) for f in sorted(report.failed, key=lambda f: f.index)] == [
        (3, "InvalidRecord"),
        (4, "UnknownReference"),
    ]
    # The refused claim's proposition is not written either.
    assert store.counts() == {"agent": 1, "claim": 1, "proposition": 1, "source": 1}


def test_put_batches_writes_what_a_loop_of_put_writes_one_transaction_per_batch(store, tmp_path):
    agent, source, claim, other = small_graph()
    batches = [[agent, source], [claim], [other, claim]]
    reports = list(store.put_batches(batches, at=NOW))
    assert [(r.written, r.existing) for r in reports] == [
        ([agent.id, source.id], []),
        ([claim.id], []),
        ([other.id], [claim.id]),
    ]
    with GafStore.open(str(tmp_path / "looped")) as looped:
        for batch in batches:
            looped.put(batch, at=NOW)
        assert store.counts() == looped.counts()
        assert all(store.stored_nodes(kind) == looped.stored_nodes(kind) for kind in store.counts())


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(world=ledger_world(), data=st.data())
def test_put_batches_over_records_partly_stored_writes_each_once_and_reports_what_was_there(store, world, data):
    # Neo4j writes a batch taking its records to be new while the batches before were all new
    # (optimistic_creates), and runs it again, asking first, when one was stored: the answers
    # must be a checked write's. The oracle: which ids the store held, read by a plain query.
    assert store.optimistic_creates() == (store.dialect == "neo4j")
    agents = [Agent(key="observer", name="observer", agent_type="software")]
    records = [*agents, *world.sources, *world.claims]
    ids = [r.id for r in records]

    def held() -> set[str]:
        return {row["id"] for row in store.read("MATCH (n) WHERE n.id IN $ids RETURN n.id AS id", {"ids": ids})}

    earlier = [c for c in world.claims if data.draw(st.booleans(), label=f"{c.id} stored before")]
    store.put([*agents, *world.sources, *earlier], at=NOW)
    seen = held()
    cuts = sorted(data.draw(st.sets(st.integers(1, len(records) - 1), max_size=4), label="batch cuts"))
    batches = [records[a:b] for a, b in zip([0, *cuts], [*cuts, len(records)])]
    for batch, report in zip(batches, store.put_batches(batches, at=NOW), strict=True):
        assert report.written == [r.id for r in batch if r.id not in seen]
        assert report.existing == [r.id for r in batch if r.id in seen]
        seen |= {r.id for r in batch}
    assert held() == set(ids)
    assert store.read("MATCH (n) WITH n.id AS id, count(*) AS c WHERE c > 1 RETURN count(*) AS n")[0]["n"] == 0


def test_put_batches_takes_records_another_write_stored_after_the_batch_was_asked_about(store, tmp_path):
    # On Neo4j put_batches asks which ids a batch implies or points at in a read of its own, while
    # the batch before is written. Another write can store one of them between that read and the
    # batch's write: an implied proposition (the store refuses a second node; the batch runs again)
    # or the source a claim points at (the write asks about what the read did not see). The oracle:
    # the same writes, one plain ``put`` after another, in a second store.
    agent, source, claim, _ = small_graph()
    fields = {k: v for k, v in claim.to_json().items() if k not in ("kind", "id")}
    twin = Claim(**{**fields, "observed_at": "2026-07-05T11:00:00Z"})
    assert twin.id != claim.id and [p.id for p in twin.implied()] == [p.id for p in claim.implied()]
    late = Source(key="source-late", name="A source stored while its claim was prepared")
    pointing = Claim(**{**fields, "source": late.id})

    def interleaved() -> Iterator[list[Record]]:
        # Each batch after the first is asked about before the next one is requested: a write
        # here comes after that question and before that batch's write.
        yield [agent, source]
        yield [claim]
        store.put([twin], at=NOW)
        yield [pointing]
        store.put([late], at=NOW)

    reports = list(store.put_batches(interleaved(), at=NOW))
    assert [(r.written, r.existing, r.failed) for r in reports] == [([agent.id, source.id], [], []), ([claim.id], [], []), ([pointing.id], [], [])]
    with GafStore.open(str(tmp_path / "looped")) as looped:
        for batch in ([agent, source], [twin], [claim], [late], [pointing]):  # the order the writes committed in
            looped.put(batch, at=NOW)
        assert store.counts() == looped.counts() == {"agent": 1, "claim": 3, "proposition": 1, "source": 2}
        assert all(store.stored_nodes(kind) == looped.stored_nodes(kind) for kind in store.counts())


def test_put_batches_stops_at_a_refused_batch_and_keeps_the_batches_before_it(store):
    agent, source, claim, other = small_graph()
    bad = {**other.to_json(), "observed_at": "not a time"}
    stream = store.put_batches([[agent, source, claim], [bad], [other]], at=NOW)
    assert next(stream).written == [agent.id, source.id, claim.id]
    with pytest.raises(BatchRejected) as info:
        next(stream)
    assert "observed_at" in info.value.errors[0].what
    assert store.counts() == {"agent": 1, "claim": 1, "proposition": 1, "source": 1}


def test_put_batches_parses_under_the_callers_size_limits(store):
    from gaf.errors import PayloadTooLarge
    from gaf.records import limits

    agent, source, claim, _ = small_graph()
    with limits(max_record_bytes=200), pytest.raises(BatchRejected) as info:
        list(store.put_batches([[agent.to_json(), source.to_json(), claim.to_json()]], at=NOW))
    assert any(isinstance(e, PayloadTooLarge) for e in info.value.errors)
    assert store.counts() == {}


def test_a_record_pointing_at_a_stored_record_needs_no_second_copy(store):
    agent, source, claim, other = small_graph()
    store.put([agent, source], at=NOW)
    assert sorted(store.put([claim, other], at=NOW).written) == sorted([claim.id, other.id])
    assert store.edges_from(claim.id) == sorted(
        [("FROM_SOURCE", source.id), ("OBSERVED_BY", agent.id), ("ASSERTS", claim.implied()[0].id)]
    )


def test_the_interface_has_no_way_to_update_or_delete_a_record():
    public = {name for name in dir(GafStore) if not name.startswith("_")}
    assert not {n for n in public if any(w in n for w in ("update", "delete", "remove", "set", "replace", "merge"))}


def test_find_filters_on_node_properties_and_refuses_others(store):
    agent, source, claim, other = small_graph()
    store.put([agent, source, claim, other], at=NOW)
    assert [r.id for r in store.find("agent", key=agent.key)] == [agent.id]
    assert [r.id for r in store.find("claim", source=source.id)] == sorted([claim.id, other.id])
    with pytest.raises(InvalidRecord, match="cannot filter claim"):
        store.find("claim", body="x")


def test_exists_and_get_many_answer_for_ids_of_any_kind(store):
    batch = small_graph()
    store.put(batch, at=NOW)
    missing = "claim:" + "f" * 64
    ids = [r.id for r in batch] + [missing]
    assert store.exists(ids) == {r.id for r in batch}
    assert set(store.get_many(ids)) == {r.id for r in batch}
    assert store.get(missing) is None


def test_a_stored_node_altered_behind_gafs_back_is_detected_on_read(store):
    agent, source, claim, _ = small_graph()
    store.put([agent, source, claim], at=NOW)
    body = json.loads(claim.body) | {"scope": "edited in place"}
    forged = json.dumps(body)
    store._write(lambda tx: tx.run("MATCH (n:Claim {id: $id}) SET n.body = $b", {"id": claim.id, "b": forged}) and None)
    with pytest.raises(InvalidRecord, match="does not match the content"):
        store.get(claim.id)


def test_ids_of_a_kind_come_back_in_id_order_whatever_order_they_were_written_in(store):
    # The store reads them unordered and sorts them itself (questions._IDS): the order every
    # reader of a whole kind relies on (an export's chunks, verify, migrate) is pinned here.
    agents = [Agent(key=f"observer-{n}", name=f"observer {n}", agent_type="person") for n in range(40)]
    for half in (agents[1::2], agents[::2]):
        store.put(half, at=NOW)
    got = list(store.ids("agent"))
    assert got == sorted(a.id for a in agents)
    assert list(store.ids("claim")) == []


def test_reading_a_whole_kind_keeps_none_of_its_records_in_the_parse_memo(store):
    """A whole kind read (an export, a listing) reads each record once: memoising them filled
    ``parse_body``'s memo to its 20,000 and dropped it, over and over (at 1M records, 105 MB of
    the export's peak). What it reads is each record as stored; a lookup still keeps its own."""
    from gaf.records import registry

    agents = [Agent(key=f"reader-{n}", name=f"reader {n}", agent_type="person") for n in range(30)]
    store.put(agents, at=NOW)
    registry._READ.clear()
    got = list(store.records("agent", chunk=7))
    assert got == sorted(agents, key=lambda a: a.id)
    assert registry._READ == {}
    assert store.get_many([a.id for a in agents[:3]], keep=False) == {a.id: a for a in agents[:3]}
    assert registry._READ == {}
    assert store.get_many([agents[0].id]) == {agents[0].id: agents[0]}
    assert len(registry._READ) == 1


def test_the_same_records_get_the_same_ids_on_both_stores(ladybug_store, neo4j_store):
    batch = small_graph("both")
    ladybug_store.put(batch, at=NOW)
    neo4j_store.put(batch, at=NOW)
    assert sorted(ladybug_store.ids("claim")) == sorted(neo4j_store.ids("claim"))
    assert ladybug_store.counts() == neo4j_store.counts()


def test_agents_with_the_same_key_but_other_content_are_distinct_records(store):
    a = Agent(key="k", name="one", agent_type="person")
    b = Agent(key="k", name="two", agent_type="person")
    store.put([a, b], at=NOW)
    assert len(store.find("agent", key="k")) == 2


def _reopened_read_only(store: GafStore, request) -> GafStore:
    """The same store opened again, read-only, through gaf.store.open with explicit settings."""
    from gaf import store as stores
    from gaf.settings import Settings

    if store.dialect == "neo4j":
        server = request.getfixturevalue("neo4j_server")
        return stores.open(store.location, auth=(server.user, server.password), read_only=True)
    store.close()  # LadybugDB: one process holds a database file open at a time
    return stores.open(store.location, read_only=True, settings=Settings())


def test_a_store_opened_read_only_reads_and_refuses_every_write_on_both_stores(store, request):
    from gaf.errors import StoreError

    batch = small_graph()
    store.put(batch, at=NOW)
    reader = _reopened_read_only(store, request)
    try:
        assert reader.read_only and reader.get(batch[0].id) == batch[0]
        before = reader.counts()
        with pytest.raises(StoreError, match="read-only"):
            reader.put(small_graph("other"), at=NOW)
        assert reader.counts() == before
    finally:
        reader.close()


def test_opening_a_store_explicitly_reads_nothing_from_the_environment(tmp_path, monkeypatch):
    from gaf import store as stores
    from gaf.settings import Settings

    monkeypatch.setenv("GAF_STORE", str(tmp_path / "from-env.lbug"))
    with stores.open(settings=Settings(store=str(tmp_path / "explicit.lbug"))) as s:
        assert s.location == str(tmp_path / "explicit.lbug")
    assert not (tmp_path / "from-env.lbug").exists()
    with GafStore.open() as s:  # the scripts' convenience takes the environment's settings
        assert s.location == str(tmp_path / "from-env.lbug")


@pytest.mark.parametrize(("variable", "value"), [("GAF_LOCK_WAIT", "soon"), ("GAF_NEO4J_RETRY_SECONDS", "-1")])
def test_a_setting_that_does_not_parse_is_refused_naming_its_variable(variable, value):
    from gaf.errors import InvalidValue
    from gaf.settings import Settings

    with pytest.raises(InvalidValue) as refused:
        Settings.from_env({variable: value})
    assert refused.value.where == variable and value in refused.value.message


def test_settings_never_print_the_password():
    from gaf.settings import Settings

    settings = Settings.from_env({"NEO4J_PASSWORD": "s3cret-value", "GAF_STORE": "bolt://db:7687"})
    assert settings.neo4j_password == "s3cret-value" and "s3cret" not in repr(settings) and "bolt://db:7687" in repr(settings)
