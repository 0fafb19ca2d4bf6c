"""A hunk in the middle of a docstring that shows no triple quote (verl #2462: one line of an
``Args:`` list changed) is prose, not code changed in the function around it."""

from __future__ import annotations

from bot.engine.analysis.patch import ADDED, REMOVED, parse_patch
from bot.engine.analysis.prose import docstring_lines, prose_only

ARGS = ('@@ -344,7 +344,7 @@ def postprocess_data(\n'
        '         max_length: Target sequence length\n'
        '         pad_token_id: Padding token ID\n'
        '         left_pad: Pad left if True\n'
        '-        truncation: "left", "right" or "error"\n'
        '+        truncation: "left", "right", "middle" or "error"\n'
        ' \n'
        '     Returns:\n'
        '         (input_ids, attention_mask) padded/truncated to max_length\n')


def test_a_line_of_an_args_list_is_docstring_prose():
    (hunk,) = parse_patch(ARGS)
    changed = [d for d in hunk.lines if d.kind in (ADDED, REMOVED)]
    assert all(id(d) in docstring_lines(hunk, d.kind) for d in changed)
    assert prose_only(parse_patch(ARGS), "python")


def test_code_beside_a_returns_word_is_still_code():
    # "Returns:" as a word in a comment-free code hunk with a Python line: not a docstring.
    code = ("@@ -10,4 +10,4 @@ def f(x):\n     Returns:\n-    y = x + 1\n+    y = x + 2\n     return y\n")
    assert not prose_only(parse_patch(code), "python")
    # No section header beside the change: nothing says it is a docstring.
    bare = "@@ -10,3 +10,3 @@ def f(x):\n     max_length: Target sequence length\n-    a b c\n+    a b c d\n"
    assert not prose_only(parse_patch(bare), "python")


def test_a_line_that_changed_only_in_its_trailing_comment_is_prose():
    # fresh-n #1912: typo fixes in two `x = y  # …` comments scored "changes source code".
    comment = ("@@ -55,3 +55,3 @@ class Actor:\n     a = 1\n-    self.beta = beta  # the strenght of the penalty\n"
               "+    self.beta = beta  # the strength of the penalty\n     b = 2\n")
    assert prose_only(parse_patch(comment), "python")
    code = ("@@ -55,3 +55,3 @@ class Actor:\n     a = 1\n-    self.beta = beta  # the strenght\n+    self.beta = 2 * beta  # the strength\n     b = 2\n")
    assert not prose_only(parse_patch(code), "python")
    text = "@@ -1,1 +1,1 @@\n-x = '# a'  # one\n+x = '# b'  # one\n"
    assert not prose_only(parse_patch(text), "python")  # the string changed, not the comment
