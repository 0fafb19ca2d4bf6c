"""Making text from a pull request safe to quote in a GitHub comment.

PR titles, bodies, review comments, file names and symbol names are written by
anyone who can open a PR. Quoted into prguide's comment they must not ping people
(``@user``, ``@org/team``), inject HTML (``<img onerror=...>``, ``<details>``
breaking the layout, ``<!-- prguide:v1`` forging our marker), dress a link up as
prguide's own words or load an image (``[click](https://…)``, ``![t](https://…)``),
post a cross-reference into another repository's timeline (``other-org/repo#123``,
``other-org/repo@abc1234``) or break a table.
"""

from __future__ import annotations

import functools
import re

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_MENTION = re.compile(r"@(?=[A-Za-z0-9])")
_BACKTICKS = re.compile(r"`+")

#: A zero-width space after ``@`` keeps the text readable but stops GitHub's mention.
_MENTION_BREAK = "@\u200b"
# Inline code spans (CommonMark: a run of backticks closed by a run of the same length).
# A backtick after a backslash is a literal backtick in CommonMark, not the start of a span:
# such a run is read as prose (and neutralised), never passed through as code.
_CODE_SPAN = re.compile(r"(?<![`\\])(`+)(?!`).+?(?<!`)\1(?!`)", re.DOTALL)
# An inline link or image opening: "[text](" or "![text](", text possibly holding escapes.
_LINK_OPEN = re.compile(r"\[((?:\\.|[^\[\]\\\n])*)\]\(")
# GitHub's cross-repository references, "owner/repo#123" and "owner/repo@sha"
# ("Autolinked references and URLs"), not inside a path or URL.
_CROSS_REF = re.compile(
    r"(?<![\w./@-])[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})/[A-Za-z0-9._-]{1,100}(?:#\d+|@[0-9a-fA-F]{7,40})(?![\w-])"
)


def strip_control(text: str) -> str:
    """Remove control and bidirectional-override characters (keeps tabs and newlines)."""
    return text if text.isprintable() else _CONTROL.sub("", text)  # every character it removes is unprintable


def neutralize(text: str) -> str:
    """Return ``text`` safe for Markdown prose: no HTML, mentions, links, images,
    cross-repository references or control characters.

    ``&``, ``<`` and ``>`` become entities, so raw HTML, HTML comments and autolinks
    (``<https://…>``) show as text. ``[t](url)`` and ``![t](url)`` lose their meaning
    (the bracket is escaped: the text reads the same, the URL stays visible and is not
    an image). ``owner/repo#N`` and ``owner/repo@sha`` become code spans, as GitHub
    links references only outside code. Code spans already in the text are kept.
    """
    text = strip_control(text)
    if "`" not in text:  # the common case: no code span to keep apart
        return _prose(text)
    out = []
    start = 0
    for match in _CODE_SPAN.finditer(text):
        out.append(_prose(text[start : match.start()]))
        out.append(_entities(match.group(0)))
        start = match.end()
    out.append(_prose(text[start:]))
    return "".join(out)


def _entities(text: str) -> str:
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _MENTION.sub(_MENTION_BREAK, text)


def _prose(text: str) -> str:
    # Outside the code spans kept, a backslash or backtick is literal text: escaped, so
    # CommonMark reads it the same way (a "\\`" opening no span of its own, a stray "`" no
    # span with the code span a reference below is wrapped in).
    if "\\" in text or "`" in text:
        text = text.replace("\\", "\\\\").replace("`", "\\`")
    if "/" not in text or ("#" not in text and "@" not in text):  # no reference possible
        return _unlink(_entities(text))
    parts = []
    start = 0
    for match in _CROSS_REF.finditer(text):
        parts.append(_unlink(_entities(text[start : match.start()])))
        # The mention break inside the span changes nothing visible; it keeps "@" never
        # followed by a letter anywhere in quoted text, a simple rule to check.
        parts.append(f"`{_MENTION.sub(_MENTION_BREAK, match.group(0))}`")
        start = match.end()
    parts.append(_unlink(_entities(text[start:])))
    return "".join(parts)


def _unlink(text: str) -> str:
    # Escaping the innermost link may turn its outer one into a link with escaped text:
    # repeat until none is left (each pass removes at least one).
    for _ in range(text.count("](")):  # nothing to do without "]("
        escaped = _LINK_OPEN.sub(lambda m: "\\[" + m.group(1) + "\\](", text)
        if escaped == text:
            break
        text = escaped
    return text


def one_line(text: str, limit: int = 160) -> str:
    """Collapse whitespace and shorten to at most ``limit`` characters, ending with "…".

    Shortening never leaves an inline code span open.
    """
    text = " ".join(strip_control(text).split())  # whitespace runs as one space, none at the ends
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
    # A guide quotes the same names in several places and in its JSON form too.
    return _code(text if type(text) is str else str(text), limit)


@functools.lru_cache(maxsize=4096)
def _code(text: str, limit: int) -> str:
    text = " ".join(strip_control(text).split())
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    if not text:
        return "` `"
    longest = max((len(m) for m in _BACKTICKS.findall(text)), default=0) if "`" in text else 0
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
