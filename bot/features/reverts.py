"""Reverts: when a pull request that reverts #N is merged, #N's guide says so.

Route: :data:`REVERT_NOTE` (``prguide.revert``, internal), queued by the merged pull
request guide (:func:`bot.feature_support.queue_revert_note`) on #N's own job key, so it
never runs beside #N's guide jobs. The job adds "Reverted by #M N days after it was merged"
under the title of #N's guide comment (an edit through :mod:`bot.app.publish`, only while
the comment is still the one it read) and to #N's guide stored for the tag view (its data
gets ``reverted_by: {number, days}``). The marker remembers it, so a later refresh of #N
keeps the line, and a second run changes nothing.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from bot.app.errors import GiveUp
from bot.app.fetch import fetch_pull
from bot.app.github import NotFound
from bot.app.jobstore import Job
from bot.app.offload import run_store
from bot.app.publish import find_guide_comment, replace_comment_body
from bot.app.routing import JobContext, Route
from bot.engine.marker import parse_marker
from bot.engine.render.revert_note import with_revert_note
from bot.feature_support import REVERT_EVENT

log = logging.getLogger("prguide.jobs")


def days_between(earlier: str, later: str) -> int | None:
    """Whole days from ``earlier`` to ``later`` (ISO-8601 times; ``Z`` or an offset), at least 0;
    ``None`` when either is missing or unreadable."""
    try:
        start = datetime.fromisoformat(earlier.replace("Z", "+00:00"))
        end = datetime.fromisoformat(later.replace("Z", "+00:00"))
    except (AttributeError, ValueError):
        return None
    if (start.tzinfo is None) != (end.tzinfo is None):
        return None
    return max(0, int((end - start).total_seconds() // 86400))


async def handle_revert_note(job: Job, ctx: JobContext) -> None:
    """Say on #N's guide that #M reverted it.

    Payload: ``{repository, reverted: N, by: M, merged_at: M's merge time}``. Reads
    #N's stored guide (for its merge time; "Get a pull request" when none is stored, which
    also tells that #N was merged) and its guide comment ("List issue comments"); edits the
    comment ("Get an issue comment", "Update an issue comment") when it does not say it yet,
    and stores the guide with the note. ``ctx.outcome``: the comment's ``edited``,
    ``unchanged``, ``stale`` or ``gone``; ``no_comment`` when #N has no guide comment;
    ``not_merged`` when #N was never merged. Raises :class:`GiveUp` for a malformed payload.
    """
    data = job.data if isinstance(job.data, Mapping) else {}
    repository, reverted, by = str(data.get("repository") or ""), data.get("reverted"), data.get("by")
    if "/" not in repository or not isinstance(reverted, int) or not isinstance(by, int) or reverted == by:
        raise GiveUp(f"{job.delivery_id}: revert note without a repository and two pull requests")
    ctx.fields.update(repository=repository, number=reverted, reverted_by=by)
    services, client = ctx.services, ctx.client
    stored = None
    if services.guides is not None:
        stored = await run_store(services.guides, services.guides.get, repository, reverted)
    merged_at = stored.get("merged_at") if isinstance(stored, Mapping) else None
    if not merged_at:
        try:
            pull = await fetch_pull(client, repository, reverted)
        except NotFound:
            ctx.outcome = "not_merged"
            return
        merged_at = pull.get("merged_at")
        if not merged_at:
            ctx.outcome = "not_merged"
            return
    days = days_between(str(merged_at), str(data.get("merged_at") or ""))
    if days is None:
        raise GiveUp(f"{job.delivery_id}: merge times {merged_at!r} and {data.get('merged_at')!r} cannot be compared")
    ctx.fields["days"] = days
    ctx.outcome = await _note_comment(ctx, repository, reverted, by, days)
    if isinstance(stored, Mapping) and isinstance(stored.get("markdown"), str):
        await _note_stored(services.guides, dict(stored), by, days)


async def _note_comment(ctx: JobContext, repository: str, number: int, by: int, days: int) -> str:
    """Add the note to #``number``'s guide comment; the publisher's outcome, or ``no_comment``."""
    bot_login = await ctx.services.auth.bot_identity()
    outcome = "stale"
    for _ in range(2):  # a comment rewritten between the read and the edit is read once more
        existing = await find_guide_comment(ctx.client, repository, number, bot_login=bot_login)
        if existing is None:
            return "no_comment"
        body = str(existing.get("body") or "")
        state = parse_marker(body)
        noted = with_revert_note(body, by, days, state.lang if state is not None else "en")
        if noted == body:
            return "unchanged"
        ctx.fields["comment_id"] = int(existing["id"])
        outcome = await replace_comment_body(ctx.client, repository, int(existing["id"]), expected=lambda current: current == body,
                                             body=noted, bot_login=bot_login)  # fmt: skip
        if outcome != "stale":
            return outcome
    return outcome


async def _note_stored(store: Any, data: dict[str, Any], by: int, days: int) -> None:
    """Store #N's guide with the note (its Markdown and ``reverted_by``), unless it has it already."""
    want = {"number": by, "days": days}
    markdown = with_revert_note(data["markdown"], by, days, str(data.get("lang") or "en"))
    # The guide's text in the other languages the tag view shows gets the same note.
    languages = data.get("languages") if isinstance(data.get("languages"), Mapping) else {}
    others = {lang: {**texts, "markdown": with_revert_note(texts["markdown"], by, days, lang)}
              for lang, texts in languages.items() if isinstance(texts, Mapping) and isinstance(texts.get("markdown"), str)}
    if data.get("reverted_by") == want and markdown == data["markdown"] and all(
        others[lang]["markdown"] == languages[lang]["markdown"] for lang in others
    ):
        return
    data.update(markdown=markdown, reverted_by=want)
    if others:
        data["languages"] = {**languages, **others}
    await run_store(store, store.save, data)


#: The revert note's route: internal, queued on the reverted pull request's key.
REVERT_NOTE = Route(event=REVERT_EVENT, actions=(), handle=handle_revert_note, internal=True)

#: This feature's routes, composed in :mod:`bot.features`.
ROUTES = (REVERT_NOTE,)
