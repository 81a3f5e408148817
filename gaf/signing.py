"""Signed closures: Ed25519 signatures with a key the caller passes in, checked by ``gaf verify``.

A content id shows that a closure did not change since it was made; it does not
show who made it, and anyone with write access to the database can make a new
one. Given a private key (``close(..., signing_key=…)``; the CLI reads it from
GAF_SIGNING_KEY), every closure is signed as it is closed; ``verify`` checks each
signature, and given the public key (``verify(..., verify_key=…)``; the CLI reads
GAF_VERIFY_KEY) it also refuses closures that are unsigned or signed by another key.
Nothing here reads the environment: ``private_key`` and ``public_key`` parse the text.

A key is 32 raw bytes written as 64 hex digits or in base64 (an Ed25519 private
key is its seed). The signature covers the closure's canonical body without the
signature — its identity and its closing time — and is kept in the closure's
``signature`` field, which is not part of its id.
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import TYPE_CHECKING

from gaf.canonical import canonical_json
from gaf.errors import SigningKeyError
from gaf.records import Closure, Signature

if TYPE_CHECKING:  # cryptography is optional (gaf[signing]): imported only when a key is used
    from cryptography.hazmat.primitives.asymmetric import ed25519


def _raw_key(text: str, variable: str) -> bytes | None:
    text = text.strip()
    if not text:
        return None
    try:
        raw = bytes.fromhex(text) if len(text) == 64 else base64.b64decode(text, validate=True)
    except (ValueError, binascii.Error):
        raw = b""
    if len(raw) != 32:
        raise SigningKeyError(f"{variable} is not a 32-byte Ed25519 key", hint="write the 32 raw bytes as 64 hex digits or in base64")
    return raw


def _ed25519() -> tuple[type[ed25519.Ed25519PrivateKey], type[ed25519.Ed25519PublicKey]]:
    """The Ed25519 key classes, private and public."""
    try:
        from cryptography.hazmat.primitives.asymmetric import ed25519
    except ImportError:
        raise SigningKeyError("signing needs the cryptography package", hint="pip install 'gaf[signing]'") from None
    return ed25519.Ed25519PrivateKey, ed25519.Ed25519PublicKey


def private_key(text: str, *, variable: str = "GAF_SIGNING_KEY") -> ed25519.Ed25519PrivateKey | None:
    """The private key written in ``text`` (hex or base64 seed), or None when it is empty
    (closures are then not signed); ``variable`` names where the text came from."""
    raw = _raw_key(text, variable)
    if not raw:
        return None
    private, _ = _ed25519()  # only now: unsigned closures need no cryptography
    return private.from_private_bytes(raw)


def public_key(text: str, *, variable: str = "GAF_VERIFY_KEY") -> str | None:
    """The public key written in ``text``, as hex, or None when it is empty."""
    raw = _raw_key(text, variable)
    return raw.hex() if raw else None


def public_key_of(private: ed25519.Ed25519PrivateKey) -> str:
    from cryptography.hazmat.primitives import serialization

    return private.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw).hex()


def signed_bytes(closure: Closure) -> bytes:
    """What a signature covers: the canonical body without the signature."""
    body = json.loads(closure.body)
    body.pop("signature", None)
    return canonical_json(body)


def sign(closure: Closure, private: ed25519.Ed25519PrivateKey) -> Closure:
    """The same closure (same id) carrying the signature of ``private``."""
    signature = Signature(public_key=public_key_of(private), value=private.sign(signed_bytes(closure)).hex())
    return Closure.model_validate(closure.model_dump() | {"signature": signature.model_dump()})


def signature_problem(closure: Closure, expected_key: str | None) -> str | None:
    """What is wrong with a closure's signature, or None if it is sound (or none is required)."""
    sig = closure.signature
    if sig is None:
        return "is not signed, but the verify key (GAF_VERIFY_KEY) asks for signed closures" if expected_key else None
    if expected_key and sig.public_key != expected_key:
        return f"is signed by key {sig.public_key[:16]}…, not by the verify key {expected_key[:16]}…"
    _, public = _ed25519()
    from cryptography.exceptions import InvalidSignature

    try:
        public.from_public_bytes(bytes.fromhex(sig.public_key)).verify(bytes.fromhex(sig.value), signed_bytes(closure))
    except (InvalidSignature, ValueError):
        return "its signature does not match its content: the closure or its signature was altered"
    return None
