"""The C allocator's settings for a long-running ``prguide serve``.

Guides are built in worker threads (``asyncio.to_thread``) and the job database is read in
its own threads. On glibc every thread that allocates gets a malloc arena of its own, up
to eight per core; a guide's patch text, decoded GitHub pages and rendered Markdown are
mostly blocks too large for Python's small-object allocator, so they land in those arenas.
Memory freed in an arena is only handed back to the system from the arena's top, so each
extra arena keeps the high-water mark of whatever jobs ran in it: the resident size grows
with the number of threads that ever built a guide, not with the work in flight.

:func:`limit_arenas` caps the arenas (``mallopt(M_ARENA_MAX)``, "mallopt(3)" in the Linux
man pages); it must run before the threads start. Elsewhere (musl, macOS, Windows) it
does nothing: those allocators do not keep per-thread arenas this way.

Even in two arenas, the pages a finished build freed in the middle of a heap stay
resident until a block is placed there again, and the holes move with every job: over
thousands of jobs the resident size crept up by several MiB though no object was kept.
:func:`trim` hands such pages back (``malloc_trim(0)``, "malloc_trim(3)": every arena,
whole free pages anywhere in a heap); it runs after each guide build, at most once a
second, and whenever the job pool's last running job ends.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import logging
import os
import threading
import time
from collections.abc import Callable

log = logging.getLogger("prguide.malloc")

#: ``M_ARENA_MAX`` of glibc's ``<malloc.h>``.
M_ARENA_MAX = -8
#: Arenas kept: two let the event loop's thread and one guide-building thread allocate
#: without waiting on each other, while freed blocks are reused across jobs.
ARENAS = 2


def limit_arenas(arenas: int = ARENAS) -> bool:
    """Cap glibc's malloc arenas at ``arenas`` (at least 1); returns whether the cap was set.

    ``False`` (and nothing changed) when the C library is not glibc, or when the
    environment already sets ``MALLOC_ARENA_MAX`` (an operator's choice wins).
    """
    if os.environ.get("MALLOC_ARENA_MAX"):
        return False
    libc = _glibc()
    if libc is None:
        return False
    try:
        return bool(libc.mallopt(ctypes.c_int(M_ARENA_MAX), ctypes.c_int(max(1, int(arenas)))))
    except (AttributeError, OSError) as exc:  # not a glibc after all
        log.debug("mallopt unavailable: %s", exc)
        return False


#: Seconds between two trims at least (but see ``force``): a trim after a busy stretch
#: costs ~10 ms (one ``madvise`` per run of free pages), and the pages come back with a fault each.
TRIM_EVERY = 1.0
_trim_lock = threading.Lock()
_last_trim = float("-inf")


def trim(*, force: bool = False, clock: Callable[[], float] = time.monotonic) -> bool:
    """Return the free pages of glibc's heaps to the system; whether a trim ran.

    Runs ``malloc_trim(0)`` unless one ran less than :data:`TRIM_EVERY` seconds ago
    (``force``: whenever), or another thread is trimming, or the C library is not glibc
    (then ``False``, nothing done). Safe from any thread. Never raises.
    """
    global _last_trim
    libc = _glibc()
    if libc is None or not _trim_lock.acquire(blocking=False):
        return False
    try:
        now = clock()
        if not force and now - _last_trim < TRIM_EVERY:
            return False
        _last_trim = now
        try:
            libc.malloc_trim(ctypes.c_size_t(0))
        except (AttributeError, OSError) as exc:  # not a glibc after all
            log.debug("malloc_trim unavailable: %s", exc)
            return False
        return True
    finally:
        _trim_lock.release()


@functools.cache
def _glibc() -> ctypes.CDLL | None:
    """The running glibc, or ``None`` on another C library."""
    name = ctypes.util.find_library("c")
    if not name:
        return None
    try:
        libc = ctypes.CDLL(name)
        version = libc.gnu_get_libc_version
    except (OSError, AttributeError):
        return None
    version.restype = ctypes.c_char_p
    return libc if version() else None
