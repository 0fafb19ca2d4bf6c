"""Fetching a pull request snapshot and a config file from the sandbox, counting calls."""

from __future__ import annotations

import copy

import aiohttp
import pytest
from sandbox_helpers import app_private_key, factory, sandbox, start_sandbox, synthetic_bundle  # noqa: F401

from bot.app.fetch import fetch_file, fetch_snapshot, split_repository
from bot.app.github import GitHubClient, NotFound



def api_requests(sandbox, since: int = 0) -> list[dict]:
    return [r for r in sandbox.requests[since:] if not r["path"].endswith("/access_tokens")]


@pytest.mark.corpus
async def test_a_344_file_pull_request_comes_in_concurrent_pages(sandbox, factory, load_bundle_json):
    bundle = load_bundle_json(4795)
    repo = sandbox.add_bundle(bundle)
    client = factory.for_installation(1)
    seen_before = len(sandbox.requests)

    snapshot = await fetch_snapshot(client, repo, 4795, pull=bundle["pull"])

    assert [f.filename for f in snapshot.files] == [f["filename"] for f in bundle["files"]]
    assert snapshot.changed_files == 344 and not snapshot.truncated
    assert snapshot.repository == repo and snapshot.number == 4795
    # 4 file pages + reviews + review comments; no GET of the PR itself
    assert client.calls == 6
    paths = sorted(r["path"] for r in api_requests(sandbox, seen_before))
    file_pages = [p for p in paths if "/files" in p]
    assert file_pages == sorted(f"/repos/{repo}/pulls/4795/files?per_page=100&page={n}" for n in (1, 2, 3, 4))
    assert all(r["status"] == 200 for r in api_requests(sandbox, seen_before))


@pytest.mark.corpus
async def test_fetching_again_is_answered_with_304s(sandbox, factory, load_bundle_json):
    bundle = load_bundle_json(4795)
    repo = sandbox.add_bundle(bundle)
    first = await fetch_snapshot(factory.for_installation(1), repo, 4795, pull=bundle["pull"])
    again = factory.for_installation(1)
    second = await fetch_snapshot(again, repo, 4795, pull=bundle["pull"])
    assert second.files == first.files
    # The conditional-request cache keeps answers up to MAX_ANSWER_BYTES (bot.app.answer_cache):
    # the reviews, the review comments and the lighter files pages come back as 304s; a
    # page of big patches is read again in full rather than held in memory.
    kept = [p for p in factory.cache if "/pulls/4795/" in p]
    assert again.calls_by_status == {304: len(kept), 200: 6 - len(kept)}
    assert len(kept) >= 3


async def test_a_small_pull_request_costs_three_calls(sandbox, factory):
    bundle = synthetic_bundle(7, files=100)
    bundle["pull"]["changed_files"] = 100
    repo = sandbox.add_bundle(bundle)
    client = factory.for_installation(1)
    snapshot = await fetch_snapshot(client, repo, 7, pull=bundle["pull"])
    assert len(snapshot.files) == 100
    assert client.calls == 3


async def test_without_the_payload_the_pull_request_is_fetched_first(sandbox, factory):
    bundle = synthetic_bundle(8, files=2)
    bundle["pull"]["changed_files"] = 2
    bundle["pull"]["labels"] = [{"name": "bug"}]
    repo = sandbox.add_bundle(bundle)
    client = factory.for_installation(1)
    snapshot = await fetch_snapshot(client, repo, 8)
    assert client.calls == 4
    assert snapshot.title == "Change number 8" and snapshot.labels == ("bug",)
    assert [f.filename for f in snapshot.files] == ["src/module_0000.py", "src/module_0001.py"]


async def test_a_stale_count_still_gets_every_file(sandbox, factory):
    bundle = synthetic_bundle(9, files=250)
    repo = sandbox.add_bundle(bundle)
    stale = copy.deepcopy(bundle["pull"])
    stale["changed_files"] = 100  # the payload was written before more files came in
    client = factory.for_installation(1)
    snapshot = await fetch_snapshot(client, repo, 9, pull=stale)
    assert [f.filename for f in snapshot.files] == [f["filename"] for f in bundle["files"]]
    assert client.calls == 2 + 3  # reviews, review comments, three file pages


async def test_a_count_larger_than_the_list_is_fine(sandbox, factory):
    bundle = synthetic_bundle(10, files=120)
    repo = sandbox.add_bundle(bundle)
    inflated = copy.deepcopy(bundle["pull"])
    inflated["changed_files"] = 400
    snapshot = await fetch_snapshot(factory.for_installation(1), repo, 10, pull=inflated)
    assert len(snapshot.files) == 120 and snapshot.truncated  # GitHub listed fewer than it counted


async def test_a_listed_pull_request_whose_files_fill_githubs_3000_is_read_for_its_counts(sandbox, factory):
    # A "List pull requests" item has no changed_files, additions or deletions (backfill and
    # reconcile start from one): 3,000 files listed may be all of them, or GitHub's cap.
    bundle = synthetic_bundle(12, files=3005)
    bundle["pull"].update(changed_files=3005, additions=3005, deletions=0)
    repo = sandbox.add_bundle(bundle)
    listed = {k: v for k, v in bundle["pull"].items() if k not in ("changed_files", "additions", "deletions")}
    client = factory.for_installation(1)

    snapshot = await fetch_snapshot(client, repo, 12, pull=listed)

    assert len(snapshot.files) == 3000 and snapshot.changed_files == 3005 and snapshot.truncated
    assert snapshot.additions == 3005
    assert [r["path"] for r in api_requests(sandbox) if r["path"] == f"/repos/{repo}/pulls/12"] == [f"/repos/{repo}/pulls/12"]


async def test_a_listed_pull_request_with_fewer_files_costs_no_extra_call(sandbox, factory):
    bundle = synthetic_bundle(13, files=2999)
    repo = sandbox.add_bundle(bundle)
    client = factory.for_installation(1)
    snapshot = await fetch_snapshot(client, repo, 13, pull=bundle["pull"])  # no changed_files: a list item
    assert len(snapshot.files) == 2999 and not snapshot.truncated
    assert client.calls == 2 + 30  # reviews, review comments, thirty file pages: no "Get a pull request"


async def test_reviews_and_review_comments_are_read(sandbox, factory):
    bundle = synthetic_bundle(11, files=1)
    bundle["reviews"] = [{"id": 5, "user": {"login": "bob"}, "state": "APPROVED", "body": "ok", "submitted_at": "2024-05-01T09:00:00Z"}]
    bundle["review_comments"] = [
        {"id": 6, "user": {"login": "bob"}, "body": "nit", "path": "src/module_0000.py", "line": 1, "diff_hunk": "@@"}
    ]
    repo = sandbox.add_bundle(bundle)
    snapshot = await fetch_snapshot(factory.for_installation(1), repo, 11, pull=bundle["pull"])
    assert [(r.user, r.state) for r in snapshot.reviews] == [("bob", "APPROVED")]
    assert [(c.id, c.path, c.body) for c in snapshot.review_comments] == [(6, "src/module_0000.py", "nit")]


async def test_a_missing_pull_request_is_not_found(sandbox, factory):
    repo = sandbox.add_bundle(synthetic_bundle(12))
    with pytest.raises(NotFound):
        await fetch_snapshot(factory.for_installation(1), repo, 999)


async def test_fetch_file_decodes_and_returns_none_when_absent(sandbox, factory):
    repo = sandbox.add_bundle(synthetic_bundle(13))
    sandbox.set_file(repo, ".github/prguide.yml", "lang: zh\n# 中文\n")
    client = factory.for_installation(1)
    assert await fetch_file(client, repo, ".github/prguide.yml", "main") == "lang: zh\n# 中文\n"
    assert await fetch_file(client, repo, ".github/missing.yml", "main") is None


async def test_fetch_file_refuses_binary(sandbox, factory):
    repo = sandbox.add_bundle(synthetic_bundle(14))
    sandbox.set_file(repo, "logo.bin", b"\xff\xfe\x00")
    with pytest.raises(ValueError, match="not UTF-8"):
        await fetch_file(factory.for_installation(1), repo, "logo.bin")


def test_split_repository_wants_owner_and_name():
    assert split_repository("verl-project/verl") == ("verl-project", "verl")
    for bad in ("verl", "/verl", "a/b/c", "a/"):
        with pytest.raises(ValueError):
            split_repository(bad)



@pytest.fixture
async def contents_fake():
    """A GitHub that sends big files without content, as "Get repository content" does over 1 MB."""
    from aiohttp import web
    from aiohttp.test_utils import TestServer

    async def handle(request: web.Request) -> web.Response:
        path = request.match_info["path"]
        if path == "docs":
            return web.json_response([{"type": "file", "name": "a.md"}])
        if "raw" in request.headers.get("Accept", ""):
            return web.Response(text="big: true\n", content_type="application/vnd.github.raw")
        return web.json_response({"type": "file", "encoding": "none", "content": "", "size": 2_000_000})

    app = web.Application()
    app.router.add_get("/repos/o/r/contents/{path:.+}", handle)
    server = TestServer(app, host="127.0.0.1")
    await server.start_server()
    async with aiohttp.ClientSession() as session:

        async def authorization() -> str:
            return "token t"

        yield GitHubClient(session, authorization=authorization, api_url=str(server.make_url("")))
    await server.close()


async def test_fetch_file_reads_big_files_raw(contents_fake):
    assert await fetch_file(contents_fake, "o/r", "big.yml", "main") == "big: true\n"
    assert contents_fake.calls == 2


async def test_fetch_file_refuses_a_directory(contents_fake):
    with pytest.raises(ValueError, match="not a file"):
        await fetch_file(contents_fake, "o/r", "docs")
