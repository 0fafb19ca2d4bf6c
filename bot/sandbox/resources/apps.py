"""The app, its installations and installation access tokens ("Apps").

A mixin of :class:`bot.sandbox.state.SandboxState`: its methods use the state's
core (``repo``, ``now``, ``_new_id``, ``user_json``) and the stores it sets up.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable, Mapping
from typing import Any

from bot import github_objects as objects
from bot.sandbox.errors import ApiError, not_found
from bot.payloads import APP_EVENTS
from bot.sandbox.records import (
    NOT_ACCESSIBLE,
    Installation,
    Repository,
    iso,
    Token,
)

DOC_GET_INSTALLATION = "https://docs.github.com/rest/apps/apps#get-an-installation-for-the-authenticated-app"
DOC_CREATE_TOKEN = "https://docs.github.com/rest/apps/apps#create-an-installation-access-token-for-an-app"
DOC_REPO_INSTALLATION = "https://docs.github.com/rest/apps/apps#get-a-repository-installation-for-the-authenticated-app"


class AppsMixin:
    """The app, its installations and installation access tokens."""

    def app_json(self) -> dict[str, Any]:
        """The app as "Get the authenticated app" returns it."""
        return {
            "id": self.app_id,
            "slug": self.app_slug,
            "node_id": objects.node_id("Integration", self.app_id),
            "client_id": f"Iv1.{self.app_id:016x}",
            "owner": self.user_json("prguide-sandbox", "Organization"),
            "name": self.app_name,
            "description": "",
            "external_url": self.html_url,
            "html_url": f"{self.html_url}/apps/{self.app_slug}",
            "created_at": iso(self.created_at),
            "updated_at": iso(self.created_at),
            "permissions": self._permissions(),
            "events": list(APP_EVENTS),
            "installations_count": len(self.installations),
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

    # ----- installations ------------------------------------------------------------

    def add_installation(
        self,
        id: int,  # noqa: A002 - the field's name in GitHub's JSON
        account: str | None = None,
        *,
        repositories: Iterable[str] | None = None,
        account_type: str = "Organization",
    ) -> Installation:
        """Install the app on ``account`` (see :class:`Installation`); returns the installation.

        ``repositories`` (``owner/name``) selects repositories; ``None`` grants every
        repository of ``account``, or, without an account, every repository no other
        installation holds. Raises :class:`ValueError` for an id that is not positive
        or already taken, a second catch-all, an ``account_type`` other than
        ``Organization``/``User`` or a repository name that is not ``owner/name``.
        """
        installation_id = int(id)
        if installation_id < 1 or installation_id in self.installations:
            raise ValueError(f"installation id must be a positive number not yet used, got {installation_id}")
        catch_all = account is None and repositories is None
        if catch_all and any(i.account is None and i.repositories is None for i in self.installations.values()):
            raise ValueError("only one installation may hold every repository no other holds (no account)")
        if account_type not in ("Organization", "User"):
            raise ValueError(f"account_type must be Organization or User, got {account_type!r}")
        selected = None
        if repositories is not None:
            names = [repositories] if isinstance(repositories, str) else list(repositories)
            for name in names:
                if not isinstance(name, str) or name.count("/") != 1 or not all(name.split("/")):
                    raise ValueError(f"repository must be 'owner/name', got {name!r}")
            selected = frozenset(name.lower() for name in names)
        installation = Installation(installation_id, account or None, account_type, selected)
        self.installations[installation_id] = installation
        return installation

    def installation(self, installation_id: int, documentation_url: str = DOC_GET_INSTALLATION) -> Installation:
        """The installation with this id; GitHub's 404 "Not Found" for an unknown one."""
        found = self.installations.get(int(installation_id))
        if found is None:
            raise not_found(documentation_url)
        return found

    def installation_of(self, full_name: str) -> Installation | None:
        """The installation holding repository ``full_name``: one granted it by name or
        account, else the catch-all; ``None`` when the app is not installed there."""
        catch_all = None
        for installation in self.installations.values():
            if installation.holds(full_name):
                return installation
            if installation.account is None and installation.repositories is None:
                catch_all = installation
        return catch_all

    def installation_repos(self, installation_id: int) -> list[Repository]:
        """The repositories the installation holds, in the order they were added."""
        held = []
        for record in self.repos.values():
            holder = self.installation_of(record.full_name)
            if holder is not None and holder.id == installation_id:
                held.append(record)
        return held

    def check_reach(self, installation_id: int, record: Repository, *, write: bool) -> None:
        """Refuse an installation token used on a repository of another installation, as GitHub does.

        A private repository is invisible to it: 404 "Not Found". A public one can be
        read (any token reads public repositories) but not changed: 403 "Resource not
        accessible by integration" for writes.
        """
        holder = self.installation_of(record.full_name)
        if holder is not None and holder.id == installation_id:
            return
        if record.private:
            raise not_found()
        if write:
            raise ApiError(403, NOT_ACCESSIBLE)

    def installation_json(
        self, installation: Installation | int | None = None, account: str | None = None
    ) -> dict[str, Any]:
        """An installation as "Get an installation for the authenticated app" returns it.

        ``installation`` defaults to the first one. A catch-all installation reports
        ``account`` (a repository's owner, when asked about that repository) or the
        first repository's owner as its account.
        """
        if installation is None:
            installation = self.installation(self.installation_id)
        elif not isinstance(installation, Installation):
            installation = self.installation(installation)
        login = installation.account or account
        if login is None:
            held = self.installation_repos(installation.id)
            login = held[0].owner if held else "prguide-sandbox"
        return objects.installation(
            installation.id,
            self.user_json(login, installation.account_type),
            app_id=self.app_id,
            app_slug=self.app_slug,
            permissions=self._permissions(),
            events=APP_EVENTS,
            repository_selection=installation.selection,
            created_at=iso(self.created_at),
            suspended_at=iso(installation.suspended_at) if installation.suspended_at is not None else None,
            site=self.site,
        )

    def suspend_installation(self, installation_id: int, suspended: bool = True) -> Installation:
        """Suspend the installation (or lift its suspension): GitHub then mints it no token
        (403) and lists it with ``suspended_at``; 404 for an unknown installation."""
        installation = self.installation(installation_id)
        installation.suspended_at = self.now() if suspended else None
        return installation

    # ----- installation access tokens ----------------------------------------------

    def issue_token(self, installation_id: int) -> Token:
        """Mint an installation access token lasting ``token_lifetime`` seconds; 404 for an unknown
        installation, 403 for a suspended one."""
        installation = self.installation(installation_id, DOC_CREATE_TOKEN)
        if installation.suspended_at is not None:
            raise ApiError(403, "This installation has been suspended", documentation_url=DOC_CREATE_TOKEN)
        token = Token("ghs_" + secrets.token_hex(18), installation.id, self.now() + self.token_lifetime)
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
