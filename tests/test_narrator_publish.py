"""``replace_comment_body`` and the narration job's early exits, with a fake GitHub client."""

from __future__ import annotations

import time

import pytest

from bot.app.errors import GiveUp
from bot.app.github import NotFound
from bot.app.metrics import create_metrics
from bot.app.publish import replace_comment_body
from bot.app.routing import JobContext, Services
from bot.app.settings import Settings
from bot.feature_support import body_digest, narration_key
from bot.features.narrator import handle_narrate
from bot.engine.marker import MarkerState, render_marker
from tests.narrator_helpers import DATA

BOT = "prguide[bot]"
ENGINE = f"{render_marker(MarkerState(engine='test-1'))}\nguide"


class FakeClient:
    def __init__(self, body: str | None, user: str = BOT, patch_missing: bool = False):
        self.body, self.user, self.patch_missing = body, user, patch_missing
        self.patches: list[str] = []
        self.calls = 0

    async def getitem(self, url, url_vars=None, **kw):
        if self.body is None:
            raise NotFound("Not Found")
        return {"id": 5, "body": self.body, "user": {"login": self.user}}

    async def patch(self, url, url_vars=None, *, data, **kw):
        if self.patch_missing:
            raise NotFound("Not Found")
        self.patches.append(data["body"])
        self.body = data["body"]
        return {"id": 5}


def expect(text: str) -> bool:
    return text == ENGINE


@pytest.mark.parametrize(
    ("client", "outcome", "patched"),
    [
        (FakeClient(ENGINE), "edited", 1),
        (FakeClient("new"), "unchanged", 0),
        (FakeClient(ENGINE + " changed meanwhile"), "stale", 0),
        (FakeClient(ENGINE, user="someone"), "stale", 0),
        (FakeClient(None), "gone", 0),
        (FakeClient(ENGINE, patch_missing=True), "gone", 0),
    ],
)
async def test_replace_comment_body(client, outcome, patched):
    assert await replace_comment_body(client, "o/r", 5, expected=expect, body="new", bot_login=BOT) == outcome
    assert len(client.patches) == patched


async def test_replace_comment_body_refuses_an_oversized_body():
    with pytest.raises(ValueError, match="GitHub allows"):
        await replace_comment_body(FakeClient(ENGINE), "o/r", 5, expected=expect, body="x" * 70000, bot_login=BOT)


class Job:
    def __init__(self, data):
        self.data, self.delivery_id, self.installation_id, self.attempts = data, "narrate:d", 1, 1


def ctx(settings: Settings, client) -> JobContext:
    c = JobContext(Services(settings, clients=None, auth=None, rules=None, metrics=create_metrics()), None)
    c._client = client  # the job's GitHub client, as the worker pool sets it
    return c


def payload(**more):
    return {"repository": "o/r", "number": 1, "comment_id": 5, "head_sha": "a", "guide": DATA, "queued_at": time.time(), **more}


@pytest.mark.parametrize(
    ("settings", "data", "body", "outcome"),
    [
        ({}, payload(), ENGINE, "off"),
        ({"llm_url": "http://127.0.0.1:9/v1", "llm_model": "m"}, payload(queued_at=0), ENGINE, "expired"),
        ({"llm_url": "http://127.0.0.1:9/v1", "llm_model": "m"}, payload(), "no marker here", "stale"),
        ({"llm_url": "http://127.0.0.1:9/v1", "llm_model": "m"}, payload(), ENGINE.replace("test-1", "old-engine"), "stale"),
        # A newer guide of the same engine is up: the older narration's facts are not its facts.
        ({"llm_url": "http://127.0.0.1:9/v1", "llm_model": "m"}, payload(body=body_digest(ENGINE)), ENGINE + "\nnewer", "stale"),
    ],
)
async def test_narration_job_exits_early_without_a_model_call(tmp_path, settings, data, body, outcome):
    s = Settings(app_id=1, private_key="k", webhook_secret="s", db_path=tmp_path / "db", **settings)
    c = ctx(s, FakeClient(body))
    await handle_narrate(Job(data), c)
    assert c.outcome == outcome


async def test_narration_job_without_a_guide_gives_up(tmp_path):
    s = Settings(app_id=1, private_key="k", webhook_secret="s", db_path=tmp_path / "db")
    with pytest.raises(GiveUp):
        await handle_narrate(Job({"comment_id": 5}), ctx(s, FakeClient(ENGINE)))


def test_narrations_have_a_key_of_their_own():
    assert narration_key("o/r", 1) != "o/r#1" and narration_key("o/r", 1).startswith("o/r#1")
