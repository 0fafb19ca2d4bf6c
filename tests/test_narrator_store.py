"""Contract of the narration storage: every backend passes these (SQLite here)."""

from __future__ import annotations

import pytest

from bot.narrator.store import NarrationStorage, SQLiteNarrations, cache_key


@pytest.fixture(params=["sqlite", "postgresql"])
def storage(request, tmp_path) -> NarrationStorage:
    if request.param == "postgresql":
        import bot.feature_support  # noqa: F401 - registers the narrator's migrations
        from bot.narrator.store import PgNarrations

        db = request.getfixturevalue("pg_database")
        yield PgNarrations(db)
        return
    s = SQLiteNarrations(tmp_path / "sub" / "n.db")
    yield s
    s.close()


def test_get_put_roundtrip_and_replace(storage):
    assert storage.get("k") is None
    storage.put("k", {"model": "m", "kept": 2})
    assert storage.get("k") == {"model": "m", "kept": 2}
    storage.put("k", {"model": "m", "kept": 3})
    assert storage.get("k")["kept"] == 3


def test_tokens_add_per_installation_and_day(storage):
    assert storage.tokens(1, "2026-12-01") == 0
    assert storage.add_tokens(1, "2026-12-01", 100) == 100
    assert storage.add_tokens(1, "2026-12-01", 50) == 150
    storage.add_tokens(2, "2026-12-01", 7)
    storage.add_tokens(1, "2026-12-02", 9)
    assert (storage.tokens(1, "2026-12-01"), storage.tokens(2, "2026-12-01"), storage.tokens(1, "2026-12-02")) == (150, 7, 9)


def test_reserve_tokens_stays_within_the_cap_and_add_settles(storage):
    assert storage.reserve_tokens(1, "2026-12-01", 600, 1000)
    assert not storage.reserve_tokens(1, "2026-12-01", 401, 1000) and storage.tokens(1, "2026-12-01") == 600
    assert storage.reserve_tokens(1, "2026-12-01", 400, 1000) and storage.tokens(1, "2026-12-01") == 1000
    assert not storage.reserve_tokens(2, "2026-12-01", 1001, 1000) and storage.tokens(2, "2026-12-01") == 0
    assert storage.add_tokens(1, "2026-12-01", -300) == 700  # a call that used less gives the rest back
    assert storage.add_tokens(1, "2026-12-01", -5000) == 0  # never below nothing


def test_cache_key_covers_every_part():
    base = ("o/r", 1, "sha", "e1", "m", "en")
    keys = {cache_key(*base)}
    for i, other in enumerate(("o/x", 2, "sha2", "e2", "m2", "zh")):
        keys.add(cache_key(*base[:i], other, *base[i + 1 :]))
    assert len(keys) == 7 and cache_key("O/R", *base[1:]) == cache_key(*base)
