"""Guide Markdown to safe HTML for the tag view.

Pull request text ends up in a guide, so it is untrusted: raw HTML is shown as
text (markdown-it-py with ``html=False``), and only ``http``/``https`` links and
images survive; anything else stays plain text.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from markdown_it import MarkdownIt

from bot.marker import MARKER_PREFIX

_MARKER_RE = re.compile(re.escape(MARKER_PREFIX) + r"\{.*?\} -->[ \t]*\n?", re.DOTALL)
_SCHEMES = ("http", "https")


def _allowed(url: str) -> bool:
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return False
    return parts.scheme.lower() in _SCHEMES and bool(parts.netloc)


def _parser() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    md.enable(["table", "strikethrough"])
    md.validateLink = _allowed  # type: ignore[method-assign]

    def link_open(renderer, tokens, idx, options, env):  # type: ignore[no-untyped-def]
        # Links lead off-site to text we do not control: no referrer, no opener.
        tokens[idx].attrSet("rel", "nofollow noopener noreferrer")
        return renderer.renderToken(tokens, idx, options, env)

    md.add_render_rule("link_open", link_open)

    def shift_headings(state):  # type: ignore[no-untyped-def]
        # The page's own <h1> names the pull request; the guide's headings sit below it.
        for token in state.tokens:
            if token.type in ("heading_open", "heading_close"):
                token.tag = f"h{min(int(token.tag[1]) + 1, 6)}"

    md.core.ruler.push("prguide_shift_headings", shift_headings)
    return md


_MD = _parser()


def strip_marker(markdown: str) -> str:
    """``markdown`` without prguide's hidden ``<!-- prguide:v1 {...} -->`` marker."""
    return _MARKER_RE.sub("", markdown)


def render_markdown(markdown: str) -> str:
    """Render guide Markdown (CommonMark plus tables and strikethrough) to an HTML fragment.

    Raw HTML is escaped, the prguide marker removed, headings moved one level down
    (the page title is the only ``<h1>``), and links or images whose URL is not absolute
    ``http``/``https`` are left as text. Never raises on odd input.
    """
    return _MD.render(strip_marker(markdown or ""))
