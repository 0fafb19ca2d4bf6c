"""Jobs queued by prguide itself: ``JobContext.enqueue``, internal routes and the scheduler."""

from __future__ import annotations

import json

import pytest

from bot.app.jobstore import JobStore
from bot.app.metrics import create_metrics
from bot.app.routing import JobContext, Route, Router, Schedule, Services, load_features
from bot.app.schedule import Scheduler
from bot.app.settings import Settings
from bot.app.webhook import Delivery


async def nothing(job, ctx):
    return None


def settings(**changes) -> Settings:
    return Settings(app_id=1, private_key="k", webhook_secret="s", **changes)


@pytest.fixture
def store(tmp_path):
    s = JobStore.open(str(tmp_path / "jobs.db"))
    yield s
    s.close()


def context(store, notified: list) -> JobContext:
    services = Services(settings(), clients=None, auth=None, rules=None, metrics=create_metrics(), store=store,
                        notify=lambda: notified.append(1))
    store.enqueue("parent", "prguide.test", "k", b"{}", installation_id=7, action=None)
    return JobContext(services, store.claim())


async def test_enqueue_queues_an_internal_job_once_per_delivery_id(store):
    notified: list = []
    ctx = context(store, notified)
    assert await ctx.enqueue("prguide.backfill", "page", {"repo": "o/r", "page": 2}, key="backfill:o/r",
                       delivery_id="backfill:7:o/r:2", installation_id=7) is True
    assert await ctx.enqueue("prguide.backfill", "page", {"repo": "o/r", "page": 2}, key="backfill:o/r",
                       delivery_id="backfill:7:o/r:2", installation_id=7) is False
    assert notified == [1]
    job = store.claim()
    assert (job.event, job.action, job.key, job.installation_id) == ("prguide.backfill", "page", "backfill:o/r", 7)
    assert job.data == {"repo": "o/r", "page": 2}


async def test_enqueue_with_a_delay_is_not_due_before_it(store):
    ctx = context(store, [])
    await ctx.enqueue("prguide.later", None, b"{}", key="later", delivery_id="later:1", installation_id=None, delay=600)
    assert store.claim() is None
    assert store.next_due() is not None and store.claim(now=store.next_due() + 1).delivery_id == "later:1"


async def test_enqueue_without_a_store_is_refused():
    services = Services(settings(), clients=None, auth=None, rules=None, metrics=create_metrics())
    with pytest.raises(RuntimeError):
        await JobContext(services, None).enqueue("e", None, {}, key="k", delivery_id="d", installation_id=None)


def delivery(event, action, key=None):
    return Delivery(id="d", event=event, action=action, payload={}, body=b"{}", installation_id=1, key=key)


def test_internal_routes_never_take_webhooks_and_installation_routes_need_no_pull_request():
    router = Router([
        Route("prguide.backfill", (), nothing, internal=True),
        Route("installation", ("created",), nothing, pull_request_only=False),
        Route("pull_request", ("closed",), nothing),
    ])
    route, reason = router.decide(delivery("prguide.backfill", None, key="o/r#1"))
    assert route is None and "prguide's own event" in reason
    assert router.decide(delivery("installation", "created"))[0] is not None
    assert router.decide(delivery("pull_request", "closed"))[1] == "the delivery names no pull request"
    assert router.route("prguide.backfill", "page") is not None  # the worker still finds its handler


class Installations:
    def __init__(self, ids):
        self.ids, self.calls = ids, 0

    async def __call__(self):
        self.calls += 1
        return list(self.ids)


RECONCILE = Schedule("reconcile", "prguide.reconcile", None, lambda s: s.reconcile_interval)


async def test_scheduler_queues_one_job_per_installation_per_period_across_replicas(store):
    installations = Installations([1, 2])
    notified: list = []
    one = Scheduler([RECONCILE], settings(reconcile_interval=3600), store, installations, notify=lambda: notified.append(1))
    two = Scheduler([RECONCILE], settings(reconcile_interval=3600), store, installations)
    now = 3600 * 500 + 10
    assert await one.tick(now) == 2
    assert await one.tick(now + 100) == 0 and installations.calls == 1  # same period: nothing asked
    assert await two.tick(now + 200) == 0  # another replica: the delivery ids are known
    assert await one.tick(now + 3600) == 2
    assert notified == [1, 1]
    jobs = [store.claim() for _ in range(2)]
    assert store.claim() is None  # one installation's passes run one at a time
    for job in jobs:
        store.complete(job.id)
    jobs += [store.claim() for _ in range(2)]
    ids = sorted(j.delivery_id for j in jobs)
    assert ids == ["reconcile:1:500", "reconcile:1:501", "reconcile:2:500", "reconcile:2:501"]
    first = next(j for j in jobs if j.delivery_id == "reconcile:2:500")
    assert first.key == "reconcile:2" and first.installation_id == 2 and first.event == "prguide.reconcile"
    assert json.loads(first.payload) == {
        "installation": {"id": 2}, "schedule": "reconcile", "period": 500, "interval": 3600.0, "since": 499 * 3600.0
    }
    assert one.next_wake(now) == pytest.approx(3590)


async def test_a_failed_listing_leaves_the_period_to_the_next_tick(store):
    class Down:
        calls = 0

        async def __call__(self):
            Down.calls += 1
            raise RuntimeError("GitHub is down")

    scheduler = Scheduler([RECONCILE], settings(), store, Down())
    with pytest.raises(RuntimeError):
        await scheduler.tick(7200.0)
    scheduler.installations = Installations([5])
    assert await scheduler.tick(7201.0) == 1


async def test_the_scheduler_loop_waits_for_the_period_then_ticks(store):
    scheduler = Scheduler([RECONCILE], settings(reconcile_interval=60), store, Installations([3]), clock=lambda: 6030.0)
    waits: list[float] = []

    async def sleep(seconds):
        waits.append(seconds)
        if len(waits) == 2:
            raise StopAsyncIteration

    with pytest.raises(StopAsyncIteration):
        await scheduler.run(sleep=sleep)
    assert waits == [30.0, 30.0] and scheduler.queued == 1


async def test_a_schedule_with_interval_zero_is_off(store):
    scheduler = Scheduler([RECONCILE], settings(reconcile_interval=0), store, Installations([1]))
    assert scheduler.active == [] and scheduler.next_wake(0) is None
    assert await scheduler.tick(100.0) == 0
    await scheduler.run()  # returns at once


def test_load_features_reads_the_schedules(tmp_path, monkeypatch):
    module = tmp_path / "some_features.py"
    module.write_text(
        "from bot.app.routing import Route, Schedule\n"
        "async def h(job, ctx): pass\n"
        "FEATURES = ((Route('prguide.x', (), h, internal=True),),)\n"
        "SCHEDULES = ((Schedule('x', 'prguide.x', None, lambda s: 60),),)\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    router = load_features("some_features:FEATURES")
    assert [s.name for s in router.schedules] == ["x"]


async def test_observers_see_every_delivery_and_never_cost_it(caplog, monkeypatch):
    import asyncio

    from bot.app import routing

    seen = []

    async def sees(delivery, services):
        seen.append((delivery.event, delivery.action, services.settings.app_id))

    async def fails(delivery, services):
        raise RuntimeError("boom")

    async def hangs(delivery, services):
        await asyncio.Event().wait()

    monkeypatch.setattr(routing, "OBSERVE_TIMEOUT", 0.01)
    router = Router([Route("pull_request", ("closed",), nothing)], observers=[fails, hangs, sees])
    services = Services(settings(), clients=None, auth=None, rules=None, metrics=create_metrics())
    await router.observe(delivery("pull_request", "opened"), services)  # routed or not
    assert seen == [("pull_request", "opened", 1)]
    assert "delivery d: an observer failed" in caplog.text and "delivery d: an observer took over 0.01s" in caplog.text


def test_load_features_reads_the_observers(tmp_path, monkeypatch):
    module = tmp_path / "observing_features.py"
    module.write_text(
        "async def o(delivery, services): pass\n"
        "FEATURES = ()\n"
        "OBSERVERS = ((o,),)\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    router = load_features("observing_features:FEATURES")
    assert [o.__name__ for o in router.observers] == ["o"]
    # The shipped features watch every delivery for a repository's visibility.
    assert [o.__name__ for o in load_features().observers] == ["observe_visibility"]
