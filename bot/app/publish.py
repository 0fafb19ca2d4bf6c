"""Everything prguide writes to GitHub: its guide comment, labels, replies and reactions.

This is the only module that changes anything on GitHub. Publishing is idempotent: a
redelivered event or a second run edits (or leaves alone) the one comment instead of
adding another, and re-adding labels already present is a no-op on GitHub's side.
Every write is fenced: right before it, :func:`bot.app.fencing.before_write` checks
that the job running it still holds its claim on the queue, and raises
:class:`~bot.app.fencing.LeaseLost` instead of writing when it does not (two runs of one
job at once would each find no comment and post one).

GitHub docs: "List issue comments", "Create an issue comment", "Update an issue
comment", "Add labels to an issue", "Remove a label from an issue", "Update a label",
"List issue events", "Create reaction for an issue comment".
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from contextlib import aclosing
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import cachetools

from bot.app.fencing import before_write
from bot.app.auth import BotIdentity
from bot.app.fetch import PER_PAGE, split_repository
from bot.app.github import Forbidden, GitHubClient, NotFound, ValidationFailed
from bot.engine.marker import MarkerState, has_marker, parse_marker, replace_marker

if TYPE_CHECKING:  # the engine is only needed for its Guide type here
    from bot.engine.build import Guide

#: GitHub's limit on a comment body, in characters.
MAX_COMMENT_CHARS = 65536
#: The colour GitHub gives a label it creates implicitly when one is added to an issue.
GITHUB_DEFAULT_LABEL_COLOR = "ededed"
#: GitHub refuses more labels than this on one issue or pull request (422 "Issues cannot
#: have more than 100 labels").
MAX_LABELS_PER_ISSUE = 100
#: Reactions GitHub accepts ("Create reaction for an issue comment").
REACTIONS = frozenset({"+1", "-1", "laugh", "confused", "heart", "hooray", "rocket", "eyes"})

# "Not given": look prguide's comment up (None would mean "there is none").
_LOOK_UP: Any = object()
#: Seconds this process remembers that it gave a label its look.
STYLED_MEMORY = 600.0
#: ``(API root, repository, casefolded label)`` -> ``True`` once this process styled the
#: label, or the ``asyncio.Event`` of the job styling it now. Jobs of one repository that
#: run at once all see a label GitHub just created in grey; one styles it and the others
#: wait for that and skip it, instead of each spending a write of GitHub's content-creating
#: budget (80 a minute, 500 an hour) on the same "Update a label".
_STYLED: cachetools.TTLCache = cachetools.TTLCache(maxsize=4096, ttl=STYLED_MEMORY)

_COMMENTS = "/repos/{owner}/{repo}/issues/{issue_number}/comments{?per_page}"
_COMMENT = "/repos/{owner}/{repo}/issues/comments/{comment_id}"
_ISSUE_LABELS = "/repos/{owner}/{repo}/issues/{issue_number}/labels{?per_page}"
_ISSUE_LABEL = "/repos/{owner}/{repo}/issues/{issue_number}/labels/{name}"
_REPO_LABEL = "/repos/{owner}/{repo}/labels/{name}"
_EVENTS = "/repos/{owner}/{repo}/issues/{issue_number}/events{?per_page}"
_REACTIONS = "/repos/{owner}/{repo}/issues/comments/{comment_id}/reactions"
_REVIEW_REACTIONS = "/repos/{owner}/{repo}/pulls/comments/{comment_id}/reactions"
_REVIEW_REPLIES = "/repos/{owner}/{repo}/pulls/{pull_number}/comments/{comment_id}/replies"


log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class LabelsRefused:
    """Labels :func:`publish_guide` could not apply, and why.

    ``reason`` is ``"limit"`` (the pull request would have more than
    :data:`MAX_LABELS_PER_ISSUE` labels: these were not even sent), ``"forbidden"``
    (GitHub answered 403: the installation may not write labels) or ``"refused"``
    (another 422); ``message`` is GitHub's message (empty for ``"limit"``).
    """

    names: tuple[str, ...]
    reason: str
    message: str = ""


#: ``revise(refusals)`` -> the guide to post instead, saying which labels were not applied.
Revise = Callable[[Sequence[LabelsRefused]], "Guide | Awaitable[Guide]"]


@dataclass(frozen=True, slots=True)
class PublishResult:
    """What :func:`publish_guide` did.

    ``comment`` is ``"created"``, ``"edited"``, ``"unchanged"`` or ``"not_posted"``; ``labels_styled``
    are labels GitHub had just created in its default look, given their colour and
    description from the rules; ``calls`` is the HTTP requests publishing made.
    """

    comment_id: int
    comment: str
    comment_url: str = ""
    labels_added: tuple[str, ...] = ()
    labels_removed: tuple[str, ...] = ()
    labels_styled: tuple[str, ...] = ()
    calls: int = 0
    labels_refused: tuple[LabelsRefused, ...] = ()


def _where(repository: str, **more: Any) -> dict[str, Any]:
    owner, repo = split_repository(repository)
    return {"owner": owner, "repo": repo, **more}


#: Who prguide writes as: a :class:`bot.app.auth.BotIdentity`, or only its login ``"{app slug}[bot]"``.
Bot = BotIdentity | str


def _identity(bot: Bot) -> BotIdentity:
    return bot if isinstance(bot, BotIdentity) else BotIdentity(str(bot))


def is_guide_comment(comment: Mapping[str, Any], bot_login: Bot) -> bool:
    """True when ``comment`` (an issue comment object) is prguide's guide.

    It must carry the marker *and* be written by prguide (``bot_login``, see
    :meth:`bot.app.auth.BotIdentity.wrote`: by app or user id when known, so a renamed
    app still finds its guide): a human quoting the marker has not written a guide.
    """
    return has_marker(comment.get("body")) and _identity(bot_login).wrote(
        comment.get("user"), comment.get("performed_via_github_app")
    )


async def find_guide_comment(client: GitHubClient, repository: str, number: int, *, bot_login: Bot) -> Mapping[str, Any] | None:
    """prguide's earlier guide comment on a pull request (the oldest, if several), or ``None``.

    Lists the issue comments, 100 per page. ``bot_login``: see :func:`is_guide_comment`.
    """
    where = _where(repository, issue_number=int(number), per_page=PER_PAGE)
    async with aclosing(client.getiter(_COMMENTS, where)) as comments:
        async for comment in comments:
            if is_guide_comment(comment, bot_login):
                return comment
    return None


async def publish_guide(
    client: GitHubClient,
    repository: str,
    number: int,
    guide: Guide,
    *,
    bot_login: Bot,
    current_labels: Iterable[str] | None = None,
    existing: Mapping[str, Any] | None | object = _LOOK_UP,
    revise: Revise | None = None,
    post_comment: bool = True,
    previous: MarkerState | None = None,
) -> PublishResult:
    """Post or update the guide comment on pull request ``number`` and set its labels.

    ``post_comment`` False (the repository's ``comment:`` setting is above this guide's
    reading level): the labels are set as usual but no new comment is created
    (``comment`` is then ``"not_posted"`` and ``comment_id`` 0); an earlier guide
    comment is still kept up to date, so it never shows a stale guide.

    ``previous`` is the state of an earlier guide when there is no guide comment (the
    caller keeps it elsewhere, e.g. the stored guide's marker); a comment's marker wins.

    ``current_labels`` are the labels on the PR now (e.g. ``snapshot.labels``); when
    ``None`` they are read from GitHub (one more call). ``existing`` is prguide's
    comment when the caller already looked it up with :func:`find_guide_comment`
    (``None``: there is none), which saves listing the comments again. Label names
    compare without regard to case, as on GitHub.

    Labels go first, then the comment, so the marker never records labels that were
    not applied. Rules for labels:

    * ``guide.labels`` not on the PR are added in one call, except labels prguide added
      before that are gone now: a human removed them, and prguide does not fight that
      (unless a maintainer asked for them with ``/prguide label``).
    * GitHub creates unknown labels in grey without a description; those just created
      are then given their colour and description from ``guide.label_specs`` (one call
      each, only the first time a label appears in a repository).
    * Labels prguide added earlier (the previous marker's ``labels``) that no longer
      apply are removed, unless a maintainer asked for them or the issue events show a
      human added them last.

    A refused label write never costs the guide: labels beyond GitHub's 100 per pull
    request are not sent, and a 422 or 403 answer to adding them is not retried. The
    comment is then posted anyway, as ``revise(refusals)`` returns it (the caller's
    chance to say which labels were not applied; without ``revise`` the guide as
    given), and its marker records only the labels actually applied.

    Raises ``ValueError`` when the comment is longer than GitHub allows, and the
    client's errors.
    """
    if len(guide.markdown) > MAX_COMMENT_CHARS:
        raise ValueError(f"guide comment has {len(guide.markdown)} characters; GitHub allows {MAX_COMMENT_CHARS}")
    calls_before = client.calls
    if existing is _LOOK_UP:
        existing = await find_guide_comment(client, repository, number, bot_login=bot_login)
    elif existing is not None and not is_guide_comment(existing, bot_login):
        raise ValueError("existing must be prguide's own guide comment (see find_guide_comment)")
    # Without a guide comment, ``previous`` (a marker the caller kept elsewhere) says which
    # labels prguide added before and what a human decided.
    previous = parse_marker(existing.get("body")) if existing else previous

    if current_labels is None:
        current_labels = [label["name"] for label in await client.getlist(_ISSUE_LABELS, _where(repository, issue_number=int(number), per_page=PER_PAGE))]
    current = {name.casefold() for name in current_labels}
    to_add, candidates = _plan_labels(guide, previous, current)

    styled: tuple[str, ...] = ()
    refusals: list[LabelsRefused] = []
    room = max(0, MAX_LABELS_PER_ISSUE - len(current))
    if len(to_add) > room:
        refusals.append(LabelsRefused(tuple(to_add[room:]), "limit"))
        to_add = to_add[:room]
    if to_add:
        try:
            on_issue = await add_labels(client, repository, number, to_add)
        except (ValidationFailed, Forbidden) as exc:
            refusals.append(_refusal(to_add, exc))
            log.warning("%s#%s: GitHub refused the labels %s: %s", repository, number, to_add, exc)
            to_add = []
        else:
            styled = await _style_new_labels(client, repository, to_add, on_issue, guide)
    removed: list[str] = []
    if candidates:
        keep = await _labelled_by_humans(client, repository, number, candidates, bot_login=bot_login)
        for name in candidates:
            if name.casefold() in keep:
                continue
            try:
                if await remove_label(client, repository, number, name):
                    removed.append(name)
            except Forbidden as exc:  # no Issues: write; the label stays, which costs nothing
                log.warning("%s#%s: GitHub refused to remove the label %r: %s", repository, number, name, exc.reason)
                break

    markdown = guide.markdown
    if refusals:
        if revise is not None:
            revised = revise(refusals)
            guide = await revised if inspect.isawaitable(revised) else revised
        # The marker remembers what prguide applied, so a refused label is not "ours".
        refused = {name.casefold() for r in refusals for name in r.names}
        applied = tuple(name for name in guide.state.labels if name.casefold() not in refused)
        markdown = replace_marker(guide.markdown, replace(guide.state, labels=applied))
        if len(markdown) > MAX_COMMENT_CHARS:
            raise ValueError(f"guide comment has {len(markdown)} characters; GitHub allows {MAX_COMMENT_CHARS}")

    if existing is None and not post_comment:
        comment_id, outcome, url = 0, "not_posted", ""
    elif existing is None:
        await before_write(f"the guide comment on {repository}#{number}")
        created = await client.post(_COMMENTS, _where(repository, issue_number=int(number)), data={"body": markdown})
        comment_id, outcome, url = int(created["id"]), "created", str(created.get("html_url") or "")
    elif existing.get("body") == markdown:
        comment_id, outcome, url = int(existing["id"]), "unchanged", str(existing.get("html_url") or "")
    else:
        await before_write(f"the guide comment edit on {repository}#{number}")
        edited = await client.patch(_COMMENT, _where(repository, comment_id=int(existing["id"])), data={"body": markdown})
        comment_id, outcome = int(existing["id"]), "edited"
        url = str((edited or {}).get("html_url") or existing.get("html_url") or "")

    return PublishResult(
        comment_id=comment_id,
        comment=outcome,
        comment_url=url,
        labels_added=tuple(to_add),
        labels_removed=tuple(removed),
        labels_styled=styled,
        calls=client.calls - calls_before,
        labels_refused=tuple(refusals),
    )


def _refusal(names: Sequence[str], exc: ValidationFailed | Forbidden) -> LabelsRefused:
    if isinstance(exc, Forbidden):
        return LabelsRefused(tuple(names), "forbidden", exc.reason)
    details = [str(e.get("message")) for e in exc.errors if isinstance(e, Mapping) and e.get("message")]
    return LabelsRefused(tuple(names), "refused", "; ".join(details) or exc.message)


def _plan_labels(guide: Guide, previous: MarkerState | None, current: set[str]) -> tuple[list[str], list[str]]:
    """Labels to add, and labels that may need removing (before the human check)."""
    asked = {n.casefold() for n in guide.state.human_added}
    ours_before = {n.casefold(): n for n in (previous.labels if previous else ())}
    if previous:
        asked |= {n.casefold() for n in previous.human_added}
    wanted: dict[str, str] = {}
    for name in guide.labels:
        wanted.setdefault(name.casefold(), name)
    to_add = [
        name
        for key, name in wanted.items()
        if key not in current and (key not in ours_before or key in asked)
    ]
    candidates = [name for key, name in ours_before.items() if key not in wanted and key not in asked]
    return to_add, candidates


async def _style_new_labels(
    client: GitHubClient, repository: str, added: Sequence[str], on_issue: Sequence[Mapping[str, Any]], guide: Guide
) -> tuple[str, ...]:
    specs = {name.casefold(): spec for name, spec in guide.label_specs.items()}
    looks = {str(label.get("name", "")).casefold(): label for label in on_issue if isinstance(label, Mapping)}
    styled = []
    for name in added:
        spec = specs.get(name.casefold())
        label = looks.get(name.casefold())
        if spec is None or label is None:
            continue
        is_default_look = str(label.get("color") or "").lower() == GITHUB_DEFAULT_LABEL_COLOR and not label.get("description")
        wants_other_look = spec.color.lower() != GITHUB_DEFAULT_LABEL_COLOR or bool(spec.description)
        if not (is_default_look and wants_other_look):
            continue
        key = (client.api_url, repository.casefold(), name.casefold())
        mark = _STYLED.get(key)
        if isinstance(mark, asyncio.Event):
            await mark.wait()  # another job is styling it: its outcome decides
            mark = _STYLED.get(key)
        if mark is True:
            continue
        styling = _STYLED[key] = asyncio.Event()
        try:
            await before_write(f"the look of the label {name!r} in {repository}")
            await client.patch(
                _REPO_LABEL,
                _where(repository, name=str(label.get("name") or name)),
                data={"color": spec.color.lstrip("#").lower(), "description": spec.description[:100]},
            )
        except NotFound:
            _STYLED.pop(key, None)
            continue  # deleted in the meantime; its look no longer matters
        except (Forbidden, ValidationFailed) as exc:  # the label is applied; only its look is missing
            _STYLED.pop(key, None)
            log.warning("%s: cannot style the label %r: %s", repository, name, exc)
            continue
        except BaseException:
            _STYLED.pop(key, None)  # a job waiting for this one styles it itself
            raise
        else:
            _STYLED[key] = True
        finally:
            styling.set()
        styled.append(name)
    return tuple(styled)


async def _labelled_by_humans(
    client: GitHubClient, repository: str, number: int, names: Sequence[str], *, bot_login: Bot
) -> set[str]:
    """Casefolded names among ``names`` whose last ``labeled`` event was by someone other than prguide."""
    wanted = {n.casefold() for n in names}
    last_actor: dict[str, Mapping[str, Any]] = {}
    try:
        async for event in client.getiter(_EVENTS, _where(repository, issue_number=int(number), per_page=PER_PAGE)):
            if event.get("event") != "labeled":
                continue
            key = str((event.get("label") or {}).get("name") or "").casefold()
            if key in wanted:
                last_actor[key] = event
    except NotFound:
        return wanted  # cannot tell who added them: keep them all
    bot = _identity(bot_login)
    return {key for key, event in last_actor.items() if not bot.wrote(event.get("actor"), event.get("performed_via_github_app"))}


async def add_labels(client: GitHubClient, repository: str, number: int, names: Sequence[str]) -> list[Mapping[str, Any]]:
    """Add labels to an issue or pull request in one call; return all labels now on it.

    GitHub creates labels the repository does not have yet (grey, no description).
    """
    if not names:
        return []
    await before_write(f"labels on {repository}#{number}")
    data = await client.post(
        _ISSUE_LABELS, _where(repository, issue_number=int(number)), data={"labels": list(names)}, idempotent=True
    )
    return list(data or ())


async def remove_label(client: GitHubClient, repository: str, number: int, name: str) -> bool:
    """Remove one label from an issue or pull request; ``False`` when it was not there."""
    await before_write(f"removing a label from {repository}#{number}")
    try:
        await client.delete(_ISSUE_LABEL, _where(repository, issue_number=int(number), name=name), expect=(404,))
    except NotFound:
        return False
    return True


async def reply(client: GitHubClient, repository: str, number: int, body: str) -> int:
    """Post a new comment on an issue or pull request and return its id.

    ``body`` is Markdown as written; callers must not paste text from the PR or its
    comments into it unescaped (it could mention people or carry a marker).
    Raises ``ValueError`` when the body is empty or too long.
    """
    if not body.strip():
        raise ValueError("a reply needs a body")
    if len(body) > MAX_COMMENT_CHARS:
        raise ValueError(f"reply has {len(body)} characters; GitHub allows {MAX_COMMENT_CHARS}")
    await before_write(f"a reply on {repository}#{number}")
    created = await client.post(_COMMENTS, _where(repository, issue_number=int(number)), data={"body": body})
    return int(created["id"])


async def reply_in_review_thread(client: GitHubClient, repository: str, number: int, comment_id: int, body: str) -> int:
    """Reply in the thread of review comment ``comment_id`` (the thread's first comment:
    GitHub refuses replies to replies) on pull request ``number``; return the reply's id.

    GitHub docs: "Create a reply for a review comment". Same rules for ``body`` as
    :func:`reply`.
    """
    if not body.strip():
        raise ValueError("a reply needs a body")
    if len(body) > MAX_COMMENT_CHARS:
        raise ValueError(f"reply has {len(body)} characters; GitHub allows {MAX_COMMENT_CHARS}")
    await before_write(f"a review thread reply on {repository}#{number}")
    created = await client.post(
        _REVIEW_REPLIES, _where(repository, pull_number=int(number), comment_id=int(comment_id)), data={"body": body}
    )
    return int(created["id"])


async def react_to_review_comment(client: GitHubClient, repository: str, comment_id: int, content: str) -> None:
    """React to a pull request review comment ("Create reaction for a pull request review comment")."""
    if content not in REACTIONS:
        raise ValueError(f"unknown reaction {content!r}; expected one of {sorted(REACTIONS)}")
    await before_write(f"a reaction in {repository}")
    await client.post(
        _REVIEW_REACTIONS, _where(repository, comment_id=int(comment_id)), data={"content": content}, idempotent=True
    )


async def react(client: GitHubClient, repository: str, comment_id: int, content: str) -> None:
    """React to an issue comment (e.g. ``"eyes"`` when a command is seen, ``"+1"`` when done).

    Raises ``ValueError`` for a reaction GitHub does not know.
    """
    if content not in REACTIONS:
        raise ValueError(f"unknown reaction {content!r}; expected one of {sorted(REACTIONS)}")
    await before_write(f"a reaction in {repository}")
    await client.post(
        _REACTIONS, _where(repository, comment_id=int(comment_id)), data={"content": content}, idempotent=True
    )


async def replace_comment_body(
    client: GitHubClient, repository: str, comment_id: int, *, expected: Callable[[str], bool], body: str, bot_login: Bot
) -> str:
    """Edit prguide's comment ``comment_id`` to ``body`` if its current body passes ``expected``.

    For a follow-up that rewrites a comment published earlier (a narrated guide after
    the engine's): reads the comment ("Get an issue comment"), and edits it ("Update an
    issue comment") only when it is still prguide's guide and ``expected(current_body)``
    holds, so a newer guide written meanwhile is never overwritten by a stale one.
    Returns ``"edited"``, ``"unchanged"`` (already ``body``), ``"stale"`` (the check
    failed) or ``"gone"`` (deleted). Raises ``ValueError`` for a body longer than GitHub
    allows, and the client's other errors.
    """
    if len(body) > MAX_COMMENT_CHARS:
        raise ValueError(f"guide comment has {len(body)} characters; GitHub allows {MAX_COMMENT_CHARS}")
    where = _where(repository, comment_id=int(comment_id))
    try:
        current = await client.getitem(_COMMENT, where)
    except NotFound:
        return "gone"
    text = str(current.get("body") or "")
    if text == body:
        return "unchanged"
    if not is_guide_comment(current, bot_login) or not expected(text):
        return "stale"
    await before_write(f"the guide comment edit in {repository}")
    try:
        await client.patch(_COMMENT, where, data={"body": body})
    except NotFound:
        return "gone"
    return "edited"
