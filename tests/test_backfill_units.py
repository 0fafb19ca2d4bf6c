"""Backfill and reconcile pieces that need no network: commands, config keys, job edge cases."""

from __future__ import annotations

import json
from typing import Any

import pytest

from bot.app.errors import GiveUp
from bot.app.github import Page
from bot.app.jobstore import PRIORITY_BACKGROUND, JobStore
from bot.app.metrics import create_metrics
from bot.app.ratelimit import Budget, RateLimits
from bot.app.routing import JobContext, Services, default_router
from bot.app.settings import Settings
from bot.commands.decide import Actor, Backfill, PullState, Refuse, Remembered, decide
from bot.commands.parse import parse_commands
from bot.features import backfill, reconcile
from bot.engine.repo_config import RepoConfigError, parse_repo_config


@pytest.mark.parametrize(
    ("text", "args", "error"),
    [
        ("/prguide backfill", (), None),
        ("/prguide backfill 25", ("25",), None),
        ("/prguide backfill 0025", ("25",), None),
        ("/prguide backfill 0", (), "cmd.err.backfill_count"),
        ("/prguide backfill 1001", (), "cmd.err.backfill_count"),
        ("/prguide backfill many", (), "cmd.err.backfill_count"),
        ("/prguide backfill 1 2", (), "cmd.err.backfill_count"),
        ("/prguide backfill ５", (), "cmd.err.backfill_count"),
    ],
)
def test_backfill_command_grammar(text, args, error):
    (command,) = parse_commands(text)
    assert (command.name, command.args, command.error) == ("backfill", args, error)


def test_only_writers_backfill_and_once_per_comment():
    commands = parse_commands("/prguide backfill 5\n/prguide backfill")
    merged = PullState(merged=True)
    assert decide(commands, Actor("mo", "maintain"), Remembered(), merged) == [Backfill(5)]
    refused = decide(commands, Actor("amy", "read", is_author=True), Remembered(), merged)
    assert [r.reason for r in refused if isinstance(r, Refuse)] == ["cmd.deny.backfill"] * 2
    # Not about this pull request: even one closed without merging may start it.
    assert decide(parse_commands("/prguide backfill"), Actor("mo", "admin"), Remembered(), PullState(merged=False)) == [Backfill(None)]


def test_backfill_config_keys():
    config = parse_repo_config("backfill: 20\nbackfill_comments: true\n")
    assert (config.backfill, config.backfill_comments) == (20, True)
    assert (parse_repo_config("lang: en\n").backfill, parse_repo_config("lang: en\n").backfill_comments) == (100, False)
    with pytest.raises(RepoConfigError) as caught:
        parse_repo_config("backfill: true\nbackfill_comments: yes please\n")
    assert [str(p) for p in caught.value.problems] == [
        ".github/prguide.yml:1: backfill must be a whole number from 0 to 1000, got True",
        ".github/prguide.yml:2: backfill_comments must be true or false, got 'yes please'",
    ]


def test_internal_and_installation_events_are_not_subscriptions():
    router = default_router()
    assert "prguide.backfill" not in router.events and "installation" not in router.events
    assert router.route("prguide.backfill", "pull") is backfill.BACKFILL
    assert router.route("installation_repositories", "added") is backfill.REPOSITORIES_ADDED
    assert [s.name for s in router.schedules] == ["reconcile"]


class FakeClient:
    """Answers ``get_page``/``getlist`` from canned pages and counts calls."""

    def __init__(self, pages: dict[str, Page] | None = None, repos: list | None = None):
        self.pages, self.repos, self.calls, self.asked = pages or {}, repos or [], 0, []

    async def get_page(self, url: str, **kwargs: Any) -> Page:
        self.calls += 1
        self.asked.append(url)
        for prefix, page in self.pages.items():
            if url.startswith(prefix):
                return page
        return Page([], None)

    async def getlist(self, url: str, url_vars: Any = None, **kwargs: Any) -> list:
        self.calls += 1
        assert kwargs.get("iterable_key") == "repositories"
        return list(self.repos)


class FakeGuides:
    def __init__(self, known=()):
        self.known = set(known)
        self.analyzed = 0

    def analyze(self):
        self.analyzed += 1

    def get(self, repository, number):
        return {} if (repository, number) in self.known else None

    def get_many(self, repository, numbers):
        return {n: {} for n in numbers if (repository, n) in self.known}


@pytest.fixture
def store(tmp_path):
    s = JobStore.open(str(tmp_path / "jobs.db"))
    yield s
    s.close()


def job_context(store, event: str, action: str | None, payload: dict, *, client=None, guides=None, limits=None) -> JobContext:
    services = Services(
        Settings(app_id=1, private_key="k", webhook_secret="s"), clients=None, auth=None, rules=None,
        metrics=create_metrics(), store=store, guides=guides, rate_limits=limits or RateLimits(),
    )
    delivery = f"d-{event}-{action}-{json.dumps(payload, sort_keys=True)}"
    store.enqueue(delivery, event, delivery, json.dumps(payload).encode(), installation_id=1, action=action)
    ctx = JobContext(services, store.claim())
    ctx._client = client
    return ctx


def queued(store) -> list:
    jobs = []
    while (job := store.claim(now=10**12)) is not None:
        jobs.append(job)
        store.complete(job.id)
    return jobs


async def test_repositories_added_queue_one_run_each_and_no_call(store):
    payload = {"repositories_added": [{"full_name": "o/a", "private": False}, {"full_name": "o/b"}, {"name": "x"}]}
    ctx = job_context(store, "installation_repositories", "added", payload)
    await backfill.handle_installed(ctx.job, ctx)
    store.complete(ctx.job.id)
    assert ctx.outcome == "queued_2"
    starts = queued(store)
    # The installation's runs take turns on its lane, as background jobs.
    assert [(j.action, j.key, j.data["repository"], j.data["private"], j.data["limit"]) for j in starts] == [
        ("start", "backfill:installation:1", "o/a", False, None), ("start", "backfill:installation:1", "o/b", True, None)
    ]
    assert {store.get(j.id)["priority"] for j in starts} == {PRIORITY_BACKGROUND}


@pytest.mark.parametrize(("action", "payload"), [("pull", {}), ("sideways", {"repository": "o/r"}), ("pull", {"repository": "o/r"})])
async def test_backfill_jobs_without_what_they_need_give_up(store, action, payload):
    ctx = job_context(store, "prguide.backfill", action, payload)
    with pytest.raises(GiveUp):
        await backfill.handle_backfill(ctx.job, ctx)


async def test_a_page_stops_at_the_limit_and_pages_on_while_short(store):
    merged = [{"number": n, "merged_at": "2024-01-01T00:00:00Z"} for n in (9, 8)]
    listed = Page([*merged[:1], {"number": 7, "merged_at": None}, merged[1], "junk"], "https://api/next")
    client = FakeClient({"/repos/o/r/pulls?": listed})
    data = {"repository": "o/r", "private": False, "limit": 5, "run": "run-1", "page": 1, "found": 0, "comments": False}
    ctx = job_context(store, "prguide.backfill", "page", data, client=client)
    await backfill.handle_backfill(ctx.job, ctx)
    store.complete(ctx.job.id)
    due = dict(store.conn.execute("SELECT delivery_id, not_before FROM jobs WHERE state = 'queued'").fetchall())
    jobs = {j.delivery_id: j for j in queued(store)}
    assert sorted((j.action, d) for d, j in jobs.items()) == [("page", "run-1:page:2"), ("pull", "run-1:8"), ("pull", "run-1:9")]
    assert jobs["run-1:9"].key == "o/r#9" and jobs["run-1:9"].data["pull"]["merged"] is True
    assert jobs["run-1:page:2"].data["found"] == 2 and jobs["run-1:page:2"].key == "backfill:installation:1"
    # The pulls take consecutive slots of the installation; the next page waits for room itself.
    assert due["run-1:8"] - due["run-1:9"] == pytest.approx(backfill.pull_spacing(None, 0.0), abs=0.05)
    progress = ctx.services.progress["backfill"]["o/r"]
    assert (progress["queued"], progress["pending"], progress["pages"], progress["api_calls"]) == (2, 2, 1, 1)
    # /metrics counts the list page too, as /healthz does
    assert ctx.services.metrics.registry.get_sample_value("prguide_backfill_api_calls_total") == 1


async def test_a_pull_with_a_stored_guide_is_skipped_without_a_call(store):
    client = FakeClient()
    data = {"repository": "o/r", "pull": {"number": 4}, "limit": 10}
    ctx = job_context(store, "prguide.backfill", "pull", data, client=client, guides=FakeGuides({("o/r", 4)}))
    await backfill.handle_backfill(ctx.job, ctx)
    assert ctx.outcome == "exists" and client.calls == 0
    assert ctx.services.progress["backfill"]["o/r"]["skipped"] == 1


async def test_reconcile_needs_the_guide_store_and_a_window(store):
    ctx = job_context(store, "prguide.reconcile", None, {"since": 0})
    await reconcile.handle_reconcile(ctx.job, ctx)
    assert ctx.outcome == "no_store"
    ctx = job_context(store, "prguide.reconcile", None, {"period": 1}, guides=FakeGuides())
    with pytest.raises(GiveUp):
        await reconcile.handle_reconcile(ctx.job, ctx)


async def test_reconcile_queues_only_recent_merges_without_a_guide(store, monkeypatch):
    page = Page([
        {"number": 5, "updated_at": "2024-01-01T03:00:00Z", "merged_at": "2024-01-01T02:59:00Z"},  # guide stored
        {"number": 4, "updated_at": "2024-01-01T02:30:00Z", "merged_at": "2024-01-01T02:00:00Z"},  # missed
        {"number": 3, "updated_at": "2024-01-01T02:20:00Z", "merged_at": None},  # closed unmerged
        {"number": 2, "updated_at": "2024-01-01T02:10:00Z", "merged_at": "2023-06-01T00:00:00Z"},  # merged long ago
        {"number": 1, "updated_at": "2023-12-31T00:00:00Z", "merged_at": "2023-12-31T00:00:00Z"},  # before the window
        {"number": 0, "updated_at": "2024-01-01T02:00:00Z", "merged_at": "2024-01-01T02:00:00Z"},  # not reached
    ], "https://api/next")
    repos = [{"full_name": "o/r", "private": False}, {"full_name": "o/old", "archived": True}, "junk"]
    client = FakeClient({"/repos/o/r/pulls?": page}, repos=repos)
    since = 1704070800.0  # 2024-01-01T01:00:00Z
    monkeypatch.setattr(reconcile, "clock", lambda: since + 3 * 3600)
    ctx = job_context(store, "prguide.reconcile", None, {"since": since, "interval": 3600}, client=client,
                      guides=FakeGuides({("o/r", 5)}))
    await reconcile.handle_reconcile(ctx.job, ctx)
    store.complete(ctx.job.id)
    assert ctx.outcome == "queued_1" and ctx.fields["repositories"] == 1
    assert client.asked == ["/repos/o/r/pulls?state=closed&sort=updated&direction=desc&per_page=100"]
    (job,) = queued(store)
    assert (job.event, job.action, job.key, job.delivery_id) == ("pull_request", "closed", "o/r#4", "reconcile:o/r#4")
    assert job.data["pull_request"]["merged"] is True and job.data["repository"]["full_name"] == "o/r"
    assert reconcile._epoch("not a date") is None and reconcile._epoch(None) is None


# ----- pacing per installation ----------------------------------------------------------


def merged_page(*numbers: int) -> Page:
    return Page([{"number": n, "merged_at": "2024-01-01T00:00:00Z"} for n in numbers], None)


def page_job(repository: str, run: str, limit: int = 10) -> dict:
    return {"repository": repository, "private": False, "limit": limit, "run": run, "page": 1, "found": 0, "comments": False}


def due_times(store) -> dict[str, float]:
    return dict(store.conn.execute("SELECT delivery_id, not_before FROM jobs WHERE state = 'queued'").fetchall())


async def test_runs_of_one_installation_share_its_schedule_instead_of_each_pacing_itself(store):
    limits = RateLimits()  # what every run and replica of the installation shares (the database in production)
    client = FakeClient({"/repos/o/a/pulls?": merged_page(3, 2, 1), "/repos/o/b/pulls?": merged_page(9, 8)})
    for repository, run in (("o/a", "run-a"), ("o/b", "run-b")):  # an installation event, then a command
        ctx = job_context(store, "prguide.backfill", "page", page_job(repository, run), client=client, limits=limits)
        await backfill.handle_backfill(ctx.job, ctx)
        store.complete(ctx.job.id)
    due = due_times(store)
    slots = sorted(due[f"run-{r}:{n}"] for r, n in (("a", 3), ("a", 2), ("a", 1), ("b", 9), ("b", 8)))
    spacing = backfill.pull_spacing(None, 0.0)
    # Five consecutive slots of the installation, not two runs of slots side by side.
    assert [round(b - a, 1) for a, b in zip(slots, slots[1:])] == [round(spacing, 1)] * 4
    assert due["run-b:9"] > due["run-a:1"]


def test_pull_spacing_follows_githubs_rate_limit_headers():
    hour = 3600.0
    assert backfill.pull_spacing(None, 0.0) == pytest.approx(3 * hour / (0.8 * 5000))  # 2.7 s: 4,000 requests an hour
    assert backfill.pull_spacing(Budget(15000, 15000, hour), 0.0) == pytest.approx(0.9)  # a larger limit, a faster pace
    # 1,500 left for the next 30 minutes, 1,000 of them kept for live work: 500 spread over 1,800 s.
    assert backfill.pull_spacing(Budget(5000, 1500, 1800.0), 0.0) == pytest.approx(3 * 1800 / 500)
    assert backfill.pull_spacing(Budget(5000, 1500, 1800.0), 1800.0) == pytest.approx(2.7)  # that window is over


async def test_a_lane_job_waits_while_the_installation_is_booked_far_ahead_and_sends_nothing(store):
    from bot.app.errors import RateLimited

    limits = RateLimits(clock=lambda: 1000.0)
    await limits.book(1, 1000, 2.7)  # another run of the installation: 2,700 s of slots
    client = FakeClient()
    ctx = job_context(store, "prguide.backfill", "start", {"repository": "o/r", "run": "r"}, client=client, limits=limits)
    with pytest.raises(RateLimited) as held:
        await backfill.handle_backfill(ctx.job, ctx)
    assert held.value.delay == pytest.approx(2700 - backfill.HORIZON_S)
    assert client.calls == 0 and client.reserve == pytest.approx(0.2)


async def test_a_rate_limited_pull_books_a_slot_of_its_own_after_the_live_jobs_held_back_with_it(store, monkeypatch):
    from bot.app.errors import RateLimited
    from bot.app.workers import rate_limit_spread

    async def limited(*args, **kwargs):
        raise RateLimited("GitHub resets in 1000s", 1000.0)

    monkeypatch.setattr(backfill, "_build", limited)
    limits = RateLimits(clock=lambda: 5000.0)
    delays = []
    for number in (4, 5):
        data = {"repository": "o/r", "pull": {"number": number}, "limit": 10}
        ctx = job_context(store, "prguide.backfill", "pull", data, client=FakeClient(), limits=limits)
        with pytest.raises(RateLimited) as held:
            await backfill.handle_backfill(ctx.job, ctx)
        assert held.value.spread is False  # its slot is its own: no jitter on top
        delays.append(held.value.delay)
    # After the reset and the minute live jobs come back in, one slot apart.
    assert delays == [pytest.approx(1000 + rate_limit_spread(1000)), pytest.approx(1000 + rate_limit_spread(1000) + 2.7)]


# ----- installations on more than 100 repositories -----------------------------------


def repositories(*numbers: int) -> list[dict]:
    return [{"full_name": f"o/r{n}", "private": n % 2 == 0, "default_branch": "main"} for n in numbers]


async def test_an_installation_on_150_repositories_backfills_100_now_and_the_rest_from_the_paged_list(store, caplog):
    payload = {"installation": {"id": 1}, "repositories": repositories(*range(150))}
    ctx = job_context(store, "installation", "created", payload)
    with caplog.at_level("INFO", logger="prguide.jobs"):
        await backfill.handle_installed(ctx.job, ctx)
    store.complete(ctx.job.id)
    assert ctx.outcome == "queued_100" and ctx.fields["deferred"] == 50
    (line,) = [r.getMessage() for r in caplog.records if "later" in r.getMessage()]
    assert "50 repositories are backfilled later" in line and "o/r100" in line and "o/r149" in line and "o/r99," not in line
    jobs = queued(store)
    assert [j.action for j in jobs] == ["start"] * 100 + ["repositories"]  # the list waits its turn on the lane
    assert {j.key for j in jobs} == {"backfill:installation:1"}
    listing = jobs[-1]
    assert (listing.delivery_id, listing.data["page"], listing.data["only"]) == (f"backfill:{ctx.job.delivery_id}:repositories:1", 1, None)

    # The list, 100 a page, the next page from GitHub's Link header.
    first = Page(repositories(*range(100)), "https://api.github.com/installation/repositories?per_page=100&page=2")
    client = FakeClient({"/installation/repositories?per_page=100": first})
    ctx = job_context(store, "prguide.backfill", "repositories", listing.data, client=client)
    await backfill.handle_backfill(ctx.job, ctx)
    store.complete(ctx.job.id)
    assert ctx.outcome == "queued_0"  # those were queued from the event already
    (page2,) = queued(store)
    assert page2.data["next"] == "https://api.github.com/installation/repositories?per_page=100&page=2"
    client = FakeClient({"https://api.github.com/installation/repositories?per_page=100&page=2": Page(repositories(*range(100, 150)), None)})
    ctx = job_context(store, "prguide.backfill", "repositories", page2.data, client=client)
    await backfill.handle_backfill(ctx.job, ctx)
    store.complete(ctx.job.id)
    assert ctx.outcome == "queued_50"
    later = queued(store)
    assert [j.data["repository"] for j in later] == [f"o/r{n}" for n in range(100, 150)]  # and no further page
    assert (later[0].data["private"], later[0].data["default_branch"], later[0].key) == (True, "main", "backfill:installation:1")


async def test_repositories_added_beyond_100_are_listed_later_and_only_they_are_backfilled(store):
    payload = {"installation": {"id": 1}, "repositories_added": repositories(*range(120))}
    ctx = job_context(store, "installation_repositories", "added", payload)
    await backfill.handle_installed(ctx.job, ctx)
    store.complete(ctx.job.id)
    listing = queued(store)[-1]
    assert listing.data["only"] == [f"o/r{n}" for n in range(100, 120)]
    # The installation also holds repositories that were not added: they are left alone.
    client = FakeClient({"/installation/repositories": Page(repositories(*range(90, 130)), None)})
    ctx = job_context(store, "prguide.backfill", "repositories", listing.data, client=client)
    await backfill.handle_backfill(ctx.job, ctx)
    assert ctx.outcome == "queued_20"


async def test_an_installation_created_without_repositories_lists_its_first_page_now_and_the_rest_on_its_lane(store):
    # GitHub leaves "repositories" out for an installation on all of an account's repositories.
    next_url = "https://api.github.com/installation/repositories?per_page=100&page=2"
    client = FakeClient({"/installation/repositories?per_page=100": Page(repositories(*range(100)), next_url)})
    ctx = job_context(store, "installation", "created", {"installation": {"id": 1}}, client=client)
    await backfill.handle_installed(ctx.job, ctx)
    store.complete(ctx.job.id)
    assert ctx.outcome == "queued_100" and ctx.fields["listed"] is True
    jobs = queued(store)
    assert [j.action for j in jobs] == ["start"] * 100 + ["repositories"]
    listing = jobs[-1]
    assert (listing.key, listing.data["page"], listing.data["next"], listing.data["only"]) == (
        "backfill:installation:1", 2, next_url, None,
    )


async def test_a_pull_request_whose_guide_is_stored_takes_no_slot(store):
    client = FakeClient({"/repos/o/r/pulls?": merged_page(9, 8, 7)})
    ctx = job_context(store, "prguide.backfill", "page", page_job("o/r", "run"), client=client, guides=FakeGuides({("o/r", 8)}))
    await backfill.handle_backfill(ctx.job, ctx)
    store.complete(ctx.job.id)
    due = due_times(store)
    assert sorted(due) == ["run:7", "run:9"]
    assert due["run:7"] - due["run:9"] == pytest.approx(backfill.pull_spacing(None, 0.0), abs=0.05)  # the next slot
    progress = ctx.services.progress["backfill"]["o/r"]
    assert (progress["queued"], progress["skipped"], progress["pending"]) == (3, 1, 2)
    assert [j.data["index"] for j in queued(store)] == [1, 3]


async def test_a_long_backfill_refreshes_the_databases_statistics_every_so_many_guides(store, monkeypatch):
    """Hundreds of guides arriving faster than autovacuum looks leave PostgreSQL planning the tag
    view's filtered pages for the store it had; a backfill runs ANALYZE every so many guides it built."""

    async def built(job, ctx, data, repository, number, pull):
        ctx.outcome = "stored"

    monkeypatch.setattr(backfill, "_build", built)
    guides = FakeGuides()
    every = backfill.ANALYZE_EVERY
    progress = None
    for number in range(1, every * 2 + 2):
        data = {"repository": "o/r", "pull": {"number": number}, "limit": 1000, "index": number}
        ctx = job_context(store, "prguide.backfill", "pull", data, client=FakeClient(), guides=guides)
        if progress is not None:
            ctx.services.progress.update(progress)
        await backfill.handle_backfill(ctx.job, ctx)
        store.complete(ctx.job.id)
        progress = ctx.services.progress
        if number in (every - 1, every):
            assert guides.analyzed == (number == every)
    assert guides.analyzed == 2
