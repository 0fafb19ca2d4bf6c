"""The narrated guide: an internal job, queued after the engine's guide is published,
that asks the team's model for a narration and edits the same comment with it.

Route: :data:`NARRATE` (``prguide.narrate``, internal). The engine's guide is never
held back: it is already on GitHub when this job runs. On a time-out, a refused call,
a broken answer, a spent daily token cap or a comment changed meanwhile, the engine's
guide simply stays. The narration is cached by (repository, PR, head sha, engine
version, model, language), so a refresh or redelivery makes no second call.
"""

from __future__ import annotations

import logging
import time
import weakref
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from prometheus_client import Counter, Histogram

from bot.app.errors import GiveUp
from bot.app.fetch import split_repository
from bot.app.jobstore import Job
from bot.app.offload import run_store
from bot.app.publish import replace_comment_body
from bot.app.routing import JobContext, Route
from bot.engine.marker import parse_marker
from bot.feature_support import NARRATE_EVENT, body_digest, llm_config, narration_store
from bot.narrator.run import narrate_guide

log = logging.getLogger("prguide.narrator")

#: A narration job that waited longer than this (seconds) in the queue is not run:
#: its reader has moved on, and a late edit would surprise more than help.
MAX_WAIT_S = 900
_COMMENT = "/repos/{owner}/{repo}/issues/comments/{comment_id}"
_LATENCY_BUCKETS = (0.5, 1.0, 2.5, 5.0, 10.0, 20.0, 30.0, 60.0, 120.0)
_metrics: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def narrator_metrics(registry: Any) -> dict[str, Any]:
    """The narrator's metrics in ``registry`` (created on first use):

    ``prguide_narrator_calls_total{outcome}`` (``ok`` or the fallback reason; ``cached``
    when no call was made), ``prguide_narrator_tokens_total{kind}`` (``prompt``,
    ``completion``), ``prguide_narrator_latency_seconds``, ``prguide_narrator_sentences_total{verdict}``
    (``kept``, ``rejected``) and ``prguide_narrator_fallbacks_total{reason}``.
    """
    if registry not in _metrics:
        _metrics[registry] = {
            "calls": Counter("prguide_narrator_calls", "Narrations by outcome", ["outcome"], registry=registry),
            "tokens": Counter("prguide_narrator_tokens", "Model tokens used by the narrator", ["kind"], registry=registry),
            "latency": Histogram("prguide_narrator_latency_seconds", "Seconds per model call", buckets=_LATENCY_BUCKETS, registry=registry),
            "sentences": Counter("prguide_narrator_sentences", "Narrated sentences by validator verdict", ["verdict"], registry=registry),
            "fallbacks": Counter("prguide_narrator_fallbacks", "Narrations that fell back to the engine's guide", ["reason"], registry=registry),
        }
    return _metrics[registry]


async def handle_narrate(job: Job, ctx: JobContext) -> None:
    """Narrate the guide comment named in the job and edit it.

    Payload: ``{repository, number, comment_id, head_sha, guide, queued_at}`` (see
    :func:`bot.feature_support.queue_narration`). Reads the comment ("Get an issue
    comment"); narrates it only when it is still the engine's, un-narrated guide of the
    same engine version and language; edits it through
    :func:`bot.app.publish.replace_comment_body`. ``ctx.outcome``: ``edited``,
    ``unchanged``, ``stale``, ``gone``, ``off``, ``expired`` or the fallback reason.
    """
    data = job.data if isinstance(job.data, Mapping) else {}
    guide = data.get("guide")
    if not isinstance(guide, Mapping) or not isinstance(data.get("comment_id"), int):
        raise GiveUp(f"{job.delivery_id}: narration job without a guide")
    repository, number = str(data.get("repository") or ""), int(data.get("number") or 0)
    ctx.fields.update(repository=repository, number=number)
    services = ctx.services
    config = llm_config(services.settings)
    if config is None:
        ctx.outcome = "off"
        return
    if time.time() - float(data.get("queued_at") or 0) > MAX_WAIT_S:
        ctx.outcome = "expired"
        return
    owner, repo = split_repository(repository)
    client = ctx.client
    comment = await client.getitem(_COMMENT, {"owner": owner, "repo": repo, "comment_id": data["comment_id"]})
    body = str(comment.get("body") or "")
    state = parse_marker(body)
    if state is None or state.extra.get("narrated") or state.engine != guide.get("engine_version") or state.lang != guide.get("lang"):
        ctx.outcome = "stale"
        return
    if data.get("body") and body_digest(body) != data["body"]:
        ctx.outcome = "stale"  # a newer guide is up: this narration's facts are not its facts
        return
    store = narration_store(services)
    installation = int(job.installation_id or 0)
    day = datetime.now(UTC).strftime("%Y-%m-%d")
    cap = int(getattr(services.settings, "llm_daily_tokens", 0) or 0)
    reserved = 0

    async def reserve(tokens: int) -> bool:
        # Taken before the call, within the cap, in one statement every replica shares.
        nonlocal reserved
        if await run_store(store, store.reserve_tokens, installation, day, tokens, cap):
            reserved = tokens
            return True
        return False

    result = await narrate_guide(guide, body, config, head_sha=str(data.get("head_sha") or ""), store=store,
                                 reserve=reserve if cap else None)  # fmt: skip
    m = narrator_metrics(services.metrics.registry)
    n = result.narration
    if result.cached:
        m["calls"].labels(outcome="cached").inc()
    elif result.outcome is not None:
        out = result.outcome
        m["calls"].labels(outcome=n.fallback_reason or "ok").inc()
        if out.calls:
            m["latency"].observe(out.seconds)
            m["tokens"].labels(kind="prompt").inc(out.prompt_tokens)
            m["tokens"].labels(kind="completion").inc(out.completion_tokens)
            used = out.prompt_tokens + out.completion_tokens
            if used != reserved:
                await run_store(store, store.add_tokens, installation, day, used - reserved)
        m["sentences"].labels(verdict="kept").inc(n.kept)
        m["sentences"].labels(verdict="rejected").inc(n.rejected)
        if n.fallback_reason:
            m["fallbacks"].labels(reason=n.fallback_reason).inc()
    ctx.fields.update(model=config.model, kept=n.kept, rejected=n.rejected, fallback=n.fallback_reason, cached=result.cached)
    if result.markdown == body:
        ctx.outcome = n.fallback_reason or "nothing_kept"
        return
    bot_login = await services.auth.bot_identity()
    ctx.outcome = await replace_comment_body(
        client, repository, data["comment_id"], expected=lambda text: text == body, body=result.markdown, bot_login=bot_login
    )


#: The narration job, queued by the guide feature after it publishes.
NARRATE = Route(event=NARRATE_EVENT, actions=(), handle=handle_narrate, internal=True)

#: This feature's routes, composed in :mod:`bot.features`.
ROUTES = (NARRATE,)
