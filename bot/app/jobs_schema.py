"""The SQLite schema of the job queue (:mod:`bot.app.jobstore`): its migrations, in order.

A file migrated by an older prguide has the first of them applied already
(:func:`bot.app.db.migrate` keeps the version), so a new one is only ever appended.
The PostgreSQL schema is :data:`bot.app.pgjobs.MIGRATIONS`.
"""

from __future__ import annotations

MIGRATIONS = [
    """
    CREATE TABLE jobs (
        id INTEGER PRIMARY KEY,
        delivery_id TEXT NOT NULL UNIQUE,
        event TEXT NOT NULL,
        action TEXT,
        key TEXT NOT NULL,
        payload BLOB NOT NULL,
        installation_id INTEGER,
        state TEXT NOT NULL DEFAULT 'queued'
            CHECK (state IN ('queued', 'running', 'done', 'parked')),
        attempts INTEGER NOT NULL DEFAULT 0,
        not_before REAL NOT NULL,
        created_at REAL NOT NULL,
        updated_at REAL NOT NULL,
        outcome TEXT,
        error TEXT
    );
    CREATE INDEX jobs_due ON jobs (state, not_before, id);
    CREATE INDEX jobs_key ON jobs (key, state, id);
    """,
    # Payloads move to a table of their own: SQLite rewrites a whole row, overflow pages
    # and all, when an update changes its size, so every state change of a job used to
    # copy its ~25 KB body. (DROP COLUMN needs SQLite 3.35, from 2021.)
    """
    CREATE TABLE job_payloads (
        job_id INTEGER PRIMARY KEY REFERENCES jobs (id) ON DELETE CASCADE,
        body BLOB NOT NULL
    );
    INSERT INTO job_payloads (job_id, body) SELECT id, payload FROM jobs WHERE length(payload) > 0;
    ALTER TABLE jobs DROP COLUMN payload;
    CREATE INDEX jobs_open ON jobs (key, id, state) WHERE state IN ('queued', 'running');
    """,
    # Claims are fenced (see Job.fence), and periodic work remembers how far it got.
    """
    ALTER TABLE jobs ADD COLUMN fence INTEGER NOT NULL DEFAULT 0;
    CREATE INDEX jobs_installation ON jobs (installation_id) WHERE state IN ('queued', 'running', 'parked');
    CREATE TABLE checkpoints (
        name TEXT PRIMARY KEY,
        value TEXT NOT NULL,
        updated_at REAL NOT NULL
    );
    """,
    # Live work before background work (claims read jobs_claim; next_due still jobs_due).
    """
    ALTER TABLE jobs ADD COLUMN priority INTEGER NOT NULL DEFAULT 0;
    CREATE INDEX jobs_claim ON jobs (state, priority, not_before, id);
    """,
]
