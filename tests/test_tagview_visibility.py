"""A repository made private hides its guides: pages, JSON and feeds, on SQLite and on PostgreSQL.

The real app and the GitHub sandbox on loopback. ``repository.privatized`` hides the
guides before the delivery is even answered; ``publicized`` shows them again once its
job has asked GitHub; any delivery whose repository is private, or that does not say,
hides them; a payload saying public never opens a repository held private.
"""

from __future__ import annotations

import copy

import pytest
from loopback import REPO, SMALL_PR, app_private_key, start_loopback  # noqa: F401 - fixture

from bot.app.server import wait_idle

PAGES = (f"/repos/{REPO}/tags", f"/repos/{REPO}/tags.json", f"/repos/{REPO}/tags.atom",
         f"/repos/{REPO}/digest.atom", f"/repos/{REPO}/pulls/{SMALL_PR}/guide")


@pytest.fixture(params=["sqlite", "postgresql"])
async def lb(request, app_private_key, load_bundle_json, webhook_payload, tmp_path):  # noqa: F811
    """The app (its guides on the parameter's store) and the sandbox, with one public merged guide stored."""
    settings = {}
    if request.param == "postgresql":
        url, schema = request.getfixturevalue("pg_schema")
        settings = {"database_url": url, "database_schema": schema, "db_pool_max": 4}
    bundles = {SMALL_PR: load_bundle_json(SMALL_PR)}
    async with start_loopback(app_private_key, tmp_path, bundles, settings=settings) as loop:
        await loop.merged(SMALL_PR)
        loop.opened = webhook_payload("pull_request", "opened.payload.json")
        yield loop


async def statuses(lb) -> set[int]:
    return {(await lb.client.get(path)).status for path in PAGES}


def repository_event(lb, action: str, *, private) -> dict:
    """A ``repository`` delivery as GitHub sends it: the repository, its sender and the installation."""
    payload = lb.payload(SMALL_PR)
    repo = dict(payload["repository"], private=private, visibility="private" if private else "public")
    return {"action": action, "repository": repo, "sender": payload["sender"], "installation": payload["installation"]}


def github_says(lb, *, private: bool) -> None:
    lb.sandbox.state.repos[REPO.lower()].private = private


async def test_privatized_hides_at_once_and_publicized_shows_again(lb):
    assert await statuses(lb) == {200}
    github_says(lb, private=True)
    resp = await lb.deliver(repository_event(lb, "privatized", private=True), event="repository", delivery="r-1")
    assert resp.status == 202
    assert await statuses(lb) == {404}  # once answered
    await wait_idle(lb.app)
    assert await statuses(lb) == {404}
    index = await (await lb.client.get("/repos")).text()
    assert REPO not in index

    github_says(lb, private=False)
    resp = await lb.deliver(repository_event(lb, "publicized", private=False), event="repository", delivery="r-2")
    assert resp.status == 202
    await wait_idle(lb.app)
    assert await statuses(lb) == {200}
    # The job asked GitHub ("Get a repository"), as the installation.
    assert [r["path"] for r in lb.sandbox.requests if r["path"] == f"/repos/{REPO}"] == [f"/repos/{REPO}"] * 2


async def test_the_last_job_follows_github_whatever_order_the_events_came_in(lb):
    store = lb.state.services.guides
    written: list[str] = []
    set_visibility = store.set_visibility

    def recorded(repository: str, visibility: str) -> None:
        written.append(visibility)
        set_visibility(repository, visibility)

    store.set_visibility = recorded
    # A privatized delivery redelivered after the repository went public again: hidden
    # before the answer (the payload says private), shown again by its job (GitHub says public).
    resp = await lb.deliver(repository_event(lb, "privatized", private=True), event="repository", delivery="r-old")
    assert resp.status == 202
    await wait_idle(lb.app)
    assert written == ["private", "public"]
    assert await statuses(lb) == {200}
    # A deleted repository (GitHub answers 404) is hidden.
    del lb.sandbox.state.repos[REPO.lower()]
    resp = await lb.deliver(repository_event(lb, "deleted", private=False), event="repository", delivery="r-gone")
    assert resp.status == 202, await resp.text()
    await wait_idle(lb.app)
    assert written == ["private", "public", "private"]
    assert await statuses(lb) == {404}


@pytest.mark.parametrize("private", [True, None, "no"], ids=["private", "missing", "not-a-boolean"])
async def test_any_delivery_not_saying_public_hides_the_guides(lb, private):
    opened = copy.deepcopy(lb.opened)
    opened["repository"].update(full_name=REPO, name=REPO.split("/")[1])
    if private is None:
        opened["repository"].pop("private", None)
    else:
        opened["repository"]["private"] = private
    resp = await lb.deliver(opened, delivery="o-1")
    assert resp.status == 200 and "ignored" in await resp.json()  # no feature acts on an opened PR...
    assert await statuses(lb) == {404}  # ...but its repository is private now


async def test_a_payload_saying_public_never_opens_a_private_repository(lb):
    github_says(lb, private=True)
    await lb.deliver(repository_event(lb, "privatized", private=True), event="repository", delivery="r-1")
    await wait_idle(lb.app)
    # An old merge delivery (from when the repository was public) redelivered: the guide is
    # rebuilt and stored, and stays hidden.
    await lb.merged(SMALL_PR, delivery="m-again")
    opened = copy.deepcopy(lb.opened)
    opened["repository"].update(full_name=REPO, private=False)
    await lb.deliver(opened, delivery="o-2")
    assert await statuses(lb) == {404}


def pages_of(repository: str) -> tuple[str, ...]:
    return tuple(page.replace(REPO, repository) for page in PAGES)


@pytest.mark.parametrize("action", ["renamed", "transferred"])
async def test_a_renamed_or_transferred_repositorys_guides_follow_it(lb, action):
    """``repository.renamed``/``transferred``: the guides are served under the new name only,
    public as GitHub shows the repository there."""
    owner, name = REPO.split("/")
    new = f"{owner}/{name}-next" if action == "renamed" else f"new-home/{name}"
    record = lb.sandbox.state.repos.pop(REPO.lower())
    record.full_name = new
    lb.sandbox.state.repos[new.lower()] = record
    event = repository_event(lb, action, private=False)
    event["repository"].update(full_name=new, name=new.split("/")[1])
    if action == "renamed":
        event["changes"] = {"repository": {"name": {"from": name}}}
    else:
        event["changes"] = {"owner": {"from": {"user": {"login": owner, "type": "User"}}}}
    resp = await lb.deliver(event, event="repository", delivery=f"move-{action}")
    assert resp.status == 202, await resp.text()
    await wait_idle(lb.app)
    assert {(await lb.client.get(path)).status for path in pages_of(new)} == {200}
    assert await statuses(lb) == {404}
    assert lb.state.services.guides.get(new, SMALL_PR)["repository"] == new
    # Made private under its new name: hidden there too.
    github_says_at = lb.sandbox.state.repos[new.lower()]
    github_says_at.private = True
    event = dict(repository_event(lb, "privatized", private=True))
    event["repository"] = dict(event["repository"], full_name=new, name=new.split("/")[1])
    assert (await lb.deliver(event, event="repository", delivery=f"private-{action}")).status == 202
    await wait_idle(lb.app)
    assert {(await lb.client.get(path)).status for path in pages_of(new)} == {404}
