"""The tag view: every merged pull request's guide, grouped by label.

:mod:`bot.tagview.store` keeps the guides in SQLite (:mod:`bot.tagview.pgstore` in
PostgreSQL; the shapes both answer with are in :mod:`bot.tagview.model`),
:mod:`bot.tagview.web` serves them as HTML, JSON and Atom feeds (:mod:`bot.tagview.feeds`),
:mod:`bot.tagview.digest` picks what to read first in a window,
:mod:`bot.tagview.addresses` says which absolute address links start with,
:mod:`bot.tagview.export` writes the same pages and feeds as static files, and
:mod:`bot.tagview.cli` is the ``prguide view`` command. ``docs/tagview.md`` is the
reader's side of it.
"""
