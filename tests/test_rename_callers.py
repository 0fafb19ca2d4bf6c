"""A function renamed whose references the diff rewrites is a refactor of internals, not a break.

A blind rating called "Breaking: `process_weights_after_loading_moe` renamed to
`process_weights_after_loading_moe_for_vllm10`" and "callers of the old name must change"
misleading: the function is a patch target whose one reference, a ``patch(path, f)``
line, the same diff changes. Removed and moved functions already had this rule; renames
did not.
"""

from __future__ import annotations

from tests.test_exact_claims import guide_text

RENAMED = """@@ -90,7 +90,7 @@ def process_weights_after_loading(self, layer) -> None:
     layer.weight_scale = scale
 
 
-def process_weights_after_loading_moe(self, layer) -> None:
+def process_weights_after_loading_moe_for_vllm10(self, layer) -> None:
     \"\"\"Requantize the experts' weights after loading.\"\"\"
     w13 = layer.w13_weight
     w2 = layer.w2_weight
@@ -160,7 +160,11 @@ def apply_vllm_fp8_patches():
     patcher1 = patch(func1_path, process_weights_after_loading)
     patcher1.start()
     func2_path = "vllm.model_executor.layers.quantization.fp8.Fp8MoEMethod.process_weights_after_loading"
-    patcher2 = patch(func2_path, process_weights_after_loading_moe)
+    patcher2 = patch(
+        func2_path,
+        process_weights_after_loading_moe_for_vllm10,
+    )
     patcher2.start()
"""

UNTOUCHED_CALLERS = RENAMED.split("@@ -160", 1)[0]


def test_a_rename_whose_references_the_diff_rewrites_is_no_break():
    text = guide_text({"verl/utils/vllm/vllm_fp8_utils.py": RENAMED}, title="[rollout] feat: fp8 for vllm 0.11")
    assert "Breaking" not in text
    assert "callers of the old name must change" not in text
    assert "this diff also changes the places that used the old name" in text


def test_a_rename_with_no_reference_in_the_diff_is_still_a_break():
    text = guide_text({"verl/utils/vllm/vllm_fp8_utils.py": UNTOUCHED_CALLERS}, title="[rollout] feat: fp8 for vllm 0.11")
    assert "Breaking" in text and "callers of the old name must change" in text
