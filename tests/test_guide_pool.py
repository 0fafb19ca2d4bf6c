"""Many guides built on every core: the same guides, in the same order, as one process builds them."""

from __future__ import annotations

import dataclasses
import os
import time

import pytest

from bot import guide_pool
from bot.engine.build import build_guide
from bot.engine.rules import load_rules
from bot.sources.bundle import iter_bundles
from bot.sources.gitrun import GitRepositoryError


@pytest.fixture
def snapshots(corpus_dir):
    return [snapshot for _, snapshot in iter_bundles(corpus_dir)][:24]


@pytest.fixture(scope="module")
def rules():
    return load_rules([], defaults=True)


def test_guides_built_by_worker_processes_are_the_engines_own(snapshots, rules, monkeypatch):
    pids = []

    def recording(snapshot, rules, **kwargs):
        guide = build_guide(snapshot, rules, **kwargs)
        return dataclasses.replace(guide, data={**guide.data, "_pid": os.getpid()})

    monkeypatch.setattr(guide_pool, "build_guide", recording)  # inherited by the forked workers
    done = []
    built = guide_pool.build_guides(snapshots, rules, lang="zh", jobs=3, progress=lambda n, total: done.append((n, total)))
    monkeypatch.undo()
    pids = {g.data["_pid"] for g in built}
    assert len(pids) > 1 and os.getpid() in pids  # the first here, the rest in workers
    assert done == [(n, len(snapshots)) for n in range(1, len(snapshots) + 1)]
    alone = [build_guide(s, rules, lang="zh") for s in snapshots]
    assert [g.number for g in built] == [s.number for s in snapshots]
    for mine, theirs in zip(alone, built, strict=True):
        assert ({k: v for k, v in theirs.data.items() if k != "_pid"}, theirs.markdown, theirs.labels, theirs.label_specs) == (
            mine.data, mine.markdown, mine.labels, mine.label_specs,
        )


def test_one_job_or_a_handful_of_pull_requests_build_here(snapshots, rules, monkeypatch):
    def no_pool(*args, **kwargs):
        raise AssertionError("no worker processes for this")

    monkeypatch.setattr(guide_pool.multiprocessing, "get_context", no_pool)
    assert len(guide_pool.build_guides(snapshots, rules, jobs=1)) == len(snapshots)
    assert len(guide_pool.build_guides(snapshots[: guide_pool.MIN_PARALLEL - 1], rules, jobs=4)) == guide_pool.MIN_PARALLEL - 1


def test_an_unknown_language_is_refused_before_any_worker_starts(snapshots, rules):
    with pytest.raises(ValueError, match="unknown language"):
        guide_pool.build_guides(snapshots, rules, lang="fr", jobs=2)


def test_workers_build_while_the_snapshots_still_come_in(snapshots, rules):
    """The snapshots of a history come from git as it diffs: the workers must not wait for the last."""
    done: list[int] = []

    def feed():
        yield from snapshots[:-1]
        deadline = time.monotonic() + 120
        while len(done) < 3 and time.monotonic() < deadline:  # the first here, then workers' guides
            time.sleep(0.01)
        assert len(done) >= 3, "no guide was built before the last snapshot was read"
        yield snapshots[-1]

    built = guide_pool.build_guides(feed(), rules, jobs=2, total=len(snapshots), progress=lambda n, total: done.append(n))
    assert [g.number for g in built] == [s.number for s in snapshots]


def test_an_error_reading_the_snapshots_is_raised_and_the_workers_stop(snapshots, rules):
    def feed():
        yield from snapshots[:10]
        raise GitRepositoryError("git diff-tree failed: boom")

    with pytest.raises(GitRepositoryError, match="boom"):
        guide_pool.build_guides(feed(), rules, jobs=2, total=len(snapshots))
