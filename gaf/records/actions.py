"""The action records: grants of power, action policies, the actions that execute verdicts, their statuses."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any, ClassVar, Literal

from pydantic import BeforeValidator, Field, PositiveInt

from gaf.records.base import Record
from gaf.records.ledger import matches_pattern
from gaf.rules import ClauseField, Operand, parse_expression
from gaf.types import Amount, Instant, Interval, Key, Ref, Text, Unit, Value

# boilerplate: every record kind below declares the same things in the same order (kind, LABEL, TIME_FIELD,
# REFS, its fields), the declarations gaf/records/base.py reads; the shapes repeat by design. So do the StrEnums
# between them: each lists the names a field may take, one per line.


class Grant(Record):
    """Agent X may authorise actions of kind K for subjects S, up to an amount and a frequency.

    Facts confer no power: an action needs a grant of its own, checked apart from
    the verdict it executes.
    """

    FEW = True

    kind: Literal["grant"] = "grant"
    LABEL: ClassVar[str] = "Grant"
    TIME_FIELD: ClassVar = "granted_at"
    REFS: ClassVar = {"agent": ("GRANTED_TO", ("agent",)), "granted_by": ("GRANTED_BY", ("agent",))}

    agent: Ref
    action_kind: Key
    subjects: list[Key] = Field(default=["*"], min_length=1)
    max_amount: Amount | None = None
    #: the unit or currency max_amount is in (an action in another unit is refused)
    unit: Unit | None = None
    frequency: PositiveInt | None = None
    period_days: PositiveInt = 30
    valid: Interval | None = None
    granted_by: Ref
    granted_at: Instant

    def covers(self, subject: str) -> bool:
        return any(matches_pattern(p, subject) for p in self.subjects)


def _expression(value: Any) -> Any:
    return parse_expression(value) if isinstance(value, str) and value.strip().startswith(("?", "(")) else value


class AmountRule(Value):
    """What an action of one kind may amount to, computed from the facts of the verdict it
    executes: ``value: "?n * ?price"`` with ``when: [ordered(?subject, ?n), unit_price(?subject, ?price)]``
    (``?subject`` is the action's subject). With ``cumulative``, what earlier executed
    actions of the kind on the subject paid counts against it: a second payment pays at
    most the balance, and a full one after a partial one is refused."""

    value: Annotated[Operand, BeforeValidator(_expression)]
    when: list[ClauseField] = []
    cumulative: bool = False


class ActionPolicy(Record):
    """Which verdict labels permit which kinds of action (a defeated rule never triggers an effect),
    and what an action of a kind may amount to, from the verdict's facts."""

    FEW = True

    kind: Literal["action_policy"] = "action_policy"
    LABEL: ClassVar[str] = "ActionPolicy"
    UNIQUE: ClassVar = ("name", "version")

    name: Key
    version: PositiveInt
    permits: dict[str, list[Key]]
    amounts: dict[Key, AmountRule] = {}

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
        "tops_up": ("TOPS_UP", ("action",)),
    }

    action_kind: Key
    subject: Key
    object: Key | None = None
    verdict: Ref
    authorised_by: Ref
    grant: Ref
    policy: Ref
    amount: Amount | None = None
    #: the unit or currency of the amount
    unit: Unit | None = None
    idempotency_key: Key
    compensates: Ref | None = None
    waiver: Ref | None = None
    #: the earlier action on the same subject whose amount this one completes
    tops_up: Ref | None = None
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
