"""The app, its one installation and installation access tokens ("Apps").

A mixin of :class:`bot.sandbox.state.SandboxState`: its methods use the state's
core (``repo``, ``now``, ``_new_id``, ``user_json``) and the stores it sets up.
"""

from __future__ import annotations

import base64
import secrets
from collections.abc import Iterable, Mapping
from typing import Any

from bot.sandbox.errors import not_found
from bot.sandbox.records import (
    iso,
    Token,
)


class AppsMixin:
    """The app, its one installation and installation access tokens."""

    def app_json(self) -> dict[str, Any]:
        """The app as "Get the authenticated app" returns it."""
        return {
            "id": self.app_id,
            "slug": self.app_slug,
            "node_id": base64.b64encode(f"03:Integration{self.app_id}".encode()).decode(),
            "client_id": f"Iv1.{self.app_id:016x}",
            "owner": self.user_json("prguide-sandbox", "Organization"),
            "name": self.app_name,
            "description": "",
            "external_url": self.html_url,
            "html_url": f"{self.html_url}/apps/{self.app_slug}",
            "created_at": iso(self.created_at),
            "updated_at": iso(self.created_at),
            "permissions": self._permissions(),
            "events": ["issue_comment", "pull_request"],
            "installations_count": 1,
        }

    def _permissions(self) -> dict[str, str]:
        return dict(self.permissions)

    def set_permissions(self, permissions: Mapping[str, str | None]) -> None:
        """Change what the installation was granted: ``{"contents": None}`` withholds Contents,
        ``{"issues": "read"}`` leaves Issues read-only. Levels are ``read`` or ``write``.

        Raises :class:`ValueError` for another level.
        """
        for name, level in permissions.items():
            if level not in (None, "read", "write"):
                raise ValueError(f"permission {name!r}: level must be read, write or null, got {level!r}")
        for name, level in permissions.items():
            if level is None:
                self.permissions.pop(name, None)
            else:
                self.permissions[name] = level

    def granted(self, needs: Iterable[tuple[str, str]]) -> bool:
        """True when the installation holds one of ``needs`` (``(permission, level)`` pairs; write covers read)."""
        for name, level in needs:
            held = self.permissions.get(name)
            if held == "write" or (held == "read" and level == "read"):
                return True
        return False

    def installation_json(self, account: str | None = None) -> dict[str, Any]:
        """The sandbox's one installation ("Get a repository installation for the authenticated app")."""
        login = account or (next(iter(self.repos.values())).owner if self.repos else "prguide-sandbox")
        return {
            "id": self.installation_id,
            "account": self.user_json(login, "Organization"),
            "repository_selection": "all",
            "access_tokens_url": f"{self.api_url}/app/installations/{self.installation_id}/access_tokens",
            "repositories_url": f"{self.api_url}/installation/repositories",
            "html_url": f"{self.html_url}/settings/installations/{self.installation_id}",
            "app_id": self.app_id,
            "app_slug": self.app_slug,
            "target_id": 1,
            "target_type": "Organization",
            "permissions": self._permissions(),
            "events": ["issue_comment", "pull_request"],
            "created_at": iso(self.created_at),
            "updated_at": iso(self.created_at),
            "single_file_name": None,
            "suspended_at": None,
            "suspended_by": None,
        }

    def issue_token(self, installation_id: int) -> Token:
        """Mint an installation access token lasting ``token_lifetime`` seconds; 404 for another installation."""
        if installation_id != self.installation_id:
            raise not_found("https://docs.github.com/rest/apps/apps#create-an-installation-access-token-for-an-app")
        token = Token("ghs_" + secrets.token_hex(18), installation_id, self.now() + self.token_lifetime)
        self.tokens[token.token] = token
        return token

    def valid_token(self, value: str) -> Token | None:
        """The token if it was issued here and is neither expired nor revoked, else ``None``."""
        token = self.tokens.get(value)
        if token is None or token.revoked or token.expires_at <= self.now():
            return None
        return token

    def expire_tokens(self) -> int:
        """Make every issued token expired now; returns how many there were."""
        moment = self.now() - 1
        for token in self.tokens.values():
            token.expires_at = min(token.expires_at, moment)
        return len(self.tokens)

    def revoke_token(self, value: str) -> bool:
        """Revoke one token ("Revoke an installation access token"); ``False`` when unknown."""
        token = self.tokens.get(value)
        if token is None:
            return False
        token.revoked = True
        return True
