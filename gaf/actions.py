"""Authorized actions: facts confer no power, so every effect is checked on its own.

A verdict says what is the case; it authorises nothing. An action executes a
verdict only when, separately: an action policy lets that verdict's label
trigger that kind of action; the closure behind it has not been superseded; an
agent holds a grant for the kind and subject, within its amount and frequency;
and the idempotency key has not already produced an effect. A refusal says which
check failed and writes nothing. A mistaken effect is never edited away: it is
compensated by a new action that points at it.
"""

from __future__ import annotations

import hashlib
import json
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any, Protocol, TypeVar

from gaf.arith import Bound, Number
from gaf.closure import gaf_facts
from gaf.derive import LimitHit, Truth, limits_of, solutions
from gaf.errors import ActionRefused, InvalidRecord, UnknownReference
from gaf.records import (
    GAF,
    Action,
    ActionPolicy,
    ActionStatus,
    ActionStatusName,
    Closure,
    Grant,
    Projection,
    Record,
    Verdict,
    Waiver,
)
from gaf.records.actions import AmountRule
from gaf.rules import Let
from gaf.store.base import GafStore
from gaf.store.questions import Questions
from gaf.types import Quantity, format_instant, number_text, to_number

R = TypeVar("R", bound=Record)


class Executor(Protocol):
    """Carries out an authorised action and returns a receipt proving it."""

    name: str

    def execute(self, action: Action) -> dict[str, Any]: ...


class RecordOnlyExecutor:
    """Executes nothing outside gaf: the receipt is the record itself."""

    name = "record-only"

    def execute(self, action: Action) -> dict[str, Any]:
        return {"executor": self.name, "action": action.id}


class WebhookExecutor:
    """POSTs the action as JSON to a configured URL; the receipt is the response's status and digest."""

    name = "webhook"

    def __init__(self, url: str, *, timeout: float = 10.0, headers: dict[str, str] | None = None):
        self.url = url
        self.timeout = timeout
        self.headers = headers or {}

    def execute(self, action: Action) -> dict[str, Any]:
        payload = json.dumps(action.to_json()).encode("utf-8")
        request = urllib.request.Request(
            self.url, data=payload, method="POST",
            headers={"Content-Type": "application/json", "Idempotency-Key": action.idempotency_key, **self.headers},
        )  # fmt: skip
        with urllib.request.urlopen(request, timeout=self.timeout) as response:  # noqa: S310 - the URL is configured by the operator
            body = response.read()
            return {
                "executor": self.name,
                "url": self.url,
                "status": response.status,
                "response_sha256": hashlib.sha256(body).hexdigest(),
            }


@dataclass
class Acted:
    """What ``act`` did: the action, its latest status, and whether this call caused the effect."""

    action: Action
    status: ActionStatus
    effect: bool

    def to_dict(self) -> dict[str, Any]:
        return {"action": self.action.to_json(), "status": self.status.to_json(), "effect": self.effect}


def act(  # boilerplate: a keyword-only signature, one parameter a line, as close() has
    store: GafStore,
    *,
    verdict: str,
    action_kind: str,
    subject: str,
    authorised_by: str,
    grant: str,
    policy: str,
    idempotency_key: str,
    at: datetime,
    amount: float | Decimal | int | None = None,
    unit: str | None = None,
    object: str | None = None,
    compensates: str | None = None,
    waiver: str | None = None,
    tops_up: str | None = None,
    executor: Executor | None = None,
    reason: str = "",
) -> Acted:
    """Check, record and execute one action; the same request again returns the first.

    ``reason`` says why it is requested and is kept on its ``requested`` status. Where the
    action policy says what an action of the kind amounts to (``ActionPolicy.amounts``),
    the amount is computed from the verdict's facts: an amount not given is that (or,
    cumulative, the balance left after what earlier actions on the subject paid), one
    given is checked against it. ``tops_up`` names the earlier action this one completes.
    Raises ActionRefused, naming the check that failed, before anything is written.
    """
    fields: dict[str, Any] = dict(
        action_kind=action_kind, subject=subject, object=object, verdict=verdict, authorised_by=authorised_by,
        grant=grant, policy=policy, amount=amount, unit=unit, idempotency_key=idempotency_key, compensates=compensates,
        waiver=waiver, tops_up=tops_up, requested_at=at,
    )  # fmt: skip
    earlier = store.find(Action, idempotency_key=idempotency_key)
    if earlier:
        if amount is None:  # the amount was computed the first time: the same request asks for that one
            fields |= {"amount": earlier[0].amount, "unit": unit or earlier[0].unit}
        return _repeat(store, Action(**fields), earlier[0])
    due = _due(store, fields, at)
    if due is not None and fields["amount"] is None:
        fields |= {"amount": due.balance, "unit": fields["unit"] or due.unit}
    action = Action(**fields)
    _check(store, action, at)
    if due is not None:
        due.check(action)
    statuses = [
        ActionStatus(action=action.id, status=ActionStatusName.requested, at=at, reason=reason),
        ActionStatus(action=action.id, status=ActionStatusName.authorised, at=at, reason=f"under grant {grant}"),
    ]
    if due is not None and due.rule.cumulative:
        # What earlier actions paid is read again inside the write, under the policy's lock: two
        # processes paying the same subject at once cannot both pay the balance.
        report = store.put([action, *statuses], at=at, lock=action.policy, guard=lambda q: due.check(action, q))
    else:
        report = store.put([action, *statuses], at=at)
    if action.id not in report.written:
        # A concurrent request with the same key got there first: its effect is the only one.
        return _repeat(store, action, store.get(action.id, Action))
    return _execute(store, action, executor or RecordOnlyExecutor(), at)


def _repeat(store: GafStore, action: Action, first: Action) -> Acted:
    if first.id != action.id:
        raise ActionRefused(
            f"idempotency key {action.idempotency_key!r} was already used by {first.id}, for a different request",
            hint="use a new key for a new request; repeat a request with exactly the same content",
        )
    return Acted(first, latest_status(store, first.id), effect=False)


def _execute(store: GafStore, action: Action, executor: Executor, at: datetime) -> Acted:
    try:
        receipt = executor.execute(action)
        status = ActionStatus(action=action.id, status=ActionStatusName.executed, at=at, receipt=receipt)
    except Exception as exc:  # an executor's failure is recorded, never hidden
        status = ActionStatus(action=action.id, status=ActionStatusName.failed, at=at, reason=f"{type(exc).__name__}: {exc}")
    store.put([status], at=at)
    if action.compensates:
        store.put([ActionStatus(action=action.compensates, status=ActionStatusName.compensated, at=at,
                                reason=f"compensated by {action.id}")], at=at)  # fmt: skip
    return Acted(action, status, effect=status.status == ActionStatusName.executed)


def compensate(
    store: GafStore, action_id: str, *, authorised_by: str, grant: str, policy: str, idempotency_key: str,
    at: datetime, reason: str, executor: Executor | None = None,
) -> Acted:  # fmt: skip
    """Undo a mistaken effect with a new action that points at it; the original is never edited.

    The reason is kept on the compensating action's ``requested`` status, so the record says what went wrong.
    """
    if not reason.strip():
        raise InvalidRecord("a compensation needs a reason", hint="say what was wrong with the effect it undoes")
    original = store.get(action_id)
    if not isinstance(original, Action):
        raise UnknownReference(f"no action {action_id}")
    current = latest_status(store, action_id).status
    if current != ActionStatusName.executed:
        raise ActionRefused(f"{action_id} is {current.value}, not executed: there is nothing to compensate")
    return act(
        store, verdict=original.verdict, action_kind=f"compensate:{original.action_kind}", subject=original.subject,
        object=original.object, authorised_by=authorised_by, grant=grant, policy=policy, amount=original.amount,
        idempotency_key=idempotency_key, compensates=action_id, at=at, executor=executor, reason=reason,
    )  # fmt: skip


# ---------------------------------------------------------------------- the checks


def _check(store: GafStore, action: Action, at: datetime) -> None:
    verdict = _need(store, action.verdict, Verdict, "verdict")
    policy = _need(store, action.policy, ActionPolicy, "action policy")
    grant = _need(store, action.grant, Grant, "grant")
    closure = _need(store, verdict.closure, Closure, "closure")
    later = store.superseded_by(closure.id)
    if later and not action.compensates:
        raise ActionRefused(
            f"the closure behind {verdict.id} was superseded by {later[0]}",
            hint="act on the verdict of the superseding closure",
        )
    base_kind = action.action_kind.removeprefix("compensate:")
    labels = policy.permits.get(base_kind, [])
    if verdict.label not in labels and not action.compensates and not _waived(store, action, policy, closure):
        raise ActionRefused(
            f"action policy {policy.ref} does not let a verdict labelled {verdict.label!r} trigger {base_kind!r}"
            + (f" (it needs {', '.join(labels)})" if labels else " (no label does)"),
        )
    if grant.agent != action.authorised_by:
        raise ActionRefused(f"grant {grant.id} is held by {grant.agent}, not by {action.authorised_by}")
    if grant.action_kind not in (action.action_kind, base_kind):
        raise ActionRefused(f"grant {grant.id} covers {grant.action_kind!r}, not {action.action_kind!r}")
    if not grant.covers(action.subject):
        raise ActionRefused(f"grant {grant.id} does not cover subject {action.subject!r} (it covers {', '.join(grant.subjects)})")
    if grant.valid is not None and not grant.valid.contains(at):
        raise ActionRefused(f"grant {grant.id} is not valid at {format_instant(at)}")
    if grant.max_amount is not None:
        if grant.unit is not None and action.unit != grant.unit:
            raise ActionRefused(f"grant {grant.id} limits amounts in {grant.unit}, and this one is in {action.unit or 'no unit'}")
        if (action.amount or 0) > grant.max_amount:
            raise ActionRefused(
                f"amount {_shown(action.amount or 0, action.unit)} is over the grant's limit of {_shown(grant.max_amount, grant.unit)}"
            )
    if grant.frequency is not None:
        since = at - timedelta(days=grant.period_days)
        used = store.executed_under(grant.id, since, at)
        if used >= grant.frequency:
            raise ActionRefused(
                f"grant {grant.id} allows {grant.frequency} action(s) per {grant.period_days} days; "
                f"{used} already executed since {format_instant(since)}"
            )


# ---------------------------------------------------------------------- amounts that follow the facts


@dataclass(frozen=True)
class Due:
    """What an action may amount to under its policy's amount rule: computed from the
    verdict's facts, less (cumulative) what earlier executed actions on the subject paid."""

    rule: AmountRule
    kind: str
    subject: str
    #: the amount the verdict's facts give, bare, and its unit
    total: Number
    unit: str | None
    #: what earlier executed actions of the kind on the subject paid, when cumulative
    paid: Number
    paid_by: tuple[str, ...]

    @property
    def balance(self) -> Number:
        return self.total - self.paid if self.rule.cumulative else self.total

    def check(self, action: Action, questions: Questions | None = None) -> None:
        """Refuse an amount over the due (or the balance); inside a write, read what was paid again."""
        due = self
        if questions is not None and self.rule.cumulative:
            paid, paid_by = _paid(questions, self.kind, self.subject, self.unit)
            due = replace(self, paid=paid, paid_by=paid_by)
        if action.unit != due.unit:
            raise ActionRefused(
                f"amount in {action.unit or 'no unit'}, but the verdict's facts give {due.kind} in {due.unit or 'no unit'}",
                hint="give the amount in the unit the facts are in",
            )
        amount = action.amount if action.amount is not None else 0
        if due.rule.cumulative and due.balance <= 0:
            raise ActionRefused(
                f"{due.kind} on {due.subject} is paid in full: {_shown(due.paid, due.unit)} of {_shown(due.total, due.unit)} "
                f"already, by {', '.join(due.paid_by)}",
                hint="nothing is left to pay; compensate an earlier action if it was wrong",
            )
        if amount > due.balance:
            what = (f"the balance of {_shown(due.balance, due.unit)} ({_shown(due.total, due.unit)} due, "
                    f"{_shown(due.paid, due.unit)} paid by {', '.join(due.paid_by)})" if due.paid_by
                    else f"the {_shown(due.total, due.unit)} the verdict's facts give")  # fmt: skip
            raise ActionRefused(
                f"amount {_shown(amount, due.unit)} is more than {what}",
                hint="ask for at most that, or leave the amount out to be given it",
            )


def _shown(amount: Number, unit: str | None) -> str:
    return number_text(to_number(amount)) + (f" {unit}" if unit else "")


def _due(store: GafStore, fields: dict[str, Any], at: datetime) -> Due | None:
    """The due amount of a requested action, from its policy's amount rule and its verdict's facts (None: no rule)."""
    if fields["compensates"]:
        return None  # a compensation undoes what was paid, whatever the facts say now
    policy = _need(store, fields["policy"], ActionPolicy, "action policy")
    kind = fields["action_kind"]
    rule = policy.amounts.get(kind)
    if rule is None:
        return None
    verdict = _need(store, fields["verdict"], Verdict, "verdict")
    closure = _need(store, verdict.closure, Closure, "closure")
    gaf = _need(store, closure.gaf, GAF, "GAF")
    projection = _need(store, gaf.projection, Projection, "projection policy")
    facts, _ = gaf_facts(store, gaf, projection, closure.as_of)
    subject = fields["subject"]
    clauses = [*rule.when, Let(let="?amount_due", be=rule.value)]
    hits: list[LimitHit] = []
    found = solutions(clauses, facts, {"?subject": subject}, limits=hits)
    settled = {b["?amount_due"] for truth, b, _ in found if truth == Truth.TRUE and not isinstance(b["?amount_due"], Bound)}
    if len(settled) != 1:
        why = ("the facts give several: " + ", ".join(sorted(str(v) for v in settled)) if settled
               else "the facts do not settle it")  # fmt: skip
        # what left it unsettled, where a limit did
        why += "".join(f"; limit hit: {hit.text()}" for hit in limits_of([*hits, *facts.limits]))
        raise ActionRefused(
            f"policy {policy.ref} computes {kind} from the verdict's facts, and {why}",
            hint="act on a verdict whose closure holds the facts the amount is computed from",
        )
    (value,) = settled
    total, unit = (value.amount, value.unit) if isinstance(value, Quantity) else (value, None)
    if not isinstance(total, (int, Decimal)) or isinstance(total, bool) or total < 0:
        raise ActionRefused(f"policy {policy.ref} computes {kind} as {value!r}, which is not an amount")
    paid, paid_by = _paid(store, kind, subject, unit) if rule.cumulative else (0, ())
    if fields["tops_up"] is not None:
        _check_top_up(store, fields["tops_up"], kind, subject)
    return Due(rule, kind, subject, total, unit, paid, paid_by)


def _paid(questions: Questions, kind: str, subject: str, unit: str | None) -> tuple[Number, tuple[str, ...]]:
    """What actions of a kind on a subject paid or are paying: executed ones, and those authorised
    and not yet executed (an effect in flight holds its amount); compensated, refused and failed
    ones do not count."""
    earlier = questions.actions_on(subject, kind)
    latest: dict[str, ActionStatus] = {}
    for action_id, _, status in questions.action_statuses([a.id for a in earlier]):
        if action_id not in latest or status_order(status) > status_order(latest[action_id]):
            latest[action_id] = status
    counted = [a for a in earlier if a.id in latest and latest[a.id].status in _COUNTED]
    total: Number = 0
    for a in counted:
        if a.unit != unit:
            raise ActionRefused(f"{a.id} paid {kind} on {subject} in {a.unit or 'no unit'}, not {unit or 'no unit'}: mixed units")
        total = to_number(Decimal(total) + Decimal(a.amount or 0))
    return total, tuple(sorted(a.id for a in counted))


#: The statuses whose actions count toward a cumulative limit: paid, or about to be.
_COUNTED = frozenset({ActionStatusName.requested, ActionStatusName.authorised, ActionStatusName.executed})


def _check_top_up(store: GafStore, earlier_id: str, kind: str, subject: str) -> None:
    earlier = store.get(earlier_id)
    if not isinstance(earlier, Action) or earlier.action_kind != kind or earlier.subject != subject:
        raise ActionRefused(
            f"{earlier_id} is not an earlier {kind} on {subject}: a top-up completes an action of its own kind and subject"
        )
    if latest_status(store, earlier_id).status != ActionStatusName.executed:
        raise ActionRefused(f"{earlier_id} was not executed: there is nothing to top up")


def _need(store: GafStore, record_id: str, cls: type[R], what: str) -> R:
    record = store.get(record_id)
    if not isinstance(record, cls):
        raise ActionRefused(f"no {what} {record_id}", hint=f"an action needs an existing {what}")
    return record


def _waived(store: GafStore, action: Action, policy: ActionPolicy, closure: Closure) -> bool:
    if action.waiver is None:
        return False
    waiver = store.get(action.waiver)
    return isinstance(waiver, Waiver) and waiver.policy == policy.id and waiver.closure == closure.id


_ORDER = {s: i for i, s in enumerate(ActionStatusName)}


def status_order(status: ActionStatus) -> tuple[datetime, int]:
    """How statuses of one action follow each other: by time, then by lifecycle stage."""
    return (status.at, _ORDER[status.status])


def statuses(store: GafStore, action_id: str) -> list[ActionStatus]:
    """An action's statuses in the order they happened."""
    return sorted((status for _, _, status in store.action_statuses([action_id])), key=status_order)


def latest_status(store: GafStore, action_id: str) -> ActionStatus:
    found = statuses(store, action_id)
    if not found:
        raise UnknownReference(f"action {action_id} has no status")
    return found[-1]


def file_executor(path: str) -> Callable[[], Executor]:
    """An executor that appends one line per effect to a file (for demonstrations and tests)."""

    class _FileExecutor:
        name = "file"

        def execute(self, action: Action) -> dict[str, Any]:
            with open(path, "a", encoding="utf-8") as f:
                f.write(action.id + "\n")
            return {"executor": self.name, "path": path}

    return _FileExecutor
