"""The reconcile pass's window: from its last completed pass, at most the look-back, never before the installation.

Passes run the real handler on a job claimed from the job store, SQLite or PostgreSQL
(``store`` fixture); GitHub is a fake that serves canned pages, and the pass's clock is
replaced (``reconcile.clock``) so passes days apart take no time.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import Any

import pytest

from bot.app.errors import RetryLater
from bot.app.github import Page
from bot.app.jobs import JobStore
from bot.app.metrics import create_metrics
from bot.app.routing import JobContext, Services
from bot.app.settings import Settings
from bot.features import reconcile

HOUR, DAY = 3600.0, 86400.0
NOW = 1_790_000_000.0  # the last pass of each test runs at NOW
INSTALLATION = 7


def iso(at: float) -> str:
    return datetime.fromtimestamp(at, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def merged(number: int, at: float) -> dict:
    return {"number": number, "updated_at": iso(at), "merged_at": iso(at)}


class GitHub:
    """The installation's repositories and each one's closed pull requests, newest update first."""

    def __init__(self, pulls: dict[str, list[dict]], *, created_at: float | None = None, ids: dict[str, int] | None = None):
        self.pulls = pulls
        self.created_at = created_at
        self.ids = ids or {}  # repository ids, for listings that give them
        self.down = False
        self.calls = 0
        self.pages = 0

    async def getlist(self, url: str, url_vars: Any = None, **kwargs: Any) -> list:
        self.calls += 1
        if self.down:
            raise RetryLater("GitHub answered 502")
        return [{"full_name": name, "private": False, **({"id": self.ids[name]} if name in self.ids else {})}
                for name in self.pulls]  # fmt: skip

    async def get_page(self, url: str) -> Page:
        """100 a page; the next page's URL (``Link: rel="next"``) is ``...&page=N``."""
        self.calls += 1
        self.pages += 1
        repo = url.split("/repos/", 1)[1].split("/pulls", 1)[0]
        page = int(url.rsplit("&page=", 1)[1]) if "&page=" in url else 1
        items = sorted(self.pulls[repo], key=lambda p: p["updated_at"], reverse=True)
        more = len(items) > page * 100
        return Page(items[(page - 1) * 100:page * 100], f"{url.split('&page=')[0]}&page={page + 1}" if more else None)

    async def installation(self, installation_id: int) -> dict:
        """The app's view of the installation (``AppAuth.installation``)."""
        return {"id": installation_id, "created_at": iso(self.created_at) if self.created_at else None}


class Guides:
    def get_many(self, repository, numbers):
        return {}


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request, tmp_path):
    if request.param == "sqlite":
        s = JobStore.open(str(tmp_path / "jobs.db"))
    else:
        from bot.app.pgjobs import PgJobStore

        s = PgJobStore(request.getfixturevalue("pg_database"))
    yield s
    s.close()


async def run_pass(store, github: GitHub, at: float, monkeypatch, *, interval: float = HOUR, **settings: Any) -> list[str]:
    """One reconcile pass at ``at`` (the payload the scheduler would queue then); the pull requests it queued."""
    monkeypatch.setattr(reconcile, "clock", lambda: at, raising=False)
    services = Services(
        Settings(app_id=1, private_key="k", webhook_secret="s", reconcile_interval=int(interval), **settings),
        clients=None, auth=github, rules=None, metrics=create_metrics(), store=store, guides=Guides(),
    )
    period = int(at // interval)
    payload = {"installation": {"id": INSTALLATION}, "schedule": "reconcile", "period": period, "interval": interval,
               "since": (period - 1) * interval}
    delivery = f"reconcile:{INSTALLATION}:{period}"
    store.enqueue(delivery, reconcile.EVENT, f"reconcile:{INSTALLATION}", json.dumps(payload).encode(),
                  installation_id=INSTALLATION, action=None)
    job = store.claim()
    assert job.delivery_id == delivery
    ctx = JobContext(services, job)
    ctx._client = github
    try:
        await reconcile.handle_reconcile(job, ctx)
    finally:
        store.complete(job.id)
    queued = []
    while (next_job := store.claim()) is not None:
        queued.append(next_job.key)
        store.complete(next_job.id)
    return queued


async def test_a_pass_after_a_weekend_without_passes_covers_the_weekend(store, monkeypatch):
    github = GitHub({"o/r": []}, created_at=NOW - 30 * DAY)
    assert await run_pass(store, github, NOW - 3 * DAY, monkeypatch) == []  # Friday evening's pass
    # The replicas were down all weekend; merges went on and their webhooks failed.
    github.pulls["o/r"] = [merged(1, NOW - 2.5 * DAY), merged(2, NOW - 1 * DAY), merged(3, NOW - 10 * 60)]
    assert sorted(await run_pass(store, github, NOW, monkeypatch)) == ["o/r#1", "o/r#2", "o/r#3"]


async def test_a_failed_pass_does_not_move_the_window(store, monkeypatch):
    github = GitHub({"o/r": []}, created_at=NOW - 30 * DAY)
    assert await run_pass(store, github, NOW - 3 * DAY, monkeypatch) == []
    github.down = True
    with pytest.raises(RetryLater):
        await run_pass(store, github, NOW - 2 * DAY, monkeypatch)
    github.down = False
    github.pulls["o/r"] = [merged(1, NOW - 2.5 * DAY)]  # before the failed pass, after the last completed one
    assert await run_pass(store, github, NOW, monkeypatch) == ["o/r#1"]


async def test_the_window_reaches_back_at_most_the_look_back(store, monkeypatch):
    github = GitHub({"o/r": []}, created_at=NOW - 90 * DAY)
    assert await run_pass(store, github, NOW - 30 * DAY, monkeypatch) == []
    github.pulls["o/r"] = [merged(1, NOW - 10 * DAY), merged(2, NOW - 5 * DAY)]
    assert await run_pass(store, github, NOW, monkeypatch) == ["o/r#2"]  # the default look-back: 7 days
    github.pulls["o/r"] = [merged(3, NOW - 3 * DAY)]
    assert await run_pass(store, github, NOW + HOUR, monkeypatch, reconcile_max_lookback=int(2 * DAY)) == []


async def test_merges_from_before_the_installation_get_no_guide_from_reconcile(store, monkeypatch):
    # Installed 90 minutes ago with `backfill: 0`: the first pass must not comment on older merges.
    github = GitHub({"o/r": [merged(1, NOW - 100 * 60), merged(2, NOW - 60 * 60)]}, created_at=NOW - 90 * 60)
    assert await run_pass(store, github, NOW, monkeypatch) == ["o/r#2"]
    assert store.read_checkpoint(reconcile.checkpoint_name(INSTALLATION))["installed_at"] == NOW - 90 * 60


async def test_a_repository_added_since_the_last_pass_is_looked_at_from_now_on(store, monkeypatch):
    github = GitHub({"o/r": []}, created_at=NOW - 30 * DAY)
    assert await run_pass(store, github, NOW - HOUR, monkeypatch) == []
    # o/new joined the installation half an hour ago; its merges from before are not the app's.
    github.pulls = {"o/r": [merged(1, NOW - 40 * 60)], "o/new": [merged(5, NOW - 50 * 60)]}
    assert await run_pass(store, github, NOW, monkeypatch) == ["o/r#1"]
    github.pulls["o/new"].append(merged(6, NOW + 10 * 60))
    assert await run_pass(store, github, NOW + HOUR, monkeypatch) == ["o/new#6"]


async def test_a_pass_for_an_installation_github_no_longer_knows_gives_up(store, monkeypatch):
    from bot.app.errors import GiveUp
    from bot.app.github import NotFound

    github = GitHub({"o/r": [merged(1, NOW - 60)]})

    async def gone(installation_id: int) -> dict:
        raise NotFound("Not Found", path=f"/app/installations/{installation_id}")

    github.installation = gone
    with pytest.raises(GiveUp, match="installation 7 is gone"):
        await run_pass(store, github, NOW, monkeypatch)
    assert store.read_checkpoint(reconcile.checkpoint_name(INSTALLATION)) is None


async def test_a_window_longer_than_a_pass_reads_is_covered_by_the_passes_after_it(store, monkeypatch):
    github = GitHub({"o/r": []}, created_at=NOW - 30 * DAY, ids={"o/r": 1})
    assert await run_pass(store, github, NOW - 3 * DAY, monkeypatch) == []
    # Down for the weekend: 1,200 merges meanwhile, none handled.
    github.pulls["o/r"] = [merged(n, NOW - 2.5 * DAY + n * 60) for n in range(1, 1201)]
    queued = [await run_pass(store, github, NOW, monkeypatch)]
    name = reconcile.checkpoint_name(INSTALLATION)
    assert store.read_checkpoint(name)["repository_ids"]["1"]["backlog"]["from"] == NOW - 3 * DAY - HOUR
    # Merges go on meanwhile: each pass reads them first, then the backlog with the pages left.
    for n, at in ((1201, NOW + HOUR), (1202, NOW + 2 * HOUR)):
        github.pulls["o/r"].append(merged(n, at - 60))
        github.pages = 0
        queued.append(await run_pass(store, github, at, monkeypatch))
        assert github.pages <= reconcile.MAX_PAGES
    # Each later pass: the newest merge (page 1), then four pages of the backlog, which the new
    # merges shifted down by one: the first of them was queued already.
    assert [len(q) for q in queued] == [500, 1 + 399, 1 + 301]
    assert sorted(sum(queued, [])) == sorted(f"o/r#{n}" for n in range(1, 1203))
    assert "backlog" not in store.read_checkpoint(name)["repository_ids"]["1"]
    github.pages = 0
    assert await run_pass(store, github, NOW + 3 * HOUR, monkeypatch) == []
    assert github.pages == 1  # nothing left behind: one page, as before the outage


async def test_a_checkpoint_keyed_by_name_is_read_by_name_and_kept_by_repository_id(store, monkeypatch):
    # An older prguide's checkpoint: repositories by name, o/late added a day ago.
    name = reconcile.checkpoint_name(INSTALLATION)
    store.write_checkpoint(name, {"covered_from": NOW - 2 * DAY, "installed_at": NOW - 30 * DAY,
                                  "repositories": {"o/r": None, "o/late": NOW - DAY}})  # fmt: skip
    github = GitHub({"o/r": [merged(1, NOW - 1.5 * DAY)], "o/late": [merged(2, NOW - 1.5 * DAY), merged(3, NOW - 60)]},
                    created_at=NOW - 30 * DAY, ids={"o/r": 10, "o/late": 11})  # fmt: skip
    assert sorted(await run_pass(store, github, NOW, monkeypatch)) == ["o/late#3", "o/r#1"]
    value = store.read_checkpoint(name)
    assert "repositories" not in value
    assert value["repository_ids"] == {"10": {"name": "o/r", "since": None}, "11": {"name": "o/late", "since": NOW - DAY}}
    # Renamed since: the same ids, the same windows.
    github.pulls = {"o/r2": [merged(4, NOW + 30 * 60)], "o/late2": [merged(5, NOW + 40 * 60)]}
    github.ids = {"o/r2": 10, "o/late2": 11}
    assert sorted(await run_pass(store, github, NOW + HOUR, monkeypatch)) == ["o/late2#5", "o/r2#4"]
    assert store.read_checkpoint(name)["repository_ids"]["11"] == {"name": "o/late2", "since": NOW - DAY}
