"""Projection policies: one structure in YAML and Python, published versions never change."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from gaf.errors import InvalidRecord, UnknownReference
from gaf.policies import PolicyConflict, UnknownPolicy, get, history, parse_ref, publish, read_policy, resolve, revise
from gaf.records import Projection
from gaf.rules import RuleError
from tests.conftest import NOW, RENT
from tests.rentcase import load


def _write(tmp_path: Path, data: dict) -> Path:
    path = tmp_path / "policy.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def _rent_policy_data() -> dict:
    return yaml.safe_load((RENT / "policy.yaml").read_text())


def test_the_yaml_and_python_spellings_are_one_structure(store):
    policy = load(store)
    again = Projection.model_validate(policy.model_dump(mode="json", exclude={"id"}))
    assert again == policy and again.id == policy.id
    assert [r.ref for r in policy.derivation_rules] == ["paid@1", "delinquent@1"]


def test_publishing_the_same_version_again_is_a_noop(store):
    policy = load(store)
    assert publish(store, policy, at=NOW).id == policy.id
    assert len(history(store, "rent-delinquency")) == 1


def test_a_published_version_never_changes(store):
    policy = load(store)
    changed = Projection.model_validate(policy.model_dump(exclude={"id"}) | {"purpose": "something else"})
    with pytest.raises(PolicyConflict, match="rent-delinquency@1 is already published with other content"):
        publish(store, changed, at=NOW)
    assert get(store, "rent-delinquency") == policy


def test_revise_makes_the_next_version_and_keeps_the_old_readable(store):
    policy = load(store)
    changed = Projection.model_validate(policy.model_dump(exclude={"id"}) | {"purpose": "revised purpose"})
    revised = revise(store, changed, at=NOW)
    assert (revised.version, revised.revises) == (2, policy.id)
    assert get(store, "rent-delinquency").id == revised.id
    assert get(store, "rent-delinquency", 1) == policy
    assert [p.version for p in history(store, "rent-delinquency")] == [1, 2]


def test_an_unknown_source_key_is_named_with_its_line(store, tmp_path):
    load(store)
    data = _rent_policy_data()
    data["trust"][2]["source"] = "no-such-source"
    with pytest.raises(UnknownReference) as info:
        read_policy(store, _write(tmp_path, data))
    assert "no-such-source" in info.value.what and info.value.where.startswith(f"{tmp_path / 'policy.yaml'}:")


def test_a_malformed_rule_names_the_file_line_and_rule(store, tmp_path):
    load(store)
    data = _rent_policy_data()
    data["derivation_rules"][1]["bodies"][0]["when"][0] = "instalment_of(?R, "
    with pytest.raises(InvalidRecord) as info:
        read_policy(store, _write(tmp_path, data))
    assert "rule delinquent" in info.value.what and "cannot read clause" in info.value.what
    line = int(info.value.where.rsplit(":", 1)[1])
    assert "instalment_of(?R, " in _write(tmp_path, data).read_text().splitlines()[line - 1]


@pytest.mark.parametrize(
    ("when", "message"),
    [
        (["instalment_of(?R, ?L)"], "head variable"),  # head is delinquent(?X) below
        (["instalment_of(?X, ?L)", "not credited_to(?P, ?Q)"], "appears only under not"),
        (["instalment_of(?X, ?L)", "ghost_predicate(?X)"], "neither derived by a rule nor established"),
        (["instalment_of(?X, ?L)", "paid@7(?X)"], "unknown rule paid@7"),
    ],
)
def test_unsound_rules_are_refused_before_anything_is_written(store, tmp_path, when, message):
    load(store)
    before = store.counts()
    data = _rent_policy_data()
    data["name"] = "other"
    data["derivation_rules"][1] = {"name": "delinquent", "head": "delinquent(?X)" if "head" not in message else "delinquent(?Z)", "when": when}
    with pytest.raises(RuleError, match=message) as info:
        read_policy(store, _write(tmp_path, data))
    assert "delinquent@1" in info.value.where
    assert store.counts() == before


def test_a_policy_that_negates_through_recursion_is_refused(store, tmp_path):
    load(store)
    data = _rent_policy_data()
    data["derivation_rules"][0]["when"].append("not delinquent@1(?R)")
    with pytest.raises(RuleError, match="unstratifiable"):
        read_policy(store, _write(tmp_path, data))


@pytest.mark.parametrize("text", ["rent@latest", "rent@0", "rent@", "@2", "rent@1.5", "rent@²"])
def test_a_version_that_is_not_a_whole_number_from_1_is_refused_with_how_to_write_it(text):
    with pytest.raises(InvalidRecord) as refused:
        parse_ref(text, where="NAME")
    assert refused.value.where == "NAME" and ("NAME@VERSION" in refused.value.hint or "@1" in refused.value.hint)


def test_a_published_version_is_named_by_its_name_or_name_at_version(store):
    policy = load(store)
    assert parse_ref("rent-delinquency") == ("rent-delinquency", None) and parse_ref("a@12") == ("a", 12)
    assert resolve(store, "rent-delinquency", Projection) == policy == resolve(store, "rent-delinquency@1", Projection)
    with pytest.raises(UnknownPolicy, match="rent-delinquency@2"):
        resolve(store, "rent-delinquency@2", Projection)


def test_every_write_names_its_time_so_policies_added_from_the_cli_carry_written_at(tmp_path):
    # Behaviour pinned by issue 17: `at` is required on put, publish and revise; before, a policy
    # added from the CLI had no written_at, and as-of questions treated it as always present.
    import inspect

    from typer.testing import CliRunner

    from gaf.cli import app
    from gaf.store import GafStore

    for write in (GafStore.put, publish, revise):
        assert inspect.signature(write).parameters["at"].default is inspect.Parameter.empty
    target = str(tmp_path / "cli.lbug")
    assert CliRunner().invoke(app, ["ingest", str(RENT / "claims.yaml"), "--store", target]).exit_code == 0
    assert CliRunner().invoke(app, ["policy", "add", str(RENT / "policy.yaml"), "--store", target]).exit_code == 0
    assert CliRunner().invoke(app, ["rules", "add", str(RENT / "verdict-rules.yaml"), "--store", target]).exit_code == 0
    with GafStore.open(target, read_only=True) as s:
        rows = [*s.read("MATCH (n:Projection) RETURN n.kind AS kind, n.written_at AS written_at"),
                *s.read("MATCH (n:VerdictRules) RETURN n.kind AS kind, n.written_at AS written_at")]
    assert sorted(r["kind"] for r in rows) == ["projection", "rules"] and all(r["written_at"] for r in rows)
