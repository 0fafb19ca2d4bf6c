"""App JWTs, installation tokens (cached, one refresh at a time) and the app's slug, against the sandbox."""

from __future__ import annotations

import asyncio
import time

import aiohttp
import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from sandbox_helpers import APP_ID, app_private_key, start_sandbox  # noqa: F401

from bot.app.auth import AppAuth, InstallationToken
from bot.app.errors import GiveUp, RetryLater
from bot.app.github import ClientFactory, NotFound, RetryPolicy


class Sleeps:
    def __init__(self):
        self.delays: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


class Clock:
    """The real wall clock, moved forward by ``offset`` seconds."""

    def __init__(self):
        self.offset = 0.0

    def __call__(self) -> float:
        return time.time() + self.offset


@pytest.fixture
async def sandbox(app_private_key):  # noqa: F811
    async with start_sandbox(app_private_key) as box:
        yield box


@pytest.fixture
async def session():
    async with aiohttp.ClientSession() as s:
        yield s


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
def auth(sandbox, session, app_private_key, clock):  # noqa: F811
    return AppAuth(str(APP_ID), app_private_key.decode(), api_url=sandbox.base_url, session=session, clock=clock, sleep=Sleeps())


def token_requests(sandbox) -> list[dict]:
    return [r for r in sandbox.requests if r["method"] == "POST" and r["path"].endswith("/access_tokens")]


async def test_fifty_concurrent_jobs_cause_one_token_request(auth, sandbox):
    tokens = await asyncio.gather(*(auth.installation_token(1) for _ in range(50)))
    assert len(set(tokens)) == 1
    assert len(token_requests(sandbox)) == 1 and auth.token_requests == 1
    assert token_requests(sandbox)[0]["status"] == 201


async def test_a_cached_token_is_reused_until_shortly_before_it_expires(auth, sandbox, clock):
    first = await auth.installation_token(1)
    clock.offset = 3600 - 300 - 5  # still more than the 5-minute margin left
    assert await auth.installation_token(1) == first
    assert len(token_requests(sandbox)) == 1
    clock.offset = 3600 - 300 + 1  # inside the margin
    second = await auth.installation_token(1)
    assert second != first
    assert len(token_requests(sandbox)) == 2


async def test_forget_drops_the_token(auth, sandbox):
    first = await auth.installation_token(1)
    auth.forget(1)
    auth.forget(12345)  # unknown installations are fine
    assert await auth.installation_token(1) != first
    assert len(token_requests(sandbox)) == 2


async def test_a_deleted_installation_is_not_found(auth):
    with pytest.raises(NotFound) as info:
        await auth.installation_token(999)
    assert isinstance(info.value, GiveUp) and "installation 999" in info.value.reason


async def test_token_trouble_becomes_retry_later(auth, sandbox):
    sandbox.add_faults([{"method": "POST", "path": "access_tokens", "status": 502, "times": None}])
    with pytest.raises(RetryLater):
        await auth.installation_token(1)
    # POST for a token is safe to repeat, so the client tried its 4 attempts
    assert len(token_requests(sandbox)) == RetryPolicy().attempts


async def test_app_jwt_has_githubs_claims(auth, app_private_key):  # noqa: F811
    public = serialization.load_pem_private_key(app_private_key, password=None).public_key()
    now = time.time()
    claims = jwt.decode(auth.app_jwt(), public, algorithms=["RS256"], options={"verify_iat": False})
    assert claims["iss"] == str(APP_ID)
    assert claims["iat"] <= now - 59  # backdated for clock drift
    assert claims["exp"] - claims["iat"] <= 600 and claims["exp"] > now + 60
    assert auth.app_jwt() == auth.app_jwt()  # reused, not re-signed per request


async def test_app_slug_is_fetched_once(auth, sandbox):
    assert await auth.app_slug() == "prguide"
    assert await auth.bot_login() == "prguide[bot]"
    identity = await auth.bot_identity()  # what finds its comments after a rename: the app's id
    assert (identity.login, identity.app_id) == ("prguide[bot]", APP_ID)
    assert [r["path"] for r in sandbox.requests if r["path"] == "/app"] == ["/app"]


async def test_a_private_key_with_escaped_newlines_is_accepted(sandbox, session, app_private_key):  # noqa: F811
    escaped = app_private_key.decode().strip().replace("\n", "\\n")
    auth = AppAuth(str(APP_ID), escaped, api_url=sandbox.base_url, session=session)
    assert await auth.app_slug() == "prguide"


async def test_a_bad_key_is_a_clear_error_that_does_not_echo_it(session):
    with pytest.raises(ValueError) as info:
        AppAuth("1", "-----BEGIN RSA PRIVATE KEY-----\nnot-really-secret-xyz\n-----END RSA PRIVATE KEY-----", session=session)
    assert "private key" in str(info.value) and "not-really-secret-xyz" not in str(info.value)


async def test_repr_shows_neither_key_nor_token(auth, app_private_key):  # noqa: F811
    token = await auth.installation_token(1)
    text = repr(auth) + repr(auth._tokens) + repr(InstallationToken(token, 1.0))
    assert token not in text
    assert "PRIVATE KEY" not in text and app_private_key.decode().splitlines()[1] not in text
    assert str(APP_ID) in repr(auth)


async def test_a_401_for_an_expired_token_gets_a_new_one_once(auth, sandbox, session):
    factory = ClientFactory(auth, session=session, sleep=Sleeps())
    client = factory.for_installation(1)
    await auth.installation_token(1)
    sandbox.expire_tokens()
    answer = await client.getitem("/installation/repositories")
    assert "repositories" in answer
    assert client.calls_by_status == {401: 1, 200: 1}
    assert len(token_requests(sandbox)) == 2


def test_only_githubs_clock_refusals_with_a_date_move_the_jwt_clock(auth, caplog):
    import email.utils
    import json

    clock_refusal = json.dumps({"message": "'Expiration time' claim ('exp') is too far in the future"}).encode()
    auth._learn_clock({}, clock_refusal)  # no Date header: nothing to go by
    auth._learn_clock({"date": email.utils.formatdate(time.time() + 300, usegmt=True)}, b'{"message": "Bad credentials"}')
    auth._learn_clock({"date": "not a date"}, b"not json")
    assert auth.clock_offset == 0
    auth._learn_clock({"date": email.utils.formatdate(time.time() - 200, usegmt=True)}, clock_refusal)
    assert abs(auth.clock_offset + 200) <= 1
    # Bounded by the clock readings around signing, so a slow machine cannot fail it.
    before = time.time()
    claims = jwt.decode(auth.app_jwt(), options={"verify_signature": False})
    after = time.time()
    assert before + auth.clock_offset - 60 - 1 <= claims["iat"] <= after + auth.clock_offset - 60 + 1


async def test_a_suspended_installation_gets_no_token_and_no_periodic_work(sandbox, auth):
    sandbox.state.add_installation(2, "other-org")
    assert sorted(await auth.installations()) == [1, 2]
    sandbox.state.suspend_installation(2)
    assert await auth.installations() == [1]  # the scheduler queues nothing for it
    assert (await auth.installation(2))["suspended_at"] is not None
    with pytest.raises(GiveUp):
        await auth.installation_token(2)
    sandbox.state.suspend_installation(2, suspended=False)
    assert sorted(await auth.installations()) == [1, 2]
    assert (await auth.installation_token(2)).startswith("ghs_")
