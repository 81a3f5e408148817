"""The machinery every record kind shares: content ids, the size limit, the graph declarations.

Every record is a frozen pydantic model. Its id is ``kind:`` plus the sha256 of the
RFC 8785 canonical JSON of its identity fields, computed once when the record is
built; a record whose stated id differs from its content is refused. Nothing here
imports anything of gaf but the value types: records are the bottom of the tree.

A record also says how it sits in the graph: which of its fields point at other
records (``REFS``, each becoming a relationship), which records it implies (a claim
implies the propositions it states), and which scalar fields are copied onto the
node as properties for Cypher to filter on. The stores read these declarations;
they never learn a record kind by name.
"""

from __future__ import annotations

import json
import types
import typing
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import datetime
from enum import Enum
from typing import Annotated, Any, ClassVar, Literal, Self

from pydantic import BaseModel, Field, ValidationInfo, model_validator

from gaf.canonical import DECIMAL_TAG, canonical_json, digest, kind_of
from gaf.errors import IdMismatch, InvalidRecord, PayloadTooLarge
from gaf.settings import DEFAULT_MAX_INPUT_BYTES
from gaf.settings import DEFAULT_MAX_RECORD_BYTES as DEFAULT_MAX_RECORD_BYTES
from gaf.types import Column, Value

#: The key, in a record's validation context, of the bytes it is read from (``Record._identified_by``).
STORED_BODY = "gaf_stored_body"
#: Node properties every record has; no record field may take these names.
RESERVED_PROPERTIES = frozenset({"id", "kind", "body", "written_at"})


@dataclass(frozen=True)
class Limits:
    """The size limits in force: one record's canonical JSON, one input file (bytes)."""

    max_record_bytes: int = DEFAULT_MAX_RECORD_BYTES
    max_input_bytes: int = DEFAULT_MAX_INPUT_BYTES


#: The limits of the running context; the built-in defaults unless ``limits()`` set others.
_LIMITS: ContextVar[Limits] = ContextVar("gaf_limits", default=Limits())


@contextmanager
def limits(*, max_record_bytes: int | None = None, max_input_bytes: int | None = None) -> Iterator[Limits]:
    """Build and read records under these size limits until the block ends.

    A record's size is checked where its body is computed, deep inside validation, so
    the limits are a context rather than a parameter: ``with gaf.records.limits(
    max_record_bytes=4096): ingest(store, path, recorded_at=at)``. A limit not given keeps
    the enclosing one (at the outside, the defaults: 1 MiB a record, 256 MiB a file).
    The CLI enters it for each command with ``Settings.max_record_bytes`` and
    ``Settings.max_input_bytes`` (GAF_MAX_RECORD_BYTES, GAF_MAX_INPUT_BYTES); the
    library itself reads no environment."""
    outer = _LIMITS.get()
    chosen = Limits(
        outer.max_record_bytes if max_record_bytes is None else max_record_bytes,
        outer.max_input_bytes if max_input_bytes is None else max_input_bytes,
    )
    for name, value in vars(chosen).items():
        if type(value) is not int or value <= 0:
            raise InvalidRecord(f"{name} must be a positive integer, got {value!r}")
    token = _LIMITS.set(chosen)
    try:
        yield chosen
    finally:
        _LIMITS.reset(token)


def current_limits() -> Limits:
    """The size limits in force here (see ``limits``)."""
    return _LIMITS.get()


def max_record_bytes() -> int:
    """The size limit of one record's canonical JSON in force here (see ``limits``)."""
    return _LIMITS.get().max_record_bytes


_SHARED: dict[tuple[type, Any], Any] = {}
K = typing.TypeVar("K")
V = typing.TypeVar("V")
_SHARED_MAX = 50_000


def kept(cache: dict[K, V], most: int, key: K, make: Callable[[], V], *, keep: bool = True) -> V:
    """What ``cache`` holds under ``key``, else ``make()``, kept there unless ``keep`` is false:
    the process's caches of immutable records (``Record.shared``, ``registry.parse_body``),
    each dropped whole when it reaches ``most`` entries."""
    found = cache.get(key)
    if found is None:
        found = make()
        if keep:
            if len(cache) >= most:
                cache.clear()
            cache[key] = found
    return found


def _plain_key(cls: type, fields: dict[str, Any]) -> tuple[type, Any] | None:
    """A ``Record.shared`` key without JSON, when every field is text, an integer, a flag, None, an
    enumeration's member or a list of texts (most records a projection builds): each value with its
    exact type, so 1, 1.0 and True are three keys, as their JSON is. None for anything else (a
    number that is not an integer, a nested model), which is keyed by its JSON."""
    out: list[tuple[Any, ...]] = []
    for name, value in fields.items():
        kind = type(value)
        if kind is str or value is None:
            out.append((name, value))  # text equals no other kind of value; None is one
        elif kind is list or kind is tuple:
            if not all(type(v) is str for v in value):
                return None
            out.append((name, kind, tuple(value)))
        elif kind is int or kind is bool or isinstance(value, Enum):
            out.append((name, kind, value))
        else:
            return None
    return (cls, tuple(out))


def _shared_key(value: Any) -> Any:
    """How a nested model appears in a ``Record.shared`` key: tagged, so no string equals it."""
    if isinstance(value, BaseModel):
        return {"$model": type(value).__qualname__, **value.model_dump(mode="json")}
    raise TypeError(f"no shared key for {type(value).__name__}")


class Record(Value):
    """Base of every stored record: frozen, content-addressed, append-only.

    Subclasses declare ``kind`` as a Literal field, the Neo4j label, the fields
    that are not part of identity, and the fields that reference other records.
    A kind is read, stored and listed in the schema once it is named in
    ``RECORD_TYPES`` (gaf/records/registry.py).
    """

    id: str = Field(default="", description="kind:sha256 of the canonical identity fields; computed, checked if given")

    KIND: ClassVar[str]
    LABEL: ClassVar[str]
    #: Fields kept in the record but left out of its id (e.g. transaction time).
    NON_IDENTITY: ClassVar[frozenset[str]] = frozenset()
    #: field name -> (relationship type, kinds the field may reference)
    REFS: ClassVar[dict[str, tuple[str, tuple[str, ...]]]] = {}
    #: relationships to implied records: type -> kinds they reach
    IMPLIED_RELS: ClassVar[dict[str, tuple[str, ...]]] = {}
    #: the field holding the record's own transaction time, if it has one
    TIME_FIELD: ClassVar[str | None] = None
    #: scalar fields copied onto the node, name -> column type (derived)
    COLUMNS: ClassVar[dict[str, str]] = {}
    #: the column names as ``model_dump`` takes them, and those that hold doubles (derived)
    COLUMN_NAMES: ClassVar[set[str]] = set()
    DOUBLE_COLUMNS: ClassVar[tuple[str, ...]] = ()
    #: a record about the store itself (its schema version), not of the chain: checked by
    #: verify, but neither counted among the store's records nor exported as provenance
    ABOUT_THE_STORE: ClassVar[bool] = False
    #: reference lists that grow with the ledger (a GAF's facts, a decision's accepted facts),
    #: which the stored body leaves to the record's relationships (``stored_body``): the node
    #: stays under the size limit however many members there are. The id still hashes the
    #: whole record, lists included, so it means what it always meant.
    MEMBERS: ClassVar[frozenset[str]] = frozenset()
    #: fields whose values name one record of the kind (a policy's name and version): no two
    #: records of the kind may share them. Every write refuses a second one in its transaction
    #: (``PolicyConflict``), Neo4j also by a uniqueness constraint, so concurrent writers
    #: cannot fork a version; ``gaf verify`` names any that got in behind gaf's back.
    UNIQUE: ClassVar[tuple[str, ...]] = ()
    #: a kind any store holds few of, whatever the ledger's size: configuration (policies, rules,
    #: sources, agents, grants) and what people decide one at a time (appeals, waivers). The
    #: embedded store keeps no primary-key hash index for it: LadybugDB's index costs every
    #: opening of the store about 3.8 MB of memory a table and its first keys up to a page each
    #: on disk (bench/store_size.py), and finding one of a few rows is reading them.
    FEW: ClassVar[bool] = False

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        kind_field = cls.model_fields.get("kind")
        if kind_field is None or "LABEL" not in cls.__dict__:
            return  # an abstract intermediate class
        cls.KIND = kind_field.default
        clash = RESERVED_PROPERTIES & (set(cls.model_fields) - {"id", "kind"})
        if clash:
            raise TypeError(f"{cls.__name__} uses reserved property names {sorted(clash)}")
        if stray := cls.MEMBERS - cls.REFS.keys():
            raise TypeError(f"{cls.__name__} holds {sorted(stray)} as relationships, but they are not references")
        cls.COLUMNS = {
            name: column
            for name, field in cls.model_fields.items()
            if name not in RESERVED_PROPERTIES and (column := _column_type(field.annotation))
        }
        cls.COLUMN_NAMES = set(cls.COLUMNS)
        cls.DOUBLE_COLUMNS = tuple(name for name, column in cls.COLUMNS.items() if column == "DOUBLE")
        if loose := set(cls.UNIQUE) - cls.COLUMNS.keys():
            raise TypeError(f"{cls.__name__} names {sorted(loose)} unique, but they are not node properties")

    @classmethod
    def shared(cls, **fields: Any) -> Self:
        """The record with these fields, built once per process and then shared.

        Records are immutable, so a projection re-run many times over nearly the same
        claims (what-if, sway) can reuse the propositions, evaluations and facts it built
        before instead of validating and hashing them again. Keyed by the fields as
        given (nested models by their JSON, tagged); the cache is dropped whole when it
        grows past ``_SHARED_MAX`` entries, so "once" is per cache generation."""
        key: tuple[type, Any] | None = _plain_key(cls, fields)
        if key is None:
            try:
                key = (cls, json.dumps(fields, sort_keys=True, default=_shared_key))
            except TypeError:
                return cls(**fields)  # a field the key cannot spell out: build it afresh
        return kept(_SHARED, _SHARED_MAX, key, lambda: cls(**fields))  # type: ignore[no-any-return]

    @model_validator(mode="after")
    def _identify(self, info: ValidationInfo) -> Record:
        stored = info.context.get(STORED_BODY) if info.context else None
        if stored is not None and self._identified_by(stored):
            return self
        body = {"kind": self.KIND, **self.model_dump(mode="json", exclude={"id", "kind"}, exclude_defaults=True)}
        self._check_refs()
        whole = canonical_json(body)
        held = [name for name in sorted(self.MEMBERS) if _held(body.get(name))]
        stored = canonical_json({k: v for k, v in body.items() if k not in held}) if held else None
        # The bodies are kept in pydantic's dict of private values, set here whole: declared as
        # private attributes, every record built paid pydantic's initialisation of their defaults
        # once per class it inherits from (about a third of building a proposition, timed by hand: no benchmark shows it).
        object.__setattr__(self, "__pydantic_private__", {"_body": whole, "_stored": stored})
        self._within_limit(len(self.stored_body))
        identity = whole
        if self.NON_IDENTITY:
            identity = canonical_json({k: v for k, v in body.items() if k not in self.NON_IDENTITY})
        expected = f"{self.KIND}:{digest(identity)}"
        if self.id and self.id != expected:
            raise IdMismatch(
                f"stated id {self.id} does not match the content, whose id is {expected}",
                hint="the record was altered after its id was computed, or the id was copied from another record",
            )
        object.__setattr__(self, "id", expected)
        return self

    def _identified_by(self, stored: bytes) -> bool:
        """Whether the bytes this record was read from are its whole canonical body, and it is
        identified by them: so when they hash to its stated id — the bytes written with it, not
        one changed — for a kind whose id is the hash of its whole body and whose node holds
        all of it (no ``NON_IDENTITY`` field, no ``MEMBERS``). Then nothing is dumped and
        canonicalised again to check it: a read of the store's records spent about half its
        time there (profiled). Any other bytes (one changed, a kind not so identified) are checked the
        long way, which says what does not match."""
        if self.NON_IDENTITY or self.MEMBERS or not self.id or self.id != f"{self.KIND}:{digest(stored)}":
            return False
        self._check_refs()
        self._within_limit(len(stored))
        object.__setattr__(self, "__pydantic_private__", {"_body": stored, "_stored": None})
        return True

    def _within_limit(self, size: int) -> None:
        """Refuse a record whose stored body is over the record size limit in force."""
        limit = max_record_bytes()
        if size > limit:
            raise PayloadTooLarge(
                f"{self.KIND} record is {size} bytes, over the limit of {limit}",
                hint="split the payload, or raise GAF_MAX_RECORD_BYTES",
            )

    def _check_refs(self) -> None:
        for name, (_, kinds) in self.REFS.items():
            for ref in _as_list(getattr(self, name)):
                if kind_of(ref) not in kinds:
                    raise ValueError(f"{name} must reference a {' or '.join(kinds)}, got {ref}")

    # The two bodies are read from pydantic's dict of private values (``_identify`` sets it), not
    # through ``BaseModel.__getattr__`` (about 3.5 µs against 0.1), paid for every record of a bulk write.

    @property
    def body(self) -> bytes:
        """The canonical JSON of the whole record."""
        return self.__pydantic_private__["_body"]  # type: ignore[index,no-any-return]

    @property
    def stored_body(self) -> bytes:
        """What the store keeps on the record's node: the whole record, but for the ``MEMBERS``
        lists, which its relationships hold (a store reads them back from there, sorted —
        so only a list that is a sorted set of ids is left out; any other stays in the body)."""
        private = self.__pydantic_private__
        stored = private["_stored"]  # type: ignore[index]
        return private["_body"] if stored is None else stored  # type: ignore[index,no-any-return]

    def props(self) -> dict[str, Any]:
        """The scalar fields copied onto the graph node, in their JSON spelling."""
        # Every column, in field order (no field of a record is left out of a dump): only the
        # doubles may need a change.
        dumped = self.model_dump(mode="json", include=self.COLUMN_NAMES)
        for name in self.DOUBLE_COLUMNS:
            dumped[name] = _as_double(dumped[name])
        return dumped

    def edges(self) -> list[tuple[str, str]]:
        """(relationship type, target id) for every record this one points at, sorted."""
        out = {(rel, ref) for name, (rel, _) in self.REFS.items() for ref in _as_list(getattr(self, name))}
        out.update(self.extra_edges())
        return sorted(out)

    def extra_edges(self) -> list[tuple[str, str]]:
        """Edges to implied records, for kinds that imply some."""
        return []

    def implied(self) -> list[Record]:
        """Records that exist because this one does (written in the same transaction)."""
        return []

    def implied_all(self) -> list[Record]:
        """``implied``, transitively (a claim's propositions, and the subject keys they imply),
        each once, in the order first met: what a write of this record writes besides it."""
        found: dict[str, Record] = {}
        todo = list(reversed(self.implied()))
        while todo:
            other = todo.pop()
            if other.id not in found:
                found[other.id] = other
                todo.extend(reversed(other.implied()))
        return list(found.values())

    def time(self) -> datetime | None:
        """When the record entered the system by its own account (e.g. a claim's recorded_at)."""
        return getattr(self, self.TIME_FIELD) if self.TIME_FIELD else None

    def to_json(self) -> dict[str, Any]:
        """The record as a JSON object, with its kind and id."""
        return {"kind": self.KIND, "id": self.id, **self.model_dump(mode="json", exclude={"id", "kind"}, exclude_none=True)}


def _held(value: Any) -> bool:
    """Whether a member list can be left to the relationships: a non-empty, strictly sorted list of
    ids, which is what reading the relationships back in id order gives."""
    return isinstance(value, list) and bool(value) and all(a < b for a, b in zip(value, value[1:]))


def _as_list(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    return list(value)


def _column_type(annotation: Any) -> str | None:
    """The store column type of a field, or None when it lives only in the body."""
    declared = _declared_column(annotation)
    if declared is not None:
        return declared
    annotation = _unwrap(annotation)
    origin = typing.get_origin(annotation)
    if origin is list:
        (item,) = typing.get_args(annotation)
        return "STRING[]" if _column_type(item) == "STRING" else None
    if origin is Literal:
        return "STRING" if all(isinstance(a, str) for a in typing.get_args(annotation)) else None
    if isinstance(annotation, type):
        if issubclass(annotation, bool):
            return "BOOLEAN"
        if issubclass(annotation, (str, datetime)):
            return "STRING"
        if issubclass(annotation, int):
            return "INT64"
        if issubclass(annotation, float):
            return "DOUBLE"
    return None


def _as_double(value: Any) -> Any:
    """A DOUBLE column's JSON value as the column holds it: a decimal a double cannot carry, as the nearest double."""
    if isinstance(value, dict) and DECIMAL_TAG in value:
        return float(value[DECIMAL_TAG])
    return value


def _declared_column(annotation: Any) -> str | None:
    """The column a type declares for itself (``gaf.types.Column``), looking through Optional."""
    origin = typing.get_origin(annotation)
    if origin is Annotated:
        found = [m.type for m in typing.get_args(annotation)[1:] if isinstance(m, Column)]
        return found[0] if found else _declared_column(typing.get_args(annotation)[0])
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        return _declared_column(args[0]) if len(args) == 1 else None
    return None


def _unwrap(annotation: Any) -> Any:
    """Strip Annotated and a single Optional from an annotation."""
    while True:
        origin = typing.get_origin(annotation)
        if origin is Annotated:
            annotation = typing.get_args(annotation)[0]
        elif origin in (typing.Union, types.UnionType):
            args = [a for a in typing.get_args(annotation) if a is not type(None)]
            if len(args) != 1:
                return None
            annotation = args[0]
        else:
            return annotation
