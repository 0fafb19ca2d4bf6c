"""Fencing GitHub writes: a job that no longer holds its claim on the queue writes nothing.

A job runs under a claim: its row is ``running`` with the *fence* (a number that grows
with every claim of the row) it was claimed with, and on PostgreSQL a lease the worker
pool keeps renewing. A replica that stalled past its lease, or a job whose
installation's work was cancelled, may still be running when another replica has taken
its job over; if both wrote to GitHub, a pull request would get two comments. So the
worker pool binds a check of the claim around each job's run (:func:`fenced`), and the
publisher (:mod:`bot.app.publish`) awaits :func:`before_write` right before each
GitHub write: a job whose claim is gone raises :class:`LeaseLost` instead of writing.

The check travels in a :class:`contextvars.ContextVar`, so it reaches every write the
job's task makes (tasks and threads it starts copy it) without the features passing
it along, and code outside a job (the command line) writes unchecked.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from bot.app.errors import RetryLater

#: ``check()`` -> True while the running job still holds its claim.
ClaimCheck = Callable[[], Awaitable[bool]]

_CHECK: ContextVar[ClaimCheck | None] = ContextVar("prguide_claim_check", default=None)


class LeaseLost(RetryLater):
    """The job's claim on the queue is gone (taken over, cancelled or ended): it must not write.

    A :class:`~bot.app.errors.RetryLater`: the worker pool puts the job back when it is
    still this replica's (its lease was only running short), and settles nothing when
    another replica or a cancellation has it.
    """

    def __init__(self, reason: str):
        super().__init__(reason, delay=0.0)


@contextmanager
def fenced(check: ClaimCheck) -> Iterator[None]:
    """Within the block (and tasks it starts), :func:`before_write` asks ``check()`` first."""
    token = _CHECK.set(check)
    try:
        yield
    finally:
        _CHECK.reset(token)


async def before_write(what: str) -> None:
    """Raise :class:`LeaseLost` when the running job no longer holds its claim; call right before a write.

    ``what`` names the write for the error (``"POST .../comments"``). Outside a job
    (nothing bound by :func:`fenced`) it returns at once. The check's own errors (the
    database unreachable) propagate: a write that cannot be shown safe is not sent.
    """
    check = _CHECK.get()
    if check is not None and not await check():
        raise LeaseLost(f"the job no longer holds its claim on the queue; {what} not sent")
