"""Authenticating as the GitHub App and as its installations.

GitHub docs: "Generating a JSON Web Token (JWT) for a GitHub App" (RS256, ``iss`` = app
id, ``iat`` backdated 60 s for clock drift, ``exp`` at most 10 minutes ahead) and
"Create an installation access token for an app" (``POST
/app/installations/{installation_id}/access_tokens``, a token valid for one hour,
``expires_at`` in ISO 8601).

Neither a token nor the private key is ever logged or shown by ``repr()``.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import logging
import time
import weakref
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import aiohttp
import cachetools
import jwt

from bot.app.github import DEFAULT_API_URL, DEFAULT_REQUESTER, GitHubClient, GitHubError, NotFound, ResponseHook, RetryPolicy

log = logging.getLogger(__name__)

#: Lifetime of the app JWT; GitHub refuses more than 10 minutes.
JWT_LIFETIME = 9 * 60
#: Reuse one JWT for this long (seconds), well inside its lifetime.
JWT_REUSE = 5 * 60
#: ``iat`` is this many seconds in the past, for small clock drift (GitHub's advice).
JWT_BACKDATE = 60
#: GitHub's 401 messages for a JWT whose times its clock disagrees with: this server's
#: clock is off. octokit's auth-app reacts to the same messages the same way.
CLOCK_REFUSALS = (
    "'Issued at' claim ('iat') must be an Integer representing a time in the past",
    "'Expiration time' claim ('exp') is too far in the future",
    "'Expiration time' claim ('exp') must be a numeric value representing the future time",
)


@dataclass(frozen=True, slots=True)
class InstallationToken:
    """An installation access token; ``expires_at`` is epoch seconds."""

    token: str = field(repr=False)
    expires_at: float


@dataclass(frozen=True, slots=True)
class BotIdentity:
    """Who the app writes as on GitHub.

    ``login``: ``"{app slug}[bot]"`` as last fetched; a renamed app's login changes, on
    its old comments too. ``app_id``: the app's numeric id and ``user_id`` its bot user's,
    when known; a rename keeps both. GitHub's issue comments and issue events carry them
    as ``performed_via_github_app.id`` and ``user.id`` / ``actor.id`` (REST docs: "List
    issue comments", "List issue events").
    """

    login: str
    app_id: int | None = None
    user_id: int | None = None

    def wrote(self, user: Any, app: Any = None) -> bool:
        """True when a comment or event by ``user`` (its ``user``/``actor`` object) through
        ``app`` (its ``performed_via_github_app`` object, or ``None``) is this app's.

        The ids decide when both sides have them: a renamed app still knows its
        comments, and another app that took its old name is not mistaken for it. The
        login (compared case-insensitively) decides only when neither id can.
        """
        app_id = app.get("id") if isinstance(app, Mapping) else None
        if self.app_id is not None and isinstance(app_id, int) and not isinstance(app_id, bool):
            return app_id == self.app_id
        user = user if isinstance(user, Mapping) else {}
        user_id = user.get("id")
        if self.user_id is not None and isinstance(user_id, int) and not isinstance(user_id, bool):
            return user_id == self.user_id
        return str(user.get("login") or "").casefold() == self.login.casefold()


class AppAuth:
    """The GitHub App's credentials: its JWT, installation tokens and its own slug.

    ``app_id`` is the numeric App ID as a string; ``private_key`` the PEM text of the
    app's RSA key (``\\n`` escapes from an environment variable are accepted).
    ``api_url`` is the REST root (GitHub Enterprise Server: ``https://HOST/api/v3``);
    ``session`` the process's shared ``aiohttp.ClientSession``. Installation tokens are
    cached per installation (at most ``max_installations``) until ``refresh_margin``
    seconds before they expire. ``clock`` is the wall clock in epoch seconds.

    Raises ``ValueError`` at construction when the key cannot sign a JWT.
    """

    def __init__(
        self,
        app_id: str,
        private_key: str,
        *,
        api_url: str = DEFAULT_API_URL,
        session: aiohttp.ClientSession,
        refresh_margin: float = 300.0,
        max_installations: int = 4096,
        clock: Callable[[], float] = time.time,
        policy: RetryPolicy | None = None,
        on_response: ResponseHook | None = None,
        sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
        requester: str = DEFAULT_REQUESTER,
    ):
        self.app_id = str(app_id).strip()
        if not self.app_id:
            raise ValueError("the GitHub App ID is empty")
        self._private_key = private_key.replace("\\n", "\n").strip() + "\n"
        self.api_url = api_url.rstrip("/")
        self._clock = clock
        self._margin = refresh_margin
        self._tokens: cachetools.TLRUCache = cachetools.TLRUCache(
            maxsize=max_installations, ttu=self._refresh_at, timer=clock
        )
        # A lock lives only while a refresh holds or waits for it, so this stays small.
        self._locks: weakref.WeakValueDictionary[int, asyncio.Lock] = weakref.WeakValueDictionary()
        self._jwt: str | None = None
        self._jwt_made = 0.0
        #: Seconds GitHub's clock is ahead of this server's (negative: behind), learned from
        #: the ``Date`` header of a 401 refusing a JWT's times; JWTs are signed on GitHub's time.
        self.clock_offset = 0
        self._slug: str | None = None
        #: The app's numeric id from ``GET /app`` (``app_id`` may be the client id instead).
        self._numeric_id: int | None = int(self.app_id) if self.app_id.isdigit() else None
        self._slug_lock = asyncio.Lock()
        #: Token requests sent (for tests and logs).
        self.token_requests = 0
        #: Why GitHub refuses the app's own credentials (its JWT), while it does; ``None``
        #: once a request made with them succeeds. Shown by ``/healthz``.
        self.credentials_problem: str | None = None
        self._client = GitHubClient(
            session,
            authorization=self._bearer,
            on_unauthorized=self._drop_jwt,
            on_401=self._learn_clock,
            api_url=self.api_url,
            policy=policy,
            on_response=on_response,
            sleep=sleep,
            wall_clock=clock,
            requester=requester,
        )
        self.app_jwt()  # fail now, with a clear message, if the key is unusable

    def __repr__(self) -> str:
        return f"<AppAuth app {self.app_id} at {self.api_url}, {len(self._tokens)} cached token(s)>"

    def app_jwt(self) -> str:
        """A JWT authenticating as the app (RS256; ``iat`` 60 s back, ``exp`` 9 min after ``iat``).

        Times are GitHub's: the system clock plus :attr:`clock_offset`. Reused for a few
        minutes. Raises ``ValueError`` when the private key is not a usable RSA key in
        PEM format.
        """
        now = self._clock()
        if self._jwt is None or now - self._jwt_made >= JWT_REUSE:
            # The system clock, not self._clock: GitHub checks these times against its own.
            issued = int(time.time()) + self.clock_offset - JWT_BACKDATE
            try:
                self._jwt = jwt.encode(
                    {"iat": issued, "exp": issued + JWT_LIFETIME, "iss": self.app_id}, self._private_key, algorithm="RS256"
                )
            except (ValueError, TypeError, jwt.PyJWTError) as exc:
                # The key itself never goes into the message.
                raise ValueError(
                    f"the GitHub App private key cannot sign a JWT ({type(exc).__name__}); "
                    "expected the PEM text of the app's RSA private key"
                ) from None
            self._jwt_made = now
        return self._jwt

    async def _bearer(self) -> str:
        return f"bearer {self.app_jwt()}"

    def _drop_jwt(self) -> None:
        self._jwt = None

    def _learn_clock(self, headers: Mapping[str, str], body: bytes) -> None:
        """After a 401: when GitHub refused the JWT's times, sign the next one on GitHub's clock.

        The offset comes from the refusal's ``Date`` header (whole seconds), and is logged
        once per change, so an operator can fix the server's clock.
        """
        message = _message(body)
        if not any(refusal in message for refusal in CLOCK_REFUSALS):
            return
        try:
            github_now = email.utils.parsedate_to_datetime(headers.get("date") or "").timestamp()
        except (TypeError, ValueError):
            log.warning("GitHub refused the app's JWT (%s) without a Date header to set the clock by", message)
            return
        offset = round(github_now - time.time())
        if offset != self.clock_offset:
            log.warning(
                "this server's clock is %d s %s GitHub's (GitHub refused a JWT: %s); signing JWTs on GitHub's time",
                abs(offset), "behind" if offset > 0 else "ahead of", message,
                extra={"clock_offset_s": offset},
            )
            self.clock_offset = offset
            self._jwt = None

    def _refresh_at(self, _key: int, value: InstallationToken, _now: float) -> float:
        return value.expires_at - self._margin

    async def installation_token(self, installation_id: int) -> str:
        """An access token for ``installation_id``, cached until shortly before it expires.

        Concurrent callers for one installation share a single token request.
        Raises :class:`~bot.app.github.NotFound` (a ``GiveUp``) when the installation is
        gone, ``RetryLater`` on GitHub or network trouble.
        """
        key = int(installation_id)
        cached = self._tokens.get(key)
        if cached is not None:
            return cached.token
        lock = self._locks.get(key)
        if lock is None:
            lock = self._locks[key] = asyncio.Lock()
        async with lock:
            cached = self._tokens.get(key)
            if cached is not None:
                return cached.token
            token = await self._request_token(key)
            if token.expires_at - self._margin > self._clock():
                self._tokens[key] = token
            return token.token

    async def _as_app(self, request: Awaitable[Any]) -> Any:
        """Await a request made with the app's JWT, keeping :attr:`credentials_problem` current."""
        try:
            answer = await request
        except GitHubError as exc:
            if exc.status == 401:
                problem = (
                    f"GitHub refuses the app's credentials (401 {exc.message}): check GITHUB_APP_ID ({self.app_id}) "
                    "and the private key against the app's settings page"
                )
                if problem != self.credentials_problem:
                    log.error(problem)
                self.credentials_problem = problem
            raise
        except NotFound:
            self.credentials_problem = None  # the JWT was accepted; what it asked for is gone
            raise
        if self.credentials_problem is not None:
            log.info("GitHub accepts the app's credentials again")
        self.credentials_problem = None
        return answer

    async def check_credentials(self) -> str | None:
        """Ask GitHub whether it accepts the app's credentials ("Get the authenticated app").

        Returns ``None`` when it does (and remembers the app's slug), else the problem,
        also kept in :attr:`credentials_problem`. Raises ``RetryLater`` when GitHub
        could not be reached, which says nothing about the credentials.
        """
        try:
            await self._fetch_slug()
        except GitHubError:
            return self.credentials_problem
        return None

    async def _request_token(self, installation_id: int) -> InstallationToken:
        self.token_requests += 1
        try:
            data = await self._as_app(
                self._client.post(
                    "/app/installations/{installation_id}/access_tokens",
                    {"installation_id": installation_id},
                    data={},
                    idempotent=True,  # a second token does no harm
                )
            )
        except NotFound as exc:
            raise NotFound(f"installation {installation_id} not found (uninstalled?)", path=exc.path) from exc
        if not isinstance(data, dict) or not isinstance(data.get("token"), str):
            raise ValueError(f"installation {installation_id}: GitHub's token answer has no token")
        expires_at = _epoch(data.get("expires_at"), default=self._clock() + 3600)
        log.info("new access token for installation %d, expires in %.0fs", installation_id, expires_at - self._clock())
        return InstallationToken(data["token"], expires_at)

    async def installations(self) -> list[int]:
        """The ids of the app's installations ("List installations for the authenticated app",
        ``GET /app/installations``, every page), suspended ones left out: GitHub gives an
        installation whose ``suspended_at`` is set no token ("Suspending a GitHub App
        installation"), so periodic work for it could only fail and be parked. Raises
        ``RetryLater`` when GitHub cannot answer.
        """
        items = await self._as_app(self._client.getlist("/app/installations?per_page=100"))
        return [
            int(item["id"]) for item in items
            if isinstance(item, dict) and isinstance(item.get("id"), int) and not item.get("suspended_at")
        ]

    async def installation(self, installation_id: int) -> dict[str, Any]:
        """One installation of the app as GitHub describes it (``id``, ``account``,
        ``created_at``...): "Get an installation for the authenticated app"
        (``GET /app/installations/{installation_id}``, with the app's JWT).

        Raises ``NotFound`` when it is gone (uninstalled) and ``RetryLater`` when GitHub
        cannot answer.
        """
        data = await self._as_app(
            self._client.getitem("/app/installations/{installation_id}", {"installation_id": int(installation_id)})
        )
        if not isinstance(data, dict):
            raise ValueError(f"installation {installation_id}: GitHub's answer is not an object")
        return data

    def forget(self, installation_id: int) -> None:
        """Drop the cached token of an installation (deleted, suspended, or after a 401)."""
        self._tokens.pop(int(installation_id), None)

    async def app_slug(self) -> str:
        """The app's slug from ``GET /app`` ("Get the authenticated app"), fetched once."""
        if self._slug is None:
            async with self._slug_lock:
                if self._slug is None:
                    await self._fetch_slug()
        assert self._slug is not None
        return self._slug

    async def _fetch_slug(self) -> None:
        data = await self._as_app(self._client.getitem("/app"))
        slug = data.get("slug") if isinstance(data, dict) else None
        if not isinstance(slug, str) or not slug:
            raise ValueError("GitHub's GET /app answer has no slug")
        self._slug = slug
        if isinstance(data.get("id"), int) and not isinstance(data.get("id"), bool):
            self._numeric_id = data["id"]

    async def bot_login(self) -> str:
        """The login the app comments as: ``"{slug}[bot]"``."""
        return f"{await self.app_slug()}[bot]"

    async def bot_identity(self) -> BotIdentity:
        """Who the app writes as: its :meth:`bot_login` and its numeric app id (``GET /app``,
        fetched once), so its comments are still found after the app is renamed."""
        return BotIdentity(await self.bot_login(), app_id=self._numeric_id)


def _message(body: bytes) -> str:
    try:
        data = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        return ""
    return str(data.get("message") or "") if isinstance(data, dict) else ""


def _epoch(value: Any, *, default: float) -> float:
    if not isinstance(value, str):
        return default
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return default
