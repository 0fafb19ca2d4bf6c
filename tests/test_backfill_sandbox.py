"""Backfill and reconcile end to end: the real app against the GitHub sandbox over loopback.

A repository with 150 merged pull requests is served by the sandbox
(``add_merged_pulls``); deliveries go to ``POST /webhook``; jobs are awaited with the
worker pool's ``wait_idle()``, and a mid-run stop is found by bounded polling of the
app's own progress report.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections import Counter
from typing import Any

import pytest
from loopback import SECRET, delivery_headers, running_app, settings_for, shipped_rules, Sleeps, started  # noqa: F401
from sandbox_helpers import app_private_key, start_sandbox  # noqa: F401

from bot.app.server import STATE, wait_idle
from bot.features import backfill

HISTORY = "octo-org/history"
INSTALLATION = 1


@pytest.fixture(autouse=True)
def no_pacing(monkeypatch):
    # Pacing spaces pull jobs seconds apart in production; here they are all due at once.
    monkeypatch.setattr(backfill, "pull_spacing", lambda budget, now: 0.0)


def installation_created(sandbox: Any) -> dict:
    """The ``installation.created`` payload of the sandbox's installation, listing the repositories it holds."""
    return sandbox.state.installation_event(INSTALLATION, "created")


def installed_before_the_merges(sandbox: Any) -> None:
    """Date the app's installation an hour back: the merges ``add_merged_pulls`` makes then came after it."""
    sandbox.state.created_at -= 3600


def merge_payload(sandbox: Any, number: int, repo: str = HISTORY) -> dict:
    """A ``pull_request.closed`` payload for a sandbox pull request, as GitHub would send it."""
    return sandbox.state.pull_request_event(*repo.split("/"), number, sender="maintainer")


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
    async with start_sandbox(app_private_key) as sandbox:
        sandbox.state.add_merged_pulls(HISTORY, 150)
        settings = settings_for(sandbox, app_private_key, tmp_path)
        async with running_app(settings, sandbox=sandbox, **app_options()) as client:
            await deliver(client, installation_created(sandbox), event="installation", delivery="inst-1")
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
            progress = health["progress"]["backfill"]  # no admin token: counts, no repository names
            assert (progress["repositories"], progress["target"], progress["queued"], progress["built"], progress["pending"]) == (1, 100, 100, 100, 0)
            assert progress["api_calls"] == len(calls)  # the list page and the config read included
            metrics = await (await client.get("/metrics")).text()
            assert 'prguide_backfill_pulls_total{outcome="stored"} 100.0' in metrics
            assert "prguide_backfill_pending 0.0" in metrics
            assert f"prguide_backfill_api_calls_total {len(calls)}.0" in metrics  # the same count as /healthz

            # A redelivery of the installation event starts nothing twice.
            before = len(sandbox.requests)
            await deliver(client, installation_created(sandbox), event="installation", delivery="inst-1")
            await wait_idle(client.app)
            assert len(sandbox.requests) == before


async def test_a_backfill_resumes_after_a_stop_without_building_twice(app_private_key, tmp_path):
    async with start_sandbox(app_private_key) as sandbox:
        sandbox.state.add_merged_pulls(HISTORY, 150)
        settings = settings_for(sandbox, app_private_key, tmp_path, workers=1)
        async with running_app(settings, sandbox=sandbox, **app_options(stop_timeout=0.0)) as client:
            await deliver(client, installation_created(sandbox), event="installation", delivery="inst-1")
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


async def test_backfill_comments_opt_in_and_a_merge_delivered_meanwhile_get_one_comment(app_private_key, tmp_path):
    async with start_sandbox(app_private_key) as sandbox:
        sandbox.state.add_merged_pulls(HISTORY, 12)
        sandbox.set_file(HISTORY, ".github/prguide.yml", "backfill: 5\nbackfill_comments: true\n")
        settings = settings_for(sandbox, app_private_key, tmp_path)
        async with running_app(settings, sandbox=sandbox, **app_options()) as client:
            await deliver(client, installation_created(sandbox), event="installation", delivery="inst-1")
            # The newest pull request's merge webhook arrives while the backfill runs.
            await deliver(client, merge_payload(sandbox, 12), event="pull_request", delivery="merge-12")
            await wait_idle(client.app)
            for number in range(8, 13):
                assert len(sandbox.comments(HISTORY, number)) == 1, number
            assert all(sandbox.comments(HISTORY, n) == [] for n in range(1, 8))


async def test_reconcile_builds_a_missed_merge_once(app_private_key, tmp_path):
    async with start_sandbox(app_private_key) as sandbox:
        installed_before_the_merges(sandbox)
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
        installed_before_the_merges(sandbox)
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


async def test_repositories_added_to_an_installation_are_backfilled(app_private_key, tmp_path):
    async with start_sandbox(app_private_key) as sandbox:
        sandbox.state.add_merged_pulls(HISTORY, 3)
        settings = settings_for(sandbox, app_private_key, tmp_path)
        async with running_app(settings, sandbox=sandbox, **app_options()) as client:
            payload = sandbox.state.installation_repositories_event(INSTALLATION, added=[HISTORY])
            await deliver(client, payload, event="installation_repositories", delivery="added-1")
            await wait_idle(client.app)
            guides = client.app[STATE].services.guides
            assert [n for n in (1, 2, 3) if guides.get(HISTORY, n) is not None] == [1, 2, 3]
            assert comment_writes(sandbox.requests) == []

            import json

            gone = sandbox.state.installation_event(INSTALLATION, "deleted")
            body = json.dumps(gone).encode()
            resp = await client.post("/webhook", data=body, headers=delivery_headers(body, event="installation", delivery="gone"))
            assert resp.status == 202  # the token is forgotten, and the installation's work cancelled
            await wait_idle(client.app)


async def test_an_installation_on_more_repositories_than_one_event_queues_backfills_the_rest_from_the_paged_list(
    app_private_key, tmp_path, monkeypatch, caplog
):
    # Small numbers for GitHub's: 2 repositories from the event (100), 2 a page of the list (100).
    monkeypatch.setattr(backfill, "MAX_REPOSITORIES", 2)
    monkeypatch.setattr(backfill, "REPOSITORIES_PER_PAGE", 2)
    names = [f"octo-org/r{n}" for n in range(5)]
    async with start_sandbox(app_private_key) as sandbox:
        for name in names:
            sandbox.state.add_merged_pulls(name, 1)
        settings = settings_for(sandbox, app_private_key, tmp_path)
        async with running_app(settings, sandbox=sandbox, **app_options()) as client:
            payload = {
                "action": "created", "installation": {"id": INSTALLATION, "account": {"login": "octo-org"}},
                "repositories": [{"full_name": name, "private": False} for name in names],
                "sender": {"login": "maintainer", "type": "User"},
            }
            with caplog.at_level("INFO", logger="prguide.jobs"):
                await deliver(client, payload, event="installation", delivery="inst-many")
                await wait_idle(client.app)
            guides = client.app[STATE].services.guides
            assert [name for name in names if guides.get(name, 1) is None] == []
            listed = [r["path"] for r in sandbox.requests if r["path"].startswith("/installation/repositories")]
            assert listed[0] == "/installation/repositories?per_page=2" and len(listed) == 3  # pages 1-3, by Link
            assert sum(1 for r in sandbox.requests if "/pulls?" in r["path"]) == 5  # each repository listed once
            assert any("3 repositories are backfilled later" in r.getMessage() and "octo-org/r4" in r.getMessage()
                       for r in caplog.records)  # fmt: skip


async def test_reconcile_leaves_merges_from_before_the_installation_alone(app_private_key, webhook_payload, tmp_path):
    # Installed after the last merges, with `backfill: 0`: nothing of the past gets a guide or a comment.
    async with start_sandbox(app_private_key) as sandbox:
        sandbox.state.add_merged_pulls(HISTORY, 3)  # merged minutes before the installation
        sandbox.set_file(HISTORY, ".github/prguide.yml", "backfill: 0\n")
        settings = settings_for(sandbox, app_private_key, tmp_path, reconcile_interval=3600)
        async with running_app(settings, sandbox=sandbox, **app_options()) as client:
            state = client.app[STATE]
            await deliver(client, installation_created(sandbox), event="installation", delivery="inst-1")
            await wait_idle(client.app)
            assert await state.scheduler.tick() == 1
            await wait_idle(client.app)
            assert [len(sandbox.comments(HISTORY, n)) for n in (1, 2, 3)] == [0, 0, 0]
            assert all(state.services.guides.get(HISTORY, n) is None for n in (1, 2, 3))
            assert comment_writes(sandbox.requests) == []


def pending_keys(store) -> list[str]:
    """Keys of the jobs still queued (SQLite store)."""
    return [r[0] for r in store.conn.execute("SELECT key FROM jobs WHERE state = 'queued' ORDER BY id")]


async def test_uninstalling_mid_backfill_cancels_the_rest_and_asks_for_no_token(
    app_private_key, webhook_payload, tmp_path, monkeypatch
):
    monkeypatch.setattr(backfill, "pull_spacing", lambda budget, now: 3600.0)  # the first pull request now, the others hours apart
    async with start_sandbox(app_private_key) as sandbox:
        sandbox.state.add_merged_pulls(HISTORY, 150)
        settings = settings_for(sandbox, app_private_key, tmp_path)
        async with running_app(settings, sandbox=sandbox, **app_options()) as client:
            state = client.app[STATE]
            await deliver(client, installation_created(sandbox), event="installation", delivery="inst-1")
            await wait_idle(client.app)
            assert len(pending_keys(state.store)) == 99  # the backfill is under way

            gone = installation_created(sandbox)
            gone["action"] = "deleted"
            await deliver(client, gone, event="installation", delivery="uninstall-1")
            await wait_idle(client.app)
            assert pending_keys(state.store) == []
            cancelled = state.store.conn.execute("SELECT count(*) FROM jobs WHERE outcome = 'cancelled'").fetchone()[0]
            assert cancelled == 99

            # Hours later, nothing of it runs: no token, no call.
            before = len(sandbox.requests)
            state.store.clock = lambda: time.time() + 200 * 3600
            state.pool.notify()
            await wait_idle(client.app)
            assert sandbox.requests[before:] == []


async def test_a_suspension_mid_backfill_cancels_the_rest_and_the_unsuspension_backfills_what_is_left(
    app_private_key, tmp_path, monkeypatch
):
    monkeypatch.setattr(backfill, "pull_spacing", lambda budget, now: 3600.0)  # the first pull request now, the others hours apart
    async with start_sandbox(app_private_key) as sandbox:
        sandbox.state.add_merged_pulls(HISTORY, 5)
        settings = settings_for(sandbox, app_private_key, tmp_path)
        async with running_app(settings, sandbox=sandbox, **app_options()) as client:
            state = client.app[STATE]
            await deliver(client, installation_created(sandbox), event="installation", delivery="inst-1")
            await wait_idle(client.app)
            assert len(pending_keys(state.store)) == 4  # #5 built, #4 to #1 booked hours apart

            sandbox.state.suspend_installation(INSTALLATION)
            suspended = sandbox.state.installation_event(INSTALLATION, "suspend")
            await deliver(client, suspended, event="installation", delivery="suspend-1")
            await wait_idle(client.app)
            assert pending_keys(state.store) == []  # no job left to fail for want of a token, nor to be parked
            reasons = [r[0] for r in state.store.conn.execute("SELECT error FROM jobs WHERE outcome = 'cancelled'")]
            assert len(reasons) == 4 and all(r.startswith("installation suspended") for r in reasons)

            monkeypatch.setattr(backfill, "pull_spacing", lambda budget, now: 0.0)
            sandbox.state.suspend_installation(INSTALLATION, suspended=False)
            unsuspended = sandbox.state.installation_event(INSTALLATION, "unsuspend")
            await deliver(client, unsuspended, event="installation", delivery="unsuspend-1")
            await wait_idle(client.app)
            guides = state.services.guides
            assert [n for n in range(1, 6) if guides.get(HISTORY, n) is None] == []
            assert built_numbers(sandbox.requests) == Counter({n: 1 for n in range(1, 6)})  # #5 was not built again
            assert comment_writes(sandbox.requests) == []
            assert state.store.counts()["parked"] == 0


async def test_a_repository_removed_from_the_installation_loses_its_queued_work_only(
    app_private_key, webhook_payload, tmp_path, monkeypatch
):
    monkeypatch.setattr(backfill, "pull_spacing", lambda budget, now: 3600.0)
    other = "octo-org/other"
    async with start_sandbox(app_private_key) as sandbox:
        sandbox.state.add_merged_pulls(HISTORY, 3)
        sandbox.state.add_merged_pulls(other, 3)
        settings = settings_for(sandbox, app_private_key, tmp_path)
        async with running_app(settings, sandbox=sandbox, **app_options()) as client:
            state = client.app[STATE]
            added = webhook_payload("installation_repositories", "added.payload.json")
            added["installation"]["id"] = INSTALLATION
            added["repositories_added"] = [
                {"id": 9, "name": "history", "full_name": HISTORY, "private": False},
                {"id": 10, "name": "other", "full_name": other, "private": False},
            ]
            await deliver(client, added, event="installation_repositories", delivery="added-1")
            await wait_idle(client.app)
            # The other repository's run waits on the installation's lane while its slots are booked.
            assert pending_keys(state.store) == [f"backfill:installation:{INSTALLATION}", f"{HISTORY}#2", f"{HISTORY}#1"]

            removed = dict(added, action="removed", repositories_added=[], repositories_removed=added["repositories_added"][1:])
            await deliver(client, removed, event="installation_repositories", delivery="removed-1")
            await wait_idle(client.app)
            assert pending_keys(state.store) == [f"{HISTORY}#2", f"{HISTORY}#1"]


def installation_created_without_repositories(webhook_payload) -> dict:
    """``installation.created`` as GitHub may send it for all of an account's repositories: no ``repositories``."""
    payload = webhook_payload("installation", "created.payload.json")
    payload["installation"].update(id=INSTALLATION, repository_selection="all")
    del payload["repositories"]
    return payload


async def test_an_installation_created_without_repositories_lists_them_and_backfills_each(app_private_key, webhook_payload, tmp_path):
    async with start_sandbox(app_private_key) as sandbox:
        sandbox.state.add_merged_pulls(HISTORY, 2)
        sandbox.state.add_merged_pulls("octo-org/other", 1)
        settings = settings_for(sandbox, app_private_key, tmp_path)
        async with running_app(settings, sandbox=sandbox, **app_options()) as client:
            await deliver(client, installation_created_without_repositories(webhook_payload), event="installation", delivery="inst-all")
            await wait_idle(client.app)
            guides = client.app[STATE].services.guides
            assert [n for n in (1, 2) if guides.get(HISTORY, n) is not None] == [1, 2]
            assert guides.get("octo-org/other", 1) is not None
            listed = [r for r in sandbox.requests if r["path"].startswith("/installation/repositories")]
            assert len(listed) == 1 and listed[0]["status"] == 200
            job = client.app[STATE].store.by_delivery("inst-all")
            assert (job["outcome"], job["error"]) == ("succeeded", "queued_2")


async def test_backfill_and_reconcile_flag_a_pull_of_more_files_than_github_lists_as_truncated(
    app_private_key, tmp_path, monkeypatch
):
    # "List pull requests" items carry no changed_files: only the files listed (GitHub's 3,000 at most)
    # or the pull request itself can tell that some were left out. GitHub's cap is scaled down to 30
    # here, in the sandbox and the app alike, so no 3,000-file guide is built (test_fetch reads 3,000).
    from bot.app import fetch
    from bot.sandbox.resources import pulls

    monkeypatch.setattr(fetch, "GITHUB_FILE_LIST_CAP", 30)
    monkeypatch.setattr(pulls, "GITHUB_FILE_LIST_CAP", 30)
    async with start_sandbox(app_private_key) as sandbox:
        sandbox.state.add_merged_pulls(HISTORY, 1, files=31)
        sandbox.state.add_merged_pulls("octo-org/later", 1, files=31)
        sandbox.add_installation(2, repositories=["octo-org/later"])
        installed_before_the_merges(sandbox)  # reconcile covers merges after the installation only
        settings = settings_for(sandbox, app_private_key, tmp_path, reconcile_interval=3600)
        async with running_app(settings, sandbox=sandbox, **app_options()) as client:
            state = client.app[STATE]
            await deliver(client, installation_created(sandbox), event="installation", delivery="inst-1")
            await wait_idle(client.app)
            backfilled = state.services.guides.get(HISTORY, 1)
            assert backfilled["truncated"] is True

            await state.scheduler.tick()
            await wait_idle(client.app)
            reconciled = state.services.guides.get("octo-org/later", 1)
            assert reconciled["truncated"] is True
            # The one extra call per such pull request: "Get a pull request".
            gets = [r for r in sandbox.requests if re.fullmatch(r"/repos/octo-org/(history|later)/pulls/1", r["path"])]
            assert len(gets) == 2
