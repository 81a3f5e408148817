"""What every command shares: the app, the options, the store it opens, and the one ``@command``
helper that turns gaf's typed errors into one line and an exit code. How commands print is
``gaf.cli.output``."""

from __future__ import annotations

import functools
import inspect
import json
import sys
from collections.abc import Callable, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Optional, TypeVar

import typer
import typer.core
from pydantic import ValidationError
from rich.markup import escape

from gaf import __version__, signing
from gaf.cli.output import Format, err, fit_consoles, out
from gaf.errors import EXIT_CODES, GafError, InvalidRecord, InvalidValue
from gaf.records import limits
from gaf.settings import Settings
from gaf.store import GafStore
from gaf.store.config import open_store as open_named_store
from gaf.store.config import shown
from gaf.types import Span, to_instant

if TYPE_CHECKING:  # cryptography is optional (gaf[signing])
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

def help_text(doc: str | None) -> str:
    """A docstring as ``--help`` prints it: each paragraph one line, for rich to wrap at the
    reader's width (a docstring's own line breaks are the source's, not the terminal's);
    indented lines — examples, tables — are kept as they are, one per line."""
    paragraphs = []
    for paragraph in inspect.cleandoc(doc or "").split("\n\n"):
        lines = paragraph.splitlines()
        kept = any(line.startswith(" ") for line in lines)
        paragraphs.append("\n".join(lines) if kept else " ".join(line.strip() for line in lines))
    return "\n\n".join(paragraphs)


def _flags_without_placeholder(command: Any, ctx: Any) -> None:
    """A flag takes no value, so its help shows none (typer would print ``<bool>``)."""
    for param in command.get_params(ctx):
        if getattr(param, "is_flag", False) and param.metavar is None:  # typer's own click: no isinstance
            param.metavar = ""


class _PlainFlags:
    """Help with flags shown without a value placeholder, for commands and groups alike."""

    def format_help(self, ctx: Any, formatter: Any) -> None:
        _flags_without_placeholder(self, ctx)
        super().format_help(ctx, formatter)  # type: ignore[misc]


class Command(_PlainFlags, typer.core.TyperCommand):
    """A gaf command: typer's, with flags shown without a value placeholder."""


class Group(_PlainFlags, typer.core.TyperGroup):
    """A gaf command group: typer's, with flags shown without a value placeholder."""


def group(help: str) -> typer.Typer:
    """A command group (``gaf policy``, ``gaf impact`` …) with gaf's help conventions."""
    return typer.Typer(help=help_text(help), no_args_is_help=True, cls=Group, rich_markup_mode="rich")


app = typer.Typer(
    name="gaf",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode="rich",
    cls=Group,
)


StoreOpt = Annotated[
    Optional[str],
    typer.Option("--store", "-s", help="Bolt URI (neo4j://, bolt://) or embedded store path; default $GAF_STORE (never $NEO4J_URI), else the .gaf/store.lbug found here or in a parent directory"),
]


JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON for machines instead of tables.")]


@dataclass
class _Running:
    """What ``open_store`` needs to know of the command running it, and keeps for it."""

    #: whether it prints JSON (its --json): the human form alone says which store it writes to
    as_json: bool
    #: the stores it opened: what closing one did (a compaction, or its refusal) is said after the command
    opened: list[GafStore] = field(default_factory=list)


#: The command running (set by ``@command`` around its body), None outside one (the library, a test).
_RUNNING: ContextVar[_Running | None] = ContextVar("gaf_cli_running", default=None)


# ---------------------------------------------------------------------- values read at the edge
# Every option that is not free text — a time, a number, a format — is read by one reader of
# gaf's (``to_instant``, ``gaf.types.Span``, a list of choices) as typer parses the command
# line, so ``--as-of ""``, ``--auto-accept-at nan`` or ``--format xml`` is refused before the
# command opens its store, in the words every other refusal uses.


class Refused:
    """A value an option's reader refused, held until the command starts (``@command`` raises it).

    Typer would print a reader's exception as a usage box in its own (pydantic's) words, or
    as a traceback; held, it is reported as every refusal is — one line, or JSON with
    --json, exit code 2 — and nothing has been opened or written."""

    def __init__(self, error: GafError) -> None:
        self.error = error


def read_with(parse: Callable[[str], Any], flag: str) -> Callable[[Any], Any]:
    """An option's reader: ``parse`` over the text given, a refusal named by ``flag`` and held
    (``Refused``). A default (not text) is the value already."""

    def read(value: Any) -> Any:
        if not isinstance(value, str):
            return value
        try:
            return parse(value)
        except GafError as exc:
            return Refused(type(exc)(exc.what, where=exc.where or flag, hint=exc.hint))

    return read


def time_option(flag: str, help: str) -> Any:
    """An option that takes a time (``to_instant``): a date, or a time with its zone; an empty or
    impossible one (``""``, ``2026-02-30``) is refused, never read as now."""
    return typer.Option(flag, parser=read_with(to_instant, flag), metavar="TIME", help=help)


def number_option(flag: str, span: Span, help: str) -> Any:
    """An option that takes a number in ``span``: NaN, an infinity, text or a number out of
    range is refused with the form it takes (the environment's numbers are read the same way)."""
    return typer.Option(flag, parser=read_with(lambda text: span.read(text, flag), flag), metavar="NUMBER", help=help)


def choice_option(flag: str, choices: Sequence[str], help: str, make: Callable[[str], Any] = str) -> Any:
    """An option that takes one of ``choices``; any other value is refused naming them."""

    def choose(text: str) -> Any:
        if text not in choices:
            raise InvalidValue(f"unknown value {text!r}", hint=f"one of: {', '.join(choices)}")
        return make(text)

    return typer.Option(flag, parser=read_with(choose, flag), metavar="|".join(choices), help=help)


FormatOpt = Annotated[
    Optional[Format],
    choice_option("--format", [f.value for f in Format], make=Format,
                  help="table (for people, the default), json, ndjson (one object a line, streamed) or csv."),
]


def main() -> None:
    """Entry point of the ``gaf`` console script."""
    app()


def _run(as_json: bool, work: Callable[[], Any]) -> Any:
    """Run a command body, turning gaf's typed errors into one line and an exit code."""
    try:
        return work()
    except GafError as exc:
        refused = exc
    except ValidationError as exc:  # a value a library model refused: its first complaint, not pydantic's page
        first = exc.errors(include_url=False)[0]
        field = ".".join(str(p) for p in first["loc"])
        refused = InvalidRecord(str(first["msg"]).removeprefix("Value error, "), where=f"{exc.title}.{field}" if field else exc.title)
    except ValueError as exc:  # a value the user typed (a time, a version) that does not parse
        refused = InvalidRecord(str(exc))
    if as_json:
        print(json.dumps(refused.to_dict(), indent=2))
    else:
        err.print(f"[bold red]error:[/] {escape(refused.message)}", highlight=False)
        for sub in getattr(refused, "errors", [])[:20]:
            err.print(f"  - {escape(sub.message)}", highlight=False)
        extra = len(getattr(refused, "errors", [])) - 20
        if extra > 0:
            err.print(f"  … and {extra} more")
    raise typer.Exit(refused.exit_code) from None


def _machine(kwargs: dict[str, Any]) -> bool:
    """Whether a command was asked for JSON (``--json``, ``--format json|ndjson``): its errors are JSON too."""
    return bool(kwargs.get("as_json")) or kwargs.get("fmt") in (Format.json, Format.ndjson)


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
                fit_consoles(chosen.columns)
                refused = next((v.error for v in kwargs.values() if isinstance(v, Refused)), None)
                if refused is not None:
                    raise refused
                with limits(max_record_bytes=chosen.max_record_bytes, max_input_bytes=chosen.max_input_bytes):
                    fn(*args, **kwargs)

            running = _Running(as_json=_machine(kwargs))
            token = _RUNNING.set(running)
            try:
                _run(running.as_json, limited)
            finally:
                _say_what_closing_did(running.opened)
                _RUNNING.reset(token)

        group.command(name, cls=Command, help=help_text(fn.__doc__))(speak)
        return fn

    return register


@functools.cache
def settings() -> Settings:
    """The environment's settings, read once per command (the library reads none itself)."""
    return Settings.from_env()


def _say_what_closing_did(stores: list[GafStore]) -> None:
    """A writer of the embedded store compacts its file on closing when it is mostly not its records
    (``LadybugStore.close``): say so on stderr, in either form (stdout stays the command's output),
    and say so when the compaction was refused, the store left whole as it was."""
    for store in stores:
        done = getattr(store, "compacted", None)
        if done is not None:
            sys.stderr.write(f"compacted {done.path} on closing: {done.bytes_before / 2**20:.1f} MiB → {done.bytes_after / 2**20:.1f} MiB "
                             f"({done.nodes} records, {done.relationships} relationships copied)\n")  # fmt: skip
        refused = getattr(store, "compaction_refused", None)
        if refused is not None:
            sys.stderr.write(f"note: {shown(store)} was not compacted on closing: {refused}; the store is whole as it was "
                             "(`gaf compact` tries again; a larger GAF_CACHE_MB gives it room)\n")  # fmt: skip


def open_store(target: str | None, *, read_only: bool = False) -> GafStore:
    """The store a command names (--store, else $GAF_STORE, else the .gaf/store.lbug found here or
    in a parent). A command that writes says where, in its human form, on stderr (``store:
    <absolute path or URI>``, one line): a write to a store nobody meant is seen, and stdout
    stays the command's output; with --json the program that reads it named the store. A reader
    that had to complete the recovery a killed writer left pending says so on stderr, in either form."""
    opened = open_named_store(target, read_only=read_only, settings=settings())
    running = _RUNNING.get()
    if running is not None:
        running.opened.append(opened)
    if not read_only and not (running is not None and running.as_json):
        sys.stderr.write(f"store: {shown(opened)}\n")
    if opened.recovered:
        sys.stderr.write(f"note: a writer of {shown(opened)} was killed mid-checkpoint; its recovery was completed before reading\n")
    return opened


def write_file(path: Path, data: str | bytes) -> None:
    """Write what a command was asked to put in a file (UTF-8 text, or bytes): a path that is a
    directory, or in one that does not exist or cannot be written, is a typed error naming it."""
    try:
        if isinstance(data, str):
            path.write_text(data, encoding="utf-8")
        else:
            path.write_bytes(data)
    except OSError as exc:
        raise InvalidRecord(f"cannot write the file: {exc.strerror or exc}", where=str(path),
                            hint="give the path of a file, in a directory that exists and can be written") from None  # fmt: skip


def signing_key() -> Ed25519PrivateKey | None:
    """The key closures are signed with ($GAF_SIGNING_KEY), or None: closures unsigned."""
    return signing.private_key(settings().signing_key)


def verify_key() -> str | None:
    """The public key every closure must be signed by ($GAF_VERIFY_KEY), or None."""
    return signing.public_key(settings().verify_key)


def _version(value: bool) -> None:
    if value:
        out.print(f"gaf {__version__}")
        raise typer.Exit()


ROOT_HELP = """Claims → Projection → Graph of Accepted Facts → Closure → Verdict → Action → Reopen.

The store is --store, else $GAF_STORE, else the .gaf/store.lbug in this
directory or the nearest parent (up to $HOME), as git finds a repository;
with none, gaf refuses, and `gaf init` makes one here. A command that
writes names its store on stderr. gaf does not read $NEO4J_URI: to use
that Neo4j, set GAF_STORE=$NEO4J_URI (the credentials come from
$NEO4J_USER and $NEO4J_PASSWORD).

[b]Exit codes[/b], the same for every command:

""" + "\n".join(f"  {int(code)}  {meaning}" for code, meaning in EXIT_CODES.items())


@app.callback(help=help_text(ROOT_HELP))
def _root(
    version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")] = False,
) -> None:
    """The root of every command: only ``--version`` of its own."""


#: The option of every command that reports progress (each hands its library function a ``Ticker``).
QuietOpt = Annotated[bool, typer.Option("--quiet", "-q", help="Show no progress on stderr.")]


AtOpt = Annotated[
    Optional[datetime],
    time_option("--at", help="When this is recorded (ISO 8601, or a date: midnight UTC); default now. Give it and a scripted history is the same records on every run."),
]
AsOfOpt = Annotated[Optional[datetime], time_option("--as-of", help="Answer for the graph as it stood at this time (ISO 8601).")]


def utc_now() -> datetime:
    return datetime.now(timezone.utc)


def or_now(at: datetime | None) -> datetime:
    """The time an option gave, or now when it gave none."""
    return at or utc_now()


ReviewerOpt = Annotated[str, typer.Option(help="Key, id or id prefix of the agent the re-projection's acceptance is recorded under.")]
