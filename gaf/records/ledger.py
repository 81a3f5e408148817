"""The ledger's records: who speaks, where fragments come from, and what they state.

Agents and sources, the invalidation of a source, claims and the propositions they
state, and the declarations that a source is complete for a scope, with the subject
patterns (exact, prefix*, *) those scopes and grants are written in.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from decimal import Decimal
from enum import StrEnum
from typing import Annotated, Any, ClassVar, Literal, TypeVar

from pydantic import AliasChoices, ConfigDict, Field, model_validator

from gaf.canonical import content_id
from gaf.records.base import Record
from gaf.types import Instant, Interval, Key, Quantity, Ref, Scalar, Text, Unit, Value, format_instant, number_text, scalar_json

# --------------------------------------------------------------------------- sources and agents


# boilerplate: every record kind below declares the same things in the same order (kind, LABEL, TIME_FIELD,
# REFS, its fields), the declarations gaf/records/base.py reads; the shapes repeat by design. So do the StrEnums
# between them: each lists the names a field may take, one per line.


class AgentType(StrEnum):
    person = "person"
    organisation = "organisation"
    software = "software"


class Agent(Record):
    """Someone or something that observes, issues, reviews, authorises or computes.

    The same notion as a PROV agent. ``key`` is a short handle people write in
    files instead of the id; ``acts_for`` records delegation (prov:actedOnBehalfOf).
    """

    FEW = True

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

    FEW = True

    kind: Literal["source"] = "source"
    LABEL: ClassVar[str] = "Source"
    REFS: ClassVar = {"operator": ("OPERATED_BY", ("agent",))}

    key: Key
    name: Text
    description: Text = ""
    operator: Ref | None = None


class SourceInvalidation(Record):
    """A source declared unreliable from some time on: a record, never a deletion."""

    FEW = True

    kind: Literal["invalidation"] = "invalidation"
    LABEL: ClassVar[str] = "SourceInvalidation"
    TIME_FIELD: ClassVar = "recorded_at"
    REFS: ClassVar = {"source": ("INVALIDATES", ("source",)), "by": ("DECLARED_BY", ("agent",))}

    source: Ref
    by: Ref
    reason: Text
    invalid_from: Instant
    recorded_at: Instant


class RunInvalidation(Record):
    """A pipeline run declared wrong: it failed after it had completed, a re-run of its job
    rewrote what it wrote, or someone says so. The claims made from its reports, and from the
    runs that read what it wrote (``gaf.lineage.resting_on_run``, with the dataset path to
    each), count for nothing from the time it is recorded: a record, never a deletion."""

    FEW = True

    kind: Literal["run_invalidation"] = "run_invalidation"
    LABEL: ClassVar[str] = "RunInvalidation"
    TIME_FIELD: ClassVar = "recorded_at"
    REFS: ClassVar = {"claims": ("VOIDS", ("claim",)), "evidence": ("EVIDENCED_BY", ("claim",)),
                      "by": ("DECLARED_BY", ("agent",))}  # fmt: skip
    MEMBERS: ClassVar = frozenset({"claims"})

    #: the run's subject, ``run:<runId>`` (gaf.lineage)
    run: Key
    #: why: ``failed_after_complete``, ``rerun`` or ``declared``
    why: Key
    #: the datasets the run wrote, ``dataset:<namespace>/<name>``
    wrote: list[Key] = []
    #: the claims voided: the run's own and those of the runs downstream of what it wrote
    claims: list[Ref] = Field(min_length=1)
    #: the claims that show it wrong (the FAIL after the COMPLETE; the re-run's reports)
    evidence: list[Ref] = []
    by: Ref
    reason: Text
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


class SubjectKey(Record):
    """A subject some proposition is about, as a node of its own: the key that "the propositions
    about ``lease:17``" are looked up by. Its id is its content, so every proposition about a
    subject points at one key (``ABOUT``), and a store without secondary indexes (the embedded
    one) finds a cone's propositions from a primary key instead of reading every proposition
    (schema version 7). A record about the store's shape, not of the chain: never exported,
    never counted among the store's records."""

    kind: Literal["subject_key"] = "subject_key"
    LABEL: ClassVar[str] = "SubjectKey"
    ABOUT_THE_STORE: ClassVar = True

    subject: Key


class Proposition(Record):
    """The smallest statement that is evaluated: subject, predicate, object, interval."""

    kind: Literal["proposition"] = "proposition"
    LABEL: ClassVar[str] = "Proposition"
    IMPLIED_RELS: ClassVar = {"ABOUT": ("subject_key",)}

    subject: Key
    predicate: Key
    object: Key | None = None
    value: Scalar | None = None
    #: the unit or currency of a numeric value: 25 EUR and 25 USD are two propositions
    unit: Unit | None = None
    valid: Interval | None = None

    @model_validator(mode="after")
    def _one_target(self) -> Proposition:
        return _object_or_value(self)

    def subject_key(self) -> SubjectKey:
        """The key of its subject (``ABOUT``), shared by every proposition about that subject."""
        return self._subject_key

    @functools.cached_property
    def _subject_key(self) -> SubjectKey:
        # Kept on the proposition: a write asks for it twice (its implied record, its edge), and
        # each ``shared`` lookup spelled its key as JSON.
        return SubjectKey.shared(subject=self.subject)

    def implied(self) -> list[Record]:
        return [self.subject_key()]

    def extra_edges(self) -> list[tuple[str, str]]:
        return [("ABOUT", self.subject_key().id)]

    @property
    def target(self) -> Any:
        """What rules read as its second argument: the object, else the value (a ``Quantity`` with its unit)."""
        if self.object is not None:
            return self.object
        if self.unit is not None:
            return Quantity.model_validate({"amount": self.value, "unit": self.unit})
        return self.value


class Statement(Value):
    """One thing a claim says: a proposition, affirmed or explicitly denied."""

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    subject: Key
    predicate: Key
    object: Key | None = None
    value: Scalar | None = None
    #: the value's unit or currency (``currency:`` is the same field): ``value: 25.00, currency: EUR``
    unit: Unit | None = Field(default=None, validation_alias=AliasChoices("unit", "currency"))
    valid: Interval | None = None
    polarity: Polarity = Polarity.affirmed

    @model_validator(mode="after")
    def _one_target(self) -> Statement:
        return _object_or_value(self)

    def proposition(self) -> Proposition:
        """The proposition this statement states (built once per statement: a claim's edges and
        implied records both ask for it, and building one validates and hashes it)."""
        return self._proposition

    @functools.cached_property
    def _proposition(self) -> Proposition:
        return Proposition(
            subject=self.subject, predicate=self.predicate, object=self.object, value=self.value, unit=self.unit, valid=self.valid
        )

    def proposition_id(self) -> str:
        """The id of the proposition this statement states, without building the record: the
        proposition's fields are the statement's but its polarity, of the same types, so its
        canonical JSON is the statement's dumped alike (a property test holds the two to the same
        id). A PROV export names every proposition of every claim it reads by id alone."""
        built = self.__dict__.get("_proposition")
        if built is not None:
            return built.id  # type: ignore[no-any-return]
        # the fields as they are, a decimal as JSON spells it, an interval's ends as instants are written
        fields: dict[str, Any] = {"kind": Proposition.KIND, "subject": self.subject, "predicate": self.predicate}
        if self.object is not None:
            fields["object"] = self.object
        if self.value is not None:
            fields["value"] = scalar_json(self.value)
        if self.unit is not None:
            fields["unit"] = self.unit
        if (valid := self.valid) is not None:
            fields["valid"] = {name: format_instant(at) for name, at in (("start", valid.start), ("end", valid.end)) if at is not None}
        return content_id(Proposition.KIND, fields)


def statement_text(predicate: str, subject: Any, obj: Any = None, value: Any = None, *, denied: bool = False, unit: str | None = None) -> str:
    """A statement as people read it: ``predicate(subject, object)``, or with the value
    written as JSON when there is no object (``paid(rent:7, true)``, ``note(rent:7, "late")``),
    ``predicate(subject)`` with neither, and ``NOT`` before a denial.

    The one way a statement or a scope is shown, so the CLI, the what-if report, warnings,
    error messages and the PROV labels say the same thing. Rules are written otherwise, on
    purpose: an atom of the rule language (``gaf.rules.Atom``) quotes its terms so that the
    text parses back into the same rule.
    """
    target = obj if obj is not None else _value_text(value) if value is not None else None
    if unit is not None and target is not None:
        target = f"{target} {unit}"
    return f"{'NOT ' if denied else ''}{predicate}({subject}{'' if target is None else ', ' + target})"


def _value_text(value: Any) -> str:
    """A statement's value as JSON writes it; a number exactly (``gaf.types.number_text``), with its unit."""
    if isinstance(value, Quantity):
        return str(value)
    if isinstance(value, (int, Decimal)) and not isinstance(value, bool):
        return number_text(value)
    return json.dumps(value, ensure_ascii=False)


_Target = TypeVar("_Target", Proposition, Statement)


def _object_or_value(s: _Target) -> _Target:
    """Refuse a proposition with both an object and a value.

    Rules match an atom's second argument against the object, or the value when
    there is no object, so with both the value would be recorded and never read.
    """
    if s.unit is not None and (isinstance(s.value, bool) or not isinstance(s.value, (int, Decimal))):
        raise ValueError(
            f"{statement_text(s.predicate, s.subject)} has a unit ({s.unit}) but no number for it to measure: "
            "a unit or currency goes with a numeric value (value: 25.00, currency: EUR)"
        )
    if s.object is not None and s.value is not None:
        raise ValueError(
            f"{statement_text(s.predicate, s.subject)} has both an object ({s.object!r}) and a value ({s.value!r}): keep object "
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


# --------------------------------------------------------------------------- completeness and subject patterns

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

    def scope_text(self) -> str:
        """The scope as people read it: ``predicate(subject pattern[, object pattern])``,
        the object left out when it is ``*``, any object (its default)."""
        return statement_text(self.predicate, self.subject, None if self.object == "*" else self.object)

    def covers(self, predicate: str, subject: Any, obj: Any) -> bool:
        """Whether a pattern (None: any value) falls inside this declaration's scope."""
        return (
            predicate == self.predicate
            and matches_pattern(self.subject, subject)
            and matches_pattern(self.object, obj)
        )


def matches_pattern(pattern: str, value: Any) -> bool:
    """Whether a value falls inside a subject or object pattern: an exact value, a prefix
    ending in ``*``, or ``*`` alone. The one place a pattern is read, so a policy's scope,
    a grant and a closed scope cannot disagree on what ``rent:*`` covers.

    Only ``*`` covers a value that is not text (None, a number): the others name keys."""
    if pattern == "*":
        return True
    if not isinstance(value, str):
        return False
    return value.startswith(pattern[:-1]) if pattern.endswith("*") else value == pattern


def split_patterns(patterns: Sequence[str]) -> tuple[list[str], list[str]]:
    """The exact values and the prefixes of some patterns, each sorted, as a store matches
    them (``*`` alone is the empty prefix): the same reading as ``matches_pattern``."""
    exact = sorted(p for p in patterns if not p.endswith("*"))
    prefixes = sorted(p[:-1] for p in patterns if p.endswith("*"))
    return exact, prefixes
