"""Validate one rule file and build its rules, label descriptions and areas.

Every problem is collected (not only the first) as ``FILE:LINE: rule ID: message``
with the line of the offending key or list item. The format is described in
:mod:`bot.engine.rules`; the keys known here are the reference.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

from bot.engine.analysis.model import KINDS
from bot.engine.rules.conditions import (
    LINE_FIELDS,
    AnyCondition,
    BotsCondition,
    CountCondition,
    FilesCondition,
    KindsCondition,
    LinesCondition,
    NameCondition,
    Pattern,
    TextCondition,
)
from bot.engine.rules.effects import BASE_FIELDS, FOCUS_FIELDS, MAX_LABEL_CHARS, Effects
from bot.engine.rules.globs import Glob, GlobProblem, compile_glob
from bot.engine.rules.model import CHANGE_TYPES, LANGUAGES, LabelSpec, Problem
from bot.engine.rules.safe_regex import RegexProblem, compile_rule_regex
from bot.engine.rules.templates import Template, TemplateProblem, parse_template
from bot.engine.rules.yamlsrc import YList, YMap, line_of

#: Conditions, in the order a rule tests them (cheap first; files before the line conditions they narrow).
CONDITION_KEYS = (
    "bots",
    "authors",
    "base_branch",
    "min_lines",
    "max_lines",
    "min_files",
    "max_files",
    "kinds",
    "scopes",
    "title",
    "body",
    "files",
    "any",
    "added",
    "removed",
    "symbols",
    "removed_definitions",
    "removed_config_keys",
    "config_keys",
    "dependencies",
)
EFFECT_KEYS = ("labels", "area", "type", "importance", "breaking", "audience", "focus", "skip")
RULE_KEYS = ("id", "description", "enabled", *CONDITION_KEYS, *EFFECT_KEYS)
TOP_KEYS = ("rules", "labels", "areas", "disable", "config")
#: Keys of the top-level ``config:`` section.
CONFIG_KEYS = ("paths", "classes")
_CLASS_GLOB = re.compile(r"[A-Za-z0-9_.*?]+\Z")

#: Most points one rule may add or take away.
MAX_IMPORTANCE = 10
#: GitHub's longest label description ("Create a label": description max 100 characters).
MAX_DESCRIPTION_CHARS = 100

_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.\-/]*\Z")
_COLOR = re.compile(r"#?[0-9A-Fa-f]{6}\Z")


@dataclass(frozen=True, slots=True)
class Rule:
    """One validated rule; ``source`` is ``FILE:LINE`` of its first key."""

    id: str
    file: str
    line: int
    conditions: tuple[Any, ...]
    effects: Effects
    description: str = ""
    enabled: bool = True

    @property
    def source(self) -> str:
        """``FILE:LINE`` of the rule."""
        return f"{self.file}:{self.line}"


@dataclass(frozen=True, slots=True)
class LabelDecl:
    """A ``labels:`` entry; ``pattern`` is set for templated names such as ``area/{area}``."""

    name: str
    spec: LabelSpec
    pattern: re.Pattern | None = None
    description: Template | None = None


@dataclass(frozen=True, slots=True)
class Area:
    """An ``areas:`` entry: display ``names`` and ``audience`` phrases by language."""

    id: str
    names: Mapping[str, str]
    audience: Mapping[str, str]
    file: str = ""
    line: int = 0


@dataclass
class RuleFile:
    """What one rule file holds once validated; ``disable`` entries are ``(id, line)``."""

    source: str
    rules: list[Rule] = field(default_factory=list)
    labels: list[LabelDecl] = field(default_factory=list)
    areas: dict[str, Area] = field(default_factory=dict)
    disable: list[tuple[str, int]] = field(default_factory=list)
    area_refs: list[tuple[str, str, int]] = field(default_factory=list)  # (area, rule id, line)
    problems: list[Problem] = field(default_factory=list)
    config_paths: list[Glob] = field(default_factory=list)
    config_classes: list[str] = field(default_factory=list)


def suggest(key: object, known: Collection[str]) -> str:
    """`` (did you mean 'title'?)`` when a known key is close to ``key``, else ``""``."""
    close = difflib.get_close_matches(str(key), list(known), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _kind(value: object) -> str:
    return {str: "text", int: "a number", float: "a number", bool: "true/false", type(None): "nothing"}.get(
        type(value),
        "a mapping" if isinstance(value, dict) else "a list" if isinstance(value, list) else type(value).__name__,
    )


class _Checker:
    def __init__(self, out: RuleFile, rule_id: str | None = None):
        self.out = out
        self.rule_id = rule_id

    def problem(self, line: int, message: str) -> None:
        self.out.problems.append(Problem(self.out.source, line, message, self.rule_id))

    def strings(self, value: Any, line: int, what: str) -> list[tuple[str, int]]:
        """A string or a non-empty list of strings, with lines; reports anything else."""
        if isinstance(value, str):
            return [(value, line)]
        if isinstance(value, list) and value:
            out = []
            for i, item in enumerate(value):
                item_line = value.line_of(i) if isinstance(value, YList) else line
                if isinstance(item, str):
                    out.append((item, item_line))
                else:
                    self.problem(item_line, f"{what}: expected text, got {_kind(item)}")
            return out
        if isinstance(value, list):
            self.problem(line, f"{what}: empty list")
        else:
            self.problem(line, f"{what}: expected text or a list of text, got {_kind(value)}")
        return []

    def unknown_keys(self, node: Mapping, known: Collection[str], what: str) -> None:
        for key in node:
            if key not in known:
                where = f"{what}: " if what else ""
                self.problem(node.line_of(key), f"{where}unknown key {key!r}{suggest(key, known)}")


def parse_document(doc: Any, source: str, *, extra_keys: Collection[str] = ()) -> RuleFile:
    """Validate a loaded rule-file document (from :func:`bot.engine.rules.yamlsrc.load_yaml`).

    ``extra_keys`` are top-level keys the caller reads itself (e.g. a per-repository
    config file's other settings); they are skipped without a problem.
    """
    out = RuleFile(source)
    chk = _Checker(out)
    if doc is None:
        return out
    if not isinstance(doc, YMap):
        chk.problem(line_of(doc, 1), f"a rule file must be a mapping with a 'rules:' list, got {_kind(doc)}")
        return out
    chk.unknown_keys(doc, (*TOP_KEYS, *extra_keys), "")
    if "labels" in doc:
        _labels(doc["labels"], doc.line_of("labels"), chk)
    if "areas" in doc:
        _areas(doc["areas"], doc.line_of("areas"), chk)
    if "config" in doc:
        _config(doc["config"], doc.line_of("config"), chk)
    if "disable" in doc:
        for rid, line in chk.strings(doc["disable"], doc.line_of("disable"), "disable"):
            out.disable.append((rid, line))
    rules = doc.get("rules")
    if rules is None:
        return out
    if not isinstance(rules, YList):
        chk.problem(doc.line_of("rules"), f"'rules' must be a list of rules, got {_kind(rules)}")
        return out
    for i, node in enumerate(rules):
        rule = _rule(node, i, rules.line_of(i), out)
        if rule is not None:
            out.rules.append(rule)
    return out


# --- rules --------------------------------------------------------------------------------------------------


def _rule(node: Any, index: int, line: int, out: RuleFile) -> Rule | None:
    if not isinstance(node, YMap):
        _Checker(out, f"#{index + 1}").problem(line, f"each rule must be a mapping, got {_kind(node)}")
        return None
    rid = node.get("id")
    good_id = isinstance(rid, str) and bool(_ID.match(rid))
    shown = rid if isinstance(rid, str) and rid.strip() else f"#{index + 1}"
    chk = _Checker(out, shown)
    before = len(out.problems)
    if "id" not in node:
        chk.problem(node.line, "missing 'id'")
    elif isinstance(rid, bool):
        chk.problem(
            node.line_of("id"),
            "'id' must be text, but YAML reads yes/no/on/off/true/false as true or false; put the id in quotes",
        )
    elif not good_id:
        chk.problem(
            node.line_of("id"), "'id' must be text of letters, digits and - _ . / (starting with a letter or digit)"
        )
    chk.unknown_keys(node, RULE_KEYS, "")
    description = node.get("description", "")
    if not isinstance(description, str):
        chk.problem(node.line_of("description"), f"description: expected text, got {_kind(description)}")
        description = ""
    enabled = node.get("enabled", True)
    if not isinstance(enabled, bool):
        chk.problem(node.line_of("enabled"), f"enabled: expected true or false, got {_kind(enabled)}")
        enabled = True
    conditions, captures, has_scopes = _conditions(node, chk)
    effects = _effects(node, chk, captures, has_scopes, out)
    if effects.empty and not any(k in node for k in EFFECT_KEYS):
        chk.problem(
            node.line, "rule has no effect; give it labels, area, type, importance, breaking, audience, focus or skip"
        )
    if len(out.problems) > before or not good_id:
        return None
    return Rule(rid, out.source, node.line, tuple(conditions), effects, description, enabled)


def _conditions(node: YMap, chk: _Checker, *, prefix: str = "") -> tuple[list[Any], set[str], bool]:
    """Build a group's conditions; returns them with the capture names they provide and whether ``scopes`` is used."""
    conditions: list[Any] = []
    captures: set[str] = set()
    has_scopes = False
    for key in CONDITION_KEYS:
        if key not in node:
            continue
        value, line, what = node[key], node.line_of(key), prefix + key
        cond = None
        if key == "files":
            cond = _files(value, line, chk, what)
        elif key in ("title", "body"):
            patterns = _patterns(value, line, chk, what)
            if patterns:
                cond = TextCondition(key, patterns)
                for p in patterns:
                    captures.update(p.groups)
        elif key in LINE_FIELDS:
            cond = _lines(key, value, line, chk, what)
        elif key in ("authors", "base_branch", "scopes"):
            globs = [
                (text, _simple_glob(text, case=key == "base_branch")) for text, _ in chk.strings(value, line, what)
            ]
            if globs:
                cond = NameCondition(key, tuple(globs))
                has_scopes |= key == "scopes"
        elif key == "bots":
            if isinstance(value, bool):
                cond = BotsCondition(value)
            else:
                chk.problem(line, f"{what}: expected true or false, got {_kind(value)}")
        elif key in ("min_lines", "max_lines", "min_files", "max_files"):
            if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
                cond = CountCondition(key, value)
            else:
                chk.problem(line, f"{what}: expected a whole number >= 0, got {value!r}")
        elif key == "kinds":
            cond = _kinds(value, line, chk, what)
        elif key == "any":
            cond, sub_captures, sub_scopes = _any(value, line, chk, what)
            captures |= sub_captures
            has_scopes |= sub_scopes
        if cond is not None:
            conditions.append(cond)
    for unit in ("lines", "files"):
        lo, hi = node.get(f"min_{unit}"), node.get(f"max_{unit}")
        if isinstance(lo, int) and isinstance(hi, int) and lo > hi:
            chk.problem(
                node.line_of(f"max_{unit}"),
                f"{prefix}max_{unit} {hi} is below min_{unit} {lo}; no pull request can match",
            )
    return conditions, captures, has_scopes


def _any(value: Any, line: int, chk: _Checker, what: str) -> tuple[AnyCondition | None, set[str], bool]:
    if not isinstance(value, YList) or not value:
        chk.problem(line, f"{what}: expected a list of condition groups, got {_kind(value)}")
        return None, set(), False
    groups, captures, scopes = [], set(), False
    for i, group in enumerate(value):
        item_line = value.line_of(i)
        if not isinstance(group, YMap) or not group:
            chk.problem(item_line, f"{what}[{i + 1}]: expected a mapping of conditions, got {_kind(group)}")
            continue
        for key in group:
            if key in EFFECT_KEYS:
                chk.problem(
                    group.line_of(key),
                    f"{what}[{i + 1}]: {key!r} is an effect; effects belong to the rule, not inside 'any'",
                )
            elif key not in CONDITION_KEYS:
                chk.problem(
                    group.line_of(key), f"{what}[{i + 1}]: unknown condition {key!r}{suggest(key, CONDITION_KEYS)}"
                )
        conds, caps, sc = _conditions(group, chk, prefix=f"{what}[{i + 1}].")
        if conds:
            groups.append(tuple(conds))
        captures |= caps
        scopes |= sc
    return (AnyCondition(tuple(groups)) if groups else None), captures, scopes


def _globs(value: Any, line: int, chk: _Checker, what: str) -> tuple:
    out = []
    for text, item_line in chk.strings(value, line, what):
        try:
            out.append(compile_glob(text))
        except GlobProblem as exc:
            chk.problem(item_line, f"{what}: {exc}")
    return tuple(out)


def _files(value: Any, line: int, chk: _Checker, what: str) -> FilesCondition | None:
    if isinstance(value, YMap):
        chk.unknown_keys(value, ("any", "all", "exclude"), what)
        if "any" not in value and "all" not in value:
            chk.problem(line, f"{what}: give 'any' or 'all' globs")
            return None
        parts = {
            k: _globs(value[k], value.line_of(k), chk, f"{what}.{k}") for k in ("any", "all", "exclude") if k in value
        }
        if not (parts.get("any") or parts.get("all")):
            return None
        return FilesCondition(**parts)
    globs = _globs(value, line, chk, what)
    return FilesCondition(any=globs) if globs else None


def _patterns(value: Any, line: int, chk: _Checker, what: str) -> tuple[Pattern, ...]:
    out = []
    for text, item_line in chk.strings(value, line, what):
        try:
            out.append(Pattern(text, compile_rule_regex(text)))
        except RegexProblem as exc:
            chk.problem(item_line, f"{what}: {exc}")
    return tuple(out)


def _lines(key: str, value: Any, line: int, chk: _Checker, what: str) -> LinesCondition | None:
    narrow = True
    if isinstance(value, YMap):
        chk.unknown_keys(value, ("regex", "in_matched_files"), what)
        narrow = value.get("in_matched_files", True)
        if not isinstance(narrow, bool):
            chk.problem(
                value.line_of("in_matched_files"),
                f"{what}.in_matched_files: expected true or false, got {_kind(narrow)}",
            )
            narrow = True
        if "regex" not in value:
            chk.problem(line, f"{what}: missing 'regex'")
            return None
        line, value = value.line_of("regex"), value["regex"]
    patterns = _patterns(value, line, chk, what)
    return LinesCondition(key, patterns, narrow) if patterns else None


def _kinds(value: Any, line: int, chk: _Checker, what: str) -> KindsCondition | None:
    def names(v: Any, ln: int, w: str) -> frozenset[str]:
        good = set()
        for text, item_line in chk.strings(v, ln, w):
            if text in KINDS:
                good.add(text)
            else:
                chk.problem(
                    item_line, f"{w}: unknown kind {text!r}{suggest(text, KINDS)}; kinds are {', '.join(KINDS)}"
                )
        return frozenset(good)

    if isinstance(value, YMap):
        chk.unknown_keys(value, ("any", "all"), what)
        if "any" not in value and "all" not in value:
            chk.problem(line, f"{what}: give 'any' or 'all' kinds")
            return None
        parts = {k: names(value[k], value.line_of(k), f"{what}.{k}") for k in ("any", "all") if k in value}
        return KindsCondition(**parts) if any(parts.values()) else None
    kinds = names(value, line, what)
    return KindsCondition(any=kinds) if kinds else None


def _simple_glob(text: str, *, case: bool) -> re.Pattern:
    """``*`` any text, ``?`` one character, everything else literal (so ``*[bot]`` means what it says)."""
    body = "".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in text.strip())
    return re.compile(body, 0 if case else re.IGNORECASE)


# --- effects ------------------------------------------------------------------------------------------------


def _effects(node: YMap, chk: _Checker, captures: set[str], has_scopes: bool, out: RuleFile) -> Effects:
    known = (BASE_FIELDS - ({"scope"} if not has_scopes else set())) | captures
    kw: dict[str, Any] = {}

    def templates(key: str, fields: frozenset[str]) -> tuple[Template, ...]:
        result = []
        for text, item_line in chk.strings(node[key], node.line_of(key), key):
            t = _template(text, item_line, chk, key, fields)
            if t is None:
                continue
            if not t.text.strip():
                chk.problem(item_line, f"{key}: empty name")
                continue
            if key == "labels" and not t.fields and len(t.text) > MAX_LABEL_CHARS:
                chk.problem(item_line, f"labels: {t.text!r} is longer than GitHub's {MAX_LABEL_CHARS} characters")
                continue
            result.append(t)
        return tuple(result)

    def _template(text: str, line: int, chk: _Checker, what: str, fields: frozenset[str]) -> Template | None:
        try:
            t = parse_template(text)
        except TemplateProblem as exc:
            chk.problem(line, f"{what}: {exc}")
            return None
        for name in sorted(t.fields - fields):
            chk.problem(
                line,
                f"{what}: unknown placeholder {{{name}}}{suggest(name, fields)}; this rule provides {', '.join(sorted(fields)) or 'none'}",
            )
            return None
        return t

    def texts(key: str, fields: frozenset[str]) -> dict[str, Template]:
        value, line = node[key], node.line_of(key)
        if isinstance(value, str):
            pairs = [(lang, value, line) for lang in LANGUAGES]
        elif isinstance(value, YMap) and value:
            pairs = []
            for lang in value:
                if lang not in LANGUAGES:
                    chk.problem(
                        value.line_of(lang),
                        f"{key}: unknown language {lang!r}{suggest(lang, LANGUAGES)}; use {', '.join(LANGUAGES)}",
                    )
                else:
                    pairs.append((lang, value[lang], value.line_of(lang)))
        else:
            chk.problem(line, f"{key}: expected text or a mapping of language to text (en, zh), got {_kind(value)}")
            return {}
        result = {}
        for lang, text, text_line in pairs:
            t = _template(text, text_line, chk, f"{key}.{lang}" if not isinstance(value, str) else key, fields)
            if t is not None:
                result[lang] = t
        return result

    if "area" in node:
        kw["areas"] = templates("area", frozenset(known - {"area"}))
        for t in kw["areas"]:
            if not t.fields:
                out.area_refs.append((t.text, chk.rule_id or "", node.line_of("area")))
    if "labels" in node:
        kw["labels"] = templates("labels", frozenset(known))
    if "type" in node:
        value = node["type"]
        if value in CHANGE_TYPES:
            kw["change_type"] = value
        else:
            chk.problem(
                node.line_of("type"),
                f"type: unknown change type {value!r}{suggest(value, CHANGE_TYPES)}; types are {', '.join(CHANGE_TYPES)}",
            )
    if "importance" in node:
        value = node["importance"]
        if isinstance(value, int) and not isinstance(value, bool) and -MAX_IMPORTANCE <= value <= MAX_IMPORTANCE:
            kw["importance"] = value
        else:
            chk.problem(
                node.line_of("importance"),
                f"importance: expected a whole number from -{MAX_IMPORTANCE} to {MAX_IMPORTANCE}, got {value!r}",
            )
    for key in ("breaking", "skip"):
        if key in node:
            if isinstance(node[key], bool):
                kw[key] = node[key]
            else:
                chk.problem(node.line_of(key), f"{key}: expected true or false, got {_kind(node[key])}")
    if "audience" in node:
        kw["audience"] = texts("audience", frozenset(known))
    if "focus" in node:
        kw["focus"] = texts("focus", frozenset(known | FOCUS_FIELDS))
    return Effects(**kw)


# --- labels and areas ---------------------------------------------------------------------------------------


def _labels(value: Any, line: int, chk: _Checker) -> None:
    if not isinstance(value, YMap):
        chk.problem(line, f"'labels' must map label names to {{color, description}}, got {_kind(value)}")
        return
    for name, spec in value.items():
        name_line = value.line_of(name)
        if not isinstance(name, str) or not name.strip():
            chk.problem(name_line, f"labels: a label name must be text, got {name!r}")
            continue
        if not isinstance(spec, YMap):
            chk.problem(name_line, f"labels: {name}: expected a mapping with color and description, got {_kind(spec)}")
            continue
        chk.unknown_keys(spec, ("color", "description"), f"labels: {name}")
        color = spec.get("color", LabelSpec(name).color)
        if isinstance(color, int) and not isinstance(color, bool) and len(str(color)) == 6:
            color = str(color)  # YAML reads 000000-style colours as numbers
        if not isinstance(color, str) or not _COLOR.match(color):
            chk.problem(
                spec.line_of("color"), f"labels: {name}: color must be 6 hex digits such as 'd73a4a', got {color!r}"
            )
            continue
        description = spec.get("description", "")
        if not isinstance(description, str) or len(description) > MAX_DESCRIPTION_CHARS:
            chk.problem(
                spec.line_of("description"),
                f"labels: {name}: description must be text of at most {MAX_DESCRIPTION_CHARS} characters",
            )
            continue
        try:
            name_t = parse_template(name)
            desc_t = parse_template(description)
        except TemplateProblem as exc:
            chk.problem(name_line, f"labels: {exc}")
            continue
        for extra in sorted(desc_t.fields - name_t.fields):
            chk.problem(
                spec.line_of("description"),
                f"labels: {name}: description uses {{{extra}}}, which the label name does not have",
            )
        spec_obj = LabelSpec(name, color.lstrip("#").lower(), description)
        if name_t.fields or "*" in name:
            if len("".join(lit for lit, _ in name_t.parts)) > MAX_LABEL_CHARS:
                chk.problem(name_line, f"labels: {name!r} is longer than GitHub's {MAX_LABEL_CHARS} characters")
                continue
            chk.out.labels.append(LabelDecl(name, spec_obj, _label_pattern(name_t), desc_t))
        elif len(name) > MAX_LABEL_CHARS:
            chk.problem(name_line, f"labels: {name!r} is longer than GitHub's {MAX_LABEL_CHARS} characters")
        else:
            chk.out.labels.append(LabelDecl(name, spec_obj))


def _label_pattern(t: Template) -> re.Pattern:
    parts = []
    for literal, name in t.parts:
        parts.append(".*".join(re.escape(piece) for piece in literal.split("*")))
        if name:
            parts.append(f"(?P<{name}>.+?)")
    return re.compile("".join(parts), re.IGNORECASE)


def _config(value: Any, line: int, chk: _Checker) -> None:
    """``config: {paths: [globs], classes: [class-name globs]}``: what counts as user configuration."""
    if not isinstance(value, YMap):
        chk.problem(line, f"'config' must be a mapping with 'paths' and/or 'classes', got {_kind(value)}")
        return
    chk.unknown_keys(value, CONFIG_KEYS, "config")
    if "paths" in value:
        chk.out.config_paths.extend(_globs(value["paths"], value.line_of("paths"), chk, "config: paths"))
    if "classes" in value:
        for text, item_line in chk.strings(value["classes"], value.line_of("classes"), "config: classes"):
            if _CLASS_GLOB.match(text):
                chk.out.config_classes.append(text)
            else:
                chk.problem(
                    item_line,
                    f"config: classes: {text!r} is not a class-name glob (letters, digits, '_', '.', '*' and '?')",
                )


def _areas(value: Any, line: int, chk: _Checker) -> None:
    if not isinstance(value, YMap):
        chk.problem(line, f"'areas' must map area ids to names and audience, got {_kind(value)}")
        return
    for area_id, spec in value.items():
        area_line = value.line_of(area_id)
        if not isinstance(area_id, str) or not _ID.match(area_id):
            chk.problem(area_line, f"areas: area id {area_id!r} must be text of letters, digits and - _ . /")
            continue
        if not isinstance(spec, YMap):
            chk.problem(area_line, f"areas: {area_id}: expected a mapping with en, zh and audience, got {_kind(spec)}")
            continue
        chk.unknown_keys(spec, (*LANGUAGES, "audience"), f"areas: {area_id}")
        names = {}
        for lang in LANGUAGES:
            if lang in spec:
                if isinstance(spec[lang], str) and spec[lang].strip():
                    names[lang] = spec[lang].strip()
                else:
                    chk.problem(spec.line_of(lang), f"areas: {area_id}.{lang}: expected text, got {_kind(spec[lang])}")
        audience: dict[str, str] = {}
        aud = spec.get("audience")
        if isinstance(aud, str) and aud.strip():
            audience = dict.fromkeys(LANGUAGES, aud.strip())
        elif isinstance(aud, YMap):
            chk.unknown_keys(aud, LANGUAGES, f"areas: {area_id}.audience")
            for lang in LANGUAGES:
                if lang in aud:
                    if isinstance(aud[lang], str) and aud[lang].strip():
                        audience[lang] = aud[lang].strip()
                    else:
                        chk.problem(
                            aud.line_of(lang),
                            f"areas: {area_id}.audience.{lang}: expected text, got {_kind(aud[lang])}",
                        )
        elif aud is not None:
            chk.problem(
                spec.line_of("audience"),
                f"areas: {area_id}.audience: expected text or a mapping of language to text, got {_kind(aud)}",
            )
        chk.out.areas[area_id] = Area(area_id, names, audience, chk.out.source, area_line)
