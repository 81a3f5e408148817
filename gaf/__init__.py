"""gaf: turn open claims into closed, replayable, auditable decisions.

Claims → Projection → Graph of Accepted Facts → Closure → Verdict → Action → Reopen,
stored as typed nodes and relationships in Neo4j (or the embedded LadybugDB).

The public API is what ``__all__`` lists: the store and its settings, the records, one
function per step of the chain, and the typed errors. Three steps are named by their
modules, whose names they share: ``gaf.reopen.reopen``, ``gaf.verify.verify`` and
``gaf.whatif.whatif``. Impact analysis (``impact``), PROV
export (``prov_export``) and the auditor queries (``queries``) are packages of their own,
above this one.
"""

from gaf.actions import act, compensate
from gaf.canonical import canonical_json, content_id
from gaf.closure import Closed, close, replay
from gaf.errors import (
    ActionRefused,
    BatchRejected,
    ExportError,
    GafError,
    IdMismatch,
    InvalidRecord,
    NotAnAuthority,
    PayloadTooLarge,
    PolicyConflict,
    ReadOnlyViolation,
    RuleError,
    SigningKeyError,
    StoreError,
    StoreLocked,
    StoreNotFound,
    StoreUnavailable,
    UnestablishedPredicate,
    UnknownKind,
    UnknownPolicy,
    UnknownReference,
)
from gaf.ledger import IngestReport, ingest
from gaf.policies import publish, read_policy, read_rules, resolve, revise
from gaf.projection import Evaluated, Projected, ReviewPolicy, evaluate, project
from gaf.records import (
    GAF,
    AcceptedFact,
    Agent,
    Claim,
    Closure,
    Projection,
    Proposition,
    Record,
    Source,
    Statement,
    Verdict,
    VerdictRules,
    parse_record,
)
from gaf.reopen import after_invalidation, after_new_claims, after_policy_change, history, on_appeal
from gaf.settings import Settings
from gaf.store import GafStore, WriteReport, open_store

__version__ = "0.1.0"

__all__ = [
    # the store
    "GafStore", "Settings", "WriteReport", "open_store",
    # records
    "GAF", "AcceptedFact", "Agent", "Claim", "Closure", "Projection", "Proposition", "Record", "Source", "Statement",
    "Verdict", "VerdictRules", "canonical_json", "content_id", "parse_record",
    # the chain, one function per step
    "IngestReport", "ingest", "publish", "read_policy", "read_rules", "resolve", "revise",
    "Evaluated", "Projected", "ReviewPolicy", "evaluate", "project",
    "Closed", "close", "replay", "act", "compensate",
    "after_invalidation", "after_new_claims", "after_policy_change", "history", "on_appeal",
    # errors
    "ActionRefused", "BatchRejected", "ExportError", "GafError", "IdMismatch", "InvalidRecord", "NotAnAuthority",
    "PayloadTooLarge", "PolicyConflict", "ReadOnlyViolation", "RuleError", "SigningKeyError", "StoreError", "StoreLocked",
    "StoreNotFound", "StoreUnavailable", "UnestablishedPredicate", "UnknownKind", "UnknownPolicy", "UnknownReference",
    "__version__",
]  # fmt: skip
