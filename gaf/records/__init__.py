"""The records of the chain (SPEC.md §2): immutable values with content ids.

Every record is a frozen pydantic model whose id is the hash of its canonical
content (``gaf.records.base``, the machinery every kind shares: ids, bodies, the
size limit, the graph declarations). The kinds live in the module of the stage of
the chain they belong to: ``ledger`` (agents, sources, claims, propositions,
completeness), ``projection`` (policies, evaluations, facts, GAFs), ``verdict``
(verdict rules, closures, verdicts), ``actions``, ``reopen`` and ``lifecycle``
(case decisions, ratified policies, waivers). ``registry`` names every kind and reads
records from JSON. Import them from here: ``from gaf.records import Claim``.
"""

from gaf.records.actions import (
    Action,
    ActionPolicy,
    ActionStatus,
    ActionStatusName,
    Grant,
)
from gaf.records.base import (
    DEFAULT_MAX_RECORD_BYTES,
    RESERVED_PROPERTIES,
    Limits,
    Record,
    current_limits,
    limits,
    max_record_bytes,
)
from gaf.records.ledger import (
    Agent,
    AgentType,
    Claim,
    CompletenessDeclaration,
    Polarity,
    Proposition,
    Source,
    SourceInvalidation,
    Statement,
    Transformation,
    matches_pattern,
)
from gaf.records.lifecycle import (
    CaseDecision,
    PolicyCandidate,
    PolicyException,
    RatifiedPolicy,
    Waiver,
)
from gaf.records.projection import (
    GAF,
    AbsenceMeaning,
    AcceptedFact,
    ConflictPolicy,
    ConflictStrategy,
    Decision,
    Derivation,
    Evaluation,
    EvaluationRule,
    Exclusion,
    Outcome,
    Projection,
    Scope,
    TrustRule,
)
from gaf.records.registry import (
    RECORD_TYPES,
    json_schema,
    parse_body,
    parse_record,
    record_type,
)
from gaf.records.reopen import (
    Appeal,
    Reopen,
    Trigger,
)
from gaf.records.verdict import (
    Band,
    Closure,
    Defeat,
    IgnoredDeclaration,
    Role,
    Runtime,
    Signature,
    Strength,
    Verdict,
    VerdictRule,
    VerdictRules,
)

__all__ = [
    "AbsenceMeaning",
    "AcceptedFact",
    "Action",
    "ActionPolicy",
    "ActionStatus",
    "ActionStatusName",
    "Agent",
    "AgentType",
    "Appeal",
    "Band",
    "CaseDecision",
    "Claim",
    "Closure",
    "CompletenessDeclaration",
    "ConflictPolicy",
    "ConflictStrategy",
    "DEFAULT_MAX_RECORD_BYTES",
    "Decision",
    "Defeat",
    "Derivation",
    "Evaluation",
    "EvaluationRule",
    "Exclusion",
    "GAF",
    "Grant",
    "IgnoredDeclaration",
    "Limits",
    "Outcome",
    "Polarity",
    "PolicyCandidate",
    "PolicyException",
    "Projection",
    "Proposition",
    "RECORD_TYPES",
    "RESERVED_PROPERTIES",
    "RatifiedPolicy",
    "Record",
    "Reopen",
    "Role",
    "Runtime",
    "Scope",
    "Signature",
    "Source",
    "SourceInvalidation",
    "Statement",
    "Strength",
    "Transformation",
    "Trigger",
    "TrustRule",
    "Verdict",
    "VerdictRule",
    "VerdictRules",
    "Waiver",
    "current_limits",
    "json_schema",
    "limits",
    "matches_pattern",
    "max_record_bytes",
    "parse_body",
    "parse_record",
    "record_type",
]
