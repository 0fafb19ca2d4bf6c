"""Building many guides at once on every core: ``prguide history`` over hundreds of pull requests.

The engine is pure and CPU-bound, one guide after another in one process: a long history
waited on one core while the others idled. :func:`build_guides` builds the first guide in
this process (it loads the message catalogues and compiles the rules' patterns, which the
workers then inherit), forks worker processes that inherit the rules, sends them the other
snapshots as they come (from git's diffs streaming in: the workers build while git diffs
the next pull requests) and gathers the guides back in order. A guide is the same
whichever process builds it: the engine reads nothing but its arguments.

Where ``fork`` is not available (Windows, macOS' default), or with one core or a handful
of pull requests, the guides are built here, one after another.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import multiprocessing
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from bot.engine.build import Guide, build_guide, follow_up_of
from bot.engine.history.follows import describe as describe_follow
from bot.engine.snapshot import PullRequestSnapshot

#: Fewer pull requests than this are built in this process: starting workers costs more
#: (forking, and each guide pickled both ways: 10 verl pull requests took 1.07 s of CPU in
#: one process, 1.14 s with two workers; a guide is about 5 ms of building).
MIN_PARALLEL = 24
#: Guides a worker builds per round trip (fewer pickles), at most.
CHUNK = 8

# What the forked workers read: the rules, the language, the repository's merged history and
# the blame facts by pull request, set just before they start, inherited by fork.
_WORK: tuple[Any, str, Any, Mapping[int, Any], bool] | None = None


def available_cores() -> int:
    """The cores this process may run on (its CPU affinity), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def build_guides(
    snapshots: Iterable[PullRequestSnapshot],
    rules: Any,
    *,
    lang: str = "en",
    jobs: int | None = None,
    total: int | None = None,
    progress: Callable[[int, int], None] | None = None,
    history: Any = None,
    blames: Mapping[int, Any] | None = None,
    languages: bool = False,
) -> list[Guide]:
    """``build_guide(snapshot, rules, lang=lang, history=history, blame=blames.get(number))``
    of every snapshot, in order, on up to ``jobs`` processes.

    ``snapshots``: a sequence, or an iterator of ``total`` snapshots (read as the workers
    go; one that starts processes of its own must start them after the first snapshot, see
    :meth:`bot.sources.gitrepo.History.bundles`). ``jobs``: processes building guides
    (default :func:`available_cores`). ``progress(done, total)`` is called as guides are
    done. ``history``/``blames`` are :func:`build_guide`'s ``history`` and, by pull request
    number, its ``blame``. ``languages``: the guides built by workers bring their other
    languages back (for the tag view to store), else none. The guides built by workers come back without ``classification`` and ``focus``
    (what ``/prguide why`` reads, and the rules' objects it holds, which are not worth
    copying back); their ``data``, ``markdown``, labels and label specs are the engine's.
    Raises what :func:`build_guide` raises (``ValueError`` for an unknown language) and
    what reading ``snapshots`` raises.
    """
    global _WORK
    blames = blames or {}
    if total is None:
        snapshots = list(snapshots)
        total = len(snapshots)
    jobs = available_cores() if jobs is None else max(1, jobs)
    guides: list[Guide] = []

    def done(guide: Guide) -> None:
        guides.append(guide)
        if progress is not None:
            progress(len(guides), total)

    feed = iter(snapshots)
    parallel = jobs > 1 and total >= MIN_PARALLEL and "fork" in multiprocessing.get_all_start_methods()
    if not parallel:
        for snapshot in feed:
            done(build_guide(snapshot, rules, lang=lang, history=history, blame=blames.get(snapshot.number)))
        return guides
    for snapshot in itertools.islice(feed, 1):
        done(build_guide(snapshot, rules, lang=lang, history=history, blame=blames.get(snapshot.number)))
    _WORK = (rules, lang, history, blames, languages)
    try:
        context = multiprocessing.get_context("fork")
        chunk = max(1, min(CHUNK, (total - 1) // (jobs * 4)))
        with context.Pool(min(jobs, total - 1)) as pool:
            for guide in pool.imap(_build_one, feed, chunksize=chunk):
                done(guide)
    finally:
        _WORK = None
    return guides


def with_follow_ups(
    snapshots: Sequence[PullRequestSnapshot],
    guides: Sequence[Guide],
    rules: Any,
    *,
    lang: str = "en",
    history: Any = None,
    blames: Mapping[int, Any] | None = None,
) -> list[Guide]:
    """``guides`` (of ``snapshots``, in the same order) with "Follows #N" from the definitions
    both changed, where a clone's ``history`` (:class:`bot.engine.history.coupling.History`)
    knows no definitions: offline they are known only once each guide is built (its
    ``change.definitions``). The history is completed with them and the few guides whose
    follow-up it changes are built again, in this process (``blames`` as for
    :func:`build_guides`); the others are returned as they are. Without a history, ``guides``.
    """
    if history is None or not guides:
        return list(guides)
    known = {g.number: g.change.definitions for g in guides if g.change is not None and g.change.definitions}
    if not known:
        return list(guides)
    fuller = dataclasses.replace(history, changes=tuple(
        dataclasses.replace(c, definitions=known[c.number]) if c.number in known and not c.definitions else c
        for c in history.changes
    ))  # fmt: skip
    blames = blames or {}
    out = []
    for snapshot, guide in zip(snapshots, guides):
        data = guide.data
        linked = ((data.get("history") or {}).get("fixes_code_from"), data.get("reverted"))
        definitions = guide.change.definitions if guide.change is not None else ()
        link = follow_up_of(snapshot, definitions, fuller, linked)
        if (describe_follow(link) if link is not None else None) != data.get("follows"):
            guide = build_guide(snapshot, rules, lang=lang, history=fuller, blame=blames.get(snapshot.number))
        out.append(guide)
    return out


def _build_one(snapshot: PullRequestSnapshot) -> Guide:
    """In a worker: the guide of ``snapshot`` with the inherited rules, light to send back."""
    assert _WORK is not None, "build_guides sets the work before forking"
    rules, lang, history, blames, languages = _WORK
    guide = build_guide(snapshot, rules, lang=lang, history=history, blame=blames.get(snapshot.number))
    # The other languages are written lazily, by a closure a pipe cannot carry: written
    # here when they will be stored, else left out.
    other = functools.partial(dict, guide.languages) if languages else None
    return dataclasses.replace(guide, classification=None, focus=(), other_languages=other)
