"""The SQL both guide stores share: filter conditions, row reading, label sections and checks.

The SQLite store (:mod:`bot.tagview.store`) and the PostgreSQL one
(:mod:`bot.tagview.pgstore`) differ only in placeholders, how a time is passed and how
a search word is matched; everything else is written once here.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

from bot.tagview.guide_data import day_start, pick_card, utc
from bot.tagview.model import MAX_LIMIT, READING_LEVELS, GuideFilter, GuideRow, LabelSection, SectionPage


def _same(value: Any) -> Any:
    return value


def filter_sql(
    repository: str,
    flt: GuideFilter,
    *,
    mark: str,
    word: Callable[[str], tuple[str, list[Any]]],
    moment: Callable[[datetime], Any] = _same,
) -> tuple[str, list[Any]]:
    """The condition on ``tagview_guides g`` for ``flt`` in ``repository``, and its parameters.

    Backends differ only in ``mark`` (their parameter placeholder), ``moment`` (how a
    UTC ``datetime`` is passed: SQLite stores ISO text) and ``word`` (the condition and
    parameters for one search word: each has its own index). Raises :class:`ValueError`
    for a bad filter value (:func:`check_filter`).
    """
    check_filter(flt)
    clauses = [f"g.repository = {mark}"]
    params: list[Any] = [repository]
    if flt.label:
        clauses.append(f"EXISTS (SELECT 1 FROM tagview_labels x WHERE x.guide_id = g.id AND x.label = {mark})")
        params.append(flt.label)
    if flt.area:
        clauses.append(f"EXISTS (SELECT 1 FROM tagview_areas a WHERE a.guide_id = g.id AND a.area = {mark})")
        params.append(flt.area)
    if flt.level:
        clauses.append(f"g.reading_level = {mark}")
        params.append(flt.level)
    if flt.min_importance is not None:
        clauses.append(f"g.importance >= {mark}")
        params.append(flt.min_importance)
    if flt.since is not None:
        clauses.append(f"g.merged_at >= {mark}")
        params.append(moment(day_start(flt.since)))
    if flt.until is not None:
        if isinstance(flt.until, datetime):
            clauses.append(f"g.merged_at <= {mark}")
            params.append(moment(utc(flt.until)))
        else:  # the whole day, in UTC
            clauses.append(f"g.merged_at < {mark}")
            params.append(moment(day_start(flt.until + timedelta(days=1))))
    for text in (flt.search or "").split():
        clause, values = word(text)
        clauses.append(clause)
        params.extend(values)
    return " AND ".join(clauses), params


def like_pattern(word: str) -> str:
    """``%word%`` for ``LIKE``/``ILIKE ... ESCAPE '\\'``: the word's own ``\\``, ``%`` and ``_`` match themselves."""
    return "%" + re.sub(r"([\\%_])", r"\\\1", word) + "%"


def split_label(
    flt: GuideFilter | None, per_label: int, limit: int | None = None, offset: int = 0
) -> tuple[str | None, GuideFilter]:
    """``(label, the rest of the filter)`` for :meth:`GuideStore.section_page`; ``ValueError`` for
    ``per_label`` or ``limit`` (labels of a page; ``None``: all) below 1, or ``offset`` outside
    0-:data:`MAX_OFFSET`."""
    if per_label < 1:
        raise ValueError(f"per_label must be at least 1, got {per_label}")
    if limit is not None and limit < 1:
        raise ValueError(f"limit must be at least 1, got {limit}")
    if not 0 <= offset <= MAX_OFFSET:
        raise ValueError(f"offset must be between 0 and {MAX_OFFSET}, got {offset}")
    flt = flt or GuideFilter()
    return flt.label, dataclasses.replace(flt, label=None)


def label_page(
    found: Iterable[Sequence[Any]], descriptions: Iterable[Sequence[str]], to_row: Callable[[Sequence[Any]], GuideRow],
    offset: int,
) -> SectionPage:
    """The :class:`SectionPage` of :meth:`GuideStore.section_page`, its sections by label name (any case).

    ``found``: ``(label, matching guides, matching labels in all, *ROW_COLUMNS)`` records,
    each label's newest first; ``descriptions``: ``(label, description)`` pairs; ``to_row``
    reads the backend's columns; ``offset``: labels ranked before the page.
    """
    records = [tuple(record) for record in found]
    labels = max((int(record[2]) for record in records), default=0)
    sections = label_sections(((r[0], r[1], *r[3:]) for r in records), descriptions, to_row)
    return SectionPage(sections, labels, offset)


def label_sections(
    found: Iterable[Sequence[Any]], descriptions: Iterable[Sequence[str]], to_row: Callable[[Sequence[Any]], GuideRow]
) -> list[LabelSection]:
    """The sections of :meth:`GuideStore.sections`, by label name (any case).

    ``found``: ``(label, matching guides, *ROW_COLUMNS)`` records, each label's newest
    first; ``descriptions``: ``(label, description)`` pairs; ``to_row`` reads the
    backend's columns.
    """
    totals: dict[str, tuple[str, int]] = {}
    grouped: dict[str, list[GuideRow]] = {}
    for record in map(tuple, found):
        key = record[0].casefold()
        totals.setdefault(key, (record[0], record[1]))
        grouped.setdefault(key, []).append(to_row(record[2:]))
    described = {name.casefold(): text for name, text in descriptions}
    sections = [
        LabelSection(name, count, described.get(key, ""), tuple(grouped[key])) for key, (name, count) in totals.items()
    ]
    return sorted(sections, key=lambda s: s.name.casefold())


def check_filter(flt: GuideFilter) -> None:
    """Raise :class:`ValueError` naming the first bad value of ``flt`` (reading level, minimum importance)."""
    if flt.level and flt.level not in READING_LEVELS:
        raise ValueError(f"reading level must be one of {', '.join(READING_LEVELS)}, got {flt.level!r}")
    if flt.min_importance is not None and (
        not isinstance(flt.min_importance, int) or not 1 <= flt.min_importance <= 10
    ):
        raise ValueError(f"minimum importance must be a whole number 1-10, got {flt.min_importance!r}")


#: Largest ``offset`` a store takes: SQLite and PostgreSQL read ``OFFSET`` as a signed 64-bit
#: integer, and past it they fail as a database error would (``OverflowError``, ``DataError``).
MAX_OFFSET = 2**62


def check_page(limit: int, offset: int) -> None:
    """Raise :class:`ValueError` unless ``limit`` is 1-:data:`MAX_LIMIT` and ``offset`` 0-:data:`MAX_OFFSET`."""
    if not 1 <= limit <= MAX_LIMIT:
        raise ValueError(f"limit must be between 1 and {MAX_LIMIT}, got {limit}")
    if not 0 <= offset <= MAX_OFFSET:
        raise ValueError(f"offset must be between 0 and {MAX_OFFSET}, got {offset}")


#: The columns of a :class:`GuideRow`, in the order :func:`guide_row` reads them.
ROW_COLUMNS = (
    "g.repository, g.number, g.title, g.url, g.author, g.merged_at, g.change_type, g.breaking, "
    "g.importance, g.reading_level, g.reading_minutes, g.labels, g.areas, g.summary"
)


def guide_row(
    found: Sequence[Any], *, moment: Callable[[Any], str | None] = _same, names: Callable[[Any], Iterable[str]] = _same
) -> GuideRow:
    """A :class:`GuideRow` from one record of :data:`ROW_COLUMNS`.

    ``moment`` turns the stored ``merged_at`` into UTC ISO-8601 text (or ``None``) and
    ``names`` the stored ``labels``/``areas`` into names: the backends store them differently.
    """
    r = tuple(found)
    return GuideRow(
        repository=r[0], number=r[1], title=r[2], url=r[3], author=r[4], merged_at=moment(r[5]),
        change_type=r[6], breaking=bool(r[7]), importance=r[8], reading_level=r[9],
        reading_minutes=r[10], labels=tuple(names(r[11])), areas=tuple(names(r[12])), summary=r[13],
    )


def chosen_cards(
    found: Iterable[Sequence[Any]], wanted: Sequence[int], lang: str,
    stored: Callable[[list[int]], Mapping[int, Mapping[str, Any]]],
) -> dict[int, dict[str, Any]]:
    """The cards of :meth:`GuideStore.cards`: for each of ``wanted``, its card in ``lang``, else its own.

    ``found``: ``(number, card language, card, origin stored)`` records (the card as JSON
    text or already decoded, ``None`` for a guide without one; the last says whether the
    guide of the pull request whose code the guide's fix changes is stored);
    ``stored(numbers)`` reads the stored data of guides that have no card (stored before
    cards existed), which are then cut from it (:func:`pick_card`). Each card gets
    ``fixes_code_from_stored`` (bool): an entry links only to a stored guide.
    """
    cards: dict[int, dict[str, Any]] = {}
    origin_stored: dict[int, bool] = {}
    for number, card_lang, card, has_origin in found:
        origin_stored[number] = bool(has_origin)
        if card is not None and (number not in cards or card_lang == lang):
            cards[number] = json.loads(card) if isinstance(card, str) else dict(card)
    missing = [number for number in wanted if number not in cards and number in origin_stored]
    if missing:
        for number, data in stored(missing).items():
            cards[number] = pick_card(data, lang)
    for number, card in cards.items():
        card["fixes_code_from_stored"] = origin_stored.get(number, False)
    return cards
