"""Slash commands end to end: signed issue_comment deliveries through the real app and
worker pool, with the real engine and shipped rules, against the GitHub sandbox.

Everything talks HTTP over loopback. Jobs are awaited with the pool's ``wait_idle()``;
assertions read the sandbox's comments, labels, reactions and request log.

Each test runs twice: on a real merged verl pull request (skipped where the corpus is
absent), and on a made-up bug fix with the same traits (its author, ``type/fix``,
``tests``, ``size/M``).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from aiohttp.test_utils import TestClient, TestServer
from sandbox_helpers import APP_ID, app_private_key, made_up_fix, start_sandbox, synthetic_bundle  # noqa: F401

from bot.app.routing import default_router
from bot.app.server import STATE, create_app, wait_idle
from bot.app.settings import Settings
from bot.app.webhook import sign
from bot.commands.handler import COMMAND_ROUTE
from bot.engine.marker import parse_marker

SECRET = "commands secret"
REPO = "verl-project/verl"
PR = 7491  # 2 files; the shipped rules label it type/fix, tests, size/M
AUTHOR = "contributor-79"
OPEN_PR = 900001
MAINTAINER, STRANGER = "mo", "sam"


def router():
    r = default_router()
    if r.route("issue_comment", "created") is None:
        r.add(COMMAND_ROUTE)
    return r


async def no_wait(_seconds: float) -> None:
    """The GitHub client's sleep between retries: tests do not wait for real."""


class Harness:
    def __init__(self, client: TestClient, sandbox: Any, bundles: dict[int, dict]):
        self.client = client
        self.app = client.app
        self.sandbox = sandbox
        self.bundles = bundles
        self.deliveries = 0

    async def deliver(self, event: str, payload: dict) -> int:
        self.deliveries += 1
        body = json.dumps(payload).encode()
        resp = await self.client.post(
            "/webhook",
            data=body,
            headers={
                "X-GitHub-Event": event,
                "X-GitHub-Delivery": f"d-{self.deliveries}",
                "Content-Type": "application/json",
                "X-Hub-Signature-256": sign(SECRET, body),
            },
        )
        await wait_idle(self.app)
        return resp.status

    async def merge(self, number: int = PR) -> None:
        payload = self.sandbox.state.pull_request_event(*REPO.split("/"), number)
        assert await self.deliver("pull_request", payload) == 202

    async def comment(self, user: str, body: str, *, number: int = PR, user_type: str = "User") -> Any:
        """Write a comment as ``user`` on the sandbox and deliver its ``created`` event."""
        comment = self.sandbox.state.create_comment(*REPO.split("/"), number, body, user=user, user_type=user_type)
        self.last_status = await self.deliver("issue_comment", self.payload(comment, "created"))
        return comment

    async def edit(self, comment: Any, body: str) -> None:
        before = comment.body
        self.sandbox.state.edit_comment(*REPO.split("/"), comment.id, body)
        self.last_status = await self.deliver("issue_comment", self.payload(comment, "edited", before=before))

    def payload(self, comment: Any, action: str, *, before: str | None = None) -> dict:
        """The ``issue_comment`` payload GitHub sends for ``comment`` (see ``state.issue_comment_event``)."""
        return self.sandbox.state.issue_comment_event(comment, action, before=before)

    # ----- reading the sandbox -----

    def guide(self, number: int = PR) -> Any:
        guides = [c for c in self.sandbox.comments(REPO, number) if c.user == "prguide[bot]" and parse_marker(c.body)]
        assert len(guides) == 1, f"expected one guide comment, found {len(guides)}"
        return guides[0]

    def replies(self, number: int = PR) -> list[Any]:
        return [c for c in self.sandbox.comments(REPO, number) if c.user == "prguide[bot]" and not parse_marker(c.body)]

    def reactions(self, comment: Any) -> list[str]:
        return [r.content for r in self.sandbox.state.reactions.get(comment.id, []) if r.user == "prguide[bot]"]

    def labels(self, number: int = PR) -> list[str]:
        return sorted(self.sandbox.labels(REPO, number))

    def writes(self) -> list[dict]:
        return [r for r in self.sandbox.requests if r["method"] != "GET"]


@pytest.fixture(params=[pytest.param("verl", marks=pytest.mark.corpus), "made-up"])
async def harness(request, app_private_key, tmp_path):  # noqa: F811
    open_bundle = synthetic_bundle(OPEN_PR, repo=REPO, files=2)
    open_bundle["pull"].update(state="open", merged=False, merged_at=None)
    if request.param == "verl":
        merged = request.getfixturevalue("load_bundle_json")(PR)
    else:
        merged = made_up_fix(PR, repo=REPO, author=AUTHOR)
    bundles = {PR: merged, OPEN_PR: open_bundle}
    async with start_sandbox(
        app_private_key, bundles=list(bundles.values()), collaborators={MAINTAINER: "maintain", "rita": "read"}
    ) as sandbox:
        settings = Settings(
            app_id=APP_ID,
            private_key=app_private_key.decode(),
            webhook_secret=SECRET,
            api_url=sandbox.base_url,
            db_path=tmp_path / "prguide.db",
            workers=4,
        )
        client = TestClient(TestServer(create_app(settings, router=router(), client_options={"sleep": no_wait})))
        await client.start_server()
        try:
            yield Harness(client, sandbox, bundles)
        finally:
            await client.close()


async def test_maintainer_refresh_edits_the_one_comment(harness):
    await harness.merge()
    before_id, before_body = harness.guide().id, harness.guide().body
    harness.sandbox.set_file(REPO, ".github/prguide.yml", "rules:\n  - id: rollout\n    files: verl/**\n    labels: [area/rollout]\n")
    mark = len(harness.sandbox.requests)

    command = await harness.comment(MAINTAINER, "Rules changed, please redo.\n/prguide refresh")

    guide = harness.guide()
    assert guide.id == before_id and guide.body != before_body
    assert "area/rollout" in parse_marker(guide.body).labels
    assert "area/rollout" in harness.labels()
    assert harness.replies() == []  # success says +1, not a comment
    assert harness.reactions(command) == ["eyes", "+1"]
    new = harness.sandbox.requests[mark:]
    assert [r["status"] for r in new if r["method"] == "PATCH" and "/issues/comments/" in r["path"]] == [200]
    assert not any(r["method"] == "POST" and r["path"].endswith("/comments") for r in new)
    assert harness.app[STATE].store.counts()["done"] == 2


async def test_stranger_cannot_relabel_and_is_told_why(harness):
    await harness.merge()
    labels_before = harness.labels()
    mark = len(harness.sandbox.requests)

    command = await harness.comment(STRANGER, "/prguide label add shiny")

    assert harness.labels() == labels_before
    assert not any("/labels" in r["path"] for r in harness.sandbox.requests[mark:] if r["method"] != "GET")
    (reply,) = harness.replies()
    assert "**sam**" in reply.body and "@sam" not in reply.body
    assert "only people with write access" in reply.body
    assert "`/prguide label add shiny`" in reply.body
    assert harness.reactions(command) == ["eyes", "confused"]
    permission_checks = [r for r in harness.sandbox.requests if r["path"].endswith(f"/collaborators/{STRANGER}/permission")]
    assert len(permission_checks) == 1


async def test_command_in_a_quote_reply_does_nothing(harness):
    await harness.merge()
    mark = len(harness.sandbox.requests)
    command = await harness.comment(STRANGER, "> /prguide label add shiny\n\nWhy would anyone do that?")
    assert harness.sandbox.requests[mark:] == [] or all(r["method"] == "GET" for r in harness.sandbox.requests[mark:])
    assert harness.reactions(command) == []
    assert harness.replies() == []


async def test_prguides_own_comment_is_not_obeyed(harness):
    await harness.merge()
    mark = len(harness.sandbox.requests)
    # A reply of prguide's quoting a command, and an edit of its guide, both by the bot.
    own = await harness.comment("prguide[bot]", "/prguide label add shiny\n/prguide refresh", user_type="Bot")
    assert harness.last_status == 200  # ignored at the door, never queued
    await harness.edit(harness.guide(), harness.guide().body + "\n/prguide lang zh")
    assert harness.last_status == 200
    assert harness.sandbox.requests[mark:] == []
    assert harness.reactions(own) == []
    assert "shiny" not in harness.labels()


async def test_label_remove_then_refresh_keeps_it_removed(harness):
    await harness.merge()
    assert "size/M" in harness.labels()

    removal = await harness.comment(MAINTAINER, "/prguide label remove size/M")
    assert "size/M" not in harness.labels()
    state = parse_marker(harness.guide().body)
    assert state.human_removed == ("size/M",)
    assert harness.reactions(removal) == ["eyes", "+1"]

    await harness.comment(MAINTAINER, "/prguide refresh")
    assert "size/M" not in harness.labels()
    assert parse_marker(harness.guide().body).human_removed == ("size/M",)
    # A merge redelivery does not bring it back either.
    await harness.merge()
    assert "size/M" not in harness.labels()
    # One permission lookup served both commands (cached for a minute).
    checks = [r for r in harness.sandbox.requests if r["path"].endswith(f"/collaborators/{MAINTAINER}/permission")]
    assert len(checks) == 1


async def test_label_add_with_spaces_and_slash_then_remove(harness):
    await harness.merge()
    await harness.comment(MAINTAINER, '/prguide label add "good first/read?" docs')
    assert {"good first/read?", "docs"} <= set(harness.labels())
    assert parse_marker(harness.guide().body).human_added == ("good first/read?", "docs")

    await harness.comment(MAINTAINER, '/prguide label remove "good first/read?"')
    assert "good first/read?" not in harness.labels() and "docs" in harness.labels()
    state = parse_marker(harness.guide().body)
    assert state.human_added == ("docs",) and state.human_removed == ("good first/read?",)
    deletes = [r for r in harness.writes() if r["method"] == "DELETE"]
    assert any(r["path"].endswith("/labels/good%20first%2Fread%3F") and r["status"] == 200 for r in deletes)


async def test_author_switches_language_to_chinese(harness):
    await harness.merge()
    assert parse_marker(harness.guide().body).lang == "en"
    command = await harness.comment(AUTHOR, "@prguide lang zh")
    body = harness.guide().body
    assert parse_marker(body).lang == "zh"
    assert "阅读指南" in body
    assert harness.reactions(command) == ["eyes", "+1"]
    # Not a collaborator, but the author: no permission lookup was needed.
    assert not any("/collaborators/" in r["path"] for r in harness.sandbox.requests)

    await harness.comment(MAINTAINER, "/prguide refresh")
    assert parse_marker(harness.guide().body).lang == "zh"


async def test_why_answers_anyone_in_the_guides_language(harness):
    await harness.merge()
    mark = len(harness.sandbox.requests)
    command = await harness.comment(STRANGER, "/prguide why\n/prguide why size/M")
    (reply,) = harness.replies()
    assert "`type/fix` ← rule `type-fix`" in reply.body
    assert "Importance" in reply.body and "every merged PR starts at 1" in reply.body
    assert "Why `size/M`:" in reply.body
    assert harness.reactions(command) == ["eyes", "+1"]
    writes = [r for r in harness.sandbox.requests[mark:] if r["method"] != "GET"]
    assert [r["path"].rsplit("/", 1)[-1] for r in writes] == ["reactions", "comments", "reactions"]  # the guide is untouched


async def test_edited_comment_runs_only_the_added_command(harness):
    await harness.merge()
    command = await harness.comment(MAINTAINER, "/prguide label add docs")
    assert "docs" in harness.labels()
    await harness.comment(MAINTAINER, "/prguide label remove docs")
    assert "docs" not in harness.labels()

    await harness.edit(command, "/prguide label add docs\n/prguide help")
    assert "docs" not in harness.labels()  # the old command did not run again
    (reply,) = harness.replies()
    assert "prguide commands" in reply.body


async def test_unknown_command_gets_usage_and_confused(harness):
    await harness.merge()
    command = await harness.comment(MAINTAINER, "/prguide frobnicate\n/prguide lang fr")
    (reply,) = harness.replies()
    assert "there is no command `frobnicate`" in reply.body
    assert "`fr` is not a language" in reply.body
    assert "Usage:" in reply.body
    assert harness.reactions(command) == ["eyes", "confused"]


async def test_open_pull_request_gets_a_preview_guide(harness):
    command = await harness.comment(MAINTAINER, "/prguide refresh", number=OPEN_PR)
    guide = harness.guide(OPEN_PR)
    assert "not merged yet" in guide.body and "preview" in guide.body
    assert harness.reactions(command) == ["eyes", "+1"]


async def test_github_refusal_is_reported_not_silent(harness):
    await harness.merge()
    harness.sandbox.add_faults([{"method": "POST", "path": f"/repos/{REPO}/issues/{PR}/labels", "status": 422, "times": 1}])
    command = await harness.comment(MAINTAINER, "/prguide label add docs")
    (reply,) = harness.replies()
    assert "Changing the labels failed: GitHub refused the change (422" in reply.body
    assert harness.reactions(command) == ["eyes", "confused"]
    # The guide does not claim a label GitHub refused.
    assert "docs" not in harness.labels()
    assert parse_marker(harness.guide().body).human_added == ()
    assert harness.app[STATE].store.counts()["done"] == 2


async def test_a_refused_stranger_is_answered_once_not_every_time(harness):
    await harness.merge()
    first = await harness.comment(STRANGER, "/prguide label add shiny")
    second = await harness.comment(STRANGER, "/prguide label add shinier")
    assert len(harness.replies()) == 1  # no reply flood from one person
    assert harness.reactions(first) == ["eyes", "confused"]
    assert harness.reactions(second) == ["eyes", "confused"]


async def test_a_command_whose_comment_was_deleted_before_it_ran_is_withdrawn(harness):
    await harness.merge()
    guide_before = harness.guide().body
    comment = harness.sandbox.state.create_comment(*REPO.split("/"), PR, '/prguide label add "second thoughts"', user=MAINTAINER)
    payload = harness.payload(comment, "created")
    harness.sandbox.state.delete_comment(*REPO.split("/"), comment.id)  # deleted before the job runs
    mark = len(harness.sandbox.requests)
    assert await harness.deliver("issue_comment", payload) == 202

    assert "second thoughts" not in harness.labels()
    assert harness.guide().body == guide_before
    assert harness.replies() == []
    writes = [r for r in harness.sandbox.requests[mark:] if r["method"] != "GET"]
    assert [(r["path"].rsplit("/", 1)[-1], r["status"]) for r in writes] == [("reactions", 404)]


async def test_a_comment_deleted_while_its_commands_run_still_gets_them_done(harness):
    await harness.merge()
    # The first reaction lands; the comment is deleted once the labels are added.
    comment = harness.sandbox.state.create_comment(*REPO.split("/"), PR, '/prguide label add "kept"', user=MAINTAINER)
    payload = harness.payload(comment, "created")
    real_add = harness.sandbox.state.add_labels

    def add_then_delete(*args, **kwargs):
        result = real_add(*args, **kwargs)
        if comment.id in harness.sandbox.state.comments:
            harness.sandbox.state.delete_comment(*REPO.split("/"), comment.id)
        return result

    harness.sandbox.state.add_labels = add_then_delete
    assert await harness.deliver("issue_comment", payload) == 202
    assert "kept" in harness.labels()
    assert harness.app[STATE].store.counts()["parked"] == 0


async def test_help_answers_in_the_language_chosen_for_the_pr(harness):
    await harness.merge()
    await harness.comment(MAINTAINER, "/prguide lang zh")
    await harness.comment(MAINTAINER, "/prguide help")
    assert "prguide 命令" in harness.replies()[-1].body


async def test_older_enterprise_payload_without_merged_at_reads_the_pull_request(harness):
    # GitHub Enterprise Server releases before merged_at was added send issue.pull_request
    # without the key: that says nothing about the merge, so GitHub is asked.
    await harness.merge()
    before = harness.guide().body
    harness.sandbox.set_file(REPO, ".github/prguide.yml", "lang: zh\n")
    comment = harness.sandbox.state.create_comment(*REPO.split("/"), PR, "/prguide refresh", user=MAINTAINER)
    payload = harness.payload(comment, "created")
    del payload["issue"]["pull_request"]["merged_at"]
    assert await harness.deliver("issue_comment", payload) == 202

    assert harness.reactions(comment) == ["eyes", "+1"]
    assert harness.replies() == []  # no "closed without being merged" refusal
    assert harness.guide().body != before and "阅读指南" in harness.guide().body
    assert any(r["method"] == "GET" and r["path"] == f"/repos/{REPO}/pulls/{PR}" for r in harness.sandbox.requests)


async def test_refresh_without_contents_permission_still_rebuilds_and_says_why(harness):
    await harness.merge()
    harness.sandbox.set_permissions({"contents": None})
    command = await harness.comment(MAINTAINER, "/prguide refresh")
    assert harness.reactions(command) == ["eyes", "+1"]
    body = harness.guide().body
    assert body.count("could not be read") == 1 and "**Contents: read**" in body


# ----- commands in reviews and inline review comments ----------------------------------


def review_payload(harness, user: str, body: str, *, user_type: str = "User", repo: str = REPO, number: int = PR) -> dict:
    """Submit a review by ``user`` on the sandbox; the ``pull_request_review.submitted`` payload GitHub sends."""
    owner, name = repo.split("/")
    review = harness.sandbox.state.create_review(owner, name, number, body, user=user, user_type=user_type)
    return harness.sandbox.state.review_event(owner, name, number, review["id"])


def review_comment_payload(harness, comment_id: int, *, repo: str = REPO) -> dict:
    """The ``pull_request_review_comment.created`` payload GitHub sends for a review comment on the sandbox."""
    return harness.sandbox.state.review_comment_event(*repo.split("/"), comment_id)


def review_reactions(harness, comment_id: int) -> list[str]:
    return [r.content for r in harness.sandbox.state.review_reactions.get(comment_id, []) if r.user == "prguide[bot]"]


def thread_replies(harness, comment_id: int) -> list[dict]:
    stored = harness.sandbox.state.repo(*REPO.split("/")).pulls[PR]["review_comments"]
    return [c for c in stored if c.get("in_reply_to_id") == comment_id]


async def test_a_command_in_a_review_body_runs_and_is_answered_on_the_pull_request(harness):
    await harness.merge()
    harness.sandbox.set_file(REPO, ".github/prguide.yml", "lang: zh\n")
    mark = len(harness.sandbox.requests)
    payload = review_payload(harness, MAINTAINER, "Looks good.\n\n/prguide refresh")
    assert await harness.deliver("pull_request_review", payload) == 202

    assert "阅读指南" in harness.guide().body
    (reply,) = harness.replies()
    assert "**mo**" in reply.body and "`/prguide refresh`" in reply.body
    # Reviews have no reactions API: nothing was sent there.
    assert not any("reactions" in r["path"] for r in harness.sandbox.requests[mark:])


async def test_a_command_in_an_inline_comment_gets_reactions_and_a_thread_reply(harness):
    await harness.merge()
    state = harness.sandbox.state
    first = state.create_review_comment(*REPO.split("/"), PR, "Hmm.", user="rita")
    command = state.create_review_comment(*REPO.split("/"), PR, "/prguide label add docs", user=MAINTAINER, in_reply_to=first["id"])
    payload = review_comment_payload(harness, command["id"])
    assert await harness.deliver("pull_request_review_comment", payload) == 202
    assert "docs" in harness.labels()
    assert review_reactions(harness, command["id"]) == ["eyes", "+1"]
    assert harness.replies() == []

    # A stranger's refused command is answered in the thread, not on the pull request.
    mine = state.create_review_comment(*REPO.split("/"), PR, "/prguide label add shiny", user=STRANGER)
    payload = review_comment_payload(harness, mine["id"])
    assert await harness.deliver("pull_request_review_comment", payload) == 202
    assert "shiny" not in harness.labels()
    (answer,) = thread_replies(harness, mine["id"])
    assert answer["user"]["login"] == "prguide[bot]" and "only people with write access" in answer["body"]
    assert review_reactions(harness, mine["id"]) == ["eyes", "confused"]
    assert harness.replies() == []


async def test_review_commands_from_bots_or_deleted_comments_do_nothing(harness):
    await harness.merge()
    mark = len(harness.sandbox.requests)
    bot_review = review_payload(harness, "helper[bot]", "/prguide refresh", user_type="Bot")
    assert await harness.deliver("pull_request_review", bot_review) == 200
    assert harness.sandbox.requests[mark:] == []

    state = harness.sandbox.state
    gone = state.create_review_comment(*REPO.split("/"), PR, '/prguide label add "second thoughts"', user=MAINTAINER)
    payload = review_comment_payload(harness, gone["id"])
    state.delete_review_comment(*REPO.split("/"), gone["id"])
    assert await harness.deliver("pull_request_review_comment", payload) == 202
    assert "second thoughts" not in harness.labels()
    writes = [r for r in harness.sandbox.requests[mark:] if r["method"] != "GET"]
    assert [(r["path"].rsplit("/", 1)[-1], r["status"]) for r in writes] == [("reactions", 404)]


async def test_maintainer_backfill_stores_guides_without_commenting(harness, monkeypatch):
    from bot.features import backfill

    monkeypatch.setattr(backfill, "pull_spacing", lambda budget, now: 0.0)
    numbers = harness.sandbox.state.add_merged_pulls(REPO, 4, start=80001)
    await harness.comment("rita", "/prguide backfill 3")
    assert "write access" in harness.replies()[-1].body
    await harness.comment(MAINTAINER, "/prguide backfill 3\n/prguide backfill")
    reply = harness.replies()[-1].body
    assert "Backfill queued" in reply and "last 3 merged pull requests" in reply and reply.count("Backfill queued") == 1
    guides = harness.app[STATE].services.guides
    assert [n for n in numbers if guides.get(REPO, n) is not None] == numbers[1:]  # the three merged last
    assert all(harness.sandbox.comments(REPO, n) == [] for n in numbers)
    await harness.comment(MAINTAINER, "/prguide backfill 0")
    assert "from 1 to 1,000, not `0`" in harness.replies()[-1].body


async def test_a_refresh_on_a_repository_that_wants_no_comment_posts_none(harness):
    # `comment: off` holds for commands too: the author's refresh updates labels, posts nothing.
    harness.sandbox.set_file(REPO, ".github/prguide.yml", "comment: off\n")
    await harness.merge()
    assert [c for c in harness.sandbox.comments(REPO, 7491) if c.user == "prguide[bot]"] == []
    await harness.comment(AUTHOR, "/prguide refresh")
    assert [c for c in harness.sandbox.comments(REPO, 7491) if c.user == "prguide[bot]" and "Reading guide" in c.body] == []
