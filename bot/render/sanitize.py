"""Making text from a pull request safe to quote in a GitHub comment.

PR titles, bodies, review comments, file names and symbol names are written by
anyone who can open a PR. Quoted into prguide's comment they must not ping people
(``@user``, ``@org/team``), inject HTML (``<img onerror=...>``, ``<details>``
breaking the layout, ``<!-- prguide:v1`` forging our marker) or break a table.
"""

from __future__ import annotations

import re

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_MENTION = re.compile(r"@(?=[A-Za-z0-9])")
_WHITESPACE = re.compile(r"\s+")
_BACKTICKS = re.compile(r"`+")

#: A zero-width space after ``@`` keeps the text readable but stops GitHub's mention.
_MENTION_BREAK = "@\u200b"


def strip_control(text: str) -> str:
    """Remove control and bidirectional-override characters (keeps tabs and newlines)."""
    return _CONTROL.sub("", text)


def neutralize(text: str) -> str:
    """Return ``text`` safe for Markdown prose: no HTML, no mentions, no control characters.

    ``&``, ``<`` and ``>`` become entities, so raw HTML and HTML comments show as text.
    """
    text = strip_control(text)
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _MENTION.sub(_MENTION_BREAK, text)


def one_line(text: str, limit: int = 160) -> str:
    """Collapse whitespace and shorten to at most ``limit`` characters, ending with "…".

    Shortening never leaves an inline code span open.
    """
    text = _WHITESPACE.sub(" ", strip_control(text)).strip()
    if len(text) > limit:
        cut = text[: limit - 1]
        space = cut.rfind(" ")
        if space > limit // 2:
            cut = cut[:space]
        if cut.count("`") % 2:
            cut = cut[: cut.rfind("`")]
        text = cut.rstrip() + "…"
    return text


def quote(text: str, limit: int = 160) -> str:
    """A short, neutralised, single-line quote of PR text (for review highlights)."""
    return neutralize(one_line(text, limit))


def code(text: str, limit: int = 120) -> str:
    """``text`` as an inline code span, whatever backticks it contains.

    Inside a code span GitHub neither renders HTML nor links mentions, so only
    control characters and newlines need removing.
    """
    text = _WHITESPACE.sub(" ", strip_control(str(text))).strip()
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    if not text:
        return "` `"
    longest = max((len(m) for m in _BACKTICKS.findall(text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def table_cell(text: str) -> str:
    """Text safe inside a Markdown table cell: neutralised, one line, pipes escaped."""
    return neutralize(one_line(text, 200)).replace("|", "\\|")


def login(name: str) -> str:
    """A GitHub login shown without pinging its owner (bold, mention broken)."""
    clean = re.sub(r"[^A-Za-z0-9\-\[\]_.]", "", name)[:60] or "ghost"
    return f"**{clean}**"
