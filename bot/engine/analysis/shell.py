"""Shell scripts: a backslash-continued command the diff cuts short. Pure.

A command written over several lines joins them with a backslash at each line end. A
comment line or a blank line in the middle ends the command there: ``#`` starts a comment
to the end of the joined line, and a backslash before an empty line joins nothing. The
lines after it then run as a command of their own (``+trainer.x=1 \\`` fails as one), and
the arguments they held are never passed (bash(1), "QUOTING" and "COMMENTS"). Seen in
verl #4103: a ``# Use aux_loss …`` line put among the ``python3 -m …`` arguments dropped
every argument after it. This is said exactly, as an :class:`~bot.engine.analysis.model.Edit`
of kind ``continuation_broken``, only where the diff added the breaking line or the
continued line before it, and only when the next line is indented like the arguments.
"""

from __future__ import annotations

from collections.abc import Sequence

from bot.engine.analysis.model import Edit
from bot.engine.analysis.patch import ADDED, REMOVED, Hunk

#: Breaks said per file (the first ones).
MAX_BREAKS = 3
_TEXT_LIMIT = 160


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _TEXT_LIMIT else text[: _TEXT_LIMIT - 1] + "…"


def broken_continuations(hunks: Sequence[Hunk], path: str) -> tuple[Edit, ...]:
    """``continuation_broken`` edits of a shell script's hunks: ``line`` the new-file line of
    the comment or blank line that ends the command, ``new`` that line (``""`` when blank),
    ``old`` the continued line before it, ``detail`` the first line cut off."""
    out: list[Edit] = []
    for hunk in hunks:
        new_side = [line for line in hunk.lines if line.kind != REMOVED]
        for before, line, after in zip(new_side, new_side[1:], new_side[2:]):
            head = before.text.rstrip()
            if not head.endswith("\\") or head.endswith("\\\\") or head.lstrip().startswith("#"):
                continue
            stripped = line.text.strip()
            if stripped and not stripped.startswith("#"):
                continue
            if ADDED not in (before.kind, line.kind):
                continue  # a break the pull request did not make
            if not after.text.strip() or not after.text[:1].isspace() or after.text.strip().startswith("#"):
                continue  # what follows does not read as more arguments of the command
            out.append(Edit("continuation_broken", path, "", _short(head), _short(stripped), _short(after.text), line.new_line))
            if len(out) >= MAX_BREAKS:
                return tuple(out)
    return tuple(out)
