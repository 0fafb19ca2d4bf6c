"""Guide Markdown to safe HTML for the tag view.

Pull request text ends up in a guide, so it is untrusted: raw HTML is shown as
text (markdown-it-py with ``html=False``), and only ``http``/``https`` links and
images survive; anything else stays plain text.

The guide template itself folds long lists into ``<details><summary>...</summary>``
and puts its footer in ``<sub>...</sub>``. Those exact shapes, each a paragraph of
its own, become the real elements (never with attributes); their text is still
rendered as escaped Markdown.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from markdown_it import MarkdownIt
from markdown_it.common.utils import escapeHtml

from bot.engine.marker import MARKER_PREFIX

_MARKER_RE = re.compile(re.escape(MARKER_PREFIX) + r"\{.*?\} -->[ \t]*\n?", re.DOTALL)
_DETAILS_OPEN_RE = re.compile(r"<details>\s*<summary>(.*)</summary>", re.DOTALL)
_SUB_RE = re.compile(r"<sub>(.*)</sub>", re.DOTALL)
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
        # The page's own <h1> names the pull request; the guide's top heading becomes
        # an <h2> and the rest keep their relative depth, so no level is skipped.
        headings = [t for t in state.tokens if t.type in ("heading_open", "heading_close")]
        if not headings:
            return
        shift = 2 - min(int(t.tag[1]) for t in headings)
        for token in headings:
            token.tag = f"h{max(2, min(int(token.tag[1]) + shift, 6))}"

    md.core.ruler.push("prguide_shift_headings", shift_headings)

    def guide_elements(state):  # type: ignore[no-untyped-def]
        tokens = state.tokens
        for i in range(len(tokens) - 2):
            if tokens[i].type != "paragraph_open" or tokens[i + 1].type != "inline":
                continue
            text = tokens[i + 1].content.strip()
            html = None
            if text == "</details>":
                html = "</details>\n"
            elif match := _DETAILS_OPEN_RE.fullmatch(text):
                html = f"<details><summary>{md.renderInline(match.group(1))}</summary>\n"
            elif match := _SUB_RE.fullmatch(text):
                html = f"<p><sub>{md.renderInline(match.group(1))}</sub></p>\n"
            if html is not None:
                # Content built here from fixed tags and escaped text, so emitting it raw is safe.
                tokens[i].type, tokens[i].tag, tokens[i].content = "html_block", "", html
                tokens[i + 1].type, tokens[i + 1].content, tokens[i + 1].children = "html_block", "", []
                tokens[i + 2].type, tokens[i + 2].content = "html_block", ""

    md.core.ruler.push("prguide_guide_elements", guide_elements)
    return md


_MD = _parser()


def strip_marker(markdown: str) -> str:
    """``markdown`` without prguide's hidden ``<!-- prguide:v1 {...} -->`` marker."""
    # Only prguide's own marker, which opens the comment: a "<!-- prguide:v1 {" quoted from a
    # diff further down must not swallow the guide up to some later "} -->".
    match = _MARKER_RE.match(markdown.lstrip())
    return markdown.lstrip()[match.end():] if match else markdown


def render_markdown(markdown: str) -> str:
    """Render guide Markdown (CommonMark plus tables and strikethrough) to an HTML fragment.

    Raw HTML is escaped, the prguide marker removed, headings moved so the top one
    is an ``<h2>`` (the page title is the only ``<h1>``), and links or images whose URL is not absolute
    ``http``/``https`` are left as text. Never raises on odd input.
    """
    return _MD.render(strip_marker(markdown or ""))


def render_inline(text: str) -> str:
    """One line of guide text (a focus point, a summary) as inline HTML: code spans and emphasis kept, raw HTML escaped."""
    text = text or ""
    if _MD.inline.terminator_re.search(text) is None and "\r" not in text and "\0" not in text:
        # No character any inline rule starts at: the parser would make the whole line one
        # text token, rendered escaped. Most focus reasons are such plain text.
        return escapeHtml(text)
    return _MD.renderInline(text)
