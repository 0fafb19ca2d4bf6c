"""Publishing the guide: one comment, edited or left alone; labels added, styled and removed with care.

Most tests run against the sandbox. Removing labels needs GitHub's issue events and
styling needs "Update a label"; those are shown with a small scripted fake.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer
from sandbox_helpers import _no_sleep, app_private_key, factory, sandbox, start_sandbox, synthetic_bundle  # noqa: F401

from bot.app.fetch import fetch_snapshot
from bot.app.github import GitHubClient
from bot.app.publish import add_labels, find_guide_comment, publish_guide, react, remove_label, reply
from bot.engine.marker import MarkerState, parse_marker, render_marker
from bot.engine.rules.model import LabelSpec

BOT = "prguide[bot]"


@dataclass(frozen=True)
class StandInGuide:
    """The fields of ``bot.engine.build.Guide`` that publishing reads."""

    markdown: str
    labels: tuple[str, ...]
    label_specs: dict[str, LabelSpec] = field(default_factory=dict)
    state: MarkerState = MarkerState()


def make_guide(text: str, labels: tuple[str, ...] = (), specs: dict[str, LabelSpec] | None = None, human_added=()) -> Any:
    state = MarkerState(rules=("r1",), labels=labels, human_added=tuple(human_added))
    return StandInGuide(f"{render_marker(state)}\n{text}", labels, specs or {}, state)



def bot_comments(sandbox, repo, number):
    return [c for c in sandbox.comments(repo, number) if c.user == BOT]


async def test_merged_pull_request_costs_six_calls_in_all(sandbox, factory):
    bundle = synthetic_bundle(21, files=40)
    bundle["pull"]["changed_files"] = 40
    repo = sandbox.add_bundle(bundle)
    owner, name = repo.split("/")
    sandbox.state.create_label(owner, name, {"name": "type: fix", "color": "d73a4a", "description": "A bug fix"})
    client = factory.for_installation(1)

    snapshot = await fetch_snapshot(client, repo, 21, pull=bundle["pull"])
    guide = make_guide("Read `src/module_0000.py` first.", ("type: fix",), {"type: fix": LabelSpec("type: fix", "d73a4a", "A bug fix")})
    result = await publish_guide(client, repo, 21, guide, bot_login=BOT, current_labels=snapshot.labels)

    # files + reviews + review comments + list comments + add labels + create comment
    assert client.calls == 6 and result.calls == 3
    assert result.comment == "created" and result.labels_added == ("type: fix",)
    assert sandbox.labels(repo, 21) == ["type: fix"]
    [comment] = bot_comments(sandbox, repo, 21)
    assert comment.id == result.comment_id and comment.body == guide.markdown


async def test_publishing_twice_leaves_one_comment_and_edits_only_on_change(sandbox, factory):
    repo = sandbox.add_bundle(synthetic_bundle(22))
    first = await publish_guide(factory.for_installation(1), repo, 22, make_guide("v1", ("docs",)), bot_login=BOT, current_labels=())
    again = factory.for_installation(1)
    second = await publish_guide(again, repo, 22, make_guide("v1", ("docs",)), bot_login=BOT, current_labels=sandbox.labels(repo, 22))
    third = await publish_guide(factory.for_installation(1), repo, 22, make_guide("v2", ("docs",)), bot_login=BOT, current_labels=("docs",))

    assert (first.comment, second.comment, third.comment) == ("created", "unchanged", "edited")
    assert first.comment_id == second.comment_id == third.comment_id
    assert second.labels_added == () and again.calls == 1  # only the comment list
    [comment] = bot_comments(sandbox, repo, 22)
    assert comment.body.endswith("v2")
    assert sandbox.labels(repo, 22) == ["docs"]


async def test_a_redelivery_with_stale_labels_does_not_duplicate_anything(sandbox, factory):
    bundle = synthetic_bundle(23)
    repo = sandbox.add_bundle(bundle)
    guide = make_guide("same", ("area: ci",))
    await publish_guide(factory.for_installation(1), repo, 23, guide, bot_login=BOT, current_labels=())
    # the redelivered payload still shows no labels
    result = await publish_guide(factory.for_installation(1), repo, 23, guide, bot_login=BOT, current_labels=())
    assert result.comment == "unchanged" and result.labels_added == ()
    assert len(bot_comments(sandbox, repo, 23)) == 1
    assert sandbox.labels(repo, 23) == ["area: ci"]


async def test_a_human_quoting_the_marker_is_not_us(sandbox, factory):
    repo = sandbox.add_bundle(synthetic_bundle(24))
    owner, name = repo.split("/")
    quoted = f"Why did it say this?\n> {render_marker(MarkerState(labels=('x',)))}"
    human = sandbox.state.create_comment(owner, name, 24, quoted, user="alice", user_type="User")
    client = factory.for_installation(1)
    assert await find_guide_comment(client, repo, 24, bot_login=BOT) is None

    result = await publish_guide(client, repo, 24, make_guide("guide"), bot_login=BOT, current_labels=())
    assert result.comment == "created" and result.comment_id != human.id
    assert sandbox.state.comment(owner, name, human.id).body == quoted


async def test_labels_a_human_added_are_kept(sandbox, factory):
    bundle = synthetic_bundle(25)
    bundle["pull"]["labels"] = [{"name": "needs-backport"}]
    repo = sandbox.add_bundle(bundle)
    await publish_guide(factory.for_installation(1), repo, 25, make_guide("a", ("perf",)), bot_login=BOT, current_labels=["needs-backport"])
    await publish_guide(factory.for_installation(1), repo, 25, make_guide("b", ("perf",)), bot_login=BOT, current_labels=None)
    assert sorted(sandbox.labels(repo, 25)) == ["needs-backport", "perf"]


async def test_a_label_a_human_removed_is_not_put_back(sandbox, factory):
    repo = sandbox.add_bundle(synthetic_bundle(26))
    owner, name = repo.split("/")
    await publish_guide(factory.for_installation(1), repo, 26, make_guide("a", ("breaking", "docs")), bot_login=BOT, current_labels=())
    sandbox.state.remove_label(owner, name, 26, "breaking")
    result = await publish_guide(factory.for_installation(1), repo, 26, make_guide("b", ("breaking", "docs")), bot_login=BOT, current_labels=None)
    assert result.labels_added == () and sandbox.labels(repo, 26) == ["docs"]
    # ... unless a maintainer asks for it with a command
    asked = make_guide("c", ("breaking", "docs"), human_added=("breaking",))
    result = await publish_guide(factory.for_installation(1), repo, 26, asked, bot_login=BOT, current_labels=None)
    assert result.labels_added == ("breaking",)
    assert parse_marker(bot_comments(sandbox, repo, 26)[0].body).human_added == ("breaking",)


async def test_small_writes_for_commands(sandbox, factory):
    repo = sandbox.add_bundle(synthetic_bundle(27))
    owner, name = repo.split("/")
    client = factory.for_installation(1)
    comment_id = await reply(client, repo, 27, "Done: labels updated.")
    assert sandbox.state.comment(owner, name, comment_id).user == BOT
    await react(client, repo, comment_id, "rocket")
    on_issue = await add_labels(client, repo, 27, ["a b", "c/d"])
    assert sorted(label["name"] for label in on_issue) == ["a b", "c/d"]
    assert await remove_label(client, repo, 27, "c/d") is True
    assert await remove_label(client, repo, 27, "c/d") is False
    assert sandbox.labels(repo, 27) == ["a b"]
    with pytest.raises(ValueError):
        await react(client, repo, comment_id, "thumbsup")
    with pytest.raises(ValueError):
        await reply(client, repo, 27, "  ")


async def test_a_too_long_guide_is_refused_before_any_call(sandbox, factory):
    repo = sandbox.add_bundle(synthetic_bundle(28))
    client = factory.for_installation(1)
    with pytest.raises(ValueError, match="65536"):
        await publish_guide(client, repo, 28, make_guide("x" * 70000), bot_login=BOT, current_labels=())
    assert client.calls == 0


# ----- removal and styling, with a scripted GitHub that has issue events and label updates -------


class IssueFake:
    """One issue in one repository: comments, labels with looks, and label events."""

    def __init__(self):
        self.comments: list[dict] = []
        self.repo_labels: dict[str, dict] = {}
        self.on_issue: list[str] = []
        self.events: list[dict] = []
        self.seen: list[tuple[str, str]] = []
        #: What GitHub says about the app's writes: its bot user and the app (REST "List issue comments").
        self.bot = {"login": BOT, "id": 4242, "type": "Bot"}
        self.app = {"id": 77, "slug": "prguide"}
        #: Label looks are updated only once this many labels were added (all writers saw them grey).
        self.style_after_adds = 0
        self.adds = 0
        self.added = asyncio.Event()

    def label(self, name: str, actor: str, color: str = "ededed", description: str | None = None) -> None:
        self.repo_labels.setdefault(name.lower(), {"name": name, "color": color, "description": description})
        if name.lower() not in [n.lower() for n in self.on_issue]:
            self.on_issue.append(name)
        by_bot = actor == self.bot["login"]
        self.events.append({"event": "labeled", "label": {"name": name}, "actor": self.bot if by_bot else {"login": actor},
                            "performed_via_github_app": self.app if by_bot else None})  # fmt: skip

    def rename_app(self, slug: str) -> None:
        """Rename the app: GitHub shows its bot's new login on old comments and events too."""
        self.bot["login"], self.app["slug"] = f"{slug}[bot]", slug

    async def handle(self, request: web.Request) -> web.Response:
        self.seen.append((request.method, request.path))
        parts = request.path.strip("/").split("/")  # repos o r issues ...
        rest = parts[3:]
        if rest[:1] == ["issues"] and rest[2:] == ["comments"]:
            if request.method == "GET":
                return web.json_response(self.comments)
            body = (await request.json())["body"]
            self.comments.append({"id": len(self.comments) + 1, "body": body, "user": self.bot, "performed_via_github_app": self.app})
            return web.json_response(self.comments[-1], status=201)
        if rest[:2] == ["issues", "comments"] and request.method == "PATCH":
            comment = self.comments[int(rest[2]) - 1]
            comment["body"] = (await request.json())["body"]
            return web.json_response(comment)
        if rest[:1] == ["issues"] and rest[2:] == ["labels"] and request.method == "POST":
            for name in (await request.json())["labels"]:
                self.label(name, self.bot["login"])
            self.adds += 1
            if self.adds >= self.style_after_adds:
                self.added.set()
            return web.json_response([self.repo_labels[n.lower()] for n in self.on_issue])
        if rest[:1] == ["issues"] and rest[2:3] == ["labels"] and request.method == "DELETE":
            name = rest[3]
            if name.lower() not in [n.lower() for n in self.on_issue]:
                return web.json_response({"message": "Label does not exist"}, status=404)
            self.on_issue = [n for n in self.on_issue if n.lower() != name.lower()]
            return web.json_response([])
        if rest[:1] == ["issues"] and rest[2:] == ["events"]:
            return web.json_response(self.events)
        if rest[:1] == ["labels"] and request.method == "PATCH":
            await asyncio.wait_for(self.added.wait(), 30)
            data = await request.json()
            self.repo_labels[rest[1].lower()].update(data)
            return web.json_response(self.repo_labels[rest[1].lower()])
        return web.json_response({"message": "Not Found"}, status=404)


@pytest.fixture
async def fake():
    issue = IssueFake()
    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", issue.handle)
    server = TestServer(app, host="127.0.0.1")
    await server.start_server()
    async with aiohttp.ClientSession() as session:

        async def authorization() -> str:
            return "token t"

        issue.client = lambda: GitHubClient(session, authorization=authorization, api_url=str(server.make_url("")), sleep=_no_sleep)
        yield issue
    await server.close()


async def test_labels_prguide_added_that_no_longer_apply_are_removed(fake):
    await publish_guide(fake.client(), "o/r", 1, make_guide("a", ("area: ci", "type: fix")), bot_login=BOT, current_labels=())
    fake.label("wip", "alice")
    result = await publish_guide(fake.client(), "o/r", 1, make_guide("b", ("type: fix",)), bot_login=BOT, current_labels=fake.on_issue)
    assert result.labels_removed == ("area: ci",) and result.comment == "edited"
    assert fake.on_issue == ["type: fix", "wip"]
    assert ("DELETE", "/repos/o/r/issues/1/labels/area: ci") in fake.seen


async def test_a_label_a_human_put_back_is_not_removed(fake):
    await publish_guide(fake.client(), "o/r", 1, make_guide("a", ("area: ci",)), bot_login=BOT, current_labels=())
    fake.label("area: ci", "alice")  # removed and added again by a human, say
    result = await publish_guide(fake.client(), "o/r", 1, make_guide("b", ()), bot_login=BOT, current_labels=fake.on_issue)
    assert result.labels_removed == () and fake.on_issue == ["area: ci"]
    assert not any(method == "DELETE" for method, _ in fake.seen)


async def test_labels_a_maintainer_asked_for_are_not_removed(fake):
    earlier = make_guide("a", ("perf",), human_added=("perf",))
    await publish_guide(fake.client(), "o/r", 1, earlier, bot_login=BOT, current_labels=())
    result = await publish_guide(fake.client(), "o/r", 1, make_guide("b", ()), bot_login=BOT, current_labels=fake.on_issue)
    assert result.labels_removed == () and fake.on_issue == ["perf"]


async def test_a_renamed_app_edits_its_guide_instead_of_posting_another(fake):
    from bot.app.auth import BotIdentity

    cached = BotIdentity(BOT, app_id=77)  # the login the server fetched before the rename
    await publish_guide(fake.client(), "o/r", 1, make_guide("a", ("area: ci",)), bot_login=cached, current_labels=())
    fake.rename_app("guidebot")
    result = await publish_guide(fake.client(), "o/r", 1, make_guide("b", ()), bot_login=cached, current_labels=fake.on_issue)
    assert result.comment == "edited" and len(fake.comments) == 1  # found by app id, not by the stale login
    assert result.labels_removed == ("area: ci",)  # its own label too: the event names the app
    assert (await find_guide_comment(fake.client(), "o/r", 1, bot_login=BotIdentity("x[bot]", user_id=4242)))["id"] == 1


async def test_another_app_that_took_the_old_name_is_not_prguide(fake):
    from bot.app.auth import BotIdentity

    fake.comments.append({"id": 1, "body": make_guide("theirs").markdown, "user": {"login": BOT, "id": 999, "type": "Bot"},
                          "performed_via_github_app": {"id": 99, "slug": "prguide"}})  # fmt: skip
    result = await publish_guide(fake.client(), "o/r", 1, make_guide("ours"), bot_login=BotIdentity("guidebot[bot]", app_id=77), current_labels=())
    assert result.comment == "created" and fake.comments[0]["body"].endswith("theirs")


async def test_labels_github_just_created_get_their_colour_and_description(fake):
    fake.repo_labels["docs"] = {"name": "docs", "color": "0075ca", "description": "Documentation"}
    specs = {
        "docs": LabelSpec("docs", "c5def5", "ignored: the repository's look wins"),
        "area: rollout": LabelSpec("area: rollout", "#1D76DB", "Rollout workers"),
        "plain": LabelSpec("plain"),
    }
    result = await publish_guide(fake.client(), "o/r", 1, make_guide("a", ("docs", "area: rollout", "plain"), specs), bot_login=BOT, current_labels=())
    assert result.labels_styled == ("area: rollout",)
    assert fake.repo_labels["area: rollout"] == {"name": "area: rollout", "color": "1d76db", "description": "Rollout workers"}
    assert fake.repo_labels["docs"]["color"] == "0075ca"
    assert result.calls == 4  # list comments, add labels, style one label, create comment


async def test_jobs_of_one_repository_at_once_style_a_new_label_once(fake):
    # Both pull requests get the label while GitHub still shows it grey to each of them;
    # the repository's label is styled once, not once per job (each PATCH spends the write budget).
    fake.style_after_adds = 2
    specs = {"area: rollout": LabelSpec("area: rollout", "1d76db", "Rollout workers")}
    first, second = await asyncio.gather(*(
        publish_guide(fake.client(), "o/r", n, make_guide("a", ("area: rollout",), specs), bot_login=BOT, current_labels=())
        for n in (1, 2)
    ))  # fmt: skip
    assert fake.seen.count(("PATCH", "/repos/o/r/labels/area: rollout")) == 1
    assert sorted([first.labels_styled, second.labels_styled]) == [(), ("area: rollout",)]
    assert fake.repo_labels["area: rollout"]["color"] == "1d76db"


async def test_a_comment_looked_up_already_is_not_listed_again(sandbox, factory):
    repo = sandbox.add_bundle(synthetic_bundle(29))
    await publish_guide(factory.for_installation(1), repo, 29, make_guide("v1"), bot_login=BOT, current_labels=())
    client = factory.for_installation(1)
    found = await find_guide_comment(client, repo, 29, bot_login=BOT)
    result = await publish_guide(client, repo, 29, make_guide("v2"), bot_login=BOT, current_labels=(), existing=found)
    assert result.comment == "edited" and result.calls == 1  # just the PATCH
    # existing=None is the caller's word that there is no comment yet
    result = await publish_guide(factory.for_installation(1), repo, 29, make_guide("v3"), bot_login=BOT, current_labels=(), existing=None)
    assert result.comment == "created" and result.calls == 1
    with pytest.raises(ValueError, match="own guide comment"):
        await publish_guide(client, repo, 29, make_guide("v4"), bot_login=BOT, existing={"body": "hi", "user": {"login": "alice"}})
