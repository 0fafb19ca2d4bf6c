"""The narrator against a scripted OpenAI-compatible server on loopback (never a real model)."""

from __future__ import annotations

import logging

import pytest

from bot.narrator.client import LLMConfig
from bot.narrator.run import narrate_guide
from bot.narrator.store import SQLiteNarrations
from bot.sandbox.llm import Reply, ScriptedModel
from bot.narrator.facts import build_fact_sheet
from tests.narrator_helpers import DATA, engine_markdown, sid

KEY = "sk-narrator-secret-0123456789"
FIVE = sid(build_fact_sheet(DATA), "5")


def good() -> Reply:
    return Reply.json({
        "summary": "Uploads survive a transient storage outage {F3}.",
        "why_it_matters": [f"A caller now waits for up to {{{FIVE}}} attempts instead of failing at once {{F3}}.",
                           "Dropping the old option keeps one retry policy {F2}."],
        "focus_reasons": {"P1": "This loop decides how long a caller waits {F4}."},
    })  # fmt: skip


def config(model: ScriptedModel, **more) -> LLMConfig:
    return LLMConfig(url=model.base_url, model="qwen2.5-coder-7b", api_key=KEY, **{"timeout": 5.0, **more})


@pytest.fixture
def store():
    s = SQLiteNarrations(":memory:")
    yield s
    s.close()


async def test_grounded_narration_is_kept_with_schema_and_key(store):
    async with ScriptedModel([good()]) as model:
        result = await narrate_guide(DATA, engine_markdown(), config(model), head_sha="abc", store=store)
    assert result.narration.fallback_reason is None and (result.narration.kept, result.narration.rejected) == (4, 0)
    assert "**Uploads survive a transient storage outage.**" in result.markdown
    assert "up to `5` attempts" in result.markdown
    assert model.requests[0]["response_format"]["type"] == "json_schema"
    assert model.requests[0]["model"] == "qwen2.5-coder-7b" and model.authorizations == [f"Bearer {KEY}"]
    assert result.outcome.prompt_tokens == 120 and result.outcome.calls == 1


@pytest.mark.parametrize(
    ("sentence", "reason"),
    [
        ("Uploads go through retry_upload_chunk now {F3}.", "identifier"),
        ("Uploads now retry 9 times {F3}.", "number"),
        ("The client library is now 2.40.0 {F3}.", "number"),
    ],
)
async def test_inventions_are_replaced_by_the_engine_sentence(sentence, reason, store):
    async with ScriptedModel([Reply.json({"summary": sentence, "why_it_matters": [], "focus_reasons": {}})]) as model:
        result = await narrate_guide(DATA, engine_markdown(), config(model), store=store)
    assert result.narration.rejected == 1 and result.narration.kept == 0
    assert result.markdown == engine_markdown()  # the engine's summary stays, nothing else changes


@pytest.mark.parametrize(
    ("reply", "reason"),
    [(Reply(content="{not json"), "schema"), (Reply.error(429), "rate_limited"), (Reply.error(500), "server_error"),
     (Reply(hang=True), "timeout")],
)  # fmt: skip
async def test_faults_leave_the_engine_guide(reply, reason, store):
    async with ScriptedModel([reply]) as model:
        # Only the hanging server must meet the deadline; the others answer, however loaded the machine.
        timeout = 0.3 if reason == "timeout" else 30.0
        result = await narrate_guide(DATA, engine_markdown(), config(model, timeout=timeout), store=store)
    assert result.narration.fallback_reason == reason and result.markdown == engine_markdown()
    assert store.get(result.key) is None  # a later refresh tries again


async def test_a_server_without_json_schema_is_asked_for_json_object():
    async with ScriptedModel([good()], schema=False) as model:
        result = await narrate_guide(DATA, engine_markdown(), config(model))
    assert [r["response_format"]["type"] for r in model.requests] == ["json_schema", "json_object"]
    assert result.narration.kept == 4 and result.outcome.calls == 2


async def test_unreachable_server():
    result = await narrate_guide(DATA, engine_markdown(), LLMConfig(url="http://127.0.0.1:9/v1", model="m", timeout=2))
    assert result.narration.fallback_reason == "unreachable"


async def test_redelivery_reuses_the_cached_narration_and_the_key_never_logs(store, caplog):
    caplog.set_level(logging.DEBUG)
    async with ScriptedModel([good()]) as model:
        first = await narrate_guide(DATA, engine_markdown(), config(model), head_sha="abc", store=store)
        again = await narrate_guide(DATA, engine_markdown(), config(model), head_sha="abc", store=store)
        other_lang = await narrate_guide({**DATA, "lang": "zh"}, engine_markdown("zh"), config(model), head_sha="abc", store=store)
    assert len(model.requests) == 2  # the redelivery made no call; another language did
    assert again.cached and again.markdown == first.markdown and not first.cached
    assert other_lang.key != first.key and other_lang.narration.fallback_reason == "server_error"  # script used up
    assert KEY not in caplog.text and KEY not in repr(config(model))


async def test_daily_token_cap_stops_the_call():
    async with ScriptedModel([good()]) as model:
        result = await narrate_guide(DATA, engine_markdown(), config(model), tokens_left=10)
    assert result.narration.fallback_reason == "budget" and not model.requests
