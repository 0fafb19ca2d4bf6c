"""The tag view as static HTML files, e.g. for GitHub Pages.

Layout under the output folder (every link relative, so the folder can be served
from any path): ``index.html`` lists the repositories; ``OWNER/REPO/index.html`` is
the tag view; ``OWNER/REPO/labels/SLUG.html`` lists every pull request of a label;
``OWNER/REPO/pulls/NUMBER.html`` is one guide; ``OWNER/REPO/digest/YYYY-Www.html`` is the
"what to read" digest of one ISO week (every week with a merge). Chinese pages end in ``.zh.html``.
Static pages cannot filter, so there is no filter form.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from bot.tagview.digest import iso_week_bounds, load_digest
from bot.tagview.i18n import LANGUAGES
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
    """What :func:`export_site` wrote: repository names and the number of HTML files."""

    repositories: tuple[str, ...]
    files: int


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


def export_site(store: GuideStorage, out_dir: str | Path, *, include_private: bool = False, per_label: int = 10) -> ExportSummary:
    """Write the tag view of every public repository (and private ones if ``include_private``) to ``out_dir``.

    Files are overwritten in place; other files in ``out_dir`` are left alone. A
    ``.nojekyll`` file makes GitHub Pages serve the folder as is. Raises :class:`OSError`
    when the folder cannot be written.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    (out / ".nojekyll").write_text("", encoding="utf-8")
    repositories = [r for r in store.repositories() if r.guides and (include_private or r.visibility == "public")]
    files = 0

    def write(path: Path, html: str) -> None:
        nonlocal files
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(html, encoding="utf-8")
        files += 1

    for lang in LANGUAGES:
        links = StaticLinks(None, lang, depth=-2, here="index")
        write(out / f"index{_suffix(lang)}", render_index_page(
            repositories=repositories, lang=lang, links=links, tags_link=links.repository_tags,
        ))

    for repo in repositories:
        folder = out.joinpath(*repo.name.split("/", 1))
        rows = list(_all_rows(store, repo.name))
        weeks = sorted({_week_name(date.fromisoformat(r.merged_date)) for r in rows if r.merged_date}, reverse=True)
        newest_week = weeks[0] if weeks else None
        sections = store.sections(repo.name, per_label=per_label)
        datas = store.get_many(repo.name, [row.number for section in sections for row in section.rows])
        labels = store.labels(repo.name)
        full_sections = [
            LabelSection(item.name, item.count, item.description, tuple(_all_rows(store, repo.name, item.name)))
            for item in labels
        ]
        for lang in LANGUAGES:
            write(folder / f"index{_suffix(lang)}", render_tags_page(
                repository=repo.name, sections=sections, lang=lang, datas=datas,
                links=StaticLinks(repo.name, lang, depth=0, here="index", digest_week=newest_week),
            ))
            for section in full_sections:
                slug = label_slug(section.name)
                write(folder / "labels" / f"{slug}{_suffix(lang)}", render_tags_page(
                    repository=repo.name, sections=[section], lang=lang, single_label=True,
                    datas=store.get_many(repo.name, [row.number for row in section.rows]),
                    links=StaticLinks(repo.name, lang, depth=1, here=slug, digest_week=newest_week),
                ))
            for week in weeks:
                since, until = iso_week_bounds(date.fromisocalendar(int(week[:4]), int(week[6:]), 1))
                digest, week_datas = load_digest(store, repo.name, since, until, lang)
                links = StaticLinks(repo.name, lang, depth=1, here=week, digest_week=week)
                write(folder / "digest" / f"{week}{_suffix(lang)}", render_digest_page(
                    repository=repo.name, digest=digest, lang=lang, links=links, datas=week_datas,
                    weeks=[(name, links.digest(name)) for name in weeks], current_week=week,
                ))
        for row in rows:
            data = store.get(repo.name, row.number)
            if data is None:  # deleted while exporting
                continue
            for lang in LANGUAGES:
                write(folder / "pulls" / f"{row.number}{_suffix(lang)}", render_guide_page(
                    data={**data, "repository": repo.name}, lang=lang,
                    links=StaticLinks(repo.name, lang, depth=1, here=str(row.number)),
                ))
    return ExportSummary(tuple(r.name for r in repositories), files)


def _week_name(day: date) -> str:
    """``2026-W05``: the ISO year and week of ``day``."""
    year, week, _ = day.isocalendar()
    return f"{year}-W{week:02d}"
