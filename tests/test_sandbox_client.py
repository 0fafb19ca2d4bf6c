"""prguide's own GitHub client and file fetching against the sandbox."""

from __future__ import annotations

import aiohttp
import pytest
from sandbox_helpers import app_private_key, make_app_jwt, start_sandbox, synthetic_bundle  # noqa: F401

from bot.app.errors import RetryLater
from bot.app.fetch import fetch_file
from bot.app.github import GitHubClient

REPO = "octo-org/demo"


async def _no_wait(_seconds: float) -> None:
    return None


@pytest.fixture
async def client_and_sandbox(app_private_key):
    async with (
        start_sandbox(app_private_key, bundles=[synthetic_bundle(7)]) as sandbox,
        aiohttp.ClientSession() as session,
    ):
        jwt = make_app_jwt(app_private_key)
        resp = await session.post(
            f"{sandbox.base_url}/app/installations/1/access_tokens", headers={"Authorization": f"Bearer {jwt}"}
        )
        token = (await resp.json())["token"]

        async def authorization() -> str:
            return f"token {token}"

        client = GitHubClient(session, authorization=authorization, api_url=sandbox.base_url, sleep=_no_wait)
        yield client, sandbox


async def test_fetch_file_small_big_and_missing(client_and_sandbox):
    client, sandbox = client_and_sandbox
    sandbox.set_file(REPO, ".github/prguide.yml", "lang: zh\n")
    big = "# big\n" * 200_000
    sandbox.set_file(REPO, "docs/big.md", big, ref="v2")
    assert await fetch_file(client, REPO, ".github/prguide.yml") == "lang: zh\n"
    assert await fetch_file(client, REPO, "docs/big.md", "v2") == big
    assert await fetch_file(client, REPO, "docs/big.md", "v1") is None
    raw_reads = [r for r in sandbox.requests if r["path"].startswith(f"/repos/{REPO}/contents/docs/big.md?ref=v2")]
    assert len(raw_reads) == 2  # the JSON answer without content, then the raw read


async def test_client_retries_a_502_from_a_fault(client_and_sandbox):
    client, sandbox = client_and_sandbox
    sandbox.add_faults([{"path": "/pulls/7$", "status": 502}])
    pull = await client.getitem(f"/repos/{REPO}/pulls/7")
    assert pull["number"] == 7
    assert [r["status"] for r in sandbox.requests if r["path"].endswith("/pulls/7")] == [502, 200]


async def test_client_gives_up_on_a_lasting_secondary_limit(client_and_sandbox):
    client, sandbox = client_and_sandbox
    sandbox.add_faults([{"path": "/pulls/7$", "status": 403, "retry_after": 30, "times": None}])
    with pytest.raises(RetryLater) as raised:
        await client.getitem(f"/repos/{REPO}/pulls/7")
    assert raised.value.delay >= 30, raised.value
