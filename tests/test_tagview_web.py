"""The tag view over HTTP: pages, filters, JSON paging, escaping, headers and access."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest
from aiohttp.test_utils import TestClient, TestServer
from yarl import URL
from test_tagview_store import make_guide

from bot.tagview.i18n import LANGUAGES, catalog_keys
from bot.tagview.pages import CONTENT_SECURITY_POLICY
from bot.tagview.store import GuideStore
from bot.tagview.web import TagViewSettings, create_app

TOKEN = "s3cret-view-token"


class Page(HTMLParser):
    """Collects what the tests look at: the title, sections, rows, labels, links and scripts."""

    def __init__(self, html: str):
        super().__init__(convert_charrefs=True)
        self.title = ""
        self.sections: list[dict] = []
        self.label_for: set[str] = set()
        self.ids: set[str] = set()
        self.links: list[str] = []
        self.scripts = 0
        self.tags: list[tuple[str, dict]] = []
        self._in_title = False
        self._row: dict | None = None
        self._cell = -1
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags.append((tag, a))
        if "id" in a:
            self.ids.add(a["id"])
        if tag == "title":
            self._in_title = True
        elif tag == "script":
            self.scripts += 1
        elif tag == "label" and "for" in a:
            self.label_for.add(a["for"])
        elif tag == "a" and "href" in a:
            self.links.append(a["href"])
        elif tag == "section":
            self.sections.append({"label": a.get("data-label"), "count": int(a.get("data-count", -1)), "rows": []})
        elif tag in ("tr", "article") and "data-number" in a:
            self._row = {"number": int(a["data-number"]), "cells": []}
            self.sections[-1]["rows"].append(self._row)
        elif tag in ("td", "th", "h3", "p", "li") and self._row is not None:
            self._row["cells"].append("")

    def handle_endtag(self, tag):
        if tag == "title":
            self._in_title = False
        elif tag in ("tr", "article"):
            self._row = None

    def handle_data(self, data):
        if self._in_title:
            self.title += data
        if self._row is not None and self._row["cells"]:
            self._row["cells"][-1] += data

    def summary(self) -> list[tuple[str, int, list[int]]]:
        return [(s["label"], s["count"], [r["number"] for r in s["rows"]]) for s in self.sections]


@pytest.fixture
def store(tmp_path):
    with GuideStore(tmp_path / "prguide.db") as s:
        s.save(make_guide(1, labels=["bug"], areas=["core"], importance=2, reading_level="skim"), visibility="public")
        s.save(make_guide(2, labels=["bug", "ci"], areas=["ci"], importance=7, reading_level="deep",
                          title="Speed up rollout"), visibility="public")
        s.save(make_guide(3, labels=["docs"], areas=["docs"], importance=3, reading_level="skip",
                          title="文档 rollout", lang="zh"), label_descriptions={"docs": "Documentation only"})
        s.save(make_guide(4, labels=["bug"], areas=["core", "ci"], importance=9, reading_level="deep",
                          focus=[{"file": "rocket/ckpt.py", "symbol": "save", "reason": "checkpoint format"}]))
        s.save(make_guide(5, repository="acme/secret", labels=["bug"], title="hidden work"), visibility="private")
        yield s


async def client_for(store, **settings) -> TestClient:
    client = TestClient(TestServer(create_app(store, TagViewSettings(**settings))))
    await client.start_server()
    return client


@pytest.fixture
async def client(store):
    c = await client_for(store, rows_per_label=2, page_size=2)
    yield c
    await c.close()


def assert_secure(response) -> None:
    assert response.headers["Content-Security-Policy"] == CONTENT_SECURITY_POLICY
    assert response.headers["X-Content-Type-Options"] == "nosniff"


async def test_tags_page_groups_pull_requests_by_label(client):
    response = await client.get("/repos/acme/rocket/tags")
    assert response.status == 200 and response.content_type == "text/html"
    assert_secure(response)
    html = await response.text()
    page = Page(html)
    assert page.title == "acme/rocket · tag view"
    assert page.summary() == [("bug", 3, [4, 2]), ("ci", 1, [2]), ("docs", 1, [3])]
    assert page.scripts == 0
    assert '<meta name="viewport" content="width=device-width, initial-scale=1">' in html
    assert "Documentation only" in html
    # Each pull request is a digest entry: title, summary, verdict, focus, then who, when and links.
    first = [" ".join(cell.split()) for cell in page.sections[0]["rows"][0]["cells"]]
    assert first == [
        "[core] fix: thing 4 #4", "Fixes thing 4.", "deep read · 4 min · importance 9/10 · for maintainers",
        "rocket/ckpt.py: checkpoint format", "by octocat · merged 2026-01-04 · #4 on GitHub · Full guide",
    ]
    # Entries are articles named by their heading, under one heading per label.
    assert html.count('<article class="entry"') == 4 and html.count("<h3 ") == 4
    # Every form control has a visible label.
    controls = {a["id"] for tag, a in page.tags if tag in ("input", "select") and a.get("type") != "hidden"}
    assert controls and controls <= page.label_for
    assert '<form method="get"' in html
    assert ":focus-visible" in html
    # "bug" has more PRs than rows shown: a link leads to all of them.
    assert "/repos/acme/rocket/tags?label=bug" in page.links
    assert "/repos/acme/rocket/pulls/4/guide" in page.links
    assert "https://github.com/acme/rocket/pull/4" in page.links


@pytest.mark.parametrize(
    "query, expected",
    [
        ("level=deep", [("bug", 2, [4, 2]), ("ci", 1, [2])]),
        ("area=ci", [("bug", 2, [4, 2]), ("ci", 1, [2])]),
        ("min_importance=8", [("bug", 1, [4])]),
        ("from=2026-01-03", [("bug", 1, [4]), ("docs", 1, [3])]),
        ("to=2026-01-02", [("bug", 2, [2, 1]), ("ci", 1, [2])]),
        ("from=2026-01-02&to=2026-01-03", [("bug", 1, [2]), ("ci", 1, [2]), ("docs", 1, [3])]),
        ("q=rollout", [("bug", 1, [2]), ("ci", 1, [2]), ("docs", 1, [3])]),
        ("q=checkpoint", [("bug", 1, [4])]),
        ("label=ci", [("ci", 1, [2])]),
        ("label=BUG&level=deep", [("bug", 2, [4, 2])]),
        ("q=nothing-matches", []),
    ],
)
async def test_tags_page_filters(client, query, expected):
    response = await client.get(f"/repos/acme/rocket/tags?{query}")
    assert response.status == 200
    page = Page(await response.text())
    assert page.summary() == expected
    if not expected:
        assert "no-results" in page.ids


async def test_filter_form_shows_the_current_values(client):
    html = await (await client.get("/repos/acme/rocket/tags?level=deep&min_importance=3&q=roll&from=2026-01-01")).text()
    assert '<option value="deep" selected>' in html
    assert 'name="min_importance" type="number" min="1" max="10" step="1" inputmode="numeric" value="3"' in html
    assert 'name="q" type="search" value="roll"' in html
    assert 'name="from" type="date" value="2026-01-01"' in html


async def test_one_label_pages_newest_first(client):
    first = Page(await (await client.get("/repos/acme/rocket/tags?label=bug")).text())
    assert first.summary() == [("bug", 3, [4, 2])]
    assert "/repos/acme/rocket/tags?label=bug&page=2" in first.links
    second = Page(await (await client.get("/repos/acme/rocket/tags?label=bug&page=2")).text())
    assert second.summary() == [("bug", 3, [1])]
    assert "/repos/acme/rocket/tags?label=bug" in second.links
    assert not any("page=3" in link for link in second.links)


@pytest.mark.parametrize("query", ["level=slow", "min_importance=11", "min_importance=x", "from=01/02/2026",
                                   "from=2026-02-01&to=2026-01-01", "page=0", "q=" + "x" * 201])
async def test_bad_filters_answer_400_with_the_reason(client, query):
    response = await client.get(f"/repos/acme/rocket/tags?{query}")
    assert response.status == 400
    assert_secure(response)
    text = await response.text()
    assert "Bad request" in text
    json_response = await client.get(f"/repos/acme/rocket/tags.json?{query}")
    assert json_response.status == 400
    assert (await json_response.json())["error"]


async def test_chinese_chrome(client):
    html = await (await client.get("/repos/acme/rocket/tags?lang=zh")).text()
    page = Page(html)
    assert page.title == "acme/rocket · 标签视图"
    assert '<html lang="zh-Hans">' in html and "筛选" in html and "精读 · 4 分钟" in html
    assert "/repos/acme/rocket/pulls/4/guide?lang=zh" in page.links
    assert "/repos/acme/rocket/tags" in page.links  # the switch back to English
    assert '<input type="hidden" name="lang" value="zh">' in html


def test_every_chrome_string_is_translated():
    assert catalog_keys("zh") == catalog_keys("en")
    assert LANGUAGES == ("en", "zh")


async def test_json_list_with_filters_and_pages(client):
    response = await client.get("/repos/acme/rocket/tags.json?label=bug&per_page=2")
    assert response.status == 200 and response.content_type == "application/json"
    assert_secure(response)
    body = await response.json()
    assert body["total_count"] == 3 and body["page"] == 1 and body["per_page"] == 2
    assert [item["number"] for item in body["items"]] == [4, 2]
    assert body["items"][0]["guide_url"].endswith("/repos/acme/rocket/pulls/4/guide")
    assert body["items"][0]["labels"] == ["bug"] and body["items"][0]["importance"] == 9
    assert body["prev"] is None and "page=2" in body["next"] and "label=bug" in body["next"]
    link = response.headers["Link"]
    assert re.search(r'<[^>]*page=2[^>]*>; rel="next"', link) and 'rel="last"' in link
    second = await client.get(URL(body["next"]).path_qs)
    body2 = await second.json()
    assert [item["number"] for item in body2["items"]] == [1] and body2["next"] is None and body2["prev"]
    assert 'rel="next"' not in second.headers["Link"]


@pytest.mark.parametrize(
    "query, expected",
    [
        ("", [4, 3, 2, 1]),
        ("level=deep", [4, 2]),
        ("area=docs", [3]),
        ("min_importance=7", [4, 2]),
        ("from=2026-01-02&to=2026-01-03", [3, 2]),
        ("q=rollout", [3, 2]),
        ("q=文档", [3]),
    ],
)
async def test_json_list_filters(client, query, expected):
    body = await (await client.get(f"/repos/acme/rocket/tags.json?{query}")).json()
    assert [item["number"] for item in body["items"]] == expected


async def test_json_per_page_is_capped_at_100(client):
    body = await (await client.get("/repos/acme/rocket/tags.json?per_page=500")).json()
    assert body["per_page"] == 100


async def test_titles_are_escaped_everywhere(store):
    evil = '<script>document.title="pwned"</script><img src=x onerror=alert(1)>'
    store.save(make_guide(6, title=evil, labels=[evil], areas=[evil]), visibility="public")
    async with await client_for(store) as client:
        for path in ["/repos/acme/rocket/tags", "/repos/acme/rocket/pulls/6/guide", "/repos/acme/rocket/tags?q=script"]:
            html = await (await client.get(path)).text()
            assert "<script" not in html and "<img" not in html, path
            assert "&lt;script&gt;" in html, path
        page = Page(await (await client.get("/repos/acme/rocket/tags")).text())
        assert evil in [s["label"] for s in page.sections]


async def test_guide_markdown_is_rendered_without_raw_html_or_unsafe_links(store):
    markdown = (
        "<!-- prguide:v1 {\"engine\":\"1\"} -->\n"
        "## What changed\n\n"
        "<script>alert(1)</script>\n\n"
        "<div onmouseover=\"alert(2)\">hover</div>\n\n"
        "[safe](https://example.com/a) [bad](javascript:alert(3)) [data](data:text/html,hi) "
        "![pic](https://example.com/p.png) ![track](javascript:x)\n"
    )
    store.save(make_guide(7, markdown=markdown), visibility="public")
    async with await client_for(store) as client:
        response = await client.get("/repos/acme/rocket/pulls/7/guide")
        assert response.status == 200
        assert_secure(response)
        html = await response.text()
    article = html[html.index("<article>"):]
    assert "<h2>What changed</h2>" in article
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in article and "<script" not in html
    assert "<div onmouseover" not in article and "&lt;div onmouseover" in article
    assert '<a href="https://example.com/a" rel="nofollow noopener noreferrer">safe</a>' in article
    assert 'href="javascript:' not in article and 'href="data:' not in article
    assert '<img src="https://example.com/p.png" alt="pic"' in article and 'src="javascript:' not in article
    assert "prguide:v1" not in html
    assert Page(html).title == "acme/rocket #7 · [core] fix: thing 7"


async def test_guide_template_elements_become_real_elements_without_attributes(store):
    markdown = (
        "### Guide\n\nLine one\\\nline two\n\n"
        "<details><summary>All changed files (2) `a.py`</summary>\n\n- `a.py`\n\n</details>\n\n"
        "<details open ontoggle=\"alert(1)\"><summary>x</summary>\n\n</details>\n\n"
        "<details><summary><img src=x onerror=alert(1)></summary>\n\n</details>\n\n"
        "<sub>prguide · `/prguide help`</sub>\n"
    )
    store.save(make_guide(8, markdown=markdown), visibility="public")
    async with await client_for(store) as client:
        html = await (await client.get("/repos/acme/rocket/pulls/8/guide")).text()
    guide = html[html.index('<div class="guide"'):]
    assert "<h2>Guide</h2>" in guide and "Line one<br />" in guide
    assert "<details><summary>All changed files (2) <code>a.py</code></summary>" in guide
    assert "&lt;details open ontoggle=&quot;alert(1)&quot;&gt;" in guide and "<details open" not in guide
    assert "<details><summary>&lt;img src=x onerror=alert(1)&gt;</summary>" in guide
    assert "<p><sub>prguide · <code>/prguide help</code></sub></p>" in guide
    assert guide.count("<details>") == 2 and "<img" not in guide


async def test_guide_page_chrome_follows_the_guides_language(client):
    html = await (await client.get("/repos/acme/rocket/pulls/3/guide")).text()
    assert "返回标签视图" in html
    html = await (await client.get("/repos/acme/rocket/pulls/3/guide?lang=en")).text()
    assert "Back to the tag view" in html


async def test_unknown_guide_and_repository_answer_404(client):
    for path in ["/repos/acme/rocket/pulls/99/guide", "/repos/acme/nothing/tags", "/repos/acme/nothing/tags.json"]:
        response = await client.get(path)
        assert response.status == 404, path
        assert_secure(response)


async def test_a_database_that_does_not_answer_is_a_503_with_retry_after(store, monkeypatch):
    import sqlite3

    def down(*args, **kwargs):
        raise sqlite3.OperationalError("database is locked")

    monkeypatch.setattr(store, "repositories", down)
    monkeypatch.setattr(store, "canonical_name", down)
    monkeypatch.setattr(store, "visibility", down)
    client = await client_for(store)
    try:
        page = await client.get("/repos?lang=zh")
        assert page.status == 503 and page.headers["Retry-After"] == "30"
        assert "暂时不可用" in await page.text()
        assert_secure(page)
        listing = await client.get("/repos/acme/rocket/tags.json")
        assert listing.status == 503
        assert "error" in await listing.json()
    finally:
        await client.close()


async def test_private_repository_is_hidden_without_a_token(client):
    private = await client.get("/repos/acme/secret/tags")
    unknown = await client.get("/repos/acme/nothing/tags")
    assert private.status == unknown.status == 404
    assert await private.text() == await unknown.text()
    assert (await client.get("/repos/acme/secret/tags.json")).status == 404
    assert (await client.get("/repos/acme/secret/pulls/5/guide")).status == 404
    index = await (await client.get("/repos")).text()
    assert "acme/rocket" in index and "acme/secret" not in index


async def test_with_a_view_token_every_page_needs_it(store):
    async with await client_for(store, view_token=TOKEN) as client:
        for path in ["/repos/acme/secret/tags", "/repos/acme/rocket/tags", "/repos/acme/rocket/tags.json",
                     "/repos/acme/rocket/pulls/1/guide", "/repos", "/repos/acme/nothing/tags"]:
            missing = await client.get(path)
            assert missing.status == 401, path
            assert missing.headers["WWW-Authenticate"].startswith("Bearer")
            assert_secure(missing)
            wrong = await client.get(path, headers={"Authorization": "Bearer wrong-token"})
            assert wrong.status == 401 and 'error="invalid_token"' in wrong.headers["WWW-Authenticate"]
            basic = await client.get(path, headers={"Authorization": f"Basic {TOKEN}"})
            assert basic.status == 401
        good = {"Authorization": f"Bearer {TOKEN}"}
        response = await client.get("/repos/acme/secret/tags", headers=good)
        assert response.status == 200
        assert Page(await response.text()).summary() == [("bug", 1, [5])]
        assert (await client.get("/repos/acme/secret/pulls/5/guide", headers=good)).status == 200
        body = await (await client.get("/repos/acme/secret/tags.json", headers=good)).json()
        assert [item["title"] for item in body["items"]] == ["hidden work"]
        assert "acme/secret" in await (await client.get("/repos", headers=good)).text()
        assert (await client.get("/repos/acme/nothing/tags", headers=good)).status == 404


async def test_app_settings_object_supplies_the_view_token(store):
    class AppSettings:
        view_token = TOKEN

    client = TestClient(TestServer(create_app(store, AppSettings())))
    async with client:
        assert (await client.get("/repos/acme/rocket/tags")).status == 401
        assert (await client.get("/repos/acme/rocket/tags", headers={"Authorization": f"Bearer {TOKEN}"})).status == 200


async def test_local_viewer_may_show_private_repositories(store):
    async with await client_for(store, show_private=True) as client:
        assert (await client.get("/repos/acme/secret/tags")).status == 200


async def test_head_requests_and_root_redirect(client):
    assert (await client.head("/repos/acme/rocket/tags")).status == 200
    response = await client.get("/", allow_redirects=False)
    assert response.status == 302 and response.headers["Location"] == "/repos"


async def test_local_view_says_how_many_private_repositories_are_hidden(store):
    async with await client_for(store, say_hidden=True) as client:
        index = await (await client.get("/repos")).text()
        zh = await (await client.get("/repos?lang=zh")).text()
    assert "1 private repository is hidden; run prguide view with --include-private to show it." in index
    assert "acme/secret" not in index and "acme/rocket" in index
    assert "有 1 个私有仓库未显示" in zh


async def test_served_view_never_tells_a_private_repository_exists(tmp_path):
    """``prguide serve`` passes the app's settings: a private repository stays a 404, and the index is silent."""

    class AppSettings:
        view_token = None

    with GuideStore(tmp_path / "private.db") as private, GuideStore(tmp_path / "empty.db") as empty:
        private.save(make_guide(5, repository="acme/secret", title="hidden work"), visibility="private")
        async with TestClient(TestServer(create_app(private, AppSettings()))) as client, \
                TestClient(TestServer(create_app(empty, AppSettings()))) as nothing:  # fmt: skip
            index = await (await client.get("/repos")).text()
            assert index == await (await nothing.get("/repos")).text()
            assert "hidden" not in index and "include-private" not in index
            secret = await client.get("/repos/acme/secret/tags")
            unknown = await nothing.get("/repos/acme/secret/tags")
            assert secret.status == unknown.status == 404
            assert await secret.text() == await unknown.text()


async def test_the_tags_page_of_all_labels_stays_the_same_size_however_many_labels(tmp_path):
    # 12 labels of 4 pull requests each: 3 rows per label and a page of 12 entries would be
    # 36 entries; the page holds 12, so each label shows its newest one and links to the rest.
    with GuideStore(tmp_path / "many.db") as store:
        for number in range(1, 49):
            label = f"area/{number % 12:02d}"
            details = [{"name": label, "source": "rule", "rule": "r"}]
            store.save(make_guide(number, labels=[label], label_details=details), visibility="public")
        c = await client_for(store, rows_per_label=3, page_entries=12)
        try:
            page = Page(await (await c.get("/repos/acme/rocket/tags")).text())
            assert [(label, count, len(rows)) for label, count, rows in page.summary()] == [
                (f"area/{i:02d}", 4, 1) for i in range(12)
            ]
            assert sum(1 for link in page.links if "label=area" in link and "page" not in link) >= 12
            # One label alone still pages by page_size, and a store of few labels keeps rows_per_label.
            single = Page(await (await c.get("/repos/acme/rocket/tags", params={"label": "area/03"})).text())
            assert single.summary() == [("area/03", 4, [27, 15, 3, 39])]  # no merge time: last
        finally:
            await c.close()
    with GuideStore(tmp_path / "few.db") as store:
        for number in range(1, 9):
            store.save(make_guide(number), visibility="public")
        c = await client_for(store, rows_per_label=3, page_entries=12)
        try:
            page = Page(await (await c.get("/repos/acme/rocket/tags")).text())
            assert page.summary() == [("bug", 8, [8, 7, 6])]
        finally:
            await c.close()
