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


#: A replica on a machine whose clock is half an hour fast (``time.time`` shifted before prguide is
#: imported, as ``tests/test_replicas_pg.py`` runs one), taking one write token of installation 7.
FAST_REPLICA = """
import sys, time
wall = time.time
time.time = lambda: wall() + 1800
from bot.app import pg
from bot.app.shared_state import PgSharedState
db = pg.connect(sys.argv[1], schema=sys.argv[2], min_size=1, max_size=1)
print(PgSharedState(db).reserve_write(7))
db.close()
"""


def test_a_replica_whose_clock_is_fast_takes_write_tokens_on_the_databases_clock(pg_schema, pg_database):
    import subprocess
    import sys

    right = PgSharedState(pg_database)
    waits = [right.reserve_write(7) for _ in range(108)]  # the minute's 8 and the hour's 100, and more
    assert waits[-1] > 60
    url, schema = pg_schema
    fast = subprocess.run([sys.executable, "-c", FAST_REPLICA, url, schema], capture_output=True, text=True,
                          timeout=60, check=True)  # fmt: skip
    # Its clock says half an hour went by: that refills no bucket, for it or for the others.
    assert float(fast.stdout) > 0, "the fast replica wrote at once, past the installation's budget"
    assert right.reserve_write(7) > waits[-1]


# ----- rate-limit budgets (both backends keep them in the database) ----------------


@pytest.fixture(params=["sqlite", "postgresql"])
def make_limits(request, tmp_path):
    """Make a rate-limit store; each call is another process on the same database."""
    from bot.app.shared_state import PgRateLimits, SqliteRateLimits

    made = []

    def make():
        if request.param == "sqlite":
            store = SqliteRateLimits.open(tmp_path / "prguide.db")
        else:
            store = PgRateLimits(request.getfixturevalue("pg_database"))
        made.append(store)
        return store

    yield make
    for store in made:
        if hasattr(store, "close"):
            store.close()


def test_replicas_share_an_installations_budget_and_merge_what_they_saw(make_limits):
    from bot.app.ratelimit import Budget

    one, two = make_limits(), make_limits()
    assert one.get(5) is None
    one.record(5, Budget(5000, 4000, 2000.0))
    two.record(5, Budget(5000, 4200, 2000.0))  # an answer sent earlier, read later: less was spent then
    assert one.get(5) == Budget(5000, 4000, 2000.0)
    two.record(5, Budget(5000, 4999, 5600.0))  # a new window
    one.record(5, Budget(5000, 10, 2000.0))  # the old window's last word changes nothing
    one.record(5, Budget(blocked_until=7000.0))  # GitHub refused: nothing before then
    assert two.get(5) == Budget(5000, 4999, 5600.0, 7000.0)
    assert two.get(6) is None  # another installation's is its own


def test_backfill_slots_are_booked_on_one_schedule_per_installation_whichever_replica_books(make_limits):
    one, two = make_limits(), make_limits()
    assert one.book(5, 100, 2.7, not_before=0.0, now=1000.0) == 1000.0
    # Another run (another replica) of the same installation starts after the first one's slots ...
    assert two.book(5, 10, 2.7, not_before=0.0, now=1001.0) == pytest.approx(1270.0)
    # ... another installation at once; a booking for after a reset starts then.
    assert one.book(6, 1, 2.7, not_before=0.0, now=1001.0) == 1001.0
    assert two.book(5, 1, 2.7, not_before=9000.0, now=1002.0) == 9000.0
    assert one.get(5).paced_until == pytest.approx(9002.7)


def test_replicas_booking_at_once_never_share_a_slot(pg_database):
    from bot.app.shared_state import PgRateLimits

    stores = [PgRateLimits(pg_database) for _ in range(4)]
    starts: list[float] = []

    def replica(store: PgRateLimits) -> None:
        for _ in range(10):
            starts.append(store.book(5, 1, 1.0, not_before=0.0, now=1000.0))

    threads = [threading.Thread(target=replica, args=(s,)) for s in stores]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(starts) == [1000.0 + n for n in range(40)]


def test_a_budget_says_how_long_to_wait_and_what_an_answer_tells():
    from bot.app.ratelimit import Budget, merge, read_budget

    headers = {"x-ratelimit-limit": "5000", "x-ratelimit-remaining": "900", "x-ratelimit-reset": "1600",
               "x-ratelimit-resource": "core"}  # fmt: skip
    budget = read_budget(headers, now=1000.0)
    assert budget == Budget(5000, 900, 1600.0)
    assert budget.wait(1000.0) == 0.0  # a live job goes
    assert budget.wait(1000.0, reserve=0.2) == 601.0  # a backfill leaves the last fifth: until the reset
    assert budget.wait(1700.0, reserve=0.2) == 0.0  # a new window
    assert read_budget({**headers, "x-ratelimit-resource": "search"}, now=1000.0) is None  # another limit
    assert read_budget({}, now=1000.0) is None
    spent = read_budget({**headers, "x-ratelimit-remaining": "0"}, now=1000.0, refused=601.0)
    assert spent.wait(1000.0) == 601.0 and spent.blocked_until == 1601.0
    assert merge(budget, spent).remaining == 0
    # GraphQL's own limit ran out: the REST budget is not spent; a secondary limit is shared.
    graphql = {**headers, "x-ratelimit-remaining": "0", "x-ratelimit-resource": "graphql"}
    assert read_budget(graphql, now=1000.0, refused=601.0) is None
    secondary = read_budget({"x-ratelimit-resource": "graphql", "retry-after": "60"}, now=1000.0, refused=60.0)
    assert secondary.blocked_until == 1060.0


def test_no_answer_holds_an_installation_longer_than_githubs_longest_window():
    from bot.app.github import RetryPolicy
    from bot.app.ratelimit import MAX_WINDOW_S, RESET_SLACK, rate_limit_delay, read_budget

    longest = MAX_WINDOW_S + RESET_SLACK
    spent = {"x-ratelimit-limit": "5000", "x-ratelimit-remaining": "0", "x-ratelimit-reset": "1000000000000"}
    assert rate_limit_delay(403, spent, b"{}", now=1000.0, policy=RetryPolicy()) == longest  # a reset in milliseconds
    asked = {"retry-after": "100000000"}  # a finite but absurd retry-after
    assert rate_limit_delay(429, asked, b"{}", now=1000.0, policy=RetryPolicy()) == longest
    budget = read_budget(spent, now=1000.0, refused=1e9)
    assert budget.reset == 1000.0 + MAX_WINDOW_S and budget.blocked_until == 1000.0 + longest


def test_a_bogus_window_stored_by_an_older_prguide_is_forgotten(make_limits):
    import time

    from bot.app.ratelimit import Budget

    store = make_limits()
    now = time.time()
    # Kept before answers were bounded: a reset in milliseconds, a wait of years.
    store.record(5, Budget(5000, 0, now * 1000, blocked_until=now + 1e9))
    assert store.get(5) == Budget()
    store.record(5, Budget(5000, 4999, now + 600))  # GitHub's real window is taken in again
    assert store.get(5) == Budget(5000, 4999, now + 600)


def test_a_replica_whose_clock_is_off_shares_waits_and_slots_on_the_databases_clock(pg_database):
    import time

    from bot.app.ratelimit import Budget
    from bot.app.shared_state import PgRateLimits

    ahead = PgRateLimits(pg_database, clock=lambda: time.time() + 60)  # its clock a minute fast
    right = PgRateLimits(pg_database)
    # GitHub refused the replica ahead: nothing for 10 s, by its clock. The others wait 10 s, not 70.
    ahead.record(5, Budget(blocked_until=ahead.clock() + 10))
    assert right.get(5).blocked_until - time.time() == pytest.approx(10, abs=1)
    assert ahead.get(5).blocked_until - ahead.clock() == pytest.approx(10, abs=1)
    # Its backfill books 10 slots 2.7 s apart from its now; another replica's next slot follows them.
    assert ahead.book(6, 10, 2.7, not_before=0.0, now=ahead.clock()) == pytest.approx(ahead.clock(), abs=1)
    assert right.book(6, 1, 2.7, not_before=0.0, now=time.time()) - time.time() == pytest.approx(27, abs=1)
    assert ahead.get(6).paced_until - ahead.clock() == pytest.approx(29.7, abs=1)


async def test_cancelled_work_frees_the_installations_booked_slots_on_every_replica(make_limits):
    import time

    from bot.app.ratelimit import RateLimits

    one, two = RateLimits(make_limits()), RateLimits(make_limits())
    await one.book(5, 100, 2.7)  # a backfill's 100 pull requests
    assert (await two.budget(5, fresh=True)).paced_until - time.time() == pytest.approx(270, abs=2)
    await one.unbook(5)  # the installation was suspended: its backfill cancelled
    # An answer the other replica takes in writes its view back, but not the slots it remembers.
    await two.observe(5, {"x-ratelimit-limit": "5000", "x-ratelimit-remaining": "100", "x-ratelimit-reset": "9999999999"})
    assert (await two.budget(5, fresh=True)).paced_until == 0.0
    assert await two.book(5, 1, 2.7) - time.time() == pytest.approx(0, abs=2)  # the next backfill starts at once


@pytest.mark.parametrize("backend", ["memory", "sqlite", "postgresql"])
async def test_a_replica_whose_clock_is_behind_githubs_waits_until_githubs_reset(backend, request, tmp_path):
    """GitHub's reset is on GitHub's clock: a replica 15 minutes slow, whatever store the budget
    lives in, waits until the reset as GitHub's ``Date`` places it on its own clock (not 15
    minutes longer), including a replica that reads the spent window from the store."""
    import email.utils
    import time

    from bot.app.ratelimit import MemoryRateLimits, RateLimits
    from bot.app.shared_state import PgRateLimits, SqliteRateLimits

    def slow() -> float:
        return time.time() - 900.0

    def make():
        if backend == "sqlite":
            return SqliteRateLimits.open(tmp_path / "prguide.db", clock=slow)
        return PgRateLimits(request.getfixturevalue("pg_database"), clock=slow)

    # Two processes on one store (one store object in memory, which several may share).
    stores = [MemoryRateLimits(clock=slow)] * 2 if backend == "memory" else [make(), make()]
    github_now = time.time()
    date = email.utils.formatdate(github_now, usegmt=True)
    spent = {"x-ratelimit-limit": "5000", "x-ratelimit-remaining": "0", "x-ratelimit-reset": str(int(github_now) + 60),
             "date": date}  # fmt: skip
    try:
        first, second = RateLimits(stores[0], clock=slow), RateLimits(stores[1], clock=slow)
        await first.observe(9, spent)
        assert 55 <= await first.wait(9) <= 62
        await second.observe(10, {"date": date})  # an answer about anything: GitHub's time
        assert 55 <= await second.wait(9) <= 62
        budget = await second.budget(9)
        assert budget.reset - slow() == pytest.approx(60, abs=2)  # handed out on the replica's clock
    finally:
        for store in {id(s): s for s in stores}.values():
            if hasattr(store, "close"):
                store.close()
