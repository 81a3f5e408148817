"""Compacting the embedded store: copy what its file holds into a new file, and put that in its place.

Why a LadybugDB file outgrows its records (LadybugDB 0.22; measured on the rent story, docs/stores.md):

- A relationship table (one per relationship type and pair of labels) that a second checkpoint
  writes to gets a header for its whole node group — offsets and lengths of 131,072 source nodes,
  both directions, uncompressed: 1 MiB, however few relationships it holds. Every gaf command is
  its own opening of the database, so every pair written by two commands pays it.
- A checkpoint writes what it changes to new pages and frees the old ones; later checkpoints reuse
  them, but the file never shrinks.

A copy written in one go has neither: each header is written once, compressed, and no page is free.
The copy is physical — every row of every table, every relationship, the schema as the file
declares it (an older gaf's included) — so every id, every record, the write log and the schema
stamp are the same afterwards; only the bytes on disk change. What stays is LadybugDB's floor:
about a page of primary-key index per record while a kind has fewer than a few hundred, and a
page per column of each kind that holds a record.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import ladybug

from gaf.errors import StoreError
from gaf.store.schema import graph_schema

#: A table or relationship pair with more rows than this is copied by ``COPY``, through a file;
#: the others by ``CREATE``, all in one transaction.
COPY_ROWS = 10_000
#: A writer compacts its store when it closes it, once the file is at least this big …
AUTO_COMPACT_FROM = 16 << 20
#: … and more than this many times what its records and their index need …
AUTO_COMPACT_RATIO = 2
#: … and no bigger than this: past it, what compaction wins back (at most a MiB or two for each
#: pair of labels a relationship joins) is small beside the records, and `gaf compact` does it on demand.
AUTO_COMPACT_UNTIL = 256 << 20


def rows_of(result: ladybug.QueryResult | list[ladybug.QueryResult], cypher: str) -> list[dict[str, Any]]:
    """The rows of one statement's result, by column name, the result closed once read: now, not
    when the collector gets to it (a result outliving its database crashes the process). Every
    LadybugDB read of gaf's goes through here (``ladybug._LadybugTx.run`` too).

    ``execute`` answers with a list only for a query of several statements; gaf sends one at a time.
    """
    result = _one_statement(result, cypher)
    try:
        names = result.get_column_names()
        return [dict(zip(names, row, strict=True)) for row in result.get_all()]
    finally:
        result.close()


def column_of(result: ladybug.QueryResult | list[ladybug.QueryResult], cypher: str) -> list[Any]:
    """The first column of one statement's result, a value at a time, the result closed once read
    (``rows_of`` holds every row as a list and then as a dict: for a kind's 200,000 ids, some
    90 MB at once, where their values alone are 25 MB)."""
    result = _one_statement(result, cypher)
    try:
        values = []
        while result.has_next():
            values.append(cast(list[Any], result.get_next())[0])  # rows are lists unless asked as dicts
        return values
    finally:
        result.close()


def _one_statement(result: ladybug.QueryResult | list[ladybug.QueryResult], cypher: str) -> ladybug.QueryResult:
    """The result of the one statement gaf sent (``execute`` answers with a list only for several)."""
    if isinstance(result, list):
        raise StoreError(f"one statement was expected, LadybugDB ran {len(result)}", where=" ".join(cypher.split())[:120])
    return result


def _rows(conn: ladybug.Connection, query: str) -> list[dict[str, Any]]:
    return rows_of(conn.execute(query), query)


@contextmanager
def without_key_index(conn: ladybug.Connection, unkeyed: bool) -> Iterator[None]:
    """Node tables declared in the block have no primary-key hash index when ``unkeyed``
    (``Record.FEW``; LadybugDB still refuses a second row with a key it holds, by reading them)."""
    if not unkeyed:
        yield
        return
    conn.execute("CALL enable_default_hash_index=false")
    try:
        yield
    finally:
        conn.execute("CALL enable_default_hash_index=true")


def _stream(conn: ladybug.Connection, query: str) -> Iterator[list[dict[str, Any]]]:
    """The rows of ``query`` in lists of at most ``COPY_ROWS``, so Python holds one list at a time;
    each row a map from ``c0``, ``c1``, … (a list parameter must hold values of one type, a map may not)."""
    result = conn.execute(query)
    assert not isinstance(result, list)
    try:
        chunk: list[dict[str, Any]] = []
        while result.has_next():
            chunk.append({f"c{i}": value for i, value in enumerate(result.get_next())})
            if len(chunk) == COPY_ROWS:
                yield chunk
                chunk = []
        if chunk:
            yield chunk
    finally:
        result.close()


@dataclass(frozen=True)
class _Catalog:
    """The tables a database file declares: node tables with their columns, and for each
    relationship type its pairs of labels and its properties."""

    nodes: dict[str, list[tuple[str, str, bool]]]
    rels: dict[str, tuple[list[tuple[str, str]], list[tuple[str, str]]]]

    @staticmethod
    def read(conn: ladybug.Connection) -> _Catalog:
        tables = _rows(conn, "CALL show_tables() RETURN name, type")
        nodes = {}
        rels = {}
        for table in sorted(tables, key=lambda t: str(t["name"])):
            name = str(table["name"])
            info = _rows(conn, f"CALL table_info('{name}') RETURN *")
            if table["type"] == "NODE":
                nodes[name] = [(str(i["name"]), str(i["type"]), bool(i["primary key"])) for i in info]
            elif table["type"] == "REL":
                pairs = [(str(c["source table name"]), str(c["destination table name"]))
                         for c in _rows(conn, f"CALL show_connection('{name}') RETURN *")]  # fmt: skip
                rels[name] = (pairs, [(str(i["name"]), str(i["type"])) for i in info])
        return _Catalog(nodes, rels)

    def declare(self, conn: ladybug.Connection, few: frozenset[str]) -> None:
        """Declare the tables in ``conn`` (an empty database); the labels in ``few`` without a key
        index (``Record.FEW``), whatever the file copied had: compacting brings an older store there."""
        for label, columns in self.nodes.items():
            defs = ", ".join(f"`{name}` {kind}" + (" PRIMARY KEY" if key else "") for name, kind, key in columns)
            with without_key_index(conn, label in few):
                conn.execute(f"CREATE NODE TABLE `{label}`({defs})")
        for rel, (pairs, props) in self.rels.items():
            ends = ", ".join(f"FROM `{a}` TO `{b}`" for a, b in pairs)
            extra = "".join(f", `{name}` {kind}" for name, kind in props)
            conn.execute(f"CREATE REL TABLE `{rel}`({ends}{extra})")

    def counts(self, conn: ladybug.Connection) -> dict[str, int]:
        """Rows per node table and relationships per pair, zero where there are none: what the
        copy must hold the same of (two statements, each one pass over the store)."""
        out = dict.fromkeys(self.nodes, 0) | {f"{rel}:{a}->{b}": 0 for rel, (pairs, _) in self.rels.items() for a, b in pairs}
        for row in _rows(conn, "MATCH (n) RETURN label(n) AS label, count(*) AS n"):
            out[str(row["label"])] = int(row["n"])
        for row in _rows(conn, "MATCH (a)-[r]->(b) RETURN label(r) AS rel, label(a) AS a, label(b) AS b, count(*) AS n"):
            out[f"{row['rel']}:{row['a']}->{row['b']}"] = int(row["n"])
        return out


@dataclass(frozen=True)
class _Part:
    """One node table, or one relationship type between one pair of labels, to copy: how its
    rows are read, and written either by ``CREATE`` inside a transaction shared with the other
    small parts (a ``COPY`` is its own transaction, 17 ms however few its rows) or, past
    ``COPY_ROWS``, by ``COPY`` from a Parquet file the old database wrote them to (``_FILE`` in
    ``copy`` stands for its path), which finds a relationship's ends by their keys."""

    name: str
    read: str
    create: str
    copy: str

    @staticmethod
    def node(label: str, names: list[str]) -> _Part:
        values = [f"r.c{i}" for i in range(len(names))]
        return _Part(label, f"MATCH (n:`{label}`) RETURN " + ", ".join(f"n.`{name}` AS c{i}" for i, name in enumerate(names)),
                     f"UNWIND $rows AS r CREATE (:`{label}` {{" + ", ".join(f"`{n}`: {v}" for n, v in zip(names, values, strict=True)) + "})",
                     f"COPY `{label}` FROM '{_FILE}'")  # fmt: skip

    @staticmethod
    def rel(rel: str, a: str, b: str, props: list[str]) -> _Part:
        values = [f"r.c{i}" for i in range(2 + len(props))]
        fields = ", ".join(f"`{n}`: {v}" for n, v in zip(props, values[2:], strict=True))
        read = ", ".join(f"{column} AS c{i}" for i, column in enumerate(["s.id", "t.id", *(f"r.`{n}`" for n in props)]))
        return _Part(f"{rel}:{a}->{b}", f"MATCH (s:`{a}`)-[r:`{rel}`]->(t:`{b}`) RETURN {read}",
                     f"UNWIND $rows AS r MATCH (s:`{a}` {{id: r.c0}}), (t:`{b}` {{id: r.c1}}) CREATE (s)-[:`{rel}` {{{fields}}}]->(t)",
                     f"COPY `{rel}` FROM '{_FILE}' (from='{a}', to='{b}')")  # fmt: skip


#: Where a ``COPY`` statement names its file.
_FILE = "<file>"


@dataclass
class Exported:
    """What a store's file holds, read out of it for a compacted copy, so that the copy is
    written with the old database closed (two databases open at once took twice the memory):
    its tables, the rows of each table and relationship pair, the small parts' rows, and the
    Parquet file each big part was written to."""

    catalog: _Catalog
    counts: dict[str, int]
    nodes: list[_Part]
    rels: list[_Part]
    rows: dict[str, list[list[dict[str, Any]]]]
    files: dict[str, Path]


def export(source: ladybug.Connection, folder: Path) -> Exported:
    """Read what ``source`` holds for a copy: a table or relationship pair of at most
    ``COPY_ROWS`` rows (or without a key index, ``Record.FEW``: LadybugDB takes a ``COPY`` into
    such a table only while it is empty, and these hold few rows) into lists, each bigger one
    into a Parquet file in ``folder``, which LadybugDB writes and later reads without the rows
    passing through Python (passing them as parameters of a ``COPY`` took several times the
    table's size in memory)."""
    catalog = _Catalog.read(source)
    few = graph_schema().few
    counts = catalog.counts(source)
    nodes = [_Part.node(label, [name for name, _, _ in columns]) for label, columns in catalog.nodes.items()]
    rels = [_Part.rel(rel, a, b, [name for name, _ in props]) for rel, (pairs, props) in catalog.rels.items() for a, b in pairs]
    rows: dict[str, list[list[dict[str, Any]]]] = {}
    files: dict[str, Path] = {}
    for n, part in enumerate([*nodes, *rels]):
        if not counts[part.name]:
            continue
        if counts[part.name] <= COPY_ROWS or part.name in few:
            rows[part.name] = list(_stream(source, part.read))
        else:
            files[part.name] = folder / f"{n}.parquet"
            source.execute(f"COPY ({part.read}) TO '{files[part.name]}'")
    return Exported(catalog, counts, nodes, rels, rows, files)


def _copy_parts(target: ladybug.Connection, parts: list[_Part], exported: Exported) -> int:
    """Write ``parts`` into ``target``: the small ones in one transaction (a ``COPY`` is its own,
    17 ms however few its rows), then each big one by one ``COPY`` from its file, removed once
    copied."""
    target.execute("BEGIN TRANSACTION")
    try:
        for part in parts:
            for chunk in exported.rows.get(part.name, ()):
                target.execute(part.create, {"rows": chunk})
        target.execute("COMMIT")
    except BaseException:
        try:
            target.execute("ROLLBACK")
        except RuntimeError:
            pass  # LadybugDB already rolled back the transaction a failed statement was in
        raise
    for part in parts:
        file = exported.files.get(part.name)
        if file is not None:
            target.execute(part.copy.replace(_FILE, str(file)))
            file.unlink()
    return sum(exported.counts[part.name] for part in parts)


def copy_into(exported: Exported, target: ladybug.Connection) -> tuple[int, int]:
    """Declare in ``target`` (an empty database) every table the exported file declares and write
    every row and relationship, nodes first; the counts of each table and pair are compared
    after. Answers (rows, relationships) copied."""
    exported.catalog.declare(target, graph_schema().few)
    nodes = _copy_parts(target, exported.nodes, exported)
    relationships = _copy_parts(target, exported.rels, exported)
    after = exported.catalog.counts(target)
    if exported.counts != after:
        differ = sorted(name for name in exported.counts if exported.counts[name] != after.get(name))
        raise StoreError(f"the compacted copy does not hold what the store holds: {', '.join(differ[:5])}",
                         hint="the store is left as it was; report this with the output of `gaf verify`")  # fmt: skip
    return nodes, relationships


def copy_path(target: Path) -> Path:
    """Where the compacted copy of the store at ``target`` is written, beside it."""
    return target.with_name(target.name + ".compacting")


def write_copy(copy: Path, exported: Exported, *, cache_mb: int | None) -> tuple[int, int]:
    """Write the compacted copy of an exported store at ``copy``, checkpointed, closed and
    flushed to disk; answers what it copied. The store itself is not touched: putting the copy
    in its place is the caller's (``LadybugStore.compact``). On failure the copy is removed."""
    database = ladybug.Database(str(copy), buffer_pool_size=(cache_mb or 0) * 2**20)
    try:
        conn = ladybug.Connection(database)
        try:
            counted = copy_into(exported, conn)
            conn.execute("CHECKPOINT")
        finally:
            conn.close()
    except BaseException:
        database.close()
        discard(copy)
        raise
    database.close()
    copy.chmod(0o600)
    with open(copy, "rb") as handle:
        os.fsync(handle.fileno())
    return counted


@contextmanager
def scratch(copy: Path) -> Iterator[Path]:
    """A directory for the files big tables are copied through, removed after: beside the copy
    (``<copy>.parts``, which a killed compaction's successor removes with the copy, ``discard``),
    or, where that path could not be written into a statement as it is, a temporary directory."""
    where = str(copy.resolve())
    if "'" in where or "\\" in where:
        with tempfile.TemporaryDirectory(prefix="gaf-compacting-") as elsewhere:
            yield Path(elsewhere)
        return
    beside = copy.with_name(copy.name + ".parts")
    beside.mkdir(mode=0o700)
    try:
        yield beside.resolve()
    finally:
        shutil.rmtree(beside, ignore_errors=True)


def discard(copy: Path) -> None:
    """Remove a compacted copy and anything LadybugDB or the copying kept beside it."""
    for path in (copy, *copy.parent.glob(copy.name + ".*")):
        if path.is_dir():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)


def put_in_place(copy: Path, target: Path) -> None:
    """Replace the store's file by its compacted copy in one rename (a reader opens the one or the
    other, whole), and make the rename itself durable."""
    os.replace(copy, target)
    directory = os.open(target.parent, os.O_RDONLY)
    try:
        os.fsync(directory)
    finally:
        os.close(directory)


def worth_compacting(conn: ladybug.Connection, size: int) -> bool:
    """Whether a file of ``size`` bytes is worth compacting when its writer closes it: big enough
    to matter, small enough to copy in a moment, and mostly not its records and their index
    (LadybugDB's own account of its pages, ``disk_size_info``)."""
    if not AUTO_COMPACT_FROM <= size <= AUTO_COMPACT_UNTIL:
        return False
    rows = _rows(conn, "CALL disk_size_info() RETURN category, CAST(sum(size_bytes) AS INT64) AS bytes")
    needed = sum(int(row["bytes"]) for row in rows if row["category"] in ("node_table", "index"))
    return size > AUTO_COMPACT_RATIO * needed
