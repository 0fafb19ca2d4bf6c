"""Digest entries: what a reader needs to decide whether to open a guide, from its stored data.

:func:`make_entry` turns a listed row and its stored ``Guide.data`` into an :class:`Entry`
(summary, verdict, top focus points, breaking facts, review highlights); :func:`select`
picks the pull requests worth reading first in a window (:func:`is_read_first`) and groups
them by area, keeping a bounded number of each; :func:`build_digest` makes the entries of
what is shown; :func:`parse_window` reads the ``since``/``until`` of a digest request.
:func:`load_digest` and :func:`load_read_first` read a store; everything else is pure.

A window may hold thousands of pull requests, so a page shows at most
:data:`GROUP_ENTRIES` per area and :data:`ALSO_ROWS` others, and says how many more
there are; only the shown ones have their stored guide read and rendered.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any, TypeVar

from markupsafe import Markup

from bot.tagview.i18n import Messages
from bot.tagview.markdown import render_inline
from bot.tagview.model import READING_LEVELS, Brief, GuideRow

T = TypeVar("T", Brief, GuideRow)

#: Days a digest covers when the request names no window (today included).
DEFAULT_DAYS = 7
#: Longest window a digest request may ask for, in days.
MAX_DAYS = 366
#: Focus points shown per entry.
FOCUS_POINTS = 3
#: Breaking changes shown per entry before "and N more".
BREAKING_SHOWN = 3
#: Readers named in an entry's verdict before "and N more".
AUDIENCES = 2
#: Read-first entries shown per area before "and N more".
GROUP_ENTRIES = 5
#: Rows of the "also merged" table shown before "and N more".
ALSO_ROWS = 20
#: Rows of the "fixes to the window before" table shown before "and N more".
FIX_ROWS = 20
#: The newest fixes of a window whose origins are looked up, at most: a year's window reads a
#: bounded number of rows, never one per stored guide.
FIX_SCAN = 300


class WindowError(ValueError):
    """``since``/``until`` cannot be used; the message names the parameter and the expected form."""


@dataclass(frozen=True, slots=True)
class FocusLine:
    """A focus point: ``file`` (may be ``""``), ``symbol`` (may be ``""``) and ``reason`` as safe inline HTML."""

    file: str
    symbol: str
    reason: Markup


@dataclass(frozen=True, slots=True)
class Entry:
    """One pull request as a digest entry; texts are plain (escaped by the templates) unless typed ``Markup``.

    ``summary_lang`` is the language the guide's own texts of the entry (summary, readers,
    focus points, breaking changes) are in: the page's language when the guide was stored
    in it, else the one it was stored in (the page marks them, see :attr:`foreign`);
    ``verdict`` is the whole verdict line in the page's language (level, minutes, for
    whom, importance), ``rating`` the same without the readers and ``readers`` just
    "for ..." (at most :data:`AUDIENCES` named), ``readers_html`` the same with the names
    marked with their language when it is not the page's; ``area``/``area_name``
    the first area's id and display name ("" when the guide has none).
    """

    row: GuideRow
    summary: Markup
    summary_lang: str
    verdict: str
    rating: str
    readers: str
    focus: tuple[FocusLine, ...]
    breaking: tuple[str, ...]
    reviews: str
    area: str
    area_name: str
    readers_html: Markup = Markup("")
    #: Breaking changes of the guide not in ``breaking`` (the full guide lists them).
    breaking_more: int = 0
    #: The page's language (what :attr:`foreign` compares with).
    page_lang: str = ""
    #: The pull request whose code this fix changes, as the guide's history names it (``None``: none).
    fixes_from: int | None = None
    #: Whether the guide of :attr:`fixes_from` is stored (the entry links to it only then).
    fixes_from_stored: bool = False
    #: :attr:`fixes_from` on GitHub, from this row's own address ("": not known): the link when
    #: its guide is not stored (merged before the app was installed, or deleted).
    fixes_from_url: str = ""
    #: The pull request that reverted this one (``None``: not reverted).
    reverted_by: int | None = None

    @property
    def foreign(self) -> str:
        """The HTML ``lang`` of the guide's texts when they are not in the page's language
        (a guide stored before it was kept in every language), else ""."""
        return html_lang(self.summary_lang) if self.summary_lang and self.summary_lang != self.page_lang else ""


def html_lang(lang: str) -> str:
    """The HTML ``lang`` value of a guide language code (``zh`` is written in simplified characters)."""
    return "zh-Hans" if lang == "zh" else lang


@dataclass(frozen=True, slots=True)
class AreaGroup:
    """The read-first entries of one area (``area`` is ``""`` for pull requests without one).

    ``entries`` are the best :data:`GROUP_ENTRIES` at most; ``total`` counts them all.
    """

    area: str
    name: str
    entries: tuple[Entry, ...]
    total: int

    @property
    def more(self) -> int:
        """Read-first pull requests of the area not shown."""
        return self.total - len(self.entries)


@dataclass(frozen=True, slots=True)
class FixOfEarlier:
    """A fix merged in the window (``fix``) whose changed lines an earlier pull request wrote
    (``origin``, merged in the window just before this one)."""

    fix: GuideRow
    origin: GuideRow


@dataclass(frozen=True, slots=True)
class Digest:
    """A digest window: ``groups`` to read first (best group first), ``also`` some of the rest, newest first.

    ``also_total`` counts the rest, ``merged`` every pull request of the window. When
    the window holds none, ``latest_week`` is the ISO week (Monday, Sunday) of the
    newest merge stored (for the same label), else ``None``. ``fixes`` are the window's
    fixes of pull requests merged in the window before it (:func:`fixes_of_earlier`),
    newest first, at most :data:`FIX_ROWS`; ``fixes_total`` counts them all.
    """

    since: date
    until: date
    groups: tuple[AreaGroup, ...]
    also: tuple[GuideRow, ...]
    also_total: int = 0
    merged: int = 0
    latest_week: tuple[date, date] | None = None
    fixes: tuple[FixOfEarlier, ...] = ()
    fixes_total: int = 0

    @property
    def fixes_more(self) -> int:
        """Fixes of the window before not shown."""
        return self.fixes_total - len(self.fixes)

    @property
    def previous(self) -> tuple[date, date]:
        """The window just before this one, as long as it: ``(since, until)``."""
        span = self.until - self.since + timedelta(days=1)
        return self.since - span, self.since - timedelta(days=1)

    @property
    def read_first(self) -> tuple[Entry, ...]:
        """Every read-first entry shown, in page order."""
        return tuple(entry for group in self.groups for entry in group.entries)

    @property
    def also_more(self) -> int:
        """Other pull requests of the window not shown."""
        return self.also_total - len(self.also)


@dataclass(frozen=True, slots=True)
class Selection:
    """What a digest shows of a window (see :func:`select`), by pull request number.

    ``groups``: ``(area, shown numbers, read-first pull requests of the area)`` best group
    first; ``also``: the newest other numbers shown, ``also_total`` all of them;
    ``merged``: pull requests of the window in all.
    """

    groups: tuple[tuple[str, tuple[int, ...], int], ...]
    also: tuple[int, ...]
    also_total: int
    merged: int

    @property
    def entries(self) -> list[int]:
        """Pull requests shown as entries (their stored guides are read)."""
        return [number for _area, numbers, _total in self.groups for number in numbers]


def parse_window(since: str | None, until: str | None, today: date) -> tuple[date, date]:
    """The inclusive days ``(since, until)`` of a digest request (``YYYY-MM-DD`` each, either may be missing).

    Defaults: ``until`` today, ``since`` :data:`DEFAULT_DAYS` - 1 days before ``until``.
    Raises :class:`WindowError` for a malformed date, ``since`` after ``until`` or a window
    longer than :data:`MAX_DAYS`.
    """
    bounds: dict[str, date | None] = {}
    for name, value in (("since", since), ("until", until)):
        text = (value or "").strip()
        try:
            bounds[name] = date.fromisoformat(text) if text else None
        except ValueError:
            raise WindowError(f"{name} must be a date YYYY-MM-DD, got {text!r}") from None
        if text and len(text) != 10:
            raise WindowError(f"{name} must be a date YYYY-MM-DD, got {text!r}")
    end = bounds["until"] or today
    start = bounds["since"] or end - timedelta(days=DEFAULT_DAYS - 1)
    if start > end:
        raise WindowError(f"since ({start.isoformat()}) must not be later than until ({end.isoformat()})")
    if (end - start).days + 1 > MAX_DAYS:
        raise WindowError(f"a digest covers at most {MAX_DAYS} days; since and until are {(end - start).days + 1} days apart")
    return start, end


def area_display(data: Mapping[str, Any] | None, area: str, lang: str) -> tuple[str, str]:
    """``(name, audience)`` of ``area`` in ``lang`` from a guide's ``area_info`` (English, then the id, as fallbacks)."""
    info = _mapping(_mapping(data).get("area_info")).get(area)
    info = _mapping(info)
    names, audience = _mapping(info.get("names")), _mapping(info.get("audience"))
    name = names.get(lang) or names.get("en") or area
    return str(name), str(audience.get(lang) or audience.get("en") or "")


def label_display(datas: Sequence[Mapping[str, Any]], label: str, lang: str, messages: Messages) -> tuple[str, str]:
    """``(display name, description)`` of an area label from any guide carrying it; ``(label, "")`` otherwise."""
    return label_displays(datas, [label], lang, messages)[label]


def label_displays(
    datas: Iterable[Mapping[str, Any]], labels: Iterable[str], lang: str, messages: Messages
) -> dict[str, tuple[str, str]]:
    """:func:`label_display` of each of ``labels`` at once: ``{label: (display name, description)}``.

    The first guide in ``datas`` naming a label (any case) in its ``label_areas`` gives its
    name, as :func:`label_display` reads them; the guides are read once, however many labels.
    """
    first: dict[str, tuple[Mapping[str, Any], str]] = {}
    for data in datas:
        for name, area in _mapping(data.get("label_areas")).items():
            if isinstance(name, str) and isinstance(area, str):
                first.setdefault(name.casefold(), (data, area))
    out = {}
    for label in labels:
        found = first.get(label.casefold())
        if found is None:
            out[label] = (label, "")
            continue
        display, audience = area_display(found[0], found[1], lang)
        out[label] = (display, messages("digest.area_for", audience=audience) if audience else "")
    return out


def make_entry(row: GuideRow, data: Mapping[str, Any] | None, lang: str, messages: Messages) -> Entry:
    """The digest entry of ``row`` in page language ``lang``; ``data`` is its card in ``lang``
    (:meth:`GuideStore.cards`) or its stored guide (``None``: row only)."""
    data = _mapping(data)
    guide_lang = str(data.get("lang") or "")
    summary = str(data.get("summary") or row.summary or "")
    parts = [messages.level(row.reading_level)]
    if row.reading_minutes is not None:
        parts.append(messages("minutes", minutes=row.reading_minutes))
    if row.importance is not None:
        parts.append(messages("digest.importance", importance=row.importance))
    audience = [str(a) for a in data.get("audience") or () if isinstance(a, str) and a]
    readers, readers_html = "", Markup("")
    if audience:
        named = messages("digest.list_sep").join(audience[:AUDIENCES])
        more = len(audience) - AUDIENCES
        readers = messages("digest.for", audience=messages("digest.more_readers", count=more, readers=named) if more > 0 else named)
        marked = Markup('<span lang="{}">{}</span>').format(html_lang(guide_lang), named) if guide_lang and guide_lang != lang else named
        if more > 0:
            marked = Markup.escape(messages.template("digest.more_readers", more)).format(count=more, readers=marked)
        readers_html = Markup.escape(messages.template("digest.for")).format(audience=marked)
    rating = " · ".join(p for p in parts if p)
    focus = []
    for point in list(data.get("focus") or ())[:FOCUS_POINTS]:
        if isinstance(point, Mapping) and point.get("reason"):
            focus.append(FocusLine(str(point.get("file") or ""), str(point.get("symbol") or ""), Markup(render_inline(str(point["reason"])))))
    # The engine writes each breaking change as {reason, file, key}; plain text is kept as it is.
    breaking = [
        str(b.get("reason") if isinstance(b, Mapping) else b) for b in data.get("breaking_reasons") or ()
        if (isinstance(b, str) and b) or (isinstance(b, Mapping) and isinstance(b.get("reason"), str) and b["reason"])
    ]
    count = data.get("breaking_count")
    total = count if isinstance(count, int) and not isinstance(count, bool) and count > len(breaking) else len(breaking)
    area = row.areas[0] if row.areas else ""
    fixes_from = _number(data.get("fixes_code_from"))
    return Entry(
        row=row,
        # The JSON summary is plain text (code spans unwrapped): escaped as text, never
        # parsed as Markdown again, so quoted code cannot turn into a link or an image.
        summary=Markup.escape(summary),
        summary_lang=guide_lang,
        verdict=" · ".join(p for p in (rating, readers) if p),
        rating=rating,
        readers=readers,
        focus=tuple(focus),
        breaking=tuple(breaking[:BREAKING_SHOWN]),
        breaking_more=total - min(len(breaking), BREAKING_SHOWN),
        reviews=review_line(data.get("review"), messages),
        area=area,
        area_name=area_display(data, area, lang)[0] if area else "",
        readers_html=readers_html,
        page_lang=lang,
        fixes_from=fixes_from,
        fixes_from_stored=data.get("fixes_code_from_stored") is True,
        fixes_from_url=sibling_pull_url(row, fixes_from) if fixes_from is not None else "",
        reverted_by=_number(_mapping(data.get("reverted_by")).get("number")),
    )


def sibling_pull_url(row: GuideRow, number: int) -> str:
    """The GitHub address of pull request ``number`` of ``row``'s repository, made from ``row.url``
    (``https://github.com/OWNER/REPO/pull/N``), or "" when that is not such an address of ``row``."""
    found = _PULL_URL.fullmatch(row.url or "")
    return f"{found[1]}{number}" if found and int(found[2]) == row.number else ""


# A pull request's address on GitHub (or GitHub Enterprise): everything up to its number.
_PULL_URL = re.compile(r"(https?://[^\s?#]+/pull/)([0-9]{1,10})/?")


def _number(value: Any) -> int | None:
    """``value`` when it is a pull request number (a whole number above 0), else ``None``."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def review_line(review: Any, messages: Messages) -> str:
    """"alice approved, bob commented · 3 threads, 12 comments" or "" when nobody reviewed."""
    review = _mapping(review)
    people = []
    for item in review.get("reviewers") or ():
        if isinstance(item, Mapping) and item.get("user"):
            state = str(item.get("state") or "COMMENTED")
            people.append(messages("digest.reviewer", user=str(item["user"]), state=_state(state, messages)))
    parts = [messages("digest.list_sep").join(people)] if people else []
    threads = review.get("threads")
    if isinstance(threads, int) and threads > 0:
        comments = review.get("comments") if isinstance(review.get("comments"), int) else 0
        parts.append(messages("digest.threads", count=threads, comments=comments))
    return " · ".join(parts)


def _state(state: str, messages: Messages) -> str:
    try:
        return messages(f"review.state.{state}")
    except KeyError:
        return state.lower()


def is_read_first(guide: Brief | GuideRow) -> bool:
    """Whether a pull request is worth reading first: the engine asks for a deep read, or it breaks something.

    Over the real verl pull requests (188 guides; the shipped rules and the verl example
    rules alike) this picks about one in five (18-19%); reading levels "deep" and
    "quick" together picked 63-64%, which does not select.
    """
    return guide.reading_level == "deep" or guide.breaking


def newest_first(guides: Iterable[T]) -> list[T]:
    """``guides`` newest merge first (then the higher number); those without a merge time last, as the stores list them."""
    return sorted(guides, key=lambda g: (g.merged_at or "", g.number), reverse=True)


def read_first_order(guides: Iterable[T]) -> list[T]:
    """``guides`` in read-first order: deeper reading level first, then higher importance, then the newer merge."""
    def rank(guide: Brief | GuideRow) -> tuple[int, int]:
        level = READING_LEVELS.index(guide.reading_level) if guide.reading_level in READING_LEVELS else len(READING_LEVELS)
        return (level, -(guide.importance or 0))

    # Python's sort is stable: ties in rank keep the newest-first order.
    return sorted(newest_first(guides), key=rank)


def select(briefs: Sequence[Brief], *, per_group: int = GROUP_ENTRIES, also_rows: int = ALSO_ROWS) -> Selection:
    """Split a window's ``briefs`` (any order) into read-first groups by area and the others.

    Read first (:func:`is_read_first`) in :func:`read_first_order`, grouped under each pull
    request's first area, ``per_group`` shown per group; groups follow their best entry.
    The others newest first, ``also_rows`` shown.
    """
    first = read_first_order(b for b in briefs if is_read_first(b))
    grouped: dict[str, list[int]] = {}
    for brief in first:
        grouped.setdefault(brief.area, []).append(brief.number)
    others = newest_first(b for b in briefs if not is_read_first(b))
    return Selection(
        groups=tuple((area, tuple(numbers[:per_group]), len(numbers)) for area, numbers in grouped.items()),
        also=tuple(b.number for b in others[:also_rows]),
        also_total=len(others),
        merged=len(briefs),
    )


def fixes_of_earlier(
    fixes: Sequence[GuideRow], origins: Mapping[int, int], origin_rows: Mapping[int, GuideRow], since: date, until: date,
) -> list[FixOfEarlier]:
    """The fixes of ``fixes`` (rows merged in the window ``since``-``until``) whose origin
    (``origins``: fix number -> the pull request whose code it changes) was merged in the
    window just before, as long as this one (``origin_rows`` give their merge times; an
    origin not stored is left out), newest fix first."""
    span = until - since + timedelta(days=1)
    start, end = (since - span).isoformat(), (since - timedelta(days=1)).isoformat()
    out = []
    for fix in newest_first(fixes):
        origin = origin_rows.get(origins.get(fix.number, 0))
        if origin is not None and origin.merged_date is not None and start <= origin.merged_date <= end:
            out.append(FixOfEarlier(fix, origin))
    return out


def build_digest(
    selection: Selection, rows: Mapping[int, GuideRow], datas: Mapping[int, Mapping[str, Any]], since: date,
    until: date, lang: str, latest_week: tuple[date, date] | None = None, fixes: Sequence[FixOfEarlier] = (),
    *, fix_rows: int = FIX_ROWS,
) -> Digest:
    """The :class:`Digest` of ``selection`` in page language ``lang``.

    ``rows`` are the listed rows and ``datas`` the stored guides by number (a number
    missing from ``rows``, deleted meanwhile, is left out); ``fixes`` the window's fixes of
    the window before (:func:`fixes_of_earlier`), of which ``fix_rows`` are shown.
    """
    messages = Messages(lang)
    groups = []
    for area, numbers, total in selection.groups:
        entries = tuple(make_entry(rows[n], datas.get(n), lang, messages) for n in numbers if n in rows)
        if entries:
            groups.append(AreaGroup(area, entries[0].area_name or area, entries, total))
    return Digest(
        since=since, until=until, groups=tuple(groups), also=tuple(rows[n] for n in selection.also if n in rows),
        also_total=selection.also_total, merged=selection.merged, latest_week=latest_week,
        fixes=tuple(fixes[:fix_rows]), fixes_total=len(fixes),
    )


def iso_week_bounds(day: date) -> tuple[date, date]:
    """Monday and Sunday of ``day``'s ISO week."""
    monday = day - timedelta(days=day.weekday())
    return monday, monday + timedelta(days=6)


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def latest_week(store: Any, repository: str, label: str | None = None) -> tuple[date, date] | None:
    """Monday and Sunday of the ISO week of the newest merge stored for ``repository`` (and ``label``), or ``None``."""
    newest = store.query(repository, label=label, limit=1).items
    if not newest or newest[0].merged_date is None:
        return None
    return iso_week_bounds(date.fromisoformat(newest[0].merged_date))


def load_digest(
    store: Any, repository: str, since: date, until: date, lang: str, *, label: str | None = None,
    per_group: int = GROUP_ENTRIES, also_rows: int = ALSO_ROWS,
) -> tuple[Digest, dict[int, dict[str, Any]]]:
    """The digest of ``repository`` for the inclusive days ``since``-``until`` (UTC), optionally one label's.

    ``store`` is a guide store (``briefs``, ``rows``, ``cards``, ``query``). Returns the
    digest and the cards of the entries shown in ``lang``, by number (for label display
    names). The window is chosen from its briefs; only the cards of what is shown are read.
    Raises :class:`ValueError` from the store for a bad filter.
    """
    briefs = store.briefs(repository, label=label, since=since, until=until)
    chosen = select(briefs, per_group=per_group, also_rows=also_rows)
    # The window's newest fixes whose code came from a known pull request (their briefs say which).
    origins = {b.number: b.fixes_from for b in newest_first(b for b in briefs if b.fixes_from)[:FIX_SCAN]}
    datas = store.cards(repository, chosen.entries, lang)
    rows = store.rows(repository, [*chosen.entries, *chosen.also, *origins, *origins.values()])
    found = fixes_of_earlier([rows[n] for n in origins if n in rows], origins, rows, since, until)
    latest = latest_week(store, repository, label) if not chosen.merged else None
    return build_digest(chosen, rows, datas, since, until, lang, latest, found), datas


def load_read_first(
    store: Any, repository: str, since: date, until: date, lang: str, *, label: str | None = None, limit: int = 50,
) -> list[Entry]:
    """The best ``limit`` read-first entries of the window, in :func:`read_first_order` (the digest feed)."""
    briefs = read_first_order(b for b in store.briefs(repository, label=label, since=since, until=until) if is_read_first(b))
    numbers = [b.number for b in briefs[:limit]]
    rows = store.rows(repository, numbers)
    datas = store.cards(repository, numbers, lang)
    messages = Messages(lang)
    return [make_entry(rows[n], datas.get(n), lang, messages) for n in numbers if n in rows]
