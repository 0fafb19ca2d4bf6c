"""A small change said by quoting its lines (analysis.quote), and edits that are no change after all.

Raters called "+2/−0 lines, in `f`; the added code uses `x`" true but empty and
"Changes 1 source file under `verl/utils/` (+2/−0)." no summary at all: a change of a
line or two is stated by its lines. Each test fails on the engine before quotes.
"""

from __future__ import annotations

from bot.engine.analysis import analyse
from bot.engine.analysis.edit_filters import sentinel_default
from bot.engine.analysis.edits import Budget, file_edits
from bot.engine.analysis.patch import parse_patch
from bot.engine.analysis.quote import small_change
from bot.engine.build import build_guide
from bot.engine.rules import load_rules
from bot.engine.snapshot import ChangedFile, PullRequestSnapshot

ADD_ONE = """@@ -398,6 +398,8 @@ def rearrange_micro_batches(batch, max_token_len):
     seq_len_effective = batch["attention_mask"].sum(dim=1)
+    # offsets are int32 after chunk(): widen before summing
+    seq_len_effective = seq_len_effective.long()
     total = calculate_workload(seq_len_effective)
"""

DOCSTRING_ONLY = '''@@ -10,4 +10,4 @@ class VeOmniEngineConfig:
     """Engine config.
-    data_parallel_mode (str): Data parallel mode, default "fsdp"
+    data_parallel_mode (str): Data parallel mode, default "fsdp2"
     """
'''

CI_IMAGE = """@@ -560,8 +560,8 @@ jobs:
   nightly:
-    runs-on: linux-aarch64-a3-16
-    image: registry/a3-image:latest
+    runs-on: linux-aarch64-a2b3-8
+    image: registry/910b-image:latest
     steps:
"""

UNPAIRED = """@@ -1,3 +1,4 @@ jobs:
 env:
-  RAY_NOSET: 1
+  TLLM_AFFINITY: 0
+  OTHER: 1
"""


def _file(name: str, patch: str) -> ChangedFile:
    adds = sum(1 for line in patch.splitlines() if line.startswith("+"))
    dels = sum(1 for line in patch.splitlines() if line.startswith("-"))
    return ChangedFile(filename=name, status="modified", additions=adds, deletions=dels, patch=patch)


def _snapshot(*files: ChangedFile, title: str = "fix overflow") -> PullRequestSnapshot:
    return PullRequestSnapshot(repository="o/r", number=1, title=title, body="", files=tuple(files))


def test_an_added_line_is_quoted_with_its_function_and_line():
    edit = small_change(parse_patch(ADD_ONE), "pkg/balance.py", "source", "python")
    assert edit is not None and edit.kind == "lines"
    assert edit.new == "seq_len_effective = seq_len_effective.long()" and edit.old == ""
    assert edit.symbol == "rearrange_micro_batches" and edit.line == 400  # the comment line does not count


def test_the_guide_summary_of_a_one_line_fix_is_that_line():
    guide = build_guide(_snapshot(_file("pkg/balance.py", ADD_ONE)), load_rules([]), lang="en")
    summary = next(c for c in guide.data["claims"] if c["kind"] == "summary")
    assert "adds seq_len_effective = seq_len_effective.long()" in summary["text"]
    assert summary["evidence"][0]["path"] == "pkg/balance.py" and summary["evidence"][0]["start"] == 400
    zh = build_guide(_snapshot(_file("pkg/balance.py", ADD_ONE)), load_rules([]), lang="zh")
    assert "新增 `seq_len_effective = seq_len_effective.long()`" in zh.markdown


def test_replaced_lines_are_paired_only_by_what_they_set():
    edit = small_change(parse_patch(CI_IMAGE), ".github/workflows/nightly.yml", "ci", "yaml")
    assert edit is not None and edit.old.split("\n")[0] == "runs-on: linux-aarch64-a3-16"
    guide = build_guide(_snapshot(_file(".github/workflows/nightly.yml", CI_IMAGE)), load_rules([]), lang="en")
    assert "`runs-on: linux-aarch64-a3-16` → `runs-on: linux-aarch64-a2b3-8`, `image: registry/a3-image:latest` → `image: registry/910b-image:latest`" in guide.markdown
    # One line replaced by two: which became which is a guess, so nothing is quoted.
    assert small_change(parse_patch(UNPAIRED), "ci.yml", "ci", "yaml") is None


def test_prose_of_a_docstring_and_bigger_changes_are_not_quoted():
    assert small_change(parse_patch(DOCSTRING_ONLY), "pkg/config.py", "source", "python") is None
    many = "@@ -1,1 +1,4 @@\n a = 1\n+b = 2\n+c = 3\n+d = 4\n"
    assert small_change(parse_patch(many), "pkg/m.py", "source", "python") is None
    assert small_change(parse_patch(ADD_ONE), "nb.ipynb", "docs", None) is None


def test_a_condition_given_a_name_by_the_same_diff_is_no_condition_change():
    patch = """@@ -604,8 +604,9 @@ class MegatronEngine(BaseEngine):
     def get_per_tensor_param(self, base_sync_done=False):
         non_merge = self.peft_cls is not None
+        adapter_only = base_sync_done and non_merge
         if self.vanilla_bridge:
             params = self.bridge.export_weights(self.module)
-        elif base_sync_done and non_merge:
+        elif adapter_only:
             params = self.adapter_weights()
"""
    edits = file_edits(parse_patch(patch), "pkg/engine.py", "source", Budget())
    assert not [e for e in edits if e.kind == "condition_changed"]
    # A condition really changed is still stated.
    changed = patch.replace("+        elif adapter_only:", "+        elif adapter_only or force:")
    assert [e for e in file_edits(parse_patch(changed), "pkg/engine.py", "source", Budget()) if e.kind == "condition_changed"]


def test_a_default_turned_into_a_none_sentinel_for_the_same_value_is_no_default_change():
    patch = """@@ -610,4 +610,5 @@ class LLMServerManager:
-    def get_client(self, client_cls=LLMServerClient):
+    def get_client(self, client_cls=None):
+        client_cls = client_cls or LLMServerClient
         return client_cls(self.servers)
"""
    a = analyse(_snapshot(_file("pkg/llm_server.py", patch)))
    kinds = {e.kind for e in a.files[0].edits} | {b.kind for b in a.files[0].behaviour}
    assert "parameter_default_changed" not in kinds and "default_changed" not in kinds
    assert sentinel_default("f(x)", "Old", "None", "if x is None:\n    x = Old")
    assert not sentinel_default("f(x)", "Old", "New", "x = x or Old")


def test_a_raise_inside_a_block_the_diff_opens_is_not_stated_with_half_its_condition():
    patch = """@@ -70,4 +70,9 @@ class TrainingWorker:
     def __init__(self, config):
         self.config = config
+        if self.engine_config is None:
+            if self.config.auto_select_fn is None:
+                raise ValueError("need an engine config or a selector")
+            self.engine_config = self.config.auto_select_fn()
         self.engine = make(self.engine_config)
"""
    edits = file_edits(parse_patch(patch), "pkg/workers.py", "source", Budget())
    assert not [e for e in edits if e.kind == "raise_added"]


def test_the_scoring_model_is_no_claim_of_the_guide():
    guide = build_guide(_snapshot(_file("pkg/balance.py", ADD_ONE)), load_rules([]), lang="en")
    assert "why.model" not in {c["kind"] for c in guide.data["claims"]}
    assert "Importance is 1 + reach" not in guide.markdown


def test_a_removed_helper_whose_caller_in_the_same_file_changed_is_not_called_breaking():
    from bot.engine.breaking import local_helper
    from bot.engine.classify import classify

    patch = """@@ -10,12 +10,6 @@ import os
-def device_id_to_physical_device_id(idx):
-    visible = os.environ["CUDA_VISIBLE_DEVICES"].split(",")
-    return int(visible[idx])
-
-
 def get_device_uuid(idx):
-    physical = device_id_to_physical_device_id(idx)
-    return uuid_of(physical)
+    return uuid_of(idx)
"""
    snap = _snapshot(_file("pkg/rollout.py", patch), title="fix device ids")
    a = analyse(snap)
    assert local_helper("device_id_to_physical_device_id", a.files[0])
    keys = [c.key for c in classify(snap, a, ()).breaking_reasons]
    assert "breaking.symbol_removed" not in keys
    # A public function removed with no caller in its file stays a breaking removal.
    api = "@@ -10,3 +10,0 @@ import os\n-def load_checkpoint(path):\n-    return torch.load(path)\n-\n"
    snap = _snapshot(_file("pkg/ckpt.py", api), title="remove load_checkpoint")
    assert "breaking.symbol_removed" in [c.key for c in classify(snap, analyse(snap), ()).breaking_reasons]


DICT_ENTRY = """@@ -265,7 +265,7 @@ class Server:
             "tensor_parallel_size": self.config.tp,
-            "seed": self.rank + self.config.get("seed", 0),
+            "seed": self.rank + (self.config.get("seed") or 0),
             "quantization": quantization,
"""

KEYWORD = """@@ -10,4 +10,4 @@ def build(cfg):
     engine = Engine(
-        timeout=30,
+        timeout=cfg.timeout,
     )
"""

POSITIONAL = """@@ -10,4 +10,4 @@ def build(cfg):
     engine = Engine(
-        cfg.a,
+        cfg.b,
     )
"""


def test_one_entry_of_a_wrapped_dict_or_call_is_quoted_but_a_positional_fragment_is_not():
    edit = small_change(parse_patch(DICT_ENTRY), "pkg/server.py", "source", "python")
    assert edit is not None and edit.old == '"seed": self.rank + self.config.get("seed", 0),'
    assert edit.symbol == "Server" and edit.line == 266
    edit = small_change(parse_patch(KEYWORD), "pkg/build.py", "source", "python")
    assert edit is not None and edit.new == "timeout=cfg.timeout,"
    assert small_change(parse_patch(POSITIONAL), "pkg/build.py", "source", "python") is None


KEYED = """@@ -7,9 +7,9 @@ python3 -m verl.trainer.main_ppo \\
     data.train_files=$TRAIN \\
-    data.train_batch_size=32 \\
-    actor_rollout_ref.actor.ppo_mini_batch_size=32 \\
-    actor_rollout_ref.rollout.calculate_log_probs=True \\
+    data.train_batch_size=64 \\
+    actor_rollout_ref.actor.ppo_mini_batch_size=64 \\
+    actor_rollout_ref.rollout.calculate_log_probs=False \\
     trainer.n_gpus_per_node=8
"""

UNKEYED_THREE = """@@ -1,4 +1,4 @@
 set -x
-echo one
-echo two
-echo three
+run one
+run two
+run three
"""

EOF_NEWLINE = """@@ -1,3 +1,3 @@
 export A=1
-export NGPUS_PER_NODE=16
-python3 train.py
\\ No newline at end of file
+export NGPUS_PER_NODE=8
+python3 train.py
"""


def test_settings_changed_line_by_line_are_quoted_as_pairs():
    edit = small_change(parse_patch(KEYED), "examples/run.sh", "example", "shell")
    assert edit is not None
    assert edit.old.split("\n") == ["data.train_batch_size=32", "actor_rollout_ref.actor.ppo_mini_batch_size=32",
                                    "actor_rollout_ref.rollout.calculate_log_probs=True"]
    assert edit.new.split("\n")[2] == "actor_rollout_ref.rollout.calculate_log_probs=False"
    # Three lines that do not pair by what they set are more than a quote says plainly.
    assert small_change(parse_patch(UNKEYED_THREE), "run.sh", "example", "shell") is None


def test_a_line_changed_only_by_the_final_newline_is_not_quoted():
    edit = small_change(parse_patch(EOF_NEWLINE), "run.sh", "example", "shell")
    assert edit is not None and edit.old == "export NGPUS_PER_NODE=16" and edit.new == "export NGPUS_PER_NODE=8"


# --- keyword statements, one-per-line entries, the same lines in two places -----------------

BREAK = """@@ -266,6 +266,7 @@ class RayWorkerGroup(WorkerGroup):
             for actor in actors:
                 if actor.name == name:
                     self._register_center = actor
+                    break
         return self._register_center
"""

TWICE = """@@ -684,6 +684,8 @@ class vLLMHttpServer:
     async def start_profile(self, **kwargs):
+        kwargs = self._with_rank(kwargs)
         if self.enabled:
@@ -692,6 +693,7 @@ class vLLMHttpServer:
     async def stop_profile(self, **kwargs):
+        kwargs = self._with_rank(kwargs)
         if self.enabled:
"""

ENTRY = """@@ -45,6 +45,6 @@ def should_quantize_param(param_name: str) -> bool:
     skip = [
-        "gate",  # Gate (for MoE)
+        "mlp.gate.weight",  # MoE router
         "lm_head",
"""

APART = """@@ -45,6 +45,7 @@ def should_quantize_param(param_name: str) -> bool:
     name = param_name.lower()
+    name = name.removeprefix("model.")
     skip = SKIP
@@ -64,7 +65,6 @@ def should_quantize_param(param_name: str) -> bool:
     found = any(s in name for s in skip)
-    found = found and not name.endswith("bias")
     return found
"""


def test_a_keyword_statement_alone_is_quoted():
    """``break`` reads as a name to a check for fragments, so a one-line fix that ends a
    loop was "+1/−0 lines, in `RayWorkerGroup`" (fresh-p #18: "never says what the
    one-line change does")."""
    edit = small_change(parse_patch(BREAK), "single_controller/ray/base.py", "source", "python")
    assert edit is not None and edit.new == "break" and edit.line == 269 and edit.symbol == "RayWorkerGroup"


def test_the_same_lines_added_in_two_functions_are_not_quoted_as_one():
    """Quoted once, the line added to both methods read "in `start_profile`: adds …",
    hiding ``stop_profile``: an exact quote may not drop a place (#3500's shape)."""
    assert small_change(parse_patch(TWICE), "verl/rollout/server.py", "source", "python") is None


def test_one_entry_of_a_list_replaced_is_quoted():
    edit = small_change(parse_patch(ENTRY), "verl/utils/quant.py", "source", "python")
    assert edit is not None
    assert (edit.old, edit.new) == ('"gate",  # Gate (for MoE)', '"mlp.gate.weight",  # MoE router')


def test_a_line_removed_in_one_place_and_another_added_elsewhere_is_no_replacement():
    """"line 46: A → B" for lines twenty lines apart guesses that one became the other."""
    assert small_change(parse_patch(APART), "verl/utils/quant.py", "source", "python") is None


def test_a_docstring_line_is_still_no_statement():
    patch = '@@ -3,3 +3,3 @@ def f():\n     """Sum.\n-    "old wording"\n+    "new wording"\n     """\n'
    assert small_change(parse_patch(patch), "m.py", "source", "python") is None


def test_the_code_of_a_pull_request_makes_python_warn_nothing():
    """``x is 1`` in a changed docstring line made ``prguide history`` print CPython's
    "SyntaxWarning: "is" with a literal" for the pull request's code (in a fresh process:
    CPython warns once per place)."""
    import subprocess
    import sys

    script = (
        "from bot.engine.build import build_guide\n"
        "from bot.engine.rules import load_rules\n"
        "from bot.engine.snapshot import ChangedFile, PullRequestSnapshot\n"
        "patch = '@@ -30,4 +30,4 @@ def f(x):\\n     Args:\\n-        x is 1\\n+        x is 2\\n         when the length is unknown\\n     Returns:\\n'\n"
        "f = ChangedFile(filename='m.py', status='modified', additions=1, deletions=1, patch=patch)\n"
        "build_guide(PullRequestSnapshot(repository='o/r', number=1, title='docs: wording', body='', files=(f,)), load_rules())\n"
    )
    done = subprocess.run([sys.executable, "-W", "default", "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "Warning" not in done.stderr
