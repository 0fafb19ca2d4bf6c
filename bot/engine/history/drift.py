"""Where the lines of a pull request's diff are in the file its merge was blamed at.

Pure. GitHub's "List pull requests files" diffs the pull request against the merge base
(the old side of each patch is the file there), while the app blames the commit the pull
request was merged onto: the first parent of the merge commit. When the base branch
changed the file in between, a line number of the patch's old side names another line
there (a line inserted above shifts every line below), and the blame would name whoever
wrote that other line. :func:`lines_at_parent` reads each hunk's old side (its context
and removed lines, which the patch carries in full) in the file at the parent: a hunk
found there exactly once gives its lines their number there; a hunk not found (the base
branch changed those lines) or found more than once (no telling which) gives none, so
nothing is said of its lines (precision first). A file the base branch left alone finds
every hunk where the patch says, and nothing moves.

A hunk found elsewhere than the patch says may also be an identical copy of its lines
while the base branch changed the hunk's own outer context (three lines from the change:
no merge conflict). The lines next to each change, which the base branch could not
change without a conflict, are then looked for too: when they are in the file more than
once, the hunk's own place may be any of them, and the hunk places no line.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from bot.engine.analysis.patch import ADDED, CONTEXT, REMOVED, Hunk, parse_patch

#: A hunk whose rarest line is in the file more often than this is not looked for (it is
#: made of lines such as ``}`` or blank ones only, and could match in too many places).
MAX_CANDIDATES = 200
#: Places compared, over all the hunks of one file: past it, the file's other hunks place no
#: line. (Up to MAX_CANDIDATES places per hunk, and a patch may hold tens of thousands of
#: hunks: a hostile 1.8 MB patch cost 1.4 s of the app's event loop, where the blame runs, per file.)
MAX_PLACES = 20_000


def lines_at_parent(patch: str | None, parent_text: str) -> dict[int, int]:
    """``{line of the patch's old side: the same line's number in parent_text}`` (1-based), for
    the lines of every hunk of ``patch`` whose old side (context and removed lines, in order)
    is found in ``parent_text`` exactly once; lines of other hunks are left out.

    ``patch`` is GitHub's per-file patch; ``parent_text`` the file at the blamed commit (line
    ends ``\\n`` or ``\\r\\n``; a ``\\r`` ending a line is ignored on both sides, as the patch
    parser drops it). Cost: one pass over ``parent_text`` plus, per hunk, a slice comparison
    at each place its rarest line occurs, at most :data:`MAX_PLACES` places in all (the
    hunks after those place no line).
    """
    hunks = parse_patch(patch)
    if not hunks:
        return {}
    parent = [line[:-1] if line.endswith("\r") else line for line in parent_text.split("\n")]
    if parent and parent[-1] == "":
        parent.pop()  # the text after the last newline is no line
    where: dict[str, list[int]] = {}
    for i, line in enumerate(parent):
        where.setdefault(line, []).append(i)
    out: dict[int, int] = {}
    places = MAX_PLACES
    for hunk in hunks:
        numbers, block, core = _old_side(hunk)
        if not block:
            continue
        places -= _cost(block, where)
        if places < 0:
            break  # precision first: no line rather than an unbounded search
        start = _unique_place(block, parent, where)
        if start is None:
            continue
        if start + 1 != numbers[0]:
            # Moved: its own place, or an identical copy of it while the base branch changed its
            # outer context? The lines by the changes are at its own place whatever the base did.
            places -= _cost(core, where)
            if places < 0 or _unique_place(core, parent, where) is None:
                continue
        for offset, number in enumerate(numbers):
            out[number] = start + offset + 1
    return out


def _old_side(hunk: Hunk) -> tuple[list[int], list[str], list[str]]:
    """``(old line numbers, their texts, the texts by the changes)`` of a hunk's old side (context
    and removed lines); the last are those from the line before its first change (a removed
    line, or an insertion) to the line after its last one."""
    numbers: list[int] = []
    block: list[str] = []
    near: list[int] = []
    for d in hunk.lines:
        if d.kind == ADDED:
            near += (len(block) - 1, len(block))  # the old lines either side of the insertion
        elif d.kind in (CONTEXT, REMOVED):
            if d.kind == REMOVED:
                near += (len(block) - 1, len(block) + 1)
            numbers.append(d.old_line)
            block.append(d.text)
    inside = [i for i in near if 0 <= i < len(block)]
    return numbers, block, block[min(inside) : max(inside) + 1] if inside else block


def _cost(block: Sequence[str], where: Mapping[str, list[int]]) -> int:
    """Places :func:`_unique_place` compares ``block`` at: its rarest line's (none past MAX_CANDIDATES)."""
    seen = min(len(where.get(text, ())) for text in block)
    return seen if seen <= MAX_CANDIDATES else 0


def _unique_place(block: Sequence[str], lines: Sequence[str], where: Mapping[str, list[int]]) -> int | None:
    """The 0-based index where ``block`` occurs in ``lines``, when it occurs exactly once."""
    # Anchor on the block's rarest line in the file: one candidate for most hunks.
    anchor = min(range(len(block)), key=lambda i: len(where.get(block[i], ())))
    seen = len(where.get(block[anchor], ()))
    if seen == 0 or seen > MAX_CANDIDATES:
        return None
    found = None
    size, block = len(block), list(block)
    for position in where[block[anchor]]:
        start = position - anchor
        if start < 0 or start + size > len(lines) or list(lines[start : start + size]) != block:
            continue
        if found is not None:
            return None  # twice: no telling which
        found = start
    return found
