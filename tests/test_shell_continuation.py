"""A backslash-continued shell command cut short by an added comment or blank line
(bot.engine.analysis.shell): said exactly, and never safe to skip."""

from __future__ import annotations

import pytest

from bot.engine.analysis import analyse_file
from bot.engine.analysis.patch import parse_patch
from bot.engine.analysis.shell import broken_continuations
from bot.engine.build import build_guide
from bot.engine.rules import load_rules
from bot.engine.snapshot import ChangedFile, PullRequestSnapshot

# verl #4103: a comment put among the arguments of `python3 -m verl.trainer.main_ppo`.
COMMENT = ("@@ -70,3 +70,5 @@ python3 -m verl.trainer.main_ppo \\\n"
           "     +a.recompute=1 \\\n"
           "     +a.fusion=True \\\n"
           "+    # Use aux_loss to balance experts\n"
           "+    +a.moe_aux_loss_coeff=0.01 \\\n"
           "     trainer.total_epochs=15 $@\n")
# verl #6126: a blank line after `name=$ENGINE \`.
BLANK = ("@@ -70,3 +70,4 @@ python3 -m x \\\n"
         "     a.name=$ENGINE \\\n"
         "+\n"
         "     a.util=0.8 \\\n"
         "     a.n=4\n")


def test_a_comment_or_blank_line_inside_a_continued_command_is_said_where_it_cuts():
    (e,) = broken_continuations(parse_patch(COMMENT), "run.sh")
    assert (e.kind, e.line, e.new, e.detail) == ("continuation_broken", 72, "# Use aux_loss to balance experts", "+a.moe_aux_loss_coeff=0.01 \\")
    (b,) = broken_continuations(parse_patch(BLANK), "run.sh")
    assert (b.line, b.new, b.detail) == (71, "", "a.util=0.8 \\")


@pytest.mark.parametrize(
    "patch",
    [
        # the break was there before: not this pull request's
        "@@ -1,4 +1,5 @@\n python x \\\n     # old comment\n     a=1 \\\n+    b=2 \\\n     c=3\n",
        # a comment after the command ended, a new command after a blank line
        "@@ -1,2 +1,4 @@\n python x \\\n     a=1\n+# next step\n+python y\n",
        # an escaped backslash ends no line with a continuation
        "@@ -1,2 +1,3 @@\n echo a\\\\\n+\n     b\n",
    ],
)
def test_no_break_is_said_where_the_command_was_not_cut_by_this_change(patch):
    assert broken_continuations(parse_patch(patch), "run.sh") == ()


def test_the_guide_leads_with_the_break_and_does_not_call_it_safe_to_skip():
    f = ChangedFile("examples/run.sh", "modified", 2, 0, COMMENT)
    assert analyse_file(f).edits[0].kind == "continuation_broken"
    s = PullRequestSnapshot(repository="o/r", number=7, title="[recipe] chore: add MoE loss settings", changed_files=1, additions=2,
                            deletions=0, files=(f,))
    for lang, skip in (("en", "Safe to skip"), ("zh", "可以跳过")):
        text = build_guide(s, load_rules(), lang=lang).markdown
        assert "+a.moe_aux_loss_coeff=0.01" in text.split("\n\n")[1]  # the summary
        assert skip not in text
