"""Dependency changes read from manifest, Dockerfile and lock file hunks."""

from __future__ import annotations

from bot.engine.analysis.deps import dependency_changes, normalize_name, parse_requirement, submodule_change
from bot.engine.analysis.patch import parse_patch


def changes(path: str, patch: str) -> list[tuple[str, str, str, str]]:
    return [(c.name, c.action, c.old_spec, c.new_spec) for c in dependency_changes(path, parse_patch(patch))]


def test_normalize_name_per_pep_503():
    assert normalize_name("Friendly_Bard.pkg") == "friendly-bard-pkg"
    assert normalize_name("TransferQueue") == "transferqueue"


def test_parse_requirement():
    assert parse_requirement("transformers>=5.5.3,!=5.6.0, <5.11") == ("transformers", ">=5.5.3,!=5.6.0, <5.11")
    assert parse_requirement("ray[default]>=2.41.0") == ("ray", ">=2.41.0")
    assert parse_requirement("TransferQueue @ git+https://github.com/x/y.git@main") == (
        "TransferQueue",
        "@ git+https://github.com/x/y.git@main",
    )
    assert parse_requirement('numpy; python_version < "3.12"') == ("numpy", '; python_version < "3.12"')
    assert parse_requirement("liger-kernel") == ("liger-kernel", "")
    assert parse_requirement("liger-kernel", require_version=True) is None
    assert parse_requirement("Programming Language :: Python") is None
    assert parse_requirement("") is None


def test_requirements_txt_changed_added_removed_and_options():
    patch = """@@ -1,8 +1,8 @@
 # core
-TransferQueue==0.1.7
+transferqueue==0.1.8
-einops
+einops  # same package, comment only
+-e git+https://github.com/org/tool.git#egg=tool
-r other.txt
+--extra-index-url https://example.org/simple
-triton-ascend==3.2.1
+fastapi>=0.110
"""
    assert changes("requirements-npu.txt", patch) == [
        ("transferqueue", "changed", "==0.1.7", "==0.1.8"),
        ("tool", "added", "", "git+https://github.com/org/tool.git#egg=tool"),
        ("fastapi", "added", "", ">=0.110"),
        ("triton-ascend", "removed", "==3.2.1", ""),
    ]


def test_pyproject_extras_repinned_in_two_lists_is_one_change(load_bundle_json):
    bundle = load_bundle_json(7478)
    (pyproject,) = bundle["files"]
    assert changes("pyproject.toml", pyproject["patch"]) == [("trl", "changed", "==0.27.0", "==1.10.0")]


def test_pyproject_tables_and_unknown_arrays():
    patch = """@@ -1,14 +1,16 @@
 [project]
 dependencies = [
-    "numpy",
+    "numpy>=2",
+    "rich",
 ]
 [project.optional-dependencies]
 test = ["pytest", "hypothesis>=6"]
+docs = ["sphinx"]
 [tool.ruff]
 ignore = [
+    "E501",
 ]
 [tool.poetry.dependencies]
 python = "^3.11"
-requests = "^2.30"
+requests = {version = "^2.32", extras = ["socks"]}
"""
    assert changes("pyproject.toml", patch) == [
        ("numpy", "changed", "", ">=2"),
        ("rich", "added", "", ""),
        ("sphinx", "added", "", ""),
        ("requests", "changed", "^2.30", "^2.32"),
    ]


def test_pyproject_array_of_unknown_table_needs_a_version():
    patch = """@@ -160,4 +160,5 @@ megatron = [
     "apex",
+    "onnxscript",
+    "matplotlib>=3.8",
 ]
"""
    assert changes("pyproject.toml", patch) == [("matplotlib", "added", "", ">=3.8")]


def test_real_uv_integration_pyproject(load_bundle_json):
    bundle = load_bundle_json(7127)
    by_name = {f["filename"]: f for f in bundle["files"]}
    found = {c.name: c for c in dependency_changes("pyproject.toml", parse_patch(by_name["pyproject.toml"]["patch"]))}
    assert found["vllm"].action == "added" and found["vllm"].new_spec == "==0.24.0"
    assert found["tensordict"].new_spec == ">=0.8.0,<=0.10.0,!=0.9.0"
    assert "qwen-vl-utils" in found and "qwen_vl_utils" not in found
    assert by_name["uv.lock"].get("patch") is None  # too large: GitHub omitted it
    requirements = changes("requirements.txt", by_name["requirements.txt"]["patch"])
    assert requirements == [
        ("transferqueue", "changed", "==0.1.8", "@ git+https://github.com/Ascend/TransferQueue.git@main")
    ]


def test_setup_py_lists_and_loose_strings():
    patch = """@@ -10,9 +10,10 @@ install_requires = [
     "accelerate",
-    "transformers<5.12.0,!=5.6.0",
+    "transformers>=5.5.3,!=5.6.0,<5.11",
+    "codetiming",
 ]
 setup(
-    description="RL for LLMs",
+    description="RL for LLMs (new)",
+    classifiers=["Programming Language :: Python"],
 )
"""
    assert changes("setup.py", patch) == [
        ("transformers", "changed", "<5.12.0,!=5.6.0", ">=5.5.3,!=5.6.0,<5.11"),
        ("codetiming", "added", "", ""),
    ]


def test_dockerfile_from_pip_install_and_version_args():
    patch = """@@ -1,12 +1,13 @@
-FROM nvidia/cuda:12.8.0-devel-ubuntu22.04
+FROM nvidia/cuda:13.0.2-devel-ubuntu24.04 AS base
+FROM base AS deps
-ARG VLLM_VERSION=0.23.0
+ARG VLLM_VERSION=0.24.0
 RUN pip install --no-cache-dir \\
-    torch==2.10.0 \\
+    torch==2.11.0 \\
+    -r requirements.txt \\
     ray && \\
     pip cache purge
-RUN pip3 install --no-deps megatron-bridge==0.5.0
+RUN pip install --no-deps git+https://github.com/NVIDIA-NeMo/Megatron-Bridge.git@r0.5.0
"""
    assert changes("docker/Dockerfile.stable.vllm", patch) == [
        ("nvidia/cuda", "changed", "12.8.0-devel-ubuntu22.04", "13.0.2-devel-ubuntu24.04"),
        ("vllm", "changed", "0.23.0", "0.24.0"),
        ("torch", "changed", "==2.10.0", "==2.11.0"),
        # Installed from its git tag now, not dropped (it read "removed" before VCS installs counted).
        ("megatron-bridge", "changed", "==0.5.0", "git:r0.5.0"),
    ]


def test_dockerfile_shell_words_after_a_semicolon_are_not_packages():
    # A shell if/else around two pip installs: `; \` ends each command.
    patch = """@@ -1,3 +1,7 @@
-RUN pip install vllm==0.18.0
+RUN if [ "$OLD" = "1" ]; then \\
+        pip install vllm==0.17.0; \\
+    else \\
+        pip install vllm==0.18.0 tqdm&& \\
+        echo done; \\
+    fi
"""
    assert changes("docker/Dockerfile.stable.vllm", patch) == [
        ("vllm", "changed", "==0.18.0", "==0.17.0"),
        ("tqdm", "added", "", ""),
    ]


def test_uv_lock_versions_by_package_block():
    patch = """@@ -100,9 +100,13 @@ wheels = [
 [[package]]
 name = "torch"
-version = "2.10.0"
+version = "2.11.0"
 source = { registry = "https://pypi.org/simple" }
+
+[[package]]
+name = "nvtx"
+version = "0.2.11"
 [[package]]
-name = "old-thing"
-version = "1.0"
"""
    assert changes("uv.lock", patch) == [
        ("torch", "changed", "2.10.0", "2.11.0"),
        ("nvtx", "added", "", "0.2.11"),
        ("old-thing", "removed", "1.0", ""),
    ]


def test_package_json_and_lock():
    manifest = """@@ -5,7 +5,8 @@
   "version": "1.0.0",
   "dependencies": {
-    "react": "^18.2.0",
+    "react": "^19.0.0",
+    "zod": "^3.23.0"
   },
   "scripts": {
+    "lint": "eslint ."
"""
    assert changes("web/package.json", manifest) == [
        ("react", "changed", "^18.2.0", "^19.0.0"),
        ("zod", "added", "", "^3.23.0"),
    ]
    lock = """@@ -10,5 +10,5 @@
     "node_modules/react": {
-      "version": "18.2.0",
+      "version": "19.0.0",
       "license": "MIT"
"""
    assert changes("web/package-lock.json", lock) == [("react", "changed", "18.2.0", "19.0.0")]


def test_go_mod_and_yarn_lock():
    go = "@@ -3,3 +3,3 @@\n require (\n-\tgithub.com/pkg/errors v0.9.0\n+\tgithub.com/pkg/errors v0.9.1\n )"
    assert changes("go.mod", go) == [("github.com/pkg/errors", "changed", "v0.9.0", "v0.9.1")]
    yarn = '@@ -1,3 +1,3 @@\n "@babel/core@^7.0.0":\n-  version "7.24.0"\n+  version "7.25.1"'
    assert changes("yarn.lock", yarn) == [("@babel/core", "changed", "7.24.0", "7.25.1")]


def test_submodule_pointer_move():
    patch = "@@ -1 +1 @@\n-Subproject commit aaaa\n+Subproject commit bbbb"
    (change,) = submodule_change("third_party/cutlass", parse_patch(patch))
    assert (change.name, change.action, change.old_spec, change.new_spec) == ("third_party/cutlass", "changed", "aaaa", "bbbb")


def test_other_files_and_empty_hunks_have_no_dependencies():
    assert dependency_changes("verl/x.py", parse_patch("@@ -1 +1 @@\n-a==1\n+a==2")) == ()
    assert dependency_changes("requirements.txt", ()) == ()


def test_an_extras_key_of_setup_py_is_no_dependency():
    # fresh-o #683: `'math': MATH_REQUIRES` was said to add a dependency called `math`.
    patch = """@@ -40,8 +40,10 @@ GEO_REQUIRES = ['mathruler']
+MATH_REQUIRES = ['math-verify']
 extras_require = {
   'test': TEST_REQUIRES,
+  'math': MATH_REQUIRES,
+  "vision": ["qwen-vl-utils>=0.0.8"],
 }
"""
    assert changes("setup.py", patch) == [("qwen-vl-utils", "added", "", ">=0.0.8")]


# --- pip VCS installs (git+https://...) -----------------------------------------------------


def test_a_dockerfile_s_vcs_installs_are_dependencies():
    """A blind rating: "3 dependencies changed (flash-attn, wandb, py-spy)" undercounts: the
    image also installs apex and TransformerEngine, from their git repositories."""
    patch = parse_patch(
        "@@ -30,3 +30,9 @@ RUN pip3 install vllm==0.6.3\n"
        " \n"
        "+RUN MAX_JOBS=4 pip3 install -v --no-build-isolation \\\n"
        "+    --config-settings \"--build-option=--cpp_ext\" \\\n"
        "+    git+https://github.com/NVIDIA/apex\n"
        "+RUN pip3 install flash-attn==2.5.8 --no-cache-dir\n"
        "+RUN pip3 install git+https://github.com/NVIDIA/TransformerEngine.git@v1.7\n"
        "+RUN pip install --no-deps git+ssh://git@github.com/NVIDIA-NeMo/Megatron-Bridge.git@de93536e\n"
    )
    found = {(c.name, c.new_spec) for c in dependency_changes("docker/Dockerfile.ngc", patch)}
    assert {("apex", ""), ("transformerengine", "git:v1.7"), ("flash-attn", "==2.5.8"), ("megatron-bridge", "git:de93536e")} <= {
        (normalize_name(n), s) for n, s in found}


def test_a_requirements_vcs_line_is_a_dependency_and_a_wheel_url_is_not_guessed():
    patch = parse_patch("@@ -1,2 +1,3 @@\n torch==2.4\n+git+https://github.com/org/fastkernels.git@v2\n+https://example.com/some.whl\n")
    assert [(c.name, c.new_spec) for c in dependency_changes("requirements.txt", patch)] == [("fastkernels", "git:v2")]


def test_an_image_named_by_a_build_argument_is_no_dependency():
    """``FROM ${BASE_IMAGE:-$DEFAULT_BASE}`` was listed as "`${BASE_IMAGE` `-$DEFAULT_BASE}` installed"
    and counted in "23 dependencies changed (`${BASE_IMAGE`, …)"."""
    patch = parse_patch("@@ -1,2 +1,3 @@\n ARG DEFAULT_BASE=rocm/vllm:latest\n-FROM rocm/vllm:v0.9\n+FROM ${BASE_IMAGE:-$DEFAULT_BASE}\n+RUN pip install mathruler==0.1.0\n")
    names = [c.name for c in dependency_changes("docker/rocm/Dockerfile.rocm", patch)]
    assert not [n for n in names if "$" in n or "{" in n]
    assert "mathruler" in names
