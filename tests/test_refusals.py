"""Refused inputs: mistakes that would otherwise be recorded for ever, refused where they are made.

Issue 16, "nothing silent". Each refusal is a typed error that names the place —
the file, line and column of a YAML file, the line of a claims file, the rule set —
and says what to do; and nothing is written.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gaf.cli import app
from gaf.closure import close
from gaf.errors import DuplicateKey, GafError, InvalidRecord, LeadingZero
from gaf.ledger import ingest
from gaf.policies import publish, read_policy, read_rules, unestablished_predicates
from gaf.projection import project
from gaf.records import Proposition, Statement, VerdictRules
from gaf.rules import UnestablishedPredicate
from gaf.store import GafStore
from tests.conftest import NOW, RENT
from tests.rentcase import BEFORE_E, RENT_JULY, agent_id, load

#: Someone and something to say things, ahead of the claims of each file.
PARTIES = """\
- {kind: agent, key: clerk, name: A clerk, agent_type: person}
- {kind: source, key: ledger, name: A ledger}
"""


def _claims(tmp_path: Path, statements: str, name: str = "claims.yaml") -> Path:
    path = tmp_path / name
    path.write_text(
        PARTIES + "- kind: claim\n  source: ledger\n  observer: clerk\n  observed_at: 2026-07-05T10:00:00Z\n"
        "  transformation: human_entry\n  statements:\n" + statements,
        encoding="utf-8",
    )
    return path


def _values(store: GafStore) -> dict[str, object]:
    """Each stored statement's value, by predicate."""
    return {s.predicate: s.value for c in store.find("claim") for s in c.statements}  # type: ignore[attr-defined]


# ---------------------------------------------------------------------- YAML 1.2


def test_yaml_no_stays_a_string(store, tmp_path):
    path = _claims(tmp_path, "".join(
        f"    - {{subject: 'form:1', predicate: {p}, value: {v}}}\n"
        for p, v in [("answer", "no"), ("consent", "yes"), ("heating", "off"), ("alarm", "on"), ("initial", "n"), ("flag", "true")]
    ))  # fmt: skip
    ingest(store, path, recorded_at=NOW)
    assert _values(store) == {"answer": "no", "consent": "yes", "heating": "off", "alarm": "on", "initial": "n", "flag": True}


def test_yaml_is_read_as_yaml_1_2_in_policies_too(ladybug_store, tmp_path):
    """A question or purpose of ``no`` would not even have been text under YAML 1.1."""
    path = tmp_path / "policy.yaml"
    path.write_text("name: p\nversion: 1\nquestion: no\npurpose: off\n", encoding="utf-8")
    policy = read_policy(ladybug_store, path)
    assert (policy.question, policy.purpose) == ("no", "off")


def test_yaml_1_1_sexagesimal_and_timestamps_stay_the_text_written(store, tmp_path):
    path = _claims(tmp_path, (
        "    - {subject: 'run:1', predicate: duration, value: 1:30}\n"
        "    - {subject: 'run:1', predicate: started, value: 2026-07-05T10:00:00Z}\n"
        "    - {subject: 'run:1', predicate: mode, value: 0o17}\n"
        "    - {subject: 'run:1', predicate: count, value: 1e3}\n"
    ))  # fmt: skip
    ingest(store, path, recorded_at=NOW)
    assert _values(store) == {"duration": "1:30", "started": "2026-07-05T10:00:00Z", "mode": 15, "count": 1000.0}


# ---------------------------------------------------------------------- leading zeros


def test_leading_zero_number_is_refused_with_quote_it(store, tmp_path):
    path = _claims(tmp_path, "    - {subject: 'invoice:1', predicate: order_number, value: 0012}\n")
    before = store.counts()
    with pytest.raises(LeadingZero) as info:
        ingest(store, path, recorded_at=NOW)
    assert info.value.where == f"{path}:9:62"
    assert "0012 is an unquoted number with a leading zero: YAML reads it as 12 (YAML 1.1: octal 10)" in info.value.what
    assert info.value.hint.startswith("quote it: '0012'")
    assert store.counts() == before


def test_quoted_leading_zero_is_kept_as_written(store, tmp_path):
    ingest(store, _claims(tmp_path, "    - {subject: 'invoice:1', predicate: order_number, value: '0012'}\n"), recorded_at=NOW)
    assert _values(store) == {"order_number": "0012"}


@pytest.mark.parametrize("text", ["version: 01", "version: 1\nrules:\n  - {name: a, role: warrant, qualifier: 00.5}"])
def test_leading_zero_is_refused_in_rules_files(tmp_path, text):
    path = tmp_path / "rules.yaml"
    path.write_text(f"name: r\n{text}\n", encoding="utf-8")
    with pytest.raises(LeadingZero, match="leading zero") as info:
        read_rules(path)
    assert re.fullmatch(rf"{re.escape(str(path))}:\d+:\d+", info.value.where)


# ---------------------------------------------------------------------- file, line and column


@pytest.mark.parametrize(
    ("text", "error", "place"),
    [
        ("name: r\n\tversion: 1\n", InvalidRecord, ":2:1"),  # a tab where indentation goes
        ("name: r\nversion: [1\n", InvalidRecord, ":3:1"),  # an unclosed flow sequence
        ("name: r\nversion: 1\nname: s\n", DuplicateKey, ":3:1"),  # YAML 1.2 keys are unique
        ("name: r\nconclusion: a\x01b\n", InvalidRecord, ":2:14"),  # a control character
        ("name: r\nversion: 007\n", LeadingZero, ":2:10"),
    ],
)
def test_every_yaml_error_names_file_line_and_column(ladybug_store, tmp_path, text, error, place):
    for kind, read in [("claims", lambda p: ingest(ladybug_store, p, recorded_at=NOW)),
                       ("policy", lambda p: read_policy(ladybug_store, p)), ("rules", read_rules)]:  # fmt: skip
        path = tmp_path / f"{kind}.yaml"
        path.write_text(text, encoding="utf-8")
        with pytest.raises(error) as info:
            read(path)
        assert info.value.where == f"{path}{place}", (kind, info.value.message)
    assert ladybug_store.counts() == {}


# ---------------------------------------------------------------------- object and value


def test_statement_with_object_and_value_is_refused(store, tmp_path):
    path = _claims(tmp_path, "    - {subject: 'payment:1', predicate: credited_to, object: 'account:a', value: 1000}\n", "both.yaml")
    before = store.counts()
    with pytest.raises(GafError) as info:
        ingest(store, path, recorded_at=NOW)
    (first, *_) = info.value.errors
    assert isinstance(first, InvalidRecord) and first.where == f"{path}:3"
    assert "credited_to(payment:1) has both an object ('account:a') and a value (1000): keep object if it names another" in first.what
    assert store.counts() == before


def test_proposition_with_object_and_value_is_refused():
    with pytest.raises(ValueError, match="keep object if it names another thing"):
        Proposition(subject="payment:1", predicate="credited_to", object="account:a", value=1000)
    with pytest.raises(ValueError, match="and drop the other"):
        Statement(subject="payment:1", predicate="credited_to", object="account:a", value=1000)


# ---------------------------------------------------------------------- predicates nothing establishes


def _rent_rules(**renames: str) -> VerdictRules:
    """The rent case's verdict rules with some condition predicates renamed (a typo, say)."""
    rules = read_rules(RENT / "verdict-rules.yaml")
    data = rules.model_dump(mode="json", exclude={"id"})
    for rule in data["rules"]:
        rule["condition"] = [json.loads(re.sub(r'"predicate": "(\w+)"', lambda m: f'"predicate": "{renames.get(m[1], m[1])}"',
                                               json.dumps(c))) for c in rule["condition"]]  # fmt: skip
    return VerdictRules.model_validate(data | {"version": 2})


def test_verdict_rule_naming_unestablished_predicate_is_refused_at_close_with_suggestion(store):
    policy = load(store)
    rules = publish(store, _rent_rules(paid="payd"), at=NOW)
    projected = project(store, policy, as_of=BEFORE_E, reviewer=agent_id(store, "registry-clerk"), at=BEFORE_E)
    before = store.counts()
    with pytest.raises(UnestablishedPredicate) as info:
        close(store, projected.gaf.id, rules, subject=RENT_JULY, as_of=BEFORE_E, closed_at=BEFORE_E)
    assert info.value.what == (
        "verdict rule paid-by-allocated-transfer names payd, which no rule derives and no trusted source "
        "establishes under rent-delinquency@1; did you mean paid?"
    )
    assert info.value.where == "rent-paid@2" and "gaf rules revise" in info.value.hint
    assert store.counts() == before


def test_a_negated_condition_naming_an_unestablished_predicate_is_found_too(ladybug_store):
    policy = load(ladybug_store)
    rules = VerdictRules(name="typos", version=1, conclusion="c", rules=[
        {"name": "r1", "role": "warrant", "condition": ["paid(?subject)", "not reversd(?subject)"]},
        {"name": "r2", "role": "rebuttal", "condition": ["alocated_to(?p, ?subject)", "zzz(?p)"]},
    ])  # fmt: skip
    found = unestablished_predicates(rules, policy)
    assert [(f.rule, f.predicate, f.closest) for f in found] == [
        ("r1", "reversd", "reversed"),
        ("r2", "alocated_to", "allocated_to"),
        ("r2", "zzz", None),
    ]
    assert found[2].describe(policy.ref).endswith("under rent-delinquency@1")  # no suggestion when nothing is close
    assert unestablished_predicates(read_rules(RENT / "verdict-rules.yaml"), policy) == []


def test_rules_add_warns_of_unestablished_predicate_and_succeeds(store, tmp_path):
    load(store)
    typo = tmp_path / "typo.yaml"
    typo.write_text((RENT / "verdict-rules.yaml").read_text().replace('["paid(?subject)"]', '["payd(?subject)"]'))
    target = store.location
    if store.dialect == "ladybug":
        store.close()  # one process holds the embedded store at a time; the CLI opens it itself
    runner = CliRunner()
    good = runner.invoke(app, ["rules", "add", str(RENT / "verdict-rules.yaml"), "--store", target])
    assert good.exit_code == 0 and "warning" not in good.stderr, good.stderr
    warned = runner.invoke(app, ["rules", "revise", str(typo), "--store", target, "--json"])
    assert warned.exit_code == 0, warned.output
    assert json.loads(warned.stdout)["version"] == 2
    assert (
        "warning: verdict rule paid-by-allocated-transfer names payd, which no rule derives and no trusted source "
        "establishes under any published policy (rent-delinquency@1); did you mean paid?"
    ) in warned.stderr


def test_derivation_rule_naming_unestablished_predicate_suggests_the_closest(ladybug_store, tmp_path):
    ingest(ladybug_store, RENT / "claims.yaml", recorded_at=NOW)
    path = tmp_path / "policy.yaml"
    path.write_text((RENT / "policy.yaml").read_text().replace("      - credited_to(?P, ?Acct)", "      - credted_to(?P, ?Acct)"))
    with pytest.raises(UnestablishedPredicate, match="predicate 'credted_to' is neither derived by a rule nor established "
                       "by any trusted source; did you mean credited_to\\?"):  # fmt: skip
        read_policy(ladybug_store, path)
