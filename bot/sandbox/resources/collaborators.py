"""Collaborators and their roles ("Get repository permissions for a user").

A mixin of :class:`bot.sandbox.state.SandboxState`: its methods use the state's
core (``repo``, ``now``, ``_new_id``, ``user_json``) and the stores it sets up.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bot.sandbox.records import (
    _LEGACY_PERMISSION,
    ROLES,
)


class CollaboratorsMixin:
    """Collaborators and their roles."""

    def set_collaborators(self, roles: Mapping[str, str]) -> None:
        """Record ``{login: role}``; roles are admin, maintain, write, triage, read or none.

        Raises :class:`ValueError` naming an unknown role.
        """
        for login, role in roles.items():
            if not isinstance(login, str) or not login or role not in ROLES:
                raise ValueError(f"collaborator {login!r}: role must be one of {', '.join(ROLES)}, got {role!r}")
        for login, role in roles.items():
            self.collaborators[login.lower()] = (login, role)

    def permission_json(self, owner: str, name: str, login: str) -> dict[str, Any]:
        """Answer "Get repository permissions for a user".

        A known collaborator gets their role (``permission`` maps maintain to write
        and triage to read). Anyone else gets what GitHub gives a non-collaborator:
        ``read`` on a public repository, ``none`` (with an empty ``role_name``) on a
        private one.
        """
        record = self.repo(owner, name)
        if login.lower() in self.collaborators:
            shown, role = self.collaborators[login.lower()]
        else:
            shown, role = login, ("none" if record.private else "read")
        user = self.user_json(shown)
        user["permissions"] = {
            "admin": role == "admin",
            "maintain": role in ("admin", "maintain"),
            "push": role in ("admin", "maintain", "write"),
            "triage": role in ("admin", "maintain", "write", "triage"),
            "pull": role != "none",
        }
        user["role_name"] = "" if role == "none" else role
        return {"permission": _LEGACY_PERMISSION[role], "role_name": "" if role == "none" else role, "user": user}
