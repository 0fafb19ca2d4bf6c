"""The tag view's stores keep each guide's changed paths (for change coupling): written with
the guide, read back oldest first before a time, on SQLite and on PostgreSQL alike."""

from __future__ import annotations

import pytest

from bot.engine.history.coupling import MergedChange
from bot.tagview.store import GuideStore
from pg_helpers import pg_url  # noqa: F401 - fixture
from test_tagview_store import make_guide, pg_store, sqlite_store  # noqa: F401 - fixtures


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request):
    return request.getfixturevalue({"sqlite": "sqlite_store", "postgresql": "pg_store"}[request.param])


def change(number: int, *paths: str, gone: tuple[str, ...] = ()) -> MergedChange:
    return MergedChange(number, paths, gone, f"2026-01-{number:02d}T12:00:00Z", "octocat")


def test_paths_are_stored_with_the_guide_and_read_oldest_first(store):
    for n in (3, 1, 2):
        store.save(make_guide(n), change=change(n, f"src/{n}.py", "conf.yaml", gone=("old.py",) if n == 2 else ()))
    store.save(make_guide(4))  # a guide stored without its paths is not history
    found = store.merged_changes("acme/rocket")
    assert [c.number for c in found] == [1, 2, 3]
    assert found[1] == change(2, "src/2.py", "conf.yaml", gone=("old.py",))
    assert [c.number for c in store.merged_changes("ACME/Rocket", before="2026-01-03T12:00:00Z")] == [1, 2]
    assert [c.number for c in store.merged_changes("acme/rocket", limit=2)] == [2, 3]  # the newest two
    assert store.merged_changes("acme/other") == []


def test_saving_again_without_paths_keeps_them_and_with_paths_replaces_them(store):
    store.save(make_guide(5), change=change(5, "a.py"))
    store.save(make_guide(5, title="retitled"))
    assert store.merged_changes("acme/rocket")[0].paths == ("a.py",)
    store.save(make_guide(5), change=change(5, "b.py"))
    assert store.merged_changes("acme/rocket")[0].paths == ("b.py",)
    assert store.delete("acme/rocket", 5)
    assert store.merged_changes("acme/rocket") == []


def test_a_change_of_another_pull_request_is_refused(store):
    with pytest.raises(ValueError):
        store.save(make_guide(6), change=change(7, "a.py"))
    assert store.get("acme/rocket", 6) is None


def test_changed_definitions_are_stored_and_read_back(store):
    with_definitions = MergedChange(8, ("a.py",), (), "2026-01-08T12:00:00Z", "octocat", ("a.py::Trainer.fit", "a.py::step"))
    store.save(make_guide(8), change=with_definitions)
    store.save(make_guide(9), change=change(9, "b.py"))  # none known: an empty list
    found = store.merged_changes("acme/rocket")
    assert found[0] == with_definitions and found[1].definitions == ()
    with pytest.raises(ValueError):
        store.save(make_guide(10), change=MergedChange(10, ("a.py",), definitions=(3,)))  # type: ignore[arg-type]


def test_a_database_of_version_5_gains_the_definitions_column(tmp_path):
    import sqlite3

    from bot.app.db import migrate
    from bot.tagview.schema import COMPONENT, migrations

    conn = sqlite3.connect(tmp_path / "old.db")
    migrate(conn, COMPONENT, migrations()[:5])
    conn.execute("INSERT INTO tagview_guides (repository, number, title, stored_at) VALUES ('acme/rocket', 1, 't', '2026-01-01T00:00:00Z')")
    conn.execute("INSERT INTO tagview_guide_files (guide_id, paths, gone) VALUES (1, '[\"a.py\"]', '[]')")
    conn.commit()
    conn.close()
    with GuideStore(tmp_path / "old.db") as s:
        assert [tuple(r) for r in s.connection.execute("SELECT definitions FROM tagview_guide_files")] == [("[]",)]
        assert s.merged_changes("acme/rocket")[0].definitions == ()
