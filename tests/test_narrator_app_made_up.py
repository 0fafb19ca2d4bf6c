"""The narrated guide in the app on a made-up bug fix: what ``test_narrator_app`` checks on
a real pull request, where the corpus is absent. The engine's guide first, then one
narrated edit; the cache on a redelivery; ``/prguide why`` naming the facts each narrated
sentence cites; a failing model leaving the engine's guide.
"""

from __future__ import annotations

import pytest
from sandbox_helpers import app_private_key, made_up_fix  # noqa: F401
from test_narrator_app import KEY, PR, REPO, close_narrated, command, comment_writes, open_narrated

from bot.engine.marker import parse_marker
from bot.sandbox.llm import Reply

# On the made-up fix, F3 is the focus point on verl/utils/upload.py and F7 the factor
# "6 tests added"; start_trainer_v2 is in no fact, so its sentence is dropped.
NARRATION = {"summary": "Uploads are retried by send now {F3}.",
             "why_it_matters": ["Six tests now cover the retries {F7}.", "It uses start_trainer_v2 now {F3}."],
             "focus_reasons": {}}  # fmt: skip


@pytest.fixture
async def narrated(app_private_key, tmp_path):  # noqa: F811
    made: list = []

    async def make(script):
        return await open_narrated(app_private_key, tmp_path, made_up_fix(PR, repo=REPO, author="contributor-79"), script, made)

    yield make
    await close_narrated(made)


async def test_engine_guide_first_then_one_narrated_edit_kept_on_a_redelivery_and_cited_by_why(narrated):
    harness, model = await narrated([Reply.json(NARRATION)])
    await harness.merged(PR, delivery="n-1")
    assert [m for m, _ in comment_writes(harness)] == ["POST", "PATCH"]  # created by the engine, edited once
    (comment,) = harness.sandbox.comments(REPO, PR)
    assert "**Uploads are retried by send now.**" in comment.body
    assert "Six tests now cover the retries." in comment.body and "start_trainer_v2" not in comment.body
    assert parse_marker(comment.body).extra["narrated"]["model"] == "qwen2.5-coder:7b"
    assert len(model.requests) == 1 and model.authorizations == [f"Bearer {KEY}"]
    metrics = await (await harness.client.get("/metrics")).text()
    assert 'prguide_narrator_calls_total{outcome="ok"} 1.0' in metrics
    assert 'prguide_narrator_sentences_total{verdict="rejected"} 1.0' in metrics

    await harness.merged(PR, delivery="n-2")  # a redelivery: the cached narration, no second call
    assert len(model.requests) == 1 and [m for m, _ in comment_writes(harness)] == ["POST", "PATCH"]

    await command(harness, "/prguide why", "n-3")
    reply = harness.sandbox.comments(REPO, PR)[-1].body
    assert "Narrated sentences and the facts they cite" in reply and "- summary: cites F3 (" in reply
    await command(harness, "/prguide refresh", "n-4")
    assert harness.sandbox.comments(REPO, PR)[0].body == comment.body and len(model.requests) == 1


@pytest.mark.parametrize("reply", [Reply.error(500), Reply.error(429), Reply(content="{broken")])
async def test_a_failing_model_leaves_the_engine_guide(narrated, reply):
    harness, model = await narrated([reply])
    await harness.merged(PR, delivery="f-1")
    assert [m for m, _ in comment_writes(harness)] == ["POST"]
    assert "narrated by" not in harness.sandbox.comments(REPO, PR)[0].body
    metrics = await (await harness.client.get("/metrics")).text()
    assert "prguide_narrator_fallbacks_total{reason=" in metrics


async def test_narrator_off_in_the_repository_config_makes_no_call(narrated):
    harness, model = await narrated([Reply.json(NARRATION)])
    harness.sandbox.set_file(REPO, ".github/prguide.yml", "narrator: off\n")
    await harness.merged(PR, delivery="o-1")
    assert not model.requests and [m for m, _ in comment_writes(harness)] == ["POST"]
