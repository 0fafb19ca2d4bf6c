"""The tag view's tables on PostgreSQL (component ``"tagview"``), as an ordered migration list.

The same tables as :mod:`bot.tagview.schema` with PostgreSQL's types: a case-insensitive
ICU collation for names GitHub compares that way (repositories, labels, areas), ``timestamptz``
for merge times, ``json`` for the guide kept verbatim. Search uses a ``pg_trgm`` GIN
index over the title and focus text, so ``ILIKE '%word%'`` is an index scan for words
of three characters or more -- the same substring semantics as SQLite's FTS5 trigram
index. ``pg_trgm`` ships with PostgreSQL (contrib) and is "trusted", so any role with
``CREATE`` on the database may add it; without it the index is left out and search
scans (same results, slower on many guides).
"""

from __future__ import annotations

#: Name under which the tag view's schema version is recorded.
COMPONENT = "tagview"

_TABLES = """
-- Names compare like SQLite's NOCASE: one ICU collation that ignores case (not accents).
CREATE COLLATION tagview_nocase (provider = icu, locale = 'und-u-ks-level2', deterministic = false);
CREATE TABLE tagview_repositories (
    name text COLLATE tagview_nocase PRIMARY KEY,
    visibility text NOT NULL DEFAULT 'private' CHECK (visibility IN ('public', 'private'))
);
CREATE TABLE tagview_guides (
    id bigserial PRIMARY KEY,
    repository text COLLATE tagview_nocase NOT NULL REFERENCES tagview_repositories (name) ON UPDATE CASCADE,
    number integer NOT NULL,
    title text NOT NULL,
    url text,
    author text,
    merged_at timestamptz,
    change_type text,
    breaking boolean NOT NULL DEFAULT false,
    importance smallint,
    reading_level text,
    reading_minutes integer,
    lang text,
    summary text NOT NULL DEFAULT '',
    labels jsonb NOT NULL DEFAULT '[]',
    areas jsonb NOT NULL DEFAULT '[]',
    focus_text text NOT NULL DEFAULT '',
    stored_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (repository, number)
);
-- The full guide JSON (Markdown included) lives apart so list queries read small rows.
CREATE TABLE tagview_guide_data (
    guide_id bigint PRIMARY KEY REFERENCES tagview_guides (id) ON DELETE CASCADE,
    data json NOT NULL
);
CREATE INDEX tagview_guides_merged ON tagview_guides (repository, merged_at DESC NULLS LAST, number DESC);
CREATE TABLE tagview_labels (
    guide_id bigint NOT NULL REFERENCES tagview_guides (id) ON DELETE CASCADE,
    repository text COLLATE tagview_nocase NOT NULL,
    label text COLLATE tagview_nocase NOT NULL,
    source text NOT NULL DEFAULT 'rule' CHECK (source IN ('rule', 'human')),
    rule text,
    merged_at timestamptz,
    number integer NOT NULL,
    PRIMARY KEY (guide_id, label)
);
CREATE INDEX tagview_labels_by_label
    ON tagview_labels (repository, label, merged_at DESC NULLS LAST, number DESC) INCLUDE (guide_id);
CREATE TABLE tagview_areas (
    guide_id bigint NOT NULL REFERENCES tagview_guides (id) ON DELETE CASCADE,
    repository text COLLATE tagview_nocase NOT NULL,
    area text COLLATE tagview_nocase NOT NULL,
    PRIMARY KEY (guide_id, area)
);
CREATE INDEX tagview_areas_by_area ON tagview_areas (repository, area);
CREATE TABLE tagview_label_info (
    repository text COLLATE tagview_nocase NOT NULL,
    label text COLLATE tagview_nocase NOT NULL,
    description text NOT NULL DEFAULT '',
    PRIMARY KEY (repository, label)
);
"""

# pg_trgm is optional: a server without it keeps working, search then scans.
_SEARCH = """
DO $$
BEGIN
    BEGIN
        CREATE EXTENSION IF NOT EXISTS pg_trgm WITH SCHEMA public;
    EXCEPTION WHEN OTHERS THEN
        RAISE NOTICE 'pg_trgm unavailable (%), tag-view search scans', SQLERRM;
        RETURN;
    END;
    EXECUTE 'CREATE INDEX tagview_guides_search ON tagview_guides '
            'USING gin ((title || '' '' || focus_text) public.gin_trgm_ops)';
END
$$;
"""

# Version 3: each guide's entry card per language it was stored in (see
# bot.tagview.guide_data.guide_cards); guides stored earlier have none and are shown as stored.
_CARDS = """
CREATE TABLE tagview_guide_cards (
    guide_id bigint NOT NULL REFERENCES tagview_guides (id) ON DELETE CASCADE,
    lang text NOT NULL,
    card json NOT NULL,
    PRIMARY KEY (guide_id, lang)
);
"""

# Version 4: each guide's changed paths, the history change coupling counts from.
_FILES = """
CREATE TABLE tagview_guide_files (
    guide_id bigint PRIMARY KEY REFERENCES tagview_guides (id) ON DELETE CASCADE,
    paths json NOT NULL DEFAULT '[]',
    gone json NOT NULL DEFAULT '[]'
);
"""

# Version 5: kept counts, as in SQLite (bot.tagview.schema): every save and delete moves them in its own
# transaction, after locking the repository's row, so the pages never count rows per request.
_COUNTS = """
CREATE TABLE tagview_counts (
    repository text COLLATE tagview_nocase NOT NULL,
    kind text NOT NULL CHECK (kind IN ('label', 'area')),
    name text COLLATE tagview_nocase NOT NULL,
    guides integer NOT NULL,
    PRIMARY KEY (repository, kind, name)
);
INSERT INTO tagview_counts (repository, kind, name, guides)
    SELECT repository, 'label', label, COUNT(*) FROM tagview_labels GROUP BY repository, label;
INSERT INTO tagview_counts (repository, kind, name, guides)
    SELECT repository, 'area', area, COUNT(*) FROM tagview_areas GROUP BY repository, area;
ALTER TABLE tagview_repositories ADD COLUMN guides integer NOT NULL DEFAULT 0;
UPDATE tagview_repositories r SET guides = (SELECT COUNT(*) FROM tagview_guides g WHERE g.repository = r.name);
ANALYZE tagview_counts;
"""

# Version 6: the definitions each guide's pull request changed and the pull request whose code a
# fix changes, as in SQLite (bot.tagview.schema).
FIXES_FROM_BACKFILL = """
UPDATE tagview_guides g SET fixes_from = (d.data->'history'->>'fixes_code_from')::integer
FROM tagview_guide_data d
WHERE d.guide_id = g.id AND g.change_type = 'fix' AND d.data->>'change_type' = 'fix'
  AND json_typeof(d.data->'history'->'fixes_code_from') = 'number'
  AND (d.data->'history'->>'fixes_code_from') ~ '^[1-9][0-9]{0,8}$';
"""
_DEFINITIONS = """
ALTER TABLE tagview_guide_files ADD COLUMN definitions json NOT NULL DEFAULT '[]';
ALTER TABLE tagview_guides ADD COLUMN fixes_from integer;
""" + FIXES_FROM_BACKFILL

#: The tag view's PostgreSQL migrations, in order; each runs in one transaction.
MIGRATIONS: list[str] = [_TABLES, _SEARCH, _CARDS, _FILES, _COUNTS, _DEFINITIONS]
