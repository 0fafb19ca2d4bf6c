"""A repository renamed or transferred takes its stored guides along: one suite per backend.

``rename(old, new)`` moves every row the tag view keeps under a repository's name (the
guides and their data, labels, areas, cards, changed paths, the kept counts, the label
descriptions and the visibility) in one transaction, merging into rows the new name
already has.
"""

from __future__ import annotations

import pytest
from pg_helpers import pg_url  # noqa: F401 - fixture
from test_tagview_store import make_guide, pg_store, sqlite_store, store  # noqa: F401 - fixtures

from bot.engine.history.coupling import MergedChange
from bot.tagview.store import GuideStore

OLD, NEW = "acme/rocket", "acme/rocket-ng"


def run_sql(store, query: str, params: tuple = ()) -> None:
    """Run one statement on the store's own database (``?`` marks, rewritten for PostgreSQL)."""
    if isinstance(store, GuideStore):
        store.connection.execute(query, params)
        return
    with store.database.pool.connection() as conn:
        conn.execute(query.replace("?", "%s"), params)


def save(store, repository: str, number: int, vis: str | None = None, **changes) -> None:
    data = make_guide(number, repository=repository, **changes)
    change = MergedChange(number, (f"src/{number}.py", "src/core.py"), (), data["merged_at"] or "", "octocat")
    store.save(data, change=change, label_descriptions={"bug": "Something is broken"}, visibility=vis)


def test_a_renamed_repository_takes_every_row_along(store):
    for number in (1, 2, 3):
        save(store, OLD, number, labels=["bug", f"l{number}"], areas=["core"])
    store.set_visibility(OLD, "public")
    assert store.rename(OLD, NEW) == 3
    # Nothing is left under the old name.
    assert store.visibility(OLD) is None and store.canonical_name(OLD) is None
    assert store.query(OLD).total == 0 and store.labels(OLD) == [] and store.areas(OLD) == []
    assert store.get(OLD, 1) is None and store.merged_changes(OLD) == [] and store.cards(OLD, [1], "en") == {}
    # Everything is under the new one.
    assert store.visibility(NEW) == "public" and store.canonical_name(NEW) == NEW
    assert [(r.name, r.visibility, r.guides) for r in store.repositories()] == [(NEW, "public", 3)]
    assert store.query(NEW).total == 3 and store.query(NEW, label="bug").total == 3
    assert [(c.name, c.count, c.description) for c in store.labels(NEW)] == [
        ("bug", 3, "Something is broken"), ("l1", 1, ""), ("l2", 1, ""), ("l3", 1, "")]  # fmt: skip
    assert store.areas(NEW) == [("core", 3)]
    assert store.get(NEW, 2)["repository"] == NEW and store.get(NEW, 2)["title"] == "[core] fix: thing 2"
    assert [c.number for c in store.merged_changes(NEW)] == [1, 2, 3]
    assert set(store.cards(NEW, [1, 2], "en")) == {1, 2}
    assert [row.number for row in store.query(NEW, search="thing 2").items] == [2]
    assert [s.name for s in store.sections(NEW)] == ["bug", "l1", "l2", "l3"]
    # The moved rows go on being kept: a later save and a delete move the counts.
    save(store, NEW, 4)
    assert store.delete(NEW, 1)
    assert store.query(NEW).total == 3 and {c.name: c.count for c in store.labels(NEW)}["bug"] == 3
    assert [(r.name, r.guides) for r in store.repositories()] == [(NEW, 3)]


def test_a_rename_onto_a_name_with_guides_keeps_the_newest_guide_of_each_pull_request(store):
    for number in (1, 2, 3):
        save(store, OLD, number, title=f"old {number}", labels=["bug", "old"])
    for number in (2, 3, 4):
        save(store, NEW, number, title=f"new {number}", labels=["bug", "new"], areas=["docs"])
    store.set_visibility(OLD, "public")
    store.set_visibility(NEW, "public")
    # #2 was stored last under the new name, #3 under the old one.
    run_sql(store, "UPDATE tagview_guides SET stored_at = ? WHERE repository = ? AND number = 2", ("2026-01-01T00:00:00Z", OLD))
    run_sql(store, "UPDATE tagview_guides SET stored_at = ? WHERE repository = ? AND number = 3", ("2026-01-01T00:00:00Z", NEW))
    assert store.rename(OLD, NEW) == 2  # #2 of the old name is not taken along
    assert {n: store.get(NEW, n)["title"] for n in (1, 2, 3, 4)} == {1: "old 1", 2: "new 2", 3: "old 3", 4: "new 4"}
    assert store.query(NEW).total == 4 and [(r.name, r.guides) for r in store.repositories()] == [(NEW, 4)]
    assert {c.name: c.count for c in store.labels(NEW)} == {"bug": 4, "old": 2, "new": 2}
    assert store.areas(NEW) == [("core", 2), ("docs", 2)]
    assert [c.number for c in store.merged_changes(NEW)] == [1, 2, 3, 4]
    assert [row.number for row in store.query(NEW, search="old").items] == [3, 1]
    assert store.visibility(NEW) == "public"


@pytest.mark.parametrize("private", [OLD, NEW])
def test_a_merge_of_two_names_is_private_when_either_is(store, private):
    save(store, OLD, 1)
    save(store, NEW, 2)
    for name in (OLD, NEW):
        store.set_visibility(name, "private" if name == private else "public")
    store.rename(OLD, NEW)
    assert store.visibility(NEW) == "private"


def test_a_change_of_case_renames_in_place(store):
    save(store, OLD, 1, vis="public")
    assert store.rename(OLD, "Acme/Rocket") == 1
    assert store.canonical_name(OLD) == "Acme/Rocket" and store.visibility("Acme/Rocket") == "public"
    assert store.query("Acme/Rocket").total == 1 and {c.name: c.count for c in store.labels(OLD)} == {"bug": 1}
    assert store.get(OLD, 1)["repository"] == "Acme/Rocket"


def test_renaming_a_repository_the_store_does_not_know_changes_nothing(store):
    save(store, NEW, 1, vis="public")
    assert store.rename("acme/unknown", NEW) == 0
    assert store.rename(NEW, NEW) == 1
    assert [(r.name, r.visibility, r.guides) for r in store.repositories()] == [(NEW, "public", 1)]
