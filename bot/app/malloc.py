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
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
import os

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
