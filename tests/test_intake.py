"""Group commit on the webhook path: one transaction per event-loop turn, all or nothing."""

from __future__ import annotations

import asyncio
import sqlite3

import pytest

from bot.app.intake import Intake
from bot.app.jobs import JobStore, QueuedDelivery


@pytest.fixture
def store():
    store = JobStore.open(":memory:")
    yield store
    store.close()


def delivery(n: int | str, key: str = "o/r#1") -> QueuedDelivery:
    return QueuedDelivery(f"d-{n}", "pull_request", key, b'{"n": 1}', installation_id=7, action="closed")


async def test_deliveries_of_one_turn_share_one_transaction(store):
    woken: list[int] = []
    intake = Intake(store, on_queued=lambda: woken.append(1))
    results = await asyncio.gather(*(intake.enqueue(delivery(n)) for n in (1, 2, 1, 3)))
    assert results == [True, True, False, True]  # the repeated id is a duplicate within the batch
    assert (intake.batches, intake.rows) == (1, 4)
    assert store.counts()["queued"] == 3
    assert woken == [1]


async def test_a_lone_delivery_is_committed_on_the_next_turn(store):
    intake = Intake(store)
    assert await intake.enqueue(delivery(1)) is True
    assert await intake.enqueue(delivery(1)) is False
    assert (intake.batches, store.counts()["queued"]) == (2, 1)


async def test_only_new_jobs_wake_the_pool(store):
    woken: list[int] = []
    intake = Intake(store, on_queued=lambda: woken.append(1))
    await intake.enqueue(delivery(1))
    await intake.enqueue(delivery(1))
    assert woken == [1]


async def test_long_batches_are_split(store):
    intake = Intake(store, max_batch=2)
    results = await asyncio.gather(*(intake.enqueue(delivery(n)) for n in range(5)))
    assert results == [True] * 5
    assert (intake.batches, intake.rows) == (3, 5)
    with pytest.raises(ValueError, match="max_batch"):
        Intake(store, max_batch=0)


async def test_a_failing_batch_fails_every_waiter_and_keeps_nothing(store):
    store.conn.execute(
        "CREATE TRIGGER refuse BEFORE INSERT ON jobs WHEN NEW.delivery_id = 'd-bad'"
        " BEGIN SELECT RAISE(ABORT, 'disk full'); END"
    )
    intake = Intake(store)
    results = await asyncio.gather(*(intake.enqueue(delivery(n)) for n in (1, "bad", 2)), return_exceptions=True)
    assert all(isinstance(r, sqlite3.IntegrityError) for r in results), results
    assert store.counts()["queued"] == 0
    store.conn.execute("DROP TRIGGER refuse")
    assert await intake.enqueue(delivery(1)) is True


async def test_an_invalid_delivery_never_joins_a_batch(store):
    with pytest.raises(ValueError, match="non-empty"):
        QueuedDelivery("d-x", "", "o/r#1", b"{}")
    with pytest.raises(ValueError, match="payload must be bytes"):
        QueuedDelivery("d-x", "pull_request", "o/r#1", "{}")  # type: ignore[arg-type]
    intake = Intake(store)
    assert await intake.enqueue(delivery(1)) is True


async def test_a_cancelled_request_still_has_its_row(store):
    intake = Intake(store)
    task = asyncio.ensure_future(intake.enqueue(delivery(1)))
    await asyncio.sleep(0)  # the request reaches the batch
    task.cancel()
    assert await intake.enqueue(delivery(2)) is True
    assert store.counts()["queued"] == 2  # GitHub's redelivery of d-1 would be a duplicate
