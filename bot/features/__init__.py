"""The features the app runs, composed in one place.

A feature is a module (or package) that declares ``ROUTES``: the
:class:`~bot.app.routing.Route` objects it handles (event, actions, the cheap
accept check, the job handler), and optionally ``SCHEDULES``
(:class:`~bot.app.routing.Schedule`, periodic work per installation) and ``OBSERVERS``
(:data:`~bot.app.routing.Observer`, a look at every delivery). It may import
the platform (:mod:`bot.app`), the pure engine and :mod:`bot.feature_support`, never
another feature. The server loads :data:`FEATURES` (and :data:`SCHEDULES`) by name
(:data:`bot.app.routing.DEFAULT_FEATURES`); adding a feature is adding a module and a
line here.
"""

from __future__ import annotations

from bot.commands import handler as commands
from bot.features import backfill, guide, narrator, reconcile, reverts, visibility

#: Every feature's routes; two features may not claim the same event and action.
FEATURES = (guide.ROUTES, commands.ROUTES, backfill.ROUTES, reconcile.ROUTES, narrator.ROUTES, visibility.ROUTES, reverts.ROUTES)

#: Every feature's periodic work.
SCHEDULES = (reconcile.SCHEDULES,)

#: Every feature's look at each delivery.
OBSERVERS = (visibility.OBSERVERS,)
