"""Running ``git`` on a local repository for :mod:`bot.sources.gitrepo`.

Only ``git`` itself is run (no shell), with a fixed locale and without the caller's
``GIT_*`` variables that would point it at another repository, so the output does not
depend on who runs it.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

# Environment variables that would point git at another repository, index or config
# than the one asked for; the rest of the environment (HOME, PATH, safe.directory in
# the global config) is kept.
_KEEP_GIT_ENV = {"GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_CONFIG_NOSYSTEM", "GIT_EXEC_PATH"}


class GitRepositoryError(RuntimeError):
    """git is missing, the path is not a git repository, or git failed; the message says which."""


@dataclass(frozen=True, slots=True)
class GitRepo:
    """An opened repository: ``path`` as given (resolved), ``name`` its folder name
    (without ``.git`` for a bare one), ``shallow`` the commits of a shallow clone whose
    parents were not fetched."""

    path: Path
    name: str
    shallow: frozenset[str]


def git_env(path: Path) -> dict[str, str]:
    """The environment git runs in for ``path``: the caller's, minus repository-redirecting ``GIT_*``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_") or k in _KEEP_GIT_ENV}
    env["LC_ALL"] = "C"
    # Stop git from walking up into an enclosing repository when ``path`` is not one.
    env["GIT_CEILING_DIRECTORIES"] = str(path.parent)
    return env


def git_command(path: Path, args: Sequence[str]) -> list[str]:
    """The argv that runs ``git args`` in ``path``, paths printed unquoted (UTF-8)."""
    return ["git", "--no-pager", "-c", "core.quotepath=off", "-C", str(path), *args]


def popen_git(path: Path, args: Sequence[str], *, stdin: bool = False) -> subprocess.Popen[bytes]:
    """Start ``git args`` with piped stdout and stderr (and stdin when asked).

    Raises :class:`GitRepositoryError` when git cannot be started.
    """
    try:
        return subprocess.Popen(
            git_command(path, args),
            stdin=subprocess.PIPE if stdin else None,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=git_env(path),
        )
    except FileNotFoundError as exc:
        raise GitRepositoryError("git is not installed (no `git` on PATH)") from exc
    except OSError as exc:
        raise GitRepositoryError(f"cannot run git: {exc}") from exc


def run_git(path: Path, args: Sequence[str], *, stdin: bytes | None = None) -> bytes:
    """Run ``git args`` to the end and return its stdout; raises :class:`GitRepositoryError`
    (with git's own message) when it cannot start or exits non-zero."""
    try:
        done = subprocess.run(git_command(path, args), input=stdin, capture_output=True, env=git_env(path), check=False)
    except FileNotFoundError as exc:
        raise GitRepositoryError("git is not installed (no `git` on PATH)") from exc
    except OSError as exc:
        raise GitRepositoryError(f"cannot run git: {exc}") from exc
    if done.returncode != 0:
        raise GitRepositoryError(f"{path}: git {args[0]} failed: {text(done.stderr).strip()}")
    return done.stdout


def text(data: bytes) -> str:
    """git output as text (UTF-8; undecodable bytes replaced)."""
    return data.decode("utf-8", errors="replace")


def open_repository(repo: str | Path) -> GitRepo:
    """Open the top folder of a working tree, its ``.git`` folder, or a bare repository.

    Folders inside a working tree are refused, so a stray path never reads an enclosing
    repository. Raises :class:`GitRepositoryError` saying what ``repo`` is instead.
    """
    path = Path(repo).expanduser().resolve()
    if path.is_file():
        raise GitRepositoryError(
            f"{repo}: is a file, not a git repository (give the top folder of a working tree or a bare repository)"
        )
    if not path.is_dir():
        raise GitRepositoryError(f"{repo}: no such folder")
    try:
        out = text(
            run_git(
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
    return GitRepo(path=path, name=name, shallow=shallow)


def resolve_commit(repo: GitRepo, ref: str) -> str:
    """The commit ``ref`` names, as a full hash; raises :class:`GitRepositoryError` when none."""
    if not ref or ref.startswith("-"):
        raise GitRepositoryError(f"{repo.path}: {ref!r} is not a ref")
    try:
        return text(run_git(repo.path, ["rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"])).strip()
    except GitRepositoryError:
        raise GitRepositoryError(f"{repo.path}: {ref!r} names no commit (is the repository empty?)") from None


def branch_name(repo: GitRepo, ref: str, default: str = "main") -> str:
    """The branch ``ref`` stands for (``main`` for ``HEAD`` on main, ``main`` for
    ``origin/main``); ``default`` when it is no branch (a detached ``HEAD``, a tag, a hash)."""
    try:
        full = text(run_git(repo.path, ["rev-parse", "--symbolic-full-name", ref])).strip()
    except GitRepositoryError:
        full = ""
    if full.startswith("refs/heads/"):
        return full.removeprefix("refs/heads/")
    if full.startswith("refs/remotes/"):
        return full.removeprefix("refs/remotes/").partition("/")[2] or default
    return default


def origin_url(repo: GitRepo) -> str:
    """``remote.origin.url``, or ``""`` when there is no ``origin`` remote."""
    try:
        return text(run_git(repo.path, ["config", "--get", "remote.origin.url"])).strip()
    except GitRepositoryError:
        return ""  # no origin: git config exits 1
