"""The sandbox server: an aiohttp app answering like GitHub's REST API, plus its Python handle.

Every GitHub-API answer carries the headers GitHub sends ("Rate limits for the
REST API", "API versions"): ``x-ratelimit-limit``, ``-remaining``, ``-reset``
(epoch seconds), ``-used``, ``-resource``; ``x-github-request-id``;
``x-github-api-version-selected`` (the request's ``X-GitHub-Api-Version`` or
``2022-11-28``); and on successful GETs an ``ETag``. A GET whose
``If-None-Match`` names the current ETag gets ``304 Not Modified`` and does not
count against the rate limit ("Best practices for using the REST API",
conditional requests). Every GitHub-API request is logged as ``{method, path,
status}``; ``/_sandbox/`` control requests are not.
"""

from __future__ import annotations

import asyncio
import email.utils
import hashlib
import itertools
import re
import secrets
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from aiohttp import web

from bot.sandbox.auth import Authenticator, Caller, require
from bot.sandbox.control import CONTROL_ROUTES
from bot.sandbox.errors import ApiError, not_found
from bot.sandbox.graphql import GRAPHQL_ROUTES
from bot.sandbox.faults import DOC_PRIMARY_LIMIT, FaultBook, fault_error, parse_faults
from bot.sandbox.handling import CALLER, FAULTS, STATE, json_response
from bot.sandbox.rest import GITHUB_ROUTES
from bot.sandbox.state import NOT_ACCESSIBLE, Comment, Installation, LabelEvent, SandboxState

DEFAULT_API_VERSION = "2022-11-28"
CONTROL_PREFIX = "/_sandbox/"

SANDBOX = web.AppKey("sandbox", object)


_REPO_PREFIX = "/repos/{owner}/{repo}"
_BY_ID = r"/repositories/{repository_id:\d+}"
_REPO_PATH = re.compile(r"^/repos/([^/]+)/([^/]+)(/.*)?$")
DOC_REDIRECTS = "https://docs.github.com/rest/using-the-rest-api/best-practices-for-using-the-rest-api#follow-redirects"


def _error_response(exc: ApiError) -> web.Response:
    return json_response(exc.body(), status=exc.status, headers=exc.headers or None)


def _etag(body: bytes) -> str:
    return f'W/"{hashlib.sha256(body).hexdigest()}"'


def _etag_matches(header: str | None, etag: str) -> bool:
    if not header:
        return False
    wanted = etag.removeprefix("W/")
    for candidate in header.split(","):
        candidate = candidate.strip()
        if candidate == "*" or candidate.removeprefix("W/") == wanted:
            return True
    return False


class Sandbox:
    """A local GitHub for one app: serves pull request bundles and records what the app does.

    ``app_id`` and ``private_key_pem`` are the app's; JWTs must be signed with that
    key. ``bundles`` are corpus-shaped dicts ``{"pull", "files", "reviews",
    "review_comments"}``; ``collaborators`` maps login to role (admin, maintain,
    write, triage, read, none). ``installations`` are the app's installations
    (:class:`~bot.sandbox.state.Installation` records or ``{"id", "account"?,
    "repositories"?}`` mappings); without them it has one, ``installation_id``, holding
    every repository. Each installation's token reaches only its own repositories and
    counts against its own rate limit. ``token_lifetime`` is in seconds, ``latency_ms``
    delays every GitHub-API answer, ``clock`` returns epoch seconds and ``sleep``
    waits that many seconds (both replaceable so tests need not wait for real).
    A ``clock`` apart from the app's emulates a server whose clock is off: JWTs are
    checked against it and every answer's ``Date`` header tells it.
    ``webhook_url`` and ``webhook_secret``: where the app's webhook deliveries go and
    how they are signed (see :mod:`bot.sandbox.hooks`); without them none are sent.

    Raises :class:`ValueError` for a key that is not a PEM private key or a webhook
    URL without its secret, and
    :class:`~bot.sandbox.errors.BundleError` for a malformed bundle.
    """

    def __init__(
        self,
        app_id: int,
        private_key_pem: bytes | str,
        *,
        bundles: Iterable[Mapping[str, Any]] = (),
        collaborators: Mapping[str, str] | None = None,
        app_slug: str = "prguide",
        app_name: str | None = None,
        installation_id: int = 1,
        installations: Iterable[Installation | Mapping[str, Any]] | None = None,
        token_lifetime: float = 3600.0,
        rate_limit: int = 5000,
        latency_ms: float = 0.0,
        clock: Callable[[], float] = time.time,
        sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
        webhook_url: str | None = None,
        webhook_secret: str | None = None,
    ):
        self.state = SandboxState(
            app_id=app_id,
            app_slug=app_slug,
            app_name=app_name,
            installation_id=installation_id,
            installations=installations,
            token_lifetime=token_lifetime,
            rate_limit=rate_limit,
            clock=clock,
        )
        self.auth = Authenticator(self.state, private_key_pem)
        self.faults = FaultBook()
        self.latency_ms = float(latency_ms)
        self._sleep = sleep
        self._runner: web.AppRunner | None = None
        self._base_url: str | None = None
        #: Called with each GitHub-API request and its final answer (headers set), e.g. to check
        #: answers against GitHub's schemas; ``/_sandbox/`` control requests are not passed.
        self.watchers: list[Callable[[web.Request, web.StreamResponse], None]] = []
        self._request_ids = itertools.count(1)
        self._request_salt = secrets.randbelow(16**5)
        if webhook_url is not None:
            self.set_webhook(webhook_url, webhook_secret or "")
        for bundle in bundles:
            self.state.add_bundle(bundle)
        if collaborators:
            self.state.set_collaborators(collaborators)

    # ----- lifecycle --------------------------------------------------------------

    def build_app(self) -> web.Application:
        """The aiohttp application (for tests that run it with their own server)."""
        app = web.Application(middlewares=[self._middleware], client_max_size=64 * 1024**2)
        app[STATE] = self.state
        app[FAULTS] = self.faults
        app[SANDBOX] = self
        for method, path, handler in GITHUB_ROUTES + GRAPHQL_ROUTES + CONTROL_ROUTES:
            app.router.add_route(method, path, handler)
            if path.startswith(_REPO_PREFIX + "/"):
                # GitHub serves every repository route by id too (where redirects point).
                app.router.add_route(method, _BY_ID + path[len(_REPO_PREFIX) :], handler)
        return app

    async def start(self, host: str = "127.0.0.1", port: int = 0) -> str:
        """Listen on ``host:port`` (``0`` picks a free port); returns the base URL, e.g. ``http://127.0.0.1:54321``."""
        if self._runner is not None:
            raise RuntimeError("sandbox already started")
        runner = web.AppRunner(self.build_app(), access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, host, port)
        await site.start()
        self._runner = runner
        bound_host, bound_port = runner.addresses[0][:2]
        shown = f"[{bound_host}]" if ":" in bound_host else bound_host
        self._base_url = f"http://{shown}:{bound_port}"
        self.state.api_url = self._base_url
        return self._base_url

    async def close(self) -> None:
        """Stop listening; safe to call twice."""
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> Sandbox:
        if self._runner is None:
            await self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    @property
    def base_url(self) -> str:
        """The URL to use as GitHub's API base; raises :class:`RuntimeError` before :meth:`start`."""
        if self._base_url is None:
            raise RuntimeError("sandbox not started")
        return self._base_url

    # ----- direct accessors for tests ------------------------------------------

    def add_bundle(self, bundle: Mapping[str, Any], repo: str | None = None) -> str:
        """Serve one more pull request bundle; returns its repository ``owner/name``.

        With ``repo``, the bundle is served as merged there (see :func:`~bot.sandbox.state.bundle_in_repo`).
        """
        return self.state.add_bundle(bundle, repo=repo)

    def add_installation(
        self, installation_id: int, account: str | None = None, *, repositories: Iterable[str] | None = None
    ) -> Installation:
        """Install the app on ``account``'s repositories, or on ``repositories`` (``owner/name``).

        See :meth:`SandboxState.add_installation`; raises :class:`ValueError` for a taken id.
        """
        return self.state.add_installation(installation_id, account, repositories=repositories)

    def add_git_repo(self, path: str | Path) -> list[str]:
        """Serve the merged pull requests of a local git repository; returns their repositories.

        Uses :func:`bot.sources.gitrepo.merged_pull_requests`; files asked for through
        the contents API are then also read from that checkout.
        """
        from bot.sources.gitrepo import merged_pull_requests

        git_dir = Path(path)
        return sorted({self.state.add_bundle(b, git_dir=git_dir) for b in merged_pull_requests(git_dir)})

    def add_faults(self, faults: list[Mapping[str, Any]]) -> None:
        """Plan failures (see :mod:`bot.sandbox.faults`); raises :class:`ValueError` on a bad one."""
        self.faults.add(parse_faults(list(faults)))

    def clear_faults(self) -> None:
        """Remove every planned failure."""
        self.faults.clear()

    def set_webhook(self, url: str | None, secret: str = "") -> None:
        """Send the app's deliveries to ``url``, signed with ``secret`` (``url=None``: send none).

        Raises :class:`ValueError` for a URL that is not http(s) or an empty secret.
        """
        from bot.sandbox.hooks import Webhook

        self.state.webhook = None if url is None else Webhook(url, secret)

    def set_collaborators(self, roles: Mapping[str, str]) -> None:
        """Record ``{login: role}`` for the permission endpoint."""
        self.state.set_collaborators(roles)

    def set_file(self, repo: str, path: str, content: str | bytes, ref: str | None = None) -> None:
        """Serve a file through the contents API (``ref=None``: at every ref)."""
        self.state.set_file(repo, path, content, ref)

    def set_permissions(self, permissions: Mapping[str, str | None]) -> None:
        """Change the installation's permissions (see :meth:`SandboxState.set_permissions`)."""
        self.state.set_permissions(permissions)

    def comments(self, repo: str, number: int) -> list[Comment]:
        """The comments on one pull request of ``repo`` (``owner/name``), oldest first."""
        return self.state.comments_on(*repo.split("/", 1), number)

    def labels(self, repo: str, number: int) -> list[str]:
        """The label names on one pull request of ``repo``."""
        return [label.name for label in self.state.labels_on(*repo.split("/", 1), number)]

    def change_labels(
        self, repo: str, number: int, user: str, *, add: Iterable[str] = (), remove: Iterable[str] = ()
    ) -> list[str]:
        """Remove, then add, labels on a pull request as ``user`` (a person); returns the label names now on it.

        Same as ``POST /_sandbox/labels``: each change is a ``labeled``/``unlabeled``
        issue event by ``user``. Raises :class:`~bot.sandbox.errors.ApiError` (404)
        when a label to remove is not there, changing nothing.
        """
        labels = self.state.change_labels(*repo.split("/", 1), number, actor=user, add=add, remove=remove)
        return [label.name for label in labels]

    def label_events(self, repo: str, number: int) -> list[LabelEvent]:
        """The ``labeled``/``unlabeled`` events of one pull request of ``repo``, oldest first."""
        return self.state.events_on(*repo.split("/", 1), number)

    @property
    def requests(self) -> list[dict[str, Any]]:
        """The GitHub-API requests so far, ``{method, path, status}``, oldest first."""
        return self.state.requests

    def snapshot(self) -> dict[str, Any]:
        """The same JSON as ``GET /_sandbox/state``."""
        return self.state.snapshot()

    def expire_tokens(self) -> int:
        """Expire every issued installation token; returns how many."""
        return self.state.expire_tokens()

    def reset(self) -> None:
        """Forget comments, reactions, labels, requests and rate-limit counts."""
        self.state.reset()

    # ----- the request pipeline ---------------------------------------------------

    def _request_id(self) -> str:
        # Same look as GitHub's ids ("0000:00000:0000000:0000000:00000000"), unique per sandbox.
        n = next(self._request_ids)
        stamp = int(time.time()) % 16**8
        return f"{n:04X}:{self._request_salt:05X}:{n * 7919 % 16**7:07X}:{n * 104729 % 16**7:07X}:{stamp:08X}"

    @web.middleware
    async def _middleware(self, request: web.Request, handler: Callable[..., Any]) -> web.StreamResponse:
        request_id = self._request_id()
        if request.path.startswith(CONTROL_PREFIX):
            response = await self._control(request, handler)
            response.headers["x-github-request-id"] = request_id
            return response
        caller = self.auth.identify(request.headers.get("Authorization"))
        request[CALLER] = caller
        # GraphQL has a rate limit of its own ("Rate limits and query limits for the GraphQL API").
        resource = "graphql" if request.path == "/graphql" else "core"
        bucket = self.state.bucket(caller.bucket if resource == "core" else f"{caller.bucket}:graphql")
        fault = self.faults.take(request.method, request.path_qs)
        delay = self.latency_ms + (fault.latency_ms if fault else 0.0)
        if delay > 0:
            await self._sleep(delay / 1000)
        charged = False
        primary_fault = False
        try:
            if fault is not None and fault.rate_limit_remaining is not None:
                bucket.remaining = min(fault.rate_limit_remaining, bucket.limit)
            if fault is not None and fault.status is not None:
                primary_fault = fault.status in (403, 429) and fault.rate_limit_remaining == 0
                raise fault_error(fault, request_id=request_id, installation_id=caller.installation_id)
            moved = self._moved(request)
            if moved is not None:
                raise moved
            if request.match_info.http_exception is not None:
                raise not_found()
            require(caller, getattr(request.match_info.handler, "sandbox_auth", None))
            if caller.kind == "installation":
                self._check_reach(request, caller.installation_id or 0)
            needs = getattr(request.match_info.handler, "sandbox_permissions", ())
            if needs and caller.kind == "installation" and not self.state.granted(needs):
                raise ApiError(403, NOT_ACCESSIBLE)
            if bucket.remaining <= 0:
                raise self._primary_limit(caller)
            bucket.remaining -= 1
            charged = True
            response = await handler(request)
        except ApiError as exc:
            response = _error_response(exc)
        if (
            request.method == "GET"
            and response.status == 200
            and isinstance(response, web.Response)
            and isinstance(response.body, bytes)
        ):
            etag = _etag(response.body)
            if _etag_matches(request.headers.get("If-None-Match"), etag):
                if charged:
                    bucket.remaining += 1
                response = web.Response(status=304)
            response.headers["ETag"] = etag
        response.headers.update(
            {
                "x-ratelimit-limit": str(bucket.limit),
                "x-ratelimit-remaining": "0" if primary_fault else str(bucket.remaining),
                "x-ratelimit-reset": str(bucket.reset),
                "x-ratelimit-used": str(bucket.limit if primary_fault else bucket.used),
                "x-ratelimit-resource": resource,
                "x-github-request-id": request_id,
                "x-github-api-version-selected": request.headers.get("X-GitHub-Api-Version", DEFAULT_API_VERSION),
                "x-github-media-type": "github.v3; format=json",
                # The sandbox's own time, which a test may set apart from the app's.
                "Date": email.utils.formatdate(self.state.now(), usegmt=True),
            }
        )
        self.state.record(request.method, request.path_qs, response.status)
        for watch in self.watchers:
            watch(request, response)
        return response

    def _moved(self, request: web.Request) -> ApiError | None:
        """The redirect answer for a path under a moved repository (see :meth:`SandboxState.move_repo`)."""
        match = _REPO_PATH.match(request.path)
        if match is None:
            return None
        write_status = self.state.moved.get(f"{match.group(1)}/{match.group(2)}".lower())
        if write_status is None:
            return None
        record = self.state.repo(match.group(1), match.group(2))
        location = f"{self.state.api_url}/repositories/{record.id}{match.group(3) or ''}"
        if request.query_string:
            location += "?" + request.query_string
        status = 301 if request.method in ("GET", "HEAD") else write_status
        message = "Moved Permanently" if status in (301, 308) else "Temporary Redirect"
        error = ApiError(status, message, documentation_url=DOC_REDIRECTS, headers={"Location": location})
        error.extra = {"url": location}
        return error

    def _check_reach(self, request: web.Request, installation_id: int) -> None:
        """Refuse a token used on another installation's repository (see :meth:`SandboxState.check_reach`).

        Paths naming an unknown repository are left to the handler's own 404.
        """
        info = request.match_info
        if "repository_id" in info:
            record = next((r for r in self.state.repos.values() if r.id == int(info["repository_id"])), None)
        elif "owner" in info and "repo" in info:
            record = self.state.repos.get(f"{info['owner']}/{info['repo']}".lower())
        else:
            return
        if record is not None:
            self.state.check_reach(installation_id, record, write=request.method not in ("GET", "HEAD"))

    def move_repo(self, full_name: str, *, write_status: int = 307) -> None:
        """Make ``full_name`` answer with redirects (see :meth:`SandboxState.move_repo`)."""
        self.state.move_repo(full_name, write_status=write_status)

    @staticmethod
    def _primary_limit(caller: Caller) -> ApiError:
        who = f"installation ID {caller.installation_id}" if caller.installation_id is not None else "this caller"
        return ApiError(403, f"API rate limit exceeded for {who}.", documentation_url=DOC_PRIMARY_LIMIT)

    @staticmethod
    async def _control(request: web.Request, handler: Callable[..., Any]) -> web.StreamResponse:
        try:
            if request.match_info.http_exception is not None:
                raise ApiError(request.match_info.http_exception.status, request.match_info.http_exception.reason)
            return await handler(request)
        except ApiError as exc:
            return _error_response(exc)
