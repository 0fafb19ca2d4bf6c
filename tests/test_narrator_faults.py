"""The narrator under a bad model server (issue 21, classes 1 and 6).

Class 1: a server that sends its headers and then a byte now and then is stopped by a
total deadline on the call, and a narration in flight never holds up the pull request's
own jobs (it runs under a key of its own). Class 6: a broken 200 answer (HTML, a
``content`` that is not a string, ``choices`` an object, negative ``usage``) is one call,
a fallback outcome and counted tokens, never a crashed (and retried, and paid again) job.

No test sleeps for timing: deadlines are short and the model server says when a request
has arrived (``ScriptedModel.started``).
"""

from __future__ import annotations

import asyncio

import openai  # noqa: F401 - a narrator's first call imports it (about 1.5 s of CPU): here, so no bound below pays for it
import pytest

from bot.narrator.client import LLMConfig
from bot.narrator.facts import build_fact_sheet
from bot.narrator.prompt import build_prompt
from bot.narrator.run import narrate_guide
from bot.sandbox.llm import Reply, ScriptedModel
from tests.narrator_helpers import DATA, engine_markdown

#: Seconds a test waits for what must happen at once before it fails (never a sleep).
BOUND = 15


def config(model: ScriptedModel, timeout: float) -> LLMConfig:
    return LLMConfig(url=model.base_url, model="test-model", api_key="sk-x", timeout=timeout)


# ----- class 1: a trickling server ------------------------------------------------------


async def test_a_trickling_server_is_stopped_by_a_total_deadline():
    # One byte every 50 ms: a per-read time-out of 0.5 s never fires; the deadline does.
    async with ScriptedModel([Reply.trickling(0.05)]) as model:
        result = await asyncio.wait_for(narrate_guide(DATA, engine_markdown(), config(model, 0.5)), BOUND)
    assert result.narration.fallback_reason == "timeout" and result.markdown == engine_markdown()
    assert result.outcome.calls == 1 and result.outcome.seconds < BOUND


# ----- class 6: broken 200 answers ------------------------------------------------------

BROKEN = {
    "html": Reply.broken("<html><body><h1>502 Bad Gateway</h1></body></html>", "text/html"),
    "html_as_json": Reply.broken("<html><body>proxy error</body></html>", "application/json"),
    "content_not_a_string": Reply.broken(Reply.completion({"summary": "x"})),
    "content_a_number": Reply.broken(Reply.completion(7)),
    "choices_an_object": Reply.broken(Reply.completion(choices={"0": {"message": {"content": "{}"}}})),
    "choices_a_string": Reply.broken(Reply.completion(choices="nope")),
    "message_missing": Reply.broken(Reply.completion(choices=[{"index": 0}])),
    "negative_usage": Reply.broken(Reply.completion('{"summary": "", "why_it_matters": [], "focus_reasons": {}}',
                                                    usage={"prompt_tokens": -5000, "completion_tokens": -1})),
    "usage_strings": Reply.broken(Reply.completion("{", usage={"prompt_tokens": "many", "completion_tokens": None})),
    "json_list": Reply.broken([1, 2, 3]),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(BROKEN))
async def test_a_broken_200_is_one_call_a_fallback_and_counted_tokens(name):
    estimate = build_prompt(build_fact_sheet(DATA), budget=3000, model="test-model").tokens
    async with ScriptedModel([BROKEN[name]]) as model:
        result = await narrate_guide(DATA, engine_markdown(), config(model, 5))
    assert len(model.requests) == 1
    out = result.outcome
    assert out.calls == 1 and result.markdown == engine_markdown()
    # An empty answer keeps nothing but is an answer; "{" is a completion whose content fails the schema.
    expected = {"negative_usage": None, "usage_strings": "schema"}.get(name, "bad_answer")
    assert result.narration.fallback_reason == expected, result.narration
    # Whatever the answer says about usage, what is counted is never negative, never
    # nothing: the request's estimate stands in for usage that is absent or invalid.
    assert out.prompt_tokens >= estimate and out.completion_tokens >= 0


async def test_a_trickling_model_server_in_its_own_process_is_cut_off_by_the_deadline():
    # The model server other processes (prguide serve replicas) can be pointed at.
    import sys

    proc = await asyncio.create_subprocess_exec(sys.executable, "-m", "bot.sandbox.llm", "--reply", "trickle",
                                                stdout=asyncio.subprocess.PIPE)  # fmt: skip
    try:
        base_url = (await asyncio.wait_for(proc.stdout.readline(), BOUND)).decode().strip()
        assert base_url.startswith("http://127.0.0.1:")
        config = LLMConfig(url=base_url, model="test-model", timeout=1.0)
        result = await asyncio.wait_for(narrate_guide(DATA, engine_markdown(), config), BOUND)
        assert result.narration.fallback_reason == "timeout" and result.outcome.prompt_tokens > 0
    finally:
        proc.terminate()
        await proc.wait()


async def test_jobs_narrating_at_once_wait_for_the_client_import_rather_than_take_it_half_done(monkeypatch):
    import sys
    import threading
    import types

    from bot.narrator import client

    # A slow first import of the client, as on a cold process: the module is in sys.modules
    # (as Python puts it there) before its names are; import_module waits for it, as Python's does.
    lock, started = threading.Lock(), threading.Event()
    partial = types.ModuleType("openai")

    def slow_import(name: str):
        with lock:
            if getattr(partial, "AsyncOpenAI", None) is None:
                sys.modules["openai"] = partial
                started.set()
                threading.Event().wait(0.3)  # the import takes its time (in a worker thread)
                partial.AsyncOpenAI = object
            return partial

    monkeypatch.setattr(client, "_OPENAI", None, raising=False)
    monkeypatch.delitem(sys.modules, "openai")  # put back afterwards
    monkeypatch.setattr(client.importlib, "import_module", slow_import)
    first = asyncio.ensure_future(client._openai())
    await asyncio.to_thread(started.wait, 5)
    second = await client._openai()
    assert hasattr(second, "AsyncOpenAI") and hasattr(await first, "AsyncOpenAI")
