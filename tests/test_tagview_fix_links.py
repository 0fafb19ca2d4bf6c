"""The tag view shows the links between pull requests: a fix's entry names the pull request whose
code it fixes, a reverted one says which pull request reverted it, and the digest has a group of
the window's fixes to the window before; on SQLite and PostgreSQL alike, in both languages."""

from __future__ import annotations

from datetime import date

import pytest
from pg_helpers import pg_url  # noqa: F401 - fixture
from test_tagview_store import make_guide, pg_store, sqlite_store  # noqa: F401 - fixtures
from test_tagview_web import client_for

from bot.tagview.digest import FixOfEarlier, fixes_of_earlier, load_digest, make_entry
from bot.tagview.guide_data import guide_cards
from bot.tagview.i18n import Messages

WEEK = (date(2026, 3, 9), date(2026, 3, 15))


def merged(number: int, day: str, **changes) -> dict:
    return make_guide(number, merged_at=f"{day}T10:00:00Z", **changes)


def fix_of(number: int, day: str, origin: int | None, **changes) -> dict:
    history = {"status": "ok", "fixes_code_from": origin, "candidates": [{"number": origin, "lines": 3}] if origin else []}
    return merged(number, day, history=history, title=f"fix: thing {number}", **changes)


def fill(store) -> None:
    store.save(merged(10, "2026-03-03", change_type="feature", title="Add the limit"), visibility="public")
    store.save(merged(11, "2026-02-20", change_type="feature", title="Old feature"), visibility="public")
    store.save(merged(12, "2026-03-10", change_type="feature", title="Same-week feature",
                      reverted_by={"number": 16, "days": 3}), visibility="public")  # fmt: skip
    store.save(fix_of(13, "2026-03-11", 10, reading_level="deep"), visibility="public")  # fixes last week's #10
    store.save(fix_of(14, "2026-03-12", 11), visibility="public")  # fixes older code: not in the group
    store.save(fix_of(15, "2026-03-13", 12), visibility="public")  # fixes this week's code: not in the group
    store.save(fix_of(16, "2026-03-13", 99), visibility="public")  # its origin is not stored: left out
    store.save(fix_of(17, "2026-03-14", 10, change_type="feature"), visibility="public")  # no fix: no link


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request):
    s = request.getfixturevalue({"sqlite": "sqlite_store", "postgresql": "pg_store"}[request.param])
    fill(s)
    return s


def test_cards_carry_the_fixed_origin_and_the_revert():
    card = guide_cards(fix_of(13, "2026-03-11", 10))["en"]
    assert card["fixes_code_from"] == 10 and "reverted_by" not in card
    assert "fixes_code_from" not in guide_cards(fix_of(17, "2026-03-14", 10, change_type="feature"))["en"]
    reverted = guide_cards(merged(12, "2026-03-10", reverted_by={"number": 16, "days": 3}, languages={"zh": {"summary": "改"}}))
    assert reverted["en"]["reverted_by"] == reverted["zh"]["reverted_by"] == {"number": 16, "days": 3}


def test_fixes_of_earlier_keep_origins_of_the_window_before():
    from bot.tagview.model import GuideRow

    def row(number: int, day: str) -> GuideRow:
        return GuideRow("a/b", number, f"t{number}", None, None, f"{day}T10:00:00Z", "fix", False, 5, "quick", 3, (), (), "")

    rows = {n: row(n, d) for n, d in ((1, "2026-03-08"), (2, "2026-03-02"), (3, "2026-03-01"), (4, "2026-03-09"),
                                        (20, "2026-03-10"), (21, "2026-03-12"), (22, "2026-03-13"), (23, "2026-03-14"))}  # fmt: skip
    found = fixes_of_earlier([rows[n] for n in (20, 21, 22, 23)], {20: 1, 21: 2, 22: 3, 23: 4}, rows, *WEEK)
    assert found == [FixOfEarlier(rows[21], rows[2]), FixOfEarlier(rows[20], rows[1])]


def test_the_digest_groups_the_fixes_to_last_week(store):
    digest, _ = load_digest(store, "acme/rocket", *WEEK, "en")
    assert [(f.fix.number, f.origin.number) for f in digest.fixes] == [(13, 10)] and digest.fixes_total == 1
    assert digest.previous == (date(2026, 3, 2), date(2026, 3, 8))
    (entry,) = [e for e in digest.read_first if e.row.number == 13]
    assert entry.fixes_from == 10 and entry.reverted_by is None
    # A window whose week before holds none of the origins has no group.
    assert load_digest(store, "acme/rocket", date(2026, 3, 16), date(2026, 3, 22), "en")[0].fixes == ()


def test_entries_name_the_origin_and_the_revert(store):
    cards = store.cards("acme/rocket", [12, 13], "en")
    rows = store.rows("acme/rocket", [12, 13])
    assert make_entry(rows[12], cards[12], "en", Messages("en")).reverted_by == 16
    assert make_entry(rows[13], cards[13], "en", Messages("en")).fixes_from == 10


async def test_the_pages_show_the_links_in_both_languages(sqlite_store):
    fill(sqlite_store)
    client = await client_for(sqlite_store)
    try:
        html = await (await client.get("/repos/acme/rocket/digest?since=2026-03-09&until=2026-03-15")).text()
        assert '<section id="fixes-earlier"' in html and "Fixes to last week&#39;s merges" in html
        assert '<tr data-number="13" data-origin="10">' in html and "Add the limit" in html
        assert "merged 2026-03-02 – 2026-03-08" in html
        assert '<span class="fixes-from">Fixes code from <a href="/repos/acme/rocket/pulls/10/guide">#10</a></span>' in html
        zh = await (await client.get("/repos/acme/rocket/digest?since=2026-03-09&until=2026-03-15&lang=zh")).text()
        assert "对上周合并内容的修复" in zh and '修复了 <a href="/repos/acme/rocket/pulls/10/guide?lang=zh">#10</a> 中的代码' in zh
        tags = await (await client.get("/repos/acme/rocket/tags?label=bug")).text()
        assert '<strong class="reverted-by">Reverted by <a href="/repos/acme/rocket/pulls/16/guide">#16</a></strong>' in tags
    finally:
        await client.close()


def test_guides_stored_before_get_their_origin_from_their_data(store):
    from bot.tagview.pgstore import PgGuideStore

    if isinstance(store, PgGuideStore):
        from bot.tagview.pg_schema import FIXES_FROM_BACKFILL

        with store._connection() as conn:
            conn.execute("UPDATE tagview_guides SET fixes_from = NULL")
            conn.execute(FIXES_FROM_BACKFILL)
    else:
        from bot.tagview.schema import FIXES_FROM_BACKFILL

        store.connection.execute("UPDATE tagview_guides SET fixes_from = NULL")
        store.connection.execute(FIXES_FROM_BACKFILL)
    briefs = {b.number: b.fixes_from for b in store.briefs("acme/rocket")}
    assert briefs == {10: None, 11: None, 12: None, 13: 10, 14: 11, 15: 12, 16: 99, 17: None}


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_an_origin_without_a_stored_guide_links_to_github_not_to_a_missing_guide(store, lang):
    """#16 fixes code from #99, whose guide is not stored (merged before the app was installed,
    or deleted): its entry linked to /pulls/99/guide, a 404. It links to #99 on GitHub; #13's
    origin #10 is stored and keeps its guide link. The digest, the tags page and search build
    entries alike (on both stores, in both languages)."""
    query = "" if lang == "en" else "&lang=zh"
    guide_10 = "/repos/acme/rocket/pulls/10/guide" + ("?lang=zh" if lang == "zh" else "")
    client = await client_for(store)
    try:
        for path in ("/repos/acme/rocket/tags?label=bug", "/repos/acme/rocket/tags?q=fix",
                     "/repos/acme/rocket/digest?since=2026-03-09&until=2026-03-15"):  # fmt: skip
            response = await client.get(path + query)
            assert response.status == 200, path
            html = await response.text()
            assert 'data-number="16"' in html and 'data-number="13"' in html, path
            assert "/pulls/99/guide" not in html, path
            assert f'<a href="{guide_10}">#10</a>' in html, path
            if "/tags" in path:  # the digest lists #16 in its table, not as an entry
                assert '<a href="https://github.com/acme/rocket/pull/99">#99</a>' in html, path
        cards = store.cards("acme/rocket", [13, 16, 17], lang)
        assert [cards[n]["fixes_code_from_stored"] for n in (13, 16, 17)] == [True, False, False]
        assert store.delete("acme/rocket", 10)  # a deleted origin loses its guide link too
        assert store.cards("acme/rocket", [13], lang)[13]["fixes_code_from_stored"] is False
        html = await (await client.get("/repos/acme/rocket/tags?q=fix" + query)).text()
        assert "/pulls/10/guide" not in html and '<a href="https://github.com/acme/rocket/pull/10">#10</a>' in html
    finally:
        await client.close()


def test_an_origin_s_link_is_plain_text_when_the_row_has_no_github_address():
    from bot.tagview.model import GuideRow

    row = GuideRow("a/b", 16, "t", "https://example.com/x", None, "2026-03-13T10:00:00Z", "fix", False, 5, "quick", 3, (), (), "")
    entry = make_entry(row, {"fixes_code_from": 99}, "en", Messages("en"))
    assert entry.fixes_from == 99 and not entry.fixes_from_stored and entry.fixes_from_url == ""
    row = GuideRow("a/b", 16, "t", "https://github.com/a/b/pull/16", None, "2026-03-13T10:00:00Z", "fix", False, 5, "quick", 3, (), (), "")
    entry = make_entry(row, {"fixes_code_from": 99, "fixes_code_from_stored": True}, "en", Messages("en"))
    assert entry.fixes_from_stored and entry.fixes_from_url == "https://github.com/a/b/pull/99"
