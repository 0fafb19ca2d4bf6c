"""Hunt round 7: hostile diffs and odd input against the engine's newest checks (call edits,
cut shell continuations, docstring bodies and trailing comments, moved blocks, description
names, keys still read). Each finding is a failing test first; the ones left are strict xfails."""

from __future__ import annotations

import pytest

from bot.engine.analysis.patch import parse_patch
from bot.engine.analysis.prose import prose_only


def test_dict_items_beside_an_args_key_are_no_docstring_prose():
    # Every line is a syntax error alone and "Returns:" is a dict key, yet the hunk is code:
    # `"verify": True` → False was said "prose only" (no code changed, no code lines counted).
    patch = ('@@ -20,7 +20,7 @@ def handler(request):\n'
             '         "timeout": 10,\n'
             '         Returns:\n'
             '             {"a": 1,\n'
             '-        "verify": True,\n'
             '+        "verify": False,\n'
             '         "retries": 3,\n')
    assert not prose_only(parse_patch(patch), "python")


def test_a_string_continued_over_lines_beside_an_args_key_is_no_docstring_prose():
    # Prose words in a backslash-continued string do not make the dict around them a docstring.
    patch = ('@@ -20,7 +20,7 @@ def handler(request):\n'
             '         "help": "see \\\n'
             'the flag words \\\n'
             'here",\n'
             '         Returns:\n'
             '             {"a": 1,\n'
             '-        "verify": True,\n'
             '+        "verify": False,\n')
    assert not prose_only(parse_patch(patch), "python")


def test_text_after_an_unclosed_quote_is_no_trailing_comment():
    # Inside a multi-line string a `"` opens nothing: what follows `#` is the string's text.
    patch = ('@@ -20,3 +20,3 @@ def query(db):\n'
             '     SELECT * FROM users\n'
             '-    WHERE name = "x # AND admin = 0\n'
             '+    WHERE name = "x # OR 1 = 1\n')
    assert not prose_only(parse_patch(patch), "python")


@pytest.mark.xfail(strict=True, reason="a hunk inside a non-docstring multi-line string, its quotes out of the hunk, "
                   "reads as Python: a line whose text after '#' changed is a 'trailing comment' change (needs the file)")
def test_text_after_a_hash_inside_an_embedded_string_is_no_comment():
    patch = ('@@ -20,3 +20,3 @@ def query(db):\n'
             '     SELECT * FROM users\n'
             '-    WHERE a = 1 # AND admin = 0\n'
             '+    WHERE a = 1 # OR 1 = 1\n')
    assert not prose_only(parse_patch(patch), "python")


# --- a removed config key "still read" ---------------------------------------------------------

REFUSED = '''@@ -670,3 +670,6 @@ class RayPPOTrainer:
         max_keep = self.config.trainer.get("max_actor_ckpt_to_keep", None)
+        # trainer.remove_previous_ckpt_in_save is gone: set max_actor_ckpt_to_keep instead
+        if "remove_previous_ckpt_in_save" in self.config.trainer:
+            raise ValueError("trainer.remove_previous_ckpt_in_save was removed")
         self.save(max_keep)
'''


def test_a_removed_key_the_code_refuses_or_names_in_a_comment_is_still_a_break():
    # A comment, a membership test before a raise and an error message name the key; none
    # reads its value: configs that still set it fail, and the guide must say so.
    from tests.test_exact_claims import REMOVED_KEY, guide_text

    text = guide_text({"verl/trainer/config/ppo_trainer.yaml": REMOVED_KEY, "verl/trainer/ppo/ray_trainer.py": REFUSED},
                      title="[trainer] feat: keep N checkpoints")
    assert "will fail or be ignored" in text
