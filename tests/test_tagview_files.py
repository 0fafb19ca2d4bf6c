"""The tag view's stores keep each guide's changed paths (for change coupling): written with
the guide, read back oldest first before a time, on SQLite and on PostgreSQL alike."""

from __future__ import annotations

import pytest

from bot.engine.history.coupling import MergedChange
from bot.tagview.store import GuideStore
from pg_helpers import pg_url  # noqa: F401 - fixture
from test_tagview_store import make_guide


@pytest.fixture
def sqlite_store(tmp_path):
    with GuideStore(tmp_path / "prguide.db") as s:
        yield s


@pytest.fixture
def pg_store(pg_url):  # noqa: F811 - the fixture imported above
    from bot.tagview.pgstore import PgGuideStore

    with PgGuideStore.open(pg_url) as s:
        yield s


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
