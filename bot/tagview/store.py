"""The guide store: one row per merged pull request's guide, in SQLite.

It lives in the same database file as the job table. Labels and areas sit in child
tables so grouping by label is an index walk; the full guide JSON is kept verbatim,
so keys this module does not know about are never lost.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import re
import sqlite3
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path
from typing import Any, Protocol

from bot.tagview.schema import migrate_tagview, open_connection

#: Reading levels a guide may have, deepest first (``Guide.data["reading_level"]``).
READING_LEVELS = ("deep", "quick", "skim", "skip")
#: Repository visibilities; GitHub's ``repository.private`` true means ``"private"``.
VISIBILITIES = ("public", "private")
#: Largest page :meth:`GuideStore.query` returns.
MAX_LIMIT = 500

# GitHub owner and repository names: letters, digits, "-", "_" and "." ("Creating a new repository").
_REPO_RE = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})/[A-Za-z0-9._-]{1,100}$")


class GuideDataError(ValueError):
    """Raised by :meth:`GuideStore.save` when guide data is unusable; nothing is written.

    The message names the offending key and value.
    """


@dataclass(frozen=True, slots=True)
class GuideRow:
    """One stored guide as listed on the tag view (the Markdown body is left out).

    ``merged_at`` is UTC ISO-8601 (``2026-08-20T12:00:00Z``) or ``None``; ``importance``
    is 1-10 or ``None``; ``reading_minutes`` whole minutes or ``None``.
    """

    repository: str
    number: int
    title: str
    url: str | None
    author: str | None
    merged_at: str | None
    change_type: str | None
    breaking: bool
    importance: int | None
    reading_level: str | None
    reading_minutes: int | None
    labels: tuple[str, ...]
    areas: tuple[str, ...]
    summary: str

    @property
    def merged_date(self) -> str | None:
        """The merge day, ``YYYY-MM-DD`` in UTC, or ``None``."""
        return self.merged_at[:10] if self.merged_at else None

    def to_json(self) -> dict[str, Any]:
        """The row as a JSON-ready dict (the ``tags.json`` item shape)."""
        return {
            "repository": self.repository,
            "number": self.number,
            "title": self.title,
            "url": self.url,
            "author": self.author,
            "merged_at": self.merged_at,
            "labels": list(self.labels),
            "areas": list(self.areas),
            "change_type": self.change_type,
            "breaking": self.breaking,
            "importance": self.importance,
            "reading_level": self.reading_level,
            "reading_minutes": self.reading_minutes,
            "summary": self.summary,
        }


@dataclass(frozen=True, slots=True)
class GuidePage:
    """One page of :meth:`GuideStore.query`: ``items`` newest first, ``total`` matches in all."""

    items: tuple[GuideRow, ...]
    total: int
    limit: int
    offset: int

    @property
    def next_offset(self) -> int | None:
        """Offset of the next page, or ``None`` on the last one."""
        end = self.offset + len(self.items)
        return end if end < self.total else None


@dataclass(frozen=True, slots=True)
class LabelCount:
    """A label used in a repository: ``count`` guides carry it; ``description`` from its label spec ("" when unknown)."""

    name: str
    count: int
    description: str = ""


@dataclass(frozen=True, slots=True)
class LabelSection:
    """A label with its ``count`` matching guides and the newest ``rows`` of them."""

    name: str
    count: int
    description: str
    rows: tuple[GuideRow, ...]


@dataclass(frozen=True, slots=True)
class RepositoryInfo:
    """A repository with stored guides: ``visibility`` is ``"public"`` or ``"private"``."""

    name: str
    visibility: str
    guides: int


@dataclass(frozen=True, slots=True)
class GuideFilter:
    """What to show: every field ``None`` means "no restriction".

    ``label``/``area`` match case-insensitively; ``level`` is one of :data:`READING_LEVELS`;
    ``min_importance`` 1-10; ``since``/``until`` are inclusive days (UTC) or exact instants;
    ``search`` words must all appear in the title or a focus point (substring, any case).
    """

    label: str | None = None
    area: str | None = None
    level: str | None = None
    min_importance: int | None = None
    since: date | datetime | None = None
    until: date | datetime | None = None
    search: str | None = None

    @property
    def active(self) -> bool:
        """Whether any restriction is set."""
        return any(getattr(self, name) not in (None, "") for name in self.__slots__)


class GuideStorage(Protocol):
    """What the tag view's pages, JSON, export and the features call on a guide store.

    Two implementations: :class:`GuideStore` (SQLite, the single-machine default) and
    :class:`bot.tagview.pgstore.PgGuideStore` (PostgreSQL, shared by replicas). Both give
    the same answers; ``tests/test_tagview_store.py`` runs one suite against each.
    Methods are synchronous; see :class:`GuideStore` for each one's shapes and errors.
    A store whose calls wait on a database server says ``blocking = True``: the server
    and the features then call it from a worker thread (:func:`bot.app.offload.run_store`).
    """

    @property
    def full_text_search(self) -> bool: ...

    def close(self) -> None: ...

    def save(
        self,
        guide_data: Mapping[str, Any],
        *,
        visibility: str | None = None,
        label_descriptions: Mapping[str, str] | None = None,
    ) -> None: ...

    def set_visibility(self, repository: str, visibility: str) -> None: ...

    def delete(self, repository: str, number: int) -> bool: ...

    def get(self, repository: str, number: int) -> dict[str, Any] | None: ...

    def get_many(self, repository: str, numbers: Iterable[int]) -> dict[int, dict[str, Any]]: ...

    def visibility(self, repository: str) -> str | None: ...

    def repositories(self) -> list[RepositoryInfo]: ...

    def canonical_name(self, repository: str) -> str | None: ...

    def labels(self, repository: str) -> list[LabelCount]: ...

    def areas(self, repository: str) -> list[tuple[str, int]]: ...

    def query(
        self,
        repository: str,
        *,
        label: str | None = None,
        area: str | None = None,
        level: str | None = None,
        min_importance: int | None = None,
        since: date | datetime | str | None = None,
        until: date | datetime | str | None = None,
        search: str | None = None,
        limit: int = 50,
        offset: int = 0,
    ) -> GuidePage: ...

    def sections(self, repository: str, flt: GuideFilter | None = None, *, per_label: int = 10) -> list[LabelSection]: ...


def _locked(method):  # type: ignore[no-untyped-def]
    @functools.wraps(method)
    def run(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        with self._lock:
            return method(self, *args, **kwargs)

    return run


class GuideStore:
    """Stored guides of merged pull requests, for the tag view.

    ``path_or_conn`` is a database file path (opened and migrated here, closed by
    :meth:`close`) or an open :class:`sqlite3.Connection` (migrated, never closed here).
    Methods are synchronous and serialised by a lock, so one store may be shared by
    threads; a query over 5,000 guides takes a few milliseconds.
    Raises :class:`sqlite3.Error` for an unusable database file and
    :class:`bot.app.db.DatabaseError` for one newer than this code.
    """

    def __init__(self, path_or_conn: str | Path | sqlite3.Connection):
        if isinstance(path_or_conn, sqlite3.Connection):
            self._conn = path_or_conn
            self._owned = False
        else:
            self._conn = open_connection(path_or_conn)
            self._owned = True
        self._lock = threading.RLock()
        self._fts = migrate_tagview(self._conn)

    @property
    def connection(self) -> sqlite3.Connection:
        """The underlying connection."""
        return self._conn

    @property
    def full_text_search(self) -> bool:
        """Whether search uses an SQLite FTS5 trigram index (else plain ``LIKE`` scans)."""
        return self._fts

    def close(self) -> None:
        """Close the connection if this store opened it."""
        if self._owned:
            self._conn.close()

    def __enter__(self) -> GuideStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- writing ---------------------------------------------------------------------

    @_locked
    def save(
        self,
        guide_data: Mapping[str, Any],
        *,
        visibility: str | None = None,
        label_descriptions: Mapping[str, str] | None = None,
    ) -> None:
        """Store one guide (``Guide.data``), replacing any earlier guide for the same PR.

        ``visibility`` (``"public"``/``"private"``) updates the repository's; ``None``
        keeps what is stored, and a repository seen for the first time is private.
        ``label_descriptions`` maps label names to their descriptions (from the rules'
        label specs); ``label_details[].description`` in the data is used too.
        Raises :class:`GuideDataError` for missing ``repository``/``number``/``title`` or
        wrongly typed known keys; nothing is written then.
        """
        row, labels, descriptions = prepare_save(guide_data, visibility, label_descriptions)
        areas = row["areas"]
        with _savepoint(self._conn, "tagview_save") as conn:
            conn.execute(
                "INSERT INTO tagview_repositories (name, visibility) VALUES (?, ?) "
                "ON CONFLICT (name) DO UPDATE SET visibility = COALESCE(?, visibility)",
                (row["repository"], visibility or "private", visibility),
            )
            guide_id = conn.execute(
                """
                INSERT INTO tagview_guides (
                    repository, number, title, url, author, merged_at, change_type, breaking,
                    importance, reading_level, reading_minutes, lang, summary, labels, areas,
                    focus_text, stored_at
                ) VALUES (
                    :repository, :number, :title, :url, :author, :merged_at, :change_type, :breaking,
                    :importance, :reading_level, :reading_minutes, :lang, :summary, :labels_json,
                    :areas_json, :focus_text, :stored_at
                )
                ON CONFLICT (repository, number) DO UPDATE SET
                    title = excluded.title, url = excluded.url, author = excluded.author,
                    merged_at = excluded.merged_at, change_type = excluded.change_type,
                    breaking = excluded.breaking, importance = excluded.importance,
                    reading_level = excluded.reading_level, reading_minutes = excluded.reading_minutes,
                    lang = excluded.lang, summary = excluded.summary, labels = excluded.labels,
                    areas = excluded.areas, focus_text = excluded.focus_text, stored_at = excluded.stored_at
                RETURNING id
                """,
                {**row, "labels_json": json.dumps(row["labels"]), "areas_json": json.dumps(areas)},
            ).fetchone()[0]
            conn.execute(
                "INSERT INTO tagview_guide_data (guide_id, data) VALUES (?, ?) "
                "ON CONFLICT (guide_id) DO UPDATE SET data = excluded.data",
                (guide_id, row["data"]),
            )
            conn.execute("DELETE FROM tagview_labels WHERE guide_id = ?", (guide_id,))
            conn.executemany(
                "INSERT OR IGNORE INTO tagview_labels (guide_id, repository, label, source, rule, merged_at, number) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                [
                    (guide_id, row["repository"], name, source, rule, row["merged_at"], row["number"])
                    for name, source, rule in labels
                ],
            )
            conn.execute("DELETE FROM tagview_areas WHERE guide_id = ?", (guide_id,))
            conn.executemany(
                "INSERT OR IGNORE INTO tagview_areas (guide_id, repository, area) VALUES (?, ?, ?)",
                [(guide_id, row["repository"], area) for area in areas],
            )
            conn.executemany(
                "INSERT INTO tagview_label_info (repository, label, description) VALUES (?, ?, ?) "
                "ON CONFLICT (repository, label) DO UPDATE SET description = excluded.description",
                [(row["repository"], name, text) for name, text in descriptions.items()],
            )
            if self._fts:
                conn.execute("DELETE FROM tagview_search WHERE rowid = ?", (guide_id,))
                conn.execute(
                    "INSERT INTO tagview_search (rowid, title, focus) VALUES (?, ?, ?)",
                    (guide_id, row["title"], row["focus_text"]),
                )

    @_locked
    def set_visibility(self, repository: str, visibility: str) -> None:
        """Mark a repository ``"public"`` or ``"private"`` (e.g. on a ``repository`` "privatized" event).

        Raises :class:`ValueError` for another value.
        """
        if visibility not in VISIBILITIES:
            raise ValueError(f"visibility must be 'public' or 'private', got {visibility!r}")
        with _savepoint(self._conn, "tagview_visibility") as conn:
            conn.execute(
                "INSERT INTO tagview_repositories (name, visibility) VALUES (?, ?) "
                "ON CONFLICT (name) DO UPDATE SET visibility = excluded.visibility",
                (repository, visibility),
            )

    @_locked
    def delete(self, repository: str, number: int) -> bool:
        """Forget one guide; returns whether there was one."""
        with _savepoint(self._conn, "tagview_delete") as conn:
            found = conn.execute(
                "SELECT id FROM tagview_guides WHERE repository = ? AND number = ?", (repository, number)
            ).fetchone()
            if found is None:
                return False
            for table in ("tagview_labels", "tagview_areas", "tagview_guide_data"):
                conn.execute(f"DELETE FROM {table} WHERE guide_id = ?", (found[0],))
            if self._fts:
                conn.execute("DELETE FROM tagview_search WHERE rowid = ?", (found[0],))
            conn.execute("DELETE FROM tagview_guides WHERE id = ?", (found[0],))
            return True

    # -- reading ---------------------------------------------------------------------

    @_locked
    def get(self, repository: str, number: int) -> dict[str, Any] | None:
        """The stored guide data (as saved, extra keys included), or ``None``."""
        found = self._conn.execute(
            "SELECT d.data FROM tagview_guides g JOIN tagview_guide_data d ON d.guide_id = g.id "
            "WHERE g.repository = ? AND g.number = ?",
            (repository, number),
        ).fetchone()
        return json.loads(found[0]) if found else None

    @_locked
    def get_many(self, repository: str, numbers: Iterable[int]) -> dict[int, dict[str, Any]]:
        """Stored guide data of several pull requests at once: ``{number: data}``; unknown numbers are left out.

        One query per 500 numbers (SQLite's parameter limit stays far away).
        """
        wanted = sorted({int(n) for n in numbers})
        found: dict[int, dict[str, Any]] = {}
        for start in range(0, len(wanted), 500):
            chunk = wanted[start:start + 500]
            marks = ", ".join("?" * len(chunk))
            for number, blob in self._conn.execute(
                "SELECT g.number, d.data FROM tagview_guides g JOIN tagview_guide_data d ON d.guide_id = g.id "
                f"WHERE g.repository = ? AND g.number IN ({marks})",
                (repository, *chunk),
            ):
                found[number] = json.loads(blob)
        return found

    @_locked
    def visibility(self, repository: str) -> str | None:
        """``"public"``/``"private"`` for a known repository, else ``None``."""
        found = self._conn.execute(
            "SELECT visibility FROM tagview_repositories WHERE name = ?", (repository,)
        ).fetchone()
        return found[0] if found else None

    @_locked
    def repositories(self) -> list[RepositoryInfo]:
        """Every repository with its visibility and number of stored guides, by name."""
        rows = self._conn.execute(
            """
            SELECT r.name, r.visibility, COUNT(g.id)
            FROM tagview_repositories r LEFT JOIN tagview_guides g ON g.repository = r.name
            GROUP BY r.name ORDER BY r.name
            """
        ).fetchall()
        return [RepositoryInfo(name, vis, count) for name, vis, count in map(tuple, rows)]

    @_locked
    def canonical_name(self, repository: str) -> str | None:
        """The repository's name as stored (names match case-insensitively), or ``None``."""
        found = self._conn.execute("SELECT name FROM tagview_repositories WHERE name = ?", (repository,)).fetchone()
        return found[0] if found else None

    @_locked
    def labels(self, repository: str) -> list[LabelCount]:
        """Labels on the repository's stored guides, with counts and descriptions, by name."""
        rows = self._conn.execute(
            """
            SELECT l.label, COUNT(*), COALESCE(i.description, '')
            FROM tagview_labels l
            LEFT JOIN tagview_label_info i ON i.repository = l.repository AND i.label = l.label
            WHERE l.repository = ? GROUP BY l.label
            """,
            (repository,),
        ).fetchall()
        return sorted((LabelCount(*tuple(row)) for row in rows), key=lambda item: item.name.casefold())

    @_locked
    def areas(self, repository: str) -> list[tuple[str, int]]:
        """Areas on the repository's stored guides as ``(area, count)``, by name."""
        rows = self._conn.execute(
            "SELECT area, COUNT(*) FROM tagview_areas WHERE repository = ? GROUP BY area", (repository,)
        ).fetchall()
        return sorted((tuple(row) for row in rows), key=lambda item: item[0].casefold())

    @_locked
    def query(
        self,
        repository: str,
        *,
        label: str | None = None,
        area: str | None = None,
        level: str | None = None,
        min_importance: int | None = None,
        since: date | datetime | str | None = None,
        until: date | datetime | str | None = None,
        search: str | None = None,
        limit: int = 50,
        offset: int = 0,
    ) -> GuidePage:
        """One page of the repository's guides matching every given filter, newest merge first.

        See :class:`GuideFilter` for the filters; ``since``/``until`` also accept
        ``YYYY-MM-DD`` or ISO-8601 strings. ``limit`` is 1-:data:`MAX_LIMIT`, ``offset`` >= 0.
        Raises :class:`ValueError` for a bad filter value.
        """
        check_page(limit, offset)
        flt = GuideFilter(
            label=label, area=area, level=level, min_importance=min_importance,
            since=_as_bound(since, "since"), until=_as_bound(until, "until"), search=search,
        )
        where, params = self._where(repository, flt)
        total = self._conn.execute(f"SELECT COUNT(*) FROM tagview_guides g WHERE {where}", params).fetchone()[0]
        rows = self._conn.execute(
            f"SELECT {ROW_COLUMNS} FROM tagview_guides g WHERE {where} "
            "ORDER BY g.merged_at DESC, g.number DESC LIMIT ? OFFSET ?",
            (*params, limit, offset),
        ).fetchall()
        return GuidePage(tuple(_row(r) for r in rows), total, limit, offset)

    @_locked
    def sections(self, repository: str, flt: GuideFilter | None = None, *, per_label: int = 10) -> list[LabelSection]:
        """Every label (only ``flt.label`` when set) with its matching guides' count and newest ``per_label`` rows.

        Labels without a matching guide are left out; sections are ordered by label name.
        Raises :class:`ValueError` for a bad filter value.
        """
        label, narrowed = split_label(flt, per_label)
        label_sql = " AND l.label = ?" if label else ""
        label_params = (label,) if label else ()
        where, params = self._where(repository, narrowed)
        descriptions = self._conn.execute(
            "SELECT label, description FROM tagview_label_info WHERE repository = ?", (repository,)
        ).fetchall()
        if narrowed.active:
            # Rank the matching label rows in one window pass and read full rows only for
            # the winners. "IN (subquery)" is evaluated once into a lookup table, so the
            # plan stays one covering-index scan however selective the filter is.
            found = self._conn.execute(
                f"""
                WITH ranked AS (
                    SELECT l.label, l.guide_id,
                           ROW_NUMBER() OVER (PARTITION BY l.label ORDER BY l.merged_at DESC, l.number DESC) AS position,
                           COUNT(*) OVER (PARTITION BY l.label) AS total
                    FROM tagview_labels l
                    WHERE l.repository = ?{label_sql} AND l.guide_id IN (SELECT g.id FROM tagview_guides g WHERE {where})
                )
                SELECT r.label, r.total, {ROW_COLUMNS}
                FROM ranked r JOIN tagview_guides g ON g.id = r.guide_id
                WHERE r.position <= ? ORDER BY r.label, r.position
                """,
                (repository, *label_params, *params, per_label),
            ).fetchall()
        else:
            # Unfiltered: counts come from the label index alone, rows from one short
            # index walk per label (newest first, stopping after per_label).
            counts = self._conn.execute(
                f"SELECT l.label, COUNT(*) FROM tagview_labels l WHERE l.repository = ?{label_sql} GROUP BY l.label",
                (repository, *label_params),
            ).fetchall()
            walk = (
                f"SELECT {ROW_COLUMNS} FROM tagview_labels l JOIN tagview_guides g ON g.id = l.guide_id "
                "WHERE l.repository = ? AND l.label = ? ORDER BY l.merged_at DESC, l.number DESC LIMIT ?"
            )
            found = [
                (name, count, *row)
                for name, count in counts
                for row in self._conn.execute(walk, (repository, name, per_label))
            ]
        return label_sections(found, descriptions, _row)

    def _where(self, repository: str, flt: GuideFilter) -> tuple[str, list[Any]]:
        return filter_sql(repository, flt, mark="?", moment=_iso, word=self._word)

    def _word(self, word: str) -> tuple[str, list[Any]]:
        if self._fts and len(word) >= 3:
            # The trigram index finds substrings of 3+ characters in any case, like LIKE below.
            return "g.id IN (SELECT rowid FROM tagview_search WHERE tagview_search MATCH ?)", ['"' + word.replace('"', '""') + '"']
        pattern = like_pattern(word)
        return "(g.title LIKE ? ESCAPE '\\' OR g.focus_text LIKE ? ESCAPE '\\')", [pattern, pattern]


# -- what both backends share (the PostgreSQL store calls these too) --------------------


def _same(value: Any) -> Any:
    return value


def prepare_save(
    guide_data: Mapping[str, Any], visibility: str | None, label_descriptions: Mapping[str, str] | None
) -> tuple[dict[str, Any], list[tuple[str, str, str | None]], dict[str, str]]:
    """Check what :meth:`GuideStore.save` was given and shape it for writing.

    Returns ``(row, labels, descriptions)``: the guide's columns (see :func:`_normalise`),
    each label as ``(name, source, rule)``, and label descriptions by name (those in
    ``label_descriptions`` win over the data's own). Raises :class:`GuideDataError`.
    """
    row = _normalise(guide_data)
    if visibility is not None and visibility not in VISIBILITIES:
        raise GuideDataError(f"visibility must be 'public' or 'private', got {visibility!r}")
    descriptions = dict(row.pop("descriptions"))
    for name, text in (label_descriptions or {}).items():
        if text:
            descriptions[str(name)] = str(text)
    details = row.pop("details")
    labels = [(name, *details.get(name, ("rule", None))) for name in row["labels"]]
    return row, labels, descriptions


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
        params.append(moment(_start(flt.since)))
    if flt.until is not None:
        if isinstance(flt.until, datetime):
            clauses.append(f"g.merged_at <= {mark}")
            params.append(moment(_utc(flt.until)))
        else:  # the whole day, in UTC
            clauses.append(f"g.merged_at < {mark}")
            params.append(moment(_start(flt.until + timedelta(days=1))))
    for text in (flt.search or "").split():
        clause, values = word(text)
        clauses.append(clause)
        params.extend(values)
    return " AND ".join(clauses), params


def like_pattern(word: str) -> str:
    """``%word%`` for ``LIKE``/``ILIKE ... ESCAPE '\\'``: the word's own ``\\``, ``%`` and ``_`` match themselves."""
    return "%" + re.sub(r"([\\%_])", r"\\\1", word) + "%"


def split_label(flt: GuideFilter | None, per_label: int) -> tuple[str | None, GuideFilter]:
    """``(label, the rest of the filter)`` for :meth:`GuideStore.sections`; ``ValueError`` for ``per_label`` < 1."""
    if per_label < 1:
        raise ValueError(f"per_label must be at least 1, got {per_label}")
    flt = flt or GuideFilter()
    return flt.label, dataclasses.replace(flt, label=None)


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


def check_page(limit: int, offset: int) -> None:
    """Raise :class:`ValueError` unless ``limit`` is 1-:data:`MAX_LIMIT` and ``offset`` >= 0."""
    if not 1 <= limit <= MAX_LIMIT:
        raise ValueError(f"limit must be between 1 and {MAX_LIMIT}, got {limit}")
    if offset < 0:
        raise ValueError(f"offset must not be negative, got {offset}")


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


def _row(found: Sequence[Any]) -> GuideRow:
    return guide_row(found, names=json.loads)


class _savepoint:
    """A savepoint that works whether or not the caller's connection is in a transaction."""

    def __init__(self, conn: sqlite3.Connection, name: str):
        self.conn = conn
        self.name = name

    def __enter__(self) -> sqlite3.Connection:
        self.conn.execute(f"SAVEPOINT {self.name}")
        return self.conn

    def __exit__(self, exc_type: object, *rest: object) -> None:
        if exc_type is not None:
            self.conn.execute(f"ROLLBACK TO {self.name}")
        self.conn.execute(f"RELEASE {self.name}")


# -- validation of guide data -----------------------------------------------------------


def _normalise(data: Mapping[str, Any]) -> dict[str, Any]:
    if not isinstance(data, Mapping):
        raise GuideDataError(f"guide data must be a mapping, got {type(data).__name__}")
    repository = data.get("repository")
    if not isinstance(repository, str) or not _REPO_RE.match(repository) or repository.split("/")[1] in (".", ".."):
        raise GuideDataError(f"guide data 'repository' must be 'owner/repo', got {repository!r}")
    number = data.get("number")
    if isinstance(number, bool) or not isinstance(number, int) or number < 1:
        raise GuideDataError(f"guide data 'number' must be a positive whole number, got {number!r}")
    title = data.get("title")
    if not isinstance(title, str):
        raise GuideDataError(f"guide data 'title' must be text, got {title!r}")

    importance = data.get("importance")
    if importance is not None and (isinstance(importance, bool) or not isinstance(importance, int) or not 1 <= importance <= 10):
        raise GuideDataError(f"guide data 'importance' must be a whole number 1-10, got {importance!r}")
    level = data.get("reading_level")
    if level is not None and level not in READING_LEVELS:
        raise GuideDataError(f"guide data 'reading_level' must be one of {', '.join(READING_LEVELS)}, got {level!r}")
    minutes = data.get("reading_minutes")
    if minutes is not None and (isinstance(minutes, bool) or not isinstance(minutes, int) or minutes < 0):
        raise GuideDataError(f"guide data 'reading_minutes' must be a whole number >= 0, got {minutes!r}")

    labels = _strings(data.get("labels"), "labels")
    areas = _strings(data.get("areas"), "areas")
    details: dict[str, tuple[str, str | None]] = {}
    descriptions: dict[str, str] = {}
    for item in data.get("label_details") or ():
        if not isinstance(item, Mapping) or not isinstance(item.get("name"), str):
            raise GuideDataError(f"guide data 'label_details' items must have a text 'name', got {item!r}")
        source = item.get("source") if item.get("source") in ("rule", "human") else "rule"
        rule = item.get("rule")
        details[item["name"]] = (source, str(rule) if rule is not None else None)
        if isinstance(item.get("description"), str) and item["description"]:
            descriptions[item["name"]] = item["description"]

    focus_lines = []
    for point in data.get("focus") or ():
        if isinstance(point, Mapping):
            focus_lines.append(" ".join(str(point.get(key) or "") for key in ("file", "symbol", "reason")).strip())
        elif isinstance(point, str):
            focus_lines.append(point)

    merged_at = data.get("merged_at")
    if merged_at is not None:
        if not isinstance(merged_at, str):
            raise GuideDataError(f"guide data 'merged_at' must be an ISO-8601 time or null, got {merged_at!r}")
        try:
            merged_at = _iso(_utc(datetime.fromisoformat(merged_at)))
        except ValueError:
            raise GuideDataError(f"guide data 'merged_at' is not an ISO-8601 time: {merged_at!r}") from None

    def text(key: str) -> str | None:
        value = data.get(key)
        return value if isinstance(value, str) and value else None

    try:
        blob = json.dumps(data, ensure_ascii=False)
    except (TypeError, ValueError) as exc:
        raise GuideDataError(f"guide data is not JSON-serialisable: {exc}") from None
    return {
        "repository": repository,
        "number": number,
        "title": title,
        "url": text("url"),
        "author": text("author"),
        "merged_at": merged_at,
        "change_type": text("change_type"),
        "breaking": 1 if data.get("breaking") else 0,
        "importance": importance,
        "reading_level": level,
        "reading_minutes": minutes,
        "lang": text("lang"),
        "summary": text("summary") or "",
        "labels": labels,
        "areas": areas,
        "focus_text": "\n".join(line for line in focus_lines if line),
        "data": blob,
        "stored_at": _iso(datetime.now(UTC)),
        "details": details,
        "descriptions": descriptions,
    }


def _strings(value: Any, key: str) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str) or not isinstance(value, Iterable) or not all(isinstance(v, str) for v in value):
        raise GuideDataError(f"guide data {key!r} must be a list of text, got {value!r}")
    seen: dict[str, str] = {}
    for item in value:
        if item.strip():
            seen.setdefault(item.casefold(), item)
    return list(seen.values())


def _utc(moment: datetime) -> datetime:
    # GitHub times are UTC; a time without an offset is taken to be UTC too.
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def _iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _start(day: date | datetime) -> datetime:
    if isinstance(day, datetime):
        return _utc(day)
    return datetime.combine(day, time(0), tzinfo=UTC)


def _as_bound(value: date | datetime | str | None, name: str) -> date | datetime | None:
    if value is None or isinstance(value, date):
        return value
    try:
        if len(value) == 10:
            return date.fromisoformat(value)
        return datetime.fromisoformat(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a date (YYYY-MM-DD) or ISO-8601 time, got {value!r}") from None
