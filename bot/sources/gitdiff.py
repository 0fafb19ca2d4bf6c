"""Files changed between two commits, in the shape of GitHub's "List pull requests files".

:func:`read_diffs` (or :func:`iter_diffs`, as the output streams in) asks ONE ``git diff-tree``
process for every range and parses its
``--raw`` and patch output, with the options that would otherwise follow the user's diff
configuration spelled out. Line counts are the patch's ``+`` and ``-`` lines, which is
what ``--numstat`` prints: asking for it too made git diff every file a second time.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from bot.sources.gitrun import GitRepo, GitRepositoryError, popen_git, text as _text

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


_DIFF_ARGS = (
    "diff-tree", "--stdin", "-z", "-r", "--root", "--always", "-M", "--raw", "-p",
    "-U3", "--no-color", "--no-ext-diff", "--no-textconv", "--ignore-submodules=none",
    "--src-prefix=a/", "--dst-prefix=b/",
)  # fmt: skip


def read_diffs(
    repo: GitRepo, ranges: list[tuple[str, str | None]], progress: Progress | None = None
) -> dict[str, list[FileDiff]]:
    """The files changed by each ``(commit, base)`` range, from ONE git process, keyed by ``commit``.

    ``base`` is the commit to compare with (usually the first parent, or the parent of
    the first commit of a run of commits); ``None`` compares a root commit with the empty
    tree. ``progress("diffs", done, len(ranges))`` is called as the output streams in.
    Raises :class:`GitRepositoryError` when git fails or its output cannot be read.
    """
    return dict(iter_diffs(repo, ranges, progress))


def iter_diffs(
    repo: GitRepo, ranges: list[tuple[str, str | None]], progress: Progress | None = None
) -> Iterator[tuple[str, list[FileDiff]]]:
    """:func:`read_diffs` as ``(commit, files)`` pairs in the order of ``ranges``, each as soon as git has diffed it.

    One git process for every range; whoever reads the pairs works while git diffs the
    next ones. Closing the iterator early stops git. Raises :class:`GitRepositoryError`
    when git fails (after the pairs it had finished) or its output cannot be read.
    """
    if not ranges:
        return
    # "<commit> <base>" makes diff-tree compare the commit with that one commit only, as if
    # it were its single parent: a merge with its first parent, a run with the commit before it.
    stdin = "\n".join(f"{sha} {base}" if base else sha for sha, base in ranges).encode() + b"\n"
    shas = [sha for sha, _ in ranges]
    proc = popen_git(repo.path, _DIFF_ARGS, stdin=True)
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
    index = 0  # the commit whose diff is being read; out starts with its header
    scan = 0  # where to look for the next header from
    try:
        while True:
            header = shas[index].encode() + b"\0"
            if index + 1 < len(shas) and len(out) >= len(header):
                if not out.startswith(header):
                    raise ValueError(f"expected commit {shas[index]} at the start of its diff")
                at = _next_header(out, shas[index + 1].encode() + b"\0", max(scan, len(header)), len(header))
                if at >= 0:
                    files = _parse(repo, bytes(out[len(header):at]))
                    del out[:at]
                    scan = 0
                    yield shas[index], files
                    index += 1
                    if progress is not None:
                        progress("diffs", index, len(shas))
                    continue
                scan = max(len(header), len(out) - 128)  # a header (SHA-1 or SHA-256 and NUL) may straddle two reads
            chunk = proc.stdout.read1(1 << 16)
            if not chunk:
                break
            out += chunk
        for thread in threads:
            thread.join()
        if proc.wait() != 0:
            raise GitRepositoryError(f"{repo.path}: git diff-tree failed: {_text(b''.join(errors)).strip()}")
        header = shas[index].encode() + b"\0"
        if index + 1 < len(shas) or not out.startswith(header):
            raise ValueError(f"no diff for commit {shas[index]}")
        yield shas[index], _parse(repo, bytes(out[len(header):]))
        if progress is not None:
            progress("diffs", len(shas), len(shas))
    except (ValueError, IndexError) as exc:
        raise GitRepositoryError(f"{repo.path}: cannot read git diff-tree output ({exc})") from exc
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdout.close()
        proc.stderr.close()


def _next_header(out: bytearray, header: bytes, start: int, body: int) -> int:
    """Where ``header`` starts the next commit's output in ``out`` (looking from ``start``), or -1.

    A real header follows a patch's newline, or comes right after the previous header, at
    ``body`` (a commit that changed nothing).
    """
    at = out.find(header, start)
    while at >= 0 and at != body and out[at - 1] != 0x0A:
        at = out.find(header, at + 1)
    return at


def _parse(repo: GitRepo, chunk: bytes) -> list[FileDiff]:
    try:
        return _parse_commit_diff(chunk)
    except (ValueError, IndexError) as exc:
        raise GitRepositoryError(f"{repo.path}: cannot read git diff-tree output ({exc})") from exc


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
