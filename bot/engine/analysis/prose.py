"""Whether a file's change is prose only: comments, docstrings and blank lines.

Pure. A pull request that only rewords a docstring or drops commented-out lines changes
no code, so the facts that speak of code ("a fix that changes source code", "changes
code in N definitions", "N % of the changed code lines") must not count it. Python is
read for docstrings (triple-quoted text standing alone as a statement) on each side of
the diff; other languages for their line comments.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from bot.engine.analysis.patch import ADDED, CONTEXT, REMOVED, Hunk

#: Line comment markers by language (as :func:`bot.engine.analysis.kinds.language_of` names them).
_COMMENTS: dict[str, tuple[str, ...]] = {
    "python": ("#",),
    "cython": ("#",),
    "shell": ("#",),
    **{lang: ("//", "/*", "*", "*/") for lang in ("c", "cpp", "cuda", "go", "rust", "java", "javascript", "typescript")},
}
_TRIPLE = re.compile(r"\"\"\"|'''")
_DOCSTRING = re.compile(r"^[rRbBuU]{0,2}(?:\"\"\"|''')")


def docstring_lines(hunk: Hunk, side: str) -> set[int]:
    """``id()`` of the lines of ``side`` (``"+"`` or ``"-"``, with the context) inside a
    triple-quoted string standing alone as a statement. A hunk may start inside one: a
    line that *ends* one before any line opened one marks the lines above it too."""
    inside = False
    seen = False
    above: list[int] = []
    marks: set[int] = set()
    previous = ""
    for d in hunk.lines:
        if d.kind != CONTEXT and d.kind != side:
            continue
        text = d.text.strip()
        quotes = len(_TRIPLE.findall(text)) if "'''" in text or '"""' in text else 0
        if inside:
            marks.add(id(d))
            inside = quotes % 2 == 0
        elif quotes % 2 == 1 and not seen and text.endswith(('"""', "'''")) and (
            text in ('"""', "'''") and not previous.endswith(":") or not _DOCSTRING.match(text)
        ):
            marks.update(above)
            marks.add(id(d))
        elif quotes and _DOCSTRING.match(text):
            marks.add(id(d))
            inside = quotes % 2 == 1
        seen = seen or bool(quotes)
        above.append(id(d))
        previous = text or previous
    return marks


def prose_only(hunks: Sequence[Hunk], language: str | None) -> bool:
    """True when every added and removed line of ``hunks`` is blank, a comment or (Python)
    inside a docstring, and there is at least one; False for languages without comment
    markers here."""
    markers = _COMMENTS.get(language or "")
    if not markers or not hunks:
        return False
    python = language in ("python", "cython")
    changed = False
    for hunk in hunks:
        # Each side's docstring lines are read when a line of that side needs them: the
        # first code line of a side usually settles the answer.
        docs: dict[str, set[int]] = {}
        for d in hunk.lines:
            kind = d.kind
            if kind == CONTEXT:
                continue
            changed = True
            text = d.text.strip()
            if not text or text.startswith(markers):
                continue
            if not python:
                return False
            marks = docs.get(kind)
            if marks is None:
                marks = docs[kind] = docstring_lines(hunk, ADDED if kind == ADDED else REMOVED)
            if id(d) not in marks:
                return False
    return changed
