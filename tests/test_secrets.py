"""Secrets are never told (issue 24, item 6): a password written into a store URI — well-formed,
mistyped, or in GAF_STORE — the NEO4J_PASSWORD of the environment, and an API token's secret
appear in no message, no --json output and no log line, whatever the command and however it fails.

The oracle is the secret's own text: it is searched for in everything a command printed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gaf.cli import app

ROOT = Path(__file__).resolve().parent.parent
SECRET = "Zq8-secret-pw-41"

#: Store names carrying the secret: well-formed URIs to a port nothing listens on, and mistyped
#: ones that the store-name check refuses (each names the value it refuses).
NAMES = [
    f"bolt://ada:{SECRET}@127.0.0.1:9",
    f"neo4j://ada:{SECRET}@127.0.0.1:9/",
    f"neoj4://ada:{SECRET}@db.example.org:7687",
    f"http://ada:{SECRET}@localhost:7474",
    f"neo4j:/ada:{SECRET}@localhost:7687",
    f"mongodb://ada:{SECRET}@localhost",
]

#: Commands that open the store, read-only and writing, each as people and as machines run them.
COMMANDS = [["stats"], ["stats", "--json"], ["verify", "--json"], ["list", "claim"], ["history", "rent:x", "--json"],
            ["ingest", "examples/rent/claims.yaml", "--json"]]  # fmt: skip


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("GAF_STORE", "NEO4J_PASSWORD", "NEO4J_URI")}
    return {**env, "GAF_NEO4J_RETRY_SECONDS": "0", **extra}


@pytest.mark.parametrize("name", NAMES)
def test_a_password_in_a_store_name_is_never_told_by_any_command(name: str) -> None:
    told = 0
    for command in COMMANDS:
        for how in (["--store", name], []):
            env = _env(GAF_STORE=name) if not how else _env()
            result = CliRunner().invoke(app, [*command, *how], env=env)
            said = result.output + (result.stderr if result.stderr_bytes is not None else "")
            assert result.exit_code in (2, 3), (command, how, said)
            assert SECRET not in said, (command, how, said)
            assert "***" in said or "ada" not in said, (command, how, said)  # the URI is still named, masked
            told += 1
    assert told == 2 * len(COMMANDS)


def test_the_environments_neo4j_password_is_never_told_even_when_the_server_refuses_it() -> None:
    """Through a real process: nothing listens on port 9, so every command fails to connect."""
    for command in COMMANDS:
        result = subprocess.run([sys.executable, "-m", "gaf", *command, "--store", "bolt://127.0.0.1:9"], cwd=ROOT,
                                env=_env(NEO4J_PASSWORD=SECRET, NEO4J_USER="ada"), capture_output=True, text=True)  # fmt: skip
        assert result.returncode == 3, result.stderr
        assert SECRET not in result.stdout + result.stderr


def test_an_api_tokens_secret_is_shown_once_at_creation_and_never_again(tmp_path: Path) -> None:
    store = str(tmp_path / "s" / "store.lbug")
    runner = CliRunner()
    assert runner.invoke(app, ["init", "--store", store]).exit_code == 0
    assert runner.invoke(app, ["ingest", "examples/rent/claims.yaml", "--store", store]).exit_code == 0
    made = runner.invoke(app, ["token", "create", "--agent", "registry-clerk", "--role", "reader", "--store", store, "--json"])
    assert made.exit_code == 0, made.output
    secret = json.loads(made.stdout)["secret"]
    assert len(secret) >= 20
    for command in (["token", "list"], ["token", "list", "--json"], ["stats", "--json"], ["verify", "--json"]):
        shown = runner.invoke(app, [*command, "--store", store])
        assert shown.exit_code == 0, shown.output
        assert secret not in shown.output, command
    kept = (tmp_path / "s").glob("**/*")
    for path in kept:
        if path.is_file() and path.stat().st_size < 10_000_000:
            assert secret.encode() not in path.read_bytes(), path  # kept hashed, in the graph and beside it
