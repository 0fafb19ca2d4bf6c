"""TODO, FIXME, XXX and HACK notes added in comments."""

from __future__ import annotations

import re
from collections.abc import Sequence

_NOTE = re.compile(r"(?:#|//|/\*|<!--|\{#|--\s)\s*(.*?\b(?:TODO|FIXME|XXX|HACK)\b.*?)\s*(?:\*/|-->|#\})?\s*$")
_LIMIT = 160
_MARKER = re.compile(r"\b(?:TODO|FIXME|XXX|HACK)\b")
#: Punctuation that ends a note's sentence (no continuation line is read after it).
_SENTENCE_END = (".", "!", "?", ":", ";", "。", ")")
_FIRST_SENTENCE = re.compile(r".*?[.!?](?=\s|$)")
#: A comment line that is commented-out code, not prose: an assignment, a call or block opener.
_CODE = re.compile(r"^(?:[\w.\[\]]+\s*[-+*/]?=[^=]|(?:def|class|if|elif|else|for|while|with|try)\b.*:$|(?:return|import|from)\s+[\w.]+$|[\w.]+\()|[({\[,\\]$")
#: Continuation lines read after a note's first line.
_MAX_CONTINUATION = 4
#: Longer lines are data or minified code, not comments someone wrote.
_MAX_LINE = 2000


def todos_added(added_lines: Sequence[str]) -> tuple[str, ...]:
    """The comment text of each added line holding a TODO/FIXME/XXX/HACK note, without repeats.

    ``added_lines`` are the texts of a file's added lines (without the ``+``). Comments
    start with ``#``, ``//``, ``/*``, ``<!--``, ``{#`` or ``-- ``; the marker words count
    only as whole words, so ``XXXX`` placeholders do not. A note whose sentence goes on in
    the next lines (comments of the same marker and indentation, without a marker word of
    their own) is taken whole: a note cut mid-sentence loses what explains it. A note
    longer than 160 characters is cut after its first sentence when that fits, else left out.
    """
    joined = "\n".join(added_lines)
    if not ("TODO" in joined or "FIXME" in joined or "XXX" in joined or "HACK" in joined):
        return ()
    found: dict[str, None] = {}
    for i, text in enumerate(added_lines):
        if not ("TODO" in text or "FIXME" in text or "XXX" in text or "HACK" in text) or len(text) > _MAX_LINE:
            continue
        m = _NOTE.search(text)
        if m is None:
            continue
        note = m.group(1).strip()
        lead = text[: m.start(1)].rstrip()  # indentation and comment marker
        for more in added_lines[i + 1 : i + 1 + _MAX_CONTINUATION]:
            if note.endswith(_SENTENCE_END) or len(more) > _MAX_LINE:
                break
            rest = more[len(lead) :].strip() if more.startswith(lead) and more[len(lead) : len(lead) + 1].isspace() else ""
            if not rest or _MARKER.search(rest) or _CODE.search(rest):
                break  # a new note, an empty comment line or commented-out code
            note = f"{note} {rest}"
        if len(note) > _LIMIT:
            end = _FIRST_SENTENCE.match(note)
            if end is None or len(end.group(0)) > _LIMIT:
                continue
            note = end.group(0)
        found[note] = None
    return tuple(found)
