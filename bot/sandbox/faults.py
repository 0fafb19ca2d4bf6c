"""Planned failures: make the sandbox answer like a struggling GitHub.

A fault matches requests by ``method`` (any when omitted or ``"*"``) and by
``path``, a regular expression searched in the request path with its query
string. Faults are tried in the order they were added; the first one that
matches a request applies and uses up one of its ``times`` (default 1, ``null``
for ever). What it does:

- ``status`` 5xx: answers it with ``{"message", "documentation_url"}``.
- ``status`` 403 or 429 with ``rate_limit_remaining: 0``: a primary rate limit
  ("API rate limit exceeded ...", ``x-ratelimit-remaining: 0``).
- ``status`` 403 or 429 otherwise: a secondary rate limit ("You have exceeded a
  secondary rate limit ..."), with ``retry-after`` when ``retry_after`` is given,
  unless ``message`` is given.
- ``message``: the answer's ``message`` instead of the standard one; a 403 with a
  message is a refusal, not a rate limit (e.g. "Resource not accessible by
  integration", GitHub's answer when the installation lacks a permission).
- any other ``status``: that status with its standard reason as the message.
- ``latency_ms``: waits that long before answering (alone, the request then
  proceeds normally).
- ``rate_limit_remaining`` without ``status``: sets the caller's remaining
  requests, so later answers count down from there (0 trips the primary limit).

GitHub docs: "Rate limits for the REST API" (primary and secondary limits,
``retry-after``, ``x-ratelimit-*`` headers).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any

from bot.sandbox.errors import DOCS_REST, ApiError

DOC_PRIMARY_LIMIT = (
    "https://docs.github.com/rest/using-the-rest-api/rate-limits-for-the-rest-api#about-primary-rate-limits"
)
DOC_SECONDARY_LIMIT = (
    "https://docs.github.com/rest/using-the-rest-api/rate-limits-for-the-rest-api#about-secondary-rate-limits"
)
SECONDARY_LIMIT_MESSAGE = (
    "You have exceeded a secondary rate limit. Please wait a few minutes before you try again. "
    "If you reach out to GitHub Support for help, please include the request ID {request_id}."
)

_FIELDS = {"method", "path", "status", "times", "retry_after", "latency_ms", "rate_limit_remaining", "message"}


@dataclass
class Fault:
    """One planned failure; see the module docstring for what each field does."""

    path: re.Pattern[str]
    method: str | None = None
    status: int | None = None
    times: int | None = 1
    retry_after: int | None = None
    latency_ms: float = 0.0
    rate_limit_remaining: int | None = None
    message: str | None = None

    def matches(self, method: str, path_qs: str) -> bool:
        """Whether this fault applies to a request and still has uses left."""
        if self.times is not None and self.times <= 0:
            return False
        if self.method is not None and self.method != method.upper():
            return False
        return self.path.search(path_qs) is not None

    def describe(self) -> dict[str, Any]:
        """The fault as JSON, as ``GET /_sandbox/faults`` lists it."""
        return {
            "method": self.method,
            "path": self.path.pattern,
            "status": self.status,
            "times": self.times,
            "retry_after": self.retry_after,
            "latency_ms": self.latency_ms,
            "rate_limit_remaining": self.rate_limit_remaining,
            "message": self.message,
        }


def _int_field(item: Mapping[str, Any], key: str, low: int, high: int | None = None) -> int | None:
    value = item.get(key)
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or value < low or (high is not None and value > high):
        bound = f"between {low} and {high}" if high is not None else f"at least {low}"
        raise ValueError(f"fault {key!r} must be an integer {bound}, got {value!r}")
    return value


def parse_fault(item: Any) -> Fault:
    """Build a :class:`Fault` from its JSON object; raises :class:`ValueError` saying what is wrong."""
    if not isinstance(item, Mapping):
        raise ValueError(f"a fault must be a JSON object, got {item!r}")
    unknown = set(item) - _FIELDS
    if unknown:
        raise ValueError(f"unknown fault fields: {', '.join(sorted(unknown))}")
    pattern = item.get("path", "")
    if not isinstance(pattern, str):
        raise ValueError("fault 'path' must be a regular expression string")
    try:
        compiled = re.compile(pattern)
    except re.error as exc:
        raise ValueError(f"fault 'path' {pattern!r} is not a valid regular expression: {exc}") from exc
    method = item.get("method")
    if method is not None and not isinstance(method, str):
        raise ValueError("fault 'method' must be a string")
    latency = item.get("latency_ms", 0) or 0
    if not isinstance(latency, (int, float)) or isinstance(latency, bool) or latency < 0:
        raise ValueError(f"fault 'latency_ms' must be a number >= 0, got {latency!r}")
    message = item.get("message")
    if message is not None and (not isinstance(message, str) or not message):
        raise ValueError("fault 'message' must be a non-empty string")
    times: int | None = 1
    if "times" in item:
        times = _int_field(item, "times", 1)
    fault = Fault(
        path=compiled,
        method=None if method in (None, "", "*") else method.upper(),
        status=_int_field(item, "status", 100, 599),
        times=times,
        retry_after=_int_field(item, "retry_after", 0),
        latency_ms=float(latency),
        rate_limit_remaining=_int_field(item, "rate_limit_remaining", 0),
        message=message,
    )
    if fault.status is None and not fault.latency_ms and fault.rate_limit_remaining is None:
        raise ValueError("a fault needs at least one of 'status', 'latency_ms' or 'rate_limit_remaining'")
    return fault


def parse_faults(data: Any) -> list[Fault]:
    """Build faults from a JSON list (or one object); raises :class:`ValueError` on the first bad one."""
    items = data if isinstance(data, list) else [data]
    return [parse_fault(item) for item in items]


class FaultBook:
    """The faults in force, in the order they were added."""

    def __init__(self) -> None:
        self.faults: list[Fault] = []

    def add(self, faults: list[Fault]) -> None:
        """Append faults after those already in force."""
        self.faults.extend(faults)

    def clear(self) -> None:
        """Remove every fault."""
        self.faults.clear()

    def take(self, method: str, path_qs: str) -> Fault | None:
        """Return the first fault matching this request, using up one of its times."""
        for fault in self.faults:
            if fault.matches(method, path_qs):
                if fault.times is not None:
                    fault.times -= 1
                return fault
        return None


def fault_error(fault: Fault, *, request_id: str, installation_id: int | None) -> ApiError:
    """The error answer of a fault that has a ``status`` (see the module docstring)."""
    status = int(fault.status or 500)
    headers: dict[str, str] = {}
    if fault.retry_after is not None:
        headers["retry-after"] = str(fault.retry_after)
    if fault.message is not None and not (status in (403, 429) and fault.rate_limit_remaining == 0):
        return ApiError(status, fault.message, documentation_url=DOCS_REST, headers=headers)
    if status in (403, 429):
        if fault.rate_limit_remaining == 0:
            who = f"installation ID {installation_id}" if installation_id is not None else "this caller"
            return ApiError(
                status, f"API rate limit exceeded for {who}.", documentation_url=DOC_PRIMARY_LIMIT, headers=headers
            )
        return ApiError(
            status,
            SECONDARY_LIMIT_MESSAGE.format(request_id=request_id),
            documentation_url=DOC_SECONDARY_LIMIT,
            headers=headers,
        )
    try:
        phrase = HTTPStatus(status).phrase
    except ValueError:
        phrase = "Error"
    if status == 500:
        phrase = "Server Error"
    return ApiError(status, phrase, documentation_url=DOCS_REST, headers=headers)
