"""``git blame`` of chosen lines, read from its porcelain output.

:func:`blame_ranges` runs ONE ``git blame --porcelain`` per file with a ``-L a,b`` per
range, so only the asked lines are blamed (git stops walking the history once they are
all accounted for). It blames along the first-parent history (``--first-parent``): on
a branch that merges pull requests, a line a pull request wrote is blamed on the commit
that brought it to the branch (the merge, or the squash commit), which names the pull
request. Revisions listed in the repository's ``.git-blame-ignore-revs`` (formatting
sweeps, as GitHub's blame view also skips them:
https://docs.github.com/en/repositories/working-with-files/using-files/viewing-and-understanding-files#ignore-commits-in-the-blame-view)
are skipped when asked.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from bot.engine.history.model import IGNORE_REVS_FILE, listed_revisions
from bot.sources.gitrun import GitRepo, GitRepositoryError, run_git, text

_HEADER = re.compile(rb"^([0-9a-f]{40,64}) (\d+) (\d+)(?: (\d+))?$")


@dataclass(frozen=True, slots=True)
class BlamedCommit:
    """A commit blame named: ``sha``, ``subject``, ``author`` (name), ``committed`` (Unix
    seconds), ``boundary`` (true when the search stopped there: the line is at least
    that old, and this commit did not necessarily write it)."""

    sha: str
    subject: str
    author: str
    committed: int
    boundary: bool


@dataclass(frozen=True, slots=True)
class BlamedLine:
    """One blamed line: ``line`` (1-based, in the blamed revision) and its ``commit``."""

    line: int
    commit: BlamedCommit


def blame_ranges(
    repo: GitRepo,
    rev: str,
    path: str,
    ranges: Sequence[tuple[int, int]],
    *,
    since: int = 0,
    ignore_revs: Iterable[str] = (),
) -> list[BlamedLine]:
    """Blame lines ``ranges`` (1-based, inclusive) of ``path`` at ``rev``.

    ``since`` (Unix seconds, 0 for none) stops the search at commits older than that:
    their lines come back with a ``boundary`` commit. ``ignore_revs`` are skipped
    (``--ignore-rev``). Raises :class:`GitRepositoryError` when git fails (the path is
    not in ``rev``, a range is past its end, the revision is missing).
    """
    if not ranges:
        return []
    # --root: a root commit wrote its lines (a shallow clone's cut-off commits are not
    # roots to the caller, which knows them from ``GitRepo.shallow``).
    args = ["blame", "--porcelain", "--first-parent", "--root", "--no-progress"]
    if since:
        args.append(f"--since={since}")
    for rev_ in ignore_revs:
        args += ["--ignore-rev", rev_]
    for first, last in ranges:
        args += ["-L", f"{max(1, first)},{max(1, first, last)}"]
    out = run_git(repo.path, [*args, rev, "--", path])
    return parse_porcelain(out)


def parse_porcelain(out: bytes) -> list[BlamedLine]:
    """The lines of ``git blame --porcelain`` output, in output order.

    Each group starts with ``<sha> <orig line> <final line> [<lines in group>]``; the
    first time a commit appears its ``author``, ``committer-time``, ``summary`` and
    ``boundary`` lines follow; every line ends with its content after a tab.
    """
    commits: dict[str, dict[str, object]] = {}
    blamed: list[tuple[int, str]] = []
    current: dict[str, object] | None = None
    for raw in out.split(b"\n"):
        if raw.startswith(b"\t"):
            current = None
            continue
        header = _HEADER.match(raw)
        if header and current is None:
            sha = header[1].decode()
            current = commits.setdefault(sha, {"sha": sha})
            blamed.append((int(header[3]), sha))
            continue
        if current is None:
            continue
        key, _, value = raw.partition(b" ")
        if key == b"author":
            current["author"] = text(value)
        elif key == b"committer-time":
            current["committed"] = int(value or 0)
        elif key == b"summary":
            current["subject"] = text(value)
        elif key == b"boundary":
            current["boundary"] = True
    made = {
        sha: BlamedCommit(sha, str(c.get("subject", "")), str(c.get("author", "")), int(c.get("committed", 0)), bool(c.get("boundary")))  # type: ignore[arg-type]
        for sha, c in commits.items()
    }
    return [BlamedLine(line, made[sha]) for line, sha in blamed]


def ignored_revisions(repo: GitRepo, rev: str) -> list[str]:
    """The revisions ``.git-blame-ignore-revs`` lists at ``rev`` that the clone has, as full hashes.

    ``[]`` when the file is absent. Comments (``#``) and blank lines are skipped; a hash
    the clone lacks is dropped (git refuses to blame with an unknown ``--ignore-rev``).
    """
    try:
        listing = text(run_git(repo.path, ["show", f"{rev}:{IGNORE_REVS_FILE}"]))
    except GitRepositoryError:
        return []
    wanted = list(listed_revisions(listing))
    if not wanted:
        return []
    out = run_git(repo.path, ["cat-file", "--batch-check=%(objectname) %(objecttype)"], stdin="\n".join(wanted).encode() + b"\n")
    # Once each: a commit listed by many of its prefixes would repeat its --ignore-rev, and a
    # few thousand such lines make the blame's command line too long for the system (E2BIG).
    return list(dict.fromkeys(line.split()[0] for line in text(out).splitlines() if line.endswith(" commit")))

