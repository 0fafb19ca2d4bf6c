"""Static export of the tag view and the ``prguide view`` command's options."""

from __future__ import annotations

import argparse
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from test_tagview_store import make_guide
from test_tagview_web import Page

from bot.tagview import cli
from bot.tagview.export import export_site
from bot.tagview.pages import label_slug
from bot.tagview.store import GuideStore


@pytest.fixture
def db(tmp_path) -> Path:
    path = tmp_path / "prguide.db"
    with GuideStore(path) as s:
        for n in range(1, 6):
            s.save(make_guide(n, labels=["bug"] + (["ci"] if n % 2 else [])), visibility="public")
        s.save(make_guide(6, labels=["bug"], title="<script>x()</script>"), visibility="public")
        s.save(make_guide(1, repository="acme/secret", title="hidden work"), visibility="private")
    return path


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="prguide view")
    cli.add_arguments(parser)
    return parser.parse_args(argv)


def local_links(root: Path, page: Path) -> list[str]:
    return [href for href in Page(page.read_text(encoding="utf-8")).links if not urlsplit(href).scheme]


def test_export_writes_linked_pages_for_public_repositories(db, tmp_path):
    out = tmp_path / "site"
    with GuideStore(db) as store:
        summary = export_site(store, out, per_label=2)
    assert summary.repositories == ("acme/rocket",)
    assert (out / ".nojekyll").exists()
    tags = out / "acme" / "rocket" / "index.html"
    page = Page(tags.read_text(encoding="utf-8"))
    assert page.title == "acme/rocket · tag view"
    assert page.summary() == [("bug", 6, [6, 5]), ("ci", 3, [5, 3])]
    assert "<form" not in tags.read_text(encoding="utf-8")
    full = Page((out / "acme" / "rocket" / "labels" / f"{label_slug('bug')}.html").read_text(encoding="utf-8"))
    assert full.summary() == [("bug", 6, [6, 5, 4, 3, 2, 1])]
    guide = (out / "acme" / "rocket" / "pulls" / "6.html").read_text(encoding="utf-8")
    assert "&lt;script&gt;x()&lt;/script&gt;" in guide and "<script" not in guide
    assert (out / "acme" / "rocket" / "pulls" / "6.zh.html").exists()
    assert "标签视图" in (out / "acme" / "rocket" / "index.zh.html").read_text(encoding="utf-8")
    # Private repositories stay out of a public site.
    assert not (out / "acme" / "secret").exists()
    assert "acme/secret" not in (out / "index.html").read_text(encoding="utf-8")
    # Every relative link of every page points at a file that was written.
    pages = sorted(out.rglob("*.html"))
    assert len(pages) == summary.files
    for html in pages:
        ids = Page(html.read_text(encoding="utf-8")).ids
        for href in local_links(out, html):
            if href.startswith("#"):
                assert href[1:] in ids, f"{html.relative_to(out)} links to missing anchor {href}"
                continue
            target = (html.parent / href).resolve()
            assert target.is_file(), f"{html.relative_to(out)} links to missing {href}"


def test_export_includes_private_repositories_only_when_asked(db, tmp_path):
    with GuideStore(db) as store:
        summary = export_site(store, tmp_path / "all", include_private=True)
    assert summary.repositories == ("acme/rocket", "acme/secret")
    assert (tmp_path / "all" / "acme" / "secret" / "pulls" / "1.html").is_file()


def test_view_command_exports(db, tmp_path, capsys):
    assert cli.run(parse(["--db", str(db), "--export", str(tmp_path / "out")])) == 0
    assert "pages for 1 repository to" in capsys.readouterr().out
    assert (tmp_path / "out" / "acme" / "rocket" / "index.html").is_file()


def test_view_command_defaults_to_this_machine_only():
    args = parse(["--db", "x.db"])
    assert args.host == "127.0.0.1" and args.export is None and args.include_private is False


def test_view_command_refuses_a_missing_database(tmp_path, capsys):
    assert cli.run(parse(["--db", str(tmp_path / "none.db")])) == 2
    assert "no database" in capsys.readouterr().err
    assert not (tmp_path / "none.db").exists()


def test_view_command_keeps_private_repositories_off_the_network(db, capsys, monkeypatch):
    monkeypatch.delenv("PRGUIDE_VIEW_TOKEN", raising=False)
    assert cli.run(parse(["--db", str(db), "--host", "0.0.0.0", "--include-private"])) == 2
    assert "loopback" in capsys.readouterr().err


def test_view_says_private_repositories_are_hidden_and_how_to_show_them(tmp_path, capsys, monkeypatch):
    path = tmp_path / "offline.db"
    with GuideStore(path) as s:  # what `history --db` / `guide --db` store without --public
        s.save(make_guide(1), visibility=None)
        s.save(make_guide(2, repository="acme/other"), visibility=None)

    site = tmp_path / "site"
    assert cli.run(parse(["--db", str(path), "--export", str(site)])) == 1
    out, err = capsys.readouterr()
    assert out == "" and not site.exists()
    assert err == (
        f"prguide view: nothing to export: all 2 repositories in {path} are private (stored without --public); "
        "pass --include-private to export them\n"
    )
    assert cli.run(parse(["--db", str(path), "--export", str(site), "--include-private"])) == 0
    assert "pages for 2 repositories" in capsys.readouterr().out

    served = {}
    import bot.tagview.web as web_module

    monkeypatch.setattr(web_module, "create_app", lambda store, settings: served.setdefault("settings", settings))
    monkeypatch.setattr("aiohttp.web.run_app", lambda app, **kw: None)
    assert cli.run(parse(["--db", str(path)])) == 0
    assert capsys.readouterr().err == "prguide view: 2 private repositories are hidden; pass --include-private to show them\n"
    assert served["settings"].say_hidden and not served["settings"].show_private


def test_export_with_some_private_repositories_names_what_it_left_out(db, tmp_path, capsys):
    assert cli.run(parse(["--db", str(db), "--export", str(tmp_path / "out")])) == 0
    out, err = capsys.readouterr()
    assert "pages for 1 repository" in out
    assert err == "prguide view: left out 1 private repository; pass --include-private to export it too\n"


def parse_atom(body: bytes):
    import feedparser

    parsed = feedparser.parse(body)
    assert not parsed.bozo, parsed.get("bozo_exception")
    return parsed


def feed_file(path: Path):
    return parse_atom(path.read_bytes())


async def test_export_writes_the_feeds_with_the_live_servers_ids(db, tmp_path):
    from test_tagview_web import client_for

    out = tmp_path / "site"
    with GuideStore(db) as store:
        summary = export_site(store, out)
        async with await client_for(store) as client:
            live = parse_atom(await (await client.get("/repos/acme/rocket/tags.atom")).read())
            live_label = parse_atom(await (await client.get("/repos/acme/rocket/tags.atom?label=ci&lang=zh")).read())
    folder = out / "acme" / "rocket"
    written = sorted(str(p.relative_to(out)) for p in out.rglob("*.atom"))
    slugs = {name: label_slug(name) for name in ("bug", "ci")}
    assert written == sorted(
        f"acme/rocket/{name}{suffix}" for suffix in (".atom", ".zh.atom")
        for name in ("tags", "digest", f"labels/{slugs['bug']}", f"labels/{slugs['ci']}")
    )
    assert summary.feeds == len(written)
    tags = feed_file(folder / "tags.atom")
    assert tags.feed.id == live.feed.id and [e.id for e in tags.entries] == [e.id for e in live.entries]
    label = feed_file(folder / "labels" / f"{slugs['ci']}.zh.atom")
    assert label.feed.id == live_label.feed.id and label.feed.language == "zh"
    assert [e.link for e in label.entries] == ["../pulls/5.zh.html", "../pulls/3.zh.html", "../pulls/1.zh.html"]
    # Without a public URL, links are relative to the feed file, and every one is a written page.
    for feed_path in out.rglob("*.atom"):
        feed = feed_file(feed_path)
        assert "self" not in {link.rel for link in feed.feed.links}
        for href in [feed.feed.link, *(e.link for e in feed.entries)]:
            assert (feed_path.parent / href).resolve().is_file(), f"{feed_path.relative_to(out)} links to missing {href}"
    digest = feed_file(folder / "digest.atom")
    # Nothing deep or breaking here: an empty feed, dated by the newest merge.
    assert digest.feed.link.startswith("digest/2026-W") and digest.entries == []
    assert digest.feed.updated == "2026-01-06T12:00:00+00:00"
    # The pages advertise their feeds.
    assert 'type="application/atom+xml" title="acme/rocket: merged pull requests" href="tags.atom"' in (
        folder / "index.html").read_text(encoding="utf-8")
    assert 'href="acme/rocket/tags.zh.atom"' in (out / "index.zh.html").read_text(encoding="utf-8")
    assert f'href="../labels/{slugs["bug"]}.atom"' in (folder / "labels" / f"{slugs['bug']}.html").read_text(encoding="utf-8")
    assert not list((out / "acme").glob("secret*"))


def test_export_feeds_link_the_public_url_and_the_command_says_so(db, tmp_path, capsys):
    out = tmp_path / "site"
    assert cli.run(parse(["--db", str(db), "--export", str(out), "--public-url", "https://acme.github.io/guides/"])) == 0
    assert "and 8 Atom feeds" in capsys.readouterr().out
    feed = feed_file(out / "acme" / "rocket" / "tags.atom")
    links = {link.rel: link.href for link in feed.feed.links}
    assert links == {"self": "https://acme.github.io/guides/acme/rocket/tags.atom",
                     "alternate": "https://acme.github.io/guides/acme/rocket/index.html"}
    assert feed.entries[0].link == "https://acme.github.io/guides/acme/rocket/pulls/6.html"
    assert cli.run(parse(["--db", str(db), "--export", str(out), "--public-url", "acme.github.io"])) == 2
    assert capsys.readouterr().err.startswith("prguide view: --public-url must be an http(s) URL")
