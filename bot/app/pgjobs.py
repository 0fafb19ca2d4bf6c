"""The job queue on PostgreSQL: the same :class:`bot.app.jobstore.JobStorage` semantics, shared by replicas.

What differs from the SQLite :class:`~bot.app.jobstore.JobStore`, and why:

- **Claims** lock the chosen row with ``SELECT ... FOR UPDATE SKIP LOCKED``, so two
  replicas never claim the same job; the head-of-key rule (a job starts only when it
  is the oldest unfinished job of its key and none of its key runs) is checked in
  the same statement, and every state change is a single-row commit, so jobs of one
  pull request run strictly in order across replicas.
- **Time** is the database server's (``statement_timestamp()``), never a replica's:
  leases, due times, retries and ages are all computed in SQL, so a replica whose
  clock runs a minute ahead neither takes over live jobs nor starts jobs early. (A
  ``clock`` given to the store, or a ``now`` to a method, overrides it: tests only.)
- **Leases**: a claimed job carries ``owner`` (this store), ``lease_until`` (Unix
  seconds) and a new ``fence`` (see :attr:`bot.app.jobstore.Job.fence`); the lease is
  renewed by :meth:`PgJobStore.renew` while it runs. A job whose lease ran out (its
  replica was killed, stalled or lost its connection) is queued again by the next
  claim of any replica. Settling a job checks the owner, so a replica that comes back
  after its job was taken over cannot settle it, and :meth:`PgJobStore.holds` (asked
  before every GitHub write, :mod:`bot.app.fencing`) checks the fence and that a third
  of the lease is left, so it cannot publish either. :meth:`requeue_running` takes back
  only expired leases: the other replicas' jobs are alive.
- **Wake-ups**: enqueueing and settling send ``NOTIFY`` on a channel per schema;
  :meth:`listen` runs a thread with a connection of its own that ``LISTEN``s and
  calls back, reconnecting after a failure (the pool also polls every
  :attr:`poll_interval` seconds, for what a lost notification would miss).

Methods block on the network: the worker pool and the intake call them in a thread
(:attr:`blocking` is true). Errors are ``psycopg.Error`` (a pool time-out is a
``psycopg_pool.PoolTimeout``).
"""

from __future__ import annotations

import json
import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from typing import Any

import psycopg

from bot.app import pg
from bot.app.jobstore import (
    CANCELLED,
    KEEP_DELIVERIES_S,
    KEEP_PAYLOADS_S,
    MAX_DONE_ROWS,
    SUPERSEDED,
    Job,
    ParkedJob,
    QueuedDelivery,
    StoreMethods,
    _cancel_filter,
    state_counts,
)

log = logging.getLogger("bot.app.jobs")

#: Seconds a claimed job stays its replica's without renewal (see :meth:`PgJobStore.renew`).
DEFAULT_LEASE = 30.0
#: Seconds between two looks at the queue when no notification came.
POLL_INTERVAL = 5.0

MIGRATIONS = [
    """
    CREATE TABLE jobs (
        id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        delivery_id TEXT NOT NULL UNIQUE,
        event TEXT NOT NULL,
        action TEXT,
        key TEXT NOT NULL,
        installation_id BIGINT,
        state TEXT NOT NULL DEFAULT 'queued' CHECK (state IN ('queued', 'running', 'done', 'parked')),
        attempts INTEGER NOT NULL DEFAULT 0,
        not_before DOUBLE PRECISION NOT NULL,
        created_at DOUBLE PRECISION NOT NULL,
        updated_at DOUBLE PRECISION NOT NULL,
        outcome TEXT,
        error TEXT,
        owner TEXT,
        lease_until DOUBLE PRECISION,
        payload BYTEA
    );
    CREATE INDEX jobs_due ON jobs (not_before, id) WHERE state = 'queued';
    CREATE INDEX jobs_open ON jobs (key, id) INCLUDE (state) WHERE state IN ('queued', 'running');
    CREATE INDEX jobs_leases ON jobs (lease_until) WHERE state = 'running';
    CREATE INDEX jobs_done ON jobs (updated_at) WHERE state = 'done';
    """,
    # Claims are fenced (see Job.fence), and periodic work remembers how far it got.
    """
    ALTER TABLE jobs ADD COLUMN fence BIGINT NOT NULL DEFAULT 0;
    CREATE INDEX jobs_installation ON jobs (installation_id) WHERE state IN ('queued', 'running', 'parked');
    CREATE TABLE checkpoints (
        name TEXT PRIMARY KEY,
        value TEXT NOT NULL,
        updated_at DOUBLE PRECISION NOT NULL
    );
    """,
    # Live work before background work (claims read jobs_claim; next_due still jobs_due).
    """
    ALTER TABLE jobs ADD COLUMN priority SMALLINT NOT NULL DEFAULT 0;
    CREATE INDEX jobs_claim ON jobs (priority, not_before, id) WHERE state = 'queued';
    """,
]
pg.register_migrations("jobs", MIGRATIONS)

_COLUMNS = "id, delivery_id, event, action, key, installation_id, attempts, created_at, payload, fence"

# "Now" in Unix seconds: the database server's clock, which every replica shares, unless
# the caller (a test) passes a time of its own.
_DB_NOW = "extract(epoch FROM statement_timestamp())::double precision"
_NOW = f"coalesce(%(now)s::double precision, {_DB_NOW})"
_NOW_AT = f"coalesce(%s::double precision, {_DB_NOW})"  # the same, for positional parameters

# A job j may start only when it is the oldest unfinished job of its key and no job of its key runs.
_HEAD_OF_KEY = """
    NOT EXISTS (SELECT 1 FROM jobs o WHERE o.key = j.key AND o.state IN ('queued', 'running') AND o.id < j.id)
    AND NOT EXISTS (SELECT 1 FROM jobs r WHERE r.key = j.key AND r.state = 'running')
"""
_RUNNABLE = f"j.state = 'queued' AND {_HEAD_OF_KEY}"

# One statement, one round trip: the candidate row is locked (a row another replica holds
# locked is skipped) and claimed under that lock.
_CLAIM = f"""
    UPDATE jobs SET state = 'running', attempts = attempts + 1, fence = fence + 1, updated_at = {_NOW},
        owner = %(owner)s, lease_until = {_NOW} + %(lease)s
    WHERE id = (
        SELECT j.id FROM jobs j WHERE j.not_before <= {_NOW} AND {_RUNNABLE}
        ORDER BY j.priority, j.not_before, j.id LIMIT 1 FOR UPDATE OF j SKIP LOCKED
    ) AND state = 'queued'
    RETURNING {_COLUMNS}
"""

#: Queued jobs looked at, soonest due first, before falling back to one head per key.
_CANDIDATES = 64
# Usually one of the soonest due queued jobs can start: walk ``jobs_due`` in order and
# stop there. (``min(not_before)`` over every runnable job read the whole queue and
# checked each job's key: 40 ms for 20,000 jobs behind 100 running pull requests.)
_NEXT_DUE = f"""
    WITH candidates AS MATERIALIZED (
        SELECT id, key, not_before FROM jobs WHERE state = 'queued' ORDER BY not_before, id LIMIT %(limit)s
    )
    SELECT
        (SELECT j.not_before FROM candidates j WHERE {_HEAD_OF_KEY} ORDER BY j.not_before, j.id LIMIT 1),
        (SELECT count(*) FROM candidates),
        {_NOW}
"""
# When a burst queued more than that behind a few running pull requests, visit one head
# per key instead: the recursive query walks ``jobs_open`` (key, id) from one key to
# the next (a skip-scan), and its first entry of each key is that key's head.
_NEXT_DUE_HEADS = f"""
    WITH RECURSIVE heads(key, id) AS (
        (SELECT key, id FROM jobs WHERE state IN ('queued', 'running') ORDER BY key, id LIMIT 1)
        UNION ALL
        SELECT n.key, n.id FROM heads h CROSS JOIN LATERAL (
            SELECT key, id FROM jobs WHERE state IN ('queued', 'running') AND key > h.key ORDER BY key, id LIMIT 1
        ) n
    )
    SELECT min(j.not_before), {_NOW} FROM heads h JOIN jobs j ON j.id = h.id
    WHERE j.state = 'queued' AND NOT EXISTS (SELECT 1 FROM jobs r WHERE r.key = h.key AND r.state = 'running')
"""

_EXPIRED = f"""
    UPDATE jobs SET state = CASE WHEN attempts >= %(max)s THEN 'parked' ELSE 'queued' END,
        error = CASE WHEN attempts >= %(max)s
            THEN 'interrupted while running ' || attempts || ' times' || coalesce(E'\\n' || 'last error: ' || error, '')
            ELSE error END,
        not_before = {_NOW}, updated_at = {_NOW}, owner = NULL, lease_until = NULL
    WHERE state = 'running' AND lease_until < {_NOW}
    RETURNING state
"""


def _job(row: Sequence[Any]) -> Job:
    return Job(
        id=row[0], delivery_id=row[1], event=row[2], action=row[3], key=row[4], installation_id=row[5],
        attempts=row[6], created_at=row[7], payload=bytes(row[8]) if row[8] is not None else b"", fence=row[9],
    )


def channel(schema: str) -> str:
    """The ``NOTIFY`` channel of the queue in ``schema`` (at most 63 characters, PostgreSQL's limit)."""
    return f"prguide_jobs_{schema}"[:63]


class PgJobStore(StoreMethods):
    """The ``jobs`` table in PostgreSQL (see the module text); one per process.

    ``db``: a :class:`bot.app.pg.Database` whose schema has the ``jobs`` migrations
    applied (``pg.connect(..., migrate_components=["jobs"])``). ``lease``: seconds a
    claim lasts without :meth:`renew`. Times are the database server's; ``clock`` (Unix
    seconds) replaces it when given, and a method's ``now`` replaces both (tests).
    """

    #: Methods wait on the network: call them off the event loop.
    blocking = True

    def __init__(
        self,
        db: pg.Database,
        *,
        clock: Callable[[], float] | None = None,
        lease: float = DEFAULT_LEASE,
        poll_interval: float = POLL_INTERVAL,
        owner: str | None = None,
    ):
        self.db = db
        self.clock = clock
        self.lease = lease
        self.poll_interval = poll_interval
        self.owner = owner or f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self.channel = channel(db.schema)
        self._max_attempts: int | None = None
        self._last_takeback: float | None = None

    @classmethod
    def open(cls, settings: Any, **options: Any) -> PgJobStore:
        """Connect with a :class:`bot.app.settings.Settings` (migrating ``jobs``) and wrap the pool."""
        db = pg.from_settings(settings, migrate_components=["jobs"])
        return cls(db, lease=settings.job_lease, **options)

    def close(self) -> None:
        """Close the pool; jobs still ``running`` are taken over when their lease ends."""
        self.db.close()

    def _conn(self):
        # Autocommit: every method here is one statement, or statements that need not
        # commit together (a notification after the change it announces), so none pays
        # for a BEGIN and a COMMIT; enqueue_many sends its transaction as one pipeline.
        return self.db.autocommit()

    def _notify(self, conn: psycopg.Connection) -> None:
        conn.execute("SELECT pg_notify(%s, '')", (self.channel,))

    def enqueue_many(
        self, deliveries: Sequence[QueuedDelivery], *, now: float | None = None, delay: float = 0.0
    ) -> list[bool]:
        """Queue deliveries in one transaction, due ``delay`` seconds from now; per delivery, True when new.

        ``INSERT ... ON CONFLICT (delivery_id) DO NOTHING``: a delivery id another
        replica is inserting at the same moment waits for that transaction and is then
        reported known (False). All or nothing.
        """
        at = self._at(now)
        if not deliveries:
            return []
        # One round trip: the transaction goes as a pipeline. Each insert notifies the
        # other replicas only when it queued a row (equal notifications of one
        # transaction reach a listener once).
        with self._conn() as conn, conn.pipeline():
            with conn.transaction():
                # The 202 promises the row survives a crash of the database server too.
                conn.execute("SET LOCAL synchronous_commit TO on")
                inserts = [
                    conn.execute(
                        "WITH queued AS (INSERT INTO jobs (delivery_id, event, action, key, installation_id, not_before,"
                        f" created_at, updated_at, priority, payload) VALUES (%(delivery)s, %(event)s, %(action)s,"
                        f" %(key)s, %(installation)s, {_NOW} + %(delay)s, {_NOW}, {_NOW}, %(priority)s, %(payload)s)"
                        " ON CONFLICT (delivery_id) DO NOTHING RETURNING id)"
                        " SELECT id, pg_notify(%(channel)s, '') FROM queued",
                        {
                            "delivery": d.delivery_id, "event": d.event, "action": d.action, "key": d.job_key,
                            "installation": d.installation_id, "delay": max(0.0, delay), "priority": d.priority,
                            "payload": bytes(d.payload), "now": at, "channel": self.channel,
                        },
                    )
                    for d in deliveries
                ]
        return [cursor.fetchone() is not None for cursor in inserts]

    def claim(self, now: float | None = None) -> Job | None:
        """Take the next runnable job (head of its key, due; live first, then earliest due) for this replica.

        First queues again the jobs whose lease ran out (parking those that used
        every attempt, once :meth:`requeue_running` told the store ``max_attempts``).
        """
        at = self._at(now)
        with self._conn() as conn:
            # Expired leases are looked for a few times per lease, not on every claim (this
            # pacing is local, so it may use this process's own clock).
            mark = at if at is not None else time.monotonic()
            last = self._last_takeback
            if last is None or not last <= mark < last + self.lease / 10:
                self._last_takeback = mark
                self._take_back_expired(conn, at)
            claimed = conn.execute(_CLAIM, {"now": at, "owner": self.owner, "lease": self.lease}).fetchone()
        return _job(claimed) if claimed is not None else None

    def _take_back_expired(self, conn: psycopg.Connection, at: float | None) -> tuple[int, int]:
        limit = self._max_attempts if self._max_attempts is not None else 2**31 - 1
        # conn is in autocommit (see _conn): the take-back is committed before the notification.
        states = [r[0] for r in conn.execute(_EXPIRED, {"now": at, "max": limit}).fetchall()]
        parked = states.count("parked")
        if states:
            log.warning("took back %d job(s) whose lease ran out (%d parked)", len(states), parked)
            self._notify(conn)
        return len(states) - parked, parked

    def renew(self, job_ids: Sequence[int], *, now: float | None = None) -> int:
        """Extend this replica's lease on its running ``job_ids`` to :attr:`lease` seconds from now; how many it still holds."""
        if not job_ids:
            return 0
        at = self._at(now)
        with self._conn() as conn:
            return conn.execute(
                f"UPDATE jobs SET lease_until = {_NOW} + %(lease)s"
                " WHERE id = ANY(%(ids)s) AND state = 'running' AND owner = %(owner)s",
                {"now": at, "lease": self.lease, "ids": list(job_ids), "owner": self.owner},
            ).rowcount

    def holds(self, job_id: int, fence: int, *, now: float | None = None) -> bool:
        """True while this replica runs job ``job_id`` under the claim that gave it ``fence``
        with at least a third of :attr:`lease` left.

        The margin is the time a write may take after this answer: a heartbeat renews
        the lease every third of it, so a live replica always has two thirds left, and
        one whose heartbeats stopped stops writing well before another may take its job.
        """
        at = self._at(now)
        with self._conn() as conn:
            row = conn.execute(
                "SELECT 1 FROM jobs WHERE id = %(id)s AND state = 'running' AND fence = %(fence)s"
                f" AND owner = %(owner)s AND lease_until > {_NOW} + %(margin)s",
                {"id": job_id, "fence": fence, "owner": self.owner, "margin": self.lease / 3, "now": at},
            ).fetchone()
        return row is not None

    def cancel(
        self,
        installation_id: int,
        *,
        keys: Sequence[str] = (),
        key_prefixes: Sequence[str] = (),
        delivery_parts: Sequence[str] = (),
        keep: int | None = None,
        deliveries_after: int | None = None,
        reason: str,
        now: float | None = None,
    ) -> int:
        """End an installation's unfinished jobs as :meth:`bot.app.jobstore.JobStore.cancel` does; how many.

        A cancelled running job loses owner and lease: whichever replica runs it finds
        its claim gone (:meth:`holds`) before its next write.
        """
        where, params = _cancel_filter(installation_id, keys, key_prefixes, delivery_parts, keep, "%s", deliveries_after)
        with self._conn() as conn:
            return conn.execute(
                f"UPDATE jobs SET state = 'done', outcome = %s, error = %s, updated_at = {_NOW_AT},"
                f" owner = NULL, lease_until = NULL WHERE {where}",
                (CANCELLED, reason, self._at(now), *params),
            ).rowcount

    def read_checkpoint(self, name: str) -> Any:
        """The JSON value last written under ``name`` by :meth:`write_checkpoint`, or None."""
        with self._conn() as conn:
            row = conn.execute("SELECT value FROM checkpoints WHERE name = %s", (name,)).fetchone()
        return None if row is None else json.loads(row[0])

    def write_checkpoint(self, name: str, value: Any, *, now: float | None = None) -> None:
        """Keep ``value`` (JSON-serialisable) under ``name``, replacing what was there."""
        with self._conn() as conn:
            conn.execute(
                f"INSERT INTO checkpoints (name, value, updated_at) VALUES (%(name)s, %(value)s, {_NOW})"
                " ON CONFLICT (name) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at",
                {"name": name, "value": json.dumps(value, sort_keys=True), "now": self._at(now)},
            )

    def listen(self, callback: Callable[[], Any]) -> Callable[[], None]:
        """Call ``callback()`` (from a thread) whenever any replica queues or settles a job.

        Runs a daemon thread with a connection of its own; after a lost connection it
        reconnects (waiting up to :attr:`poll_interval` between tries) and calls back
        once, for what it may have missed. Returns a function that stops it.
        """
        stop = threading.Event()

        def loop() -> None:
            delay = 0.1
            while not stop.is_set():
                try:
                    with psycopg.connect(self.db.url, autocommit=True, connect_timeout=pg.CONNECT_TIMEOUT) as conn:
                        conn.execute(psycopg.sql.SQL("LISTEN {}").format(psycopg.sql.Identifier(self.channel)))
                        callback()
                        delay = 0.1
                        while not stop.is_set():
                            for _ in conn.notifies(timeout=0.5, stop_after=1):
                                callback()
                except psycopg.Error as exc:
                    log.warning("job notifications lost (%s); listening again in %.1f s", exc, delay)
                    stop.wait(delay)
                    delay = min(delay * 2, self.poll_interval)

        thread = threading.Thread(target=loop, name="prguide-jobs-listen", daemon=True)
        thread.start()

        def unlisten() -> None:
            stop.set()
            thread.join(timeout=5.0)

        return unlisten

    def supersede(self, job: Job, *, now: float | None = None) -> tuple[str, int] | None:
        """End queued jobs of ``job``'s key, event and action older than the newest one (see the SQLite store)."""
        at = self._at(now)
        with self._conn() as conn:
            newest = conn.execute(
                "SELECT id, delivery_id FROM jobs WHERE key = %s AND state = 'queued' AND id > %s AND event = %s"
                " AND action IS NOT DISTINCT FROM %s ORDER BY id DESC LIMIT 1",
                (job.key, job.id, job.event, job.action),
            ).fetchone()
            if newest is None:
                return None
            ended = conn.execute(
                f"UPDATE jobs SET state = 'done', outcome = %s, error = %s, updated_at = {_NOW_AT}"
                " WHERE key = %s AND state = 'queued' AND id > %s AND id < %s AND event = %s"
                " AND action IS NOT DISTINCT FROM %s",
                (SUPERSEDED, f"superseded by delivery {newest[1]}", at, job.key, job.id, newest[0], job.event, job.action),
            ).rowcount
        return newest[1], ended

    def next_due(self) -> float | None:
        """When the earliest job waiting only for its time falls due (Unix s), or None.

        Jobs waiting behind a running job of their key do not count (as in the SQLite
        store). Reads the few soonest due queued jobs through the ``jobs_due`` index, and
        only when none of them can start, one head per key through ``jobs_open``.
        """
        return self._next_due(None)[0]

    def due_in(self, now: float | None = None) -> float | None:
        """Seconds until :meth:`next_due` by the database's clock (0 when overdue), or None."""
        first, at = self._next_due(self._at(now))
        return None if first is None else max(0.0, first - at)

    def _next_due(self, at: float | None) -> tuple[float | None, float]:
        """``(when the first job waiting only for its time is due, now)``, both by the store's clock."""
        with self._conn() as conn:
            first, looked_at, db_now = conn.execute(_NEXT_DUE, {"limit": _CANDIDATES, "now": at}).fetchone()
            if first is not None or looked_at < _CANDIDATES:
                return first, db_now
            first, db_now = conn.execute(_NEXT_DUE_HEADS, {"now": at}).fetchone()
            return first, db_now

    def release(self, job_id: int, *, now: float | None = None, delay: float = 0.0, reason: str | None = None) -> None:
        """This replica's running job is queued again, its attempt not counted: due now (shutdown)
        or ``delay`` seconds from now (a rate limit), with ``reason`` as its error."""
        at = self._at(now)
        with self._conn() as conn:
            conn.execute(
                f"UPDATE jobs SET state = 'queued', attempts = greatest(attempts - 1, 0),"
                f" not_before = {_NOW} + %(delay)s, updated_at = {_NOW}, owner = NULL, lease_until = NULL,"
                " error = coalesce(%(reason)s, error) WHERE id = %(id)s AND state = 'running' AND owner = %(owner)s",
                {"now": at, "delay": max(0.0, delay), "reason": reason, "id": job_id, "owner": self.owner},
            )
            self._notify(conn)  # the released job is due now, or sooner than a replica's wait may be

    def _settle(
        self, job_id: int, state: str, now: float | None, *, outcome: str | None = None, error: str | None = None,
        not_before_in: float = 0.0,
    ) -> None:
        at = self._at(now)
        with self._conn() as conn:
            # Other replicas are woken only when a job of this key waits for this one: a
            # notification per finished job would wake every replica for nothing.
            conn.execute(
                "WITH settled AS ("
                " UPDATE jobs SET state = %(state)s, outcome = %(outcome)s, error = %(error)s,"
                f" not_before = {_NOW} + %(delay)s, updated_at = {_NOW}, owner = NULL, lease_until = NULL"
                " WHERE id = %(id)s AND state = 'running' AND owner = %(owner)s RETURNING key)"
                " SELECT pg_notify(%(channel)s, '') FROM settled"
                " WHERE EXISTS (SELECT 1 FROM jobs q WHERE q.key = settled.key AND q.state = 'queued')",
                {
                    "state": state, "outcome": outcome, "error": error, "now": at, "delay": not_before_in, "id": job_id,
                    "owner": self.owner, "channel": self.channel,
                },
            )

    def requeue_running(self, *, max_attempts: int | None = None, now: float | None = None) -> int:
        """Take back running jobs whose lease ran out (their replica died); how many.

        Jobs other live replicas run keep their lease. ``max_attempts`` (remembered
        for later claims) parks a job that was interrupted that many times.
        """
        if max_attempts is not None:
            self._max_attempts = max_attempts
        with self._conn() as conn:
            queued, parked = self._take_back_expired(conn, self._at(now))
        return queued + parked

    def retry_parked(self, job_id: int | None = None, *, now: float | None = None) -> int:
        """Queue parked jobs again (one by id, or all) with a fresh attempt count; how many."""
        at = self._at(now)
        query = (
            f"UPDATE jobs SET state = 'queued', attempts = 0, not_before = {_NOW_AT}, updated_at = {_NOW_AT}"
            " WHERE state = 'parked'"
        )
        params: tuple = (at, at)
        if job_id is not None:
            query += " AND id = %s"
            params += (job_id,)
        with self._conn() as conn:
            count = conn.execute(query, params).rowcount
            if count:
                self._notify(conn)
        return count

    def counts(self) -> dict[str, int]:
        """Jobs per state: ``{"queued": n, "running": n, "done": n, "parked": n}``."""
        with self._conn() as conn:
            rows = conn.execute("SELECT state, count(*) FROM jobs GROUP BY state").fetchall()
        return state_counts(rows)

    def oldest_queued_age(self, now: float | None = None) -> float | None:
        """Seconds since the oldest queued job was received, or None."""
        with self._conn() as conn:
            age = conn.execute(
                f"SELECT {_NOW_AT} - min(created_at) FROM jobs WHERE state = 'queued'", (self._at(now),)
            ).fetchone()[0]
        return None if age is None else max(0.0, age)

    def parked(self, limit: int = 100) -> list[ParkedJob]:
        """The parked jobs, oldest first, at most ``limit``."""
        with self._conn() as conn:
            rows = conn.execute(
                "SELECT id, delivery_id, event, action, key, attempts, error, created_at, updated_at"
                " FROM jobs WHERE state = 'parked' ORDER BY id LIMIT %s",
                (limit,),
            ).fetchall()
        return [ParkedJob(*row) for row in rows]

    def get(self, job_id: int) -> dict[str, Any] | None:
        """One job's row as a dict (payload excluded), or None."""
        with self._conn() as conn:
            cur = conn.execute(
                "SELECT id, delivery_id, event, action, key, installation_id, state, attempts,"
                " not_before, created_at, updated_at, outcome, error, owner, lease_until, fence, priority"
                " FROM jobs WHERE id = %s",
                (job_id,),
            )
            row = cur.fetchone()
            names = [d.name for d in cur.description]
        return dict(zip(names, row, strict=True)) if row is not None else None

    def by_delivery(self, delivery_id: str) -> dict[str, Any] | None:
        """The row of the job queued for ``delivery_id`` (see :meth:`get`), or None (never queued, or pruned)."""
        with self._conn() as conn:
            cur = conn.execute(
                "SELECT id, delivery_id, event, action, key, installation_id, state, attempts,"
                " not_before, created_at, updated_at, outcome, error FROM jobs WHERE delivery_id = %s",
                (delivery_id,),
            )
            row = cur.fetchone()
            names = [d.name for d in cur.description]
        return dict(zip(names, row, strict=True)) if row is not None else None

    def prune(
        self,
        now: float | None = None,
        *,
        keep_payloads: float = KEEP_PAYLOADS_S,
        keep_deliveries: float = KEEP_DELIVERIES_S,
        max_done: int = MAX_DONE_ROWS,
    ) -> int:
        """Bound the table as :meth:`bot.app.jobstore.JobStore.prune` does; how many rows were deleted."""
        at = self._at(now)
        with self._conn() as conn:
            conn.execute(
                f"UPDATE jobs SET payload = NULL WHERE state = 'done' AND updated_at < {_NOW_AT} - %s"
                " AND payload IS NOT NULL",
                (at, keep_payloads),
            )
            deleted = conn.execute(
                f"DELETE FROM jobs WHERE state = 'done' AND updated_at < {_NOW_AT} - %s", (at, keep_deliveries)
            ).rowcount
            deleted += conn.execute(
                "DELETE FROM jobs WHERE state = 'done' AND id <= ("
                " SELECT id FROM jobs WHERE state = 'done' ORDER BY id DESC LIMIT 1 OFFSET %s)",
                (max_done,),
            ).rowcount
        return deleted
