"""The job queue on PostgreSQL across replicas: concurrent claims, leases, wake-ups, migrations, failures.

Each test uses a schema of its own (``pg_schema``/``pg_database`` in conftest); without
a server they skip, saying why (under CI they fail).
"""

from __future__ import annotations

import threading
import time

import psycopg
import pytest
from psycopg_pool import PoolTimeout

from bot.app import pg
from bot.app.jobstore import QueuedDelivery
from bot.app.pgjobs import MIGRATIONS, PgJobStore

T0 = 1_750_000_000.0


def wait_for(condition, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        time.sleep(0.01)


def replica(pg_schema, **options) -> PgJobStore:
    url, schema = pg_schema
    # Named after the schema, so a test kills only its own connections on a shared server.
    db = pg.connect(url, schema=schema, max_size=4, timeout=5.0, migrate_components=["jobs"], name=schema)
    return PgJobStore(db, clock=lambda: T0, **options)


def deliveries(n: int, keys: int) -> list[QueuedDelivery]:
    return [QueuedDelivery(f"d{i}", "pull_request", f"o/r#{i % keys}", b"{}", action="closed") for i in range(n)]


def test_two_replicas_claiming_at_once_never_share_a_job_and_keep_each_key_in_order(pg_schema):
    a, b = replica(pg_schema), replica(pg_schema)
    try:
        assert a.enqueue_many(deliveries(120, keys=10)) == [True] * 120
        ran: list[tuple[str, int, str]] = []
        lock = threading.Lock()
        running_keys: set[str] = set()
        overlaps: list[str] = []

        def work(store: PgJobStore) -> None:
            while True:
                job = store.claim()
                if job is None:
                    if store.counts()["queued"] == 0:
                        return
                    continue
                with lock:
                    if job.key in running_keys:
                        overlaps.append(job.key)
                    running_keys.add(job.key)
                    ran.append((job.key, job.id, store.owner))
                with lock:
                    running_keys.discard(job.key)
                store.complete(job.id)

        threads = [threading.Thread(target=work, args=(s,)) for s in (a, b, a, b)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=60)
        ids = [job_id for _, job_id, _ in ran]
        assert len(ids) == len(set(ids)) == 120  # each job ran exactly once
        assert not overlaps  # never two jobs of one pull request at once
        for key in {k for k, _, _ in ran}:
            order = [job_id for k, job_id, _ in ran if k == key]
            assert order == sorted(order)  # in arrival order, whichever replica ran them
        assert {owner for _, _, owner in ran} == {a.owner, b.owner}
        assert a.counts() == {"queued": 0, "running": 0, "done": 120, "parked": 0}
    finally:
        a.close()
        b.close()


def test_a_concurrent_duplicate_delivery_is_queued_once(pg_schema):
    stores = [replica(pg_schema) for _ in range(3)]
    try:
        barrier = threading.Barrier(3)
        results: list[bool] = []

        def send(store: PgJobStore) -> None:
            barrier.wait()
            results.extend(store.enqueue_many([QueuedDelivery("same", "pull_request", "o/r#1", b"{}")]))

        threads = [threading.Thread(target=send, args=(s,)) for s in stores]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert sorted(results) == [False, False, True]
        assert stores[0].counts()["queued"] == 1
    finally:
        for s in stores:
            s.close()


def test_a_job_whose_replica_died_is_taken_over_after_its_lease(pg_schema):
    dead, alive = replica(pg_schema, lease=30), replica(pg_schema, lease=30)
    try:
        dead.enqueue_many(deliveries(2, keys=1))
        job = dead.claim(T0)
        assert alive.claim(T0 + 10) is None  # leased, and the next job of its key waits
        assert alive.requeue_running(now=T0 + 10) == 0  # a live replica's job is not taken
        assert dead.renew([job.id], now=T0 + 20) == 1  # heartbeat: lease until T0 + 50
        assert alive.claim(T0 + 45) is None
        taken = alive.claim(T0 + 51)  # no heartbeat since T0 + 20: the lease ran out
        assert (taken.id, taken.attempts) == (job.id, 2)
        assert alive.get(job.id)["owner"] == alive.owner
        dead.complete(job.id, now=T0 + 52)  # the old owner comes back: it settles nothing
        assert alive.get(job.id)["state"] == "running"
        assert dead.renew([job.id], now=T0 + 52) == 0
        alive.complete(job.id, now=T0 + 53)
        assert alive.claim(T0 + 53).delivery_id == "d1"
    finally:
        dead.close()
        alive.close()


def test_a_job_interrupted_too_often_is_parked_when_taken_back(pg_schema):
    store = replica(pg_schema, lease=5)
    try:
        store.enqueue_many(deliveries(1, keys=1))
        assert store.requeue_running(max_attempts=2, now=T0) == 0
        store.claim(T0)
        assert store.claim(T0 + 6).attempts == 2  # taken back once
        assert store.claim(T0 + 12) is None  # second interruption: parked, not run a third time
        (parked,) = store.parked()
        assert parked.error.startswith("interrupted while running 2 times")
    finally:
        store.close()


def test_a_notification_wakes_a_listening_replica(pg_schema):
    sender, listener = replica(pg_schema), replica(pg_schema)
    woken = threading.Event()
    calls: list[int] = []

    def callback() -> None:
        calls.append(1)
        if len(calls) > 1:  # the first call says "listening"
            woken.set()

    stop = listener.listen(callback)
    try:
        wait_for(lambda: calls)
        sender.enqueue_many(deliveries(1, keys=1))
        assert woken.wait(10)
    finally:
        stop()
        sender.close()
        listener.close()


def test_the_listener_comes_back_after_its_connection_is_killed(pg_schema):
    url, schema = pg_schema
    store = replica(pg_schema, poll_interval=0.2)
    calls: list[int] = []
    stop = store.listen(lambda: calls.append(1))
    try:
        wait_for(lambda: calls)
        with psycopg.connect(url, autocommit=True) as admin:
            killed = admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query LIKE 'LISTEN%%' AND query LIKE %s",
                (f"%{store.channel}%",),
            ).fetchall()
        assert killed
        wait_for(lambda: len(calls) >= 2)  # listening again (and told the pool to look)
        before = len(calls)
        other = replica(pg_schema)
        other.enqueue_many(deliveries(1, keys=1))
        other.close()
        wait_for(lambda: len(calls) > before)
    finally:
        stop()
        store.close()


def test_killed_pool_connections_are_replaced_and_work_resumes(pg_schema):
    url, _ = pg_schema
    store = replica(pg_schema)
    try:
        store.enqueue_many(deliveries(3, keys=3))
        with psycopg.connect(url, autocommit=True) as admin:
            # Waits (up to 5 s) until each backend has ended: the pool finds them dropped.
            killed = admin.execute(
                "SELECT pg_terminate_backend(pid, 5000) FROM pg_stat_activity WHERE application_name = %s",
                (store.db.schema,),
            ).fetchall()
        assert killed and all(ended for (ended,) in killed)
        jobs = [store.claim() for _ in range(3)]
        assert sorted(j.delivery_id for j in jobs) == ["d0", "d1", "d2"]
    finally:
        store.close()


def test_an_exhausted_pool_makes_callers_wait_then_fail_clearly(pg_schema):
    url, schema = pg_schema
    db = pg.connect(url, schema=schema, min_size=1, max_size=1, timeout=0.3, migrate_components=["jobs"])
    store = PgJobStore(db, clock=lambda: T0)
    try:
        with db.pool.connection():
            started = time.monotonic()
            with pytest.raises(PoolTimeout) as caught:
                store.counts()
            assert time.monotonic() - started >= 0.25
        assert isinstance(caught.value, psycopg.OperationalError)  # what the webhook turns into 503
        assert store.counts()["queued"] == 0  # the connection is back: all is well again
        db.ping()
    finally:
        store.close()


def test_replicas_migrating_at_once_apply_each_version_once(pg_schema):
    url, schema = pg_schema
    pg.register_migrations("race_demo", ["CREATE TABLE race_demo (x int)", "ALTER TABLE race_demo ADD COLUMN y int"])
    try:
        results: list[dict] = []
        errors: list[BaseException] = []

        def start() -> None:
            try:
                results.append(pg.migrate(url, schema, ["jobs", "race_demo"]))
            except BaseException as exc:  # noqa: BLE001 - reported below
                errors.append(exc)

        threads = [threading.Thread(target=start) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors
        jobs = len(pg.MIGRATIONS["jobs"])
        assert results == [{"jobs": jobs, "race_demo": 2}] * 4
        db = pg.connect(url, schema=schema, migrate_components=())
        try:
            with db.pool.connection() as conn:
                rows = conn.execute("SELECT component, version FROM schema_migrations ORDER BY 1, 2").fetchall()
            assert rows == [*(("jobs", v) for v in range(1, jobs + 1)), ("race_demo", 1), ("race_demo", 2)]
            assert pg.applied_versions(db) == {"jobs": jobs, "race_demo": 2}
        finally:
            db.close()
    finally:
        pg.MIGRATIONS.pop("race_demo", None)


def test_a_failing_migration_names_its_step_and_a_newer_schema_is_refused(pg_schema):
    from bot.app.db import DatabaseError

    url, schema = pg_schema
    pg.register_migrations("broken_demo", ["CREATE TABLE ok_demo (x int)", "CREATE TABLE nonsense ("])
    try:
        with pytest.raises(DatabaseError, match="migration 2 of 'broken_demo' failed"):
            pg.migrate(url, schema, ["broken_demo"])
        pg.register_migrations("broken_demo", [])
        with pytest.raises(DatabaseError, match="version 1 but this prguide knows only 0"):
            pg.migrate(url, schema, ["broken_demo"])
        with pytest.raises(DatabaseError, match="no migrations registered for nothing_here"):
            pg.migrate(url, schema, ["nothing_here"])
    finally:
        pg.MIGRATIONS.pop("broken_demo", None)


def test_urls_schemas_and_names_are_checked():
    assert pg.url_schema("postgresql://h/db?options=-csearch_path%3Dprguide") == "prguide"
    assert pg.url_schema("postgresql://h/db") is None
    assert pg.redact("postgresql://u:secret@h/db") == "postgresql://u:***@h/db"
    assert pg.redact("postgresql://h/db") == "postgresql://h/db"
    assert pg.is_postgresql_url("postgres://h/db") and not pg.is_postgresql_url("sqlite:x.db")
    with pytest.raises(ValueError, match="not a postgresql"):
        pg.connect("mysql://h/db")
    with pytest.raises(ValueError, match="plain identifier"):
        pg.connect("postgresql://h/db", schema="a;b")
    with pytest.raises(ValueError, match="plain identifier"):
        pg.register_migrations("bad name", [])


@pytest.mark.parametrize("ci", ["", "true"])
def test_without_a_server_postgresql_tests_skip_saying_why_and_fail_under_ci(ci, monkeypatch):
    import conftest

    monkeypatch.setattr(conftest, "_pg_problem", ["connection refused"])  # as if the server did not answer
    monkeypatch.setenv("CI", ci)
    outcome = pytest.fail.Exception if ci else pytest.skip.Exception
    why = r"PostgreSQL not reachable at \S+: tests need it; set PRGUIDE_TEST_DATABASE_URL \(connection refused\)"
    # Both outcomes are caught here, so a skip where a failure is due fails this test instead of skipping it.
    with pytest.raises((pytest.fail.Exception, pytest.skip.Exception), match=why) as raised:
        conftest.require_postgresql()
    assert raised.type is outcome


async def test_a_worker_pool_on_postgresql_runs_renews_survives_killed_connections_and_releases_on_stop(pg_schema):
    import asyncio

    from bot.app.workers import WorkerPool

    url, _ = pg_schema
    store = replica(pg_schema, lease=0.6, poll_interval=0.2)
    store.clock = time.time
    done: list[str] = []
    gate = asyncio.Event()

    async def handler(job) -> None:
        if job.key == "slow":
            await gate.wait()
        done.append(job.delivery_id)

    pool = WorkerPool(store, handler, concurrency=2)
    try:
        pool.start()
        store.enqueue_many([QueuedDelivery("s1", "pull_request", "slow", b"{}")])
        await asyncio.to_thread(wait_for, lambda: store.counts()["running"] == 1)
        (job_id,) = [j.id for j in pool.running_jobs]
        lease = store.get(job_id)["lease_until"]
        await asyncio.to_thread(wait_for, lambda: store.get(job_id)["lease_until"] > lease)  # the heartbeat
        with psycopg.connect(url, autocommit=True) as admin:  # the database drops every connection
            assert admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = %s", (store.db.schema,)
            ).fetchall()
        # Another replica queues work: the pool hears of it (or polls) and runs it.
        other = replica(pg_schema)
        other.enqueue_many(deliveries(3, keys=3))
        other.close()
        await asyncio.to_thread(wait_for, lambda: len(done) == 3)
        assert sorted(done) == ["d0", "d1", "d2"]
        assert store.get(job_id)["state"] == "running"  # its lease was kept alive throughout
    finally:
        interrupted = await pool.stop(timeout=0.05)
    assert [j.delivery_id for j in interrupted] == ["s1"]
    row = store.get(job_id)
    assert (row["state"], row["attempts"], row["owner"]) == ("queued", 0, None)  # put back, not counted
    store.close()


async def test_a_job_that_outlived_its_lease_in_this_pool_is_not_started_twice(pg_schema):
    import asyncio

    from bot.app.workers import WorkerPool

    store = replica(pg_schema, lease=0.2, poll_interval=0.05)
    store.clock = time.time
    store.renew = lambda job_ids, now=None: 0  # heartbeats that never reach the database
    runs: list[int] = []
    gate = asyncio.Event()

    async def handler(job) -> None:
        runs.append(job.attempts)
        await gate.wait()

    pool = WorkerPool(store, handler, concurrency=2)
    pool.start()
    try:
        store.enqueue_many(deliveries(1, keys=1))
        # The lease runs out and this very pool takes the job back (attempt 2)...
        await asyncio.to_thread(wait_for, lambda: (store.get(1) or {}).get("attempts") == 2)
        gate.set()
        await asyncio.to_thread(wait_for, lambda: store.counts()["done"] == 1)
        assert runs == [1]  # ...but it ran once: the first run was still going
    finally:
        await pool.stop(timeout=1)
        store.close()


async def test_a_job_queueing_work_while_the_pool_is_exhausted_waits_off_the_event_loop(pg_schema):
    import asyncio

    from bot.app.metrics import create_metrics
    from bot.app.routing import JobContext, Schedule, Services
    from bot.app.schedule import Scheduler
    from bot.app.settings import Settings

    url, schema = pg_schema
    db = pg.connect(url, schema=schema, min_size=1, max_size=1, timeout=10.0, migrate_components=["jobs"])
    store = PgJobStore(db, clock=lambda: T0)
    store.enqueue_many([QueuedDelivery("parent", "prguide.test", "k", b"{}")])
    settings = Settings(app_id=1, private_key="k", webhook_secret="s")
    ctx = JobContext(Services(settings, clients=None, auth=None, rules=None, metrics=create_metrics(), store=store),
                     store.claim())

    async def installations() -> list[int]:
        return [1]

    scheduler = Scheduler([Schedule("reconcile", "prguide.reconcile", None, lambda s: 3600)], settings, store, installations)
    held, release = threading.Event(), threading.Event()

    def hold() -> None:  # the pool's one connection is busy: every caller waits for it
        with db.pool.connection():
            held.set()
            release.wait(10)

    holder = threading.Thread(target=hold)
    holder.start()
    try:
        assert await asyncio.to_thread(held.wait, 5)
        queued = asyncio.create_task(
            ctx.enqueue("prguide.backfill", "page", {"page": 2}, key="b", delivery_id="child", installation_id=7)
        )
        ticked = asyncio.create_task(scheduler.tick(3600 * 500 + 10))
        # Both wait in the pool's queue, each in a thread of its own ...
        await asyncio.to_thread(wait_for, lambda: db.pool.get_stats().get("requests_waiting", 0) == 2)
        # ... while the loop goes on.
        ran = asyncio.Event()
        asyncio.get_running_loop().call_soon(ran.set)
        await asyncio.wait_for(ran.wait(), 5)
        assert not queued.done() and not ticked.done()
    finally:
        release.set()
        await asyncio.to_thread(holder.join)
    try:
        assert await queued is True and await ticked == 1
        assert store.counts()["queued"] == 2
    finally:
        store.close()


def test_two_replicas_running_the_migrations_at_once_apply_each_version_once(pg_schema):
    import os
    import subprocess
    import sys
    import zlib

    url, schema = pg_schema
    pg.load_components()
    lock = (pg.MIGRATION_LOCK, zlib.crc32(schema.encode()) - 2**31)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PRGUIDE_")}
    command = [sys.executable, "-m", "bot", "db", "migrate", "--url", url, "--schema", schema]
    with psycopg.connect(url, autocommit=True) as gate:
        # Hold the migration lock until both processes wait on it: then they run at once.
        gate.execute("SELECT pg_advisory_lock(%s, %s)", lock)
        procs = [subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE) for _ in range(2)]
        try:
            wait_for(
                lambda: gate.execute(
                    "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND objid = %s",
                    (lock[1] % 2**32,),
                ).fetchone()[0] == 2,
                timeout=60,
            )
        finally:
            gate.execute("SELECT pg_advisory_unlock(%s, %s)", lock)
        results = [p.communicate(timeout=60) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], results
    assert results[0][0] == results[1][0] and b"jobs: version" in results[0][0]  # both report the same versions (stdout)
    db = pg.connect(url, schema=schema, migrate_components=())
    try:
        with db.pool.connection() as conn:
            rows = conn.execute("SELECT component, version, count(*) FROM schema_migrations GROUP BY 1, 2").fetchall()
        assert rows and all(count == 1 for _, _, count in rows)
        applied = pg.applied_versions(db)
        assert {name: applied.get(name) for name in ("jobs", "state", "tagview")} == {
            name: len(pg.MIGRATIONS[name]) for name in ("jobs", "state", "tagview")
        }
    finally:
        db.close()
