"""Refused inputs: mistakes that would otherwise be recorded for ever, refused where they are made.

Issue 16, "nothing silent". Each refusal is a typed error that names the place —
the file, line and column of a YAML file, the line of a claims file, the rule set —
and says what to do; and nothing is written.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gaf.errors import DuplicateKey, InvalidRecord, LeadingZero
from gaf.ledger import ingest
from gaf.policies import read_policy, read_rules, unestablished_predicates
from gaf.records import VerdictRules
from gaf.rules import UnestablishedPredicate
from gaf.store import GafStore
from tests.conftest import NOW, RENT
from tests.rentcase import load

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


# ---------------------------------------------------------------------- predicates nothing establishes


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


def test_derivation_rule_naming_unestablished_predicate_suggests_the_closest(ladybug_store, tmp_path):
    ingest(ladybug_store, RENT / "claims.yaml", recorded_at=NOW)
    path = tmp_path / "policy.yaml"
    path.write_text((RENT / "policy.yaml").read_text().replace("      - credited_to(?P, ?Acct)", "      - credted_to(?P, ?Acct)"))
    with pytest.raises(UnestablishedPredicate, match="predicate 'credted_to' is neither derived by a rule nor established "
                       "by any trusted source; did you mean credited_to\\?"):  # fmt: skip
        read_policy(ladybug_store, path)
