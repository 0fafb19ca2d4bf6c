"""Exact statement changes (analysis.edits) and the focus points and sentences built on them (focus.edits).

Each misleading class of issue 20 these fix is proved twice: on a small synthetic
patch (always) and on a real corpus pull request of that shape (skipped without the
corpus).
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from bot.engine.analysis import analyse, analyse_file
from bot.engine.analysis.edit_consequence import new_only
from bot.engine.analysis.edits import Budget, file_edits
from bot.engine.analysis.model import EDIT_KINDS, DiffAnalysis, Edit, FileAnalysis
from bot.engine.analysis.patch import parse_patch
from bot.engine.focus.edits import edit_points, edit_sentence, main_edit
from bot.engine.focus.model import ReviewSummary
from bot.engine.focus.names import introduced_names
from bot.engine.focus.points import focus_points
from bot.engine.render.messages import t
from bot.engine.snapshot import ChangedFile, PullRequestSnapshot

SHARED = Path(os.environ.get("PRGUIDE_SHARED", Path(__file__).resolve().parents[2] / "shared"))
CORPUS = SHARED / "corpus" / "verl-2026h1"


def _file(name: str, patch: str, status: str = "modified") -> ChangedFile:
    adds = sum(1 for line in patch.splitlines() if line.startswith("+"))
    dels = sum(1 for line in patch.splitlines() if line.startswith("-"))
    return ChangedFile(filename=name, status=status, additions=adds, deletions=dels, patch=patch)


def _snapshot(*files: ChangedFile, title: str = "change", body: str = "") -> PullRequestSnapshot:
    return PullRequestSnapshot(repository="o/r", number=1, title=title, body=body, files=tuple(files))


def _edits(patch: str, path: str = "pkg/mod.py") -> tuple[Edit, ...]:
    return file_edits(parse_patch(patch), path, "source", Budget())


def _corpus(number: int) -> PullRequestSnapshot:
    path = CORPUS / f"{number}.json"
    if not path.exists():
        pytest.skip(f"corpus bundle {path} is absent (set PRGUIDE_SHARED to the shared/ folder)")
    from bot.sources.bundle import load_bundle

    return load_bundle(path)


def _focus(snapshot: PullRequestSnapshot):
    return focus_points(analyse(snapshot), (), ReviewSummary(), snapshot=snapshot)


# --- analysis.edits -------------------------------------------------------------------------------

CALLEE = """@@ -10,6 +10,6 @@ class Parser(Base):
     def parse(self, value):
         try:
-            value = eval(value)
+            value = ast.literal_eval(value)
         except Exception:
             pass
"""


def test_a_callee_replaced_with_the_same_arguments_is_stated_with_its_place():
    (edit,) = _edits(CALLEE)
    assert edit.kind == "call_replaced" and edit.kind in EDIT_KINDS
    assert edit.symbol == "Parser.parse"
    assert edit.detail == "eval -> ast.literal_eval"
    assert (edit.line, edit.old_line) == (12, 12)
    assert edit.evidence.start == 12 and edit.evidence.old == "value = eval(value)"


def test_arguments_added_removed_and_changed():
    patch = """@@ -1,5 +1,5 @@ def save(self, model, path):
     x = 1
-    self.client.save(model, path)
+    self.client.save(model, path, strict=self.config.strict)
-    load(a, b)
+    load(a)
"""
    edits = _edits(patch)
    assert [(e.kind, e.detail) for e in edits] == [
        ("call_args_changed", "+strict=self.config.strict"),
        ("call_args_changed", "-b"),
    ]
    (swap,) = _edits("@@ -1,3 +1,3 @@ def f(x):\n     y = 1\n-    hook(module, self.cfg.mode)\n+    hook(module, self.mode)\n")
    assert swap.detail == "~self.cfg.mode -> self.mode"
    assert edit_sentence(swap, "en").endswith("`hook(module, self.cfg.mode)` now passes `self.mode` instead of `self.cfg.mode`")
    # A log message's words are not behaviour.
    assert _edits("@@ -1,3 +1,3 @@ def f(x):\n     y = 1\n-    logger.info(f'a {x}')\n+    logger.info(f'b {x}')\n") == ()


def test_a_dropped_cast_before_a_weight_sync_is_a_cast_removed():
    patch = """@@ -20,4 +20,4 @@ class Syncer:
     def sync(self, weights):
         for name, tensor in weights:
-            self.send(name, tensor.to(self.dtype))
+            self.send(name, tensor)
"""
    (edit,) = _edits(patch)
    assert edit.kind == "cast_removed" and edit.detail == ".to(self.dtype)"
    assert edit.symbol == "Syncer.sync"


def test_a_removed_version_guard_and_an_added_guard():
    removed = """@@ -5,5 +5,4 @@ def merge(model):
     x = prepare(model)
-    if version < parse("2.0"):
-        merge_params(model)
+    merge_params(model)
     return x
"""
    (edit,) = _edits(removed)
    assert edit.kind == "guard_removed" and edit.old == 'version < parse("2.0")'.replace('"', "'")
    assert edit.detail == "merge_params(model)"
    added = removed.replace("-    if", "+    if").replace("-        merge", "+        merge").replace("+    merge_params(model)\n", "-    merge_params(model)\n")
    # Same lines, other direction: build it explicitly to keep the hunk's order (removed first).
    added = """@@ -5,4 +5,5 @@ def merge(model):
     x = prepare(model)
-    merge_params(model)
+    if is_support_ipc():
+        merge_params(model)
     return x
"""
    (edit,) = _edits(added)
    assert edit.kind == "guard_added" and edit.new == "is_support_ipc()"


def test_conditions_returns_and_constants():
    patch = """@@ -1,9 +1,9 @@
-LIMIT = 10
+LIMIT = 20
 def f(x):
-    if x > 1:
+    if x > 2:
         pass
-    return x
+    return x * 2
"""
    kinds = [(e.kind, e.old, e.new) for e in _edits(patch)]
    assert ("constant_changed", "10", "20") in kinds
    assert ("condition_changed", "x > 1", "x > 2") in kinds
    assert ("return_changed", "x", "x * 2") in kinds


#: A statement kept under a new ``else:`` when a new option picks a chunked variant.
CHUNKED_BRANCH = """@@ -1,4 +1,9 @@ class Engine:
     def forward(self, logits):
         if calc:
-            entropy = vocab_entropy(logits)
+            if self.cfg.chunked:
+                entropy = vocab_entropy_chunked(logits, chunk_size=self.cfg.chunk_size)
+            else:
+                entropy = vocab_entropy(logits)
         return entropy
"""


def test_a_statement_kept_under_a_new_else_is_a_new_branch():
    patch = CHUNKED_BRANCH
    (edit,) = _edits(patch)
    assert edit.kind == "branch_added"
    assert edit.detail == "self.cfg.chunked" and edit.old == "entropy = vocab_entropy(logits)"


def test_checks_moved_within_a_function_are_neither_added_nor_removed():
    patch = """@@ -1,8 +1,8 @@ def f(a):
-    if a is None:
-        raise ValueError("a")
     b = 1
     c = 2
+    if a is None:
+        raise ValueError("a")
     return b
"""
    assert _edits(patch) == ()


def test_whole_new_files_and_tests_have_no_edits():
    patch = "@@ -0,0 +1,2 @@\n+def f(x):\n+    return x\n"
    assert _edits(patch) == ()
    assert file_edits(parse_patch(CALLEE), "tests/test_x.py", "test", Budget()) == ()


# --- consequence: a raise only a new option can trigger -------------------------------------------

def test_a_raise_on_an_option_the_same_pull_request_adds_is_new_only():
    code = """@@ -1,4 +1,6 @@ class Config:
     name: str = ""
+    disaggregation: bool = False
     def check(self):
         x = 1
+        if self.disaggregation and self.name != "":
+            raise ValueError("not with a name")
"""
    yaml = "@@ -1,2 +1,3 @@\n rollout:\n   name: x\n+  disaggregation: false\n"
    a = analyse(_snapshot(_file("pkg/config.py", code), _file("pkg/cfg.yaml", yaml)))
    (edit,) = [e for e in a.edits if e.kind == "raise_added"]
    assert edit.consequence == "new_only"
    # `not new_option` holds by default: it can hit every existing configuration.
    assert not new_only("not self.disaggregation", frozenset({"disaggregation"}))
    assert new_only("self.disaggregation is not None", frozenset({"disaggregation"}))
    assert not new_only("self.old_flag", frozenset({"disaggregation"}))
    point = next(p for p in edit_points(a) if p.key and "raise_added" in p.key)
    assert point.key == "focus.edit.raise_added_new" and point.weight < 100


# --- focus.edits ----------------------------------------------------------------------------------

def test_edit_sentence_states_the_edit_with_file_line_and_function_in_both_languages():
    (edit,) = _edits(CALLEE)
    en = edit_sentence(edit, "en")
    assert en == "`pkg/mod.py` — in `Parser.parse`, line 12: now calls `ast.literal_eval` instead of `eval`, with the same arguments"
    zh = edit_sentence(edit, "zh")
    assert "`Parser.parse` 中第 12 行" in zh and "`ast.literal_eval`" in zh
    with pytest.raises(KeyError):
        edit_sentence(edit, "xx")


def test_main_edit_only_when_one_edit_clearly_dominates():
    (edit,) = _edits(CALLEE)
    one = DiffAnalysis((FileAnalysis("pkg/mod.py", "modified", "source", language="python", edits=(edit,)),))
    assert main_edit(one) == edit
    same = [Edit("call_replaced", f"pkg/m{i}.py", "f", "a(x)", "b(x)", "a -> b", i + 1, i + 1) for i in range(2)]
    two = DiffAnalysis(tuple(FileAnalysis(e.path, "modified", "source", language="python", edits=(e,)) for e in same))
    assert main_edit(two) is None
    assert main_edit(DiffAnalysis()) is None


def test_every_edit_form_has_a_message_in_both_languages():
    forms = {"call_args_changed": ["+a", "-a", "~", "~a -> b"], "call_replaced": ["a -> b"]}
    for kind in [k for k in EDIT_KINDS if k != "moved_changed"]:
        details = forms.get(kind, ["d"])
        for detail in details:
            for consequence in ("", "new_only"):
                for symbol in ("f", ""):
                    e = Edit(kind, "a.py", symbol, "old", "new", detail, 3, 3, consequence)
                    for lang in ("en", "zh"):
                        assert "{" not in edit_sentence(e, lang)


# --- focus points: misleading classes 1, 8, 9 ------------------------------------------------------

def test_class_8_the_rce_fix_is_stated_as_the_replaced_call_synthetic():
    snap = _snapshot(_file("pkg/parser.py", CALLEE), title="fix: avoid arbitrary code execution")
    ps = _focus(snap)
    assert ps[0].key == "focus.edit.call_replaced"
    text = t(ps[0].key, "en", ps[0].params)
    assert "`ast.literal_eval` instead of `eval`" in text
    assert all(p.evidence for p in ps)


def test_class_8_the_rce_fix_is_stated_as_the_replaced_call_corpus():
    ps = _focus(_corpus(6542))
    first = ps[0]
    assert first.file == "verl/experimental/agent_loop/tool_parser.py"
    assert first.key == "focus.edit.call_replaced" and first.params["new"] == "ast.literal_eval"
    assert all(p.evidence for p in ps)
    # The tests point no longer lists names the tests use.
    assert not any(p.key == "focus.tests_uses" for p in ps)


def test_class_8_a_python_feature_with_config_files_keeps_its_implementation_synthetic():
    yaml = "@@ -1,2 +1,4 @@\n actor:\n   a: 1\n+  chunked: false\n+  chunk_size: 4\n"
    files = [_file(f"pkg/config/c{i}.yaml", yaml) for i in range(8)]
    code = CHUNKED_BRANCH
    ps = _focus(_snapshot(*files, _file("pkg/engine.py", code), title="support chunked entropy"))
    assert ps[0].file == "pkg/engine.py" and ps[0].key == "focus.edit.branch_added_new"
    # Eight config files adding the same keys are one point, not six.
    config = [p for p in ps if p.file and p.file.endswith(".yaml")]
    assert len(config) == 1 and config[0].params["files"] == 7


def test_class_8_a_python_feature_with_config_files_keeps_its_implementation_corpus():
    ps = _focus(_corpus(6446))
    assert any(p.file and p.file.endswith(".py") for p in ps)
    assert ps[0].file.endswith("transformer_impl.py")


def test_class_1_names_only_where_they_are_the_thing_that_changed_synthetic():
    # Before: "brings in or drops `rollout_world_size`, ..." from a bigger change whose names
    # sit on unchanged lines, and prose words (`LoRA-wrapped`) and number pieces (`_000`).
    f = FileAnalysis(
        "pkg/a.py", "modified", "source", additions=3, deletions=1,
        added_lines=("steps = 50_000", "# the LoRA-wrapped model", "world = tp * dp"), removed_lines=("world = tp",),
    )
    assert introduced_names(f) == ()
    one = FileAnalysis(".github/workflows/e2e.yml", "modified", "ci", additions=1, deletions=1,
                       added_lines=("    needs: [unit_tests, e2e_trainer_megatron-vlm]",),
                       removed_lines=("    needs: [unit_tests, e2e_trainer_fsdp-vlm]",))
    assert introduced_names(one) == ("e2e_trainer_megatron-vlm", "e2e_trainer_fsdp-vlm")
    assert introduced_names(FileAnalysis("a.py", "modified", "source", added_lines=("x = 50_000",), removed_lines=("x = 40_000",))) == ()


def test_class_1_names_only_where_they_are_the_thing_that_changed_corpus():
    for number in (6265, 5596, 5142):
        for p in _focus(_corpus(number)):
            # No list of words from anywhere in a bigger change ("brings in or drops"); the names a
            # point may give are those its added (or removed) lines have and the other side has not.
            assert p.key not in ("focus.largest_uses", "focus.largest_symbols_uses"), (number, p)


def test_class_9_silent_changes_are_stated_corpus():
    # A removed version guard around the body and an emptied handler table are exact edits.
    edits = analyse(_corpus(6993)).edits
    assert any(e.kind == "constant_changed" and e.new == "{}" for e in edits)


def test_analyse_file_sets_consequences_and_keeps_edits():
    f = analyse_file(_file("pkg/parser.py", CALLEE))
    assert [e.kind for e in f.edits] == ["call_replaced"]


def test_edits_stay_cheap_on_a_3000_file_pull_request():
    body = "".join(f"-    y{i} = call(a, b)\n+    y{i} = call(a, b, c={i})\n" for i in range(6))
    patch = f"@@ -1,8 +1,8 @@ def f(a, b):\n     x = 1\n{body}     return x\n"
    snap = _snapshot(*[_file(f"pkg/m{i}.py", patch) for i in range(3000)])
    start = time.perf_counter()
    a = analyse(snap)
    elapsed = time.perf_counter() - start
    # The parse budget caps the work: the first files get edits, the rest none.
    with_edits = sum(1 for f in a.files if f.edits)
    assert 0 < with_edits <= 400
    assert elapsed < 20  # generous: shared CI machines; bench/guide_speed.py measures the real figure


def test_the_same_edit_in_several_files_is_one_point():
    patch = CALLEE
    snap = _snapshot(_file("pkg/a.py", patch), _file("pkg/b.py", patch))
    ps = [p for p in _focus(snap) if p.key and p.key.startswith("focus.edit.")]
    assert len(ps) == 1 and ps[0].params["files"] == 1 and len(ps[0].evidence) == 2
    assert t(ps[0].key, "en", ps[0].params).endswith("with the same arguments")


def test_at_most_three_edit_points_leave_room_for_other_facts():
    patches = [CALLEE.replace("eval", f"ev{i}") for i in range(5)]
    snap = _snapshot(*[_file(f"pkg/m{i}.py", p) for i, p in enumerate(patches)],
                     _file("pkg/cfg.yaml", "@@ -1,2 +1,3 @@\n a:\n   b: 1\n+  c: 2\n"))
    ps = _focus(snap)
    assert sum(1 for p in ps if p.key and p.key.startswith("focus.edit.")) == 3
    assert any(p.file == "pkg/cfg.yaml" for p in ps)


def test_a_value_a_function_computes_is_an_assignment_change():
    # Class 9: an effective learning rate that now shrinks with the micro-batch count.
    patch = """@@ -3,4 +3,4 @@ class Actor:
     def step(self, n):
         x = 1
-        lr = self.base_lr
+        lr = self.base_lr / n
         return lr
"""
    (edit,) = _edits(patch)
    assert (edit.kind, edit.detail, edit.old, edit.new) == ("assignment_changed", "lr", "self.base_lr", "self.base_lr / n")
    assert "`lr` is now `self.base_lr / n` (was `self.base_lr`)" in edit_sentence(edit, "en")


def test_an_argument_line_of_a_call_opened_above_is_not_read_as_a_statement():
    patch = """@@ -3,5 +3,5 @@ def build(cfg):
     engine = Engine(
         name=cfg.name,
-        mode=cfg.mode,
+        mode=cfg.engine.mode,
     )
"""
    # Alone, `mode=cfg.mode,` parses as an assignment of a tuple: that would be untrue.
    assert _edits(patch) == ()


def test_new_code_names_are_only_names_no_removed_line_of_the_pull_request_has():
    from bot.engine.analysis.model import FileAnalysis
    from bot.engine.focus.names import new_code_names

    f = FileAnalysis("pkg/a.py", "modified", "source", "python", additions=6, deletions=1, added_lines=(
        "    ddp_config = DistributedDataParallelConfig(**ddp_config_dict)",
        '    """Build the LoRA-wrapped model w.r.t. the old_helper."""',
        "    # uses legacy_flag here",
        "    value = old_helper(ddp_config)",
        '    name = "quoted words in a string"',
        '    leaf = "gate_up_proj"',
        "    total = 50_000",
    ), removed_lines=("    value = old_helper(config)",))
    names = new_code_names(f, set(), lambda: "    value = old_helper(config)\nmoved_away = 1", limit=8)
    assert "DistributedDataParallelConfig" in names and "ddp_config_dict" in names
    # on a removed line, in a docstring, a comment or a string, or a number: not a new name
    assert "gate_up_proj" in names  # a string that is one name is a name the code uses
    for word in ("old_helper", "LoRA-wrapped", "w.r.t", "legacy_flag", "quoted", "_000"):
        assert word not in names
    # a block moved from another file names nothing
    moved = FileAnalysis("pkg/b.py", "modified", "source", "python", additions=1, added_lines=("moved_away = 1",))
    assert new_code_names(moved, set(), lambda: "moved_away = 1") == ()


def test_new_code_names_skip_docstring_prose_whose_quotes_are_on_unchanged_lines():
    from bot.engine.analysis.model import FileAnalysis
    from bot.engine.focus.names import new_code_names

    f = FileAnalysis("pkg/a.py", "modified", "source", "python", additions=2, added_lines=(
        "    Returns an AsyncGenerator of weights for the model.",
        "    if use_fast_path and not legacy_mode:",
    ))
    names = new_code_names(f, set(), lambda: "", limit=8)
    assert "AsyncGenerator" not in names
    assert {"use_fast_path", "legacy_mode"} <= set(names)


RAISE_REWRITTEN = """@@ -470,6 +470,9 @@ class LLMServerManager:
     def start(self):
         config = self.rollout_config
-        if config.disable_log_stats:
-            raise ValueError("log stats are needed")
+        if not insight_enabled():
+            pass
+        elif config.disable_log_stats or not config.prometheus:
+            raise ValueError("insight needs log stats and prometheus")
         return self.launch()
"""


def test_a_raise_kept_on_a_rewritten_condition_is_not_no_longer_raises():
    kinds = [(e.kind, e.old) for e in _edits(RAISE_REWRITTEN)]
    assert not any(kind == "raise_removed" for kind, _old in kinds), kinds


GATE_SPLIT = """@@ -190,10 +190,12 @@ class DistProfiler:
         def wrapper(self, *args, **kwargs):
             profiler = getattr(self, "profiler", None)
-            if not profiler or not profiler.check_enable() or (not profiler.check_this_step()):
+            if profiler is None:
                 return func(self, *args, **kwargs)
-            profiler.start()
-            return func(self, *args, **kwargs)
+            with trace_state(func.__name__):
+                if not profiler.check_enable() or not profiler.check_this_step():
+                    return func(self, *args, **kwargs)
+                profiler.start()
+                return func(self, *args, **kwargs)
"""


def test_a_condition_whose_tests_moved_into_the_block_is_not_narrowed():
    assert not any(e.kind == "condition_changed" for e in _edits(GATE_SPLIT)), _edits(GATE_SPLIT)


def test_a_block_with_a_check_replaced_by_a_call_is_no_removed_check():
    # fresh-k: an inline loop with `assert key in params` became `self._sync_vllm_weights(...)`,
    # a base-class method holding the same loop: "check removed" was untrue.
    from bot.engine.analysis import analyse_file
    from bot.engine.snapshot import ChangedFile

    body = ("@@ -97,11 +97,7 @@ class DetachNcclSync(Base):\n"
            "         if rollout_name == 'sglang':\n"
            "             self._sync_sglang_weights(model, params, group)\n"
            "         else:\n"
            "-            for key, shape, dtype in self._weights_info:\n"
            "-                tensor = torch.empty(shape, dtype=dtype)\n"
            "-                if self._is_actor:\n"
            "-                    assert key in params\n"
            "-                    tensor.copy_(params[key])\n"
            "-                collective.broadcast(tensor, src_rank=0)\n"
            "+            self._sync_vllm_weights(model, params, group)\n"
            " \n"
            "         if self._is_actor:\n"
            "             offload(self.module)\n")
    extracted = analyse_file(ChangedFile("verl/w.py", "modified", 1, 6, body))
    assert not any(b.kind == "check_removed" for b in extracted.behaviour)
    # The assert alone taken out of a loop that stays is a removed check.
    alone = ("@@ -97,6 +97,5 @@ class DetachNcclSync(Base):\n"
             "     def sync(self, params):\n"
             "         for key in self._weights_info:\n"
             "-            assert key in params\n"
             "             tensor.copy_(params[key])\n"
             "             collective.broadcast(tensor, src_rank=0)\n")
    assert [b.kind for b in analyse_file(ChangedFile("verl/w.py", "modified", 0, 1, alone)).behaviour] == ["check_removed"]


def _one_file(patch: str):
    from bot.engine.analysis import analyse_file
    from bot.engine.snapshot import ChangedFile

    return analyse_file(ChangedFile("verl/w.py", "modified", patch.count("\n+"), patch.count("\n-"), patch))


def test_a_call_added_to_or_taken_out_of_an_existing_function_is_said_exactly():
    added = _one_file("@@ -10,4 +10,5 @@ class Trainer:\n     def fit(self):\n         self.load()\n+        self._init_dump_executor()\n"
                      "         self.step()\n         self.save()\n")
    assert [(e.kind, e.symbol, e.new, e.line) for e in added.edits] == [("call_added", "Trainer.fit", "self._init_dump_executor()", 12)]
    gone = _one_file("@@ -10,5 +10,4 @@ def sync(group):\n     broadcast(group)\n-    collective.barrier(group_name=group)\n"
                     "     load()\n     done()\n")
    assert [(e.kind, e.symbol, e.old, e.old_line) for e in gone.edits] == [("call_removed", "sync", "collective.barrier(group_name=group)", 11)]


@pytest.mark.parametrize(
    "patch",
    [
        # a log line, a list append, a project's own log helper: no behaviour worth a point
        "@@ -10,3 +10,6 @@ def fit(self):\n     a()\n+    logger.info('x')\n+    self.items.append(1)\n+    log_gpu_memory_usage('x', logger=logger)\n     b()\n",
        # the call moved within the file: neither added nor removed
        "@@ -10,4 +10,4 @@ def fit(self):\n-    self.sync()\n     a()\n+    self.sync()\n     b()\n",
        # a run that does more than call: a rewrite
        "@@ -10,3 +10,5 @@ def fit(self):\n     a()\n+    x = compute()\n+    self.sync(x)\n     b()\n",
        # a call inside a block the diff opens belongs to that block
        "@@ -10,3 +10,5 @@ def fit(self):\n     a()\n+    if self.flag:\n+        self.sync()\n     b()\n",
        # module level: no function to name
        "@@ -10,3 +10,4 @@ import os\n import re\n+register_all()\n x = 1\n",
    ],
)
def test_calls_that_are_no_change_of_an_existing_function_are_not_said(patch):
    assert not any(e.kind in ("call_added", "call_removed") for e in _one_file(patch).edits)


def test_an_assert_moved_into_a_block_the_diff_opens_is_not_removed():
    # fresh-l #3404: `assert spec is not None` went under a new `if module is None:`.
    patch = ("@@ -64,9 +64,10 @@ def get_fn(config):\n     if not path:\n         return None\n"
             "-    spec = load(path)\n-    assert spec is not None\n-    module = build(spec)\n"
             "     name = config.get('name')\n     assert name is not None\n"
             "+    module = cache.get('m')\n+    if module is None:\n+        spec = load(path)\n+        assert spec is not None\n+        module = build(spec)\n"
             "     return getattr(module, name)\n")
    assert not any(e.kind == "assert_removed" for e in _one_file(patch).edits)


def test_a_function_defined_inside_a_method_the_hunk_starts_in_is_no_method():
    # fresh-l #3955: "FullyAsyncRayPPOTrainer.compute_old_log_prob" named a local function.
    patch = ("@@ -350,4 +350,7 @@ class Trainer:\n         batch = self.prepare()\n"
             "+        def compute_old_log_prob(batch):\n+            return self.actor.log_prob(batch)\n+\n"
             "         out = run(batch)\n         return out\n")
    f = _one_file(patch)
    assert "Trainer.compute_old_log_prob" not in {d.name for d in f.definitions_added}
    assert "Trainer.compute_old_log_prob" not in f.symbols_touched
