"""Group commit for the webhook: deliveries parsed in one event-loop turn share a transaction.

The webhook may answer 2xx only once its delivery's row is committed. Committed one
by one, the row cost more than verifying and parsing the delivery: every commit
rewrites the table's and each index's last page and appends a commit record to the
WAL. Under load, aiohttp parses several deliveries in the same loop turn; each
handler adds its row to a batch and waits, and one callback scheduled for the next
turn commits the whole batch (:meth:`bot.app.jobs.JobStore.enqueue_many`) and wakes
them all. A lone delivery waits for one loop turn only.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from bot.app.jobs import JobStore, QueuedDelivery
from bot.app.offload import blocks

#: Rows committed in one transaction at most; a longer batch is split across loop turns.
MAX_BATCH = 256


class Intake:
    """Queues deliveries on a :class:`~bot.app.jobs.JobStore` from the event loop, a batch per turn.

    ``on_queued()`` runs after a batch that queued at least one new job (the worker
    pool's ``notify``). Use from the event loop's thread only.
    """

    def __init__(self, store: JobStore, *, on_queued: Callable[[], Any] | None = None, max_batch: int = MAX_BATCH):
        """Raises ``ValueError`` when ``max_batch`` is below 1."""
        if max_batch < 1:
            raise ValueError("max_batch must be at least 1")
        self.store = store
        self.on_queued = on_queued
        self.max_batch = max_batch
        self._batch: list[tuple[QueuedDelivery, asyncio.Future[bool]]] = []
        self._scheduled = False
        #: Batches committed so far, and the rows in them (read by tests).
        self.batches = 0
        self.rows = 0
        # A store on a database server commits in a thread (its batch forms while the
        # previous one commits); the SQLite store commits on the loop, in microseconds.
        self._blocking = blocks(store)
        self._tasks: set[asyncio.Future] = set()

    async def enqueue(self, delivery: QueuedDelivery) -> bool:
        """Queue ``delivery``; True once committed, False when its delivery id was already queued.

        Raises ``sqlite3.Error`` when the batch the delivery was in could not be
        committed (:meth:`JobStore.enqueue_many`); nothing of that batch is kept.
        """
        loop = asyncio.get_running_loop()
        future: asyncio.Future[bool] = loop.create_future()
        self._batch.append((delivery, future))
        if not self._scheduled:
            self._scheduled = True
            loop.call_soon(self._commit)
        return await future

    def _commit(self) -> None:
        batch, self._batch = self._batch[: self.max_batch], self._batch[self.max_batch :]
        self._scheduled = bool(self._batch)
        if self._scheduled:
            asyncio.get_running_loop().call_soon(self._commit)
        if self._blocking:
            task = asyncio.ensure_future(self._commit_in_thread(batch))
            self._tasks.add(task)  # the loop keeps only a weak reference
            task.add_done_callback(self._tasks.discard)
            return
        try:
            results = self.store.enqueue_many([delivery for delivery, _ in batch])
        except Exception as exc:  # a waiter left without an answer would hang its request
            self._fail(batch, exc)
            return
        self._settle(batch, results)

    async def _commit_in_thread(self, batch: list[tuple[QueuedDelivery, asyncio.Future[bool]]]) -> None:
        try:
            results = await asyncio.to_thread(self.store.enqueue_many, [delivery for delivery, _ in batch])
        except Exception as exc:
            self._fail(batch, exc)
            return
        self._settle(batch, results)

    @staticmethod
    def _fail(batch: list[tuple[QueuedDelivery, asyncio.Future[bool]]], exc: BaseException) -> None:
        for _, future in batch:
            if not future.done():
                future.set_exception(exc)

    def _settle(self, batch: list[tuple[QueuedDelivery, asyncio.Future[bool]]], results: list[bool]) -> None:
        self.batches += 1
        self.rows += len(batch)
        for (_, future), queued in zip(batch, results, strict=True):
            if not future.done():  # the request may have been cancelled meanwhile
                future.set_result(queued)
        if any(results) and self.on_queued is not None:
            self.on_queued()
