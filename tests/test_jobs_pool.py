"""The worker pool: per-key order, concurrency, failure policy, restart and shutdown.

Time is virtual (:class:`VirtualTime`): nothing here sleeps for real. ``asyncio.timeout``
only guards against a hang if the pool were broken; no assertion depends on it.
"""

from __future__ import annotations

import asyncio
import random
import sqlite3
from collections import Counter, defaultdict

import pytest

from bot.app.db import open_database
from bot.app.errors import GiveUp, RetryLater
from bot.app.jobs import GIVEN_UP, SUCCEEDED, Job, JobStore, WorkerPool

T0 = 1_750_000_000.0
GUARD_S = 10


class VirtualTime:
    """A clock and ``sleep`` that only move when the test calls :meth:`advance`.

    With ``instant=True`` every sleep advances the clock by its delay and returns.
    """

    def __init__(self, start: float = T0):
        self.now = start
        self.instant = False
        self.requested: list[float] = []
        self._sleepers: list[tuple[float, asyncio.Future]] = []

    def clock(self) -> float:
        return self.now

    async def sleep(self, delay: float) -> None:
        self.requested.append(delay)
        if self.instant:
            self.now += delay
            return
        future = asyncio.get_running_loop().create_future()
        entry = (self.now + delay, future)
        self._sleepers.append(entry)
        try:
            await future
        finally:
            self._sleepers.remove(entry)

    async def advance(self, seconds: float) -> None:
        # Let timers the pool just created start sleeping, so they see the jump.
        for _ in range(3):
            await asyncio.sleep(0)
        self.now += seconds
        for deadline, future in list(self._sleepers):
            if deadline <= self.now and not future.done():
                future.set_result(None)


@pytest.fixture
def vt():
    return VirtualTime()


@pytest.fixture
def store(vt):
    s = JobStore(open_database(":memory:"), clock=vt.clock)
    yield s
    s.close()


def put(store: JobStore, delivery: str, key: str = "octo/repo#1") -> bool:
    return store.enqueue(delivery, "pull_request", key, b'{"n": 1}', installation_id=1, action="closed")


def make_pool(store, vt, handler, **kwargs) -> WorkerPool:
    kwargs.setdefault("backoff", lambda attempt: 10.0 * attempt)
    return WorkerPool(store, handler, clock=vt.clock, sleep=vt.sleep, **kwargs)


async def test_jobs_of_one_key_run_one_at_a_time_in_arrival_order(store, vt):
    active: Counter[str] = Counter()
    overlaps: list[str] = []
    order: list[str] = []

    async def handler(job: Job) -> None:
        active[job.key] += 1
        if active[job.key] > 1:
            overlaps.append(job.delivery_id)
        order.append(job.delivery_id)
        for _ in range(3):  # give other jobs every chance to interleave
            await asyncio.sleep(0)
        active[job.key] -= 1

    for i in range(5):
        put(store, f"merge-{i}")
    pool = make_pool(store, vt, handler, concurrency=4)
    pool.start()
    async with asyncio.timeout(GUARD_S):
        await pool.wait_idle()
    await pool.stop()
    assert order == [f"merge-{i}" for i in range(5)]
    assert overlaps == []
    assert store.counts()["done"] == 5


async def test_jobs_of_different_keys_run_at_the_same_time(store, vt):
    started: list[str] = []
    all_started = asyncio.Event()

    async def handler(job: Job) -> None:
        started.append(job.key)
        if len(started) == 3:
            all_started.set()
        # Each job waits until all three run at once: only possible with concurrency.
        await all_started.wait()

    for n in (1, 2, 3):
        put(store, f"d{n}", f"octo/repo#{n}")
    pool = make_pool(store, vt, handler, concurrency=3)
    pool.start()
    async with asyncio.timeout(GUARD_S):
        await all_started.wait()
        await pool.wait_idle()
    await pool.stop()
    assert sorted(started) == ["octo/repo#1", "octo/repo#2", "octo/repo#3"]
    assert store.counts()["done"] == 3


async def test_concurrency_is_a_ceiling(store, vt):
    running = 0
    peak = 0
    gate = asyncio.Event()

    async def handler(job: Job) -> None:
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        await gate.wait()
        running -= 1

    for n in range(6):
        put(store, f"d{n}", f"k{n}")
    pool = make_pool(store, vt, handler, concurrency=2)
    pool.start()
    async with asyncio.timeout(GUARD_S):
        while running < 2:
            await asyncio.sleep(0)
        for _ in range(10):
            await asyncio.sleep(0)
        assert len(pool.running_jobs) == 2
        gate.set()
        await pool.wait_idle()
    await pool.stop()
    assert peak == 2
    assert store.counts()["done"] == 6


async def test_retry_later_waits_for_its_delay_and_wakes_by_itself(store, vt):
    attempts: list[int] = []
    second_run = asyncio.Event()

    async def handler(job: Job) -> None:
        attempts.append(job.attempts)
        if job.attempts == 1:
            raise RetryLater("rate limited", delay=30)
        second_run.set()

    put(store, "d1")
    pool = make_pool(store, vt, handler)
    pool.start()
    async with asyncio.timeout(GUARD_S):
        await pool.wait_idle()
        row = store.get(1)
        assert (row["state"], row["attempts"], row["not_before"]) == ("queued", 1, T0 + 30)
        assert row["error"] == "RetryLater: rate limited"
        await vt.advance(29)
        await pool.wait_idle()
        assert attempts == [1]
        # No notify(): the pool's own timer must bring the job back.
        await vt.advance(1)
        await second_run.wait()
        await pool.wait_idle()
    await pool.stop()
    assert 30 in vt.requested  # it slept until the retry was due
    assert attempts == [1, 2]
    assert store.get(1)["state"] == "done"


async def test_retry_later_without_delay_uses_backoff(store, vt):
    async def handler(job: Job) -> None:
        raise RetryLater("502 from GitHub")

    put(store, "d1")
    pool = make_pool(store, vt, handler, backoff=lambda attempt: 7.5 * attempt)
    pool.start()
    async with asyncio.timeout(GUARD_S):
        await pool.wait_idle()
        await vt.advance(7.5)
        await pool.wait_idle()
    await pool.stop()
    row = store.get(1)
    assert (row["attempts"], row["not_before"]) == (2, T0 + 7.5 + 15)


async def test_give_up_ends_the_job_with_its_reason(store, vt):
    calls = 0

    async def handler(job: Job) -> None:
        nonlocal calls
        calls += 1
        raise GiveUp("404: installation removed")

    put(store, "d1")
    pool = make_pool(store, vt, handler)
    pool.start()
    async with asyncio.timeout(GUARD_S):
        await pool.wait_idle()
        await vt.advance(3600)
        await pool.wait_idle()
    await pool.stop()
    row = store.get(1)
    assert calls == 1
    assert (row["state"], row["outcome"], row["error"]) == ("done", GIVEN_UP, "404: installation removed")


async def test_what_a_job_did_is_recorded_with_it(store, vt):
    async def handler(job: Job) -> str | None:
        return "created" if job.delivery_id == "d1" else None

    put(store, "d1")
    put(store, "d2", key="octo/repo#2")
    pool = make_pool(store, vt, handler)
    pool.start()
    async with asyncio.timeout(GUARD_S):
        await pool.wait_idle()
    await pool.stop()
    assert [(store.get(i)["outcome"], store.get(i)["error"]) for i in (1, 2)] == [(SUCCEEDED, "created"), (SUCCEEDED, None)]


async def test_unexpected_errors_are_retried_then_parked_then_retried_by_hand(store, vt, caplog):
    calls: list[int] = []
    broken = True

    async def handler(job: Job) -> None:
        calls.append(job.attempts)
        if broken:
            raise ValueError(f"boom on attempt {job.attempts}")

    put(store, "d1")
    pool = make_pool(store, vt, handler, max_attempts=3, backoff=lambda attempt: 5.0)
    pool.start()
    async with asyncio.timeout(GUARD_S):
        for _ in range(3):
            await pool.wait_idle()
            await vt.advance(5)
        await pool.wait_idle()
        assert calls == [1, 2, 3]
        (parked,) = store.parked()
        assert parked.attempts == 3
        assert "Traceback" in parked.error and "ValueError: boom on attempt 3" in parked.error
        assert store.counts()["parked"] == 1
        assert "boom on attempt 1" in caplog.text  # logged with its traceback

        broken = False
        assert await pool.retry_parked() == 1
        await pool.wait_idle()
    await pool.stop()
    assert calls == [1, 2, 3, 1]
    assert store.counts() == {"queued": 0, "running": 0, "done": 1, "parked": 0}


async def test_a_job_left_running_by_a_crash_completes_once_after_restart(tmp_path, vt):
    path = str(tmp_path / "prguide.db")
    before = JobStore.open(path, clock=vt.clock)
    put(before, "merge-1")
    put(before, "refresh-1")
    crashed = before.claim()
    assert crashed.delivery_id == "merge-1"
    before.close()  # the process dies without settling the job

    seen: list[tuple[str, int]] = []

    async def handler(job: Job) -> None:
        seen.append((job.delivery_id, job.attempts))

    after = JobStore.open(path, clock=vt.clock)
    try:
        pool = make_pool(after, vt, handler)
        assert pool.start() == 1
        async with asyncio.timeout(GUARD_S):
            await pool.wait_idle()
        await pool.stop()
        # A second start finds nothing left to do.
        again = make_pool(after, vt, handler)
        assert again.start() == 0
        async with asyncio.timeout(GUARD_S):
            await again.wait_idle()
        await again.stop()
        assert seen == [("merge-1", 2), ("refresh-1", 1)]
        assert after.counts() == {"queued": 0, "running": 0, "done": 2, "parked": 0}
    finally:
        after.close()


async def test_stop_requeues_a_stuck_job_without_counting_the_attempt(store, vt):
    started = asyncio.Event()
    cancelled = False

    async def stuck(job: Job) -> None:
        nonlocal cancelled
        started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled = True
            raise

    put(store, "d1")
    pool = make_pool(store, vt, stuck)
    pool.start()
    async with asyncio.timeout(GUARD_S):
        await started.wait()
        vt.instant = True  # the grace period elapses at once
        interrupted = await pool.stop(timeout=20)
    assert cancelled
    assert [job.delivery_id for job in interrupted] == ["d1"]
    assert 20 in vt.requested
    row = store.get(1)
    assert (row["state"], row["attempts"]) == ("queued", 0)

    done: list[int] = []

    async def fine(job: Job) -> None:
        done.append(job.attempts)

    vt.instant = False
    restarted = make_pool(store, vt, fine)
    restarted.start()
    async with asyncio.timeout(GUARD_S):
        await restarted.wait_idle()
    await restarted.stop()
    assert done == [1]


async def test_stop_lets_a_job_finish_within_the_grace_period(store, vt):
    started = asyncio.Event()
    release = asyncio.Event()

    async def handler(job: Job) -> None:
        started.set()
        await release.wait()

    put(store, "d1")
    put(store, "d2")  # same key: must not start once stopping
    pool = make_pool(store, vt, handler)
    pool.start()
    async with asyncio.timeout(GUARD_S):
        await started.wait()
        stopping = asyncio.create_task(pool.stop(timeout=20))
        for _ in range(5):
            await asyncio.sleep(0)
        assert not stopping.done()
        release.set()
        interrupted = await stopping
    assert interrupted == []
    assert store.get(1)["state"] == "done"
    assert store.get(2)["state"] == "queued"


async def test_an_idle_pool_does_not_poll(store, vt):
    pool = make_pool(store, vt, lambda job: asyncio.sleep(0))
    claims = 0
    real_claim = store.claim

    def counting_claim(now=None):
        nonlocal claims
        claims += 1
        return real_claim(now)

    store.claim = counting_claim
    pool.start()
    async with asyncio.timeout(GUARD_S):
        await pool.wait_idle()
        before = claims
        for _ in range(50):
            await asyncio.sleep(0)
        assert claims == before
        put(store, "d1")
        pool.notify()
        await pool.wait_idle()
    await pool.stop()
    assert claims > before
    assert store.counts()["done"] == 1


async def test_200_jobs_for_50_keys_each_complete_exactly_once(store, vt):
    rng = random.Random(20)
    runs: Counter[str] = Counter()
    order: dict[str, list[int]] = defaultdict(list)
    active: Counter[str] = Counter()
    overlaps = 0

    async def handler(job: Job) -> None:
        nonlocal overlaps
        active[job.key] += 1
        overlaps += active[job.key] > 1
        runs[job.delivery_id] += 1
        order[job.key].append(int(job.delivery_id.split("-")[1]))
        for _ in range(rng.randrange(4)):
            await asyncio.sleep(0)
        active[job.key] -= 1
        if rng.random() < 0.1 and job.attempts == 1:
            raise RetryLater("flaky", delay=1)

    deliveries = [(f"d-{i}", f"octo/repo#{rng.randrange(50)}") for i in range(200)]
    for delivery, key in deliveries[:100]:
        put(store, delivery, key)
    pool = make_pool(store, vt, handler, concurrency=8)
    pool.start()
    async with asyncio.timeout(GUARD_S):
        for delivery, key in deliveries[100:]:
            put(store, delivery, key)
            pool.notify()
            await asyncio.sleep(0)
        while store.counts()["done"] < 200:
            await pool.wait_idle()
            await vt.advance(1)
    await pool.stop()
    assert overlaps == 0
    retried = sum(1 for n in runs.values() if n == 2)
    assert sum(runs.values()) == 200 + retried
    assert set(runs) == {d for d, _ in deliveries}
    for key, numbers in order.items():
        firsts = list(dict.fromkeys(numbers))  # a retried job runs again before the next one
        assert firsts == sorted(firsts), key
    assert store.counts() == {"queued": 0, "running": 0, "done": 200, "parked": 0}


def test_pool_rejects_nonsense_settings(store, vt):
    with pytest.raises(ValueError):
        WorkerPool(store, lambda job: None, concurrency=0)
    with pytest.raises(ValueError):
        WorkerPool(store, lambda job: None, max_attempts=0)


async def test_the_pool_survives_database_errors(store, vt, caplog):
    real_claim, real_complete = store.claim, store.complete
    failures = {"claim": 1, "complete": 1}

    def flaky(name, real):
        def call(*args, **kwargs):
            if failures[name]:
                failures[name] -= 1
                raise sqlite3.OperationalError("database is locked")
            return real(*args, **kwargs)

        return call

    store.claim = flaky("claim", real_claim)
    store.complete = flaky("complete", real_complete)
    seen: list[str] = []

    async def handler(job: Job) -> None:
        seen.append(job.delivery_id)

    put(store, "d1", "k1")
    put(store, "d2", "k2")
    pool = make_pool(store, vt, handler, concurrency=1)
    pool.start()
    async with asyncio.timeout(GUARD_S):
        await pool.wait_idle()  # the first pass failed; the pool waits 5 s
        assert seen == []
        await vt.advance(5)
        await pool.wait_idle()
    await pool.stop()
    assert seen == ["d1", "d2"]
    assert "cannot read the job queue" in caplog.text
    assert "cannot record the result of job 1" in caplog.text
    # d1's result was lost, so it stays running and is taken back at the next start.
    assert store.counts() == {"queued": 0, "running": 1, "done": 1, "parked": 0}
    assert store.requeue_running() == 1


async def test_a_rate_limited_job_waits_for_the_reset_without_spending_an_attempt_and_with_jitter(store, vt):
    from bot.app.errors import RateLimited

    runs: Counter[str] = Counter()

    async def handler(job: Job) -> None:
        runs[job.delivery_id] += 1
        if runs[job.delivery_id] <= 3:  # the limit is spent for three resets in a row
            raise RateLimited("GitHub resets in an hour", 3600.0)

    for n in range(20):
        put(store, f"d{n}", f"octo/repo#{n}")
    pool = make_pool(store, vt, handler, concurrency=4, max_attempts=2)
    pool.start()
    async with asyncio.timeout(GUARD_S):
        await pool.wait_idle()
        rows = [store.get(n) for n in range(1, 21)]
        assert {(r["state"], r["attempts"]) for r in rows} == {("queued", 0)}
        due = [r["not_before"] - T0 for r in rows]
        # Back after the reset, spread over a minute rather than all in the same second.
        assert all(3600 <= d <= 3660 for d in due) and len({int(d) for d in due}) >= 10
        assert rows[0]["error"] == "RateLimited: GitHub resets in an hour"
        for _ in range(3):  # three resets later
            await vt.advance(3660)
            await pool.wait_idle()
    await pool.stop()
    # Three waits each, yet max_attempts=2 parked nothing: a wait is no failed attempt.
    assert store.counts()["done"] == 20 and store.counts()["parked"] == 0
    assert {store.get(n)["attempts"] for n in range(1, 21)} == {1}
    assert set(runs.values()) == {4}


async def test_an_idle_pool_hands_freed_memory_back(store, vt, monkeypatch):
    # bot.app.malloc.trim, forced, once the last running job has ended; not while jobs run.
    import bot.app.workers as workers

    trimmed = asyncio.Event()
    running_then: list[int] = []

    def fake_trim(force: bool = False) -> bool:
        assert force
        running_then.append(len(pool.running_jobs))
        trimmed.set()
        return True

    monkeypatch.setattr(workers, "trim", fake_trim)

    async def handler(job: Job) -> None:
        await asyncio.sleep(0)

    for i in range(3):
        put(store, f"merge-{i}", key=f"octo/repo#{i}")
    pool = make_pool(store, vt, handler, concurrency=4)
    pool.start()
    async with asyncio.timeout(GUARD_S):
        await pool.wait_idle()
        await trimmed.wait()
    await pool.stop()
    assert running_then and set(running_then) == {0}
