"""What every command shares: the app, the consoles, the options, and the one ``@command`` helper
that turns gaf's typed errors into one line and an exit code."""

from __future__ import annotations

import functools
import json
import sys
import time
from collections.abc import Callable, Sequence
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Annotated, Any, Optional, TypeVar

import typer
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeRemainingColumn,
)
from rich.table import Table

from gaf import __version__, signing
from gaf.canonical import short_id
from gaf.errors import GafError, InvalidRecord
from gaf.records import IgnoredDeclaration, Record, limits
from gaf.records import statement_text as ledger_text
from gaf.settings import Settings
from gaf.store import GafStore
from gaf.store.config import open_store as open_named_store
from gaf.types import to_instant

if TYPE_CHECKING:  # cryptography is optional (gaf[signing])
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

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
        refused = InvalidRecord(str(exc))
        if as_json:
            print(json.dumps(refused.to_dict(), indent=2))
        else:
            err.print(f"[bold red]error:[/] {refused.message}", highlight=False, markup=True)
        raise typer.Exit(refused.exit_code) from None
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


F = TypeVar("F", bound=Callable[..., None])


def command(group: typer.Typer, name: str | None = None) -> Callable[[F], F]:
    """Register a function as a command of ``group`` (the function's signature is its options).

    The body runs with gaf's typed errors, and values that do not parse, turned into one
    line on stderr (or a JSON error with ``--json``) and the error family's exit code:
    no command repeats that shape. It runs under the size limits of the command's
    settings (GAF_MAX_RECORD_BYTES, GAF_MAX_INPUT_BYTES through ``gaf.records.limits``).
    The function itself is returned unchanged."""

    def register(fn: F) -> F:
        @functools.wraps(fn)
        def speak(*args: Any, **kwargs: Any) -> None:
            settings.cache_clear()  # each command reads the environment afresh, once

            def limited() -> None:
                chosen = settings()
                with limits(max_record_bytes=chosen.max_record_bytes, max_input_bytes=chosen.max_input_bytes):
                    fn(*args, **kwargs)

            _run(bool(kwargs.get("as_json", False)), limited)

        group.command(name)(speak)
        return fn

    return register


@functools.cache
def settings() -> Settings:
    """The environment's settings, read once per command (the library reads none itself)."""
    return Settings.from_env()


def open_store(target: str | None, *, read_only: bool = False) -> GafStore:
    """The store a command names (--store, else $GAF_STORE, else the embedded default)."""
    return open_named_store(target, read_only=read_only, settings=settings())


def signing_key() -> Ed25519PrivateKey | None:
    """The key closures are signed with ($GAF_SIGNING_KEY), or None: closures unsigned."""
    return signing.private_key(settings().signing_key)


def verify_key() -> str | None:
    """The public key every closure must be signed by ($GAF_VERIFY_KEY), or None."""
    return signing.public_key(settings().verify_key)


def emit(as_json: bool, data: Any, table: Callable[[], None]) -> None:
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


def progress_bar(quiet: bool) -> Progress:
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        console=err,
        disable=quiet or not err.is_terminal,
        transient=True,
    )


#: How long work runs before its progress is shown, and how often a log (stderr not a terminal) is told it.
PROGRESS_AFTER = 1.0
PROGRESS_EVERY = 10.0


class Ticker:
    """Progress of long work on stderr, with counts and rate: ``tick(phase, done, total)``.

    Nothing for the first second, so a quick command prints nothing; then, on a terminal,
    one line redrawn in place, and elsewhere (a log) a line every ten seconds and the
    last counts at the end. Never on stdout, so --json stays clean; --quiet shows none.
    """

    def __init__(self, what: str, *, quiet: bool = False, clock: Callable[[], float] = time.monotonic):
        self.what, self.quiet, self.clock = what, quiet, clock
        self.started = self.phase_started = clock()
        self.phase, self.done, self.total = "", 0, None  # type: tuple[str, int, int | None]
        self._live: Progress | None = None
        self._told: float | None = None
        self._printed: tuple[str, int] | None = None  # the phase and count a log was last told

    def __call__(self, phase: str, done: int, total: int | None = None) -> None:
        now = self.clock()
        if phase != self.phase:
            self.phase, self.phase_started, self._told = phase, now, None
        self.done, self.total = done, total
        if self.quiet or now - self.started < PROGRESS_AFTER:
            return
        if err.is_terminal:
            if self._live is None:
                self._live = Progress(TextColumn("{task.description}"), BarColumn(), console=err, transient=True)
                self._live.start()
                self._live.add_task("", total=None)
            self._live.update(self._live.task_ids[0], description=self.line(now), completed=done, total=total)
        elif self._told is None or now - self._told >= PROGRESS_EVERY:
            sys.stderr.write(self.line(now) + "\n")
            self._told, self._printed = now, (self.phase, done)

    def line(self, now: float) -> str:
        rate = self.done / max(now - self.phase_started, 1e-3)
        count = f"{self.done:,}" if self.total is None else f"{self.done:,}/{self.total:,}"
        return f"{self.what}: {self.phase} {count} ({rate:,.0f}/s)"

    def __enter__(self) -> Ticker:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._live is not None:
            self._live.stop()
        elif self._printed is not None and self._printed != (self.phase, self.done):
            sys.stderr.write(self.line(self.clock()) + "\n")  # a log's last word: the final counts


def records_table(records: list[Record], limit: int = 50, total: int | None = None) -> Table:
    """A readable table of records: kind, a short id and what each says (``total``: how many
    there are, when only the first are given)."""
    table = Table(show_lines=False)
    table.add_column("kind")
    table.add_column("id")
    table.add_column("what")
    for record in records[:limit]:
        table.add_row(record.KIND, short_id(record.id), summary(record))
    shown, total = min(len(records), limit), max(len(records), total or 0)
    if total > shown:
        table.caption = f"… and {total - shown} more (use --json for all)"
    return table


def summary(record: Record) -> str:
    """One line that says what a record is about."""
    if record.KIND in ("agent", "source"):
        return f"{record.key}: {record.name}"  # type: ignore[attr-defined]
    if record.KIND == "claim":
        parts = [statement_text(s) for s in record.statements]  # type: ignore[attr-defined]
        return f"{record.transformation} at {record.observed_at:%Y-%m-%d}: " + "; ".join(parts)  # type: ignore[attr-defined]
    if record.KIND == "proposition":
        return statement_text(record)
    return ", ".join(f"{k}={v}" for k, v in list(record.props().items())[:3])


def statement_text(s: Any) -> str:
    """A statement or proposition as people read it (``gaf.records.ledger.statement_text``)."""
    return ledger_text(s.predicate, s.subject, s.object, s.value, denied=getattr(s, "polarity", None) == "denied", unit=getattr(s, "unit", None))


def warn_ignored(ignored: Sequence[IgnoredDeclaration]) -> None:
    """Say on stderr which completeness declarations close no scope, and why (JSON on stdout stays clean)."""
    for d in ignored:  # one line each, never wrapped at the terminal's width: grep finds it
        sys.stderr.write(f"warning: completeness declaration {d.declaration} closes no scope: {d.reason}\n")


def rows_table(rows: list[dict[str, Any]], columns: tuple[str, ...]) -> Table:
    t = Table()
    for col in columns:
        t.add_column(col)
    for r in rows:
        t.add_row(*(short_id(str(r[c])) if c == "id" else str(r.get(c, "")) for c in columns))
    return t


AsOfOpt = Annotated[Optional[str], typer.Option("--as-of", help="Answer for the graph as it stood at this time (ISO 8601).")]


def utc_now() -> datetime:
    return datetime.now(timezone.utc)


def parse_time(text: str | None) -> datetime:
    return to_instant(text) if text else utc_now()


ReviewerOpt = Annotated[str, typer.Option(help="Key or id of the agent the re-projection's acceptance is recorded under.")]
