"""The tag view's HTML pages, shared by the live server and the static export.

Pages are rendered with Jinja2 with autoescaping always on; the only unescaped
markup is the guide HTML from :func:`bot.tagview.markdown.render_markdown`. Each
page gets a *links* object that knows whether it is served live (filters in the
query string) or exported (relative ``.html`` files), so templates never build URLs.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol
from urllib.parse import quote, urlencode, urlsplit

from jinja2 import Environment, PackageLoader, StrictUndefined
from markupsafe import Markup

from bot.tagview.digest import Digest, html_lang, label_displays, make_entry
from bot.tagview.guide_data import localized
from bot.tagview.i18n import LANGUAGE_NAMES, LANGUAGES, Messages
from bot.tagview.markdown import render_markdown
from bot.tagview.model import READING_LEVELS, GuideRow, LabelCount, LabelSection, RepositoryInfo

#: Content-Security-Policy of every tag-view page (sent as a header and as a meta tag).
CONTENT_SECURITY_POLICY = "default-src 'none'; style-src 'self' 'unsafe-inline'; img-src https: data:"

#: Query parameters of the filter form, in form order.
FILTER_PARAMS = ("label", "area", "level", "min_importance", "from", "to", "q")


class Links(Protocol):
    """Where a page's links point; see :class:`WebLinks` and :class:`StaticLinks`."""

    can_filter: bool

    def home(self) -> str: ...
    def tags(self) -> str: ...
    def label(self, name: str) -> str: ...
    def guide(self, number: int) -> str: ...
    def language(self, lang: str) -> str: ...
    def clear(self) -> str: ...
    def all_labels(self) -> str: ...


def label_slug(name: str) -> str:
    """A stable, file- and id-safe name for a label: ASCII words plus a short hash.

    Two labels differing only in case share a slug, as GitHub treats them as one label.
    """
    words = re.sub(r"[^a-z0-9]+", "-", name.casefold()).strip("-")[:40] or "label"
    digest = hashlib.sha1(name.casefold().encode("utf-8")).hexdigest()[:8]
    return f"{words}-{digest}"


# An http(s) URL whose host is plain ASCII letters, digits, dots and dashes (and a port):
# urlsplit would find that host and not raise, so the answer is known without it. (Its
# cache holds 128 URLs: a page of more entries parsed every one of them again.)
_PLAIN_HTTP_URL = re.compile(r"https?://[A-Za-z0-9.-]+(?::[0-9]*)?(?:[/?#]|\Z)")


def safe_url(url: object) -> str | None:
    """``url`` when it is an absolute http(s) URL, else ``None`` (never link to ``javascript:``)."""
    if not isinstance(url, str) or not url.startswith(("https://", "http://")):
        return None
    if _PLAIN_HTTP_URL.match(url):
        return url
    try:
        parts = urlsplit(url)
    except ValueError:
        return None
    return url if parts.netloc else None


def _lang_query(lang: str) -> dict[str, str]:
    return {} if lang == LANGUAGES[0] else {"lang": lang}


def _with_query(path: str, params: Mapping[str, str]) -> str:
    kept = {k: v for k, v in params.items() if v not in (None, "")}
    return f"{path}?{urlencode(kept)}" if kept else path


class WebLinks:
    """Links of the live server: ``/repos/{owner}/{repo}/...`` with filters in the query string.

    ``params`` are the request's query parameters (filters, ``page``, ``lang``); ``here``
    is the path of a page other than the tags page, for the language switch.
    """

    can_filter = True

    def __init__(self, repository: str, params: Mapping[str, str], lang: str, *, prefix: str = "", here: str | None = None):
        self.repository = repository
        self.lang = lang
        self.here = here
        self.params = {k: params[k] for k in (*FILTER_PARAMS, "page") if params.get(k)}
        owner, name = repository.split("/", 1)
        self.base = f"{prefix}/repos/{quote(owner, safe='')}/{quote(name, safe='')}"
        self.prefix = prefix
        self._lang_suffix = _with_query("", _lang_query(lang))

    def home(self) -> str:
        return _with_query(f"{self.prefix}/repos", _lang_query(self.lang))

    def tags(self) -> str:
        return _with_query(f"{self.base}/tags", _lang_query(self.lang))

    def current(self, **changes: str | None) -> str:
        """This tags page with some parameters changed (``None`` removes one)."""
        params = {**self.params, **_lang_query(self.lang)}
        for key, value in changes.items():
            if value is None:
                params.pop(key, None)
            else:
                params[key] = value
        return _with_query(f"{self.base}/tags", params)

    def label(self, name: str) -> str:
        return self.current(label=name, page=None)

    def page(self, number: int) -> str:
        return self.current(page=str(number) if number > 1 else None)

    def guide(self, number: int) -> str:
        # Called once per row: keep it to string formatting.
        return f"{self.base}/pulls/{int(number)}/guide{self._lang_suffix}"

    def language(self, lang: str) -> str:
        if self.here:
            # ``here`` may carry its own query (the digest's window and label).
            return self.here + ("&" if "?" in self.here else "?") + urlencode({"lang": lang})
        return self.current(lang=None if lang == LANGUAGES[0] else lang)

    def clear(self) -> str:
        return self.tags()

    def all_labels(self) -> str:
        return self.current(label=None, page=None)

    def form_action(self) -> str:
        return f"{self.base}/tags"

    def digest(self, **params: str | None) -> str:
        """The repository's digest page (default window), with ``since``/``until``/``label`` when given."""
        return _with_query(f"{self.base}/digest", {**{k: v for k, v in params.items() if v}, **_lang_query(self.lang)})

    def digest_action(self) -> str:
        return f"{self.base}/digest"

    def browse(self, filters: Mapping[str, str | None]) -> str:
        """The tags page with ``filters`` (query parameters such as ``from``, ``to``, ``area``, ``label``)."""
        return _with_query(f"{self.base}/tags", {**{k: v for k, v in filters.items() if v}, **_lang_query(self.lang)})

    def feed(self, kind: str = "tags", **params: str | None) -> str:
        """The Atom feed of the tags list (``kind="tags"``) or the digest (``"digest"``) with the given filters."""
        return _with_query(f"{self.base}/{kind}.atom", {**{k: v for k, v in params.items() if v}, **_lang_query(self.lang)})


class StaticLinks:
    """Links of the static export, relative to the page's own file.

    Layout: ``index.html``; ``OWNER/REPO/index.html`` (tags); ``OWNER/REPO/labels/SLUG.html``;
    ``OWNER/REPO/pulls/NUMBER.html``; feeds ``OWNER/REPO/tags.atom``, ``digest.atom`` and
    ``labels/SLUG.atom``; Chinese pages end in ``.zh.html``, feeds in ``.zh.atom``. ``depth`` is how
    many folders below ``OWNER/REPO`` the page is (0 for the tags page, 1 for the others,
    -2 for the site index); ``here`` is the page's own file name for the language switch.
    """

    can_filter = False

    def __init__(self, repository: str | None, lang: str, *, depth: int, here: str, digest_week: str | None = None):
        self.repository = repository
        self.lang = lang
        self.depth = depth
        self.here = here
        self.digest_week = digest_week

    def digest(self, week: str | None = None) -> str | None:
        """The digest page of ISO week ``week`` (``2026-W05``; default the newest), or ``None`` without one."""
        week = week or self.digest_week
        return self._up() + f"digest/{week}" + self._suffix() if week else None

    def _suffix(self, lang: str | None = None) -> str:
        return ".html" if (lang or self.lang) == LANGUAGES[0] else f".{lang or self.lang}.html"

    def _up(self) -> str:
        return "../" * self.depth if self.depth > 0 else ""

    def home(self) -> str:
        return ("../" * (self.depth + 2)) + "index" + self._suffix()

    def tags(self) -> str:
        return self._up() + "index" + self._suffix()

    def label(self, name: str) -> str:
        return self._up() + "labels/" + label_slug(name) + self._suffix()

    def guide(self, number: int) -> str:
        return self._up() + f"pulls/{number}" + self._suffix()

    def browse(self, filters: Mapping[str, str | None]) -> str:
        """Static pages cannot filter: the repository's tags page."""
        return self.tags()

    def feed(self, kind: str = "tags", label: str | None = None) -> str:
        """The exported Atom feed ``kind`` (``"tags"``, ``"digest"``), or a label's tags feed."""
        if label is not None:
            return self._up() + "labels/" + label_slug(label) + self._feed_suffix()
        return self._up() + kind + self._feed_suffix()

    def _feed_suffix(self) -> str:
        return ".atom" if self.lang == LANGUAGES[0] else f".{self.lang}.atom"

    def repository_tags(self, repository: str) -> str:
        """From the site index: a repository's tags page."""
        owner, name = repository.split("/", 1)
        return f"{quote(owner)}/{quote(name)}/index{self._suffix()}"

    def language(self, lang: str) -> str:
        return self.here + self._suffix(lang)

    def clear(self) -> str:
        return self.tags()

    def all_labels(self) -> str:
        return self.tags()


@dataclass(frozen=True, slots=True)
class Pager:
    """Position in a paged list: rows ``first``-``last`` (1-based) of ``total``; links or ``None``."""

    first: int
    last: int
    total: int
    newer: str | None
    older: str | None


def _environment() -> Environment:
    env = Environment(
        loader=PackageLoader("bot.tagview", "templates"),
        autoescape=True,
        trim_blocks=True,
        lstrip_blocks=True,
        undefined=StrictUndefined,
    )
    env.globals.update(
        CSP=CONTENT_SECURITY_POLICY,
        LANGUAGES=LANGUAGES,
        LANGUAGE_NAMES=LANGUAGE_NAMES,
        READING_LEVELS=READING_LEVELS,
        label_slug=label_slug,
        safe_url=safe_url,
    )
    return env


_ENV = _environment()


def _render(template: str, lang: str, **context: Any) -> str:
    context.setdefault("feeds", ())
    return _ENV.get_template(template).render(lang=lang, t=Messages(lang), **context)


def render_tags_page(
    *,
    repository: str,
    sections: Sequence[LabelSection],
    lang: str,
    links: Links,
    filters: Mapping[str, str] | None = None,
    label_options: Sequence[LabelCount] = (),
    area_options: Sequence[tuple[str, int]] = (),
    pager: Pager | None = None,
    single_label: bool = False,
    datas: Mapping[int, Mapping[str, Any]] | None = None,
    feeds: Sequence[tuple[str, str]] = (),
    label_pager: Pager | None = None,
) -> str:
    """The tag view of one repository: a filter form (live only) and one section per label.

    ``filters`` are the current form values by query parameter name (:data:`FILTER_PARAMS`);
    a section whose ``count`` exceeds its rows links to its full list unless ``pager``
    is given (then newer/older links follow it). ``single_label`` adds a link back to
    all labels. ``datas`` maps pull request numbers to their stored guide data, for the
    digest entries (a row without data shows what the row holds); ``feeds`` are
    ``(title, url)`` pairs advertised as Atom alternates. ``label_pager`` places a page of
    labels among all of them (labels ranked by their pull requests, most first): ``newer``
    links to the labels before it, ``older`` to those after.
    """
    messages = Messages(lang)
    datas = datas or {}
    # A pull request under several labels is shown in each section from one entry.
    rows = {row.number: row for section in sections for row in section.rows}
    return _render(
        "tags.html",
        lang,
        entries={number: make_entry(row, datas.get(number), lang, messages) for number, row in rows.items()},
        label_names=label_names([*(s.name for s in sections), *(o.name for o in label_options)], datas.values(), lang),
        feeds=feeds,
        repository=repository,
        sections=sections,
        links=links,
        filters={key: (filters or {}).get(key, "") for key in FILTER_PARAMS},
        label_options=label_options,
        area_options=area_options,
        pager=pager,
        single_label=single_label,
        label_pager=label_pager,
    )


def render_guide_page(*, data: Mapping[str, Any], lang: str, links: Links, feeds: Sequence[tuple[str, str]] = ()) -> str:
    """One stored guide (``Guide.record()``) with its Markdown rendered safely; ``feeds`` as for :func:`render_tags_page`.

    The guide is shown as written in ``lang`` when it was stored in it; otherwise as
    stored, marked with its language (``lang`` attribute and a note).
    """
    merged_at = data.get("merged_at") if isinstance(data.get("merged_at"), str) else None
    labels = [x for x in data.get("labels") or () if isinstance(x, str)]
    markdown, guide_lang = localized(data, lang)
    return _render(
        "guide.html",
        lang,
        repository=str(data.get("repository") or ""),
        number=data.get("number"),
        title=str(data.get("title") or ""),
        url=safe_url(data.get("url")),
        labels=labels,
        importance=data.get("importance"),
        reading_level=data.get("reading_level") if data.get("reading_level") in READING_LEVELS else None,
        reading_minutes=data.get("reading_minutes"),
        merged_date=merged_at[:10] if merged_at else None,
        guide_lang=guide_lang,
        html_lang=html_lang(guide_lang) if guide_lang else "",
        body=Markup(render_markdown(markdown)),
        links=links,
        feeds=feeds,
    )


def render_index_page(
    *, repositories: Sequence[RepositoryInfo], lang: str, links: Links, tags_link: Any, hidden: int = 0,
    feeds: Sequence[tuple[str, str]] = (),
) -> str:
    """The list of repositories with stored guides; ``tags_link(name)`` gives each one's tags URL.

    ``hidden``: how many private repositories are left out, said on the page with how to
    show them (only for a reader who owns the database: see ``TagViewSettings.say_hidden``).
    """
    return _render("index.html", lang, repositories=repositories, links=links, tags_link=tags_link, hidden=hidden, feeds=feeds)


def render_error_page(*, title: str, text: str, lang: str) -> str:
    """A small page explaining an error (404, 400, 401)."""
    return _render("error.html", lang, title=title, text=text)


def label_names(labels: Sequence[str], datas: Any, lang: str) -> dict[str, tuple[str, str]]:
    """``{label: (display name, description)}`` for the area labels among ``labels`` that some guide in ``datas`` names."""
    shown = label_displays(list(datas), dict.fromkeys(labels), lang, Messages(lang))
    return {name: pair for name, pair in shown.items() if pair != (name, "")}


def render_digest_page(
    *,
    repository: str,
    digest: Digest,
    lang: str,
    links: Any,
    label: str | None = None,
    label_options: Sequence[LabelCount] = (),
    datas: Mapping[int, Mapping[str, Any]] | None = None,
    feeds: Sequence[tuple[str, str]] = (),
    weeks: Sequence[tuple[str, str]] = (),
    current_week: str = "",
) -> str:
    """The "what to read" page: ``digest``'s read-first entries by area and the "also merged" table.

    ``label`` narrows the heading; ``weeks`` are ``(ISO week, url)`` links (static export).
    """
    messages = Messages(lang)
    names = label_names([*(o.name for o in label_options), *([label] if label else [])], (datas or {}).values(), lang)
    shown = names.get(label, (label, ""))[0] if label else None
    heading = messages("digest.title_label", label=shown) if shown else messages("digest.title")
    return _render(
        "digest.html", lang, repository=repository, digest=digest, links=links, label=label, heading=heading,
        label_options=label_options, label_names=names, feeds=feeds, weeks=weeks, current_week=current_week,
    )


def row_reading(row: GuideRow, messages: Messages) -> str:
    """"deep read · 12 min" for a row (used by templates and tests)."""
    parts = [messages.level(row.reading_level)]
    if row.reading_minutes is not None:
        parts.append(messages("minutes", minutes=row.reading_minutes))
    return " · ".join(p for p in parts if p)


_ENV.globals["row_reading"] = row_reading
