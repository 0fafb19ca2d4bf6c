"""The webhook deliveries GitHub sends a GitHub App: payloads built from complete objects, signed.

Pure: dicts in, dicts (or bytes and headers) out, no I/O. ``prguide send``, ``prguide
demo`` and the sandbox (:mod:`bot.sandbox.hooks`, the state's ``*_event`` methods) play
GitHub's part with them. The objects a payload carries come complete from
:mod:`bot.github_objects`; the payloads follow "Webhook events and payloads"
(https://docs.github.com/webhooks/webhook-events-and-payloads) and GitHub's webhook
description (``@octokit/openapi-webhooks``, pinned in the tests): each delivery about a
repository carries ``action``, the objects of its event, ``repository``, ``organization``
(for an organization's repository), ``sender`` (a complete user) and ``installation``
(``{id, node_id}``: a GitHub App's deliveries name the installation), in the order
GitHub's examples show. The review events carry the pull request without the fields
only "Get a pull request" has (no ``merged``: ``merged_at`` tells a merge).

The signature is computed here, apart from the server's check (:mod:`bot.app.webhook`),
so a test of one against the other means something.
"""

from __future__ import annotations

import hashlib
import hmac
import time
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

from bot import github_objects as objects
from bot.github_objects import GITHUB, Site

#: GitHub's deliveries carry ``User-Agent: GitHub-Hookshot/<build>`` ("Delivery headers").
USER_AGENT = "GitHub-Hookshot/prguide"
#: What prguide's manifest (``app.yml``) asks for: the permissions an installation grants it.
APP_PERMISSIONS = {"contents": "read", "issues": "write", "metadata": "read", "pull_requests": "write"}
#: The events prguide's manifest subscribes to.
APP_EVENTS = ("issue_comment", "pull_request", "pull_request_review", "pull_request_review_comment", "repository")

#: The ``event.action`` pairs prguide acts on: the routes of :mod:`bot.features` and the
#: installation events the server itself handles (a cached token is dropped), plus ``ping``.
EVENTS: Mapping[str, str] = {
    "ping": "the check GitHub sends when the webhook is set up",
    "pull_request.closed": "a pull request merged (or closed): the guide",
    "issue_comment.created": "a comment on a pull request: /prguide commands",
    "issue_comment.edited": "an edited comment: its new /prguide commands",
    "pull_request_review.submitted": "a review's body: /prguide commands",
    "pull_request_review_comment.created": "an inline review comment: /prguide commands",
    "installation.created": "the app installed: backfill of its repositories",
    "installation.deleted": "the app uninstalled: its queued work cancelled, its token dropped",
    "installation.suspend": "the installation suspended: its queued work cancelled, its token dropped",
    "installation.unsuspend": "the installation unsuspended: backfill of its repositories again",
    "installation.new_permissions_accepted": "new permissions accepted: a new token",
    "installation_repositories.added": "repositories added: backfill of them",
    "installation_repositories.removed": "repositories removed: a new token",
    "repository.privatized": "a repository made private: its guides hidden in the tag view",
    "repository.publicized": "a repository made public: its guides shown in the tag view",
    "repository.deleted": "a repository deleted: its guides hidden in the tag view",
    "repository.renamed": "a repository renamed: its guides moved to the new name in the tag view",
    "repository.transferred": "a repository moved to another owner: its guides moved to the new name in the tag view",
}


def iso(epoch: float | None = None) -> str:
    """``epoch`` (Unix seconds, default now) as GitHub writes times: ``2024-05-01T10:00:00Z``."""
    return datetime.fromtimestamp(time.time() if epoch is None else epoch, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def sign(secret: str | bytes, body: bytes) -> str:
    """The ``X-Hub-Signature-256`` header of ``body``: ``sha256=`` and the hex HMAC-SHA256 with the webhook secret
    ("Validating webhook deliveries")."""
    key = secret.encode("utf-8") if isinstance(secret, str) else secret
    return "sha256=" + hmac.new(key, body, hashlib.sha256).hexdigest()


def delivery_headers(
    body: bytes, secret: str | bytes, delivery_id: str, event: str = "pull_request", *, app_id: int = 1
) -> dict[str, str]:
    """The HTTP headers of a webhook delivery of ``body`` ("Webhook events and payloads", "Delivery headers")."""
    return {
        "X-GitHub-Event": event,
        "X-GitHub-Delivery": delivery_id,
        "X-GitHub-Hook-ID": "1",
        "X-GitHub-Hook-Installation-Target-Type": "integration",
        "X-GitHub-Hook-Installation-Target-ID": str(app_id),
        "X-Hub-Signature-256": sign(secret, body),
        "User-Agent": USER_AGENT,
        "Content-Type": "application/json",
    }


def installation_ref(installation_id: int) -> dict[str, Any]:
    """``{"id", "node_id"}``, the ``installation`` of a delivery to a GitHub App."""
    return {"id": installation_id, "node_id": objects.node_id("IntegrationInstallation", installation_id)}


def webhook_repository(repository: Mapping[str, Any]) -> dict[str, Any]:
    """A complete repository as deliveries carry it: without ``permissions``, which only the REST
    answers to an authenticated caller have (they are that caller's, not the repository's)."""
    return {k: v for k, v in repository.items() if k != "permissions"}


def _about_repository(
    payload: dict[str, Any],
    repository: Mapping[str, Any],
    installation_id: int,
    sender: Mapping[str, Any],
    *,
    installation_first: bool = False,
    site: Site = GITHUB,
) -> dict[str, Any]:
    """``payload`` with ``repository``, ``installation``, ``organization`` (for an organization's
    repository) and ``sender``, in the order GitHub's examples of the event show (``installation_first`` or last)."""
    payload["repository"] = webhook_repository(repository)
    if installation_first:
        payload["installation"] = installation_ref(installation_id)
    owner = repository.get("owner") or {}
    if owner.get("type") == "Organization":
        payload["organization"] = objects.organization(str(owner.get("login")), id=owner.get("id"), site=site)
    payload["sender"] = dict(sender)
    payload["installation"] = installation_ref(installation_id)
    return payload


def pull_request(
    action: str,
    pull: Mapping[str, Any],
    repository: Mapping[str, Any],
    *,
    installation_id: int,
    sender: Mapping[str, Any],
    site: Site = GITHUB,
    **more: Any,
) -> dict[str, Any]:
    """A ``pull_request`` payload: ``action``, ``number``, ``pull_request`` (complete, as "Get a pull
    request"), ``repository``, [``organization``], ``sender``, ``installation``; ``more`` adds the
    action's own keys (``before``/``after`` for ``synchronize``, ``changes`` for ``edited``)."""
    payload = {"action": action, "number": pull["number"], "pull_request": dict(pull), **more}
    return _about_repository(payload, repository, installation_id, sender, installation_first=True, site=site)


def issue_comment(
    action: str,
    issue: Mapping[str, Any],
    comment: Mapping[str, Any],
    repository: Mapping[str, Any],
    *,
    installation_id: int,
    sender: Mapping[str, Any],
    changes: Mapping[str, Any] | None = None,
    site: Site = GITHUB,
) -> dict[str, Any]:
    """An ``issue_comment`` payload (``created``, ``edited``, ``deleted``); ``issue`` is the pull
    request's (:func:`bot.github_objects.issue_of_pull`); ``changes`` is ``{"body": {"from": OLD}}`` for ``edited``."""
    payload: dict[str, Any] = {"action": action}
    if changes is not None:
        payload["changes"] = dict(changes)
    payload.update(issue=dict(issue), comment=dict(comment))
    return _about_repository(payload, repository, installation_id, sender, site=site)


def pull_request_review(
    action: str,
    pull: Mapping[str, Any],
    review: Mapping[str, Any],
    repository: Mapping[str, Any],
    *,
    installation_id: int,
    sender: Mapping[str, Any],
    site: Site = GITHUB,
) -> dict[str, Any]:
    """A ``pull_request_review`` payload (``submitted``...): the review and the pull request without
    the full-only fields (:func:`bot.github_objects.simple_pull_request`)."""
    payload = {"action": action, "review": dict(review), "pull_request": objects.simple_pull_request(pull)}
    return _about_repository(payload, repository, installation_id, sender, site=site)


def pull_request_review_comment(
    action: str,
    pull: Mapping[str, Any],
    comment: Mapping[str, Any],
    repository: Mapping[str, Any],
    *,
    installation_id: int,
    sender: Mapping[str, Any],
    site: Site = GITHUB,
) -> dict[str, Any]:
    """A ``pull_request_review_comment`` payload (``created``...): the comment and the pull request
    without the full-only fields."""
    payload = {"action": action, "comment": dict(comment), "pull_request": objects.simple_pull_request(pull)}
    return _about_repository(payload, repository, installation_id, sender, installation_first=True, site=site)


def repository(
    action: str,
    repository: Mapping[str, Any],
    *,
    installation_id: int,
    sender: Mapping[str, Any],
    site: Site = GITHUB,
    former: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """A ``repository`` payload (``privatized``, ``publicized``, ``deleted``...): ``action``,
    [``changes``], ``repository`` (complete, as after the change), [``organization``], ``sender``,
    ``installation`` ("Webhook events and payloads": repository). ``former``: for ``renamed``,
    the old name (``{"name": NAME}``: ``changes.repository.name.from``); for ``transferred``,
    the old owner (``{"owner": ACCOUNT}``, a complete user or organization:
    ``changes.owner.from.user``/``organization``)."""
    payload: dict[str, Any] = {"action": action}
    if former and "name" in former:
        payload["changes"] = {"repository": {"name": {"from": former["name"]}}}
    elif former and "owner" in former:
        kind = "organization" if former["owner"].get("type") == "Organization" else "user"
        payload["changes"] = {"owner": {"from": {kind: dict(former["owner"])}}}
    return _about_repository(payload, repository, installation_id, sender, site=site)


def _repository_refs(repositories: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """``[{id, node_id, name, full_name, private}]``, as installation payloads list repositories."""
    return [{k: repo[k] for k in ("id", "node_id", "name", "full_name", "private")} for repo in repositories]


def installation(
    action: str,
    installation_object: Mapping[str, Any],
    *,
    repositories: Iterable[Mapping[str, Any]] | None,
    sender: Mapping[str, Any],
) -> dict[str, Any]:
    """An ``installation`` payload (``created``, ``deleted``, ``suspend``, ``unsuspend``, ``new_permissions_accepted``).

    ``installation_object`` is complete (:func:`bot.github_objects.installation`); ``repositories``
    (complete repositories, or ``None`` to leave the key out, as GitHub may for an installation on
    all of an account's repositories) are listed as ``{id, node_id, name, full_name, private}``.
    """
    payload: dict[str, Any] = {"action": action, "installation": dict(installation_object)}
    if repositories is not None:
        payload["repositories"] = _repository_refs(repositories)
    payload["requester"] = None
    payload["sender"] = dict(sender)
    return payload


def installation_repositories(
    action: str,
    installation_object: Mapping[str, Any],
    *,
    added: Iterable[Mapping[str, Any]] = (),
    removed: Iterable[Mapping[str, Any]] = (),
    sender: Mapping[str, Any],
) -> dict[str, Any]:
    """An ``installation_repositories`` payload (``added``, ``removed``) with ``repositories_added``
    and ``repositories_removed`` (complete repositories, listed by reference)."""
    return {
        "action": action,
        "installation": dict(installation_object),
        "repository_selection": installation_object["repository_selection"],
        "repositories_added": _repository_refs(added),
        "repositories_removed": _repository_refs(removed),
        "requester": None,
        "sender": dict(sender),
    }


def ping(
    hook_id: int,
    app_id: int,
    *,
    created_at: str,
    url: str = "https://example.com/webhook",
    events: Iterable[str] = APP_EVENTS,
    sender: Mapping[str, Any] | None = None,
    site: Site = GITHUB,
) -> dict[str, Any]:
    """The ``ping`` payload GitHub sends when an app's webhook (at ``url``) is set up: ``zen``,
    ``hook_id``, ``hook`` (``type: App``, no ``installation``) and, when given, ``sender``."""
    payload: dict[str, Any] = {
        "zen": "Design for failure.",
        "hook_id": hook_id,
        "hook": {
            "type": "App",
            "id": hook_id,
            "name": "web",
            "active": True,
            "events": list(events),
            "config": {"content_type": "json", "insecure_ssl": "0", "url": url},
            "updated_at": created_at,
            "created_at": created_at,
            "app_id": app_id,
            "deliveries_url": f"{site.api}/app/hook/deliveries",
        },
    }
    if sender is not None:
        payload["sender"] = dict(sender)
    return payload


def merged_pull_request(
    pull: Mapping[str, Any],
    repository: Mapping[str, Any] | None = None,
    *,
    installation_id: int,
    merged: bool = True,
    sender: Mapping[str, Any] | None = None,
    site: Site = GITHUB,
) -> dict[str, Any]:
    """The ``pull_request`` ``closed`` payload of a partial pull request (a bundle's ``pull``).

    ``repository`` is the base repository, partial or complete (default: ``pull.base.repo``);
    both are completed (:func:`bot.github_objects.fill_repository`, :func:`bot.github_objects.pull_request`).
    With ``merged`` (default) the pull request is merged (``merged_at`` kept, or its ``closed_at``
    or ``updated_at``); without, it was closed unmerged (``merged_at`` null). ``sender`` (partial
    or complete) defaults to who merged (``merged_by``), else the author. ``pull`` is not
    modified. Raises :class:`ValueError` when ``pull`` has no integer ``number`` or no repository is known.
    """
    number = pull.get("number")
    if not isinstance(number, int) or isinstance(number, bool):
        raise ValueError("the pull request has no integer 'number'")
    base = pull.get("base") if isinstance(pull.get("base"), Mapping) else {}
    given = repository if repository is not None else base.get("repo")
    repo = objects.fill_repository(given or {}, default_branch=str(base.get("ref") or "main"), site=site)
    if not isinstance(repo, Mapping) or "node_id" not in repo:
        raise ValueError("the pull request names no repository (no 'full_name' in pull.base.repo)")
    repo = webhook_repository(repo)
    closing = dict(pull, state="closed")
    closing["closed_at"] = pull.get("closed_at") or pull.get("merged_at") or pull.get("updated_at") or objects.EPOCH
    if merged:
        closing["merged_at"] = pull.get("merged_at") or pull.get("closed_at") or pull.get("updated_at") or objects.EPOCH
    else:
        closing.update(merged_at=None, merged_by=None)
    closing.pop("merged", None)
    complete = objects.pull_request(closing, repo, site=site)
    who = objects.fill_user(sender, site=site) if sender else complete["merged_by"] or complete["user"]
    return pull_request("closed", complete, repo, installation_id=installation_id, sender=who, site=site)
