"""Ids as people type them: a unique prefix names its record, on both stores and in the CLI.

The oracle is the store's own list of ids, filtered by ``str.startswith``: every stored id,
cut to 4, 5, 6, 8, 12 and 16 hex digits with its kind (and a sample without it), resolves to that id
exactly when no other id of the kinds looked at starts the same way, and is refused as
ambiguous otherwise. The other way round, ids as people read them: every prefix a table
prints is at least 12 hex digits, names one id of the output (and for ``gaf list``, of the
store) and is as short as that allows, checked by brute force over the ids; pasted back into
``gaf show`` it names its record; and beside it the table says what the record is."""

from __future__ import annotations

import json
import os
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner
from typer.testing import Result as CliResult

from gaf.canonical import PREFIX_DIGITS, short_ids
from gaf.cli import app
from gaf.cli.output import statement_text
from gaf.errors import AmbiguousReference, InvalidRecord, UnknownReference
from gaf.ledger import ingest
from gaf.records import RECORD_TYPES, Agent
from tests.conftest import RENT
from tests.rentcase import RENT_JULY, close_both
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


# Printed prefixes: what tables and text show is the shortest prefix, never under 12 hex digits,
# that no other id of its kind in the same output starts with. The oracle is brute force: every
# printed prefix compared with every id of the set by str.startswith.

_KINDS = ("action", "action_policy", "closure")  # "action:" and "action_policy:" share a start


@st.composite
def id_families(draw) -> list[str]:
    """Ids of a few kinds, most of them made to agree with an earlier one on 10 to 22 hex digits
    (so 12 digits are often not enough, and sometimes just enough), some of them twice."""
    ids: list[str] = []
    hexes = st.text("0123456789abcdef", min_size=64, max_size=64)
    for _ in range(draw(st.integers(1, 12))):
        kind, fresh = draw(st.sampled_from(_KINDS)), draw(hexes)
        if ids and draw(st.booleans()):
            kin = draw(st.sampled_from(ids)).partition(":")[2]
            shared = draw(st.integers(10, 22))
            fresh = kin[:shared] + fresh[shared:]
        ids.append(f"{kind}:{fresh}")
    return ids + draw(st.lists(st.sampled_from(ids), max_size=2))


@given(id_families())
def test_printed_prefixes_are_at_least_twelve_digits_unique_among_the_ids_and_as_short_as_can_be(ids):
    shown = short_ids(ids)
    assert set(shown) == set(ids)
    for rid, printed in shown.items():
        typed = printed.removesuffix("…")
        kind, _, digits = typed.partition(":")
        assert printed == rid if len(digits) == 64 else printed == typed + "…"
        assert rid.startswith(typed) and len(digits) >= PREFIX_DIGITS
        assert [other for other in set(ids) if other.startswith(typed)] == [rid], printed
        if len(digits) > PREFIX_DIGITS:  # one digit fewer would name another id too
            assert any(other != rid and other.startswith(typed[:-1]) for other in ids), printed


_PRINTED = re.compile(r"[a-z_]+:[0-9a-f]{12,}…")


def _printed(output: str) -> list[str]:
    return _PRINTED.findall(output)


def test_a_prefix_gaf_list_or_history_prints_pasted_into_gaf_show_names_that_record(ladybug_store):
    close_both(ladybug_store)
    where = ladybug_store.location
    runner = CliRunner()
    pasted = 0
    for args, listed in ((["list", "closure"], "list"), (["list", "fact"], "list"), (["list", "agent"], "list"),
                         (["history", RENT_JULY], "history")):  # fmt: skip
        table = runner.invoke(app, [*args, "--store", where])
        ids = [row["closure"] if listed == "history" else row["id"] for row in json.loads(runner.invoke(app, [*args, "--json", "--store", where]).output)]
        printed = _printed(table.output)
        assert table.exit_code == 0 and len({p for p in printed if p.startswith(ids[0].partition(":")[0])}) == len(ids), table.output
        for prefix in printed:
            shown = runner.invoke(app, ["show", prefix, "--json", "--store", where])
            assert shown.exit_code == 0, shown.output
            assert json.loads(shown.output)["id"].startswith(prefix.removesuffix("…"))
            pasted += 1
    assert pasted >= 10


def test_gaf_list_lengthens_a_prefix_the_next_stored_id_shares_even_past_the_last_row(ladybug_store, monkeypatch):
    # Twins share their first 6 hex digits; with the floor lowered to 4 digits, every printed
    # prefix of theirs must be longer than 6, even when the second twin is past the table's end.
    import gaf.canonical
    import gaf.cli.records

    pair = twins()
    ingest(ladybug_store, pair, recorded_at=AT)
    agents = list(ladybug_store.ids("agent"))
    first, second = sorted(a.id for a in pair)
    assert agents.index(second) == agents.index(first) + 1  # neighbours in id order
    monkeypatch.setattr(gaf.canonical, "PREFIX_DIGITS", 4)
    monkeypatch.setattr(gaf.cli.records, "TABLE_ROWS", agents.index(first) + 1)  # the second twin is not shown
    shared = len(os.path.commonprefix([first, second]))
    listed = CliRunner().invoke(app, ["list", "agent", "--store", ladybug_store.location])
    printed = re.findall(r"agent:[0-9a-f]{4,}…", listed.output)
    assert listed.exit_code == 0 and second[: shared + 1] + "…" not in printed, listed.output
    assert first[: shared + 1] + "…" in printed, listed.output
    assert ladybug_store.resolve_id(first[: shared + 1]) == first


def test_tables_say_what_each_record_is_beside_its_id(ladybug_store):
    # The oracle: each listed record's own fields, and the records they point at, read through the store.
    close_both(ladybug_store)
    where = ladybug_store.location
    runner = CliRunner()
    for kind, label in (
        ("fact", lambda r: statement_text(ladybug_store.get(r.proposition))),
        ("verdict", lambda r: f"{r.label} {r.strength:+} about {ladybug_store.get(r.closure).subject}"),
        ("closure", lambda r: r.subject),
        ("source", lambda r: r.key),
        ("projection", lambda r: f"{r.name}@{r.version}"),
        ("rules", lambda r: f"{r.name}@{r.version}"),
    ):  # fmt: skip
        table = runner.invoke(app, ["list", kind, "--store", where])
        assert table.exit_code == 0, table.output
        rows = {line.split("│")[2].strip(): line.split("│")[3].strip() for line in table.output.splitlines() if line.startswith("│")}
        records = ladybug_store.find(kind)
        assert len(rows) == len(records)
        shown = short_ids(r.id for r in records)
        for record in records:
            assert rows[shown[record.id]].startswith(label(record)), (kind, rows[shown[record.id]])


def test_an_agent_option_takes_a_key_an_id_or_a_prefix_of_one(tmp_path):
    # The oracle: the reviewer each projection's decision records, read back as a whole id.
    where = str(tmp_path / "store.lbug")
    runner = CliRunner()

    def gaf(*args: str) -> CliResult:
        return runner.invoke(app, [*args, "--store", where])

    for step in (["init"], ["ingest", str(RENT / "claims.yaml")], ["policy", "add", str(RENT / "policy.yaml")]):
        assert gaf(*step).exit_code == 0
    clerk = next(a["id"] for a in json.loads(gaf("list", "agent", "--json").output) if a["key"] == "registry-clerk")
    for n, typed in enumerate(("registry-clerk", clerk, clerk[:18], clerk[6:20] + "…")):
        projected = gaf("project", "rent-delinquency@1", "--reviewer", typed, "--as-of", "2026-07-15", "--at", f"2026-07-1{5 + n}")
        assert projected.exit_code == 0, (typed, projected.output)
    decisions = json.loads(gaf("list", "decision", "--json").output)
    assert len(decisions) == 4 and {d["reviewer"] for d in decisions} == {clerk}
    source = gaf("project", "rent-delinquency@1", "--reviewer", "bank-ledger", "--dry-run")
    assert source.exit_code == 2 and "no agent with key 'bank-ledger'" in source.output, source.output  # a source's key is not an agent's
