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

The ``.po`` files are read at first use (no compile step: the package ships the
``.po`` files) by a small reader (:mod:`bot.locale.po`; Babel reads what it does not
understand) into one lookup table per language; a message a language lacks falls
back to English. :attr:`Language.translations` serves the same catalogue through
:mod:`gettext`'s ``GNUTranslations``.
"""

from __future__ import annotations

import gettext as _gettext
import io
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from functools import cache, cached_property
from pathlib import Path
from typing import Any

from bot.locale import po as _po

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

    ``ids``: every message id the ``.po`` file translates; ``plurals``: the ids that are
    plural messages; :attr:`translations`: a :class:`gettext.GNUTranslations` (English as
    fallback), made when first asked for.
    """

    code: str
    ids: frozenset[str]
    plurals: frozenset[str]
    #: ``{id: text}``, a plural message ``{id: ((form, ...), plural)}`` with the
    #: language's ``plural(n) -> form index``; English fills the gaps. What :func:`text`
    #: reads: one dict lookup per message on the guide's hot path.
    table: Mapping[str, Any]

    @cached_property
    def translations(self) -> _gettext.GNUTranslations:
        """The catalogue as :mod:`gettext` serves it, compiled by Babel (English as fallback)."""
        return _babel_translations(self.code)


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


def _babel_translations(lang: str) -> _gettext.GNUTranslations:
    """``lang``'s catalogue read by Babel and served by :mod:`gettext` (English as fallback)."""
    from babel.messages.mofile import write_mo

    buffer = io.BytesIO()
    write_mo(buffer, read_catalog(lang))
    buffer.seek(0)
    translations = _gettext.GNUTranslations(buffer)
    if lang != SOURCE_LANGUAGE:
        translations.add_fallback(language(SOURCE_LANGUAGE).translations)
    return translations


class _Lookups:
    """``gettext``/``ngettext`` of one language as :class:`gettext.GNUTranslations` answers
    them (a message a language lacks falls back to English, then to its id), from a read
    ``.po`` file: fuzzy and untranslated messages are left out, as Babel's ``.mo`` leaves them."""

    def __init__(self, po: _po.PoFile, fallback: _Lookups | None):
        self.plural = _gettext.c2py(po.plural)
        self.fallback = fallback
        self.singular: dict[str, str] = {}
        self.forms: dict[tuple[str, int], str] = {}
        for m in po.messages:
            if m.fuzzy or (len(m.ids) == 1 and not m.strings[0]):
                continue
            if len(m.ids) == 1:
                self.singular[m.ids[0]] = m.strings[0]
            else:
                for i, form in enumerate(m.strings):
                    self.forms[(m.ids[0], i)] = form or m.ids[min(i, 1)]

    def gettext(self, key: str) -> str:
        found = self.singular.get(key)
        if found is not None:
            return found
        return self.fallback.gettext(key) if self.fallback else key

    def ngettext(self, key: str, n: int) -> str:
        found = self.forms.get((key, self.plural(n)))
        if found is not None:
            return found
        return self.fallback.ngettext(key, n) if self.fallback else key


@cache
def _read(lang: str) -> _po.PoFile | None:
    """``lang``'s ``.po`` file by the quick reader, or None when it left the file to Babel."""
    path = po_path(lang)
    if not path.is_file():
        raise KeyError(f"no message catalogue for language {lang!r}")
    return _po.read(path)


@cache
def _lookups(lang: str) -> _Lookups | None:
    """``lang``'s :class:`_Lookups` from the quick ``.po`` reader, or None when it left the file to Babel."""
    po = _read(lang)
    if po is None:
        return None
    fallback = None
    if lang != SOURCE_LANGUAGE:
        fallback = _lookups(SOURCE_LANGUAGE)
        if fallback is None:
            return None
    return _Lookups(po, fallback)


@cache
def language(lang: str) -> Language:
    """The compiled catalogue of ``lang`` (read once per process).

    Read by :mod:`bot.locale.po`, or by Babel when that reader leaves the file to it.
    Raises ``KeyError`` for a language without a catalogue.
    """
    found = _lookups(lang)
    if found is None:
        return _babel_language(lang)
    po = _read(lang)
    assert po is not None  # _lookups read it
    ids = frozenset(m.ids[0] for m in po.messages if m.ids[0] and (len(m.ids) > 1 or m.strings[0]))
    plurals = frozenset(m.ids[0] for m in po.messages if len(m.ids) > 1)
    representatives = _representatives(found.plural)
    table: dict[str, Any] = {}
    if lang != SOURCE_LANGUAGE:
        table.update(language(SOURCE_LANGUAGE).table)
    for key in ids:
        if key in plurals:
            table[key] = (tuple(found.ngettext(key, n) for n in representatives), found.plural)
        else:
            table[key] = found.gettext(key)
    return Language(lang, ids, plurals, table)


def _babel_language(lang: str) -> Language:
    """:func:`language` read by Babel (the reference :mod:`bot.locale.po` must agree with)."""
    catalog = read_catalog(lang)
    translations = _babel_translations(lang)
    ids = frozenset(m.id[0] if isinstance(m.id, tuple) else m.id for m in catalog if m.id and m.string)
    plurals = frozenset(m.id[0] for m in catalog if m.id and m.pluralizable)
    table: dict[str, Any] = {}
    if lang != SOURCE_LANGUAGE:
        table.update(language(SOURCE_LANGUAGE).table)
    representatives = _representatives(translations.plural)
    for key in ids:
        if key in plurals:
            forms = tuple(translations.ngettext(key, key, n) for n in representatives)
            table[key] = (forms, translations.plural)
        else:
            table[key] = translations.gettext(key)
    return Language(lang, ids, plurals, table)


def _representatives(plural: Callable[[int], int]) -> list[int]:
    """One count per plural form of the language, in form order (``plural(n)`` gives the index)."""
    found: dict[int, int] = {}
    for n in range(0, 200):
        found.setdefault(plural(n), n)
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

    def text_in(self, key: str, lang: str, default: str) -> str:
        """``self.get(key, {}).get(lang, default)`` without reading the other languages."""
        if has(key):
            return text(key, lang)
        base = _singular_base(key)
        return default if base is None else text(base, lang, 1)

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
