"""The narration cache and the per-installation daily token count.

:class:`NarrationStorage` is the interface (a :class:`typing.Protocol`); :class:`SQLiteNarrations`
the SQLite implementation. Another database implements the same four methods (the
contract test, ``tests/test_narrator_store.py``, runs against each).
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
                "INSERT INTO narrator_tokens (installation, day, tokens) VALUES (?, ?, ?)"
                " ON CONFLICT (installation, day) DO UPDATE SET tokens = tokens + excluded.tokens",
                (int(installation), day, int(tokens)),
            )
            row = self._db.execute("SELECT tokens FROM narrator_tokens WHERE installation = ? AND day = ?", (int(installation), day)).fetchone()
        return int(row[0])

    def tokens(self, installation: int, day: str) -> int:
        with self._lock:
            row = self._db.execute("SELECT tokens FROM narrator_tokens WHERE installation = ? AND day = ?", (int(installation), day)).fetchone()
        return int(row[0]) if row else 0

    def close(self) -> None:
        """Close the connection."""
        with self._lock:
            self._db.close()
