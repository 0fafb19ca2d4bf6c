"""``prguide view``: browse stored guides locally, or export them as static HTML.

``prguide view --db PATH`` serves the tag view on 127.0.0.1 (see :mod:`bot.tagview.web`);
``prguide view --db PATH --export DIR`` writes it, pages and Atom feeds, to ``DIR`` (see
:mod:`bot.tagview.export`). ``--public-url`` (or ``$PRGUIDE_PUBLIC_URL``) is where readers
reach the pages, for absolute links.
``--database-url postgresql://...`` (or ``$PRGUIDE_DATABASE_URL`` when ``--db`` is not
given) reads the guides a multi-replica installation keeps in PostgreSQL.
"""

from __future__ import annotations

import argparse
import ipaddress
import os
import sys
from pathlib import Path

from bot.app.db import database_path

#: Address the local server binds to unless told otherwise.
DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8081


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the ``view`` options to ``parser``."""
    parser.add_argument("--db", type=Path, default=None, help="prguide database file (default: $PRGUIDE_DB or prguide.db)")
    parser.add_argument(
        "--database-url", default=None, metavar="URL",
        help="read the guides from PostgreSQL at postgresql://... instead of a file (default: $PRGUIDE_DATABASE_URL)",
    )
    parser.add_argument("--host", default=DEFAULT_HOST, help=f"address to listen on (default: {DEFAULT_HOST}, this machine only)")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port to listen on (default: {DEFAULT_PORT}; 0 picks a free one)")
    parser.add_argument("--export", type=Path, metavar="DIR", default=None, help="write static HTML pages to DIR instead of serving")
    parser.add_argument(
        "--include-private", action="store_true",
        help="also show private repositories (export, or a server bound to a loopback address)",
    )
    parser.add_argument(
        "--token", default=None,
        help="require 'Authorization: Bearer TOKEN' on every page (default: $PRGUIDE_VIEW_TOKEN)",
    )
    parser.add_argument("--per-label", type=int, default=10, metavar="N", help="newest pull requests shown per label (default: 10)")
    parser.add_argument(
        "--public-url", default=None, metavar="URL",
        help="where readers reach the pages (e.g. https://acme.github.io/guides), for absolute links in feeds "
        "(default: $PRGUIDE_PUBLIC_URL)",
    )


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def open_guide_store(path: Path):
    """Open the tag-view database at ``path`` (created when missing) as a :class:`bot.tagview.store.GuideStore`.

    Raises :class:`ValueError` with a one-line reason when ``path`` is a folder, cannot
    be opened, is not an SQLite database or is one from a newer prguide.
    """
    import sqlite3

    from bot.app.db import DatabaseError
    from bot.tagview.store import GuideStore

    if path.is_dir():
        raise ValueError(f"{path} is a folder, not a database file")
    try:
        return GuideStore(path)
    except (sqlite3.Error, DatabaseError) as exc:
        raise ValueError(f"{path} is not a usable prguide database ({exc})") from None


def open_database_store(url: str):
    """Open the tag view in PostgreSQL at ``url`` as a :class:`bot.tagview.pgstore.PgGuideStore`.

    Raises :class:`ValueError` with a one-line reason (password left out) when the URL
    is not ``postgresql://``, the server cannot be reached or its tables are newer.
    """
    import psycopg

    from bot.app import pg
    from bot.app.db import DatabaseError
    from bot.tagview.pgstore import PgGuideStore

    if not pg.is_postgresql_url(url):
        raise ValueError(f"--database-url must be a postgresql:// URL, got {pg.redact(url)!r}")
    try:
        return PgGuideStore.open(url)
    except (psycopg.Error, DatabaseError) as exc:
        raise ValueError(f"{pg.redact(url)} is not usable ({' '.join(str(exc).split())})") from None


def _repositories(count: int) -> str:
    return f"{count} {'repository' if count == 1 else 'repositories'}"


def run(args: argparse.Namespace) -> int:
    """Serve or export the tag view as ``args`` say; returns the exit status (2 for bad options).

    Offline the reader owns the database, so private repositories left out (without
    ``--include-private``) are counted on stderr, and on the index page of a server bound
    to a loopback address. Exporting only hidden repositories is an error (exit 1), as
    the site would be empty.
    """
    url = None if args.db is not None else (args.database_url or os.environ.get("PRGUIDE_DATABASE_URL", "").strip() or None)
    path = Path(args.db) if args.db is not None else Path(database_path())
    if url is None and not path.exists():
        print(f"prguide view: no database at {path} (pass --db or set PRGUIDE_DB)", file=sys.stderr)
        return 2
    if args.per_label < 1:
        print("prguide view: --per-label must be at least 1", file=sys.stderr)
        return 2
    if args.export is not None and args.export.exists() and not args.export.is_dir():
        print(f"prguide view: --export {args.export} is a file, not a folder", file=sys.stderr)
        return 2
    from bot.tagview.addresses import parse_public_url

    try:
        public_url = parse_public_url(args.public_url or os.environ.get("PRGUIDE_PUBLIC_URL"))
    except ValueError as exc:
        print(f"prguide view: --public-url {exc}", file=sys.stderr)
        return 2
    try:
        store = open_guide_store(path) if url is None else open_database_store(url)
    except ValueError as exc:
        print(f"prguide view: {exc}", file=sys.stderr)
        return 2
    if url is not None:
        from bot.app.pg import redact

        path = redact(url)  # type: ignore[assignment] - only shown in messages from here on
    with store:
        stored = [r for r in store.repositories() if r.guides]
        hidden = 0 if args.include_private else sum(r.visibility != "public" for r in stored)
        if args.export is not None:
            from bot.tagview.export import export_site

            if hidden and hidden == len(stored):
                print(
                    f"prguide view: nothing to export: {'the one repository' if hidden == 1 else f'all {hidden} repositories'} "
                    f"in {path} {'is' if hidden == 1 else 'are'} private (stored without --public); "
                    f"pass --include-private to export {'it' if hidden == 1 else 'them'}",
                    file=sys.stderr,
                )
                return 1
            summary = export_site(
                store, args.export, include_private=args.include_private, per_label=args.per_label, public_url=public_url,
            )
            print(
                f"wrote {summary.files} pages for {_repositories(len(summary.repositories))} to {args.export}, "
                f"and {summary.feeds} Atom feeds"
            )
            if hidden:
                print(
                    f"prguide view: left out {hidden} private {_repositories(hidden).split()[1]}; "
                    f"pass --include-private to export {'it' if hidden == 1 else 'them'} too",
                    file=sys.stderr,
                )
            return 0

        from aiohttp import web

        from bot.tagview.web import TagViewSettings, create_app

        token = args.token or os.environ.get("PRGUIDE_VIEW_TOKEN") or None
        if args.include_private and not token and not _loopback(args.host):
            print(
                "prguide view: --include-private without a token only binds to a loopback address "
                f"(got --host {args.host}); pass --token or drop --include-private",
                file=sys.stderr,
            )
            return 2
        if hidden:
            print(
                f"prguide view: {hidden} private {_repositories(hidden).split()[1]} "
                f"{'is' if hidden == 1 else 'are'} hidden; pass --include-private to show {'it' if hidden == 1 else 'them'}",
                file=sys.stderr,
            )
        settings = TagViewSettings(
            view_token=token, rows_per_label=args.per_label, show_private=args.include_private,
            say_hidden=_loopback(args.host), public_url=public_url,
        )  # fmt: skip
        # aiohttp prints the bound address (useful with --port 0); the pages start at /repos.
        web.run_app(create_app(store, settings), host=args.host, port=args.port)
    return 0
