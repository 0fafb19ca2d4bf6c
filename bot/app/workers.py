"""The worker pool: runs queued jobs, one per key, retries and parks failures, drains on stop.

It reads and settles jobs through a :class:`bot.app.jobs_protocol.JobStorage` (the
SQLite :class:`~bot.app.jobstore.JobStore` or :class:`~bot.app.pgjobs.PgJobStore`)
and never touches the database itself. One :class:`WorkerPool` per store: at start it
takes back every ``running`` job a previous process left.

Time on the queue is the store's: the pool never hands its own clock to the store
(replicas' clocks disagree; the PostgreSQL store reads the database server's), it asks
the store how long to wait (``due_in``). Each job runs fenced
(:func:`bot.app.fencing.fenced`): before every GitHub write the publisher asks the store
whether the run still holds the claim it started with (``holds``).
"""

from __future__ import annotations

import asyncio
import functools
import logging
import random
import time
import traceback
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from bot.app.errors import GiveUp, RateLimited, RetryLater, database_errors
from bot.app.fencing import LeaseLost, fenced
from bot.app.jobs_protocol import JobStorage
from bot.app.jobstore import GIVEN_UP, SUCCEEDED, Job
from bot.app.malloc import trim
from bot.app.offload import run_store

# The pool's log lines keep the logger name they always had: dashboards filter on it.
log = logging.getLogger("bot.app.jobs")


def exponential_backoff(attempt: int, *, base: float = 30.0, cap: float = 1800.0) -> float:
    """Seconds to wait after failed attempt number ``attempt`` (1-based).

    ``base * 2**(attempt-1)`` capped at ``cap``, of which a random half is taken away
    ("equal jitter") so jobs that failed together do not retry together:
    15-30 s, 30-60 s, 60-120 s, ... up to 15-30 min.
    """
    full = min(cap, base * 2 ** max(0, attempt - 1))
    return full / 2 + random.uniform(0, full / 2)


#: Jobs held back by a rate limit come back within this share of their wait ...
RATE_LIMIT_SPREAD = 0.1
#: ... but at least this many seconds apart and at most this many (seconds).
MIN_SPREAD_S, MAX_SPREAD_S = 5.0, 60.0


def rate_limit_spread(delay: float) -> float:
    """Seconds after a wait of ``delay`` s within which the jobs held back by it come back:
    :data:`RATE_LIMIT_SPREAD` of it, from :data:`MIN_SPREAD_S` to :data:`MAX_SPREAD_S`."""
    return min(MAX_SPREAD_S, max(MIN_SPREAD_S, delay * RATE_LIMIT_SPREAD))


def rate_limit_wait(delay: float, rand: float) -> float:
    """Seconds a job held back by a rate limit for ``delay`` s waits: ``delay`` plus jitter.

    The jitter (``rand`` in [0, 1) times :func:`rate_limit_spread`) keeps the jobs that
    met the same reset from all coming back in the same second; at least one second in
    any case.
    """
    return max(1.0, delay + rand * rate_limit_spread(delay))


#: Runs one job; may return a short word saying what it did (``created``), recorded with the job.
Handler = Callable[[Job], Awaitable[Any]]


def job_fields(job: Job) -> dict[str, Any]:
    """Who a job is, as structured log fields: ``delivery``, ``event``, ``action``,
    ``installation``, ``key`` and ``attempt`` (shared by the pool's and the job's log lines)."""
    return {
        "delivery": job.delivery_id,
        "event": job.event,
        "action": job.action,
        "installation": job.installation_id,
        "key": job.key,
        "attempt": job.attempts,
    }


def _fields(job: Job, state: str, **more: Any) -> dict[str, Any]:
    """A job's structured log fields: who it is and the ``state`` it moves to."""
    return {"job_id": job.id, **job_fields(job), "state": state, **more}


class WorkerPool:
    """Runs queued jobs with ``handler``, at most ``concurrency`` at once, one per key.

    A job whose handler returns is ``done`` (outcome ``succeeded``); a string it returns
    (what it did, such as ``created``) is recorded as the job's reason.

    Failure policy: :class:`~bot.app.errors.RateLimited` is no failure: the job is queued
    again after its ``delay`` (plus jitter, :func:`rate_limit_wait`) and the attempt is
    not counted. :class:`~bot.app.errors.RetryLater` queues the job again after its
    ``delay`` (or ``backoff(attempt)`` when None); :class:`~bot.app.errors.GiveUp` ends it
    (``done``, outcome ``given_up``, the reason recorded); any other exception is logged
    with its traceback and retried after ``backoff(attempt)``. A job whose
    ``max_attempts``-th attempt fails is ``parked`` with its last error.

    A job whose claim is gone when it is about to write to GitHub
    (:class:`~bot.app.fencing.LeaseLost`: another replica took it over, or its
    installation's work was cancelled) ends without writing; it is put back only if it
    is still this pool's.

    The pool sleeps while idle: it wakes on :meth:`notify`, when a job finishes and
    when the earliest retry falls due (the store says how long that is). ``clock``
    (Unix seconds: how often to prune) and ``sleep`` are injectable for tests; ``sleep``
    also times :meth:`stop`'s grace period and the heartbeat.
    """

    def __init__(
        self,
        store: JobStorage,
        handler: Handler,
        *,
        concurrency: int = 4,
        max_attempts: int = 6,
        backoff: Callable[[int], float] = exponential_backoff,
        clock: Callable[[], float] = time.time,
        sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
        prune_every: float = 3600.0,
        prune_options: Mapping[str, Any] | None = None,
    ):
        """Raises ``ValueError`` when ``concurrency`` or ``max_attempts`` is below 1."""
        if concurrency < 1 or max_attempts < 1:
            raise ValueError("concurrency and max_attempts must be at least 1")
        self.store = store
        self.handler = handler
        self.concurrency = concurrency
        self.max_attempts = max_attempts
        self.backoff = backoff
        self.clock = clock
        self.sleep = sleep
        self.prune_every = prune_every
        self.prune_options = dict(prune_options or {})
        self._running: dict[asyncio.Task, Job] = {}
        # job id -> the fence of this pool's latest claim of it (a run outliving its lease
        # here and claimed again by this pool goes on under the new claim).
        self._fences: dict[int, int] = {}
        self._wake: asyncio.Event | None = None
        self._dispatcher: asyncio.Task | None = None
        self._stopping = False
        self._last_prune: float | None = None
        self._passes = 0
        self._idle_pass = -1
        self._pass_done: asyncio.Condition | None = None
        self._poll_interval: float | None = getattr(store, "poll_interval", None)
        self._lease: float | None = getattr(store, "lease", None)
        self._heartbeat: asyncio.Task | None = None
        self._in_pass = False
        self._unlisten: Callable[[], None] | None = None

    async def _call(self, method: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        # A store on a database server (PostgreSQL) waits on the network: its calls go
        # to a thread. The SQLite store answers in microseconds and is called directly.
        return await run_store(self.store, method, *args, **kwargs)

    @property
    def running_jobs(self) -> list[Job]:
        """The jobs being handled right now."""
        return list(self._running.values())

    def start(self) -> int:
        """Take back jobs a previous process left ``running`` and start working; return how many were taken back.

        Must be called from the running event loop.
        """
        if self._dispatcher is not None:
            raise RuntimeError("the worker pool is already started")
        self._wake = asyncio.Event()
        self._pass_done = asyncio.Condition()
        self._stopping = False
        # Called once at start-up, before the server accepts connections: nothing waits on the loop yet.
        resumed = self.store.requeue_running(max_attempts=self.max_attempts)
        if resumed:
            log.info("resuming %d job(s) left running by the previous process", resumed)
        self._dispatcher = asyncio.create_task(self._dispatch(), name="prguide-jobs-dispatcher")
        if self._lease:
            self._heartbeat = asyncio.create_task(self._renew_leases(self._lease), name="prguide-jobs-heartbeat")
        loop = asyncio.get_running_loop()
        self._unlisten = self.store.listen(lambda: loop.call_soon_threadsafe(self.notify))
        return resumed

    async def _renew_leases(self, lease: float) -> None:
        # Three renewals per lease: one lost to a slow database does not lose the job.
        while True:
            await self.sleep(lease / 3)
            ids = [job.id for job in self._running.values()]
            if not ids:
                continue
            try:
                await self._call(self.store.renew, ids)
            except database_errors():
                log.warning("cannot renew the lease of %d running job(s); trying again", len(ids), exc_info=True)

    def notify(self) -> None:
        """Wake the pool because a job was queued; call from the event loop's thread."""
        if self._wake is not None:
            self._wake.set()

    async def retry_parked(self, job_id: int | None = None) -> int:
        """Queue parked jobs again (see :meth:`JobStore.retry_parked`) and wake the pool; how many."""
        count = await self._call(self.store.retry_parked, job_id)
        self.notify()
        return count

    async def wait_idle(self) -> None:
        """Return once the pool has looked at the queue after this call and found nothing
        due and nothing running. Jobs scheduled for later do not keep it busy.
        """
        if self._pass_done is None or self._dispatcher is None:
            raise RuntimeError("the worker pool is not started")
        dispatcher = self._dispatcher
        # A pass already under way (awaiting a store in a thread) may have looked at the
        # queue before this call: only the pass after it counts.
        target = self._passes + (2 if self._in_pass else 1)
        self.notify()
        async with self._pass_done:
            await self._pass_done.wait_for(lambda: self._idle_pass >= target or dispatcher.done())

    async def stop(self, timeout: float = 25.0) -> list[Job]:
        """Stop claiming, give running jobs ``timeout`` seconds to finish, put back the rest.

        Returns the jobs that were interrupted and queued again; they run first after
        the next start. Safe to call twice.
        """
        if self._dispatcher is None:
            return []
        self._stopping = True
        self.notify()
        await asyncio.gather(self._dispatcher, return_exceptions=True)
        if self._unlisten is not None:
            unlisten, self._unlisten = self._unlisten, None
            await asyncio.to_thread(unlisten)
        pending = set(self._running)
        if pending:
            timer = asyncio.ensure_future(self.sleep(timeout))
            while pending and not timer.done():
                done, pending = await asyncio.wait(pending | {timer}, return_when=asyncio.FIRST_COMPLETED)
                pending.discard(timer)
            timer.cancel()
        interrupted = [self._running[t] for t in pending if t in self._running]
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
        if self._heartbeat is not None:
            self._heartbeat.cancel()
            await asyncio.gather(self._heartbeat, return_exceptions=True)
            self._heartbeat = None
        self._dispatcher = None
        if interrupted:
            log.warning("stopped with %d job(s) unfinished; they were queued again", len(interrupted))
        return interrupted

    async def _dispatch(self) -> None:
        assert self._wake is not None and self._pass_done is not None
        while not self._stopping:
            self._wake.clear()
            self._in_pass = True
            now = self.clock()
            timeout: float | None = None
            try:
                await self._maybe_prune(now)
                while len(self._running) < self.concurrency and not self._stopping:
                    job = await self._call(self.store.claim)
                    if job is None:
                        break
                    self._fences[job.id] = job.fence
                    if any(running.id == job.id for running in self._running.values()):
                        # Our own lease ran out (heartbeats failed) and this pool took the job
                        # back: it is still running here, so do not start it twice; the run
                        # goes on under the new claim.
                        log.warning("job %d outlived its lease here and was claimed again; it keeps running", job.id)
                        continue
                    task = asyncio.create_task(self._run(job), name=f"prguide-job-{job.id}")
                    self._running[task] = job
                    task.add_done_callback(self._finished)
                if len(self._running) < self.concurrency:
                    # How long, by the store's clock: this process's may disagree with it.
                    due_in = await self._call(self.store.due_in)
                    if due_in is not None:
                        timeout = max(due_in, 0.0)
                if self._poll_interval is not None:
                    # Other replicas' jobs unblock ours: notifications wake the pool,
                    # and this slow poll covers one that was lost.
                    timeout = self._poll_interval if timeout is None else min(timeout, self._poll_interval)
            except Exception:
                # Keep the pool alive through a locked or failing database (or a bug
                # here); the queue is durable, so nothing is lost by trying later.
                log.exception("cannot read the job queue; trying again in 5 s")
                timeout = 5.0
            self._passes += 1
            self._in_pass = False
            if not self._running and (timeout is None or timeout > 0):
                self._idle_pass = self._passes
                async with self._pass_done:
                    self._pass_done.notify_all()
            await self._wait(timeout)
        async with self._pass_done:
            self._pass_done.notify_all()

    async def _wait(self, timeout: float | None) -> None:
        assert self._wake is not None
        if timeout is None:
            await self._wake.wait()
            return
        waiter = asyncio.ensure_future(self._wake.wait())
        timer = asyncio.ensure_future(self.sleep(timeout))
        try:
            await asyncio.wait({waiter, timer}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            waiter.cancel()
            timer.cancel()

    async def _maybe_prune(self, now: float) -> None:
        if self._last_prune is not None and now - self._last_prune < self.prune_every:
            return
        self._last_prune = now
        deleted = await self._call(self.store.prune, **self.prune_options)
        if deleted:
            log.info("pruned %d finished job(s)", deleted)

    def _finished(self, task: asyncio.Task) -> None:
        job = self._running.pop(task, None)
        if job is not None:
            self._fences.pop(job.id, None)
        if self._wake is not None:
            self._wake.set()
        if not self._running:
            # Idle: what the last jobs freed goes back to the system now (bot.app.malloc.trim;
            # a few ms at most, and nothing else is running), not at the next build.
            trim(force=True)

    async def _holds(self, job: Job) -> bool:
        """Whether this pool's run of ``job`` still holds its (latest) claim."""
        return bool(await self._call(self.store.holds, job.id, self._fences.get(job.id, job.fence)))

    async def _run(self, job: Job) -> None:
        try:
            with fenced(functools.partial(self._holds, job)):
                done = await self.handler(job)
        except asyncio.CancelledError:
            log.info("job %d interrupted; queued again", job.id, extra=_fields(job, "queued"))
            await self._record(self.store.release, job.id)
            raise
        except RateLimited as exc:
            delay = rate_limit_wait(exc.delay, random.random()) if exc.spread else max(1.0, exc.delay)
            log.info(
                "job %d (%s, %s) waits %.0f s for GitHub's rate limit: %s", job.id, job.delivery_id, job.key, delay,
                exc.reason, extra=_fields(job, "queued", retry_in_s=round(delay, 3)),
            )
            await self._record(self.store.release, job.id, delay=delay, reason=f"RateLimited: {exc.reason}")
        except LeaseLost as exc:
            # Taken over or cancelled: settling is a no-op then. Still ours (the lease only
            # ran short): queued again at once.
            log.warning(
                "job %d (%s, %s) stopped before writing: %s", job.id, job.delivery_id, job.key, exc.reason,
                extra=_fields(job, "queued"),
            )
            await self._failed(job, f"LeaseLost: {exc.reason}", 0.0)
        except RetryLater as exc:
            delay = exc.delay if exc.delay is not None else self.backoff(job.attempts)
            await self._failed(job, f"RetryLater: {exc.reason}", delay)
        except GiveUp as exc:
            log.info(
                "job %d (%s %s, %s) given up: %s", job.id, job.event, job.delivery_id, job.key, exc.reason,
                extra=_fields(job, "done", outcome=GIVEN_UP),
            )
            await self._record(self.store.complete, job.id, outcome=GIVEN_UP, reason=exc.reason)
        except Exception:
            log.exception(
                "job %d (%s %s, %s) failed on attempt %d", job.id, job.event, job.delivery_id, job.key, job.attempts,
                extra=_fields(job, "running"),
            )
            await self._failed(job, traceback.format_exc(), self.backoff(job.attempts))
        else:
            log.debug("job %d done", job.id, extra=_fields(job, "done", outcome=SUCCEEDED))
            detail = done[:200] if isinstance(done, str) and done else None
            await self._record(self.store.complete, job.id, reason=detail)

    async def _failed(self, job: Job, error: str, delay: float) -> None:
        if job.attempts >= self.max_attempts:
            log.error(
                "job %d (%s, %s) parked after %d attempts", job.id, job.delivery_id, job.key, job.attempts,
                extra=_fields(job, "parked", error=error.strip().splitlines()[-1][:500]),
            )
            await self._record(self.store.park, job.id, error=error)
        else:
            log.info(
                "job %d (%s, %s) queued again in %.1f s after attempt %d", job.id, job.delivery_id, job.key, delay,
                job.attempts, extra=_fields(job, "queued", retry_in_s=round(delay, 3)),
            )
            await self._record(self.store.retry, job.id, delay=delay, error=error)

    async def _record(self, method: Callable[..., None], job_id: int, **kwargs: Any) -> None:
        # A job whose result cannot be written stays 'running' and is taken back at the
        # next start; the pool itself keeps going.
        try:
            await self._call(method, job_id, **kwargs)
        except database_errors():
            log.exception("cannot record the result of job %d; it will run again after a restart", job_id)
