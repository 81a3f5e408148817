"""The reopen records: what triggers a reopen, the reopen itself, and a party's appeal."""

from __future__ import annotations

from enum import StrEnum
from typing import ClassVar, Literal

from gaf.records.base import Record
from gaf.types import Instant, Ref, Text

# boilerplate: every record kind below declares the same things in the same order (kind, LABEL, TIME_FIELD,
# REFS, its fields), the declarations gaf/records/base.py reads; the shapes repeat by design. So do the StrEnums
# between them: each lists the names a field may take, one per line.


class Trigger(StrEnum):
    new_claim = "new_claim"
    source_invalidated = "source_invalidated"
    run_invalidated = "run_invalidated"
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
        "cause": ("TRIGGERED_BY", tuple(sorted({"claim", "invalidation", "run_invalidation", "policy", "projection", "rules", "appeal"}))),
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


class Appeal(Record):
    """A party's contest of a closure: a reopen trigger like any other."""

    FEW = True

    kind: Literal["appeal"] = "appeal"
    LABEL: ClassVar[str] = "Appeal"
    TIME_FIELD: ClassVar = "filed_at"
    REFS: ClassVar = {"closure": ("APPEALS", ("closure",)), "by": ("APPEALED_BY", ("agent",))}

    closure: Ref
    by: Ref
    grounds: Text
    filed_at: Instant
