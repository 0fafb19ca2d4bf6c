"""In the app, a merged fix's guide names the pull request that wrote the lines it changes,
from GitHub's GraphQL blame, answered by the sandbox from a git repository built here."""

from __future__ import annotations

import contextlib
import logging
import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from git_helpers import Repo
from loopback import Loopback, Sleeps, pr_delivery, running_app, settings_for, shipped_rules
from sandbox_helpers import app_private_key, start_sandbox  # noqa: F401

from bot.app.blame import blame_query, facts_from_answers, graphql_url, merge_commit, parent_expression
from bot.engine.history.lines import ChangedLine
from bot.sandbox.graphql import run_query
from bot.sources import merged_pull_requests

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")

MODULE = (
    "def limit(n):\n"
    "    if n > 100:\n"
    "        return 100\n"
    "    return n + 1\n"
    "\n"
    "\n"
    "def main():\n"
    "    print(limit(3))\n"
)
WRITTEN_IN_ONE = "The code lines this fix deletes or rewrites in `calc.py` (imports, comments, moved and re-wrapped lines aside) were written in #1"


def build_repo(path: Path) -> Repo:
    """A start, PR #1 writing ``limit``, an unrelated PR #2, and the fix PR #3 changing ``limit``'s lines."""
    r = Repo(path)
    r.write("README.md", "# calc\n")
    r.commit("Initial commit")
    r.write("calc.py", MODULE)
    r.commit("Add the limit (#1)", author="Ann")
    r.write("NOTES.md", "notes\n")
    r.commit("Add notes (#2)", author="Cid")
    r.write("calc.py", MODULE.replace("if n > 100:\n        return 100\n    return n + 1", "if n >= 10:\n        return 10\n    return n * 2"))
    r.commit("fix: cap the limit at ten (#3)\n\nThe limit grew without bound.", author="Bob")
    return r


def build_adds_only_repo(path: Path) -> Repo:
    """PR #1 writing ``calc.py``, and the fix PR #2 that only adds a line to ``main``."""
    r = Repo(path)
    r.write("README.md", "# calc\n")
    r.commit("Initial commit")
    r.write("calc.py", MODULE)
    r.commit("Add the limit (#1)", author="Ann")
    r.write("calc.py", MODULE + "    print(limit(500))\n")
    r.commit("fix: show the cap too (#2)", author="Bob")
    return r


@contextlib.asynccontextmanager
async def app_on_repo(private_key: bytes, tmp_path: Path, build=build_repo) -> AsyncIterator[tuple[Loopback, str, dict[int, dict]]]:
    repo = build(tmp_path / "calc")
    async with start_sandbox(private_key) as sandbox:
        (name,) = sandbox.add_git_repo(repo.path)
        bundles = {b["pull"]["number"]: b for b in merged_pull_requests(repo.path)}
        sleeps = Sleeps()
        settings = settings_for(sandbox, private_key, tmp_path)
        async with running_app(settings, sandbox=sandbox, rules=shipped_rules(), client_options={"sleep": sleeps}) as client:
            yield Loopback(client, sandbox, bundles, sleeps), name, bundles


def graphql_calls(sandbox: Any) -> list[dict]:
    return [r for r in sandbox.requests if r["path"] == "/graphql"]


async def test_the_fix_s_guide_says_where_its_lines_came_from(app_private_key, tmp_path, caplog):  # noqa: F811
    caplog.set_level(logging.INFO, logger="prguide.jobs")
    async with app_on_repo(app_private_key, tmp_path) as (lb, name, bundles):
        resp = await lb.deliver(pr_delivery(bundles[3]), delivery="fix-1")
        assert resp.status == 202
        from bot.app.server import wait_idle

        await wait_idle(lb.app)
        (comment,) = lb.sandbox.comments(name, 3)
        assert WRITTEN_IN_ONE in comment.body and "by **Ann**" in comment.body
        # One GraphQL request for the one traced file, counted like the REST calls.
        assert [(r["method"], r["status"]) for r in graphql_calls(lb.sandbox)] == [("POST", 200)]
        (record,) = [r for r in caplog.records if getattr(r, "delivery", None) == "fix-1" and hasattr(r, "api_calls")]
        assert record.api_calls == len([r for r in lb.sandbox.requests if "access_tokens" not in r["path"]])
        # A pull request without traced lines (a new file only) asks nothing.
        lb.sandbox.state.requests.clear()
        assert (await lb.deliver(pr_delivery(bundles[2]), delivery="notes-1")).status == 202
        await wait_idle(lb.app)
        assert lb.sandbox.comments(name, 2) and graphql_calls(lb.sandbox) == []


async def test_a_fix_that_only_adds_lines_is_placed_among_the_lines_around_them(app_private_key, tmp_path):  # noqa: F811
    async with app_on_repo(app_private_key, tmp_path, build_adds_only_repo) as (lb, name, bundles):
        assert (await lb.deliver(pr_delivery(bundles[2]), delivery="adds-1")).status == 202
        from bot.app.server import wait_idle

        await wait_idle(lb.app)
        (comment,) = lb.sandbox.comments(name, 2)
        assert "The lines around the code this fix adds to `calc.py` were written in #1" in comment.body
        assert "changes in `calc.py`" not in comment.body
        assert [(r["method"], r["status"]) for r in graphql_calls(lb.sandbox)] == [("POST", 200)]


@pytest.mark.parametrize(
    "fault",
    [
        {"method": "POST", "path": "^/graphql", "status": 403, "message": "Resource not accessible by integration"},
        {"method": "POST", "path": "^/graphql", "status": 502, "times": None},
        {"method": "POST", "path": "^/graphql", "status": 403, "rate_limit_remaining": 0},
    ],
    ids=["forbidden", "server-error", "rate-limited"],
)
async def test_a_blame_that_fails_still_posts_the_guide_without_the_line(app_private_key, tmp_path, fault):  # noqa: F811
    async with app_on_repo(app_private_key, tmp_path) as (lb, name, bundles):
        lb.sandbox.add_faults([fault])
        assert (await lb.deliver(pr_delivery(bundles[3]), delivery="fix-1")).status == 202
        from bot.app.server import wait_idle

        await wait_idle(lb.app)
        (comment,) = lb.sandbox.comments(name, 3)
        assert "fix" in comment.body.lower() and "were written in" not in comment.body
        assert graphql_calls(lb.sandbox)
        assert lb.jobs().get("done") == 1


async def test_graphql_errors_leave_the_guide_without_the_line(app_private_key, tmp_path):  # noqa: F811
    async with app_on_repo(app_private_key, tmp_path) as (lb, name, bundles):
        payload = pr_delivery(bundles[3])
        payload["pull_request"]["merge_commit_sha"] = "f" * 40  # a commit GitHub does not have
        assert (await lb.deliver(payload, delivery="fix-1")).status == 202
        from bot.app.server import wait_idle

        await wait_idle(lb.app)
        (comment,) = lb.sandbox.comments(name, 3)
        assert "were written in" not in comment.body
        assert [r["status"] for r in graphql_calls(lb.sandbox)] == [200]


def test_sandbox_answers_the_blame_query_in_github_s_shape(tmp_path):
    repo = build_repo(tmp_path / "calc")
    from bot.sandbox import Sandbox
    from sandbox_helpers import generate_private_key_pem

    sandbox = Sandbox(1, generate_private_key_pem())
    (name,) = sandbox.add_git_repo(repo.path)
    owner, short = name.split("/")
    merge = repo.git("rev-parse", "HEAD")
    answer = run_query(sandbox.state, blame_query(1), {"owner": owner, "name": short, "oid": merge, "p0": "calc.py",
                                                       "parent": f"{merge}~1", "t0": parent_expression(merge, "calc.py")})  # fmt: skip
    assert "errors" not in answer
    # The file at the parent, as a blob (the query finds the patch's lines in it).
    assert answer["data"]["repository"]["t0"] == {"text": MODULE, "isTruncated": False, "isBinary": False}
    (parent,) = answer["data"]["repository"]["object"]["parents"]["nodes"]
    assert parent["oid"] == repo.git("rev-parse", "HEAD^")
    assert parent["associatedPullRequests"]["nodes"] == [{"number": 2}]
    # Each file's blame under an object of its own: the parent, named "<oid>~1".
    ranges = answer["data"]["repository"]["f0"]["blame"]["ranges"]
    assert merge_commit(answer["data"]["repository"], 1)["parents"]["nodes"][0]["f0"]["ranges"] == ranges
    assert [(r["startingLine"], r["endingLine"]) for r in ranges] == [(1, 8)]
    (pull,) = ranges[0]["commit"]["associatedPullRequests"]["nodes"]
    assert (pull["number"], pull["author"]["login"], pull["title"]) == (1, "Ann", "Add the limit")
    assert 1 <= ranges[0]["age"] <= 10
    missing = run_query(sandbox.state, blame_query(1), {"owner": owner, "name": short, "oid": "e" * 40, "p0": "calc.py",
                                                        "parent": "e" * 40 + "~1", "t0": "e" * 40 + "~1:calc.py"})  # fmt: skip
    assert missing["data"]["repository"]["object"] is None and missing["errors"][0]["type"] == "NOT_FOUND"
    assert missing["data"]["repository"]["f0"] is None
    # A file not at the parent: Commit.blame is non-null (Blame!), so, as on GitHub, its null
    # nulls the nearest nullable object above it, that file's own, with a NOT_FOUND error there.
    no_file = run_query(sandbox.state, blame_query(2), {"owner": owner, "name": short, "oid": merge, "parent": f"{merge}~1",
                                                        "p0": "nope.py", "t0": parent_expression(merge, "nope.py"),
                                                        "p1": "calc.py", "t1": parent_expression(merge, "calc.py")})  # fmt: skip
    repository = no_file["data"]["repository"]
    assert repository["f0"] is None and repository["t0"] is None
    assert [(e["type"], e["path"]) for e in no_file["errors"]] == [("NOT_FOUND", ["repository", "f0", "blame"])]
    assert repository["f1"]["blame"]["ranges"] == ranges and repository["object"]["parents"]["nodes"][0]["oid"] == parent["oid"]
    assert "errors" in run_query(sandbox.state, "query { repository(owner: 1", {})


def test_bundles_without_a_repository_blame_no_lines(load_bundle_json):
    from bot.sandbox import Sandbox
    from sandbox_helpers import generate_private_key_pem

    bundle = load_bundle_json(7491)
    sandbox = Sandbox(1, generate_private_key_pem(), bundles=[bundle])
    owner, name = bundle["pull"]["base"]["repo"]["full_name"].split("/")
    merge = bundle["pull"]["merge_commit_sha"]
    variables = {"owner": owner, "name": name, "oid": merge, "parent": f"{merge}~1", "p0": "any.py", "t0": "x"}
    answer = run_query(sandbox.state, blame_query(1), variables)
    assert answer["data"]["repository"]["f0"] == {"blame": {"ranges": []}}
    assert answer["data"]["repository"]["object"]["parents"]["nodes"][0]["oid"] == "0" * 40
    assert answer["data"]["repository"]["t0"] is None  # no file to read: the app says nothing of it


def test_facts_from_ranges_keep_only_the_traced_lines_and_the_window():
    def commit(oid: str, date: str, number: int | None) -> dict:
        nodes = [{"number": number, "title": "t", "mergedAt": date, "author": {"login": "ann"}}] if number else []
        return {"oid": oid, "committedDate": date, "author": {"name": "Ann", "user": None}, "associatedPullRequests": {"nodes": nodes}}

    parent = {
        "oid": "p", "committedDate": "2024-06-01T00:00:00Z", "associatedPullRequests": {"nodes": [{"number": 9}]},
        "f0": {"ranges": [
            {"startingLine": 1, "endingLine": 4, "commit": commit("a", "2024-05-01T00:00:00Z", 5)},
            {"startingLine": 5, "endingLine": 9, "commit": commit("b", "2020-01-01T00:00:00Z", 2)},
            {"startingLine": 10, "endingLine": 12, "commit": commit("c", "2024-05-20T00:00:00Z", None)},
        ]},
    }  # fmt: skip
    lines = [ChangedLine("x.py", n, "code", "x.py") for n in (2, 6, 11, 40)]
    facts = facts_from_answers([(["x.py"], {"parents": {"nodes": [parent]}})], lines, own=10)
    assert facts is not None and facts.status == "ok"
    assert [(o.line, o.commit, o.pull) for o in facts.origins] == [(2, "a", 5), (6, "", None), (11, "c", None)]
    assert set(facts.pulls) == {5} and facts.pulls[5].author == "ann"
    # The parent belongs to this pull request: a rebase merge, whose base the query cannot see.
    assert facts_from_answers([(["x.py"], {"parents": {"nodes": [parent]}})], lines, own=9).status == "no-base"
    # Nothing covered: nothing was blamed.
    empty = {**parent, "f0": {"ranges": []}}
    assert facts_from_answers([(["x.py"], {"parents": {"nodes": [empty]}})], lines, own=10) is None


def test_graphql_url_of_github_and_enterprise_server():
    assert graphql_url("https://api.github.com") == "https://api.github.com/graphql"
    assert graphql_url("https://ghe.example.com/api/v3/") == "https://ghe.example.com/api/graphql"


def test_a_file_the_parent_lacks_costs_its_own_blame_alone(tmp_path):
    """Through the sandbox's GitHub-shaped answer (an error about the missing file's non-null
    blame, nulling its nearest nullable object): the other file of the request keeps its blame.
    With every blame under the shared commit, the error nulled the commit and both were lost."""
    import asyncio

    from bot.app.blame import fetch_blame
    from bot.engine.snapshot import ChangedFile, PullRequestSnapshot
    from bot.sandbox import Sandbox
    from sandbox_helpers import generate_private_key_pem

    repo = build_repo(tmp_path / "calc")
    sandbox = Sandbox(1, generate_private_key_pem())
    (name,) = sandbox.add_git_repo(repo.path)
    merge = repo.git("rev-parse", "HEAD")

    class SandboxClient:
        api_url = "https://api.github.com"
        answers: list[dict[str, Any]] = []

        async def post(self, url: str, *, data: Any, optional: bool) -> Any:
            self.answers.append(run_query(sandbox.state, data["query"], data["variables"]))
            return self.answers[-1]

    patch = "@@ -1,5 +1,5 @@\n def limit(n):\n-    if n > 100:\n-        return 100\n-    return n + 1\n+    if n >= 10:\n+        return 10\n+    return n * 2\n \n"
    files = (ChangedFile("calc.py", "modified", 3, 3, patch), ChangedFile("gone.py", "modified", 3, 3, patch))
    snapshot = PullRequestSnapshot(repository=name, number=3, title="fix: cap", files=files, merge_commit_sha=merge)
    client = SandboxClient()
    facts = asyncio.run(fetch_blame(client, snapshot))
    (answer,) = client.answers
    assert [e["path"] for e in answer["errors"]] == [["repository", "f1", "blame"]]  # gone.py: not at the parent
    assert facts is not None and [(o.path, o.line, o.pull) for o in facts.origins] == [("calc.py", n, 1) for n in (2, 3, 4)]
