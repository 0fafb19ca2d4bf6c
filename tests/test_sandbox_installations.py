"""The sandbox with several installations: listing, tokens, reach and rate limits per installation."""

from __future__ import annotations

import argparse
import json

import pytest
from loopback import pr_delivery, start_loopback
from sandbox_helpers import app_private_key, make_app_jwt, http, start_sandbox, synthetic_bundle  # noqa: F401

from bot.app.server import wait_idle
from bot.engine.marker import parse_marker
from bot.sandbox import BundleError, Installation, bundle_in_repo
from bot.sandbox.cli import add_arguments, build_sandbox
from bot.sandbox.state import SandboxState

INSTALLATIONS = [{"id": 11, "account": "org-a"}, {"id": 12, "account": "org-b"}]


@pytest.fixture
async def sandbox(app_private_key):
    bundles = [
        bundle_in_repo(synthetic_bundle(7), "org-a/app"),
        bundle_in_repo(synthetic_bundle(8), "org-b/app"),
        synthetic_bundle(3, repo="org-b/secret", private=True),
        synthetic_bundle(5, repo="org-c/elsewhere"),
    ]
    async with start_sandbox(app_private_key, bundles=bundles, installations=INSTALLATIONS) as sb:
        yield sb


@pytest.fixture
def jwt(app_private_key) -> dict[str, str]:
    return {"Authorization": f"Bearer {make_app_jwt(app_private_key)}"}


async def token(http, jwt, installation: int) -> dict[str, str]:
    resp = await http.post(f"/app/installations/{installation}/access_tokens", headers=jwt)
    assert resp.status == 201, await resp.text()
    return {"Authorization": f"token {(await resp.json())['token']}"}


async def test_installations_are_listed_in_pages_and_got_by_id(http, jwt):
    first = await http.get("/app/installations?per_page=1", headers=jwt)
    assert [i["id"] for i in await first.json()] == [11]
    assert 'rel="next"' in first.headers["Link"]
    everything = await (await http.get("/app/installations", headers=jwt)).json()
    assert [(i["id"], i["account"]["login"], i["repository_selection"]) for i in everything] == [
        (11, "org-a", "all"),
        (12, "org-b", "all"),
    ]
    assert everything[1]["access_tokens_url"].endswith("/app/installations/12/access_tokens")
    one = await (await http.get("/app/installations/12", headers=jwt)).json()
    assert one["account"]["login"] == "org-b" and one["target_id"] == one["account"]["id"]
    assert (await (await http.get("/app", headers=jwt)).json())["installations_count"] == 2


@pytest.mark.parametrize(("method", "path"), [("GET", "/app/installations/13"), ("POST", "/app/installations/13/access_tokens")])
async def test_unknown_installation_is_404_with_githubs_message(http, jwt, method, path):
    resp = await http.request(method, path, headers=jwt)
    body = await resp.json()
    assert (resp.status, body["message"]) == (404, "Not Found")
    assert body["documentation_url"].startswith("https://docs.github.com/rest/apps/apps#")


async def test_repository_installation_is_the_one_holding_it(http, jwt):
    for repo, installation in (("org-a/app", 11), ("org-b/app", 12), ("org-b/secret", 12)):
        body = await (await http.get(f"/repos/{repo}/installation", headers=jwt)).json()
        assert body["id"] == installation, repo
    missing = await http.get("/repos/org-c/elsewhere/installation", headers=jwt)
    assert missing.status == 404  # served, but the app is installed on no account of org-c


async def test_a_token_reaches_only_its_installations_repositories(http, jwt, sandbox):
    a = await token(http, jwt, 11)
    assert (await http.get("/repos/org-a/app/pulls/7", headers=a)).status == 200
    own = await http.post("/repos/org-a/app/issues/7/comments", json={"body": "hi"}, headers=a)
    assert own.status == 201 and (await own.json())["user"]["login"] == "prguide[bot]"
    # Another installation's public repository: readable, as any public repository, not writable.
    assert (await http.get("/repos/org-b/app/pulls/8", headers=a)).status == 200
    refused = await http.post("/repos/org-b/app/issues/8/comments", json={"body": "hi"}, headers=a)
    assert (refused.status, (await refused.json())["message"]) == (403, "Resource not accessible by integration")
    # Another installation's private repository does not exist for this token, under either path.
    secret_id = sandbox.state.repo("org-b", "secret").id
    for path in ("/repos/org-b/secret", "/repos/org-b/secret/pulls/3", f"/repositories/{secret_id}/pulls/3"):
        resp = await http.get(path, headers=a)
        assert (resp.status, (await resp.json())["message"]) == (404, "Not Found"), path
    b = await token(http, jwt, 12)
    assert (await http.get(f"/repositories/{secret_id}/pulls/3", headers=b)).status == 200
    assert (await http.post("/repos/org-b/app/issues/8/comments", json={"body": "hi"}, headers=b)).status == 201
    assert [c.body for c in sandbox.comments("org-b/app", 8)] == ["hi"]


async def test_each_installation_lists_its_repositories_and_has_its_own_rate_limit(http, jwt):
    a, b = await token(http, jwt, 11), await token(http, jwt, 12)
    listed_a = await (await http.get("/installation/repositories", headers=a)).json()
    listed_b = await (await http.get("/installation/repositories", headers=b)).json()
    assert [r["full_name"] for r in listed_a["repositories"]] == ["org-a/app"]
    assert (listed_b["total_count"], [r["full_name"] for r in listed_b["repositories"]]) == (2, ["org-b/app", "org-b/secret"])
    for _ in range(3):
        after_a = await http.get("/repos/org-a/app", headers=a)
    after_b = await http.get("/repos/org-b/app", headers=b)
    assert int(after_a.headers["x-ratelimit-used"]) == 4  # the listing and three reads
    assert int(after_b.headers["x-ratelimit-used"]) == 2


def test_the_default_is_one_installation_holding_every_repository():
    state = SandboxState(app_id=1, installation_id=7)
    state.add_bundle(synthetic_bundle(1, repo="x/one"))
    state.add_bundle(synthetic_bundle(2, repo="y/two"))
    assert list(state.installations) == [7] and state.installation_id == 7
    assert [r.full_name for r in state.installation_repos(7)] == ["x/one", "y/two"]
    assert state.installation_json(state.installation(7), "y")["account"]["login"] == "y"
    # An installation on an account takes that account's repositories from the catch-all.
    state.add_installation(8, "y", account_type="User")
    assert state.installation_of("Y/Two").id == 8 and state.installation_of("x/one").id == 7
    assert state.installation_json(8)["target_type"] == "User"
    # Selected repositories, whatever their owner.
    chosen = state.add_installation(9, repositories=["x/one"])
    assert chosen.selection == "selected" and state.installation_of("x/one") is chosen
    assert state.installation_json(9)["account"]["login"] == "x"  # its first repository's owner


@pytest.mark.parametrize(
    "kwargs",
    [
        {"id": 7},  # taken
        {"id": 0, "account": "z"},
        {"id": 10},  # a second catch-all
        {"id": 10, "account": "z", "account_type": "Team"},
        {"id": 10, "repositories": ["no-slash"]},
    ],
)
def test_bad_installations_are_refused(kwargs):
    state = SandboxState(app_id=1, installation_id=7)
    with pytest.raises(ValueError):
        state.add_installation(**kwargs)


def test_state_takes_installation_records_and_mappings():
    state = SandboxState(app_id=1, installations=[Installation(3, "a"), {"id": 4, "repositories": "b/c"}])
    assert [i.selection for i in state.installations.values()] == ["all", "selected"]
    assert state.installation_of("b/c").id == 4 and state.installation_of("d/e") is None
    empty = SandboxState(app_id=1, installations=[])
    assert empty.installation_id == 0 and empty.installation_repos(0) == []


async def test_installations_added_through_the_control_api(http, jwt):
    added = await http.post("/_sandbox/installations", json={"id": 13, "account": "org-c"})
    assert added.status == 201 and (await added.json())["account"]["login"] == "org-c"
    assert (await (await http.get("/repos/org-c/elsewhere/installation", headers=jwt)).json())["id"] == 13
    chosen = await http.post("/_sandbox/installations", json={"id": 14, "repositories": ["org-a/app"]})
    assert (await chosen.json())["repository_selection"] == "selected"
    for bad in ({"account": "x"}, {"id": True}, {"id": 15, "account": ""}, {"id": 15, "repositories": "a/b"}, {"id": 13}):
        resp = await http.post("/_sandbox/installations", json=bad)
        assert resp.status == 400, bad


def test_bundle_in_repo_rewrites_what_names_the_repository(load_bundle_json):
    original = load_bundle_json(7491)
    moved = bundle_in_repo(original, "org-a/verl-copy")
    pull = moved["pull"]
    assert pull["base"]["repo"]["full_name"] == "org-a/verl-copy"
    assert (pull["base"]["repo"]["name"], pull["base"]["repo"]["owner"]["login"]) == ("verl-copy", "org-a")
    assert pull["base"]["repo"]["html_url"].endswith("/org-a/verl-copy")
    assert pull["url"].endswith("/repos/org-a/verl-copy/pulls/7491")
    assert pull["html_url"].endswith("/org-a/verl-copy/pull/7491")
    assert pull["base"]["label"].startswith("org-a:") and pull["base"]["user"]["login"] == "org-a"
    assert pull["head"] == original["pull"]["head"]  # the fork stays
    urls = [f["blob_url"] for f in moved["files"]] + [v for k, v in pull.items() if k.endswith("url")]
    assert urls and not [u for u in urls if "verl-project/verl" in u]
    assert original["pull"]["base"]["repo"]["full_name"] == "verl-project/verl"  # a copy
    assert bundle_in_repo(original, "verl-project/verl") == original
    with pytest.raises(BundleError):
        bundle_in_repo(original, "no-slash")


def test_bundle_in_repo_gives_the_repository_a_new_id():
    bundle = synthetic_bundle(1, repo="a/b")
    bundle["pull"]["base"]["repo"]["id"] = 99
    state = SandboxState(app_id=1)
    state.add_bundle(bundle)
    assert state.add_bundle(bundle, repo="c/d") == "c/d"
    assert state.repo("a", "b").id == 99 and state.repo("c", "d").id != 99
    assert state.pull_json(state.repo("c", "d"), 1)["base"]["repo"]["full_name"] == "c/d"
    # A bundle that names no repository is served where it is told, as it is.
    assert state.add_bundle({"pull": {"number": 2}}, repo="e/f") == "e/f"
    assert state.installation_json()["id"] == 1 and state.installation_of("e/f").id == 1


def test_command_line_installations_and_bundles_in_a_repository(tmp_path, app_private_key, capsys):
    key = tmp_path / "app.pem"
    key.write_bytes(app_private_key)
    folder = tmp_path / "bundles"
    folder.mkdir()
    (folder / "1.json").write_text(json.dumps(synthetic_bundle(1)))
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    args = parser.parse_args([
        "--app-id", "1", "--app-key", str(key), "--installation", "21=org-a", "--installation", "22=org-b",
        "--bundles", f"{folder}=org-a/demo", "--bundles", f"{folder}=org-b/demo",
    ])  # fmt: skip
    sandbox = build_sandbox(args)
    assert list(sandbox.state.installations) == [21, 22]
    assert sandbox.state.installation_of("org-b/demo").id == 22
    assert sandbox.state.pull_json(sandbox.state.repo("org-a", "demo"), 1)["base"]["repo"]["full_name"] == "org-a/demo"
    for bad in (["--installation", "x=org"], ["--installation", "1=a/b"], ["--bundles", "dir=nope"]):
        with pytest.raises(SystemExit):
            parser.parse_args(["--app-id", "1", "--app-key", "k", *bad])
    capsys.readouterr()


@pytest.mark.corpus
async def test_the_app_answers_each_installation_with_its_own_token(
    app_private_key, load_bundle_json, tmp_path  # noqa: F811
):
    bundles = {
        1: bundle_in_repo(load_bundle_json(7491), "org-a/verl"),
        2: bundle_in_repo(load_bundle_json(7422), "org-b/verl"),
    }
    options = {"installations": INSTALLATIONS}
    async with start_loopback(app_private_key, tmp_path, bundles, sandbox_options=options) as lb:
        for key, installation in ((1, 11), (2, 12)):
            resp = await lb.deliver(pr_delivery(bundles[key], installation=installation), delivery=f"d-{key}")
            assert resp.status == 202
        await wait_idle(lb.app)
        for repo, bundle in (("org-a/verl", bundles[1]), ("org-b/verl", bundles[2])):
            comments = lb.sandbox.comments(repo, bundle["pull"]["number"])
            assert [parse_marker(c.body) is not None for c in comments] == [True], repo
        tokens = {t.installation_id for t in lb.sandbox.state.tokens.values()}
        assert tokens == {11, 12}
        # Nothing refused; the only misses are the absent repository settings files.
        assert {r["status"] for r in lb.sandbox.requests if r["status"] >= 400} == {404}
        assert all("/contents/.github/" in r["path"] for r in lb.sandbox.requests if r["status"] >= 400)
