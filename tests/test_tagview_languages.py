"""A guide stored once reads in either language: pages, digest and feeds follow ``lang``.

The guide is the engine's own, built from a real verl pull request for a repository
configured in English, stored as the app stores it (``Guide.record()``), once per backend.
The Chinese pages must carry no English words of the guide beyond code identifiers, file
paths and product names; the English pages no Chinese. Guides stored before guides were kept
in every language still render, as stored, marked with their language, and a database at
the tag view's previous schema version is migrated on both backends.
"""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser

import feedparser
import pytest
from test_tagview_store import make_guide, pg_store, sqlite_store  # noqa: F401 - fixtures
from test_tagview_web import client_for

from bot.engine.build import LANGUAGE_KEYS, build_guide
from bot.engine.rules import load_rules
from bot.sources.bundle import load_bundle
from bot.tagview.store import GuideStore
from pg_helpers import pg_url  # noqa: F401 - fixture

#: A deep read with a breaking change, readers named by its areas and no review threads.
NUMBER = 7408
REPO = "verl-project/verl"
WINDOW = "since=2026-08-17&until=2026-08-23"
#: Names the Chinese guide keeps as they are (products, acronyms, the app's own name).
NAMES = {"PR", "prguide", "CI", "FSDP", "GRPO", "PPO", "NPU", "SGLang", "vLLM", "TensorRT-LLM", "TorchTitan",
         "VeOmni", "Megatron", "Ray", "Slurm", "verl", "GitHub"}
_CJK = re.compile(r"[\u3400-\u9fff\u3000-\u303f\uff00-\uffef]")
_WORD = re.compile(r"[A-Za-z][A-Za-z'-]*[A-Za-z]")


@pytest.fixture
def guide(corpus_dir):
    rules = load_rules(["config/examples/verl.yml"])
    return build_guide(load_bundle(corpus_dir / f"{NUMBER}.json"), rules, lang="en")


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request, guide):
    """A store (once per backend) holding the guide, public."""
    s = request.getfixturevalue({"sqlite": "sqlite_store", "postgresql": "pg_store"}[request.param])
    s.save(guide.record(), visibility="public")
    return s


class Text(HTMLParser):
    """The text of the elements matching ``wanted(tag, attrs)`` (each with its children), code apart."""

    def __init__(self, html: str, wanted):
        super().__init__(convert_charrefs=True)
        self.wanted = wanted
        self.depth = 0  # open elements inside a wanted one (0: outside)
        self.code = 0
        self.text: list[str] = []
        self.code_text: list[str] = []
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        if self.depth:
            self.depth += tag not in ("br", "img", "input", "hr", "meta", "link")
        elif self.wanted(tag, dict(attrs)):
            self.depth = 1
        self.code += tag == "code" and self.depth > 0

    def handle_endtag(self, tag):
        if self.depth:
            self.code -= tag == "code" and self.code > 0
            self.depth -= 1

    def handle_data(self, data):
        if self.depth:
            (self.code_text if self.code else self.text).append(data)

    @property
    def words(self) -> set[str]:
        return set(_WORD.findall(" ".join(self.text)))


def guide_text(html: str) -> Text:
    return Text(html, lambda tag, a: tag == "div" and a.get("class") == "guide")


def entry_text(html: str) -> Text:
    """What entries show of the guide: summary, verdict (readers), focus points, breaking changes."""
    return Text(html, lambda tag, a: a.get("class") in ("summary", "verdict", "focus", "breaking"))


def identifiers(guide) -> set[str]:
    """Words of the guide's code spans and file paths, in any language: what may stay as written."""
    spans = " ".join(re.findall(r"`([^`]*)`", guide.languages["zh"]["markdown"] + guide.markdown))
    paths = " ".join(str(p.get("file") or "") + " " + str(p.get("symbol") or "") for p in guide.data["focus"])
    return set(_WORD.findall(spans + " " + paths))


def leaked(text: Text, guide) -> set[str]:
    """English words ``text`` shows outside code that are no identifier of the guide and no product name."""
    return text.words - identifiers(guide) - NAMES


async def test_the_engine_writes_every_language_from_the_same_facts(guide):
    zh = guide.languages["zh"]
    assert set(zh) == set(LANGUAGE_KEYS) and "en" not in guide.languages
    assert guide.data["lang"] == "en" and not _CJK.search(guide.data["summary"])
    assert _CJK.search(zh["summary"]) and _CJK.search(zh["markdown"]) and all(_CJK.search(a) for a in zh["audience"])
    # The same facts: the same focus files, breaking changes and claims, in the same order.
    assert [p["file"] for p in zh["focus"]] == [p["file"] for p in guide.data["focus"]]
    assert [b["key"] for b in zh["breaking_reasons"]] == [b["key"] for b in guide.data["breaking_reasons"]]
    assert [c["evidence"] for c in zh["claims"]] == [c["evidence"] for c in guide.data["claims"]]
    record = guide.record()
    assert record["languages"]["zh"]["markdown"] == zh["markdown"] and record["markdown"] == guide.markdown
    assert "languages" not in guide.data  # `prguide guide --format json` stays one language


async def test_a_guide_stored_once_reads_in_chinese_and_in_english(store, guide):
    english = guide.data
    async with await client_for(store) as client:
        zh = await (await client.get(f"/repos/{REPO}/pulls/{NUMBER}/guide?lang=zh")).text()
        en = await (await client.get(f"/repos/{REPO}/pulls/{NUMBER}/guide")).text()
    body = guide_text(zh)
    assert "调优吞吐、使用性能分析工具的工程师" in zh and "删除了公开的" in " ".join(body.text)
    assert leaked(body, guide) == set(), "English words of the guide on its Chinese page"
    assert 'lang="zh-Hans"' in zh and "stored-lang" not in zh
    assert english["summary"] not in zh and english["audience"][0] not in zh
    body = guide_text(en)
    assert not _CJK.search(" ".join(body.text)), "Chinese on the English page"
    assert english["audience"][0] in en and "stored-lang" not in en


@pytest.mark.parametrize("path", ["tags", "tags?label=area/vllm", f"digest?{WINDOW}"])
async def test_entries_of_the_tags_page_and_digest_follow_lang(store, guide, path):
    zh_texts, english = guide.languages["zh"], guide.data
    async with await client_for(store) as client:
        sep = "&" if "?" in path else "?"
        zh = await (await client.get(f"/repos/{REPO}/{path}{sep}lang=zh")).text()
        en = await (await client.get(f"/repos/{REPO}/{path}")).text()
    shown = entry_text(zh)
    assert zh_texts["summary"] in " ".join(shown.text) and "适合调优吞吐、使用性能分析工具的工程师" in " ".join(shown.text)
    assert zh_texts["breaking_reasons"][0]["reason"] in zh
    assert leaked(shown, guide) == set(), "English words of the guide in a Chinese entry"
    assert english["summary"] not in zh and "engineers" not in zh and "stored-lang" not in zh
    shown = entry_text(en)
    assert english["summary"] in " ".join(shown.text) and english["breaking_reasons"][0]["reason"] in en
    assert not _CJK.search(" ".join(shown.text))


@pytest.mark.parametrize("feed", ["tags.atom", f"digest.atom?{WINDOW}"])
async def test_feeds_follow_lang(store, guide, feed):
    async with await client_for(store) as client:
        sep = "&" if "?" in feed else "?"
        zh = feedparser.parse(await (await client.get(f"/repos/{REPO}/{feed}{sep}lang=zh")).read())
        en = feedparser.parse(await (await client.get(f"/repos/{REPO}/{feed}")).read())
    (zh_entry,), (en_entry,) = zh.entries, en.entries
    assert zh_entry.id == en_entry.id  # one entry, whatever the language
    # A reader of the Chinese feed opens the guide in Chinese, as from the Chinese pages.
    assert zh_entry.link.endswith(f"/repos/{REPO}/pulls/{NUMBER}/guide?lang=zh")
    assert en_entry.link.endswith(f"/repos/{REPO}/pulls/{NUMBER}/guide")
    assert zh_entry.summary.startswith(guide.languages["zh"]["summary"])
    content = Text(zh_entry.content[0].value, lambda tag, a: tag in ("p", "ul"))
    assert leaked(content, guide) - {"GitHub"} == set()
    assert en_entry.summary.startswith(guide.data["summary"]) and not _CJK.search(en_entry.content[0].value)


async def test_a_guide_stored_before_languages_renders_as_stored_marked_with_its_language(store):
    old = make_guide(3, repository=REPO, audience=["engineers maintaining the Megatron backend"],
                     summary="Fixes the retry loop.", breaking_reasons=[{"reason": "public `launch` removed", "key": "k"}],
                     reading_level="deep", markdown="## Guide\n\nThe retry loop changed.\n")
    store.save(old, visibility="public")
    async with await client_for(store) as client:
        page = await (await client.get(f"/repos/{REPO}/pulls/3/guide?lang=zh")).text()
        assert "The retry loop changed." in page and '<div class="guide" lang="en">' in page
        assert 'id="stored-lang"' in page and "English" in page
        tags = await (await client.get(f"/repos/{REPO}/tags?lang=zh")).text()
        digest = await (await client.get(f"/repos/{REPO}/digest?since=2026-01-01&until=2026-01-07&lang=zh")).text()
        feed = feedparser.parse(await (await client.get(f"/repos/{REPO}/tags.atom?lang=zh")).read())
    for html in (tags, digest):
        assert '<p class="summary" lang="en">Fixes the retry loop.</p>' in html
        assert '适合<span lang="en">engineers maintaining the Megatron backend</span>' in html
        assert '<span lang="en">public `launch` removed</span>' in html
        assert 'class="muted stored-lang"' in html
    (entry,) = [e for e in feed.entries if "/pulls/3/" in e.link]
    assert '<p lang="en">Fixes the retry loop.</p>' in entry.content[0].value


def test_cards_are_small_read_per_page_and_fall_back_per_guide(sqlite_store, guide):  # noqa: F811
    sqlite_store.save(guide.record(), visibility="public")
    sqlite_store.save(make_guide(3, repository=REPO), visibility="public")
    # Cards of a stored-before guide are cut from its data, in its own language.
    sqlite_store.connection.execute("DELETE FROM tagview_guide_cards WHERE guide_id = (SELECT id FROM tagview_guides WHERE number = 3)")
    cards = sqlite_store.cards(REPO, [NUMBER, 3, 99], "zh")
    assert set(cards) == {NUMBER, 3}
    assert cards[NUMBER]["lang"] == "zh" and cards[NUMBER]["summary"] == guide.languages["zh"]["summary"]
    assert cards[3]["lang"] == "en" and cards[3]["summary"] == "Fixes thing 3."
    assert sqlite_store.cards(REPO, [NUMBER], "en")[NUMBER]["summary"] == guide.data["summary"]
    assert sqlite_store.cards(REPO, [NUMBER], "fr")[NUMBER]["lang"] == "en"  # a language it was not stored in
    (size,) = sqlite_store.connection.execute("SELECT max(length(card)) FROM tagview_guide_cards").fetchone()
    assert size < len(json.dumps(guide.record(), ensure_ascii=False)) / 10  # no Markdown in a card
    # Search finds the guide by its focus points in either language.
    assert NUMBER in [r.number for r in sqlite_store.query(REPO, search="删除了").items]


def test_bad_languages_are_refused_and_nothing_is_written(sqlite_store):  # noqa: F811
    from bot.tagview.store import GuideDataError

    for bad in (["zh"], {"zh": "text"}, {"../x": {}}):
        with pytest.raises(GuideDataError, match="'languages'"):
            sqlite_store.save(make_guide(1, languages=bad))
    assert sqlite_store.get("acme/rocket", 1) is None


def test_sqlite_database_of_the_previous_version_is_migrated_and_its_guides_still_render(tmp_path, guide):
    from bot.app.db import migrate, open_database, schema_version
    from bot.tagview.pages import WebLinks, render_guide_page
    from bot.tagview.schema import COMPONENT, migrations

    path = tmp_path / "old.db"
    conn = open_database(path)
    migrate(conn, COMPONENT, migrations()[:2])
    _insert_old_row(conn, make_guide(3, repository=REPO, markdown="## Old guide\n"))
    conn.commit()
    conn.close()
    with GuideStore(path) as store:
        assert schema_version(store.connection, COMPONENT) == len(migrations())
        assert store.cards(REPO, [3], "zh")[3]["lang"] == "en"
        html = render_guide_page(data=store.get(REPO, 3), lang="zh", links=WebLinks(REPO, {}, "zh"))
        assert "Old guide" in html and 'id="stored-lang"' in html
        store.save(guide.record(), visibility="public")
        assert store.cards(REPO, [NUMBER], "zh")[NUMBER]["lang"] == "zh"


def test_postgresql_schema_of_the_previous_version_is_migrated_and_its_guides_still_render(pg_url, guide):  # noqa: F811
    from bot.app import pg
    from bot.tagview import pg_schema
    from bot.tagview.pgstore import PgGuideStore

    previous = pg_schema.MIGRATIONS[:2]
    pg.register_migrations(pg_schema.COMPONENT, previous)
    try:
        db = pg.connect(pg_url, max_size=1, migrate_components=[pg_schema.COMPONENT])
    finally:
        pg.register_migrations(pg_schema.COMPONENT, pg_schema.MIGRATIONS)
    try:
        with db.connection() as conn:
            conn.execute("INSERT INTO tagview_repositories (name, visibility) VALUES (%s, 'public')", (REPO,))
            (guide_id,) = conn.execute(
                "INSERT INTO tagview_guides (repository, number, title, lang, summary) VALUES (%s, 3, 'old', 'en', 'Old.') "
                "RETURNING id", (REPO,),
            ).fetchone()
            conn.execute("INSERT INTO tagview_guide_data (guide_id, data) VALUES (%s, %s::json)",
                         (guide_id, json.dumps(make_guide(3, repository=REPO, summary="Old."))))
        assert pg.applied_versions(db)["tagview"] == 2
    finally:
        db.close()
    with PgGuideStore.open(pg_url) as store:
        assert pg.applied_versions(store.database)["tagview"] == len(pg_schema.MIGRATIONS)
        card = store.cards(REPO, [3], "zh")[3]
        assert (card["lang"], card["summary"]) == ("en", "Old.")
        store.save(guide.record(), visibility="public")
        assert store.cards(REPO, [NUMBER, 3], "zh")[NUMBER]["summary"] == guide.languages["zh"]["summary"]
        assert store.delete(REPO, NUMBER) and store.cards(REPO, [NUMBER], "zh") == {}


def _insert_old_row(conn, data: dict) -> None:
    """A guide row as the previous schema's store wrote it (no cards)."""
    conn.execute("INSERT INTO tagview_repositories (name, visibility) VALUES (?, 'public')", (data["repository"],))
    guide_id = conn.execute(
        "INSERT INTO tagview_guides (repository, number, title, lang, summary, stored_at) VALUES (?, ?, ?, ?, ?, '2026-01-01T00:00:00Z') "
        "RETURNING id", (data["repository"], data["number"], data["title"], data["lang"], data["summary"]),
    ).fetchone()[0]
    conn.execute("INSERT INTO tagview_guide_data (guide_id, data) VALUES (?, ?)", (guide_id, json.dumps(data)))


async def test_an_entry_shows_three_breaking_changes_and_how_many_more(sqlite_store):  # noqa: F811
    reasons = [{"reason": f"config key `k{i}` removed", "file": "c.yaml", "key": "breaking.key_removed"} for i in range(40)]
    sqlite_store.save(make_guide(5, breaking=True, reading_level="deep", breaking_reasons=reasons), visibility="public")
    (size,) = sqlite_store.connection.execute("SELECT length(card) FROM tagview_guide_cards").fetchone()
    assert size < 2000  # the card keeps a few, and the count
    async with await client_for(sqlite_store) as client:
        html = await (await client.get("/repos/acme/rocket/tags")).text()
        feed = feedparser.parse(await (await client.get("/repos/acme/rocket/tags.atom?lang=zh")).read())
    assert html.count('<p class="breaking">') == 3 and "config key `k2` removed" in html and "`k3`" not in html
    assert "…and 37 more breaking changes: see the full guide" in html
    assert "……另有 37 处破坏性变更，见完整导读" in feed.entries[0].content[0].value
