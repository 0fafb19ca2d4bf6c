"""Changes a reader may skip (generated and lock files, image bumps, formatting) and small verdicts on names and versions."""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Sequence

from bot.engine.history.lines import continuation_line
from bot.engine.analysis.model import (
    Definition,
    DependencyChange,
    DiffAnalysis,
    FileAnalysis,
)
from bot.engine.focus.model import (
    API_WEIGHT,
    CODE_KINDS,
    COMMENT_LINE,
    FACT_WEIGHT,
    MAX_DESCRIBED_FILES,
    MAX_NAMES,
    FocusPoint,
    Housekeeping,
)

_VERSION = re.compile(r"(\d+)(?:\.(\d+))?")


def major_bump(old: str, new: str) -> bool:
    """True when two version specs differ in their major version; ``0.x`` -> ``0.y`` is
    not one (it is a pre-1.0 minor move).

    ``"==0.27.0"`` -> ``">=1.10.0"`` is a major bump; ``"2.1"`` -> ``"2.4"`` and
    ``"0.23.0"`` -> ``"0.24.0"`` are not.
    """
    a, b = _VERSION.search(old or ""), _VERSION.search(new or "")
    if not a or not b:
        return False
    return a.group(1) != b.group(1)


def dep_is_major(dep: DependencyChange) -> bool:
    """True when a dependency change is a major bump: its ``bump`` says so, or, when the
    analysis could not tell (``bump == ""``), :func:`major_bump` of its two specs does."""
    return dep.bump == "major" if dep.bump else major_bump(dep.old_spec, dep.new_spec)


def removed_trees(analysis: DiffAnalysis) -> list[FocusPoint]:
    """One point per folder that lost code files whole (a move or a deletion), biggest first."""
    groups: dict[str, list[FileAnalysis]] = defaultdict(list)
    for f in analysis.files:
        if f.status == "removed" and f.kind in ("source", "example", "test", "docs"):
            parts = f.path.split("/")
            groups["/".join(parts[:2]) + "/" if len(parts) > 2 else (parts[0] + "/" if len(parts) > 1 else f.path)].append(f)
    points = []
    for folder, files in sorted(groups.items(), key=lambda kv: -sum(f.deletions for f in kv[1])):
        lines = sum(f.deletions for f in files)
        if lines >= 20:
            biggest = sorted(files, key=lambda f: -f.deletions)[:MAX_NAMES]
            names = tuple(f.path.rsplit("/", 1)[-1] for f in biggest)
            docs_only = all(f.kind == "docs" for f in files)
            key = "focus.removed_tree.docs" if docs_only else "focus.removed_tree"
            points.append(FocusPoint(folder, None, key, {"count": len(files), "lines": lines, "names": names}, weight=API_WEIGHT - 10 if docs_only else FACT_WEIGHT - 2))
    return points[:3]


_LOCK = re.compile(r"(^|/)([^/]*[.-]lock(\.json|\.yaml)?|go\.sum|Gemfile\.lock|composer\.lock|uv\.lock|poetry\.lock|Cargo\.lock|pnpm-lock\.yaml|package-lock\.json)$")
_OWNERS = re.compile(r"(^|/)CODEOWNERS$")
_IMAGE_LINE = re.compile(r"^\s*[-\w\"' ]*(image|container|FROM|docker|tag|version)\b.*[:=@ ]\s*\S*\d", re.IGNORECASE)



def is_lock_file(path: str) -> bool:
    """True for dependency lock files (``uv.lock``, ``package-lock.json``, ``go.sum``...)."""
    return ("lock" in path or path.endswith("go.sum")) and bool(_LOCK.search(path))


def housekeeping(analysis: DiffAnalysis) -> Housekeeping:
    """The changed files nobody needs to read line by line, by what they are (see
    :class:`Housekeeping`). A file is in at most one group."""
    groups: dict[str, list[str]] = defaultdict(list)
    read = 0
    for f in analysis.files:
        if not f.changes:
            continue
        if f.kind in CODE_KINDS or f.kind == "test":
            # Formatting and comment checks read lines: the first files are enough to find
            # the ones worth naming (a 3,000-file PR shows six points).
            read += 1
            if read > MAX_DESCRIBED_FILES:
                continue
        if is_lock_file(f.path):
            groups["locks"].append(f.path)
        elif f.kind == "generated":
            groups["generated"].append(f.path)
        elif "CODEOWNERS" in f.path and _OWNERS.search(f.path):
            groups["owners"].append(f.path)
        elif f.kind == "binary" or f.status in ("added", "removed") or not (f.added_lines or f.removed_lines):
            continue
        elif f.kind == "ci" and f.changes <= 20 and all(_IMAGE_LINE.match(x) or not x.strip() for x in f.added_lines + f.removed_lines):
            groups["images"].append(f.path)
        elif f.kind in CODE_KINDS + ("test",) and _formatting_only(f):
            groups["formatting"].append(f.path)
        elif f.kind in CODE_KINDS + ("test",) and f.changes <= 200 and all(COMMENT_LINE.match(x) or not x.strip() for x in f.added_lines + f.removed_lines):
            groups["comments"].append(f.path)
    return Housekeeping(**{k: tuple(v) for k, v in groups.items()})


def _formatting_only(f: FileAnalysis) -> bool:
    if f.changes > 400 or not f.added_lines or not f.removed_lines:
        return False
    a, b = "".join(f.added_lines), "".join(f.removed_lines)
    # The same text but for whitespace has as many other characters (cheap to count).
    if len(a) - a.count(" ") - a.count("\t") - a.count(",") != len(b) - b.count(" ") - b.count("\t") - b.count(","):
        return False
    squash = lambda lines: "".join("\n".join(lines).split()).replace(",", "")  # noqa: E731
    if squash(f.added_lines) != squash(f.removed_lines):
        return False
    # A line removed and added back unchanged but for its indentation or its place is a
    # move or a re-indent, which changes what Python and YAML do (a statement taken out of
    # its `if`, two statements swapped): not formatting. Rewrapping and spacing change the
    # lines themselves, and so does re-aligning a call's argument lines under its opening
    # bracket (fresh-p #3): inside brackets indentation means nothing.
    both = {line.strip() for line in f.added_lines}.intersection(line.strip() for line in f.removed_lines)
    return all(continuation_line(line) for line in both)


def public_keys(f: FileAnalysis, keys: Sequence[str]) -> list[str]:
    """Config keys a user sets: in source files, private attributes (``_x``) are not
    options; in YAML files, the entries of a Hydra ``defaults:`` list
    (``defaults.../optim@optim``) are not keys but which files compose this one."""
    if f.kind != "source":
        if f.language == "yaml":
            return [k for k in keys if k != "defaults" and not k.startswith("defaults.")]
        return list(keys)
    return [k for k in keys if not any(p.startswith("_") for p in k.split("."))]


def api_names(definitions: Sequence[Definition]) -> list[str]:
    """Public names a reader would call: no private or dunder names, and no methods
    of a class that is itself in the list (the class names them all)."""
    if not definitions:
        return []
    # A part of a dotted name starts with "_" exactly when the name does or holds "._" (this runs per file).
    names = [d.name for d in definitions if not (d.name[:1] == "_" or "._" in d.name)]
    if len(names) < 2:
        return names
    listed = set(names)
    return [n for n in names if n.rpartition(".")[0] not in listed]


