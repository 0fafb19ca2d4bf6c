"""Atom feeds of the tag view (RFC 4287), written with feedgen.

Each entry is one pull request: its title, the summary sentence as the Atom
``summary`` and an HTML ``content`` holding the summary, the verdict line and the
top focus points, linking to the full guide (``alternate``) and to the pull request
on GitHub (inside the content).

Ids never depend on where a feed was fetched from: an entry's id is a ``urn:uuid:``
made from the repository and the pull request number (:func:`entry_id`), a feed's from
the repository, the feed and its parameters in a fixed order (:func:`feed_id`). So a
feed reader sees the same entries whichever host name, proxy or public address served
them, and a feed moved to another address keeps them.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from urllib.parse import urlencode

from markupsafe import Markup

from bot.tagview.digest import Entry
from bot.tagview.i18n import Messages
from bot.tagview.pages import safe_url

#: Entries a feed carries at most.
FEED_ENTRIES = 50
#: Media type of every feed response.
ATOM_TYPE = "application/atom+xml"
#: The namespace of prguide's feed and entry ids (a fixed random UUID: ids are name-based UUIDs in it).
ID_NAMESPACE = uuid.UUID("f8364f21-3933-4c0e-8e3a-ebc8fed08e4b")
#: What XML 1.0 cannot hold (C0 controls but tab and newlines, surrogates, U+FFFE/U+FFFF): a pull
#: request's title or text may carry them (a terminal's colour codes), and lxml refuses the whole feed.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _xml(text: str) -> str:
    return _NOT_XML.sub("", text)


def entry_id(repository: str, number: int) -> str:
    """The Atom id of pull request ``number``'s entry: ``urn:uuid:...``, the same in every feed and language.

    Repository names match in any case, as on GitHub.
    """
    return f"urn:uuid:{uuid.uuid5(ID_NAMESPACE, f'guide:{repository.casefold()}#{int(number)}')}"


def feed_id(repository: str, kind: str, params: Mapping[str, str | None]) -> str:
    """The Atom id of a feed: ``kind`` (``"tags"`` or ``"digest"``) of ``repository`` with ``params``.

    Empty parameters are left out and the rest sorted, so the order of a query string
    does not make another feed.
    """
    canonical = urlencode(sorted((str(k), str(v)) for k, v in params.items() if v not in (None, "")))
    return f"urn:uuid:{uuid.uuid5(ID_NAMESPACE, f'feed:{repository.casefold()}/{kind}?{canonical}')}"


def feed_title(lang: str, repository: str, label: str | None, *, digest: bool = False) -> str:
    """A feed's title in ``lang``: the repository's guides, a label's, or the (label's) digest."""
    messages = Messages(lang)
    if digest:
        if label:
            return messages("digest.feed_digest_label", repository=repository, label=label)
        return messages("digest.feed_digest", repository=repository)
    if label:
        return messages("digest.feed_label", repository=repository, label=label)
    return messages("digest.feed_tags", repository=repository)


def entry_html(entry: Entry) -> str:
    """The entry's ``content``: summary, verdict, focus points and breaking facts as escaped HTML."""
    # The guide's own texts carry their language when it is not the feed's (a guide stored before it was kept in every language).
    marked = Markup(' lang="{}"').format(entry.foreign) if entry.foreign else Markup("")
    parts = [Markup("<p{}>{}</p>").format(marked, entry.summary), Markup("<p><em>{}</em></p>").format(entry.verdict)]
    if entry.focus:
        items = Markup("").join(
            Markup("<li>{}{}</li>").format(Markup("<code>{}</code>: ").format(p.file) if p.file else "", p.reason)
            for p in entry.focus
        )
        parts.append(Markup("<ul{}>{}</ul>").format(marked, items))
    for fact in entry.breaking:
        parts.append(Markup("<p><strong>⚠</strong> <span{}>{}</span></p>").format(marked, fact))
    if entry.breaking_more:
        parts.append(Markup("<p>{}</p>").format(Messages(entry.page_lang or "en")("digest.breaking_more", count=entry.breaking_more)))
    github = safe_url(entry.row.url)
    if github:
        parts.append(Markup('<p><a href="{}">#{}</a></p>').format(github, entry.row.number))
    return str(Markup("").join(parts))


def render_feed(
    *,
    feed_id: str,
    title: str,
    self_url: str | None,
    page_url: str,
    entries: Sequence[Entry],
    guide_url: Callable[[int], str],
    lang: str,
    updated: str | None = None,
) -> bytes:
    """An Atom document (UTF-8 bytes) with ``entries`` in the given order.

    ``feed_id`` identifies the feed (see :func:`feed_id`); ``self_url`` is where it is
    fetched from (``None``: no ``self`` link), ``page_url`` the HTML page it mirrors,
    ``guide_url(number)`` the URL of a guide page. The feed's ``updated`` is its newest
    merge; an empty feed takes ``updated`` (UTC ISO-8601: the repository's newest merge),
    so the document does not change between requests either way.
    """
    # Imported on the first feed: feedgen brings lxml and libxml2, about 7 MiB resident in
    # every ``prguide serve`` that never serves a feed.
    from feedgen.feed import FeedGenerator

    fg = FeedGenerator()
    fg.id(feed_id)
    fg.title(_xml(title))
    if self_url:
        fg.link(href=self_url, rel="self", type=ATOM_TYPE)
    fg.link(href=page_url, rel="alternate", type="text/html")
    fg.language(lang)
    fg.generator("prguide")
    newest: datetime | None = None
    # feedgen prepends each added entry; add them in reverse so the document keeps our order.
    for entry in reversed(entries):
        row = entry.row
        merged = _when(row.merged_at)
        newest = merged if newest is None else max(newest, merged)
        item = fg.add_entry()
        item.id(entry_id(row.repository, row.number))
        item.title(_xml(f"#{row.number} {row.title}"))
        item.link(href=guide_url(row.number), rel="alternate", type="text/html")
        # The GitHub link goes into the content only: feedgen 1.0 writes an entry's links
        # without their rel, and a second rel-less link would be a second "alternate".
        if row.author:
            item.author(name=_xml(row.author))
        item.updated(merged)
        item.published(merged)
        item.summary(_xml(_plain(entry)))
        item.content(_xml(entry_html(entry)), type="html")
        for label in row.labels:
            item.category(term=_xml(label))
    # A repository without a single merge time: the start of today (UTC).
    fg.updated(newest or (_when(updated) if updated else _today()))
    return fg.atom_str(pretty=True)


def _plain(entry: Entry) -> str:
    return f"{entry.summary.striptags()} — {entry.verdict}"


def _when(value: str | None) -> datetime:
    if not value:
        # A guide without a merge time: a fixed instant, so its entry does not change between requests.
        return datetime.fromtimestamp(0, UTC)
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


def _today() -> datetime:
    return datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
