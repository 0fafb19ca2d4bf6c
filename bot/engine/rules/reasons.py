"""Why a condition held, in words any shipped language can say.

A :class:`Reason` is the English sentence (it *is* a ``str``: logs, the CLI and
tests read it as before) that also remembers its message id and parameters, so
``/prguide why`` can say it in the reader's language (:func:`in_language`).
Parameters may themselves be reasons (translated too) or :class:`Joined` lists.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import bot.locale as catalogue


@dataclass(slots=True, unsafe_hash=True)  # read-only by convention: see bot.engine.analysis.model
class Joined:
    """Items said as one list: joined with the message ``sep`` (``why.sep``, ``why.or``) of the language."""

    items: Sequence[Any]
    sep: str = "why.sep"


def _values(lang: str, params: Mapping[str, Any]) -> dict[str, Any]:
    out = {}
    for name, value in params.items():
        if isinstance(value, Reason):
            out[name] = value.in_language(lang)
        elif isinstance(value, Joined):
            out[name] = catalogue.text(value.sep, lang).join(
                v.in_language(lang) if isinstance(v, Reason) else str(v) for v in value.items
            )
        else:
            out[name] = value
    return out


class Reason(str):
    """The English sentence of message ``key`` with ``params``; :meth:`in_language` says it in another.

    Raises ``KeyError`` for a key the catalogue lacks.
    """

    key: str
    params: Mapping[str, Any]

    def __new__(cls, key: str, **params: Any) -> Reason:
        self = super().__new__(cls, catalogue.message(key, catalogue.SOURCE_LANGUAGE, _values(catalogue.SOURCE_LANGUAGE, params)))
        self.key = key
        self.params = params
        return self

    def in_language(self, lang: str) -> str:
        """The sentence in ``lang`` (``en``, ``zh``, ...)."""
        if lang == catalogue.SOURCE_LANGUAGE:
            return str(self)
        return catalogue.message(self.key, lang, _values(lang, self.params))

    def __reduce__(self) -> tuple[Any, ...]:
        return (_restore, (self.key, dict(self.params)))


def _restore(key: str, params: dict[str, Any]) -> Reason:
    return Reason(key, **params)


def in_language(reason: str, lang: str) -> str:
    """``reason`` in ``lang`` when it is a :class:`Reason`; any other text as it is."""
    return reason.in_language(lang) if isinstance(reason, Reason) else str(reason)
