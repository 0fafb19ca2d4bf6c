"""Blame the lines of many pull requests of one branch at once, by replaying its history.

``git blame`` walks the history again for every file of every pull request: about 30 ms
a file, 15 pull requests a second on a long history. ``prguide history`` traces a run
of consecutive pull requests of one branch, so the same work can be done once: read
the branch's first-parent diffs over the window (``git log -p -U0``, only for the paths
asked about and the names they had before a rename), and replay them oldest first,
keeping for every line of every tracked file the commit that last changed it. A pull
request's lines are read off when the replay reaches its base commit.

Along the first-parent history each commit is diffed against its first parent, as
``git blame --first-parent`` does; git's own diff decides which lines changed, so the
answers are the same as :mod:`bot.sources.gitblame` (tests compare the two). A line
older than the window, or changed only by a revision of ``.git-blame-ignore-revs``
that the replay cannot see through, has no origin (``""``). Through an ignored revision
(a formatting sweep) a new line keeps the origin of the old line whose text, without
whitespace, it continues, as a re-wrapped statement does.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from bot.engine.history.lines import ChangedLine, line_ranges
from bot.sources.gitrun import GitRepo, run_git, text

@dataclass(frozen=True, slots=True)
class TraceRequest:
    """One pull request to trace: its ``number``, its ``base`` (the commit on the branch
    right before it: for a squash or merge commit its first parent; for a rebase merge
    the first parent of its first commit; ``None`` when unknown) and the ``lines`` to blame."""

    number: int
    base: str | None
    lines: tuple[ChangedLine, ...]


#: A run longer than any file: the lines after the last known one.
_REST = 1 << 62
_HUNK = re.compile(rb"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_SPACE = re.compile(r"\s+")


@dataclass(slots=True)
class BranchCommit:
    """A first-parent commit of the replayed window: ``sha``, ``parents``, ``committed``
    (Unix seconds), ``author`` (name), ``subject``."""

    sha: str
    parents: tuple[str, ...]
    committed: int
    author: str
    subject: str


@dataclass(slots=True)
class _Hunk:
    old_start: int
    old_count: int
    new_count: int
    old_texts: list[str] = field(default_factory=list)
    new_texts: list[str] = field(default_factory=list)


@dataclass(slots=True)
class _FileChange:
    old: str | None
    new: str | None
    hunks: list[_Hunk] = field(default_factory=list)


def replay_origins(
    repo: GitRepo,
    requests: Sequence[TraceRequest],
    since: dict[int, int],
    ignore_revs: Iterable[str] = (),
) -> tuple[dict[int, dict[tuple[str, int], str]], list[TraceRequest], dict[str, BranchCommit]]:
    """Blame ``requests`` along the first-parent history of the newest base.

    ``since`` maps each request's number to the earliest commit time (Unix seconds) its
    search may reach (0: the whole history). Returns ``(origins, left, commits)``:
    ``{number: {(path, line): commit sha or ""}}`` for the requests replayed, the
    requests left for ``git blame`` (bases off that history), and the commits read.
    Raises :class:`bot.sources.gitrun.GitRepositoryError` when git fails.
    """
    wanted = [r for r in requests if r.base]
    if not wanted:
        return {}, list(requests), {}
    earliest = min(since.get(r.number, 0) for r in wanted)
    commits = _first_parent(repo, [r.base for r in wanted if r.base], earliest)
    position = {c.sha: i for i, c in enumerate(commits)}  # 0: the newest
    here = [r for r in wanted if r.base in position]
    left = [r for r in requests if r not in here]
    if not here:
        return {}, left, {}
    newest = min(position[r.base] for r in here if r.base)
    window = commits[newest:]  # newest first, down to the window's start
    ranges = {r.number: line_ranges(r.lines) for r in here}
    tracked = {path for rs in ranges.values() for path in rs}
    # The range of the window: from the newest base down to (not into) the window's start.
    span = [window[0].sha, *(f"^{p}" for p in window[-1].parents[:1])]
    names = _with_old_names(repo, span, tracked)
    ignored = set(ignore_revs)
    steps = _diffs(repo, span, names, ignored)
    by_position: dict[int, list[TraceRequest]] = {}
    for r in here:
        by_position.setdefault(position[r.base], []).append(r)  # type: ignore[index]
    state: dict[str, list[list]] = {}
    out: dict[int, dict[tuple[str, int], str]] = {}
    committed = {c.sha: c.committed for c in commits}
    for index in range(newest + len(window) - 1, newest - 1, -1):
        commit = commits[index]
        for change in steps.get(commit.sha, ()):
            _apply(state, change, commit.sha, commit.sha in ignored)
        for r in by_position.get(index, ()):
            start = since.get(r.number, 0)
            found: dict[tuple[str, int], str] = {}
            for path, path_ranges in ranges[r.number].items():
                for line, sha in _lookup(state.get(path), path_ranges):
                    old = sha and start and committed.get(sha, 0) < start
                    found[(path, line)] = "" if old or sha in ignored else sha
            out[r.number] = found
    return out, left, {c.sha: c for c in commits}


def _first_parent(repo: GitRepo, bases: list[str], since: int) -> list[BranchCommit]:
    """The first-parent history of the newest of ``bases``, newest first, back to ``since``
    (and to the first commit at or before every base, so each base is in it when it is on
    that history). A shallow clone's history ends where its commits do."""
    tips = run_git(repo.path, ["rev-list", "--no-walk=sorted", "--date-order", *dict.fromkeys(bases)])
    tip = text(tips).split()[0]
    args = ["log", "--first-parent", "-z", "--no-color", "--encoding=UTF-8", "--format=%H%x00%P%x00%ct%x00%aN%x00%s"]
    if since:
        args.append(f"--since={since - 86400}")  # a day of slack: committer dates are not ordered
    out = run_git(repo.path, [*args, tip, "--"])
    tokens = out.split(b"\0")
    commits = []
    left = set(bases)
    for i in range(0, len(tokens) - 4, 5):
        sha, parents, committed, author, subject = (text(t) for t in tokens[i : i + 5])
        sha = sha.lstrip("\n")
        commit = BranchCommit(sha, tuple(parents.split()), int(committed or 0), author, subject)
        commits.append(commit)
        left.discard(sha)
        if since and commit.committed < since and not left:
            break  # older than every request's window, and every base already seen
    return commits


def _with_old_names(repo: GitRepo, span: list[str], paths: set[str]) -> list[str]:
    """``paths`` and the names they had before renames among the first-parent commits of
    ``span`` (``[tip, ^boundary]``), so the replay follows a file through a rename, as blame does."""
    out = run_git(repo.path, ["log", "--first-parent", "--diff-merges=first-parent", "-M", "--name-status", "-z",
                              "--no-color", "--format=%x01%H", *span, "--"])  # fmt: skip
    names = set(paths)
    for chunk in out.split(b"\x01")[1:]:
        _, _, rest = chunk.partition(b"\0")
        fields = rest.lstrip(b"\n").split(b"\0")
        i = 0
        while i < len(fields):
            status = fields[i]
            if status[:1] in (b"R", b"C") and i + 2 < len(fields):
                old, new = text(fields[i + 1]), text(fields[i + 2])
                if new in names and status[:1] == b"R":
                    names.add(old)
                i += 3
            else:
                i += 2
    return sorted(names)


def _diffs(repo: GitRepo, span: list[str], paths: list[str], ignored: set[str]) -> dict[str, list[_FileChange]]:
    """The ``-U0`` first-parent diffs of the commits of ``span`` on ``paths``, by commit; the
    changed lines' text is kept only for ``ignored`` commits (they need it)."""
    if not paths:
        return {}
    args = ["log", "--first-parent", "--diff-merges=first-parent", "-M", "-p", "-U0", "--no-color", "--no-ext-diff",
            "--no-textconv", "--src-prefix=a/", "--dst-prefix=b/", "--format=%x01%H", *span, "--", *paths]  # fmt: skip
    out = run_git(repo.path, args)
    steps: dict[str, list[_FileChange]] = {}
    for chunk in out.split(b"\x01")[1:]:
        sha, _, body = chunk.partition(b"\n")
        name = text(sha).strip()
        steps[name] = _parse(body, name in ignored)
    return steps


def _parse(body: bytes, keep_text: bool) -> list[_FileChange]:
    """The file changes of one commit's ``-U0`` patch (with the lines' text when ``keep_text``)."""
    changes: list[_FileChange] = []
    current: _FileChange | None = None
    hunk: _Hunk | None = None
    for raw in body.split(b"\n"):
        first = raw[:1]
        if first in (b"-", b"+") and hunk is not None:
            if keep_text:
                if first == b"-" and len(hunk.old_texts) < hunk.old_count:
                    hunk.old_texts.append(text(raw[1:]))
                elif first == b"+" and len(hunk.new_texts) < hunk.new_count:
                    hunk.new_texts.append(text(raw[1:]))
            continue
        if raw.startswith(b"diff --git "):
            current = _FileChange(None, None)
            changes.append(current)
            hunk = None
            old, new = _git_paths(raw[11:])
            current.old, current.new = old, new
        elif current is None:
            continue
        elif hunk is None and raw.startswith(b"new file mode"):
            current.old = None
        elif hunk is None and raw.startswith(b"deleted file mode"):
            current.new = None
        elif hunk is None and raw.startswith(b"rename from "):
            current.old = _unquote(raw[12:])
        elif hunk is None and raw.startswith(b"rename to "):
            current.new = _unquote(raw[10:])
        elif raw.startswith(b"@@"):
            m = _HUNK.match(raw)
            if m:
                hunk = _Hunk(int(m[1]), int(m[2]) if m[2] is not None else 1, int(m[4]) if m[4] is not None else 1)
                current.hunks.append(hunk)
    return changes


def _git_paths(rest: bytes) -> tuple[str | None, str | None]:
    """``a/OLD b/NEW`` of a ``diff --git`` line (quoted names unquoted)."""
    if rest.startswith(b'"'):
        end = _closing_quote(rest)
        old = _unquote(rest[: end + 1])
        new = _unquote(rest[end + 2 :])
    else:
        # Without quotes the two names are the same length unless renamed; "rename from/to"
        # lines give a renamed file's names, so splitting in the middle is enough here.
        half = (len(rest) - 1) // 2
        old, new = text(rest[:half]), text(rest[half + 1 :])
    return old.removeprefix("a/"), new.removeprefix("b/")


def _closing_quote(raw: bytes) -> int:
    i = 1
    while i < len(raw):
        if raw[i : i + 1] == b"\\":
            i += 2
            continue
        if raw[i : i + 1] == b'"':
            return i
        i += 1
    return len(raw) - 1


def _unquote(raw: bytes) -> str:
    """A path as git prints it: plain, or C-quoted (``"a/caf\\303\\251"``)."""
    raw = raw.rstrip(b"\n")
    if not raw.startswith(b'"'):
        return text(raw)
    body = raw[1 : _closing_quote(raw)]
    out = bytearray()
    i = 0
    escapes = {b"n": b"\n", b"t": b"\t", b'"': b'"', b"\\": b"\\", b"a": b"\a", b"b": b"\b", b"f": b"\f", b"r": b"\r", b"v": b"\v"}
    while i < len(body):
        c = body[i : i + 1]
        if c == b"\\" and i + 1 < len(body):
            nxt = body[i + 1 : i + 2]
            if nxt.isdigit() and i + 3 < len(body) + 1:
                out.append(int(body[i + 1 : i + 4], 8))
                i += 4
                continue
            out += escapes.get(nxt, nxt)
            i += 2
            continue
        out += c
        i += 1
    return text(bytes(out))


# --- the replayed files -----------------------------------------------------------------


def _apply(state: dict[str, list[list]], change: _FileChange, sha: str, ignored: bool) -> None:
    """Apply one file change of commit ``sha`` to ``state`` (path -> runs of ``[count, origin]``)."""
    if change.new is None:  # deleted
        if change.old is not None:
            state.pop(change.old, None)
        return
    if change.old is None:
        runs: list[list] = []  # a new file: nothing before its first hunk
    else:
        runs = state.pop(change.old, None) or [[_REST, ""]]
    if change.hunks:
        runs = _patched(runs, change.hunks, sha, ignored)
    state[change.new] = runs


def _patched(runs: list[list], hunks: list[_Hunk], sha: str, ignored: bool) -> list[list]:
    """``runs`` after ``hunks`` (in order, ``-U0``): removed lines go, added lines come from ``sha``."""
    out: list[list] = []
    src = [list(r) for r in runs]
    at = 0  # index in src
    cursor = 1  # old line number of src[at]'s first line

    def take(n: int, keep: bool) -> list[str]:
        nonlocal at
        taken: list[str] = []
        while n > 0 and at < len(src):
            count, origin = src[at]
            used = min(count, n)
            if keep:
                _push(out, used, origin)
            else:
                taken.extend([origin] * min(used, 100_000))
            if used == count:
                at += 1
            else:
                src[at][0] = count - used
            n -= used
        return taken

    for h in hunks:
        start = h.old_start if h.old_count else h.old_start + 1
        take(start - cursor, True)
        removed = take(h.old_count, False)
        cursor = start + h.old_count
        if not h.new_count:
            continue
        if ignored:
            for origin in _seen_through(h.old_texts, removed, h.new_texts):
                _push(out, 1, origin)
        else:
            _push(out, h.new_count, sha)
    for count, origin in src[at:]:
        _push(out, count, origin)
    return out


def _push(out: list[list], count: int, origin: str) -> None:
    if count <= 0:
        return
    if out and out[-1][1] == origin and out[-1][0] < _REST:
        out[-1][0] = min(_REST, out[-1][0] + count)
    else:
        out.append([count, origin])


def _seen_through(old_texts: list[str], old_origins: list[str], new_texts: list[str]) -> list[str]:
    """The origins of a formatting sweep's new lines: each takes the origin of the old line
    its text (whitespace removed) continues; a line found nowhere has none (``""``)."""
    bare = [_SPACE.sub("", t) for t in old_texts]
    starts: list[int] = []
    total = 0
    for b in bare:
        starts.append(total)
        total += len(b)
    joined = "".join(bare)
    out: list[str] = []
    pos = 0
    for t in new_texts:
        b = _SPACE.sub("", t)
        i = joined.find(b, pos) if b else -1
        if i < 0 and b:
            i = joined.find(b)
        if i < 0 or not old_origins:
            out.append("")
            continue
        line = bisect.bisect_right(starts, i) - 1
        out.append(old_origins[min(line, len(old_origins) - 1)])
        pos = i + len(b)
    return out


def _lookup(runs: list[list] | None, ranges: list[tuple[int, int]]) -> list[tuple[int, str]]:
    """``[(line, origin)]`` for the lines of ``ranges`` (sorted) in ``runs`` (``""`` when unknown)."""
    if runs is None:
        return [(n, "") for first, last in ranges for n in range(first, last + 1)]
    out: list[tuple[int, str]] = []
    i = 0
    run_start = 1
    for first, last in ranges:
        for n in range(first, last + 1):
            while i < len(runs) and run_start + runs[i][0] <= n:
                run_start += runs[i][0]
                i += 1
            out.append((n, runs[i][1] if i < len(runs) else ""))
    return out
