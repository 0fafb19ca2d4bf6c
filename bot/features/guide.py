"""The merged pull request guide: on ``pull_request.closed`` with ``merged: true``, write the reading guide.

Route: :data:`MERGED_PULL_REQUEST`. The job key is the pull request, so a merge and
a ``/prguide`` command on it never publish at the same time.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Mapping
from typing import Any

from bot.app.blame import fetch_blame
from bot.app.errors import GiveUp
from bot.app.fetch import fetch_snapshot
from bot.app.jobstore import Job
from bot.app.offload import run_build, run_store
from bot.app.publish import find_guide_comment, publish_guide
from bot.app.routing import JobContext, Route
from bot.app.webhook import Delivery
from bot.engine.build import Overrides, build_guide
from bot.feature_support import (
    changes_repo_config,
    config_check_notices,
    REMEMBERED_MISSING,
    UNREAD,
    config_notices,
    coupling_history,
    guide_page_url,
    is_private,
    merge_notices,
    read_repo_config,
    reviser,
    save_guide,
    narration_wanted,
    queue_narration,
    queue_revert_note,
    with_cached_narration,
)
from bot.engine.marker import parse_marker
from bot.engine.snapshot import PullRequestSnapshot

log = logging.getLogger("prguide.jobs")


def accept_merged(delivery: Delivery) -> str | None:
    """Queue a ``pull_request.closed`` delivery only when the pull request was merged."""
    pull = delivery.payload.get("pull_request") or {}
    if pull.get("merged") is not True:
        return "closed without merging"
    return None


async def handle_pull_request_merged(job: Job, ctx: JobContext) -> None:
    """Write (or refresh) the reading guide and labels of a merged pull request.

    Reads, as the job's installation: the PR's files, reviews and review comments (the
    PR object itself comes from the ``pull_request`` webhook payload: no GET, unless
    that copy is malformed, when "Get a pull request" supplies it), the
    repository's ``.github/prguide.yml`` on its default branch (``repository.default_branch``
    in the payload; "Get repository content", a conditional request; when the pull
    request changed that file and was merged into another branch, the file at its merge
    commit too, for the check), prguide's
    earlier comment, whose marker keeps what maintainers decided with commands, and the
    blame of the lines it changes (GraphQL, :func:`bot.app.blame.fetch_blame`; optional).
    Then builds the guide with the repository's rules and publishes it
    (:func:`bot.app.publish.publish_guide`), and stores it for the tag view.

    Sets ``ctx.outcome`` to ``created``/``edited``/``unchanged`` (the comment), or
    ``skipped`` when a rule says no guide. Raises :class:`GiveUp` for a payload without
    a merged pull request, and the GitHub client's errors (``RetryLater``, ``NotFound``...).
    """
    services = ctx.services
    superseded = None
    if services.store is not None:
        superseded = await run_store(services.store, services.store.supersede, job)
    if superseded is not None:
        # A later delivery for this pull request will build the same guide from fresher
        # data; this one ends before its payload is even parsed.
        ctx.outcome = "superseded"
        ctx.fields.update(superseded_by=superseded[0], also_superseded=superseded[1])
        return
    payload = job.data
    pull = payload.get("pull_request") if isinstance(payload, Mapping) else None
    repo = payload.get("repository") if isinstance(payload, Mapping) else None
    if not isinstance(pull, Mapping) or not isinstance(repo, Mapping) or not isinstance(pull.get("number"), int):
        raise GiveUp(f"delivery {job.delivery_id}: payload has no pull request")
    repository = str(repo.get("full_name") or "")
    number = int(pull["number"])
    ctx.fields.update(repository=repository, number=number)
    if pull.get("merged") is not True:
        raise GiveUp(f"{repository}#{number} is not merged")

    client = ctx.client
    bot_login = await services.auth.bot_identity()
    if not _usable_pull(pull, repository):
        # The payload's copy cannot be read; GitHub's own copy costs one call.
        log.warning(
            "%s#%s: the delivery's pull request object is malformed; reading it from GitHub", repository, number,
            extra={"delivery": job.delivery_id, "repository": repository, "number": number},
        )
        pull = None
    branch = repo.get("default_branch")
    snapshot, config, existing = await asyncio.gather(
        fetch_snapshot(client, repository, number, pull=pull),
        read_repo_config(client, repository, branch, missing=services.missing_configs),
        find_guide_comment(client, repository, number, bot_login=bot_login),
    )
    checked = changes_repo_config(snapshot)
    merged_config = config
    if checked and branch and snapshot.base_branch != branch:
        # Merged into another branch: the check is of the file as this merge left it, while
        # the repository's settings (the default branch's) still make the guide.
        merged_config = await read_repo_config(client, repository, snapshot.merge_commit_sha or snapshot.base_branch, fresh=True)
    elif checked and config is REMEMBERED_MISSING:
        # This merge changed the config file: read what it says now, not what was remembered
        # (a config read from GitHub above is already the merged one).
        config = merged_config = await read_repo_config(client, repository, branch, missing=services.missing_configs, fresh=True)
    rules, rule_problems = services.rules_for(config)
    problems = config.problems + rule_problems
    if problems and not any(p.line == UNREAD for p in problems):
        log.warning(
            "%s: %s is invalid; using the defaults", repository, config.source,
            extra={"repository": repository, "problems": [str(p) for p in problems]},
        )
    previous = parse_marker(existing.get("body")) if existing else None
    if previous is None and services.guides is not None:
        # No guide comment (the repository's `comment:` setting left it out): the marker of
        # the guide stored for the tag view remembers which labels prguide added and what a
        # human decided, so a label a maintainer removed is not added back.
        previous = await _stored_marker(services, repository, number)
    # The engine is pure but CPU-bound (a 3,000-file PR takes a while): keep it off the
    # event loop so deliveries are still answered at once.
    notices = config_notices(config.source, problems)
    # Who wrote the lines the pull request changes ("fixes code from #N"): an optional
    # read, asked while the coupling history is read; without it the guide is as before.
    history, blame = await asyncio.gather(
        coupling_history(services, repository, snapshot.merged_at), fetch_blame(client, snapshot)
    )
    if checked:
        notices = config_check_notices(merged_config) if merged_config is config else merge_notices(config_check_notices(merged_config), notices)
    build = functools.partial(
        build_guide, snapshot, rules, lang=config.lang or services.settings.lang, overrides=Overrides.from_marker(previous),
        page_url=guide_page_url(services, repository, number, private=is_private(repo)), history=history,
        blame=blame,
    )
    guide = await run_build(build, notices=notices)
    if services.store is not None:
        # A revert: the reverted pull request's guide says so (a job on its own key).
        ctx.fields["revert_note_queued"] = await queue_revert_note(ctx, job, guide)
    if guide.skipped:
        ctx.outcome = "skipped"
        return
    # The payload's labels are current on the first attempt; a retry may run much later.
    current = snapshot.labels if job.attempts <= 1 else None
    # The repository's ``comment:`` setting: below its reading level, labels and the tag
    # view are still updated, but no comment is posted.
    post_comment = config.wants_comment(str(guide.data.get("reading_level") or ""))
    narrating = post_comment and narration_wanted(services.settings, config, guide)
    if narrating:
        guide = await with_cached_narration(services, guide, snapshot.head_sha)
    result = await publish_guide(
        client, repository, number, guide, bot_login=bot_login, current_labels=current, existing=existing,
        revise=reviser(build, notices), post_comment=post_comment, previous=previous,
    )
    if result.labels_refused:
        ctx.fields["labels_refused"] = [name for r in result.labels_refused for name in r.names]
    ctx.outcome = result.comment
    ctx.fields.update(comment_id=result.comment_id, labels_added=list(result.labels_added), labels_removed=list(result.labels_removed))
    if services.guides is not None:
        await save_guide(services.guides, guide, private=is_private(repo))
    if narrating and services.store is not None:
        # The engine's guide is up; the narrated one edits it when (and if) the model answers.
        ctx.fields["narration_queued"] = await queue_narration(ctx, job, guide, snapshot.head_sha, result.comment_id)


async def _stored_marker(services: Any, repository: str, number: int) -> Any:
    """The marker state of the guide stored for ``repository#number`` (its Markdown's marker), or
    ``None``. An optional read: a store that fails costs the guide nothing."""
    try:
        data = await run_store(services.guides, services.guides.get, repository, number)
    except Exception as exc:  # noqa: BLE001 -- optional read: the labels are decided without it
        log.warning("%s#%s: the stored guide could not be read: %s", repository, number, exc)
        return None
    markdown = data.get("markdown") if isinstance(data, Mapping) else None
    return parse_marker(markdown) if isinstance(markdown, str) else None


def _usable_pull(pull: Mapping[str, Any], repository: str) -> bool:
    """True when a snapshot can be built from ``pull`` (the payload's pull request object)."""
    try:
        PullRequestSnapshot.from_github(pull, repository=repository)
    except (ValueError, TypeError, AttributeError, KeyError):
        return False
    return True

#: The merged pull request route: ``pull_request.closed`` with ``merged: true``. Bots
#: are welcome here: merge queues and auto-merge bots merge real pull requests.
MERGED_PULL_REQUEST = Route(
    event="pull_request",
    actions=("closed",),
    handle=handle_pull_request_merged,
    accept=accept_merged,
    bots=True,
)


#: This feature's routes, composed in :mod:`bot.features`.
ROUTES = (MERGED_PULL_REQUEST,)
