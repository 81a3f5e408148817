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
import io
import json
import math
import re
from collections.abc import Callable, Hashable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

import yaml

from gaf.canonical import ID_PATTERN
from gaf.errors import (
    AmbiguousReference,
    BatchRejected,
    DuplicateKey,
    GafError,
    InvalidRecord,
    LeadingZero,
    PayloadTooLarge,
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
from gaf.settings import DEFAULT_MAX_INPUT_BYTES as DEFAULT_MAX_INPUT_BYTES
from gaf.store.base import GafStore, ItemError, Mode, WriteReport
from gaf.types import WrittenNumber, format_instant

Format = Literal["jsonl", "csv", "yaml"]

#: Records per write transaction when ingesting files.
DEFAULT_BATCH = 2000

#: Kinds that people refer to by key instead of id.
KEYED_KINDS = ("source", "agent")


@dataclass
class Item:
    """One record's worth of input, with the place it came from."""

    data: dict[str, Any]
    where: str


@dataclass
class IngestReport:
    """What an ingest did, item by item where something went wrong."""

    read: int = 0
    write: WriteReport = field(default_factory=WriteReport)

    def to_dict(self) -> dict[str, Any]:
        return {"read": self.read, **self.write.to_dict()}


# ---------------------------------------------------------------------- reading files


def read_items(path: str | Path, fmt: Format | None = None) -> list[Item]:
    """The items of a claims file, each with its file:line."""
    path = Path(path)
    fmt = fmt or _format_of(path)
    text = read_text(path)
    reader = {"jsonl": _jsonl_items, "csv": _csv_items, "yaml": _yaml_items}[fmt]
    return list(reader(text, str(path)))


def max_input_bytes() -> int:
    """The size limit of one input file in force here: 256 MiB unless set with
    ``with gaf.records.limits(max_input_bytes=…):`` (the CLI sets it from GAF_MAX_INPUT_BYTES)."""
    return current_limits().max_input_bytes


def read_text(path: Path) -> str:
    """The text of an input file, refused with its name if it is missing, unreadable, too large or not UTF-8.

    Files are read whole, so the size is checked first: a file many times larger
    than anyone meant to send is refused before it fills the memory.
    """
    try:
        size, limit = path.stat().st_size, max_input_bytes()
        if size > limit:
            raise PayloadTooLarge(
                f"the file is {size} bytes, over the limit of {limit}",
                where=str(path),
                hint="split it into several files, or raise GAF_MAX_INPUT_BYTES",
            )
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InvalidRecord(f"no such file: {path}") from None
    except UnicodeDecodeError as exc:
        raise InvalidRecord(f"not UTF-8 text: {exc}", where=str(path)) from None
    except OSError as exc:
        raise InvalidRecord(f"cannot read the file: {exc.strerror or exc}", where=str(path)) from None


def _format_of(path: Path) -> Format:
    suffix = path.suffix.lower()
    if suffix in (".jsonl", ".ndjson", ".json"):
        return "jsonl"
    if suffix == ".csv":
        return "csv"
    if suffix in (".yaml", ".yml"):
        return "yaml"
    raise InvalidRecord(f"cannot tell the format of {path} from its suffix", hint="use .jsonl, .csv or .yaml, or pass the format")


def _jsonl_items(text: str, name: str) -> Iterator[Item]:
    limit = max_record_bytes()
    for number, line in enumerate(text.splitlines(), start=1):
        where = f"{name}:{number}"
        if not line.strip():
            continue
        if len(line.encode("utf-8")) > limit:
            yield Item({"__error__": PayloadTooLarge(f"line is over the limit of {limit} bytes", where=where)}, where)
            continue
        try:
            data = json.loads(line, parse_float=WrittenNumber)  # a value exactly as written
        except json.JSONDecodeError as exc:
            yield Item({"__error__": InvalidRecord(f"not JSON: {exc.msg} at column {exc.colno}", where=where)}, where)
            continue
        except RecursionError:
            yield Item({"__error__": InvalidRecord(TOO_DEEP, where=where)}, where)
            continue
        yield Item(data if isinstance(data, dict) else {"__error__": InvalidRecord("a line must hold a JSON object", where=where)}, where)


#: CSV columns of a claim with one statement per row.
CSV_COLUMNS = (
    "source", "observer", "observed_at", "recorded_at", "transformation", "scope",
    "subject", "predicate", "object", "value", "unit", "currency", "valid_from", "valid_to", "polarity",
    "payload_digest", "failure_modes",
)  # fmt: skip


def _csv_items(text: str, name: str) -> Iterator[Item]:
    reader = csv.DictReader(io.StringIO(text))
    unknown = set(reader.fieldnames or ()) - set(CSV_COLUMNS) - {"kind"}
    if unknown:
        raise InvalidRecord(f"unknown CSV columns {sorted(unknown)}", where=f"{name}:1", hint=f"columns: {', '.join(CSV_COLUMNS)}")
    try:
        for row in reader:
            where = f"{name}:{reader.line_num}"
            extra = row.pop(None, None)
            if extra:
                yield Item({"__error__": InvalidRecord(f"{len(extra)} more field(s) than the header names", where=where)}, where)
                continue
            yield Item(_claim_from_row({k: v for k, v in row.items() if v not in (None, "")}), where)
    except csv.Error as exc:
        raise InvalidRecord(f"not valid CSV: {exc}", where=f"{name}:{reader.line_num + 1}") from None


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
        value = json.loads(text, parse_float=WrittenNumber)  # a value exactly as written
    except json.JSONDecodeError:
        return text
    return value if isinstance(value, (int, float, bool)) else text


def _yaml_items(text: str, name: str) -> Iterator[Item]:
    with reading_yaml(text, name) as loader:
        while loader.check_node():
            node = loader.get_node()
            if node is None:  # check_node has just seen one: None is only the end of the stream
                break
            items = node.value if isinstance(node, yaml.SequenceNode) else [node]
            for item in items:
                where = f"{name}:{item.start_mark.line + 1}"
                try:
                    check_yaml_size(item, where)
                except PayloadTooLarge as exc:
                    yield Item({"__error__": exc}, where)
                    continue
                data = loader.construct_object(item, deep=True)
                if not isinstance(data, dict):
                    data = {"__error__": InvalidRecord("each item must be a mapping with a 'kind'", where=where)}
                yield Item(yaml_plain(data), where)


#: Why a document nested deeper than Python's parsers go is refused.
TOO_DEEP = "nested too deeply to be a record"


# ---------------------------------------------------------------------- reading YAML
# Every file gaf reads as YAML — claims, sources and agents, authority files, policies,
# verdict rules, derivation rules — goes through reading_yaml, so one set of rules
# decides what a plain scalar means everywhere.


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
    try:
        return int(text, 0) if text.lstrip("+-")[:2].lower() in ("0o", "0x") else int(text, 10)
    except ValueError:
        raise InvalidRecord(f"{text!r} is not a YAML 1.2 integer", where=yaml_place(node.start_mark)) from None


def _float(loader: YamlLoader, node: yaml.ScalarNode) -> float:
    """A YAML 1.2 float, kept as written (``WrittenNumber``): a statement's value reads it as the
    exact decimal written (``25.00`` is 25, ``0.1`` one tenth), a field that is a float by
    nature (a qualifier, a confidence) as the float it always was."""
    text = loader.construct_scalar(node)
    special = {".inf": math.inf, "+.inf": math.inf, "-.inf": -math.inf, ".nan": math.nan}.get(text.lower())
    try:
        return special if special is not None else WrittenNumber(text)
    except ValueError:
        raise InvalidRecord(f"{text!r} is not a YAML 1.2 float", where=yaml_place(node.start_mark)) from None


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
):
    YamlLoader.add_implicit_resolver(_tag, re.compile(f"^(?:{_pattern})$"), _first)
for _tag, _construct in (
    (_LEADING_ZERO, _leading_zero),
    ("tag:yaml.org,2002:bool", _bool),
    ("tag:yaml.org,2002:int", _int),
    ("tag:yaml.org,2002:float", _float),
):
    YamlLoader.add_constructor(_tag, _construct)


@contextmanager
def reading_yaml(text: str, name: str) -> Iterator[YamlLoader]:
    """The one YAML reader of gaf, over a file's text: YAML 1.2, errors typed with file, line and column.

    Control characters are refused before anything is read; a document nested
    deeper than the parser goes is refused by name.
    """
    try:
        loader = YamlLoader(text)
    except yaml.reader.ReaderError as exc:
        before = text[: exc.position]
        line, column = before.count("\n") + 1, exc.position - (before.rfind("\n") + 1) + 1
        raise InvalidRecord(
            f"not valid YAML: unacceptable character #x{exc.character:04x}: {exc.reason}", where=f"{name}:{line}:{column}"
        ) from None
    loader.name = name  # every mark, and so every error, names the file
    try:
        yield loader
    except yaml.YAMLError as exc:
        raise yaml_error(exc, name) from None
    except RecursionError:
        raise InvalidRecord(TOO_DEEP, where=name) from None
    finally:
        loader.dispose()


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


def ingest(
    store: GafStore,
    source: str | Path | Iterable[Record | dict[str, Any]],
    *,
    recorded_at: datetime,
    mode: Mode = "atomic",
    fmt: Format | None = None,
    batch_size: int = DEFAULT_BATCH,
    progress: Callable[[int, int], None] | None = None,
) -> IngestReport:
    """Read, validate and append claims (and their sources and agents).

    ``recorded_at`` is the transaction time given to claims that do not carry
    one; it is passed in, never read from a clock here. In ``atomic`` mode any bad
    item refuses the whole input before anything is written; in ``best_effort``
    mode bad items are reported and the rest is written. ``progress`` is called
    with (records written so far, total) after each batch.
    """
    if isinstance(source, (str, Path)):
        items = read_items(source, fmt)
    else:
        items = [
            Item(r.to_json() if isinstance(r, Record) else r, f"item {i}") for i, r in enumerate(source)
        ]
    records, errors = _resolve(store, items, recorded_at)
    records += _cones_for_closures(store, records)
    report = IngestReport(read=len(items))
    if errors and mode == "atomic":
        raise BatchRejected([e.error for e in errors], where=str(source) if isinstance(source, (str, Path)) else None)
    report.write.failed = errors
    ordered = _dependency_order(records)
    batches = [ordered[start : start + batch_size] for start in range(0, len(ordered), batch_size)]
    done = 0
    for batch, written in zip(batches, store.put_batches(batches, mode=mode, at=recorded_at)):
        report.write.merge(written)
        done += len(batch)
        if progress:
            progress(done, len(ordered))
    return report


def _cones_for_closures(store: GafStore, records: list[Record]) -> list[Record]:
    """The cone of each closure being ingested without one (records exported from another
    store, or from one written before cones were recorded), as ``close`` records it: a
    closure is never stored without the cone impact finds it by. Its policy and rules come
    from the batch or the store; a closure whose policy or rules are neither is refused by
    the write, and so is the cone made for it."""
    given = {r.id: r for r in records}
    coned = {r.closure for r in records if isinstance(r, Cone)}
    lacking = [r for r in records if isinstance(r, Closure) and r.id not in coned]
    if not lacking:
        return []
    cones = cones_for(lacking, lambda ids: {**store.get_many(i for i in ids if i not in given), **given})
    return [cones[k] for k in sorted(cones)]


def resolve_items(store: GafStore, items: list[Item], recorded_at: datetime) -> list[Record]:
    """The records of some items, checked and with keys resolved, without writing anything."""
    records, errors = _resolve(store, items, recorded_at)
    if errors:
        raise BatchRejected([e.error for e in errors])
    return records


#: The ids of the sources and agents a batch has read so far, by (kind, key): what a later item's key names.
Keyed = dict[tuple[str, str], str]


def _resolve(store: GafStore, items: list[Item], recorded_at: datetime) -> tuple[list[Record], list[ItemError]]:
    """Records from items: keys turned into ids, defaults filled, each checked.

    Items are resolved in dependency order of kinds (agents, then sources, then
    the rest), so a key always refers to a record already read.
    """
    keyed: Keyed = {}
    origin: dict[str, int] = {}
    records: list[Record] = []
    errors: list[ItemError] = []
    order = sorted(range(len(items)), key=lambda i: _kind_rank(items[i].data.get("kind")))
    for index in order:
        item = items[index]
        try:
            record = _resolve_one(store, item, keyed, recorded_at)
        except GafError as exc:
            errors.append(ItemError(index, item.data.get("id") if "__error__" not in item.data else None, exc))
            continue
        records.append(record)
        origin.setdefault(record.id, index)
        key = getattr(record, "key", None)
        if record.KIND in KEYED_KINDS and key:
            keyed[(record.KIND, key)] = record.id
    _check_stored_refs(store, records, items, origin, errors)
    errors.sort(key=lambda e: e.index)
    return records, errors


def _kind_rank(kind: Any) -> int:
    return {"agent": 0, "source": 1}.get(kind, 2) if isinstance(kind, str) else 2


def _resolve_one(store: GafStore, item: Item, keyed: Keyed, recorded_at: datetime) -> Record:
    if "__error__" in item.data:
        raise item.data["__error__"]
    data = dict(item.data)
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


def _check_stored_refs(
    store: GafStore, records: list[Record], items: list[Item], origin: dict[str, int], errors: list[ItemError]
) -> None:
    """Refuse, before writing, records pointing at ids neither in the input nor stored."""
    # Not dangling(): direct references only, over the whole input before it is cut into batches; put refuses the rest.
    in_input = {r.id for r in records} | {i.id for r in records for i in r.implied()}
    wanted = {t for r in records for _, t in r.edges()} - in_input
    missing = wanted - store.exists(wanted)
    for record in [r for r in records if any(t in missing for _, t in r.edges())]:
        rel, target = next((rel, t) for rel, t in record.edges() if t in missing)
        index = origin[record.id]
        records.remove(record)
        errors.append(
            ItemError(index, record.id, UnknownReference(f"{rel} points at {target}, which is not stored", where=items[index].where))
        )


def _dependency_order(records: list[Record]) -> list[Record]:
    """Records sorted so each comes after the records of the input it points at."""
    by_id = {r.id: r for r in records}
    depth: dict[str, int] = {}

    def depth_of(record: Record) -> int:
        if record.id not in depth:
            depth[record.id] = 1 + max((depth_of(by_id[t]) for _, t in record.edges() if t in by_id), default=0)
        return depth[record.id]

    return sorted(records, key=depth_of)
