"""GitHub's blame in the app honours ``.git-blame-ignore-revs`` as the offline blame does: the
file is read inside the first blame query (no extra request, no REST call), and a line a listed
formatting sweep last touched names no pull request; trouble with the file costs nothing."""

from __future__ import annotations

import asyncio
import contextlib
import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from git_helpers import Repo
from loopback import Loopback, Sleeps, pr_delivery, running_app, settings_for, shipped_rules
from sandbox_helpers import app_private_key, start_sandbox  # noqa: F401

from bot.app.blame import IGNORE_ALIAS, _ask, blame_query, facts_from_answers
from bot.engine.history.lines import ChangedLine
from bot.engine.history.model import listed_revisions
from bot.sandbox.graphql import run_query
from bot.sources import merged_pull_requests

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")

MODULE = "def limit(n):\n    if n > 100:\n        return 100\n    return n + 1\n\n\ndef main():\n    print(limit(3))\n"
SWEPT = "def limit(n):\n    if (n > 100):\n        return (100)\n    return (n + 1)\n\n\ndef main():\n    print(limit(3))\n"
FIXED = "def limit(n):\n    if (n >= 10):\n        return (10)\n    return (n * 2)\n\n\ndef main():\n    print(limit(3))\n"


def build_repo(path: Path, *, listed: bool) -> Repo:
    """#1 writes ``limit``, #2 only re-formats it, #3 adds the ignore file (listing #2 when
    ``listed``), #4 fixes ``limit``'s lines."""
    r = Repo(path)
    r.write("README.md", "# calc\n")
    r.commit("Initial commit")
    r.write("calc.py", MODULE)
    r.commit("Add the limit (#1)", author="Ann")
    r.write("calc.py", SWEPT)
    sweep = r.commit("Format the code (#2)", author="Fmt")
    r.write(".git-blame-ignore-revs", f"# formatting\n{sweep if listed else '0' * 40}\n")
    r.commit("Ignore the formatting sweep in blame (#3)", author="Cid")
    r.write("calc.py", FIXED)
    r.commit("fix: cap the limit at ten (#4)\n\nThe limit grew without bound.", author="Bob")
    return r


@contextlib.asynccontextmanager
async def app_on(private_key: bytes, tmp_path: Path, *, listed: bool) -> AsyncIterator[tuple[Loopback, str, dict[int, dict]]]:
    repo = build_repo(tmp_path / "calc", listed=listed)
    async with start_sandbox(private_key) as sandbox:
        (name,) = sandbox.add_git_repo(repo.path)
        bundles = {b["pull"]["number"]: b for b in merged_pull_requests(repo.path)}
        settings = settings_for(sandbox, private_key, tmp_path)
        async with running_app(settings, sandbox=sandbox, rules=shipped_rules(), client_options={"sleep": Sleeps()}) as client:
            yield Loopback(client, sandbox, bundles, Sleeps()), name, bundles


@pytest.mark.parametrize("listed", [False, True], ids=["sweep-not-listed", "sweep-listed"])
async def test_a_listed_sweep_is_no_origin_and_the_file_costs_no_request(app_private_key, tmp_path, listed):  # noqa: F811
    from bot.app.server import wait_idle

    async with app_on(app_private_key, tmp_path, listed=listed) as (lb, name, bundles):
        assert (await lb.deliver(pr_delivery(bundles[4]), delivery="fix-1")).status == 202
        await wait_idle(lb.app)
        (comment,) = lb.sandbox.comments(name, 4)
        stored = lb.state.services.guides.get(name, 4)
        candidates = [c["number"] for c in stored["history"]["candidates"]]
        if listed:
            assert "were written in" not in comment.body and 2 not in candidates
        else:
            assert "were written in #2" in comment.body and candidates == [2]
        assert [r["method"] for r in lb.sandbox.requests if r["path"] == "/graphql"] == ["POST"]
        assert not [r for r in lb.sandbox.requests if "blame-ignore" in r["path"]]


def test_the_sandbox_answers_the_file_as_a_blob_and_null_without_one(tmp_path):
    from bot.sandbox import Sandbox
    from sandbox_helpers import generate_private_key_pem

    repo = build_repo(tmp_path / "calc", listed=True)
    sandbox = Sandbox(1, generate_private_key_pem())
    (name,) = sandbox.add_git_repo(repo.path)
    owner, short = name.split("/")
    head, first = repo.git("rev-parse", "HEAD"), repo.git("rev-list", "--max-parents=0", "HEAD")
    variables = {"owner": owner, "name": short, "oid": head, "parent": f"{head}~1", "p0": "calc.py", "t0": f"{head}~1:calc.py",
                 "ignore": f"{head}:.git-blame-ignore-revs"}  # fmt: skip
    answer = run_query(sandbox.state, blame_query(1, ignore_revs=True), variables)
    assert "errors" not in answer
    blob = answer["data"]["repository"][IGNORE_ALIAS]
    assert listed_revisions(blob["text"]) == (repo.git("rev-parse", "HEAD~2"),) and blob["isTruncated"] is False
    absent = run_query(sandbox.state, blame_query(1, ignore_revs=True), {**variables, "ignore": f"{first}:.git-blame-ignore-revs"})
    assert "errors" not in absent and absent["data"]["repository"][IGNORE_ALIAS] is None


def test_listed_revisions_reads_hashes_only():
    text = "# a sweep\nABCDEF1234567\n\n  0123456789abcdef0123456789abcdef01234567 # black\nnot a hash\n12345\nabcdef1234567\n"
    assert listed_revisions(text) == ("abcdef1234567", "0123456789abcdef0123456789abcdef01234567")
    assert listed_revisions("") == ()


def commit(oid: str, number: int) -> dict:
    nodes = [{"number": number, "title": "t", "mergedAt": "2024-05-01T00:00:00Z", "author": {"login": "ann"}}]
    return {"oid": oid, "committedDate": "2024-05-01T00:00:00Z", "author": {"name": "Ann", "user": None}, "associatedPullRequests": {"nodes": nodes}}


PARENT = {
    "oid": "p", "committedDate": "2024-06-01T00:00:00Z", "associatedPullRequests": {"nodes": [{"number": 9}]},
    "f0": {"ranges": [{"startingLine": 1, "endingLine": 2, "commit": commit("a" * 40, 5)},
                      {"startingLine": 3, "endingLine": 4, "commit": commit("b" * 40, 6)}]},
}  # fmt: skip


def test_lines_of_a_listed_revision_have_no_origin_by_full_hash_or_prefix():
    lines = [ChangedLine("x.py", n, "code", "x.py") for n in (1, 3)]
    answers = [(["x.py"], {"parents": {"nodes": [PARENT]}})]
    for ignored in (("b" * 40,), ("bbbbbbb",)):
        facts = facts_from_answers(answers, lines, own=10, ignored=ignored)
        assert [(o.line, o.commit, o.pull) for o in facts.origins] == [(1, "a" * 40, 5), (3, "", None)]
    assert [o.pull for o in facts_from_answers(answers, lines, own=10).origins] == [5, 6]


class FakeClient:
    api_url = "https://api.github.com"

    def __init__(self, answer: dict[str, Any]):
        self.answer = answer

    async def post(self, url: str, *, data: Any, optional: bool) -> Any:
        return self.answer


def test_an_error_about_the_file_alone_keeps_the_blame():
    about_file = {"type": "FORBIDDEN", "path": ["repository", IGNORE_ALIAS], "message": "no"}
    base = {k: v for k, v in PARENT.items() if k != "f0"}
    data = {"repository": {IGNORE_ALIAS: None, "object": {"parents": {"nodes": [base]}}, "f0": {"blame": PARENT["f0"]}}}
    paths, found, blob, _texts = asyncio.run(_ask(FakeClient({"data": data, "errors": [about_file]}), "o", "r", "c" * 40, ["x.py"], ignore_revs=True))
    assert found["parents"]["nodes"][0] == PARENT and blob is None
    other = {"type": "NOT_FOUND", "path": ["repository", "object"], "message": "no"}
    with pytest.raises(ValueError):
        asyncio.run(_ask(FakeClient({"data": data, "errors": [about_file, other]}), "o", "r", "c" * 40, ["x.py"], ignore_revs=True))
