"""The tag view's page chrome in English and Chinese, from the message catalogue (:mod:`bot.locale`).

Only the chrome is translated here; a guide's own sentences come from the guide as
stored, in the reader's language when it was stored in it (see
:mod:`bot.tagview.guide_data`).
"""

from __future__ import annotations

from markupsafe import Markup

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

    def template(self, key: str, count: int | None = None) -> str:
        """The message ``key`` unformatted (its plural form for ``count``), to be filled with ``Markup.format``."""
        return catalogue.text(key, self.lang, count)

    def markup(self, key: str, **values: object) -> Markup:
        """The message ``key`` as safe HTML: its text escaped, filled with ``values`` (escaped
        unless they are ``Markup``, such as a link)."""
        return Markup.escape(self.template(key, values.get("count"))).format(**values)  # type: ignore[arg-type]

    def count(self, count: int, key: str = "section_count") -> str:
        """"N pull requests" (or another plural ``key``'s text) in the form the language uses for ``count``."""
        return self(key, count=count)

    def level(self, level: str | None) -> str:
        """A reading level's name, or "" for none."""
        return self(f"level_{level}") if level else ""


def catalog_keys(lang: str) -> frozenset[str]:
    """The message ids a language's catalogue translates (for completeness checks)."""
    return catalogue.language(lang).ids
