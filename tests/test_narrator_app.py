"""The narrated guide in the app: engine guide first, then one edit; cache on refresh; key never logged.

The app, the GitHub sandbox and a scripted OpenAI-compatible model all on loopback.
"""

from __future__ import annotations

import logging

import pytest
from loopback import pr_delivery
from sandbox_helpers import APP_ID, app_private_key, start_sandbox  # noqa: F401
from test_end_to_end import SECRET, Harness, start_app

from bot.app.settings import Settings
from bot.engine.marker import parse_marker
from bot.sandbox.llm import Reply, ScriptedModel

pytestmark = pytest.mark.corpus

REPO = "verl-project/verl"
PR = 7491
KEY = "sk-local-model-key-5f3a9c0e"
# Grounded in the guide's facts: F2 is a focus point on the output's extra fields, F11
# the factor "3 tests added" (so "three" is a number a fact carries).
NARRATION = {"summary": "A small change that keeps the default fields of the output as they were {F2}.",
             "why_it_matters": ["Three tests now cover the new behaviour {F12}.", "It uses start_trainer_v2 now {F2}."],
             "focus_reasons": {}}  # fmt: skip


async def open_narrated(app_private_key: bytes, tmp_path, bundle: dict, script, made: list):
    """Start a scripted model, the sandbox serving ``bundle`` and the app narrating with that model;
    ``(Harness, model)``. What was started goes on ``made`` for :func:`close_narrated`."""
    model = ScriptedModel(script)
    await model.__aenter__()
    sandbox_cm = start_sandbox(app_private_key, bundles=[bundle])
    sandbox = await sandbox_cm.__aenter__()
    settings = Settings(app_id=APP_ID, private_key=app_private_key.decode(), webhook_secret=SECRET, api_url=sandbox.base_url,
                        db_path=tmp_path / "prguide.db", workers=2, llm_url=model.base_url, llm_model="qwen2.5-coder:7b",
                        llm_api_key=KEY, llm_timeout=5)  # fmt: skip
    client = await start_app(settings, sandbox)
    made.append((client, sandbox_cm, model))
    return Harness(client, sandbox, {bundle["pull"]["number"]: bundle}), model


async def close_narrated(made: list) -> None:
    """Stop what :func:`open_narrated` started."""
    for client, sandbox_cm, model in made:
        await client.close()
        await sandbox_cm.__aexit__(None, None, None)
        await model.__aexit__(None, None, None)


@pytest.fixture
async def narrated(app_private_key, load_bundle_json, tmp_path):  # noqa: F811
    made: list = []

    async def make(script, number: int = PR):
        return await open_narrated(app_private_key, tmp_path, load_bundle_json(number), script, made)

    yield make
    await close_narrated(made)


def comment_writes(harness):
    return [(r["method"], r["path"].split("/")[-2]) for r in harness.writes() if "/comments" in r["path"]]


async def test_engine_guide_first_then_one_narrated_edit_and_no_second_call(narrated, caplog):
    caplog.set_level(logging.DEBUG)
    harness, model = await narrated([Reply.json(NARRATION)])
    await harness.merged(PR, delivery="n-1")
    assert [m for m, _ in comment_writes(harness)] == ["POST", "PATCH"]  # created by the engine, edited once
    (comment,) = harness.sandbox.comments(REPO, PR)
    assert "**A small change that keeps the default fields of the output as they were.**" in comment.body
    assert "Three tests now cover the new behaviour." in comment.body and "start_trainer_v2" not in comment.body  # the invention is dropped
    assert "narrated by qwen2.5-coder:7b" in comment.body
    assert parse_marker(comment.body).extra["narrated"]["model"] == "qwen2.5-coder:7b"
    assert len(model.requests) == 1 and model.authorizations == [f"Bearer {KEY}"]

    # A refresh (another delivery for the same head): the cached narration is published as is.
    resp = await harness.deliver(pr_delivery(harness.bundles[PR]), delivery="n-2")
    assert resp.status == 202
    from bot.app.server import wait_idle

    await wait_idle(harness.app)
    assert len(model.requests) == 1
    assert [m for m, _ in comment_writes(harness)] == ["POST", "PATCH"]
    assert harness.sandbox.comments(REPO, PR)[0].body == comment.body

    metrics = await (await harness.client.get("/metrics")).text()
    assert 'prguide_narrator_calls_total{outcome="ok"} 1.0' in metrics
    assert 'prguide_narrator_sentences_total{verdict="rejected"} 1.0' in metrics
    assert 'prguide_narrator_tokens_total{kind="prompt"} 120.0' in metrics
    assert KEY not in caplog.text


async def test_a_guide_that_is_safe_to_skip_is_not_narrated(narrated):
    harness, model = await narrated([Reply.json(NARRATION)], number=7406)  # a docs line: "Safe to skip"
    await harness.merged(7406, delivery="s-1")
    (comment,) = harness.sandbox.comments(REPO, 7406)
    assert "Safe to skip" in comment.body and "narrated by" not in comment.body
    assert not model.requests and [m for m, _ in comment_writes(harness)] == ["POST"]


@pytest.mark.parametrize("text, line", [("lang: zh\ndisabel: [size-xxl]\nnarrator: off\n", 2), ("lang: zh\nnarrator: offf\n", 2)])
async def test_a_typo_in_the_config_keeps_the_rest_and_never_turns_the_narrator_on(narrated, text, line):
    harness, model = await narrated([Reply.json(NARRATION)])
    harness.sandbox.set_file(REPO, ".github/prguide.yml", text)
    await harness.merged(PR, delivery="t-1")
    assert not model.requests  # the pull request's text never went to the model
    (comment,) = harness.sandbox.comments(REPO, PR)
    assert "narrated by" not in comment.body
    assert "已忽略问题涉及的内容" in comment.body and f"`.github/prguide.yml:{line}`" in comment.body  # in Chinese, naming FILE:LINE


async def command(harness, text: str, delivery: str):
    """Write ``text`` as a maintainer's comment and deliver its ``issue_comment.created`` event."""
    from bot.app.server import wait_idle

    owner, name = REPO.split("/")
    human = harness.sandbox.state.create_comment(owner, name, PR, text, user="maintainer", user_type="User")
    payload = harness.sandbox.state.issue_comment_event(human)
    assert (await harness.deliver(payload, delivery=delivery, event="issue_comment")).status == 202
    await wait_idle(harness.app)


async def test_why_shows_the_facts_each_narrated_sentence_cites_and_refresh_keeps_the_narration(narrated):
    harness, model = await narrated([Reply.json(NARRATION)])
    await harness.merged(PR, delivery="w-1")
    narrated_body = harness.sandbox.comments(REPO, PR)[0].body
    await command(harness, "/prguide why", "w-2")
    reply = harness.sandbox.comments(REPO, PR)[-1].body
    assert "Narrated sentences and the facts they cite" in reply and "- summary: cites F2 (" in reply
    await command(harness, "/prguide refresh", "w-3")
    assert harness.sandbox.comments(REPO, PR)[0].body == narrated_body and len(model.requests) == 1
