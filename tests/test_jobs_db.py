"""The SQLite helper: opening the shared database and per-component migrations."""

from __future__ import annotations

import sqlite3

import pytest

from bot.app.db import (
    LAYOUT_VERSION,
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
