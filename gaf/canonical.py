"""Canonical JSON and content ids: the one place where identity is computed.

Every record id in gaf is ``kind:`` followed by the sha256 of the RFC 8785
(JSON Canonicalization Scheme) serialisation of the record's identity fields. One
function computes it, so the same content always gets the same id on every store
and in every process, and any change to the content changes the id.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Iterable
from decimal import Decimal
from typing import Any

import rfc8785

from gaf.errors import GafError, InvalidRecord

#: What the closure records as its canonicalisation rules.
CANONICALISATION = "RFC8785-JCS+sha256"

ID_PATTERN = re.compile(r"^([a-z][a-z_]*):([0-9a-f]{64})$")


#: The largest integer a JSON number (an IEEE double) carries exactly.
SAFE_INT = 2**53 - 1
_fast_encode = json.JSONEncoder(
    ensure_ascii=False, allow_nan=False, sort_keys=True, separators=(",", ":")
).encode


def canonical_json(value: Any) -> bytes:
    """The RFC 8785 canonical bytes of a JSON value (sorted keys, ECMAScript numbers).

    Most records hold only strings, small integers, booleans and nulls; for those
    the standard library's sorted, compact, non-ASCII-escaping encoder already
    writes exactly the RFC 8785 bytes, four times faster than the general
    implementation; so does it for floats Python and ECMAScript write alike, and for
    whole-number floats once written as integers (``_spelled``). Anything else
    (floats with an exponent, integers past 2**53, keys outside the Basic Multilingual
    Plane, where UTF-16 and code-point order differ) goes through ``rfc8785``. A property
    test pins the paths to the same bytes.
    """
    spelled = _spelled(value)
    if spelled is not _NOT:
        return _fast_encode(spelled).encode("utf-8")
    try:
        return rfc8785.dumps(_decimals_spelled(value))
    except rfc8785.IntegerDomainError as exc:
        raise InvalidRecord(
            f"value cannot be canonicalised as JSON: {exc}",
            hint=f"JSON integers are exact only within ±{SAFE_INT:,}; write a larger number as a string",
        ) from exc
    except rfc8785.CanonicalizationError as exc:
        raise InvalidRecord(f"value cannot be canonicalised as JSON: {exc}") from exc


#: The JSON spelling of a decimal that no double carries exactly: ``{"$decimal": "…"}``.
DECIMAL_TAG = "$decimal"


def decimal_json(value: Decimal) -> float | dict[str, str]:
    """A decimal in JSON: a JSON number when a double carries it exactly in its shortest form —
    the very bytes a float of that value always had, so no id written before changes — else
    the tagged string ``{"$decimal": "…"}``."""
    near = double_of(value)
    return near if near is not None else {DECIMAL_TAG: str(value)}


def double_of(value: Decimal) -> float | None:
    """The double that carries a decimal exactly in its shortest form, or None if none does."""
    near = float(value)
    return near if Decimal(repr(near)) == value else None


def _decimals_spelled(value: Any) -> Any:
    """``value`` with every Decimal in its JSON spelling (``decimal_json``)."""
    if isinstance(value, Decimal):
        return decimal_json(value)
    if isinstance(value, dict):
        return {k: _decimals_spelled(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_decimals_spelled(v) for v in value]
    return value


#: Floats that are not whole numbers, between these magnitudes, are written alike by Python's
#: ``repr`` and ECMAScript (shortest digits, no exponent): the encoders agree on them.
_AS_WRITTEN, _EXPONENT_FROM = 1e-4, 1e16
#: ``_spelled``'s answer for a value the standard library's encoder would not write as RFC 8785 does.
_NOT: Any = object()


def _spelled(value: Any) -> Any:
    """``value`` as the standard library's encoder writes it in RFC 8785's bytes, or ``_NOT``.

    Strings within the Basic Multilingual Plane, integers within ±2**53, booleans, nulls and
    floats Python and ECMAScript write alike are kept as they are; a whole-number float within
    ±2**53 becomes the integer ECMAScript writes (``1.0`` is ``1``), in a copy of only the
    containers holding one. Anything else (a float with an exponent, a larger integer, a
    Decimal, a key beyond the BMP, where UTF-16 and code-point order differ) is ``_NOT``: the
    general path writes those. (Written out by type: it runs over every record gaf builds or reads.)"""
    kind = type(value)
    if kind is str:
        return value if value.isascii() or max(value) < "\ud800" else _NOT
    # boilerplate: the dict and list branches below walk their items alike, written out apart rather than through a
    # shared helper: this runs for every value of every record, and a call per item is what the fast path saves.
    if kind is dict:
        out = None
        for k, v in value.items():
            if type(k) is not str or not (k.isascii() or max(k) < "\ud800"):
                return _spelled_subclass(value)
            if type(v) is str:
                if not (v.isascii() or max(v) < "\ud800"):
                    return _NOT
                continue
            if v is None:
                continue
            spelled = _spelled(v)
            if spelled is _NOT:
                return _NOT
            if spelled is not v:
                if out is None:
                    out = dict(value)
                out[k] = spelled
        return value if out is None else out
    if kind is list:
        items = None
        for i, v in enumerate(value):
            if type(v) is str:
                if not (v.isascii() or max(v) < "\ud800"):
                    return _NOT
                continue
            spelled = _spelled(v)
            if spelled is _NOT:
                return _NOT
            if spelled is not v:
                if items is None:
                    items = list(value)
                items[i] = spelled
        return value if items is None else items
    if value is None or kind is bool:
        return value
    if kind is int:
        return value if -SAFE_INT <= value <= SAFE_INT else _NOT
    if kind is float:
        if value.is_integer():
            return int(value) if -SAFE_INT <= value <= SAFE_INT else _NOT
        return value if _AS_WRITTEN <= abs(value) < _EXPONENT_FROM else _NOT
    return _spelled_subclass(value)


def _spelled_subclass(value: Any) -> Any:
    """``_spelled`` for values of subclasses of the JSON types (a str enum, an int flag, a str key)."""
    if isinstance(value, bool):
        return bool(value)
    if isinstance(value, str):
        return value if _bmp(value) else _NOT  # the encoder writes a str subclass's own text
    if isinstance(value, int):
        return int(value) if -SAFE_INT <= value <= SAFE_INT else _NOT
    if isinstance(value, float):
        return _spelled(float(value))
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            if not (isinstance(k, str) and _bmp(k)) or (spelled := _spelled(v)) is _NOT:
                return _NOT
            out[k] = spelled
        return out
    if isinstance(value, list):
        items = [_spelled(v) for v in value]
        return _NOT if any(i is _NOT for i in items) else items
    return _NOT


def _bmp(text: str) -> bool:
    """No lone or paired surrogates: the encoders agree on sorting and escaping."""
    return text.isascii() or max(text) < "\ud800"


def digest(data: bytes) -> str:
    """Hex sha256 of bytes."""
    return hashlib.sha256(data).hexdigest()


def content_id(kind: str, identity: Any) -> str:
    """The id of a record of ``kind`` whose identity fields are ``identity``."""
    return f"{kind}:{digest(canonical_json(identity))}"


def kind_of(record_id: str) -> str:
    """The kind prefix of an id, refusing strings that are not gaf ids."""
    match = ID_PATTERN.match(record_id) if isinstance(record_id, str) else None
    if match is None:
        raise InvalidRecordId(record_id)
    return match.group(1)


def kind_prefix(record_id: str) -> str:
    """The kind prefix of an id known to be one (read back from the store): no check, no regex."""
    return record_id.partition(":")[0]


def short_id(record_id: str, digits: int = 12) -> str:
    """An id cut to its kind and first hex digits, ``kind:3f2a9c01be44…``, for a message that
    names one or two records. Output that lists records prints ``short_ids`` of all it lists."""
    kind, _, digest = record_id.partition(":")
    return f"{kind}:{digest[:digits]}…"


#: The fewest hex digits a printed id prefix has: 48 bits, so a prefix people copy from
#: docs or a terminal keeps naming its record as a store grows (git's seven drift).
PREFIX_DIGITS = 12


def short_ids(record_ids: Iterable[str], digits: int | None = None) -> dict[str, str]:
    """Each id as output for people prints it: its kind and the fewest hex digits, never under
    ``digits`` (``PREFIX_DIGITS``), that no other id of its kind among ``record_ids`` starts with —
    ``closure:8cceb8f8d011…``, longer where two of them share their first twelve — so every
    prefix printed, pasted back into a command, names the one record it stood for.

    Unique among the ids given, not the whole store: asking the store per id is a scan on
    LadybugDB (no index answers STARTS WITH), too slow for a table of a thousand rows. A
    caller that can, passes the neighbours too (``gaf list`` passes the next id of the kind,
    so its prefixes are unique in the store). Two stored ids of one kind sharing 48 bits is
    about n²/2⁴⁹ likely (under 1 in 500 at a million), and then the prefix is refused as
    ambiguous listing both (``GafStore.resolve_id``), never taken for the wrong record.
    An id that needs all 64 digits is printed whole."""
    ordered = sorted(set(record_ids))
    shared = [0] * len(ordered)  # hex digits an id shares with its nearest neighbour of its kind
    for i in range(1, len(ordered)):
        before, after = ordered[i - 1], ordered[i]
        common = len(os.path.commonprefix([before, after]))
        colon = after.index(":") + 1
        if common >= colon:  # one kind (its ids sort together): they share "kind:" and common - colon digits
            shared[i - 1] = max(shared[i - 1], common - colon)
            shared[i] = max(shared[i], common - colon)
    shown = {}
    for rid, n in zip(ordered, shared):
        kind, _, hexes = rid.partition(":")
        length = max(digits or PREFIX_DIGITS, n + 1)
        shown[rid] = rid if length >= len(hexes) else f"{kind}:{hexes[:length]}…"
    return shown


class InvalidRecordId(InvalidRecord):
    """A string used as an id that is not ``kind:<64 hex digits>``."""

    def __init__(self, value: object):
        super().__init__(
            f"not a gaf id: {value!r}",
            hint="ids look like 'claim:' followed by 64 lowercase hex digits",
        )


__all__ = ["CANONICALISATION", "canonical_json", "content_id", "digest", "kind_of", "GafError"]
