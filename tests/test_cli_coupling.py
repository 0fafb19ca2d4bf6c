"""``prguide history --repo`` and ``prguide guide BUNDLE --repo CLONE`` name the files that
usually change with a pull request's files, from the clone's merged history, when the
replay of that history says such lines were right often enough."""

from __future__ import annotations

import json
import shutil

import pytest

from bot.cli import main
from bot.sources.gitrepo import merged_pull_requests
from git_helpers import Repo

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")

LINE = "`src/a.py` usually changes with `src/b.py`"


@pytest.fixture(scope="module")
def forgetful(tmp_path_factory):
    """Rounds of four pull requests: src/a.py changes with src/b.py, except every third
    round, when src/b.py is forgotten and changed by the next pull request. The newest
    pull request forgets it."""
    repo = Repo(tmp_path_factory.mktemp("src") / "forgetful")
    number = 0

    def merge(message: str) -> None:
        nonlocal number
        number += 1
        repo.commit(f"{message} (#{number})")

    for i in range(13):
        forgets = i % 3 == 2
        repo.write("src/a.py", f"A = {i}\n")
        if not forgets:
            repo.write("src/b.py", f"B = {i}\n")
        merge(f"Change a {i}")
        if forgets and i < 12:
            repo.write("src/b.py", f"B = {i} fixed\n")
        else:
            repo.write(f"notes/n{i}.txt", "x\n")
        merge(f"Follow {i}")
        for k in range(2):
            repo.write(f"other/o{i}-{k}.txt", "x\n")
            merge(f"Other {i}-{k}")
    repo.write("src/a.py", "A = last\n")
    merge("Change a, forgetting b")
    return repo


@pytest.fixture
def few_lines(monkeypatch):
    # A made-up history of ~50 pull requests names fewer lines than a real replay needs.
    monkeypatch.setattr("bot.engine.history.coupling.MIN_LINES", 3)


def test_history_names_the_forgotten_partner(forgetful, few_lines, capsys):
    assert main(["history", "--repo", str(forgetful.path), "--repository", "acme/app", "--last", "1"]) == 0
    out = capsys.readouterr().out
    assert LINE in out and "this PR did not touch it" in out


def test_history_names_nothing_where_the_replay_was_not_precise(forgetful, capsys):
    # At the shipped minimum of lines, this short history says too little: no line.
    assert main(["history", "--repo", str(forgetful.path), "--repository", "acme/app", "--last", "1"]) == 0
    assert LINE not in capsys.readouterr().out


def test_guide_of_a_bundle_with_the_clone_beside_it(forgetful, few_lines, tmp_path, capsys):
    newest = merged_pull_requests(forgetful.path, last=1, repository="acme/app")[0]
    bundle = tmp_path / "pr.json"
    bundle.write_text(json.dumps(newest), encoding="utf-8")
    assert main(["guide", str(bundle)]) == 0
    alone = capsys.readouterr().out
    assert LINE not in alone
    assert main(["guide", str(bundle), "--repo", str(forgetful.path), "--lang", "zh"]) == 0
    assert "`src/a.py` 通常与 `src/b.py` 一起修改" in capsys.readouterr().out
    assert main(["guide", "--all", str(tmp_path), "--repo", str(forgetful.path), "--format", "json"]) == 0
    (data,) = json.loads(capsys.readouterr().out)
    assert any(LINE.replace("`", "") in f.replace("`", "") for f in data["follow_ups"])


def test_guide_repo_that_is_not_a_repository_is_one_line(tmp_path, capsys):
    bundle = tmp_path / "pr.json"
    bundle.write_text("{}", encoding="utf-8")
    assert main(["guide", str(bundle), "--repo", str(tmp_path / "nowhere")]) == 1
    err = capsys.readouterr().err
    assert err.startswith("prguide guide: ") and err.count("\n") == 1 and "nowhere" in err
