"""How a command prints: the consoles, the formats (a table for people, JSON, NDJSON and CSV for
machines), progress on stderr, and the tables of records and rows that fit the terminal."""

from __future__ import annotations

import csv
import json
import re
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from enum import Enum
from typing import Any

from rich.console import Console
from rich.measure import Measurement
from rich.progress import BarColumn, Progress, TextColumn
from rich.table import Table

from gaf.canonical import ID_PATTERN, short_ids
from gaf.errors import InvalidValue
from gaf.records import IgnoredDeclaration, Record
from gaf.records import statement_text as ledger_text


#: Wider than any terminal: piped output is not wrapped at all, so grep sees whole lines.
PIPED_WIDTH = 100_000


def fit_consoles(columns: int | None) -> None:
    """Wrap the consoles' words at the terminal's width, and not at all when a stream is not a
    terminal (rich would wrap at 80 columns, so a script's grep found half a line); ``columns``
    (COLUMNS), when set, still names the width."""
    for console, stream in ((out, sys.stdout), (err, sys.stderr)):
        if not stream.isatty():
            console.soft_wrap = columns is None
            console.width = columns or PIPED_WIDTH


out = Console()


err = Console(stderr=True)


class Format(str, Enum):
    """How a command that lists rows prints them."""

    table = "table"
    json = "json"
    ndjson = "ndjson"
    csv = "csv"


def emit(as_json: bool, data: Any, table: Callable[[], None]) -> None:
    if as_json:
        print(json.dumps(data, indent=2, ensure_ascii=False))
    else:
        table()


def chosen_format(as_json: bool, fmt: Format | None) -> Format:
    """The one format a listing prints in: ``--json`` is ``--format json``; the two disagreeing is refused."""
    if as_json and fmt not in (None, Format.json):
        raise InvalidValue(f"--json and --format {fmt.value} ask for two formats", where="--format",
                           hint="give one of them")  # fmt: skip
    return Format.json if as_json else (fmt or Format.table)


def emit_rows(fmt: Format, rows: Iterable[dict[str, Any]], table: Callable[[list[dict[str, Any]]], None], *,
              columns: Sequence[str] | None = None) -> None:  # fmt: skip
    """Print listed rows in the format asked for: a table for people, or JSON, NDJSON and CSV
    for machines. NDJSON and CSV are written row by row as the rows come, so a listing of the
    whole store does not wait for, or hold, all of it. ``columns`` is CSV's header when rows
    may leave keys out (records omit the fields they do not have); else the first row's keys."""
    if fmt is Format.table:
        table(list(rows))
    elif fmt is Format.json:
        print(json.dumps(list(rows), indent=2, ensure_ascii=False))
    elif fmt is Format.ndjson:
        for row in rows:
            sys.stdout.write(json.dumps(row, ensure_ascii=False) + "\n")
    else:
        write_csv(rows, columns)


def write_csv(rows: Iterable[dict[str, Any]], columns: Sequence[str] | None = None) -> None:
    """Rows as CSV on stdout under a header (``columns``, else the first row's keys); a nested
    value as its JSON text, a missing one empty. A key outside the header is refused, never dropped."""
    writer: csv.DictWriter[str] | None = None
    for row in rows:
        if writer is None:
            writer = csv.DictWriter(sys.stdout, fieldnames=list(columns or row))
            writer.writeheader()
        writer.writerow({k: v if isinstance(v, str | int | float) or v is None else json.dumps(v, ensure_ascii=False)
                         for k, v in row.items()})  # fmt: skip


#: How long work runs before its progress is shown, and how often a log (stderr not a terminal) is told it.
PROGRESS_AFTER = 1.0


PROGRESS_EVERY = 10.0


class Ticker:
    """Progress of long work on stderr, with counts and rate: ``tick(phase, done, total)``.

    On a terminal, nothing for the first second, then one line redrawn in place; elsewhere (a
    log), nothing for the first ten seconds, then a line at each new stage and every ten seconds,
    and the last counts at the end — so work that ends within ten seconds prints the same
    however loaded the machine. Never on stdout, so --json stays clean; --quiet shows none.
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
        # A terminal shows work that runs past a second; a log (a script, a docs session, a test)
        # is told nothing for the first ten, so quick work prints the same there whatever the load.
        if self.quiet or now - self.started < (PROGRESS_AFTER if err.is_terminal else PROGRESS_EVERY):
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


#: How many rows a table for people shows; --format json, ndjson or csv give all of them.
TABLE_ROWS = 1000


def records_table(records: list[Record], limit: int = 50, *, total: int | None = None,
                  named: Mapping[str, Record] | None = None) -> Table:  # fmt: skip
    """A readable table of records: kind, a short id and what each says (``summary``, with the
    records it names in ``named``: ``named_by(records)`` read in one call); ``total`` when the
    list given is only the first of them. Records past ``limit`` are not shown, but the printed
    prefixes tell them apart too: ``gaf list`` passes the next id of the kind, so its prefixes
    are unique in the store."""
    rows = [{"kind": r.KIND, "id": r.id, "what": summary(r, named or {})} for r in records[:limit]]
    table = rows_table(rows, ("kind", "id", "what"), among=[r.id for r in records])
    more = (len(records) if total is None else total) - min(limit, len(records))
    if more > 0:
        table.caption = f"… and {more} more (--format ndjson or csv lists every one)"
    return table


#: The field of a record whose target ``summary`` reads beside it: a fact is its proposition's
#: text, a verdict its closure's subject, a grant its agent's key.
_NAMES = {"fact": "proposition", "evaluation": "proposition", "exclusion": "proposition", "derivation": "conclusion",
          "verdict": "closure", "grant": "agent", "action": "authorised_by"}  # fmt: skip


def named_by(records: Iterable[Record]) -> set[str]:
    """The ids whose records ``summary`` reads beside ``records``: read them in one ``get_many``,
    never one read a row."""
    return {getattr(r, _NAMES[r.KIND]) for r in records if r.KIND in _NAMES}


def summary(record: Record, named: Mapping[str, Record] | None = None) -> str:
    """One line that says what a record is about, in the words people use for it: a key and
    name, NAME@VERSION, a proposition's text, a closure's subject. ``named``: the records it
    points at (``named_by``); without them it says less. Other kinds: their fields, less the ids."""
    r: Any = record
    target: Any = (named or {}).get(getattr(r, _NAMES.get(r.KIND, ""), ""))
    about = summary(target) if target is not None else ""
    if r.KIND in ("agent", "source"):
        return f"{r.key}: {r.name}"
    if r.KIND == "claim":
        return f"{r.transformation} at {r.observed_at:%Y-%m-%d}: " + "; ".join(statement_text(s) for s in r.statements)
    if r.KIND == "proposition":
        return statement_text(r)
    if r.KIND in ("projection", "rules", "action_policy", "policy"):
        said = getattr(r, "question", None) or getattr(r, "text", None)
        return f"{r.name}@{r.version}" + (f": {said}" if said else "")
    if r.KIND == "policy_candidate":
        return f"{r.name}: {r.text}"
    if r.KIND in ("fact", "derivation"):
        return about
    if r.KIND == "evaluation":
        return f"{r.outcome.value}: {about}"
    if r.KIND == "exclusion":
        return f"{about}: {r.reason}"
    if r.KIND == "closure":
        return f"{r.subject} as of {r.as_of:%Y-%m-%d}"
    if r.KIND == "gaf":
        return f"{len(r.facts)} facts, {len(r.unresolved)} unresolved, {len(r.rejected)} rejected"
    if r.KIND == "verdict":
        return f"{r.label} {r.strength:+}" + (f" about {target.subject}" if target is not None else "")
    if r.KIND == "grant":
        return f"{target.key if target is not None else 'an agent'} may {r.action_kind} {', '.join(r.subjects)}"
    if r.KIND == "action":
        amount = f" {r.amount}{' ' + r.unit if r.unit else ''}" if r.amount is not None else ""
        return f"{r.action_kind} {r.subject}{amount}" + (f" by {target.key}" if target is not None else "")
    return ", ".join(f"{k}={v}" for k, v in r.props().items() if v not in (None, [], "") and not any(_ids_in([v])))


def statement_text(s: Any) -> str:
    """A statement or proposition as people read it (``gaf.records.ledger.statement_text``)."""
    return ledger_text(s.predicate, s.subject, s.object, s.value, denied=getattr(s, "polarity", None) == "denied", unit=getattr(s, "unit", None))


def warn_ignored(ignored: Sequence[IgnoredDeclaration]) -> None:
    """Say on stderr which completeness declarations close no scope, and why (JSON on stdout stays clean)."""
    for d in ignored:  # one line each, never wrapped at the terminal's width: grep finds it
        sys.stderr.write(f"warning: completeness declaration {d.declaration} closes no scope: {d.reason}\n")


def warn_limits(reasons: Sequence[str]) -> None:
    """Say on stderr each limit evaluation hit (``gaf.derive.LimitHit``), one line each, never wrapped."""
    for reason in reasons:
        sys.stderr.write(f"warning: limit hit: {reason}\n")


def rows_table(rows: list[dict[str, Any]], columns: tuple[str, ...], *, title: str | None = None,
               among: Iterable[str] = ()) -> Table:  # fmt: skip
    """A table of rows for people: words wrap at the terminal's width, ids never (an id column
    keeps its width, so ``closure:8cceb8f8d011…`` is never cut to ``closure:06…``); a value that
    is a whole id is shown as its shortest unique prefix among the table's ids and ``among``
    (``gaf.canonical.short_ids``)."""
    t = Table(title=title)
    cells = _cells(rows, columns, among)
    for col in columns:
        width = max((len(r[col]) for r in cells), default=0)
        is_id = bool(cells) and all(not r[col] or ID_PREFIX.fullmatch(r[col]) for r in cells)
        t.add_column(col, no_wrap=is_id, min_width=width if is_id else None, overflow="fold")
    for r in cells:
        t.add_row(*(r[c] for c in columns))
    return t


#: How a cell that holds an id prefix (or a list of them) looks.
ID_PREFIX = re.compile(r"([a-z_]+:[0-9a-f]{4,}…?)(, [a-z_]+:[0-9a-f]{4,}…?)*")


def _cells(rows: list[dict[str, Any]], columns: tuple[str, ...], among: Iterable[str] = ()) -> list[dict[str, str]]:
    """Rows as table cells: each whole id as its shortest prefix unique among all the rows' ids
    (and ``among``), a list comma-separated."""
    prefixes = short_ids([*_ids_in([r.get(c) for r in rows for c in columns]), *among])
    return [{c: _cell(r.get(c, ""), prefixes) for c in columns} for r in rows]


def _ids_in(values: Iterable[Any]) -> Iterator[str]:
    """The whole ids among values and the lists in them."""
    for value in values:
        if isinstance(value, list | tuple):
            yield from _ids_in(value)
        elif isinstance(value, str) and ID_PATTERN.fullmatch(value):
            yield value


def _cell(value: Any, prefixes: dict[str, str]) -> str:
    """A value as a table cell: a whole id as its prefix in ``prefixes``, a list comma-separated."""
    if isinstance(value, list | tuple):
        return ", ".join(_cell(v, prefixes) for v in value)
    text = "" if value is None else str(value)
    return prefixes.get(text, text)


def print_rows(rows: list[dict[str, Any]], columns: tuple[str, ...], *, title: str | None = None) -> None:
    """Print rows as a table when it fits the terminal with its words wrapped and its ids
    whole, else as one block of ``column: value`` lines a row (as psql's expanded display
    does): a table squeezed into 80 columns cuts every cell to ``und…``."""
    table = rows_table(rows, columns, title=title)
    narrowest = Measurement.get(out, out.options.update(max_width=PIPED_WIDTH), table).minimum  # every word on a line
    if len(columns) <= 2 or narrowest <= out.width:
        out.print(table, highlight=False)
        return
    if title:
        out.print(title, highlight=False)
    label = max(len(c) for c in columns)
    for n, row in enumerate(_cells(rows, columns), 1):
        out.print(f"─[ {n} ]" + "─" * max(0, min(out.width, 40) - 6 - len(str(n))), highlight=False)
        for col in columns:
            out.print(f"{col.ljust(label)}  {row[col]}", highlight=False)
