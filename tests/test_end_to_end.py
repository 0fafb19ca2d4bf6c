"""Webhook to guide, end to end: the real app, engine and rules against the GitHub sandbox.

Everything talks HTTP over loopback: signed deliveries go to the app's ``POST /webhook``,
the app's jobs call the sandbox as GitHub, and assertions read the sandbox's state and
request log. Jobs are awaited with the worker pool's ``wait_idle()``.
"""

from __future__ import annotations

import json
import logging
import time
from typing import Any

import aiohttp
import pytest
from aiohttp.test_utils import TestClient, TestServer
from loopback import pr_delivery, started
from sandbox_helpers import APP_ID, app_private_key, start_sandbox  # noqa: F401

from bot.app.auth import AppAuth
from bot.app.server import STATE, create_app, wait_idle
from bot.app.settings import Settings
from bot.app.webhook import sign
from bot.engine.build import build_guide
from bot.engine.marker import parse_marker
from bot.engine.rules import load_rules
from bot.engine.snapshot import PullRequestSnapshot

pytestmark = pytest.mark.corpus

SECRET = "end-to-end secret"
REPO = "verl-project/verl"
SMALL_PR = 7491  # 2 files
BIG_PR = 4795  # 344 files


def delivery_payload(bundle: dict, *, merged: bool = True) -> dict:
    """The ``pull_request.closed`` payload GitHub sends for a corpus pull request."""
    return pr_delivery(bundle, merged=merged)


class Harness:
    def __init__(self, client: TestClient, sandbox: Any, bundles: dict[int, dict]):
        self.client = client
        self.sandbox = sandbox
        self.bundles = bundles
        self.app = client.app

    async def deliver(self, payload: dict, *, delivery: str, secret: str = SECRET, event: str = "pull_request") -> aiohttp.ClientResponse:
        body = json.dumps(payload).encode()
        return await self.client.post(
            "/webhook",
            data=body,
            headers={
                "X-GitHub-Event": event,
                "X-GitHub-Delivery": delivery,
                "Content-Type": "application/json",
                "X-Hub-Signature-256": sign(secret, body),
            },
        )

    async def merged(self, number: int, *, delivery: str) -> None:
        resp = await self.deliver(delivery_payload(self.bundles[number]), delivery=delivery)
        assert resp.status == 202, await resp.text()
        await wait_idle(self.app)

    def writes(self) -> list[dict]:
        # A GraphQL query is a POST that only reads.
        return [r for r in self.sandbox.requests if r["method"] != "GET" and r["path"] != "/graphql"]

    def jobs(self) -> dict[str, int]:
        return self.app[STATE].store.counts()


async def no_wait(_seconds: float) -> None:
    """The GitHub client's sleep between retries: tests do not wait for real."""


async def start_app(settings: Settings, sandbox: Any = None, **kwargs: Any) -> TestClient:
    kwargs.setdefault("client_options", {"sleep": no_wait})
    client = TestClient(TestServer(create_app(settings, **kwargs)))
    await client.start_server()
    await started(client, sandbox)  # the start-up GET /app is not what these tests look at
    return client


@pytest.fixture
async def harness(app_private_key, load_bundle_json, tmp_path):  # noqa: F811
    bundles = {n: load_bundle_json(n) for n in (SMALL_PR, BIG_PR, 7422, 7404, 7358)}
    async with start_sandbox(app_private_key, bundles=list(bundles.values())) as sandbox:
        settings = Settings(
            app_id=APP_ID,
            private_key=app_private_key.decode(),
            webhook_secret=SECRET,
            api_url=sandbox.base_url,
            db_path=tmp_path / "prguide.db",
            workers=4,
        )
        client = await start_app(settings, sandbox)
        try:
            yield Harness(client, sandbox, bundles)
        finally:
            await client.close()


def expected_guide(bundle: dict, rules=None):
    snapshot = PullRequestSnapshot.from_github(bundle["pull"], bundle["files"], bundle["reviews"], bundle["review_comments"])
    return build_guide(snapshot, rules or load_rules())


async def test_merged_pull_request_gets_one_comment_and_its_labels(harness, caplog):
    caplog.set_level(logging.INFO, logger="prguide.jobs")
    await harness.merged(SMALL_PR, delivery="m-1")

    expected = expected_guide(harness.bundles[SMALL_PR])
    (comment,) = harness.sandbox.comments(REPO, SMALL_PR)
    assert comment.user == "prguide[bot]"
    assert comment.body == expected.markdown
    assert expected.labels, "the shipped rules label this PR"
    assert sorted(harness.sandbox.labels(REPO, SMALL_PR)) == sorted(expected.labels)
    assert parse_marker(comment.body).labels == tuple(expected.labels)
    assert harness.jobs()["done"] == 1

    # One structured line per job, with the API calls it used and no secrets.
    (record,) = [r for r in caplog.records if r.name == "prguide.jobs"]
    assert (record.delivery, record.repository, record.number, record.outcome) == ("m-1", REPO, SMALL_PR, "created")
    assert record.installation == 1
    # files, reviews, review comments, config file (.yml, then .yaml as there is none),
    # comment list, add labels, create comment, the blame of the lines it changes (one
    # GraphQL request; the sandbox serves no git repository here, so it blames nothing);
    # plus, the first time a label appears in a repository, one call to give it its colour.
    assert 9 <= record.api_calls <= 9 + len(expected.labels)
    assert [r["method"] for r in harness.sandbox.requests if r["path"] == "/graphql"] == ["POST"]
    assert record.duration_ms > 0
    assert SECRET not in caplog.text


async def test_same_delivery_twice_writes_one_comment(harness):
    await harness.merged(SMALL_PR, delivery="dup")
    requests_after_first = len(harness.sandbox.requests)
    await harness.merged(SMALL_PR, delivery="dup")
    assert len(harness.sandbox.comments(REPO, SMALL_PR)) == 1
    assert len(harness.sandbox.requests) == requests_after_first  # the redelivery did no work
    assert harness.jobs()["done"] == 1


async def test_a_burst_of_merge_deliveries_builds_one_guide_from_the_newest(harness, caplog):
    caplog.set_level(logging.INFO, logger="prguide.jobs")
    pool = harness.app[STATE].pool
    await pool.stop()  # the burst arrives while the workers are busy elsewhere
    payload = delivery_payload(harness.bundles[SMALL_PR])
    for n in range(1, 6):
        assert (await harness.deliver(payload, delivery=f"burst-{n}")).status == 202
    pool.start()
    await wait_idle(harness.app)

    assert len(harness.sandbox.comments(REPO, SMALL_PR)) == 1
    store = harness.app[STATE].store
    outcomes = [store.get(i)["outcome"] for i in range(1, 6)]
    assert outcomes == ["succeeded", "superseded", "superseded", "superseded", "succeeded"]
    lines = [(r.delivery, r.outcome, r.api_calls) for r in caplog.records if r.name == "prguide.jobs"]
    # The first job ends the three in between in one go; only the newest calls GitHub.
    assert lines[0] == ("burst-1", "superseded", 0)
    assert lines[1][:2] == ("burst-5", "created") and len(lines) == 2
    first = next(r for r in caplog.records if r.name == "prguide.jobs")
    assert (first.superseded_by, first.also_superseded) == ("burst-5", 3)


async def test_second_run_after_new_rules_edits_the_same_comment(harness):
    await harness.merged(SMALL_PR, delivery="first")
    (before,) = harness.sandbox.comments(REPO, SMALL_PR)
    before_id, before_body = before.id, before.body  # the sandbox edits comment objects in place

    harness.sandbox.set_file(
        REPO,
        ".github/prguide.yml",
        "rules:\n  - id: rollout-area\n    files: verl/**\n    labels: [area/e2e-rollout]\n    importance: 3\n",
    )
    # prguide remembers that the repository had no config file (pushed directly, it waits for that to lapse).
    harness.app[STATE].services.missing_configs.clear()
    await harness.merged(SMALL_PR, delivery="second")

    (after,) = harness.sandbox.comments(REPO, SMALL_PR)
    assert after.id == before_id
    assert after.body != before_body
    assert "area/e2e-rollout" not in before_body
    assert "area/e2e-rollout" in parse_marker(after.body).labels
    assert "area/e2e-rollout" in harness.sandbox.labels(REPO, SMALL_PR)
    patches = [r for r in harness.writes() if r["method"] == "PATCH" and "/issues/comments/" in r["path"]]
    assert len(patches) == 1 and patches[0]["status"] == 200


async def test_third_identical_run_changes_nothing(harness):
    await harness.merged(SMALL_PR, delivery="a")
    writes = len(harness.writes())
    await harness.merged(SMALL_PR, delivery="b")
    assert len(harness.writes()) == writes
    assert len(harness.sandbox.comments(REPO, SMALL_PR)) == 1


async def test_invalid_repository_config_is_reported_in_the_guide(harness):
    harness.sandbox.set_file(REPO, ".github/prguide.yml", "lnag: zh\n")
    await harness.merged(SMALL_PR, delivery="cfg")
    (comment,) = harness.sandbox.comments(REPO, SMALL_PR)
    assert ".github/prguide.yml" in comment.body
    assert "unknown key 'lnag'" in comment.body
    assert harness.sandbox.labels(REPO, SMALL_PR)  # the default rules still applied


async def test_repository_config_sets_the_language(harness):
    harness.sandbox.set_file(REPO, ".github/prguide.yml", "lang: zh\n")
    await harness.merged(SMALL_PR, delivery="zh")
    (comment,) = harness.sandbox.comments(REPO, SMALL_PR)
    assert parse_marker(comment.body).lang == "zh"


async def test_closed_unmerged_writes_nothing(harness):
    payload = delivery_payload(harness.bundles[SMALL_PR], merged=False)
    resp = await harness.deliver(payload, delivery="unmerged")
    assert resp.status == 200
    await wait_idle(harness.app)
    assert harness.sandbox.requests == []
    assert harness.sandbox.comments(REPO, SMALL_PR) == []


async def test_bad_signature_is_refused_and_nothing_is_written(harness):
    payload = delivery_payload(harness.bundles[SMALL_PR])
    resp = await harness.deliver(payload, delivery="forged", secret="not the secret")
    assert resp.status == 401
    await wait_idle(harness.app)
    assert harness.sandbox.requests == []
    assert harness.jobs() == {"queued": 0, "running": 0, "done": 0, "parked": 0}


async def test_344_file_pull_request_is_read_in_4_pages(harness):
    assert harness.bundles[BIG_PR]["pull"]["changed_files"] == 344
    await harness.merged(BIG_PR, delivery="big")
    pages = [r for r in harness.sandbox.requests if r["path"].startswith(f"/repos/{REPO}/pulls/{BIG_PR}/files")]
    assert len(pages) == 4
    assert sorted(p["path"].split("page=")[-1] for p in pages if "&page=" in p["path"] or "?page=" in p["path"]) == ["1", "2", "3", "4"]
    assert all(p["status"] == 200 for p in pages)
    (comment,) = harness.sandbox.comments(REPO, BIG_PR)
    assert comment.body == expected_guide(harness.bundles[BIG_PR]).markdown


async def test_token_near_expiry_is_refreshed_once_under_concurrent_jobs(app_private_key, load_bundle_json, tmp_path):  # noqa: F811
    offset = [0.0]

    def clock() -> float:
        return time.time() + offset[0]

    numbers = (SMALL_PR, 7422, 7404, 7358)
    bundles = {n: load_bundle_json(n) for n in numbers}
    # Tokens live 400 s; the app renews them 300 s before they expire.
    async with start_sandbox(app_private_key, bundles=list(bundles.values()), token_lifetime=400, clock=clock) as sandbox:
        settings = Settings(
            app_id=APP_ID, private_key=app_private_key.decode(), webhook_secret=SECRET,
            api_url=sandbox.base_url, db_path=tmp_path / "prguide.db", workers=4,
        )
        async with aiohttp.ClientSession() as session:
            auth = AppAuth(str(APP_ID), settings.private_key, api_url=sandbox.base_url, session=session, clock=clock)
            client = await start_app(settings, session=session, auth=auth)
            harness = Harness(client, sandbox, bundles)
            try:
                await harness.merged(SMALL_PR, delivery="warm-up")
                assert auth.token_requests == 1

                offset[0] = 200.0  # the cached token now expires in under 300 s
                for n in numbers[1:]:
                    resp = await harness.deliver(delivery_payload(bundles[n]), delivery=f"job-{n}")
                    assert resp.status == 202
                await wait_idle(harness.app)

                assert auth.token_requests == 2
                token_posts = [r for r in sandbox.requests if r["path"] == "/app/installations/1/access_tokens"]
                assert len(token_posts) == 2
                for n in numbers:
                    assert len(sandbox.comments(REPO, n)) == 1
                assert harness.jobs()["done"] == len(numbers)
            finally:
                await client.close()


async def test_installation_deleted_forgets_the_token(harness):
    await harness.merged(SMALL_PR, delivery="before")
    auth = harness.app[STATE].services.auth
    payload = harness.sandbox.state.installation_event(1, "deleted")
    resp = await harness.deliver(payload, delivery="uninstall", event="installation")
    assert resp.status == 202  # queued too: the installation's unfinished work is cancelled
    await wait_idle(harness.app)
    requests_before = auth.token_requests
    await harness.merged(7422, delivery="after")
    assert auth.token_requests == requests_before + 1


async def test_github_outage_is_retried_not_lost(harness):
    harness.sandbox.add_faults([{"method": "GET", "path": f"/repos/{REPO}/pulls/{SMALL_PR}/files", "status": 502, "times": None}])
    resp = await harness.deliver(delivery_payload(harness.bundles[SMALL_PR]), delivery="outage")
    assert resp.status == 202
    await wait_idle(harness.app)
    counts = harness.jobs()
    assert counts["queued"] == 1 and counts["done"] == 0  # waiting for its retry, not dropped
    assert harness.sandbox.comments(REPO, SMALL_PR) == []


async def test_published_guide_appears_in_the_tag_view(harness):
    await harness.merged(SMALL_PR, delivery="tv")
    expected = expected_guide(harness.bundles[SMALL_PR])
    resp = await harness.client.get(f"/repos/{REPO}/tags.json")
    assert resp.status == 200
    data = await resp.json()
    text = json.dumps(data)
    assert str(SMALL_PR) in text
    for label in expected.labels:
        assert label in text
    page = await harness.client.get(f"/repos/{REPO}/pulls/{SMALL_PR}/guide")
    assert page.status == 200
    assert expected.data["title"] in await page.text()


async def test_a_command_comment_runs_through_the_same_server(harness):
    await harness.merged(SMALL_PR, delivery="merge")
    owner, name = REPO.split("/")
    human = harness.sandbox.state.create_comment(owner, name, SMALL_PR, "/prguide help", user="maintainer", user_type="User")
    payload = harness.sandbox.state.issue_comment_event(human)

    resp = await harness.deliver(payload, delivery="cmd", event="issue_comment")
    assert resp.status == 202
    await wait_idle(harness.app)

    comments = harness.sandbox.comments(REPO, SMALL_PR)
    assert [c.user for c in comments] == ["prguide[bot]", "maintainer", "prguide[bot]"]
    assert "/prguide" in comments[-1].body  # the help reply
    assert harness.jobs()["done"] == 2
