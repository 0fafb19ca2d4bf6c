"""What the sandbox's HTTP handlers share: the app keys, credential and permission marks, JSON in and out.

:mod:`bot.sandbox.rest` (GitHub's endpoints) and :mod:`bot.sandbox.control` (the
``/_sandbox/`` control endpoints) build on these; :mod:`bot.sandbox.server` reads the
marks (``@needs``, ``@permission``) before a handler runs.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web

from bot.sandbox.auth import Caller
from bot.sandbox.errors import ApiError
from bot.sandbox.faults import FaultBook
from bot.sandbox.paging import paginate
from bot.sandbox.state import SandboxState

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]

STATE = web.AppKey("sandbox_state", SandboxState)
FAULTS = web.AppKey("sandbox_faults", FaultBook)
# RequestKey arrived in aiohttp 3.13; older releases take the plain string.
CALLER: Any = web.RequestKey("sandbox_caller", Caller) if hasattr(web, "RequestKey") else "sandbox_caller"


def needs(kind: str | None) -> Callable[[Handler], Handler]:
    """Mark a handler as needing an ``"app"`` JWT, an ``"installation"`` token, or nothing (``None``)."""

    def mark(handler: Handler) -> Handler:
        handler.sandbox_auth = kind  # type: ignore[attr-defined]
        return handler

    return mark


def permission(*needs: tuple[str, str]) -> Callable[[Handler], Handler]:
    """Mark a handler as needing one of these installation permissions, ``(name, "read"|"write")``.

    An installation token without any of them gets GitHub's 403 "Resource not accessible
    by integration" (the endpoint pages' "Fine-grained access tokens" sections list the
    permissions; for pull requests, issue endpoints accept Issues or Pull requests).
    """

    def mark(handler: Handler) -> Handler:
        handler.sandbox_permissions = needs  # type: ignore[attr-defined]
        return handler

    return mark


#: Issue endpoints on a pull request accept either permission.
ISSUES_WRITE = (("issues", "write"), ("pull_requests", "write"))


def json_response(data: Any, status: int = 200, headers: dict[str, str] | None = None) -> web.Response:
    """``data`` as a JSON answer, non-ASCII text as it is (GitHub does not escape it)."""
    return web.json_response(data, status=status, headers=headers, dumps=lambda d: json.dumps(d, ensure_ascii=False))


async def read_body(request: web.Request) -> Any:
    """The request's JSON body; GitHub's 400 "Problems parsing JSON" when it is not JSON."""
    try:
        return await request.json(loads=json.loads)
    except (ValueError, UnicodeDecodeError) as exc:
        raise ApiError(400, "Problems parsing JSON") from exc


def state_of(request: web.Request) -> SandboxState:
    """The sandbox state the app serves."""
    return request.app[STATE]


def author_of(request: web.Request) -> tuple[str, str]:
    """Who writes: the app's bot user for installation tokens (``<slug>[bot]``, type Bot)."""
    state = state_of(request)
    caller: Caller = request[CALLER]
    if caller.kind == "installation":
        return state.bot_login, "Bot"
    return "anonymous", "User"


def paged(request: web.Request, items: list[Any]) -> web.Response:
    """One page of ``items`` (``per_page``/``page``) with GitHub's ``Link`` header."""
    base = str(request.url.with_query(None))
    page, link = paginate(items, base, request.query_string)
    return json_response(page, headers={"Link": link} if link else None)


def repo_args(request: web.Request) -> tuple[str, str]:
    """``(owner, name)`` of the repository a path names, by name or by ``/repositories/{id}``; 404 for an unknown id."""
    if "repository_id" in request.match_info:
        record = state_of(request).repo_by_id(int(request.match_info["repository_id"]))
        return record.owner, record.name
    return request.match_info["owner"], request.match_info["repo"]


def number_of(request: web.Request, key: str = "number") -> int:
    """An integer path parameter (the routes match only digits there)."""
    return int(request.match_info[key])
