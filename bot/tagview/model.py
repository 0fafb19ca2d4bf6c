"""What the tag view's stores hold and answer: rows, pages, sections, filters, and the store protocol.

Shared by both stores (:mod:`bot.tagview.store` on SQLite, :mod:`bot.tagview.pgstore` on
PostgreSQL) and by everything that reads them (pages, digest, feeds, export).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any, Protocol

#: Reading levels a guide may have, deepest first (``Guide.data["reading_level"]``).
READING_LEVELS = ("deep", "quick", "skim", "skip")
#: Repository visibilities; GitHub's ``repository.private`` true means ``"private"``.
VISIBILITIES = ("public", "private")
#: Largest page :meth:`GuideStore.query` returns.
MAX_LIMIT = 500


class GuideDataError(ValueError):
    """Raised by :meth:`GuideStore.save` when guide data is unusable; nothing is written.

    The message names the offending key and value.
    """


@dataclass(frozen=True, slots=True)
class GuideRow:
    """One stored guide as listed on the tag view (the Markdown body is left out).

    ``merged_at`` is UTC ISO-8601 (``2026-08-20T12:00:00Z``) or ``None``; ``importance``
    is 1-10 or ``None``; ``reading_minutes`` whole minutes or ``None``.
    """

    repository: str
    number: int
    title: str
    url: str | None
    author: str | None
    merged_at: str | None
    change_type: str | None
    breaking: bool
    importance: int | None
    reading_level: str | None
    reading_minutes: int | None
    labels: tuple[str, ...]
    areas: tuple[str, ...]
    summary: str

    @property
    def merged_date(self) -> str | None:
        """The merge day, ``YYYY-MM-DD`` in UTC, or ``None``."""
        return self.merged_at[:10] if self.merged_at else None

    def to_json(self) -> dict[str, Any]:
        """The row as a JSON-ready dict (the ``tags.json`` item shape)."""
        return {
            "repository": self.repository,
            "number": self.number,
            "title": self.title,
            "url": self.url,
            "author": self.author,
            "merged_at": self.merged_at,
            "labels": list(self.labels),
            "areas": list(self.areas),
            "change_type": self.change_type,
            "breaking": self.breaking,
            "importance": self.importance,
            "reading_level": self.reading_level,
            "reading_minutes": self.reading_minutes,
            "summary": self.summary,
        }


@dataclass(frozen=True, slots=True)
class Brief:
    """What choosing a digest's pull requests needs of a guide, and no more (see :meth:`GuideStore.briefs`).

    ``merged_at`` as in :class:`GuideRow`; ``area`` is the first area ("" without one);
    ``change_type`` as in :class:`GuideRow`; ``fixes_from`` the pull request whose code a fix
    changes, as its guide's history names it (``None``: none, or no fix).
    """

    number: int
    merged_at: str | None
    reading_level: str | None
    importance: int | None
    breaking: bool
    area: str
    change_type: str | None = None
    fixes_from: int | None = None


@dataclass(frozen=True, slots=True)
class GuidePage:
    """One page of :meth:`GuideStore.query`: ``items`` newest first, ``total`` matches in all."""

    items: tuple[GuideRow, ...]
    total: int
    limit: int
    offset: int

    @property
    def next_offset(self) -> int | None:
        """Offset of the next page, or ``None`` on the last one."""
        end = self.offset + len(self.items)
        return end if end < self.total else None


@dataclass(frozen=True, slots=True)
class LabelCount:
    """A label used in a repository: ``count`` guides carry it; ``description`` from its label spec ("" when unknown)."""

    name: str
    count: int
    description: str = ""


@dataclass(frozen=True, slots=True)
class LabelSection:
    """A label with its ``count`` matching guides and the newest ``rows`` of them."""

    name: str
    count: int
    description: str
    rows: tuple[GuideRow, ...]


@dataclass(frozen=True, slots=True)
class SectionPage:
    """One page of label sections (:meth:`GuideStore.section_page`): ``sections`` by label name,
    ``labels`` the labels matching in all (0 when the page is past the last), ``offset`` the
    labels ranked before this page (by matching guides, most first)."""

    sections: list[LabelSection]
    labels: int
    offset: int

    @property
    def more(self) -> int:
        """Matching labels ranked after this page."""
        return max(0, self.labels - self.offset - len(self.sections))


@dataclass(frozen=True, slots=True)
class RepositoryInfo:
    """A repository with stored guides: ``visibility`` is ``"public"`` or ``"private"``."""

    name: str
    visibility: str
    guides: int


@dataclass(frozen=True, slots=True)
class GuideFilter:
    """What to show: every field ``None`` means "no restriction".

    ``label``/``area`` match case-insensitively; ``level`` is one of :data:`READING_LEVELS`;
    ``min_importance`` 1-10; ``since``/``until`` are inclusive days (UTC) or exact instants;
    ``search`` words must all appear in the title or a focus point (substring, any case).
    """

    label: str | None = None
    area: str | None = None
    level: str | None = None
    min_importance: int | None = None
    since: date | datetime | None = None
    until: date | datetime | None = None
    search: str | None = None

    @property
    def active(self) -> bool:
        """Whether any restriction is set."""
        return any(getattr(self, name) not in (None, "") for name in self.__slots__)


class GuideStorage(Protocol):
    """What the tag view's pages, JSON, export and the features call on a guide store.

    Two implementations: :class:`GuideStore` (SQLite, the single-machine default) and
    :class:`bot.tagview.pgstore.PgGuideStore` (PostgreSQL, shared by replicas). Both give
    the same answers; ``tests/test_tagview_store.py`` runs one suite against each.
    Methods are synchronous; see :class:`GuideStore` for each one's shapes and errors.
    A store whose calls wait on a database server says ``blocking = True``: the server
    and the features then call it from a worker thread (:func:`bot.app.offload.run_store`).
    """

    @property
    def full_text_search(self) -> bool: ...

    def close(self) -> None: ...

    def save(
        self,
        guide_data: Mapping[str, Any],
        *,
        visibility: str | None = None,
        label_descriptions: Mapping[str, str] | None = None,
        change: Any = None,
    ) -> None: ...

    def set_visibility(self, repository: str, visibility: str) -> None: ...

    def rename(self, old: str, new: str) -> int: ...

    def delete(self, repository: str, number: int) -> bool: ...

    def analyze(self) -> None: ...

    def get(self, repository: str, number: int) -> dict[str, Any] | None: ...

    def get_many(self, repository: str, numbers: Iterable[int]) -> dict[int, dict[str, Any]]: ...

    def visibility(self, repository: str) -> str | None: ...

    def repositories(self) -> list[RepositoryInfo]: ...

    def canonical_name(self, repository: str) -> str | None: ...

    def labels(self, repository: str, *, limit: int | None = None, include: str | None = None) -> list[LabelCount]: ...

    def label_count(self, repository: str) -> int: ...

    def areas(self, repository: str, *, limit: int | None = None, include: str | None = None) -> list[tuple[str, int]]: ...

    def query(
        self,
        repository: str,
        *,
        label: str | None = None,
        area: str | None = None,
        level: str | None = None,
        min_importance: int | None = None,
        since: date | datetime | str | None = None,
        until: date | datetime | str | None = None,
        search: str | None = None,
        limit: int = 50,
        offset: int = 0,
    ) -> GuidePage: ...

    def sections(self, repository: str, flt: GuideFilter | None = None, *, per_label: int = 10) -> list[LabelSection]: ...

    def section_page(
        self, repository: str, flt: GuideFilter | None = None, *, per_label: int = 10, limit: int | None = None,
        offset: int = 0,
    ) -> SectionPage: ...

    def briefs(
        self, repository: str, *, label: str | None = None, since: date | datetime | str | None = None,
        until: date | datetime | str | None = None,
    ) -> list[Brief]: ...

    def rows(self, repository: str, numbers: Iterable[int]) -> dict[int, GuideRow]: ...

    def cards(self, repository: str, numbers: Iterable[int], lang: str) -> dict[int, dict[str, Any]]: ...
    def merged_changes(self, repository: str, *, before: str | None = None, limit: int = 1000) -> list[Any]: ...

