"""The tag view's guide store: one contract suite run against every backend (SQLite, PostgreSQL).

Tests taking ``store`` run once per backend; the PostgreSQL run uses a schema of its own
on ``PRGUIDE_TEST_DATABASE_URL`` (skipped with the reason when unreachable, failed in CI).
Tests taking ``sqlite_store`` or ``pg_store`` check one backend's own machinery (query
plans, migrations, sharing a connection).
"""

from __future__ import annotations

import sqlite3
import threading
from datetime import date, datetime, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.app.db import open_database, schema_version
from bot.tagview.schema import COMPONENT, migrations
from bot.tagview.store import GuideDataError, GuideFilter, GuideStorage, GuideStore
from pg_helpers import pg_url  # noqa: F401 - fixture


def make_guide(number: int, **changes) -> dict:
    """A guide shaped like ``Guide.data``, merged ``number`` days into 2026 (UTC)."""
    data = {
        "repository": "acme/rocket",
        "number": number,
        "title": f"[core] fix: thing {number}",
        "url": f"https://github.com/acme/rocket/pull/{number}",
        "author": "octocat",
        "merged_at": f"2026-01-{number:02d}T12:00:00Z" if number <= 28 else None,
        "labels": ["bug"],
        "label_details": [{"name": "bug", "source": "rule", "rule": "fix-title"}],
        "areas": ["core"],
        "change_type": "fix",
        "breaking": False,
        "importance": 5,
        "importance_factors": [{"points": 5, "reason": "fix", "source": "rule"}],
        "reading_level": "quick",
        "reading_minutes": 4,
        "audience": ["maintainers"],
        "summary": f"Fixes thing {number}.",
        "focus": [{"file": "rocket/core.py", "symbol": "launch", "reason": "retry loop changed"}],
        "follow_ups": [],
        "truncated": False,
        "lang": "en",
        "engine_version": "1",
        "markdown": f"## Guide {number}\n",
    }
    data.update(changes)
    return data


@pytest.fixture
def sqlite_store(tmp_path):
    with GuideStore(tmp_path / "prguide.db") as s:
        yield s


@pytest.fixture
def pg_store(pg_url):  # noqa: F811 - the fixture imported above
    from bot.tagview.pgstore import PgGuideStore

    with PgGuideStore.open(pg_url) as s:
        yield s


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request) -> GuideStorage:
    """The guide store under test, once per backend."""
    return request.getfixturevalue({"sqlite": "sqlite_store", "postgresql": "pg_store"}[request.param])


def sql_rows(store, query: str) -> list[tuple]:
    """Rows of ``query`` (no parameters) run on the store's own database."""
    if isinstance(store, GuideStore):
        return [tuple(r) for r in store.connection.execute(query).fetchall()]
    with store.database.pool.connection() as conn:
        return [tuple(r) for r in conn.execute(query).fetchall()]


def numbers(page) -> list[int]:
    return [row.number for row in page.items]


def test_round_trip_keeps_every_key_including_unknown_ones(store):
    guide = make_guide(3, extra={"nested": [1, 2]}, title="数据 <b>")
    store.save(guide)
    assert store.get("acme/rocket", 3) == guide
    row = store.query("acme/rocket").items[0]
    assert (row.number, row.title, row.importance, row.reading_level, row.reading_minutes) == (3, "数据 <b>", 5, "quick", 4)
    assert row.labels == ("bug",) and row.areas == ("core",)
    assert row.merged_at == "2026-01-03T12:00:00Z" and row.merged_date == "2026-01-03"
    assert store.get("acme/rocket", 4) is None


def test_missing_optional_keys_are_tolerated(store):
    store.save({"repository": "acme/rocket", "number": 9, "title": "bare"})
    row = store.query("acme/rocket").items[0]
    assert (row.importance, row.reading_level, row.merged_at, row.labels, row.summary) == (None, None, None, (), "")
    assert store.labels("acme/rocket") == []


def test_refresh_replaces_the_row_and_its_labels(store):
    store.save(make_guide(1, labels=["bug", "ci"]))
    store.save(make_guide(1, title="renamed", labels=["docs"], label_details=[], importance=9))
    page = store.query("acme/rocket")
    assert page.total == 1 and page.items[0].title == "renamed" and page.items[0].importance == 9
    assert [(item.name, item.count) for item in store.labels("acme/rocket")] == [("docs", 1)]
    assert store.query("acme/rocket", label="bug").total == 0
    assert store.query("acme/rocket", search="renamed").total == 1
    assert store.query("acme/rocket", search="thing").total == 0


def test_label_provenance_and_descriptions_are_kept(store):
    store.save(
        make_guide(1, labels=["bug", "needs-docs"], label_details=[
            {"name": "bug", "source": "rule", "rule": "fix-title", "description": "Something is broken"},
            {"name": "needs-docs", "source": "human", "rule": None},
        ]),
        label_descriptions={"needs-docs": "Docs must follow"},
    )
    rows = sql_rows(store, "SELECT label, source, rule FROM tagview_labels ORDER BY label")
    assert rows == [("bug", "rule", "fix-title"), ("needs-docs", "human", None)]
    assert [(i.name, i.count, i.description) for i in store.labels("acme/rocket")] == [
        ("bug", 1, "Something is broken"),
        ("needs-docs", 1, "Docs must follow"),
    ]


@pytest.mark.parametrize(
    "changes, key",
    [
        ({"repository": "no-slash"}, "repository"),
        ({"repository": "acme/.."}, "repository"),
        ({"number": 0}, "number"),
        ({"number": "7"}, "number"),
        ({"title": None}, "title"),
        ({"importance": 11}, "importance"),
        ({"reading_level": "slow"}, "reading_level"),
        ({"merged_at": "yesterday"}, "merged_at"),
        ({"labels": "bug"}, "labels"),
        ({"label_details": [{"source": "rule"}]}, "label_details"),
    ],
)
def test_bad_guide_data_is_refused_and_nothing_is_written(store, changes, key):
    store.save(make_guide(1, title="before"))
    with pytest.raises(GuideDataError, match=key):
        store.save({**make_guide(1), **changes})
    assert store.get("acme/rocket", 1)["title"] == "before"
    assert store.query("acme/rocket").total == 1


def test_failed_write_rolls_back_the_whole_save(sqlite_store, monkeypatch):
    sqlite_store.save(make_guide(1, title="before", labels=["bug"]))

    class Boom(Exception):
        pass

    real = sqlite_store.connection

    class Failing:
        """Passes everything through but fails on the label insert."""

        def execute(self, sql, *args):
            return real.execute(sql, *args)

        def executemany(self, sql, *args):
            if "tagview_labels" in sql:
                raise Boom()
            return real.executemany(sql, *args)

    monkeypatch.setattr(sqlite_store, "_conn", Failing())
    with pytest.raises(Boom):
        sqlite_store.save(make_guide(1, title="after", labels=["ci"]))
    monkeypatch.setattr(sqlite_store, "_conn", real)
    assert sqlite_store.get("acme/rocket", 1)["title"] == "before"
    assert [i.name for i in sqlite_store.labels("acme/rocket")] == ["bug"]


def test_migrations_run_on_an_empty_database_and_reopening_is_idempotent(tmp_path):
    path = tmp_path / "fresh.db"
    with GuideStore(path) as first:
        first.save(make_guide(1))
    conn = open_database(path)
    assert schema_version(conn, COMPONENT) == len(migrations()) == 6
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'index')")}
    assert {"tagview_guides", "tagview_labels", "tagview_labels_by_label", "tagview_guide_data", "tagview_guide_cards", "tagview_guide_files"} <= tables
    conn.close()
    with GuideStore(path) as again:
        assert again.query("acme/rocket").total == 1
    conn = open_database(path)
    assert schema_version(conn, COMPONENT) == 6
    conn.close()


def test_store_shares_a_database_connection_it_does_not_close(tmp_path):
    conn = open_database(tmp_path / "shared.db")
    conn.execute("CREATE TABLE jobs (id INTEGER PRIMARY KEY)")
    with GuideStore(conn) as s:
        s.save(make_guide(1))
    assert conn.execute("SELECT COUNT(*) FROM tagview_guides").fetchone()[0] == 1
    assert conn.execute("SELECT COUNT(*) FROM jobs").fetchone()[0] == 0


def test_one_store_may_be_shared_by_threads(store):
    def work(first: int) -> None:
        for number in range(first, first + 40):
            store.save(make_guide(number, labels=["bug", f"t{first}"]))
            store.sections("acme/rocket", GuideFilter(level="quick"))

    threads = [threading.Thread(target=work, args=(start,)) for start in (1, 101, 201, 301)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert store.query("acme/rocket").total == 160
    assert [(i.name, i.count) for i in store.labels("acme/rocket")][0] == ("bug", 160)


def test_the_label_index_serves_label_grouping(sqlite_store):
    sqlite_store.save(make_guide(1))
    plan = sqlite_store.connection.execute(
        "EXPLAIN QUERY PLAN SELECT number FROM tagview_labels WHERE repository = ? AND label = ? "
        "ORDER BY merged_at DESC, number DESC LIMIT 10",
        ("acme/rocket", "bug"),
    ).fetchall()
    detail = " ".join(str(tuple(r)) for r in plan)
    assert "tagview_labels_by_label" in detail and "TEMP B-TREE" not in detail


def test_filtered_sections_scan_the_covering_label_index_once(sqlite_store):
    sqlite_store.save(make_guide(1))
    statements: list[str] = []
    sqlite_store.connection.set_trace_callback(statements.append)
    sqlite_store.sections("acme/rocket", GuideFilter(level="deep", search="thing"))
    sqlite_store.connection.set_trace_callback(None)
    ranked = next(sql for sql in statements if "ROW_NUMBER" in sql)
    plan = " ".join(str(tuple(r)) for r in sqlite_store.connection.execute("EXPLAIN QUERY PLAN " + ranked))
    assert "COVERING INDEX tagview_labels_by_label" in plan
    assert "SCAN l" not in plan and "SCAN tagview_labels" not in plan


def test_visibility_defaults_to_private_and_is_kept_on_refresh(store):
    store.save(make_guide(1))
    assert store.visibility("acme/rocket") == "private"
    store.save(make_guide(2), visibility="public")
    store.save(make_guide(3))
    assert store.visibility("ACME/Rocket") == "public"
    store.set_visibility("acme/rocket", "private")
    assert [(r.name, r.visibility, r.guides) for r in store.repositories()] == [("acme/rocket", "private", 3)]
    with pytest.raises(ValueError):
        store.set_visibility("acme/rocket", "internal")
    with pytest.raises(GuideDataError):
        store.save(make_guide(4), visibility="secret")


@pytest.fixture
def filled(store):
    store.save(make_guide(1, labels=["bug"], areas=["core"], importance=2, reading_level="skim"))
    store.save(make_guide(2, labels=["bug", "ci"], areas=["ci"], importance=7, reading_level="deep", title="Speed up rollout"))
    store.save(make_guide(3, labels=["Docs"], areas=["docs"], importance=3, reading_level="skip", title="文档 更新 rollout"))
    store.save(make_guide(4, labels=["bug"], areas=["core", "ci"], importance=9, reading_level="deep",
                          focus=[{"file": "rocket/ckpt.py", "symbol": "save_100%", "reason": "checkpoint format"}]))
    store.save(make_guide(30, labels=["bug"], merged_at=None, title="unmerged but stored"))
    store.save(make_guide(5, repository="other/repo", labels=["bug"]))
    return store


def test_query_orders_newest_first_with_unmerged_last(filled):
    assert numbers(filled.query("acme/rocket")) == [4, 3, 2, 1, 30]


@pytest.mark.parametrize(
    "filters, expected",
    [
        ({"label": "bug"}, [4, 2, 1, 30]),
        ({"label": "BUG"}, [4, 2, 1, 30]),
        ({"label": "docs"}, [3]),
        ({"area": "ci"}, [4, 2]),
        ({"level": "deep"}, [4, 2]),
        ({"min_importance": 7}, [4, 2]),
        ({"since": date(2026, 1, 2)}, [4, 3, 2]),
        ({"until": date(2026, 1, 2)}, [2, 1]),
        ({"since": "2026-01-02", "until": "2026-01-03"}, [3, 2]),
        ({"since": datetime(2026, 1, 2, 12, 0, 1, tzinfo=timezone.utc)}, [4, 3]),
        ({"search": "rollout"}, [3, 2]),
        ({"search": "ROLL"}, [3, 2]),
        ({"search": "文档"}, [3]),
        ({"search": "checkpoint"}, [4]),
        ({"search": "ckpt.py"}, [4]),
        ({"search": "100%"}, [4]),
        ({"search": "0%"}, [4]),
        ({"search": "g_1"}, []),
        ({"search": "e_1"}, [4]),
        ({"search": "speed rollout"}, [2]),
        ({"search": "speed nothing"}, []),
        ({"label": "bug", "level": "deep", "min_importance": 8}, [4]),
    ],
)
def test_query_filters(filled, filters, expected):
    assert numbers(filled.query("acme/rocket", **filters)) == expected


def test_query_pages(filled):
    first = filled.query("acme/rocket", limit=2)
    assert numbers(first) == [4, 3] and first.total == 5 and first.next_offset == 2
    last = filled.query("acme/rocket", limit=2, offset=4)
    assert numbers(last) == [30] and last.next_offset is None
    with pytest.raises(ValueError):
        filled.query("acme/rocket", limit=0)
    with pytest.raises(ValueError):
        filled.query("acme/rocket", level="slow")
    with pytest.raises(ValueError):
        filled.query("acme/rocket", since="last week")


def test_sections_group_by_label_newest_first(filled):
    sections = filled.sections("acme/rocket", per_label=2)
    assert [(s.name, s.count, [r.number for r in s.rows]) for s in sections] == [
        ("bug", 4, [4, 2]),
        ("ci", 1, [2]),
        ("Docs", 1, [3]),
    ]


def test_sections_follow_filters(filled):
    sections = filled.sections("acme/rocket", GuideFilter(level="deep"), per_label=1)
    assert [(s.name, s.count, [r.number for r in s.rows]) for s in sections] == [("bug", 2, [4]), ("ci", 1, [2])]
    only = filled.sections("acme/rocket", GuideFilter(label="CI"))
    assert [(s.name, s.count) for s in only] == [("ci", 1)]
    assert filled.sections("acme/rocket", GuideFilter(search="zzz")) == []


def test_delete_forgets_a_guide(filled):
    assert filled.delete("acme/rocket", 4) is True
    assert filled.delete("acme/rocket", 4) is False
    assert filled.get("acme/rocket", 4) is None
    assert filled.query("acme/rocket", search="checkpoint").total == 0
    assert [(i.name, i.count) for i in filled.labels("acme/rocket")][0] == ("bug", 3)


def test_full_text_search_is_used_when_sqlite_has_fts5(sqlite_store):
    assert sqlite_store.full_text_search is True
    assert sqlite_store.connection.execute("SELECT 1 FROM sqlite_master WHERE name = 'tagview_search'").fetchone()


_WORDS = ["rollout", "ckpt", "vllm", "fix", "文档更新", "a_b", "50%", "Ray"]


@settings(max_examples=40, deadline=None)
@given(
    titles=st.lists(st.lists(st.sampled_from(_WORDS), min_size=1, max_size=3).map(" ".join), min_size=1, max_size=6),
    query=st.lists(st.sampled_from(_WORDS + ["ol", "LL", "文档", "x"]), min_size=1, max_size=2).map(" ".join),
)
def test_full_text_and_plain_search_agree(titles, query):
    """The FTS5 trigram path and the LIKE fallback find the same guides."""
    with GuideStore(sqlite3.connect(":memory:", isolation_level=None)) as s:
        for number, title in enumerate(titles, start=1):
            s.save(make_guide(number, title=title, focus=[]))
        with_fts = numbers(s.query("acme/rocket", search=query))
        s._fts = False
        without = numbers(s.query("acme/rocket", search=query))
    assert with_fts == without
    expected = [n for n, t in enumerate(titles, start=1) if all(w.casefold() in t.casefold() for w in query.split())]
    assert sorted(with_fts) == sorted(expected)


def test_get_many_returns_stored_data_by_number_and_skips_unknown_ones(store):
    store.save(make_guide(1, extra={"kept": True}))
    store.save(make_guide(2))
    store.save(make_guide(3, repository="acme/other"))
    found = store.get_many("acme/rocket", [2, 1, 3, 99, 2])
    assert sorted(found) == [1, 2]
    assert found[1] == store.get("acme/rocket", 1) and found[1]["extra"] == {"kept": True}
    assert store.get_many("acme/rocket", []) == {}


def test_get_many_reads_more_numbers_than_one_statement_takes(store):
    for number in range(1, 601):
        store.save(make_guide(number, merged_at=None))
    assert sorted(store.get_many("acme/rocket", range(1, 700))) == list(range(1, 601))


def test_briefs_tell_what_choosing_a_digest_needs_of_a_window(filled):
    filled.save(make_guide(6, areas=[], reading_level="quick", importance=None, breaking=True))
    briefs = sorted(filled.briefs("acme/rocket", since="2026-01-02", until=date(2026, 1, 6)), key=lambda b: b.number)
    assert [(b.number, b.merged_at, b.reading_level, b.importance, b.breaking, b.area) for b in briefs] == [
        (2, "2026-01-02T12:00:00Z", "deep", 7, False, "ci"),
        (3, "2026-01-03T12:00:00Z", "skip", 3, False, "docs"),
        (4, "2026-01-04T12:00:00Z", "deep", 9, False, "core"),
        (6, "2026-01-06T12:00:00Z", "quick", None, True, ""),
    ]
    assert sorted(b.number for b in filled.briefs("acme/rocket", label="BUG")) == [1, 2, 4, 6, 30]
    assert [b.merged_at for b in filled.briefs("acme/rocket", label="bug") if b.number == 30] == [None]
    with pytest.raises(ValueError):
        filled.briefs("acme/rocket", since="last week")


def test_rows_are_the_listed_rows_by_number_and_skip_unknown_ones(filled):
    listed = {row.number: row for row in filled.query("acme/rocket").items}
    assert filled.rows("acme/rocket", [4, 30, 1, 5, 99]) == {n: listed[n] for n in (1, 4, 30)}
    assert filled.rows("acme/rocket", []) == {}


# -- PostgreSQL's own machinery ---------------------------------------------------------


def test_pg_failed_write_rolls_back_the_whole_save(pg_store, monkeypatch):
    pg_store.save(make_guide(1, title="before", labels=["bug"]))

    class Boom(Exception):
        pass

    def fail(*args, **kwargs):
        raise Boom()

    monkeypatch.setattr(pg_store, "_insert_labels", fail)
    with pytest.raises(Boom):
        pg_store.save(make_guide(1, title="after", labels=["ci"]))
    monkeypatch.undo()
    assert pg_store.get("acme/rocket", 1)["title"] == "before"
    assert [i.name for i in pg_store.labels("acme/rocket")] == ["bug"]


def test_pg_search_uses_the_trigram_index(pg_store):
    """With pg_trgm, a 3+ character word is answered from the GIN index, not by scanning."""
    assert pg_store.full_text_search is True
    for number in range(1, 21):
        pg_store.save(make_guide(number, title=f"rollout {number}"))
    with pg_store.database.pool.connection() as conn:
        conn.execute("SET LOCAL enable_seqscan = off")
        plan = " ".join(r[0] for r in conn.execute(
            "EXPLAIN SELECT id FROM tagview_guides g WHERE (g.title || ' ' || g.focus_text) ILIKE '%roll%'"
        ))
    assert "tagview_guides_search" in plan


def test_pg_migrations_are_recorded_and_reopening_is_idempotent(pg_url):  # noqa: F811
    from bot.app import pg
    from bot.tagview.pg_schema import MIGRATIONS
    from bot.tagview.pgstore import PgGuideStore

    with PgGuideStore.open(pg_url) as first:
        first.save(make_guide(1))
        assert pg.applied_versions(first.database)["tagview"] == len(MIGRATIONS)
    with PgGuideStore.open(pg_url) as again:
        assert again.query("acme/rocket").total == 1
        assert pg.applied_versions(again.database)["tagview"] == len(MIGRATIONS)


_SEARCH_WORDS = ["rollout", "ckpt", "vllm", "fix", "文档更新", "a_b", "50%", "Ray", "Ünïcode", "MEGATRON"]


@settings(max_examples=25, deadline=None)
@given(
    titles=st.lists(st.lists(st.sampled_from(_SEARCH_WORDS), min_size=1, max_size=3).map(" ".join), min_size=1, max_size=6),
    query=st.lists(st.sampled_from(_SEARCH_WORDS + ["oll", "LLM", "文档", "b_", "0%", "tron", "fix ckpt"]), min_size=1, max_size=2).map(" ".join),
)
def test_both_backends_find_the_same_guides(titles, query):
    """"Same results": for words of 3+ characters, the same PRs in the same order on SQLite and PostgreSQL."""
    import uuid

    from bot.app import pg
    from bot.tagview.pgstore import PgGuideStore
    from pg_helpers import require_postgresql, schema_url

    base = require_postgresql()
    schema = f"t_{uuid.uuid4().hex[:12]}"
    try:
        with GuideStore(sqlite3.connect(":memory:", isolation_level=None)) as lite, \
                PgGuideStore.open(schema_url(base, schema), max_size=1) as post:
            for number, title in enumerate(titles, start=1):
                guide = make_guide(number, title=title, focus=[{"file": "x.py", "reason": title[::-1]}],
                                   merged_at="2026-01-01T00:00:00Z")  # one instant: ties order by number
                lite.save(guide)
                post.save(guide)
            on_sqlite = lite.query("acme/rocket", search=query)
            on_pg = post.query("acme/rocket", search=query)
            assert numbers(on_sqlite) == numbers(on_pg) and on_sqlite.total == on_pg.total
            assert [(s.name, s.count) for s in lite.sections("acme/rocket", GuideFilter(search=query))] == \
                [(s.name, s.count) for s in post.sections("acme/rocket", GuideFilter(search=query))]
    finally:
        pg.drop_schema(base, schema)


# -- kept counts --------------------------------------------------------------------------


def recounted(store, repository: str = "acme/rocket") -> tuple[list, list, int]:
    """Labels, areas (``(name casefolded, guides)``, sorted) and the guide count, counted from the rows themselves."""
    labels = sql_rows(store, f"SELECT label, COUNT(*) FROM tagview_labels WHERE repository = '{repository}' GROUP BY label")
    areas = sql_rows(store, f"SELECT area, COUNT(*) FROM tagview_areas WHERE repository = '{repository}' GROUP BY area")
    guides = sql_rows(store, f"SELECT COUNT(*) FROM tagview_guides WHERE repository = '{repository}'")[0][0]
    return sorted((n.casefold(), c) for n, c in labels), sorted((n.casefold(), c) for n, c in areas), guides


def kept(store, repository: str = "acme/rocket") -> tuple[list, list, int]:
    """The same, as the store answers it."""
    guides = {r.name: r.guides for r in store.repositories()}.get(repository, 0)
    return (
        sorted((i.name.casefold(), i.count) for i in store.labels(repository)),
        sorted((name.casefold(), count) for name, count in store.areas(repository)),
        guides,
    )


def test_kept_counts_follow_saves_refreshes_and_deletes(store):
    store.save(make_guide(1, labels=["bug", "ci"], areas=["core", "docs"]))
    store.save(make_guide(2, labels=["BUG"], areas=["Core"]))
    store.save(make_guide(3, labels=[], areas=[]))
    store.save(make_guide(1, labels=["docs", "Bug"], areas=["docs"]))  # a refresh: ci and core leave, docs arrives
    store.save({**make_guide(4), "repository": "acme/other"})
    assert kept(store) == recounted(store) == ([("bug", 2), ("docs", 1)], [("core", 1), ("docs", 1)], 3)
    assert store.delete("acme/rocket", 2) and not store.delete("acme/rocket", 2)
    assert kept(store) == recounted(store) == ([("bug", 1), ("docs", 1)], [("docs", 1)], 2)
    assert store.query("acme/rocket").total == 2 and store.query("acme/rocket", label="BUG").total == 1
    assert store.query("acme/rocket", label="ci").total == 0 and store.query("acme/rocket", label="nope").total == 0
    assert [(s.name.casefold(), s.count) for s in store.sections("acme/rocket")] == [("bug", 1), ("docs", 1)]
    assert kept(store, "acme/other") == ([("bug", 1)], [("core", 1)], 1)
    rows = sql_rows(store, "SELECT kind, name, guides FROM tagview_counts WHERE repository = 'acme/rocket' AND guides > 0")
    assert sorted((k, n.casefold(), g) for k, n, g in rows) == [("area", "docs", 1), ("label", "bug", 1), ("label", "docs", 1)]


def test_a_failed_save_leaves_the_counts_as_they_were(sqlite_store, monkeypatch):
    sqlite_store.save(make_guide(1, labels=["bug"], areas=["core"]))
    real = sqlite_store.connection

    class Failing:
        def execute(self, sql, *args):
            if "tagview_label_info" in sql:
                raise RuntimeError("boom")
            return real.execute(sql, *args)

        def executemany(self, sql, *args):
            if "tagview_label_info" in sql:
                raise RuntimeError("boom")
            return real.executemany(sql, *args)

    monkeypatch.setattr(sqlite_store, "_conn", Failing())
    with pytest.raises(RuntimeError):
        sqlite_store.save(make_guide(2, labels=["bug", "ci"], areas=["docs"]))
    monkeypatch.setattr(sqlite_store, "_conn", real)
    assert kept(sqlite_store) == recounted(sqlite_store) == ([("bug", 1)], [("core", 1)], 1)


@settings(max_examples=40, deadline=None)
@given(st.lists(
    st.tuples(
        st.sampled_from(["save", "save", "save", "delete"]), st.integers(1, 6),
        st.lists(st.sampled_from(["bug", "Bug", "ci", "docs", "数据"]), max_size=3),
        st.lists(st.sampled_from(["core", "CORE", "docs"]), max_size=2),
    ),
    max_size=25,
))
def test_kept_counts_equal_a_recount_after_any_saves_and_deletes(operations):
    with GuideStore(sqlite3.connect(":memory:", isolation_level=None)) as store:
        for action, number, labels, areas in operations:
            if action == "save":
                store.save(make_guide(number, labels=labels, label_details=[], areas=areas))
            else:
                store.delete("acme/rocket", number)
            assert kept(store) == recounted(store)


def test_lists_and_unfiltered_pages_read_the_kept_counts_not_every_row(sqlite_store):
    """The label and area lists, the repository list, the unfiltered sections and the unfiltered or
    one-label totals count nothing per request: their cost does not grow with the stored guides."""
    for number in range(1, 21):
        sqlite_store.save(make_guide(number, labels=["bug", "ci"] if number % 2 else ["bug"]))
    statements = []
    sqlite_store.connection.set_trace_callback(statements.append)
    try:
        sqlite_store.labels("acme/rocket")
        sqlite_store.areas("acme/rocket")
        sqlite_store.repositories()
        sqlite_store.sections("acme/rocket")
        sqlite_store.query("acme/rocket", limit=5)
        sqlite_store.query("acme/rocket", label="ci", limit=5)
    finally:
        sqlite_store.connection.set_trace_callback(None)
    assert statements and not [s for s in statements if "COUNT(" in s.upper() or "GROUP BY" in s.upper()]


def _store_at_version_two(store_kind: str, where):
    """Guides written by the version-2 tables (no kept counts), as a database from before them holds."""
    rows = [
        ("INSERT INTO tagview_repositories (name, visibility) VALUES ('acme/rocket', 'public')", ()),
    ]
    for number, labels, areas in ((1, ["bug", "ci"], ["core"]), (2, ["BUG"], ["core", "docs"]), (3, [], [])):
        rows.append((
            "INSERT INTO tagview_guides (id, repository, number, title, stored_at) "
            f"VALUES ({number}, 'acme/rocket', {number}, 't', '2026-01-01T00:00:00Z')", ()))
        rows += [(f"INSERT INTO tagview_labels (guide_id, repository, label, number) VALUES ({number}, 'acme/rocket', '{x}', {number})", ())
                 for x in labels]
        rows += [(f"INSERT INTO tagview_areas (guide_id, repository, area) VALUES ({number}, 'acme/rocket', '{x}')", ())
                 for x in areas]
    return rows


def test_migration_counts_the_guides_already_stored(tmp_path):
    from bot.app.db import migrate

    path = tmp_path / "old.db"
    conn = open_database(path)
    migrate(conn, COMPONENT, migrations()[:2])
    for sql, params in _store_at_version_two("sqlite", conn):
        conn.execute(sql, params)
    conn.close()
    with GuideStore(path) as store:
        assert kept(store) == recounted(store) == ([("bug", 2), ("ci", 1)], [("core", 2), ("docs", 1)], 3)


def test_pg_migration_counts_the_guides_already_stored(pg_url, monkeypatch):  # noqa: F811
    from bot.app import pg
    from bot.tagview.pg_schema import COMPONENT as PG_COMPONENT
    from bot.tagview.pg_schema import MIGRATIONS
    from bot.tagview.pgstore import PgGuideStore

    schema = pg_url.rsplit("search_path%3D", 1)[1]
    base = pg_url.split("?", 1)[0]
    monkeypatch.setitem(pg.MIGRATIONS, PG_COMPONENT, tuple(MIGRATIONS[:2]))
    pg.migrate(base, schema, [PG_COMPONENT])
    monkeypatch.undo()
    import psycopg

    with psycopg.connect(pg_url, autocommit=True) as conn:
        for sql, params in _store_at_version_two("postgresql", conn):
            conn.execute(sql.replace("'2026-01-01T00:00:00Z'", "now()"), params)
    with PgGuideStore.open(pg_url) as store:
        assert kept(store) == recounted(store) == ([("bug", 2), ("ci", 1)], [("core", 2), ("docs", 1)], 3)
