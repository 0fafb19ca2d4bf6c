"""A quick reader of the ``.po`` files prguide ships, for the running bot.

Babel reads a ``.po`` file into a full catalogue (and imports the ``email`` package to
read its header): that took 20 ms at the first guide of every process. This reader
knows what :mod:`bot.locale.maintain` writes -- comments, flags, ``msgid``,
``msgid_plural``, ``msgstr``/``msgstr[N]`` and strings continued on the next lines --
and gives up (returns ``None``) on anything else (``msgctxt``, obsolete ``#~``
entries, merge conflicts, a message twice, no ``Plural-Forms`` header), so that its
caller falls back to Babel. ``tests/test_catalog.py`` checks that both agree on every
shipped catalogue.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import NamedTuple

_ESCAPE = re.compile(r'\\([\\abfnrtv"])')
_ESCAPES = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v"}


class Message(NamedTuple):
    """One entry of a ``.po`` file: ``ids`` is ``(msgid,)`` or ``(msgid, msgid_plural)``,
    ``strings`` its translation (one per plural form of a plural message)."""

    ids: tuple[str, ...]
    strings: tuple[str, ...]
    fuzzy: bool


class PoFile(NamedTuple):
    """A read ``.po`` file: the plural count and expression of its ``Plural-Forms`` header
    (``2``, ``"(n != 1)"``), and its messages without the header."""

    nplurals: int
    plural: str
    messages: tuple[Message, ...]


def _unescape(quoted: str) -> str:
    text = quoted[1:-1]
    return _ESCAPE.sub(lambda m: _ESCAPES.get(m.group(1), m.group(1)), text) if "\\" in text else text


def read(path: Path) -> PoFile | None:
    """``path`` read, or ``None`` when it holds something this reader leaves to Babel.

    Raises ``OSError`` when the file cannot be read and ``UnicodeDecodeError`` when it
    is not UTF-8 (the charset prguide's catalogues declare).
    """
    entries: list[tuple[list[list[str]], dict[int, list[str]], bool]] = []
    ids: list[list[str]] = []
    strings: dict[int, list[str]] = {}
    fuzzy = False
    current: list[str] | None = None  # the string continuation lines add to
    for raw in path.read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if not line:
            continue
        if line[0] == "#":
            if line[1:2] in ("~", "-"):
                return None
            if ids:
                entries.append((ids, strings, fuzzy))
                ids, strings, fuzzy, current = [], {}, False, None
            if line[1:2] == ",":
                fuzzy = fuzzy or "fuzzy" in (flag.strip() for flag in line[2:].split(","))
            continue
        if line[0] == '"':
            if current is None:
                return None
            current.append(line)
            continue
        keyword, _, arg = line.partition(" ")
        arg = arg.strip()
        if keyword == "msgid":
            if ids:
                entries.append((ids, strings, fuzzy))
                ids, strings, fuzzy = [], {}, False
            current = [arg]
            ids.append(current)
        elif keyword == "msgid_plural" and len(ids) == 1 and not strings:
            current = [arg]
            ids.append(current)
        elif keyword == "msgstr" or (keyword.startswith("msgstr[") and keyword.endswith("]")):
            index = int(keyword[7:-1]) if keyword != "msgstr" else 0
            if not ids or index in strings:
                return None
            current = strings[index] = [arg]
        else:
            return None
    if ids:
        entries.append((ids, strings, fuzzy))
    return _assemble(entries)


def _assemble(entries: list[tuple[list[list[str]], dict[int, list[str]], bool]]) -> PoFile | None:
    if not entries or [len(p) for p in entries[0][0]] != [1] or _unescape(entries[0][0][0][0]) != "":
        return None
    header = "".join(_unescape(part) for part in entries[0][1].get(0, []))
    if "charset=utf-8" not in header.lower():
        return None
    forms = next((line.partition(":")[2] for line in header.split("\n") if line.lower().startswith("plural-forms:")), None)
    if forms is None:
        return None
    params = dict(p.strip().partition("=")[::2] for p in forms.split(";") if "=" in p)
    if not params.get("nplurals", "").strip().isdigit() or not params.get("plural"):
        return None
    nplurals, plural = int(params["nplurals"]), forms.split(";")[1].split("plural=")[1]
    if nplurals < 1:
        return None
    messages, seen = [], {""}
    for ids, strings, fuzzy in entries[1:]:
        texts = tuple("".join(_unescape(part) for part in parts) for parts in ids)
        if not strings or texts[0] in seen or (len(texts) == 1 and set(strings) != {0}) or max(strings) >= max(nplurals, 1):
            return None
        seen.add(texts[0])
        width = nplurals if len(texts) > 1 else 1
        found = tuple("".join(_unescape(p) for p in strings[i]) if i in strings else "" for i in range(width))
        messages.append(Message(texts, found, fuzzy))
    return PoFile(nplurals, plural, tuple(messages))
