"""What rules look at, prepared once per pull request and shared by every rule.

Built from a :class:`~bot.engine.snapshot.PullRequestSnapshot` (title, body, author,
base branch: "Get a pull request") and a :class:`~bot.engine.analysis.model.DiffAnalysis`
(files, kinds, lines, symbols). Expensive views (glob index, joined diff lines)
are made on first use and cached, so a rule set pays for each once.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property

from bot.engine.analysis.model import DiffAnalysis, FileAnalysis
from bot.engine.rules.corpus import LineCorpus
from bot.engine.rules.globs import FileIndex, GlobTable
from bot.engine.rules.safe_regex import DEFAULT_TIMEOUT, Budget
from bot.engine.snapshot import PullRequestSnapshot

#: Characters of the title and body that regexes see (GitHub caps a body at 65,536).
MAX_TITLE_CHARS = 1024
MAX_BODY_CHARS = 65_536

# "[BREAKING][megatron, fsdp] fix: ..." and "feat(api, cli)!: ..."; both linear patterns.
_BRACKETS = re.compile(r"\s*\[([^\[\]\n]*)\]")
_CONVENTIONAL_SCOPE = re.compile(r"\s*[A-Za-z][\w-]*\(([^()\n]*)\)!?\s*:")
_NOT_SCOPES = frozenset({"breaking", "wip", "draft"})


def title_scopes(title: str) -> tuple[str, ...]:
    """The scopes a title names, lower-cased, in order.

    ``[BREAKING][megatron, fsdp] fix: x`` -> ``("megatron", "fsdp")``;
    ``feat(api,cli)!: x`` -> ``("api", "cli")``. ``BREAKING``, ``WIP`` and ``DRAFT``
    brackets are markers, not scopes.
    """
    found: list[str] = []
    pos = 0
    while True:
        m = _BRACKETS.match(title, pos)
        if not m:
            break
        found.extend(part.strip().lower() for part in m.group(1).split(","))
        pos = m.end()
    m = _CONVENTIONAL_SCOPE.match(title, pos)
    if m:
        found.extend(part.strip().lower() for part in m.group(1).split(","))
    return tuple(s for s in dict.fromkeys(found) if s and s not in _NOT_SCOPES)


class _PerFile(Sequence):
    """``lines(file)`` for each file, computed when first asked for."""

    def __init__(self, files: Sequence[FileAnalysis], lines: Callable[[FileAnalysis], Sequence[str]]):
        self._files = files
        self._lines = lines

    def __len__(self) -> int:
        return len(self._files)

    def __getitem__(self, index):  # type: ignore[override]
        return self._lines(self._files[index])


@dataclass
class Facts:
    """One pull request as the rules see it.

    ``files`` are the analysed files (or, when analysis has none, bare entries made
    from the snapshot's "List pull requests files" entries); ``timeout`` is the
    seconds each condition may spend on regexes; ``warnings`` collects regex
    timeouts and dropped labels for the caller to log; ``globs`` is the rule set's
    glob table, which answers all its globs at once on a small pull request.
    """

    snapshot: PullRequestSnapshot
    analysis: DiffAnalysis
    timeout: float = DEFAULT_TIMEOUT
    warnings: list[str] = field(default_factory=list)
    globs: GlobTable | None = None

    def __post_init__(self) -> None:
        files = self.analysis.files
        if not files and self.snapshot.files:
            files = tuple(
                FileAnalysis(
                    path=f.filename, status=f.status, kind="source", additions=f.additions, deletions=f.deletions
                )
                for f in self.snapshot.files
            )
            self.analysis = DiffAnalysis(files)
        self.files: tuple[FileAnalysis, ...] = tuple(files)
        self.paths: tuple[str, ...] = tuple(f.path for f in self.files)
        self.title = self.snapshot.title[:MAX_TITLE_CHARS]
        self.body = (self.snapshot.body or "")[:MAX_BODY_CHARS]
        self.lines_changed = self.analysis.lines_changed
        self.file_count = max(self.snapshot.changed_files, len(self.files))

    def budget(self) -> Budget:
        """A fresh time budget for one condition."""
        return Budget(self.timeout)

    @cached_property
    def index(self) -> FileIndex:
        """The changed paths, indexed for globs."""
        return FileIndex(self.paths, self.globs)

    @cached_property
    def kinds(self) -> tuple[str, ...]:
        """Each changed file's kind, by position."""
        return tuple(f.kind for f in self.files)

    @cached_property
    def _by_kind(self) -> dict[str, frozenset[int]]:
        groups: dict[str, list[int]] = {}
        for i, kind in enumerate(self.kinds):
            groups.setdefault(kind, []).append(i)
        return {k: frozenset(v) for k, v in groups.items()}

    def files_of_kind(self, kind: str) -> frozenset[int]:
        """Positions of the changed files of ``kind``."""
        return self._by_kind.get(kind, frozenset())

    @cached_property
    def scopes(self) -> tuple[str, ...]:
        """The title's scopes (see :func:`title_scopes`)."""
        return title_scopes(self.title)

    @cached_property
    def added(self) -> LineCorpus:
        """Added diff lines, by file."""
        return LineCorpus(_PerFile(self.files, lambda f: f.added_lines))

    @cached_property
    def removed(self) -> LineCorpus:
        """Removed diff lines, by file."""
        return LineCorpus(_PerFile(self.files, lambda f: f.removed_lines))

    @cached_property
    def symbols(self) -> LineCorpus:
        """Qualified names of touched definitions, by file."""
        return LineCorpus(_PerFile(self.files, lambda f: f.symbols_touched))

    @cached_property
    def removed_definitions(self) -> LineCorpus:
        """Public definitions removed and not added back anywhere in the PR (a move is no removal)."""
        added = {d.name for f in self.files for d in f.definitions_added}
        return LineCorpus(
            _PerFile(self.files, lambda f: [d.name for d in f.definitions_removed if d.public and d.name not in added])
        )

    @cached_property
    def removed_config_keys(self) -> LineCorpus:
        """Config keys removed and not added back anywhere in the PR."""
        added = {k for f in self.files for k in f.config_keys_added}
        return LineCorpus(_PerFile(self.files, lambda f: [k for k in f.config_keys_removed if k not in added]))

    @cached_property
    def config_keys(self) -> LineCorpus:
        """Config keys added, removed or given a new value, by file."""
        return LineCorpus(
            _PerFile(
                self.files,
                lambda f: list(
                    dict.fromkeys(
                        (*f.config_keys_added, *f.config_keys_removed, *getattr(f, "config_keys_changed", ()))
                    )
                ),
            )
        )

    @cached_property
    def dependencies(self) -> LineCorpus:
        """Names of dependencies added, removed or re-pinned, by file."""
        return LineCorpus(_PerFile(self.files, lambda f: [d.name for d in f.dependency_changes]))

    def corpus(self, name: str) -> LineCorpus:
        """One of the line corpora above by condition name (``added``, ``symbols``, ...)."""
        return getattr(self, name)
