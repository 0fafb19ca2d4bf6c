"""Calling a store from the event loop without stalling it.

The SQLite stores answer from a local file in microseconds: they are called directly,
as a hop to a thread would cost more than the call. The PostgreSQL stores say
``blocking = True``: each call waits for a network round trip, for a free pooled
connection (up to the pool's time-out) or for a database that is down, and on the
event loop that wait would stall every webhook and job of the process.
:func:`run_store` tells the two apart, so callers need not.

Blocking calls get threads of their own (at most :data:`DATABASE_THREADS`), not the
loop's default executor: guides are built there, and a database outage that holds
every waiting call for the pool's time-out must not hold guide builds too (nor a slow
3,000-file build hold the database calls).
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from bot.app.malloc import trim

T = TypeVar("T")

#: Threads for calls that wait on a database server, per process (callers beyond it queue).
DATABASE_THREADS = 16
_executor: ThreadPoolExecutor | None = None
#: Threads building guides, per process (jobs beyond it queue for one). The engine is pure
#: Python, so the interpreter runs one build at a time whatever the count: more threads
#: add no speed, but each build in progress holds its whole analysis (parsed hunks, names,
#: rendered text), and with 64 jobs that memory, not the CPU, set the process's peak.
#: One: a second thread let a small guide through while a large one was built, but two
#: large builds at once (the 64 largest corpus pull requests, redelivered) took the peak
#: from 117 to 123-126 MiB (bench/memory.py, bench/HISTORY.md section 13).
GUIDE_THREADS = 1
_guide_executor: ThreadPoolExecutor | None = None


def _database_executor() -> ThreadPoolExecutor:
    global _executor
    if _executor is None:  # made on first use, from the event loop's thread
        _executor = ThreadPoolExecutor(max_workers=DATABASE_THREADS, thread_name_prefix="prguide-db")
    return _executor


def _guides_executor() -> ThreadPoolExecutor:
    global _guide_executor
    if _guide_executor is None:  # made on first use, from the event loop's thread
        _guide_executor = ThreadPoolExecutor(max_workers=GUIDE_THREADS, thread_name_prefix="prguide-guide")
    return _guide_executor


async def run_build(build: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
    """``build(*args, **kwargs)`` (a guide build, CPU-bound) in one of :data:`GUIDE_THREADS` threads.

    As ``asyncio.to_thread`` (the call sees the caller's context variables, so its log
    lines carry the job's fields), but never more than :data:`GUIDE_THREADS` builds at
    once in the process: the others wait their turn. Returns what ``build`` returns and
    raises what it raises. Afterwards, the heap's free pages go back to the system
    (:func:`bot.app.malloc.trim`, at most once a second).
    """
    call = functools.partial(contextvars.copy_context().run, _build_then_trim, build, *args, **kwargs)
    return await asyncio.get_running_loop().run_in_executor(_guides_executor(), call)


def _build_then_trim(build: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
    # A build frees most of what it allocated (parsed hunks, names, text pieces) as it
    # returns: the pages left free are handed back here, in the build's thread, at most
    # once a second (bot.app.malloc.trim), so the next jobs' holes do not pile on them.
    try:
        return build(*args, **kwargs)
    finally:
        trim()


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
        # As asyncio.to_thread does: the call sees the caller's context variables (log fields).
        call = functools.partial(contextvars.copy_context().run, method, *args, **kwargs)
        return await asyncio.get_running_loop().run_in_executor(_database_executor(), call)
    return method(*args, **kwargs)
