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

The window starts where the last *completed* pass of the installation started (less
:data:`OVERLAP` intervals), kept in the job store's checkpoint
``reconcile:{installation}``, so a night or a weekend without passes is covered by the
next one; never more than ``PRGUIDE_RECONCILE_MAX_LOOKBACK`` seconds back. It never
reaches before the installation was created ("Get an installation for the
authenticated app": ``created_at``, asked once and kept in the checkpoint): merges from
before are backfill's, which stores their guides without commenting (``backfill: 0``
asks for none). Likewise a repository the last completed pass did not list (added to
the installation since) is looked at only from this pass on. Without a checkpoint
(the first pass) the window starts at the installation. Repositories are known by
their id, which GitHub keeps when a repository is renamed or transferred: a repository
renamed between two passes keeps its window.

A pass reads at most :data:`MAX_PAGES` pages of a repository. When its window holds
more (a long outage of a busy repository), the repository's checkpoint entry keeps a
*backlog*: the start of the window not yet covered and the page ("List pull
requests"' ``Link: rel="next"``) to go on from. Later passes read the newest pages
first, as always, then go on with the backlog with the pages left, until it is
covered: no merge of the window is left behind, however long the outage was (within
``PRGUIDE_RECONCILE_MAX_LOOKBACK``). The list only ever gains pull requests at its
head (one updated or closed since moves there), so the page to go on from shows the
rest of the backlog, behind some pull requests read already.

The job's delivery id is ``reconcile:{repo}#{number}``: a pull request is queued by
reconcile once, however many passes see it.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any
from urllib.parse import urlencode

from bot.app.errors import GiveUp
from bot.app.fetch import split_repository
from bot.app.github import Forbidden, GitHubError, NotFound
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
#: The window reaches this many intervals before the last completed pass started, so
#: merges during that pass, and clocks (GitHub's, this server's) that disagree, are covered.
OVERLAP = 1
#: Unix seconds now: when a pass starts (tests replace it), plus the app's learnt offset to
#: GitHub's clock (:attr:`bot.app.auth.AppAuth.clock_offset`). GitHub's timestamps are
#: compared with it: :data:`OVERLAP` absorbs a clock that is off by less than an interval.
clock: Callable[[], float] = time.time


def checkpoint_name(installation_id: int | None) -> str:
    """The job store checkpoint of an installation's reconcile passes.

    Its value: ``{"covered_from": Unix s, "installed_at": Unix s or None,
    "repository_ids": {key: {"name": "owner/name", "since": Unix s or None,
    "backlog"?: {"from": Unix s, "next": URL}}}}``: where the last completed pass's
    window could end (when it started), when the installation was created, and the
    repositories it looked at, keyed by repository id (:func:`repository_key`), each
    with its lower-case name, the earliest merge time a pass may look at (when a pass
    first saw it; None: since the installation) and, when its window did not fit in
    the pages a pass reads, what is left of it (see the module).

    A checkpoint of an older prguide keys repositories by name instead (``"repositories":
    {lower-case "owner/name": Unix s or None}``); a pass reads it by the names its
    repositories have now and writes it in this shape.
    """
    return f"reconcile:{installation_id}"


def repository_key(repo: Mapping[str, Any]) -> str:
    """A repository's key in the checkpoint: its ``id`` (GitHub keeps it across renames and
    transfers), or its lower-case ``full_name`` when the listing gave no id."""
    rid = repo.get("id")
    if isinstance(rid, int) and not isinstance(rid, bool):
        return str(rid)
    return str(repo.get("full_name", "")).lower()


def _previous(record: Mapping[str, Any], repo: Mapping[str, Any], started: float) -> dict[str, Any] | None:
    """The last completed pass's entry for ``repo`` (see :func:`checkpoint_name`): a new
    repository's starts at ``started``; None when there was no pass before."""
    entries = record.get("repository_ids")
    if isinstance(entries, Mapping):
        entry = entries.get(repository_key(repo))
        return dict(entry) if isinstance(entry, Mapping) else {"since": started}
    legacy = record.get("repositories")  # an older prguide's, keyed by name
    if isinstance(legacy, Mapping):
        return {"since": legacy.get(repo["full_name"].lower(), started)}
    return None


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

    Reads ``since`` and ``interval`` from the payload (see :class:`Schedule`) and the
    installation's checkpoint (:func:`checkpoint_name`) from the job store; the window
    is described in the module text. The checkpoint is written only when the pass
    completes. Without the tag view's store there is no record of which guides exist,
    and the pass does nothing. A repository whose pull requests GitHub will not list (403,
    404, another 4xx) is logged and its window kept as a backlog for a later pass; the
    others go on. Raises :class:`GiveUp` for a payload without ``since`` and when GitHub
    no longer knows the installation.
    """
    data = job.data if isinstance(job.data, Mapping) else {}
    services = ctx.services
    if services.guides is None:
        ctx.outcome = "no_store"
        return
    if not isinstance(data.get("since"), (int, float)):
        raise GiveUp(f"{job.delivery_id}: reconcile payload without 'since'")
    # GitHub's time, to compare with its updated_at and merged_at: the server's clock plus what
    # a refused JWT taught the app of the difference (0 while GitHub took its clock).
    offset = getattr(services.auth, "clock_offset", 0)
    started = clock() + (float(offset) if isinstance(offset, (int, float)) else 0.0)
    every = float(data.get("interval") or interval(services.settings))
    store, name = services.store, checkpoint_name(job.installation_id)
    record = await run_store(store, store.read_checkpoint, name) if store is not None else None
    record = record if isinstance(record, Mapping) else {}
    installed = record.get("installed_at")
    if not isinstance(installed, (int, float)):
        installed = await _installed_at(job, ctx)
    covered = record.get("covered_from")
    if isinstance(covered, (int, float)):
        start = float(covered) - OVERLAP * every
    elif installed is not None:
        start = float(installed)  # the first pass: everything since the installation
    else:  # GitHub could not say when: the previous period only, as a late webhook would be
        start = float(data["since"]) - OVERLAP * every
    lookback = float(getattr(services.settings, "reconcile_max_lookback", 0) or 0)
    if lookback > 0:
        start = max(start, started - lookback)
    if installed is not None:
        start = max(start, float(installed))
    bound = max(started - lookback if lookback > 0 else -math.inf, float(installed) if installed is not None else -math.inf)
    repos = await ctx.client.getlist("/installation/repositories?per_page=100", iterable_key="repositories")
    queued = 0
    entries: dict[str, dict[str, Any]] = {}
    for repo in repos[:MAX_REPOSITORIES]:
        if not isinstance(repo, Mapping) or not isinstance(repo.get("full_name"), str) or repo.get("archived"):
            continue
        # A repository new to the installation since the last completed pass: its earlier
        # merges happened before the app could see it, in this pass and every later one.
        entry = _previous(record, repo, started) or {}
        floor = entry.get("since") if isinstance(entry.get("since"), (int, float)) else None
        window = max(start, floor or start)
        try:
            done, entry = await _reconcile_repository(job, ctx, repo, window, entry, max(bound, floor or bound))
        except (NotFound, Forbidden, GitHubError) as exc:
            # One repository GitHub will not list (disabled, blocked, deleted meanwhile) must not
            # stop the others' pass; its window waits as a backlog for a later pass.
            log.warning(
                "%s: its pull requests could not be listed (%s); later passes try again", repo["full_name"], exc,
                extra={"installation": job.installation_id, "repository": repo["full_name"]},
            )
            done, entry = 0, _held_back(entry, window, repo)
        queued += done
        entries[repository_key(repo)] = {**entry, "name": repo["full_name"].lower(), "since": floor}
    if store is not None:
        value = {"covered_from": started, "installed_at": installed, "repository_ids": entries}
        await run_store(store, store.write_checkpoint, name, value)
    behind = sorted(e["name"] for e in entries.values() if "backlog" in e)
    if behind:
        log.info(
            "installation %s: %d repositories had more merges than one pass reads; later passes go on: %s",
            job.installation_id, len(behind), ", ".join(behind[:20]),
            extra={"installation": job.installation_id, "behind": len(behind)},
        )
    ctx.fields.update(repositories=len(entries), since=start, installed_at=installed, behind=len(behind))
    services.metrics.reconciled.inc(queued)
    ctx.outcome = f"queued_{queued}"


async def _installed_at(job: Job, ctx: JobContext) -> float | None:
    """When GitHub says the job's installation was created (Unix s), or None when it cannot say."""
    lookup = getattr(ctx.services.auth, "installation", None)
    if lookup is None or job.installation_id is None:
        return None
    try:
        data = await lookup(job.installation_id)
    except NotFound as exc:
        raise GiveUp(f"installation {job.installation_id} is gone: {exc}") from exc
    return _epoch(data.get("created_at")) if isinstance(data, Mapping) else None


def _first_page(repo: Mapping[str, Any]) -> str:
    """The first page of a repository's closed pull requests, most recently updated first."""
    owner, name = split_repository(repo["full_name"])
    return f"/repos/{owner}/{name}/pulls?" + urlencode({"state": "closed", "sort": "updated", "direction": "desc", "per_page": 100})


def _held_back(entry: Mapping[str, Any], start: float, repo: Mapping[str, Any]) -> dict[str, Any]:
    """The checkpoint entry of a repository whose pass failed: its window from ``start`` (and
    an earlier backlog's) is a backlog read from the first page by a later pass."""
    backlog = entry.get("backlog") if isinstance(entry.get("backlog"), Mapping) else {}
    earlier = backlog.get("from")
    since = min(start, float(earlier)) if isinstance(earlier, (int, float)) else start
    return {"backlog": {"from": since, "next": _first_page(repo)}}


async def _reconcile_repository(
    job: Job, ctx: JobContext, repo: Mapping[str, Any], start: float, entry: Mapping[str, Any], bound: float
) -> tuple[int, dict[str, Any]]:
    """Reconcile one repository: its window from ``start``, then its backlog (see the module).

    ``entry``: the repository's checkpoint entry from the last completed pass; ``bound``:
    the earliest merge time any window may reach (look-back, installation, the
    repository's joining). Returns how many pull requests were queued and the entry's
    backlog for the next pass (``{"backlog": ...}`` or ``{}``), at most :data:`MAX_PAGES`
    pages read in all.
    """
    queued, pages, rest = await _read_pages(job, ctx, repo, _first_page(repo), start, MAX_PAGES)
    backlog = entry.get("backlog") if isinstance(entry.get("backlog"), Mapping) else None
    earlier = backlog.get("from") if backlog is not None else None
    earlier = max(float(earlier), bound) if isinstance(earlier, (int, float)) else None
    if rest is not None:  # this window did not fit: go on from here, down to the earliest start left
        return queued, {"backlog": {"from": min(start, earlier) if earlier is not None else start, "next": rest}}
    if earlier is None or not isinstance(backlog.get("next"), str) or earlier >= start:
        return queued, {}
    more, _, rest = await _read_pages(job, ctx, repo, backlog["next"], earlier, MAX_PAGES - pages)
    return queued + more, {"backlog": {"from": earlier, "next": rest}} if rest is not None else {}


async def _read_pages(
    job: Job, ctx: JobContext, repo: Mapping[str, Any], url: str | None, start: float, pages: int
) -> tuple[int, int, str | None]:
    """Queue the merged pull requests without a guide on at most ``pages`` pages from ``url``,
    down to the first one updated before ``start`` (Unix s).

    Returns how many were queued, how many pages were read, and the next page's URL when
    the pages ran out before the window did (None: the window is covered).
    """
    repository = repo["full_name"]
    guides = ctx.services.guides
    queued = read = 0
    while url is not None and read < pages:
        page = await ctx.client.get_page(url)
        read += 1
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
    return queued, read, url


#: The reconcile pass's jobs.
RECONCILE = Route(EVENT, (), handle_reconcile, internal=True)
#: One pass per installation per interval.
RECONCILE_SCHEDULE = Schedule("reconcile", EVENT, None, interval)

#: This feature's routes and schedules, composed in :mod:`bot.features`.
ROUTES = (RECONCILE,)
SCHEDULES = (RECONCILE_SCHEDULE,)
