"""Checking guide data before it is stored, the cards entries are shown from, and the UTC times the stores keep.

:func:`prepare_save` turns a guide's data (``Guide.record()``) into the columns both stores
write, refusing unusable data with a :class:`GuideDataError` that names the key.

A guide is stored once, with its sentences in every language the engine wrote it in:
the top-level keys in the guide's own ``lang``, the others under ``languages``
(``{"zh": {"summary": ..., "focus": [...], "markdown": ...}}``, see
:data:`bot.engine.build.LANGUAGE_KEYS`). :func:`guide_cards` cuts from it, per language,
the small *card* a listed entry shows (:data:`CARD_TEXTS` in that language plus
:data:`CARD_FACTS`), so list pages never read a guide's Markdown; :func:`pick_card`
makes the same card from stored data (guides stored before cards existed).
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
# A language code: "en", "zh", "pt-BR" (BCP 47's common shapes).
_LANG_RE = re.compile(r"^[a-z]{2,3}(?:-[A-Za-z0-9]{2,8})?$")

#: Keys of a card written in the card's language (a guide's sentences an entry shows).
CARD_TEXTS = ("summary", "audience", "focus", "breaking_reasons")
#: Keys of a card that are the same in every language (reviews, area names in every language,
#: the pull request that reverted this one: ``{number, days}``).
CARD_FACTS = ("review", "area_info", "label_areas", "reverted_by")
#: Focus points and breaking changes a card keeps (an entry shows fewer); ``breaking_count`` counts them all.
CARD_ITEMS = 5


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


def change_columns(row: Mapping[str, Any], change: Any) -> tuple[str, str, str] | None:
    """The ``(paths, gone, definitions)`` JSON columns of a guide's changed paths and definitions
    (a :class:`bot.engine.history.coupling.MergedChange`), or ``None`` when not given.

    Raises :class:`GuideDataError` when ``change`` is of another pull request or its paths
    or definitions are not text.
    """
    if change is None:
        return None
    if getattr(change, "number", None) != row["number"]:
        raise GuideDataError(f"changed paths of #{getattr(change, 'number', None)} given with the guide of #{row['number']}")
    paths, gone = tuple(getattr(change, "paths", ()) or ()), tuple(getattr(change, "gone", ()) or ())
    definitions = tuple(getattr(change, "definitions", ()) or ())
    if not all(isinstance(p, str) for p in (*paths, *gone, *definitions)):
        raise GuideDataError("changed paths and definitions must be text")
    return (json.dumps(list(paths), ensure_ascii=False), json.dumps(list(gone), ensure_ascii=False),
            json.dumps(list(definitions), ensure_ascii=False))  # fmt: skip


def repository_name(value: Any) -> str:
    """``value`` when it is a repository's ``owner/repo`` as GitHub allows it; :class:`GuideDataError` otherwise."""
    if not isinstance(value, str) or not _REPO_RE.match(value) or value.split("/")[1] in (".", ".."):
        raise GuideDataError(f"guide data 'repository' must be 'owner/repo', got {value!r}")
    return value


def normalise(data: Mapping[str, Any]) -> dict[str, Any]:
    """The columns of one guide from its data, plus ``details`` (label sources) and ``descriptions``.

    Raises :class:`GuideDataError` naming the first unusable key.
    """
    if not isinstance(data, Mapping):
        raise GuideDataError(f"guide data must be a mapping, got {type(data).__name__}")
    repository = repository_name(data.get("repository"))
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

    languages = data.get("languages")
    if languages is not None and (
        not isinstance(languages, Mapping)
        or not all(isinstance(k, str) and _LANG_RE.match(k) and isinstance(v, Mapping) for k, v in languages.items())
    ):
        raise GuideDataError(f"guide data 'languages' must map language codes to guide texts, got {_short(languages)}")

    # Search finds a guide by its focus points in any language it was stored in.
    focus_lines = []
    for texts in (data, *(languages or {}).values()):
        for point in texts.get("focus") or ():
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
        "focus_text": "\n".join(dict.fromkeys(line for line in focus_lines if line)),
        "data": blob,
        "cards": {lang: json.dumps(card, ensure_ascii=False) for lang, card in guide_cards(data).items()},
        "fixes_from": fixed_origin(data),
        "stored_at": iso(datetime.now(UTC)),
        "details": details,
        "descriptions": descriptions,
    }


def guide_cards(data: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """``{lang: card}`` for every language ``data`` (a guide's record) holds its sentences in.

    A card is ``{"lang": lang, **CARD_TEXTS in lang, "breaking_count": n, **CARD_FACTS}``:
    what a listed entry shows (at most :data:`CARD_ITEMS` focus points and breaking changes;
    ``breaking_count`` counts them all), and for a fix whose changed lines the history
    traced to one pull request, ``"fixes_code_from": N`` (``data["history"]``). The guide's
    own language comes first (``""`` when ``data`` names none).
    """
    own = data.get("lang") if isinstance(data.get("lang"), str) else ""
    facts = {key: data[key] for key in CARD_FACTS if key in data}
    origin = fixed_origin(data)
    if origin is not None:
        facts["fixes_code_from"] = origin
    cards = {own: {"lang": own, **_card_texts(data), **facts}}
    languages = data.get("languages")
    for lang, texts in (languages.items() if isinstance(languages, Mapping) else ()):
        if lang != own and isinstance(texts, Mapping):
            cards[lang] = {"lang": lang, **_card_texts(texts), **facts}
    return cards


def fixed_origin(data: Mapping[str, Any]) -> int | None:
    """The pull request whose code the fix ``data`` (a guide's record) changes, as its history
    facts name it (``history.fixes_code_from``); ``None`` for a guide that is no fix or names none."""
    history = data.get("history")
    number = history.get("fixes_code_from") if isinstance(history, Mapping) else None
    if data.get("change_type") != "fix" or isinstance(number, bool) or not isinstance(number, int) or not 0 < number < 2**31:
        return None
    return number


def _card_texts(texts: Mapping[str, Any]) -> dict[str, Any]:
    """:data:`CARD_TEXTS` of one language, lists cut to :data:`CARD_ITEMS` (a pull request may break 100 things)."""
    out = {key: texts[key] for key in CARD_TEXTS if key in texts}
    for key in ("focus", "breaking_reasons"):
        if isinstance(out.get(key), list):
            if key == "breaking_reasons":
                out["breaking_count"] = len(out[key])
            out[key] = out[key][:CARD_ITEMS]
    return out


def pick_card(data: Mapping[str, Any], lang: str) -> dict[str, Any]:
    """The card of stored guide ``data`` in ``lang``, else in the guide's own language (``card["lang"]`` says which)."""
    cards = guide_cards(data)
    return cards.get(lang) or next(iter(cards.values()))


def localized(data: Mapping[str, Any], lang: str) -> tuple[str, str]:
    """``(markdown, its language)`` of stored guide ``data`` for a reader of ``lang``: the guide
    written in ``lang`` when it was stored in it, else as stored (in its own language, ``""`` if unknown)."""
    own = str(data.get("lang") or "")
    languages = data.get("languages")
    texts = languages.get(lang) if isinstance(languages, Mapping) and lang != own else None
    if isinstance(texts, Mapping) and isinstance(texts.get("markdown"), str):
        return texts["markdown"], lang
    return str(data.get("markdown") or ""), own


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


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
