"""A thin client over gidgethub for one GitHub App installation.

What it adds to ``gidgethub.aiohttp.GitHubAPI``:

* the REST headers GitHub asks for (``Accept: application/vnd.github+json``,
  ``X-GitHub-Api-Version: 2022-11-28``) and a fresh installation token on every attempt;
* retries with exponential backoff and full jitter on 5xx answers, time-outs and
  connection errors, then :class:`~bot.app.errors.RetryLater`;
* GitHub's rate limits ("Rate limits for the REST API", "Best practices for using the
  REST API"): ``retry-after``, ``x-ratelimit-remaining: 0`` + ``x-ratelimit-reset`` and
  secondary limits without headers; short waits are slept, long ones become
  :class:`~bot.app.errors.RateLimited`; an installation's client reads and records its
  budget (:class:`bot.app.ratelimit.RateLimits`, shared by replicas) and sends nothing
  GitHub would refuse before the reset;
* one retry with a new token after a 401;
* errors callers can act on: :class:`NotFound` and :class:`Forbidden` end a job
  (both are :class:`~bot.app.errors.GiveUp`), :class:`ValidationFailed` (422) carries
  GitHub's message and ``errors``;
* a per-job call counter and an ``on_response`` hook for metrics;
* conditional requests through a shared LRU cache bounded in bytes (304 answers do not
  count against the primary rate limit);
* a token bucket per installation for content-creating requests (GitHub's secondary
  limit: at most 80 per minute).

A POST is not repeated after a 5xx or a time-out unless the caller says it is
idempotent: GitHub may have carried it out before failing, and a second comment would
be visible to everyone. The job is retried instead, and publishing finds its comment.
"""

from __future__ import annotations

import asyncio
import inspect
import contextvars
import logging
import random
import re
import time
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, MutableMapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urljoin, urlsplit

import aiohttp
import cachetools
import gidgethub
import gidgethub.aiohttp
import gidgethub.sansio

from bot.app.api_paths import DEFAULT_API_URL, path_template
from bot.app.answer_cache import MAX_BYTES as MAX_CACHE_BYTES, AnswerCache
from bot.app.errors import RateLimited, RetryLater
from bot.app.github_errors import Forbidden, GitHubError, NotFound, ValidationFailed, translate  # noqa: F401
# TokenBucket, rate_limit_delay and the write rates are still importable from here.
from bot.app.ratelimit import (  # noqa: F401
    HOURLY_WRITE_BURST,
    HOURLY_WRITE_RATE,
    WRITE_BURST,
    WRITE_RATE,
    RateLimits,
    answer_time,
    TokenBucket,
    rate_limit_delay,
    rate_remaining,
)

log = logging.getLogger(__name__)

#: The REST API version prguide is written against ("API Versions").
API_VERSION = "2022-11-28"
#: The media type GitHub recommends for REST requests ("Getting started with the REST API").
ACCEPT = "application/vnd.github+json"
#: Who we are, in the ``User-Agent`` header GitHub requires.
DEFAULT_REQUESTER = "prguide"

#: Methods that create or change content, subject to the secondary limit of 80 per minute.
WRITE_METHODS = frozenset({"POST", "PATCH", "PUT", "DELETE"})
#: Redirects GitHub answers for a renamed or transferred repository ("Best practices for
#: using the REST API", follow redirects): the request is repeated at ``Location``.
REDIRECTS = frozenset({301, 302, 307, 308})
#: Redirects followed for one request, at most.
MAX_REDIRECTS = 5

#: ``on_response(method, path_template, status, rate_remaining)``; status 0 means no
#: HTTP answer arrived (time-out or connection error); ``rate_remaining`` is
#: ``x-ratelimit-remaining`` or ``None``.
ResponseHook = Callable[[str, str, int, "int | None"], None]

# Set by callers that know a POST can safely be sent twice (adding labels, reactions).
_idempotent_post: contextvars.ContextVar[bool] = contextvars.ContextVar("prguide_idempotent_post", default=False)
# Set for an optional request (the blame): sent once, no rate limit waited out.
_optional: contextvars.ContextVar[bool] = contextvars.ContextVar("prguide_optional", default=False)
# Statuses the caller of the request in flight expects as a normal answer (a 404 for an
# optional file): read by on_response hooks through expected_status().
_expected: contextvars.ContextVar[frozenset[int]] = contextvars.ContextVar("prguide_expected", default=frozenset())
# Set by get_page to learn the status and Link header of the answer it gets.
_answer: contextvars.ContextVar[dict | None] = contextvars.ContextVar("prguide_answer", default=None)
_NEXT_LINK = re.compile(r'<([^>]+)>\s*;\s*rel="next"')


def expected_status(status: int) -> bool:
    """True when the request being answered was sent by a caller that expects ``status``.

    Meant for ``on_response`` hooks, which run in the request's context: a 404 for a
    repository without ``.github/prguide.yml`` is an answer, not an API error. Callers
    declare it with ``expect=`` (:meth:`GitHubClient.getitem`, :meth:`GitHubClient.delete`).
    """
    return status in _expected.get()


class _expecting:
    """Context manager declaring the statuses the enclosed request expects."""

    def __init__(self, statuses: Any):
        self.statuses = frozenset(int(s) for s in statuses or ())
        self.token: Any = None

    def __enter__(self) -> None:
        self.token = _expected.set(self.statuses) if self.statuses else None

    def __exit__(self, *exc_info: Any) -> None:
        if self.token is not None:
            _expected.reset(self.token)


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How hard one request tries before the job is handed back with ``RetryLater``.

    All times are seconds. ``attempts`` counts the first try. Backoff before attempt
    ``n + 1`` is uniform in ``[0, min(max_delay, base_delay * 2**(n - 1))]`` ("full jitter").
    Rate-limit waits up to ``max_rate_limit_wait`` are slept; longer ones raise
    ``RetryLater(delay=...)``. ``max_total_wait`` bounds all sleeping for one request.
    ``secondary_limit_wait`` applies when GitHub signals a secondary rate limit without
    ``retry-after`` (GitHub: "wait at least one minute").
    """

    attempts: int = 4
    base_delay: float = 0.5
    max_delay: float = 8.0
    max_total_wait: float = 90.0
    max_rate_limit_wait: float = 60.0
    secondary_limit_wait: float = 60.0
    request_timeout: float = 30.0

    def backoff(self, attempt: int, rand: float) -> float:
        """Seconds to wait after failed attempt number ``attempt`` (1-based); ``rand`` in [0, 1)."""
        return rand * min(self.max_delay, self.base_delay * 2 ** (attempt - 1))


@dataclass(frozen=True, slots=True)
class Page:
    """One page of a REST list: its ``items`` and the absolute ``next_url`` (``None`` on the last)."""

    items: list[Any]
    next_url: str | None


@dataclass(slots=True)
class CallStats:
    """HTTP requests one client made: ``total`` and ``by_status`` (0: no HTTP answer)."""

    total: int = 0
    by_status: Counter = field(default_factory=Counter)

    def record(self, status: int) -> None:
        """Count one request that ended with ``status``."""
        self.total += 1
        self.by_status[status] += 1


class _Transport(gidgethub.aiohttp.GitHubAPI):
    """gidgethub with prguide's ``_request``: auth per attempt, retries, limits, counting."""

    def __init__(
        self,
        session: aiohttp.ClientSession,
        requester: str,
        *,
        base_url: str,
        cache: MutableMapping | None,
        authorization: Callable[[], Awaitable[str]],
        on_unauthorized: Callable[[], None] | None,
        on_401: Callable[[Mapping[str, str], bytes], None] | None = None,
        policy: RetryPolicy,
        stats: CallStats,
        reserve_write: Callable[[], float] | None,
        on_response: ResponseHook | None,
        sleep: Callable[[float], Awaitable[Any]],
        rand: Callable[[], float],
        wall_clock: Callable[[], float],
        limits: RateLimits | None = None,
        installation_id: int | None = None,
    ):
        super().__init__(session, requester, cache=cache, base_url=base_url)
        # The installation's primary rate limit, shared with its other jobs and replicas.
        self._limits = limits if installation_id is not None else None
        self._installation_id = installation_id
        #: Share of the installation's limit this client leaves to others (see GitHubClient.reserve).
        self.reserve = 0.0
        self._authorization = authorization
        self._on_unauthorized = on_unauthorized
        self._on_401 = on_401
        self._policy = policy
        self._stats = stats
        self._reserve_write = reserve_write
        self._on_response = on_response
        self._sleep = sleep
        self._rand = rand
        self._wall_clock = wall_clock

    def __repr__(self) -> str:
        return f"<GitHub transport {self.base_url}>"

    async def sleep(self, seconds: float) -> None:
        await self._sleep(seconds)

    async def _request(self, method: str, url: str, headers: Mapping[str, str], body: bytes = b"") -> tuple[int, Mapping[str, str], bytes]:
        policy = self._policy
        route = path_template(url, self.base_url)
        what = f"{method} {route}"
        safe_to_repeat = method != "POST" or _idempotent_post.get()
        send_headers = dict(headers)
        send_headers["x-github-api-version"] = API_VERSION
        waited = 0.0
        refreshed = False
        attempt = 0
        redirects = 0
        slept = False  # the last wait was for a rate limit: what it asked for is done
        while True:
            if self._limits is not None and not slept:
                hold = await self._limits.wait(self._installation_id, reserve=self.reserve)
                if hold > 0:
                    if self._may_sleep(hold, waited, attempt):
                        log.info("%s: installation %s must wait %.1fs", what, self._installation_id, hold)
                        await self._sleep(hold)
                        waited, slept = waited + hold, True
                        continue
                    who = f"installation {self._installation_id}"
                    raise RateLimited(f"{what}: {who} must wait {hold:.0f}s for GitHub's rate limit", hold)
            attempt += 1
            slept = False
            send_headers["authorization"] = await self._authorization()
            if method in WRITE_METHODS and self._reserve_write is not None:
                delay = self._reserve_write()
                if inspect.isawaitable(delay):  # a budget shared in a database
                    delay = await delay
                if delay > 0:
                    await self._sleep(delay)
            try:
                # Redirects are followed here, not by aiohttp, which would turn a POST
                # answered 301/302 into a GET and drop its body.
                async with self._session.request(
                    method,
                    url,
                    headers=send_headers,
                    data=body,
                    timeout=aiohttp.ClientTimeout(total=policy.request_timeout),
                    allow_redirects=False,
                ) as response:
                    status, resp_headers, resp_body = response.status, response.headers, await response.read()
            except (asyncio.TimeoutError, aiohttp.ClientError) as exc:
                self._observe(method, route, 0, {})
                # A refused connection never reached GitHub, so even a POST may be repeated.
                repeatable = safe_to_repeat or isinstance(exc, aiohttp.ClientConnectorError)
                delay = policy.backoff(attempt, self._rand())
                if repeatable and attempt < policy.attempts and waited + delay <= policy.max_total_wait:
                    log.info("%s failed (%s); retry %d in %.2fs", what, type(exc).__name__, attempt, delay)
                    await self._sleep(delay)
                    waited += delay
                    continue
                raise RetryLater(f"{what}: {type(exc).__name__} after {attempt} attempt(s)") from exc
            self._observe(method, route, status, resp_headers)
            # GitHub's reset is on its clock: the wait runs from its time of the answer.
            github_now = answer_time(resp_headers, self._wall_clock())
            wait = rate_limit_delay(status, resp_headers, resp_body, now=github_now, policy=policy)
            if self._limits is not None and status != 401:  # a refused token is counted as no one's
                await self._limits.observe(self._installation_id, resp_headers, refused=wait)
            if status in REDIRECTS:
                url = self._redirect_target(what, url, status, resp_headers.get("location"), redirects)
                redirects += 1
                attempt -= 1  # not a failed attempt
                route = path_template(url, self.base_url)
                continue
            answer = _answer.get()
            if answer is not None:
                answer.update(status=status, link=resp_headers.get("link"))

            if status == 401 and self._on_unauthorized is not None and not refreshed:
                # An expired or revoked token: get a new one, once.
                refreshed = True
                if self._on_401 is not None:
                    self._on_401(resp_headers, resp_body)
                self._on_unauthorized()
                continue
            if status >= 500:
                delay = policy.backoff(attempt, self._rand())
                if safe_to_repeat and attempt < policy.attempts and waited + delay <= policy.max_total_wait:
                    log.info("%s answered %d; retry %d in %.2fs", what, status, attempt, delay)
                    await self._sleep(delay)
                    waited += delay
                    continue
                raise RetryLater(f"{what}: GitHub answered {status} after {attempt} attempt(s)")
            if wait is not None:
                if self._may_sleep(wait, waited, attempt):
                    log.warning("%s rate limited (%d); waiting %.1fs", what, status, wait)
                    await self._sleep(wait)
                    waited, slept = waited + wait, True
                    continue
                raise RateLimited(f"{what}: rate limited ({status}), retry in {wait:.0f}s", wait)
            return status, resp_headers, resp_body

    def _may_sleep(self, wait: float, waited: float, attempt: int) -> bool:
        """Whether a rate-limit wait is slept here rather than handed to the worker pool.

        Only short waits of a live job: a background job (``reserve``) gives its worker
        back at once, and a long wait must not hold a worker that live jobs need.
        """
        policy = self._policy
        return (
            not self.reserve and not _optional.get() and wait <= policy.max_rate_limit_wait and attempt < policy.attempts
            and waited + wait <= policy.max_total_wait
        )

    def _redirect_target(self, what: str, url: str, status: int, location: str | None, redirects: int) -> str:
        """Where to repeat a request GitHub redirected, same method and body.

        Only within the API's own origin: the request carries the installation's token.
        Raises :class:`GitHubError` for a redirect without ``Location``, to another
        origin, or after :data:`MAX_REDIRECTS`.
        """
        if not location:
            raise GitHubError("redirect without a Location header", status=status, path=what)
        target = urljoin(url, location)
        base, new = urlsplit(self.base_url), urlsplit(target)
        if (new.scheme, new.netloc) != (base.scheme, base.netloc):
            raise GitHubError(f"redirected to another host ({new.netloc}); not followed", status=status, path=what)
        if redirects >= MAX_REDIRECTS:
            raise GitHubError(f"more than {MAX_REDIRECTS} redirects", status=status, path=what)
        log.info("%s answered %d (repository renamed or moved?); repeating it at %s", what, status, path_template(target, self.base_url))
        return target

    def _observe(self, method: str, route: str, status: int, headers: Mapping[str, str]) -> None:
        self._stats.record(status)
        log.debug("%s %s -> %s", method, route, status or "no answer")
        if self._on_response is not None:
            try:
                # Only the REST (``core``) budget: GraphQL's is another count of another limit.
                core = headers.get("x-ratelimit-resource") in (None, "core")
                self._on_response(method, route, status, rate_remaining(headers) if core else None)
            except Exception:  # a metrics bug must not fail a job
                log.exception("on_response hook failed")


class GitHubClient:
    """REST calls as one identity: an installation (for jobs) or the app itself (its JWT).

    ``authorization()`` returns the ``Authorization`` header value (``"token ..."`` or
    ``"bearer ..."``) and is awaited before every attempt; ``on_unauthorized()`` is called
    once after a 401 (e.g. ``AppAuth.forget``), after ``on_401(headers, body)`` (the
    refusal itself, e.g. to learn GitHub's clock from its ``Date`` header). ``session`` is the process's shared
    ``aiohttp.ClientSession``. ``api_url`` is the REST root (GitHub Enterprise Server:
    ``https://HOST/api/v3``). ``cache`` is a shared bounded mapping (e.g.
    ``cachetools.LRUCache``) for conditional GETs. ``reserve_write()`` returns the
    seconds to wait before a content-creating request (e.g. :meth:`TokenBucket.reserve`).
    ``sleep``, ``rand`` (uniform [0, 1))
    and ``wall_clock`` (epoch seconds) are injectable for tests.

    ``calls`` counts every HTTP request this client sent (retries included);
    ``calls_by_status`` splits them by status (0: no answer).

    ``limits``: the installation's budgets (:class:`bot.app.ratelimit.RateLimits`),
    asked before and told after every request; :attr:`reserve` makes it a background client.

    Every method raises :class:`RetryLater` (5xx, time-outs; :class:`RateLimited` for rate limits),
    :class:`NotFound` (404/410), :class:`Forbidden` (403 without rate limit),
    :class:`ValidationFailed` (422) or :class:`GitHubError` (other 4xx).
    """

    def __init__(
        self,
        session: aiohttp.ClientSession,
        *,
        authorization: Callable[[], Awaitable[str]],
        on_unauthorized: Callable[[], None] | None = None,
        on_401: Callable[[Mapping[str, str], bytes], None] | None = None,
        api_url: str = DEFAULT_API_URL,
        cache: MutableMapping | None = None,
        policy: RetryPolicy | None = None,
        reserve_write: Callable[[], float] | None = None,
        on_response: ResponseHook | None = None,
        sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
        rand: Callable[[], float] = random.random,
        wall_clock: Callable[[], float] = time.time,
        requester: str = DEFAULT_REQUESTER,
        installation_id: int | None = None,
        limits: RateLimits | None = None,
    ):
        self.installation_id = installation_id
        self.api_url = api_url.rstrip("/")
        self.stats = CallStats()
        self._gh = _Transport(
            session,
            requester,
            base_url=self.api_url,
            cache=cache,
            authorization=authorization,
            on_unauthorized=on_unauthorized,
            on_401=on_401,
            policy=policy or RetryPolicy(),
            stats=self.stats,
            reserve_write=reserve_write,
            on_response=on_response,
            sleep=sleep,
            rand=rand,
            wall_clock=wall_clock,
            limits=limits,
            installation_id=installation_id,
        )

    @property
    def reserve(self) -> float:
        """Share (0 to 1) of the installation's ``x-ratelimit-limit`` this client leaves to others.

        0 (a live job): it sends while GitHub would answer. A background job sets it: it
        sends nothing while no more than that share is left in the window, and never sleeps
        for a rate limit (:class:`RateLimited` hands the job back to the pool at once).
        """
        return self._gh.reserve

    @reserve.setter
    def reserve(self, share: float) -> None:
        self._gh.reserve = min(1.0, max(0.0, float(share)))

    def __repr__(self) -> str:
        who = f"installation {self.installation_id}" if self.installation_id is not None else "app"
        return f"<GitHubClient {who} at {self.api_url}, {self.calls} calls>"

    @property
    def calls(self) -> int:
        """HTTP requests sent so far, retries and 304s included."""
        return self.stats.total

    @property
    def calls_by_status(self) -> dict[int, int]:
        """Requests per HTTP status (0: no answer)."""
        return dict(self.stats.by_status)

    async def getitem(
        self, url: str, url_vars: Mapping[str, Any] | None = None, *, accept: str = ACCEPT, expect: Any = ()
    ) -> Any:
        """GET one resource; ``url`` may be a URI template filled from ``url_vars`` (values are percent-encoded).

        ``expect``: error statuses the caller handles as normal answers (e.g. ``(404,)``
        for an optional file); they still raise, but metrics count them apart
        (:func:`expected_status`).
        """
        with _expecting(expect), _mapped("GET", url):
            return await self._gh.getitem(url, url_vars or {}, accept=accept)

    async def getiter(
        self, url: str, url_vars: Mapping[str, Any] | None = None, *, accept: str = ACCEPT, iterable_key: str = "items"
    ) -> AsyncIterator[Any]:
        """Yield the items of a list, following ``Link: rel="next"`` page by page.

        A page that is an object rather than a list holds its items under
        ``iterable_key`` (``"repositories"`` for "List repositories accessible to the
        app installation", ``{"total_count", "repositories"}``).
        """
        with _mapped("GET", url):
            async for item in self._gh.getiter(url, url_vars or {}, accept=accept, iterable_key=iterable_key):
                yield item

    async def getlist(
        self, url: str, url_vars: Mapping[str, Any] | None = None, *, accept: str = ACCEPT, iterable_key: str = "items"
    ) -> list[Any]:
        """All items of a paginated list (see :meth:`getiter`)."""
        return [item async for item in self.getiter(url, url_vars, accept=accept, iterable_key=iterable_key)]

    async def get_page(self, url: str, url_vars: Mapping[str, Any] | None = None, *, iterable_key: str = "items") -> Page:
        """GET one page of a list and the URL of the next page (from ``Link: rel="next"``).

        Lets callers fetch several pages at once instead of following links one by one.
        A page that is an object holds its items under ``iterable_key`` (as :meth:`getiter`).
        """
        answer: dict[str, Any] = {}
        # The entry gidgethub reads before its first await: looked up after a 304, it may have
        # been evicted by other jobs' answers, and the page would pass for the last one.
        cached = (self._gh._cache or {}).get(gidgethub.sansio.format_url(url, url_vars or {}, base_url=self.api_url))
        token = _answer.set(answer)
        try:
            with _mapped("GET", url):
                data = await self._gh.getitem(url, url_vars or {}, accept=ACCEPT)
        finally:
            _answer.reset(token)
        if answer.get("status") == 304 and cached is not None:  # Link may be omitted: the cached next_url
            return Page(_items(data, iterable_key), cached[3])
        match = _NEXT_LINK.search(answer.get("link") or "")
        return Page(_items(data, iterable_key), match.group(1) if match else None)

    async def post(self, url: str, url_vars: Mapping[str, Any] | None = None, *, data: Any, idempotent: bool = False, accept: str = ACCEPT, optional: bool = False) -> Any:
        """POST ``data`` as JSON; ``idempotent=True`` allows repeating it after a 5xx or time-out; ``optional=True``
        (a read the caller can do without) is sent once, a rate limit raising :class:`~bot.app.errors.RateLimited`."""
        tokens = _idempotent_post.set(idempotent and not optional), _optional.set(optional)
        try:
            with _mapped("POST", url):
                return await self._gh.post(url, url_vars or {}, data=data, accept=accept)
        finally:
            _optional.reset(tokens[1]), _idempotent_post.reset(tokens[0])

    async def patch(self, url: str, url_vars: Mapping[str, Any] | None = None, *, data: Any, accept: str = ACCEPT) -> Any:
        """PATCH ``data`` as JSON and return GitHub's answer."""
        with _mapped("PATCH", url):
            return await self._gh.patch(url, url_vars or {}, data=data, accept=accept)

    async def put(self, url: str, url_vars: Mapping[str, Any] | None = None, *, data: Any = b"", accept: str = ACCEPT) -> Any:
        """PUT ``data`` as JSON (or nothing) and return GitHub's answer."""
        with _mapped("PUT", url):
            return await self._gh.put(url, url_vars or {}, data=data, accept=accept)

    async def delete(self, url: str, url_vars: Mapping[str, Any] | None = None, *, accept: str = ACCEPT, expect: Any = ()) -> None:
        """DELETE a resource; ``expect`` as for :meth:`getitem`."""
        with _expecting(expect), _mapped("DELETE", url):
            await self._gh.delete(url, url_vars or {}, accept=accept)


def _items(data: Any, iterable_key: str) -> list[Any]:
    return list((data.get(iterable_key) or ()) if isinstance(data, Mapping) else (data or ()))


class _mapped:
    """Turn gidgethub's HTTP exceptions into prguide's (a context manager)."""

    def __init__(self, method: str, url: str):
        self.method = method
        self.url = url

    def __enter__(self) -> None:
        return None

    def __exit__(self, exc_type, exc, tb) -> bool:
        if exc is None or not isinstance(exc, gidgethub.HTTPException):
            return False
        path = path_template(self.url) if "://" in self.url else self.url.split("?")[0]
        raise translate(exc, self.method, path) from exc


class ClientFactory:
    """Process-wide state every job's :class:`GitHubClient` shares; one per process.

    Holds the one ``aiohttp.ClientSession``, the app's :class:`~bot.app.auth.AppAuth`,
    the conditional-request cache (:class:`bot.app.answer_cache.AnswerCache`, an LRU of
    at most ``cache_bytes`` of decoded answers) and, per
    installation, the write :class:`TokenBucket` pair that keeps content-generating
    requests under 80 a minute and 500 an hour (at most ``max_installations`` pairs,
    each dropped once idle long enough to be full again). ``write_rate`` (per second)
    and ``write_burst`` size the minute bucket, ``hourly_rate``/``hourly_burst`` the hour
    bucket (``hourly_rate=None``: none). ``api_url`` defaults to the auth's.
    """

    def __init__(
        self,
        auth: Any,
        *,
        session: aiohttp.ClientSession,
        api_url: str | None = None,
        policy: RetryPolicy | None = None,
        cache_bytes: int = MAX_CACHE_BYTES,
        write_rate: float = WRITE_RATE,
        write_burst: float = WRITE_BURST,
        hourly_rate: float | None = HOURLY_WRITE_RATE,
        hourly_burst: float = HOURLY_WRITE_BURST,
        max_installations: int = 4096,
        on_response: ResponseHook | None = None,
        sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
        rand: Callable[[], float] = random.random,
        wall_clock: Callable[[], float] = time.time,
        monotonic: Callable[[], float] = time.monotonic,
        requester: str = DEFAULT_REQUESTER,
        shared: Any = None,
        rate_limits: RateLimits | None = None,
    ):
        self.auth = auth
        #: Every installation's primary rate limit as GitHub's answers tell it (shared through
        #: its store by every replica); a fresh in-memory one by default.
        self.rate_limits = rate_limits if rate_limits is not None else RateLimits(clock=wall_clock)
        #: A :class:`bot.app.shared_state.SharedState` holding the write budget for every
        #: replica (PostgreSQL mode); None: this process's own buckets.
        self.shared = shared
        self.session = session
        self.api_url = (api_url or getattr(auth, "api_url", DEFAULT_API_URL)).rstrip("/")
        self.policy = policy or RetryPolicy()
        self.cache: MutableMapping = AnswerCache(cache_bytes)
        self._write_rate = write_rate
        self._write_burst = write_burst
        self._hourly = (hourly_rate, hourly_burst) if hourly_rate else None
        # A bucket untouched for burst/rate seconds is full again, so dropping it loses nothing.
        refill = max(write_burst / write_rate, hourly_burst / hourly_rate if hourly_rate else 0.0)
        self._buckets: MutableMapping[int, tuple[TokenBucket, ...]] = cachetools.TTLCache(
            maxsize=max_installations, ttl=refill, timer=monotonic
        )
        self._on_response = on_response
        self._sleep = sleep
        self._rand = rand
        self._wall_clock = wall_clock
        self._monotonic = monotonic
        self._requester = requester

    def __repr__(self) -> str:
        return f"<ClientFactory {self.api_url}>"

    def reserve_write(self, installation_id: int) -> float:
        """Take a write token of ``installation_id``; return the seconds to wait before writing.

        With a :attr:`shared` budget on a database server, returns an awaitable of those seconds.
        """
        if self.shared is not None:
            if getattr(self.shared, "blocking", False):
                return asyncio.to_thread(self.shared.reserve_write, int(installation_id))
            return self.shared.reserve_write(int(installation_id))
        key = int(installation_id)
        buckets = self._buckets.get(key)
        if buckets is None:
            buckets = (TokenBucket(self._write_rate, self._write_burst, clock=self._monotonic),)
            if self._hourly:
                buckets += (TokenBucket(*self._hourly, clock=self._monotonic),)
        # Re-set on every use, so the buckets are only dropped once they would be full again.
        self._buckets[key] = buckets
        return max(bucket.reserve() for bucket in buckets)

    def for_installation(self, installation_id: int) -> GitHubClient:
        """A fresh client (with its own call counter) acting as ``installation_id``; make one per job."""
        installation_id = int(installation_id)
        auth = self.auth

        async def authorization() -> str:
            return f"token {await auth.installation_token(installation_id)}"

        return GitHubClient(
            self.session,
            authorization=authorization,
            on_unauthorized=lambda: auth.forget(installation_id),
            api_url=self.api_url,
            cache=self.cache,
            policy=self.policy,
            reserve_write=lambda: self.reserve_write(installation_id),
            on_response=self._on_response,
            sleep=self._sleep,
            rand=self._rand,
            wall_clock=self._wall_clock,
            requester=self._requester,
            installation_id=installation_id,
            limits=self.rate_limits,
        )
