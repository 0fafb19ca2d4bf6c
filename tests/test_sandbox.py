"""The GitHub sandbox over loopback: auth, pull requests, comments, labels, reactions, permissions, contents."""

from __future__ import annotations

import base64
import hashlib
from urllib.parse import quote

import aiohttp
import pytest
from sandbox_helpers import (  # noqa: F401 - app_private_key and http are fixtures
    APP_ID,
    app_private_key,
    generate_private_key_pem,
    http,
    make_app_jwt,
    start_sandbox,
    synthetic_bundle,
)

REPO = "octo-org/demo"
API = f"/repos/{REPO}"


class FakeClock:
    """Epoch seconds that move only when a test says so."""

    def __init__(self, now: float = 1_700_000_000.0):
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
async def sandbox(app_private_key, clock):
    bundles = [
        synthetic_bundle(7),
        synthetic_bundle(8, files=65),
        synthetic_bundle(3, repo="octo-org/secret", private=True),
    ]
    async with start_sandbox(
        app_private_key,
        bundles=bundles,
        clock=clock,
        collaborators={"mia": "maintain", "ada": "admin", "tom": "triage"},
    ) as sb:
        yield sb


def bearer(value: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {value}"}


@pytest.fixture
def app_jwt(app_private_key, clock) -> str:
    return make_app_jwt(app_private_key, now=clock())


@pytest.fixture
async def auth(http, app_jwt) -> dict[str, str]:
    resp = await http.post("/app/installations/1/access_tokens", headers=bearer(app_jwt))
    assert resp.status == 201
    return {"Authorization": f"token {(await resp.json())['token']}"}


# ----- app JWTs ---------------------------------------------------------------------


@pytest.mark.parametrize("iss", [APP_ID, str(APP_ID)])
async def test_app_jwt_with_numeric_or_string_issuer_is_accepted(http, app_private_key, clock, iss):
    resp = await http.get("/app", headers=bearer(make_app_jwt(app_private_key, app_id=iss, now=clock())))
    assert resp.status == 200
    body = await resp.json()
    assert (body["id"], body["slug"], body["name"]) == (APP_ID, "prguide", "prguide")
    assert body["owner"]["login"]


async def test_jwt_signed_by_another_key_is_refused(http, clock):
    other = generate_private_key_pem()
    resp = await http.get("/app", headers=bearer(make_app_jwt(other, now=clock())))
    assert resp.status == 401
    body = await resp.json()
    assert body["message"] == "A JSON web token could not be decoded"
    assert body["documentation_url"].startswith("https://docs.github.com/")


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"iat_offset": -700, "lifetime": 600}, "'Expiration time' claim ('exp') must be a numeric value"),
        ({"lifetime": 601}, "'Expiration time' claim ('exp') is too far in the future"),
        ({"iat_offset": 120}, "'Issued at' claim ('iat') must be an Integer"),
        ({"app_id": 999}, "Integration not found"),
    ],
)
async def test_bad_jwt_claims_are_refused_with_githubs_message(http, app_private_key, clock, kwargs, message):
    resp = await http.get("/app", headers=bearer(make_app_jwt(app_private_key, now=clock(), **kwargs)))
    assert resp.status == 401
    assert (await resp.json())["message"].startswith(message)


async def test_jwt_expires_with_the_clock(http, app_jwt, clock):
    assert (await http.get("/app", headers=bearer(app_jwt))).status == 200
    clock.now += 600
    resp = await http.get("/app", headers=bearer(app_jwt))
    assert resp.status == 401


async def test_jwt_is_not_an_installation_token_and_vice_versa(http, app_jwt, auth):
    resp = await http.get(API, headers=bearer(app_jwt))
    assert resp.status == 401
    assert (await resp.json())["message"] == "Bad credentials"
    resp = await http.get("/app", headers=auth)
    assert resp.status == 401
    assert (await resp.json())["message"] == "A JSON web token could not be decoded"


async def test_repository_installation_needs_the_jwt(http, app_jwt):
    resp = await http.get(f"{API}/installation", headers=bearer(app_jwt))
    assert resp.status == 200
    body = await resp.json()
    assert body["id"] == 1 and body["app_id"] == APP_ID and body["account"]["login"] == "octo-org"
    assert (await http.get("/repos/nobody/nothing/installation", headers=bearer(app_jwt))).status == 404


# ----- installation tokens -------------------------------------------------------


async def test_token_is_issued_then_accepted(http, app_jwt, clock):
    resp = await http.post("/app/installations/1/access_tokens", headers=bearer(app_jwt))
    assert resp.status == 201
    body = await resp.json()
    assert body["token"].startswith("ghs_")
    assert body["expires_at"] == "2023-11-14T23:13:20Z"  # clock + 1 h
    resp = await http.get(API, headers=bearer(body["token"]))
    assert resp.status == 200
    repo = await resp.json()
    assert (repo["full_name"], repo["default_branch"], repo["private"]) == (REPO, "main", False)
    assert repo["owner"]["login"] == "octo-org"


async def test_token_for_another_installation_is_404(http, app_jwt):
    assert (await http.post("/app/installations/2/access_tokens", headers=bearer(app_jwt))).status == 404


@pytest.mark.parametrize("header", [None, "token ghs_notissued", "Basic abc"])
async def test_missing_or_unknown_token_is_bad_credentials(http, header):
    resp = await http.get(API, headers={"Authorization": header} if header else {})
    assert resp.status == 401
    assert (await resp.json())["message"] == "Bad credentials"


async def test_token_expires_with_the_clock(http, auth, clock):
    assert (await http.get(API, headers=auth)).status == 200
    clock.now += 3600
    resp = await http.get(API, headers=auth)
    assert resp.status == 401
    assert (await resp.json())["message"] == "Bad credentials"


async def test_tokens_expired_through_the_control_api_are_refused_and_new_ones_work(http, auth, app_private_key, clock):
    resp = await http.post("/_sandbox/tokens/expire")
    assert (await resp.json()) == {"expired": 1}
    assert (await http.get(API, headers=auth)).status == 401
    tokens = await (await http.get("/_sandbox/tokens")).json()
    assert tokens[0]["expired"] is True
    fresh = await http.post(
        "/app/installations/1/access_tokens", headers=bearer(make_app_jwt(app_private_key, now=clock()))
    )
    assert (await http.get(API, headers=bearer((await fresh.json())["token"]))).status == 200


async def test_token_lifetime_is_configurable(app_private_key, clock):
    async with start_sandbox(app_private_key, bundles=[synthetic_bundle(1)], clock=clock, token_lifetime=60) as sb:
        async with aiohttp.ClientSession(sb.base_url) as http:
            resp = await http.post(
                "/app/installations/1/access_tokens", headers=bearer(make_app_jwt(app_private_key, now=clock()))
            )
            token = (await resp.json())["token"]
            clock.now += 59
            assert (await http.get(API, headers=bearer(token))).status == 200
            clock.now += 1
            assert (await http.get(API, headers=bearer(token))).status == 401


async def test_revoked_token_is_refused(http, auth):
    assert (await http.delete("/installation/token", headers=auth)).status == 204
    assert (await http.get(API, headers=auth)).status == 401


# ----- pull requests ---------------------------------------------------------------


async def test_pull_request_and_lists(http, auth):
    pull = await (await http.get(f"{API}/pulls/7", headers=auth)).json()
    assert (pull["number"], pull["title"], pull["labels"]) == (7, "Change number 7", [])
    files = await (await http.get(f"{API}/pulls/7/files", headers=auth)).json()
    assert [f["filename"] for f in files] == ["src/module_0000.py", "src/module_0001.py", "src/module_0002.py"]
    assert await (await http.get(f"{API}/pulls/7/reviews", headers=auth)).json() == []
    assert await (await http.get(f"{API}/pulls/7/comments", headers=auth)).json() == []
    listed = await (await http.get(f"{API}/pulls?state=closed", headers=auth)).json()
    assert [p["number"] for p in listed] == [8, 7]
    assert await (await http.get(f"{API}/pulls", headers=auth)).json() == []


@pytest.mark.parametrize(
    "path",
    [
        "/repos/octo-org/demo/pulls/99",
        "/repos/nobody/nothing/pulls/7",
        "/repos/octo-org/demo/pulls/99/files",
        "/nowhere",
    ],
)
async def test_unknown_things_are_404_with_githubs_body(http, auth, path):
    resp = await http.get(path, headers=auth)
    assert resp.status == 404
    body = await resp.json()
    assert body["message"] == "Not Found"
    assert body["documentation_url"].startswith("https://docs.github.com/rest")


async def test_default_page_is_30_and_per_page_is_capped_at_100(http, auth):
    resp = await http.get(f"{API}/pulls/8/files", headers=auth)
    assert len(await resp.json()) == 30
    assert resp.headers["Link"].endswith('page=3>; rel="last"')
    resp = await http.get(f"{API}/pulls/8/files?per_page=500", headers=auth)
    assert len(await resp.json()) == 65
    assert "Link" not in resp.headers


@pytest.mark.corpus
async def test_corpus_pr_4795_pages_like_github(app_private_key, load_bundle_json, clock):
    bundle = load_bundle_json(4795)
    expected = [f["filename"] for f in bundle["files"]]
    assert len(expected) == 344
    async with start_sandbox(app_private_key, bundles=[bundle], clock=clock) as sb:
        async with aiohttp.ClientSession() as http:
            resp = await http.post(
                f"{sb.base_url}/app/installations/1/access_tokens",
                headers=bearer(make_app_jwt(app_private_key, now=clock())),
            )
            auth = bearer((await resp.json())["token"])
            base = f"{sb.base_url}/repos/verl-project/verl/pulls/4795/files"

            def link(page: int) -> str:
                return f"<{base}?per_page=100&page={page}>"

            expected_links = {
                1: f'{link(2)}; rel="next", {link(4)}; rel="last"',
                2: f'{link(1)}; rel="prev", {link(3)}; rel="next", {link(4)}; rel="last", {link(1)}; rel="first"',
                3: f'{link(2)}; rel="prev", {link(4)}; rel="next", {link(4)}; rel="last", {link(1)}; rel="first"',
                4: f'{link(3)}; rel="prev", {link(1)}; rel="first"',
            }
            seen: list[str] = []
            url, page = f"{base}?per_page=100", 1
            while url:
                resp = await http.get(url, headers=auth)
                assert resp.status == 200
                assert resp.headers["Link"] == expected_links[page]
                seen += [f["filename"] for f in await resp.json()]
                url = resp.links.get("next", {}).get("url")
                url = str(url) if url else None
                page += 1
            assert page - 1 == 4
            assert seen == expected


async def test_file_list_stops_at_3000(app_private_key, clock):
    async with start_sandbox(app_private_key, bundles=[synthetic_bundle(5, files=3500)], clock=clock) as sb:
        async with aiohttp.ClientSession(sb.base_url) as http:
            resp = await http.post(
                "/app/installations/1/access_tokens", headers=bearer(make_app_jwt(app_private_key, now=clock()))
            )
            auth = bearer((await resp.json())["token"])
            first = await http.get(f"{API}/pulls/5/files?per_page=100", headers=auth)
            assert first.headers["Link"].endswith('page=30>; rel="last"')
            last = await http.get(f"{API}/pulls/5/files?per_page=100&page=30", headers=auth)
            names = [f["filename"] for f in await last.json()]
            assert names[-1] == "src/module_2999.py"
            assert 'rel="next"' not in last.headers["Link"]
            beyond = await http.get(f"{API}/pulls/5/files?per_page=100&page=31", headers=auth)
            assert await beyond.json() == []


# ----- issue comments ----------------------------------------------------------------


async def test_comment_lifecycle(http, auth, clock, sandbox):
    resp = await http.post(f"{API}/issues/7/comments", json={"body": "first"}, headers=auth)
    assert resp.status == 201
    first = await resp.json()
    assert first["user"]["login"] == "prguide[bot]" and first["user"]["type"] == "Bot"
    assert first["html_url"] == f"https://github.com/{REPO}/pull/7#issuecomment-{first['id']}"
    assert first["created_at"] == first["updated_at"] == "2023-11-14T22:13:20Z"
    second = await (await http.post(f"{API}/issues/7/comments", json={"body": "second"}, headers=auth)).json()
    assert second["id"] > first["id"]

    clock.now += 30
    resp = await http.patch(f"{API}/issues/comments/{first['id']}", json={"body": "first, edited"}, headers=auth)
    edited = await resp.json()
    assert resp.status == 200
    assert (edited["body"], edited["updated_at"]) == ("first, edited", "2023-11-14T22:13:50Z")
    got = await (await http.get(f"{API}/issues/comments/{first['id']}", headers=auth)).json()
    assert got["body"] == "first, edited"

    resp = await http.get(f"{API}/issues/7/comments?per_page=1", headers=auth)
    assert [c["body"] for c in await resp.json()] == ["first, edited"]
    assert 'rel="next"' in resp.headers["Link"]
    assert [c.body for c in sandbox.comments(REPO, 7)] == ["first, edited", "second"]


async def test_comment_length_limit_is_65536(http, auth, sandbox):
    ok = await http.post(f"{API}/issues/7/comments", json={"body": "x" * 65_536}, headers=auth)
    assert ok.status == 201
    resp = await http.post(f"{API}/issues/7/comments", json={"body": "y" * 65_537}, headers=auth)
    assert resp.status == 422
    body = await resp.json()
    assert body["message"] == "Validation Failed"
    assert body["errors"] == [
        {
            "resource": "IssueComment",
            "code": "unprocessable",
            "field": "data",
            "message": "Body is too long (maximum is 65536 characters)",
        }
    ]
    assert [len(c.body) for c in sandbox.comments(REPO, 7)] == [65_536]
    edit = await http.patch(
        f"{API}/issues/comments/{(await ok.json())['id']}", json={"body": "z" * 65_537}, headers=auth
    )
    assert edit.status == 422


@pytest.mark.parametrize("payload", [{}, {"body": None}, {"body": 5}])
async def test_comment_without_body_is_422(http, auth, payload):
    assert (await http.post(f"{API}/issues/7/comments", json=payload, headers=auth)).status == 422


async def test_bad_json_is_400(http, auth):
    resp = await http.post(f"{API}/issues/7/comments", data=b"{not json", headers=auth)
    assert resp.status == 400
    assert (await resp.json())["message"] == "Problems parsing JSON"


async def test_comment_on_unknown_issue_is_404(http, auth):
    assert (await http.post(f"{API}/issues/404/comments", json={"body": "x"}, headers=auth)).status == 404


async def test_humans_can_comment_through_the_control_api(http, auth):
    resp = await http.post(
        "/_sandbox/comments", json={"repo": REPO, "number": 7, "user": "alice", "body": "/prguide lang zh"}
    )
    assert resp.status == 201
    listed = await (await http.get(f"{API}/issues/7/comments", headers=auth)).json()
    assert [(c["user"]["login"], c["user"]["type"], c["body"]) for c in listed] == [
        ("alice", "User", "/prguide lang zh")
    ]
    bad = await http.post("/_sandbox/comments", json={"repo": REPO, "number": "7", "user": "alice", "body": "x"})
    assert bad.status == 400


# ----- reactions -----------------------------------------------------------------------


async def test_reactions_201_then_200_and_invalid_content_422(http, auth):
    comment = await (
        await http.post("/_sandbox/comments", json={"repo": REPO, "number": 7, "user": "alice", "body": "hi"})
    ).json()
    url = f"{API}/issues/comments/{comment['id']}/reactions"
    first = await http.post(url, json={"content": "eyes"}, headers=auth)
    assert first.status == 201
    again = await http.post(url, json={"content": "eyes"}, headers=auth)
    assert again.status == 200
    assert (await again.json())["id"] == (await first.json())["id"]
    assert (await http.post(url, json={"content": "+1"}, headers=auth)).status == 201
    assert (await http.post(url, json={"content": "thumbsup"}, headers=auth)).status == 422
    assert (
        await http.post(f"{API}/issues/comments/999999/reactions", json={"content": "eyes"}, headers=auth)
    ).status == 404
    state = await (await http.get("/_sandbox/state")).json()
    assert state["reactions"] == {
        str(comment["id"]): [{"user": "prguide[bot]", "content": "eyes"}, {"user": "prguide[bot]", "content": "+1"}]
    }


# ----- labels ------------------------------------------------------------------------------


async def test_create_label_rules(http, auth):
    resp = await http.post(
        f"{API}/labels", json={"name": "area: docs", "color": "00FF00", "description": "Docs"}, headers=auth
    )
    assert resp.status == 201
    assert (await resp.json())["color"] == "00ff00"
    dup = await http.post(f"{API}/labels", json={"name": "AREA: DOCS", "color": "000000"}, headers=auth)
    assert dup.status == 422
    assert (await dup.json())["errors"][0]["code"] == "already_exists"
    assert (await http.post(f"{API}/labels", json={"name": "n" * 50}, headers=auth)).status == 201
    long = await http.post(f"{API}/labels", json={"name": "n" * 51}, headers=auth)
    assert long.status == 422
    assert (await long.json())["errors"] == [
        {"resource": "Label", "code": "invalid", "field": "name", "value": "n" * 51}
    ]
    color = await http.post(f"{API}/labels", json={"name": "bad", "color": "invalid"}, headers=auth)
    assert (await color.json())["errors"] == [{"resource": "Label", "code": "invalid", "field": "color"}]
    names = [label["name"] for label in await (await http.get(f"{API}/labels", headers=auth)).json()]
    assert names == ["area: docs", "n" * 50]


async def test_get_label_by_url_encoded_name(http, auth):
    await http.post(f"{API}/labels", json={"name": "kind: bug fix", "color": "d73a4a"}, headers=auth)
    resp = await http.get(f"{API}/labels/{quote('kind: bug fix', safe='')}", headers=auth)
    assert resp.status == 200
    assert (await resp.json())["name"] == "kind: bug fix"
    assert (await http.get(f"{API}/labels/missing", headers=auth)).status == 404


async def test_issue_labels_add_create_and_remove(http, auth, sandbox):
    await http.post(f"{API}/labels", json={"name": "docs", "color": "0075ca"}, headers=auth)
    resp = await http.post(f"{API}/issues/7/labels", json={"labels": ["docs", "size: S"]}, headers=auth)
    assert resp.status == 200
    added = await resp.json()
    assert [(label["name"], label["color"]) for label in added] == [("docs", "0075ca"), ("size: S", "ededed")]
    pull = await (await http.get(f"{API}/pulls/7", headers=auth)).json()
    assert [label["name"] for label in pull["labels"]] == ["docs", "size: S"]
    resp = await http.delete(f"{API}/issues/7/labels/{quote('size: S', safe='')}", headers=auth)
    assert [label["name"] for label in await resp.json()] == ["docs"]
    gone = await http.delete(f"{API}/issues/7/labels/never", headers=auth)
    assert gone.status == 404
    assert (await gone.json())["message"] == "Label does not exist"
    assert sandbox.labels(REPO, 7) == ["docs"]


async def test_adding_a_51_character_label_is_422_and_adds_nothing(http, auth, sandbox):
    resp = await http.post(f"{API}/issues/7/labels", json={"labels": ["ok", "x" * 51]}, headers=auth)
    assert resp.status == 422
    assert sandbox.labels(REPO, 7) == []


async def test_set_labels_replaces(http, auth, sandbox):
    await http.post(f"{API}/issues/7/labels", json={"labels": ["a", "b"]}, headers=auth)
    resp = await http.put(f"{API}/issues/7/labels", json={"labels": ["c"]}, headers=auth)
    assert [label["name"] for label in await resp.json()] == ["c"]
    assert sandbox.labels(REPO, 7) == ["c"]


# ----- collaborators ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("repo", "login", "permission", "role_name"),
    [
        (REPO, "ada", "admin", "admin"),
        (REPO, "mia", "write", "maintain"),
        (REPO, "tom", "read", "triage"),
        (REPO, "stranger", "read", "read"),
        ("octo-org/secret", "stranger", "none", ""),
    ],
)
async def test_permissions(http, auth, repo, login, permission, role_name):
    resp = await http.get(f"/repos/{repo}/collaborators/{login}/permission", headers=auth)
    assert resp.status == 200
    body = await resp.json()
    assert (body["permission"], body["role_name"], body["user"]["login"]) == (permission, role_name, login)


async def test_collaborators_added_at_runtime(http, auth):
    resp = await http.post("/_sandbox/collaborators", json={"Newbie": "write"})
    assert (await resp.json())["Newbie"] == "write"
    body = await (await http.get(f"{API}/collaborators/newbie/permission", headers=auth)).json()
    assert body["permission"] == "write"
    assert (await http.post("/_sandbox/collaborators", json={"x": "owner"})).status == 400


# ----- contents and conditional requests ------------------------------------------------


async def test_contents_base64_with_git_sha_and_refs(http, auth):
    await http.post("/_sandbox/files", json={"repo": REPO, "path": ".github/prguide.yml", "content": "hello\n"})
    await http.post(
        "/_sandbox/files", json={"repo": REPO, "path": ".github/prguide.yml", "content": "old\n", "ref": "v1"}
    )
    resp = await http.get(f"{API}/contents/.github/prguide.yml", headers=auth)
    assert resp.status == 200
    body = await resp.json()
    assert base64.b64decode(body["content"]) == b"hello\n"
    assert body["sha"] == "ce013625030ba8dba906f756967f9e9ca394464a"  # git hash-object of "hello\n"
    assert (body["encoding"], body["type"], body["path"], body["size"]) == ("base64", "file", ".github/prguide.yml", 6)
    old = await (await http.get(f"{API}/contents/.github/prguide.yml?ref=v1", headers=auth)).json()
    assert base64.b64decode(old["content"]) == b"old\n"
    missing = await http.get(f"{API}/contents/.github/other.yml", headers=auth)
    assert missing.status == 404
    assert (await http.post("/_sandbox/files", json={"repo": "no/such", "path": "a", "content": "x"})).status == 400


async def test_contents_over_1_mb_come_raw_only(http, auth):
    big = "x" * (1024 * 1024) + "\n"
    await http.post("/_sandbox/files", json={"repo": REPO, "path": "data/big.txt", "content": big})
    body = await (await http.get(f"{API}/contents/data/big.txt", headers=auth)).json()
    assert (body["encoding"], body["content"], body["size"]) == ("none", "", len(big))
    raw = await http.get(f"{API}/contents/data/big.txt", headers={**auth, "Accept": "application/vnd.github.raw+json"})
    assert raw.status == 200
    assert await raw.text() == big


async def test_conditional_request_gets_304_and_costs_nothing(http, auth):
    await http.post("/_sandbox/files", json={"repo": REPO, "path": "README.md", "content": "# Demo\n"})
    first = await http.get(f"{API}/contents/README.md", headers=auth)
    etag = first.headers["ETag"]
    remaining = int(first.headers["x-ratelimit-remaining"])
    again = await http.get(f"{API}/contents/README.md", headers={**auth, "If-None-Match": etag})
    assert again.status == 304
    assert await again.read() == b""
    assert again.headers["ETag"] == etag
    assert int(again.headers["x-ratelimit-remaining"]) == remaining
    await http.post("/_sandbox/files", json={"repo": REPO, "path": "README.md", "content": "# Demo, changed\n"})
    changed = await http.get(f"{API}/contents/README.md", headers={**auth, "If-None-Match": etag})
    assert changed.status == 200
    assert changed.headers["ETag"] != etag
    assert int(changed.headers["x-ratelimit-remaining"]) == remaining - 1


def test_etag_is_a_hash_of_the_body():
    from bot.sandbox.server import _etag, _etag_matches

    tag = _etag(b"{}")
    assert tag == f'W/"{hashlib.sha256(b"{}").hexdigest()}"'
    assert _etag_matches(tag.removeprefix("W/"), tag)
    assert _etag_matches(f'"other", {tag}', tag)
    assert not _etag_matches('"other"', tag)


async def test_withheld_permissions_answer_403_resource_not_accessible(http, auth):
    await http.post("/_sandbox/files", json={"repo": REPO, "path": "a.md", "content": "hi"})
    assert (await http.get(f"{API}/contents/a.md", headers=auth)).status == 200

    resp = await http.post("/_sandbox/permissions", json={"contents": None, "issues": "read", "pull_requests": "read"})
    assert resp.status == 200 and "contents" not in await resp.json()
    refused = await http.get(f"{API}/contents/a.md", headers=auth)
    assert refused.status == 403
    assert (await refused.json())["message"] == "Resource not accessible by integration"
    labels = await http.post(f"{API}/issues/7/labels", json={"labels": ["x"]}, headers=auth)
    assert labels.status == 403
    # Reading what Metadata and Pull requests: read cover still works.
    assert (await http.get(f"{API}/pulls/7", headers=auth)).status == 200

    # Pull requests: write alone is enough to label a pull request.
    await http.post("/_sandbox/permissions", json={"pull_requests": "write"})
    assert (await http.post(f"{API}/issues/7/labels", json={"labels": ["x"]}, headers=auth)).status == 200
    assert (await http.post("/_sandbox/permissions", json={"issues": "admin"})).status == 400
    assert (await http.post("/_sandbox/permissions", json=["issues"])).status == 400


async def test_an_issue_takes_at_most_100_labels_and_a_refusal_changes_nothing(http, auth):
    first = await http.post(f"{API}/issues/7/labels", json={"labels": [f"l{i}" for i in range(99)]}, headers=auth)
    assert first.status == 200 and len(await first.json()) == 99
    over = await http.post(f"{API}/issues/7/labels", json={"labels": ["a", "b"]}, headers=auth)
    assert over.status == 422
    body = await over.json()
    assert body["message"] == "Validation Failed"
    assert body["errors"][0]["message"] == "Issues cannot have more than 100 labels"
    labels = await (await http.get(f"{API}/issues/7/labels?per_page=100", headers=auth)).json()
    assert len(labels) == 99
    names = {label["name"] for label in await (await http.get(f"{API}/labels?per_page=100", headers=auth)).json()}
    assert "a" not in names  # nothing was created either
    assert (await http.post(f"{API}/issues/7/labels", json={"labels": ["a", "l1"]}, headers=auth)).status == 200


async def test_a_fault_with_a_message_is_a_refusal_not_a_rate_limit(http, auth):
    await http.post("/_sandbox/faults", json={"path": "/pulls/7$", "status": 403, "message": "Resource not accessible by integration"})
    resp = await http.get(f"{API}/pulls/7", headers=auth)
    assert resp.status == 403 and (await resp.json())["message"] == "Resource not accessible by integration"
    assert "retry-after" not in resp.headers
    assert (await http.post("/_sandbox/faults", json={"path": "x", "status": 403, "message": ""})).status == 400


async def test_a_moved_repository_redirects_to_its_id(sandbox, http, auth):
    repo_id = sandbox.state.repo("octo-org", "demo").id
    sandbox.move_repo(REPO)
    resp = await http.get(f"{API}/pulls/7?x=1", headers=auth, allow_redirects=False)
    assert resp.status == 301
    location = resp.headers["Location"]
    assert location.endswith(f"/repositories/{repo_id}/pulls/7?x=1")
    assert (await resp.json())["url"] == location
    write = await http.post(f"{API}/issues/7/comments", json={"body": "x"}, headers=auth, allow_redirects=False)
    assert write.status == 307 and (await write.json())["message"] == "Temporary Redirect"
    moved = await http.post(f"/repositories/{repo_id}/issues/7/comments", json={"body": "x"}, headers=auth)
    assert moved.status == 201
    assert (await http.get("/repositories/999999/pulls/7", headers=auth)).status == 404
    with pytest.raises(ValueError):
        sandbox.move_repo("nobody/nothing")
    with pytest.raises(ValueError):
        sandbox.move_repo(REPO, write_status=303)


async def test_review_comment_replies_and_reactions(sandbox, http, auth):
    root = sandbox.state.create_review_comment("octo-org", "demo", 7, "Why?", user="mia")
    resp = await http.post(f"{API}/pulls/7/comments/{root['id']}/replies", json={"body": "Because."}, headers=auth)
    assert resp.status == 201
    reply = await resp.json()
    assert reply["in_reply_to_id"] == root["id"] and reply["user"]["login"] == "prguide[bot]"
    assert reply["path"] == root["path"]
    # GitHub takes replies to a thread's first comment only.
    nested = await http.post(f"{API}/pulls/7/comments/{reply['id']}/replies", json={"body": "x"}, headers=auth)
    assert nested.status == 404
    got = await http.get(f"{API}/pulls/comments/{root['id']}", headers=auth)
    assert got.status == 200 and (await got.json())["body"] == "Why?"
    listed = await (await http.get(f"{API}/pulls/7/comments", headers=auth)).json()
    assert [c["id"] for c in listed][-2:] == [root["id"], reply["id"]]

    first = await http.post(f"{API}/pulls/comments/{root['id']}/reactions", json={"content": "eyes"}, headers=auth)
    again = await http.post(f"{API}/pulls/comments/{root['id']}/reactions", json={"content": "eyes"}, headers=auth)
    assert (first.status, again.status) == (201, 200)
    bad = await http.post(f"{API}/pulls/comments/{root['id']}/reactions", json={"content": "wave"}, headers=auth)
    assert bad.status == 422
    sandbox.state.delete_review_comment("octo-org", "demo", root["id"])
    gone = await http.post(f"{API}/pulls/comments/{root['id']}/reactions", json={"content": "eyes"}, headers=auth)
    assert gone.status == 404


async def test_list_pulls_sorts_pages_and_validates_like_github(http, auth, sandbox):
    resp = await http.post("/_sandbox/merged-pulls", json={"repo": "octo-org/history", "count": 5, "start": 10})
    assert resp.status == 201 and (await resp.json())["numbers"] == [10, 11, 12, 13, 14]
    base = "/repos/octo-org/history/pulls?state=closed&sort=updated"
    newest = await http.get(f"{base}&direction=desc&per_page=2", headers=auth)
    items = await newest.json()
    assert [p["number"] for p in items] == [14, 13]
    assert 'rel="next"' in newest.headers["Link"] and "sort=updated" in newest.headers["Link"]
    assert "merged" not in items[0] and "changed_files" not in items[0] and items[0]["merged_at"]
    oldest = await (await http.get(f"{base}&direction=asc", headers=auth)).json()
    assert [p["number"] for p in oldest] == [10, 11, 12, 13, 14]
    long_running = await (await http.get("/repos/octo-org/history/pulls?state=all&sort=long-running", headers=auth)).json()
    assert [p["number"] for p in long_running] == [10, 11, 12, 13, 14]  # ascending by default
    for query in ("state=merged", "sort=newest", "direction=up"):
        bad = await http.get(f"/repos/octo-org/history/pulls?{query}", headers=auth)
        assert bad.status == 422
        assert (await bad.json())["errors"][0]["field"] == query.split("=")[0]
    repos = await (await http.get("/installation/repositories?per_page=1", headers=auth)).json()
    assert repos["total_count"] == 3 and len(repos["repositories"]) == 1


@pytest.mark.parametrize("body", [{"repo": "x", "count": 2}, {"repo": "a/b", "count": 0}, {"count": 2}])
async def test_merged_pulls_control_refuses_bad_requests(http, body):
    assert (await http.post("/_sandbox/merged-pulls", json=body)).status == 400
