"""Bugs found by hunting in backfill, reconcile, rate limits, suspension and the narrator's cap.

Each test is a minimal repro. A finding not fixed yet is marked ``xfail(strict=True)``
with its severity in the reason: the test fails on today's code, and passes (turning
the strict xfail into a failure) once the bug is fixed, so its mark must go then.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import Any

import pytest
from narrator_helpers import DATA, engine_markdown

from bot.app.github import Page, RetryPolicy
from bot.app.jobs import JobStore
from bot.app.jobstore import PRIORITY_BACKGROUND, QueuedDelivery
from bot.app.metrics import create_metrics
from bot.app.ratelimit import Budget, MemoryRateLimits, RateLimits, rate_limit_delay
from bot.app.routing import JobContext, Router, Services
from bot.app.settings import Settings
from bot.app.webhook import Delivery
from bot.features import FEATURES, backfill, reconcile
from bot.narrator import run as narrator_run
from bot.narrator.client import LLMConfig, Outcome
from bot.narrator.prompt import ANSWER_TOKENS
from bot.narrator.render import failed
from bot.narrator.store import SQLiteNarrations

HOUR, DAY = 3600.0, 86400.0
NOW = 1_790_000_000.0
INSTALLATION = 7


# --- rate limits ---------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["1e400", "inf", "Infinity"])
async def test_a_retry_after_that_is_no_number_of_seconds_does_not_hold_the_installation_for_ever(value):
    """Severity: high (fixed). One odd ``retry-after`` (a proxy's, a GitHub Enterprise Server's)
    used to block the installation for ever, on every replica: the shared budget kept
    ``blocked_until = inf`` and no later answer could lower it."""
    policy = RetryPolicy()
    wait = rate_limit_delay(403, {"retry-after": value}, b'{"message": "You have exceeded a secondary rate limit"}',
                            now=NOW, policy=policy)  # fmt: skip
    assert wait == policy.secondary_limit_wait
    limits = RateLimits(MemoryRateLimits(), clock=lambda: NOW)
    await limits.observe(INSTALLATION, {"retry-after": value}, refused=wait)
    assert await limits.wait(INSTALLATION) <= policy.secondary_limit_wait


async def test_a_reset_far_beyond_any_window_does_not_stick_in_the_shared_budget():
    """Severity: low (fixed). A bogus x-ratelimit-reset far ahead (milliseconds, a proxy) was
    kept for ever in the shared budget: merge() only takes a later window, so GitHub's real
    windows were ignored and the installation waited until the year 57000."""
    limits = RateLimits(MemoryRateLimits(), clock=lambda: NOW)
    await limits.observe(INSTALLATION, {"x-ratelimit-limit": "5000", "x-ratelimit-remaining": "0",
                                        "x-ratelimit-reset": str(int(NOW * 1000))})  # fmt: skip
    # An hour later GitHub answers normally, with a fresh window.
    later = RateLimits(limits.store, clock=lambda: NOW + HOUR)
    await later.observe(INSTALLATION, {"x-ratelimit-limit": "5000", "x-ratelimit-remaining": "4999",
                                       "x-ratelimit-reset": str(int(NOW + 2 * HOUR))})  # fmt: skip
    assert await later.wait(INSTALLATION) == 0.0


async def test_a_replica_with_a_fast_clock_does_not_hold_the_other_replicas_backfill():
    """Severity: medium (fixed). Backfill slots were booked on each replica's own clock
    (RateLimits.book(now=time.time())), not the store's: one replica whose clock is 30 minutes
    fast booked paced_until half an hour ahead, and every other replica's lane then held the
    installation's backfill (HORIZON_S) for ~20 minutes with nothing really booked."""
    shared = MemoryRateLimits()
    fast = RateLimits(shared, clock=lambda: NOW + 1800)  # its clock is half an hour ahead
    right = RateLimits(shared, clock=lambda: NOW)
    await fast.book(INSTALLATION, 1, 2.7)  # one pull request's slot
    budget = await right.budget(INSTALLATION, fresh=True)
    ahead = budget.paced_until - NOW - backfill.HORIZON_S
    assert ahead <= 0, f"the lane waits {ahead:.0f}s for a slot booked 2.7s long"


# --- reconcile -----------------------------------------------------------------------------


def iso(at: float) -> str:
    return datetime.fromtimestamp(at, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def merged(number: int, at: float) -> dict:
    return {"number": number, "updated_at": iso(at), "merged_at": iso(at)}


class PagedGitHub:
    """Repositories (with ids) and their closed pull requests, served 100 a page, newest update first."""

    def __init__(self, repos: dict[str, tuple[int, list[dict]]], *, created_at: float):
        self.repos = repos
        self.created_at = created_at

    async def getlist(self, url: str, url_vars: Any = None, **kwargs: Any) -> list:
        return [{"id": rid, "full_name": name, "private": False} for name, (rid, _) in self.repos.items()]

    async def get_page(self, url: str) -> Page:
        repo = url.split("/repos/", 1)[1].split("/pulls", 1)[0]
        page = int(url.split("#page=", 1)[1]) if "#page=" in url else 0
        items = sorted(self.repos[repo][1], key=lambda p: p["updated_at"], reverse=True)
        more = len(items) > (page + 1) * 100
        base = url.split("#page=", 1)[0]
        return Page(items[page * 100:(page + 1) * 100], f"{base}#page={page + 1}" if more else None)

    async def installation(self, installation_id: int) -> dict:
        return {"id": installation_id, "created_at": iso(self.created_at)}


class NoGuides:
    def get_many(self, repository, numbers):
        return {}


async def reconcile_pass(store: JobStore, github: PagedGitHub, at: float, monkeypatch) -> list[str]:
    """One reconcile pass at ``at``; the keys of the pull requests it queued."""
    monkeypatch.setattr(reconcile, "clock", lambda: at)
    services = Services(
        Settings(app_id=1, private_key="k", webhook_secret="s", reconcile_interval=int(HOUR)),
        clients=None, auth=github, rules=None, metrics=create_metrics(), store=store, guides=NoGuides(),
    )
    period = int(at // HOUR)
    payload = {"installation": {"id": INSTALLATION}, "period": period, "interval": HOUR, "since": (period - 1) * HOUR}
    store.enqueue(f"reconcile:{INSTALLATION}:{period}", reconcile.EVENT, f"reconcile:{INSTALLATION}",
                  json.dumps(payload).encode(), installation_id=INSTALLATION, action=None)  # fmt: skip
    job = store.claim()
    ctx = JobContext(services, job)
    ctx._client = github
    await reconcile.handle_reconcile(job, ctx)
    store.complete(job.id)
    queued = []
    while (next_job := store.claim()) is not None:
        queued.append(next_job.key)
        store.complete(next_job.id)
    return queued


@pytest.fixture
def jobs(tmp_path):
    store = JobStore.open(str(tmp_path / "jobs.db"))
    yield store
    store.close()


async def test_merges_beyond_the_pages_one_pass_reads_are_reconciled_by_a_later_pass(jobs, monkeypatch):
    """Severity: medium (fixed). After a long outage a busy repository has more closed pull
    requests in the window than MAX_PAGES pages; the pass stopped there yet still moved the
    checkpoint, so the older merges of the window were never reconciled by any later pass."""
    github = PagedGitHub({"o/r": (1, [])}, created_at=NOW - 30 * DAY)
    assert await reconcile_pass(jobs, github, NOW - 3 * DAY, monkeypatch) == []
    # Down for the weekend: 600 pull requests merged meanwhile, none got its webhook handled.
    pulls = [merged(n, NOW - 2.5 * DAY + n * 60) for n in range(1, 601)]
    github.repos["o/r"] = (1, pulls)
    first = await reconcile_pass(jobs, github, NOW, monkeypatch)
    second = await reconcile_pass(jobs, github, NOW + HOUR, monkeypatch)
    assert len(first) == reconcile.MAX_PAGES * 100  # bounded per pass, as designed
    assert sorted(first + second) == sorted(f"o/r#{n}" for n in range(1, 601))


async def test_a_repository_renamed_during_an_outage_keeps_its_window(jobs, monkeypatch):
    """Severity: low (fixed). The checkpoint keyed repositories by name: a repository renamed
    during an outage counted as new to the installation, so its merges between the last pass
    and the rename were never reconciled."""
    github = PagedGitHub({"o/old": (42, [])}, created_at=NOW - 30 * DAY)
    assert await reconcile_pass(jobs, github, NOW - 2 * DAY, monkeypatch) == []
    # Merged during the outage, then the repository was renamed (same id).
    github.repos = {"o/new": (42, [merged(5, NOW - DAY)])}
    assert await reconcile_pass(jobs, github, NOW, monkeypatch) == ["o/new#5"]


# --- suspension mid-backfill ------------------------------------------------------------------


async def test_suspending_the_installation_stops_its_queued_backfill(jobs):
    """Severity: medium (fixed). installation.suspend only dropped the cached token: a backfill's
    queued jobs (up to 1,000 per repository) kept running, each failed to get a token (403),
    was retried and parked; nothing held or cancelled them as uninstalling does."""
    pull = {"repository": "o/r", "private": False, "run": "backfill:d1:o/r", "index": 1, "limit": 100,
            "pull": {"number": 3, "merged_at": iso(NOW)}}  # fmt: skip
    jobs.enqueue_many([QueuedDelivery("backfill:d1:o/r:3", backfill.EVENT, "o/r#3", json.dumps(pull).encode(),
                                      installation_id=INSTALLATION, action=backfill.PULL, priority=PRIORITY_BACKGROUND)],
                      now=NOW, delay=60)  # fmt: skip
    payload = {"action": "suspend", "installation": {"id": INSTALLATION}, "sender": {"login": "owner", "type": "User"}}
    body = json.dumps(payload).encode()
    delivery = Delivery("s-1", "installation", "suspend", payload, body, installation_id=INSTALLATION)
    router = Router([route for routes in FEATURES for route in routes])
    route, reason = router.decide(delivery)
    assert route is not None, reason
    jobs.enqueue("s-1", "installation", None, body, installation_id=INSTALLATION, action="suspend", now=NOW)
    job = jobs.claim(now=NOW)
    services = Services(Settings(app_id=1, private_key="k", webhook_secret="s"), clients=None, auth=None, rules=None,
                        metrics=create_metrics(), store=jobs, guides=None)  # fmt: skip
    await route.handle(job, JobContext(services, job))
    jobs.complete(job.id, now=NOW)
    assert jobs.claim(now=NOW + HOUR) is None  # the backfill waits for the unsuspension, or is gone


# --- the narrator's daily cap --------------------------------------------------------------


async def test_the_daily_token_cap_holds_with_the_answers_tokens(monkeypatch):
    """Severity: low (fixed). Only the prompt was reserved before a call; the answer's tokens
    (up to ANSWER_TOKENS) were added after it, so a call granted near the cap passed it, and
    replicas calling at once passed it by one answer each."""
    store = SQLiteNarrations(":memory:")
    day, reserved = "2026-12-02", []
    config = LLMConfig(url="http://127.0.0.1:9/v1", model="m")
    prompt_tokens = narrator_run.build_prompt(narrator_run.build_fact_sheet(DATA), budget=config.budget,
                                              model=config.model).tokens  # fmt: skip
    cap = prompt_tokens + ANSWER_TOKENS // 2

    async def answer(sheet, prompt, config):  # the model answers at full length
        return Outcome(failed(config.model, "schema"), prompt.tokens, ANSWER_TOKENS, 0.1, 1)

    async def reserve(tokens: int) -> bool:
        ok = store.reserve_tokens(INSTALLATION, day, tokens, cap)
        reserved.append(tokens if ok else 0)
        return ok

    monkeypatch.setattr(narrator_run, "narrate", answer)
    result = await narrator_run.narrate_guide(DATA, engine_markdown(), config, reserve=reserve)
    if result.outcome is not None and result.outcome.calls:  # settled as the narrator job does
        used = result.outcome.prompt_tokens + result.outcome.completion_tokens
        store.add_tokens(INSTALLATION, day, used - reserved[-1])
    assert store.tokens(INSTALLATION, day) <= cap


# --- prguide db copy -----------------------------------------------------------------------


def test_db_copy_keeps_the_reconcile_checkpoints(tmp_path, pg_database):
    """Severity: medium (fixed). ``db copy`` left the checkpoints behind: the first reconcile
    pass on PostgreSQL then forgot when each repository joined the installation and
    queued (and commented on) merges from before, which are backfill's, not reconcile's."""
    from bot.app.pgjobs import PgJobStore
    from bot.dbcopy import copy_sqlite_to_postgresql

    path = tmp_path / "prguide.db"
    jobs = JobStore.open(str(path))
    value = {"covered_from": NOW, "installed_at": NOW - 30 * DAY, "repositories": {"o/r": None, "o/late": NOW - DAY}}
    jobs.write_checkpoint(reconcile.checkpoint_name(INSTALLATION), value)
    jobs.close()
    copy_sqlite_to_postgresql(path, pg_database.url, schema=pg_database.schema)
    assert PgJobStore(pg_database).read_checkpoint(reconcile.checkpoint_name(INSTALLATION)) == value
