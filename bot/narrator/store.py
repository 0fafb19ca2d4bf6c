"""The narration cache and the per-installation daily token count.

:class:`NarrationStorage` is the interface (a :class:`typing.Protocol`); :class:`SQLiteNarrations`
the SQLite implementation (one process), :class:`PgNarrations` the PostgreSQL one, shared
by every replica like the write budget, so N replicas spend the daily cap once and ask
the model once per narration. The contract test (``tests/test_narrator_store.py``) runs
against each.

The cap is kept with :meth:`NarrationStorage.reserve_tokens`: a call's prompt estimate
and its longest answer are taken before the call in one atomic statement that refuses to pass the cap (two
replicas never both spend the last tokens), and the difference to what the call really
used is settled afterwards with :meth:`NarrationStorage.add_tokens`.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol


def cache_key(repository: str, number: int, head_sha: str, engine: str, model: str, lang: str) -> str:
    """The cache key of a narration: a hash of (repository, PR, head sha, engine version, model, language)."""
    raw = json.dumps([repository.lower(), int(number), head_sha, engine, model, lang])
    return hashlib.sha256(raw.encode()).hexdigest()[:32]


class NarrationStorage(Protocol):
    """Where narrations and token use are kept."""

    def get(self, key: str) -> Mapping[str, Any] | None:
        """The narration stored under ``key`` (a :meth:`Narration.to_json` dict), or ``None``."""

    def put(self, key: str, narration: Mapping[str, Any]) -> None:
        """Store ``narration`` under ``key`` (replacing any)."""

    def add_tokens(self, installation: int, day: str, tokens: int) -> int:
        """Add ``tokens`` to an installation's count for ``day`` (``YYYY-MM-DD``, UTC); return the new total."""

    def tokens(self, installation: int, day: str) -> int:
        """Tokens an installation used on ``day``."""

    def reserve_tokens(self, installation: int, day: str, tokens: int, cap: int) -> bool:
        """Add ``tokens`` to the count only if it stays within ``cap``; True when added."""


#: The PostgreSQL tables (component ``"narrator"``; registered by :mod:`bot.feature_support`).
PG_MIGRATIONS = [
    """
    CREATE TABLE narrations (
        key TEXT PRIMARY KEY,
        data TEXT NOT NULL,
        stored_at TIMESTAMPTZ NOT NULL DEFAULT now()
    );
    CREATE TABLE narrator_tokens (
        installation_id BIGINT NOT NULL,
        day TEXT NOT NULL,
        tokens BIGINT NOT NULL,
        PRIMARY KEY (installation_id, day)
    );
    """,
]


class SQLiteNarrations:
    """:class:`NarrationStorage` in a SQLite file (the app's database) or ``:memory:``."""

    def __init__(self, path: str | Path) -> None:
        if str(path) != ":memory:":
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
        self._lock = threading.Lock()
        with self._lock:
            self._db.execute("PRAGMA busy_timeout = 5000")
            self._db.execute("CREATE TABLE IF NOT EXISTS narrations (key TEXT PRIMARY KEY, data TEXT NOT NULL)")
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS narrator_tokens (installation INTEGER, day TEXT, tokens INTEGER NOT NULL,"
                " PRIMARY KEY (installation, day))"
            )

    def get(self, key: str) -> Mapping[str, Any] | None:
        with self._lock:
            row = self._db.execute("SELECT data FROM narrations WHERE key = ?", (key,)).fetchone()
        return json.loads(row[0]) if row else None

    def put(self, key: str, narration: Mapping[str, Any]) -> None:
        with self._lock:
            self._db.execute("INSERT OR REPLACE INTO narrations (key, data) VALUES (?, ?)", (key, json.dumps(dict(narration))))

    def add_tokens(self, installation: int, day: str, tokens: int) -> int:
        with self._lock:
            self._db.execute(
                "INSERT INTO narrator_tokens (installation, day, tokens) VALUES (?, ?, max(?, 0))"
                " ON CONFLICT (installation, day) DO UPDATE SET tokens = max(tokens + ?, 0)",
                (int(installation), day, int(tokens), int(tokens)),
            )
            row = self._db.execute("SELECT tokens FROM narrator_tokens WHERE installation = ? AND day = ?", (int(installation), day)).fetchone()
        return int(row[0])

    def tokens(self, installation: int, day: str) -> int:
        with self._lock:
            row = self._db.execute("SELECT tokens FROM narrator_tokens WHERE installation = ? AND day = ?", (int(installation), day)).fetchone()
        return int(row[0]) if row else 0

    def reserve_tokens(self, installation: int, day: str, tokens: int, cap: int) -> bool:
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                row = self._db.execute("SELECT tokens FROM narrator_tokens WHERE installation = ? AND day = ?", (int(installation), day)).fetchone()
                used = int(row[0]) if row else 0
                ok = used + int(tokens) <= int(cap)
                if ok:
                    self._db.execute(
                        "INSERT INTO narrator_tokens (installation, day, tokens) VALUES (?, ?, ?)"
                        " ON CONFLICT (installation, day) DO UPDATE SET tokens = tokens + excluded.tokens",
                        (int(installation), day, int(tokens)),
                    )
            finally:
                self._db.execute("COMMIT")
        return ok

    def close(self) -> None:
        """Close the connection."""
        with self._lock:
            self._db.close()


class PgNarrations:
    """:class:`NarrationStorage` in PostgreSQL (:data:`PG_MIGRATIONS`), one statement per call.

    ``db`` is the replica's pool (:class:`bot.app.pg.Database`, or anything whose
    ``connection()`` lends a psycopg connection). Methods block on the network
    (:attr:`blocking`); errors are ``psycopg.Error``.
    """

    blocking = True

    def __init__(self, db: Any) -> None:
        self.db = db

    def get(self, key: str) -> Mapping[str, Any] | None:
        with self.db.connection() as conn:
            row = conn.execute("SELECT data FROM narrations WHERE key = %s", (key,)).fetchone()
        return json.loads(row[0]) if row else None

    def put(self, key: str, narration: Mapping[str, Any]) -> None:
        with self.db.connection() as conn:
            conn.execute(
                "INSERT INTO narrations (key, data) VALUES (%s, %s)"
                " ON CONFLICT (key) DO UPDATE SET data = excluded.data, stored_at = now()",
                (key, json.dumps(dict(narration))),
            )

    def add_tokens(self, installation: int, day: str, tokens: int) -> int:
        with self.db.connection() as conn:
            row = conn.execute(
                "INSERT INTO narrator_tokens (installation_id, day, tokens) VALUES (%s, %s, greatest(%s, 0))"
                " ON CONFLICT (installation_id, day) DO UPDATE SET tokens = greatest(narrator_tokens.tokens + %s, 0)"
                " RETURNING tokens",
                (int(installation), day, int(tokens), int(tokens)),
            ).fetchone()
        return int(row[0])

    def tokens(self, installation: int, day: str) -> int:
        with self.db.connection() as conn:
            row = conn.execute(
                "SELECT tokens FROM narrator_tokens WHERE installation_id = %s AND day = %s", (int(installation), day)
            ).fetchone()
        return int(row[0]) if row else 0

    def reserve_tokens(self, installation: int, day: str, tokens: int, cap: int) -> bool:
        with self.db.connection() as conn:
            # One statement: a new row only within the cap, an existing one only while it
            # stays within it (the row lock serialises replicas reserving at once).
            row = conn.execute(
                "INSERT INTO narrator_tokens (installation_id, day, tokens) SELECT %s, %s, %s WHERE %s <= %s"
                " ON CONFLICT (installation_id, day) DO UPDATE SET tokens = narrator_tokens.tokens + excluded.tokens"
                " WHERE narrator_tokens.tokens + excluded.tokens <= %s RETURNING tokens",
                (int(installation), day, int(tokens), int(tokens), int(cap), int(cap)),
            ).fetchone()
        return row is not None
