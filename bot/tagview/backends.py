"""Choosing the guide store: SQLite file (the default) or PostgreSQL (``PRGUIDE_DATABASE_URL``)."""

from __future__ import annotations

from pathlib import Path

from bot.tagview.store import GuideStorage


def open_store(*, database_url: str | None = None, schema: str | None = None, path: str | Path | None = None) -> GuideStorage:
    """Open the tag view's store: PostgreSQL at ``database_url`` when given, else the SQLite file ``path``.

    A PostgreSQL store gets its tables migrated (under the migration advisory lock) and
    a small pool of its own, closed by ``close()``; ``schema`` as in
    :func:`bot.app.pg.connect`. Raises ``ValueError`` for a bad URL,
    ``psycopg.Error``/``sqlite3.Error`` when the database cannot be used and
    :class:`bot.app.db.DatabaseError` for one newer than this code.
    """
    if database_url:
        from bot.tagview.pgstore import PgGuideStore

        return PgGuideStore.open(database_url, schema=schema)
    from bot.tagview.store import GuideStore

    if path is None:
        raise ValueError("no database: give a postgresql:// URL or an SQLite file path")
    return GuideStore(path)
