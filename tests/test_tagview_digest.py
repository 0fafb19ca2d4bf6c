"""The digest: entries, the "what to read" page, Atom feeds, area display names, weekly export pages."""

from __future__ import annotations

from datetime import date

import feedparser
import pytest
from test_tagview_store import make_guide
from test_tagview_web import Page, client_for

from bot.tagview.digest import (
    DEFAULT_DAYS,
    MAX_DAYS,
    WindowError,
    build_digest,
    iso_week_bounds,
    label_display,
    make_entry,
    parse_window,
    review_line,
    select,
)
from bot.tagview.export import export_site
from bot.tagview.i18n import Messages
from bot.tagview.store import GuideStore

TOKEN = "digest-view-token"
MEGATRON = {
    "area_info": {"megatron": {"names": {"en": "Megatron backend", "zh": "Megatron 后端"},
                               "audience": {"en": "engineers maintaining the Megatron backend", "zh": "维护 Megatron 后端的工程师"}}},
    "label_areas": {"area/megatron": "megatron"},
}


def guide(number: int, level: str, importance: int, day: int, **changes) -> dict:
    data = make_guide(number, reading_level=level, importance=importance, merged_at=f"2026-03-{day:02d}T10:00:00Z", **changes)
    return data


@pytest.fixture
def store(tmp_path):
    with GuideStore(tmp_path / "prguide.db") as s:
        # One ISO week (2026-W10: 2 to 8 March) and one PR the week after.
        s.save(guide(1, "deep", 6, 2, labels=["area/megatron"], areas=["megatron"], title="Megatron deep older", **MEGATRON,
                     breaking_reasons=["default of `lr` changes from 1 to 2"],
                     review={"reviewers": [{"user": "alice", "state": "APPROVED", "bot": False}], "threads": 2, "comments": 5},
                     focus=[{"file": f"m/{i}.py", "symbol": "", "reason": f"point `{i}`"} for i in range(5)]),
               visibility="public")
        s.save(guide(2, "deep", 6, 4, labels=["area/megatron"], areas=["megatron"], title="Megatron deep newer", **MEGATRON),
               visibility="public")
        s.save(guide(3, "quick", 9, 5, labels=["bug"], areas=[], title="Quick but breaking", breaking=True), visibility="public")
        s.save(guide(4, "deep", 3, 6, labels=["bug"], areas=["core"], title="Core deep", summary="改了核心。", lang="zh"),
               visibility="public")
        s.save(guide(5, "skim", 8, 7, labels=["docs"], areas=["docs"], title="Docs skim"), visibility="public")
        s.save(guide(6, "skip", 1, 8, labels=["ci"], areas=["ci"], title="<b>CI</b> skip"), visibility="public")
        s.save(guide(7, "deep", 10, 9, labels=["bug"], title="Next week"), visibility="public")
        s.save(guide(8, "deep", 5, 3, repository="acme/secret", labels=["bug"], title="hidden work"), visibility="private")
        yield s


@pytest.fixture
async def client(store):
    c = await client_for(store)
    yield c
    await c.close()


WEEK = "since=2026-03-02&until=2026-03-08"


# -- pure parts ---------------------------------------------------------------------------


def test_window_defaults_to_the_last_seven_days():
    today = date(2026, 3, 8)
    assert parse_window(None, None, today) == (date(2026, 3, 2), today)
    assert (today - parse_window("", " ", today)[0]).days == DEFAULT_DAYS - 1
    assert parse_window("2026-03-01", None, today) == (date(2026, 3, 1), today)
    assert parse_window(None, "2026-02-10", today) == (date(2026, 2, 4), date(2026, 2, 10))


@pytest.mark.parametrize(
    ("since", "until", "message"),
    [
        ("yesterday", None, "since must be a date YYYY-MM-DD, got 'yesterday'"),
        (None, "2026-02-30", "until must be a date YYYY-MM-DD, got '2026-02-30'"),
        ("20260301", None, "since must be a date YYYY-MM-DD, got '20260301'"),
        ("2026-03-05", "2026-03-01", "since (2026-03-05) must not be later than until (2026-03-01)"),
        ("2024-01-01", "2026-01-01", f"a digest covers at most {MAX_DAYS} days"),
    ],
)
def test_bad_windows_are_refused_with_the_reason(since, until, message):
    with pytest.raises(WindowError) as caught:
        parse_window(since, until, date(2026, 3, 8))
    assert str(caught.value).startswith(message)


def test_iso_week_bounds():
    assert iso_week_bounds(date(2026, 3, 5)) == (date(2026, 3, 2), date(2026, 3, 8))
    assert iso_week_bounds(date(2026, 3, 2)) == (date(2026, 3, 2), date(2026, 3, 8))


def test_review_line_names_reviewers_and_threads_in_the_page_language():
    review = {"reviewers": [{"user": "alice", "state": "APPROVED"}, {"user": "bob", "state": "CHANGES_REQUESTED"}],
              "threads": 1, "comments": 3}
    assert review_line(review, Messages("en")) == "alice approved, bob requested changes · 1 thread, 3 comments"
    assert review_line({"reviewers": [], "threads": 2, "comments": 4}, Messages("en")) == "2 threads, 4 comments"
    assert review_line(None, Messages("en")) == review_line({}, Messages("zh")) == ""
    assert "、" in review_line(review, Messages("zh"))


def test_label_display_uses_the_area_names_of_the_page_language():
    data = [make_guide(1, **MEGATRON)]
    assert label_display(data, "area/megatron", "en", Messages("en")) == (
        "Megatron backend", "For engineers maintaining the Megatron backend.")
    assert label_display(data, "AREA/Megatron", "zh", Messages("zh"))[0] == "Megatron 后端"
    assert label_display(data, "bug", "en", Messages("en")) == ("bug", "")
    assert label_display([{}], "area/megatron", "en", Messages("en")) == ("area/megatron", "")


def test_verdict_names_two_readers_then_how_many_more():
    row = GuideStore(":memory:")
    row.save(make_guide(1, audience=["a", "b", "c", "d"]))
    entry = make_entry(row.query("acme/rocket").items[0], row.get("acme/rocket", 1), "en", Messages("en"))
    assert entry.readers == "for a, b and 2 more"
    assert entry.verdict == "quick read · 4 min · importance 5/10 · for a, b and 2 more"
    zh = make_entry(row.query("acme/rocket").items[0], row.get("acme/rocket", 1), "zh", Messages("zh"))
    assert zh.readers == "适合a、b及另外 2 类读者"


def test_entry_verdict_focus_and_breaking(store):
    row = store.query("acme/rocket", label="area/megatron").items[-1]
    entry = make_entry(row, store.get("acme/rocket", row.number), "en", Messages("en"))
    assert entry.verdict == "deep read · 4 min · importance 6/10 · for maintainers"
    assert [str(p.reason) for p in entry.focus] == ["point <code>0</code>", "point <code>1</code>", "point <code>2</code>"]
    assert entry.breaking == ("default of `lr` changes from 1 to 2",)
    assert entry.reviews == "alice approved · 2 threads, 5 comments"
    assert (entry.area, entry.area_name) == ("megatron", "Megatron backend")
    # Without stored data the row alone still makes an entry.
    bare = make_entry(row, None, "zh", Messages("zh"))
    assert bare.verdict == bare.rating == "精读 · 4 分钟 · 重要度 6/10" and bare.readers == ""
    assert bare.focus == () and bare.reviews == ""


def test_digest_reads_first_deep_and_breaking_by_level_importance_then_recency_grouped_by_area(store):
    since, until = date(2026, 3, 2), date(2026, 3, 8)
    chosen = select(store.briefs("acme/rocket", since=since, until=until))
    rows = store.rows("acme/rocket", [*chosen.entries, *chosen.also])
    datas = store.get_many("acme/rocket", chosen.entries)
    digest = build_digest(chosen, rows, datas, since, until, "en")
    # Deep ones by importance then recency, then the quick breaking one; #5 (skim, importance 8) is not read first.
    assert [e.row.number for e in digest.read_first] == [2, 1, 4, 3]
    assert [(g.area, g.name) for g in digest.groups] == [("megatron", "Megatron backend"), ("core", "core"), ("", "")]
    assert [row.number for row in digest.also] == [6, 5]
    assert (digest.merged, digest.also_total, [g.total for g in digest.groups]) == (6, 2, [2, 1, 1])


# -- pages ----------------------------------------------------------------------------------


async def test_digest_page_lists_what_to_read_first_then_the_rest(client):
    response = await client.get(f"/repos/acme/rocket/digest?{WEEK}")
    assert response.status == 200 and response.content_type == "text/html"
    html = await response.text()
    page = Page(html)
    assert page.title == "acme/rocket · What to read"
    read = [s for s in page.sections if s["label"] is None and s["rows"]]
    assert [[r["number"] for r in s["rows"]] for s in read] == [[2, 1], [4], [3], [6, 5]]
    assert '<h2 id="area-megatron-' in html and "Megatron backend" in html and "No area" in html
    assert "Merged 2026-03-02 to 2026-03-08 (UTC)" in html
    # The Chinese summary is marked as Chinese on an English page; untrusted text is escaped.
    assert '<p class="summary" lang="zh-Hans">改了核心。</p>' in html
    assert "&lt;b&gt;CI&lt;/b&gt; skip" in html and "<b>CI</b>" not in html
    assert page.scripts == 0
    # The "also merged" list is a real table.
    assert '<th scope="row"><a href="https://github.com/acme/rocket/pull/6">#6</a></th>' in html
    # The page advertises its feed, with the same window.
    assert ('<link rel="alternate" type="application/atom+xml" title="acme/rocket: what to read" '
            'href="/repos/acme/rocket/digest.atom?since=2026-03-02&amp;until=2026-03-08">') in html


async def test_digest_page_for_one_label_and_in_chinese(client):
    html = await (await client.get(f"/repos/acme/rocket/digest?{WEEK}&label=area/megatron&lang=zh")).text()
    page = Page(html)
    assert page.title == "acme/rocket · 读什么：Megatron 后端"
    assert [r["number"] for s in page.sections for r in s["rows"]] == [2, 1]
    # The guides were stored in English only: their readers are shown as stored, marked as English.
    assert "优先阅读" in html and '适合<span lang="en">maintainers</span>' in html and "仅存有English原文" in html
    # The language switch keeps the window and the label.
    assert "/repos/acme/rocket/digest?since=2026-03-02&amp;until=2026-03-08&amp;label=area/megatron&amp;lang=en" in html


async def test_digest_defaults_to_the_last_seven_days(client):
    html = await (await client.get("/repos/acme/rocket/digest")).text()
    assert 'id="no-results"' in html  # the fixture's merges are long past


@pytest.mark.parametrize(
    ("query", "reason"),
    [
        ("since=last-week", "since must be a date YYYY-MM-DD"),
        ("until=2026-13-01", "until must be a date YYYY-MM-DD"),
        ("since=2026-03-09&until=2026-03-01", "must not be later than until"),
    ],
)
async def test_bad_digest_windows_answer_400_with_the_reason(client, query, reason):
    response = await client.get(f"/repos/acme/rocket/digest?{query}")
    assert response.status == 400
    assert reason in await response.text()
    feed = await client.get(f"/repos/acme/rocket/digest.atom?{query}")
    assert feed.status == 400 and "error" in await feed.json()


async def test_tags_page_shows_area_display_names_and_digest_entries(client):
    html = await (await client.get("/repos/acme/rocket/tags")).text()
    assert 'Megatron backend <span class="count">' in html
    assert "<code>area/megatron</code> · For engineers maintaining the Megatron backend." in html
    assert '<option value="area/megatron">Megatron backend (2)</option>' in html
    assert 'class="breaking"><strong>Breaking:</strong> default of `lr` changes from 1 to 2' in html
    assert '<p class="reviews"><span class="muted">Reviews:</span> alice approved · 2 threads, 5 comments</p>' in html
    assert html.count("<li><code>m/") == 3  # the top three focus points only
    assert '<a href="/repos/acme/rocket/digest">' in html
    zh = await (await client.get("/repos/acme/rocket/tags?lang=zh")).text()
    assert 'Megatron 后端 <span class="count">' in zh and "适合维护 Megatron 后端的工程师。" in zh


@pytest.mark.parametrize(
    ("path", "feed"),
    [
        ("/repos/acme/rocket/tags", "/repos/acme/rocket/tags.atom"),
        ("/repos/acme/rocket/tags?label=bug", "/repos/acme/rocket/tags.atom?label=bug"),
        ("/repos/acme/rocket/pulls/1/guide", "/repos/acme/rocket/tags.atom"),
        ("/repos", "/repos/acme/rocket/tags.atom"),
    ],
)
async def test_every_page_advertises_its_feed(client, path, feed):
    html = await (await client.get(path)).text()
    links = [a for tag, a in Page(html).tags if tag == "link" and a.get("rel") == "alternate"]
    assert links and all(a["type"] == "application/atom+xml" for a in links)
    assert feed in [a["href"] for a in links]


# -- feeds ----------------------------------------------------------------------------------


def parse_feed(body: bytes):
    parsed = feedparser.parse(body)
    assert not parsed.bozo, parsed.get("bozo_exception")
    assert parsed.version == "atom10"
    return parsed


async def test_digest_feed_carries_the_read_first_entries_of_the_page(client):
    response = await client.get(f"/repos/acme/rocket/digest.atom?{WEEK}")
    assert response.status == 200 and response.content_type == "application/atom+xml"
    feed = parse_feed(await response.read())
    assert feed.feed.title == "acme/rocket: what to read"
    numbers = [int(e.link.rsplit("/", 2)[-2]) for e in feed.entries]
    page = Page(await (await client.get(f"/repos/acme/rocket/digest?{WEEK}")).text())
    read = [r["number"] for s in page.sections if s["label"] is None for r in s["rows"]][:4]
    assert numbers == read == [2, 1, 4, 3]
    first = feed.entries[1]
    assert first.title == "#1 Megatron deep older"
    assert first.summary == "Fixes thing 1. — deep read · 4 min · importance 6/10 · for maintainers"
    assert "<code>m/0.py</code>" in first.content[0].value and "default of `lr`" in first.content[0].value
    assert [link.href for link in first.links] == [first.link] and first.link.endswith("/repos/acme/rocket/pulls/1/guide")
    assert '<a href="https://github.com/acme/rocket/pull/1">#1</a>' in first.content[0].value
    assert first.author == "octocat" and [t.term for t in first.tags] == ["area/megatron"]


async def test_label_feed_follows_the_tags_filters_and_matches_the_label_page(client):
    feed = parse_feed(await (await client.get("/repos/acme/rocket/tags.atom?label=bug&level=deep")).read())
    assert feed.feed.title == "acme/rocket: bug"
    assert [e.title for e in feed.entries] == ["#7 Next week", "#4 Core deep"]
    page = Page(await (await client.get("/repos/acme/rocket/tags?label=bug&level=deep")).text())
    assert [int(e.link.rsplit("/", 2)[-2]) for e in feed.entries] == page.summary()[0][2]
    whole = parse_feed(await (await client.get("/repos/acme/rocket/tags.atom?lang=zh")).read())
    assert len(whole.entries) == 7 and whole.feed.language == "zh"
    assert "重要度" in whole.entries[0].summary
    assert (await client.get("/repos/acme/rocket/tags.atom?level=huge")).status == 400


async def test_feeds_keep_private_repositories_private(store):
    async with await client_for(store) as client:
        for path in ("/repos/acme/secret/tags.atom", "/repos/acme/secret/digest.atom", "/repos/acme/none/tags.atom",
                     "/repos/acme/secret/digest"):
            response = await client.get(path)
            assert response.status == 404
            assert "hidden work" not in await response.text()
    async with await client_for(store, view_token=TOKEN) as client:
        assert (await client.get("/repos/acme/rocket/tags.atom")).status == 401
        wrong = await client.get("/repos/acme/secret/digest.atom", headers={"Authorization": "Bearer nope"})
        assert wrong.status == 401 and "invalid_token" in wrong.headers["WWW-Authenticate"]
        ok = await client.get("/repos/acme/secret/tags.atom", headers={"Authorization": f"Bearer {TOKEN}"})
        assert ok.status == 200 and [e.title for e in parse_feed(await ok.read()).entries] == ["#8 hidden work"]
        digest = await client.get("/repos/acme/secret/digest?since=2026-03-01&until=2026-03-08",
                                  headers={"Authorization": f"Bearer {TOKEN}"})
        assert digest.status == 200 and "hidden work" in await digest.text()


# -- export ---------------------------------------------------------------------------------


def test_export_writes_a_digest_page_per_iso_week(store, tmp_path):
    out = tmp_path / "site"
    export_site(store, out)
    folder = out / "acme" / "rocket"
    weeks = sorted(p.name for p in (folder / "digest").iterdir())
    assert weeks == ["2026-W10.html", "2026-W10.zh.html", "2026-W11.html", "2026-W11.zh.html"]
    html = (folder / "digest" / "2026-W10.html").read_text(encoding="utf-8")
    page = Page(html)
    assert [r["number"] for s in page.sections for r in s["rows"]] == [2, 1, 4, 3, 6, 5]
    assert '<a href="../digest/2026-W11.html">2026-W11</a>' in html and 'aria-current="true">2026-W10</a>' in html
    assert '<a href="../pulls/2.html">' in html and "<form" not in html
    index = (folder / "index.html").read_text(encoding="utf-8")
    assert '<a href="digest/2026-W11.html">' in index
    assert "Megatron 后端" in (folder / "digest" / "2026-W10.zh.html").read_text(encoding="utf-8")


def test_a_plain_text_summary_is_escaped_never_parsed_as_markdown(store):
    row = store.query("acme/rocket", label="area/megatron").items[-1]
    data = dict(store.get("acme/rocket", row.number))
    data["summary"] = 'BANNER = "![px](https://evil.example/p.png) [Approve](https://evil.example/login)" <b>x</b>'
    entry = make_entry(row, data, "en", Messages("en"))
    assert "<img" not in str(entry.summary) and "<a " not in str(entry.summary) and "<b>" not in str(entry.summary)
    assert "![px](https://evil.example/p.png)" in str(entry.summary)  # shown as the text it is


def test_only_the_leading_marker_is_stripped_from_a_stored_guide():
    from bot.tagview.markdown import strip_marker

    body = "\n".join(['<!-- prguide:v1 {"a":1} -->', "### Guide", "", '1. `x = "<!-- prguide:v1 {"`',
                       "2. keep this point", '3. `y = "} --> tail"`', ""])
    out = strip_marker(body)
    assert out.startswith("### Guide") and "keep this point" in out and "} --> tail" in out
