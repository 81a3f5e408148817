"""Content ids: RFC 8785 canonical JSON, one hash function, stable everywhere."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys

import pytest
import rfc8785
from hypothesis import given, settings
from hypothesis import strategies as st

from gaf.canonical import canonical_json, content_id, kind_of
from gaf.errors import InvalidRecord

# RFC 8785 §3.2.2 — numbers, string escapes and literals.
RFC8785_VALUES_IN = (
    '{"numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],'
    ' "string": "\\u20ac$\\u000F\\u000aA\'\\u0042\\u0022\\u005c\\\\\\"\\/",'
    ' "literals": [null, true, false]}'
)
RFC8785_VALUES_OUT = (
    '{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],'
    '"string":"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}'
)

# RFC 8785 §3.2.3 — property names sorted by UTF-16 code units.
RFC8785_SORTING_IN = (
    '{"\\u20ac": "Euro Sign", "\\r": "Carriage Return", "\\ufb33": "Hebrew Letter Dalet With Dagesh",'
    ' "1": "One", "\\ud83d\\ude00": "Emoji: Grinning Face", "\\u0080": "Control",'
    ' "\\u00f6": "Latin Small Letter O With Diaeresis"}'
)
RFC8785_SORTING_KEYS = ["\r", "1", "\u0080", "\u00f6", "\u20ac", "\U0001f600", "\ufb33"]


def test_rfc8785_number_and_string_vector():
    assert canonical_json(json.loads(RFC8785_VALUES_IN)) == RFC8785_VALUES_OUT.encode("utf-8")


def test_rfc8785_sorting_vector_orders_keys_by_utf16_code_units():
    out = json.loads(canonical_json(json.loads(RFC8785_SORTING_IN)))
    assert list(out) == RFC8785_SORTING_KEYS


def test_plain_values_take_the_fast_path_and_match_rfc8785():
    value = {"b": [1, "two", None, True], "a": {"é": "€", "z": -(2**53) + 1}}
    assert canonical_json(value) == rfc8785.dumps(value)
    assert canonical_json(value) == b'{"a":{"z":-9007199254740991,"\xc3\xa9":"\xe2\x82\xac"},"b":[1,"two",null,true]}'


def test_content_id_is_kind_and_sha256_of_canonical_json():
    value = {"b": 1, "a": "x"}
    expected = hashlib.sha256(b'{"a":"x","b":1}').hexdigest()
    assert content_id("claim", value) == f"claim:{expected}"


def test_content_id_ignores_key_order():
    assert content_id("claim", {"a": 1, "b": [1, 2]}) == content_id("claim", {"b": [1, 2], "a": 1})


def test_non_finite_numbers_are_refused():
    try:
        canonical_json({"x": float("nan")})
    except InvalidRecord as exc:
        assert "canonicalised" in exc.what
    else:
        raise AssertionError("NaN was canonicalised")


def test_kind_of_refuses_strings_that_are_not_ids():
    assert kind_of("claim:" + "a" * 64) == "claim"
    for bad in ("claim:abc", "Claim:" + "a" * 64, "claim:" + "A" * 64, 7):
        try:
            kind_of(bad)
        except InvalidRecord:
            continue
        raise AssertionError(f"{bad!r} accepted as an id")


def test_ids_are_the_same_in_a_fresh_process():
    """No hash seed, dict order or process state may leak into an id."""
    code = "from gaf.canonical import content_id; print(content_id('claim', {'b': [1, 'é', None], 'a': 2.5}))"
    other = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert other == content_id("claim", {"a": 2.5, "b": [1, "é", None]})


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**60), 2**60) | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4),
    max_leaves=20,
)


@settings(max_examples=400, deadline=None)
@given(json_values)
def test_canonical_json_always_equals_the_reference_implementation(value):
    try:
        expected = rfc8785.dumps(value)
    except rfc8785.CanonicalizationError:
        return  # e.g. integers past 2**53 or lone surrogates: refused by both paths
    assert canonical_json(value) == expected


def test_an_integer_json_cannot_hold_exactly_is_refused_saying_how_to_write_it():
    with pytest.raises(InvalidRecord) as refused:
        canonical_json({"amount": 2**53 + 7})
    assert "exceeds safe integer domain" in refused.value.message and "as a string" in refused.value.hint
    assert canonical_json({"amount": 2**53 - 1}) == b'{"amount":9007199254740991}'


#: Floats at the edges of where Python's repr and ECMAScript write numbers alike.
EDGE_FLOATS = [1.0, -0.0, 0.5, 1e-4, 9.99e-5, 1e16, 1e16 - 2, 2.0**53, 2.0**53 - 1, 2.0**53 + 2, 123456789012345.6,
               1e15 + 0.5, 5e-324, 1e21, 1e-7, 0.1 + 0.2, -1.0, -2.5e-4]  # fmt: skip


def test_floats_written_alike_and_whole_floats_take_the_fast_path_and_match_rfc8785():
    for value in [*EDGE_FLOATS, EDGE_FLOATS, {"strength": 1.0, "low": -1.0, "high": 0.25, "n": [2.0, 3]}]:
        assert canonical_json(value) == rfc8785.dumps(value), value


@settings(max_examples=400, deadline=None)
@given(st.lists(st.floats(-1e17, 1e17) | st.integers(-(2**54), 2**54).map(float) | st.sampled_from(EDGE_FLOATS), max_size=6))
def test_floats_of_every_magnitude_canonicalise_as_the_reference_does(values):
    assert canonical_json(values) == rfc8785.dumps(values)
    assert canonical_json({"v": values, "s": "é"}) == rfc8785.dumps({"v": values, "s": "é"})
