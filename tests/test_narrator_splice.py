"""The narrated summary replaces the engine's summary sentence, whatever bold text the
author's own summary brings into it (issue 21, class 16)."""

from __future__ import annotations

from bot.engine.marker import MarkerState, render_marker
from bot.engine.render.messages import t
from bot.narrator.render import Narration, narrate_markdown


def engine_markdown(summary: str, extra: str = "Changes 2 files (+10/−2).") -> str:
    # The engine's layout (bot/engine/render/templates/guide.md.j2): the summary is the
    # author's purpose sentence, neutralised, which keeps Markdown emphasis.
    return (
        f"{render_marker(MarkerState(engine='test-1'))}\n### 📖 guide\n\nTitle: Make **uploads** retry\n\n"
        f"**{summary}** {extra}\n\n**Breaking change.**\n\n#### {t('h.focus', 'en')}\n1. `a.py`: the loop\n"
    )


NARRATION = Narration("m", "Uploads now survive a transient outage.", ("It keeps one retry policy.",), {}, {}, 2, 0)


def test_bold_in_the_authors_summary_does_not_move_the_splice():
    for summary in ("Adds a **fast** retry path.", "**Important**: uploads retry.", "Uploads retry **twice as often**"):
        body = narrate_markdown(engine_markdown(summary), NARRATION, "en")
        lines = body.splitlines()
        line = next(i for i, text in enumerate(lines) if text.startswith("**Uploads now survive"))
        assert lines[line] == "**Uploads now survive a transient outage.** Changes 2 files (+10/−2).", summary
        assert lines[line + 2] == "Why it matters: It keeps one retry policy." or lines[line + 2].endswith("It keeps one retry policy.")
        assert lines[line + 4] == "**Breaking change.**"
        assert summary not in body and "fast**" not in body and "Title: Make **uploads** retry" in body


def test_a_summary_without_the_scale_line():
    body = narrate_markdown(engine_markdown("Adds **fast** retries.", extra=""), NARRATION, "en")
    assert "\n**Uploads now survive a transient outage.** \n" in body or "\n**Uploads now survive a transient outage.**\n" in body
    assert "fast" not in body
