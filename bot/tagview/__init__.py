"""The tag view: every merged pull request's guide, grouped by label.

:mod:`bot.tagview.store` keeps the guides in SQLite, :mod:`bot.tagview.web` serves
them as HTML and JSON, :mod:`bot.tagview.export` writes the same pages as static
files, and :mod:`bot.tagview.cli` is the ``prguide view`` command.
"""
