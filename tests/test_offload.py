"""Store calls never stall the event loop: a store on a database server is called from a worker thread.

:class:`Held` dresses a SQLite store as one on a database server (``blocking = True``)
whose chosen methods wait until the test releases them, as a PostgreSQL store waits
for a free pooled connection or a database that does not answer. While such a call
waits, other requests are answered and other coroutines run; a call made on the event
loop's own thread fails at once (waiting there would freeze the test), so a path that
goes back to calling on the loop fails here instead of hanging. No test sleeps: the
waiting call signals a ``threading.Event``, and the test awaits it.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest
from aiohttp.test_utils import TestClient, TestServer
from loopback import ADMIN_TOKEN, app_private_key, loopback  # noqa: F401
from test_tagview_store import make_guide

from bot.app.jobstore import JobStore
from bot.app.metrics import create_metrics
from bot.app.offload import blocks, run_store
from bot.app.routing import JobContext, Schedule, Services
from bot.app.schedule import Scheduler
from bot.app.settings import Settings
from bot.feature_support import save_guide
from bot.tagview.store import GuideStore
from bot.tagview.web import create_app as create_tag_view

#: Seconds a held call waits for its release before failing (a test that forgot to release).
RELEASE_TIMEOUT = 10.0


class Held:
    """``inner`` as a store on a database server: ``blocking = True``, and the ``held`` methods wait.

    Each call of a held method records its thread, sets :attr:`entered` and waits for
    :attr:`release` (both ``threading.Event``) before running. A held method called on
    the thread that made this object (the test's event loop) raises ``AssertionError``
    at once. Other attributes are ``inner``'s.
    """

    blocking = True

    def __init__(self, inner: Any, *held: str):
        self.inner = inner
        self.held = set(held)
        self.entered = threading.Event()
        self.release = threading.Event()
        self.threads: list[int] = []
        self.loop_thread = threading.get_ident()

    def __getattr__(self, name: str) -> Any:
        value = getattr(self.inner, name)
        if name not in self.held:
            return value

        def held(*args: Any, **kwargs: Any) -> Any:
            self.threads.append(threading.get_ident())
            self.entered.set()
            if threading.get_ident() == self.loop_thread:
                raise AssertionError(f"{name} was called on the event loop")
            if not self.release.wait(RELEASE_TIMEOUT):
                raise AssertionError(f"{name} was never released")
            return value(*args, **kwargs)

        return held

    async def wait_entered(self) -> None:
        """Return once a held method was called (from any thread)."""
        assert await asyncio.to_thread(self.entered.wait, RELEASE_TIMEOUT), f"none of {sorted(self.held)} was called"


async def the_loop_turns() -> None:
    """Another coroutine runs to its end: the loop is not stuck in a call."""
    ran = asyncio.Event()
    asyncio.get_running_loop().call_soon(ran.set)
    await asyncio.wait_for(ran.wait(), RELEASE_TIMEOUT)


def settings(**changes: Any) -> Settings:
    return Settings(app_id=1, private_key="k", webhook_secret="s", **changes)


@pytest.fixture
def jobs(tmp_path):
    store = JobStore.open(str(tmp_path / "jobs.db"))
    yield store
    store.close()


async def test_run_store_calls_a_local_store_on_the_loop_and_a_blocking_one_in_a_thread():
    class Local:
        def where(self, tag: str, *, twice: bool = False) -> tuple[int, str]:
            return threading.get_ident(), tag * (2 if twice else 1)

    class Remote(Local):
        blocking = True

    loop_thread = threading.get_ident()
    assert not blocks(Local()) and blocks(Remote())
    assert await run_store(Local(), Local().where, "a", twice=True) == (loop_thread, "aa")
    thread, tag = await run_store(Remote(), Remote().where, "b")
    assert thread != loop_thread and tag == "b"

    def fail() -> None:
        raise ValueError("the database said no")

    with pytest.raises(ValueError, match="said no"):
        await run_store(Remote(), fail)


async def test_database_calls_do_not_wait_behind_a_busy_default_executor():
    # Every thread of the loop's default executor is busy (guide builds, say); a store
    # call on a database server still runs, in a thread of its own pool, with the
    # caller's context variables.
    import contextvars
    from concurrent.futures import ThreadPoolExecutor

    loop = asyncio.get_running_loop()
    busy = threading.Event()
    default = ThreadPoolExecutor(max_workers=1)
    loop.set_default_executor(default)
    request = contextvars.ContextVar("request", default="none")
    request.set("delivery-1")

    class Remote:
        blocking = True

        def where(self) -> tuple[str, str]:
            return threading.current_thread().name, request.get()

    try:
        blocker = loop.run_in_executor(None, busy.wait, RELEASE_TIMEOUT)
        name, seen = await asyncio.wait_for(run_store(Remote(), Remote().where), RELEASE_TIMEOUT)
        assert name.startswith("prguide-db") and seen == "delivery-1"
        assert not blocker.done()
    finally:
        busy.set()
        await blocker
        default.shutdown(wait=False)


async def test_a_job_queueing_a_job_leaves_the_loop_free_while_the_database_waits(jobs):
    jobs.enqueue("parent", "prguide.test", "k", b"{}", installation_id=7, action=None)
    held = Held(jobs, "enqueue_many")
    notified: list[int] = []
    services = Services(settings(), clients=None, auth=None, rules=None, metrics=create_metrics(), store=held,
                        notify=lambda: notified.append(threading.get_ident()))
    ctx = JobContext(services, jobs.claim())
    queued = asyncio.create_task(
        ctx.enqueue("prguide.backfill", "page", {"page": 2}, key="backfill:o/r", delivery_id="child", installation_id=7)
    )
    await held.wait_entered()
    await the_loop_turns()
    assert not queued.done()
    held.release.set()
    assert await queued is True
    assert held.threads[0] != held.loop_thread
    assert notified == [held.loop_thread]  # the pool is woken from the loop, as it must be
    assert jobs.counts()["queued"] == 1


async def test_the_scheduler_queues_its_jobs_off_the_loop(jobs):
    held = Held(jobs, "enqueue_many")

    async def installations() -> list[int]:
        return [1, 2]

    schedule = Schedule("reconcile", "prguide.reconcile", None, lambda s: 3600)
    scheduler = Scheduler([schedule], settings(), held, installations)
    tick = asyncio.create_task(scheduler.tick(3600 * 500 + 10))
    await held.wait_entered()
    await the_loop_turns()
    assert not tick.done()
    held.release.set()
    assert await tick == 2
    assert held.threads[0] != held.loop_thread


async def test_a_published_guide_is_stored_off_the_loop_and_a_failure_is_only_logged(tmp_path, caplog):
    from bot.engine.build import build_guide
    from bot.engine.rules import load_rules
    from bot.engine.snapshot import ChangedFile, PullRequestSnapshot

    snapshot = PullRequestSnapshot(repository="o/r", number=3, title="fix: x", merged=True,
                                   files=(ChangedFile("a.py", additions=2, patch="@@ -1 +1,2 @@\n x\n+y"),))
    guide = build_guide(snapshot, load_rules())
    with GuideStore(tmp_path / "g.db") as guides:
        held = Held(guides, "visibility", "save")
        saving = asyncio.create_task(save_guide(held, guide, private=False))
        await held.wait_entered()
        await the_loop_turns()
        assert not saving.done()
        held.release.set()
        await saving
        # The visibility read and the write share one hop.
        assert len(held.threads) == 2 and len(set(held.threads)) == 1 and held.threads[0] != held.loop_thread
        assert guides.visibility("o/r") == "public" and guides.get("o/r", 3) is not None

        broken = Held(guides, "save")
        broken.release.set()
        broken.inner = type("Down", (), {"visibility": lambda self, r: None, "save": lambda self, *a, **k: 1 / 0})()
        await save_guide(broken, guide, private=False)
        assert "cannot store the guide of o/r#3" in caplog.text


async def test_a_tag_view_page_is_read_off_the_loop_while_other_pages_are_served(tmp_path):
    with GuideStore(tmp_path / "g.db") as guides:
        guides.save(make_guide(1), visibility="public")
        held = Held(guides, "labels")
        client = TestClient(TestServer(create_tag_view(held)))
        await client.start_server()
        try:
            page = asyncio.create_task(client.get("/repos/acme/rocket/tags"))
            await held.wait_entered()
            index = await client.get("/repos")  # another page, served while the first waits
            assert index.status == 200 and "acme/rocket" in await index.text()
            assert not page.done()
            held.release.set()
            response = await page
            assert response.status == 200 and "Fixes thing 1." in await response.text()
            assert held.threads[0] != held.loop_thread
        finally:
            await client.close()


async def test_admin_routes_wait_for_the_database_off_the_loop(loopback, webhook_payload):  # noqa: F811
    lb = loopback
    store, pool = lb.state.store, lb.state.pool
    headers = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
    try:
        for method, path, held_method, expected in (
            ("GET", "/admin/jobs/parked", "parked", {"parked": []}),
            ("POST", "/admin/jobs/retry", "retry_parked", {"retried": 0}),
        ):
            held = Held(store, held_method)
            lb.state.store = pool.store = held
            answer = asyncio.create_task(lb.client.request(method, path, headers=headers))
            await held.wait_entered()
            # Meanwhile deliveries and health checks are answered.
            pong = await lb.deliver(webhook_payload("ping", "with-app_id.payload.json"), event="ping", delivery="p-1")
            assert pong.status == 200
            assert (await lb.client.get("/healthz")).status == 200
            assert not answer.done()
            held.release.set()
            response = await answer
            assert response.status == 200 and await response.json() == expected
            assert held.threads[0] != held.loop_thread
    finally:
        lb.state.store = pool.store = store


async def test_guide_builds_run_at_most_guide_threads_at_once():
    # Each build holds its whole analysis while it runs: with 64 jobs, builds beyond the
    # few threads wait their turn instead of all being half-built in memory at once.
    import threading
    import time

    from bot.app import offload

    release = threading.Event()
    lock = threading.Lock()
    running: list[str] = []
    names: set[str] = set()

    def build(n: int) -> int:
        with lock:
            running.append(threading.current_thread().name)
            names.add(threading.current_thread().name)
        assert release.wait(30)
        with lock:
            running.remove(threading.current_thread().name)
        return n * 2

    calls = [asyncio.ensure_future(offload.run_build(build, n)) for n in range(offload.GUIDE_THREADS + 3)]
    deadline = time.monotonic() + 30
    while len(running) < offload.GUIDE_THREADS and time.monotonic() < deadline:
        await asyncio.sleep(0.01)
    assert len(running) == offload.GUIDE_THREADS
    assert not any(c.done() for c in calls)
    with lock:
        waiting_builds = len(calls) - len(running)
    assert waiting_builds == 3  # queued for a thread, not started
    release.set()
    assert await asyncio.gather(*calls) == [n * 2 for n in range(len(calls))]
    assert len(names) <= offload.GUIDE_THREADS and all(name.startswith("prguide-guide") for name in names)


async def test_a_build_hands_the_memory_it_freed_back_in_its_thread(monkeypatch):
    # bot.app.malloc.trim (rate-limited there) runs in the build's thread once it returned,
    # and after a build that raised too.
    import threading

    from bot.app import offload

    threads: list[str] = []
    monkeypatch.setattr(offload, "trim", lambda: threads.append(threading.current_thread().name) or True)
    assert await offload.run_build(lambda x: x * 2, 21) == 42

    def broken() -> None:
        raise ValueError("no guide")

    with pytest.raises(ValueError):
        await offload.run_build(broken)
    assert len(threads) == 2 and all(name.startswith("prguide-guide") for name in threads)
