"""Diff analysis: what a pull request's changed files contain, read from their patches.

Pure: no network, no I/O. :func:`analyse` turns a
:class:`~bot.engine.snapshot.PullRequestSnapshot` into a :class:`DiffAnalysis`; the pieces are

* :mod:`bot.engine.analysis.patch` - patch text to hunks and lines;
* :mod:`bot.engine.analysis.kinds` - language and kind (source, test, docs...) of a path;
* :mod:`bot.engine.analysis.python` - Python definitions, data class fields, tests, shims;
* :mod:`bot.engine.analysis.pybehaviour` - Python behaviour facts: defaults, signatures,
  checks, renames and moves;
* :mod:`bot.engine.analysis.edits` - exact statement changes of Python files
  (:class:`~bot.engine.analysis.model.Edit`: calls, callees, casts, conditions, guards,
  raises...), on :attr:`FileAnalysis.edits`, with a parse budget per pull request;
* :mod:`bot.engine.analysis.symbols` - definitions in C/C++, Go, Rust, JS/TS, shell, Java;
* :mod:`bot.engine.analysis.config_keys` - YAML/TOML/INI/JSON keys and changed values;
* :mod:`bot.engine.analysis.deps` - dependency changes;
* :mod:`bot.engine.analysis.envvars` - environment variables read or set;
* :mod:`bot.engine.analysis.versions` - how far a dependency moved (PEP 440) as behaviour facts;
* :mod:`bot.engine.analysis.todos` - TODO/FIXME notes added;
* :mod:`bot.engine.analysis.description` - the PR description's sections, checked against the diff.

Behaviour facts (:class:`BehaviourFact`, kinds :data:`BEHAVIOUR_KINDS`) are on each
:class:`FileAnalysis` (``behaviour``) and, source and config files first, on
:attr:`DiffAnalysis.behaviour`.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import replace

from bot.engine.analysis.config_keys import KeyChanges, config_changes
from bot.engine.analysis.deps import dependency_changes, submodule_change
from bot.engine.analysis.edit_filters import sentinel_default
from bot.engine.analysis.quote import small_change
from bot.engine.analysis.shell import broken_continuations
from bot.engine.analysis.edit_consequence import CONDITIONED, introduced_names, mark_new_only
from bot.engine.analysis.edits import Budget, edits_from_facts, file_edits
from bot.engine.analysis.envvars import EnvFacts, dialect_of, env_facts, reconcile
from bot.engine.analysis.kinds import (
    is_submodule_patch,
    kind_of,
    language_of,
    validate_kind_globs,
)
from bot.engine.analysis.model import (
    BEHAVIOUR_KINDS,
    KINDS,
    BehaviourFact,
    Definition,
    DependencyChange,
    DiffAnalysis,
    FileAnalysis,
)
from bot.engine.analysis.patch import DiffLine, Hunk, parse_patch, parse_patch_lines
from bot.engine.analysis.prose import prose_only
from bot.engine.analysis.pybehaviour import DefSite, match_definitions, relocation_facts
from bot.engine.analysis.python import analyse_python
from bot.engine.analysis.symbols import analyse_symbols, supports
from bot.engine.analysis.todos import todos_added
from bot.engine.analysis.versions import dependency_facts, install_script
from bot.engine.snapshot import ChangedFile, PullRequestSnapshot

# The analysers compile lines of the pull request's code (``ast.parse``, ``compile``) to
# read them; what CPython warns about that code ("is" with a literal, an invalid escape)
# is the pull request's business, not a message for whoever runs prguide. Such code is
# compiled under a "<...>" file name, so only those warnings are silenced.
warnings.filterwarnings("ignore", category=SyntaxWarning, module="<")
warnings.filterwarnings("ignore", category=DeprecationWarning, module="<")

__all__ = [
    "BEHAVIOUR_KINDS",
    "KINDS",
    "BehaviourFact",
    "Definition",
    "DependencyChange",
    "DiffAnalysis",
    "DiffLine",
    "FileAnalysis",
    "Hunk",
    "analyse",
    "analyse_file",
    "kind_of",
    "language_of",
    "parse_patch",
    "validate_kind_globs",
]

#: Kinds whose lines are not read for definitions, keys or notes.
_OPAQUE = ("generated", "binary")
#: Kinds whose Python class fields count as configuration keys.
_FIELD_KINDS = ("source", "example", "build")
#: Files with more changed lines than this are never a quote (a cheap test before reading hunks).
_QUOTE_PREFILTER = 24


def _first_added_line(hunks: Sequence[Hunk]) -> str | None:
    if hunks and hunks[0].old_start == 0 and hunks[0].lines:
        return hunks[0].lines[0].text
    return None


def analyse_file(file: ChangedFile, *, kinds: Mapping[str, Sequence[str]] | None = None) -> FileAnalysis:
    """The facts of one entry of "List pull requests files".

    Renames are looked for within the file only (:func:`analyse` also finds moves
    between files).

    ``additions``/``deletions`` are GitHub's counts when it gave them, else counted from
    the patch. ``patch_missing`` is true when the file changed lines but GitHub gave no
    patch (binary or too large). ``kinds`` puts extra globs per kind in front of the
    built-in ones (see :func:`bot.engine.analysis.kinds.kind_of`; invalid globs raise
    ``ValueError``). Any patch text is accepted.
    """
    analysis, sites, _env = _analyse_file(file, kinds, Budget())
    analysis = _relocate([analysis], [sites])[0] if sites else analysis
    return _consequences([analysis])[0]


def _analyse_file(
    file: ChangedFile, kinds: Mapping[str, Sequence[str]] | None, budget: Budget
) -> tuple[FileAnalysis, tuple[DefSite, ...], EnvFacts | None]:
    patch = file.patch
    hunks, added_texts, removed_texts = parse_patch_lines(patch) if patch else ((), (), ())
    added, removed = tuple(added_texts), tuple(removed_texts)
    path = file.filename
    language = language_of(path, _first_added_line(hunks))
    kind = kind_of(path, status=file.status, patch=patch, changes=file.changes, extra=kinds)
    facts: dict[str, object] = {}
    behaviour: list[BehaviourFact] = []
    sites: tuple[DefSite, ...] = ()
    env: EnvFacts | None = None
    if kind not in _OPAQUE and hunks:
        if language == "python":
            # Cheap whole-text tests spare analyse_python per-line work on most files.
            added_text, removed_text = "\n".join(added), "\n".join(removed)
            checks = "raise" in added_text or "assert" in added_text or "raise" in removed_text or "assert" in removed_text
            metrics = "/" in added_text and "/" in removed_text
            shims = "ersion" in added_text or "ImportError" in added_text or "ModuleNotFoundError" in added_text
            py = analyse_python(hunks, path=path, kind=kind, check_hint=checks, metric_hint=metrics, shim_hint=shims)
            facts.update(
                symbols_touched=py.symbols_touched,
                definitions_added=py.definitions_added,
                definitions_removed=py.definitions_removed,
                definitions_modified=py.definitions_modified,
                tests_added=py.tests_added,
                shims=py.shims,
            )
            if py.behaviour and "None" in added_text:
                # A default that became a None sentinel resolved to the old value is no change.
                py = py._replace(behaviour=tuple(b for b in py.behaviour if b.kind != "default_changed"
                                                 or not sentinel_default(b.symbol, b.old, b.new, added_text)))
            if py.behaviour:
                behaviour.extend(py.behaviour)
            edits = file_edits(hunks, path, kind, budget)
            if py.behaviour and kind != "test":
                edits += tuple(edits_from_facts(py.behaviour))
            if edits:
                facts["edits"] = edits
            sites = py.sites
            if kind in _FIELD_KINDS:
                keys = KeyChanges(py.fields_added, py.fields_removed, py.fields_changed)
                facts.update(_keys(keys))
        elif supports(language):
            sym = analyse_symbols(hunks, language or "")
            facts.update(
                symbols_touched=sym.symbols_touched,
                definitions_added=sym.definitions_added,
                definitions_removed=sym.definitions_removed,
                definitions_modified=sym.definitions_modified,
                tests_added=sym.tests_added,
            )
        if kind == "config":
            if any(h.section.startswith("defaults:") or any(line.text.startswith("defaults:") for line in h.lines) for h in hunks):
                facts["composed"] = True
            keys, key_facts = config_changes(hunks, language, path)
            facts.update(_keys(keys))
            if key_facts:
                behaviour.extend(key_facts)
        todos = todos_added(added)
        if todos and removed:
            # A note the diff only moves (removed and added with the same words) is not added.
            gone = set(todos_added(removed))
            todos = tuple(t for t in todos if t not in gone)
        facts["todos_added"] = todos
        if kind in _FIELD_KINDS and prose_only(hunks, language):
            facts["prose_only"] = True
        if language == "shell" and "\\\n" in patch:  # a continued line somewhere in the patch
            breaks = broken_continuations(hunks, path)
            if breaks:
                facts["edits"] = breaks
        dialect = dialect_of(language, kind, patch)
        if dialect is not None:
            found = env_facts(hunks, dialect, path, kind, file.status)
            behaviour.extend(found.facts)
            if found.before or found.after:
                env = found
    if hunks:
        submodule = is_submodule_patch(patch)
        deps = submodule_change(path, hunks) if submodule else dependency_changes(path, hunks)
        if deps and file.status == "added" and install_script(path):
            # A new image's base and installs are what it is made of, not dependencies the
            # project added ("adds dependency `ubuntu` `22.04`"): the new file says it.
            deps = ()
        if deps:
            facts["dependency_changes"] = deps
            behaviour.extend(dependency_facts(deps, submodule=submodule))
    if behaviour:
        facts["behaviour"] = tuple(behaviour)
    if hunks and "edits" not in facts and len(added) + len(removed) <= _QUOTE_PREFILTER and budget.quotes > 0:
        budget.quotes -= 1  # a guide shows a few quotes at most: a 3,000-file PR reads 100 files for them
        quoted = small_change(hunks, path, kind, language)
        if quoted is not None:
            facts["quote"] = quoted
    analysis = FileAnalysis(
        path=path,
        status=file.status,
        kind=kind,
        language=language,
        previous_path=file.previous_filename,
        additions=file.additions or len(added),
        deletions=file.deletions or len(removed),
        patch_missing=patch is None and file.changes > 0,
        added_lines=added,
        removed_lines=removed,
        **facts,  # type: ignore[arg-type]
    )
    return analysis, sites, env


def _relocate(files: list[FileAnalysis], sites: list[tuple[DefSite, ...]]) -> list[FileAnalysis]:
    """Turn removed + added definitions with the same body into rename/move facts across ``files``.

    ``sites`` are each file's added/removed definitions, in the same order. Files start
    with a ``symbol_removed`` fact for every removed public definition; those found
    again lose it and the new file gains a ``symbol_renamed``/``symbol_moved`` fact.
    """
    if not any(sites):
        return files
    relocations = match_definitions(s for per_file in sites for s in per_file)
    if not relocations:
        return files
    relocated = {(s.path, s.definition.name) for r in relocations for s in (r.old, r.new)}
    extra: dict[str, list[BehaviourFact]] = {}
    # A definition removed from a renamed file was importable under the file's old name.
    old_names = {f.path: f.previous_path for f in files if f.status == "renamed" and f.previous_path}
    for fact in relocation_facts(relocations, old_names):
        extra.setdefault(fact.path, []).append(fact)
    touched = {path for path, _name in relocated}
    out = []
    for f in files:
        if f.path in touched:
            kept = tuple(b for b in f.behaviour if b.kind != "symbol_removed" or (f.path, b.symbol) not in relocated)
            f = replace(f, behaviour=kept + tuple(extra.get(f.path, ())))
            if f.tests_added:  # a test renamed or moved is not a new test
                f = replace(f, tests_added=tuple(t for t in f.tests_added if (f.path, t) not in relocated))
        out.append(f)
    return out


def _inherited(files: list[FileAnalysis]) -> list[FileAnalysis]:
    """Without ``symbol_removed`` facts for methods (``Class.method``) whose name the pull
    request adds or changes (its body too) as a method of another class: most often the override went and
    the class now inherits a method of that name (a base class's method made concrete), so
    it was not removed. Dunder methods are too common to say so."""
    names = [d.name for f in files for d in f.definitions_added + f.definitions_modified] + [n for f in files for n in f.symbols_touched]
    owners: dict[str, set[str]] = {}  # method name -> the classes that define or change it
    for n in names:
        owner, dot, method = n.rpartition(".")
        if dot and not method.endswith("__"):
            owners.setdefault(method, set()).add(owner)
    if not owners:
        return files
    out = []
    for f in files:
        gone = [b for b in f.behaviour if b.kind == "symbol_removed" and "." in b.symbol
                and owners.get(b.symbol.rpartition(".")[2], set()) - {b.symbol.rpartition(".")[0]}]
        if gone:
            f = replace(f, behaviour=tuple(b for b in f.behaviour if b not in gone))
        out.append(f)
    return out


_CLASS_HEADER = re.compile(r"^[ \t]*class[ \t]+(\w+)[ \t]*\(([^)]*)\)", re.MULTILINE)


def _bases(changed: Sequence[ChangedFile], classes: set[str]) -> dict[str, set[str]]:
    """The bases (last dotted part) of each class of ``classes`` whose ``class`` line a patch shows
    (a hunk header, a context or a changed line)."""
    out: dict[str, set[str]] = {}
    for c in changed:
        if not c.patch or "class" not in c.patch:
            continue
        for m in _CLASS_HEADER.finditer(c.patch.replace("@@ ", "\n")):
            if m.group(1) in classes:
                out.setdefault(m.group(1), set()).update(b.strip().rpartition(".")[2] for b in m.group(2).split(",") if b.strip())
    return out


def _moved_keys(files: list[FileAnalysis], changed: Sequence[ChangedFile]) -> list[FileAnalysis]:
    """Without the removals of config keys and class fields that the pull request adds elsewhere.

    A config file's key (``qat.enable``) added by another config file of the same pull
    request was moved there (most often into the base a Hydra ``defaults`` list pulls in),
    so configs that set it still work. A field ``C.x`` removed while ``B.x`` is added, ``B``
    a base class of ``C`` (or ``C``'s bases unseen in the diff), was moved up: ``C`` still
    has it by inheritance. Those keys leave ``config_keys_removed``, lose their
    ``key_removed``/``field_removed`` facts and are listed in ``keys_moved``.
    """
    if not any(f.config_keys_removed for f in files):
        return files
    added_keys: dict[str, set[str]] = {}  # key -> config files that add it
    owners: dict[str, set[str]] = {}  # field name -> classes that gain it
    for f in files:
        if f.kind == "config":
            for k in f.config_keys_added:
                added_keys.setdefault(k, set()).add(f.path)
        for name in f.fields_added:
            owner, _dot, attr = name.rpartition(".")
            owners.setdefault(attr, set()).add(owner)
    moved: dict[str, dict[str, str]] = {}  # file -> {key: where it went}
    candidates: dict[str, list[tuple[str, str, set[str]]]] = {}
    for f in files:
        if f.kind == "config":
            for k in f.config_keys_removed:
                elsewhere = added_keys.get(k, set()) - {f.path}
                if elsewhere:
                    moved.setdefault(f.path, {})[k] = min(elsewhere)
        for name in f.fields_removed:
            owner, _dot, attr = name.rpartition(".")
            gained = owners.get(attr, set()) - {owner}
            if owner and gained:
                candidates.setdefault(f.path, []).append((name, owner, gained))
    if candidates:
        bases = _bases(changed, {owner for found in candidates.values() for _n, owner, _g in found})
        for path, found in candidates.items():
            for name, owner, gained in found:
                if owner not in bases or bases[owner] & gained:
                    shared = sorted(bases.get(owner, set()) & gained) or sorted(gained)
                    moved.setdefault(path, {})[name] = shared[0]
    if not moved:
        return files
    out = []
    for f in files:
        gone = moved.get(f.path)
        if gone:
            f = replace(
                f,
                config_keys_removed=tuple(k for k in f.config_keys_removed if k not in gone),
                behaviour=tuple(b for b in f.behaviour if b.kind not in ("key_removed", "field_removed") or b.symbol not in gone),
                keys_moved=tuple(gone.items()),
            )
        out.append(f)
    return out


def _keys(keys: KeyChanges) -> dict[str, tuple[str, ...]]:
    return {
        "config_keys_added": keys.added,
        "config_keys_removed": keys.removed,
        "config_keys_changed": keys.changed,
    }


def analyse(snapshot: PullRequestSnapshot, *, kinds: Mapping[str, Sequence[str]] | None = None) -> DiffAnalysis:
    """Analyse every changed file of ``snapshot``, in GitHub's file order.

    ``kinds`` optionally maps a kind to globs tried before the built-in ones (e.g.
    ``{"example": ["recipe/**"]}``); an unknown kind or bad glob raises ``ValueError``
    before any file is read. Otherwise never raises on file contents: missing,
    empty or malformed patches give files with fewer facts, not errors.
    """
    if kinds:
        validate_kind_globs(kinds)
    budget = Budget()
    results = [_analyse_file(f, kinds, budget) for f in snapshot.files]
    files = [r[0] for r in results]
    sites = [r[1] for r in results]
    files = _relocate(files, sites)
    files = _inherited(files)
    files = _moved_keys(files, snapshot.files)
    env = [r[2] for r in results]
    if len(env) - env.count(None) > 1:  # a file alone has nothing to judge against
        files = reconcile(files, env)
    return DiffAnalysis(files=tuple(_consequences(files)))


def _consequences(files: list[FileAnalysis]) -> list[FileAnalysis]:
    """``files`` with the consequence of each conditioned edit (raise, assert, guard) set:
    ``"new_only"`` when its condition names only what the pull request itself adds."""
    if not any(e.kind in CONDITIONED for f in files for e in f.edits):
        return files
    fresh = introduced_names(files)
    return [replace(f, edits=tuple(mark_new_only(f.edits, fresh))) if f.edits else f for f in files]
