"""``prguide history`` and ``prguide guide --repo`` name the pull request a fix's code came from."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from bot.cli import main
from bot.sources import merged_pull_requests
from git_helpers import Repo

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")

GO = 'package main\n\nimport "fmt"\n\nfunc limit(n int) int {\n\treturn n + 1\n}\n\nfunc main() {\n\tfmt.Println(limit(3))\n}\n'


@pytest.fixture
def repo(tmp_path) -> Repo:
    r = Repo(tmp_path / "svc")
    r.write("main.go", GO)
    r.commit("Initial import (#1)", author="Ann")
    r.write("main.go", GO.replace("return n + 1", "if n > 10 {\n\t\treturn 10\n\t}\n\treturn n * 2"))
    r.commit("Cap and double the limit (#2)", author="Bob")
    r.write("README.md", "# svc\n")
    r.commit("Add a readme (#3)", author="Cid")
    r.write("main.go", r.path.joinpath("main.go").read_text().replace("return n * 2", "return n * 3"))
    r.commit("fix: the limit triples (#4)\n\nThis fixes a regression from #2.", author="Dee")
    return r


def test_history_names_where_the_fix_s_code_came_from(repo, capsys):
    assert main(["history", "--repo", str(repo.path), "--repository", "acme/svc", "--format", "json"]) == 0
    guides = {g["number"]: g for g in json.loads(capsys.readouterr().out)}
    fix = guides[4]
    assert fix["history"]["fixes_code_from"] == 2 and fix["history"]["status"] == "ok"
    assert "The code lines this fix deletes or rewrites in `main.go` (imports, comments, moved and re-wrapped lines aside) were written in #2 (merged the same day, by **Bob**)." in fix["markdown"]
    assert "The description blames #2, and the blame agrees: #2 wrote the line this fix changes." in fix["markdown"]
    assert guides[3]["history"]["fixes_code_from"] is None  # a readme: nothing traced


def test_history_without_links(repo, capsys):
    assert main(["history", "--repo", str(repo.path), "--repository", "acme/svc", "--format", "json", "--no-history"]) == 0
    assert all("history" not in g for g in json.loads(capsys.readouterr().out))


def test_guide_of_a_bundle_with_a_clone(repo, tmp_path, capsys):
    (bundle,) = [b for b in merged_pull_requests(repo.path, repository="acme/svc") if b["pull"]["number"] == 4]
    # As GitHub gives it: no git metadata, the base known only through merge_commit_sha.
    del bundle["_meta"]
    bundle["pull"]["base"]["sha"] = "0" * 40
    path = tmp_path / "4.json"
    path.write_text(json.dumps(bundle), encoding="utf-8")
    assert main(["guide", str(path), "--repo", str(repo.path), "--lang", "zh"]) == 0
    assert "这次修复在 `main.go` 中删除或改写的代码行（不计导入、注释、移动和仅重排的行）写于 #2" in capsys.readouterr().out
    assert main(["guide", str(path)]) == 0
    assert "#2" not in capsys.readouterr().out.split("<details>")[0]


def test_guide_with_a_clone_that_lacks_the_history_says_nothing_about_it(repo, tmp_path, capsys):
    (bundle,) = [b for b in merged_pull_requests(repo.path, repository="acme/svc") if b["pull"]["number"] == 4]
    path = tmp_path / "4.json"
    path.write_text(json.dumps(bundle), encoding="utf-8")
    shallow = tmp_path / "shallow"
    subprocess.run(["git", "clone", "-q", "--depth", "1", f"file://{repo.path}", str(shallow)], check=True)
    assert main(["guide", str(path), "--repo", str(shallow), "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["history"]["status"] == "shallow" and data["history"]["fixes_code_from"] is None
    assert "were written in" not in data["markdown"]


def test_guide_repo_that_is_not_a_repository_is_one_line(repo, tmp_path, capsys):
    (bundle,) = [b for b in merged_pull_requests(repo.path) if b["pull"]["number"] == 4]
    path = tmp_path / "4.json"
    path.write_text(json.dumps(bundle), encoding="utf-8")
    assert main(["guide", str(path), "--repo", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("prguide guide: ") and "not a git repository" in err and err.count("\n") == 1


def test_a_git_failure_while_blaming_costs_the_links_not_the_guides(repo, capsys, monkeypatch):
    import bot.sources.githistory as githistory
    from bot.sources.gitrun import GitRepositoryError

    def broken(*args, **kwargs):
        raise GitRepositoryError("git log failed: out of memory")

    monkeypatch.setattr(githistory, "history_facts", broken)
    assert main(["history", "--repo", str(repo.path), "--repository", "acme/svc", "--format", "json"]) == 0
    captured = capsys.readouterr()
    assert len(json.loads(captured.out)) == 4 and all("history" not in g for g in json.loads(captured.out))
    assert "prguide history: warning: no history links (git log failed: out of memory)" in captured.err
