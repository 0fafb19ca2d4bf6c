"""The kinds of evidence ``bench/history_links.py`` measures beyond blamed lines
(``bench/history_evidence.py``), on a synthetic git repository: each names the one pull
request its evidence points at, and nobody when two do."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT / "bench") not in sys.path:
    sys.path.insert(0, str(ROOT / "bench"))

import history_evidence  # noqa: E402
from git_helpers import Repo  # noqa: E402
from history_links import Case  # noqa: E402

from bot.sources.bundle import snapshot_from_bundle  # noqa: E402
from bot.sources.gitrepo import merged_pull_requests  # noqa: E402


@pytest.fixture
def repo(tmp_path):
    r = Repo(tmp_path / "repo")
    r.write("README.md", "start\n")
    r.commit("start")
    r.write("pkg/run.py", "def run(x):\n    total = x + 1\n    return total\n")
    r.commit("Add run (#1)")
    r.write("pkg/tools.py", "def scale_value(x):\n    return x * 2\n")
    r.commit("Add scale_value (#2)")
    # The fix: changes run's body (written in #1) and calls scale_value (defined in #2).
    r.write("pkg/run.py", "def run(x):\n    total = x + 2\n    total = scale_value(total)\n    return total\n")
    r.commit("Fix run (#3)")
    return r


def _cases(path):
    bundles = merged_pull_requests(str(path), repository="o/r")
    return [Case(b["pull"]["number"], set(), False, snapshot_from_bundle(b), b["pull"]["base"]["sha"]) for b in bundles]


def test_function_kind_names_the_one_pull_request_that_changed_the_fixed_function(repo):
    history = history_evidence.definitions_history(str(repo.path))
    assert [m.number for m in history] == [1, 2, 3]
    assert "pkg/run.py::run" in history[2].changed
    cases = [c for c in _cases(repo.path) if c.number == 3]
    assert history_evidence.function_answers(cases, {3: None}, history, window=30) == {3: 1}
    # A first answer is kept: the kind only speaks where prguide names nobody.
    assert history_evidence.function_answers(cases, {3: 2}, history, window=30) == {3: 2}


def test_identifier_kind_names_the_one_pull_request_that_defined_a_name_the_fix_uses(repo):
    history = history_evidence.definitions_history(str(repo.path))
    cases = [c for c in _cases(repo.path) if c.number == 3]
    assert "scale_value" in history_evidence.used_names(cases[0])
    assert history_evidence.identifier_answers(cases, {3: None}, history, window=30, same_file=False) == {3: 2}
    # Defined in a file the fix does not change: with ``same_file`` nobody is named.
    assert history_evidence.identifier_answers(cases, {3: None}, history, window=30, same_file=True) == {3: None}


def test_identifier_kind_names_nobody_when_two_pull_requests_defined_used_names(repo):
    repo.write("pkg/more.py", "def other_value(x):\n    return x\n")
    repo.commit("Add other_value (#4)")
    repo.write("pkg/run.py", "def run(x):\n    total = x + 2\n    total = other_value(scale_value(total))\n    return total\n")
    repo.commit("Fix run again (#5)")
    history = history_evidence.definitions_history(str(repo.path))
    cases = [c for c in _cases(repo.path) if c.number == 5]
    assert history_evidence.identifier_answers(cases, {5: None}, history, window=30, same_file=False) == {5: None}


def test_parity_halves_and_added_answers():
    class C:
        def __init__(self, number, truth):
            self.number, self.truth = number, truth

    cases = [C(1, {9}), C(2, {8}), C(3, {7})]
    assert [c.number for c in history_evidence.halves(cases)["odd"]] == [1, 3]
    # Only the answers the first method did not give count: 1 right (#1), 1 wrong (#3).
    assert history_evidence.added_answers({1: None, 2: 8, 3: None}, {1: 9, 2: 8, 3: 6}, cases) == (1, 2)
