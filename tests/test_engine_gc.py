"""The engine pauses the cyclic garbage collector while it builds a guide, and may:
it makes no reference cycles, and the collector's state is always given back."""

from __future__ import annotations

import gc
import threading

import pytest

from bot.engine import build_guide, collector_paused
from bot.rules import load_rules
from bot.snapshot import PullRequestSnapshot

pytestmark = pytest.mark.corpus


@pytest.fixture(scope="module")
def rules():
    return load_rules()


def snapshot(bundle: dict) -> PullRequestSnapshot:
    return PullRequestSnapshot.from_github(bundle["pull"], bundle["files"], bundle["reviews"], bundle["review_comments"])


def test_building_guides_leaves_no_cyclic_garbage(rules, corpus_dir, load_bundle_json):
    numbers = [int(p.stem) for p in sorted(corpus_dir.glob("*.json"))]
    snapshots = [snapshot(load_bundle_json(n)) for n in numbers]
    gc.collect()
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        for s in snapshots:
            build_guide(s, rules, lang="zh" if s.number % 2 else "en")
        assert gc.collect() == 0, "the engine made reference cycles: pausing the collector would leak until it resumes"
    finally:
        if was_enabled:
            gc.enable()


def test_the_collector_comes_back_as_it_was(rules, load_bundle_json):
    s = snapshot(load_bundle_json(7491))
    assert gc.isenabled()
    build_guide(s, rules)
    assert gc.isenabled()
    gc.disable()
    try:
        build_guide(s, rules)
        assert not gc.isenabled()  # a caller that turned it off keeps it off
    finally:
        gc.enable()


def test_overlapping_pauses_from_threads_resume_once_the_last_ends():
    inside, release = threading.Event(), threading.Event()

    def hold():
        with collector_paused():
            inside.set()
            release.wait(timeout=30)

    thread = threading.Thread(target=hold)
    thread.start()
    assert inside.wait(timeout=30)
    with collector_paused():
        assert not gc.isenabled()
    assert not gc.isenabled()  # the other thread's block is still open
    release.set()
    thread.join()
    assert gc.isenabled()


def test_an_error_inside_still_resumes_the_collector():
    with pytest.raises(RuntimeError), collector_paused():
        raise RuntimeError("boom")
    assert gc.isenabled()
