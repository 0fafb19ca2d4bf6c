"""The sandbox's own control endpoints under ``/_sandbox/``: set up and inspect what it serves.

Not GitHub's API: no credential, no rate limit, not in the request log. Tests and
people use them to add pull requests, comments (and, with a webhook, their delivery:
:mod:`bot.sandbox.hooks`), labels, collaborators, files, permissions, installations
and faults, and to read what the app did (``GET /_sandbox/state``).
"""

from __future__ import annotations

from aiohttp import web

from bot.sandbox.errors import ApiError, BundleError
from bot.sandbox.faults import parse_faults
from bot.sandbox.hooks import comment_payload
from bot.sandbox.hooks import deliver as deliver_hook
from bot.sandbox.handling import FAULTS, Handler
# Short local names for the helpers every control endpoint below calls.
from bot.sandbox.handling import json_response as _json
from bot.sandbox.handling import read_body as _body
from bot.sandbox.handling import state_of as _state
from bot.sandbox.state import iso


def _control_error(exc: Exception) -> ApiError:
    return ApiError(400, str(exc))


async def control_state(request: web.Request) -> web.Response:
    """GET /_sandbox/state: comments, labels, requests and reactions (see :meth:`SandboxState.snapshot`)."""
    return _json(_state(request).snapshot())


async def control_add_faults(request: web.Request) -> web.Response:
    """POST /_sandbox/faults with a list of faults (see :mod:`bot.sandbox.faults`) → 201 with those in force."""
    try:
        faults = parse_faults(await _body(request))
    except ValueError as exc:
        raise _control_error(exc) from exc
    book = request.app[FAULTS]
    book.add(faults)
    return _json({"faults": [f.describe() for f in book.faults]}, status=201)


async def control_list_faults(request: web.Request) -> web.Response:
    """GET /_sandbox/faults: the faults in force with their remaining ``times``."""
    return _json({"faults": [f.describe() for f in request.app[FAULTS].faults]})


async def control_clear_faults(request: web.Request) -> web.Response:
    """DELETE /_sandbox/faults → 204."""
    request.app[FAULTS].clear()
    return web.Response(status=204)


async def control_reset(request: web.Request) -> web.Response:
    """POST /_sandbox/reset → 204: forget comments, reactions, labels, requests and rate-limit counts."""
    _state(request).reset()
    return web.Response(status=204)


async def control_add_pull(request: web.Request) -> web.Response:
    """POST /_sandbox/pulls ``{"repo"?: "o/r", "bundle": {...}}`` → 201 ``{"repo", "number"}``."""
    data = await _body(request)
    if not isinstance(data, dict) or not isinstance(data.get("bundle"), dict):
        raise ApiError(400, 'expected {"repo": "owner/name", "bundle": {"pull": ..., "files": [...]}}')
    try:
        full_name = _state(request).add_bundle(data["bundle"], repo=data.get("repo") or None)
    except BundleError as exc:
        raise _control_error(exc) from exc
    return _json({"repo": full_name, "number": data["bundle"]["pull"]["number"]}, status=201)


async def control_get_pull(request: web.Request) -> web.Response:
    """GET /_sandbox/pulls/{owner}/{repo}/{number} → ``{"pull", "repository", "installation"}``: a served pull
    request ("Get a pull request"), its repository ("Get a repository") and the id of the installation
    holding it (``null`` when none does), without a token; 404 when not served."""
    state = _state(request)
    info = request.match_info
    record, _ = state.pull(info["owner"], info["repo"], int(info["number"]))
    holder = state.installation_of(record.full_name)
    return _json({
        "pull": state.pull_json(record, int(info["number"])),
        "repository": state.repo_json(record),
        "installation": holder.id if holder is not None else None,
    })  # fmt: skip


async def control_add_merged_pulls(request: web.Request) -> web.Response:
    """POST /_sandbox/merged-pulls ``{"repo", "count", "start"?, "files"?}`` → 201 ``{"repo", "numbers"}``.

    Serves ``count`` small merged pull requests numbered from ``start`` (default 1),
    merged one minute apart in number order (see ``SandboxState.add_merged_pulls``).
    """
    data = await _body(request)
    if not isinstance(data, dict) or not isinstance(data.get("repo"), str) or not isinstance(data.get("count"), int):
        raise ApiError(400, 'expected {"repo": "owner/name", "count": N, "start"?: N, "files"?: N}')
    try:
        numbers = _state(request).add_merged_pulls(
            data["repo"], data["count"], start=int(data.get("start", 1)), files=int(data.get("files", 2))
        )
    except (BundleError, ValueError) as exc:
        raise _control_error(exc) from exc
    return _json({"repo": data["repo"], "numbers": numbers}, status=201)


async def control_add_comment(request: web.Request) -> web.Response:
    """POST /_sandbox/comments ``{"repo", "number", "user", "body", "user_type"?, "deliver"?}`` → 201 comment.

    Lets a test speak as any user (``user_type`` ``User`` by default, or ``Bot``).
    With a webhook configured (:mod:`bot.sandbox.hooks`), the comment is also sent to
    it as GitHub's ``issue_comment`` ``created`` delivery, unless ``deliver`` is
    false; the answer then has ``delivery``: ``{"id", "event", "status", "answer"}``
    (or ``"error"`` when the server could not be reached; the comment stays either
    way). ``deliver: true`` without a webhook is a 400.
    """
    state = _state(request)
    data = await _body(request)
    if not isinstance(data, dict) or not isinstance(data.get("repo"), str) or data["repo"].count("/") != 1:
        raise ApiError(400, 'expected {"repo": "owner/name", "number": N, "user": LOGIN, "body": TEXT}')
    if not isinstance(data.get("number"), int) or not isinstance(data.get("user"), str) or not data["user"]:
        raise ApiError(400, "'number' must be an integer and 'user' a login")
    deliver = data.get("deliver")
    if deliver is not None and not isinstance(deliver, bool):
        raise ApiError(400, "'deliver' must be true or false")
    if deliver and state.webhook is None:
        raise ApiError(400, "the sandbox has no webhook to deliver to (start it with --webhook-url and --webhook-secret)")
    owner, name = data["repo"].split("/")
    comment = state.create_comment(
        owner, name, data["number"], data.get("body"), user=data["user"], user_type=str(data.get("user_type") or "User")
    )
    answer = state.comment_json(comment)
    if state.webhook is not None and deliver is not False:
        made = comment_payload(state, comment)
        if made is None:
            answer["delivery"] = {"error": f"the app is not installed on {comment.repo}: GitHub sends no delivery"}
        else:
            answer["delivery"] = await deliver_hook(state.webhook, "issue_comment", made[0], app_id=state.app_id)
    return _json(answer, status=201)


async def control_add_review_comment(request: web.Request) -> web.Response:
    """POST /_sandbox/review-comments ``{"repo", "number", "user", "body", "path"?}`` → 201 review comment.

    An inline comment on the pull request's diff by any user ("Create a review comment
    for a pull request"), on ``path`` (default: its first file), line 1.
    """
    data = await _body(request)
    if not isinstance(data, dict) or not isinstance(data.get("repo"), str) or data["repo"].count("/") != 1:
        raise ApiError(400, 'expected {"repo": "owner/name", "number": N, "user": LOGIN, "body": TEXT, "path"?: PATH}')
    if not isinstance(data.get("number"), int) or not isinstance(data.get("user"), str) or not data["user"]:
        raise ApiError(400, "'number' must be an integer and 'user' a login")
    path = data.get("path")
    if path is not None and not isinstance(path, str):
        raise ApiError(400, "'path' must be a file's path")
    owner, name = data["repo"].split("/")
    comment = _state(request).create_review_comment(owner, name, data["number"], data.get("body"), user=data["user"], path=path)
    return _json(comment, status=201)


async def control_labels(request: web.Request) -> web.Response:
    """POST /_sandbox/labels ``{"repo", "number", "user", "add"?: [names], "remove"?: [names], "user_type"?}`` → 200.

    Lets a test change a pull request's labels as any user, as from GitHub's
    sidebar: removals first, then additions, each recorded as an ``unlabeled`` or
    ``labeled`` issue event by that user. Answers with the labels now on the
    issue; 404 (nothing changed) when a label to remove is not on it.
    """
    state = _state(request)
    data = await _body(request)
    if not isinstance(data, dict) or not isinstance(data.get("repo"), str) or data["repo"].count("/") != 1:
        raise ApiError(400, 'expected {"repo": "owner/name", "number": N, "user": LOGIN, "add": [..], "remove": [..]}')
    if not isinstance(data.get("number"), int) or not isinstance(data.get("user"), str) or not data["user"]:
        raise ApiError(400, "'number' must be an integer and 'user' a login")
    add, remove = data.get("add", []), data.get("remove", [])
    if not all(isinstance(names, list) and all(isinstance(n, str) for n in names) for names in (add, remove)):
        raise ApiError(400, "'add' and 'remove' must be lists of label names")
    owner, name = data["repo"].split("/")
    labels = state.change_labels(
        owner,
        name,
        data["number"],
        actor=data["user"],
        actor_type=str(data.get("user_type") or "User"),
        add=add,
        remove=remove,
    )
    record = state.repo(owner, name)
    return _json([state.label_json(record, label) for label in labels])


async def control_collaborators(request: web.Request) -> web.Response:
    """POST /_sandbox/collaborators ``{"LOGIN": "ROLE"}`` → 200 with every collaborator's role."""
    state = _state(request)
    data = await _body(request)
    if not isinstance(data, dict):
        raise ApiError(400, 'expected {"LOGIN": "admin|maintain|write|triage|read|none"}')
    try:
        state.set_collaborators(data)
    except ValueError as exc:
        raise _control_error(exc) from exc
    return _json({login: role for login, role in state.collaborators.values()})


async def control_files(request: web.Request) -> web.Response:
    """POST /_sandbox/files ``{"repo", "path", "content", "ref"?}`` → 201: serve a file through the contents API."""
    data = await _body(request)
    if not isinstance(data, dict) or not all(isinstance(data.get(k), str) for k in ("repo", "path", "content")):
        raise ApiError(400, 'expected {"repo": "owner/name", "path": PATH, "content": TEXT, "ref"?: REF}')
    ref = data.get("ref")
    try:
        _state(request).set_file(data["repo"], data["path"], data["content"], ref if isinstance(ref, str) else None)
    except ValueError as exc:
        raise _control_error(exc) from exc
    return _json({"repo": data["repo"], "path": data["path"], "ref": ref}, status=201)


async def control_permissions(request: web.Request) -> web.Response:
    """POST /_sandbox/permissions ``{"contents": null, "issues": "read", ...}`` → 200 with the permissions now held."""
    data = await _body(request)
    if not isinstance(data, dict):
        raise ApiError(400, 'expected {"PERMISSION": "read" | "write" | null}')
    try:
        _state(request).set_permissions(data)
    except ValueError as exc:
        raise _control_error(exc) from exc
    return _json(_state(request).permissions)


async def control_add_installation(request: web.Request) -> web.Response:
    """POST /_sandbox/installations ``{"id", "account"?, "repositories"?, "account_type"?}`` → 201 installation.

    Installs the app once more (see :meth:`SandboxState.add_installation`): on every
    repository of ``account``, or on the ``repositories`` (``owner/name``) listed.
    """
    data = await _body(request)
    if not isinstance(data, dict) or not isinstance(data.get("id"), int) or isinstance(data.get("id"), bool):
        raise ApiError(400, 'expected {"id": N, "account": LOGIN, "repositories"?: ["owner/name"], "account_type"?}')
    account, repositories = data.get("account"), data.get("repositories")
    if account is not None and (not isinstance(account, str) or not account):
        raise ApiError(400, "'account' must be a login")
    if repositories is not None and not isinstance(repositories, list):
        raise ApiError(400, "'repositories' must be a list of 'owner/name'")
    state = _state(request)
    try:
        installation = state.add_installation(
            data["id"], account, repositories=repositories, account_type=str(data.get("account_type") or "Organization")
        )
    except ValueError as exc:
        raise _control_error(exc) from exc
    return _json(state.installation_json(installation), status=201)


async def control_tokens(request: web.Request) -> web.Response:
    """GET /_sandbox/tokens: every issued installation token with ``expires_at`` and ``revoked``."""
    state = _state(request)
    return _json(
        [
            {
                "token": t.token,
                "installation_id": t.installation_id,
                "expires_at": iso(t.expires_at),
                "expired": t.expires_at <= state.now(),
                "revoked": t.revoked,
            }
            for t in state.tokens.values()
        ]
    )


async def control_expire_tokens(request: web.Request) -> web.Response:
    """POST /_sandbox/tokens/expire → 200 ``{"expired": N}``: every issued token is now expired."""
    return _json({"expired": _state(request).expire_tokens()})


async def control_revoke_token(request: web.Request) -> web.Response:
    """POST /_sandbox/tokens/revoke ``{"token"}`` → 200 ``{"revoked": bool}``."""
    data = await _body(request)
    if not isinstance(data, dict) or not isinstance(data.get("token"), str):
        raise ApiError(400, 'expected {"token": TOKEN}')
    return _json({"revoked": _state(request).revoke_token(data["token"])})


CONTROL_ROUTES: list[tuple[str, str, Handler]] = [
    ("GET", "/_sandbox/state", control_state),
    ("GET", "/_sandbox/faults", control_list_faults),
    ("POST", "/_sandbox/faults", control_add_faults),
    ("DELETE", "/_sandbox/faults", control_clear_faults),
    ("POST", "/_sandbox/reset", control_reset),
    ("POST", "/_sandbox/pulls", control_add_pull),
    ("GET", r"/_sandbox/pulls/{owner}/{repo}/{number:\d+}", control_get_pull),
    ("POST", "/_sandbox/merged-pulls", control_add_merged_pulls),
    ("POST", "/_sandbox/comments", control_add_comment),
    ("POST", "/_sandbox/review-comments", control_add_review_comment),
    ("POST", "/_sandbox/labels", control_labels),
    ("POST", "/_sandbox/collaborators", control_collaborators),
    ("POST", "/_sandbox/files", control_files),
    ("POST", "/_sandbox/permissions", control_permissions),
    ("POST", "/_sandbox/installations", control_add_installation),
    ("GET", "/_sandbox/tokens", control_tokens),
    ("POST", "/_sandbox/tokens/expire", control_expire_tokens),
    ("POST", "/_sandbox/tokens/revoke", control_revoke_token),
]
