"""The shapes of what a reader should look at: focus points, review threads, follow-ups, housekeeping."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, NamedTuple

TODO_PREFIX = re.compile(r"^\s*(TODO|FIXME|XXX|HACK)\b\s*(\([^)]*\))?\s*:?\s*", re.IGNORECASE)

MAX_FOCUS = 6
MAX_PER_FILE = 2
MAX_NAMES = 3
#: Weights of the tiers, highest first (they only order points).
BREAKING_WEIGHT = 120
FACT_WEIGHT = 100
CARRIER_WEIGHT = 90
RULE_NOTE_WEIGHT = 75
API_WEIGHT = 60
#: An added ``assert``: below every point on a change of behaviour (a changed call or
#: default, a new or changed function: the "+N lines" point of a source file weighs 20 or more).
ASSERT_WEIGHT = 19
DEP_WEIGHT = 55
IsConfig = Callable[[str, "str | None"], bool]


#: The empty mapping a point without params or text shares (read-only, so sharing is safe).
_NOTHING: Mapping[str, Any] = MappingProxyType({})


class FocusPoint(NamedTuple):
    """One numbered point of the guide.

    ``file``/``symbol`` name what to open; ``key``/``params`` say why (a message key),
    or ``text`` holds a rule's own note by language. ``weight`` only orders points.
    A named tuple: every changed file offers a few candidates (thousands on a big
    pull request) and frozen dataclasses cost several times more to build.
    """

    file: str | None
    symbol: str | None
    key: str | None = None
    params: Mapping[str, Any] = _NOTHING
    text: Mapping[str, str] = _NOTHING
    weight: int = 0
    #: What the point rests on (:class:`bot.engine.analysis.model.Evidence`); a point without any is not shown.
    evidence: tuple[Any, ...] = ()


def file_point(file: str, symbol: str | None, key: str, params: Mapping[str, Any], weight: int) -> FocusPoint:
    """``FocusPoint(file, symbol, key, params, weight=weight)`` without the named tuple's
    keyword handling: a point made for every changed file of a pull request."""
    return _new_point(FocusPoint, (file, symbol, key, params, _NOTHING, weight, ()))


_new_point = tuple.__new__


@dataclass(frozen=True, slots=True)
class Thread:
    """A review-comment thread: where, how many comments, who, and its opening words."""

    path: str
    line: int | None
    comments: int
    participants: tuple[str, ...]
    opening: str
    has_suggestion: bool
    author_replied: bool


@dataclass(frozen=True, slots=True)
class ReviewSummary:
    """Review facts: each reviewer's last decisive state, and the busiest threads first."""

    reviewers: tuple[tuple[str, str, bool], ...] = ()
    threads: tuple[Thread, ...] = ()

    @property
    def empty(self) -> bool:
        """True when nobody reviewed or commented on the diff."""
        return not self.reviewers and not self.threads


@dataclass(frozen=True, slots=True)
class FollowUp:
    """Something left to do after the merge (a message key and its parameters)."""

    key: str
    params: Mapping[str, Any] = field(default_factory=dict)
    file: str | None = None
    #: What the follow-up rests on (:class:`bot.engine.analysis.model.Evidence`).
    evidence: tuple[Any, ...] = ()


#: The groups of :class:`Housekeeping`, in field order (each a message ``house.<group>``).
HOUSEKEEPING_GROUPS = ("generated", "locks", "images", "owners", "formatting", "comments")


@dataclass(frozen=True, slots=True)
class Housekeeping:
    """Changes nobody needs to read line by line, by what they are.

    Each field holds paths: ``generated`` (generated files), ``locks`` (lock files),
    ``images`` (CI files that only move an image or version tag), ``owners``
    (CODEOWNERS), ``formatting`` (only whitespace or line breaks changed),
    ``comments`` (only comments changed).
    """

    generated: tuple[str, ...] = ()
    locks: tuple[str, ...] = ()
    images: tuple[str, ...] = ()
    owners: tuple[str, ...] = ()
    formatting: tuple[str, ...] = ()
    comments: tuple[str, ...] = ()

    def groups(self) -> tuple[tuple[str, tuple[str, ...]], ...]:
        """``(field name, paths)`` of every group, in field order (empty groups included)."""
        return tuple((name, getattr(self, name)) for name in HOUSEKEEPING_GROUPS)

    @property
    def paths(self) -> tuple[str, ...]:
        """Every path, in field order."""
        return tuple(path for _, paths in self.groups() for path in paths)

    def __bool__(self) -> bool:
        return bool(self.paths)


#: Behaviour fact kinds that make a point, and the weight of each (breaking facts rank higher).


#: File kinds whose changes a reader studies as code.
CODE_KINDS = ("source", "config", "build", "example")
#: Files searched for the identifiers a description names (a 3,000-file PR has no time for more).
MAX_DESCRIBED_FILES = 300
#: A line that is only a comment, in the common languages.
#: (``*`` only as a block comment's continuation, ``* text`` or ``*/``: ``*args,`` is code;
#: ``--`` only followed by a space: ``--flag \`` in a shell command is code.)
COMMENT_LINE = re.compile(r"^\s*(#|//|/\*|\*(?:\s|/|$)|--(?:\s|$)|<!--|;)")
