"""Sandbox pieces without a server: bundle repositories, Link headers, the command line, git contents."""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import shutil
import subprocess
import sys
import types

import aiohttp
import pytest
from sandbox_helpers import app_private_key, make_app_jwt, sign_delivery, synthetic_bundle  # noqa: F401

from bot.sandbox import BundleError, Sandbox, repo_of_bundle
from bot.sandbox.cli import add_arguments, build_sandbox, run
from bot.sandbox.paging import link_header, page_params
from bot.sandbox.state import load_bundles, read_git_file


def test_repo_of_bundle_prefers_base_repo_then_urls():
    bundle = synthetic_bundle(1, repo="a/b")
    assert repo_of_bundle(bundle) == "a/b"
    del bundle["pull"]["base"]
    assert repo_of_bundle(bundle) == "a/b"
    bundle["pull"]["url"] = None
    assert repo_of_bundle(bundle) == "a/b"
    bundle["pull"]["html_url"] = "https://example.org/no/pull"
    with pytest.raises(BundleError, match="cannot tell the repository"):
        repo_of_bundle(bundle)


@pytest.mark.parametrize(
    ("bundle", "message"),
    [
        ({"files": []}, "no 'pull'"),
        ({"pull": {"number": "1", "url": "https://api.github.com/repos/a/b/pulls/1"}}, "integer 'number'"),
        (
            {"pull": {"number": 1, "url": "https://api.github.com/repos/a/b/pulls/1"}, "files": {}},
            "files must be a list",
        ),
    ],
)
def test_bad_bundles_are_refused_clearly(app_private_key, bundle, message):
    with pytest.raises(BundleError, match=message):
        Sandbox(1, app_private_key, bundles=[bundle])


def test_load_bundles_names_the_bad_file(tmp_path):
    good = tmp_path / "1.json"
    good.write_text(json.dumps(synthetic_bundle(1)))
    bad = tmp_path / "2.json"
    bad.write_text("[]")
    assert load_bundles([good])[0]["pull"]["number"] == 1
    with pytest.raises(BundleError, match="2.json"):
        load_bundles([good, bad])


def test_page_params_defaults_and_caps():
    assert page_params("") == (1, 30)
    assert page_params("per_page=100&page=3") == (3, 100)
    assert page_params("per_page=1000&page=0") == (1, 100)
    assert page_params("per_page=abc&page=-2") == (1, 30)


def test_link_header_keeps_other_parameters_and_githubs_order():
    assert link_header("http://h/x", "per_page=3", 1, 1) is None
    assert link_header("http://h/x", "state=all&per_page=3", 1, 5) == (
        '<http://h/x?state=all&per_page=3&page=2>; rel="next", <http://h/x?state=all&per_page=3&page=5>; rel="last"'
    )
    assert link_header("http://h/x", "page=5&per_page=3", 5, 5) == (
        '<http://h/x?per_page=3&page=4>; rel="prev", <http://h/x?per_page=3&page=1>; rel="first"'
    )


def test_sign_delivery_matches_githubs_example():
    # The worked example in GitHub's "Validating webhook deliveries".
    assert sign_delivery("It's a Secret to Everybody", b"Hello, World!") == (
        "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"
    )


def test_a_key_that_is_not_pem_is_refused():
    with pytest.raises(ValueError, match="PEM private key"):
        Sandbox(1, b"not a key")


def test_bad_collaborator_role_is_refused(app_private_key):
    with pytest.raises(ValueError, match="role must be one of"):
        Sandbox(1, app_private_key, collaborators={"x": "owner"})


# ----- command line ----------------------------------------------------------------


def parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="prguide sandbox")
    add_arguments(parser)
    return parser.parse_args(argv)


def test_command_line_builds_the_sandbox(tmp_path, app_private_key):
    key = tmp_path / "app.pem"
    key.write_bytes(app_private_key)
    bundles = tmp_path / "bundles"
    bundles.mkdir()
    for number in (1, 2):
        (bundles / f"{number}.json").write_text(json.dumps(synthetic_bundle(number)))
    args = parse(
        "--app-id", "77", "--app-key", str(key), "--bundles", str(bundles),
        "--collaborator", "ada=admin", "--collaborator", "mia=maintain", "--app-slug", "guide",
    )  # fmt: skip
    sandbox = build_sandbox(args)
    assert sandbox.state.app_id == 77 and sandbox.state.bot_login == "guide[bot]"
    assert sorted(sandbox.state.repos["octo-org/demo"].pulls) == [1, 2]
    assert sandbox.state.collaborators["mia"] == ("mia", "maintain")


def test_command_line_refuses_a_bad_collaborator(capsys):
    with pytest.raises(SystemExit):
        parse("--app-id", "1", "--app-key", "k.pem", "--collaborator", "ada=owner")
    assert "LOGIN=ROLE" in capsys.readouterr().err


async def test_run_reports_a_missing_key_and_exits_2(tmp_path, capsys):
    status = await run(parse("--app-id", "1", "--app-key", str(tmp_path / "absent.pem")))
    assert status == 2
    assert "absent.pem" in capsys.readouterr().err


async def test_run_serves_until_cancelled(tmp_path, app_private_key, capsys):
    key = tmp_path / "app.pem"
    key.write_bytes(app_private_key)
    task = asyncio.create_task(run(parse("--app-id", "1", "--app-key", str(key))))
    # Yield to the loop until the server has announced itself; bounded, no timing involved.
    for _ in range(1000):
        out = capsys.readouterr().out
        if "serving" in out:
            break
        await asyncio.sleep(0)
    assert "serving 0 pull requests at http://127.0.0.1:" in out
    base_url = out.rsplit(" ", 1)[-1].strip()
    async with aiohttp.ClientSession() as http:
        resp = await http.get(
            f"{base_url}/app", headers={"Authorization": f"Bearer {make_app_jwt(app_private_key, app_id=1)}"}
        )
        assert resp.status == 200
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_run_names_the_repositories_it_serves(tmp_path, app_private_key, capsys):
    # A reader sends deliveries with --repo OWNER/NAME: the start line tells which names exist.
    key = tmp_path / "app.pem"
    key.write_bytes(app_private_key)
    bundles = tmp_path / "bundles"
    bundles.mkdir()
    for number in (1, 2):
        (bundles / f"{number}.json").write_text(json.dumps(synthetic_bundle(number)))
    task = asyncio.create_task(run(parse("--app-id", "1", "--app-key", str(key), "--bundles", f"{bundles}=acme/rocket")))
    out = ""
    for _ in range(1000):
        out += capsys.readouterr().out
        if "serving" in out:
            break
        await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert "serving 2 pull requests of acme/rocket at http://127.0.0.1:" in out


# ----- local git repositories -------------------------------------------------------


@pytest.fixture
def git_checkout(tmp_path):
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    repo = tmp_path / "repo"
    repo.mkdir()

    def git(*args: str) -> None:
        subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)

    git("init", "-q", "-b", "main")
    (repo / ".github").mkdir()
    (repo / ".github" / "prguide.yml").write_text("lang: zh\n")
    git("add", ".")
    git("-c", "user.name=t", "-c", "user.email=t@example.org", "commit", "-qm", "config")
    return repo


def test_read_git_file(git_checkout):
    assert read_git_file(git_checkout, "HEAD", ".github/prguide.yml") == b"lang: zh\n"
    assert read_git_file(git_checkout, "main", "missing.yml") is None
    assert read_git_file(git_checkout, "--output=/tmp/x", "a") is None


async def test_git_repository_pull_requests_and_contents(monkeypatch, git_checkout, app_private_key):
    calls = []

    def merged_pull_requests(path):
        calls.append(path)
        return [synthetic_bundle(3, repo="local/repo")]

    fake = types.ModuleType("bot.sources.gitrepo")
    fake.merged_pull_requests = merged_pull_requests
    monkeypatch.setitem(sys.modules, "bot.sources.gitrepo", fake)
    async with Sandbox(9, app_private_key) as sandbox:
        assert sandbox.add_git_repo(git_checkout) == ["local/repo"]
        assert calls == [git_checkout]
        async with aiohttp.ClientSession(sandbox.base_url) as http:
            jwt = make_app_jwt(app_private_key, app_id=9)
            token = await (
                await http.post("/app/installations/1/access_tokens", headers={"Authorization": f"Bearer {jwt}"})
            ).json()
            auth = {"Authorization": f"token {token['token']}"}
            resp = await http.get("/repos/local/repo/contents/.github/prguide.yml?ref=main", headers=auth)
            assert resp.status == 200
            body = await resp.json()
            blob = subprocess.run(
                ["git", "-C", str(git_checkout), "rev-parse", "main:.github/prguide.yml"],
                check=True, capture_output=True, text=True,
            ).stdout.strip()  # fmt: skip
            assert (body["sha"], base64.b64decode(body["content"])) == (blob, b"lang: zh\n")
            assert (await http.get("/repos/local/repo/contents/nope.yml", headers=auth)).status == 404


async def test_real_git_repository_is_served(git_checkout, app_private_key):
    def git(*args: str) -> None:
        subprocess.run(
            ["git", "-C", str(git_checkout), "-c", "user.name=Bea", "-c", "user.email=b@example.org", *args],
            check=True,
            capture_output=True,
        )

    (git_checkout / "tool.py").write_text("print('hi')\n")
    git("add", ".")
    git("commit", "-qm", "Add the tool (#5)")
    async with Sandbox(9, app_private_key) as sandbox:
        assert sandbox.add_git_repo(git_checkout) == ["local/repo"]
        async with aiohttp.ClientSession(sandbox.base_url) as http:
            jwt = make_app_jwt(app_private_key, app_id=9)
            resp = await http.post("/app/installations/1/access_tokens", headers={"Authorization": f"Bearer {jwt}"})
            auth = {"Authorization": f"token {(await resp.json())['token']}"}
            pull = await (await http.get("/repos/local/repo/pulls/5", headers=auth)).json()
            assert pull["title"] == "Add the tool"
            files = await (await http.get("/repos/local/repo/pulls/5/files", headers=auth)).json()
            assert [f["filename"] for f in files] == ["tool.py"]
