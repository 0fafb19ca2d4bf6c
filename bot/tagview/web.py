"""The tag view over HTTP: aiohttp routes for the HTML pages and the JSON list.

Routes (all ``GET``; ``HEAD`` too):

- ``/repos``: the repositories this request may see.
- ``/repos/{owner}/{repo}/tags``: one section per label, newest pull requests first (at most
  ``rows_per_label`` each, fewer when many labels would pass ``page_entries``), with
  a filter form (``label``, ``area``, ``level``, ``min_importance``, ``from``, ``to``, ``q``)
  and ``lang=zh`` for Chinese pages, guides included (every page, digest and feed takes
  ``lang``: a guide stored once is shown in either language); with ``label`` set, that label's pull requests page
  by ``page``; without, at most ``page_entries`` labels are shown, the most used first, and
  ``page`` pages through the others.
- ``/repos/{owner}/{repo}/tags.json``: the same filters, ``per_page`` (1-100, default 30)
  and ``page``; a ``Link`` header and a ``next`` field point at the next page.
- ``/repos/{owner}/{repo}/pulls/{number}/guide``: one guide rendered to HTML.
- ``/repos/{owner}/{repo}/digest``: what to read first among the pull requests merged
  between ``since`` and ``until`` (``YYYY-MM-DD``, inclusive, UTC; default the last 7
  days), grouped by area, optionally for one ``label``; a bad value answers 400. A
  bounded page: the best few per area and the newest others, with how many more.
- ``/repos/{owner}/{repo}/tags.atom`` and ``/repos/{owner}/{repo}/digest.atom``: Atom
  feeds of the same lists (the tags filters, or the digest's window and label), at most
  :data:`bot.tagview.feeds.FEED_ENTRIES` entries each.

Access: with a view token, every page needs ``Authorization: Bearer <token>`` (else
401); without one, only public repositories are served and a private or unknown one
answers 404 alike, so its existence does not leak.

Every page is read and rendered in a thread of its own pool (:data:`PAGE_THREADS`), never
on the event loop, so a heavy page never holds up the webhook sharing the process.
Absolute links and feed addresses follow :mod:`bot.tagview.addresses`.
"""

from __future__ import annotations

import asyncio
import contextvars
import hmac
import json
from collections.abc import Awaitable, Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Any

from aiohttp import web

from bot.app.errors import database_errors
from bot.tagview.addresses import Network, origin, path_prefix
from bot.tagview.digest import WindowError, load_digest, load_read_first, make_entry, parse_window
from bot.tagview.feeds import ATOM_TYPE, FEED_ENTRIES, feed_id, feed_title, render_feed
from bot.tagview.i18n import Messages, pick_language
from bot.tagview.pages import (
    CONTENT_SECURITY_POLICY,
    FILTER_PARAMS,
    Pager,
    WebLinks,
    render_digest_page,
    render_error_page,
    render_guide_page,
    render_index_page,
    render_tags_page,
)
from bot.tagview.model import READING_LEVELS, GuideFilter, GuideStorage, LabelSection

#: Headers sent with every tag-view response, error pages included.
SECURITY_HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
}
#: Longest accepted search text, in characters.
MAX_SEARCH = 200
#: Largest ``per_page`` of ``tags.json`` (larger values are lowered to it, as GitHub does).
MAX_PER_PAGE = 100
DEFAULT_PER_PAGE = 30
#: Largest ``page`` accepted (a larger one is a 400): far past the last page of any store, and
#: ``(page - 1) x`` any page size stays inside the 64-bit integers SQLite and PostgreSQL
#: take for ``OFFSET`` (past them SQLite raised ``OverflowError``, a 500, and PostgreSQL
#: ``bigint out of range``, a 503 that told monitoring the database was down).
MAX_PAGE = 1_000_000
#: Threads reading and rendering tag-view pages, per process: pages beyond it wait their turn.
PAGE_THREADS = 4
_executor: ThreadPoolExecutor | None = None


class FilterError(ValueError):
    """A query parameter has a value the tag view cannot use; the message names it."""


@dataclass(frozen=True, slots=True)
class TagViewSettings:
    """How the tag view serves pages.

    ``view_token``: when set, every request must carry ``Authorization: Bearer <token>``.
    ``rows_per_label``: newest pull requests shown per label before a "more" link.
    ``page_entries``: most entries the tags page of all labels shows together: with more
    labels than ``page_entries // rows_per_label`` each shows an equal share (at least
    one, :func:`rows_per_section`), and past ``page_entries`` labels the page shows the
    most used ``page_entries`` with a link to the next ones, so the page stays the same
    size however many labels a repository gathers.
    ``page_size``: rows per page of a single label. ``form_options``: labels, and areas, the
    filter form offers at most: the most used, and the one selected (any other is still
    filtered on by its ``?label=``/``?area=`` or its link), so the form too stays the same
    size however many labels there are. ``show_private``: serve private
    repositories without a token; only for the local ``prguide view`` server.
    ``say_hidden``: the index says how many private repositories it leaves out and how
    to show them; only for the local ``prguide view`` server on a loopback address
    (on ``prguide serve`` a private repository's existence must not leak).
    ``public_url``: the address readers reach the tag view at (see
    :func:`bot.tagview.addresses.parse_public_url`), used for every absolute link.
    ``trusted_proxies``: peers whose forwarded scheme and host are believed when there
    is no ``public_url``.
    """

    view_token: str | None = None
    rows_per_label: int = 10
    page_entries: int = 150
    page_size: int = 50
    form_options: int = 50
    show_private: bool = False
    say_hidden: bool = False
    public_url: str | None = None
    trusted_proxies: tuple[Network, ...] = ()

    @classmethod
    def coerce(cls, settings: Any) -> TagViewSettings:
        """``settings`` itself, defaults for ``None``, or built from an object with ``view_token``,
        ``public_url`` and ``trusted_proxies`` (the app's Settings)."""
        if settings is None:
            return cls()
        if isinstance(settings, cls):
            return settings
        return cls(
            view_token=getattr(settings, "view_token", None) or None,
            public_url=getattr(settings, "public_url", None) or None,
            trusted_proxies=tuple(getattr(settings, "trusted_proxies", ()) or ()),
        )


def rows_per_section(labels: int, rows_per_label: int, page_entries: int) -> int:
    """Rows each of ``labels`` sections shows on the tags page of all labels: ``rows_per_label``,
    or the equal share of ``page_entries`` when that is smaller, but at least one."""
    return max(1, min(rows_per_label, page_entries // max(1, labels)))


def parse_filters(query: Mapping[str, str]) -> GuideFilter:
    """Read the filter parameters of a request's query string into a :class:`GuideFilter`.

    Empty values mean "any". Raises :class:`FilterError` naming a bad parameter.
    """

    def text(name: str) -> str | None:
        value = (query.get(name) or "").strip()
        if "\x00" in value:  # stored text holds none (PostgreSQL refuses it: a 503, not a 400)
            raise FilterError(f"{name} must not contain a NUL character")
        return value or None

    level = text("level")
    if level is not None and level not in READING_LEVELS:
        raise FilterError(f"level must be one of {', '.join(READING_LEVELS)}, got {level!r}")
    importance = text("min_importance")
    min_importance = None
    if importance is not None:
        try:
            min_importance = int(importance)
        except ValueError:
            raise FilterError(f"min_importance must be a whole number 1-10, got {importance!r}") from None
        if not 1 <= min_importance <= 10:
            raise FilterError(f"min_importance must be a whole number 1-10, got {importance!r}")
    bounds: dict[str, date | None] = {}
    for name in ("from", "to"):
        value = text(name)
        try:
            bounds[name] = date.fromisoformat(value) if value else None
        except ValueError:
            raise FilterError(f"{name} must be a date YYYY-MM-DD, got {value!r}") from None
    if bounds["from"] and bounds["to"] and bounds["from"] > bounds["to"]:
        raise FilterError("from must not be later than to")
    search = text("q")
    if search is not None and len(search) > MAX_SEARCH:
        raise FilterError(f"q must be at most {MAX_SEARCH} characters")
    return GuideFilter(
        label=text("label"), area=text("area"), level=level, min_importance=min_importance,
        since=bounds["from"], until=bounds["to"], search=search,
    )


def _window(query: Mapping[str, str]) -> tuple[date, date, str | None]:
    """``since``, ``until`` and ``label`` of a digest request; raises :class:`WindowError`."""
    since, until = parse_window(query.get("since"), query.get("until"), datetime.now(UTC).date())
    label = (query.get("label") or "").strip() or None
    if label is not None and "\x00" in label:
        raise WindowError("label must not contain a NUL character")
    return since, until, label


def _filter_params(flt: GuideFilter) -> dict[str, str | None]:
    """The query parameters of ``flt`` (:data:`FILTER_PARAMS`), written one way: a feed's id and links follow them."""
    return {
        "label": flt.label, "area": flt.area, "level": flt.level,
        "min_importance": str(flt.min_importance) if flt.min_importance is not None else None,
        "from": flt.since.isoformat() if flt.since else None, "to": flt.until.isoformat() if flt.until else None,
        "q": flt.search,
    }


def _positive(query: Mapping[str, str], name: str, default: int, *, most: int | None = None) -> int:
    """The whole number ``query[name]`` (``default`` when absent or empty), at least 1 and at
    most ``most``; raises :class:`FilterError` naming ``name`` otherwise."""
    raw = (query.get(name) or "").strip()
    if not raw:
        return default
    # ASCII digits only: int() also reads "+2", "1_0" and other scripts' digits ("١٢").
    digits = raw.lstrip("0")
    if not (raw.isascii() and raw.isdigit()) or not digits:
        raise FilterError(f"{name} must be a whole number >= 1, got {raw[:40]!r}")
    # More than 20 digits is past any limit (and int() refuses past 4,300 digits).
    value = int(digits) if len(digits) <= 20 else 10**20
    if most is not None and value > most:
        raise FilterError(f"{name} must be at most {most}, got {raw[:40]!r}")
    return value


class _Refusal(Exception):
    """Ends a request early with ``response`` (401, 404, 400)."""

    def __init__(self, response: web.StreamResponse):
        super().__init__(response.status)
        self.response = response


#: A page's handler: reads the store and renders, without awaiting (see :func:`_guarded`).
Handler = Callable[[web.Request], web.StreamResponse]


class TagView:
    """The tag view's request handlers over one :class:`GuideStorage` (SQLite or PostgreSQL).

    Handlers are plain functions of the request: each page's store reads and rendering
    run together in a page thread (see :func:`_guarded`).
    """

    def __init__(self, store: GuideStorage, settings: TagViewSettings):
        self.store = store
        self.settings = settings
        #: The path a proxy serves the tag view under ("" at the root); every link starts with it.
        self.prefix = path_prefix(settings.public_url)

    # -- access ----------------------------------------------------------------------

    def _authorised(self, request: web.Request, lang: str, *, as_json: bool) -> bool:
        """Whether the request carries the view token; raises a 401 when one is needed and missing."""
        token = self.settings.view_token
        if not token:
            return False
        scheme, _, given = request.headers.get("Authorization", "").partition(" ")
        if scheme.lower() == "bearer" and hmac.compare_digest(given.strip().encode(), token.encode()):
            return True
        challenge = 'Bearer realm="prguide tag view"'
        if request.headers.get("Authorization"):
            challenge += ', error="invalid_token"'
        response = _error(401, "unauthorized", lang, as_json=as_json, text_key="unauthorized_text")
        response.headers["WWW-Authenticate"] = challenge
        raise _Refusal(response)

    def _may_see(self, visibility: str | None, authorised: bool) -> bool:
        return authorised or self.settings.show_private or visibility == "public"

    def _repository(self, request: web.Request, lang: str, *, as_json: bool = False) -> str:
        authorised = self._authorised(request, lang, as_json=as_json)
        asked = f"{request.match_info['owner']}/{request.match_info['repo']}"
        name = None if "\x00" in asked else self.store.canonical_name(asked)  # no stored name holds a NUL
        if name is None or not self._may_see(self.store.visibility(name), authorised):
            raise _Refusal(_error(404, "not_found", lang, as_json=as_json, text_key="not_found_text"))
        return name

    # -- addresses -------------------------------------------------------------------

    def _links(self, repository: str, params: Mapping[str, str], lang: str, *, here: str | None = None) -> WebLinks:
        return WebLinks(repository, params, lang, prefix=self.prefix, here=here)

    def _absolute(self, request: web.Request, path: str) -> str:
        """``path`` (from a :class:`WebLinks`, so prefixed already) as an absolute URL (see :mod:`bot.tagview.addresses`)."""
        return origin(
            public_url=self.settings.public_url, proxies=self.settings.trusted_proxies, remote=request.remote,
            scheme=request.scheme, host=request.host, headers=request.headers,
        ) + path

    def _here(self, request: web.Request, query: Mapping[str, str] | None = None) -> str:
        """This request's path (behind the prefix) with ``query`` (default its own), for links back to it."""
        return self.prefix + str(request.rel_url.with_query(dict(request.query) if query is None else query))

    # -- handlers --------------------------------------------------------------------

    def index(self, request: web.Request) -> web.StreamResponse:
        lang = pick_language(request.query.get("lang"))
        authorised = self._authorised(request, lang, as_json=False)
        stored = [r for r in self.store.repositories() if r.guides]
        visible = [r for r in stored if self._may_see(r.visibility, authorised)]
        html = render_index_page(
            repositories=visible, lang=lang, links=_IndexLinks(lang, self.prefix),
            tags_link=lambda name: self._links(name, {}, lang).tags(),
            hidden=len(stored) - len(visible) if self.settings.say_hidden else 0,
            feeds=[(feed_title(lang, r.name, None), self._links(r.name, {}, lang).feed("tags")) for r in visible],
        )
        return _html(html)

    def tags(self, request: web.Request) -> web.StreamResponse:
        lang = pick_language(request.query.get("lang"))
        repository = self._repository(request, lang)
        try:
            flt = parse_filters(request.query)
            page = _positive(request.query, "page", 1, most=MAX_PAGE)
        except FilterError as exc:
            return _error(400, "bad_request", lang, text=str(exc))
        # The form offers the most used labels and areas, and the ones selected: bounded queries.
        options = self.settings.form_options
        labels = self.store.labels(repository, limit=options, include=flt.label)
        links = self._links(repository, request.query, lang)
        pager = label_pager = None
        if flt.label:
            size = self.settings.page_size
            found = self.store.query(
                repository, label=flt.label, area=flt.area, level=flt.level, min_importance=flt.min_importance,
                since=flt.since, until=flt.until, search=flt.search, limit=size, offset=(page - 1) * size,
            )
            known = next((item for item in labels if item.name.casefold() == flt.label.casefold()), None)
            sections = []
            if found.total:
                sections.append(LabelSection(
                    known.name if known else flt.label, found.total, known.description if known else "", found.items,
                ))
                pager = Pager(
                    first=found.offset + 1 if found.items else 0,
                    last=found.offset + len(found.items),
                    total=found.total,
                    newer=links.page(page - 1) if page > 1 else None,
                    older=links.page(page + 1) if found.next_offset is not None else None,
                )
        else:
            # At most page_entries labels (the most used first; page N the next ones), so that
            # with a row each the page stays page_entries entries however many labels there are.
            shown = self.settings.page_entries
            per_label = rows_per_section(min(self.store.label_count(repository), shown), self.settings.rows_per_label, shown)
            found_labels = self.store.section_page(repository, flt, per_label=per_label, limit=shown, offset=(page - 1) * shown)
            sections = found_labels.sections
            if found_labels.offset or found_labels.more:
                label_pager = Pager(
                    first=found_labels.offset + 1 if sections else 0,
                    last=found_labels.offset + len(sections) if sections else 0,
                    total=found_labels.labels,
                    # Past the last page (no label): back to the first.
                    newer=(links.page(page - 1) if sections else links.page(1)) if page > 1 else None,
                    older=links.page(page + 1) if found_labels.more else None,
                )
        datas = self.store.cards(repository, [row.number for section in sections for row in section.rows], lang)
        feed_params = {k: request.query.get(k) for k in FILTER_PARAMS}
        html = render_tags_page(
            repository=repository, sections=sections, lang=lang, links=links,
            filters=request.query, label_options=labels, area_options=self.store.areas(repository, limit=options, include=flt.area),
            pager=pager, single_label=bool(flt.label), datas=datas, label_pager=label_pager,
            feeds=[(feed_title(lang, repository, flt.label), links.feed("tags", **feed_params))],
        )
        return _html(html)

    def digest(self, request: web.Request) -> web.StreamResponse:
        lang = pick_language(request.query.get("lang"))
        repository = self._repository(request, lang)
        try:
            since, until, label = _window(request.query)
            digest, datas = load_digest(self.store, repository, since, until, lang, label=label)
        except ValueError as exc:  # WindowError included
            return _error(400, "bad_request", lang, text=str(exc))
        params = {"since": request.query.get("since"), "until": request.query.get("until"), "label": label}
        kept = {k: v for k, v in params.items() if v}
        # The language switch keeps the window and the label.
        links = self._links(repository, {}, lang, here=self._here(request, kept))
        return _html(render_digest_page(
            repository=repository, digest=digest, lang=lang, links=links, label=label,
            label_options=self.store.labels(repository, limit=self.settings.form_options, include=label), datas=datas,
            feeds=[(feed_title(lang, repository, label, digest=True), links.feed("digest", **params))],
        ))

    def tags_atom(self, request: web.Request) -> web.StreamResponse:
        lang = pick_language(request.query.get("lang"))
        repository = self._repository(request, lang, as_json=True)
        try:
            flt = parse_filters(request.query)
        except FilterError as exc:
            return _json({"error": str(exc)}, status=400)
        found = self.store.query(
            repository, label=flt.label, area=flt.area, level=flt.level, min_importance=flt.min_importance,
            since=flt.since, until=flt.until, search=flt.search, limit=FEED_ENTRIES,
        )
        datas = self.store.cards(repository, [row.number for row in found.items], lang)
        messages = Messages(lang)
        entries = [make_entry(row, datas.get(row.number), lang, messages) for row in found.items]
        params = _filter_params(flt)
        links = self._links(repository, params, lang)
        return self._feed(
            request, repository, "tags", params, feed_title(lang, repository, flt.label), links.current(page=None),
            entries, links, lang,
        )

    def digest_atom(self, request: web.Request) -> web.StreamResponse:
        lang = pick_language(request.query.get("lang"))
        repository = self._repository(request, lang, as_json=True)
        try:
            since, until, label = _window(request.query)
            entries = load_read_first(self.store, repository, since, until, lang, label=label, limit=FEED_ENTRIES)
        except ValueError as exc:  # WindowError included
            return _json({"error": str(exc)}, status=400)
        # Only the bounds the request named: the default window's feed is one feed, day after day.
        params = {"since": since.isoformat() if (request.query.get("since") or "").strip() else None,
                  "until": until.isoformat() if (request.query.get("until") or "").strip() else None, "label": label}
        links = self._links(repository, {}, lang)
        title = feed_title(lang, repository, label, digest=True)
        return self._feed(request, repository, "digest", params, title, links.digest(**params), entries, links, lang)

    def _feed(
        self, request: web.Request, repository: str, kind: str, params: Mapping[str, str | None], title: str,
        page: str, entries: list, links: WebLinks, lang: str,
    ) -> web.Response:
        """The Atom response of feed ``kind`` with ``params`` (its filters; ``lang`` is added here)."""
        # The newest merge of the repository dates an empty feed, so it stays the same between requests.
        newest = None if entries else next(iter(self.store.query(repository, limit=1).items), None)
        body = render_feed(
            feed_id=feed_id(repository, kind, {**params, "lang": lang}), title=title,
            self_url=self._absolute(request, links.feed(kind, **params)), page_url=self._absolute(request, page),
            # With the feed's lang, as the pages link it: a Chinese feed's entry opens the Chinese guide.
            entries=entries, guide_url=lambda number: self._absolute(request, links.guide(number)),
            lang=lang, updated=newest.merged_at if newest else None,
        )
        return web.Response(body=body, content_type=ATOM_TYPE, charset="utf-8")

    def tags_json(self, request: web.Request) -> web.StreamResponse:
        repository = self._repository(request, "en", as_json=True)
        try:
            flt = parse_filters(request.query)
            page = _positive(request.query, "page", 1, most=MAX_PAGE)
            per_page = min(_positive(request.query, "per_page", DEFAULT_PER_PAGE), MAX_PER_PAGE)
        except FilterError as exc:
            return _json({"error": str(exc)}, status=400)
        found = self.store.query(
            repository, label=flt.label, area=flt.area, level=flt.level, min_importance=flt.min_importance,
            since=flt.since, until=flt.until, search=flt.search, limit=per_page, offset=(page - 1) * per_page,
        )
        last_page = max(1, -(-found.total // per_page))

        def page_url(number: int) -> str:
            query = {k: v for k, v in request.query.items() if k not in ("page", "per_page")}
            query.update(page=str(number), per_page=str(per_page))
            return self._absolute(request, self._here(request, query))

        links = self._links(repository, {}, "en")
        items = []
        for row in found.items:
            item = row.to_json()
            item["guide_url"] = self._absolute(request, links.guide(row.number))
            items.append(item)
        body = {
            "repository": repository,
            "total_count": found.total,
            "page": page,
            "per_page": per_page,
            "items": items,
            "next": page_url(page + 1) if page < last_page else None,
            "prev": page_url(min(page - 1, last_page)) if page > 1 else None,
        }
        relations = [(body["next"], "next"), (page_url(last_page), "last"), (page_url(1), "first"), (body["prev"], "prev")]
        response = _json(body)
        response.headers["Link"] = ", ".join(f'<{url}>; rel="{rel}"' for url, rel in relations if url)
        return response

    def guide(self, request: web.Request) -> web.StreamResponse:
        query_lang = request.query.get("lang")
        repository = self._repository(request, pick_language(query_lang))
        data = self.store.get(repository, int(request.match_info["number"]))
        if data is None:
            lang = pick_language(query_lang)
            return _error(404, "not_found", lang, text_key="not_found_text")
        # Without ?lang the page follows the guide's own language.
        lang = pick_language(query_lang, default=pick_language(str(data.get("lang") or "")))
        links = self._links(repository, {}, lang, here=self.prefix + request.path)
        feeds = [(feed_title(lang, repository, None), links.feed("tags"))]
        return _html(render_guide_page(data={**data, "repository": repository}, lang=lang, links=links, feeds=feeds))


class _IndexLinks:
    """Links of the ``/repos`` page (no repository of its own)."""

    can_filter = False

    def __init__(self, lang: str, prefix: str = ""):
        self.lang = lang
        self.prefix = prefix

    def home(self) -> str:
        return WebLinks("-/-", {}, self.lang, prefix=self.prefix).home()

    def language(self, lang: str) -> str:
        return WebLinks("-/-", {}, lang, prefix=self.prefix).home()


def _secure(response: web.StreamResponse) -> web.StreamResponse:
    for name, value in SECURITY_HEADERS.items():
        response.headers[name] = value
    # Pages may show private repositories to token holders: keep them out of shared caches.
    response.headers.setdefault("Cache-Control", "private, no-cache")
    return response


def _html(html: str, status: int = 200) -> web.Response:
    return web.Response(text=html, status=status, content_type="text/html", charset="utf-8")


def _json(body: Any, status: int = 200) -> web.Response:
    return web.Response(
        text=json.dumps(body, ensure_ascii=False), status=status, content_type="application/json", charset="utf-8"
    )


def _error(
    status: int, title_key: str, lang: str, *, as_json: bool = False, text: str | None = None, text_key: str | None = None
) -> web.Response:
    messages = Messages(lang)
    message = text if text is not None else messages(text_key) if text_key else ""
    if as_json:
        return _json({"error": message or messages(title_key)}, status=status)
    return _html(render_error_page(title=messages(title_key), text=message, lang=lang), status=status)


def _page_executor() -> ThreadPoolExecutor:
    global _executor
    if _executor is None:  # made on first use, from the event loop's thread
        _executor = ThreadPoolExecutor(max_workers=PAGE_THREADS, thread_name_prefix="prguide-page")
    return _executor


def _guarded(store: GuideStorage, handler: Handler) -> Callable[[web.Request], Awaitable[web.StreamResponse]]:
    """The aiohttp handler serving ``handler`` in a page thread (one hop for the page's reads and
    rendering, whichever the store), refusals and an unavailable database answered.

    Its own threads, not the loop's default executor nor the database calls' pool
    (:mod:`bot.app.offload`): guides are built in the one and jobs wait on the other, and
    a burst of pages must hold up neither.
    """

    async def run(request: web.Request) -> web.StreamResponse:
        try:
            # As asyncio.to_thread does: the call sees the caller's context variables (log fields).
            call = contextvars.copy_context().run
            response = await asyncio.get_running_loop().run_in_executor(_page_executor(), call, handler, request)
        except _Refusal as refusal:
            response = refusal.response
        except database_errors():
            # The database is down or its pool is exhausted: a retry later will do, so 503, not 500.
            lang = pick_language(request.query.get("lang"))
            response = _error(503, "unavailable", lang, as_json=request.path.endswith(".json"), text_key="unavailable_text")
            response.headers["Retry-After"] = "30"
        return _secure(response)

    return run


def add_routes(app_or_router: web.Application | web.UrlDispatcher, store: GuideStorage, settings: Any = None) -> TagView:
    """Mount the tag view's routes (see the module docstring) on an app or router.

    ``settings`` is a :class:`TagViewSettings`, the app's Settings (its ``view_token``,
    ``public_url`` and ``trusted_proxies`` are used) or ``None``. Returns the
    :class:`TagView` serving them.
    """
    router = app_or_router.router if isinstance(app_or_router, web.Application) else app_or_router
    view = TagView(store, TagViewSettings.coerce(settings))
    router.add_get("/repos", _guarded(store, view.index))
    router.add_get("/repos/{owner}/{repo}/tags", _guarded(store, view.tags))
    router.add_get("/repos/{owner}/{repo}/tags.json", _guarded(store, view.tags_json))
    router.add_get(r"/repos/{owner}/{repo}/pulls/{number:\d{1,10}}/guide", _guarded(store, view.guide))
    router.add_get("/repos/{owner}/{repo}/digest", _guarded(store, view.digest))
    router.add_get("/repos/{owner}/{repo}/tags.atom", _guarded(store, view.tags_atom))
    router.add_get("/repos/{owner}/{repo}/digest.atom", _guarded(store, view.digest_atom))
    return view


def create_app(store: GuideStorage, settings: Any = None) -> web.Application:
    """A stand-alone aiohttp application serving only the tag view (``/`` redirects to ``/repos``)."""
    app = web.Application()
    view = add_routes(app, store, settings)

    async def root(request: web.Request) -> web.StreamResponse:
        raise web.HTTPFound(f"{view.prefix}/repos")

    app.router.add_get("/", root)
    return app
