"""What a rule file yields when it matches: plain frozen dataclasses, no I/O."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

#: The change types a rule may set (``type:`` effect), in precedence order for ties.
CHANGE_TYPES = ("revert", "fix", "feature", "perf", "refactor", "test", "docs", "ci", "build", "deps", "chore")

#: Languages the guide is written in.
LANGUAGES = ("en", "zh")


@dataclass(frozen=True, slots=True)
class Problem:
    """One thing wrong in a rule file, reported as ``FILE:LINE: rule ID: message``."""

    file: str
    line: int
    message: str
    rule_id: str | None = None

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}"
        return f"{where}: rule {self.rule_id}: {self.message}" if self.rule_id else f"{where}: {self.message}"


class RuleError(ValueError):
    """Raised when rule files are invalid; ``problems`` lists every finding, in file order."""

    def __init__(self, problems: list[Problem]):
        self.problems = list(problems)
        super().__init__("\n".join(str(p) for p in self.problems))


@dataclass(slots=True, unsafe_hash=True)  # read-only by convention: see bot.engine.analysis.model
class LabelSpec:
    """A label's look on GitHub: ``color`` is 6 hex digits without ``#`` ("Create a label")."""

    name: str
    color: str = "ededed"
    description: str = ""


@dataclass(slots=True, unsafe_hash=True)  # read-only by convention: see bot.engine.analysis.model
class FocusNote:
    """A point a reader should look at, from a rule's ``focus`` effect.

    ``text`` maps a language code (``en``, ``zh``) to the note with placeholders filled.
    ``file``/``symbol`` name what the note is about, when the rule matched one.
    """

    text: Mapping[str, str]
    file: str | None = None
    symbol: str | None = None


@dataclass(slots=True, unsafe_hash=True)  # read-only by convention: see bot.engine.analysis.model
class RuleHit:
    """One rule that matched a pull request, with its effects rendered.

    ``source`` is ``"FILE:LINE"`` of the rule; ``reasons`` are short English sentences
    saying which conditions held and on what (shown by ``/prguide why``);
    ``importance`` is the rule's points (may be negative); ``audience`` maps a
    language code to a sentence.
    """

    rule_id: str
    source: str
    labels: tuple[str, ...] = ()
    areas: tuple[str, ...] = ()
    change_type: str | None = None
    importance: int = 0
    breaking: bool = False
    audience: Mapping[str, str] = field(default_factory=dict)
    focus: tuple[FocusNote, ...] = ()
    skip: bool = False
    reasons: tuple[str, ...] = ()
    captures: Mapping[str, str] = field(default_factory=dict)
    #: Changed files the rule's ``files`` condition matched (empty when it has none);
    #: the guide groups "what changed" by area with it.
    files: tuple[str, ...] = ()
