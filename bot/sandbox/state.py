"""What the sandbox knows: repositories, pull requests, comments, labels, tokens.

Plain data and plain methods, no HTTP: :mod:`bot.sandbox.rest` turns requests
into these calls and these results into GitHub-shaped JSON. Operations that GitHub
would refuse raise :class:`~bot.sandbox.errors.ApiError` with GitHub's status and
body. Shapes follow GitHub's REST docs, named on each method.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from bot import github_objects as objects
from bot.sandbox.errors import BundleError
from bot.github_objects import Site

# The records and limits were defined here before the split: they stay importable from here.
from bot.sandbox.records import *  # noqa: F403
from bot.sandbox.records import (  # re-exported: the records are part of the state's interface
    DEFAULT_PERMISSIONS,
    ROLES,
    Comment,
    Installation,
    Label,
    LabelEvent,
    RateBucket,
    Reaction,
    Repository,
    Token,
    bundle_in_repo,
    iso,
    read_git_file,
    repo_of_bundle,
)
from bot.sandbox.resources.apps import AppsMixin
from bot.sandbox.resources.collaborators import CollaboratorsMixin
from bot.sandbox.resources.comments import CommentsMixin
from bot.sandbox.resources.labels import LabelsMixin
from bot.sandbox.resources.pulls import PullsMixin
from bot.sandbox.resources.reactions import ReactionsMixin
from bot.sandbox.resources.review_comments import ReviewCommentsMixin
from bot.sandbox.resources.webhooks import WebhooksMixin

__all__ = [
    "ROLES",
    "Comment",
    "Installation",
    "Label",
    "LabelEvent",
    "RateBucket",
    "Reaction",
    "Repository",
    "SandboxState",
    "Token",
    "bundle_in_repo",
    "iso",
    "load_bundles",
    "read_git_file",
    "repo_of_bundle",
]


class SandboxState(
    PullsMixin,
    CommentsMixin,
    ReactionsMixin,
    ReviewCommentsMixin,
    LabelsMixin,
    CollaboratorsMixin,
    AppsMixin,
    WebhooksMixin,
):
    """Everything the sandbox serves and records.

    ``clock`` returns epoch seconds (tests pass their own to move time without sleeping).
    ``api_url`` and ``html_url`` are the bases written into ``url`` and ``html_url`` fields.
    ``installations`` are the app's installations (:class:`Installation` records or
    ``{"id", "account"?, "repositories"?, "account_type"?}`` mappings, see
    :meth:`add_installation`); without them the app has one catch-all installation,
    ``installation_id``, holding every repository. Raises :class:`ValueError` for a
    bad installation.
    """

    def __init__(
        self,
        *,
        app_id: int,
        app_slug: str = "prguide",
        app_name: str | None = None,
        installation_id: int = 1,
        installations: Iterable[Installation | Mapping[str, Any]] | None = None,
        token_lifetime: float = 3600.0,
        rate_limit: int = 5000,
        clock: Callable[[], float] = time.time,
    ):
        self.app_id = int(app_id)
        self.app_slug = app_slug
        self.app_name = app_name or app_slug
        self.token_lifetime = float(token_lifetime)
        self.rate_limit = int(rate_limit)
        self.clock = clock
        self.api_url = "https://api.github.com"
        self.html_url = "https://github.com"
        self.created_at = clock()
        self.repos: dict[str, Repository] = {}
        self.collaborators: dict[str, tuple[str, str]] = {}
        self.files: dict[tuple[str, str], dict[str | None, bytes]] = {}
        self.tokens: dict[str, Token] = {}
        self.buckets: dict[str, RateBucket] = {}
        self.requests: list[dict[str, Any]] = []
        #: Repositories answering with redirects, by lower-case full name: the status for writes.
        self.moved: dict[str, int] = {}
        #: Where the app's deliveries go (a :class:`bot.sandbox.hooks.Webhook`), or None: none are sent.
        self.webhook: Any = None
        #: What the installation was granted ("Create an installation access token", ``permissions``).
        self.permissions: dict[str, str] = dict(DEFAULT_PERMISSIONS)
        self._next_id = 1
        #: The app's installations by id, in the order they were added.
        self.installations: dict[int, Installation] = {}
        for item in [Installation(int(installation_id))] if installations is None else installations:
            if isinstance(item, Installation):
                repos = item.repositories
                self.add_installation(item.id, item.account, repositories=repos, account_type=item.account_type)
            else:
                self.add_installation(**dict(item))
        self._clear_conversation()

    @property
    def installation_id(self) -> int:
        """The id of the first installation (the only one unless more were added); 0 when there is none."""
        return next(iter(self.installations), 0)

    # ----- ids, users, time -------------------------------------------------

    def _new_id(self) -> int:
        value = self._next_id
        self._next_id += 1
        return value

    def now(self) -> float:
        """The sandbox's current time in epoch seconds."""
        return self.clock()

    @property
    def bot_login(self) -> str:
        """The login GitHub gives the app's bot user: ``<slug>[bot]``."""
        return f"{self.app_slug}[bot]"

    @property
    def site(self) -> Site:
        """The API and web bases the sandbox writes into ``url`` and ``html_url`` fields."""
        return Site(self.api_url, self.html_url)

    def user_json(self, login: str, user_type: str = "User") -> dict[str, Any]:
        """A user object as GitHub nests it in comments, reactions and permissions (see :func:`objects.user`)."""
        return objects.user(login, user_type, site=self.site)

    # ----- rate limits and the request log ------------------------------------

    def bucket(self, key: str) -> RateBucket:
        """The primary rate limit of one caller, refilled when its hour has passed.

        ``key`` is ``installation:<id>``, ``app`` or ``anonymous``; anonymous callers
        get GitHub's 60 requests an hour, the others ``rate_limit``.
        """
        now = self.now()
        found = self.buckets.get(key)
        if found is None or now >= found.reset:
            limit = 60 if key == "anonymous" else self.rate_limit
            found = RateBucket(limit, limit, int(now) + 3600)
            self.buckets[key] = found
        return found

    def record(self, method: str, path: str, status: int) -> None:
        """Log one API request (``path`` with its query string)."""
        self.requests.append({"method": method, "path": path, "status": status})

    def reset(self) -> None:
        """Forget comments, reactions, labels and their events, the request log and rate-limit counts.

        Labels carried by the bundles' pull requests are put back; repositories,
        pull requests, files, collaborators and tokens stay.
        """
        self._clear_conversation()
        self.requests.clear()
        self.buckets.clear()
        for record in self.repos.values():
            for number in record.pulls:
                self._seed_labels(record, number)

    def snapshot(self) -> dict[str, Any]:
        """The inspection view served at ``GET /_sandbox/state``.

        ``{"comments": {"owner/repo#N": [{id, user, body}]}, "labels": {"owner/repo#N":
        [names]}, "requests": [{method, path, status}], "reactions": {"<comment id>":
        [{user, content}]}}``; issues without comments or labels have no key.
        """
        comments: dict[str, list[dict[str, Any]]] = {}
        for c in self.comments.values():
            comments.setdefault(f"{c.repo}#{c.number}", []).append({"id": c.id, "user": c.user, "body": c.body})
        labels: dict[str, list[str]] = {}
        for repo, number in self.issue_labels:
            record = self.repos[repo.lower()]
            names = [label.name for label in self._issue_labels(record, number)]
            if names:
                labels[f"{repo}#{number}"] = names
        reactions = {
            str(cid): [{"user": r.user, "content": r.content} for r in items]
            for cid, items in self.reactions.items()
            if items
        }
        return {
            "comments": comments,
            "labels": labels,
            "requests": [dict(r) for r in self.requests],
            "reactions": reactions,
        }


def load_bundles(paths: Iterable[Path]) -> list[dict[str, Any]]:
    """Read bundle JSON files; raises :class:`BundleError` naming the file that is not one."""
    out = []
    for path in paths:
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise BundleError(f"{path}: cannot read a JSON bundle ({exc})") from exc
        if not isinstance(data, dict) or not isinstance(data.get("pull"), dict):
            raise BundleError(f"{path}: not a pull request bundle (no 'pull' object)")
        out.append(data)
    return out
