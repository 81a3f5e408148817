"""gaf serve's HTTP API: every route against the library call it stands for, and its door.

The app is built over the rent story's store and called in-process (httpx's ASGITransport);
one test runs a real uvicorn server on a free port. Answers are compared with the same
library call made directly, never with the API itself; refusals with their status, their
typed body, and the store's record count before and after.
"""

from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, replace
from datetime import timedelta
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
import yaml

import impact
import prov_export
from gaf import closure, reopen
from gaf.errors import AccessDenied, BatchRejected, GafError, InvalidValue, NotAuthenticated, PayloadTooLarge, StoreLocked, UnknownReference
from gaf.settings import Settings
from gaf.store import GafStore
from gaf.web import API, Role, Tokens, check_no_auth, create_app, status_of
from gaf.web.api import ENDPOINTS
from gaf.web.app import SECURITY_HEADERS
from tests.conftest import NOW, ROOT, small_graph
from tests.rentcase import RENT_JULY, agent_id, authority, close_both

T = NOW + timedelta(days=1)


@dataclass
class Served:
    store: GafStore
    app: Any
    tokens: Tokens
    secrets: dict[str, str]
    c1: str
    c2: str
    v2: str
    ids: dict[str, str]

    def call(self, method: str, path: str, who: str | None = "authority", **kw: Any) -> httpx.Response:
        headers = dict(kw.pop("headers", {}))
        if who is not None:
            headers["authorization"] = f"Bearer {self.secrets[who]}"
        return request(self.app, method, path, headers=headers, **kw)


def request(app: Any, method: str, path: str, **kw: Any) -> httpx.Response:
    async def go() -> httpx.Response:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://gaf") as client:
            return await client.request(method, path, **kw)

    return anyio.run(go)


def count(store: GafStore) -> int:
    return sum(store.counts().values())


def serve_store(store: GafStore, tmp_path: Path, **limits: Any) -> Served:
    """The rent story's store (both closures, the grants) served with one token per role and
    two dead ones: the clerk reads and writes, the letting agent is the authority."""
    c1, c2 = close_both(store)
    ids = authority(store)
    tokens = Tokens(tmp_path / "tokens.json")
    clerk, agent = agent_id(store, "registry-clerk"), ids["agent"]
    made = {
        "reader": tokens.create(agent=clerk, role=Role.reader, at=NOW),
        "writer": tokens.create(agent=clerk, role=Role.writer, at=NOW),
        "authority": tokens.create(agent=agent, role=Role.authority, at=NOW),
        "expired": tokens.create(agent=clerk, role=Role.authority, at=NOW, expires=NOW + timedelta(hours=1)),
        "revoked": tokens.create(agent=clerk, role=Role.authority, at=NOW),
    }
    tokens.revoke(made["revoked"].token.id, at=NOW)
    settings = Settings(store=store.location, **limits)
    app = create_app(store, settings, tokens, clock=lambda: T)
    return Served(store, app, tokens, {k: v.secret for k, v in made.items()}, c1.closure.id, c2.closure.id, c2.verdict.id, ids)


@pytest.fixture
def served(store: GafStore, tmp_path: Path) -> Served:
    return serve_store(store, tmp_path)


# ---------------------------------------------------------------------- every route, against the library


def requests_for(s: Served) -> dict[str, tuple[str, str, dict[str, Any]]]:
    """One request for each route (by its operation id), in an order that leaves each its inputs."""
    from gaf.lifecycle import propose
    from gaf.rules import DerivationRule

    rule = DerivationRule.model_validate(yaml.safe_load((ROOT / "examples" / "rent" / "allocation-rule.yaml").read_text()))
    candidate = propose(s.store, name="rent-allocation", text="allocate", rule=rule, cases=[], proposed_by=s.ids["agent"], at=NOW)
    claims = [r.to_json() for r in small_graph("web")]
    return {
        "openapi": ("GET", f"{API}/openapi.json", {}),
        "show": ("GET", f"{API}/records/bank-ledger", {}),
        "verdict": ("GET", f"{API}/closures/{s.c1[:20]}/verdict", {}),
        "whatif": ("GET", f"{API}/closures/{s.c1}/whatif", {"params": {"max_size": 1}}),
        "history": ("GET", f"{API}/history", {"params": {"subject": RENT_JULY}}),
        "impact_source": ("GET", f"{API}/impact/source/bank-ledger", {}),
        "impact_claim": ("GET", f"{API}/impact/claim/{s.store.find('claim', source=s.store.resolve_id('bank-ledger'))[0].id}", {}),
        "query_list": ("GET", f"{API}/queries", {}),
        "query_named": ("POST", f"{API}/queries/why-verdict", {"json": {"params": {"closure": s.c1}}}),
        "query_cypher": ("POST", f"{API}/query", {"json": {"cypher": "MATCH (c:Claim) RETURN c.id AS id"}}),
        "export_prov": ("GET", f"{API}/export/prov", {"params": {"closure": s.c1}}),
        "act": ("POST", f"{API}/act", {"json": {"verdict": s.v2, "kind": "receipt", "subject": RENT_JULY,
                                                 "grant": s.ids["grant:receipt"], "policy": "rent-actions", "key": "web-1",
                                                 "at": "2026-07-22"}}),  # fmt: skip
        "submit_claims": ("POST", f"{API}/claims", {"json": claims}),
        "submit_lineage": ("POST", f"{API}/lineage", {"json": {"eventTime": "2026-07-01T00:00:00Z", "producer": "https://x.example/p",
                                                              "eventType": "COMPLETE", "run": {"runId": "01941d6e-0000-7000-8000-000000000001"},
                                                              "job": {"namespace": "n", "name": "j"}}}),  # fmt: skip
        "impact_run": ("GET", f"{API}/impact/run/01941d6e-0000-7000-8000-000000000001", {}),  # the run submit_lineage reported
        "reopen_run": ("POST", f"{API}/reopen/run", {"json": {"run": "01941d6e-0000-7000-8000-000000000001", "reason": "its job was misconfigured",
                                                               "at": "2026-07-22"}}),  # fmt: skip
        "project": ("POST", f"{API}/project", {"json": {"policy": "rent-delinquency@1", "as_of": "2026-07-21", "at": "2026-07-22"}}),
        "close": ("POST", f"{API}/close", {"json": {"gaf": None, "rules": "rent-paid", "subject": RENT_JULY, "as_of": "2026-07-21",
                                                     "supersedes": [s.c2], "at": "2026-07-22"}}),  # fmt: skip
        "decide": ("POST", f"{API}/decide", {"json": {"closure": s.c1, "decision": "allocate to July", "reason": "receipt memo"}}),
        "ratify": ("POST", f"{API}/ratify", {"json": {"candidate": candidate.id, "version": 1, "effective": "2026-08-01"}}),
        "reopen_appeal": ("POST", f"{API}/reopen/appeal", {"json": {"closure": s.c2, "grounds": "the receipt shows July",
                                                                     "as_of": "2026-07-21", "at": "2026-07-23"}}),  # fmt: skip
        "reopen_source": ("POST", f"{API}/reopen/source", {"json": {"source": "bank-ledger", "reason": "export corrupted",
                                                                     "invalid_from": "2026-07-01", "at": "2026-07-24"}}),  # fmt: skip
        "reopen_policy": ("POST", f"{API}/reopen/policy", {"json": {"old": "rent-delinquency@1", "at": "2026-07-25"}}),
    }


def test_every_route_the_openapi_document_lists_round_trips(served):
    document = served.call("GET", f"{API}/openapi.json", "reader").json()
    listed = {(op["operationId"], method.upper(), path) for path, ops in document["paths"].items() for method, op in ops.items()}
    assert listed == {(e.run.__name__, e.method, e.path) for e in ENDPOINTS}
    wanted = requests_for(served)
    assert {op for op, _, _ in listed} == set(wanted), "every route has a request in this test"
    declared = {op["operationId"]: op for ops in document["paths"].values() for op in ops.values()}
    answers: dict[str, httpx.Response] = {}
    for op, (method, path, kw) in wanted.items():
        if op == "close":
            kw["json"]["gaf"] = answers["project"].json()["gaf"]
        answers[op] = served.call(method, path, **kw)
        assert str(answers[op].status_code) in declared[op]["responses"], (op, answers[op].text)
        assert answers[op].status_code < 300, (op, answers[op].text)
    assert answers["export_prov"].headers["content-type"].startswith("text/turtle")
    # the writes are in the store, as the library reads them
    assert served.store.get(answers["close"].json()["closure"]).supersedes == [served.c2]
    action = answers["act"].json()["action"]
    assert served.store.get(action["id"]).authorised_by == served.ids["agent"]


def test_the_verdict_is_the_stored_verdict_and_replays_identically(served):
    got = served.call("GET", f"{API}/closures/{served.c1[:16]}/verdict", "reader").json()
    assert got == served.store.find("verdict", closure=served.c1)[0].to_json()
    replayed = closure.replay(served.store, served.c1)
    assert replayed.identical and (replayed.verdict or {})["label"] == got["label"] == "undetermined"


def test_impact_and_history_are_the_library_answers(served):
    source = served.store.resolve_id("bank-ledger", ("source",))
    got = served.call("GET", f"{API}/impact/source/{source[:14]}", "reader").json()
    direct = impact.source_invalidated(served.store, source, limits=impact.Limits(seconds=Settings().api_seconds)).to_dict()
    assert {k: v for k, v in got.items() if k != "limits"} == json.loads(json.dumps(direct))
    assert got["limits"]["hit"] is False
    history = served.call("GET", f"{API}/history", "reader", params={"subject": RENT_JULY}).json()
    assert history == json.loads(json.dumps(reopen.history(served.store, RENT_JULY)))
    assert [h["closure"] for h in history] == [served.c1, served.c2]


def test_the_prov_export_streams_what_the_library_exports(served):
    answer = served.call("GET", f"{API}/export/prov", "reader", params={"closure": served.c1, "format": "nt"})
    records = prov_export.lineage(served.store, served.c1)
    result, text = prov_export.export(records, "nt", None, held=prov_export.bundles(served.store, records))
    assert answer.text == text
    assert answer.headers["x-gaf-canonical-hash"] == result.canonical_hash


@pytest.mark.parametrize("form", ["json", "ndjson"])
def test_submitted_claims_are_stored_as_the_library_ingests_them(served, form):
    records = small_graph(form)
    body = ({"json": [r.to_json() for r in records]} if form == "json" else
            {"content": "".join(json.dumps(r.to_json()) + "\n" for r in records), "headers": {"content-type": "application/x-ndjson"}})
    answer = served.call("POST", f"{API}/claims", "writer", **body)
    assert answer.status_code == 201, answer.text
    assert sorted(answer.json()["written_ids"]) == sorted(r.id for r in records)
    assert all(served.store.get(r.id) == r for r in records)
    again = served.call("POST", f"{API}/claims", "writer", **body).json()
    assert again["written"] == 0 and again["existing"] == answer.json()["written"]


# ---------------------------------------------------------------------- refusals: typed, the right status, nothing written


def _bad_claims() -> list[dict[str, Any]]:
    items = [r.to_json() for r in small_graph("bad")]
    items[2]["observed_at"] = "not a time"
    return items


@pytest.mark.parametrize(
    ("name", "who", "method", "path", "kw", "status", "kind", "where"),
    [
        ("malformed JSON", "writer", "POST", "/claims", {"content": b"[{\"kind\": "}, 400, "InvalidValue", "body line 1 column 11"),
        ("not a list", "writer", "POST", "/claims", {"json": {"kind": "claim"}}, 400, "InvalidValue", "body"),
        ("a bad item", "writer", "POST", "/claims", {"json": _bad_claims()}, 422, "BatchRejected", None),
        ("a bad NDJSON line", "writer", "POST", "/claims",
         {"content": b'{"kind": "agent"}\n{oops\n', "headers": {"content-type": "application/x-ndjson"}}, 422, "BatchRejected", "body"),
        ("an unknown id", "writer", "POST", "/close",
         {"json": {"gaf": "gaf:00000000", "rules": "rent-paid", "subject": RENT_JULY, "as_of": "2026-07-21"}}, 404, "UnknownReference", None),
        ("an unknown policy", "writer", "POST", "/project", {"json": {"policy": "no-such-policy"}}, 404, "UnknownPolicy", None),
        ("a missing field", "writer", "POST", "/close", {"json": {"rules": "rent-paid"}}, 400, "InvalidValue", "gaf"),
        ("a bad time", "writer", "POST", "/project", {"json": {"policy": "rent-delinquency", "at": "yesterday"}}, 400, None, None),
        ("a write in a query", "reader", "POST", "/query", {"json": {"cypher": "MATCH (c:Claim) SET c.x = 1 RETURN c"}}, 400,
         "ReadOnlyViolation", None),
        ("an unknown query", "reader", "POST", "/queries/nope", {"json": {}}, 404, "UnknownReference", "name"),
        ("an unknown route", "reader", "GET", "/nope", {}, 404, "UnknownRoute", "/api/v1/nope"),
        ("a wrong method", "reader", "DELETE", "/history", {}, 405, "MethodNotAllowed", "/api/v1/history"),
        ("no verdict: a GAF is not a closure", "reader", "GET", "/closures/gaf:0000/verdict", {}, 400, "InvalidRecord", None),
    ],
)  # fmt: skip
def test_bad_input_is_a_typed_error_with_its_status_and_nothing_written(served, name, who, method, path, kw, status, kind, where):
    before = count(served.store)
    answer = served.call(method, API + path, who, **kw)
    assert answer.status_code == status, answer.text
    body = answer.json()
    assert set(body) >= {"error", "what", "where", "hint"} and "Traceback" not in answer.text
    assert kind is None or body["error"] == kind
    assert where is None or (body["where"] or "").startswith(where) or any((e.get("where") or "").startswith(where) for e in body.get("errors", []))
    assert count(served.store) == before


def test_a_bad_batch_names_each_bad_item(served):
    body = served.call("POST", f"{API}/claims", "writer", json=_bad_claims()).json()
    assert body["error"] == "BatchRejected" and [e["where"] for e in body["errors"]][0].startswith("item 2")


def test_bodies_over_the_ingest_limits_are_refused_as_they_arrive(store, tmp_path):
    s = serve_store(store, tmp_path, max_input_bytes=2000, max_record_bytes=600)
    before = count(store)
    whole = s.call("POST", f"{API}/claims", "writer", json=[r.to_json() for r in small_graph("big")] * 3)
    assert (whole.status_code, whole.json()["error"], whole.json()["where"]) == (413, "PayloadTooLarge", "body")
    line = json.dumps(small_graph("big")[2].to_json()) + " " * 700 + "\n"
    one = s.call("POST", f"{API}/claims", "writer", content=line.encode(), headers={"content-type": "application/x-ndjson"})
    assert (one.status_code, one.json()["where"]) == (413, "body line 1")
    other = s.call("POST", f"{API}/project", "writer", json={"policy": "rent-delinquency", "pad": "x" * 700})
    assert other.status_code == 413
    assert count(store) == before


def test_each_gaf_error_family_has_one_status():
    from gaf.errors import ActionRefused, ExitCode, InvalidRecord, NotAnAuthority, StoreUnavailable, UnknownPolicy

    assert [status_of(e("x")) for e in (InvalidRecord, InvalidValue, PayloadTooLarge, UnknownReference, UnknownPolicy, GafError,
                                        NotAuthenticated, AccessDenied, NotAnAuthority, ActionRefused, StoreUnavailable, StoreLocked)] \
        == [400, 400, 413, 404, 404, 409, 401, 403, 403, 403, 503, 503]  # fmt: skip
    assert status_of(BatchRejected([InvalidRecord("x")])) == 422
    assert NotAuthenticated.exit_code == AccessDenied.exit_code == ExitCode.DENIED


def test_an_unexpected_failure_is_a_500_without_a_traceback(served, monkeypatch):
    def broken(*_: Any) -> None:
        raise RuntimeError("secret internals")

    monkeypatch.setattr(reopen, "history", broken)
    answer = served.call("GET", f"{API}/history", "reader", params={"subject": RENT_JULY})
    assert answer.status_code == 500 and answer.json()["error"] == "InternalError"
    assert "secret internals" not in answer.text and "Traceback" not in answer.text


# ---------------------------------------------------------------------- tokens, roles, agents


ROUTES_BY_ROLE = {
    "reader": ("GET", "/history?subject=" + RENT_JULY),
    "writer": ("POST", "/project"),
    "authority": ("POST", "/decide"),
}


@pytest.mark.parametrize("who", ["reader", "writer", "authority"])
@pytest.mark.parametrize("needed", ["reader", "writer", "authority"])
def test_each_role_may_do_its_own_and_what_is_below_it_and_nothing_above(served, who, needed):
    method, path = ROUTES_BY_ROLE[needed]
    body = {"reader": None, "writer": {"policy": "rent-delinquency", "dry_run": True},
            "authority": {"closure": served.c1, "decision": "d", "reason": "r"}}[needed]
    if who == "writer" and needed == "writer":
        body = {"policy": "rent-delinquency", "dry_run": True}
    before = count(served.store)
    answer = served.call(method, API + path, who, json=body)
    allowed = list(Role).index(Role(who)) >= list(Role).index(Role(needed))
    if allowed:
        assert answer.status_code < 300, answer.text
    else:
        assert (answer.status_code, answer.json()["error"]) == (403, "AccessDenied")
        assert count(served.store) == before


@pytest.mark.parametrize("who", [None, "unknown", "expired", "revoked"])
def test_no_known_live_token_no_access(served, who):
    headers = {"authorization": "Bearer gaf_not-a-token"} if who == "unknown" else {}
    before = count(served.store)
    answer = served.call("POST", f"{API}/project", None if who in (None, "unknown") else who, headers=headers,
                         json={"policy": "rent-delinquency"})  # fmt: skip
    assert (answer.status_code, answer.json()["error"]) == (401, "NotAuthenticated")
    assert answer.headers["www-authenticate"] == "Bearer"
    assert who in (None, "unknown") or who in answer.json()["what"]
    assert count(served.store) == before


def test_a_revoked_token_stops_working_at_once(served):
    assert served.call("GET", f"{API}/queries", "reader").status_code == 200
    (reader,) = [t for t in served.tokens.all() if t.role is Role.reader]
    served.tokens.revoke(reader.id, at=T)
    assert served.call("GET", f"{API}/queries", "reader").status_code == 401


def test_records_written_through_a_token_carry_its_agent_and_no_other(served):
    clerk, tenant = agent_id(served.store, "registry-clerk"), agent_id(served.store, "tenant-b")
    before = count(served.store)
    refused = served.call("POST", f"{API}/project", "writer", json={"policy": "rent-delinquency", "reviewer": "tenant-b"})
    assert (refused.status_code, refused.json()["error"], refused.json()["where"]) == (403, "AccessDenied", "reviewer")
    assert tenant in refused.json()["what"] and count(served.store) == before
    done = served.call("POST", f"{API}/project", "writer", json={"policy": "rent-delinquency", "as_of": "2026-07-21"}).json()
    assert done["accepted"] and done["written"]
    assert {d.reviewer for d in served.store.find("decision") if d.decided_at == T} == {clerk}
    acted = served.call("POST", f"{API}/act", "authority", json={"verdict": served.v2, "kind": "request-allocation",
                        "subject": RENT_JULY, "grant": served.ids["grant:request-allocation"], "policy": "rent-actions",
                        "key": "k", "by": "registry-clerk"})  # fmt: skip
    assert acted.status_code == 403 and acted.json()["where"] == "by"


def test_tokens_are_kept_hashed_outside_the_graph_with_mode_0600(served, tmp_path):
    path = tmp_path / "tokens.json"
    text = path.read_text()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert not any(secret in text for secret in served.secrets.values())
    assert len(json.loads(text)["tokens"]) == 5
    rows = served.call("POST", f"{API}/query", "reader", json={"cypher": "MATCH (n) RETURN n.body AS body"}).json()["rows"]
    assert not any(t.sha256 in json.dumps(rows) for t in served.tokens.all())


def test_token_commands_make_list_and_revoke_printing_the_secret_once(tmp_path):
    env = {**os.environ, "GAF_STORE": str(tmp_path / "store.lbug"), "PYTHONPATH": str(ROOT), "COLUMNS": "200"}

    def gaf(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "gaf", *args], env=env, capture_output=True, text=True, cwd=tmp_path)

    assert gaf("ingest", str(ROOT / "examples" / "rent" / "claims.yaml")).returncode == 0
    made = gaf("token", "create", "--agent", "registry-clerk", "--role", "writer", "--expires", "30d", "--at", "2026-07-01", "--json")
    assert made.returncode == 0, made.stderr
    issued = json.loads(made.stdout)
    listed = json.loads(gaf("token", "list", "--at", "2026-07-02", "--json").stdout)
    assert [(t["id"], t["role"], t["state"], t["expires_at"]) for t in listed] == [(issued["id"], "writer", "active", "2026-07-31T00:00:00+00:00")]
    assert issued["secret"] not in json.dumps(listed) and issued["secret"] not in (tmp_path / "tokens.json").read_text()
    assert json.loads(gaf("token", "list", "--at", "2026-08-01", "--json").stdout)[0]["state"] == "expired"
    assert gaf("token", "revoke", issued["id"], "--json").returncode == 0
    assert json.loads(gaf("token", "list", "--at", "2026-07-02", "--json").stdout)[0]["state"] == "revoked"
    unknown = gaf("token", "revoke", "nope", "--json")
    assert unknown.returncode == 2 and json.loads(unknown.stdout)["error"] == "UnknownReference"
    bad = gaf("token", "create", "--agent", "registry-clerk", "--role", "writer", "--expires", "soon")
    assert bad.returncode == 2 and "Traceback" not in bad.stderr


# ---------------------------------------------------------------------- limits, headers, no-auth, a real server


def test_expensive_routes_say_when_a_limit_was_hit(served):
    rows = served.call("POST", f"{API}/query", "reader", json={"cypher": "MATCH (p:Proposition) RETURN p.id AS id", "max_rows": 3}).json()
    total = len(served.store.read("MATCH (p:Proposition) RETURN p.id AS id"))
    assert (rows["count"], rows["total"], rows["limits"]) == (3, total, {"rows": 3, "hit": True})
    walked = served.call("GET", f"{API}/impact/source/bank-ledger", "reader", params={"max_count": 2}).json()
    assert walked["limits"]["hit"] is True and walked["complete"] is False and walked["cut"]
    searched = served.call("GET", f"{API}/closures/{served.c1}/whatif", "reader", params={"seconds": 1e-9}).json()
    assert searched["limits"]["hit"] is True and searched["complete"] is False and searched["stopped"]


def test_the_api_row_limit_caps_what_a_caller_may_ask_for(store, tmp_path):
    s = serve_store(store, tmp_path, api_rows=2)
    rows = s.call("POST", f"{API}/query", "reader", json={"cypher": "MATCH (c:Claim) RETURN c.id AS id", "max_rows": 1000}).json()
    assert rows["limits"] == {"rows": 2, "hit": True} and len(rows["rows"]) == 2
    too_big = s.call("GET", f"{API}/export/prov", "reader", params={"closure": s.c1})
    assert (too_big.status_code, too_big.json()["error"]) == (413, "PayloadTooLarge")


@pytest.mark.parametrize(("method", "path", "who"), [("GET", "/queries", "reader"), ("GET", "/queries", None), ("GET", "/nope", "reader"),
                                                     ("GET", "/export/prov?subject=" + RENT_JULY, "reader")])  # fmt: skip
def test_every_response_carries_the_security_headers(served, method, path, who):
    answer = served.call(method, API + path, who)
    assert {k: answer.headers[k] for k in SECURITY_HEADERS} == SECURITY_HEADERS
    assert answer.headers["cache-control"] == "no-store"


def test_without_auth_every_route_is_open_and_a_write_names_its_agent(store, tmp_path):
    close_both(store)
    app = create_app(store, Settings(store=store.location), None, clock=lambda: T)
    assert request(app, "GET", f"{API}/queries").status_code == 200
    unnamed = request(app, "POST", f"{API}/project", json={"policy": "rent-delinquency"})
    assert (unnamed.status_code, unnamed.json()["where"]) == (400, "reviewer")
    named = request(app, "POST", f"{API}/project", json={"policy": "rent-delinquency", "reviewer": "registry-clerk", "as_of": "2026-07-21"})
    assert named.status_code == 201, named.text


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.5", "example.org"])
def test_no_auth_is_refused_off_this_machine(host, tmp_path):
    with pytest.raises(InvalidValue, match="--no-auth"):
        check_no_auth(host, True)
    check_no_auth(host, False)
    for local in ("127.0.0.1", "localhost"):
        check_no_auth(local, True)
    env = {**os.environ, "GAF_STORE": str(tmp_path / "store.lbug"), "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-m", "gaf", "serve", "--no-auth", "--host", host], env=env, capture_output=True, text=True,
                          timeout=60)  # fmt: skip
    assert done.returncode == 2 and "--no-auth" in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "store.lbug").exists()
    bad_port = subprocess.run([sys.executable, "-m", "gaf", "serve", "--port", "70000", "--json"], env=env, capture_output=True,
                              text=True, timeout=60)  # fmt: skip
    assert bad_port.returncode == 2 and "Traceback" not in bad_port.stderr


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_a_real_server_answers_over_http(served):
    import uvicorn

    port = _free_port()
    server = uvicorn.Server(uvicorn.Config(served.app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 20
        while not server.started and time.monotonic() < deadline:
            time.sleep(0.05)
        assert server.started
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", headers={"authorization": f"Bearer {served.secrets['reader']}"}) as client:
            got = client.get(f"{API}/closures/{served.c2}/verdict")
            assert got.status_code == 200 and got.json() == served.store.find("verdict", closure=served.c2)[0].to_json()
            assert client.get(f"{API}/export/prov", params={"closure": served.c2}).text.startswith("@prefix")
            assert client.get(f"{API}/queries", headers={"authorization": ""}).status_code == 401
    finally:
        server.should_exit = True
        thread.join(timeout=20)
    assert not thread.is_alive()


def test_while_the_server_holds_the_embedded_store_cli_writes_are_refused_and_reads_answer(ladybug_store, tmp_path):
    # The server opens the store for writing and keeps it for its life (gaf.web.serve), as this test process does.
    close_both(ladybug_store)
    env = {**os.environ, "GAF_STORE": ladybug_store.location, "PYTHONPATH": str(ROOT)}
    before = count(ladybug_store)

    def gaf(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "gaf", *args, "--json"], env=env, capture_output=True, text=True, timeout=120)

    write = gaf("ingest", str(ROOT / "examples" / "rent" / "claim-e.yaml"))
    assert write.returncode == 3 and json.loads(write.stdout)["error"] == "StoreLocked"
    read = gaf("stats")
    assert read.returncode == 0 and sum(json.loads(read.stdout)["counts"].values()) == before
    assert count(ladybug_store) == before


# ---------------------------------------------------------------------- the documentation


def test_docs_web_md_names_every_route_and_its_errors_statuses_are_the_apps():
    text = (ROOT / "docs" / "web.md").read_text(encoding="utf-8")
    missing = [f"{e.method} {e.path}" for e in ENDPOINTS if f"{e.method} {e.path}" not in text]
    assert not missing, f"docs/web.md does not describe {missing}"
    import re

    import gaf.errors as errors

    for status, kind in re.findall(r"^\| (\d{3}) \| `(\w+)`", text, re.M):
        cls = getattr(errors, kind)
        error = cls([errors.InvalidRecord("x")]) if cls is errors.BatchRejected else cls("x")
        assert status_of(error) == int(status), kind
