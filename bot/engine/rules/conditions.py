"""Rule conditions: each tests one fact of a pull request and says why it held (a :class:`~bot.engine.rules.reasons.Reason`).

Every condition present in a rule must hold. ``check(facts, state)`` returns
whether it held and, when it did, appends a reason to ``state.reasons`` and
records what it matched (captures, files, symbols) for the rule's effects.
:mod:`bot.engine.rules.schema` builds these from rule files.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from dataclasses import field as dataclass_field

import regex

from bot.engine.rules.facts import Facts
from bot.engine.rules.globs import Glob
from bot.engine.rules.reasons import Joined, Reason
from bot.engine.rules.safe_regex import search_once

#: How many names a reason lists before saying "and N more".
_SHOWN = 3


class MatchState:
    """What the conditions of one rule found so far.

    ``files`` are positions of changed files the ``files`` conditions matched
    (``None``: no files condition); ``line_files`` those where a line condition
    (``added``, ``removed``, ...) matched; ``symbols``/``keys`` are ``(file, name)``
    pairs from the ``symbols``/``removed_*`` conditions.

    A plain slotted class, not a dataclass: every rule of every pull request makes
    one (and one per ``any:`` alternative), so its construction is kept to the bone.
    """

    __slots__ = ("reasons", "captures", "files", "line_files", "symbols", "keys")

    def __init__(self, files: frozenset[int] | None = None) -> None:
        self.reasons: list[str] = []
        self.captures: dict[str, str] = {}
        self.files = files
        self.line_files: set[int] | None = None
        self.symbols: list[tuple[int, str]] = []
        self.keys: list[tuple[int, str]] = []

    def __repr__(self) -> str:
        return (
            f"MatchState(reasons={self.reasons!r}, captures={self.captures!r}, files={self.files!r}, "
            f"line_files={self.line_files!r}, symbols={self.symbols!r}, keys={self.keys!r})"
        )

    def child(self) -> MatchState:
        """A fresh state for one alternative of ``any:``, seeing the files matched so far."""
        return MatchState(self.files)


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
    return Reason("why.names_more", names=text, count=len(items) - shown) if len(items) > shown else text


def _quote(text: str, limit: int = 80) -> str:
    text = text.strip()
    return '"' + (text if len(text) <= limit else text[: limit - 1] + "…") + '"'


def _timed_out(facts: Facts, state: MatchState, what: str, pattern: Pattern) -> None:
    note = Reason("why.timeout", what=Reason(f"why.field.{what}"), pattern=_quote(pattern.text), seconds=f"{facts.timeout:g}")
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

    def hopeless(self, facts: Facts) -> bool:
        """True when the pull request has no file, or no file matches any of the ``any``
        (or of the ``all``) globs: how most files conditions fail, found before any state
        is touched (a glob's result is cached, so nothing is done twice)."""
        if not facts.paths:
            return True
        index = facts.index
        for globs in (self.any, self.all):
            if globs:
                for g in globs:
                    if index.match(g):
                        break
                else:
                    return True
        return False

    def check(self, facts: Facts, state: MatchState) -> bool:
        if self.hopeless(facts):
            return False
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
            parts.append(Reason("why.files.any", matched=len(matched), considered=considered, globs=_names(globs)))
        if self.all:
            every, globs = self._union(index, self.all, excluded)
            if len(every) != considered:
                return False
            parts.append(Reason("why.files.all", considered=considered, globs=_names(globs)))
            if matched is None:
                matched = every
        if excluded:
            state.reasons.append(Reason("why.files_excluded", parts=Joined(parts), excluded=len(excluded)))
        else:
            state.reasons.append(Reason("why.files", parts=Joined(parts)))
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
        seconds = facts.timeout
        for p in self.patterns:
            m, timed_out = search_once(p.compiled, text, seconds)
            if timed_out:
                _timed_out(facts, state, self.field, p)
                continue
            if m is None:
                continue
            caps = {k: v.strip() for k, v in m.groupdict().items() if v is not None and v.strip()}
            for k, v in caps.items():
                state.captures.setdefault(k, v)
            shown = ", ".join(f"{k}={v}" for k, v in caps.items())
            title = self.field == "title"
            found = "" if title else _quote(m.group())
            if shown:
                key = "why.title_captures" if title else "why.body_captures"
            else:
                key = "why.title" if title else "why.body"
            state.reasons.append(Reason(key, pattern=_quote(p.text), found=found, captures=shown))
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
                _timed_out(facts, state, self.field, p)
            if not hits:
                continue
            files = {h.file for h in hits}
            state.line_files = files if state.line_files is None else state.line_files | files
            if wants_names:
                pairs = [(h.file, h.line) for h in hits]
                (state.keys if self.field.endswith("config_keys") else state.symbols).extend(pairs)
                state.reasons.append(
                    Reason("why.lines_names", what=Reason(f"why.field.{self.field}"), pattern=_quote(p.text), names=_names([h.line for h in hits]))
                )
            else:
                first = hits[0]
                said = {"what": Reason(f"why.field.{self.field}"), "pattern": _quote(p.text), "path": facts.paths[first.file]}
                if len(files) == 1:
                    state.reasons.append(Reason("why.lines", **said, line=_quote(first.line, 60)))
                else:
                    state.reasons.append(Reason("why.lines_more", **said, count=len(files) - 1, line=_quote(first.line, 60)))
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
    #: The lower-cased texts when every glob is ASCII without ``*`` or ``?``: an ASCII
    #: scope matches one case-insensitively exactly when it equals it lower-cased.
    literals: frozenset[str] | None = dataclass_field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        texts = [text.strip() for text, _ in self.globs]
        if self.field == "scopes" and all(t.isascii() and "*" not in t and "?" not in t for t in texts):
            object.__setattr__(self, "literals", frozenset(t.lower() for t in texts))

    def _scope_matches(self, scope: str) -> bool:
        if self.literals is not None and scope.isascii():
            return scope.lower() in self.literals
        return any(rx.fullmatch(scope) for _, rx in self.globs)

    def check(self, facts: Facts, state: MatchState) -> bool:
        if self.field == "scopes":
            if not facts.scopes:
                return False
            found = [s for s in facts.scopes if self._scope_matches(s)]
            if not found:
                return False
            state.captures.setdefault("scope", ", ".join(found))
            state.reasons.append(Reason("why.scopes", scopes=", ".join(facts.scopes), found=", ".join(found)))
            return True
        value = facts.snapshot.author if self.field == "authors" else facts.snapshot.base_branch
        for text, rx in self.globs:
            if rx.fullmatch(value):
                key = "why.author" if self.field == "authors" else "why.base_branch"
                state.reasons.append(Reason(key, value=value, pattern=_quote(text)))
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
        key = "why.bot" if is_bot else "why.not_bot"
        state.reasons.append(Reason(key, author=facts.snapshot.author))
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
            key = "why.lines_changed" if lines else "why.changed_files"
            state.reasons.append(Reason(key, value=f"{value:,}", op=op, bound=f"{self.bound:,}"))
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
            parts.append(Reason("why.kinds.any", matched=len(of_kind), total=len(kinds), kinds=Joined(sorted(self.any), "why.or")))
        if self.all:
            if sum(len(facts.files_of_kind(k)) for k in self.all) != len(kinds):
                return False
            parts.append(Reason("why.kinds.all", total=len(kinds), kinds=Joined(sorted(self.all), "why.or")))
        state.reasons.append(Reason("why.kinds", parts=Joined(parts)))
        return True


@dataclass(frozen=True, slots=True)
class AnyCondition:
    """``any:`` a list of condition groups; holds when at least one group holds (all of its conditions).

    Every group is tried, so reasons, captures and matched files come from all that held.
    """

    groups: tuple[tuple[object, ...], ...]

    def check(self, facts: Facts, state: MatchState) -> bool:
        held = []
        files = state.files
        for group in self.groups:
            first = group[0]
            if type(first) is FilesCondition and first.hopeless(facts):
                continue  # it fails before noting anything: no state to make for the group
            if type(first) is NameCondition and first.field == "scopes" and not facts.scopes:
                continue  # likewise: a title without scopes matches no scopes condition
            sub = MatchState(files)
            for c in group:
                if not c.check(facts, sub):
                    # A timeout inside a failed group still deserves a mention.
                    if sub.reasons:
                        state.reasons.extend(r for r in sub.reasons if "ran out of time" in r)
                    break
            else:
                held.append(sub)
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


def condition_globs(conditions: Sequence[object]) -> Iterator[Glob]:
    """Every glob the ``files`` conditions among ``conditions`` use, ``any:`` groups included."""
    for c in conditions:
        if isinstance(c, FilesCondition):
            yield from (*c.any, *c.all, *c.exclude)
        elif isinstance(c, AnyCondition):
            for group in c.groups:
                yield from condition_globs(group)


def check_all(conditions: Sequence[object], facts: Facts, state: MatchState) -> bool:
    """True when every condition holds (stops at the first that does not)."""
    for c in conditions:
        if not c.check(facts, state):
            return False
    return True
