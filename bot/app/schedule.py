"""Periodic work of the features: one job per installation per period, never doubled.

A feature declares :class:`bot.app.routing.Schedule` objects; the :class:`Scheduler`
wakes at each period's start, lists the app's installations (``GET /app/installations``)
and queues one job per installation and schedule with the delivery id
``"{name}:{installation}:{period}"``. The job store keeps a delivery id once, so
several replicas (or a restart inside a period) queue each period's job exactly once.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import time
from collections.abc import Callable, Sequence
from typing import Any

from bot.app.jobstore import QueuedDelivery
from bot.app.offload import run_store
from bot.app.routing import Schedule
from bot.app.settings import Settings

log = logging.getLogger("prguide.schedule")

#: Seconds to wait before asking again when GitHub could not list the installations.
RETRY_S = 60.0


class Scheduler:
    """Queues the jobs of ``schedules`` on ``store``; ``installations()`` lists installation ids.

    :meth:`tick` does one pass at ``now`` (tests call it directly); :meth:`run` loops
    until cancelled, sleeping until the next period starts.
    """

    def __init__(
        self,
        schedules: Sequence[Schedule],
        settings: Settings,
        store: Any,
        installations: Callable[[], Any],
        *,
        notify: Callable[[], Any] | None = None,
        clock: Callable[[], float] = time.time,
    ):
        self.settings = settings
        self.store = store
        self.installations = installations
        self.notify = notify
        self.clock = clock
        #: ``(schedule, interval seconds)`` for the schedules that are on.
        self.active = [(s, float(s.interval(settings))) for s in schedules if float(s.interval(settings)) > 0]
        #: Jobs queued by this process so far (False results of the store not counted).
        self.queued = 0
        self._done: dict[str, int] = {}  # schedule name -> last period handled here

    def due(self, now: float) -> list[tuple[Schedule, float, int]]:
        """The schedules whose current period this process has not handled: ``(schedule, interval, period)``."""
        return [
            (schedule, interval, int(now // interval))
            for schedule, interval in self.active
            if self._done.get(schedule.name) != int(now // interval)
        ]

    async def tick(self, now: float | None = None) -> int:
        """Queue the jobs of every schedule due at ``now``; return how many were new.

        Raises what ``installations()`` raises (``RetryLater``...) and the store's errors;
        nothing is marked handled then, so the next tick tries again.
        """
        at = self.clock() if now is None else now
        due = self.due(at)
        if not due:
            return 0
        ids = await self.installations()
        deliveries = []
        for schedule, interval, period in due:
            for installation in ids:
                payload = {
                    "installation": {"id": installation},
                    "schedule": schedule.name,
                    "period": period,
                    "interval": interval,
                    "since": (period - 1) * interval,
                }
                deliveries.append(
                    QueuedDelivery(
                        f"{schedule.name}:{installation}:{period}",
                        schedule.event,
                        f"{schedule.name}:{installation}",
                        json.dumps(payload).encode(),
                        installation_id=installation,
                        action=schedule.action,
                    )
                )
        new = sum(await run_store(self.store, self.store.enqueue_many, deliveries)) if deliveries else 0
        for schedule, _interval, period in due:
            self._done[schedule.name] = period
        self.queued += new
        if new and self.notify is not None:
            self.notify()
        if new:
            log.info("queued %d periodic job(s)", new, extra={"schedules": [s.name for s, _, _ in due], "installations": len(ids)})
        return new

    def next_wake(self, now: float) -> float | None:
        """Seconds from ``now`` until the next period of any active schedule starts, or None."""
        if not self.active:
            return None
        return min((math.floor(now / interval) + 1) * interval - now for _, interval in self.active)

    async def run(self, *, sleep: Callable[[float], Any] = asyncio.sleep) -> None:
        """Tick at each period's start until cancelled; failures are logged and retried.

        The first pass waits for the next period: a restart does not cost a pass, and
        a period missed while nothing ran is covered by the next pass's ``since``.
        """
        wait = self.next_wake(self.clock())
        while wait is not None:
            await sleep(max(1.0, wait))
            try:
                await self.tick()
                wait = self.next_wake(self.clock())
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # GitHub or the database unavailable: try again soon
                log.warning("cannot queue periodic jobs: %s", exc)
                wait = RETRY_S
