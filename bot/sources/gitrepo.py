"""Merged pull requests read from a local git repository, in GitHub's REST shapes.

:func:`merged_pull_requests` walks the first-parent history of a branch, finds the pull
requests merged there (merge commits, ``(#N)`` squash commits, rebase-merged runs of
commits: see :mod:`bot.sources.gitpulls`), and rebuilds for each the bundle dict a
GitHub round trip would give ("Get a pull request" plus "List pull requests files"), so
a repository can be replayed without the network. Reviews and review comments are not
in git; they come back empty. :func:`why_no_pull_requests` says why a history gave none.

Only ``git`` itself is run (no shell; :mod:`bot.sources.gitrun`), with a fixed locale
and the options that would otherwise follow the user's diff configuration spelled out
(:mod:`bot.sources.gitdiff`), so the output does not depend on who runs it. Needs git
2.24 or newer.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from bot.engine.snapshot import GITHUB_FILE_LIST_CAP, PullRequestSnapshot
from bot.sources.bundle import snapshot_from_bundle
from bot.sources.gitdiff import MAX_PATCH_BYTES, MAX_PATCH_LINES, FileDiff, Progress, iter_diffs, read_diffs
from bot.sources.gitpulls import HistoryWalk, MergedPull, find_merged, walk_first_parent, why_none_found
from bot.sources.gitrun import (
    GitRepo,
    GitRepositoryError,
    branch_name,
    open_repository,
    origin_url,
    resolve_commit,
    run_git,
    text,
)

__all__ = [
    "MAX_PATCH_BYTES",
    "MAX_PATCH_LINES",
    "GitRepositoryError",
    "Progress",
    "RepositoryName",
    "History",
    "commit_as_pull_request",
    "find_history",
    "load_merged_pull_requests",
    "merged_pull_requests",
    "repository_name",
    "why_no_pull_requests",
]


@dataclass(frozen=True, slots=True)
class RepositoryName:
    """What a local repository is called on GitHub.

    ``name`` is ``"owner/name"`` (``"local/<folder>"`` when nothing says); ``on_github``
    whether links to ``https://github.com/{name}`` work; ``origin`` is
    ``remote.origin.url`` (``""`` when there is no ``origin`` remote).
    """

    name: str
    on_github: bool
    origin: str


def merged_pull_requests(
    repo: str | Path,
    *,
    last: int | None = None,
    repository: str | None = None,
    ref: str = "HEAD",
    progress: Progress | None = None,
    numbers: set[int] | None = None,
) -> list[dict[str, Any]]:
    """Return a bundle dict for each pull request merged into ``ref``, newest first.

    ``repo`` is the top folder of a working tree, its ``.git`` folder, or a bare
    repository (folders inside a working tree are refused, so a stray path never reads
    an enclosing repository). ``last`` keeps only the newest ``last`` pull requests;
    ``numbers``, when given, only those pull requests (the walk stops once all are found).
    ``repository`` (``"owner/name"``) defaults to the one in ``remote.origin.url``
    (https or ssh forms), else ``"local/<folder name>"``; ``html_url`` is
    ``https://github.com/{repository}/pull/{N}`` when the repository is on GitHub
    (given, or guessed from a github.com remote), else ``""``. In a shallow clone the
    walk stops at the depth limit, since older commits and their diffs are not there.

    A pull request is a ``Merge pull request #N`` commit, a run of consecutive
    commits whose subjects end in the same ``(#N)``, or a run of commits the clone's
    pull request refs (``refs/pull/N/head``, ``refs/remotes/REMOTE/pr/N``) show to be
    rebase-merged (see :mod:`bot.sources.gitpulls`). An empty list means none was
    found; :func:`why_no_pull_requests` says why.

    Each bundle is ``{"pull", "files", "reviews": [], "review_comments": [], "_meta"}``:

    * ``pull`` follows "Get a pull request": ``number``, ``title``, ``body`` (``None``
      when empty), ``user`` ``{login, type}`` (the commit author's name, no e-mail;
      type ``"Bot"`` for names ending in ``[bot]``; for a merge commit, the author of
      the merged branch's tip, since the merge commit's author is whoever merged; for
      a run, the author of its first commit), ``state`` ``"closed"``, ``merged`` true,
      ``merged_at``/``closed_at`` (committer date of the newest commit,
      ``YYYY-MM-DDTHH:MM:SSZ``), ``merge_commit_sha`` (the newest commit: for a
      rebase merge, what the base branch was updated to), ``base`` ``{ref, sha (the
      first commit's first parent, ``None`` for a root commit), repo {full_name}}``,
      ``head`` ``{ref, sha}`` (a merge commit: the branch named in its subject and the
      second parent; otherwise ``pull/N/head`` and the commit of the clone's head ref
      for ``N`` if any, else the newest commit, as git keeps nothing of the PR's own
      branch), ``html_url``, ``labels`` ``[]``, ``changed_files``, ``additions``,
      ``deletions`` (lines). A run of one commit keeps its subject (without ``(#N)``)
      as title and its body as body; a longer run takes its first commit's subject as
      title and lists every commit's message (``* subject``, then the body) as body.
    * ``files`` follows "List pull requests files", for the combined diff of the pull
      request (from the first commit's first parent to the newest commit):
      ``filename``, ``status`` (``added``/``removed``/``modified``/``renamed``; a type
      change counts as modified), ``additions``, ``deletions``, ``changes``, ``patch``
      and, for renames, ``previous_filename``. As on GitHub, ``patch`` starts at the
      first ``@@`` and has no trailing newline, and is absent for binary files, files
      without hunks (pure renames, mode changes, empty files) and diffs over
      :data:`MAX_PATCH_LINES` lines or :data:`MAX_PATCH_BYTES` bytes; the list stops
      at :data:`~bot.engine.snapshot.GITHUB_FILE_LIST_CAP` entries while ``changed_files``
      counts every file. Submodule changes show as ``Subproject commit`` lines.
    * ``_meta`` (not a GitHub field) gives ``source`` ``"git"``, ``kind``
      (``"squash"``/``"merge"``/``"rebase"``), ``commit`` (the newest), ``commits``
      (every commit of the pull request on the base branch, oldest first),
      ``found_by`` (``"merge commit"``, ``"subject"``, ``"head:REF"`` when the head
      ref points at the commit, ``"rebased:REF"`` when the commit is a rebased copy of
      one of the ref's; comma-separated when mixed) and, when any, ``patch_omitted``
      ``[{filename, reason}]``.

    ``progress`` (see :data:`~bot.sources.gitdiff.Progress`) is told how the history
    walk and the diff reading advance, for a progress bar on a long run.

    Raises :class:`GitRepositoryError` when git is missing, ``repo`` is not a git
    repository, ``ref`` names no commit, or git fails; :class:`ValueError` for a
    negative ``last`` or a ``repository`` not shaped ``owner/name``.
    """
    return list(find_history(repo, last=last, repository=repository, ref=ref, progress=progress, numbers=numbers).bundles(progress))


@dataclass
class History:
    """The merged pull requests found on a branch, their diffs not read yet (see :func:`find_history`)."""

    where: GitRepo
    merged: list[MergedPull]
    repository: str
    on_github: bool
    base_ref: str
    branch_authors: dict[str, str]

    def __len__(self) -> int:
        return len(self.merged)

    def bundles(self, progress: Progress | None = None, *, first_apart: bool = False) -> Iterator[dict[str, Any]]:
        """The bundle of each pull request (see :func:`merged_pull_requests`), newest first, as git diffs it.

        One git process diffs them all; with ``first_apart`` the first comes from a git
        process of its own, ended before it is yielded, and the others from a second one
        started only when the next is asked for: a caller may start worker processes in
        between, which then inherit no pipe of a running git (git would wait for ever on
        its input). Raises :class:`GitRepositoryError` as :func:`merged_pull_requests` does.
        """
        ranges = [(m.commit.sha, m.base_sha) for m in self.merged]
        done = 0
        for part in (ranges[:1], ranges[1:]) if first_apart else (ranges,):
            for _sha, files in iter_diffs(self.where, part):
                merged = self.merged[done]
                done += 1
                if progress is not None:
                    progress("diffs", done, len(ranges))
                yield _bundle(merged, files, self.repository, self.on_github, self.base_ref, self.branch_authors)

    def snapshots(
        self, repo: str | Path, progress: Progress | None = None, *, first_apart: bool = False
    ) -> Iterator[PullRequestSnapshot]:
        """:meth:`bundles` as :class:`~bot.engine.snapshot.PullRequestSnapshot` objects (``repo`` names their source)."""
        for b in self.bundles(progress, first_apart=first_apart):
            yield snapshot_from_bundle(b, f"{repo}@{b['_meta']['commit']}")


def find_history(
    repo: str | Path,
    *,
    last: int | None = None,
    repository: str | None = None,
    ref: str = "HEAD",
    progress: Progress | None = None,
    numbers: set[int] | None = None,
) -> History:
    """The pull requests :func:`merged_pull_requests` would give, found (the history walked,
    merge authors read) but not diffed: :meth:`History.bundles` streams their bundles.

    Same arguments and errors as :func:`merged_pull_requests`; ``progress`` hears of the walk.
    """
    if last is not None and last < 0:
        raise ValueError(f"last must be 0 or more, not {last}")
    if repository is not None and not _is_owner_name(repository):
        raise ValueError(f'repository must look like "owner/name", not {repository!r}')
    where = open_repository(repo)
    if last == 0:
        return History(where, [], repository or "", False, "", {})
    tip = resolve_commit(where, ref)
    base_ref = branch_name(where, ref)
    repository, on_github = _repository_name(where, repository)
    merged: list[MergedPull] = []
    wanted = set(numbers) if numbers is not None else None
    for found in find_merged(where, tip, HistoryWalk(base_ref), last):
        if wanted is not None:
            if found.number not in wanted:
                continue
            wanted.discard(found.number)
        merged.append(found)
        if progress is not None:
            progress("history", len(merged), last)
        if wanted is not None and not wanted:
            break
    branch_tips = [m.head_sha for m in merged if m.kind == "merge" and len(m.commit.parents) > 1]
    return History(where, merged, repository, on_github, base_ref, _authors(where, branch_tips))


def why_no_pull_requests(repo: str | Path, *, ref: str = "HEAD", repository: str | None = None) -> str:
    """One line saying why :func:`merged_pull_requests` finds nothing in ``repo`` at ``ref``.

    Counts the first-parent commits walked, says whether a shallow clone cut the walk,
    and whether the clone has pull request refs; without them, gives the ``git fetch``
    command that fetches them (GitHub serves each pull request's head as
    ``refs/pull/N/head``: https://docs.github.com/en/pull-requests/collaborating-with-pull-requests/reviewing-changes-in-pull-requests/checking-out-pull-requests-locally).
    The command fetches from ``origin``, else from ``repository`` (``"owner/name"``) on
    GitHub, else from a placeholder URL. Starts with ``"no merged pull requests found: "``.
    Raises :class:`GitRepositoryError` as :func:`merged_pull_requests` does.
    """
    where = open_repository(repo)
    tip = resolve_commit(where, ref)
    walk = HistoryWalk(branch_name(where, ref, default=ref))
    for _ in find_merged(where, tip, walk):
        pass  # only the counts are wanted
    if origin_url(where):
        fetch_from = "origin"
    else:
        fetch_from = f"https://github.com/{repository or 'OWNER/NAME'}"
    return why_none_found(walk, fetch_from)


def commit_as_pull_request(
    repo: str | Path,
    *,
    number: int = 1,
    repository: str | None = None,
    ref: str = "HEAD",
) -> dict[str, Any]:
    """Return the commit at ``ref`` dressed as merged pull request ``number``, for
    repositories whose history has no pull request merges to replay.

    The bundle has the shape :func:`merged_pull_requests` gives (same ``repo`` and
    ``repository`` rules): the title is the commit subject, the body its message body,
    the files its diff against its first parent (a root commit: every file added),
    ``head`` the commit itself, and ``_meta.kind`` is ``"commit"``.

    Raises :class:`GitRepositoryError` as :func:`merged_pull_requests` does, and
    :class:`ValueError` for a ``number`` below 1 or a malformed ``repository``.
    """
    if number < 1:
        raise ValueError(f"number must be 1 or more, not {number}")
    if repository is not None and not _is_owner_name(repository):
        raise ValueError(f'repository must look like "owner/name", not {repository!r}')
    where = open_repository(repo)
    tip = resolve_commit(where, ref)
    base_ref = branch_name(where, ref)
    repository, on_github = _repository_name(where, repository)
    walk = walk_first_parent(where, tip)
    try:
        commit = next(walk)
    finally:
        walk.close()
    presented = MergedPull(
        (commit,), number, commit.subject, commit.body, "commit", f"pull/{number}/head", commit.sha, "commit"
    )
    diffs = read_diffs(where, [(commit.sha, presented.base_sha)])
    return _bundle(presented, diffs[commit.sha], repository, on_github, base_ref, {})


def load_merged_pull_requests(
    repo: str | Path,
    *,
    last: int | None = None,
    repository: str | None = None,
    ref: str = "HEAD",
    progress: Progress | None = None,
    numbers: set[int] | None = None,
) -> list[PullRequestSnapshot]:
    """Like :func:`merged_pull_requests`, as :class:`~bot.engine.snapshot.PullRequestSnapshot` objects, newest first."""
    bundles = merged_pull_requests(repo, last=last, repository=repository, ref=ref, progress=progress, numbers=numbers)
    return [snapshot_from_bundle(b, f"{repo}@{b['_meta']['commit']}") for b in bundles]


def repository_name(repo: str | Path, repository: str | None = None) -> RepositoryName:
    """How the guides of ``repo`` will be named and linked (see :func:`merged_pull_requests`).

    Raises :class:`GitRepositoryError` as :func:`merged_pull_requests` does, and
    :class:`ValueError` for a ``repository`` not shaped ``owner/name``.
    """
    if repository is not None and not _is_owner_name(repository):
        raise ValueError(f'repository must look like "owner/name", not {repository!r}')
    where = open_repository(repo)
    name, on_github = _repository_name(where, repository)
    return RepositoryName(name, on_github, "" if repository is not None else origin_url(where))


def _authors(repo: GitRepo, shas: list[str]) -> dict[str, str]:
    if not shas:
        return {}
    out = run_git(
        repo.path,
        ["log", "--no-walk=unsorted", "--stdin", "-z", "--no-color", "--encoding=UTF-8", "--format=%H%x00%aN"],
        stdin="\n".join(shas).encode() + b"\n",
    )
    tokens = out.split(b"\0")
    return {text(tokens[i]): text(tokens[i + 1]) for i in range(0, len(tokens) - 1, 2)}


# --- naming ---------------------------------------------------------------------------


def _repository_name(repo: GitRepo, given: str | None) -> tuple[str, bool]:
    """``("owner/name", on_github)``: as given, else from the origin remote, else ``local/<folder>``."""
    if given is not None:
        return given, True
    guessed = _repository_from_remote(origin_url(repo))
    if guessed is None:
        return f"local/{repo.name}", False
    host, name = guessed
    return name, host in {"github.com", "www.github.com", "ssh.github.com"}


def _repository_from_remote(url: str) -> tuple[str, str] | None:
    """``(host, "owner/name")`` from an https/ssh/git remote URL or scp-like ``user@host:owner/name``."""
    if "://" in url:
        parts = urlsplit(url)
        if parts.scheme not in {"https", "http", "ssh", "git", "git+ssh", "ssh+git"} or not parts.hostname:
            return None
        host, path = parts.hostname, parts.path
    else:
        scp = re.fullmatch(r"(?:[^@/]+@)?(?P<host>[^:/]+):(?P<path>[^\\].*)", url)
        if scp is None or len(scp["host"]) == 1:  # a single letter is a Windows drive
            return None
        host, path = scp["host"], scp["path"]
    owner_name = path.strip("/").removesuffix(".git")
    return (host.lower(), owner_name) if _is_owner_name(owner_name) else None


def _is_owner_name(value: str) -> bool:
    owner, slash, name = value.partition("/")
    return bool(slash and owner and name and "/" not in name and not any(c.isspace() for c in value))


# --- bundles ---------------------------------------------------------------------------


def _iso(timestamp: int) -> str:
    return datetime.fromtimestamp(timestamp, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _user(name: str) -> dict[str, str]:
    return {"login": name, "type": "Bot" if name.endswith("[bot]") else "User"}


def _bundle(
    merged: MergedPull,
    diffs: list[FileDiff],
    repository: str,
    on_github: bool,
    base_ref: str,
    branch_authors: dict[str, str],
) -> dict[str, Any]:
    commit = merged.commit
    head_sha = merged.head_sha
    author = merged.commits[0].author
    if merged.kind == "merge":
        author = branch_authors.get(head_sha, author)
    files = []
    for d in diffs[:GITHUB_FILE_LIST_CAP]:
        entry: dict[str, Any] = {
            "filename": d.filename,
            "status": d.status,
            "additions": d.additions,
            "deletions": d.deletions,
            "changes": d.additions + d.deletions,
        }
        if d.patch is not None:
            entry["patch"] = d.patch
        if d.previous_filename is not None:
            entry["previous_filename"] = d.previous_filename
        files.append(entry)
    when = _iso(commit.committed)
    pull = {
        "html_url": f"https://github.com/{repository}/pull/{merged.number}" if on_github else "",
        "number": merged.number,
        "state": "closed",
        "title": merged.title,
        "user": _user(author),
        "body": merged.body or None,
        "labels": [],
        "closed_at": when,
        "merged_at": when,
        "merge_commit_sha": commit.sha,
        "head": {"ref": merged.head_ref, "sha": head_sha},
        "base": {
            "ref": base_ref,
            "sha": merged.base_sha,
            "repo": {"full_name": repository, "name": repository.partition("/")[2]},
        },
        "merged": True,
        "additions": sum(d.additions for d in diffs),
        "deletions": sum(d.deletions for d in diffs),
        "changed_files": len(diffs),
    }
    meta: dict[str, Any] = {
        "source": "git",
        "kind": merged.kind,
        "commit": commit.sha,
        "commits": [c.sha for c in merged.commits],
        "found_by": merged.found_by,
    }
    omitted = [{"filename": d.filename, "reason": d.omitted} for d in diffs if d.omitted]
    if omitted:
        meta["patch_omitted"] = omitted
    return {"pull": pull, "files": files, "reviews": [], "review_comments": [], "_meta": meta}
