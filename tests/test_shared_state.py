"""State counted once for all replicas: the write budget and the reply memory, on both backends."""

from __future__ import annotations

import bisect
import threading

import pytest

from bot.app.shared_state import WRITE_BUCKETS, LocalState, PgSharedState


class Clock:
    def __init__(self, now: float = 1_750_000_000.0):
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture(params=["local", "postgresql"])
def make_state(request):
    def make(clock):
        if request.param == "local":
            return LocalState(clock=clock)
        return PgSharedState(request.getfixturevalue("pg_database"), clock=clock)

    return make


def test_the_write_budget_lets_a_burst_through_then_paces_to_80_a_minute(make_state):
    clock = Clock()
    state = make_state(clock)
    waits = [state.reserve_write(7) for _ in range(10)]
    assert waits[:8] == [0.0] * 8  # the minute bucket's burst
    assert waits[8] == pytest.approx(60 / 72) and waits[9] == pytest.approx(2 * 60 / 72)
    assert state.reserve_write(8) == 0.0  # another installation has its own budget
    clock.now += 60
    assert state.reserve_write(7) == 0.0  # refilled


def test_the_hour_bucket_caps_500_an_hour(make_state):
    # A writer that waits as long as each reservation says, for an hour: about 500 calls
    # (every call is a write), where asking 80 times a minute regardless took 4,800.
    clock = Clock()
    state = make_state(clock)
    start = clock.now
    writes: list[float] = []
    for _ in range(600):  # bounded: a budget that never says wait must fail here, not hang
        at = clock.now + state.reserve_write(1)
        if at >= start + 3600:
            break
        clock.now = at
        writes.append(at - start)
    else:
        pytest.fail("more than 600 writes in the hour")
    assert 495 <= len(writes) <= 500  # 100 burst + 400 refilled, and the writer got (nearly) all of them
    assert writes[:8] == [0.0] * 8  # the minute bucket's burst
    # GitHub's secondary limit: never more than 80 content writes in a minute.
    assert max(bisect.bisect_right(writes, t + 60) - i for i, t in enumerate(writes)) <= 80


def test_a_refusal_is_answered_once_per_ttl(make_state):
    clock = Clock()
    state = make_state(clock)
    assert state.remember_once("refusal:o/r#1#alice", 600) is True
    assert state.remember_once("refusal:o/r#1#alice", 600) is False
    assert state.remember_once("refusal:o/r#2#alice", 600) is True
    clock.now += 601
    assert state.remember_once("refusal:o/r#1#alice", 600) is True


def test_replicas_share_one_budget_and_one_memory(pg_schema):
    from bot.app import pg

    url, schema = pg_schema
    pg.load_components()
    dbs = [pg.connect(url, schema=schema, max_size=4, migrate_components=None) for _ in range(3)]
    try:
        clock = Clock()
        states = [PgSharedState(db, clock=clock) for db in dbs]
        free: list[float] = []
        told: list[bool] = []

        def replica(state: PgSharedState) -> None:
            for _ in range(10):
                free.append(state.reserve_write(42))
            told.append(state.remember_once("refusal:o/r#1#bob", 600))

        threads = [threading.Thread(target=replica, args=(s,)) for s in states]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert sum(1 for w in free if w == 0.0) == WRITE_BUCKETS[0][1]  # 8 free writes for all three, not 24
        assert sorted(told) == [False, False, True]
    finally:
        for db in dbs:
            db.close()
