"""Parse the ``patch`` text GitHub gives for one file into hunks.

GitHub's "List pull requests files" returns, per file, a unified diff without file
headers: it starts at the first ``@@ -a,b +c,d @@ section`` line. The section text is
git's "function name" for the hunk: by default the last line above the hunk that
starts with a letter, ``_`` or ``$`` (so usually the enclosing top-level ``def``,
``class`` or YAML key), cut to 80 characters.

The parser is total: any string (or ``None`` or bytes) gives a tuple of hunks, and
lines it cannot place are skipped rather than raising.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import partial
from itertools import repeat
from operator import itemgetter
from typing import NamedTuple

ADDED = "+"
REMOVED = "-"
CONTEXT = " "

_HEADER = re.compile(r"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@ ?(.*)")

#: GitHub and git cap line numbers far below this; larger values mean garbage.
_MAX_LINE = 10**9


class DiffLine(NamedTuple):
    """One line of a hunk.

    ``kind`` is ``"+"`` (added), ``"-"`` (removed) or ``" "`` (context); ``text`` is the
    line without that prefix and without a trailing ``\r``. ``old_line``/``new_line``
    are 1-based line numbers in the old/new file, or 0 on the side the line is not on.
    A named tuple rather than a dataclass: patches of big PRs hold many thousands of
    lines, and tuples are several times cheaper to build.
    """

    kind: str
    text: str
    old_line: int
    new_line: int


class Hunk(NamedTuple):
    """One ``@@`` block of a unified diff.

    ``old_start``/``old_length`` and ``new_start``/``new_length`` come from the header
    (a missing length means 1). ``section`` is the text after the second ``@@`` (empty
    when absent). ``old_missing_newline``/``new_missing_newline`` record a
    ``\\ No newline at end of file`` marker after the hunk's last old/new line.
    A named tuple, as :class:`DiffLine`: one is made per hunk of every file.
    """

    old_start: int
    old_length: int
    new_start: int
    new_length: int
    section: str
    lines: tuple[DiffLine, ...]
    old_missing_newline: bool = False
    new_missing_newline: bool = False

    @property
    def added(self) -> tuple[DiffLine, ...]:
        """The added lines, in order."""
        return tuple(line for line in self.lines if line.kind == ADDED)

    @property
    def removed(self) -> tuple[DiffLine, ...]:
        """The removed lines, in order."""
        return tuple(line for line in self.lines if line.kind == REMOVED)


def _as_text(patch: object) -> str:
    if isinstance(patch, str):
        return patch
    if isinstance(patch, (bytes, bytearray)):
        return bytes(patch).decode("utf-8", errors="replace")
    return ""


def _parse_header(line: str) -> tuple[int, int, int, int, str] | None:
    m = _HEADER.match(line)
    if m is None:
        return None
    old_start, old_len, new_start, new_len, section = m.groups()
    numbers = int(old_start), int(old_len or 1), int(new_start), int(new_len or 1)
    if max(numbers) > _MAX_LINE:
        return None
    return numbers[0], numbers[1], numbers[2], numbers[3], section.strip()


def parse_patch(patch: object) -> tuple[Hunk, ...]:
    """Split one file's patch into :class:`Hunk` objects, in order.

    ``patch`` is GitHub's per-file ``patch`` string ("List pull requests files"); CRLF
    line ends are accepted. ``None``, non-strings and text without an ``@@`` header give
    ``()``. Text before the first header (for example ``diff --git``/``---``/``+++``
    file headers of a full ``git diff``) is ignored, and so are lines past the counts a
    header announced, so headers of a following file are never read as changes. Never
    raises.
    """
    return parse_patch_lines(patch)[0]


def parse_patch_lines(patch: object) -> tuple[tuple[Hunk, ...], list[str], list[str]]:
    """``(hunks, added texts, removed texts)`` of one file's patch: :func:`parse_patch` with
    the text of its added and of its removed lines, in order, collected on the way."""
    text = _as_text(patch)
    if "@@" not in text:
        return (), [], []
    if "\r" in text:
        text = text.replace("\r\n", "\n").removesuffix("\r")
    rows = text.split("\n")
    heads = [(row, parsed) for row in _header_rows(text) if (parsed := _parse_header(rows[row])) is not None]
    hunks = []
    added: list[str] = []
    removed: list[str] = []
    for k, (row, header) in enumerate(heads):
        end = heads[k + 1][0] if k + 1 < len(heads) else len(rows)
        hunks.append(_hunk(rows, row + 1, end, header, added, removed))
    return tuple(hunks), added, removed


def _header_rows(text: str) -> list[int]:
    """Indexes of the rows of ``text`` that start with ``@@``, found by C-speed searches."""
    out = [0] if text.startswith("@@") else []
    row = pos = 0
    at = text.find("\n@@")
    while at >= 0:
        row += text.count("\n", pos, at + 1)
        pos = at + 1
        out.append(row)
        at = text.find("\n@@", pos)
    return out


def _whole_rows(body: list[str], header: tuple[int, int, int, int, str], added: list[str], removed: list[str]) -> tuple[list[DiffLine], int, str] | None:
    """``(lines, rows used, their kind)`` of a hunk that only adds (or only removes) lines
    when its first rows are exactly those lines, made by C-speed maps; None otherwise."""
    old_no, old_count, new_no, new_count, _section = header
    kind, count = (ADDED, new_count) if old_count == 0 else (REMOVED, old_count)
    body = body[:count]
    joined = "\n".join(body)
    if len(body) != count or not joined.startswith(kind) or joined.count("\n" + kind) != count - 1:
        return None
    texts = list(map(_REST, body))
    if kind == ADDED:
        added += texts
        return list(map(_NEW_LINE, zip(repeat(ADDED), texts, repeat(0), range(new_no, new_no + count)))), count, kind
    removed += texts
    return list(map(_NEW_LINE, zip(repeat(REMOVED), texts, range(old_no, old_no + count), repeat(0)))), count, kind


_NEW_LINE = partial(tuple.__new__, DiffLine)  # a DiffLine from a 4-tuple, without the named tuple's argument handling
_REST = itemgetter(slice(1, None))  # a row without its first character


def _hunk(rows: list[str], start: int, end: int, header: tuple[int, int, int, int, str], added: list[str], removed: list[str]) -> Hunk:
    """The hunk whose header is ``rows[start - 1]`` and whose rows are ``rows[start:end]``;
    the text of its added and removed lines is appended to ``added`` and ``removed``."""
    old_no, old_left, new_no, new_left, _section = header
    old_eof = new_eof = False
    last_kind = ""
    lines: list[DiffLine] = []
    whole = _whole_rows(rows[start:end], header, added, removed) if (old_left == 0) != (new_left == 0) else None
    if whole is not None:
        # A whole file added or deleted: its lines are made in one go, the rows after them
        # (a "\ No newline at end of file" marker) are read below.
        lines, count, last_kind = whole
        start += count
        if last_kind == ADDED:
            new_no, new_left = new_no + count, 0
        else:
            old_no, old_left = old_no + count, 0
    append = lines.append
    add, drop = added.append, removed.append
    make = tuple.__new__  # skips the named tuple's argument handling on the hot path
    for line in rows[start:end]:
        first = line[:1]
        if first == ADDED:
            if new_left <= 0:
                continue
            text = line[1:]
            append(make(DiffLine, (ADDED, text, 0, new_no)))
            add(text)
            new_no += 1
            new_left -= 1
            last_kind = ADDED
        elif first == REMOVED:
            if old_left <= 0:
                continue
            text = line[1:]
            append(make(DiffLine, (REMOVED, text, old_no, 0)))
            drop(text)
            old_no += 1
            old_left -= 1
            last_kind = REMOVED
        elif first == CONTEXT or not line:
            # Some tools strip the single space of an empty context line.
            if old_left <= 0 or new_left <= 0:
                continue
            append(make(DiffLine, (CONTEXT, line[1:], old_no, new_no)))
            old_no += 1
            new_no += 1
            old_left -= 1
            new_left -= 1
            last_kind = CONTEXT
        elif first == "\\":
            # "\ No newline at end of file" belongs to the line just before it.
            if last_kind == REMOVED or last_kind == CONTEXT:
                old_eof = True
            if last_kind == ADDED or last_kind == CONTEXT:
                new_eof = True
    # Every field in order, without the named tuple's Python-level __new__ (its keywords).
    return make(Hunk, (*header, tuple(lines), old_eof, new_eof))


def change_blocks(lines: Sequence[DiffLine]) -> list[tuple[int, int, int]]:
    """The change blocks of one hunk's ``lines``: ``(i, j, k)`` where ``lines[i:j]`` is a run
    of removed lines and ``lines[j:k]`` the run of added lines right after it (either may be
    empty, never both), in order. A block is what a reader sees replaced at one place."""
    out: list[tuple[int, int, int]] = []
    i, n = 0, len(lines)
    while i < n:
        if lines[i].kind == CONTEXT:
            i += 1
            continue
        j = i
        while j < n and lines[j].kind == REMOVED:
            j += 1
        k = j
        while k < n and lines[k].kind == ADDED:
            k += 1
        out.append((i, j, k))
        i = max(k, i + 1)
    return out
