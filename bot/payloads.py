"""The webhook deliveries GitHub sends a GitHub App, built from REST objects.

Pure: dicts in, dicts (or bytes and headers) out, no I/O. ``prguide send``, ``prguide
demo`` and the sandbox (:mod:`bot.sandbox.hooks`) play GitHub's part with them, so the
objects follow "Webhook events and payloads"
(https://docs.github.com/en/webhooks/webhook-events-and-payloads): every nested user is
a full user object, a repository carries ``default_branch`` and its URLs, a pull
request carries ``merged``/``merged_at``, an issue on a pull request carries
``pull_request.merged_at``, and a delivery about a repository names its
``installation`` as ``{id, node_id}``. The signature is computed here, apart from the
server's check (:mod:`bot.app.webhook`), so a test of one against the other means
something.

Objects given (a bundle's pull request, a sandbox's comment) keep every field they
have; the builders only fill in what is missing, in GitHub's key order.
"""

from __future__ import annotations

import base64
import copy
import hashlib
import hmac
import time
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote

API_URL = "https://api.github.com"
HTML_URL = "https://github.com"
#: GitHub's deliveries carry ``User-Agent: GitHub-Hookshot/<build>`` ("Delivery headers").
USER_AGENT = "GitHub-Hookshot/prguide"
#: What prguide's manifest (``app.yml``) asks for: the permissions an installation grants it.
APP_PERMISSIONS = {"contents": "read", "issues": "write", "metadata": "read", "pull_requests": "write"}
#: The events prguide's manifest subscribes to.
APP_EVENTS = ["issue_comment", "pull_request", "pull_request_review", "pull_request_review_comment"]

#: The ``event.action`` pairs prguide acts on: the routes of :mod:`bot.features` and the
#: installation events the server itself handles (a cached token is dropped), plus ``ping``.
EVENTS: Mapping[str, str] = {
    "ping": "the check GitHub sends when the webhook is set up",
    "pull_request.closed": "a pull request merged (or closed): the guide",
    "issue_comment.created": "a comment on a pull request: /prguide commands",
    "issue_comment.edited": "an edited comment: its new /prguide commands",
    "pull_request_review.submitted": "a review's body: /prguide commands",
    "pull_request_review_comment.created": "an inline review comment: /prguide commands",
    "installation.created": "the app installed: backfill of its repositories",
    "installation.deleted": "the app uninstalled: its token is dropped",
    "installation.suspend": "the installation suspended: its token is dropped",
    "installation.new_permissions_accepted": "new permissions accepted: a new token",
    "installation_repositories.added": "repositories added: backfill of them",
    "installation_repositories.removed": "repositories removed: a new token",
}

_USER_KEYS = (
    "login", "id", "node_id", "avatar_url", "gravatar_id", "url", "html_url", "followers_url", "following_url",
    "gists_url", "starred_url", "subscriptions_url", "organizations_url", "repos_url", "events_url",
    "received_events_url", "type", "site_admin",
)  # fmt: skip
#: The keys of a webhook's ``repository`` object, in GitHub's order.
REPOSITORY_KEYS = (
    "id", "node_id", "name", "full_name", "private", "owner", "html_url", "description", "fork", "url", "forks_url",
    "keys_url", "collaborators_url", "teams_url", "hooks_url", "issue_events_url", "events_url", "assignees_url",
    "branches_url", "tags_url", "blobs_url", "git_tags_url", "git_refs_url", "trees_url", "statuses_url",
    "languages_url", "stargazers_url", "contributors_url", "subscribers_url", "subscription_url", "commits_url",
    "git_commits_url", "comments_url", "issue_comment_url", "contents_url", "compare_url", "merges_url",
    "archive_url", "downloads_url", "issues_url", "pulls_url", "milestones_url", "notifications_url", "labels_url",
    "releases_url", "deployments_url", "created_at", "updated_at", "pushed_at", "git_url", "ssh_url", "clone_url",
    "svn_url", "homepage", "size", "stargazers_count", "watchers_count", "language", "has_issues", "has_projects",
    "has_downloads", "has_wiki", "has_pages", "forks_count", "mirror_url", "archived", "disabled",
    "open_issues_count", "license", "forks", "open_issues", "watchers", "default_branch", "is_template", "topics",
    "visibility", "web_commit_signoff_required", "custom_properties",
)  # fmt: skip
_REPO_URLS = {
    "forks_url": "/forks", "keys_url": "/keys{/key_id}", "collaborators_url": "/collaborators{/collaborator}",
    "teams_url": "/teams", "hooks_url": "/hooks", "issue_events_url": "/issues/events{/number}",
    "events_url": "/events", "assignees_url": "/assignees{/user}", "branches_url": "/branches{/branch}",
    "tags_url": "/tags", "blobs_url": "/git/blobs{/sha}", "git_tags_url": "/git/tags{/sha}",
    "git_refs_url": "/git/refs{/sha}", "trees_url": "/git/trees{/sha}", "statuses_url": "/statuses/{sha}",
    "languages_url": "/languages", "stargazers_url": "/stargazers", "contributors_url": "/contributors",
    "subscribers_url": "/subscribers", "subscription_url": "/subscription", "commits_url": "/commits{/sha}",
    "git_commits_url": "/git/commits{/sha}", "comments_url": "/comments{/number}",
    "issue_comment_url": "/issues/comments{/number}", "contents_url": "/contents/{+path}",
    "compare_url": "/compare/{base}...{head}", "merges_url": "/merges", "archive_url": "/{archive_format}{/ref}",
    "downloads_url": "/downloads", "issues_url": "/issues{/number}", "pulls_url": "/pulls{/number}",
    "milestones_url": "/milestones{/number}", "notifications_url": "/notifications{?since,all,participating}",
    "labels_url": "/labels{/name}", "releases_url": "/releases{/id}", "deployments_url": "/deployments",
}  # fmt: skip


def iso(epoch: float | None = None) -> str:
    """``epoch`` (Unix seconds, default now) as GitHub writes times: ``2024-05-01T10:00:00Z``."""
    return datetime.fromtimestamp(time.time() if epoch is None else epoch, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _node_id(kind: str, number: int) -> str:
    """A global node id in GitHub's legacy form (base64 of ``"<type code>:<Type><id>"``)."""
    return base64.b64encode(f"{kind}{number}".encode()).decode("ascii")


def stable_id(text: str) -> int:
    """A positive id derived from ``text`` (a login, a repository name), the same on every run."""
    return int.from_bytes(hashlib.sha256(text.lower().encode("utf-8")).digest()[:4], "big") % 10**8 + 1


def sign(secret: str | bytes, body: bytes) -> str:
    """The ``X-Hub-Signature-256`` header of ``body``: ``sha256=`` and the hex HMAC-SHA256 with the webhook secret
    ("Validating webhook deliveries")."""
    key = secret.encode("utf-8") if isinstance(secret, str) else secret
    return "sha256=" + hmac.new(key, body, hashlib.sha256).hexdigest()


def delivery_headers(
    body: bytes, secret: str | bytes, delivery_id: str, event: str = "pull_request", *, app_id: int = 1
) -> dict[str, str]:
    """The HTTP headers of a webhook delivery of ``body`` ("Webhook events and payloads", "Delivery headers")."""
    return {
        "X-GitHub-Event": event,
        "X-GitHub-Delivery": delivery_id,
        "X-GitHub-Hook-ID": "1",
        "X-GitHub-Hook-Installation-Target-Type": "integration",
        "X-GitHub-Hook-Installation-Target-ID": str(app_id),
        "X-Hub-Signature-256": sign(secret, body),
        "User-Agent": USER_AGENT,
        "Content-Type": "application/json",
    }


# --- objects ------------------------------------------------------------------------------------


def user(
    login: str, *, type: str = "User", id: int | None = None, api_url: str = API_URL, html_url: str = HTML_URL  # noqa: A002
) -> dict[str, Any]:
    """A full user object as payloads nest it (``sender``, ``user``, ``owner``...); ``id`` defaults to :func:`stable_id`."""
    uid = id if id is not None else stable_id(login)
    api = f"{api_url}/users/{quote(login)}"
    return {
        "login": login, "id": uid, "node_id": _node_id("04:User", uid),
        "avatar_url": f"https://avatars.githubusercontent.com/u/{uid}?v=4", "gravatar_id": "", "url": api,
        "html_url": f"{html_url}/{quote(login)}", "followers_url": f"{api}/followers",
        "following_url": f"{api}/following{{/other_user}}", "gists_url": f"{api}/gists{{/gist_id}}",
        "starred_url": f"{api}/starred{{/owner}}{{/repo}}", "subscriptions_url": f"{api}/subscriptions",
        "organizations_url": f"{api}/orgs", "repos_url": f"{api}/repos", "events_url": f"{api}/events{{/privacy}}",
        "received_events_url": f"{api}/received_events", "type": type, "site_admin": False,
    }  # fmt: skip


def complete_user(given: Mapping[str, Any] | None, *, api_url: str = API_URL, html_url: str = HTML_URL) -> dict[str, Any] | None:
    """``given`` (a user object, perhaps only ``{login, type}``) with every key of a full one; ``None`` stays ``None``."""
    if not isinstance(given, Mapping) or not isinstance(given.get("login"), str):
        return None if given is None else dict(given)
    uid = given.get("id") if isinstance(given.get("id"), int) else None
    full = user(given["login"], type=str(given.get("type") or "User"), id=uid, api_url=api_url, html_url=html_url)
    return {**full, **given}


def organization(login: str, *, id: int | None = None, api_url: str = API_URL) -> dict[str, Any]:
    """The ``organization`` object of a delivery about an organization's repository."""
    oid = id if id is not None else stable_id(login)
    api = f"{api_url}/orgs/{quote(login)}"
    return {
        "login": login, "id": oid, "node_id": _node_id("012:Organization", oid), "url": api,
        "repos_url": f"{api}/repos", "events_url": f"{api}/events", "hooks_url": f"{api}/hooks",
        "issues_url": f"{api}/issues", "members_url": f"{api}/members{{/member}}",
        "public_members_url": f"{api}/public_members{{/member}}",
        "avatar_url": f"https://avatars.githubusercontent.com/u/{oid}?v=4", "description": None,
    }  # fmt: skip


def repository(
    full_name: str,
    *,
    given: Mapping[str, Any] | None = None,
    private: bool | None = None,
    default_branch: str | None = None,
    owner_type: str | None = None,
    api_url: str = API_URL,
    html_url: str = HTML_URL,
) -> dict[str, Any]:
    """A webhook's ``repository`` object for ``full_name`` (``"owner/name"``), with exactly :data:`REPOSITORY_KEYS`.

    Values come from ``given`` (a "Get a repository" object, or a pull request's
    ``base.repo``) where it has them, then from the keyword arguments, then defaults
    (public, ``main``, a ``User`` owner). Raises ``ValueError`` for a name that is not ``owner/name``.
    """
    owner_login, sep, name = full_name.partition("/")
    if not sep or not owner_login or not name or "/" in name:
        raise ValueError(f"a repository is 'owner/name', got {full_name!r}")
    given = dict(given or {})
    rid = given.get("id") if isinstance(given.get("id"), int) else stable_id(full_name)
    is_private = private if private is not None else bool(given.get("private", False))
    branch = default_branch or given.get("default_branch") or "main"
    owner_given = dict(given["owner"]) if isinstance(given.get("owner"), Mapping) else {"login": owner_login}
    if owner_type is not None:
        owner_given["type"] = owner_type
    owner_given.setdefault("type", "User")
    api = f"{api_url}/repos/{full_name}"
    stamp = iso(0)
    values: dict[str, Any] = {
        "id": rid, "node_id": _node_id("010:Repository", rid), "name": name, "full_name": full_name,
        "private": is_private, "owner": complete_user(owner_given, api_url=api_url, html_url=html_url),
        "html_url": f"{html_url}/{full_name}", "description": None, "fork": False, "url": api,
        **{key: api + suffix for key, suffix in _REPO_URLS.items()},
        "created_at": stamp, "updated_at": stamp, "pushed_at": stamp,
        "git_url": f"git://{html_url.split('://', 1)[-1]}/{full_name}.git",
        "ssh_url": f"git@{html_url.split('://', 1)[-1]}:{full_name}.git", "clone_url": f"{html_url}/{full_name}.git",
        "svn_url": f"{html_url}/{full_name}", "homepage": None, "size": 0, "stargazers_count": 0, "watchers_count": 0,
        "language": None, "has_issues": True, "has_projects": True, "has_downloads": True, "has_wiki": True,
        "has_pages": False, "forks_count": 0, "mirror_url": None, "archived": False, "disabled": False,
        "open_issues_count": 0, "license": None, "forks": 0, "open_issues": 0, "watchers": 0,
        "default_branch": branch, "is_template": False, "topics": [],
        "visibility": "private" if is_private else "public", "web_commit_signoff_required": False,
        "custom_properties": {},
    }  # fmt: skip
    keep = {k: given[k] for k in REPOSITORY_KEYS if k in given and k not in ("owner", "private", "default_branch", "visibility")}
    values.update(keep)
    return {key: values[key] for key in REPOSITORY_KEYS}


def short_repository(repo: Mapping[str, Any]) -> dict[str, Any]:
    """A repository as installation events list it: ``{id, node_id, name, full_name, private}``."""
    return {key: repo.get(key) for key in ("id", "node_id", "name", "full_name", "private")}


def installation_ref(installation_id: int) -> dict[str, Any]:
    """The ``installation`` object of a delivery about a repository: ``{id, node_id}``."""
    return {"id": installation_id, "node_id": _node_id("023:IntegrationInstallation", installation_id)}


def installation(
    installation_id: int,
    account: Mapping[str, Any],
    *,
    app_id: int = 1,
    app_slug: str = "prguide",
    selection: str = "selected",
    permissions: Mapping[str, str] | None = None,
    events: Sequence[str] | None = None,
    api_url: str = API_URL,
    html_url: str = HTML_URL,
    at: float | None = None,
) -> dict[str, Any]:
    """The full ``installation`` object of ``installation`` and ``installation_repositories`` events.

    ``account`` is the user or organization it is installed on (a user object);
    ``selection`` is ``repository_selection``, ``"all"`` or ``"selected"``.
    """
    owner = complete_user(account, api_url=api_url, html_url=html_url) or {}
    stamp = iso(at)
    return {
        "id": installation_id,
        "account": owner,
        "repository_selection": selection,
        "access_tokens_url": f"{api_url}/app/installations/{installation_id}/access_tokens",
        "repositories_url": f"{api_url}/installation/repositories",
        "html_url": f"{html_url}/settings/installations/{installation_id}",
        "app_id": app_id,
        "app_slug": app_slug,
        "target_id": owner.get("id"),
        "target_type": owner.get("type", "User"),
        "permissions": dict(permissions or APP_PERMISSIONS),
        "events": list(events or APP_EVENTS),
        "created_at": stamp,
        "updated_at": stamp,
        "single_file_name": None,
        "has_multiple_single_files": False,
        "single_file_paths": [],
        "suspended_at": None,
        "suspended_by": None,
    }


def _links(pull_api: str, issue_api: str, html: str, statuses: str) -> dict[str, Any]:
    return {
        "self": {"href": pull_api}, "html": {"href": html}, "issue": {"href": issue_api},
        "comments": {"href": f"{issue_api}/comments"}, "review_comments": {"href": f"{pull_api}/comments"},
        "review_comment": {"href": pull_api.rsplit("/", 1)[0] + "/comments{/number}"},
        "commits": {"href": f"{pull_api}/commits"}, "statuses": {"href": statuses},
    }  # fmt: skip


def pull_request(
    repo: Mapping[str, Any], given: Mapping[str, Any], *, api_url: str = API_URL, html_url: str = HTML_URL
) -> dict[str, Any]:
    """``given`` (a pull request object, at least ``{"number"}``) with every key of a webhook's ``pull_request``.

    ``repo`` is the webhook ``repository`` object (:func:`repository`); it becomes
    ``base.repo`` (and ``head.repo`` unless given). Nested users are completed.
    A merged pull request (``merged`` true or a ``merged_at``) gets both set, with
    ``state: closed``. Raises ``ValueError`` when ``number`` is not a positive integer.
    """
    number = given.get("number")
    if not isinstance(number, int) or isinstance(number, bool) or number < 1:
        raise ValueError("the pull request has no positive integer 'number'")
    urls = {"api_url": api_url, "html_url": html_url}
    full_name = repo["full_name"]
    api = f"{api_url}/repos/{full_name}"
    pull_api, issue_api, html = f"{api}/pulls/{number}", f"{api}/issues/{number}", f"{html_url}/{full_name}/pull/{number}"
    head_given, base_given = dict(given.get("head") or {}), dict(given.get("base") or {})
    head_sha = str(head_given.get("sha") or "0" * 40)
    author = complete_user(given.get("user") or {"login": "octocat"}, api_url=api_url, html_url=html_url)
    owner = repo.get("owner") or author
    merged = given.get("merged") is True or bool(given.get("merged_at"))
    merged_at = given.get("merged_at") or (iso() if merged else None)
    created = given.get("created_at") or iso()

    def side(ref: Mapping[str, Any], default_ref: str, sha: str, ref_user: Any) -> dict[str, Any]:
        ref_name = str(ref.get("ref") or default_ref)
        login = (ref_user or {}).get("login", "octocat")
        out = {"label": f"{login}:{ref_name}", "ref": ref_name, "sha": sha, "user": ref_user, "repo": repo}
        out.update({k: v for k, v in ref.items() if k not in ("user", "repo")})
        out["user"] = complete_user(ref.get("user") or ref_user, api_url=api_url, html_url=html_url)
        ref_repo = ref.get("repo")
        if isinstance(ref_repo, Mapping) and isinstance(ref_repo.get("full_name"), str):
            # The base (or a head in the same repository) is the webhook's repository; a fork is its own.
            same = ref_repo["full_name"] == full_name
            try:
                out["repo"] = repository(ref_repo["full_name"], given={**repo, **ref_repo} if same else ref_repo, **urls)
            except ValueError:
                out["repo"] = dict(ref_repo)
        return out

    statuses = f"{api}/statuses/{head_sha}"
    values: dict[str, Any] = {
        "url": pull_api, "id": stable_id(f"{full_name}#{number}"), "node_id": _node_id("011:PullRequest", number),
        "html_url": html, "diff_url": f"{html}.diff", "patch_url": f"{html}.patch", "issue_url": issue_api,
        "number": number, "state": "closed" if merged else given.get("state", "open"), "locked": False,
        "title": f"Pull request #{number}", "user": author, "body": None, "created_at": created, "updated_at": created,
        "closed_at": merged_at, "merged_at": merged_at, "merge_commit_sha": None, "assignee": None, "assignees": [],
        "requested_reviewers": [], "requested_teams": [], "labels": [], "milestone": None, "draft": False,
        "commits_url": f"{pull_api}/commits", "review_comments_url": f"{pull_api}/comments",
        "review_comment_url": f"{api}/pulls/comments{{/number}}", "comments_url": f"{issue_api}/comments",
        "statuses_url": statuses, "head": None, "base": None, "_links": _links(pull_api, issue_api, html, statuses),
        "author_association": "CONTRIBUTOR", "auto_merge": None, "active_lock_reason": None, "merged": merged,
        "mergeable": None, "rebaseable": None, "mergeable_state": "unknown", "merged_by": None, "comments": 0,
        "review_comments": 0, "maintainer_can_modify": False, "commits": 1, "additions": 0, "deletions": 0,
        "changed_files": 0,
    }  # fmt: skip
    values.update(copy.deepcopy({k: v for k, v in given.items()}))
    values["user"] = author
    values["head"] = side(head_given, f"topic-{number}", head_sha, author)
    values["base"] = side(base_given, str(repo.get("default_branch") or "main"), str(base_given.get("sha") or "0" * 40), owner)
    values["merged_by"] = complete_user(values.get("merged_by"), api_url=api_url, html_url=html_url)
    values["assignee"] = complete_user(values.get("assignee"), api_url=api_url, html_url=html_url)
    if merged:
        values.update(merged=True, merged_at=merged_at, state="closed", closed_at=values.get("closed_at") or merged_at)
    return values


def issue_of(pull: Mapping[str, Any], *, api_url: str = API_URL) -> dict[str, Any]:
    """The ``issue`` object of an ``issue_comment`` delivery on pull request ``pull`` (a :func:`pull_request`).

    Carries ``pull_request: {url, html_url, diff_url, patch_url, merged_at}``, which is
    how GitHub tells a pull request's comment from an issue's ("Webhook events and payloads", issue_comment).
    """
    issue_api = str(pull["issue_url"])
    repo_api = issue_api.rsplit("/issues/", 1)[0]
    return {
        "url": issue_api, "repository_url": repo_api, "labels_url": f"{issue_api}/labels{{/name}}",
        "comments_url": f"{issue_api}/comments", "events_url": f"{issue_api}/events", "html_url": pull["html_url"],
        "id": stable_id(f"issue:{issue_api}"), "node_id": _node_id("010:Issue", int(pull["number"])),
        "number": pull["number"], "title": pull.get("title"), "user": pull.get("user"), "labels": pull.get("labels", []),
        "state": pull.get("state"), "locked": pull.get("locked", False), "assignee": pull.get("assignee"),
        "assignees": pull.get("assignees", []), "milestone": pull.get("milestone"), "comments": pull.get("comments", 0),
        "created_at": pull.get("created_at"), "updated_at": pull.get("updated_at"), "closed_at": pull.get("closed_at"),
        "author_association": pull.get("author_association", "NONE"), "active_lock_reason": None,
        "body": pull.get("body"), "reactions": reactions(f"{issue_api}/reactions"), "draft": pull.get("draft", False),
        "pull_request": {
            "url": pull["url"], "html_url": pull["html_url"], "diff_url": pull["diff_url"],
            "patch_url": pull["patch_url"], "merged_at": pull.get("merged_at"),
        },
        "timeline_url": f"{issue_api}/timeline", "performed_via_github_app": None, "state_reason": None,
    }  # fmt: skip


def reactions(url: str) -> dict[str, Any]:
    """A reaction summary with no reactions, as comments carry it."""
    return {"url": url, "total_count": 0, "+1": 0, "-1": 0, "laugh": 0, "hooray": 0, "confused": 0, "heart": 0,
            "rocket": 0, "eyes": 0}  # fmt: skip


def issue_comment_object(
    pull: Mapping[str, Any], comment_id: int, body: str, author: Mapping[str, Any], *,
    given: Mapping[str, Any] | None = None, at: float | None = None,
) -> dict[str, Any]:  # fmt: skip
    """An issue comment ("Get an issue comment") on pull request ``pull``; ``given`` fields win."""
    issue_api = str(pull["issue_url"])
    comment_api = issue_api.rsplit("/issues/", 1)[0] + f"/issues/comments/{comment_id}"
    stamp = iso(at)
    values = {
        "url": comment_api, "html_url": f"{pull['html_url']}#issuecomment-{comment_id}", "issue_url": issue_api,
        "id": comment_id, "node_id": _node_id("012:IssueComment", comment_id), "user": author, "created_at": stamp,
        "updated_at": stamp, "author_association": "NONE", "performed_via_github_app": None, "body": body,
        "reactions": reactions(f"{comment_api}/reactions"),
    }  # fmt: skip
    values.update(given or {})
    values["user"] = complete_user(values.get("user") or author)
    return values


# --- events -----------------------------------------------------------------------------------------


def _about_repository(
    payload: dict[str, Any], repo: Mapping[str, Any], installation_id: int, sender: Any, *, installation_first: bool = False
) -> dict[str, Any]:
    """``payload`` with ``repository``, ``installation``, ``organization`` (for an organization's repository) and
    ``sender``, in the order GitHub's examples of the event show (``installation_first`` or last)."""
    payload["repository"] = dict(repo)
    if installation_first:
        payload["installation"] = installation_ref(installation_id)
    owner = repo.get("owner") or {}
    if owner.get("type") == "Organization":
        org_id = owner.get("id") if isinstance(owner.get("id"), int) else None
        payload["organization"] = organization(str(owner.get("login")), id=org_id)
    payload["sender"] = complete_user(sender)
    payload["installation"] = installation_ref(installation_id)
    return payload


def pull_request_closed(
    pull: Mapping[str, Any], repo: Mapping[str, Any], *, installation_id: int, sender: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """``pull_request`` ``closed``: ``{action, number, pull_request, repository, [organization], sender, installation}``.

    ``pull`` is used as it is (``merged`` true with ``merged_at`` for a merge, see
    :func:`pull_request`); ``sender`` defaults to who merged it, else its author.
    """
    full = pull_request(repo, pull)
    who = sender or full.get("merged_by") or full.get("user")
    payload: dict[str, Any] = {"action": "closed", "number": full["number"], "pull_request": full}
    return _about_repository(payload, repo, installation_id, who, installation_first=True)


def issue_comment(
    action: str,
    pull: Mapping[str, Any],
    repo: Mapping[str, Any],
    comment: Mapping[str, Any],
    *,
    installation_id: int,
    previous_body: str | None = None,
) -> dict[str, Any]:
    """``issue_comment`` ``created``/``edited``/``deleted`` on pull request ``pull``, sent by the comment's author.

    ``edited`` carries ``changes: {body: {from: previous_body}}`` when the body changed.
    """
    full = pull_request(repo, pull)
    payload: dict[str, Any] = {"action": action}
    if action == "edited":
        payload["changes"] = {"body": {"from": previous_body}} if previous_body is not None else {}
    payload.update(issue=issue_of(full), comment=dict(comment))
    return _about_repository(payload, repo, installation_id, comment.get("user"))


def pull_request_review_submitted(
    pull: Mapping[str, Any], repo: Mapping[str, Any], *, review_id: int, body: str, author: Mapping[str, Any],
    installation_id: int, state: str = "commented", at: float | None = None,
) -> dict[str, Any]:  # fmt: skip
    """``pull_request_review`` ``submitted``: a review (``state`` commented, approved or changes_requested) with ``body``."""
    full = pull_request(repo, pull)
    html = f"{full['html_url']}#pullrequestreview-{review_id}"
    review = {
        "id": review_id, "node_id": _node_id("017:PullRequestReview", review_id), "user": complete_user(author),
        "body": body, "commit_id": full["head"]["sha"], "submitted_at": iso(at), "state": state, "html_url": html,
        "pull_request_url": full["url"], "author_association": "NONE",
        "_links": {"html": {"href": html}, "pull_request": {"href": full["url"]}},
    }  # fmt: skip
    payload: dict[str, Any] = {"action": "submitted", "review": review, "pull_request": full}
    return _about_repository(payload, repo, installation_id, author)


def pull_request_review_comment_created(
    pull: Mapping[str, Any], repo: Mapping[str, Any], *, comment_id: int, body: str, author: Mapping[str, Any],
    installation_id: int, path: str = "README.md", line: int = 1, in_reply_to: int | None = None, at: float | None = None,
    given: Mapping[str, Any] | None = None,
) -> dict[str, Any]:  # fmt: skip
    """``pull_request_review_comment`` ``created``: an inline comment on ``path`` at ``line`` of the diff.

    ``given`` (a review comment as "Get a review comment for a pull request" returns it) wins over the rest.
    """
    full = pull_request(repo, pull)
    api = full["url"].rsplit("/pulls/", 1)[0]
    url, html = f"{api}/pulls/comments/{comment_id}", f"{full['html_url']}#discussion_r{comment_id}"
    sha, stamp = full["head"]["sha"], iso(at)
    comment: dict[str, Any] = {
        "url": url, "pull_request_review_id": comment_id, "id": comment_id,
        "node_id": _node_id("024:PullRequestReviewComment", comment_id), "diff_hunk": f"@@ -1 +1 @@\n+{path}",
        "path": path, "position": 1, "original_position": 1, "commit_id": sha, "original_commit_id": sha,
        "user": complete_user(author), "body": body, "created_at": stamp, "updated_at": stamp, "html_url": html,
        "pull_request_url": full["url"], "author_association": "NONE",
        "_links": {"self": {"href": url}, "html": {"href": html}, "pull_request": {"href": full["url"]}},
        "reactions": reactions(f"{url}/reactions"), "start_line": None, "original_start_line": None,
        "start_side": None, "line": line, "original_line": line, "side": "RIGHT",
    }  # fmt: skip
    if in_reply_to is not None:
        comment["in_reply_to_id"] = in_reply_to
    comment.update(given or {})
    comment["user"] = complete_user(comment.get("user") or author)
    payload: dict[str, Any] = {"action": "created", "comment": comment, "pull_request": full}
    return _about_repository(payload, repo, installation_id, author, installation_first=True)


def installation_event(
    action: str, installed: Mapping[str, Any], repositories: Iterable[Mapping[str, Any]] | None, *,
    sender: Mapping[str, Any] | None = None,
) -> dict[str, Any]:  # fmt: skip
    """``installation`` (``created``, ``deleted``, ``suspend``, ``unsuspend``, ``new_permissions_accepted``).

    ``installed`` is the full installation object (:func:`installation`);
    ``repositories`` its repositories (each shortened as GitHub lists them), or
    ``None`` to leave the key out, as GitHub may for an installation on all of an
    account's repositories. ``sender`` defaults to the account.
    """
    payload: dict[str, Any] = {"action": action, "installation": dict(installed)}
    if repositories is not None:
        payload["repositories"] = [short_repository(r) for r in repositories]
    if action == "created":
        payload["requester"] = None
    payload["sender"] = complete_user(sender or installed.get("account"))
    return payload


def installation_repositories_event(
    action: str, installed: Mapping[str, Any], changed: Iterable[Mapping[str, Any]], *,
    sender: Mapping[str, Any] | None = None,
) -> dict[str, Any]:  # fmt: skip
    """``installation_repositories`` ``added``/``removed``: ``changed`` in ``repositories_added`` or ``repositories_removed``."""
    repos = [short_repository(r) for r in changed]
    who = complete_user(sender or installed.get("account"))
    return {
        "action": action,
        "installation": dict(installed),
        "repository_selection": installed.get("repository_selection", "selected"),
        "repositories_added": repos if action == "added" else [],
        "repositories_removed": repos if action == "removed" else [],
        "requester": who,
        "sender": who,
    }


def ping(
    *, app_id: int, url: str, hook_id: int = 1, sender: Mapping[str, Any] | None = None, at: float | None = None
) -> dict[str, Any]:
    """``ping``: sent once when the app's webhook is set up, ``hook.type`` ``App`` (no ``installation``)."""
    stamp = iso(at)
    api = f"{API_URL}/app/hook"
    return {
        "zen": "Keep it logically awesome.",
        "hook_id": hook_id,
        "hook": {
            "type": "App", "id": hook_id, "name": "web", "active": True, "events": list(APP_EVENTS),
            "config": {"content_type": "json", "insecure_ssl": "0", "url": url}, "updated_at": stamp,
            "created_at": stamp, "app_id": app_id, "deliveries_url": f"{api}/deliveries",
        },  # fmt: skip
        "sender": complete_user(sender or {"login": "octocat"}),
    }
