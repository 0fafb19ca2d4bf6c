"""A bad day at GitHub and at our end: nothing lost, nothing duplicated.

The real app serves ``POST /webhook`` on loopback and calls the GitHub sandbox, whose
planned faults (``/_sandbox/faults``) make GitHub fail on purpose. Jobs are awaited
with ``wait_idle``; the GitHub client's waits are recorded, never slept.
"""

from __future__ import annotations

import asyncio
import json
import random
import sqlite3
import time

import pytest
from loopback import (  # noqa: F401
    ADMIN_TOKEN,
    REPO,
    SMALL_PR,
    app_private_key,
    delivery_headers,
    loopback,
    pr_delivery,
    running_app,
    settings_for,
    small_pr,
    start_loopback,
)
from sandbox_helpers import start_sandbox

from bot.app.jobs import JobStore
from bot.app.server import STATE, wait_idle
from bot.app.workers import rate_limit_spread
from bot.engine.build import build_guide
from bot.engine.history.coupling import History
from bot.engine.rules import load_rules
from bot.engine.snapshot import PullRequestSnapshot

FILES = rf"^/repos/{REPO}/pulls/{SMALL_PR}/files"


def snapshot_of(bundle: dict) -> PullRequestSnapshot:
    return PullRequestSnapshot.from_github(bundle["pull"], bundle["files"], bundle["reviews"], bundle["review_comments"])


def expected_guide(bundle: dict, rules=None):
    return build_guide(snapshot_of(bundle), rules or load_rules())


def comment_posts(sandbox, number: int = SMALL_PR) -> list[dict]:
    return [r for r in sandbox.requests if r["method"] == "POST" and r["path"] == f"/repos/{REPO}/issues/{number}/comments"]


def statuses(sandbox, pattern: str) -> list[int]:
    import re

    return [r["status"] for r in sandbox.requests if r["method"] == "GET" and re.search(pattern, r["path"])]


async def test_502_on_the_files_endpoint_then_success_gives_one_comment(loopback):
    loopback.sandbox.add_faults([{"method": "GET", "path": FILES, "status": 502}])
    await loopback.merged(delivery="flaky")

    assert statuses(loopback.sandbox, FILES) == [502, 200]
    assert len(loopback.sleeps.seconds) == 1  # one backoff, recorded instead of slept
    (comment,) = loopback.comments()
    assert comment.body == expected_guide(loopback.bundles[SMALL_PR]).markdown
    assert len(comment_posts(loopback.sandbox)) == 1
    assert loopback.jobs() == {"queued": 0, "running": 0, "done": 1, "parked": 0}


async def test_502_on_creating_the_comment_retries_the_job_not_the_post(loopback):
    # GitHub may have created the comment before failing, so the POST is not repeated
    # in place; the job runs again and looks for its comment first.
    loopback.sandbox.add_faults([{"method": "POST", "path": rf"/issues/{SMALL_PR}/comments$", "status": 502}])
    store = loopback.state.store
    resp = await loopback.deliver(loopback.payload(), delivery="post-502")
    assert resp.status == 202
    await wait_idle(loopback.app)
    job = store.get(1)
    assert job["state"] == "queued" and job["attempts"] == 1  # handed back, waiting for its backoff
    assert "502" in job["error"]

    loopback.state.store.clock = lambda: time.time() + 3600  # its retry is due (by the queue's clock)
    await wait_idle(loopback.app)
    assert [r["status"] for r in comment_posts(loopback.sandbox)] == [502, 201]
    assert len(loopback.comments()) == 1
    assert store.get(1)["state"] == "done"


async def test_secondary_rate_limit_with_retry_after_waits_then_succeeds(loopback):
    loopback.sandbox.add_faults([{"method": "GET", "path": FILES, "status": 403, "retry_after": 1}])
    await loopback.merged(delivery="limited")

    assert statuses(loopback.sandbox, FILES) == [403, 200]
    # Exactly what retry-after asked for; the installation's requests sent meanwhile wait
    # for the rest of it (here no time passes while the client "sleeps").
    assert loopback.sleeps.seconds[0] == 1.0 and all(0 < s <= 1.0 for s in loopback.sleeps.seconds)
    assert len(loopback.comments()) == 1
    assert loopback.jobs()["done"] == 1
    metrics = await (await loopback.client.get("/metrics")).text()
    assert 'prguide_github_api_errors_total{status="403"} 1.0' in metrics


@pytest.mark.parametrize(
    "fault, wait",
    [
        ({"status": 403, "retry_after": 600}, 600.0),  # secondary limit, long retry-after
        ({"status": 429, "retry_after": 120}, 120.0),
        ({"status": 403, "rate_limit_remaining": 0}, None),  # primary limit: until x-ratelimit-reset
    ],
)
async def test_long_rate_limit_waits_are_handed_to_the_queue(loopback, fault, wait):
    loopback.sandbox.add_faults([{"method": "GET", "path": FILES, **fault}])
    store = loopback.state.store
    resp = await loopback.deliver(loopback.payload(), delivery="long-limit")
    assert resp.status == 202
    await wait_idle(loopback.app)

    job = store.get(1)
    assert job["state"] == "queued" and loopback.comments() == []
    assert job["attempts"] == 0 and job["error"].startswith("RateLimited")  # a wait is no failed attempt
    delay = job["not_before"] - job["updated_at"]
    if wait is None:  # the sandbox's window resets an hour after its first request
        wait = 3601.0
        assert 3000 < delay
    assert wait - 2 <= delay <= wait + rate_limit_spread(wait)  # plus jitter, so held jobs do not all return at once
    assert loopback.sleeps.seconds == []  # the client did not sit on a worker

    later = lambda: time.time() + delay + 1  # noqa: E731
    # The queue's clock and the rate limits': the wait is over.
    store.clock = loopback.state.services.rate_limits.clock = later
    # The sandbox's own clock does not move: give the installation its requests back.
    loopback.sandbox.add_faults([{"path": "", "rate_limit_remaining": 5000}])
    await wait_idle(loopback.app)
    assert len(loopback.comments()) == 1
    assert store.get(1)["state"] == "done" and store.get(1)["attempts"] == 1


async def test_token_expiring_mid_job_is_refreshed(loopback):
    sandbox = loopback.sandbox
    sandbox.add_faults([{"method": "GET", "path": FILES, "status": 502}])
    # While the client waits to retry the files, every token GitHub issued expires.
    loopback.sleeps.hooks.append(sandbox.expire_tokens)
    auth = loopback.state.services.auth
    await loopback.merged(delivery="expiring")

    token_posts = [r for r in sandbox.requests if r["path"] == "/app/installations/1/access_tokens"]
    assert len(token_posts) >= 2 and all(r["status"] == 201 for r in token_posts)
    assert auth.token_requests == len(token_posts)
    assert 401 in statuses(sandbox, FILES)
    assert statuses(sandbox, FILES)[-1] == 200
    assert len(loopback.comments()) == 1
    assert loopback.state.store.get(1)["attempts"] == 1  # refreshed within the attempt


async def test_token_expired_between_jobs_is_refreshed_once(loopback):
    await loopback.merged(delivery="first")
    assert loopback.sandbox.expire_tokens() == 1
    auth = loopback.state.services.auth
    await loopback.merged(7422, delivery="second")
    assert auth.token_requests == 2
    assert len(loopback.comments(7422)) == 1
    assert loopback.jobs()["done"] == 2


async def test_process_killed_after_the_2xx_and_before_publishing(app_private_key, load_bundle_json, tmp_path):  # noqa: F811
    bundles = {n: load_bundle_json(n) for n in (SMALL_PR, 7422)}
    async with start_sandbox(app_private_key, bundles=list(bundles.values())) as sandbox:
        settings = settings_for(sandbox, app_private_key, tmp_path)
        async with running_app(settings, sandbox=sandbox) as client:
            # The worker pool dies first: deliveries are answered and stored, never worked on.
            await client.app[STATE].pool.stop()
            for n in bundles:
                body = json.dumps(pr_delivery(bundles[n])).encode()
                resp = await client.post("/webhook", data=body, headers=delivery_headers(body, delivery=f"kill-{n}"))
                assert resp.status == 202
            # One job had been taken by a worker when the process died.
            claimed = client.app[STATE].store.claim()
            assert claimed is not None
        assert sandbox.requests == []

        store = JobStore.open(str(settings.db_path))
        assert store.counts() == {"queued": 1, "running": 1, "done": 0, "parked": 0}
        store.close()

        async with running_app(settings, sandbox=sandbox) as client:
            await wait_idle(client.app)
            assert client.app[STATE].store.counts() == {"queued": 0, "running": 0, "done": 2, "parked": 0}
        for n in bundles:
            assert len(sandbox.comments(REPO, n)) == 1
            assert len(comment_posts(sandbox, n)) == 1


async def test_process_killed_after_publishing_before_recording_it(app_private_key, load_bundle_json, tmp_path):  # noqa: F811
    bundle = load_bundle_json(SMALL_PR)
    async with start_sandbox(app_private_key, bundles=[bundle]) as sandbox:
        settings = settings_for(sandbox, app_private_key, tmp_path)
        async with running_app(settings, sandbox=sandbox) as client:
            body = json.dumps(pr_delivery(bundle)).encode()
            assert (await client.post("/webhook", data=body, headers=delivery_headers(body, delivery="late"))).status == 202
            await wait_idle(client.app)
        def content_writes() -> list[dict]:
            return [r for r in sandbox.requests if r["method"] != "GET" and not r["path"].startswith(("/app/", "/graphql"))]

        writes = content_writes()
        assert writes
        # The comment is out, but the process died before marking the job done.
        conn = sqlite3.connect(settings.db_path)
        with conn:
            conn.execute("UPDATE jobs SET state = 'running', outcome = NULL")
        conn.close()

        async with running_app(settings) as client:
            await wait_idle(client.app)
            assert client.app[STATE].store.counts()["done"] == 1
        assert len(sandbox.comments(REPO, SMALL_PR)) == 1
        # The second run found its comment up to date: nothing more was written.
        assert content_writes() == writes
        assert len(comment_posts(sandbox)) == 1


async def test_the_same_delivery_20_times_at_once_gives_one_comment(loopback):
    payload = loopback.payload()
    answers = await asyncio.gather(*(loopback.deliver(payload, delivery="same-guid") for _ in range(20)))
    assert [a.status for a in answers] == [202] * 20
    bodies = [await a.json() for a in answers]
    assert sum("queued" in b for b in bodies) == 1
    assert sum("duplicate" in b for b in bodies) == 19
    await wait_idle(loopback.app)

    assert len(loopback.comments()) == 1
    assert len(comment_posts(loopback.sandbox)) == 1
    assert loopback.jobs() == {"queued": 0, "running": 0, "done": 1, "parked": 0}


async def test_200_deliveries_for_50_pull_requests_at_once(app_private_key, corpus_dir, tmp_path):  # noqa: F811
    bundles = {}
    for path in sorted(corpus_dir.glob("*.json"), key=lambda p: p.stat().st_size)[:50]:
        bundle = json.loads(path.read_text(encoding="utf-8"))
        bundles[bundle["pull"]["number"]] = bundle
    assert len(bundles) == 50
    async with start_loopback(app_private_key, tmp_path, bundles, settings={"workers": 8}) as lb:
        deliveries = [(n, f"{n}-{i}") for n in bundles for i in range(4)]
        random.Random(5).shuffle(deliveries)
        answers = await asyncio.gather(*(lb.deliver(lb.payload(n), delivery=d) for n, d in deliveries))
        assert [a.status for a in answers] == [202] * 200
        await wait_idle(lb.app)

        assert lb.jobs() == {"queued": 0, "running": 0, "done": 200, "parked": 0}
        rules = load_rules()
        # A guide whose description names the pull request it follows up also says which
        # functions both changed once that one's guide is stored: with 200 deliveries at once,
        # it may or may not be stored first (#7455 follows #7050), so either guide is right.
        snapshots = {n: snapshot_of(b) for n, b in bundles.items()}
        stored = History(tuple(sorted((build_guide(s, rules).change for s in snapshots.values()), key=lambda c: c.merged_at)), None)
        for n, bundle in bundles.items():
            expected = expected_guide(bundle, rules)
            comments = lb.comments(n)
            assert len(comments) == 1, n
            assert comments[0].body in (expected.markdown, build_guide(snapshots[n], rules, history=stored).markdown), n
            assert sorted(lb.labels(n)) == sorted(expected.labels), n
        posts = [r for r in lb.sandbox.requests if r["method"] == "POST" and r["path"].endswith("/comments")]
        assert len(posts) == 50
        # Three of each four runs found the guide already up to date.
        assert not [r for r in lb.sandbox.requests if r["method"] == "PATCH" and "/issues/comments/" in r["path"]]


async def test_a_job_that_keeps_failing_is_parked_shown_and_retried(app_private_key, small_pr, tmp_path):  # noqa: F811
    bundles = small_pr
    pool = {"max_attempts": 3, "backoff": lambda attempt: 0.0}
    async with start_loopback(app_private_key, tmp_path, bundles, pool_options=pool) as lb:
        lb.sandbox.add_faults([{"method": "GET", "path": FILES, "status": 502, "times": None}])
        await lb.merged(delivery="doomed")

        assert lb.comments() == []
        health = await (await lb.client.get("/healthz")).json()
        assert health["parked"] == 1 and health["queue"]["parked"] == 1
        assert "error" not in json.dumps(health["queue"])  # counts only: no error text for anonymous callers

        bearer = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
        listing = await (await lb.client.get("/admin/jobs/parked", headers=bearer)).json()
        (parked,) = listing["parked"]
        assert (parked["delivery"], parked["key"], parked["attempts"]) == ("doomed", f"{REPO}#{SMALL_PR}", 3)
        assert "502" in parked["error"]

        # Without the token nothing happens.
        assert (await lb.client.post("/admin/jobs/retry")).status == 401
        assert (await lb.client.post("/admin/jobs/retry", headers={"Authorization": "Bearer wrong"})).status == 401
        assert lb.jobs()["parked"] == 1

        lb.sandbox.clear_faults()
        resp = await lb.client.post("/admin/jobs/retry", json={"id": parked["id"]}, headers=bearer)
        assert resp.status == 200 and await resp.json() == {"retried": 1}
        await wait_idle(lb.app)

        assert len(lb.comments()) == 1
        health = await (await lb.client.get("/healthz")).json()
        assert health["parked"] == 0 and health["queue"]["done"] == 1
        again = await lb.client.post("/admin/jobs/retry", json={"id": parked["id"]}, headers=bearer)
        assert again.status == 404


async def test_admin_routes_are_off_without_a_token(app_private_key, small_pr, tmp_path):  # noqa: F811
    bundles = small_pr
    async with start_loopback(app_private_key, tmp_path, bundles, settings={"admin_token": None}) as lb:
        for method, path in (("GET", "/admin/jobs/parked"), ("POST", "/admin/jobs/retry")):
            resp = await lb.client.request(method, path, headers={"Authorization": "Bearer anything"})
            assert resp.status == 403
            assert "PRGUIDE_ADMIN_TOKEN" in (await resp.json())["error"]


async def test_404_after_uninstall_ends_the_job_cleanly(loopback):
    await loopback.merged(delivery="before")
    sandbox = loopback.sandbox
    # Uninstalled: the cached token stops working and GitHub no longer issues new ones.
    sandbox.expire_tokens()
    sandbox.add_faults([{"method": "POST", "path": r"^/app/installations/1/access_tokens$", "status": 404, "times": None}])
    writes_before = len(loopback.writes())

    await loopback.merged(7422, delivery="after-uninstall")

    job = loopback.state.store.get(2)
    assert (job["state"], job["outcome"], job["attempts"]) == ("done", "given_up", 1)
    assert "installation 1 not found" in job["error"]
    assert loopback.comments(7422) == [] and loopback.labels(7422) == []
    new_writes = loopback.writes()[writes_before:]
    # Only token requests, each refused (the job's concurrent reads each met the 401).
    assert new_writes and {(r["method"], r["path"], r["status"]) for r in new_writes} == {
        ("POST", "/app/installations/1/access_tokens", 404)
    }
    assert loopback.jobs()["parked"] == 0


async def test_installation_deleted_drops_the_cached_token(loopback):
    await loopback.merged(delivery="before")
    auth = loopback.state.services.auth
    assert auth.token_requests == 1
    requests_before = len(loopback.sandbox.requests)

    payload = loopback.sandbox.state.installation_event(1, "deleted")
    resp = await loopback.deliver(payload, delivery="uninstall", event="installation")
    assert resp.status == 202  # the token is dropped on the spot; a job cancels the installation's work
    await wait_idle(loopback.app)
    assert len(loopback.sandbox.requests) == requests_before  # nothing called
    assert loopback.jobs()["done"] == 2
    assert loopback.state.store.get(2)["outcome"] == "succeeded"

    await loopback.merged(7422, delivery="after")
    assert auth.token_requests == 2


def test_admin_token_setting_is_read_checked_and_hidden(app_private_key):  # noqa: F811
    from bot.app.settings import SettingsError, from_env

    env = {"GITHUB_APP_ID": "1", "GITHUB_PRIVATE_KEY": app_private_key.decode(), "GITHUB_WEBHOOK_SECRET": "s"}
    assert from_env(env).admin_token is None
    settings = from_env({**env, "PRGUIDE_ADMIN_TOKEN": ADMIN_TOKEN})
    assert settings.admin_token == ADMIN_TOKEN and ADMIN_TOKEN not in repr(settings)
    with pytest.raises(SettingsError, match="PRGUIDE_ADMIN_TOKEN must be at least 16 characters"):
        from_env({**env, "PRGUIDE_ADMIN_TOKEN": "short"})


@pytest.mark.parametrize("body", [b"{", b"[1]", b'{"id": "1"}', b'{"id": 1, "all": true}', b'{"id": true}'])
async def test_admin_retry_refuses_a_malformed_request(app_private_key, tmp_path, body):  # noqa: F811
    async with start_loopback(app_private_key, tmp_path, {}) as lb:
        headers = {"Authorization": f"Bearer {ADMIN_TOKEN}", "Content-Type": "application/json"}
        resp = await lb.client.post("/admin/jobs/retry", data=body, headers=headers)
        assert resp.status == 400
        assert "id" in (await resp.json())["error"]


async def test_a_burst_of_deliveries_for_one_pr_builds_its_guide_once_or_twice_not_per_delivery(loopback):
    payload = loopback.payload()
    for i in range(10):
        resp = await loopback.deliver(payload, delivery=f"storm-{i}")
        assert resp.status == 202
    await wait_idle(loopback.app)
    assert len(loopback.comments()) == 1
    # Jobs that a later delivery supersedes end without calling GitHub.
    assert len(comment_posts(loopback.sandbox)) == 1
    files_reads = [r for r in loopback.sandbox.requests if r["path"].split("?")[0].endswith(f"/pulls/{SMALL_PR}/files")]
    assert len(files_reads) < 10
    assert loopback.jobs()["done"] == 10
