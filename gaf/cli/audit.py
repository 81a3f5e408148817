"""For auditors and compliance tools: PROV export, named queries, the CLI reference."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

# boilerplate: the names this command group takes from gaf/cli/common.py and output.py, one per line
from gaf.cli.common import (
    FormatOpt,
    JsonOpt,
    QuietOpt,
    StoreOpt,
    app,
    command,
    group,
    open_store,
    write_file,
)
from gaf.cli.output import (
    Ticker,
    chosen_format,
    emit_rows,
    print_rows,
)
from gaf.errors import EXIT_CODES, GafError, InvalidRecord

# boilerplate: each command declares its own options in its signature (typer reads them from there), so the
# --store/--json/--by option lines and the open-call-emit shape of a body repeat from command to command.

export_app = group("Export provenance for compliance tools.")
app.add_typer(export_app, name="export")


@command(export_app, "prov")
def export_prov(
    closure_id: Annotated[Optional[str], typer.Option("--closure", help="Export one closure's whole lineage.")] = None,
    subject: Annotated[Optional[str], typer.Option(help="Export every closure about a subject.")] = None,
    everything: Annotated[bool, typer.Option("--all", help="Stream the whole store as N-Triples (needs --out).")] = False,
    fmt: Annotated[str, typer.Option("--format", help="ttl, jsonld, nt, trig, nq, provn, provjson or provxml.")] = "ttl",
    out_path: Annotated[Optional[Path], typer.Option("--out", help="Write here (atomically) instead of stdout.")] = None,
    base: Annotated[str, typer.Option(help="IRI base for record ids.")] = "urn:gaf:",
    force: Annotated[bool, typer.Option("--force", help="Replace the file at --out if there is one.")] = False,
    store: StoreOpt = None,
    quiet: QuietOpt = False,
    as_json: JsonOpt = False,
) -> None:
    """Export W3C PROV: PROV-O through rdflib, and PROV-N/JSON/XML read from the same triples (one mapping).

    The summary, one line of JSON on stderr (with --json, on stdout: then --out is needed), carries the
    RDFC-1.0 canonical hash of the exported RDF and the number of distinct triples. --all writes them
    sorted and distinct, the hash taken as they are written, in memory that does not grow with the store.
    Each closure is a bundle of what it rests on: a named graph (the closure's IRI) in trig and nq, a
    bundle in provn, provjson and provxml; ttl, jsonld and nt hold the same triples in one graph.

    [b]Examples[/b]

      gaf export prov --closure closure:aca0… --format ttl --out july.ttl
      gaf export prov --subject rent:lease-17/2026-07 --format provn
      gaf export prov --closure closure:aca0… --format trig --out july.trig
      gaf export prov --all --format nt --out store.nt --json
    """
    import prov_export

    if sum(bool(x) for x in (closure_id, subject, everything)) != 1:
        raise GafError("give exactly one of --closure, --subject or --all")
    prov_export.check_format(fmt)
    if as_json and out_path is None:
        raise GafError("--json prints the summary on stdout, where the export would go", hint="give --out FILE")
    with open_store(store, read_only=True) as s:
        if everything:
            if out_path is None or fmt != "nt":
                raise prov_export.ExportError("--all streams N-Triples to a file: use --format nt --out FILE")
            with Ticker(f"export prov --all {out_path}", quiet=quiet) as tick:
                result = prov_export.stream_all(s, out_path, base=base, force=force, progress=tick)
            text = None
        else:
            known: dict[str, Any] = {}  # each closure's evidence, found once for the lineage and its bundles
            records = (prov_export.lineage(s, s.resolve_id(closure_id, ("closure",)), known=known) if closure_id
                       else prov_export.subject_lineage(s, subject, known=known))  # type: ignore[arg-type]  # fmt: skip
            held = prov_export.bundles(s, records, known=known)
            result, text = prov_export.export(records, fmt, out_path, base=base, force=force, held=held)
    if text is not None:
        sys.stdout.write(text)
    summary = json.dumps(result.to_dict()) + "\n"  # one line for machines, never wrapped at the terminal's width
    (sys.stdout if as_json else sys.stderr).write(summary)


@command(app)
def query(
    name: Annotated[Optional[str], typer.Argument(help="A query of the library (gaf query --list shows them).")] = None,
    param: Annotated[Optional[list[str]], typer.Option("--param", "-p", help="A parameter, name=value (repeatable).")] = None,
    cypher: Annotated[Optional[str], typer.Option("--cypher", help="Ad-hoc Cypher, run through the same read-only runner.")] = None,
    fmt: FormatOpt = None,
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

    shape = chosen_format(as_json, fmt)
    library = queries.load()
    if list_all or reference_out or favorites_out:
        if reference_out:
            write_file(reference_out, queries.reference(library))
        if favorites_out:
            write_file(favorites_out, queries.favorites(library))
        rows = [{"name": q.name, "params": ", ".join(q.params) or "-", "question": q.question} for q in library.values()]
        emit_rows(shape, rows, lambda rows: print_rows(rows, ("name", "params", "question")))
        return
    if (name is None) == (cypher is None):
        raise GafError("give a query name or --cypher, not both", hint="gaf query --list shows the library")
    if name is not None and name not in library:
        raise InvalidRecord(f"no query named {name!r}", hint=f"known: {', '.join(sorted(library))}")
    params = dict(queries.parse_param(p) for p in param or [])
    with open_store(store, read_only=True) as s:
        rows = queries.run(s, library[name] if name else cypher, params)  # type: ignore[arg-type]
    emit_rows(shape, ({k: _plain(v) for k, v in r.items()} for r in rows),
              lambda rows: print_rows(rows, tuple(rows[0]) if rows else ("(no rows)",)))  # fmt: skip


def _plain(value: Any) -> Any:
    """A value a query returned, as JSON can hold it (a time as its ISO text)."""
    return value if value is None or isinstance(value, str | int | float | bool | list | dict) else str(value)


def cli_commands() -> list[dict[str, Any]]:
    """Every command with its help and parameters, read from the commands themselves: what
    ``gaf reference`` prints, as Markdown or as JSON."""
    root = typer.main.get_command(app)
    found: list[dict[str, Any]] = []

    def walk(command: Any, path: list[str]) -> None:
        if hasattr(command, "list_commands"):  # a group (typer ships its own click, so no isinstance)
            ctx = command.context_class(command)
            for name in command.list_commands(ctx):
                walk(command.get_command(ctx, name), [*path, name])
            return
        params = [{"name": p.name, "kind": p.param_type_name, "opts": list(p.opts), "required": bool(p.required),
                   "flag": bool(getattr(p, "is_flag", False)), "help": getattr(p, "help", None) or ""}
                  for p in command.params]  # fmt: skip
        found.append({"command": " ".join(["gaf", *path]), "help": command.help or "", "params": params})

    walk(root, [])
    return found


def cli_reference() -> str:
    """The CLI reference in Markdown, generated from the commands themselves so it cannot drift."""
    lines = ["# gaf command reference", "",
             "Generated from the CLI by `gaf reference`; do not edit by hand. Every command takes `--help`.", "",
             "## Exit codes", "", "The same for every command:", "", "| exit | meaning |", "| ---: | --- |",
             *(f"| {int(code)} | {meaning} |" for code, meaning in EXIT_CODES.items()), ""]  # fmt: skip
    for entry in cli_commands():
        lines.extend([f"## {entry['command']}", "", _markdown(entry["help"]), ""])
        for param in entry["params"]:
            name = ", ".join(param["opts"]) if param["kind"] == "option" else param["name"].upper()
            lines.append(f"- `{name}`: {param['help']}".rstrip())
        lines.append("")
    return "\n".join(lines)


def _markdown(help_text: str) -> str:
    """A command's help as Markdown: rich's bold as Markdown's, indented lines (examples) fenced."""
    paragraphs = []
    for paragraph in help_text.replace("[b]", "**").replace("[/b]", "**").strip().split("\n\n"):
        lines = paragraph.splitlines()
        if lines and all(line.startswith(" ") for line in lines):
            paragraph = "```sh\n" + textwrap.dedent(paragraph) + "\n```"
        paragraphs.append(paragraph)
    return "\n\n".join(paragraphs)


@command(app)
def reference(
    out_path: Annotated[Optional[Path], typer.Option("--out", help="Write here instead of stdout.")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Print the CLI reference (Markdown), generated from the commands; with --json, the
    commands, their help and their parameters as JSON.

    [b]Examples[/b]

      gaf reference --out docs/cli-reference.md
      gaf reference --json | jq -r '.commands[].command'
    """
    if as_json:
        text = json.dumps({"exit_codes": {str(int(c)): m for c, m in EXIT_CODES.items()}, "commands": cli_commands()},
                          indent=2, ensure_ascii=False) + "\n"  # fmt: skip
    else:
        text = cli_reference()
    if out_path:
        write_file(out_path, text)
    else:
        sys.stdout.write(text)
