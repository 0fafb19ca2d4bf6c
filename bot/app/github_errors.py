"""GitHub's error answers as exceptions a caller can act on (raised by :mod:`bot.app.github`).

"Troubleshooting the REST API": 404 or 410 for what is gone or out of reach, 403 for a
missing permission, 422 ("Validation failed") for a request GitHub will not accept,
5xx for GitHub's own failures.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import gidgethub

from bot.app.errors import GiveUp, RetryLater


class GitHubError(Exception):
    """GitHub refused a request for a reason retrying will not fix.

    ``status`` is the HTTP status, ``message`` GitHub's ``message`` field, ``errors``
    its ``errors`` list (may be empty), ``method``/``path`` the request.
    """

    def __init__(self, message: str, *, status: int, method: str = "", path: str = "", errors: Any = ()):
        super().__init__(f"{method} {path}: {status} {message}".strip())
        self.message = message
        self.status = status
        self.method = method
        self.path = path
        self.errors = list(errors or ()) if not isinstance(errors, str) else [errors]


class ValidationFailed(GitHubError):
    """GitHub answered 422 ("Validation failed"); the request itself is wrong and is never retried.

    The worker pool treats it as unexpected (retried and then parked for a human),
    since it means prguide sent something GitHub does not accept.
    """

    def has_code(self, code: str) -> bool:
        """True when one of GitHub's ``errors`` has this ``code`` (e.g. ``"already_exists"``)."""
        return any(isinstance(e, Mapping) and e.get("code") == code for e in self.errors)


class NotFound(GiveUp):
    """GitHub answered 404 or 410: the repository, pull request or installation is gone.

    A :class:`GiveUp`, so a job that meets it ends cleanly; callers that expect absence
    (a missing config file, a label already removed) catch it.
    """

    def __init__(self, reason: str, *, status: int = 404, method: str = "", path: str = ""):
        super().__init__(reason)
        self.status = status
        self.method = method
        self.path = path


class Forbidden(GiveUp):
    """GitHub answered 403 and it is not a rate limit: the installation lacks a permission,
    or the repository refuses the change (e.g. a locked conversation)."""

    def __init__(self, reason: str, *, method: str = "", path: str = ""):
        super().__init__(reason)
        self.status = 403
        self.method = method
        self.path = path


def translate(exc: gidgethub.HTTPException, method: str, path: str) -> Exception:
    """The exception a caller can act on for GitHub's error answer ``exc`` to ``method path`` (a route).

    404/410: :class:`NotFound`; 422: :class:`ValidationFailed`; 403 (not a rate limit,
    which the client handles before): :class:`Forbidden`; 5xx: ``RetryLater``; any
    other status: :class:`GitHubError`.
    """
    status = int(exc.status_code)
    message = str(exc) or exc.status_code.phrase
    where = f"{method} {path}"
    if status in (404, 410):
        return NotFound(f"{where}: {status} {message}", status=status, method=method, path=path)
    if status == 422:
        errors = getattr(exc, "errors", None) or ()
        return ValidationFailed(message, status=status, method=method, path=path, errors=errors)
    if status == 403:
        return Forbidden(f"{where}: 403 {message}", method=method, path=path)
    if status >= 500:
        return RetryLater(f"{where}: {status} {message}")
    return GitHubError(message, status=status, method=method, path=path)
