"""Classification: rule hits + diff analysis -> labels, type, importance, reading verdict.

Pure. Every number prguide shows comes with the factors that produced it, so
``/prguide why`` can explain it. Sentences are stored as message keys and
parameters (see :mod:`bot.engine.render.messages`) so the guide can say them in any
supported language. ``docs/judgement.md`` explains the model for maintainers.

Importance (1-10) is ``1 + reach + risk - discounts``, each part made of named
factors and capped, so that no pile of matched rules reaches 10 on its own:

=============  ======  ===============================================================
part           max     factors
=============  ======  ===============================================================
reach          3       size of the source change (0-3: 20 / 200 / 1000 lines); rule
                       points for core paths (at most +2 from all rules); public API
                       added or removed; user-facing config keys; environment
                       variables source reads; package dependencies
risk           4       behaviour change (+2: source changed by a fix, feature, perf
                       change or revert; +1 for a refactor); breaking (+2, with its reasons); an
                       exact code token added or removed (:mod:`bot.engine.risk`): a cast
                       or gradient call, a thread/lock/collective, eval/pickle/shell
other          --      review discussion (+1); reverts (+1); bot author (-1); no source
                       and nothing user-facing (-1)
=============  ======  ===============================================================

Reading level: importance >= 7 with at least 20 minutes of reading is a deep read;
>= 5 quick; 2-4 skim; 1 skip. Reading minutes grow with the square root of the
weighted lines a reader must read (source lines weigh most; tests, docs and CI
little; files removed whole, lock and generated files not at all), see
:func:`reading_minutes`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from bot.engine.reading_time import reading_minutes, reading_weight  # noqa: F401 (reading_weight: part of this module's public face)
from bot.engine.analysis.envvars import ENV_KINDS, breaks_users
from bot.engine.analysis.model import DiffAnalysis, Evidence, FileAnalysis
from bot.engine.breaking import (breaking_check, callers_rewritten, consequence_known, fact_evidence, group_key_removals, introduced_names, key_still_read, local_helper,
                                 removed_code_lines, signature_detail)
from bot.engine.focus.housekeeping import api_names, dep_is_major, public_keys
from bot.engine.focus.renames import rename_map
from bot.engine.evidence import definition_evidence as _definition_evidence, fact_evidence_for as _fact_evidence_for, key_evidence as _key_evidence, metadata_evidence as _metadata_evidence
from bot.engine.risk import entry_script, existing_functions, risk_tokens
from bot.engine.rules.model import CHANGE_TYPES, RuleHit
from bot.engine.snapshot import PullRequestSnapshot

READING_LEVELS = ("deep", "quick", "skim", "skip")

#: Below this many minutes even an important change is a quick read.
DEEP_READ_MINUTES = 20
#: Importance at or above which a change is worth a deep (>= 7) or quick (>= 5) read.
DEEP_IMPORTANCE = 7
QUICK_IMPORTANCE = 5
#: Rule points beyond this add nothing: a change touching six areas is not six times as important.
MAX_RULE_POINTS = 2
#: Caps of the two parts of the score.
MAX_REACH = 3
MAX_RISK = 4
#: Areas shown in the summary and given labels; the rest are counted ("and N more").
MAX_AREAS = 5

#: Behaviour facts that break existing users when the thing they are about is user-facing.
_BREAKING_FACTS = {
    "default_changed": "breaking.default",
    "key_removed": "breaking.key_removed",
    "key_renamed": "breaking.key_renamed",
    "field_removed": "breaking.key_removed",
    "signature_changed": "breaking.signature",
    "symbol_removed": "breaking.symbol_removed",
    "symbol_renamed": "breaking.symbol_renamed",
    "symbol_moved": "breaking.symbol_moved",
    "check_added": "breaking.check",
    "dep_floor_raised": "breaking.dep_floor",
    "env_removed": "breaking.env_removed",
    "env_default_changed": "breaking.env_default",
}

#: A name holding a shell or build variable (``${BASE_IMAGE}``): no package.
_TEMPLATED_NAME = re.compile(r"[${}]")


@dataclass(slots=True, unsafe_hash=True)  # read-only by convention: see bot.engine.analysis.model
class Factor:
    """One explainable contribution to the importance score.

    ``points`` may be negative; ``source`` is a rule id or a built-in factor name
    (``base``, ``size``, ``api``, ...); ``key``/``params`` are a message of
    :mod:`bot.engine.render.messages` saying why; ``part`` is ``"reach"``, ``"risk"`` or
    ``"other"`` (the part of the score it counts towards, each part capped).
    """

    points: int
    source: str
    key: str
    params: Mapping[str, Any] = field(default_factory=dict)
    part: str = "other"
    #: What the factor rests on (:class:`bot.engine.analysis.model.Evidence`).
    evidence: tuple[Any, ...] = ()


@dataclass(slots=True, unsafe_hash=True)  # read-only by convention: see bot.engine.analysis.model
class Claim:
    """A sentence backed by a fact: a message key, its parameters and the file it is about."""

    key: str
    params: Mapping[str, Any] = field(default_factory=dict)
    file: str | None = None
    #: What the claim rests on (:class:`bot.engine.analysis.model.Evidence`).
    evidence: tuple[Any, ...] = ()


@dataclass(slots=True, unsafe_hash=True)  # read-only by convention: see bot.engine.analysis.model
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
    language to sentences; ``hits`` are the rule hits it came from. ``areas`` are the
    areas shown (at most :data:`MAX_AREAS`, best first), ``areas_more`` how many more
    matched. ``breaking_reasons`` say why the change breaks users (empty when
    ``breaking`` is false).
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
    breaking_reasons: tuple[Claim, ...] = ()
    areas_more: int = 0

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
    is_config: Callable[[str, str | None], bool] | None = None,
    renames: Mapping[str, tuple[tuple[str, str], ...]] | None = None,
) -> Classification:
    """Combine rule hits and analysis into a :class:`Classification`.

    ``audience_for_area(area, lang) -> str | None`` names who maintains an area (from
    the rule files' ``areas:``); ``is_config(path, class_name)`` says whether a file or
    class holds user configuration (``RuleSet.is_config``; without it only config files
    do); ``labels_added``/``labels_removed`` are human decisions applied last. Never
    raises on odd input.
    """
    hits = tuple(hits)
    renames = rename_map(analysis) if renames is None else renames
    if is_config is not None:
        is_config = _memo(is_config)
    all_areas = _ranked_areas(hits, analysis, title_scopes(snapshot.title))
    areas, dropped = all_areas[:MAX_AREAS], set(all_areas[MAX_AREAS:]) | _unranked_areas(hits, all_areas)
    labels = _labels(hits, labels_added, labels_removed, dropped)
    change_type, type_source = _change_type(hits, analysis, snapshot.title)
    reasons = breaking_reasons(snapshot, analysis, hits, is_config, renames)
    breaking = bool(reasons)
    factors = tuple(_factors(snapshot, analysis, hits, change_type, reasons, is_config, renames, type_source))
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
        reading_level=reading_level(importance, minutes, behaviour=any(f.source == "behaviour" for f in factors)),
        reading_minutes=minutes,
        audience=audience,
        hits=hits,
        skip=any(h.skip for h in hits),
        labels_removed_by_human=tuple(labels_removed),
        breaking_reasons=reasons,
        areas_more=len(all_areas) - len(areas),
    )


def reading_level(importance: int, minutes: int = DEEP_READ_MINUTES, *, behaviour: bool = False) -> str:
    """``deep`` (importance 7-10 and at least 20 minutes of reading), ``quick`` (5-10, or
    4 when source behaviour changes), ``skim`` (2-4) or ``skip`` (1).

    An important change that reads in ten minutes is a quick read, not a deep one:
    the level says how to read, the score how much it matters. A small fix that changes
    how the code behaves is worth a quick read even when it touches little.
    """
    if importance >= DEEP_IMPORTANCE and minutes >= DEEP_READ_MINUTES:
        return "deep"
    if importance >= QUICK_IMPORTANCE or (behaviour and importance >= QUICK_IMPORTANCE - 1):
        return "quick"
    if importance >= 2:
        return "skim"
    return "skip"


def source_lines(analysis: DiffAnalysis) -> int:
    """Changed lines of source files (not removed whole, not only comments and docstrings):
    the guide's "lines of code"."""
    return sum(f.changes for f in analysis.files if f.kind == "source" and f.status != "removed" and not f.prose_only)


def _labels(
    hits: tuple[RuleHit, ...], added: Sequence[str], removed: Sequence[str], dropped_areas: set[str]
) -> tuple[LabelDecision, ...]:
    removed_set = {r.lower() for r in removed}
    decisions: dict[str, LabelDecision] = {}
    for hit in hits:
        # A rule whose areas were all left out (too many, or only tests/docs/CI touched
        # them) does not label the PR with those areas.
        hidden = bool(hit.areas) and all(a in dropped_areas for a in hit.areas)
        for name in hit.labels:
            key = name.lower()
            if hidden and any(a.lower() in key for a in hit.areas):
                continue
            if key not in decisions and key not in removed_set:
                decisions[key] = LabelDecision(name, "rule", hit.rule_id, hit.source)
    for name in added:
        key = name.lower()
        if key not in decisions:
            decisions[key] = LabelDecision(name, "human")
    return tuple(decisions.values())


_DEPS_TITLE = re.compile(r"\b(?:bump|deps?|dependenc(?:y|ies)|upgrade|pin)\b", re.IGNORECASE)


def content_type(analysis: DiffAnalysis) -> str | None:
    """The change type the files alone prove, or None: ``test``, ``docs`` or ``ci`` when
    every changed file (generated and binary aside) is of that kind; ``deps`` when every
    changed line is a dependency change (build files with dependency changes, lock files)."""
    files = [f for f in analysis.files if f.kind not in ("generated", "binary")]
    if not files:
        return None
    kinds = {f.kind for f in files}
    for only in ("test", "docs", "ci"):
        if kinds == {only}:
            return only
    if kinds <= {"build", "docs"} and "build" in kinds and all(f.dependency_changes for f in files if f.kind == "build"):
        deps = sum(len(f.dependency_changes) for f in files)
        if deps and all(f.changes <= 4 * max(1, len(f.dependency_changes)) for f in files if f.kind == "build"):
            return "deps"
    return None


def _change_type(hits: tuple[RuleHit, ...], analysis: DiffAnalysis, title: str = "") -> tuple[str, str]:
    """A revert always wins; then what the files prove (a "fix" touching only tests is
    a test change); then the first rule-given type; then a guess from the files."""
    typed = [h for h in hits if h.change_type in CHANGE_TYPES]
    for h in typed:
        if h.change_type == "revert":
            return "revert", h.rule_id
    proven = content_type(analysis)
    if proven and (proven != "deps" or not typed or _DEPS_TITLE.search(title)):
        return proven, "content"
    if typed:
        return str(typed[0].change_type), typed[0].rule_id
    kinds = {f.kind for f in analysis.files} - {"generated", "binary"}
    if kinds == {"build"}:
        return "build", "inferred"
    sources = analysis.of_kind("source")
    if any(d.public for f in sources for d in f.definitions_added):
        return "feature", "inferred"
    if not sources:
        return "chore", "inferred"
    return "fix", "inferred"


def _config_fact(fact: Any, f: FileAnalysis | None, is_config: Callable[[str, str | None], bool] | None) -> bool:
    """True when ``fact`` is about user configuration: a key of a config file, or a field
    of a class the rules mark as configuration."""
    if f is None:
        return False
    if f.kind == "config":
        return True
    if f.kind != "source" or is_config is None:
        return False
    cls = fact.symbol.rpartition(".")[0] or None
    return bool(is_config(f.path, cls))


def breaking_reasons(
    snapshot: PullRequestSnapshot,
    analysis: DiffAnalysis,
    hits: Sequence[RuleHit],
    is_config: Callable[[str, str | None], bool] | None = None,
    renames: Mapping[str, tuple[tuple[str, str], ...]] | None = None,
) -> tuple[Claim, ...]:
    """Why the change breaks existing users, from the facts (empty when it does not).

    The author's mark (a rule's ``breaking``, ``[BREAKING]`` or ``type!:`` in the title)
    comes first, then behaviour facts about user-facing things: changed defaults and
    removed or renamed keys of configuration, removed, renamed or moved public symbols,
    public signature changes (a parameter added with a default is not one), new hard
    errors, raised dependency floors, major version moves of the package's
    dependencies, and environment variables named after the project that source code
    stops reading or reads with a new default
    (:func:`bot.engine.analysis.envvars.breaks_users`).
    """
    out: list[Claim] = []
    marked = [h for h in hits if h.breaking]
    if marked:
        out.append(Claim("breaking.marked", {"rule": marked[0].rule_id}, None, (Evidence(new=snapshot.title, source="metadata"),)))
    by_path = {f.path: f for f in analysis.files}
    seen: set[tuple[str, str]] = set()
    gone: dict[str, list[str]] = {}
    renamed_to = {(path, old): new for path, pairs in (rename_map(analysis) if renames is None else renames).items() for old, new in pairs}
    introduced: frozenset[str] | None = None
    # Asked once per name and over the removed lines joined once: a 3,000-file pull request
    # removes thousands of definitions, most of them under a few names.
    rewritten_by_name: dict[str, bool] = {}
    removed_lines: list[str | None] = []

    def rewritten(name: str) -> bool:
        found = rewritten_by_name.get(name)
        if found is None:
            if not removed_lines:
                removed_lines.append(removed_code_lines(analysis))
            found = rewritten_by_name[name] = callers_rewritten(name, analysis, removed_lines[0])
        return found

    for fact in analysis.behaviour:
        key = _BREAKING_FACTS.get(fact.kind)
        if key is None or not fact.user_facing:
            continue
        f = by_path.get(fact.path)
        if f is None or f.kind in ("test", "docs", "ci", "example", "generated"):
            continue
        if fact.kind in ENV_KINDS and not breaks_users(fact, f.kind, f.status, snapshot.repository):
            continue
        if f.status == "removed":
            # A file removed whole is one reason, however many keys or symbols it held.
            if fact.kind in ("symbol_removed", "key_removed", "field_removed"):
                gone.setdefault(f.path, []).append(fact.symbol)
            continue
        if fact.kind == "check_added":
            if introduced is None:
                introduced = introduced_names(analysis)
            code = breaking_check(fact, f, introduced, analysis)
            if not code:
                continue
        if fact.kind in ("default_changed", "key_removed", "key_renamed", "field_removed") and not _config_fact(fact, f, is_config):
            continue
        if not consequence_known(fact, f) or (fact.kind == "key_removed" and key_still_read(fact.symbol, analysis)):
            continue
        if fact.kind == "symbol_removed" and (fact.path, fact.symbol) not in renamed_to and local_helper(fact.symbol, f):
            continue  # a helper its own file called, caller rewritten too: not an API users import
        if fact.kind in ("symbol_removed", "symbol_renamed", "symbol_moved", "signature_changed") and rewritten(fact.old or fact.symbol):
            # The pull request rewrote the calls and references it has (of the old name, for a
            # rename: #4222 renamed a patch target and changed its one `patch(...)` line): a
            # refactor of internals; an importer outside the repository cannot be seen.
            continue
        params = {"name": fact.symbol, "old": fact.old, "new": fact.new, "detail": fact.detail}
        if fact.kind == "check_added":
            params["code"] = code
        elif fact.kind == "signature_changed":
            params["detail"] = signature_detail(fact.detail)
        if fact.kind == "symbol_removed" and (fact.path, fact.symbol) in renamed_to:
            key, params = "breaking.symbol_renamed", {"old": fact.symbol, "new": renamed_to[(fact.path, fact.symbol)]}
        ident = (fact.kind, fact.symbol)
        if ident in seen:
            continue
        seen.add(ident)
        out.append(Claim(key, params, fact.path, (fact_evidence(fact),)))
    for path, names in gone.items():
        names = list(dict.fromkeys(names))
        ev = (Evidence(path, new=f"file removed ({len(names)} definitions or keys)", source="metadata"),)
        out.append(Claim("breaking.file_removed", {"name": path, "names": tuple(names[:3]), "count": len(names)}, path, ev))
    out = group_key_removals(out)
    for f in analysis.files:
        if not _PACKAGE_FILE.search(f.path):
            continue
        for d in f.dependency_changes:
            if dep_is_major(d) and ("dep_major", d.name) not in seen:
                seen.add(("dep_major", d.name))
                ev = (Evidence(f.path, old=f"{d.name}{d.old_spec}", new=f"{d.name}{d.new_spec}"),)
                out.append(Claim("breaking.dep_major", {"name": d.name, "old": d.old_spec, "new": d.new_spec}, f.path, ev))
    return tuple(out)


#: Files that declare what users of the package install (not Docker images, CI or docs).
_PACKAGE_FILE = re.compile(r"^(?!docker/|\.github/|docs/|tests?/|examples?/)(?:[^/]+/)?(?:pyproject\.toml|setup\.py|setup\.cfg|requirements[^/]*\.txt|package\.json|go\.mod|Cargo\.toml)$")


def _capped(factors: list[Factor], part: str, cap: int) -> list[Factor]:
    total = sum(f.points for f in factors if f.part == part and f.points > 0)
    if total > cap:
        ev = tuple(e for f in factors if f.part == part and f.points > 0 for e in f.evidence[:1])
        factors.append(Factor(cap - total, f"cap.{part}", "factor.cap", {"part": part, "max": cap}, part, ev))
    return factors


def _factors(
    snapshot: PullRequestSnapshot,
    analysis: DiffAnalysis,
    hits: tuple[RuleHit, ...],
    change_type: str,
    reasons: tuple[Claim, ...],
    is_config: Callable[[str, str | None], bool] | None,
    renames: Mapping[str, tuple[tuple[str, str], ...]],
    type_source: str = "rule",
) -> list[Factor]:
    factors = [Factor(1, "base", "factor.base", {}, "other", (Evidence(new=f"#{snapshot.number}", source="metadata"),))]
    sources = [f for f in analysis.of_kind("source") if f.status != "removed" or f.definitions_removed]
    # A file whose change is only comments and docstrings changes no code.
    live = [f for f in sources if f.status != "removed" and not f.prose_only]
    # -- reach: how much of the project and how many users the change touches
    code = source_lines(analysis)
    size_points = 0 if code < 20 else 1 if code < 200 else 2 if code < 1000 else 3
    if size_points:
        factors.append(Factor(size_points, "size", "factor.size", {"count": code}, "reach", _metadata_evidence(live)))
    budget = MAX_RULE_POINTS
    for hit in hits:
        points = hit.importance if hit.importance < 0 else min(hit.importance, budget)
        if points:
            budget -= max(points, 0)
            ev = tuple(Evidence(p, new=hit.source, source="metadata") for p in hit.files[:3]) or (Evidence(new=hit.source, source="metadata"),)
            factors.append(Factor(points, hit.rule_id, "factor.rule", {"rule": hit.rule_id}, "reach" if points > 0 else "other", ev))
    renamed = {n for pairs in renames.values() for pair in pairs for n in pair}
    # An entry script's helpers are nobody's API: nothing imports a ``main_*.py``.
    added = [n for f in live if not entry_script(f.path) for n in api_names(f.definitions_added) if n not in renamed]
    removed = [n for f in sources if not entry_script(f.path) for n in api_names(f.definitions_removed) if n not in renamed]
    if added or removed:
        factors.append(
            Factor(1, "api", "factor.api", {"count": len(added) + len(removed), "added": len(added), "removed": len(removed), "names": _first(removed + added)}, "reach",
                   _definition_evidence(sources, set(_first(removed + added))))
        )
    keys = _config_keys(analysis, is_config)
    if keys:
        factors.append(Factor(1, "config", "factor.config", {"count": len(keys), "names": _first(keys)}, "reach", _key_evidence(analysis, _first(keys))))
    env = env_variables(analysis)
    if env:
        factors.append(Factor(1, "env", "factor.env", {"count": len(env), "names": _first(env)}, "reach", _fact_evidence_for(analysis, _first(env))))
    # A file removed whole drops its install lines, not the project's dependencies.
    dep_files = [f for f in analysis.files if f.kind in ("build", "source", "config") and f.status != "removed" and f.dependency_changes]
    # ``FROM ${BASE_IMAGE}`` names a build argument, not a dependency (as in the focus points).
    deps = [d for f in dep_files for d in f.dependency_changes if not _TEMPLATED_NAME.search(d.name)]
    if deps:
        names = list(dict.fromkeys(d.name for d in deps))
        ev = tuple(Evidence(f.path, old=f"{d.name}{d.old_spec}", new=f"{d.name}{d.new_spec}") for f in dep_files
                   for d in [x for x in f.dependency_changes if not _TEMPLATED_NAME.search(x.name)][:1])[:3]
        factors.append(Factor(1, "dependencies", "factor.deps", {"count": len(names), "names": _first(names)}, "reach", ev))
    _capped(factors, "reach", MAX_REACH)
    # -- risk: how likely it is to hurt someone, and how badly
    existing = existing_functions(live)
    behaves = bool(live) and change_type in ("fix", "feature", "perf", "revert")
    if behaves:
        # Says what it rests on (the change type and source code changing), not "changes how the code behaves".
        # A guessed type is not stated as fact ("a fix" for a commit that never said so).
        key = "factor.behaviour.source" if type_source == "inferred" else f"factor.behaviour.{change_type}"
        factors.append(Factor(2, "behaviour", key, {"type": change_type}, "risk", _metadata_evidence(live)))
        # A feature counts only where it rewrites existing lines, not where it only adds.
        if existing and (change_type in ("fix", "perf", "revert") or any(f.deletions for f in live if f.symbols_touched)):
            # A fix inside code every existing run goes through reaches further than new code.
            names = [n for n, _ev in existing]
            factors.append(Factor(1, "existing", "factor.existing", {"count": len(names), "names": _first(names)}, "risk", tuple(ev for _n, ev in existing[:3])))
    elif existing and change_type in ("chore", "ci", "build", "deps", "test", "docs"):
        # The title says housekeeping, but functions the package runs changed: not safe to skip.
        names = [n for n, _ev in existing]
        factors.append(Factor(2, "runtime", "factor.runtime", {"count": len(names), "names": _first(names), "type": change_type}, "risk", tuple(ev for _n, ev in existing[:3])))
    elif live and change_type == "refactor":
        factors.append(Factor(1, "refactor", "factor.refactor", {}, "risk", _metadata_evidence(live)))
    if reasons:
        factors.append(Factor(2, "breaking", "factor.breaking", {"count": len(reasons)}, "risk", tuple(e for r in reasons[:3] for e in r.evidence)))
    else:
        # Only what users install: an image or CI pin (often per platform) is not the package's floor.
        major = [(f, d) for f in dep_files if _PACKAGE_FILE.search(f.path) for d in f.dependency_changes if dep_is_major(d)]
        if major:
            ev = tuple(Evidence(f.path, old=f"{d.name}{d.old_spec}", new=f"{d.name}{d.new_spec}") for f, d in major[:3])
            factors.append(Factor(1, "dep-major", "factor.deps_major", {"names": _first([d.name for _f, d in major])}, "risk", ev))
    if behaves:
        for tok in risk_tokens(snapshot, live):
            # Running or parsing untrusted input can cost more than a wrong number.
            key = f"factor.{tok.kind}_{'added' if tok.added else 'removed'}"
            factors.append(Factor(2 if tok.kind == "untrusted" else 1, tok.kind, key, {"file": tok.path, "code": tok.token.rstrip("(")}, "risk", (tok.evidence,)))
    broken = [e for e in analysis.edits if e.kind == "continuation_broken"]
    if broken:
        # A command cut short fails, or runs without the arguments after the break: never safe to skip.
        factors.append(Factor(4, "broken-command", "factor.broken_command", {"file": broken[0].path, "line": broken[0].line}, "risk",
                              tuple(e.evidence for e in broken[:3])))
    _capped(factors, "risk", MAX_RISK)
    tests = [t for f in analysis.files for t in f.tests_added]
    # A fix that comes with its regression test shows what was wrong; a feature's tests come with it anyway.
    if behaves and tests and change_type in ("fix", "perf", "revert"):
        ev = tuple(Evidence(f.path, new=t) for f in analysis.files for t in f.tests_added[:1])[:3]
        factors.append(Factor(1, "tests", "factor.tests", {"count": len(tests)}, "other", ev))
    # -- other
    if change_type == "revert":
        factors.append(Factor(1, "revert", "factor.revert", {}, "other", (Evidence(new=snapshot.title, source="metadata"),)))
    threads = {c.thread_id for c in snapshot.review_comments if not c.user_is_bot}
    changes_requested = any(r.state == "CHANGES_REQUESTED" for r in snapshot.reviews)
    if len(threads) >= 3 or changes_requested:
        ev = tuple(Evidence(c.path, c.line or 0, c.line or 0, new=c.body[:160], source="review") for c in snapshot.review_comments if not c.user_is_bot)[:3]
        ev = ev or (Evidence(new="CHANGES_REQUESTED", source="review"),)
        factors.append(Factor(1, "review", "factor.review", {"threads": len(threads)}, "other", ev))
    if snapshot.author_is_bot:
        factors.append(Factor(-1, "bot", "factor.bot", {"author": snapshot.author}, "other", (Evidence(new=snapshot.author, source="metadata"),)))
    if not live:
        # No source: config, build, CI and test lines still change what runs; docs count a fifth.
        kept = [f for f in analysis.files if f.status != "removed"]
        runs = [f for f in kept if f.kind in ("config", "build", "ci", "test", "example")]
        docs = [f for f in kept if f.kind == "docs"]
        other, doc_lines = sum(f.changes for f in runs), sum(f.changes for f in docs)
        if other + doc_lines // 5 >= 10:
            # Say exactly which lines: "12 lines of config ..." must not count doc lines.
            key = "factor.size_other" if not doc_lines else "factor.size_docs" if not other else "factor.size_mixed"
            factors.append(Factor(1, "size", key, {"count": other or doc_lines, "docs": doc_lines}, "reach", _metadata_evidence(runs + docs)))
        elif not keys and not deps and not reasons:
            factors.append(Factor(-1, "no-source", "factor.no_source", {}, "other", _metadata_evidence(kept)))
    return factors


def _config_keys(analysis: DiffAnalysis, is_config: Callable[[str, str | None], bool] | None) -> list[str]:
    """User-facing config keys added, removed or given a new default: keys of config
    files, and fields of classes ``is_config`` marks as configuration.

    A config file's key that another config file of the pull request also changes at the
    end of its path (``veomni.rms_norm`` beside ``rms_norm``: one option set in a composed
    config and in the config that holds it) is one option, counted once."""
    out: list[str] = []
    by_leaf: dict[str, list[tuple[str, str]]] = {}  # last part -> (key, file) of config-file keys kept
    for f in analysis.files:
        if f.kind == "config":
            for k in public_keys(f, f.config_keys_added + f.config_keys_removed):
                leaf = k.rpartition(".")[2]
                seen = by_leaf.setdefault(leaf, [])
                if any(path != f.path and (k == other or k.endswith("." + other) or other.endswith("." + k)) for other, path in seen):
                    continue
                seen.append((k, f.path))
                out.append(k)
        elif f.kind == "source" and is_config is not None:
            fields = f.fields_added + f.fields_removed
            out += [k for k in public_keys(f, fields) if is_config(f.path, k.rpartition(".")[0] or None)]
    by_path = None
    for fact in analysis.behaviour:
        if fact.kind == "default_changed" and fact.symbol not in out:
            by_path = by_path or {x.path: x for x in analysis.files}
            if _config_fact(fact, by_path.get(fact.path), is_config):
                out.append(fact.symbol)
    return list(dict.fromkeys(out))


def env_variables(analysis: DiffAnalysis) -> list[str]:
    """Environment variables the package's source code starts reading, stops reading or
    reads with a new default, in files that exist on both sides (a new module's reads
    are part of the new module; a removed file's, of its removal). Scripts, images,
    tests and CI set variables for themselves and do not count."""
    out: list[str] = []
    for f in analysis.files:
        if f.kind == "source" and f.behaviour and f.status not in ("added", "removed"):
            out += [b.symbol for b in f.behaviour if b.kind in ENV_KINDS and b.user_facing and b.detail != "set"]
    return list(dict.fromkeys(out))


def _memo(is_config: Callable[[str, str | None], bool]) -> Callable[[str, str | None], bool]:
    """``is_config`` remembering its answers for one classification (it matches globs)."""
    seen: dict[tuple[str, str | None], bool] = {}

    def cached(path: str, class_name: str | None = None) -> bool:
        key = (path, class_name)
        if key not in seen:
            seen[key] = bool(is_config(path, class_name))
        return seen[key]

    return cached


_BRACKETS = re.compile(r"^\s*((?:\[[^\]]*\]\s*)+)")
_CONVENTIONAL_SCOPE = re.compile(r"^\s*[A-Za-z-]+\(([^)]*)\)!?:")


_BRACKET_ITEM = re.compile(r"[^\[\],]+")


def title_scopes(title: str) -> tuple[str, ...]:
    """The scopes a title names, lower-cased: ``[megatron, fsdp] fix: …`` and ``fix(ckpt): …``."""
    found: list[str] = []
    brackets = _BRACKETS.match(title)
    if brackets:
        found += _BRACKET_ITEM.findall(brackets.group(1))
    conventional = _CONVENTIONAL_SCOPE.match(title)
    if conventional:
        found += conventional.group(1).split(",")
    return tuple(dict.fromkeys(x.strip().lower() for x in found if x.strip()))


#: File kinds that make an area on their own; tests, docs and CI only when nothing else does.
_AREA_KINDS = ("source", "config", "build", "example")


def _ranked_areas(hits: tuple[RuleHit, ...], analysis: DiffAnalysis, scopes: tuple[str, ...]) -> tuple[str, ...]:
    """Areas the title names first (the author's own word), then by changed lines of
    source and config files in them. Areas only tests, docs or CI files reach count
    only when no area is reached by source or config files."""
    code = {f.path: f.changes for f in analysis.files if f.kind in _AREA_KINDS}
    other = {f.path: f.changes for f in analysis.files if f.counts_as_code and f.kind not in _AREA_KINDS}
    weight: dict[str, float] = {}
    secondary: dict[str, float] = {}
    for hit in hits:
        w = sum(code.get(p, 0) for p in hit.files) if hit.files else 0
        o = sum(other.get(p, 0) for p in hit.files) if hit.files else 0
        for area in hit.areas:
            if area.lower() in scopes:
                weight[area] = float("inf")
            elif w or not hit.files:
                weight[area] = max(weight.get(area, -1.0), float(w))
            else:
                secondary[area] = max(secondary.get(area, -1.0), float(o))
    if not weight:
        weight = secondary
    return tuple(sorted(weight, key=lambda a: -weight[a]))


def _unranked_areas(hits: tuple[RuleHit, ...], ranked: tuple[str, ...]) -> set[str]:
    kept = set(ranked)
    return {a for h in hits for a in h.areas if a not in kept}


def _first(names: Sequence[str], n: int = 3) -> tuple[str, ...]:
    """The first ``n`` names; the renderer shows them as code and adds "…" when ``count`` is larger."""
    return tuple(names[:n])


def _audience(hits: tuple[RuleHit, ...], areas: tuple[str, ...], lang: str, audience_for_area: Any) -> tuple[str, ...]:
    out: list[str] = []
    shown = set(areas)
    for hit in hits:
        if hit.areas and not shown.intersection(hit.areas):
            continue
        text = hit.audience.get(lang) if hit.audience else None
        if text:
            out.append(text)
    if audience_for_area is not None:
        for area in areas:
            text = audience_for_area(area, lang)
            if text:
                out.append(text)
    return tuple(dict.fromkeys(out))
