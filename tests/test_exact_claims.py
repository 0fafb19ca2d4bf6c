"""Statements a blind rating found untrue, each reproduced with a small synthetic diff:
moved config keys and fields called removed, docstring edits counted as code, replaced
assertions called dropped, renames called removals, cut notes, loose counts, generic advice."""

from __future__ import annotations

from functools import lru_cache

import pytest

from bot.engine.analysis import analyse
from bot.engine.build import build_guide
from bot.engine.rules import load_rules
from bot.engine.snapshot import PullRequestSnapshot
from bot.paths import config_dir


@lru_cache(maxsize=1)
def _rules():
    return load_rules([config_dir() / "examples" / "verl.yml"])


def snapshot(files: dict[str, str], title: str = "[trainer] feat: qat for megatron", status: dict[str, str] | None = None) -> PullRequestSnapshot:
    status = status or {}
    rows = []
    for path, patch in files.items():
        plus = sum(1 for line in patch.splitlines() if line.startswith("+"))
        minus = sum(1 for line in patch.splitlines() if line.startswith("-"))
        rows.append({"filename": path, "status": status.get(path, "modified"), "additions": plus, "deletions": minus,
                     "changes": plus + minus, "patch": patch})
    return PullRequestSnapshot.from_github(
        {"number": 1, "title": title, "body": "", "merged": True, "user": {"login": "a"},
         "base": {"ref": "main", "repo": {"full_name": "o/r"}}},
        rows, [], [], repository="o/r",
    )


def guide_text(files: dict[str, str], **kw) -> str:
    return build_guide(snapshot(files, **kw), _rules()).markdown.split("-->", 1)[1]  # without the marker


# --- 1. a block moved into the base a derived config inherits ----------------------------------

DERIVED = """@@ -10,10 +10,3 @@ use_dynamic_bsz: False
 
 # Enable checkpointing
 checkpointing: False
-
-# QAT configuration
-qat:
-  # Whether to enable QAT
-  enable: false
-  # Quantization group size
-  group_size: 16
"""
BASE = """@@ -40,3 +40,10 @@ router_replay:
   # Required when mode is 'replay'
   replay_file: null
 
+# QAT configuration
+qat:
+  # Whether to enable QAT
+  enable: false
+  # Quantization group size
+  group_size: 16
"""
SUBCLASS = """@@ -180,6 +180,7 @@ class ActorConfig(BaseConfig):
     ppo_epochs: int = 1
     shuffle: bool = False
     global_batch_info: dict = field(default_factory=dict)
+    qat: QATConfig = field(default_factory=QATConfig)
 
     def __post_init__(self):
         \"\"\"Validate actor configuration parameters.\"\"\"
@@ -299,7 +300,6 @@ class FSDPActorConfig(ActorConfig):
     use_rollout_log_probs: bool = False
     calculate_sum_pi_squared: bool = False
     sum_pi_squared_checkpointing: bool = False
-    qat: QATConfig = field(default_factory=QATConfig)
 
     def __post_init__(self):
         \"\"\"Validate FSDP actor configuration parameters.\"\"\"
"""
MOVED = {"verl/trainer/config/actor/dp_actor.yaml": DERIVED, "verl/trainer/config/actor/actor.yaml": BASE,
         "verl/workers/config/actor.py": SUBCLASS}


def test_a_config_block_and_a_field_moved_to_the_base_are_not_removed():
    files = {f.path: f for f in analyse(snapshot(MOVED)).files}
    derived, fields = files["verl/trainer/config/actor/dp_actor.yaml"], files["verl/workers/config/actor.py"]
    assert derived.config_keys_removed == ()
    assert [b for b in derived.behaviour if b.kind == "key_removed"] == []
    assert fields.fields_removed == () and [b for b in fields.behaviour if b.kind == "field_removed"] == []
    text = guide_text(MOVED)
    assert "Breaking" not in text and "breaking for existing users" not in text
    assert "keys removed" not in text and "FSDPActorConfig.qat` removed" not in text and "will fail or be ignored" not in text
    assert "moved to `verl/trainer/config/actor/actor.yaml`, which now sets them" in text
    assert derived.keys_moved[0] == ("qat", "verl/trainer/config/actor/actor.yaml") and fields.keys_moved == (("FSDPActorConfig.qat", "ActorConfig"),)


def test_a_key_removed_without_a_new_home_is_still_removed():
    files = {f.path: f for f in analyse(snapshot({"verl/trainer/config/actor/dp_actor.yaml": DERIVED})).files}
    assert "qat.enable" in files["verl/trainer/config/actor/dp_actor.yaml"].config_keys_removed


def test_a_field_moved_to_a_class_that_is_not_a_base_is_still_removed():
    patch = SUBCLASS.replace("class FSDPActorConfig(ActorConfig)", "class FSDPActorConfig(BaseConfig)")
    f = analyse(snapshot({"verl/workers/config/actor.py": patch})).files[0]
    assert f.fields_removed == ("FSDPActorConfig.qat",)


# --- 4. a function renamed in place, its body kept ---------------------------------------------

RENAMED = """@@ -390,7 +390,7 @@ def apply_patch_mbridge():
         megatron.core.utils.get_group = get_group
 
 
-def apply_patch_v012_with_torch_v28():
+def apply_patch_v012_with_torch_v28_v29() -> None:
     # Error due to missing serialization_format in _write_item of megatron v012;
     # resolved by using megatron v013's implementation.
     import inspect
@@ -407,7 +407,7 @@ def apply_patch_v012_with_torch_v28():
     from torch.distributed.checkpoint.filesystem import _write_item
 
     if (
-        version.parse(torch.__version__).base_version != "2.8.0"
+        version.parse(torch.__version__).base_version not in ("2.8.0", "2.9.0")
         or version.parse(megatron.core.__version__).base_version != "0.12.1"
     ):
         return
"""


def test_a_function_renamed_in_place_is_a_rename_not_a_removal():
    f = analyse(snapshot({"verl/models/mcore/patch.py": RENAMED})).files[0]
    kinds = [b.kind for b in f.behaviour]
    assert "symbol_removed" not in kinds and "symbol_renamed" in kinds
    text = guide_text({"verl/models/mcore/patch.py": RENAMED}, title="[megatron] fix: torch 2.9")
    assert "Removed code paths" not in text and "1 added, 1 removed" not in text


# --- 2. docstring and comment edits are not code ------------------------------------------------

DOCSTRINGS = """@@ -30,7 +30,7 @@ class MasterMetadata:
 
 
 class BroadcastOperation:
-    \"\"\"Async broadcast operation with NCCL in separate thread.
+    \"\"\"Async broadcast operation in separate thread.
 
     Args:
         rank (int): The rank of the current process.
@@ -120,7 +120,7 @@ class KIMICheckpointEngine(CheckpointEngine):
     Args:
         bucket_size (int): Bucket size in bytes to transfer multiple weights at one time. Note that we use
             two buffers, so the device memory overhead is 2 * bucket_size.
-        rebuild_group (bool): Whether to rebuild the NCCL process group in each update. Defaults to False.
+        rebuild_group (bool): Whether to rebuild the process group in each update. Defaults to False.
         is_master (bool): Whether the current process is the master process. Defaults to False.
     \"\"\"
 
"""
COMMENTS = """@@ -60,8 +60,6 @@ class MooncakeCheckpointEngine(CheckpointEngine):
     def prepare(self):
         self.buffer = torch.empty(self.bucket_size, dtype=torch.uint8)
-        # self.engine.register_memory(self.buffer)
-        # self.engine.prepare()
         return self.buffer
 
"""
PROSE = {"verl/checkpoint_engine/kimi_checkpoint_engine.py": DOCSTRINGS, "verl/checkpoint_engine/mooncake_checkpoint_engine.py": COMMENTS}


def test_docstring_and_comment_edits_are_not_code_changes():
    files = analyse(snapshot(PROSE)).files
    assert all(f.prose_only for f in files)
    text = guide_text(PROSE, title="[ckpt] fix: correct the kimi engine docs")
    assert "changes source code" not in text and "definitions that existed before" not in text
    assert "changed code lines" not in text and "lines of code" not in text
    assert "comments and docstrings only (+2/−2 lines)" in text


def test_a_code_line_beside_a_docstring_is_code():
    patch = DOCSTRINGS.replace('     """\n \n', '     """\n-    rank = 0\n+    rank = 1\n')
    assert patch != DOCSTRINGS
    assert not analyse(snapshot({"verl/checkpoint_engine/kimi_checkpoint_engine.py": patch})).files[0].prose_only


# --- 3. an assertion rewritten, not dropped -----------------------------------------------------

REWRITTEN = """@@ -214,10 +214,9 @@ def dispatch_dp_compute_data_proto_with_func(worker_group, *args, **kwargs):
 
 def collect_dp_compute_data_proto(worker_group, output):
     from verl.protocol import BatchData
 
-    for o in output:
-        assert isinstance(o, DataProto | ray.ObjectRef), f"expecting {o} to be DataProto, but got {type(o)}"
+    assert BatchData(output).is_concatable(), f"expecting concatable output"
 
     output = collect_dp_compute(worker_group, output)
     return _concat_data_proto_or_future(output)
"""


def test_an_assertion_replaced_by_another_is_not_said_dropped():
    f = analyse(snapshot({"verl/single_controller/base/decorator.py": REWRITTEN})).files[0]
    kinds = [e.kind for e in f.edits]
    assert "assert_removed" not in kinds and "assert_replaced" in kinds
    text = guide_text({"verl/single_controller/base/decorator.py": REWRITTEN}, title="[single_controller] refactor: BatchData")
    assert "no longer asserts" not in text
    assert "the assertion `isinstance(o, DataProto | ray.ObjectRef)` is now `BatchData(output).is_concatable()`" in text


def test_a_raise_removed_beside_an_added_assert_is_not_stated():
    patch = REWRITTEN.replace("-    for o in output:\n-        assert isinstance", "-    if not isinstance(output, list):\n-        raise TypeError(1)\n-    assert isinstance")
    f = analyse(snapshot({"verl/single_controller/base/decorator.py": patch})).files[0]
    assert not [e for e in f.edits if e.kind.endswith("_removed")]


# --- 5. renamed tests, one option set in two configs --------------------------------------------

TEST_RENAMED = """@@ -272,13 +272,9 @@ def test_dispatch(native_yaml_path, function_tool_py_path):
     asyncio.run(_drive())
 
 
-def test_loader_merge_is_safe_to_call_per_trajectory(native_yaml_path, function_tool_py_path):
-    \"\"\"Regression: the loader runs once per sample.
-    Simulate three trajectories.
-    \"\"\"
-    runs = [_merge_like(native_yaml_path, function_tool_py_path) for _ in range(3)]
+def test_loader_is_safe_to_call_repeatedly(native_yaml_path, function_tool_py_path):
+    \"\"\"The loader runs at least twice per process.\"\"\"
+    runs = [_load_as_dict(native_yaml_path, function_tool_py_path) for _ in range(3)]
 
     for tools in runs:
         assert sorted(tools) == ["calculator", "search"]
@@ -300,0 +296,3 @@ def test_loader_merge_is_safe_to_call_per_trajectory(native_yaml_path, function_
+def test_no_paths_returns_empty():
+    assert load_all_tools([]) == {}
+
"""


def test_a_renamed_test_is_not_a_new_test():
    f = analyse(snapshot({"tests/tools/test_mixed_tools_on_cpu.py": TEST_RENAMED})).files[0]
    assert f.tests_added == ("test_no_paths_returns_empty",)


ENGINE = """@@ -10,3 +10,6 @@ veomni:
   param_offload: false
+  rms_norm_implementation: eager
+  swiglu_mlp_implementation: eager
+  rotary_pos_emb_implementation: eager
"""
ENGINE_TOP = """@@ -10,3 +10,6 @@ param_offload: false
 optimizer_offload: false
 
+rms_norm_implementation: eager
+swiglu_mlp_implementation: eager
+rotary_pos_emb_implementation: eager
"""


def test_one_option_set_in_a_config_and_in_the_config_composing_it_counts_once():
    text = guide_text({"verl/trainer/config/engine/veomni.yaml": ENGINE_TOP, "verl/trainer/config/ref/veomni_ref.yaml": ENGINE},
                      title="[veomni] feat: ops implementation")
    # Said once, by name, without a count the hunks cannot vouch for.
    (line,) = [line for line in text.split("\n") if "config keys added, removed or given a new default" in line and line.startswith("- ")]
    assert line.count("rms_norm_implementation") == 1 and "6 config keys" not in text


# --- 7, 8. no generic advice, a new file said as such --------------------------------------------

VERSION_CHECK = """@@ -40,6 +40,8 @@ class vLLMHttpServer:
     async def _sleep_hybrid(self):
         await self.engine.reset_prefix_cache()
+        if _VLLM_VERSION >= version.parse("0.17.0"):
+            await self.engine.reset_encoder_cache()
         await self.engine.sleep(level=1)
 
     async def wake_up(self):
"""
NEW_SCRIPT = "@@ -0,0 +1,6 @@\n" + "".join(f"+{line}\n" for line in (
    "#!/usr/bin/env bash", "set -x", "python3 -m verl.trainer.main_ppo \\\\", "    actor_rollout_ref.model.path=$MODEL \\\\",
    "    teacher_models.teacher_model.path=$TEACHER \\\\", "    trainer.total_epochs=1"))
NEW_MODULE = "@@ -0,0 +1,8 @@\n" + "".join(f"+{line}\n" for line in (
    "class BatchData:", "    def __init__(self, data):", "        self._data = data", "",
    "    def chunk(self, chunks):", "        return [self._data[i::chunks] for i in range(chunks)]", "", "VERSION = 1"))


def test_a_version_check_gets_no_advice_about_branches():
    text = guide_text({"verl/workers/rollout/vllm_rollout/vllm_async_server.py": VERSION_CHECK}, title="[rollout] fix: reset encoder cache")
    assert "each branch" not in text


def test_a_new_file_is_said_new_never_compared_with_removed_lines():
    files = {"examples/distill/run_qwen_gsm8k.sh": NEW_SCRIPT, "verl/utils/batch_data.py": NEW_MODULE}
    text = guide_text(files, title="[trainer] feat: batch data", status={p: "added" for p in files})
    assert "which no removed line had" not in text
    assert "`verl/utils/batch_data.py` — new file, 8 lines, defining `BatchData.__init__`, `BatchData.chunk`" in text
    assert "`examples/distill/run_qwen_gsm8k.sh` — new file, 6 lines" in text


# --- a struck-through sentence is taken back, not promised --------------------------------------

def test_struck_through_text_of_the_description_is_no_promise():
    from bot.engine.analysis.description import parse_description

    body = ("### What does this PR do?\n\nreplace chunk and concat with `BatchData`\n\n"
            "~~Regarding the queue, this pr keeps the client by introducing a generic\n`wild_card` method in `Worker`~~. "
            "However the decorator will break.\n\n```python\n~~~\n```\n")
    d = parse_description(body)
    text = " ".join(d.sections.values())
    assert "wild_card" not in text and "BatchData" in text and "However the decorator will break." in text


def test_a_name_after_for_new_is_what_the_change_is_for_not_a_promise():
    # fresh-j: "add concrete `CrossEntropyLoss.Config` for new abstract `BaseLoss`" promised no BaseLoss.
    from bot.engine.analysis.description import parse_description, promised_missing

    d = parse_description("### What does this PR do?\n\nAdd concrete `CrossEntropyLoss.Config` for new abstract `BaseLoss`. "
                          "It also adds a new `--fast-loss` flag.")
    assert promised_missing(d, ("BaseLoss", "--fast-loss")) == (("--fast-loss", "It also adds a new `--fast-loss` flag."),)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_no_test_file_changed_says_files_not_tests(lang):
    # fresh-k: "No tests changed." on a PR that switched a test step off in a CI workflow.
    from bot.engine.render.messages import t

    assert t("tests.none", lang) in ("No test file changed.", "没有改动测试文件。")


REMOVED_KEY = """@@ -60,4 +60,3 @@ trainer:
   save_freq: -1
-  remove_previous_ckpt_in_save: False
   default_local_dir: checkpoints
"""
STILL_READ = """@@ -670,3 +670,7 @@ class RayPPOTrainer:
         max_keep = self.config.trainer.get("max_actor_ckpt_to_keep", None)
+        if self.config.trainer.get("remove_previous_ckpt_in_save", False):
+            warnings.warn("remove_previous_ckpt_in_save is deprecated", DeprecationWarning)
+            max_keep = 1
+
         self.save(max_keep)
"""


def test_a_removed_key_the_code_still_reads_is_no_break():
    # fresh-o #724: "configs that still set it will fail or be ignored" — the trainer still
    # reads it with .get and maps it, with a deprecation warning.
    alone = guide_text({"verl/trainer/config/ppo_trainer.yaml": REMOVED_KEY}, title="[trainer] feat: keep N checkpoints")
    assert "will fail or be ignored" in alone
    mapped = guide_text({"verl/trainer/config/ppo_trainer.yaml": REMOVED_KEY, "verl/trainer/ppo/ray_trainer.py": STILL_READ},
                        title="[trainer] feat: keep N checkpoints")
    assert "will fail or be ignored" not in mapped and "Breaking" not in mapped


def test_a_re_spaced_default_is_no_new_default_and_a_moved_todo_is_not_added():
    # fresh-p #74: "default of override_config changes from {} to { }" (and a list re-spaced),
    # and "TODO added: add response length" for a note the diff only moved.
    from bot.engine.analysis import analyse_file
    from bot.engine.snapshot import ChangedFile

    yaml = ("@@ -1,3 +1,3 @@\n model:\n-  override_config: {}\n+  override_config: { }\n"
            "-  logger: ['console', 'wandb']\n+  logger: [ 'console', 'wandb' ]\n")
    f = analyse_file(ChangedFile("verl/trainer/config/ppo_trainer.yaml", "modified", 2, 2, yaml))
    assert not [b for b in f.behaviour if b.kind == "default_changed"]
    changed = analyse_file(ChangedFile("verl/trainer/config/ppo_trainer.yaml", "modified", 1, 1,
                                       "@@ -1,2 +1,2 @@\n model:\n-  logger: ['console']\n+  logger: ['console', 'wandb']\n"))
    assert [b.kind for b in changed.behaviour if b.kind == "default_changed"] == ["default_changed"]
    py = ("@@ -10,4 +10,4 @@ def fit(self):\n-    # TODO: add response length\n     a = 1\n     b = 2\n"
          "+    # TODO: add response length\n")
    assert analyse_file(ChangedFile("verl/t.py", "modified", 1, 1, py)).todos_added == ()
