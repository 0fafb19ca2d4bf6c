"""What became of one webhook delivery: ``GET /webhook/deliveries/{delivery}``.

The webhook answers ``202`` as soon as a delivery is queued; the job runs later in
the worker pool (:mod:`bot.app.workers`). Whoever sent the delivery (``prguide send``,
a test, a script replaying deliveries) asks here how its job ended, by the
``X-GitHub-Delivery`` id it sent:

- ``200`` ``{"delivery", "event", "action", "key", "state", "outcome", "reason",
  "attempts", "due_in_s", "created_at", "updated_at"}``: ``state`` is ``queued``,
  ``running``, ``done`` or ``parked``; a ``done`` job's ``outcome`` is ``succeeded``,
  ``given_up`` or ``superseded``; ``reason`` is what a succeeded job did (its
  handler's outcome: ``created``, ``edited``, ``done``, ``queued_2``...), why it was
  given up, or the last line of the last error of a job that failed (queued again,
  due in ``due_in_s`` seconds, or parked). Times are Unix seconds.
- ``404`` when no job has that delivery id: it was never queued (the webhook
  answered 200, ignored), or it finished more than a week ago and was pruned.
- ``401`` without the right signature, ``503`` while the job database does not answer.

The request is signed like a delivery, with the webhook secret: header
``X-Hub-Signature-256`` is ``sha256=`` and the hex HMAC-SHA256 of
:func:`status_message` (``b"delivery-status:" + id``). Whoever can send deliveries
may read what became of them; nobody else learns even whether a delivery exists.
The prefix keeps a status signature from ever being a delivery's, and back.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from aiohttp import web

from bot.app.errors import database_errors
from bot.app.offload import run_store
from bot.app.webhook import SIGNATURE_HEADER, SignatureError, verify_signature

log = logging.getLogger("prguide.server")

#: Characters of a reason shown at most (a parked job's error is a whole traceback).
MAX_REASON = 500


def status_message(delivery_id: str) -> bytes:
    """The bytes a status request signs for ``delivery_id`` (see the module)."""
    return b"delivery-status:" + delivery_id.encode("utf-8")


def describe(row: dict[str, Any], *, now: float | None = None) -> dict[str, Any]:
    """The answer for one job row (as :meth:`bot.app.jobstore.JobStorage.by_delivery` returns it)."""
    error = row.get("error")
    reason = None
    if isinstance(error, str) and error.strip():
        # A traceback's last line names the exception; that is what a person needs here.
        reason = error.strip().splitlines()[-1].strip()[:MAX_REASON]
    due_in = None
    if row.get("state") == "queued" and isinstance(row.get("not_before"), (int, float)):
        due_in = round(max(0.0, float(row["not_before"]) - (time.time() if now is None else now)), 3)
    return {
        "delivery": row.get("delivery_id"),
        "event": row.get("event"),
        "action": row.get("action"),
        "key": row.get("key"),
        "state": row.get("state"),
        "outcome": row.get("outcome"),
        "reason": reason,
        "attempts": row.get("attempts"),
        "due_in_s": due_in,
        "created_at": row.get("created_at"),
        "updated_at": row.get("updated_at"),
    }


def add_routes(app: web.Application, state_key: web.AppKey) -> None:
    """Mount ``GET /webhook/deliveries/{delivery}``; ``app[state_key]`` is the server's ``AppState``."""

    async def delivery_status(request: web.Request) -> web.Response:
        state = request.app[state_key]
        delivery_id = request.match_info["delivery"]
        try:
            verify_signature(state.settings.webhook_secret, status_message(delivery_id), request.headers.get(SIGNATURE_HEADER))
        except SignatureError as exc:
            log.warning("refused a delivery status request: %s", exc.message, extra={"remote": request.remote})
            return web.json_response({"error": exc.message}, status=401)
        if state.store is None:
            return web.json_response({"error": "prguide is starting or stopping"}, status=503)
        try:
            row = await run_store(state.store, state.store.by_delivery, delivery_id)
        except database_errors() as exc:
            return web.json_response({"error": f"job database: {exc}"}, status=503)
        if row is None:
            return web.json_response(
                {"error": f"no job for delivery {delivery_id}: never queued (ignored), or finished long ago"}, status=404
            )
        return web.json_response(describe(row))

    app.router.add_get("/webhook/deliveries/{delivery}", delivery_status)
