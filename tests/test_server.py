"""The webhook server over loopback: refusals, routing decisions, queueing, health and metrics.

These tests stub the job handlers; tests/test_end_to_end.py runs the real merged-PR
job against the GitHub sandbox.
"""

from __future__ import annotations

import copy
import json
import threading
from pathlib import Path

import pytest
from aiohttp.test_utils import TestClient, TestServer

from bot.app.routing import Route, Router, default_router
from bot.features.guide import MERGED_PULL_REQUEST
from bot.app.server import STATE, create_app, wait_idle
from bot.app.settings import Settings
from bot.app.webhook import sign

SECRET = "webhook-secret"


class FakeAuth:
    api_url = "http://127.0.0.1:9"  # never called

    def __init__(self):
        self.forgotten: list[int] = []

    def forget(self, installation_id: int) -> None:
        self.forgotten.append(installation_id)

    async def bot_login(self) -> str:
        return "prguide[bot]"

    async def bot_identity(self):
        from bot.app.auth import BotIdentity

        return BotIdentity("prguide[bot]")


def settings_for(tmp_path: Path, **changes) -> Settings:
    values = dict(app_id=1, private_key="unused", webhook_secret=SECRET, db_path=tmp_path / "jobs.db", workers=2)
    values.update(changes)
    return Settings(**values)


def recording_router(seen: list) -> Router:
    """The shipped routes, with each job handler replaced by one that records the job."""

    async def record(job, ctx):
        seen.append(job)
        ctx.outcome = "recorded"

    merged = Route(
        MERGED_PULL_REQUEST.event, MERGED_PULL_REQUEST.actions, record, MERGED_PULL_REQUEST.accept, MERGED_PULL_REQUEST.bots
    )
    comments = Route("issue_comment", ("created", "edited"), record, lambda d: None if "/prguide" in d.payload["comment"]["body"] else "not a command")
    return Router([merged, comments])


@pytest.fixture
async def server(tmp_path):
    seen: list = []
    auth = FakeAuth()
    app = create_app(settings_for(tmp_path), router=recording_router(seen), rules=object(), auth=auth)
    client = TestClient(TestServer(app))
    await client.start_server()
    try:
        yield client, seen, auth
    finally:
        await client.close()


def merged_payload(webhook_payload, **pull_changes) -> dict:
    """GitHub's example ``pull_request.closed`` payload, made a merge (``merged``, ``merged_at``)."""
    payload = copy.deepcopy(webhook_payload("pull_request", "closed.payload.json"))
    pull = payload["pull_request"]
    pull.update(merged=True, merged_at=pull["closed_at"])
    pull.update(pull_changes)
    return payload


async def deliver(client, event: str, payload, *, delivery: str = "d-1", secret: str = SECRET, headers=None, raw: bytes | None = None):
    body = raw if raw is not None else json.dumps(payload, ensure_ascii=False).encode("utf-8")
    sent = {
        "X-GitHub-Event": event,
        "X-GitHub-Delivery": delivery,
        "Content-Type": "application/json",
        "X-Hub-Signature-256": sign(secret, body),
    }
    sent.update(headers or {})
    sent = {k: v for k, v in sent.items() if v is not None}
    return await client.post("/webhook", data=body, headers=sent)


async def test_merged_pull_request_is_queued_and_handled(server, webhook_payload):
    client, seen, _ = server
    resp = await deliver(client, "pull_request", merged_payload(webhook_payload))
    assert resp.status == 202
    assert await resp.json() == {"queued": "Codertocat/Hello-World#2", "delivery": "d-1"}
    await wait_idle(client.app)
    (job,) = seen
    assert (job.delivery_id, job.event, job.action, job.key, job.installation_id) == (
        "d-1", "pull_request", "closed", "Codertocat/Hello-World#2", 1,
    )
    assert job.data["pull_request"]["merged"] is True


async def test_same_delivery_twice_is_queued_once(server, webhook_payload):
    client, seen, _ = server
    first = await deliver(client, "pull_request", merged_payload(webhook_payload), delivery="same")
    second = await deliver(client, "pull_request", merged_payload(webhook_payload), delivery="same")
    assert (first.status, second.status) == (202, 202)
    assert "duplicate" in await second.json()
    await wait_idle(client.app)
    assert len(seen) == 1


async def test_closed_without_merge_is_ignored(server, webhook_payload):
    client, seen, _ = server
    payload = merged_payload(webhook_payload)
    payload["pull_request"].update(merged=False, merged_at=None)
    resp = await deliver(client, "pull_request", payload)
    assert resp.status == 200
    assert await resp.json() == {"ignored": "closed without merging"}
    await wait_idle(client.app)
    assert seen == []
    assert client.app[STATE].store.counts()["queued"] == 0


@pytest.mark.parametrize(
    "event, fixture, reason",
    [
        ("pull_request", "opened.payload.json", "prguide does not act on pull_request.opened"),
        ("pull_request_review", "submitted.payload.json", "prguide does not act on pull_request_review.submitted"),
        ("installation", "created.payload.json", "prguide does not act on installation.created"),
    ],
)
async def test_other_events_and_actions_are_ignored_with_200(server, webhook_payload, event, fixture, reason):
    client, seen, _ = server
    resp = await deliver(client, event, webhook_payload(event, fixture))
    assert resp.status == 200
    assert await resp.json() == {"ignored": reason}
    await wait_idle(client.app)
    assert seen == []


async def test_unknown_event_is_ignored(server):
    client, seen, _ = server
    resp = await deliver(client, "star", {"action": "created"})
    assert resp.status == 200
    assert (await resp.json())["ignored"] == "prguide does not act on star.created"


async def test_ping_answers_pong(server, webhook_payload):
    client, _, _ = server
    resp = await deliver(client, "ping", webhook_payload("ping", "with-app_id.payload.json"))
    assert resp.status == 200
    assert await resp.text() == "pong"


@pytest.mark.parametrize("action", ["deleted", "suspend"])
async def test_installation_removed_forgets_its_token(server, webhook_payload, action):
    client, seen, auth = server
    payload = webhook_payload("installation", "deleted.payload.json")
    payload["action"] = action
    resp = await deliver(client, "installation", payload)
    assert resp.status == 200
    assert auth.forgotten == [payload["installation"]["id"]]
    assert seen == []


async def test_comment_commands_route_through_the_seam(server, webhook_payload):
    client, seen, _ = server
    payload = webhook_payload("issue_comment", "created.with-installation.payload.json")
    payload["comment"]["body"] = "hello"
    assert (await deliver(client, "issue_comment", payload, delivery="c-1")).status == 200
    payload["comment"]["body"] = "/prguide refresh"
    resp = await deliver(client, "issue_comment", payload, delivery="c-2")
    assert resp.status == 202
    await wait_idle(client.app)
    assert [job.delivery_id for job in seen] == ["c-2"]


async def test_comments_from_bots_are_ignored(server, webhook_payload):
    client, seen, _ = server
    payload = webhook_payload("issue_comment", "created.with-installation.payload.json")
    payload["comment"]["body"] = "/prguide refresh"
    payload["sender"] = {"login": "prguide[bot]", "type": "Bot"}
    resp = await deliver(client, "issue_comment", payload)
    assert resp.status == 200
    assert (await resp.json())["ignored"] == "sent by the bot prguide[bot]"
    payload["sender"] = {"login": "other-helper", "type": "Bot"}
    resp = await deliver(client, "issue_comment", payload, delivery="d-2")
    assert resp.status == 200
    await wait_idle(client.app)
    assert seen == []


async def test_merges_by_a_merge_bot_are_still_guided(server, webhook_payload):
    client, seen, _ = server
    payload = merged_payload(webhook_payload)
    payload["sender"] = {"login": "github-merge-queue[bot]", "type": "Bot"}
    assert (await deliver(client, "pull_request", payload)).status == 202
    await wait_idle(client.app)
    assert len(seen) == 1


@pytest.mark.parametrize(
    "headers, status",
    [
        ({"X-Hub-Signature-256": None}, 401),
        ({"X-Hub-Signature-256": "sha256=" + "0" * 64}, 401),
        ({"X-Hub-Signature-256": None, "X-Hub-Signature": "sha1=" + "0" * 40}, 401),
        ({"X-GitHub-Event": None}, 400),
        ({"X-GitHub-Delivery": None}, 400),
        ({"Content-Type": "application/x-www-form-urlencoded"}, 415),
    ],
)
async def test_refused_deliveries_queue_nothing(server, webhook_payload, headers, status):
    client, seen, _ = server
    resp = await deliver(client, "pull_request", merged_payload(webhook_payload), headers=headers)
    assert resp.status == status
    assert "error" in await resp.json()
    assert client.app[STATE].store.counts() == {"queued": 0, "running": 0, "done": 0, "parked": 0}


async def test_non_ascii_signature_header_is_401_not_500(server, webhook_payload):
    client, _, _ = server
    body = json.dumps(merged_payload(webhook_payload)).encode()
    # aiohttp's client refuses non-ASCII header values, so send the raw bytes ourselves.
    import asyncio

    reader, writer = await asyncio.open_connection(client.host, client.port)
    head = (
        "POST /webhook HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        "X-GitHub-Event: pull_request\r\nX-GitHub-Delivery: d-9\r\n"
        f"X-Hub-Signature-256: sha256=\u00e9\u00e9\r\nContent-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    ).encode("utf-8")
    writer.write(head + body)
    await writer.drain()
    status_line = await reader.readline()
    writer.close()
    assert status_line.split()[1] == b"401"


@pytest.mark.parametrize(
    "raw, message",
    [
        (b'{"action": "closed", "pull_request": ', "not valid JSON"),
        (b"[]", "not an object"),
    ],
)
async def test_malformed_bodies_are_400(server, raw, message):
    client, _, _ = server
    resp = await deliver(client, "pull_request", None, raw=raw)
    assert resp.status == 400
    assert message in (await resp.json())["error"]


async def test_payload_without_what_prguide_reads_is_400(server, webhook_payload):
    client, _, _ = server
    payload = merged_payload(webhook_payload)
    del payload["installation"]
    resp = await deliver(client, "pull_request", payload)
    assert resp.status == 400
    assert "installation" in (await resp.json())["error"]


async def test_non_ascii_and_emoji_payload_is_accepted(server, webhook_payload):
    client, seen, _ = server
    payload = merged_payload(webhook_payload, title="修复：支持 🚀 emoji", body="naïve café")
    resp = await deliver(client, "pull_request", payload)
    assert resp.status == 202
    await wait_idle(client.app)
    assert seen[0].data["pull_request"]["title"] == "修复：支持 🚀 emoji"


async def test_large_payload_up_to_githubs_cap_is_accepted(server, webhook_payload):
    client, seen, _ = server
    payload = merged_payload(webhook_payload, body="x" * (24 * 1024 * 1024))
    resp = await deliver(client, "pull_request", payload)
    assert resp.status == 202


async def test_healthz_names_backfilled_repositories_only_to_the_admin(tmp_path):
    token = "a-long-admin-token-0123456789"
    app = create_app(settings_for(tmp_path, admin_token=token), router=recording_router([]), rules=object(), auth=FakeAuth())
    async with TestClient(TestServer(app)) as client:
        client.app[STATE].services.progress["backfill"] = {
            "acme/secret-plans": {"target": 100, "queued": 60, "built": 50, "skipped": 2, "pending": 8, "api_calls": 151, "pages": 1},
            "acme/rocket": {"target": 20, "queued": 20, "built": 20, "skipped": 0, "pending": 0, "api_calls": 61, "pages": 1},
        }
        for headers in ({}, {"Authorization": "Bearer wrong-token-0123456789"}):
            resp = await client.get("/healthz", headers=headers)
            assert resp.status == 200 and "acme/" not in await resp.text()
            assert (await resp.json())["progress"] == {"backfill": {
                "repositories": 2, "target": 120, "queued": 80, "built": 70, "skipped": 2, "pending": 8, "api_calls": 212, "pages": 2}}
        admin = await (await client.get("/healthz", headers={"Authorization": f"Bearer {token}"})).json()
        assert admin["progress"]["backfill"]["acme/secret-plans"]["built"] == 50


async def test_a_web_replica_on_sqlite_refuses_to_start(tmp_path):
    from bot.app.settings import SettingsError

    app = create_app(settings_for(tmp_path, role="web"), router=recording_router([]), rules=object(), auth=FakeAuth())
    with pytest.raises(SettingsError, match="web needs PRGUIDE_DATABASE_URL"):
        async with TestClient(TestServer(app)):
            pass


async def test_healthz_reports_queue(server, webhook_payload):
    client, seen, _ = server
    await deliver(client, "pull_request", merged_payload(webhook_payload))
    await wait_idle(client.app)
    resp = await client.get("/healthz")
    assert resp.status == 200
    data = await resp.json()
    assert data["ok"] is True
    assert data["queue"] == {"queued": 0, "running": 0, "done": 1, "parked": 0}
    assert data["parked"] == 0
    assert data["oldest_queued_age_s"] is None
    assert data["version"]


async def test_metrics_count_deliveries_and_jobs(server, webhook_payload):
    client, _, _ = server
    await deliver(client, "pull_request", merged_payload(webhook_payload))
    await deliver(client, "pull_request", merged_payload(webhook_payload), headers={"X-Hub-Signature-256": None}, delivery="bad")
    await wait_idle(client.app)
    resp = await client.get("/metrics")
    assert resp.status == 200
    text = await resp.text()
    assert 'prguide_webhook_deliveries_total{event="pull_request",outcome="queued"} 1.0' in text
    assert 'prguide_webhook_deliveries_total{event="unverified",outcome="unauthorized"} 1.0' in text
    assert 'prguide_jobs{state="done"} 1.0' in text
    assert 'prguide_job_duration_seconds_count{event="pull_request",outcome="recorded"} 1.0' in text


async def test_each_app_has_its_own_metrics(tmp_path):
    a = create_app(settings_for(tmp_path), rules=object(), auth=FakeAuth())
    b = create_app(settings_for(tmp_path), rules=object(), auth=FakeAuth())
    assert a[STATE].metrics.registry is not b[STATE].metrics.registry


async def test_factory_starts_nothing(tmp_path):
    app = create_app(settings_for(tmp_path), rules=object(), auth=FakeAuth(), tag_view=False)
    state = app[STATE]
    assert state.store is None and state.pool is None
    assert not (tmp_path / "jobs.db").exists()
    assert state.router.events == default_router().events == (
        "issue_comment", "pull_request", "pull_request_review", "pull_request_review_comment", "repository"
    )


async def test_shutdown_puts_unfinished_jobs_back_and_restart_runs_them(tmp_path, webhook_payload, caplog):
    import asyncio
    import logging

    started = asyncio.Event()
    release = asyncio.Event()
    runs: list[str] = []

    async def slow(job, ctx):
        runs.append(job.delivery_id)
        started.set()
        await release.wait()

    async def no_grace(_seconds):  # the stop timeout passes at once
        return None

    router = Router([Route("pull_request", ("closed",), slow, MERGED_PULL_REQUEST.accept, True)])
    settings = settings_for(tmp_path)
    app = create_app(settings, router=router, rules=object(), auth=FakeAuth(), pool_options={"sleep": no_grace})
    client = TestClient(TestServer(app))
    await client.start_server()
    assert (await deliver(client, "pull_request", merged_payload(webhook_payload))).status == 202
    await started.wait()
    await client.close()  # stops accepting, then stops the pool

    from bot.app.jobs import JobStore

    store = JobStore.open(str(settings.db_path))
    assert store.counts()["queued"] == 1
    store.close()

    release.set()
    app = create_app(settings, router=router, rules=object(), auth=FakeAuth())
    client = TestClient(TestServer(app))
    with caplog.at_level(logging.INFO):
        await client.start_server()
    try:
        # The ready line counts the job the stopped process put back, not only interrupted ones.
        ready = [r.getMessage() for r in caplog.records if " ready (" in r.getMessage()]
        assert ready and "1 job(s) queued (0 of them interrupted" in ready[-1]
        await wait_idle(client.app)
        assert runs == ["d-1", "d-1"]
        assert app[STATE].store.counts()["done"] == 1
    finally:
        await client.close()


async def test_a_failing_job_queue_answers_503_and_keeps_nothing(server, webhook_payload):
    client, seen, _ = server
    store = client.app[STATE].store
    store.conn.execute("CREATE TRIGGER refuse BEFORE INSERT ON jobs BEGIN SELECT RAISE(ABORT, 'disk I/O error'); END")
    resp = await deliver(client, "pull_request", merged_payload(webhook_payload))
    assert resp.status == 503
    assert "job queue unavailable" in (await resp.json())["error"]
    assert store.counts()["queued"] == 0
    store.conn.execute("DROP TRIGGER refuse")
    # GitHub shows the failure; redelivering the same delivery then works.
    assert (await deliver(client, "pull_request", merged_payload(webhook_payload))).status == 202
    await wait_idle(client.app)
    assert [job.delivery_id for job in seen] == ["d-1"]


async def test_running_app_checkpoints_its_database_in_the_background(server):
    client, _, _ = server
    state = client.app[STATE]
    guides = state.services.guides
    for conn in (state.store.conn, guides.connection):  # both write to the same file
        assert conn.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == 0
    assert "prguide-checkpoint" in {t.name for t in threading.enumerate()}
