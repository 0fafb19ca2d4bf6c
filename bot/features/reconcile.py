"""No merge left behind: a periodic pass queues merged pull requests that have no guide.

GitHub does not redeliver a failed webhook delivery by itself. Every
``PRGUIDE_RECONCILE_INTERVAL`` seconds (default hourly) the platform queues one
:data:`EVENT` job per installation (:class:`bot.app.routing.Schedule`). The job lists
the installation's repositories ("List repositories accessible to the app
installation"), then per repository the closed pull requests most recently updated
first, until they were last updated before the pass's window; each merged one whose
guide the tag view's store lacks is queued as a ``pull_request.closed`` job, shaped
like the webhook's payload, on the pull request's own key. The guide feature then
handles it as it handles the webhook: the two serialise on the key, the later one
supersedes a still-queued earlier one, and publishing edits the one guide comment
found by its marker, so a pull request gets one comment whichever arrives first.

The job's delivery id is ``reconcile:{repo}#{number}``: a pull request is queued by
reconcile once, however many passes see it.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from datetime import datetime
from typing import Any
from urllib.parse import urlencode

from bot.app.errors import GiveUp
from bot.app.fetch import split_repository
from bot.app.jobstore import Job
from bot.app.offload import run_store
from bot.app.routing import JobContext, Route, Schedule
from bot.app.settings import Settings

log = logging.getLogger("prguide.jobs")

EVENT = "prguide.reconcile"
#: Pages of closed pull requests read per repository and pass at most.
MAX_PAGES = 5
#: Repositories of one installation looked at per pass at most.
MAX_REPOSITORIES = 1000
#: The window reaches this many intervals back from the pass's period, so a pass that
#: ran late (or a period with no pass) still overlaps the one before.
OVERLAP = 1


def _epoch(stamp: Any) -> float | None:
    """GitHub's ``2024-05-01T10:00:00Z`` as Unix seconds, or None."""
    if not isinstance(stamp, str):
        return None
    try:
        return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def interval(settings: Settings) -> float:
    """Seconds between passes: ``PRGUIDE_RECONCILE_INTERVAL`` (0: off)."""
    return float(getattr(settings, "reconcile_interval", 0) or 0)


async def handle_reconcile(job: Job, ctx: JobContext) -> None:
    """One pass over an installation's repositories; the outcome says how many pull requests were queued.

    Reads ``since`` and ``interval`` from the payload (see :class:`Schedule`); the window
    starts ``OVERLAP`` intervals before ``since``. Without the tag view's store there
    is no record of which guides exist, and the pass does nothing.
    """
    data = job.data if isinstance(job.data, Mapping) else {}
    guides = ctx.services.guides
    if guides is None:
        ctx.outcome = "no_store"
        return
    if not isinstance(data.get("since"), (int, float)):
        raise GiveUp(f"{job.delivery_id}: reconcile payload without 'since'")
    start = float(data["since"]) - OVERLAP * float(data.get("interval") or 0)
    client = ctx.client
    repos = await client.getlist("/installation/repositories?per_page=100", iterable_key="repositories")
    queued = looked = 0
    for repo in repos[:MAX_REPOSITORIES]:
        if not isinstance(repo, Mapping) or not isinstance(repo.get("full_name"), str) or repo.get("archived"):
            continue
        looked += 1
        queued += await _reconcile_repository(job, ctx, repo, start)
    ctx.fields.update(repositories=looked, since=start)
    ctx.services.metrics.reconciled.inc(queued)
    ctx.outcome = f"queued_{queued}"


async def _reconcile_repository(job: Job, ctx: JobContext, repo: Mapping[str, Any], start: float) -> int:
    repository = repo["full_name"]
    owner, name = split_repository(repository)
    guides = ctx.services.guides
    queued = 0
    url: str | None = f"/repos/{owner}/{name}/pulls?" + urlencode(
        {"state": "closed", "sort": "updated", "direction": "desc", "per_page": 100}
    )
    for _ in range(MAX_PAGES):
        if url is None:
            break
        page = await ctx.client.get_page(url)
        url = page.next_url
        merged_pulls = []
        for pull in page.items:
            if not isinstance(pull, Mapping) or not isinstance(pull.get("number"), int):
                continue
            updated = _epoch(pull.get("updated_at"))
            if updated is not None and updated < start:
                url = None  # sorted by update, newest first: the rest are older still
                break
            merged = _epoch(pull.get("merged_at"))
            if merged is not None and merged >= start:
                merged_pulls.append(pull)
        if not merged_pulls:
            continue
        # One read of the store for the page's merges, not one per pull request.
        stored = await run_store(guides, guides.get_many, repository, [pull["number"] for pull in merged_pulls])
        for pull in merged_pulls:
            number = pull["number"]
            if number in stored:
                continue
            payload = {
                "action": "closed",
                "number": number,
                "pull_request": dict(pull, merged=True),
                "repository": dict(repo),
                "installation": {"id": job.installation_id},
                "sender": {"login": "prguide-reconcile", "type": "Bot"},
            }
            if await ctx.enqueue(
                "pull_request", "closed", payload, key=f"{repository}#{number}",
                delivery_id=f"reconcile:{repository}#{number}", installation_id=job.installation_id,
            ):
                queued += 1
                log.info(
                    "%s#%s merged without a guide: queued", repository, number,
                    extra={"repository": repository, "number": number, "delivery": job.delivery_id},
                )
    return queued


#: The reconcile pass's jobs.
RECONCILE = Route(EVENT, (), handle_reconcile, internal=True)
#: One pass per installation per interval.
RECONCILE_SCHEDULE = Schedule("reconcile", EVENT, None, interval)

#: This feature's routes and schedules, composed in :mod:`bot.features`.
ROUTES = (RECONCILE,)
SCHEDULES = (RECONCILE_SCHEDULE,)
