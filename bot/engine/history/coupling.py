"""Change coupling: the files that usually change together with the ones a pull request changed.

Zimmermann, Weißgerber, Diehl and Zeller, "Mining version histories to guide software
changes" (ICSE 2004): when file ``f`` changed, and in most of ``f``'s recent changes file
``p`` changed too, a change of ``f`` without ``p`` is worth a second look. Here a "change"
is one merged pull request (its files as GitHub lists them); a rule's *support* is how many
of ``f``'s last changes were counted, its *confidence* the share of those that also
changed ``p``.

Whether such a line helps depends on the repository, so it is measured on the
repository's own history before it is shown (:func:`calibrate`): the last
:data:`CALIBRATION_PRS` merged pull requests are replayed, each predicted from the ones
before it only, and a named partner counts as right when it was changed soon after
(:class:`Horizon`: within the next five merged pull requests, or by the author's own next
one within 14 days). The loosest thresholds of :data:`GRID` whose lines were right at
least :data:`TARGET_PRECISION` of the time (over at least :data:`MIN_LINES` lines) are
used; when none is, the guide has no such line. ``bench/change_coupling.py`` prints the
whole table for a clone.

Pure: the caller gives the history (earlier merged pull requests with their changed
paths, oldest first); nothing else is read.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta

from bot.engine.analysis.kinds import kind_of


@dataclass(frozen=True, slots=True)
class MergedChange:
    """One earlier merged pull request, as the history the coupling is counted from.

    ``paths`` are the files it changed (GitHub's ``filename`` of each listed file: added,
    modified, renamed to, removed); ``gone`` the paths it left without a file: removed
    files and the old names of renamed ones. ``merged_at`` is ISO-8601 text (``""`` when
    unknown) and ``author`` the author's login or name (``""`` when unknown); both are
    used only to tell what was merged before a pull request and who followed up.
    ``definitions`` are the definitions it changed, ``path::qualified.name``
    (:func:`bot.engine.history.follows.changed_definitions`; empty when the source does
    not know them), for telling which earlier pull request a later one follows up.
    """

    number: int
    paths: tuple[str, ...]
    gone: tuple[str, ...] = ()
    merged_at: str = ""
    author: str = ""
    definitions: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Thresholds:
    """When a partner is named.

    ``min_changes``: the file must have changed in at least this many earlier pull requests
    (the rule's support); ``window``: only its last ``window`` changes are counted, so an
    old habit fades; ``min_share``: the partner changed in at least this share of them
    (confidence, 0-1); ``max_files``: pull requests with more files are left out of the
    counts (mass reformatting, renames and version bumps pair every file with every other);
    ``skip_kinds``: file kinds (:data:`bot.engine.analysis.model.KINDS`) never named as a
    partner (tests and docs: measured less often right than source files).
    """

    min_changes: int = 5
    window: int = 10
    min_share: float = 0.6
    max_files: int = 50
    skip_kinds: tuple[str, ...] = ("test", "docs")


#: The loosest thresholds of :data:`GRID`: what a replay computes once and filters.
LOOSEST = Thresholds(min_changes=3, min_share=0.5)
#: The thresholds :func:`calibrate` tries (support x confidence; window, size cap and kinds as :class:`Thresholds`).
GRID = tuple(replace(LOOSEST, min_changes=s, min_share=c) for s in (3, 5, 8) for c in (0.5, 0.6, 0.7, 0.8, 0.9))
#: The share of shown lines that must have been right for the line to be shown.
TARGET_PRECISION = 0.6
#: A precision measured over fewer lines than this says too little to show anything.
MIN_LINES = 20
#: How many of the newest merged pull requests (whose future is known) a calibration replays.
CALIBRATION_PRS = 200
#: At most this many partner lines per guide.
MAX_LINES = 2


@dataclass(frozen=True, slots=True)
class Partner:
    """``partner`` changed in ``together`` of ``file``'s last ``changes`` changes (newest
    first in ``numbers``: the pull requests that changed both)."""

    file: str
    partner: str
    together: int
    changes: int
    numbers: tuple[int, ...] = ()

    @property
    def share(self) -> float:
        """``together / changes`` (0-1)."""
        return self.together / self.changes if self.changes else 0.0


def usual_partners(
    changed: Iterable[str],
    history: Sequence[MergedChange],
    *,
    focal: Iterable[str] | None = None,
    thresholds: Thresholds = LOOSEST,
    limit: int = MAX_LINES,
    own: int | None = None,
) -> tuple[Partner, ...]:
    """The files that usually change with this pull request's files but were not touched by it.

    ``changed``: every path the pull request touched (new and old names); ``focal``: the
    files whose partners are looked for (default ``changed``; a caller leaves out files
    the pull request removed). ``history``: earlier merged pull requests, oldest first
    (only those merged before this one: see :func:`earlier`); ``own`` is this pull
    request's number, left out of the history if present. A pull request with more than
    ``thresholds.max_files`` files gets none (its files change together by construction).

    A partner is left out when the history's newest word on it is that it was removed or
    renamed (nobody can touch it any more). Each partner is named once, for the file it
    is most tied to; the result is ordered by share, then count, then path, and holds at
    most ``limit`` partners. Never raises on odd paths.
    """
    return _pick(_pairs(changed, history, len(history), focal, thresholds, own), thresholds, limit)


def _pairs(
    changed: Iterable[str],
    history: Sequence[MergedChange],
    end: int,
    focal: Iterable[str] | None,
    thresholds: Thresholds,
    own: int | None = None,
) -> list[Partner]:
    """Every (file, partner) pair of ``history[:end]`` passing ``thresholds``, not yet ranked or deduplicated."""
    touched = {p for p in changed if p}
    if not touched or len(touched) > thresholds.max_files:
        return []
    wanted = [p for p in dict.fromkeys(focal if focal is not None else touched) if p]
    counted: dict[str, int] = dict.fromkeys(wanted, 0)
    together: dict[str, dict[str, list[int]]] = {f: {} for f in wanted}
    dead: dict[str, bool] = {}  # a path's newest fate in the history: True when removed or renamed away
    open_files = len(wanted)
    for index in range(end - 1, -1, -1):
        change = history[index]
        if own is not None and change.number == own:
            continue
        gone = change.gone
        for path in (*change.paths, *gone):
            if path not in dead:
                dead[path] = path in gone
        if len(change.paths) > thresholds.max_files:
            continue
        paths = set(change.paths)
        for f in wanted:
            if f not in paths or counted[f] >= thresholds.window:
                continue
            counted[f] += 1
            if counted[f] == thresholds.window:
                open_files -= 1
            counts = together[f]
            for p in paths:
                if p != f:
                    counts.setdefault(p, []).append(change.number)
        if open_files == 0:
            break
    found = []
    for f in wanted:
        n = counted[f]
        if n < thresholds.min_changes:
            continue
        for p, numbers in together[f].items():
            # A share a hair under the threshold by float rounding (7/10 vs 0.7) still counts.
            if p in touched or dead.get(p) or len(numbers) / n < thresholds.min_share - 1e-9:
                continue
            if thresholds.skip_kinds and kind_of(p) in thresholds.skip_kinds:
                continue
            found.append(Partner(f, p, len(numbers), n, tuple(numbers)))
    return found


class _PathIndex:
    """Where each path of a history appears, for a replay asking :func:`_pairs` of every
    point of it: :meth:`pairs` reads a file's last changes by bisection instead of walking
    back over every pull request (a file changed twice in three thousand pull requests
    made the walk read all three thousand)."""

    def __init__(self, history: Sequence[MergedChange], max_files: int) -> None:
        self.history = history
        #: path -> indices (ascending) of the changes of at most ``max_files`` paths that changed it
        self.counted: dict[str, list[int]] = {}
        #: path -> indices (ascending) of every change that changed or removed it
        self.seen: dict[str, list[int]] = {}
        self.gone: list[frozenset[str]] = []
        for i, change in enumerate(history):
            small = len(change.paths) <= max_files
            for path in change.paths:
                if small:
                    self.counted.setdefault(path, []).append(i)
                self.seen.setdefault(path, []).append(i)
            for path in change.gone:
                seen = self.seen.setdefault(path, [])
                if not seen or seen[-1] != i:
                    seen.append(i)
            self.gone.append(frozenset(change.gone))

    def pairs(self, changed: Iterable[str], end: int, focal: Iterable[str], thresholds: Thresholds) -> list[Partner]:
        """What ``_pairs(changed, history, end, focal, thresholds)`` finds (``own`` none; the
        same ``max_files`` as the index), in another order (:func:`_pick` ranks them)."""
        touched = {p for p in changed if p}
        if not touched or len(touched) > thresholds.max_files:
            return []
        history = self.history
        found = []
        for f in dict.fromkeys(focal):
            if not f:
                continue
            changes = self.counted.get(f, ())
            hi = bisect_left(changes, end)
            lo = max(0, hi - thresholds.window)
            n = hi - lo
            if n < thresholds.min_changes:
                continue
            together: dict[str, list[int]] = {}
            for j in range(hi - 1, lo - 1, -1):
                change = history[changes[j]]
                for p in change.paths:
                    if p != f:
                        together.setdefault(p, []).append(change.number)
            for p, numbers in together.items():
                if p in touched or len(numbers) / n < thresholds.min_share - 1e-9 or self._dead(p, end):
                    continue
                if thresholds.skip_kinds and kind_of(p) in thresholds.skip_kinds:
                    continue
                found.append(Partner(f, p, len(numbers), n, tuple(numbers)))
        return found

    def _dead(self, path: str, end: int) -> bool:
        """Whether the newest change before ``end`` that names ``path`` removed or renamed it."""
        seen = self.seen[path]
        return path in self.gone[seen[bisect_left(seen, end) - 1]]


def _pick(pairs: Iterable[Partner], thresholds: Thresholds, limit: int) -> tuple[Partner, ...]:
    """The best ``limit`` partners of ``pairs`` passing ``thresholds``, each named once."""
    best: dict[str, Partner] = {}
    for found in pairs:
        if found.changes < thresholds.min_changes or found.share < thresholds.min_share - 1e-9:
            continue
        if found.partner not in best or _rank(found) < _rank(best[found.partner]):
            best[found.partner] = found
    return tuple(sorted(best.values(), key=_rank)[: max(0, limit)])


def _rank(p: Partner) -> tuple[float, int, str, str]:
    return (-p.share, -p.together, p.partner, p.file)


def earlier(history: Sequence[MergedChange], number: int, merged_at: str | None) -> list[MergedChange]:
    """The entries of ``history`` (oldest first) merged before pull request ``number``, merged
    at ``merged_at`` (ISO-8601): by time where both times are known; an entry without a
    time by its position, before ``number``'s own entry (or, when that is absent, before the
    first entry merged at or after ``merged_at``; all when that cannot be told).
    ``number``'s own entry is never kept."""
    key = utc_moment(merged_at)
    stop = next((i for i, c in enumerate(history) if c.number == number), None)
    if stop is None:
        stop = next((i for i, c in enumerate(history) if key is not None and (m := utc_moment(c.merged_at)) is not None and m >= key),
                    len(history))  # fmt: skip
    out = []
    for i, c in enumerate(history):
        if c.number == number:
            continue
        moment = utc_moment(c.merged_at) if key is not None else None
        if (moment < key) if moment is not None and key is not None else i < stop:
            out.append(c)
    return out


def utc_moment(text: str | None) -> datetime | None:
    """An ISO-8601 time in UTC (a time without an offset is UTC, as GitHub's are), or ``None``."""
    if not text:
        return None
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


# --- measuring: is a named partner changed soon after? ---------------------------------------


@dataclass(frozen=True, slots=True)
class Horizon:
    """What counts as "changed soon after" a pull request: in one of the next ``prs`` merged
    pull requests, or (``author``) in the author's own next merged pull request if it was
    merged within ``days`` days (a follow-up, however many others were merged meanwhile).

    Five pull requests is about a day and a half of a busy repository (verl merges about
    three a day): the work right after. A window of days alone grows with the pace of
    merging until busy files are "right" by chance (bench/change_coupling.py shows the
    base rates)."""

    prs: int = 5
    days: float = 14.0
    author: bool = True


def followed_up(history: Sequence[MergedChange], i: int, path: str, horizon: Horizon = Horizon()) -> bool:
    """Whether ``path`` changed soon after ``history[i]`` (see :class:`Horizon`)."""
    if any(path in c.paths for c in history[i + 1 : i + 1 + horizon.prs]):
        return True
    who = history[i].author
    if not horizon.author or not who:
        return False
    start = utc_moment(history[i].merged_at)
    for later in history[i + 1 :]:
        if later.author != who:
            continue
        when = utc_moment(later.merged_at)
        if start is not None and when is not None and when - start > timedelta(days=horizon.days):
            return False
        return path in later.paths
    return False


@dataclass(frozen=True, slots=True)
class Score:
    """One threshold's replay: ``named`` partner lines shown, ``right`` of them, ``guides``
    with at least one line, of ``replayed`` pull requests; ``base`` (when asked for) the mean
    share of replayed points after which the same partners changed soon anyway."""

    thresholds: Thresholds
    named: int = 0
    right: int = 0
    guides: int = 0
    replayed: int = 0
    base: float = 0.0

    @property
    def precision(self) -> float:
        """right / named (0 when nothing was named)."""
        return self.right / self.named if self.named else 0.0


def replay(
    history: Sequence[MergedChange],
    grid: Sequence[Thresholds] = GRID,
    *,
    last: int = CALIBRATION_PRS,
    horizon: Horizon = Horizon(),
    base_rate: bool = False,
) -> list[Score]:
    """Score each of ``grid`` on the last ``last`` pull requests of ``history`` (oldest first)
    whose future is known (all but the newest ``horizon.prs``), each predicted from the
    ones before it only, at most :data:`MAX_LINES` lines each. One walk per pull request
    serves every threshold (they must share ``window``, ``max_files`` and ``skip_kinds``
    with the loosest of them). ``base_rate`` also computes :attr:`Score.base` (slower).
    """
    if not grid:
        return []
    loosest = replace(grid[0], min_changes=min(t.min_changes for t in grid), min_share=min(t.min_share for t in grid))
    end = max(0, len(history) - horizon.prs)
    stretch = range(max(1, end - last), end)
    tallies = [[0, 0, 0, 0.0] for _ in grid]  # named, right, guides, base sum
    index = _PathIndex(history, loosest.max_files)
    for i in stretch:
        change = history[i]
        pairs = index.pairs((*change.paths, *change.gone), i, [p for p in change.paths if p not in change.gone], loosest)
        if not pairs:
            continue
        verdicts: dict[str, bool] = {}
        for tally, thresholds in zip(tallies, grid):
            shown = _pick(pairs, thresholds, MAX_LINES)
            if not shown:
                continue
            tally[2] += 1
            for p in shown:
                if p.partner not in verdicts:
                    verdicts[p.partner] = followed_up(history, i, p.partner, horizon)
                tally[0] += 1
                tally[1] += verdicts[p.partner]
                if base_rate:
                    tally[3] += sum(followed_up(history, j, p.partner, horizon) for j in stretch) / len(stretch)
    return [
        Score(t, named, right, guides, len(stretch), base / named if named else 0.0)
        for t, (named, right, guides, base) in zip(grid, tallies)
    ]


@dataclass(frozen=True, slots=True)
class History:
    """A repository's merged history, oldest first, and the thresholds its own replay chose
    (``None``: no threshold was right often enough, so the guide names no partner)."""

    changes: tuple[MergedChange, ...]
    thresholds: Thresholds | None
    #: The chosen thresholds' replay (or the best one's when none was chosen), to say why.
    score: Score | None = None


def calibrate(history: Sequence[MergedChange], *, target: float | None = None, min_lines: int | None = None) -> History:
    """Replay ``history`` (oldest first) and choose the thresholds the guide uses for it.

    Of :data:`GRID`, the thresholds whose lines were right at least ``target`` of the time
    (default :data:`TARGET_PRECISION`) over at least ``min_lines`` lines (default
    :data:`MIN_LINES`); of those, the one naming the most lines (the most
    help at that precision), then the more precise. Takes about a second per thousand
    merged pull requests of history on one core.
    """
    target = TARGET_PRECISION if target is None else target
    min_lines = MIN_LINES if min_lines is None else min_lines
    changes = tuple(history)
    scores = replay(changes, GRID)
    good = [s for s in scores if s.named >= min_lines and s.precision >= target - 1e-9]
    if good:
        best = max(good, key=lambda s: (s.named, s.precision))
        return History(changes, best.thresholds, best)
    # The best-measured of the rest says how far off the line is (enough lines first).
    measured = [s for s in scores if s.named]
    best = max(measured, key=lambda s: (s.named >= min_lines, s.precision, s.named)) if measured else None
    return History(changes, None, best)


def merged_change(number: int, files: Iterable[object], *, merged_at: str | None = "", author: str | None = "") -> MergedChange:
    """The history entry of a pull request from its files (objects with GitHub's file fields
    as attributes: ``filename``, ``status``, ``previous_filename``, as
    :class:`bot.engine.snapshot.ChangedFile` has them)."""
    paths: dict[str, None] = {}
    gone: dict[str, None] = {}
    for f in files:
        name = str(getattr(f, "filename", "") or "")
        if not name:
            continue
        paths[name] = None
        status = getattr(f, "status", "modified")
        previous = getattr(f, "previous_filename", None)
        if status == "removed":
            gone[name] = None
        elif status == "renamed" and previous:
            gone[str(previous)] = None
    return MergedChange(int(number), tuple(paths), tuple(gone), merged_at or "", author or "")
