"""The tag view's page chrome in English and Chinese, from the message catalogue (:mod:`bot.locale`).

Only the chrome is translated here; a guide's own text stays in the language it
was written in.
"""

from __future__ import annotations

import bot.locale as catalogue

#: Languages the chrome is available in; the first is the default.
LANGUAGES = ("en", "zh")
#: Each language's name written in that language, for the language switch.
LANGUAGE_NAMES = {"en": "English", "zh": "中文"}


def pick_language(value: str | None, default: str = "en") -> str:
    """``value`` if it is a supported language code (any case), else ``default``."""
    code = (value or "").strip().lower()
    return code if code in LANGUAGES else default


class Messages:
    """The chrome strings of one language: ``messages("more", count=3, label="ci")``.

    Falls back to English for a key a translation lacks; raises :class:`KeyError` for
    a key no language has.
    """

    def __init__(self, lang: str):
        self.lang = pick_language(lang)

    def __call__(self, key: str, **values: object) -> str:
        text = catalogue.text(key, self.lang, values.get("count"))
        return text.format(**values) if values else text

    def count(self, count: int, key: str = "section_count") -> str:
        """"N pull requests" (or another plural ``key``'s text) in the form the language uses for ``count``."""
        return self(key, count=count)

    def level(self, level: str | None) -> str:
        """A reading level's name, or "" for none."""
        return self(f"level_{level}") if level else ""


def catalog_keys(lang: str) -> frozenset[str]:
    """The message ids a language's catalogue translates (for completeness checks)."""
    return catalogue.language(lang).ids
