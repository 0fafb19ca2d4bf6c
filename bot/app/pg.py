"""prguide on PostgreSQL: the connection pool, the schema, and versioned migrations.

With ``PRGUIDE_DATABASE_URL=postgresql://...`` several prguide processes share one
database. This module owns what they share at the connection level:

- :class:`Database`: a bounded :class:`psycopg_pool.ConnectionPool` (``min_size`` to
  ``max_size`` connections; a caller waits at most ``timeout`` seconds for one, then
  gets :class:`psycopg_pool.PoolTimeout`, a ``psycopg.OperationalError``) whose
  connections all use one schema (``search_path``), so tests and installations can
  keep to a schema of their own.
- Migrations: each component (``"jobs"``, ``"state"``, ``"tagview"``) registers an
  ordered list of SQL scripts with :func:`register_migrations`; :func:`migrate`
  applies the ones a schema has not seen, recording them in
  ``schema_migrations(component, version, applied_at)``. One process migrates at a
  time: it holds a session advisory lock (``pg_advisory_lock``) keyed on the schema,
  and the others wait on it, then find nothing left to do.

Errors are psycopg's (``psycopg.Error``): :func:`bot.app.errors.database_errors` gives
what callers catch to answer 503.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import select
import zlib
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, unquote, urlsplit

from bot.app.db import DatabaseError

if TYPE_CHECKING:
    import psycopg
    from psycopg_pool import ConnectionPool

# psycopg and its pool are imported where they are used: this module is imported on
# SQLite too (components register their migrations at import), where the driver would
# only cost memory (~10 MiB) and start-up time.

log = logging.getLogger(__name__)

#: Schema used when neither the settings nor the URL's ``search_path`` name one.
DEFAULT_SCHEMA = "public"
#: First key of the two-key advisory lock migrations hold (the second is the schema's CRC).
MIGRATION_LOCK = 0x70726775  # "prgu"
#: Seconds a new connection may take before the attempt fails.
CONNECT_TIMEOUT = 5

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,62}")

#: component -> its migration scripts, in order (see :func:`register_migrations`).
MIGRATIONS: dict[str, tuple[str, ...]] = {}


def register_migrations(component: str, scripts: Sequence[str]) -> None:
    """Declare ``component``'s migrations: ``scripts[i]`` takes its tables from version ``i`` to ``i + 1``.

    Append new scripts, never edit applied ones. Registering the same component again
    replaces its list (modules may be reloaded). Raises ``ValueError`` for a component
    name that is not a plain identifier.
    """
    if not _IDENTIFIER.fullmatch(component):
        raise ValueError(f"component name must be a plain identifier, not {component!r}")
    MIGRATIONS[component] = tuple(scripts)


def is_postgresql_url(url: str | None) -> bool:
    """True for a ``postgresql://`` or ``postgres://`` URL."""
    return bool(url) and urlsplit(url).scheme in ("postgresql", "postgres")


def url_schema(url: str) -> str | None:
    """The first schema of a ``search_path`` the URL sets with ``?options=-csearch_path=...``, or None."""
    for options in parse_qs(urlsplit(url).query).get("options", []):
        match = re.search(r"-c\s*search_path\s*=\s*([^\s,]+)", unquote(options))
        if match:
            return match.group(1).strip('"')
    return None


def redact(url: str) -> str:
    """``url`` without its password, for messages and logs."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@")
    return parts._replace(netloc=netloc).geturl()


@dataclass
class Database:
    """One process's handle on prguide's PostgreSQL schema: a bounded pool and the schema name.

    Build it with :func:`connect`. :meth:`connection` lends a pooled connection (in a
    transaction committed when the ``with`` block ends without error); :meth:`autocommit`
    lends one on which each statement commits by itself (one round trip, no ``BEGIN``
    and ``COMMIT``); :meth:`connect` opens a connection outside the pool (for ``LISTEN``
    and advisory locks held for long). Close with :meth:`close`.
    """

    url: str
    schema: str
    pool: ConnectionPool
    timeout: float
    _closed: bool = field(default=False, repr=False)

    @contextlib.contextmanager
    def connection(self) -> Iterator[psycopg.Connection]:
        """``with db.connection() as conn:`` a pooled connection, waiting at most :attr:`timeout` seconds for one.

        Raises :class:`psycopg_pool.PoolTimeout` when none frees up in time.
        """
        with self.pool.connection(timeout=self.timeout) as conn, _drop_if_unprepared(conn):
            yield conn

    @contextlib.contextmanager
    def autocommit(self) -> Iterator[psycopg.Connection]:
        """``with db.autocommit() as conn:`` a pooled connection in autocommit mode.

        For work that is one statement (or statements that need not commit together):
        each is its own transaction, atomic as any statement is, and costs one round trip
        where :meth:`connection` adds a ``BEGIN`` and a ``COMMIT``. A pipeline
        (``conn.pipeline()``) with ``conn.transaction()`` inside sends a whole transaction
        at once. Raises :class:`psycopg_pool.PoolTimeout` as :meth:`connection` does.
        """
        with self.pool.connection(timeout=self.timeout) as conn, _drop_if_unprepared(conn):
            conn.autocommit = True
            try:
                yield conn
            finally:
                # The pool lends connections in transaction mode, and does not reset the mode of
                # one given back: when it cannot be set back (a transaction left open), the
                # connection is closed (then replaced), or the next borrower's transaction
                # would commit statement by statement.
                try:
                    conn.autocommit = False
                except Exception:
                    with contextlib.suppress(Exception):
                        conn.close()

    def connect(self, *, autocommit: bool = True) -> psycopg.Connection:
        """A new connection of its own (not pooled), ``search_path`` set to :attr:`schema`."""
        import psycopg

        conn = psycopg.connect(self.url, autocommit=autocommit, connect_timeout=CONNECT_TIMEOUT)
        _use_schema(conn, self.schema)
        return conn

    def ping(self) -> None:
        """Run ``SELECT 1`` on a pooled connection; raises ``psycopg.Error`` when the database does not answer."""
        with self.connection() as conn:
            conn.execute("SELECT 1")

    def close(self) -> None:
        """Close the pool (waiting at most a few seconds for lent connections). Safe to call twice."""
        if not self._closed:
            self._closed = True
            self.pool.close(timeout=5.0)


@contextlib.contextmanager
def _drop_if_unprepared(conn: psycopg.Connection) -> Iterator[None]:
    """Close ``conn`` (the pool then replaces it) when the server forgot a statement psycopg prepared.

    Statements are prepared on their second run, and psycopg remembers which it prepared.
    A pooler's server reset (PgBouncer's ``DISCARD ALL``) or a pooler restart that hands
    the client another backend drops them behind psycopg's back: that statement then fails
    with ``InvalidSqlStatementName`` on every later run, and the connection itself looks
    healthy, so the pool would keep lending it. Likewise a migration that changes a
    column's type under a running replica: its prepared statement then fails with
    ``cached plan must not change result type`` on every run. The failing call still
    raises (a 503); the next one gets a fresh connection.
    """
    import psycopg

    try:
        yield
    # FeatureNotSupported (0A000) is matched whole, not by its message (which the server may
    # translate): prguide runs no statement that is otherwise unsupported, and a spare
    # reconnect costs little.
    except (psycopg.errors.InvalidSqlStatementName, psycopg.errors.FeatureNotSupported):
        with contextlib.suppress(Exception):
            conn.close()
        raise


def _use_schema(conn: psycopg.Connection, schema: str) -> None:
    from psycopg import sql

    autocommit = conn.autocommit
    conn.autocommit = True
    conn.execute(sql.SQL("SET search_path TO {}").format(sql.Identifier(schema)))
    conn.autocommit = autocommit


def check_lent(conn: psycopg.Connection) -> None:
    """The pool's check of a connection it is about to lend: raise when the server dropped it.

    An idle connection's socket has nothing to read unless the server sent something
    unasked: the notice it sends before ending the backend (``pg_terminate_backend``, a
    restart or shutdown) and the end of the stream after it. So the socket is polled
    (no round trip), and only a readable one gets psycopg's full check (an empty
    query), which reads what came and raises for a dropped connection.
    """
    from psycopg_pool import ConnectionPool

    if conn.closed:
        raise conn.OperationalError("the connection is closed")  # type: ignore[attr-defined]
    readable, _, _ = select.select([conn.fileno()], [], [], 0)
    if readable:
        ConnectionPool.check_connection(conn)


def connect(
    url: str,
    *,
    schema: str | None = None,
    min_size: int = 1,
    max_size: int = 10,
    timeout: float = 10.0,
    migrate_components: Iterable[str] | None = (),
    name: str = "prguide",
) -> Database:
    """Open a pool on ``url`` using ``schema`` (default: the URL's ``search_path``, else ``public``).

    ``min_size``/``max_size``: connections the pool keeps at least / opens at most;
    ``timeout``: seconds a caller waits for a connection (then ``PoolTimeout``).
    ``migrate_components``: components whose migrations to apply now (``None``: every
    registered one). ``name``: the pool's name and its connections' ``application_name``
    (what ``pg_stat_activity`` shows). Raises ``ValueError`` for a bad URL or schema name and
    ``psycopg.Error`` when the server cannot be reached within ``timeout`` seconds.
    """
    from psycopg_pool import ConnectionPool

    if not is_postgresql_url(url):
        raise ValueError(f"not a postgresql:// URL: {redact(url)!r}")
    chosen = schema or url_schema(url) or DEFAULT_SCHEMA
    if not _IDENTIFIER.fullmatch(chosen):
        raise ValueError(f"schema must be a plain identifier, not {chosen!r}")
    if migrate_components is None or list(migrate_components):
        # Before the pool: its connections set a search_path the migration may create.
        migrate(url, chosen, migrate_components)

    def configure(conn: psycopg.Connection) -> None:
        _use_schema(conn, chosen)
        # Claims, settlements and leases may be lost in a crash of the server: the job
        # then runs again, and its effects are idempotent. What must survive (a queued
        # delivery, answered 202) asks for a synchronous commit in its transaction.
        conn.autocommit = True
        conn.execute("SET synchronous_commit TO off")
        conn.autocommit = False

    pool = ConnectionPool(
        url,
        min_size=min_size,
        max_size=max_size,
        timeout=timeout,
        # Statements are prepared on their second run (psycopg's default: the sixth), so the
        # server parses each of prguide's few statements once per connection, not six times.
        kwargs={"connect_timeout": CONNECT_TIMEOUT, "application_name": name[:63], "prepare_threshold": 1},
        configure=configure,
        # A connection the server dropped (restart, pg_terminate_backend) is found and
        # replaced when it is lent, not when a query fails on it; a live one costs no
        # round trip to tell (see check_lent).
        check=check_lent,
        name=name,
        open=False,
    )
    try:
        pool.open(wait=True, timeout=timeout)
    except BaseException:
        pool.close(timeout=1.0)
        raise
    return Database(url=url, schema=chosen, pool=pool, timeout=timeout)


def migrate(url: str, schema: str, components: Iterable[str] | None = None) -> dict[str, int]:
    """Apply the missing migrations of ``components`` (default: all registered) in ``schema``.

    Creates the schema if needed. Holds ``pg_advisory_lock`` for the whole run, so when
    several replicas start at once one migrates and the others wait, then find every
    version applied. Each script runs in one transaction with its version record, so a
    failing script leaves the component at the previous version. Returns
    ``{component: version}``.

    Raises :class:`bot.app.db.DatabaseError` when a script fails (naming the component
    and version), when the schema is newer than this code, or for an unknown
    component; ``psycopg.Error`` when the server cannot be reached.
    """
    import psycopg
    from psycopg import sql

    names = sorted(MIGRATIONS) if components is None else list(components)
    unknown = [n for n in names if n not in MIGRATIONS]
    if unknown:
        raise DatabaseError(f"no migrations registered for {', '.join(unknown)}")
    lock = (MIGRATION_LOCK, zlib.crc32(schema.encode()) - 2**31)
    versions: dict[str, int] = {}
    with psycopg.connect(url, autocommit=True, connect_timeout=CONNECT_TIMEOUT) as conn:
        conn.execute("SELECT pg_advisory_lock(%s, %s)", lock)
        try:
            conn.execute(sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(sql.Identifier(schema)))
            _use_schema(conn, schema)
            conn.execute(
                "CREATE TABLE IF NOT EXISTS schema_migrations ("
                " component TEXT NOT NULL, version INTEGER NOT NULL,"
                " applied_at TIMESTAMPTZ NOT NULL DEFAULT now(), PRIMARY KEY (component, version))"
            )
            for name in names:
                versions[name] = _migrate_component(conn, name, MIGRATIONS[name])
        finally:
            conn.execute("SELECT pg_advisory_unlock(%s, %s)", lock)
    return versions


def _migrate_component(conn: psycopg.Connection, component: str, scripts: Sequence[str]) -> int:
    import psycopg

    row = conn.execute("SELECT max(version) FROM schema_migrations WHERE component = %s", (component,)).fetchone()
    version = int(row[0]) if row and row[0] is not None else 0
    if version > len(scripts):
        raise DatabaseError(
            f"{component!r} tables are at version {version} but this prguide knows only "
            f"{len(scripts)} migrations; upgrade prguide"
        )
    while version < len(scripts):
        try:
            with conn.transaction():
                conn.execute(scripts[version])
                conn.execute(
                    "INSERT INTO schema_migrations (component, version) VALUES (%s, %s)", (component, version + 1)
                )
        except psycopg.Error as exc:
            raise DatabaseError(f"migration {version + 1} of {component!r} failed: {exc}") from exc
        version += 1
        log.info("applied migration %d of %s", version, component)
    return version


def applied_versions(db: Database) -> dict[str, int]:
    """``{component: version}`` as recorded in the schema (empty before the first migration)."""
    with db.connection() as conn:
        exists = conn.execute("SELECT to_regclass('schema_migrations')").fetchone()[0]
        if exists is None:
            return {}
        rows = conn.execute("SELECT component, max(version) FROM schema_migrations GROUP BY component").fetchall()
    return {name: int(version) for name, version in rows}


def drop_schema(url: str, schema: str) -> None:
    """Drop ``schema`` and everything in it (tests clean up with this)."""
    import psycopg
    from psycopg import sql

    with psycopg.connect(url, autocommit=True, connect_timeout=CONNECT_TIMEOUT) as conn:
        conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))


def from_settings(settings: Any, *, migrate_components: Iterable[str] | None = None) -> Database:
    """:func:`connect` with a :class:`bot.app.settings.Settings`'s URL, schema and pool bounds.

    The connections' ``application_name`` is ``prguide:PID``, so ``pg_stat_activity``
    tells which replica holds a backend (and when a dead one's last commands are done).
    """
    return connect(
        settings.database_url,
        schema=settings.database_schema,
        # The least never exceeds a smaller most (the default least is 6).
        min_size=min(settings.db_pool_min, settings.db_pool_max),
        max_size=settings.db_pool_max,
        timeout=settings.db_pool_timeout,
        migrate_components=migrate_components,
        name=f"prguide:{os.getpid()}",
    )


def load_components() -> None:
    """Import the modules that register migrations, so :func:`migrate` knows every component."""
    import importlib

    for module in ("bot.app.pgjobs", "bot.app.shared_state", "bot.tagview.pgstore"):
        try:
            importlib.import_module(module)
        except ModuleNotFoundError as exc:
            if exc.name != module:
                raise
