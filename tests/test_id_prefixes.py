"""Ids as people type them: a unique prefix names its record, on both stores and in the CLI.

The oracle is the store's own list of ids, filtered by ``str.startswith``: every stored id,
cut to 4, 5, 6, 8, 12 and 16 hex digits with its kind (and a sample without it), resolves to that id
exactly when no other id of the kinds looked at starts the same way, and is refused as
ambiguous otherwise."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from gaf.cli import app
from gaf.errors import AmbiguousReference, InvalidRecord, UnknownReference
from gaf.ledger import ingest
from gaf.records import RECORD_TYPES, Agent
from tests.rentcase import close_both
from tests.workers import AT


def _stored(store) -> dict[str, list[str]]:
    return {k: list(store.ids(k)) for k, cls in RECORD_TYPES.items() if not cls.ABOUT_THE_STORE}


def twins() -> list[Agent]:
    """The first two agents (by number, in a fixed order) whose ids share their first 6 hex
    digits: a prefix that is certainly ambiguous, found by search, not by luck."""
    seen: dict[str, Agent] = {}
    for n in range(100_000):
        agent = Agent(key=f"twin-{n}", name=f"twin {n}", agent_type="person")
        head = agent.id.partition(":")[2][:6]
        if head in seen:
            return [seen[head], agent]
        seen[head] = agent
    raise AssertionError("no two agent ids share 6 hex digits")


def test_every_unique_prefix_of_a_stored_id_names_it_and_a_shared_one_is_ambiguous(store):
    close_both(store)
    pair = twins()
    ingest(store, pair, recorded_at=AT)
    with pytest.raises(AmbiguousReference, match="names 2 records"):
        store.resolve_id(pair[0].id[:12])  # "agent:" and the 6 digits they share
    stored = _stored(store)
    every = [i for ids in stored.values() for i in ids]
    checked = {"unique": 0, "ambiguous": 0}
    for kind, ids in stored.items():
        for index, rid in enumerate(ids):
            digits = rid.partition(":")[2]
            for n in (4, 5, 6, 8, 12, 16):
                forms = [(f"{kind}:{digits[:n]}", ids)]
                if index % 4 == 0 and n in (4, 6):  # the digits alone are looked for in every kind: a sample
                    forms.append((digits[:n], every))
                for typed, pool in forms:
                    matches = [i for i in pool if i.partition(":")[2].startswith(digits[:n])]
                    if len(matches) == 1:
                        assert store.resolve_id(typed) == rid, typed
                        checked["unique"] += 1
                    else:
                        with pytest.raises(AmbiguousReference):
                            store.resolve_id(typed)
                        checked["ambiguous"] += 1
    assert checked["unique"] > 300 and checked["ambiguous"] >= 6, checked  # the twins, at 4, 5 and 6 digits


def test_a_prefix_as_tables_print_it_is_read_and_a_wrong_one_is_refused_saying_why(store):
    c1, _ = close_both(store)
    closure = c1.closure.id
    assert store.resolve_id(f"{closure[:20]}…") == closure  # as short_id prints it
    assert store.resolve_id(closure[8:24], ("closure",)) == closure  # the digits alone, among closures
    assert store.resolve_id(closure) == closure  # a whole id is returned as it is
    with pytest.raises(InvalidRecord, match="is a closure id; a gaf is wanted"):
        store.resolve_id(closure[:20], ("gaf",))
    with pytest.raises(UnknownReference, match="no closure id starts with"):
        store.resolve_id("closure:" + ("0" if closure[8] != "0" else "1") * 12)
    for bad in ("closure:ab", "closure:xyz1", "nokind:abcd1234", "", "ab"):
        with pytest.raises(InvalidRecord, match="not a gaf id or id prefix"):
            store.resolve_id(bad)


def test_commands_take_prefixes(ladybug_store, tmp_path):
    c1, c2 = close_both(ladybug_store)
    where = ladybug_store.location  # read-only commands open it beside the fixture's writer
    runner = CliRunner()
    verdict = runner.invoke(app, ["verdict", c2.closure.id[:20], "--json", "--store", where])
    assert verdict.exit_code == 0, verdict.output
    assert json.loads(verdict.output)["closure"] == c2.closure.id
    shown = runner.invoke(app, ["show", c1.closure.id[8:20] + "…", "--json", "--store", where])
    assert shown.exit_code == 0 and json.loads(shown.output)["id"] == c1.closure.id, shown.output
    replayed = runner.invoke(app, ["replay", c2.closure.id[:16], "--store", where])
    assert replayed.exit_code == 0 and "identical" in replayed.output, replayed.output
    wrong = runner.invoke(app, ["verdict", "closure:zz", "--store", where])
    assert wrong.exit_code == 2 and "not a gaf id or id prefix" in wrong.output and "Traceback" not in wrong.output


def test_a_key_or_name_at_version_names_its_record_where_the_record_has_one(store):
    # The oracle: every stored record read back whole, its key or name and version compared in Python.
    close_both(store)
    from tests.rentcase import authority

    authority(store)
    keyed = [r for k in ("agent", "source") for r in store.find(k)]
    versioned = [r for k in ("projection", "rules", "action_policy", "policy") for r in store.find(k)]
    assert keyed and versioned
    for record in keyed:
        same = [r.id for r in keyed if r.key == record.key]
        if len(same) == 1:
            assert store.resolve_id(record.key) == record.id
            assert store.resolve_id(record.key, (record.KIND,)) == record.id
        else:
            with pytest.raises(AmbiguousReference):
                store.resolve_id(record.key)
    for record in versioned:
        typed = f"{record.name}@{record.version}"
        same = [r.id for r in versioned if (r.name, r.version) == (record.name, record.version)]
        if len(same) == 1:
            assert store.resolve_id(typed) == record.id
        assert store.resolve_id(typed, (record.KIND,)) == record.id
    with pytest.raises(UnknownReference, match="with key"):
        store.resolve_id("nobody-has-this-key")
    with pytest.raises(UnknownReference, match="named"):
        store.resolve_id(f"{versioned[0].name}@999")
    with pytest.raises(InvalidRecord, match="whole number"):
        store.resolve_id(f"{versioned[0].name}@x")
    with pytest.raises(InvalidRecord, match="is a"):  # a name of a kind the command does not take
        store.resolve_id("closure:" + keyed[0].id.partition(":")[2][:8], ("verdict",))
    # A kind that has no names: a key is not an id of it.
    with pytest.raises(InvalidRecord, match="not a gaf id"):
        store.resolve_id(keyed[0].key, ("closure",))
