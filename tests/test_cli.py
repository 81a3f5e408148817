"""The command line is a thin layer: same behaviour, tables or JSON, typed exit codes."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from gaf.cli import app
from tests.conftest import NOW, RENT
from tests.rentcase import closed_store

runner = CliRunner()


@pytest.fixture(params=["ladybug", "neo4j"])
def target(request, tmp_path, monkeypatch) -> str:
    """A --store value on each store (the Neo4j one wiped and initialised)."""
    if request.param == "ladybug":
        return str(tmp_path / "cli.lbug")
    store = request.getfixturevalue("neo4j_store")
    return store.location


def _json(result) -> dict:
    assert result.stdout, result.output
    return json.loads(result.stdout)


def test_ingest_prints_what_was_stored_and_is_idempotent(target):
    first = runner.invoke(app, ["ingest", str(RENT / "claims.yaml"), "--store", target])
    assert first.exit_code == 0, first.output
    assert "13 written" in first.stdout and "bank-ledger" in first.stdout
    again = runner.invoke(app, ["ingest", str(RENT / "claims.yaml"), "--store", target, "--json"])
    assert (_json(again)["written"], _json(again)["existing"]) == (0, 13)
    stats = _json(runner.invoke(app, ["stats", "--store", target, "--json"]))
    assert stats["counts"] == {"agent": 4, "claim": 4, "proposition": 22, "source": 5}


def test_a_bad_file_exits_2_and_lists_each_bad_line(target, tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"kind": "claim"}\n\n{"kind": "nonsense"}\n', encoding="utf-8")
    result = runner.invoke(app, ["ingest", str(path), "--store", target, "--json"])
    assert result.exit_code == 2
    errors = _json(result)["errors"]
    assert [e["where"] for e in errors] == [f"{path}:1", f"{path}:3"]
    assert errors[1]["error"] == "UnknownKind"


def test_show_and_list_read_back_records(target):
    runner.invoke(app, ["ingest", str(RENT / "claims.yaml"), "--store", target])
    claims = _json(runner.invoke(app, ["list", "claim", "--store", target, "--json"]))
    assert len(claims) == 4 and all(c["kind"] == "claim" for c in claims)
    shown = _json(runner.invoke(app, ["show", claims[0]["id"], "--store", target, "--json"]))
    assert shown["id"] == claims[0]["id"] and {e["rel"] for e in shown["edges"]} >= {"FROM_SOURCE", "OBSERVED_BY"}


def test_schema_prints_json_schema_of_the_records():
    result = runner.invoke(app, ["schema", "claim"])
    schema = json.loads(result.stdout)
    assert schema["title"] == "Claim" and "statements" in schema["properties"]


def test_an_unreachable_neo4j_is_named_with_what_to_do():
    result = runner.invoke(app, ["stats", "--store", "bolt://127.0.0.1:1"])
    assert result.exit_code == 3
    assert "cannot reach Neo4j at bolt://127.0.0.1:1" in result.stderr
    assert "neo4j_local.py start" in result.stderr


def test_wrong_neo4j_credentials_are_named(neo4j_store, monkeypatch):
    monkeypatch.setenv("NEO4J_PASSWORD", "not-the-password")
    result = runner.invoke(app, ["stats", "--store", neo4j_store.location])
    assert result.exit_code == 3 and "refused the credentials" in result.stderr


def test_every_command_has_help_with_examples():
    for command in ("init", "schema", "ingest", "show", "list", "stats", "project", "close", "verdict", "replay", "impact source",
                    "act", "compensate", "history", "reopen new-claim", "policy sway", "policy decide", "rules revise", "export prov",
                    "query"):  # fmt: skip
        result = runner.invoke(app, [*command.split(), "--help"])
        assert result.exit_code == 0 and "Examples" in result.stdout, command


def test_a_store_uri_of_another_scheme_is_refused():
    result = runner.invoke(app, ["stats", "--store", "http://localhost:7474"])
    assert result.exit_code == 3 and "unsupported store URI" in result.stderr


def test_policy_and_project_commands_tell_the_rent_story(target):
    runner.invoke(app, ["ingest", str(RENT / "claims.yaml"), "--store", target])
    added = _json(runner.invoke(app, ["policy", "add", str(RENT / "policy.yaml"), "--store", target, "--json"]))
    assert (added["name"], added["version"]) == ("rent-delinquency", 1)
    dry = _json(runner.invoke(app, ["project", "rent-delinquency", "--reviewer", "registry-clerk", "--as-of", "2026-07-15",
                                    "--dry-run", "--store", target, "--json"]))  # fmt: skip
    assert dry["written"] is False
    first = _json(runner.invoke(app, ["project", "rent-delinquency", "--reviewer", "registry-clerk", "--as-of", "2026-07-15",
                                      "--store", target, "--json"]))  # fmt: skip
    assert first["gaf"] == dry["gaf"]
    assert "allocated_to(payment:tx-4471, rent:lease-17/2026-07)" in first["unresolved"]
    runner.invoke(app, ["ingest", str(RENT / "claim-e.yaml"), "--store", target])
    second = _json(runner.invoke(app, ["project", "rent-delinquency", "--reviewer", "registry-clerk", "--as-of", "2026-07-21",
                                       "--store", target, "--json"]))  # fmt: skip
    assert "paid(rent:lease-17/2026-07)" in [a["proposition"] for a in second["accepted"]]
    listed = _json(runner.invoke(app, ["policy", "list", "--store", target, "--json"]))
    assert [(p["name"], p["version"]) for p in listed] == [("rent-delinquency", 1)]


def test_an_unknown_policy_exits_2_with_what_to_do(tmp_path):
    result = runner.invoke(app, ["project", "nope", "--reviewer", "x", "--store", str(tmp_path / "s.lbug")])
    assert result.exit_code == 2 and "no published policy nope" in result.stderr


def test_close_verdict_and_replay_commands(target):
    runner.invoke(app, ["ingest", str(RENT / "claims.yaml"), "--store", target])
    runner.invoke(app, ["policy", "add", str(RENT / "policy.yaml"), "--store", target])
    assert runner.invoke(app, ["rules", "add", str(RENT / "verdict-rules.yaml"), "--store", target]).exit_code == 0
    gaf = _json(runner.invoke(app, ["project", "rent-delinquency", "--reviewer", "registry-clerk", "--as-of", "2026-07-15",
                                    "--store", target, "--json"]))["gaf"]  # fmt: skip
    closed = _json(runner.invoke(app, ["close", gaf, "--rules", "rent-paid@1", "--subject", "rent:lease-17/2026-07",
                                       "--as-of", "2026-07-15", "--store", target, "--json"]))  # fmt: skip
    assert closed["verdict"]["label"] == "undetermined"
    shown = runner.invoke(app, ["verdict", closed["closure"], "--store", target])
    assert "would settle it" in shown.stdout and "allocated_to(payment:tx-4471" in shown.stdout
    replayed = runner.invoke(app, ["replay", closed["closure"], "--store", target, "--json"])
    assert replayed.exit_code == 0 and _json(replayed)["identical"] is True


def test_impact_commands_write_json_html_and_markdown(target, tmp_path):
    runner.invoke(app, ["ingest", str(RENT / "claims.yaml"), "--store", target])
    runner.invoke(app, ["policy", "add", str(RENT / "policy.yaml"), "--store", target])
    runner.invoke(app, ["project", "rent-delinquency", "--reviewer", "registry-clerk", "--as-of", "2026-07-15", "--store", target])
    page, notes = tmp_path / "impact.html", tmp_path / "impact.md"
    result = runner.invoke(app, ["impact", "source", "bank-ledger", "--store", target, "--json", "--html", str(page), "--markdown", str(notes)])
    data = _json(result)
    assert data["complete"] is True and data["totals"]["fact"]["invalidated"] == 4
    assert page.read_text().count("<svg") == 1 and notes.read_text().startswith("# Impact of source_invalidated")
    cut = _json(runner.invoke(app, ["impact", "source", "bank-ledger", "--max-depth", "1", "--store", target, "--json"]))
    assert cut["complete"] is False and "depth limit 1" in cut["cut"][0]


def test_the_cli_and_query_references_in_docs_are_current():
    """Regenerate with: gaf reference --out docs/cli-reference.md; gaf query --list --reference docs/queries.md"""
    import queries
    from gaf.cli import cli_reference
    from tests.conftest import ROOT

    assert (ROOT / "docs" / "cli-reference.md").read_text(encoding="utf-8") == cli_reference()
    assert (ROOT / "docs" / "queries.md").read_text(encoding="utf-8") == queries.reference(queries.load())


def test_a_time_or_version_that_does_not_parse_is_one_line_and_exit_2(tmp_path):
    store = str(tmp_path / "s.lbug")
    runner.invoke(app, ["ingest", str(RENT / "claims.yaml"), "--store", store])
    runner.invoke(app, ["policy", "add", str(RENT / "policy.yaml"), "--store", store])
    bad_time = runner.invoke(app, ["project", "rent-delinquency", "--reviewer", "registry-clerk", "--as-of", "15-07-2026", "--store", store])
    assert bad_time.exit_code == 2 and "not an ISO 8601 time" in bad_time.stderr and "Traceback" not in bad_time.output
    bad_version = runner.invoke(app, ["policy", "show", "rent-delinquency@latest", "--store", store])
    assert bad_version.exit_code == 2 and "a version is a whole number from 1, not 'latest'" in bad_version.stderr


def test_every_subcommand_a_group_help_names_exists():
    import typer

    root = typer.main.get_command(app)
    ctx = root.context_class(root)
    for name in ("policy", "rules"):
        group = root.get_command(ctx, name)
        named = group.help.split(":", 1)[1].rstrip(".").replace(",", " ").split()
        assert sorted(named) == sorted(group.list_commands(ctx)), name


def test_rules_revise_publishes_the_next_version_and_keeps_the_old(tmp_path):
    import yaml

    store = str(tmp_path / "s.lbug")
    runner.invoke(app, ["rules", "add", str(RENT / "verdict-rules.yaml"), "--store", store])
    data = yaml.safe_load((RENT / "verdict-rules.yaml").read_text(encoding="utf-8"))
    changed = tmp_path / "rules-v2.yaml"
    changed.write_text(yaml.safe_dump({**data, "conclusion": "The instalment has been paid in full."}), encoding="utf-8")
    revised = runner.invoke(app, ["rules", "revise", str(changed), "--store", store, "--json"])
    assert revised.exit_code == 0, revised.output
    assert (_json(revised)["name"], _json(revised)["version"]) == ("rent-paid", 2)
    again = _json(runner.invoke(app, ["rules", "revise", str(changed), "--store", store, "--json"]))
    assert again["id"] == _json(revised)["id"]
    listed = _json(runner.invoke(app, ["rules", "list", "--store", store, "--json"]))
    assert [(r["name"], r["version"]) for r in listed] == [("rent-paid", 1), ("rent-paid", 2)]


def test_policy_decide_settles_an_exception_only_for_its_own_closure(tmp_path):
    from datetime import datetime, timezone

    from gaf.records import PolicyException
    from gaf.store import GafStore
    from tests.rentcase import RENT_JULY, ratified_allocation

    store = tmp_path / "s.lbug"
    first, second = closed_store(store)
    with GafStore.open(str(store)) as s:
        ratified = ratified_allocation(s, effective=datetime(2026, 8, 1, tzinfo=timezone.utc))
        exception = PolicyException(policy=ratified.id, subject=RENT_JULY, closure=second, reason="outside rent-allocation@1",
                                    raised_at=datetime(2026, 7, 26, tzinfo=timezone.utc))  # fmt: skip
        s.put([exception], at=NOW)
    decide = ["policy", "decide", "--by", "letting-agent", "--decision", "partial payment", "--reason", "900 of 1000 received",
              "--settles", exception.id, "--store", str(store), "--json"]  # fmt: skip
    wrong = runner.invoke(app, [*decide[:2], first, *decide[2:]])
    assert wrong.exit_code == 2 and f"raised for {second}" in _json(wrong)["what"]
    assert [e["id"] for e in _json(runner.invoke(app, ["policy", "queue", "--store", str(store), "--json"]))] == [exception.id]
    settled = runner.invoke(app, [*decide[:2], second, *decide[2:]])
    assert settled.exit_code == 0, settled.output
    assert (_json(settled)["closure"], _json(settled)["settles"]) == (second, exception.id)
    assert _json(runner.invoke(app, ["policy", "queue", "--store", str(store), "--json"])) == []


def test_compensate_undoes_an_executed_action_with_a_new_one_that_keeps_the_reason(tmp_path):
    from gaf.actions import latest_status, statuses
    from gaf.store import GafStore

    store = str(tmp_path / "s.lbug")
    _, second = closed_store(store)
    with GafStore.open(store, read_only=True) as s:
        verdict = s.find("verdict", closure=second)[0].id
        grant = next(g.id for g in s.find("grant") if g.action_kind == "receipt")
    common = ["--by", "letting-agent", "--grant", grant, "--policy", "rent-actions", "--store", store, "--json"]
    sent = _json(runner.invoke(app, ["act", verdict, "--kind", "receipt", "--subject", "rent:lease-17/2026-07", "--key", "r", *common]))
    original = sent["action"]["id"]
    blank = runner.invoke(app, ["compensate", original, "--key", "undo", "--reason", " ", *common])
    assert blank.exit_code == 2 and "needs a reason" in _json(blank)["what"]
    undo = runner.invoke(app, ["compensate", original, "--key", "undo", "--reason", "sent to the wrong address", *common])
    assert undo.exit_code == 0, undo.output
    assert (_json(undo)["action"]["compensates"], _json(undo)["effect"]) == (original, True)
    with GafStore.open(store, read_only=True) as s:
        assert latest_status(s, original).status == "compensated"
        assert statuses(s, _json(undo)["action"]["id"])[0].reason == "sent to the wrong address"
    again = runner.invoke(app, ["compensate", original, "--key", "undo-again", "--reason", "twice", *common])
    assert again.exit_code == 5 and "is compensated, not executed" in _json(again)["what"]


def test_export_prov_summary_is_one_json_line_on_a_narrow_terminal(tmp_path):
    import os
    import subprocess
    import sys

    store = str(tmp_path / "s.lbug")
    first, _ = closed_store(store)
    result = subprocess.run([sys.executable, "-m", "gaf", "export", "prov", "--closure", first, "--format", "nt",
                             "--out", str(tmp_path / "july.nt"), "--store", store],
                            capture_output=True, text=True, env={**os.environ, "COLUMNS": "40"}, check=True)  # fmt: skip
    summary = json.loads(result.stderr)
    assert summary["triples"] > 0 and len(summary["canonical_hash"]) == 64


def test_a_dry_run_opens_the_embedded_store_read_only_and_writes_nothing(tmp_path):
    import subprocess
    import sys

    store = str(tmp_path / "s.lbug")
    runner.invoke(app, ["ingest", str(RENT / "claims.yaml"), "--store", store])
    runner.invoke(app, ["policy", "add", str(RENT / "policy.yaml"), "--store", store])
    before = _json(runner.invoke(app, ["stats", "--store", store, "--json"]))["counts"]
    writer = subprocess.Popen([sys.executable, "-c", "import sys, time\nfrom gaf.store import GafStore\n"
                               f"s = GafStore.open({store!r})\nprint('open', flush=True)\ntime.sleep(60)"],
                              stdout=subprocess.PIPE, text=True)  # fmt: skip
    try:
        assert writer.stdout.readline().strip() == "open"
        dry = runner.invoke(app, ["project", "rent-delinquency", "--reviewer", "registry-clerk", "--as-of", "2026-07-15",
                                  "--dry-run", "--store", store, "--json"])  # fmt: skip
    finally:
        writer.kill()
        writer.wait()
    assert dry.exit_code == 0, dry.output
    assert _json(dry)["written"] is False and _json(dry)["accepted"]
    assert _json(runner.invoke(app, ["stats", "--store", store, "--json"]))["counts"] == before


def test_neo4j_uri_alone_keeps_the_embedded_default_and_help_says_how_to_select_it(monkeypatch):
    from gaf.store import store_target

    monkeypatch.delenv("GAF_STORE", raising=False)
    monkeypatch.setenv("NEO4J_URI", "bolt://127.0.0.1:1")
    assert store_target() == ".gaf/store.lbug"
    top = runner.invoke(app, ["--help"], env={"COLUMNS": "200"})
    assert "GAF_STORE=$NEO4J_URI" in top.stdout
    assert "never $NEO4J_URI" in runner.invoke(app, ["stats", "--help"], env={"COLUMNS": "200"}).stdout
