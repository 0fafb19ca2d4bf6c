"""The GitHub App's web server: webhook intake, health and metrics.

A delivery is verified, routed, written to the durable job queue and answered with
202 at once; the worker pool does the work afterwards (GitHub stops waiting for an
answer after 10 seconds, "Handling webhook deliveries"). Nothing is built at import
time: :func:`create_app` makes every part, and its cleanup context opens and closes
the shared HTTP session, the job store and the worker pool.

Routes: ``POST /webhook``, ``GET /webhook/deliveries/{id}`` (what became of a delivery,
see :mod:`bot.app.delivery_status`), ``GET /healthz``, ``GET /metrics``, the job admin routes
under ``/admin/jobs`` (see :mod:`bot.app.admin`), and, on the ``all`` and ``web`` roles,
the tag view's pages under ``/repos`` (see :mod:`bot.tagview.web`), served from the same database.
"""

from __future__ import annotations

import asyncio
import logging
import signal
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import aiohttp
from aiohttp import web

from bot import __version__
from bot.app.admin import add_routes as add_admin_routes, has_admin_token
from bot.app.config_memory import MissingConfigs
from bot.app.delivery_status import add_routes as add_status_routes
from bot.app.errors import database_errors
from bot.app.routing import Router, Services, default_router, run_job
from bot.app.jobs import QueuedDelivery
from bot.app.logging import configure_logging, redact_value
from bot.app.malloc import limit_arenas
from bot.app.metrics import Metrics, create_metrics
from bot.app.offload import run_store
from bot.app.settings import Settings, SettingsError, role_problem, secret_warnings
from bot.app.webhook import MAX_BODY_BYTES, PayloadTooLarge, WebhookError, parse_delivery

log = logging.getLogger("prguide.server")

#: Seconds running jobs get to finish on shutdown before they are put back in the queue.
STOP_TIMEOUT = 20.0
#: Time limit of one GitHub API request, seconds (the client retries within its policy).
HTTP_TIMEOUT = aiohttp.ClientTimeout(total=30, connect=10)
#: ``installation`` actions after which the installation's cached token is useless (gone,
#: suspended) or out of date: a token carries the permissions and repositories it was made
#: for ("Create an installation access token for an app"), so accepting new permissions
#: or changing the repositories needs a new one.
FORGET_TOKEN_ACTIONS = ("deleted", "suspend", "new_permissions_accepted")
#: Events after which the installation's cached token is dropped, whatever their action.
FORGET_TOKEN_EVENTS = ("installation_repositories",)

_REASONS = {401: "unauthorized", 400: "bad_request", 413: "too_large", 415: "unsupported_media_type"}


@dataclass
class AppState:
    """One app's parts; ``store``, ``pool`` and ``services`` exist while the app runs."""

    settings: Settings
    router: Router
    metrics: Metrics
    store: Any = None
    pool: Any = None
    intake: Any = None
    services: Services | None = None
    options: dict[str, Any] = field(default_factory=dict)
    #: The start-up check of the app's credentials (one ``GET /app``), while the app runs.
    credential_check: asyncio.Task | None = None
    #: The :class:`bot.app.schedule.Scheduler` of the features' periodic work, and its task.
    scheduler: Any = None
    scheduler_task: asyncio.Task | None = None


STATE = web.AppKey("prguide", AppState)


def create_app(
    settings: Settings,
    *,
    session: aiohttp.ClientSession | None = None,
    router: Router | None = None,
    rules: Any = None,
    auth: Any = None,
    guides: Any = None,
    tag_view: bool = True,
    metrics: Metrics | None = None,
    pool_options: Mapping[str, Any] | None = None,
    client_options: Mapping[str, Any] | None = None,
    stop_timeout: float = STOP_TIMEOUT,
    clock: Callable[[], float] | None = None,
) -> web.Application:
    """Build the web application; nothing starts until the app does.

    ``session``: a shared ``aiohttp.ClientSession`` (default: one made at start-up and
    closed at clean-up). ``router``: what prguide acts on (default
    :func:`bot.app.routing.default_router`, the features of :mod:`bot.features`). ``rules``: the base
    :class:`bot.engine.rules.RuleSet` (default: ``load_rules(settings.rules)`` at start-up,
    raising ``RuleError`` there). ``auth``: an :class:`bot.app.auth.AppAuth` (default:
    made from the settings). ``guides``: the tag view's
    :class:`bot.tagview.store.GuideStorage`; by default, with ``tag_view`` true, one is
    opened here on ``settings.database_url`` (PostgreSQL) or else ``settings.db_path`` (the one piece of I/O in the factory, as the
    tag view's routes need it) and closed at clean-up. The tag view's routes are served by
    the ``all`` and ``web`` roles; a ``worker`` stores guides only. ``tag_view=False``: no tag view
    routes, and guides are not stored.
    ``pool_options``/``client_options``: extra keyword arguments for
    :class:`bot.app.jobs.WorkerPool` and :class:`bot.app.github.ClientFactory` (tests pass
    fake clocks and sleeps). ``stop_timeout``: grace, in seconds, for running jobs on
    shutdown. ``clock``: the wall clock (Unix seconds) of the SQLite job store, the rate
    limits, the GitHub clients, the app's tokens, the worker pool and the memory of repositories
    without a config file (tests pass a fake one).
    """
    redact_value(settings.llm_api_key)  # the model server's key may look like anything
    # aiohttp answers 413 itself for a body over the cap, before it is all in memory.
    app = web.Application(client_max_size=MAX_BODY_BYTES)
    if tag_view:
        if guides is None and settings.database_url:
            from bot.tagview.pgstore import PgGuideStore

            # Bound at start-up to the replica's one pool (see _lifecycle).
            guides = PgGuideStore(None)
        elif guides is None:
            from bot.tagview.store import GuideStore

            guides = GuideStore(settings.db_path)
            app.on_cleanup.append(_closer(guides))
        if settings.role in ("all", "web"):
            # A worker stores guides but serves no pages: the web replicas behind the load balancer do.
            from bot.tagview.web import add_routes

            add_routes(app, guides, settings)
    app[STATE] = AppState(
        settings=settings,
        router=router if router is not None else default_router(),
        metrics=metrics if metrics is not None else create_metrics(),
        options={
            "session": session,
            "rules": rules,
            "auth": auth,
            "guides": guides,
            "pool": dict(pool_options or {}),
            "client": dict(client_options or {}),
            "stop_timeout": stop_timeout,
            "clock": clock,
        },
    )
    app.router.add_post("/webhook", webhook)
    app.router.add_get("/healthz", healthz)
    app.router.add_get("/metrics", metrics_view)
    add_admin_routes(app, STATE)
    add_status_routes(app, STATE)
    app.cleanup_ctx.append(_lifecycle)
    return app


def _closer(store: Any) -> Any:
    async def close(_app: web.Application) -> None:
        store.close()

    return close


async def _lifecycle(app: web.Application) -> AsyncIterator[None]:
    # Imported here: the server module stays importable (and cheap) without them.
    from bot.app.auth import AppAuth
    from bot.app.db import Checkpointer
    from bot.app.github import ClientFactory
    from bot.app.intake import Intake
    from bot.app.jobs import JobStore, WorkerPool
    from bot.app.ratelimit import RateLimits
    from bot.app.shared_state import SqliteRateLimits

    state = app[STATE]
    settings, options = state.settings, state.options
    refused = role_problem(settings.role, settings.database_url)
    if refused:
        raise SettingsError([f"role {refused}"])
    own_session = options["session"] is None
    session = options["session"] or aiohttp.ClientSession(timeout=HTTP_TIMEOUT)
    store = limits = None
    timed = {"clock": options["clock"]} if options["clock"] is not None else {}
    checkpointer = Checkpointer(str(settings.db_path))
    runs_jobs = settings.role in ("all", "worker")
    try:
        rules = options["rules"]
        if rules is None:
            from bot.engine.rules import load_rules

            rules = load_rules(settings.rules)
        auth = options["auth"] or AppAuth(
            str(settings.app_id),
            settings.private_key,
            api_url=settings.api_url,
            session=session,
            on_response=state.metrics.github_hook,
            **timed,
        )
        shared = None
        if settings.database_url:
            from bot.app import pg
            from bot.app.pgjobs import PgJobStore
            from bot.app.shared_state import PgRateLimits, PgSharedState

            # One pool per replica for the queue and the shared state; every registered
            # component is migrated (one replica at a time, under the advisory lock).
            pg.load_components()
            database = await asyncio.to_thread(pg.from_settings, settings, migrate_components=None)
            store = PgJobStore(database, lease=settings.job_lease)
            shared = PgSharedState(database)
            limits = PgRateLimits(database)
            if not getattr(options["guides"], "bound", True):
                options["guides"].bind(database)  # the tag view shares the replica's pool
        if store is None:
            store = JobStore.open(str(settings.db_path), **timed)
            limits = SqliteRateLimits.open(settings.db_path, **timed)
        rate_limits = RateLimits(limits, **timed)
        client_options = {"shared": shared, "rate_limits": rate_limits, **options["client"]}
        if timed:
            client_options.setdefault("wall_clock", options["clock"])
        clients = ClientFactory(auth, session=session, on_response=state.metrics.github_hook, **client_options)
        # The webhook commits every delivery on the event loop: WAL checkpoints (and
        # their fsync) go to a thread instead.
        if not settings.database_url and checkpointer.start():
            checkpointer.adopt(store.conn)
            checkpointer.adopt(limits.conn)
            if options["guides"] is not None:
                checkpointer.adopt(options["guides"].connection)
        state.services = Services(
            settings=settings, clients=clients, auth=auth, rules=rules, metrics=state.metrics, guides=options["guides"],
            store=store, shared=shared, rate_limits=rate_limits, missing_configs=MissingConfigs(shared=shared, **timed),
        )
        services, router = state.services, state.router

        async def handle(job: Any) -> str:
            return await run_job(job, services, router, max_attempts=pool.max_attempts)

        pool = WorkerPool(store, handle, concurrency=settings.workers, **{**timed, **options["pool"]})
        state.store, state.pool = store, pool
        state.intake = Intake(store, on_queued=pool.notify) if settings.role in ("all", "web") else None
        services.notify = pool.notify
        resumed = pool.start() if runs_jobs else 0
        installations = getattr(auth, "installations", None)
        # Schedules queue jobs, so only a replica that runs jobs keeps them (one job per period in the database).
        if runs_jobs and router.schedules and installations is not None:
            from bot.app.schedule import Scheduler

            state.scheduler = Scheduler(router.schedules, settings, store, installations, notify=pool.notify)
            state.scheduler_task = asyncio.create_task(state.scheduler.run(), name="prguide-scheduler")
        # A wrong key or app id would otherwise look healthy until the first delivery.
        state.credential_check = asyncio.create_task(check_credentials(auth), name="prguide-credential-check")
        for warning in secret_warnings(settings.webhook_secret):
            log.warning(warning)
        # Queued jobs left by the previous process run too; counting only the interrupted
        # ones ("0 resumed" with 61 waiting) read as if the backlog had been lost.
        waiting = store.counts().get("queued", 0) if runs_jobs else 0
        log.info(
            "prguide %s ready (%s, role %s): %d worker(s), %d job(s) queued (%d of them interrupted by the previous process)",
            __version__, settings.backend, settings.role, settings.workers if runs_jobs else 0, waiting, resumed,
            extra={"events": list(router.events), "db": _database_label(settings), "role": settings.role},
        )
    except BaseException:
        checkpointer.stop()
        if store is not None:
            store.close()
        if isinstance(limits, SqliteRateLimits):
            limits.close()
        if own_session:
            await session.close()
        raise

    yield

    if state.scheduler_task is not None:
        state.scheduler_task.cancel()
        await asyncio.gather(state.scheduler_task, return_exceptions=True)
        state.scheduler_task = None
    if state.credential_check is not None:
        state.credential_check.cancel()
        await asyncio.gather(state.credential_check, return_exceptions=True)
        state.credential_check = None
    # aiohttp has stopped accepting connections by now; let running jobs finish.
    interrupted = await pool.stop(options["stop_timeout"])
    if interrupted:
        log.warning("%d job(s) put back in the queue for the next start", len(interrupted))
    checkpointer.stop()
    store.close()
    if isinstance(limits, SqliteRateLimits):
        limits.close()
    state.store = state.pool = state.intake = None
    if own_session:
        await session.close()
    log.info("prguide stopped")


def _database_label(settings: Settings) -> str:
    if settings.database_url:
        from bot.app.pg import redact

        return redact(settings.database_url)
    return str(settings.db_path)


async def check_credentials(auth: Any) -> None:
    """Ask GitHub once whether it accepts the app's credentials; log what it says.

    A refusal is kept by ``auth`` (``credentials_problem``) and shown by ``/healthz``;
    GitHub being unreachable is only logged, as it says nothing about the credentials.
    """
    check = getattr(auth, "check_credentials", None)
    if check is None:
        return
    try:
        problem = await check()
    except Exception as exc:  # GitHub down or unreachable: jobs will retry anyway
        log.warning("cannot check the app's credentials with GitHub: %s", exc)
        return
    if problem is None:
        log.info("GitHub accepts the app's credentials")


async def webhook(request: web.Request) -> web.Response:
    """``POST /webhook``: verify, route and durably queue one GitHub delivery.

    Answers 401 (bad or missing ``X-Hub-Signature-256``), 400 (malformed delivery),
    415 (not JSON), 413 (over GitHub's 25 MB cap), 200 ``pong`` for ``ping``, 200 for
    deliveries prguide ignores (with the reason), 202 when queued or already queued,
    503 when the job store is unavailable (GitHub shows the failure; the delivery can
    be redelivered).
    """
    state = request.app[STATE]
    try:
        body = await request.read()
    except web.HTTPRequestEntityTooLarge:
        body = None
    try:
        if body is None:
            raise PayloadTooLarge(f"body exceeds GitHub's {MAX_BODY_BYTES}-byte cap")
        delivery = parse_delivery(request.headers, body, secret=state.settings.webhook_secret)
    except WebhookError as exc:
        # The event header of an unverified delivery is not to be trusted, even as a label
        # (an oversized body is refused before its signature can be checked).
        event = request.headers.get("X-GitHub-Event", "") if exc.status not in (401, 413) else "unverified"
        outcome = _REASONS.get(exc.status, str(exc.status))
        state.metrics.deliveries.labels(event=event[:64] or "none", outcome=outcome).inc()
        log.warning(
            "refused delivery: %s", exc.message,
            extra={"delivery": request.headers.get("X-GitHub-Delivery", "")[:64], "status": exc.status, "remote": request.remote},
        )
        return web.json_response({"error": exc.message}, status=exc.status)

    fields = {"delivery": delivery.id, "event": delivery.event, "action": delivery.action, "installation": delivery.installation_id}

    if delivery.event == "ping":
        return _answer(state, delivery, "pong", 200, fields, text="pong")

    if state.services is not None:
        # Facts every payload carries (a repository's visibility) are taken before the answer.
        await state.router.observe(delivery, state.services)
    route, reason = state.router.decide(delivery)
    if (delivery.event == "installation" and delivery.action in FORGET_TOKEN_ACTIONS) or delivery.event in FORGET_TOKEN_EVENTS:
        if state.services is not None and delivery.installation_id is not None:
            state.services.auth.forget(delivery.installation_id)
        if route is None:  # a feature may still act on it (new repositories to backfill)
            return _answer(state, delivery, "handled", 200, fields, text=f"{delivery.event} {delivery.action}: token forgotten")

    if route is None:
        return _answer(state, delivery, "ignored", 200, {**fields, "reason": reason}, json={"ignored": reason})

    if state.intake is None:
        why = "this replica only runs jobs (role worker)" if state.settings.role == "worker" else "prguide is starting or stopping"
        return _answer(state, delivery, "unavailable", 503, fields, json={"error": why})
    queued_delivery = QueuedDelivery(
        delivery.id, delivery.event, delivery.key, delivery.body, installation_id=delivery.installation_id, action=delivery.action
    )
    try:
        queued = await state.intake.enqueue(queued_delivery)
    except database_errors() as exc:
        # 503, not 500: GitHub shows the failure and the delivery can be redelivered.
        log.exception("cannot queue delivery %s", delivery.id, extra=fields)
        return _answer(state, delivery, "unavailable", 503, fields, json={"error": f"job queue unavailable: {exc}"})
    outcome = "queued" if queued else "duplicate"
    return _answer(state, delivery, outcome, 202, {**fields, "key": delivery.key}, json={outcome: delivery.key, "delivery": delivery.id})


def _answer(state: AppState, delivery: Any, outcome: str, status: int, fields: Mapping[str, Any], *, text: str | None = None, json: Any = None) -> web.Response:
    state.metrics.deliveries.labels(event=delivery.event, outcome=outcome).inc()
    log.info("delivery %s %s: %s", delivery.event, delivery.action or "-", outcome, extra={**fields, "outcome": outcome})
    if json is not None:
        return web.json_response(json, status=status)
    return web.Response(text=text or outcome, status=status)


async def healthz(request: web.Request) -> web.Response:
    """``GET /healthz``: 200 with queue counts while all is well, else 503.

    Body: ``{"ok", "status", "version", "queue": {state: count}, "parked",
    "oldest_queued_age_s"}``, plus ``progress`` once a feature reports some: with the admin
    token (``Authorization: Bearer <PRGUIDE_ADMIN_TOKEN>``) by repository (``{task:
    {repository: {counter: n}}}``, e.g. a backfill's ``target``, ``queued``, ``built``,
    ``skipped``, ``pending``, ``api_calls``), without it only the sums and the number of
    ``repositories`` (``{task: {"repositories": n, counter: total}}``): the names of
    private repositories are no one else's business. ``status`` is ``"ok"``, or ``"degraded"`` (503, with
    ``problems``, one sentence each) while GitHub refuses the app's credentials (a wrong
    private key or app id: nothing can be published). Deliveries are still accepted and
    kept meanwhile. A later request GitHub accepts makes it ``"ok"`` again. The job
    database not answering is a 503 with ``error``.
    """
    state = request.app[STATE]
    if state.store is None:
        return web.json_response({"ok": False, "version": __version__, "error": "not started"}, status=503)
    database = {"backend": state.settings.backend, "reachable": True}
    try:
        counts = await run_store(state.store, state.store.counts)
        oldest = await run_store(state.store, state.store.oldest_queued_age)
    except database_errors() as exc:
        database["reachable"] = False
        return web.json_response(
            {"ok": False, "version": __version__, "error": f"job database: {exc}", "database": database}, status=503
        )
    state.metrics.set_job_counts(counts)
    problems = []
    credentials = getattr(state.services.auth, "credentials_problem", None) if state.services is not None else None
    if isinstance(credentials, str):
        problems.append(credentials)
    body: dict[str, Any] = {
        "ok": not problems,
        "status": "degraded" if problems else "ok",
        "version": __version__,
        "queue": counts,
        "parked": counts.get("parked", 0),
        "oldest_queued_age_s": None if oldest is None else round(oldest, 3),
        "database": database,
        "role": state.settings.role,
    }
    if state.services is not None and state.services.progress:
        progress = state.services.progress
        body["progress"] = progress if has_admin_token(request, state.settings) else progress_counts(progress)
    if problems:
        body["problems"] = problems
    return web.json_response(body, status=503 if problems else 200)


def progress_counts(progress: Mapping[str, Mapping[str, Mapping[str, Any]]]) -> dict[str, dict[str, int]]:
    """``{task: {repository: {counter: n}}}`` without the repositories' names:
    ``{task: {"repositories": how many, counter: sum over them}}`` (numeric counters only)."""
    out: dict[str, dict[str, int]] = {}
    for task, board in progress.items():
        sums: dict[str, int] = {"repositories": len(board)}
        for counters in board.values():
            for name, value in counters.items():
                if isinstance(value, int) and not isinstance(value, bool):
                    sums[name] = sums.get(name, 0) + value
        out[task] = sums
    return out


async def metrics_view(request: web.Request) -> web.Response:
    """``GET /metrics``: this app's Prometheus metrics (text exposition format)."""
    state = request.app[STATE]
    state.metrics.info.labels(version=__version__, backend=state.settings.backend, role=state.settings.role).set(1)
    if state.store is not None:
        try:
            state.metrics.set_job_counts(await run_store(state.store, state.store.counts))
        except database_errors():
            log.exception("cannot count jobs for /metrics")
    if state.services is not None:
        backfills = state.services.progress.get("backfill", {}).values()
        state.metrics.backfill_pending.set(sum(int(p.get("pending", 0)) for p in backfills))
    body, content_type = state.metrics.render()
    response = web.Response(body=body)
    response.headers["Content-Type"] = content_type
    return response


def run(settings: Settings) -> None:
    """Serve until SIGINT/SIGTERM (``prguide serve``), with JSON logs on stderr.

    See :func:`serve`. Returns after a graceful stop. Before any thread starts, glibc's
    malloc arenas are capped (:func:`bot.app.malloc.limit_arenas`), so memory the guides
    built in worker threads freed is reused by the next jobs instead of staying resident.
    """
    limit_arenas()
    configure_logging(settings.log_level)
    redact_value(settings.llm_api_key)
    asyncio.run(serve(settings))


async def serve(settings: Settings, *, stop: asyncio.Event | None = None, **app_options: Any) -> None:
    """Run the app on ``settings.host``/``settings.port`` until SIGINT/SIGTERM or ``stop`` is set.

    Logs ``listening`` with the bound addresses once connections are accepted (with
    ``PORT=0`` the system picks the port). On a signal: stop accepting connections, let
    in-flight requests finish, then stop the worker pool (running jobs get
    :data:`STOP_TIMEOUT` seconds; the rest are queued again for the next start).
    ``app_options`` go to :func:`create_app`.
    """
    stop = stop or asyncio.Event()
    loop = asyncio.get_running_loop()
    signals = (signal.SIGINT, signal.SIGTERM)
    for sig in signals:
        loop.add_signal_handler(sig, stop.set)
    runner = web.AppRunner(create_app(settings, **app_options), access_log=None, shutdown_timeout=5.0)
    try:
        await runner.setup()
        site = web.TCPSite(runner, settings.host, settings.port)
        await site.start()
        addresses = [f"{host}:{port}" for host, port, *_ in runner.addresses]
        log.info("listening on %s", ", ".join(addresses), extra={"addresses": addresses})
        await stop.wait()
        log.info("stopping: no new deliveries are accepted")
    finally:
        await runner.cleanup()
        for sig in signals:
            loop.remove_signal_handler(sig)


async def wait_idle(app: web.Application) -> None:
    """Return once the app's worker pool has nothing due and nothing running."""
    pool = app[STATE].pool
    if pool is None:
        raise RuntimeError("the app is not running")
    await pool.wait_idle()


