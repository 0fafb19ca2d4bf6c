"""What diff analysis tells about a pull request: plain frozen dataclasses, no I/O."""

from __future__ import annotations

from dataclasses import dataclass, field

#: File kinds, in the order the guide lists them.
KINDS = ("source", "test", "docs", "config", "ci", "build", "example", "generated", "binary")


@dataclass(frozen=True, slots=True)
class Definition:
    """A function, method, class or other named definition in a file.

    ``name`` is qualified with its enclosing class where known (``Trainer.fit``);
    ``kind`` is ``"function"``, ``"method"``, ``"class"`` (or a language's own word).
    ``line`` is 1-based in the new file (old file for removed definitions), or 0.
    """

    name: str
    kind: str
    line: int = 0

    @property
    def public(self) -> bool:
        """True when no part of the qualified name starts with an underscore."""
        return not any(part.startswith("_") and not part.startswith("__") for part in self.name.split("."))


@dataclass(frozen=True, slots=True)
class DependencyChange:
    """A dependency added, removed or re-pinned in a requirements/pyproject/setup/lock/Docker file.

    ``action`` is ``"added"``, ``"removed"`` or ``"changed"``; specs are the raw version text.
    """

    name: str
    action: str
    old_spec: str = ""
    new_spec: str = ""
    file: str = ""


@dataclass(frozen=True, slots=True)
class FileAnalysis:
    """The facts of one changed file.

    Line counts are lines of the diff. ``symbols_touched`` holds qualified names of the
    definitions whose bodies the diff touches (from hunk headers and from definitions
    added/removed), in first-seen order. ``definitions_modified`` are definitions whose
    ``def``/``class`` line is on both sides of the diff (a new signature, or moved);
    ``config_keys_changed`` are keys on both sides (a new value, or moved). Neither
    appears in the ``*_added``/``*_removed`` tuples.
    """

    path: str
    status: str
    kind: str
    language: str | None = None
    previous_path: str | None = None
    additions: int = 0
    deletions: int = 0
    patch_missing: bool = False
    symbols_touched: tuple[str, ...] = ()
    definitions_added: tuple[Definition, ...] = ()
    definitions_removed: tuple[Definition, ...] = ()
    config_keys_added: tuple[str, ...] = ()
    config_keys_removed: tuple[str, ...] = ()
    tests_added: tuple[str, ...] = ()
    dependency_changes: tuple[DependencyChange, ...] = ()
    shims: tuple[str, ...] = ()
    todos_added: tuple[str, ...] = ()
    added_lines: tuple[str, ...] = field(default=(), repr=False)
    removed_lines: tuple[str, ...] = field(default=(), repr=False)
    definitions_modified: tuple[Definition, ...] = ()
    config_keys_changed: tuple[str, ...] = ()

    @property
    def changes(self) -> int:
        """Lines added plus lines deleted."""
        return self.additions + self.deletions

    @property
    def counts_as_code(self) -> bool:
        """False for generated/lock and binary files, whose lines say nothing to a reader."""
        return self.kind not in ("generated", "binary")


@dataclass(frozen=True, slots=True)
class DiffAnalysis:
    """The facts of a whole pull request's diff.

    ``lines_changed`` excludes generated/lock and binary files; ``reading_lines``
    further excludes tests and docs (it drives reading minutes).
    """

    files: tuple[FileAnalysis, ...] = ()

    @property
    def lines_changed(self) -> int:
        """Added plus deleted lines, excluding generated/lock and binary files."""
        return sum(f.changes for f in self.files if f.counts_as_code)

    @property
    def additions(self) -> int:
        """Added lines, excluding generated/lock and binary files."""
        return sum(f.additions for f in self.files if f.counts_as_code)

    @property
    def deletions(self) -> int:
        """Deleted lines, excluding generated/lock and binary files."""
        return sum(f.deletions for f in self.files if f.counts_as_code)

    @property
    def reading_lines(self) -> int:
        """Changed lines a reader must study: source, config, build, ci and example files."""
        return sum(f.changes for f in self.files if f.kind in ("source", "config", "build", "ci", "example"))

    def of_kind(self, *kinds: str) -> tuple[FileAnalysis, ...]:
        """The files whose kind is one of ``kinds``."""
        return tuple(f for f in self.files if f.kind in kinds)

    @property
    def symbols(self) -> tuple[str, ...]:
        """Every touched symbol, qualified, without repeats: source files first, tests last."""
        rank = {kind: i for i, kind in enumerate(KINDS)}
        ordered = sorted(self.files, key=lambda f: rank.get(f.kind, len(rank)))
        return tuple(dict.fromkeys(s for f in ordered for s in f.symbols_touched))
