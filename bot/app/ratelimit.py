"""GitHub's rate limits for the REST API, read from its answers, and each installation's budget.

"Rate limits for the REST API"
(https://docs.github.com/en/rest/using-the-rest-api/rate-limits-for-the-rest-api):

- the *primary* limit: an installation may send ``x-ratelimit-limit`` requests (5,000
  an hour, more for large organisations) per window; every answer says how many are
  left (``x-ratelimit-remaining``) and when the window ends (``x-ratelimit-reset``,
  Unix seconds). Once none are left GitHub answers 403 or 429 until the reset, and
  asks apps not to keep sending meanwhile;
- *secondary* limits: a 403 or 429 with ``retry-after`` (seconds or an HTTP date), or
  whose message names a secondary rate limit ("wait at least one minute");
- content-creating requests: at most 80 a minute and 500 an hour (:class:`TokenBucket`).

:class:`Budget` is what GitHub's answers said of one installation's primary limit.
:class:`RateLimits` keeps every installation's budget for the process, in step with a
:class:`RateLimitStorage` in the database that every replica shares
(:mod:`bot.app.shared_state`), so that one job's refusal stops the others of the
installation from sending before the reset, and so that background work (backfill)
books its requests on one schedule per installation, whichever run or replica queued it.
"""

from __future__ import annotations

import email.utils
import json
import math
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any, Protocol

import cachetools

from bot.app.offload import run_store

#: Seconds of slack after ``x-ratelimit-reset``: GitHub rounds the reset down to the second.
RESET_SLACK = 1.0
#: GitHub's rate-limit windows last an hour at most ("Rate limits for the REST API"): a
#: reset, or a wait asked for, further ahead is no window of GitHub's (a reset in
#: milliseconds, a proxy's header) and is bounded by it, so one odd answer cannot hold an
#: installation for longer than GitHub itself ever would.
MAX_WINDOW_S = 3600.0
#: Seconds by which the clocks of GitHub and of the replicas may disagree: a stored reset or
#: wait further than :data:`MAX_WINDOW_S` plus this ahead was never bounded (an older
#: prguide kept it) and is dropped.
CLOCK_TOLERANCE_S = 60.0
#: Seconds under which the server's clock and GitHub's ``Date`` are taken to agree: ``Date``
#: is cut down to the second and an answer takes its time to arrive.
SKEW_FLOOR_S = 2.0
#: Seconds a process trusts its own view of a budget before reading the shared one again,
#: and at most between two writes of it (sooner when it is low or GitHub refused).
SYNC_S = 5.0
#: Below this share of the limit every answer is written to the shared budget at once.
LOW_SHARE = 0.25

#: GitHub's secondary limits on content-generating requests ("Rate limits for the REST API"):
#: no more than 80 a minute and 500 an hour. A bucket of ``burst`` plus ``rate`` per second
#: lets through at most ``burst + rate * window`` in any window: 8 + 72 = 80 a minute and
#: 100 + 400 = 500 an hour, while a guide's writes (labels, their colours the first time,
#: the comment) and a command's reactions go out at once in ordinary use.
WRITE_RATE = 72 / 60
WRITE_BURST = 8.0
HOURLY_WRITE_RATE = 400 / 3600
HOURLY_WRITE_BURST = 100.0


class TokenBucket:
    """A token bucket: ``rate`` tokens per second, holding at most ``capacity``.

    With ``capacity + 60 * rate <= 80`` no 60-second window sees more than 80 requests,
    GitHub's secondary limit for content-creating requests. ``clock`` is a monotonic
    time source in seconds.
    """

    def __init__(self, rate: float = 1.0, capacity: float = 20.0, *, clock: Callable[[], float] = time.monotonic):
        if rate <= 0 or capacity < 1:
            raise ValueError("a token bucket needs rate > 0 and capacity >= 1")
        self.rate = rate
        self.capacity = capacity
        self._clock = clock
        self._tokens = capacity
        self._updated = clock()

    def reserve(self) -> float:
        """Take one token and return how many seconds to wait before using it (0 when free).

        Reservations are first come, first served: the balance may go negative, and each
        caller waits for its own token to be refilled.
        """
        now = self._clock()
        self._tokens = min(self.capacity, self._tokens + (now - self._updated) * self.rate)
        self._updated = now
        self._tokens -= 1
        return 0.0 if self._tokens >= 0 else -self._tokens / self.rate


def rate_limit_delay(status: int, headers: Mapping[str, str], body: bytes, *, now: float, policy: Any) -> float | None:
    """Seconds GitHub asks us to wait before retrying, or ``None`` when this is no rate limit.

    Follows "Rate limits for the REST API": a ``retry-after`` header wins (seconds or an
    HTTP date); else ``x-ratelimit-remaining: 0`` means wait until ``x-ratelimit-reset``
    (epoch seconds; ``now`` is the wall clock); else a 429, or a 403 whose message names
    a secondary rate limit, means ``policy.secondary_limit_wait`` (seconds; ``policy`` is
    a :class:`bot.app.github.RetryPolicy`). Any other 403 is a permission problem (``None``).
    No wait is longer than GitHub's longest window (:data:`MAX_WINDOW_S`, plus the slack).
    """
    wait = _asked_wait(status, headers, body, now=now, policy=policy)
    return min(wait, MAX_WINDOW_S + RESET_SLACK) if wait is not None else None


def _asked_wait(status: int, headers: Mapping[str, str], body: bytes, *, now: float, policy: Any) -> float | None:
    if status not in (403, 429):
        return None
    retry_after = headers.get("retry-after")
    if retry_after:
        seconds = _number(retry_after, float)
        if seconds is None:
            try:
                when = email.utils.parsedate_to_datetime(retry_after)
            except (TypeError, ValueError):
                when = None
            seconds = when.timestamp() - now if when is not None else None
        if seconds is not None:  # no number of seconds (``inf``, ``nan``): as if it were absent
            return max(0.0, seconds)
    if headers.get("x-ratelimit-remaining") == "0":
        reset = _number(headers.get("x-ratelimit-reset"), float)
        return max(0.0, reset - now) + RESET_SLACK if reset is not None else policy.secondary_limit_wait
    message = _message_of(body).lower()
    if status == 429 or "rate limit" in message or "abuse" in message:
        return policy.secondary_limit_wait
    return None


def github_ahead(headers: Mapping[str, str], now: float) -> float | None:
    """Whole seconds GitHub's clock is ahead of ``now`` (the server's; negative: behind), or ``None``.

    From the answer's ``Date`` header (:func:`answer_time`); ``None`` when it has none that
    is usable. ``Date`` is cut down to the second and the answer took its time to arrive, so
    a difference under :data:`SKEW_FLOOR_S` is no skew and reads 0.
    """
    when = _date_of(headers)
    if when is None or abs(when - now) > MAX_WINDOW_S:
        return None
    ahead = when - now
    return float(round(ahead)) if abs(ahead) >= SKEW_FLOOR_S else 0.0


def answer_time(headers: Mapping[str, str], now: float) -> float:
    """GitHub's time when it answered (Unix s): the answer's ``Date`` header, else ``now``.

    ``x-ratelimit-reset`` is on GitHub's clock, so a wait until it is measured from GitHub's
    time: on a server whose clock is minutes fast the reset would look past, and a spent
    limit would be asked again every second until it ends. A ``Date`` further than
    :data:`MAX_WINDOW_S` from ``now`` (the server's clock) is not GitHub's time of the
    answer (a proxy's, a replayed answer's) and is not used.
    """
    when = _date_of(headers)
    return when if when is not None and abs(when - now) <= MAX_WINDOW_S else now


def _date_of(headers: Mapping[str, str]) -> float | None:
    """The answer's ``Date`` header in Unix seconds, or ``None`` when absent or unreadable."""
    try:
        when = email.utils.parsedate_to_datetime(headers.get("date") or "").timestamp()
    except (TypeError, ValueError, OverflowError):
        return None
    return when if math.isfinite(when) else None


def _message_of(body: bytes) -> str:
    try:
        data = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        return body[:200].decode("utf-8", "replace") if body else ""
    return str(data.get("message") or "") if isinstance(data, dict) else ""


def rate_remaining(headers: Mapping[str, str]) -> int | None:
    """``x-ratelimit-remaining`` as an int, or None when absent or malformed."""
    return _number(headers.get("x-ratelimit-remaining"), int)


def _number(value: Any, kind: Callable[[Any], Any]) -> Any:
    """``kind(value)``, or None when absent, malformed or not finite (a wait of ``inf`` would never end)."""
    try:
        number = kind(value) if value is not None else None
    except (TypeError, ValueError, OverflowError):
        return None
    return number if number is None or math.isfinite(number) else None


@dataclass(frozen=True, slots=True)
class Budget:
    """What GitHub last said of one installation's primary rate limit, and its backfill schedule.

    ``limit``, ``remaining``: ``x-ratelimit-limit``/``-remaining`` of the window ending at
    ``reset`` (``x-ratelimit-reset``, Unix seconds); None when no answer carried them.
    ``blocked_until``: Unix seconds before which GitHub asked for no request (a
    ``retry-after`` or a refusal), 0 for none. ``paced_until``: Unix seconds up to which
    background requests are booked (:meth:`RateLimits.book`), 0 for none.
    """

    limit: int | None = None
    remaining: int | None = None
    reset: float | None = None
    blocked_until: float = 0.0
    paced_until: float = 0.0

    def wait(self, now: float, *, reserve: float = 0.0) -> float:
        """Seconds from ``now`` before a request may be sent (0: at once).

        A request waits for ``blocked_until``, and for the reset while the window has
        nothing left, or no more than ``reserve`` (a share of ``limit``, 0 to 1) that a
        background job leaves to live work.
        """
        waits = [self.blocked_until - now]
        if self.remaining is not None and self.reset is not None and self.reset > now:
            if self.remaining <= reserve * (self.limit or 0) or self.remaining <= 0:
                waits.append(self.reset - now + RESET_SLACK)
        return max(0.0, *waits)


def merge(old: Budget | None, new: Budget) -> Budget:
    """One budget from two views of it (a process's and the shared one, or an answer's).

    A later window (a greater ``reset``) replaces an earlier one; within one window
    requests only ever lower what is left, so the smaller ``remaining`` wins, whichever
    answer arrived last. ``blocked_until`` and ``paced_until`` keep the later time.
    """
    if old is None:
        return new
    limit, remaining, reset = old.limit, old.remaining, old.reset
    if new.reset is not None and (reset is None or new.reset > reset):
        limit, remaining, reset = new.limit or limit, new.remaining, new.reset
    elif new.reset is not None and new.reset == reset:
        limit = new.limit or limit
        known = [r for r in (remaining, new.remaining) if r is not None]
        remaining = min(known) if known else None
    blocked, paced = max(old.blocked_until, new.blocked_until), max(old.paced_until, new.paced_until)
    return Budget(limit, remaining, reset, blocked, paced)


def read_budget(
    headers: Mapping[str, str], *, now: float, refused: float | None = None, github_now: float | None = None,
) -> Budget | None:
    """The budget one answer's headers tell of, or None when they tell nothing.

    Only the ``core`` resource counts (``x-ratelimit-resource``; search and GraphQL have
    limits of their own). ``refused``: the seconds GitHub asked to wait when it refused
    the request (:func:`rate_limit_delay`), which block the installation until then,
    unless it was another resource's primary limit that ran out.
    A reset (or a refusal's wait) beyond GitHub's longest window, :data:`MAX_WINDOW_S`
    from ``github_now`` (GitHub's time, the reset's clock; ``now`` when unknown), or from
    ``now`` for the wait, is cut back to it: kept as it came, a later window
    (:func:`merge`) could never replace it.
    """
    resource = headers.get("x-ratelimit-resource")
    counted = resource in (None, "core")
    if refused and not counted and headers.get("x-ratelimit-remaining") == "0":
        # Another resource's primary limit (GraphQL's is counted apart): the REST budget is
        # not spent, so the installation's REST calls go on. Secondary limits are shared.
        refused = None
    remaining = rate_remaining(headers) if counted else None
    blocked = now + min(refused, MAX_WINDOW_S + RESET_SLACK) if refused else 0.0
    if remaining is None and not blocked:
        return None
    limit = _number(headers.get("x-ratelimit-limit"), int) if counted else None
    reset = _number(headers.get("x-ratelimit-reset"), float) if counted else None
    if reset is not None:
        reset = min(reset, (now if github_now is None else github_now) + MAX_WINDOW_S)
    return Budget(limit, remaining if reset is not None else None, reset, blocked)


def bounded(budget: Budget | None, now: float, *, github_now: float | None = None) -> Budget | None:
    """``budget`` without a window or a block further ahead of ``now`` than GitHub ever asks.

    :func:`read_budget` bounds what it reads; a stored budget may still hold a reset
    or a ``blocked_until`` from before it did (a reset in milliseconds: the year
    57,000), which :func:`merge` would keep for ever. Beyond :data:`MAX_WINDOW_S` plus
    :data:`CLOCK_TOLERANCE_S` from ``now`` (Unix s, the clock the budget's times are
    on), the window is forgotten (``limit``, ``remaining``, ``reset`` None) and the
    block lifted: the next answer tells the truth. ``paced_until`` is prguide's own
    schedule and may lie hours ahead. The reset is on GitHub's clock: it is bounded from
    ``github_now`` when the caller knows GitHub's time, else from ``now`` allowing for
    the largest skew :func:`answer_time` believes (another :data:`MAX_WINDOW_S`), so a
    store never drops a real window because its server's clock is behind GitHub's.
    """
    if budget is None:
        return None
    far = now + MAX_WINDOW_S + RESET_SLACK + CLOCK_TOLERANCE_S
    far_reset = far + MAX_WINDOW_S if github_now is None else github_now + MAX_WINDOW_S + RESET_SLACK + CLOCK_TOLERANCE_S
    if budget.reset is not None and budget.reset > far_reset:
        budget = replace(budget, limit=None, remaining=None, reset=None)
    if budget.blocked_until > far:
        budget = replace(budget, blocked_until=0.0)
    return budget


def booked(old: Budget | None, count: int, spacing: float, *, not_before: float, now: float) -> tuple[float, Budget]:
    """A booking of ``count`` requests ``spacing`` s apart: when the first may go, and the budget after it.

    The first goes at the latest of ``now``, ``not_before`` and ``old.paced_until``;
    ``paced_until`` moves to ``count * spacing`` after it.
    """
    old = old or Budget()
    start = max(now, not_before, old.paced_until)
    return start, replace(old, paced_until=start + max(0, count) * max(0.0, spacing))


def shifted(budget: Budget, by: float) -> Budget:
    """``budget`` with prguide's own times (``blocked_until``, ``paced_until``; 0 stays 0) moved by ``by`` seconds.

    ``reset`` is GitHub's time, which no replica's clock changes.
    """
    if not by:
        return budget
    return replace(
        budget,
        blocked_until=budget.blocked_until + by if budget.blocked_until else 0.0,
        paced_until=budget.paced_until + by if budget.paced_until else 0.0,
    )


class RateLimitStorage(Protocol):
    """Every installation's :class:`Budget`, shared by the replicas (see :mod:`bot.app.shared_state`).

    Each method is one short transaction; a store whose calls wait on a database server
    says ``blocking = True``. Times are Unix seconds on the caller's clock (``now``: its
    reading, None for the store's own). Replicas' clocks disagree, so a shared store keeps
    the times a caller sets (``blocked_until``, ``paced_until``; ``reset`` is GitHub's)
    on one clock of its own, converted in whole seconds: otherwise a replica whose clock
    is half an hour fast would book the installation's backfill slots, and hold every
    other replica's, half an hour late. :class:`bot.app.shared_state.PgRateLimits` is one
    per replica and converts between that replica's clock (its ``clock``) and the
    database's; :class:`MemoryRateLimits`, which several :class:`RateLimits` may share,
    between each call's ``now`` and its ``clock``; :class:`bot.app.shared_state.SqliteRateLimits`
    serves one process, whose clock is its own.
    """

    def get(self, installation_id: int, *, now: float | None = None) -> Budget | None:
        """The installation's budget, or None when nothing is known."""
        ...

    def record(self, installation_id: int, budget: Budget, *, now: float | None = None) -> Budget:
        """:func:`merge` ``budget`` into the stored one and return the result."""
        ...

    def book(self, installation_id: int, count: int, spacing: float, *, not_before: float, now: float) -> float:
        """Book ``count`` requests ``spacing`` seconds apart after those booked before (:func:`booked`);
        returns when the first may go (Unix s)."""
        ...

    def unbook(self, installation_id: int) -> None:
        """Forget the installation's booked slots (``paced_until`` 0): the work they were for was cancelled."""
        ...


class MemoryRateLimits:
    """:class:`RateLimitStorage` in this process's memory (tests, or no database).

    ``clock``: Unix seconds now, the clock the budgets are kept on; a call whose ``now``
    differs from it by a second or more has its times converted (see
    :class:`RateLimitStorage`), as the database does for replicas.
    """

    blocking = False

    def __init__(self, *, clock: Callable[[], float] = time.time) -> None:
        self.clock = clock
        self._budgets: dict[int, Budget] = {}
        self._lock = threading.Lock()

    def _ahead(self, now: float | None) -> float:
        """Whole seconds the caller's clock (``now``) is ahead of this store's (negative: behind)."""
        return 0.0 if now is None else float(round(now - self.clock()))

    def _seen(self, installation_id: int, ahead: float) -> Budget | None:
        """The stored budget on the caller's clock, times too far ahead dropped (:func:`bounded`)."""
        stored = self._budgets.get(int(installation_id))
        return bounded(shifted(stored, ahead), self.clock() + ahead) if stored is not None else None

    def get(self, installation_id: int, *, now: float | None = None) -> Budget | None:
        """See :class:`RateLimitStorage`."""
        return self._seen(installation_id, self._ahead(now))

    def record(self, installation_id: int, budget: Budget, *, now: float | None = None) -> Budget:
        """See :class:`RateLimitStorage`."""
        with self._lock:
            ahead = self._ahead(now)
            merged = merge(self._seen(installation_id, ahead), budget)
            self._budgets[int(installation_id)] = shifted(merged, -ahead)
        return merged

    def book(self, installation_id: int, count: int, spacing: float, *, not_before: float, now: float) -> float:
        """See :class:`RateLimitStorage`."""
        with self._lock:
            ahead = self._ahead(now)
            start, budget = booked(self._seen(installation_id, ahead), count, spacing, not_before=not_before, now=now)
            self._budgets[int(installation_id)] = shifted(budget, -ahead)
        return start

    def unbook(self, installation_id: int) -> None:
        """See :class:`RateLimitStorage`."""
        with self._lock:
            if int(installation_id) in self._budgets:
                self._budgets[int(installation_id)] = replace(self._budgets[int(installation_id)], paced_until=0.0)


@dataclass(slots=True)
class _Seen:
    budget: Budget | None
    read_at: float
    written_at: float
    written_reset: float | None


class RateLimits:
    """This process's view of every installation's budget, kept in step with ``store``.

    The GitHub client asks :meth:`wait` before each request and tells :meth:`observe`
    each answer. Reads of the shared store happen at most every ``sync_every`` seconds
    per installation; writes as often, and at once when GitHub refused a request, a new
    window began or the budget is low (under :data:`LOW_SHARE` of the limit), so a
    refusal holds every replica back within a request or two. ``clock`` is the wall
    clock (Unix seconds). Store errors propagate (the job is retried).

    ``reset`` is GitHub's time, kept so in the shared store (every replica reads the
    same window); this process learns how far GitHub's clock is from its own from each
    answer's ``Date`` (:func:`github_ahead`, :attr:`clock_offset`) and hands budgets out with ``reset`` on its
    own clock (:meth:`budget`), so a server whose clock is slow does not hold a spent
    installation past GitHub's reset, nor a fast one ask again before it. Until the
    first answer with a ``Date``, the clocks are taken to agree.
    """

    def __init__(self, store: RateLimitStorage | None = None, *, clock: Callable[[], float] = time.time,
                 sync_every: float = SYNC_S, max_installations: int = 4096):  # fmt: skip
        self.store: RateLimitStorage = store if store is not None else MemoryRateLimits(clock=clock)
        self.clock = clock
        self.sync_every = sync_every
        self._seen: cachetools.LRUCache = cachetools.LRUCache(maxsize=max_installations)
        #: Whole seconds GitHub's clock is ahead of ``clock`` (negative: behind), from the last ``Date``.
        self.clock_offset = 0.0

    def __repr__(self) -> str:
        return f"<RateLimits {type(self.store).__name__}, {len(self._seen)} installation(s)>"

    async def budget(self, installation_id: int, *, fresh: bool = False) -> Budget | None:
        """The installation's budget as this process knows it; ``fresh`` reads the shared store first.

        All its times are on this process's ``clock``: ``reset`` is GitHub's converted by
        :attr:`clock_offset`.
        """
        return self._local(await self._budget(installation_id, fresh=fresh))

    def _local(self, budget: Budget | None) -> Budget | None:
        """``budget`` with GitHub's ``reset`` moved onto this process's clock."""
        if budget is None or budget.reset is None or not self.clock_offset:
            return budget
        return replace(budget, reset=budget.reset - self.clock_offset)

    async def _budget(self, installation_id: int, *, fresh: bool = False) -> Budget | None:
        """The installation's budget as this process knows it, ``reset`` on GitHub's clock."""
        now = self.clock()
        seen = self._seen.get(installation_id)
        if fresh or seen is None or now - seen.read_at >= self.sync_every:
            shared = await run_store(self.store, self.store.get, installation_id, now=now)
            shared = bounded(shared, now, github_now=now + self.clock_offset)
            seen = self._seen.get(installation_id)  # another task may have observed meanwhile
            local = seen.budget if seen is not None else None
            budget = merge(local, shared) if shared is not None else local
            if shared is not None and budget is not None:
                # Every booking is written through: the shared schedule is the whole of it, and
                # it only goes back when the installation's work was cancelled (:meth:`unbook`).
                budget = replace(budget, paced_until=shared.paced_until)
            if seen is not None:
                written = (seen.written_at, seen.written_reset)
            else:  # what the shared store holds needs no writing back
                written = (now, budget.reset if budget is not None else None)
            self._seen[installation_id] = seen = _Seen(budget, now, *written)
        return seen.budget

    async def wait(self, installation_id: int, *, reserve: float = 0.0) -> float:
        """Seconds before the installation may send a request (see :meth:`Budget.wait`); 0: now."""
        budget = await self.budget(installation_id)
        return budget.wait(self.clock(), reserve=reserve) if budget is not None else 0.0

    async def observe(self, installation_id: int, headers: Mapping[str, str], *, refused: float | None = None) -> None:
        """Take in one answer's rate-limit headers (``refused``: GitHub's wait when it refused the request)."""
        now = self.clock()
        ahead = github_ahead(headers, now)
        if ahead is not None:
            self.clock_offset = ahead
        news = read_budget(headers, now=now, refused=refused, github_now=now + self.clock_offset)
        if news is None:
            return
        seen = self._seen.get(installation_id)
        budget = merge(seen.budget if seen is not None else None, news)
        low = budget.remaining is not None and budget.remaining <= LOW_SHARE * (budget.limit or 0)
        due = (
            seen is None or refused or low or budget.reset != seen.written_reset
            or now - seen.written_at >= self.sync_every
        )
        if due:
            # The schedule travels by book() and unbook() alone: a stale one here would bring back
            # slots another replica unbooked.
            told = replace(budget, paced_until=0.0)
            budget = merge(told, await run_store(self.store, self.store.record, installation_id, told, now=now))
            self._seen[installation_id] = _Seen(budget, now, now, budget.reset)
        else:
            self._seen[installation_id] = _Seen(budget, seen.read_at, seen.written_at, seen.written_reset)

    async def book(self, installation_id: int, count: int, spacing: float, *, not_before: float = 0.0) -> float:
        """Book ``count`` background requests of the installation ``spacing`` s apart (see
        :meth:`RateLimitStorage.book`); returns when the first may go (Unix s)."""
        start = await run_store(
            self.store, self.store.book, installation_id, count, spacing, not_before=not_before, now=self.clock()
        )
        seen = self._seen.get(installation_id)
        if seen is not None and seen.budget is not None:
            seen.budget = replace(seen.budget, paced_until=max(seen.budget.paced_until, start + count * spacing))
        return start

    async def unbook(self, installation_id: int) -> None:
        """Forget the installation's booked background slots, on every replica (:meth:`RateLimitStorage.unbook`):
        its backfill was cancelled, and one started later must not wait for slots nobody will use."""
        await run_store(self.store, self.store.unbook, installation_id)
        seen = self._seen.get(installation_id)
        if seen is not None and seen.budget is not None:
            seen.budget = replace(seen.budget, paced_until=0.0)
