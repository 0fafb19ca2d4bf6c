"""A fix whose changed lines no pull request clearly wrote, and that adds lines an earlier
pull request added: "#N added the code lines this fix adds" (offline, from a clone)."""

from __future__ import annotations

import json
import shutil

import pytest

from bot.cli import main
from bot.engine.history.copies import added_lines, same_lines
from bot.engine.history.model import EarlierAdded
from bot.engine.snapshot import ChangedFile
from bot.sources.gitadded import earlier_added
from bot.sources.gitrepo import merged_pull_requests
from bot.sources.bundle import snapshot_from_bundle
from git_helpers import Repo


def _file(name: str, patch: str, status: str = "modified") -> ChangedFile:
    return ChangedFile(name, status=status, additions=patch.count("\n+"), deletions=patch.count("\n-"), patch=patch)


def test_added_lines_keep_lines_that_say_something():
    code = _file("pkg/run.py", "@@ -1,2 +1,7 @@\n def run():\n+    # a comment line here\n+    import os.path\n+    x = 1\n+    total = compute_total(x)\n-    moved = other_thing()\n+    moved = other_thing()\n     return 1")
    docs = _file("docs/guide.md", "@@ -1 +1,2 @@\n intro\n+    total = compute_total(x)\n+Use the new compute_total helper")
    assert added_lines([code, docs]) == {"total = compute_total(x)": "pkg/run.py"}


def test_same_lines_needs_a_clear_lead():
    a = EarlierAdded(5, ("a" * 12, "b" * 12, "c" * 12), ("x.py",) * 3)
    b = EarlierAdded(4, ("a" * 12,), ("y.py",))
    assert same_lines((b, a)) == a  # 3 lines against 1
    assert same_lines((b, a), min_lead=4) is None
    assert same_lines((EarlierAdded(6, ("a" * 12,), ("z.py",)), b)) is None  # a tie: nobody
    assert same_lines((a,), own=5) is None  # never the pull request itself
    assert same_lines(()) is None
    # One line among several the fix adds is not enough; one line that is all it adds is.
    assert same_lines((b,), total=5) is None and same_lines((b,), total=1) == b


CONFIG = "actor:\n  lr: 0.1\n  batch_size: 8\nrollout:\n  name: vllm\n"


@pytest.fixture
def repo(tmp_path) -> Repo:
    r = Repo(tmp_path / "svc")
    r.write("conf/train.yaml", CONFIG)
    r.write("conf/eval.yaml", CONFIG)
    r.commit("Initial import (#1)", author="Ann")
    r.write("conf/train.yaml", CONFIG.replace("  name: vllm\n", "  name: vllm\n  max_model_len: null\n"))
    r.commit("feat: a maximum model length for the rollout (#2)", author="Bob")
    for name in ("conf/train.yaml", "conf/eval.yaml"):
        r.write(name, r.path.joinpath(name).read_text().replace("name: vllm", "name: sglang"))
    r.write("README.md", "# svc\n")
    r.commit("Switch the rollout to sglang (#3)", author="Cid")
    # The fix adds to eval.yaml the key #2 added to train.yaml only: it deletes nothing of #2's,
    # and the lines around it come from #1 and #3 (no one pull request wrote them).
    r.write("conf/eval.yaml", r.path.joinpath("conf/eval.yaml").read_text().replace("  name: sglang\n", "  name: sglang\n  max_model_len: null\n"))
    r.commit("fix: the missing max_model_len in eval.yaml (#4)", author="Dee")
    return r


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_earlier_added_finds_the_pull_request_that_added_the_same_lines(repo):
    snapshots = {s.number: s for s in map(snapshot_from_bundle, merged_pull_requests(repo.path, repository="acme/svc"))}
    added, origins = earlier_added(repo.path, [snapshots[4]])
    assert added == {4: (EarlierAdded(2, ("max_model_len: null",), ("conf/train.yaml",)),)}
    assert origins[2].author == "Bob" and origins[2].number == 2
    # Outside the window (merged less than 0 days before): nothing.
    assert earlier_added(repo.path, [snapshots[4]], window_days=0) == ({}, {})


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_history_says_which_pull_request_added_the_lines_a_fix_adds(repo, capsys):
    assert main(["history", "--repo", str(repo.path), "--repository", "acme/svc", "--format", "json"]) == 0
    guides = {g["number"]: g for g in json.loads(capsys.readouterr().out)}
    fix = guides[4]["history"]
    assert fix["fixes_code_from"] is None and fix["same_lines_as"] == {"number": 2, "lines": 1, "added": 1}
    assert ("#2 (merged the same day, by **Bob**) added the code lines this fix adds (comments, imports and short lines aside), "
            "such as `max_model_len: null` in `conf/train.yaml`.") in guides[4]["markdown"]  # fmt: skip
    # Not a fix: no such claim (#3 adds nothing #2 added; #2 is a feature).
    assert "same_lines_as" not in guides[2]["history"] and "added the code lines" not in guides[3]["markdown"]


def test_the_claim_counts_the_lines_and_names_where_they_were_added():
    from bot.engine.history.model import HistoryLink, PullOrigin
    from bot.engine.render.ledger import _history

    same = EarlierAdded(12, ("max_model_len: null", "enforce_eager: true"), ("conf/a.yaml", "conf/b.yaml"))
    link = HistoryLink(None, PullOrigin(12, "c" * 40, 0, "octocat"), (), (), (), 9, True, 0, same=same, added=3)
    (claim,) = _history(link, "en")
    assert claim.kind == "history.fix_adds_same_lines" and [e.path for e in claim.evidence] == ["conf/a.yaml", "conf/b.yaml"]
    assert claim.text == ("#12 (merged 9 days earlier, by **octocat**) added 2 of the 3 code lines this fix adds "
                          "(comments, imports and short lines aside), such as `max_model_len: null` in `conf/a.yaml`.")  # fmt: skip
    (zh,) = _history(link, "zh")
    assert "#12" in zh.text and "3 行代码中的 2 行" in zh.text
    # Not a fix, or a revert of that very pull request: nothing is said.
    assert _history(HistoryLink(None, link.origin, (), (), (), 9, False, 0, same=same, added=3), "en") == []
    assert _history(link, "en", reverted=12) == []


def test_a_few_shared_lines_among_many_and_shared_test_lines_name_nobody():
    # On verl's history: "#N added 2 of the 43 code lines this fix adds, such as sort_keys = []",
    # and tests built the same way sharing set-up lines, tied fixes to unrelated pull requests.
    few = EarlierAdded(5, ("sort_keys = []", "values = list(x)"), ("pkg/a.py",) * 2)
    assert same_lines((few,), total=43) is None
    assert same_lines((few,), total=4) == few  # half of what the fix adds
    test = _file("tests/test_run.py", "@@ -1,2 +1,3 @@\n def test_run():\n+    dataset = Dataset.__new__(Dataset)\n     assert run()")
    assert added_lines([test]) == {}


def test_a_block_moved_into_a_new_function_of_the_same_file_is_not_traced():
    # fresh-m #2901: finalize()'s five lines became the body of a new helper; the guide said
    # the fix rewrote lines #2362 wrote.
    from bot.engine.history.lines import trace_plan

    patch = ("@@ -10,3 +10,9 @@ class R:\n     def a(self):\n         x = 1\n+        self._strip()\n"
             "+\n+    def _strip(self):\n+        if self.ids.eq(self.gen).all():\n+            self.ids = self.ids[:-3]\n"
             "+            self.mask = self.mask[:-3]\n+            self.pos = self.pos[:-3]\n"
             "@@ -20,6 +26,3 @@ class R:\n     def finalize(self):\n"
             "-        if self.ids.eq(self.gen).all():\n-            self.ids = self.ids[:-3]\n"
             "-            self.mask = self.mask[:-3]\n-            self.pos = self.pos[:-3]\n+        self._strip()\n"
             "         return self.ids\n")
    moved = trace_plan([_file("pkg/r.py", patch)])
    assert not moved.traced and moved.dropped.get("moved") == 4
    # One line put after another in the same file is an order changed: traced.
    order = "@@ -1,4 +1,4 @@ def f():\n-    load_weights(model)\n     sync(model)\n+    load_weights(model)\n     return model\n"
    assert [line.text.strip() for line in trace_plan([_file("pkg/f.py", order)]).traced] == ["load_weights(model)"]


def test_arguments_re_indented_with_their_call_are_re_wrapped_not_rewritten():
    # fresh-o #960: the lines of an `LLM(...)` call moved one level deeper (into a new `with`),
    # counted as lines the PR rewrote.
    from bot.engine.history.lines import trace_plan

    patch = ("@@ -100,5 +100,6 @@ class Rollout:\n"
             "-        self.engine = LLM(\n-            model=path,\n-            **engine_kwargs,\n-        )\n"
             "+        with ctx():\n+            self.engine = LLM(\n+                model=path,\n+                **engine_kwargs,\n+            )\n"
             "         return self.engine\n")
    plan = trace_plan([_file("pkg/rollout.py", patch)])
    # The statement's own first line moved into the new block: that still counts (a `with` now
    # wraps it); the argument lines and the closing bracket were only re-wrapped.
    assert [line.text.strip() for line in plan.traced] == ["self.engine = LLM("]
