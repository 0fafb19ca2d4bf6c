"""The GitHub REST endpoints the sandbox answers.

Each handler names the GitHub docs page whose shape it follows and the credential it
needs (``@needs("app")`` for an app JWT, ``@needs("installation")`` for an installation
access token); :mod:`bot.sandbox.server` checks the credential, counts the rate limit and
records the request before a handler runs. The answers are complete objects as GitHub's
REST description has them (:mod:`bot.github_objects`).
"""

from __future__ import annotations

import asyncio
from typing import Any

from aiohttp import web

from bot.sandbox.auth import Caller
from bot.sandbox.errors import ApiError, not_found, validation_failed
from bot.sandbox.handling import (
    CALLER,
    ISSUES_WRITE,
    Handler,
    author_of,
    json_response,
    needs,
    number_of,
    paged,
    permission,
    read_body,
    repo_args,
    state_of,
)
from bot.github_objects import simple_pull_request
from bot.sandbox.paging import paginate
from bot.sandbox.resources.apps import DOC_REPO_INSTALLATION
from bot.sandbox.state import SandboxState, iso, read_git_file


# ----- apps and installations ---------------------------------------------------


@needs("app")
async def get_app(request: web.Request) -> web.Response:
    """GET /app ("Get the authenticated app")."""
    return json_response(state_of(request).app_json())


@needs("app")
async def list_installations(request: web.Request) -> web.Response:
    """GET /app/installations ("List installations for the authenticated app"), paginated."""
    state = state_of(request)
    return paged(request, [state.installation_json(i) for i in state.installations.values()])


@needs("app")
async def get_installation(request: web.Request) -> web.Response:
    """GET /app/installations/{installation_id} ("Get an installation for the authenticated app"); 404 when unknown."""
    state = state_of(request)
    return json_response(state.installation_json(state.installation(int(request.match_info["installation_id"]))))


@needs("app")
async def create_access_token(request: web.Request) -> web.Response:
    """POST /app/installations/{installation_id}/access_tokens → 201 ``{token, expires_at, ...}``.

    ("Create an installation access token for an app"); 404 for an unknown installation.
    The token reaches the repositories of that installation only (see
    :meth:`SandboxState.check_reach`).
    """
    state = state_of(request)
    token = state.issue_token(int(request.match_info["installation_id"]))
    installation = state.installation(token.installation_id)
    return json_response(
        {
            "token": token.token,
            "expires_at": iso(token.expires_at),
            "permissions": state.installation_json(installation)["permissions"],
            "repository_selection": installation.selection,
        },
        status=201,
    )


@needs("app")
async def get_repo_installation(request: web.Request) -> web.Response:
    """GET /repos/{owner}/{repo}/installation ("Get a repository installation for the authenticated app").

    The installation holding the repository; 404 when the repository is unknown or
    the app is not installed on it.
    """
    state = state_of(request)
    record = state.repo(*repo_args(request))
    installation = state.installation_of(record.full_name)
    if installation is None:
        raise not_found(DOC_REPO_INSTALLATION)
    return json_response(state.installation_json(installation, record.owner))


@needs("installation")
async def list_installation_repos(request: web.Request) -> web.Response:
    """GET /installation/repositories ("List repositories accessible to the app installation"):
    the repositories of the token's installation, paginated."""
    state = state_of(request)
    caller: Caller = request[CALLER]
    repos = [state.repo_json(r) for r in state.installation_repos(caller.installation_id or 0)]
    base = str(request.url.with_query(None))
    page, link = paginate(repos, base, request.query_string)
    return json_response({"total_count": len(repos), "repositories": page}, headers={"Link": link} if link else None)


@needs("installation")
async def revoke_own_token(request: web.Request) -> web.Response:
    """DELETE /installation/token → 204 ("Revoke an installation access token")."""
    _, _, credential = request.headers.get("Authorization", "").partition(" ")
    state_of(request).revoke_token(credential.strip())
    return web.Response(status=204)


# ----- repositories and pull requests -------------------------------------------


@needs("installation")
async def get_repo(request: web.Request) -> web.Response:
    """GET /repos/{owner}/{repo} ("Get a repository")."""
    state = state_of(request)
    return json_response(state.repo_json(state.repo(*repo_args(request))))


#: ``sort`` values of "List pull requests" and the field each orders by.
_PULL_SORTS = {"created": "created_at", "updated": "updated_at", "popularity": "comments", "long-running": "created_at"}
_LIST_PULLS_DOCS = "https://docs.github.com/rest/pulls/pulls#list-pull-requests"


@needs("installation")
async def list_pulls(request: web.Request) -> web.Response:
    """GET /repos/{owner}/{repo}/pulls ("List pull requests").

    ``state`` open (default), closed or all; ``sort`` created (default), updated,
    popularity or long-running; ``direction`` asc or desc (default desc, or asc for
    long-running); ``per_page``/``page`` with a ``Link`` header. Items lack the
    fields of the "pull-request-simple" schema's omissions (``merged``,
    ``changed_files``...); ``merged_at`` tells merged from closed. 422 for values
    outside those sets, as GitHub's validation answers.
    """
    state = state_of(request)
    record = state.repo(*repo_args(request))
    wanted = request.query.get("state", "open")
    sort = request.query.get("sort", "created")
    direction = request.query.get("direction", "asc" if sort == "long-running" else "desc")
    for field_name, value, allowed in (
        ("state", wanted, ("open", "closed", "all")),
        ("sort", sort, tuple(_PULL_SORTS)),
        ("direction", direction, ("asc", "desc")),
    ):
        if value not in allowed:
            raise validation_failed("PullRequest", field_name, "invalid", documentation_url=_LIST_PULLS_DOCS,
                                    message=f"{field_name} must be one of {', '.join(allowed)}", value=value)
    key = _PULL_SORTS[sort]
    numbers = [
        number for number in record.pulls
        if wanted == "all" or record.pulls[number]["pull"].get("state", "closed") == wanted
    ]
    numbers.sort(key=lambda n: (str(record.pulls[n]["pull"].get(key) or ""), n), reverse=direction == "desc")
    return paged(request, [simple_pull_request(state.pull_json(record, number)) for number in numbers])


@needs("installation")
async def get_pull(request: web.Request) -> web.Response:
    """GET /repos/{owner}/{repo}/pulls/{pull_number} ("Get a pull request")."""
    state = state_of(request)
    record, _ = state.pull(*repo_args(request), number_of(request))
    return json_response(state.pull_json(record, number_of(request)))


@needs("installation")
async def list_pull_files(request: web.Request) -> web.Response:
    """GET .../pulls/{pull_number}/files ("List pull requests files"): paginated, at most 3000 files."""
    state = state_of(request)
    record, _ = state.pull(*repo_args(request), number_of(request))
    return paged(request, state.files_of(record, number_of(request)))


@needs("installation")
async def list_pull_reviews(request: web.Request) -> web.Response:
    """GET .../pulls/{pull_number}/reviews ("List reviews for a pull request"), paginated."""
    state = state_of(request)
    record, _ = state.pull(*repo_args(request), number_of(request))
    return paged(request, state.reviews_of(record, number_of(request)))


@needs("installation")
async def list_pull_review_comments(request: web.Request) -> web.Response:
    """GET .../pulls/{pull_number}/comments ("List review comments on a pull request"), paginated."""
    state = state_of(request)
    record, _ = state.pull(*repo_args(request), number_of(request))
    return paged(request, state.review_comments_of(record, number_of(request)))


@needs("installation")
async def get_issue(request: web.Request) -> web.Response:
    """GET /repos/{owner}/{repo}/issues/{issue_number} ("Get an issue"), for a served pull request."""
    state = state_of(request)
    number = number_of(request)
    record, _ = state.pull(*repo_args(request), number)
    return json_response(state.issue_json(record, number))


# ----- issue comments and reactions ---------------------------------------------


@needs("installation")
async def list_comments(request: web.Request) -> web.Response:
    """GET /repos/{owner}/{repo}/issues/{issue_number}/comments ("List issue comments"), oldest first."""
    state = state_of(request)
    comments = state.comments_on(*repo_args(request), number_of(request))
    return paged(request, [state.comment_json(c) for c in comments])


@needs("installation")
@permission(*ISSUES_WRITE)
async def create_comment(request: web.Request) -> web.Response:
    """POST .../issues/{issue_number}/comments ``{"body"}`` → 201 ("Create an issue comment")."""
    state = state_of(request)
    data = await read_body(request)
    user, user_type = author_of(request)
    body = data.get("body") if isinstance(data, dict) else None
    comment = state.create_comment(*repo_args(request), number_of(request), body, user=user, user_type=user_type)
    return json_response(state.comment_json(comment), status=201, headers={"Location": state.comment_json(comment)["url"]})


@needs("installation")
async def get_comment(request: web.Request) -> web.Response:
    """GET /repos/{owner}/{repo}/issues/comments/{comment_id} ("Get an issue comment")."""
    state = state_of(request)
    return json_response(state.comment_json(state.comment(*repo_args(request), number_of(request, "comment_id"))))


@needs("installation")
@permission(*ISSUES_WRITE)
async def edit_comment(request: web.Request) -> web.Response:
    """PATCH /repos/{owner}/{repo}/issues/comments/{comment_id} ``{"body"}`` ("Update an issue comment")."""
    state = state_of(request)
    data = await read_body(request)
    body = data.get("body") if isinstance(data, dict) else None
    comment = state.edit_comment(*repo_args(request), number_of(request, "comment_id"), body)
    return json_response(state.comment_json(comment))


@needs("installation")
@permission(*ISSUES_WRITE)
async def delete_comment(request: web.Request) -> web.Response:
    """DELETE /repos/{owner}/{repo}/issues/comments/{comment_id} → 204 ("Delete an issue comment")."""
    state_of(request).delete_comment(*repo_args(request), number_of(request, "comment_id"))
    return web.Response(status=204)


@needs("installation")
async def list_reactions(request: web.Request) -> web.Response:
    """GET .../issues/comments/{comment_id}/reactions ("List reactions for an issue comment")."""
    state = state_of(request)
    comment = state.comment(*repo_args(request), number_of(request, "comment_id"))
    return paged(request, [state.reaction_json(r) for r in state.reactions.get(comment.id, [])])


@needs("installation")
@permission(*ISSUES_WRITE)
async def create_reaction(request: web.Request) -> web.Response:
    """POST .../issues/comments/{comment_id}/reactions ``{"content"}`` → 201 new, 200 existing.

    ("Create reaction for an issue comment").
    """
    return await _react(request, state_of(request).add_reaction)


@needs("installation")
@permission(("pull_requests", "write"))
async def reply_to_review_comment(request: web.Request) -> web.Response:
    """POST .../pulls/{pull_number}/comments/{comment_id}/replies ``{"body"}`` → 201 ("Create a reply for a review comment")."""
    state = state_of(request)
    data = await read_body(request)
    user, user_type = author_of(request)
    body = data.get("body") if isinstance(data, dict) else None
    comment = state.create_review_comment(
        *repo_args(request), number_of(request), body, user=user, user_type=user_type,
        in_reply_to=number_of(request, "comment_id"),
    )
    record = state.repo(*repo_args(request))
    answer = state.review_comment_json(record, number_of(request), comment)
    return json_response(answer, status=201, headers={"Location": answer["url"]})


@needs("installation")
async def get_review_comment(request: web.Request) -> web.Response:
    """GET /repos/{owner}/{repo}/pulls/comments/{comment_id} ("Get a review comment for a pull request")."""
    state = state_of(request)
    record, number, comment = state.review_comment(*repo_args(request), number_of(request, "comment_id"))
    return json_response(state.review_comment_json(record, number, comment))


@needs("installation")
@permission(("pull_requests", "write"))
async def create_review_reaction(request: web.Request) -> web.Response:
    """POST .../pulls/comments/{comment_id}/reactions ``{"content"}`` → 201 new, 200 existing.

    ("Create reaction for a pull request review comment").
    """
    return await _react(request, state_of(request).add_review_reaction)


async def _react(request: web.Request, add: Any) -> web.Response:
    """Answer a "Create reaction" request with ``add`` (the state's method for that kind of comment)."""
    data = await read_body(request)
    user, user_type = author_of(request)
    content = data.get("content") if isinstance(data, dict) else None
    reaction, created = add(*repo_args(request), number_of(request, "comment_id"), content, user=user, user_type=user_type)
    return json_response(state_of(request).reaction_json(reaction), status=201 if created else 200)


# ----- labels ---------------------------------------------------------------------


@needs("installation")
async def list_repo_labels(request: web.Request) -> web.Response:
    """GET /repos/{owner}/{repo}/labels ("List labels for a repository"), paginated."""
    state = state_of(request)
    record = state.repo(*repo_args(request))
    return paged(request, [state.label_json(record, label) for label in state.repo_labels(*repo_args(request))])


@needs("installation")
async def get_label(request: web.Request) -> web.Response:
    """GET /repos/{owner}/{repo}/labels/{name} ("Get a label"); the name is URL-decoded."""
    state = state_of(request)
    record = state.repo(*repo_args(request))
    return json_response(state.label_json(record, state.label(*repo_args(request), request.match_info["name"])))


@needs("installation")
@permission(*ISSUES_WRITE)
async def create_label(request: web.Request) -> web.Response:
    """POST /repos/{owner}/{repo}/labels ``{"name", "color", "description"}`` → 201 ("Create a label")."""
    state = state_of(request)
    record = state.repo(*repo_args(request))
    label = state.create_label(*repo_args(request), await read_body(request))
    return json_response(state.label_json(record, label), status=201)


@needs("installation")
@permission(*ISSUES_WRITE)
async def update_label(request: web.Request) -> web.Response:
    """PATCH /repos/{owner}/{repo}/labels/{name} ``{"new_name"?, "color"?, "description"?}`` ("Update a label").

    404 when the label does not exist, 422 for a bad colour, name or description.
    """
    state = state_of(request)
    record = state.repo(*repo_args(request))
    label = state.update_label(*repo_args(request), request.match_info["name"], await read_body(request))
    return json_response(state.label_json(record, label))


def _labels_answer(state: SandboxState, request: web.Request, labels: list[Any]) -> web.Response:
    record = state.repo(*repo_args(request))
    return json_response([state.label_json(record, label) for label in labels])


@needs("installation")
async def list_issue_labels(request: web.Request) -> web.Response:
    """GET /repos/{owner}/{repo}/issues/{issue_number}/labels ("List labels for an issue")."""
    state = state_of(request)
    record = state.repo(*repo_args(request))
    labels = state.labels_on(*repo_args(request), number_of(request))
    return paged(request, [state.label_json(record, label) for label in labels])


@needs("installation")
@permission(*ISSUES_WRITE)
async def add_issue_labels(request: web.Request) -> web.Response:
    """POST .../issues/{issue_number}/labels ``{"labels": [...]}`` ("Add labels to an issue")."""
    state = state_of(request)
    user, user_type = author_of(request)
    labels = state.add_labels(
        *repo_args(request), number_of(request), await read_body(request), actor=user, actor_type=user_type
    )
    return _labels_answer(state, request, labels)


@needs("installation")
@permission(*ISSUES_WRITE)
async def set_issue_labels(request: web.Request) -> web.Response:
    """PUT .../issues/{issue_number}/labels ``{"labels": [...]}`` ("Set labels for an issue")."""
    state = state_of(request)
    user, user_type = author_of(request)
    labels = state.add_labels(
        *repo_args(request), number_of(request), await read_body(request), replace=True, actor=user, actor_type=user_type
    )
    return _labels_answer(state, request, labels)


@needs("installation")
@permission(*ISSUES_WRITE)
async def remove_issue_label(request: web.Request) -> web.Response:
    """DELETE .../issues/{issue_number}/labels/{name} ("Remove a label from an issue"); 404 when absent."""
    state = state_of(request)
    user, user_type = author_of(request)
    labels = state.remove_label(
        *repo_args(request), number_of(request), request.match_info["name"], actor=user, actor_type=user_type
    )
    return _labels_answer(state, request, labels)


@needs("installation")
async def list_issue_events(request: web.Request) -> web.Response:
    """GET /repos/{owner}/{repo}/issues/{issue_number}/events ("List issue events"), paginated.

    Only ``labeled`` and ``unlabeled`` events, oldest first; the actor of a change
    made with an installation token is the app's bot user.
    """
    state = state_of(request)
    return paged(request, [state.event_json(e) for e in state.events_on(*repo_args(request), number_of(request))])


# ----- collaborators and contents -------------------------------------------------


@needs("installation")
async def get_permission(request: web.Request) -> web.Response:
    """GET /repos/{owner}/{repo}/collaborators/{username}/permission ("Get repository permissions for a user")."""
    return json_response(state_of(request).permission_json(*repo_args(request), request.match_info["username"]))


@needs("installation")
@permission(("contents", "read"))
async def get_content(request: web.Request) -> web.Response:
    """GET /repos/{owner}/{repo}/contents/{path}?ref= ("Get repository content"), files only.

    Serves files set through ``POST /_sandbox/files``, then, for a repository read
    from a local git checkout, the file at ``ref`` (default: the default branch).
    404 when missing. As on GitHub, files over 1 MB come with ``encoding: "none"``
    and empty ``content``, and ``Accept: application/vnd.github.raw+json`` gets the
    bytes themselves.
    """
    state = state_of(request)
    record = state.repo(*repo_args(request))
    path = request.match_info["path"]
    ref = request.query.get("ref") or None
    data = state.stored_file(record, path, ref)
    if data is None and record.git_dir is not None:
        data = await asyncio.to_thread(read_git_file, record.git_dir, ref or "HEAD", path.strip("/"))
    if data is None:
        raise ApiError(
            404, "Not Found", documentation_url="https://docs.github.com/rest/repos/contents#get-repository-content"
        )
    if "vnd.github.raw" in request.headers.get("Accept", ""):
        return web.Response(body=data, headers={"Content-Type": "application/vnd.github.raw+json; charset=utf-8"})
    return json_response(state.content_json(record, path, ref or record.default_branch, data))


_REPO = "/repos/{owner}/{repo}"

GITHUB_ROUTES: list[tuple[str, str, Handler]] = [
    ("GET", "/app", get_app),
    ("GET", "/app/installations", list_installations),
    ("GET", r"/app/installations/{installation_id:\d+}", get_installation),
    ("POST", r"/app/installations/{installation_id:\d+}/access_tokens", create_access_token),
    ("GET", "/installation/repositories", list_installation_repos),
    ("DELETE", "/installation/token", revoke_own_token),
    ("GET", _REPO, get_repo),
    ("GET", _REPO + "/installation", get_repo_installation),
    ("GET", _REPO + "/pulls", list_pulls),
    ("GET", _REPO + r"/pulls/{number:\d+}", get_pull),
    ("GET", _REPO + r"/pulls/{number:\d+}/files", list_pull_files),
    ("GET", _REPO + r"/pulls/{number:\d+}/reviews", list_pull_reviews),
    ("GET", _REPO + r"/pulls/{number:\d+}/comments", list_pull_review_comments),
    ("POST", _REPO + r"/pulls/{number:\d+}/comments/{comment_id:\d+}/replies", reply_to_review_comment),
    ("GET", _REPO + r"/pulls/comments/{comment_id:\d+}", get_review_comment),
    ("POST", _REPO + r"/pulls/comments/{comment_id:\d+}/reactions", create_review_reaction),
    ("GET", _REPO + r"/issues/{number:\d+}", get_issue),
    ("GET", _REPO + r"/issues/{number:\d+}/comments", list_comments),
    ("POST", _REPO + r"/issues/{number:\d+}/comments", create_comment),
    ("GET", _REPO + r"/issues/comments/{comment_id:\d+}", get_comment),
    ("PATCH", _REPO + r"/issues/comments/{comment_id:\d+}", edit_comment),
    ("DELETE", _REPO + r"/issues/comments/{comment_id:\d+}", delete_comment),
    ("GET", _REPO + r"/issues/comments/{comment_id:\d+}/reactions", list_reactions),
    ("POST", _REPO + r"/issues/comments/{comment_id:\d+}/reactions", create_reaction),
    ("GET", _REPO + "/labels", list_repo_labels),
    ("POST", _REPO + "/labels", create_label),
    ("GET", _REPO + "/labels/{name:.+}", get_label),
    ("PATCH", _REPO + "/labels/{name:.+}", update_label),
    ("GET", _REPO + r"/issues/{number:\d+}/labels", list_issue_labels),
    ("POST", _REPO + r"/issues/{number:\d+}/labels", add_issue_labels),
    ("PUT", _REPO + r"/issues/{number:\d+}/labels", set_issue_labels),
    ("DELETE", _REPO + r"/issues/{number:\d+}/labels/{name:.+}", remove_issue_label),
    ("GET", _REPO + r"/issues/{number:\d+}/events", list_issue_events),
    ("GET", _REPO + "/collaborators/{username}/permission", get_permission),
    ("GET", _REPO + "/contents/{path:.+}", get_content),
]
