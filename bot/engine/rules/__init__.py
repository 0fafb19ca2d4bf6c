"""Rules: YAML files that label and classify pull requests.

Pure: no network. :func:`load_rules` reads the shipped defaults (``config/rules/``)
and any extra files, :func:`parse_rules` a repository's own ``.github/prguide.yml``,
and :meth:`RuleSet.evaluate` turns a snapshot and its diff analysis into
:class:`RuleHit` objects. ``prguide rules check PATH...`` runs
:func:`check_rule_paths`.

Rule file format
================

A rule file is a mapping::

    labels:                      # how labels look on GitHub ("Create a label")
      docs: {color: "0075ca", description: Documentation}
      "area/{area}": {color: "1d76db", description: "Changes the {area} area"}
    areas:                       # display names and readers of each area
      megatron:
        en: Megatron backend
        zh: Megatron 后端
        audience: {en: engineers maintaining the Megatron backend, zh: 维护 Megatron 后端的工程师}
    disable: [size-xs]           # rules of files loaded earlier to drop (by id)
    config:                      # what is user configuration (RuleSet.is_config)
      paths: ["verl/trainer/config/**"]   # globs, as in ``files``
      classes: ["*Config"]               # class names, ``*``/``?`` wildcards
    rules:
      - id: area-megatron        # required, unique across all loaded files
        description: why this rule exists
        enabled: true
        ...conditions...
        ...effects...

Label names in ``labels:`` may hold ``{name}`` placeholders or ``*`` to describe
every label of that shape. Files load in order (folders: ``*.yml``/``*.yaml`` by
name); later label descriptions and areas win; a file's ``disable:`` drops rules
of earlier files, so a repository may disable a default rule and define its own
under the same id.

Conditions (all present must hold; a list means "any of")
---------------------------------------------------------

``files``
    Globs (wcmatch ``GLOBSTAR | DOTGLOB | BRACE``: ``**`` crosses folders,
    dot-folders like ``.github/`` match, ``{a,b}`` expands), relative to the
    repository root. A string or list means ``any``; a mapping takes ``any``
    (some changed file matches a glob), ``all`` (every changed file does) and
    ``exclude`` (files set aside first).
``title``, ``body``
    Regexes (the ``regex`` module), searched; named groups become captures.
``added``, ``removed``
    Regexes over added/removed diff lines, line by line. Only files the rule's
    ``files``/``kinds`` matched are searched, unless written as
    ``{regex: ..., in_matched_files: false}``.
``symbols``, ``removed_definitions``, ``config_keys``, ``removed_config_keys``, ``dependencies``
    Regexes over touched definitions, public definitions removed (and not added
    back elsewhere), config keys added/removed/changed, config keys removed,
    and names of changed dependencies. Same narrowing as ``added``.
``authors``, ``base_branch``, ``scopes``
    Names with ``*``/``?`` wildcards (brackets are literal, so ``*[bot]`` works).
    ``scopes`` are the title's ``[a, b]`` brackets and ``type(a,b):`` scope,
    lower-cased; the matching ones become the ``{scope}`` capture.
``bots``
    ``true``: the author is a bot; ``false``: a person.
``min_lines``, ``max_lines``, ``min_files``, ``max_files``
    Inclusive bounds; lines exclude generated/lock and binary files.
``kinds``
    File kinds from the analysis (``source``, ``test``, ``docs``, ``config``,
    ``ci``, ``build``, ``example``, ``generated``, ``binary``). A list means some
    changed file is of one of them (and narrows the matched files to those);
    ``{all: [docs]}`` means every changed file is.
``any``
    A list of condition groups; the rule needs one group to hold.

Regexes are case-insensitive and multi-line; start one with ``(?-i)`` to match
case. A regex gets 100 ms of CPU time per condition (``config/settings.yml``; the
thread's own, so machine load does not change labels); one that runs out of time
counts as no match and is reported. Nested repetition like ``(a+)+`` is
refused at load time.

Effects
-------

``labels`` (list of names), ``area`` (id or list), ``type`` (one of
:data:`CHANGE_TYPES`), ``importance`` (points, -10..10), ``breaking``, ``skip``
(post no guide), ``audience`` and ``focus`` (text, or ``{en: ..., zh: ...}``).
Placeholders: captures, ``{scope}``, ``{area}``, ``{author}``; focus notes also
``{file}``, ``{symbol}``, ``{key}`` -- a note is written per config key, symbol
or file it names (at most five per rule). In labels and areas, a captured
``megatron, fsdp`` gives one name per item, lower-cased.
"""

from bot.engine.rules.loader import check_rule_paths, load_rules, parse_rules, parse_valid_rules
from bot.engine.rules.model import CHANGE_TYPES, FocusNote, LabelSpec, Problem, RuleError, RuleHit
from bot.engine.rules.ruleset import Evaluation, RuleSet
from bot.engine.rules.schema import Area, Rule
from bot.engine.rules.settings import Settings, load_settings

__all__ = [
    "CHANGE_TYPES",
    "Area",
    "Evaluation",
    "FocusNote",
    "LabelSpec",
    "Problem",
    "Rule",
    "RuleError",
    "RuleHit",
    "RuleSet",
    "Settings",
    "check_rule_paths",
    "load_rules",
    "load_settings",
    "parse_rules",
    "parse_valid_rules",
]
