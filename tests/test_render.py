"""The guide's Markdown: sections, both languages, safety and the size limit."""

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from bot.engine.analysis.model import Definition, DiffAnalysis, FileAnalysis
from bot.engine.classify import classify
from bot.engine.focus.points import focus_points
from bot.engine.focus.review import follow_ups, review_summary
from bot.engine.marker import MarkerState, parse_marker
from bot.engine.render.guide import (
    MAX_COMMENT_CHARS,
    GuideFacts,
    render_guide,
    summary_line,
)
from bot.engine.render.messages import MESSAGES
from bot.engine.rules.model import FocusNote, RuleHit
from bot.engine.snapshot import ChangedFile, PullRequestSnapshot, ReviewComment


def facts_for(snapshot, files, hits=()):
    analysis = DiffAnalysis(tuple(files))
    c = classify(snapshot, analysis, hits)
    review = review_summary(snapshot)
    return GuideFacts(
        snapshot=snapshot,
        analysis=analysis,
        classification=c,
        focus=focus_points(analysis, c.hits, review),
        review=review,
        follow_ups=follow_ups(snapshot, analysis, review, c.change_type),
        state=MarkerState(rules=tuple(h.rule_id for h in hits), labels=c.label_names),
    )


def basic(touched=("AgentLoopOutput.as_dict",)):
    s = PullRequestSnapshot(repository="o/r", number=7, title="[rollout] fix: keep extra fields", changed_files=2, additions=50, deletions=2)
    files = [
        FileAnalysis("pkg/agent.py", "modified", "source", "python", additions=5, deletions=2, symbols_touched=touched),
        FileAnalysis("tests/test_agent.py", "modified", "test", "python", additions=45, tests_added=("test_keeps_fields",)),
    ]
    hits = (RuleHit("scope-fix", "config/rules/type.yml:3", labels=("type/fix",), change_type="fix", areas=("rollout",), files=("pkg/agent.py",)),)
    return facts_for(s, files, hits)


def test_english_guide_has_every_section_and_the_marker():
    md = render_guide(basic(), "en")
    assert md.startswith("<!-- prguide:v1 ")
    assert parse_marker(md).labels == ("type/fix",)
    for heading in ("What to focus on", "What changed", "Tests", "Follow-ups", "Labels", "Why this score"):
        assert heading in md
    # GitHub shows the title right above the comment: the guide does not restate it.
    assert "keep extra fields" not in md
    # No template ("Fix in AREA: changes X"): with no exact change and no description, a plain count.
    # The change is inside one method: the summary names it, the scale suffix counts the files.
    assert "**Changes `AgentLoopOutput.as_dict` in `pkg/agent.py`.**" in md
    assert "`AgentLoopOutput.as_dict`" in md
    assert "`type/fix` ← rule `scope-fix`" in md
    assert re.search(r"^1\. `pkg/agent.py`|^1\. `tests/test_agent.py`", md, re.M)


def test_chinese_guide_is_fully_localised():
    md = render_guide(basic(), "zh")
    english = {v["en"] for k, v in MESSAGES.items() if k.startswith("h.") and "{" not in v["en"]}
    assert not any(f"#### {h}" in md for h in english)
    for heading in ("阅读重点", "改动概览", "测试", "后续跟进", "标签", "评分依据"):
        assert heading in md
    assert "修改 `pkg/agent.py` 中的 `AgentLoopOutput.as_dict`。" in md


def test_pr_text_is_neutralised():
    s = PullRequestSnapshot(repository="o/r", number=8, title="fix: <script>alert(1)</script> thanks @alice", changed_files=1,
                            review_comments=(ReviewComment(1, "bob", "<img src=x onerror=y> @carol", "a.py", 3),
                                             ReviewComment(2, "dan", "ok", "a.py", 3, in_reply_to_id=1)))
    md = render_guide(facts_for(s, [FileAnalysis("a.py", "modified", "source", additions=1)]), "en")
    body = md.split("\n", 1)[1]
    assert "<script>" not in body and "<img" not in body
    assert "@alice" not in body and "@carol" not in body
    assert "**bob**" in body  # reviewers named, not pinged


def test_removed_code_paths_and_review_threads_are_called_out():
    s = PullRequestSnapshot(repository="o/r", number=9, title="refactor: drop old path", changed_files=1,
                            review_comments=(ReviewComment(1, "bob", "why remove?", "a.py", 3),
                                             ReviewComment(2, "eve", "agree", "a.py", 3, in_reply_to_id=1)))
    f = FileAnalysis("a.py", "modified", "source", deletions=30, definitions_removed=(Definition("legacy_step", "function"),))
    md = render_guide(facts_for(s, [f]), "en")
    assert "Removed code paths: `legacy_step`" in md
    assert "Review highlights" in md and "2 comments" in md and "“why remove?”" in md


def test_rule_focus_notes_come_first():
    hit = RuleHit("cfg", "f:1", focus=(FocusNote({"en": "check the defaults", "zh": "检查默认值"}, file="cfg.yaml"),))
    facts = facts_for(PullRequestSnapshot(repository="o/r", number=1, title="x"), [FileAnalysis("a.py", "modified", "source", additions=3)], (hit,))
    assert "1. `cfg.yaml` — check the defaults" in render_guide(facts, "en")
    assert "1. `cfg.yaml` — 检查默认值" in render_guide(facts, "zh")


def test_huge_pr_stays_under_the_limit_and_keeps_tables_whole():
    files = [FileAnalysis(f"pkg/very/long/directory/name/module_{i:05d}.py", "modified", "source", additions=3,
                          symbols_touched=tuple(f"Class{i}.method_{j}" for j in range(4))) for i in range(3000)]
    s = PullRequestSnapshot(repository="o/r", number=1, title="big", changed_files=3500,
                            files=tuple(ChangedFile(f.path) for f in files))
    md = render_guide(facts_for(s, files), "en")
    assert len(md) <= MAX_COMMENT_CHARS
    assert md.count("<details>") == md.count("</details>")
    assert "GitHub listed only 3,000 of 3,500 changed files" in md


def test_summary_line_is_a_plain_count_when_nothing_else_qualifies():
    f = basic(("AgentLoopOutput.as_dict", "AgentLoopOutput.from_dict"))  # two methods: no one function to name
    assert summary_line(f, "en") == "Changes 1 source file, 1 test file (+50/−2)."
    assert summary_line(f, "zh") == "改动了 1 个源代码文件、1 个测试文件（+50/−2）。"
    assert summary_line(f, "en", plain=True) == "Changes 1 source file, 1 test file (+50/−2)."


def test_summary_never_restates_the_title():
    s = PullRequestSnapshot(repository="o/r", number=3, title="nccl broadcast bucket size", changed_files=1, additions=3)
    facts = facts_for(s, [FileAnalysis("pkg/a.py", "modified", "source", additions=3)])
    assert summary_line(facts, "en") == "Changes 1 source file under `pkg/` (+3/−0)."


def test_a_clamped_score_says_so():
    hit = RuleHit("big", "f:1", importance=4, breaking=True, change_type="revert")
    files = [FileAnalysis(f"m{i}.py", "modified", "source", additions=400, config_keys_added=("A.b",), added_lines=("loss.backward()",),
                          definitions_added=(Definition(f"api{i}", "function"),), tests_added=("test_x",)) for i in range(3)]
    threads = tuple(ReviewComment(i, "bob", "?", "m0.py", i) for i in range(3))
    facts = facts_for(PullRequestSnapshot(repository="o/r", number=5, title="feat: x", review_comments=threads), files, (hit,))
    # 1 + reach 3 + risk 4 + tests + revert + review = 11, shown as 10.
    assert facts.classification.importance == 10
    assert "the score is kept within 1–10" in render_guide(facts, "en")
    assert "评分限定在 1–10 之间" in render_guide(facts, "zh")


@settings(max_examples=60, deadline=None)
@given(title=st.text(max_size=300), body=st.text(max_size=300), names=st.lists(st.text(max_size=80), max_size=5))
def test_renderer_never_crashes_and_respects_the_limit(title, body, names):
    s = PullRequestSnapshot(repository="o/r", number=1, title=title, body=body,
                            review_comments=tuple(ReviewComment(i, n or "x", body, n, 1) for i, n in enumerate(names)))
    files = [FileAnalysis(n or "f", "modified", "source", symbols_touched=tuple(names), todos_added=(body,)) for n in names]
    for lang in ("en", "zh"):
        md = render_guide(facts_for(s, files), lang)
        assert len(md) <= MAX_COMMENT_CHARS
        assert md.startswith("<!-- prguide:v1 ")


# --- the template compiled ahead of time ---------------------------------------------------------


def test_the_compiled_template_is_up_to_date():
    from bot.engine.render import precompile

    assert precompile.COMPILED_PATH.read_text(encoding="utf-8") == precompile.generated(), (
        "run python -m bot.engine.render.precompile"
    )


def test_a_stale_compiled_template_is_not_used(monkeypatch):
    from bot.engine.render import guide, guide_compiled, precompile

    fresh = precompile.load(precompile.environment())
    assert fresh.root_render_func is guide_compiled.root  # the compiled module serves the guide
    monkeypatch.setattr(guide_compiled, "SOURCE_SHA256", "0" * 64)
    compiled_now = precompile.load(precompile.environment())
    assert compiled_now.root_render_func is not guide_compiled.root  # Jinja compiled the template instead
    for lang in ("en", "zh"):
        facts = basic()
        context = guide._context(facts, guide.guide_claims(facts, lang), lang, guide._SHRINK[0])
        assert compiled_now.render(**context) == fresh.render(**context)
