"""Atom feeds of the tag view (RFC 4287), written with feedgen.

Each entry is one pull request: its title, the summary sentence as the Atom
``summary`` and an HTML ``content`` holding the summary, the verdict line and the
top focus points, linking to the full guide (``alternate``) and to the pull request
on GitHub (inside the content).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime

from feedgen.feed import FeedGenerator
from markupsafe import Markup

from bot.tagview.digest import Entry
from bot.tagview.pages import safe_url

#: Entries a feed carries at most.
FEED_ENTRIES = 50
#: Media type of every feed response.
ATOM_TYPE = "application/atom+xml"


def entry_html(entry: Entry) -> str:
    """The entry's ``content``: summary, verdict, focus points and breaking facts as escaped HTML."""
    parts = [Markup("<p>{}</p>").format(entry.summary), Markup("<p><em>{}</em></p>").format(entry.verdict)]
    if entry.focus:
        items = Markup("").join(
            Markup("<li>{}{}</li>").format(Markup("<code>{}</code>: ").format(p.file) if p.file else "", p.reason)
            for p in entry.focus
        )
        parts.append(Markup("<ul>{}</ul>").format(items))
    for fact in entry.breaking:
        parts.append(Markup("<p><strong>⚠</strong> {}</p>").format(fact))
    github = safe_url(entry.row.url)
    if github:
        parts.append(Markup('<p><a href="{}">#{}</a></p>').format(github, entry.row.number))
    return str(Markup("").join(parts))


def render_feed(
    *,
    feed_id: str,
    title: str,
    self_url: str,
    page_url: str,
    entries: Sequence[Entry],
    guide_url: Callable[[int], str],
    lang: str,
) -> bytes:
    """An Atom document (UTF-8 bytes) with ``entries`` in the given order.

    ``feed_id`` and ``self_url`` identify the feed, ``page_url`` is the HTML page it
    mirrors, ``guide_url(number)`` the absolute URL of a guide page. ``updated`` is the
    newest merge (the Unix epoch for an empty feed, so the document does not change
    between requests).
    """
    fg = FeedGenerator()
    fg.id(feed_id)
    fg.title(title)
    fg.link(href=self_url, rel="self", type=ATOM_TYPE)
    fg.link(href=page_url, rel="alternate", type="text/html")
    fg.language(lang)
    fg.generator("prguide")
    newest = datetime.fromtimestamp(0, UTC)
    # feedgen prepends each added entry; add them in reverse so the document keeps our order.
    for entry in reversed(entries):
        row = entry.row
        merged = _when(row.merged_at)
        newest = max(newest, merged)
        item = fg.add_entry()
        item.id(guide_url(row.number))
        item.title(f"#{row.number} {row.title}")
        item.link(href=guide_url(row.number), rel="alternate", type="text/html")
        # The GitHub link goes into the content only: feedgen 1.0 writes an entry's links
        # without their rel, and a second rel-less link would be a second "alternate".
        if row.author:
            item.author(name=row.author)
        item.updated(merged)
        item.published(merged)
        item.summary(_plain(entry))
        item.content(entry_html(entry), type="html")
        for label in row.labels:
            item.category(term=label)
    fg.updated(newest)
    return fg.atom_str(pretty=True)


def _plain(entry: Entry) -> str:
    return f"{entry.summary.striptags()} — {entry.verdict}"


def _when(value: str | None) -> datetime:
    if not value:
        return datetime.fromtimestamp(0, UTC)
    return datetime.fromisoformat(value.replace("Z", "+00:00"))
