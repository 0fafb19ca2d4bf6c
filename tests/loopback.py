"""The real app against the GitHub sandbox, both on loopback, for fault, bad-input and log tests.

Import the fixtures into a test module to use them::

    from loopback import app_private_key, loopback  # noqa: F401

- ``loopback``: a started :class:`Loopback` serving five small corpus pull requests
  of ``verl-project/verl`` (the GitHub client never sleeps for real: retries and
  rate-limit waits are recorded in ``Loopback.sleeps``).
- :func:`start_loopback`: the same as an ``async with`` block, with any sandbox,
  settings and :func:`bot.app.server.create_app` options (the shipped rules are
  loaded once and shared, unless ``rules`` is given).
- ``small_pr``: ``{SMALL_PR: bundle}`` for :func:`start_loopback`, from the corpus and
  made up (the test runs once with each).
- :func:`pr_delivery`: the ``pull_request.closed`` payload GitHub sends for a corpus bundle.
- :func:`raw_post`: send bytes no HTTP client library would (non-ASCII headers).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp.test_utils import TestClient, TestServer
from sandbox_helpers import APP_ID, app_private_key, made_up_fix, start_sandbox  # noqa: F401

from bot.app.server import STATE, create_app, wait_idle
from bot.app.settings import Settings
from bot.app.webhook import sign
from bot.engine.rules import load_rules
from bot.payloads import merged_pull_request

SECRET = "loopback webhook secret"
ADMIN_TOKEN = "loopback admin token"
REPO = "verl-project/verl"
SMALL_PR = 7491  # 2 files
NUMBERS = (SMALL_PR, 7422, 7404, 7358, 7406)
EMPTY_QUEUE = {"queued": 0, "running": 0, "done": 0, "parked": 0}


def pr_delivery(bundle: Mapping[str, Any], *, merged: bool = True, installation: int = 1) -> dict:
    """The ``pull_request.closed`` payload GitHub sends for the bundle's pull request, merged or not.

    Complete as GitHub sends it (:func:`bot.payloads.merged_pull_request`);
    ``repository`` is the bundle's ``base.repo``, ``installation.id`` is ``installation``, which
    must be the installation holding that repository in the sandbox.
    """
    return merged_pull_request(bundle["pull"], installation_id=installation, merged=merged)


def delivery_headers(body: bytes, *, event: str = "pull_request", delivery: str = "d-1", secret: str = SECRET) -> dict[str, str]:
    """The headers GitHub sends with a delivery of ``body``."""
    return {
        "X-GitHub-Event": event,
        "X-GitHub-Delivery": delivery,
        "Content-Type": "application/json",
        "X-Hub-Signature-256": sign(secret, body),
        "User-Agent": "GitHub-Hookshot/loopback",
    }


class Sleeps:
    """The GitHub client's ``sleep``: records each wait and returns at once."""

    def __init__(self) -> None:
        self.seconds: list[float] = []
        self.hooks: list[Any] = []

    async def __call__(self, seconds: float) -> None:
        self.seconds.append(seconds)
        for hook in self.hooks:
            hook()


class Loopback:
    """A running app (``client``, ``app``) and the sandbox it calls as GitHub."""

    def __init__(self, client: TestClient, sandbox: Any, bundles: Mapping[int, dict], sleeps: Sleeps):
        self.client = client
        self.app = client.app
        self.sandbox = sandbox
        self.bundles = dict(bundles)
        self.sleeps = sleeps

    @property
    def state(self) -> Any:
        return self.app[STATE]

    def payload(self, number: int = SMALL_PR, **pull_changes: Any) -> dict:
        """A merged ``pull_request.closed`` payload for corpus PR ``number``."""
        payload = pr_delivery(self.bundles[number])
        payload["pull_request"].update(pull_changes)
        return payload

    async def post(self, body: bytes, headers: Mapping[str, str | None]) -> aiohttp.ClientResponse:
        """POST raw bytes to ``/webhook``; header values of ``None`` are left out."""
        sent = {k: v for k, v in headers.items() if v is not None}
        return await self.client.post("/webhook", data=body, headers=sent, skip_auto_headers=("Content-Type",))

    async def deliver(
        self,
        payload: Any,
        *,
        delivery: str = "d-1",
        event: str = "pull_request",
        secret: str = SECRET,
        headers: Mapping[str, str | None] | None = None,
    ) -> aiohttp.ClientResponse:
        """Sign and POST ``payload`` (a JSON value, or bytes sent as they are)."""
        body = payload if isinstance(payload, bytes) else json.dumps(payload, ensure_ascii=False).encode("utf-8")
        sent: dict[str, str | None] = dict(delivery_headers(body, event=event, delivery=delivery, secret=secret))
        sent.update(headers or {})
        return await self.post(body, sent)

    async def merged(self, number: int = SMALL_PR, *, delivery: str = "d-1", **pull_changes: Any) -> None:
        """Deliver a merge of ``number``, expect 202 and wait until the job is done."""
        resp = await self.deliver(self.payload(number, **pull_changes), delivery=delivery)
        assert resp.status == 202, await resp.text()
        await wait_idle(self.app)

    def writes(self) -> list[dict]:
        """GitHub requests that change something (everything but GETs and GraphQL queries)."""
        return [r for r in self.sandbox.requests if r["method"] != "GET" and r["path"] != "/graphql"]

    def jobs(self) -> dict[str, int]:
        return self.state.store.counts()

    def comments(self, number: int = SMALL_PR) -> list[Any]:
        return self.sandbox.comments(REPO, number)

    def labels(self, number: int = SMALL_PR) -> list[str]:
        return self.sandbox.labels(REPO, number)


@functools.cache
def shipped_rules() -> Any:
    """The shipped rules, loaded once (a ``RuleSet`` is immutable, so apps can share it)."""
    return load_rules()


def settings_for(sandbox: Any, private_key: bytes, tmp_path: Path, **changes: Any) -> Settings:
    """Settings pointing the app at ``sandbox``, with its database in ``tmp_path``."""
    values: dict[str, Any] = dict(
        app_id=APP_ID,
        private_key=private_key.decode(),
        webhook_secret=SECRET,
        api_url=sandbox.base_url,
        db_path=tmp_path / "prguide.db",
        workers=4,
        admin_token=ADMIN_TOKEN,
        # Periodic passes would start mid-test at an hour's turn; tests that want them say so.
        reconcile_interval=0,
    )
    values.update(changes)
    return Settings(**values)


async def started(client: TestClient, sandbox: Any = None) -> None:
    """Wait for the app's start-up check of its credentials (one ``GET /app``); with
    ``sandbox``, forget that request, so tests see only what deliveries cause."""
    check = client.app[STATE].credential_check
    if check is not None:
        await check
    if sandbox is not None:
        sandbox.state.requests.clear()


@contextlib.asynccontextmanager
async def running_app(settings: Settings, *, sandbox: Any = None, **app_options: Any) -> AsyncIterator[TestClient]:
    """Serve :func:`create_app` on a loopback port for the block (see :func:`started`)."""
    client = TestClient(TestServer(create_app(settings, **app_options)))
    await client.start_server()
    await started(client, sandbox)
    try:
        yield client
    finally:
        await client.close()


@contextlib.asynccontextmanager
async def start_loopback(
    private_key: bytes,
    tmp_path: Path,
    bundles: Mapping[int, dict],
    *,
    sandbox_options: Mapping[str, Any] | None = None,
    settings: Mapping[str, Any] | None = None,
    **app_options: Any,
) -> AsyncIterator[Loopback]:
    """A sandbox serving ``bundles`` and the app calling it, for the ``async with`` block."""
    sleeps = Sleeps()
    app_options.setdefault("rules", shipped_rules())
    client_options = dict(app_options.pop("client_options", {}))
    client_options.setdefault("sleep", sleeps)
    async with start_sandbox(private_key, bundles=list(bundles.values()), **dict(sandbox_options or {})) as sandbox:
        app_settings = settings_for(sandbox, private_key, tmp_path, **dict(settings or {}))
        async with running_app(app_settings, sandbox=sandbox, client_options=client_options, **app_options) as client:
            yield Loopback(client, sandbox, bundles, sleeps)


@pytest.fixture(params=[pytest.param("verl", marks=pytest.mark.corpus), "made-up"])
def small_pr(request) -> dict[int, dict]:
    """``{SMALL_PR: bundle}`` for :func:`start_loopback`, twice: corpus PR ``SMALL_PR``
    (skipped where absent), and a made-up bug fix under the same number."""
    if request.param == "verl":
        return {SMALL_PR: request.getfixturevalue("load_bundle_json")(SMALL_PR)}
    return {SMALL_PR: made_up_fix(SMALL_PR, repo=REPO, author="contributor-79")}


@pytest.fixture
async def loopback(app_private_key, load_bundle_json, tmp_path) -> AsyncIterator[Loopback]:  # noqa: F811
    """The app and the sandbox serving :data:`NUMBERS` of the verl corpus."""
    bundles = {n: load_bundle_json(n) for n in NUMBERS}
    async with start_loopback(app_private_key, tmp_path, bundles) as lb:
        yield lb


async def raw_post(host: str, port: int, headers: bytes, body: bytes) -> int:
    """POST ``/webhook`` with ``headers`` (raw ``Name: value\\r\\n`` lines) and ``body``; return the status."""
    reader, writer = await asyncio.open_connection(host, port)
    try:
        head = (
            b"POST /webhook HTTP/1.1\r\nHost: loopback\r\n"
            + headers
            + b"Content-Length: " + str(len(body)).encode() + b"\r\nConnection: close\r\n\r\n"
        )
        writer.write(head + body)
        await writer.drain()
        status_line = await reader.readline()
    finally:
        writer.close()
    return int(status_line.split()[1])
