"""The questions the layers above ask a store, each a named, typed method over named Cypher.

Every Cypher statement that gaf runs outside a write lives in this module, as a
constant (or a table of constants built from the record classes) with a comment
that says what question it answers. The methods are written once, in the portable
subset both stores speak, over one abstract ``_rows(cypher, params)``: a store runs
each question in its own read transaction (``GafStore``), and ``Snapshot`` runs many
in one, so a walk sees one state of the graph while writers append to it.

Where the two stores differ (how a relationship's type is named, whether an
``UNWIND`` of ids is an index seek), the difference is settled here, by dialect;
no module above ``gaf/store`` needs to know which store it talks to.

Labels, relationship types and property names come from the record classes (a
closed list in code); every value is a parameter.
"""

from __future__ import annotations

import abc
import functools
import json
import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from datetime import datetime
from typing import Any, TypeVar, overload

from gaf.canonical import ID_PATTERN, kind_of, short_id
from gaf.errors import AmbiguousReference, InvalidRecord, UnknownReference
from gaf.records import (
    RECORD_TYPES,
    Action,
    ActionStatus,
    Claim,
    CompletenessDeclaration,
    PolicyException,
    Record,
    SubjectKey,
    parse_body,
    record_type,
)
from gaf.store.schema import label_of
from gaf.types import format_instant

R = TypeVar("R", bound=Record)
T = TypeVar("T")

#: Rows sent in one UNWIND statement; a transaction may carry several.
STATEMENT_ROWS = 5000
#: On LadybugDB, a question about at least this many records of a label, which are at least
#: one in ``SCAN_SHARE`` of the label's nodes, scans the label once instead of asking per id.
SCAN_AT = 32
SCAN_SHARE = 50


class Questions(abc.ABC):
    """Reads by name. Subclasses supply ``_rows`` (one statement, its rows as dicts) and ``dialect``."""

    #: "neo4j" or "ladybug": which per-dialect query variant applies
    dialect: str
    #: where the store lives, for messages (a URI or a directory)
    location: str
    #: records already parsed, by id, while one snapshot lasts (None: each read parses afresh).
    #: Ids are content hashes, so a record read twice is the same record: parsing it once is enough.
    _memo: dict[str, Record] | None = None

    @abc.abstractmethod
    def snapshot(self, work: Callable[[Questions], T]) -> T:
        """Run ``work`` with the named questions answered in one read transaction: every answer
        describes one state of the graph, even while writers append (a snapshot's own is itself)."""

    @abc.abstractmethod
    def _rows(self, cypher: str, params: dict[str, Any] | None = None) -> list[dict[str, Any]]:
        """Run one read statement and return its rows."""

    # ------------------------------------------------------------------ records by id and by kind

    @overload
    def get(self, record_id: str) -> Record | None: ...

    @overload
    def get(self, record_id: str, kind: type[R]) -> R: ...

    def get(self, record_id: str, kind: type[Record] | None = None) -> Record | None:
        """The record with this id (its body checked against the id).

        Without ``kind``: None when it is not stored. With a record class: that record,
        typed, or UnknownReference naming what is missing (or what the id is instead).
        """
        rows = self._rows(_GET[label_of(kind_of(record_id))], {"id": record_id})
        record = self._parsed([{"id": record_id, "body": rows[0]["body"]}])[0] if rows else None
        if kind is None:
            return record
        return _typed(record, record_id, kind, self.location)

    @overload
    def get_many(self, ids: Iterable[str], *, keep: bool = True) -> dict[str, Record]: ...

    @overload
    def get_many(self, ids: Iterable[str], kind: type[R], *, keep: bool = True) -> dict[str, R]: ...

    def get_many(self, ids: Iterable[str], kind: type[Record] | None = None, *, keep: bool = True) -> dict[str, Any]:
        """The stored records among ``ids``, by id.

        With a record class: every one of ``ids``, typed, or UnknownReference naming the
        first that is missing (or of another kind). ``keep=False``: for a reader that reads
        each record once (an export), nothing kept in ``parse_body``'s memo."""
        wanted = sorted(set(ids))
        out = self._get_many(wanted, keep=keep)
        if kind is None:
            return out
        return {rid: _typed(out.get(rid), rid, kind, self.location) for rid in wanted}

    def _get_many(self, wanted: list[str], *, keep: bool = True) -> dict[str, Record]:
        """The stored records among ``wanted`` (sorted, distinct), by id; ``keep``: as ``parse_body``'s."""
        memo = self._memo or {}
        out: dict[str, Record] = {i: memo[i] for i in wanted if i in memo}
        for label, group in _by_label([i for i in wanted if i not in out]).items():
            for chunk in chunks(group, STATEMENT_ROWS):
                out.update((r.id, r) for r in self._parsed(self._rows(_GET_MANY[label], {"ids": list(chunk)}), keep=keep))
        return out

    def exists(self, ids: Iterable[str]) -> set[str]:
        """Which of these ids are stored."""
        return existing_ids(self._rows, ids)

    def has(self, record_id: str) -> bool:
        """Whether a record with this id is stored (one indexed lookup on either store)."""
        return bool(self._rows(_GET[label_of(kind_of(record_id))], {"id": record_id}))

    def unresolved(self, refs: Mapping[str, Sequence[tuple[str, str]]]) -> dict[str, tuple[str, str]]:
        """Which of these items, by id, point at an id that is neither among them nor stored,
        directly or through another item so refused: ``dangling`` over what the store lacks.
        ``refs`` maps each item to its (relationship, target) pairs."""
        outside = {t for pairs in refs.values() for _, t in pairs} - refs.keys()
        return dangling(refs, outside - self.exists(outside))

    @overload
    def find(self, kind: str, **where: Any) -> list[Record]: ...

    @overload
    def find(self, kind: type[R], **where: Any) -> list[R]: ...

    def find(self, kind: str | type[Record], **where: Any) -> list[Any]:
        """Records of a kind (a kind name or a record class) whose node properties equal
        the given values, sorted by id."""
        cls = record_type(kind) if isinstance(kind, str) else kind
        unknown = set(where) - set(cls.COLUMNS)
        if unknown:
            raise InvalidRecord(
                f"cannot filter {cls.KIND} on {sorted(unknown)}",
                hint=f"filterable properties: {', '.join(sorted(cls.COLUMNS))}",
            )
        # Records of one label whose copied properties equal the given values. Property names
        # come from the record class (a closed list), values are parameters.
        conditions = " AND ".join(f"n.{name} = $p_{name}" for name in sorted(where))
        cypher = f"MATCH (n:{cls.LABEL}) {'WHERE ' + conditions if conditions else ''} RETURN n.id AS id, n.body AS body ORDER BY n.id"
        params = {f"p_{name}": value for name, value in where.items()}
        return self._parsed(self._rows(cypher, params))

    def held_members(self, rows: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, list[str]]]:
        """For stored (id, body) rows, the member lists each body leaves to its relationships
        (``Record.stored_body``), read back in id order: record id -> field -> member ids. A
        body that still holds a list (written by a gaf before schema version 4, or a list that
        is not a sorted set) is read as it is."""
        wanting: dict[tuple[type[Record], str], list[str]] = defaultdict(list)
        for row in rows:
            cls = RECORD_TYPES[kind_of(row["id"])]
            if cls.MEMBERS:
                body = json.loads(row["body"])
                for name in sorted(cls.MEMBERS - body.keys()):
                    wanting[(cls, name)].append(row["id"])
        held: dict[str, dict[str, list[str]]] = defaultdict(dict)
        for (cls, name), ids in wanting.items():
            for rid in ids:
                held[rid][name] = []
            for statement in _MEMBERS[(cls.KIND, name)]:
                for chunk in chunks(sorted(ids), STATEMENT_ROWS):
                    params = {"ids": list(chunk), "first": chunk[0], "last": chunk[-1]}
                    for row in self._rows(statement, params):
                        held[row["id"]][name].append(row["member"])
        return {rid: {name: sorted(found) for name, found in fields.items()} for rid, fields in held.items()}

    def _parsed(self, rows: Sequence[Mapping[str, Any]], *, keep: bool = True) -> list[Record]:
        """Records from stored (id, body) rows, in the rows' order, with their member lists
        (within a snapshot, each record parsed once; ``keep``: as ``parse_body``'s)."""
        memo = self._memo if self._memo is not None else {}
        held = self.held_members([row for row in rows if row["id"] not in memo])
        out = []
        for row in rows:
            record = memo.get(row["id"])
            if record is None:
                record = memo[row["id"]] = parse_body(row["body"], row["id"], held.get(row["id"]), keep=keep)
            out.append(record)
        return out

    def resolve_id(self, text: str, kinds: Sequence[str] = ()) -> str:
        """The stored record an id as a person types it names: a whole id, or a unique prefix of
        one as tables print it (``closure:8cceb8f8d011``, ``closure:8cceb8f8d011…``, or the hex
        digits alone, ``8cceb8f8d011``, looked for among ``kinds``, every kind when none is
        given), or the record's own name where it has one: an agent's or source's key
        (``bank-ledger``), a policy's or rule set's ``NAME@VERSION``. At least four hex digits;
        an ambiguous prefix or name is refused listing the candidates, one that matches nothing
        as an unknown reference. A whole id is returned as it is."""
        typed = text.strip().removesuffix("…").removesuffix("...")
        if ID_PATTERN.match(typed):
            kind_of(typed)  # a whole id, checked as one: stored or not is the caller's question
            return typed
        kind, colon, digits = typed.rpartition(":")
        allowed = [kind] if colon else list(kinds) or sorted(k for k, cls in RECORD_TYPES.items() if not cls.ABOUT_THE_STORE)
        if typed and not colon and not _HEX.fullmatch(typed) and not any(c.isspace() for c in typed):
            named = self._named(typed, allowed)
            if named is not None:
                return named
        if (colon and kind not in RECORD_TYPES) or not _HEX.fullmatch(digits) or not 4 <= len(digits) <= 64:
            raise InvalidRecord(f"not a gaf id or id prefix, nor a key or NAME@VERSION: {text!r}",
                                hint="a whole id (kind: and 64 hex digits), its first digits (at least 4: closure:8cceb8f8d011), "
                                     "or where the record has one a key (bank-ledger) or a NAME@VERSION (rent-delinquency@1)")  # fmt: skip
        if kinds and colon and kind not in kinds:
            raise InvalidRecord(f"{text!r} is a {kind} id; a {' or '.join(kinds)} is wanted here")
        found: list[str] = []
        for k in allowed:
            found += [row["id"] for row in self._rows(_STARTING[RECORD_TYPES[k].LABEL], {"prefix": f"{k}:{digits}"})]
        if not found:
            raise UnknownReference(f"no {' or '.join(allowed) if len(allowed) < 4 else 'record'} id starts with {digits!r} in {self.location}")
        if len(found) > 1:
            shown = ", ".join(short_id(i, len(digits) + 4) for i in sorted(found)[:_CANDIDATES])
            more = " and more" if len(found) > _CANDIDATES else ""
            raise AmbiguousReference(f"{text!r} names {len(found) if len(found) <= _CANDIDATES else 'several'} records: {shown}{more}",
                                     hint="give more digits")  # fmt: skip
        return found[0]

    def _named(self, text: str, kinds: Sequence[str]) -> str | None:
        """The one record of ``kinds`` a person's name for it names: ``NAME@VERSION`` for the
        versioned kinds (policies, rules), a key for agents and sources; None when ``text`` is
        neither, or no kind here has such names. A name that matches none, or several, is refused."""
        name, at, version = text.rpartition("@")
        if at:
            if not version.isdigit():
                raise InvalidRecord(f"{text!r}: a version is a whole number from 1", hint=f"write {name}@1, {name}@2, …")
            where, wanted = {"name": name, "version": int(version)}, [k for k in kinds if {"name", "version"} <= set(RECORD_TYPES[k].COLUMNS)]
        else:
            where, wanted = {"key": text}, [k for k in kinds if "key" in RECORD_TYPES[k].COLUMNS]
        if not wanted:
            return None
        found = sorted(r.id for k in wanted for r in self.find(k, **where))
        if not found:
            raise UnknownReference(f"no {' or '.join(wanted)} {'named' if at else 'with key'} {text!r} in {self.location}")
        if len(found) > 1:
            raise AmbiguousReference(f"{text!r} names {len(found)} records: {', '.join(short_id(i) for i in found)}",
                                     hint="give the id, or a prefix of it")  # fmt: skip
        return found[0]

    def records(self, kind: str, *, chunk: int = 1000) -> Iterator[Record]:
        """Every record of a kind in id order, read ``chunk`` at a time: a listing of the whole
        store holds one chunk of bodies in memory, not all of them, and keeps none of them in
        ``parse_body``'s memo (which holds up to 20,000: at 1M records, 50 MB of claims, filled and
        dropped over and over). The store is told of the kind and of each chunk before it is
        read (``_reading``)."""
        self._reading(0)
        for group in chunks(list(self.ids(kind)), chunk):
            self._reading(len(group))
            found = self._get_many(list(group), keep=False)  # each read once: not kept in parse_body's memo
            yield from (found[i] for i in group)

    def _reading(self, records: int) -> None:
        """Told before a whole kind is read (0) and before each chunk of it is looked up by id (how
        many records it holds): a store that caches what lookups read for as long as it is open
        lets go of it here, now and then (the embedded store's readers). Nothing to do on a
        server, or in a snapshot."""

    def ids(self, kind: str) -> Iterator[str]:
        """Every id of a kind, in id order (a list of them, not a row apiece: ``_column``)."""
        yield from self._column(_IDS[record_type(kind).LABEL], "id")

    def _column(self, cypher: str, name: str) -> list[Any]:
        """The values of one column of a statement's rows: what the embedded store reads without
        a row for each (at 1M records, a kind's ids as rows held some 90 MB at once)."""
        return [row[name] for row in self._rows(cypher)]

    def labels(self) -> set[str]:
        """The record labels the store can answer for: on LadybugDB, whose tables are declared, the
        node tables it has (a store made by an older gaf and opened read-only lacks the newer
        ones: nothing of them is stored); on Neo4j, whose labels need no declaring, every one."""
        if self.dialect == "ladybug":
            return {row["name"] for row in self._rows(_NODE_TABLES)} & set(_LABELS)
        return set(_LABELS)

    def count(self, kind: type[Record]) -> int:
        """How many records of one kind are stored (on Neo4j read from its count store)."""
        return int(self._rows(_COUNT[kind.LABEL])[0]["n"])

    def counts(self) -> dict[str, int]:
        """How many records of each kind are stored (kinds with none are left out). Records about
        the store itself (its version stamps) are not among them: ``schema_version()`` answers."""
        out = {}
        for kind, cls in sorted(RECORD_TYPES.items()):
            if cls.ABOUT_THE_STORE:
                continue
            n = self._rows(_COUNT[cls.LABEL])[0]["n"]
            if n:
                out[kind] = n
        return out

    def edges_from(self, record_id: str) -> list[tuple[str, str]]:
        """(relationship type, target id) of every relationship leaving a record, sorted."""
        rows = self._rows(_EDGES[(label_of(kind_of(record_id)), self.dialect)], {"id": record_id})
        return sorted((row["rel"], row["target"]) for row in rows)

    def edges_of_kind(self, kind: str) -> dict[str, list[tuple[str, str]]]:
        """``edges_from`` for every record of a kind at once, in one question: record id ->
        (relationship type, target id), sorted (a record with none is absent)."""
        out: dict[str, list[tuple[str, str]]] = defaultdict(list)
        for row in self._rows(_KIND_EDGES[(record_type(kind).LABEL, self.dialect)]):
            out[row["id"]].append((row["rel"], row["target"]))
        return {rid: sorted(found) for rid, found in out.items()}

    def stored_nodes(self, kind: str) -> list[dict[str, Any]]:
        """Every node of a kind as stored: id, body and the properties copied from the body,
        by id — what ``gaf verify`` checks each record against."""
        return self._rows(_NODES[record_type(kind).LABEL])

    # ------------------------------------------------------------------ closures, verdicts, actions

    def superseded_by(self, closure_id: str) -> list[str]:
        """The closures that supersede this one, by id (empty while it stands)."""
        return [row["id"] for row in self._rows(_SUPERSEDED_BY, {"id": closure_id})]

    def closures_under(self, policy_id: str) -> list[tuple[str, str]]:
        """(closure id, closed_at) of every closure decided under a projection policy or
        verdict rules version, by id."""
        kind = kind_of(policy_id)
        if kind not in _UNDER:
            raise InvalidRecord(f"{policy_id} is not a projection policy or verdict rules id")
        return sorted((row["id"], row["closed_at"]) for row in self._rows(_UNDER[kind], {"id": policy_id}))

    def standing_under(self, projection_id: str) -> list[str]:
        """The closures decided under a projection policy that no closure supersedes, by id:
        the heads of their chains, which a change can still move."""
        return sorted(row["id"] for row in self._rows(_STANDING_UNDER, {"id": projection_id}))

    # ------------------------------------------------------------------ cones: what closures read

    def cone_keys(self, patterns: AbstractSet[str], predicates: AbstractSet[str]) -> list[tuple[str, str, str]]:
        """(key id, predicate, subject pattern) of every cone key with one of these patterns and
        one of these predicates, by id (the caller pairs them up: an atom's subject with its
        own predicate)."""
        out: set[tuple[str, str, str]] = set()
        for chunk in chunks(sorted(patterns), STATEMENT_ROWS):
            rows = self._rows(_CONE_KEYS, {"patterns": list(chunk), "predicates": sorted(predicates)})
            out.update((row["id"], row["predicate"], row["pattern"]) for row in rows)
        return sorted(out)

    def standing_reading(self, key_ids: Sequence[str]) -> list[str]:
        """The closures that no closure supersedes whose recorded cone holds any of these keys, by id."""
        found: set[str] = set()
        for chunk in chunks(sorted(set(key_ids)), STATEMENT_ROWS):
            found.update(row["id"] for row in self._rows(_STANDING_READING, {"ids": list(chunk)}))
        return sorted(found)

    def unkeyed_propositions(self) -> list[tuple[str, str]]:
        """(id, subject) of every proposition not linked to its subject's key (stored before
        schema version 7), by id."""
        return [(row["id"], row["subject"]) for row in self._rows(_UNKEYED)]

    def closures_without_cone(self) -> list[str]:
        """Closures with no recorded cone (made before cones were recorded), by id."""
        return [row["id"] for row in self._rows(_WITHOUT_CONE)]

    # ------------------------------------------------------------------ the store's own version

    def schema_version(self) -> int:
        """The version of the stored shape the store's records follow: its highest
        ``SchemaVersion``; without one, 1 when it holds records (written before versions were
        recorded), else the current version (an empty store has nothing to migrate)."""
        from gaf.store.schema import SCHEMA_VERSION

        stamped = self.stamped_version()
        if stamped is not None:
            return stamped
        return 1 if self.holds_records() else SCHEMA_VERSION

    def stamped_version(self) -> int | None:
        """The store's highest ``SchemaVersion`` stamp, or None when it has none."""
        rows = self._rows(_SCHEMA_VERSION)
        return int(rows[0]["v"]) if rows and rows[0]["v"] is not None else None

    def log_head(self) -> tuple[str, int] | None:
        """The write log's last link, (id, seq): the state of the store a reader can note down and
        later check ``gaf verify --head`` against; None when the store keeps no log (before schema
        version 5, until ``gaf migrate``)."""
        return log_head(self._rows)

    def checkpoint_of(self, closure_id: str) -> str | None:
        """The link of the write log that checkpoints a closure (the last link of the transaction
        that closed it), or None (a closure made before the log was kept)."""
        rows = self._rows(_CHECKPOINT_OF, {"id": closure_id})
        return min(row["id"] for row in rows) if rows else None

    def holds_records(self) -> bool:
        """Whether the store holds any record at all (its own version stamps aside)."""
        return any(self._rows(_ANY[cls.LABEL]) for cls in RECORD_TYPES.values() if not cls.ABOUT_THE_STORE)

    def verdicts_deciding(self, closure_id: str) -> list[str]:
        """The verdicts that decide a closure."""
        return sorted(row["id"] for row in self._rows(_VERDICTS_DECIDING, {"id": closure_id}))

    def actions_executing(self, verdict_ids: Sequence[str]) -> list[str]:
        """The actions that execute any of these verdicts."""
        return sorted(row["id"] for row in self._rows(_ACTIONS_EXECUTING, {"ids": list(verdict_ids)}))

    def verdicts_of(self, closure_ids: Iterable[str]) -> dict[str, list[str]]:
        """``verdicts_deciding`` for many closures in one question: closure id -> the verdicts
        that decide it, by id (a closure no verdict decides is absent)."""
        return self._keyed(_DECIDING, "Closure", closure_ids)

    def actions_of(self, verdict_ids: Iterable[str]) -> dict[str, list[str]]:
        """``actions_executing`` for many verdicts, each apart: verdict id -> the actions that
        execute it, by id (a verdict no action executes is absent)."""
        return self._keyed(_EXECUTING, "Verdict", verdict_ids)

    def action_statuses(self, action_ids: Sequence[str]) -> list[tuple[str, str | None, ActionStatus]]:
        """(action id, the action it compensates or None, status) for every status of these actions."""
        out = []
        wanted = sorted(set(action_ids))
        if self.dialect == "ladybug" and self._scan_pays("Action", len(wanted)):
            found = [row for chunk in chunks(wanted, STATEMENT_ROWS) for got in self._rows(_STATUSES_SCAN, {"ids": list(chunk)}) for row in got["rows"]]
        else:
            found = self._per_record(_STATUSES_OF, wanted)
        for action, compensates, status_id, body in found:
            status = parse_body(body, status_id)
            assert isinstance(status, ActionStatus)  # the STATUS_OF schema admits nothing else
            out.append((action, compensates, status))
        return out

    def actions_on(self, subject: str, action_kind: str) -> list[Action]:
        """The actions of a kind on a subject, whatever became of them, by id."""
        rows = self._rows(_ACTIONS_ON, {"subject": subject, "kind": action_kind})
        return [_typed(parse_body(row["body"], row["id"]), row["id"], Action, self.location) for row in rows]

    def executed_under(self, grant_id: str, since: datetime, until: datetime) -> int:
        """How many actions under a grant were executed in (since, until]."""
        params = {"grant": grant_id, "since": format_instant(since), "until": format_instant(until)}
        rows = self._rows(_EXECUTED_UNDER, params)
        return rows[0]["n"] if rows else 0

    def review_queue(self) -> list[PolicyException]:
        """Policy exceptions no case decision has settled yet, oldest first."""
        ids = [row["id"] for row in self._rows(_QUEUE)]
        found = self.get_many(ids)
        return [_typed(found.get(i), i, PolicyException, self.location) for i in ids]

    def decisions_accepting(self, fact_ids: Sequence[str]) -> list[str]:
        """The review decisions that accepted any of these facts."""
        return sorted(row["id"] for row in self._rows(_DECISIONS_ACCEPTING, {"ids": list(fact_ids)}))

    # ------------------------------------------------------------------ the ledger a projection reads

    def cone_claims(self, subjects: Sequence[str], prefixes: Sequence[str], predicates: Sequence[str]) -> list[Claim]:
        """Claims asserting or denying a proposition with one of these predicates about one of
        these exact subjects, or a subject starting with one of these prefixes, by id.

        From schema version 7 the propositions are reached from their subjects' keys
        (``SubjectKey``, a primary key on both stores); a store not yet migrated is asked by
        the propositions' subject column, which the embedded store can only scan."""
        from gaf.store.schema import SUBJECTS_KEYED

        found: dict[str, Claim] = {}
        params = {"predicates": sorted(predicates)}
        keyed = self.schema_version() >= SUBJECTS_KEYED
        keys = sorted({SubjectKey.shared(subject=s).id for s in subjects})
        for rel in ("ASSERTS", "DENIES"):
            rows = []
            if subjects and keyed:
                rows += self._rows_by_id(_CONE_KEYED[rel], "SubjectKey", keys, params)
            elif subjects:
                rows += self._rows(_CONE_EXACT[rel], {"subjects": sorted(subjects), **params})
            if prefixes and keyed and self.dialect == "ladybug":
                rows += self._rows(_CONE_PREFIXES_KEYED[rel], {"prefixes": sorted(set(prefixes)), **params})
            elif prefixes and keyed:
                for prefix in sorted(set(prefixes)):
                    rows += self._rows(_CONE_PREFIX_KEYED[rel], {"prefix": prefix, **params})
            elif prefixes:
                rows += self._rows(_CONE_PREFIX[rel], {"prefixes": sorted(prefixes), **params})
            fresh = list({row["id"]: row for row in rows if row["id"] not in found}.values())
            for record in self._parsed(fresh):
                found[record.id] = _typed(record, record.id, Claim, self.location)
        return [found[k] for k in sorted(found)]

    def claims_naming(self, predicate: str, objects: Sequence[str]) -> list[Claim]:
        """Claims asserting a proposition with this predicate whose object is one of ``objects``
        (the runs that read a dataset: ``read``, ``dataset:…``), by id."""
        rows = self._rows(_NAMING, {"predicate": predicate, "objects": sorted(set(objects))})
        return [_typed(parse_body(r["body"], r["id"]), r["id"], Claim, self.location) for r in sorted(rows, key=lambda r: r["id"])]

    def voids(self, claims: Iterable[str]) -> dict[str, str]:
        """For each of these claims a run invalidation voids, when the first that voids it was
        recorded (a voided claim counts for nothing in a cone as of then or later). A store older
        than schema version 6 holds none (and the embedded one has no table to ask)."""
        from gaf.store.schema import RUNS_VOIDABLE

        wanted = sorted(set(claims))
        if not wanted or self.schema_version() < RUNS_VOIDABLE or not self._rows(_ANY["RunInvalidation"]):
            return {}
        out: dict[str, str] = {}
        for row in self._rows_by_id(_VOIDED, "Claim", wanted):
            out[row["id"]] = min(out.get(row["id"], row["recorded_at"]), row["recorded_at"])
        return out

    def invalidations(self, sources: Iterable[str]) -> list[tuple[str, str, str]]:
        """(source, invalid from, recorded at) of every invalidation of these sources, sorted: a
        claim of the source observed at or after ``invalid from`` counts for nothing in a cone as
        of ``recorded at`` or later."""
        rows = self._rows(_INVALIDATIONS, {"sources": sorted(set(sources))})
        return sorted((row["source"], row["invalid_from"], row["recorded_at"]) for row in rows)

    def completeness_of(self, source_id: str, predicates: Iterable[str]) -> list[CompletenessDeclaration]:
        """The completeness declarations of one source for any of these predicates, by id."""
        rows = self._rows(_COMPLETENESS_OF, {"source": source_id, "predicates": sorted(set(predicates))})
        return [_typed(parse_body(r["body"], r["id"]), r["id"], CompletenessDeclaration, self.location) for r in rows]

    # ------------------------------------------------------------------ dependencies (impact)

    def dependents(self, ids: Iterable[str], rels: Iterable[str], as_of: datetime | None = None) -> list[tuple[str, str, str]]:
        """(target, dependent, relationship) for every record that points at one of ``ids``
        through one of ``rels`` (written by ``as_of`` when given), sorted."""
        wanted = tuple(sorted(set(rels)))
        stamp = format_instant(as_of) if as_of is not None else None
        rows: list[tuple[str, str, str]] = []
        for label, group in _by_label(ids).items():
            incoming = tuple(r for r in wanted if r in _INCOMING.get(label, ()))
            if not incoming:
                continue
            if self.dialect == "ladybug":
                # A row per edge, by record or by one scan of the label (``_rows_by_id``): LadybugDB
                # aggregates a collected list four to eight times slower than it returns the rows.
                question = _dependents_by_id(label, incoming, stamp is not None)
                got = self._rows_by_id(question, label, group, {"as_of": stamp} if stamp else None)
                rows += [(r["t"], r["d"], r.get("r", incoming[0])) for r in got]
                continue
            template = _dependents_template(label, incoming, stamp is not None)
            rows += [(t, d, r) for t, d, r in self._per_record(template, group, {"as_of": stamp} if stamp else None)]
        return sorted(rows)

    def _scan_pays(self, label: str, wanted: int) -> bool:
        """Whether, on LadybugDB, one statement filtering a label's nodes by a list of ids beats
        one indexed statement per id: it scans the label, so only when the ids are many and a
        good share of it (``SCAN_SHARE``). Measured on the 500-closure impact world: the whole
        of a label of 2,000 facts in 0.04 s by the scan, 1.1 s one id at a time."""
        return wanted >= SCAN_AT and wanted * SCAN_SHARE >= int(self._rows(_COUNT[label])[0]["n"])

    def reach(self, ids: Iterable[str], rels: Iterable[str], *, depth: int, cap: int) -> Reach | None:
        """Everything that depends on ``ids`` within ``depth`` steps, expanded inside the store:
        on Neo4j one statement per label, planned as one pruning breadth-first expand, the facts'
        siblings included; on LadybugDB one statement per start record (``_reach_ladybug``).
        None where the answer could be cut, and the caller walks level by level with ``dependents``.

        At most ``cap`` dependents are collected: a result with more than ``cap - 1`` was cut."""
        if self.dialect == "ladybug":
            return self._reach_ladybug(ids, rels, depth=depth, cap=cap)
        siblings: dict[str, set[str]] = defaultdict(set)
        out = Reach(siblings)
        alternation = "|".join(sorted(set(rels)))
        for label, group in _by_label(ids).items():
            cypher = _REACH.format(label=label, rels=alternation, depth=depth)
            for got in self._rows(cypher, {"ids": group, "cap": cap}):
                out.found.update(got["found"])
                out.edges.update((t, d, r) for t, d, r in got["rows"])
                for fact, justification in got["siblings"]:
                    siblings[fact].add(justification)
        return out

    def _reach_ladybug(self, ids: Iterable[str], rels: Iterable[str], *, depth: int, cap: int) -> Reach | None:
        """``reach`` on LadybugDB, for one start record (its primary key serves one id at a time): one
        statement expands inside the store to each dependent once (a shortest path to it) and
        returns the dependency edges leaving it, with its distance. The siblings of the facts
        reached are left to ``fact_siblings`` (None): asked in the same pattern, LadybugDB joins
        them by scanning. None, for the caller to walk level by level, where the answer could be
        cut: ``cap`` rows came back, or the deepest dependent sits at the most hops LadybugDB
        expands (``LADYBUG_MAX_HOPS``) and ``depth`` asks for more. None too for more than one
        start record: each statement would expand again what they share (a run's claims feeding
        one GAF: 0.08 s against 0.04 s level by level at 16 claims, 7.8 s against 0.05 s at 1,000),
        where the level-wise walk asks about each record once."""
        wanted = set(ids)
        out = Reach(siblings=None)
        if len(wanted) > 1:
            return None
        if not wanted:
            return out
        (rid,) = wanted
        bound = min(depth, LADYBUG_MAX_HOPS)
        # The cap is written into the statement like the depth: a whole number gaf computes, never
        # a record's value. LadybugDB runs ``LIMIT $cap`` twice as slowly (10 ms against 4.5 ms
        # for a source of the impact benchmark's 1M-node graph), as it does no LIMIT at all.
        question = _REACH_EDGES.format(label=label_of(kind_of(rid)), rels="|".join(sorted(set(rels))), depth=bound, cap=int(cap))
        rows = self._rows(question, {"id": rid})
        if len(rows) >= cap or (bound < depth and max((row["hops"] for row in rows), default=0) >= bound):
            return None
        if rows or self.has(rid):
            out.found.add(rid)
        out.edges.update((row["t"], row["d"], row["r"]) for row in rows)
        return out

    def fact_siblings(self, fact_ids: Sequence[str], as_of: datetime | None = None) -> dict[str, list[str]]:
        """For each fact, the justifications of the other facts that state its proposition under
        its projection (written by ``as_of`` when given): what support counting needs."""
        stamp = format_instant(as_of) if as_of is not None else None
        if self.dialect == "ladybug":
            when = "AND (g.written_at IS NULL OR g.written_at <= $as_of) " if stamp else ""
            question = (_SIBLINGS_KEYED[0].format(when=when), _SIBLINGS_KEYED[1].format(when=when))
            return self._keyed(question, "AcceptedFact", fact_ids, {"as_of": stamp} if stamp else None)
        template = _SIBLINGS.format(when="AND (g.written_at IS NULL OR g.written_at <= $as_of) " if stamp else "")
        out: dict[str, list[str]] = defaultdict(list)
        for fact, justification in self._per_record(template, sorted(fact_ids), {"as_of": stamp} if stamp else None):
            out[fact].append(justification)
        return {k: sorted(v) for k, v in out.items()}

    def _keyed(self, question: tuple[str, str], label: str, ids: Iterable[str], params: dict[str, Any] | None = None) -> dict[str, list[str]]:
        """A question asked of many records of one label, answered as (k, v) rows: k -> its v's,
        sorted. ``question`` is the statement for one record (``$id``) and the one for a list
        (``$ids``): Neo4j answers the list by index seeks; LadybugDB, whose primary-key index
        serves one id only, scans the label for a list when that pays (``_scan_pays``), else
        asks per record."""
        out: dict[str, set[str]] = defaultdict(set)
        for row in self._rows_by_id(question, label, ids, params):
            out[row["k"]].add(row["v"])
        return {k: sorted(v) for k, v in sorted(out.items())}

    def _rows_by_id(
        self, question: tuple[str, str], label: str, ids: Iterable[str], params: dict[str, Any] | None = None
    ) -> list[dict[str, Any]]:
        """The rows of a question asked of many records of one label: ``question`` is the
        statement for one record (``$id``) and the one for a list (``$ids``). Neo4j answers the
        list by index seeks; LadybugDB, whose primary-key index serves one id only, scans the
        label for a list when that pays (``_scan_pays``), else asks per record."""
        one, many = question
        wanted = sorted(set(ids))
        extra = params or {}
        rows: list[dict[str, Any]] = []
        if self.dialect == "ladybug" and not self._scan_pays(label, len(wanted)):
            for rid in wanted:
                rows += self._rows(one, {"id": rid, **extra})
        else:
            for chunk in chunks(wanted, STATEMENT_ROWS):
                rows += self._rows(many, {"ids": list(chunk), **extra})
        return rows

    def _per_record(self, template: str, ids: Sequence[str], params: dict[str, Any] | None = None) -> list[list[Any]]:
        """The rows a per-record query template collects, for many records.

        ``template`` names the record as ``{ID}`` and returns one ``rows`` list. Neo4j
        answers all records in one ``UNWIND`` statement (an index seek per id).
        LadybugDB only uses its primary-key index for a literal or parameter match,
        not for one fed by ``UNWIND`` (it scans the table), so there each record is
        one small indexed statement.
        """
        extra = params or {}
        if self.dialect == "ladybug":
            single = template.format(ID="$id")
            return [row for rid in ids for got in self._rows(single, {"id": rid, **extra}) for row in got["rows"]]
        batched = "UNWIND $ids AS i " + template.format(ID="i")
        out: list[list[Any]] = []
        for chunk in chunks(ids, STATEMENT_ROWS):
            for got in self._rows(batched, {"ids": list(chunk), **extra}):
                out.extend(got["rows"])
        return out


class Reach:
    """What one whole-graph expansion found: the start ids that exist, every dependency edge
    (target, dependent, relationship) leaving what was reached, and each reached fact's
    siblings' justifications (None where the store leaves them to ``fact_siblings``)."""

    def __init__(self, siblings: dict[str, set[str]] | None) -> None:
        self.found: set[str] = set()
        self.edges: set[tuple[str, str, str]] = set()
        #: None: not read with the expansion (the caller asks ``fact_siblings``)
        self.siblings = siblings


class Snapshot(Questions):
    """The questions answered inside one read transaction: one state of the graph."""

    def __init__(self, tx: Any, dialect: str, location: str):
        self._tx = tx
        self.dialect = dialect
        self.location = location
        self._memo = {}

    def snapshot(self, work: Callable[[Questions], T]) -> T:
        return work(self)

    def _rows(self, cypher: str, params: dict[str, Any] | None = None) -> list[dict[str, Any]]:
        rows: list[dict[str, Any]] = self._tx.run(cypher, params)
        return rows


def dangling(refs: Mapping[str, Sequence[tuple[str, str]]], missing: AbstractSet[str]) -> dict[str, tuple[str, str]]:
    """The items that must be refused because a reference dangles, each with the first
    (relationship, target) that does: a target among ``missing``, or an item refused here
    (a target that is itself a key of the answer was refused, not missing).

    Refusal is transitive, so nothing is written that points at a record never written:
    the one rule behind ``put`` and accepting derived facts. ``refs`` maps each item to its
    (relationship, target) pairs, in order; the answer keeps the order items were refused in."""
    bad: dict[str, tuple[str, str]] = {}
    changed = bool(missing)
    while changed:
        changed = False
        for item, pairs in refs.items():
            if item in bad:
                continue
            for rel, target in pairs:
                if target in missing or target in bad:
                    bad[item] = (rel, target)
                    changed = True
                    break
    return bad


def _typed(record: Record | None, record_id: str, kind: type[R], location: str) -> R:
    if isinstance(record, kind):
        return record
    if record is None:
        raise UnknownReference(f"no {kind.KIND} {record_id} in {location}", where=record_id)
    raise UnknownReference(f"{record_id} is a {record.KIND}, not a {kind.KIND}", where=record_id)


def existing_ids(run: Callable[[str, dict[str, Any]], list[dict[str, Any]]], ids: Iterable[str]) -> set[str]:
    """Which of these ids are stored, asked through ``run`` (a read's rows, or a write transaction's,
    so ``put`` decides inside its own transaction with the same question)."""
    found: set[str] = set()
    # Every label's part in one statement (``UNION ALL``), up to STATEMENT_ROWS ids: a batch of
    # fourteen kinds asked fourteen times cost a round trip each, and a bulk ingest asks once a batch.
    parts: list[tuple[str, list[str]]] = []
    held = 0
    for label, group in _by_label(ids).items():
        for chunk in chunks(group, STATEMENT_ROWS):
            if parts and held + len(chunk) > STATEMENT_ROWS:
                found.update(_existing_in(run, parts))
                parts, held = [], 0
            parts.append((label, list(chunk)))
            held += len(chunk)
    if parts:
        found.update(_existing_in(run, parts))
    return found


def _existing_in(run: Callable[[str, dict[str, Any]], list[dict[str, Any]]], parts: list[tuple[str, list[str]]]) -> set[str]:
    cypher = _existing_union(tuple(label for label, _ in parts))
    return {row["id"] for row in run(cypher, {f"ids{k}": group for k, (_, group) in enumerate(parts)})}


@functools.cache
def _existing_union(labels: tuple[str, ...]) -> str:
    # Which of the ids given for each label are stored: one part per label, each looked up by its key.
    return " UNION ALL ".join(f"UNWIND $ids{k} AS i MATCH (n:{label} {{id: i}}) RETURN n.id AS id" for k, label in enumerate(labels))


def named_alike(run: Callable[[str, dict[str, Any]], list[dict[str, Any]]], records: Iterable[Record]) -> dict[str, list[str]]:
    """For records of kinds with ``UNIQUE`` fields (a policy's name and version), the stored records
    of the same kind sharing those values under another id: record id -> their ids, sorted."""
    out: dict[str, list[str]] = {}
    by_kind: dict[type[Record], list[Record]] = defaultdict(list)
    for record in records:
        if record.UNIQUE:
            by_kind[type(record)].append(record)
    for cls, group in sorted(by_kind.items(), key=lambda kv: kv[0].KIND):
        for chunk in chunks(group, STATEMENT_ROWS):
            rows = [{"id": r.id, **{f: r.props()[f] for f in cls.UNIQUE}} for r in chunk]
            for row in run(_NAMED_ALIKE[cls.KIND], {"rows": rows}):
                if row["other"] != row["id"]:
                    out.setdefault(row["id"], []).append(row["other"])
    return {rid: sorted(set(others)) for rid, others in out.items()}


def log_head(run: Callable[[str, dict[str, Any]], list[dict[str, Any]]]) -> tuple[str, int] | None:
    """The write log's last link, (id, seq), or None for a store that keeps no log (``LogEntry``)."""
    rows = run(_LOG_HEAD, {})
    return (rows[0]["id"], int(rows[0]["seq"])) if rows else None


def all_ids(run: Callable[[str, dict[str, Any]], list[dict[str, Any]]]) -> list[str]:
    """Every stored id but the write log's own links, by id (what ``gaf migrate`` logs as there
    when the log began)."""
    return sorted(row["id"] for label in _LABELS if label != "LogEntry" for row in run(_IDS[label], {}))


def _by_label(ids: Iterable[str]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = defaultdict(list)
    for rid in ids:
        out[label_of(kind_of(rid))].append(rid)
    return {label: sorted(set(group)) for label, group in sorted(out.items())}


def chunks(items: Sequence[Any], size: int) -> Iterator[Sequence[Any]]:
    """``items`` in consecutive slices of at most ``size``."""
    for start in range(0, len(items), size):
        yield items[start : start + size]


# ---------------------------------------------------------------------- the Cypher, by question

_LABELS = [cls.LABEL for cls in RECORD_TYPES.values()]

# LadybugDB's node tables (labels), by name.
_NODE_TABLES = "CALL show_tables() WHERE type = 'NODE' RETURN name"
# The stored body of one record.
_GET = {label: f"MATCH (n:{label} {{id: $id}}) RETURN n.body AS body" for label in _LABELS}
# The stored bodies of several records.
_GET_MANY = {label: f"UNWIND $ids AS i MATCH (n:{label} {{id: i}}) RETURN n.id AS id, n.body AS body" for label in _LABELS}
# The members of some records' member lists (``Record.MEMBERS``), one statement per field and
# target label: the relationship the field is written as, from each record to each member. The
# records are a sorted chunk of ids, asked for by their range as well as by the list: LadybugDB
# plans ``UNWIND $ids … MATCH (n {id: i})-[…]->(m)`` as a hash join over every record's members
# (at 1M records, some 70 MiB of its pool for each chunk of 2,000 GAFs, refused in 64 MiB), and
# ``n.id IN $ids`` alone as a scan of every record checked against the whole list; the range
# leaves the list only the chunk's neighbours to check (a scratch measurement at 1M records: 0.06 s
# and 11 MiB a chunk, against 0.16 s and 70 MiB). Neo4j seeks the id index either way.
_MEMBERS = {
    (cls.KIND, name): [f"MATCH (n:{cls.LABEL})-[:{rel}]->(m:{label_of(kind)}) WHERE n.id >= $first AND n.id <= $last "
                       "AND n.id IN $ids RETURN n.id AS id, m.id AS member" for kind in kinds]
    for cls in RECORD_TYPES.values() for name in sorted(cls.MEMBERS) for rel, kinds in [cls.REFS[name]]
}  # fmt: skip
# Stored records of one label whose unique fields (``Record.UNIQUE``) equal those of given rows.
_NAMED_ALIKE = {
    cls.KIND: f"UNWIND $rows AS r MATCH (n:{cls.LABEL}) WHERE " + " AND ".join(f"n.{f} = r.{f}" for f in cls.UNIQUE)
    + " RETURN r.id AS id, n.id AS other"
    for cls in RECORD_TYPES.values() if cls.UNIQUE
}  # fmt: skip
# Every id of one label, in order.
_IDS = {label: f"MATCH (n:{label}) RETURN n.id AS id ORDER BY id" for label in _LABELS}
#: how many candidates an ambiguous id prefix lists (one more is read, to know there are more)
_CANDIDATES = 10
_STARTING = {label: f"MATCH (n:{label}) WHERE n.id STARTS WITH $prefix RETURN n.id AS id ORDER BY id LIMIT {_CANDIDATES + 1}"
             for label in _LABELS}  # fmt: skip
_HEX = re.compile("[0-9a-f]+")
# How many nodes one label has.
_COUNT = {label: f"MATCH (n:{label}) RETURN count(n) AS n" for label in _LABELS}
# Every node of one label, with its body and the properties copied from it.
_NODES = {
    cls.LABEL: f"MATCH (n:{cls.LABEL}) RETURN n.id AS id, n.body AS body"
    + "".join(f", n.{c} AS {c}" for c in cls.COLUMNS) + " ORDER BY id"
    for cls in RECORD_TYPES.values()
}  # fmt: skip
# Relationships leaving one record, with their type and target id (LadybugDB names a
# relationship's type with label(), Neo4j with type()).
_EDGES = {
    (label, dialect): f"MATCH (n:{label} {{id: $id}})-[r]->(m) RETURN {fn}(r) AS rel, m.id AS target"
    for label in _LABELS for dialect, fn in (("neo4j", "type"), ("ladybug", "label"))
}  # fmt: skip

# Every relationship leaving the nodes of a label.
_KIND_EDGES = {
    (label, dialect): f"MATCH (n:{label})-[r]->(m) RETURN n.id AS id, {fn}(r) AS rel, m.id AS target"
    for label in _LABELS for dialect, fn in (("neo4j", "type"), ("ladybug", "label"))
}  # fmt: skip

# Closures that supersede one closure.
_SUPERSEDED_BY = "MATCH (n:Closure)-[:SUPERSEDES]->(o:Closure {id: $id}) RETURN n.id AS id ORDER BY id"
# Closures decided under a projection policy or verdict rules version, with when they were closed.
_UNDER = {
    "projection": "MATCH (c:Closure)-[:UNDER]->(p:Projection {id: $id}) RETURN c.id AS id, c.closed_at AS closed_at",
    "rules": "MATCH (c:Closure)-[:JUDGED_BY]->(p:VerdictRules {id: $id}) RETURN c.id AS id, c.closed_at AS closed_at",
}
# Closures under a projection policy that nothing supersedes.
_STANDING_UNDER = ("MATCH (c:Closure)-[:UNDER]->(:Projection {id: $id}) "
                   "WHERE NOT EXISTS { MATCH (:Closure)-[:SUPERSEDES]->(c) } RETURN c.id AS id")  # fmt: skip
# Cone keys with some patterns and predicates (index seeks on Neo4j; on LadybugDB a scan of
# the cone keys, as many as distinct (policy scope pattern, predicate) pairs, not closures).
_CONE_KEYS = ("MATCH (k:ConeKey) WHERE k.pattern IN $patterns AND k.predicate IN $predicates "
              "RETURN k.id AS id, k.predicate AS predicate, k.pattern AS pattern")  # fmt: skip
# Standing closures whose recorded cone reads any of some cone keys.
_STANDING_READING = ("MATCH (k:ConeKey) WHERE k.id IN $ids MATCH (k)<-[:READS]-(:Cone)-[:CONE_OF]->(c:Closure) "
                     "WHERE NOT EXISTS { MATCH (:Closure)-[:SUPERSEDES]->(c) } RETURN DISTINCT c.id AS id")  # fmt: skip
# Propositions not linked to their subject's key.
_UNKEYED = (
    "MATCH (p:Proposition) WHERE NOT EXISTS { MATCH (p)-[:ABOUT]->(:SubjectKey) } "
    "RETURN p.id AS id, p.subject AS subject ORDER BY id"
)
# Closures no cone was recorded for.
_WITHOUT_CONE = "MATCH (c:Closure) WHERE NOT EXISTS { MATCH (:Cone)-[:CONE_OF]->(c) } RETURN c.id AS id ORDER BY id"
# The store's highest schema version stamp.
_SCHEMA_VERSION = "MATCH (s:SchemaVersion) RETURN max(s.version) AS v"
# Whether a label holds any node.
_ANY = {label: f"MATCH (n:{label}) RETURN n.id AS id LIMIT 1" for label in _LABELS}
# The link that checkpoints a closure.
_CHECKPOINT_OF = "MATCH (l:LogEntry)-[:CHECKPOINTS]->(:Closure {id: $id}) RETURN l.id AS id"
# The write log's last link.
_LOG_HEAD = "MATCH (l:LogEntry) RETURN l.id AS id, l.seq AS seq ORDER BY l.seq DESC LIMIT 1"
# Verdicts of one closure.
_VERDICTS_DECIDING = "MATCH (v:Verdict)-[:DECIDES]->(:Closure {id: $id}) RETURN v.id AS id"
# Actions executing some verdicts.
_ACTIONS_EXECUTING = "UNWIND $ids AS i MATCH (a:Action)-[:EXECUTES]->(:Verdict {id: i}) RETURN a.id AS id"
# The verdicts of some closures, each with its closure: for one closure, and for a list.
_DECIDING = (
    "MATCH (v:Verdict)-[:DECIDES]->(c:Closure {id: $id}) RETURN c.id AS k, v.id AS v",
    "MATCH (v:Verdict)-[:DECIDES]->(c:Closure) WHERE c.id IN $ids RETURN c.id AS k, v.id AS v",
)
# The actions executing some verdicts, each with its verdict: for one verdict, and for a list.
_EXECUTING = (
    "MATCH (a:Action)-[:EXECUTES]->(v:Verdict {id: $id}) RETURN v.id AS k, a.id AS v",
    "MATCH (a:Action)-[:EXECUTES]->(v:Verdict) WHERE v.id IN $ids RETURN v.id AS k, a.id AS v",
)
# Every status of some actions, with the action each compensates (per-record template).
_STATUSES_OF = (
    "MATCH (s:ActionStatus)-[:STATUS_OF]->(a:Action {{id: {ID}}}) RETURN collect([a.id, a.compensates, s.id, s.body]) AS rows"
)
# The same for many actions on LadybugDB: one scan of the actions filtered by the list.
_STATUSES_SCAN = (
    "MATCH (s:ActionStatus)-[:STATUS_OF]->(a:Action) WHERE a.id IN $ids RETURN collect([a.id, a.compensates, s.id, s.body]) AS rows"
)
# The actions of one kind on one subject (what a cumulative limit adds up).
_ACTIONS_ON = (
    "MATCH (a:Action) WHERE a.subject = $subject AND a.action_kind = $kind RETURN a.id AS id, a.body AS body ORDER BY a.id"
)
# Executed statuses of actions under one grant within a window.
_EXECUTED_UNDER = (
    "MATCH (s:ActionStatus)-[:STATUS_OF]->(a:Action)-[:UNDER_GRANT]->(g:Grant {id: $grant}) "
    "WHERE s.status = 'executed' AND s.at > $since AND s.at <= $until RETURN count(s) AS n"
)
# Exceptions that no case decision has settled yet.
_QUEUE = (
    "MATCH (e:PolicyException) WHERE NOT EXISTS { MATCH (:CaseDecision)-[:SETTLES]->(e) } "
    "RETURN e.id AS id ORDER BY e.raised_at, e.id"
)
# The decisions that accepted some facts (the decision log behind a GAF).
_DECISIONS_ACCEPTING = "UNWIND $ids AS i MATCH (d:Decision)-[:ACCEPTED]->(:AcceptedFact {id: i}) RETURN DISTINCT d.id AS id"

# Claims stating a proposition with one of these predicates about one exact subject
# (ASSERTS and DENIES are asked separately: portable Cypher). A projection's cut-off is
# applied afterwards, by the caller: filtering on it here lets Neo4j's planner start from
# the Claim(recorded_at) index and read the whole ledger (bench/projection.py found it).
_CONE_EXACT = {
    rel: "UNWIND $subjects AS s MATCH (p:Proposition {subject: s}) WHERE p.predicate IN $predicates "
    f"MATCH (c:Claim)-[:{rel}]->(p) RETURN DISTINCT c.id AS id, c.body AS body"
    for rel in ("ASSERTS", "DENIES")
}
# The same for subjects that start with a prefix.
_CONE_PREFIX = {
    rel: "UNWIND $prefixes AS s MATCH (p:Proposition) WHERE p.subject STARTS WITH s AND p.predicate IN $predicates "
    f"MATCH (c:Claim)-[:{rel}]->(p) RETURN DISTINCT c.id AS id, c.body AS body"
    for rel in ("ASSERTS", "DENIES")
}
# The same from schema version 7, from the subjects' keys: for one key (``$id``: a primary-key
# lookup on both stores) and for a list (``k.id IN $ids``: index seeks on Neo4j, one scan of the
# keys on LadybugDB, where an UNWIND of ids would scan them once per id).
_CONE_FROM_KEY = (
    "MATCH (k:SubjectKey) WHERE {start} MATCH (k)<-[:ABOUT]-(p:Proposition) WHERE p.predicate IN $predicates "
    "MATCH (c:Claim)-[:{rel}]->(p) RETURN DISTINCT c.id AS id, c.body AS body"
)
_CONE_KEYED = {
    rel: (_CONE_FROM_KEY.format(start="k.id = $id", rel=rel), _CONE_FROM_KEY.format(start="k.id IN $ids", rel=rel))
    for rel in ("ASSERTS", "DENIES")
}
# Subjects that start with a prefix, from schema version 7, one prefix a statement: the keys are
# read (one per subject, not one per proposition: an index range on Neo4j), and the propositions
# reached from those that match (fed by an UNWIND, LadybugDB joins every proposition instead).
_CONE_PREFIX_KEYED = {rel: _CONE_FROM_KEY.format(start="k.subject STARTS WITH $prefix", rel=rel) for rel in ("ASSERTS", "DENIES")}
# The same for every prefix at once, on LadybugDB: it has no index on the keys' subjects, so each
# prefix's statement scanned every key; one scan tests each key against the prefixes (the 500-closure
# impact world's 125 prefixes: 0.08 s a statement each -> 0.02 s for all).
_CONE_PREFIXES_KEYED = {
    rel: _CONE_FROM_KEY.format(start="any(x IN $prefixes WHERE starts_with(k.subject, x))", rel=rel) for rel in ("ASSERTS", "DENIES")
}
# Claims asserting a proposition with one predicate and one of some objects.
_NAMING = (
    "MATCH (p:Proposition) WHERE p.predicate = $predicate AND p.object IN $objects "
    "MATCH (c:Claim)-[:ASSERTS]->(p) RETURN DISTINCT c.id AS id, c.body AS body"
)
# The run invalidations voiding some claims, with when each was recorded.
# For one claim, and for a list (``_rows_by_id``: fed by an UNWIND, LadybugDB would read every claim per id).
_VOIDED = (
    "MATCH (k:Claim) WHERE k.id = $id MATCH (i:RunInvalidation)-[:VOIDS]->(k) RETURN k.id AS id, i.recorded_at AS recorded_at",
    "MATCH (k:Claim) WHERE k.id IN $ids MATCH (i:RunInvalidation)-[:VOIDS]->(k) RETURN k.id AS id, i.recorded_at AS recorded_at",
)
# The invalidations of some sources, with when each was recorded.
_INVALIDATIONS = (
    "UNWIND $sources AS s MATCH (i:SourceInvalidation)-[:INVALIDATES]->(:Source {id: s}) "
    "RETURN s AS source, i.invalid_from AS invalid_from, i.recorded_at AS recorded_at"
)
# Completeness declarations of one source for some predicates.
_COMPLETENESS_OF = (
    "MATCH (d:Completeness) WHERE d.source = $source AND d.predicate IN $predicates "
    "RETURN d.id AS id, d.body AS body ORDER BY id"
)


def _incoming() -> dict[str, set[str]]:
    """For each label: the relationship types that can point at it."""
    from gaf.store.schema import graph_schema

    out: dict[str, set[str]] = defaultdict(set)
    for rel, pairs in graph_schema().rels.items():
        for _, dst in pairs:
            out[dst].add(rel)
    return dict(out)


_INCOMING = _incoming()


@functools.cache
def _dependents_template(dst: str, rels: tuple[str, ...], as_of: bool) -> str:
    # Records that depend, through any of rels, on the record {ID} of label dst — written
    # (transaction time) by $as_of in the as-of variant — with the relationship type, on Neo4j.
    # One row whose list holds every (target, dependent, relationship): far cheaper for the
    # driver to decode than one record per edge.
    when = "WHERE x.written_at IS NULL OR x.written_at <= $as_of " if as_of else ""
    return f"MATCH (t:{dst} {{{{id: {{ID}}}}}})<-[r:{'|'.join(rels)}]-(x) {when}RETURN collect([{{ID}}, x.id, type(r)]) AS rows"


@functools.cache
def _dependents_by_id(dst: str, rels: tuple[str, ...], as_of: bool) -> tuple[str, str]:
    # The same on LadybugDB, a row per edge (target, dependent, relationship), for one record
    # (its primary key) and for a list (one scan of the label filtered by the ids): the
    # relationship's type is asked only when there are several (``label(r)`` costs a third more).
    written = "(x.written_at IS NULL OR x.written_at <= $as_of) " if as_of else ""
    edge = f"<-[r:{'|'.join(rels)}]-(x)"
    found = "RETURN t.id AS t, x.id AS d" + (", label(r) AS r" if len(rels) > 1 else "")
    one = f"MATCH (t:{dst} {{id: $id}}){edge} {'WHERE ' + written if written else ''}{found}"
    many = f"MATCH (t:{dst}){edge} WHERE t.id IN $ids {'AND ' + written if written else ''}{found}"
    return one, many


# Everything that depends on the given records of one label, in one statement: Neo4j plans
# the DISTINCT end nodes of a variable-length pattern as a pruning breadth-first expand,
# which visits each record once. Then every dependency edge leaving what was reached, and
# for each fact reached the justifications of the other facts of its proposition under
# its projection (for support counting) — the whole report in one round trip.
_REACH = (
    "MATCH (t:{label}) WHERE t.id IN $ids "
    "WITH collect(t) AS ts "
    "WITH [t IN ts | t.id] AS found, COLLECT {{ UNWIND ts AS t MATCH (t)<-[:{rels}*1..{depth}]-(x) "
    "RETURN DISTINCT x LIMIT $cap }} AS xs "
    "CALL {{ WITH xs UNWIND xs AS x MATCH (x)-[r:{rels}]->(y) RETURN collect([y.id, x.id, type(r)]) AS rows }} "
    "CALL {{ WITH xs UNWIND xs AS f WITH f WHERE f:AcceptedFact "
    "MATCH (f)-[:STATES]->(:Proposition)<-[:STATES]-(g:AcceptedFact) WHERE g.id <> f.id AND g.projection = f.projection "
    "RETURN collect([f.id, g.justification]) AS siblings }} "
    "RETURN found, rows, siblings"
)

#: How many hops LadybugDB expands a variable-length pattern at most (its binder refuses more).
LADYBUG_MAX_HOPS = 30

# ``reach`` on LadybugDB, from one start record: each dependent once (a shortest path to it), with
# its distance, and the dependency edges leaving it — one pattern, its join order given: left to
# its optimizer, LadybugDB often builds its hash table from every dependency edge of the store
# and probes it with the few dependents (20–70 ms a source on the impact benchmark's graphs of
# 20k–100k nodes, against 2–3 ms with the hint, measured on each).
_REACH_EDGES = (
    "MATCH (t:{label} {{id: $id}})<-[e:{rels}* SHORTEST 1..{depth}]-(x)-[r:{rels}]->(y) "
    "HINT ((x JOIN r) JOIN y) JOIN (t JOIN e) "
    "RETURN y.id AS t, x.id AS d, label(r) AS r, length(e) AS hops LIMIT {cap}"
)

# The same as (k, v) rows, for one fact and for a list (LadybugDB: ``_keyed``).
_SIBLINGS_KEYED = (
    "MATCH (f:AcceptedFact {{id: $id}})-[:STATES]->(:Proposition)<-[:STATES]-(g:AcceptedFact) "
    "WHERE g.id <> f.id AND g.projection = f.projection {when}RETURN f.id AS k, g.justification AS v",
    "MATCH (f:AcceptedFact)-[:STATES]->(:Proposition)<-[:STATES]-(g:AcceptedFact) "
    "WHERE f.id IN $ids AND g.id <> f.id AND g.projection = f.projection {when}RETURN f.id AS k, g.justification AS v",
)
# The justifications of other facts that state the same proposition under the same projection
# (found through the proposition node, so no property index is needed on either store).
_SIBLINGS = (
    "MATCH (f:AcceptedFact {{{{id: {{ID}}}}}})-[:STATES]->(:Proposition)<-[:STATES]-(g:AcceptedFact) "
    "WHERE g.id <> f.id AND g.projection = f.projection {when}RETURN collect([{{ID}}, g.justification]) AS rows"
)
