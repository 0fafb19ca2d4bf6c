"""Rule conditions: each tests one fact of a pull request and says in plain English why it held.

Every condition present in a rule must hold. ``check(facts, state)`` returns
whether it held and, when it did, appends a reason to ``state.reasons`` and
records what it matched (captures, files, symbols) for the rule's effects.
:mod:`bot.rules.schema` builds these from rule files.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import regex

from bot.rules.facts import Facts
from bot.rules.globs import Glob

#: How many names a reason lists before saying "and N more".
_SHOWN = 3


@dataclass
class MatchState:
    """What the conditions of one rule found so far.

    ``files`` are positions of changed files the ``files`` conditions matched
    (``None``: no files condition); ``line_files`` those where a line condition
    (``added``, ``removed``, ...) matched; ``symbols``/``keys`` are ``(file, name)``
    pairs from the ``symbols``/``removed_*`` conditions.
    """

    reasons: list[str] = field(default_factory=list)
    captures: dict[str, str] = field(default_factory=dict)
    files: frozenset[int] | None = None
    line_files: set[int] | None = None
    symbols: list[tuple[int, str]] = field(default_factory=list)
    keys: list[tuple[int, str]] = field(default_factory=list)

    def child(self) -> MatchState:
        """A fresh state for one alternative of ``any:``, seeing the files matched so far."""
        return MatchState(files=self.files)


@dataclass(frozen=True, slots=True)
class Pattern:
    """A compiled rule regex and its source text."""

    text: str
    compiled: regex.Pattern

    @property
    def groups(self) -> tuple[str, ...]:
        """Its named capture groups."""
        return tuple(self.compiled.groupindex)


def _names(items: Sequence[str], shown: int = _SHOWN) -> str:
    items = list(dict.fromkeys(items))
    text = ", ".join(items[:shown])
    return text + (f" and {len(items) - shown} more" if len(items) > shown else "")


def _quote(text: str, limit: int = 80) -> str:
    text = text.strip()
    return '"' + (text if len(text) <= limit else text[: limit - 1] + "…") + '"'


def _timed_out(facts: Facts, state: MatchState, what: str, pattern: Pattern) -> None:
    note = f"{what} regex {_quote(pattern.text)} ran out of time ({facts.timeout:g} s) and counts as no match"
    facts.warnings.append(note)
    state.reasons.append(note)


@dataclass(frozen=True, slots=True)
class FilesCondition:
    """``files:`` globs (labeler vocabulary).

    ``any``: at least one changed file matches one of these globs; ``all``: every
    changed file matches one; ``exclude``: files set aside before both tests. An
    empty pull request matches neither.
    """

    any: tuple[Glob, ...] = ()
    all: tuple[Glob, ...] = ()
    exclude: tuple[Glob, ...] = ()

    def check(self, facts: Facts, state: MatchState) -> bool:
        index = facts.index
        total = len(facts.paths)
        excluded: frozenset[int] = frozenset()
        for g in self.exclude:
            excluded |= index.match(g)
        considered = total - len(excluded)
        if not considered:
            return False
        matched: frozenset[int] | None = None
        parts = []
        if self.any:
            matched, globs = self._union(index, self.any, excluded)
            if not matched:
                return False
            parts.append(f"{len(matched)} of {considered} changed files match {_names(globs)}")
        if self.all:
            every, globs = self._union(index, self.all, excluded)
            if len(every) != considered:
                return False
            parts.append(f"all {considered} changed files match {_names(globs)}")
            if matched is None:
                matched = every
        note = f" ({len(excluded)} excluded)" if excluded else ""
        state.reasons.append("files: " + "; ".join(parts) + note)
        state.files = matched if state.files is None else state.files & matched
        return bool(state.files)

    @staticmethod
    def _union(index, globs: tuple[Glob, ...], excluded: frozenset[int]) -> tuple[frozenset[int], list[str]]:
        found: frozenset[int] = frozenset()
        used = []
        for g in globs:
            hit = index.match(g)
            if excluded:
                hit = hit - excluded
            if hit:
                found |= hit
                used.append(g.pattern)
        return found, used


@dataclass(frozen=True, slots=True)
class TextCondition:
    """``title:``/``body:`` regexes (a list means any of); the first that matches gives its named captures."""

    field: str
    patterns: tuple[Pattern, ...]

    def check(self, facts: Facts, state: MatchState) -> bool:
        text = facts.title if self.field == "title" else facts.body
        for p in self.patterns:
            budget = facts.budget()
            m = budget.search(p.compiled, text)
            if budget.timed_out:
                _timed_out(facts, state, self.field, p)
                continue
            if m is None:
                continue
            caps = {k: v.strip() for k, v in m.groupdict().items() if v is not None and v.strip()}
            for k, v in caps.items():
                state.captures.setdefault(k, v)
            shown = f" ({', '.join(f'{k}={v}' for k, v in caps.items())})" if caps else ""
            where = "" if self.field == "title" else f" at {_quote(m.group())}"
            state.reasons.append(f"{self.field} matched {_quote(p.text)}{where}{shown}")
            return True
        return False


#: Line conditions: name -> what a reason calls the lines.
LINE_FIELDS = {
    "added": "added lines",
    "removed": "removed lines",
    "symbols": "touched symbols",
    "removed_definitions": "removed public definitions",
    "removed_config_keys": "removed config keys",
    "config_keys": "changed config keys",
    "dependencies": "changed dependencies",
}


@dataclass(frozen=True, slots=True)
class LinesCondition:
    """A regex over diff lines or names (see :data:`LINE_FIELDS`), searched per changed file.

    With ``in_matched_files`` (the default), only files the rule's ``files``
    condition matched are searched.
    """

    field: str
    patterns: tuple[Pattern, ...]
    in_matched_files: bool = True
    keep: int = 20

    def check(self, facts: Facts, state: MatchState) -> bool:
        corpus = facts.corpus(self.field)
        within = state.files if self.in_matched_files else None
        wants_names = self.field != "added" and self.field != "removed"
        for p in self.patterns:
            budget = facts.budget()
            hits = corpus.search(p.compiled, budget, files=within, per_file=None if wants_names else 1, limit=self.keep)
            if budget.timed_out:
                _timed_out(facts, state, LINE_FIELDS[self.field], p)
            if not hits:
                continue
            files = {h.file for h in hits}
            state.line_files = files if state.line_files is None else state.line_files | files
            if wants_names:
                pairs = [(h.file, h.line) for h in hits]
                (state.keys if self.field.endswith("config_keys") else state.symbols).extend(pairs)
                state.reasons.append(
                    f"{LINE_FIELDS[self.field]} match {_quote(p.text)}: {_names([h.line for h in hits])}"
                )
            else:
                first = hits[0]
                more = "" if len(files) == 1 else f" and {len(files) - 1} more file{'s' if len(files) > 2 else ''}"
                state.reasons.append(
                    f"{LINE_FIELDS[self.field]} match {_quote(p.text)} in {facts.paths[first.file]}{more}: {_quote(first.line, 60)}"
                )
            return True
        return False


@dataclass(frozen=True, slots=True)
class NameCondition:
    """``authors:``/``base_branch:``/``scopes:``: a name against simple globs (``*``, ``?``; brackets are literal).

    Logins and scopes compare case-insensitively, branch names exactly. ``scopes``
    tests every scope of the title and records the matching ones as the ``scope``
    capture.
    """

    field: str
    globs: tuple[tuple[str, regex.Pattern], ...]

    def check(self, facts: Facts, state: MatchState) -> bool:
        if self.field == "scopes":
            found = [s for s in facts.scopes if any(rx.fullmatch(s) for _, rx in self.globs)]
            if not found:
                return False
            state.captures.setdefault("scope", ", ".join(found))
            state.reasons.append(f"title scopes [{', '.join(facts.scopes)}] include {', '.join(found)}")
            return True
        value = facts.snapshot.author if self.field == "authors" else facts.snapshot.base_branch
        for text, rx in self.globs:
            if rx.fullmatch(value):
                what = "author" if self.field == "authors" else "base branch"
                state.reasons.append(f"{what} {value} matches {_quote(text)}")
                return True
        return False


@dataclass(frozen=True, slots=True)
class BotsCondition:
    """``bots: true`` holds for bot authors (GitHub user ``type`` ``Bot`` or a ``[bot]`` login), ``false`` for people."""

    value: bool

    def check(self, facts: Facts, state: MatchState) -> bool:
        is_bot = facts.snapshot.author_is_bot or facts.snapshot.author.endswith("[bot]")
        if is_bot != self.value:
            return False
        state.reasons.append(f"author {facts.snapshot.author} is {'a bot' if is_bot else 'not a bot'}")
        return True


@dataclass(frozen=True, slots=True)
class CountCondition:
    """``min_lines``/``max_lines``/``min_files``/``max_files``, inclusive bounds.

    Lines are changed lines excluding generated/lock and binary files
    (``DiffAnalysis.lines_changed``); files are the pull request's changed files
    (GitHub's ``changed_files``, which counts past the 3000 it lists).
    """

    field: str
    bound: int

    def check(self, facts: Facts, state: MatchState) -> bool:
        lines = self.field.endswith("lines")
        value = facts.lines_changed if lines else facts.file_count
        ok = value >= self.bound if self.field.startswith("min") else value <= self.bound
        if ok:
            op = ">=" if self.field.startswith("min") else "<="
            state.reasons.append(f"{'lines changed' if lines else 'changed files'} {value:,} {op} {self.bound:,}")
        return ok


@dataclass(frozen=True, slots=True)
class KindsCondition:
    """``kinds:`` file kinds from the analysis: ``any`` -- some changed file is of one of them; ``all`` -- every one is.

    ``any`` narrows the rule's matched files to files of those kinds (so with a
    ``files`` condition, one file must satisfy both).
    """

    any: frozenset[str] = frozenset()
    all: frozenset[str] = frozenset()

    def check(self, facts: Facts, state: MatchState) -> bool:
        kinds = facts.kinds
        if not kinds:
            return False
        parts = []
        if self.any:
            of_kind = frozenset().union(*(facts.files_of_kind(k) for k in self.any))
            if state.files is not None:
                of_kind &= state.files
            if not of_kind:
                return False
            state.files = of_kind
            parts.append(f"{len(of_kind)} of {len(kinds)} changed files are {' or '.join(sorted(self.any))}")
        if self.all:
            if sum(len(facts.files_of_kind(k)) for k in self.all) != len(kinds):
                return False
            parts.append(f"all {len(kinds)} changed files are {' or '.join(sorted(self.all))}")
        state.reasons.append("kinds: " + "; ".join(parts))
        return True


@dataclass(frozen=True, slots=True)
class AnyCondition:
    """``any:`` a list of condition groups; holds when at least one group holds (all of its conditions).

    Every group is tried, so reasons, captures and matched files come from all that held.
    """

    groups: tuple[tuple[object, ...], ...]

    def check(self, facts: Facts, state: MatchState) -> bool:
        held = []
        for group in self.groups:
            sub = state.child()
            if all(c.check(facts, sub) for c in group):
                held.append(sub)
            else:
                # A timeout inside a failed group still deserves a mention.
                state.reasons.extend(r for r in sub.reasons if "ran out of time" in r)
        if not held:
            return False
        narrowed = [s.files for s in held if s.files is not None and s.files is not state.files]
        if narrowed:
            state.files = frozenset().union(*narrowed)
        for sub in held:
            state.reasons.extend(sub.reasons)
            for k, v in sub.captures.items():
                state.captures.setdefault(k, v)
            if sub.line_files is not None:
                state.line_files = set(sub.line_files) | (state.line_files or set())
            state.symbols.extend(sub.symbols)
            state.keys.extend(sub.keys)
        return True


def check_all(conditions: Sequence[object], facts: Facts, state: MatchState) -> bool:
    """True when every condition holds (stops at the first that does not)."""
    return all(c.check(facts, state) for c in conditions)
