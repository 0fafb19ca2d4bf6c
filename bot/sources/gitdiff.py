"""Files changed between two commits, in the shape of GitHub's "List pull requests files".

:func:`read_diffs` asks ONE ``git diff-tree`` process for every range and parses its
``--raw`` and patch output, with the options that would otherwise follow the user's diff
configuration spelled out. Line counts are the patch's ``+`` and ``-`` lines, which is
what ``--numstat`` prints: asking for it too made git diff every file a second time.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from bot.sources.gitrun import GitRepo, GitRepositoryError, popen_git, run_git, text as _text

#: GitHub leaves ``patch`` out of "List pull requests files" for a file whose diff is
#: longer than this many lines ...
MAX_PATCH_LINES = 3000
#: ... or larger than this many bytes.
MAX_PATCH_BYTES = 1_000_000

_HUNK_START = re.compile(rb"^@@", re.MULTILINE)
_SECTION_START = re.compile(rb"^(?=diff --git )", re.MULTILINE)
_STATUS = {"A": "added", "D": "removed", "M": "modified", "R": "renamed", "C": "copied", "T": "modified"}
#: ``progress(phase, done, total)``: ``phase`` is ``"history"`` (merged pull requests found
#: while walking the history; ``total`` is ``last`` or ``None``) or ``"diffs"`` (pull requests
#: whose diffs have been read, of ``total``).
Progress = Callable[[str, int, "int | None"], None]


@dataclass(frozen=True, slots=True)
class FileDiff:
    """One changed file: GitHub's ``status`` word, line counts, the patch from the first
    ``@@`` (``None`` when ``omitted`` says why, in the corpus' words)."""

    filename: str
    status: str
    additions: int
    deletions: int
    patch: str | None
    previous_filename: str | None
    omitted: str | None


def read_diffs(
    repo: GitRepo, ranges: list[tuple[str, str | None]], progress: Progress | None = None
) -> dict[str, list[FileDiff]]:
    """The files changed by each ``(commit, base)`` range, from ONE git process, keyed by ``commit``.

    ``base`` is the commit to compare with (usually the first parent, or the parent of
    the first commit of a run of commits); ``None`` compares a root commit with the empty
    tree. ``progress("diffs", done, len(ranges))`` is called as the output streams in.
    Raises :class:`GitRepositoryError` when git fails or its output cannot be read.
    """
    # "<commit> <base>" makes diff-tree compare the commit with that one commit only, as if
    # it were its single parent: a merge with its first parent, a run with the commit before it.
    lines = [f"{sha} {base}" if base else sha for sha, base in ranges]
    args = [
        "diff-tree", "--stdin", "-z", "-r", "--root", "--always", "-M", "--raw", "-p",
        "-U3", "--no-color", "--no-ext-diff", "--no-textconv", "--ignore-submodules=none",
        "--src-prefix=a/", "--dst-prefix=b/",
    ]  # fmt: skip
    shas = [sha for sha, _ in ranges]
    stdin = "\n".join(lines).encode() + b"\n"
    if progress is None:
        out = run_git(repo.path, args, stdin=stdin)
    else:
        out = _git_counting(repo, args, stdin, shas, progress)
    try:
        return {sha: _parse_commit_diff(chunk) for sha, chunk in _split_by_commit(out, shas)}
    except (ValueError, IndexError) as exc:
        raise GitRepositoryError(f"{repo.path}: cannot read git diff-tree output ({exc})") from exc


def _git_counting(repo: GitRepo, args: list[str], stdin: bytes, shas: list[str], progress: Progress) -> bytes:
    """Run diff-tree like :func:`~bot.sources.gitrun.run_git`, telling ``progress`` as each diff completes."""
    proc = popen_git(repo.path, args, stdin=True)
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


def _parse_commit_diff(chunk: bytes) -> list[FileDiff]:
    """Parse the ``--raw`` records (NUL-separated) then the patch of one commit."""
    if not chunk:
        return []
    raws: list[tuple[str, list[str]]] = []
    pos = 0
    while chunk[pos : pos + 1] != b"\0":  # a lone NUL ends the records
        end = chunk.index(b"\0", pos)
        record = chunk[pos:end]
        pos = end + 1
        if not record.startswith(b":"):
            raise ValueError(f"unexpected record {record[:40]!r}")
        status = _text(record.split(b" ")[4])[:1]
        paths = []
        for _ in range(2 if status in "RC" else 1):
            end = chunk.index(b"\0", pos)
            paths.append(_text(chunk[pos:end]))
            pos = end + 1
        raws.append((status, paths))
    sections = [s for s in _SECTION_START.split(chunk[pos + 1 :]) if s]
    files = []
    for status, paths in raws:
        # A type change (file <-> symlink) prints as a deletion then a creation.
        taken, sections = sections[: 2 if status == "T" else 1], sections[2 if status == "T" else 1 :]
        if not taken:
            raise ValueError(f"no patch section for {paths[-1]}")
        files.append(_file_diff(status, paths, taken))
    if sections:
        raise ValueError(f"{len(sections)} patch sections left over")
    return files


def _file_diff(status: str, paths: list[str], sections: list[bytes]) -> FileDiff:
    hunks = []
    binary = False
    for section in sections:
        start = _HUNK_START.search(section)
        if start is not None:
            hunks.append(section[start.start() :].removesuffix(b"\n"))
        elif b"\nBinary files " in section or section.startswith(b"Binary files "):
            binary = True
    raw_patch = b"\n".join(hunks)
    # From the first "@@" on, every line is a hunk header ("@@"), context (" "), an added
    # ("+") or removed ("-") line, or "\ No newline at end of file": numstat's counts.
    additions, deletions = raw_patch.count(b"\n+"), raw_patch.count(b"\n-")
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
    return FileDiff(
        filename=paths[-1],
        status=_STATUS.get(status, "modified"),
        additions=additions,
        deletions=deletions,
        patch=patch,
        previous_filename=paths[0] if status in "RC" and len(paths) == 2 else None,
        omitted=omitted,
    )
