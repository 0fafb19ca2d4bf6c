"""``/prguide why N``: the evidence of focus point N (file, line range, old and new text),
quoted safely (bot.commands.explain.render_focus_evidence; issue 20 item 1)."""

from __future__ import annotations

import pytest
from conftest import SHARED

from bot.commands.explain import MAX_EVIDENCE, render_focus_evidence, render_why
from bot.commands.parse import parse_commands
from bot.engine.analysis.model import Evidence
from bot.engine.classify import Classification, LabelDecision
from bot.engine.focus.model import FocusPoint

CORPUS = SHARED / "corpus"

POINTS = (
    FocusPoint("verl/tools/parser.py", "Parser.parse", "focus.largest", {},
               evidence=(Evidence("verl/tools/parser.py", 41, 42, "value = eval(text)", "value = ast.literal_eval(text)"),)),
    FocusPoint("verl/trainer/config.yaml", None, "focus.largest", {}),
    FocusPoint("verl/a.py", None, "focus.largest", {},
               evidence=(Evidence("verl/a.py", 7, 7, "", "log('@alice see [x](https://evil.example) <img src=x>')"),
                         Evidence(new="Thanks @bob, this <b>fixes</b> [it](https://evil.example).", source="description"),
                         Evidence("verl/a.py", 0, 0, "", "x = '```'\ny = 1"))),
)


def test_why_n_shows_file_line_range_and_old_and_new_text():
    text = render_focus_evidence(POINTS, 1, "en")
    assert text.startswith("**Focus point 1: what it rests on**")
    assert "`verl/tools/parser.py`, lines 41–42:" in text
    assert "```diff\n- value = eval(text)\n+ value = ast.literal_eval(text)\n```" in text
    zh = render_focus_evidence(POINTS, 1, "zh")
    assert "`verl/tools/parser.py` 第 41–42 行：" in zh and "+ value = ast.literal_eval(text)" in zh


def test_a_point_without_evidence_names_its_file():
    text = render_focus_evidence(POINTS, 2, "en")
    assert "No changed lines are recorded for this point; it is about `verl/trainer/config.yaml`." in text
    assert "```" not in text


def test_quoted_pr_text_cannot_ping_link_or_inject_html():
    text = render_focus_evidence(POINTS, 3, "en")
    # Diff text sits inside a fenced block (GitHub renders nothing there) ...
    assert "```diff\n+ log('@alice see [x](https://evil.example) <img src=x>')\n```" in text
    # ... fenced longer than a backtick run in the quoted code, so it cannot close the block.
    assert "````diff\n+ x = '```'\n+ y = 1\n````" in text
    # Description words are quoted as prose: no mention, no link, no HTML.
    quote = next(line for line in text.splitlines() if line.startswith("> "))
    assert "@bob" not in quote and "@\u200bbob" in quote
    assert "<b>" not in quote and "&lt;b&gt;" in quote
    assert "\\[it\\](" in quote
    assert "The description says:" in text and "`verl/a.py`:" in text


def test_missing_point_and_evidence_cap():
    assert render_focus_evidence(POINTS, 9, "en") == "This guide has no focus point 9 (it has 3)."
    assert render_focus_evidence((), 1, "zh") == "本指南没有第 1 个阅读重点（共 0 个）。"
    many = (FocusPoint("a.py", None, "focus.largest", {}, evidence=tuple(Evidence("a.py", i, i, "", f"x{i}") for i in range(1, 10))),)
    text = render_focus_evidence(many, 1, "en")
    assert text.count("```diff") == MAX_EVIDENCE and f"… and {9 - MAX_EVIDENCE} more." in text


def test_render_why_routes_a_number_to_the_focus_point_unless_a_label_has_that_name():
    base = dict(areas=(), change_type="fix", change_type_source="inferred", breaking=False, importance=1, factors=(),
                reading_level="skim", reading_minutes=1, audience={}, hits=())
    c = Classification(labels=(), **base)
    assert render_why(c, "en", "1", focus=POINTS).startswith("**Focus point 1")
    labelled = Classification(labels=(LabelDecision("1", "human"),), **base)
    assert not render_why(labelled, "en", "1", focus=POINTS).startswith("**Focus point")
    (command,) = parse_commands("/prguide why 2")
    assert command.ok and command.args == ("2",)


@pytest.mark.skipif(not CORPUS.is_dir(), reason=f"the corpus ({CORPUS}) is not on this machine (set PRGUIDE_SHARED)")
def test_corpus_guide_keeps_its_focus_points_for_why_n():
    from bot.engine.build import build_guide
    from bot.engine.rules import load_rules
    from bot.sources.bundle import load_bundle

    path = CORPUS / "verl-2026h1" / "6542.json"
    if not path.is_file():
        pytest.skip(f"{path} is not in the corpus")
    guide = build_guide(load_bundle(str(path)), load_rules([], defaults=True))
    assert guide.focus, "the guide has focus points"
    text = render_why(guide.classification, "en", "1", focus=guide.focus)
    first = guide.focus[0]
    assert text.startswith("**Focus point 1") and (first.file is None or f"`{first.file}`" in text)


def test_a_unicode_digit_is_a_label_name_not_a_focus_point_number():
    # "²".isdigit() is true but int("²") raised: only ASCII digits number a focus point.
    base = dict(areas=(), change_type="fix", change_type_source="inferred", breaking=False, importance=1, factors=(),
                reading_level="skim", reading_minutes=1, audience={}, hits=())
    c = Classification(labels=(), **base)
    for label in ("²", "①", "１"):
        text = render_why(c, "en", label, focus=POINTS)
        assert not text.startswith("**Focus point")
