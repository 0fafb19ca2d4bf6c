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

    ``state`` is the :class:`bot.sandbox.state.SandboxState`; the repository, issue and
    comment objects are the ones its REST API serves
    (:meth:`bot.sandbox.state.SandboxState.issue_comment_event`).
    """
    owner, name = comment.repo.split("/", 1)
    holder = state.installation_of(state.repo(owner, name).full_name)
    if holder is None:
        return None
    payload = state.issue_comment_event(comment, "created")
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
