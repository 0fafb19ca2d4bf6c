"""What a reader should look at: focus points, review highlights and follow-ups.

Pure. Like :mod:`bot.classify`, sentences are message keys and parameters, except
rule-written focus notes, which arrive already written in each language.

Focus points are ranked by weight (rule notes first, then removed code paths,
config keys, compatibility shims, dependencies, new public API, the largest
changes, tests) and at most two come from one file, so the list covers the PR
rather than one corner of it.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from bot.analysis.model import Definition, DiffAnalysis, FileAnalysis
from bot.rules.model import RuleHit
from bot.snapshot import PullRequestSnapshot

_TODO_PREFIX = re.compile(r"^\s*(TODO|FIXME|XXX|HACK)\b\s*(\([^)]*\))?\s*:?\s*", re.IGNORECASE)

MAX_FOCUS = 7
MAX_PER_FILE = 2
MAX_NAMES = 3
#: A rule's own note ranks with new config keys: above "largest change", below removed code.
RULE_NOTE_WEIGHT = 75


@dataclass(frozen=True, slots=True)
class FocusPoint:
    """One numbered point of the guide.

    ``file``/``symbol`` name what to open; ``key``/``params`` say why (a message key),
    or ``text`` holds a rule's own note by language. ``weight`` only orders points.
    """

    file: str | None
    symbol: str | None
    key: str | None = None
    params: Mapping[str, Any] = field(default_factory=dict)
    text: Mapping[str, str] = field(default_factory=dict)
    weight: int = 0


@dataclass(frozen=True, slots=True)
class Thread:
    """A review-comment thread: where, how many comments, who, and its opening words."""

    path: str
    line: int | None
    comments: int
    participants: tuple[str, ...]
    opening: str
    has_suggestion: bool
    author_replied: bool


@dataclass(frozen=True, slots=True)
class ReviewSummary:
    """Review facts: each reviewer's last decisive state, and the busiest threads first."""

    reviewers: tuple[tuple[str, str, bool], ...] = ()
    threads: tuple[Thread, ...] = ()

    @property
    def empty(self) -> bool:
        """True when nobody reviewed or commented on the diff."""
        return not self.reviewers and not self.threads


@dataclass(frozen=True, slots=True)
class FollowUp:
    """Something left to do after the merge (a message key and its parameters)."""

    key: str
    params: Mapping[str, Any] = field(default_factory=dict)
    file: str | None = None


def focus_points(analysis: DiffAnalysis, hits: tuple[RuleHit, ...], review: ReviewSummary) -> tuple[FocusPoint, ...]:
    """The ranked focus points, at most :data:`MAX_FOCUS`, at most two per file."""
    candidates: list[FocusPoint] = []
    for hit in hits:
        # One point per rule: a rule that matched twelve files says the same thing twelve times.
        if hit.focus:
            note = hit.focus[0]
            more = {"similar": len(hit.focus) - 1} if len(hit.focus) > 1 else {}
            candidates.append(FocusPoint(note.file, note.symbol, params=more, text=note.text, weight=RULE_NOTE_WEIGHT))
    for f in analysis.files:
        candidates.extend(_file_points(f))
    candidates.extend(_removed_trees(analysis))
    for thread in review.threads[:2]:
        if thread.comments >= 2:
            candidates.append(
                FocusPoint(
                    thread.path,
                    None,
                    "focus.thread",
                    {"comments": thread.comments, "people": thread.participants, "line": thread.line},
                    weight=45 + thread.comments,
                )
            )
    candidates.sort(key=lambda p: -p.weight)
    candidates = _one_entry_point(candidates)
    chosen: list[FocusPoint] = []
    per_file: dict[str | None, int] = defaultdict(int)
    seen: set[tuple[str | None, str | None]] = set()
    for point in candidates:
        # The same file and symbol said twice (a rule's note and a built-in point) is one point.
        ident = (point.file, point.symbol) if point.symbol else (point.file, point.key or next(iter(point.text.values()), None))
        if ident in seen or (point.file and per_file[point.file] >= MAX_PER_FILE):
            continue
        seen.add(ident)
        per_file[point.file] += 1
        chosen.append(point)
        if len(chosen) == MAX_FOCUS:
            break
    return tuple(chosen)


def _file_points(f: FileAnalysis) -> list[FocusPoint]:
    points: list[FocusPoint] = []
    code = f.kind in ("source", "example")
    # Files removed whole are summed up by folder in removed_trees(), not listed one by one.
    removed = api_names(f.definitions_removed) if code and f.status != "removed" else []
    if removed:
        points.append(FocusPoint(f.path, removed[0], "focus.removed", {"names": tuple(removed[:MAX_NAMES]), "count": len(removed)}, weight=90))
    if f.kind not in ("test", "ci"):
        keys_removed = public_keys(f, f.config_keys_removed) if f.status != "removed" else []
        keys_added = public_keys(f, f.config_keys_added)
        if keys_removed:
            points.append(FocusPoint(f.path, keys_removed[0], "focus.config_removed", {"names": tuple(keys_removed[:MAX_NAMES]), "count": len(keys_removed)}, weight=80))
        if keys_added:
            points.append(FocusPoint(f.path, keys_added[0], "focus.config_added", {"names": tuple(keys_added[:MAX_NAMES]), "count": len(keys_added)}, weight=70))
    if f.shims and f.kind == "source":
        what, _, snippet = f.shims[0].partition(": ")
        points.append(FocusPoint(f.path, None, "focus.shim", {"what": what, "code": snippet or what}, weight=65))
    if f.dependency_changes and f.kind != "generated":
        dep = f.dependency_changes[0]
        key = "focus.dep_major" if major_bump(dep.old_spec, dep.new_spec) else f"focus.dep_{dep.action}"
        points.append(
            FocusPoint(
                f.path,
                dep.name,
                key,
                {"name": dep.name, "old": dep.old_spec, "new": dep.new_spec, "count": len(f.dependency_changes)},
                weight=55,
            )
        )
    added = api_names(f.definitions_added) if code else []
    if added:
        points.append(FocusPoint(f.path, added[0], "focus.added", {"names": tuple(added[:MAX_NAMES]), "count": len(added)}, weight=60))
    if f.kind in ("source", "config", "build", "example") and f.changes and f.status != "removed":
        symbols = tuple(s for s in f.symbols_touched if s not in added)[:MAX_NAMES]
        key = "focus.largest_symbols" if symbols else "focus.largest"
        points.append(
            FocusPoint(
                f.path,
                symbols[0] if symbols else None,
                key,
                {"additions": f.additions, "deletions": f.deletions, "names": symbols},
                weight=min(50, 20 + f.changes // 10),
            )
        )
    elif f.kind in ("ci", "docs") and f.changes and f.status != "removed":
        points.append(FocusPoint(f.path, None, "focus.largest", {"additions": f.additions, "deletions": f.deletions, "names": ()}, weight=min(15, 5 + f.changes // 20)))
    if f.tests_added:
        points.append(FocusPoint(f.path, f.tests_added[0], "focus.tests", {"names": tuple(f.tests_added[:2]), "count": len(f.tests_added)}, weight=40))
    return points


_VERSION = re.compile(r"(\d+)(?:\.(\d+))?")


def major_bump(old: str, new: str) -> bool:
    """True when two version specs differ in their major version (``0.x`` counts its minor).

    ``"==0.27.0"`` -> ``">=1.10.0"`` is a major bump; ``"2.1"`` -> ``"2.4"`` is not.
    """
    a, b = _VERSION.search(old or ""), _VERSION.search(new or "")
    if not a or not b:
        return False
    key_a = (a.group(1), a.group(2) if a.group(1) == "0" else None)
    key_b = (b.group(1), b.group(2) if b.group(1) == "0" else None)
    return key_a != key_b


def _removed_trees(analysis: DiffAnalysis) -> list[FocusPoint]:
    """One point per folder that lost code files whole (a move or a deletion), biggest first."""
    groups: dict[str, list[FileAnalysis]] = defaultdict(list)
    for f in analysis.files:
        if f.status == "removed" and f.kind in ("source", "example", "test"):
            parts = f.path.split("/")
            groups["/".join(parts[:2]) + "/" if len(parts) > 2 else (parts[0] + "/" if len(parts) > 1 else f.path)].append(f)
    points = []
    for folder, files in sorted(groups.items(), key=lambda kv: -sum(f.deletions for f in kv[1])):
        lines = sum(f.deletions for f in files)
        if lines >= 20:
            points.append(FocusPoint(folder, None, "focus.removed_tree", {"count": len(files), "lines": lines}, weight=85))
    return points[:2]


def _one_entry_point(points: list[FocusPoint]) -> list[FocusPoint]:
    """Only the first "new definitions" point is called the entry point of the change."""
    out, seen = [], False
    for p in points:
        if p.key == "focus.added":
            if seen:
                p = FocusPoint(p.file, p.symbol, "focus.added_more", p.params, p.text, p.weight)
            seen = True
        out.append(p)
    return out


def public_keys(f: FileAnalysis, keys: Sequence[str]) -> list[str]:
    """Config keys a user sets: in source files, private attributes (``_x``) are not options."""
    if f.kind != "source":
        return list(keys)
    return [k for k in keys if not any(p.startswith("_") for p in k.split("."))]


def api_names(definitions: Sequence[Definition]) -> list[str]:
    """Public names a reader would call: no private or dunder names, and no methods
    of a class that is itself in the list (the class names them all)."""
    if not definitions:
        return []
    # A name without "_" is public; only the others need splitting (this runs per file).
    names = [d.name for d in definitions if "_" not in d.name or not any(p.startswith("_") for p in d.name.split("."))]
    if len(names) < 2:
        return names
    listed = set(names)
    return [n for n in names if n.rpartition(".")[0] not in listed]


def review_summary(snapshot: PullRequestSnapshot) -> ReviewSummary:
    """Reviewers with their last decisive state, and threads busiest first.

    A reviewer's state is their last ``APPROVED``/``CHANGES_REQUESTED``/``DISMISSED``
    review, else ``COMMENTED`` ("List reviews for a pull request"). The PR author's
    own reviews (replies) are left out.
    """
    states: dict[str, tuple[str, bool]] = {}
    for review in snapshot.reviews:
        if review.user == snapshot.author or review.state == "PENDING":
            continue
        previous = states.get(review.user)
        if previous is None or review.state != "COMMENTED":
            states[review.user] = (review.state, review.user_is_bot)
    by_thread: dict[int, list] = defaultdict(list)
    for comment in snapshot.review_comments:
        by_thread[comment.thread_id].append(comment)
    threads = []
    for comments in by_thread.values():
        first = comments[0]
        people = tuple(dict.fromkeys(c.user for c in comments))
        threads.append(
            Thread(
                path=first.path,
                line=first.line,
                comments=len(comments),
                participants=people,
                opening=first.body,
                has_suggestion=any("```suggestion" in c.body for c in comments),
                author_replied=any(c.user == snapshot.author for c in comments[1:]) or first.user == snapshot.author,
            )
        )
    threads.sort(key=lambda t: (-t.comments, t.path))
    return ReviewSummary(tuple((u, s, b) for u, (s, b) in states.items()), tuple(threads))


def follow_ups(snapshot: PullRequestSnapshot, analysis: DiffAnalysis, review: ReviewSummary, change_type: str) -> tuple[FollowUp, ...]:
    """Things left to do: TODOs added, unanswered suggestions, untested source changes, gaps."""
    out: list[FollowUp] = []
    for f in analysis.files:
        for todo in f.todos_added[:2]:
            out.append(FollowUp("follow.todo", {"text": _TODO_PREFIX.sub("", todo) or todo}, f.path))
    for thread in review.threads:
        if thread.has_suggestion and not thread.author_replied:
            out.append(FollowUp("follow.suggestion", {"line": thread.line, "people": thread.participants}, thread.path))
    if any(state == "CHANGES_REQUESTED" for _, state, _ in review.reviewers):
        people = tuple(u for u, s, _ in review.reviewers if s == "CHANGES_REQUESTED")
        out.append(FollowUp("follow.changes_requested", {"people": people}))
    sources = [f for f in analysis.of_kind("source") if f.changes]
    if sources and not analysis.of_kind("test") and change_type not in ("docs", "ci", "build", "revert"):
        out.append(FollowUp("follow.no_tests", {"count": len(sources), "lines": sum(f.changes for f in sources)}))
    if snapshot.truncated:
        out.append(FollowUp("follow.truncated", {"listed": len(snapshot.files), "total": snapshot.changed_files}))
    missing = [f for f in analysis.files if f.patch_missing and f.kind != "binary"]
    if missing:
        out.append(FollowUp("follow.missing_patches", {"count": len(missing), "names": tuple(f.path for f in missing[:MAX_NAMES])}))
    return tuple(out[:10])
