"""History from day one: store guides for a repository's last merged pull requests.

Started when the app is installed (``installation.created``), when repositories are
added to an installation (``installation_repositories.added``) or by ``/prguide
backfill [N]`` (the commands feature queues a :data:`START` job). The work is a
chain of jobs of prguide's own (event :data:`EVENT`), so it survives a restart and
is paced by the worker pool:

- ``start`` (key ``backfill:{repo}``): reads ``.github/prguide.yml`` (``backfill: N``,
  default 100, at most :data:`~bot.engine.repo_config.MAX_BACKFILL`; ``backfill_comments``),
  then does the first page.
- ``page`` (same key): one page of "List pull requests" (``state=closed``,
  ``sort=updated``, ``direction=desc``, 100 per page), keeping merged ones; queues a
  ``pull`` job per merged pull request still wanted and the next page while fewer
  than N were found.
- ``pull`` (key ``owner/repo#N``, the key of the pull request's webhook deliveries,
  so a merge or command on it waits its turn): reads files, reviews and review
  comments (3 calls for a PR under 100 files; the pull request object comes from
  the list), builds the guide and stores it for the tag view. No comment unless
  ``backfill_comments: true``. A pull request whose guide is stored already is
  skipped.

Each job's delivery id is derived from the run (the delivery or command that
started it), the page or the pull request number: a restart re-runs the job that
was in flight, and re-queuing what it queued before is a no-op.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlencode

from bot.app.errors import GiveUp
from bot.app.fetch import fetch_snapshot, split_repository
from bot.app.jobstore import Job
from bot.app.offload import run_store
from bot.app.publish import find_guide_comment, publish_guide
from bot.app.routing import JobContext, Route
from bot.engine.build import build_guide
from bot.feature_support import BACKFILL_EVENT, BACKFILL_START, config_notices, queue_backfill, read_repo_config, reviser, save_guide
from bot.engine.repo_config import DEFAULT_BACKFILL, MAX_BACKFILL

log = logging.getLogger("prguide.jobs")

#: The internal event of every backfill job, and its actions.
EVENT = BACKFILL_EVENT
START, PAGE, PULL = BACKFILL_START, "page", "pull"
#: Pull requests per page of "List pull requests" (GitHub's maximum).
PER_PAGE = 100
#: Pages read at most per run: a repository whose recent closed pull requests were
#: mostly closed without merging stops here rather than paging through its history.
MAX_PAGES = 3 * MAX_BACKFILL // PER_PAGE
#: Repositories of one installation event backfilled at most (an "all repositories"
#: installation of a large organisation is backfilled as its repositories are used).
MAX_REPOSITORIES = 100
#: Seconds between two ``pull`` jobs becoming due: about 3 reads each, so a backfill
#: sends about 4,300 requests an hour, under GitHub's primary limit of 5,000 an hour per
#: installation ("Rate limits for the REST API"), and webhook jobs queued meanwhile are
#: claimed in between. The repositories of one installation event start one after the
#: other (a default-sized run apart); should GitHub still say the limit is reached, the
#: client waits for its reset.
PACE_S = 2.5


def run_key(repository: str) -> str:
    """The job key of a repository's ``start``/``page`` jobs (as :func:`bot.feature_support.queue_backfill`)."""
    return f"backfill:{repository}"


_COUNTERS = ("target", "queued", "built", "skipped", "pending", "api_calls", "pages")


def _progress(ctx: JobContext, repository: str) -> dict[str, Any]:
    """This process's progress entry for ``repository`` (shown by ``/healthz``), created empty."""
    board = ctx.services.progress.setdefault("backfill", {})
    return board.setdefault(repository, dict.fromkeys(_COUNTERS, 0))


def _count(progress: dict[str, Any], counter: str, by: int = 1) -> None:
    progress[counter] = progress.get(counter, 0) + by
    progress["pending"] = max(0, progress.get("queued", 0) - progress.get("built", 0) - progress.get("skipped", 0))


async def handle_installed(job: Job, ctx: JobContext) -> None:
    """``installation.created`` / ``installation_repositories.added``: queue a backfill per repository.

    Reads ``repositories`` (or ``repositories_added``) of the payload: ``full_name``
    and ``private`` ("Webhook events and payloads", installation). GitHub may leave
    ``repositories`` out of ``installation.created`` (an installation on all of an
    account's repositories): they are then listed with "List repositories accessible
    to the app installation" (``GET /installation/repositories``, one call per 100),
    at most :data:`MAX_REPOSITORIES`; otherwise no API call. Sets the outcome to how
    many runs were queued.
    """
    payload = job.data if isinstance(job.data, Mapping) else {}
    field_name = "repositories_added" if job.event == "installation_repositories" else "repositories"
    repos = payload.get(field_name)
    if not isinstance(repos, list) and job.event == "installation":
        repos = await _installation_repositories(ctx)
        ctx.fields["listed"] = True
    names = [r for r in repos or [] if isinstance(r, Mapping) and isinstance(r.get("full_name"), str)][:MAX_REPOSITORIES]
    queued = 0
    for index, repo in enumerate(names):
        name = repo["full_name"]
        run = f"backfill:{job.delivery_id}:{name}"
        queued += await queue_backfill(
            ctx, name, private=bool(repo.get("private", True)), limit=None, run=run, delay=index * DEFAULT_BACKFILL * PACE_S
        )
    ctx.fields["repositories"] = [r["full_name"] for r in names]
    ctx.outcome = f"queued_{queued}"


async def _installation_repositories(ctx: JobContext) -> list[Any]:
    """The first :data:`MAX_REPOSITORIES` repositories of the job's installation, as GitHub lists them."""
    found: list[Any] = []
    async for repo in ctx.client.getiter("/installation/repositories?per_page=100", iterable_key="repositories"):
        found.append(repo)
        if len(found) >= MAX_REPOSITORIES:
            break
    return found


async def handle_backfill(job: Job, ctx: JobContext) -> None:
    """One backfill job: :data:`START`, :data:`PAGE` or :data:`PULL` (see the module)."""
    data = job.data
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


async def _start(job: Job, ctx: JobContext, data: Mapping[str, Any]) -> None:
    repository = data["repository"]
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
    owner, name = split_repository(repository)
    query = urlencode({"state": "closed", "sort": "updated", "direction": "desc", "per_page": PER_PAGE, "page": page})
    listed = await ctx.client.get_page(f"/repos/{owner}/{name}/pulls?{query}")
    progress = _progress(ctx, repository)
    progress["target"] = limit
    _count(progress, "pages")
    run = data["run"]
    due = 0
    for pull in listed.items:
        if found >= limit:
            break
        if not isinstance(pull, Mapping) or not pull.get("merged_at") or not isinstance(pull.get("number"), int):
            continue
        found += 1
        number = pull["number"]
        payload = {
            "repository": repository, "private": data.get("private", True), "comments": bool(data.get("comments")),
            "run": run, "index": found, "limit": limit, "pull": dict(pull, merged=True),
        }
        if await ctx.enqueue(
            EVENT, PULL, payload, key=f"{repository}#{number}", delivery_id=f"{run}:{number}",
            installation_id=job.installation_id, delay=due * PACE_S,
        ):
            _count(progress, "queued")
        due += 1
    ctx.fields.update(page=page, found=found)
    if found < limit and listed.next_url and page < MAX_PAGES:
        await ctx.enqueue(
            EVENT, PAGE, {**data, "page": page + 1, "found": found}, key=run_key(repository),
            delivery_id=f"{run}:page:{page + 1}", installation_id=job.installation_id, delay=due * PACE_S,
        )
    ctx.outcome = "listed"
    _count(progress, "api_calls", ctx.api_calls)


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
        await _build(job, ctx, data, repository, number, pull)
        _count(progress, "skipped" if ctx.outcome == "skipped" else "built")
    finally:
        _count(progress, "api_calls", ctx.api_calls)
        services.metrics.backfill_api_calls.inc(ctx.api_calls)
        services.metrics.backfill_pulls.labels(outcome=ctx.outcome).inc()


async def _build(job: Job, ctx: JobContext, data: Mapping[str, Any], repository: str, number: int, pull: Mapping[str, Any]) -> None:
    services, client = ctx.services, ctx.client
    snapshot, config = await asyncio.gather(
        fetch_snapshot(client, repository, number, pull=pull),
        read_repo_config(client, repository, None, missing=services.missing_configs),
    )
    rules, problems = services.rules_for(config)
    notices = config_notices(config.source, config.problems + problems)
    build = functools.partial(build_guide, snapshot, rules, lang=config.lang or services.settings.lang)
    guide = await asyncio.to_thread(build, notices=notices)
    if guide.skipped:
        ctx.outcome = "skipped"
        return
    ctx.outcome = "stored"
    if data.get("comments"):
        bot_login = await services.auth.bot_login()
        existing = await find_guide_comment(client, repository, number, bot_login=bot_login)
        result = await publish_guide(
            client, repository, number, guide, bot_login=bot_login, current_labels=snapshot.labels, existing=existing,
            revise=reviser(build, notices),
        )
        ctx.outcome = result.comment
    if services.guides is not None:
        await save_guide(services.guides, guide, private=bool(data.get("private", True)))


#: ``installation.created`` and ``installation_repositories.added``: about a whole installation.
INSTALLED = Route("installation", ("created",), handle_installed, pull_request_only=False)
REPOSITORIES_ADDED = Route("installation_repositories", ("added",), handle_installed, pull_request_only=False)
#: The backfill's own jobs.
BACKFILL = Route(EVENT, (), handle_backfill, internal=True)

#: This feature's routes, composed in :mod:`bot.features`.
ROUTES = (INSTALLED, REPOSITORIES_ADDED, BACKFILL)
