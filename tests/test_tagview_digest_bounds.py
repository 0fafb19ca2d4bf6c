"""The digest stays small and off the event loop however busy the window, and says where the guides are.

A page shows the best few read-first pull requests per area and the newest others, and
says how many more there are; the digest feed carries at most ``FEED_ENTRIES``; only what
is shown is read in full; pages are read and rendered in a thread, never on the loop. An
empty window points at the newest week with guides. "Read first" selects: deep reads
and breaking changes, about one pull request in five of the real corpus.
"""

from __future__ import annotations

import threading
from datetime import date
from pathlib import Path

import feedparser
import pytest
from test_tagview_store import make_guide
from test_tagview_web import Page, client_for

from bot.tagview.digest import ALSO_ROWS, GROUP_ENTRIES, is_read_first, read_first_order, select
from bot.tagview.feeds import FEED_ENTRIES
from bot.tagview.model import Brief
from bot.tagview.store import GuideStore
from conftest import SHARED

WEEK = "since=2026-03-02&until=2026-03-08"
DEEP_MEGATRON = 12
DEEP_CORE = 3
SKIMS = 30


def busy_week(store) -> None:
    """A busy ISO week (2 to 8 March 2026): 12 deep Megatron PRs, 3 deep core ones, 30 to skim."""
    number = 100
    for count, area, level in ((DEEP_MEGATRON, "megatron", "deep"), (DEEP_CORE, "core", "deep"), (SKIMS, "docs", "skim")):
        for i in range(count):
            store.save(make_guide(
                number, areas=[area], labels=["bug"], reading_level=level, importance=1 + i % 10,
                merged_at=f"2026-03-{2 + i % 7:02d}T{i % 24:02d}:00:00Z", title=f"{area} {level} {i}",
            ), visibility="public")
            number += 1


@pytest.fixture
def store(tmp_path):
    with GuideStore(tmp_path / "prguide.db") as s:
        busy_week(s)
        yield s


class Watched:
    """A store that records the thread of every call and the numbers whose guides (or their cards) were read."""

    def __init__(self, inner):
        self.inner = inner
        self.threads: set[int] = set()
        self.read: list[int] = []

    def __getattr__(self, name):
        value = getattr(self.inner, name)
        if not callable(value):
            return value

        def call(*args, **kwargs):
            self.threads.add(threading.get_ident())
            if name in ("get", "get_many", "cards"):
                self.read.extend([args[1]] if name == "get" else list(args[1]))
            return value(*args, **kwargs)

        return call


async def test_a_busy_window_shows_the_best_few_per_area_and_how_many_more(store):
    watched = Watched(store)
    async with await client_for(watched) as client:
        html = await (await client.get(f"/repos/acme/rocket/digest?{WEEK}")).text()
    page = Page(html)
    shown = [[r["number"] for r in s["rows"]] for s in page.sections if s["rows"]]
    assert [len(numbers) for numbers in shown] == [GROUP_ENTRIES, DEEP_CORE, ALSO_ROWS]
    assert f"· {DEEP_MEGATRON} pull requests" in html and f"· {SKIMS} pull requests" in html
    more = f"…and {DEEP_MEGATRON - GROUP_ENTRIES} more: every pull request of this area merged in the window"
    assert f'<a href="/repos/acme/rocket/tags?from=2026-03-02&amp;to=2026-03-08&amp;area=megatron">{more}</a>' in html
    also = f"…and {SKIMS - ALSO_ROWS} more: every pull request merged in the window"
    assert f'<a href="/repos/acme/rocket/tags?from=2026-03-02&amp;to=2026-03-08">{also}</a>' in html
    # The best of the area first: importance 10, 9, 8... of the Megatron PRs.
    assert shown[0] == [109, 108, 107, 106, 105]
    # Only what is shown was read in full, and nothing ran on the event loop.
    assert sorted(set(watched.read)) == sorted(shown[0] + shown[1])
    assert threading.get_ident() not in watched.threads


async def test_the_digest_feed_is_capped_and_in_read_first_order(tmp_path):
    with GuideStore(tmp_path / "prguide.db") as store:
        for n in range(1, FEED_ENTRIES + 11):
            store.save(make_guide(n, reading_level="deep", importance=1 + n % 10, merged_at=f"2026-03-0{2 + n % 7}T10:00:00Z"),
                       visibility="public")
        async with await client_for(store) as client:
            body = await (await client.get(f"/repos/acme/rocket/digest.atom?{WEEK}")).read()
        feed = feedparser.parse(body)
        assert not feed.bozo
        numbers = [int(e.link.rsplit("/", 2)[-2]) for e in feed.entries]
        assert len(numbers) == FEED_ENTRIES
        briefs = store.briefs("acme/rocket", since=date(2026, 3, 2), until=date(2026, 3, 8))
        assert numbers == [b.number for b in read_first_order(briefs)][:FEED_ENTRIES]


async def test_pages_are_rendered_off_the_event_loop(store):
    watched = Watched(store)
    async with await client_for(watched) as client:
        for path in ("/repos", "/repos/acme/rocket/tags", "/repos/acme/rocket/tags.json",
                     f"/repos/acme/rocket/digest?{WEEK}", "/repos/acme/rocket/digest.atom", "/repos/acme/rocket/pulls/100/guide"):
            assert (await client.get(path)).status == 200, path
    assert watched.threads and threading.get_ident() not in watched.threads


async def test_an_empty_window_links_the_newest_week_with_guides(store):
    store.save(make_guide(900, labels=["ci"], merged_at="2026-01-14T09:00:00Z"), visibility="public")
    async with await client_for(store) as client:
        # The default window (the server's last 7 days) and an explicit one after every merge.
        for query in ("", "?since=2026-05-01&until=2026-05-07"):
            page = Page(await (await client.get(f"/repos/acme/rocket/digest{query}")).text())
            links = [a for tag, a in page.tags if tag == "a" and a.get("id") == "latest-week"]
            assert [a["href"] for a in links] == ["/repos/acme/rocket/digest?since=2026-03-02&until=2026-03-08"]
        # One label's newest week, in Chinese.
        html = await (await client.get("/repos/acme/rocket/digest?since=2026-05-01&until=2026-05-07&label=ci&lang=zh")).text()
        assert 'href="/repos/acme/rocket/digest?since=2026-01-12&amp;until=2026-01-18&amp;label=ci&amp;lang=zh"' in html
        assert "最新的导读在 2026-01-12 至 2026-01-18 这一周。" in html
        # A window with merges but nothing to read first says so, without a pointer.
        html = await (await client.get("/repos/acme/rocket/digest?since=2026-01-14&until=2026-01-14")).text()
        assert "Nothing merged in this window needs a deep read or breaks anything." in html and "latest-week" not in html


def brief(number: int, level: str | None, importance: int | None = 5, *, breaking: bool = False, area: str = "") -> Brief:
    return Brief(number, f"2026-03-{number:02d}T00:00:00Z", level, importance, breaking, area)


def test_read_first_is_a_deep_read_or_a_breaking_change():
    assert is_read_first(brief(1, "deep")) and is_read_first(brief(2, "skim", 2, breaking=True))
    assert not is_read_first(brief(3, "quick", 10)) and not is_read_first(brief(4, None, None))
    chosen = select([brief(1, "deep", 3, area="a"), brief(2, "quick", 9, breaking=True, area="b"), brief(3, "deep", 8, area="a"),
                     brief(4, "quick", 10), brief(5, "skip", 1)], per_group=1, also_rows=1)
    assert chosen.groups == (("a", (3,), 2), ("b", (2,), 1))
    assert (chosen.also, chosen.also_total, chosen.merged) == ((5,), 2, 5)


@pytest.mark.corpus
def test_read_first_selects_about_one_in_five_real_pull_requests():
    corpus = SHARED / "corpus" / "verl"
    if not corpus.exists():
        pytest.skip(f"the verl corpus is not at {corpus}")
    from bot.engine.build import build_guide
    from bot.engine.rules import load_rules
    from bot.sources.bundle import iter_bundles

    rules = load_rules()
    guides = [g.data for _path, snapshot in iter_bundles(Path(corpus)) if not (g := build_guide(snapshot, rules, lang="en")).skipped]
    first = [d for d in guides if is_read_first(brief(1, d.get("reading_level"), d.get("importance"), breaking=bool(d.get("breaking"))))]
    share = len(first) / len(guides)
    assert len(guides) >= 60 and 0.10 <= share <= 0.30, f"{len(first)} of {len(guides)}"
    # What "read first" was before (deep and quick reads) held half of them.
    assert sum(d.get("reading_level") in ("deep", "quick") for d in guides) / len(guides) > 0.45
