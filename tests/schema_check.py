"""Check JSON against GitHub's own schemas, pinned in ``tests/data/github_schemas.json``.

That file holds the response schemas of the REST operations the sandbox serves and the
webhook schemas of the events prguide receives, taken from GitHub's published
descriptions (the npm packages ``@octokit/openapi`` and ``@octokit/openapi-webhooks``,
versions named in its ``sources``); ``tools/github_schemas.py`` regenerates it.

- :func:`operation_of`: the operation (``"GET /repos/{owner}/{repo}"``) a request path
  belongs to, ``/repositories/{id}/...`` paths counted as their ``/repos/{owner}/{repo}``
  twins.
- :func:`response_problems`: why a response does not conform (an empty list when it does).
- :func:`webhook_problems`: why a webhook payload does not conform.
"""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path
from typing import Any

import jsonschema

SCHEMAS = Path(__file__).resolve().parent / "data" / "github_schemas.json"
_BY_ID = re.compile(r"^/repositories/\d+(?=/|$)")


@functools.cache
def pinned() -> dict[str, Any]:
    """The pinned schema file, read once."""
    return json.loads(SCHEMAS.read_text(encoding="utf-8"))


@functools.cache
def _templates() -> list[tuple[re.Pattern[str], int, str]]:
    out = []
    for key in pinned()["rest"]["operations"]:
        method, path = key.split(" ", 1)
        # Paths arrive decoded: a label name or file path may hold "/".
        pattern = "".join(
            (".+" if part in ("{path}", "{name}") else "[^/]+") if part.startswith("{") else re.escape(part)
            for part in re.split(r"(\{[^}]+\})", path)
        )
        literal = len(re.sub(r"\{[^}]+\}", "", path))
        out.append((re.compile(f"^{method} {pattern}$"), literal, key))
    return out


def operation_of(method: str, path: str) -> str | None:
    """The operation key of ``method`` ``path`` (query string ignored), or ``None`` when no operation has that path.

    Where several templates match, the one with the most literal characters wins
    (``/pulls/comments/{comment_id}`` over ``/pulls/{pull_number}/...``).
    """
    bare = _BY_ID.sub("/repos/{owner}/{repo}", path.split("?", 1)[0])
    if bare.startswith("/repos/{owner}/{repo}"):
        bare = "/repos/owner/repo" + bare[len("/repos/{owner}/{repo}") :]
    found = [(literal, key) for pattern, literal, key in _templates() if pattern.match(f"{method.upper()} {bare}")]
    return max(found)[1] if found else None


@functools.cache
def _validator(section: str, *path: str) -> jsonschema.Draft202012Validator:
    """A validator for the schema at ``pinned()[section][path...]``, its ``$defs`` beside it."""
    schema: Any = pinned()[section]
    for part in path:
        schema = schema[part]
    return jsonschema.Draft202012Validator({**schema, "$defs": pinned()[section]["$defs"]})


def _problems(validator: jsonschema.Draft202012Validator, value: Any, limit: int) -> list[str]:
    errors = sorted(validator.iter_errors(value), key=lambda e: list(e.absolute_path))
    out = []
    for error in errors[:limit]:
        where = "/".join(str(p) for p in error.absolute_path) or "(top)"
        best = jsonschema.exceptions.best_match([error])
        out.append(f"{where}: {best.message[:300]}")
    return out


def response_problems(method: str, path: str, status: int, body: Any, *, limit: int = 5) -> list[str]:
    """Why ``body`` is not what GitHub documents for ``method`` ``path`` answering ``status``; ``[]`` when it is.

    ``body`` is the decoded JSON, or ``None`` for an empty body. An operation that
    does not list the status is held to GitHub's generic error shapes for 4xx/5xx
    (``validation-error`` for 422, else ``basic-error``); an undocumented 2xx is a problem.
    """
    key = operation_of(method, path)
    if key is None:
        return [f"{method} {path}: no such operation in GitHub's description"]
    responses = pinned()["rest"]["operations"][key]["responses"]
    documented = str(status) in responses
    schema = responses.get(str(status))
    if not documented:
        if status < 400:
            if status in (301, 302, 304, 307, 308):
                return []  # redirects and Not Modified: GitHub answers them for any operation
            return [f"{key}: status {status} is not documented"]
        generic = "validation-error" if status == 422 else "basic-error"
        return _problems(_validator("rest", "errors", generic), body, limit)
    if schema is None:
        return [] if body is None else [f"{key} {status}: documented without a body, got one"]
    return _problems(_validator("rest", "operations", key, "responses", str(status)), body, limit)


def webhook_event_key(event: str, payload: Any) -> str:
    """``event.action`` (``"pull_request.closed"``), or ``event`` for actionless events such as ``ping``."""
    action = payload.get("action") if isinstance(payload, dict) else None
    return f"{event}.{action}" if isinstance(action, str) else event


def webhook_problems(event: str, payload: Any, *, limit: int = 5) -> list[str]:
    """Why ``payload`` is not what GitHub sends as an ``event`` delivery (``X-GitHub-Event``); ``[]`` when it is."""
    key = webhook_event_key(event, payload)
    if key not in pinned()["webhooks"]["events"]:
        return [f"{key}: not among the pinned webhook schemas"]
    return _problems(_validator("webhooks", "events", key), payload, limit)
