"""Configuration keys added, removed and changed in YAML, TOML, INI and JSON hunks."""

from __future__ import annotations

from bot.engine.analysis.config_keys import KeyChanges, config_keys, ini_keys, json_keys, pair_keys, toml_keys, yaml_keys
from bot.engine.analysis.patch import parse_patch


def yaml(patch: str) -> KeyChanges:
    return yaml_keys(parse_patch(patch))


def test_yaml_keys_qualified_by_context_and_section_text():
    patch = """@@ -40,6 +40,8 @@ actor_rollout_ref:
   rollout:
     name: vllm
-    mode: sync
+    mode: async
+    engine_kwargs:
+      swap_space: 4
     n: 1
"""
    keys = yaml(patch)
    assert keys.changed == ("actor_rollout_ref.rollout.mode",)
    assert keys.added == ("actor_rollout_ref.rollout.engine_kwargs", "actor_rollout_ref.rollout.engine_kwargs.swap_space")
    assert keys.removed == ()


def test_yaml_hunk_deeper_than_section_key_drops_the_unknown_levels():
    # "rollout:" (indent 2) is above the hunk: the path starts at what is visible.
    patch = """@@ -88,4 +88,4 @@ actor_rollout_ref:
       log_prob_micro_batch_size: null
-      temperature: 1.0
+      temperature: 0.7
   ref:
+    fsdp: true
"""
    keys = yaml(patch)
    assert keys.changed == ("temperature",)
    assert keys.added == ("actor_rollout_ref.ref.fsdp",)


def test_yaml_step_seen_elsewhere_sets_the_indent_unit():
    # Four-space files: a child four columns under the section key is a direct child.
    patch = """@@ -1,3 +1,4 @@ trainer:
     epochs: 3
+    save_freq: 10
@@ -20,2 +21,3 @@ data:
     files:
         train: a.parquet
+        val: b.parquet
"""
    keys = yaml(patch)
    assert keys.added == ("trainer.save_freq", "data.files.val")


def test_yaml_list_items_block_scalars_comments_and_documents():
    patch = """@@ -1,5 +1,12 @@
 steps:
   - name: build
+    run: |
+      echo not: a key
+      make all
+  - name: test
+    with:
+      python: "3.11"
+# note: comment
+---
+kind: Service
 env: prod
"""
    keys = yaml(patch)
    assert keys.added == ("steps.run", "steps.name", "steps.with", "steps.with.python", "kind")


def test_yaml_moved_key_is_changed():
    patch = """@@ -1,4 +1,4 @@
 trainer:
-  nnodes: 1
   epochs: 2
+  nnodes: 1
"""
    assert yaml(patch) == KeyChanges(changed=("trainer.nnodes",))


def test_yaml_removed_section(load_bundle_json):
    bundle = load_bundle_json(6804)
    (legacy,) = [f for f in bundle["files"] if f["filename"] == "verl/trainer/config/data/legacy_data.yaml"]
    keys = yaml(legacy["patch"])
    assert keys.removed == ("continuous_token", "continuous_token.enable", "continuous_token.model_family")
    assert keys.added == ()


def test_yaml_real_profiler_keys(load_bundle_json):
    bundle = load_bundle_json(7408)
    by_name = {f["filename"]: f for f in bundle["files"]}
    keys = yaml(by_name["verl/trainer/config/actor/actor.yaml"]["patch"])
    assert keys.added == (
        "profiler.relocate_results",
        "profiler.finish_hook_cmd",
        "profiler.finish_hook_all_ranks",
        "profiler.finish_hook_ranks",
    )


def test_toml_keys_with_tables_and_arrays():
    patch = """@@ -1,8 +1,10 @@
 [tool.ruff]
-line-length = 100
+line-length = 120
+target-version = "py311"
 ignore = [
     "E501",
+    "F401",
 ]
 [tool.ruff.lint]
-select = ["E"]
"""
    keys = toml_keys(parse_patch(patch))
    assert keys.changed == ("tool.ruff.line-length",)
    assert keys.added == ("tool.ruff.target-version",)
    assert keys.removed == ("tool.ruff.lint.select",)


def test_toml_key_without_visible_table_and_inside_section_array():
    patch = """@@ -141,3 +141,4 @@ fsdp = [
     "torch==2.11.0",
+    "trl==1.10.0",
 ]
+extra = true
"""
    assert toml_keys(parse_patch(patch)) == KeyChanges(added=("extra",))


def test_ini_keys():
    patch = """@@ -1,4 +1,5 @@
 [flake8]
-max-line-length = 100
+max-line-length = 120
+extend-ignore = E203
     continued value
 [isort]
"""
    keys = ini_keys(parse_patch(patch))
    assert keys.changed == ("flake8.max-line-length",)
    assert keys.added == ("flake8.extend-ignore",)


def test_json_keys_by_indentation():
    patch = """@@ -1,6 +1,8 @@
 {
   "compilerOptions": {
-    "strict": false,
+    "strict": true,
+    "paths": {
+      "@/*": ["src/*"]
+    },
     "target": "es2020"
   }
"""
    keys = json_keys(parse_patch(patch))
    assert keys.changed == ("compilerOptions.strict",)
    assert keys.added == ("compilerOptions.paths", "compilerOptions.paths.@/*")


def test_dispatch_and_pairing():
    assert config_keys(parse_patch("@@ -1 +1 @@\n-a: 1\n+a: 2"), "yaml").changed == ("a",)
    assert config_keys(parse_patch("@@ -1 +1 @@\n-a\n+b"), "markdown") == KeyChanges()
    assert not KeyChanges()
    assert pair_keys(["a", "b", "a"], ["b", "c"]) == KeyChanges(added=("c",), removed=("a",), changed=("b",))
