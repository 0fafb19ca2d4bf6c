"""The webhook payloads GitHub sends a GitHub App, built from complete objects (:mod:`bot.sandbox.objects`).

Shapes follow "Webhook events and payloads" (https://docs.github.com/webhooks/webhook-events-and-payloads)
and GitHub's webhook description (``@octokit/openapi-webhooks``): each payload carries
``action``, the objects of its event, ``repository`` (a complete repository), ``installation``
(``{id, node_id}``: a GitHub App's deliveries name the installation) and ``sender`` (a
complete user). The review events carry the pull request without the fields only
"Get a pull request" has (no ``merged``: ``merged_at`` tells a merge).

:func:`merged_pull_request` builds the ``pull_request`` ``closed`` payload of a merge from
a partial pull request (a bundle's), for callers without a sandbox; the sandbox's own
payloads come from :class:`bot.sandbox.resources.webhooks.WebhooksMixin`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from bot.sandbox import objects
from bot.sandbox.objects import GITHUB, Site


def installation_ref(installation_id: int) -> dict[str, Any]:
    """``{"id", "node_id"}``, the ``installation`` of a delivery to a GitHub App."""
    return {"id": installation_id, "node_id": objects.node_id("IntegrationInstallation", installation_id)}


def pull_request(
    action: str,
    pull: Mapping[str, Any],
    repository: Mapping[str, Any],
    *,
    installation_id: int,
    sender: Mapping[str, Any],
    **more: Any,
) -> dict[str, Any]:
    """A ``pull_request`` payload: ``action``, ``number``, ``pull_request`` (complete, as "Get a pull
    request"), ``repository``, ``installation``, ``sender``; ``more`` adds the action's own keys
    (``before``/``after`` for ``synchronize``, ``changes`` for ``edited``)."""
    return {
        "action": action,
        "number": pull["number"],
        "pull_request": dict(pull),
        **more,
        "repository": dict(repository),
        "installation": installation_ref(installation_id),
        "sender": dict(sender),
    }


def issue_comment(
    action: str,
    issue: Mapping[str, Any],
    comment: Mapping[str, Any],
    repository: Mapping[str, Any],
    *,
    installation_id: int,
    sender: Mapping[str, Any],
    changes: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """An ``issue_comment`` payload (``created``, ``edited``, ``deleted``); ``changes`` is
    ``{"body": {"from": OLD}}`` for ``edited``."""
    payload: dict[str, Any] = {"action": action, "issue": dict(issue), "comment": dict(comment)}
    if changes is not None:
        payload["changes"] = dict(changes)
    payload.update(repository=dict(repository), installation=installation_ref(installation_id), sender=dict(sender))
    return payload


def pull_request_review(
    action: str,
    pull: Mapping[str, Any],
    review: Mapping[str, Any],
    repository: Mapping[str, Any],
    *,
    installation_id: int,
    sender: Mapping[str, Any],
) -> dict[str, Any]:
    """A ``pull_request_review`` payload (``submitted``...): the review and the pull request without
    the full-only fields (:func:`objects.simple_pull_request`)."""
    return {
        "action": action,
        "review": dict(review),
        "pull_request": objects.simple_pull_request(pull),
        "repository": dict(repository),
        "installation": installation_ref(installation_id),
        "sender": dict(sender),
    }


def pull_request_review_comment(
    action: str,
    pull: Mapping[str, Any],
    comment: Mapping[str, Any],
    repository: Mapping[str, Any],
    *,
    installation_id: int,
    sender: Mapping[str, Any],
) -> dict[str, Any]:
    """A ``pull_request_review_comment`` payload (``created``...): the comment and the pull request
    without the full-only fields."""
    return {
        "action": action,
        "comment": dict(comment),
        "pull_request": objects.simple_pull_request(pull),
        "repository": dict(repository),
        "installation": installation_ref(installation_id),
        "sender": dict(sender),
    }


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
    """An ``installation`` payload (``created``, ``deleted``, ``suspend``, ``new_permissions_accepted``).

    ``installation_object`` is complete (:func:`objects.installation`); ``repositories`` (complete
    repositories, or ``None`` to leave the key out) are listed as ``{id, node_id, name, full_name, private}``.
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


def ping(hook_id: int, app_id: int, *, events: Iterable[str], created_at: str, site: Site = GITHUB) -> dict[str, Any]:
    """The ``ping`` payload GitHub sends when an app's webhook is set up: ``zen``, ``hook_id``, ``hook``."""
    return {
        "zen": "Design for failure.",
        "hook_id": hook_id,
        "hook": {
            "type": "App",
            "id": hook_id,
            "name": "web",
            "active": True,
            "events": list(events),
            "config": {"content_type": "json", "insecure_ssl": "0", "url": "https://example.com/webhook"},
            "updated_at": created_at,
            "created_at": created_at,
            "app_id": app_id,
            "deliveries_url": f"{site.api}/app/hook/deliveries",
        },
    }


def merged_pull_request(
    pull: Mapping[str, Any],
    repository: Mapping[str, Any] | None = None,
    *,
    installation_id: int,
    merged: bool = True,
    site: Site = GITHUB,
) -> dict[str, Any]:
    """The ``pull_request`` ``closed`` payload of a partial pull request (a bundle's ``pull``).

    ``repository`` is the base repository, partial or complete (default: ``pull.base.repo``);
    both are completed (:func:`objects.fill_repository`, :func:`objects.pull_request`). With
    ``merged`` (default) the pull request is merged (``merged_at`` kept, or its ``closed_at``
    or ``updated_at``); without, it was closed unmerged (``merged_at`` null). ``sender`` is who
    merged (``merged_by``), else the author. ``pull`` is not modified. Raises
    :class:`ValueError` when ``pull`` has no integer ``number`` or no repository is known.
    """
    number = pull.get("number")
    if not isinstance(number, int) or isinstance(number, bool):
        raise ValueError("the pull request has no integer 'number'")
    base = pull.get("base") if isinstance(pull.get("base"), Mapping) else {}
    given = repository if repository is not None else base.get("repo")
    repo = objects.fill_repository(given or {}, default_branch=str(base.get("ref") or "main"), site=site)
    if not isinstance(repo, Mapping) or "node_id" not in repo:
        raise ValueError("the pull request names no repository (no 'full_name' in pull.base.repo)")
    closing = dict(pull, state="closed")
    closing["closed_at"] = pull.get("closed_at") or pull.get("merged_at") or pull.get("updated_at") or objects.EPOCH
    if merged:
        closing["merged_at"] = pull.get("merged_at") or pull.get("closed_at") or pull.get("updated_at") or objects.EPOCH
    else:
        closing.update(merged_at=None, merged_by=None)
    closing.pop("merged", None)
    complete = objects.pull_request(closing, repo, site=site)
    sender = complete["merged_by"] or complete["user"]
    return pull_request("closed", complete, repo, installation_id=installation_id, sender=sender)
