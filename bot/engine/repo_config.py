"""A repository's own prguide settings: the ``.github/prguide.yml`` file.

Pure: text in, :class:`RepoConfig` out. The file is optional, and so is every key::

    lang: zh                          # the guide's language: en | zh
    relabel: [maintainers, authors]   # who may use /prguide label (default: maintainers)
    narrator: off                     # no narrated guide here, even when the server has a model
    comment: all                      # the least reading level that gets a comment: all | quick | deep | off
    disable: [size-xxl]               # ids of shipped rules to switch off
    labels: {...}                     # label colours and descriptions, as in a rule file
    areas: {...}                      # as in a rule file
    rules:                            # extra rules, in the rule-file format
      - id: my-area
        files: src/engine/**
        labels: [area/engine]

``rules``, ``labels``, ``areas`` and ``disable`` mean what they mean in a rule file
and are checked by :func:`bot.engine.rules.parse_rules`, which also reports unknown keys.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from bot.engine.rules import RuleError, parse_rules
from bot.engine.rules.model import LANGUAGES, Problem
from bot.engine.rules.yamlsrc import YMap, load_yaml

DEFAULT_SOURCE = ".github/prguide.yml"

#: Who may change a guide's labels with ``/prguide label``: people with write access
#: or more to the repository ("maintainers"), and the pull request's author ("authors").
RELABEL_ROLES = ("maintainers", "authors")
DEFAULT_RELABEL = ("maintainers",)

#: Keys this module reads; the rule-file keys are :data:`bot.engine.rules.schema.TOP_KEYS`.
OWN_KEYS = ("lang", "relabel", "backfill", "backfill_comments", "narrator", "comment")
#: The most merged pull requests one backfill reads (``backfill: N``), and the default.
MAX_BACKFILL = 1000
DEFAULT_BACKFILL = 100
#: ``comment:`` values, from most to fewest comments: the least reading level that gets
#: a comment (``all``: every guide, ``quick``: quick and deep reads, ``deep``: deep reads
#: only, ``off``: none). Below it, labels and the tag view are still updated.
COMMENT_CHOICES = ("all", "quick", "deep", "off")
#: The default: every guide gets its comment; it is short (a light PR's shows at most 8 lines).
DEFAULT_COMMENT = "all"
#: The reading levels each ``comment:`` value posts a comment for.
_COMMENTED_LEVELS = {
    "all": frozenset(("deep", "quick", "skim", "skip")),
    "quick": frozenset(("deep", "quick")),
    "deep": frozenset(("deep",)),
    "off": frozenset(),
}


class RepoConfigError(RuleError):
    """Raised by :func:`parse_repo_config`; ``problems`` give file, line and message."""


@dataclass(frozen=True, slots=True)
class RepoConfig:
    """One repository's settings.

    ``lang``: ``"en"``/``"zh"``, or ``None`` for the server's default. ``rules``: a
    :class:`bot.engine.rules.RuleSet` with the file's rules, labels, areas and ``disable`` list,
    to merge onto the base rules with ``base.merged(rules)``; ``None`` when the file
    has none of these. ``disable``: the disabled rule ids (also inside ``rules``).
    ``relabel``: roles from :data:`RELABEL_ROLES`. ``problems``: why the file could
    not be used (then every other field has its default, and the guide says so).
    ``backfill``: how many of the last merged pull requests get a stored guide when the
    app is installed or on ``/prguide backfill`` (0..:data:`MAX_BACKFILL`).
    ``backfill_comments``: whether those old pull requests also get the comment.
    """

    lang: str | None = None
    rules: Any = None
    disable: tuple[str, ...] = ()
    relabel: tuple[str, ...] = DEFAULT_RELABEL
    problems: tuple[Problem, ...] = ()
    source: str = DEFAULT_SOURCE
    backfill: int = DEFAULT_BACKFILL
    backfill_comments: bool = False
    #: ``narrator: off`` turns narration off for this repository (when the server has a model).
    narrator: bool = True
    #: ``comment:``: the least reading level that gets a comment (:data:`COMMENT_CHOICES`).
    comment: str = DEFAULT_COMMENT

    def wants_comment(self, reading_level: str) -> bool:
        """True when a guide of ``reading_level`` (``deep``/``quick``/``skim``/``skip``) gets a comment."""
        return reading_level in _COMMENTED_LEVELS.get(self.comment, _COMMENTED_LEVELS[DEFAULT_COMMENT])

    @classmethod
    def default(cls, problems: tuple[Problem, ...] = (), source: str = DEFAULT_SOURCE) -> RepoConfig:
        """The settings of a repository without (a usable) ``.github/prguide.yml``."""
        return cls(problems=tuple(problems), source=source)


def parse_repo_config(text: str, source: str = DEFAULT_SOURCE) -> RepoConfig:
    """Parse the text of ``.github/prguide.yml``.

    An empty file (or one of comments only) gives the defaults. Raises
    :class:`RepoConfigError` listing every problem as ``FILE:LINE: message``, in line
    order: YAML syntax, a top level that is not a mapping, unknown keys (with the
    closest known key suggested), a bad ``lang``, ``relabel``, ``backfill``,
    ``backfill_comments``, ``narrator`` or ``comment``, and whatever
    :func:`bot.engine.rules.parse_rules` finds in the rule-file keys.
    """
    doc, syntax = load_yaml(text, source)
    if doc is None and not syntax:
        return RepoConfig(source=source)

    problems: list[Problem] = []
    rules = None
    try:
        rules = parse_rules(text, source, extra_keys=OWN_KEYS)
    except RuleError as exc:
        # parse_rules reports syntax errors, a non-mapping top level and unknown keys too.
        problems = list(exc.problems)

    lang: str | None = None
    relabel = DEFAULT_RELABEL
    narrator = True
    comment = DEFAULT_COMMENT
    if isinstance(doc, YMap):
        if "lang" in doc:
            value = doc["lang"]
            if value in LANGUAGES:
                lang = value
            else:
                problems.append(
                    Problem(source, doc.line_of("lang"), f"lang must be one of {', '.join(LANGUAGES)}, got {value!r}")
                )
        if "relabel" in doc:
            relabel, bad = _roles(doc["relabel"])
            if bad:
                problems.append(
                    Problem(
                        source,
                        doc.line_of("relabel"),
                        f"relabel must be one or more of {', '.join(RELABEL_ROLES)}, got {bad}",
                    )
                )

    backfill, backfill_comments = DEFAULT_BACKFILL, False
    if isinstance(doc, YMap):
        if "backfill" in doc:
            value = doc["backfill"]
            if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_BACKFILL:
                backfill = value
            else:
                problems.append(
                    Problem(source, doc.line_of("backfill"), f"backfill must be a whole number from 0 to {MAX_BACKFILL}, got {value!r}")
                )
        if "backfill_comments" in doc:
            value = doc["backfill_comments"]
            if isinstance(value, bool):
                backfill_comments = value
            else:
                problems.append(Problem(source, doc.line_of("backfill_comments"), f"backfill_comments must be true or false, got {value!r}"))

        if "narrator" in doc:
            value = doc["narrator"]
            # YAML 1.1 reads a bare on/off as a boolean; "on"/"off" strings are taken too.
            if isinstance(value, bool) or value in ("on", "off"):
                narrator = value in (True, "on")
            else:
                problems.append(Problem(source, doc.line_of("narrator"), f"narrator must be on or off, got {value!r}"))

        if "comment" in doc:
            value = doc["comment"]
            # YAML 1.1 reads a bare off as false.
            value = "off" if value is False else value
            if value in COMMENT_CHOICES:
                comment = value
            else:
                problems.append(
                    Problem(source, doc.line_of("comment"), f"comment must be one of {', '.join(COMMENT_CHOICES)}, got {'on (YAML true)' if value is True else repr(value)}")
                )

    if problems:
        raise RepoConfigError(sorted(problems, key=lambda p: p.line))
    disable = tuple(rid for rid, _ in rules.disabled) if rules is not None else ()
    has_rules = rules is not None and isinstance(doc, YMap) and any(k in doc for k in ("rules", "labels", "areas", "disable"))
    return RepoConfig(
        lang=lang,
        rules=rules if has_rules else None,
        disable=disable,
        relabel=relabel,
        source=source,
        backfill=backfill,
        backfill_comments=backfill_comments,
        narrator=narrator,
        comment=comment,
    )


def load_repo_config(text: str | None, source: str = DEFAULT_SOURCE) -> RepoConfig:
    """Like :func:`parse_repo_config`, but never raises.

    ``text`` ``None`` (no such file) gives :meth:`RepoConfig.default`; an invalid file
    gives the defaults with its ``problems`` kept so the guide can mention them.
    """
    if text is None:
        return RepoConfig.default(source=source)
    try:
        return parse_repo_config(text, source)
    except RuleError as exc:
        return RepoConfig.default(problems=tuple(exc.problems), source=source)


def _roles(value: Any) -> tuple[tuple[str, ...], str | None]:
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list) or not items or not all(isinstance(i, str) for i in items):
        return DEFAULT_RELABEL, repr(value)
    unknown = [i for i in items if i not in RELABEL_ROLES]
    if unknown:
        return DEFAULT_RELABEL, ", ".join(repr(i) for i in unknown)
    return tuple(dict.fromkeys(items)), None
