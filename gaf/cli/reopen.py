"""Reopen decisions after new evidence, an invalidated source, a policy change or an appeal."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Annotated, Any

import typer

from gaf import policies
from gaf import reopen as reopening

# boilerplate: the names this command group takes from gaf/cli/common.py and output.py, one per line
from gaf.canonical import short_ids
from gaf.cli.common import (
    AtOpt,
    AsOfOpt,
    group,
    JsonOpt,
    QuietOpt,
    ReviewerOpt,
    StoreOpt,
    app,
    command,
    open_store,
    or_now,
    signing_key,
    time_option,
)
from gaf.cli.output import (
    Ticker,
    emit,
    out,
)
from gaf.ledger import ingest as ingest_records
from gaf.records import Claim, Projection

# boilerplate: each command declares its own options in its signature (typer reads them from there), so the
# --store/--json/--by option lines and the open-call-emit shape of a body repeat from command to command.

reopen_app = group("Reopen decisions after new evidence, an invalidated source or pipeline run, a policy change or an appeal.")
app.add_typer(reopen_app, name="reopen")


def _print_reopened(done: Any) -> None:
    out.print(f"reopen {done.event.id} ({done.event.trigger.value})", highlight=False)
    shown = short_ids(step[end] for step in done.superseded for end in ("old", "new"))
    for step in done.superseded:
        out.print(f"  {shown[step['old']]} {step['old_label']} → {shown[step['new']]} {step['new_label']}", highlight=False)
    if not done.superseded:
        out.print("  no standing closure was affected")
    for action in done.to_compensate:
        out.print(f"  [red]executed action needs cancellation or compensation:[/] {action}", highlight=False)


@command(reopen_app, "new-claim")
def reopen_new_claim(
    path: Annotated[Path, typer.Argument(help="A claims file: its claims are ingested, then what they affect is reopened.")],
    reviewer: ReviewerOpt, as_of: AsOfOpt = None,
    at: AtOpt = None, store: StoreOpt = None, quiet: QuietOpt = False, as_json: JsonOpt = False,
) -> None:  # fmt: skip
    """Ingest new evidence and reopen every standing closure it reaches.

    [b]Examples[/b]

      gaf reopen new-claim examples/rent/claim-e.yaml --reviewer registry-clerk \\
          --as-of 2026-07-21
      gaf reopen new-claim claim-e.yaml --reviewer registry-clerk \\
          --as-of 2026-07-21 --at 2026-07-21T09:00:00Z
    """
    import impact

    when = or_now(as_of)
    recorded = or_now(at)
    with open_store(store) as s, Ticker(f"reopen new-claim {path}", quiet=quiet) as tick:
        report = ingest_records(s, path, recorded_at=recorded, progress=tick)
        claims = [r for r in s.get_many(report.write.written + report.write.existing).values() if isinstance(r, Claim)]
        who = s.resolve_id(reviewer, ("agent",))
        results = reopening.after_new_claims(s, claims, impact=impact, reviewer=who, at=recorded, as_of=when,
                                             signing_key=signing_key(), progress=tick)  # fmt: skip
    def text() -> None:
        for r in results:
            _print_reopened(r)

    emit(as_json, [r.to_dict() for r in results], text)


@command(reopen_app, "source")
def reopen_source(
    source: Annotated[str, typer.Argument(help="The source to invalidate: its key, id or id prefix.")],
    by: Annotated[str, typer.Option("--by", help="Key, id or id prefix of the agent declaring it invalid.")],
    reason: Annotated[str, typer.Option(help="Why the source is invalid.")],
    invalid_from: Annotated[datetime, time_option("--invalid-from", help="Claims observed from this time on count for nothing (ISO 8601).")],
    reviewer: ReviewerOpt, as_of: AsOfOpt = None, at: AtOpt = None, store: StoreOpt = None, quiet: QuietOpt = False,
    as_json: JsonOpt = False,
) -> None:  # fmt: skip
    """Record a source invalidation and reopen every standing closure that rested on it.

    [b]Examples[/b]

      gaf reopen source bank-ledger --by registry-clerk \\
          --reason "export corrupted" --invalid-from 2026-07-01 \\
          --reviewer registry-clerk
    """
    import impact

    when = or_now(as_of)
    with open_store(store) as s, Ticker(f"reopen source {source}", quiet=quiet) as tick:
        source_id = s.resolve_id(source, ("source",))
        who = s.resolve_id(by, ("agent",))
        reviewer_id = s.resolve_id(reviewer, ("agent",))
        done = reopening.after_invalidation(s, source_id, impact=impact, by=who, reason=reason,
                                            invalid_from=invalid_from, reviewer=reviewer_id, at=or_now(at),
                                            as_of=when, signing_key=signing_key(), progress=tick)  # fmt: skip
    emit(as_json, done.to_dict(), lambda: _print_reopened(done))


@command(reopen_app, "run")
def reopen_run(
    run: Annotated[str, typer.Argument(help="The OpenLineage runId of the run found wrong (run:<runId> or the bare id).")],
    by: Annotated[str, typer.Option("--by", help="Key, id or id prefix of the agent declaring the run wrong.")],
    reason: Annotated[str, typer.Option(help="Why the run is wrong.")],
    reviewer: ReviewerOpt, as_of: AsOfOpt = None, at: AtOpt = None, store: StoreOpt = None, quiet: QuietOpt = False,
    as_json: JsonOpt = False,
) -> None:  # fmt: skip
    """Record a run invalidation and reopen every standing closure that rested on the run.

    The run's reports, and those of the runs downstream of what it wrote, count for nothing
    from then on (`gaf impact run` shows them first, with the dataset path to each).

    [b]Examples[/b]

      gaf reopen run 01941d6e-0000-7000-8000-000000000001 --by data-steward \\
          --reason "the seed was corrected and its test fails" \\
          --reviewer data-steward
    """
    import impact

    with open_store(store) as s, Ticker(f"reopen run {run}", quiet=quiet) as tick:
        who = s.resolve_id(by, ("agent",))
        reviewer_id = s.resolve_id(reviewer, ("agent",))
        done = reopening.after_run_invalidation(s, run, impact=impact, by=who, reason=reason, reviewer=reviewer_id,
                                                at=or_now(at), as_of=or_now(as_of), signing_key=signing_key(),
                                                progress=tick)  # fmt: skip
    emit(as_json, done.to_dict(), lambda: _print_reopened(done))


@command(reopen_app, "policy")
def reopen_policy(
    old: Annotated[str, typer.Argument(help="The superseded projection policy version: NAME@VERSION.")],
    reviewer: ReviewerOpt, as_of: AsOfOpt = None, at: AtOpt = None, store: StoreOpt = None, quiet: QuietOpt = False,
    as_json: JsonOpt = False,
) -> None:  # fmt: skip
    """Re-decide the standing closures of an older policy version under the version that governs each.

    That is the latest version, unless a ratified policy it newly cites took effect after
    the closure was decided and is not retroactive: when a change takes effect is the
    ratified policy's to say.

    [b]Examples[/b]

      gaf reopen policy rent-delinquency@1 --reviewer registry-clerk
    """
    import impact

    with open_store(store) as s, Ticker(f"reopen policy {old}", quiet=quiet) as tick:
        previous = policies.resolve(s, old, Projection, where="OLD")
        reviewer_id = s.resolve_id(reviewer, ("agent",))
        done = reopening.after_policy_change(s, previous, impact=impact, reviewer=reviewer_id, at=or_now(at),
                                             as_of=or_now(as_of), signing_key=signing_key(), progress=tick)  # fmt: skip
    emit(as_json, done.to_dict(), lambda: _print_reopened(done))


@command(reopen_app, "appeal")
def reopen_appeal(
    closure_id: Annotated[str, typer.Argument(help="The closure appealed.")],
    by: Annotated[str, typer.Option("--by", help="Key, id or id prefix of the appellant.")],
    grounds: Annotated[str, typer.Option(help="The grounds of the appeal.")],
    reviewer: ReviewerOpt, as_of: AsOfOpt = None, at: AtOpt = None, store: StoreOpt = None, quiet: QuietOpt = False,
    as_json: JsonOpt = False,
) -> None:  # fmt: skip
    """Record an appeal and re-decide the closure on what is known now.

    [b]Examples[/b]

      gaf reopen appeal closure:be9d… --by tenant-b \\
          --grounds "the receipt shows July" --reviewer registry-clerk
    """
    when = or_now(as_of)
    with open_store(store) as s, Ticker(f"reopen appeal {closure_id}", quiet=quiet) as tick:
        who = s.resolve_id(by, ("agent",))
        reviewer_id = s.resolve_id(reviewer, ("agent",))
        done = reopening.on_appeal(s, s.resolve_id(closure_id, ("closure",)), by=who, grounds=grounds, reviewer=reviewer_id,
                                   at=or_now(at), as_of=when, signing_key=signing_key(), progress=tick)  # fmt: skip
    emit(as_json, done.to_dict(), lambda: _print_reopened(done))
