"""``prguide db copy``: move a single-machine installation (one SQLite file) into PostgreSQL.

What moves: every stored guide (its data as saved, labels with their provenance, label
descriptions, the repository's visibility) and every job -- queued, running (it was
interrupted, so it is queued again with its attempts kept), parked (with its error) --
with its payload, attempts and due time, in the order it was queued, so one pull
request's jobs still run in order. Done jobs move without their payloads: their
delivery ids keep a redelivery of an already-handled delivery from running again.

Running it twice changes nothing the second time: guides are keyed by repository and
number, jobs by delivery id. Stop the single-machine prguide first; replicas on the
PostgreSQL side may already run (copied jobs wake them with ``NOTIFY``).
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path

#: Job columns read from SQLite, in this order.
_JOB_COLUMNS = (
    "delivery_id", "event", "action", "key", "installation_id", "state", "attempts",
    "not_before", "created_at", "updated_at", "outcome", "error",
)


@dataclass(frozen=True)
class CopySummary:
    """What :func:`copy_sqlite_to_postgresql` did: rows found in SQLite and rows newly written."""

    guides: int
    repositories: int
    jobs: int
    jobs_added: int


def parse_sqlite_source(source: str) -> Path:
    """``sqlite:PATH`` (or ``sqlite:///PATH``) -> the path; ``ValueError`` for anything else or a missing file."""
    if not source.startswith("sqlite:"):
        raise ValueError(f"--from must be sqlite:PATH, got {source!r}")
    raw = source[len("sqlite:"):]
    if raw.startswith("//"):
        raw = raw[2:]
    path = Path(raw).expanduser()
    if not raw:
        raise ValueError("--from sqlite:PATH needs a path")
    if not path.is_file():
        raise ValueError(f"no SQLite database at {path}")
    return path


def copy_sqlite_to_postgresql(path: Path, url: str, *, schema: str | None = None) -> CopySummary:
    """Copy guides and jobs from the SQLite file ``path`` into PostgreSQL at ``url`` (migrated first).

    Raises ``ValueError`` when ``path`` is not a prguide database, ``sqlite3.Error`` /
    ``psycopg.Error`` for database failures and :class:`bot.app.db.DatabaseError` for a
    schema newer than this code.
    """
    from bot.app import pg, pgjobs
    from bot.tagview.pgstore import PgGuideStore

    source = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        tables = {row[0] for row in source.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    except sqlite3.DatabaseError as exc:
        source.close()
        raise ValueError(f"{path} is not an SQLite database ({exc})") from None
    if not tables & {"jobs", "tagview_guides"}:
        source.close()
        raise ValueError(f"{path} holds no prguide tables (jobs, tagview_guides)")
    db = pg.connect(url, schema=schema, max_size=2, migrate_components=["jobs", "tagview"])
    try:
        guides, repositories = _copy_guides(source, PgGuideStore(db)) if "tagview_guides" in tables else (0, 0)
        jobs, added = _copy_jobs(source, db, tables) if "jobs" in tables else (0, 0)
        if added:
            with db.connection() as conn:
                conn.execute("SELECT pg_notify(%s, '')", (pgjobs.channel(db.schema),))
    finally:
        db.close()
        source.close()
    return CopySummary(guides=guides, repositories=repositories, jobs=jobs, jobs_added=added)


def _copy_guides(source: sqlite3.Connection, store) -> tuple[int, int]:  # type: ignore[no-untyped-def]
    import json

    visibility = dict(source.execute("SELECT name, visibility FROM tagview_repositories"))
    descriptions: dict[str, dict[str, str]] = {}
    for repository, label, text in source.execute("SELECT repository, label, description FROM tagview_label_info"):
        descriptions.setdefault(repository.casefold(), {})[label] = text
    count = 0
    for repository, data in source.execute(
        "SELECT g.repository, d.data FROM tagview_guides g JOIN tagview_guide_data d ON d.guide_id = g.id ORDER BY g.id"
    ):
        store.save(
            json.loads(data),
            visibility=visibility.get(repository, "private"),
            label_descriptions=descriptions.get(repository.casefold()),
        )
        count += 1
    # Repositories marked public or private without a guide yet keep their visibility too.
    for name, vis in visibility.items():
        store.set_visibility(name, vis)
    return count, len(visibility)


def _copy_jobs(source: sqlite3.Connection, db, tables: set[str]) -> tuple[int, int]:  # type: ignore[no-untyped-def]
    payload = (
        "(SELECT p.body FROM job_payloads p WHERE p.job_id = j.id)" if "job_payloads" in tables else "j.payload"
    )
    # Background jobs (a backfill's) stay background; a file from before priorities has none.
    known = {row[1] for row in source.execute("PRAGMA table_info(jobs)")}
    columns = _JOB_COLUMNS + (("priority",) if "priority" in known else ())
    rows = source.execute(
        f"SELECT {', '.join('j.' + c for c in columns)}, {payload} FROM jobs j ORDER BY j.id"
    ).fetchall()
    insert = (
        f"INSERT INTO jobs ({', '.join(columns)}, payload) "
        f"VALUES ({', '.join(['%s'] * (len(columns) + 1))}) ON CONFLICT (delivery_id) DO NOTHING"
    )
    added = 0
    with db.connection() as conn, conn.cursor() as cur:
        for row in rows:
            values = dict(zip((*columns, "payload"), row, strict=True))
            if values["state"] == "running":  # its process is gone: queue it again, attempts kept
                values["state"] = "queued"
            if values["state"] == "done":
                values["payload"] = None
            elif values["payload"] is not None:
                values["payload"] = bytes(values["payload"])
            cur.execute(insert, tuple(values.values()))
            added += cur.rowcount
    return len(rows), added
