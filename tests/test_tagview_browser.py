"""The tag view in a real browser: headless Chromium driven over the DevTools Protocol.

The pages are served on 127.0.0.1 by the test itself; Chromium is started with
networking extras switched off, so nothing leaves the machine. The guides are built
by the engine from the real verl corpus (hand-made ones when it is absent), plus
one whose title and Markdown try to run script. Skips when the ``chromium`` binary
is missing (``apt-get install -y chromium``).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import itertools
import json
import re
import shutil
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp.test_utils import TestServer
from test_tagview_store import make_guide

from bot.tagview.digest import load_digest
from bot.tagview.pages import label_names
from bot.tagview.store import GuideFilter, GuideStore
from bot.tagview.web import TagViewSettings, create_app, rows_per_section
from conftest import CORPUS

CHROMIUM = shutil.which("chromium")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install -y chromium)")

#: Generous upper bounds so a slow machine fails loudly instead of hanging; nothing waits on them.
START_TIMEOUT = 60
STEP_TIMEOUT = 30
PER_LABEL = 10

INJECTED = (
    '<script>document.title="pwned";'
    'document.body.insertAdjacentHTML("beforeend","<p id=pwned>pwned</p>")</script>'
)


class Browser:
    """One headless Chromium with a single page, driven over the DevTools Protocol websocket."""

    def __init__(self, profile: Path):
        self.profile = profile
        self.process: asyncio.subprocess.Process | None = None
        self.session: aiohttp.ClientSession | None = None
        self.ws: aiohttp.ClientWebSocketResponse | None = None
        self.ids = itertools.count(1)
        self.pending: dict[int, asyncio.Future] = {}
        self.waiters: list[tuple[str, asyncio.Future]] = []
        self.exceptions: list[dict] = []
        self.tasks: list[asyncio.Task] = []

    async def start(self) -> None:
        self.process = await asyncio.create_subprocess_exec(
            CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync",
            "--disable-dev-shm-usage", "--disable-extensions", "--mute-audio",
            f"--user-data-dir={self.profile}", "--remote-debugging-address=127.0.0.1", "--remote-debugging-port=0",
            "--window-size=1280,900", "about:blank",
            stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE,
        )
        endpoint = await asyncio.wait_for(self._devtools_endpoint(), START_TIMEOUT)
        # Keep reading stderr so Chromium never blocks on a full pipe.
        self.tasks.append(asyncio.create_task(self._drain()))
        port = re.match(r"ws://127\.0\.0\.1:(\d+)/", endpoint).group(1)
        self.session = aiohttp.ClientSession()
        async with self.session.get(f"http://127.0.0.1:{port}/json/list") as response:
            targets = await response.json()
        page = next(t for t in targets if t["type"] == "page")
        self.ws = await self.session.ws_connect(page["webSocketDebuggerUrl"], max_msg_size=0)
        self.tasks.append(asyncio.create_task(self._read()))
        await self.send("Page.enable")
        await self.send("Runtime.enable")

    async def _devtools_endpoint(self) -> str:
        assert self.process and self.process.stderr
        while True:
            line = await self.process.stderr.readline()
            if not line:
                raise RuntimeError("chromium exited before opening the DevTools port")
            found = re.search(rb"DevTools listening on (ws://\S+)", line)
            if found:
                return found.group(1).decode()

    async def _drain(self) -> None:
        assert self.process and self.process.stderr
        while await self.process.stderr.read(65536):
            pass

    async def _read(self) -> None:
        assert self.ws
        async for message in self.ws:
            data = json.loads(message.data)
            if "id" in data:
                future = self.pending.pop(data["id"], None)
                if future and not future.done():
                    if "error" in data:
                        future.set_exception(RuntimeError(f"{data['error']}"))
                    else:
                        future.set_result(data.get("result", {}))
                continue
            if data.get("method") == "Runtime.exceptionThrown":
                self.exceptions.append(data["params"])
            for name, future in list(self.waiters):
                if name == data.get("method") and not future.done():
                    future.set_result(data.get("params", {}))
                    self.waiters.remove((name, future))

    async def send(self, method: str, **params: Any) -> dict:
        assert self.ws
        call = next(self.ids)
        future = asyncio.get_running_loop().create_future()
        self.pending[call] = future
        await self.ws.send_str(json.dumps({"id": call, "method": method, "params": params}))
        return await asyncio.wait_for(future, STEP_TIMEOUT)

    def expect(self, event: str) -> asyncio.Future:
        future = asyncio.get_running_loop().create_future()
        self.waiters.append((event, future))
        return future

    async def goto(self, url: str) -> None:
        loaded = self.expect("Page.loadEventFired")
        await self.send("Page.navigate", url=url)
        await asyncio.wait_for(loaded, STEP_TIMEOUT)

    async def run(self, expression: str) -> Any:
        result = await self.send("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in result:
            raise RuntimeError(result["exceptionDetails"])
        return result["result"].get("value")

    async def screenshot(self, path: Path) -> bytes:
        data = base64.b64decode((await self.send("Page.captureScreenshot", format="png"))["data"])
        path.write_bytes(data)
        return data

    async def close(self) -> None:
        if self.ws is not None:
            with contextlib.suppress(Exception):
                await self.send("Browser.close")
            await self.ws.close()
        if self.session is not None:
            await self.session.close()
        if self.process is not None and self.process.returncode is None:
            self.process.kill()
        if self.process is not None:
            await self.process.wait()
        for task in self.tasks:
            task.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)


def hand_made_guides() -> list[dict]:
    """Guides shaped like ``Guide.data`` for three labels (used when the corpus is absent)."""
    return [
        make_guide(1, labels=["bug"], reading_level="skim", importance=2),
        make_guide(2, labels=["bug", "ci"], reading_level="deep", importance=8, title="Speed up rollout workers"),
        make_guide(3, labels=["docs"], reading_level="skip", importance=1, title="文档：安装步骤"),
    ]


def corpus_guides() -> list[dict]:
    """Guides built by the engine from the real verl PRs, as the server stores them."""
    from bot.engine.build import build_guide
    from bot.paths import config_dir
    from bot.engine.rules import load_rules
    from bot.sources.bundle import iter_bundles

    rules = load_rules([config_dir() / "examples" / "verl.yml"])
    guides = []
    for _path, snapshot in iter_bundles(CORPUS):
        # As the app stores a guide: both languages, written from the same facts.
        guides.append(build_guide(snapshot, rules, lang="en").record())
    return guides


def injected_guide(repository: str, label: str) -> dict:
    """A guide whose title and Markdown try to run script."""
    return make_guide(
        1, repository=repository, labels=[label], reading_level="deep", importance=10, title=INJECTED,
        merged_at="2030-01-01T00:00:00Z",
        markdown="## Focus\n\n<img src=x onerror=\"document.title='pwned'\">\n\n[x](javascript:alert(1))\n",
    )


SECTIONS_JS = """
[...document.querySelectorAll('section')].map(s => [
    s.dataset.label,
    Number(s.dataset.count),
    s.querySelector('h2').textContent.trim(),
    [...s.querySelectorAll('article.entry')].map(r => Number(r.dataset.number)),
])
"""


def shown_per_label(store: GuideStore, repository: str) -> int:
    """Rows per section on the tags page of all labels (an equal share of the page's entries when labels are many)."""
    return rows_per_section(len(store.labels(repository)), PER_LABEL, TagViewSettings().page_entries)


def expected(store: GuideStore, repository: str, flt: GuideFilter | None = None) -> list[list]:
    per_label = shown_per_label(store, repository)
    return [[s.name, s.count, [r.number for r in s.rows]] for s in store.sections(repository, flt, per_label=per_label)]


@pytest.fixture
async def browser(tmp_path):
    chromium = Browser(tmp_path / "profile")
    try:
        await chromium.start()
        yield chromium
    finally:
        await chromium.close()


async def test_tag_view_in_headless_chromium(tmp_path, browser):
    guides = corpus_guides() if CORPUS.exists() else hand_made_guides()
    repository = guides[0]["repository"]
    with GuideStore(tmp_path / "prguide.db") as store:
        for guide in guides:
            store.save(guide, visibility="public")
        first_label = store.labels(repository)[0].name
        store.save(injected_guide(repository, first_label), visibility="public")
        server = TestServer(create_app(store, TagViewSettings(rows_per_label=PER_LABEL)), host="127.0.0.1")
        await server.start_server()
        try:
            base = f"http://127.0.0.1:{server.port}/repos/{repository}"

            await browser.goto(f"{base}/tags")
            assert await browser.run("document.title") == f"{repository} · tag view"
            sections = await browser.run(SECTIONS_JS)
            assert [[s[0], s[1], s[3]] for s in sections] == expected(store, repository)
            assert len(sections) == len(store.labels(repository)) >= 3
            top = store.labels(repository)[0]
            shown = label_names([top.name], store.get_many(repository, sections[0][3]).values(), "en")
            assert sections[0][2] == f"{shown.get(top.name, (top.name,))[0]} · {top.count} pull requests"
            more = await browser.run("document.querySelectorAll('p.more a').length")
            assert more == sum(1 for s in sections if s[1] > shown_per_label(store, repository))
            # The injected title is shown as text and never ran.
            assert sections[0][3][0] == 1
            assert await browser.run("document.getElementById('pwned')") is None
            assert await browser.run("document.scripts.length") == 0
            cell = await browser.run("document.querySelector('article.entry[data-number=\"1\"] h3 a').textContent")
            assert cell.strip() == INJECTED
            assert browser.exceptions == []

            # Keyboard focus is visible: the first Tab lands on the skip link, outlined.
            await browser.send("Input.dispatchKeyEvent", type="keyDown", key="Tab", code="Tab", windowsVirtualKeyCode=9)
            await browser.send("Input.dispatchKeyEvent", type="keyUp", key="Tab", code="Tab", windowsVirtualKeyCode=9)
            focused = await browser.run(
                "(() => { const e = document.activeElement, s = getComputedStyle(e);"
                " return [e.className, s.outlineStyle, s.outlineWidth]; })()"
            )
            assert focused == ["skip", "solid", "3px"]

            # Filtering through the form itself (a plain GET form, no page script).
            loaded = browser.expect("Page.loadEventFired")
            await browser.run(
                "document.getElementById('f-level').value = 'deep';"
                "document.querySelector('form.filters').requestSubmit(); true"
            )
            await asyncio.wait_for(loaded, STEP_TIMEOUT)
            assert await browser.run("location.search") == "?label=&area=&level=deep&min_importance=&from=&to=&q="
            deep = expected(store, repository, GuideFilter(level="deep"))
            assert deep and [[s[0], s[1], s[3]] for s in await browser.run(SECTIONS_JS)] == deep

            # A filtered URL loaded directly, in Chinese.
            await browser.goto(f"{base}/tags?q=rollout&lang=zh")
            assert await browser.run("document.title") == f"{repository} · 标签视图"
            found = expected(store, repository, GuideFilter(search="rollout"))
            assert found and [[s[0], s[1], s[3]] for s in await browser.run(SECTIONS_JS)] == found

            # Open the injected guide by following its link from the tag view.
            await browser.goto(f"{base}/tags")
            href = await browser.run("document.querySelector('article.entry[data-number=\"1\"] h3 a').href")
            await browser.goto(href)
            assert await browser.run("document.querySelector('article h1').textContent") == f"{repository} #1: {INJECTED}"
            assert await browser.run("document.querySelector('.guide h2').textContent") == "Focus"
            assert await browser.run("document.querySelectorAll('.guide img').length") == 0
            assert await browser.run("document.querySelectorAll('a[href^=\"javascript:\"]').length") == 0
            assert await browser.run("document.scripts.length") == 0
            assert await browser.run("document.title") == f"{repository} #1 · {INJECTED}"
            assert await browser.run("document.getElementById('pwned')") is None
            assert browser.exceptions == []

            # A real guide: its folded file list is a working <details> element.
            number = sections[0][3][1]
            await browser.goto(f"{base}/pulls/{number}/guide")
            title = store.get(repository, number)["title"]
            assert await browser.run("document.querySelector('article h1').textContent") == f"{repository} #{number}: {title}"
            if CORPUS.exists():
                summaries = await browser.run("[...document.querySelectorAll('.guide details > summary')].map(e => e.textContent)")
                assert any(text.startswith("All changed files") for text in summaries)
                assert "&lt;details" not in await browser.run("document.querySelector('.guide').innerHTML")

            # Readable on a phone: nothing but the tables scrolls sideways.
            await browser.send(
                "Emulation.setDeviceMetricsOverride", width=390, height=844, deviceScaleFactor=1, mobile=True
            )
            await browser.goto(f"{base}/tags")
            widths = await browser.run("[document.documentElement.scrollWidth, window.innerWidth]")
            assert widths[0] <= widths[1]
            shot = await browser.screenshot(tmp_path / "tags-phone.png")
            assert shot.startswith(b"\x89PNG\r\n\x1a\n") and len(shot) > 5000
        finally:
            await server.close()


ENTRIES_JS = """
[...document.querySelectorAll('article.entry')].map(a => [
    Number(a.dataset.number),
    a.querySelector('.summary') ? a.querySelector('.summary').textContent.trim() : '',
    (() => { const v = a.querySelector('.verdict').cloneNode(true);
             v.querySelectorAll('.stored-lang').forEach(x => x.remove());
             return v.textContent.trim().replace(/ *·$/, ''); })(),
    [...a.querySelectorAll('ul.focus li')].map(li => li.textContent.trim()),
    a.querySelector('.verdict .stored-lang') !== null,
])
"""


def expected_entries(store: GuideStore, repository: str, since, until, lang: str, label: str | None = None) -> list[list]:
    digest, _ = load_digest(store, repository, since, until, lang, label=label)
    return [
        [e.row.number, e.summary.striptags(), e.verdict,
         [(f"{p.file}: " if p.file else "") + p.reason.striptags() for p in e.focus],
         # A guide stored only in another language says so beside its verdict.
         bool(e.foreign)]
        for e in digest.read_first
    ]


async def test_digest_of_a_corpus_week_in_headless_chromium(tmp_path, browser):
    from datetime import date, timedelta

    guides = corpus_guides() if CORPUS.exists() else hand_made_guides()
    repository = guides[0]["repository"]
    with GuideStore(tmp_path / "prguide.db") as store:
        for guide in guides:
            store.save(guide, visibility="public")
        # The ISO week with the most merges.
        weeks: dict[date, int] = {}
        for guide in guides:
            if guide.get("merged_at"):
                day = date.fromisoformat(guide["merged_at"][:10])
                monday = day - timedelta(days=day.weekday())
                weeks[monday] = weeks.get(monday, 0) + 1
        since = max(weeks, key=weeks.get)
        until = since + timedelta(days=6)
        server = TestServer(create_app(store, TagViewSettings()), host="127.0.0.1")
        await server.start_server()
        try:
            base = f"http://127.0.0.1:{server.port}/repos/{repository}"
            await browser.goto(f"{base}/digest?since={since}&until={until}")
            assert await browser.run("document.title") == f"{repository} · What to read"
            want = expected_entries(store, repository, since, until, "en")
            assert want, "the busiest week has something worth reading"
            shown = await browser.run(ENTRIES_JS)
            assert shown == want
            # Every entry says what it is and why: a summary, a verdict and (for most) focus points.
            assert all(entry[1] and entry[2] for entry in shown)
            assert sum(1 for entry in shown if entry[3]) >= len(shown) // 2
            also = await browser.run("[...document.querySelectorAll('#also tbody tr')].map(r => Number(r.dataset.number))")
            digest, _ = load_digest(store, repository, since, until, "en")
            assert also == [row.number for row in digest.also]
            assert await browser.run("document.scripts.length") == 0
            assert await browser.run("document.querySelector('link[rel=alternate][type=\\'application/atom+xml\\']').href") \
                == f"{base}/digest.atom?since={since}&until={until}"
            shot = tmp_path / "digest-week.png"
            await browser.send("Emulation.setDeviceMetricsOverride", width=1280, height=1600, deviceScaleFactor=1, mobile=False)
            data = await browser.screenshot(shot)
            assert data.startswith(b"\x89PNG\r\n\x1a\n") and len(data) > 20000
            print(f"digest screenshot: {shot}")

            # Filter by a label through the form (a plain GET form).
            # An area label of the week when there is one (corpus), else any label of a read-first entry.
            labels = [name for e in digest.read_first for name in e.row.labels]
            label = next((name for name in labels if name.startswith("area/")), labels[0])
            loaded = browser.expect("Page.loadEventFired")
            await browser.run(
                f"document.getElementById('d-label').value = {json.dumps(label)};"
                "document.querySelector('form.filters').requestSubmit(); true"
            )
            await asyncio.wait_for(loaded, STEP_TIMEOUT)
            filtered = expected_entries(store, repository, since, until, "en", label=label)
            assert filtered and await browser.run(ENTRIES_JS) == filtered
            assert all(label in store.get(repository, entry[0])["labels"] for entry in filtered)

            # The language switch keeps the window and the label; the chrome turns Chinese.
            loaded = browser.expect("Page.loadEventFired")
            await browser.run("document.querySelector('a[hreflang=zh]').click(); true")
            await asyncio.wait_for(loaded, STEP_TIMEOUT)
            assert await browser.run("document.documentElement.lang") == "zh-Hans"
            assert (await browser.run("document.title")).startswith(f"{repository} · 读什么")
            assert await browser.run("document.getElementById('d-since').value") == str(since)
            assert await browser.run(ENTRIES_JS) == expected_entries(store, repository, since, until, "zh", label=label)
            zh_shot = tmp_path / "digest-week-zh.png"
            await browser.screenshot(zh_shot)
            print(f"digest screenshot (zh): {zh_shot}")
            assert browser.exceptions == []
        finally:
            await server.close()
