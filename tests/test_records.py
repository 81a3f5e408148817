"""Records: frozen values whose ids are hashes of their identity fields."""

from __future__ import annotations

import contextlib
import json
from datetime import datetime, timedelta, timezone
from decimal import Decimal

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from gaf.errors import IdMismatch, InvalidRecord, PayloadTooLarge, UnknownKind
from gaf.records import GAF, RECORD_TYPES, Claim, Proposition, Statement, json_schema, limits, parse_body, parse_record
from gaf.types import format_instant, to_instant
from tests import worlds
from tests.conftest import NOW, small_graph


def test_every_spec_record_kind_exists():
    spec = {
        "source", "agent", "claim", "proposition", "projection", "evaluation", "derivation", "fact",
        "gaf", "closure", "verdict", "action", "reopen", "case_decision", "policy_candidate",
        "policy", "policy_exception", "waiver",
    }  # fmt: skip
    assert spec <= set(RECORD_TYPES)


def test_recorded_at_is_not_part_of_a_claims_identity():
    claim = small_graph()[2]
    later = claim.model_copy(update={"recorded_at": NOW.replace(year=2027)})
    again = Claim.model_validate({**claim.model_dump(exclude={"id"}), "recorded_at": "2027-01-01T00:00:00Z"})
    assert again.id == claim.id
    assert later.recorded_at != claim.recorded_at


def test_changing_any_identity_field_changes_the_id():
    claim = small_graph()[2]
    data = claim.model_dump(exclude={"id"})
    data["observed_at"] = "2026-07-05T10:00:00.001Z"
    assert Claim.model_validate(data).id != claim.id


def test_records_are_frozen():
    claim = small_graph()[2]
    with pytest.raises(ValidationError):
        claim.scope = "changed"  # type: ignore[misc]


def test_a_stated_id_that_does_not_match_the_content_is_refused():
    claim = small_graph()[2]
    tampered = {**json.loads(claim.body), "id": claim.id, "scope": "tampered"}
    with pytest.raises(IdMismatch) as info:
        parse_record(tampered, where="claims.jsonl:7")
    assert info.value.where == "claims.jsonl:7"
    assert claim.id in info.value.what


def test_the_stored_body_reads_back_to_the_same_record():
    for record in small_graph():
        assert parse_body(record.body, record.id) == record


def _read_fresh(body: bytes, record_id: str) -> object:
    """The oracle: the body parsed as if never read before (``parse_record``, no memo), or the error's type."""
    try:
        return parse_record(json.loads(body) | {"id": record_id}, where=record_id)
    except (IdMismatch, PayloadTooLarge, InvalidRecord) as exc:
        return type(exc)


@settings(max_examples=60)
@given(st.lists(st.tuples(st.integers(0, 3), st.sampled_from(["as stored", "a byte changed", "under a small limit"])),
                min_size=1, max_size=12))  # fmt: skip
def test_reading_a_body_again_gives_what_reading_it_afresh_gives(reads):
    # parse_body keeps what it read (a server reads the same records page after page); whatever
    # was read before, in whatever order, each read answers as a first read would: a body changed
    # in a byte is refused under the id of the original, and a smaller limit still refuses.
    records = [*small_graph("memo"), *small_graph("memo2")[2:]]
    for index, how in reads:
        record = records[index % len(records)]
        body = record.body
        if how == "a byte changed":
            data = json.loads(body)
            field = next(k for k in sorted(data) if k != "kind" and isinstance(data[k], str) and ":" not in data[k][:12])
            body = body.replace(json.dumps(data[field]).encode(), json.dumps(data[field][:-1] + "~").encode(), 1)
            assert body != record.body and len(body) == len(record.body)
        with limits(max_record_bytes=40) if how == "under a small limit" else contextlib.nullcontext():
            expected = _read_fresh(body, record.id)
            try:
                got: object = parse_body(body, record.id)
            except (IdMismatch, PayloadTooLarge, InvalidRecord) as exc:
                got = type(exc)
        assert got == expected, (index, how)
        if how == "as stored":
            assert expected == record
        else:  # refused: the content no longer hashes to the id (or is no longer valid), or is over the limit
            assert expected in ((IdMismatch, InvalidRecord) if how == "a byte changed" else (PayloadTooLarge,))



@given(worlds.statements(), st.booleans())
# Found by the random profile: a double past 2**53 whose shortest form (4.59046478593931e16) is not
# its exact value (…104) was written as 45904647859393100, then refused when read afresh.
@example({"subject": ":", "predicate": ":", "value": 4.59046478593931e16, "polarity": "affirmed"}, False)
def test_a_body_read_back_is_the_record_whether_its_bytes_are_checked_as_stored_or_afresh(doc, altered):
    """A proposition's stored bytes identify it (its id is their hash), so reading them back
    (``parse_body``) checks them as stored, without dumping the record again; the oracle is the
    same body parsed afresh (``parse_record``), which re-canonicalises it. Equal records, equal
    bodies; and a body altered in one byte is refused alike, under the original's id."""
    try:
        statement = Statement.model_validate(doc)
    except ValidationError:
        return
    record = statement.proposition()
    body = record.stored_body
    if altered:
        body = body.replace(b'"subject":"', b'"subject":"~', 1)
    fresh = _read_fresh(body, record.id)
    try:
        got: object = parse_body(body, record.id, keep=False)
    except (IdMismatch, PayloadTooLarge, InvalidRecord) as exc:
        got = type(exc)
    if altered:
        assert got == fresh and got in (IdMismatch, InvalidRecord)
    else:
        assert got == fresh == record and got.body == fresh.body == record.body  # type: ignore[union-attr]


@pytest.mark.parametrize("written", ["9007199254740992", "9007199254740994.00", "-18014398509481984", "1e20"])
def test_a_whole_number_past_2_to_the_53_that_a_double_carries_reads_back_as_the_decimal_it_was(written):
    """Such a decimal is written as a plain JSON number, which JSON reads back as an integer past the
    safe range: it is read as the decimal again, to the same record and bytes (before, a claim
    holding one was written and could never be read back)."""
    statement = Statement(subject="invoice:1", predicate="amount", value=Decimal(written), unit="EUR")
    claim = Claim.model_validate({**json.loads(small_graph()[2].body), "statements": [statement.model_dump()]})
    again = parse_record(json.loads(claim.body) | {"id": claim.id})
    assert again == claim and again.body == claim.body and again.statements[0].value == Decimal(written)


@pytest.mark.parametrize("value", [4.59046478593931e16, -1.2345678901234567e19, 1e300])
def test_a_double_past_2_to_the_53_reads_back_afresh_as_the_decimal_it_was_written_as(value):
    """Such a double is held as the decimal of its shortest form, and written as that JSON number,
    whose digits are not the double's exact value: read afresh, it is the same decimal, record and bytes."""
    record = Statement(subject="invoice:1", predicate="amount", value=value).proposition()
    again = parse_record(json.loads(record.body) | {"id": record.id})
    assert again == record and again.body == record.body and again.value == Decimal(repr(value))


@pytest.mark.parametrize("value", [2**53 + 1, -(2**60) - 1, 10**400])
def test_an_integer_no_double_carries_is_still_refused_with_the_way_to_write_it(value):
    with pytest.raises(InvalidRecord) as info:
        Statement(subject="invoice:1", predicate="amount", value=value).proposition()
    assert "as a string" in info.value.hint

def test_unknown_kinds_are_refused_with_the_known_ones_named():
    with pytest.raises(UnknownKind) as info:
        parse_record({"kind": "rumour"}, where="x.yaml:3")
    assert "claim" in info.value.hint and info.value.where == "x.yaml:3"


def test_malformed_claims_say_which_field_is_wrong():
    data = json.loads(small_graph()[2].body)
    data["observed_at"] = "2026-07-05T10:00:00"  # naive: no timezone
    with pytest.raises(InvalidRecord) as info:
        parse_record(data, where="c.jsonl:2")
    assert "observed_at" in info.value.what and "timezone" in info.value.what


def test_references_must_point_at_the_right_kind():
    agent, source, claim, _ = small_graph()
    data = {**json.loads(claim.body), "source": agent.id}
    with pytest.raises(InvalidRecord, match="source must reference a source"):
        parse_record(data)


def test_oversized_records_are_refused_at_the_configured_limit():
    data = json.loads(small_graph()[2].body)
    data["scope"] = "x" * 3000
    with limits(max_record_bytes=2000), pytest.raises(PayloadTooLarge, match="over the limit of 2000"):
        parse_record(data)


def test_times_are_kept_to_the_millisecond_in_utc():
    p = Proposition(subject="s", predicate="p", valid={"start": "2026-07-05T12:00:00.123456+02:00"})
    assert json.loads(p.body)["valid"]["start"] == "2026-07-05T10:00:00.123Z"


@settings(max_examples=300, deadline=None)
@example(datetime(999, 12, 31, 23, 59, 59, 999999, tzinfo=timezone.utc))  # a year format_instant writes without zeros before it
@example(datetime(1, 1, 2, tzinfo=timezone(timedelta(hours=-7, minutes=-30))))
@given(st.datetimes(min_value=datetime(1, 1, 2), timezones=st.sampled_from([timezone.utc, timezone(timedelta(hours=2)), timezone(timedelta(hours=-7, minutes=-30))])))
def test_a_time_reads_and_writes_alike_by_the_quick_and_the_general_ways(when):
    # The general way: strftime, and the ISO reading of a time with an explicit offset.
    general = when.astimezone(timezone.utc).replace(microsecond=when.astimezone(timezone.utc).microsecond // 1000 * 1000)
    spelled = general.strftime("%Y-%m-%dT%H:%M:%S.") + f"{general.microsecond // 1000:03d}Z"
    assert format_instant(general) == spelled
    assert to_instant(when) == general and to_instant(spelled) == general == to_instant(spelled.replace("Z", "+00:00"))
    assert to_instant(general) is general or to_instant(general) == general


def test_claims_imply_the_propositions_they_state():
    claim = small_graph()[2]
    (prop,) = claim.implied()
    assert ("ASSERTS", prop.id) in claim.edges()


def test_gaf_members_are_sorted_so_order_never_changes_the_hash():
    projection = "projection:" + "1" * 64
    facts = ["fact:" + c * 64 for c in "abc"]
    assert GAF(projection=projection, facts=facts).id == GAF(projection=projection, facts=facts[::-1]).id


def test_json_schema_covers_every_kind():
    schema = json_schema()
    assert {cls.__name__ for cls in RECORD_TYPES.values()} <= set(schema["$defs"])


def test_shared_records_are_built_once_and_never_confused_with_other_fields():
    from pydantic import ValidationError

    from gaf.records import Proposition
    from gaf.types import Interval

    valid = Interval(start="2026-07-01", end="2026-08-01")
    first = Proposition.shared(subject="s:1", predicate="p", valid=valid)
    assert Proposition.shared(subject="s:1", predicate="p", valid=valid) is first
    assert first == Proposition(subject="s:1", predicate="p", valid=valid)
    assert Proposition.shared(subject="s:1", predicate="p", value=1).id != Proposition.shared(subject="s:1", predicate="p", value=True).id
    with pytest.raises(ValidationError):  # a string spelling the interval is still validated, not served from the cache
        Proposition.shared(subject="s:1", predicate="p", valid=repr(valid))


@given(worlds.statements())
def test_a_statement_names_the_proposition_it_states_by_the_id_the_proposition_record_computes(doc):
    """``Statement.proposition_id`` (what the PROV export names propositions by) computes the id
    without building the record; the oracle is the record, validated and hashed."""
    try:
        statement = Statement.model_validate(doc)
    except ValidationError:
        return  # refused as a statement (a unit on an inexact number, an interval ending before it starts)
    fresh = Statement.model_validate(doc)
    assert fresh.proposition_id() == statement.proposition().id == Proposition(**doc_fields(statement)).id
    assert statement.proposition_id() == statement.proposition().id  # and once the record is built, its id


def doc_fields(statement: Statement) -> dict:
    return {name: getattr(statement, name) for name in ("subject", "predicate", "object", "value", "unit", "valid")}
