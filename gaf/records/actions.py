"""The action records: grants of power, action policies, the actions that execute verdicts, their statuses."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any, ClassVar, Literal

from pydantic import Field, PositiveInt

from gaf.records.base import Record
from gaf.records.ledger import matches_pattern
from gaf.types import Instant, Interval, Key, Ref, Text

# boilerplate: every record kind below declares the same things in the same order (kind, LABEL, TIME_FIELD,
# REFS, its fields), the declarations gaf/records/base.py reads; the shapes repeat by design.


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
        return any(matches_pattern(p, subject) for p in self.subjects)


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
