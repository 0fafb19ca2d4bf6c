"""A backfill meets GitHub's rate limit: the real app against the sandbox, on one virtual clock.

The app (job store, worker pool, rate limits, GitHub clients, tokens) and the sandbox
share :class:`AppTime`: real time plus what the worker pool skipped. The pool's
``sleep`` moves the clock instead of waiting, so backfill pacing and an hour's wait
for ``x-ratelimit-reset`` take no real time; a wait of the pool longer than
``hold_from`` seconds is held until the test lets it go, so the test can act while the
app waits for the reset. The sandbox spends the installation's limit mid-backfill
with a fault ("Rate limits for the REST API": 403, ``x-ratelimit-remaining: 0``).
"""

from __future__ import annotations

import asyncio
import json
import math
import re
import time
from typing import Any

from loopback import Sleeps, delivery_headers, running_app, settings_for, shipped_rules
from sandbox_helpers import app_private_key, start_sandbox  # noqa: F401

from bot.app.server import STATE, wait_idle

HISTORY = "octo-org/history"
INSTALLATION = 1
BACKFILL = 14


class AppTime:
    """One clock for the app and the sandbox; the worker pool's ``sleep`` moves it (see the module)."""

    def __init__(self) -> None:
        self.skipped = 0.0
        self.hold_from = math.inf
        self.held = asyncio.Event()
        self.go = asyncio.Event()
        self.hooks: list[Any] = []

    def __call__(self) -> float:
        return time.time() + self.skipped

    async def sleep(self, seconds: float) -> None:
        if seconds >= self.hold_from and not self.go.is_set():
            self.held.set()
            await self.go.wait()  # cancelled, without moving the clock, when the pool is woken
        self.skipped += seconds
        for hook in self.hooks:
            hook()


def merge_payload(sandbox: Any, number: int) -> dict:
    record = sandbox.state.repo(*HISTORY.split("/"))
    return {
        "action": "closed", "number": number, "pull_request": sandbox.state.pull_json(record, number),
        "repository": sandbox.state.repo_json(record), "installation": {"id": INSTALLATION},
        "sender": {"login": "maintainer", "type": "User"},
    }


def installation_created() -> dict:
    return {
        "action": "created",
        "installation": {"id": INSTALLATION, "account": {"login": "octo-org"}, "repository_selection": "selected"},
        "repositories": [{"id": 9, "name": "history", "full_name": HISTORY, "private": False}],
        "sender": {"login": "maintainer", "type": "User"},
    }


async def deliver(client: Any, payload: dict, *, event: str, delivery: str) -> None:
    body = json.dumps(payload).encode()
    resp = await client.post("/webhook", data=body, headers=delivery_headers(body, event=event, delivery=delivery))
    assert resp.status == 202, await resp.text()


async def poll(condition: Any, *, attempts: int = 2000) -> None:
    """Wait (bounded) until ``condition()`` holds, yielding to the event loop in between."""
    for _ in range(attempts):
        if condition():
            return
        await asyncio.sleep(0.005)
    raise AssertionError("condition not reached")


def files_read(request: dict) -> int | None:
    match = re.search(r"/pulls/(\d+)/files", request["path"])
    return int(match.group(1)) if match and request["method"] == "GET" else None


async def test_the_limit_runs_out_mid_backfill_nothing_is_lost_no_attempt_is_spent_and_a_live_merge_goes_first(
    app_private_key, tmp_path  # noqa: F811
):
    clock = AppTime()
    async with start_sandbox(app_private_key, clock=clock) as sandbox:
        sandbox.state.add_merged_pulls(HISTORY, BACKFILL + 1)  # #1 merges live; #2..#15 are the backfill's
        sandbox.set_file(HISTORY, ".github/prguide.yml", f"backfill: {BACKFILL}\n")

        def spend_the_limit() -> None:
            # About six pull slots in (2.7 s apart), the installation's limit runs out.
            if clock.skipped >= 15 and not sandbox.faults.faults:
                sandbox.add_faults([{"status": 403, "rate_limit_remaining": 0, "path": ""}])

        clock.hooks.append(spend_the_limit)
        clock.hold_from = 600.0  # only the wait for the reset is that long
        # One worker: what the pool starts first also finishes first.
        settings = settings_for(sandbox, app_private_key, tmp_path, workers=1)
        options = {"rules": shipped_rules(), "clock": clock, "pool_options": {"sleep": clock.sleep},
                   "client_options": {"sleep": Sleeps()}}  # fmt: skip
        async with running_app(settings, sandbox=sandbox, **options) as client:
            state = client.app[STATE]
            jobs = state.store.conn
            await deliver(client, installation_created(), event="installation", delivery="inst-1")
            # Every job that was due has run; the rest wait for the reset.
            await poll(lambda: clock.held.is_set() and not state.pool.running_jobs)

            guides = state.services.guides
            built_before = [n for n in range(2, BACKFILL + 2) if guides.get(HISTORY, n) is not None]
            refused = [r for r in sandbox.requests if r["status"] == 403]
            assert 0 < len(built_before) < BACKFILL and refused
            # Only the requests in flight then were refused (a pull job sends four at once): once
            # GitHub said no, the jobs due later sent nothing before the reset.
            assert len(refused) <= 4
            waiting = jobs.execute("SELECT attempts, error FROM jobs WHERE state = 'queued'").fetchall()
            assert len(waiting) == BACKFILL - len(built_before)
            assert {row[0] for row in waiting} == {0}  # no attempt spent on the wait
            assert all(row[1].startswith("RateLimited") for row in waiting)

            # A merge arrives while the backfill waits for the reset: it waits too (the limit is
            # spent), without spending an attempt ...
            await deliver(client, merge_payload(sandbox, 1), event="pull_request", delivery="merge-1")
            live = "SELECT state, attempts, error FROM jobs WHERE delivery_id = 'merge-1'"
            await poll(lambda: (jobs.execute(live).fetchone() or ("",))[0] == "queued")
            _, attempts, error = jobs.execute(live).fetchone()
            assert attempts == 0 and error.startswith("RateLimited")
            clock.go.set()
            await poll(lambda: state.store.counts()["queued"] == 0 and not state.pool.running_jobs)
            await wait_idle(client.app)

            # ... and its guide lands before any of the backlog's after the reset.
            last_refusal = max(i for i, r in enumerate(sandbox.requests) if r["status"] == 403)
            after = sandbox.requests[last_refusal + 1:]
            comment = next(i for i, r in enumerate(after) if r["method"] == "POST" and "/issues/1/comments" in r["path"])
            first_backlog = next(i for i, r in enumerate(after) if (files_read(r) or 1) != 1)
            assert comment < first_backlog
            assert len(sandbox.comments(HISTORY, 1)) == 1

            # Nothing lost: every guide of the backfill is stored, no comment.
            assert [n for n in range(2, BACKFILL + 2) if guides.get(HISTORY, n) is None] == []
            assert all(sandbox.comments(HISTORY, n) == [] for n in range(2, BACKFILL + 2))
            rows = jobs.execute("SELECT state, max(attempts), count(*) FROM jobs GROUP BY state").fetchall()
            assert [tuple(row)[:2] for row in rows] == [("done", 1)]  # every job done at its first attempt
            assert clock.skipped > 3500  # an hour went by, virtually
