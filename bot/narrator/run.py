"""One guide narrated, start to end: cache, fact sheet, prompt, model, validation, Markdown.

Shared by the app's narrator feature and the CLI, so both narrate the same way.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from bot.narrator.client import LLMConfig, Outcome, narrate
from bot.narrator.facts import FactSheet, build_fact_sheet
from bot.narrator.prompt import ANSWER_TOKENS, build_prompt
from bot.narrator.render import Narration, failed, narrate_markdown
from bot.narrator.store import NarrationStorage, cache_key


@dataclass(frozen=True, slots=True)
class Narrated:
    """The result: the guide's ``markdown`` (narrated, or the engine's when nothing was kept),
    the ``narration``, the fact ``sheet``, the cache ``key``, whether it came from the
    cache (``cached``: no model call), and the model call's ``outcome`` (``None`` when cached)."""

    markdown: str
    narration: Narration
    sheet: FactSheet
    key: str
    cached: bool
    outcome: Outcome | None = None


#: Reading levels a narration is for. A skim or skip guide ("safe to skip") is a few lines
#: the engine already words plainly: narrating it would cost a model call, and send the
#: pull request's text to the model, for nothing.
NARRATED_LEVELS = frozenset(("deep", "quick"))


def worth_narrating(data: Mapping[str, Any]) -> bool:
    """Whether a guide (its JSON form, ``Guide.data``) is narrated at all: a quick or deep read
    (:data:`NARRATED_LEVELS`) that no skip rule matched. The app and the CLI both ask."""
    return str(data.get("reading_level") or "") in NARRATED_LEVELS and not data.get("skipped")


def guide_key(data: Mapping[str, Any], head_sha: str, model: str) -> str:
    """The cache key of a guide's narration (see :func:`bot.narrator.store.cache_key`)."""
    return cache_key(str(data.get("repository") or ""), int(data.get("number") or 0), head_sha,
                     str(data.get("engine_version") or ""), model, str(data.get("lang") or "en"))  # fmt: skip


async def narrate_guide(
    data: Mapping[str, Any],
    markdown: str,
    config: LLMConfig,
    *,
    head_sha: str = "",
    store: NarrationStorage | None = None,
    tokens_left: int | None = None,
    reserve: Callable[[int], Awaitable[bool]] | None = None,
) -> Narrated:
    """Narrate the guide whose JSON data is ``data`` and Markdown ``markdown``.

    A narration cached under the same key is reused without calling the model. When
    ``tokens_left`` (the installation's remaining daily tokens) cannot pay for the
    prompt and the longest answer (:data:`~bot.narrator.prompt.ANSWER_TOKENS`), no call is
    made (``fallback_reason="budget"``); ``reserve`` does the same atomically: it is
    awaited with those tokens and says whether they were taken
    from the daily cap (the caller settles the difference to the outcome's tokens).
    A store whose methods block (``store.blocking``) is called in a thread. A narration is cached when
    the model answered (even if every sentence was rejected), not after a time-out or
    error, so a later refresh tries again.
    """
    sheet = build_fact_sheet(data)
    key = guide_key(data, head_sha, config.model)
    lang = str(data.get("lang") or "en")
    if store is not None:
        hit = await _call(store, store.get, key)
        if hit is not None:
            narration = Narration.from_json(hit)
            return Narrated(narrate_markdown(markdown, narration, lang, key=key), narration, sheet, key, True)
    prompt = build_prompt(sheet, budget=config.budget, model=config.model)
    # The most a call may spend: its prompt and the longest answer it asks for.
    most = prompt.tokens + ANSWER_TOKENS
    if (tokens_left is not None and most > tokens_left) or (reserve is not None and not await reserve(most)):
        narration = failed(config.model, "budget")
        return Narrated(markdown, narration, sheet, key, False, Outcome(narration))
    outcome = await narrate(sheet, prompt, config)
    narration = outcome.narration
    if store is not None and narration.fallback_reason is None:
        await _call(store, store.put, key, narration.to_json())
    return Narrated(narrate_markdown(markdown, narration, lang, key=key), narration, sheet, key, False, outcome)


async def _call(store: Any, method: Callable[..., Any], *args: Any) -> Any:
    if getattr(store, "blocking", False):
        return await asyncio.to_thread(method, *args)
    return method(*args)
