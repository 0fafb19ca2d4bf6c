"""The claim ledger: every sentence of the guide is a typed claim with evidence; no evidence, not written."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from conftest import SHARED

from bot.engine.analysis.model import DiffAnalysis, Evidence, FileAnalysis
from bot.engine.build import build_guide
from bot.engine.classify import classify
from bot.engine.focus.model import FocusPoint, FollowUp, ReviewSummary
from bot.engine.marker import MarkerState
from bot.engine.render import ledger
from bot.engine.render.guide import GuideFacts, render_guide
from bot.engine.render.summary import choose as choose_summary
from bot.engine.rules import load_rules
from bot.engine.rules.model import RuleHit
from bot.engine.snapshot import PullRequestSnapshot
from bot.sources.bundle import load_bundle

H1 = SHARED / "corpus" / "verl-2026h1"
FOLDERS = (SHARED / "corpus" / "verl", H1)
needs_corpus = pytest.mark.skipif(not H1.is_dir(), reason=f"corpus not found at {H1} (set PRGUIDE_SHARED)")


def facts(focus=(), follow=(), files=None):
    s = PullRequestSnapshot(repository="o/r", number=3, title="fix: keep fields", changed_files=1, additions=12, deletions=3)
    files = files or (FileAnalysis("pkg/loop.py", "modified", "source", "python", additions=12, deletions=3, symbols_touched=("Loop.run",)),)
    analysis = DiffAnalysis(tuple(files))
    hits = (RuleHit("scope-fix", "type.yml:1", labels=("type/fix",), change_type="fix", files=("pkg/loop.py",)),)
    c = classify(s, analysis, hits)
    return GuideFacts(snapshot=s, analysis=analysis, classification=c, focus=tuple(focus), review=ReviewSummary(),
                      follow_ups=tuple(follow), state=MarkerState(labels=c.label_names))


def build(f, lang="en"):
    summary = choose_summary(f, lang)
    return ledger.build_claims(f, lang, headline=summary.text, headline_evidence=summary.evidence, scale=summary.source != "count")


POINT = FocusPoint("pkg/loop.py", "Loop.run", "focus.largest", {"additions": 12, "deletions": 3, "names": ("Loop.run",)})


def test_every_built_claim_has_a_kind_a_known_section_and_text():
    claims = build(facts([POINT]), "en")
    kinds = [c.kind for c in claims]
    assert kinds[0] == "summary" and "verdict" in kinds and "focus.largest" in kinds and "labels.rule" in kinds
    assert all(c.section in ledger.SECTIONS and c.text for c in claims)


def test_a_claim_without_evidence_is_not_shown():
    bare = ledger.GuideClaim("focus.largest", "focus", "`x.py` — something", ())
    backed = dataclasses.replace(bare, evidence=(Evidence(path="x.py"),))
    assert ledger.shown([bare, backed]) == (backed,)


def test_a_focus_point_that_points_at_nothing_is_not_written():
    # No file, no symbol, no evidence: nothing a reader could check.
    orphan = FocusPoint(None, None, "focus.largest", {"additions": 99, "deletions": 0, "names": ()})
    f = facts([POINT, orphan])
    claims = build(f, "en")
    focus = [c for c in claims if c.section == "focus"]
    assert len(focus) == 2 and focus[1].evidence == ()
    md = render_guide(f, "en")
    assert "+99/−0" not in md and "`pkg/loop.py`" in md


def test_a_follow_up_without_anything_to_check_is_not_written():
    # A TODO follow-up with no file has nothing to point at; "nothing left to do" is not claimed either.
    f = facts([POINT], follow=[FollowUp("follow.todo", {"text": "wire the new flag", "file": "somewhere"})])
    md = render_guide(f, "en")
    assert "wire the new flag" not in md and "Nothing obvious left to do" not in md


def test_the_producers_evidence_wins_over_derived_evidence():
    own = Evidence(path="pkg/loop.py", start=40, end=42, old="x.to(dtype)", new="x", source="diff")
    point = POINT._replace(evidence=(own,))
    (claim,) = [c for c in build(facts([point]), "en") if c.section == "focus"]
    assert claim.evidence == (own,)


def test_derived_evidence_names_the_file_and_what_the_statement_names():
    (claim,) = [c for c in build(facts([POINT]), "en") if c.section == "focus"]
    assert claim.evidence == (Evidence(path="pkg/loop.py", new="Loop.run", source="diff"),)


def test_verdict_rests_on_githubs_counts_and_every_score_line_on_something():
    claims = build(facts([POINT]), "en")
    verdicts = [c for c in claims if c.section == "verdict"]
    assert verdicts and all(c.evidence[0].source == "metadata" and "+12 -3" in c.evidence[0].new for c in verdicts)
    scores = [c for c in claims if c.section == "score"]
    assert scores and all(c.evidence for c in scores)


def test_the_markdown_is_written_from_the_shown_claims():
    f = facts([POINT])
    md = render_guide(f, "zh")
    for c in ledger.shown(build(f, "zh")):
        assert c.text in md, c.kind


def test_json_claims_have_kind_section_text_and_evidence():
    from bot.sources.bundle import load_bundle  # noqa: F401  (the shape build_guide returns)

    snapshot = facts([POINT]).snapshot
    guide = build_guide(snapshot, load_rules([]), lang="en")
    claims = guide.data["claims"]
    assert claims and claims[0]["kind"] == "summary"
    for c in claims:
        assert set(c) == {"kind", "section", "text", "evidence"} and c["evidence"]
        for e in c["evidence"]:
            assert set(e) == {"path", "start", "end", "old", "new", "source"}
            assert e["source"] in ("diff", "description", "review", "metadata")
    json.dumps(claims)  # plain JSON
    assert not any("**" in c["text"] for c in claims)


@needs_corpus
def test_on_the_corpus_every_claim_has_evidence_and_every_focus_point_is_a_claim():
    from bot.sources.bundle import load_bundle

    rules = load_rules([])
    paths = sorted(p for folder in FOLDERS for p in Path(folder).glob("*.json"))[::5]
    assert paths
    for path in paths:
        guide = build_guide(load_bundle(path), rules, lang="en")
        if guide.skipped:
            continue
        claims = guide.data["claims"]
        assert all(c["evidence"] for c in claims), path.name
        focus = [c for c in claims if c["section"] == "focus"]
        assert len(focus) == len(guide.data["focus"]), path.name
        assert sum(c["kind"] == "summary" for c in claims) == 1


@needs_corpus
def test_the_rce_fix_claims_point_at_the_parser_file():
    """verl-2026h1/6542: ``eval`` replaced by ``ast.literal_eval``; the summary and a focus point state it,
    resting on the changed file."""
    from bot.sources.bundle import load_bundle

    guide = build_guide(load_bundle(H1 / "6542.json"), load_rules([]), lang="en")
    summary = [c for c in guide.data["claims"] if c["kind"] == "summary"]
    assert "ast.literal_eval" in summary[0]["text"]
    assert any(e["path"] == "verl/experimental/agent_loop/tool_parser.py" for e in summary[0]["evidence"])
    focus = [c for c in guide.data["claims"] if c["section"] == "focus"]
    assert any(e["path"] == "verl/experimental/agent_loop/tool_parser.py" for c in focus for e in c["evidence"])


def test_with_nothing_left_to_do_the_follow_ups_say_nothing():
    claims = build(facts([POINT]), "en")
    assert not [c for c in claims if c.section == "follow_ups"]
    assert "Nothing obvious left to do" not in render_guide(facts([POINT]), "en")


def test_the_default_audience_names_only_folders_with_a_real_share_and_states_it():
    files = (
        FileAnalysis("pkg/core/loop.py", "modified", "source", "python", additions=60, deletions=20),
        FileAnalysis("pkg/io/read.py", "modified", "source", "python", additions=15, deletions=5),
        FileAnalysis("examples/run.sh", "modified", "example", "shell", additions=40, deletions=0),
    )
    (claim,) = [c for c in build(facts([POINT], files=files), "en") if c.section == "audience"]
    # pkg/io/ holds 20 of 140 changed lines (< 25 %); examples are not a folder a reader owns,
    # but they are part of the change the share is taken of.
    assert claim.text == "For anyone working on `pkg/core/` (57 % of the changed code lines)."


def test_no_audience_when_the_named_folder_holds_a_sliver_of_the_change():
    """A requirements line beside 58 lines of CI workflows is not "100 % of the changed code"."""
    files = (
        FileAnalysis("requirements-npu.txt", "modified", "build", None, additions=0, deletions=1),
        FileAnalysis(".github/workflows/npu.yml", "modified", "ci", "yaml", additions=50, deletions=8),
    )
    assert not [c for c in build(facts([POINT], files=files), "en") if c.section == "audience"]


def test_a_removed_files_installs_are_not_listed_as_dependency_changes():
    from bot.engine.analysis.model import DependencyChange

    gone = FileAnalysis("docker/Dockerfile.old", "removed", "build", None, deletions=40,
                        dependency_changes=(DependencyChange("numpy", "removed", old_spec="==1.26"),))
    kept = FileAnalysis("requirements.txt", "modified", "build", None, additions=1, deletions=1,
                        dependency_changes=(DependencyChange("torch", "changed", old_spec="==2.5", new_spec="==2.6"),))
    deps = [c for c in build(facts([POINT], files=(gone, kept)), "en") if c.section == "deps"]
    assert [c.evidence[0].path for c in deps] == ["requirements.txt"]


@needs_corpus
def test_why_n_and_the_comment_number_the_same_focus_points():
    rules = load_rules([], defaults=True)
    for path in sorted(H1.glob("*.json"))[:40]:
        g = build_guide(load_bundle(path), rules, lang="en")
        shown = [c for c in g.data["claims"] if c["section"] == "focus"]
        assert len(shown) == len(g.focus), path.name
        assert all(p.evidence for p in g.focus), path.name


def test_code_spans_read_as_their_text_as_the_callback_did():
    import re

    from hypothesis import given, settings, strategies as st

    from bot.engine.render.ledger import _plain

    span = re.compile(r"(`+) ?(.*?) ?\1")

    @settings(max_examples=300, deadline=None)
    @given(st.lists(st.sampled_from(list("a `\\\n&;") + ["&amp;", "``"]), max_size=20).map("".join))
    def check(text):
        import html

        assert _plain(text) == html.unescape(span.sub(lambda m: m.group(2), text))

    check()


def test_the_audience_share_counts_every_changed_line_inside_the_named_folder():
    # fresh-l #3955: "recipe/fully_async_policy/ (50 %)" where every changed code line was
    # in that folder, half of them in its shell/ example scripts.
    files = (
        FileAnalysis("recipe/fa/trainer.py", "modified", "source", "python", additions=190, deletions=0),
        FileAnalysis("recipe/fa/shell/run.sh", "added", "example", "shell", additions=182, deletions=0),
        FileAnalysis("examples/other.sh", "modified", "example", "shell", additions=28, deletions=0),
    )
    (claim,) = [c for c in build(facts([POINT], files=files), "en") if c.section == "audience"]
    assert claim.text == "For anyone working on `recipe/fa/` (93 % of the changed code lines)."


@pytest.mark.parametrize(("lang", "said"), [("en", "; among them, in `S.resume`, line 853: now also calls `self.sync()`"),
                                            ("zh", "；其中：`S.resume` 中第 853 行：现在还会调用 `self.sync()`")])
def test_a_largest_change_point_says_its_inner_exact_changes_in_the_guides_language(lang, said):
    edit = ("focus.edit.call_added", {"line": "853", "old": "", "new": "self.sync()", "name": "S.resume"})
    point = FocusPoint("w.py", None, "focus.largest", {"additions": 30, "deletions": 19, "edits": (edit,)}, weight=1)
    (claim,) = [c for c in build(facts([point]), lang) if c.section == "focus"]
    assert claim.text.endswith(said)
