"""Every sentence of the guide, from the message catalogue (:mod:`bot.locale`).

Keys are referenced by :mod:`bot.engine.classify`, :mod:`bot.engine.focus` and the template.
Parameters are made safe by :func:`format_params` before they are substituted,
so no message can quote PR text raw.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import bot.locale as catalogue
from bot.engine.render import sanitize


#: The catalogue as a ``{key: {lang: text}}`` mapping (read-only), for ``key in MESSAGES`` checks.
MESSAGES = catalogue.MessageTable()

_CODE_PARAMS = {"name", "old", "new", "file", "rule", "label", "author", "code"}
_QUOTE_PARAMS = {"text", "description", "opening", "detail"}


def format_params(lang: str, params: Mapping[str, Any]) -> dict[str, Any]:
    """Make message parameters safe and readable.

    Sequences of names become comma-separated code spans (with "…" when ``count``
    says there are more), ``vars`` pairs of a variable and its default
    ``"`A` (default `1`)"``; ``people`` become un-pinged logins; free text is quoted
    with mentions and HTML neutralised; integers get thousands separators.
    """
    out: dict[str, Any] = {}
    sep = catalogue.text("list.and", lang)
    for key, value in params.items():
        if key == "people":
            out[key] = sep.join(sanitize.login(p) for p in value)
        elif key == "part":
            out[key] = MESSAGES.text_in(f"part.{value}", lang, str(value))
        elif key in ("names", "uses"):
            names = [sanitize.code(n, 64) for n in value]
            more = key == "names" and int(params.get("count", len(names))) > len(names)
            out[key] = sep.join(names) + ("…" if more else "")
        elif key in ("olds", "news"):
            # Lines of a quoted change, each its own code span.
            out[key] = sep.join(sanitize.code(line, 120) for line in value)
        elif key == "changes":
            # (old line, new line) pairs of a quoted change.
            out[key] = sep.join(f"{sanitize.code(a, 120)} → {sanitize.code(b, 120)}" for a, b in value)
        elif key == "vars":
            # (name, default) pairs of environment variables: "`A` (default `1`) and `B`".
            items = [
                catalogue.text("focus.env_var", lang).format(name=sanitize.code(n, 64), new=sanitize.code(v, 64)) if v else sanitize.code(n, 64)
                for n, v in value
            ]
            more = int(params.get("count", len(items))) > len(items)
            out[key] = sep.join(items) + ("…" if more else "")
        elif key == "what":
            shim = f"shim.{value}"
            out[key] = catalogue.text(shim if catalogue.has(shim) else "shim.other", lang)
        elif key in _CODE_PARAMS:
            out[key] = sanitize.code(value) if value not in (None, "") else "—"
        elif key in _QUOTE_PARAMS:
            out[key] = sanitize.quote(str(value), 120)
        elif isinstance(value, bool) or value is None:
            out[key] = value
        elif isinstance(value, int):
            out[key] = f"{value:,}"
        else:
            out[key] = value
    return out


def t(key: str, lang: str, params: Mapping[str, Any] | None = None, *, raw: bool = False) -> str:
    """The message ``key`` in ``lang`` with ``params`` substituted.

    A plural message takes the form for ``params["count"]`` (``ngettext``). Unless
    ``raw``, parameters pass through :func:`format_params`. Raises ``KeyError`` for an
    unknown key (a programming error, caught by the tests).
    """
    template = catalogue.text(key, lang, params.get("count") if params else None)
    if not params:
        return template
    values = dict(params) if raw else format_params(lang, params)
    return template.format(**values)
