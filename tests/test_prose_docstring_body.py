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
