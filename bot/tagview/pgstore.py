"""The guide store on PostgreSQL: the tag view shared by several prguide replicas.

Same interface and answers as :class:`bot.tagview.store.GuideStore` (see
:class:`bot.tagview.store.GuideStorage`); the tables are in :mod:`bot.tagview.pg_schema`,
migrated with the other components by :func:`bot.app.pg.migrate`. Every call borrows
one connection from the process's pool (:class:`bot.app.pg.Database`) for one
transaction, so a store may be shared by threads. Calls block for a round trip or two
(longer while the pool has no free connection): :attr:`PgGuideStore.blocking` tells the
server to make them from a worker thread, never on the event loop.

Search: every word must occur in the title or in the focus text, any case --
``ILIKE '%word%'`` over ``title || ' ' || focus_text``, which a ``pg_trgm`` GIN index
answers for words of three characters or more (SQLite answers the same with its FTS5
trigram index). Words never contain spaces, so the joined text matches a word exactly
when one of the two fields does.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Mapping
from datetime import date, datetime
from typing import Any

from bot.app import pg
from bot.engine.history.coupling import MergedChange
from bot.tagview import pg_schema
from bot.tagview.guide_data import as_bound, change_columns, iso, prepare_save, repository_name, utc
from bot.tagview.model import (
    VISIBILITIES,
    Brief,
    GuideFilter,
    GuidePage,
    GuideRow,
    LabelCount,
    LabelSection,
    RepositoryInfo,
    SectionPage,
)
from bot.tagview.sql import (
    ROW_COLUMNS, check_page, chosen_cards, filter_sql, guide_row, label_page, like_pattern, split_label,
)

pg.register_migrations(pg_schema.COMPONENT, pg_schema.MIGRATIONS)

# Of two guides of one pull request under the new name and the old (new, old), the one to drop:
# the one stored first, the old name's when both were stored at the same time.
_LOSERS = """
SELECT CASE WHEN o.stored_at > n.stored_at THEN n.id ELSE o.id END
FROM tagview_guides o JOIN tagview_guides n ON n.repository = %s AND n.number = o.number
WHERE o.repository = %s
"""
# The kept counts of one repository (name) counted again from its rows.
_RECOUNT = (
    "INSERT INTO tagview_counts (repository, kind, name, guides) "
    "SELECT %(name)s, 'label', label, COUNT(*) FROM tagview_labels WHERE repository = %(name)s GROUP BY label",
    "INSERT INTO tagview_counts (repository, kind, name, guides) "
    "SELECT %(name)s, 'area', area, COUNT(*) FROM tagview_areas WHERE repository = %(name)s GROUP BY area",
    "UPDATE tagview_repositories SET guides = (SELECT COUNT(*) FROM tagview_guides WHERE repository = %(name)s) "
    "WHERE name = %(name)s",
)

# A guide's label or area rows deleted, their names' kept counts lowered (guide id, repository, kind).
_UNCOUNT = """
WITH gone AS (DELETE FROM {table} WHERE guide_id = %s RETURNING {column})
INSERT INTO tagview_counts (repository, kind, name, guides)
SELECT %s, %s, {column}, -COUNT(*) FROM gone GROUP BY {column}
ON CONFLICT (repository, kind, name) DO UPDATE SET guides = tagview_counts.guides + excluded.guides
"""
# A guide's label or area rows counted into the kept counts (repository, kind, guide id).
_RECOUNT_GUIDE = """
INSERT INTO tagview_counts (repository, kind, name, guides)
SELECT %s, %s, {column}, COUNT(*) FROM {table} WHERE guide_id = %s GROUP BY {column}
ON CONFLICT (repository, kind, name) DO UPDATE SET guides = tagview_counts.guides + excluded.guides
"""

# The newest merge first, guides without a merge time last (as SQLite orders NULLs in DESC).
_NEWEST = "g.merged_at DESC NULLS LAST, g.number DESC"
_SEARCHED = "(g.title || ' ' || g.focus_text)"


class PgGuideStore:
    """Stored guides of merged pull requests in PostgreSQL, for the tag view.

    ``database``: an open :class:`bot.app.pg.Database` whose schema has the
    ``tagview`` migrations applied (:func:`bot.app.pg.connect` with
    ``migrate_components`` including ``"tagview"``, or ``prguide db migrate``).
    ``owned``: close the database in :meth:`close`. Errors are ``psycopg.Error``
    (``psycopg_pool.PoolTimeout`` when no connection frees up in time) besides the
    ``GuideDataError``/``ValueError`` the SQLite store raises for the same input.
    """

    #: Calls wait on the network: the server makes them off the event loop (:mod:`bot.app.offload`).
    blocking = True

    def __init__(self, database: pg.Database | None, *, owned: bool = False):
        self._db = database
        self._owned = owned
        self._trigram: bool | None = None

    @property
    def bound(self) -> bool:
        """Whether the store has its database (see :meth:`bind`)."""
        return self._db is not None

    def bind(self, database: pg.Database) -> None:
        """Use ``database`` from now on: a store made with ``None`` (the server's, built
        before its start-up opens the one pool each replica has) gets it here."""
        self._db = database

    @classmethod
    def open(cls, url: str, *, schema: str | None = None, max_size: int = 4) -> PgGuideStore:
        """Connect to ``url`` (migrating the tag view's tables) with a pool of its own, closed by :meth:`close`.

        For the command line (``prguide view``, ``db copy``); the server shares its pool.
        Raises ``ValueError`` for a bad URL, ``psycopg.Error`` when unreachable and
        :class:`bot.app.db.DatabaseError` for a schema newer than this code.
        """
        database = pg.connect(url, schema=schema, min_size=1, max_size=max_size, migrate_components=[pg_schema.COMPONENT])
        return cls(database, owned=True)

    @property
    def database(self) -> pg.Database:
        """The pool this store borrows connections from; ``RuntimeError`` before :meth:`bind`."""
        if self._db is None:
            raise RuntimeError("the tag view's PostgreSQL store has no database yet (the server binds it at start)")
        return self._db

    @property
    def full_text_search(self) -> bool:
        """Whether search is served by the ``pg_trgm`` index (else ``ILIKE`` scans)."""
        if self._trigram is None:
            with self._read() as conn:
                found = conn.execute("SELECT to_regclass('tagview_guides_search')").fetchone()
            self._trigram = found[0] is not None
        return self._trigram

    def close(self) -> None:
        """Close the pool if this store opened it."""
        if self._owned and self._db is not None:
            self._db.close()

    def __enter__(self) -> PgGuideStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _connection(self):  # type: ignore[no-untyped-def]
        return self.database.connection()

    def _read(self):  # type: ignore[no-untyped-def]
        # Reads need no transaction: each statement sees the committed rows, as it would
        # in one (READ COMMITTED), and skips the BEGIN and COMMIT round trips.
        return self.database.autocommit()

    def _value(self, query: str, params: tuple[Any, ...]) -> Any:
        """The first column of the first row ``query`` returns, or ``None``."""
        with self._read() as conn:
            found = conn.execute(query, params).fetchone()
        return found[0] if found else None

    # -- writing ---------------------------------------------------------------------

    def save(
        self,
        guide_data: Mapping[str, Any],
        *,
        visibility: str | None = None,
        label_descriptions: Mapping[str, str] | None = None,
        change: Any = None,
    ) -> None:
        """Store one guide, replacing any earlier one for the same PR, in one transaction.

        Same arguments, defaults and errors as :meth:`bot.tagview.store.GuideStore.save`.
        """
        # PostgreSQL's text (and jsonb) cannot hold NUL, which a pull request's title or
        # body may carry: the save failed on every attempt and the guide was never stored.
        guide_data, label_descriptions = _without_nul(guide_data), _without_nul(label_descriptions)
        row, labels, descriptions = prepare_save(guide_data, visibility, label_descriptions)
        files = change_columns(row, change)
        merged_at = _moment(row["merged_at"])
        repository = row["repository"]
        # The whole transaction goes as one pipeline: two round trips (the guide's id, then
        # the rest with the COMMIT) where one per statement took sixteen.
        with self.database.autocommit() as conn, conn.pipeline(), conn.transaction():
            # The repository's row first: every save and delete locks it before the counts.
            conn.execute(
                "INSERT INTO tagview_repositories (name, visibility) VALUES (%s, %s) "
                "ON CONFLICT (name) DO UPDATE SET visibility = COALESCE(%s, tagview_repositories.visibility)",
                (repository, visibility or "private", visibility),
            )
            guide_id = conn.execute(
                """
                WITH saved AS (
                    INSERT INTO tagview_guides (
                        repository, number, title, url, author, merged_at, change_type, breaking,
                        importance, reading_level, reading_minutes, lang, summary, labels, areas,
                        focus_text, stored_at, fixes_from
                    ) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s::jsonb, %s::jsonb, %s, now(), %s)
                    ON CONFLICT (repository, number) DO UPDATE SET
                        title = excluded.title, url = excluded.url, author = excluded.author,
                        merged_at = excluded.merged_at, change_type = excluded.change_type,
                        breaking = excluded.breaking, importance = excluded.importance,
                        reading_level = excluded.reading_level, reading_minutes = excluded.reading_minutes,
                        lang = excluded.lang, summary = excluded.summary, labels = excluded.labels,
                        areas = excluded.areas, focus_text = excluded.focus_text, stored_at = excluded.stored_at,
                        fixes_from = excluded.fixes_from
                    RETURNING id, (xmax = 0) AS inserted
                ), counted AS (
                    UPDATE tagview_repositories SET guides = guides + 1
                    WHERE name = %s AND EXISTS (SELECT 1 FROM saved WHERE inserted)
                )
                SELECT id FROM saved
                """,
                (
                    repository, row["number"], row["title"], row["url"], row["author"], merged_at,
                    row["change_type"], bool(row["breaking"]), row["importance"], row["reading_level"],
                    row["reading_minutes"], row["lang"], row["summary"], json.dumps(row["labels"]),
                    json.dumps(row["areas"]), row["focus_text"], row["fixes_from"], repository,
                ),
            ).fetchone()[0]
            conn.execute(
                "INSERT INTO tagview_guide_data (guide_id, data) VALUES (%s, %s::json) "
                "ON CONFLICT (guide_id) DO UPDATE SET data = excluded.data",
                (guide_id, row["data"]),
            )
            conn.execute("DELETE FROM tagview_guide_cards WHERE guide_id = %s", (guide_id,))
            with conn.cursor() as cur:
                cur.executemany(
                    "INSERT INTO tagview_guide_cards (guide_id, lang, card) VALUES (%s, %s, %s::json)",
                    [(guide_id, lang, card) for lang, card in row["cards"].items()],
                )
                if files is not None:
                    cur.execute(
                        "INSERT INTO tagview_guide_files (guide_id, paths, gone, definitions) VALUES (%s, %s::json, %s::json, %s::json) "
                        "ON CONFLICT (guide_id) DO UPDATE SET paths = excluded.paths, gone = excluded.gone, "
                        "definitions = excluded.definitions",
                        (guide_id, *files),
                    )
                # The kept counts: the old rows' names counted down as they are deleted, the new
                # rows' counted up once inserted (a label kept by a refresh goes down and up again).
                for kind, table, column in (("label", "tagview_labels", "label"), ("area", "tagview_areas", "area")):
                    cur.execute(_UNCOUNT.format(table=table, column=column), (guide_id, repository, kind))
                    if kind == "label":
                        self._insert_labels(cur, guide_id, row, labels, merged_at)
                    else:
                        cur.executemany(
                            "INSERT INTO tagview_areas (guide_id, repository, area) VALUES (%s, %s, %s) ON CONFLICT DO NOTHING",
                            [(guide_id, repository, area) for area in row["areas"]],
                        )
                    cur.execute(_RECOUNT_GUIDE.format(table=table, column=column), (repository, kind, guide_id))
                cur.executemany(
                    "INSERT INTO tagview_label_info (repository, label, description) VALUES (%s, %s, %s) "
                    "ON CONFLICT (repository, label) DO UPDATE SET description = excluded.description",
                    [(repository, name, text) for name, text in descriptions.items()],
                )

    @staticmethod
    def _insert_labels(cur: Any, guide_id: int, row: dict[str, Any], labels: list, merged_at: datetime | None) -> None:
        cur.executemany(
            "INSERT INTO tagview_labels (guide_id, repository, label, source, rule, merged_at, number) "
            "VALUES (%s, %s, %s, %s, %s, %s, %s) ON CONFLICT DO NOTHING",
            [(guide_id, row["repository"], name, source, rule, merged_at, row["number"]) for name, source, rule in labels],
        )

    def set_visibility(self, repository: str, visibility: str) -> None:
        """Mark a repository ``"public"`` or ``"private"``; :class:`ValueError` for another value."""
        if visibility not in VISIBILITIES:
            raise ValueError(f"visibility must be 'public' or 'private', got {visibility!r}")
        with self._connection() as conn:
            conn.execute(
                "INSERT INTO tagview_repositories (name, visibility) VALUES (%s, %s) "
                "ON CONFLICT (name) DO UPDATE SET visibility = excluded.visibility",
                (repository, visibility),
            )

    def rename(self, old: str, new: str) -> int:
        """Move everything stored under repository ``old`` to ``new``, in one transaction; returns the guides moved.

        Same merge rules and errors as :meth:`bot.tagview.store.GuideStore.rename`. The old
        name's row is locked first, as every save of it locks it, so no save of the
        repository's counts runs in between.
        """
        repository_name(old), repository_name(new)
        with self._connection() as conn, conn.cursor() as cur:
            cur.execute("SELECT visibility FROM tagview_repositories WHERE name = %s FOR UPDATE", (old,))
            found = cur.fetchone()
            if found is None:
                return 0
            same = old.casefold() == new.casefold()
            if not same:
                cur.execute(_LOSERS, (new, old))
                losers = [r[0] for r in cur.fetchall()]
                if losers:  # their labels, areas, data, cards and paths go with them (ON DELETE CASCADE)
                    cur.execute("DELETE FROM tagview_guides WHERE id = ANY(%s)", (losers,))
            cur.execute(
                "SELECT d.guide_id, d.data FROM tagview_guide_data d JOIN tagview_guides g ON g.id = d.guide_id "
                "WHERE g.repository = %s",
                (old,),
            )
            # Rewritten here, not with jsonb_set: the guide is kept as it came, keys in its order.
            data = [(json.dumps({**blob, "repository": new}, ensure_ascii=False), guide_id)
                    for guide_id, blob in cur.fetchall() if isinstance(blob, dict)]  # fmt: skip
            cur.executemany("UPDATE tagview_guide_data SET data = %s::json WHERE guide_id = %s", data)
            cur.execute("SELECT visibility FROM tagview_repositories WHERE name = %s FOR UPDATE", (new,))
            kept = cur.fetchone()
            visibility = "private" if "private" in (found[0], kept[0] if kept else found[0]) else "public"
            cur.execute(
                "INSERT INTO tagview_repositories (name, visibility) VALUES (%s, %s) "
                "ON CONFLICT (name) DO UPDATE SET name = excluded.name, visibility = excluded.visibility",
                (new, visibility),
            )
            cur.execute("UPDATE tagview_guides SET repository = %s WHERE repository = %s", (new, old))
            moved = cur.rowcount
            if not same:
                cur.execute("DELETE FROM tagview_repositories WHERE name = %s", (old,))
            for table in ("tagview_labels", "tagview_areas"):
                cur.execute(f"UPDATE {table} SET repository = %s WHERE repository = %s", (new, old))
            if same:
                cur.execute("UPDATE tagview_label_info SET repository = %s WHERE repository = %s", (new, old))
            else:
                cur.execute(
                    "INSERT INTO tagview_label_info (repository, label, description) "
                    "SELECT %s, label, description FROM tagview_label_info WHERE repository = %s "
                    "ON CONFLICT (repository, label) DO NOTHING",
                    (new, old),
                )
                cur.execute("DELETE FROM tagview_label_info WHERE repository = %s", (old,))
            cur.execute("DELETE FROM tagview_counts WHERE repository = %s OR repository = %s", (old, new))
            for statement in _RECOUNT:
                cur.execute(statement, {"name": new})
            return moved

    def delete(self, repository: str, number: int) -> bool:
        """Forget one guide (its labels, areas and data go with it); returns whether there was one."""
        with self._connection() as conn, conn.cursor() as cur:
            # The repository's row first, as every save locks it first: count changes of one
            # repository take turns, so two of them never wait on each other's count rows.
            cur.execute(
                "UPDATE tagview_repositories SET guides = guides - 1 WHERE name = %s "
                "AND EXISTS (SELECT 1 FROM tagview_guides WHERE repository = %s AND number = %s)",
                (repository, repository, number),
            )
            cur.execute("SELECT id FROM tagview_guides WHERE repository = %s AND number = %s", (repository, number))
            found = cur.fetchone()
            if found is None:
                return False
            cur.execute("DELETE FROM tagview_labels WHERE guide_id = %s RETURNING label", (found[0],))
            old_labels = [r[0] for r in cur.fetchall()]
            cur.execute("DELETE FROM tagview_areas WHERE guide_id = %s RETURNING area", (found[0],))
            old_areas = [r[0] for r in cur.fetchall()]
            _count(cur, repository, found[0], old_labels, old_areas)
            cur.execute("DELETE FROM tagview_guides WHERE id = %s", (found[0],))
            return True

    def analyze(self) -> None:
        """Refresh PostgreSQL's statistics of the tag view's tables (``ANALYZE``).

        The planner picks its plans from them: after many guides arrive at once (``db copy``,
        a large backfill) and before autovacuum gets to it, stale statistics can turn a
        filtered page's index walk into a scan of every label row. Takes a few
        milliseconds per thousand guides.
        """
        with self._connection() as conn:
            conn.execute(
                "ANALYZE tagview_guides, tagview_labels, tagview_areas, tagview_counts, tagview_repositories,"
                " tagview_guide_cards, tagview_guide_files"
            )

    # -- reading ---------------------------------------------------------------------

    def get(self, repository: str, number: int) -> dict[str, Any] | None:
        """The stored guide data (as saved, extra keys included), or ``None``."""
        found = self._value(
            "SELECT d.data::text FROM tagview_guides g JOIN tagview_guide_data d ON d.guide_id = g.id "
            "WHERE g.repository = %s AND g.number = %s",
            (repository, number),
        )
        return json.loads(found) if found is not None else None

    def get_many(self, repository: str, numbers: Iterable[int]) -> dict[int, dict[str, Any]]:
        """Stored guide data of several pull requests at once: ``{number: data}``; unknown numbers are left out.

        One statement: the numbers travel as one array parameter (``= ANY(%s)``).
        """
        wanted = sorted({int(n) for n in numbers})
        if not wanted:
            return {}
        with self._read() as conn:
            rows = conn.execute(
                "SELECT g.number, d.data::text FROM tagview_guides g JOIN tagview_guide_data d ON d.guide_id = g.id "
                "WHERE g.repository = %s AND g.number = ANY(%s)",
                (repository, wanted),
            ).fetchall()
        return {number: json.loads(blob) for number, blob in rows}

    def cards(self, repository: str, numbers: Iterable[int], lang: str) -> dict[int, dict[str, Any]]:
        """What a listed entry shows of several guides, in ``lang`` (see :meth:`bot.tagview.store.GuideStore.cards`).

        One statement (the numbers as one array parameter), plus one for guides stored before cards
        existed; it also says whether each fix's origin is stored (``fixes_code_from_stored``).
        """
        wanted = sorted({int(n) for n in numbers})
        if not wanted:
            return {}
        with self._read() as conn:
            # Each guide's cards by their primary key (guide_id, lang), at most two: the cost
            # follows the page's rows. (A join let the planner scan every card of the table
            # into a hash, 1.3 ms of the server's CPU at 10,000 guides against 0.4 at 1,000;
            # the LIMIT keeps the lateral subquery from being flattened into that join.)
            found = conn.execute(
                # (LEFT JOIN: a guide without a card still gives a row, for whether its origin
                # is stored: one lookup of the (repository, number) key per row, a lateral
                # join too, as an EXISTS was planned as a hash of every guide of the table.)
                "SELECT g.number, c.lang, c.card, o.stored IS NOT NULL "
                "FROM tagview_guides g LEFT JOIN LATERAL ("
                " SELECT lang, card FROM tagview_guide_cards WHERE guide_id = g.id"
                " AND (lang = %s OR lang = COALESCE(g.lang, '')) LIMIT 2) c ON true "
                "LEFT JOIN LATERAL ("
                " SELECT true AS stored FROM tagview_guides WHERE repository = g.repository AND number = g.fixes_from LIMIT 1"
                ") o ON true "
                "WHERE g.repository = %s AND g.number = ANY(%s)",
                (lang, repository, wanted),
            ).fetchall()
        return chosen_cards(found, wanted, lang, lambda missing: self.get_many(repository, missing))

    def rows(self, repository: str, numbers: Iterable[int]) -> dict[int, GuideRow]:
        """The listed rows of several pull requests at once (see :meth:`bot.tagview.store.GuideStore.rows`)."""
        wanted = sorted({int(n) for n in numbers})
        if not wanted:
            return {}
        with self._read() as conn:
            found = conn.execute(
                f"SELECT {ROW_COLUMNS} FROM tagview_guides g WHERE g.repository = %s AND g.number = ANY(%s)",
                (repository, wanted),
            ).fetchall()
        rows = [_row(r) for r in found]
        return {row.number: row for row in rows}

    def merged_changes(self, repository: str, *, before: str | None = None, limit: int = 1000) -> list[MergedChange]:
        """The changed paths of the repository's newest stored guides merged before ``before``,
        oldest first (see :meth:`bot.tagview.store.GuideStore.merged_changes`)."""
        where, params = "g.repository = %s", [repository]
        if before is not None:
            where += " AND g.merged_at < %s"
            params.append(utc(datetime.fromisoformat(before.replace("Z", "+00:00"))))
        with self._read() as conn:
            found = conn.execute(
                "SELECT g.number, g.merged_at, g.author, f.paths, f.gone, f.definitions FROM tagview_guides g "
                f"JOIN tagview_guide_files f ON f.guide_id = g.id WHERE {where} "
                "ORDER BY g.merged_at DESC NULLS LAST, g.number DESC LIMIT %s",
                (*params, max(0, int(limit))),
            ).fetchall()
        return [MergedChange(number, tuple(paths), tuple(gone), iso(utc(merged)) if merged else "", author or "",
                             tuple(definitions or ()))
                for number, merged, author, paths, gone, definitions in reversed(found)]  # fmt: skip

    def briefs(
        self, repository: str, *, label: str | None = None, since: date | datetime | str | None = None,
        until: date | datetime | str | None = None,
    ) -> list[Brief]:
        """A :class:`Brief` of every matching guide, in no order (see :meth:`bot.tagview.store.GuideStore.briefs`)."""
        flt = GuideFilter(label=label, since=as_bound(since, "since"), until=as_bound(until, "until"))
        where, params = _where(repository, flt)
        with self._read() as conn:
            found = conn.execute(
                "SELECT g.number, g.merged_at, g.reading_level, g.importance, g.breaking, COALESCE(g.areas->>0, ''), "
                f"g.change_type, g.fixes_from FROM tagview_guides g WHERE {where}",
                params,
            ).fetchall()
        return [
            Brief(n, iso(utc(merged)) if merged is not None else None, level, importance, bool(breaking), area, kind, origin)
            for n, merged, level, importance, breaking, area, kind, origin in found
        ]

    def visibility(self, repository: str) -> str | None:
        """``"public"``/``"private"`` for a known repository, else ``None``."""
        return self._value("SELECT visibility FROM tagview_repositories WHERE name = %s", (repository,))

    def repositories(self) -> list[RepositoryInfo]:
        """Every repository with its visibility and number of stored guides, by name."""
        with self._read() as conn:
            rows = conn.execute("SELECT name, visibility, guides FROM tagview_repositories").fetchall()
        return sorted((RepositoryInfo(*row) for row in rows), key=lambda r: r.name.casefold())

    def canonical_name(self, repository: str) -> str | None:
        """The repository's name as stored (names match case-insensitively), or ``None``."""
        return self._value("SELECT name FROM tagview_repositories WHERE name = %s", (repository,))

    def labels(self, repository: str, *, limit: int | None = None, include: str | None = None) -> list[LabelCount]:
        """Labels on the repository's stored guides, with counts and descriptions, by name;
        ``limit`` and ``include`` as for :meth:`bot.tagview.store.GuideStore.labels`."""
        select = (
            "SELECT c.name, c.guides, COALESCE(i.description, '') FROM tagview_counts c "
            "LEFT JOIN tagview_label_info i ON i.repository = c.repository AND i.label = c.name "
            "WHERE c.repository = %s AND c.kind = 'label' AND c.guides > 0"
        )
        with self._read() as conn:
            if limit is None:
                rows = conn.execute(select, (repository,)).fetchall()
            else:
                rows = conn.execute(select + " ORDER BY c.guides DESC, c.name LIMIT %s", (repository, max(0, limit))).fetchall()
                if include:
                    rows += conn.execute(select + " AND c.name = %s", (repository, include)).fetchall()
        found = {row[0].casefold(): LabelCount(*row) for row in rows}
        return sorted(found.values(), key=lambda item: item.name.casefold())

    def label_count(self, repository: str) -> int:
        """How many labels the repository's stored guides carry."""
        return int(self._value(
            "SELECT COUNT(*) FROM tagview_counts WHERE repository = %s AND kind = 'label' AND guides > 0", (repository,)
        ) or 0)  # fmt: skip

    def areas(self, repository: str, *, limit: int | None = None, include: str | None = None) -> list[tuple[str, int]]:
        """Areas on the repository's stored guides as ``(area, count)``, by name; ``limit`` and
        ``include`` as for :meth:`labels`."""
        select = "SELECT name, guides FROM tagview_counts WHERE repository = %s AND kind = 'area' AND guides > 0"
        with self._read() as conn:
            if limit is None:
                rows = conn.execute(select, (repository,)).fetchall()
            else:
                rows = conn.execute(select + " ORDER BY guides DESC, name LIMIT %s", (repository, max(0, limit))).fetchall()
                if include:
                    rows += conn.execute(select + " AND name = %s", (repository, include)).fetchall()
        found = {row[0].casefold(): tuple(row) for row in rows}
        return sorted(found.values(), key=lambda item: item[0].casefold())

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
        """One page of matching guides, newest merge first (see :meth:`bot.tagview.store.GuideStore.query`)."""
        check_page(limit, offset)
        flt = GuideFilter(
            label=label, area=area, level=level, min_importance=min_importance,
            since=as_bound(since, "since"), until=as_bound(until, "until"), search=search,
        )
        where, params = _where(repository, flt)
        with self._read() as conn:
            total = _counted(conn, repository, flt)
            if total is not None:
                rows = conn.execute(
                    f"SELECT {ROW_COLUMNS} FROM tagview_guides g WHERE {where} ORDER BY {_NEWEST} LIMIT %s OFFSET %s",
                    (*params, limit, offset),
                ).fetchall()
                return GuidePage(tuple(_row(r) for r in rows), total, limit, offset)
            # One statement: the window count rides along with the page.
            rows = conn.execute(
                f"SELECT {ROW_COLUMNS}, COUNT(*) OVER () FROM tagview_guides g WHERE {where} "
                f"ORDER BY {_NEWEST} LIMIT %s OFFSET %s",
                (*params, limit, offset),
            ).fetchall()
            if rows:
                total = rows[0][-1]
            else:
                total = conn.execute(f"SELECT COUNT(*) FROM tagview_guides g WHERE {where}", params).fetchone()[0]
        return GuidePage(tuple(_row(r) for r in rows), total, limit, offset)

    def sections(self, repository: str, flt: GuideFilter | None = None, *, per_label: int = 10) -> list[LabelSection]:
        """Every label with its matching guides' count and newest ``per_label`` rows (see the SQLite store)."""
        return self.section_page(repository, flt, per_label=per_label).sections

    def section_page(
        self, repository: str, flt: GuideFilter | None = None, *, per_label: int = 10, limit: int | None = None, offset: int = 0,
    ) -> SectionPage:
        """One page of :meth:`sections`, its labels ranked by matching guides (see the SQLite store)."""
        label, narrowed = split_label(flt, per_label, limit, offset)
        where, params = _where(repository, narrowed)
        window = " LIMIT %s OFFSET %s" if limit is not None else ""
        window_params = (limit, offset) if limit is not None else ()
        label_sql = " AND l.label = %s" if label else ""
        label_params = (label,) if label else ()
        with self._read() as conn:
            descriptions = conn.execute(
                "SELECT label, description FROM tagview_label_info WHERE repository = %s", (repository,)
            ).fetchall()
            if narrowed.active:
                found = conn.execute(
                    f"""
                    WITH matching AS (
                        SELECT l.label, l.guide_id, l.merged_at, l.number FROM tagview_labels l
                        WHERE l.repository = %s{label_sql}
                          AND l.guide_id IN (SELECT g.id FROM tagview_guides g WHERE {where})
                    ), chosen AS (
                        SELECT t.label, t.total, COUNT(*) OVER () AS labels
                        FROM (SELECT label, COUNT(*) AS total FROM matching GROUP BY label) t
                        ORDER BY t.total DESC, t.label{window}
                    ), ranked AS (
                        SELECT m.label, m.guide_id, c.total, c.labels,
                               ROW_NUMBER() OVER (PARTITION BY m.label ORDER BY m.merged_at DESC NULLS LAST, m.number DESC) AS position
                        FROM matching m JOIN chosen c ON c.label = m.label
                    )
                    SELECT r.label, r.total, r.labels, {ROW_COLUMNS}
                    FROM ranked r JOIN tagview_guides g ON g.id = r.guide_id
                    WHERE r.position <= %s ORDER BY r.position
                    """,
                    (repository, *label_params, *params, *window_params, per_label),
                ).fetchall()
            else:
                # Unfiltered: the kept counts of the page's labels, and per label one short walk
                # of its index, newest first, stopping after per_label (one statement: a lateral join).
                found = conn.execute(
                    f"""
                    SELECT c.name, c.guides, c.labels, r.*
                    FROM (
                        SELECT name, guides, repository, COUNT(*) OVER () AS labels FROM tagview_counts
                        WHERE repository = %s AND kind = 'label' AND guides > 0{' AND name = %s' if label else ''}
                        ORDER BY guides DESC, name{window}
                    ) c CROSS JOIN LATERAL (
                        SELECT {ROW_COLUMNS} FROM tagview_labels l JOIN tagview_guides g ON g.id = l.guide_id
                        WHERE l.repository = c.repository AND l.label = c.name
                        ORDER BY l.merged_at DESC NULLS LAST, l.number DESC LIMIT %s
                    ) r
                    """,
                    (repository, *label_params, *window_params, per_label),
                ).fetchall()
        return label_page(found, descriptions, _row, offset)


def _without_nul(value: Any) -> Any:
    """``value`` (decoded JSON: dicts, lists, strings, numbers) with every NUL character dropped from its strings."""
    if isinstance(value, str):
        return value.replace("\x00", "") if "\x00" in value else value
    if isinstance(value, Mapping):
        return {_without_nul(k): _without_nul(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_without_nul(item) for item in value]
    return value


def _where(repository: str, flt: GuideFilter) -> tuple[str, list[Any]]:
    return filter_sql(repository, flt, mark="%s", word=_word)


def _counted(conn: Any, repository: str, flt: GuideFilter) -> int | None:
    """How many guides match ``flt`` when the kept counts say it (no filter, or a label alone), else ``None``."""
    if flt.label and not dataclasses.replace(flt, label=None).active:
        found = conn.execute(
            "SELECT guides FROM tagview_counts WHERE repository = %s AND kind = 'label' AND name = %s", (repository, flt.label)
        ).fetchone()
    elif not flt.active:
        found = conn.execute("SELECT guides FROM tagview_repositories WHERE name = %s", (repository,)).fetchone()
    else:
        return None
    return max(0, found[0]) if found else 0


def _count(cur: Any, repository: str, guide_id: int, old_labels: list[str], old_areas: list[str]) -> None:
    """Move the kept counts from ``old_labels``/``old_areas`` (the guide's rows just deleted) to its rows now.

    The caller holds the repository's row lock (every save and delete takes it first), so
    the count rows of one repository are only ever changed by one transaction at a time.
    """
    for kind, table, column, old in (("label", "tagview_labels", "label", old_labels), ("area", "tagview_areas", "area", old_areas)):
        # One statement per kind: each name's net change (a label kept by a refresh moves by 0).
        cur.execute(
            f"""
            INSERT INTO tagview_counts (repository, kind, name, guides)
            SELECT %s, %s, name, SUM(change) FROM (
                SELECT {column} AS name, 1 AS change FROM {table} WHERE guide_id = %s
                UNION ALL SELECT old COLLATE tagview_nocase, -1 FROM unnest(%s::text[]) AS old
            ) AS changes GROUP BY name HAVING SUM(change) <> 0
            ON CONFLICT (repository, kind, name) DO UPDATE SET guides = tagview_counts.guides + excluded.guides
            """,
            (repository, kind, guide_id, old),
        )


def _word(word: str) -> tuple[str, list[Any]]:
    return f"{_SEARCHED} ILIKE %s ESCAPE '\\'", [like_pattern(word)]


def _moment(iso: str | None) -> datetime | None:
    return datetime.fromisoformat(iso.replace("Z", "+00:00")) if iso else None


def _row(r: Any) -> GuideRow:
    # merged_at is a timestamptz; labels and areas are jsonb, read as lists.
    return guide_row(r, moment=lambda moment: iso(utc(moment)) if moment is not None else None)
