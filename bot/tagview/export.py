"""The tag view as static HTML files, e.g. for GitHub Pages.

Layout under the output folder (every link relative, so the folder can be served
from any path): ``index.html`` lists the repositories; ``OWNER/REPO/index.html`` is
the tag view; ``OWNER/REPO/labels/SLUG.html`` lists every pull request of a label;
``OWNER/REPO/pulls/NUMBER.html`` is one guide; ``OWNER/REPO/digest/YYYY-Www.html`` is the
"what to read" digest of one ISO week (every week with a merge). Chinese pages end in ``.zh.html``.
Static pages cannot filter, so there is no filter form.

Atom feeds sit next to the pages: ``OWNER/REPO/tags.atom`` (the newest merges),
``OWNER/REPO/labels/SLUG.atom`` (a label's) and ``OWNER/REPO/digest.atom`` (what to read
first in the newest week with a merge); Chinese ones end in ``.zh.atom``. Their ids are
those of the live server's feeds (:mod:`bot.tagview.feeds`). With ``public_url`` (where
the folder is published) their links are absolute; without, they are relative to the
feed file, which feed readers resolve against the feed's own address.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from urllib.parse import quote

from bot.tagview.digest import Entry, iso_week_bounds, load_digest, load_read_first, make_entry
from bot.tagview.feeds import FEED_ENTRIES, feed_id, feed_title, render_feed
from bot.tagview.i18n import LANGUAGES, Messages
from bot.tagview.pages import (
    StaticLinks,
    label_slug,
    render_digest_page,
    render_guide_page,
    render_index_page,
    render_tags_page,
)
from bot.tagview.model import MAX_LIMIT, GuideRow, GuideStorage, LabelSection


@dataclass(frozen=True, slots=True)
class ExportSummary:
    """What :func:`export_site` wrote: repository names, the number of HTML files and of Atom feeds."""

    repositories: tuple[str, ...]
    files: int
    feeds: int = 0


def _suffix(lang: str) -> str:
    return ".html" if lang == LANGUAGES[0] else f".{lang}.html"


def _all_rows(store: GuideStorage, repository: str, label: str | None = None) -> Iterator[GuideRow]:
    offset = 0
    while True:
        page = store.query(repository, label=label, limit=MAX_LIMIT, offset=offset)
        yield from page.items
        if page.next_offset is None:
            return
        offset = page.next_offset


def export_site(
    store: GuideStorage, out_dir: str | Path, *, include_private: bool = False, per_label: int = 10,
    public_url: str | None = None,
) -> ExportSummary:
    """Write the tag view of every public repository (and private ones if ``include_private``) to ``out_dir``.

    Pages and feeds (see the module docstring); ``public_url`` is where ``out_dir`` will
    be published (``https://acme.github.io/guides``), for absolute feed links. Files are
    overwritten in place; other files in ``out_dir`` are left alone. A ``.nojekyll`` file
    makes GitHub Pages serve the folder as is. Raises :class:`OSError` when the folder
    cannot be written.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    (out / ".nojekyll").write_text("", encoding="utf-8")
    repositories = [r for r in store.repositories() if r.guides and (include_private or r.visibility == "public")]
    files = feeds = 0

    def write(path: Path, html: str) -> None:
        nonlocal files
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(html, encoding="utf-8")
        files += 1

    def write_feed(path: Path, body: bytes) -> None:
        nonlocal feeds
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(body)
        feeds += 1

    for lang in LANGUAGES:
        links = StaticLinks(None, lang, depth=-2, here="index")
        write(out / f"index{_suffix(lang)}", render_index_page(
            repositories=repositories, lang=lang, links=links, tags_link=links.repository_tags,
            feeds=[(feed_title(lang, r.name, None), _site_feed(r.name, lang)) for r in repositories],
        ))

    for repo in repositories:
        folder = out.joinpath(*repo.name.split("/", 1))
        rows = list(_all_rows(store, repo.name))
        weeks = sorted({_week_name(date.fromisoformat(r.merged_date)) for r in rows if r.merged_date}, reverse=True)
        newest_week = weeks[0] if weeks else None
        sections = store.sections(repo.name, per_label=per_label)
        shown = [row.number for section in sections for row in section.rows]
        labels = store.labels(repo.name)
        full_sections = [
            LabelSection(item.name, item.count, item.description, tuple(_all_rows(store, repo.name, item.name)))
            for item in labels
        ]
        for lang in LANGUAGES:
            top = StaticLinks(repo.name, lang, depth=0, here="index", digest_week=newest_week)
            tags_feed = (feed_title(lang, repo.name, None), top.feed("tags"))
            digest_feed = (feed_title(lang, repo.name, None, digest=True), top.feed("digest"))
            write(folder / f"index{_suffix(lang)}", render_tags_page(
                repository=repo.name, sections=sections, lang=lang, datas=store.cards(repo.name, shown, lang), links=top,
                feeds=[tags_feed, digest_feed] if newest_week else [tags_feed],
            ))
            feed = _FeedWriter(repo.name, lang, public_url, folder, write_feed, rows[0].merged_at if rows else None)
            feed.write("tags", {}, rows[:FEED_ENTRIES], store, feed_title(lang, repo.name, None), "index", depth=0)
            for section in full_sections:
                slug = label_slug(section.name)
                links = StaticLinks(repo.name, lang, depth=1, here=slug, digest_week=newest_week)
                write(folder / "labels" / f"{slug}{_suffix(lang)}", render_tags_page(
                    repository=repo.name, sections=[section], lang=lang, single_label=True,
                    datas=store.cards(repo.name, [row.number for row in section.rows], lang), links=links,
                    feeds=[(feed_title(lang, repo.name, section.name), links.feed(label=section.name))],
                ))
                feed.write(
                    f"labels/{slug}", {"label": section.name}, section.rows[:FEED_ENTRIES], store,
                    feed_title(lang, repo.name, section.name), f"labels/{slug}", depth=1,
                )
            for week in weeks:
                since, until = iso_week_bounds(date.fromisocalendar(int(week[:4]), int(week[6:]), 1))
                digest, week_datas = load_digest(store, repo.name, since, until, lang)
                links = StaticLinks(repo.name, lang, depth=1, here=week, digest_week=week)
                write(folder / "digest" / f"{week}{_suffix(lang)}", render_digest_page(
                    repository=repo.name, digest=digest, lang=lang, links=links, datas=week_datas,
                    weeks=[(name, links.digest(name)) for name in weeks], current_week=week,
                    feeds=[(feed_title(lang, repo.name, None, digest=True), links.feed("digest"))],
                ))
            if newest_week:
                since, until = iso_week_bounds(date.fromisocalendar(int(newest_week[:4]), int(newest_week[6:]), 1))
                entries = load_read_first(store, repo.name, since, until, lang, limit=FEED_ENTRIES)
                feed.write_entries(
                    "digest", {}, entries, feed_title(lang, repo.name, None, digest=True), f"digest/{newest_week}", depth=0,
                )
        for row in rows:
            data = store.get(repo.name, row.number)
            if data is None:  # deleted while exporting
                continue
            for lang in LANGUAGES:
                write(folder / "pulls" / f"{row.number}{_suffix(lang)}", render_guide_page(
                    data={**data, "repository": repo.name}, lang=lang,
                    links=StaticLinks(repo.name, lang, depth=1, here=str(row.number)),
                ))
    return ExportSummary(tuple(r.name for r in repositories), files, feeds)


def _site_feed(repository: str, lang: str) -> str:
    """From the site index: a repository's tags feed."""
    owner, name = repository.split("/", 1)
    return f"{quote(owner)}/{quote(name)}/tags{'.atom' if lang == LANGUAGES[0] else f'.{lang}.atom'}"


class _FeedWriter:
    """Writes one repository's feeds in one language under ``folder`` (``OWNER/REPO``); ``newest`` dates an empty one."""

    def __init__(
        self, repository: str, lang: str, public_url: str | None, folder: Path, write: Callable[[Path, bytes], None],
        newest: str | None,
    ):
        self.repository = repository
        #: The repository's newest merge: what dates an empty feed.
        self.newest = newest
        self.lang = lang
        self.write_file = write
        self.folder = folder
        owner, name = repository.split("/", 1)
        # Absolute links start here; relative ones are relative to the feed file.
        self.root = f"{public_url.rstrip('/')}/{quote(owner)}/{quote(name)}/" if public_url else None
        self.feed_suffix = ".atom" if lang == LANGUAGES[0] else f".{lang}.atom"
        self.page_suffix = _suffix(lang)

    def write(self, name: str, params: dict[str, str], rows: Sequence[GuideRow], store: GuideStorage, title: str,
              page: str, *, depth: int) -> None:
        """The feed ``name`` (``tags``, ``labels/SLUG``) of ``rows``, newest first."""
        datas = store.cards(self.repository, [row.number for row in rows], self.lang)
        messages = Messages(self.lang)
        entries = [make_entry(row, datas.get(row.number), self.lang, messages) for row in rows]
        self.write_entries(name, params, entries, title, page, depth=depth)

    def write_entries(self, name: str, params: dict[str, str], entries: Sequence[Entry], title: str, page: str,
                      *, depth: int) -> None:
        """Write feed ``name`` with ``entries``; ``page`` is the HTML page it mirrors (no suffix), ``depth`` the
        feed's folders below ``OWNER/REPO``."""
        up = "../" * depth

        def url(path: str) -> str:
            return self.root + path if self.root else up + path

        kind = "digest" if name == "digest" else "tags"
        body = render_feed(
            feed_id=feed_id(self.repository, kind, {**params, "lang": self.lang}), title=title,
            self_url=self.root + name + self.feed_suffix if self.root else None,
            page_url=url(page + self.page_suffix), entries=entries, lang=self.lang, updated=self.newest,
            guide_url=lambda number: url(f"pulls/{int(number)}{self.page_suffix}"),
        )
        self.write_file(self.folder / f"{name}{self.feed_suffix}", body)


def _week_name(day: date) -> str:
    """``2026-W05``: the ISO year and week of ``day``."""
    year, week, _ = day.isocalendar()
    return f"{year}-W{week:02d}"
