"""The tag view over PostgreSQL serves the same pages and JSON as over SQLite, private stays private.

The same guides go into both stores; every page, JSON answer and exported file must be
byte-for-byte the same. Needs PostgreSQL (``PRGUIDE_TEST_DATABASE_URL``; skipped with the
reason when unreachable, failed in CI).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from aiohttp.test_utils import TestClient, TestServer
from test_tagview_store import make_guide

from bot.cli import main
from bot.tagview.export import export_site
from bot.tagview.store import GuideStore
from bot.tagview.web import TagViewSettings, create_app
from pg_helpers import pg_url  # noqa: F401 - fixture
from sandbox_helpers import app_private_key  # noqa: F401 - fixture

TOKEN = "t" * 24


def fill(store) -> None:
    for n in range(1, 8):
        store.save(
            make_guide(n, labels=["bug"] + (["ci"] if n % 2 else []), areas=["core", "ci"][: 1 + n % 2],
                       importance=1 + n, reading_level=["deep", "quick", "skim"][n % 3]),
            visibility="public", label_descriptions={"ci": "Continuous integration"},
        )
    store.save(make_guide(9, title="<script>x()</script> rollout", merged_at=None), visibility="public")
    store.save(make_guide(1, repository="acme/Secret", title="hidden work"), visibility="private")


@pytest.fixture
def stores(tmp_path, pg_url):  # noqa: F811 - the fixture imported above
    from bot.tagview.pgstore import PgGuideStore

    with GuideStore(tmp_path / "prguide.db") as lite, PgGuideStore.open(pg_url) as post:
        fill(lite)
        fill(post)
        yield lite, post


PATHS = [
    "/repos",
    "/repos/acme/rocket/tags",
    "/repos/ACME/Rocket/tags?lang=zh",
    "/repos/acme/rocket/tags?label=ci&level=deep",
    "/repos/acme/rocket/tags?search=roll&min_importance=3",
    "/repos/acme/rocket/tags?since=2026-01-03&until=2026-01-05&area=CI",
    "/repos/acme/rocket/tags.json",
    "/repos/acme/rocket/tags.json?label=bug&limit=2&offset=2",
    "/repos/acme/rocket/tags.json?search=thing%206",
    "/repos/acme/rocket/tags.json?level=slow",
    "/repos/acme/rocket/pulls/3/guide",
    "/repos/acme/rocket/pulls/99/guide",
    "/repos/acme/secret/tags",
    "/repos/acme/secret/tags.json",
    "/repos/acme/secret/pulls/1/guide",
]


async def answers(store, settings: TagViewSettings, headers: dict | None = None) -> list[tuple[int, str]]:
    async with TestClient(TestServer(create_app(store, settings))) as client:
        found = []
        origin = str(client.make_url("/")).rstrip("/")  # absolute links name the test server's port
        for path in PATHS:
            response = await client.get(path, headers=headers or {})
            found.append((response.status, (await response.text()).replace(origin, "ORIGIN")))
        return found


async def test_pages_and_json_are_the_same_on_both_backends(stores):
    lite, post = stores
    public = TagViewSettings()
    on_sqlite, on_pg = await answers(lite, public), await answers(post, public)
    for path, a, b in zip(PATHS, on_sqlite, on_pg, strict=True):
        assert a == b, path
    statuses = dict(zip(PATHS, (status for status, _ in on_pg), strict=True))
    # Private stays private without the token: 404 as for a repository that does not exist.
    assert statuses["/repos/acme/secret/tags"] == statuses["/repos/acme/secret/pulls/1/guide"] == 404
    assert "hidden work" not in on_pg[0][1] and statuses["/repos/acme/rocket/tags.json"] == 200
    with_token = {"Authorization": f"Bearer {TOKEN}"}
    guarded = TagViewSettings(view_token=TOKEN)
    authorised = await answers(post, guarded, with_token)
    assert authorised == await answers(lite, guarded, with_token)
    assert dict(zip(PATHS, (s for s, _ in authorised), strict=True))["/repos/acme/secret/pulls/1/guide"] == 200


def tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_export_is_the_same_and_the_view_command_reads_postgresql(stores, pg_url, tmp_path, capsys):  # noqa: F811
    lite, _post = stores
    export_site(lite, tmp_path / "from-sqlite")
    assert main(["view", "--database-url", pg_url, "--export", str(tmp_path / "from-pg")]) == 0
    assert tree(tmp_path / "from-pg") == tree(tmp_path / "from-sqlite")
    err = capsys.readouterr().err
    assert "left out 1 private repository" in err


def test_view_reads_the_database_url_from_the_environment(stores, pg_url, tmp_path, monkeypatch, capsys):  # noqa: F811
    monkeypatch.setenv("PRGUIDE_DATABASE_URL", pg_url)
    assert main(["view", "--export", str(tmp_path / "out"), "--include-private"]) == 0
    assert "for 2 repositories" in capsys.readouterr().out
    assert "hidden work" in "".join(p.read_text(encoding="utf-8") for p in (tmp_path / "out").rglob("*.html"))


@pytest.mark.parametrize(
    "url, expected",
    [
        ("mysql://127.0.0.1/x", "must be a postgresql:// URL"),
        ("postgresql://nobody:secret@127.0.0.1:1/test", "is not usable"),
    ],
)
def test_view_with_an_unusable_database_url_is_one_line(url, expected, tmp_path, capsys):
    assert main(["view", "--database-url", url, "--export", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert expected in err and err.count("\n") == 1 and "secret" not in err and "Traceback" not in err


def test_the_server_gives_the_tag_view_its_one_pool(pg_url, tmp_path, app_private_key):  # noqa: F811
    """With PRGUIDE_DATABASE_URL the app factory opens nothing; start-up binds the replica's pool."""
    from bot.app.server import STATE, create_app as create_server_app
    from bot.tagview.pgstore import PgGuideStore
    from loopback import settings_for

    settings = settings_for(type("S", (), {"base_url": "http://127.0.0.1:9"})(), app_private_key, tmp_path,
                            database_url=pg_url)
    guides = create_server_app(settings).__getitem__(STATE).options["guides"]
    assert isinstance(guides, PgGuideStore) and not guides.bound
    with pytest.raises(RuntimeError, match="no database yet"):
        guides.repositories()
    guides.close()  # nothing to close, no error
    with PgGuideStore.open(pg_url) as opened:
        guides.bind(opened.database)
        guides.save(make_guide(1), visibility="public")
        assert guides.bound and [r.name for r in opened.repositories()] == ["acme/rocket"]
