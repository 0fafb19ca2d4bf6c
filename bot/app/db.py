"""prguide's SQLite database: opening it and migrating each component's tables.

One database file holds the tables of several components (the job queue, the tag
view). Each component owns its tables and a list of migrations; the
``schema_versions(component, version)`` table remembers how far each list has been
applied, so components evolve independently. ``PRAGMA user_version`` records the
layout of this bookkeeping itself (:data:`LAYOUT_VERSION`).

Durability: WAL with ``synchronous=NORMAL``. A committed transaction survives a
crash of prguide; after a power loss or OS crash the last few commits may be lost.
Pass ``synchronous="FULL"`` to :func:`open_database` to also survive those, at the
cost of an fsync per commit.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

#: Environment variable naming the database file; ``:memory:`` gives a private in-memory database.
DB_ENV = "PRGUIDE_DB"
#: Database file used when ``PRGUIDE_DB`` is unset (relative to the working directory).
DEFAULT_DB = "prguide.db"
#: ``PRAGMA user_version`` of a database whose components are tracked in ``schema_versions``.
LAYOUT_VERSION = 1
#: How long a statement waits for another connection's write lock before failing (ms).
BUSY_TIMEOUT_MS = 5000

#: Seconds between two background WAL checkpoints (see :class:`Checkpointer`).
CHECKPOINT_INTERVAL = 0.2
#: Bytes a WAL file is cut back to when SQLite starts it over. While commits never stop,
#: passive checkpoints cannot start the log over and it grows (about 38 KB per 25 KB
#: delivery); the first commit after the burst starts it over and cuts it back.
WAL_SIZE_LIMIT = 64 * 1024 * 1024
#: SQLite's own default ``wal_autocheckpoint`` (pages), given back by :meth:`Checkpointer.stop`.
SQLITE_AUTOCHECKPOINT = 1000

_SYNCHRONOUS = ("OFF", "NORMAL", "FULL", "EXTRA")

log = logging.getLogger(__name__)


class DatabaseError(RuntimeError):
    """The database cannot be used by this version of prguide (raised by :func:`migrate`)."""


def database_path(environ: Mapping[str, str] | None = None) -> str:
    """Return the database path: ``$PRGUIDE_DB`` if set and non-empty, else :data:`DEFAULT_DB`."""
    env = os.environ if environ is None else environ
    return env.get(DB_ENV) or DEFAULT_DB


def open_database(path: str | os.PathLike[str] | None = None, *, synchronous: str = "NORMAL") -> sqlite3.Connection:
    """Open (creating if needed) the database at ``path`` (default :func:`database_path`).

    The connection is in autocommit mode (``isolation_level=None``): every statement
    commits on its own unless the caller runs ``BEGIN``. It may be used from other
    threads (``check_same_thread=False``) as long as the caller serialises its use.
    Rows come back as :class:`sqlite3.Row`. File databases use WAL journaling;
    ``:memory:`` keeps its in-memory journal.

    Raises ``ValueError`` for an unknown ``synchronous`` level and ``sqlite3.Error``
    when the file cannot be opened (missing permissions, not a database).
    """
    level = synchronous.upper()
    if level not in _SYNCHRONOUS:
        raise ValueError(f"synchronous must be one of {', '.join(_SYNCHRONOUS)}, not {synchronous!r}")
    target = os.fspath(path) if path is not None else database_path()
    if target != ":memory:" and not target.startswith("file:"):
        Path(target).parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(
        target,
        isolation_level=None,
        check_same_thread=False,
        timeout=BUSY_TIMEOUT_MS / 1000,
        uri=target.startswith("file:"),
    )
    try:
        conn.row_factory = sqlite3.Row
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        # Reading journal_mode forces SQLite to read the header, so a file that is not
        # a database fails here rather than on first use.
        conn.execute("PRAGMA journal_mode = WAL").fetchone()
        conn.execute(f"PRAGMA synchronous = {level}")
        conn.execute("PRAGMA foreign_keys = ON")
    except BaseException:
        conn.close()
        raise
    return conn


def split_statements(script: str) -> Iterator[str]:
    """Yield the complete SQL statements of ``script`` one by one.

    Uses :func:`sqlite3.complete_statement`, so semicolons inside strings and
    ``CREATE TRIGGER ... BEGIN ...; END`` bodies stay inside their statement.
    """
    buffer = ""
    parts = script.split(";")
    for i, part in enumerate(parts):
        buffer += part
        if i < len(parts) - 1:
            buffer += ";"
        if sqlite3.complete_statement(buffer):
            if buffer.strip(" \t\r\n;"):
                yield buffer.strip()
            buffer = ""
    if buffer.strip():
        yield buffer.strip()


def schema_version(conn: sqlite3.Connection, component: str) -> int:
    """Return how many of ``component``'s migrations the database has applied (0 if none)."""
    exists = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_versions'"
    ).fetchone()
    if not exists:
        return 0
    row = conn.execute("SELECT version FROM schema_versions WHERE component = ?", (component,)).fetchone()
    return int(row[0]) if row else 0


def migrate(conn: sqlite3.Connection, component: str, migrations: Sequence[str]) -> int:
    """Apply ``component``'s migrations the database has not seen yet; return its version.

    ``migrations[i]`` is the SQL script taking the component from version ``i`` to
    ``i + 1``; append new scripts, never edit applied ones. Each script runs in its own
    transaction together with the version bump, so a failing script leaves the
    database at the previous version. ``BEGIN IMMEDIATE`` serialises processes that
    migrate the same file at once. Calling it again is a no-op.

    Raises ``ValueError`` for an empty component name, :class:`DatabaseError` when the
    database is newer than this code (more versions applied than ``migrations`` has,
    or an unknown ``user_version`` layout) or when a script fails (the SQLite error
    is chained).
    """
    if not component:
        raise ValueError("component name must not be empty")
    if conn.in_transaction:
        raise DatabaseError("migrate() needs a connection without an open transaction")
    target = len(migrations)
    conn.execute("BEGIN IMMEDIATE")
    try:
        layout = conn.execute("PRAGMA user_version").fetchone()[0]
        if layout > LAYOUT_VERSION:
            raise DatabaseError(
                f"database layout {layout} is newer than this prguide understands ({LAYOUT_VERSION}); upgrade prguide"
            )
        if layout < LAYOUT_VERSION:
            conn.execute(
                "CREATE TABLE IF NOT EXISTS schema_versions ("
                " component TEXT PRIMARY KEY, version INTEGER NOT NULL)"
            )
            conn.execute(f"PRAGMA user_version = {LAYOUT_VERSION}")
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    while True:
        conn.execute("BEGIN IMMEDIATE")
        try:
            # Re-read inside the write lock: another process may have just migrated.
            version = schema_version(conn, component)
            if version > target:
                raise DatabaseError(
                    f"{component!r} tables are at version {version} but this prguide knows only "
                    f"{target} migrations; upgrade prguide"
                )
            if version == target:
                conn.execute("COMMIT")
                return version
            try:
                for statement in split_statements(migrations[version]):
                    conn.execute(statement)
            except sqlite3.Error as exc:
                raise DatabaseError(f"migration {version + 1} of {component!r} failed: {exc}") from exc
            conn.execute(
                "INSERT INTO schema_versions (component, version) VALUES (?, ?)"
                " ON CONFLICT (component) DO UPDATE SET version = excluded.version",
                (component, version + 1),
            )
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise


def database_file(conn: sqlite3.Connection) -> str:
    """The file behind ``conn``'s main database (``""`` for an in-memory database)."""
    for row in conn.execute("PRAGMA database_list").fetchall():
        if row[1] == "main":
            return str(row[2] or "")
    return ""  # pragma: no cover - every connection has a main database


class Checkpointer:
    """Copies a database's WAL back into the file from a thread of its own.

    SQLite checkpoints automatically inside whichever commit pushes the WAL past
    1,000 pages, and with ``synchronous=NORMAL`` that checkpoint ends in an fsync. On
    the event loop, where the webhook commits each delivery, that stalled every
    request behind it for milliseconds (measured: enqueue p99 7.5 ms, 0.3 ms with the
    checkpoints moved here). :meth:`adopt` turns the automatic checkpoint off for a
    connection; the thread, with a connection of its own, runs a ``PASSIVE``
    checkpoint (which neither waits for nor blocks writers, "Write-Ahead Logging",
    sqlite.org) every ``interval`` seconds. SQLite releases the GIL while it works.

    In-memory databases have no WAL: :meth:`start` returns ``False`` and nothing runs.
    """

    def __init__(self, path: str | os.PathLike[str], *, interval: float = CHECKPOINT_INTERVAL):
        """``path``: the database file (``:memory:`` allowed); ``interval``: seconds between checkpoints."""
        self.path = os.fspath(path)
        self.interval = interval
        self._adopted: list[sqlite3.Connection] = []
        self._conn: sqlite3.Connection | None = None
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()

    def adopt(self, conn: sqlite3.Connection) -> bool:
        """Stop ``conn`` checkpointing in its own commits; returns ``False`` (leaving it
        alone) when the checkpointer is not running or ``conn`` is not on its file.

        Call after :meth:`start`, while no other thread uses ``conn``.
        """
        if self._conn is None or not _same_file(database_file(conn), database_file(self._conn)):
            return False
        conn.execute("PRAGMA wal_autocheckpoint = 0")
        # The writer that starts the log over cuts the file back to this size.
        conn.execute(f"PRAGMA journal_size_limit = {WAL_SIZE_LIMIT}")
        self._adopted.append(conn)
        return True

    def start(self) -> bool:
        """Start the checkpoint thread; returns ``False`` for an in-memory database.

        Raises ``sqlite3.Error`` when the file cannot be opened.
        """
        if self._thread is not None:
            raise RuntimeError("the checkpointer is already running")
        conn = open_database(self.path)
        if not database_file(conn):
            conn.close()
            return False
        self._conn = conn
        self._stop.clear()
        self._thread = threading.Thread(target=self._loop, name="prguide-checkpoint", daemon=True)
        self._thread.start()
        return True

    def checkpoint(self) -> tuple[int, int, int]:
        """Run one ``PASSIVE`` checkpoint now; returns SQLite's ``(busy, wal_frames, checkpointed_frames)``.

        Raises ``RuntimeError`` when not started and ``sqlite3.Error`` when SQLite fails.
        """
        if self._conn is None:
            raise RuntimeError("the checkpointer is not running")
        busy, frames, done = self._conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
        return int(busy), int(frames), int(done)

    def stop(self) -> None:
        """Stop the thread after a last checkpoint and give adopted connections SQLite's
        automatic checkpoint back (they may outlive this object). Safe to call twice."""
        for conn in self._adopted:
            try:
                conn.execute(f"PRAGMA wal_autocheckpoint = {SQLITE_AUTOCHECKPOINT}")
            except sqlite3.ProgrammingError:
                pass  # already closed: nothing to give back
        self._adopted.clear()
        if self._thread is None:
            return
        self._stop.set()
        self._thread.join()
        self._thread = None
        assert self._conn is not None
        try:
            self.checkpoint()
        except sqlite3.Error:
            log.exception("last WAL checkpoint of %s failed; SQLite redoes it on the next open", self.path)
        self._conn.close()
        self._conn = None

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            try:
                self.checkpoint()
            except sqlite3.Error:
                # The WAL only grows meanwhile; the next round tries again.
                log.exception("WAL checkpoint of %s failed", self.path)


def _same_file(a: str, b: str) -> bool:
    if not a or not b:
        return False
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False
