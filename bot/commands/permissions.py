"""A commenter's role in a repository, from GitHub, cached briefly.

GitHub docs: "Get repository permissions for a user"
(``GET /repos/{owner}/{repo}/collaborators/{username}/permission``). Its
``permission`` is the legacy level (``admin``, ``write``, ``read``, ``none``; it maps
``maintain`` to ``write`` and ``triage`` to ``read``); ``role_name`` is the role
itself, or a custom role's name. A 404 (not a collaborator, or no such user) means
no access.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from typing import Any

import cachetools

from bot.app.github import Forbidden, GitHubClient, NotFound

log = logging.getLogger(__name__)

#: Roles GitHub defines for repositories, strongest first.
ROLES = ("admin", "maintain", "write", "triage", "read", "none")

_PERMISSION = "/repos/{owner}/{repo}/collaborators/{username}/permission"


def role_of(answer: Mapping[str, Any]) -> str:
    """The role in a "Get repository permissions for a user" answer, one of :data:`ROLES`.

    ``role_name`` wins when it is a built-in role; a custom role counts as its base
    ``permission``. Anything unreadable is ``"none"``.
    """
    role_name = str(answer.get("role_name") or "").lower()
    if role_name in ROLES:
        return role_name
    permission = str(answer.get("permission") or "").lower()
    return permission if permission in ROLES else "none"


class PermissionCache:
    """Repository roles of users, each kept ``ttl`` seconds (at most ``maxsize`` entries).

    One per process, shared by all jobs: a burst of commands from one person costs one
    request a minute. ``clock`` is a monotonic time source in seconds.
    """

    def __init__(self, *, ttl: float = 60.0, maxsize: int = 1024, clock: Callable[[], float] = time.monotonic):
        self._cache: cachetools.TTLCache = cachetools.TTLCache(maxsize=maxsize, ttl=ttl, timer=clock)

    async def role(self, client: GitHubClient, repository: str, login: str) -> str:
        """``login``'s role in ``repository`` (``"owner/name"``), one of :data:`ROLES`.

        A 404 gives ``"none"``; so does a 403 (the installation may not read
        collaborators), which is logged. Other errors are the client's.
        """
        key = (repository.casefold(), login.casefold())
        cached = self._cache.get(key)
        if cached is not None:
            return cached
        owner, _, repo = repository.partition("/")
        try:
            answer = await client.getitem(_PERMISSION, {"owner": owner, "repo": repo, "username": login}, expect=(404,))
            role = role_of(answer if isinstance(answer, Mapping) else {})
        except NotFound:
            role = "none"
        except Forbidden as exc:
            log.warning("cannot read %s's permission on %s: %s", login, repository, exc.reason)
            role = "none"
        self._cache[key] = role
        return role

    def forget(self, repository: str | None = None) -> None:
        """Drop cached roles (of one repository, or all)."""
        if repository is None:
            self._cache.clear()
            return
        for key in [k for k in self._cache if k[0] == repository.casefold()]:
            self._cache.pop(key, None)
