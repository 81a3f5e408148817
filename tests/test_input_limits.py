"""Inputs that cannot exhaust the machine: every reader refuses, at file, line and column, what no
record could hold — nesting past MAX_DEPTH, a text past MAX_TEXT, a number past MAX_DIGITS —, an
unquoted YAML date no calendar has and a key given twice; a pipe is counted against the input
limit as it is read. Every refusal is a typed error and the store holds what it held before.

The oracles are outside the readers: each file is built here with its breach at a known place,
the expected line and column found in the text by searching for a marker, and the value just
inside each limit is shown to pass the limit (so a limit that refused everything would fail).
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gaf.errors import BatchRejected, DuplicateKey, GafError, InvalidValue, OverLimit, PayloadTooLarge
from gaf.ledger import MAX_DEPTH, MAX_DIGITS, MAX_TEXT, ingest
from gaf.records import limits
from gaf.store import GafStore
from tests.workers import AT

#: The agent and source every generated claim names by key, as a YAML list and as JSONL lines.
AGENT = {"kind": "agent", "key": "clerk", "name": "A clerk", "agent_type": "person"}
SOURCE = {"kind": "source", "key": "bank", "name": "A bank"}


def _claim(**fields: object) -> dict[str, object]:
    statement = {"subject": "payment:1", "predicate": "amount", "value": 1000}
    claim = {"kind": "claim", "source": "bank", "observer": "clerk", "observed_at": "2026-07-05T10:00:00Z",
             "transformation": "api_export", "statements": [statement]}  # fmt: skip
    return claim | fields


def _refusals(store: GafStore, path: Path | io.BytesIO, **kw: object) -> list[GafError]:
    """What ingesting ``path`` is refused with, item by item; the store must be left as it was."""
    before = store.counts()
    with pytest.raises(GafError) as refused:
        ingest(store, path, recorded_at=AT, **kw)  # type: ignore[arg-type]
    assert store.counts() == before, "a refused input writes nothing"
    error = refused.value
    return list(error.errors) if isinstance(error, BatchRejected) else [error]


def _place(text: str, marker: str, nth: int = 1, *, after: str = "") -> str:
    """line:column (from 1) of the nth occurrence of ``marker`` in ``text`` (past ``after``): the oracle of every place."""
    at = text.index(after) if after else -1
    for _ in range(nth):
        at = text.index(marker, at + 1)
    line = text.count("\n", 0, at) + 1
    return f"{line}:{at - (text.rfind(chr(10), 0, at) + 1) + 1}"


def _jsonl(tmp_path: Path, claim_line: str) -> tuple[Path, str]:
    text = "\n".join([json.dumps(AGENT), json.dumps(SOURCE), claim_line]) + "\n"
    path = tmp_path / "claims.jsonl"
    path.write_text(text, encoding="utf-8")
    return path, text


def _yaml(tmp_path: Path, claim_lines: str) -> tuple[Path, str]:
    text = ("- kind: agent\n  key: clerk\n  name: A clerk\n  agent_type: person\n- kind: source\n  key: bank\n  name: A bank\n"
            "- kind: claim\n  source: bank\n  observer: clerk\n  observed_at: 2026-07-05T10:00:00Z\n  transformation: api_export\n"
            + claim_lines)  # fmt: skip
    path = tmp_path / "claims.yaml"
    path.write_text(text, encoding="utf-8")
    return path, text


STATEMENT = "  statements:\n    - subject: payment:1\n      predicate: amount\n      value: {value}\n"


# ---------------------------------------------------------------------- nesting


@pytest.mark.parametrize("suffix", ["jsonl", "yaml"])
def test_nesting_past_the_limit_is_refused_at_its_bracket_and_nesting_at_it_is_not(store, tmp_path, suffix):
    def nested(depth: int) -> tuple[Path, str]:
        # the claim is one level, its scope's lists the rest: the (MAX_DEPTH + 1)th level is the breach
        if suffix == "jsonl":
            line = json.dumps(_claim(scope="SCOPE")).replace('"SCOPE"', "[" * (depth - 1) + "]" * (depth - 1))
            return _jsonl(tmp_path, line)
        return _yaml(tmp_path, "  scope: " + "[" * (depth - 1) + "]" * (depth - 1) + "\n" + STATEMENT.format(value=1000))

    path, text = nested(MAX_DEPTH + 1)
    (error,) = _refusals(store, path)
    assert isinstance(error, OverLimit) and f"nested more than {MAX_DEPTH} deep" in error.what
    assert error.where == f"{path}:{_place(text, '[', MAX_DEPTH, after='scope')}", "the bracket that goes one level too deep"
    path, _ = nested(MAX_DEPTH)
    assert not any(isinstance(e, OverLimit) for e in _refusals(store, path)), "at the limit the depth is no refusal"


# ---------------------------------------------------------------------- text


@pytest.mark.parametrize("suffix", ["jsonl", "yaml", "csv"])
def test_a_text_past_the_limit_is_refused_at_its_place_and_one_at_it_is_written(store, tmp_path, suffix):
    def with_scope(length: int) -> tuple[Path, str]:
        scope = "s" * length
        if suffix == "jsonl":
            return _jsonl(tmp_path, json.dumps(_claim(scope=scope)))
        if suffix == "yaml":
            return _yaml(tmp_path, f"  scope: {scope}\n" + STATEMENT.format(value=1000))
        text = f"source,observer,observed_at,transformation,scope,subject,predicate,value\nbank,clerk,2026-07-05T10:00:00Z,api_export,{scope},payment:1,amount,1000\n"
        path = tmp_path / "claims.csv"
        path.write_text(text, encoding="utf-8")
        return path, text

    if suffix == "csv":  # CSV holds claims alone: its agent and source come first
        ingest(store, [AGENT, SOURCE], recorded_at=AT)
    path, text = with_scope(MAX_TEXT + 1)
    (error,) = _refusals(store, path)
    assert isinstance(error, OverLimit) and f"a text of {MAX_TEXT + 1:,} characters" in error.what
    # JSON names the string's opening quote; YAML the scalar; CSV the row and the column's name
    expected = "2, column scope" if suffix == "csv" else _place(text, '"sss' if suffix == "jsonl" else "sss")
    assert error.where == f"{path}:{expected}"
    path, _ = with_scope(MAX_TEXT)
    before = sum(store.counts().values())
    assert ingest(store, path, recorded_at=AT).written > 0 and sum(store.counts().values()) > before


# ---------------------------------------------------------------------- digits


@pytest.mark.parametrize("digits", [MAX_DIGITS + 1, 5000])
@pytest.mark.parametrize("suffix", ["jsonl", "yaml", "csv"])
def test_a_number_with_too_many_digits_is_refused_at_its_place(store, tmp_path, suffix, digits):
    number = "7" * digits
    if suffix == "jsonl":
        line = json.dumps(_claim()).replace('"value": 1000', f'"value": {number}')
        path, text = _jsonl(tmp_path, line)
    elif suffix == "yaml":
        path, text = _yaml(tmp_path, STATEMENT.format(value=number))
    else:
        ingest(store, [AGENT, SOURCE], recorded_at=AT)
        text = f"source,observer,observed_at,transformation,subject,predicate,value\nbank,clerk,2026-07-05T10:00:00Z,api_export,payment:1,amount,{number}\n"
        path = tmp_path / "claims.csv"
        path.write_text(text, encoding="utf-8")
    (error,) = _refusals(store, path)
    assert isinstance(error, OverLimit) and f"a number of {digits:,} digits" in error.what
    expected = "2, column value" if suffix == "csv" else _place(text, "777")
    assert error.where == f"{path}:{expected}"
    assert "4300" not in error.message and "sys.set_int_max_str_digits" not in error.message, "never Python's own words"


@pytest.mark.parametrize("suffix", ["jsonl", "yaml"])
def test_a_number_at_the_digit_limit_is_no_refusal_of_the_limit(store, tmp_path, suffix):
    number = "1" + "0" * (MAX_DIGITS - 1)
    if suffix == "jsonl":
        path, _ = _jsonl(tmp_path, json.dumps(_claim()).replace('"value": 1000', f'"value": {number}'))
    else:
        path, _ = _yaml(tmp_path, STATEMENT.format(value=number))
    try:
        ingest(store, path, recorded_at=AT)
    except GafError as refused:  # a number this long may be refused for what it is, never for its length
        errors = refused.errors if isinstance(refused, BatchRejected) else [refused]
        assert not any(isinstance(e, OverLimit) for e in errors), [e.message for e in errors]


# ---------------------------------------------------------------------- YAML: keys and dates


def test_a_yaml_key_given_twice_is_refused_naming_both_lines_and_nothing_is_stored(store, tmp_path):
    path, text = _yaml(tmp_path, "  statements:\n    - subject: payment:1\n      predicate: amount\n      value: 1\n      value: 1000000\n")
    (error,) = _refusals(store, path)
    first, second = _place(text, "value: 1\n"), _place(text, "value: 1000000")
    assert isinstance(error, DuplicateKey) and error.where == f"{path}:{second}"
    assert f"first at line {first.split(':')[0]}" in error.what
    assert not store.find("claim"), "neither value is kept: 1000000 is not stored"


@pytest.mark.parametrize("written", ["2026-02-30", "2026-13-01", "2026-07-15T25:00:00Z", "2026-04-31T10:00:00Z"])
def test_an_unquoted_yaml_date_no_calendar_has_is_refused_at_its_place(store, tmp_path, written):
    path, text = _yaml(tmp_path, STATEMENT.format(value=1000))
    text = text.replace("observed_at: 2026-07-05T10:00:00Z", f"observed_at: {written}")
    path.write_text(text, encoding="utf-8")
    (error,) = _refusals(store, path)
    assert isinstance(error, InvalidValue) and error.where == f"{path}:{_place(text, written)}"
    assert f"{written} is not a date or time that exists" in error.what and "quote it if it is text" in (error.hint or "")


def test_an_unquoted_yaml_date_that_exists_still_reads(store, tmp_path):
    path, text = _yaml(tmp_path, STATEMENT.format(value=1000))
    path.write_text(text.replace("observed_at: 2026-07-05T10:00:00Z", "observed_at: 2026-07-05"), encoding="utf-8")
    ingest(store, path, recorded_at=AT)
    (claim,) = store.find("claim")
    assert claim.observed_at.isoformat() == "2026-07-05T00:00:00+00:00"


# ---------------------------------------------------------------------- a stream has no size: it is counted


def _lines(n: int) -> bytes:
    return ("\n".join([json.dumps(AGENT), json.dumps(SOURCE)] + [json.dumps(_claim(scope=f"s{i}")) for i in range(n)]) + "\n").encode()


def test_a_stream_over_the_input_limit_is_refused_as_it_is_read_and_one_at_it_is_written(store):
    data = _lines(20)
    with limits(max_input_bytes=len(data) - 1):
        (error,) = _refusals(store, io.BytesIO(data), fmt="jsonl", name="<stdin>")
    assert isinstance(error, PayloadTooLarge) and error.where == "<stdin>" and f"over the limit of {len(data) - 1} bytes" in error.what
    with limits(max_input_bytes=len(data)):
        assert ingest(store, io.BytesIO(data), fmt="jsonl", name="<stdin>", recorded_at=AT).written > 0


def test_a_pipe_over_GAF_MAX_INPUT_BYTES_into_gaf_ingest_is_refused_with_exit_2_and_writes_nothing(tmp_path):
    target = tmp_path / "store.lbug"
    env = {k: v for k, v in os.environ.items() if k != "GAF_STORE"}

    def gaf(*args: str, stdin: bytes = b"", **more: str) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run([sys.executable, "-m", "gaf", *args, "--store", str(target)], input=stdin,
                              capture_output=True, env=env | more, timeout=120)  # fmt: skip

    assert gaf("init").returncode == 0
    data = _lines(200)
    refused = gaf("ingest", "-", "--format", "jsonl", stdin=data, GAF_MAX_INPUT_BYTES="4096")
    said = refused.stderr.decode()
    assert refused.returncode == 2 and "<stdin>: the stream is over the limit of 4096 bytes" in said, said
    assert len([line for line in said.splitlines() if not line.startswith("store: ")]) == 1 and "Traceback" not in said
    with GafStore.open(str(target), read_only=True) as s:
        assert s.counts() == {}
    assert gaf("ingest", "-", "--format", "jsonl", stdin=data, GAF_MAX_INPUT_BYTES=str(len(data))).returncode == 0
