"""Rules: YAML files that label and classify pull requests.

Pure: no network. ``load_rules`` reads the shipped defaults and any extra files,
``parse_rules`` a repository's own config, and ``RuleSet.evaluate`` turns a
snapshot and its diff analysis into :class:`RuleHit` objects. The file format is
described below.
"""

from bot.rules.loader import check_rule_paths, load_rules, parse_rules
from bot.rules.model import CHANGE_TYPES, FocusNote, LabelSpec, Problem, RuleError, RuleHit
from bot.rules.ruleset import Evaluation, RuleSet
from bot.rules.schema import Area, Rule
from bot.rules.settings import Settings, load_settings

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
]
