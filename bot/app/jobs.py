"""The durable job queue (:mod:`bot.app.jobstore`) and the worker pool (:mod:`bot.app.workers`), in one name."""

from bot.app.jobs_protocol import JobStorage
from bot.app.jobstore import (
    CANCELLED,
    GIVEN_UP,
    KEEP_DELIVERIES_S,
    KEEP_PAYLOADS_S,
    MAX_DONE_ROWS,
    MIGRATIONS,
    PRIORITY_BACKGROUND,
    PRIORITY_LIVE,
    STATES,
    SUCCEEDED,
    SUPERSEDED,
    Job,
    JobStore,
    ParkedJob,
    QueuedDelivery,
)
from bot.app.workers import Handler, WorkerPool, exponential_backoff

__all__ = [
    "CANCELLED",
    "GIVEN_UP",
    "KEEP_DELIVERIES_S",
    "KEEP_PAYLOADS_S",
    "MAX_DONE_ROWS",
    "MIGRATIONS",
    "PRIORITY_BACKGROUND",
    "PRIORITY_LIVE",
    "STATES",
    "SUCCEEDED",
    "SUPERSEDED",
    "Handler",
    "Job",
    "JobStorage",
    "JobStore",
    "ParkedJob",
    "QueuedDelivery",
    "WorkerPool",
    "exponential_backoff",
]
