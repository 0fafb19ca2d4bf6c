"""Page lists the way GitHub does ("Using pagination in the REST API").

``per_page`` defaults to 30 and is capped at 100; ``page`` starts at 1. When a
list spans more than one page the answer carries a ``Link`` header such as::

    <https://api.github.com/repositories/1/issues?per_page=3&page=1>; rel="prev",
    <https://api.github.com/repositories/1/issues?per_page=3&page=3>; rel="next",
    <https://api.github.com/repositories/1/issues?per_page=3&page=5>; rel="last",
    <https://api.github.com/repositories/1/issues?per_page=3&page=1>; rel="first"

(one line in the header): ``prev``, ``next``, ``last``, ``first`` in that order,
each present only when it points somewhere else, as in GitHub's recorded answers.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar
from urllib.parse import parse_qsl, urlencode

T = TypeVar("T")

DEFAULT_PER_PAGE = 30
MAX_PER_PAGE = 100


def _positive_int(value: str | None, default: int) -> int:
    try:
        number = int(value) if value is not None else default
    except ValueError:
        return default
    return number if number >= 1 else default


def page_params(query: str) -> tuple[int, int]:
    """Return ``(page, per_page)`` from a raw query string; bad values fall back to the defaults."""
    params = dict(parse_qsl(query, keep_blank_values=True))
    page = _positive_int(params.get("page"), 1)
    per_page = min(_positive_int(params.get("per_page"), DEFAULT_PER_PAGE), MAX_PER_PAGE)
    return page, per_page


def _page_url(base: str, query: str, page: int) -> str:
    pairs = [(k, v) for k, v in parse_qsl(query, keep_blank_values=True) if k != "page"]
    pairs.append(("page", str(page)))
    return f"{base}?{urlencode(pairs)}"


def link_header(base: str, query: str, page: int, last: int) -> str | None:
    """The ``Link`` header for ``page`` of ``last`` pages, or ``None`` when everything fits one page.

    ``base`` is the request URL without its query; ``query`` its raw query string,
    whose other parameters are kept.
    """
    if last <= 1 and page <= 1:
        return None
    rels: list[tuple[int, str]] = []
    if page > 1:
        rels.append((page - 1, "prev"))
    if page < last:
        rels.append((page + 1, "next"))
        rels.append((last, "last"))
    if page > 1:
        rels.append((1, "first"))
    return ", ".join(f'<{_page_url(base, query, number)}>; rel="{rel}"' for number, rel in rels)


def paginate(items: Sequence[T], base: str, query: str) -> tuple[list[T], str | None]:
    """Return the requested page of ``items`` and its ``Link`` header (or ``None``)."""
    page, per_page = page_params(query)
    last = max(1, -(-len(items) // per_page))
    start = (page - 1) * per_page
    return list(items[start : start + per_page]), link_header(base, query, page, last)
