"""One output contract for every command: help that fits 80 columns, one exit-code table,
output that is not wrapped when piped, listings in table, JSON, NDJSON and CSV that carry
the same rows, and no traceback whatever value an option is given.

The oracles are outside the code under test: the commands are enumerated from typer's own
command tree (a new command is checked without touching this file), the examples from
each command's docstring, the rows of NDJSON and CSV from Python's json and csv readers
compared with the JSON array, and the error classes from Python's subclass tree.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import os
import re
import subprocess
import sys

import pytest
import typer.main
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

import gaf.errors
from gaf.cli import app
from gaf.errors import EXIT_CODES, ExitCode, GafError
from tests.conftest import ROOT
from tests.rentcase import closed_store

runner = CliRunner()
WIDTH = 80


def _commands() -> list[tuple[list[str], object]]:
    """Every command and group of the CLI, as (path, click command), the root first."""
    found: list[tuple[list[str], object]] = []

    def walk(command, path):
        found.append((path, command))
        if hasattr(command, "list_commands"):
            ctx = command.context_class(command)
            for name in command.list_commands(ctx):
                walk(command.get_command(ctx, name), [*path, name])

    walk(typer.main.get_command(app), [])
    return found


COMMANDS = _commands()
LEAVES = [(path, c) for path, c in COMMANDS if not hasattr(c, "list_commands")]


def _examples(help_text: str) -> list[str]:
    """The lines of a help text's Examples paragraphs, as the docstring writes them."""
    paragraphs = help_text.split("\n\n")
    lines = []
    for n, paragraph in enumerate(paragraphs):
        if "Examples" in paragraph and n + 1 < len(paragraphs):
            lines += [line.strip() for p in paragraphs[n + 1:] for line in p.splitlines() if line.startswith(" ")]
    return lines


@pytest.mark.parametrize("path", [p for p, _ in COMMANDS], ids=lambda p: " ".join(p) or "gaf")
def test_help_fits_80_columns_with_every_example_line_whole(path):
    result = runner.invoke(app, [*path, "--help"], env={"COLUMNS": str(WIDTH)}, terminal_width=WIDTH)
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    too_wide = [line for line in lines if len(line) > WIDTH]
    assert not too_wide, f"gaf {' '.join(path)} --help is wider than {WIDTH}: {too_wide[:3]}"
    assert "<bool>" not in result.output, "a flag takes no value; its help shows none"
    command = dict((tuple(p), c) for p, c in COMMANDS)[tuple(path)]
    shown = {line.strip() for line in lines}
    cut = [example for example in _examples(command.help or "") if example not in shown]
    assert not cut, f"gaf {' '.join(path)} --help wraps its example lines at {WIDTH} columns: {cut}"


def test_every_error_family_exits_with_a_code_of_the_one_table():
    def subclasses(cls):
        for sub in cls.__subclasses__():
            yield sub
            yield from subclasses(sub)

    families = {cls.__name__: cls.exit_code for cls in [GafError, *subclasses(GafError)]}
    assert families and all(isinstance(code, ExitCode) for code in families.values()), families
    assert set(ExitCode) == set(EXIT_CODES), "every exit code says what it means"
    # No command exits with a number of its own: every typer.Exit names a code of the table.
    literal = re.compile(r"typer\.Exit\(\s*\d")
    offenders = [str(p.relative_to(ROOT)) for p in (ROOT / "gaf" / "cli").glob("*.py") if literal.search(p.read_text())]
    assert not offenders, f"exit with ExitCode.…, not a number: {offenders}"
    assert gaf.errors.InvalidQuery.exit_code is ExitCode.BAD_INPUT


def test_the_root_help_and_the_reference_print_the_exit_code_table():
    result = runner.invoke(app, ["--help"], env={"COLUMNS": "100"}, terminal_width=100)
    reference = (ROOT / "docs" / "cli-reference.md").read_text(encoding="utf-8")
    for code, meaning in EXIT_CODES.items():
        assert f"{int(code)}  {meaning}" in result.output
        assert f"| {int(code)} | {meaning} |" in reference
    as_json = json.loads(runner.invoke(app, ["reference", "--json"]).stdout)
    assert as_json["exit_codes"] == {str(int(c)): m for c, m in EXIT_CODES.items()}
    assert sorted(c["command"] for c in as_json["commands"]) == sorted("gaf " + " ".join(p) for p, _ in LEAVES)


def test_every_command_takes_json():
    lacking = [" ".join(path) for path, command in LEAVES if "--json" not in {o for p in command.params for o in p.opts}]
    assert not lacking, f"these commands have no --json: {lacking}"


@pytest.fixture(scope="module")
def rent(tmp_path_factory) -> dict[str, str]:
    """An embedded store with the rent case's two closures; its path and ids."""
    path = tmp_path_factory.mktemp("contract") / "rent.lbug"
    first, second = closed_store(path)
    return {"store": str(path), "first": first, "second": second}


def _gaf(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """gaf in a process of its own, its output piped (not a terminal) and COLUMNS unset."""
    environment = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "GAF_STORE")} | (env or {})
    return subprocess.run([sys.executable, "-m", "gaf", *args], capture_output=True, text=True, env=environment)


def test_piped_output_is_not_wrapped_so_grep_sees_whole_lines(rent):
    listed = _gaf("list", "source", "--store", rent["store"])
    row = next(line for line in listed.stdout.splitlines() if "transfer-receipts" in line)
    assert "Original transfer receipts, as issued by the bank to the payer" in row and len(row) > WIDTH
    refused = _gaf("show", "closure:0000", "--store", rent["store"] + "/" + "x" * 100)
    assert refused.returncode == ExitCode.STORE and len(refused.stderr.splitlines()) == 1 and len(refused.stderr) > WIDTH
    narrow = _gaf("list", "source", "--store", rent["store"], env={"COLUMNS": "60"})
    assert max(len(line) for line in narrow.stdout.splitlines()) <= 60, "COLUMNS, when set, is still the width"


def test_ids_keep_their_width_and_a_table_too_wide_for_the_terminal_is_shown_row_by_row(rent):
    result = runner.invoke(app, ["history", "rent:lease-17/2026-07", "--store", rent["store"]], env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    for closure_id in (rent["first"], rent["second"]):
        assert f"closure        {closure_id[:len('closure:') + 12]}…" in result.stdout
    assert max(len(line) for line in result.stdout.splitlines()) <= WIDTH and "…─" not in result.stdout
    wide = runner.invoke(app, ["history", "rent:lease-17/2026-07", "--store", rent["store"]], env={"COLUMNS": "200"})
    assert "┃ closed at" in wide.stdout, "a table that fits is a table"


LISTINGS = [
    ["list", "claim"],
    ["list", "proposition"],
    ["history", "rent:lease-17/2026-07"],
    ["policy", "list"],
    ["rules", "list"],
    ["policy", "queue"],
    ["query", "--list"],
]


def _csv_rows(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def _as_csv_cell(value) -> str:
    """What a JSON value is in a CSV cell, by the contract: text as itself, a nested value as its JSON."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, bool | int | float):
        return str(value)
    return json.dumps(value, ensure_ascii=False)


@pytest.mark.parametrize("args", LISTINGS, ids=" ".join)
def test_a_listing_gives_the_same_rows_as_json_ndjson_and_csv(rent, args):
    store = ["--store", rent["store"]]
    as_json = runner.invoke(app, [*args, *store, "--json"])
    assert as_json.exit_code == 0, as_json.output
    rows = json.loads(as_json.stdout)
    same = runner.invoke(app, [*args, *store, "--format", "json"])
    assert json.loads(same.stdout) == rows
    ndjson = runner.invoke(app, [*args, *store, "--format", "ndjson"])
    assert [json.loads(line) for line in ndjson.stdout.splitlines()] == rows
    as_csv = runner.invoke(app, [*args, *store, "--format", "csv"])
    header = next(csv.reader(io.StringIO(as_csv.stdout)), [])
    assert all(set(row) <= set(header) for row in rows), "CSV drops no key any row has"
    assert _csv_rows(as_csv.stdout) == [{k: _as_csv_cell(row.get(k)) for k in header} for row in rows]
    table = runner.invoke(app, [*args, *store], env={"COLUMNS": "100"})
    assert table.exit_code == 0 and (not rows or table.stdout.strip())


def test_json_and_another_format_at_once_is_refused_as_bad_input(rent):
    result = runner.invoke(app, ["policy", "list", "--store", rent["store"], "--json", "--format", "csv"])
    assert result.exit_code == ExitCode.BAD_INPUT and json.loads(result.stdout)["where"] == "--format"


def test_ndjson_of_a_whole_kind_streams_one_record_a_line(rent):
    from gaf.store import GafStore

    with GafStore.open(rent["store"], read_only=True) as s:
        expected = [r.to_json() for r in s.find("proposition")]
    result = _gaf("list", "proposition", "--format", "ndjson", "--store", rent["store"])
    assert [json.loads(line) for line in result.stdout.splitlines()] == expected and len(expected) > 20


def test_a_query_the_store_cannot_parse_is_bad_input(rent):
    result = runner.invoke(app, ["query", "--cypher", "MATC (n) RETURN n", "--store", rent["store"], "--json"])
    assert result.exit_code == ExitCode.BAD_INPUT and json.loads(result.stdout)["error"] == "InvalidQuery"


# ---------------------------------------------------------------- no traceback, whatever the values

#: Values a person might mistype, for an option of any type: each must be refused in one line
#: (or accepted), never crash.
ODD_VALUES = [
    "", " ", "-1", "0", "1e309", "nan", "yesterday", "2026-13-45", "closure:zz", "closure:0000", "0000",
    "nope@x", "nope@0", "a@1@2", "neo4j//localhost:7687", "/nonexistent/file.yaml", "../", "x" * 300,
    "rent:lease-17/2026-07", "name=value", "=", "[b]markup[/b]", "\u00e9\u00e8", "claim:" + "0" * 64,
]


def _parameters(command) -> list[tuple[str, object]]:
    """A command's parameters that take a value: (how to pass it, the parameter)."""
    out = []
    for p in command.params:
        if getattr(p, "is_flag", False) or p.name in ("store", "help"):
            continue
        out.append((p.opts[0] if p.param_type_name == "option" else "", p))
    return out


def _invocation(path, command, chosen: dict[str, str], store: str) -> list[str]:
    """A command line: the required parameters filled with plausible values, the chosen ones odd."""
    args = list(path)
    for flag, param in _parameters(command):
        value = chosen.get(param.name)
        if value is None and not param.required:
            continue
        if value is None:
            value = "x"
        if flag:
            args += [flag, value]
        else:
            args += ["--", value] if value.startswith("-") else [value]
    # an argument after "--" ends the options: put --store first
    return [*args[:len(path)], "--store", store, *args[len(path):]]


@pytest.fixture(scope="module")
def scratch(tmp_path_factory) -> dict[str, str]:
    """A rent store of its own for odd values to be tried on (one may be accepted and write)."""
    path = tmp_path_factory.mktemp("scratch") / "rent.lbug"
    first, second = closed_store(path)
    return {"store": str(path), "first": first, "second": second, "cwd": str(tmp_path_factory.mktemp("cwd"))}


#: Commands that run until interrupted: a value they accept would start a server the test never stops.
#: `gaf serve`'s refusals are tested in tests/test_web_api.py.
RUNS_UNTIL_STOPPED = {("serve",)}


@pytest.mark.parametrize("path", [p for p, _ in LEAVES if tuple(p) not in RUNS_UNTIL_STOPPED], ids=" ".join)
@settings(max_examples=8)
@given(data=st.data())
def test_no_value_of_any_option_makes_a_traceback(path, data, scratch):
    command = dict((tuple(p), c) for p, c in LEAVES)[tuple(path)]
    params = _parameters(command)
    if not params:
        return
    names = [p.name for _, p in params]
    odd = data.draw(st.lists(st.sampled_from(names), min_size=1, max_size=len(names), unique=True), label="odd")
    chosen = {name: data.draw(st.sampled_from(ODD_VALUES) | st.text(max_size=12), label=name) for name in odd}
    args = _invocation(path, command, chosen, scratch["store"])
    with contextlib.chdir(scratch["cwd"]):  # a relative --out is written there, never in the checkout
        result = runner.invoke(app, args, env={"COLUMNS": "100"})
    assert result.exception is None or isinstance(result.exception, SystemExit), (args, repr(result.exception))
    assert result.exit_code in set(ExitCode), (args, result.exit_code, result.output)
    assert "Traceback" not in result.output, (args, result.output)
    raw = [w for w in ("validation error for", "errors.pydantic.dev", "invalid literal", "int_max_str_digits") if w in result.output]
    assert not raw, (args, raw, result.output)  # a refusal in gaf's words, never Python's or pydantic's
    if result.exit_code:
        said = "".join(line for line in (result.stderr or result.stdout).splitlines(True) if not line.startswith("store: "))
        assert said.startswith(("error:", "{", "Usage:")) or "Error" in said, (args, said)


@pytest.mark.parametrize("where", ["", ".", "missing/reference.md"], ids=["empty", "a directory", "in no directory"])
@pytest.mark.parametrize("args", [["query", "--reference"], ["query", "--favorites"], ["reference", "--out"]], ids=" ".join)
def test_a_file_to_write_that_cannot_be_written_is_refused_naming_it(args, where, scratch):
    """Found by the random profile: ``gaf query --reference ''`` (the working directory) ended in
    IsADirectoryError's traceback. Every file a command writes on request is written one way
    (``gaf.cli.common.write_file``): a path that is no writable file is a typed error naming it."""
    with contextlib.chdir(scratch["cwd"]):
        result = runner.invoke(app, [*args, where, *(["--store", scratch["store"]] if args[0] == "query" else [])])
    assert result.exit_code == ExitCode.BAD_INPUT and isinstance(result.exception, SystemExit), repr(result.exception)
    assert result.stderr.startswith(f"error: {where or '.'}: cannot write the file: "), result.output  # '' is typer's Path('.')


# ---------------------------------------------------------------- --at: a scripted history, the same records


def _story(store: str) -> None:
    """The rent case through every kind of write the CLI has, each given --at."""

    def gaf(*args: str) -> dict:
        result = runner.invoke(app, [*args, "--store", store, "--json"])
        assert result.exit_code == 0, (args, result.output)
        return json.loads(result.stdout) if result.stdout.strip() else {}

    rent = ROOT / "examples" / "rent"
    july, at = "rent:lease-17/2026-07", "2026-07-15T10:00:00Z"
    gaf("ingest", str(rent / "claims.yaml"), "--at", at)
    gaf("ingest", str(rent / "authority.yaml"), "--at", at)
    gaf("policy", "add", str(rent / "policy.yaml"), "--at", at)
    gaf("rules", "add", str(rent / "verdict-rules.yaml"), "--at", at)
    projected = gaf("project", "rent-delinquency@1", "--reviewer", "registry-clerk", "--as-of", "2026-07-15", "--at", at)
    closed = gaf("close", projected["gaf"], "--rules", "rent-paid", "--subject", july, "--as-of", "2026-07-15", "--at", at)
    verdict = gaf("verdict", closed["closure"])["id"]
    grant = next(g["id"] for g in gaf("list", "grant") if g["action_kind"] == "request-allocation")
    gaf("act", verdict, "--kind", "request-allocation", "--subject", july, "--by", "letting-agent", "--grant", grant,
        "--policy", "rent-actions", "--key", "july-request", "--at", "2026-07-16")
    gaf("policy", "decide", closed["closure"], "--by", "letting-agent", "--decision", "wait", "--reason", "ask the bank",
        "--at", "2026-07-16")
    gaf("reopen", "new-claim", str(rent / "claim-e.yaml"), "--reviewer", "registry-clerk", "--as-of", "2026-07-21",
        "--at", "2026-07-21")
    candidate = gaf("policy", "propose", str(rent / "allocation-rule.yaml"), "--name", "rent-allocation",
                    "--by", "letting-agent", "--text", "allocated when it matches", "--at", "2026-07-22")["id"]
    gaf("policy", "ratify", candidate, "--by", "letting-agent", "--version", "1", "--effective", "2026-08-01",
        "--at", "2026-07-23")
    gaf("policy", "revise", str(rent / "policy-v2.yaml"), "--at", "2026-07-24")
    gaf("reopen", "policy", "rent-delinquency@1", "--reviewer", "registry-clerk", "--as-of", "2026-07-25",
        "--at", "2026-07-25")
    gaf("reopen", "source", "bank-ledger", "--by", "registry-clerk", "--reason", "export corrupted",
        "--invalid-from", "2026-07-01", "--reviewer", "registry-clerk", "--as-of", "2026-07-26", "--at", "2026-07-26")


def _every_id(store: str) -> dict[str, list[str]]:
    from gaf.store import GafStore

    with GafStore.open(store, read_only=True) as s:
        return {kind: sorted(s.ids(kind)) for kind in s.counts()}


def test_a_scripted_history_with_at_is_the_same_records_on_every_run(tmp_path):
    # The oracle is a second run, seconds later: any time read from the clock gives other ids.
    _story(str(tmp_path / "first.lbug"))
    _story(str(tmp_path / "second.lbug"))
    first, second = _every_id(str(tmp_path / "first.lbug")), _every_id(str(tmp_path / "second.lbug"))
    assert first == second
    assert {"action", "case_decision", "policy_candidate", "policy", "reopen", "invalidation"} <= set(first)


#: Writers that record no time, so nothing for --at to set.
UNTIMED = {"init": "declares the store's schema, constraints and indexes", "compact": "rewrites the file, not a record: nothing it writes carries a time"}


def test_every_command_that_opens_the_store_for_writing_takes_at():
    # The writers, read from the source: a command whose body opens the store without read_only.
    import ast

    lacking = []
    for path in (ROOT / "gaf" / "cli").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.FunctionDef) or not any("command" in ast.unparse(d) for d in node.decorator_list):
                continue
            opens = [c for c in ast.walk(node) if isinstance(c, ast.Call) and ast.unparse(c.func) == "open_store"]
            writes = any(not any(k.arg == "read_only" for k in c.keywords) for c in opens)
            if writes and node.name not in UNTIMED and "at" not in {a.arg for a in node.args.args + node.args.kwonlyargs}:
                lacking.append(f"{path.name}:{node.name}")
    assert not lacking, f"these commands write without --at: {lacking}"
