"""How a job tells the worker pool what to do with a failure.

Anything else a job raises is treated as unexpected: retried with backoff and,
after the last attempt, parked with its error for a human to look at.
"""

from __future__ import annotations

import sys


class RetryLater(Exception):
    """The job should run again after ``delay`` seconds (``None``: the pool's backoff).

    Raised for GitHub rate limits (``retry-after`` / ``x-ratelimit-reset``), 5xx answers,
    time-outs and connection errors that outlasted the client's own retries.
    """

    def __init__(self, reason: str, delay: float | None = None):
        super().__init__(reason)
        self.reason = reason
        self.delay = delay


class RateLimited(RetryLater):
    """GitHub's rate limit holds the job back for ``delay`` seconds; not a failure.

    Raised when the installation's budget is spent (``x-ratelimit-remaining: 0`` until
    ``x-ratelimit-reset``, a ``retry-after``, or the share a background job may use is
    gone), whether GitHub refused a request or prguide saw it coming and sent none. The
    worker pool queues the job again after ``delay`` without counting the attempt, so
    waiting for a reset never parks a job. ``spread``: the pool adds jitter, so jobs
    held back together do not all come back in the same second; False when ``delay``
    is already a slot of the job's own (backfill pacing).
    """

    def __init__(self, reason: str, delay: float, *, spread: bool = True):
        super().__init__(reason, max(0.0, float(delay)))
        self.spread = spread


class GiveUp(Exception):
    """The job cannot and need not be done; it ends cleanly without retry.

    Example: GitHub answers 404 because the app was uninstalled or the repository deleted.
    """

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


def database_errors() -> tuple[type[BaseException], ...]:
    """What a job store or shared state raises when its database fails: catch these to answer 503.

    ``sqlite3.Error``, plus ``psycopg.Error`` (a pool time-out included) once the
    PostgreSQL driver is loaded. A function, not a constant, so that the driver is not
    imported on SQLite just to name its errors: no psycopg error can be raised before
    psycopg is imported, and ``except database_errors():`` is evaluated only when an
    exception is being matched.
    """
    import sqlite3

    psycopg = sys.modules.get("psycopg")
    if psycopg is None:
        return (sqlite3.Error,)
    return (sqlite3.Error, psycopg.Error)
