"""Issue comments ("Issue comments"): create, read, edit, delete, list.

A mixin of :class:`bot.sandbox.state.SandboxState`: its methods use the state's
core (``repo``, ``now``, ``_new_id``, ``user_json``) and the stores it sets up.
"""

from __future__ import annotations

from typing import Any

from bot import github_objects as objects
from bot.sandbox.errors import not_found, validation_failed
from bot.sandbox.records import (
    Comment,
    COMMENT_MAX_CHARS,
    DOC_CREATE_COMMENT,
    DOC_UPDATE_COMMENT,
    iso,
    Label,
    LabelEvent,
    Reaction,
    Repository,
)


class CommentsMixin:
    """Issue comments."""

    def _clear_conversation(self) -> None:
        self.comments: dict[int, Comment] = {}
        self.labels: dict[str, dict[str, Label]] = {}
        self.issue_labels: dict[tuple[str, int], list[str]] = {}
        self.label_events: list[LabelEvent] = []
        self.reactions: dict[int, list[Reaction]] = {}
        #: Reactions on pull request review comments, by comment id.
        self.review_reactions: dict[int, list[Reaction]] = {}

    def _issue(self, owner: str, name: str, number: int) -> Repository:
        record = self.repo(owner, name)
        if number not in record.pulls:
            raise not_found("https://docs.github.com/rest/issues/issues#get-an-issue")
        return record

    @staticmethod
    def _check_body(body: Any, documentation_url: str) -> str:
        if not isinstance(body, str):
            raise validation_failed("IssueComment", "body", "missing_field", documentation_url)
        if len(body) > COMMENT_MAX_CHARS:
            # GitHub's own wording and fields for this refusal.
            raise validation_failed(
                "IssueComment",
                "data",
                "unprocessable",
                documentation_url,
                f"Body is too long (maximum is {COMMENT_MAX_CHARS} characters)",
            )
        return body

    def create_comment(
        self, owner: str, name: str, number: int, body: Any, *, user: str, user_type: str = "User"
    ) -> Comment:
        """Add an issue comment ("Create an issue comment").

        404 for an unknown issue; 422 when ``body`` is missing or longer than
        65,536 characters.
        """
        record = self._issue(owner, name, number)
        text = self._check_body(body, DOC_CREATE_COMMENT)
        now = self.now()
        comment = Comment(self._new_id(), record.full_name, number, user, user_type, text, now, now)
        self.comments[comment.id] = comment
        return comment

    def comment(self, owner: str, name: str, comment_id: int) -> Comment:
        """Return an issue comment of this repository ("Get an issue comment"); 404 otherwise."""
        record = self.repo(owner, name)
        found = self.comments.get(comment_id)
        if found is None or found.repo != record.full_name:
            raise not_found("https://docs.github.com/rest/issues/comments#get-an-issue-comment")
        return found

    def edit_comment(self, owner: str, name: str, comment_id: int, body: Any) -> Comment:
        """Replace a comment's body ("Update an issue comment"); 404 unknown, 422 bad body."""
        found = self.comment(owner, name, comment_id)
        found.body = self._check_body(body, DOC_UPDATE_COMMENT)
        found.updated_at = self.now()
        return found

    def delete_comment(self, owner: str, name: str, comment_id: int) -> None:
        """Remove a comment and its reactions ("Delete an issue comment"); 404 when unknown."""
        found = self.comment(owner, name, comment_id)
        del self.comments[found.id]
        self.reactions.pop(found.id, None)

    def comments_on(self, owner: str, name: str, number: int) -> list[Comment]:
        """An issue's comments, oldest first ("List issue comments"); 404 for an unknown issue."""
        record = self._issue(owner, name, number)
        return [c for c in self.comments.values() if c.repo == record.full_name and c.number == number]

    def comment_json(self, comment: Comment) -> dict[str, Any]:
        """An issue comment object as GitHub returns it (the ``issue-comment`` schema).

        A comment the app's bot user wrote names the app in ``performed_via_github_app``, as GitHub does.
        """
        by_app = comment.user_type == "Bot" and comment.user.lower() == self.bot_login.lower()
        counts: dict[str, int] = {}
        for reaction in self.reactions.get(comment.id, []):
            counts[reaction.content] = counts.get(reaction.content, 0) + 1
        return objects.issue_comment(
            comment.id,
            comment.repo,
            comment.number,
            self.user_json(comment.user, comment.user_type),
            comment.body,
            created_at=iso(comment.created_at),
            updated_at=iso(comment.updated_at),
            reaction_counts=counts,
            app=self.app_json() if by_app else None,
            site=self.site,
        )

    def issue_json(self, record: Repository, number: int) -> dict[str, Any]:
        """The issue of a served pull request ("Get an issue", the ``issue`` schema) with its comment count."""
        comments = sum(1 for c in self.comments.values() if c.repo == record.full_name and c.number == number)
        return objects.issue_of_pull(self.pull_json(record, number), comments=comments, site=self.site)
