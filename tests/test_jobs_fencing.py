"""Claims, clocks and cancelling: a job runs once per claim, on the queue's clock, and what lost its claim writes nothing.

The store-level tests run on SQLite and on PostgreSQL (``store`` fixture; the PostgreSQL
ones skip, saying why, without a server). Replicas whose clocks disagree are PostgreSQL
stores on one schema whose worker pools (or whose whole process, for ``time.time``) run
a minute apart.
"""

from __future__ import annotations

import asyncio
import time

import pytest

from bot.app import pg, publish
from bot.app.db import open_database
from bot.app.jobs import JobStore, QueuedDelivery, WorkerPool
from bot.app.metrics import create_metrics
from bot.app.pgjobs import PgJobStore
from bot.app.routing import JobContext, Services
from bot.app.settings import Settings

T0 = 1_750_000_000.0
AHEAD = 60.0  # seconds one replica's clock runs ahead of the others
CANCELLED = "cancelled"
_REAL_TIME = time.time


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request):
    if request.param == "sqlite":
        s = JobStore(open_database(":memory:"), clock=lambda: T0)
    else:
        s = PgJobStore(request.getfixturevalue("pg_database"), clock=lambda: T0)
    yield s
    s.close()


def replica(pg_schema, **options) -> PgJobStore:
    """A PostgreSQL store as a replica makes it (no clock: the database's)."""
    url, schema = pg_schema
    db = pg.connect(url, schema=schema, max_size=4, timeout=5.0, migrate_components=["jobs"], name=schema)
    return PgJobStore(db, **options)


def put(store, delivery: str, key: str, *, installation: int = 7) -> bool:
    return store.enqueue(delivery, "pull_request", key, b"{}", installation_id=installation, action="closed")


def wait_for(condition, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        time.sleep(0.01)


class Posts:
    """A GitHub client that records the comments it is asked to post."""

    def __init__(self):
        self.posts: list[str] = []

    async def post(self, url, url_vars=None, *, data=None, **kwargs):
        self.posts.append(data["body"])
        return {"id": len(self.posts)}


# ----- fences --------------------------------------------------------------------------


def test_a_claim_holds_until_it_is_settled_and_the_next_claim_has_a_new_fence(store):
    put(store, "d-1", "o/r#1")
    first = store.claim()
    assert store.holds(first.id, first.fence)
    store.retry(first.id, delay=0, error="again")
    assert not store.holds(first.id, first.fence)  # put back: the claim is gone
    second = store.claim()
    assert second.id == first.id and second.fence > first.fence
    assert store.holds(second.id, second.fence) and not store.holds(second.id, first.fence)
    store.complete(second.id)
    assert not store.holds(second.id, second.fence)


def test_a_lease_running_short_or_taken_over_holds_no_more(pg_schema):
    a = replica(pg_schema, lease=30, clock=lambda: T0)
    b = replica(pg_schema, lease=30, clock=lambda: T0)
    try:
        put(a, "d-1", "o/r#1")
        job = a.claim(T0)
        assert a.holds(job.id, job.fence, now=T0 + 15)  # half the lease left
        assert not a.holds(job.id, job.fence, now=T0 + 25)  # a third is the least a write may start with
        assert not b.holds(job.id, job.fence, now=T0 + 1)  # another replica's claim
        taken = b.claim(T0 + 31)
        assert taken.id == job.id
        assert not a.holds(job.id, job.fence, now=T0 + 31) and b.holds(taken.id, taken.fence, now=T0 + 31)
    finally:
        a.close()
        b.close()


async def test_writes_outside_a_job_are_not_checked_and_a_failing_check_stops_every_publisher_write():
    from bot.app.fencing import LeaseLost, before_write, fenced

    client = Posts()
    assert await publish.reply(client, "o/r", 1, "outside a job") == 1

    async def gone() -> bool:
        return False

    with fenced(gone):
        with pytest.raises(LeaseLost, match="no longer holds its claim"):
            await publish.reply(client, "o/r", 1, "from a job that lost its claim")
        with pytest.raises(LeaseLost):
            await publish.add_labels(client, "o/r", 1, ["x"])
        with pytest.raises(LeaseLost):
            await publish.react(client, "o/r", 5, "+1")
        with pytest.raises(LeaseLost):
            await before_write("anything")
    assert client.posts == ["outside a job"]


async def test_a_job_taken_over_while_it_runs_does_not_publish(pg_schema):
    # Replica A stalls past its lease (a long GC pause, a frozen VM); B takes the job over.
    # Both runs publish: without a fence, the pull request gets two comments.
    a, b = replica(pg_schema, lease=60), replica(pg_schema, lease=60)
    client = Posts()
    started, go = asyncio.Event(), asyncio.Event()
    outcome: list[str] = []

    async def handler(job) -> None:
        started.set()
        await go.wait()  # the stall
        try:
            await publish.reply(client, "o/r", 1, "guide from A")
        except Exception as exc:
            outcome.append(type(exc).__name__)
            raise
        outcome.append("published")

    pool = WorkerPool(a, handler, concurrency=1)
    pool.start()
    try:
        put(a, "d-1", "o/r#1")
        await asyncio.wait_for(started.wait(), 10)
        (running,) = pool.running_jobs
        with a.db.connection() as conn:  # A's lease runs out (its heartbeat is 20 s away)
            conn.execute("UPDATE jobs SET lease_until = 0 WHERE id = %s", (running.id,))
        taken = await asyncio.to_thread(b.claim)
        assert taken.id == running.id
        await publish.reply(client, "o/r", 1, "guide from B")  # B's run publishes
        go.set()
        await asyncio.to_thread(wait_for, lambda: not pool.running_jobs)
        assert client.posts == ["guide from B"]  # one comment
        assert outcome == ["LeaseLost"]
        row = b.get(running.id)
        assert (row["state"], row["owner"]) == ("running", b.owner)  # A settled nothing
    finally:
        await pool.stop(timeout=1)
        a.close()
        b.close()


# ----- clocks --------------------------------------------------------------------------


async def test_a_replica_whose_clock_runs_a_minute_ahead_takes_over_no_live_job(pg_schema):
    a = replica(pg_schema, lease=30, poll_interval=0.2)
    b = replica(pg_schema, lease=30, poll_interval=0.2)
    ran: list[str] = []
    done = asyncio.Event()

    async def handler(job) -> None:
        ran.append(job.delivery_id)
        if job.delivery_id == "other":
            done.set()

    ahead = WorkerPool(b, handler, concurrency=2, clock=lambda: time.time() + AHEAD)
    try:
        put(a, "live", "o/r#1")
        live = await asyncio.to_thread(a.claim)  # A runs it, its lease renewed as usual
        ahead.start()
        put(a, "other", "o/r#2")
        await asyncio.wait_for(done.wait(), 10)
        await ahead.wait_idle()
        assert ran == ["other"]  # never the job A runs
        row = a.get(live.id)
        assert (row["state"], row["owner"], row["attempts"]) == ("running", a.owner, 1)
        assert a.holds(live.id, live.fence)
    finally:
        await ahead.stop(timeout=1)
        a.close()
        b.close()


async def test_due_times_and_ages_are_the_databases_not_a_replicas(pg_schema, monkeypatch):
    store = replica(pg_schema)
    try:
        settings = Settings(app_id=1, private_key="k", webhook_secret="s")
        services = Services(settings, clients=None, auth=None, rules=None, metrics=create_metrics(), store=store)
        put(store, "parent", "k")
        ctx = JobContext(services, await asyncio.to_thread(store.claim))
        monkeypatch.setattr(time, "time", lambda: _REAL_TIME() - AHEAD)  # this process's clock runs late
        assert await ctx.enqueue("prguide.test", None, {}, key="later", delivery_id="later", installation_id=7, delay=30)
        with store.db.connection() as conn:
            due_in, age = conn.execute(
                "SELECT not_before - extract(epoch FROM now()), extract(epoch FROM now()) - created_at"
                " FROM jobs WHERE delivery_id = 'later'"
            ).fetchone()
        assert 25 < due_in <= 30 and -1 < age < 5  # due in 30 s of the database's time
        assert store.claim() is None  # not due, whatever this process's clock says
        assert 25 < store.due_in() <= 30
        assert 0 <= store.oldest_queued_age() < 5
    finally:
        store.close()


# ----- cancelling ----------------------------------------------------------------------


def test_cancel_ends_the_unfinished_work_of_an_installation_and_nothing_else(store):
    for delivery, key, installation in [
        ("q-1", "o/a_b#1", 7), ("q-2", "o/a_b#1:narration", 7), ("run", "o/a_b#2", 7), ("park", "o/a_b#3", 7),
        ("bf", "backfill:o/a_b", 7), ("other-repo", "o/aXb#1", 7), ("other-inst", "o/a_b#9", 8), ("self", "x", 7),
    ]:
        put(store, delivery, key, installation=installation)
    running = {job.delivery_id: job for job in iter(store.claim, None)}
    for delivery in ("q-1", "q-2", "bf", "other-repo", "other-inst", "self"):
        store.release(running[delivery].id)
    store.park(running["park"].id, error="boom")
    me = running["self"].id

    # One repository taken away: its pull requests' jobs and its backfill run ('_' is no wildcard).
    assert store.cancel(7, keys=["backfill:o/a_b"], key_prefixes=["o/a_b#"], keep=me, reason="removed") == 5
    states = {row["delivery_id"]: (row["state"], row["outcome"]) for row in map(store.get, range(1, 9))}
    assert states == {
        "q-1": ("done", CANCELLED), "q-2": ("done", CANCELLED), "run": ("done", CANCELLED),
        "park": ("done", CANCELLED), "bf": ("done", CANCELLED),
        "other-repo": ("queued", None), "other-inst": ("queued", None), "self": ("queued", None),
    }
    assert store.get(1)["error"] == "removed"
    assert not store.holds(running["run"].id, running["run"].fence)  # the running one lost its claim
    store.complete(running["run"].id)  # its own end changes nothing
    assert store.get(running["run"].id)["outcome"] == CANCELLED

    # The whole installation: everything of 7 but the job asking.
    assert store.cancel(7, keep=me, reason="uninstalled") == 1
    assert [job.delivery_id for job in iter(store.claim, None)] == ["other-inst", "self"]


def test_cancel_finds_a_repository_s_work_on_a_shared_key_by_its_delivery_ids(store):
    # Backfill runs of one installation share its lane; their delivery ids name the repository.
    lane = "backfill:installation:7"
    for delivery, key in [
        ("backfill:d1:o/a_b", lane), ("backfill:d1:o/a_b:page:2", lane), ("backfill:d1:o/a_b:12", "o/a_b#12"),
        ("backfill:d1:o/aXb", lane), ("backfill:d1:o/a_b2:page:2", lane), ("backfill:d1:repositories:2", lane),
    ]:
        put(store, delivery, key)
    assert store.cancel(7, key_prefixes=["o/a_b#"], delivery_parts=["o/a_b"], reason="removed") == 3
    left = {store.get(n)["delivery_id"] for n in range(1, 7) if store.get(n)["state"] == "queued"}
    assert left == {"backfill:d1:o/aXb", "backfill:d1:o/a_b2:page:2", "backfill:d1:repositories:2"}


async def test_a_cancelled_job_stops_before_its_next_write(tmp_path):
    from bot.app.fencing import LeaseLost

    store = JobStore.open(str(tmp_path / "jobs.db"))
    client = Posts()
    started, go = asyncio.Event(), asyncio.Event()
    lost: list[str] = []

    async def handler(job) -> None:
        started.set()
        await go.wait()
        try:
            await publish.reply(client, "o/r", 1, "late guide")
        except LeaseLost as exc:
            lost.append(exc.reason)
            raise

    pool = WorkerPool(store, handler, concurrency=1)
    pool.start()
    try:
        put(store, "d-1", "o/r#1")
        await asyncio.wait_for(started.wait(), 10)
        assert store.cancel(7, reason="app uninstalled") == 1
        go.set()
        await pool.wait_idle()
        assert client.posts == [] and len(lost) == 1
        row = store.get(1)
        assert (row["state"], row["outcome"]) == ("done", CANCELLED)  # not put back by its failed run
    finally:
        await pool.stop(timeout=1)
        store.close()


def test_checkpoints_keep_json_values(store):
    assert store.read_checkpoint("reconcile:7") is None
    store.write_checkpoint("reconcile:7", {"covered_from": T0, "repositories": ["o/r"]})
    store.write_checkpoint("reconcile:7", {"covered_from": T0 + 1, "repositories": ["o/r", "o/s"]})
    assert store.read_checkpoint("reconcile:7") == {"covered_from": T0 + 1, "repositories": ["o/r", "o/s"]}
    assert store.read_checkpoint("reconcile:8") is None


def test_a_version_2_sqlite_queue_gets_fences_and_checkpoints(tmp_path):
    from bot.app.db import migrate
    from bot.app.jobs import MIGRATIONS

    path = tmp_path / "old.db"
    conn = open_database(path)
    migrate(conn, "jobs", MIGRATIONS[:2])
    conn.execute(
        "INSERT INTO jobs (delivery_id, event, action, key, installation_id, not_before, created_at, updated_at)"
        " VALUES ('old-1', 'pull_request', 'closed', 'o/r#1', 7, 0, 0, 0)"
    )
    conn.close()
    store = JobStore.open(str(path))
    try:
        job = store.claim()
        assert job.delivery_id == "old-1" and job.fence == 1 and store.holds(job.id, 1)
        store.write_checkpoint("x", [1])
        assert store.read_checkpoint("x") == [1]
    finally:
        store.close()


def test_a_delivery_about_no_pull_request_runs_on_a_key_of_its_own():
    assert QueuedDelivery("d", "installation", None, b"{}").job_key == "delivery:d"
    assert QueuedDelivery("d", "pull_request", "o/r#1", b"{}").job_key == "o/r#1"


async def test_a_cancelled_job_queues_no_more_work(tmp_path):
    # A backfill page whose installation was uninstalled while it listed pull requests.
    from bot.app.fencing import LeaseLost

    store = JobStore.open(str(tmp_path / "jobs.db"))
    settings = Settings(app_id=1, private_key="k", webhook_secret="s")
    services = Services(settings, clients=None, auth=None, rules=None, metrics=create_metrics(), store=store)
    started, go = asyncio.Event(), asyncio.Event()
    queued: list[object] = []

    async def handler(job) -> None:
        if job.delivery_id != "page-1":
            return
        ctx = JobContext(services, job)
        queued.append(await ctx.enqueue("prguide.backfill", "pull", {}, key="o/r#1", delivery_id="pull-1", installation_id=7))
        started.set()
        await go.wait()
        try:
            await ctx.enqueue("prguide.backfill", "pull", {}, key="o/r#2", delivery_id="pull-2", installation_id=7)
        except LeaseLost as exc:
            queued.append(exc)
            raise

    pool = WorkerPool(store, handler, concurrency=1)
    pool.start()
    try:
        put(store, "page-1", "backfill:o/r")
        await asyncio.wait_for(started.wait(), 10)
        assert store.cancel(7, reason="app uninstalled") == 2  # the page and the pull request it queued
        go.set()
        await pool.wait_idle()
        assert queued[0] is True and isinstance(queued[1], LeaseLost)
        assert store.counts() == {"queued": 0, "running": 0, "done": 2, "parked": 0}  # pull-2 never queued
    finally:
        await pool.stop(timeout=1)
        store.close()
