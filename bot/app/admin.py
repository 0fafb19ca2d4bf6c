"""Job administration over HTTP: list parked jobs and queue them again.

A job that failed on every attempt is parked rather than dropped (see
:mod:`bot.app.jobs`); these routes let an operator see why and run it again once the
cause is fixed, without restarting the server:

- ``GET /admin/jobs/parked``: ``{"parked": [{id, delivery, event, action, key,
  attempts, error, created_at, updated_at}]}``, oldest first (times in Unix seconds,
  ``error`` the last error as recorded, a traceback for unexpected errors).
- ``POST /admin/jobs/retry``: queue every parked job again, or only ``{"id": N}``
  (JSON body); answers ``{"retried": count}``.

Both need ``Authorization: Bearer <PRGUIDE_ADMIN_TOKEN>``. Without that setting they
answer 403 and do nothing: the webhook secret is shared with GitHub and the tag
view's token is for reading guides, so neither may re-run jobs.
"""

from __future__ import annotations

import hmac
import json
import logging
from typing import Any

from aiohttp import web

from bot.app.errors import database_errors
from bot.app.offload import run_store

log = logging.getLogger("prguide.admin")

#: Parked jobs one listing shows, at most.
MAX_LISTED = 500


def add_routes(app: web.Application, state_key: web.AppKey) -> None:
    """Mount the admin routes; ``app[state_key]`` is the server's ``AppState``."""

    async def parked(request: web.Request) -> web.Response:
        state = request.app[state_key]
        refused = _refuse(request, state)
        if refused is not None:
            return refused
        try:
            jobs = await run_store(state.store, state.store.parked, MAX_LISTED)
        except database_errors() as exc:
            return web.json_response({"error": f"job database: {exc}"}, status=503)
        return web.json_response(
            {
                "parked": [
                    {
                        "id": job.id,
                        "delivery": job.delivery_id,
                        "event": job.event,
                        "action": job.action,
                        "key": job.key,
                        "attempts": job.attempts,
                        "error": job.error,
                        "created_at": job.created_at,
                        "updated_at": job.updated_at,
                    }
                    for job in jobs
                ]
            }
        )

    async def retry(request: web.Request) -> web.Response:
        state = request.app[state_key]
        refused = _refuse(request, state)
        if refused is not None:
            return refused
        body = await request.read()
        job_id = None
        if body.strip():
            try:
                data = json.loads(body)
            except (UnicodeDecodeError, json.JSONDecodeError):
                return web.json_response({"error": 'expected no body or {"id": JOB_ID}'}, status=400)
            job_id = data.get("id") if isinstance(data, dict) else None
            if not isinstance(data, dict) or set(data) - {"id"} or not isinstance(job_id, int) or isinstance(job_id, bool):
                return web.json_response({"error": 'expected no body or {"id": JOB_ID}'}, status=400)
        try:
            count = await state.pool.retry_parked(job_id)
        except database_errors() as exc:
            return web.json_response({"error": f"job database: {exc}"}, status=503)
        log.warning(
            "queued %d parked job(s) again", count,
            extra={"job_id": job_id, "retried": count, "remote": request.remote},
        )
        if job_id is not None and count == 0:
            return web.json_response({"error": f"no parked job with id {job_id}", "retried": 0}, status=404)
        return web.json_response({"retried": count})

    app.router.add_get("/admin/jobs/parked", parked)
    app.router.add_post("/admin/jobs/retry", retry)


def has_admin_token(request: web.Request, settings: Any) -> bool:
    """True when ``request`` carries ``Authorization: Bearer <PRGUIDE_ADMIN_TOKEN>``; always
    False while ``settings.admin_token`` is unset. Compared in constant time."""
    expected = settings.admin_token
    if not expected:
        return False
    scheme, _, given = request.headers.get("Authorization", "").partition(" ")
    # Compared as bytes: compare_digest refuses str with non-ASCII characters.
    return scheme.lower() == "bearer" and hmac.compare_digest(given.strip().encode("utf-8", "surrogateescape"), expected.encode("utf-8"))


def _refuse(request: web.Request, state: Any) -> web.Response | None:
    """The refusal to send, or ``None`` when the request may go ahead."""
    if not state.settings.admin_token:
        return web.json_response({"error": "job administration is off; set PRGUIDE_ADMIN_TOKEN to turn it on"}, status=403)
    if not has_admin_token(request, state.settings):
        log.warning("refused admin request to %s", request.path, extra={"remote": request.remote})
        return web.json_response(
            {"error": "missing or wrong admin token"}, status=401, headers={"WWW-Authenticate": 'Bearer realm="prguide admin"'}
        )
    if state.store is None or state.pool is None:
        return web.json_response({"error": "prguide is starting or stopping"}, status=503)
    return None
