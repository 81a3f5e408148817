"""The gaf command line: one command per library function, nothing more.

Each command opens the store named by ``--store`` (or $GAF_STORE, or the embedded
default), calls one library function with the same options, and prints a table
for people or, with ``--json``, JSON for machines. Errors are the library's typed
errors, printed as one line with their place and exit codes by family:
2 bad input, 3 store unreachable or locked, 1 anything else refused.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Annotated, Any, Optional

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from gaf import __version__
from gaf.errors import GafError, InvalidRecord
from gaf import closure, lifecycle, policies, projection
from gaf import reopen as reopening
from gaf.ledger import ingest as ingest_records
from gaf.ledger import resolve_key
from gaf.records import Claim, Record, json_schema, record_type
from gaf.store import GafStore, store_target
from gaf.types import to_instant

app = typer.Typer(
    name="gaf",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode="rich",
)
out = Console()
err = Console(stderr=True)

StoreOpt = Annotated[
    Optional[str],
    typer.Option("--store", "-s", help="Bolt URI (neo4j://, bolt://) or embedded store path; default $GAF_STORE (never $NEO4J_URI), else .gaf/store.lbug"),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON for machines instead of tables.")]


def main() -> None:
    """Entry point of the ``gaf`` console script."""
    app()


def _run(as_json: bool, work: Callable[[], Any]) -> Any:
    """Run a command body, turning gaf's typed errors into one line and an exit code."""
    try:
        return work()
    except ValueError as exc:  # a value the user typed (a time, a version) that does not parse
        exc = InvalidRecord(str(exc))
        if as_json:
            print(json.dumps(exc.to_dict(), indent=2))
        else:
            err.print(f"[bold red]error:[/] {exc.message}", highlight=False, markup=True)
        raise typer.Exit(exc.exit_code) from None
    except GafError as exc:
        if as_json:
            print(json.dumps(exc.to_dict(), indent=2))
        else:
            err.print(f"[bold red]error:[/] {exc.message}", highlight=False)
            for sub in getattr(exc, "errors", [])[:20]:
                err.print(f"  - {sub.message}", highlight=False)
            extra = len(getattr(exc, "errors", [])) - 20
            if extra > 0:
                err.print(f"  … and {extra} more")
        raise typer.Exit(exc.exit_code) from None


def _emit(as_json: bool, data: Any, table: Callable[[], None]) -> None:
    if as_json:
        print(json.dumps(data, indent=2, ensure_ascii=False))
    else:
        table()


def _version(value: bool) -> None:
    if value:
        out.print(f"gaf {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")] = False,
) -> None:
    """Claims → Projection → Graph of Accepted Facts → Closure → Verdict → Action → Reopen.

    The store is --store, else $GAF_STORE, else the embedded file .gaf/store.lbug. gaf does
    not read $NEO4J_URI: to use that Neo4j, set GAF_STORE=$NEO4J_URI (the credentials come
    from $NEO4J_USER and $NEO4J_PASSWORD).
    """


@app.command()
def init(store: StoreOpt = None, as_json: JsonOpt = False) -> None:
    """Create the store's schema, constraints and indexes (safe to run again).

    [b]Examples[/b]

      gaf init
      GAF_STORE=neo4j://localhost:7687 gaf init
    """

    def work() -> None:
        with GafStore.open(store) as s:
            s.init()
            _emit(as_json, {"store": s.location, "dialect": s.dialect, "initialised": True},
                  lambda: out.print(f"initialised {s.dialect} store at {s.location}"))

    _run(as_json, work)


@app.command()
def schema(
    kind: Annotated[Optional[str], typer.Argument(help="One record kind (claim, source, …); all when omitted.")] = None,
) -> None:
    """Print the JSON Schema of the records, for integrators.

    [b]Examples[/b]

      gaf schema            # every record kind
      gaf schema claim      # just claims
    """

    def work() -> None:
        data = record_type(kind).model_json_schema() if kind else json_schema()
        print(json.dumps(data, indent=2))

    _run(False, work)


@app.command()
def ingest(
    path: Annotated[Path, typer.Argument(help="A .jsonl, .csv or .yaml file of claims, sources and agents.")],
    store: StoreOpt = None,
    best_effort: Annotated[bool, typer.Option("--best-effort", help="Write the good items and report the bad ones.")] = False,
    batch_size: Annotated[int, typer.Option(help="Records per write transaction.", min=1)] = 2000,
    as_json: JsonOpt = False,
) -> None:
    """Validate a claims file, then append its records to the store.

    Nothing is written if any line is bad (unless --best-effort); every bad line is
    reported with its number. Ingesting the same file again is a no-op.

    [b]Examples[/b]

      gaf ingest examples/rent/claims.yaml
      gaf ingest claims.jsonl --best-effort --json
      gaf ingest export.csv --store neo4j://localhost:7687
    """

    def work() -> None:
        now = datetime.now(timezone.utc)
        with GafStore.open(store) as s, _progress(as_json) as bar:
            task = bar.add_task(f"ingesting {path.name}", total=None)
            report = ingest_records(
                s,
                path,
                recorded_at=now,
                mode="best_effort" if best_effort else "atomic",
                batch_size=batch_size,
                progress=lambda done, total: bar.update(task, completed=done, total=total),
            )
            written = s.get_many(report.write.written)
        data = {"file": str(path), "store": store_target(store), **report.to_dict()}
        _emit(as_json, data, lambda: _print_ingest(data, [written[i] for i in report.write.written]))
        if report.write.failed:
            raise typer.Exit(2)

    _run(as_json, work)


def _progress(quiet: bool) -> Progress:
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        console=err,
        disable=quiet or not err.is_terminal,
        transient=True,
    )


def _print_ingest(data: dict[str, Any], written: list[Record]) -> None:
    out.print(
        f"read {data['read']} items from {data['file']}: "
        f"[green]{data['written']} written[/], {data['existing']} already stored, "
        f"[red]{len(data['failed'])} refused[/] → {data['store']}",
        highlight=False,
    )
    for failure in data["failed"]:
        err.print(f"  - {failure['where'] or failure['index']}: {failure['what']}", highlight=False)
    if written:
        out.print(records_table(written))


def records_table(records: list[Record], limit: int = 50) -> Table:
    """A readable table of records: kind, a short id and what each says."""
    table = Table(show_lines=False)
    table.add_column("kind")
    table.add_column("id")
    table.add_column("what")
    for record in records[:limit]:
        table.add_row(record.KIND, _short(record.id), summary(record))
    if len(records) > limit:
        table.caption = f"… and {len(records) - limit} more (use --json for all)"
    return table


def summary(record: Record) -> str:
    """One line that says what a record is about."""
    if record.KIND in ("agent", "source"):
        return f"{record.key}: {record.name}"  # type: ignore[attr-defined]
    if record.KIND == "claim":
        parts = [_statement(s) for s in record.statements]  # type: ignore[attr-defined]
        return f"{record.transformation} at {record.observed_at:%Y-%m-%d}: " + "; ".join(parts)  # type: ignore[attr-defined]
    if record.KIND == "proposition":
        return _statement(record)
    return ", ".join(f"{k}={v}" for k, v in list(record.props().items())[:3])


def _statement(s: Any) -> str:
    """predicate(subject, object-or-value), as people write it; NOT for a denial."""
    target = s.object if s.object is not None else json.dumps(s.value, ensure_ascii=False) if s.value is not None else None
    neg = "NOT " if getattr(s, "polarity", "affirmed") == "denied" else ""
    return f"{neg}{s.predicate}({s.subject}{'' if target is None else ', ' + target})"


def _short(record_id: str) -> str:
    kind, _, digest = record_id.partition(":")
    return f"{kind}:{digest[:12]}…"


@app.command()
def show(
    record_id: Annotated[str, typer.Argument(help="The id of a record (kind:sha256).")],
    store: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Print one record and the relationships leaving it.

    [b]Examples[/b]

      gaf show claim:3f2a…   (the full id)
    """

    def work() -> None:
        with GafStore.open(store, read_only=True) as s:
            record = s.get(record_id)
            if record is None:
                raise GafError(f"no record {record_id} in {s.location}", hint="gaf list KIND shows the ids stored")
            edges = s.edges_from(record_id)
        data = {**record.to_json(), "edges": [{"rel": r, "target": t} for r, t in edges]}
        _emit(as_json, data, lambda: out.print_json(json.dumps(data, ensure_ascii=False)))

    _run(as_json, work)


@app.command(name="list")
def list_(
    kind: Annotated[str, typer.Argument(help="A record kind: claim, source, agent, proposition, …")],
    store: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """List the stored records of one kind, in id order.

    [b]Examples[/b]

      gaf list claim
      gaf list source --json
    """

    def work() -> None:
        record_type(kind)
        with GafStore.open(store, read_only=True) as s:
            records = s.find(kind)
        _emit(as_json, [r.to_json() for r in records], lambda: out.print(records_table(records, limit=1000)))

    _run(as_json, work)


@app.command()
def stats(store: StoreOpt = None, as_json: JsonOpt = False) -> None:
    """Count the stored records of each kind.

    [b]Examples[/b]

      gaf stats --json
    """

    def work() -> None:
        with GafStore.open(store, read_only=True) as s:
            counts = s.counts()
            location = s.location

        def table() -> None:
            t = Table(title=f"records in {location}")
            t.add_column("kind")
            t.add_column("count", justify="right")
            for kind, n in counts.items():
                t.add_row(kind, str(n))
            out.print(t)

        _emit(as_json, {"store": location, "counts": counts}, table)

    _run(as_json, work)


policy_app = typer.Typer(help="Projection policies and their lifecycle: add, revise, show, list, decide, propose, ratify, waive, sway, queue.", no_args_is_help=True)
app.add_typer(policy_app, name="policy")


@policy_app.command("add")
def policy_add(
    path: Annotated[Path, typer.Argument(help="A policy YAML file (sources and agents by key).")],
    store: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Publish a policy version; the same content again is a no-op, other content is refused.

    [b]Examples[/b]

      gaf policy add examples/rent/policy.yaml
    """

    def work() -> None:
        with GafStore.open(store) as s:
            policy = policies.publish(s, policies.read_policy(s, path))
        _warn_ignored(projection.declaration_problems(policy))
        _emit(as_json, policy.to_json(), lambda: out.print(f"published {policy.ref} as {policy.id}", highlight=False))

    _run(as_json, work)


@policy_app.command("revise")
def policy_revise(
    path: Annotated[Path, typer.Argument(help="The new content of an existing policy (its version is assigned).")],
    store: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Publish a file as the next version of its policy; the old version stays readable.

    [b]Examples[/b]

      gaf policy revise examples/rent/policy.yaml
    """

    def work() -> None:
        with GafStore.open(store) as s:
            policy = policies.revise(s, policies.read_policy(s, path))
        _emit(as_json, policy.to_json(), lambda: out.print(f"published {policy.ref} (revises {policy.revises})", highlight=False))

    _run(as_json, work)


@policy_app.command("show")
def policy_show(
    name: Annotated[str, typer.Argument(help="NAME or NAME@VERSION; the latest version when none is given.")],
    store: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Print a published policy and its derivation rules.

    [b]Examples[/b]

      gaf policy show rent-delinquency
      gaf policy show rent-delinquency@1 --json
    """

    def work() -> None:
        policy_name, _, version = name.partition("@")
        with GafStore.open(store, read_only=True) as s:
            policy = policies.get(s, policy_name, int(version) if version else None)

        def text() -> None:
            out.print(f"[b]{policy.ref}[/b]  {policy.id}\n{policy.question}", highlight=False)
            for r in policy.derivation_rules:
                out.print(f"  {r}", highlight=False)

        _emit(as_json, policy.to_json(), text)

    _run(as_json, work)


@policy_app.command("list")
def policy_list(store: StoreOpt = None, as_json: JsonOpt = False) -> None:
    """List published policies and their versions.

    [b]Examples[/b]

      gaf policy list
    """

    def work() -> None:
        with GafStore.open(store, read_only=True) as s:
            rows = [{"name": p.name, "version": p.version, "id": p.id, "question": p.question}
                    for n in policies.names(s) for p in policies.history(s, n)]  # fmt: skip

        def table() -> None:
            t = Table()
            for col in ("name", "version", "id", "question"):
                t.add_column(col)
            for r in rows:
                t.add_row(r["name"], str(r["version"]), _short(r["id"]), r["question"])
            out.print(t)

        _emit(as_json, rows, table)

    _run(as_json, work)


@app.command()
def project(
    name: Annotated[str, typer.Argument(help="The policy: NAME or NAME@VERSION.")],
    reviewer: Annotated[str, typer.Option(help="Key or id of the agent the acceptance is recorded under.")],
    as_of: Annotated[Optional[str], typer.Option(help="Transaction time to project as of (ISO 8601); default now.")] = None,
    auto_accept_at: Annotated[float, typer.Option(help="Accept candidates at or above this confidence; route the rest.")] = 1.0,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Evaluate and show the candidates; open the store read-only and write nothing.")] = False,
    store: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Project a policy over the claims: evaluate, accept under the review policy, write the GAF.

    [b]Examples[/b]

      gaf project rent-delinquency --reviewer registry-clerk --as-of 2026-07-15
      gaf project rent-delinquency --reviewer registry-clerk --dry-run --json
    """

    def work() -> None:
        now = datetime.now(timezone.utc)
        when = to_instant(as_of) if as_of else now
        policy_name, _, version = name.partition("@")
        with GafStore.open(store, read_only=dry_run) as s:  # a dry run reads, so it runs beside another process's writes
            policy = policies.get(s, policy_name, int(version) if version else None)
            who = resolve_key(s, reviewer, ("agent",), {}, "--reviewer")
            if dry_run:
                evaluated = projection.evaluate(s, policy, as_of=when)
                auto, routed = projection.ReviewPolicy(auto_accept_at).split(evaluated)
                gaf = evaluated.gaf([c.id for c in auto])
            else:
                result = projection.project(s, policy, as_of=when, reviewer=who, at=now,
                                            review=projection.ReviewPolicy(auto_accept_at))  # fmt: skip
                evaluated, auto, routed, gaf = result.evaluated, result.accepted, result.routed, result.gaf
        data = _projection_json(evaluated, auto, routed, gaf, dry_run)
        _warn_ignored(evaluated.ignored_completeness)
        _emit(as_json, data, lambda: _print_projection(data))

    _run(as_json, work)


def _warn_ignored(ignored: list) -> None:
    """Say on stderr which completeness declarations close no scope, and why (JSON on stdout stays clean)."""
    for d in ignored:  # one line each, never wrapped at the terminal's width: grep finds it
        sys.stderr.write(f"warning: completeness declaration {d.declaration} closes no scope: {d.reason}\n")


def _projection_json(evaluated, auto, routed, gaf, dry_run: bool) -> dict[str, Any]:
    def prop(p) -> str:
        return _statement(p)

    return {
        "policy": evaluated.policy.ref,
        "as_of": evaluated.as_of.isoformat(),
        "gaf": gaf.id,
        "written": not dry_run,
        "accepted": [{"fact": c.id, "proposition": prop(c.proposition), "confidence": c.confidence,
                      "by": c.justification.id} for c in auto],  # fmt: skip
        "routed_to_review": [{"fact": c.id, "proposition": prop(c.proposition), "confidence": c.confidence} for c in routed],
        "unresolved": [prop(p) for p in evaluated.unresolved],
        "rejected": [prop(p) for p in evaluated.rejected],
        "excluded": [{"claim": ex.claim, "proposition": prop(evaluated.propositions[ex.proposition]), "reason": ex.reason}
                     for ex in evaluated.exclusions],  # fmt: skip
        "ignored_completeness": [d.model_dump(mode="json") for d in evaluated.ignored_completeness],
    }


def _print_projection(data: dict[str, Any]) -> None:
    t = Table(title=f"{data['policy']} as of {data['as_of']} → {_short(data['gaf'])}" + ("" if data["written"] else " (dry run)"))
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
        t.add_row("[dim]excluded[/]", f"{row['proposition']}: {_short(row['claim'])} {row['reason']}", "")
    out.print(t)


rules_app = typer.Typer(help="Verdict rule sets: add, revise, list.", no_args_is_help=True)
app.add_typer(rules_app, name="rules")


@rules_app.command("add")
def rules_add(
    path: Annotated[Path, typer.Argument(help="A verdict rules YAML file.")],
    store: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Publish a verdict rule set version; other content under the same version is refused.

    [b]Examples[/b]

      gaf rules add examples/rent/verdict-rules.yaml
    """

    def work() -> None:
        with GafStore.open(store) as s:
            rules = policies.publish(s, policies.read_rules(path))
            _warn_unestablished(s, rules)
        _emit(as_json, rules.to_json(), lambda: out.print(f"published {rules.ref} as {rules.id}", highlight=False))

    _run(as_json, work)


def _warn_unestablished(s: GafStore, rules: policies.VerdictRules) -> None:
    """Warn on stderr of condition predicates no published policy establishes or derives.

    A rule set is published before any closure picks its policy, so it cannot be
    refused here; the closure refuses it. The warning says so now, while the typo is
    one revision away, and the command still succeeds.
    """
    published = sorted(s.find("projection"), key=lambda p: p.ref)  # type: ignore[attr-defined]
    found = policies.unestablished_predicates(rules, *published)
    if not published or not found:
        return
    refs = [p.ref for p in published]  # type: ignore[attr-defined]
    under = f"any published policy ({', '.join(refs[:3])}{', …' if len(refs) > 3 else ''})"
    for f in found:  # one line each, never wrapped at the terminal's width: grep finds it
        sys.stderr.write(f"warning: {f.describe(under)} (a closure under a policy that does not establish it is refused)\n")


@rules_app.command("revise")
def rules_revise(
    path: Annotated[Path, typer.Argument(help="The new content of an existing rule set (its version is assigned).")],
    store: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Publish a file as the next version of its rule set; the old version stays readable.

    Closures keep the version they were decided under; the same content again is a no-op.

    [b]Examples[/b]

      gaf rules revise examples/rent/verdict-rules.yaml
    """

    def work() -> None:
        with GafStore.open(store) as s:
            rules = policies.revise(s, policies.read_rules(path))
            _warn_unestablished(s, rules)
        _emit(as_json, rules.to_json(), lambda: out.print(f"published {rules.ref} as {rules.id}", highlight=False))

    _run(as_json, work)


@rules_app.command("list")
def rules_list(store: StoreOpt = None, as_json: JsonOpt = False) -> None:
    """List published verdict rule sets and their versions.

    [b]Examples[/b]

      gaf rules list --json
    """

    def work() -> None:
        with GafStore.open(store, read_only=True) as s:
            rows = [{"name": r.name, "version": r.version, "id": r.id, "conclusion": r.conclusion}
                    for n in policies.names(s, "rules") for r in policies.history(s, n, "rules")]  # fmt: skip
        _emit(as_json, rows, lambda: out.print(_rows_table(rows, ("name", "version", "id", "conclusion"))))

    _run(as_json, work)


def _rows_table(rows: list[dict[str, Any]], columns: tuple[str, ...]) -> Table:
    t = Table()
    for col in columns:
        t.add_column(col)
    for r in rows:
        t.add_row(*(_short(str(r[c])) if c == "id" else str(r.get(c, "")) for c in columns))
    return t


@app.command(name="close")
def close_(
    gaf_id: Annotated[str, typer.Argument(help="The GAF to close (gaf project prints it).")],
    rules: Annotated[str, typer.Option(help="Verdict rules: NAME or NAME@VERSION.")],
    subject: Annotated[str, typer.Option(help="What the verdict is about, e.g. rent:lease-17/2026-07.")],
    as_of: Annotated[str, typer.Option(help="The transaction time the GAF was projected at (ISO 8601).")],
    supersedes: Annotated[Optional[list[str]], typer.Option(help="A closure this one supersedes (repeatable).")] = None,
    at: Annotated[Optional[str], typer.Option("--at", help="When the closure is made (ISO 8601); default now.")] = None,
    store: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Freeze a GAF into a closure and compute its verdict (one transaction).

    An undetermined case outside a ratified policy the projection cites is queued as a policy exception.

    [b]Examples[/b]

      gaf close gaf:7cee… --rules rent-paid --subject rent:lease-17/2026-07 --as-of 2026-07-15
    """

    def work() -> None:
        rules_name, _, version = rules.partition("@")
        with GafStore.open(store) as s:
            rule_set = policies.get(s, rules_name, int(version) if version else None, kind="rules")
            when = _when(at)
            closed = closure.close(s, gaf_id, rule_set, subject=subject, as_of=to_instant(as_of),
                                   closed_at=when, supersedes=supersedes or [])  # fmt: skip
            exceptions = lifecycle.route_exceptions(s, closed, when)
        data = {"closure": closed.closure.id, "verdict": closed.verdict.to_json(), "policy_exceptions": [e.to_json() for e in exceptions]}

        def text() -> None:
            out.print(f"closure {closed.closure.id}\n{closed.judgement.text()}", highlight=False, markup=False)
            for e in exceptions:
                out.print(f"[yellow]policy exception, queued for review:[/] {e.reason}", highlight=False)

        _emit(as_json, data, text)

    _run(as_json, work)


@app.command()
def verdict(
    closure_id: Annotated[str, typer.Argument(help="A closure id.")],
    store: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Show the verdict of a closure with its full trace.

    [b]Examples[/b]

      gaf verdict closure:be9d… --json
    """

    def work() -> None:
        with GafStore.open(store, read_only=True) as s:
            found = s.find("verdict", closure=closure_id)
        if not found:
            raise GafError(f"no verdict for {closure_id}", hint="gaf close makes one")
        v = found[0]
        _emit(as_json, v.to_json(), lambda: out.print(_verdict_text(v), highlight=False, markup=False))

    _run(as_json, work)


def _verdict_text(v: Any) -> str:
    lines = [f"{v.label}: {v.strength:+.3f} (interval {v.low:+.3f} … {v.high:+.3f}) by {v.engine}"]
    for r in v.trace.get("rules", []):
        strength = r["strength"] if isinstance(r["strength"], str) else f"strength {r['strength']:.3f}"
        lines.append(f"  {r['role']:9} {r['name']} activation={r['activation']}: {strength}")
        lines += [f"            unknown: {u}" for u in r.get("unknown_premises", [])]
    if v.trace.get("would_settle"):
        lines.append("  would settle it: " + "; ".join(v.trace["would_settle"]))
    return "\n".join(lines)


@app.command(name="replay")
def replay_(
    closure_id: Annotated[str, typer.Argument(help="A closure id.")],
    store: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Recompute a closure's GAF and verdict from the stored inputs; name the layer that differs.

    Exit code 0 when identical, 4 when a layer differs.

    [b]Examples[/b]

      gaf replay closure:be9d…
    """

    def work() -> None:
        with GafStore.open(store, read_only=True) as s:
            report = closure.replay(s, closure_id)

        def text() -> None:
            if report.identical:
                out.print(f"[green]identical[/]: GAF {report.gaf}, verdict {report.verdict['label']} {report.verdict['strength']:+}")
            for layer in report.layers:
                out.print(f"[red]{layer['layer']}[/]: {layer['detail']}", highlight=False)

        _emit(as_json, report.to_dict(), text)
        if not report.identical:
            raise typer.Exit(4)

    _run(as_json, work)


impact_app = typer.Typer(help="Impact analysis: what must be reviewed after an invalidation, new claim or policy change.", no_args_is_help=True)
app.add_typer(impact_app, name="impact")

AsOfOpt = Annotated[Optional[str], typer.Option("--as-of", help="Answer for the graph as it stood at this time (ISO 8601).")]
HtmlOpt = Annotated[Optional[Path], typer.Option("--html", help="Also write a self-contained HTML report with a picture.")]
MarkdownOpt = Annotated[Optional[Path], typer.Option("--markdown", help="Also write the report as Markdown.")]
DepthOpt = Annotated[int, typer.Option("--max-depth", help="Stop after this many hops (the report then says it is incomplete).")]
CountOpt = Annotated[int, typer.Option("--max-count", help="Stop after this many records (the report then says so).")]
SecondsOpt = Annotated[Optional[float], typer.Option("--seconds", help="Stop after this many seconds (the report then says so).")]


def _impact(
    as_json: bool, store: str | None, html_path: Path | None, md_path: Path | None,
    question: Callable[..., Any], *args: Any, **kwargs: Any,
) -> None:  # fmt: skip
    """Run one impact question with limits and a progress bar, then render it."""
    from impact import Limits
    from impact.report import headline, to_html, to_markdown

    def work() -> None:
        with GafStore.open(store, read_only=True) as s, _progress(as_json) as bar:
            task = bar.add_task("walking dependencies", total=None)
            report = question(s, *args, progress=lambda n, depth: bar.update(task, completed=n, description=f"depth {depth}"), **kwargs)
        for path, render in ((html_path, to_html), (md_path, to_markdown)):
            if path is not None:
                try:
                    path.write_text(render(report), encoding="utf-8")
                except OSError as exc:
                    raise GafError(f"cannot write {path}: {exc.strerror}", hint="check that the directory exists") from None

        def text() -> None:
            out.print(headline(report), highlight=False)
            t = Table()
            for col in ("kind", "id", "status", "reason", "path"):
                t.add_column(col)
            for a in report.affected:
                t.add_row(a.kind, _short(a.id), a.status, a.reason, " → ".join(_short(p) for p in a.path))
            out.print(t)
            for action in report.to_compensate:
                out.print(f"[red]executed action needs cancellation or compensation:[/] {action}", highlight=False)

        _emit(as_json, report.to_dict(), text)

    kwargs.setdefault("limits", Limits())
    _run(as_json, work)


def _limits(depth: int, count: int, seconds: float | None):
    from impact import Limits

    return Limits(depth=depth, count=count, seconds=seconds)


@impact_app.command("source")
def impact_source(
    source: Annotated[str, typer.Argument(help="The invalidated source: its id or key.")],
    as_of: AsOfOpt = None, html_out: HtmlOpt = None, md_out: MarkdownOpt = None,
    max_depth: DepthOpt = 64, max_count: CountOpt = 1_000_000, seconds: SecondsOpt = None,
    store: StoreOpt = None, as_json: JsonOpt = False,
) -> None:  # fmt: skip
    """Everything that rests on a source: claims, evaluations, facts, GAFs, closures, verdicts, actions.

    [b]Examples[/b]

      gaf impact source bank-ledger
      gaf impact source bank-ledger --html impact.html --json
    """
    import impact

    def question(s: GafStore, **kw: Any) -> Any:
        source_id = resolve_key(s, source, ("source",), {}, "SOURCE")
        return impact.source_invalidated(s, source_id, **kw)

    _impact(as_json, store, html_out, md_out, question, as_of=to_instant(as_of) if as_of else None, limits=_limits(max_depth, max_count, seconds))


@impact_app.command("claim")
def impact_claim(
    claim_id: Annotated[str, typer.Argument(help="The retracted claim's id.")],
    as_of: AsOfOpt = None, html_out: HtmlOpt = None, md_out: MarkdownOpt = None,
    max_depth: DepthOpt = 64, max_count: CountOpt = 1_000_000, seconds: SecondsOpt = None,
    store: StoreOpt = None, as_json: JsonOpt = False,
) -> None:  # fmt: skip
    """Everything that rests on one claim.

    [b]Examples[/b]

      gaf impact claim claim:8c48… --markdown impact.md
    """
    import impact

    _impact(as_json, store, html_out, md_out, impact.claim_retracted, claim_id,
            as_of=to_instant(as_of) if as_of else None, limits=_limits(max_depth, max_count, seconds))  # fmt: skip


@impact_app.command("new-claim")
def impact_new_claim(
    path: Annotated[Path, typer.Argument(help="A claims file; each claim in it is checked (nothing is written).")],
    as_of: AsOfOpt = None, html_out: HtmlOpt = None, md_out: MarkdownOpt = None,
    max_depth: DepthOpt = 64, max_count: CountOpt = 1_000_000, seconds: SecondsOpt = None,
    store: StoreOpt = None, as_json: JsonOpt = False,
) -> None:  # fmt: skip
    """What a new claim would disturb: the closed scopes it falls into and all that relied on their absence.

    [b]Examples[/b]

      gaf impact new-claim late-ledger-entry.yaml
    """
    import impact
    from gaf.ledger import read_items, resolve_items
    from gaf.records import Claim

    def question(s: GafStore, **kw: Any) -> Any:
        records = resolve_items(s, read_items(path), datetime.now(timezone.utc))
        claims = [r for r in records if isinstance(r, Claim)]
        if len(claims) != 1:
            raise GafError(f"{path} holds {len(claims)} claims; give exactly one", hint="split the file")
        return impact.new_claim(s, claims[0], **kw)

    _impact(as_json, store, html_out, md_out, question, as_of=to_instant(as_of) if as_of else None,
            limits=_limits(max_depth, max_count, seconds))  # fmt: skip


@impact_app.command("policy")
def impact_policy(
    policy: Annotated[str, typer.Argument(help="NAME@VERSION of a projection policy, or rules:NAME@VERSION for verdict rules.")],
    effective: Annotated[Optional[str], typer.Option(help="When the change takes effect (ISO 8601); earlier closures are spared.")] = None,
    retroactive: Annotated[bool, typer.Option("--retroactive", help="The change reaches closures decided before it took effect.")] = False,
    as_of: AsOfOpt = None, html_out: HtmlOpt = None, md_out: MarkdownOpt = None,
    max_depth: DepthOpt = 64, max_count: CountOpt = 1_000_000, seconds: SecondsOpt = None,
    store: StoreOpt = None, as_json: JsonOpt = False,
) -> None:  # fmt: skip
    """Every closure decided under a policy or rules version that a change would reach.

    [b]Examples[/b]

      gaf impact policy rent-delinquency@1 --effective 2026-07-20
      gaf impact policy rules:rent-paid@1 --retroactive --json
    """
    import impact

    def question(s: GafStore, **kw: Any) -> Any:
        kind, name = ("rules", policy[6:]) if policy.startswith("rules:") else ("projection", policy)
        base, _, version = name.partition("@")
        record = policies.get(s, base, int(version) if version else None, kind=kind)
        return impact.policy_changed(s, record.id, effective=to_instant(effective) if effective else None, retroactive=retroactive, **kw)

    _impact(as_json, store, html_out, md_out, question, as_of=to_instant(as_of) if as_of else None,
            limits=_limits(max_depth, max_count, seconds))  # fmt: skip


def _now() -> datetime:
    return datetime.now(timezone.utc)


def _when(text: str | None) -> datetime:
    return to_instant(text) if text else _now()


def _versioned(s: GafStore, ref: str, kind: str):
    name, _, version = ref.partition("@")
    return policies.get(s, name, int(version) if version else None, kind=kind)


@app.command(name="act")
def act_(
    verdict_id: Annotated[str, typer.Argument(help="The verdict the action executes.")],
    kind: Annotated[str, typer.Option("--kind", help="The kind of action, e.g. request-allocation.")],
    subject: Annotated[str, typer.Option(help="What the action targets.")],
    by: Annotated[str, typer.Option("--by", help="Key or id of the agent who authorises it.")],
    grant: Annotated[str, typer.Option(help="The grant id it acts under.")],
    policy: Annotated[str, typer.Option(help="The action policy: NAME or NAME@VERSION.")],
    key: Annotated[str, typer.Option("--key", help="Idempotency key: the same key never causes a second effect.")],
    amount: Annotated[Optional[float], typer.Option(help="Amount, checked against the grant's limit.")] = None,
    waiver: Annotated[Optional[str], typer.Option(help="A waiver letting this decision past the action policy.")] = None,
    webhook: Annotated[Optional[str], typer.Option(help="Execute by POSTing to this URL (default: record only).")] = None,
    at: Annotated[Optional[str], typer.Option(help="When the action is requested (ISO 8601); default now.")] = None,
    store: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Check and execute one action on a verdict: authority, limits, idempotency, receipt.

    Exit code 5 when a check refuses it (nothing is executed or written).

    [b]Examples[/b]

      gaf act verdict:6d04… --kind request-allocation --subject rent:lease-17/2026-07 \\
          --by letting-agent --grant grant:… --policy rent-actions --key july-allocation-1
    """
    from gaf import actions

    def work() -> None:
        with GafStore.open(store) as s:
            who = resolve_key(s, by, ("agent",), {}, "--by")
            done = actions.act(
                s, verdict=verdict_id, action_kind=kind, subject=subject, authorised_by=who, grant=grant,
                policy=_versioned(s, policy, "action_policy").id, idempotency_key=key, at=_when(at), amount=amount,
                waiver=waiver, executor=actions.WebhookExecutor(webhook) if webhook else None,
            )  # fmt: skip
        _emit(as_json, done.to_dict(), lambda: _print_acted(done))

    _run(as_json, work)


def _print_acted(done: Any, what: str = "") -> None:
    out.print(f"{done.status.status.value}: {done.action.id}{what}" + ("" if done.effect else " (no new effect: this key was used before)"),
              highlight=False)  # fmt: skip


@app.command()
def compensate(
    action_id: Annotated[str, typer.Argument(help="The executed action whose effect was a mistake.")],
    by: Annotated[str, typer.Option("--by", help="Key or id of the agent who authorises the compensation.")],
    grant: Annotated[str, typer.Option(help="The grant id it acts under (for the original kind or compensate:KIND).")],
    policy: Annotated[str, typer.Option(help="The action policy: NAME or NAME@VERSION.")],
    key: Annotated[str, typer.Option("--key", help="Idempotency key: the same key never causes a second effect.")],
    reason: Annotated[str, typer.Option(help="What was wrong with the effect it undoes.")],
    webhook: Annotated[Optional[str], typer.Option(help="Execute by POSTing to this URL (default: record only).")] = None,
    at: Annotated[Optional[str], typer.Option(help="When the compensation is requested (ISO 8601); default now.")] = None,
    store: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Undo an executed action's effect with a new action that points at it; the original is never edited.

    The original's status becomes compensated. Exit code 5 when a check refuses it (an
    action not executed, a grant that does not cover it); nothing is executed or written.

    [b]Examples[/b]

      gaf compensate action:6b78… --by letting-agent --grant grant:… --policy rent-actions \\
          --key july-allocation-request-withdrawn --reason "claim E settled the allocation"
    """
    from gaf import actions

    def work() -> None:
        with GafStore.open(store) as s:
            done = actions.compensate(
                s, action_id, authorised_by=resolve_key(s, by, ("agent",), {}, "--by"), grant=grant,
                policy=_versioned(s, policy, "action_policy").id, idempotency_key=key, at=_when(at), reason=reason,
                executor=actions.WebhookExecutor(webhook) if webhook else None,
            )  # fmt: skip
        _emit(as_json, done.to_dict(), lambda: _print_acted(done, f" compensates {action_id}"))

    _run(as_json, work)


@app.command()
def history(
    subject: Annotated[str, typer.Argument(help="The subject, e.g. rent:lease-17/2026-07.")],
    store: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Every closure about a subject, oldest first, with verdicts and the supersession chain.

    [b]Examples[/b]

      gaf history rent:lease-17/2026-07
    """
    from gaf import reopen as reopening

    def work() -> None:
        with GafStore.open(store, read_only=True) as s:
            rows = reopening.history(s, subject)

        def table() -> None:
            t = Table(title=f"history of {subject}")
            for col in ("closed at", "closure", "verdict", "policy", "supersedes", "superseded by"):
                t.add_column(col)
            for r in rows:
                t.add_row(r["closed_at"], _short(r["closure"]), f"{r['label']} {r['strength']:+}", f"v{r['projection_version']}",
                          ", ".join(_short(x) for x in r["supersedes"]), ", ".join(_short(x) for x in r["superseded_by"]))  # fmt: skip
            out.print(t)

        _emit(as_json, rows, table)

    _run(as_json, work)


reopen_app = typer.Typer(help="Reopen decisions after new evidence, an invalidated source, a policy change or an appeal.", no_args_is_help=True)
app.add_typer(reopen_app, name="reopen")
ReviewerOpt = Annotated[str, typer.Option(help="Key or id of the agent the re-projection's acceptance is recorded under.")]


def _print_reopened(done: Any) -> None:
    out.print(f"reopen {done.event.id} ({done.event.trigger.value})", highlight=False)
    for step in done.superseded:
        out.print(f"  {_short(step['old'])} {step['old_label']} → {_short(step['new'])} {step['new_label']}", highlight=False)
    if not done.superseded:
        out.print("  no standing closure was affected")
    for action in done.to_compensate:
        out.print(f"  [red]executed action needs cancellation or compensation:[/] {action}", highlight=False)


@reopen_app.command("new-claim")
def reopen_new_claim(
    path: Annotated[Path, typer.Argument(help="A claims file: its claims are ingested, then what they affect is reopened.")],
    reviewer: ReviewerOpt, as_of: AsOfOpt = None, store: StoreOpt = None, as_json: JsonOpt = False,
) -> None:  # fmt: skip
    """Ingest new evidence and reopen every standing closure it reaches.

    [b]Examples[/b]

      gaf reopen new-claim examples/rent/claim-e.yaml --reviewer registry-clerk --as-of 2026-07-21
    """
    import impact

    def work() -> None:
        when = _when(as_of)
        with GafStore.open(store) as s:
            report = ingest_records(s, path, recorded_at=_now())
            claims = [r for r in s.get_many(report.write.written + report.write.existing).values() if isinstance(r, Claim)]
            who = resolve_key(s, reviewer, ("agent",), {}, "--reviewer")
            results = reopening.after_new_claims(s, claims, impact=impact, reviewer=who, at=_now(), as_of=when)
        _emit(as_json, [r.to_dict() for r in results], lambda: [_print_reopened(r) for r in results])

    _run(as_json, work)


@reopen_app.command("source")
def reopen_source(
    source: Annotated[str, typer.Argument(help="The source to invalidate: its key or id.")],
    by: Annotated[str, typer.Option("--by", help="Key or id of the agent declaring it invalid.")],
    reason: Annotated[str, typer.Option(help="Why the source is invalid.")],
    invalid_from: Annotated[str, typer.Option(help="Claims observed from this time on count for nothing (ISO 8601).")],
    reviewer: ReviewerOpt, as_of: AsOfOpt = None, store: StoreOpt = None, as_json: JsonOpt = False,
) -> None:  # fmt: skip
    """Record a source invalidation and reopen every standing closure that rested on it.

    [b]Examples[/b]

      gaf reopen source bank-ledger --by registry-clerk --reason "export corrupted" \\
          --invalid-from 2026-07-01 --reviewer registry-clerk
    """
    import impact

    def work() -> None:
        when = _when(as_of)
        with GafStore.open(store) as s:
            source_id = resolve_key(s, source, ("source",), {}, "SOURCE")
            who = resolve_key(s, by, ("agent",), {}, "--by")
            reviewer_id = resolve_key(s, reviewer, ("agent",), {}, "--reviewer")
            done = reopening.after_invalidation(s, source_id, impact=impact, by=who, reason=reason,
                                                invalid_from=to_instant(invalid_from), reviewer=reviewer_id, at=_now(),
                                                as_of=when)  # fmt: skip
        _emit(as_json, done.to_dict(), lambda: _print_reopened(done))

    _run(as_json, work)


@reopen_app.command("policy")
def reopen_policy(
    old: Annotated[str, typer.Argument(help="The superseded projection policy version: NAME@VERSION.")],
    reviewer: ReviewerOpt,
    effective: Annotated[Optional[str], typer.Option(help="When the new version took effect; earlier closures keep the old one.")] = None,
    retroactive: Annotated[bool, typer.Option("--retroactive", help="Reach closures decided before the effective date too.")] = False,
    as_of: AsOfOpt = None, store: StoreOpt = None, as_json: JsonOpt = False,
) -> None:  # fmt: skip
    """Re-decide the closures a policy change reaches under the latest version of the policy.

    [b]Examples[/b]

      gaf reopen policy rent-delinquency@1 --effective 2026-08-01 --reviewer registry-clerk
    """
    import impact

    def work() -> None:
        with GafStore.open(store) as s:
            previous = _versioned(s, old, "projection")
            reviewer_id = resolve_key(s, reviewer, ("agent",), {}, "--reviewer")
            done = reopening.after_policy_change(s, previous, impact=impact, reviewer=reviewer_id, at=_now(), as_of=_when(as_of),
                                                 effective=to_instant(effective) if effective else None,
                                                 retroactive=retroactive)  # fmt: skip
        _emit(as_json, done.to_dict(), lambda: _print_reopened(done))

    _run(as_json, work)


@reopen_app.command("appeal")
def reopen_appeal(
    closure_id: Annotated[str, typer.Argument(help="The closure appealed.")],
    by: Annotated[str, typer.Option("--by", help="Key or id of the appellant.")],
    grounds: Annotated[str, typer.Option(help="The grounds of the appeal.")],
    reviewer: ReviewerOpt, as_of: AsOfOpt = None, store: StoreOpt = None, as_json: JsonOpt = False,
) -> None:  # fmt: skip
    """Record an appeal and re-decide the closure on what is known now.

    [b]Examples[/b]

      gaf reopen appeal closure:be9d… --by tenant-b --grounds "the receipt shows July" --reviewer registry-clerk
    """
    def work() -> None:
        when = _when(as_of)
        with GafStore.open(store) as s:
            who = resolve_key(s, by, ("agent",), {}, "--by")
            reviewer_id = resolve_key(s, reviewer, ("agent",), {}, "--reviewer")
            done = reopening.on_appeal(s, closure_id, by=who, grounds=grounds, reviewer=reviewer_id, at=_now(), as_of=when)
        _emit(as_json, done.to_dict(), lambda: _print_reopened(done))

    _run(as_json, work)


@policy_app.command("decide")
def policy_decide(
    closure_id: Annotated[str, typer.Argument(help="The closure the case was decided in.")],
    by: Annotated[str, typer.Option("--by", help="Key or id of the person (agent) deciding.")],
    decision: Annotated[str, typer.Option(help="What was decided.")],
    reason: Annotated[str, typer.Option(help="Why.")],
    settles: Annotated[Optional[str], typer.Option(help="The policy exception this decision settles (takes it off the queue).")] = None,
    at: Annotated[Optional[str], typer.Option("--at", help="When it was decided (ISO 8601); default now.")] = None,
    store: StoreOpt = None, as_json: JsonOpt = False,
) -> None:  # fmt: skip
    """Record a person's decision on one case: not a precedent; with --settles, it settles a policy exception.

    Exit code 2 when the exception was raised for another closure (nothing is written).

    [b]Examples[/b]

      gaf policy queue --json
      gaf policy decide closure:760b… --by letting-agent --decision "partial payment" \\
          --reason "900 of 1000 received; ask for the rest" --settles policy_exception:…
    """

    def work() -> None:
        with GafStore.open(store) as s:
            case = lifecycle.decide_case(s, closure_id, decided_by=resolve_key(s, by, ("agent",), {}, "--by"), decision=decision,
                                         reason=reason, at=_when(at), settles=settles)  # fmt: skip
        _emit(as_json, case.to_json(), lambda: out.print(
            f"case decision {case.id}" + (f" (settles {case.settles})" if case.settles else ""), highlight=False))  # fmt: skip

    _run(as_json, work)


@policy_app.command("propose")
def policy_propose(
    rule_file: Annotated[Path, typer.Argument(help="A YAML file with one derivation rule.")],
    name: Annotated[str, typer.Option(help="The policy's name.")],
    text: Annotated[str, typer.Option(help="The policy in words.")],
    by: Annotated[str, typer.Option("--by", help="Key or id of the proposer.")],
    case: Annotated[Optional[list[str]], typer.Option("--case", help="A case decision it generalises (repeatable).")] = None,
    store: StoreOpt = None, as_json: JsonOpt = False,
) -> None:  # fmt: skip
    """Propose a policy candidate from case decisions: a rule, not yet binding.

    [b]Examples[/b]

      gaf policy propose examples/rent/allocation-rule.yaml --name rent-allocation --text "…" --by letting-agent
    """
    from gaf import lifecycle

    def work() -> None:
        rule = policies.read_derivation_rule(rule_file)
        with GafStore.open(store) as s:
            candidate = lifecycle.propose(s, name=name, text=text, rule=rule, cases=case or [],
                                          proposed_by=resolve_key(s, by, ("agent",), {}, "--by"), at=_now())  # fmt: skip
        _emit(as_json, candidate.to_json(), lambda: out.print(f"proposed {candidate.id}", highlight=False))

    _run(as_json, work)


@policy_app.command("ratify")
def policy_ratify(
    candidate_id: Annotated[str, typer.Argument(help="The policy candidate to ratify.")],
    by: Annotated[str, typer.Option("--by", help="Key or id of the authority (an agent with the 'authority' role).")],
    version: Annotated[int, typer.Option(help="The ratified policy's version.")],
    effective: Annotated[str, typer.Option(help="When it takes effect (ISO 8601).")],
    retroactive: Annotated[bool, typer.Option("--retroactive", help="It also governs closures decided before it took effect.")] = False,
    store: StoreOpt = None, as_json: JsonOpt = False,
) -> None:  # fmt: skip
    """Ratify a candidate on an authority's word; cite it from a projection with ``ratified: [NAME@VERSION]``.

    Exit code 5 when the agent is not an authority.

    [b]Examples[/b]

      gaf policy ratify policy_candidate:… --by letting-agent --version 1 --effective 2026-08-01
    """
    from gaf import lifecycle
    from gaf.records import PolicyCandidate

    def work() -> None:
        with GafStore.open(store) as s:
            candidate = s.get(candidate_id)
            if not isinstance(candidate, PolicyCandidate):
                raise GafError(f"no policy candidate {candidate_id}")
            ratified = lifecycle.ratify(s, candidate, authority=resolve_key(s, by, ("agent",), {}, "--by"), version=version,
                                        effective=to_instant(effective), retroactive=retroactive, at=_now())  # fmt: skip
        _emit(as_json, ratified.to_json(), lambda: out.print(f"ratified {ratified.name}@{ratified.version} as {ratified.id}", highlight=False))

    _run(as_json, work)


@policy_app.command("waive")
def policy_waive(
    policy_id: Annotated[str, typer.Argument(help="The policy (action policy, projection, rules or ratified policy) id.")],
    closure_id: Annotated[str, typer.Option("--closure", help="The one decision let past it.")],
    by: Annotated[str, typer.Option("--by", help="Key or id of the authority.")],
    reason: Annotated[str, typer.Option(help="Why.")],
    store: StoreOpt = None, as_json: JsonOpt = False,
) -> None:  # fmt: skip
    """Let one decision past one policy, on a named authority, with the reason.

    [b]Examples[/b]

      gaf policy waive action_policy:… --closure closure:… --by letting-agent --reason "tenant asked"
    """
    from gaf import lifecycle

    def work() -> None:
        with GafStore.open(store) as s:
            waiver = lifecycle.waive(s, policy=policy_id, closure=closure_id, authority=resolve_key(s, by, ("agent",), {}, "--by"),
                                     reason=reason, at=_now())  # fmt: skip
        _emit(as_json, waiver.to_json(), lambda: out.print(f"waiver {waiver.id}", highlight=False))

    _run(as_json, work)


@policy_app.command("sway")
def policy_sway(
    current: Annotated[str, typer.Argument(help="The current projection policy: NAME@VERSION.")],
    proposed: Annotated[Path, typer.Argument(help="The proposed policy file (not published).")],
    store: StoreOpt = None, as_json: JsonOpt = False,
) -> None:  # fmt: skip
    """Before ratifying a change: how many standing verdicts under the current version would flip, and which.

    [b]Examples[/b]

      gaf policy sway rent-delinquency@1 examples/rent/policy-v2.yaml
    """
    from gaf import lifecycle

    def work() -> None:
        with GafStore.open(store, read_only=True) as s:
            result = lifecycle.sway(s, _versioned(s, current, "projection"), policies.read_policy(s, proposed))

        def text() -> None:
            out.print(f"{result.judged} closure(s) judged, {len(result.flips)} would flip, {len(result.unchanged)} unchanged")
            for f in result.flips:
                out.print(f"  {_short(f['closure'])} {f['subject']}: {f['from']} → {f['to']}", highlight=False)

        _emit(as_json, result.to_dict(), text)

    _run(as_json, work)


@policy_app.command("queue")
def policy_queue(store: StoreOpt = None, as_json: JsonOpt = False) -> None:
    """Policy exceptions waiting for a person, oldest first.

    [b]Examples[/b]

      gaf policy queue --json
    """
    from gaf import lifecycle

    def work() -> None:
        with GafStore.open(store, read_only=True) as s:
            queue = lifecycle.review_queue(s)
        _emit(as_json, [e.to_json() for e in queue],
              lambda: out.print(_rows_table([{"id": e.id, "subject": e.subject, "reason": e.reason} for e in queue],
                                            ("id", "subject", "reason"))))  # fmt: skip

    _run(as_json, work)


export_app = typer.Typer(help="Export provenance for compliance tools.", no_args_is_help=True)
app.add_typer(export_app, name="export")


@export_app.command("prov")
def export_prov(
    closure_id: Annotated[Optional[str], typer.Option("--closure", help="Export one closure's whole lineage.")] = None,
    subject: Annotated[Optional[str], typer.Option(help="Export every closure about a subject.")] = None,
    everything: Annotated[bool, typer.Option("--all", help="Stream the whole store as N-Triples (needs --out).")] = False,
    fmt: Annotated[str, typer.Option("--format", help="ttl, jsonld, nt, provn, provjson or provxml.")] = "ttl",
    out_path: Annotated[Optional[Path], typer.Option("--out", help="Write here (atomically) instead of stdout.")] = None,
    base: Annotated[str, typer.Option(help="IRI base for record ids.")] = "urn:gaf:",
    store: StoreOpt = None,
) -> None:
    """Export W3C PROV: PROV-O through rdflib, PROV-N/JSON/XML through prov, from one mapping.

    The summary, one line of JSON on stderr, carries the RDFC-1.0 canonical hash of the exported RDF.

    [b]Examples[/b]

      gaf export prov --closure closure:aca0… --format ttl --out july.ttl
      gaf export prov --subject rent:lease-17/2026-07 --format provn
      gaf export prov --all --format nt --out store.nt
    """
    import prov_export

    def work() -> None:
        if sum(bool(x) for x in (closure_id, subject, everything)) != 1:
            raise GafError("give exactly one of --closure, --subject or --all")
        if fmt not in prov_export.FORMATS:
            raise prov_export.ExportError(f"unknown format {fmt!r}", hint=f"one of: {', '.join(prov_export.FORMATS)}")
        with GafStore.open(store, read_only=True) as s:
            if everything:
                if out_path is None or fmt != "nt":
                    raise prov_export.ExportError("--all streams N-Triples to a file: use --format nt --out FILE")
                with _progress(False) as bar:
                    task = bar.add_task("exporting", total=sum(s.counts().values()))
                    result = prov_export.stream_all(s, out_path, base=base, progress=lambda n: bar.update(task, completed=n))
                text = None
            else:
                records = prov_export.lineage(s, closure_id) if closure_id else prov_export.subject_lineage(s, subject)  # type: ignore[arg-type]
                result, text = prov_export.export(records, fmt, out_path, base=base)
        if text is not None:
            sys.stdout.write(text)
        sys.stderr.write(json.dumps(result.to_dict()) + "\n")  # one line for machines, never wrapped at the terminal's width

    _run(False, work)


@app.command()
def query(
    name: Annotated[Optional[str], typer.Argument(help="A query of the library (gaf query --list shows them).")] = None,
    param: Annotated[Optional[list[str]], typer.Option("--param", "-p", help="A parameter, name=value (repeatable).")] = None,
    cypher: Annotated[Optional[str], typer.Option("--cypher", help="Ad-hoc Cypher, run through the same read-only runner.")] = None,
    fmt: Annotated[str, typer.Option("--format", help="table, json or csv.")] = "table",
    list_all: Annotated[bool, typer.Option("--list", help="List the library's queries and the questions they answer.")] = False,
    reference_out: Annotated[Optional[Path], typer.Option("--reference", help="Write the library's Markdown reference here.")] = None,
    favorites_out: Annotated[Optional[Path], typer.Option("--favorites", help="Write the library as Neo4j Browser favourites (zip).")] = None,
    store: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Run an auditor query read-only: a named one from the library, or ad-hoc Cypher.

    A query that would write is refused before it reaches the store (exit code 2).

    [b]Examples[/b]

      gaf query --list
      gaf query why-verdict --param closure=closure:aca0…
      gaf query decisions-by-reviewer -p reviewer=registry-clerk --format csv
      gaf query --cypher "MATCH (c:Claim) RETURN count(c) AS claims"
    """
    import queries

    def work() -> None:
        library = queries.load()
        if list_all or reference_out or favorites_out:
            if reference_out:
                reference_out.write_text(queries.reference(library), encoding="utf-8")
            if favorites_out:
                favorites_out.write_bytes(queries.favorites(library))
            rows = [{"name": q.name, "params": ", ".join(q.params) or "-", "question": q.question} for q in library.values()]
            _emit(as_json, rows, lambda: out.print(_rows_table(rows, ("name", "params", "question"))))
            return
        if (name is None) == (cypher is None):
            raise GafError("give a query name or --cypher, not both", hint="gaf query --list shows the library")
        if name is not None and name not in library:
            raise InvalidRecord(f"no query named {name!r}", hint=f"known: {', '.join(sorted(library))}")
        params = dict(queries.parse_param(p) for p in param or [])
        with GafStore.open(store, read_only=True) as s:
            rows = queries.run(s, library[name] if name else cypher, params)  # type: ignore[arg-type]
        if as_json or fmt == "json":
            print(json.dumps(rows, indent=2, ensure_ascii=False, default=str))
        elif fmt == "csv":
            sys.stdout.write(queries.as_csv(rows))
        else:
            columns = tuple(rows[0]) if rows else ("(no rows)",)
            out.print(_rows_table([{k: (_short(v) if isinstance(v, str) and ":" in v and len(v) > 60 else v) for k, v in r.items()} for r in rows], columns))

    _run(as_json, work)


@app.command()
def verify(store: StoreOpt = None, as_json: JsonOpt = False) -> None:
    """Recompute every content id and check every property and relationship; name each discrepancy.

    Exit code 0 when the store is intact, 4 when anything differs.

    [b]Examples[/b]

      gaf verify
      gaf verify --store neo4j://localhost:7687 --json
    """
    from gaf.verify import verify as check

    def work() -> None:
        with GafStore.open(store, read_only=True) as s, _progress(as_json) as bar:
            task = bar.add_task("verifying", total=sum(s.counts().values()))
            report = check(s, progress=lambda n: bar.update(task, completed=n))

        def text() -> None:
            state = "[green]intact[/]" if report.ok else f"[red]{len(report.discrepancies)} discrepancies[/]"
            out.print(f"{report.checked} records checked: {state}")
            for d in report.discrepancies:
                out.print(f"  {d.id}: {d.problem}", highlight=False)

        _emit(as_json, report.to_dict(), text)
        if not report.ok:
            raise typer.Exit(4)

    _run(as_json, work)


@app.command(name="whatif")
def whatif_(
    closure_id: Annotated[str, typer.Argument(help="The closure whose verdict is questioned.")],
    max_size: Annotated[int, typer.Option("--max-size", help="Largest combination of changes tried.", min=1)] = 2,
    seconds: Annotated[float, typer.Option(help="Stop after this long, and say how far the search got.")] = 60.0,
    store: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """What would change this verdict? An exhaustive, bounded search of its cone (nothing is written).

    [b]Examples[/b]

      gaf whatif closure:0609… --max-size 2 --seconds 60
    """
    from gaf.whatif import whatif as search

    def work() -> None:
        with GafStore.open(store, read_only=True) as s:
            report = search(s, closure_id, max_size=max_size, seconds=seconds)
        _emit(as_json, report.to_dict(), lambda: out.print(report.text(), highlight=False, markup=False))

    _run(as_json, work)


def cli_reference() -> str:
    """The CLI reference in Markdown, generated from the commands themselves so it cannot drift."""
    root = typer.main.get_command(app)
    lines = ["# gaf command reference", "",
             "Generated from the CLI by `gaf reference`; do not edit by hand. Every command takes `--help`.", ""]  # fmt: skip

    def walk(command: Any, path: list[str]) -> None:
        if hasattr(command, "list_commands"):  # a group (typer ships its own click, so no isinstance)
            ctx = command.context_class(command)
            for name in command.list_commands(ctx):
                walk(command.get_command(ctx, name), [*path, name])
            return
        help_text = (command.help or "").replace("[b]", "**").replace("[/b]", "**").strip()
        lines.extend([f"## gaf {' '.join(path)}", "", help_text, ""])
        for param in command.params:
            if param.param_type_name == "option":
                lines.append(f"- `{', '.join(param.opts)}`: {param.help or ''}".rstrip())
            else:
                lines.append(f"- `{param.name.upper()}`: {getattr(param, 'help', '') or ''}".rstrip())
        lines.append("")

    walk(root, [])
    return "\n".join(lines)


@app.command()
def reference(
    out_path: Annotated[Optional[Path], typer.Option("--out", help="Write here instead of stdout.")] = None,
) -> None:
    """Print the CLI reference (Markdown), generated from the commands.

    [b]Examples[/b]

      gaf reference --out docs/cli-reference.md
    """
    text = cli_reference()
    if out_path:
        out_path.write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
