"""What one tag-view page costs: each shown guide's entry built once, plain lines never parsed, guides read once.

The pages must stay byte for byte what they were; these tests pin the work behind them.
"""

from __future__ import annotations

from collections.abc import Mapping
from urllib.parse import urlsplit

from hypothesis import given, settings
from hypothesis import strategies as st
from test_tagview_store import make_guide

import bot.tagview.digest as digest_module
from bot.tagview import markdown
from bot.tagview.i18n import Messages
from bot.tagview.pages import WebLinks, label_names, render_tags_page
from bot.tagview.store import GuideStore


def test_a_guide_under_several_labels_gets_one_entry(tmp_path, monkeypatch):
    with GuideStore(tmp_path / "g.db") as store:
        for number in range(1, 6):
            store.save(make_guide(number, labels=["bug", "ci", "docs"]))
        sections = store.sections("acme/rocket")
        datas = store.get_many("acme/rocket", [1, 2, 3, 4, 5])
    built = []
    real = digest_module.make_entry

    def counting(row, *args, **kwargs):
        built.append(row.number)
        return real(row, *args, **kwargs)

    monkeypatch.setattr("bot.tagview.pages.make_entry", counting)
    html = render_tags_page(
        repository="acme/rocket", sections=sections, lang="en", links=WebLinks("acme/rocket", {}, "en"), datas=datas,
    )
    assert sorted(built) == [1, 2, 3, 4, 5]
    assert html.count('data-number="3"') == 3  # still shown in each of its three sections


def test_plain_focus_lines_are_escaped_without_running_the_parser(monkeypatch):
    calls = []
    real = markdown._MD.renderInline
    monkeypatch.setattr(markdown._MD, "renderInline", lambda text, *a: calls.append(text) or real(text, *a))
    assert markdown.render_inline('retry loop changed for "big" batches') == "retry loop changed for &quot;big&quot; batches"
    assert calls == []
    assert markdown.render_inline("uses `step()` now") == "uses <code>step()</code> now"
    assert calls == ["uses `step()` now"]


_INLINE = st.text(
    alphabet=st.sampled_from(list("ab cé数 \t.,;'\"()/?|") + list("\n!#$%&*+-:<=>@[\\]^_`{}~\r\0")), max_size=30
) | st.sampled_from(["**bold**", "`code`", "[x](https://example.com)", "<b>", "a & b", "~~gone~~", "x_y_z", "  spaced  "])


@settings(max_examples=300, deadline=None)
@given(_INLINE)
def test_render_inline_is_what_the_parser_renders(text):
    assert markdown.render_inline(text) == markdown._MD.renderInline(text)


class _Counted(Mapping):
    """A guide's data that counts how often its label areas are read."""

    reads = 0

    def __init__(self, data):
        self._data = data

    def __getitem__(self, key):
        if key == "label_areas":
            _Counted.reads += 1
        return self._data[key]

    def __iter__(self):
        return iter(self._data)

    def __len__(self):
        return len(self._data)


def test_label_names_read_each_guide_once_and_pick_the_first_guide_naming_a_label():
    info = {"rollout": {"names": {"en": "Rollout", "zh": "推理"}, "audience": {"en": "RL people"}}}
    datas = [
        _Counted({"label_areas": {}, "area_info": {}}),
        _Counted({"label_areas": {"Area/Rollout": "rollout"}, "area_info": info}),
        _Counted({"label_areas": {"area/rollout": "other"}, "area_info": {"other": {"names": {"en": "Other"}}}}),
    ] + [_Counted({"label_areas": {}}) for _ in range(20)]
    _Counted.reads = 0
    names = label_names(["area/rollout", "bug", *[f"x{i}" for i in range(30)]], datas, "en")
    assert names == {"area/rollout": ("Rollout", Messages("en")("digest.area_for", audience="RL people"))}
    assert _Counted.reads == len(datas)


def test_plain_pull_request_urls_are_judged_without_urlsplit(monkeypatch):
    import bot.tagview.pages as pages

    calls = []
    monkeypatch.setattr(pages, "urlsplit", lambda url: calls.append(url) or urlsplit(url))
    assert pages.safe_url("https://github.com/acme/rocket/pull/7") == "https://github.com/acme/rocket/pull/7"
    assert pages.safe_url("http://ghe.example:8080") == "http://ghe.example:8080"
    assert calls == []
    assert pages.safe_url("https://[::1/x") is None and calls == ["https://[::1/x"]


def _urlsplit_verdict(url: str) -> str | None:
    """What safe_url answered when it asked urlsplit about every URL."""
    if not url.startswith(("https://", "http://")):
        return None
    try:
        return url if urlsplit(url).netloc else None
    except ValueError:
        return None


@settings(max_examples=500, deadline=None)
@given(st.sampled_from(["https://", "http://", "http:/", "javascript:"]),
       st.text(alphabet=st.sampled_from(list("abAZ09.-:/?#[]@ \t\n%é\\")), max_size=20))  # fmt: skip
def test_safe_url_answers_as_urlsplit_does(prefix, rest):
    from bot.tagview.pages import safe_url

    assert safe_url(prefix + rest) == _urlsplit_verdict(prefix + rest)
