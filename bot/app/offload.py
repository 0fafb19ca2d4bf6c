"""Calling a store from the event loop without stalling it.

The SQLite stores answer from a local file in microseconds: they are called directly,
as a hop to a thread would cost more than the call. The PostgreSQL stores say
``blocking = True``: each call waits for a network round trip, for a free pooled
connection (up to the pool's time-out) or for a database that is down, and on the
event loop that wait would stall every webhook and job of the process.
:func:`run_store` tells the two apart, so callers need not.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


def blocks(store: Any) -> bool:
    """True when ``store`` declares (``blocking = True``) that its calls wait on a database server."""
    return bool(getattr(store, "blocking", False))


async def run_store(store: Any, method: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
    """``method(*args, **kwargs)``: in a worker thread when ``store`` blocks, else at once on the loop.

    ``method`` is one of ``store``'s methods, or a function that only uses ``store``
    (several calls then share one hop). Returns what it returns and raises what it
    raises (the store's database errors). Cancelling the caller does not stop a call
    already running in a thread: it finishes, and its result is dropped.
    """
    if blocks(store):
        return await asyncio.to_thread(method, *args, **kwargs)
    return method(*args, **kwargs)
