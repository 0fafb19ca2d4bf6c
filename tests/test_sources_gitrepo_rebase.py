"""Rebase-merged pull requests found in real git repositories made in a temporary folder.

GitHub's "Rebase and merge" re-commits each commit of the pull request on the base
branch (new hashes, same author, author date and message) and adds no ``(#N)``; many
projects' subjects carry one anyway, and a clone may have the pull request refs.
"""

from __future__ import annotations

import shutil
import subprocess

import pytest

from bot.sources.gitrepo import merged_pull_requests, why_no_pull_requests
from git_helpers import Repo

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")

FETCH_ADVICE = (
    "fetch the PR refs with `git fetch {remote} '+refs/pull/*/head:refs/pull/*/head'` "
    "to let prguide find rebase-merged pull requests"
)


def files_of(bundle: dict) -> dict[str, dict]:
    return {f["filename"]: f for f in bundle["files"]}


def rebase_merge(repo: Repo, branch: str) -> list[str]:
    """Re-commit ``branch``'s own commits on main one by one, as GitHub's "Rebase and merge" does."""
    own = repo.git("rev-list", "--reverse", f"main..{branch}").split()
    for sha in own:
        repo.git("cherry-pick", "--allow-empty", sha, committer="GitHub")
        repo.clock += 60
    return repo.git("rev-list", "--reverse", f"HEAD~{len(own)}..HEAD").split()


@pytest.fixture(scope="module")
def suffixed(tmp_path_factory) -> dict:
    """Main with two rebase-merged PRs whose subjects carry (#N), a squash merge between them."""
    repo = Repo(tmp_path_factory.mktemp("src") / "suffixed")
    repo.write("README.md", "# Parser\n")
    base = repo.commit("Initial commit")
    repo.write("parser.py", "def parse(text):\n    return text.split()\n")
    one = repo.commit("Add a parser (#3)", author="alice")
    repo.write("test_parser.py", "def test_parse():\n    assert parse('a b') == ['a', 'b']\n")
    two = repo.commit("Test the parser (#3)\n\nCovers the happy path.", author="alice")
    repo.write("README.md", "# Parser\nSplits text.\n")
    three = repo.commit("Document the parser (#3)", author="alice")
    repo.write("parser.py", "def parse(text):\n    return text.split(' ')\n")
    squash = repo.commit("Split on spaces only (#4)", author="bob")
    repo.write("cli.py", "print('draft')\n")
    five_a = repo.commit("Add a command line (#5)", author="carol")
    repo.write("cli.py", "import sys\nprint(sys.argv)\n")
    five_b = repo.commit("Print the arguments (#5)", author="carol")
    return {"repo": repo, "base": base, 3: [one, two, three], 4: [squash], 5: [five_a, five_b]}


def test_a_run_of_commits_sharing_a_suffix_is_one_pull_request(suffixed):
    bundles = merged_pull_requests(suffixed["repo"].path)

    assert [b["pull"]["number"] for b in bundles] == [5, 4, 3]
    five, four, three = bundles
    assert [b["_meta"]["kind"] for b in bundles] == ["rebase", "squash", "rebase"]
    assert three["_meta"]["commits"] == suffixed[3]
    assert three["pull"]["merge_commit_sha"] == suffixed[3][-1]
    assert three["pull"]["base"]["sha"] == suffixed["base"]
    assert three["pull"]["title"] == "Add a parser"
    assert three["pull"]["body"] == (
        "* Add a parser\n\n* Test the parser\n\nCovers the happy path.\n\n* Document the parser"
    )
    assert three["pull"]["user"]["login"] == "alice"
    assert sorted(files_of(three)) == ["README.md", "parser.py", "test_parser.py"]
    assert (three["pull"]["changed_files"], three["pull"]["additions"], three["pull"]["deletions"]) == (3, 5, 0)
    assert four["_meta"]["commits"] == suffixed[4] and four["pull"]["title"] == "Split on spaces only"


def test_a_rebased_run_is_diffed_from_before_its_first_commit_to_its_last(suffixed):
    five = merged_pull_requests(suffixed["repo"].path, last=1)[0]

    # Added by the first commit and rewritten by the second: one added file, final content.
    [cli] = five["files"]
    assert (cli["filename"], cli["status"], cli["additions"], cli["deletions"]) == ("cli.py", "added", 2, 0)
    assert cli["patch"] == "@@ -0,0 +1,2 @@\n+import sys\n+print(sys.argv)"
    assert five["pull"]["base"]["sha"] == suffixed[4][0]
    assert five["pull"]["head"] == {"ref": "pull/5/head", "sha": suffixed[5][-1]}
    assert five["_meta"]["found_by"] == "subject"


def test_last_counts_a_run_once(suffixed):
    bundles = merged_pull_requests(suffixed["repo"].path, last=2)

    assert [(b["pull"]["number"], len(b["_meta"]["commits"])) for b in bundles] == [(5, 2), (4, 1)]


@pytest.fixture
def with_pull_refs(tmp_path) -> dict:
    """GitHub-style rebase merges without any (#N): only refs/pull/N/head tell the PRs."""
    repo = Repo(tmp_path / "refs")
    repo.write("app.py", "VERSION = 1\n")
    repo.commit("Initial commit")
    repo.git("checkout", "-q", "-b", "login")
    repo.write("login.py", "def login():\n    return None\n")
    repo.commit("Add login", author="alice")
    repo.write("login.py", "def login(user):\n    return user\n")
    repo.commit("Take the user\n\nThe caller knows who logs in.", author="alice")
    repo.git("checkout", "-q", "main")
    repo.write("app.py", "VERSION = 2\n")
    direct = repo.commit("Bump the version", author="maintainer")
    rebased = rebase_merge(repo, "login")
    repo.git("update-ref", "refs/pull/7/head", "login")
    original_tip = repo.git("rev-parse", "login")
    repo.git("branch", "-q", "-D", "login")
    repo.git("checkout", "-q", "-b", "docs")
    repo.write("docs/login.md", "Log in with login(user).\n")
    repo.commit("Document login", author="bob")
    repo.git("checkout", "-q", "main")
    docs = rebase_merge(repo, "docs")
    repo.git("update-ref", "refs/remotes/origin/pr/8", "docs")
    repo.git("branch", "-q", "-D", "docs")
    return {"repo": repo, "direct": direct, 7: rebased, "tip7": original_tip, 8: docs}


def test_pull_request_refs_find_rebased_commits_without_suffixes(with_pull_refs):
    repo = with_pull_refs["repo"]
    # As on GitHub: new commits on main, so the refs point at none of them.
    assert with_pull_refs["tip7"] not in with_pull_refs[7]

    bundles = merged_pull_requests(repo.path)

    assert [b["pull"]["number"] for b in bundles] == [8, 7]
    docs, login = bundles
    assert login["_meta"]["commits"] == with_pull_refs[7]
    assert login["_meta"]["found_by"] == "rebased:refs/pull/7/head"
    assert login["pull"]["head"] == {"ref": "pull/7/head", "sha": with_pull_refs["tip7"]}
    assert login["pull"]["base"]["sha"] == with_pull_refs["direct"]
    assert login["pull"]["title"] == "Add login"
    assert login["pull"]["body"] == "* Add login\n\n* Take the user\n\nThe caller knows who logs in."
    [only] = login["files"]
    assert (only["filename"], only["status"], only["additions"], only["deletions"]) == ("login.py", "added", 2, 0)
    assert only["patch"] == "@@ -0,0 +1,2 @@\n+def login(user):\n+    return user"
    assert docs["_meta"]["found_by"] == "rebased:refs/remotes/origin/pr/8"
    assert (docs["_meta"]["kind"], docs["pull"]["title"], docs["pull"]["body"]) == ("rebase", "Document login", None)
    assert list(files_of(docs)) == ["docs/login.md"]


def test_a_head_ref_on_the_base_branch_takes_its_authors_commits_below_it(tmp_path):
    repo = Repo(tmp_path / "fast-forward")
    repo.write("a.txt", "a\n")
    repo.commit("Start", author="carol")
    repo.write("a.txt", "a\nb\n")
    carol = repo.commit("Carol's change", author="carol")
    repo.write("b.txt", "one\n")
    first = repo.commit("Add b", author="dave")
    repo.write("b.txt", "one\ntwo\n")
    head = repo.commit("Extend b", author="dave")
    repo.git("update-ref", "refs/pull/9/head", head)

    [pull] = merged_pull_requests(repo.path)

    assert pull["pull"]["number"] == 9 and pull["_meta"]["commits"] == [first, head]
    assert pull["_meta"]["found_by"] == "head:refs/pull/9/head"
    assert pull["pull"]["base"]["sha"] == carol
    assert [(f["filename"], f["status"], f["additions"]) for f in pull["files"]] == [("b.txt", "added", 2)]


def test_without_pull_requests_the_reason_names_the_count_and_the_fetch(tmp_path):
    repo = Repo(tmp_path / "plain")
    for i in range(3):
        repo.write("a.txt", f"{i}\n")
        repo.commit(f"Change {i}")

    assert merged_pull_requests(repo.path) == []
    assert why_no_pull_requests(repo.path) == (
        "no merged pull requests found: 3 commits on the first-parent history of main, none a merge commit "
        "or a subject ending in (#N); " + FETCH_ADVICE.format(remote="https://github.com/OWNER/NAME")
    )
    assert why_no_pull_requests(repo.path, repository="acme/plain").endswith(
        FETCH_ADVICE.format(remote="https://github.com/acme/plain")
    )
    repo.git("remote", "add", "origin", "https://github.com/acme/plain.git")
    assert why_no_pull_requests(repo.path).endswith(FETCH_ADVICE.format(remote="origin"))


def test_the_reason_names_merge_commits_and_pull_request_refs_that_matched_nothing(tmp_path):
    repo = Repo(tmp_path / "merges")
    repo.write("a.txt", "a\n")
    repo.commit("Start")
    repo.git("checkout", "-q", "-b", "topic")
    repo.write("b.txt", "b\n")
    repo.commit("On a topic")
    repo.git("checkout", "-q", "main")
    repo.git("merge", "-q", "--no-ff", "topic", "-m", "Merge branch 'topic'")
    repo.git("update-ref", "refs/pull/2/head", repo.git("commit-tree", "-m", "elsewhere", "HEAD^{tree}"))

    assert why_no_pull_requests(repo.path) == (
        "no merged pull requests found: 2 commits on the first-parent history of main, 1 merge commit but "
        "none named 'Merge pull request #N from ...', and no subject ending in (#N), and the pull request ref "
        "refs/pull/2/head neither points at one of them nor holds a commit that was rebased into one"
    )


def test_fetching_the_pull_request_refs_as_advised_finds_the_rebase_merges(with_pull_refs, tmp_path):
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(with_pull_refs["repo"].path), str(clone)], check=True, capture_output=True)
    assert merged_pull_requests(clone) == []
    advice = why_no_pull_requests(clone)
    assert advice.endswith(FETCH_ADVICE.format(remote="origin"))

    fetch = advice.split("`")[1]
    subprocess.run(["sh", "-c", fetch], cwd=clone, check=True, capture_output=True)

    assert [b["pull"]["number"] for b in merged_pull_requests(clone)] == [7]


def test_stacked_pull_requests_each_keep_their_own_commits(tmp_path):
    repo = Repo(tmp_path / "stacked")
    repo.write("a.txt", "a\n")
    repo.commit("Start")
    repo.git("checkout", "-q", "-b", "lower")
    repo.write("lower.txt", "lower\n")
    repo.commit("Lower change", author="erin")
    repo.git("checkout", "-q", "-b", "upper")
    repo.write("upper.txt", "upper\n")
    repo.commit("Upper change", author="erin")
    repo.git("update-ref", "refs/pull/10/head", "lower")
    repo.git("update-ref", "refs/pull/11/head", "upper")
    repo.git("checkout", "-q", "main")
    # The upper PR holds the lower one's commit too; rebasing it re-commits both.
    lower, upper = rebase_merge(repo, "upper")

    bundles = merged_pull_requests(repo.path)

    assert [(b["pull"]["number"], b["_meta"]["commits"]) for b in bundles] == [(11, [upper]), (10, [lower])]
    assert [list(files_of(b)) for b in bundles] == [["upper.txt"], ["lower.txt"]]
