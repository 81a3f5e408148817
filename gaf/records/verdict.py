"""The verdict's records: the rules of judgement, the closure that freezes a case, and the verdict.

Verdict rules with their roles, strengths, defeats and bands; the closure, which is
the replay contract (SPEC.md §4), with its runtime, signature and the declarations
it did not rely on; and the verdict reached on it.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any, ClassVar, Literal

from pydantic import Field, PositiveInt, model_validator

from gaf.records.base import Record
from gaf.rules import ClauseField, Not, RuleRef
from gaf.types import Instant, Interval, Key, Ref, Scalar, Text, Value

# boilerplate: every record kind below declares the same things in the same order (kind, LABEL, TIME_FIELD,
# REFS, its fields), the declarations gaf/records/base.py reads; the shapes repeat by design. So do the StrEnums
# between them: each lists the names a field may take, one per line.


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

    FEW = True

    kind: Literal["rules"] = "rules"
    LABEL: ClassVar[str] = "VerdictRules"
    UNIQUE: ClassVar = ("name", "version")

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


class LimitReached(Value):
    """A limit the closure's evaluation hit, said in the record as in the output (nothing
    silent): where (a derivation rule, or a verdict rule's condition, with the values bound
    around it), how far past the limit, and what that did to the answer."""

    rule: Text
    bindings: dict[str, Text] = {}
    propositions: PositiveInt
    limit: int
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
    MEMBERS: ClassVar = frozenset({"excluded"})

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
    #: limits its projection's rules or its verdict rules' conditions hit (``gaf.derive.LimitHit``)
    limits: list[LimitReached] = []
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


class ConeKey(Record):
    """One (predicate, subject pattern) pair some closure reads: the key a change's atoms are
    looked up by. Shared by every cone that reads it (its id is its content), so the store
    answers "which closures read ``paid`` about ``payment:*``" from a primary key."""

    kind: Literal["cone_key"] = "cone_key"
    LABEL: ClassVar[str] = "ConeKey"

    predicate: Key
    #: an exact subject, a prefix ending in ``*``, or ``*`` alone (``matches_pattern``)
    pattern: Key


class Cone(Record):
    """What a closure reads, recorded when it is closed: the subject patterns of its policy's
    scope × the predicates its projection and verdict rules read, with the closed scopes it
    assumed. A claim can move the closure only if it states an atom inside; a subject that
    arrives later (through a rule join, an aggregate) falls inside because the patterns do.
    A record of its own, linked to the closure, so closure ids stay what they were."""

    kind: Literal["cone"] = "cone"
    LABEL: ClassVar[str] = "Cone"
    REFS: ClassVar = {"closure": ("CONE_OF", ("closure",)), "completeness": ("CLOSED_OVER", ("completeness",))}
    IMPLIED_RELS: ClassVar = {"READS": ("cone_key",)}

    closure: Ref
    subjects: list[Key]
    predicates: list[Key]
    completeness: list[Ref] = []

    def keys(self) -> list[ConeKey]:
        """Every (predicate, subject pattern) the cone holds, by id."""
        made = [ConeKey.shared(predicate=p, pattern=s) for p in self.predicates for s in self.subjects]
        return sorted(made, key=lambda k: k.id)

    def implied(self) -> list[Record]:
        return list(self.keys())

    def extra_edges(self) -> list[tuple[str, str]]:
        return [("READS", k.id) for k in self.keys()]
