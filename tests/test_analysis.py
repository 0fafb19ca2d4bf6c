"""``analyse()`` on whole pull requests: real corpus bundles, odd files, arbitrary input."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.engine.analysis import KINDS, analyse, analyse_file
from bot.engine.snapshot import ChangedFile, PullRequestSnapshot


def snapshot_of(bundle: dict) -> PullRequestSnapshot:
    return PullRequestSnapshot.from_github(bundle["pull"], bundle["files"], bundle["reviews"], bundle["review_comments"])


def by_path(analysis):
    return {f.path: f for f in analysis.files}


def test_added_and_removed_lines_keep_text_without_prefix():
    file = ChangedFile("a.py", "modified", 1, 1, "@@ -1,2 +1,2 @@\n x = 1\n-y = 2\n+y = 3")
    result = analyse_file(file)
    assert result.added_lines == ("y = 3",)
    assert result.removed_lines == ("y = 2",)
    assert (result.additions, result.deletions, result.kind, result.language) == (1, 1, "source", "python")


def test_counts_come_from_the_patch_when_github_gave_none():
    result = analyse_file(ChangedFile("a.py", "modified", 0, 0, "@@ -1 +1,2 @@\n-a\n+b\n+c"))
    assert (result.additions, result.deletions) == (2, 1)


def test_missing_patch_pure_rename_and_binary():
    big = analyse_file(ChangedFile("big.py", "modified", 9000, 10, None))
    assert big.patch_missing and big.kind == "source" and big.changes == 9010 and big.added_lines == ()
    rename = analyse_file(ChangedFile("new/x.py", "renamed", 0, 0, None, "old/x.py"))
    assert not rename.patch_missing and rename.previous_path == "old/x.py" and rename.kind == "source"
    image = analyse_file(ChangedFile("fig/a.png", "added", 0, 0, None))
    assert image.kind == "binary" and not image.counts_as_code


def test_generated_files_are_not_read_for_definitions_but_give_dependencies():
    patch = '@@ -1,3 +1,3 @@\n [[package]]\n name = "torch"\n-version = "2.10.0"\n+version = "2.11.0"'
    result = analyse_file(ChangedFile("uv.lock", "modified", 1, 1, patch))
    assert result.kind == "generated"
    assert [(d.name, d.action) for d in result.dependency_changes] == [("torch", "changed")]
    assert result.symbols_touched == () and result.todos_added == ()


def test_python_fields_count_as_config_keys_in_source_but_not_tests():
    patch = "@@ -1,2 +1,3 @@ class Cfg(BaseModel):\n     a: int = 1\n+    b: str = 'x'\n"
    assert analyse_file(ChangedFile("pkg/cfg.py", "modified", 1, 0, patch)).config_keys_added == ("Cfg.b",)
    assert analyse_file(ChangedFile("tests/test_cfg.py", "modified", 1, 0, patch)).config_keys_added == ()


def test_yaml_keys_only_for_config_files():
    patch = "@@ -1,2 +1,2 @@ jobs:\n   build:\n-    runs-on: a\n+    runs-on: b"
    assert analyse_file(ChangedFile("conf/app.yaml", "modified", 1, 1, patch)).config_keys_changed == ("jobs.build.runs-on",)
    assert analyse_file(ChangedFile(".github/workflows/ci.yml", "modified", 1, 1, patch)).config_keys_changed == ()


def test_shell_script_from_shebang_gets_symbols():
    patch = "@@ -0,0 +1,3 @@\n+#!/bin/bash\n+setup() {\n+}"
    result = analyse_file(ChangedFile("bin/tool", "added", 3, 0, patch))
    assert result.language == "shell"
    assert [d.name for d in result.definitions_added] == ["setup"]


def test_extra_kind_globs_and_their_validation():
    snap = PullRequestSnapshot("o/r", 1, "t", files=(ChangedFile("recipe/a/main.py", "added", 1, 0, "@@ -0,0 +1 @@\n+x = 1"),))
    assert analyse(snap, kinds={"example": ["recipe/**"]}).files[0].kind == "example"
    with pytest.raises(ValueError, match="unknown file kind"):
        analyse(snap, kinds={"sample": ["recipe/**"]})


def test_pr_7492_only_removes_lines_in_a_ci_workflow(load_bundle_json):
    analysis = analyse(snapshot_of(load_bundle_json(7492)))
    (ci,) = analysis.files
    assert (ci.kind, ci.additions, ci.deletions, ci.added_lines) == ("ci", 0, 16, ())
    assert len(ci.removed_lines) == 16
    assert analysis.lines_changed == 16 and analysis.reading_lines == 16


def test_pr_7491_model_change_and_tests(load_bundle_json):
    files = by_path(analyse(snapshot_of(load_bundle_json(7491))))
    model = files["verl/experimental/agent_loop/agent_loop.py"]
    assert model.kind == "source" and "AgentLoopOutput" in model.symbols_touched
    test = files["tests/experimental/agent_loop/test_agent_loop_extra_fields_schema_on_cpu.py"]
    assert test.kind == "test" and len(test.tests_added) == 3


def test_pr_7127_dependencies_and_generated_lock(load_bundle_json):
    analysis = analyse(snapshot_of(load_bundle_json(7127)))
    files = by_path(analysis)
    lock = files["uv.lock"]
    assert lock.kind == "generated" and lock.patch_missing and lock.additions == 5119
    assert analysis.lines_changed == analysis.additions + analysis.deletions
    assert analysis.lines_changed < sum(f.changes for f in analysis.files)  # the lock file is left out
    pyproject = files["pyproject.toml"]
    assert pyproject.kind == "build"
    assert {"vllm", "sglang", "torch"} <= {d.name for d in pyproject.dependency_changes}
    assert files["verl/trainer/config/ppo_trainer.yaml"].config_keys_added == ("runtime_env", "runtime_env.py_executable")
    assert files["examples/grpo_trainer/run_qwen3_8b_fsdp.sh"].kind == "example"


def test_pr_4795_removals_renames_and_binaries(load_bundle_json):
    bundle = load_bundle_json(4795)
    analysis = analyse(snapshot_of(bundle))
    assert len(analysis.files) == len(bundle["files"]) == 344
    files = by_path(analysis)
    renamed = [f for f in analysis.files if f.status == "renamed"]
    assert renamed and all(f.previous_path for f in renamed)
    pure = files["verl/experimental/fully_async_policy/param_sync.py"]
    assert (pure.status, pure.changes, pure.patch_missing, pure.kind) == ("renamed", 0, False, "source")
    assert files["recipe/flowrl/figures/flowrl.png"].kind == "binary"
    assert files["recipe"].kind == "build"
    (submodule,) = files["recipe"].dependency_changes
    assert submodule.action == "added" and len(submodule.new_spec) == 40
    removed = [f for f in analysis.files if f.status == "removed" and f.language == "python" and f.definitions_removed]
    assert removed and all(not f.definitions_added for f in removed)
    assert analysis.deletions > 30000


def test_pr_6682_shims_reach_the_file_analysis(load_bundle_json):
    files = by_path(analyse(snapshot_of(load_bundle_json(6682))))
    assert any(s.startswith("import fallback:") for s in files["verl/models/mcore/bridge.py"].shims)
    # ``hasattr(provider, "finalize")`` is duck typing, not evidence of compatibility handling.
    assert files["verl/workers/engine/megatron/transformer_impl.py"].shims == ()


@pytest.mark.corpus
def test_whole_corpus_analyses_and_keeps_every_file(corpus_dir):
    seen_kinds = set()
    for path in sorted(corpus_dir.glob("*.json")):
        bundle = json.loads(path.read_text(encoding="utf-8"))
        analysis = analyse(snapshot_of(bundle))
        assert [f.path for f in analysis.files] == [f["filename"] for f in bundle["files"]], path.name
        for file, raw in zip(analysis.files, bundle["files"]):
            assert file.kind in KINDS
            assert (file.additions, file.deletions) == (raw["additions"], raw["deletions"]), (path.name, file.path)
            if raw.get("patch"):
                # GitHub's counts and the lines the parser found agree.
                assert (len(file.added_lines), len(file.removed_lines)) == (raw["additions"], raw["deletions"]), file.path
        seen_kinds.update(f.kind for f in analysis.files)
    assert seen_kinds == set(KINDS)


def _big_pr(n: int) -> PullRequestSnapshot:
    py = "@@ -10,3 +10,4 @@ class Model{i}(BaseModel):\n     a: int = 1\n+    b: int = 2\n-    def f(self):\n+    def f(self, x=None):\n"
    files = []
    for i in range(n):
        if i % 3 == 0:
            files.append(ChangedFile(f"pkg/m{i}/core.py", "modified", 2, 1, py.replace("{i}", str(i))))
        elif i % 3 == 1:
            files.append(ChangedFile(f"conf/c{i}.yaml", "modified", 1, 1, "@@ -1,2 +1,2 @@ trainer:\n-  n: 1\n+  n: 2"))
        else:
            files.append(ChangedFile(f"new/{i}.py", "renamed", 0, 0, None, f"old/{i}.py"))
    return PullRequestSnapshot("o/r", 1, "big", files=tuple(files), changed_files=n)


def test_github_sized_pull_request_of_3000_files():
    analysis = analyse(_big_pr(3000))
    assert len(analysis.files) == 3000
    assert analysis.files[0].config_keys_added == ("Model0.b",)
    assert [d.name for d in analysis.files[0].definitions_modified] == ["Model0.f"]
    assert analysis.files[1].config_keys_changed == ("trainer.n",)
    assert analysis.lines_changed == 1000 * 3 + 1000 * 2


_paths = st.one_of(
    st.sampled_from(
        ["a.py", "x/b.yaml", "pyproject.toml", "requirements.txt", "Dockerfile", "uv.lock", "web/package.json",
         "src/main.go", "lib.rs", "a.ts", "run.sh", "docs/a.md", "setup.py", "c.json", "x.ini", "img.png", "recipe"]
    ),
    st.text(min_size=1, max_size=30),
)
_snippets = st.sampled_from(
    ["def f(", "class A(Base):", "async def g():", "    x: int = 3", '"""', "try:", "except ImportError:", "import os",
     "hasattr(a, 'b')", "version.parse(v) >= 1", "# TODO: x", "key:", "  - name: a", "  sub: |", "[tool.uv]",
     'name = "torch"', 'version = "1.0"', '"trl==1.0",', "deps = [", "]", "FROM img:1", "RUN pip install a==1 \\",
     '"react": "^1.0"', "func (s *S) F() {", "fn main() {", "Subproject commit abc", "---", "\t", "\r", ""]
)
_patch_lines = st.builds(
    lambda prefix, indent, body, tail: prefix + " " * indent + body + tail,
    st.sampled_from(["+", "-", " ", "@@ -1,4 +1,4 @@ ", "@@ -0,0 +1,9 @@ def f(", "\\ No newline", ""]),
    st.integers(0, 9),
    _snippets,
    st.text(max_size=8),
)
_patches = st.lists(_patch_lines, max_size=30).map(lambda lines: "@@ -3,9 +3,9 @@ class A:\n" + "\n".join(lines))

_file = st.builds(
    lambda path, status, adds, dels, patch, prev: {
        "filename": path, "status": status, "additions": adds, "deletions": dels, "patch": patch, "previous_filename": prev,
    },
    _paths,
    st.sampled_from(["added", "removed", "modified", "renamed", "copied", "changed", "unchanged", "weird"]),
    st.integers(0, 10**6),
    st.integers(0, 10**6),
    st.one_of(st.none(), st.text(), _patches),
    st.one_of(st.none(), st.text(max_size=20)),
)


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_file, max_size=5))
def test_analyse_never_raises_on_arbitrary_files(raw_files):
    snap = PullRequestSnapshot.from_github({"number": 1, "url": "https://api.github.com/repos/o/r/pulls/1"}, raw_files)
    analysis = analyse(snap)
    assert len(analysis.files) == len(raw_files)
    assert all(f.kind in KINDS for f in analysis.files)
