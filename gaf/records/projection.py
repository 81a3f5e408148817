"""The projection's records: the policy that turns claims into premises, and what it produces.

A projection policy with its trust, conflict and absence rules; the evaluation of
each proposition under it and the exclusions beside it; derivations, accepted
facts, the decision log, and the GAF that snapshots the facts of one decision.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any, ClassVar, Literal

from pydantic import Field, PositiveInt, model_validator

from gaf.arith import Sign
from gaf.records.base import Record
from gaf.records.ledger import CompletenessDeclaration
from gaf.rules import DerivationRule
from gaf.types import Instant, Interval, Key, Quantity, Ref, Scalar, Text, Value

# boilerplate: every record kind below declares the same things in the same order (kind, LABEL, TIME_FIELD,
# REFS, its fields), the declarations gaf/records/base.py reads; the shapes repeat by design. So do the StrEnums
# between them: each lists the names a field may take, one per line.


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


class Reruns(StrEnum):
    """How a pipeline run's reports (OpenLineage claims) count once a later run of the same job
    has rewritten a dataset it wrote: ``keep`` — they count, as any claim; ``supersede`` — they
    count for nothing, the re-run's reports stand in their place (``gaf.lineage.superseded_reports``)."""

    keep = "keep"
    supersede = "supersede"


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

    FEW = True

    kind: Literal["projection"] = "projection"
    LABEL: ClassVar[str] = "Projection"
    UNIQUE: ClassVar = ("name", "version")
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
    #: what the values of a predicate are known to be, so a sum over an open scope still has a bound
    signs: dict[Key, Sign] = {}
    #: predicates that take one value per subject at a time (an amount, a date, a status)
    functional: list[Key] = []
    #: whether a re-run of a pipeline job supersedes the reports of the run it rewrote
    reruns: Reruns = Reruns.keep
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
    bindings: dict[str, Scalar | Quantity] = {}
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


class ReviewSettings(Value):
    """The review policy an automatic acceptance ran under: candidates at or above this
    confidence were accepted without a person (the rest were routed to one)."""

    auto_accept_at: Annotated[float, Field(ge=0, le=1)]


class Decision(Record):
    """A decision-log entry: who accepted or refused which candidates, when and why.

    ``review`` is set when the acceptance was made by a review policy other than the
    default (auto-accept at confidence 1.0), so reopening and impact recompute with the
    same one; a decision without it was made under the default or by a person."""

    kind: Literal["decision"] = "decision"
    LABEL: ClassVar[str] = "Decision"
    TIME_FIELD: ClassVar = "decided_at"
    REFS: ClassVar = {"reviewer": ("DECIDED_BY", ("agent",)), "accepted": ("ACCEPTED", ("fact",))}
    MEMBERS: ClassVar = frozenset({"accepted"})

    reviewer: Ref
    decided_at: Instant
    reason: Text
    accepted: list[Ref] = []
    refused: list[Key] = []
    review: ReviewSettings | None = None


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
    MEMBERS: ClassVar = frozenset({"facts", "derivations", "unresolved", "rejected"})

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
