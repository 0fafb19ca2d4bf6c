"""Lines of text grouped by changed file, searched with one regex call per matching file.

Added lines, removed lines and touched symbols of a big pull request run to
hundreds of thousands of lines; calling a regex once per line would be slow. A
:class:`LineCorpus` joins each file's lines with ``\\n`` and searches the whole
text, jumping to the next file after a hit. A match never spans two lines: one
that does is retried within its first line.

Input is bounded so a regex meets at most :data:`MAX_LINES` lines of at most
:data:`MAX_LINE_CHARS` characters each (longer lines are cut, later lines
dropped); the :class:`~bot.engine.rules.safe_regex.Budget` bounds the time.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass

import regex

from bot.engine.rules.safe_regex import Budget

#: Characters of one line a regex sees; the rest of a longer line is ignored.
MAX_LINE_CHARS = 2000
#: Lines of one corpus (e.g. all added lines of a pull request) a regex sees.
MAX_LINES = 200_000


@dataclass(slots=True, unsafe_hash=True)  # read-only by convention: see bot.engine.analysis.model
class LineMatch:
    """One matching line: ``file`` is the position of its file, ``line`` its text (cut to the limits)."""

    file: int
    line: str
    match: str


@dataclass(slots=True, unsafe_hash=True)  # read-only by convention: see bot.engine.analysis.model
class _Joined:
    text: str
    starts: list[int]
    files: list[int]


class LineCorpus:
    """The lines of each changed file (by position), joined for searching.

    Files are read lazily: a search limited to a few files never touches the
    others. ``truncated`` tells whether lines were dropped or cut to the limits.
    """

    def __init__(self, lines_by_file: Sequence[Sequence[str]]):
        self._source = lines_by_file
        self._texts: dict[int, str | None] = {}
        self._joins: dict[frozenset[int] | None, _Joined] = {}
        self._budget = MAX_LINES
        self.truncated = False

    def _text(self, index: int) -> str | None:
        """File ``index``'s lines joined, within the limits (``None``: no lines)."""
        if index in self._texts:
            return self._texts[index]
        lines = self._source[index]
        text = None
        if lines:
            if len(lines) > self._budget:
                lines = lines[: self._budget]
                self.truncated = True
            self._budget -= len(lines)
            if lines:
                text = "\n".join(lines)
                # Only touch lines one by one when one holds a newline or is too long.
                if text.count("\n") != len(lines) - 1 or max(map(len, lines)) > MAX_LINE_CHARS:
                    self.truncated = self.truncated or max(map(len, lines)) > MAX_LINE_CHARS
                    text = "\n".join(line.replace("\n", " ")[:MAX_LINE_CHARS] for line in lines)
        self._texts[index] = text
        return text

    def _joined(self, files: frozenset[int] | None) -> _Joined:
        joined = self._joins.get(files)
        if joined is None:
            order = range(len(self._source)) if files is None else sorted(files)
            parts, starts, ids, offset = [], [], [], 0
            for index in order:
                text = self._text(index)
                if text is None:
                    continue
                parts.append(text)
                starts.append(offset)
                ids.append(index)
                offset += len(text) + 1
            joined = self._joins[files] = _Joined("\n".join(parts), starts, ids)
        return joined

    def search(
        self,
        pattern: regex.Pattern,
        budget: Budget,
        *,
        files: frozenset[int] | None = None,
        per_file: int | None = 1,
        limit: int = 1000,
    ) -> list[LineMatch]:
        """Lines ``pattern`` matches, in file order.

        ``files`` limits the search to those file positions (``None``: all files);
        ``per_file`` stops looking in a file after that many hits (``None``: no cap);
        ``limit`` caps the total. A timeout ends the search early (``budget.timed_out``).
        """
        joined = self._joined(files)
        text, starts = joined.text, joined.starts
        out: list[LineMatch] = []
        counts: dict[int, int] = {}
        pos, end = 0, len(text)
        while starts and pos < end and len(out) < limit:
            m = budget.search(pattern, text, pos, end)
            if m is None:
                break
            line_start = text.rfind("\n", 0, m.start()) + 1
            line_end = text.find("\n", m.start())
            line_end = end if line_end < 0 else line_end
            if m.end() > line_end:
                # The match ran past its line; look again within that line alone.
                m = budget.search(pattern, text, m.start(), line_end)
                if m is None:
                    if budget.timed_out:
                        break
                    pos = line_end + 1
                    continue
            slot = bisect.bisect_right(starts, line_start) - 1
            out.append(LineMatch(joined.files[slot], text[line_start:line_end], m.group()))
            counts[slot] = counts.get(slot, 0) + 1
            pos = line_end + 1
            if per_file is not None and counts[slot] >= per_file:
                pos = max(pos, starts[slot + 1] if slot + 1 < len(starts) else end)
        return out
