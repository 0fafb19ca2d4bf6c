"""Hunt round 7: hostile diffs and odd input against the engine's newest checks (call edits,
cut shell continuations, docstring bodies and trailing comments, moved blocks, description
names, keys still read). Each finding is a failing test first; the ones left are strict xfails."""

from __future__ import annotations

import pytest

from bot.engine.analysis.patch import parse_patch
from bot.engine.analysis.prose import prose_only


def test_dict_items_beside_an_args_key_are_no_docstring_prose():
    # Every line is a syntax error alone and "Returns:" is a dict key, yet the hunk is code:
    # `"verify": True` → False was said "prose only" (no code changed, no code lines counted).
    patch = ('@@ -20,7 +20,7 @@ def handler(request):\n'
             '         "timeout": 10,\n'
             '         Returns:\n'
             '             {"a": 1,\n'
             '-        "verify": True,\n'
             '+        "verify": False,\n'
             '         "retries": 3,\n')
    assert not prose_only(parse_patch(patch), "python")


def test_a_string_continued_over_lines_beside_an_args_key_is_no_docstring_prose():
    # Prose words in a backslash-continued string do not make the dict around them a docstring.
    patch = ('@@ -20,7 +20,7 @@ def handler(request):\n'
             '         "help": "see \\\n'
             'the flag words \\\n'
             'here",\n'
             '         Returns:\n'
             '             {"a": 1,\n'
             '-        "verify": True,\n'
             '+        "verify": False,\n')
    assert not prose_only(parse_patch(patch), "python")


def test_text_after_an_unclosed_quote_is_no_trailing_comment():
    # Inside a multi-line string a `"` opens nothing: what follows `#` is the string's text.
    patch = ('@@ -20,3 +20,3 @@ def query(db):\n'
             '     SELECT * FROM users\n'
             '-    WHERE name = "x # AND admin = 0\n'
             '+    WHERE name = "x # OR 1 = 1\n')
    assert not prose_only(parse_patch(patch), "python")


def test_text_after_a_hash_inside_an_embedded_string_is_no_comment():
    patch = ('@@ -20,3 +20,3 @@ def query(db):\n'
             '     SELECT * FROM users\n'
             '-    WHERE a = 1 # AND admin = 0\n'
             '+    WHERE a = 1 # OR 1 = 1\n')
    assert not prose_only(parse_patch(patch), "python")



def test_a_hunk_that_shows_a_string_around_the_hash_changes_no_comment():
    # The quotes in the hunk: the line is the string's text, not code with a comment.
    patch = ('@@ -20,5 +20,5 @@ def query(db):\n'
             '     sql = """\n'
             '     SELECT * FROM users\n'
             '-    WHERE a = 1 # AND admin = 0\n'
             '+    WHERE a = 1 # OR 1 = 1\n'
             '     """\n')
    assert not prose_only(parse_patch(patch), "python")


@pytest.mark.parametrize("context", [
    ["    x = compute(", "        a,"],
    ['    config = {', '        "lr": 1e-3,'],
    ["    if (ready", "        and done):"],
    ["    else:", "    @cached"],
    ["    return x", "    )"],
    ['    """Docstring.', "", "    Words of prose here.", '    """'],
])
def test_a_trailing_comment_beside_code_lines_is_still_a_comment_edit(context):
    # The lines around the change are Python (in brackets, after an operator, a block's
    # header, a docstring the hunk shows): the '#' starts a comment, as before.
    lines = "".join(f" {line}\n" for line in context)
    patch = (f"@@ -20,{len(context) + 1} +20,{len(context) + 1} @@ def run(x):\n{lines}"
             "-        limit=3,  # the old wrod\n"
             "+        limit=3,  # the old word\n")
    assert prose_only(parse_patch(patch), "python")

# --- a removed config key "still read" ---------------------------------------------------------

REFUSED = '''@@ -670,3 +670,6 @@ class RayPPOTrainer:
         max_keep = self.config.trainer.get("max_actor_ckpt_to_keep", None)
+        # trainer.remove_previous_ckpt_in_save is gone: set max_actor_ckpt_to_keep instead
+        if "remove_previous_ckpt_in_save" in self.config.trainer:
+            raise ValueError("trainer.remove_previous_ckpt_in_save was removed")
         self.save(max_keep)
'''


def test_a_removed_key_the_code_refuses_or_names_in_a_comment_is_still_a_break():
    # A comment, a membership test before a raise and an error message name the key; none
    # reads its value: configs that still set it fail, and the guide must say so.
    from tests.test_exact_claims import REMOVED_KEY, guide_text

    text = guide_text({"verl/trainer/config/ppo_trainer.yaml": REMOVED_KEY, "verl/trainer/ppo/ray_trainer.py": REFUSED},
                      title="[trainer] feat: keep N checkpoints")
    assert "will fail or be ignored" in text


# --- a removed function's "callers rewritten" ---------------------------------------------------

RECURSIVE = '''@@ -10,11 +10,3 @@ import torch
 
 
-def flatten_config(cfg, prefix=""):
-    """Flatten a nested config."""
-    out = {}
-    for k, v in cfg.items():
-        out.update(flatten_config(v, prefix + k + ".") if isinstance(v, dict) else {prefix + k: v})
-    return out
-
-
 def save_model(model, path):
'''
COMMENTED = '''@@ -10,9 +10,3 @@ import torch
 
 
-def load_sharded_model(path, device):
-    # load_sharded_model(path) reads every shard
-    state = torch.load(path)
-    return build(state, device)
-
-
 def save_model(model, path):
'''
CALLER = '''@@ -40,4 +40,4 @@ def main(cfg):
     model = build(cfg)
-    flat = flatten_config(cfg)
+    flat = dict(cfg)
     save(flat)
'''


def test_a_removed_function_whose_only_reference_is_a_comment_is_a_break():
    # `# load_sharded_model(path) reads …` is no caller the pull request rewrote: the public
    # function is gone, not an internal refactor.
    from tests.test_exact_claims import guide_text

    assert "Breaking" in guide_text({"verl/utils/model_io.py": COMMENTED}, title="remove helper")


@pytest.mark.xfail(strict=True, reason="a recursive call in the removed function's own body counts as a caller rewritten: "
                   "FileAnalysis keeps removed_lines without hunk bounds, so which removed lines are that body is a guess "
                   "(a caller in the next hunk reads as more of it)")
def test_a_removed_recursive_function_is_a_break():
    from tests.test_exact_claims import guide_text

    assert "Breaking" in guide_text({"verl/utils/model_io.py": RECURSIVE}, title="remove helper")


def test_a_removed_function_whose_caller_the_diff_rewrote_is_still_no_break():
    from tests.test_exact_claims import guide_text

    assert "Breaking" not in guide_text({"verl/utils/model_io.py": RECURSIVE, "verl/trainer/main.py": CALLER}, title="remove helper")


# --- CPU: a re-indented line's continuation check -----------------------------------------------


def test_a_re_indented_line_of_spaces_costs_linear_time():
    # A leading \s* before a class that takes spaces too backtracked once per leading space
    # over the whole line: 50,000 spaces took seconds (quadratic), one line of a hostile patch.
    import time

    from bot.engine.history.lines import continuation_line

    line = " " * 50_000 + "x"
    start = time.process_time()
    assert not continuation_line(line)
    assert continuation_line(" " * 50_000 + "value=1,") and continuation_line("    )")
    assert time.process_time() - start < 1.0  # ~6 s before; linear now (well under 1 ms)


# --- CPU: names the description spells in another word order ------------------------------------

def _many_names_description():
    from bot.engine.analysis.description import parse_description

    names = [f"{a}{b}x_q{a}_zz{b}_w{i}" for i, (a, b) in enumerate((a, b) for a in "abcdefghij" for b in "abcdefghijklmnopqrst")]
    return parse_description("## What does this PR do?\n" + "\n".join(f"- uses `{n}`" for n in names))


def test_two_hundred_absent_snake_names_scan_the_patches_a_bounded_number_of_times():
    # Each absent three- or four-word name cost 23 scans of up to 4 MB of patches (one per
    # other word order): 200 names took seconds. Past the first few, the patches' names are
    # read once. Counted as line events of the check, not as time.
    from bot.engine.analysis import description as description_module
    from bot.engine.analysis import reordered as reordered_module
    from bot.engine.analysis.description import check_against_diff
    from bot.engine.analysis.model import DiffAnalysis
    from tests.step_count import line_events

    desc = _many_names_description()
    assert len(desc.mentioned_identifiers) == 200
    patches = ["x = foo(bar)\n" * 2000]
    run = lambda: check_against_diff(desc, DiffAnalysis(files=()), patches)  # noqa: E731
    steps = line_events(description_module.__file__, run) + line_events(reordered_module.__file__, run)
    assert steps < 12_000  # 30,213 line events before (23 order scans per name), 7,784 now


@pytest.mark.parametrize("patch,found", [("y = self.reward_extra_info\n", True), ("y = self.reward_extra_info_v2\n", False),
                                         ("y = x_reward_extra_info\n", False), ("y = 2_info_extra\n", True), ("z = 1\n", False)])
def test_reordered_names_read_once_agree_with_the_order_scans(patch, found):
    from bot.engine.analysis.reordered import reordered

    for ident in ("extra_reward_info", "extra_info_2"):
        scans = reordered(ident, patch)
        assert reordered(ident, patch, [99]) == scans  # the names read once
    assert reordered("extra_reward_info", patch) == found or reordered("extra_info_2", patch) == found


# --- call edits of a call that moved --------------------------------------------------------------

from tests.test_edits import _one_file  # noqa: E402


@pytest.mark.parametrize("patch", [
    # the call moved down the file and was wrapped over lines on the way
    "@@ -10,4 +10,3 @@ def fit(self):\n     a()\n-    self.sync(group=g)\n     b()\n"
    "@@ -40,3 +39,6 @@ def fit2(self):\n     d()\n+    self.sync(\n+        group=g,\n+    )\n     e()\n",
    # a multi-line call moved whole
    "@@ -10,7 +10,4 @@ def fit(self):\n     a()\n-    self.sync(\n-        group=g,\n-    )\n     b()\n     c()\n"
    "@@ -40,3 +37,6 @@ def fit2(self):\n     d()\n+    self.sync(\n+        group=g,\n+    )\n     e()\n",
    # the call moved with its spacing tidied
    "@@ -10,4 +10,3 @@ def fit(self):\n     a()\n-    self.sync( x )\n     b()\n@@ -40,3 +39,4 @@ def fit(self):\n     c()\n+    self.sync(x)\n     d()\n",
], ids=["re-wrapped", "multi-line", "spacing"])
def test_a_call_moved_within_its_file_is_neither_added_nor_removed(patch):
    # "no longer calls self.sync" for a call the diff only moved (one line removed, the
    # same call re-added lower, wrapped or re-spaced) misleads like a dropped call; a call
    # moved to another function of the file is not said either (as for one unchanged line).
    assert not any(e.kind in ("call_added", "call_removed") for e in _one_file(patch).edits)


def test_a_removed_method_whose_ray_remote_call_the_diff_rewrote_is_no_break():
    # verl-2026h1 #5487: set_parameter_synchronizer went with its one caller,
    # `trainer.set_parameter_synchronizer.remote(…)`; only an error message's "Call
    # set_parameter_synchronizer() first." had kept it from a break, and strings no longer count.
    from bot.engine.breaking import callers_rewritten
    from bot.engine.analysis.model import DiffAnalysis, FileAnalysis

    removed = ('        ray.get(self.components["trainer"].set_parameter_synchronizer.remote(sync))',)
    analysis = DiffAnalysis((FileAnalysis("verl/main.py", "modified", "source", removed_lines=removed),))
    assert callers_rewritten("FullyAsyncTrainer.set_parameter_synchronizer", analysis)
    text_only = ('        raise ValueError("Call set_parameter_synchronizer() first.")',)
    analysis = DiffAnalysis((FileAnalysis("verl/main.py", "modified", "source", removed_lines=text_only),))
    assert not callers_rewritten("FullyAsyncTrainer.set_parameter_synchronizer", analysis)


# --- crashes on odd input ----------------------------------------------------------------------


def test_a_line_that_is_only_a_backslash_does_not_crash_the_guide():
    # The file's whole change, quoted, was one empty line (a lone `\\` cleaned of its shell
    # continuation): the summary's sentence then had neither old nor new lines (KeyError 'olds').
    from tests.test_exact_claims import guide_text

    patch = "@@ -10,3 +10,4 @@\n python3 -m verl.trainer \\\n     a=1 \\\n+    \\\n     b=2\n"
    text = guide_text({"scripts/run.sh": patch}, title="run script")
    assert "scripts/run.sh" in text


# --- a point's inner edits ---------------------------------------------------------------------


def test_a_points_inner_edits_say_no_call_added_inside_a_definition_the_diff_adds():
    # The old body of `a` became the new `b` (its lines are context), one call added among
    # them: the edits' own points leave it out as new code, the file point's "among them, in
    # `b`, line 13: now also calls `self_audit(x)`" did not.
    from tests.test_exact_claims import guide_text

    patch = ("@@ -1,9 +1,17 @@\n import os\n \n \n def a(x):\n+    go(x)\n+    go2(x)\n+    go3(x)\n+    return x\n+\n+\n"
             "+def b(x):\n     setup(x)\n+    self_audit(x)\n     finish(x)\n     return x\n \n \n def c(y):\n     pass\n+\n+\n"
             "+def d(y):\n+    return y\n")
    text = guide_text({"verl/w.py": patch}, title="add b")
    assert "verl/w.py" in text and "now also calls `self_audit(x)`" not in text


# --- CPU: a page's headings ----------------------------------------------------------------------


def test_a_pages_headings_are_compared_through_sets_made_once(monkeypatch):
    # `h not in set(before)` inside the comprehension made the set once per heading: quadratic
    # in a page's headings (3,000 took 0.2 s a file, a 3,000-file pull request minutes).
    from types import SimpleNamespace

    from bot.engine.render import summary

    made = []

    def counting_set(*args):
        made.append(1)
        return set(*args)

    monkeypatch.setattr(summary, "set", counting_set, raising=False)
    f = SimpleNamespace(path="docs/a.md", added_lines=tuple(f"# New {i}" for i in range(3000)),
                        removed_lines=tuple(f"# New {i}" for i in range(1, 3001)))
    assert summary.page_headings(f) == []  # "# New 3000" was removed: renamed, no new section said
    assert len(made) <= 4
