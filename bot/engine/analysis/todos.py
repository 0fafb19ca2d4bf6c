"""TODO, FIXME, XXX and HACK notes added in comments."""

from __future__ import annotations

import re
from collections.abc import Sequence

_NOTE = re.compile(r"(?:#|//|/\*|<!--|\{#|--\s)\s*(.*?\b(?:TODO|FIXME|XXX|HACK)\b.*?)\s*(?:\*/|-->|#\})?\s*$")
_LIMIT = 160
#: Longer lines are data or minified code, not comments someone wrote.
_MAX_LINE = 2000


def todos_added(added_lines: Sequence[str]) -> tuple[str, ...]:
    """The comment text of each added line holding a TODO/FIXME/XXX/HACK note, without repeats.

    ``added_lines`` are the texts of a file's added lines (without the ``+``). Comments
    start with ``#``, ``//``, ``/*``, ``<!--``, ``{#`` or ``-- ``; the marker words count
    only as whole words, so ``XXXX`` placeholders do not. Notes longer than 160
    characters are cut with an ellipsis.
    """
    joined = "\n".join(added_lines)
    if not ("TODO" in joined or "FIXME" in joined or "XXX" in joined or "HACK" in joined):
        return ()
    found: dict[str, None] = {}
    for text in added_lines:
        if not ("TODO" in text or "FIXME" in text or "XXX" in text or "HACK" in text) or len(text) > _MAX_LINE:
            continue
        m = _NOTE.search(text)
        if m is None:
            continue
        note = m.group(1).strip()
        if len(note) > _LIMIT:
            note = note[: _LIMIT - 1] + "…"
        found[note] = None
    return tuple(found)
