"""Statements that misled blind raters: moved code called removed, installs called dependencies,
tool settings called configs, a refactor's intent asserted. Each test builds a small pull request."""

from __future__ import annotations

from bot.engine.build import build_guide
from bot.engine.rules import load_rules
from bot.engine.snapshot import ChangedFile, PullRequestSnapshot

BODY = [f"    value = compute_{i}(value, config)" for i in range(8)]


def _patch(sign: str, lines: list[str], start: int = 1) -> str:
    header = f"@@ -{start},{len(lines) if sign == '-' else 0} +{start},{len(lines) if sign == '+' else 0} @@\n"
    return header + "".join(f"{sign}{line}\n" for line in lines)


def _file(name: str, patch: str, status: str = "modified", previous: str | None = None) -> ChangedFile:
    adds = sum(1 for line in patch.splitlines() if line.startswith("+"))
    dels = sum(1 for line in patch.splitlines() if line.startswith("-"))
    return ChangedFile(filename=name, status=status, additions=adds, deletions=dels, patch=patch, previous_filename=previous)


def _guide(*files: ChangedFile, title: str = "[trainer] refactor: split the trainer"):
    snapshot = PullRequestSnapshot(repository="o/r", number=7, title=title, body="", files=tuple(files))
    return build_guide(snapshot, load_rules(["config/rules"]), lang="en")


def _claims(guide, prefix: str) -> list[str]:
    return [c["text"] for c in guide.data["claims"] if c["kind"].startswith(prefix)]


def test_a_class_moved_out_of_a_renamed_file_names_the_files_old_name():
    old = ["class ReplayBuffer:", "    def sample(self, value, config):", *BODY, "        return value"]
    new = ["class ReplayBuffer:", "    def sample(self, value, config):", *BODY[:5], "        return value"]
    guide = _guide(
        _file("pkg/trainer_base.py", _patch("-", old, 10), status="renamed", previous="pkg/main_sync.py"),
        _file("pkg/replay_buffer.py", _patch("+", new), status="added"),
    )
    moved = _claims(guide, "breaking.symbol_moved") + _claims(guide, "focus.fact.symbol_moved")
    assert moved and all("pkg/main_sync.py" in text and "trainer_base" not in text for text in moved), moved
    # Moved, with changes on the way (5 of 8 lines kept): not a removed code path.
    assert not any("ReplayBuffer" in text for text in _claims(guide, "changed.removed_paths"))
    assert not any("ReplayBuffer" in text for text in _claims(guide, "breaking.symbol_removed"))


def test_a_public_method_whose_body_went_to_a_private_one_is_not_called_renamed():
    body = ["        " + line.strip() for line in BODY]
    old = ["    def init_workers(self, value, config):", *body, "        return value"]
    new = ["    def _setup(self, value, config):", *body, "        return value"]
    patch = (f"@@ -10,{len(old) + 1} +10,{len(new) + 1} @@ class Trainer:\n     x = 1\n"
             + "".join(f"-{line}\n" for line in old) + "".join(f"+{line}\n" for line in new))
    guide = _guide(_file("pkg/trainer.py", patch))
    assert not any("renamed to" in text for text in _claims(guide, "")), _claims(guide, "")


DOCKER = """@@ -10,4 +10,3 @@ FROM lmsysorg/sglang:v0.5.2
 RUN pip install --no-cache-dir "sglang[all]==0.5.2"
-RUN pip install transformers==5.3.0
 RUN pip install -e .
"""


def test_a_dockerfile_install_line_dropped_is_no_dependency_dropped():
    guide = _guide(_file("docker/Dockerfile.stable.sglang", DOCKER), title="[docker] chore: unpin transformers")
    texts = _claims(guide, "")
    assert not any("drops dependency" in text for text in texts), texts
    assert any("no longer installs transformers ==5.3.0" in text or "no longer installed" in text for text in texts), texts


GEMINI = """@@ -1,6 +0,0 @@
-have_fun: false
-code_review:
-  disable: false
-  comment_severity_threshold: MEDIUM
-  max_review_comments: -1
-ignore_patterns: []
"""


def test_keys_of_a_tools_deleted_settings_file_are_not_said_to_break_configs():
    guide = _guide(_file(".gemini/config.yaml", GEMINI, status="removed"), title="[ci] chore: remove gemini config")
    texts = _claims(guide, "")
    assert not any("will fail" in text for text in texts), texts
    assert not guide.data["breaking"]


def test_a_refactor_is_not_said_to_intend_the_same_behaviour():
    old = ["def run(value, config):", *BODY, "    return value"]
    new = ["def run(value, config):", *BODY[:3], "    value = value.to(config.dtype)", "    return value"]
    patch = _patch("-", old, 10) + "".join(f"+{line}\n" for line in new)
    patch = patch.replace(f"@@ -10,{len(old)} +10,0 @@", f"@@ -10,{len(old)} +10,{len(new)} @@")
    guide = _guide(_file("pkg/run.py", patch))
    assert not any("intended" in text for text in _claims(guide, "")), _claims(guide, "factor")


def test_a_task_moved_to_another_module_is_no_concurrency_added():
    body = ["class Worker:", "    async def run(self, value, config):",
            "        task = asyncio.create_task(self.step(value))", *["    " + line for line in BODY], "        return await task"]
    guide = _guide(
        _file("pkg/main_sync.py", _patch("-", body, 40)),
        _file("pkg/worker.py", _patch("+", body), status="added"),
        title="[trainer] feat: split the worker",
    )
    risky = [text for text in _claims(guide, "factor.concurrency")]
    assert risky == [], risky
    assert guide.data["claims"]  # the guide was built


def test_the_why_reply_names_no_path_of_prguides_own_repository():
    from bot.engine.render.messages import t

    for lang in ("en", "zh"):
        text = t("why.model", lang, {"minutes": 5, "level": "quick"}, raw=True)
        assert "docs/" not in text and "5" in text  # a path there would mean nothing on a user's PR


SOURCE_BUILD = """@@ -10,4 +10,6 @@ FROM ascend/cann:9.0.0
 RUN pip install --no-cache-dir vllm-ascend==0.18.0
-RUN pip install transformers==5.3.0
+RUN git clone https://github.com/huggingface/transformers.git && cd transformers && \\
+    git checkout cc7ab9be && pip install -e .
 RUN pip install -e .
"""

INSTALL_SCRIPT = """@@ -8,5 +8,5 @@ set -e
 pip install torch_npu==2.7.1
-pip install vllm==0.18.0
+pip install vllm==0.23.0
 pip install -e .
"""


def test_a_package_now_built_from_source_is_not_said_to_be_no_longer_installed():
    guide = _guide(_file("docker/Dockerfile.ascend", SOURCE_BUILD), title="[docker] chore: build transformers from source")
    texts = _claims(guide, "deps") + _claims(guide, "focus.fact.dep")
    assert not any("transformers" in text for text in texts), texts


def test_an_install_scripts_pin_bump_is_a_dependency_change_and_the_script_is_build():
    guide = _guide(_file("scripts/install_vllm_mcore_npu.sh", INSTALL_SCRIPT), title="[ci] chore: bump vllm")
    assert any("vllm" in text and "0.23.0" in text for text in _claims(guide, "deps")), _claims(guide, "")
    assert not any("changes source code" in text for text in _claims(guide, "")), _claims(guide, "")


RETURN_ANNOTATION = """@@ -10,5 +10,5 @@ class Block:
-    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
+    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
         out = self.mlp(hidden_states)
         return out, self.gate(hidden_states)
"""


def test_a_return_annotation_alone_is_no_signature_point():
    guide = _guide(_file("pkg/block.py", RETURN_ANNOTATION), title="[model] fix: annotate forward")
    assert not any("check every caller" in text or "signature of" in text for text in _claims(guide, "")), _claims(guide, "")


def test_a_name_is_never_cut_out_of_a_commit_hash():
    from bot.engine.analysis.model import FileAnalysis
    from bot.engine.focus.names import introduced_names

    f = FileAnalysis(".github/workflows/e2e.yml", "modified", "ci",
                     removed_lines=("        pip3 install Megatron-Bridge --no-deps",),
                     added_lines=("        pip3 install git+https://github.com/NVIDIA/Megatron-Bridge.git@0a21da4 --no-deps",))
    assert "a21da4" not in introduced_names(f, limit=10)


LOCAL_IN_METHOD = """@@ -120,6 +120,7 @@ class VeOmniEngine(BaseEngine):
         micro_batches = batch.split(self.mb_size)
-        pad_size_per_mb: list[int] = []
+        pad_sizes: list[int] = []
+        cu_seqlens: list[int] = []
         for mb in micro_batches:
             pass
"""


def test_a_local_variable_of_a_method_is_no_class_field():
    from bot.engine.analysis import analyse

    snap = PullRequestSnapshot(repository="o/r", number=7, title="t", files=(_file("pkg/engine.py", LOCAL_IN_METHOD),))
    (f,) = analyse(snap).files
    assert not f.fields_removed and not f.fields_added, (f.fields_removed, f.fields_added)


def test_a_helper_whose_callers_the_pull_request_rewrote_is_not_breaking():
    helper = ["def get_device_uuid(device_id, config):", *BODY, "    return value"]
    caller = "@@ -40,3 +40,3 @@ class Adapter:\n     def start(self):\n-        uuid = get_device_uuid(self.device, self.config)\n+        uuid = self.device.uuid\n"
    guide = _guide(_file("pkg/utils.py", _patch("-", helper, 80)), _file("pkg/adapter.py", caller),
                   title="[rollout] chore: remove unused helper")
    assert not guide.data["breaking"], guide.data["breaking_reasons"]


ARGS_DECLARED = """@@ -1,6 +1,9 @@
 FROM lmsysorg/sglang:v0.5.2
+ARG CUDA_VERSION=13.0.2
+ARG TRL_VERSION=0.27.0
+ARG FLASH_ATTENTION_VERSION=2.8.3
 RUN pip3 install --no-deps trl==0.27.0
 RUN pip install flash_attn==2.8.3
"""


def test_version_args_declared_install_nothing():
    guide = _guide(_file("docker/Dockerfile.stable.sglang", ARGS_DECLARED), title="[docker] chore: declare versions")
    texts = _claims(guide, "deps") + _claims(guide, "focus.fact.dep")
    assert texts == [], texts
