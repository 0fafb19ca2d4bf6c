"""The sandbox speaks well enough for gidgethub, the GitHub client prguide uses."""

from __future__ import annotations

import aiohttp
import cachetools
import gidgethub
import gidgethub.apps
import gidgethub.sansio
import pytest
from gidgethub.aiohttp import GitHubAPI
from sandbox_helpers import APP_ID, app_private_key, start_sandbox, synthetic_bundle  # noqa: F401

REPO = "octo-org/demo"


@pytest.fixture
async def gh_and_sandbox(app_private_key):
    async with (
        start_sandbox(app_private_key, bundles=[synthetic_bundle(7, files=65)]) as sandbox,
        aiohttp.ClientSession() as session,
    ):
        app = GitHubAPI(session, "prguide-tests", base_url=sandbox.base_url)
        token = await gidgethub.apps.get_installation_access_token(
            app, installation_id="1", app_id=str(APP_ID), private_key=app_private_key
        )
        cache: cachetools.LRUCache = cachetools.LRUCache(maxsize=50)
        gh = GitHubAPI(session, "prguide-tests", oauth_token=token["token"], base_url=sandbox.base_url, cache=cache)
        yield gh, sandbox


async def test_gidgethub_pages_comments_and_labels(gh_and_sandbox):
    gh, sandbox = gh_and_sandbox
    files = [f["filename"] async for f in gh.getiter(f"/repos/{REPO}/pulls/7/files")]
    assert len(files) == 65 and files[-1] == "src/module_0064.py"
    assert gh.rate_limit is not None and gh.rate_limit.limit == 5000 and gh.rate_limit.remaining == 4997
    comment = await gh.post(f"/repos/{REPO}/issues/7/comments", data={"body": "reading guide"})
    await gh.post(f"/repos/{REPO}/issues/7/labels", data={"labels": ["docs"]})
    assert comment["user"]["login"] == "prguide[bot]"
    assert sandbox.snapshot()["labels"] == {f"{REPO}#7": ["docs"]}


async def test_gidgethub_cache_gets_304_without_spending_rate_limit(gh_and_sandbox):
    gh, sandbox = gh_and_sandbox
    first = await gh.getitem(f"/repos/{REPO}/pulls/7")
    remaining = sandbox.state.bucket("installation:1").remaining
    again = await gh.getitem(f"/repos/{REPO}/pulls/7")
    assert again == first
    assert sandbox.requests[-1]["status"] == 304
    # gidgethub counts every request down itself; the sandbox's own count is the truth here.
    assert sandbox.state.bucket("installation:1").remaining == remaining


async def test_gidgethub_sees_the_errors(gh_and_sandbox):
    gh, sandbox = gh_and_sandbox
    with pytest.raises(gidgethub.BadRequest) as not_found:
        await gh.getitem(f"/repos/{REPO}/pulls/404")
    assert not_found.value.status_code == 404
    sandbox.add_faults([{"path": "/pulls/7$", "status": 502}])
    with pytest.raises(gidgethub.GitHubBroken):
        await gh.getitem(f"/repos/{REPO}/pulls/7")
    with pytest.raises(gidgethub.ValidationError) as invalid:
        await gh.post(f"/repos/{REPO}/issues/7/comments", data={"body": "x" * 65_537})
    assert invalid.value.status_code == 422
