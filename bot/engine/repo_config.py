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

A file with problems is not thrown away: every valid key applies, each problem is
reported as ``FILE:LINE``, and an opt-out that cannot be read takes its safe side
(:data:`SAFE_SIDE`), so a typo never turns on what the repository switched off.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Any

from bot.engine.rules import RuleError, parse_valid_rules
from bot.engine.rules.model import LANGUAGES, Problem
from bot.engine.rules.schema import TOP_KEYS
from bot.engine.rules.yamlsrc import YMap, load_yaml

DEFAULT_SOURCE = ".github/prguide.yml"
#: Where a repository may keep the file, in the order they are looked for: the first found is read.
CONFIG_PATHS = (DEFAULT_SOURCE, ".github/prguide.yaml")

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
#: Opt-outs, and the value one takes when the file says something about it that cannot be
#: read: the side that turns nothing on (an invalid file never sends a pull request to a
#: model, backfills or comments where the repository may have said no).
SAFE_SIDE: dict[str, Any] = {"narrator": False, "backfill": 0, "comment": "off"}
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
    ``relabel``: roles from :data:`RELABEL_ROLES`. ``problems``: what in the file could
    not be used (those keys are left out, opt-outs at their :data:`SAFE_SIDE`; the guide
    names each ``FILE:LINE``).
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
        """The settings of a repository without ``.github/prguide.yml``."""
        return cls(problems=tuple(problems), source=source)

    @classmethod
    def unreadable(cls, problems: tuple[Problem, ...], source: str = DEFAULT_SOURCE) -> RepoConfig:
        """The settings of a repository whose config file exists but cannot be read (``problems`` say why).

        The defaults, except that no narration and no backfill start: the file may say
        ``narrator: off`` or ``backfill: 0``, and an unreadable file never turns a feature
        on. Guide comments stay on: they are where the problem is reported.
        """
        return cls(problems=tuple(problems), source=source, narrator=False, backfill=0)


def parse_repo_config(text: str, source: str = DEFAULT_SOURCE) -> RepoConfig:
    """Parse the text of ``.github/prguide.yml``, strictly.

    An empty file (or one of comments only) gives the defaults. Raises
    :class:`RepoConfigError` listing every problem as ``FILE:LINE: message``, in line
    order: YAML syntax, a top level that is not a mapping, unknown keys (with the
    closest known key suggested), a bad ``lang``, ``relabel``, ``backfill``,
    ``backfill_comments``, ``narrator`` or ``comment``, and whatever
    :func:`bot.engine.rules.parse_rules` finds in the rule-file keys. What a
    repository gets from a file with problems is :func:`load_repo_config`'s answer.
    """
    config = load_repo_config(text, source)
    if config.problems:
        raise RepoConfigError(list(config.problems))
    return config


def load_repo_config(text: str | None, source: str = DEFAULT_SOURCE) -> RepoConfig:
    """Like :func:`parse_repo_config`, but never raises: every valid key is kept.

    ``text`` ``None`` (no such file) gives :meth:`RepoConfig.default`. A key with a
    problem is left out and its problem kept in ``problems`` (``FILE:LINE``, in line
    order) so the guide can name it; the other keys apply. An opt-out with a problem
    takes its safe side (:data:`SAFE_SIDE`): ``narrator: offf`` turns narration off,
    ``backfill: off`` backfills nothing, ``comment: none`` posts no comment. A file that
    cannot be read at all (YAML syntax, a top level that is not a mapping) gives
    :meth:`RepoConfig.unreadable`. The rule-file keys keep their valid rules, labels,
    areas and ``disable`` entries (:func:`bot.engine.rules.parse_valid_rules`).
    """
    if text is None:
        return RepoConfig.default(source=source)
    try:
        return _load(text, source)
    except RecursionError:
        # `x: [[[[...]]]]` thousands deep, under the size cap: unreadable, opt-outs safe.
        return RepoConfig.unreadable((Problem(source, 1, "the file is nested too deeply to read"),), source)


def _load(text: str, source: str) -> RepoConfig:
    doc, syntax = load_yaml(text, source)
    if doc is None and not syntax:
        return RepoConfig(source=source)
    # parse_valid_rules also reports syntax errors, a non-mapping top level and unknown keys.
    rules, found = parse_valid_rules(text, source, extra_keys=OWN_KEYS)
    problems = list(found)
    if not isinstance(doc, YMap):
        return RepoConfig.unreadable(tuple(problems), source)

    def bad(key: str, message: str) -> None:
        problems.append(Problem(source, doc.line_of(key), message))

    values: dict[str, Any] = {}
    if "lang" in doc:
        value = doc["lang"]
        if value in LANGUAGES:
            values["lang"] = value
        else:
            bad("lang", f"lang must be one of {', '.join(LANGUAGES)}, got {value!r}")
    if "relabel" in doc:
        roles, unknown = _roles(doc["relabel"])
        if unknown:
            bad("relabel", f"relabel must be one or more of {', '.join(RELABEL_ROLES)}, got {unknown}")
        else:
            values["relabel"] = roles
    if "backfill" in doc:
        value = doc["backfill"]
        if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_BACKFILL:
            values["backfill"] = value
        else:
            values["backfill"] = SAFE_SIDE["backfill"]
            bad("backfill", f"backfill must be a whole number from 0 to {MAX_BACKFILL}, got {value!r}")
    if "backfill_comments" in doc:
        value = doc["backfill_comments"]
        if isinstance(value, bool):
            values["backfill_comments"] = value
        else:
            bad("backfill_comments", f"backfill_comments must be true or false, got {value!r}")
    if "narrator" in doc:
        value = doc["narrator"]
        # YAML 1.1 reads a bare on/off as a boolean; "on"/"off" strings are taken too.
        if isinstance(value, bool) or value in ("on", "off"):
            values["narrator"] = value in (True, "on")
        else:
            values["narrator"] = SAFE_SIDE["narrator"]
            bad("narrator", f"narrator must be on or off, got {value!r}")
    if "comment" in doc:
        # YAML 1.1 reads a bare off as false.
        value = "off" if doc["comment"] is False else doc["comment"]
        if value in COMMENT_CHOICES:
            values["comment"] = value
        else:
            values["comment"] = SAFE_SIDE["comment"]
            shown = "on (YAML true)" if value is True else repr(value)
            bad("comment", f"comment must be one of {', '.join(COMMENT_CHOICES)}, got {shown}")
    for key, safe in SAFE_SIDE.items():
        # A second "narrator:" is reported and not read: which one was meant is unknown.
        if any(p.message.startswith(f"duplicate key {key!r}") for p in problems):
            values[key] = safe
    for key in doc:
        # `narator: off` meant the opt-out: a misspelt opt-out key takes its safe side.
        if isinstance(key, str) and key not in OWN_KEYS and key not in TOP_KEYS:
            near = difflib.get_close_matches(key, list(SAFE_SIDE), n=1, cutoff=0.75)
            if near and near[0] not in doc:
                values[near[0]] = SAFE_SIDE[near[0]]

    has_rules = any(k in doc for k in TOP_KEYS)
    return RepoConfig(
        rules=rules if has_rules else None,
        disable=tuple(rid for rid, _ in rules.disabled),
        problems=tuple(sorted(problems, key=lambda p: p.line)),
        source=source,
        **values,
    )


def _roles(value: Any) -> tuple[tuple[str, ...], str | None]:
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list) or not items or not all(isinstance(i, str) for i in items):
        return DEFAULT_RELABEL, repr(value)
    unknown = [i for i in items if i not in RELABEL_ROLES]
    if unknown:
        return DEFAULT_RELABEL, ", ".join(repr(i) for i in unknown)
    return tuple(dict.fromkeys(items)), None
