"""Who wrote a pull request's changed lines, read from git repositories built in a temporary folder."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from bot.engine.history.lines import trace_plan
from bot.engine.history.links import find_link
from bot.sources import load_merged_pull_requests, merged_pull_requests
from bot.sources.githistory import HistoryReader, TraceRequest, history_facts, pull_number
from bot.sources.gitrun import open_repository
from git_helpers import Repo

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")

APP = "import os\n\n\ndef area(w, h):\n    return w * h\n\n\ndef scale(x, k):\n    return x * k\n"


@pytest.fixture(scope="module")
def history(tmp_path_factory) -> dict:
    """A branch merged every GitHub way: squash (#1-#4, #8-#10), a merge commit (#5), a rebase run (#6)."""
    repo = Repo(tmp_path_factory.mktemp("hist") / "shapes")
    shas: dict = {"repo": repo}
    repo.write("app.py", APP)
    repo.write("lib.rs", "use std::io;\n\nfn total(xs: &[i32]) -> i32 {\n    xs.iter().sum()\n}\n")
    shas[1] = repo.commit("Initial import (#1)", author="Ann")
    repo.write("app.py", APP.replace("return x * k", "return x * k + 1  # off by one"))
    shas[2] = repo.commit("Add an offset to scale (#2)", author="Bob")
    repo.write("app.py", repo.path.joinpath("app.py").read_text().replace("import os\n", "import os\nimport sys\n"))
    shas[3] = repo.commit("Import sys (#3)", author="Cid")
    repo.write("lib.rs", "use std::io;\n\nfn total(xs: &[i32]) -> i32 {\n    xs.iter().map(|x| x * 2).sum()\n}\n")
    shas[4] = repo.commit("Double the total (#4)", author="Dee")
    # A merge commit: the branch's author wrote it, a maintainer merged it.
    repo.git("checkout", "-q", "-b", "feature/perimeter")
    repo.write("geo.py", "def perimeter(w, h):\n    return w + h\n")
    repo.commit("Add perimeter", author="Eve")
    repo.git("checkout", "-q", "main")
    repo.git("merge", "-q", "--no-ff", "feature/perimeter", "-m", "Merge pull request #5 from eve/feature/perimeter",
             "-m", "Add perimeter", author="Maintainer", committer="Maintainer")  # fmt: skip
    shas[5] = repo.git("rev-parse", "HEAD")
    repo.clock += 3600
    # A rebase merge whose commits carry (#6).
    repo.write("geo.py", repo.path.joinpath("geo.py").read_text() + "\n\ndef diagonal(w, h):\n    return (w * w + h * h) ** 0.25\n")
    shas["6a"] = repo.commit("Add diagonal (#6)", author="Fay")
    repo.write("util.py", "def clamp(v, lo, hi):\n    return max(lo, min(v, hi))\n")
    shas["6b"] = repo.commit("Add clamp (#6)", author="Fay")
    # A formatting sweep, listed in .git-blame-ignore-revs.
    repo.write("app.py", repo.path.joinpath("app.py").read_text().replace("return w * h", "return (w) * (h)"))
    repo.write("geo.py", repo.path.joinpath("geo.py").read_text().replace("    return (w * w + h * h) ** 0.25", "    return (\n        w * w + h * h\n    ) ** 0.25"))
    shas[7] = repo.commit("Reformat everything (#7)", author="Bot")
    repo.write(".git-blame-ignore-revs", f"# formatting\n{shas[7]}\n")
    shas[8] = repo.commit("Ignore the sweep in blame (#8)", author="Ann")
    # A rename between the bug and its fix.
    repo.git("mv", "util.py", "helpers.py")
    shas[9] = repo.commit("Rename util to helpers (#9)", author="Gus")
    # The fix: changes the lines #2, #5, #6 and #4 wrote, a comment-only line, and an import.
    repo.write("app.py", repo.path.joinpath("app.py").read_text().replace("return x * k + 1  # off by one", "return x * k").replace("import sys\n", ""))
    repo.write("geo.py", repo.path.joinpath("geo.py").read_text().replace("return w + h", "return 2 * (w + h)").replace("    ) ** 0.25", "    ) ** 0.5"))
    repo.write("helpers.py", "def clamp(v, lo, hi):\n    return min(max(v, lo), hi)\n")
    repo.write("lib.rs", "use std::io;\n\nfn total(xs: &[i32]) -> i32 {\n    xs.iter().sum()\n}\n")
    shas[10] = repo.commit("fix: scale, perimeter, diagonal, clamp and total (#10)", author="Hal")
    return shas


def requests(path, numbers):
    bundles = {b["pull"]["number"]: b for b in merged_pull_requests(path)}
    snaps = {s.number: s for s in load_merged_pull_requests(path)}
    return snaps, [TraceRequest(n, bundles[n]["pull"]["base"]["sha"], trace_plan(snaps[n].files).traced) for n in numbers]


@pytest.mark.parametrize("method", ["blame", "replay"])
def test_each_changed_line_is_traced_to_the_pull_request_that_wrote_it(history, method):
    repo = history["repo"]
    snaps, reqs = requests(repo.path, [10, 9, 4])
    facts = HistoryReader(open_repository(repo.path)).facts(reqs, method=method)[10]
    assert facts.status == "ok"
    by_line = {(o.path, o.line): o.pull for o in facts.origins}
    assert by_line == {
        ("app.py", 10): 2,  # the squash commit of #2
        ("geo.py", 2): 5,  # merged by "Merge pull request #5", written on the branch
        ("geo.py", 8): 6,  # rebase-merged, seen through the ignored formatting sweep (#7)
        ("helpers.py", 2): 6,  # written as util.py, followed through #9's rename
        ("lib.rs", 4): 4,
    }
    assert facts.pulls[5].author == "Eve" and facts.pulls[2].author == "Bob"
    assert facts.pulls[2].title == "Add an offset to scale" and facts.pulls[2].merged_at > 0
    link = find_link(snaps[10], trace_plan(snaps[10].files).traced, facts, fix=True)
    assert link.top is None  # five lines from four pull requests: none dominates
    assert {c.number: c.lines for c in link.candidates} == {6: 2, 2: 1, 5: 1, 4: 1}


def test_blame_and_replay_agree_on_every_deleted_line_of_every_pull_request(history):
    repo = history["repo"]
    snaps = load_merged_pull_requests(repo.path)
    bundles = {b["pull"]["number"]: b for b in merged_pull_requests(repo.path)}
    from bot.engine.history.lines import deleted_lines

    reqs = [TraceRequest(s.number, bundles[s.number]["pull"]["base"]["sha"], deleted_lines(s.files)) for s in snaps]
    for ignore in (True, False):
        blame = HistoryReader(open_repository(repo.path), ignore_revs=ignore).facts(reqs, method="blame")
        replay = HistoryReader(open_repository(repo.path), ignore_revs=ignore).facts(reqs, method="replay")
        assert {n: f.origins for n, f in blame.items()} == {n: f.origins for n, f in replay.items()}
    assert sum(len(f.origins) for f in blame.values()) >= 10


def test_without_the_ignore_file_the_sweep_is_blamed(history):
    repo = history["repo"]
    _, reqs = requests(repo.path, [10])
    facts = HistoryReader(open_repository(repo.path), ignore_revs=False).facts(reqs)[10]
    assert {(o.path, o.line): o.pull for o in facts.origins}[("geo.py", 8)] == 7


def test_lines_older_than_the_window_have_no_origin(history):
    repo = history["repo"]
    _, reqs = requests(repo.path, [10])
    # The fixture's commits are an hour apart: a window under an hour reaches none of them.
    facts = HistoryReader(open_repository(repo.path), window_days=1 / 48).facts(reqs)[10]
    assert facts.since > 0 and all(o.pull is None and o.commit == "" for o in facts.origins)


def test_a_shallow_clone_or_a_missing_base_says_why_and_names_nobody(history, tmp_path):
    repo = history["repo"]
    _, reqs = requests(repo.path, [10])
    shallow = tmp_path / "shallow"
    subprocess.run(["git", "clone", "-q", "--depth", "1", f"file://{repo.path}", str(shallow)], check=True)
    facts = HistoryReader(open_repository(shallow)).facts(reqs)[10]
    assert facts.status == "shallow" and "unshallow" in facts.detail and facts.origins == ()
    missing = HistoryReader(open_repository(repo.path)).facts([TraceRequest(10, "f" * 40, reqs[0].lines)])[10]
    assert missing.status == "missing" and not missing.available
    assert HistoryReader(open_repository(repo.path)).facts([TraceRequest(10, None, reqs[0].lines)])[10].status == "no-base"


def test_a_deep_enough_shallow_clone_traces_what_it_has(history, tmp_path):
    repo = history["repo"]
    _, reqs = requests(repo.path, [10])
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", "--depth", "3", f"file://{repo.path}", str(clone)], check=True)
    for method in ("blame", "replay"):
        facts = HistoryReader(open_repository(clone)).facts(reqs + reqs[:0], method=method)[10]
        assert facts.status == "ok"
        # Everything older than the clone's depth is unknown, never blamed on its oldest commit.
        assert all(o.pull is None for o in facts.origins), method


def test_pull_request_numbers_come_from_subjects():
    assert pull_number("Fix it (#12)") == 12
    assert pull_number("Merge pull request #7 from a/b") == 7
    assert pull_number("Fix #12 in the parser") is None
    assert pull_number("Tidy up") is None


def test_moved_code_is_not_traced_and_counted_in_the_shares_it_leaves_no_clear_origin(tmp_path):
    repo = Repo(tmp_path / "moves")
    repo.write("core.py", "def helper(v):\n    s = v * 2\n    t = s + 1\n    return t - 3\n\n\ndef run(x):\n    y = x + 1\n    return y\n")
    repo.commit("Add helper and run (#1)", author="Ann")
    repo.write("core.py", "def helper(v):\n    s = v * 2\n    t = s + 1\n    return t - 3\n\n\ndef run(x):\n    y = x + 2\n    return helper(y)\n")
    repo.commit("Run through helper (#2)", author="Bob")
    # The fix moves helper (written by #1) to its own module and edits run's two lines (#2's).
    repo.write("core.py", "from util import helper\n\n\ndef run(x):\n    y = x + 3\n    return helper(y) or 0\n")
    repo.write("util.py", "def helper(v):\n    s = v * 2\n    t = s + 1\n    return t - 3\n")
    repo.commit("fix: run (#3)", author="Cid")
    snaps, reqs = requests(repo.path, [3])
    plan = trace_plan(snaps[3].files)
    assert [line.text.strip() for line in plan.traced] == ["y = x + 2", "return helper(y)"] and plan.dropped["moved"] == 4
    for method in ("blame", "replay"):
        facts = HistoryReader(open_repository(repo.path)).facts(reqs, method=method)[3]
        assert find_link(snaps[3], plan.traced, facts, fix=True).top.number == 2  # the moved lines left out: 2 of 2
        link = find_link(snaps[3], plan.traced, facts, fix=True, relocated=plan.dropped["moved"])
        assert link.top is None and [(c.number, c.lines, c.total) for c in link.candidates] == [(2, 2, 6)]


def test_a_fix_that_only_adds_lines_is_traced_to_the_lines_around_them(tmp_path):
    repo = Repo(tmp_path / "adds")
    repo.write("io.py", "import os\n\n\ndef load(path):\n    data = read(path)\n    return parse(data)\n")
    repo.commit("Add load (#1)", author="Ann")
    repo.write(".github/workflows/ci.yml", "jobs:\n  test:\n    steps:\n      - run: pytest -x\n      - run: ruff check\n")
    repo.commit("Add CI (#2)", author="Cid")
    repo.write("io.py", "import os\n\n\ndef load(path):\n    data = read(path)\n    if data is None:\n        raise ValueError(path)\n    return parse(data)\n")
    repo.commit("fix: load refuses missing files (#3)", author="Bob")
    repo.write(".github/workflows/ci.yml", "jobs:\n  test:\n    steps:\n      - run: pytest\n      - run: ruff check .\n")
    repo.commit("fix: run every test and check every file (#4)", author="Dee")
    bundles = {b["pull"]["number"]: b for b in merged_pull_requests(repo.path)}
    snaps = {s.number: s for s in load_merged_pull_requests(repo.path)}
    adds, ci = trace_plan(snaps[3].files), trace_plan(snaps[4].files)
    assert adds.traced == () and adds.adds_only  # nothing deleted: plain SZZ has nothing to blame
    assert [(line.line, line.text.strip()) for line in adds.to_blame] == [(4, "def load(path):"), (5, "data = read(path)"), (6, "return parse(data)")]
    assert ci.traced == () and [line.line for line in ci.to_blame] == [4, 5] and ci.unanimous and not ci.adds_only
    for method in ("blame", "replay"):
        facts = history_facts(repo.path, [(snaps[n], bundles[n]["pull"]["base"]["sha"]) for n in (3, 4)], method=method)
        assert {(o.line, o.pull) for o in facts[3].origins} == {(4, 1), (5, 1), (6, 1)}
        link = find_link(snaps[3], adds.to_blame, facts[3], fix=True, unanimous=True, adds_only=True)
        assert link.top.number == 1 and link.adds_only
        assert find_link(snaps[4], ci.to_blame, facts[4], fix=True, unanimous=True).top.number == 2


def test_a_pull_request_that_moved_lines_into_a_block_is_their_author(tmp_path):
    # #2 moves #1's lines into a `with` block: in Python that changes what they do, so the
    # blame (without -w) and the replay both credit #2; on the developer-informed oracle,
    # ignoring whitespace lost right answers (precision 0.87 -> 0.84).
    repo = Repo(tmp_path / "reindent")
    repo.write("run.py", "def run(cfg):\n    model = build(cfg)\n    out = model.step(cfg.lr * 2)\n    return out\n")
    repo.commit("Add run (#1)", author="Ann")
    repo.write("run.py", "def run(cfg):\n    with timer():\n        model = build(cfg)\n        out = model.step(cfg.lr * 2)\n    return out\n")
    repo.commit("Time the step (#2)", author="Bob")
    repo.write("run.py", "def run(cfg):\n    with timer():\n        model = build(cfg)\n        out = model.step(cfg.lr)\n    return out\n")
    repo.commit("fix: the learning rate (#3)", author="Cid")
    snaps, reqs = requests(repo.path, [3, 2])
    from bot.engine.history.lines import deleted_lines

    for method in ("blame", "replay"):
        facts = HistoryReader(open_repository(repo.path)).facts(reqs, method=method)
        assert {(o.path, o.line): o.pull for o in facts[3].origins} == {("run.py", 4): 2}, method
    all_deleted = [TraceRequest(r.number, r.base, deleted_lines(snaps[r.number].files)) for r in reqs]
    blame = HistoryReader(open_repository(repo.path)).facts(all_deleted, method="blame")
    replay = HistoryReader(open_repository(repo.path)).facts(all_deleted, method="replay")
    assert {n: f.origins for n, f in blame.items()} == {n: f.origins for n, f in replay.items()}
    assert sum(len(f.origins) for f in blame.values()) >= 3


def test_history_facts_carry_the_lines_they_traced(history):
    # The guide reads them instead of tracing the pull request's files a second time.
    from bot.sources.githistory import history_facts

    path = history["repo"].path
    bundles = {b["pull"]["number"]: b for b in merged_pull_requests(path)}
    pulls = [(s, bundles[s.number]["pull"]["base"]["sha"]) for s in load_merged_pull_requests(path)]
    found = history_facts(path, pulls)
    assert set(found) == {s.number for s, _ in pulls}
    assert all(found[s.number].traced == trace_plan(s.files) for s, _ in pulls)
    assert any(found[s.number].traced.to_blame for s, _ in pulls)
