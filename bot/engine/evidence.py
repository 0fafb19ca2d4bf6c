"""Evidence for classification statements: the diff lines, metadata or words each rests on.

Pure helpers of :mod:`bot.engine.classify`; every function returns a tuple of at most
three :class:`~bot.engine.analysis.model.Evidence` (enough for a reader to check).
"""

from __future__ import annotations

from collections.abc import Sequence

from bot.engine.analysis.model import DiffAnalysis, Evidence, FileAnalysis


def metadata_evidence(files: Sequence[FileAnalysis]) -> tuple[Evidence, ...]:
    """The changed files' line counts, GitHub's metadata, for a statement about their size or kind."""
    return tuple(
        Evidence(f.path, new=f"+{f.additions}/-{f.deletions}", source="metadata")
        for f in files[:3]
    )


def definition_evidence(
    files: Sequence[FileAnalysis], names: set[str]
) -> tuple[Evidence, ...]:
    """The ``def`` lines of ``names`` among the files' added and removed definitions."""
    out = []
    for f in files:
        for d in f.definitions_added:
            if d.name in names:
                out.append(Evidence(f.path, d.line, d.line, new=d.name))
        for d in f.definitions_removed:
            if d.name in names:
                out.append(Evidence(f.path, d.line, d.line, old=d.name))
    return tuple(out[:3])


def key_evidence(analysis: DiffAnalysis, names: Sequence[str]) -> tuple[Evidence, ...]:
    """Where the config keys ``names`` were added, removed or given a new default."""
    wanted, out = set(names), []
    for f in analysis.files:
        for k in f.config_keys_added:
            if k in wanted:
                out.append(Evidence(f.path, new=k))
        for k in f.config_keys_removed:
            if k in wanted:
                out.append(Evidence(f.path, old=k))
        for b in f.behaviour:
            if b.kind == "default_changed" and b.symbol in wanted:
                out.append(Evidence(b.path, b.line, b.line, b.old, b.new))
    return tuple(out[:3])


def fact_evidence_for(
    analysis: DiffAnalysis, symbols: Sequence[str]
) -> tuple[Evidence, ...]:
    """The lines of the behaviour facts about ``symbols``."""
    wanted = set(symbols)
    return tuple(
        Evidence(b.path, b.line, b.line, b.old, b.new)
        for b in analysis.behaviour
        if b.symbol in wanted
    )[:3]
