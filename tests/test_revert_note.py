"""A reverted pull request's guide says so: "Reverted by #M N days after it was merged", right
under its title, remembered in the marker so that a rebuilt guide keeps it; the line added to
an existing comment is byte for byte the line a rebuilt guide has."""

from __future__ import annotations

import pytest

from bot.engine.build import Overrides, build_guide
from bot.engine.marker import parse_marker
from bot.engine.render.revert_note import reverted_by, with_revert_note
from bot.engine.rules import load_rules
from bot.engine.snapshot import ChangedFile, PullRequestSnapshot

PATCH = "@@ -1,2 +1,2 @@\n def f():\n-    return 1\n+    return 2"


@pytest.fixture(scope="module")
def rules():
    return load_rules()


def snapshot() -> PullRequestSnapshot:
    files = (ChangedFile("pkg/core.py", additions=1, deletions=1, patch=PATCH),)
    return PullRequestSnapshot(repository="o/r", number=40, title="[core] fix: return 2", merged=True,
                               merged_at="2026-03-01T00:00:00Z", changed_files=1, additions=1, deletions=1, files=files)  # fmt: skip


def test_a_rebuilt_guide_and_an_edited_comment_say_the_same(rules):
    plain = build_guide(snapshot(), rules)
    noted = build_guide(snapshot(), rules, overrides=Overrides(reverted_by=(52, 3)))
    title, rest = noted.markdown.split("\n", 2)[1], noted.markdown.split("\n", 2)[2]
    assert title.startswith("### ")
    assert rest.startswith("\n> [!WARNING]\n> Reverted by #52 3 days after it was merged.\n\n**")
    assert noted.data["reverted_by"] == {"number": 52, "days": 3}
    assert "reverted_by" not in plain.data
    assert with_revert_note(plain.markdown, 52, 3, "en") == noted.markdown
    assert reverted_by(parse_marker(noted.markdown)) == (52, 3)
    # The marker carries it, so a guide rebuilt from the comment keeps the line.
    again = build_guide(snapshot(), rules, overrides=Overrides.from_marker(parse_marker(noted.markdown)))
    assert again.markdown == noted.markdown


def test_adding_the_same_note_again_changes_nothing_and_a_new_reverter_replaces_it(rules):
    plain = build_guide(snapshot(), rules, lang="zh")
    once = with_revert_note(plain.markdown, 52, 0, "zh")
    assert "> 本 PR 已被 #52 回退（合并当天）。" in once
    assert with_revert_note(once, 52, 0, "zh") == once
    later = with_revert_note(once, 77, 30, "zh")
    assert later.count("> [!WARNING]") == 1 and "#77" in later and "#52" not in later
    assert later == build_guide(snapshot(), rules, lang="zh", overrides=Overrides(reverted_by=(77, 30))).markdown


def test_one_day_is_singular_and_a_body_without_a_marker_is_left_alone():
    body = "<!-- prguide:v1 {} -->\n### 📖 Reading guide\n\n**Summary.**\n"
    assert "> Reverted by #9 1 day after it was merged.\n" in with_revert_note(body, 9, 1, "en")
    assert with_revert_note("no marker here", 9, 1, "en") == "no marker here"
    assert reverted_by(None) is None and reverted_by(parse_marker(body)) is None
