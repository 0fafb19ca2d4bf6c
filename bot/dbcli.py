"""``prguide db``: the PostgreSQL database of a multi-replica installation.

``prguide db migrate [--url URL] [--schema NAME]`` applies every component's missing
migrations, the features' tables included (the server also does this on start, under
an advisory lock) and prints each component's version. ``prguide db copy --from sqlite:PATH [--to URL]`` moves a
single-machine installation's guides and jobs in (see :mod:`bot.dbcopy`). The URL
defaults to ``$PRGUIDE_DATABASE_URL`` and the schema
to ``$PRGUIDE_DATABASE_SCHEMA``. Errors are one line.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

import bot.locale as catalogue


_URL_HELP = "postgresql://USER@HOST:PORT/DATABASE (default $PRGUIDE_DATABASE_URL)"
_SCHEMA_HELP = "schema of prguide's tables (default $PRGUIDE_DATABASE_SCHEMA, else the URL's search_path, else public)"


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Add the ``db`` actions to the ``prguide db`` parser."""
    actions = p.add_subparsers(metavar="ACTION")
    migrate = actions.add_parser("migrate", help="apply the database migrations now")
    migrate.add_argument("--url", help=_URL_HELP)
    migrate.add_argument("--schema", help=_SCHEMA_HELP)
    migrate.set_defaults(func=_cmd_migrate, command="db migrate")
    copy = actions.add_parser(
        "copy", help="move a single-machine installation (SQLite file) into PostgreSQL: guides and jobs"
    )
    copy.add_argument("--from", dest="source", required=True, metavar="sqlite:PATH", help="the SQLite database file")
    copy.add_argument("--to", dest="url", metavar="URL", help=_URL_HELP)
    copy.add_argument("--schema", help=_SCHEMA_HELP)
    copy.set_defaults(func=_cmd_copy, command="db copy")


def run(args: argparse.Namespace) -> int:
    """``prguide db`` without an action: show the actions."""
    print("prguide db: choose an action: migrate, copy (see 'prguide db --help')", file=sys.stderr)
    return 2


def _target(args: argparse.Namespace, flag: str) -> str | None:
    """The PostgreSQL URL of ``flag`` (else ``$PRGUIDE_DATABASE_URL``), or None after saying why there is none."""
    from bot.app import pg

    url = args.url or os.environ.get("PRGUIDE_DATABASE_URL", "").strip()
    if not url:
        print(f"prguide {args.command}: no database: pass {flag} or set PRGUIDE_DATABASE_URL", file=sys.stderr)
        return None
    if not pg.is_postgresql_url(url):
        print(f"prguide {args.command}: {flag} must be a postgresql:// URL, got {pg.redact(url)}", file=sys.stderr)
        return None
    return url


def _failed(args: argparse.Namespace, where: str, exc: BaseException) -> int:
    """Print a database failure on one line (``where``: what was being used); returns the exit status 1."""
    text = " ".join(str(exc).split())
    print(f"prguide {args.command}: {where}: {text}", file=sys.stderr)
    return 1


def _load_components() -> None:
    """Register every component's migrations: the platform's (:func:`bot.app.pg.load_components`)
    and the features' (the narrator's cache and token count, registered by
    :mod:`bot.feature_support`), the same set the server migrates on start."""
    from bot.app import pg

    pg.load_components()
    import bot.feature_support  # noqa: F401 -- registers the features' tables when imported


def _cmd_migrate(args: argparse.Namespace) -> int:
    import psycopg

    from bot.app import pg
    from bot.app.db import DatabaseError

    url = _target(args, "--url")
    if url is None:
        return 2
    schema = args.schema or os.environ.get("PRGUIDE_DATABASE_SCHEMA", "").strip() or pg.url_schema(url) or pg.DEFAULT_SCHEMA
    _load_components()
    try:
        versions = pg.migrate(url, schema)
    except (psycopg.Error, DatabaseError) as exc:
        return _failed(args, f"{pg.redact(url)} schema {schema}", exc)
    for component, version in sorted(versions.items()):
        print(f"{component}: version {version}")
    return 0


def _cmd_copy(args: argparse.Namespace) -> int:
    import sqlite3

    import psycopg

    from bot.app import pg
    from bot.app.db import DatabaseError
    from bot.dbcopy import copy_sqlite_to_postgresql, parse_sqlite_source

    url = _target(args, "--to")
    if url is None:
        return 2
    try:
        path = parse_sqlite_source(args.source)
    except ValueError as exc:
        print(f"prguide db copy: {exc}", file=sys.stderr)
        return 2
    schema = args.schema or os.environ.get("PRGUIDE_DATABASE_SCHEMA", "").strip() or None
    _load_components()
    try:
        summary = copy_sqlite_to_postgresql(path, url, schema=schema)
    except ValueError as exc:
        print(f"prguide db copy: {exc}", file=sys.stderr)
        return 1
    except (psycopg.Error, sqlite3.Error, DatabaseError) as exc:
        return _failed(args, f"{path} -> {pg.redact(url)}", exc)
    lang = _language()
    print(copy_report(summary, lang, source=str(path), target=pg.redact(url)))
    for line in summary.damaged:
        print(f"prguide db copy: {line}", file=sys.stderr)
    if summary.damaged:
        left = catalogue.ngettext("db.copy.damaged", "db.copy.damaged", len(summary.damaged), lang)
        print(f"prguide db copy: {left.format(count=len(summary.damaged))}", file=sys.stderr)
        return 1
    return 0


def copy_report(summary: Any, lang: str, *, source: str, target: str) -> str:
    """The line ``prguide db copy`` prints: what was copied, and what was already there
    (the plural forms are the message catalogue's, in ``lang``)."""
    n_guides, n_repositories, n_jobs = summary.guides, summary.repositories, summary.jobs_added
    line = catalogue.gettext("db.copy.done", lang).format(
        guides=catalogue.ngettext("db.copy.guides", "db.copy.guides", n_guides, lang).format(count=n_guides),
        repositories=catalogue.ngettext("db.copy.repositories", "db.copy.repositories", n_repositories, lang).format(
            count=n_repositories
        ),
        jobs=catalogue.ngettext("db.copy.jobs", "db.copy.jobs", n_jobs, lang).format(count=n_jobs),
        source=source, target=target,
    )
    there_guides, there_jobs = summary.guides_unchanged, summary.jobs_unchanged
    if there_guides or there_jobs:
        line += catalogue.gettext("db.copy.there", lang).format(
            guides=catalogue.ngettext("db.copy.guides", "db.copy.guides", there_guides, lang).format(count=there_guides),
            jobs=catalogue.ngettext("db.copy.jobs", "db.copy.jobs", there_jobs, lang).format(count=there_jobs),
        )
    return line


def _language() -> str:
    """The language of the command's report: ``$PRGUIDE_LANG`` when the catalogue has it, else English."""
    wanted = os.environ.get("PRGUIDE_LANG", "").strip().lower()
    return wanted if wanted in catalogue.languages() else catalogue.SOURCE_LANGUAGE
