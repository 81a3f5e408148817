"""Actions on verdicts: act and compensate."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Annotated, Any, Optional

import typer

from gaf import policies
from gaf.cli.common import JsonOpt, StoreOpt, app, command, open_store, or_now, read_with, time_option
from gaf.cli.output import emit, out
from gaf.errors import InvalidValue
from gaf.records import ActionPolicy

# boilerplate: each command declares its own options in its signature (typer reads them from there), so the
# --store/--json/--by option lines and the open-call-emit shape of a body repeat from command to command.


def _amount(text: str) -> Decimal:
    """An amount as written on the command line, exactly: a finite number from 0."""
    try:
        amount = Decimal(text.strip())
    except ArithmeticError:
        amount = Decimal("NaN")
    if not amount.is_finite() or amount < 0:
        raise InvalidValue(f"{text!r} is not an amount", hint="an exact number from 0, written as digits: 60.50")
    return amount


@command(app, name="act")
def act_(
    verdict_id: Annotated[str, typer.Argument(help="The verdict the action executes.")],
    kind: Annotated[str, typer.Option("--kind", help="The kind of action, e.g. request-allocation.")],
    subject: Annotated[str, typer.Option(help="What the action targets.")],
    by: Annotated[str, typer.Option("--by", help="Key, id or id prefix of the agent who authorises it.")],
    grant: Annotated[str, typer.Option(help="The grant it acts under: its id or a unique prefix.")],
    policy: Annotated[str, typer.Option(help="The action policy: NAME or NAME@VERSION.")],
    key: Annotated[str, typer.Option("--key", help="Idempotency key: the same key never causes a second effect.")],
    amount: Annotated[
        Optional[Decimal],
        typer.Option(parser=read_with(_amount, "--amount"), metavar="AMOUNT", help="Amount, exact (60.50), checked against the grant's limit and what the verdict's facts give; "
                     "left out where the action policy computes it, it is that (or the balance left)."),
    ] = None,
    unit: Annotated[Optional[str], typer.Option(help="The amount's unit or currency, e.g. EUR.")] = None,
    tops_up: Annotated[Optional[str], typer.Option("--tops-up", help="The earlier action this one completes.")] = None,
    waiver: Annotated[Optional[str], typer.Option(help="A waiver letting this decision past the action policy.")] = None,
    webhook: Annotated[Optional[str], typer.Option(help="Execute by POSTing to this URL (default: record only).")] = None,
    at: Annotated[Optional[datetime], time_option("--at", help="When the action is requested (ISO 8601); default now.")] = None,
    store: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Check and execute one action on a verdict: authority, limits, idempotency, receipt.

    Exit code 5 when a check refuses it (nothing is executed or written).

    [b]Examples[/b]

      gaf act verdict:6d04… --kind request-allocation \\
          --subject rent:lease-17/2026-07 --by letting-agent --grant grant:… \\
          --policy rent-actions --key july-allocation-1

      gaf act verdict:91c2… --kind pay --subject order:po-1 \\
          --by accounts-payable --grant grant:… --policy invoice-actions \\
          --key po-1-rest --tops-up action:5e0a…
    """
    from gaf import actions

    with open_store(store) as s:
        who = s.resolve_id(by, ("agent",))
        done = actions.act(
            s, verdict=s.resolve_id(verdict_id, ("verdict",)), action_kind=kind, subject=subject, authorised_by=who,
            grant=s.resolve_id(grant, ("grant",)), policy=policies.resolve(s, policy, ActionPolicy, where="--policy").id,
            idempotency_key=key, at=or_now(at), amount=amount, unit=unit,
            tops_up=s.resolve_id(tops_up, ("action",)) if tops_up else None,
            waiver=s.resolve_id(waiver, ("waiver",)) if waiver else None,
            executor=actions.WebhookExecutor(webhook) if webhook else None,
        )  # fmt: skip
    emit(as_json, done.to_dict(), lambda: _print_acted(done))




def _print_acted(done: Any, what: str = "") -> None:
    out.print(f"{done.status.status.value}: {done.action.id}{what}" + ("" if done.effect else " (no new effect: this key was used before)"),
              highlight=False)  # fmt: skip


@command(app)
def compensate(
    action_id: Annotated[str, typer.Argument(help="The executed action whose effect was a mistake.")],
    by: Annotated[str, typer.Option("--by", help="Key, id or id prefix of the agent who authorises the compensation.")],
    grant: Annotated[str, typer.Option(help="The grant it acts under (for the original kind or compensate:KIND): its id or a unique prefix.")],
    policy: Annotated[str, typer.Option(help="The action policy: NAME or NAME@VERSION.")],
    key: Annotated[str, typer.Option("--key", help="Idempotency key: the same key never causes a second effect.")],
    reason: Annotated[str, typer.Option(help="What was wrong with the effect it undoes.")],
    webhook: Annotated[Optional[str], typer.Option(help="Execute by POSTing to this URL (default: record only).")] = None,
    at: Annotated[Optional[datetime], time_option("--at", help="When the compensation is requested (ISO 8601); default now.")] = None,
    store: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Undo an executed action's effect with a new action that points at it; the original is never edited.

    The original's status becomes compensated. Exit code 5 when a check refuses it (an
    action not executed, a grant that does not cover it); nothing is executed or written.

    [b]Examples[/b]

      gaf compensate action:6b78… --by letting-agent --grant grant:… \\
          --policy rent-actions --key july-allocation-request-withdrawn \\
          --reason "claim E settled the allocation"
    """
    from gaf import actions

    with open_store(store) as s:
        done = actions.compensate(
            s, s.resolve_id(action_id, ("action",)), authorised_by=s.resolve_id(by, ("agent",)),
            grant=s.resolve_id(grant, ("grant",)), policy=policies.resolve(s, policy, ActionPolicy, where="--policy").id, idempotency_key=key, at=or_now(at), reason=reason,
            executor=actions.WebhookExecutor(webhook) if webhook else None,
        )  # fmt: skip
    emit(as_json, done.to_dict(), lambda: _print_acted(done, f" compensates {action_id}"))
