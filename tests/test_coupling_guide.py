"""The guide's "usually changes with" follow-up: shown from a calibrated history, in English and
Chinese, at most two lines; without a history (or when the repository's replay chose no
thresholds) the guide is byte for byte what it was."""

from __future__ import annotations

from dataclasses import replace

import pytest

from bot.engine.build import build_guide
from bot.engine.history.coupling import History, MergedChange, Thresholds
from bot.engine.rules import load_rules
from bot.engine.snapshot import ChangedFile, PullRequestSnapshot

SHOWN = Thresholds(min_changes=5, min_share=0.6)
PATCH = "@@ -1,2 +1,2 @@\n def f():\n-    return 1\n+    return 2"


@pytest.fixture(scope="module")
def rules():
    return load_rules()


def snapshot(*paths: str, number: int = 50, merged_at: str = "2026-03-01T00:00:00Z") -> PullRequestSnapshot:
    files = tuple(ChangedFile(p, additions=1, deletions=1, patch=PATCH) for p in paths)
    return PullRequestSnapshot(repository="o/r", number=number, title="[trainer] fix: return 2", merged=True, merged_at=merged_at,
                               changed_files=len(files), additions=len(files), deletions=len(files), files=files)  # fmt: skip


def past(*path_sets: tuple[str, ...]) -> tuple[MergedChange, ...]:
    return tuple(MergedChange(i + 1, tuple(p), merged_at=f"2026-01-{i + 1:02d}T00:00:00Z") for i, p in enumerate(path_sets))


COUPLED = past(*([("verl/config.py", "verl/trainer.yaml", "verl/other.py")] * 7), ("verl/config.py",), ("verl/config.py",))


def test_a_usual_partner_not_touched_is_a_follow_up_in_both_languages(rules):
    history = History(COUPLED, SHOWN)
    en = build_guide(snapshot("verl/config.py"), rules, history=history)
    line = "`verl/config.py` usually changes with `verl/other.py` (7 of its last 9 changes); this PR did not touch it"
    assert line in en.markdown
    assert "`verl/trainer.yaml`" in en.markdown  # the second partner: at most two lines
    assert sum("usually changes with" in f for f in en.data["follow_ups"]) == 2
    claims = [c for c in en.data["claims"] if c["kind"] == "follow.usual_partner"]
    assert claims and claims[0]["evidence"][0]["path"] == "verl/other.py"
    assert "#7" in claims[0]["evidence"][0]["new"]  # the pull requests that changed both
    zh = build_guide(snapshot("verl/config.py"), rules, lang="zh", history=history)
    assert "`verl/config.py` 通常与 `verl/other.py` 一起修改（最近 9 次修改中有 7 次）；本 PR 没有改动它" in zh.markdown


def test_at_most_two_lines_and_touched_partners_are_not_named(rules):
    wide = past(*([("a/x.py", "a/p1.py", "a/p2.py", "a/p3.py")] * 6))
    guide = build_guide(snapshot("a/x.py"), rules, history=History(wide, SHOWN))
    assert sum("usually changes with" in f for f in guide.data["follow_ups"]) == 2
    touched = build_guide(snapshot("a/x.py", "a/p1.py", "a/p2.py", "a/p3.py"), rules, history=History(wide, SHOWN))
    assert not any("usually changes with" in f for f in touched.data["follow_ups"])


def test_only_what_was_merged_before_counts(rules):
    later = tuple(replace(c, merged_at=f"2026-05-{i + 1:02d}T00:00:00Z") for i, c in enumerate(COUPLED))
    guide = build_guide(snapshot("verl/config.py"), rules, history=History(later, SHOWN))
    assert "usually changes with" not in guide.markdown


def test_without_history_or_thresholds_the_guide_is_unchanged(rules):
    plain = build_guide(snapshot("verl/config.py"), rules)
    for history in (None, History(COUPLED, None), History((), SHOWN), History(past(("x.py", "y.py")), SHOWN)):
        guide = build_guide(snapshot("verl/config.py"), rules, history=history)
        assert guide.markdown == plain.markdown
        assert guide.data == plain.data
