"""State GitHub counts per installation, shared by every replica: the write budget and reply memory.

GitHub's secondary limit (80 content-creating requests a minute, 500 an hour per
installation, "Rate limits for the REST API") counts every request the app makes,
whichever process makes it; and a refused commenter should hear why once per ten
minutes per pull request, not once per replica. Two implementations of one small
interface:

- :class:`LocalState`: in memory, for the single SQLite process (the token buckets of
  :class:`bot.app.github.TokenBucket` and a TTL cache).
- :class:`PgSharedState`: rows in PostgreSQL, each operation one atomic statement
  (``INSERT ... ON CONFLICT DO UPDATE ... RETURNING``), so replicas never both spend
  the last token or both claim a reply.

Times are Unix seconds (``time.time()``): the replicas share no monotonic clock.
Per-process caches that are safe per replica (tokens, permissions, ETags) stay in
:mod:`bot.app.github` and :mod:`bot.app.auth`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Protocol

from bot.app import pg

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
]
pg.register_migrations("state", MIGRATIONS)


class SharedState(Protocol):
    """What must be counted once for all replicas."""

    def reserve_write(self, installation_id: int) -> float:
        """Take one write token of the installation; seconds to wait before writing (0: now)."""
        ...

    def remember_once(self, key: str, ttl: float) -> bool:
        """True the first time ``key`` is seen in ``ttl`` seconds (and remember it), else False."""
        ...


class LocalState:
    """:class:`SharedState` in this process's memory (one process: SQLite mode)."""

    blocking = False

    def __init__(self, buckets: Sequence[tuple[float, float]] = WRITE_BUCKETS, *, clock: Callable[[], float] = time.monotonic):
        from bot.app.github import TokenBucket

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


class PgSharedState:
    """:class:`SharedState` in PostgreSQL tables (component ``"state"``), one statement per call.

    Methods block on the network (:attr:`blocking`); errors are ``psycopg.Error``.
    """

    blocking = True

    def __init__(self, db: pg.Database, buckets: Sequence[tuple[float, float]] = WRITE_BUCKETS, *, clock: Callable[[], float] = time.time):
        self.db = db
        self.buckets = tuple(buckets)
        self.clock = clock

    def reserve_write(self, installation_id: int) -> float:
        """See :class:`SharedState`: each bucket refills, loses one token, and says how long to wait."""
        now = self.clock()
        waits = [0.0]
        with self.db.connection() as conn:
            for index, (rate, capacity) in enumerate(self.buckets):
                tokens = conn.execute(
                    "INSERT INTO write_budget (installation_id, bucket, tokens, updated_at) VALUES (%s, %s, %s, %s)"
                    " ON CONFLICT (installation_id, bucket) DO UPDATE SET"
                    " tokens = least(%s, write_budget.tokens"
                    "   + greatest(excluded.updated_at - write_budget.updated_at, 0) * %s) - 1,"
                    " updated_at = greatest(excluded.updated_at, write_budget.updated_at)"
                    " RETURNING tokens",
                    (int(installation_id), index, capacity - 1, now, capacity, rate),
                ).fetchone()[0]
                if tokens < 0:
                    waits.append(-tokens / rate)
        return max(waits)

    def remember_once(self, key: str, ttl: float) -> bool:
        """See :class:`SharedState`: one upsert that only succeeds when the key is new or expired."""
        now = self.clock()
        with self.db.connection() as conn:
            row = conn.execute(
                "INSERT INTO reply_memory (key, until) VALUES (%s, %s) ON CONFLICT (key) DO UPDATE"
                " SET until = excluded.until WHERE reply_memory.until <= %s RETURNING 1",
                (key, now + ttl, now),
            ).fetchone()
            if row is not None and hash(key) % 64 == 0:  # now and then, forget what expired
                conn.execute("DELETE FROM reply_memory WHERE until <= %s", (now,))
        return row is not None
