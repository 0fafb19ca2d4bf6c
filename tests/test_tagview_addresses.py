"""Absolute links and feed ids behind a TLS proxy: the public URL, trusted forwarded headers, stable ids.

Every request goes over loopback HTTP to the tag view server; the guide comment's link
to its page is checked against the GitHub sandbox.
"""

from __future__ import annotations

import ipaddress

import feedparser
import pytest
from loopback import REPO, SMALL_PR, app_private_key, start_loopback  # noqa: F401 - fixture
from test_tagview_store import make_guide
from test_tagview_web import client_for

from bot.app.settings import SettingsError, from_env
from bot.app.server import wait_idle
from bot.tagview.addresses import forwarded, parse_public_url, parse_trusted_proxies, trusted
from bot.tagview.store import GuideStore
from bot.tagview.web import TagViewSettings

PUBLIC = "https://guides.example.com"
LOOPBACK = (ipaddress.ip_network("127.0.0.0/8"), ipaddress.ip_network("::1/128"))


@pytest.fixture
def store(tmp_path):
    with GuideStore(tmp_path / "prguide.db") as s:
        for n in (1, 2, 3):
            s.save(make_guide(n, labels=["bug"], reading_level="deep"), visibility="public")
        yield s


def feed_of(body: bytes):
    parsed = feedparser.parse(body)
    assert not parsed.bozo, parsed.get("bozo_exception")
    return parsed


def links_of(feed) -> dict[str, str]:
    return {link.rel: link.href for link in feed.feed.links}


async def test_the_public_url_makes_every_absolute_link(store):
    async with await client_for(store, public_url=PUBLIC) as client:
        feed = feed_of(await (await client.get("/repos/acme/rocket/tags.atom?label=bug&lang=zh")).read())
        assert links_of(feed) == {
            "self": f"{PUBLIC}/repos/acme/rocket/tags.atom?label=bug&lang=zh",
            "alternate": f"{PUBLIC}/repos/acme/rocket/tags?label=bug&lang=zh",
        }
        assert [e.link for e in feed.entries] == [f"{PUBLIC}/repos/acme/rocket/pulls/{n}/guide?lang=zh" for n in (3, 2, 1)]
        digest = feed_of(await (await client.get("/repos/acme/rocket/digest.atom?since=2026-01-01&until=2026-01-07")).read())
        assert links_of(digest)["self"] == f"{PUBLIC}/repos/acme/rocket/digest.atom?since=2026-01-01&until=2026-01-07"
        response = await client.get("/repos/acme/rocket/tags.json?per_page=1&page=2")
        body = await response.json()
        assert body["items"][0]["guide_url"] == f"{PUBLIC}/repos/acme/rocket/pulls/2/guide"
        assert body["next"] == f"{PUBLIC}/repos/acme/rocket/tags.json?page=3&per_page=1"
        assert all(f"<{PUBLIC}/" in part for part in response.headers["Link"].split(", "))


async def test_a_public_url_with_a_path_prefixes_every_link(store):
    async with await client_for(store, public_url="https://example.com/prguide/") as client:
        html = await (await client.get("/repos/acme/rocket/tags")).text()
        assert '<a href="/prguide/repos/acme/rocket/pulls/3/guide">' in html
        assert 'href="/prguide/repos/acme/rocket/tags.atom"' in html and 'action="/prguide/repos/acme/rocket/tags"' in html
        feed = feed_of(await (await client.get("/repos/acme/rocket/tags.atom")).read())
        assert links_of(feed)["self"] == "https://example.com/prguide/repos/acme/rocket/tags.atom"
        assert feed.entries[0].link == "https://example.com/prguide/repos/acme/rocket/pulls/3/guide"


PROXIED = {"X-Forwarded-Proto": "https", "X-Forwarded-Host": "guides.example.com"}


async def test_forwarded_scheme_and_host_count_only_from_a_trusted_proxy(store):
    async with await client_for(store) as client:
        feed = feed_of(await (await client.get("/repos/acme/rocket/tags.atom", headers=PROXIED)).read())
        assert links_of(feed)["self"] == f"http://127.0.0.1:{client.port}/repos/acme/rocket/tags.atom"
    async with await client_for(store, trusted_proxies=LOOPBACK) as client:
        feed = feed_of(await (await client.get("/repos/acme/rocket/tags.atom", headers=PROXIED)).read())
        assert links_of(feed)["self"] == "https://guides.example.com/repos/acme/rocket/tags.atom"
        assert feed.entries[0].link == "https://guides.example.com/repos/acme/rocket/pulls/3/guide"
        # RFC 7239 wins; of several proxies, the nearest one's (the last) values count.
        headers = {"Forwarded": 'for=192.0.2.1;proto=http;host=a.example, for="10.0.0.2";proto=https;host="b.example:8443"',
                   **PROXIED}
        body = await (await client.get("/repos/acme/rocket/tags.json", headers=headers)).json()
        assert body["items"][0]["guide_url"] == "https://b.example:8443/repos/acme/rocket/pulls/3/guide"
        # A host that could end the URL's authority is not used.
        body = await (await client.get("/repos/acme/rocket/tags.json", headers={"X-Forwarded-Host": "evil.example/x?"})).json()
        assert body["items"][0]["guide_url"].startswith(f"http://127.0.0.1:{client.port}/")
    async with await client_for(store, public_url=PUBLIC, trusted_proxies=LOOPBACK) as client:
        body = await (await client.get("/repos/acme/rocket/tags.json", headers=PROXIED)).json()
        assert body["items"][0]["guide_url"].startswith(f"{PUBLIC}/")  # the public URL wins


async def test_feed_and_entry_ids_do_not_change_with_the_host_or_the_query_order(store):
    async with await client_for(store) as client:
        one = feed_of(await (await client.get("/repos/acme/rocket/tags.atom?label=bug&level=deep",
                                              headers={"Host": "a.example"})).read())
        two = feed_of(await (await client.get("/repos/ACME/rocket/tags.atom?level=deep&label=bug",
                                              headers={"Host": "b.example:8080"})).read())
        other = feed_of(await (await client.get("/repos/acme/rocket/tags.atom?label=bug")).read())
        digest = feed_of(await (await client.get("/repos/acme/rocket/digest.atom?since=2026-01-01&until=2026-01-07")).read())
    ids = [e.id for e in one.entries]
    assert one.feed.id == two.feed.id and one.feed.id.startswith("urn:uuid:") and other.feed.id != one.feed.id
    assert ids == [e.id for e in two.entries] == [e.id for e in other.entries]
    assert len(set(ids)) == 3 and all(i.startswith("urn:uuid:") for i in ids)
    # A pull request keeps its entry id in every feed.
    assert {e.id for e in digest.entries} == set(ids)
    # Setting a public URL later changes no id either.
    async with await client_for(store, public_url=PUBLIC) as client:
        public = feed_of(await (await client.get("/repos/acme/rocket/tags.atom?label=bug&level=deep")).read())
    assert public.feed.id == one.feed.id and [e.id for e in public.entries] == ids


async def test_an_empty_feed_is_dated_by_the_newest_merge_not_1970(store):
    async with await client_for(store) as client:
        for path in ("/repos/acme/rocket/tags.atom?label=none", "/repos/acme/rocket/digest.atom?since=2025-01-01&until=2025-01-07"):
            feed = feed_of(await (await client.get(path)).read())
            assert feed.entries == [] and feed.feed.updated == "2026-01-03T12:00:00+00:00", path


def test_settings_read_the_public_url_and_the_trusted_proxies():
    base = {"GITHUB_APP_ID": "1", "GITHUB_WEBHOOK_SECRET": "s", "GITHUB_PRIVATE_KEY": app_key_text()}
    settings = from_env({**base, "PRGUIDE_PUBLIC_URL": "https://guides.example.com/", "PRGUIDE_TRUSTED_PROXIES": "10.0.0.5, 172.16.0.0/12 ::1"})
    assert settings.public_url == "https://guides.example.com"
    assert settings.trusted_proxies == tuple(ipaddress.ip_network(n) for n in ("10.0.0.5/32", "172.16.0.0/12", "::1/128"))
    view = TagViewSettings.coerce(settings)
    assert (view.public_url, view.trusted_proxies) == (settings.public_url, settings.trusted_proxies)
    with pytest.raises(SettingsError) as caught:
        from_env({**base, "PRGUIDE_PUBLIC_URL": "guides.example.com", "PRGUIDE_TRUSTED_PROXIES": "10.0.0.5,proxy"})
    assert any(p.startswith("PRGUIDE_PUBLIC_URL must be the http(s) address") for p in caught.value.problems)
    assert "PRGUIDE_TRUSTED_PROXIES: 'proxy' is not an IP address or network (such as 10.0.0.5 or 10.0.0.0/8)" in caught.value.problems


def test_address_parsing():
    assert parse_public_url(" https://a.example/x/ ") == "https://a.example/x" and parse_public_url("") is None
    for bad in ("ftp://a.example", "https://a.example/?q=1", "https://user@a.example", "https://a.example:99999"):
        with pytest.raises(ValueError):
            parse_public_url(bad)
    proxies = parse_trusted_proxies("10.0.0.0/8 ::1")
    assert trusted("10.1.2.3", proxies) and trusted("::1", proxies)
    assert not trusted("192.0.2.1", proxies) and not trusted(None, proxies) and not trusted("/run/sock", proxies)
    assert forwarded({"X-Forwarded-Proto": "gopher", "X-Forwarded-Host": "a b"}) == (None, None)
    with pytest.raises(ValueError, match="'nope' is not an IP address"):
        parse_trusted_proxies("10.0.0.1,nope")


def app_key_text() -> str:
    from sandbox_helpers import generate_private_key_pem

    return generate_private_key_pem().decode()


async def test_the_guide_comment_links_its_page_at_the_public_url(
    app_private_key, load_bundle_json, webhook_payload, tmp_path  # noqa: F811
):
    bundles = {SMALL_PR: load_bundle_json(SMALL_PR)}
    async with start_loopback(app_private_key, tmp_path, bundles, settings={"public_url": PUBLIC}) as lb:
        await lb.merged(SMALL_PR)
        (comment,) = lb.comments(SMALL_PR)
        assert f"({PUBLIC}/repos/{REPO}/pulls/{SMALL_PR}/guide)" in comment.body
        # The page is there, at that path, for anyone.
        page = await lb.client.get(f"/repos/{REPO}/pulls/{SMALL_PR}/guide")
        assert page.status == 200
        # A private repository's guide links no page.
        payload = lb.payload(SMALL_PR)
        payload["repository"]["private"] = True
        resp = await lb.deliver(payload, delivery="d-private")
        assert resp.status == 202
        await wait_idle(lb.app)
        (comment,) = lb.comments(SMALL_PR)
        assert f"{PUBLIC}/repos/" not in comment.body
        assert (await lb.client.get(f"/repos/{REPO}/pulls/{SMALL_PR}/guide")).status == 404


async def test_a_refreshed_guide_keeps_the_link_to_its_page(
    app_private_key, load_bundle_json, webhook_payload, tmp_path  # noqa: F811
):
    bundles = {SMALL_PR: load_bundle_json(SMALL_PR)}
    sandbox_options = {"collaborators": {"mo": "maintain"}}
    async with start_loopback(app_private_key, tmp_path, bundles, settings={"public_url": PUBLIC},
                              sandbox_options=sandbox_options) as lb:
        await lb.merged(SMALL_PR)
        written = lb.sandbox.state.create_comment(*REPO.split("/"), SMALL_PR, "/prguide refresh", user="mo")
        payload = webhook_payload("issue_comment", "created.with-installation.payload.json")
        pull = bundles[SMALL_PR]["pull"]
        payload["issue"].update(number=SMALL_PR, title=pull["title"], user=pull["user"], state="closed", labels=[],
                                pull_request={"url": pull["url"], "html_url": pull["html_url"], "merged_at": pull["merged_at"]})
        payload["comment"].update(id=written.id, body=written.body, user={"login": "mo", "type": "User", "id": 1})
        payload["sender"] = {"login": "mo", "type": "User", "id": 1}
        payload["repository"].update(full_name=REPO, name=REPO.split("/")[1], default_branch="main", private=False)
        payload["installation"] = {"id": 1}
        resp = await lb.deliver(payload, event="issue_comment", delivery="c-1")
        assert resp.status == 202
        await wait_idle(lb.app)
        assert "prguide[bot]" in [r.user for r in lb.sandbox.state.reactions.get(written.id, [])]  # acted on
        assert lb.jobs()["done"] == 2 and lb.jobs()["parked"] == 0
        guide = next(c for c in lb.comments(SMALL_PR) if c.user == "prguide[bot]" and "prguide:v1" in c.body)
        assert f"({PUBLIC}/repos/{REPO}/pulls/{SMALL_PR}/guide)" in guide.body
