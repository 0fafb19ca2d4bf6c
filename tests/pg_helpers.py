"""PostgreSQL for the tag-view and copy tests, on top of the ``pg_schema`` fixture in ``conftest.py``.

``pg_url`` is a ``postgresql://`` URL whose ``search_path`` is the test's own schema, for
code that takes a URL (``prguide view --database-url``, ``prguide db copy``). Like
``pg_schema`` it skips when ``PRGUIDE_TEST_DATABASE_URL`` is unreachable, and fails under
``CI``.
"""

from __future__ import annotations

from urllib.parse import quote

import pytest
from conftest import PG_URL, _ci, _postgres_reachable

#: The server the PostgreSQL tests use.
TEST_DATABASE_URL = PG_URL


def require_postgresql() -> str:
    """Return :data:`TEST_DATABASE_URL`, or skip (fail under ``CI``) when the server does not answer.

    For tests that make several schemas (property tests, one per example).
    """
    problem = _postgres_reachable()
    if problem is not None:
        message = f"PostgreSQL not reachable at {PG_URL}: tests need it; set PRGUIDE_TEST_DATABASE_URL ({problem})"
        if _ci():
            pytest.fail(message)
        pytest.skip(message)
    return PG_URL


def schema_url(url: str, schema: str) -> str:
    """``url`` with ``?options=-csearch_path=SCHEMA`` so every connection uses ``schema``."""
    separator = "&" if "?" in url else "?"
    return f"{url}{separator}options={quote(f'-csearch_path={schema}')}"


@pytest.fixture
def pg_url(pg_schema):
    """A URL on the test's own schema (``pg_schema``: created by the first migration, dropped after)."""
    url, schema = pg_schema
    return schema_url(url, schema)
