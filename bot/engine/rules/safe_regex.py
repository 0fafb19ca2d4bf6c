"""Regular expressions that cannot hang the bot.

Rule regexes come from repository owners and run over untrusted text (titles,
bodies, diffs of any size), so three guards apply:

* at load time, :func:`compile_rule_regex` rejects a repeated group whose body
  is nothing but repeated items, such as ``(a+)+`` or ``(\\w+\\s*)*`` -- the
  classic shape of catastrophic backtracking. A repeated group that holds at
  least one plain literal character (``(\\[[^\\]]*\\]\\s*)+``) is accepted,
  because the literal anchors each repetition;
* every condition has a budget of CPU time, counted on the calling thread's clock
  (:data:`CLOCK`), and every match call passes what is left as the ``regex``
  module's ``timeout=``; a call that runs out counts as "no match" and the caller
  reports it. Wall-clock time is never counted: a busy machine (other processes,
  other threads of this one) slows a match down but does not make it run out, so a
  pull request gets the same labels however loaded the server is;
* callers cap the text they scan (see :mod:`bot.engine.rules.corpus`).

Rule regexes are case-insensitive and multi-line (``^``/``$`` match at line
breaks). A pattern that starts with ``(?-i)`` is case-sensitive.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import regex

#: Flags every rule regex is compiled with.
RULE_FLAGS = regex.IGNORECASE | regex.MULTILINE | regex.VERSION0

#: Seconds of CPU time one condition may spend matching, over all the text it scans.
DEFAULT_TIMEOUT = 0.1
#: The clock budgets count: CPU seconds of the calling thread. Time the thread spends
#: waiting (for a core, for the GIL) does not advance it. ``regex``'s own ``timeout=``
#: counts the process's CPU time, never less than this thread's: it ends a runaway
#: match, and a call it ends while this thread still has budget (other threads of the
#: process used the CPU meanwhile) is made again with what is left (:data:`_MAX_TRIES`).
CLOCK = time.thread_time

_MIN_CALL_TIMEOUT = 0.001
#: Calls one search may take when ``regex``'s timeout ends it before this thread's budget is spent.
_MAX_TRIES = 4
_QUANT_CHARS = "*+?{"


class RegexProblem(ValueError):
    """Raised by :func:`compile_rule_regex` for a pattern that does not compile or could backtrack forever."""


def compile_rule_regex(pattern: str) -> regex.Pattern:
    """Compile a rule regex with :data:`RULE_FLAGS`.

    Raises :class:`RegexProblem` with a readable message when the pattern is not a
    string, does not compile, or has a nested unbounded repetition without a literal
    anchor (see the module docstring).
    """
    if not isinstance(pattern, str):
        raise RegexProblem(f"expected a regex string, got {type(pattern).__name__}")
    if not pattern:
        raise RegexProblem("empty regex (it would match everything)")
    try:
        compiled = regex.compile(pattern, RULE_FLAGS)
    except (regex.error, ValueError, OverflowError) as exc:
        raise RegexProblem(f"invalid regex {pattern!r}: {exc}") from None
    risky = nested_repetition(pattern)
    if risky:
        raise RegexProblem(
            f"regex {pattern!r} repeats a group of repeated items ({risky}), which can take exponential time;"
            " put a literal character in the group, or make it atomic with (?>...) or possessive with ++"
        )
    return compiled


@dataclass
class Budget:
    """CPU time left for one condition's match calls, in seconds (``timed_out`` once it ran out)."""

    seconds: float = DEFAULT_TIMEOUT
    timed_out: bool = False

    def search(self, pattern: regex.Pattern, text: str, pos: int = 0, endpos: int | None = None) -> regex.Match | None:
        """``pattern.search`` within the remaining budget; ``None`` when it ran out first."""
        if self.timed_out:
            return None
        match, used, ran_out = _search(pattern, text, pos, endpos, self.seconds)
        self.seconds -= used
        if ran_out or self.seconds <= 0:
            # A call that finished keeps its answer, but nothing is left for the next one.
            self.timed_out = True
        return None if ran_out else match


def search_once(pattern: regex.Pattern, text: str, seconds: float) -> tuple[regex.Match | None, bool]:
    """``(match, timed_out)`` of one ``pattern.search(text)`` on a fresh budget of ``seconds`` of CPU time.

    ``timed_out`` is true only when the search ran out of its budget before it had an
    answer (then ``match`` is ``None``); a search that finished gives its answer.
    """
    # The first call written out: nearly every search ends in it, and its time is not needed.
    start = CLOCK()
    try:
        return pattern.search(text, 0, timeout=max(seconds, _MIN_CALL_TIMEOUT)), False
    except TimeoutError:
        used = CLOCK() - start
    if used >= seconds - _MIN_CALL_TIMEOUT:
        return None, True
    match, _, ran_out = _search(pattern, text, 0, None, seconds, used, _MAX_TRIES - 1)
    return match, ran_out


def _search(
    pattern: regex.Pattern, text: str, pos: int, endpos: int | None, seconds: float, used: float = 0.0, tries: int = _MAX_TRIES
) -> tuple[regex.Match | None, float, bool]:
    """``(match, cpu_seconds_used, ran_out)`` of ``pattern.search`` within ``seconds`` of this
    thread's CPU time, of which ``used`` is spent already, in at most ``tries`` calls."""
    for _ in range(tries):
        start = CLOCK()
        try:
            timeout = max(seconds - used, _MIN_CALL_TIMEOUT)
            if endpos is None:
                match = pattern.search(text, pos, timeout=timeout)
            else:
                match = pattern.search(text, pos, endpos, timeout=timeout)
        except TimeoutError:
            used += CLOCK() - start
            if used >= seconds - _MIN_CALL_TIMEOUT:
                return None, used, True
            continue  # the process's CPU clock ran ahead of this thread's
        return match, used + (CLOCK() - start), False
    return None, used, True


# --- nested repetition detection -------------------------------------------------
#
# A tiny parser of regex syntax: enough to see groups, character classes, escapes and
# quantifiers. It never decides whether a pattern is valid (regex.compile does that).


@dataclass
class _Item:
    kind: str  # "literal", "class", "group", "atomic", "anchor"
    min: int = 1
    max: float = 1
    possessive: bool = False
    text: str = ""
    alternatives: list[list[_Item]] | None = None

    @property
    def unbounded(self) -> bool:
        return self.max == float("inf") and not self.possessive

    @property
    def fixed(self) -> bool:
        return self.min >= 1


def nested_repetition(pattern: str) -> str | None:
    """The first risky group text (``(a+)+``) in ``pattern``, or ``None``.

    Risky: a group repeated without bound, not atomic or possessive, that has an
    alternative made only of repeated or optional items (no mandatory literal).
    """
    try:
        items, _ = _parse_sequence(pattern, 0)
    except (IndexError, ValueError):
        return None
    return _find_risky(items)


def _find_risky(items: list[_Item]) -> str | None:
    for item in items:
        if item.kind == "group" and item.alternatives is not None:
            if item.unbounded:
                for alt in item.alternatives:
                    if _has_unbounded(alt) and not any(_anchored(i) for i in alt):
                        return item.text
            for alt in item.alternatives:
                found = _find_risky(alt)
                if found:
                    return found
    return None


def _anchored(item: _Item) -> bool:
    """True when ``item`` consumes a plain literal character exactly once."""
    if not item.fixed or item.max != 1:
        return False
    if item.kind == "literal":
        return True
    if item.kind in ("group", "atomic") and item.alternatives:
        return all(any(_anchored(i) for i in alt) for alt in item.alternatives)
    return False


def _has_unbounded(items: list[_Item]) -> bool:
    for item in items:
        if item.unbounded:
            return True
        if item.kind == "group" and item.alternatives and any(_has_unbounded(a) for a in item.alternatives):
            return True
    return False


def _parse_sequence(p: str, i: int) -> tuple[list[_Item], int]:
    """Parse alternatives up to a closing ``)`` or the end; returns the top sequence."""
    alternatives, i = _parse_alternatives(p, i)
    if len(alternatives) == 1:
        return alternatives[0], i
    group = _Item("group", alternatives=alternatives, text=p)
    return [group], i


def _parse_alternatives(p: str, i: int) -> tuple[list[list[_Item]], int]:
    alternatives: list[list[_Item]] = [[]]
    while i < len(p):
        c = p[i]
        if c == ")":
            return alternatives, i
        if c == "|":
            alternatives.append([])
            i += 1
            continue
        item, i = _parse_atom(p, i)
        if item is None:
            continue
        i = _parse_quantifier(p, i, item)
        alternatives[-1].append(item)
    return alternatives, i


def _parse_atom(p: str, i: int) -> tuple[_Item | None, int]:
    c = p[i]
    if c == "\\":
        nxt = p[i + 1] if i + 1 < len(p) else ""
        if nxt in "dDwWsShHvVpPX" or nxt == "N":
            end = i + 2
            if nxt in "pPN" and end < len(p) and p[end] == "{":
                end = p.index("}", end) + 1
            return _Item("class", text=p[i:end]), end
        if nxt in "bBAZzG" or nxt.isdigit():
            return _Item("anchor", min=0, text=p[i : i + 2]), i + 2
        return _Item("literal", text=p[i : i + 2]), i + 2
    if c == "[":
        return _Item("class", text="[...]"), _skip_class(p, i)
    if c == "(":
        return _parse_group(p, i)
    if c in "^$":
        return _Item("anchor", min=0, text=c), i + 1
    if c == ".":
        return _Item("class", text="."), i + 1
    return _Item("literal", text=c), i + 1


def _skip_class(p: str, i: int) -> int:
    j = i + 1
    if j < len(p) and p[j] == "^":
        j += 1
    if j < len(p) and p[j] == "]":
        j += 1
    while j < len(p) and p[j] != "]":
        j += 2 if p[j] == "\\" else 1
    return j + 1


def _parse_group(p: str, i: int) -> tuple[_Item | None, int]:
    start = i
    j = i + 1
    kind = "group"
    if p.startswith("?#", j):
        return None, p.index(")", j) + 1
    if p.startswith("?", j):
        if p.startswith(("?:", "?|"), j):
            j += 2
        elif p.startswith(("?P<", "?<"), j) and not p.startswith(("?<=", "?<!"), j):
            j = p.index(">", j) + 1
        elif p.startswith("?'", j):
            j = p.index("'", j + 2) + 1
        elif p.startswith(">", j + 1):
            kind, j = "atomic", j + 2
        elif p.startswith(("?=", "?!"), j):
            kind, j = "anchor", j + 2
        elif p.startswith(("?<=", "?<!"), j):
            kind, j = "anchor", j + 3
        elif p.startswith("?P=", j) or p.startswith("?P>", j) or p.startswith("?R", j) or p.startswith("?&", j):
            return _Item("class", text="(?backref)"), p.index(")", j) + 1
        else:
            # Inline flags: "(?i)" stands alone, "(?i:...)" opens a group.
            k = j + 1
            while k < len(p) and (p[k].isalpha() or p[k] == "-"):
                k += 1
            if k < len(p) and p[k] == ")":
                return None, k + 1
            j = k + 1
    alternatives, j = _parse_alternatives(p, j)
    end = j + 1  # past ")"
    item = _Item(kind, text=p[start:end], alternatives=alternatives if kind == "group" else None)
    if kind == "anchor":
        item.min = 0
    if kind == "group":
        # A group is "fixed" (a mandatory literal anchor) only through its contents.
        item.min = 1
    return item, end


def _parse_quantifier(p: str, i: int, item: _Item) -> int:
    if i >= len(p) or p[i] not in _QUANT_CHARS:
        return i
    c = p[i]
    if c == "{":
        close = p.find("}", i)
        body = p[i + 1 : close] if close > 0 else ""
        parts = body.split(",")
        if close < 0 or len(parts) > 2 or not all(x.strip().isdigit() or x.strip() == "" for x in parts) or not body:
            return i  # a literal "{"
        lo = int(parts[0]) if parts[0].strip() else 0
        hi: float = lo if len(parts) == 1 else (int(parts[1]) if parts[1].strip() else float("inf"))
        item.min, item.max = min(item.min, lo), hi
        i = close + 1
    else:
        item.min = 0 if c in "*?" else item.min
        item.max = 1 if c == "?" else float("inf")
        i += 1
    if item.kind == "group" and item.max > 1:
        item.text = item.text + p[i - 1] if c != "{" else item.text + p[p.rfind("{", 0, i) : i]
    if i < len(p) and p[i] == "+":
        item.possessive = True
        i += 1
    elif i < len(p) and p[i] == "?":
        i += 1
    return i
