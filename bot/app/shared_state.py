"""State GitHub counts per installation, shared by every replica: budgets and reply memory.

GitHub's secondary limit (80 content-creating requests a minute, 500 an hour per
installation, "Rate limits for the REST API") counts every request the app makes,
whichever process makes it; and a refused commenter should hear why once per ten
minutes per pull request, not once per replica. Two implementations of one small
interface:

- :class:`LocalState`: in memory, for the single SQLite process (the token buckets of
  :class:`bot.app.ratelimit.TokenBucket` and a TTL cache).
- :class:`PgSharedState`: rows in PostgreSQL, each operation one atomic statement
  (``INSERT ... ON CONFLICT DO UPDATE ... RETURNING``), so replicas never both spend
  the last token or both claim a reply.

The primary rate limit of each installation and its backfill schedule
(:class:`bot.app.ratelimit.Budget`) live in the database on both backends, so they
outlive a restart and hold every run and replica: :class:`SqliteRateLimits` in the
app's SQLite file, :class:`PgRateLimits` in PostgreSQL (a row per installation,
read, merged and written under its row lock).

Times are Unix seconds: the replicas share no monotonic clock, and their wall clocks
may disagree, so what PostgreSQL keeps is on the database server's clock.
Per-process caches that are safe per replica (tokens, permissions, ETags) stay in
:mod:`bot.app.github` and :mod:`bot.app.auth`.
"""

from __future__ import annotations

import functools
import sqlite3
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, Protocol

from bot.app import pg
from bot.app.db import migrate, open_database
from bot.app.ratelimit import Budget, booked, bounded, merge, shifted

#: ``(rate per second, capacity)`` of each write bucket: 8 + 72 a minute, 100 + 400 an hour.
WRITE_BUCKETS: tuple[tuple[float, float], ...] = ((72 / 60, 8.0), (400 / 3600, 100.0))

MIGRATIONS = [
    """
    CREATE TABLE write_budget (
        installation_id BIGINT NOT NULL,
        bucket SMALLINT NOT NULL,
        tokens DOUBLE PRECISION NOT NULL,
        updated_at DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (installation_id, bucket)
    );
    CREATE TABLE reply_memory (
        key TEXT PRIMARY KEY,
        until DOUBLE PRECISION NOT NULL
    );
    CREATE INDEX reply_memory_until ON reply_memory (until);
    """,
    """
    CREATE TABLE rate_limits (
        installation_id BIGINT PRIMARY KEY,
        ratelimit_limit INTEGER,
        ratelimit_remaining INTEGER,
        ratelimit_reset DOUBLE PRECISION,
        blocked_until DOUBLE PRECISION NOT NULL DEFAULT 0,
        paced_until DOUBLE PRECISION NOT NULL DEFAULT 0,
        updated_at DOUBLE PRECISION NOT NULL
    );
    """,
]
pg.register_migrations("state", MIGRATIONS)

#: The SQLite database's ``rate_limits`` table (component ``"rate_limits"``), as in PostgreSQL.
SQLITE_MIGRATIONS = [
    """
    CREATE TABLE rate_limits (
        installation_id INTEGER PRIMARY KEY,
        ratelimit_limit INTEGER,
        ratelimit_remaining INTEGER,
        ratelimit_reset REAL,
        blocked_until REAL NOT NULL DEFAULT 0,
        paced_until REAL NOT NULL DEFAULT 0,
        updated_at REAL NOT NULL
    );
    """,
]

#: The database's clock (Unix seconds), read in the statement that needs it.
_DB_EPOCH = "extract(epoch FROM clock_timestamp())::double precision"
#: Now in a statement: the parameter when a test gives a clock, else the database's clock.
_NOW = f"coalesce(%s::double precision, {_DB_EPOCH})"

_BUDGET_COLUMNS = "ratelimit_limit, ratelimit_remaining, ratelimit_reset, blocked_until, paced_until"


class SharedState(Protocol):
    """What must be counted once for all replicas."""

    def reserve_write(self, installation_id: int) -> float:
        """Take one write token of the installation; seconds to wait before writing (0: now)."""
        ...

    def remember_once(self, key: str, ttl: float) -> bool:
        """True the first time ``key`` is seen in ``ttl`` seconds (and remember it), else False."""
        ...

    def recall(self, key: str) -> bool:
        """Whether ``key`` is remembered (and not expired)."""
        ...

    def remember(self, key: str, ttl: float) -> None:
        """Remember ``key`` for ``ttl`` seconds from now, whatever was remembered before."""
        ...

    def forget(self, key: str) -> None:
        """Forget ``key``."""
        ...


class LocalState:
    """:class:`SharedState` in this process's memory (one process: SQLite mode)."""

    blocking = False

    def __init__(self, buckets: Sequence[tuple[float, float]] = WRITE_BUCKETS, *, clock: Callable[[], float] = time.monotonic):
        from bot.app.ratelimit import TokenBucket

        self._make = lambda: tuple(TokenBucket(rate, capacity, clock=clock) for rate, capacity in buckets)
        self._buckets: dict[int, tuple] = {}
        self._memory: dict[str, float] = {}
        self._clock = clock

    def reserve_write(self, installation_id: int) -> float:
        """See :class:`SharedState`."""
        buckets = self._buckets.setdefault(int(installation_id), self._make())
        return max(bucket.reserve() for bucket in buckets)

    def remember_once(self, key: str, ttl: float) -> bool:
        """See :class:`SharedState`."""
        now = self._clock()
        if self._memory.get(key, -1.0) > now:
            return False
        if len(self._memory) > 4096:
            self._memory = {k: v for k, v in self._memory.items() if v > now}
        self._memory[key] = now + ttl
        return True

    def recall(self, key: str) -> bool:
        """See :class:`SharedState`."""
        return self._memory.get(key, -1.0) > self._clock()

    def remember(self, key: str, ttl: float) -> None:
        """See :class:`SharedState`."""
        self._memory[key] = self._clock() + ttl

    def forget(self, key: str) -> None:
        """See :class:`SharedState`."""
        self._memory.pop(key, None)


class PgSharedState:
    """:class:`SharedState` in PostgreSQL tables (component ``"state"``), one statement per call.

    Times are the database server's, read in each statement, never a replica's: a replica
    whose clock is half an hour fast would otherwise find every bucket refilled (and
    write past GitHub's limit) and leave the others' unfilled for half an hour. A
    ``clock`` given stands in for the database's (tests only), as it does for
    :class:`bot.app.pgjobs.PgJobStore`. Methods block on the network (:attr:`blocking`);
    errors are ``psycopg.Error``.
    """

    blocking = True

    def __init__(self, db: pg.Database, buckets: Sequence[tuple[float, float]] = WRITE_BUCKETS, *,
                 clock: Callable[[], float] | None = None):  # fmt: skip
        self.db = db
        self.buckets = tuple(buckets)
        self.clock = clock

    def _now(self) -> float | None:
        """The stand-in clock's time, or None: the database's clock (:data:`_NOW`)."""
        return self.clock() if self.clock is not None else None

    def reserve_write(self, installation_id: int) -> float:
        """See :class:`SharedState`: each bucket refills, loses one token, and says how long to wait.

        One statement for every bucket (bucket ``i``'s capacity and rate are element
        ``i + 1`` of the array parameters), so they change together in one round trip.
        """
        now = self._now()
        capacities = [float(capacity) for _, capacity in self.buckets]
        rates = [float(rate) for rate, _ in self.buckets]
        with self.db.autocommit() as conn:
            rows = conn.execute(
                "INSERT INTO write_budget (installation_id, bucket, tokens, updated_at)"
                f" SELECT %(installation)s, b.bucket - 1, b.capacity - 1, coalesce(%(now)s::double precision, {_DB_EPOCH})"
                " FROM unnest(%(capacities)s::double precision[]) WITH ORDINALITY AS b(capacity, bucket)"
                " ON CONFLICT (installation_id, bucket) DO UPDATE SET"
                " tokens = least((%(capacities)s::double precision[])[write_budget.bucket + 1], write_budget.tokens"
                "   + greatest(excluded.updated_at - write_budget.updated_at, 0)"
                "   * (%(rates)s::double precision[])[write_budget.bucket + 1]) - 1,"
                " updated_at = greatest(excluded.updated_at, write_budget.updated_at)"
                " RETURNING bucket, tokens",
                {"installation": int(installation_id), "capacities": capacities, "rates": rates, "now": now},
            ).fetchall()
        return max([0.0] + [-tokens / rates[bucket] for bucket, tokens in rows if tokens < 0])

    def remember_once(self, key: str, ttl: float) -> bool:
        """See :class:`SharedState`: one upsert that only succeeds when the key is new or expired."""
        now = self._now()
        with self.db.autocommit() as conn:
            row = conn.execute(
                f"INSERT INTO reply_memory (key, until) VALUES (%s, {_NOW} + %s) ON CONFLICT (key) DO UPDATE"
                f" SET until = excluded.until WHERE reply_memory.until <= {_NOW} RETURNING 1",
                (key, now, float(ttl), now),
            ).fetchone()
            if row is not None and hash(key) % 64 == 0:  # now and then, forget what expired
                conn.execute(f"DELETE FROM reply_memory WHERE until <= {_NOW}", (now,))
        return row is not None

    def recall(self, key: str) -> bool:
        """See :class:`SharedState`: one indexed read, on the database's clock."""
        with self.db.autocommit() as conn:
            row = conn.execute(f"SELECT until > {_NOW} FROM reply_memory WHERE key = %s", (self._now(), key)).fetchone()
        return row is not None and bool(row[0])

    def remember(self, key: str, ttl: float) -> None:
        """See :class:`SharedState`: one upsert, on the database's clock."""
        with self.db.autocommit() as conn:
            conn.execute(
                f"INSERT INTO reply_memory (key, until) VALUES (%s, {_NOW} + %s) ON CONFLICT (key) DO UPDATE SET until = excluded.until",
                (key, self._now(), float(ttl)),
            )

    def forget(self, key: str) -> None:
        """See :class:`SharedState`: one delete."""
        with self.db.autocommit() as conn:
            conn.execute("DELETE FROM reply_memory WHERE key = %s", (key,))


def _budget(row: Sequence[Any] | None) -> Budget | None:
    return Budget(*row) if row is not None else None


def _unbooked(old: Budget | None) -> tuple[None, Budget]:
    """:meth:`RateLimitStorage.unbook` as a change of the stored budget: no slot booked."""
    return None, replace(old or Budget(), paced_until=0.0)


def _values(budget: Budget) -> tuple[Any, ...]:
    return (budget.limit, budget.remaining, budget.reset, budget.blocked_until, budget.paced_until)


class SqliteRateLimits:
    """:class:`bot.app.ratelimit.RateLimitStorage` in the app's SQLite file (one process; survives restarts).

    Each call is one ``BEGIN IMMEDIATE`` transaction on a connection of its own, under
    a lock. Errors are ``sqlite3.Error``.
    """

    blocking = False

    def __init__(self, conn: sqlite3.Connection, *, clock: Callable[[], float] = time.time):
        self.conn = conn
        self.clock = clock
        self._lock = threading.Lock()
        with self._lock:
            migrate(conn, "rate_limits", SQLITE_MIGRATIONS)

    @classmethod
    def open(cls, path: str | Path, *, clock: Callable[[], float] = time.time) -> SqliteRateLimits:
        """Open the table in the database file at ``path`` (created and migrated as needed)."""
        return cls(open_database(path), clock=clock)

    def close(self) -> None:
        """Close the connection."""
        with self._lock:
            self.conn.close()

    def _update(self, installation_id: int, change: Callable[[Budget | None], tuple[Any, Budget]]) -> Any:
        with self._lock:
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                row = self.conn.execute(
                    f"SELECT {_BUDGET_COLUMNS} FROM rate_limits WHERE installation_id = ?", (installation_id,)
                ).fetchone()
                result, budget = change(bounded(_budget(tuple(row) if row is not None else None), self.clock()))
                self.conn.execute(
                    f"INSERT OR REPLACE INTO rate_limits (installation_id, {_BUDGET_COLUMNS}, updated_at)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (installation_id, *_values(budget), self.clock()),
                )
                self.conn.execute("COMMIT")
            except BaseException:
                self.conn.execute("ROLLBACK")
                raise
        return result

    def get(self, installation_id: int, *, now: float | None = None) -> Budget | None:
        """See :class:`bot.app.ratelimit.RateLimitStorage` (one process: ``now`` is on this store's clock)."""
        with self._lock:
            row = self.conn.execute(
                f"SELECT {_BUDGET_COLUMNS} FROM rate_limits WHERE installation_id = ?", (int(installation_id),)
            ).fetchone()
        return bounded(_budget(tuple(row) if row is not None else None), self.clock())

    def record(self, installation_id: int, budget: Budget, *, now: float | None = None) -> Budget:
        """See :class:`bot.app.ratelimit.RateLimitStorage`."""

        def change(old: Budget | None) -> tuple[Budget, Budget]:
            merged = merge(old, budget)
            return merged, merged

        return self._update(int(installation_id), change)

    def book(self, installation_id: int, count: int, spacing: float, *, not_before: float, now: float) -> float:
        """See :class:`bot.app.ratelimit.RateLimitStorage`."""
        change = functools.partial(booked, count=count, spacing=spacing, not_before=not_before, now=now)
        return self._update(int(installation_id), change)

    def unbook(self, installation_id: int) -> None:
        """See :class:`bot.app.ratelimit.RateLimitStorage`."""
        self._update(int(installation_id), _unbooked)


class PgRateLimits:
    """:class:`bot.app.ratelimit.RateLimitStorage` in PostgreSQL (component ``"state"``), shared by replicas.

    Each call is one transaction; a change reads the installation's row ``FOR UPDATE``
    (inserting it first if new), so two replicas never both book the same slot.
    Methods block on the network (:attr:`blocking`); errors are ``psycopg.Error``.

    The times a replica sets (``blocked_until``, ``paced_until``) are stored on the
    database's clock and read back on the replica's (``clock``; the difference in whole
    seconds, so clocks within half a second of the database's store them as they are):
    a replica whose clock is a minute fast would otherwise hold the others back a
    minute longer than GitHub asked, and book their backfill slots a minute late.
    """

    blocking = True

    def __init__(self, db: pg.Database, *, clock: Callable[[], float] = time.time):
        self.db = db
        self.clock = clock

    def _update(self, installation_id: int, change: Callable[[Budget | None], tuple[Any, Budget]]) -> Any:
        with self.db.connection() as conn:
            conn.execute(
                "INSERT INTO rate_limits (installation_id, updated_at) VALUES (%s, %s) ON CONFLICT DO NOTHING",
                (installation_id, self.clock()),
            )
            row = conn.execute(
                f"SELECT {_BUDGET_COLUMNS}, {_DB_EPOCH} FROM rate_limits WHERE installation_id = %s FOR UPDATE",
                (installation_id,),
            ).fetchone()
            ahead = self._ahead(row[-1])
            result, budget = change(bounded(shifted(Budget(*row[:-1]), ahead), self.clock()))
            stored = shifted(budget, -ahead)
            conn.execute(
                "UPDATE rate_limits SET ratelimit_limit = %s, ratelimit_remaining = %s, ratelimit_reset = %s,"
                " blocked_until = %s, paced_until = %s, updated_at = %s WHERE installation_id = %s",
                (*_values(stored), self.clock(), installation_id),
            )
        return result

    def _ahead(self, database_now: float) -> float:
        """Whole seconds this process's clock is ahead of the database's (negative: behind)."""
        return float(round(self.clock() - database_now))

    def get(self, installation_id: int, *, now: float | None = None) -> Budget | None:
        """See :class:`bot.app.ratelimit.RateLimitStorage` (``now`` is a reading of this replica's ``clock``)."""
        with self.db.connection() as conn:
            row = conn.execute(
                f"SELECT {_BUDGET_COLUMNS}, {_DB_EPOCH} FROM rate_limits WHERE installation_id = %s",
                (int(installation_id),),
            ).fetchone()
        return bounded(shifted(Budget(*row[:-1]), self._ahead(row[-1])), self.clock()) if row is not None else None

    def record(self, installation_id: int, budget: Budget, *, now: float | None = None) -> Budget:
        """See :class:`bot.app.ratelimit.RateLimitStorage`."""

        def change(old: Budget | None) -> tuple[Budget, Budget]:
            merged = merge(old, budget)
            return merged, merged

        return self._update(int(installation_id), change)

    def book(self, installation_id: int, count: int, spacing: float, *, not_before: float, now: float) -> float:
        """See :class:`bot.app.ratelimit.RateLimitStorage`."""
        change = functools.partial(booked, count=count, spacing=spacing, not_before=not_before, now=now)
        return self._update(int(installation_id), change)

    def unbook(self, installation_id: int) -> None:
        """See :class:`bot.app.ratelimit.RateLimitStorage`."""
        self._update(int(installation_id), _unbooked)
