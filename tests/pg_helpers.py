"""PostgreSQL for tests: a schema of its own per test, skipped (or failed in CI) without a server.

``PRGUIDE_TEST_DATABASE_URL`` names the server (default
``postgresql://127.0.0.1:5432/test``). When it cannot be reached the tests that need it
are skipped with the reason -- unless ``CI`` is true, where they fail, so a CI run never
passes without having run them.
"""

from __future__ import annotations

import os
import uuid
from urllib.parse import quote

import pytest

#: The server the PostgreSQL tests use.
TEST_DATABASE_URL = os.environ.get("PRGUIDE_TEST_DATABASE_URL") or "postgresql://127.0.0.1:5432/test"

_reachable: str | None = None  # "" when reachable, else why not (checked once per run)


def _in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")


def require_postgresql() -> str:
    """Return :data:`TEST_DATABASE_URL`, or skip (fail under ``CI``) when the server does not answer."""
    global _reachable
    if _reachable is None:
        try:
            import psycopg

            with psycopg.connect(TEST_DATABASE_URL, connect_timeout=3) as conn:
                conn.execute("SELECT 1")
            _reachable = ""
        except Exception as exc:  # noqa: BLE001 - any failure means "not usable here"
            _reachable = " ".join(str(exc).split())[:200] or type(exc).__name__
    if _reachable:
        reason = f"PostgreSQL tests skipped: {TEST_DATABASE_URL} unreachable ({_reachable}); set PRGUIDE_TEST_DATABASE_URL"
        if _in_ci():
            pytest.fail(reason.replace("skipped", "cannot run in CI"), pytrace=False)
        pytest.skip(reason)
    return TEST_DATABASE_URL


def schema_url(url: str, schema: str) -> str:
    """``url`` with ``?options=-csearch_path=SCHEMA`` so every connection uses ``schema``."""
    separator = "&" if "?" in url else "?"
    return f"{url}{separator}options={quote(f'-csearch_path={schema}')}"


@pytest.fixture
def pg_url():
    """A ``postgresql://`` URL whose ``search_path`` is a fresh schema, dropped after the test."""
    from bot.app import pg

    base = require_postgresql()
    schema = f"t_{uuid.uuid4().hex[:12]}"
    yield schema_url(base, schema)
    pg.drop_schema(base, schema)
