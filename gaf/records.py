"""The records of the chain (SPEC.md §2): immutable values with content ids.

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
import os
import types
import typing
from datetime import datetime
from enum import StrEnum
from typing import Annotated, Any, ClassVar, Literal, Self, TypeVar

from pydantic import BaseModel, Field, PositiveInt, PrivateAttr, ValidationError, model_validator

from gaf.canonical import canonical_json, digest, kind_of
from gaf.errors import IdMismatch, InvalidRecord, PayloadTooLarge, UnknownKind
from gaf.rules import ClauseField, DerivationRule, Not, RuleRef
from gaf.types import Instant, Interval, Key, Ref, Scalar, Text, Value

#: Default largest canonical record, in bytes (override with GAF_MAX_RECORD_BYTES).
DEFAULT_MAX_RECORD_BYTES = 1 << 20

#: Node properties every record has; no record field may take these names.
RESERVED_PROPERTIES = frozenset({"id", "kind", "body", "written_at"})


def max_record_bytes() -> int:
    """The configured size limit of one record's canonical JSON."""
    return byte_limit("GAF_MAX_RECORD_BYTES", DEFAULT_MAX_RECORD_BYTES)


def byte_limit(variable: str, default: int) -> int:
    """A size limit in bytes from the environment variable, else the default."""
    raw = os.environ.get(variable)
    if raw is None:
        return default
    try:
        limit = int(raw)
    except ValueError:
        raise InvalidRecord(f"{variable} must be an integer, got {raw!r}") from None
    if limit <= 0:
        raise InvalidRecord(f"{variable} must be positive, got {limit}")
    return limit


_SHARED: dict[tuple[type, str], Any] = {}
_SHARED_MAX = 50_000


def _shared_key(value: Any) -> Any:
    """How a nested model appears in a ``Record.shared`` key: tagged, so no string equals it."""
    if isinstance(value, BaseModel):
        return {"$model": type(value).__qualname__, **value.model_dump(mode="json")}
    raise TypeError(f"no shared key for {type(value).__name__}")


class Record(Value):
    """Base of every stored record: frozen, content-addressed, append-only.

    Subclasses declare ``kind`` as a Literal field, the Neo4j label, the fields
    that are not part of identity, and the fields that reference other records.
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

    _body: bytes = PrivateAttr(default=b"")

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
        cls.COLUMNS = {
            name: column
            for name, field in cls.model_fields.items()
            if name not in RESERVED_PROPERTIES and (column := _column_type(field.annotation))
        }
        RECORD_TYPES[cls.KIND] = cls

    @classmethod
    def shared(cls, **fields: Any) -> Self:
        """The record with these fields, built once per process and then shared.

        Records are immutable, so a projection re-run many times over nearly the same
        claims (what-if, sway) can reuse the propositions, evaluations and facts it built
        before instead of validating and hashing them again. Keyed by the fields as
        given (nested models by their JSON, tagged); the cache is dropped whole when it
        grows past ``_SHARED_MAX`` entries, so "once" is per cache generation."""
        try:
            key = (cls, json.dumps(fields, sort_keys=True, default=_shared_key))
        except TypeError:
            return cls(**fields)  # a field the key cannot spell out: build it afresh
        hit = _SHARED.get(key)
        if hit is None:
            if len(_SHARED) >= _SHARED_MAX:
                _SHARED.clear()
            hit = _SHARED[key] = cls(**fields)
        return hit

    @model_validator(mode="after")
    def _identify(self) -> Record:
        body = {"kind": self.KIND, **self.model_dump(mode="json", exclude={"id", "kind"}, exclude_defaults=True)}
        self._check_refs()
        self._body = canonical_json(body)
        limit = max_record_bytes()
        if len(self._body) > limit:
            raise PayloadTooLarge(
                f"{self.KIND} record is {len(self._body)} bytes, over the limit of {limit}",
                hint="split the payload, or raise GAF_MAX_RECORD_BYTES",
            )
        identity = self._body
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

    def _check_refs(self) -> None:
        for name, (_, kinds) in self.REFS.items():
            for ref in _as_list(getattr(self, name)):
                if kind_of(ref) not in kinds:
                    raise ValueError(f"{name} must reference a {' or '.join(kinds)}, got {ref}")

    @property
    def body(self) -> bytes:
        """The canonical JSON of the whole record (what the store keeps)."""
        return self._body

    def props(self) -> dict[str, Any]:
        """The scalar fields copied onto the graph node, in their JSON spelling."""
        dumped = self.model_dump(mode="json", include=set(self.COLUMNS))
        return {name: dumped.get(name) for name in self.COLUMNS}

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

    def time(self) -> datetime | None:
        """When the record entered the system by its own account (e.g. a claim's recorded_at)."""
        return getattr(self, self.TIME_FIELD) if self.TIME_FIELD else None

    def to_json(self) -> dict[str, Any]:
        """The record as a JSON object, with its kind and id."""
        return {"kind": self.KIND, "id": self.id, **self.model_dump(mode="json", exclude={"id", "kind"}, exclude_none=True)}


def _as_list(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    return list(value)


def _column_type(annotation: Any) -> str | None:
    """The store column type of a field, or None when it lives only in the body."""
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


RECORD_TYPES: dict[str, type[Record]] = {}


# --------------------------------------------------------------------------- sources and agents


class AgentType(StrEnum):
    person = "person"
    organisation = "organisation"
    software = "software"


class Agent(Record):
    """Someone or something that observes, issues, reviews, authorises or computes.

    The same notion as a PROV agent. ``key`` is a short handle people write in
    files instead of the id; ``acts_for`` records delegation (prov:actedOnBehalfOf).
    """

    kind: Literal["agent"] = "agent"
    LABEL: ClassVar[str] = "Agent"
    REFS: ClassVar = {"acts_for": ("ACTS_FOR", ("agent",))}

    key: Key
    name: Text
    agent_type: AgentType
    roles: list[Key] = []
    acts_for: Ref | None = None


class Source(Record):
    """Where fragments come from: a bank's finalised ledger, a tenant's messages."""

    kind: Literal["source"] = "source"
    LABEL: ClassVar[str] = "Source"
    REFS: ClassVar = {"operator": ("OPERATED_BY", ("agent",))}

    key: Key
    name: Text
    description: Text = ""
    operator: Ref | None = None


class SourceInvalidation(Record):
    """A source declared unreliable from some time on: a record, never a deletion."""

    kind: Literal["invalidation"] = "invalidation"
    LABEL: ClassVar[str] = "SourceInvalidation"
    TIME_FIELD: ClassVar = "recorded_at"
    REFS: ClassVar = {"source": ("INVALIDATES", ("source",)), "by": ("DECLARED_BY", ("agent",))}

    source: Ref
    by: Ref
    reason: Text
    invalid_from: Instant
    recorded_at: Instant


# --------------------------------------------------------------------------- claims and propositions


class Transformation(StrEnum):
    """How a fragment became a claim; each path has its own ways of failing."""

    api_export = "api_export"
    document = "document"
    ocr = "ocr"
    human_entry = "human_entry"
    llm_extraction = "llm_extraction"
    message = "message"
    other = "other"


class Polarity(StrEnum):
    affirmed = "affirmed"
    denied = "denied"


class Proposition(Record):
    """The smallest statement that is evaluated: subject, predicate, object, interval."""

    kind: Literal["proposition"] = "proposition"
    LABEL: ClassVar[str] = "Proposition"

    subject: Key
    predicate: Key
    object: Key | None = None
    value: Scalar | None = None
    valid: Interval | None = None

    @model_validator(mode="after")
    def _one_target(self) -> Proposition:
        return _object_or_value(self)


class Statement(Value):
    """One thing a claim says: a proposition, affirmed or explicitly denied."""

    subject: Key
    predicate: Key
    object: Key | None = None
    value: Scalar | None = None
    valid: Interval | None = None
    polarity: Polarity = Polarity.affirmed

    @model_validator(mode="after")
    def _one_target(self) -> Statement:
        return _object_or_value(self)

    def proposition(self) -> Proposition:
        return Proposition(subject=self.subject, predicate=self.predicate, object=self.object, value=self.value, valid=self.valid)


_Target = TypeVar("_Target", Proposition, Statement)


def _object_or_value(s: _Target) -> _Target:
    """Refuse a proposition with both an object and a value.

    Rules match an atom's second argument against the object, or the value when
    there is no object, so with both the value would be recorded and never read.
    """
    if s.object is not None and s.value is not None:
        raise ValueError(
            f"{s.predicate}({s.subject}) has both an object ({s.object!r}) and a value ({s.value!r}): keep object "
            "if it names another thing (an account, a rent), or value if it is a literal (an amount, a date, a flag), "
            "and drop the other"
        )
    return s


class Claim(Record):
    """What an observer stated or recorded: who said what, when, how, in what scope.

    ``recorded_at`` (transaction time) is kept but is not part of identity: the
    same fragment ingested twice is one claim.
    """

    kind: Literal["claim"] = "claim"
    LABEL: ClassVar[str] = "Claim"
    TIME_FIELD: ClassVar = "recorded_at"
    NON_IDENTITY: ClassVar = frozenset({"recorded_at"})
    REFS: ClassVar = {"source": ("FROM_SOURCE", ("source",)), "observer": ("OBSERVED_BY", ("agent",))}
    IMPLIED_RELS: ClassVar = {"ASSERTS": ("proposition",), "DENIES": ("proposition",)}

    source: Ref
    observer: Ref
    observed_at: Instant
    recorded_at: Instant
    transformation: Transformation
    scope: Text = ""
    statements: list[Statement] = Field(min_length=1, max_length=10_000)
    payload_digest: Annotated[str, Field(pattern=r"^sha256:[0-9a-f]{64}$")] | None = None
    failure_modes: list[Key] = []

    def implied(self) -> list[Record]:
        return [s.proposition() for s in self.statements]

    def extra_edges(self) -> list[tuple[str, str]]:
        rel = {Polarity.affirmed: "ASSERTS", Polarity.denied: "DENIES"}
        return [(rel[s.polarity], s.proposition().id) for s in self.statements]


# --------------------------------------------------------------------------- projection


class CompletenessDeclaration(Record):
    """Source S is complete for subject pattern X, predicate P, interval T, as of C.

    Only inside such a scope may "no claim found" count as false; everywhere else
    absence is unknown (Reiter's closed world, scoped). A pattern is an exact
    value, a prefix ending in ``*``, or ``*`` alone; ``object`` narrows the scope
    to statements about one object (e.g. credits to one account).
    """

    kind: Literal["completeness"] = "completeness"
    LABEL: ClassVar[str] = "Completeness"
    REFS: ClassVar = {"source": ("COMPLETE_SOURCE", ("source",))}

    source: Ref
    subject: Key = "*"
    predicate: Key
    object: Key = "*"
    valid: Interval
    as_of: Instant

    def covers(self, predicate: str, subject: Any, obj: Any) -> bool:
        """Whether a pattern (None: any value) falls inside this declaration's scope."""
        return (
            predicate == self.predicate
            and _pattern_covers(self.subject, subject)
            and _pattern_covers(self.object, obj)
        )


def _pattern_covers(pattern: str, value: Any) -> bool:
    if pattern == "*":
        return True
    if value is None or not isinstance(value, str):
        return False
    return value.startswith(pattern[:-1]) if pattern.endswith("*") else value == pattern


def matches_pattern(pattern: str, value: str) -> bool:
    """Whether a subject matches an exact, prefix* or * pattern."""
    return _pattern_covers(pattern, value)


class AbsenceMeaning(StrEnum):
    """What "no claim found" means for a predicate inside a declared complete scope."""

    false = "false"
    unknown = "unknown"


class TrustRule(Value):
    """Which source may establish which predicates, and whether it is authoritative."""

    source: Ref
    predicates: list[Key] = Field(min_length=1)
    authoritative: bool = False


class ConflictStrategy(StrEnum):
    authoritative_wins = "authoritative_wins"
    corroboration = "corroboration"
    unknown = "unknown"


class ConflictPolicy(Value):
    """How affirming and denying evidence is weighed, and how much is enough."""

    strategy: ConflictStrategy = ConflictStrategy.authoritative_wins
    #: independent (distinct) trusted sources needed when none is authoritative
    corroboration: PositiveInt = 1


class EvaluationRule(Value):
    """A per-predicate override of the conflict policy."""

    predicates: list[Key] = Field(min_length=1)
    conflict: ConflictPolicy


class Scope(Value):
    """Which subjects (exact, prefix*, or *) and which valid-time period a question covers."""

    subjects: list[Key] = []
    period: Interval | None = None


class Projection(Record):
    """A versioned projection policy for one kind of question (SPEC.md §3).

    It fixes how claims become the premises of a decision: which sources may
    establish what, how conflicts are settled, where absence means false, and
    which derivation rules apply. A published name@version never changes; a
    revision is a new version, and the old one stays readable.
    """

    kind: Literal["projection"] = "projection"
    LABEL: ClassVar[str] = "Projection"
    IMPLIED_RELS: ClassVar = {"DECLARES": ("completeness",)}
    REFS: ClassVar = {
        "parties": ("NAMES_PARTY", ("agent",)),
        "revises": ("REVISES", ("projection",)),
        "ratified": ("CITES", ("policy",)),
    }

    name: Key
    version: PositiveInt
    question: Text
    purpose: Text = ""
    cutoff: Instant | None = None
    scope: Scope = Scope()
    completeness: list[CompletenessDeclaration] = []
    absence: dict[str, AbsenceMeaning] = {}
    trust: list[TrustRule] = []
    parties: list[Ref] = []
    conclusions: list[Key] = []
    conflict: ConflictPolicy = ConflictPolicy()
    evaluation_rules: list[EvaluationRule] = []
    derivation_rules: list[DerivationRule] = []
    implementation: Key = "gaf-projection/1"
    revises: Ref | None = None
    ratified: list[Ref] = []

    def implied(self) -> list[Record]:
        return list(self.completeness)

    def extra_edges(self) -> list[tuple[str, str]]:
        return [("DECLARES", c.id) for c in self.completeness]

    @property
    def ref(self) -> str:
        return f"{self.name}@{self.version}"


class Outcome(StrEnum):
    accepted = "accepted"
    rejected = "rejected"
    unknown = "unknown"


class Evaluation(Record):
    """(claims, proposition, projection) → accepted | rejected | unknown, with the reason."""

    kind: Literal["evaluation"] = "evaluation"
    LABEL: ClassVar[str] = "Evaluation"
    REFS: ClassVar = {
        "proposition": ("EVALUATES", ("proposition",)),
        "projection": ("UNDER", ("projection",)),
        "supporting": ("SUPPORTED_BY", ("claim",)),
        "refuting": ("REFUTED_BY", ("claim",)),
        "absent_in": ("RELIED_ON_ABSENCE", ("completeness",)),
    }

    proposition: Ref
    projection: Ref
    outcome: Outcome
    reason: Text
    supporting: list[Ref] = []
    refuting: list[Ref] = []
    absent_in: list[Ref] = []


class Exclusion(Record):
    """Why one claim is not evidence for one proposition under a policy.

    It is kept beside the evaluation, never inside it: an evaluation — and every
    fact, derivation and GAF hash built on it — rests only on admitted evidence, so
    a claim the policy excludes can be removed and nothing moves. Auditors still
    see that the claim was read, and why it did not count; the closure lists it.
    """

    kind: Literal["exclusion"] = "exclusion"
    LABEL: ClassVar[str] = "Exclusion"
    # Relationship types of its own: an embedded store made before this record kind
    # existed gets them as new tables, where extending UNDER would need a migration.
    REFS: ClassVar = {
        "claim": ("EXCLUDES", ("claim",)),
        "proposition": ("EXCLUDED_FROM", ("proposition",)),
        "projection": ("EXCLUDED_UNDER", ("projection",)),
    }

    claim: Ref
    proposition: Ref
    projection: Ref
    reason: Text


class Derivation(Record):
    """The proof object: rule, bindings, premises, negative premises, conclusion."""

    kind: Literal["derivation"] = "derivation"
    LABEL: ClassVar[str] = "Derivation"
    REFS: ClassVar = {
        "conclusion": ("CONCLUDES", ("proposition",)),
        "projection": ("UNDER", ("projection",)),
        "premises": ("USED", ("fact", "evaluation")),
        "negative_premises": ("RELIED_ON_ABSENCE", ("completeness",)),
    }

    rule: Key
    bindings: dict[str, Scalar] = {}
    premises: list[Ref] = []
    negative_premises: list[Ref] = []
    conclusion: Ref
    projection: Ref
    confidence: Annotated[float, Field(ge=0, le=1)] = 1.0


class AcceptedFact(Record):
    """A proposition admitted as a premise within one decision boundary.

    Justified by exactly one evaluation or derivation; a proposition with several
    independent justifications has one accepted fact per justification.
    """

    kind: Literal["fact"] = "fact"
    LABEL: ClassVar[str] = "AcceptedFact"
    REFS: ClassVar = {
        "proposition": ("STATES", ("proposition",)),
        "justification": ("JUSTIFIED_BY", ("evaluation", "derivation")),
        "projection": ("UNDER", ("projection",)),
    }

    proposition: Ref
    justification: Ref
    projection: Ref


class Decision(Record):
    """A decision-log entry: who accepted or refused which candidates, when and why."""

    kind: Literal["decision"] = "decision"
    LABEL: ClassVar[str] = "Decision"
    TIME_FIELD: ClassVar = "decided_at"
    REFS: ClassVar = {"reviewer": ("DECIDED_BY", ("agent",)), "accepted": ("ACCEPTED", ("fact",))}

    reviewer: Ref
    decided_at: Instant
    reason: Text
    accepted: list[Ref] = []
    refused: list[Key] = []


class GAF(Record):
    """A snapshot of the accepted facts for one decision; id = hash of its members."""

    kind: Literal["gaf"] = "gaf"
    LABEL: ClassVar[str] = "GAF"
    REFS: ClassVar = {
        "projection": ("UNDER", ("projection",)),
        "facts": ("CONTAINS", ("fact",)),
        "derivations": ("INCLUDES", ("derivation",)),
        "unresolved": ("LEAVES_UNRESOLVED", ("proposition",)),
        "rejected": ("REJECTS", ("proposition",)),
    }

    projection: Ref
    facts: list[Ref] = []
    derivations: list[Ref] = []
    unresolved: list[Ref] = []
    rejected: list[Ref] = []

    @model_validator(mode="before")
    @classmethod
    def _sorted_members(cls, data: Any) -> Any:
        """Members are sets: sorted by id, so the snapshot's hash never depends on order."""
        if isinstance(data, dict):
            data = dict(data)
            for name in ("facts", "derivations", "unresolved", "rejected"):
                if isinstance(data.get(name), (list, tuple, set, frozenset)):
                    data[name] = sorted(set(data[name]))
        return data


# --------------------------------------------------------------------------- closure and verdict


class Role(StrEnum):
    warrant = "warrant"
    rebuttal = "rebuttal"
    defeater = "defeater"


class Strength(StrEnum):
    strict = "strict"
    defeasible = "defeasible"
    defeater = "defeater"


class VerdictRule(Value):
    """One rule of judgement: role, Nute strength, qualifier, backing and condition.

    The condition is a body in the derivation language, read three-valued against
    the GAF, with ``?subject`` bound to the closure's subject and each parameter
    bound as ``?name``. The same condition with other parameters or another
    backing is another rule.
    """

    name: Key
    role: Role
    strength: Strength = Strength.defeasible
    qualifier: Annotated[float, Field(gt=0, le=1)] = 1.0
    backing: Text = ""
    params: dict[str, Scalar] = {}
    condition: list[ClauseField] = []

    @model_validator(mode="after")
    def _coherent(self) -> VerdictRule:
        if self.strength == Strength.strict and self.role == Role.defeater:
            raise ValueError(f"rule {self.name} is strict and a defeater: a defeater only attacks, it cannot be strict")
        if self.strength == Strength.defeater and self.role == Role.warrant:
            raise ValueError(f"rule {self.name} is a warrant with defeater strength: defeaters make no judgement of their own")
        for clause in self.condition:
            inner = clause.not_ if isinstance(clause, Not) else clause
            if isinstance(inner, RuleRef):
                raise ValueError(f"rule {self.name}: verdict conditions read the GAF; derive {inner.rule} in the projection instead")
        return self


class Defeat(Value):
    """An attack of one rule on another (a defeat edge)."""

    attacker: Key
    attacked: Key


class Band(Value):
    """A label for verdicts in [low, high]."""

    label: Key
    low: Annotated[float, Field(ge=-1, le=1)]
    high: Annotated[float, Field(ge=-1, le=1)]

    @model_validator(mode="after")
    def _ordered(self) -> Band:
        if self.high < self.low:
            raise ValueError(f"band {self.label}: high {self.high} is below low {self.low}")
        return self


class VerdictRules(Record):
    """A versioned set of verdict rules, the defeat edges between them, and the labels."""

    kind: Literal["rules"] = "rules"
    LABEL: ClassVar[str] = "VerdictRules"

    name: Key
    version: PositiveInt
    conclusion: Text
    rules: list[VerdictRule] = Field(min_length=1)
    defeats: list[Defeat] = []
    aggregation: Literal["max", "min", "first", "mean"] = "max"
    bands: list[Band] = []
    default_label: Key = "inconclusive"

    @model_validator(mode="after")
    def _consistent(self) -> VerdictRules:
        names = [r.name for r in self.rules]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"rule names given twice: {', '.join(dupes)}")
        for d in self.defeats:
            for end in (d.attacker, d.attacked):
                if end not in names:
                    raise ValueError(f"defeat {d.attacker} → {d.attacked} names unknown rule {end!r}")
        pairs = [(d.attacker, d.attacked) for d in self.defeats]
        if len(set(pairs)) != len(pairs):
            raise ValueError("a defeat edge is given twice")
        bands = sorted(self.bands, key=lambda b: b.low)
        for a, b in zip(bands, bands[1:]):
            if b.low <= a.high:
                raise ValueError(f"bands {a.label} [{a.low}, {a.high}] and {b.label} [{b.low}, {b.high}] overlap")
        labels = [b.label for b in self.bands]
        if len(set(labels)) != len(labels) or self.default_label in labels or "undetermined" in labels:
            raise ValueError("band labels must be distinct, differ from the default label, and not be 'undetermined'")
        return self

    @property
    def ref(self) -> str:
        return f"{self.name}@{self.version}"


class Runtime(Value):
    """The runtime conditions a replay must match: precision, ordering, tie-breaking."""

    precision: Key = "float64; fixed point to epsilon=1e-12; results rounded to 12 decimals"
    ordering: Key = "records and rules sorted by id and name"
    tie_breaking: Key = "aggregation as declared by the rules; no registration order"
    time_precision: Key = "millisecond"


class Signature(Value):
    """An Ed25519 signature over a record's canonical body (without the signature), and the public key that checks it.

    It says who vouches for the record: an id proves the content did not change,
    a signature proves whose content it is.
    """

    algorithm: Literal["ed25519"] = "ed25519"
    public_key: str = Field(pattern=r"^[0-9a-f]{64}$", description="the raw 32-byte public key, hex")
    value: str = Field(pattern=r"^[0-9a-f]{128}$", description="the 64-byte signature, hex")


class IgnoredDeclaration(Value):
    """A completeness declaration the closure did not rely on, and why.

    Listed so that a declaration that covers nothing is said, not silently dropped:
    "the ledger is complete for October" that stops a day short closes no scope.
    """

    declaration: Ref
    reason: Text


class Closure(Record):
    """The replay contract: everything needed to recompute the verdict (SPEC.md §4).

    ``closed_at`` is kept but not part of identity: the same inputs closed twice
    are one closure. Nor is ``signature`` (gaf/signing.py): signing a closure
    does not change its id.
    """

    kind: Literal["closure"] = "closure"
    LABEL: ClassVar[str] = "Closure"
    TIME_FIELD: ClassVar = "closed_at"
    NON_IDENTITY: ClassVar = frozenset({"closed_at", "signature"})
    REFS: ClassVar = {
        "gaf": ("CLOSES", ("gaf",)),
        "projection": ("UNDER", ("projection",)),
        "rules": ("JUDGED_BY", ("rules",)),
        "completeness": ("ASSUMES_COMPLETE", ("completeness",)),
        "supersedes": ("SUPERSEDES", ("closure",)),
        "excluded": ("LISTS_EXCLUSION", ("exclusion",)),
    }

    question: Text
    purpose: Text = ""
    subject: Key
    event: Key | None = None
    period: Interval | None = None
    as_of: Instant
    gaf: Ref
    completeness: list[Ref] = []
    absence: Text = "absence is false only inside the declared complete scopes, unknown elsewhere; denial is not absence"
    uncertainty: Text = "unknown premises are taken each way; a verdict interval across a label boundary is undetermined"
    projection: Ref
    projection_version: PositiveInt
    implementation: Key
    rules: Ref
    rules_version: PositiveInt
    engine: Key
    runtime: Runtime = Runtime()
    bands: list[Band] = []
    default_label: Key = "inconclusive"
    canonicalisation: Key = "RFC8785-JCS+sha256"
    supersedes: list[Ref] = []
    #: claims read and not admitted as evidence, one Exclusion per (claim, proposition)
    excluded: list[Ref] = []
    #: completeness declarations of the policy that closed no scope here, with the reason
    ignored_completeness: list[IgnoredDeclaration] = []
    closed_at: Instant
    signature: Signature | None = None


class Verdict(Record):
    """Label, strength, its interval under unknown premises, and the full trace."""

    kind: Literal["verdict"] = "verdict"
    LABEL: ClassVar[str] = "Verdict"
    REFS: ClassVar = {"closure": ("DECIDES", ("closure",))}

    closure: Ref
    label: Key
    strength: Annotated[float, Field(ge=-1, le=1)]
    low: Annotated[float, Field(ge=-1, le=1)]
    high: Annotated[float, Field(ge=-1, le=1)]
    engine: Key
    trace: dict[str, Any] = {}


# --------------------------------------------------------------------------- action and reopen


class Grant(Record):
    """Agent X may authorise actions of kind K for subjects S, up to an amount and a frequency.

    Facts confer no power: an action needs a grant of its own, checked apart from
    the verdict it executes.
    """

    kind: Literal["grant"] = "grant"
    LABEL: ClassVar[str] = "Grant"
    TIME_FIELD: ClassVar = "granted_at"
    REFS: ClassVar = {"agent": ("GRANTED_TO", ("agent",)), "granted_by": ("GRANTED_BY", ("agent",))}

    agent: Ref
    action_kind: Key
    subjects: list[Key] = Field(default=["*"], min_length=1)
    max_amount: Annotated[float, Field(ge=0)] | None = None
    frequency: PositiveInt | None = None
    period_days: PositiveInt = 30
    valid: Interval | None = None
    granted_by: Ref
    granted_at: Instant

    def covers(self, subject: str) -> bool:
        return any(_pattern_covers(p, subject) for p in self.subjects)


class ActionPolicy(Record):
    """Which verdict labels permit which kinds of action (a defeated rule never triggers an effect)."""

    kind: Literal["action_policy"] = "action_policy"
    LABEL: ClassVar[str] = "ActionPolicy"

    name: Key
    version: PositiveInt
    permits: dict[str, list[Key]]

    @property
    def ref(self) -> str:
        return f"{self.name}@{self.version}"


class Action(Record):
    """A requested effect that executes a verdict under an authority's grant.

    ``requested_at`` is kept but not part of identity, so the same request sent
    twice with the same idempotency key is one action, and causes one effect.
    """

    kind: Literal["action"] = "action"
    LABEL: ClassVar[str] = "Action"
    TIME_FIELD: ClassVar = "requested_at"
    NON_IDENTITY: ClassVar = frozenset({"requested_at"})
    REFS: ClassVar = {
        "verdict": ("EXECUTES", ("verdict",)),
        "authorised_by": ("AUTHORISED_BY", ("agent",)),
        "grant": ("UNDER_GRANT", ("grant",)),
        "policy": ("PERMITTED_BY", ("action_policy",)),
        "compensates": ("COMPENSATES", ("action",)),
        "waiver": ("WAIVED_BY", ("waiver",)),
    }

    action_kind: Key
    subject: Key
    object: Key | None = None
    verdict: Ref
    authorised_by: Ref
    grant: Ref
    policy: Ref
    amount: Annotated[float, Field(ge=0)] | None = None
    idempotency_key: Key
    compensates: Ref | None = None
    waiver: Ref | None = None
    requested_at: Instant


class ActionStatusName(StrEnum):
    requested = "requested"
    authorised = "authorised"
    executed = "executed"
    refused = "refused"
    failed = "failed"
    compensated = "compensated"


class ActionStatus(Record):
    """One step in an action's life; statuses are appended, never edited."""

    kind: Literal["action_status"] = "action_status"
    LABEL: ClassVar[str] = "ActionStatus"
    TIME_FIELD: ClassVar = "at"
    REFS: ClassVar = {"action": ("STATUS_OF", ("action",))}

    action: Ref
    status: ActionStatusName
    at: Instant
    reason: Text = ""
    receipt: dict[str, Any] = {}


class Trigger(StrEnum):
    new_claim = "new_claim"
    source_invalidated = "source_invalidated"
    policy_change = "policy_change"
    appeal = "appeal"
    defect = "defect"


class Reopen(Record):
    """The trigger, the impact set found, and the closures that supersede."""

    kind: Literal["reopen"] = "reopen"
    LABEL: ClassVar[str] = "Reopen"
    TIME_FIELD: ClassVar = "at"
    NON_IDENTITY: ClassVar = frozenset({"at"})
    REFS: ClassVar = {
        "cause": ("TRIGGERED_BY", tuple(sorted({"claim", "invalidation", "policy", "projection", "rules", "appeal"}))),
        "reopened": ("REOPENS", ("closure",)),
        "superseding": ("PRODUCED", ("closure",)),
    }

    trigger: Trigger
    cause: Ref | None = None
    reason: Text = ""
    impact: list[Ref] = []
    reopened: list[Ref] = []
    superseding: list[Ref] = []
    at: Instant


# --------------------------------------------------------------------------- policy lifecycle


class CaseDecision(Record):
    """A human decision on one case: not a precedent."""

    kind: Literal["case_decision"] = "case_decision"
    LABEL: ClassVar[str] = "CaseDecision"
    TIME_FIELD: ClassVar = "decided_at"
    REFS: ClassVar = {
        "closure": ("DECIDES_CASE", ("closure",)),
        "decided_by": ("DECIDED_BY", ("agent",)),
        "settles": ("SETTLES", ("policy_exception",)),
    }

    closure: Ref
    settles: Ref | None = None
    decided_by: Ref
    decision: Text
    reason: Text
    decided_at: Instant


class PolicyCandidate(Record):
    """A proposed generalisation of one or more case decisions."""

    kind: Literal["policy_candidate"] = "policy_candidate"
    LABEL: ClassVar[str] = "PolicyCandidate"
    NON_IDENTITY: ClassVar = frozenset({"proposed_at"})
    TIME_FIELD: ClassVar = "proposed_at"
    REFS: ClassVar = {"cases": ("GENERALISES", ("case_decision",)), "proposed_by": ("PROPOSED_BY", ("agent",))}

    name: Key
    text: Text
    rule: dict[str, Any] = {}
    cases: list[Ref] = []
    proposed_by: Ref
    proposed_at: Instant


class RatifiedPolicy(Record):
    """A candidate ratified by an authority: scope, exceptions, effective date, version."""

    kind: Literal["policy"] = "policy"
    LABEL: ClassVar[str] = "RatifiedPolicy"
    NON_IDENTITY: ClassVar = frozenset({"ratified_at"})
    TIME_FIELD: ClassVar = "ratified_at"
    REFS: ClassVar = {
        "candidate": ("RATIFIES", ("policy_candidate",)),
        "authority": ("RATIFIED_BY", ("agent",)),
        "revises": ("REVISES", ("policy",)),
    }

    name: Key
    version: PositiveInt
    candidate: Ref | None = None
    authority: Ref
    text: Text
    rule: dict[str, Any] = {}
    scope: Scope = Scope()
    exceptions: list[Text] = []
    effective: Instant
    retroactive: bool = False
    revises: Ref | None = None
    ratified_at: Instant

    @property
    def ref(self) -> str:
        return f"{self.name}@{self.version}"


class PolicyException(Record):
    """A case outside a ratified policy, routed to human review."""

    kind: Literal["policy_exception"] = "policy_exception"
    LABEL: ClassVar[str] = "PolicyException"
    TIME_FIELD: ClassVar = "raised_at"
    REFS: ClassVar = {"policy": ("EXCEPTION_TO", ("policy",)), "closure": ("RAISED_FOR", ("closure",))}

    policy: Ref
    subject: Key
    closure: Ref | None = None
    reason: Text
    raised_at: Instant


class Waiver(Record):
    """One decision passed past one policy, on a named authority, with the reason."""

    kind: Literal["waiver"] = "waiver"
    LABEL: ClassVar[str] = "Waiver"
    TIME_FIELD: ClassVar = "granted_at"
    REFS: ClassVar = {
        "policy": ("WAIVES", ("policy", "projection", "rules", "action_policy")),
        "closure": ("WAIVED_FOR", ("closure",)),
        "authority": ("GRANTED_BY", ("agent",)),
    }

    policy: Ref
    closure: Ref
    authority: Ref
    reason: Text
    granted_at: Instant


class Appeal(Record):
    """A party's contest of a closure: a reopen trigger like any other."""

    kind: Literal["appeal"] = "appeal"
    LABEL: ClassVar[str] = "Appeal"
    TIME_FIELD: ClassVar = "filed_at"
    REFS: ClassVar = {"closure": ("APPEALS", ("closure",)), "by": ("APPEALED_BY", ("agent",))}

    closure: Ref
    by: Ref
    grounds: Text
    filed_at: Instant


# --------------------------------------------------------------------------- reading records


def record_type(kind: str, *, where: str | None = None) -> type[Record]:
    """The record class of a kind name, or UnknownKind naming the kinds there are."""
    try:
        return RECORD_TYPES[kind]
    except (KeyError, TypeError):
        raise UnknownKind(
            f"unknown record kind {kind!r}",
            where=where,
            hint=f"known kinds: {', '.join(sorted(RECORD_TYPES))}",
        ) from None


def parse_record(data: Any, *, where: str | None = None, kind: str | None = None) -> Record:
    """Build a record from a JSON object, turning every failure into a typed error.

    The object names its kind in ``kind`` (or the caller passes ``kind``); an ``id``
    in the object is checked against the content.
    """
    if not isinstance(data, dict):
        raise InvalidRecord(f"a record must be a JSON object, got {type(data).__name__}", where=where)
    kind = kind or data.get("kind")
    if kind is None:
        raise InvalidRecord("record has no 'kind'", where=where, hint=f"one of: {', '.join(sorted(RECORD_TYPES))}")
    cls = record_type(kind, where=where)
    try:
        return cls.model_validate(data)
    except ValidationError as exc:
        raise InvalidRecord(_describe(exc, kind), where=where) from None
    except InvalidRecord as exc:
        if exc.where is None and where is not None:
            exc.where = where
            exc.args = (exc.message,)
        raise


def parse_body(body: str | bytes, record_id: str) -> Record:
    """Read a stored body back into its record, checking it still matches its id."""
    return parse_record(json.loads(body) | {"id": record_id}, where=record_id)


def _describe(exc: ValidationError, kind: str) -> str:
    parts = []
    for err in exc.errors(include_url=False)[:5]:
        loc = ".".join(str(p) for p in err["loc"]) or "(record)"
        parts.append(f"{loc}: {err['msg']}")
    more = exc.error_count() - len(parts)
    tail = f"; and {more} more" if more > 0 else ""
    return f"invalid {kind}: " + "; ".join(parts) + tail


def json_schema() -> dict[str, Any]:
    """The JSON Schema of every record kind, for integrators."""
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "gaf records",
        "oneOf": [{"$ref": f"#/$defs/{cls.__name__}"} for cls in RECORD_TYPES.values()],
        "$defs": _merged_defs(),
    }


def _merged_defs() -> dict[str, Any]:
    defs: dict[str, Any] = {}
    for cls in RECORD_TYPES.values():
        schema = cls.model_json_schema(ref_template="#/$defs/{model}")
        defs.update(schema.pop("$defs", {}))
        defs[cls.__name__] = schema
    return defs
