"""PostgreSQL mode: does a waiting database call stall the event loop, and what does ``next_due`` cost?

Two measurements against PostgreSQL (``--database-url``, default
``postgresql://127.0.0.1:5432/test``), each in a schema of its own, dropped afterwards:

* **event-loop stall**: a job queues a follow-up job (``JobContext.enqueue``) while the
  pool's only connection is held by another thread for ``--hold-ms`` (default 200),
  as when every pooled connection is busy or the database is slow. A ticker coroutine
  on the same loop records how late each 1 ms tick fires; the longest delay is how long
  the loop stood still. prguide's way (``run_store``: a worker thread) is compared with
  calling the store on the loop, as the enqueue, the scheduler, the guide save and the
  admin routes used to. The same enqueue on SQLite, against the store called directly,
  shows what the SQLite path costs now (it is still
  called on the loop).
* **next_due**: ``PgJobStore.next_due()`` on queues of several shapes, next to a
  ``SELECT 1`` through the same pool (the reference, measured in the same run) and the
  query it replaced (``min(not_before)`` over every runnable job).

    python bench/pg_loop.py [--quick] [--rounds N] [--hold-ms MS] [--database-url URL]
"""

from __future__ import annotations

import argparse
import asyncio
import math
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from common import MIN_ROUNDS, header, median, table  # noqa: E402

from bot.app import pg  # noqa: E402
from bot.app.jobstore import JobStore, QueuedDelivery  # noqa: E402
from bot.app.metrics import create_metrics  # noqa: E402
from bot.app.pgjobs import _RUNNABLE, PgJobStore  # noqa: E402
from bot.app.routing import JobContext, Services  # noqa: E402
from bot.app.settings import Settings  # noqa: E402

DEFAULT_URL = "postgresql://127.0.0.1:5432/test"
#: The query ``next_due`` ran before: every runnable queued job, checked one by one.
REPLACED_NEXT_DUE = f"SELECT min(j.not_before) FROM jobs j WHERE {_RUNNABLE}"
#: (name, queued jobs, keys they spread over, keys with a running job, done jobs)
SHAPES = [
    ("20,000 queued, one per key", 20_000, 20_000, 0, 0),
    ("20,000 queued on 10 keys, all 10 running", 20_000, 10, 10, 0),
    ("20,000 queued on 200 keys, 100 running", 20_000, 200, 100, 0),
    ("10 queued, 200,000 done", 10, 10, 0, 200_000),
    ("200,000 queued on 100 keys, all running, + 1 runnable due last", 200_001, 100, 100, 0),
]


class OnTheLoop:
    """``store`` saying it does not block: ``run_store`` then calls it on the loop, as prguide used to."""

    blocking = False

    def __init__(self, store: object):
        self._store = store

    def __getattr__(self, name: str) -> object:
        return getattr(self._store, name)


def context(store: object) -> JobContext:
    settings = Settings(app_id=1, private_key="k", webhook_secret="s")
    return JobContext(Services(settings, clients=None, auth=None, rules=None, metrics=create_metrics(), store=store), None)


async def loop_stall(ctx: JobContext, hold: threading.Event | None, held_for: float, n: int) -> float:
    """Longest lateness of a 1 ms ticker (ms) while ``ctx.enqueue`` waits for a connection held ``held_for`` s."""
    released = threading.Event()

    def holder() -> None:
        with ctx.services.store.db.pool.connection():
            hold.set()
            released.wait(held_for)

    thread = threading.Thread(target=holder)
    thread.start()
    await asyncio.to_thread(hold.wait)
    worst = 0.0
    done = False

    async def ticker() -> None:
        nonlocal worst
        while not done:
            due = time.perf_counter() + 0.001
            await asyncio.sleep(0.001)
            worst = max(worst, time.perf_counter() - due)

    ticking = asyncio.create_task(ticker())
    await asyncio.sleep(0.01)  # the ticker is running
    await ctx.enqueue("prguide.bench", None, b"{}", key=f"k{n}", delivery_id=f"stall-{uuid.uuid4().hex}", installation_id=None)
    done = True
    await ticking
    await asyncio.to_thread(thread.join)
    hold.clear()
    return worst * 1000


async def sqlite_enqueue_us(rounds: int, calls: int) -> tuple[float, float]:
    """Microseconds per ``await JobContext.enqueue`` on SQLite, and per ``store.enqueue_many`` called
    directly (what the synchronous ``enqueue`` did before)."""
    with tempfile.TemporaryDirectory() as folder:
        store = JobStore.open(str(Path(folder) / "jobs.db"))
        ctx = context(store)
        via, bare = [], []
        for r in range(rounds):
            started = time.perf_counter()
            for i in range(calls):
                await ctx.enqueue("e", None, b"{}", key=f"k{i}", delivery_id=f"c{r}-{i}", installation_id=None)
            via.append((time.perf_counter() - started) / calls * 1e6)
            started = time.perf_counter()
            for i in range(calls):
                store.enqueue_many([QueuedDelivery(f"b{r}-{i}", "e", f"k{i}", b"{}")])
            bare.append((time.perf_counter() - started) / calls * 1e6)
        store.close()
    return median(via), median(bare)


def fill(db: pg.Database, queued: int, keys: int, running: int, done: int) -> None:
    with db.pool.connection() as conn:
        conn.execute("TRUNCATE jobs RESTART IDENTITY")
        conn.execute(
            "INSERT INTO jobs (delivery_id, event, key, not_before, created_at, updated_at, state)"
            " SELECT 'done' || g, 'e', 'd' || g, 0, 0, 0, 'done' FROM generate_series(1, %s) g", (done,)
        )
        conn.execute(
            "INSERT INTO jobs (delivery_id, event, key, not_before, created_at, updated_at, state)"
            " SELECT 'run' || g, 'e', 'k' || g, 0, 0, 0, 'running' FROM generate_series(0, %s - 1) g", (running,)
        )
        conn.execute(
            "INSERT INTO jobs (delivery_id, event, key, not_before, created_at, updated_at)"
            " SELECT 'q' || g, 'e', 'k' || (g %% %s), 1000 + g, 0, 0 FROM generate_series(1, %s) g",
            (keys, queued - queued % 2),
        )
        if queued % 2:  # one job of a key of its own, due after all the others
            conn.execute(
                "INSERT INTO jobs (delivery_id, event, key, not_before, created_at, updated_at)"
                " VALUES ('last', 'e', 'last', 1e9, 0, 0)"
            )
        conn.execute("ANALYZE jobs")


#: Seconds a shape's query may take in all (warm-up included) before fewer calls are timed.
BUDGET_S = 60.0
#: The replaced query is stopped after this long: on a large queue it can take minutes.
REPLACED_TIMEOUT_MS = 5000


def timed_ms(call, rounds: int, budget: float = BUDGET_S) -> float:
    """Median milliseconds of ``call()`` after 20 untimed calls: psycopg prepares a statement on its
    5th run, and PostgreSQL plans a prepared one anew on each of its first 5 runs. Past
    ``budget`` seconds fewer calls are made (at least 10 untimed, to pass both thresholds,
    and 3 timed); a call that times out (``QueryCanceled``) ends it: ``inf``."""
    import psycopg

    began = time.perf_counter()
    times: list[float] = []
    try:
        for n in range(20):
            if n >= 10 and time.perf_counter() - began > budget / 2:
                break
            call()
        for n in range(rounds):
            if n >= 3 and time.perf_counter() - began > budget:
                break
            started = time.perf_counter()
            call()
            times.append((time.perf_counter() - started) * 1000)
    except psycopg.errors.QueryCanceled:
        return math.inf
    return median(times)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer rounds, the smaller queue shapes only")
    parser.add_argument("--rounds", type=int, default=MIN_ROUNDS * 4)
    parser.add_argument("--hold-ms", type=float, default=200.0)
    parser.add_argument("--database-url", default=DEFAULT_URL)
    args = parser.parse_args()
    rounds = MIN_ROUNDS if args.quick else max(MIN_ROUNDS, args.rounds)
    shapes = SHAPES[:4] if args.quick else SHAPES
    pg.load_components()
    schema = f"bench_{uuid.uuid4().hex[:10]}"
    db = pg.connect(args.database_url, schema=schema, min_size=1, max_size=1, timeout=30.0, migrate_components=["jobs"])
    print(header("PostgreSQL mode: event-loop stall and next_due"))
    try:
        store = PgJobStore(db)
        hold = threading.Event()
        held_for = args.hold_ms / 1000
        stalls = {"run_store (worker thread)": [], "on the loop (before)": []}
        for n in range(MIN_ROUNDS):
            stalls["run_store (worker thread)"].append(await loop_stall(context(store), hold, held_for, n))
            stalls["on the loop (before)"].append(await loop_stall(context(OnTheLoop(store)), hold, held_for, n))
        print(f"\nA job's `ctx.enqueue` while the pool's one connection is held {args.hold_ms:.0f} ms by another "
              f"thread; longest lateness of a 1 ms ticker on the same loop, median and worst of {MIN_ROUNDS}:\n")
        print(table(["store called", "loop stall ms (median)", "worst ms"],
                    [(name, median(v), max(v)) for name, v in stalls.items()]))
        via, bare = await sqlite_enqueue_us(rounds, 500)
        print(f"\nSQLite (called on the loop either way), µs per enqueue, median of {rounds} x 500: "
              f"`await ctx.enqueue(...)` {via:.1f}, `store.enqueue_many(...)` called directly {bare:.1f}\n")

        rows = []
        for name, queued, keys, running, done in shapes:
            fill(db, queued, keys, running, done)
            # A fresh connection per shape: a statement prepared on another shape keeps its plan.
            fresh = pg.connect(args.database_url, schema=schema, min_size=1, max_size=1, migrate_components=())
            try:
                reference = timed_ms(fresh.ping, rounds)
                now = timed_ms(PgJobStore(fresh).next_due, rounds)

                def replaced(fresh: pg.Database = fresh) -> None:
                    with fresh.pool.connection() as conn:
                        conn.execute(f"SET LOCAL statement_timeout = {REPLACED_TIMEOUT_MS}")
                        conn.execute(REPLACED_NEXT_DUE).fetchone()

                before = timed_ms(replaced, rounds)
            finally:
                fresh.close()
            shown_before = before if math.isfinite(before) else f"> {REPLACED_TIMEOUT_MS:,} (stopped)"
            rows.append((name, reference, now, now / reference, shown_before, before / reference if math.isfinite(before) else "-"))
        print(f"`PgJobStore.next_due()` on queues of several shapes, median ms of {rounds} calls after 20 "
              f"untimed ones (fewer past {BUDGET_S:g} s a query), each through the pool (checkout, query, commit); "
              f"the replaced query is stopped after {REPLACED_TIMEOUT_MS:,} ms:\n")
        print(table(["queue", "SELECT 1 ms", "next_due ms", "x SELECT 1", "replaced query ms", "x SELECT 1"], rows))
    finally:
        db.close()
        pg.drop_schema(args.database_url, schema)


if __name__ == "__main__":
    asyncio.run(main())
