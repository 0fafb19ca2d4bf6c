"""Building many guides at once on every core: ``prguide history`` over hundreds of pull requests.

The engine is pure and CPU-bound, one guide after another in one process: a long history
waited on one core while the others idled. :func:`build_guides` builds the first guide in
this process (it loads the message catalogues and compiles the rules' patterns, which the
workers then inherit), forks worker processes that inherit the snapshots and the rules
too (only indices travel to them), and gathers the guides back in order. A guide is the
same whichever process builds it: the engine reads nothing but its arguments.

Where ``fork`` is not available (Windows, macOS' default), or with one core or a handful
of pull requests, the guides are built here, one after another.
"""

from __future__ import annotations

import dataclasses
import multiprocessing
import os
from collections.abc import Callable, Sequence
from typing import Any

from bot.engine.build import Guide, build_guide
from bot.engine.snapshot import PullRequestSnapshot

#: Fewer pull requests than this are built in this process: starting workers costs more.
MIN_PARALLEL = 8
#: Guides a worker builds per round trip (fewer pickles), at most.
CHUNK = 8

# What the forked workers read: set just before they start, inherited by fork.
_WORK: tuple[Sequence[PullRequestSnapshot], Any, str] | None = None


def available_cores() -> int:
    """The cores this process may run on (its CPU affinity), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def build_guides(
    snapshots: Sequence[PullRequestSnapshot],
    rules: Any,
    *,
    lang: str = "en",
    jobs: int | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> list[Guide]:
    """``build_guide(snapshot, rules, lang=lang)`` of every snapshot, in order, on up to ``jobs`` processes.

    ``jobs``: processes building guides (default :func:`available_cores`). ``progress(done,
    total)`` is called as guides are done. The guides built by workers come back without
    ``classification`` and ``focus`` (what ``/prguide why`` reads, and the rules' objects
    it holds, which are not worth copying back); their ``data``, ``markdown``, labels and
    label specs are the engine's. Raises what :func:`build_guide` raises (``ValueError``
    for an unknown language).
    """
    global _WORK
    total = len(snapshots)
    jobs = available_cores() if jobs is None else max(1, jobs)
    guides: list[Guide] = []

    def done(guide: Guide) -> None:
        guides.append(guide)
        if progress is not None:
            progress(len(guides), total)

    parallel = jobs > 1 and total >= MIN_PARALLEL and "fork" in multiprocessing.get_all_start_methods()
    for snapshot in snapshots[: 1 if parallel else total]:
        done(build_guide(snapshot, rules, lang=lang))
    if not parallel:
        return guides
    _WORK = (snapshots, rules, lang)
    try:
        context = multiprocessing.get_context("fork")
        chunk = max(1, min(CHUNK, (total - 1) // (jobs * 4)))
        with context.Pool(min(jobs, total - 1)) as pool:
            for guide in pool.imap(_build_one, range(1, total), chunksize=chunk):
                done(guide)
    finally:
        _WORK = None
    return guides


def _build_one(index: int) -> Guide:
    """In a worker: the guide of snapshot ``index`` of the inherited work, light to send back."""
    assert _WORK is not None, "build_guides sets the work before forking"
    snapshots, rules, lang = _WORK
    guide = build_guide(snapshots[index], rules, lang=lang)
    return dataclasses.replace(guide, classification=None, focus=())
