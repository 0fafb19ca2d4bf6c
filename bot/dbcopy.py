"""``prguide db copy``: move a single-machine installation (one SQLite file) into PostgreSQL.

What moves: every stored guide (its data as saved, labels with their provenance, label
descriptions, the repository's visibility) and every job -- queued, running (it was
interrupted, so it is queued again with its attempts kept), parked (with its error) --
with its payload, attempts and due time, in the order it was queued, so one pull
request's jobs still run in order. Done jobs move without their payloads: their
delivery ids keep a redelivery of an already-handled delivery from running again.
The checkpoints of periodic work (how far reconcile got) move too.

Running it twice changes nothing the second time: guides are keyed by repository and
number, jobs by delivery id, and what is already there is counted apart from what was
copied. Stop the single-machine prguide first; replicas on the PostgreSQL side may
already run (copied jobs wake them with ``NOTIFY``).

A damaged row (a guide whose data is not valid JSON or not a guide, a job PostgreSQL
refuses) is left behind and named in :attr:`CopySummary.damaged`; every other guide and
job is still copied.
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
    """What :func:`copy_sqlite_to_postgresql` did.

    ``guides``: guides written (new, or different from PostgreSQL's copy) of
    ``guides_found`` rows; ``repositories``: repositories added or whose visibility
    changed, of ``repositories_found``; ``jobs_added`` of ``jobs`` found (a job already
    there, by delivery id, is not added). ``damaged``: one line per row left behind, naming
    it and why (``tagview_guides row 7 (acme/rocket#12): ...``, ``jobs row 3 (delivery d3): ...``).
    """

    guides: int
    repositories: int
    jobs: int
    jobs_added: int
    guides_found: int = 0
    repositories_found: int = 0
    damaged: tuple[str, ...] = ()
    #: Guides and jobs PostgreSQL already held as they are (a second run's whole count).
    guides_unchanged: int = 0
    jobs_unchanged: int = 0


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
    damaged: list[str] = []
    try:
        guides = _copy_guides(source, PgGuideStore(db), damaged) if "tagview_guides" in tables else _Guides()
        jobs, added, present = _copy_jobs(source, db, tables, damaged) if "jobs" in tables else (0, 0, 0)
        if "checkpoints" in tables:
            _copy_checkpoints(source, db)
        _analyze(db)
        if added:
            with db.connection() as conn:
                conn.execute("SELECT pg_notify(%s, '')", (pgjobs.channel(db.schema),))
    finally:
        db.close()
        source.close()
    return CopySummary(
        guides=guides.written, repositories=guides.repositories, jobs=jobs, jobs_added=added,
        guides_found=guides.found, repositories_found=guides.repositories_found, damaged=tuple(damaged),
        guides_unchanged=guides.unchanged, jobs_unchanged=present,
    )


def _analyze(db) -> None:  # type: ignore[no-untyped-def]
    """``ANALYZE`` every table of the schema: the copy filled them faster than autovacuum looks, and
    the planner would plan the tag view's filtered pages and the job claims for empty tables."""
    from psycopg import sql

    with db.connection() as conn:
        names = [r[0] for r in conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = current_schema()")]
        if names:
            conn.execute(sql.SQL("ANALYZE {}").format(sql.SQL(", ").join(sql.Identifier(n) for n in sorted(names))))


@dataclass
class _Guides:
    found: int = 0
    written: int = 0
    unchanged: int = 0
    repositories_found: int = 0
    repositories: int = 0


def _copy_guides(source: sqlite3.Connection, store, damaged: list[str]) -> _Guides:  # type: ignore[no-untyped-def]
    import json

    import psycopg

    from bot.engine.history.coupling import MergedChange

    out = _Guides()
    visibility = dict(source.execute("SELECT name, visibility FROM tagview_repositories"))
    before = {name: store.visibility(name) for name in visibility}
    descriptions: dict[str, dict[str, str]] = {}
    for repository, label, text in source.execute("SELECT repository, label, description FROM tagview_label_info"):
        descriptions.setdefault(repository.casefold(), {})[label] = text
    # Each guide's changed paths (change coupling's history), from databases that have them.
    has_files = source.execute("SELECT 1 FROM sqlite_master WHERE name = 'tagview_guide_files'").fetchone() is not None
    has_definitions = has_files and any(
        column[1] == "definitions" for column in source.execute("PRAGMA table_info(tagview_guide_files)"))
    files = ("f.paths, f.gone, " + ("f.definitions" if has_definitions else "NULL")) if has_files else "NULL, NULL, NULL"
    join = "LEFT JOIN tagview_guide_files f ON f.guide_id = g.id " if has_files else ""
    for row_id, repository, number, data, paths, gone, definitions in source.execute(
        f"SELECT g.id, g.repository, g.number, d.data, {files} FROM tagview_guides g "
        f"JOIN tagview_guide_data d ON d.guide_id = g.id {join}ORDER BY g.id"
    ):
        out.found += 1
        try:
            guide = json.loads(data)
            if not isinstance(guide, dict):
                raise ValueError(f"the data is {type(guide).__name__}, not a guide")
            change = None
            if paths is not None:
                change = MergedChange(number, tuple(json.loads(paths)), tuple(json.loads(gone or "[]")),
                                      definitions=tuple(json.loads(definitions or "[]")))
            unchanged = store.get(repository, number) == guide
            store.save(guide, visibility=visibility.get(repository, "private"), label_descriptions=descriptions.get(repository.casefold()),
                       change=change)  # fmt: skip
        except (ValueError, TypeError, KeyError, AttributeError, psycopg.DataError) as exc:
            damaged.append(f"tagview_guides row {row_id} ({repository}#{number}): {' '.join(str(exc).split())}")
            continue
        out.unchanged += unchanged
        out.written += not unchanged
    # Repositories marked public or private without a guide yet keep their visibility too.
    for name, vis in visibility.items():
        store.set_visibility(name, vis)
    out.repositories_found = len(visibility)
    out.repositories = sum(1 for name, vis in visibility.items() if before[name] != vis)
    return out


def _copy_jobs(source: sqlite3.Connection, db, tables: set[str], damaged: list[str]) -> tuple[int, int, int]:  # type: ignore[no-untyped-def]
    """``(rows found, rows added, rows already there)``; refused rows are named in ``damaged``."""
    import psycopg

    payload = (
        "(SELECT p.body FROM job_payloads p WHERE p.job_id = j.id)" if "job_payloads" in tables else "j.payload"
    )
    # Background jobs (a backfill's) stay background; a file from before priorities has none.
    known = {row[1] for row in source.execute("PRAGMA table_info(jobs)")}
    columns = _JOB_COLUMNS + (("priority",) if "priority" in known else ())
    rows = source.execute(
        f"SELECT j.id, {', '.join('j.' + c for c in columns)}, {payload} FROM jobs j ORDER BY j.id"
    ).fetchall()
    insert = (
        f"INSERT INTO jobs ({', '.join(columns)}, payload) "
        f"VALUES ({', '.join(['%s'] * (len(columns) + 1))}) ON CONFLICT (delivery_id) DO NOTHING"
    )
    added = present = 0
    with db.connection() as conn, conn.cursor() as cur:
        for row_id, *row in rows:
            values = dict(zip((*columns, "payload"), row, strict=True))
            if values["state"] == "running":  # its process is gone: queue it again, attempts kept
                values["state"] = "queued"
            if values["state"] == "done":
                values["payload"] = None
            elif values["payload"] is not None:
                values["payload"] = bytes(values["payload"])
            try:
                with conn.transaction():  # a savepoint: a refused row leaves the others in place
                    cur.execute(insert, tuple(values.values()))
            except (psycopg.DataError, psycopg.IntegrityError, TypeError, ValueError) as exc:
                damaged.append(f"jobs row {row_id} (delivery {values['delivery_id']}): {' '.join(str(exc).split())}")
                continue
            added += cur.rowcount
            present += cur.rowcount == 0
    return len(rows), added, present


def _copy_checkpoints(source: sqlite3.Connection, db) -> None:  # type: ignore[no-untyped-def]
    """Periodic work's checkpoints (how far each installation's reconcile passes got, when each
    repository joined); one PostgreSQL already holds is newer (its replicas ran) and stays."""
    rows = source.execute("SELECT name, value, updated_at FROM checkpoints").fetchall()
    with db.connection() as conn:
        for row in rows:
            conn.execute(
                "INSERT INTO checkpoints (name, value, updated_at) VALUES (%s, %s, %s) ON CONFLICT (name) DO NOTHING", row
            )
