"""Which earlier pull request a pull request follows up ("Follows #N").

Pure. Two kinds of evidence, and the guide says which:

* the description says so: "follow-up to #N", "follow up of #N", "continues #N", "part 2
  of #N", "completes #N", "based on #N", "跟进 #N", "#N 的后续"... (:func:`named_predecessors`).
  Only references to this repository count (``#N``, ``owner/repo#N`` or a link to one of
  its pull requests or issues, the repository's own name); never the pull request's own
  number, never a number in a link or reference to another repository, never a phrase in
  a quoted line or a code block, never a negated one ("not a follow-up to #N");
* the history says so: the same functions (definitions by qualified name, with their
  file) changed in a pull request by the same author merged within :data:`WINDOW_DAYS`
  days before, and in exactly one such pull request (:func:`follow_link`). Without the
  author's own earlier work on the very same definitions, sharing a busy function says
  nothing about intent, so nothing is said.

When the description names a pull request the history knows, the definitions both
changed are added to its evidence.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from bot.engine.analysis.description import STRUCK
from bot.engine.history.coupling import MergedChange, utc_moment

#: Earlier pull requests merged at most this many days before count as followed up by history.
WINDOW_DAYS = 30
#: A pull request changing more definitions than this is a sweep: no history link from or to it.
MAX_DEFINITIONS = 40
#: Definitions named in a sentence, at most.
SHOWN = 3
#: The separator between a definition's file and its qualified name (``bot/a.py::Trainer.fit``).
SEP = "::"

# ASCII digits only: GitHub links ``#12``, never ``#１２`` (Python's ``\d`` and ``int`` take both).
_NUMBER = r"(?P<number>[0-9]{1,7})\b"
# ``#N``, ``owner/repo#N`` or a link to a pull request or issue; ``repo`` is the named repository.
_REF = (
    r"(?:(?:PR|pull request|pull|issue)\s*)?"
    r"(?:(?<![\w/.#-])#|(?P<short>[\w.-]+/[\w.-]+)#"
    r"|https?://github\.com/(?P<repo>[\w.-]+/[\w.-]+)/(?:pull|issues)/)" + _NUMBER
)
_EN = (
    r"follow(?:s|ing)?[- ]?ups?\s+(?:(?:PR\s+)?(?:to|of|for|on)\s+)?"
    r"|follows?\s+up\s+(?:on\s+|to\s+)?"
    r"|follow(?:s|ing)\s+(?=(?:PR|pull request)?\s*#)"
    r"|continu(?:es|ing|ation\s+of)\s+"
    r"|part\s+(?:2|3|4|two|three|ii|iii)\s+of\s+"
    r"|completes\s+|completing\s+|completion\s+of\s+"
    r"|(?:is\s+)?based\s+on\s+|builds?\s+on\s+(?:top\s+of\s+)?|stacked\s+on\s+(?:top\s+of\s+)?"
)
#: An English phrase, then the reference.
_BEFORE = re.compile(r"(?P<phrase>\b(?:" + _EN + r"))(?:the\s+)?(?:changes\s+(?:in|of|from)\s+)?:?\s*" + _REF, re.IGNORECASE)
#: A Chinese phrase before the reference ("跟进 #N", "基于 #N") ...
_ZH_BEFORE = re.compile(r"(?P<phrase>跟进|承接|接续|延续|续接|基于|完成|补全)\s*(?:了\s*)?" + _REF, re.IGNORECASE)
#: ... or after it ("#N 的后续", "#N 的第二部分").
_ZH_AFTER = re.compile(_REF + r"\s*(?P<phrase>的\s*(?:后续|续作|后半部分|第[二三四]部分|跟进))", re.IGNORECASE)
#: Words just before a phrase that turn it around ("not a follow-up to #3", "不是基于 #3").
_NEGATION = re.compile(r"(?:\b(?:not|no|isn't|isnt|aren't|without|never)\s+(?:\w+\s+){0,2}|不是|并非|无需|不)\s*$", re.IGNORECASE)


def named_predecessors(body: str, repository: str, own: int) -> list[tuple[int, str]]:
    """``[(number, phrase)]``: the pull requests ``body`` says this one follows up, in order of
    their first mention, each once; ``phrase`` is the description's words, whitespace
    collapsed. References to another repository, to ``own`` and inside quoted lines, code
    blocks or HTML comments are left out, as are negated phrases.

    Only the stretches around references are searched, and only for the phrases whose
    words they hold (:func:`_windows`): the whole-text search took 9 M instructions per
    verl description, this one about 0.14 M (``bench/HISTORY.md``, section 13)."""
    if not body:
        return []
    found: dict[int, tuple[int, str]] = {}
    name = repository.lower()
    hidden = _Hidden(body)
    for start, end in _windows(body):
        window = body[start:end].lower()
        for pattern, words in _PATTERNS:
            if not any(w in window for w in words):
                continue  # no phrase's word: the regex would find nothing (most references)
            for m in pattern.finditer(body, start, end):
                other = m["repo"] or m["short"]
                number = int(m["number"])
                # The whole name: a fork has the upstream's name (``alice/verl#12`` is alice's).
                if number in (own, 0) or (other and other.lower() != name):
                    continue
                if _NEGATION.search(body[max(0, m.start() - 40) : m.start()]) or hidden(m.start()):
                    continue
                if number not in found or m.start() < found[number][0]:
                    found[number] = (m.start(), " ".join(m.group(0).split()))
    return [(n, phrase) for n, (_, phrase) in sorted(found.items(), key=lambda kv: kv[1][0])]


#: Each phrase pattern with words one of which any of its matches holds (lower case).
_PATTERNS = (
    (_BEFORE, ("follow", "continu", "part", "complet", "based", "build", "stacked")),
    (_ZH_BEFORE, ("跟进", "承接", "接续", "延续", "续接", "基于", "完成", "补全")),
    (_ZH_AFTER, ("的",)),
)
#: How far before a reference's number a phrase and its link may start, and after it a Chinese phrase end.
_REACH_BEFORE, _REACH_AFTER = 300, 40


def _numbers(text: str) -> list[int]:
    """Where the numbers of ``text``'s references start: after ``#`` or ``/pull/`` (``/issues/``),
    found with ``str.find`` (a regex alternation scans every character)."""
    out = []
    for mark in ("#", "/pull/", "/issues/"):
        i = text.find(mark)
        while i >= 0:
            j = i + len(mark)
            if j < len(text) and "0" <= text[j] <= "9":
                out.append(i)
            i = text.find(mark, j)
    return sorted(out)


def _windows(text: str) -> list[tuple[int, int]]:
    """The stretches of ``text`` around its references, merged where they overlap, each starting
    at the text's start or after a space (so no word is cut): the phrases are looked for there only."""
    out: list[tuple[int, int]] = []
    for at in _numbers(text):
        start = max(0, at - _REACH_BEFORE)
        if start:
            spaces = [i for i in (text.find(" ", start, at), text.find("\n", start, at)) if i >= 0]
            start = min(spaces) if spaces else at
        end = min(len(text), at + _REACH_AFTER)
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], end)
        else:
            out.append((start, end))
    return out


#: A line opening or closing a fenced code block.
_FENCE = re.compile(r"^[ \t]*(```|~~~)", re.MULTILINE)


class _Hidden:
    """Whether a position of ``text`` is in a quoted line (someone else's words), an HTML
    comment (a template's hints) or a fenced code block, for any number of positions.

    The text is read once here (line starts, comment marks, fences), and each question is
    a few binary searches: asked per match, a fresh scan from the text's start cost 2 s of
    CPU on a hostile 65,536-character description. A comment hides what lies between a
    ``<!--`` and the next ``-->`` (an unclosed one hides nothing). Struck-through words
    (``~~follow-up to #3~~``: taken back) and inline code (`` `follow-up to #N` ``: words
    quoted as words) are hidden too."""

    def __init__(self, text: str) -> None:
        self.text: str | None = text  # read at the first question: most descriptions ask none

    def _read(self, text: str) -> None:
        # Marks found with str.find (a regex tries every position): most are absent or few.
        self.text_read = text
        self.newlines = _every(text, "\n")
        self.quoted: dict[int, bool] = {}  # line start -> quoted, as asked
        self.opens, self.closes = _every(text, "<!--"), _every(text, "-->")
        # The fence lines in order, and whether a block is open after each.
        self.fences: list[int] = []
        self.open_after: list[bool] = []
        fence = ""
        for m in _FENCE.finditer(text) if "```" in text or "~~~" in text else ():
            if not fence:
                fence = m[1]
            elif m[1] == fence:
                fence = ""
            self.fences.append(m.start())
            self.open_after.append(bool(fence))
        struck = [m.span() for m in STRUCK.finditer(text)] if "~~" in text else []
        spans = sorted(struck + (self._code_spans(text) if "`" in text else []))
        self.span_starts = [start for start, _ in spans]
        self.reach: list[int] = []  # the furthest end of the spans up to each
        for _, end in spans:
            self.reach.append(max(end, self.reach[-1] if self.reach else 0))

    def _code_spans(self, text: str) -> list[tuple[int, int]]:
        """Inline code on one line: a run of backticks up to the next run as long (GitHub's code
        spans), paired in one pass (a regex tried at each run scanned to the line's end)."""
        runs = [m.span() for m in _TICKS.finditer(text)]
        following: list[int | None] = [None] * len(runs)  # the next run as long, by index
        seen: dict[int, int] = {}
        for i in range(len(runs) - 1, -1, -1):
            size = runs[i][1] - runs[i][0]
            following[i], seen[size] = seen.get(size), i
        spans, i = [], 0
        while i < len(runs):
            j = following[i]
            if j is not None and bisect_left(self.newlines, runs[i][0]) == bisect_left(self.newlines, runs[j][0]):
                spans.append((runs[i][0], runs[j][1]))
                i = j + 1
            else:
                i += 1
        return spans

    def __call__(self, at: int) -> bool:
        if self.text is not None:
            self._read(self.text)
            self.text = None
        k = bisect_left(self.newlines, at)
        line = self.newlines[k - 1] + 1 if k else 0
        if line not in self.quoted:
            self.quoted[line] = _QUOTED.match(self.text_read, line) is not None
        if self.quoted[line]:
            return True
        k = bisect_right(self.opens, at - 4)  # the last "<!--" wholly before ``at``
        if k:
            opened = self.opens[k - 1]
            i = bisect_left(self.closes, opened)
            closed_before = i < len(self.closes) and self.closes[i] + 3 <= at
            if not closed_before and bisect_left(self.closes, at) < len(self.closes):
                return True
        k = bisect_right(self.span_starts, at)
        if k and self.reach[k - 1] > at:
            return True
        k = bisect_left(self.fences, line)  # the fence lines above this one
        return bool(k) and self.open_after[k - 1]


#: A line whose first character that is not a space is ``>`` (matched at the line's start).
_QUOTED = re.compile(r"[^\S\n]*>")
_TICKS = re.compile(r"`+")


def _every(text: str, mark: str) -> list[int]:
    """Where ``mark`` starts in ``text``, overlaps included, in order."""
    out, i = [], text.find(mark)
    while i >= 0:
        out.append(i)
        i = text.find(mark, i + 1)
    return out


def changed_definitions(analysis: object) -> tuple[str, ...]:
    """``path::qualified.name`` of every function or method whose body a pull request's diff
    touches in its source files (:attr:`bot.engine.analysis.model.FileAnalysis.symbols_touched`),
    in order, without repeats; tests, docs and examples are left out, and so are Python
    classes themselves (:func:`_looks_like_class`): two changes anywhere in one big class
    are no sign that one follows the other (on verl's last 200 merges, most history-only
    links rested on a class alone)."""
    out: dict[str, None] = {}
    for f in getattr(analysis, "files", ()):
        if f.kind != "source":
            continue
        python = f.language == "python"
        for symbol in f.symbols_touched:
            if symbol and not (python and _looks_like_class(symbol.rpartition(".")[2])):
                out[f"{f.path}{SEP}{symbol}"] = None
    return tuple(out)


def _looks_like_class(name: str) -> bool:
    """Whether a Python name is a class's, as PEP 8 names them: with a capital letter (``Trainer``,
    ``vLLMServer``); functions are lower case with underscores. A camelCase function is taken
    for a class too, which only leaves it out."""
    return any(c.isupper() for c in name)


@dataclass(frozen=True, slots=True)
class FollowLink:
    """An earlier pull request this one follows up: its ``number``; ``phrase`` the
    description's words that say so (``""`` when only the history does); ``shared`` the
    definitions (``path::name``) both changed, when the history knows it; ``days`` from its
    merge to this one's (``None`` when unknown); ``same_author`` when the history says one
    author wrote both."""

    number: int
    phrase: str
    shared: tuple[str, ...] = ()
    days: int | None = None
    same_author: bool = False


def follow_link(
    body: str,
    repository: str,
    own: int,
    definitions: Sequence[str],
    history: Sequence[MergedChange],
    *,
    merged_at: str | None,
    author: str | None,
    exclude: Iterable[int] = (),
    window_days: float = WINDOW_DAYS,
) -> FollowLink | None:
    """The earlier pull request this one (``own``, merged at ``merged_at`` by ``author``)
    follows up, or ``None``.

    ``definitions`` are this pull request's changed definitions (:func:`changed_definitions`);
    ``history`` the merged pull requests before it, oldest first (by merge time), with theirs
    (``MergedChange.definitions``; empty when the source does not know them). The first
    pull request the description names wins (with the definitions both changed when the
    history has it); else the one pull request by the same author, merged within
    ``window_days`` days before, that changed some of the same definitions (neither a sweep
    of more than :data:`MAX_DEFINITIONS`). ``exclude`` are numbers the guide already links
    otherwise (the pull request whose code a fix fixes, the one a revert reverts): no
    history-only link names them.
    """
    mine = set(definitions)
    by_number = {c.number: c for c in history}
    named = named_predecessors(body, repository, own)
    if named:
        number, phrase = named[0]
        earlier = by_number.get(number)
        shared = _shared(definitions, earlier.definitions) if earlier is not None and len(mine) <= MAX_DEFINITIONS else ()
        days = _days(earlier.merged_at, merged_at) if earlier is not None else None
        same = earlier is not None and bool(author) and earlier.author == author
        return FollowLink(number, phrase, shared, days, same)
    if not mine or len(mine) > MAX_DEFINITIONS or not author:
        return None
    skip = set(exclude) | {own}
    found = []
    for change in reversed(history):  # newest first: the walk stops past the window
        if change.author != author or change.number in skip or not change.definitions:
            continue
        days = _days(change.merged_at, merged_at)
        if days is not None and days > window_days:
            break
        if days is None or len(change.definitions) > MAX_DEFINITIONS:
            continue
        shared = _shared(definitions, change.definitions)
        if shared:
            found.append(FollowLink(change.number, "", shared, days, True))
    return found[0] if len(found) == 1 else None


def _shared(mine: Sequence[str], theirs: Iterable[str]) -> tuple[str, ...]:
    other = set(theirs)
    return tuple(d for d in mine if d in other)


def _days(earlier: str | None, later: str | None) -> int | None:
    """Whole days from ``earlier`` to ``later`` (ISO-8601), ``None`` when either is unknown
    or ``earlier`` is not before ``later``."""
    start, end = utc_moment(earlier), utc_moment(later)
    if start is None or end is None or start >= end:
        return None
    return int((end - start).total_seconds() // 86400)


def describe(link: FollowLink) -> dict:
    """The JSON form of ``link``: ``{"number", "phrase", "shared", "days", "same_author"}``."""
    return {"number": link.number, "phrase": link.phrase, "shared": list(link.shared), "days": link.days, "same_author": link.same_author}
