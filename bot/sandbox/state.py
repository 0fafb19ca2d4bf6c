"""What the sandbox knows: repositories, pull requests, comments, labels, tokens.

Plain data and plain methods, no HTTP: :mod:`bot.sandbox.routes` turns requests
into these calls and these results into GitHub-shaped JSON. Operations that GitHub
would refuse raise :class:`~bot.sandbox.errors.ApiError` with GitHub's status and
body. Shapes follow GitHub's REST docs, named on each method.
"""

from __future__ import annotations

import base64
import copy
import hashlib
import json
import re
import secrets
import subprocess
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import quote

from bot.sandbox.errors import ApiError, BundleError, not_found, validation_failed
from bot.snapshot import GITHUB_FILE_LIST_CAP

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
class RateBucket:
    """One primary rate limit ("Rate limits for the REST API"): requests left until ``reset`` (epoch s)."""

    limit: int
    remaining: int
    reset: int

    @property
    def used(self) -> int:
        """Requests counted in the current window."""
        return self.limit - self.remaining


class SandboxState:
    """Everything the sandbox serves and records.

    ``clock`` returns epoch seconds (tests pass their own to move time without sleeping).
    ``api_url`` and ``html_url`` are the bases written into ``url`` and ``html_url`` fields.
    """

    def __init__(
        self,
        *,
        app_id: int,
        app_slug: str = "prguide",
        app_name: str | None = None,
        installation_id: int = 1,
        token_lifetime: float = 3600.0,
        rate_limit: int = 5000,
        clock: Callable[[], float] = time.time,
    ):
        self.app_id = int(app_id)
        self.app_slug = app_slug
        self.app_name = app_name or app_slug
        self.installation_id = int(installation_id)
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
        #: What the installation was granted ("Create an installation access token", ``permissions``).
        self.permissions: dict[str, str] = dict(DEFAULT_PERMISSIONS)
        self._user_ids: dict[str, int] = {}
        self._next_id = 1
        self._clear_conversation()

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

    def user_json(self, login: str, user_type: str = "User") -> dict[str, Any]:
        """A simple user object as GitHub nests it in comments, reactions and permissions."""
        key = login.lower()
        if key not in self._user_ids:
            self._user_ids[key] = 10_000 + len(self._user_ids)
        uid = self._user_ids[key]
        return {
            "login": login,
            "id": uid,
            "node_id": base64.b64encode(f"04:User{uid}".encode()).decode(),
            "url": f"{self.api_url}/users/{login}",
            "html_url": f"{self.html_url}/{login}",
            "type": user_type,
            "site_admin": False,
        }

    # ----- repositories and pull requests -----------------------------------

    def repo(self, owner: str, name: str) -> Repository:
        """Return a known repository (names are case-insensitive, as on GitHub); 404 otherwise."""
        found = self.repos.get(f"{owner}/{name}".lower())
        if found is None:
            raise not_found("https://docs.github.com/rest/repos/repos#get-a-repository")
        return found

    def add_bundle(self, bundle: Mapping[str, Any], *, repo: str | None = None, git_dir: Path | None = None) -> str:
        """Serve one pull request bundle ``{"pull", "files", "reviews", "review_comments"}``.

        ``repo`` overrides the repository read by :func:`repo_of_bundle`. A bundle
        for a number already served replaces it. Labels in ``pull.labels`` become
        the issue's labels. Returns the repository's ``owner/name``; raises
        :class:`BundleError` on a malformed bundle.
        """
        if not isinstance(bundle, Mapping):
            raise BundleError("a bundle must be a JSON object")
        full_name = repo or repo_of_bundle(bundle)
        if full_name.count("/") != 1 or not all(full_name.split("/")):
            raise BundleError(f"repository must be 'owner/name', got {full_name!r}")
        pull = bundle.get("pull")
        if not isinstance(pull, Mapping) or not isinstance(pull.get("number"), int):
            raise BundleError("bundle.pull must be an object with an integer 'number'")
        for key in ("files", "reviews", "review_comments"):
            if not isinstance(bundle.get(key, []), list):
                raise BundleError(f"bundle.{key} must be a list")
        stored = {
            "pull": copy.deepcopy(dict(pull)),
            "files": list(bundle.get("files") or []),
            "reviews": list(bundle.get("reviews") or []),
            "review_comments": list(bundle.get("review_comments") or []),
        }
        record = self._ensure_repo(full_name, pull, git_dir)
        record.pulls[pull["number"]] = stored
        self._seed_labels(record, pull["number"])
        return record.full_name

    def _ensure_repo(self, full_name: str, pull: Mapping[str, Any], git_dir: Path | None) -> Repository:
        key = full_name.lower()
        if key in self.repos:
            record = self.repos[key]
            if git_dir is not None:
                record.git_dir = git_dir
            return record
        base_repo = (pull.get("base") or {}).get("repo") or {}
        owner = base_repo.get("owner") or (pull.get("base") or {}).get("user") or {}
        record = Repository(
            full_name=full_name,
            id=int(base_repo.get("id") or 100_000 + len(self.repos)),
            private=bool(base_repo.get("private", False)),
            default_branch=str(base_repo.get("default_branch") or (pull.get("base") or {}).get("ref") or "main"),
            owner_type=str(owner.get("type") or "User"),
            extra={k: v for k, v in base_repo.items() if not isinstance(v, (dict, list))},
            git_dir=git_dir,
        )
        self.repos[key] = record
        return record

    def move_repo(self, full_name: str, *, write_status: int = 307) -> None:
        """Answer requests under ``/repos/{owner}/{name}`` with redirects, as GitHub does for
        a renamed or transferred repository ("Best practices for using the REST API",
        follow redirects): 301 for GET and HEAD, ``write_status`` (307, or 301/302/308)
        for other methods, to the same path under ``/repositories/{id}``, which keeps
        being served. Raises :class:`ValueError` for an unknown repository or status.
        """
        if full_name.lower() not in self.repos:
            raise ValueError(f"unknown repository {full_name!r}")
        if write_status not in (301, 302, 307, 308):
            raise ValueError(f"a redirect status is 301, 302, 307 or 308, got {write_status!r}")
        self.moved[full_name.lower()] = write_status

    def repo_by_id(self, repository_id: int) -> Repository:
        """The repository with this id ("/repositories/{id}" paths); 404 otherwise."""
        for record in self.repos.values():
            if record.id == repository_id:
                return record
        raise not_found()

    def pull(self, owner: str, name: str, number: int) -> tuple[Repository, dict[str, Any]]:
        """Return the repository and stored bundle of a pull request; 404 when unknown."""
        record = self.repo(owner, name)
        bundle = record.pulls.get(number)
        if bundle is None:
            raise not_found("https://docs.github.com/rest/pulls/pulls#get-a-pull-request")
        return record, bundle

    def repo_json(self, record: Repository) -> dict[str, Any]:
        """A repository object ("Get a repository"), from the bundle's ``base.repo`` plus defaults."""
        data = dict(record.extra)
        data.update(
            {
                "id": record.id,
                "node_id": base64.b64encode(f"010:Repository{record.id}".encode()).decode(),
                "name": record.name,
                "full_name": record.full_name,
                "private": record.private,
                "visibility": "private" if record.private else "public",
                "owner": self.user_json(record.owner, record.owner_type),
                "html_url": f"{self.html_url}/{record.full_name}",
                "url": f"{self.api_url}/repos/{record.full_name}",
                "default_branch": record.default_branch,
                "fork": bool(record.extra.get("fork", False)),
                "archived": False,
                "disabled": False,
            }
        )
        return data

    def pull_json(self, record: Repository, number: int) -> dict[str, Any]:
        """The stored pull request ("Get a pull request") with ``labels`` as they are now."""
        pull = dict(record.pulls[number]["pull"])
        pull["labels"] = [self.label_json(record, label) for label in self._issue_labels(record, number)]
        return pull

    def files_of(self, record: Repository, number: int) -> list[dict[str, Any]]:
        """The pull request's files, cut at GitHub's 3000 ("List pull requests files")."""
        return record.pulls[number]["files"][:GITHUB_FILE_LIST_CAP]

    # ----- issue comments -----------------------------------------------------

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
        """An issue comment object as GitHub returns it."""
        api = f"{self.api_url}/repos/{comment.repo}"
        return {
            "id": comment.id,
            "node_id": base64.b64encode(f"012:IssueComment{comment.id}".encode()).decode(),
            "url": f"{api}/issues/comments/{comment.id}",
            "html_url": f"{self.html_url}/{comment.repo}/pull/{comment.number}#issuecomment-{comment.id}",
            "issue_url": f"{api}/issues/{comment.number}",
            "body": comment.body,
            "user": self.user_json(comment.user, comment.user_type),
            "created_at": iso(comment.created_at),
            "updated_at": iso(comment.updated_at),
            "author_association": "NONE",
            "performed_via_github_app": None,
            "reactions": self._reaction_summary(comment.id, f"{api}/issues/comments/{comment.id}/reactions"),
        }

    # ----- reactions ----------------------------------------------------------

    def add_reaction(
        self, owner: str, name: str, comment_id: int, content: Any, *, user: str, user_type: str = "User"
    ) -> tuple[Reaction, bool]:
        """React to an issue comment; returns ``(reaction, created)``.

        ``created`` is ``False`` when this user already left this reaction (GitHub
        then answers 200 instead of 201). 404 unknown comment, 422 unknown content.
        """
        found = self.comment(owner, name, comment_id)
        if content not in REACTION_CONTENTS:
            raise validation_failed("Reaction", "content", "invalid", DOC_REACTION)
        existing = self.reactions.setdefault(found.id, [])
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
            "node_id": base64.b64encode(f"08:Reaction{reaction.id}".encode()).decode(),
            "user": self.user_json(reaction.user, reaction.user_type),
            "content": reaction.content,
            "created_at": iso(reaction.created_at),
        }

    def _reaction_summary(self, comment_id: int, url: str) -> dict[str, Any]:
        counts = {content: 0 for content in REACTION_CONTENTS}
        for reaction in self.reactions.get(comment_id, []):
            counts[reaction.content] += 1
        return {"url": url, "total_count": sum(counts.values()), **counts}

    # ----- pull request review comments -------------------------------------------

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
            "node_id": base64.b64encode(f"024:PullRequestReviewComment{comment_id}".encode()).decode(),
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
        if content not in REACTION_CONTENTS:
            raise validation_failed("Reaction", "content", "invalid", DOC_REVIEW_REACTION)
        existing = self.review_reactions.setdefault(comment_id, [])
        for reaction in existing:
            if reaction.user.lower() == user.lower() and reaction.content == content:
                return reaction, False
        reaction = Reaction(self._new_id(), user, user_type, content, self.now())
        existing.append(reaction)
        return reaction, True

    # ----- labels ---------------------------------------------------------------

    def _repo_labels(self, record: Repository) -> dict[str, Label]:
        return self.labels.setdefault(record.full_name, {})

    def _issue_labels(self, record: Repository, number: int) -> list[Label]:
        known = self._repo_labels(record)
        return [known[key] for key in self.issue_labels.get((record.full_name, number), []) if key in known]

    def _seed_labels(self, record: Repository, number: int) -> None:
        for item in record.pulls[number]["pull"].get("labels") or []:
            label_name = item.get("name") if isinstance(item, Mapping) else item
            if isinstance(label_name, str) and label_name:
                color = item.get("color") if isinstance(item, Mapping) else None
                label = self._get_or_create_label(record, label_name, color or DEFAULT_LABEL_COLOR)
                keys = self.issue_labels.setdefault((record.full_name, number), [])
                if label.name.lower() not in keys:
                    keys.append(label.name.lower())

    def _get_or_create_label(self, record: Repository, label_name: str, color: str = DEFAULT_LABEL_COLOR) -> Label:
        known = self._repo_labels(record)
        key = label_name.lower()
        if key not in known:
            known[key] = Label(self._new_id(), label_name, color)
        return known[key]

    @staticmethod
    def _check_label_name(label_name: Any, documentation_url: str) -> str:
        if not isinstance(label_name, str) or not label_name.strip():
            raise validation_failed("Label", "name", "missing_field", documentation_url)
        if len(label_name) > LABEL_NAME_MAX_CHARS:
            raise validation_failed("Label", "name", "invalid", documentation_url, value=label_name)
        return label_name

    def create_label(self, owner: str, name: str, data: Any) -> Label:
        """Add a repository label ("Create a label").

        ``data`` is ``{"name", "color"?, "description"?}``; 422 when the name is
        missing, over 50 characters or already used (``already_exists``, compared
        case-insensitively), or when ``color`` is not 6 hex digits.
        """
        record = self.repo(owner, name)
        if not isinstance(data, Mapping):
            raise validation_failed("Label", "name", "missing_field", DOC_CREATE_LABEL)
        label_name = self._check_label_name(data.get("name"), DOC_CREATE_LABEL)
        color = self._check_color(data.get("color", DEFAULT_LABEL_COLOR), DOC_CREATE_LABEL)
        known = self._repo_labels(record)
        if label_name.lower() in known:
            raise validation_failed("Label", "name", "already_exists", DOC_CREATE_LABEL)
        description = data.get("description")
        label = Label(self._new_id(), label_name, color, description if isinstance(description, str) else None)
        known[label_name.lower()] = label
        return label

    @staticmethod
    def _check_color(color: Any, documentation_url: str) -> str:
        color = color[1:] if isinstance(color, str) and color.startswith("#") else color
        if not isinstance(color, str) or not _HEX6.match(color):
            raise validation_failed("Label", "color", "invalid", documentation_url)
        return color.lower()

    def update_label(self, owner: str, name: str, label_name: str, data: Any) -> Label:
        """Change a repository label's name, colour or description ("Update a label").

        ``data`` is ``{"new_name"?, "color"?, "description"?}``; fields left out keep
        their value, and a renamed label stays on the issues that carry it. 404 when
        the label does not exist; 422 (nothing changed) for a colour that is not 6
        hex digits, a description over 100 characters, or a ``new_name`` that is
        empty, over 50 characters or another label's (``already_exists``).
        """
        record = self.repo(owner, name)
        known = self._repo_labels(record)
        found = known.get(label_name.lower())
        if found is None:
            raise not_found(DOC_UPDATE_LABEL)
        if not isinstance(data, Mapping):
            raise validation_failed("Label", "name", "invalid", DOC_UPDATE_LABEL)
        new_name = self._check_label_name(data.get("new_name", found.name), DOC_UPDATE_LABEL)
        old_key, new_key = found.name.lower(), new_name.lower()
        if new_key != old_key and new_key in known:
            raise validation_failed("Label", "name", "already_exists", DOC_UPDATE_LABEL)
        color = self._check_color(data.get("color", found.color), DOC_UPDATE_LABEL)
        description = data.get("description", found.description)
        if description is not None and (
            not isinstance(description, str) or len(description) > LABEL_DESCRIPTION_MAX_CHARS
        ):
            raise validation_failed("Label", "description", "invalid", DOC_UPDATE_LABEL)
        if new_key != old_key:
            self.labels[record.full_name] = {(new_key if k == old_key else k): v for k, v in known.items()}
            for (repo, _number), keys in self.issue_labels.items():
                if repo == record.full_name and old_key in keys:
                    keys[keys.index(old_key)] = new_key
        found.name, found.color, found.description = new_name, color, description
        return found

    def label(self, owner: str, name: str, label_name: str) -> Label:
        """Return a repository label by name, case-insensitively ("Get a label"); 404 otherwise."""
        found = self._repo_labels(self.repo(owner, name)).get(label_name.lower())
        if found is None:
            raise not_found("https://docs.github.com/rest/issues/labels#get-a-label")
        return found

    def repo_labels(self, owner: str, name: str) -> list[Label]:
        """A repository's labels in creation order ("List labels for a repository")."""
        return list(self._repo_labels(self.repo(owner, name)).values())

    def labels_on(self, owner: str, name: str, number: int) -> list[Label]:
        """An issue's labels ("List labels for an issue"); 404 for an unknown issue."""
        return self._issue_labels(self._issue(owner, name, number), number)

    @staticmethod
    def _label_names(data: Any) -> list[Any]:
        if isinstance(data, Mapping):
            data = data.get("labels")
        if not isinstance(data, list):
            raise validation_failed("Label", "labels", "invalid", DOC_ADD_LABELS)
        return [item.get("name") if isinstance(item, Mapping) else item for item in data]

    def add_labels(
        self,
        owner: str,
        name: str,
        number: int,
        data: Any,
        *,
        replace: bool = False,
        actor: str | None = None,
        actor_type: str = "User",
    ) -> list[Label]:
        """Add labels to an issue, creating unknown ones ("Add labels to an issue").

        ``data`` is ``{"labels": [names]}`` or a bare list of names. With
        ``replace`` the issue's labels become exactly these ("Set labels for an
        issue"). Each label put on or taken off is recorded as a ``labeled`` or
        ``unlabeled`` event by ``actor`` (no event without an actor). Returns the
        issue's labels; 404 unknown issue, 422 bad name.
        """
        record = self._issue(owner, name, number)
        names = [self._check_label_name(n, DOC_ADD_LABELS) for n in self._label_names(data)]
        before = list(self.issue_labels.get((record.full_name, number), []))
        keys = [] if replace else list(before)
        for label_name in dict.fromkeys(names):
            if label_name.lower() not in keys:
                keys.append(label_name.lower())
        if len(keys) > ISSUE_LABELS_MAX:
            # Checked before any label is created: GitHub changes nothing.
            raise validation_failed(
                "Issue", "labels", "custom", DOC_ADD_LABELS, f"Issues cannot have more than {ISSUE_LABELS_MAX} labels"
            )
        for label_name in names:
            self._get_or_create_label(record, label_name)
        self.issue_labels[(record.full_name, number)] = keys
        if actor:
            for key in before:
                if key not in keys:
                    self._record_label_event(record, number, "unlabeled", key, actor, actor_type)
            for key in keys:
                if key not in before:
                    self._record_label_event(record, number, "labeled", key, actor, actor_type)
        return self._issue_labels(record, number)

    def remove_label(
        self, owner: str, name: str, number: int, label_name: str, *, actor: str | None = None, actor_type: str = "User"
    ) -> list[Label]:
        """Take one label off an issue ("Remove a label from an issue").

        Recorded as an ``unlabeled`` event by ``actor`` when one is given. Returns
        the labels left; 404 ``Label does not exist`` when it is not on the issue.
        """
        record = self._issue(owner, name, number)
        keys = self.issue_labels.get((record.full_name, number), [])
        if label_name.lower() not in keys:
            raise ApiError(404, "Label does not exist", documentation_url=DOC_REMOVE_LABEL)
        keys.remove(label_name.lower())
        if actor:
            self._record_label_event(record, number, "unlabeled", label_name.lower(), actor, actor_type)
        return self._issue_labels(record, number)

    def change_labels(
        self,
        owner: str,
        name: str,
        number: int,
        *,
        actor: str,
        add: Iterable[str] = (),
        remove: Iterable[str] = (),
        actor_type: str = "User",
    ) -> list[Label]:
        """Remove, then add, labels on an issue as ``actor``, recording each change as an issue event.

        What a person does from the pull request's sidebar. Checks everything
        first, so a bad request changes nothing: 404 for an unknown issue or a
        label to remove that is not on it, 422 for a bad name to add.
        """
        record = self._issue(owner, name, number)
        adding = [self._check_label_name(n, DOC_ADD_LABELS) for n in add]
        removing = list(remove)
        on_issue = self.issue_labels.get((record.full_name, number), [])
        for label_name in removing:
            if not isinstance(label_name, str) or label_name.lower() not in on_issue:
                raise ApiError(404, "Label does not exist", documentation_url=DOC_REMOVE_LABEL)
        for label_name in dict.fromkeys(n.lower() for n in removing):
            self.remove_label(owner, name, number, label_name, actor=actor, actor_type=actor_type)
        return self.add_labels(owner, name, number, adding, actor=actor, actor_type=actor_type)

    def _record_label_event(
        self, record: Repository, number: int, event: str, key: str, actor: str, actor_type: str
    ) -> None:
        label = self._repo_labels(record)[key]
        self.label_events.append(
            LabelEvent(
                self._new_id(), record.full_name, number, event, actor, actor_type, label.name, label.color, self.now()
            )
        )

    def events_on(self, owner: str, name: str, number: int) -> list[LabelEvent]:
        """An issue's ``labeled``/``unlabeled`` events, oldest first ("List issue events"); 404 unknown issue.

        Labels a pull request bundle arrives with have no events: they were there before.
        """
        record = self._issue(owner, name, number)
        return [e for e in self.label_events if e.repo == record.full_name and e.number == number]

    def event_json(self, event: LabelEvent) -> dict[str, Any]:
        """An issue event object as "List issue events" returns it (``labeled-issue-event`` shape)."""
        return {
            "id": event.id,
            "node_id": base64.b64encode(f"014:LabeledEvent{event.id}".encode()).decode(),
            "url": f"{self.api_url}/repos/{event.repo}/issues/events/{event.id}",
            "actor": self.user_json(event.actor, event.actor_type),
            "event": event.event,
            "commit_id": None,
            "commit_url": None,
            "created_at": iso(event.created_at),
            "label": {"name": event.label_name, "color": event.label_color},
            "performed_via_github_app": None,
        }

    def label_json(self, record: Repository, label: Label) -> dict[str, Any]:
        """A label object as GitHub returns it."""
        return {
            "id": label.id,
            "node_id": base64.b64encode(f"05:Label{label.id}".encode()).decode(),
            "url": f"{self.api_url}/repos/{record.full_name}/labels/{quote(label.name)}",
            "name": label.name,
            "color": label.color,
            "default": False,
            "description": label.description,
        }

    # ----- collaborators ------------------------------------------------------

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

    # ----- repository contents -----------------------------------------------

    def set_file(self, repo: str, path: str, content: str | bytes, ref: str | None = None) -> None:
        """Serve ``content`` at ``path`` of ``repo`` (``owner/name``); ``ref=None`` serves it at every ref.

        Raises :class:`ValueError` for an unknown repository or an empty path.
        """
        if repo.lower() not in self.repos:
            raise ValueError(f"unknown repository {repo!r}; add a pull request bundle for it first")
        clean = str(PurePosixPath(path.strip("/")))
        if not path.strip("/") or clean == ".":
            raise ValueError("path must name a file")
        data = content.encode("utf-8") if isinstance(content, str) else bytes(content)
        self.files.setdefault((repo.lower(), clean), {})[ref] = data

    def stored_file(self, record: Repository, path: str, ref: str | None) -> bytes | None:
        """The bytes set with :meth:`set_file` for this ref (or for every ref), else ``None``."""
        versions = self.files.get((record.full_name.lower(), str(PurePosixPath(path.strip("/")))), {})
        if ref is not None and ref in versions:
            return versions[ref]
        return versions.get(None)

    def content_json(self, record: Repository, path: str, ref: str, data: bytes) -> dict[str, Any]:
        """A file object of "Get repository content": base64 ``content`` in 60-char lines, blob ``sha``.

        Over 1 MB, ``encoding`` is ``"none"`` and ``content`` empty, as GitHub sends them.
        """
        clean = str(PurePosixPath(path.strip("/")))
        if len(data) > CONTENTS_INLINE_MAX_BYTES:
            encoding, wrapped = "none", ""
        else:
            encoded = base64.b64encode(data).decode()
            encoding = "base64"
            wrapped = "".join(encoded[i : i + 60] + "\n" for i in range(0, len(encoded), 60))
        sha = git_blob_sha(data)
        api = f"{self.api_url}/repos/{record.full_name}"
        html = f"{self.html_url}/{record.full_name}/blob/{ref}/{clean}"
        self_url = f"{api}/contents/{clean}?ref={ref}"
        return {
            "type": "file",
            "encoding": encoding,
            "size": len(data),
            "name": PurePosixPath(clean).name,
            "path": clean,
            "content": wrapped,
            "sha": sha,
            "url": self_url,
            "git_url": f"{api}/git/blobs/{sha}",
            "html_url": html,
            "download_url": f"{self.html_url}/{record.full_name}/raw/{ref}/{clean}",
            "_links": {"self": self_url, "git": f"{api}/git/blobs/{sha}", "html": html},
        }

    # ----- app, installation and tokens --------------------------------------

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
