"""The sandbox's webhook: the delivery GitHub would send the app when a person comments.

GitHub sends an app's webhook a delivery when something happens on a repository it
is installed on. The one thing the sandbox lets a person do that prguide acts on is
comment on a pull request (``POST /_sandbox/comments``), so with a webhook configured
(``Sandbox(webhook_url=..., webhook_secret=...)``, or ``prguide sandbox --webhook-url
URL --webhook-secret SECRET``) that comment reaches the app as ``issue_comment``
``created``, signed and shaped as GitHub's ("Webhook events and payloads",
:mod:`bot.payloads`): a ``/prguide`` command can be tried end to end.

No delivery is sent for a repository the app is not installed on (GitHub sends none),
or for the app's own comments made through the API.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field
from typing import Any

import aiohttp

from bot import payloads
from bot.sandbox.records import Comment

#: GitHub waits 10 seconds for a webhook's answer ("Handling webhook deliveries").
DELIVERY_TIMEOUT = aiohttp.ClientTimeout(total=10)


@dataclass(frozen=True)
class Webhook:
    """Where the app's deliveries go: ``url`` (prguide's ``/webhook``) and the ``secret`` they are signed with."""

    url: str
    secret: str = field(repr=False)

    def __post_init__(self) -> None:
        if not self.url.startswith(("http://", "https://")):
            raise ValueError(f"the webhook URL must be http(s), got {self.url!r}")
        if not self.secret:
            raise ValueError("a webhook needs its secret (prguide refuses unsigned deliveries)")


def comment_payload(state: Any, comment: Comment) -> tuple[dict[str, Any], int] | None:
    """The ``issue_comment.created`` payload of ``comment`` and the installation it goes to, or ``None``
    when the app is not installed on the comment's repository.

    ``state`` is the :class:`bot.sandbox.state.SandboxState`; the repository, pull
    request and comment objects are the ones its REST API serves, completed to the
    webhook's shapes.
    """
    owner, name = comment.repo.split("/", 1)
    record = state.repo(owner, name)
    holder = state.installation_of(record.full_name)
    if holder is None:
        return None
    urls = {"api_url": state.api_url, "html_url": state.html_url}
    repo = payloads.repository(record.full_name, given=state.repo_json(record), **urls)
    pull = state.pull_json(record, comment.number)
    comment_json = state.comment_json(comment)
    comment_json["user"] = payloads.complete_user(comment_json.get("user"), **urls)
    full_pull = payloads.pull_request(repo, pull, **urls)
    payload = payloads.issue_comment("created", full_pull, repo, comment_json, installation_id=holder.id)
    return payload, holder.id


async def deliver(webhook: Webhook, event: str, payload: dict[str, Any], *, app_id: int) -> dict[str, Any]:
    """POST one signed delivery to ``webhook``; returns ``{"id", "event", "status", "answer"}``, or
    ``{"id", "event", "error"}`` when the server cannot be reached (GitHub records a failed delivery the same way)."""
    delivery_id = str(uuid.uuid4())
    body = json.dumps(payload).encode("utf-8")
    headers = payloads.delivery_headers(body, webhook.secret, delivery_id, event, app_id=app_id)
    report: dict[str, Any] = {"id": delivery_id, "event": f"{event}.{payload.get('action')}"}
    try:
        async with aiohttp.ClientSession(timeout=DELIVERY_TIMEOUT) as http:
            async with http.post(webhook.url, data=body, headers=headers) as answer:
                report.update(status=answer.status, answer=(await answer.text())[:500])
    except (aiohttp.ClientError, OSError, TimeoutError) as exc:
        report["error"] = " ".join(str(exc).split()) or type(exc).__name__
    return report
