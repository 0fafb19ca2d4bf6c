"""GitHub's JSON objects, complete: users, repositories, pull requests, issues, comments, labels.

GitHub's REST and webhook descriptions (``@octokit/openapi``, ``@octokit/openapi-webhooks``)
name the fields every object carries; pull request bundles (the corpus, a git history,
a test's few lines) carry only some. These functions build an object from what is
known and fill in the rest the way GitHub would: URLs from the repository and number,
stable ids and node ids from names, ``null``/``0``/``[]`` for what a bundle cannot
tell. Fields given win: a corpus pull request keeps its own title, users and dates.

Every function is pure and takes ``site`` (:class:`Site`, the API and web bases the
URLs are made of; GitHub's by default). Timestamps are GitHub's ISO 8601 UTC strings.
Each function names its schema; the pages are in GitHub's REST reference
(https://docs.github.com/rest) and "Webhook events and payloads"
(https://docs.github.com/webhooks/webhook-events-and-payloads).

The sandbox (:mod:`bot.sandbox`) serves these objects; :mod:`bot.payloads` builds the
webhook deliveries of ``prguide send``, ``prguide demo`` and the sandbox from them.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlsplit

#: What a bundle cannot date: GitHub's objects always carry a creation time.
EPOCH = "2024-01-01T00:00:00Z"
#: The ``content`` values of GitHub's reaction roll-ups ("reaction-rollup" schema), in GitHub's order.
REACTION_KEYS = ("+1", "-1", "laugh", "confused", "heart", "hooray", "eyes", "rocket")
#: Fields of "Get a pull request" that "List pull requests" and the review webhooks leave out
#: (the ``pull-request-simple`` schema and the webhooks' "Simple Pull Request").
FULL_ONLY_PULL_FIELDS = (
    "merged", "mergeable", "rebaseable", "mergeable_state", "merged_by", "comments", "review_comments",
    "maintainer_can_modify", "commits", "additions", "deletions", "changed_files",
)  # fmt: skip


@dataclass(frozen=True)
class Site:
    """Where the objects live: ``api`` is the REST API base, ``html`` the web base (no trailing slash)."""

    api: str = "https://api.github.com"
    html: str = "https://github.com"

    @property
    def host(self) -> str:
        """The web host (``github.com``), for git and ssh clone URLs."""
        return urlsplit(self.html).netloc or "github.com"


GITHUB = Site()


def node_id(kind: str, number: int) -> str:
    """GitHub's legacy global node id of a ``kind`` object (``node_id("User", 1)`` is ``"MDQ6VXNlcjE="``)."""
    return base64.b64encode(f"0{len(kind)}:{kind}{number}".encode()).decode()


def stable_id(*names: object, base: int = 1_000_000) -> int:
    """A positive id derived from ``names`` (the same names, the same id), for objects a bundle gives none."""
    digest = hashlib.sha256("\0".join(str(n).lower() for n in names).encode()).digest()
    return base + int.from_bytes(digest[:4], "big") % 900_000_000


def user(login: str, user_type: str = "User", *, id: int | None = None, site: Site = GITHUB) -> dict[str, Any]:  # noqa: A002
    """A user as GitHub nests it everywhere (the ``simple-user`` schema: all 18 required fields).

    ``user_type`` is ``User``, ``Bot`` or ``Organization``; ``id`` defaults to :func:`stable_id` of the login.
    """
    uid = id if isinstance(id, int) and not isinstance(id, bool) else stable_id("user", login)
    api = f"{site.api}/users/{quote(login)}"
    return {
        "login": login,
        "id": uid,
        "node_id": node_id("User" if user_type != "Organization" else "Organization", uid),
        "avatar_url": f"https://avatars.githubusercontent.com/u/{uid}?v=4",
        "gravatar_id": "",
        "url": api,
        "html_url": f"{site.html}/{quote(login)}",
        "followers_url": f"{api}/followers",
        "following_url": f"{api}/following{{/other_user}}",
        "gists_url": f"{api}/gists{{/gist_id}}",
        "starred_url": f"{api}/starred{{/owner}}{{/repo}}",
        "subscriptions_url": f"{api}/subscriptions",
        "organizations_url": f"{api}/orgs",
        "repos_url": f"{api}/repos",
        "events_url": f"{api}/events{{/privacy}}",
        "received_events_url": f"{api}/received_events",
        "type": user_type,
        "user_view_type": "public",
        "site_admin": False,
    }


def fill_user(value: Any, *, site: Site = GITHUB) -> Any:
    """A partial user (``{"login", "type"}``) completed as :func:`user`; fields given win.

    Anything without a string ``login`` (``None``, a malformed value) is returned as it is.
    """
    if not isinstance(value, Mapping) or not isinstance(value.get("login"), str):
        return value
    kind = value.get("type") if isinstance(value.get("type"), str) else "User"
    return {**user(value["login"], kind, id=value.get("id"), site=site), **value}


def organization(login: str, *, id: int | None = None, site: Site = GITHUB) -> dict[str, Any]:  # noqa: A002
    """An organization as webhook payloads name it (``organization``, the ``organization-simple-webhooks``
    schema); ``id`` defaults to :func:`stable_id` of the login, as :func:`user` gives its account."""
    oid = id if isinstance(id, int) and not isinstance(id, bool) else stable_id("user", login)
    api = f"{site.api}/orgs/{quote(login)}"
    return {
        "login": login,
        "id": oid,
        "node_id": node_id("Organization", oid),
        "url": api,
        "repos_url": f"{api}/repos",
        "events_url": f"{api}/events",
        "hooks_url": f"{api}/hooks",
        "issues_url": f"{api}/issues",
        "members_url": f"{api}/members{{/member}}",
        "public_members_url": f"{api}/public_members{{/member}}",
        "avatar_url": f"https://avatars.githubusercontent.com/u/{oid}?v=4",
        "description": None,
    }


def repository(
    full_name: str,
    *,
    id: int | None = None,  # noqa: A002 - GitHub's field name
    private: bool = False,
    owner_type: str = "User",
    default_branch: str = "main",
    created_at: str = EPOCH,
    site: Site = GITHUB,
) -> dict[str, Any]:
    """A repository with every field of GitHub's ``repository``, ``full-repository`` and
    ``repository-webhooks`` schemas (as "Get a repository" and webhook payloads carry it).

    ``full_name`` is ``owner/name``; ``id`` defaults to :func:`stable_id` of it.
    """
    owner, _, name = full_name.partition("/")
    rid = id if isinstance(id, int) and not isinstance(id, bool) else stable_id("repository", full_name)
    api = f"{site.api}/repos/{full_name}"
    html = f"{site.html}/{full_name}"
    return {
        "id": rid,
        "node_id": node_id("Repository", rid),
        "name": name,
        "full_name": full_name,
        "private": private,
        "owner": user(owner, owner_type, site=site),
        "html_url": html,
        "description": None,
        "fork": False,
        "url": api,
        "forks_url": f"{api}/forks",
        "keys_url": f"{api}/keys{{/key_id}}",
        "collaborators_url": f"{api}/collaborators{{/collaborator}}",
        "teams_url": f"{api}/teams",
        "hooks_url": f"{api}/hooks",
        "issue_events_url": f"{api}/issues/events{{/number}}",
        "events_url": f"{api}/events",
        "assignees_url": f"{api}/assignees{{/user}}",
        "branches_url": f"{api}/branches{{/branch}}",
        "tags_url": f"{api}/tags",
        "blobs_url": f"{api}/git/blobs{{/sha}}",
        "git_tags_url": f"{api}/git/tags{{/sha}}",
        "git_refs_url": f"{api}/git/refs{{/sha}}",
        "trees_url": f"{api}/git/trees{{/sha}}",
        "statuses_url": f"{api}/statuses/{{sha}}",
        "languages_url": f"{api}/languages",
        "stargazers_url": f"{api}/stargazers",
        "contributors_url": f"{api}/contributors",
        "subscribers_url": f"{api}/subscribers",
        "subscription_url": f"{api}/subscription",
        "commits_url": f"{api}/commits{{/sha}}",
        "git_commits_url": f"{api}/git/commits{{/sha}}",
        "comments_url": f"{api}/comments{{/number}}",
        "issue_comment_url": f"{api}/issues/comments{{/number}}",
        "contents_url": f"{api}/contents/{{+path}}",
        "compare_url": f"{api}/compare/{{base}}...{{head}}",
        "merges_url": f"{api}/merges",
        "archive_url": f"{api}/{{archive_format}}{{/ref}}",
        "downloads_url": f"{api}/downloads",
        "issues_url": f"{api}/issues{{/number}}",
        "pulls_url": f"{api}/pulls{{/number}}",
        "milestones_url": f"{api}/milestones{{/number}}",
        "notifications_url": f"{api}/notifications{{?since,all,participating}}",
        "labels_url": f"{api}/labels{{/name}}",
        "releases_url": f"{api}/releases{{/id}}",
        "deployments_url": f"{api}/deployments",
        "created_at": created_at,
        "updated_at": created_at,
        "pushed_at": created_at,
        "git_url": f"git://{site.host}/{full_name}.git",
        "ssh_url": f"git@{site.host}:{full_name}.git",
        "clone_url": f"{html}.git",
        "svn_url": html,
        "homepage": None,
        "size": 0,
        "stargazers_count": 0,
        "watchers_count": 0,
        "language": None,
        "has_issues": True,
        "has_projects": True,
        "has_downloads": True,
        "has_wiki": True,
        "has_pages": False,
        "has_discussions": False,
        "forks_count": 0,
        "mirror_url": None,
        "archived": False,
        "disabled": False,
        "open_issues_count": 0,
        "license": None,
        "allow_forking": True,
        "is_template": False,
        "web_commit_signoff_required": False,
        "topics": [],
        "custom_properties": {},
        "visibility": "private" if private else "public",
        "forks": 0,
        "open_issues": 0,
        "watchers": 0,
        "default_branch": default_branch,
        "network_count": 0,
        "subscribers_count": 0,
    }


def fill_repository(value: Any, *, default_branch: str = "main", site: Site = GITHUB) -> Any:
    """A partial repository (``{"full_name", ...}``) completed as :func:`repository`; fields given win.

    Its ``owner`` is completed too. Anything without an ``owner/name`` ``full_name`` is returned as it is.
    """
    if not isinstance(value, Mapping):
        return value
    full_name = value.get("full_name")
    if not isinstance(full_name, str) or full_name.count("/") != 1:
        return value
    given_owner = value.get("owner") if isinstance(value.get("owner"), Mapping) else {}
    base = repository(
        full_name,
        id=value.get("id"),
        private=value.get("private") is True,
        owner_type=str(given_owner.get("type") or "User"),
        default_branch=str(value.get("default_branch") or default_branch),
        site=site,
    )
    out = {**base, **value}
    out["owner"] = fill_user({**base["owner"], **given_owner}, site=site)
    if "visibility" not in value:
        out["visibility"] = "private" if out.get("private") is True else "public"
    return out


def _unknown(given: Any, default: Any, key: str) -> bool:
    """True when a bundle's ``given`` value only says it does not know (``null`` for a field that has a default, ``""`` for a URL)."""
    return (given is None and default is not None) or (given == "" and key.endswith("url"))


def _ref(side: Mapping[str, Any], repo: Any, default_ref: str, site: Site) -> dict[str, Any]:
    """A pull request's ``head`` or ``base``: ``label``, ``ref``, ``sha``, ``user``, ``repo``."""
    ref = str(side.get("ref") or default_ref)
    owner = repo.get("owner") if isinstance(repo, Mapping) else None
    login = owner.get("login") if isinstance(owner, Mapping) else None
    out = {k: v for k, v in side.items() if v is not None}
    out.setdefault("ref", ref)
    out.setdefault("sha", "0" * 40)
    out["repo"] = repo
    if login is not None:
        out.setdefault("label", f"{login}:{ref}")
        out["user"] = fill_user(side.get("user") or owner, site=site)
    return out


def pull_request(
    pull: Mapping[str, Any],
    repo: Mapping[str, Any],
    *,
    files: Sequence[Mapping[str, Any]] | None = None,
    review_comments: int | None = None,
    now: str = EPOCH,
    site: Site = GITHUB,
) -> dict[str, Any]:
    """A pull request as "Get a pull request" returns it (the ``pull-request`` schema), from a partial one.

    ``repo`` is its base repository, complete (:func:`repository`); ``files`` (``[{additions,
    deletions}]``) give ``additions``/``deletions``/``changed_files`` when the pull request does
    not; ``now`` dates one that gives no time at all. ``merged`` follows ``merged_at``; a merged
    pull request is ``closed``. Raises :class:`KeyError` when ``pull`` has no ``number``.
    """
    number = pull["number"]
    full_name = repo["full_name"]
    api = f"{site.api}/repos/{full_name}"
    html = f"{site.html}/{full_name}/pull/{number}"
    pid = pull.get("id") if isinstance(pull.get("id"), int) else stable_id("pull", full_name, number)
    merged_at = pull.get("merged_at")
    if merged_at is None and pull.get("merged") is True:
        merged_at = pull.get("closed_at") or pull.get("updated_at") or now
    created = pull.get("created_at") or merged_at or pull.get("updated_at") or now
    closed = pull.get("closed_at") or merged_at
    state = pull.get("state") or ("closed" if closed else "open")
    listed = list(files or ())
    base_side = pull.get("base") if isinstance(pull.get("base"), Mapping) else {}
    head_side = pull.get("head") if isinstance(pull.get("head"), Mapping) else {}
    base_repo = {**repo, **{k: v for k, v in (base_side.get("repo") or {}).items() if k in ("description", "homepage")}}
    head_repo = head_side["repo"] if "repo" in head_side else base_repo
    if isinstance(head_repo, Mapping):
        head_repo = fill_repository(head_repo, site=site) if head_repo.get("full_name") != full_name else base_repo
    base = _ref(base_side, base_repo, str(repo.get("default_branch") or "main"), site)
    head = _ref(head_side, head_repo, f"pull-{number}", site)
    head_sha = str(head["sha"])
    out: dict[str, Any] = {
        "url": f"{api}/pulls/{number}",
        "id": pid,
        "node_id": node_id("PullRequest", pid),
        "html_url": html,
        "diff_url": f"{html}.diff",
        "patch_url": f"{html}.patch",
        "issue_url": f"{api}/issues/{number}",
        "number": number,
        "state": state,
        "locked": False,
        "title": "",
        "user": None,
        "body": None,
        "created_at": created,
        "updated_at": pull.get("updated_at") or closed or created,
        "closed_at": closed,
        "merged_at": merged_at,
        "merge_commit_sha": None,
        "assignee": None,
        "assignees": [],
        "requested_reviewers": [],
        "requested_teams": [],
        "labels": [],
        "milestone": None,
        "draft": False,
        "commits_url": f"{api}/pulls/{number}/commits",
        "review_comments_url": f"{api}/pulls/{number}/comments",
        "review_comment_url": f"{api}/pulls/comments{{/number}}",
        "comments_url": f"{api}/issues/{number}/comments",
        "statuses_url": f"{api}/statuses/{head_sha}",
        "author_association": "CONTRIBUTOR",
        "auto_merge": None,
        "active_lock_reason": None,
        "mergeable": None,
        "rebaseable": None,
        "mergeable_state": "unknown",
        "merged_by": None,
        "comments": 0,
        "review_comments": review_comments or 0,
        "maintainer_can_modify": False,
        "commits": 1,
        "additions": sum(int(f.get("additions") or 0) for f in listed),
        "deletions": sum(int(f.get("deletions") or 0) for f in listed),
        "changed_files": len(listed),
    }
    # A null where GitHub always has a value, or an empty URL, is a bundle not knowing: the default stands.
    out.update(
        {k: v for k, v in pull.items() if k not in ("base", "head") and not _unknown(v, out.get(k), k)}
    )
    out.update(
        merged_at=merged_at, closed_at=closed, state=state, merged=merged_at is not None, base=base, head=head,
        user=fill_user(out["user"] or {"login": "ghost", "type": "User"}, site=site),
        merged_by=fill_user(out["merged_by"], site=site),
        assignee=fill_user(out["assignee"], site=site),
        assignees=[fill_user(u, site=site) for u in out["assignees"] or ()],
        labels=[fill_label(item, full_name, site=site) for item in out["labels"] or ()],
        requested_reviewers=[fill_user(u, site=site) for u in out["requested_reviewers"] or ()],
    )  # fmt: skip
    out["_links"] = {
        "self": {"href": out["url"]},
        "html": {"href": out["html_url"]},
        "issue": {"href": out["issue_url"]},
        "comments": {"href": out["comments_url"]},
        "review_comments": {"href": out["review_comments_url"]},
        "review_comment": {"href": out["review_comment_url"]},
        "commits": {"href": out["commits_url"]},
        "statuses": {"href": out["statuses_url"]},
    }
    return out


def simple_pull_request(pull: Mapping[str, Any]) -> dict[str, Any]:
    """A complete pull request as "List pull requests" and the review webhooks carry it: without
    ``merged``, ``mergeable``, ``additions``... (:data:`FULL_ONLY_PULL_FIELDS`); ``merged_at`` tells a merge."""
    return {k: v for k, v in pull.items() if k not in FULL_ONLY_PULL_FIELDS}


def reactions(url: str, counts: Mapping[str, int] | None = None) -> dict[str, Any]:
    """A reaction roll-up (``reaction-rollup``): ``url``, ``total_count`` and one count per content."""
    known = {key: int((counts or {}).get(key, 0)) for key in REACTION_KEYS}
    return {"url": url, "total_count": sum(known.values()), **known}


def label(
    id: int, name: str, color: str, description: str | None, repo: str, *, default: bool = False, site: Site = GITHUB  # noqa: A002
) -> dict[str, Any]:
    """A label of repository ``repo`` (``owner/name``) as GitHub returns it (the ``label`` schema)."""
    return {
        "id": id,
        "node_id": node_id("Label", id),
        "url": f"{site.api}/repos/{repo}/labels/{quote(name)}",
        "name": name,
        "color": color,
        "default": default,
        "description": description,
    }


def fill_label(value: Any, repo: str, *, site: Site = GITHUB) -> Any:
    """A partial label (``{"name"}`` or a bare name) completed as :func:`label`; fields given win."""
    if isinstance(value, str):
        value = {"name": value}
    if not isinstance(value, Mapping) or not isinstance(value.get("name"), str):
        return value
    lid = value.get("id") if isinstance(value.get("id"), int) else stable_id("label", repo, value["name"])
    color = str(value.get("color") or "ededed")
    return {**label(lid, value["name"], color, value.get("description"), repo, site=site), **value}


def issue_of_pull(
    pull: Mapping[str, Any], *, comments: int = 0, reaction_counts: Mapping[str, int] | None = None, site: Site = GITHUB
) -> dict[str, Any]:
    """The issue of a complete pull request (:func:`pull_request`), as "Get an issue" and the
    ``issue_comment`` webhook carry it, with ``pull_request`` ``{url, html_url, diff_url, patch_url, merged_at}``."""
    issue_url = pull["issue_url"]
    return {
        "url": issue_url,
        "repository_url": issue_url.rsplit("/issues/", 1)[0],
        "labels_url": f"{issue_url}/labels{{/name}}",
        "comments_url": f"{issue_url}/comments",
        "events_url": f"{issue_url}/events",
        "html_url": pull["html_url"],
        "id": pull["id"],
        "node_id": pull["node_id"],
        "number": pull["number"],
        "title": pull["title"],
        "user": pull["user"],
        "labels": list(pull["labels"]),
        "state": pull["state"],
        "state_reason": None,
        "locked": pull["locked"],
        "assignee": pull["assignee"],
        "assignees": list(pull["assignees"]),
        "milestone": pull["milestone"],
        "comments": comments,
        "created_at": pull["created_at"],
        "updated_at": pull["updated_at"],
        "closed_at": pull["closed_at"],
        "author_association": pull["author_association"],
        "active_lock_reason": pull["active_lock_reason"],
        "draft": pull.get("draft", False),
        "pull_request": {
            "url": pull["url"],
            "html_url": pull["html_url"],
            "diff_url": pull["diff_url"],
            "patch_url": pull["patch_url"],
            "merged_at": pull["merged_at"],
        },
        "body": pull["body"],
        "reactions": reactions(f"{issue_url}/reactions", reaction_counts),
        "timeline_url": f"{issue_url}/timeline",
        "performed_via_github_app": None,
    }


def issue_comment(
    id: int,  # noqa: A002
    repo: str,
    number: int,
    author: Mapping[str, Any],
    body: str,
    *,
    created_at: str,
    updated_at: str,
    reaction_counts: Mapping[str, int] | None = None,
    author_association: str = "NONE",
    app: Mapping[str, Any] | None = None,
    site: Site = GITHUB,
) -> dict[str, Any]:
    """An issue comment (the ``issue-comment`` schema, and the ``issue_comment`` webhook's ``comment``).

    ``author`` is a complete user; ``app`` the GitHub App that wrote it (``performed_via_github_app``), if one did.
    """
    api = f"{site.api}/repos/{repo}"
    url = f"{api}/issues/comments/{id}"
    return {
        "url": url,
        "html_url": f"{site.html}/{repo}/pull/{number}#issuecomment-{id}",
        "issue_url": f"{api}/issues/{number}",
        "id": id,
        "node_id": node_id("IssueComment", id),
        "user": dict(author),
        "created_at": created_at,
        "updated_at": updated_at,
        "author_association": author_association,
        "body": body,
        "reactions": reactions(f"{url}/reactions", reaction_counts),
        "performed_via_github_app": dict(app) if app is not None else None,
    }


def fill_file(value: Any, repo: str, ref: str, *, site: Site = GITHUB) -> Any:
    """A partial changed file of "List pull requests files" (``diff-entry``) completed: ``sha``,
    ``blob_url``, ``raw_url``, ``contents_url``, counts. Fields given win; a non-object is returned as it is."""
    if not isinstance(value, Mapping) or not isinstance(value.get("filename"), str):
        return value
    path = quote(value["filename"])
    additions, deletions = int(value.get("additions") or 0), int(value.get("deletions") or 0)
    return {
        "sha": hashlib.sha1(f"{repo}\0{ref}\0{value['filename']}".encode()).hexdigest(),  # noqa: S324 - an id, not security
        "status": "modified",
        "additions": additions,
        "deletions": deletions,
        "changes": additions + deletions,
        "blob_url": f"{site.html}/{repo}/blob/{ref}/{path}",
        "raw_url": f"{site.html}/{repo}/raw/{ref}/{path}",
        "contents_url": f"{site.api}/repos/{repo}/contents/{path}?ref={ref}",
        **value,
    }


def fill_review(value: Any, pull: Mapping[str, Any], *, site: Site = GITHUB) -> Any:
    """A partial review of complete pull request ``pull`` completed as "List reviews for a pull
    request" and the ``pull_request_review`` webhook carry it (``pull-request-review``)."""
    if not isinstance(value, Mapping) or not isinstance(value.get("id"), int):
        return value
    html = f"{pull['html_url']}#pullrequestreview-{value['id']}"
    out = {
        "id": value["id"],
        "node_id": node_id("PullRequestReview", value["id"]),
        "user": None,
        "body": "",
        "state": "COMMENTED",
        "html_url": html,
        "pull_request_url": pull["url"],
        "author_association": "NONE",
        "_links": {"html": {"href": html}, "pull_request": {"href": pull["url"]}},
        "submitted_at": pull["updated_at"],
        "commit_id": pull["head"]["sha"],
        **value,
    }
    out["user"] = fill_user(out["user"] or {"login": "ghost", "type": "User"}, site=site)
    return out


def fill_review_comment(value: Any, pull: Mapping[str, Any], *, site: Site = GITHUB) -> Any:
    """A partial review comment on complete pull request ``pull`` completed as "List review comments
    on a pull request" and the ``pull_request_review_comment`` webhook carry it."""
    if not isinstance(value, Mapping) or not isinstance(value.get("id"), int):
        return value
    cid = value["id"]
    url = f"{pull['url'].rsplit('/pulls/', 1)[0]}/pulls/comments/{cid}"
    html = f"{pull['html_url']}#discussion_r{cid}"
    line = value.get("line") if isinstance(value.get("line"), int) else 1
    out = {
        "url": url,
        "pull_request_review_id": None,
        "id": cid,
        "node_id": node_id("PullRequestReviewComment", cid),
        "diff_hunk": "@@ -1 +1 @@",
        "path": "",
        "position": line,
        "original_position": line,
        "commit_id": pull["head"]["sha"],
        "original_commit_id": pull["head"]["sha"],
        "user": None,
        "body": "",
        "created_at": pull["updated_at"],
        "updated_at": pull["updated_at"],
        "html_url": html,
        "pull_request_url": pull["url"],
        "author_association": "NONE",
        "_links": {"self": {"href": url}, "html": {"href": html}, "pull_request": {"href": pull["url"]}},
        "start_line": None,
        "original_start_line": None,
        "start_side": None,
        "line": line,
        "original_line": line,
        "side": "RIGHT",
        "subject_type": "line",
        "reactions": reactions(f"{url}/reactions"),
        **value,
    }
    out["user"] = fill_user(out["user"] or {"login": "ghost", "type": "User"}, site=site)
    return out


def installation(
    id: int,  # noqa: A002
    account: Mapping[str, Any],
    *,
    app_id: int,
    app_slug: str,
    permissions: Mapping[str, str],
    events: Sequence[str],
    repository_selection: str,
    created_at: str,
    suspended_at: str | None = None,
    site: Site = GITHUB,
) -> dict[str, Any]:
    """An installation of an app ("Get an installation for the authenticated app", the ``installation``
    webhook's ``installation``); ``account`` is the complete user or organization it is installed on,
    ``suspended_at`` when it was suspended (None: it is not)."""
    return {
        "id": id,
        "node_id": node_id("IntegrationInstallation", id),
        "client_id": f"Iv1.{app_id:016x}",
        "account": dict(account),
        "repository_selection": repository_selection,
        "access_tokens_url": f"{site.api}/app/installations/{id}/access_tokens",
        "repositories_url": f"{site.api}/installation/repositories",
        "html_url": f"{site.html}/settings/installations/{id}",
        "app_id": app_id,
        "app_slug": app_slug,
        "target_id": account["id"],
        "target_type": account["type"],
        "permissions": dict(permissions),
        "events": list(events),
        "created_at": created_at,
        "updated_at": created_at,
        "single_file_name": None,
        "has_multiple_single_files": False,
        "single_file_paths": [],
        "suspended_at": suspended_at,
        "suspended_by": None,
    }
