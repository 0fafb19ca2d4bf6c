"""The engine pauses the cyclic garbage collector while it builds a guide, and may:
it makes no reference cycles, and the collector's state is always given back."""

from __future__ import annotations

import gc
import threading
import weakref

import pytest

from bot.engine.build import build_guide, collector_paused
from bot.engine.rules import load_rules
from bot.engine.snapshot import PullRequestSnapshot

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
        gc.set_debug(gc.DEBUG_SAVEALL)
        gc.collect()
        # Servers of earlier tests may drop a TTLCache (its links form cycles) meanwhile, on
        # their own threads; the engine never uses cachetools (test_the_engine_uses_no_ttl_cache).
        made = [o for o in gc.garbage if not type(o).__module__.startswith("cachetools")]
        assert made == [], "the engine made reference cycles: pausing the collector would leak until it resumes"
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        if was_enabled:
            gc.enable()


def test_the_engine_uses_no_ttl_cache():
    import pathlib

    engine = pathlib.Path(__file__).resolve().parents[1] / "bot" / "engine"
    assert not [p for p in engine.rglob("*.py") if "cachetools" in p.read_text(encoding="utf-8")]


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


def test_overlapping_pauses_never_keep_the_collector_off_past_the_first():
    inside, release = threading.Event(), threading.Event()

    def hold():
        with collector_paused():
            inside.set()
            release.wait(timeout=30)

    with collector_paused():  # the first block pauses the collector...
        thread = threading.Thread(target=hold)
        thread.start()
        assert inside.wait(timeout=30)
        assert not gc.isenabled()
    # ...and turns it back on when it ends, although the other block is still open:
    # overlapping builds in worker threads must not keep it off for good.
    assert gc.isenabled()
    release.set()
    thread.join()
    assert gc.isenabled()


def test_cycles_made_during_chained_builds_are_collected_when_each_ends():
    """Builds that overlap one after another in worker threads: each time the pausing
    block ends, the collection it held back runs, so garbage cycles never pile up."""

    class Node:
        def __init__(self):
            self.me = self

    a_inside, b_inside, a_may_end, b_may_end = (threading.Event() for _ in range(4))

    def build_a():
        with collector_paused():
            a_inside.set()
            a_may_end.wait(timeout=30)

    def build_b():
        with collector_paused():
            b_inside.set()
            b_may_end.wait(timeout=30)

    a = threading.Thread(target=build_a)
    a.start()
    assert a_inside.wait(timeout=30)
    # Garbage cycles made by other code while the collector is paused; watched through weak
    # references (scanning gc.get_objects() for them took seconds late in a long test run).
    made = [weakref.ref(Node()) for _ in range(20_000)]
    assert sum(ref() is not None for ref in made) == 20_000  # kept alive by their cycles alone
    b = threading.Thread(target=build_b)
    b.start()
    assert b_inside.wait(timeout=30)
    a_may_end.set()
    a.join()  # A ends while B still builds
    try:
        assert gc.isenabled()
        assert sum(ref() is not None for ref in made) == 0
    finally:
        b_may_end.set()
        b.join()


def test_an_error_inside_still_resumes_the_collector():
    with pytest.raises(RuntimeError), collector_paused():
        raise RuntimeError("boom")
    assert gc.isenabled()
