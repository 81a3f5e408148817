"""The chain: project, close, verdict, replay, history, what-if."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Optional

import typer
from rich.table import Table

from gaf import closure, lifecycle, policies, projection, whatif

# boilerplate: the names this command group takes from gaf/cli/common.py and output.py, one per line
from gaf.canonical import short_ids
from gaf.cli.common import (
    FormatOpt,
    JsonOpt,
    StoreOpt,
    app,
    command,
    number_option,
    open_store,
    or_now,
    QuietOpt,
    signing_key,
    time_option,
)
from gaf.cli.output import (
    chosen_format,
    emit,
    emit_rows,
    out,
    print_rows,
    Ticker,
    warn_ignored,
    warn_limits,
)
from gaf.errors import ExitCode, GafError
from gaf.records import Closure, Projection, VerdictRules
from gaf.types import MAX_SECONDS, Span

# boilerplate: each command declares its own options in its signature (typer reads them from there), so the
# --store/--json/--by option lines and the open-call-emit shape of a body repeat from command to command.


@command(app)
def project(
    name: Annotated[str, typer.Argument(help="The policy: NAME or NAME@VERSION.")],
    reviewer: Annotated[str, typer.Option(help="Key, id or id prefix of the agent the acceptance is recorded under.")],
    as_of: Annotated[Optional[datetime], time_option("--as-of", help="Transaction time to project as of (ISO 8601); default now.")] = None,
    auto_accept_at: Annotated[float, number_option("--auto-accept-at", Span(0, 1, example="--auto-accept-at 0.9"),
                                                   help="Accept candidates at or above this confidence (0 to 1); route the rest.")] = 1.0,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Evaluate and show the candidates; open the store read-only and write nothing.")] = False,
    at: Annotated[Optional[datetime], time_option("--at", help="When the acceptance is decided (ISO 8601); default now.")] = None,
    store: StoreOpt = None,
    quiet: QuietOpt = False,
    as_json: JsonOpt = False,
) -> None:
    """Project a policy over the claims: evaluate, accept under the review policy, write the GAF.

    [b]Examples[/b]

      gaf project rent-delinquency --reviewer registry-clerk --as-of 2026-07-15
      gaf project rent-delinquency --reviewer registry-clerk --as-of 2026-07-15 \\
          --at 2026-07-15T11:00:00Z
      gaf project rent-delinquency --reviewer registry-clerk --dry-run --json
    """
    now = or_now(at)
    when = as_of or now
    # a dry run reads, so it runs beside another process's writes
    with open_store(store, read_only=dry_run) as s, Ticker(f"project {name}", quiet=quiet) as tick:
        policy = policies.resolve(s, name, Projection, where="NAME")
        who = s.resolve_id(reviewer, ("agent",))
        result = projection.project(s, policy, as_of=when, reviewer=who, at=now, dry_run=dry_run,
                                    review=projection.ReviewPolicy(auto_accept_at), progress=tick)  # fmt: skip
    data = result.to_dict(written=not dry_run)
    warn_ignored(result.evaluated.ignored_completeness)
    warn_limits(data["limits"])
    emit(as_json, data, lambda: _print_projection(data))


def _print_projection(data: dict[str, Any]) -> None:
    shown = short_ids([data["gaf"], *(row["claim"] for row in data["excluded"])])
    t = Table(title=f"{data['policy']} as of {data['as_of']} → {shown[data['gaf']]}" + ("" if data["written"] else " (dry run)"))
    t.add_column("status")
    t.add_column("proposition")
    t.add_column("confidence", justify="right")
    for row in data["accepted"]:
        t.add_row("[green]accepted[/]", row["proposition"], f"{row['confidence']:g}")
    for row in data["routed_to_review"]:
        t.add_row("[yellow]to review[/]", row["proposition"], f"{row['confidence']:g}")
    for p in data["unresolved"]:
        t.add_row("[blue]unknown[/]", p, "")
    for p in data["rejected"]:
        t.add_row("[red]rejected[/]", p, "")
    for row in data["excluded"]:
        t.add_row("[dim]excluded[/]", f"{row['proposition']}: {shown[row['claim']]} {row['reason']}", "")
    out.print(t)


@command(app, name="close")
def close_(
    gaf_id: Annotated[str, typer.Argument(help="The GAF to close (gaf project prints it); a unique prefix will do.")],
    rules: Annotated[str, typer.Option(help="Verdict rules: NAME or NAME@VERSION.")],
    subject: Annotated[str, typer.Option(help="What the verdict is about, e.g. rent:lease-17/2026-07.")],
    as_of: Annotated[datetime, time_option("--as-of", help="The transaction time the GAF was projected at (ISO 8601).")],
    supersedes: Annotated[Optional[list[str]], typer.Option(help="A closure this one supersedes (repeatable).")] = None,
    at: Annotated[Optional[datetime], time_option("--at", help="When the closure is made (ISO 8601); default now.")] = None,
    store: StoreOpt = None,
    quiet: QuietOpt = False,
    as_json: JsonOpt = False,
) -> None:
    """Freeze a GAF into a closure and compute its verdict (one transaction).

    An undetermined case outside a ratified policy the projection cites is queued as a policy exception.

    [b]Examples[/b]

      gaf close gaf:7cee… --rules rent-paid --subject rent:lease-17/2026-07 \\
          --as-of 2026-07-15
    """
    with open_store(store) as s, Ticker(f"close {subject}", quiet=quiet) as tick:
        rule_set = policies.resolve(s, rules, VerdictRules, where="--rules")
        when = or_now(at)
        closed = closure.close(s, s.resolve_id(gaf_id, ("gaf",)), rule_set, subject=subject, as_of=as_of,
                               closed_at=when, supersedes=[s.resolve_id(c, ("closure",)) for c in supersedes or []],
                               signing_key=signing_key(), progress=tick)  # fmt: skip
        settled = None if as_json else whatif.settling(s, closed.closure.id)  # the text shows it; an exception's reason quotes it
        exceptions = lifecycle.route_exceptions(s, closed, when, settled)
    limits = [hit.reason for hit in closed.closure.limits]
    data = {"closure": closed.closure.id, "verdict": closed.verdict.to_json(),
            "policy_exceptions": [e.to_json() for e in exceptions], "limits": limits}
    warn_limits(limits)

    def text() -> None:
        settle = settled.lines() if settled is not None else None
        out.print(f"closure {closed.closure.id}\n{closed.judgement.text(settle)}", highlight=False, markup=False)
        for e in exceptions:
            out.print(f"[yellow]policy exception, queued for review:[/] {e.reason}", highlight=False)

    emit(as_json, data, text)


@command(app)
def verdict(
    closure_id: Annotated[str, typer.Argument(help="A closure id, or a unique prefix of one.")],
    tries: Annotated[int, number_option("--tries", Span(0, whole=True, example="--tries 64"),
                                        help="Unknown premises tried for what would settle an undetermined verdict.")]
    = whatif.SETTLE_TRIES,
    store: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Show the verdict of a closure with its full trace.

    An undetermined verdict's text lists what would settle it: the unknown premises that a
    claim affirming or denying, alone, would move (found by what-if, at most --tries of
    them tried), grouped, and a count of the rest; --json shows the stored record.

    [b]Examples[/b]

      gaf verdict closure:be9d… --json
    """
    with open_store(store, read_only=True) as s:
        closure_id = s.resolve_id(closure_id, ("closure",))
        found = s.find("verdict", closure=closure_id)
        if not found:
            raise GafError(f"no verdict for {closure_id}", hint="gaf close makes one")
        v = found[0]
        settled = None if as_json else whatif.settling(s, closure_id, tries=tries)
        limits = [hit.reason for hit in s.get(closure_id, Closure).limits]
    emit(as_json, v.to_json(), lambda: out.print(_verdict_text(v, settled, limits), highlight=False, markup=False))


def _verdict_text(v: Any, settled: whatif.Settling | None, limits: list[str]) -> str:
    lines = [f"{v.label}: {v.strength:+.3f} (interval {v.low:+.3f} … {v.high:+.3f}) by {v.engine}"]
    for r in v.trace.get("rules", []):
        strength = r["strength"] if isinstance(r["strength"], str) else f"strength {r['strength']:.3f}"
        lines.append(f"  {r['role']:9} {r['name']} activation={r['activation']}: {strength}")
        lines += [f"            unknown: {u}" for u in r.get("unknown_premises", [])]
    if settled is not None:
        lines += settled.lines()
    lines += [f"  limit hit: {reason}" for reason in limits]  # what made the answer less precise than the data allows
    return "\n".join(lines)


@command(app, name="replay")
def replay_(
    closure_id: Annotated[str, typer.Argument(help="A closure id, or a unique prefix of one.")],
    store: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Recompute a closure's GAF and verdict from the stored inputs; name the layer that differs.

    Exit code 0 when identical, 4 when a layer differs.

    [b]Examples[/b]

      gaf replay closure:be9d…
    """
    with open_store(store, read_only=True) as s:
        report = closure.replay(s, s.resolve_id(closure_id, ("closure",)))

    def text() -> None:
        if report.identical and report.verdict is not None:
            out.print(f"[green]identical[/]: GAF {report.gaf}, verdict {report.verdict['label']} {report.verdict['strength']:+}")
        for layer in report.layers:
            out.print(f"[red]{layer['layer']}[/]: {layer['detail']}", highlight=False)

    emit(as_json, report.to_dict(), text)
    if not report.identical:
        raise typer.Exit(ExitCode.DIFFERS)


@command(app)
def history(
    subject: Annotated[str, typer.Argument(help="The subject, e.g. rent:lease-17/2026-07.")],
    store: StoreOpt = None,
    as_json: JsonOpt = False,
    fmt: FormatOpt = None,
) -> None:
    """Every closure about a subject, oldest first, with verdicts and the supersession chain.

    [b]Examples[/b]

      gaf history rent:lease-17/2026-07
      gaf history rent:lease-17/2026-07 --format csv
    """
    from gaf import reopen as reopening

    shape = chosen_format(as_json, fmt)
    with open_store(store, read_only=True) as s:
        rows = reopening.history(s, subject)

    def table(rows: list[dict[str, Any]]) -> None:
        print_rows([{"closed at": r["closed_at"], "closure": r["closure"], "verdict": f"{r['label']} {r['strength']:+}",
                     "policy": f"v{r['projection_version']}", "supersedes": r["supersedes"],
                     "superseded by": r["superseded_by"]} for r in rows],
                   ("closed at", "closure", "verdict", "policy", "supersedes", "superseded by"), title=f"history of {subject}")  # fmt: skip

    emit_rows(shape, rows, table)


@command(app, name="whatif")
def whatif_(
    closure_id: Annotated[str, typer.Argument(help="The closure whose verdict is questioned.")],
    max_size: Annotated[int, number_option("--max-size", Span(1, whole=True, example="--max-size 2"), help="Largest combination of changes tried.")] = 2,
    seconds: Annotated[float, number_option("--seconds", Span(0, MAX_SECONDS, above=True, unit="seconds", example="--seconds 60"),
                                            help="Stop after this long, and say how far the search got.")] = 60.0,
    store: StoreOpt = None,
    quiet: QuietOpt = False,
    as_json: JsonOpt = False,
) -> None:
    """What would change this verdict? An exhaustive, bounded search of its cone (nothing is written).

    [b]Examples[/b]

      gaf whatif closure:0609… --max-size 2 --seconds 60
    """
    from gaf.whatif import whatif as search

    with open_store(store, read_only=True) as s, Ticker("whatif", quiet=quiet) as tick:
        report = search(s, s.resolve_id(closure_id, ("closure",)), max_size=max_size, seconds=seconds, progress=tick)
    emit(as_json, report.to_dict(), lambda: out.print(report.text(), highlight=False, markup=False))
