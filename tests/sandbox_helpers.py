"""Helpers for tests that talk to the GitHub sandbox.

Import the fixture into a test module to use it::

    from sandbox_helpers import app_private_key, make_app_jwt, start_sandbox  # noqa: F401

- ``app_private_key``: session-scoped fixture, a fresh 2048-bit RSA key (PEM bytes).
- ``start_sandbox(key, **kwargs)``: async context manager yielding a started
  :class:`bot.sandbox.Sandbox` on 127.0.0.1 (``app_id`` defaults to ``APP_ID``).
- ``make_app_jwt(key, ...)``: an app JWT as GitHub expects it.
- ``http``: fixture, an ``aiohttp.ClientSession`` on the module's own ``sandbox`` fixture.
- ``sign_delivery(secret, body)``: the ``X-Hub-Signature-256`` value of a webhook delivery.
- ``synthetic_bundle(number, ...)``: a small merged pull request bundle.
- ``comment_payload(body, ...)``: an ``issue_comment`` payload as GitHub sends it, without a
  running sandbox (the sandbox's ``state.issue_comment_event`` builds those of a running one).
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import time
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from bot.sandbox import Sandbox, SandboxState

APP_ID = 4242


def generate_private_key_pem() -> bytes:
    """A new 2048-bit RSA private key in PKCS#8 PEM, as GitHub hands app keys out."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


@pytest.fixture(scope="session")
def app_private_key() -> bytes:
    """The test app's private key, made once per test session."""
    return generate_private_key_pem()


def make_app_jwt(
    private_key_pem: bytes,
    *,
    app_id: int | str = APP_ID,
    now: float | None = None,
    iat_offset: int = -60,
    lifetime: int = 540,
    algorithm: str = "RS256",
) -> str:
    """An app JWT: ``iat`` = now + ``iat_offset``, ``exp`` = ``iat`` + ``lifetime`` (seconds).

    ``app_id`` goes into ``iss`` as given (number or string).
    """
    issued = int(now if now is not None else time.time()) + iat_offset
    claims = {"iat": issued, "exp": issued + lifetime, "iss": app_id}
    # PyJWT's encode() insists on a string "iss"; GitHub also accepts the number, so sign the raw payload.
    payload = json.dumps(claims, separators=(",", ":")).encode()
    return jwt.api_jws.PyJWS().encode(payload, private_key_pem, algorithm=algorithm)


@contextlib.asynccontextmanager
async def start_sandbox(private_key_pem: bytes, **kwargs: Any) -> AsyncIterator[Sandbox]:
    """Run a :class:`Sandbox` on a free loopback port for the ``async with`` block."""
    kwargs.setdefault("app_id", APP_ID)
    sandbox = Sandbox(private_key_pem=private_key_pem, **kwargs)
    await sandbox.start("127.0.0.1", 0)
    try:
        yield sandbox
    finally:
        await sandbox.close()


@pytest.fixture
async def http(sandbox: Sandbox) -> AsyncIterator[aiohttp.ClientSession]:
    """A client session on the ``sandbox`` fixture of the requesting module (its own sandbox)."""
    async with aiohttp.ClientSession(sandbox.base_url) as session:
        yield session


def sign_delivery(secret: str | bytes, body: bytes) -> str:
    """The ``X-Hub-Signature-256`` header GitHub sends with a webhook delivery: ``sha256=<hex HMAC>``."""
    key = secret.encode() if isinstance(secret, str) else secret
    return "sha256=" + hmac.new(key, body, hashlib.sha256).hexdigest()


def synthetic_bundle(
    number: int, *, repo: str = "octo-org/demo", files: int = 3, private: bool = False
) -> dict[str, Any]:
    """A small merged pull request bundle in the corpus shape, with ``files`` changed files."""
    owner, name = repo.split("/")
    return {
        "pull": {
            "url": f"https://api.github.com/repos/{repo}/pulls/{number}",
            "html_url": f"https://github.com/{repo}/pull/{number}",
            "number": number,
            "state": "closed",
            "title": f"Change number {number}",
            "body": "What this does.",
            "user": {"login": "alice", "type": "User"},
            "labels": [],
            "merged": True,
            "merged_at": "2024-05-01T10:00:00Z",
            "created_at": "2024-04-30T10:00:00Z",
            "base": {
                "ref": "main",
                "repo": {
                    "full_name": repo,
                    "name": name,
                    "owner": {"login": owner, "type": "Organization"},
                    "default_branch": "main",
                    "private": private,
                },
            },
            "head": {"ref": f"topic-{number}", "sha": "0" * 40},
        },
        "files": [
            {"filename": f"src/module_{i:04d}.py", "status": "modified", "additions": 1, "deletions": 0, "changes": 1}
            for i in range(files)
        ],
        "reviews": [],
        "review_comments": [],
    }


def comment_payload(
    body: str,
    *,
    repo: str = "octo-org/demo",
    number: int = 7,
    user: str = "alice",
    user_type: str = "User",
    action: str = "created",
    before: str | None = None,
    merged_at: str | None = "2024-05-01T10:00:00Z",
    state: str = "closed",
) -> dict[str, Any]:
    """The ``issue_comment`` payload GitHub sends when ``user`` writes ``body`` on pull request
    ``number`` of ``repo`` (merged at ``merged_at``, or not merged when ``None``, in ``state``).

    ``before`` is the body an ``edited`` comment had (``changes.body.from``). Built by a
    sandbox that is not started, so no server is needed.
    """
    sandbox = SandboxState(app_id=APP_ID)
    bundle = synthetic_bundle(number, repo=repo)
    bundle["pull"].update(state=state, merged_at=merged_at, merged=merged_at is not None)
    sandbox.add_bundle(bundle)
    comment = sandbox.create_comment(*repo.split("/"), number, body, user=user, user_type=user_type)
    return sandbox.issue_comment_event(comment, action, before=before)


async def _no_sleep(_seconds: float) -> None:
    return None


@pytest.fixture
async def sandbox(app_private_key):
    """A started sandbox with no pull requests (add bundles with ``sandbox.add_bundle``)."""
    async with start_sandbox(app_private_key) as box:
        yield box


@pytest.fixture
async def factory(sandbox, app_private_key):
    """A :class:`ClientFactory` for ``sandbox`` whose installation token is already fetched,
    so API-call counts in tests leave the token request out; retries never sleep."""
    import aiohttp

    from bot.app.auth import AppAuth
    from bot.app.github import ClientFactory

    async with aiohttp.ClientSession() as session:
        auth = AppAuth(str(APP_ID), app_private_key.decode(), api_url=sandbox.base_url, session=session)
        await auth.installation_token(1)
        yield ClientFactory(auth, session=session, sleep=_no_sleep)


def made_up_fix(number: int, *, repo: str, author: str) -> dict[str, Any]:
    """A merged bug fix of ``author`` in ``repo``: 35 changed lines of source and a 12-line test,
    so the shipped rules label it ``type/fix``, ``tests`` and ``size/M``."""
    bundle = synthetic_bundle(number, repo=repo)
    bundle["pull"].update(title="fix: retry uploads when storage answers 503", user={"login": author, "type": "User"},
                          body="Uploads failed for good on a transient 503; they are retried now.")  # fmt: skip
    removed = [f"-    attempt_{i} = upload(chunk)" for i in range(10)]
    added = [f"+    attempt_{i} = upload_with_retry(chunk, tries=RETRIES)" for i in range(25)]
    source = "@@ -1,12 +1,27 @@\n def send(chunk):\n" + "\n".join(removed + added) + "\n     return chunk\n"
    test = "@@ -0,0 +1,12 @@\n" + "\n".join(f"+def test_retry_{i}():\n+    assert send(b'x') == b'x'" for i in range(6))
    bundle["files"] = [
        {"filename": "verl/utils/upload.py", "status": "modified", "additions": 25, "deletions": 10, "changes": 35, "patch": source},
        {"filename": "tests/test_upload.py", "status": "added", "additions": 12, "deletions": 0, "changes": 12, "patch": test},
    ]
    return bundle
