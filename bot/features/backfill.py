"""History from day one: store guides for a repository's last merged pull requests.

Started when the app is installed (``installation.created``), when repositories are
added to an installation (``installation_repositories.added``) or by ``/prguide
backfill [N]`` (the commands feature queues a :data:`START` job). The work is a
chain of background jobs of prguide's own (event :data:`EVENT`, priority
:data:`~bot.app.jobstore.PRIORITY_BACKGROUND`: live jobs due at the same time go
first), so it survives a restart:

- ``start`` (key ``backfill:installation:{id}``, the installation's *lane*, where its
  runs take turns): reads ``.github/prguide.yml`` (``backfill: N``, default 100, at
  most :data:`~bot.engine.repo_config.MAX_BACKFILL`; ``backfill_comments``), then
  does the first page.
- ``page`` (the lane): one page of "List pull requests" (``state=closed``,
  ``sort=updated``, ``direction=desc``, 100 per page), keeping merged ones; books
  a slot per merged pull request still wanted whose guide is not stored yet and
  queues its ``pull`` job for it, and the next page while fewer than N were found.
- ``pull`` (key ``owner/repo#N``, the key of the pull request's webhook deliveries,
  so a merge or command on it waits its turn): reads files, reviews and review
  comments (3 calls for a PR under 100 files; the pull request object comes from
  the list), builds the guide and stores it for the tag view. No comment unless
  ``backfill_comments: true``. A pull request whose guide is stored already is
  skipped.
- ``repositories`` (the lane): one page of "List repositories accessible to the app
  installation" (``GET /installation/repositories``, 100 per page, then its ``Link:
  rel="next"``), queuing a run for each repository an installation event had more
  of than :data:`MAX_REPOSITORIES`.

Pacing is per installation, whichever runs, commands or replicas queued the work
("Rate limits for the REST API"): every ``pull`` job is booked a slot on the
installation's one schedule, kept in the database
(:meth:`bot.app.ratelimit.RateLimits.book`), spaced by :func:`pull_spacing` from
GitHub's own ``x-ratelimit-*`` headers so that a backfill spends at most
:data:`SHARE` of the installation's limit. Lane jobs wait (without spending an
attempt) while the installation's slots are booked more than :data:`HORIZON_S`
ahead. A backfill job's client leaves the rest of the limit to live work: while
less is left, or GitHub refused, the job is held back until the reset
(:class:`~bot.app.errors.RateLimited`) and a ``pull`` job books a new slot after it.

Each job's delivery id is derived from the run (the delivery or command that
started it), the page or the pull request number: a restart re-runs the job that
was in flight, and re-queuing what it queued before is a no-op.

When the app is uninstalled (``installation.deleted``) or repositories are taken away
from it (``installation_repositories.removed``), the work queued for them, a backfill's
remaining jobs above all, is cancelled (:func:`handle_uninstalled`): none of it would
get a token any more. So is the installation's work when it is suspended
(``installation.suspend``): GitHub gives a suspended installation no token and sends
none of its webhooks ("Suspending a GitHub App installation"), so the work could only
fail and be parked. When it is unsuspended (``installation.unsuspend``) its
repositories are backfilled again, as on installation (:func:`handle_installed`): the
pull requests whose guides were stored before take no slot, so a backfill the
suspension cut short goes on where it stopped.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlencode

from bot.app.errors import GiveUp, RateLimited
from bot.app.fetch import fetch_snapshot, split_repository
from bot.app.jobstore import PRIORITY_BACKGROUND, Job
from bot.app.offload import run_build, run_store
from bot.app.publish import find_guide_comment, publish_guide
from bot.app.ratelimit import Budget
from bot.app.routing import JobContext, Route
from bot.app.workers import rate_limit_spread
from bot.engine.build import build_guide
from bot.feature_support import (
    BACKFILL_EVENT,
    BACKFILL_START,
    backfill_lane,
    config_notices,
    guide_page_url,
    is_private,
    queue_backfill,
    read_repo_config,
    reviser,
    save_guide,
)
from bot.engine.repo_config import MAX_BACKFILL

log = logging.getLogger("prguide.jobs")

#: The internal event of every backfill job, and its actions.
EVENT = BACKFILL_EVENT
START, PAGE, PULL, REPOSITORIES = BACKFILL_START, "page", "pull", "repositories"
#: Pull requests per page of "List pull requests" (GitHub's maximum).
PER_PAGE = 100
#: Pages read at most per run: a repository whose recent closed pull requests were
#: mostly closed without merging stops here rather than paging through its history.
MAX_PAGES = 3 * MAX_BACKFILL // PER_PAGE
#: Repositories of one installation event whose runs are queued at once; the others are
#: queued later, from the paged list of the installation's repositories (logged).
MAX_REPOSITORIES = 100
#: Requests a ``pull`` job sends (files, reviews, review comments): what its slot is for.
CALLS_PER_PULL = 3
#: Share of an installation's primary rate limit backfills may spend; the rest stays with
#: live work (a backfill sends nothing while no more than ``1 - SHARE`` of it is left).
SHARE = 0.8
#: The limit assumed until GitHub's answers say it (``x-ratelimit-limit``; 5,000 an hour
#: for an installation, "Rate limits for the REST API").
DEFAULT_LIMIT = 5000
#: Names of repositories a log line lists at most (the rest are counted).
LOGGED_NAMES = 100
#: Repositories per page of "List repositories accessible to the app installation" (its maximum).
REPOSITORIES_PER_PAGE = 100
#: Seconds of booked ``pull`` slots an installation's lane reads ahead at most: a page is
#: listed when its pull requests' turn is near, so the queue stays short and lists fresh.
HORIZON_S = 600.0


def pull_spacing(budget: Budget | None, now: float) -> float:
    """Seconds between two ``pull`` slots of one installation, from what GitHub said of its limit.

    :data:`CALLS_PER_PULL` requests per slot at :data:`SHARE` of ``x-ratelimit-limit``
    an hour (2.7 s for 5,000); slower while the window has less left above the live
    work's share than that pace would spend before ``x-ratelimit-reset``. Once none is
    left the slots start at the reset (:func:`_hold`). ``now``: Unix seconds.
    """
    limit = budget.limit if budget is not None and budget.limit else DEFAULT_LIMIT
    spacing = CALLS_PER_PULL * 3600.0 / (SHARE * limit)
    if budget is not None and budget.remaining is not None and budget.reset is not None and budget.reset > now:
        spare = budget.remaining - (1 - SHARE) * limit
        if spare > 0:
            spacing = max(spacing, CALLS_PER_PULL * (budget.reset - now) / spare)
    return spacing


def _hold(budget: Budget | None, now: float) -> float:
    """Seconds before a backfill of the installation may send a request (0: now)."""
    return budget.wait(now, reserve=1 - SHARE) if budget is not None else 0.0


#: Guides a backfill builds (in one process, per repository) between two refreshes of the
#: guide store's statistics: PostgreSQL's autovacuum analyses a table after about a tenth of
#: it changed, and minutes later; a filtered tag-view page planned on statistics from
#: before a thousand new guides can cost seconds (see :meth:`PgGuideStore.analyze`).
ANALYZE_EVERY = 500
_COUNTERS = ("target", "queued", "built", "skipped", "pending", "api_calls", "pages")


def _progress(ctx: JobContext, repository: str) -> dict[str, Any]:
    """This process's progress entry for ``repository`` (shown by ``/healthz``), created empty."""
    board = ctx.services.progress.setdefault("backfill", {})
    return board.setdefault(repository, dict.fromkeys(_COUNTERS, 0))


def _count(progress: dict[str, Any], counter: str, by: int = 1) -> None:
    progress[counter] = progress.get(counter, 0) + by
    progress["pending"] = max(0, progress.get("queued", 0) - progress.get("built", 0) - progress.get("skipped", 0))


def _spent(ctx: JobContext, progress: dict[str, Any]) -> None:
    """Count the job's GitHub requests once for ``/healthz`` (``api_calls``) and ``/metrics``
    (``prguide_backfill_api_calls_total``) alike: list pages and config reads included."""
    _count(progress, "api_calls", ctx.api_calls)
    ctx.services.metrics.backfill_api_calls.inc(ctx.api_calls)


async def handle_installed(job: Job, ctx: JobContext) -> None:
    """``installation.created`` / ``.unsuspend`` / ``installation_repositories.added``: queue a backfill per repository.

    Reads ``repositories`` (or ``repositories_added``) of the payload: ``full_name``
    and ``private`` ("Webhook events and payloads", installation). GitHub may leave
    ``repositories`` out of ``installation.created`` (an installation on all of an
    account's repositories): they are then listed with "List repositories accessible
    to the app installation" (``GET /installation/repositories``, 100 per page), the
    first page here (one API call) and the next ones by a :data:`REPOSITORIES` job;
    otherwise no API call. The first :data:`MAX_REPOSITORIES` runs are queued at once
    on the installation's lane; for more, a :data:`REPOSITORIES` job behind them lists
    the installation's repositories and queues the rest (for ``added``, only the
    repositories added), and a log line names them. Sets the outcome to how many runs
    were queued.
    """
    payload = job.data if isinstance(job.data, Mapping) else {}
    field_name = "repositories_added" if job.event == "installation_repositories" else "repositories"
    repos, next_url = payload.get(field_name), None
    if not isinstance(repos, list) and job.event == "installation":
        listed = await ctx.client.get_page(
            f"/installation/repositories?per_page={REPOSITORIES_PER_PAGE}", iterable_key="repositories"
        )
        repos, next_url = listed.items, listed.next_url
        ctx.fields["listed"] = True
    named = [r for r in repos or [] if isinstance(r, Mapping) and isinstance(r.get("full_name"), str)]
    names, deferred = named[:MAX_REPOSITORIES], [r["full_name"] for r in named[MAX_REPOSITORIES:]]
    queued = 0
    for repo in names:
        name = repo["full_name"]
        run = f"backfill:{job.delivery_id}:{name}"
        queued += await queue_backfill(ctx, name, private=is_private(repo), limit=None, run=run)
    ctx.fields["repositories"] = [r["full_name"] for r in names]
    if deferred:
        only = deferred if job.event == "installation_repositories" else None
        await _queue_listing(job, ctx, {"run": f"backfill:{job.delivery_id}", "page": 1, "only": only})
        ctx.fields["deferred"] = len(deferred)
        log.info(
            "installation %s: %d repositories are backfilled later, when the list of its repositories is paged: %s%s",
            job.installation_id, len(deferred), ", ".join(deferred[:LOGGED_NAMES]),
            f" and {len(deferred) - LOGGED_NAMES} more" if len(deferred) > LOGGED_NAMES else "",
            extra={"installation": job.installation_id, "deferred": len(deferred)},
        )
    if next_url:  # the installation's own list goes on: its next pages, all wanted
        await _queue_listing(job, ctx, {"run": f"backfill:{job.delivery_id}", "page": 2, "next": next_url, "only": None})
        ctx.fields["more_pages"] = True
    ctx.outcome = f"queued_{queued}"


async def _queue_listing(job: Job, ctx: JobContext, data: Mapping[str, Any]) -> bool:
    return await ctx.enqueue(
        EVENT, REPOSITORIES, dict(data), key=backfill_lane(job.installation_id, ""),
        delivery_id=f"{data['run']}:repositories:{data['page']}", installation_id=job.installation_id,
        priority=PRIORITY_BACKGROUND,
    )


async def handle_backfill(job: Job, ctx: JobContext) -> None:
    """One backfill job: :data:`START`, :data:`PAGE`, :data:`PULL` or :data:`REPOSITORIES` (see the module).

    Raises :class:`RateLimited` (not a failure) while the installation's budget or
    schedule holds the job back.
    """
    data = job.data
    if job.action == REPOSITORIES and isinstance(data, Mapping) and isinstance(data.get("run"), str):
        await _repositories(job, ctx, data)
        return
    if not isinstance(data, Mapping) or not isinstance(data.get("repository"), str):
        raise GiveUp(f"{job.delivery_id}: backfill payload without a repository")
    ctx.fields["repository"] = data["repository"]
    if job.action == START:
        await _start(job, ctx, data)
    elif job.action == PAGE:
        await _page(job, ctx, data)
    elif job.action == PULL:
        await _pull(job, ctx, data)
    else:
        raise GiveUp(f"{job.delivery_id}: unknown backfill step {job.action!r}")


async def _wait_for_room(job: Job, ctx: JobContext) -> None:
    """Hold a lane job back while the installation's budget is spent or its slots are booked
    more than :data:`HORIZON_S` ahead (:class:`RateLimited`, which the pool jitters)."""
    ctx.client.reserve = 1 - SHARE  # the rest of the limit stays with live work
    limits = ctx.services.rate_limits
    budget = await limits.budget(job.installation_id, fresh=True)
    now = limits.clock()
    ahead = (budget.paced_until if budget is not None else 0.0) - now - HORIZON_S
    hold = max(ahead, _hold(budget, now))
    if hold > 0:
        raise RateLimited(f"installation {job.installation_id}: backfill slots booked {hold:.0f}s too far ahead", hold)


async def _repositories(job: Job, ctx: JobContext, data: Mapping[str, Any]) -> None:
    """One page of the installation's repositories: a run for each one wanted, then the next page."""
    await _wait_for_room(job, ctx)
    page = int(data.get("page") or 1)
    url = data.get("next") or f"/installation/repositories?per_page={REPOSITORIES_PER_PAGE}"
    listed = await ctx.client.get_page(url, iterable_key="repositories")
    only = set(data["only"]) if isinstance(data.get("only"), list) else None
    queued = 0
    for repo in listed.items:
        if not isinstance(repo, Mapping) or not isinstance(repo.get("full_name"), str):
            continue
        name = repo["full_name"]
        if only is not None and name not in only:
            continue
        queued += await queue_backfill(
            ctx, name, private=is_private(repo), limit=None, run=f"{data['run']}:{name}",
            default_branch=repo.get("default_branch") if isinstance(repo.get("default_branch"), str) else None,
        )
    if listed.next_url:
        await _queue_listing(job, ctx, {**data, "page": page + 1, "next": listed.next_url})
    ctx.fields.update(page=page, listed=len(listed.items))
    ctx.outcome = f"queued_{queued}"


async def _start(job: Job, ctx: JobContext, data: Mapping[str, Any]) -> None:
    repository = data["repository"]
    await _wait_for_room(job, ctx)
    config = await read_repo_config(
        ctx.client, repository, data.get("default_branch"), missing=ctx.services.missing_configs, fresh=True
    )
    asked = data.get("limit")
    limit = asked if isinstance(asked, int) and not isinstance(asked, bool) else config.backfill
    limit = max(0, min(limit, MAX_BACKFILL))
    if limit == 0:
        ctx.outcome = "off"
        return
    progress = _progress(ctx, repository)
    progress.update(dict.fromkeys(_COUNTERS, 0), target=limit)
    run = {**data, "limit": limit, "comments": config.backfill_comments, "page": 1, "found": 0}
    await _page(job, ctx, run)


async def _page(job: Job, ctx: JobContext, data: Mapping[str, Any]) -> None:
    repository, page, found, limit = data["repository"], int(data["page"]), int(data["found"]), int(data["limit"])
    if job.action == PAGE:
        await _wait_for_room(job, ctx)
    owner, name = split_repository(repository)
    query = urlencode({"state": "closed", "sort": "updated", "direction": "desc", "per_page": PER_PAGE, "page": page})
    listed = await ctx.client.get_page(f"/repos/{owner}/{name}/pulls?{query}")
    progress = _progress(ctx, repository)
    progress["target"] = limit
    _count(progress, "pages")
    run = data["run"]
    wanted = []
    for pull in listed.items:
        if found + len(wanted) >= limit:
            break
        if isinstance(pull, Mapping) and pull.get("merged_at") and isinstance(pull.get("number"), int):
            wanted.append(pull)
    # A guide stored already (by its merge, a command, an earlier run) takes no slot.
    guides, numbers = ctx.services.guides, [pull["number"] for pull in wanted]
    stored = await run_store(guides, guides.get_many, repository, numbers) if guides is not None and numbers else {}
    _count(progress, "queued", len(stored))
    _count(progress, "skipped", len(stored))
    first = found + 1
    found += len(wanted)
    wanted = [(index, pull) for index, pull in enumerate(wanted, start=first) if pull["number"] not in stored]
    # One booking for the page: its pull requests take consecutive slots of the installation.
    limits = ctx.services.rate_limits
    budget = await limits.budget(job.installation_id)
    now = limits.clock()
    spacing = pull_spacing(budget, now)
    start = now
    if wanted:
        start = await limits.book(job.installation_id, len(wanted), spacing, not_before=now + _hold(budget, now))
    for slot, (index, pull) in enumerate(wanted):
        number = pull["number"]
        payload = {
            "repository": repository, "private": data.get("private", True), "comments": bool(data.get("comments")),
            "run": run, "index": index, "limit": limit, "pull": dict(pull, merged=True),
        }
        if await ctx.enqueue(
            EVENT, PULL, payload, key=f"{repository}#{number}", delivery_id=f"{run}:{number}",
            installation_id=job.installation_id, delay=start - now + slot * spacing, priority=PRIORITY_BACKGROUND,
        ):
            _count(progress, "queued")
    ctx.fields.update(page=page, found=found, stored=len(stored), first_slot_in_s=round(start - now, 1),
                      spacing_s=round(spacing, 2))  # fmt: skip
    if found < limit and listed.next_url and page < MAX_PAGES:
        await ctx.enqueue(
            EVENT, PAGE, {**data, "page": page + 1, "found": found}, key=backfill_lane(job.installation_id, repository),
            delivery_id=f"{run}:page:{page + 1}", installation_id=job.installation_id, priority=PRIORITY_BACKGROUND,
        )
    ctx.outcome = "listed"
    _spent(ctx, progress)


async def _pull(job: Job, ctx: JobContext, data: Mapping[str, Any]) -> None:
    services = ctx.services
    repository, pull = data["repository"], data.get("pull")
    if not isinstance(pull, Mapping) or not isinstance(pull.get("number"), int):
        raise GiveUp(f"{job.delivery_id}: backfill job without a pull request")
    number = pull["number"]
    ctx.fields.update(number=number, index=data.get("index"))
    progress = _progress(ctx, repository)
    progress["target"] = max(progress.get("target", 0), int(data.get("limit") or 0))
    guides = services.guides
    try:
        if guides is not None and await run_store(guides, guides.get, repository, number) is not None:
            # Built by its merge, a command or an earlier run: nothing to add.
            ctx.outcome = "exists"
            _count(progress, "skipped")
            return
        ctx.client.reserve = 1 - SHARE  # the rest of the limit stays with live work
        try:
            await _build(job, ctx, data, repository, number, pull)
        except RateLimited as exc:
            ctx.outcome = "rate_limited"
            raise await _rebook(job, ctx, exc) from exc
        _count(progress, "skipped" if ctx.outcome == "skipped" else "built")
        if ctx.outcome != "skipped" and guides is not None and progress["built"] % ANALYZE_EVERY == 0:
            await _analyze(guides, repository)
    finally:
        _spent(ctx, progress)
        services.metrics.backfill_pulls.labels(outcome=ctx.outcome).inc()


async def _analyze(guides: Any, repository: str) -> None:
    """Refresh the guide store's planner statistics (PostgreSQL's ``ANALYZE``); a failure is logged, never fatal."""
    try:
        await run_store(guides, guides.analyze)
    except Exception:  # noqa: BLE001 -- the guides are stored; autovacuum analyses them in time anyway
        log.exception("%s: cannot refresh the tag view's statistics after a backfill", repository)


async def _rebook(job: Job, ctx: JobContext, held: RateLimited) -> RateLimited:
    """A pull job held back by the rate limit: a new slot of its own after the wait, so the jobs
    held back together come back one slot apart rather than all at the reset, and after the
    live jobs held back by the same wait (they come back within its spread, :mod:`bot.app.workers`)."""
    limits = ctx.services.rate_limits
    budget = await limits.budget(job.installation_id)
    now = limits.clock()
    wait = held.delay or 0.0
    start = await limits.book(
        job.installation_id, 1, pull_spacing(budget, now), not_before=now + wait + rate_limit_spread(wait)
    )
    ctx.fields["slot_in_s"] = round(start - now, 1)
    return RateLimited(f"{held.reason}; booked a slot in {start - now:.0f}s", start - now, spread=False)


async def _build(job: Job, ctx: JobContext, data: Mapping[str, Any], repository: str, number: int, pull: Mapping[str, Any]) -> None:
    services, client = ctx.services, ctx.client
    snapshot, config = await asyncio.gather(
        fetch_snapshot(client, repository, number, pull=pull),
        read_repo_config(client, repository, None, missing=services.missing_configs),
    )
    rules, problems = services.rules_for(config)
    notices = config_notices(config.source, config.problems + problems)
    private = data.get("private") is not False
    build = functools.partial(
        build_guide, snapshot, rules, lang=config.lang or services.settings.lang,
        page_url=guide_page_url(services, repository, number, private=private),
    )
    guide = await run_build(build, notices=notices)
    if guide.skipped:
        ctx.outcome = "skipped"
        return
    ctx.outcome = "stored"
    if data.get("comments"):
        bot_login = await services.auth.bot_identity()
        existing = await find_guide_comment(client, repository, number, bot_login=bot_login)
        result = await publish_guide(
            client, repository, number, guide, bot_login=bot_login, current_labels=snapshot.labels, existing=existing,
            revise=reviser(build, notices),
        )
        ctx.outcome = result.comment
    if services.guides is not None:
        await save_guide(services.guides, guide, private=private)


async def handle_uninstalled(job: Job, ctx: JobContext) -> None:
    """``installation.deleted`` / ``.suspend`` / ``installation_repositories.removed``: cancel the work
    queued for what is gone.

    Uninstalled or suspended: every unfinished job of the installation (queued, running,
    parked; this one excepted). GitHub's deliveries queued after this one are kept: they came
    after it (an ``installation.unsuspend`` and the merges after it, when this job ran late).
    Repositories removed (``repositories_removed[].full_name``,
    "Webhook events and payloads", installation_repositories): the jobs of their pull
    requests (keys ``owner/repo#...``) and of their backfill runs (on the installation's
    lane, shared with other repositories: their delivery ids name the repository,
    ``backfill:{delivery}:{owner/repo}...``). A running job so
    cancelled writes nothing more (:mod:`bot.app.fencing`). A whole installation's booked
    backfill slots are forgotten as well (:meth:`bot.app.ratelimit.RateLimits.unbook`), so
    the backfill after an unsuspension starts at once. Sets the outcome to how many jobs
    were cancelled. No API call.
    """
    payload = job.data if isinstance(job.data, Mapping) else {}
    store = ctx.services.store
    if store is None or job.installation_id is None:
        ctx.outcome = "cancelled_0"
        return
    removed = job.event == "installation_repositories"
    repos = payload.get("repositories_removed" if removed else "repositories") or []
    names = [r["full_name"] for r in repos if isinstance(r, Mapping) and isinstance(r.get("full_name"), str)]
    if removed and not names:
        ctx.outcome = "cancelled_0"
        return
    what = (
        "repository removed from the installation" if removed
        else "installation suspended" if job.action == "suspend" else "app uninstalled"
    )
    cancelled = await run_store(
        store, store.cancel, job.installation_id,
        key_prefixes=[f"{n}#" for n in names] if removed else (),
        delivery_parts=names if removed else (),
        keep=job.id, deliveries_after=job.id, reason=f"{what} (delivery {job.delivery_id})",
    )
    if not removed:  # its backfill's booked slots go too: one started later does not wait for them
        await ctx.services.rate_limits.unbook(job.installation_id)
    board = ctx.services.progress.get("backfill", {})
    for name in names:
        board.pop(name, None)  # its counters would show work that will never be done
    ctx.fields["repositories"] = names
    ctx.outcome = f"cancelled_{cancelled}"


#: ``installation.created``, ``.unsuspend`` and ``installation_repositories.added``: about a whole installation.
INSTALLED = Route("installation", ("created", "unsuspend"), handle_installed, pull_request_only=False)
REPOSITORIES_ADDED = Route("installation_repositories", ("added",), handle_installed, pull_request_only=False)
#: ``installation.deleted``, ``.suspend`` and ``installation_repositories.removed``: what is gone (or
#: out of reach) gets no more work.
UNINSTALLED = Route("installation", ("deleted", "suspend"), handle_uninstalled, pull_request_only=False)
REPOSITORIES_REMOVED = Route("installation_repositories", ("removed",), handle_uninstalled, pull_request_only=False)
#: The backfill's own jobs.
BACKFILL = Route(EVENT, (), handle_backfill, internal=True)

#: This feature's routes, composed in :mod:`bot.features`.
ROUTES = (INSTALLED, REPOSITORIES_ADDED, UNINSTALLED, REPOSITORIES_REMOVED, BACKFILL)
