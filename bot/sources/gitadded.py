"""The earlier pull requests that added the same lines as a pull request, from a local clone.

For :attr:`bot.engine.history.model.HistoryFacts.added` (:mod:`bot.engine.history.copies`
says what is done with them): the pull requests merged on the first-parent history of the
clone's ``HEAD`` within :data:`bot.engine.history.copies.WINDOW_DAYS` days before each
pull request are diffed once (one git process for all), and the lines each adds
(:func:`bot.engine.history.copies.added_lines`) are compared with the pull request's own.
The app has no such source: it would cost a request per earlier pull request.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from bot.engine.history.copies import WINDOW_DAYS, added_lines, shared
from bot.engine.history.coupling import utc_moment
from bot.engine.history.model import EarlierAdded, PullOrigin
from bot.engine.snapshot import PullRequestSnapshot
from bot.sources.gitpulls import HistoryWalk, find_merged
from bot.sources.gitrepo import History
from bot.sources.gitrun import GitRepo, branch_name, open_repository, resolve_commit

#: How far past the window's start the walk goes on before it stops: first-parent commit
#: times are not always in order (a clock off, a merge queue), so one older commit does not end it.
_SLACK = 7 * 86400


def earlier_added(
    repo: str | Path | GitRepo, pulls: Sequence[PullRequestSnapshot], *, window_days: float = WINDOW_DAYS, ref: str = "HEAD"
) -> tuple[dict[int, tuple[EarlierAdded, ...]], dict[int, PullOrigin]]:
    """``({number: earlier, newest first}, {earlier number: PullOrigin})`` for ``pulls``
    (merged pull requests with ``merged_at``): for each, the pull requests merged on
    ``ref``'s first-parent history less than ``window_days`` days before it that added some
    of the lines it adds. Pull requests without a merge time or without lines that count
    get none. Raises :class:`bot.sources.gitrun.GitRepositoryError` when git fails."""
    where = repo if isinstance(repo, GitRepo) else open_repository(repo)
    moments = {}
    mine = {}
    for s in pulls:
        moment = utc_moment(s.merged_at)
        lines = added_lines(s.files)
        if moment is not None and lines:
            moments[s.number] = moment.timestamp()
            mine[s.number] = lines
    if not mine:
        return {}, {}
    start, end = min(moments.values()) - window_days * 86400, max(moments.values())
    merged = []
    for found in find_merged(where, resolve_commit(where, ref), HistoryWalk(branch_name(where, ref))):
        committed = found.commit.committed
        if committed < start - _SLACK:
            break
        if start <= committed < end:
            merged.append(found)
    history = History(where, merged, "local/clone", False, branch_name(where, ref), {})
    out: dict[int, list[EarlierAdded]] = {n: [] for n in mine}
    origins: dict[int, PullOrigin] = {}
    for found, earlier in zip(merged, history.snapshots(str(where.path))):
        theirs = added_lines(earlier.files)
        if not theirs:
            continue
        committed = found.commit.committed
        for number, lines in mine.items():
            if number == found.number or not moments[number] - window_days * 86400 <= committed < moments[number]:
                continue
            both = shared(found.number, lines, theirs)
            if both is not None:
                out[number].append(both)  # newest first: the walk's order
                origins[found.number] = PullOrigin(found.number, found.commit.sha, committed, earlier.author or found.commit.author, found.title)
    return {n: tuple(v) for n, v in out.items() if v}, origins
