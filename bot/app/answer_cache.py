"""The conditional-request cache of GitHub answers, bounded by the memory it holds.

gidgethub keeps, for each GET answered with an ``ETag``, ``(etag, last_modified, data,
next_url)`` under the request's URL, and sends ``If-None-Match`` the next time: a
``304 Not Modified`` does not count against the primary rate limit ("Use conditional
requests if appropriate",
https://docs.github.com/en/rest/using-the-rest-api/best-practices-for-using-the-rest-api).
``data`` is the decoded JSON. Counted in entries, a cache of 4,096 answers held every
page of a pull request's files it had seen, patches included: the 64 largest pull requests
of the corpus alone were about 7 MiB of it, kept for the life of the process, and one
3,000-file pull request is tens of MiB. :class:`AnswerCache` counts what it holds in bytes
(an estimate of the decoded objects' size), drops the least recently used answers past
its bound and does not keep an answer larger than :data:`MAX_ANSWER_BYTES` at all (it is
read again in full next time, as without a cache).
"""

from __future__ import annotations

from typing import Any

import cachetools

#: What the cache holds at most, in bytes (estimated).
MAX_BYTES = 4 * 1024 * 1024
#: An answer estimated larger than this is not kept (a page of big patches).
MAX_ANSWER_BYTES = 256 * 1024


def answer_size(value: Any) -> int:
    """An estimate (bytes) of the memory ``value`` (a cache entry: a tuple holding decoded
    JSON) takes: strings by their length, containers by their slots, plus each object's
    header. Never raises; an object of another type counts as 32 bytes."""
    total = 0
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            total += 49 + len(item)
        elif isinstance(item, dict):
            total += 64 + 32 * len(item)
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            total += 56 + 8 * len(item)
            stack.extend(item)
        elif isinstance(item, (bytes, bytearray)):
            total += 33 + len(item)
        else:
            total += 32
    return total


class AnswerCache(cachetools.LRUCache):
    """An LRU mapping of at most ``max_bytes`` (by :func:`answer_size`) that silently does
    not keep an answer over ``max_answer_bytes``: gidgethub stores into it as into a dict."""

    def __init__(self, max_bytes: int = MAX_BYTES, *, max_answer_bytes: int = MAX_ANSWER_BYTES) -> None:
        super().__init__(maxsize=max_bytes, getsizeof=answer_size)
        self.max_answer_bytes = min(max_answer_bytes, max_bytes)

    def __setitem__(self, key: Any, value: Any) -> None:
        if answer_size(value) > self.max_answer_bytes:
            self.pop(key, None)  # an older, smaller answer under the key would be stale
            return
        super().__setitem__(key, value)
