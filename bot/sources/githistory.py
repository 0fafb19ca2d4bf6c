"""History facts for pull requests, read from a local clone: who wrote the lines they change.

For each pull request, the lines :func:`bot.engine.history.lines.trace_plan` picks are
blamed at the commit before the pull request (its base on the branch), along the
first-parent history, and each blamed commit is mapped to the merged pull request it
belongs to: a squash commit whose subject ends in ``(#N)``, a ``Merge pull request #N``
commit, or a rebase-merged commit carrying ``(#N)`` (GitHub's merge methods:
https://docs.github.com/en/repositories/configuring-branches-and-merges-in-your-repository/configuring-pull-request-merges/about-merge-methods-on-github).

Two ways give the same answers (tests check it on built repositories):

* ``"blame"``: one ``git blame --porcelain -L a,b`` per file (:mod:`bot.sources.gitblame`);
  exact for any set of pull requests, about 30 ms a file;
* ``"replay"``: one ``git log -p`` over the window, replayed forward
  (:mod:`bot.sources.gitreplay`), for many pull requests of one branch at once: what
  ``prguide history`` uses.

The search looks back :data:`WINDOW_DAYS` days before each pull request: older lines
have no origin (they count, but name no pull request). Revisions in
``.git-blame-ignore-revs`` (formatting sweeps) are seen through. Nothing is said when
the history is not there: a shallow clone's missing commits, a base the clone lacks.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from bot.engine.history.lines import line_ranges, trace_plan
from bot.engine.history.model import WINDOW_DAYS, HistoryFacts, LineOrigin, PullOrigin
from bot.engine.snapshot import PullRequestSnapshot
from bot.sources.gitadded import earlier_added
from bot.sources.gitblame import BlamedCommit, blame_ranges, ignored_revisions
from bot.sources.gitreplay import BranchCommit as _Commit
from bot.sources.gitreplay import TraceRequest, replay_origins
from bot.sources.gitrun import GitRepo, GitRepositoryError, open_repository, run_git, text

_SQUASH = re.compile(r"\(#(\d+)\)\s*$")
_MERGE = re.compile(r"^Merge pull request #(\d+) from \S+")


def pull_number(subject: str) -> int | None:
    """The pull request a branch commit's ``subject`` names: ``... (#N)`` (a squash or a
    rebase-merged commit) or ``Merge pull request #N from ...``; ``None`` otherwise."""
    m = _MERGE.match(subject) or _SQUASH.search(subject)
    return int(m[1]) if m else None


def history_facts(
    repo: str | Path | GitRepo,
    pulls: Sequence[tuple[PullRequestSnapshot, str | None]],
    *,
    method: str = "replay",
) -> dict[int, HistoryFacts]:
    """``{number: HistoryFacts}`` for merged pull requests ``(snapshot, base)`` of a local clone.

    ``base`` is the commit on the branch right before the pull request (a git-sourced
    bundle's ``pull.base.sha``); ``None`` finds it from the snapshot's
    ``merge_commit_sha`` (:meth:`HistoryReader.base_of`). The lines blamed are those
    :func:`bot.engine.history.lines.trace_plan` picks (``to_blame``); ``method`` as in
    :meth:`HistoryReader.facts`. Raises :class:`GitRepositoryError` when ``repo`` is
    not a git repository. Each available fact also carries the earlier pull requests that
    added the same lines (:func:`bot.sources.gitadded.earlier_added`, ``HistoryFacts.added``).
    """
    reader = HistoryReader(repo if isinstance(repo, GitRepo) else open_repository(repo))
    requests = []
    plans = {}
    for snapshot, base in pulls:
        if base is None and snapshot.merge_commit_sha:
            base = reader.base_of(snapshot.merge_commit_sha, snapshot.number)
        plan = trace_plan(snapshot.files)
        plans[snapshot.number] = plan
        requests.append(TraceRequest(snapshot.number, base, plan.to_blame))
    found = reader.facts(requests, method=method)
    # The earlier pull requests that added the same lines (bot.engine.history.copies); without
    # them (git failed) the guides only lack that claim.
    try:
        added, origins = earlier_added(reader.repo, [s for s, _ in pulls])
    except GitRepositoryError:
        added, origins = {}, {}
    # The trace plans go along: the guide would trace the same files again (1 ms a pull request).
    for number, facts in found.items():
        if number in plans:
            facts = replace(facts, traced=plans[number])
        if facts.available and added.get(number):
            more = {e.number: origins[e.number] for e in added[number]}
            facts = replace(facts, added=added[number], pulls={**more, **facts.pulls})
        found[number] = facts
    return found


class HistoryReader:
    """Reads history facts from one clone; remembers commits and blames for its lifetime
    (one run of ``prguide``), so a line range blamed twice costs one ``git blame``.

    ``window_days`` bounds the search (0: the whole history); ``ignore_revs`` follows
    the repository's ``.git-blame-ignore-revs``.
    """

    def __init__(self, repo: GitRepo, *, window_days: float = WINDOW_DAYS, ignore_revs: bool = True) -> None:
        self.repo = repo
        self.window_days = window_days
        self.follow_ignore_file = ignore_revs
        self._commits: dict[str, _Commit | None] = {}
        self._blames: dict[tuple[str, str, tuple[tuple[int, int], ...], int], dict[int, BlamedCommit]] = {}
        self._ignored: dict[str, list[str]] = {}
        self._partial: set[str] = set()  # commits known from blame only: no parents

    # --- the facade ------------------------------------------------------------------

    def facts(self, requests: Sequence[TraceRequest], *, method: str = "blame") -> dict[int, HistoryFacts]:
        """``{number: HistoryFacts}`` for ``requests``. ``method`` is ``"blame"`` or
        ``"replay"`` (falls back to blame for bases off the newest base's first-parent
        history). Never raises for one pull request's trouble: its facts say it."""
        out: dict[int, HistoryFacts] = {}
        ready: list[TraceRequest] = []
        self._load([r.base for r in requests if r.base])
        for r in requests:
            status = self._status(r.base)
            if status != "ok":
                out[r.number] = HistoryFacts(status, detail=self._why(status, r.base))
            elif not r.lines:
                out[r.number] = HistoryFacts("ok", since=self._since(r.base))
            else:
                ready.append(r)
        if method == "replay" and len(ready) > 1:
            since = {r.number: self._since(r.base) for r in ready}
            newest = max(ready, key=lambda r: self._commit(r.base).committed).base  # type: ignore[union-attr]
            try:
                found, left, commits = replay_origins(self.repo, ready, since, self._ignore_list(newest))
            except GitRepositoryError:
                found, left, commits = {}, ready, {}  # blame below says what is wrong, one pull request at a time
            for sha, commit in commits.items():
                self._commits.setdefault(sha, commit)
            for number, origins in found.items():
                out[number] = self._facts(origins, since[number])
            ready = list(left)
        for r in ready:
            try:
                origins = self._blame_request(r)
            except GitRepositoryError as exc:
                out[r.number] = HistoryFacts("error", detail=str(exc)[:300])
                continue
            out[r.number] = self._facts(origins, self._since(r.base))
        return out

    def base_of(self, merge_commit: str, number: int) -> str | None:
        """The commit before pull request ``number`` on the branch, from the commit GitHub
        merged it as (``merge_commit_sha``): a merge commit's or squash commit's first
        parent; for a rebase merge, the first parent of the first of the consecutive
        commits carrying ``(#number)``. ``None`` when the clone lacks the commit or it is a root."""
        commit = self._commit(merge_commit, full=True)
        while commit is not None and commit.parents:
            parent = self._commit(commit.parents[0], full=True)
            if parent is None or _MERGE.match(commit.subject) or pull_number(parent.subject) != number:
                return commit.parents[0]
            commit = parent
        return None

    # --- blame -----------------------------------------------------------------------

    def _blame_request(self, r: TraceRequest) -> dict[tuple[str, int], str]:
        """``{(path, line): commit sha ("" for a boundary)}`` for ``r.lines``."""
        assert r.base is not None
        since = self._since(r.base)
        ignore = self._ignore_list(r.base)
        out: dict[tuple[str, int], str] = {}
        for path, ranges in line_ranges(r.lines).items():
            key = (r.base, path, tuple(ranges), since)
            blamed = self._blames.get(key)
            if blamed is None:
                lines = blame_ranges(self.repo, r.base, path, ranges, since=since, ignore_revs=ignore)
                blamed = {b.line: b.commit for b in lines}
                self._blames[key] = blamed
                for commit in blamed.values():
                    self._remember_blamed(commit)
            skipped = set(ignore)
            for line, commit in blamed.items():
                # A line git could not see through an ignored revision to is as unknown as
                # one older than the window: the sweep did not write what it means.
                out[(path, line)] = "" if commit.boundary or commit.sha in skipped else commit.sha
        return out

    def _remember_blamed(self, c: BlamedCommit) -> None:
        if c.sha not in self._commits:
            self._commits[c.sha] = _Commit(c.sha, (), c.committed, c.author, c.subject)
            self._partial.add(c.sha)

    # --- facts -----------------------------------------------------------------------

    def _facts(self, origins: dict[tuple[str, int], str], since: int) -> HistoryFacts:
        lines: list[LineOrigin] = []
        pulls: dict[int, PullOrigin] = {}
        for (path, line), sha in sorted(origins.items()):
            if sha in self.repo.shallow:
                sha = ""  # where a shallow clone's history stops: it did not write these lines
            number = None
            if sha:
                commit = self._commit(sha)
                number = pull_number(commit.subject) if commit else None
                if number is not None and number not in pulls and commit is not None:
                    pulls[number] = PullOrigin(number, sha, commit.committed, self._pull_author(commit), _title(commit.subject))
            lines.append(LineOrigin(path, line, sha, number))
        return HistoryFacts("ok", tuple(lines), pulls, since)

    def _pull_author(self, commit: _Commit) -> str:
        """Who wrote the pull request: for a merge commit, the author of the merged branch's
        tip (the merge commit's author is whoever pressed the button); else the commit's."""
        if _MERGE.match(commit.subject):
            commit = self._commit(commit.sha, full=True) or commit
            if len(commit.parents) > 1:
                tip = self._commit(commit.parents[1])
                if tip is not None:
                    return tip.author
        return commit.author

    # --- commits ---------------------------------------------------------------------

    def _load(self, shas: Iterable[str]) -> None:
        """Read the commits ``shas`` in one ``git log --no-walk``; absent ones are remembered as ``None``."""
        wanted = [s for s in dict.fromkeys(shas) if s not in self._commits]
        if not wanted:
            return
        present = run_git(self.repo.path, ["cat-file", "--batch-check=%(objectname) %(objecttype)"], stdin="\n".join(wanted).encode() + b"\n")
        found = [line.split()[0] for line in text(present).splitlines() if line.endswith(" commit")]
        by_prefix = {s: next((f for f in found if f.startswith(s)), None) for s in wanted}
        if found:
            out = run_git(self.repo.path, ["log", "--no-walk=unsorted", "--stdin", "-z", "--no-color", "--encoding=UTF-8",
                                           "--format=%H%x00%P%x00%ct%x00%aN%x00%s"], stdin="\n".join(found).encode() + b"\n")  # fmt: skip
            tokens = out.split(b"\0")
            for i in range(0, len(tokens) - 4, 5):
                sha, parents, committed, author, subject = (text(t) for t in tokens[i : i + 5])
                sha = sha.lstrip("\n")
                self._commits[sha] = _Commit(sha, tuple(parents.split()), int(committed or 0), author, subject)
        for s, full in by_prefix.items():
            if full is None:
                self._commits[s] = None
            elif full != s:
                self._commits[s] = self._commits.get(full)

    def _commit(self, sha: str | None, *, full: bool = False) -> _Commit | None:
        """The commit ``sha`` (``None`` when absent); ``full`` reads it again if only blame named it."""
        if not sha:
            return None
        if full and sha in self._partial:
            self._partial.discard(sha)
            self._commits.pop(sha, None)
        if sha not in self._commits:
            self._load([sha])
        return self._commits.get(sha)

    def _status(self, base: str | None) -> str:
        if not base:
            return "no-base"
        if self._commit(base) is None:
            return "shallow" if self.repo.shallow else "missing"
        if base in self.repo.shallow:
            return "shallow"
        return "ok"

    def _why(self, status: str, base: str | None) -> str:
        if status == "no-base":
            return "the pull request's base commit is not known"
        if status == "shallow":
            return f"{base}: not in this shallow clone (`git fetch --unshallow` fetches the history)"
        return f"{base}: not in this clone (fetch the branch it was merged into)"

    def _since(self, base: str | None) -> int:
        commit = self._commit(base)
        if commit is None or not self.window_days:
            return 0
        return max(0, int(commit.committed - self.window_days * 86400))

    def _ignore_list(self, base: str | None) -> list[str]:
        """The revisions to see through: ``.git-blame-ignore-revs`` as the clone's ``HEAD``
        has it (a sweep listed after a pull request was merged still only re-formatted
        what it touched), else as ``base`` has it."""
        if not self.follow_ignore_file or not base:
            return []
        if "HEAD" not in self._ignored:
            self._ignored["HEAD"] = ignored_revisions(self.repo, "HEAD")
        if self._ignored["HEAD"]:
            return self._ignored["HEAD"]
        if base not in self._ignored:
            self._ignored[base] = ignored_revisions(self.repo, base)
        return self._ignored[base]


def _title(subject: str) -> str:
    m = _SQUASH.search(subject)
    return subject[: m.start()].rstrip() if m and not _MERGE.match(subject) else subject
