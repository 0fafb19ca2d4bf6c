"""Reviews and review comments on pull requests, and the comments' reactions.

("Pull request reviews", "Pull request review comments".)

A mixin of :class:`bot.sandbox.state.SandboxState`: its methods use the state's
core (``repo``, ``now``, ``_new_id``, ``user_json``), the stores it sets up, and
:class:`~bot.sandbox.resources.reactions.ReactionsMixin`'s ``_react``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bot import github_objects as objects
from bot.sandbox.errors import not_found, validation_failed
from bot.sandbox.records import (
    DOC_CREATE_REVIEW,
    DOC_REPLY_REVIEW_COMMENT,
    DOC_REVIEW_REACTION,
    iso,
    Reaction,
    Repository,
)


class ReviewCommentsMixin:
    """Review comments on pull requests and their reactions."""

    def review_comment(self, owner: str, name: str, comment_id: int) -> tuple[Repository, int, dict[str, Any]]:
        """A review comment of this repository, its pull request number and object; 404 otherwise."""
        record = self.repo(owner, name)
        for number, bundle in record.pulls.items():
            for comment in bundle["review_comments"]:
                if isinstance(comment, Mapping) and comment.get("id") == comment_id:
                    return record, number, comment
        raise not_found("https://docs.github.com/rest/pulls/comments#get-a-review-comment-for-a-pull-request")

    def create_review_comment(
        self,
        owner: str,
        name: str,
        number: int,
        body: Any,
        *,
        user: str,
        user_type: str = "User",
        path: str | None = None,
        in_reply_to: int | None = None,
    ) -> dict[str, Any]:
        """Add a review comment ("Create a review comment for a pull request"), or a reply in
        the thread of ``in_reply_to`` ("Create a reply for a review comment").

        As on GitHub, a reply goes to the thread's first comment: replying to a reply is
        refused (404, as GitHub answers for a comment id that is not a top-level one).
        404 for an unknown pull request or comment; 422 for a missing or too long body.
        """
        record, bundle = self.pull(owner, name, number)
        text = self._check_body(body, DOC_REPLY_REVIEW_COMMENT)
        root: Mapping[str, Any] | None = None
        if in_reply_to is not None:
            _, root_number, root = self.review_comment(owner, name, in_reply_to)
            if root_number != number or root.get("in_reply_to_id"):
                raise not_found(DOC_REPLY_REVIEW_COMMENT)
        comment_id = self._new_id() + 10**9  # apart from issue comment ids, as on GitHub
        api = f"{self.api_url}/repos/{record.full_name}/pulls/comments/{comment_id}"
        now = iso(self.now())
        comment: dict[str, Any] = {
            "id": comment_id,
            "node_id": objects.node_id("PullRequestReviewComment", comment_id),
            "url": api,
            "pull_request_review_id": comment_id + 1,
            "path": (root or {}).get("path") or path or (bundle["files"][0]["filename"] if bundle["files"] else "README.md"),
            "body": text,
            "user": self.user_json(user, user_type),
            "created_at": now,
            "updated_at": now,
            "html_url": f"{self.html_url}/{record.full_name}/pull/{number}#discussion_r{comment_id}",
            "pull_request_url": f"{self.api_url}/repos/{record.full_name}/pulls/{number}",
            "author_association": "NONE",
            "line": (root or {}).get("line") or 1,
            "side": "RIGHT",
        }
        if root is not None:
            comment["in_reply_to_id"] = root["id"]
        bundle["review_comments"].append(comment)
        return comment

    def create_review(
        self, owner: str, name: str, number: int, body: Any, *, user: str, user_type: str = "User", state: str = "COMMENTED"
    ) -> dict[str, Any]:
        """Add a submitted review ("Create a review for a pull request"), as a person writes one on
        GitHub; it is then listed by "List reviews for a pull request". ``state`` is ``COMMENTED``,
        ``APPROVED`` or ``CHANGES_REQUESTED``. 404 unknown pull request, 422 missing or too long body.
        """
        record, bundle = self.pull(owner, name, number)
        text = self._check_body(body, DOC_CREATE_REVIEW)
        if state not in ("COMMENTED", "APPROVED", "CHANGES_REQUESTED"):
            raise validation_failed("PullRequestReview", "event", "invalid", DOC_CREATE_REVIEW)
        review = {
            "id": self._new_id() + 2 * 10**9,  # apart from comment ids, as on GitHub
            "user": self.user_json(user, user_type),
            "body": text,
            "state": state,
            "submitted_at": iso(self.now()),
        }
        bundle["reviews"].append(review)
        return review

    def review_json(self, record: Repository, number: int, review_id: int) -> dict[str, Any]:
        """One review of a served pull request, complete; 404 when it has no review ``review_id``."""
        for review in self.reviews_of(record, number):
            if review.get("id") == review_id:
                return review
        raise not_found("https://docs.github.com/rest/pulls/reviews#get-a-review-for-a-pull-request")

    def delete_review_comment(self, owner: str, name: str, comment_id: int) -> None:
        """Remove a review comment and its reactions ("Delete a review comment"); 404 when unknown."""
        record, number, comment = self.review_comment(owner, name, comment_id)
        record.pulls[number]["review_comments"].remove(comment)
        self.review_reactions.pop(comment_id, None)

    def add_review_reaction(
        self, owner: str, name: str, comment_id: int, content: Any, *, user: str, user_type: str = "User"
    ) -> tuple[Reaction, bool]:
        """React to a review comment ("Create reaction for a pull request review comment");
        ``(reaction, created)`` as for :meth:`add_reaction`. 404 unknown comment, 422 unknown content."""
        self.review_comment(owner, name, comment_id)
        return self._react(self.review_reactions, comment_id, content, user, user_type, DOC_REVIEW_REACTION)

    def review_comment_json(self, record: Repository, number: int, comment: Mapping[str, Any]) -> dict[str, Any]:
        """A review comment as "Get a review comment for a pull request" returns it, with its reactions counted."""
        counts: dict[str, int] = {}
        for reaction in self.review_reactions.get(comment.get("id"), []):
            counts[reaction.content] = counts.get(reaction.content, 0) + 1
        filled = objects.fill_review_comment(comment, self.pull_json(record, number), site=self.site)
        filled["reactions"] = objects.reactions(filled["reactions"]["url"], counts)
        return filled
