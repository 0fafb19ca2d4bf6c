"""prguide's one message catalogue: gettext catalogues, one ``.po`` file per language.

Every sentence prguide shows a person -- the guide, command replies, ``/prguide
why`` conditions, the tag view's chrome -- lives in
``bot/locale/<lang>/LC_MESSAGES/prguide.po``; ``bot/locale/prguide.pot`` is the
template extracted from the code and the Jinja2 templates (see
:mod:`bot.locale.maintain`).

Message ids are stable dotted keys (``h.focus``, ``cmd.why.title``), not English
sentences: the English text is the ``en`` catalogue's translation, so fixing an
English typo does not orphan every other language. A plural message has the same
key as ``msgid`` and ``msgid_plural`` and is chosen with ``ngettext`` by the
``count`` parameter (``nplurals`` comes from each file's ``Plural-Forms``; the
Chinese catalogue has two forms so that a sentence about one thing can be worded
apart).
Placeholders are ``str.format`` fields (``{count}``), flagged
``python-brace-format``.

The ``.po`` files are read with Babel at first use (no compile step: the package
ships the ``.po`` files), compiled in memory and served by :mod:`gettext`'s
``GNUTranslations``; a message a language lacks falls back to English.
"""

from __future__ import annotations

import gettext as _gettext
import io
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

#: Where the catalogues live: ``<lang>/LC_MESSAGES/prguide.po`` below it.
LOCALE_DIR = Path(__file__).resolve().parent
#: The gettext domain (the ``.po`` file's name).
DOMAIN = "prguide"
#: The source language: its catalogue defines every id and every placeholder.
SOURCE_LANGUAGE = "en"


def N_(msgid: str) -> str:
    """Mark ``msgid`` for extraction where it is used as data (returned unchanged)."""
    return msgid


def NP_(msgid: str, msgid_plural: str) -> str:
    """Mark a plural message for extraction (returns ``msgid``); the key is both ids."""
    return msgid


@dataclass(frozen=True)
class Language:
    """One language's compiled catalogue.

    ``translations``: a :class:`gettext.GNUTranslations` (English as fallback);
    ``ids``: every message id the ``.po`` file translates; ``plurals``: the ids that are
    plural messages.
    """

    code: str
    translations: _gettext.GNUTranslations
    ids: frozenset[str]
    plurals: frozenset[str]
    #: ``{id: text}``, a plural message ``{id: ((form, ...), plural)}`` with the
    #: language's ``plural(n) -> form index``; English fills the gaps. What :func:`text`
    #: reads: one dict lookup per message on the guide's hot path.
    table: Mapping[str, Any]


def po_path(lang: str) -> Path:
    """The ``.po`` file of ``lang``."""
    return LOCALE_DIR / lang / "LC_MESSAGES" / f"{DOMAIN}.po"


def languages() -> tuple[str, ...]:
    """The languages with a catalogue, English first, the rest sorted."""
    found = sorted(p.parent.parent.name for p in LOCALE_DIR.glob(f"*/LC_MESSAGES/{DOMAIN}.po"))
    return tuple(sorted(found, key=lambda code: (code != SOURCE_LANGUAGE, code)))


def read_catalog(lang: str) -> Any:
    """The Babel :class:`~babel.messages.catalog.Catalog` of ``lang``'s ``.po`` file.

    Raises ``KeyError`` for a language without a catalogue.
    """
    from babel.messages.pofile import read_po

    path = po_path(lang)
    if not path.is_file():
        raise KeyError(f"no message catalogue for language {lang!r}")
    with path.open("rb") as handle:
        return read_po(handle, locale=lang, domain=DOMAIN)


@cache
def language(lang: str) -> Language:
    """The compiled catalogue of ``lang`` (read once per process).

    Raises ``KeyError`` for a language without a catalogue.
    """
    from babel.messages.mofile import write_mo

    catalog = read_catalog(lang)
    buffer = io.BytesIO()
    write_mo(buffer, catalog)
    buffer.seek(0)
    translations = _gettext.GNUTranslations(buffer)
    if lang != SOURCE_LANGUAGE:
        translations.add_fallback(language(SOURCE_LANGUAGE).translations)
    ids = frozenset(m.id[0] if isinstance(m.id, tuple) else m.id for m in catalog if m.id and m.string)
    plurals = frozenset(m.id[0] for m in catalog if m.id and m.pluralizable)
    table: dict[str, Any] = {}
    if lang != SOURCE_LANGUAGE:
        table.update(language(SOURCE_LANGUAGE).table)
    for key in ids:
        if key in plurals:
            forms = tuple(translations.ngettext(key, key, n) for n in _representatives(translations))
            table[key] = (forms, translations.plural)
        else:
            table[key] = translations.gettext(key)
    return Language(lang, translations, ids, plurals, table)


def _representatives(translations: _gettext.GNUTranslations) -> list[int]:
    """One count per plural form of the language, in form order (``plural(n)`` gives the index)."""
    found: dict[int, int] = {}
    for n in range(0, 200):
        found.setdefault(translations.plural(n), n)
    return [found[i] for i in sorted(found)]


def gettext(msgid: str, lang: str) -> str:
    """The translation of ``msgid`` in ``lang`` (the id itself when no language has it)."""
    return language(lang).translations.gettext(msgid)


def ngettext(msgid: str, msgid_plural: str, n: int, lang: str) -> str:
    """The form of a plural message for ``n`` in ``lang``."""
    return language(lang).translations.ngettext(msgid, msgid_plural, n)


def text(key: str, lang: str, count: Any = None) -> str:
    """The message ``key`` in ``lang``, unformatted; a plural message takes the form for ``count``.

    ``count`` that is not an integer (or absent) picks the general (plural) form.
    Raises ``KeyError`` for an id the source catalogue lacks (a programming error,
    caught by the tests) or a language without a catalogue.
    """
    found = language(lang).table.get(key)
    if found is None:
        raise KeyError(key)
    if type(found) is str:
        return found
    forms, plural = found
    n = count if isinstance(count, int) and not isinstance(count, bool) else (1 if count == 1 else 2)
    return forms[min(plural(n), len(forms) - 1)]


def message(key: str, lang: str, params: Mapping[str, Any] | None = None) -> str:
    """The message ``key`` in ``lang`` with ``params`` substituted as they are (``str.format``).

    Callers that quote untrusted text make it safe first (see
    :func:`bot.engine.render.messages.format_params`). Raises ``KeyError`` as :func:`text`.
    """
    template = text(key, lang, params.get("count") if params else None)
    return template.format(**params) if params else template


def has(key: str) -> bool:
    """True when ``key`` is a message id of the catalogue."""
    return key in language(SOURCE_LANGUAGE).ids


class MessageTable(Mapping[str, Mapping[str, str]]):
    """A read-only ``{key: {lang: text}}`` view of the catalogue, for code written against the old tables.

    ``key in table`` tells whether the catalogue has a message; ``table[key][lang]``
    is its text (the general form of a plural message; ``KEY.one``, the old name of
    the singular, gives the form for 1). Raises ``KeyError`` for an unknown key.
    """

    def __getitem__(self, key: str) -> Mapping[str, str]:
        if has(key):
            return {lang: text(key, lang) for lang in languages()}
        base = _singular_base(key)
        if base is None:
            raise KeyError(key)
        return {lang: text(base, lang, 1) for lang in languages()}

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and (has(key) or _singular_base(key) is not None)

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(language(SOURCE_LANGUAGE).ids))

    def __len__(self) -> int:
        return len(language(SOURCE_LANGUAGE).ids)


def _singular_base(key: str) -> str | None:
    """The plural message whose singular ``key`` names the old way (``KEY.one``, ``KEY_one``), else ``None``."""
    for suffix in (".one", "_one"):
        if key.endswith(suffix) and key[: -len(suffix)] in language(SOURCE_LANGUAGE).plurals:
            return key[: -len(suffix)]
    return None
