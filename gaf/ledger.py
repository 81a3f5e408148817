"""The claim ledger: reading claims (and their sources and agents) into the store.

Claims arrive as JSONL, CSV or YAML files, or as Python objects. Everything is
read and validated before anything is written, so a file with one bad line
writes nothing and the report names every bad line by number. Records are then
written in batches, each one transaction, in an order where every record comes
after the records it points at; re-running the same ingest is a no-op, so an
interrupted ingest is finished by running it again.

People write ``source: bank-ledger`` rather than a 64-digit id, so a reference to a
source or an agent may be its ``key``: it is resolved against the same input
first, then against the store, and refused if it names nothing or several things.
"""

from __future__ import annotations

import csv
import json
import math
import os
import re
import stat
import tempfile
from array import array
from collections.abc import Callable, Hashable, Iterable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, BinaryIO, Literal, TextIO, TypeVar

import yaml

from gaf.canonical import ID_PATTERN
from gaf.errors import (
    AmbiguousReference,
    BatchRejected,
    DuplicateKey,
    GafError,
    InvalidRecord,
    InvalidValue,
    LeadingZero,
    OverLimit,
    PayloadTooLarge,
    UnknownFormat,
    UnknownReference,
)
from gaf.projection.cone import cones_for
from gaf.records import (
    RECORD_TYPES,
    Closure,
    Cone,
    Record,
    current_limits,
    max_record_bytes,
    parse_record,
    record_type,
)
from gaf.settings import DEFAULT_LINEAGE_SKEW
from gaf.settings import DEFAULT_MAX_INPUT_BYTES as DEFAULT_MAX_INPUT_BYTES
from gaf.store.base import GafStore, ItemError, Mode, WriteReport
from gaf.arith import EXACT_DIGITS
from gaf.types import TEXT_CHARS, TIME_FORM, Progress, WrittenNumber, format_instant, no_progress

Format = Literal["jsonl", "csv", "yaml", "openlineage"]

#: An ingest's two stages, as its progress is told them, and how many items are checked
#: between two reports of the first.
CHECKING = "checking the items"
WRITING = "writing the records"
ITEMS_BATCH = 1000

#: Kinds that people refer to by key instead of id.
KEYED_KINDS = ("source", "agent")


@dataclass
class Item:
    """One record's worth of input, with the place it came from."""

    data: dict[str, Any]
    where: str


# ---------------------------------------------------------------------- reading files


def items_of(path: str | Path, fmt: str | None = None, *, name: str | None = None, at: datetime | None = None,
             skew: float = DEFAULT_LINEAGE_SKEW) -> Iterator[Item]:
    """The items of a claims file, each with its place (``name``, the path unless given, and
    its line), read as they come: the file is never held whole, so reading it takes the
    memory of one item, however long it is. ``at`` is the ingest's time, which an
    OpenLineage event's eventTime may not lie far after (``gaf.lineage``).

    A JSONL line, a CSV row and a YAML list's item are each one item; a file that is
    missing, unreadable or not UTF-8 is refused with its name."""
    path = Path(path)
    name = name or str(path)
    chosen = fmt or format_of(path)
    reader = _READERS.get(chosen)
    if reader is None:
        raise UnknownFormat(f"unknown format {fmt!r}", hint="use jsonl, csv, yaml or openlineage")
    try:
        yield from (_openlineage_items(path, name, at, skew) if chosen == "openlineage" else reader(path, name))
    except FileNotFoundError:
        raise InvalidRecord(f"no such file: {path}") from None
    except UnicodeDecodeError as exc:
        raise InvalidRecord(f"not UTF-8 text: {exc}", where=name) from None
    except OSError as exc:
        raise InvalidRecord(f"cannot read the file: {exc.strerror or exc}", where=name) from None


def read_items(path: str | Path, fmt: Format | None = None) -> list[Item]:
    """The items of a small claims file, held whole (``impact new-claim`` reads one claim
    this way): refused, like a policy file, when it is over the input size limit."""
    path = Path(path)
    _check_size(path)
    return list(items_of(path, fmt))


def max_input_bytes() -> int:
    """The size limit of one input file held whole in force here: 256 MiB unless set with
    ``with gaf.records.limits(max_input_bytes=…):`` (the CLI sets it from GAF_MAX_INPUT_BYTES).
    ``ingest`` streams a file and is bound by the record limit alone; a stream (stdin) it copies
    whole is bound by this one too."""
    return current_limits().max_input_bytes


def read_text(path: Path) -> str:
    """The text of an input file, refused with its name if it is missing, unreadable, too large or not UTF-8.

    Files are read whole, so the size is checked first: a file many times larger
    than anyone meant to send is refused before it fills the memory.
    """
    try:
        _check_size(path)
        limit = max_input_bytes()
        with path.open("rb") as f:
            data = f.read(limit + 1)  # counted as read: the size stat gave may be stale
        if len(data) > limit:
            raise PayloadTooLarge(f"the file is over the limit of {limit} bytes", where=str(path),
                                  hint="split it into several files, or raise GAF_MAX_INPUT_BYTES")  # fmt: skip
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidRecord(f"not UTF-8 text: {exc}", where=str(path)) from None
    except OSError as exc:
        raise InvalidRecord(f"cannot read the file: {exc.strerror or exc}", where=str(path)) from None


def _check_regular(path: Path) -> os.stat_result:
    """A file's status, refusing what is not a regular file: a device (``/dev/zero``), a FIFO or a
    directory has no size to check and may never end. Standard input is read as ``-``."""
    try:
        info = path.stat()
    except FileNotFoundError:
        raise InvalidRecord(f"no such file: {path}") from None
    except OSError as exc:
        raise InvalidRecord(f"cannot read the file: {exc.strerror or exc}", where=str(path)) from None
    if not stat.S_ISREG(info.st_mode):
        raise InvalidRecord("not a regular file (a directory, a device or a pipe)", where=str(path),
                            hint="give a file, or '-' to read standard input (with --format)")  # fmt: skip
    return info


def _check_size(path: Path) -> None:
    size, limit = _check_regular(path).st_size, max_input_bytes()
    if size > limit:
        raise PayloadTooLarge(
            f"the file is {size} bytes, over the limit of {limit}",
            where=str(path),
            hint="split it into several files, or raise GAF_MAX_INPUT_BYTES",
        )


#: The formats gaf reads claims in, by the suffixes that name them.
SUFFIXES: dict[str, Format] = {".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "jsonl", ".csv": "csv", ".yaml": "yaml", ".yml": "yaml"}


def format_of(path: Path) -> Format:
    """A claims file's format, told by its suffix."""
    fmt = SUFFIXES.get(path.suffix.lower())
    if fmt is None:
        raise UnknownFormat(f"cannot tell the format of {path} from its suffix", hint="use .jsonl, .csv or .yaml, or pass the format")
    return fmt


def _jsonl_items(path: Path, name: str) -> Iterator[Item]:
    limit = max_record_bytes()
    with path.open("rb") as lines:
        for number, raw in enumerate(_lines(lines, limit), start=1):
            where = f"{name}:{number}"
            if raw is None:
                yield Item({"__error__": PayloadTooLarge(f"line is over the limit of {limit} bytes", where=where)}, where)
                continue
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                yield Item({"__error__": InvalidRecord(f"not UTF-8 text: {exc.reason} at column {exc.start + 1}", where=where)}, where)
                continue
            if not line.strip():
                continue
            try:
                data = read_json(line)
            except json.JSONDecodeError as exc:
                yield Item({"__error__": InvalidRecord(f"not JSON: {exc.msg} at column {exc.colno}", where=where)}, where)
                continue
            except (RecursionError, _Overlong):
                yield Item({"__error__": _json_limit(line, where)}, where)
                continue
            if not _within_limits(data):
                yield Item({"__error__": _json_limit(line, where)}, where)
                continue
            yield Item(data if isinstance(data, dict) else {"__error__": InvalidRecord("a line must hold a JSON object", where=where)}, where)


def _lines(stream: BinaryIO, limit: int) -> Iterator[bytes | None]:
    """The lines of a binary stream without their line ends, a line over ``limit`` bytes as None:
    read up to the limit and the rest skipped, so an endless line is never held."""
    while True:
        line = stream.readline(limit + 2)  # room for the line end
        if not line:
            return
        body = line.rstrip(b"\r\n")
        if len(body) <= limit:
            yield body
            continue
        while not line.endswith(b"\n"):
            line = stream.readline(1 << 20)
            if not line:
                break
        yield None


#: CSV columns of a claim with one statement per row.
CSV_COLUMNS = (
    "source", "observer", "observed_at", "recorded_at", "transformation", "scope",
    "subject", "predicate", "object", "value", "unit", "currency", "valid_from", "valid_to", "polarity",
    "payload_digest", "failure_modes",
)  # fmt: skip


def _csv_items(path: Path, name: str) -> Iterator[Item]:
    with path.open(encoding="utf-8", newline="") as text:
        reader = csv.DictReader(text)
        try:
            unknown = set(reader.fieldnames or ()) - set(CSV_COLUMNS) - {"kind"}
            if unknown:
                raise InvalidRecord(f"unknown CSV columns {sorted(unknown)}", where=f"{name}:1", hint=f"columns: {', '.join(CSV_COLUMNS)}")
            for row in reader:
                where = f"{name}:{reader.line_num}"
                extra = row.pop(None, None)
                if extra:
                    yield Item({"__error__": InvalidRecord(f"{len(extra)} more field(s) than the header names", where=where)}, where)
                    continue
                cells = {k: v for k, v in row.items() if v not in (None, "")}
                breach = _csv_limit(cells, where)
                yield Item({"__error__": breach} if breach else _claim_from_row(cells), where)
        except csv.Error as exc:
            raise InvalidRecord(f"not valid CSV: {exc}", where=f"{name}:{reader.line_num + 1}") from None


def _csv_limit(cells: dict[str, str], where: str) -> OverLimit | None:
    """The first cell of a row past a limit — a text too long, a value with too many digits — named by its column."""
    for column, text in cells.items():
        place = f"{where}, column {column}"
        if len(text) > MAX_TEXT:
            return too_long(len(text), place)
        if column == "value" and _over_digits(text.strip()):
            return too_many_digits(text.strip(), place)
    return None


def _claim_from_row(row: dict[str, str]) -> dict[str, Any]:
    """A claim with one statement from a flat CSV row."""
    statement: dict[str, Any] = {k: row.pop(k) for k in ("subject", "predicate", "object", "unit", "currency", "polarity") if k in row}
    if "value" in row:
        statement["value"] = _csv_value(row.pop("value"))
    valid = {k: row.pop(f"valid_{k}") for k in ("from", "to") if f"valid_{k}" in row}
    if valid:
        statement["valid"] = {"start": valid.get("from"), "end": valid.get("to")}
    row.pop("kind", None)
    claim: dict[str, Any] = {"kind": "claim", **row, "statements": [statement]}
    if "failure_modes" in row:
        claim["failure_modes"] = [m.strip() for m in row["failure_modes"].split(";") if m.strip()]
    return claim


def _csv_value(text: str) -> Any:
    """Numbers and booleans as such; anything else is the string written."""
    try:
        value = read_json(text)
    except (json.JSONDecodeError, RecursionError):
        return text
    return value if isinstance(value, (int, float, bool)) else text


def _yaml_items(path: Path, name: str) -> Iterator[Item]:
    """The items of a YAML file, composed one at a time: a document that is a list yields its
    items as the parser reaches them, so only one item's nodes (and the anchors named so far)
    are held; any other document is one item."""
    with path.open(encoding="utf-8", newline="") as text, reading_yaml(text, name) as loader:
        while loader.check_node():
            _skip_event(loader)  # the document's start
            if loader.check_event(yaml.SequenceStartEvent):
                _skip_event(loader)
                while not loader.check_event(yaml.SequenceEndEvent):
                    yield _yaml_item(loader, _compose(loader), name)
                _skip_event(loader)
            else:
                yield _yaml_item(loader, _compose(loader), name)
            _skip_event(loader)  # the document's end
            loader.anchors = {}


# PyYAML's composer steps, which its stubs leave untyped: one event dropped, one node composed.
def _skip_event(loader: YamlLoader) -> None:
    loader.get_event()  # type: ignore[no-untyped-call]


def _compose(loader: YamlLoader) -> yaml.Node:
    node = loader.compose_node(None, None)  # type: ignore[arg-type]  # a root: no parent, no index
    assert node is not None  # None only at the end of the stream, which check_event has ruled out
    return node


def _yaml_item(loader: YamlLoader, node: yaml.Node, name: str) -> Item:
    where = f"{name}:{node.start_mark.line + 1}"
    try:
        check_yaml_size(node, where)
    except PayloadTooLarge as exc:
        return Item({"__error__": exc}, where)
    data = loader.construct_object(node, deep=True)
    loader.constructed_objects, loader.recursive_objects = {}, {}  # one item's objects at a time
    if not isinstance(data, dict):
        data = {"__error__": InvalidRecord("each item must be a mapping with a 'kind'", where=where)}
    return Item(yaml_plain(data), where)


#: The reader of each format: a file's items, each named by ``name`` and its line.
def _openlineage_items(path: Path, name: str, at: datetime | None, skew: float) -> Iterator[Item]:
    """NDJSON of OpenLineage events, one a line, read as JSONL (its limits and errors) and each
    event turned into its agent, source and claim by ``gaf.lineage.event_items``; a bad
    event is one error item naming the field's path. Without ``at`` (reading, not ingesting)
    no eventTime is too late."""
    from gaf.lineage import event_items

    now = at or datetime.max.replace(tzinfo=timezone.utc) - timedelta(days=1)
    for item in _jsonl_items(path, name):
        if "__error__" in item.data:
            yield item
            continue
        try:
            items = event_items(item.data, at=now, where=item.where, skew=skew)
        except GafError as exc:
            yield Item({"__error__": exc}, item.where)
            continue
        for data in items:
            yield Item(data, item.where)


_READERS: dict[str, Callable[[Path, str], Iterator[Item]]] = {"jsonl": _jsonl_items, "csv": _csv_items, "yaml": _yaml_items, "openlineage": _jsonl_items}

#: Why a document nested deeper than Python's parsers go is refused.
TOO_DEEP = "nested too deeply to be a record"

# ---------------------------------------------------------------------- what one value may be
# Every reader refuses, at the value's file, line and column, what no record could hold and a
# parser would choke on: nesting past MAX_DEPTH, a text past MAX_TEXT, a number past MAX_DIGITS.

#: The deepest lists and mappings in one item may nest (a claim nests four levels).
MAX_DEPTH = 64
#: The longest text (a value or a key) in characters: the longest field a record has.
MAX_TEXT = TEXT_CHARS
#: The most digits a number may be written with: as many as gaf's exact arithmetic carries;
#: Python itself would refuse an integer past 4,300 digits, in its words and with no place.
MAX_DIGITS = EXACT_DIGITS


def too_deep(where: str) -> OverLimit:
    return OverLimit(f"lists and mappings nested more than {MAX_DEPTH} deep", where=where,
                     hint="a record nests a few levels: flatten the item")  # fmt: skip


def too_long(length: int, where: str) -> OverLimit:
    return OverLimit(f"a text of {length:,} characters, over the limit of {MAX_TEXT:,}", where=where,
                     hint="shorten it: no field of a record holds more")  # fmt: skip


def too_many_digits(text: str, where: str) -> OverLimit:
    digits = sum(c.isdigit() for c in text)
    return OverLimit(f"a number of {digits:,} digits ({text[:12]}…), over the limit of {MAX_DIGITS}", where=where,
                     hint="quote it if it is a code or an identifier; gaf computes with numbers of at most that many digits")  # fmt: skip


def _over_digits(text: str) -> bool:
    return len(text) > MAX_DIGITS and sum(c.isdigit() for c in text) > MAX_DIGITS


class _Overlong(Exception):
    """A number too long for the JSON reader's hooks to make: located afterwards (``_json_limit``)."""


def _json_int(text: str) -> int:
    if _over_digits(text):
        raise _Overlong
    return int(text)


def _json_float(text: str) -> WrittenNumber:
    if _over_digits(text):
        raise _Overlong
    return WrittenNumber(text)  # a value exactly as written


def read_json(text: str) -> Any:
    """JSON text read with numbers as written (``WrittenNumber``) and none longer than MAX_DIGITS
    (``_Overlong``, to be placed by ``_json_limit``)."""
    return json.loads(text, parse_float=_json_float, parse_int=_json_int)


def _within_limits(value: Any, depth: int = 0) -> bool:
    """Whether a value read from JSON nests at most MAX_DEPTH deep and holds no text over MAX_TEXT."""
    if isinstance(value, str):
        return len(value) <= MAX_TEXT
    if isinstance(value, (dict, list)):
        if depth >= MAX_DEPTH:
            return False
        inner = [*value.keys(), *value.values()] if isinstance(value, dict) else value
        return all(_within_limits(v, depth + 1) for v in inner)
    return True


#: A JSON token as the limits see it: a string, a number, or a bracket.
_JSON_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|-?[0-9][0-9.eE+\-]*|[\[\]{}]')


def _json_limit(line: str, where: str) -> OverLimit:
    """The first value of a JSON line past a limit, named with its column (only run when one is)."""
    depth = 0
    for token in _JSON_TOKEN.finditer(line):
        text, place = token.group(), f"{where}:{token.start() + 1}"
        if text in ("[", "{"):
            depth += 1
            if depth > MAX_DEPTH:
                return too_deep(place)
        elif text in ("]", "}"):
            depth -= 1
        elif text.startswith('"'):
            if len(text) - 2 > MAX_TEXT and len(decoded := json.loads(text)) > MAX_TEXT:
                return too_long(len(decoded), place)
        elif _over_digits(text):
            return too_many_digits(text, place)
    return OverLimit(TOO_DEEP, where=where)  # not reached: the check found a value past a limit


# ---------------------------------------------------------------------- reading YAML
# Every file gaf reads as YAML — claims, sources and agents, authority files, policies,
# verdict rules, derivation rules — goes through reading_yaml, so one set of rules
# decides what a plain scalar means everywhere.


#: A node of one kind, composed and handed back as it is.
N = TypeVar("N", bound=yaml.Node)


class YamlLoader(yaml.SafeLoader):
    """PyYAML's safe reader with the YAML 1.2 core schema in place of YAML 1.1's.

    YAML 1.1 reads ``no``, ``off`` and ``n`` as false, ``0012`` as octal 10 and
    ``1:30`` as 90, so a statement's ``value: no`` or a reference ``0012`` would be
    recorded, for ever, as something nobody wrote. The 1.2 core schema knows only
    ``true``/``false``, ``null``/``~``, decimal, ``0o`` and ``0x`` integers and
    floats; everything else — including timestamps — stays the text written, which
    the records read themselves. A mapping that gives a key twice is refused (1.2
    requires unique keys; 1.1 silently kept the last), and so is an unquoted number
    with a leading zero (``0012``), which 1.1 and 1.2 read as different numbers and
    an identifier would lose its zeros in either.
    """

    # none of YAML 1.1's: the 1.2 ones are added below (first character, or None for any, to tags and patterns)
    yaml_implicit_resolvers: dict[str | None, list[tuple[str, re.Pattern[str]]]] = {}
    #: how deep the node being composed is nested (the composer recurses: refused past MAX_DEPTH)
    _depth = 0

    # PyYAML's stubs give an anchor as a dict; it is the anchor's name (or None), passed through
    def compose_sequence_node(self, anchor: Any) -> yaml.SequenceNode:
        return self._nested(super().compose_sequence_node, anchor)

    def compose_mapping_node(self, anchor: Any) -> yaml.MappingNode:
        return self._nested(super().compose_mapping_node, anchor)

    def _nested(self, compose: Callable[[Any], N], anchor: Any) -> N:
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                raise too_deep(yaml_place(self.peek_event().start_mark))  # type: ignore[no-untyped-call]
            return compose(anchor)
        finally:
            self._depth -= 1

    def compose_scalar_node(self, anchor: Any) -> yaml.ScalarNode:
        node = super().compose_scalar_node(anchor)
        if len(node.value) > MAX_TEXT:
            raise too_long(len(node.value), yaml_place(node.start_mark))
        return node

    def construct_mapping(self, node: yaml.Node, deep: bool = False) -> dict[Hashable, Any]:
        if isinstance(node, yaml.MappingNode):
            first: dict[tuple[str, str], yaml.Node] = {}
            for key, _ in node.value:
                if isinstance(key, yaml.ScalarNode) and key.tag != _MERGE:
                    if (key.tag, key.value) in first:
                        raise DuplicateKey(
                            f"key {key.value!r} is given twice in one mapping (first at line {first[key.tag, key.value].start_mark.line + 1})",
                            where=yaml_place(key.start_mark),
                            hint="keep one of them: YAML 1.2 refuses a repeated key, YAML 1.1 would silently keep the last",
                        )
                    first[key.tag, key.value] = key
        # PyYAML's stubs take only a MappingNode, but the constructor is handed whatever node a tag names
        # (``!!map [a, b]`` is a sequence) and refuses any other itself, naming the place
        return super().construct_mapping(node, deep=deep)  # type: ignore[arg-type]


_MERGE = "tag:yaml.org,2002:merge"
_LEADING_ZERO = "tag:gaf,2026:leading-zero"  # resolved only to be refused, never constructed into a value


def _leading_zero(loader: YamlLoader, node: yaml.ScalarNode) -> None:
    text = node.value
    number = str(float(text) if any(c in text for c in ".eE") else int(text, 10))
    octal = f" (YAML 1.1: octal {int(text, 8)})" if re.fullmatch(r"[-+]?0[0-7]+", text) else ""
    raise LeadingZero(
        f"{text} is an unquoted number with a leading zero: YAML reads it as {number}{octal}, "
        "and a code or an identifier would lose its zeros",
        where=yaml_place(node.start_mark),
        hint=f"quote it: '{text}', or write {number} if a number is meant",
    )


def _bool(loader: YamlLoader, node: yaml.ScalarNode) -> bool:
    text = loader.construct_scalar(node)
    if text not in ("true", "True", "TRUE", "false", "False", "FALSE"):
        raise InvalidRecord(f"{text!r} is not a YAML 1.2 boolean", where=yaml_place(node.start_mark), hint="write true or false")
    return text.lower() == "true"


def _int(loader: YamlLoader, node: yaml.ScalarNode) -> int:
    text = loader.construct_scalar(node)
    if _over_digits(text):
        raise too_many_digits(text, yaml_place(node.start_mark))
    try:
        return int(text, 0) if text.lstrip("+-")[:2].lower() in ("0o", "0x") else int(text, 10)
    except ValueError:
        raise InvalidRecord(f"{text!r} is not a YAML 1.2 integer", where=yaml_place(node.start_mark)) from None


def _float(loader: YamlLoader, node: yaml.ScalarNode) -> float:
    """A YAML 1.2 float, kept as written (``WrittenNumber``): a statement's value reads it as the
    exact decimal written (``25.00`` is 25, ``0.1`` one tenth), a field that is a float by
    nature (a qualifier, a confidence) as the float it always was."""
    text = loader.construct_scalar(node)
    if _over_digits(text):
        raise too_many_digits(text, yaml_place(node.start_mark))
    special = {".inf": math.inf, "+.inf": math.inf, "-.inf": -math.inf, ".nan": math.nan}.get(text.lower())
    try:
        return special if special is not None else WrittenNumber(text)
    except ValueError:
        raise InvalidRecord(f"{text!r} is not a YAML 1.2 float", where=yaml_place(node.start_mark)) from None


def _date_like(loader: YamlLoader, node: yaml.ScalarNode) -> str:
    """An unquoted date or time (YAML 1.2 has no timestamps, so it stays the text written, for the
    records to read), refused at its line and column when no calendar has it: ``2026-02-30``
    is a typo, and quoted it would be recorded as text nobody meant."""
    text = loader.construct_scalar(node)
    parts = _DATE_LIKE.match(text)
    assert parts is not None  # resolved by the same pattern
    year, month, day, hour, minute, second = (int(p) if p else 0 for p in parts.group("year", "month", "day", "hour", "minute", "second"))
    try:
        datetime(year, month, day, hour, minute, second)
    except ValueError:
        raise InvalidValue(f"{text} is not a date or time that exists", where=yaml_place(node.start_mark),
                           hint=f"{TIME_FORM}; quote it if it is text")  # fmt: skip
    return text


_DATE_TAG = "tag:gaf,2026:date-like"  # a plain scalar shaped as a date: checked, then kept as text
#: YAML 1.1's timestamp shape: a date, and optionally a time of day and a zone.
_DATE_LIKE = re.compile(
    r"(?P<year>[0-9]{4})-(?P<month>[0-9]{1,2})-(?P<day>[0-9]{1,2})"
    r"(?:(?:[Tt]|[ \t]+)(?P<hour>[0-9]{1,2}):(?P<minute>[0-9]{2}):(?P<second>[0-9]{2})(?:\.[0-9]*)?"
    r"(?:[ \t]*(?:Z|[-+][0-9]{1,2}(?::[0-9]{2})?))?)?"
)

# The YAML 1.2 core schema's tag resolution (yaml.org/spec/1.2.2 §10.3.2), in the order
# tried; the leading-zero pattern comes before the numbers it would otherwise match.
for _tag, _pattern, _first in (
    ("tag:yaml.org,2002:null", r"~|null|Null|NULL|", ["~", "n", "N", ""]),
    ("tag:yaml.org,2002:bool", r"true|True|TRUE|false|False|FALSE", list("tTfF")),
    (_LEADING_ZERO, r"[-+]?0[0-9]+(\.[0-9]*)?([eE][-+]?[0-9]+)?", list("-+0")),
    ("tag:yaml.org,2002:int", r"[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+", list("-+0123456789")),
    ("tag:yaml.org,2002:float", r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?", list("-+.0123456789")),
    ("tag:yaml.org,2002:float", r"[-+]?(\.inf|\.Inf|\.INF)|\.nan|\.NaN|\.NAN", list("-+.")),
    (_MERGE, r"<<", ["<"]),
    (_DATE_TAG, _DATE_LIKE.pattern, list("0123456789")),
):
    YamlLoader.add_implicit_resolver(_tag, re.compile(f"^(?:{_pattern})$"), _first)
for _tag, _construct in (
    (_LEADING_ZERO, _leading_zero),
    ("tag:yaml.org,2002:bool", _bool),
    ("tag:yaml.org,2002:int", _int),
    ("tag:yaml.org,2002:float", _float),
    (_DATE_TAG, _date_like),
):
    YamlLoader.add_constructor(_tag, _construct)


@contextmanager
def reading_yaml(source: str | TextIO, name: str) -> Iterator[YamlLoader]:
    """The one YAML reader of gaf, over a file's text or the file itself (read as the parser
    goes): YAML 1.2, errors typed with file, line and column.

    Control characters are refused before they are read; a document nested
    deeper than the parser goes is refused by name.
    """
    try:
        loader = YamlLoader(source)
    except yaml.reader.ReaderError as exc:  # a text is checked whole here, a file as it is read
        raise _unacceptable(exc, source, name) from None
    loader.name = name  # every mark, and so every error, names the file
    try:
        yield loader
    except yaml.reader.ReaderError as exc:
        raise _unacceptable(exc, source, name) from None
    except yaml.YAMLError as exc:
        raise yaml_error(exc, name) from None
    except RecursionError:
        raise InvalidRecord(TOO_DEEP, where=name) from None
    finally:
        loader.dispose()


def _unacceptable(exc: yaml.reader.ReaderError, source: str | TextIO, name: str) -> InvalidRecord:
    """A character YAML does not allow, named by line and column (a file is read again up to it)."""
    if not isinstance(source, str):
        source.seek(0)
        source = source.read(exc.position)
    before = source[: exc.position]
    line, column = before.count("\n") + 1, exc.position - (before.rfind("\n") + 1) + 1
    return InvalidRecord(f"not valid YAML: unacceptable character #x{exc.character:04x}: {exc.reason}", where=f"{name}:{line}:{column}")


def load_yaml(text: str, name: str) -> tuple[Any, yaml.Node | None]:
    """One YAML document read whole, and its node tree (for line numbers); its aliases are sized first."""
    with reading_yaml(text, name) as loader:
        node = loader.get_single_node()
        if node is None:
            return None, None
        check_yaml_size(node, name)
        return loader.construct_document(node), node


def yaml_place(mark: yaml.Mark, name: str | None = None) -> str:
    """file:line:column of a place in a YAML file, counted from 1."""
    return f"{name or mark.name}:{mark.line + 1}:{mark.column + 1}"


def yaml_error(exc: yaml.YAMLError, name: str) -> InvalidRecord:
    """A YAML syntax error as a typed error naming the file, line and column."""
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    return InvalidRecord(f"not valid YAML: {getattr(exc, 'problem', None) or exc}", where=yaml_place(mark, name) if mark else name)


def check_yaml_size(node: yaml.Node, where: str) -> None:
    """Refuse a YAML item whose aliases expand it past the record size limit.

    An anchor used nine times in an item used nine times… (the "billion laughs")
    is a few lines of text that read into gigabytes. Every node costs at least a
    byte once written out, so an item expanding to more nodes than the limit has
    bytes could never be a record: it is refused before it is read into memory.
    A node that contains itself expands without end and is refused the same way.
    """
    limit = max_record_bytes()
    sizes: dict[int, int] = {}

    def size(n: yaml.Node) -> int:
        if id(n) in sizes:
            return sizes[id(n)]
        sizes[id(n)] = limit + 1  # reached again while being sized: it contains itself
        if isinstance(n, yaml.MappingNode):
            total = 1 + sum(size(k) + size(v) for k, v in n.value)
        elif isinstance(n, yaml.SequenceNode):
            total = 1 + sum(size(c) for c in n.value)
        else:
            total = 1 + len(n.value)
        sizes[id(n)] = total
        return total

    if size(node) > limit:
        raise PayloadTooLarge(
            f"the item is over the limit of {limit} bytes once its YAML aliases are expanded",
            where=where,
            hint="write the values out, or raise GAF_MAX_RECORD_BYTES",
        )


def yaml_plain(value: Any) -> Any:
    """YAML reads dates and times as Python objects; records read them as ISO text."""
    if isinstance(value, dict):
        return {k: yaml_plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [yaml_plain(v) for v in value]
    if isinstance(value, datetime):
        if value.tzinfo is None:
            return value.isoformat()  # refused later as naive, with its place
        return format_instant(value)
    if hasattr(value, "isoformat") and not isinstance(value, str):
        return value.isoformat()
    return value


# ---------------------------------------------------------------------- resolving and writing
# An ingest reads its input twice and holds neither pass whole. The first resolves and checks
# every item and keeps only what the second needs: which items are refused, which ranks of
# kinds there are, and where each id the input points at is first brought. The second
# resolves each item again, the same way, and writes it in batches. So a file of any length
# takes the memory of a batch or two, and 12 bytes an id for the first pass (a claim brings
# itself and a proposition a statement).

#: An input that can be read again from its start, item by item: a file's items, or a list's.
Reread = Callable[[], Iterator[Item]]


def ingest(
    store: GafStore,
    source: str | Path | BinaryIO | Iterable[Record | dict[str, Any]],
    *,
    recorded_at: datetime,
    mode: Mode = "atomic",
    fmt: str | None = None,
    name: str | None = None,
    batch_size: int | None = None,
    progress: Progress = no_progress,
    keep_ids: int | None = None,
    lineage_skew: float = DEFAULT_LINEAGE_SKEW,
) -> IngestReport:
    """Read, validate and append claims (and their sources and agents).

    ``source`` is a path — read twice, never held whole, its format from its suffix or
    ``fmt`` —, a binary stream such as ``sys.stdin.buffer`` — copied to a temporary file
    deleted afterwards, its format ``fmt`` (required: a stream has no suffix to tell it) and
    its lines named ``name:LINE`` —, or an iterable of records or dicts.

    ``recorded_at`` is the transaction time given to claims that do not carry one; it is
    passed in, never read from a clock here. In ``atomic`` mode any bad item refuses the
    whole input before anything is written; in ``best_effort`` mode bad items are reported
    and the rest is written. Once checked, records are written in batches of
    ``batch_size`` (not given: the store's, ``GafStore.bulk_batch`` — 2000, or what the capped
    page cache of an embedded store holds), one transaction each; should the store fail part
    way, the batches before stay written and running the same ingest again finishes it (ids already stored
    are no-ops).

    ``progress`` is told the items checked in the first pass (every thousand and at its end;
    how many there are is not known before), then the records written out of those to write,
    after each batch.
    The report lists every written and existing id, or the first ``keep_ids`` of each (its
    counts are always whole): a million ids are a hundred megabytes.

    ``fmt="openlineage"`` reads NDJSON of OpenLineage events (``gaf.lineage``); an event's
    eventTime more than ``lineage_skew`` seconds after ``recorded_at`` is refused.
    """
    with ExitStack() as spool:
        where: str | None = None
        chosen: str | None = None
        if isinstance(source, (str, Path)) or hasattr(source, "read"):
            if isinstance(source, (str, Path)):
                path, where, chosen = Path(source), name or str(source), fmt or format_of(Path(source))
                _check_regular(path)
            elif fmt is None:
                raise UnknownFormat("the format of a stream cannot be told from its name", where=name,
                                    hint="name it: --format jsonl, csv, yaml or openlineage (fmt= in Python)")  # fmt: skip
            else:
                where, chosen = name or "<stream>", fmt
                path = spool.enter_context(_spooled(source, fmt, where))  # type: ignore[arg-type]
            stamp = _file_stamp(path)
            converted = spool.enter_context(_converted(path, where, recorded_at, lineage_skew)) if chosen == "openlineage" else None

            def reread() -> Iterator[Item]:
                if converted is not None:
                    return _converted_items(converted)
                return items_of(path, chosen, name=where, at=recorded_at, skew=lineage_skew)
        else:
            given = [Item(r.to_json() if isinstance(r, Record) else r, f"item {i}") for i, r in enumerate(source)]

            def reread() -> Iterator[Item]:
                return iter(given)

        ranks = [2] if chosen == "csv" else None  # CSV holds claims alone
        checked = _check(store, reread, recorded_at, ranks=ranks, progress=progress)
        if checked.failed and mode == "atomic":
            raise BatchRejected([e.error for e in checked.failed], where=where)
        if where is not None and _file_stamp(path) != stamp:
            raise InvalidRecord("the file changed while it was being checked; nothing written", where=where, hint="run the ingest again")
        report = IngestReport(read=checked.read)
        report.write.failed = list(checked.failed)
        lacking: list[Closure] = []
        batches = _batches(_to_write(store, reread, recorded_at, checked, lacking), checked.placed, store.bulk_batch(batch_size))
        done = 0
        progress(WRITING, done, checked.records)
        for written in store.put_batches(batches, mode=mode, at=recorded_at):
            report.add(written, keep_ids)
            done += len(written.written) + len(written.existing) + len(written.failed)
            progress(WRITING, done, checked.records)
        if lacking:
            report.add(_cones_for_closures(store, lacking, recorded_at, mode), keep_ids)
        return report


@contextmanager
def _converted(path: Path, name: str, at: datetime, skew: float) -> Iterator[Path | None]:
    """OpenLineage events read once into the items they become, kept in a temporary file of
    ``[where, item]`` lines and deleted afterwards: an ingest reads its input up to six times
    (two passes, three ranks of kinds), and each reading of the events themselves would check
    every event again. None when an event is refused: the events are then read each time, so
    every refusal is reported where it is, as for any input."""
    with tempfile.TemporaryDirectory(prefix="gaf-lineage-") as folder:
        out = Path(folder) / "items.jsonl"
        refused = False
        with out.open("w", encoding="utf-8") as f:
            for item in _openlineage_items(path, name, at, skew):
                if "__error__" in item.data:
                    refused = True
                    break
                f.write(json.dumps([item.where, item.data], ensure_ascii=False) + "\n")
        yield None if refused else out


def _converted_items(path: Path) -> Iterator[Item]:
    with path.open(encoding="utf-8") as f:
        for line in f:
            where, data = json.loads(line)
            yield Item(data, where)


@contextmanager
def _spooled(stream: BinaryIO, fmt: str, name: str) -> Iterator[Path]:
    """A stream copied to a temporary file, deleted afterwards: an ingest reads its input twice.

    The bytes are counted as they are copied, and a stream longer than the input size limit
    (GAF_MAX_INPUT_BYTES) is refused when it passes it: a pipe has no size to check first,
    and ``cat /dev/zero | gaf ingest -`` would otherwise fill the disk."""
    limit = max_input_bytes()
    with tempfile.TemporaryDirectory(prefix="gaf-ingest-") as folder:
        path = Path(folder) / f"input.{fmt}"
        copied = 0
        with path.open("wb") as copy:
            while chunk := stream.read(1 << 20):
                data = chunk.encode("utf-8") if isinstance(chunk, str) else chunk  # a text stream as UTF-8
                copied += len(data)
                if copied > limit:
                    raise PayloadTooLarge(f"the stream is over the limit of {limit} bytes; nothing written", where=name,
                                          hint="split it into several inputs, or raise GAF_MAX_INPUT_BYTES")  # fmt: skip
                copy.write(data)
        yield path


@dataclass
class IngestReport:
    """What an ingest did, item by item where something went wrong."""

    read: int = 0
    #: how many records were written, and how many were already stored
    written: int = 0
    existing: int = 0
    #: their ids (all, or the first ``keep_ids`` of each), and every item refused
    write: WriteReport = field(default_factory=WriteReport)

    def add(self, batch: WriteReport, keep: int | None = None) -> None:
        """Count one batch's writes in, keeping at most ``keep`` ids of each list."""
        self.written += len(batch.written)
        self.existing += len(batch.existing)
        self.write.written += batch.written if keep is None else batch.written[: max(0, keep - len(self.write.written))]
        self.write.existing += batch.existing if keep is None else batch.existing[: max(0, keep - len(self.write.existing))]
        self.write.failed += batch.failed

    def to_dict(self) -> dict[str, Any]:
        return {"read": self.read, "written": self.written, "existing": self.existing, "failed": [f.to_dict() for f in self.write.failed]}


def _file_stamp(path: Path) -> tuple[int, int] | None:
    """A file's size and modification time: the second pass reads what the first checked only if they hold."""
    try:
        info = path.stat()
    except OSError:
        return None  # refused by name when it is read
    return info.st_size, info.st_mtime_ns


def _cones_for_closures(store: GafStore, lacking: list[Closure], at: datetime, mode: Mode) -> WriteReport:
    """The cone of each closure ingested without one (records exported from another store, or
    from one written before cones were recorded), as ``close`` records it, written after the
    input: a closure is never stored without the cone impact finds it by. Its policy and
    rules come from the store, where the input has put them by now; a closure whose policy
    or rules are not there was refused by the write, and so is the cone made for it."""
    cones = cones_for(lacking, lambda ids: store.get_many(ids))
    return store.put([cones[k] for k in sorted(cones)], at=at, mode=mode)


def resolve_items(store: GafStore, items: list[Item], recorded_at: datetime) -> list[Record]:
    """The records of some items, checked and with keys resolved, without writing anything."""
    checked = _check(store, lambda: iter(items), recorded_at, ranks=None)
    if checked.failed:
        raise BatchRejected([e.error for e in checked.failed])
    return [r for _, _, r in _records(store, lambda: iter(items), recorded_at, checked.ranks) if isinstance(r, Record)]


#: The ids of the sources and agents a batch has read so far, by (kind, key): what a later item's key names.
Keyed = dict[tuple[str, str], str]


@dataclass
class _Checked:
    """What the first pass over an input keeps for the second: no records."""

    read: int
    #: how many records the second pass writes (before the cones it adds)
    records: int
    #: the ranks of kinds the input holds (``_kind_rank``), each one read of it
    ranks: list[int]
    #: each id the input points at and brings itself: the position of the first record bringing it
    placed: dict[str, int]
    #: the items refused, by index
    failed: list[ItemError]
    #: the closures given without their cone
    lacking: set[str]


def _check(store: GafStore, reread: Reread, recorded_at: datetime, *, ranks: list[int] | None,
           progress: Progress = no_progress) -> _Checked:  # fmt: skip
    """The first pass: every item resolved and checked, and every reference found in the input
    or the store, keeping only ids. ``ranks`` are the ranks of kinds the input holds when the
    format tells (a CSV file holds claims alone), else found by the first read."""
    present = set(ranks or ())
    brought = _Brought()
    wanted: set[str] = set()
    closures: set[str] = set()
    coned: set[str] = set()
    failed: list[ItemError] = []
    read = position = 0
    for index, item, found in _records(store, reread, recorded_at, ranks, present):
        read += 1
        if read % ITEMS_BATCH == 0:
            progress(CHECKING, read, None)
        if isinstance(found, GafError):
            failed.append(ItemError(index, item.data.get("id") if "__error__" not in item.data else None, found))
            continue
        own = brought.add(found, position)
        wanted.update(t for _, t in found.edges() if t not in own)
        if isinstance(found, Closure):
            closures.add(found.id)
        elif isinstance(found, Cone):
            coned.add(found.closure)
        position += 1
    progress(CHECKING, read, None)
    placed = brought.first_places(wanted)
    outside = wanted - placed.keys()
    missing = outside - store.exists(outside)
    dangling = _pointing_at(store, reread, recorded_at, sorted(present), missing) if missing else []
    return _Checked(read=read, records=position - len(dangling), ranks=sorted(present), placed=placed,
                    failed=sorted(failed + dangling, key=lambda e: e.index), lacking=closures - coned)  # fmt: skip


def _records(
    store: GafStore, reread: Reread, recorded_at: datetime, ranks: list[int] | None, present: set[int] | None = None
) -> Iterator[tuple[int, Item, Record | GafError]]:
    """Each item of an input resolved to its record, or the error refusing it, with its index.

    Items are resolved in dependency order of kinds — agents, then sources, then the rest,
    each one read of the input — so a key always refers to a record already read. With
    ``ranks`` None, the first read notes in ``present`` the ranks there are, and the reads
    of ranks absent are skipped; every pass over the same input resolves it the same way.
    """
    keyed: Keyed = {}
    for rank in (0, 1, 2):
        if (rank not in ranks) if ranks is not None else (rank > 0 and present is not None and rank not in present):
            continue
        for index, item in enumerate(reread()):
            its = _kind_rank(item.data.get("kind"))
            if ranks is None and rank == 0 and present is not None:
                present.add(its)
            if its != rank:
                continue
            try:
                record = _resolve_one(store, item, keyed, recorded_at)
            except GafError as exc:
                yield index, item, exc
                continue
            key = getattr(record, "key", None)
            if record.KIND in KEYED_KINDS and key:
                keyed[(record.KIND, key)] = record.id
            yield index, item, record


class _Brought:
    """Where each id an input brings — its records and the records they imply — is first
    brought, in 12 bytes an id: 64 bits of the id's hash and the position (32 bits) of the
    record bringing it. Asked once, at the end, about the ids the input points at.

    Two ids sharing those 64 bits (about one chance in 10^12 for a million records) would
    let a reference to a missing id pass this check; the write still refuses it, checking
    every reference inside its transaction."""

    def __init__(self) -> None:
        self._prints = array("Q")
        self._places = array("I")  # positions below 2**32

    def add(self, record: Record, position: int) -> set[str]:
        """Note the ids a record brings, and return them."""
        own = {record.id, *(r.id for r in record.implied())}
        for rid in own:
            self._prints.append(_fingerprint(rid))
            self._places.append(position)
        return own

    def first_places(self, ids: set[str]) -> dict[str, int]:
        """Of these ids, the ones brought, each with the first position bringing it (looked up 65 536
        at a time, so the lookup adds a megabyte or two whatever the input's length)."""
        if not ids or not self._prints:
            return {}
        import numpy  # here, not at the top: every gaf command imports this module, few read a file this way

        asked = numpy.array(sorted({_fingerprint(i) for i in ids}), dtype=numpy.uint64)
        named = {_fingerprint(i): i for i in ids}
        prints = numpy.frombuffer(self._prints, dtype=numpy.uint64)
        places = numpy.frombuffer(self._places, dtype=numpy.uint32)
        out: dict[str, int] = {}
        for start in range(0, len(prints), _LOOKUP):
            chunk = prints[start : start + _LOOKUP]
            slot = numpy.minimum(numpy.searchsorted(asked, chunk), len(asked) - 1)
            hits = numpy.flatnonzero(asked[slot] == chunk)
            for mark, place in zip(chunk[hits].tolist(), places[start + hits].tolist(), strict=True):
                rid = named[mark]
                out[rid] = min(place, out.get(rid, place))
        return out


#: How many fingerprints ``_Brought.first_places`` compares at once.
_LOOKUP = 1 << 16


def _fingerprint(record_id: str) -> int:
    """The first 64 bits of an id's hash (ids are ``kind:`` and 64 hex digits)."""
    return int(record_id[record_id.index(":") + 1 :][:16], 16)


def _pointing_at(store: GafStore, reread: Reread, recorded_at: datetime, ranks: list[int], missing: set[str]) -> list[ItemError]:
    """Each record of the input that points at an id neither in the input nor stored, refused
    naming the first such reference (one more read, only when there are any)."""
    # Not dangling(): direct references only; the write refuses what points at a refused record.
    out: list[ItemError] = []
    for index, item, found in _records(store, reread, recorded_at, ranks):
        if isinstance(found, GafError):
            continue
        hit = next(((rel, t) for rel, t in found.edges() if t in missing), None)
        if hit is not None:
            rel, target = hit
            out.append(ItemError(index, found.id, UnknownReference(f"{rel} points at {target}, which is not stored", where=item.where)))
    return out


def _to_write(store: GafStore, reread: Reread, recorded_at: datetime, checked: _Checked, lacking: list[Closure]) -> Iterator[tuple[int, Record]]:
    """The second pass: each record to write with its position in the first, resolved again
    the same way; the closures given without a cone are set aside in ``lacking``."""
    refused = {e.index for e in checked.failed}
    position = -1
    for index, item, found in _records(store, reread, recorded_at, checked.ranks):
        if isinstance(found, GafError):
            if index in refused:
                continue
            raise found  # the store changed under the ingest (a key another writer has since made ambiguous)
        position += 1
        if index in refused:
            continue
        if found.id in checked.lacking:
            lacking.append(found)  # type: ignore[arg-type]  # lacking holds closure ids only
        yield position, found


def _batches(records: Iterable[tuple[int, Record]], placed: dict[str, int], size: int) -> Iterator[list[Record]]:
    """Records in batches of ``size`` in the order read, but for those pointing at a record the
    input brings later, or at one so held back: they are held back, and written last, each
    after the records it points at. An input in dependency order is written holding one
    batch; only its forward references are held."""
    held: list[Record] = []
    holding: set[str] = set()
    batch: list[Record] = []
    for position, record in records:
        if any(placed.get(t, -1) > position or t in holding for _, t in record.edges()):
            held.append(record)
            holding.update([record.id, *(r.id for r in record.implied())])
            continue
        batch.append(record)
        if len(batch) == size:
            yield batch
            batch = []
    rest = batch + _dependency_order(held)
    for start in range(0, len(rest), size):
        yield rest[start : start + size]


def _refuse_nul(value: Any, where: str, path: str = "") -> None:
    """Refuse a NUL character anywhere in an item, however it was written: JSON's parser refuses a
    raw one but decodes ``\\u0000``, YAML decodes ``"\\0"``; no store keeps it faithfully."""
    if isinstance(value, str):
        if "\x00" in value:
            raise InvalidRecord(f"{path or 'a value'} holds a NUL character (U+0000)", where=where,
                                hint="remove it: gaf refuses NUL however it is escaped")  # fmt: skip
    elif isinstance(value, dict):
        for key, inner in value.items():
            _refuse_nul(key, where, path)
            _refuse_nul(inner, where, f"{path}.{key}" if path else str(key))
    elif isinstance(value, list):
        for i, inner in enumerate(value):
            _refuse_nul(inner, where, f"{path}[{i}]")


def _kind_rank(kind: Any) -> int:
    return {"agent": 0, "source": 1}.get(kind, 2) if isinstance(kind, str) else 2


def _resolve_one(store: GafStore, item: Item, keyed: Keyed, recorded_at: datetime) -> Record:
    if "__error__" in item.data:
        raise item.data["__error__"]
    data = dict(item.data)
    _refuse_nul(data, item.where)
    cls = record_type(data["kind"], where=item.where) if "kind" in data else None
    if cls is None:
        raise InvalidRecord("record has no 'kind'", where=item.where, hint=f"one of: {', '.join(sorted(RECORD_TYPES))}")
    for name, (_, kinds) in cls.REFS.items():
        if name in data:
            data[name] = _resolve_refs(store, data[name], kinds, keyed, f"{item.where} ({name})")
    if "recorded_at" in cls.model_fields and "recorded_at" not in data:
        data["recorded_at"] = format_instant(recorded_at)
    return parse_record(data, where=item.where)


def _resolve_refs(store: GafStore, value: Any, kinds: tuple[str, ...], keyed: Keyed, where: str) -> Any:
    if isinstance(value, list):
        return [resolve_key(store, v, kinds, keyed, where) for v in value]
    return resolve_key(store, value, kinds, keyed, where)


def resolve_key(store: GafStore, value: Any, kinds: tuple[str, ...], keyed: Keyed, where: str) -> Any:
    """An id as given, or the id of the one source/agent with this key."""
    if not isinstance(value, str) or ID_PATTERN.match(value) or not set(kinds) & set(KEYED_KINDS):
        return value
    found = {keyed[(k, value)] for k in kinds if (k, value) in keyed}
    if not found:
        found = {r.id for k in kinds if k in KEYED_KINDS for r in store.find(k, key=value)}
    if len(found) > 1:
        raise AmbiguousReference(f"key {value!r} names {len(found)} records: {', '.join(sorted(found))}", where=where, hint="use the id")
    if not found:
        raise UnknownReference(
            f"no {' or '.join(k for k in kinds if k in KEYED_KINDS)} with key {value!r} in the input or the store",
            where=where,
            hint="declare it before the claims that use it, or use an id",
        )
    return found.pop()


def _dependency_order(records: list[Record]) -> list[Record]:
    """Records sorted so each comes after the records of the input it points at."""
    by_id = {r.id: r for r in records}
    depth: dict[str, int] = {}

    def depth_of(record: Record) -> int:
        if record.id not in depth:
            depth[record.id] = 1 + max((depth_of(by_id[t]) for _, t in record.edges() if t in by_id), default=0)
        return depth[record.id]

    return sorted(records, key=depth_of)
