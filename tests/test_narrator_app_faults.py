"""The narrated guide in the app under a bad model server (issue 21, classes 1 and 6).

The app, the GitHub sandbox and the scripted model on loopback (as ``test_narrator_app``).
A narration in flight must not hold the pull request's own jobs: a ``/prguide refresh``
is answered while the model trickles. A broken 200 is one call, a fallback, and its
tokens count against ``PRGUIDE_LLM_DAILY_TOKENS``.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

import openai  # noqa: F401 - a narrator's first call imports it (about 1.5 s of CPU): here, so no bound below pays for it
import pytest
from loopback import pr_delivery
from sandbox_helpers import APP_ID, app_private_key, start_sandbox  # noqa: F401
from test_end_to_end import SECRET, Harness, start_app
from test_narrator_app import KEY, NARRATION, PR, REPO, command, comment_writes

from bot.app.server import STATE
from bot.app.settings import Settings
from bot.feature_support import narration_store
from bot.sandbox.llm import Reply, ScriptedModel

pytestmark = pytest.mark.corpus

#: Seconds a test waits for what must happen soon before it fails (never a sleep for timing).
BOUND = 10


@pytest.fixture
async def app(app_private_key, load_bundle_json, tmp_path):  # noqa: F811
    bundle = load_bundle_json(PR)
    made: list = []

    async def make(script, **more):
        model = ScriptedModel(script)
        await model.__aenter__()
        sandbox_cm = start_sandbox(app_private_key, bundles=[bundle])
        sandbox = await sandbox_cm.__aenter__()
        settings = Settings(**{"app_id": APP_ID, "private_key": app_private_key.decode(), "webhook_secret": SECRET,
                               "api_url": sandbox.base_url, "db_path": tmp_path / "prguide.db", "workers": 2,
                               "llm_url": model.base_url, "llm_model": "qwen2.5-coder:7b", "llm_api_key": KEY,
                               "llm_timeout": 5, **more})  # fmt: skip
        client = await start_app(settings, sandbox)
        made.append((client, sandbox_cm, model))
        return Harness(client, sandbox, {PR: bundle}), model

    yield make
    for client, sandbox_cm, model in made:
        await model.__aexit__(None, None, None)  # first: a trickle ends, so the app can stop
        await client.close()
        await sandbox_cm.__aexit__(None, None, None)


async def until(check, what: str) -> None:
    """Wait (polling the app's own state, at most :data:`BOUND` seconds) until ``check()``."""
    async with asyncio.timeout(BOUND):
        while not check():
            await asyncio.sleep(0.02)


async def test_a_narration_in_flight_never_holds_the_pull_requests_own_jobs(app):
    # The model trickles for as long as the test runs: the deadline (60 s) is far away.
    harness, model = await app([Reply.trickling(0.05)], llm_timeout=60)
    resp = await harness.deliver(pr_delivery(harness.bundles[PR]), delivery="t-1")
    assert resp.status == 202
    async with asyncio.timeout(BOUND):
        await model.started.wait()  # the guide is up and its narration is waiting on the model
    assert [m for m, _ in comment_writes(harness)] == ["POST"]

    store = harness.app[STATE].store
    await until(lambda: store.counts()["done"] == 1, "the guide job")
    assert store.counts()["running"] == 1  # the narration
    # A maintainer asks for a refresh: it runs now, not when the model is done.
    refresh = asyncio.create_task(command(harness, "/prguide refresh", "t-2"))
    try:
        await until(lambda: store.counts()["done"] == 2, "the refresh")
        assert store.counts()["running"] == 1 and len(model.requests) == 1  # the narration still waits; no second call
    finally:
        await model.__aexit__(None, None, None)  # the trickle ends; the narration falls back
        await asyncio.wait_for(refresh, BOUND)
    assert "narrated by" not in harness.sandbox.comments(REPO, PR)[0].body


async def test_a_trickling_model_is_timed_out_and_the_engine_guide_stays(app):
    harness, model = await app([Reply.trickling(0.05)], llm_timeout=1)
    async with asyncio.timeout(BOUND):
        await harness.merged(PR, delivery="d-1")
    assert [m for m, _ in comment_writes(harness)] == ["POST"] and len(model.requests) == 1
    metrics = await (await harness.client.get("/metrics")).text()
    assert 'prguide_narrator_fallbacks_total{reason="timeout"} 1.0' in metrics


@pytest.mark.parametrize("reply", [Reply.broken("<html><body>502</body></html>", "text/html"),
                                   Reply.broken(Reply.completion({"not": "a string"})),
                                   Reply.broken(Reply.completion(choices={"0": {}}))],
                         ids=["html", "content-object", "choices-object"])  # fmt: skip
async def test_a_broken_200_is_one_call_a_fallback_and_counted_against_the_daily_cap(app, reply):
    harness, model = await app([reply, Reply.json(NARRATION)], llm_daily_tokens=100_000)
    await harness.merged(PR, delivery="b-1")
    assert len(model.requests) == 1  # one paid call, not one per attempt
    assert [m for m, _ in comment_writes(harness)] == ["POST"]
    assert harness.app[STATE].store.counts() == {"queued": 0, "running": 0, "done": 2, "parked": 0}
    metrics = await (await harness.client.get("/metrics")).text()
    assert 'prguide_narrator_fallbacks_total{reason="bad_answer"} 1.0' in metrics
    assert 'prguide_narrator_tokens_total{kind="prompt"} 0.0' not in metrics
    day = datetime.now(UTC).strftime("%Y-%m-%d")
    assert narration_store(harness.app[STATE].services).tokens(1, day) > 0


async def test_negative_usage_is_not_a_refund(app):
    bad = Reply.broken(Reply.completion(__import__("json").dumps(NARRATION), usage={"prompt_tokens": -99999, "completion_tokens": -1}))
    harness, model = await app([bad], llm_daily_tokens=100_000)
    await harness.merged(PR, delivery="u-1")
    assert len(model.requests) == 1 and "narrated by" in harness.sandbox.comments(REPO, PR)[0].body
    day = datetime.now(UTC).strftime("%Y-%m-%d")
    assert narration_store(harness.app[STATE].services).tokens(1, day) > 0
