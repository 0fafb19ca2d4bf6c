"""The changed paths of every merged pull request of a local git repository, oldest first.

What :mod:`bot.engine.history.coupling` counts: for each pull request
:mod:`bot.sources.gitpulls` finds on the first-parent history, the paths its commits
changed on the base branch. One ``git log --name-status`` pass reads every commit's
paths (a merge commit's against its first parent, as GitHub's files of a merged pull
request are), so a history of thousands of pull requests takes about a second; no
patch is read. A rebase-merged run's paths are the union of its commits' paths.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from bot.engine.history.coupling import MergedChange
from bot.sources.gitpulls import HistoryWalk, find_merged
from bot.sources.gitrun import GitRepo, branch_name, open_repository, resolve_commit, run_git, text

#: At most this many pull requests are read back from the tip: far more than any file's
#: last changes need, and a bound on memory for a very long history.
MAX_HISTORY = 5000


def merged_changes(repo: str | Path, *, ref: str = "HEAD", last: int | None = MAX_HISTORY) -> list[MergedChange]:
    """The pull requests merged into ``ref`` with their changed paths, oldest first.

    ``repo`` is opened as :func:`bot.sources.gitrepo.merged_pull_requests` opens it; ``last``
    keeps the newest ``last`` pull requests (``None``: all). Each
    :class:`~bot.engine.history.coupling.MergedChange` has ``number``, ``paths`` (files
    changed: added, modified, the new names of renamed and copied files, removed),
    ``gone`` (removed files and the old names of renamed ones), ``merged_at`` (the
    newest commit's committer time, ``YYYY-MM-DDTHH:MM:SSZ``) and ``author`` (the first
    commit's author name; for a merge commit, the merged branch tip's). Rename detection
    is git's default (``-M``, 50 % similarity).

    Raises :class:`bot.sources.gitrun.GitRepositoryError` as ``merged_pull_requests`` does,
    and ``ValueError`` for a negative ``last``.
    """
    if last is not None and last < 0:
        raise ValueError(f"last must be 0 or more, not {last}")
    where = open_repository(repo)
    if last == 0:
        return []
    tip = resolve_commit(where, ref)
    merged = list(find_merged(where, tip, HistoryWalk(branch_name(where, ref)), last))
    if not merged:
        return []
    oldest = merged[-1].base_sha
    changed = _changed_paths(where, tip, oldest)
    tips = _authors(where, [p.head_sha for p in merged if p.kind == "merge" and len(p.commit.parents) > 1])
    out = []
    for pull in reversed(merged):
        paths: dict[str, None] = {}
        gone: dict[str, None] = {}
        for commit in pull.commits:
            added, removed = changed.get(commit.sha, ((), ()))
            paths.update(dict.fromkeys(added))
            gone.update(dict.fromkeys(removed))
        author = tips.get(pull.head_sha, pull.commits[0].author) if pull.kind == "merge" else pull.commits[0].author
        moment = datetime.fromtimestamp(pull.commit.committed, tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        out.append(MergedChange(pull.number, tuple(paths), tuple(gone), moment, author))
    return out


def _changed_paths(repo: GitRepo, tip: str, oldest: str | None) -> dict[str, tuple[tuple[str, ...], tuple[str, ...]]]:
    """``{commit: (paths, gone)}`` for the first-parent commits from ``tip`` back to ``oldest``
    (exclusive; ``None``: to the root), in one ``git log``."""
    args = ["log", "--first-parent", "-m", "--name-status", "-M", "-z", "--no-color", "--format=%x01%H", tip]
    if oldest:
        args.append(f"^{oldest}")
    out = text(run_git(repo.path, [*args, "--"]))
    found: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {}
    for chunk in out.split("\x01")[1:]:
        sha, _, rest = chunk.partition("\0")
        tokens = rest.lstrip("\n").split("\0")
        paths: list[str] = []
        gone: list[str] = []
        i = 0
        while i < len(tokens):
            status = tokens[i]
            if not status:
                i += 1
                continue
            if status[0] in "RC" and i + 2 < len(tokens):
                old, new = tokens[i + 1], tokens[i + 2]
                paths.append(new)
                if status[0] == "R":
                    gone.append(old)
                i += 3
                continue
            if i + 1 < len(tokens):
                path = tokens[i + 1]
                paths.append(path)
                if status[0] == "D":
                    gone.append(path)
            i += 2
        found[sha.strip()] = (tuple(paths), tuple(gone))
    return found


def _authors(repo: GitRepo, shas: list[str]) -> dict[str, str]:
    """``{commit: author name}`` for ``shas``, in one ``git log --no-walk``."""
    if not shas:
        return {}
    out = run_git(
        repo.path,
        ["log", "--no-walk=unsorted", "--stdin", "-z", "--no-color", "--encoding=UTF-8", "--format=%H%x00%aN"],
        stdin="\n".join(shas).encode() + b"\n",
    )
    tokens = out.split(b"\0")
    return {text(tokens[i]): text(tokens[i + 1]) for i in range(0, len(tokens) - 1, 2)}
