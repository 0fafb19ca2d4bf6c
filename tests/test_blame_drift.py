"""The app blames the lines a pull request changes at the commit it was merged onto, but GitHub
numbers them as in the merge base: when the base branch changed the file in between, those
numbers name other lines. The blame query reads the file at that commit too and finds each
hunk there; a hunk not found once says nothing."""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from git_helpers import Repo
from loopback import Loopback, Sleeps, pr_delivery, running_app, settings_for, shipped_rules
from sandbox_helpers import app_private_key, start_sandbox  # noqa: F401

from bot.app.blame import blame_query, facts_from_answers, merge_commit, parent_expression
from bot.engine.history.drift import lines_at_parent
from bot.engine.history.lines import trace_plan
from bot.engine.snapshot import ChangedFile
from bot.sandbox.graphql import run_query
from bot.sources import merged_pull_requests

MODULE = "def limit(n):\n    if n > 100:\n        return 100\n    return n + 1\n\n\ndef main():\n    print(limit(3))\n"
FIXED = MODULE.replace("if n > 100:\n        return 100\n    return n + 1", "if n >= 10:\n        return 10\n    return n * 2")
HEADER = '"""A calculator."""\n\nimport sys\n\n'
PATCH = "@@ -1,5 +1,5 @@\n def limit(n):\n-    if n > 100:\n-        return 100\n-    return n + 1\n+    if n >= 10:\n+        return 10\n+    return n * 2\n \n"


# --- finding the patch's lines in the file at the parent ------------------------------------


def test_a_file_the_base_branch_left_alone_keeps_every_number():
    assert lines_at_parent(PATCH, MODULE) == {1: 1, 2: 2, 3: 3, 4: 4, 5: 5}


def test_lines_the_base_branch_pushed_down_are_found_where_they_are():
    assert lines_at_parent(PATCH, HEADER + MODULE) == {n: n + 4 for n in range(1, 6)}
    assert lines_at_parent(PATCH, (HEADER + MODULE).replace("\n", "\r\n")) == {n: n + 4 for n in range(1, 6)}


def test_a_hunk_the_base_branch_changed_or_that_is_there_twice_places_no_line():
    assert lines_at_parent(PATCH, MODULE.replace("return 100", "return 99")) == {}
    assert lines_at_parent(PATCH, MODULE + "\n" + MODULE) == {}  # no telling which copy
    assert lines_at_parent(PATCH, "") == {} and lines_at_parent(None, MODULE) == {}
    # Hunks are placed one by one: one changed, another found.
    two = PATCH + "\n@@ -7,2 +7,2 @@\n def main():\n-    print(limit(3))\n+    print(limit(4))"
    assert lines_at_parent(two, MODULE.replace("return 100", "return 99")) == {7: 7, 8: 8}


# --- the app, on a repository whose base branch moved ------------------------------------------

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


def build_repo(path: Path) -> tuple[Repo, str, str]:
    """#1 writes ``limit``; the fix branch starts there and rewrites its lines; meanwhile #2 puts a
    header on top of the file on main, pushing ``limit`` four lines down; #3 merges the fix.
    Returns the repository, the merge base and the fix branch's head."""
    r = Repo(path)
    r.write("README.md", "# calc\n")
    r.commit("Initial commit")
    r.write("calc.py", MODULE)
    r.commit("Add the limit (#1)", author="Ann")
    base = r.git("rev-parse", "HEAD")
    r.git("checkout", "-q", "-b", "fix")
    r.write("calc.py", FIXED)
    r.commit("fix: cap the limit at ten", author="Bob")
    head = r.git("rev-parse", "HEAD")
    r.git("checkout", "-q", "main")
    r.write("calc.py", HEADER + MODULE)
    r.commit("Add a module header (#2)", author="Cid")
    r.git("merge", "-q", "--no-ff", "fix", "-m", "Merge pull request #3 from acme/fix\n\nfix: cap the limit at ten",
          author="Bob", committer="GitHub")  # fmt: skip
    r.clock += 3600
    return r, base, head


def github_files(repo: Repo, base: str, head: str) -> list[dict]:
    """"List pull requests files" as GitHub answers it: the diff from the merge base, not from the parent."""
    diff = repo.git("diff", "-U3", base, head, "--", "calc.py")
    patch = diff[diff.index("@@"):]
    return [{"filename": "calc.py", "status": "modified", "additions": 3, "deletions": 3, "changes": 6, "patch": patch}]


@needs_git
def test_the_merge_base_s_numbers_name_the_wrong_pull_request_at_the_parent(tmp_path):
    """What went wrong: blamed at the parent with the merge base's numbers, the fix's lines
    are #2's header; read through the file at the parent, they are #1's."""
    from bot.sandbox import Sandbox
    from sandbox_helpers import generate_private_key_pem

    repo, base, head = build_repo(tmp_path / "calc")
    files = github_files(repo, base, head)
    assert files[0]["patch"].startswith("@@ -1,")  # numbered as in the merge base
    sandbox = Sandbox(1, generate_private_key_pem())
    (name,) = sandbox.add_git_repo(repo.path)
    owner, short = name.split("/")
    merge = repo.git("rev-parse", "HEAD")
    traced = trace_plan([ChangedFile.from_github(f) for f in files]).to_blame
    assert {line.line for line in traced} == {2, 3, 4}
    variables = {"owner": owner, "name": short, "oid": merge, "parent": f"{merge}~1", "p0": "calc.py",
                 "t0": parent_expression(merge, "calc.py")}  # fmt: skip
    answer = run_query(sandbox.state, blame_query(1), variables)
    assert "errors" not in answer
    repository = answer["data"]["repository"]
    answers = [(["calc.py"], merge_commit(repository, 1))]
    drifted = facts_from_answers(answers, traced, own=3)  # the merge base's numbers, as before
    assert {o.pull for o in drifted.origins} == {2}
    at_parent = {"calc.py": lines_at_parent(files[0]["patch"], repository["t0"]["text"])}
    facts = facts_from_answers(answers, traced, own=3, at_parent=at_parent)
    assert [(o.line, o.pull) for o in facts.origins] == [(2, 1), (3, 1), (4, 1)]  # told at the patch's numbers
    # A file the base branch rewrote there says nothing at all (no line is placed).
    assert facts_from_answers(answers, traced, own=3, at_parent={"calc.py": {}}) is None


@contextlib.asynccontextmanager
async def app_on_repo(private_key: bytes, tmp_path: Path) -> AsyncIterator[tuple[Loopback, str, dict[int, dict]]]:
    repo, base, head = build_repo(tmp_path / "calc")
    async with start_sandbox(private_key) as sandbox:
        (name,) = sandbox.add_git_repo(repo.path)
        bundles = {b["pull"]["number"]: b for b in merged_pull_requests(repo.path)}
        # The sandbox diffs a merge from its parent; GitHub diffs a pull request from the merge base.
        bundles[3]["files"] = github_files(repo, base, head)
        sandbox.state.add_bundle(bundles[3], git_dir=repo.path)
        settings = settings_for(sandbox, private_key, tmp_path)
        async with running_app(settings, sandbox=sandbox, rules=shipped_rules(), client_options={"sleep": Sleeps()}) as client:
            yield Loopback(client, sandbox, bundles, Sleeps()), name, bundles


@needs_git
async def test_the_fix_s_guide_names_who_wrote_its_lines_though_the_base_branch_moved_them(app_private_key, tmp_path):  # noqa: F811
    """Before, the guide said the fix's lines were written in #2 (the header the base branch
    added above them); now in #1, which wrote them."""
    from bot.app.server import wait_idle

    async with app_on_repo(app_private_key, tmp_path) as (lb, name, bundles):
        assert (await lb.deliver(pr_delivery(bundles[3]), delivery="fix-1")).status == 202
        await wait_idle(lb.app)
        (comment,) = lb.sandbox.comments(name, 3)
        stored = lb.state.services.guides.get(name, 3)
        assert [c["number"] for c in stored["history"]["candidates"]] == [1]
        assert "were written in #1" in comment.body and "#2" not in comment.body
        # Still one GraphQL request and no REST call for the file.
        assert [r["method"] for r in lb.sandbox.requests if r["path"] == "/graphql"] == ["POST"]
        assert not [r for r in lb.sandbox.requests if "calc.py" in r["path"]]
