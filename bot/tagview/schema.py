"""The tag view's tables and their migrations (component ``"tagview"`` in ``schema_versions``)."""

from __future__ import annotations

import os
import sqlite3

from bot.app.db import migrate, open_database

#: Name under which the tag view's schema version is recorded.
COMPONENT = "tagview"

_TABLES = """
CREATE TABLE tagview_repositories (
    name TEXT PRIMARY KEY COLLATE NOCASE,
    visibility TEXT NOT NULL DEFAULT 'private' CHECK (visibility IN ('public', 'private'))
);
CREATE TABLE tagview_guides (
    id INTEGER PRIMARY KEY,
    repository TEXT NOT NULL COLLATE NOCASE REFERENCES tagview_repositories (name),
    number INTEGER NOT NULL,
    title TEXT NOT NULL,
    url TEXT,
    author TEXT,
    merged_at TEXT,
    change_type TEXT,
    breaking INTEGER NOT NULL DEFAULT 0,
    importance INTEGER,
    reading_level TEXT,
    reading_minutes INTEGER,
    lang TEXT,
    summary TEXT NOT NULL DEFAULT '',
    labels TEXT NOT NULL DEFAULT '[]',
    areas TEXT NOT NULL DEFAULT '[]',
    focus_text TEXT NOT NULL DEFAULT '',
    stored_at TEXT NOT NULL,
    UNIQUE (repository, number)
);
-- The full guide JSON (Markdown included) lives apart so list queries read small rows.
CREATE TABLE tagview_guide_data (
    guide_id INTEGER PRIMARY KEY REFERENCES tagview_guides (id) ON DELETE CASCADE,
    data TEXT NOT NULL
);
CREATE INDEX tagview_guides_merged ON tagview_guides (repository, merged_at DESC, number DESC);
CREATE TABLE tagview_labels (
    guide_id INTEGER NOT NULL REFERENCES tagview_guides (id) ON DELETE CASCADE,
    repository TEXT NOT NULL COLLATE NOCASE,
    label TEXT NOT NULL COLLATE NOCASE,
    source TEXT NOT NULL DEFAULT 'rule' CHECK (source IN ('rule', 'human')),
    rule TEXT,
    merged_at TEXT,
    number INTEGER NOT NULL,
    PRIMARY KEY (guide_id, label)
);
-- Covers label grouping: newest first per label, with the guide id to join or filter on.
CREATE INDEX tagview_labels_by_label ON tagview_labels (repository, label, merged_at DESC, number DESC, guide_id);
CREATE TABLE tagview_areas (
    guide_id INTEGER NOT NULL REFERENCES tagview_guides (id) ON DELETE CASCADE,
    repository TEXT NOT NULL COLLATE NOCASE,
    area TEXT NOT NULL COLLATE NOCASE,
    PRIMARY KEY (guide_id, area)
);
CREATE INDEX tagview_areas_by_area ON tagview_areas (repository, area);
CREATE TABLE tagview_label_info (
    repository TEXT NOT NULL COLLATE NOCASE,
    label TEXT NOT NULL COLLATE NOCASE,
    description TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (repository, label)
);
"""

_SEARCH_FTS = """
CREATE VIRTUAL TABLE tagview_search USING fts5 (title, focus, tokenize = 'trigram');
INSERT INTO tagview_search (rowid, title, focus) SELECT id, title, focus_text FROM tagview_guides;
"""

# Python builds without FTS5 still record version 2, and search falls back to LIKE.
_SEARCH_NONE = "SELECT 1;"

# Version 3: what a listed entry shows of a guide, per language it was stored in (see
# bot.tagview.guide_data.guide_cards), so list pages read a card per row, never the guide's
# Markdown. Guides stored earlier have none: they are shown from their data, as stored.
_CARDS = """
CREATE TABLE tagview_guide_cards (
    guide_id INTEGER NOT NULL REFERENCES tagview_guides (id) ON DELETE CASCADE,
    lang TEXT NOT NULL,
    card TEXT NOT NULL,
    PRIMARY KEY (guide_id, lang)
);
"""

# Version 4: each guide's changed paths (JSON lists), the history change coupling counts from.
_FILES = """
CREATE TABLE tagview_guide_files (
    guide_id INTEGER PRIMARY KEY REFERENCES tagview_guides (id) ON DELETE CASCADE,
    paths TEXT NOT NULL DEFAULT '[]',
    gone TEXT NOT NULL DEFAULT '[]'
);
"""

# Version 5: how many guides carry each label and area, and how many a repository has, kept by every
# save and delete in the same transaction: the pages read them instead of counting the
# repository's rows on each request. A name whose count falls to 0 keeps its row (read as
# absent), so a save never deletes rows another count may be about to reuse.
_COUNTS = """
CREATE TABLE tagview_counts (
    repository TEXT NOT NULL COLLATE NOCASE,
    kind TEXT NOT NULL CHECK (kind IN ('label', 'area')),
    name TEXT NOT NULL COLLATE NOCASE,
    guides INTEGER NOT NULL,
    PRIMARY KEY (repository, kind, name)
) WITHOUT ROWID;
INSERT INTO tagview_counts (repository, kind, name, guides)
    SELECT repository, 'label', label, COUNT(*) FROM tagview_labels GROUP BY repository, label;
INSERT INTO tagview_counts (repository, kind, name, guides)
    SELECT repository, 'area', area, COUNT(*) FROM tagview_areas GROUP BY repository, area;
ALTER TABLE tagview_repositories ADD COLUMN guides INTEGER NOT NULL DEFAULT 0;
UPDATE tagview_repositories SET guides = (SELECT COUNT(*) FROM tagview_guides g WHERE g.repository = tagview_repositories.name);
"""


# Version 6: the definitions each guide's pull request changed (a JSON list of ``path::name``),
# for telling which earlier pull request a later one follows up (bot.engine.history.follows);
# and, for a fix, the pull request whose code it changes (bot.tagview.guide_data.fixed_origin),
# so the digest finds the fixes of the week before from its briefs; guides stored earlier get
# it from their data.
# A damaged row (data that is not JSON) is left without it: json_extract would raise
# "malformed JSON" and fail the migration, and CASE is the one form SQLite evaluates in order.
FIXES_FROM_BACKFILL = """
UPDATE tagview_guides SET fixes_from = (
    SELECT CASE WHEN json_valid(d.data) THEN CASE WHEN json_extract(d.data, '$.change_type') = 'fix'
      AND json_type(d.data, '$.history.fixes_code_from') = 'integer'
      AND json_extract(d.data, '$.history.fixes_code_from') BETWEEN 1 AND 2147483647
    THEN json_extract(d.data, '$.history.fixes_code_from') END END
    FROM tagview_guide_data d WHERE d.guide_id = tagview_guides.id
) WHERE change_type = 'fix';
"""
_DEFINITIONS = """
ALTER TABLE tagview_guide_files ADD COLUMN definitions TEXT NOT NULL DEFAULT '[]';
ALTER TABLE tagview_guides ADD COLUMN fixes_from INTEGER;
""" + FIXES_FROM_BACKFILL


def fts5_trigram_available() -> bool:
    """Whether this Python's SQLite has FTS5 with the trigram tokenizer (SQLite >= 3.34)."""
    probe = sqlite3.connect(":memory:")
    try:
        probe.execute("CREATE VIRTUAL TABLE t USING fts5 (x, tokenize = 'trigram')")
        return True
    except sqlite3.Error:
        return False
    finally:
        probe.close()


def migrations() -> list[str]:
    """The tag view's migration scripts, in order (see :func:`bot.app.db.migrate`)."""
    return [_TABLES, _SEARCH_FTS if fts5_trigram_available() else _SEARCH_NONE, _CARDS, _FILES, _COUNTS, _DEFINITIONS]


def open_connection(path: str | os.PathLike[str]) -> sqlite3.Connection:
    """Open the shared prguide database file (:func:`bot.app.db.open_database`)."""
    return open_database(path)


def migrate_tagview(conn: sqlite3.Connection) -> bool:
    """Bring the tag view's tables up to date; return whether the FTS5 search index exists.

    Raises :class:`bot.app.db.DatabaseError` when the database is newer than this code.
    """
    migrate(conn, COMPONENT, migrations())
    found = conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'tagview_search'").fetchone()
    return found is not None
