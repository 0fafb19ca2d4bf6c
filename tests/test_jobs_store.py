"""The durable job table: dedupe by delivery id, per-key claiming, settling and pruning.

One contract for every backend: the ``store`` fixture runs each test on the SQLite
store and on the PostgreSQL one (which skips, saying why, without a server).
"""

from __future__ import annotations

import sqlite3

import pytest

from bot.app.db import open_database, schema_version
from bot.app.jobs import GIVEN_UP, MIGRATIONS, SUCCEEDED, SUPERSEDED, JobStore

T0 = 1_750_000_000.0
DAY = 86400.0


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request):
    if request.param == "sqlite":
        s = JobStore(open_database(":memory:"), clock=lambda: T0)
    else:
        from bot.app.pgjobs import PgJobStore

        s = PgJobStore(request.getfixturevalue("pg_database"), clock=lambda: T0)
    yield s
    s.close()


@pytest.fixture
def sqlite_store():
    s = JobStore(open_database(":memory:"), clock=lambda: T0)
    yield s
    s.close()


def job_rows(store) -> list[dict]:
    """Every job's id, key, state and not_before, whatever the backend."""
    query = "SELECT id, key, state, not_before FROM jobs ORDER BY id"
    if isinstance(store, JobStore):
        return [dict(r) for r in store.conn.execute(query)]
    with store.db.pool.connection() as conn:
        return [dict(zip(("id", "key", "state", "not_before"), r)) for r in conn.execute(query)]


def put(store: JobStore, delivery: str, key: str = "octo/repo#1", *, now: float = T0, payload: bytes = b"{}") -> bool:
    return store.enqueue(delivery, "pull_request", key, payload, installation_id=7, action="closed", now=now)


def test_enqueue_dedupes_on_delivery_id(store):
    assert put(store, "d-1", payload=b'{"first": true}') is True
    assert put(store, "d-1", payload=b'{"second": true}') is False
    assert store.counts() == {"queued": 1, "running": 0, "done": 0, "parked": 0}
    job = store.claim()
    assert job.payload == b'{"first": true}'
    assert (job.delivery_id, job.event, job.action, job.installation_id) == ("d-1", "pull_request", "closed", 7)
    assert job.attempts == 1 and job.created_at == T0


def test_enqueue_is_visible_to_another_connection_at_once(tmp_path):
    path = tmp_path / "q.db"
    writer = JobStore.open(str(path))
    reader = JobStore.open(str(path))
    try:
        put(writer, "d-1")
        assert reader.counts()["queued"] == 1
        assert put(reader, "d-1") is False
    finally:
        writer.close()
        reader.close()


def test_enqueue_rejects_bad_input_and_writes_nothing(store):
    with pytest.raises(ValueError, match="non-empty"):
        store.enqueue("", "pull_request", "o/r#1", b"{}", installation_id=None, action=None)
    with pytest.raises(ValueError, match="non-empty"):
        store.enqueue("d", "pull_request", "", b"{}", installation_id=None, action=None)
    with pytest.raises(ValueError, match="bytes"):
        store.enqueue("d", "pull_request", "o/r#1", {"a": 1}, installation_id=None, action=None)
    assert sum(store.counts().values()) == 0


def test_delivery_without_a_key_gets_its_own(store):
    store.enqueue("d-9", "installation", None, b"{}", installation_id=3, action="created")
    assert store.claim().key == "delivery:d-9"


def test_job_payload_is_parsed_lazily(store):
    put(store, "good", key="a", payload=b'{"action": "closed"}')
    put(store, "bad", key="b", payload=b"\xff not json")
    good, bad = store.claim(), store.claim()
    assert good.data == {"action": "closed"}
    assert bad.payload == b"\xff not json"
    with pytest.raises(ValueError, match="delivery bad is not JSON"):
        bad.data


def test_claim_keeps_one_job_per_key_in_arrival_order(store):
    put(store, "a1", "o/r#1")
    put(store, "a2", "o/r#1")
    put(store, "b1", "o/r#2")
    a1 = store.claim()
    assert a1.delivery_id == "a1"
    assert store.claim().delivery_id == "b1"
    assert store.claim() is None  # a2 waits for a1
    assert store.next_due() is None  # nothing is waiting only for time
    store.complete(a1.id)
    assert store.claim().delivery_id == "a2"


def test_a_job_waiting_for_retry_holds_back_later_jobs_of_its_key(store):
    put(store, "a1", "k")
    put(store, "a2", "k")
    job = store.claim()
    store.retry(job.id, delay=60, error="RetryLater: rate limited")
    assert store.claim() is None
    assert store.next_due() == T0 + 60
    again = store.claim(now=T0 + 60)
    assert (again.delivery_id, again.attempts) == ("a1", 2)
    assert store.get(again.id)["error"] == "RetryLater: rate limited"


def test_parked_job_put_back_waits_for_the_running_job_of_its_key(store):
    put(store, "a1", "k")
    put(store, "a2", "k")
    first = store.claim()
    store.park(first.id, error="boom")
    second = store.claim()
    assert second.delivery_id == "a2"  # a parked job does not block its key
    assert store.retry_parked(first.id) == 1
    assert store.claim() is None  # a2 still running
    store.complete(second.id)
    again = store.claim()
    assert (again.delivery_id, again.attempts) == ("a1", 1)


def test_settling_records_outcome_and_ignores_jobs_not_running(store):
    put(store, "a", "k1")
    put(store, "b", "k2")
    a, b = store.claim(), store.claim()
    store.complete(a.id, outcome=GIVEN_UP, reason="repository deleted")
    store.complete(a.id)  # already done: no change
    assert store.get(a.id)["outcome"] == GIVEN_UP
    assert store.get(a.id)["error"] == "repository deleted"
    store.release(b.id)
    row = store.get(b.id)
    assert (row["state"], row["attempts"]) == ("queued", 0)
    with pytest.raises(ValueError):
        store.complete(b.id, outcome="maybe")


def test_a_job_is_found_by_its_delivery_id(store):
    put(store, "a", "k1")
    job = store.claim()
    store.complete(job.id, reason="created")
    row = store.by_delivery("a")
    assert (row["id"], row["key"], row["state"], row["outcome"], row["error"]) == (job.id, "k1", "done", SUCCEEDED, "created")
    assert (row["event"], row["action"], row["attempts"]) == ("pull_request", "closed", 1)
    assert store.by_delivery("b") is None


def test_requeue_running_resumes_and_parks_jobs_that_keep_crashing(store):
    put(store, "a", "k1")
    put(store, "b", "k2")
    a = store.claim()
    store.retry(a.id, delay=0, error="RetryLater: 502")
    store.claim()  # a, attempt 2
    store.claim()  # b, attempt 1
    # Long after their lease: left by a process that is gone (SQLite: any earlier process).
    assert store.requeue_running(max_attempts=2, now=T0 + DAY) == 2
    assert store.counts() == {"queued": 1, "running": 0, "done": 0, "parked": 1}
    (parked,) = store.parked()
    assert parked.delivery_id == "a"
    assert parked.error.startswith("interrupted while running 2 times")
    assert "RetryLater: 502" in parked.error
    assert store.retry_parked() == 1
    assert store.counts()["queued"] == 2


def test_counts_oldest_age_and_parked_listing(store):
    assert store.oldest_queued_age() is None
    put(store, "old", "k1", now=T0 - 90)
    put(store, "new", "k2", now=T0 - 10)
    assert store.oldest_queued_age() == 90
    job = store.claim()
    store.park(job.id, error="Traceback ...\nValueError: boom")
    assert store.oldest_queued_age() == 10
    (parked,) = store.parked()
    assert (parked.delivery_id, parked.key, parked.attempts) == ("old", "k1", 1)
    assert parked.error.endswith("ValueError: boom")
    assert store.counts() == {"queued": 1, "running": 0, "done": 0, "parked": 1}


def test_prune_bounds_done_jobs_but_keeps_recent_delivery_ids(sqlite_store):
    store = sqlite_store
    for i in range(6):
        put(store, f"d{i}", f"k{i}", now=T0 - 10 * DAY)
    put(store, "parked", "kp", now=T0 - 10 * DAY)
    put(store, "queued", "kq", now=T0 - 10 * DAY)
    jobs = [store.claim(now=T0 - 10 * DAY) for _ in range(7)]
    for job, when in zip(jobs[:6], [T0 - 9 * DAY, T0 - 2 * DAY, T0 - 2 * DAY, T0 - 1, T0 - 1, T0 - 1]):
        store.complete(job.id, now=when)
    store.park(jobs[6].id, error="boom", now=T0 - 9 * DAY)

    deleted = store.prune(keep_payloads=DAY, keep_deliveries=3 * DAY, max_done=4)
    assert deleted == 2  # d0 by age, d1 by the row cap
    assert store.counts() == {"queued": 1, "running": 0, "done": 4, "parked": 1}
    # A redelivery of a still-remembered delivery is not queued again.
    assert put(store, "d2", "k2") is False
    assert put(store, "d0", "k0") is True  # forgotten after the window
    payloads = dict(
        store.conn.execute(
            "SELECT delivery_id, length(body) FROM jobs LEFT JOIN job_payloads ON job_id = id WHERE state = 'done'"
        ).fetchall()
    )
    assert payloads == {"d2": None, "d3": 2, "d4": 2, "d5": 2}
    # Deleting a job deletes its payload with it.
    assert store.conn.execute("SELECT count(*) FROM job_payloads").fetchone()[0] == 6


def test_reopening_keeps_the_schema_version(tmp_path):
    path = str(tmp_path / "q.db")
    JobStore.open(path).close()
    store = JobStore.open(path)
    try:
        assert schema_version(store.conn, "jobs") == len(MIGRATIONS) == 4
    finally:
        store.close()


def test_supersede_ends_every_queued_job_of_the_same_kind_before_the_newest(store):
    put(store, "d-1")
    put(store, "d-2", key="octo/repo#2")
    store.enqueue("c-1", "issue_comment", "octo/repo#1", b"{}", installation_id=7, action="created", now=T0)
    job = store.claim()
    assert job.delivery_id == "d-1"
    assert store.supersede(job) is None  # other PRs and other events do not supersede it
    for n in (3, 4, 5):
        put(store, f"d-{n}")
    assert store.supersede(job) == ("d-5", 2)
    rows = {store.get(i)["delivery_id"]: store.get(i) for i in range(1, 7)}
    assert [rows[d]["state"] for d in ("d-3", "d-4", "d-5", "c-1", "d-2")] == ["done", "done", "queued", "queued", "queued"]
    assert rows["d-3"]["outcome"] == SUPERSEDED and rows["d-3"]["error"] == "superseded by delivery d-5"
    assert rows["d-1"]["state"] == "running"  # the caller ends its own job


def test_enqueue_many_is_all_or_nothing(sqlite_store):
    store = sqlite_store
    from bot.app.jobs import QueuedDelivery

    ok = QueuedDelivery("d-ok", "pull_request", "o/r#1", b"{}", installation_id=1, action="closed")
    store.conn.execute(
        "CREATE TRIGGER refuse BEFORE INSERT ON jobs WHEN NEW.delivery_id = 'd-bad' BEGIN SELECT RAISE(ABORT, 'no'); END"
    )
    with pytest.raises(sqlite3.IntegrityError):
        store.enqueue_many([ok, QueuedDelivery("d-bad", "pull_request", "o/r#1", b"{}")])
    assert store.counts()["queued"] == 0
    assert store.enqueue_many([]) == []
    assert store.enqueue_many([ok, ok]) == [True, False]


def test_a_version_1_queue_keeps_its_payloads_when_migrated(tmp_path):
    from bot.app.db import migrate

    path = tmp_path / "old.db"
    conn = open_database(path)
    migrate(conn, "jobs", MIGRATIONS[:1])
    conn.execute(
        "INSERT INTO jobs (delivery_id, event, action, key, payload, installation_id, not_before, created_at, updated_at)"
        " VALUES ('old-1', 'pull_request', 'closed', 'o/r#1', x'7b7d', 7, 0, 0, 0)"
    )
    conn.close()
    store = JobStore.open(str(path))
    try:
        assert schema_version(store.conn, "jobs") == len(MIGRATIONS) == 4
        job = store.claim()
        assert (job.delivery_id, job.payload, job.data) == ("old-1", b"{}", {})
        assert "payload" not in [row[1] for row in store.conn.execute("PRAGMA table_info(jobs)")]
    finally:
        store.close()


def _model_first(rows, now):
    """The job the head-of-key rule picks, computed the slow, obvious way."""
    def runnable(j):
        return j["state"] == "queued" and not any(
            e["key"] == j["key"] and (e["state"] == "running" or (e["state"] == "queued" and e["id"] < j["id"]))
            for e in rows
        )

    heads = [j for j in rows if runnable(j)]
    due = [j for j in heads if j["not_before"] <= now]
    first = min(due, key=lambda j: (j["not_before"], j["id"]), default=None)
    next_due = min((j["not_before"] for j in heads), default=None)
    return (first["id"] if first else None), next_due


# 2 candidates: the per-key scan runs on almost every claim (SQLite) and next_due (both).
@pytest.mark.parametrize("backend,candidates", [("sqlite", 64), ("sqlite", 2), ("postgresql", 64), ("postgresql", 2)])
def test_claims_follow_the_head_of_key_rule(monkeypatch, request, backend, candidates):
    import random

    import bot.app.jobstore as jobs
    import bot.app.pgjobs as pgjobs

    monkeypatch.setattr(jobs, "_CANDIDATES", candidates)
    monkeypatch.setattr(pgjobs, "_CANDIDATES", candidates)
    db = request.getfixturevalue("pg_database") if backend == "postgresql" else None
    for seed in range(60 if db is None else 12):
        rnd = random.Random(seed)
        if db is None:
            store = JobStore(open_database(":memory:"), clock=lambda: T0)
        else:
            from bot.app.pgjobs import PgJobStore

            with db.pool.connection() as conn:
                conn.execute("TRUNCATE jobs RESTART IDENTITY")
            store = PgJobStore(db, clock=lambda: T0)
        now, running, n = T0, [], 0
        for _step in range(60):
            op = rnd.random()
            if op < 0.4:
                n += 1
                put(store, f"d{n}", f"k{rnd.randrange(4)}", now=now)
            elif op < 0.7:
                expected, _ = _model_first(job_rows(store), now)
                job = store.claim(now)
                assert (job.id if job else None) == expected, seed
                if job:
                    running.append(job.id)
            elif op < 0.9 and running:
                job_id = running.pop(rnd.randrange(len(running)))
                rnd.choice([
                    lambda: store.complete(job_id, now=now),
                    lambda: store.retry(job_id, delay=rnd.choice([0, 5, 50]), error="x", now=now),
                    lambda: store.park(job_id, error="x", now=now),
                ])()
            elif op < 0.95:
                store.retry_parked(now=now)
            else:
                now += rnd.choice([1, 10, 60])
            assert store.next_due() == _model_first(job_rows(store), now)[1], seed
        if db is None:
            store.close()


def test_a_burst_behind_running_pull_requests_does_not_hide_other_keys(store):
    for key in ("a", "b"):
        for i in range(80):
            put(store, f"{key}-{i}", key)
    assert {store.claim().key, store.claim().key} == {"a", "b"}
    put(store, "c-0", "c")  # newer than 158 queued jobs that must wait
    job = store.claim()
    assert (job.delivery_id, store.claim()) == ("c-0", None)
    assert store.next_due() is None  # everything left waits for a running job


def test_a_live_job_goes_before_an_overdue_background_backlog(store):
    from bot.app.jobs import PRIORITY_BACKGROUND, QueuedDelivery

    # A backfill an hour behind its schedule: every one of its jobs is overdue.
    backlog = [
        QueuedDelivery(f"b-{n}", "prguide.backfill", f"octo/repo#{n}", b"{}", installation_id=7, action="pull",
                       priority=PRIORITY_BACKGROUND)
        for n in range(5)
    ]
    assert store.enqueue_many(backlog, now=T0 - 3600) == [True] * 5
    assert put(store, "merge", key="octo/repo#99", now=T0)  # a live merge, due now
    order = []
    while (job := store.claim(T0)) is not None:
        order.append(job.delivery_id)
        store.complete(job.id, now=T0)
    assert order == ["merge", "b-0", "b-1", "b-2", "b-3", "b-4"]
    with pytest.raises(ValueError, match="priority"):
        QueuedDelivery("x", "pull_request", "o/r#1", b"{}", priority="high")


def test_next_due_is_the_earliest_due_job_whatever_its_priority(store):
    from bot.app.jobs import PRIORITY_BACKGROUND, QueuedDelivery

    later = QueuedDelivery("live", "pull_request", "octo/repo#1", b"{}", installation_id=7)
    sooner = QueuedDelivery("bg", "prguide.backfill", "octo/repo#2", b"{}", installation_id=7, priority=PRIORITY_BACKGROUND)
    store.enqueue_many([later], now=T0 + 100)
    store.enqueue_many([sooner], now=T0 + 10)
    assert store.next_due() == T0 + 10
    assert store.claim(T0 + 10).delivery_id == "bg"


def test_a_release_for_a_rate_limit_puts_the_job_back_later_without_counting_the_attempt(store):
    put(store, "d-1")
    job = store.claim(T0)
    assert job.attempts == 1
    store.release(job.id, now=T0, delay=3600.0, reason="RateLimited: GitHub resets in 3600s")
    row = store.get(job.id)
    assert (row["state"], row["attempts"], row["not_before"]) == ("queued", 0, T0 + 3600)
    assert row["error"] == "RateLimited: GitHub resets in 3600s"
    assert store.claim(T0 + 3599) is None
    assert store.claim(T0 + 3600).attempts == 1
