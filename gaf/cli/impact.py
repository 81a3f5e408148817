"""Impact analysis: what must be reviewed after an invalidation, a new claim or a policy change."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from datetime import datetime, timezone
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

import impact
from gaf import policies
from gaf.canonical import short_ids
from gaf.cli.common import (
    AsOfOpt,
    JsonOpt,
    QuietOpt,
    StoreOpt,
    app,
    command,
    group,
    number_option,
    open_store,
    time_option,
    write_file,
)
from gaf.cli.output import Ticker, emit, out, print_rows
from gaf.errors import GafError
from gaf.records import Projection, VerdictRules
from gaf.store import GafStore
from gaf.types import MAX_SECONDS, Span
from impact import Limits
from impact.report import closure_rows, headline, run_paths, to_html, to_markdown

# boilerplate: each command declares its own options in its signature (typer reads them from there), so the
# --store/--json/--by option lines and the open-call-emit shape of a body repeat from command to command; here also
# the --as-of, --html, --markdown and three limit options every impact question takes, and the _impact call.

impact_app = group("Impact analysis: what must be reviewed after an invalidation, new claim or policy change.")
app.add_typer(impact_app, name="impact")
HtmlOpt = Annotated[Optional[Path], typer.Option("--html", help="Also write a self-contained HTML report with a picture.")]
MarkdownOpt = Annotated[Optional[Path], typer.Option("--markdown", help="Also write the report as Markdown.")]
DepthOpt = Annotated[int, number_option("--max-depth", Span(1, whole=True, example="--max-depth 64"),
                                         help="Stop after this many hops (the report then says it is incomplete).")]
CountOpt = Annotated[int, number_option("--max-count", Span(1, whole=True, example="--max-count 1000000"),
                                         help="Stop after this many records (the report then says so).")]
SecondsOpt = Annotated[Optional[float], number_option("--seconds", Span(0, MAX_SECONDS, above=True, unit="seconds", example="--seconds 30"),
                                                      help="Stop after this many seconds (the report then says so).")]


def _impact(
    as_json: bool, store: str | None, html_path: Path | None, md_path: Path | None, quiet: bool, what: str,
    question: Callable[..., Any], *args: Any, id_kind: str | None = None, **kwargs: Any,
) -> None:  # fmt: skip
    """Run one impact question with limits, its progress shown by a ``Ticker`` named ``what``, then
    render it (its first argument an id of ``id_kind`` as typed, a prefix allowed, when that is given)."""
    kwargs.setdefault("limits", Limits())
    with open_store(store, read_only=True) as s, Ticker(what, quiet=quiet) as tick:
        if id_kind is not None:
            args = (s.resolve_id(args[0], (id_kind,)), *args[1:])
        report = question(s, *args, progress=tick, **kwargs)
        # the HTML names records in words, read from the store while it is open
        for path, render in ((html_path, partial(to_html, report, s)), (md_path, partial(to_markdown, report))):
            if path is not None:
                write_file(path, render())

    def text() -> None:
        out.print(headline(report), highlight=False)
        paths = run_paths(report)
        shown = short_ids([*(a.id for a in report.affected), *(p for a in report.affected for p in a.path),
                           *(c.closure for c in report.closures), *(i for row in paths for i in row[:2]),
                           *report.trigger.get("evidence", [])])  # fmt: skip
        print_rows([{"kind": a.kind, "id": shown[a.id], "status": a.status, "reason": a.reason,
                     "path": " → ".join(shown[p] for p in a.path)} for a in report.affected],
                   ("kind", "id", "status", "reason", "path"))  # fmt: skip
        if report.closures:
            columns = ("closure", "subject", "outcome", "verdict", "facts -lost ~weakened +gained")
            print_rows([dict(zip(columns, [shown[row[0]], *row[1:]])) for row in closure_rows(report)], columns,
                       title="closures, recomputed")  # fmt: skip
        if rows := paths:
            t = report.trigger
            out.print(f"the run is wrong: {t['why']}" + (f" (shown by {', '.join(shown[e] for e in t['evidence'])})" if t["evidence"] else "")
                      + f"; it wrote {', '.join(t['wrote']) or 'nothing'}", highlight=False)  # fmt: skip
            print_rows([{"closure": shown[c], "claim": shown[k], "path": p} for c, k, p in rows], ("closure", "claim", "path"),
                       title="closures, by the dataset path from the run")  # fmt: skip
        for action in report.to_review:
            out.print(f"[yellow]executed action whose basis changed (its verdict holds): review[/] {action}", highlight=False)
        for action in report.to_compensate:
            out.print(f"[red]executed action needs cancellation or compensation:[/] {action}", highlight=False)
        for note in report.notes:
            out.print(f"[yellow]note:[/] {note}", highlight=False)

    emit(as_json, report.to_dict(), text)


def _limits(depth: int, count: int, seconds: float | None) -> Limits:
    return Limits(depth=depth, count=count, seconds=seconds)


@command(impact_app, "source")
def impact_source(
    source: Annotated[str, typer.Argument(help="The invalidated source: its key, id or id prefix.")],
    as_of: AsOfOpt = None, html_out: HtmlOpt = None, md_out: MarkdownOpt = None,
    max_depth: DepthOpt = 64, max_count: CountOpt = 1_000_000, seconds: SecondsOpt = None,
    store: StoreOpt = None, quiet: QuietOpt = False, as_json: JsonOpt = False,
) -> None:  # fmt: skip
    """Everything that rests on a source: claims, evaluations, facts, GAFs, closures, verdicts, actions.

    [b]Examples[/b]

      gaf impact source bank-ledger
      gaf impact source bank-ledger --html impact.html --json
    """
    def question(s: GafStore, **kw: Any) -> Any:
        source_id = s.resolve_id(source, ("source",))
        return impact.source_invalidated(s, source_id, **kw)

    _impact(as_json, store, html_out, md_out, quiet, f"impact source {source}", question,
            as_of=as_of, limits=_limits(max_depth, max_count, seconds))  # fmt: skip


@command(impact_app, "claim")
def impact_claim(
    claim_id: Annotated[str, typer.Argument(help="The retracted claim's id.")],
    as_of: AsOfOpt = None, html_out: HtmlOpt = None, md_out: MarkdownOpt = None,
    max_depth: DepthOpt = 64, max_count: CountOpt = 1_000_000, seconds: SecondsOpt = None,
    store: StoreOpt = None, quiet: QuietOpt = False, as_json: JsonOpt = False,
) -> None:  # fmt: skip
    """Everything that rests on one claim.

    [b]Examples[/b]

      gaf impact claim claim:8c48… --markdown impact.md
    """
    _impact(as_json, store, html_out, md_out, quiet, f"impact claim {claim_id}", impact.claim_retracted, claim_id,
            id_kind="claim", as_of=as_of, limits=_limits(max_depth, max_count, seconds))  # fmt: skip


@command(impact_app, "run")
def impact_run(
    run: Annotated[str, typer.Argument(help="The OpenLineage runId of the run found wrong (run:<runId> or the bare id).")],
    as_of: AsOfOpt = None, html_out: HtmlOpt = None, md_out: MarkdownOpt = None,
    max_depth: DepthOpt = 64, max_count: CountOpt = 1_000_000, seconds: SecondsOpt = None,
    store: StoreOpt = None, quiet: QuietOpt = False, as_json: JsonOpt = False,
) -> None:  # fmt: skip
    """Everything that rests on a pipeline run found wrong: its reports, those of the runs
    downstream of what it wrote, and the closures, verdicts and actions built on them, with
    the dataset path to each. Says why the store shows the run wrong (a FAIL after its
    COMPLETE, or a re-run of its job that rewrote its datasets), or that nothing does.

    [b]Examples[/b]

      gaf impact run 01941d6e-0000-7000-8000-000000000001
      gaf impact run run:01941d6e-0000-7000-8000-000000000001 --json
    """
    _impact(as_json, store, html_out, md_out, quiet, f"impact run {run}", impact.run_invalidated, run,
            as_of=as_of, limits=_limits(max_depth, max_count, seconds))  # fmt: skip


@command(impact_app, "new-claim")
def impact_new_claim(
    path: Annotated[Path, typer.Argument(help="A claims file; each claim in it is checked (nothing is written).")],
    as_of: AsOfOpt = None, html_out: HtmlOpt = None, md_out: MarkdownOpt = None,
    max_depth: DepthOpt = 64, max_count: CountOpt = 1_000_000, seconds: SecondsOpt = None,
    store: StoreOpt = None, quiet: QuietOpt = False, as_json: JsonOpt = False,
) -> None:  # fmt: skip
    """What a new claim would disturb: the closed scopes it falls into and all that relied on their absence.

    [b]Examples[/b]

      gaf impact new-claim late-ledger-entry.yaml
    """
    from gaf.ledger import read_items, resolve_items
    from gaf.records import Claim

    def question(s: GafStore, **kw: Any) -> Any:
        records = resolve_items(s, read_items(path), datetime.now(timezone.utc))
        claims = [r for r in records if isinstance(r, Claim)]
        if len(claims) != 1:
            raise GafError(f"{path} holds {len(claims)} claims; give exactly one", hint="split the file")
        return impact.new_claim(s, claims[0], **kw)

    _impact(as_json, store, html_out, md_out, quiet, f"impact new-claim {path}", question,
            as_of=as_of, limits=_limits(max_depth, max_count, seconds))  # fmt: skip


@command(impact_app, "policy")
def impact_policy(
    policy: Annotated[str, typer.Argument(help="NAME@VERSION of a projection policy, or rules:NAME@VERSION for verdict rules.")],
    effective: Annotated[Optional[datetime], time_option("--effective", help="When the change takes effect (ISO 8601); earlier closures are spared.")] = None,
    retroactive: Annotated[bool, typer.Option("--retroactive", help="The change reaches closures decided before it took effect.")] = False,
    as_of: AsOfOpt = None, html_out: HtmlOpt = None, md_out: MarkdownOpt = None,
    max_depth: DepthOpt = 64, max_count: CountOpt = 1_000_000, seconds: SecondsOpt = None,
    store: StoreOpt = None, quiet: QuietOpt = False, as_json: JsonOpt = False,
) -> None:  # fmt: skip
    """Every closure decided under a policy or rules version that a change would reach.

    [b]Examples[/b]

      gaf impact policy rent-delinquency@1 --effective 2026-07-20
      gaf impact policy rules:rent-paid@1 --retroactive --json
    """
    def question(s: GafStore, **kw: Any) -> Any:
        record: Projection | VerdictRules = (
            policies.resolve(s, policy.removeprefix("rules:"), VerdictRules, where="POLICY") if policy.startswith("rules:")
            else policies.resolve(s, policy, Projection, where="POLICY")
        )  # fmt: skip
        return impact.policy_changed(s, record.id, effective=effective, retroactive=retroactive, **kw)

    _impact(as_json, store, html_out, md_out, quiet, f"impact policy {policy}", question,
            as_of=as_of, limits=_limits(max_depth, max_count, seconds))  # fmt: skip
