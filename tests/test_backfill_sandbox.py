"""Backfill and reconcile end to end: the real app against the GitHub sandbox over loopback.

A repository with 150 merged pull requests is served by the sandbox
(``add_merged_pulls``); deliveries go to ``POST /webhook``; jobs are awaited with the
worker pool's ``wait_idle()``, and a mid-run stop is found by bounded polling of the
app's own progress report.
"""

from __future__ import annotations

import asyncio
import re
from collections import Counter
from typing import Any

import pytest
from loopback import SECRET, delivery_headers, running_app, settings_for, shipped_rules, Sleeps, started  # noqa: F401
from sandbox_helpers import app_private_key, minimal_payload, start_sandbox  # noqa: F401

from bot.app.server import STATE, wait_idle
from bot.features import backfill

HISTORY = "octo-org/history"
INSTALLATION = 1


@pytest.fixture(autouse=True)
def no_pacing(monkeypatch):
    # Pacing spaces pull jobs a second apart in production; here they are all due at once.
    monkeypatch.setattr(backfill, "PACE_S", 0.0)


@pytest.fixture(params=["example", "minimal"])
def templates(request):
    """``templates(event, name)``: GitHub's example delivery ``event/name`` (skipped where
    shared/fixtures is absent), or one with only the fields prguide reads."""
    if request.param == "example":
        return request.getfixturevalue("webhook_payload")
    return minimal_templates


def minimal_templates(event: str, _name: str) -> dict:
    """A delivery of ``event`` with only the fields prguide reads (see ``templates``)."""
    return minimal_payload(event)


def installation_created(templates, repo: str = HISTORY) -> dict:
    payload = templates("installation", "created.payload.json")
    payload["installation"]["id"] = INSTALLATION
    payload["repositories"] = [{"id": 9, "name": repo.split("/")[1], "full_name": repo, "private": False}]
    return payload


def merge_payload(sandbox: Any, number: int, repo: str = HISTORY) -> dict:
    """A ``pull_request.closed`` payload for a sandbox pull request, as GitHub would send it."""
    record = sandbox.state.repo(*repo.split("/"))
    return {
        "action": "closed",
        "number": number,
        "pull_request": sandbox.state.pull_json(record, number),
        "repository": sandbox.state.repo_json(record),
        "installation": {"id": INSTALLATION},
        "sender": {"login": "maintainer", "type": "User"},
    }


async def deliver(client, payload: dict, *, event: str, delivery: str) -> None:
    import json

    body = json.dumps(payload).encode()
    resp = await client.post("/webhook", data=body, headers=delivery_headers(body, event=event, delivery=delivery))
    assert resp.status == 202, await resp.text()


def built_numbers(requests: list[dict]) -> Counter:
    """How many times each pull request's files were read (once per guide built)."""
    return Counter(
        int(m.group(1)) for r in requests if (m := re.search(r"/pulls/(\d+)/files", r["path"])) and r["method"] == "GET"
    )


def comment_writes(requests: list[dict]) -> list[dict]:
    return [r for r in requests if r["method"] in ("POST", "PATCH") and "/comments" in r["path"]]


async def poll(condition, *, attempts: int = 2000) -> None:
    """Wait (bounded) until ``condition()`` holds, yielding to the event loop in between."""
    for _ in range(attempts):
        if condition():
            return
        await asyncio.sleep(0.005)
    raise AssertionError("condition not reached")


def app_options(**more: Any) -> dict:
    return {"rules": shipped_rules(), "client_options": {"sleep": Sleeps()}, **more}


async def test_installation_backfills_the_last_100_merged_pulls_without_comments(app_private_key, tmp_path):
    # A hundred guides each: built once, from a minimal delivery (the example is read by the tests below).
    templates = minimal_templates
    async with start_sandbox(app_private_key) as sandbox:
        sandbox.state.add_merged_pulls(HISTORY, 150)
        settings = settings_for(sandbox, app_private_key, tmp_path)
        async with running_app(settings, sandbox=sandbox, **app_options()) as client:
            await deliver(client, installation_created(templates), event="installation", delivery="inst-1")
            await wait_idle(client.app)
            guides = client.app[STATE].services.guides
            stored = [n for n in range(1, 151) if guides.get(HISTORY, n) is not None]
            assert stored == list(range(51, 151))  # the 100 most recently merged
            assert comment_writes(sandbox.requests) == []
            assert not [r for r in sandbox.requests if "/labels" in r["path"] and r["method"] != "GET"]
            calls = [r for r in sandbox.requests if "/access_tokens" not in r["path"] and r["path"] != "/app"]
            per_pull = len(calls) / 100
            print(f"backfill: {len(calls)} API calls for 100 pull requests, {per_pull:.2f} per pull request")
            # files, reviews, review comments per PR; one page of the list and one config read per run.
            assert per_pull <= 3.05, Counter(re.sub(r"\d+", "N", r["path"].split("?")[0]) for r in calls)
            assert built_numbers(sandbox.requests) == Counter(range(51, 151))
            pages = [r["path"] for r in calls if re.search(r"/pulls\?", r["path"])]
            assert len(pages) == 1 and all("state=closed" in p and "sort=updated" in p and "direction=desc" in p for p in pages)

            health = await (await client.get("/healthz")).json()
            progress = health["progress"]["backfill"][HISTORY]
            assert (progress["target"], progress["queued"], progress["built"], progress["pending"]) == (100, 100, 100, 0)
            assert progress["api_calls"] == len(calls)  # the list page and the config read included
            metrics = await (await client.get("/metrics")).text()
            assert 'prguide_backfill_pulls_total{outcome="stored"} 100.0' in metrics
            assert "prguide_backfill_pending 0.0" in metrics
            assert re.search(r"prguide_backfill_api_calls_total 30\d\.0", metrics)

            # A redelivery of the installation event starts nothing twice.
            before = len(sandbox.requests)
            await deliver(client, installation_created(templates), event="installation", delivery="inst-1")
            await wait_idle(client.app)
            assert len(sandbox.requests) == before


async def test_a_backfill_resumes_after_a_stop_without_building_twice(app_private_key, tmp_path):
    # A hundred guides each: built once, from a minimal delivery (the example is read by the tests below).
    templates = minimal_templates
    async with start_sandbox(app_private_key) as sandbox:
        sandbox.state.add_merged_pulls(HISTORY, 150)
        settings = settings_for(sandbox, app_private_key, tmp_path, workers=1)
        async with running_app(settings, sandbox=sandbox, **app_options(stop_timeout=0.0)) as client:
            await deliver(client, installation_created(templates), event="installation", delivery="inst-1")
            progress = lambda: client.app[STATE].services.progress.get("backfill", {}).get(HISTORY, {})  # noqa: E731
            await poll(lambda: progress().get("built", 0) >= 30)
        # Stopped with no grace: the job in flight is put back in the queue.
        first = built_numbers(sandbox.requests)
        assert 30 <= len(first) < 100
        async with running_app(settings, sandbox=sandbox, **app_options()) as client:
            await wait_idle(client.app)
            guides = client.app[STATE].services.guides
            assert [n for n in range(1, 151) if guides.get(HISTORY, n) is not None] == list(range(51, 151))
        built = first + built_numbers(sandbox.requests)  # the second start cleared the request log
        assert set(built) == set(range(51, 151))
        assert sum(built.values()) - 100 <= settings.workers  # only the job in flight may have run twice
        assert comment_writes(sandbox.requests) == []
        assert sum(first.values()) >= 30 and len(built) == 100
        print(f"resume: {sum(first.values())} built before the stop, {sum(built.values()) - 100} built twice")


async def test_backfill_comments_opt_in_and_a_merge_delivered_meanwhile_get_one_comment(app_private_key, templates, tmp_path):
    async with start_sandbox(app_private_key) as sandbox:
        sandbox.state.add_merged_pulls(HISTORY, 12)
        sandbox.set_file(HISTORY, ".github/prguide.yml", "backfill: 5\nbackfill_comments: true\n")
        settings = settings_for(sandbox, app_private_key, tmp_path)
        async with running_app(settings, sandbox=sandbox, **app_options()) as client:
            await deliver(client, installation_created(templates), event="installation", delivery="inst-1")
            # The newest pull request's merge webhook arrives while the backfill runs.
            await deliver(client, merge_payload(sandbox, 12), event="pull_request", delivery="merge-12")
            await wait_idle(client.app)
            for number in range(8, 13):
                assert len(sandbox.comments(HISTORY, number)) == 1, number
            assert all(sandbox.comments(HISTORY, n) == [] for n in range(1, 8))


async def test_reconcile_builds_a_missed_merge_once(app_private_key, tmp_path):
    async with start_sandbox(app_private_key) as sandbox:
        sandbox.state.add_merged_pulls(HISTORY, 3)
        settings = settings_for(sandbox, app_private_key, tmp_path, reconcile_interval=3600)
        async with running_app(settings, sandbox=sandbox, **app_options()) as client:
            state = client.app[STATE]
            for number in (1, 2):
                await deliver(client, merge_payload(sandbox, number), event="pull_request", delivery=f"merge-{number}")
            await wait_idle(client.app)
            assert sandbox.comments(HISTORY, 3) == []  # its webhook never came

            assert await state.scheduler.tick() == 1  # one installation, one pass
            await wait_idle(client.app)
            assert [len(sandbox.comments(HISTORY, n)) for n in (1, 2, 3)] == [1, 1, 1]
            assert state.services.guides.get(HISTORY, 3) is not None
            assert [r for r in sandbox.requests if r["path"].startswith("/installation/repositories")]

            # The next pass finds nothing to do; a late redelivery of the webhook edits nothing twice.
            before = len(comment_writes(sandbox.requests))
            import time

            assert await state.scheduler.tick(time.time() + 3600) == 1
            await wait_idle(client.app)
            await deliver(client, merge_payload(sandbox, 3), event="pull_request", delivery="merge-3-late")
            await wait_idle(client.app)
            assert [len(sandbox.comments(HISTORY, n)) for n in (1, 2, 3)] == [1, 1, 1]
            assert len([w for w in comment_writes(sandbox.requests)[before:] if w["method"] == "POST"]) == 0
            metrics = await (await client.get("/metrics")).text()
            assert "prguide_reconcile_queued_total 1.0" in metrics


async def test_a_merge_delivered_while_reconcile_queues_it_gets_one_comment(app_private_key, tmp_path):
    async with start_sandbox(app_private_key) as sandbox:
        sandbox.state.add_merged_pulls(HISTORY, 2)
        settings = settings_for(sandbox, app_private_key, tmp_path, reconcile_interval=3600)
        async with running_app(settings, sandbox=sandbox, **app_options()) as client:
            state = client.app[STATE]
            await state.scheduler.tick()
            # The (late) webhooks arrive while the reconcile pass and its guide jobs run.
            for number in (1, 2):
                await deliver(client, merge_payload(sandbox, number), event="pull_request", delivery=f"late-{number}")
            await wait_idle(client.app)
            assert [len(sandbox.comments(HISTORY, n)) for n in (1, 2)] == [1, 1]
            assert [w["method"] for w in comment_writes(sandbox.requests)].count("POST") == 2


async def test_repositories_added_to_an_installation_are_backfilled(app_private_key, templates, tmp_path):
    async with start_sandbox(app_private_key) as sandbox:
        sandbox.state.add_merged_pulls(HISTORY, 3)
        settings = settings_for(sandbox, app_private_key, tmp_path)
        async with running_app(settings, sandbox=sandbox, **app_options()) as client:
            payload = templates("installation_repositories", "added.payload.json")
            payload["installation"]["id"] = INSTALLATION
            payload["repositories_added"] = [{"id": 9, "name": "history", "full_name": HISTORY, "private": False}]
            await deliver(client, payload, event="installation_repositories", delivery="added-1")
            await wait_idle(client.app)
            guides = client.app[STATE].services.guides
            assert [n for n in (1, 2, 3) if guides.get(HISTORY, n) is not None] == [1, 2, 3]
            assert comment_writes(sandbox.requests) == []

            import json

            gone = templates("installation", "deleted.payload.json")
            gone["action"] = "deleted"
            body = json.dumps(gone).encode()
            resp = await client.post("/webhook", data=body, headers=delivery_headers(body, event="installation", delivery="gone"))
            assert resp.status == 200 and "token forgotten" in await resp.text()
