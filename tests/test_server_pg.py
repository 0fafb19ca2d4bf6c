"""The app in PostgreSQL mode against the sandbox: guides, health, metrics, roles, a database that does not answer
or restarts."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest
from loopback import NUMBERS, REPO, SMALL_PR, app_private_key, start_loopback  # noqa: F401
from pg_helpers import Outage
from sandbox_helpers import made_up_fix
from test_offload import Held

from bot.app.server import wait_idle

def pg_settings(pg_schema, **more):
    url, schema = pg_schema
    return {"database_url": url, "database_schema": schema, "db_pool_max": 4, "db_pool_timeout": 2.0, **more}


# What is tested here is the database, not the guide: made-up pull requests under the
# corpus numbers do, and the tests run where the corpus is absent.
@pytest.fixture
def bundles():
    return {n: made_up_fix(n, repo=REPO, author="contributor-79") for n in NUMBERS[:2]}


async def test_a_merge_gets_its_guide_and_health_and_metrics_name_the_backend(
    pg_schema, app_private_key, tmp_path, bundles  # noqa: F811
):
    async with start_loopback(app_private_key, tmp_path, bundles, settings=pg_settings(pg_schema)) as lb:
        await lb.merged(SMALL_PR, delivery="m-1")
        assert len(lb.comments()) == 1 and lb.labels()
        resp = await lb.deliver(lb.payload(SMALL_PR), delivery="m-1")
        assert resp.status == 202 and (await resp.json()) == {"duplicate": f"verl-project/verl#{SMALL_PR}", "delivery": "m-1"}
        assert lb.jobs() == {"queued": 0, "running": 0, "done": 1, "parked": 0}
        health = await (await lb.client.get("/healthz")).json()
        assert health["database"] == {"backend": "postgresql", "reachable": True} and health["role"] == "all"
        metrics = await (await lb.client.get("/metrics")).text()
        assert 'prguide_info{backend="postgresql",role="all"' in metrics
        assert 'prguide_jobs{state="done"} 1.0' in metrics


async def test_a_database_that_does_not_answer_gives_503_not_500(
    pg_schema, app_private_key, tmp_path, bundles  # noqa: F811
):
    settings = pg_settings(pg_schema, db_pool_max=1, db_pool_min=1, db_pool_timeout=0.3)
    async with start_loopback(app_private_key, tmp_path, bundles, settings=settings) as lb:
        await lb.merged(SMALL_PR, delivery="m-1")
        pool = lb.state.store.db.pool
        held = threading.Event()
        release = threading.Event()

        def hold() -> None:  # every connection busy: what callers see of a database that hangs
            with pool.connection():
                held.set()
                release.wait(10)

        holder = threading.Thread(target=hold)
        holder.start()
        try:
            assert held.wait(5)
            resp = await lb.deliver(lb.payload(SMALL_PR), delivery="m-2")
            assert resp.status == 503 and "job queue unavailable" in (await resp.json())["error"]
            health = await lb.client.get("/healthz")
            assert health.status == 503
            assert (await health.json())["database"] == {"backend": "postgresql", "reachable": False}
        finally:
            release.set()
            await asyncio.to_thread(holder.join)
        # GitHub's redelivery of the refused delivery is taken once the database answers.
        resp = await lb.deliver(lb.payload(SMALL_PR), delivery="m-2")
        assert resp.status == 202
        await wait_idle(lb.app)
        assert len(lb.comments()) == 1


async def test_roles_split_taking_deliveries_from_running_jobs(
    pg_schema, app_private_key, tmp_path, bundles  # noqa: F811
):
    async with start_loopback(
        app_private_key, tmp_path / "w", bundles, settings=pg_settings(pg_schema, role="web")
    ) as web:
        resp = await web.deliver(web.payload(SMALL_PR), delivery="m-1")
        assert resp.status == 202
        assert web.jobs()["queued"] == 1  # a web replica runs no jobs
        async with start_loopback(
            app_private_key, tmp_path / "k", bundles, settings=pg_settings(pg_schema, role="worker"),
            sandbox_options={},
        ) as worker:
            refused = await worker.deliver(worker.payload(SMALL_PR), delivery="m-2")
            assert refused.status == 503 and "role worker" in (await refused.json())["error"]
            await wait_idle(worker.app)
            assert worker.state.store.counts()["done"] == 1
            assert len(worker.comments()) == 1
            # The tag view is the web replica's, as the README says; the worker only stores the guide.
            assert (await worker.client.get("/repos")).status == 404
            page = await web.client.get("/repos")
            assert page.status == 200 and "verl-project/verl" in await page.text()


async def test_a_database_restart_while_prguide_runs_answers_503_then_the_interrupted_job_runs_again(
    pg_schema, app_private_key, tmp_path, bundles  # noqa: F811
):
    first, second = sorted(bundles)
    with Outage() as outage:
        settings = pg_settings(pg_schema, database_url=outage.url, db_pool_timeout=1.0)
        async with start_loopback(app_private_key, tmp_path, bundles, settings=settings) as lb:
            guides = lb.state.services.guides
            held = Held(guides, "save")
            lb.state.services.guides = held
            resp = await lb.deliver(lb.payload(first), delivery="m-1")
            assert resp.status == 202
            await held.wait_entered()  # the guide is published; storing it for the tag view waits
            pong = await lb.deliver({"zen": "Design for failure.", "hook_id": 1}, event="ping", delivery="p-1")
            assert pong.status == 200 and (await lb.client.get("/healthz")).status == 200

            outage.down()  # the server restarts: every connection drops, new ones are refused
            refused = await lb.deliver(lb.payload(second), delivery="m-2")
            assert refused.status == 503 and "job queue unavailable" in (await refused.json())["error"]
            health = await lb.client.get("/healthz")
            assert health.status == 503 and (await health.json())["database"]["reachable"] is False
            # The job goes on: storing its guide fails (logged), and so does recording its end,
            # so its row stays running under a lease nobody renews.
            held.release.set()
            await wait_idle(lb.app)
            assert len(lb.comments(first)) == 1

            outage.up()
            deadline = time.monotonic() + 30
            while (await lb.client.get("/healthz")).status != 200:  # each try waits for the pool
                assert time.monotonic() < deadline, "the pool did not reconnect"
            # Leases run on the database's clock: end this one there instead of waiting for it.
            store = lb.state.store
            with store.db.connection() as conn:
                conn.execute("UPDATE jobs SET lease_until = lease_until - %s WHERE state = 'running'", (store.lease + 1,))
            assert await asyncio.to_thread(store.requeue_running) == 1
            resp = await lb.deliver(lb.payload(second), delivery="m-2")  # GitHub's redelivery
            assert resp.status == 202
            await wait_idle(lb.app)
            assert lb.jobs() == {"queued": 0, "running": 0, "done": 2, "parked": 0}
            assert len(lb.comments(first)) == 1 and len(lb.comments(second)) == 1
            assert guides.get(REPO, first) is not None and guides.get(REPO, second) is not None
