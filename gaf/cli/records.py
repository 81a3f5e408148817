"""Commands over the store itself: init, schema, ingest, show, list, stats, verify, migrate."""

from __future__ import annotations

import itertools
import json
import sys
from pathlib import Path
from typing import Annotated, Any, Optional

import typer
from rich.table import Table

from gaf.cli.common import (
    AtOpt,
    FormatOpt,
    choice_option,
    JsonOpt,
    StoreOpt,
    app,
    command,
    number_option,
    open_store,
    or_now,
    QuietOpt,
    settings,
    verify_key,
)
from gaf.cli.output import (
    TABLE_ROWS,
    Format,
    chosen_format,
    emit_rows,
    emit,
    err,
    out,
    Ticker,
    named_by,
    records_table,
)
from gaf.errors import ExitCode, GafError
from gaf.ledger import ingest as ingest_records
from gaf.records import Record, json_schema, record_type
from gaf.store import init_store, shown
from gaf.types import Span

# boilerplate: each command declares its own options in its signature (typer reads them from there), so the
# --store/--json/--by option lines and the open-call-emit shape of a body repeat from command to command.


@command(app)
def init(store: StoreOpt = None, as_json: JsonOpt = False) -> None:
    """Create a store here (.gaf/store.lbug), or at --store or $GAF_STORE, with
    its schema, constraints and indexes; run again, it says so and changes
    nothing.

    Other commands find the store as git finds a repository: in this
    directory or the nearest parent that has .gaf/store.lbug.

    [b]Examples[/b]

      gaf init
      GAF_STORE=neo4j://localhost:7687 gaf init
    """
    done = init_store(store, settings=settings())
    said = f"initialised {done.dialect} store at {done.location}" if done.created else f"already a {done.dialect} store at {done.location}: nothing to do"
    emit(as_json, done.to_dict(), lambda: out.print(said, highlight=False, soft_wrap=True))


@command(app)
def schema(
    kind: Annotated[Optional[str], typer.Argument(help="One record kind (claim, source, …); all when omitted.")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Print the JSON Schema of the records, for integrators (JSON with or without --json).

    [b]Examples[/b]

      gaf schema            # every record kind
      gaf schema claim      # just claims
    """
    data = record_type(kind).model_json_schema() if kind else json_schema()
    print(json.dumps(data, indent=2))


#: How many of the records an ingest wrote its table shows (the counts are whole).
SHOWN = 50

@command(app)
def ingest(
    path: Annotated[str, typer.Argument(help="A .jsonl, .csv or .yaml file of claims, sources and agents, or NDJSON of OpenLineage events; - reads stdin.")],
    fmt: Annotated[Optional[str], choice_option("--format", ("jsonl", "csv", "yaml", "openlineage"), help="jsonl, csv, yaml or openlineage (NDJSON of OpenLineage events, never guessed): needed for -, else from the suffix.")] = None,
    store: StoreOpt = None,
    best_effort: Annotated[bool, typer.Option("--best-effort", help="Write the good items and report the bad ones.")] = False,
    batch_size: Annotated[Optional[int], number_option("--batch-size", Span(1, whole=True, example="--batch-size 2000"), help="Records per write transaction; default 2000, or 8 a MiB of GAF_CACHE_MB when it caps the embedded store's page cache.")] = None,
    at: AtOpt = None,
    quiet: QuietOpt = False,
    as_json: JsonOpt = False,
) -> None:
    """Validate a claims file, then append its records to the store.

    Nothing is written if any line is bad (unless --best-effort); every bad line is
    reported with its number. The file is read twice (checked, then written), never
    held whole; stdin is copied to a temporary file first. Ingesting the same file
    again is a no-op. Progress goes to stderr once it runs longer than a second.

    [b]Examples[/b]

      gaf ingest examples/rent/claims.yaml
      gaf ingest claims.jsonl --best-effort --json
      export-claims | gaf ingest - --format jsonl
      gaf ingest events.ndjson --format openlineage
      gaf ingest export.csv --store neo4j://localhost:7687
    """
    stdin = path == "-"
    name = "<stdin>" if stdin else path
    with open_store(store) as s, Ticker(f"ingest {name}", quiet=quiet) as tick:
        report = ingest_records(
            s,
            sys.stdin.buffer if stdin else Path(path),
            recorded_at=or_now(at),
            mode="best_effort" if best_effort else "atomic",
            fmt=fmt,
            name=name,
            batch_size=batch_size,
            progress=tick,
            keep_ids=SHOWN,
            lineage_skew=settings().lineage_skew,
        )
        written = s.get_many(report.write.written)
        named = s.get_many(sorted(named_by(written.values())))
        data = {"file": name, "store": shown(s), **report.to_dict()}
        if s.cache_mb is not None:  # a capped page cache bounds what the load could hold: said beside it
            data["page_cache_mb"] = s.cache_mb
    emit(as_json, data, lambda: _print_ingest(data, [written[i] for i in report.write.written], named))
    if report.write.failed:
        raise typer.Exit(ExitCode.BAD_INPUT)


def _print_ingest(data: dict[str, Any], written: list[Record], named: dict[str, Record]) -> None:
    out.print(
        f"read {data['read']} items from {data['file']}: "
        f"[green]{data['written']} written[/], {data['existing']} already stored, "
        f"[red]{len(data['failed'])} refused[/] → {data['store']}"
        + (f" (page cache capped at {data['page_cache_mb']} MiB by GAF_CACHE_MB)" if "page_cache_mb" in data else ""),
        highlight=False,
    )
    for failure in data["failed"]:
        err.print(f"  - {failure['where'] or failure['index']}: {failure['what']}", highlight=False)
    if written:
        out.print(records_table(written, total=data["written"], named=named))


@command(app)
def show(
    record_id: Annotated[str, typer.Argument(help="The id of a record (kind:sha256), a unique prefix (closure:8cceb8f8d011, or 8cceb8f8d011), a key (bank-ledger) or a NAME@VERSION (rent-delinquency@1).")],
    store: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Print one record and the relationships leaving it.

    [b]Examples[/b]

      gaf show claim:3f2a9c01be44…   (a unique prefix, as tables print ids)
    """
    with open_store(store, read_only=True) as s:
        record = s.get(record_id := s.resolve_id(record_id))
        if record is None:
            raise GafError(f"no record {record_id} in {s.location}", hint="gaf list KIND shows the ids stored")
        edges = s.edges_from(record_id)
    data = {**record.to_json(), "edges": [{"rel": r, "target": t} for r, t in edges]}
    emit(as_json, data, lambda: out.print_json(json.dumps(data, ensure_ascii=False)))


@command(app, name="list")
def list_(
    kind: Annotated[str, typer.Argument(help="A record kind: claim, source, agent, proposition, …")],
    store: StoreOpt = None,
    as_json: JsonOpt = False,
    fmt: FormatOpt = None,
) -> None:
    """List the stored records of one kind, in id order.

    NDJSON and CSV are written as the records are read, a thousand at a time, so a listing
    of the whole store holds one thousand in memory.

    [b]Examples[/b]

      gaf list claim
      gaf list source --json
      gaf list claim --format ndjson | jq -r .id
    """
    cls = record_type(kind)
    shape = chosen_format(as_json, fmt)
    with open_store(store, read_only=True) as s:
        if shape is Format.table:
            records = list(itertools.islice(s.records(kind), TABLE_ROWS + 1))  # the one past the last shown: its neighbour
            named = s.get_many(sorted(named_by(records[:TABLE_ROWS])))
            out.print(records_table(records, limit=TABLE_ROWS, total=s.count(cls), named=named))
        else:
            fields = ["kind", "id", *(f for f in cls.model_fields if f not in ("kind", "id"))]
            emit_rows(shape, (r.to_json() for r in s.records(kind)), lambda rows: None, columns=fields)


@command(app)
def stats(store: StoreOpt = None, as_json: JsonOpt = False) -> None:
    """Count the stored records of each kind.

    [b]Examples[/b]

      gaf stats --json
    """
    with open_store(store, read_only=True) as s:
        counts = s.counts()
        location = s.location
        version = s.schema_version()

    def table() -> None:
        t = Table(title=f"records in {location}", caption=f"schema version {version}")
        t.add_column("kind")
        t.add_column("count", justify="right")
        for kind, n in counts.items():
            t.add_row(kind, str(n))
        out.print(t)

    emit(as_json, {"store": location, "schema_version": version, "counts": counts}, table)


@command(app)
def verify(
    deep: Annotated[bool, typer.Option("--deep", help="Also replay every closure and name each that differs.")] = False,
    head: Annotated[Optional[str], typer.Option(help="A log head noted before (gaf verify prints it): the log must still hold it.")] = None,
    store: StoreOpt = None,
    quiet: QuietOpt = False,
    as_json: JsonOpt = False,
) -> None:
    """Recompute every content id and check every property, relationship and reference, and the
    store against its write log; name each discrepancy.

    A record deleted, inserted or replaced behind gaf's back is named from the write log (schema
    version 5); keep the head it prints somewhere else and pass it back with --head to catch a log
    rewritten since. Exit code 0 when the store is intact, 4 when anything differs.

    [b]Examples[/b]

      gaf verify
      gaf verify --deep --head log_entry:5f0c…
      gaf verify --store neo4j://localhost:7687 --json
    """
    from gaf.verify import verify as check

    with open_store(store, read_only=True) as s, Ticker("verify", quiet=quiet) as tick:
        report = check(s, verify_key=verify_key(), deep=deep, head=head, progress=tick)

    def text() -> None:
        state = "[green]intact[/]" if report.ok else f"[red]{len(report.discrepancies)} discrepancies[/]"
        replayed = f", {report.replayed} closures replayed" if report.replayed is not None else ""
        out.print(f"{report.checked} records checked{replayed}: {state}")
        if report.head:
            out.print(f"write log: {report.logged} ids logged; its head, to note down for --head:", highlight=False)
            out.print(f"  {report.head}", highlight=False)
        for note in report.notes:
            out.print(f"[yellow]note[/]: {note}", highlight=False)
        for d in report.discrepancies:
            out.print(f"  {d.id}: {d.problem}", highlight=False)

    emit(as_json, report.to_dict(), text)
    if not report.ok:
        raise typer.Exit(ExitCode.DIFFERS)


@command(app)
def migrate(
    at: AtOpt = None,
    store: StoreOpt = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Say what would be written; write nothing.")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Bring a store written by an older gaf to the current schema version, in one transaction.

    It only adds records (for version 2, the cone of each closure made before cones were recorded).
    Every id stays, and `gaf verify` and every replay answer as before. Running it again is a no-op.

    [b]Examples[/b]

      gaf migrate --dry-run
      gaf migrate --store neo4j://localhost:7687 --json
    """
    from gaf.migrate import migrate as bring_up

    with open_store(store) as s:
        done = bring_up(s, at=or_now(at), dry_run=dry_run)
    payload = {**done.to_dict(), "dry_run": dry_run}
    emit(as_json, payload, lambda: out.print(("(dry run) " if dry_run else "") + done.summary(), highlight=False))


@command(app)
def compact(store: StoreOpt = None, as_json: JsonOpt = False) -> None:
    """Give back the space the embedded store's file holds beyond its records: copy them into a new file and put it in place.

    Every record, id and relationship stays as it was (`gaf verify` answers the same); the old file
    stays until the copy is whole and counted. A writer does this by itself when it closes a file
    that is more than twice what its records and their index need (and between 16 and 256 MiB);
    this command does it at any size. Neo4j manages its own store files: there, it says so and
    changes nothing.

    [b]Examples[/b]

      gaf compact
      gaf compact --store .gaf/rent.lbug --json
    """
    with open_store(store) as s:
        done = s.compact()
    if done is None:
        emit(as_json, {"compacted": False, "store": shown(s), "why": "Neo4j manages its own store files"},
             lambda: out.print(f"nothing to compact: {shown(s)} is a Neo4j store, whose server manages its own files", highlight=False))  # fmt: skip
        return
    payload = {"compacted": True, **done.to_json()}
    emit(as_json, payload, lambda: out.print(
        f"compacted {done.path}: {_mib(done.bytes_before)} → {_mib(done.bytes_after)} "
        f"({done.nodes} records, {done.relationships} relationships copied in {done.seconds:.1f} s)", highlight=False))  # fmt: skip


def _mib(size: int) -> str:
    return f"{size / 2**20:.1f} MiB"
