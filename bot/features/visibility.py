"""Private stays private: the tag view follows each repository's visibility.

The tag view serves a repository's guides to anyone only while the guide store holds it
as ``public``. GitHub tells of a change in two ways ("Webhook events and payloads"):
the ``repository`` event (actions ``privatized``, ``publicized``, ``deleted``), and the
``repository`` object (or, for installation events, the ``repositories`` lists) that
every delivery carries with its ``private`` flag. Hence two parts:

- :func:`observe_visibility` (an :data:`bot.app.routing.Observer`) looks at every
  delivery before it is answered: a repository whose payload does not say
  ``"private": false`` (private, or unsure: the flag missing or not a boolean) is
  marked private at once. A payload saying public never opens a repository held
  private: it may be an old delivery, redelivered after the repository was made private.
- :data:`VISIBILITY_CHANGED` queues ``repository.privatized``/``publicized``/``deleted``
  as jobs that ask GitHub for the repository ("Get a repository") and store what it
  says now, so the job that runs last is right whatever order the events came in. A
  repository GitHub will not show the installation (404, 403) is private.
- :data:`REPOSITORY_MOVED` queues ``repository.renamed``/``transferred``: the guides
  stored under the old name move to the new one (a later ``privatized`` names only the
  new one), which then takes the visibility GitHub shows, as above.
"""

from __future__ import annotations

import logging
import re
import weakref
from collections.abc import Iterator, Mapping
from typing import Any

from cachetools import TTLCache

from bot.app.errors import GiveUp
from bot.app.github import Forbidden, NotFound
from bot.app.jobstore import Job
from bot.app.offload import run_store
from bot.app.routing import JobContext, Route, Services
from bot.app.webhook import Delivery
from bot.feature_support import is_private

log = logging.getLogger("prguide.jobs")

#: Seconds a repository once marked private is not checked again by :func:`observe_visibility`.
KNOWN_PRIVATE_TTL = 60
# "owner/name" as GitHub allows them ("Creating a new repository").
_FULL_NAME = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})/[A-Za-z0-9._-]{1,100}$")
#: Repositories known to be private in a store, per store: no store call while remembered.
_known_private: weakref.WeakKeyDictionary[Any, TTLCache] = weakref.WeakKeyDictionary()


def repositories_of(payload: Mapping[str, Any]) -> Iterator[tuple[str, bool]]:
    """``(full_name, private)`` of every repository a delivery's payload names, private when unsure.

    ``repository`` (every repository event), and ``repositories``, ``repositories_added``
    and ``repositories_removed`` (installation events). Names that are not ``owner/name``
    are skipped.
    """
    items = [payload.get("repository")]
    for key in ("repositories", "repositories_added", "repositories_removed"):
        listed = payload.get(key)
        if isinstance(listed, list):
            items.extend(listed)
    for item in items:
        if isinstance(item, Mapping) and isinstance(item.get("full_name"), str) and _FULL_NAME.match(item["full_name"]):
            yield item["full_name"], is_private(item)


def _close(store: Any, repository: str) -> bool:
    """Mark ``repository`` private unless it already is; True when the store changed."""
    if store.visibility(repository) == "private":
        return False
    store.set_visibility(repository, "private")
    return True


async def observe_visibility(delivery: Delivery, services: Services) -> None:
    """Mark private, before the delivery is answered, every repository it does not show as public.

    One store read per repository while it is not remembered as private
    (:data:`KNOWN_PRIVATE_TTL`), a write only when it was public or unknown; none for a
    payload saying public. Store errors propagate (the router logs them).
    """
    store = services.guides
    if store is None:
        return
    known = _known_private.setdefault(store, TTLCache(maxsize=4096, ttl=KNOWN_PRIVATE_TTL))
    for repository, private in repositories_of(delivery.payload):
        key = repository.casefold()
        if not private or key in known:
            continue
        if await run_store(store, _close, store, repository):
            log.info(
                "%s is private (delivery %s): its guides are hidden", repository, delivery.id,
                extra={"repository": repository, "delivery": delivery.id, "event": delivery.event},
            )
        known[key] = True


async def handle_visibility_changed(job: Job, ctx: JobContext) -> None:
    """``repository.privatized``/``publicized``/``deleted``: store the visibility GitHub shows now.

    Reads "Get a repository" (``GET /repos/{owner}/{repo}``) as the job's installation;
    ``private: false`` there makes the tag view serve its guides, anything else (and a
    404 or 403) hides them. Sets the outcome to ``public``/``private`` (``skipped``
    without a guide store). Raises :class:`GiveUp` for a payload without a repository
    and the client's errors otherwise (``RetryLater``...).
    """
    payload = job.data
    repo = payload.get("repository") if isinstance(payload, Mapping) else None
    if not isinstance(repo, Mapping) or not isinstance(repo.get("full_name"), str):
        raise GiveUp(f"delivery {job.delivery_id}: repository event without a repository")
    repository = repo["full_name"]
    ctx.fields["repository"] = repository
    store = ctx.services.guides
    if store is None:
        ctx.outcome = "skipped"
        return
    ctx.outcome = await _follow_github(ctx, store, repository)


async def _follow_github(ctx: JobContext, store: Any, repository: str) -> str:
    """Store the visibility "Get a repository" shows the installation now (404, 403: private); returns it."""
    owner, name = repository.split("/", 1)
    try:
        current = await ctx.client.getitem("/repos/{owner}/{repo}", {"owner": owner, "repo": name})
        visibility = "private" if is_private(current) else "public"
    except (NotFound, Forbidden):
        visibility = "private"
    await run_store(store, store.set_visibility, repository, visibility)
    known = _known_private.get(store)
    if known is not None:
        known.pop(repository.casefold(), None)
    return visibility


def former_name(payload: Mapping[str, Any]) -> str | None:
    """The ``owner/name`` a ``repository.renamed``/``transferred`` delivery's repository had, or ``None``.

    "Webhook events and payloads" (repository): ``renamed`` carries
    ``changes.repository.name.from`` (the name without the owner), ``transferred``
    ``changes.owner.from.user.login`` or ``changes.owner.from.organization.login``.
    ``None`` when the payload does not say, or the name is not ``owner/name``.
    """
    repo, changes = payload.get("repository"), payload.get("changes")
    if not isinstance(repo, Mapping) or not isinstance(changes, Mapping) or not isinstance(repo.get("full_name"), str):
        return None
    owner, _, name = repo["full_name"].partition("/")
    was = changes.get("repository")
    if isinstance(was, Mapping) and isinstance(was.get("name"), Mapping) and isinstance(was["name"].get("from"), str):
        name = was["name"]["from"]
    was = changes.get("owner")
    if isinstance(was, Mapping) and isinstance(was.get("from"), Mapping):
        account = was["from"].get("user") or was["from"].get("organization")
        if isinstance(account, Mapping) and isinstance(account.get("login"), str):
            owner = account["login"]
    old = f"{owner}/{name}"
    return old if _FULL_NAME.match(old) and old != repo["full_name"] else None


async def handle_repository_moved(job: Job, ctx: JobContext) -> None:
    """``repository.renamed``/``transferred``: move the guides stored under the old name to the new one.

    The guide store's :meth:`~bot.tagview.store.GuideStore.rename` moves every row kept
    under the old name (merging into rows the new name has), then the new name takes
    the visibility GitHub shows now, as :func:`handle_visibility_changed` does: a rename
    job that runs after a ``privatized`` one does not open the repository again.
    Sets the outcome to ``public``/``private`` (``skipped`` without a guide store).
    Raises :class:`GiveUp` for a payload that names no old and new repository.
    """
    payload = job.data
    repo = payload.get("repository") if isinstance(payload, Mapping) else None
    old = former_name(payload) if isinstance(payload, Mapping) else None
    if old is None or not isinstance(repo, Mapping) or not _FULL_NAME.match(str(repo.get("full_name"))):
        raise GiveUp(f"delivery {job.delivery_id}: repository.{job.action} without the old and new name")
    new = repo["full_name"]
    ctx.fields.update(repository=new, former=old)
    store = ctx.services.guides
    if store is None:
        ctx.outcome = "skipped"
        return
    moved = await run_store(store, store.rename, old, new)
    ctx.fields["guides_moved"] = moved
    if moved:
        log.info("%s is now %s: %d guide(s) moved", old, new, moved, extra={"repository": new, "former": old})
    ctx.outcome = await _follow_github(ctx, store, new)


#: ``repository`` events that change who may see a repository ("Webhook events and payloads": repository).
VISIBILITY_CHANGED = Route(
    "repository", ("privatized", "publicized", "deleted"), handle_visibility_changed, bots=True, pull_request_only=False,
)

#: ``repository`` events that give a repository another name ("Webhook events and payloads": repository).
REPOSITORY_MOVED = Route(
    "repository", ("renamed", "transferred"), handle_repository_moved, bots=True, pull_request_only=False,
)

#: This feature's routes and observers, composed in :mod:`bot.features`.
ROUTES = (VISIBILITY_CHANGED, REPOSITORY_MOVED)
OBSERVERS = (observe_visibility,)
