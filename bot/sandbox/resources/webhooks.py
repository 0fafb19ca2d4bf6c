"""The webhook payloads GitHub would send for what the sandbox holds ("Webhook events and payloads").

A mixin of :class:`bot.sandbox.state.SandboxState`: each method builds, from the sandbox's
own records, the payload of one delivery to the app, the same objects its REST answers
carry (:mod:`bot.payloads` has the shapes). Tests post them to prguide's
``/webhook`` as GitHub would. ``sender`` arguments are logins; the delivery names the
installation that holds the repository.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from bot import github_objects as objects
from bot import payloads
from bot.sandbox.errors import not_found
from bot.sandbox.records import Comment, Repository, iso


class WebhooksMixin:
    """Webhook payloads for the sandbox's pull requests, comments, reviews and installations."""

    def _installation_id_of(self, record: Repository) -> int:
        holder = self.installation_of(record.full_name)
        if holder is None:
            raise not_found()
        return holder.id

    def _sender(self, login: str | None, fallback: Any, user_type: str = "User") -> dict[str, Any]:
        if login is not None:
            return self.user_json(login, user_type)
        return dict(fallback)

    def pull_request_event(
        self, owner: str, name: str, number: int, action: str = "closed", *, sender: str | None = None, **more: Any
    ) -> dict[str, Any]:
        """The ``pull_request`` payload of ``action`` on a served pull request, as it is now.

        ``sender`` defaults to who merged it (``merged_by``), else its author; ``more`` adds
        the action's own keys (``before``/``after``, ``changes``). 404 for an unknown pull request.
        """
        record, _ = self.pull(owner, name, number)
        pull = self.pull_json(record, number)
        return payloads.pull_request(
            action,
            pull,
            self.repo_json(record),
            installation_id=self._installation_id_of(record),
            sender=self._sender(sender, pull["merged_by"] or pull["user"]),
            site=self.site,
            **more,
        )

    def issue_comment_event(
        self, comment: Comment, action: str = "created", *, before: str | None = None
    ) -> dict[str, Any]:
        """The ``issue_comment`` payload of ``action`` on a comment (see :meth:`create_comment`).

        ``before`` is the body before an ``edited`` change (``changes.body.from``); an ``edited``
        payload without it has empty ``changes`` (the text did not change). The sender is the
        comment's author.
        """
        record = self.repo(*comment.repo.split("/", 1))
        body = self.comment_json(comment)
        changes = {"body": {"from": before}} if before is not None else ({} if action == "edited" else None)
        return payloads.issue_comment(
            action,
            self.issue_json(record, comment.number),
            body,
            self.repo_json(record),
            installation_id=self._installation_id_of(record),
            sender=body["user"],
            changes=changes,
            site=self.site,
        )

    def review_event(self, owner: str, name: str, number: int, review_id: int, action: str = "submitted") -> dict[str, Any]:
        """The ``pull_request_review`` payload of a review (see :meth:`create_review`); the sender is its author."""
        record, _ = self.pull(owner, name, number)
        review = self.review_json(record, number, review_id)
        return payloads.pull_request_review(
            action,
            self.pull_json(record, number),
            review,
            self.repo_json(record),
            installation_id=self._installation_id_of(record),
            sender=review["user"],
            site=self.site,
        )

    def review_comment_event(self, owner: str, name: str, comment_id: int, action: str = "created") -> dict[str, Any]:
        """The ``pull_request_review_comment`` payload of a review comment (see :meth:`create_review_comment`)."""
        record, number, comment = self.review_comment(owner, name, comment_id)
        body = self.review_comment_json(record, number, comment)
        return payloads.pull_request_review_comment(
            action,
            self.pull_json(record, number),
            body,
            self.repo_json(record),
            installation_id=self._installation_id_of(record),
            sender=body["user"],
            site=self.site,
        )

    def installation_event(
        self, installation_id: int, action: str = "created", *, sender: str = "octocat"
    ) -> dict[str, Any]:
        """The ``installation`` payload of ``action`` (``created``, ``deleted``, ``suspend``...) for an
        installation, listing the repositories it holds; ``sender`` is who installed the app."""
        found = self.installation(installation_id)
        repositories = [self.repo_json(r) for r in self.installation_repos(found.id)]
        return payloads.installation(
            action, self.installation_json(found), repositories=repositories, sender=self.user_json(sender)
        )

    def installation_repositories_event(
        self,
        installation_id: int,
        *,
        added: Iterable[str] = (),
        removed: Iterable[str] = (),
        sender: str = "octocat",
    ) -> dict[str, Any]:
        """The ``installation_repositories`` payload of repositories (``owner/name``) added to or
        removed from an installation (action ``added`` unless only some were removed). A repository
        the sandbox does not serve is described from its name alone."""
        found = self.installation(installation_id)
        added_repos = [self._repository_named(full) for full in added]
        removed_repos = [self._repository_named(full) for full in removed]
        return payloads.installation_repositories(
            "removed" if removed_repos and not added_repos else "added",
            self.installation_json(found),
            added=added_repos,
            removed=removed_repos,
            sender=self.user_json(sender),
        )

    def _repository_named(self, full_name: str) -> dict[str, Any]:
        record = self.repos.get(full_name.lower())
        if record is not None:
            return self.repo_json(record)
        return objects.repository(full_name, site=self.site)

    def ping_event(self, hook_id: int = 1) -> dict[str, Any]:
        """The ``ping`` payload GitHub sends when the app's webhook is set up."""
        return payloads.ping(hook_id, self.app_id, created_at=iso(self.created_at), site=self.site)
