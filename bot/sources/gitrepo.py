"""Merged pull requests read from a local git repository, in GitHub's REST shapes.

GitHub leaves two kinds of commits on the base branch when it merges a pull request:

* a squash (or rebase-and-squash) commit whose subject ends in ``(#N)``; its subject
  without that suffix is the PR title and its body the PR body;
* a merge commit ``Merge pull request #N from OWNER/BRANCH`` whose first body line is
  the PR title.

:func:`merged_pull_requests` walks the first-parent history of a branch, picks those
commits, and rebuilds for each the bundle dict a GitHub round trip would give ("Get a
pull request" plus "List pull requests files"), so a repository can be replayed
without the network. Reviews and review comments are not in git; they come back empty.

Only ``git`` itself is run (no shell), with a fixed locale and the options that would
otherwise follow the user's diff configuration spelled out, so the output does not
depend on who runs it. Needs git 2.24 or newer.
"""

from __future__ import annotations

import os
import re
import subprocess
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from bot.engine.snapshot import GITHUB_FILE_LIST_CAP, PullRequestSnapshot
from bot.sources.bundle import snapshot_from_bundle

#: GitHub leaves ``patch`` out of "List pull requests files" for a file whose diff is
#: longer than this many lines ...
MAX_PATCH_LINES = 3000
#: ... or larger than this many bytes.
MAX_PATCH_BYTES = 1_000_000

_SQUASH_SUBJECT = re.compile(r"^(?P<title>.*?)\s*\(#(?P<number>[0-9]+)\)\s*$")
_MERGE_SUBJECT = re.compile(r"^Merge pull request #(?P<number>[0-9]+) from (?P<source>\S+)\s*$")
_HUNK_START = re.compile(rb"^@@", re.MULTILINE)
_SECTION_START = re.compile(rb"^(?=diff --git )", re.MULTILINE)
_STATUS = {"A": "added", "D": "removed", "M": "modified", "R": "renamed", "C": "copied", "T": "modified"}
# Environment variables that would point git at another repository, index or config
# than the one asked for; the rest of the environment (HOME, PATH, safe.directory in
# the global config) is kept.
_KEEP_GIT_ENV = {"GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_CONFIG_NOSYSTEM", "GIT_EXEC_PATH"}
_LOG_FIELDS = 6
#: ``progress(phase, done, total)``: ``phase`` is ``"history"`` (merged pull requests found
#: while walking the history; ``total`` is ``last`` or ``None``) or ``"diffs"`` (pull requests
#: whose diffs have been read, of ``total``).
Progress = Callable[[str, int, "int | None"], None]


class GitRepositoryError(RuntimeError):
    """git is missing, the path is not a git repository, or git failed; the message says which."""


@dataclass(frozen=True, slots=True)
class _Commit:
    sha: str
    parents: tuple[str, ...]
    author: str
    committed: int
    subject: str
    body: str


@dataclass(frozen=True, slots=True)
class _MergedPull:
    commit: _Commit
    number: int
    title: str
    body: str
    kind: str  # "squash" or "merge"
    head_ref: str


@dataclass(frozen=True, slots=True)
class _FileDiff:
    filename: str
    status: str
    additions: int
    deletions: int
    patch: str | None
    previous_filename: str | None
    omitted: str | None  # why there is no patch, in the corpus' words


@dataclass(frozen=True, slots=True)
class _Repo:
    path: Path
    name: str
    shallow: frozenset[str]  # commits of a shallow clone whose parents were not fetched


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
) -> list[dict[str, Any]]:
    """Return a bundle dict for each pull request merged into ``ref``, newest first.

    ``repo`` is the top folder of a working tree, its ``.git`` folder, or a bare
    repository (folders inside a working tree are refused, so a stray path never reads
    an enclosing repository). ``last`` keeps only the newest ``last`` pull requests.
    ``repository`` (``"owner/name"``) defaults to the one in ``remote.origin.url``
    (https or ssh forms), else ``"local/<folder name>"``; ``html_url`` is
    ``https://github.com/{repository}/pull/{N}`` when the repository is on GitHub
    (given, or guessed from a github.com remote), else ``""``. In a shallow clone the
    walk stops at the depth limit, since older commits and their diffs are not there.

    Each bundle is ``{"pull", "files", "reviews": [], "review_comments": [], "_meta"}``:

    * ``pull`` follows "Get a pull request": ``number``, ``title``, ``body`` (``None``
      when empty), ``user`` ``{login, type}`` (the commit author's name, no e-mail;
      type ``"Bot"`` for names ending in ``[bot]``; for a merge commit, the author of
      the merged branch's tip, since the merge commit's author is whoever merged),
      ``state`` ``"closed"``, ``merged`` true, ``merged_at``/``closed_at`` (committer
      date, ``YYYY-MM-DDTHH:MM:SSZ``), ``merge_commit_sha``, ``base`` ``{ref, sha
      (first parent, ``None`` for a root commit), repo {full_name}}``, ``head`` ``{ref,
      sha}`` (a merge commit: the branch named in its subject and the second parent; a
      squash commit: ``pull/N/head`` and the commit itself, as git keeps nothing of
      the PR's own branch), ``html_url``, ``labels`` ``[]``, ``changed_files``,
      ``additions``, ``deletions`` (lines).
    * ``files`` follows "List pull requests files": ``filename``, ``status``
      (``added``/``removed``/``modified``/``renamed``; a type change counts as
      modified), ``additions``, ``deletions``, ``changes``, ``patch`` and, for renames,
      ``previous_filename``. As on GitHub, ``patch`` starts at the first ``@@`` and
      has no trailing newline, and is absent for binary files, files without hunks
      (pure renames, mode changes, empty files) and diffs over
      :data:`MAX_PATCH_LINES` lines or :data:`MAX_PATCH_BYTES` bytes; the list stops
      at :data:`~bot.engine.snapshot.GITHUB_FILE_LIST_CAP` entries while ``changed_files``
      counts every file. Submodule changes show as ``Subproject commit`` lines.
    * ``_meta`` (not a GitHub field) gives ``source`` ``"git"``, ``kind``
      (``"squash"``/``"merge"``), ``commit`` and, when any, ``patch_omitted``
      ``[{filename, reason}]``.

    ``progress`` (see :data:`Progress`) is told how the history walk and the diff
    reading advance, for a progress bar on a long run.

    Raises :class:`GitRepositoryError` when git is missing, ``repo`` is not a git
    repository, ``ref`` names no commit, or git fails; :class:`ValueError` for a
    negative ``last`` or a ``repository`` not shaped ``owner/name``.
    """
    if last is not None and last < 0:
        raise ValueError(f"last must be 0 or more, not {last}")
    if repository is not None and not _is_owner_name(repository):
        raise ValueError(f'repository must look like "owner/name", not {repository!r}')
    where = _open_repository(repo)
    if last == 0:
        return []
    tip = _resolve_commit(where, ref)
    base_ref = _branch_name(where, ref)
    repository, on_github = _repository_name(where, repository)

    walk = _walk_first_parent(where, tip)
    merged: list[_MergedPull] = []
    try:
        for found in _select(walk, last, where.shallow):
            merged.append(found)
            if progress is not None:
                progress("history", len(merged), last)
    finally:
        walk.close()  # stops git log once ``last`` pull requests are found
    if not merged:
        return []
    branch_tips = [m.commit.parents[1] for m in merged if m.kind == "merge" and len(m.commit.parents) > 1]
    branch_authors = _authors(where, branch_tips)
    diffs = _diffs(where, [m.commit for m in merged], progress)
    return [
        _bundle(m, diffs[m.commit.sha], repository, on_github, base_ref, branch_authors)
        for m in merged
    ]


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
    where = _open_repository(repo)
    tip = _resolve_commit(where, ref)
    base_ref = _branch_name(where, ref)
    repository, on_github = _repository_name(where, repository)
    walk = _walk_first_parent(where, tip)
    try:
        commit = next(walk)
    finally:
        walk.close()
    presented = _MergedPull(commit, number, commit.subject, commit.body, "commit", f"pull/{number}/head")
    return _bundle(presented, _diffs(where, [commit])[commit.sha], repository, on_github, base_ref, {})


def load_merged_pull_requests(
    repo: str | Path,
    *,
    last: int | None = None,
    repository: str | None = None,
    ref: str = "HEAD",
    progress: Progress | None = None,
) -> list[PullRequestSnapshot]:
    """Like :func:`merged_pull_requests`, as :class:`~bot.engine.snapshot.PullRequestSnapshot` objects, newest first."""
    bundles = merged_pull_requests(repo, last=last, repository=repository, ref=ref, progress=progress)
    return [snapshot_from_bundle(b, f"{repo}@{b['_meta']['commit']}") for b in bundles]


def repository_name(repo: str | Path, repository: str | None = None) -> RepositoryName:
    """How the guides of ``repo`` will be named and linked (see :func:`merged_pull_requests`).

    Raises :class:`GitRepositoryError` as :func:`merged_pull_requests` does, and
    :class:`ValueError` for a ``repository`` not shaped ``owner/name``.
    """
    if repository is not None and not _is_owner_name(repository):
        raise ValueError(f'repository must look like "owner/name", not {repository!r}')
    where = _open_repository(repo)
    name, on_github = _repository_name(where, repository)
    return RepositoryName(name, on_github, "" if repository is not None else _origin_url(where))


# --- running git -------------------------------------------------------------------


def _env(path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_") or k in _KEEP_GIT_ENV}
    env["LC_ALL"] = "C"
    # Stop git from walking up into an enclosing repository when ``path`` is not one.
    env["GIT_CEILING_DIRECTORIES"] = str(path.parent)
    return env


def _command(path: Path, args: Sequence[str]) -> list[str]:
    return ["git", "--no-pager", "-c", "core.quotepath=off", "-C", str(path), *args]


def _git(path: Path, args: Sequence[str], *, stdin: bytes | None = None) -> bytes:
    try:
        done = subprocess.run(
            _command(path, args), input=stdin, capture_output=True, env=_env(path), check=False
        )
    except FileNotFoundError as exc:
        raise GitRepositoryError("git is not installed (no `git` on PATH)") from exc
    except OSError as exc:
        raise GitRepositoryError(f"cannot run git: {exc}") from exc
    if done.returncode != 0:
        raise GitRepositoryError(f"{path}: git {args[0]} failed: {_text(done.stderr).strip()}")
    return done.stdout


def _text(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")


def _open_repository(repo: str | Path) -> _Repo:
    path = Path(repo).expanduser().resolve()
    if path.is_file():
        raise GitRepositoryError(
            f"{repo}: is a file, not a git repository (give the top folder of a working tree or a bare repository)"
        )
    if not path.is_dir():
        raise GitRepositoryError(f"{repo}: no such folder")
    try:
        out = _text(
            _git(
                path,
                ["rev-parse", "--is-bare-repository", "--absolute-git-dir", "--is-shallow-repository",
                 "--git-path", "shallow"],
            )  # fmt: skip
        ).splitlines()
    except GitRepositoryError as exc:
        if "not a git repository" in str(exc):
            raise GitRepositoryError(
                f"{repo}: not a git repository (give the top folder of a working tree or a bare repository)"
            ) from exc
        raise
    bare, git_dir = out[0] == "true", Path(out[1])
    shallow: frozenset[str] = frozenset()
    if out[2] == "true":
        try:
            shallow = frozenset((path / out[3]).read_text(encoding="ascii").split())
        except (OSError, UnicodeDecodeError) as exc:
            raise GitRepositoryError(f"{repo}: cannot read the shallow clone's boundary ({exc})") from exc
    if git_dir.name == ".git":
        name = git_dir.parent.name
    elif bare:
        name = git_dir.name.removesuffix(".git") or git_dir.name
    else:
        name = path.name
    return _Repo(path=path, name=name, shallow=shallow)


def _resolve_commit(repo: _Repo, ref: str) -> str:
    if not ref or ref.startswith("-"):
        raise GitRepositoryError(f"{repo.path}: {ref!r} is not a ref")
    try:
        return _text(_git(repo.path, ["rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"])).strip()
    except GitRepositoryError:
        raise GitRepositoryError(f"{repo.path}: {ref!r} names no commit (is the repository empty?)") from None


def _branch_name(repo: _Repo, ref: str) -> str:
    try:
        full = _text(_git(repo.path, ["rev-parse", "--symbolic-full-name", ref])).strip()
    except GitRepositoryError:
        full = ""
    if full.startswith("refs/heads/"):
        return full.removeprefix("refs/heads/")
    if full.startswith("refs/remotes/"):
        return full.removeprefix("refs/remotes/").partition("/")[2] or "main"
    return "main"


def _repository_name(repo: _Repo, given: str | None) -> tuple[str, bool]:
    """``("owner/name", on_github)``: as given, else from the origin remote, else ``local/<folder>``."""
    if given is not None:
        return given, True
    guessed = _repository_from_remote(_origin_url(repo))
    if guessed is None:
        return f"local/{repo.name}", False
    host, name = guessed
    return name, host in {"github.com", "www.github.com", "ssh.github.com"}


def _origin_url(repo: _Repo) -> str:
    try:
        return _text(_git(repo.path, ["config", "--get", "remote.origin.url"])).strip()
    except GitRepositoryError:
        return ""  # no origin: git config exits 1


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


# --- the first-parent history --------------------------------------------------------


def _walk_first_parent(repo: _Repo, tip: str) -> Iterator[_Commit]:
    """Stream commits newest first, so ``last`` needs only the top of a long history."""
    args = [
        "log", "--first-parent", "-z", "--no-color", "--no-show-signature", "--encoding=UTF-8",
        "--format=%H%x00%P%x00%aN%x00%ct%x00%s%x00%b", tip, "--",
    ]  # fmt: skip
    try:
        proc = subprocess.Popen(
            _command(repo.path, args), stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=_env(repo.path)
        )
    except FileNotFoundError as exc:
        raise GitRepositoryError("git is not installed (no `git` on PATH)") from exc
    except OSError as exc:
        raise GitRepositoryError(f"cannot run git: {exc}") from exc
    assert proc.stdout is not None and proc.stderr is not None
    try:
        pending = b""
        fields: list[bytes] = []
        while chunk := proc.stdout.read1(1 << 16):
            pending += chunk
            *tokens, pending = pending.split(b"\0")
            for token in tokens:
                fields.append(token)
                if len(fields) == _LOG_FIELDS:
                    yield _commit(fields)
                    fields = []
        error = proc.stderr.read()
        if proc.wait() != 0:
            raise GitRepositoryError(f"{repo.path}: git log failed: {_text(error).strip()}")
    finally:
        if proc.poll() is None:
            proc.kill()  # the caller had enough commits
            proc.wait()
        proc.stdout.close()
        proc.stderr.close()


def _commit(fields: list[bytes]) -> _Commit:
    sha, parents, author, committed, subject, body = (_text(f) for f in fields)
    return _Commit(
        sha=sha,
        parents=tuple(parents.split()),
        author=author,
        committed=int(committed),
        subject=subject,
        body=body.strip(),
    )


def _select(commits: Iterator[_Commit], last: int | None, shallow: frozenset[str]) -> Iterator[_MergedPull]:
    found = 0
    for commit in commits:
        if commit.sha in shallow:
            return  # the clone's history ends here; this commit's parent is not in it
        merged = _as_merged_pull(commit)
        if merged is None:
            continue
        yield merged
        found += 1
        if last is not None and found >= last:
            return


def _as_merged_pull(commit: _Commit) -> _MergedPull | None:
    merge = _MERGE_SUBJECT.match(commit.subject)
    if merge:
        title, _, body = commit.body.partition("\n")
        branch = merge["source"].partition("/")[2] or merge["source"]
        return _MergedPull(
            commit, int(merge["number"]), title.strip() or commit.subject, body.strip(), "merge", branch
        )
    squash = _SQUASH_SUBJECT.match(commit.subject)
    if squash:
        number = int(squash["number"])
        return _MergedPull(commit, number, squash["title"], commit.body, "squash", f"pull/{number}/head")
    return None


def _authors(repo: _Repo, shas: list[str]) -> dict[str, str]:
    if not shas:
        return {}
    out = _git(
        repo.path,
        ["log", "--no-walk=unsorted", "--stdin", "-z", "--no-color", "--encoding=UTF-8", "--format=%H%x00%aN"],
        stdin="\n".join(shas).encode() + b"\n",
    )
    tokens = out.split(b"\0")
    return {_text(tokens[i]): _text(tokens[i + 1]) for i in range(0, len(tokens) - 1, 2)}


# --- diffs -----------------------------------------------------------------------------


def _diffs(repo: _Repo, commits: list[_Commit], progress: Progress | None = None) -> dict[str, list[_FileDiff]]:
    """Every commit's diff against its first parent (root: the empty tree), from ONE git process.

    ``progress("diffs", done, len(commits))`` is called as the output streams in.
    """
    # "<commit> <first parent>" makes diff-tree compare a merge with its first parent only.
    lines = [f"{c.sha} {c.parents[0]}" if c.parents else c.sha for c in commits]
    args = [
        "diff-tree", "--stdin", "-z", "-r", "--root", "--always", "-M", "--raw", "--numstat", "-p",
        "-U3", "--no-color", "--no-ext-diff", "--no-textconv", "--ignore-submodules=none",
        "--src-prefix=a/", "--dst-prefix=b/",
    ]  # fmt: skip
    shas = [c.sha for c in commits]
    stdin = "\n".join(lines).encode() + b"\n"
    out = _git(repo.path, args, stdin=stdin) if progress is None else _git_counting(repo, args, stdin, shas, progress)
    try:
        return {sha: _parse_commit_diff(chunk) for sha, chunk in _split_by_commit(out, shas)}
    except (ValueError, IndexError) as exc:
        raise GitRepositoryError(f"{repo.path}: cannot read git diff-tree output ({exc})") from exc


def _git_counting(repo: _Repo, args: list[str], stdin: bytes, shas: list[str], progress: Progress) -> bytes:
    """Run diff-tree like :func:`_git`, telling ``progress`` each time a commit's diff is complete."""
    try:
        proc = subprocess.Popen(
            _command(repo.path, args), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            env=_env(repo.path),
        )  # fmt: skip
    except FileNotFoundError as exc:
        raise GitRepositoryError("git is not installed (no `git` on PATH)") from exc
    except OSError as exc:
        raise GitRepositoryError(f"cannot run git: {exc}") from exc
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    errors: list[bytes] = []

    def feed() -> None:  # git writes while it reads: feed it from a thread so neither side blocks
        try:
            proc.stdin.write(stdin)
        except OSError:
            pass  # git stopped reading; its exit status says why
        finally:
            proc.stdin.close()

    def drain() -> None:
        errors.append(proc.stderr.read())

    threads = [threading.Thread(target=feed, daemon=True), threading.Thread(target=drain, daemon=True)]
    for thread in threads:
        thread.start()
    out = bytearray()
    seen = 0  # headers found so far; the diff before each one is complete
    try:
        while chunk := proc.stdout.read1(1 << 16):
            scan = max(0, len(out) - 128)  # a header (a SHA-1 or SHA-256 and NUL) may straddle two chunks
            out += chunk
            while seen < len(shas):
                at = out.find(shas[seen].encode() + b"\0", scan)
                if at < 0:
                    break
                if at == 0 or out[at - 1 : at] == b"\n":
                    seen += 1
                    if seen > 1:
                        progress("diffs", seen - 1, len(shas))
                scan = at + 1
        for thread in threads:
            thread.join()
        if proc.wait() != 0:
            raise GitRepositoryError(f"{repo.path}: git {args[0]} failed: {_text(b''.join(errors)).strip()}")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdout.close()
        proc.stderr.close()
    progress("diffs", len(shas), len(shas))
    return bytes(out)


def _split_by_commit(out: bytes, shas: list[str]) -> Iterator[tuple[str, bytes]]:
    """Cut diff-tree output at each ``<sha>NUL`` header; shas come in the order they were asked."""
    pos = 0
    for i, sha in enumerate(shas):
        header = sha.encode() + b"\0"
        if not out.startswith(header, pos):
            raise ValueError(f"expected commit {sha} at byte {pos}")
        start = pos + len(header)
        if i + 1 == len(shas):
            end = len(out)
        else:
            following = shas[i + 1].encode() + b"\0"
            end = out.find(following, start)
            # A real header starts the output of an empty commit or follows a patch's newline.
            while end > start and out[end - 1 : end] != b"\n":
                end = out.find(following, end + 1)
            if end < 0:
                raise ValueError(f"no diff for commit {shas[i + 1]}")
        yield sha, out[start:end]
        pos = end


def _parse_commit_diff(chunk: bytes) -> list[_FileDiff]:
    """Parse ``--raw`` and ``--numstat`` records (NUL-separated) then the patch of one commit."""
    if not chunk:
        return []
    raws: list[tuple[str, list[str]]] = []
    counts: list[tuple[int, int]] = []
    pos = 0
    while chunk[pos : pos + 1] != b"\0":  # a lone NUL ends the records
        end = chunk.index(b"\0", pos)
        record = chunk[pos:end]
        pos = end + 1
        if record.startswith(b":"):
            status = _text(record.split(b" ")[4])[:1]
            paths = []
            for _ in range(2 if status in "RC" else 1):
                end = chunk.index(b"\0", pos)
                paths.append(_text(chunk[pos:end]))
                pos = end + 1
            raws.append((status, paths))
        else:
            added, deleted, path = record.split(b"\t", 2)
            if not path:  # a rename: old and new path follow
                pos = chunk.index(b"\0", chunk.index(b"\0", pos) + 1) + 1
            counts.append((_count(added), _count(deleted)))
    sections = [s for s in _SECTION_START.split(chunk[pos + 1 :]) if s]
    if len(raws) != len(counts):
        raise ValueError(f"{len(raws)} raw records but {len(counts)} numstat records")
    files = []
    for (status, paths), (additions, deletions) in zip(raws, counts, strict=True):
        # A type change (file <-> symlink) prints as a deletion then a creation.
        taken, sections = sections[: 2 if status == "T" else 1], sections[2 if status == "T" else 1 :]
        if not taken:
            raise ValueError(f"no patch section for {paths[-1]}")
        files.append(_file_diff(status, paths, additions, deletions, taken))
    if sections:
        raise ValueError(f"{len(sections)} patch sections left over")
    return files


def _count(value: bytes) -> int:
    return 0 if value == b"-" else int(value)  # "-" marks a binary file


def _file_diff(status: str, paths: list[str], additions: int, deletions: int, sections: list[bytes]) -> _FileDiff:
    hunks = []
    binary = False
    for section in sections:
        start = _HUNK_START.search(section)
        if start is not None:
            hunks.append(section[start.start() :].removesuffix(b"\n"))
        elif b"\nBinary files " in section or section.startswith(b"Binary files "):
            binary = True
    raw_patch = b"\n".join(hunks)
    patch: str | None = None
    omitted: str | None = None
    if binary:
        omitted = "binary"
    elif not hunks:
        omitted = "no textual hunks (pure rename / mode change / empty file)"
    elif raw_patch.count(b"\n") + 1 > MAX_PATCH_LINES or len(raw_patch) > MAX_PATCH_BYTES:
        omitted = "diff too large"
    else:
        patch = _text(raw_patch)
    return _FileDiff(
        filename=paths[-1],
        status=_STATUS.get(status, "modified"),
        additions=additions,
        deletions=deletions,
        patch=patch,
        previous_filename=paths[0] if status in "RC" and len(paths) == 2 else None,
        omitted=omitted,
    )


# --- bundles ---------------------------------------------------------------------------


def _iso(timestamp: int) -> str:
    return datetime.fromtimestamp(timestamp, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _user(name: str) -> dict[str, str]:
    return {"login": name, "type": "Bot" if name.endswith("[bot]") else "User"}


def _bundle(
    merged: _MergedPull,
    diffs: list[_FileDiff],
    repository: str,
    on_github: bool,
    base_ref: str,
    branch_authors: dict[str, str],
) -> dict[str, Any]:
    commit = merged.commit
    head_sha = commit.sha
    author = commit.author
    if merged.kind == "merge" and len(commit.parents) > 1:
        head_sha = commit.parents[1]
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
            "sha": commit.parents[0] if commit.parents else None,
            "repo": {"full_name": repository, "name": repository.partition("/")[2]},
        },
        "merged": True,
        "additions": sum(d.additions for d in diffs),
        "deletions": sum(d.deletions for d in diffs),
        "changed_files": len(diffs),
    }
    meta: dict[str, Any] = {"source": "git", "kind": merged.kind, "commit": commit.sha}
    omitted = [{"filename": d.filename, "reason": d.omitted} for d in diffs if d.omitted]
    if omitted:
        meta["patch_omitted"] = omitted
    return {"pull": pull, "files": files, "reviews": [], "review_comments": [], "_meta": meta}
