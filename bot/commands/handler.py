"""The command job: read a comment's commands, decide, act, answer.

Routes (:data:`COMMAND_ROUTES`): ``issue_comment`` ``created`` and ``edited`` on pull
requests, ``pull_request_review`` ``submitted`` (commands in a review's body) and
``pull_request_review_comment`` ``created`` (commands in an inline comment of the
diff), where maintainers write while reviewing. The job key is the pull request
(``owner/repo#N``), the same as the merged pull request's job, so a command and a
merge never publish at the same time.

Answers go where the command was written: an issue comment gets reactions and, when
there is something to say, an issue comment; an inline review comment gets reactions
("Create reaction for a pull request review comment") and replies in its thread
("Create a reply for a review comment"). A review's body cannot get reactions (GitHub
has no reactions API for reviews), so it gets an issue comment every time, saying
"done" when there is nothing else to say.

Steps, as the job's installation:

1. Find the commands (for an ``edited`` comment, only those its earlier version,
   ``changes.body.from`` in the payload, lacked). None: stop, having called nothing.
2. React ``eyes`` to the comment ("Create reaction for an issue comment"). GitHub
   answers 404 when the comment was deleted before the job ran: deleting a comment
   withdraws its commands, so the job stops there.
3. Read the repository's ``.github/prguide.yml`` (always fresh: a maintainer may just have pushed it), prguide's guide comment (its
   marker remembers the language and the labels maintainers decided) and, when a
   command needs it, the commenter's role ("Get repository permissions for a user",
   cached for a minute).
4. :func:`bot.commands.decide.decide`, then carry the actions out: labels first,
   then one rebuild of the guide from fresh API data, published through
   :func:`bot.app.publish.publish_guide`, then one reply with explanations, help and
   refusals.
5. React ``+1`` when every command ran, ``confused`` when any did not.

Only :mod:`bot.app.publish` writes to GitHub. A ``RetryLater`` (GitHub down, rate
limited) propagates so the worker pool runs the job again; every step is safe to
repeat, and the reply is posted last.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from cachetools import TTLCache

from bot.app.errors import GiveUp, RetryLater
from bot.app.fetch import fetch_pull, fetch_snapshot
from bot.app.github import GitHubError, NotFound
from bot.app.jobs import Job
from bot.app.offload import run_store
from bot.app.publish import (
    add_labels,
    find_guide_comment,
    publish_guide,
    react,
    react_to_review_comment,
    remove_label,
    reply,
    reply_in_review_thread,
)
from bot.app.routing import JobContext, Route
from bot.app.webhook import Delivery
from bot.commands.decide import (
    Actor,
    AddLabels,
    Backfill,
    Explain,
    PullState,
    Rebuild,
    Refuse,
    Remembered,
    RemoveLabels,
    ShowHelp,
    decide,
    needs_role,
)
from bot.commands.explain import render_why
from bot.commands.messages import t
from bot.commands.parse import Command, new_commands, parse_commands
from bot.commands.permissions import PermissionCache
from bot.commands.reply import compose_reply, help_text, refusal_text
from bot.engine.build import Overrides, build_guide
from bot.feature_support import (
    config_notices,
    coupling_history,
    explain_narration,
    guide_page_url,
    narration_wanted,
    queue_backfill,
    queue_narration,
    read_repo_config,
    reviser,
    save_guide,
    with_cached_narration,
)
from bot.engine.marker import has_marker, parse_marker

log = logging.getLogger("prguide.commands")

#: The comment actions that can carry new commands ("Webhook events and payloads", issue_comment).
ACTIONS = ("created", "edited")

#: Where a command was written: the ``X-GitHub-Event`` of its delivery.
ISSUE_COMMENT = "issue_comment"
REVIEW = "pull_request_review"
REVIEW_COMMENT = "pull_request_review_comment"


@dataclass(frozen=True, slots=True)
class CommentFacts:
    """What the job needs from an ``issue_comment`` payload.

    ``actor`` is who wrote the commands (the ``sender``: for an edit, the editor);
    ``author`` the pull request's author; ``pull`` its state from
    ``issue.pull_request.merged_at`` and ``issue.state``. ``pull_known`` is false when
    the payload does not say (older GitHub Enterprise Server releases send
    ``issue.pull_request`` without ``merged_at``): the pull request is then read.
    """

    repository: str
    number: int
    comment_id: int
    actor: str
    author: str
    pull: PullState
    body: str
    before: str | None
    edited: bool
    default_branch: str | None
    private: bool = True
    pull_known: bool = True
    #: Where the command was written (:data:`ISSUE_COMMENT`, :data:`REVIEW`, :data:`REVIEW_COMMENT`);
    #: ``comment_id`` is then the issue comment's, the review's or the review comment's id.
    kind: str = ISSUE_COMMENT
    #: For a review comment, the first comment of its thread (replies go there).
    thread_id: int | None = None


def _is_bot(user: Any) -> bool:
    if not isinstance(user, Mapping):
        return False
    return user.get("type") == "Bot" or str(user.get("login") or "").endswith("[bot]")


def _written(payload: Mapping[str, Any], event: str) -> Mapping[str, Any]:
    """The object holding the command's text: the comment, or the review."""
    key = "review" if event == REVIEW else "comment"
    found = payload.get(key)
    return found if isinstance(found, Mapping) else {}


def ignore_reason(payload: Mapping[str, Any], event: str = ISSUE_COMMENT) -> str | None:
    """Why a comment or review payload cannot carry commands for prguide, or ``None``.

    Cheap and without I/O (it runs before the webhook answers): not a pull request,
    written or edited by a bot (prguide included), a comment carrying prguide's
    marker, an edit that left the body alone, or no ``/prguide`` or ``@`` at all.
    ``event`` is the delivery's (``issue_comment`` by default).
    """
    comment = _written(payload, event)
    if event == ISSUE_COMMENT:
        issue = payload.get("issue") if isinstance(payload.get("issue"), Mapping) else {}
        if not isinstance(issue.get("pull_request"), Mapping):
            return "not a pull request"
    elif not isinstance(payload.get("pull_request"), Mapping):
        return "not a pull request"
    if _is_bot(comment.get("user")) or _is_bot(payload.get("sender")):
        return "written by a bot"
    body = comment.get("body")
    if not isinstance(body, str) or has_marker(body):
        return "no commands"
    if payload.get("action") == "edited" and _previous_body(payload) is None:
        return "the comment's text did not change"
    if "/prguide" not in body.lower() and "@" not in body:
        return "no commands"
    return None


def _previous_body(payload: Mapping[str, Any]) -> str | None:
    changes = payload.get("changes")
    body = changes.get("body") if isinstance(changes, Mapping) else None
    before = body.get("from") if isinstance(body, Mapping) else None
    return before if isinstance(before, str) else None


def comment_facts(payload: Mapping[str, Any], event: str = ISSUE_COMMENT) -> CommentFacts:
    """Read :class:`CommentFacts` from an ``issue_comment``, ``pull_request_review`` or
    ``pull_request_review_comment`` payload (``event``).

    Raises :class:`GiveUp` when the payload lacks the repository, the issue number
    or the comment id.
    """
    if event != ISSUE_COMMENT:
        return _review_facts(payload, event)
    issue, comment = payload.get("issue"), payload.get("comment")
    repo = payload.get("repository")
    if not (isinstance(issue, Mapping) and isinstance(comment, Mapping) and isinstance(repo, Mapping)):
        raise GiveUp("issue_comment payload without issue, comment or repository")
    number, comment_id = issue.get("number"), comment.get("id")
    repository = repo.get("full_name")
    if not isinstance(number, int) or not isinstance(comment_id, int) or not isinstance(repository, str):
        raise GiveUp("issue_comment payload without issue number, comment id or repository name")
    pr = issue.get("pull_request") if isinstance(issue.get("pull_request"), Mapping) else {}
    sender = payload.get("sender") if isinstance(payload.get("sender"), Mapping) else comment.get("user") or {}
    return CommentFacts(
        repository=repository,
        number=number,
        comment_id=comment_id,
        actor=str(sender.get("login") or ""),
        author=str((issue.get("user") or {}).get("login") or ""),
        pull=PullState(merged=bool(pr.get("merged_at")), open=issue.get("state") == "open"),
        body=str(comment.get("body") or ""),
        before=_previous_body(payload),
        edited=payload.get("action") == "edited",
        default_branch=repo.get("default_branch") if isinstance(repo.get("default_branch"), str) else None,
        private=repo.get("private") is not False,
        pull_known="merged_at" in pr,
    )


def _review_facts(payload: Mapping[str, Any], event: str) -> CommentFacts:
    written, pull, repo = _written(payload, event), payload.get("pull_request"), payload.get("repository")
    if not (written and isinstance(pull, Mapping) and isinstance(repo, Mapping)):
        raise GiveUp(f"{event} payload without {'review' if event == REVIEW else 'comment'}, pull_request or repository")
    number, written_id, repository = pull.get("number"), written.get("id"), repo.get("full_name")
    if not isinstance(number, int) or not isinstance(written_id, int) or not isinstance(repository, str):
        raise GiveUp(f"{event} payload without pull request number, id or repository name")
    sender = payload.get("sender") if isinstance(payload.get("sender"), Mapping) else written.get("user") or {}
    reply_to = written.get("in_reply_to_id")
    return CommentFacts(
        repository=repository,
        number=number,
        comment_id=written_id,
        actor=str(sender.get("login") or ""),
        author=str((pull.get("user") or {}).get("login") or ""),
        pull=PullState(merged=pull.get("merged") is True or bool(pull.get("merged_at")), open=pull.get("state") == "open"),
        body=str(written.get("body") or ""),
        before=None,
        edited=False,
        default_branch=repo.get("default_branch") if isinstance(repo.get("default_branch"), str) else None,
        private=repo.get("private") is not False,
        pull_known="merged_at" in pull or "merged" in pull,
        kind=event,
        thread_id=reply_to if isinstance(reply_to, int) else written_id,
    )


def accept_comment(delivery: Delivery) -> str | None:
    """:class:`~bot.app.routing.Route` check: queue only comments and reviews that may carry commands."""
    return ignore_reason(delivery.payload, delivery.event)


def permissions_of(services: Any) -> PermissionCache:
    """The process's :class:`PermissionCache`, kept on the app's ``Services``."""
    cache = vars(services).get("command_permissions")
    if cache is None:
        cache = vars(services).setdefault("command_permissions", PermissionCache())
    return cache


#: A person refused on a PR hears why once per this many seconds; later refusals only get
#: the confused reaction, so nobody can make prguide flood a PR with replies.
REFUSAL_REPLY_TTL = 600


def refusals_of(services: Any) -> TTLCache:
    """The process's memory of recent refusal replies, keyed ``(repository, number, login)``."""
    cache = vars(services).get("command_refusals")
    if cache is None:
        cache = vars(services).setdefault("command_refusals", TTLCache(maxsize=4096, ttl=REFUSAL_REPLY_TTL))
    return cache


async def handle_issue_comment(job: Job, ctx: JobContext) -> None:
    """Run the commands of one ``issue_comment`` delivery (see the module docstring).

    Sets ``ctx.outcome`` to ``ignored`` (no commands), ``done`` (every command ran)
    or ``refused`` (some did not); ``ctx.fields`` gets ``repository``, ``number``,
    ``commands``. Raises ``RetryLater`` and ``GiveUp`` from the GitHub client.
    """
    payload = job.data if isinstance(job.data, Mapping) else {}
    if ignore_reason(payload, job.event):
        ctx.outcome = "ignored"
        return
    facts = comment_facts(payload, job.event)
    ctx.fields.update(repository=facts.repository, number=facts.number)
    services = ctx.services
    slug = await services.auth.app_slug()
    if facts.edited:
        commands = new_commands(facts.body, facts.before, app_slug=slug)
    else:
        commands = parse_commands(facts.body, app_slug=slug)
    ctx.fields["commands"] = [c.name or "?" for c in commands]
    if not commands:
        ctx.outcome = "ignored"
        return

    client = ctx.client
    if not await _react(client, facts, "eyes"):
        # The comment was deleted before its commands ran: deleting it withdraws them.
        ctx.outcome = "withdrawn"
        return
    if not facts.pull_known:
        # "Closed without being merged" must not be said on a guess: ask GitHub.
        pull = await fetch_pull(client, facts.repository, facts.number)
        merged = pull.get("merged") is True or bool(pull.get("merged_at"))
        facts = replace(facts, pull=PullState(merged=merged, open=pull.get("state") == "open"), pull_known=True)
    runner = _Runner(ctx, facts, commands, await services.auth.bot_identity())
    ok = await runner.run()
    if facts.kind == REVIEW and ok and not runner.replied:
        # A review cannot carry the 👍, so say it in words.
        done = t("cmd.reply.done", runner.lang, {"names": [f"/prguide {c.text}".strip() for c in commands]})
        await _reply(client, facts, compose_reply(facts.actor, [done], runner.lang))
    await _react(client, facts, "+1" if ok else "confused")
    ctx.outcome = "done" if ok else "refused"


async def _react(client: Any, facts: CommentFacts, content: str) -> bool:
    """React where the command was written; ``False`` when the comment is gone (deleted).

    A review cannot get reactions: nothing is sent, and it counts as present
    (a submitted review cannot be deleted).
    """
    if facts.kind == REVIEW:
        return True
    try:
        if facts.kind == REVIEW_COMMENT:
            await react_to_review_comment(client, facts.repository, facts.comment_id, content)
        else:
            await react(client, facts.repository, facts.comment_id, content)
    except NotFound:
        log.info("%s#%s: comment %s is gone; no %s reaction", facts.repository, facts.number, facts.comment_id, content)
        return False
    return True


async def _reply(client: Any, facts: CommentFacts, body: str) -> None:
    """Answer where the command was written: in an inline comment's thread, else on the pull request."""
    if facts.kind == REVIEW_COMMENT and facts.thread_id is not None:
        await reply_in_review_thread(client, facts.repository, facts.number, facts.thread_id, body)
    else:
        await reply(client, facts.repository, facts.number, body)


class _Runner:
    """Carries one comment's commands out; keeps what several actions share."""

    def __init__(self, ctx: JobContext, facts: CommentFacts, commands: Sequence[Command], bot_login: Any):
        self.ctx = ctx
        self.services = ctx.services
        self.client = ctx.client
        self.facts = facts
        self.commands = commands
        self.bot_login = bot_login
        self.snapshot: Any = None
        self.rules: Any = None
        self.problems: tuple = ()
        self.config: Any = None
        self.existing: Mapping[str, Any] | None = None
        self.remembered = Remembered()
        self.lang = "en"
        self.overrides = Overrides()
        #: Whether :meth:`run` answered with a comment.
        self.replied = False

    async def run(self) -> bool:
        facts = self.facts
        # The guide comment is read even for help: its marker holds the language to answer in.
        self.config, self.existing = await asyncio.gather(
            read_repo_config(
                self.client, facts.repository, facts.default_branch, missing=self.services.missing_configs, fresh=True
            ),
            find_guide_comment(self.client, facts.repository, facts.number, bot_login=self.bot_login),
        )
        marker = parse_marker(self.existing.get("body")) if self.existing else None
        self.remembered = Remembered.from_marker(marker)
        self.overrides = Overrides.from_marker(marker)
        # Replies speak the guide's language: the one asked for, else the one it was written in.
        self.lang = self.remembered.lang or (marker.lang if marker else None) or self.config.lang or self.services.settings.lang

        relabel = tuple(self.config.relabel)
        is_author = bool(facts.author) and facts.author.casefold() == facts.actor.casefold()
        role = None
        if needs_role(self.commands, is_author=is_author, authors_relabel="authors" in relabel):
            role = await permissions_of(self.services).role(self.client, facts.repository, facts.actor)
        actor = Actor(facts.actor, role, is_author)
        actions = decide(self.commands, actor, self.remembered, facts.pull, relabel=relabel)
        log.info(
            "%s#%s: %d command(s) from %s (%s)", facts.repository, facts.number, len(self.commands), facts.actor, role or "-",
            extra={"repository": facts.repository, "number": facts.number, "actions": [type(a).__name__ for a in actions]},
        )

        sections: list[str] = []
        problems: list[str] = []
        labels_failed = False
        refusals = refusals_of(self.services)
        refused_key = (facts.repository, facts.number, facts.actor.casefold())
        only_refusals = all(isinstance(a, Refuse) for a in actions)
        shared = getattr(self.services, "shared", None)
        already_told = False
        if only_refusals and actions:
            if shared is not None:
                # Every replica asks the same table, so the person hears it once in all.
                key = "refusal:" + "#".join((facts.repository, str(facts.number), facts.actor.casefold()))
                already_told = not await run_store(shared, shared.remember_once, key, REFUSAL_REPLY_TTL)
            else:
                already_told = refused_key in refusals
        for action in actions:
            if isinstance(action, Refuse):
                if not already_told:
                    problems.append(refusal_text(action, self.lang))
                continue
            if isinstance(action, Rebuild) and labels_failed:
                # Remember only what is true on GitHub: the earlier human decisions.
                action = Rebuild(action.lang, self.remembered.human_added, self.remembered.human_removed, action.preview)
            try:
                text = await self._act(action)
            except RetryLater:
                raise
            except (GitHubError, NotFound, GiveUp) as exc:
                log.warning("%s#%s: %s failed: %s", facts.repository, facts.number, type(action).__name__, exc)
                problems.append(self._failure(action, exc))
                labels_failed = labels_failed or isinstance(action, (AddLabels, RemoveLabels))
                continue
            except Exception:
                log.exception("%s#%s: %s failed", facts.repository, facts.number, type(action).__name__)
                problems.append(self._failure(action, None))
                labels_failed = labels_failed or isinstance(action, (AddLabels, RemoveLabels))
                continue
            if text:
                sections.append(text)
        if problems:
            sections.append("\n".join(problems))
        if sections:
            await _reply(self.client, facts, compose_reply(facts.actor, sections, self.lang))
            self.replied = True
        if only_refusals and actions:
            if shared is None:
                refusals[refused_key] = True
            return False
        return not problems

    async def _act(self, action: Any) -> str | None:
        facts = self.facts
        if isinstance(action, RemoveLabels):
            for name in action.names:
                await remove_label(self.client, facts.repository, facts.number, name)
            return None
        if isinstance(action, AddLabels):
            await add_labels(self.client, facts.repository, facts.number, list(action.names))
            return None
        if isinstance(action, Rebuild):
            await self._rebuild(action)
            return None
        if isinstance(action, Explain):
            await self._load()
            # Built in a worker thread, as the guide job does: a big pull request takes a while.
            guide = await asyncio.to_thread(build_guide, self.snapshot, self.rules, lang=self.lang, overrides=self.overrides)
            why = render_why(guide.classification, self.lang, action.label, focus=guide.focus)
            narrated = await explain_narration(self.services, self.existing, guide) if action.label is None else ""
            return why + ("\n\n" + narrated if narrated else "")
        if isinstance(action, ShowHelp):
            return help_text(self.lang, authors_relabel="authors" in self.config.relabel)
        if isinstance(action, Backfill):
            return await self._backfill(action)
        raise TypeError(f"unknown action {action!r}")

    async def _backfill(self, action: Backfill) -> str:
        """Queue a backfill of the repository (see :mod:`bot.features.backfill`) and say what it will do."""
        facts = self.facts
        limit = action.limit if action.limit is not None else self.config.backfill
        await queue_backfill(
            self.ctx, facts.repository, private=facts.private, limit=limit, default_branch=facts.default_branch,
            run=f"backfill:{self.ctx.job.delivery_id}:{facts.repository}",
        )
        if self.config.backfill_comments:
            return t("cmd.act.backfill_comments", self.lang, {"limit": limit})
        return t("cmd.act.backfill", self.lang, {"limit": limit})

    async def _load(self) -> None:
        """Fresh pull request data and the repository's rules (once per job)."""
        if self.snapshot is None:
            self.snapshot = await fetch_snapshot(self.client, self.facts.repository, self.facts.number)
            rules, rule_problems = self.services.rules_for(self.config)
            self.rules, self.problems = rules, tuple(self.config.problems) + tuple(rule_problems)

    async def _rebuild(self, action: Rebuild) -> None:
        facts = self.facts
        await self._load()
        # What the command decided, and what the marker remembers beyond it (a later revert).
        self.overrides = Overrides(lang=action.lang, labels_added=action.labels_added, labels_removed=action.labels_removed,
                                   reverted_by=self.overrides.reverted_by)  # fmt: skip
        notices = {lang: list(lines) for lang, lines in (config_notices(self.config.source, self.problems) or {}).items()}
        if action.preview:
            for lang in ("en", "zh"):
                notices.setdefault(lang, []).insert(0, t("cmd.reply.preview", lang))
        base_notices = {lang: tuple(lines) for lang, lines in notices.items()}
        # A merged pull request's guide links its tag-view page, as the merge's own guide does.
        page_url = guide_page_url(self.services, facts.repository, facts.number, private=facts.private) if facts.pull.merged else None
        # The merge's guide named the files that usually change with these; a refresh keeps them.
        history = await coupling_history(self.services, facts.repository, self.snapshot.merged_at) if facts.pull.merged else None
        build = functools.partial(
            build_guide, self.snapshot, self.rules, lang=self.config.lang or self.services.settings.lang,
            overrides=self.overrides, page_url=page_url, history=history,
        )
        guide = await asyncio.to_thread(build, notices=base_notices)
        # `comment:` holds for commands too: a refresh (or a label or language command) on a
        # repository that wants no comment at this level updates the labels only.
        post_comment = self.config.wants_comment(str(guide.data.get("reading_level") or ""))
        narrating = post_comment and narration_wanted(self.services.settings, self.config, guide) and not action.preview
        if narrating:
            guide = await with_cached_narration(self.services, guide, self.snapshot.head_sha)
        result = await publish_guide(
            self.client,
            facts.repository,
            facts.number,
            guide,
            bot_login=self.bot_login,
            current_labels=self.snapshot.labels,
            existing=self.existing,
            revise=reviser(build, base_notices),
            post_comment=post_comment,
        )
        self.lang = guide.lang
        self.ctx.fields.update(comment_id=result.comment_id, comment=result.comment)
        if narrating and self.services.store is not None:
            await queue_narration(self.ctx, self.ctx.job, guide, self.snapshot.head_sha, result.comment_id)
        if self.services.guides is not None and facts.pull.merged:
            await save_guide(self.services.guides, guide, private=facts.private)

    def _failure(self, action: Any, exc: BaseException | None) -> str:
        what = {
            RemoveLabels: "cmd.act.labels",
            AddLabels: "cmd.act.labels",
            Rebuild: "cmd.act.rebuild",
            Explain: "cmd.act.why",
            ShowHelp: "cmd.act.help",
        }.get(type(action), "cmd.act.rebuild")
        if exc is None:
            reason = t("cmd.fail.internal", self.lang)
        elif isinstance(exc, NotFound):
            reason = t("cmd.fail.gone", self.lang, {"text": exc.reason})
        else:
            status = getattr(exc, "status", "?")
            reason = t("cmd.fail.github", self.lang, {"status": str(status), "text": getattr(exc, "message", str(exc))})
        return f"- {t('cmd.reply.action_failed', self.lang, {'action': t(what, self.lang), 'reason': reason})}"


#: The route for :class:`bot.app.routing.Router`: commands in comments on pull
#: requests. Comments by bots are not queued (``bots=False``), prguide's own included.
COMMAND_ROUTE = Route(
    event=ISSUE_COMMENT,
    actions=ACTIONS,
    handle=handle_issue_comment,
    accept=accept_comment,
    bots=False,
)
#: Commands in the body of a submitted review.
REVIEW_COMMAND_ROUTE = Route(event=REVIEW, actions=("submitted",), handle=handle_issue_comment, accept=accept_comment, bots=False)
#: Commands in an inline comment on the diff (a new one; edits are not read).
REVIEW_COMMENT_COMMAND_ROUTE = Route(
    event=REVIEW_COMMENT, actions=("created",), handle=handle_issue_comment, accept=accept_comment, bots=False
)
#: Every route of the commands feature.
COMMAND_ROUTES = (COMMAND_ROUTE, REVIEW_COMMAND_ROUTE, REVIEW_COMMENT_COMMAND_ROUTE)

#: This feature's routes, composed in :mod:`bot.features`.
ROUTES = COMMAND_ROUTES
