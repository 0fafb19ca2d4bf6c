"""What the platform needs of a job store: :class:`JobStorage`.

:class:`bot.app.jobstore.JobStore` (SQLite, one process) and
:class:`bot.app.pgjobs.PgJobStore` (PostgreSQL, shared by replicas) provide it; the
worker pool, the intake, the server, the admin routes and the features call a store only
through it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

from bot.app.jobstore import SUCCEEDED, Job, ParkedJob, QueuedDelivery


class JobStorage(Protocol):
    """What the platform needs of a job store; :class:`bot.app.jobstore.JobStore` is the SQLite one.

    Every method is one short transaction. Time is the store's own: ``now`` (Unix
    seconds) only overrides it in tests, and callers give due times as delays, so
    replicas whose clocks disagree still agree on leases and due times (PostgreSQL
    reads the database server's clock). A store raises its database's error when the
    database fails (``sqlite3.Error`` for :class:`~bot.app.jobstore.JobStore`); the
    webhook answers 503 then and the worker pool tries again later. A store whose calls
    wait on a database server says so with a ``blocking = True`` attribute: the
    platform then calls it from a worker thread, never on the event loop
    (:func:`bot.app.offload.run_store`).
    """

    def enqueue_many(
        self, deliveries: Sequence[QueuedDelivery], *, now: float | None = None, delay: float = 0.0
    ) -> list[bool]:
        """Queue the deliveries in one transaction, due ``delay`` seconds from now; per delivery,
        True when new (False: a redelivery)."""
        ...

    def claim(self, now: float | None = None) -> Job | None:
        """Mark the next runnable job ``running`` (live before background, then oldest due first; one per
        key) and return it."""
        ...

    def holds(self, job_id: int, fence: int, *, now: float | None = None) -> bool:
        """Whether the run that claimed job ``job_id`` with ``fence`` (:attr:`Job.fence`) still holds
        it (and, on a store with leases, has enough of its lease left to write)."""
        ...

    def supersede(self, job: Job, *, now: float | None = None) -> tuple[str, int] | None:
        """End ``job`` when a later queued job of its key and event does its work; who, and how many were ended."""
        ...

    def next_due(self) -> float | None:
        """When the earliest queued job falls due (the store's clock), or ``None`` for an empty queue."""
        ...

    def due_in(self, now: float | None = None) -> float | None:
        """Seconds until the earliest queued job falls due by the store's clock (0: overdue), or ``None``."""
        ...

    def complete(self, job_id: int, *, outcome: str = SUCCEEDED, reason: str | None = None, now: float | None = None) -> None:
        """A running job is ``done`` with ``outcome``."""
        ...

    def retry(self, job_id: int, *, delay: float, error: str | None, now: float | None = None) -> None:
        """A running job is ``queued`` again, due ``delay`` seconds from now."""
        ...

    def park(self, job_id: int, *, error: str, now: float | None = None) -> None:
        """A running job is ``parked`` with its last error."""
        ...

    def release(self, job_id: int, *, now: float | None = None, delay: float = 0.0, reason: str | None = None) -> None:
        """A running job is ``queued`` again, due ``delay`` seconds from now by the store's clock (0: an
        interrupted job, at once; else e.g. a wait for GitHub's rate limit), its attempt not counted;
        ``reason`` becomes its error."""
        ...

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
        """End an installation's unfinished jobs (only those of some keys or naming some ``:``-separated
        parts of their delivery ids, when given), except ``keep`` and GitHub's deliveries queued after
        job ``deliveries_after``; how many."""
        ...

    def requeue_running(self, *, max_attempts: int | None = None, now: float | None = None) -> int:
        """Take back jobs a previous process left ``running``; how many."""
        ...

    def renew(self, job_ids: Sequence[int], *, now: float | None = None) -> int:
        """Extend this process's lease on its running jobs (a heartbeat); how many it still holds."""
        ...

    def listen(self, callback: Callable[[], Any]) -> Callable[[], None] | None:
        """Call ``callback()`` (from any thread) when another process queues or settles a job;
        returns a function that stops listening, or None when there is nothing to listen to."""
        ...

    def retry_parked(self, job_id: int | None = None, *, now: float | None = None) -> int:
        """Queue parked jobs (one, or all) again; how many."""
        ...

    def read_checkpoint(self, name: str) -> Any:
        """The JSON value kept under ``name``, or ``None``."""
        ...

    def write_checkpoint(self, name: str, value: Any, *, now: float | None = None) -> None:
        """Keep the JSON value ``value`` under ``name``."""
        ...

    def counts(self) -> dict[str, int]:
        """Jobs per state (every state of :data:`bot.app.jobstore.STATES`, zeros included)."""
        ...

    def oldest_queued_age(self, now: float | None = None) -> float | None:
        """Seconds the oldest queued job has waited, or ``None``."""
        ...

    def parked(self, limit: int = 100) -> list[ParkedJob]:
        """The parked jobs, oldest first."""
        ...

    def by_delivery(self, delivery_id: str) -> dict[str, Any] | None:
        """The job queued for a delivery id: ``{id, delivery_id, event, action, key, installation_id, state,
        attempts, not_before, created_at, updated_at, outcome, error}``, or ``None``."""
        ...

    def prune(self, now: float | None = None, **limits: Any) -> int:
        """Delete old finished jobs (``limits``: how long to keep what, as :meth:`bot.app.jobstore.JobStore.prune`); how many."""
        ...

    def close(self) -> None:
        """Release the database."""
        ...
