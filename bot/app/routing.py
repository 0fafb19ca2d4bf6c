"""How deliveries reach the features: routes, the router, and one job's run.

A :class:`Router` maps ``(event, action)`` to a :class:`Route`: whether a delivery is
wanted (decided at once, on the request path, from the payload alone) and the job
handler that does the work later in the worker pool. A feature declares its routes
(see :mod:`bot.features`); the server asks the router and never knows the features.
A feature may also observe every verified delivery, routed or not, before it is
answered (:data:`Observer`, :meth:`Router.observe`): for facts every payload carries.

gidgethub's ``Router`` dispatches every registered callback in one step; prguide
needs two (a cheap decision before the 2xx answer, the work after it), hence this
small table.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import logging
import time
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from bot.app.config_memory import MISSING_CONFIG_TTL, MissingConfigs  # noqa: F401 - MISSING_CONFIG_TTL: re-exported
from bot.app.errors import GiveUp, RateLimited, RetryLater
from bot.app.fencing import before_write
from bot.app.jobstore import PRIORITY_LIVE, Job, QueuedDelivery
from bot.app.metrics import Metrics
from bot.app.offload import run_store
from bot.app.ratelimit import RateLimits
from bot.app.settings import Settings
from bot.app.webhook import Delivery
from bot.app.workers import job_fields
from bot.engine.repo_config import RepoConfig
from bot.engine.rules.model import Problem, RuleError

log = logging.getLogger("prguide.jobs")

#: Webhook events GitHub sends to every GitHub App, without a subscription ("Webhook
#: events and payloads": installation, installation_repositories).
ALWAYS_SENT = ("installation", "installation_repositories")

#: The features the app runs, as ``module:attribute`` naming a sequence of route
#: tuples. The platform names them instead of importing them: it knows how to run a
#: feature, never which ones exist (the composition lives in :mod:`bot.features`).
DEFAULT_FEATURES = "bot.features:FEATURES"


@dataclass
class Services:
    """What job handlers share across the process; built once by the app factory.

    ``clients``: a :class:`bot.app.github.ClientFactory` (``for_installation(id)``).
    ``auth``: the :class:`bot.app.auth.AppAuth` (``bot_login()``, ``forget(id)``).
    ``rules``: the :class:`bot.engine.rules.RuleSet` every repository starts from (shipped
    defaults plus ``PRGUIDE_RULES``). ``guides``: the tag view's
    :class:`bot.tagview.store.GuideStore`, or ``None``.
    """

    settings: Settings
    clients: Any
    auth: Any
    rules: Any
    metrics: Metrics
    guides: Any = None
    #: The :class:`bot.app.jobstore.JobStore`, so a job can see that a newer one supersedes it.
    store: Any = None
    #: A :class:`bot.app.shared_state.SharedState` counted once for all replicas (PostgreSQL mode), or None.
    shared: Any = None
    #: Repositories known to have no config file (:mod:`bot.app.config_memory`): GitHub's 404
    #: carries no ETag, so without this every guide would pay a call to learn it again.
    missing_configs: MissingConfigs = field(default_factory=MissingConfigs)
    #: Called after a job queues another (the worker pool's ``notify``), so it starts without a poll.
    notify: Callable[[], Any] | None = None
    #: Progress of long work, ``{task: {repository: {counter: n}}}``, shown by ``/healthz``
    #: (features fill it, e.g. ``"backfill"``); counts since this process started.
    progress: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)
    #: Every installation's rate-limit budget and background schedule (the clients' own,
    #: shared by replicas through the database); by default one in this process's memory.
    rate_limits: RateLimits = field(default_factory=RateLimits)

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

    async def enqueue(
        self,
        event: str,
        action: str | None,
        payload: Any,
        *,
        key: str,
        delivery_id: str,
        installation_id: int | None,
        delay: float = 0.0,
        priority: int = PRIORITY_LIVE,
    ) -> bool:
        """Queue a job of prguide's own (not from a webhook) in the job store; True when new.

        ``event``/``action`` pick the route (an internal event such as
        ``prguide.backfill``, or a GitHub event whose handler the job reuses);
        ``payload`` is JSON-serialisable (a ``dict``) or bytes; ``key`` serialises it
        with other jobs (``"owner/repo#N"`` for a pull request, so the job and that
        pull request's webhook deliveries never run at once). ``delivery_id`` is the
        idempotency key, like GitHub's ``X-GitHub-Delivery``: derive it from what the
        job is about (``"backfill:{installation}:{repo}:{page}"``) so a retried or
        doubled parent queues nothing twice. ``delay``: seconds before it is due, by
        the store's clock. ``priority``: :data:`~bot.app.jobstore.PRIORITY_BACKGROUND`
        for work that may wait while live jobs go first. A job that no longer holds
        its claim on the queue (taken over, or its installation's work cancelled)
        queues nothing: it raises :class:`bot.app.fencing.LeaseLost`. A store on a
        database server is written from a worker thread, so the event loop goes on
        meanwhile. Raises ``ValueError`` for empty ids or keys and the store's
        database error.
        """
        body = payload if isinstance(payload, (bytes, bytearray)) else json.dumps(payload).encode()
        queued = QueuedDelivery(
            delivery_id, event, key, bytes(body), installation_id=installation_id, action=action, priority=priority
        )
        store = self.services.store
        if store is None:
            raise RuntimeError("no job store: jobs cannot queue other jobs")
        await before_write(f"queueing {event} {delivery_id}")
        new = (await run_store(store, store.enqueue_many, [queued], delay=max(0.0, delay)))[0]
        if new and self.services.notify is not None:
            self.services.notify()
        return new


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
    the queued job in the worker pool. ``internal``: the event is prguide's own
    (queued by :meth:`JobContext.enqueue` or a :class:`Schedule`), never taken from a
    webhook. ``pull_request_only``: a delivery naming no pull request or issue is
    ignored; False for events about a whole installation (``installation``).
    """

    event: str
    actions: tuple[str, ...]
    handle: JobHandler
    accept: Callable[[Delivery], str | None] = _wanted
    bots: bool = False
    internal: bool = False
    pull_request_only: bool = True


#: A feature's look at every verified delivery (``ping`` aside), routed or not, before it is
#: answered: ``observer(delivery, services)``. It must be quick (a cached check, a store call
#: through :func:`bot.app.offload.run_store` at most): the answer waits for it, up to
#: :data:`OBSERVE_TIMEOUT` seconds. A failure is logged and never refuses the delivery.
Observer = Callable[[Delivery, Services], Awaitable[None]]
#: Seconds an observer may take before the delivery is answered without it.
OBSERVE_TIMEOUT = 2.0


@dataclass(frozen=True, slots=True)
class Schedule:
    """Periodic work: one job per installation per period, queued by the platform.

    ``name`` prefixes the job's delivery id, ``"{name}:{installation}:{period}"``
    (``period`` = Unix seconds // interval), so every replica queues the same id and
    the store keeps one (:mod:`bot.app.schedule`). The job has ``event``/``action``
    (a route, usually ``internal``), key ``"{name}:{installation}"`` and payload
    ``{"installation": {"id"}, "schedule", "period", "interval", "since"}`` where
    ``since`` is the previous period's start (Unix s). ``interval(settings)`` gives
    the seconds; 0 or less turns the schedule off.
    """

    name: str
    event: str
    action: str | None
    interval: Callable[[Settings], float]


class Router:
    """``(event, action)`` -> :class:`Route`; an action-specific route wins over an all-actions one."""

    def __init__(self, routes: Iterable[Route] = (), schedules: Iterable[Schedule] = (), observers: Iterable[Observer] = ()):
        self._routes: dict[tuple[str, str | None], Route] = {}
        for route in routes:
            self.add(route)
        #: The periodic work of the features (see :class:`Schedule`).
        self.schedules: tuple[Schedule, ...] = tuple(schedules)
        #: What looks at every delivery (see :data:`Observer`).
        self.observers: tuple[Observer, ...] = tuple(observers)

    async def observe(self, delivery: Delivery, services: Services) -> None:
        """Show ``delivery`` to every observer in turn; one that fails or takes over
        :data:`OBSERVE_TIMEOUT` seconds is logged (with the delivery) and skipped."""
        for observer in self.observers:
            fields = {"delivery": delivery.id, "event": delivery.event, "action": delivery.action,
                      "observer": getattr(observer, "__qualname__", repr(observer))}  # fmt: skip
            try:
                await asyncio.wait_for(observer(delivery, services), OBSERVE_TIMEOUT)
            except TimeoutError:
                log.warning("delivery %s: an observer took over %ss; answered without it", delivery.id, OBSERVE_TIMEOUT, extra=fields)
            except Exception:  # noqa: BLE001 -- an observer never costs the delivery
                log.exception("delivery %s: an observer failed", delivery.id, extra=fields)

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
        if route.internal:
            return None, f"{delivery.event} is prguide's own event, never a webhook's"
        if delivery.sender_is_bot and not route.bots:
            return None, f"sent by the bot {delivery.sender_login}"
        if delivery.key is None and route.pull_request_only:
            return None, "the delivery names no pull request"
        reason = route.accept(delivery)
        return (None, reason) if reason else (route, None)

    @property
    def events(self) -> tuple[str, ...]:
        """The webhook events an app subscribes to for these routes, sorted.

        Internal events are prguide's own, and GitHub sends :data:`ALWAYS_SENT` to
        every app without a subscription (a manifest cannot list them).
        """
        return tuple(sorted({
            event for (event, _), route in self._routes.items() if not route.internal and event not in ALWAYS_SENT
        }))


def load_features(spec: str = DEFAULT_FEATURES) -> Router:
    """A :class:`Router` with the routes of the features ``spec`` names.

    ``spec`` is ``"module:attribute"``; the attribute is a sequence of features, each a
    sequence of :class:`Route`; the module's optional ``SCHEDULES`` is a sequence of
    :class:`Schedule` sequences, one per feature with periodic work, and its optional
    ``OBSERVERS`` a sequence of :data:`Observer` sequences. Raises
    ``ImportError``/``AttributeError`` for a bad name and ``ValueError`` when two
    features claim the same event and action.
    """
    module_name, _, attribute = spec.partition(":")
    module = importlib.import_module(module_name)
    features: Sequence[Sequence[Route]] = getattr(module, attribute or "FEATURES")
    schedules: Sequence[Sequence[Schedule]] = getattr(module, "SCHEDULES", ())
    observers: Sequence[Sequence[Observer]] = getattr(module, "OBSERVERS", ())
    return Router(
        (route for routes in features for route in routes), (s for group in schedules for s in group),
        (o for group in observers for o in group),
    )


def default_router() -> Router:
    """The routes prguide ships: the merged pull request guide, ``/prguide`` commands, backfill,
    reconcile, the narrator and the tag view's visibility."""
    return load_features(DEFAULT_FEATURES)


async def run_job(job: Job, services: Services, router: Router, *, max_attempts: int | None = None) -> str:
    """Run one queued job with its route's handler, log one line about it and return its outcome.

    The line (logger ``prguide.jobs``) carries ``delivery``, ``event``, ``action``,
    ``installation``, ``repository``, ``number``, ``attempt``, ``outcome``, ``state``
    (the job's state after this run: ``done``, ``queued`` for another attempt, or
    ``parked`` once a failed run was attempt ``max_attempts``, the worker pool's
    rule), ``api_calls`` and ``duration_ms``; the job-duration histogram gets the same
    outcome, and it is returned (the worker pool records it with the job). Exceptions propagate to the worker pool, which retries, ends or parks
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
        return outcome
    except RateLimited as exc:
        outcome, level, state = "rate_limited", logging.INFO, "queued"
        ctx.fields["reason"] = exc.reason
        raise
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
            **job_fields(job),
            **ctx.fields,
            "outcome": outcome,
            "state": state,
            "api_calls": ctx.api_calls,
            "duration_ms": round(duration * 1000, 1),
        }
        log.log(level, "job %s %s: %s", job.event, job.key, outcome, extra=fields)
