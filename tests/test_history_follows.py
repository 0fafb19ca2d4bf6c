""""Follows #N": an earlier pull request this one follows up, from its description or from the
definitions both changed (bot.engine.history.follows, and the guide's line from bot.engine.build)."""

from __future__ import annotations

import pytest
from test_history_guide import PATCH  # the same one-function fix

from bot.engine.build import build_guide
from bot.engine.history.coupling import History, MergedChange
from bot.engine.history.follows import changed_definitions, follow_link, named_predecessors
from bot.engine.rules import load_rules
from bot.engine.snapshot import ChangedFile, PullRequestSnapshot

REPO = "acme/shapes"



@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("Follow-up to #12: the docs.", [(12, "Follow-up to #12")]),
        ("This is a follow up of #12 and #13", [(12, "follow up of #12")]),
        ("Continues #7.", [(7, "Continues #7")]),
        ("Part 2 of #7", [(7, "Part 2 of #7")]),
        ("This completes #8 by adding the tests.", [(8, "completes #8")]),
        ("Based on #9", [(9, "Based on #9")]),
        ("follow-up to https://github.com/acme/shapes/pull/21", [(21, "follow-up to https://github.com/acme/shapes/pull/21")]),
        ("follow-up to acme/shapes#22", [(22, "follow-up to acme/shapes#22")]),
        ("跟进 #31，补上测试", [(31, "跟进 #31")]),
        ("本 PR 是 #32 的后续", [(32, "#32 的后续")]),
        ("基于 PR #33 的改动", [(33, "基于 PR #33")]),
    ],
)
def test_the_description_names_what_it_follows_up(body, expected):
    assert named_predecessors(body, REPO, own=50) == expected


@pytest.mark.parametrize(
    "body",
    [
        "Follow-up to #50 (this very pull request)",
        "Follow-up to other/lib#12",
        "Follow-up to https://github.com/other/lib/pull/12",
        "Follow-up to https://github.com/acme/shapes/pull/12abc",
        "This is not a follow-up to #12.",
        "> follow-up to #12\n\nquoted from the issue",
        "```\nfollow-up to #12\n```",
        "<!-- Write 'follow-up to #12' if this follows up a PR -->",
        "Fixes #12",
        "based on the feedback in #12",
        "不是基于 #12 的改动",
        "",
    ],
)
def test_nothing_else_counts(body):
    assert named_predecessors(body, REPO, own=50) == []


def change(number: int, merged_at: str, author: str = "hal", definitions=("shapes/app.py::scale",)) -> MergedChange:
    return MergedChange(number, ("shapes/app.py",), (), merged_at, author, tuple(definitions))


MERGED = "2024-03-10T12:00:00Z"


def test_the_history_links_the_one_earlier_pull_request_by_the_author_on_the_same_definitions():
    mine = ("shapes/app.py::scale", "shapes/app.py::area")
    history = [change(40, "2024-03-05T12:00:00Z"), change(41, "2024-03-06T12:00:00Z", author="bob")]
    link = follow_link("", REPO, 50, mine, history, merged_at=MERGED, author="hal")
    assert link is not None and (link.number, link.phrase, link.shared, link.days, link.same_author) == (40, "", ("shapes/app.py::scale",), 5, True)
    # Two candidates: unsure, nothing said.
    assert follow_link("", REPO, 50, mine, [*history, change(42, "2024-03-07T12:00:00Z")], merged_at=MERGED, author="hal") is None
    # Older than the window, another author's, other definitions, the one a fix's code came from: nothing.
    assert follow_link("", REPO, 50, mine, [change(40, "2024-01-05T12:00:00Z")], merged_at=MERGED, author="hal") is None
    assert follow_link("", REPO, 50, mine, history, merged_at=MERGED, author="cid") is None
    assert follow_link("", REPO, 50, ("shapes/app.py::other",), history, merged_at=MERGED, author="hal") is None
    assert follow_link("", REPO, 50, mine, history, merged_at=MERGED, author="hal", exclude=[40]) is None
    # A sweep of many definitions is no evidence.
    sweep = tuple(f"shapes/app.py::f{i}" for i in range(60)) + mine
    assert follow_link("", REPO, 50, sweep, history, merged_at=MERGED, author="hal") is None


def test_the_description_wins_and_the_history_adds_the_shared_definitions():
    history = [change(12, "2024-03-01T12:00:00Z", author="bob"), change(40, "2024-03-05T12:00:00Z")]
    link = follow_link("Follow-up to #12", REPO, 50, ("shapes/app.py::scale",), history, merged_at=MERGED, author="hal")
    assert (link.number, link.phrase, link.shared, link.days, link.same_author) == (12, "Follow-up to #12", ("shapes/app.py::scale",), 9, False)
    unknown = follow_link("Follow-up to #3", REPO, 50, ("shapes/app.py::scale",), history, merged_at=MERGED, author="hal")
    assert (unknown.number, unknown.shared, unknown.days) == (3, (), None)


@pytest.fixture(scope="module")
def rules():
    return load_rules([], defaults=True)


def snapshot(body: str = "", author: str = "hal") -> PullRequestSnapshot:
    return PullRequestSnapshot(
        repository=REPO, number=50, title="Make scale simpler", body=body, author=author, merged=True,
        merged_at=MERGED, html_url=f"https://github.com/{REPO}/pull/50",
        files=(ChangedFile("shapes/app.py", additions=1, deletions=2, patch=PATCH),), changed_files=1, additions=1, deletions=2,
    )  # fmt: skip


def test_the_guide_says_what_the_pull_request_follows_up_in_both_languages(rules):
    guide = build_guide(snapshot("Follow-up to #12: drop the offset."), rules)
    assert "Follows up #12, as the description says (“Follow-up to #12”)." in guide.markdown
    (claim,) = [c for c in guide.data["claims"] if c["kind"] == "history.follows_named"]
    assert claim["evidence"][0]["source"] == "description"
    assert guide.data["follows"] == {"number": 12, "phrase": "Follow-up to #12", "shared": [], "days": None, "same_author": False}
    zh = build_guide(snapshot("Follow-up to #12: drop the offset."), rules, lang="zh")
    assert "本 PR 是 #12 的后续" in zh.markdown
    assert "本 PR 是 #12 的后续" in guide.languages["zh"]["markdown"]


def test_the_guide_names_the_functions_both_changed(rules):
    history = History((change(40, "2024-03-05T12:00:00Z"),), None)
    guide = build_guide(snapshot(), rules, history=history)
    assert "Follows #40 by the same author (merged 5 days earlier): both change `scale`." in guide.markdown
    (claim,) = [c for c in guide.data["claims"] if c["kind"] == "history.follows_history"]
    assert claim["evidence"][0]["path"] == "shapes/app.py" and claim["evidence"][0]["source"] == "history"
    assert guide.change.definitions == ("shapes/app.py::scale",)
    # Another author: nothing.
    assert "Follows" not in build_guide(snapshot(author="cid"), rules, history=history).markdown


def test_without_a_description_phrase_or_history_the_guide_is_unchanged(rules):
    plain = build_guide(snapshot("Drop the offset."), rules)
    assert "follows" not in plain.data and "Follows" not in plain.markdown


def test_changed_definitions_are_source_definitions_with_their_file():
    from bot.engine.analysis import analyse

    test_patch = "@@ -1,2 +1,2 @@ def test_scale():\n-    assert 1\n+    assert 2\n"
    snap = PullRequestSnapshot(
        repository=REPO, number=5, title="t", body="", author="a", merged=True, merged_at=MERGED, html_url="",
        files=(ChangedFile("shapes/app.py", additions=1, deletions=2, patch=PATCH),
               ChangedFile("tests/test_app.py", additions=1, deletions=1, patch=test_patch)),
        changed_files=2, additions=2, deletions=3,
    )  # fmt: skip
    assert changed_definitions(analyse(snap)) == ("shapes/app.py::scale",)


def test_offline_history_says_what_a_pull_request_follows_up(tmp_path, capsys):
    import json
    import shutil

    from git_helpers import Repo

    from bot.cli import main

    if shutil.which("git") is None:
        pytest.skip("needs git")
    module = "def limit(n):\n    if n > 100:\n        return 100\n    return n + 1\n\n\ndef main():\n    print(limit(3))\n"
    r = Repo(tmp_path / "calc")
    r.write("calc.py", module)
    r.commit("Initial import (#1)", author="Dev")  # another author: #2 is the one Ann's #4 follows
    r.write("calc.py", module.replace("    if n > 100:", "    n = int(n)\n    if n > 100:"))
    r.commit("Read the limit as a number (#2)", author="Ann")
    r.write("README.md", "# calc\n")
    r.commit("Add a readme (#3)", author="Cid")
    r.write("calc.py", r.path.joinpath("calc.py").read_text().replace("    return n + 1", "    assert n >= 0\n    return n + 1"))
    r.commit("Refuse negative limits (#4)", author="Ann")
    r.write("calc.py", r.path.joinpath("calc.py").read_text().replace("    print(limit(3))", "    print(limit(3))\n    print(limit(4))"))
    r.commit("Print another limit (#5)", author="Ann")
    assert main(["history", "--repo", str(r.path), "--repository", "acme/calc", "--format", "json"]) == 0
    guides = {g["number"]: g for g in json.loads(capsys.readouterr().out)}
    assert guides[4]["follows"] == {"number": 2, "phrase": "", "shared": ["calc.py::limit"], "days": 0, "same_author": True}
    assert "Follows #2 by the same author (merged the same day): both change `limit`." in guides[4]["markdown"]
    assert "follows" not in guides[2] and "follows" not in guides[5]  # #5 changes `main` only


def test_a_python_class_itself_is_no_shared_definition():
    from bot.engine.analysis import analyse

    patch = "@@ -1,3 +1,3 @@ class Engine:\n     rate = 1\n-    size = 2\n+    size = 3\n"
    snap = PullRequestSnapshot(
        repository=REPO, number=5, title="t", body="", author="a", merged=True, merged_at=MERGED, html_url="",
        files=(ChangedFile("shapes/engine.py", additions=1, deletions=1, patch=patch),
               ChangedFile("shapes/app.py", additions=1, deletions=2, patch=PATCH)),
        changed_files=2, additions=2, deletions=3,
    )  # fmt: skip
    analysis = analyse(snap)
    assert "Engine" in analysis.symbols
    assert changed_definitions(analysis) == ("shapes/app.py::scale",)


def _hidden(text: str, at: int) -> bool:
    """Whether position ``at`` of ``text`` is in a quoted line, an HTML comment or a fenced code
    block, read from the text's start for this one position (what the module's reading once
    per text must answer)."""
    from bot.engine.history.follows import _FENCE

    line = text.rfind("\n", 0, at) + 1
    if text[line:at].lstrip().startswith(">"):
        return True
    opened = text.rfind("<!--", 0, at)
    if opened >= 0 and text.find("-->", opened, at) < 0 and text.find("-->", at) >= 0:
        return True
    fence = ""
    for m in _FENCE.finditer(text, 0, line):
        if not fence:
            fence = m[1]
        elif m[1] == fence:
            fence = ""
    return bool(fence)


def _whole_text(body: str, repository: str, own: int) -> list[tuple[int, str]]:
    """The same search along the whole description: what the search of the stretches around
    references must find."""
    from bot.engine.history import follows as f

    found: dict[int, tuple[int, str]] = {}
    for pattern in (f._BEFORE, f._ZH_BEFORE, f._ZH_AFTER):
        for m in pattern.finditer(body):
            other, number = m["repo"] or m["short"], int(m["number"])
            if number == own or (other and other.lower() != repository.lower()):
                continue
            if f._NEGATION.search(body[max(0, m.start() - 40) : m.start()]) or _hidden(body, m.start()):
                continue
            if number not in found or m.start() < found[number][0]:
                found[number] = (m.start(), " ".join(m.group(0).split()))
    return [(n, p) for n, (_, p) in sorted(found.items(), key=lambda kv: kv[1][0])]


_PIECES = ["Follow-up to ", "follow up of ", "Continues ", "part 2 of ", "based on ", "跟进 ", " 的后续", "not a ", "> ",
           "```\n", "<!-- ", " -->", "#12", "#7", "other/lib#3", "acme/shapes#4", "https://github.com/acme/shapes/pull/5",
           "https://github.com/x/y/pull/6", "\n", " ", "word ", "### Heading\n", "#50", "~~~\n", "  ```\n", "-->", "<!--"]  # fmt: skip


def test_the_windowed_search_finds_what_the_whole_text_search_finds():
    from hypothesis import given, settings
    from hypothesis import strategies as st

    @settings(max_examples=400, deadline=None)
    @given(st.lists(st.sampled_from(_PIECES), max_size=25))
    def check(pieces):
        body = "".join(pieces)
        assert named_predecessors(body, REPO, own=50) == _whole_text(body, REPO, 50)

    check()
