"""Shared fixtures: where the real corpus and GitHub fixtures live, skipping when absent."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("PRGUIDE_SHARED", ROOT.parent / "shared"))
CORPUS = SHARED / "corpus" / "verl"
WEBHOOKS = SHARED / "fixtures" / "webhooks"
REST = SHARED / "fixtures" / "rest"


def _need(path: Path, what: str) -> Path:
    if not path.exists():
        pytest.skip(f"{what} not found at {path} (set PRGUIDE_SHARED to the shared/ folder)")
    return path


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark ``corpus`` every test that reads the corpus (``corpus_dir``, directly or through a fixture)."""
    for item in items:
        if "corpus_dir" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.corpus)


@pytest.fixture
def corpus_dir() -> Path:
    """The folder of real merged verl PR bundles; skips the test when absent."""
    return _need(CORPUS, "the verl PR corpus")


@pytest.fixture
def load_bundle_json(corpus_dir):
    """Return a function reading one corpus bundle (``{"pull", "files", ...}``) by PR number."""

    def load(number: int) -> dict:
        return json.loads((corpus_dir / f"{number}.json").read_text(encoding="utf-8"))

    return load


@pytest.fixture
def webhook_payload():
    """Return a function reading a real webhook payload example, e.g. ``("pull_request", "closed.payload.json")``."""

    def load(event: str, name: str) -> dict:
        path = _need(WEBHOOKS / event / name, f"webhook fixture {event}/{name}")
        return json.loads(path.read_text(encoding="utf-8"))

    return load


# --- PostgreSQL -------------------------------------------------------------------
#: The server the PostgreSQL tests use; each test gets a schema of its own there.
PG_URL = os.environ.get("PRGUIDE_TEST_DATABASE_URL", "postgresql://127.0.0.1:5432/test")
_pg_problem: list[str] = []


def _ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in ("1", "true", "yes", "on")


def _postgres_reachable() -> str | None:
    """None when PG_URL answers, else why not (checked once per run)."""
    if not _pg_problem:
        try:
            import psycopg

            with psycopg.connect(PG_URL, connect_timeout=3) as conn:
                conn.execute("SELECT 1")
            _pg_problem.append("")
        except Exception as exc:  # noqa: BLE001 - any failure means: no server for these tests
            _pg_problem.append(" ".join(str(exc).split()) or type(exc).__name__)
    return _pg_problem[0] or None


def require_postgresql() -> str:
    """Return PG_URL, or skip the test saying why when the server does not answer.

    Under CI (``CI`` true) an unreachable server fails the test instead: the CI machine
    has PostgreSQL. For tests that make several schemas (property tests, one per example).
    """
    problem = _postgres_reachable()
    if problem is not None:
        message = f"PostgreSQL not reachable at {PG_URL}: tests need it; set PRGUIDE_TEST_DATABASE_URL ({problem})"
        if _ci():
            pytest.fail(message)
        pytest.skip(message)
    return PG_URL


@pytest.fixture
def pg_schema():
    """``(url, schema)``: a fresh PostgreSQL schema on PG_URL, dropped after the test.

    Skips (fails under CI) when the server is unreachable: see :func:`require_postgresql`.
    """
    url = require_postgresql()
    import uuid

    from bot.app import pg

    schema = f"t_{uuid.uuid4().hex[:12]}"
    yield url, schema
    pg.drop_schema(url, schema)


@pytest.fixture
def pg_database(pg_schema):
    """A :class:`bot.app.pg.Database` on a fresh schema with every registered migration applied."""
    from bot.app import pg

    pg.load_components()
    url, schema = pg_schema
    db = pg.connect(url, schema=schema, min_size=1, max_size=4, timeout=5.0, migrate_components=None)
    yield db
    db.close()
