"""The durable job queue: every webhook delivery is a row before the webhook answers.

Every webhook delivery becomes one row of the ``jobs`` table *before* the webhook
answers 2xx, so nothing GitHub sent is lost to a crash or a restart. The delivery id
(the ``X-GitHub-Delivery`` header, which a redelivery keeps) is the idempotency key:
a delivery is queued at most once.

Jobs carry a *key*, normally the pull request (``"owner/repo#N"``). Jobs for one key
run one at a time in arrival order, so a merge event and a ``/prguide refresh``
racing each other leave exactly one comment; jobs for different keys run
concurrently, up to the pool's concurrency (:mod:`bot.app.workers`).

A job's life::

    queued --claim--> running --success / GiveUp--> done
       ^                 |
       +--RetryLater / error (attempts left) / stop() / restart
       +--RateLimited (released: the attempt does not count)
                         |
                         +--error (no attempts left)--> parked --retry_parked()--> queued

Among jobs that may start, a live one (a webhook delivery) goes before a background
one (a backfill's), whichever fell due first (:data:`PRIORITY_LIVE`,
:data:`PRIORITY_BACKGROUND`), so a backlog never holds up a merge's guide.

Every claim gives the row a new *fence* (a number that only grows), which the job
carries (:attr:`Job.fence`): :meth:`JobStore.holds` tells whether a run still holds its
claim, so a job whose claim is gone writes nothing to GitHub (:mod:`bot.app.fencing`).

Times are Unix seconds, stored so they survive a restart, and always read from the
store's own clock (``clock``; one process owns the SQLite file), never from a
caller's: due times are given as delays (``enqueue_many(..., delay=)``,
``retry(delay=)``, ``release(delay=)``) and waits are asked of the store
(:meth:`JobStore.due_in`).
:class:`JobStore` keeps the queue in SQLite;
:class:`bot.app.jobs_protocol.JobStorage` is what the worker pool, the intake, the
server and the admin routes need of a store, so another database (PostgreSQL, with
``SELECT ... FOR UPDATE SKIP LOCKED`` claims, :mod:`bot.app.pgjobs`) can take its place.

The ``checkpoints`` table keeps small named JSON values for periodic work that must
know how far its last completed run got (:meth:`JobStore.read_checkpoint`).
"""

from __future__ import annotations

import json
import logging
import math
import sqlite3
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from bot.app.db import migrate, open_database
from bot.app.jobs_schema import MIGRATIONS

log = logging.getLogger("bot.app.jobs")

#: The job states, in the order :meth:`JobStore.counts` reports them.
STATES = ("queued", "running", "done", "parked")
#: ``outcome`` of a ``done`` job.
SUCCEEDED = "succeeded"
GIVEN_UP = "given_up"
#: ``outcome`` of a queued job ended because a later one does its work (see :meth:`JobStore.supersede`).
SUPERSEDED = "superseded"
#: ``outcome`` of a job whose installation's work was cancelled (see :meth:`JobStore.cancel`).
CANCELLED = "cancelled"
#: Events of prguide's own jobs (backfill, reconcile, narration, revert notes) start with
#: this; GitHub's events never do.
INTERNAL_EVENT_PREFIX = "prguide."

#: GitHub lets a user redeliver a webhook delivery from the past 3 days ("Redelivering
#: webhooks"); delivery ids are kept longer than that so a redelivery is recognised.
KEEP_DELIVERIES_S = 7 * 86400.0
#: Payloads of done jobs are only kept this long (for debugging); the row stays for dedupe.
KEEP_PAYLOADS_S = 86400.0
#: Hard cap on done rows, oldest deleted first, even inside the redelivery window.
MAX_DONE_ROWS = 200_000
#: ``priority`` of a job: of the jobs that may start, the lowest number starts first.
PRIORITY_LIVE = 0
PRIORITY_BACKGROUND = 1

_JOB_COLUMNS = "id, delivery_id, event, action, key, installation_id, attempts, created_at, fence"

_ENQUEUE = (
    "INSERT INTO jobs (delivery_id, event, action, key, installation_id,"
    " not_before, created_at, updated_at, priority) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
    " ON CONFLICT (delivery_id) DO NOTHING RETURNING id"
)
_ENQUEUE_PAYLOAD = "INSERT INTO job_payloads (job_id, body) VALUES (?, ?)"

# A queued job may start only when it is the oldest unfinished job of its key and no
# job of its key is running (a parked job put back by retry_parked() can be older
# than a running one).
_RUNNABLE = """
    SELECT NOT EXISTS (SELECT 1 FROM jobs WHERE key = :key AND state IN ('queued', 'running') AND id < :id)
    AND NOT EXISTS (SELECT 1 FROM jobs WHERE key = :key AND state = 'running')
"""

#: Queued jobs looked at, oldest due first, before falling back to one head per key.
_CANDIDATES = 64
#: The order claims take jobs in (live first), and the order of their due times.
_CLAIM_ORDER = "priority, not_before, id"
_DUE_ORDER = "not_before, id"
# Usually one of the oldest queued jobs can start.
_OLDEST = """
    SELECT id, key, not_before FROM jobs WHERE state = 'queued' AND not_before <= :due
    ORDER BY {order} LIMIT %d
""" % _CANDIDATES

# When a burst has queued more than that behind a few running pull requests, scanning
# the queue in order cost milliseconds per claim: instead, visit one head per key. The
# recursive CTE walks the distinct keys of the small index of unfinished jobs (a
# skip-scan); each key's head is one seek.
_OPEN = "jobs INDEXED BY jobs_open WHERE state IN ('queued', 'running')"
_HEADS = f"""
    WITH RECURSIVE open_keys(key) AS (
        SELECT (SELECT min(key) FROM {_OPEN})
        UNION ALL
        SELECT (SELECT min(key) FROM {_OPEN} AND key > open_keys.key) FROM open_keys WHERE open_keys.key IS NOT NULL
    )
    SELECT j.id, j.not_before FROM open_keys k
    CROSS JOIN jobs j ON j.id = (SELECT min(id) FROM {_OPEN} AND key = k.key)
    WHERE j.state = 'queued' AND j.not_before <= :due
    AND NOT EXISTS (SELECT 1 FROM jobs r WHERE r.key = k.key AND r.state = 'running')
    ORDER BY {{order}} LIMIT 1
"""

_CLAIM = f"""
    UPDATE jobs SET state = 'running', attempts = attempts + 1, fence = fence + 1, updated_at = :now
    WHERE id = :id AND state = 'queued'
    RETURNING {_JOB_COLUMNS}
"""


@dataclass(frozen=True)
class Job:
    """One queued webhook delivery, as the handler receives it.

    ``delivery_id``: the ``X-GitHub-Delivery`` header; ``event``: ``X-GitHub-Event``
    (``pull_request``, ``issue_comment``, ...); ``action``: the payload's ``action``;
    ``key``: what the job serialises on, e.g. ``"owner/repo#N"``; ``payload``: the raw
    request body (see :attr:`data`); ``installation_id``: the payload's
    ``installation.id``; ``attempts``: 1 on the first run, 2 on the first retry, ...
    (a run put back by :meth:`JobStore.release`, e.g. to wait for a rate limit, does not
    count); ``created_at``: Unix seconds when the delivery was queued; ``fence``: the
    claim this run holds (every claim of the row gives a larger number; see
    :meth:`JobStore.holds`).
    """

    id: int
    delivery_id: str
    event: str
    action: str | None
    key: str
    payload: bytes = field(repr=False)
    installation_id: int | None
    attempts: int
    created_at: float
    fence: int = 0

    @cached_property
    def data(self) -> Any:
        """The payload parsed as JSON (parsed on first use). Raises ``ValueError`` if it is not JSON."""
        try:
            return json.loads(self.payload)
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ValueError(f"payload of delivery {self.delivery_id} is not JSON: {exc}") from exc


@dataclass(frozen=True, slots=True)
class ParkedJob:
    """A job that failed ``attempts`` times; ``error`` is its last error (traceback text)."""

    id: int
    delivery_id: str
    event: str
    action: str | None
    key: str
    attempts: int
    error: str | None
    created_at: float
    updated_at: float


@dataclass(frozen=True, slots=True)
class QueuedDelivery:
    """A webhook delivery to queue; the fields are :meth:`JobStore.enqueue`'s arguments.

    ``priority``: :data:`PRIORITY_LIVE` (a webhook's) or :data:`PRIORITY_BACKGROUND`.
    Raises ``ValueError`` for an empty ``delivery_id``, ``event`` or ``key``, a
    ``payload`` that is not bytes or a ``priority`` that is not an int, so an invalid
    delivery never joins a batch.
    """

    delivery_id: str
    event: str
    key: str | None
    payload: bytes = field(repr=False)
    installation_id: int | None = None
    action: str | None = None
    priority: int = PRIORITY_LIVE

    @property
    def job_key(self) -> str:
        """The job's key: :attr:`key`, or ``"delivery:<delivery_id>"`` for a delivery about no pull request."""
        return self.key if self.key is not None else f"delivery:{self.delivery_id}"

    def __post_init__(self) -> None:
        if not self.delivery_id or not self.event or self.key == "":
            raise ValueError(
                f"delivery_id, event and key must be non-empty (got {self.delivery_id!r}, {self.event!r}, {self.key!r})"
            )
        if not isinstance(self.payload, (bytes, bytearray, memoryview)):
            raise ValueError(f"payload must be bytes, not {type(self.payload).__name__}")
        if not isinstance(self.priority, int) or isinstance(self.priority, bool):
            raise ValueError(f"priority must be an int, not {self.priority!r}")


def _row(d: QueuedDelivery, at: float, delay: float = 0.0) -> tuple[Any, ...]:
    """The ``_ENQUEUE`` parameters for ``d``, queued at ``at`` and due ``delay`` seconds later."""
    return (d.delivery_id, d.event, d.action, d.job_key, d.installation_id, at + max(0.0, delay), at, at, d.priority)


def _job(row: sqlite3.Row | tuple, payload: bytes) -> Job:
    return Job(
        id=row[0],
        delivery_id=row[1],
        event=row[2],
        action=row[3],
        key=row[4],
        payload=payload,
        installation_id=row[5],
        attempts=row[6],
        created_at=row[7],
        fence=row[8],
    )


def _cancel_filter(
    installation_id: int,
    keys: Sequence[str],
    key_prefixes: Sequence[str],
    delivery_parts: Sequence[str],
    keep: int | None,
    mark: str,
    deliveries_after: int | None = None,
) -> tuple[str, list[Any]]:
    """The ``WHERE`` clause of :meth:`JobStore.cancel` and its parameters (``mark``: ``?`` for
    SQLite or ``%s`` for PostgreSQL)."""
    where = f"installation_id = {mark} AND state IN ('queued', 'running', 'parked')"
    params: list[Any] = [int(installation_id)]
    if keep is not None:
        where += f" AND id <> {mark}"
        params.append(keep)
    if deliveries_after is not None:
        where += f" AND NOT (id > {mark} AND substr(event, 1, {mark}) <> {mark})"
        params += [int(deliveries_after), len(INTERNAL_EVENT_PREFIX), INTERNAL_EVENT_PREFIX]
    if keys or key_prefixes or delivery_parts:
        # substr and instr/strpos, not LIKE: repository names are full of '_', which LIKE
        # reads as a wildcard.
        find = "instr" if mark == "?" else "strpos"
        tests = (
            [f"key = {mark}" for _ in keys]
            + [f"substr(key, 1, {mark}) = {mark}" for _ in key_prefixes]
            + [f"{find}(':' || delivery_id || ':', {mark}) > 0" for _ in delivery_parts]
        )
        where += f" AND ({' OR '.join(tests)})"
        params += [*keys, *(x for prefix in key_prefixes for x in (len(prefix), prefix))]
        params += [f":{part}:" for part in delivery_parts]
    return where, params


def state_counts(rows: Sequence[tuple[str, int]]) -> dict[str, int]:
    """``(state, count)`` rows as :meth:`JobStorage.counts` answers: every state of :data:`STATES`, zeros included."""
    result = dict.fromkeys(STATES, 0)
    result.update({state: int(n) for state, n in rows})
    return result


class StoreMethods:
    """The :class:`JobStorage` methods every store writes alike.

    A store gives them ``clock`` (Unix seconds, the default of every ``now``; None on a
    store that reads its database server's clock instead), ``enqueue_many`` and
    ``_settle(job_id, state, now, *, outcome, error, not_before_in)``, which moves one
    of its running jobs to ``state`` (due ``not_before_in`` seconds from now) in one
    statement.
    """

    clock: Callable[[], float] | None

    def _at(self, now: float | None) -> Any:
        """``now``, else the store's ``clock()``, else None (the database's clock, read in SQL)."""
        if now is not None:
            return now
        return self.clock() if self.clock is not None else None

    def enqueue(
        self,
        delivery_id: str,
        event: str,
        key: str | None,
        payload: bytes,
        *,
        installation_id: int | None,
        action: str | None,
        now: float | None = None,
        delay: float = 0.0,
    ) -> bool:
        """Queue a webhook delivery, due ``delay`` seconds from now; return False (writing nothing) if ``delivery_id`` is known.

        The row is committed when this returns, so the webhook may answer 2xx.
        ``delivery_id`` and ``event`` are the ``X-GitHub-Delivery``/``X-GitHub-Event``
        headers ("Webhook events and payloads"), ``payload`` the raw body. ``key`` None
        (a delivery about no pull request, e.g. ``installation``) gives the job a key of
        its own, ``"delivery:<delivery_id>"``, so it waits for nothing.
        Raises ``ValueError`` for an empty ``delivery_id``, ``event`` or ``key`` or a
        ``payload`` that is not bytes.
        """
        delivery = QueuedDelivery(delivery_id, event, key, payload, installation_id=installation_id, action=action)
        return self.enqueue_many([delivery], now=now, delay=delay)[0]

    def complete(self, job_id: int, *, outcome: str = SUCCEEDED, reason: str | None = None, now: float | None = None) -> None:
        """Mark a running job ``done`` with ``outcome`` (``succeeded`` or ``given_up``) and ``reason``.

        ``reason`` is kept in the job's ``error`` column: why it was given up, or for a
        succeeded job what its handler did (``created``, ``edited``, ``queued_2``...).
        """
        if outcome not in (SUCCEEDED, GIVEN_UP):
            raise ValueError(f"outcome must be {SUCCEEDED!r} or {GIVEN_UP!r}, not {outcome!r}")
        self._settle(job_id, "done", now, outcome=outcome, error=reason)

    def retry(self, job_id: int, *, delay: float, error: str | None, now: float | None = None) -> None:
        """Put a running job back in the queue, due ``delay`` seconds from ``now``, recording ``error``."""
        self._settle(job_id, "queued", now, not_before_in=max(0.0, delay), error=error)

    def park(self, job_id: int, *, error: str, now: float | None = None) -> None:
        """Set a running job aside (``parked``) with its last ``error`` until ``retry_parked``."""
        self._settle(job_id, "parked", now, error=error)


class JobStore(StoreMethods):
    """The ``jobs`` table: queueing, claiming and settling jobs.

    Every method is one short SQLite transaction (well under a millisecond with WAL),
    safe to call from the event loop or from worker threads; a lock serialises use of
    the connection. ``now`` arguments default to ``clock()`` (Unix seconds).
    Database failures raise ``sqlite3.Error``.
    """

    def __init__(self, conn: sqlite3.Connection, *, clock: Callable[[], float] = time.time):
        """Wrap an open connection (see :func:`bot.app.db.open_database`) and migrate the ``jobs`` tables."""
        self.conn = conn
        self.clock = clock
        self._lock = threading.Lock()
        with self._lock:
            migrate(conn, "jobs", MIGRATIONS)

    @classmethod
    def open(cls, path: str | None = None, *, clock: Callable[[], float] = time.time) -> JobStore:
        """Open the store in the database at ``path`` (default ``$PRGUIDE_DB`` or ``prguide.db``)."""
        return cls(open_database(path), clock=clock)

    def close(self) -> None:
        """Close the connection; jobs still ``running`` are taken back by the next start."""
        with self._lock:
            self.conn.close()

    def enqueue_many(
        self, deliveries: Sequence[QueuedDelivery], *, now: float | None = None, delay: float = 0.0
    ) -> list[bool]:
        """Queue several deliveries in one transaction, due ``delay`` seconds from now (see :meth:`enqueue`).

        Returns, in order, whether each was queued (False: its delivery id was already
        known, including earlier in ``deliveries``). All or nothing: raises
        ``sqlite3.Error`` after rolling the whole batch back.
        """
        at = self._at(now)
        rows = [(_row(d, at, delay), bytes(d.payload)) for d in deliveries]
        if not rows:
            return []
        results = []
        with self._lock:
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                for row, payload in rows:
                    inserted = self.conn.execute(_ENQUEUE, row).fetchone()
                    if inserted is not None:
                        self.conn.execute(_ENQUEUE_PAYLOAD, (inserted[0], payload))
                    results.append(inserted is not None)
                self.conn.execute("COMMIT")
            except BaseException:
                self.conn.execute("ROLLBACK")
                raise
        return results

    def claim(self, now: float | None = None) -> Job | None:
        """Mark the next runnable job ``running`` (counting an attempt) and return it.

        Runnable: ``queued``, due (``not_before <= now``), the oldest unfinished job of
        its key, and no job of its key running. Among those, live jobs before background
        ones (``priority``), then the earliest due, then the earliest queued. Returns
        None when nothing is runnable.
        """
        at = self._at(now)
        with self._lock:
            first = self._first_runnable(at, _CLAIM_ORDER)
            if first is None:
                return None
            rows = self.conn.execute(_CLAIM, {"id": first[0], "now": at}).fetchall()
            if not rows:  # pragma: no cover - one connection, under the lock: nothing changes in between
                return None
            payload = self.conn.execute("SELECT body FROM job_payloads WHERE job_id = ?", (rows[0][0],)).fetchone()
        return _job(rows[0], bytes(payload[0]) if payload is not None else b"")

    def _first_runnable(self, due: float, order: str) -> tuple[int, float] | None:
        """``(id, not_before)`` of the first runnable job in ``order`` among those due by ``due``, or None."""
        candidates = self.conn.execute(_OLDEST.format(order=order), {"due": due}).fetchall()
        blocked: dict[str, int] = {}  # key -> id of a job of it that cannot start
        for job_id, key, not_before in candidates:
            if job_id > blocked.get(key, job_id):
                continue  # a job of this key queued earlier cannot start: this one waits too
            if self.conn.execute(_RUNNABLE, {"key": key, "id": job_id}).fetchone()[0]:
                return job_id, not_before
            blocked[key] = min(job_id, blocked.get(key, job_id))
        if len(candidates) < _CANDIDATES:
            return None  # every queued job due by then was looked at
        heads = _HEADS.format(order=", ".join(f"j.{column}" for column in order.split(", ")))
        row = self.conn.execute(heads, {"due": due}).fetchone()
        return (row[0], row[1]) if row is not None else None

    def supersede(self, job: Job, *, now: float | None = None) -> tuple[str, int] | None:
        """End ``job``'s work early if a later queued job has its key, event and action.

        Such a job will redo ``job``'s work from fresher data (redelivery storms, a
        merge event delivered twice under different ids), and so would every queued
        job of that kind in between: those are marked ``done`` at once, with outcome
        :data:`SUPERSEDED`, in one statement instead of each being claimed and run.
        Returns the newest such job's delivery id and how many jobs in between were
        ended, or None when nothing supersedes ``job``. ``job`` itself is left to its
        caller.
        """
        at = self._at(now)
        with self._lock:
            newest = self.conn.execute(
                "SELECT id, delivery_id FROM jobs WHERE key = ? AND state = 'queued' AND id > ? AND event = ?"
                " AND action IS ? ORDER BY id DESC LIMIT 1",
                (job.key, job.id, job.event, job.action),
            ).fetchone()
            if newest is None:
                return None
            ended = self.conn.execute(
                "UPDATE jobs SET state = 'done', outcome = ?, error = ?, updated_at = ?"
                " WHERE key = ? AND state = 'queued' AND id > ? AND id < ? AND event = ? AND action IS ?",
                (SUPERSEDED, f"superseded by delivery {newest[1]}", at, job.key, job.id, newest[0], job.event, job.action),
            ).rowcount
        return newest[1], ended

    def next_due(self) -> float | None:
        """When the earliest job that is only waiting for its time becomes due (Unix s), or None.

        Jobs waiting behind a running job of their key do not count: that job's
        completion is what wakes the pool for them.
        """
        with self._lock:
            first = self._first_runnable(math.inf, _DUE_ORDER)
        return first[1] if first is not None else None

    def due_in(self, now: float | None = None) -> float | None:
        """Seconds until :meth:`next_due` by this store's clock (0 when overdue), or None."""
        due = self.next_due()
        return None if due is None else max(0.0, due - self._at(now))

    def holds(self, job_id: int, fence: int, *, now: float | None = None) -> bool:
        """True while job ``job_id`` is ``running`` under the claim that gave it ``fence``.

        False once it was settled, put back, cancelled or claimed again. One process owns
        the file, so there is no lease to run out here (``now`` is unused).
        """
        with self._lock:
            row = self.conn.execute(
                "SELECT 1 FROM jobs WHERE id = ? AND state = 'running' AND fence = ?", (job_id, fence)
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
        """End the unfinished work of an installation: its ``queued``, ``running`` and ``parked``
        jobs become ``done`` with outcome :data:`CANCELLED` and ``reason``; returns how many.

        With ``keys``, ``key_prefixes`` or ``delivery_parts``, only jobs whose key is one of
        ``keys`` or starts with one of ``key_prefixes``, or whose delivery id has one of
        ``delivery_parts`` between its ``:`` (``backfill:D:owner/repo:page:2`` has
        ``owner/repo``): a repository's work, on its own keys or on a key it shares with
        other repositories' work. ``keep``: a job id left alone
        (the job asking). ``deliveries_after``: a job id; GitHub's deliveries queued after it
        (events not starting with :data:`INTERNAL_EVENT_PREFIX`) are left alone, as they came
        after what this cancellation is for (an ``installation.unsuspend``, merges after it).
        A cancelled running job loses its claim (:meth:`holds` is
        False), so it writes nothing more; its run's own settling is then a no-op.
        """
        at = self._at(now)
        where, params = _cancel_filter(installation_id, keys, key_prefixes, delivery_parts, keep, "?", deliveries_after)
        with self._lock:
            return self.conn.execute(
                f"UPDATE jobs SET state = 'done', outcome = ?, error = ?, updated_at = ? WHERE {where}",
                (CANCELLED, reason, at, *params),
            ).rowcount

    def read_checkpoint(self, name: str) -> Any:
        """The JSON value last written under ``name`` by :meth:`write_checkpoint`, or None."""
        with self._lock:
            row = self.conn.execute("SELECT value FROM checkpoints WHERE name = ?", (name,)).fetchone()
        return None if row is None else json.loads(row[0])

    def write_checkpoint(self, name: str, value: Any, *, now: float | None = None) -> None:
        """Keep ``value`` (JSON-serialisable) under ``name``, replacing what was there."""
        text = json.dumps(value, sort_keys=True)
        at = self._at(now)
        with self._lock:
            self.conn.execute(
                "INSERT INTO checkpoints (name, value, updated_at) VALUES (?, ?, ?)"
                " ON CONFLICT (name) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at",
                (name, text, at),
            )

    def release(self, job_id: int, *, now: float | None = None, delay: float = 0.0, reason: str | None = None) -> None:
        """Put a running job back without counting its attempt: due now (shutdown), or ``delay``
        seconds from now (a wait for GitHub's rate limit), with ``reason`` as its error."""
        at = self._at(now)
        with self._lock:
            self.conn.execute(
                "UPDATE jobs SET state = 'queued', attempts = max(attempts - 1, 0), not_before = ?, updated_at = ?,"
                " error = coalesce(?, error) WHERE id = ? AND state = 'running'",
                (at + max(0.0, delay), at, reason, job_id),
            )

    def _settle(
        self,
        job_id: int,
        state: str,
        now: float | None,
        *,
        outcome: str | None = None,
        error: str | None = None,
        not_before_in: float = 0.0,
    ) -> None:
        at = self._at(now)
        with self._lock:
            self.conn.execute(
                "UPDATE jobs SET state = ?, outcome = ?, error = ?, not_before = ?, updated_at = ?"
                " WHERE id = ? AND state = 'running'",
                (state, outcome, error, at + not_before_in, at, job_id),
            )

    def renew(self, job_ids: Sequence[int], *, now: float | None = None) -> int:
        """Nothing to renew: one process owns the file, so its running jobs need no lease; returns 0."""
        return 0

    def listen(self, callback: Callable[[], Any]) -> None:
        """No other process queues jobs on this file: nothing to listen to; returns None."""
        return None

    def requeue_running(self, *, max_attempts: int | None = None, now: float | None = None) -> int:
        """Take back jobs left ``running`` by a stopped process; return how many.

        They are queued again, due now, keeping the interrupted attempt in their count
        so a job that keeps crashing the process is parked once it has used
        ``max_attempts`` (when given). Call only while no pool is running on this file.
        """
        at = self._at(now)
        with self._lock:
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                parked = 0
                if max_attempts is not None:
                    parked = self.conn.execute(
                        "UPDATE jobs SET state = 'parked', updated_at = ?,"
                        " error = 'interrupted while running ' || attempts || ' times'"
                        " || coalesce(char(10) || 'last error: ' || error, '')"
                        " WHERE state = 'running' AND attempts >= ?",
                        (at, max_attempts),
                    ).rowcount
                queued = self.conn.execute(
                    "UPDATE jobs SET state = 'queued', not_before = ?, updated_at = ? WHERE state = 'running'",
                    (at, at),
                ).rowcount
                self.conn.execute("COMMIT")
            except BaseException:
                self.conn.execute("ROLLBACK")
                raise
        if parked:
            log.warning("parked %d job(s) that were interrupted %s times", parked, max_attempts)
        return parked + queued

    def retry_parked(self, job_id: int | None = None, *, now: float | None = None) -> int:
        """Queue parked jobs again (one by id, or all), with a fresh attempt count; return how many."""
        at = self._at(now)
        sql = "UPDATE jobs SET state = 'queued', attempts = 0, not_before = ?, updated_at = ? WHERE state = 'parked'"
        params: tuple = (at, at)
        if job_id is not None:
            sql += " AND id = ?"
            params += (job_id,)
        with self._lock:
            return self.conn.execute(sql, params).rowcount

    def counts(self) -> dict[str, int]:
        """Number of jobs in each state: ``{"queued": n, "running": n, "done": n, "parked": n}``."""
        with self._lock:
            rows = self.conn.execute("SELECT state, count(*) FROM jobs GROUP BY state").fetchall()
        return state_counts(rows)

    def oldest_queued_age(self, now: float | None = None) -> float | None:
        """Seconds since the oldest still-queued job was received, or None when none is queued."""
        at = self._at(now)
        with self._lock:
            oldest = self.conn.execute("SELECT min(created_at) FROM jobs WHERE state = 'queued'").fetchone()[0]
        return None if oldest is None else max(0.0, at - oldest)

    def parked(self, limit: int = 100) -> list[ParkedJob]:
        """The parked jobs, oldest first, at most ``limit``."""
        with self._lock:
            rows = self.conn.execute(
                "SELECT id, delivery_id, event, action, key, attempts, error, created_at, updated_at"
                " FROM jobs WHERE state = 'parked' ORDER BY id LIMIT ?",
                (limit,),
            ).fetchall()
        return [ParkedJob(*row) for row in rows]

    def get(self, job_id: int) -> dict[str, Any] | None:
        """The whole row of one job as a dict (payload excluded), or None."""
        with self._lock:
            row = self.conn.execute(
                "SELECT id, delivery_id, event, action, key, installation_id, state, attempts,"
                " not_before, created_at, updated_at, outcome, error, priority FROM jobs WHERE id = ?",
                (job_id,),
            ).fetchone()
        return dict(row) if row is not None else None

    def by_delivery(self, delivery_id: str) -> dict[str, Any] | None:
        """The row of the job queued for ``delivery_id`` (see :meth:`get`), or None (never queued, or pruned)."""
        with self._lock:
            row = self.conn.execute(
                "SELECT id, delivery_id, event, action, key, installation_id, state, attempts,"
                " not_before, created_at, updated_at, outcome, error FROM jobs WHERE delivery_id = ?",
                (delivery_id,),
            ).fetchone()
        return dict(row) if row is not None else None

    def prune(
        self,
        now: float | None = None,
        *,
        keep_payloads: float = KEEP_PAYLOADS_S,
        keep_deliveries: float = KEEP_DELIVERIES_S,
        max_done: int = MAX_DONE_ROWS,
    ) -> int:
        """Bound the table: drop payloads of done jobs older than ``keep_payloads`` seconds,
        delete done jobs older than ``keep_deliveries`` seconds and all but the newest
        ``max_done`` done jobs. Queued, running and parked jobs are never touched.
        Returns the number of rows deleted.
        """
        at = self._at(now)
        with self._lock:
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                self.conn.execute(
                    "DELETE FROM job_payloads WHERE job_id IN"
                    " (SELECT id FROM jobs WHERE state = 'done' AND updated_at < ?)",
                    (at - keep_payloads,),
                )
                deleted = self.conn.execute(
                    "DELETE FROM jobs WHERE state = 'done' AND updated_at < ?", (at - keep_deliveries,)
                ).rowcount
                deleted += self.conn.execute(
                    "DELETE FROM jobs WHERE state = 'done' AND id <= ("
                    " SELECT id FROM jobs WHERE state = 'done' ORDER BY id DESC LIMIT 1 OFFSET ?)",
                    (max_done,),
                ).rowcount
                self.conn.execute("COMMIT")
            except BaseException:
                self.conn.execute("ROLLBACK")
                raise
        return deleted
