"""The policy lifecycle's records: case decisions, candidates, ratified policies, exceptions and waivers."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import PositiveInt

from gaf.records.base import Record
from gaf.records.projection import Scope
from gaf.types import Instant, Key, Ref, Text

# boilerplate: every record kind below declares the same things in the same order (kind, LABEL, TIME_FIELD,
# REFS, its fields), the declarations gaf/records/base.py reads; the shapes repeat by design.


class CaseDecision(Record):
    """A human decision on one case: not a precedent."""

    FEW = True

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

    FEW = True

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

    FEW = True

    kind: Literal["policy"] = "policy"
    LABEL: ClassVar[str] = "RatifiedPolicy"
    UNIQUE: ClassVar = ("name", "version")
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

    FEW = True

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
