"""Exact statement changes (:class:`bot.engine.analysis.model.Edit`) as focus points and sentences.

Stub interface, filled in by the exact-change work: every function here is pure.
"""

from __future__ import annotations

from bot.engine.analysis.model import DiffAnalysis, Edit


def main_edit(analysis: DiffAnalysis) -> Edit | None:
    """The one exact change that best says what a small pull request does, or None when
    no edit clearly dominates (then the summary says less)."""
    return None


def edit_sentence(edit: Edit, lang: str) -> str:
    """One Markdown sentence stating ``edit`` with its location, in ``lang`` ("en"/"zh"),
    PR text neutralised (code spans). Raises ``KeyError`` for an unknown language."""
    return ""
