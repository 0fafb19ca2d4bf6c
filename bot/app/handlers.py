"""What prguide does with each kind of delivery, and the merged-pull-request job.

A :class:`Router` maps ``(event, action)`` to a :class:`Route`: whether a delivery is
wanted (decided at once, on the request path, from the payload alone) and the job
handler that does the work later in the worker pool. A feature adds its routes with
:meth:`Router.add`; the server asks the router and never knows the features.

gidgethub's ``Router`` dispatches every registered callback in one step; prguide
needs two (a cheap decision before the 2xx answer, the work after it), hence this
small table.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from cachetools import TTLCache

from bot.app.errors import GiveUp, RetryLater
from bot.app.fetch import fetch_file, fetch_snapshot
from bot.app.github import Forbidden
from bot.app.jobs import Job
from bot.app.metrics import Metrics
from bot.app.publish import find_guide_comment, publish_guide
from bot.app.settings import Settings
from bot.app.webhook import Delivery
from bot.engine import Overrides, build_guide
from bot.marker import parse_marker
from bot.render.messages import t
from bot.repo_config import DEFAULT_SOURCE, RepoConfig, load_repo_config
from bot.rules.model import Problem, RuleError
from bot.snapshot import PullRequestSnapshot

log = logging.getLogger("prguide.jobs")

#: Where a repository keeps its prguide settings, on its default branch.
REPO_CONFIG_PATH = DEFAULT_SOURCE
#: Seconds a repository without ``.github/prguide.yml`` is believed to have none. A merged
#: pull request that adds the file reads it at once; a direct push waits this long at most.
MISSING_CONFIG_TTL = 300
#: The largest ``.github/prguide.yml`` prguide reads, in bytes: the file is written by anyone
#: who can push to the default branch, and parsing it runs on prguide's CPU.
MAX_CONFIG_BYTES = 64 * 1024
#: ``Problem.line`` of a config file that could not be read at all; its ``message`` is then a
#: message key of :mod:`bot.render.messages` (see :func:`config_notices`).
UNREAD = 0
#: Problems of an invalid repository config shown in the guide's notice, at most.
MAX_NOTICE_PROBLEMS = 3


@dataclass
class Services:
    """What job handlers share across the process; built once by the app factory.

    ``clients``: a :class:`bot.app.github.ClientFactory` (``for_installation(id)``).
    ``auth``: the :class:`bot.app.auth.AppAuth` (``bot_login()``, ``forget(id)``).
    ``rules``: the :class:`bot.rules.RuleSet` every repository starts from (shipped
    defaults plus ``PRGUIDE_RULES``). ``guides``: the tag view's
    :class:`bot.tagview.store.GuideStore`, or ``None``.
    """

    settings: Settings
    clients: Any
    auth: Any
    rules: Any
    metrics: Metrics
    guides: Any = None
    #: The :class:`bot.app.jobs.JobStore`, so a job can see that a newer one supersedes it.
    store: Any = None
    #: Repositories known to have no config file, keyed ``(repository, ref)``: GitHub's 404
    #: carries no ETag, so without this every guide would pay a call to learn it again.
    missing_configs: TTLCache = field(default_factory=lambda: TTLCache(maxsize=4096, ttl=MISSING_CONFIG_TTL))

    def rules_for(self, config: RepoConfig) -> tuple[Any, tuple[Problem, ...]]:
        """The rules for a repository: :attr:`rules` with the repository's own merged on top.

        The repository's ``disable`` list removes base rules first (see
        ``RuleSet.merged``). Returns the rule set and the problems found while
        combining (a repository rule whose id clashes with a base rule); then the base
        rules are used unchanged.
        """
        if config.rules is None:
            return self.rules, ()
        try:
            merged = self.rules.merged(config.rules)
        except RuleError as exc:
            return self.rules, tuple(exc.problems)
        # Non-fatal findings (disabling a rule that does not exist) are still worth a notice.
        return merged, tuple(merged.warnings)


@dataclass
class JobContext:
    """One job's view of the :class:`Services`, plus what its log line reports.

    :attr:`client` is the installation's GitHub client, made on first use and counting
    this job's API calls. Handlers fill :attr:`fields` (``repository``, ``number``) and
    set :attr:`outcome` (``created``, ``edited``, ``unchanged``, ``skipped``, ...).
    """

    services: Services
    job: Job
    fields: dict[str, Any] = field(default_factory=dict)
    outcome: str = "done"
    _client: Any = None

    @property
    def client(self) -> Any:
        """The :class:`bot.app.github.GitHubClient` of the job's installation.

        Raises :class:`GiveUp` when the delivery names no installation.
        """
        if self._client is None:
            if self.job.installation_id is None:
                raise GiveUp(f"delivery {self.job.delivery_id} names no installation")
            self._client = self.services.clients.for_installation(self.job.installation_id)
        return self._client

    @property
    def api_calls(self) -> int:
        """GitHub API requests this job has sent so far."""
        return 0 if self._client is None else int(self._client.calls)


JobHandler = Callable[[Job, JobContext], Awaitable[None]]


def _wanted(_delivery: Delivery) -> str | None:
    return None


@dataclass(frozen=True, slots=True)
class Route:
    """A kind of delivery prguide acts on.

    ``event`` is the ``X-GitHub-Event``; ``actions`` the payload actions it covers
    (empty: all). ``accept(delivery)`` runs on the request path from the payload alone
    (no I/O) and returns ``None`` to queue the delivery or a short reason to ignore
    it. ``bots``: whether deliveries sent by bot accounts are wanted. ``handle`` runs
    the queued job in the worker pool.
    """

    event: str
    actions: tuple[str, ...]
    handle: JobHandler
    accept: Callable[[Delivery], str | None] = _wanted
    bots: bool = False


class Router:
    """``(event, action)`` -> :class:`Route`; an action-specific route wins over an all-actions one."""

    def __init__(self, routes: Iterable[Route] = ()):
        self._routes: dict[tuple[str, str | None], Route] = {}
        for route in routes:
            self.add(route)

    def add(self, route: Route) -> None:
        """Register ``route``; raises ``ValueError`` when one is already registered for the same event and action."""
        for action in route.actions or (None,):
            key = (route.event, action)
            if key in self._routes:
                raise ValueError(f"a route for {route.event}.{action or '*'} is already registered")
            self._routes[key] = route

    def route(self, event: str, action: str | None) -> Route | None:
        """The route for a delivery or job, or ``None`` when prguide does not act on it."""
        return self._routes.get((event, action)) or self._routes.get((event, None))

    def decide(self, delivery: Delivery) -> tuple[Route | None, str | None]:
        """The route for ``delivery`` and, when it is not wanted, why (``None`` when it is)."""
        route = self.route(delivery.event, delivery.action)
        if route is None:
            return None, f"prguide does not act on {delivery.event}" + (f".{delivery.action}" if delivery.action else "")
        if delivery.sender_is_bot and not route.bots:
            return None, f"sent by the bot {delivery.sender_login}"
        if delivery.key is None:
            return None, "the delivery names no pull request"
        reason = route.accept(delivery)
        return (None, reason) if reason else (route, None)

    @property
    def events(self) -> tuple[str, ...]:
        """The events with at least one route, sorted."""
        return tuple(sorted({event for event, _ in self._routes}))


def default_router() -> Router:
    """The routes prguide ships: the merged pull request guide and ``/prguide`` commands."""
    # Imported here: the commands feature builds on this module.
    from bot.commands.handler import COMMAND_ROUTES

    return Router([MERGED_PULL_REQUEST, *COMMAND_ROUTES])


def accept_merged(delivery: Delivery) -> str | None:
    """Queue a ``pull_request.closed`` delivery only when the pull request was merged."""
    pull = delivery.payload.get("pull_request") or {}
    if pull.get("merged") is not True:
        return "closed without merging"
    return None


async def handle_pull_request_merged(job: Job, ctx: JobContext) -> None:
    """Write (or refresh) the reading guide and labels of a merged pull request.

    Reads, as the job's installation: the PR's files, reviews and review comments (the
    PR object itself comes from the ``pull_request`` webhook payload: no GET, unless
    that copy is malformed, when "Get a pull request" supplies it), the
    repository's ``.github/prguide.yml`` on its default branch (``repository.default_branch``
    in the payload; "Get repository content", a conditional request), and prguide's
    earlier comment, whose marker keeps what maintainers decided with commands.
    Then builds the guide with the repository's rules and publishes it
    (:func:`bot.app.publish.publish_guide`), and stores it for the tag view.

    Sets ``ctx.outcome`` to ``created``/``edited``/``unchanged`` (the comment), or
    ``skipped`` when a rule says no guide. Raises :class:`GiveUp` for a payload without
    a merged pull request, and the GitHub client's errors (``RetryLater``, ``NotFound``...).
    """
    services = ctx.services
    superseded = services.store.supersede(job) if services.store is not None else None
    if superseded is not None:
        # A later delivery for this pull request will build the same guide from fresher
        # data; this one ends before its payload is even parsed.
        ctx.outcome = "superseded"
        ctx.fields.update(superseded_by=superseded[0], also_superseded=superseded[1])
        return
    payload = job.data
    pull = payload.get("pull_request") if isinstance(payload, Mapping) else None
    repo = payload.get("repository") if isinstance(payload, Mapping) else None
    if not isinstance(pull, Mapping) or not isinstance(repo, Mapping) or not isinstance(pull.get("number"), int):
        raise GiveUp(f"delivery {job.delivery_id}: payload has no pull request")
    repository = str(repo.get("full_name") or "")
    number = int(pull["number"])
    ctx.fields.update(repository=repository, number=number)
    if pull.get("merged") is not True:
        raise GiveUp(f"{repository}#{number} is not merged")

    client = ctx.client
    bot_login = await services.auth.bot_login()
    if not _usable_pull(pull, repository):
        # The payload's copy cannot be read; GitHub's own copy costs one call.
        log.warning(
            "%s#%s: the delivery's pull request object is malformed; reading it from GitHub", repository, number,
            extra={"delivery": job.delivery_id, "repository": repository, "number": number},
        )
        pull = None
    branch = repo.get("default_branch")
    snapshot, config, existing = await asyncio.gather(
        fetch_snapshot(client, repository, number, pull=pull),
        read_repo_config(client, repository, branch, missing=services.missing_configs),
        find_guide_comment(client, repository, number, bot_login=bot_login),
    )
    checked = changes_repo_config(snapshot)
    if checked:
        # This merge changed the config file: read what it says now, not what was remembered.
        config = await read_repo_config(client, repository, branch, missing=services.missing_configs, fresh=True)
    rules, rule_problems = services.rules_for(config)
    problems = config.problems + rule_problems
    if problems and not any(p.line == UNREAD for p in problems):
        log.warning(
            "%s: %s is invalid; using the defaults", repository, config.source,
            extra={"repository": repository, "problems": [str(p) for p in problems]},
        )
    previous = parse_marker(existing.get("body")) if existing else None
    # The engine is pure but CPU-bound (a 3,000-file PR takes a while): keep it off the
    # event loop so deliveries are still answered at once.
    notices = config_check_notices(config) if checked else config_notices(config.source, problems)
    build = functools.partial(
        build_guide, snapshot, rules, lang=config.lang or services.settings.lang, overrides=Overrides.from_marker(previous)
    )
    guide = await asyncio.to_thread(build, notices=notices)
    if guide.skipped:
        ctx.outcome = "skipped"
        return
    # The payload's labels are current on the first attempt; a retry may run much later.
    current = snapshot.labels if job.attempts <= 1 else None
    result = await publish_guide(
        client, repository, number, guide, bot_login=bot_login, current_labels=current, existing=existing,
        revise=reviser(build, notices),
    )
    if result.labels_refused:
        ctx.fields["labels_refused"] = [name for r in result.labels_refused for name in r.names]
    ctx.outcome = result.comment
    ctx.fields.update(comment_id=result.comment_id, labels_added=list(result.labels_added), labels_removed=list(result.labels_removed))
    if services.guides is not None:
        save_guide(services.guides, guide, private=bool(repo.get("private", True)))


def _usable_pull(pull: Mapping[str, Any], repository: str) -> bool:
    """True when a snapshot can be built from ``pull`` (the payload's pull request object)."""
    try:
        PullRequestSnapshot.from_github(pull, repository=repository)
    except (ValueError, TypeError, AttributeError, KeyError):
        return False
    return True


async def read_repo_config(
    client: Any, repository: str, ref: str | None, *, missing: TTLCache | None = None, fresh: bool = False
) -> RepoConfig:
    """The repository's ``.github/prguide.yml`` at ``ref`` (its default branch).

    A missing file gives the defaults; an unreadable, invalid or oversized one (over
    :data:`MAX_CONFIG_BYTES`) gives the defaults with the problem kept, and so does a
    403 (the installation lacks Contents: read): the file is optional, so it never
    costs the guide. The YAML is
    parsed in a worker thread, so a large file never holds up the event loop (and the
    webhook's answers). ``missing`` remembers repositories without the file: no call
    while remembered, unless ``fresh`` (a refresh, or a PR that changed the file), which
    asks GitHub and updates the memory. GitHub errors other than 404 propagate
    (``RetryLater``...).
    """
    key = (repository, ref or "")
    if missing is not None and not fresh and key in missing:
        return RepoConfig.default()
    try:
        text = await fetch_file(client, repository, REPO_CONFIG_PATH, ref or None, max_bytes=MAX_CONFIG_BYTES)
    except ValueError as exc:
        if missing is not None:
            missing.pop(key, None)  # the file exists, even if it cannot be used
        return RepoConfig.default(problems=(Problem(REPO_CONFIG_PATH, 1, str(exc)),))
    except Forbidden as exc:
        log.warning(
            "%s: cannot read %s (%s); the installation needs Contents: read", repository, REPO_CONFIG_PATH, exc.reason,
            extra={"repository": repository},
        )
        return RepoConfig.default(problems=(Problem(REPO_CONFIG_PATH, UNREAD, "config.forbidden"),))
    if missing is not None:
        if text is None:
            missing[key] = True
        else:
            missing.pop(key, None)
    if text is None:
        return RepoConfig.default()
    return await asyncio.to_thread(load_repo_config, text, REPO_CONFIG_PATH)


def changes_repo_config(snapshot: PullRequestSnapshot) -> bool:
    """True when the pull request adds or edits ``.github/prguide.yml``."""
    return any(f.filename == REPO_CONFIG_PATH and f.status != "removed" for f in snapshot.files)


def config_check_notices(config: RepoConfig) -> dict[str, tuple[str, ...]]:
    """The guide's check of a config file the pull request changed: valid, or its problems."""
    if any(p.line == UNREAD for p in config.problems):
        return config_notices(config.source, config.problems) or {}
    if not config.problems:
        return {lang: (t("config.ok", lang, {"file": config.source}),) for lang in ("en", "zh")}
    lines = tuple(f"`{config.source}:{p.line}`: {_problem_text(p)}" for p in config.problems[:MAX_NOTICE_PROBLEMS])
    return {lang: (t("config.bad", lang, {"file": config.source}),) + lines for lang in ("en", "zh")}


def config_notices(source: str, problems: tuple[Problem, ...]) -> dict[str, tuple[str, ...]] | None:
    """One notice per language saying the repository's config file was not used, and why.

    A file that could not be read at all (:data:`UNREAD`) gets its own sentence, naming
    the permission the installation lacks and who can grant it.
    """
    if not problems:
        return None
    unread = [p for p in problems if p.line == UNREAD]
    if unread:
        return {lang: (t(unread[0].message, lang, {"file": source}),) for lang in ("en", "zh")}
    shown = "; ".join(_problem_text(p) for p in problems[:MAX_NOTICE_PROBLEMS])
    more = len(problems) - MAX_NOTICE_PROBLEMS
    en_more = f" (and {more} more)" if more > 0 else ""
    zh_more = f"（另有 {more} 处）" if more > 0 else ""
    return {
        "en": (f"`{source}` could not be used, so the default settings apply: {shown}{en_more}.",),
        "zh": (f"`{source}` 无法使用，已按默认设置生成：{shown}{zh_more}。",),
    }


#: Refused labels named in the guide's notice, at most (the rest are counted).
MAX_NOTICE_LABELS = 10
_REFUSAL_KEYS = {"limit": "labels.over_limit", "forbidden": "labels.forbidden", "refused": "labels.refused"}


def label_refusal_notices(refusals: Any) -> dict[str, tuple[str, ...]]:
    """One notice line per language and refusal (:class:`bot.app.publish.LabelsRefused`):
    which labels are not on the pull request, and what would fix it."""
    out: dict[str, tuple[str, ...]] = {}
    for lang in ("en", "zh"):
        lines = []
        for refusal in refusals:
            params = {"names": list(refusal.names[:MAX_NOTICE_LABELS]), "count": len(refusal.names), "text": refusal.message}
            lines.append(t(_REFUSAL_KEYS.get(refusal.reason, "labels.refused"), lang, params))
        out[lang] = tuple(lines)
    return out


def merge_notices(*parts: Mapping[str, tuple[str, ...]] | None) -> dict[str, tuple[str, ...]]:
    """Notices by language, each part's lines in order."""
    out: dict[str, tuple[str, ...]] = {}
    for part in parts:
        for lang, lines in (part or {}).items():
            out[lang] = out.get(lang, ()) + tuple(lines)
    return out


def reviser(build: Callable[..., Any], notices: Mapping[str, tuple[str, ...]] | None) -> Callable[[Any], Awaitable[Any]]:
    """The ``revise`` callback of :func:`bot.app.publish.publish_guide`: ``build(notices=...)``
    again (in a worker thread), with the refused labels named after ``notices``."""

    async def revise(refusals: Any) -> Any:
        return await asyncio.to_thread(build, notices=merge_notices(notices, label_refusal_notices(refusals)))

    return revise


def _problem_text(problem: Problem) -> str:
    text = f"line {problem.line}: {problem.message}"
    return text.replace("`", "'")


def save_guide(store: Any, guide: Any, *, private: bool) -> None:
    """Store a published guide for the tag view; a store failure is logged, never fatal.

    A repository seen private stays private in the tag view (pages behind the view token).
    """
    try:
        # Private is sticky: a payload saying "public" may be an old one redelivered after the
        # repository was made private, so it never opens a repository the store holds as private.
        public = not private and store.visibility(guide.repository) != "private"
        store.save(
            dict(guide.data, markdown=guide.markdown),
            visibility="public" if public else "private",
            label_descriptions={name: spec.description for name, spec in guide.label_specs.items()},
        )
    except Exception:  # the comment is published; the tag view catches up on the next refresh
        log.exception("cannot store the guide of %s#%s for the tag view", guide.repository, guide.number)


#: The merged pull request route: ``pull_request.closed`` with ``merged: true``. Bots
#: are welcome here: merge queues and auto-merge bots merge real pull requests.
MERGED_PULL_REQUEST = Route(
    event="pull_request",
    actions=("closed",),
    handle=handle_pull_request_merged,
    accept=accept_merged,
    bots=True,
)


async def run_job(job: Job, services: Services, router: Router, *, max_attempts: int | None = None) -> None:
    """Run one queued job with its route's handler and log one line about it.

    The line (logger ``prguide.jobs``) carries ``delivery``, ``event``, ``action``,
    ``installation``, ``repository``, ``number``, ``attempt``, ``outcome``, ``state``
    (the job's state after this run: ``done``, ``queued`` for another attempt, or
    ``parked`` once a failed run was attempt ``max_attempts``, the worker pool's
    rule), ``api_calls`` and ``duration_ms``; the job-duration histogram gets the same
    outcome. Exceptions propagate to the worker pool, which retries, ends or parks
    the job (:class:`RetryLater`, :class:`GiveUp`, anything else).
    """
    started = time.perf_counter()
    ctx = JobContext(services, job)
    outcome = "error"
    level = logging.ERROR
    failed_state = "parked" if max_attempts is not None and job.attempts >= max_attempts else "queued"
    state = failed_state
    try:
        route = router.route(job.event, job.action)
        if route is None:
            raise GiveUp(f"no handler for {job.event}.{job.action}")
        await route.handle(job, ctx)
        outcome, level, state = ctx.outcome, logging.INFO, "done"
    except RetryLater as exc:
        outcome, level = "retry_later", logging.WARNING
        ctx.fields["reason"] = exc.reason
        raise
    except GiveUp as exc:
        outcome, level, state = "given_up", logging.WARNING, "done"
        ctx.fields["reason"] = exc.reason
        raise
    except asyncio.CancelledError:
        outcome, level, state = "interrupted", logging.WARNING, "queued"
        raise
    except Exception as exc:
        ctx.fields["reason"] = f"{type(exc).__name__}: {exc}"
        raise
    finally:
        duration = time.perf_counter() - started
        services.metrics.job_duration.labels(event=job.event, outcome=outcome).observe(duration)
        fields = {
            "delivery": job.delivery_id,
            "event": job.event,
            "action": job.action,
            "installation": job.installation_id,
            "key": job.key,
            "attempt": job.attempts,
            **ctx.fields,
            "outcome": outcome,
            "state": state,
            "api_calls": ctx.api_calls,
            "duration_ms": round(duration * 1000, 1),
        }
        log.log(level, "job %s %s: %s", job.event, job.key, outcome, extra=fields)
