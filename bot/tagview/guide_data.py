"""Checking guide data before it is stored, and the UTC times the stores keep.

:func:`prepare_save` turns a guide's data (``Guide.data``) into the columns both stores
write, refusing unusable data with a :class:`GuideDataError` that names the key.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from datetime import UTC, date, datetime, time
from typing import Any

from bot.tagview.model import READING_LEVELS, VISIBILITIES, GuideDataError

# GitHub owner and repository names: letters, digits, "-", "_" and "." ("Creating a new repository").
_REPO_RE = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})/[A-Za-z0-9._-]{1,100}$")


def prepare_save(
    guide_data: Mapping[str, Any], visibility: str | None, label_descriptions: Mapping[str, str] | None
) -> tuple[dict[str, Any], list[tuple[str, str, str | None]], dict[str, str]]:
    """Check what :meth:`GuideStore.save` was given and shape it for writing.

    Returns ``(row, labels, descriptions)``: the guide's columns (see :func:`normalise`),
    each label as ``(name, source, rule)``, and label descriptions by name (those in
    ``label_descriptions`` win over the data's own). Raises :class:`GuideDataError`.
    """
    row = normalise(guide_data)
    if visibility is not None and visibility not in VISIBILITIES:
        raise GuideDataError(f"visibility must be 'public' or 'private', got {visibility!r}")
    descriptions = dict(row.pop("descriptions"))
    for name, text in (label_descriptions or {}).items():
        if text:
            descriptions[str(name)] = str(text)
    details = row.pop("details")
    labels = [(name, *details.get(name, ("rule", None))) for name in row["labels"]]
    return row, labels, descriptions


def change_columns(row: Mapping[str, Any], change: Any) -> tuple[str, str] | None:
    """The ``(paths, gone)`` JSON columns of a guide's changed paths
    (a :class:`bot.engine.history.coupling.MergedChange`), or ``None`` when not given.

    Raises :class:`GuideDataError` when ``change`` is of another pull request or its paths
    are not text.
    """
    if change is None:
        return None
    if getattr(change, "number", None) != row["number"]:
        raise GuideDataError(f"changed paths of #{getattr(change, 'number', None)} given with the guide of #{row['number']}")
    paths, gone = tuple(getattr(change, "paths", ()) or ()), tuple(getattr(change, "gone", ()) or ())
    if not all(isinstance(p, str) for p in (*paths, *gone)):
        raise GuideDataError("changed paths must be text")
    return json.dumps(list(paths), ensure_ascii=False), json.dumps(list(gone), ensure_ascii=False)


def normalise(data: Mapping[str, Any]) -> dict[str, Any]:
    """The columns of one guide from its data, plus ``details`` (label sources) and ``descriptions``.

    Raises :class:`GuideDataError` naming the first unusable key.
    """
    if not isinstance(data, Mapping):
        raise GuideDataError(f"guide data must be a mapping, got {type(data).__name__}")
    repository = data.get("repository")
    if not isinstance(repository, str) or not _REPO_RE.match(repository) or repository.split("/")[1] in (".", ".."):
        raise GuideDataError(f"guide data 'repository' must be 'owner/repo', got {repository!r}")
    number = data.get("number")
    if isinstance(number, bool) or not isinstance(number, int) or number < 1:
        raise GuideDataError(f"guide data 'number' must be a positive whole number, got {number!r}")
    title = data.get("title")
    if not isinstance(title, str):
        raise GuideDataError(f"guide data 'title' must be text, got {title!r}")

    importance = data.get("importance")
    if importance is not None and (isinstance(importance, bool) or not isinstance(importance, int) or not 1 <= importance <= 10):
        raise GuideDataError(f"guide data 'importance' must be a whole number 1-10, got {importance!r}")
    level = data.get("reading_level")
    if level is not None and level not in READING_LEVELS:
        raise GuideDataError(f"guide data 'reading_level' must be one of {', '.join(READING_LEVELS)}, got {level!r}")
    minutes = data.get("reading_minutes")
    if minutes is not None and (isinstance(minutes, bool) or not isinstance(minutes, int) or minutes < 0):
        raise GuideDataError(f"guide data 'reading_minutes' must be a whole number >= 0, got {minutes!r}")

    labels = _strings(data.get("labels"), "labels")
    areas = _strings(data.get("areas"), "areas")
    details: dict[str, tuple[str, str | None]] = {}
    descriptions: dict[str, str] = {}
    for item in data.get("label_details") or ():
        if not isinstance(item, Mapping) or not isinstance(item.get("name"), str):
            raise GuideDataError(f"guide data 'label_details' items must have a text 'name', got {item!r}")
        source = item.get("source") if item.get("source") in ("rule", "human") else "rule"
        rule = item.get("rule")
        details[item["name"]] = (source, str(rule) if rule is not None else None)
        if isinstance(item.get("description"), str) and item["description"]:
            descriptions[item["name"]] = item["description"]

    focus_lines = []
    for point in data.get("focus") or ():
        if isinstance(point, Mapping):
            focus_lines.append(" ".join(str(point.get(key) or "") for key in ("file", "symbol", "reason")).strip())
        elif isinstance(point, str):
            focus_lines.append(point)

    merged_at = data.get("merged_at")
    if merged_at is not None:
        if not isinstance(merged_at, str):
            raise GuideDataError(f"guide data 'merged_at' must be an ISO-8601 time or null, got {merged_at!r}")
        try:
            merged_at = iso(utc(datetime.fromisoformat(merged_at)))
        except ValueError:
            raise GuideDataError(f"guide data 'merged_at' is not an ISO-8601 time: {merged_at!r}") from None

    def text(key: str) -> str | None:
        value = data.get(key)
        return value if isinstance(value, str) and value else None

    try:
        blob = json.dumps(data, ensure_ascii=False)
    except (TypeError, ValueError) as exc:
        raise GuideDataError(f"guide data is not JSON-serialisable: {exc}") from None
    return {
        "repository": repository,
        "number": number,
        "title": title,
        "url": text("url"),
        "author": text("author"),
        "merged_at": merged_at,
        "change_type": text("change_type"),
        "breaking": 1 if data.get("breaking") else 0,
        "importance": importance,
        "reading_level": level,
        "reading_minutes": minutes,
        "lang": text("lang"),
        "summary": text("summary") or "",
        "labels": labels,
        "areas": areas,
        "focus_text": "\n".join(line for line in focus_lines if line),
        "data": blob,
        "stored_at": iso(datetime.now(UTC)),
        "details": details,
        "descriptions": descriptions,
    }


def _strings(value: Any, key: str) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str) or not isinstance(value, Iterable) or not all(isinstance(v, str) for v in value):
        raise GuideDataError(f"guide data {key!r} must be a list of text, got {value!r}")
    seen: dict[str, str] = {}
    for item in value:
        if item.strip():
            seen.setdefault(item.casefold(), item)
    return list(seen.values())


def utc(moment: datetime) -> datetime:
    """``moment`` in UTC; a time without an offset is taken to be UTC (as GitHub's times are)."""
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def iso(moment: datetime) -> str:
    """``2026-08-20T12:00:00Z``: how the stores write a UTC time as text."""
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def day_start(day: date | datetime) -> datetime:
    """Midnight UTC starting ``day`` (a ``datetime`` is only turned into UTC)."""
    if isinstance(day, datetime):
        return utc(day)
    return datetime.combine(day, time(0), tzinfo=UTC)


def as_bound(value: date | datetime | str | None, name: str) -> date | datetime | None:
    """A ``since``/``until`` bound from a date, a time or ``YYYY-MM-DD``/ISO-8601 text; ``ValueError`` naming ``name``."""
    if value is None or isinstance(value, date):
        return value
    try:
        if len(value) == 10:
            return date.fromisoformat(value)
        return datetime.fromisoformat(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a date (YYYY-MM-DD) or ISO-8601 time, got {value!r}") from None
