"""Environment variables read or set in changed lines: the scanner, sides, files and look-alikes.

Hunks are shaped like the real ones of verl's merged PRs (#7127 puts ``${VERL_USE_UV:-1}``
in every launch script and ``os.environ.setdefault`` in ``verl/__init__.py``; #7408 reads
``NVTX_INJECTION64_PATH`` through a module constant).
"""

from __future__ import annotations

import pytest

from bot.engine.analysis import analyse, analyse_file
from bot.engine.analysis.envvars import READ, SET, breaks_users, dialect_of, env_facts, ignored, project_prefix
from bot.engine.analysis.model import BehaviourFact
from bot.engine.analysis.patch import parse_patch
from bot.engine.snapshot import ChangedFile, PullRequestSnapshot
from bot.sources.bundle import load_bundle
from conftest import CORPUS


def facts(patch: str, dialect: str = "python", path: str = "pkg/mod.py", kind: str = "source", status: str = "modified"):
    return env_facts(parse_patch(patch), dialect, path, kind, status).facts


def brief(found) -> list[tuple[str, str, str, str, str]]:
    return [(b.kind, b.symbol, b.old, b.new, b.detail) for b in found]


def changed(path: str, patch: str, status: str = "modified") -> ChangedFile:
    return ChangedFile(filename=path, status=status, additions=1, deletions=1, patch=patch)


def snapshot(*files: ChangedFile, repository: str = "volcengine/verl") -> PullRequestSnapshot:
    return PullRequestSnapshot.from_github(
        {"number": 1, "title": "t", "body": "", "merged": True, "user": {"login": "a"}, "base": {"ref": "main", "repo": {"full_name": repository}}},
        [{"filename": f.filename, "status": f.status, "additions": 1, "deletions": 1, "changes": 2, "patch": f.patch} for f in files],
        [],
        [],
        repository=repository,
    )


def env_of(analysis) -> list[tuple[str, str, str, str, str, str]]:
    return [(b.path, b.kind, b.symbol, b.old, b.new, b.detail) for b in analysis.behaviour if b.kind.startswith("env_")]


# --- Python ---------------------------------------------------------------------------------------

SETDEFAULT = """@@ -18,10 +18,21 @@ import os
 
 from packaging.version import parse as parse_version
 
-from .protocol import DataProto
+# `setdefault` keeps it overridable (set "1" to re-enable).
+os.environ.setdefault("RAY_ENABLE_UV_RUN_RUNTIME_ENV", "0")
+
+from .protocol import DataProto  # noqa: E402
"""


def test_setdefault_is_a_default_the_user_can_override():
    (fact,) = facts(SETDEFAULT, path="verl/__init__.py")
    assert brief([fact]) == [("env_added", "RAY_ENABLE_UV_RUN_RUNTIME_ENV", "", "0", "default")]
    assert fact.line == 22 and fact.user_facing


CONSTANT = """@@ -58,6 +61,12 @@ def _uses_megatron(config) -> bool:
     return False
 
 
+NVTX_INJECTION_ENV = "NVTX_INJECTION64_PATH"
+_NVTX_INJECTION_DISABLED = "/nonexistent/verl-disabled-nvtx-injection.so"
+
+
 PPO_RAY_RUNTIME_ENV = {
     "env_vars": {
         "TOKENIZERS_PARALLELISM": "true",
@@ -101,6 +125,10 @@ def get_ppo_ray_runtime_env(config=None):
     for key in list(runtime_env["env_vars"].keys()):
         if os.environ.get(key) is not None:
             runtime_env["env_vars"].pop(key, None)
+    if _uses_torch_profiler(config) and os.environ.get("VERL_KEEP_NVTX_INJECTION", "0") != "1":
+        runtime_env["env_vars"][NVTX_INJECTION_ENV] = _NVTX_INJECTION_DISABLED
+        logger.warning("keeping %s", os.environ.get(NVTX_INJECTION_ENV) or "unset")
+        HIDDEN = "NOT_AN_ENV_VARIABLE"
"""


def test_a_module_constant_passed_to_os_environ_names_the_variable():
    found = brief(facts(CONSTANT, path="verl/trainer/constants_ppo.py"))
    assert found == [
        ("env_added", "VERL_KEEP_NVTX_INJECTION", "", "0", "read"),
        ("env_added", "NVTX_INJECTION64_PATH", "", "", "read"),
    ]
    # A loop variable (`key`) names nothing; an ALL_CAPS string never passed to os.environ is no variable.
    assert not [f for f in found if f[1] in ("key", "NOT_AN_ENV_VARIABLE", "TOKENIZERS_PARALLELISM")]


@pytest.mark.parametrize(("line", "expected"), [
    ('x = os.environ["VERL_HOME_DIR"]', [("VERL_HOME_DIR", "", READ)]),
    ('x = os.environ.get("VERL_MODE", "fast")', [("VERL_MODE", "fast", READ)]),
    ("x = os.getenv('VERL_MODE', 'fast')", [("VERL_MODE", "fast", READ)]),
    ('x = os.getenv("VERL_MODE", None)', [("VERL_MODE", "", READ)]),
    ('x = os.environ.get("VERL_TAG", "")', [("VERL_TAG", '""', READ)]),
    ('x = int(os.environ.get("VERL_WORKERS", os.cpu_count()))', [("VERL_WORKERS", "os.cpu_count()", READ)]),
    ('if "VERL_DEBUG" in os.environ:', [("VERL_DEBUG", "", READ)]),
    ('if "VERL_DEBUG" not in os.environ:', [("VERL_DEBUG", "", READ)]),
    ('x = os.environ.get(', []),  # the name is on the next line: not read
    ('x = os.environ.get("VERL_LONG",', [("VERL_LONG", "", READ)]),  # default on the next line
])
def test_python_read_forms(line, expected):
    found = facts(f"@@ -1,1 +1,2 @@\n import os\n+{line}\n")
    assert [(b.symbol, b.new, b.detail) for b in found] == expected


@pytest.mark.parametrize("line", [
    'os.environ["VERL_MODE"] = "fast"',  # a write, not a read
    'os.environ["VERL_MODE"] += ":x"',
    'del os.environ["VERL_MODE"]',
    "env = dict(os.environ)",  # a copy names no variable
    "env = os.environ.copy()",
    'host = environ.get("HTTP_HOST_NAME")',  # a WSGI request's environ, not os.environ
    'self.environ.get("VERL_MODE")',
    'monkeypatch.setenv("VERL_MODE", "1")',
    '# os.environ.get("VERL_MODE", "1") in a comment',
    'x = os.environ.get(f"VERL_{name}")',  # built at run time: which variable is unknown
    'x = os.environ.get(NAME_FROM_ELSEWHERE)',  # a constant the hunks do not show
    'x = os.environ.get("PATH", "")',  # well known: not the project's knob
    'x = os.environ.get("CUDA_VISIBLE_DEVICES")',
    'x = int(os.environ["LOCAL_RANK"])',  # set by the launcher
    'x = os.environ.get("TP", "1")',  # too short to tell
    'logger.setLevel(os.getenv("VERL_LOGGING_LEVEL", "WARN"))',  # the module takes an existing knob
])
def test_python_look_alikes_are_not_reads(line):
    assert facts(f"@@ -1,1 +1,2 @@\n import os\n+{line}\n") == ()


def test_both_sides_compare_defaults():
    patch = """@@ -10,4 +10,4 @@ def setup():
-    mode = os.environ.get("VERL_MODE", "fast")
-    depth = os.getenv("VERL_DEPTH", "2")
+    mode = os.environ.get("VERL_MODE", "safe")
+        depth = os.getenv("VERL_DEPTH", "2")
-    old = os.getenv("VERL_OLD_FLAG")
+    new = os.getenv("VERL_NEW_FLAG", "1")
"""
    assert brief(facts(patch)) == [
        ("env_default_changed", "VERL_MODE", "fast", "safe", "read"),
        ("env_added", "VERL_NEW_FLAG", "", "1", "read"),
        ("env_removed", "VERL_OLD_FLAG", "", "", "read"),
    ]  # VERL_DEPTH only moved


def test_a_context_line_still_reads_the_variable():
    patch = """@@ -10,3 +10,2 @@ def setup():
     mode = os.environ.get("VERL_MODE", "fast")
-    if os.environ.get("VERL_MODE") == "slow":
-        pass
"""
    assert facts(patch) == ()


def test_files_added_and_removed_whole():
    added = "@@ -0,0 +1,2 @@\n+import os\n+name = os.environ.get(\"VERL_VENV_NAME\")\n"
    assert [b.kind for b in facts(added, status="added")] == ["env_added"]  # a new module's knobs are new
    removed = "@@ -1,2 +0,0 @@\n-import os\n-name = os.environ.get(\"VERL_VENV_NAME\")\n"
    assert facts(removed, status="removed") == ()  # the file's removal says it


def test_tests_and_dot_folders_are_not_user_facing():
    patch = "@@ -1,1 +1,2 @@\n import os\n+x = os.environ.get(\"VERL_MODE\", \"1\")\n"
    assert [b.user_facing for b in facts(patch, path="tests/test_mode.py", kind="test")] == [False]
    assert [b.user_facing for b in facts(patch, path=".agent/tool.py")] == [False]
    assert [b.user_facing for b in facts(patch)] == [True]


# --- shell, Dockerfiles, CI -----------------------------------------------------------------------

LAUNCH = """@@ -109,7 +109,16 @@ EXTRA=(
 )
 
 ########################### launch ###########################
-python3 -m verl.trainer.main_ppo \\
+# uv (set VERL_USE_UV=0 for system python)
+LAUNCH=(python3)
+RAY=(ray_kwargs.ray_init.runtime_env.py_executable=null)
+if [ "${VERL_USE_UV:-1}" != 0 ] && [ "${DEVICE:-gpu}" = gpu ]; then
+    LAUNCH=(uv run --frozen --all-packages --extra vllm --extra fsdp python3)
+fi
+ENGINE=${ENGINE:-"vllm"}
+MODEL=${model_path:-Qwen/Qwen3-8B}
+echo "$VERL_HOME ${HOME} ${INFER_BACKEND}"
+export VLLM_USE_V1=1
+"${LAUNCH[@]}" -m verl.trainer.main_ppo \\
     "${DATA[@]}" \\
"""


def test_shell_reads_with_defaults_and_exports():
    found = brief(facts(LAUNCH, "shell", "examples/cispo_trainer/run_qwen3_8b_fsdp.sh", "example"))
    assert found == [
        ("env_added", "VERL_USE_UV", "", "1", "read"),
        ("env_added", "DEVICE", "", "gpu", "read"),
        ("env_added", "ENGINE", "", "vllm", "read"),
        ("env_added", "VLLM_USE_V1", "", "1", "set"),
    ]  # not the lower-case script variable, not a plain $X or ${X}, not the comment


def test_shell_changed_default_and_assign_default():
    patch = """@@ -1,3 +1,3 @@
-profile_steps=${PROFILE_STEPS:-"[1,2]"}
+profile_steps=${PROFILE_STEPS:-"[1]"}
+: "${VERL_RUN_DIR:=${HOME}/runs}"
"""
    assert brief(facts(patch, "shell", "examples/profile/run.sh", "example")) == [
        ("env_default_changed", "PROFILE_STEPS", "[1,2]", "[1]", "read"),
        ("env_added", "VERL_RUN_DIR", "", "${HOME}/runs", "default"),
    ]


def test_a_new_script_lists_no_parameters():
    patch = "@@ -0,0 +1,2 @@\n+MODEL_PATH=${MODEL_PATH:-Qwen/Qwen2.5-7B}\n+export NCCL_DEBUG=WARN\n"
    assert facts(patch, "shell", "examples/new/run_new.sh", "example", "added") == ()


DOCKERFILE = """@@ -10,9 +10,9 @@ FROM ${BASE_IMAGE:-$DEFAULT_BASE}
 ARG GPU_ARCH
-ENV PYTORCH_ROCM_ARCH=${GPU_ARCH} \\
-    GDRCOPY_HOME=/usr/local
+ENV PYTORCH_ROCM_ARCH="gfx942;gfx950" \\
+    HIP_ARCHITECTURES=gfx942,gfx950
+ENV NCCL_DEBUG ERROR
 RUN echo ${TARGET:-all}
-RUN pip install x
+RUN pip install y
"""


def test_dockerfile_env_sets_with_continuations():
    found = brief(facts(DOCKERFILE, "dockerfile", "docker/rocm/Dockerfile.rocm", "build"))
    assert found == [
        ("env_default_changed", "PYTORCH_ROCM_ARCH", "${GPU_ARCH}", "gfx942;gfx950", "set"),
        ("env_added", "HIP_ARCHITECTURES", "", "gfx942,gfx950", "set"),
        ("env_added", "NCCL_DEBUG", "", "ERROR", "set"),
        ("env_removed", "GDRCOPY_HOME", "/usr/local", "", "set"),
    ]  # `${BASE_IMAGE:-...}` and `${TARGET:-all}` are build ARGs as often as not: not read


WORKFLOW = """@@ -20,12 +20,12 @@ jobs:
     runs-on: [L20x8]
     env:
-      IMAGE: "verl:vllm024.dev2"
+      IMAGE: "verl:uv.cu130"
-      HTTPS_PROXY: ${{ secrets.PROXY_HTTPS }}
+      VERL_USE_UV: "0"
     steps:
       - name: Run
         run: |
-          python3 run.py ${{ matrix.x }}
+          $UV_RUN python3 run.py --steps ${STEPS:-2}
"""


def test_workflow_env_blocks_are_sets_and_not_user_facing():
    found = facts(WORKFLOW, "workflow", ".github/workflows/e2e.yml", "ci")
    assert brief(found) == [
        ("env_default_changed", "IMAGE", "verl:vllm024.dev2", "verl:uv.cu130", "set"),
        ("env_added", "VERL_USE_UV", "", "0", "set"),
        ("env_added", "STEPS", "", "2", "read"),
    ]  # the proxy is well known; `${{ ... }}` is GitHub's, not the shell's
    assert not any(b.user_facing for b in found)


@pytest.mark.parametrize(("path", "language", "kind", "patch", "expected"), [
    ("verl/a.py", "python", "source", "+x = os.environ.get('A_B')", "python"),
    ("verl/a.py", "python", "source", "+x = os.path.join(a, b)", None),  # no marker: costs nothing
    ("docs/env.md", "markdown", "docs", "+Set `os.environ['VERL_USE_UV']` or `${VERL_USE_UV:-1}`.", None),
    ("docs/conf.py", "python", "docs", "+x = os.environ.get('READTHEDOCS')", None),
    ("run.sh", "shell", "example", "+A=${B:-1}", "shell"),
    ("run.sh", "shell", "example", '+"${ARR[@]}" ${HOME}', None),
    ("Dockerfile", "dockerfile", "build", "+ENV A_B=1", "dockerfile"),
    (".github/workflows/a.yml", "yaml", "ci", "+    env:", "workflow"),
    ("verl/config/a.yaml", "yaml", "config", "+  env: 1", None),  # a config key, not a CI env block
    ("verl/a.py", "python", "source", b"os.environ", None),
])
def test_dialects_and_cheap_guards(path, language, kind, patch, expected):
    assert dialect_of(language, kind, patch) == expected  # the path only names the case


def test_well_known_and_provided_names():
    for name in ("PATH", "HOME", "PYTHONPATH", "CUDA_VISIBLE_DEVICES", "HTTPS_PROXY", "GITHUB_ENV", "SLURM_JOB_ID", "RANK", "TP"):
        assert ignored(name), name
    assert not ignored("VERL_USE_UV") and not ignored("NCCL_DEBUG")


# --- across files ---------------------------------------------------------------------------------


def test_a_read_moved_to_another_file_is_no_fact():
    a = changed("verl/a.py", '@@ -1,2 +1,1 @@\n import os\n-x = os.environ.get("VERL_MODE", "1")\n')
    b = changed("verl/b.py", '@@ -1,1 +1,2 @@\n import os\n+x = os.environ.get("VERL_MODE", "1")\n')
    assert env_of(analyse(snapshot(a, b))) == []
    c = changed("verl/c.py", '@@ -1,1 +1,2 @@\n import os\n+x = os.environ.get("VERL_MODE", "2")\n')
    assert env_of(analyse(snapshot(a, c))) == [("verl/c.py", "env_default_changed", "VERL_MODE", "1", "2", "read")]


def test_a_removal_while_another_file_still_reads_it_is_no_fact():
    gone = changed("verl/a.py", '@@ -1,2 +1,1 @@\n import os\n-x = os.environ.get("VERL_MODE", "1")\n')
    still = changed("verl/b.py", '@@ -1,2 +1,3 @@\n import os\n mode = os.environ.get("VERL_MODE", "1")\n+y = 2\n')
    assert env_of(analyse(snapshot(gone, still))) == []
    # ... but a test reading it is not the code reading it.
    test = changed("tests/test_b.py", '@@ -1,2 +1,3 @@\n import os\n mode = os.environ.get("VERL_MODE", "1")\n+y = 2\n')
    assert [e[1:3] for e in env_of(analyse(snapshot(gone, test)))] == [("env_removed", "VERL_MODE")]


def test_a_variable_other_code_read_before_is_not_new():
    before = changed("verl/b.py", '@@ -1,2 +1,3 @@\n import os\n mode = os.environ.get("VERL_MODE", "1")\n+y = 2\n')
    new_reader = changed("verl/c.py", '@@ -1,1 +1,2 @@\n import os\n+x = os.environ.get("VERL_MODE", "1")\n')
    assert env_of(analyse(snapshot(before, new_reader))) == []
    alone = analyse_file(changed("verl/c.py", '@@ -1,1 +1,2 @@\n import os\n+x = os.environ.get("VERL_MODE", "1")\n'))
    assert [b.kind for b in alone.behaviour] == ["env_added"]


# --- what breaks users ----------------------------------------------------------------------------


@pytest.mark.parametrize(("repository", "prefix"), [("volcengine/verl", "VERL_"), ("o/flash-attention", "FLASH_ATTENTION_"), ("o/r", ""), ("", "")])
def test_project_prefix(repository, prefix):
    assert project_prefix(repository) == prefix


def test_only_project_variables_that_source_stops_reading_break_users():
    removed = BehaviourFact("env_removed", "verl/a.py", "VERL_MODE", "1", "", READ, 3, True)
    assert breaks_users(removed, "source", "modified", "volcengine/verl")
    assert not breaks_users(removed, "example", "modified", "volcengine/verl")
    assert not breaks_users(removed, "source", "removed", "volcengine/verl")
    assert not breaks_users(removed, "source", "modified", "o/other")
    other_tool = BehaviourFact("env_removed", "verl/a.py", "NNODES", "1", "", READ, 3, True)
    assert not breaks_users(other_tool, "source", "modified", "volcengine/verl")
    unset = BehaviourFact("env_removed", "verl/a.py", "VERL_MODE", "1", "", SET, 3, True)
    assert not breaks_users(unset, "source", "modified", "volcengine/verl")
    changed_default = BehaviourFact("env_default_changed", "verl/a.py", "VERL_MODE", "1", "2", READ, 3, True)
    assert breaks_users(changed_default, "source", "modified", "volcengine/verl")
    added = BehaviourFact("env_added", "verl/a.py", "VERL_MODE", "", "2", READ, 3, True)
    assert not breaks_users(added, "source", "modified", "volcengine/verl")


# --- the real pull requests -----------------------------------------------------------------------


def corpus(number: int):
    path = CORPUS / f"{number}.json"
    if not path.exists():
        pytest.skip(f"verl corpus not found at {CORPUS}")
    return analyse(load_bundle(path))


def test_uv_integration_reads_verl_use_uv_in_every_launch_script():
    a = corpus(7127)
    kinds = {f.path: f.kind for f in a.files}
    uv = [b for b in a.behaviour if b.kind == "env_added" and b.symbol == "VERL_USE_UV" and b.detail == "read"]
    assert len({b.path for b in uv if kinds[b.path] == "example"}) == 64 and {b.new for b in uv} == {"1"}
    (ray,) = [b for b in a.behaviour if b.symbol == "RAY_ENABLE_UV_RUN_RUNTIME_ENV"]
    assert (ray.path, ray.kind, ray.new, ray.detail) == ("verl/__init__.py", "env_added", "0", "default")
    # Workflows set VERL_USE_UV for themselves: facts, never user-facing.
    assert all(not b.user_facing for b in a.behaviour if b.kind.startswith("env_") and kinds[b.path] in ("ci", "test"))


def test_profiler_hook_reads_nvtx_injection_through_its_constant():
    a = corpus(7408)
    source = {(b.symbol, b.new) for b in a.behaviour if b.path == "verl/trainer/constants_ppo.py" and b.kind == "env_added"}
    assert source == {("NVTX_INJECTION64_PATH", ""), ("VERL_KEEP_NVTX_INJECTION", "0")}
    # `os.environ["VLLM_TORCH_PROFILER_DIR"] = ...` re-indented is a write on both sides: nothing.
    assert not [b for b in a.behaviour if b.symbol.startswith("VLLM_TORCH_PROFILER")]
