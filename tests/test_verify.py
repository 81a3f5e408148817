"""Tamper evidence: verify recomputes every id and link and names what was edited behind gaf's back."""

from __future__ import annotations

import base64
import json

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from gaf.records import Closure, SubjectKey
from gaf.signing import SigningKeyError, private_key, public_key
from gaf.verify import verify
from tests.rentcase import close_both, tamper


def test_an_untouched_store_verifies(store):
    close_both(store)
    report = verify(store)
    nodes = store.read("MATCH (n) WHERE n.id IS NOT NULL RETURN count(n) AS n")[0]["n"]  # every record's node, counted apart from gaf
    assert report.ok and report.checked == nodes
    # every record, the version stamp and the subject keys (records about the store) logged once
    assert report.logged == sum(store.counts().values()) + 1 + store.count(SubjectKey) and store.count(SubjectKey) > 0


def test_a_body_edited_through_cypher_is_named(store):
    _, c2 = close_both(store)
    tamper(store, c2.verdict.id, label="unpaid")
    (d,) = verify(store).discrepancies
    assert d.id == c2.verdict.id and "does not match its id" in d.problem


def test_a_property_edited_apart_from_the_body_is_named(store):
    c1, _ = close_both(store)
    store._write(lambda tx: tx.run("MATCH (n:Closure {id: $id}) SET n.subject = 'rent:someone-else'", {"id": c1.closure.id}))
    (d,) = verify(store).discrepancies
    assert d.id == c1.closure.id and "property subject" in d.problem


def test_a_relationship_removed_behind_gafs_back_is_named(store):
    c1, c2 = close_both(store)
    store._write(lambda tx: tx.run("MATCH (:Closure {id: $id})-[r:SUPERSEDES]->(:Closure) DELETE r", {"id": c2.closure.id}))
    (d,) = verify(store).discrepancies
    assert d.id == c2.closure.id and f"SUPERSEDES to {c1.closure.id} is missing" in d.problem


# ---------------------------------------------------------------------- signed closures


def _text(raw: bytes, *, b64: bool = False) -> str:
    """A key as people write it: 64 hex digits, or base64."""
    return base64.b64encode(raw).decode() if b64 else raw.hex()


def _new_key() -> tuple[bytes, bytes]:
    """A fresh Ed25519 key pair: (seed, public key), raw bytes; never a key written in the repository."""
    private = Ed25519PrivateKey.generate()
    seed = private.private_bytes(serialization.Encoding.Raw, serialization.PrivateFormat.Raw, serialization.NoEncryption())
    return seed, private.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def test_a_signed_closure_keeps_its_id_and_its_signature_verifies(store):
    seed, public = _new_key()
    c1, c2 = close_both(store, signing_key=private_key(_text(seed, b64=True)))
    for closed in (c1, c2):
        stored = store.get(closed.closure.id)
        assert stored.signature is not None and stored.signature.public_key == public.hex()
        unsigned = Closure.model_validate(stored.model_dump() | {"signature": None})
        assert unsigned.id == stored.id and b"signature" not in unsigned.body
    report = verify(store, verify_key=public_key(_text(public)))
    assert report.ok and report.checked == store.read("MATCH (n) WHERE n.id IS NOT NULL RETURN count(n) AS n")[0]["n"]


def test_a_signed_closure_edited_outside_its_id_is_named_by_its_signature(store):
    seed, public = _new_key()
    c1, _ = close_both(store, signing_key=private_key(_text(seed)))
    # closed_at is not part of the id: moved in the body and on the node alike, only the signature tells.
    moved = "2026-07-01T00:00:00.000Z"
    tamper(store, c1.closure.id, closed_at=moved)
    store._write(lambda tx: tx.run("MATCH (n:Closure {id: $id}) SET n.closed_at = $t", {"id": c1.closure.id, "t": moved}))
    (d,) = verify(store).discrepancies
    assert d.id == c1.closure.id and "signature does not match its content" in d.problem


def test_with_a_verify_key_closures_signed_by_another_key_are_named(store):
    _, public = _new_key()
    other_seed, _ = _new_key()
    c1 = close_both(store, signing_key=private_key(_text(other_seed)))[0]
    problems = {d.id: d.problem for d in verify(store, verify_key=public_key(_text(public))).discrepancies}
    assert "not by the verify key" in problems[c1.closure.id]
    with pytest.raises(SigningKeyError, match="GAF_VERIFY_KEY is not a 32-byte Ed25519 key"):
        public_key("not a key")


def test_with_a_verify_key_unsigned_closures_are_named(store):
    c1, c2 = close_both(store)
    problems = {d.id: d.problem for d in verify(store, verify_key=public_key(_text(_new_key()[1], b64=True))).discrepancies}
    assert set(problems) == {c1.closure.id, c2.closure.id} and "is not signed" in problems[c1.closure.id]


def test_the_cli_signs_with_GAF_SIGNING_KEY_and_verify_requires_GAF_VERIFY_KEY(tmp_path, monkeypatch):
    # The library takes keys as arguments; the CLI reads them from the environment (gaf.settings).
    from typer.testing import CliRunner

    from gaf.cli import app
    from tests.conftest import RENT

    runner, target = CliRunner(), str(tmp_path / "signed.lbug")
    seed, public = _new_key()
    monkeypatch.setenv("GAF_SIGNING_KEY", _text(seed))
    runner.invoke(app, ["ingest", str(RENT / "claims.yaml"), "--store", target])
    runner.invoke(app, ["policy", "add", str(RENT / "policy.yaml"), "--store", target])
    runner.invoke(app, ["rules", "add", str(RENT / "verdict-rules.yaml"), "--store", target])
    projected = runner.invoke(app, ["project", "rent-delinquency", "--reviewer", "registry-clerk", "--as-of", "2026-07-15",
                                    "--store", target, "--json"])  # fmt: skip
    closed = runner.invoke(app, ["close", json.loads(projected.stdout)["gaf"], "--rules", "rent-paid@1", "--subject",
                                 "rent:lease-17/2026-07", "--as-of", "2026-07-15", "--store", target, "--json"])  # fmt: skip
    closure_id = json.loads(closed.stdout)["closure"]
    shown = json.loads(runner.invoke(app, ["show", closure_id, "--store", target, "--json"]).stdout)
    assert shown["signature"]["public_key"] == public.hex()
    monkeypatch.delenv("GAF_SIGNING_KEY")
    monkeypatch.setenv("GAF_VERIFY_KEY", _text(public, b64=True))
    assert runner.invoke(app, ["verify", "--store", target]).exit_code == 0
    monkeypatch.setenv("GAF_VERIFY_KEY", _text(_new_key()[1]))
    refused = runner.invoke(app, ["verify", "--store", target, "--json"])
    assert refused.exit_code == 4 and "not by the verify key" in refused.stdout
