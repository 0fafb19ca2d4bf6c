"""Repositories known to have no ``.github/prguide.yml``: a memory that saves a call per guide.

A config file that exists is read with a conditional request ("Get repository content"
with ``If-None-Match``), answered ``304 Not Modified`` without counting against the
rate limit while the file is unchanged ("Best practices for using the REST API", use
conditional requests). A missing one is answered ``404 Not Found`` without an ETag:
asked again, its absence would cost a counted call on every merge. So prguide remembers
it, for :data:`MISSING_CONFIG_TTL`, and forgets it as soon as it learns the file may have
appeared:

* a merged pull request that adds or edits the file (its file list, read for the guide
  anyway, says so) reads it at once (:func:`bot.features.guide.handle_pull_request_merged`);
* a ``/prguide`` command reads it fresh (:mod:`bot.commands.handler`), and so does the
  start of a backfill.

A file pushed directly to the default branch, without a pull request, is therefore
found by the next command or once the memory lapses.

With replicas (PostgreSQL) the memory is the database's (``reply_memory`` rows through
:class:`bot.app.shared_state.PgSharedState`): a replica that reads a new file makes every
replica forget, where a memory per process would keep the others on the defaults for
as long as it lasts. Alone (SQLite) it is this process's.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from cachetools import TTLCache

from bot.app.offload import run_store

#: Seconds a repository without ``.github/prguide.yml`` is believed to have none, unless a
#: merged pull request or a command shows otherwise first. A week: merges days apart still
#: cost no call for it, while a file pushed past pull requests applies within the week
#: (at once after any ``/prguide`` command).
MISSING_CONFIG_TTL = 7 * 24 * 3600.0
_PREFIX = "missing-config:"


class MissingConfigs:
    """Which ``(repository, ref)`` have no config file, for :data:`MISSING_CONFIG_TTL` seconds.

    ``shared``: a :class:`bot.app.shared_state.SharedState` whose ``recall``/``remember``/
    ``forget`` hold the memory for every replica (PostgreSQL), else ``None`` (this process:
    at most ``maxsize`` entries). ``clock`` gives Unix seconds (the shared state keeps its
    own). Methods are coroutines: on PostgreSQL each is one statement in a worker thread.
    Errors are the shared state's (``psycopg.Error``).
    """

    def __init__(
        self, *, ttl: float = MISSING_CONFIG_TTL, clock: Callable[[], float] = time.time, shared: Any = None, maxsize: int = 4096
    ):
        self.ttl = ttl
        self.shared = shared
        self._local: TTLCache = TTLCache(maxsize=maxsize, ttl=ttl, timer=clock)

    @staticmethod
    def _key(repository: str, ref: str | None) -> str:
        # GitHub compares repository names in any case.
        return f"{_PREFIX}{repository.casefold()}@{ref or ''}"

    async def known(self, repository: str, ref: str | None) -> bool:
        """Whether ``repository`` is remembered to have no config file at ``ref`` (``None``: the default branch)."""
        key = self._key(repository, ref)
        if self.shared is None:
            return key in self._local
        return bool(await run_store(self.shared, self.shared.recall, key))

    async def remember(self, repository: str, ref: str | None) -> None:
        """Remember that ``repository`` has no config file at ``ref``, from now on for :attr:`ttl` seconds."""
        key = self._key(repository, ref)
        if self.shared is None:
            self._local[key] = True
        else:
            await run_store(self.shared, self.shared.remember, key, self.ttl)

    async def forget(self, repository: str, ref: str | None) -> None:
        """Forget what is remembered of ``repository`` at ``ref``: the next guide reads the file."""
        key = self._key(repository, ref)
        if self.shared is None:
            self._local.pop(key, None)
        else:
            await run_store(self.shared, self.shared.forget, key)

    def clear(self) -> None:
        """Forget every repository this process remembers (the shared memory is left alone)."""
        self._local.clear()
