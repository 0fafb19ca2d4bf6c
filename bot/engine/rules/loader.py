"""Read rule files and folders into a :class:`~bot.engine.rules.ruleset.RuleSet`, reporting every problem."""

from __future__ import annotations

import os
from collections.abc import Collection, Iterable, Sequence
from pathlib import Path

from bot.paths import default_rules_dir
from bot.engine.rules.model import Problem, RuleError
from bot.engine.rules.ruleset import RuleSet, duplicate_problems
from bot.engine.rules.schema import Rule, RuleFile, parse_document
from bot.engine.rules.settings import Settings, load_settings
from bot.engine.rules.yamlsrc import load_yaml

RULE_SUFFIXES = (".yml", ".yaml")


def parse_rules(text: str, source: str, *, extra_keys: Collection[str] = ()) -> RuleSet:
    """Validate one rule document (e.g. a repository's ``.github/prguide.yml``).

    ``source`` names it in problems (``FILE:LINE``); ``extra_keys`` are other
    top-level keys the caller reads itself. The result's ``disabled`` ids apply
    when it is merged onto the defaults (:meth:`RuleSet.merged`). Raises
    :class:`RuleError` with every problem.
    """
    file = _parse_text(text, source, extra_keys)
    problems = file.problems + duplicate_problems([], file.rules)
    if problems:
        raise RuleError(_in_file_order(problems, [file]))
    return _ruleset([file])


def parse_valid_rules(text: str, source: str, *, extra_keys: Collection[str] = ()) -> tuple[RuleSet, list[Problem]]:
    """The valid part of one rule document, and the problems of the rest.

    Like :func:`parse_rules`, but never raises: a rule, label, area or ``disable``
    entry with a problem is left out (of two rules with one id, the later), and every
    other one is kept. Returns ``(rule_set, problems)``, the problems in line order; a
    document that is not YAML, or not a mapping, gives an empty rule set and its problems.
    """
    file = _parse_text(text, source, extra_keys)
    duplicates = duplicate_problems([], file.rules)
    if duplicates:
        first: dict[str, Rule] = {}
        for rule in file.rules:
            first.setdefault(rule.id, rule)
        file.rules = list(first.values())
    return _ruleset([file]), _in_file_order(file.problems + duplicates, [file])


def load_rules(paths: Sequence[str | Path] = (), *, defaults: bool = True) -> RuleSet:
    """Load rule files and folders (every ``*.yml``/``*.yaml`` directly inside, sorted by name).

    ``defaults=True`` puts the shipped rules (:func:`bot.paths.default_rules_dir`)
    first and applies ``config/settings.yml``. A file given twice is read once. Rules
    name their file relative to the folder it was found in (a file given by itself: its
    name), never by where the server keeps it: ``change-type.yml:50``. A
    file's ``disable:`` removes rules of the files loaded before it. Raises
    :class:`RuleError` listing every problem of every file: syntax, unknown keys,
    bad values, duplicate ids (naming both places), unknown areas and disabled ids.
    """
    return _load(paths, defaults=defaults, report_empty=False)


def _load(paths: Sequence[str | Path], *, defaults: bool, report_empty: bool, as_typed: bool = False) -> RuleSet:
    files, problems = _read_all(paths, defaults, report_empty, as_typed=as_typed)
    settings = Settings()
    if defaults:
        try:
            settings = load_settings()
        except RuleError as exc:
            problems.extend(exc.problems)
    kept: list[Rule] = []
    for file in files:
        problems.extend(file.problems)
        drop = {rid for rid, _ in file.disable}
        known = {r.id for r in kept}
        for rid, line in file.disable:
            if rid not in known:
                problems.append(
                    Problem(file.source, line, f"disable: there is no rule {rid!r} in the files loaded before this one")
                )
        kept = [r for r in kept if r.id not in drop]
        problems.extend(duplicate_problems(kept, file.rules))
        kept.extend(file.rules)
    areas = {a for f in files for a in f.areas}
    for file in files:
        for area, rule_id, line in file.area_refs:
            if area not in areas:
                hint = f"; declared areas: {', '.join(sorted(areas))}" if areas else "; no file declares 'areas:'"
                problems.append(Problem(file.source, line, f"area: unknown area {area!r}{hint}", rule_id))
    if problems:
        raise RuleError(_in_file_order(problems, files))
    return _ruleset(files, settings=settings)


def check_rule_paths(paths: Iterable[str | Path]) -> list[Problem]:
    """Every problem in these rule files/folders, checked together with the shipped defaults.

    For ``prguide rules check PATH...``: an empty list means they are good. Besides
    what :func:`load_rules` reports, a file with no rules, labels, areas or
    ``disable:`` is a problem here (most likely the wrong file, or its content was
    lost), though loading it is harmless.
    """
    try:
        _load(list(paths), defaults=True, report_empty=True, as_typed=True)
    except RuleError as exc:
        return exc.problems
    return []


def _in_file_order(problems: list[Problem], files: list[RuleFile]) -> list[Problem]:
    rank = {f.source: i for i, f in enumerate(files)}
    return sorted(problems, key=lambda p: (rank.get(p.file, -1), p.line))


def _ruleset(files: list[RuleFile], *, settings: Settings | None = None) -> RuleSet:
    rules: list[Rule] = []
    for file in files:
        drop = {rid for rid, _ in file.disable}
        rules = [r for r in rules if r.id not in drop] + file.rules
    areas = {}
    for file in files:
        areas.update(file.areas)
    return RuleSet(
        rules=tuple(rules),
        label_decls=tuple(d for f in files for d in f.labels),
        areas=dict(areas),
        disabled=tuple((rid, f"{f.source}:{line}") for f in files for rid, line in f.disable),
        settings=settings or Settings(),
        config_paths=tuple(dict.fromkeys(g for f in files for g in f.config_paths)),
        config_classes=tuple(dict.fromkeys(c for f in files for c in f.config_classes)),
    )


def _read_all(
    paths: Sequence[str | Path], defaults: bool, report_empty: bool, *, as_typed: bool = False
) -> tuple[list[RuleFile], list[Problem]]:
    targets: list[tuple[Path, str]] = []
    problems: list[Problem] = []
    roots = ([(default_rules_dir(), True)] if defaults else []) + [(Path(p), False) for p in paths]
    for root, shipped in roots:
        if root.is_dir():
            for path in sorted(p for p in root.iterdir() if p.suffix in RULE_SUFFIXES and p.is_file()):
                targets.append((path, _name(path, root, shipped=shipped, as_typed=as_typed)))
        elif root.is_file():
            targets.append((root, _name(root, None, shipped=shipped, as_typed=as_typed)))
        else:
            problems.append(Problem(_display(root), 1, "no such rule file or folder"))
    files, seen = [], set()
    for path, source in targets:
        key = path.resolve()
        if key in seen:
            continue
        seen.add(key)
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            problems.append(Problem(source, 1, f"cannot read rule file: {getattr(exc, 'strerror', None) or exc}"))
            continue
        file = _parse_text(text, source, ())
        if report_empty and not (file.problems or file.rules or file.labels or file.areas or file.disable):
            file.problems.append(Problem(source, 1, "the file has no rules, labels, areas or disable list"))
        files.append(file)
    return files, problems


def _name(path: Path, folder: Path | None, *, shipped: bool, as_typed: bool) -> str:
    """How a rule file is named wherever its rules are shown (``FILE:LINE`` in ``/prguide
    why``, the guide's data, problems): relative to the folder it was found in (the
    shipped rules: to the rules directory), so no comment, page or log shows where the
    server keeps its files. ``as_typed`` (``prguide rules check``, run by the person who
    named the paths): their own files as they typed them."""
    if as_typed and not shipped:
        return _display(path)
    return path.relative_to(folder).as_posix() if folder is not None else path.name


def _parse_text(text: str, source: str, extra_keys: Collection[str]) -> RuleFile:
    doc, problems = load_yaml(text, source)
    file = parse_document(doc, source, extra_keys=extra_keys)
    file.problems[:0] = problems
    return file


def _display(path: Path) -> str:
    """A path as a person would type it: relative to the working folder when inside it."""
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return str(path)
    return rel if not rel.startswith("..") else str(path)
