"""Reactions on issue comments ("Reactions").

A mixin of :class:`bot.sandbox.state.SandboxState`: its methods use the state's
core (``repo``, ``now``, ``_new_id``, ``user_json``) and the stores it sets up.
"""

from __future__ import annotations

from typing import Any

from bot import github_objects as objects
from bot.sandbox.errors import validation_failed
from bot.sandbox.records import (
    DOC_REACTION,
    iso,
    Reaction,
    REACTION_CONTENTS,
)


class ReactionsMixin:
    """Reactions on issue comments."""

    def add_reaction(
        self, owner: str, name: str, comment_id: int, content: Any, *, user: str, user_type: str = "User"
    ) -> tuple[Reaction, bool]:
        """React to an issue comment; returns ``(reaction, created)``.

        ``created`` is ``False`` when this user already left this reaction (GitHub
        then answers 200 instead of 201). 404 unknown comment, 422 unknown content.
        """
        found = self.comment(owner, name, comment_id)
        return self._react(self.reactions, found.id, content, user, user_type, DOC_REACTION)

    def _react(
        self, store: dict[int, list[Reaction]], comment_id: int, content: Any, user: str, user_type: str, doc: str
    ) -> tuple[Reaction, bool]:
        """Add ``user``'s ``content`` reaction to ``store[comment_id]`` once: ``(reaction, created)``.

        422 (documented at ``doc``) for an unknown content.
        """
        if content not in REACTION_CONTENTS:
            raise validation_failed("Reaction", "content", "invalid", doc)
        existing = store.setdefault(comment_id, [])
        for reaction in existing:
            if reaction.user.lower() == user.lower() and reaction.content == content:
                return reaction, False
        reaction = Reaction(self._new_id(), user, user_type, content, self.now())
        existing.append(reaction)
        return reaction, True

    def reaction_json(self, reaction: Reaction) -> dict[str, Any]:
        """A reaction object as GitHub returns it."""
        return {
            "id": reaction.id,
            "node_id": objects.node_id("Reaction", reaction.id),
            "user": self.user_json(reaction.user, reaction.user_type),
            "content": reaction.content,
            "created_at": iso(reaction.created_at),
        }
