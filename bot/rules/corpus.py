"""Lines of text grouped by changed file, searched with one regex call per matching file.

Added lines, removed lines and touched symbols of a big pull request run to
hundreds of thousands of lines; calling a regex once per line would be slow. A
:class:`LineCorpus` joins each file's lines with ``\\n`` and searches the whole
text, jumping to the next file after a hit. A match never spans two lines: one
that does is retried within its first line.

Input is bounded so a regex meets at most :data:`MAX_LINES` lines of at most
:data:`MAX_LINE_CHARS` characters each (longer lines are cut, later lines
dropped); the :class:`~bot.rules.safe_regex.Budget` bounds the time.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import regex

from bot.rules.safe_regex import Budget

#: Characters of one line a regex sees; the rest of a longer line is ignored.
MAX_LINE_CHARS = 2000
#: Lines of one corpus (e.g. all added lines of a pull request) a regex sees.
MAX_LINES = 200_000


@dataclass(frozen=True, slots=True)
class LineMatch:
    """One matching line: ``file`` is the position of its file, ``line`` its text (cut to the limits)."""

    file: int
    line: str
    match: str


class LineCorpus:
    """The lines of each changed file (by position), joined for searching.

    ``truncated`` tells whether lines were dropped or cut to the limits.
    """

    def __init__(self, lines_by_file: Sequence[Iterable[str]]):
        parts: list[str] = []
        starts: list[int] = []
        files: list[int] = []
        offset = 0
        budget = MAX_LINES
        self.truncated = False
        for index, lines in enumerate(lines_by_file):
            kept = []
            for line in lines:
                if budget <= 0:
                    self.truncated = True
                    break
                budget -= 1
                line = line.replace("\n", " ")
                if len(line) > MAX_LINE_CHARS:
                    line = line[:MAX_LINE_CHARS]
                    self.truncated = True
                kept.append(line)
            if not kept:
                continue
            text = "\n".join(kept)
            starts.append(offset)
            files.append(index)
            parts.append(text)
            offset += len(text) + 1
        self._text = "\n".join(parts)
        self._starts = starts
        self._files = files

    def __bool__(self) -> bool:
        return bool(self._files)

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
        out: list[LineMatch] = []
        text = self._text
        counts: dict[int, int] = {}
        for run_start, run_end in self._runs(files):
            pos = run_start
            while pos < run_end and len(out) < limit:
                m = budget.search(pattern, text, pos, run_end)
                if m is None:
                    break
                line_start = text.rfind("\n", 0, m.start()) + 1
                line_end = text.find("\n", m.start(), run_end)
                line_end = run_end if line_end < 0 else line_end
                if m.end() > line_end:
                    # The match ran past its line; look again within that line alone.
                    m = budget.search(pattern, text, m.start(), line_end)
                    if m is None:
                        if budget.timed_out:
                            break
                        pos = line_end + 1
                        continue
                slot = bisect.bisect_right(self._starts, line_start) - 1
                out.append(LineMatch(self._files[slot], text[line_start:line_end], m.group()))
                counts[slot] = counts.get(slot, 0) + 1
                pos = line_end + 1
                if per_file is not None and counts[slot] >= per_file:
                    pos = max(pos, self._end(slot) + 1)
            if budget.timed_out or len(out) >= limit:
                break
        return out

    def _end(self, slot: int) -> int:
        """Where file ``slot``'s text ends (its joining newline, or the end of the text)."""
        return self._starts[slot + 1] - 1 if slot + 1 < len(self._starts) else len(self._text)

    def _runs(self, files: frozenset[int] | None) -> list[tuple[int, int]]:
        """``(start, end)`` text spans covering the wanted files; neighbouring files share a span."""
        if files is None:
            return [(0, len(self._text))] if self._files else []
        runs: list[tuple[int, int]] = []
        for slot, start in enumerate(self._starts):
            if self._files[slot] not in files:
                continue
            end = self._end(slot)
            if runs and runs[-1][1] + 1 == start:
                runs[-1] = (runs[-1][0], end)
            else:
                runs.append((start, end))
        return runs

    def file_of(self, offset: int) -> int:
        """The file position holding text ``offset`` (for tests and debugging)."""
        return self._files[bisect.bisect_right(self._starts, offset) - 1]
