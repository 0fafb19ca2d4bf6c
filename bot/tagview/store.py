"""The guide store: one row per merged pull request's guide, in SQLite.

It lives in the same database file as the job table. Labels and areas sit in child
tables so grouping by label is an index walk; the full guide JSON is kept verbatim,
so keys this module does not know about are never lost. The shapes it answers with
are in :mod:`bot.tagview.model` (re-exported here), the data checks in
:mod:`bot.tagview.guide_data` and the SQL it shares with the PostgreSQL store in
:mod:`bot.tagview.sql`.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import sqlite3
import threading
from collections.abc import Iterable, Mapping, Sequence
from datetime import date, datetime
from pathlib import Path
from typing import Any

from bot.engine.history.coupling import MergedChange
from bot.tagview.guide_data import as_bound, change_columns, iso, prepare_save, repository_name, utc
from bot.tagview.model import (
    MAX_LIMIT,
    READING_LEVELS,
    VISIBILITIES,
    Brief,
    GuideDataError,
    GuideFilter,
    GuidePage,
    GuideRow,
    GuideStorage,
    LabelCount,
    LabelSection,
    RepositoryInfo,
    SectionPage,
)
from bot.tagview.schema import migrate_tagview, open_connection
from bot.tagview.sql import (
    ROW_COLUMNS, check_page, chosen_cards, filter_sql, guide_row, label_page, like_pattern, split_label,
)

__all__ = [
    "MAX_LIMIT", "READING_LEVELS", "VISIBILITIES", "Brief", "GuideDataError", "GuideFilter", "GuidePage", "GuideRow",
    "GuideStorage", "GuideStore", "LabelCount", "LabelSection", "RepositoryInfo", "SectionPage",
]


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
        change: Any = None,
    ) -> None:
        """Store one guide (``Guide.data``), replacing any earlier guide for the same PR.

        ``visibility`` (``"public"``/``"private"``) updates the repository's; ``None``
        keeps what is stored, and a repository seen for the first time is private.
        ``label_descriptions`` maps label names to their descriptions (from the rules'
        label specs); ``label_details[].description`` in the data is used too.
        ``change`` (a :class:`bot.engine.history.coupling.MergedChange`, ``Guide.change``)
        stores the pull request's changed paths for :meth:`merged_changes`; ``None`` keeps
        those stored before.
        Raises :class:`GuideDataError` for missing ``repository``/``number``/``title``,
        wrongly typed known keys or a ``change`` of another pull request; nothing is written then.
        """
        row, labels, descriptions = prepare_save(guide_data, visibility, label_descriptions)
        files = change_columns(row, change)
        areas = row["areas"]
        with _savepoint(self._conn, "tagview_save") as conn:
            conn.execute(
                "INSERT INTO tagview_repositories (name, visibility) VALUES (?, ?) "
                "ON CONFLICT (name) DO UPDATE SET visibility = COALESCE(?, visibility)",
                (row["repository"], visibility or "private", visibility),
            )
            known = conn.execute(
                "SELECT 1 FROM tagview_guides WHERE repository = ? AND number = ?", (row["repository"], row["number"])
            ).fetchone()
            guide_id = conn.execute(
                """
                INSERT INTO tagview_guides (
                    repository, number, title, url, author, merged_at, change_type, breaking,
                    importance, reading_level, reading_minutes, lang, summary, labels, areas,
                    focus_text, stored_at, fixes_from
                ) VALUES (
                    :repository, :number, :title, :url, :author, :merged_at, :change_type, :breaking,
                    :importance, :reading_level, :reading_minutes, :lang, :summary, :labels_json,
                    :areas_json, :focus_text, :stored_at, :fixes_from
                )
                ON CONFLICT (repository, number) DO UPDATE SET
                    title = excluded.title, url = excluded.url, author = excluded.author,
                    merged_at = excluded.merged_at, change_type = excluded.change_type,
                    breaking = excluded.breaking, importance = excluded.importance,
                    reading_level = excluded.reading_level, reading_minutes = excluded.reading_minutes,
                    lang = excluded.lang, summary = excluded.summary, labels = excluded.labels,
                    areas = excluded.areas, focus_text = excluded.focus_text, stored_at = excluded.stored_at,
                    fixes_from = excluded.fixes_from
                RETURNING id
                """,
                {**row, "labels_json": json.dumps(row["labels"]), "areas_json": json.dumps(areas)},
            ).fetchone()[0]
            if known is None:
                conn.execute("UPDATE tagview_repositories SET guides = guides + 1 WHERE name = ?", (row["repository"],))
            conn.execute(
                "INSERT INTO tagview_guide_data (guide_id, data) VALUES (?, ?) "
                "ON CONFLICT (guide_id) DO UPDATE SET data = excluded.data",
                (guide_id, row["data"]),
            )
            conn.execute("DELETE FROM tagview_guide_cards WHERE guide_id = ?", (guide_id,))
            conn.executemany(
                "INSERT INTO tagview_guide_cards (guide_id, lang, card) VALUES (?, ?, ?)",
                [(guide_id, lang, card) for lang, card in row["cards"].items()],
            )
            old_labels = [r[0] for r in conn.execute("DELETE FROM tagview_labels WHERE guide_id = ? RETURNING label", (guide_id,))]
            conn.executemany(
                "INSERT OR IGNORE INTO tagview_labels (guide_id, repository, label, source, rule, merged_at, number) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                [
                    (guide_id, row["repository"], name, source, rule, row["merged_at"], row["number"])
                    for name, source, rule in labels
                ],
            )
            old_areas = [r[0] for r in conn.execute("DELETE FROM tagview_areas WHERE guide_id = ? RETURNING area", (guide_id,))]
            conn.executemany(
                "INSERT OR IGNORE INTO tagview_areas (guide_id, repository, area) VALUES (?, ?, ?)",
                [(guide_id, row["repository"], area) for area in areas],
            )
            _count(conn, row["repository"], guide_id, old_labels, old_areas)
            conn.executemany(
                "INSERT INTO tagview_label_info (repository, label, description) VALUES (?, ?, ?) "
                "ON CONFLICT (repository, label) DO UPDATE SET description = excluded.description",
                [(row["repository"], name, text) for name, text in descriptions.items()],
            )
            if files is not None:
                conn.execute(
                    "INSERT INTO tagview_guide_files (guide_id, paths, gone, definitions) VALUES (?, ?, ?, ?) "
                    "ON CONFLICT (guide_id) DO UPDATE SET paths = excluded.paths, gone = excluded.gone, "
                    "definitions = excluded.definitions",
                    (guide_id, *files),
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
    def rename(self, old: str, new: str) -> int:
        """Move everything stored under repository ``old`` to ``new``, in one transaction; returns the guides moved.

        For a repository renamed or transferred ("Webhook events and payloads":
        ``repository`` ``renamed``, ``transferred``): guides with their data (its
        ``repository`` set to ``new``), labels, areas, cards, changed paths, the kept
        counts, label descriptions and visibility. Rows ``new`` already has are merged:
        of two guides of one pull request the one stored last is kept (``new``'s when
        stored at the same time), the label descriptions ``new`` has win, and the
        repository is private when either name was. A change of case only renames in
        place. Nothing happens (0) when ``old`` is not stored. Raises
        :class:`GuideDataError` for a name that is not ``owner/repo``.
        """
        repository_name(old), repository_name(new)
        with _savepoint(self._conn, "tagview_rename") as conn:
            # Guides may point at a name whose row comes or goes later in this transaction.
            conn.execute("PRAGMA defer_foreign_keys = ON")
            found = conn.execute("SELECT visibility FROM tagview_repositories WHERE name = ?", (old,)).fetchone()
            if found is None:
                return 0
            same = old.casefold() == new.casefold()
            if not same:
                self._drop(conn, [r[0] for r in conn.execute(_LOSERS, (new, old))])
            moved = conn.execute("SELECT COUNT(*) FROM tagview_guides WHERE repository = ?", (old,)).fetchone()[0]
            conn.execute(
                "UPDATE tagview_guide_data SET data = json_set(data, '$.repository', ?) "
                "WHERE guide_id IN (SELECT id FROM tagview_guides WHERE repository = ?)",
                (new, old),
            )
            kept = conn.execute("SELECT visibility FROM tagview_repositories WHERE name = ?", (new,)).fetchone()
            visibility = "private" if "private" in (found[0], kept[0] if kept else found[0]) else "public"
            conn.execute("DELETE FROM tagview_repositories WHERE name IN (?, ?)", (old, new))
            conn.execute("INSERT INTO tagview_repositories (name, visibility) VALUES (?, ?)", (new, visibility))
            for table in ("tagview_guides", "tagview_labels", "tagview_areas"):
                conn.execute(f"UPDATE {table} SET repository = ? WHERE repository = ?", (new, old))
            if same:
                conn.execute("UPDATE tagview_label_info SET repository = ? WHERE repository = ?", (new, old))
            else:
                conn.execute(
                    "INSERT INTO tagview_label_info (repository, label, description) "
                    "SELECT ?, label, description FROM tagview_label_info WHERE repository = ? "
                    "ON CONFLICT (repository, label) DO NOTHING",
                    (new, old),
                )
                conn.execute("DELETE FROM tagview_label_info WHERE repository = ?", (old,))
            conn.execute("DELETE FROM tagview_counts WHERE repository IN (?, ?)", (old, new))
            for statement in _RECOUNT:
                conn.execute(statement, {"name": new})
            return moved

    def _drop(self, conn: sqlite3.Connection, ids: list[int]) -> None:
        """Delete the guides ``ids`` and their rows, leaving the kept counts to the caller."""
        for guide_id in ids:
            for table in ("tagview_labels", "tagview_areas", "tagview_guide_cards", "tagview_guide_data", "tagview_guide_files"):
                conn.execute(f"DELETE FROM {table} WHERE guide_id = ?", (guide_id,))
            if self._fts:
                conn.execute("DELETE FROM tagview_search WHERE rowid = ?", (guide_id,))
            conn.execute("DELETE FROM tagview_guides WHERE id = ?", (guide_id,))

    @_locked
    def delete(self, repository: str, number: int) -> bool:
        """Forget one guide; returns whether there was one."""
        with _savepoint(self._conn, "tagview_delete") as conn:
            found = conn.execute(
                "SELECT id FROM tagview_guides WHERE repository = ? AND number = ?", (repository, number)
            ).fetchone()
            if found is None:
                return False
            old_labels = [r[0] for r in conn.execute("DELETE FROM tagview_labels WHERE guide_id = ? RETURNING label", (found[0],))]
            old_areas = [r[0] for r in conn.execute("DELETE FROM tagview_areas WHERE guide_id = ? RETURNING area", (found[0],))]
            _count(conn, repository, found[0], old_labels, old_areas)
            conn.execute("UPDATE tagview_repositories SET guides = guides - 1 WHERE name = ?", (repository,))
            for table in ("tagview_guide_cards", "tagview_guide_data", "tagview_guide_files"):
                conn.execute(f"DELETE FROM {table} WHERE guide_id = ?", (found[0],))
            if self._fts:
                conn.execute("DELETE FROM tagview_search WHERE rowid = ?", (found[0],))
            conn.execute("DELETE FROM tagview_guides WHERE id = ?", (found[0],))
            return True

    def analyze(self) -> None:
        """Nothing on SQLite: its planner follows the indexes and query shapes this store uses,
        without statistics (see :meth:`bot.tagview.pgstore.PgGuideStore.analyze`)."""

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
    def cards(self, repository: str, numbers: Iterable[int], lang: str) -> dict[int, dict[str, Any]]:
        """What a listed entry shows of several guides, in ``lang``: ``{number: card}``; unknown numbers are left out.

        A card (:func:`bot.tagview.guide_data.guide_cards`) holds a guide's summary, readers,
        focus points and breaking changes in ``lang`` when the guide was stored in it, else
        in the guide's own language (``card["lang"]`` says which), and its reviews and area
        names. One small row per guide is read, never its Markdown; a guide stored before
        cards existed is read in full and shown as stored. A fix's card says under
        ``fixes_code_from_stored`` whether the guide of the pull request whose code it fixes
        (``fixes_code_from``) is stored, so that its entry links there only then.
        """
        wanted = sorted({int(n) for n in numbers})
        found: list[tuple[int, str | None, str | None, int]] = []
        for start in range(0, len(wanted), 500):
            chunk = wanted[start:start + 500]
            marks = ", ".join("?" * len(chunk))
            found += self._conn.execute(
                # A guide without a card still gives a row (its card NULL), for whether its origin is stored.
                "SELECT g.number, c.lang, c.card, g.fixes_from IS NOT NULL AND EXISTS ("
                " SELECT 1 FROM tagview_guides o WHERE o.repository = g.repository AND o.number = g.fixes_from) "
                "FROM tagview_guides g LEFT JOIN tagview_guide_cards c "
                "ON c.guide_id = g.id AND (c.lang = ? OR c.lang = COALESCE(g.lang, '')) "
                f"WHERE g.repository = ? AND g.number IN ({marks})",
                (lang, repository, *chunk),
            ).fetchall()
        return chosen_cards(found, wanted, lang, lambda missing: self.get_many(repository, missing))

    @_locked
    def rows(self, repository: str, numbers: Iterable[int]) -> dict[int, GuideRow]:
        """The listed rows of several pull requests at once: ``{number: row}``; unknown numbers are left out."""
        wanted = sorted({int(n) for n in numbers})
        found: dict[int, GuideRow] = {}
        for start in range(0, len(wanted), 500):
            chunk = wanted[start:start + 500]
            marks = ", ".join("?" * len(chunk))
            for record in self._conn.execute(
                f"SELECT {ROW_COLUMNS} FROM tagview_guides g WHERE g.repository = ? AND g.number IN ({marks})",
                (repository, *chunk),
            ):
                row = _row(record)
                found[row.number] = row
        return found

    @_locked
    def merged_changes(self, repository: str, *, before: str | None = None, limit: int = 1000) -> list[MergedChange]:
        """The changed paths of the repository's newest ``limit`` stored guides merged before
        ``before`` (ISO-8601; ``None``: all), oldest first, as
        :class:`bot.engine.history.coupling.MergedChange` (``merged_at`` and ``author`` the
        guide's, ``definitions`` as stored: empty for guides stored before they were). Guides stored without their paths are left out. One statement on the
        merge-time index. Raises :class:`ValueError` for a bad ``before``.
        """
        where, params = "g.repository = ?", [repository]
        if before is not None:
            where += " AND g.merged_at < ?"
            params.append(iso(utc(datetime.fromisoformat(before.replace("Z", "+00:00")))))
        found = self._conn.execute(
            "SELECT g.number, g.merged_at, g.author, f.paths, f.gone, f.definitions FROM tagview_guides g "
            f"JOIN tagview_guide_files f ON f.guide_id = g.id WHERE {where} "
            "ORDER BY g.merged_at DESC, g.number DESC LIMIT ?",
            (*params, max(0, int(limit))),
        ).fetchall()
        return [MergedChange(number, tuple(json.loads(paths)), tuple(json.loads(gone)), merged or "", author or "",
                             tuple(json.loads(definitions)))
                for number, merged, author, paths, gone, definitions in reversed(found)]  # fmt: skip

    @_locked
    def briefs(
        self, repository: str, *, label: str | None = None, since: date | datetime | str | None = None,
        until: date | datetime | str | None = None,
    ) -> list[Brief]:
        """A :class:`Brief` of every guide of ``repository`` matching ``label``, ``since`` and ``until``, in no order.

        Filters as for :meth:`query`; a year of a busy repository (3,000 guides) is one
        statement and no JSON decoding. Raises :class:`ValueError` for a bad bound.
        """
        flt = GuideFilter(label=label, since=as_bound(since, "since"), until=as_bound(until, "until"))
        where, params = self._where(repository, flt)
        found = self._conn.execute(
            "SELECT g.number, g.merged_at, g.reading_level, g.importance, g.breaking, "
            f"COALESCE(json_extract(g.areas, '$[0]'), ''), g.change_type, g.fixes_from FROM tagview_guides g WHERE {where}",
            params,
        ).fetchall()
        return [Brief(n, merged, level, importance, bool(breaking), area, kind, origin)
                for n, merged, level, importance, breaking, area, kind, origin in found]  # fmt: skip

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
        rows = self._conn.execute("SELECT name, visibility, guides FROM tagview_repositories ORDER BY name").fetchall()
        return [RepositoryInfo(name, vis, count) for name, vis, count in map(tuple, rows)]

    @_locked
    def canonical_name(self, repository: str) -> str | None:
        """The repository's name as stored (names match case-insensitively), or ``None``."""
        found = self._conn.execute("SELECT name FROM tagview_repositories WHERE name = ?", (repository,)).fetchone()
        return found[0] if found else None

    @_locked
    def labels(self, repository: str, *, limit: int | None = None, include: str | None = None) -> list[LabelCount]:
        """Labels on the repository's stored guides, with counts and descriptions, by name.

        With ``limit``, the ``limit`` most used only (most guides first, then by name), and the
        label ``include`` names (case-insensitively) when it is on a stored guide, each read
        by a bounded query (``ORDER BY guides DESC LIMIT``)."""
        select = """
            SELECT c.name, c.guides, COALESCE(i.description, '')
            FROM tagview_counts c
            LEFT JOIN tagview_label_info i ON i.repository = c.repository AND i.label = c.name
            WHERE c.repository = ? AND c.kind = 'label' AND c.guides > 0
            """
        if limit is None:
            rows = self._conn.execute(select, (repository,)).fetchall()
        else:
            rows = self._conn.execute(select + " ORDER BY c.guides DESC, c.name LIMIT ?", (repository, max(0, limit))).fetchall()
            if include:
                rows += self._conn.execute(select + " AND c.name = ?", (repository, include)).fetchall()
        found = {row[0].casefold(): LabelCount(*tuple(row)) for row in rows}
        return sorted(found.values(), key=lambda item: item.name.casefold())

    @_locked
    def label_count(self, repository: str) -> int:
        """How many labels the repository's stored guides carry."""
        found = self._conn.execute(
            "SELECT COUNT(*) FROM tagview_counts WHERE repository = ? AND kind = 'label' AND guides > 0", (repository,)
        ).fetchone()
        return int(found[0])

    @_locked
    def areas(self, repository: str, *, limit: int | None = None, include: str | None = None) -> list[tuple[str, int]]:
        """Areas on the repository's stored guides as ``(area, count)``, by name; ``limit`` and
        ``include`` as for :meth:`labels`."""
        select = "SELECT name, guides FROM tagview_counts WHERE repository = ? AND kind = 'area' AND guides > 0"
        if limit is None:
            rows = self._conn.execute(select, (repository,)).fetchall()
        else:
            rows = self._conn.execute(select + " ORDER BY guides DESC, name LIMIT ?", (repository, max(0, limit))).fetchall()
            if include:
                rows += self._conn.execute(select + " AND name = ?", (repository, include)).fetchall()
        found = {row[0].casefold(): tuple(row) for row in rows}
        return sorted(found.values(), key=lambda item: item[0].casefold())

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
            since=as_bound(since, "since"), until=as_bound(until, "until"), search=search,
        )
        where, params = self._where(repository, flt)
        total = self._counted(repository, flt)
        if total is None:
            total = self._conn.execute(f"SELECT COUNT(*) FROM tagview_guides g WHERE {where}", params).fetchone()[0]
        rows = self._conn.execute(
            f"SELECT {ROW_COLUMNS} FROM tagview_guides g WHERE {where} "
            "ORDER BY g.merged_at DESC, g.number DESC LIMIT ? OFFSET ?",
            (*params, limit, offset),
        ).fetchall()
        return GuidePage(tuple(_row(r) for r in rows), total, limit, offset)

    def sections(self, repository: str, flt: GuideFilter | None = None, *, per_label: int = 10) -> list[LabelSection]:
        """Every label (only ``flt.label`` when set) with its matching guides' count and newest ``per_label`` rows.

        Labels without a matching guide are left out; sections are ordered by label name.
        Raises :class:`ValueError` for a bad filter value.
        """
        return self.section_page(repository, flt, per_label=per_label).sections

    @_locked
    def section_page(
        self, repository: str, flt: GuideFilter | None = None, *, per_label: int = 10, limit: int | None = None, offset: int = 0,
    ) -> SectionPage:
        """One page of :meth:`sections`: the labels ranked ``offset + 1`` to ``offset + limit`` by their
        matching guides (most first, then by name; ``limit=None``: all), ordered by name, and how
        many labels match in all. Rows are read for the page's labels only. ``ValueError`` for a
        bad filter value, ``limit`` < 1 or ``offset`` < 0.
        """
        label, narrowed = split_label(flt, per_label, limit, offset)
        window = " LIMIT ? OFFSET ?" if limit is not None else ""
        window_params = (limit, offset) if limit is not None else ()
        label_sql = " AND l.label = ?" if label else ""
        label_params = (label,) if label else ()
        where, params = self._where(repository, narrowed)
        descriptions = self._conn.execute(
            "SELECT label, description FROM tagview_label_info WHERE repository = ?", (repository,)
        ).fetchall()
        if narrowed.active:
            # Count each label's matching guides, keep the page's labels, then rank their rows
            # and read full rows only for the winners. "IN (subquery)" is evaluated once into
            # a lookup table, so the plan stays one covering-index scan however selective the
            # filter is.
            found = self._conn.execute(
                f"""
                WITH matching AS (
                    SELECT l.label, l.guide_id, l.merged_at, l.number FROM tagview_labels l
                    WHERE l.repository = ?{label_sql} AND l.guide_id IN (SELECT g.id FROM tagview_guides g WHERE {where})
                ), chosen AS (
                    SELECT label, total, COUNT(*) OVER () AS labels
                    FROM (SELECT label, COUNT(*) AS total FROM matching GROUP BY label)
                    ORDER BY total DESC, label{window}
                ), ranked AS (
                    SELECT m.label, m.guide_id, c.total, c.labels,
                           ROW_NUMBER() OVER (PARTITION BY m.label ORDER BY m.merged_at DESC, m.number DESC) AS position
                    FROM matching m JOIN chosen c ON c.label = m.label
                )
                SELECT r.label, r.total, r.labels, {ROW_COLUMNS}
                FROM ranked r JOIN tagview_guides g ON g.id = r.guide_id
                WHERE r.position <= ? ORDER BY r.label, r.position
                """,
                (repository, *label_params, *params, *window_params, per_label),
            ).fetchall()
        else:
            # Unfiltered: counts are the kept ones (tagview_counts, one small row per label,
            # the page's cut here), rows from one short index walk per label of the page
            # (newest first, stopping after per_label).
            counts = self._conn.execute(
                "SELECT c.name, c.guides FROM tagview_counts c WHERE c.repository = ? AND c.kind = 'label' "
                f"AND c.guides > 0{' AND c.name = ?' if label else ''} ORDER BY c.guides DESC, c.name",
                (repository, *label_params),
            ).fetchall()
            total = len(counts)
            counts = [(name, count, total) for name, count in counts[offset : None if limit is None else offset + limit]]
            walk = (
                f"SELECT {ROW_COLUMNS} FROM tagview_labels l JOIN tagview_guides g ON g.id = l.guide_id "
                "WHERE l.repository = ? AND l.label = ? ORDER BY l.merged_at DESC, l.number DESC LIMIT ?"
            )
            found = [
                (name, count, labels, *row)
                for name, count, labels in counts
                for row in self._conn.execute(walk, (repository, name, per_label))
            ]
        return label_page(found, descriptions, _row, offset)

    def _counted(self, repository: str, flt: GuideFilter) -> int | None:
        """How many guides match ``flt`` when the kept counts say it (no filter, or a label alone), else ``None``."""
        if flt.label and not dataclasses.replace(flt, label=None).active:
            found = self._conn.execute(
                "SELECT guides FROM tagview_counts WHERE repository = ? AND kind = 'label' AND name = ?", (repository, flt.label)
            ).fetchone()
        elif not flt.active:
            found = self._conn.execute("SELECT guides FROM tagview_repositories WHERE name = ?", (repository,)).fetchone()
        else:
            return None
        return max(0, found[0]) if found else 0

    def _where(self, repository: str, flt: GuideFilter) -> tuple[str, list[Any]]:
        return filter_sql(repository, flt, mark="?", moment=iso, word=self._word)

    def _word(self, word: str) -> tuple[str, list[Any]]:
        if self._fts and len(word) >= 3:
            # The trigram index finds substrings of 3+ characters in any case, like LIKE below.
            return "g.id IN (SELECT rowid FROM tagview_search WHERE tagview_search MATCH ?)", ['"' + word.replace('"', '""') + '"']
        pattern = like_pattern(word)
        return "(g.title LIKE ? ESCAPE '\\' OR g.focus_text LIKE ? ESCAPE '\\')", [pattern, pattern]



# Of two guides of one pull request under the new name and the old (? = new, old), the one to
# drop: the one stored first, the old name's when both were stored at the same time.
_LOSERS = """
SELECT CASE WHEN o.stored_at > n.stored_at THEN n.id ELSE o.id END
FROM tagview_guides o JOIN tagview_guides n ON n.repository = ? AND n.number = o.number
WHERE o.repository = ?
"""
# The kept counts of one repository (:name) counted again from its rows.
_RECOUNT = (
    "INSERT INTO tagview_counts (repository, kind, name, guides) "
    "SELECT :name, 'label', label, COUNT(*) FROM tagview_labels WHERE repository = :name GROUP BY label",
    "INSERT INTO tagview_counts (repository, kind, name, guides) "
    "SELECT :name, 'area', area, COUNT(*) FROM tagview_areas WHERE repository = :name GROUP BY area",
    "UPDATE tagview_repositories SET guides = (SELECT COUNT(*) FROM tagview_guides WHERE repository = :name) WHERE name = :name",
)


def _count(conn: sqlite3.Connection, repository: str, guide_id: int, old_labels: list[str], old_areas: list[str]) -> None:
    """Move the kept counts from ``old_labels``/``old_areas`` (the guide's rows just deleted) to its rows now."""
    for kind, table, column, old in (("label", "tagview_labels", "label", old_labels), ("area", "tagview_areas", "area", old_areas)):
        # One statement per kind: each name's net change (a label kept by a refresh moves by 0).
        conn.execute(
            f"""
            INSERT INTO tagview_counts (repository, kind, name, guides)
            SELECT ?, ?, name, SUM(change) FROM (
                SELECT {column} AS name, 1 AS change FROM {table} WHERE guide_id = ?
                UNION ALL SELECT value, -1 FROM json_each(?)
            ) WHERE true GROUP BY name COLLATE NOCASE HAVING SUM(change) <> 0
            ON CONFLICT (repository, kind, name) DO UPDATE SET guides = guides + excluded.guides
            """,
            (repository, kind, guide_id, json.dumps(old)),
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

