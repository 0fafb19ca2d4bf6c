"""``prguide db copy``: a single-machine SQLite installation moves into PostgreSQL, nothing lost or doubled."""

from __future__ import annotations

import pytest
from test_tagview_store import make_guide

from bot.app import pg
from bot.app.jobstore import JobStore
from bot.cli import main
from bot.engine.history.coupling import MergedChange
from bot.tagview.store import GuideStore
from pg_helpers import pg_url  # noqa: F401 - fixture

T0 = 1_780_000_000.0


@pytest.fixture
def installation(tmp_path):
    """An SQLite file with guides (public, private, human labels) and jobs in every state."""
    path = tmp_path / "prguide.db"
    with GuideStore(path) as guides:
        guides.save(make_guide(1, labels=["bug", "needs-docs"], label_details=[
            {"name": "bug", "source": "rule", "rule": "fix-title"},
            {"name": "needs-docs", "source": "human", "rule": None},
        ]), visibility="public", label_descriptions={"needs-docs": "Docs must follow"},
            change=MergedChange(1, ("rocket/core.py", "docs/new.md"), ("docs/old.md",)))
        guides.save(make_guide(2, title="数据 rollout", extra={"kept": [1, 2]}), visibility="public")
        guides.save(make_guide(3, repository="acme/Secret", title="hidden"), visibility="private")
        guides.set_visibility("acme/empty", "public")
    jobs = JobStore.open(str(path), clock=lambda: T0)
    for n, key in enumerate(["acme/rocket#1", "acme/rocket#1", "acme/rocket#2", "acme/rocket#3", "acme/rocket#4"]):
        jobs.enqueue(f"d{n}", "pull_request", key, f'{{"n": {n}}}'.encode(), installation_id=7, action="closed", now=T0 + n)
    done = jobs.claim(now=T0 + 10)  # d0
    jobs.complete(done.id, now=T0 + 11)
    parked = jobs.claim(now=T0 + 12)  # d1 (its key is free again)
    jobs.park(parked.id, error="boom", now=T0 + 13)
    running = jobs.claim(now=T0 + 14)  # d2 stays running: its process "died"
    assert running.delivery_id == "d2"
    jobs.retry(jobs.claim(now=T0 + 15).id, delay=60, error="rate limited", now=T0 + 16)  # d3: due later, 1 attempt
    jobs.conn.execute("UPDATE jobs SET priority = 1 WHERE delivery_id = 'd4'")  # d4: background work (a backfill's)
    jobs.close()
    return path


def pg_jobs(url: str) -> dict[str, tuple]:
    db = pg.connect(url, max_size=1)
    try:
        with db.pool.connection() as conn:
            rows = conn.execute(
                "SELECT delivery_id, key, state, attempts, not_before, payload, error, installation_id FROM jobs ORDER BY id"
            ).fetchall()
    finally:
        db.close()
    return {r[0]: (r[1], r[2], r[3], r[4], bytes(r[5]) if r[5] is not None else None, r[6], r[7]) for r in rows}


def test_copy_moves_guides_and_jobs_and_is_idempotent(installation, pg_url, capsys):  # noqa: F811
    assert main(["db", "copy", "--from", f"sqlite:{installation}", "--to", pg_url]) == 0
    out = capsys.readouterr().out
    assert out.startswith("copied 3 guides, 3 repositories and 5 jobs from ") and "already there" not in out

    from bot.tagview.pgstore import PgGuideStore

    with GuideStore(installation) as lite, PgGuideStore.open(pg_url) as post:
        assert post.repositories() == lite.repositories()
        for repo in ("acme/rocket", "acme/Secret"):
            assert post.query(repo, limit=500) == lite.query(repo, limit=500)
            assert post.labels(repo) == lite.labels(repo)
            assert post.sections(repo) == lite.sections(repo)
            for row in lite.query(repo).items:
                assert post.get(repo, row.number) == lite.get(repo, row.number)
            assert post.merged_changes(repo) == lite.merged_changes(repo)  # change coupling's history
        assert [c.paths for c in post.merged_changes("acme/rocket")] == [("rocket/core.py", "docs/new.md")]
        assert post.visibility("acme/secret") == "private" and post.visibility("acme/empty") == "public"
        with post.database.pool.connection() as conn:
            provenance = conn.execute("SELECT label, source, rule FROM tagview_labels WHERE number = 1 ORDER BY label").fetchall()
        assert [tuple(r) for r in provenance] == [("bug", "rule", "fix-title"), ("needs-docs", "human", None)]

    jobs = pg_jobs(pg_url)
    assert list(jobs) == ["d0", "d1", "d2", "d3", "d4"]  # queue order kept: one PR's jobs still run in order
    assert jobs["d0"][1:3] == ("done", 1) and jobs["d0"][4] is None  # done: delivery id kept, payload not
    assert jobs["d1"][1:] == ("parked", 1, T0 + 13, b'{"n": 1}', "boom", 7)
    assert jobs["d2"][1:3] == ("queued", 1) and jobs["d2"][4] == b'{"n": 2}'  # interrupted: queued again
    assert jobs["d3"][1:4] == ("queued", 1, T0 + 16 + 60) and jobs["d3"][5] == "rate limited"
    assert jobs["d4"][1:5] == ("queued", 0, T0 + 4, b'{"n": 4}')
    db = pg.connect(pg_url, max_size=1)
    try:
        with db.pool.connection() as conn:
            priorities = dict(conn.execute("SELECT delivery_id, priority FROM jobs").fetchall())
    finally:
        db.close()
    assert priorities == {"d0": 0, "d1": 0, "d2": 0, "d3": 0, "d4": 1}  # background stays background

    assert main(["db", "copy", "--from", f"sqlite:{installation}", "--to", pg_url]) == 0
    again = capsys.readouterr().out  # a second run copies nothing, and says so
    assert again.startswith("copied 0 guides, 0 repositories and 0 jobs from ") and again.endswith("; already there: 3 guides, 5 jobs\n")
    assert pg_jobs(pg_url) == jobs
    with PgGuideStore.open(pg_url) as post:
        assert [(r.name, r.guides) for r in post.repositories()] == [("acme/empty", 0), ("acme/rocket", 2), ("acme/Secret", 1)]


def test_copy_refreshes_the_planners_statistics_of_what_it_filled(installation, pg_url, capsys):  # noqa: F811
    """A filled schema whose statistics still say "empty" plans a filtered page as a scan of
    every label row per guide; the copy runs ANALYZE on what it wrote (autovacuum may take minutes)."""
    assert main(["db", "copy", "--from", f"sqlite:{installation}", "--to", pg_url]) == 0
    db = pg.connect(pg_url, max_size=1)
    try:
        with db.pool.connection() as conn:
            analysed = {r[0] for r in conn.execute(
                "SELECT relname FROM pg_stat_user_tables WHERE schemaname = current_schema() AND last_analyze IS NOT NULL"
            )}
    finally:
        db.close()
    assert {"tagview_guides", "tagview_labels", "tagview_areas", "tagview_counts", "jobs"} <= analysed


@pytest.mark.parametrize(
    "argv, expected",
    [
        (["--from", "mysql:x.db"], "--from must be sqlite:PATH"),
        (["--from", "sqlite:/nonexistent/prguide.db"], "no SQLite database at /nonexistent/prguide.db"),
        (["--from", "sqlite:{db}", "--to", "http://x"], "--to must be a postgresql:// URL"),
        (["--from", "sqlite:{db}", "--to", "postgresql://u:pw@127.0.0.1:1/x"], "u:***@127.0.0.1:1"),
        (["--from", "sqlite:{text}"], "is not an SQLite database"),
        (["--from", "sqlite:{empty}"], "holds no prguide tables"),
    ],
)
def test_copy_errors_are_one_line(argv, expected, installation, tmp_path, capsys, monkeypatch):
    from pg_helpers import TEST_DATABASE_URL

    monkeypatch.setenv("PRGUIDE_DATABASE_URL", TEST_DATABASE_URL)
    (tmp_path / "notes.txt").write_text("not a database " * 100)
    import sqlite3

    sqlite3.connect(tmp_path / "empty.db").execute("CREATE TABLE other (x)").connection.close()
    args = [a.format(db=installation, text=tmp_path / "notes.txt", empty=tmp_path / "empty.db") for a in argv]
    assert main(["db", "copy", *args]) in (1, 2)
    err = capsys.readouterr().err
    assert expected in err and err.count("\n") == 1 and "Traceback" not in err and "pw@" not in err


def test_a_damaged_guide_is_named_and_everything_else_is_copied(installation, pg_url, capsys):  # noqa: F811
    import sqlite3

    from bot.tagview.pgstore import PgGuideStore

    with sqlite3.connect(installation) as conn:  # guide 2's data cut short, as by a crash mid-write
        (row,) = conn.execute("SELECT id FROM tagview_guides WHERE number = 2").fetchone()
        conn.execute("UPDATE tagview_guide_data SET data = '{\"number\": 2, \"title' WHERE guide_id = ?", (row,))
    assert main(["db", "copy", "--from", f"sqlite:{installation}", "--to", pg_url]) == 1
    out, err = capsys.readouterr()
    assert out.startswith("copied 2 guides, 3 repositories and 5 jobs from ")
    first, last = err.splitlines()
    assert first.startswith(f"prguide db copy: tagview_guides row {row} (acme/rocket#2): ") and "Traceback" not in err
    assert last == "prguide db copy: 1 row was left behind (named above); everything else was copied"
    assert list(pg_jobs(pg_url)) == ["d0", "d1", "d2", "d3", "d4"]  # the jobs came along all the same
    with PgGuideStore.open(pg_url) as post:
        assert post.get("acme/rocket", 1) is not None and post.get("acme/Secret", 3) is not None
        assert post.get("acme/rocket", 2) is None


def test_one_guide_of_one_repository_is_said_in_the_singular_and_in_the_servers_language(tmp_path, pg_url, capsys, monkeypatch):  # noqa: F811
    path = tmp_path / "one.db"
    with GuideStore(path) as guides:
        guides.save(make_guide(1), visibility="public")
    assert main(["db", "copy", "--from", f"sqlite:{path}", "--to", pg_url]) == 0
    assert capsys.readouterr().out.startswith("copied 1 guide, 1 repository and 0 jobs from ")
    monkeypatch.setenv("PRGUIDE_LANG", "zh")
    assert main(["db", "copy", "--from", f"sqlite:{path}", "--to", pg_url]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"已从 {path} 向 ") and out.endswith("；已存在：1 份指南、0 个任务\n")


def test_db_migrate_creates_the_narrator_tables_too(pg_schema):
    """A fresh ``prguide db migrate`` (its own process: nothing imported beforehand) makes every
    table the server would, the narrator's cache and token count included."""
    import os
    import subprocess
    import sys

    import psycopg

    url, schema = pg_schema
    env = {k: v for k, v in os.environ.items() if not k.startswith("PRGUIDE_")}
    done = subprocess.run([sys.executable, "-m", "bot", "db", "migrate", "--url", url, "--schema", schema],
                          env=env, capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "narrator: version 1" in done.stdout
    with psycopg.connect(url) as conn:
        tables = {r[0] for r in conn.execute("SELECT table_name FROM information_schema.tables WHERE table_schema = %s", (schema,))}
    assert {"narrations", "narrator_tokens", "jobs", "tagview_guides"} <= tables


def test_a_second_copy_of_real_guides_in_both_languages_copies_nothing(corpus_dir, tmp_path, pg_url, capsys):  # noqa: F811
    """Guides as the engine stores them (both languages, claims, evidence) compare equal once copied."""
    from bot.engine.build import build_guide
    from bot.engine.rules import load_rules
    from bot.sources.bundle import load_bundle
    from bot.tagview.pgstore import PgGuideStore

    path, rules = tmp_path / "real.db", load_rules(["config/examples/verl.yml"])
    with GuideStore(path) as guides:
        for number in (7408, 7406, 7327):
            guides.save(build_guide(load_bundle(corpus_dir / f"{number}.json"), rules).record(), visibility="public")
    assert main(["db", "copy", "--from", f"sqlite:{path}", "--to", pg_url]) == 0
    assert capsys.readouterr().out.startswith("copied 3 guides, 1 repository and 0 jobs from ")
    assert main(["db", "copy", "--from", f"sqlite:{path}", "--to", pg_url]) == 0
    again = capsys.readouterr().out
    assert again.startswith("copied 0 guides, 0 repositories and 0 jobs from ") and again.endswith("; already there: 3 guides, 0 jobs\n")
    with PgGuideStore.open(pg_url) as post:
        assert post.cards("verl-project/verl", [7408], "zh")[7408]["lang"] == "zh"
