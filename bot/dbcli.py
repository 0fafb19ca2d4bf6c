"""``prguide db``: the PostgreSQL database of a multi-replica installation.

``prguide db migrate [--url URL] [--schema NAME]`` applies every component's missing
migrations (the server also does this on start, under an advisory lock) and prints
each component's version. ``prguide db copy --from sqlite:PATH [--to URL]`` moves a
single-machine installation's guides and jobs in (see :mod:`bot.dbcopy`). The URL
defaults to ``$PRGUIDE_DATABASE_URL`` and the schema
to ``$PRGUIDE_DATABASE_SCHEMA``. Errors are one line.
"""

from __future__ import annotations

import argparse
import os
import sys


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Add the ``db`` actions to the ``prguide db`` parser."""
    actions = p.add_subparsers(metavar="ACTION")
    migrate = actions.add_parser("migrate", help="apply the database migrations now")
    _target_options(migrate)
    migrate.set_defaults(func=_cmd_migrate, command="db migrate")
    copy = actions.add_parser(
        "copy", help="move a single-machine installation (SQLite file) into PostgreSQL: guides and jobs"
    )
    copy.add_argument("--from", dest="source", required=True, metavar="sqlite:PATH", help="the SQLite database file")
    copy.add_argument("--to", dest="url", metavar="URL", help="postgresql://USER@HOST:PORT/DATABASE (default $PRGUIDE_DATABASE_URL)")
    copy.add_argument("--schema", help="schema of prguide's tables (default $PRGUIDE_DATABASE_SCHEMA, else the URL's search_path, else public)")
    copy.set_defaults(func=_cmd_copy, command="db copy")


def _target_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--url", help="postgresql://USER@HOST:PORT/DATABASE (default $PRGUIDE_DATABASE_URL)")
    p.add_argument("--schema", help="schema of prguide's tables (default $PRGUIDE_DATABASE_SCHEMA, else the URL's search_path, else public)")


def run(args: argparse.Namespace) -> int:
    """``prguide db`` without an action: show the actions."""
    print("prguide db: choose an action: migrate, copy (see 'prguide db --help')", file=sys.stderr)
    return 2


def _cmd_migrate(args: argparse.Namespace) -> int:
    import psycopg

    from bot.app import pg
    from bot.app.db import DatabaseError

    url = args.url or os.environ.get("PRGUIDE_DATABASE_URL", "").strip()
    if not url:
        print("prguide db migrate: no database: pass --url or set PRGUIDE_DATABASE_URL", file=sys.stderr)
        return 2
    if not pg.is_postgresql_url(url):
        print(f"prguide db migrate: not a postgresql:// URL: {pg.redact(url)}", file=sys.stderr)
        return 2
    schema = args.schema or os.environ.get("PRGUIDE_DATABASE_SCHEMA", "").strip() or pg.url_schema(url) or pg.DEFAULT_SCHEMA
    pg.load_components()
    try:
        versions = pg.migrate(url, schema)
    except (psycopg.Error, DatabaseError) as exc:
        text = " ".join(str(exc).split())
        print(f"prguide db migrate: {pg.redact(url)} schema {schema}: {text}", file=sys.stderr)
        return 1
    for component, version in sorted(versions.items()):
        print(f"{component}: version {version}")
    return 0


def _cmd_copy(args: argparse.Namespace) -> int:
    import sqlite3

    import psycopg

    from bot.app import pg
    from bot.app.db import DatabaseError
    from bot.dbcopy import copy_sqlite_to_postgresql, parse_sqlite_source

    url = args.url or os.environ.get("PRGUIDE_DATABASE_URL", "").strip()
    if not url:
        print("prguide db copy: no database: pass --to or set PRGUIDE_DATABASE_URL", file=sys.stderr)
        return 2
    if not pg.is_postgresql_url(url):
        print(f"prguide db copy: --to must be a postgresql:// URL, got {pg.redact(url)}", file=sys.stderr)
        return 2
    try:
        path = parse_sqlite_source(args.source)
    except ValueError as exc:
        print(f"prguide db copy: {exc}", file=sys.stderr)
        return 2
    schema = args.schema or os.environ.get("PRGUIDE_DATABASE_SCHEMA", "").strip() or None
    pg.load_components()
    try:
        summary = copy_sqlite_to_postgresql(path, url, schema=schema)
    except ValueError as exc:
        print(f"prguide db copy: {exc}", file=sys.stderr)
        return 1
    except (psycopg.Error, sqlite3.Error, DatabaseError) as exc:
        text = " ".join(str(exc).split())
        print(f"prguide db copy: {path} -> {pg.redact(url)}: {text}", file=sys.stderr)
        return 1
    print(
        f"copied {summary.guides} guides of {summary.repositories} repositories and "
        f"{summary.jobs} jobs ({summary.jobs_added} new) from {path} to {pg.redact(url)}"
    )
    return 0
