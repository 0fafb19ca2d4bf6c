"""Slash commands for maintainers: ``/prguide refresh``, ``lang``, ``label``, ``why``, ``help``.

:mod:`~bot.commands.parse` finds commands in a comment, :mod:`~bot.commands.decide`
decides what they should do, and :mod:`~bot.commands.handler` does it through
:mod:`bot.app.publish`.
"""
