"""The sandbox's "Update a label" and "List issue events" over loopback, and prguide's publishing against them."""

from __future__ import annotations

import time
from types import SimpleNamespace
from urllib.parse import quote, unquote

import aiohttp
import pytest
from sandbox_helpers import APP_ID, app_private_key, make_app_jwt, http, start_sandbox, synthetic_bundle  # noqa: F401

from bot.app.auth import AppAuth
from bot.app.github import ClientFactory
from bot.app.publish import publish_guide
from bot.engine.marker import MarkerState, render_marker
from bot.engine.rules.model import LabelSpec
from bot.sandbox import ApiError
from bot.sandbox.state import iso

REPO = "octo-org/demo"
API = f"/repos/{REPO}"
BOT = "prguide[bot]"
@pytest.fixture
def now() -> float:
    """A frozen clock at the real time the test starts (not at import: prguide's own app
    auth signs JWTs with the real time, and the sandbox refuses an ``iat`` ahead of its clock)."""
    return float(int(time.time()))


@pytest.fixture
async def sandbox(app_private_key, now):  # noqa: F811
    bundle = synthetic_bundle(7)
    bundle["pull"]["labels"] = [{"name": "triaged", "color": "0e8a16"}]
    async with start_sandbox(app_private_key, bundles=[bundle, synthetic_bundle(8)], clock=lambda: now) as box:
        yield box


@pytest.fixture
async def auth(http, app_private_key, now) -> dict[str, str]:  # noqa: F811
    jwt = make_app_jwt(app_private_key, now=now)
    resp = await http.post("/app/installations/1/access_tokens", headers={"Authorization": f"Bearer {jwt}"})
    assert resp.status == 201
    return {"Authorization": f"token {(await resp.json())['token']}"}


def label_url(name: str) -> str:
    return f"{API}/labels/{quote(name, safe='')}"


async def events_of(http, auth, number: int) -> list[dict]:
    resp = await http.get(f"{API}/issues/{number}/events", headers=auth)
    assert resp.status == 200
    return await resp.json()


# ----- Update a label -----------------------------------------------------------------


async def test_update_label_gives_a_grey_label_its_colour_and_description(http, auth):
    await http.post(f"{API}/issues/7/labels", json={"labels": ["area: rollout"]}, headers=auth)
    resp = await http.patch(label_url("area: rollout"), json={"color": "1D76DB", "description": "Rollout workers"}, headers=auth)
    assert resp.status == 200
    body = await resp.json()
    assert (body["name"], body["color"], body["description"]) == ("area: rollout", "1d76db", "Rollout workers")
    on_issue = await (await http.get(f"{API}/issues/7/labels", headers=auth)).json()
    assert [(label["name"], label["color"]) for label in on_issue] == [("triaged", "0e8a16"), ("area: rollout", "1d76db")]


async def test_update_label_renames_it_everywhere(http, auth, sandbox):
    await http.post(f"{API}/issues/7/labels", json={"labels": ["bug"]}, headers=auth)
    await http.post(f"{API}/issues/8/labels", json={"labels": ["bug"]}, headers=auth)
    resp = await http.patch(label_url("BUG"), json={"new_name": "kind: bug"}, headers=auth)
    assert resp.status == 200 and (await resp.json())["color"] == "ededed"
    assert sandbox.labels(REPO, 7) == ["triaged", "kind: bug"] and sandbox.labels(REPO, 8) == ["kind: bug"]
    assert (await http.get(label_url("bug"), headers=auth)).status == 404
    clash = await http.patch(label_url("kind: bug"), json={"new_name": "Triaged"}, headers=auth)
    assert clash.status == 422 and (await clash.json())["errors"][0]["code"] == "already_exists"


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({"color": "blue", "description": "ok"}, "color"),
        ({"description": "x" * 101, "color": "ffffff"}, "description"),
        ({"new_name": "x" * 51, "color": "ffffff"}, "name"),
    ],
)
async def test_a_bad_update_is_422_and_changes_nothing(http, auth, sandbox, data, field):
    resp = await http.patch(label_url("triaged"), json=data, headers=auth)
    assert resp.status == 422
    assert (await resp.json())["errors"][0]["field"] == field
    label = sandbox.state.label("octo-org", "demo", "triaged")
    assert (label.name, label.color, label.description) == ("triaged", "0e8a16", None)


async def test_updating_a_missing_label_is_404(http, auth):
    resp = await http.patch(label_url("never"), json={"color": "ffffff"}, headers=auth)
    assert resp.status == 404
    assert (await resp.json())["documentation_url"].endswith("#update-a-label")


# ----- List issue events ---------------------------------------------------------------


async def test_label_changes_through_the_api_are_events_by_the_bot(http, auth, now):
    await http.post(f"{API}/issues/7/labels", json={"labels": ["docs", "size: S", "docs"]}, headers=auth)
    await http.delete(f"{API}/issues/7/labels/{quote('size: S', safe='')}", headers=auth)
    await http.put(f"{API}/issues/7/labels", json={"labels": ["docs", "c"]}, headers=auth)
    events = await events_of(http, auth, 7)
    assert [(e["event"], e["label"]["name"]) for e in events] == [
        ("labeled", "docs"),
        ("labeled", "size: S"),
        ("unlabeled", "size: S"),
        ("unlabeled", "triaged"),  # set labels took it off
        ("labeled", "c"),
    ]
    assert {(e["actor"]["login"], e["actor"]["type"]) for e in events} == {(BOT, "Bot")}
    assert events[3]["label"] == {"name": "triaged", "color": "0e8a16"}
    assert all(e["created_at"] == iso(now) for e in events)
    ids = [e["id"] for e in events]
    assert ids == sorted(set(ids))
    assert {"id", "node_id", "url", "actor", "event", "commit_id", "commit_url", "created_at", "label"} <= set(events[0])
    assert await events_of(http, auth, 8) == []


async def test_an_event_keeps_the_label_as_it_looked_then(http, auth):
    await http.post(f"{API}/issues/8/labels", json={"labels": ["perf"]}, headers=auth)
    await http.patch(label_url("perf"), json={"new_name": "performance", "color": "fbca04"}, headers=auth)
    [event] = await events_of(http, auth, 8)
    assert event["label"] == {"name": "perf", "color": "ededed"}


async def test_issue_events_are_paginated(http, auth):
    for i in range(5):
        await http.post(f"{API}/issues/8/labels", json={"labels": [f"l{i}"]}, headers=auth)
    first = await http.get(f"{API}/issues/8/events?per_page=2", headers=auth)
    assert 'rel="next"' in first.headers["Link"] and 'rel="last"' in first.headers["Link"]
    names = [e["label"]["name"] for e in await first.json()]
    last = await http.get(f"{API}/issues/8/events?per_page=2&page=3", headers=auth)
    names += [e["label"]["name"] for e in await last.json()]
    assert names == ["l0", "l1", "l4"]


async def test_issue_events_need_an_installation_token_and_a_known_issue(http, auth):
    assert (await http.get(f"{API}/issues/8/events")).status == 401
    assert (await http.get(f"{API}/issues/999/events", headers=auth)).status == 404


# ----- changing labels as a person --------------------------------------------------------


async def test_a_person_changes_labels_through_the_control_api(http, auth, sandbox):
    resp = await http.post("/_sandbox/labels", json={"repo": REPO, "number": 7, "user": "alice", "add": ["wip"], "remove": ["triaged"]})
    assert resp.status == 200
    assert [label["name"] for label in await resp.json()] == ["wip"]
    events = await events_of(http, auth, 7)
    assert [(e["event"], e["label"]["name"], e["actor"]["login"], e["actor"]["type"]) for e in events] == [
        ("unlabeled", "triaged", "alice", "User"),
        ("labeled", "wip", "alice", "User"),
    ]


async def test_a_bad_control_request_changes_nothing(http, sandbox):
    missing = await http.post("/_sandbox/labels", json={"repo": REPO, "number": 7, "user": "alice", "add": ["x"], "remove": ["absent"]})
    assert missing.status == 404
    malformed = await http.post("/_sandbox/labels", json={"repo": REPO, "number": 7, "user": "alice", "add": "x"})
    assert malformed.status == 400
    nobody = await http.post("/_sandbox/labels", json={"repo": REPO, "number": 7, "add": ["x"]})
    assert nobody.status == 400
    assert sandbox.labels(REPO, 7) == ["triaged"] and sandbox.label_events(REPO, 7) == []


async def test_the_python_handle_changes_labels_as_a_person(sandbox):
    assert sandbox.change_labels(REPO, 8, "bob", add=["docs"]) == ["docs"]
    assert sandbox.change_labels(REPO, 8, "bob", add=["Docs"]) == ["docs"]  # already there: no event
    assert sandbox.change_labels(REPO, 8, "carol", remove=["DOCS"], add=["docs"]) == ["docs"]
    assert [(e.event, e.actor) for e in sandbox.label_events(REPO, 8)] == [
        ("labeled", "bob"),
        ("unlabeled", "carol"),
        ("labeled", "carol"),
    ]
    with pytest.raises(ApiError) as raised:
        sandbox.change_labels(REPO, 8, "bob", remove=["gone"])
    assert raised.value.status == 404
    sandbox.reset()
    assert sandbox.label_events(REPO, 8) == []


# ----- publishing against the sandbox --------------------------------------------------------


def make_guide(text: str, labels: tuple[str, ...], specs: dict[str, LabelSpec] | None = None):
    """A stand-in for ``bot.engine.build.Guide`` with the fields publishing reads."""
    state = MarkerState(rules=("r1",), labels=labels)
    return SimpleNamespace(markdown=f"{render_marker(state)}\n{text}", labels=labels, label_specs=specs or {}, state=state)


async def _no_sleep(_seconds: float) -> None:
    return None


@pytest.fixture
async def factory(sandbox, app_private_key):  # noqa: F811
    async with aiohttp.ClientSession() as session:
        auth = AppAuth(str(APP_ID), app_private_key.decode(), api_url=sandbox.base_url, session=session)
        yield ClientFactory(auth, session=session, sleep=_no_sleep)


async def test_publishing_colours_the_labels_github_just_created(sandbox, factory):
    sandbox.state.create_label("octo-org", "demo", {"name": "docs", "color": "0075ca", "description": "Documentation"})
    specs = {
        "docs": LabelSpec("docs", "c5def5", "the repository's own look wins"),
        "area: rollout": LabelSpec("area: rollout", "#1D76DB", "Rollout workers"),
        "plain": LabelSpec("plain"),
    }
    guide = make_guide("a", ("docs", "area: rollout", "plain"), specs)
    result = await publish_guide(factory.for_installation(1), REPO, 8, guide, bot_login=BOT, current_labels=())

    assert result.labels_styled == ("area: rollout",)
    patches = [(unquote(r["path"]), r["status"]) for r in sandbox.requests if r["method"] == "PATCH"]
    assert patches == [(f"{API}/labels/area: rollout", 200)]
    looks = {label.name: (label.color, label.description) for label in sandbox.state.repo_labels("octo-org", "demo")}
    assert looks["area: rollout"] == ("1d76db", "Rollout workers")
    assert looks["docs"] == ("0075ca", "Documentation") and looks["plain"] == ("ededed", None)


async def test_publishing_keeps_a_label_a_person_put_back(sandbox, factory, http):
    await publish_guide(factory.for_installation(1), REPO, 8, make_guide("a", ("area: ci", "docs")), bot_login=BOT, current_labels=())
    for change in ({"remove": ["area: ci"]}, {"add": ["area: ci"]}):
        resp = await http.post("/_sandbox/labels", json={"repo": REPO, "number": 8, "user": "alice", **change})
        assert resp.status == 200

    result = await publish_guide(factory.for_installation(1), REPO, 8, make_guide("b", ()), bot_login=BOT, current_labels=None)

    assert result.labels_removed == ("docs",) and sandbox.labels(REPO, 8) == ["area: ci"]
    deletes = [unquote(r["path"]) for r in sandbox.requests if r["method"] == "DELETE"]
    assert deletes == [f"{API}/issues/8/labels/docs"]
    assert [(e.event, e.label_name, e.actor) for e in sandbox.label_events(REPO, 8)][-1] == ("unlabeled", "docs", BOT)
