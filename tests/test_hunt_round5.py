"""Round 5 of the hunt: the PostgreSQL round-trip savings (autocommit, socket-polled pool
checks, pipelined saves, statements prepared on second use), the bounded answer cache, the
allocator trim and the tags page bound, attacked as an attacker and as an unlucky operator.

Each test fails on the code as merged (b0e4f51) and passes with its fix, or is marked
``xfail(strict=True)`` with the reason it is not fixed here."""

from __future__ import annotations

import pytest


# --- statements prepared on second use ------------------------------------------------------


def test_a_backend_that_forgot_its_prepared_statements_is_replaced_not_kept(pg_schema):
    """A pooler's server reset (PgBouncer's ``DISCARD ALL``, or a pooler restart that hands the
    client a fresh backend) drops the statements psycopg prepared; psycopg still believes
    they exist, so every later run of that statement on the connection failed with
    ``prepared statement "_pg3_0" does not exist``, and the pool kept lending it: every
    delivery that used it answered 503, forever. One failure is acceptable (a 503, the
    delivery retried); the connection must then be replaced."""
    import psycopg

    from bot.app import pg

    pg.load_components()
    url, schema = pg_schema
    db = pg.connect(url, schema=schema, min_size=1, max_size=1, timeout=5.0, migrate_components=None)
    try:
        for _ in range(3):  # prepared on its second run
            with db.autocommit() as conn:
                conn.execute("SELECT count(*) FROM jobs WHERE id > %s", (0,)).fetchone()
        with db.autocommit() as conn:
            conn.pgconn.exec_(b"DEALLOCATE ALL")  # behind psycopg's back, as the pooler does
        with pytest.raises(psycopg.Error):
            with db.autocommit() as conn:
                conn.execute("SELECT count(*) FROM jobs WHERE id > %s", (0,)).fetchone()
        for _ in range(2):
            with db.autocommit() as conn:
                assert conn.execute("SELECT count(*) FROM jobs WHERE id > %s", (0,)).fetchone() == (0,)
            with db.connection() as conn:
                assert conn.execute("SELECT count(*) FROM jobs WHERE id > %s", (0,)).fetchone() == (0,)
    finally:
        db.close()


def test_a_migration_that_retypes_a_column_does_not_break_the_other_replicas_for_good(pg_schema):
    """During a rolling upgrade one replica migrates while the others run. A statement they
    prepared before a migration changed a column's type fails with ``cached plan must not
    change result type``, again on every run (PostgreSQL does not re-plan a prepared
    statement into another result type), so the old replica answered 503 until restarted.
    After the one failure the connection is replaced and the statement runs again."""
    import psycopg

    from bot.app import pg

    pg.load_components()
    url, schema = pg_schema
    db = pg.connect(url, schema=schema, min_size=1, max_size=1, timeout=5.0, migrate_components=None)
    try:
        for _ in range(3):
            with db.autocommit() as conn:
                conn.execute("SELECT id, event FROM jobs WHERE id > %s", (0,)).fetchall()
        with psycopg.connect(url, autocommit=True) as other:
            other.execute(f'ALTER TABLE "{schema}".jobs ALTER COLUMN event TYPE varchar(200)')
        with pytest.raises(psycopg.Error):
            with db.autocommit() as conn:
                conn.execute("SELECT id, event FROM jobs WHERE id > %s", (0,)).fetchall()
        for _ in range(2):
            with db.autocommit() as conn:
                assert conn.execute("SELECT id, event FROM jobs WHERE id > %s", (0,)).fetchall() == []
    finally:
        db.close()


# --- the conditional-request cache ----------------------------------------------------------

from test_github_client import Answer, github, make_client, session  # noqa: E402,F401 - fixtures


class _EvictedInFlight(dict):
    """A shared answer cache from which another job's answers evict the entry gidgethub just
    read, while its conditional request is under way (a 4 MiB cache holds 16 big pages)."""

    def __getitem__(self, key):
        value = super().__getitem__(key)
        self.pop(key)
        return value


async def test_a_page_answered_304_keeps_its_next_link_when_the_cache_entry_was_evicted(session, github):
    """``get_page`` looked the next page's link up in the cache again after a 304: when the
    byte-bounded cache had dropped the entry meanwhile, the page was taken as the last one,
    and a pull request's file list (or a repository's labels) stopped silently after one page."""
    nxt = f'<{github.url}/repos/o/r/pulls/1/files?page=2>; rel="next"'
    github.on(
        "GET", "/repos/o/r/pulls/1/files",
        Answer(200, [{"filename": "a.py"}], {"ETag": '"p1"', "Link": nxt}),
        Answer(304, headers={"ETag": '"p1"'}),
    )
    cache = _EvictedInFlight()
    client, _ = make_client(session, github, cache=cache)
    first = await client.get_page("/repos/o/r/pulls/1/files")
    again = await client.get_page("/repos/o/r/pulls/1/files")
    assert client.calls_by_status == {200: 1, 304: 1}
    assert again.items == first.items == [{"filename": "a.py"}]
    assert again.next_url == first.next_url is not None


# --- the tags page bound ----------------------------------------------------------------------


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
async def test_the_tags_page_stays_bounded_with_more_labels_than_entries(tmp_path, request, backend):
    """``page_entries`` promises a page of the same size however many labels a repository
    gathers; with 30 labels and ``page_entries=12`` it held 30 entries (every label one).
    The page shows the 12 most used labels and links to the next ones (page 2, then 3),
    unfiltered (the kept counts) and filtered (counted from the matching guides)."""
    from test_tagview_web import Page, client_for
    from test_tagview_store import make_guide

    from bot.tagview.store import GuideStore

    if backend == "sqlite":
        store = GuideStore(tmp_path / "labels.db")
    else:
        from bot.tagview.pgstore import PgGuideStore

        store = PgGuideStore.open(request.getfixturevalue("pg_url"))
    with store:
        number = 0
        for index in range(1, 31):  # area/01 on 1 guide, ... area/05 and area/30 on 2: ranks differ
            label = f"area/{index:02d}"
            details = [{"name": label, "source": "rule", "rule": "r"}]
            for _ in range(2 if index % 5 == 0 else 1):
                number += 1
                store.save(make_guide(number, labels=[label], label_details=details), visibility="public")
        c = await client_for(store, rows_per_label=3, page_entries=12)
        try:
            seen: list[str] = []
            for page_number, query in enumerate(("", "?page=2", "?page=3", "?q=thing&page=1"), 1):
                html = await (await c.get("/repos/acme/rocket/tags" + query)).text()
                summary = Page(html).summary()
                assert sum(len(rows) for _, _, rows in summary) <= 12, query
                labels = [name for name, _, _ in summary]
                assert labels == sorted(labels), query  # shown by name
                if page_number == 1:  # the most used first: the six labels on two guides
                    assert {f"area/{i:02d}" for i in (5, 10, 15, 20, 25, 30)} <= set(labels)
                    assert "Labels 1-12 of 30, most used first" in html and "Next labels: 18 more" in html
                    assert 'href="/repos/acme/rocket/tags?page=2"' in html
                if page_number <= 3:
                    seen += labels
                if page_number == 3:
                    assert len(labels) == 6 and "Next labels" not in html and "Previous labels" in html
                if page_number == 4:  # filtered: every guide matches, the same first page
                    assert len(labels) == 12 and "of 30" in html and "Next labels: 18 more" in html
            assert sorted(seen) == [f"area/{i:02d}" for i in range(1, 31)]  # every label on one page
            past = await (await c.get("/repos/acme/rocket/tags?page=9")).text()
            assert Page(past).summary() == [] and '<a href="/repos/acme/rocket/tags" rel="prev">' in past and "Labels 0" not in past
        finally:
            await c.close()


# --- hostile text on PostgreSQL -----------------------------------------------------------------

from pg_helpers import pg_url  # noqa: E402,F401 - fixture


def test_a_title_with_a_nul_character_does_not_keep_its_guide_out_of_the_tag_view(pg_url):  # noqa: F811
    """PostgreSQL's text cannot hold NUL (0x00); a pull request's title (or author, summary,
    label) carrying one made every attempt at saving its guide fail with ``DataError``, so
    the guide never reached the tag view (the SQLite store keeps it). The NUL is dropped."""
    from test_tagview_store import make_guide

    from bot.tagview.pgstore import PgGuideStore

    with PgGuideStore.open(pg_url) as store:
        store.save(
            make_guide(3, title="fix\x00 the thing", labels=["bu\x00g"],
                       label_details=[{"name": "bu\x00g", "source": "rule", "rule": "r"}]),
            visibility="public", label_descriptions={"bu\x00g": "a\x00 bug"},
        )
        found = store.query("acme/rocket")
        assert found.total == 1
        assert found.items[0].title == "fix the thing"


async def test_a_nul_in_a_tag_view_address_is_a_bad_request_not_an_outage(pg_url):  # noqa: F811
    """On PostgreSQL a NUL (``%00``) in a filter or a repository name reached the database,
    which refused it (``DataError``), and the tag view answered 503 "unavailable, retry in
    30 s" to anyone who asked: an outage signal for monitoring, from one request. A NUL
    matches nothing stored: a bad filter is 400, an unknown repository 404."""
    from test_tagview_store import make_guide
    from test_tagview_web import client_for

    from bot.tagview.pgstore import PgGuideStore

    with PgGuideStore.open(pg_url) as store:
        store.save(make_guide(3), visibility="public")
        c = await client_for(store)
        try:
            for query in ({"q": "a\x00"}, {"label": "bu\x00g"}, {"area": "c\x00"}):
                for page in ("tags", "tags.json", "tags.atom"):
                    answer = await c.get(f"/repos/acme/rocket/{page}", params=query)
                    assert answer.status == 400, (page, query, answer.status)
            assert (await c.get("/repos/acme/rocket/digest", params={"label": "bu\x00g"})).status in (200, 400)
            assert (await c.get("/repos/acme/ro%00cket/tags")).status == 404
            assert (await c.get("/repos/acme/rocket/tags")).status == 200
        finally:
            await c.close()


def test_a_connection_given_back_in_autocommit_is_not_lent_for_a_transaction(pg_schema):
    """``Database.autocommit`` sets the lent connection back to transaction mode, silently
    giving up when it cannot (a transaction left open on it); the pool then rolled the
    transaction back but kept the connection in autocommit, and the next ``connection()``
    borrower's "transaction" committed each statement by itself: not atomic."""
    from bot.app import pg

    pg.load_components()
    url, schema = pg_schema
    db = pg.connect(url, schema=schema, min_size=1, max_size=1, timeout=5.0, migrate_components=None)
    try:
        with pytest.raises(RuntimeError):
            with db.autocommit() as conn:
                conn.execute("BEGIN")
                raise RuntimeError("interrupted with a transaction open")
        with db.connection() as conn:
            assert conn.autocommit is False
    finally:
        db.close()
