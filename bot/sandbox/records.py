"""The sandbox's records and the helpers they share: what GitHub would store, as dataclasses.

Constants carry GitHub's documented limits; each resource module of
:mod:`bot.sandbox.resources` works on these records.
"""

from __future__ import annotations

import copy
import hashlib
import re
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bot.sandbox.errors import BundleError

#: GitHub refuses issue comments longer than this many characters ("Create an issue comment").
COMMENT_MAX_CHARS = 65_536
#: GitHub refuses label names longer than this many characters ("Create a label").
LABEL_NAME_MAX_CHARS = 50
#: GitHub refuses label descriptions longer than this many characters ("Update a label").
LABEL_DESCRIPTION_MAX_CHARS = 100
#: "Get repository content" inlines base64 content only up to this many bytes.
CONTENTS_INLINE_MAX_BYTES = 1024 * 1024
#: GitHub refuses to put more labels than this on one issue or pull request.
ISSUE_LABELS_MAX = 100
#: Colour GitHub gives labels created without one (seen in "Add labels to an issue" answers).
DEFAULT_LABEL_COLOR = "ededed"
#: The ``content`` values "Create reaction for an issue comment" accepts.
REACTION_CONTENTS = ("+1", "-1", "laugh", "confused", "heart", "hooray", "rocket", "eyes")
#: Repository roles, most access first; ``permission`` maps maintain to write and triage to read
#: ("Get repository permissions for a user").
ROLES = ("admin", "maintain", "write", "triage", "read", "none")
_LEGACY_PERMISSION = {
    "admin": "admin",
    "maintain": "write",
    "write": "write",
    "triage": "read",
    "read": "read",
    "none": "none",
}

#: The permissions app.yml asks for, which the sandbox's installation holds unless told otherwise.
DEFAULT_PERMISSIONS = {"contents": "read", "issues": "write", "metadata": "read", "pull_requests": "write"}
#: GitHub's answer when an installation token lacks the permission an endpoint needs.
NOT_ACCESSIBLE = "Resource not accessible by integration"

DOC_CREATE_COMMENT = "https://docs.github.com/rest/issues/comments#create-an-issue-comment"
DOC_UPDATE_COMMENT = "https://docs.github.com/rest/issues/comments#update-an-issue-comment"
DOC_CREATE_LABEL = "https://docs.github.com/rest/issues/labels#create-a-label"
DOC_UPDATE_LABEL = "https://docs.github.com/rest/issues/labels#update-a-label"
DOC_ADD_LABELS = "https://docs.github.com/rest/issues/labels#add-labels-to-an-issue"
DOC_REMOVE_LABEL = "https://docs.github.com/rest/issues/labels#remove-a-label-from-an-issue"
DOC_REACTION = "https://docs.github.com/rest/reactions/reactions#create-reaction-for-an-issue-comment"
DOC_REVIEW_REACTION = (
    "https://docs.github.com/rest/reactions/reactions#create-reaction-for-a-pull-request-review-comment"
)
DOC_CREATE_REVIEW = "https://docs.github.com/rest/pulls/reviews#create-a-review-for-a-pull-request"
DOC_REPLY_REVIEW_COMMENT = "https://docs.github.com/rest/pulls/comments#create-a-reply-for-a-review-comment"

_HEX6 = re.compile(r"^[0-9a-fA-F]{6}$")
_API_REPO = re.compile(r"/repos/([^/]+)/([^/]+)/pulls?/\d+")
_HTML_REPO = re.compile(r"^https?://[^/]+/([^/]+)/([^/]+)/pull/\d+")


def iso(ts: float) -> str:
    """Format epoch seconds the way GitHub writes timestamps (``2024-01-31T12:00:00Z``)."""
    return datetime.fromtimestamp(int(ts), UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def repo_of_bundle(bundle: Mapping[str, Any]) -> str:
    """Return ``owner/name`` of a bundle's repository.

    Read from ``pull.base.repo.full_name``, else from the owner/name in ``pull.url``
    (``.../repos/{o}/{r}/pulls/{n}``) or ``pull.html_url`` (``.../{o}/{r}/pull/{n}``).
    Raises :class:`BundleError` when none of them names one.
    """
    pull = bundle.get("pull") if isinstance(bundle, Mapping) else None
    if not isinstance(pull, Mapping):
        raise BundleError("bundle has no 'pull' object")
    base_repo = ((pull.get("base") or {}).get("repo") or {}) if isinstance(pull.get("base"), Mapping) else {}
    full_name = base_repo.get("full_name") if isinstance(base_repo, Mapping) else None
    if isinstance(full_name, str) and full_name.count("/") == 1:
        return full_name
    for key, pattern in (("url", _API_REPO), ("html_url", _HTML_REPO)):
        value = pull.get(key)
        if isinstance(value, str) and (m := pattern.search(value)):
            return f"{m.group(1)}/{m.group(2)}"
    raise BundleError(
        f"cannot tell the repository of pull request {pull.get('number')!r}: "
        "no pull.base.repo.full_name, pull.url or pull.html_url"
    )


def _rewrite_urls(value: Any, old: str, new: str) -> Any:
    """``value`` with ``/{old}/`` (and a trailing ``/{old}``) replaced by ``new`` in every ``*url`` string."""
    if isinstance(value, list):
        return [_rewrite_urls(item, old, new) for item in value]
    if not isinstance(value, dict):
        return value
    out = {}
    for key, item in value.items():
        if isinstance(item, str) and key.endswith("url"):
            item = item.replace(f"/{old}/", f"/{new}/")
            if item.endswith(f"/{old}"):
                item = item[: -len(old)] + new
        out[key] = _rewrite_urls(item, old, new)
    return out


def bundle_in_repo(bundle: Mapping[str, Any], full_name: str) -> dict[str, Any]:
    """A copy of ``bundle`` as if its pull request had been merged in ``full_name`` (``owner/name``).

    Rewrites what names the repository: ``pull.base.repo`` (``full_name``, ``name``,
    ``owner.login``; its ``id`` and ``node_id`` are dropped, so the sandbox gives the
    repository one of its own), ``pull.base.user``/``label``, and every ``*url`` field
    of the pull request, its files, reviews and review comments. The head repository
    (a fork) is left alone. Serves one corpus over several repositories, e.g. one per
    installation. Raises :class:`BundleError` when ``full_name`` is not ``owner/name``
    or the bundle names no repository (see :func:`repo_of_bundle`).
    """
    owner, sep, name = full_name.partition("/")
    if not sep or not owner or not name or "/" in name:
        raise BundleError(f"repository must be 'owner/name', got {full_name!r}")
    old = repo_of_bundle(bundle)
    out = copy.deepcopy(dict(bundle))
    if old == full_name:
        return out
    for key in ("files", "reviews", "review_comments"):
        if isinstance(out.get(key), list):
            out[key] = _rewrite_urls(out[key], old, full_name)
    pull = out["pull"]
    head = pull.get("head")
    pull = _rewrite_urls({k: v for k, v in pull.items() if k != "head"}, old, full_name)
    if head is not None:
        pull["head"] = head
    base = pull.get("base") if isinstance(pull.get("base"), dict) else {}
    repo = base.get("repo") if isinstance(base.get("repo"), dict) else {}
    old_owner = repo.get("owner") if isinstance(repo.get("owner"), dict) else {}
    repo = {k: v for k, v in repo.items() if k not in ("id", "node_id")}
    repo.update(full_name=full_name, name=name, owner={**old_owner, "login": owner})
    base["repo"] = repo
    if isinstance(base.get("user"), dict):
        base["user"] = {**base["user"], "login": owner}
    if isinstance(base.get("label"), str) and ":" in base["label"]:
        base["label"] = f"{owner}:{base['label'].split(':', 1)[1]}"
    pull["base"] = base
    out["pull"] = pull
    return out


def git_blob_sha(data: bytes) -> str:
    """Return the git blob SHA-1 GitHub reports as a file's ``sha``."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()  # noqa: S324 - git's own hash


def read_git_file(git_dir: Path, ref: str, path: str) -> bytes | None:
    """Return the bytes of ``path`` at ``ref`` in a local git repository, or ``None`` when absent.

    Runs ``git cat-file blob REF:PATH``; refs starting with ``-`` are refused so
    they cannot pass as options.
    """
    if ref.startswith("-") or not path or path.startswith("-"):
        return None
    done = subprocess.run(
        ["git", "-C", str(git_dir), "cat-file", "blob", f"{ref}:{path}"],
        capture_output=True,
        check=False,
    )
    return done.stdout if done.returncode == 0 else None


@dataclass
class Repository:
    """One repository the sandbox serves, with its pull request bundles by number."""

    full_name: str
    id: int
    private: bool = False
    default_branch: str = "main"
    owner_type: str = "User"
    extra: dict[str, Any] = field(default_factory=dict)
    pulls: dict[int, dict[str, Any]] = field(default_factory=dict)
    git_dir: Path | None = None

    @property
    def owner(self) -> str:
        """The owner's login."""
        return self.full_name.split("/", 1)[0]

    @property
    def name(self) -> str:
        """The repository's name without the owner."""
        return self.full_name.split("/", 1)[1]


@dataclass
class Comment:
    """An issue comment ("Create an issue comment"); ``id`` is unique across the sandbox."""

    id: int
    repo: str
    number: int
    user: str
    user_type: str
    body: str
    created_at: float
    updated_at: float


@dataclass
class Label:
    """A repository label ("Create a label"); ``color`` is 6 hex digits without ``#``."""

    id: int
    name: str
    color: str = DEFAULT_LABEL_COLOR
    description: str | None = None


@dataclass
class LabelEvent:
    """A ``labeled`` or ``unlabeled`` issue event ("List issue events").

    ``actor`` and ``actor_type`` are who changed the labels; ``label_name`` and
    ``label_color`` are the label as it looked then (a later rename does not change them).
    """

    id: int
    repo: str
    number: int
    event: str
    actor: str
    actor_type: str
    label_name: str
    label_color: str
    created_at: float


@dataclass
class Reaction:
    """A reaction on an issue comment ("Create reaction for an issue comment")."""

    id: int
    user: str
    user_type: str
    content: str
    created_at: float


@dataclass
class Token:
    """An installation access token ("Create an installation access token for an app")."""

    token: str
    installation_id: int
    expires_at: float
    revoked: bool = False


@dataclass
class Installation:
    """One installation of the app ("Get an installation for the authenticated app").

    ``account`` is the organization or user it is installed on (``account_type``
    ``"Organization"`` or ``"User"``). ``repositories`` holds the lower-case
    ``owner/name`` of the repositories it was granted (``repository_selection:
    "selected"``); ``None`` means every repository of the account (``"all"``).
    An installation without an ``account`` is the sandbox's catch-all: it holds every
    repository no other installation holds, so a sandbox with just that one serves
    every bundle, whatever its owner. ``suspended_at`` (Unix s, None: not suspended):
    when it was suspended ("Suspending a GitHub App installation").
    """

    id: int
    account: str | None = None
    account_type: str = "Organization"
    repositories: frozenset[str] | None = None
    suspended_at: float | None = None

    @property
    def selection(self) -> str:
        """GitHub's ``repository_selection``: ``"all"`` or ``"selected"``."""
        return "all" if self.repositories is None else "selected"

    def holds(self, full_name: str) -> bool:
        """True when this installation was granted ``full_name`` by name or by account (not as catch-all)."""
        key = full_name.lower()
        if self.repositories is not None:
            return key in self.repositories
        return self.account is not None and key.split("/", 1)[0] == self.account.lower()


@dataclass
class RateBucket:
    """One primary rate limit ("Rate limits for the REST API"): requests left until ``reset`` (epoch s)."""

    limit: int
    remaining: int
    reset: int

    @property
    def used(self) -> int:
        """Requests counted in the current window."""
        return self.limit - self.remaining
