"""Turn one webhook delivery (headers + raw body) into a verified :class:`Delivery`.

Pure: bytes and header mappings in, a dataclass or a :class:`WebhookError` out.

The signature check is our own rather than ``gidgethub.sansio.Event.from_http``:
gidgethub accepts the legacy SHA-1 ``X-Hub-Signature`` when the SHA-256 header is
absent, and its ``hmac.compare_digest`` on ``str`` raises ``TypeError`` (a 500, not a
401) for a header with non-ASCII characters. Both are the kind of gap a forged
delivery probes.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

#: GitHub caps webhook payloads at 25 MB ("Webhook events and payloads", "Payload cap").
MAX_BODY_BYTES = 25 * 1024 * 1024
#: The largest ``installation.id`` taken: what SQLite's INTEGER and PostgreSQL's bigint hold.
MAX_INSTALLATION_ID = 2**63 - 1

SIGNATURE_HEADER = "x-hub-signature-256"
_SIGNATURE_RE = re.compile(r"sha256=([0-9a-fA-F]{64})")
# GitHub signs the body only, so these headers are checked for shape: event names are
# lower-case words ("Webhook events and payloads"), delivery ids GUIDs. The delivery id
# becomes the job's idempotency key, so it must be short printable ASCII.
_EVENT_RE = re.compile(r"[a-z][a-z0-9_]{0,63}")
_DELIVERY_RE = re.compile(r"[\x21-\x7e]{1,128}")
# Payload actions are lower-case words too; the action is stored with the job.
_ACTION_RE = re.compile(r"[\x21-\x7e]{1,64}")
# GitHub's own rules for account and repository names ("owner/name" in the job key).
_FULL_NAME_RE = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})/[A-Za-z0-9._-]{1,100}")

#: Top-level payload objects prguide reads, per event ("Webhook events and payloads").
#: A delivery of one of these events without them is malformed. Other events are not
#: checked: prguide ignores them.
REQUIRED_FIELDS: Mapping[str, tuple[str, ...]] = {
    "pull_request": ("pull_request", "repository", "installation"),
    "issue_comment": ("issue", "comment", "repository", "installation"),
    "installation": ("installation",),
    "installation_repositories": ("installation",),
    "pull_request_review": ("review", "pull_request", "repository", "installation"),
    "pull_request_review_comment": ("comment", "pull_request", "repository", "installation"),
}


class WebhookError(Exception):
    """A delivery prguide refuses; ``status`` is the HTTP status to answer with."""

    status = 400

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


class SignatureError(WebhookError):
    """The ``X-Hub-Signature-256`` header is missing or does not match: answer 401."""

    status = 401


class UnsupportedMediaType(WebhookError):
    """The body is not ``application/json``: answer 415."""

    status = 415


class BadDelivery(WebhookError):
    """Headers or payload are malformed or lack what prguide reads: answer 400."""

    status = 400


class PayloadTooLarge(BadDelivery):
    """The body is over GitHub's 25 MB payload cap, so GitHub did not send it: answer 413."""

    status = 413


@dataclass(frozen=True, slots=True)
class Delivery:
    """One verified webhook delivery.

    ``id``: the ``X-GitHub-Delivery`` GUID (the same on GitHub's redeliveries).
    ``event``: ``X-GitHub-Event`` (``pull_request``, ``issue_comment``, ...).
    ``action``: the payload's ``action``, or ``None`` for events without one (``ping``).
    ``payload``: the parsed JSON object; ``body``: the raw bytes as signed.
    ``installation_id``: ``payload.installation.id`` or ``None``.
    ``key``: ``"owner/repo#N"`` for deliveries about one pull request or issue, else
    ``None``; jobs with the same key never run at the same time.
    """

    id: str
    event: str
    action: str | None
    payload: Mapping[str, Any] = field(repr=False)
    body: bytes = field(repr=False)
    installation_id: int | None = None
    key: str | None = None

    @property
    def repository(self) -> str | None:
        """``payload.repository.full_name`` (``"owner/name"``), when present."""
        repo = self.payload.get("repository")
        if isinstance(repo, Mapping) and isinstance(repo.get("full_name"), str):
            return repo["full_name"]
        return None

    @property
    def sender_login(self) -> str:
        """Login of the account that triggered the delivery (``""`` when absent)."""
        sender = self.payload.get("sender")
        return str(sender.get("login") or "") if isinstance(sender, Mapping) else ""

    @property
    def sender_is_bot(self) -> bool:
        """True when the sender is a bot account (``type: Bot`` or a ``[bot]`` login)."""
        sender = self.payload.get("sender")
        if not isinstance(sender, Mapping):
            return False
        return sender.get("type") == "Bot" or self.sender_login.endswith("[bot]")


def sign(secret: str | bytes, body: bytes) -> str:
    """Return the ``X-Hub-Signature-256`` value GitHub would send for ``body``."""
    key = secret.encode("utf-8") if isinstance(secret, str) else secret
    return "sha256=" + hmac.new(key, body, hashlib.sha256).hexdigest()


def verify_signature(secret: str | bytes, body: bytes, header: str | None) -> None:
    """Check ``header`` (``X-Hub-Signature-256``) against an HMAC-SHA256 of ``body``.

    Follows GitHub's "Validating webhook deliveries": the HMAC of the raw body with the
    webhook secret, compared in constant time. Only SHA-256 is accepted. Raises
    :class:`SignatureError` when the header is missing, not ASCII, not
    ``sha256=<64 hex>``, or does not match; returns ``None`` when it matches.
    """
    if not secret:
        raise SignatureError("no webhook secret configured; refusing every delivery")
    if header is None or header == "":
        raise SignatureError("missing X-Hub-Signature-256 header")
    if not header.isascii():
        raise SignatureError("X-Hub-Signature-256 header is not ASCII")
    match = _SIGNATURE_RE.fullmatch(header.strip())
    if not match:
        raise SignatureError("X-Hub-Signature-256 header is not 'sha256=' and 64 hex digits")
    expected = sign(secret, body).encode("ascii")
    given = ("sha256=" + match.group(1).lower()).encode("ascii")
    if not hmac.compare_digest(expected, given):
        raise SignatureError("X-Hub-Signature-256 does not match the body")


def parse_delivery(headers: Mapping[str, str], body: bytes, *, secret: str | bytes) -> Delivery:
    """Verify and parse one delivery from its HTTP headers and raw body.

    ``headers`` may be any mapping; names are matched case-insensitively. Checks, in
    order: signature (:class:`SignatureError`), the ``X-GitHub-Event`` (a lower-case
    event name) and ``X-GitHub-Delivery`` (1-128 printable ASCII characters) headers
    (:class:`BadDelivery`), body size
    (:class:`PayloadTooLarge`), content type
    (:class:`UnsupportedMediaType`: only ``application/json``; GitHub Apps always send
    JSON, and form-encoded deliveries are refused so there is one parsing path), a
    UTF-8 JSON object (:class:`BadDelivery`), then :data:`REQUIRED_FIELDS` for the event
    (:class:`BadDelivery`).
    """
    lower = {str(k).lower(): v for k, v in headers.items()}
    verify_signature(secret, body, lower.get(SIGNATURE_HEADER))

    event = (lower.get("x-github-event") or "").strip()
    delivery_id = (lower.get("x-github-delivery") or "").strip()
    if not event:
        raise BadDelivery("missing X-GitHub-Event header")
    if not delivery_id:
        raise BadDelivery("missing X-GitHub-Delivery header")
    if not _EVENT_RE.fullmatch(event):
        raise BadDelivery("X-GitHub-Event header is not an event name (lower-case letters, digits and '_')")
    if not _DELIVERY_RE.fullmatch(delivery_id):
        raise BadDelivery("X-GitHub-Delivery header must be 1 to 128 printable ASCII characters without spaces")
    if len(body) > MAX_BODY_BYTES:
        raise PayloadTooLarge(f"body of {len(body)} bytes exceeds GitHub's {MAX_BODY_BYTES}-byte cap")

    media_type = (lower.get("content-type") or "").split(";", 1)[0].strip().lower()
    if media_type != "application/json":
        raise UnsupportedMediaType(
            f"content type {media_type or 'missing'!r} is not supported; set the webhook's content type to application/json"
        )

    try:
        payload = json.loads(body.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise BadDelivery(f"body is not UTF-8: {exc.reason} at byte {exc.start}") from exc
    except json.JSONDecodeError as exc:
        raise BadDelivery(f"body is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from exc
    except RecursionError as exc:  # "[[[[..." deeper than the interpreter's stack: GitHub never sends it
        raise BadDelivery("body is nested too deeply to be a GitHub payload") from exc
    if not isinstance(payload, dict):
        raise BadDelivery(f"payload is a JSON {type(payload).__name__}, not an object")

    for name in REQUIRED_FIELDS.get(event, ()):
        if not isinstance(payload.get(name), dict):
            raise BadDelivery(f"{event} payload lacks the {name!r} object")

    action = payload.get("action")
    if action is not None and not isinstance(action, str):
        raise BadDelivery("payload 'action' is not a string")
    if action is not None and not _ACTION_RE.fullmatch(action):
        raise BadDelivery("payload 'action' is not a word of 1 to 64 printable ASCII characters")

    installation_id = None
    installation = payload.get("installation")
    if isinstance(installation, dict):
        raw_id = installation.get("id")
        if not isinstance(raw_id, int) or isinstance(raw_id, bool):
            raise BadDelivery("payload 'installation.id' is not a number")
        # The job databases keep it in a 64-bit integer; a larger one would fail its whole commit batch.
        if not 0 < raw_id <= MAX_INSTALLATION_ID:
            raise BadDelivery(f"payload 'installation.id' is not an id from 1 to {MAX_INSTALLATION_ID}")
        installation_id = raw_id

    return Delivery(
        id=delivery_id,
        event=event,
        action=action,
        payload=payload,
        body=body,
        installation_id=installation_id,
        key=_key(event, payload),
    )


def _key(event: str, payload: Mapping[str, Any]) -> str | None:
    if event == "pull_request":
        number = _number(payload.get("pull_request"))
    elif event in ("issue_comment", "issues"):
        number = _number(payload.get("issue"))
    elif event in ("pull_request_review", "pull_request_review_comment"):
        number = _number(payload.get("pull_request"))
    else:
        return None
    repo = payload.get("repository")
    full_name = repo.get("full_name") if isinstance(repo, Mapping) else None
    needed = event in REQUIRED_FIELDS
    if not isinstance(full_name, str) or not _FULL_NAME_RE.fullmatch(full_name):
        if needed:
            raise BadDelivery(f"{event} payload lacks 'repository.full_name' as 'owner/name'")
        return None
    if number is None:
        if needed:
            raise BadDelivery(f"{event} payload lacks the pull request or issue number")
        return None
    return f"{full_name}#{number}"


def _number(obj: Any) -> int | None:
    if isinstance(obj, Mapping):
        number = obj.get("number")
        if isinstance(number, int) and not isinstance(number, bool):
            return number
    return None
