"""Bad input: every malformed claim, policy, rule set or query is refused with a typed error, and nothing is written.

The promise (docs/reliability.md): whatever arrives, gaf answers with a GafError
that says what was wrong and where (file and line, the field, the query's line),
the process carries on, and the store holds exactly what it held before.

Two kinds of evidence: a corpus of bad files (tests/fixtures/bad/, each listed
with the error it must get in expected.yaml), run through the library and the
command line on both stores; and hypothesis fuzzing of every parser — the claim
readers, the policy and rule readers, the clause parser, times, and the query
runner's read-only check — where any exception other than a GafError fails.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

import gaf.errors
import gaf.policies
import gaf.rules
from gaf.cli import app
from gaf.errors import GafError, InvalidValue, OverLimit, PayloadTooLarge, ReadOnlyViolation
from gaf.ledger import DEFAULT_MAX_INPUT_BYTES, MAX_DEPTH, ingest, read_items
from gaf.policies import policy_from_dict, read_policy, read_rules
from gaf.records import Limits, current_limits, limits
from gaf.rules import parse_clause
from gaf.settings import Settings
from gaf.store import GafStore
from gaf.store.ladybug import LadybugStore
from gaf.types import to_instant
from queries.runner import check_read_only, run
from tests.conftest import RENT
from tests.figures import record
from tests.workers import AT, BANK, LEDGER, POLICY, payment_claims, write_jsonl

BAD = Path(__file__).parent / "fixtures" / "bad"
EXPECTED: dict[str, dict[str, str]] = yaml.safe_load((BAD / "expected.yaml").read_text())
FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


def _error_class(name: str) -> type[GafError]:
    for module in (gaf.errors, gaf.rules, gaf.policies):
        if hasattr(module, name):
            return getattr(module, name)
    raise AssertionError(f"expected.yaml names an unknown error {name}")


def _seed(store: GafStore) -> None:
    """A store with something in it, so that "nothing written" means something."""
    ingest(store, [BANK, LEDGER, *payment_claims("seed", range(3))], recorded_at=AT)


def _feed(store: GafStore, path: Path) -> Any:
    """Give a corpus file to the library function that reads its kind."""
    kind = path.parent.name
    if kind == "claims":
        return ingest(store, path, recorded_at=AT)
    if kind == "policies":
        return read_policy(store, path)
    if kind == "rules":
        return read_rules(path)
    return run(store, path.read_text())


def _cli_args(path: Path, target: str) -> list[str]:
    kind = path.parent.name
    command = {"claims": ["ingest"], "policies": ["policy", "add"], "rules": ["rules", "add"]}.get(kind)
    if command is None:
        return ["query", "--cypher", path.read_text(), "--store", target, "--format", "json"]
    return [*command, str(path), "--store", target, "--json"]


def _mismatch(name: str, exc: BaseException | None) -> str | None:
    """Why the error raised for a corpus file is not the one expected.yaml asks for, or None."""
    want = EXPECTED[name]
    if not isinstance(exc, GafError):
        return f"{name}: expected {want['error']}, got {type(exc).__name__ if exc else 'no error'}: {exc}"
    first = exc.errors[0] if getattr(exc, "errors", None) else exc  # an atomic batch: its first bad item
    if not isinstance(first, _error_class(want["error"])):
        return f"{name}: expected {want['error']}, got {type(first).__name__}: {first.message}"
    if want["where"] not in (first.where or ""):
        return f"{name}: expected the place {want['where']!r}, got {first.where!r}"
    if want["what"] not in first.what:
        return f"{name}: expected {want['what']!r} in {first.what!r}"
    return None


def _corpus() -> list[Path]:
    return sorted(p for p in BAD.rglob("*") if p.is_file() and p.name != "expected.yaml")


def test_every_corpus_file_is_listed_with_its_error():
    names = {str(p.relative_to(BAD)) for p in _corpus()}
    assert names == set(EXPECTED), f"unlisted: {sorted(names - set(EXPECTED))}; missing: {sorted(set(EXPECTED) - names)}"


def test_each_bad_input_gets_a_typed_error_naming_its_place_and_writes_nothing(store, monkeypatch):
    _seed(store)
    before = store.counts()
    problems = []
    for path in _corpus():
        name = str(path.relative_to(BAD))
        try:
            _feed(store, path)
            raised = None
        except Exception as exc:  # anything but the expected GafError is a finding
            raised = exc
        if problem := _mismatch(name, raised):
            problems.append(problem)
    assert not problems, "\n".join(problems)
    assert store.counts() == before

    # The same files through the command line: a typed exit code and a JSON error, never a traceback.
    target = store.location
    if store.dialect == "ladybug":
        store.close()  # one process holds the embedded store at a time; the CLI opens it itself
    runner = CliRunner()
    for path in _corpus():
        result = runner.invoke(app, _cli_args(path, target))
        assert isinstance(result.exception, SystemExit) and result.exit_code in (1, 2, 3), (path.name, result.output)
        if "--json" in _cli_args(path, target):
            assert json.loads(result.stdout)["error"], (path.name, result.stdout)
    with GafStore.open(target) as reopened:
        assert reopened.counts() == before
    record("bad_input", store=store.dialect, corpus_files=len(_corpus()), refused_with_place=len(_corpus()),
           cli_refusals=len(_corpus()), other_exceptions=0, records_written=0)  # fmt: skip


# ---------------------------------------------------------------------- generated inputs: depth and size


def _claims_file(directory: Path, suffix: str, body: str) -> Path:
    path = directory / f"generated.{suffix}"
    path.write_text(body, encoding="utf-8")
    return path


def test_documents_nested_beyond_the_parsers_are_refused_by_line(ladybug_store, tmp_path):
    deep_json = _claims_file(tmp_path, "jsonl", '{"kind": "claim", "scope": ' + "[" * 100_000 + "]" * 100_000 + "}\n")
    with pytest.raises(GafError) as info:
        ingest(ladybug_store, deep_json, recorded_at=AT)
    # the 65th bracket: '{' is the first, and the list starts at column 28
    assert isinstance(info.value.errors[0], OverLimit) and info.value.errors[0].where.endswith(f"generated.jsonl:1:{28 + MAX_DEPTH - 1}")
    deep_yaml = _claims_file(tmp_path, "yaml", "- kind: claim\n  scope: " + "[" * 20_000 + "]" * 20_000 + "\n")
    with pytest.raises(OverLimit, match=f"nested more than {MAX_DEPTH} deep") as info:
        ingest(ladybug_store, deep_yaml, recorded_at=AT)
    assert info.value.where.endswith(f"generated.yaml:2:{10 + MAX_DEPTH - 1}")
    assert ladybug_store.counts() == {}


def test_a_file_held_whole_over_the_size_limit_is_refused_before_it_is_read_and_ingest_streams_past_it(ladybug_store, tmp_path):
    assert DEFAULT_MAX_INPUT_BYTES == 256 * 1024 * 1024
    path = write_jsonl(tmp_path / "claims.jsonl", payment_claims("big", range(40)))
    size = path.stat().st_size
    with limits(max_input_bytes=size - 1), pytest.raises(PayloadTooLarge, match=f"{size} bytes, over the limit of {size - 1}") as info:
        read_items(path)  # impact new-claim holds its file whole
    assert info.value.where == str(path)
    with limits(max_input_bytes=100), pytest.raises(PayloadTooLarge, match="over the limit of 100"):
        read_policy(ladybug_store, _policy_file(tmp_path, "x" * 200))
    with pytest.raises(GafError, match="GAF_MAX_INPUT_BYTES: must be a whole number of bytes from 1, not 'a lot'"):
        Settings.from_env({"GAF_MAX_INPUT_BYTES": "a lot"})
    with pytest.raises(GafError, match="max_input_bytes must be a positive integer"), limits(max_input_bytes=0):
        pass
    with limits(max_input_bytes=100):  # ingest reads its file a line at a time: only each record is bounded
        assert ingest(ladybug_store, path, recorded_at=AT).written == 42


def test_the_command_line_takes_the_size_limits_from_the_environment(tmp_path):
    # The library reads no environment: each command enters gaf.records.limits with its Settings.
    runner = CliRunner()
    target = str(tmp_path / "store.lbug")
    refused = runner.invoke(app, ["ingest", str(RENT / "claims.yaml"), "--store", target], env={"GAF_MAX_RECORD_BYTES": "600"})
    assert refused.exit_code == 2 and "over the limit of 600" in refused.output, refused.output
    unparsed = runner.invoke(app, ["ingest", str(RENT / "claims.yaml"), "--store", target], env={"GAF_MAX_INPUT_BYTES": "a lot"})
    assert unparsed.exit_code == 2 and "GAF_MAX_INPUT_BYTES: must be a whole number of bytes" in unparsed.output, unparsed.output
    assert current_limits() == Limits()  # the command's limits end with the command
    with GafStore.open(target) as s:
        assert s.counts() == {}
    assert runner.invoke(app, ["ingest", str(RENT / "claims.yaml"), "--store", target]).exit_code == 0


@pytest.mark.parametrize("suffix", ["yaml", "csv", "jsonl"])
def test_a_record_over_the_size_limit_is_refused_in_every_format(ladybug_store, tmp_path, suffix):
    big = "y" * 3000
    bodies = {
        "yaml": "- {kind: agent, key: bank, name: The bank, agent_type: organisation}\n"
        "- {kind: source, key: ledger, name: The ledger}\n"
        "- kind: claim\n  source: ledger\n  observer: bank\n  observed_at: 2026-07-05T10:00:00Z\n"
        f"  transformation: api_export\n  statements: [{{subject: 'payment:1', predicate: memo, value: {big}}}]\n",
        "csv": "source,observer,observed_at,transformation,subject,predicate,value\n"
        f"{LEDGER.id},{BANK.id},2026-07-05T10:00:00Z,api_export,payment:1,memo,{big}\n",
        "jsonl": json.dumps({"kind": "agent", "key": "bank", "name": "b", "agent_type": "organisation"}) + "\n"
        + json.dumps({"kind": "claim", "source": LEDGER.id, "observer": "bank", "observed_at": "2026-07-05T10:00:00Z",
                      "transformation": "api_export", "statements": [{"subject": "p", "predicate": "memo", "value": big}]}) + "\n",
    }  # fmt: skip
    with limits(max_record_bytes=2000), pytest.raises(GafError) as info:
        ingest(ladybug_store, _claims_file(tmp_path, suffix, bodies[suffix]), recorded_at=AT)
    oversize = [e for e in info.value.errors if isinstance(e, PayloadTooLarge)]
    assert oversize and "over the limit of 2000" in oversize[0].what
    assert ladybug_store.counts() == {}


def _policy_file(directory: Path, question: str) -> Path:
    path = directory / "policy.yaml"
    path.write_text(f"name: p\nversion: 1\nquestion: {question}\n", encoding="utf-8")
    return path


# ---------------------------------------------------------------------- fuzzing


@pytest.fixture(scope="module")
def fuzz_store() -> Iterator[LadybugStore]:
    """One embedded store for every fuzzed example: seeded once, and it must stay as it was."""
    with tempfile.TemporaryDirectory() as directory:
        store = LadybugStore(Path(directory) / "fuzz.lbug")
        _seed(store)
        from gaf.policies import publish

        publish(store, read_policy(store, POLICY), at=AT)
        yield store
        store.close()


class Tally:
    """How many fuzzed inputs each parser saw, and how many it refused."""

    counts: dict[str, list[int]] = {}

    @classmethod
    def add(cls, parser: str, refused: bool) -> None:
        seen = cls.counts.setdefault(parser, [0, 0])
        seen[0] += 1
        seen[1] += refused


def _only_gaf_errors(parser: str, call: Callable[[], Any], store: GafStore | None = None, allowed: type[GafError] = GafError) -> Any:
    """Run one fuzzed input: a result, or the allowed typed error — and a refusal writes nothing."""
    before = store.counts() if store is not None else None
    try:
        out = call()
    except allowed as exc:
        Tally.add(parser, True)
        assert exc.what, f"{type(exc).__name__} without a message"
        if store is not None:
            assert store.counts() == before, f"{parser} refused the input but wrote something"
        return exc
    Tally.add(parser, False)
    return out


_json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)


def _valid_claim() -> dict[str, Any]:
    return {
        "kind": "claim", "source": "ledger", "observer": "bank", "observed_at": "2026-07-05T10:00:00Z",
        "transformation": "api_export", "statements": [{"subject": "payment:f", "predicate": "amount", "value": 1}],
    }  # fmt: skip


@FUZZ
@given(text=st.text(max_size=300), suffix=st.sampled_from(["jsonl", "csv", "yaml"]))
def test_fuzzed_claim_files_get_typed_errors_and_write_nothing(fuzz_store, text, suffix):
    with tempfile.TemporaryDirectory() as directory:
        path = _claims_file(Path(directory), suffix, text)
        _only_gaf_errors(f"claim files ({suffix})", lambda: ingest(fuzz_store, path, recorded_at=AT, mode="atomic"), fuzz_store)


@FUZZ
@given(
    field=st.sampled_from(["kind", "source", "observer", "observed_at", "recorded_at", "transformation", "scope",
                           "statements", "payload_digest", "failure_modes", "id", "extra"]),
    value=_json_values,
    in_statement=st.sampled_from([None, "subject", "predicate", "object", "value", "valid", "polarity"]),
)  # fmt: skip
def test_fuzzed_claim_fields_get_typed_errors_and_write_nothing(fuzz_store, field, value, in_statement):
    claim = _valid_claim()
    if in_statement:
        claim["statements"][0][in_statement] = value
    else:
        claim[field] = value
    _only_gaf_errors("claim records", lambda: ingest(fuzz_store, [claim], recorded_at=AT), fuzz_store)


def _valid_policy() -> dict[str, Any]:
    return yaml.safe_load(POLICY.read_text()) | {
        "name": "fuzzed",
        "derivation_rules": [{"name": "large", "version": 1, "head": "large(?P)", "when": ["amount(?P, ?A)", "?A > 10"]}],
    }


@FUZZ
@given(
    field=st.sampled_from(["name", "version", "question", "scope", "trust", "conflict", "cutoff", "completeness",
                           "parties", "ratified", "derivation_rules", "absence", "evaluation_rules", "kind"]),
    value=_json_values | st.text(alphabet="?()!=<>, abnot@1", max_size=30),
    rule_part=st.sampled_from([None, "name", "head", "when", "version", "bodies"]),
)  # fmt: skip
def test_fuzzed_policies_get_typed_errors(fuzz_store, field, value, rule_part):
    policy = _valid_policy()
    if rule_part:
        policy["derivation_rules"][0][rule_part] = value
    else:
        policy[field] = value
    _only_gaf_errors("policies", lambda: policy_from_dict(fuzz_store, policy, where="fuzzed.yaml"), fuzz_store)


@FUZZ
@given(text=st.text(max_size=300), which=st.sampled_from(["policy", "rules"]))
def test_fuzzed_policy_and_rule_files_get_typed_errors(fuzz_store, text, which):
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / f"{which}.yaml"
        path.write_text(text, encoding="utf-8")
        read = (lambda: read_policy(fuzz_store, path)) if which == "policy" else (lambda: read_rules(path))
        _only_gaf_errors(f"{which} files", read, fuzz_store)


def _valid_rules() -> dict[str, Any]:
    return {
        "name": "fuzzed", "version": 1, "conclusion": "Large.",
        "bands": [{"label": "large", "low": 0.5, "high": 1.0}],
        "rules": [{"name": "large", "role": "warrant", "strength": "defeasible", "qualifier": 1.0,
                   "backing": "b", "condition": ["amount(?subject, ?A)"]}],
        "defeats": [],
    }  # fmt: skip


@FUZZ
@given(
    field=st.sampled_from(["name", "version", "conclusion", "rules", "defeats", "aggregation", "bands", "default_label"]),
    rule_part=st.sampled_from([None, "name", "role", "strength", "qualifier", "condition"]),
    value=_json_values,
)
def test_fuzzed_verdict_rules_get_typed_errors(field, rule_part, value):
    rules = _valid_rules()
    if rule_part:
        rules["rules"][0][rule_part] = value
    else:
        rules[field] = value
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "rules.yaml"
        path.write_text(yaml.safe_dump(rules), encoding="utf-8")
        _only_gaf_errors("verdict rules", lambda: read_rules(path))


_clause_text = st.text(alphabet="abnot?XY_@12.()\"', =!<>-\\", max_size=40) | st.text(max_size=40)


@FUZZ
@given(text=_clause_text)
def test_fuzzed_clauses_read_or_get_invalid_value(text):
    out = _only_gaf_errors("rule clauses", lambda: parse_clause(text), allowed=InvalidValue)
    assert isinstance(out, (InvalidValue, gaf.rules.Atom, gaf.rules.Compare, gaf.rules.RuleRef, gaf.rules.Not))


@FUZZ
@given(value=st.text(max_size=40) | st.datetimes(timezones=st.timezones()) | st.datetimes() | st.dates() | st.integers() | st.none()
       | st.from_regex(r"\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?)?(Z|[+-]\d{2}:?\d{2})?", fullmatch=True))  # fmt: skip
def test_fuzzed_times_read_as_utc_or_get_invalid_value(value):
    out = _only_gaf_errors("times", lambda: to_instant(value), allowed=InvalidValue)
    if isinstance(out, datetime):
        assert out.utcoffset().total_seconds() == 0 and out.microsecond % 1000 == 0


_WRITES = ["CREATE (x:Claim)", "MERGE (x:Claim {id: 'c'})", "SET n.body = ''", "DETACH DELETE n", "DELETE n",
           "REMOVE n:Claim", "LOAD CSV FROM 'file:///x' AS r", "FOREACH (i IN [1] | CREATE (:X))",
           "CALL apoc.create.node(['X'], {})", "CALL db.createLabel('X')", "DROP INDEX i"]  # fmt: skip
_NOISE = st.sampled_from(["", " ", "\n", "/* c */", "// c\n", "\t"])


def _cased(text: str, flips: list[bool]) -> str:
    return "".join(c.swapcase() if f else c for c, f in zip(text, flips + [False] * len(text)))


@FUZZ
@given(
    write=st.sampled_from(_WRITES),
    flips=st.lists(st.booleans(), max_size=12),
    before=_NOISE,
    after=_NOISE,
    prefix=st.sampled_from(["MATCH (n:Claim) ", "MATCH (n) WITH n ", "MATCH (n:Source) CALL { ", ""]),
)
def test_a_write_hidden_in_a_query_is_refused_before_the_store(fuzz_store, write, flips, before, after, prefix):
    keyword_first = write.split(" ")[0]
    query = f"{prefix}{before}{_cased(keyword_first, flips)}{write[len(keyword_first):]}{after}"
    if prefix.endswith("{ "):
        query += " } RETURN n"
    _only_gaf_errors("queries with a write", lambda: check_read_only(query), allowed=ReadOnlyViolation)
    with pytest.raises(ReadOnlyViolation):
        run(fuzz_store, query)


@FUZZ
@given(text=st.text(alphabet=st.sampled_from(list("MATCHRETURNWIHDLSEXcreatmrg ()[]{}:-><.,'\"/*n1=$")), max_size=60)
       | st.text(max_size=60))  # fmt: skip
def test_fuzzed_queries_get_typed_errors_and_write_nothing(fuzz_store, text):
    # The parse refuses what is not a read (ReadOnlyViolation) and what is not Cypher (InvalidQuery).
    _only_gaf_errors("ad-hoc queries", lambda: check_read_only(text))
    _only_gaf_errors("ad-hoc queries run", lambda: run(fuzz_store, text), fuzz_store)


def test_fuzz_figures():
    """Runs last in this file: the numbers of fuzzed inputs per parser, for docs/reliability.md."""
    if not Tally.counts:
        pytest.skip(reason="no fuzz test ran in this session")
    record("fuzzing", examples={k: v[0] for k, v in sorted(Tally.counts.items())},
           refused={k: v[1] for k, v in sorted(Tally.counts.items())}, other_exceptions=0, records_written_by_refusals=0)  # fmt: skip


def test_the_embedded_stores_cache_size_comes_from_the_environment_and_a_bad_one_is_refused(tmp_path):
    runner = CliRunner()
    target = str(tmp_path / "store.lbug")
    assert runner.invoke(app, ["ingest", str(RENT / "claims.yaml"), "--store", target], env={"GAF_CACHE_MB": "64"}).exit_code == 0
    read = runner.invoke(app, ["stats", "--json", "--store", target], env={"GAF_CACHE_MB": "64"})
    plain = runner.invoke(app, ["stats", "--json", "--store", target])
    assert read.exit_code == 0 and json.loads(read.output)["counts"] == json.loads(plain.output)["counts"] != {}, read.output
    assert Settings.from_env({"GAF_CACHE_MB": "64"}).cache_mb == 64 and Settings.from_env({}).cache_mb is None
    for bad in ("lots", "16"):
        refused = runner.invoke(app, ["stats", "--store", target], env={"GAF_CACHE_MB": bad})
        said = f"GAF_CACHE_MB: must be a whole number of MiB from 64, not {bad!r}"
        assert refused.exit_code == 2 and said in refused.output and "Traceback" not in refused.output, refused.output


def test_a_page_cache_too_small_for_the_work_is_a_typed_refusal_that_names_GAF_CACHE_MB(tmp_path):
    # below the floor GAF_CACHE_MB allows, LadybugDB cannot even declare the schema: proof that
    # the size reaches it, and that its refusal says which setting to change
    with pytest.raises(gaf.errors.StoreUnavailable) as refused:
        LadybugStore(tmp_path / "store", cache_mb=16)
    assert "ran out of page cache" in str(refused.value) and "GAF_CACHE_MB" in (refused.value.hint or "")


@pytest.mark.parametrize("suffix", [".yaml", ".jsonl", ".csv"])
def test_a_device_or_a_directory_named_as_input_is_refused_before_anything_is_read(tmp_path, suffix):
    """``/dev/zero`` has size 0 and never ends: refused as not a regular file (it grew an ingest to
    22.9 GB before), as is a directory; nothing written, a typed error, exit 2."""
    device = tmp_path / f"zero{suffix}"
    device.symlink_to("/dev/zero")
    folder = tmp_path / f"folder{suffix}"
    folder.mkdir()
    location = str(tmp_path / "store.lbug")
    runner = CliRunner()
    for given in (device, folder):
        for argv in (["ingest", str(given)], ["policy", "add", str(given), "--at", "2026-07-01"]):
            result = runner.invoke(app, [*argv, "--store", location])
            assert result.exit_code == 2 and "not a regular file" in result.stderr, (argv, result.output)
    with LadybugStore(location) as store:
        assert store.counts() == {}


@pytest.mark.parametrize(("name", "text"), [
    ("escaped.jsonl", '{"kind": "agent", "key": "a\\u0000b", "name": "x", "agent_type": "person"}\n'),
    ("nested.jsonl", '{"kind": "source", "key": "s", "name": "s", "description": "ok", "operator": "x\\u0000"}\n'),
    ("escaped.yaml", '- kind: agent\n  key: ab\n  name: "x\\0y"\n  agent_type: person\n'),
])  # fmt: skip
def test_a_nul_character_is_refused_however_it_is_escaped(tmp_path, name, text):
    """A raw NUL is not JSON; ``\\u0000`` in JSON and ``"\\0"`` in YAML decode to one, and are refused the same way."""
    path = tmp_path / name
    path.write_text(text)
    location = str(tmp_path / "store.lbug")
    result = CliRunner().invoke(app, ["ingest", str(path), "--store", location])
    assert result.exit_code == 2 and "NUL character" in result.stderr and f"{name}:1" in result.stderr, result.output
    with LadybugStore(location) as store:
        assert store.counts() == {}
