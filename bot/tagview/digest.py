"""Digest entries: what a reader needs to decide whether to open a guide, from its stored data.

:func:`make_entry` turns a listed row and its stored ``Guide.data`` into an :class:`Entry`
(summary, verdict, top focus points, breaking facts, review highlights); :func:`build_digest`
picks the pull requests worth reading first in a window and groups them by area;
:func:`parse_window` reads the ``since``/``until`` of a digest request. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

from markupsafe import Markup

from bot.tagview.i18n import Messages
from bot.tagview.markdown import render_inline
from bot.tagview.model import READING_LEVELS, GuideRow

#: Days a digest covers when the request names no window (today included).
DEFAULT_DAYS = 7
#: Longest window a digest request may ask for, in days.
MAX_DAYS = 366
#: Focus points shown per entry.
FOCUS_POINTS = 3
#: Readers named in an entry's verdict before "and N more".
AUDIENCES = 2
#: Reading levels worth reading first, in the order they are listed.
READ_FIRST = ("deep", "quick")


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

    ``summary_lang`` is the language the summary is written in (the guide's);
    ``verdict`` is the whole verdict line in the page's language (level, minutes, for
    whom, importance), ``rating`` the same without the readers and ``readers`` just
    "for ..." (at most :data:`AUDIENCES` named); ``area``/``area_name``
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


@dataclass(frozen=True, slots=True)
class AreaGroup:
    """The read-first entries of one area (``area`` is ``""`` for pull requests without one)."""

    area: str
    name: str
    entries: tuple[Entry, ...]


@dataclass(frozen=True, slots=True)
class Digest:
    """A digest window: ``groups`` to read first (best group first), ``also`` the rest, newest first."""

    since: date
    until: date
    groups: tuple[AreaGroup, ...]
    also: tuple[Entry, ...]

    @property
    def read_first(self) -> tuple[Entry, ...]:
        """Every read-first entry in page order."""
        return tuple(entry for group in self.groups for entry in group.entries)


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
    folded = label.casefold()
    for data in datas:
        for name, area in _mapping(data.get("label_areas")).items():
            if isinstance(name, str) and name.casefold() == folded and isinstance(area, str):
                display, audience = area_display(data, area, lang)
                return display, messages("digest.area_for", audience=audience) if audience else ""
    return label, ""


def make_entry(row: GuideRow, data: Mapping[str, Any] | None, lang: str, messages: Messages) -> Entry:
    """The digest entry of ``row`` in page language ``lang``; ``data`` is its stored guide (``None``: row only)."""
    data = _mapping(data)
    guide_lang = str(data.get("lang") or "")
    summary = str(data.get("summary") or row.summary or "")
    parts = [messages.level(row.reading_level)]
    if row.reading_minutes is not None:
        parts.append(messages("minutes", minutes=row.reading_minutes))
    if row.importance is not None:
        parts.append(messages("digest.importance", importance=row.importance))
    audience = [str(a) for a in data.get("audience") or () if isinstance(a, str) and a]
    readers = ""
    if audience:
        named = messages("digest.list_sep").join(audience[:AUDIENCES])
        if len(audience) > AUDIENCES:
            named = messages("digest.more_readers", count=len(audience) - AUDIENCES, readers=named)
        readers = messages("digest.for", audience=named)
    rating = " · ".join(p for p in parts if p)
    focus = []
    for point in list(data.get("focus") or ())[:FOCUS_POINTS]:
        if isinstance(point, Mapping) and point.get("reason"):
            focus.append(FocusLine(str(point.get("file") or ""), str(point.get("symbol") or ""), Markup(render_inline(str(point["reason"])))))
    breaking = tuple(str(b) for b in data.get("breaking_reasons") or () if isinstance(b, str) and b)
    area = row.areas[0] if row.areas else ""
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
        breaking=breaking,
        reviews=review_line(data.get("review"), messages),
        area=area,
        area_name=area_display(data, area, lang)[0] if area else "",
    )


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


def sort_key(entry: Entry) -> tuple:
    """Deep before quick, then higher importance, then the newer merge."""
    row = entry.row
    level = READ_FIRST.index(row.reading_level) if row.reading_level in READ_FIRST else len(READING_LEVELS)
    return (level, -(row.importance or 0), _negated(row.merged_at or ""), -row.number)


def _negated(text: str) -> tuple[int, ...]:
    return tuple(-ord(c) for c in text)


def build_digest(entries: Sequence[Entry], since: date, until: date) -> Digest:
    """Split ``entries`` (any order) into read-first groups by area and the "also merged" rest.

    Read first: reading level ``deep`` or ``quick``, ordered by :func:`sort_key`, grouped
    under each pull request's first area; groups follow their best entry. The rest is
    newest first.
    """
    first = sorted((e for e in entries if e.row.reading_level in READ_FIRST), key=sort_key)
    groups: dict[str, list[Entry]] = {}
    for entry in first:
        groups.setdefault(entry.area, []).append(entry)
    also = sorted((e for e in entries if e.row.reading_level not in READ_FIRST), key=lambda e: (_negated(e.row.merged_at or ""), -e.row.number))
    return Digest(
        since=since,
        until=until,
        groups=tuple(AreaGroup(area, items[0].area_name or area, tuple(items)) for area, items in groups.items()),
        also=tuple(also),
    )


def iso_week_bounds(day: date) -> tuple[date, date]:
    """Monday and Sunday of ``day``'s ISO week."""
    monday = day - timedelta(days=day.weekday())
    return monday, monday + timedelta(days=6)


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def load_digest(
    store: Any, repository: str, since: date, until: date, lang: str, *, label: str | None = None
) -> tuple[Digest, dict[int, dict[str, Any]]]:
    """The digest of ``repository`` for the inclusive days ``since``-``until`` (UTC), optionally one label's.

    ``store`` is a guide store (``query`` and ``get_many``). Returns the digest and the
    stored guide data by number (for label display names). Raises :class:`ValueError`
    from the store for a bad filter.
    """
    rows: list[GuideRow] = []
    offset = 0
    while True:
        page = store.query(repository, label=label, since=since, until=until, limit=500, offset=offset)
        rows.extend(page.items)
        if page.next_offset is None:
            break
        offset = page.next_offset
    datas = store.get_many(repository, [row.number for row in rows])
    messages = Messages(lang)
    entries = [make_entry(row, datas.get(row.number), lang, messages) for row in rows]
    return build_digest(entries, since, until), datas
