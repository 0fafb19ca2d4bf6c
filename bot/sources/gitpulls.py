"""Finding merged pull requests on the first-parent history of a branch.

GitHub leaves three kinds of commits on the base branch when it merges a pull request
(https://docs.github.com/en/repositories/configuring-branches-and-merges-in-your-repository/configuring-pull-request-merges/about-merge-methods-on-github):

* "Create a merge commit": ``Merge pull request #N from OWNER/BRANCH``, its first body
  line the PR title;
* "Squash and merge": one commit whose subject is the PR title followed by ``(#N)``;
* "Rebase and merge": each commit of the PR, re-committed (new hashes, same author,
  author date and message) one after the other on the base branch. GitHub adds no
  ``(#N)`` to these, but many projects' subjects carry one.

So a pull request is found as: a ``Merge pull request`` commit; a run of consecutive
commits whose subjects end in the same ``(#N)`` (one commit: a squash merge; more: a
rebase merge); or, when the clone has the pull request refs (``refs/pull/N/head`` as
GitHub serves them, or ``refs/remotes/REMOTE/pr/N`` / ``refs/remotes/REMOTE/pull/N/head``
as fetch recipes name them), a run of commits that are rebased copies of the commits of
``N``'s head ref (same author, author date and message), or that ``N``'s head ref points
at (a fast-forward: from that commit back through the unclaimed commits of its author).
A commit copied unchanged (same author, date and message) into several pull requests'
branches, as stacked pull requests and backports do, goes to the one with the fewest
commits, then the lowest number.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field

from bot.sources.gitrun import GitRepo, GitRepositoryError, popen_git, run_git, text

_SQUASH_SUBJECT = re.compile(r"^(?P<title>.*?)\s*\(#(?P<number>[0-9]+)\)\s*$")
_MERGE_SUBJECT = re.compile(r"^Merge pull request #(?P<number>[0-9]+) from (?P<source>\S+)\s*$")
_PULL_REF = re.compile(
    r"^refs/(?:pull/(?P<a>[0-9]+)/head|remotes/[^/]+/pr/(?P<b>[0-9]+)|remotes/[^/]+/pull/(?P<c>[0-9]+)/head)$"
)
_FORMAT = "--format=%H%x00%P%x00%aN%x00%aE%x00%at%x00%ct%x00%s%x00%b"
_LOG_FIELDS = 8
#: How many commits of one pull request's head ref are compared with the base branch:
#: "List commits on a pull request" stops at 250 too
#: (https://docs.github.com/en/rest/pulls/pulls#list-commits-on-a-pull-request).
PULL_COMMITS_CAP = 250


@dataclass(frozen=True, slots=True)
class Commit:
    """One commit as ``git log`` gives it; times are Unix seconds."""

    sha: str
    parents: tuple[str, ...]
    author: str
    author_email: str
    authored: int
    committed: int
    subject: str
    body: str

    @property
    def fingerprint(self) -> tuple[str, str, int, str, str]:
        """What a rebase keeps of a commit: author, author date and message."""
        return (self.author, self.author_email, self.authored, self.subject, self.body)


@dataclass(frozen=True, slots=True)
class MergedPull:
    """One merged pull request: its commits on the base branch, oldest first.

    ``kind`` is ``"merge"`` (one merge commit), ``"squash"`` (one ``(#N)`` commit),
    ``"rebase"`` (a run of commits) or ``"commit"`` (a plain commit presented as a PR);
    ``head_sha`` is the PR's head commit when known (the merged branch's tip, the head
    ref), else the newest commit; ``found_by`` says how it was recognised.
    """

    commits: tuple[Commit, ...]
    number: int
    title: str
    body: str
    kind: str
    head_ref: str
    head_sha: str
    found_by: str

    @property
    def commit(self) -> Commit:
        """The newest commit: what the base branch was updated to (``merge_commit_sha``)."""
        return self.commits[-1]

    @property
    def base_sha(self) -> str | None:
        """The base branch before the merge: the first commit's first parent (``None`` at the root)."""
        parents = self.commits[0].parents
        return parents[0] if parents else None


@dataclass(frozen=True, slots=True)
class PullRef:
    """A pull request head ref of the clone: ``number``, full ``ref`` name, ``head`` commit."""

    number: int
    ref: str
    head: str


@dataclass(slots=True)
class HistoryWalk:
    """What a walk saw, to say why it found no pull request."""

    branch: str
    commits: int = 0
    merges: int = 0
    shallow: bool = False  # the walk stopped at a shallow clone's boundary
    pull_refs: list[PullRef] = field(default_factory=list)


@dataclass(slots=True)
class _PullIndex:
    heads: dict[str, PullRef]  # a head ref's commit -> the ref
    by_number: dict[int, PullRef]
    rebased: dict[tuple[str, str, int, str, str], PullRef]  # a head ref commit's fingerprint -> its PR


def pull_refs(repo: GitRepo) -> list[PullRef]:
    """The clone's pull request head refs, one per number (``refs/pull/N/head`` first), by number."""
    out = text(run_git(repo.path, ["for-each-ref", "--format=%(objectname) %(refname)", "refs/pull", "refs/remotes"]))
    found: dict[int, PullRef] = {}
    for line in out.splitlines():
        sha, _, ref = line.partition(" ")
        match = _PULL_REF.match(ref)
        if match:
            number = int(match["a"] or match["b"] or match["c"])
            if number not in found or ref.startswith("refs/pull/"):
                found[number] = PullRef(number, ref, sha)
    return [found[n] for n in sorted(found)]


def _index(repo: GitRepo, tip: str, refs: list[PullRef]) -> _PullIndex:
    """Read the commits of every head ref that are not on ``tip``'s history, in ONE git log.

    When several pull requests hold the same commit (stacked pull requests, one
    reopened as another), the one with the fewest commits owns it, the lower number on a tie.
    """
    index = _PullIndex(heads={r.head: r for r in refs}, by_number={r.number: r for r in refs}, rebased={})
    if not refs:
        return index
    stdin = "".join(f"{r.head}\n" for r in refs) + f"^{tip}\n"
    out = run_git(repo.path, ["log", "--stdin", "-z", "--no-color", "--no-show-signature", "--encoding=UTF-8", _FORMAT],
                  stdin=stdin.encode())  # fmt: skip
    tokens = out.split(b"\0")
    commits = {c.sha: c for c in (_commit(tokens[i : i + _LOG_FIELDS]) for i in range(0, len(tokens) - 1, _LOG_FIELDS))}
    owned: list[tuple[int, int, PullRef, list[Commit]]] = []
    for ref in refs:
        reached = _reach(ref.head, commits)
        owned.append((len(reached), ref.number, ref, reached))
    for _size, _number, ref, reached in sorted(owned, key=lambda o: (o[0], o[1]), reverse=True):
        for commit in reached:
            index.rebased[commit.fingerprint] = ref  # the smallest owner is written last and wins
    return index


def _reach(head: str, commits: dict[str, Commit]) -> list[Commit]:
    """The commits of ``commits`` reachable from ``head``, at most :data:`PULL_COMMITS_CAP`."""
    reached: list[Commit] = []
    seen = {head}
    queue = deque([head])
    while queue and len(reached) < PULL_COMMITS_CAP:
        commit = commits.get(queue.popleft())
        if commit is None:
            continue  # on the base branch already
        reached.append(commit)
        for parent in commit.parents:
            if parent not in seen:
                seen.add(parent)
                queue.append(parent)
    return reached


def walk_first_parent(repo: GitRepo, tip: str) -> Iterator[Commit]:
    """Stream commits newest first, so ``last`` needs only the top of a long history.

    Raises :class:`GitRepositoryError` when git fails.
    """
    args = ["log", "--first-parent", "-z", "--no-color", "--no-show-signature", "--encoding=UTF-8", _FORMAT, tip, "--"]
    proc = popen_git(repo.path, args)
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
            raise GitRepositoryError(f"{repo.path}: git log failed: {text(error).strip()}")
    finally:
        if proc.poll() is None:
            proc.kill()  # the caller had enough commits
            proc.wait()
        proc.stdout.close()
        proc.stderr.close()


def _commit(fields: list[bytes]) -> Commit:
    sha, parents, author, email, authored, committed, subject, body = (text(f) for f in fields)
    return Commit(
        sha=sha,
        parents=tuple(parents.split()),
        author=author,
        author_email=email,
        authored=int(authored),
        committed=int(committed),
        subject=subject,
        body=body.strip(),
    )


def find_merged(
    repo: GitRepo, tip: str, walk: HistoryWalk, last: int | None = None
) -> Iterator[MergedPull]:
    """Yield the pull requests merged on the first-parent history of ``tip``, newest first.

    Stops after ``last`` of them, or at a shallow clone's boundary (a commit whose parent
    is not in the clone: its diff would be the whole tree). Fills ``walk`` as it goes.
    Raises :class:`GitRepositoryError` when git fails.
    """
    walk.pull_refs = pull_refs(repo)
    index = _index(repo, tip, walk.pull_refs)
    commits = walk_first_parent(repo, tip)
    found = 0
    run: list[tuple[Commit, int, str]] = []  # the run being gathered, newest first: (commit, number, found_by)
    try:
        for commit in commits:
            if commit.sha in repo.shallow:
                walk.shallow = True
                break
            walk.commits += 1
            walk.merges += len(commit.parents) > 1
            merge = _MERGE_SUBJECT.match(commit.subject)
            piece = None if merge else _piece(commit, index)
            if run and not _continues(run, commit, piece):
                yield _run_pull(run, index)
                run = []
                found += 1
                if last is not None and found >= last:
                    return
            if merge:
                yield _merge_pull(commit, merge)
                found += 1
                if last is not None and found >= last:
                    return
            elif piece is not None:
                run.append((commit, *piece))
            elif run:
                run.append((commit, run[-1][1], run[-1][2]))  # a fast-forward run taking its author's commit
        if run:
            yield _run_pull(run, index)
    finally:
        commits.close()  # stops git log once ``last`` pull requests are found


def _piece(commit: Commit, index: _PullIndex) -> tuple[int, str] | None:
    squash = _SQUASH_SUBJECT.match(commit.subject)
    if squash:
        return int(squash["number"]), "subject"
    ref = index.heads.get(commit.sha)
    if ref is not None:
        return ref.number, f"head:{ref.ref}"
    ref = index.rebased.get(commit.fingerprint)
    if ref is not None:
        return ref.number, f"rebased:{ref.ref}"
    return None


def _continues(run: list[tuple[Commit, int, str]], commit: Commit, piece: tuple[int, str] | None) -> bool:
    """Whether ``commit`` (older than the run) belongs to the same pull request as ``run``."""
    if piece is not None:
        return piece[0] == run[-1][1]
    if not commit.parents:
        return False  # a root commit: the base branch existed before any pull request
    # A fast-forward leaves nothing to tell the PR's first commit: take its author's
    # unclaimed commits below the head.
    newest, number, found_by = run[0]
    return found_by.startswith("head:") and len(commit.parents) == 1 and commit.author == newest.author


def _run_pull(run: list[tuple[Commit, int, str]], index: _PullIndex) -> MergedPull:
    newest, number, found_by = run[0]
    if len(run) > 1 and not run[-1][0].parents:
        run = run[:-1]  # a root commit has no base to rebase onto: it was never part of a PR
    commits = tuple(c for c, _, _ in reversed(run))
    ref = index.by_number.get(number)
    head_sha = ref.head if ref is not None else newest.sha
    if len(commits) == 1:
        only = commits[0]
        title = _strip_suffix(only.subject) if found_by == "subject" else only.subject
        kind = "squash" if found_by == "subject" else "rebase"
        return MergedPull(commits, number, title, only.body, kind, f"pull/{number}/head", head_sha, found_by)
    items = []
    for c in commits:
        items.append(f"* {_strip_suffix(c.subject)}" + (f"\n\n{c.body}" if c.body else ""))
    title = _strip_suffix(commits[0].subject)
    found_by = ", ".join(dict.fromkeys(f for _, _, f in reversed(run)))
    return MergedPull(commits, number, title, "\n\n".join(items), "rebase", f"pull/{number}/head", head_sha, found_by)


def _strip_suffix(subject: str) -> str:
    squash = _SQUASH_SUBJECT.match(subject)
    return squash["title"] if squash else subject


def _merge_pull(commit: Commit, merge: re.Match[str]) -> MergedPull:
    title, _, body = commit.body.partition("\n")
    branch = merge["source"].partition("/")[2] or merge["source"]
    head = commit.parents[1] if len(commit.parents) > 1 else commit.sha
    return MergedPull(
        (commit,), int(merge["number"]), title.strip() or commit.subject, body.strip(), "merge", branch, head,
        "merge commit",
    )  # fmt: skip


def why_none_found(walk: HistoryWalk, fetch_from: str) -> str:
    """One line saying why ``walk`` found no pull request and what would help.

    ``fetch_from`` is the remote (name or URL) the ``git fetch`` advice fetches pull
    request refs from, when the clone has none.
    """
    n = walk.commits
    seen = f"{n} commit{'' if n == 1 else 's'} on the first-parent history of {walk.branch}"
    if walk.shallow:
        seen += " (a shallow clone: `git fetch --unshallow` fetches the older commits)"
    if walk.merges:
        merges = f"{walk.merges} merge commit{'' if walk.merges == 1 else 's'}"
        what = f"{merges} but none named 'Merge pull request #N from ...', and no subject ending in (#N)"
    else:
        what = "none a merge commit or a subject ending in (#N)"
    refs = walk.pull_refs
    if len(refs) == 1:
        how = (
            f"and the pull request ref {refs[0].ref} neither points at one of them "
            "nor holds a commit that was rebased into one"
        )
    elif refs:
        how = (
            f"and none of the {len(refs)} pull request refs ({refs[-1].ref}, ...) points at one of them "
            "or holds a commit that was rebased into one"
        )
    else:
        fetch = f"git fetch {fetch_from} '+refs/pull/*/head:refs/pull/*/head'"
        return (
            f"no merged pull requests found: {seen}, {what}; fetch the PR refs with `{fetch}` "
            "to let prguide find rebase-merged pull requests"
        )
    return f"no merged pull requests found: {seen}, {what}, {how}"
