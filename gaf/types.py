"""Value types shared by every record: instants, intervals, keys, references.

Records sit at the bottom of gaf and these are the bricks they are made of. They
exist so that the same fact is always written the same way — one spelling of a
time, one spelling of an id — because a record's id is the hash of its spelling.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from datetime import date, datetime, timezone
from decimal import Context, Decimal
from collections.abc import Callable, Iterator, Sequence
from typing import Annotated, TypeVar

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    PlainSerializer,
    StringConstraints,
    WithJsonSchema,
    model_validator,
)

from gaf.canonical import DECIMAL_TAG, ID_PATTERN, SAFE_INT, decimal_json, double_of
from gaf.errors import InvalidValue

#: Declared precision of every time in gaf: milliseconds, UTC, fixed width, so
#: that the ISO strings sort in time order on both stores.
TIME_PRECISION = "millisecond"
_DATE_ONLY = re.compile(r"^\d{4}-\d{2}-\d{2}$")
#: A year before 1000 as ``format_instant`` writes it, without zeros before it (``999-01-02T…``).
_SHORT_YEAR = re.compile(r"^(\d{1,3})-\d{2}-\d{2}")
#: How a time is written, as a refusal says it.
TIME_FORM = "write a date that exists, 2026-07-15 (midnight UTC), or a time with its zone, 2026-07-15T10:00:00Z or 2026-07-15T12:00:00+02:00"


def to_instant(value: object) -> datetime:
    """Read a time: an aware datetime, an ISO 8601 string, or a calendar date (UTC midnight).

    A naive time is refused, because the same wall-clock reading means different
    instants in different places and an audit trail cannot guess which.
    """
    if type(value) is datetime and value.tzinfo is timezone.utc and value.microsecond % 1000 == 0:
        return value  # already as gaf keeps every time (the common case: a time gaf wrote)
    if type(value) is str and len(value) == 24 and value[-1] == "Z" and value[10] == "T" and value[19] == ".":
        try:  # gaf's own spelling (format_instant): UTC, milliseconds
            return datetime.fromisoformat(value)
        except ValueError:
            pass  # refused below, with the general reading's words
    if isinstance(value, str):
        text = value.strip()
        if short := _SHORT_YEAR.match(text):  # read back as written: what gaf stored must parse again
            text = f"{int(short[1]):04d}{text[short.end(1):]}"
        try:
            value = date.fromisoformat(text) if _DATE_ONLY.match(text) else datetime.fromisoformat(text.replace("Z", "+00:00"))
        except ValueError:
            raise InvalidValue(f"not an ISO 8601 time: {value!r}", hint=TIME_FORM) from None
    if isinstance(value, date) and not isinstance(value, datetime):
        value = datetime(value.year, value.month, value.day, tzinfo=timezone.utc)
    if not isinstance(value, datetime):
        raise InvalidValue(f"not a time: {value!r}")
    if value.tzinfo is None or value.utcoffset() is None:
        raise InvalidValue(f"time without a timezone: {value.isoformat()} (write it with Z or an offset)")
    try:
        value = value.astimezone(timezone.utc)
    except OverflowError:
        raise InvalidValue(f"time out of range in UTC: {value.isoformat()}") from None
    return value.replace(microsecond=value.microsecond // 1000 * 1000)


def format_instant(value: datetime) -> str:
    """The one spelling of a time: ``2026-07-05T00:00:00.000Z``, the instant in UTC whatever zone
    it is given in (as ``to_instant`` reads it: 21:00 at UTC-3 is midnight)."""
    if value.tzinfo is not timezone.utc and value.tzinfo is not None:
        value = to_instant(value)
    if value.year < 1000:  # strftime writes such a year as it is (no zeros before it): kept as ever written
        return value.strftime("%Y-%m-%dT%H:%M:%S.") + f"{value.microsecond // 1000:03d}Z"
    return (f"{value.year}-{value.month:02d}-{value.day:02d}T{value.hour:02d}:{value.minute:02d}:{value.second:02d}."
            f"{value.microsecond // 1000:03d}Z")  # fmt: skip


Instant = Annotated[
    datetime,
    BeforeValidator(to_instant),
    PlainSerializer(format_instant, return_type=str, when_used="json"),
    WithJsonSchema({"type": "string", "format": "date-time"}),
]

#: A name a person writes: subjects, predicates, keys. No surrounding blanks.
Key = Annotated[str, StringConstraints(min_length=1, max_length=512, pattern=r"^\S(.*\S)?$")]

#: The longest free text a field holds, in characters; no input value may be longer (``gaf.ledger``).
TEXT_CHARS = 65536

#: Free text: reasons, questions, descriptions.
Text = Annotated[str, StringConstraints(max_length=TEXT_CHARS)]


def _check_id(value: str) -> str:
    if not ID_PATTERN.match(value):
        raise ValueError(f"not a gaf id: {value!r} (expected 'kind:' and 64 lowercase hex digits)")
    return value


#: A reference to another record, by id.
Ref = Annotated[str, AfterValidator(_check_id), WithJsonSchema({"type": "string", "pattern": ID_PATTERN.pattern})]

@dataclass(frozen=True)
class Span:
    """The numbers an option or a setting takes — ``--auto-accept-at`` 0 to 1, ``GAF_LOCK_WAIT``
    seconds from 0 — and how to say so: one reader for the command line and the environment, so
    ``nan``, ``inf``, ``-5`` or ``abc`` are refused the same way everywhere, with the valid form."""

    #: the smallest value taken (``above`` False) or the bound every value is above
    low: float
    high: float = math.inf
    above: bool = False
    whole: bool = False
    #: what the number counts (``seconds``, ``bytes``), for the message
    unit: str = ""
    #: a value the hint offers
    example: str = "1"

    @property
    def form(self) -> str:
        """The valid form, in words: ``a whole number of bytes from 1``, ``a number from 0 to 1``."""
        kind = ("a whole number" if self.whole else "a number") + (f" of {self.unit}" if self.unit else "")
        if self.high == math.inf:
            return f"{kind} {'above' if self.above else 'from'} {_plain(self.low)}"
        if self.above:
            return f"{kind} above {_plain(self.low)}, at most {_plain(self.high)}"
        return f"{kind} from {_plain(self.low)} to {_plain(self.high)}"

    def read(self, value: str | int | float, where: str) -> int | float:
        """The number ``value`` writes, or InvalidValue naming ``where`` and the valid form."""
        text = str(value).strip()
        number: int | float | None = None
        if len(text) <= NUMBER_TEXT:  # int() of 5,000 digits would refuse in its own words
            try:
                number = int(text) if self.whole else float(text)
            except ValueError:
                number = None
        if number is None or not math.isfinite(number) or number < self.low or number > self.high or (self.above and number == self.low):
            shown = text if len(text) <= 40 else text[:40] + "…"
            raise InvalidValue(f"must be {self.form}, not {shown!r}", where=where, hint=f"for example {self.example}")
        return number


#: The longest text a number given as an option or a setting is read from.
NUMBER_TEXT = 100
#: The longest wait a number of seconds may name (a year): past it, the clocks and locks it reaches overflow.
MAX_SECONDS = 365 * 24 * 3600


def _plain(number: float) -> str:
    """A bound as people write it: 1, 0.5, 65535 (never 6.5535e+04)."""
    return str(int(number)) if number == int(number) else str(number)


class WrittenNumber(float):
    """A number as a file wrote it (``0.1``, ``25.00``): a float to every field that wants one,
    and to a statement's value the exact decimal written (``to_number``). The readers of claim
    files (YAML, JSON, CSV) make these, so fields that are floats by nature — and the ids of
    records holding them — are as they always were."""

    text: str

    def __new__(cls, text: str) -> WrittenNumber:
        number = super().__new__(cls, text)
        number.text = text
        return number


def to_number(value: int | float | Decimal) -> int | Decimal:
    """A number as gaf holds it: exact. One value, one spelling — 25, 25.0 and 25.00 are the
    integer 25; 2.50 is the decimal 2.5; a float is read as the shortest decimal that gives it
    back (0.1 is exactly one tenth). Infinities and NaN are refused."""
    if isinstance(value, bool) or isinstance(value, int):
        return value
    if isinstance(value, WrittenNumber):
        exact = Decimal(value.text)
    else:
        exact = Decimal(repr(value)) if isinstance(value, float) else value
    if not exact.is_finite():
        raise ValueError(f"not a finite number: {value!r}")
    if exact == exact.to_integral_value() and abs(exact) <= SAFE_INT:
        return int(exact)
    # normalize rounds to its context's precision (28 digits by default): give it every digit there is
    return exact.normalize(Context(prec=max(len(exact.as_tuple().digits), 1)))


def _scalar_in(value: object) -> object:
    if isinstance(value, (float, Decimal)):
        return to_number(value)
    if type(value) is int and SAFE_INT < abs(value) < 2**1024 and double_of(Decimal(value)) is not None:  # (no double reaches 2**1024)
        # A decimal whole number past 2**53 whose shortest double gives it back is written as that
        # JSON number (``decimal_json``: 4.59046478593931e16 is written 45904647859393100, though the
        # double's own value is 45904647859393104), and JSON reads it back as an integer: it is that
        # decimal again — the same test ``decimal_json`` wrote it by — or its record could not be read
        # back. An integer no double gives back is refused as before.
        return to_number(Decimal(value))
    if isinstance(value, dict) and set(value) == {DECIMAL_TAG} and isinstance(value[DECIMAL_TAG], str):
        try:
            return to_number(Decimal(value[DECIMAL_TAG]))
        except ArithmeticError:
            raise ValueError(f"not a decimal number: {value[DECIMAL_TAG]!r}") from None
    return value


def scalar_json(value: object) -> object:
    """A value in JSON: a decimal as ``gaf.canonical.decimal_json`` spells it."""
    return decimal_json(value) if isinstance(value, Decimal) else value


def number_text(value: int | Decimal) -> str:
    """A number as people and rules write it: an integer plainly, a decimal without an exponent
    unless it came from one a double carries (the spelling such values always had)."""
    if isinstance(value, Decimal):
        near = double_of(value)
        return json.dumps(near) if near is not None else format(value, "f")
    return str(value)


#: A literal value a statement can carry: text, a boolean, or an exact number (an integer, or
#: a decimal: never a float, see ``to_number``).
Scalar = Annotated[
    bool | int | Decimal | str,
    BeforeValidator(_scalar_in),
    PlainSerializer(scalar_json, when_used="json"),
    WithJsonSchema({"type": ["boolean", "number", "string", "object"], "description": "text, true/false, or an exact number"}),
]


class Value(BaseModel):
    """Base of every nested value: frozen, and strict about unknown fields."""

    model_config = ConfigDict(frozen=True, extra="forbid")


#: A unit or currency: ``EUR``, ``kg``, ``m/s``, ``%``.
Unit = Annotated[str, StringConstraints(min_length=1, max_length=64, pattern=r"^[A-Za-z%][A-Za-z0-9_/%]*$")]


def _amount(value: object) -> object:
    # A decimal a double cannot carry is written tagged (``decimal_json``) and read back so, as a Scalar is.
    value = _scalar_in(value)
    if isinstance(value, bool) or not isinstance(value, (int, Decimal)):
        raise ValueError(f"an amount is a number, not {value!r}")
    return to_number(value)


def _non_negative(value: object) -> object:
    number = _amount(value)
    if number < 0:  # type: ignore[operator]
        raise ValueError(f"an amount is at least 0, not {value!r}")
    return number


@dataclass(frozen=True)
class Column:
    """The store column a field of a type stores do not hold as such is copied to, for
    queries: an amount's column is a DOUBLE, as it was when amounts were floats; the
    record's body keeps it exact."""

    type: str


#: An amount of money or goods: an exact number, at least 0 (a float is read as the shortest decimal giving it).
Amount = Annotated[
    int | Decimal,
    Column("DOUBLE"),
    BeforeValidator(_non_negative),
    PlainSerializer(scalar_json, when_used="json"),
    WithJsonSchema({"type": ["number", "object"], "minimum": 0}),
]


class Quantity(Value):
    """An amount in a unit — ``25.00 EUR``, ``12 kg`` — as one value: 25 EUR is not 25 USD,
    and arithmetic across units is refused (``gaf.arith``), never a number.

    A statement carries one as its value and ``unit`` (``currency`` is the same field);
    rules read and write it as ``25 EUR``."""

    amount: Annotated[int | Decimal, BeforeValidator(_amount), PlainSerializer(scalar_json, when_used="json")]
    unit: Unit

    def __str__(self) -> str:
        return f"{number_text(self.amount)} {self.unit}"


class Interval(Value):
    """A half-open period [start, end) of valid time; an open end is unbounded."""

    start: Instant | None = None
    end: Instant | None = None

    @model_validator(mode="after")
    def _ordered(self) -> Interval:
        if self.start is not None and self.end is not None and self.end <= self.start:
            raise ValueError(f"interval ends ({format_instant(self.end)}) before it starts ({format_instant(self.start)})")
        return self

    def contains(self, instant: datetime) -> bool:
        """Whether an instant falls inside the period."""
        return (self.start is None or self.start <= instant) and (self.end is None or instant < self.end)

    def covers(self, other: Interval) -> bool:
        """Whether the whole of ``other`` lies inside this period."""
        starts_ok = self.start is None or (other.start is not None and self.start <= other.start)
        ends_ok = self.end is None or (other.end is not None and other.end <= self.end)
        return starts_ok and ends_ok

    def overlaps(self, other: Interval) -> bool:
        """Whether the two periods share any instant."""
        before = self.end is not None and other.start is not None and self.end <= other.start
        after = other.end is not None and self.start is not None and other.end <= self.start
        return not (before or after)


#: How long work says how far it got: called with (stage, done, total or None) at natural points
#: (claims read, claims weighed, combinations tried). The library never prints; the CLI shows it
#: (``gaf.cli.output.Ticker``). Nothing it is given enters a record.
Progress = Callable[[str, int, "int | None"], None]


def no_progress(stage: str, done: int, total: int | None = None) -> None:
    """The progress of work nobody watches."""


T = TypeVar("T")


def counted(items: Sequence[T], stage: str, progress: Progress) -> Iterator[T]:
    """``items`` one by one, ``progress`` told the stage has begun (0 of them done), then after
    each: an item is done when the loop asks for the next, so one skipped with ``continue``
    counts and a loop left early never claims the rest."""
    progress(stage, 0, len(items))
    for done, item in enumerate(items, 1):
        yield item
        progress(stage, done, len(items))
