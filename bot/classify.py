"""Classification: rule hits + diff analysis -> labels, type, importance, reading verdict.

Pure. Every number prguide shows comes with the factors that produced it, so
``/prguide why`` can explain it. Sentences are stored as message keys and
parameters (see :mod:`bot.render.messages`) so the guide can say them in any
supported language.

Importance (1-10) is the sum of explainable factors, clamped:

========================  ======  ==========================================
factor                    points  when
========================  ======  ==========================================
base                      1       always
size                      0..4    code lines changed: 1-19 / 20-99 / 100-499 / 500+
behaviour                 +1      source code changed by a fix, feature, perf change or revert
rule                      rule's  a rule with ``importance:`` matched (at most +4 from all rules)
public API added          +1      public definitions added in source files
code path removed         +1      public definitions removed in source files
config schema             +1      config keys (YAML keys, dataclass fields) added/removed
breaking                  +2      a rule or the title marks it breaking
tests                     +1      source changed and tests were added
dependencies              +1/+2   a dependency added, removed or re-pinned (+2: a major version)
compatibility shim        +1      import fallbacks or version checks added
revert                    +1      the PR reverts another
review discussion         +1      3+ review threads, or changes were requested
bot author                -1      the author is a bot (dependency bumps and the like)
no source                 -1      nothing but docs, tests, CI or generated files
========================  ======  ==========================================

Reading level: importance >= 7 with at least 8 minutes of reading is deep; >= 5 quick;
3-4 skim; 1-2 skip.
Reading minutes: code lines / 20 + test, docs and CI lines / 60, rounded up, between
1 and 180 (code lines are changed lines of source, config, build and example files;
files removed whole and generated files are not counted).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from bot.analysis.model import DiffAnalysis
from bot.focus import api_names, major_bump, public_keys
from bot.rules.model import CHANGE_TYPES, RuleHit
from bot.snapshot import PullRequestSnapshot

READING_LEVELS = ("deep", "quick", "skim", "skip")

#: Lines per minute a reader gets through, by what the lines are.
CODE_LINES_PER_MINUTE = 20
OTHER_LINES_PER_MINUTE = 60
#: Below this many minutes even an important change is a quick read.
DEEP_READ_MINUTES = 8
#: Rule points beyond this add nothing: a change touching six areas is not six times as important.
MAX_RULE_POINTS = 4
#: Past three hours a number stops helping; the guide says "deep read" anyway.
MAX_READING_MINUTES = 180


@dataclass(frozen=True, slots=True)
class Factor:
    """One explainable contribution to the importance score.

    ``points`` may be negative; ``source`` is a rule id or a built-in factor name
    (``base``, ``size``, ``api``, ...); ``key``/``params`` are a message of
    :mod:`bot.render.messages` saying why.
    """

    points: int
    source: str
    key: str
    params: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class LabelDecision:
    """A label prguide wants on the PR and who decided it.

    ``source`` is ``"rule"`` (``rule`` holds the rule id and ``rule_source`` its
    ``FILE:LINE``) or ``"human"`` (a ``/prguide label add`` command).
    """

    name: str
    source: str
    rule: str | None = None
    rule_source: str | None = None


@dataclass(frozen=True, slots=True)
class Classification:
    """Everything prguide decided about a pull request, before any wording.

    ``importance`` is 1-10; ``reading_minutes`` whole minutes; ``audience`` maps a
    language to sentences; ``hits`` are the rule hits it came from.
    """

    labels: tuple[LabelDecision, ...]
    areas: tuple[str, ...]
    change_type: str
    change_type_source: str
    breaking: bool
    importance: int
    factors: tuple[Factor, ...]
    reading_level: str
    reading_minutes: int
    audience: Mapping[str, tuple[str, ...]]
    hits: tuple[RuleHit, ...]
    skip: bool = False
    labels_removed_by_human: tuple[str, ...] = ()

    @property
    def label_names(self) -> tuple[str, ...]:
        """The label names, in decision order."""
        return tuple(d.name for d in self.labels)


def classify(
    snapshot: PullRequestSnapshot,
    analysis: DiffAnalysis,
    hits: Sequence[RuleHit],
    *,
    audience_for_area: Any = None,
    labels_added: Sequence[str] = (),
    labels_removed: Sequence[str] = (),
) -> Classification:
    """Combine rule hits and analysis into a :class:`Classification`.

    ``audience_for_area(area, lang) -> str | None`` names who maintains an area (from
    the rule files' ``areas:``); ``labels_added``/``labels_removed`` are human decisions
    applied last. Never raises on odd input.
    """
    hits = tuple(hits)
    labels = _labels(hits, labels_added, labels_removed)
    areas = _ranked_areas(hits, analysis, title_scopes(snapshot.title))
    change_type, type_source = _change_type(hits, analysis)
    breaking = any(h.breaking for h in hits)
    factors = tuple(_factors(snapshot, analysis, hits, change_type, breaking))
    importance = max(1, min(10, sum(f.points for f in factors)))
    minutes = reading_minutes(analysis)
    audience = {lang: _audience(hits, areas, lang, audience_for_area) for lang in ("en", "zh")}
    return Classification(
        labels=labels,
        areas=areas,
        change_type=change_type,
        change_type_source=type_source,
        breaking=breaking,
        importance=importance,
        factors=factors,
        reading_level=reading_level(importance, minutes),
        reading_minutes=minutes,
        audience=audience,
        hits=hits,
        skip=any(h.skip for h in hits),
        labels_removed_by_human=tuple(labels_removed),
    )


def reading_level(importance: int, minutes: int = DEEP_READ_MINUTES) -> str:
    """``deep`` (importance 7-10 and at least 8 minutes of reading), ``quick`` (5-10),
    ``skim`` (3-4) or ``skip`` (1-2).

    An important change that reads in five minutes is a quick read, not a deep one:
    the level says how to read, the score how much it matters.
    """
    if importance >= 7 and minutes >= DEEP_READ_MINUTES:
        return "deep"
    if importance >= 5:
        return "quick"
    if importance >= 3:
        return "skim"
    return "skip"


def reading_minutes(analysis: DiffAnalysis) -> int:
    """Minutes to read the change, at least 1 and at most :data:`MAX_READING_MINUTES`.

    Changed lines of source, config, build and example files at 20 a minute; test,
    docs and CI lines at 60 a minute. Files removed whole are not read line by line
    (the guide names them instead), nor are generated, lock and binary files.
    """
    code = other = 0
    for f in analysis.files:
        if f.status == "removed":
            continue
        if f.kind in ("source", "config", "build", "example"):
            code += f.changes
        elif f.kind in ("test", "docs", "ci"):
            other += f.changes
    minutes = math.ceil(code / CODE_LINES_PER_MINUTE + other / OTHER_LINES_PER_MINUTE)
    return max(1, min(MAX_READING_MINUTES, minutes))


def _labels(hits: tuple[RuleHit, ...], added: Sequence[str], removed: Sequence[str]) -> tuple[LabelDecision, ...]:
    removed_set = {r.lower() for r in removed}
    decisions: dict[str, LabelDecision] = {}
    for hit in hits:
        for name in hit.labels:
            key = name.lower()
            if key not in decisions and key not in removed_set:
                decisions[key] = LabelDecision(name, "rule", hit.rule_id, hit.source)
    for name in added:
        key = name.lower()
        if key not in decisions:
            decisions[key] = LabelDecision(name, "human")
    return tuple(decisions.values())


def _change_type(hits: tuple[RuleHit, ...], analysis: DiffAnalysis) -> tuple[str, str]:
    """The first rule-given type wins, except that a revert always does."""
    typed = [h for h in hits if h.change_type in CHANGE_TYPES]
    for h in typed:
        if h.change_type == "revert":
            return "revert", h.rule_id
    if typed:
        return str(typed[0].change_type), typed[0].rule_id
    kinds = {f.kind for f in analysis.files} - {"generated", "binary"}
    for only, kind in (("docs", "docs"), ("test", "test"), ("ci", "ci"), ("build", "build")):
        if kinds == {only}:
            return kind, "inferred"
    sources = analysis.of_kind("source")
    if any(d.public for f in sources for d in f.definitions_added):
        return "feature", "inferred"
    if not sources:
        return "chore", "inferred"
    return "fix", "inferred"


def _factors(
    snapshot: PullRequestSnapshot,
    analysis: DiffAnalysis,
    hits: tuple[RuleHit, ...],
    change_type: str,
    breaking: bool,
) -> list[Factor]:
    factors = [Factor(1, "base", "factor.base")]
    code = analysis.reading_lines
    size_points = 0 if code == 0 else 1 if code < 20 else 2 if code < 100 else 3 if code < 500 else 4
    if size_points:
        factors.append(Factor(size_points, "size", "factor.size", {"count": code}))
    sources = analysis.of_kind("source")
    if sources and change_type in ("fix", "feature", "perf", "revert"):
        factors.append(Factor(1, "behaviour", "factor.behaviour", {"type": change_type}))
    budget = MAX_RULE_POINTS
    for hit in hits:
        points = hit.importance if hit.importance < 0 else min(hit.importance, budget)
        if points:
            budget -= max(points, 0)
            factors.append(Factor(points, hit.rule_id, "factor.rule", {"rule": hit.rule_id}))
    added = [n for f in sources for n in api_names(f.definitions_added)]
    removed = [n for f in sources for n in api_names(f.definitions_removed)]
    if added:
        factors.append(Factor(1, "api", "factor.api_added", {"count": len(added), "names": _first(added)}))
    if removed:
        factors.append(Factor(1, "removed", "factor.api_removed", {"count": len(removed), "names": _first(removed)}))
    keys = [k for f in analysis.files if f.kind not in ("ci", "test") for k in public_keys(f, f.config_keys_added + f.config_keys_removed)]
    if keys:
        factors.append(Factor(1, "config", "factor.config", {"count": len(keys), "names": _first(keys)}))
    if breaking:
        factors.append(Factor(2, "breaking", "factor.breaking"))
    tests = [t for f in analysis.files for t in f.tests_added]
    if sources and tests:
        factors.append(Factor(1, "tests", "factor.tests", {"count": len(tests)}))
    deps = [d.name for f in analysis.files for d in f.dependency_changes]
    major = list(dict.fromkeys(d.name for f in analysis.files for d in f.dependency_changes if major_bump(d.old_spec, d.new_spec)))
    if major:
        factors.append(Factor(2, "dependencies", "factor.deps_major", {"count": len(major), "names": _first(major)}))
    elif deps:
        factors.append(Factor(1, "dependencies", "factor.deps", {"count": len(set(deps)), "names": _first(list(dict.fromkeys(deps)))}))
    if any(f.shims for f in analysis.files if f.kind == "source"):
        factors.append(Factor(1, "shim", "factor.shim"))
    if change_type == "revert":
        factors.append(Factor(1, "revert", "factor.revert"))
    threads = {c.thread_id for c in snapshot.review_comments if not c.user_is_bot}
    changes_requested = any(r.state == "CHANGES_REQUESTED" for r in snapshot.reviews)
    if len(threads) >= 3 or changes_requested:
        factors.append(Factor(1, "review", "factor.review", {"threads": len(threads)}))
    if snapshot.author_is_bot:
        factors.append(Factor(-1, "bot", "factor.bot", {"author": snapshot.author}))
    if not sources and not analysis.of_kind("config", "build", "example"):
        factors.append(Factor(-1, "no-source", "factor.no_source"))
    return factors


_BRACKETS = re.compile(r"^\s*((?:\[[^\]]*\]\s*)+)")
_CONVENTIONAL_SCOPE = re.compile(r"^\s*[A-Za-z-]+\(([^)]*)\)!?:")


def title_scopes(title: str) -> tuple[str, ...]:
    """The scopes a title names, lower-cased: ``[megatron, fsdp] fix: …`` and ``fix(ckpt): …``."""
    found: list[str] = []
    brackets = _BRACKETS.match(title)
    if brackets:
        found += re.findall(r"[^\[\],]+", brackets.group(1))
    conventional = _CONVENTIONAL_SCOPE.match(title)
    if conventional:
        found += conventional.group(1).split(",")
    return tuple(dict.fromkeys(x.strip().lower() for x in found if x.strip()))


def _ranked_areas(hits: tuple[RuleHit, ...], analysis: DiffAnalysis, scopes: tuple[str, ...]) -> tuple[str, ...]:
    """Areas the title names first (the author's own word), then by changed lines in them."""
    size = {f.path: f.changes for f in analysis.files if f.counts_as_code}
    weight: dict[str, float] = {}
    for hit in hits:
        w = sum(size.get(p, 0) for p in hit.files) if hit.files else 0
        for area in hit.areas:
            weight[area] = max(weight.get(area, -1.0), float("inf") if area.lower() in scopes else w)
    return tuple(sorted(weight, key=lambda a: -weight[a]))


def _first(names: Sequence[str], n: int = 3) -> tuple[str, ...]:
    """The first ``n`` names; the renderer shows them as code and adds "…" when ``count`` is larger."""
    return tuple(names[:n])


def _audience(hits: tuple[RuleHit, ...], areas: tuple[str, ...], lang: str, audience_for_area: Any) -> tuple[str, ...]:
    out: list[str] = []
    for hit in hits:
        text = hit.audience.get(lang) if hit.audience else None
        if text:
            out.append(text)
    if audience_for_area is not None:
        for area in areas:
            text = audience_for_area(area, lang)
            if text:
                out.append(text)
    return tuple(dict.fromkeys(out))
