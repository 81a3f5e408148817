"""The embedded default store: LadybugDB, one database on disk, no server.

A new user runs gaf with nothing installed but Python. LadybugDB speaks Cypher,
so the queries are the same as on Neo4j except where its dialect differs (one
label per node, ``label(r)`` for a relationship's type). Its schema is declared
up front from the record classes. One process may write at a time: a second
writer is refused by the database's file lock, and gaf says so. A reader that finds
the checkpoint of a killed writer pending completes it before it reads.
"""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any, TypeVar, cast

import ladybug

from gaf.errors import InvalidQuery, ReadOnlyViolation, StoreError, StoreLocked, StoreUnavailable
from gaf.store.base import BULK_BATCH, Compacted, GafStore, Tx, WriteReport
from gaf.store.ladybug_compact import column_of, copy_path, discard, export, put_in_place, rows_of, scratch, without_key_index, worth_compacting, write_copy
from gaf.store.schema import SCHEMA_VERSION, graph_schema

T = TypeVar("T")


class _LadybugTx:
    def __init__(self, conn: ladybug.Connection):
        self._conn = conn

    def run(self, cypher: str, params: dict[str, Any] | None = None) -> list[dict[str, Any]]:
        return rows_of(self._execute(cypher, params), cypher)

    def column(self, cypher: str) -> list[Any]:
        """The first column's values, read from the result one at a time (no row lists)."""
        return column_of(self._execute(cypher, None), cypher)

    def _execute(self, cypher: str, params: dict[str, Any] | None) -> ladybug.QueryResult | list[ladybug.QueryResult]:
        try:
            return self._conn.execute(cypher, params or {})
        except RuntimeError as exc:
            raise _refused(exc, " ".join(cypher.split())[:120]) from None


#: How LadybugDB begins a refusal that is the query text's fault (it did not parse, or names
#: what does not exist), not the store's.
QUERY_FAULTS = ("Parser exception", "Binder exception", "Catalog exception")


def _refused(exc: RuntimeError, where: str) -> StoreError | InvalidQuery:
    """LadybugDB's refusal as gaf's error: one that says so when its page cache was too small."""
    if "buffer pool is full" in str(exc):
        return StoreUnavailable(f"the embedded store ran out of page cache: {exc}", where=where,
                                hint="raise GAF_CACHE_MB, or unset it for LadybugDB's default")  # fmt: skip
    if str(exc).startswith(QUERY_FAULTS):
        return InvalidQuery(f"LadybugDB refused the query: {exc}", where=where,
                            hint="check the query's spelling against docs/queries.md")  # fmt: skip
    return StoreError(f"LadybugDB refused the query: {exc}", where=where)


#: How long a reader waits out a writer's checkpoint when GAF_LOCK_WAIT does not say.
CHECKPOINT_WAIT = 10.0
#: How LadybugDB refuses a read-only open in the middle of a writer's transaction or checkpoint:
#: while a checkpoint is pending, in the instant the write-ahead log is emptied, and while it is
#: half written (each seen beside a looping writer, tests/test_concurrency.py). A reader waits
#: them out; past the wait it says which it saw. A writer killed in its checkpoint leaves the
#: first behind for good (tests/test_crash_recovery.py): then no writer holds the store, and the
#: reader completes the recovery itself.
_MID_CHECKPOINT = (
    "checkpoint recovery is pending",
    "Reading past the end of the file",
    "the WAL file is corrupted",
    "Primary-key index contains an invalid local node offset",  # the index file read half rewritten
    "out of bounds for file with",  # a page list read before the file grew to hold it (CI, stop 37)
)

#: The stores this process has open for writing. A reader must not probe their lock: POSIX takes
#: a process's lock on a file away when it unlocks any descriptor of that file, so the probe
#: would leave our own writer unguarded.
_WRITING: set[Path] = set()


def _session_lock(target: Path) -> Path:
    """The file whose lock a writer holds for as long as it has the store open: LadybugDB's own
    lock on the database lapses while a writer closes and reopens it (``LadybugStore._reopen``,
    during a long load), and this one does not, so no other writer slips in between."""
    return target.with_name(target.name + ".writer")


def _take_session(target: Path, wait: float) -> IO[bytes]:
    """Take the writer's session lock (an exclusive ``flock``), waiting up to ``wait`` seconds
    for another writer to let go; the open file holds it until it is closed (or the process ends)."""
    path = _session_lock(target)
    handle = open(os.open(path, os.O_RDWR | os.O_CREAT, 0o600), "r+b")
    started = time.monotonic()
    while True:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return handle
        except OSError:
            if time.monotonic() - started >= wait:
                handle.close()
                raise StoreLocked(f"the embedded store at {target} is open for writing in another process",
                                  hint="LadybugDB allows one writing process; wait for it (GAF_LOCK_WAIT=seconds), or open read-only") from None  # fmt: skip
            time.sleep(0.02)


def _session_held(target: Path) -> bool:
    """Whether some writer holds the store's session lock (probed, not kept)."""
    try:
        with open(_session_lock(target), "rb") as probe:
            try:
                fcntl.flock(probe, fcntl.LOCK_SH | fcntl.LOCK_NB)
            except OSError:
                return True
            fcntl.flock(probe, fcntl.LOCK_UN)
            return False
    except FileNotFoundError:
        return False
    except OSError:
        return True  # unreadable, so nothing can be told of it: wait, as for a writer


def _writer_holds(target: Path) -> bool:
    """Whether a writer has the store open: one in this process, or another process, whose
    session lock is held, or whose write lock on the database file (LadybugDB's, a POSIX record
    lock) refuses a shared lock taken and given back at once — the probes write nothing and hold
    nothing."""
    if target.resolve() in _WRITING or _session_held(target):
        return True
    try:
        fd = os.open(target, os.O_RDONLY)
    except OSError:
        return True  # unreadable, so nothing can be told of it: wait, as for a writer
    try:
        fcntl.lockf(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError:
        return True
    else:
        fcntl.lockf(fd, fcntl.LOCK_UN)
        return False
    finally:
        os.close(fd)


def _recover(target: Path, cache_mb: int | None) -> bool:
    """Complete the checkpoint a killed writer left pending, the one way LadybugDB allows: open
    the store for writing (which replays its write-ahead log and finishes the checkpoint) and
    close it. Only transactions that committed are in the log, so nothing is lost or added.
    False when a writer took the lock first: the reader then waits for it as for any writer."""
    try:
        session = _take_session(target, 0.0)
    except StoreLocked:
        return False  # a writer is between closing and reopening the store: it completes the checkpoint
    try:
        ladybug.Database(str(target), read_only=False, buffer_pool_size=(cache_mb or 0) * 2**20).close()
    except RuntimeError as exc:
        if "lock" in str(exc).lower():
            return False
        raise StoreUnavailable(f"cannot complete the recovery a killed writer left pending in the embedded store at {target}: {exc}",
                               hint="copy the store's directory aside before anything else opens it, and report the message") from None  # fmt: skip
    finally:
        session.close()
    return True


def _open_database(target: Path, read_only: bool, wait: float | None, cache_mb: int | None = None) -> tuple[ladybug.Database, bool]:
    """Open the database file, and say whether a recovery had to be completed first.

    A writer waits up to ``wait`` seconds for another writer to let go (none when not given). A
    reader waits up to ``wait`` — ``CHECKPOINT_WAIT`` when not given — for a writer's checkpoint:
    LadybugDB refuses a read-only open while one is pending. When no writer holds the store, the
    checkpoint is not coming: its writer was killed, and every reader would be refused until
    something opened the store for writing. So the reader looks once more (a writer that let go
    just now has finished its checkpoint) and then completes the recovery itself."""
    started = time.monotonic()
    limit = (CHECKPOINT_WAIT if wait is None else wait) if read_only else (wait or 0.0)
    recovered = second_look = False
    while True:
        try:
            return ladybug.Database(str(target), read_only=read_only, buffer_pool_size=(cache_mb or 0) * 2**20), recovered
        except RuntimeError as exc:
            message = str(exc)
        waited = time.monotonic() - started
        if read_only and any(sign in message for sign in _MID_CHECKPOINT):
            if not recovered and waited < limit and not _writer_holds(target):
                if second_look:
                    recovered = _recover(target, cache_mb)
                second_look = not second_look
                continue
            second_look = False
            if waited >= limit:
                raise StoreLocked(
                    f"the embedded store at {target} is being written by another process, which is checkpointing: {message}",
                    hint="a reader waits for the writer's checkpoint, and completes it itself once no process writes; "
                    "wait longer with GAF_LOCK_WAIT=seconds",
                )
        elif "lock" in message.lower():
            if waited >= limit:
                raise StoreLocked(
                    f"the embedded store at {target} is open for writing in another process",
                    hint="LadybugDB allows one writing process; wait for it (GAF_LOCK_WAIT=seconds), or open read-only",
                )
        else:
            raise StoreUnavailable(f"cannot open the embedded store at {target}: {message}")
        time.sleep(0.02)


# ---------------------------------------------------------------------- bulk loads under a capped page cache
# What a bulk load costs LadybugDB 0.22 in its buffer pool, found by loading claims under a small
# cap (docs/benchmarks.md, "Ingest memory"):
# - a write transaction holds what it writes in the pool until it commits, so a batch must fit;
# - one opening of the database keeps in the pool every page of primary-key strings it wrote
#   (the key index's page cache, emptied only when the database is closed), so a long load
#   fills any pool unless the database is closed and opened again from time to time;
# - a checkpoint rewrites the newest node group (131,072 rows) of each table it appends to,
#   whole, so the pool must also hold the largest such group's text: that part grows with the
#   ledger until a group fills, and no batch size or reopening bounds it.

#: Records (claims; their propositions come besides) one bulk transaction holds per MiB of a
#: capped page cache: 512 at the 64 MiB floor, where 2,000 ran out on the second batch.
BULK_RECORDS_PER_MB = 8
#: Records (implied ones counted) one opening of the database writes in a bulk load, per MiB of
#: page cache, before it is checkpointed, closed and opened again; for an uncapped cache
#: (LadybugDB's default, most of the machine's memory) as for ``UNCAPPED_MB``.
SESSION_RECORDS_PER_MB = 32
UNCAPPED_MB = 1024
#: Records a reader of whole kinds looks up by id in one opening of the database, and before it
#: starts on a kind (``_reading``): a 1M-record store's read ran a 128 MiB pool out when it reopened
#: every 100,000 lookups only, and read to its end when it also reopened before each kind.
LOOKUPS_PER_OPENING = 50_000
LOOKUPS_BEFORE_A_KIND = 10_000


class LadybugStore(GafStore):
    """A gaf store in an embedded LadybugDB database at ``path``."""

    dialect = "ladybug"
    #: whether closing the store for writing compacts a file that is mostly not its records
    auto_compact: bool = True
    #: what the compaction at closing did, if it did one
    compacted: Compacted | None = None
    #: why the compaction at closing was refused, if it was (the store is left as it was)
    compaction_refused: str | None = None

    def __init__(self, path: str | Path, *, read_only: bool = False, wait: float | None = None, cache_mb: int | None = None):
        """Open (or create) the store at ``path``; ``wait`` is how many seconds to wait for another
        process's write lock, or a reader for a writer's checkpoint (GAF_LOCK_WAIT, through
        gaf.settings; not given: no wait for the lock, ``CHECKPOINT_WAIT`` for the checkpoint);
        ``cache_mb`` bounds LadybugDB's buffer pool (GAF_CACHE_MB; not given: LadybugDB's
        default, which grows with the pages read up to most of the machine's memory)."""
        self.location = str(path)
        self.read_only = read_only
        self.cache_mb = cache_mb
        self._wait = wait
        self._written_since_open = 0
        self._looked_up = 0  # records a reader looked up by id since it opened the database (``_reading``)
        self._closed = False
        target = Path(path)
        new = not target.exists()
        if not read_only:
            # A store holds evidence about people: the directories gaf makes for it, and the
            # database file it creates, are its owner's alone (whatever the umask says).
            target.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        elif new:
            raise StoreUnavailable(f"no gaf store at {target}", hint="run `gaf init` to create one, or check --store and GAF_STORE")
        self._session = None if read_only else _take_session(target, wait or 0.0)
        if self._session is not None:
            discard(target.with_name(target.name + ".compacting"))  # left by a compaction that was killed
        try:
            self._db, self.recovered = _open_database(target, read_only, wait, cache_mb)
        except BaseException:
            if self._session is not None:
                self._session.close()
            raise
        if new and target.is_file():
            target.chmod(0o600)
        if not read_only:
            _WRITING.add(target.resolve())
        self._conn = ladybug.Connection(self._db)
        if not read_only:
            try:
                self.init()
            except RuntimeError as exc:
                self._release()
                raise _refused(exc, f"declaring the schema of {target}") from None

    def bulk_batch(self, asked: int | None = None) -> int:
        """``asked``, else ``BULK_BATCH`` — with a capped page cache, no more than it holds
        (``BULK_RECORDS_PER_MB`` a MiB): a transaction lives in the pool until it commits."""
        if asked:
            return asked
        return BULK_BATCH if self.cache_mb is None else min(BULK_BATCH, self.cache_mb * BULK_RECORDS_PER_MB)

    def _after_bulk_batch(self, records: int) -> None:
        """Once this opening of the database has written its share (``SESSION_RECORDS_PER_MB``
        a MiB of page cache), checkpoint it, close it and open it again: LadybugDB keeps every
        primary-key page one opening wrote in the pool, and only closing lets them go."""
        self._written_since_open += records
        if self._written_since_open >= (self.cache_mb or UNCAPPED_MB) * SESSION_RECORDS_PER_MB:
            self._reopen()

    def _reopen(self, between: Callable[[], None] | None = None) -> None:
        """Checkpoint, close and open the database again, as the same writer; ``between`` runs
        while it is closed (a compaction puts its copy in place then). The checkpoint is asked
        for by name, so a cache too small for it is refused here, typed, and not left to the
        close, which would drop the failure and leave the write-ahead log to grow."""
        try:
            self._conn.execute("CHECKPOINT")
        except RuntimeError as exc:
            raise _refused(exc, f"checkpointing {self.location}") from None
        self._conn.close()
        self._db.close()
        try:
            if between is not None:
                between()
        finally:
            # Another writer may take LadybugDB's lock in the instant between: then it is waited
            # for, as at opening (the session lock, held throughout, keeps other gaf writers out).
            self._open_again()
            self._written_since_open = 0

    def _open_again(self) -> None:
        """Open the database this store had open (and closed), as before: for writing or read-only."""
        self._db, _ = _open_database(Path(self.location), self.read_only, self._wait, self.cache_mb)
        self._conn = ladybug.Connection(self._db)

    def _reading(self, records: int) -> None:
        """A reader closes the database and opens it again (some 50 ms) once it has looked up
        ``LOOKUPS_PER_OPENING`` records by id, and before a kind once it has looked up
        ``LOOKUPS_BEFORE_A_KIND``: LadybugDB keeps in its buffer pool every page of a key index
        that a lookup read, for as long as the database is open, and reading a whole 1M-record
        store by id ran a 128 MiB pool out that way — at the start of a kind, where the pool must
        also hold the ordering of its ids. A writer keeps its opening: it lets go after its own
        bulk batches (``_after_bulk_batch``)."""
        if not self.read_only:
            return
        limit = LOOKUPS_PER_OPENING if records else LOOKUPS_BEFORE_A_KIND
        if self._looked_up + records > limit:
            self._conn.close()
            self._db.close()
            self._open_again()
            self._looked_up = 0
        self._looked_up += records

    def _column(self, cypher: str, name: str) -> list[Any]:
        """The statement's one column (``name``), a value at a time (``column_of``)."""
        return self._read(lambda tx: cast(_LadybugTx, tx).column(cypher))

    def compact(self) -> Compacted:
        """Copy what the store's file holds into a new file and put that in its place
        (gaf.store.ladybug_compact says why a file outgrows its records): every record, id and
        relationship the same, the bytes on disk fewer. The old file stays until the copy is
        whole, counted and on disk; a reader opens the one or the other. Writers only."""
        if self.read_only:
            raise ReadOnlyViolation(f"the embedded store at {self.location} is open read-only; compacting writes a new file",
                                    hint="open it for writing (a command that writes, or read_only=False)")  # fmt: skip
        started = time.perf_counter()
        target = Path(self.location)
        try:
            self._conn.execute("CHECKPOINT")
        except RuntimeError as exc:
            raise _refused(exc, f"checkpointing {self.location}") from None
        before = target.stat().st_size
        copy = copy_path(target)
        discard(copy)  # a copy left by a compaction that was killed
        counted: list[int] = []

        def write_and_put_in_place() -> None:  # while the store is closed: one database open at a time
            counted.extend(write_copy(copy, exported, cache_mb=self.cache_mb))
            put_in_place(copy, target)

        try:
            with scratch(copy) as folder:
                exported = export(self._conn, folder)
                self._reopen(between=write_and_put_in_place)
        except RuntimeError as exc:
            raise _refused(exc, f"compacting {self.location}") from None
        nodes, relationships = counted
        return Compacted(self.location, before, target.stat().st_size, nodes, relationships, time.perf_counter() - started)

    def close(self) -> None:
        """Close the store; a writer first compacts a file that is mostly not its records
        (``ladybug_compact.worth_compacting``), and keeps what that did in ``compacted``."""
        if self._closed:
            return
        if not self.read_only and self.auto_compact:
            try:
                self._conn.execute("CHECKPOINT")  # what closing would write, written before the file is measured
            except RuntimeError:
                self._release()  # refused, as closing would be: nothing to compact, the log replays at the next opening
                return
            try:
                if worth_compacting(self._conn, Path(self.location).stat().st_size):
                    self.compacted = self.compact()
            except (StoreError, RuntimeError) as exc:
                # Compacting only gives back space: refused (a page cache too small for the copy,
                # GAF_CACHE_MB), the store stays as it was, whole, and the refusal is kept.
                self.compaction_refused = str(exc)
            except BaseException:
                self._release()
                raise
        self._release()

    def _release(self) -> None:
        self._closed = True
        self._conn.close()
        self._db.close()
        if not self.read_only:
            _WRITING.discard(Path(self.location).resolve())
        if self._session is not None:
            self._session.close()  # the session lock goes last: the database is closed by now
            self._session = None

    def init(self) -> None:
        """Declare node and relationship tables (schema is mandatory in LadybugDB)."""
        schema = graph_schema()
        for label, columns in sorted(schema.nodes.items()):
            cols = "".join(f", {name} {kind}" for name, kind in columns.items())
            with without_key_index(self._conn, label in schema.few):
                self._conn.execute(f"CREATE NODE TABLE IF NOT EXISTS {label}(id STRING PRIMARY KEY, kind STRING, body STRING, written_at STRING{cols})")
            self._add_missing_columns(label, {"written_at": "STRING", **columns})
        current = self.stamped_version() == SCHEMA_VERSION  # a store at this version has every pair already
        for rel, pairs in schema.rels.items():
            ends = ", ".join(f"FROM {a} TO {b}" for a, b in pairs)
            self._conn.execute(f"CREATE REL TABLE IF NOT EXISTS `{rel}`({ends})")
            if not current:
                self._add_missing_pairs(rel, pairs)
        self._stamp_if_new()

    def _add_missing_pairs(self, rel: str, pairs: list[tuple[str, str]]) -> None:
        """Let a relationship an older gaf declared join the label pairs a newer one adds (a reopen
        triggered by a run invalidation, schema version 6): pairs are only ever added."""
        query = f"CALL show_connection('{rel}') RETURN *"
        present = {(row["source table name"], row["destination table name"]) for row in rows_of(self._conn.execute(query), query)}
        for a, b in pairs:
            if (a, b) not in present:
                self._conn.execute(f"ALTER TABLE `{rel}` ADD IF NOT EXISTS FROM {a} TO {b}")

    def _add_missing_columns(self, label: str, columns: dict[str, str]) -> None:
        """Bring a store made by an older gaf up to the current schema (columns only ever added)."""
        query = f"CALL table_info('{label}') RETURN name"
        present = {row["name"] for row in rows_of(self._conn.execute(query), query)}
        for name, kind in columns.items():
            if name not in present:
                self._conn.execute(f"ALTER TABLE {label} ADD {name} {kind}")

    def _write(self, work: Callable[[Tx], WriteReport]) -> WriteReport:
        return self._in_transaction("BEGIN TRANSACTION", work)

    def _read(self, work: Callable[[Tx], T]) -> T:
        return self._in_transaction("BEGIN TRANSACTION READ ONLY", work)

    def _in_transaction(self, begin: str, work: Callable[[Tx], T]) -> T:
        self._conn.execute(begin)
        try:
            out = work(_LadybugTx(self._conn))
        except BaseException:
            try:
                self._conn.execute("ROLLBACK")
            except RuntimeError:
                pass  # LadybugDB already rolled back the transaction a failed statement was in
            raise
        try:
            self._conn.execute("COMMIT")
        except RuntimeError as exc:
            raise _refused(exc, "COMMIT") from None
        return out
