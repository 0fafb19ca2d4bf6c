"""A loaded set of rules: evaluate it on a pull request, merge it with a repository's own.

Pure: no network. Build one with :func:`bot.engine.rules.load_rules` or
:func:`bot.engine.rules.parse_rules`.
"""

from __future__ import annotations

import logging
from fnmatch import fnmatchcase
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property
from types import MappingProxyType

from bot.engine.analysis.model import DiffAnalysis
from bot.engine.rules.conditions import MatchState, check_all, condition_globs
from bot.engine.rules.effects import render
from bot.engine.rules.facts import Facts
from bot.engine.rules.globs import Glob, GlobTable
from bot.engine.rules.model import LabelSpec, Problem, RuleError, RuleHit
from bot.engine.rules.reasons import Reason
from bot.engine.rules.schema import Area, LabelDecl, Rule
from bot.engine.rules.settings import Settings
from bot.engine.snapshot import PullRequestSnapshot

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Evaluation:
    """The result of running a rule set: ``hits`` in rule order, ``warnings`` (regex timeouts, dropped labels)."""

    hits: tuple[RuleHit, ...]
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True)
class RuleSet:
    """Rules in file order, with label descriptions and areas.

    ``label_decls`` lists ``labels:`` entries in load order (a later one wins);
    ``areas`` maps an area id to its display names and audience; ``disabled`` holds
    ``(rule id, FILE:LINE)`` entries this set's ``disable:`` lists, applied when it
    is merged onto another set; ``warnings`` are non-fatal problems found while
    merging (e.g. disabling a rule that does not exist). ``config_paths`` and
    ``config_classes`` come from the rule files' ``config:`` sections and say what is
    user configuration (see :meth:`is_config`).
    """

    rules: tuple[Rule, ...] = ()
    label_decls: tuple[LabelDecl, ...] = ()
    areas: Mapping[str, Area] = field(default_factory=dict)
    disabled: tuple[tuple[str, str], ...] = ()
    warnings: tuple[Problem, ...] = ()
    settings: Settings = field(default_factory=Settings)
    config_paths: tuple[Glob, ...] = ()
    config_classes: tuple[str, ...] = ()

    # --- evaluation ---------------------------------------------------------------------------

    def evaluate(self, snapshot: PullRequestSnapshot, analysis: DiffAnalysis) -> tuple[RuleHit, ...]:
        """The hits of every enabled rule that matches, in rule-file order.

        Never raises on odd pull request content; regex timeouts and other warnings
        are logged (use :meth:`run` to get them).
        """
        result = self.run(snapshot, analysis)
        for warning in result.warnings:
            log.warning("pull request %s#%s: %s", snapshot.repository, snapshot.number, warning)
        return result.hits

    def run(self, snapshot: PullRequestSnapshot, analysis: DiffAnalysis) -> Evaluation:
        """Like :meth:`evaluate`, returning the warnings instead of logging them."""
        facts = Facts(snapshot, analysis, timeout=self.settings.regex_timeout, globs=self.glob_table)
        hits = []
        for rule in self.rules:
            if not rule.enabled:
                continue
            try:
                hit = self._apply(rule, facts)
            except Exception:  # one broken rule must not cost the pull request its guide
                log.exception("rule %s (%s) failed", rule.id, rule.source)
                facts.warnings.append(f"rule {rule.id} failed with an internal error and was skipped")
                continue
            if hit is not None:
                hits.append(hit)
        return Evaluation(tuple(hits), tuple(facts.warnings))

    @cached_property
    def glob_table(self) -> GlobTable:
        """The globs of every rule's ``files`` conditions, for matching them all at once."""
        return GlobTable(g for rule in self.rules if rule.enabled for g in condition_globs(rule.conditions))

    def _apply(self, rule: Rule, facts: Facts) -> RuleHit | None:
        state = MatchState()
        if not check_all(rule.conditions, facts, state):
            return None
        out = render(rule.effects, facts, state, rule_id=rule.id, max_focus=self.settings.max_focus_per_rule)
        e = rule.effects
        return RuleHit(
            rule_id=rule.id,
            source=rule.source,
            labels=out.labels,
            areas=out.areas,
            change_type=e.change_type,
            importance=e.importance,
            breaking=e.breaking,
            audience=out.audience,
            focus=out.focus,
            skip=e.skip,
            reasons=tuple(state.reasons) or (Reason("why.always"),),
            captures=dict(state.captures),
            files=out.files,
        )

    # --- combining ----------------------------------------------------------------------------

    @property
    def rule_ids(self) -> tuple[str, ...]:
        """Ids of the rules that run (enabled ones), in order."""
        return tuple(r.id for r in self.rules if r.enabled)

    def rule(self, rule_id: str) -> Rule | None:
        """The rule with this id (enabled or not), or ``None``."""
        return next((r for r in self.rules if r.id == rule_id), None)

    def without(self, ids: Iterable[str]) -> RuleSet:
        """A copy without the rules whose ids are given (unknown ids are ignored)."""
        drop = set(ids)
        return replace(self, rules=tuple(r for r in self.rules if r.id not in drop))

    def merged(self, other: RuleSet) -> RuleSet:
        """This set with ``other`` on top: ``other.disabled`` removes rules first, then ``other``'s rules follow.

        So a repository can replace a default rule by disabling its id and defining it
        again. ``other``'s label descriptions and areas win over this set's. Raises
        :class:`RuleError` when a rule id would appear twice (naming both places);
        disabling an unknown id only adds a warning, so an old config keeps working.
        """
        drop = {rid for rid, _ in other.disabled}
        kept = [r for r in self.rules if r.id not in drop]
        known = {r.id for r in self.rules}
        warnings = list(self.warnings) + list(other.warnings)
        for rid, where in other.disabled:
            if rid not in known:
                file, _, line = where.rpartition(":")
                warnings.append(Problem(file, int(line or 0), f"disable: there is no rule {rid!r} to disable"))
        problems = duplicate_problems(kept, other.rules)
        if problems:
            raise RuleError(problems)
        return RuleSet(
            rules=tuple(kept) + tuple(other.rules),
            label_decls=self.label_decls + other.label_decls,
            areas={**self.areas, **other.areas},
            disabled=self.disabled + other.disabled,
            warnings=tuple(warnings),
            settings=self.settings,
            config_paths=tuple(dict.fromkeys(self.config_paths + other.config_paths)),
            config_classes=tuple(dict.fromkeys(self.config_classes + other.config_classes)),
        )

    # --- configuration ------------------------------------------------------------------------

    def is_config(self, path: str, class_name: str | None = None) -> bool:
        """True when the rule files' ``config:`` section marks ``path`` or ``class_name`` as user configuration.

        ``path`` is repository-relative (``verl/workers/config/actor.py``); it counts when
        one of ``config: paths`` matches it. ``class_name`` (``FSDPConfig``, or qualified
        ``Outer.Inner`` / ``Class.field`` as analysis reports fields: every dotted part is
        tried) counts when one of ``config: classes`` matches it (``*`` and ``?``
        wildcards, case-sensitive). Without a ``config:`` section nothing is configuration.
        """
        clean = path.lstrip("/")
        if any(shape.test(clean) for glob in self.config_paths for shape in glob.shapes):
            return True
        if class_name and self.config_classes:
            parts = class_name.split(".")
            return any(fnmatchcase(part, pattern) for pattern in self.config_classes for part in parts)
        return False

    # --- labels and areas ---------------------------------------------------------------------

    @property
    def label_specs(self) -> Mapping[str, LabelSpec]:
        """Declared label names (not patterns) and their look; later declarations win."""
        return MappingProxyType({d.name: d.spec for d in self.label_decls if d.pattern is None})

    def label_spec(self, name: str) -> LabelSpec:
        """How label ``name`` looks: its declaration, else a matching pattern's, else grey.

        Names compare case-insensitively, as GitHub's do. A pattern declaration such
        as ``area/{area}`` fills its description's placeholders from the name.
        """
        decl = self._named_decls.get(name.casefold())
        if decl is not None:
            return LabelSpec(name, decl.spec.color, decl.spec.description)
        for decl in reversed(self.label_decls):
            if decl.pattern is not None:
                m = decl.pattern.fullmatch(name)
                if m:
                    text = decl.description.render(m.groupdict()) if decl.description else decl.spec.description
                    return LabelSpec(name, decl.spec.color, text[:100])
        return LabelSpec(name, self.settings.label_color, "")

    @cached_property
    def _named_decls(self) -> dict[str, LabelDecl]:
        """Declarations of label names (not patterns) by case-folded name; the last one wins."""
        return {d.name.casefold(): d for d in self.label_decls if d.pattern is None}

    def area_name(self, area: str, lang: str) -> str:
        """The display name of ``area`` in ``lang`` (falls back to English, then to the id)."""
        info = self.areas.get(area)
        if info is None:
            return area
        return info.names.get(lang) or info.names.get("en") or area

    def label_area(self, name: str) -> str | None:
        """The area a templated label such as ``area/{area}`` names, when ``name`` is one and the area is declared."""
        for decl in reversed(self.label_decls):
            if decl.pattern is not None:
                m = decl.pattern.fullmatch(name)
                if m and m.groupdict().get("area") in self.areas:
                    return m.groupdict()["area"]
        return None

    def area_audience(self, area: str, lang: str) -> str | None:
        """Who reads changes to ``area``, in ``lang`` (falls back to English), or ``None``."""
        info = self.areas.get(area)
        if info is None:
            return None
        return info.audience.get(lang) or info.audience.get("en")


def duplicate_problems(earlier: Iterable[Rule], later: Iterable[Rule]) -> list[Problem]:
    """One problem per rule of ``later`` whose id is already taken, naming both places."""
    seen = {r.id: r for r in earlier}
    problems = []
    for rule in later:
        first = seen.get(rule.id)
        if first is not None:
            problems.append(
                Problem(rule.file, rule.line, f"duplicate rule id (also defined at {first.source})", rule.id)
            )
        else:
            seen[rule.id] = rule
    return problems
