"""The SQLite helper: opening the shared database and per-component migrations."""

from __future__ import annotations

import sqlite3

import pytest

from bot.app.db import (
    LAYOUT_VERSION,
    SQLITE_AUTOCHECKPOINT,
    Checkpointer,
    DatabaseError,
    database_path,
    migrate,
    open_database,
    schema_version,
    split_statements,
)

V1 = "CREATE TABLE things (id INTEGER PRIMARY KEY, name TEXT NOT NULL);"
V2 = "ALTER TABLE things ADD COLUMN colour TEXT; CREATE INDEX things_name ON things (name);"


def tables(conn: sqlite3.Connection) -> set[str]:
    return {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def test_database_path_reads_prguide_db():
    assert database_path({"PRGUIDE_DB": "/data/q.db"}) == "/data/q.db"
    assert database_path({"PRGUIDE_DB": ""}) == "prguide.db"
    assert database_path({}) == "prguide.db"


def test_file_database_uses_wal_and_normal_sync(tmp_path):
    conn = open_database(tmp_path / "sub" / "prguide.db")
    try:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("PRAGMA synchronous").fetchone()[0] == 1  # NORMAL
        assert conn.isolation_level is None
    finally:
        conn.close()


def test_open_database_rejects_unknown_sync_level_and_non_databases(tmp_path):
    with pytest.raises(ValueError, match="synchronous"):
        open_database(":memory:", synchronous="sometimes")
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"this is not an SQLite file at all, just some text" * 20)
    with pytest.raises(sqlite3.DatabaseError):
        open_database(junk)
    assert junk.read_bytes().startswith(b"this is not")


def test_migrate_is_versioned_and_idempotent():
    conn = open_database(":memory:")
    assert migrate(conn, "things", [V1]) == 1
    # Running V1 again would fail with "table things already exists".
    assert migrate(conn, "things", [V1]) == 1
    assert migrate(conn, "things", [V1, V2]) == 2
    assert migrate(conn, "things", [V1, V2]) == 2
    columns = [row[1] for row in conn.execute("PRAGMA table_info(things)")]
    assert columns == ["id", "name", "colour"]
    assert schema_version(conn, "things") == 2
    assert conn.execute("PRAGMA user_version").fetchone()[0] == LAYOUT_VERSION


def test_components_keep_separate_versions(tmp_path):
    path = tmp_path / "shared.db"
    first = open_database(path)
    second = open_database(path)
    try:
        migrate(first, "things", [V1, V2])
        migrate(second, "other", ["CREATE TABLE other_rows (x INTEGER);"])
        assert schema_version(second, "things") == 2
        assert schema_version(first, "other") == 1
        assert {"things", "other_rows", "schema_versions"} <= tables(first)
    finally:
        first.close()
        second.close()


def test_failing_migration_rolls_back_and_names_the_step():
    conn = open_database(":memory:")
    migrate(conn, "things", [V1])
    broken = "CREATE TABLE half_done (x INTEGER); INSERT INTO no_such_table VALUES (1);"
    with pytest.raises(DatabaseError, match=r"migration 2 of 'things' failed: no such table"):
        migrate(conn, "things", [V1, broken])
    assert schema_version(conn, "things") == 1
    assert "half_done" not in tables(conn)
    assert not conn.in_transaction


def test_database_newer_than_code_is_refused():
    conn = open_database(":memory:")
    migrate(conn, "things", [V1, V2])
    with pytest.raises(DatabaseError, match="version 2 but this prguide knows only 1"):
        migrate(conn, "things", [V1])
    conn.execute(f"PRAGMA user_version = {LAYOUT_VERSION + 1}")
    with pytest.raises(DatabaseError, match="layout"):
        migrate(conn, "things", [V1, V2])


def test_migrate_checks_its_arguments():
    conn = open_database(":memory:")
    with pytest.raises(ValueError):
        migrate(conn, "", [V1])
    conn.execute("BEGIN")
    with pytest.raises(DatabaseError, match="open transaction"):
        migrate(conn, "things", [V1])


def test_split_statements_keeps_triggers_and_quoted_semicolons_whole():
    script = """
        CREATE TABLE t (x TEXT);
        -- a comment; with a semicolon
        CREATE TRIGGER t_ins AFTER INSERT ON t BEGIN
            UPDATE t SET x = x || ';' WHERE rowid = new.rowid;
        END;
        INSERT INTO t VALUES ('a;b')
    """
    statements = list(split_statements(script))
    assert len(statements) == 3
    assert statements[1].endswith("END;")
    conn = open_database(":memory:")
    migrate(conn, "t", [script])
    assert conn.execute("SELECT x FROM t").fetchone()[0] == "a;b;"


# --- background WAL checkpoints -------------------------------------------------------------------


def autocheckpoint(conn: sqlite3.Connection) -> int:
    return conn.execute("PRAGMA wal_autocheckpoint").fetchone()[0]


def fill(conn: sqlite3.Connection, rows: int = 50) -> None:
    conn.execute("CREATE TABLE IF NOT EXISTS blobs (b BLOB)")
    for _ in range(rows):
        conn.execute("INSERT INTO blobs VALUES (?)", (b"x" * 20_000,))


def test_checkpointer_takes_checkpoints_away_from_adopted_connections(tmp_path):
    path = tmp_path / "q.db"
    conn, elsewhere = open_database(path), open_database(tmp_path / "other.db")
    checkpointer = Checkpointer(path, interval=3600)
    assert checkpointer.adopt(conn) is False  # not running yet
    assert checkpointer.start() is True
    with pytest.raises(RuntimeError, match="already running"):
        checkpointer.start()
    try:
        assert checkpointer.adopt(conn) is True
        assert checkpointer.adopt(elsewhere) is False  # another file keeps its own checkpoints
        assert (autocheckpoint(conn), autocheckpoint(elsewhere)) == (0, SQLITE_AUTOCHECKPOINT)
        fill(conn)
        busy, frames, done = checkpointer.checkpoint()
        assert busy == 0 and frames > 50 and done == frames
    finally:
        checkpointer.stop()
        checkpointer.stop()  # twice is harmless
    assert autocheckpoint(conn) == SQLITE_AUTOCHECKPOINT  # given back: the connection outlives it
    assert conn.execute("SELECT count(*) FROM blobs").fetchone()[0] == 50
    with pytest.raises(RuntimeError, match="not running"):
        checkpointer.checkpoint()
    conn.close()
    elsewhere.close()


def test_checkpointer_does_nothing_for_an_in_memory_database():
    conn = open_database(":memory:")
    checkpointer = Checkpointer(":memory:")
    assert checkpointer.start() is False
    assert checkpointer.adopt(conn) is False
    checkpointer.stop()


def test_checkpointer_thread_checkpoints_and_survives_a_failure(tmp_path, monkeypatch, caplog):
    import threading

    path = tmp_path / "q.db"
    conn = open_database(path)
    checkpointer = Checkpointer(path, interval=0.001)
    calls: list[int] = []
    twice = threading.Event()
    real = Checkpointer.checkpoint

    def flaky(self):
        calls.append(1)
        if len(calls) == 1:
            raise sqlite3.OperationalError("database is locked")
        twice.set()
        return real(self)

    monkeypatch.setattr(Checkpointer, "checkpoint", flaky)
    assert checkpointer.start()
    checkpointer.adopt(conn)
    fill(conn, 5)
    try:
        assert twice.wait(timeout=30), "the thread never checkpointed again after a failure"
    finally:
        checkpointer.stop()
    assert "WAL checkpoint" in caplog.text and "database is locked" in caplog.text
    conn.close()


def test_after_a_burst_the_wal_is_started_over_and_cut_back(tmp_path, monkeypatch):
    import bot.app.db as db

    monkeypatch.setattr(db, "WAL_SIZE_LIMIT", 64 * 1024)
    path = tmp_path / "q.db"
    conn = open_database(path)
    checkpointer = Checkpointer(path, interval=3600)
    checkpointer.start()
    checkpointer.adopt(conn)
    try:
        fill(conn, 100)  # ~2 MB of WAL, never checkpointed by the writer itself
        wal = tmp_path / "q.db-wal"
        assert wal.stat().st_size > 1_000_000
        checkpointer.checkpoint()  # the burst is over: everything is copied back
        conn.execute("INSERT INTO blobs VALUES (x'00')")  # the next commit starts the log over
        assert wal.stat().st_size <= 64 * 1024
    finally:
        checkpointer.stop()
        conn.close()
