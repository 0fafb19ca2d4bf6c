"""How prguide words its replies to commands; the sentences are in the message catalogue (:mod:`bot.locale`).

Same conventions as :mod:`bot.engine.render.messages`: parameters pass through
:func:`bot.engine.render.messages.format_params`, so a label name or a command line quoted
back is a code span and a login never pings anyone.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import bot.locale as catalogue
from bot.engine.render import sanitize
from bot.engine.render.messages import format_params


#: The catalogue as a ``{key: {lang: text}}`` mapping (read-only).
MESSAGES = catalogue.MessageTable()

#: How list items are joined in a sentence, by language.
LIST_SEP: Mapping[str, str] = {lang: catalogue.text("list.and", lang) for lang in ("en", "zh")}

#: The usage line of each command, shown with a refusal and by ``/prguide help``.
USAGE: Mapping[str, str] = {
    "refresh": "/prguide refresh",
    "lang": "/prguide lang zh|en",
    "label add": '/prguide label add NAME... ("quoted name" for spaces)',
    "label remove": "/prguide label remove NAME...",
    "why": "/prguide why [LABEL|N]",
    "help": "/prguide help",
    "backfill": "/prguide backfill [N]",
}

#: Message key of each command's line in ``/prguide help``.
HELP_KEYS: Mapping[str, str] = {
    "refresh": "cmd.help.refresh",
    "lang": "cmd.help.lang",
    "label add": "cmd.help.label_add",
    "label remove": "cmd.help.label_remove",
    "why": "cmd.help.why",
    "help": "cmd.help.help",
    "backfill": "cmd.help.backfill",
}

#: Parameters that hold text someone typed; they are quoted back as code spans.
_TYPED = {"value", "command", "label", "source", "usage", "condition"}


def t(key: str, lang: str, params: Mapping[str, Any] | None = None) -> str:
    """The reply message ``key`` in ``lang`` (``"en"``/``"zh"``) with ``params`` made safe.

    A plural message takes the form for ``params["count"]``. Typed text (``value``,
    ``command``, ``label``, ``source``, ``usage``, ``condition``) becomes a code span and ``labels`` a
    list of them; ``user`` must already be safe (see :func:`bot.engine.render.sanitize.login`);
    the rest goes through :func:`bot.engine.render.messages.format_params`. Raises
    ``KeyError`` for an unknown key.
    """
    template = catalogue.text(key, lang, params.get("count") if params else None)
    if not params:
        return template
    values = format_params(lang, {k: v for k, v in params.items() if k not in _TYPED and k not in ("user", "labels")})
    for name in _TYPED & params.keys():
        values[name] = sanitize.code(str(params[name]))
    if "labels" in params:
        values["labels"] = LIST_SEP[lang].join(sanitize.code(str(v)) for v in params["labels"])
    if "user" in params:
        values["user"] = params["user"]
    return template.format(**values)
