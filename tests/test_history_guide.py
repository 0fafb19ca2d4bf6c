"""The guide's "fixes code from #N" line, written from history facts (bot.engine.build with ``history=``)."""

from __future__ import annotations

import json

import pytest

from bot.engine.build import build_guide
from bot.engine.history.model import HistoryFacts, LineOrigin, PullOrigin
from bot.engine.rules import load_rules
from bot.engine.snapshot import ChangedFile, PullRequestSnapshot

DAY = 86400
MERGED_TS = 1710072000  # 2024-03-10T12:00:00Z

PATCH = (
    "@@ -10,4 +10,4 @@ def scale(x, k):\n"
    "     # keep in step with area()\n"
    "-    offset = compute_offset(k)\n"
    "-    return x * k + offset\n"
    "+    return x * k\n"
    "     \n"
)


@pytest.fixture(scope="module")
def rules():
    return load_rules([], defaults=True)


def snapshot(body: str = "", title: str = "fix: scale ignores the offset") -> PullRequestSnapshot:
    return PullRequestSnapshot(
        repository="acme/shapes", number=50, title=title, body=body, author="hal", merged=True,
        merged_at="2024-03-10T12:00:00Z", html_url="https://github.com/acme/shapes/pull/50",
        files=(ChangedFile("shapes/app.py", additions=1, deletions=2, patch=PATCH),), changed_files=1, additions=1, deletions=2,
    )  # fmt: skip


def facts(pull_11: int = 12, pull_12: int = 12) -> HistoryFacts:
    pulls = {
        12: PullOrigin(12, "c" * 40, MERGED_TS - 9 * DAY, "bob", "Add an offset to scale"),
        30: PullOrigin(30, "d" * 40, MERGED_TS - 40 * DAY, "cid", "Older change"),
    }
    origins = (
        LineOrigin("shapes/app.py", 11, pulls[pull_11].commit, pull_11),
        LineOrigin("shapes/app.py", 12, pulls[pull_12].commit, pull_12),
    )
    return HistoryFacts("ok", origins, {n: pulls[n] for n in {pull_11, pull_12}})


def test_without_history_facts_the_guide_is_exactly_what_it_was(rules):
    plain = build_guide(snapshot(), rules)
    assert build_guide(snapshot(), rules, history=None) == plain
    assert "history" not in plain.data
    assert "were written in" not in plain.markdown


def test_the_fix_names_the_pull_request_that_wrote_its_lines_with_evidence(rules):
    guide = build_guide(snapshot(), rules, blame=facts())
    assert (
        "The code lines this fix deletes or rewrites in `shapes/app.py` (imports, comments, moved and re-wrapped lines aside) "
        "were written in #12 (merged 9 days earlier, by **bob**)."
        in guide.markdown
    )
    # Near the top: before the focus points and the collapsed details.
    assert guide.markdown.index("were written in #12") < guide.markdown.index("<details>")
    (claim,) = [c for c in guide.data["claims"] if c["kind"] == "history.fixes_code_from"]
    assert claim["section"] == "history"
    assert claim["evidence"][0] == {
        "path": "shapes/app.py", "start": 11, "end": 11, "old": "offset = compute_offset(k)", "new": "#12 cccccccccccc",
        "source": "history",
    }  # fmt: skip
    assert guide.data["history"]["fixes_code_from"] == 12 and guide.data["history"]["status"] == "ok"
    json.dumps(guide.data)  # stays JSON


def test_chinese_guide(rules):
    guide = build_guide(snapshot(), rules, lang="zh", blame=facts())
    assert "#12" in guide.markdown and "9 天前" in guide.markdown and "`shapes/app.py`" in guide.markdown


def test_nothing_is_said_when_no_pull_request_clearly_wrote_the_lines(rules):
    guide = build_guide(snapshot(), rules, blame=facts(12, 30))
    assert "were written in" not in guide.markdown
    assert guide.data["history"]["fixes_code_from"] is None
    assert [c["number"] for c in guide.data["history"]["candidates"]] == [12, 30]


def test_nothing_is_said_when_the_history_is_not_available(rules):
    guide = build_guide(snapshot("Fixes a regression from #12."), rules, blame=HistoryFacts("shallow", detail="shallow clone"))
    assert "#12" not in guide.markdown.split("<details>")[0].replace("Fixes a regression from #12", "")
    assert guide.data["history"]["status"] == "shallow"
    assert not [c for c in guide.data["claims"] if c["section"] == "history"]


def test_the_description_s_culprit_is_checked_against_the_blame(rules):
    agrees = build_guide(snapshot("This fixes a regression from #12."), rules, blame=facts())
    assert "The description blames #12, and the blame agrees: #12 wrote 2 of the 2 lines this fix changes." in agrees.markdown
    doubts = build_guide(snapshot("This fixes a bug introduced in #7."), rules, blame=facts())
    assert "The description blames #7, but none of the 2 lines this fix changes were written there" in doubts.markdown
    assert [c["kind"] for c in doubts.data["claims"] if c["section"] == "history"] == [
        "history.fixes_code_from", "history.named_unconfirmed",
    ]  # fmt: skip


def test_a_change_that_is_not_a_fix_is_worded_as_a_change(rules):
    guide = build_guide(snapshot(title="refactor: simplify scale"), rules, blame=facts())
    assert "The code lines this pull request deletes or rewrites in `shapes/app.py`" in guide.markdown


def test_a_revert_of_the_pull_request_that_wrote_the_lines_does_not_say_it_twice(rules):
    guide = build_guide(snapshot("Reverts acme/shapes#12", title="Revert \"Add an offset to scale\""), rules, blame=facts())
    assert "Reverts #12." in guide.markdown
    assert "were written in #12" not in guide.markdown
    assert guide.data["history"]["fixes_code_from"] == 12


PATCH3 = (
    "@@ -10,5 +10,4 @@ def scale(x, k):\n"
    "     # keep in step with area()\n"
    "-    offset = compute_offset(k)\n"
    "-    shift = compute_shift(k)\n"
    "-    return x * k + offset + shift\n"
    "+    return x * k\n"
    "     \n"
)


def test_a_share_of_the_lines_is_said_as_such_and_a_git_name_is_not_a_login(rules):
    pulls = {12: PullOrigin(12, "c" * 40, MERGED_TS - 9 * DAY, "Hollow Man", "Add an offset"),
             30: PullOrigin(30, "d" * 40, MERGED_TS - 40 * DAY, "cid", "Older change")}
    origins = tuple(LineOrigin("shapes/app.py", line, pulls[n].commit, n) for line, n in ((11, 12), (12, 12), (13, 30)))
    snap = snapshot()
    snap = PullRequestSnapshot(**{**{f: getattr(snap, f) for f in snap.__dataclass_fields__},
                                  "files": (ChangedFile("shapes/app.py", additions=1, deletions=3, patch=PATCH3),)})
    guide = build_guide(snap, rules, blame=HistoryFacts("ok", origins, pulls))
    assert ("2 of the 3 code lines this fix deletes or rewrites (imports, comments, moved and re-wrapped lines aside; "
            "those 2 all in `shapes/app.py`) were written in #12") in guide.markdown, guide.markdown
    assert "by Hollow Man)" in guide.markdown and "ghost" not in guide.markdown
    zh = build_guide(snap, rules, lang="zh", blame=HistoryFacts("ok", origins, pulls))
    assert "3 行代码" in zh.markdown and "中有 2 行" in zh.markdown


def test_a_file_is_named_only_when_it_holds_most_of_the_lines(rules):
    """Two lines from #12, one in each file: neither file holds "most" of them."""
    pulls = {12: PullOrigin(12, "c" * 40, MERGED_TS - 9 * DAY, "bob", "Add an offset"),
             30: PullOrigin(30, "d" * 40, MERGED_TS - 40 * DAY, "cid", "Older change")}
    other = "@@ -3,3 +3,3 @@ def area(x, k):\n     # keep in step with scale()\n-    return scale(x, k) * 2\n+    return scale(x, k)\n     \n"
    origins = (LineOrigin("shapes/app.py", 11, pulls[12].commit, 12), LineOrigin("shapes/area.py", 4, pulls[12].commit, 12),
               LineOrigin("shapes/app.py", 12, pulls[30].commit, 30))
    snap = snapshot()
    snap = PullRequestSnapshot(**{**{f: getattr(snap, f) for f in snap.__dataclass_fields__},
                                  "files": (ChangedFile("shapes/app.py", additions=1, deletions=2, patch=PATCH),
                                            ChangedFile("shapes/area.py", additions=1, deletions=1, patch=other))})
    guide = build_guide(snap, rules, blame=HistoryFacts("ok", origins, pulls))
    assert "2 of the 3 code lines this fix deletes or rewrites (imports, comments, moved and re-wrapped lines aside) were written in #12" in guide.markdown, guide.markdown
    assert "most of" not in guide.markdown and "most in" not in guide.markdown



ADDS = "@@ -11,3 +11,4 @@ def scale(x, k):\n     offset = compute_offset(k)\n+    check(offset)\n     return x * k + offset\n     \n"


def test_a_fix_that_only_adds_lines_is_placed_among_the_lines_around_them(rules):
    adds = PullRequestSnapshot(
        repository="acme/shapes", number=50, title="fix: scale checks the offset", body="Fixes a regression from #12.",
        merged=True, merged_at="2024-03-10T12:00:00Z",
        files=(ChangedFile("shapes/app.py", additions=1, patch=ADDS),), changed_files=1, additions=1,
    )  # fmt: skip
    for lang, sentence in (
        ("en", "The lines around the code this fix adds to `shapes/app.py` were written in #12 (merged 9 days earlier, by **bob**)."),
        ("zh", "这次修复在 `shapes/app.py` 中新增的代码周围的代码行写于 #12"),
    ):
        guide = build_guide(adds, rules, lang=lang, blame=facts())
        assert sentence in guide.markdown
        assert [c["kind"] for c in guide.data["claims"] if c["section"] == "history"] == ["history.fix_adds_among"]  # no verdict on #12
        assert guide.data["history"]["adds_only"] is True and guide.data["history"]["fixes_code_from"] == 12
    # One line around them is not enough.
    one = facts(12, 30)
    assert "were written in" not in build_guide(adds, rules, blame=one).markdown



def test_lines_the_source_traced_are_not_traced_again(rules, monkeypatch):
    # A source that kept what it traced (HistoryFacts.traced, as bot.sources.githistory
    # does) spares the engine tracing the same files again; the guide is the same.
    import dataclasses

    import bot.engine.build
    from bot.engine.history.lines import trace_plan

    plain = build_guide(snapshot(), rules, blame=facts())
    kept = dataclasses.replace(facts(), traced=trace_plan(snapshot().files))
    monkeypatch.setattr(bot.engine.build, "trace_plan", lambda files: pytest.fail("traced again"))
    assert build_guide(snapshot(), rules, blame=kept).markdown == plain.markdown


def test_one_line_of_a_share_is_that_line_never_those_1():
    """"1 of the 2 code lines … those 1 all in `…`" (a reader of the history guides)."""
    from bot.engine.history.model import Candidate, HistoryLink
    from bot.engine.render.ledger import _history

    top = Candidate(12, 1, 2, ("shapes/app.py",), 1)
    origin = PullOrigin(12, "c" * 40, MERGED_TS - 9 * DAY, "Hollow Man", "Add an offset")
    link = HistoryLink(top, origin, (("shapes/app.py", 11, "offset = compute_offset(k)", "c" * 40),), (top,), (), 9, True, 2)
    en = " ".join(c.text for c in _history(link, "en"))
    zh = " ".join(c.text for c in _history(link, "zh"))
    assert "1 of the 2 code lines" in en and "those 1" not in en and "that line in `shapes/app.py`" in en
    assert "这一行在 `shapes/app.py`" in zh
