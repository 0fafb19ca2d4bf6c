"""Python definitions, fields, tests and shims read from diff hunks."""

from __future__ import annotations

from bot.engine.analysis.patch import parse_patch
from bot.engine.analysis.python import analyse_python


def facts(patch: str):
    return analyse_python(parse_patch(patch))


def names(definitions):
    return [d.name for d in definitions]


METHOD_ADDED = """@@ -10,6 +10,10 @@ class Trainer:
     def fit(self):
         return 1
 
+    def evaluate(self, data):
+        # score on held-out data
+        return 2
+
     def _save(self):
         pass
"""


def test_method_added_inside_class_from_section_text():
    f = facts(METHOD_ADDED)
    assert [(d.name, d.kind, d.line) for d in f.definitions_added] == [("Trainer.evaluate", "method", 13)]
    assert f.symbols_touched == ("Trainer.evaluate",)
    assert f.definitions_removed == () and f.definitions_modified == ()


def test_body_change_touches_the_enclosing_method_seen_in_context():
    patch = """@@ -20,7 +20,7 @@ class Trainer:
     def fit(self, data):
         for batch in data:
-            self.step(batch)
+            self.step(batch, sync=True)
         return self
"""
    f = facts(patch)
    assert f.symbols_touched == ("Trainer.fit",)
    assert f.definitions_added == f.definitions_removed == ()


def test_change_deep_in_a_method_without_visible_def_touches_the_class():
    patch = """@@ -144,9 +144,9 @@ class AgentLoopOutput(BaseModel):
             rm_scores[-1] = reward_score
-            output["x"] = 1
+            output["x"] = 2
"""
    assert facts(patch).symbols_touched == ("AgentLoopOutput",)


def test_signature_change_is_modified_not_added_and_removed():
    patch = """@@ -5,4 +5,4 @@ class Engine:
-    def step(self, batch):
+    def step(self, batch, *, sync=False):
         pass
@@ -40,3 +40,2 @@ class Engine:
-    def old_helper(self):
-        pass
     x = 1
"""
    f = facts(patch)
    assert names(f.definitions_modified) == ["Engine.step"]
    assert names(f.definitions_removed) == ["Engine.old_helper"]
    assert f.definitions_removed[0].line == 40
    assert f.definitions_added == ()


def test_definition_moved_between_hunks_is_modified():
    patch = """@@ -1,3 +1,1 @@
-def moved():
-    return 1
 x = 1
@@ -50,1 +48,3 @@ y = 2
 z = 3
+def moved():
+    return 1
"""
    f = facts(patch)
    assert names(f.definitions_modified) == ["moved"]
    assert f.definitions_added == f.definitions_removed == ()


def test_nested_functions_are_local_and_touch_their_outer_function():
    patch = """@@ -0,0 +1,6 @@
+def make_value_model(hidden_size):
+    def hook(model):
+        return model
+
+    return hook
+
"""
    f = facts(patch)
    assert names(f.definitions_added) == ["make_value_model"]
    assert f.symbols_touched == ("make_value_model",)


def test_async_def_decorators_and_nested_classes():
    patch = """@@ -0,0 +1,9 @@
+class Outer:
+    class Inner:
+        @property
+        def value(self):
+            return 1
+
+    async def run(self):
+        return 2
+x = 1
"""
    f = facts(patch)
    assert [(d.name, d.kind) for d in f.definitions_added] == [
        ("Outer", "class"),
        ("Outer.Inner", "class"),
        ("Outer.Inner.value", "method"),
        ("Outer.run", "method"),
    ]


def test_multiline_signature_and_docstring_do_not_break_scopes():
    patch = '''@@ -0,0 +1,14 @@
+class Config:
+    def build(
+        self,
+        name: str = "x",
+    ) -> None:
+        """Build it.
+
+Not indented: still the docstring.
+        """
+        return None
+
+    def other(self):
+        pass
+
'''
    f = facts(patch)
    assert names(f.definitions_added) == ["Config", "Config.build", "Config.other"]
    assert f.fields_added == ()


def test_dataclass_and_pydantic_fields_added_removed_changed():
    patch = """@@ -10,8 +10,9 @@ class ProfilerConfig(BaseConfig):
     tool: str = "nsys"
-    ranks: list[int] = field(default_factory=list)
+    ranks: Optional[list[int]] = None
+    finish_hook_cmd: Optional[str] = None
-    legacy: bool = False
     enable: bool = False
+    MAX: ClassVar[int] = 3
+    else_: int = 1
 
     def __post_init__(self):
         x: int = 3
"""
    f = facts(patch)
    assert f.fields_added == ("ProfilerConfig.finish_hook_cmd", "ProfilerConfig.else_")
    assert f.fields_removed == ("ProfilerConfig.legacy",)
    assert f.fields_changed == ("ProfilerConfig.ranks",)


def test_docstring_prose_seen_without_its_quotes_is_not_a_field():
    patch = """@@ -221,3 +221,5 @@ class ProfilerConfig(BaseConfig):
         all_ranks (bool): Whether to profile all ranks.
+          https://docs.ray.io/en/latest/profiling.html), and rollout traces
+        Note: this runs on the profiled ranks.
"""
    assert facts(patch).fields_added == ()


def test_tests_added_functions_and_classes():
    patch = """@@ -0,0 +1,9 @@
+def _make_output():
+    return 1
+
+def test_output_as_dict():
+    assert _make_output() == 1
+
+class TestEngine:
+    def test_step(self):
+        pass
"""
    f = facts(patch)
    # A test class holds tests but is not one.
    assert f.tests_added == ("test_output_as_dict", "TestEngine.test_step")


def test_shims_are_import_fallbacks_and_version_checks_not_hasattr():
    patch = """@@ -1,3 +1,16 @@
 import os
+try:
+    from megatron.bridge import AutoBridge
+except ImportError:
+    AutoBridge = None
+
+if hasattr(provider, "finalize"):
+    provider.finalize()
+if version.parse(torch.__version__) >= version.parse("2.4"):
+    pass
+if sys.version_info >= (3, 11):
+    pass
+if is_version_ge(pkg="vllm", minver="0.25.0"):
+    pass
+use_cli = _VLLM_VERSION >= version.parse("0.13.0")
 x = 1
"""
    shims = facts(patch).shims
    # `except ImportError: AutoBridge = None` guards an optional backend: no second version served.
    assert not any(s.startswith("import fallback") for s in shims)
    assert not any("hasattr" in s for s in shims)
    version_checks = [s for s in shims if s.startswith("version check:")]
    assert len(version_checks) == 4


def test_removed_shims_and_context_shims_are_not_reported():
    patch = """@@ -1,5 +1,3 @@
 try:
     import foo
-except ImportError:
-    foo = None
 if hasattr(x, "y"):
"""
    assert facts(patch).shims == ()


def test_except_added_around_an_existing_import_names_that_import():
    patch = """@@ -1,2 +1,4 @@
 try:
     from .nccl import NCCLEngine
+except ImportError:
+    from .nccl_legacy import NCCLEngine
"""
    assert facts(patch).shims == ("import fallback: from .nccl import NCCLEngine",)


def test_an_optional_backend_guard_is_no_import_fallback():
    """An ``except ImportError:`` that warns or sets None guards an optional backend (raters
    read "compatibility handling; note which versions each branch serves" as wrong there)."""
    patch = """@@ -1,2 +1,5 @@
 try:
     from .torchtitan import TorchTitanEngine
+except ImportError as e:
+    warnings.warn(f"torchtitan is not available: {e}", stacklevel=2)
+    TorchTitanEngine = None
"""
    assert facts(patch).shims == ()


def test_removed_file_removes_every_top_level_definition():
    patch = """@@ -1,6 +0,0 @@
-class Gone:
-    def method(self):
-        pass
-
-def helper():
-    pass
"""
    f = facts(patch)
    assert names(f.definitions_removed) == ["Gone", "Gone.method", "helper"]
    assert [d.line for d in f.definitions_removed] == [1, 2, 5]


def test_real_pr_7491_pydantic_model_and_tests(load_bundle_json):
    bundle = load_bundle_json(7491)
    by_name = {f["filename"]: f for f in bundle["files"]}
    model = facts(by_name["verl/experimental/agent_loop/agent_loop.py"]["patch"])
    # The hunk sits inside AgentLoopOutput.as_dict, but only the class line is visible.
    assert model.symbols_touched == ("AgentLoopOutput",)
    tests = facts(by_name["tests/experimental/agent_loop/test_agent_loop_extra_fields_schema_on_cpu.py"]["patch"])
    assert len(tests.tests_added) == 3
    assert all(t.startswith("test_agent_loop_output_as_dict") for t in tests.tests_added)
    assert "_make_agent_loop_output" in names(tests.definitions_added)


def test_real_pr_6682_backward_compat_shims(load_bundle_json):
    bundle = load_bundle_json(6682)
    by_name = {f["filename"]: f for f in bundle["files"]}
    bridge = facts(by_name["verl/models/mcore/bridge.py"]["patch"])
    assert bridge.shims[0].startswith("import fallback: from megatron.bridge.training.utils.train_utils import")
    assert {"LinearForLastLayer", "LinearForLastLayer.forward", "make_value_model", "freeze_moe_router"} <= set(
        names(bridge.definitions_added)
    )
    utils = facts(by_name["verl/utils/megatron_utils.py"]["patch"])
    assert utils.shims == ("import fallback: from megatron.bridge.training.utils.config_utils import create_ddp_config",)
    assert utils.symbols_touched == ("make_megatron_module",)
    impl = facts(by_name["verl/workers/engine/megatron/transformer_impl.py"]["patch"])
    assert impl.shims == ()  # only hasattr(...) checks there: no version or import evidence


def test_real_pr_7373_config_dataclass_fields(load_bundle_json):
    bundle = load_bundle_json(7373)
    (config,) = [f for f in bundle["files"] if f["filename"] == "verl/trainer/config/config.py"]
    f = facts(config["patch"])
    assert "HybridRolloutSwitchConfig.enable_switch" in f.fields_added
    assert "HybridRolloutSwitchConfig" in names(f.definitions_added)


def test_docstring_edit_touches_its_function():
    patch = '''@@ -1,6 +1,6 @@
 def run(config):
     """Run the job.
 
-    Old wording.
+    New wording.
     """
'''
    assert facts(patch).symbols_touched == ("run",)


def test_a_hunk_that_starts_inside_a_docstring_still_sees_the_new_method_after_it():
    # #5722: the hunk opens on the closing `"""` of the method above; read as an opening
    # quote, it hid `decoupled_token_icepop` ("public definitions: 1 added" for 2).
    patch = (
        "@@ -206,6 +208,13 @@ class RolloutCorrectionConfig(BaseConfig):\n"
        '         """\n'
        "         return cls(rollout_is=\"sequence\")\n"
        " \n"
        "+    @classmethod\n"
        "+    def decoupled_token_icepop(cls, threshold=5.0):\n"
        '+        """Decoupled mode with exact token-level IcePop.\n'
        "+\n"
        "+        Keeps the response mask.\n"
        '+        """\n'
        "+        return cls(rollout_is=\"token\")\n"
        "     @classmethod\n"
        "     def decoupled_seq_is_rs(\n"
        "         cls,\n"
    )
    facts = analyse_python(parse_patch(patch), path="verl/trainer/config/algorithm.py")
    assert [d.name for d in facts.definitions_added] == ["RolloutCorrectionConfig.decoupled_token_icepop"]
    # A hunk that starts outside any string and opens a docstring reads as before.
    plain = (
        "@@ -1,2 +1,6 @@\n"
        " def f():\n"
        '+    """Says what f does.\n'
        "+\n"
        '+    return is in the words here"""\n'
        "+    return 1\n"
        "     pass\n"
    )
    assert analyse_python(parse_patch(plain)).symbols_touched == ("f",)


def test_a_file_removed_whole_whose_class_docstring_shows_example_code_keeps_its_class():
    # #4795: the docstring opens on a bare `"""` right under `class specRLPatch:` and holds
    # an example `class ExamplePatch`; the file is read from its top, outside any string.
    patch = (
        "@@ -1,12 +0,0 @@\n"
        "-import logging\n"
        "-\n"
        "-\n"
        "-class specRLPatch:\n"
        '-    """\n'
        "-    Example:\n"
        "-\n"
        "-    class ExamplePatch(specRLPatch[SomeClass]):\n"
        "-        def new_method(self):\n"
        '-    """\n'
        "-    def apply_patch(self):\n"
        "-        pass\n"
    )
    facts = analyse_python(parse_patch(patch))
    assert [d.name for d in facts.definitions_removed] == ["specRLPatch", "specRLPatch.apply_patch"]
    # The same lines in the middle of a file: the class line above the quote says where it is.
    middle = patch.replace("@@ -1,12 +0,0 @@", "@@ -40,12 +40,0 @@")
    assert [d.name for d in analyse_python(parse_patch(middle)).definitions_removed] == ["specRLPatch", "specRLPatch.apply_patch"]
