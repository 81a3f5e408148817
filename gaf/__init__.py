"""gaf: turn open claims into closed, replayable, auditable decisions.

Claims → Projection → Graph of Accepted Facts → Closure → Verdict → Action → Reopen,
stored as typed nodes and relationships in Neo4j (or the embedded LadybugDB).
"""

from gaf.canonical import canonical_json, content_id
from gaf.errors import (
    BatchRejected,
    GafError,
    IdMismatch,
    InvalidRecord,
    PayloadTooLarge,
    StoreLocked,
    StoreUnavailable,
    UnknownKind,
    UnknownReference,
)
from gaf.ledger import IngestReport, ingest
from gaf.records import (
    Agent,
    Claim,
    Proposition,
    Record,
    Source,
    Statement,
    parse_record,
)
from gaf.store import GafStore, WriteReport

__version__ = "0.1.0"

__all__ = [
    "Agent",
    "BatchRejected",
    "Claim",
    "GafError",
    "GafStore",
    "IdMismatch",
    "IngestReport",
    "InvalidRecord",
    "PayloadTooLarge",
    "Proposition",
    "Record",
    "Source",
    "Statement",
    "StoreLocked",
    "StoreUnavailable",
    "UnknownKind",
    "UnknownReference",
    "WriteReport",
    "__version__",
    "canonical_json",
    "content_id",
    "ingest",
    "parse_record",
]
