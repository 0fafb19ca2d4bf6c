"""The error answers the sandbox gives, shaped like GitHub's REST error bodies."""

from __future__ import annotations

from typing import Any

#: Where GitHub's generic error answers point.
DOCS_REST = "https://docs.github.com/rest"


class ApiError(Exception):
    """An answer other than success, raised by the sandbox's state and routes.

    ``status`` is the HTTP status; :meth:`body` is GitHub's error shape
    ``{"message", "documentation_url"}`` plus ``errors`` for 422 answers
    (GitHub REST docs: "Troubleshooting the REST API", "Client errors").
    ``headers`` are extra response headers (for example ``retry-after``).
    """

    def __init__(
        self,
        status: int,
        message: str,
        *,
        documentation_url: str = DOCS_REST,
        errors: list[dict[str, Any]] | None = None,
        headers: dict[str, str] | None = None,
    ):
        super().__init__(f"{status} {message}")
        self.status = status
        self.message = message
        self.documentation_url = documentation_url
        self.errors = errors
        self.headers = dict(headers or {})
        #: More fields of the body, after ``message`` (e.g. a redirect's ``url``).
        self.extra: dict[str, Any] = {}

    def body(self) -> dict[str, Any]:
        """Return the JSON body GitHub sends with this status."""
        out: dict[str, Any] = {"message": self.message, **self.extra}
        if self.errors is not None:
            out["errors"] = self.errors
        out["documentation_url"] = self.documentation_url
        return out


def not_found(documentation_url: str = DOCS_REST) -> ApiError:
    """GitHub's 404 for a missing repository, pull request or other resource."""
    return ApiError(404, "Not Found", documentation_url=documentation_url)


def validation_failed(
    resource: str,
    field: str,
    code: str,
    documentation_url: str,
    message: str | None = None,
    value: Any = None,
) -> ApiError:
    """GitHub's 422 "Validation Failed" with one entry in ``errors`` (``message``/``value`` when given)."""
    error: dict[str, Any] = {"resource": resource, "code": code, "field": field}
    if message:
        error["message"] = message
    if value is not None:
        error["value"] = value
    return ApiError(422, "Validation Failed", documentation_url=documentation_url, errors=[error])


class BundleError(ValueError):
    """Raised when a pull request bundle lacks what the sandbox needs to serve it."""
