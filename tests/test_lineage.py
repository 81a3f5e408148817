"""OpenLineage events in as claims (gaf.lineage): the mapping against a plain oracle, the CLI
and the HTTP endpoint writing the same store, re-sending a no-op, and every bad event refused
typed, with its field's path, nothing written."""

from __future__ import annotations

import json
import re
import os
import subprocess
import sys
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gaf.errors import BatchRejected, ExitCode
from gaf.ledger import ingest
from gaf.errors import InvalidEvent, UnknownEventType
from gaf.web import API
from tests.conftest import NOW
from tests.test_web_api import count, serve_store
from tests.worlds import openlineage_event

EVENTS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


def key(prefix: str, name: str) -> str:
    """The oracle's key: blank ends percent-escaped (the generator's names are short)."""
    text = f"{prefix}:{name}"
    body = text.rstrip()
    return body + "".join(f"%{ord(c):02X}" for c in text[len(body):])


def expected(event: dict[str, Any]) -> list[tuple[str, str, Any]]:
    """The statements an event should make, walked plainly from its dict."""
    out: list[tuple[str, str, Any]] = []

    def facets(subject: str, owner: dict[str, Any]) -> None:
        for group in ("facets", "inputFacets", "outputFacets"):
            for name, facet in (owner.get(group) or {}).items():
                if name == "schema":
                    out.extend((subject, "has_field", f"{f['name']}: {f['type']}") for f in facet["fields"])
                elif name == "outputStatistics":
                    out.extend((subject, p, n if n < 2**53 else str(n)) for p, n in (("row_count", facet["rowCount"]), ("size_bytes", facet["size"])))
                elif name == "dataQualityAssertions":
                    for a in facet["assertions"]:
                        path = subject[len("dataset:"):] + (f"/{a['column']}" if a.get("column") else "") + f"/{a['assertion']}"
                        out.append((f"assertion:{path}", "success", a["success"]))
                elif name == "columnLineage":
                    for column, spec in facet["fields"].items():
                        out.extend((f"{subject}#{column}", "derived_from", key("dataset", f"{f['namespace']}/{f['name']}#{f['field']}"))
                                   for f in spec["inputFields"])  # fmt: skip
                else:
                    out.append((subject, f"facet:{name}", json.dumps(facet, sort_keys=True, separators=(",", ":"))))

    if "dataset" in event:
        d = key("dataset", f"{event['dataset']['namespace']}/{event['dataset']['name']}")
        facets(d, event["dataset"])
        return out + [(d, "described", True)]
    job = key("job", f"{event['job']['namespace']}/{event['job']['name']}")
    actor = job
    if "run" in event:
        actor = f"run:{event['run']['runId']}"
        out += [(actor, "of_job", job), (actor, "state", event["eventType"])]
        facets(actor, event["run"])
    else:
        out.append((job, "described", True))
    for side, verb in (("inputs", "read"), ("outputs", "wrote")):
        for d in event[side]:
            subject = key("dataset", f"{d['namespace']}/{d['name']}")
            facets(subject, d)
            out.append((actor, verb, subject))
    return out


def ndjson(events: list[dict[str, Any]], path: Path) -> Path:
    path.write_text("".join(json.dumps(e) + "\n" for e in events))
    return path


def stored_triples(store, ids: list[str]) -> list[tuple[str, str, Any]]:
    claims = [store.get(i) for i in ids if i.startswith("claim:")]
    return sorted(((s.subject, s.predicate, s.object if s.object is not None else s.value) for c in claims for s in c.statements), key=repr)


@EVENTS
@given(event=openlineage_event())
def test_an_event_makes_the_statements_its_facets_name(store, tmp_path, event):
    report = ingest(store, ndjson([event], tmp_path / "e.ndjson"), recorded_at=NOW, fmt="openlineage")
    ids = report.write.written + report.write.existing
    assert stored_triples(store, ids) == sorted(expected(event), key=repr)
    again = ingest(store, tmp_path / "e.ndjson", recorded_at=NOW, fmt="openlineage")
    assert again.written == 0 and sorted(again.write.existing) == sorted(ids)


def test_counts_are_exact_integers_never_floats(store, tmp_path):
    event = {"eventTime": "2026-01-01T00:00:00Z", "producer": "https://x.example/p", "eventType": "COMPLETE",
             "run": {"runId": "01941d6e-0000-7000-8000-000000000001"}, "job": {"namespace": "n", "name": "j"}, "inputs": [],
             "outputs": [{"namespace": "n", "name": "d", "outputFacets": {"outputStatistics": {"rowCount": 10**17 + 1, "size": 3}}}]}  # fmt: skip
    report = ingest(store, ndjson([event], tmp_path / "e.ndjson"), recorded_at=NOW, fmt="openlineage")
    values = {p: v for _, p, v in stored_triples(store, report.write.written)}
    assert values["row_count"] == str(10**17 + 1)
    assert values["size_bytes"] == 3 and type(values["size_bytes"]) is int


def test_unknown_facets_are_kept_whole_and_gaf_show_lists_them(tmp_path):
    event = {"eventTime": "2026-01-01T00:00:00Z", "producer": "https://x.example/p", "eventType": "START",
             "run": {"runId": "01941d6e-0000-7000-8000-000000000002", "facets": {"myTeam_owner": {"_producer": "p", "_schemaURL": "s", "team": "finance"}}},
             "job": {"namespace": "n", "name": "j"}}  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    gaf = lambda *a: subprocess.run([sys.executable, "-m", "gaf", *a, "--store", str(tmp_path / "s")], capture_output=True, text=True, env=env)  # noqa: E731
    assert gaf("init").returncode == 0
    done = gaf("ingest", str(ndjson([event], tmp_path / "e.ndjson")), "--format", "openlineage", "--at", "2026-06-01T00:00:00Z")
    assert done.returncode == 0, done.stderr
    claim = re.search(r"claim:[0-9a-f]+", done.stdout).group(0)
    shown = gaf("show", claim)
    assert "facet:myTeam_owner" in shown.stdout and "finance" in shown.stdout


def _event() -> dict[str, Any]:
    return {"eventTime": "2026-01-01T00:00:00Z", "producer": "https://x.example/p", "eventType": "COMPLETE",
            "run": {"runId": "01941d6e-0000-7000-8000-000000000003"}, "job": {"namespace": "n", "name": "j"},
            "inputs": [], "outputs": [{"namespace": "n", "name": "d", "facets": {}}]}  # fmt: skip


def _with(path: str, value: Any) -> dict[str, Any]:
    event = _event()
    *head, last = path.split(".")
    place: Any = event
    for part in head:
        place = place[int(part)] if part.isdigit() else place[part]
    if value is None:
        del place[last]
    else:
        place[last] = value
    return event


BAD = [
    ("no producer", _with("producer", None), InvalidEvent, ".producer"),
    ("producer not text", _with("producer", 5), InvalidEvent, ".producer"),
    ("eventTime not a time", _with("eventTime", "yesterday"), InvalidEvent, ".eventTime"),
    ("job without a name", _with("job.name", None), InvalidEvent, ".job.name"),
    ("dataset without a namespace", _with("outputs.0.namespace", None), InvalidEvent, ".outputs[0].namespace"),
    ("unknown event type", _with("eventType", "EXPLODED"), UnknownEventType, ".eventType"),
    ("neither run, job nor dataset", {"eventTime": "2026-01-01T00:00:00Z", "producer": "https://x.example/p"}, UnknownEventType, ""),
    ("runId not a UUID", _with("run.runId", "run-42"), InvalidEvent, ".run.runId"),
    ("eventTime in the future", _with("eventTime", (NOW + timedelta(seconds=301)).isoformat()), InvalidEvent, ".eventTime"),
    ("facet over the size limit", _with("outputs.0.facets", {"big": {"x": ["y" * 1000] * 70}}), None, ".outputs[0].facets.big"),
]


@pytest.mark.parametrize(("case", "event", "kind", "path"), BAD, ids=[b[0] for b in BAD])
def test_a_bad_event_is_refused_naming_its_field_and_nothing_is_written(store, tmp_path, case, event, kind, path):
    before = count_of(store)
    with pytest.raises(BatchRejected) as refused:
        ingest(store, ndjson([_event() | {"run": {"runId": "01941d6e-0000-7000-8000-000000000009"}}, event], tmp_path / "e.ndjson"),
               recorded_at=NOW, fmt="openlineage")  # fmt: skip
    error = refused.value.errors[0]
    assert error.where == f"{tmp_path / 'e.ndjson'}:2{path}"
    assert kind is None or isinstance(error, kind)
    assert error.exit_code == ExitCode.BAD_INPUT
    assert count_of(store) == before


def count_of(store) -> int:
    return sum(store.counts().values())


def test_the_skew_is_a_setting(store, tmp_path):
    late = _with("eventTime", (NOW + timedelta(seconds=301)).isoformat())
    assert ingest(store, ndjson([late], tmp_path / "e.ndjson"), recorded_at=NOW, fmt="openlineage", lineage_skew=600).written == 3


def test_the_endpoint_writes_what_the_cli_writes(store, tmp_path):
    events = [_event(), _with("run.runId", "01941d6e-0000-7000-8000-00000000000a"), _with("eventType", "FAIL")]
    served = serve_store(store, tmp_path)
    first = served.call("POST", f"{API}/lineage", "writer", json=events[0], params={"at": "2026-06-01T00:00:00Z"})
    assert first.status_code == 201, first.text
    rest = served.call("POST", f"{API}/lineage", "writer", json=events[1:], params={"at": "2026-06-01T00:00:00Z"})
    assert rest.status_code == 201, rest.text
    via_http = sorted(set(first.json()["written_ids"] + first.json()["existing_ids"] + rest.json()["written_ids"] + rest.json()["existing_ids"]))
    report = ingest(store, ndjson(events, tmp_path / "e.ndjson"), recorded_at=NOW, fmt="openlineage")
    assert report.written == 0 and sorted(set(report.write.existing)) == via_http
    again = served.call("POST", f"{API}/lineage", "writer", json=events[0], params={"at": "2026-06-01T00:00:00Z"})
    assert again.json()["written"] == 0


def test_the_endpoint_refuses_a_bad_event_400_naming_the_field_and_no_token_401(store, tmp_path):
    served = serve_store(store, tmp_path)
    before = count(store)
    bad = served.call("POST", f"{API}/lineage", "writer", json=_with("run.runId", "run-42"))
    assert bad.status_code == 400 and "body:1.run.runId" in bad.text
    assert served.call("POST", f"{API}/lineage", None, json=_event()).status_code == 401
    assert served.call("POST", f"{API}/lineage", "reader", json=_event()).status_code == 403
    assert count(store) == before


def test_the_docs_worked_event_prints_what_the_doc_says():
    from tests.test_docs_examples import python_examples

    examples = python_examples((Path(__file__).resolve().parents[1] / "docs" / "openlineage.md").read_text())
    assert len(examples) == 1, "the worked event was not found in docs/openlineage.md"
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    for code, documented in examples:
        run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
        assert run.returncode == 0, run.stderr
        assert run.stdout == documented


def test_random_events_through_the_endpoint_are_what_the_ingest_writes(served_lineage):
    served, tmp_path = served_lineage

    @EVENTS
    @given(events=st.lists(openlineage_event(), min_size=1, max_size=3))
    def check(events: list[dict[str, Any]]) -> None:
        answer = served.call("POST", f"{API}/lineage", "writer", json=events, params={"at": "2026-12-01T00:00:00Z"})
        assert answer.status_code == 201, answer.text
        via_http = set(answer.json()["written_ids"] + answer.json()["existing_ids"])
        report = ingest(served.store, ndjson(events, tmp_path / "e.ndjson"), recorded_at=NOW, fmt="openlineage")
        assert report.written == 0 and set(report.write.existing) == via_http

    check()


@pytest.fixture
def served_lineage(store, tmp_path):
    return serve_store(store, tmp_path), tmp_path
