"""The changed paths of merged pull requests read from git in one pass (bot.sources.gitfiles)
agree with the full bundles, and the change-coupling bench replays such a history."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from bot.sources.gitfiles import merged_changes
from bot.sources.gitrepo import merged_pull_requests
from bot.sources.gitrun import GitRepositoryError
from git_helpers import Repo

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def repo(tmp_path_factory) -> Repo:
    repo = Repo(tmp_path_factory.mktemp("src") / "widgets")
    repo.write("app.py", "v1\n")
    repo.write("conf.yaml", "a: 1\n")
    repo.write("README.md", "hi\n")
    repo.commit("Initial import (#1)")
    repo.write("app.py", "v2\n")
    repo.write("conf.yaml", "a: 2\n")
    repo.commit("Change app and config (#2)", author="bob")
    repo.write("notes.txt", "direct\n")
    repo.commit("A push without a pull request")
    repo.git("mv", "README.md", "docs.md")
    repo.git("rm", "-q", "conf.yaml")
    repo.commit("Rename README, drop config (#3)")
    # A rebase merge: two commits ending in the same (#4).
    repo.write("a.py", "1\n")
    repo.commit("Add a (#4)", author="carol")
    repo.write("b.py", "1\n")
    repo.commit("Add b (#4)", author="carol")
    repo.git("checkout", "-q", "-b", "feature")
    repo.write("login.py", "x\n")
    repo.commit("Add login", author="alice")
    repo.git("checkout", "-q", "main")
    repo.write("CHANGES.md", "main only\n")
    repo.commit("Note changes without a pull request")
    repo.git("merge", "-q", "--no-ff", "feature", "-m", "Merge pull request #5 from alice/feature", "-m", "Login",
             author="Maintainer", committer="Maintainer")  # fmt: skip
    repo.clock += 3600
    return repo


def test_paths_agree_with_the_bundles_oldest_first(repo):
    changes = merged_changes(repo.path)
    assert [c.number for c in changes] == [1, 2, 3, 4, 5]
    bundles = {b["pull"]["number"]: b for b in merged_pull_requests(repo.path)}
    for change in changes:
        files = bundles[change.number]["files"]
        assert set(change.paths) == {f["filename"] for f in files}, change.number
        gone = {f["filename"] for f in files if f["status"] == "removed"} | {
            f["previous_filename"] for f in files if f["status"] == "renamed"}
        assert set(change.gone) == gone, change.number
        assert change.merged_at == bundles[change.number]["pull"]["merged_at"]
    by = {c.number: c for c in changes}
    assert set(by[3].gone) == {"README.md", "conf.yaml"} and set(by[3].paths) == {"docs.md", "conf.yaml"}
    assert set(by[4].paths) == {"a.py", "b.py"} and by[4].author == "carol"
    assert by[5].paths == ("login.py",) and by[5].author == "alice"  # the branch's author, not the merger


def test_last_and_errors(repo, tmp_path):
    assert [c.number for c in merged_changes(repo.path, last=2)] == [4, 5]
    assert merged_changes(repo.path, last=0) == []
    with pytest.raises(ValueError):
        merged_changes(repo.path, last=-1)
    with pytest.raises(GitRepositoryError):
        merged_changes(tmp_path)


def test_the_bench_prints_the_table_from_a_clone(tmp_path, capsys):
    repo = Repo(tmp_path / "coupled")
    for i in range(40):
        # src.py and gen.yaml change together; every fourth time gen.yaml is forgotten and
        # fixed in the next pull request.
        repo.write("src.py", f"{i}\n")
        if i % 4 != 3:
            repo.write("gen.yaml", f"{i}\n")
        repo.commit(f"Change {i} (#{2 * i + 1})")
        repo.write(f"other{i}.txt", "x\n")
        if i % 4 == 3:
            repo.write("gen.yaml", f"fixed {i}\n")
        repo.commit(f"Other {i} (#{2 * i + 2})")
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        import change_coupling
    finally:
        sys.path.remove(str(ROOT / "bench"))
    assert change_coupling.main([str(repo.path), "--last", "60"]) == 0
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if line.startswith("| ") and line[2].isdigit()]
    assert len(rows) == 30  # 15 thresholds, tests and docs left out and kept
    five_sixty = next(r for r in rows if r.startswith("| 5 | 0.6 | left out |"))
    cells = [c.strip() for c in five_sixty.strip("|").split("|")]
    assert int(cells[3]) > 0 and cells[6] == "1.00"  # every forgotten gen.yaml came next
    assert "chosen by the guide's own replay" in out
    assert change_coupling.main([str(tmp_path / "nothing")]) == 1
    assert "change_coupling:" in capsys.readouterr().err

