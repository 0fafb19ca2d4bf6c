"""Diff analysis: what a pull request's changed files contain, read from their patches.

Pure: no network, no I/O. :func:`analyse` turns a
:class:`~bot.snapshot.PullRequestSnapshot` into a :class:`DiffAnalysis`; the pieces are

* :mod:`bot.analysis.patch` - patch text to hunks and lines;
* :mod:`bot.analysis.kinds` - language and kind (source, test, docs...) of a path;
* :mod:`bot.analysis.python` - Python definitions, data class fields, tests, shims;
* :mod:`bot.analysis.symbols` - definitions in C/C++, Go, Rust, JS/TS, shell, Java;
* :mod:`bot.analysis.config_keys` - YAML/TOML/INI/JSON keys;
* :mod:`bot.analysis.deps` - dependency changes;
* :mod:`bot.analysis.todos` - TODO/FIXME notes added.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from bot.analysis.config_keys import KeyChanges, config_keys
from bot.analysis.deps import dependency_changes, submodule_change
from bot.analysis.kinds import is_submodule_patch, kind_of, language_of, validate_kind_globs
from bot.analysis.model import KINDS, Definition, DependencyChange, DiffAnalysis, FileAnalysis
from bot.analysis.patch import ADDED, REMOVED, DiffLine, Hunk, parse_patch
from bot.analysis.python import analyse_python
from bot.analysis.symbols import analyse_symbols, supports
from bot.analysis.todos import todos_added
from bot.snapshot import ChangedFile, PullRequestSnapshot

__all__ = [
    "KINDS",
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


def _first_added_line(hunks: Sequence[Hunk]) -> str | None:
    if hunks and hunks[0].old_start == 0 and hunks[0].lines:
        return hunks[0].lines[0].text
    return None


def analyse_file(file: ChangedFile, *, kinds: Mapping[str, Sequence[str]] | None = None) -> FileAnalysis:
    """The facts of one entry of "List pull requests files".

    ``additions``/``deletions`` are GitHub's counts when it gave them, else counted from
    the patch. ``patch_missing`` is true when the file changed lines but GitHub gave no
    patch (binary or too large). ``kinds`` puts extra globs per kind in front of the
    built-in ones (see :func:`bot.analysis.kinds.kind_of`; invalid globs raise
    ``ValueError``). Any patch text is accepted.
    """
    patch = file.patch
    hunks = parse_patch(patch) if patch else ()
    path = file.filename
    language = language_of(path, _first_added_line(hunks))
    kind = kind_of(path, status=file.status, patch=patch, changes=file.changes, extra=kinds)
    added_list: list[str] = []
    removed_list: list[str] = []
    for hunk in hunks:
        for line_kind, text, _old, _new in hunk.lines:
            if line_kind == ADDED:
                added_list.append(text)
            elif line_kind == REMOVED:
                removed_list.append(text)
    added, removed = tuple(added_list), tuple(removed_list)
    facts: dict[str, object] = {}
    if kind not in _OPAQUE and hunks:
        if language == "python":
            py = analyse_python(hunks)
            facts.update(
                symbols_touched=py.symbols_touched,
                definitions_added=py.definitions_added,
                definitions_removed=py.definitions_removed,
                definitions_modified=py.definitions_modified,
                tests_added=py.tests_added,
                shims=py.shims,
            )
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
            facts.update(_keys(config_keys(hunks, language)))
        facts["todos_added"] = todos_added(added)
    if hunks:
        deps = submodule_change(path, hunks) if is_submodule_patch(patch) else dependency_changes(path, hunks)
        if deps:
            facts["dependency_changes"] = deps
    return FileAnalysis(
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
    return DiffAnalysis(files=tuple(analyse_file(f, kinds=kinds) for f in snapshot.files))
