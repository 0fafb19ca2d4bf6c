"""The REST client: headers, retries, rate limits, error mapping, counting, caching, write limits.

A scripted aiohttp server on loopback plays GitHub; sleeping is recorded, never done.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer
from multidict import CIMultiDict

from bot.app.errors import GiveUp, RetryLater
from bot.app.github import (
    API_VERSION,
    ClientFactory,
    Forbidden,
    GitHubClient,
    GitHubError,
    NotFound,
    RetryPolicy,
    TokenBucket,
    ValidationFailed,
    path_template,
    rate_limit_delay,
)


@dataclass
class Answer:
    status: int = 200
    body: Any = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Seen:
    method: str
    path_qs: str
    headers: CIMultiDict
    body: bytes


class ScriptedGitHub:
    """Answers each (method, path) from a queue; the last answer repeats."""

    def __init__(self):
        self.script: dict[tuple[str, str], list[Answer]] = {}
        self.seen: list[Seen] = []

    def on(self, method: str, path: str, *answers: Answer) -> None:
        self.script[(method, path)] = list(answers)

    async def handle(self, request: web.Request) -> web.StreamResponse:
        self.seen.append(Seen(request.method, request.raw_path, CIMultiDict(request.headers), await request.read()))
        queue = self.script.get((request.method, request.path))
        if not queue:
            return web.json_response({"message": "Not Found"}, status=404)
        answer = queue.pop(0) if len(queue) > 1 else queue[0]
        if answer.status == 304:
            return web.Response(status=304, headers=answer.headers)
        return web.json_response(answer.body, status=answer.status, headers=answer.headers)


class Sleeps:
    """A stand-in for asyncio.sleep that records the delays."""

    def __init__(self):
        self.delays: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


@pytest.fixture
async def github():
    fake = ScriptedGitHub()
    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", fake.handle)
    server = TestServer(app, host="127.0.0.1")
    await server.start_server()
    fake.url = str(server.make_url("")).rstrip("/")
    yield fake
    await server.close()


@pytest.fixture
async def session():
    async with aiohttp.ClientSession() as s:
        yield s


def make_client(session, github, **kw) -> tuple[GitHubClient, Sleeps]:
    sleeps = kw.pop("sleep", None) or Sleeps()
    tokens = iter(kw.pop("tokens", ["t1", "t2", "t3"]))
    current = {"token": next(tokens)}

    async def authorization() -> str:
        return f"token {current['token']}"

    def on_unauthorized() -> None:
        current["token"] = next(tokens)

    client = GitHubClient(
        session,
        authorization=authorization,
        on_unauthorized=on_unauthorized,
        api_url=github.url,
        sleep=sleeps,
        rand=lambda: 0.5,
        wall_clock=lambda: 1_000_000.0,
        **kw,
    )
    return client, sleeps


async def test_sends_githubs_headers_and_token(session, github):
    github.on("GET", "/repos/o/r", Answer(body={"full_name": "o/r"}))
    client, _ = make_client(session, github)
    assert await client.getitem("/repos/{owner}/{repo}", {"owner": "o", "repo": "r"}) == {"full_name": "o/r"}
    headers = github.seen[0].headers
    assert headers["Accept"] == "application/vnd.github+json"
    assert headers["X-GitHub-Api-Version"] == API_VERSION == "2022-11-28"
    assert headers["Authorization"] == "token t1"
    assert headers["User-Agent"] == "prguide"
    assert client.calls == 1 and client.calls_by_status == {200: 1}


async def test_url_variables_are_percent_encoded(session, github):
    github.on("DELETE", "/repos/o/r/issues/3/labels/area: rollout/vllm", Answer(204, None))
    client, _ = make_client(session, github)
    await client.delete(
        "/repos/{owner}/{repo}/issues/{n}/labels/{name}", {"owner": "o", "repo": "r", "n": 3, "name": "area: rollout/vllm"}
    )
    # one path segment: the slash is escaped (":" needs no escaping in a path)
    assert github.seen[0].path_qs == "/repos/o/r/issues/3/labels/area:%20rollout%2Fvllm"


async def test_5xx_is_retried_with_full_jitter_backoff(session, github):
    github.on("GET", "/x", Answer(502), Answer(503), Answer(200, {"ok": True}))
    client, sleeps = make_client(session, github)
    assert await client.getitem("/x") == {"ok": True}
    # rand() = 0.5: half of base 0.5 * 2**(attempt-1)
    assert sleeps.delays == [0.25, 0.5]
    assert client.calls == 3 and client.calls_by_status == {502: 1, 503: 1, 200: 1}


async def test_5xx_that_persists_becomes_retry_later(session, github):
    github.on("GET", "/x", Answer(500, {"message": "boom"}))
    client, sleeps = make_client(session, github, policy=RetryPolicy(attempts=3))
    with pytest.raises(RetryLater) as info:
        await client.getitem("/x")
    assert "500" in info.value.reason and info.value.delay is None
    assert client.calls == 3 and len(sleeps.delays) == 2


async def test_backoff_is_capped_and_total_wait_bounded():
    policy = RetryPolicy(base_delay=1.0, max_delay=4.0)
    assert [policy.backoff(n, 0.999999) for n in (1, 2, 3, 4, 5)] == pytest.approx([1, 2, 4, 4, 4], rel=1e-3)
    assert policy.backoff(3, 0.0) == 0.0


async def test_total_wait_bound_stops_retries_early(session, github):
    github.on("GET", "/x", Answer(500))
    client, sleeps = make_client(session, github, policy=RetryPolicy(attempts=10, base_delay=10, max_delay=10, max_total_wait=12))
    with pytest.raises(RetryLater):
        await client.getitem("/x")
    assert sleeps.delays == [5.0, 5.0]  # a third wait would pass 12 s
    assert client.calls == 3


async def test_post_is_not_repeated_after_a_5xx(session, github):
    github.on("POST", "/repos/o/r/issues/1/comments", Answer(502))
    client, sleeps = make_client(session, github)
    with pytest.raises(RetryLater):
        await client.post("/repos/o/r/issues/1/comments", data={"body": "hi"})
    assert client.calls == 1 and sleeps.delays == []


async def test_idempotent_post_is_repeated(session, github):
    github.on("POST", "/repos/o/r/issues/1/labels", Answer(502), Answer(200, [{"name": "bug"}]))
    client, _ = make_client(session, github)
    assert await client.post("/repos/o/r/issues/1/labels", data={"labels": ["bug"]}, idempotent=True) == [{"name": "bug"}]
    assert client.calls == 2


class FailingSession:
    """An aiohttp-like session whose requests fail before any answer."""

    def __init__(self, exc: BaseException):
        self.exc = exc
        self.requests = 0

    def request(self, *args, **kwargs):
        session = self

        class _Ctx:
            async def __aenter__(self):
                session.requests += 1
                raise session.exc

            async def __aexit__(self, *a):
                return False

        return _Ctx()


@pytest.mark.parametrize("exc", [asyncio.TimeoutError(), aiohttp.ServerDisconnectedError()])
async def test_timeouts_and_connection_errors_are_retried_then_retry_later(exc):
    seen = []
    session = FailingSession(exc)
    sleeps = Sleeps()

    async def authorization():
        return "token t"

    client = GitHubClient(
        session, authorization=authorization, api_url="http://127.0.0.1:9", sleep=sleeps, rand=lambda: 1.0,
        on_response=lambda *a: seen.append(a),
    )
    with pytest.raises(RetryLater) as info:
        await client.getitem("/repos/{owner}/{repo}", {"owner": "o", "repo": "r"})
    assert type(exc).__name__ in info.value.reason
    assert session.requests == 4 and sleeps.delays == [0.5, 1.0, 2.0]
    assert client.calls_by_status == {0: 4}
    assert seen[0] == ("GET", "/repos/{owner}/{repo}", 0, None)


async def test_refused_connection_is_real_and_retried(session):
    probe = await asyncio.get_running_loop().create_server(asyncio.Protocol, "127.0.0.1", 0)
    port = probe.sockets[0].getsockname()[1]
    probe.close()
    await probe.wait_closed()
    sleeps = Sleeps()

    async def authorization():
        return "token t"

    client = GitHubClient(session, authorization=authorization, api_url=f"http://127.0.0.1:{port}", sleep=sleeps, policy=RetryPolicy(attempts=2))
    with pytest.raises(RetryLater):
        await client.post("/x", data={})  # even a POST: it never reached the server
    assert client.calls == 2 and len(sleeps.delays) == 1


async def test_short_retry_after_is_waited(session, github):
    github.on("GET", "/x", Answer(403, {"message": "You have exceeded a secondary rate limit."}, {"Retry-After": "7"}), Answer(200, []))
    client, sleeps = make_client(session, github)
    assert await client.getitem("/x") == []
    assert sleeps.delays == [7.0]


async def test_long_retry_after_becomes_retry_later_with_its_delay(session, github):
    github.on("GET", "/x", Answer(429, {"message": "slow down"}, {"Retry-After": "600"}))
    client, sleeps = make_client(session, github)
    with pytest.raises(RetryLater) as info:
        await client.getitem("/x")
    assert info.value.delay == 600.0 and sleeps.delays == []
    assert client.calls == 1


async def test_primary_limit_waits_until_reset(session, github):
    # wall clock is 1_000_000; reset 20 s later (+1 s slack)
    limited = {"X-RateLimit-Remaining": "0", "X-RateLimit-Limit": "5000", "X-RateLimit-Reset": "1000020"}
    github.on("GET", "/x", Answer(403, {"message": "API rate limit exceeded"}, limited), Answer(200, {"ok": 1}))
    client, sleeps = make_client(session, github)
    assert await client.getitem("/x") == {"ok": 1}
    assert sleeps.delays == [21.0]


async def test_primary_limit_far_away_becomes_retry_later(session, github):
    limited = {"X-RateLimit-Remaining": "0", "X-RateLimit-Limit": "5000", "X-RateLimit-Reset": "1001800"}
    github.on("GET", "/x", Answer(403, {"message": "API rate limit exceeded"}, limited))
    client, sleeps = make_client(session, github)
    with pytest.raises(RetryLater) as info:
        await client.getitem("/x")
    assert info.value.delay == 1801.0 and sleeps.delays == []


async def test_secondary_limit_without_headers_waits_a_minute(session, github):
    github.on("POST", "/x", Answer(403, {"message": "You have exceeded a secondary rate limit"}), Answer(201, {"id": 1}))
    client, sleeps = make_client(session, github)
    assert await client.post("/x", data={}) == {"id": 1}  # rejected, so safe to send again
    assert sleeps.delays == [60.0]


async def test_403_without_rate_limit_is_forbidden_and_final(session, github):
    github.on("POST", "/x", Answer(403, {"message": "Resource not accessible by integration"}))
    client, sleeps = make_client(session, github)
    with pytest.raises(Forbidden) as info:
        await client.post("/x", data={})
    assert isinstance(info.value, GiveUp)
    assert "Resource not accessible by integration" in info.value.reason
    assert client.calls == 1 and sleeps.delays == []


def test_rate_limit_delay_reads_http_dates_and_ignores_other_statuses():
    policy = RetryPolicy()
    assert rate_limit_delay(403, {"retry-after": "Thu, 01 Jan 1970 00:01:40 GMT"}, b"", now=40.0, policy=policy) == 60.0
    assert rate_limit_delay(404, {"retry-after": "5"}, b"", now=0.0, policy=policy) is None
    assert rate_limit_delay(429, {}, b"not json", now=0.0, policy=policy) == policy.secondary_limit_wait
    assert rate_limit_delay(403, {}, b'{"message": "Must have admin rights"}', now=0.0, policy=policy) is None


async def test_401_refreshes_the_token_once(session, github):
    github.on("GET", "/x", Answer(401, {"message": "Bad credentials"}), Answer(200, {"ok": 1}))
    client, _ = make_client(session, github)
    assert await client.getitem("/x") == {"ok": 1}
    assert [s.headers["Authorization"] for s in github.seen] == ["token t1", "token t2"]


async def test_401_twice_is_an_error(session, github):
    github.on("GET", "/x", Answer(401, {"message": "Bad credentials"}))
    client, _ = make_client(session, github)
    with pytest.raises(GitHubError) as info:
        await client.getitem("/x")
    assert info.value.status == 401 and "Bad credentials" in str(info.value)
    assert [s.headers["Authorization"] for s in github.seen] == ["token t1", "token t2"]


async def test_404_is_not_found_a_give_up(session, github):
    client, _ = make_client(session, github)
    with pytest.raises(NotFound) as info:
        await client.getitem("/repos/{owner}/{repo}/pulls/{n}", {"owner": "o", "repo": "r", "n": 9})
    assert isinstance(info.value, GiveUp) and info.value.status == 404
    assert client.calls == 1


async def test_422_is_validation_failed_with_githubs_errors_never_retried(session, github):
    errors = [{"resource": "Label", "code": "already_exists", "field": "name"}]
    github.on("POST", "/repos/o/r/labels", Answer(422, {"message": "Validation Failed", "errors": errors}))
    client, sleeps = make_client(session, github)
    with pytest.raises(ValidationFailed) as info:
        await client.post("/repos/o/r/labels", data={"name": "bug"}, idempotent=True)
    assert info.value.status == 422 and info.value.errors == errors
    assert info.value.has_code("already_exists") and not info.value.has_code("invalid")
    assert "Validation Failed" in info.value.message
    assert client.calls == 1 and sleeps.delays == []


async def test_getiter_follows_link_pages(session, github):
    nxt = f'<{github.url}/items2?page=2>; rel="next"'
    github.on("GET", "/items", Answer(200, [1, 2], {"Link": nxt}))
    github.on("GET", "/items2", Answer(200, [3]))
    client, _ = make_client(session, github)
    assert await client.getlist("/items") == [1, 2, 3]
    assert client.calls == 2


async def test_conditional_requests_turn_repeats_into_304s(session, github):
    github.on("GET", "/repos/o/r/labels", Answer(200, [{"name": "bug"}], {"ETag": '"abc"'}), Answer(304, headers={"ETag": '"abc"'}))
    cache: dict = {}
    first, _ = make_client(session, github, cache=cache)
    second, _ = make_client(session, github, cache=cache)
    assert await first.getitem("/repos/o/r/labels") == [{"name": "bug"}]
    assert await second.getitem("/repos/o/r/labels") == [{"name": "bug"}]
    assert github.seen[1].headers["If-None-Match"] == '"abc"'
    assert second.calls_by_status == {304: 1}


async def test_on_response_hook_gets_route_status_and_remaining(session, github):
    github.on("GET", "/repos/o/r/pulls/5/files", Answer(200, [], {"X-RateLimit-Remaining": "4321"}))
    seen = []
    client, _ = make_client(session, github, on_response=lambda *a: seen.append(a))
    await client.getitem("/repos/o/r/pulls/5/files?per_page=100")
    assert seen == [("GET", "/repos/{owner}/{repo}/pulls/{pull_number}/files", 200, 4321)]


async def test_a_failing_hook_does_not_fail_the_request(session, github):
    github.on("GET", "/x", Answer(200, {"ok": 1}))

    def broken(*_):
        raise RuntimeError("metrics down")

    client, _ = make_client(session, github, on_response=broken)
    assert await client.getitem("/x") == {"ok": 1}


def test_path_template_names_the_parts():
    base = "https://ghe.example.com/api/v3"
    assert path_template(f"{base}/repos/o/r/issues/12/labels/bug%20fix", base) == "/repos/{owner}/{repo}/issues/{issue_number}/labels/{name}"
    assert path_template("https://api.github.com/repos/o/r/contents/a/b.yml?ref=x") == "/repos/{owner}/{repo}/contents/{path}"
    assert path_template("https://api.github.com/app/installations/7/access_tokens") == "/app/installations/{installation_id}/access_tokens"
    assert path_template("https://api.github.com/repos/o/r/issues/comments/99/reactions") == "/repos/{owner}/{repo}/issues/comments/{comment_id}/reactions"


def test_token_bucket_allows_a_burst_then_one_per_second():
    now = [0.0]
    bucket = TokenBucket(rate=1.0, capacity=20, clock=lambda: now[0])
    assert [bucket.reserve() for _ in range(20)] == [0.0] * 20
    assert bucket.reserve() == pytest.approx(1.0)
    assert bucket.reserve() == pytest.approx(2.0)
    now[0] = 100.0
    assert bucket.reserve() == 0.0


def test_token_bucket_never_allows_more_than_80_writes_a_minute():
    now = [0.0]
    bucket = TokenBucket(rate=1.0, capacity=20, clock=lambda: now[0])
    sent: list[float] = []
    for _ in range(300):
        wait = bucket.reserve()
        now[0] += wait
        sent.append(now[0])
        now[0] += 0.01
    for i, start in enumerate(sent):
        in_window = sum(1 for t in sent[i:] if t < start + 60)
        assert in_window <= 80


async def test_writes_go_through_the_installation_bucket_reads_do_not(session, github):
    github.on("POST", "/w", Answer(201, {}))
    github.on("GET", "/r", Answer(200, {}))
    now = [0.0]
    sleeps = Sleeps()

    class FakeAuth:
        api_url = github.url

        async def installation_token(self, installation_id):
            return "tok"

        def forget(self, installation_id):
            pass

    factory = ClientFactory(FakeAuth(), session=session, write_rate=1.0, write_burst=2, sleep=sleeps, monotonic=lambda: now[0])
    one, two = factory.for_installation(5), factory.for_installation(5)
    for _ in range(3):
        await one.getitem("/r")
    await one.post("/w", data={})
    await two.post("/w", data={})
    await two.post("/w", data={})  # the third write shares the bucket with the other client
    assert sleeps.delays == [pytest.approx(1.0)]
    other = factory.for_installation(6)
    await other.post("/w", data={})
    assert len(sleeps.delays) == 1
    assert one.calls == 4 and two.calls == 2
    assert github.seen[0].headers["Authorization"] == "token tok"


def test_repr_shows_no_token(session):
    async def authorization():
        return "token SECRET"

    client = GitHubClient(session, authorization=authorization, installation_id=3)
    assert "SECRET" not in repr(client) and "installation 3" in repr(client)


async def test_other_4xx_is_a_github_error(session, github):
    github.on("GET", "/x", Answer(400, {"message": "Problems parsing JSON"}))
    client, _ = make_client(session, github)
    with pytest.raises(GitHubError) as info:
        await client.getitem("/x")
    assert info.value.status == 400 and "Problems parsing JSON" in info.value.message
    assert info.value.errors == [] and client.calls == 1


def test_shipped_write_budget_respects_githubs_minute_and_hour_limits():
    from bot.app.github import HOURLY_WRITE_BURST, HOURLY_WRITE_RATE, WRITE_BURST, WRITE_RATE

    assert WRITE_BURST + 60 * WRITE_RATE <= 80
    assert HOURLY_WRITE_BURST + 3600 * HOURLY_WRITE_RATE <= 500


async def test_the_hour_bucket_paces_writes_once_the_minute_bucket_allows_them(session):
    from bot.app.github import ClientFactory

    class FakeAuth:
        api_url = "http://127.0.0.1:9"

    now = [0.0]
    factory = ClientFactory(FakeAuth(), session=session, write_rate=100.0, write_burst=100, hourly_rate=1 / 60,
                            hourly_burst=2, monotonic=lambda: now[0])
    waits = [factory.reserve_write(1) for _ in range(3)]
    assert waits[:2] == [0.0, 0.0] and waits[2] == pytest.approx(60.0)
    assert factory.reserve_write(2) == 0.0  # another installation has its own budget


async def test_a_redirected_write_is_repeated_with_its_method_and_body(session, github):
    github.on("PATCH", "/repos/o/old/issues/comments/5", Answer(301, {"message": "Moved Permanently"}, {"Location": f"{github.url}/repositories/9/issues/comments/5"}))
    github.on("PATCH", "/repositories/9/issues/comments/5", Answer(200, {"id": 5}))
    client, _ = make_client(session, github)
    assert await client.patch("/repos/o/old/issues/comments/5", data={"body": "hi"}) == {"id": 5}
    assert [(s.method, s.path_qs) for s in github.seen] == [
        ("PATCH", "/repos/o/old/issues/comments/5"),
        ("PATCH", "/repositories/9/issues/comments/5"),
    ]
    assert github.seen[1].body == github.seen[0].body == b'{"body": "hi"}'
    assert github.seen[1].headers["Authorization"] == "token t1"


@pytest.mark.parametrize(
    ("location", "words"),
    [("https://elsewhere.example/repositories/9/labels", "another host"), (None, "without a Location"), ("/loop", "more than 5 redirects")],
)
async def test_redirects_off_the_api_host_without_location_or_in_a_loop_are_refused(session, github, location, words):
    headers = {"Location": location} if location else {}
    github.on("POST", "/repos/o/r/labels", Answer(307, {"message": "Temporary Redirect"}, headers))
    github.on("POST", "/loop", Answer(307, {"message": "Temporary Redirect"}, headers))
    client, _ = make_client(session, github)
    with pytest.raises(GitHubError, match=words):
        await client.post("/repos/o/r/labels", data={"name": "x"})
    assert all(s.headers.get("Host", "").startswith("127.0.0.1") for s in github.seen)


class InstallationAuth:
    """Tokens for any installation, no network."""

    def __init__(self, api_url: str):
        self.api_url = api_url

    async def installation_token(self, installation_id):
        return f"tok-{installation_id}"

    def forget(self, installation_id):
        pass


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
async def test_once_github_says_the_limit_is_spent_no_replica_sends_for_that_installation_until_the_reset(
    session, github, tmp_path, request, backend
):
    from bot.app.errors import RateLimited
    from bot.app.ratelimit import RateLimits
    from bot.app.shared_state import PgRateLimits, SqliteRateLimits

    now = [1_000_000.0]
    spent = {"X-RateLimit-Remaining": "0", "X-RateLimit-Limit": "5000", "X-RateLimit-Reset": "1001800"}
    github.on("GET", "/x", Answer(403, {"message": "API rate limit exceeded"}, spent), Answer(200, {"ok": 1}))

    def replica() -> ClientFactory:
        # Two processes on one database: each its own factory, its own view of the budgets.
        store = SqliteRateLimits.open(tmp_path / "prguide.db") if backend == "sqlite" else PgRateLimits(
            request.getfixturevalue("pg_database"))
        limits = RateLimits(store, clock=lambda: now[0])
        return ClientFactory(InstallationAuth(github.url), session=session, sleep=Sleeps(), wall_clock=lambda: now[0],
                             rate_limits=limits)  # fmt: skip

    first, second = replica(), replica()
    with pytest.raises(RateLimited) as refused:
        await first.for_installation(5).getitem("/x")
    assert refused.value.delay == 1801.0
    for factory in (first, second):  # another job of this replica, a job of the other one
        with pytest.raises(RateLimited) as held:
            await factory.for_installation(5).getitem("/x")
        assert held.value.delay == 1801.0
    assert len(github.seen) == 1  # neither asked GitHub again
    assert await second.for_installation(6).getitem("/x") == {"ok": 1}  # another installation has its own limit
    now[0] += 1801
    assert await second.for_installation(5).getitem("/x") == {"ok": 1}  # after the reset
    assert len(github.seen) == 3


async def test_a_background_client_leaves_the_rest_of_the_limit_to_live_jobs_and_never_sleeps_for_it(session, github):
    from bot.app.errors import RateLimited

    low = {"X-RateLimit-Remaining": "900", "X-RateLimit-Limit": "5000", "X-RateLimit-Reset": "1000600"}
    github.on("GET", "/x", Answer(200, {"ok": 1}, low))
    sleeps = Sleeps()
    factory = ClientFactory(InstallationAuth(github.url), session=session, sleep=sleeps, wall_clock=lambda: 1_000_000.0)
    live = factory.for_installation(5)
    assert await live.getitem("/x") == {"ok": 1}  # 900 of 5,000 left
    background = factory.for_installation(5)
    background.reserve = 0.2  # leave a fifth of the limit to live work
    with pytest.raises(RateLimited) as held:
        await background.getitem("/x")
    assert held.value.delay == 601.0 and background.calls == 0 and sleeps.delays == []
    assert await live.getitem("/x") == {"ok": 1}  # live work still goes
    assert len(github.seen) == 2
