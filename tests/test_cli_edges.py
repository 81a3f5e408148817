"""Values checked at the edge: a time, a number, a format, a NAME@VERSION or an id the command line
or the environment gives that does not read is refused before the command opens its store — one
line naming the option (or variable) and the form it takes, exit code 2, nothing written — never
taken as now (``--as-of ""``), never accepted (``--auto-accept-at nan``), never printed in
Python's or pydantic's words.

The oracle of "nothing written" is the store's record counts before and after each command; of
the form, the words each case below expects, written here and not read from the code.
"""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from gaf.cli import app
from gaf.errors import ExitCode
from gaf.settings import SPANS
from gaf.store import GafStore
from tests.conftest import RENT
from tests.rentcase import RENT_JULY, closed_store

runner = CliRunner()

#: Words no refusal may print: a traceback, Python's or pydantic's own.
RAW = ("Traceback", "validation error", "Input should be", "ValueError", "invalid literal", "errors.pydantic.dev")

#: What a time's refusal says it may be.
TIME = "2026-07-15T10:00:00Z"
PROJECT = ["project", "rent-delinquency@1", "--reviewer", "registry-clerk"]

#: (command line, the option named, words of the valid form); each one must be refused.
EDGES = [
    ([*PROJECT, "--as-of", ""], "--as-of", TIME),
    ([*PROJECT, "--as-of", "yesterday"], "--as-of", TIME),
    ([*PROJECT, "--at", "2026-02-30"], "--at", TIME),
    (["close", "gaf:0000", "--rules", "rent-paid", "--subject", RENT_JULY, "--as-of", ""], "--as-of", TIME),
    (["reopen", "source", "bank-ledger", "--by", "registry-clerk", "--reason", "r", "--invalid-from", " ",
      "--reviewer", "registry-clerk"], "--invalid-from", TIME),  # fmt: skip
    (["impact", "policy", "rent-delinquency@1", "--effective", "2026-07-15T10:00:00"], "--effective", "with Z or an offset"),
    ([*PROJECT, "--auto-accept-at", "nan"], "--auto-accept-at", "a number from 0 to 1"),
    ([*PROJECT, "--auto-accept-at", "-5"], "--auto-accept-at", "a number from 0 to 1"),
    ([*PROJECT, "--auto-accept-at", "2"], "--auto-accept-at", "a number from 0 to 1"),
    ([*PROJECT, "--auto-accept-at", "inf"], "--auto-accept-at", "a number from 0 to 1"),
    (["whatif", "closure:0000", "--seconds", "nan"], "--seconds", "a number of seconds above 0"),
    (["whatif", "closure:0000", "--seconds", "0"], "--seconds", "a number of seconds above 0"),
    (["whatif", "closure:0000", "--max-size", "0"], "--max-size", "a whole number from 1"),
    (["impact", "source", "bank-ledger", "--seconds", "-1"], "--seconds", "a number of seconds above 0"),
    (["impact", "source", "bank-ledger", "--max-depth", "1.5"], "--max-depth", "a whole number from 1"),
    (["impact", "claim", "claim:0000", "--max-count", "1e309"], "--max-count", "a whole number from 1"),
    (["verdict", "closure:0000", "--tries", "-1"], "--tries", "a whole number from 0"),
    (["ingest", str(RENT / "claims.yaml"), "--batch-size", "0"], "--batch-size", "a whole number from 1"),
    (["ingest", "-", "--format", "xml"], "--format", "one of: jsonl, csv, yaml"),
    (["list", "claim", "--format", "xml"], "--format", "one of: table, json, ndjson, csv"),
    (["history", RENT_JULY, "--format", ""], "--format", "one of: table, json, ndjson, csv"),
    (["policy", "ratify", "policy_candidate:0000", "--by", "letting-agent", "--version", "0", "--effective", "2026-08-01"],
     "--version", "a whole number from 1"),  # fmt: skip
    (["act", "verdict:0000", "--kind", "k", "--subject", RENT_JULY, "--by", "letting-agent", "--grant", "grant:0000",
      "--policy", "rent-actions", "--key", "k", "--amount", "nan"], "--amount", "an exact number from 0"),  # fmt: skip
    (["serve", "--port", "70000"], "--port", "a whole number from 1 to 65535"),
    (["project", "@abc", "--reviewer", "registry-clerk"], "NAME", "write NAME or NAME@VERSION"),
    (["project", "x@", "--reviewer", "registry-clerk"], "NAME", "write x@1, x@2"),
    (["project", "x@-1", "--reviewer", "registry-clerk"], "NAME", "write x@1, x@2"),
    (["close", "gaf:0000", "--rules", "rent-paid@abc", "--subject", RENT_JULY, "--as-of", "2026-07-15"], "--rules", "write rent-paid@1"),
]


@pytest.fixture(scope="module")
def rent(tmp_path_factory) -> dict[str, str]:
    """An embedded store with the rent case's closures and grants: its path and a verdict's id."""
    path = tmp_path_factory.mktemp("edges") / "rent.lbug"
    closed_store(path)
    with GafStore.open(str(path), read_only=True) as s:
        verdict = s.find("verdict")[0].id
    return {"store": str(path), "verdict": verdict}


def _counts(store: str) -> dict[str, int]:
    with GafStore.open(store, read_only=True) as s:
        return s.counts()


def _refused(args: list[str], store: str, env: dict[str, str] | None = None) -> str:
    """The one line a command refused with (exit 2, nothing written); the store's line aside."""
    before = _counts(store)
    result = runner.invoke(app, [*args, "--store", store], env=env)
    said = [line for line in result.stderr.splitlines() if not line.startswith("store: ")]
    assert result.exit_code == ExitCode.BAD_INPUT, (args, result.exit_code, result.output)
    assert len(said) == 1 and said[0].startswith("error: "), (args, result.stderr)
    assert not any(raw in result.output for raw in RAW), (args, result.output)
    assert _counts(store) == before, f"{args} wrote while refusing"
    return said[0]


@pytest.mark.parametrize(("args", "where", "form"), EDGES, ids=lambda v: " ".join(v) if isinstance(v, list) else None)
def test_a_value_that_does_not_read_is_refused_in_one_line_naming_the_option_and_its_form(rent, args, where, form):
    line = _refused(args, rent["store"])
    assert line.startswith(f"error: {where}: ") and form in line, line


def test_an_empty_as_of_is_refused_and_never_taken_as_now(rent):
    # Before, `--as-of ""` projected as of now and wrote a GAF: the value given is read or refused.
    _refused([*PROJECT, "--as-of", "", "--at", "2026-07-15"], rent["store"])
    written = runner.invoke(app, [*PROJECT, "--as-of", "2026-07-15", "--at", "2026-07-15", "--store", rent["store"], "--json"])
    assert written.exit_code == 0 and json.loads(written.stdout)["as_of"].startswith("2026-07-15T00:00:00"), written.output


def test_an_unknown_grant_is_refused_with_the_forms_an_id_takes(rent):
    args = ["act", rent["verdict"], "--kind", "request-allocation", "--subject", RENT_JULY, "--by", "letting-agent",
            "--grant", "grant:x", "--policy", "rent-actions", "--key", "edge"]  # fmt: skip
    line = _refused(args, rent["store"])
    assert "'grant:x'" in line and "64 hex digits" in line and "at least 4" in line, line


def test_a_refused_value_is_a_json_error_with_json(rent):
    result = runner.invoke(app, [*PROJECT, "--auto-accept-at", "nan", "--json", "--store", rent["store"]])
    error = json.loads(result.stdout)
    assert result.exit_code == ExitCode.BAD_INPUT and error["error"] == "InvalidValue" and error["where"] == "--auto-accept-at"
    assert error["what"] == "must be a number from 0 to 1, not 'nan'"


@pytest.mark.parametrize("variable", sorted(SPANS))
@pytest.mark.parametrize("value", ["abc", "nan", "inf", "-1", "1e400", "9" * 5000])
def test_every_number_setting_is_read_as_options_are_naming_the_variable_and_its_form(rent, variable, value):
    line = _refused(["stats"], rent["store"], env={variable: value})
    assert line.startswith(f"error: {variable}: must be a ") and f"(for example {variable}=" in line, line
    assert len(line) < 300, "a long value is cut, not echoed whole"


def test_a_number_setting_in_its_range_is_taken(rent):
    for variable, value in (("GAF_LOCK_WAIT", "2.5"), ("GAF_CACHE_MB", "64"), ("GAF_API_ROWS", "5"), ("GAF_SERVE_PORT", "65535")):
        assert runner.invoke(app, ["stats", "--store", rent["store"]], env={variable: value}).exit_code == 0, variable
