"""The line a reverted pull request's guide gets: "Reverted by #M N days after it was merged".

Pure. The line sits right under the guide's title as a GitHub alert block, and the marker
remembers it (``reverted_by: {number, days}``), so a guide rebuilt later keeps it
(:class:`bot.engine.build.Overrides` reads it back). :func:`with_revert_note` adds it to a
comment already published, giving byte for byte what a rebuilt guide would have.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from bot.engine.marker import MarkerState, parse_marker, replace_marker
from bot.engine.render.messages import t

#: The marker key that remembers the revert.
MARKER_KEY = "reverted_by"
_ALERT = "> [!WARNING]\n"


def note_text(number: int, days: int, lang: str) -> str:
    """The sentence: reverted by pull request ``number``, ``days`` whole days after the merge."""
    if days <= 0:
        return t("note.reverted_by.same_day", lang, {"number": int(number)}, raw=True)
    return t("note.reverted_by", lang, {"number": int(number), "count": int(days)}, raw=True)


def note_block(number: int, days: int, lang: str) -> str:
    """The alert block as the guide template writes it, after the title line's line break."""
    return f"\n{_ALERT}> {note_text(number, days, lang)}\n"


def reverted_by(state: MarkerState | None) -> tuple[int, int] | None:
    """``(number, days)`` a marker remembers, or ``None``."""
    found = (state.extra if state is not None else {}).get(MARKER_KEY)
    if not isinstance(found, dict):
        return None
    number, days = found.get("number"), found.get("days")
    if isinstance(number, int) and not isinstance(number, bool) and isinstance(days, int) and not isinstance(days, bool):
        return number, days
    return None


def marker_extra(number: int, days: int) -> dict[str, Any]:
    """The marker's ``extra`` entry for the revert."""
    return {MARKER_KEY: {"number": int(number), "days": int(days)}}


def with_revert_note(body: str, number: int, days: int, lang: str) -> str:
    """``body`` (a guide comment with prguide's marker) saying it was reverted by ``number``.

    The note goes right after the title line (the first ``### `` line), or after the marker
    line when there is none; an earlier revert note is replaced; the marker records it. A
    body already saying the same is returned unchanged, and so is a body without a marker.
    """
    state = parse_marker(body)
    if state is None:
        return body
    if reverted_by(state) == (number, days):
        return body
    lines = body.split("\n")
    at = next((i for i, line in enumerate(lines) if line.startswith("### ")), None)
    if at is None:
        at = next(i for i, line in enumerate(lines) if "<!-- prguide:v1 " in line)
    head = "\n".join(lines[: at + 1]) + "\n"
    rest = body[len(head) :]
    if reverted_by(state) is not None and rest.startswith("\n" + _ALERT + "> "):
        end = rest.index("\n", len(_ALERT) + 1) + 1  # the end of the earlier note's line
        rest = rest[end:]
    noted = head + note_block(number, days, lang) + rest
    return replace_marker(noted, replace(state, extra={**state.extra, **marker_extra(number, days)}))
