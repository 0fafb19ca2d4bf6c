"""What several features share: the repository's config file and the tag view's copy of a guide.

The merged pull request guide (:mod:`bot.features.guide`) and the ``/prguide``
commands (:mod:`bot.commands.handler`) both read ``.github/prguide.yml``, word its
problems as a notice on the guide, and store what they publish for the tag view.
"""

from __future__ import annotations

import asyncio
import logging
import weakref
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from cachetools import LRUCache

import bot.locale as catalogue
from bot.app.config_memory import MissingConfigs
from bot.app.fetch import fetch_file
from bot.app.github import Forbidden
from bot.app.jobstore import PRIORITY_BACKGROUND
from bot.app.offload import run_build, run_store
from bot.engine.render.messages import t
from bot.engine.repo_config import CONFIG_PATHS, DEFAULT_SOURCE, RepoConfig, load_repo_config
from bot.engine.rules.model import Problem
from bot.engine.snapshot import PullRequestSnapshot
from bot.narrator.run import NARRATED_LEVELS, worth_narrating  # noqa: F401 (NARRATED_LEVELS: the levels narrated)

log = logging.getLogger("prguide.jobs")


#: Where a repository keeps its prguide settings, on its default branch.
REPO_CONFIG_PATH = DEFAULT_SOURCE
#: The largest ``.github/prguide.yml`` prguide reads, in bytes: the file is written by anyone
#: who can push to the default branch, and parsing it runs on prguide's CPU.
MAX_CONFIG_BYTES = 64 * 1024
#: ``Problem.line`` of a config file that could not be read at all; its ``message`` is then a
#: message key of :mod:`bot.engine.render.messages` (see :func:`config_notices`).
UNREAD = 0
#: Problems of an invalid repository config shown in the guide's notice, at most.
MAX_NOTICE_PROBLEMS = 3
#: What :func:`read_repo_config` answers, without asking GitHub, for a repository it
#: remembers as having no config file (compare with ``is``).
REMEMBERED_MISSING = RepoConfig.default()


async def read_repo_config(
    client: Any, repository: str, ref: str | None, *, missing: MissingConfigs | None = None, fresh: bool = False
) -> RepoConfig:
    """The repository's ``.github/prguide.yml`` (else ``.github/prguide.yaml``) at ``ref`` (its default branch).

    A missing file gives the defaults; an invalid one keeps its valid keys, with its
    problems (:func:`bot.engine.repo_config.load_repo_config`). One that cannot be read
    (over :data:`MAX_CONFIG_BYTES`, not text, nested too deeply) or a 403 (the installation lacks Contents:
    read) gives :meth:`RepoConfig.unreadable` with the problem kept: the file is
    optional, so it never costs the guide, and what it may switch off stays off. The
    ``.yaml`` name is asked for only when there is no ``.yml``. The YAML is
    parsed in a worker thread, so a large file never holds up the event loop (and the
    webhook's answers). ``missing`` remembers repositories without either file
    (:mod:`bot.app.config_memory`): no call while remembered (the answer is then
    :data:`REMEMBERED_MISSING`), unless ``fresh`` (a command, or a PR that changed the
    file), which asks GitHub and updates the memory. GitHub errors other than 404 propagate
    (``RetryLater``...); so do the shared memory's database errors.
    """
    if missing is not None and not fresh and await missing.known(repository, ref):
        return REMEMBERED_MISSING
    text, path = None, REPO_CONFIG_PATH
    for path in CONFIG_PATHS:
        try:
            text = await fetch_file(client, repository, path, ref or None, max_bytes=MAX_CONFIG_BYTES)
        except ValueError as exc:
            if missing is not None:
                await missing.forget(repository, ref)  # the file exists, even if it cannot be used
            return RepoConfig.unreadable((Problem(path, 1, str(exc)),), source=path)
        except Forbidden as exc:
            log.warning(
                "%s: cannot read %s (%s); the installation needs Contents: read", repository, path, exc.reason,
                extra={"repository": repository},
            )
            return RepoConfig.unreadable((Problem(path, UNREAD, "config.forbidden"),), source=path)
        if text is not None:
            break
    if missing is not None:
        if text is None:
            await missing.remember(repository, ref)
        elif fresh:  # (not fresh, it was not remembered: nothing to forget)
            await missing.forget(repository, ref)
    if text is None:
        return RepoConfig.default()
    try:
        return await asyncio.to_thread(load_repo_config, text, path)
    except RecursionError:
        # YAML nested deeper than the parser's recursion can follow ("x: [[[[..."): no setting can be read.
        return RepoConfig.unreadable((Problem(path, 1, "the YAML is nested too deeply to be read"),), source=path)


def changes_repo_config(snapshot: PullRequestSnapshot) -> bool:
    """True when the pull request adds or edits ``.github/prguide.yml`` (or ``.github/prguide.yaml``)."""
    return any(f.filename in CONFIG_PATHS and f.status != "removed" for f in snapshot.files)


def config_check_notices(config: RepoConfig) -> dict[str, tuple[str, ...]]:
    """The guide's check of a config file the pull request changed: valid, or its problems."""
    if any(p.line == UNREAD for p in config.problems):
        return config_notices(config.source, config.problems) or {}
    if not config.problems:
        return {lang: (t("config.ok", lang, {"file": config.source}),) for lang in catalogue.languages()}
    lines = tuple(_problem_text(p) for p in config.problems[:MAX_NOTICE_PROBLEMS])
    return {lang: (t("config.bad", lang, {"file": config.source}),) + lines for lang in catalogue.languages()}


def config_notices(source: str, problems: tuple[Problem, ...]) -> dict[str, tuple[str, ...]] | None:
    """One notice per language naming the problems of the repository's config file (``FILE:LINE``
    each, the first :data:`MAX_NOTICE_PROBLEMS`): the settings they concern are not used.

    A file that could not be read at all (:data:`UNREAD`) gets its own sentence, naming
    the permission the installation lacks and who can grant it.
    """
    if not problems:
        return None
    unread = [p for p in problems if p.line == UNREAD]
    if unread:
        return {lang: (t(unread[0].message, lang, {"file": source}),) for lang in ("en", "zh")}
    shown = "; ".join(_problem_text(p) for p in problems[:MAX_NOTICE_PROBLEMS])
    more = len(problems) - MAX_NOTICE_PROBLEMS
    key = "config.unusable_more" if more > 0 else "config.unusable"
    params = {"file": source, "problems": shown, "more": more}
    return {lang: (catalogue.message(key, lang, params),) for lang in catalogue.languages()}


#: Refused labels named in the guide's notice, at most (the rest are counted).
MAX_NOTICE_LABELS = 10
_REFUSAL_KEYS = {"limit": "labels.over_limit", "forbidden": "labels.forbidden", "refused": "labels.refused"}


def label_refusal_notices(refusals: Any) -> dict[str, tuple[str, ...]]:
    """One notice line per language and refusal (:class:`bot.app.publish.LabelsRefused`):
    which labels are not on the pull request, and what would fix it."""
    out: dict[str, tuple[str, ...]] = {}
    for lang in ("en", "zh"):
        lines = []
        for refusal in refusals:
            params = {"names": list(refusal.names[:MAX_NOTICE_LABELS]), "count": len(refusal.names), "text": refusal.message}
            lines.append(t(_REFUSAL_KEYS.get(refusal.reason, "labels.refused"), lang, params))
        out[lang] = tuple(lines)
    return out


def merge_notices(*parts: Mapping[str, tuple[str, ...]] | None) -> dict[str, tuple[str, ...]]:
    """Notices by language, each part's lines in order."""
    out: dict[str, tuple[str, ...]] = {}
    for part in parts:
        for lang, lines in (part or {}).items():
            out[lang] = out.get(lang, ()) + tuple(lines)
    return out


def reviser(build: Callable[..., Any], notices: Mapping[str, tuple[str, ...]] | None) -> Callable[[Any], Awaitable[Any]]:
    """The ``revise`` callback of :func:`bot.app.publish.publish_guide`: ``build(notices=...)``
    again (in a worker thread), with the refused labels named after ``notices``."""

    async def revise(refusals: Any) -> Any:
        return await run_build(build, notices=merge_notices(notices, label_refusal_notices(refusals)))

    return revise


def _problem_text(problem: Problem) -> str:
    """```FILE:LINE`: message``: where the problem is, as the rest of prguide names it."""
    text = f"rule {problem.rule_id}: {problem.message}" if problem.rule_id else problem.message
    return f"`{problem.file}:{problem.line}`: " + text.replace("`", "'")


def is_private(repository: Any) -> bool:
    """Whether a payload's ``repository`` object is to be treated as private: unless it says
    ``"private": false`` (a missing or malformed flag is no proof of a public repository)."""
    return not isinstance(repository, Mapping) or repository.get("private") is not False


def guide_page_url(services: Any, repository: str, number: int, *, private: bool) -> str | None:
    """The guide's page in the tag view (``{public_url}/repos/OWNER/REPO/pulls/N/guide``), or ``None``.

    Only when the server knows its public address (``PRGUIDE_PUBLIC_URL``), stores
    guides for the tag view, and the repository is public (a private one's page is not
    for everyone who can read a link).
    """
    base = getattr(services.settings, "public_url", None)
    if not base or private or services.guides is None:
        return None
    return f"{str(base).rstrip('/')}/repos/{repository}/pulls/{int(number)}/guide"


async def save_guide(store: Any, guide: Any, *, private: bool) -> None:
    """Store a published guide for the tag view; a store failure is logged, never fatal.

    A repository seen private stays private in the tag view (pages behind the view token).
    A store on a database server is written from a worker thread (one hop for the
    visibility read and the write), so the event loop goes on meanwhile.
    """
    try:
        await run_store(store, _store_guide, store, guide, private)
    except Exception:  # the comment is published; the tag view catches up on the next refresh
        log.exception("cannot store the guide of %s#%s for the tag view", guide.repository, guide.number)


def _store_guide(store: Any, guide: Any, private: bool) -> None:
    # Private is sticky: a payload saying "public" may be an old one redelivered after the
    # repository was made private, so it never opens a repository the store holds as private.
    public = not private and store.visibility(guide.repository) != "private"
    store.save(
        guide.record(),
        visibility="public" if public else "private",
        label_descriptions={name: spec.description for name, spec in guide.label_specs.items()},
        change=getattr(guide, "change", None),
    )


#: The internal event of backfill jobs (:mod:`bot.features.backfill`) and the action that starts one.
BACKFILL_EVENT = "prguide.backfill"
BACKFILL_START = "start"


def backfill_lane(installation_id: int | None, repository: str) -> str:
    """The job key the backfill runs of an installation take turns on (``backfill:installation:{id}``):
    one list page at a time per installation, whichever events or commands started them
    (``backfill:{repository}`` for a job that names no installation)."""
    return f"backfill:installation:{installation_id}" if installation_id is not None else f"backfill:{repository}"


async def queue_backfill(
    ctx: Any, repository: str, *, private: bool, limit: int | None, run: str, default_branch: str | None = None,
    delay: float = 0.0,
) -> bool:
    """Queue the start of a backfill of ``repository`` (its last merged pull requests' guides); True when new.

    ``ctx`` is the :class:`bot.app.routing.JobContext` of the job asking (an
    installation event, a ``/prguide backfill`` command). ``limit``: how many pull
    requests, ``None`` for the repository's ``backfill`` setting. ``run`` names the
    run and is its idempotency key (derive it from the asking delivery, so a redelivery
    starts nothing twice). The runs of one installation take turns on its lane
    (:func:`backfill_lane`), as background jobs (live jobs due at once go first).
    ``delay``: seconds before it starts.
    """
    payload = {"repository": repository, "private": private, "limit": limit, "run": run, "default_branch": default_branch}
    return await ctx.enqueue(
        BACKFILL_EVENT, BACKFILL_START, payload, key=backfill_lane(ctx.job.installation_id, repository),
        delivery_id=run, installation_id=ctx.job.installation_id, delay=delay, priority=PRIORITY_BACKGROUND,
    )


# ----- narrator ---------------------------------------------------------------------

#: The internal event of a narration job (queued after the engine's guide is published).
NARRATE_EVENT = "prguide.narrate"
_narration_stores: dict[Any, Any] = {}


def _register_narrator_migrations() -> None:
    from bot.app import pg
    from bot.narrator.store import PG_MIGRATIONS

    pg.register_migrations("narrator", PG_MIGRATIONS)


# The narrator's cache and token count live in PostgreSQL when the replicas share one:
# registered at import, before the server's start-up migrates every component.
_register_narrator_migrations()


def llm_config(settings: Any) -> Any:
    """The narrator's :class:`bot.narrator.client.LLMConfig` from the settings, or ``None`` when it is off."""
    from bot.narrator.client import LLMConfig

    if not getattr(settings, "llm_url", None):
        return None
    return LLMConfig(url=settings.llm_url, model=settings.llm_model, api_key=settings.llm_api_key or "",
                     timeout=float(settings.llm_timeout), budget=int(settings.llm_budget))  # fmt: skip


def narration_store(services: Any) -> Any:
    """The narration cache and daily token count (:class:`bot.narrator.store.NarrationStorage`).

    On PostgreSQL (``services.shared`` holds the replica's pool) a
    :class:`bot.narrator.store.PgNarrations` shared by every replica, like the write
    budget; else a :class:`bot.narrator.store.SQLiteNarrations` in the app's database
    file, opened once per path. Call its methods through :func:`bot.app.offload.run_store`
    on the event loop (the PostgreSQL one blocks).
    """
    from bot.narrator.store import PgNarrations, SQLiteNarrations

    db = getattr(getattr(services, "shared", None), "db", None)
    if db is not None:
        if id(db) not in _narration_stores or _narration_stores[id(db)].db is not db:
            _narration_stores[id(db)] = PgNarrations(db)
        return _narration_stores[id(db)]
    path = str(services.settings.db_path)
    if path not in _narration_stores:
        _narration_stores[path] = SQLiteNarrations(path)
    return _narration_stores[path]


def narration_wanted(settings: Any, config: RepoConfig, guide: Any) -> bool:
    """True when the server has a model, the repository did not say ``narrator: off`` and
    ``guide`` (a :class:`bot.engine.build.Guide`) is worth narrating: a quick or deep read
    (:func:`bot.narrator.run.worth_narrating`, as the CLI decides)."""
    return bool(getattr(settings, "llm_url", None)) and getattr(config, "narrator", True) and worth_narrating(
        getattr(guide, "data", None) or {}
    )


async def with_cached_narration(services: Any, guide: Any, head_sha: str) -> Any:
    """``guide`` with its cached narration worked in (no model call), or ``guide`` unchanged.

    A refresh or redelivery of a narrated guide then publishes the same narrated comment
    (GitHub sees no edit) instead of the engine's and a second edit after it.
    """
    from dataclasses import replace

    from bot.narrator.render import Narration, narrate_markdown
    from bot.narrator.run import guide_key

    key = guide_key(guide.data, head_sha, services.settings.llm_model)
    store = narration_store(services)
    hit = await run_store(store, store.get, key)
    if hit is None:
        return guide
    markdown = narrate_markdown(guide.markdown, Narration.from_json(hit), guide.lang, key=key)
    return replace(guide, markdown=markdown)


def narration_key(repository: str, number: int) -> str:
    """The job key of a pull request's narrations: one of its own, so a narration waiting on
    the model never holds the pull request's guide jobs (``{repository}#{number}``), and
    one narration of a pull request runs at a time."""
    return f"{repository}#{number}:narration"


def body_digest(body: str) -> str:
    """What a narration job checks the guide comment against: a hash of the published body."""
    import hashlib

    return hashlib.sha256(body.encode()).hexdigest()[:32]


async def queue_narration(ctx: Any, job: Any, guide: Any, head_sha: str, comment_id: int) -> bool:
    """Queue the narration of a just-published guide (an internal job under :func:`narration_key`,
    background priority: live jobs due at the same time go first).

    The payload carries the guide's JSON data (without its Markdown, which the job reads
    from the comment itself) and :func:`body_digest` of the guide's Markdown: the job
    narrates the comment only while it is still this guide, so an older narration never
    overwrites a newer guide. Returns True when queued, False when already queued or the
    guide is narrated already (from the cache).
    """
    import time

    from bot.engine.marker import parse_marker

    state = parse_marker(guide.markdown)
    if state is not None and state.extra.get("narrated"):
        return False
    data = {k: v for k, v in guide.data.items() if k != "markdown"}
    payload = {"repository": guide.repository, "number": guide.number, "comment_id": int(comment_id),
               "head_sha": head_sha, "guide": data, "queued_at": time.time(), "body": body_digest(guide.markdown)}  # fmt: skip
    # Background work: of the jobs due, the engine's guides of later merges go first, so a slow
    # model server (a worker held up to the LLM timeout per call) never holds them back.
    return await ctx.enqueue(NARRATE_EVENT, None, payload, key=narration_key(guide.repository, guide.number),
                             delivery_id=f"narrate:{job.delivery_id}", installation_id=job.installation_id,
                             priority=PRIORITY_BACKGROUND)  # fmt: skip


async def explain_narration(services: Any, existing: Mapping[str, Any] | None, guide: Any) -> str:
    """For ``/prguide why``: which facts each narrated sentence of the guide comment cites.

    Empty when the comment (``existing``) is not narrated or its narration is no longer
    cached. ``guide`` is the guide as built now (its facts give the cited texts).
    """
    from bot.engine.marker import parse_marker
    from bot.narrator.facts import build_fact_sheet
    from bot.narrator.render import Narration, explain

    state = parse_marker(existing.get("body")) if existing else None
    narrated = state.extra.get("narrated") if state is not None else None
    if not isinstance(narrated, Mapping) or not getattr(services.settings, "llm_url", None):
        return ""
    store = narration_store(services)
    hit = await run_store(store, store.get, str(narrated.get("key") or ""))
    if hit is None:
        return ""
    lines = explain(Narration.from_json(hit), build_fact_sheet(guide.data), guide.lang)
    return "\n".join([f"**{lines[0]}**", ""] + [f"- {line}" for line in lines[1:]])


# ----- change coupling ----------------------------------------------------------------

#: Merged pull requests read back from the tag view for change coupling: each file's last
#: changes and the replay of the newest 200 fit in them.
COUPLING_HISTORY = 1000
#: A repository's coupling thresholds are chosen again once this many pull requests were
#: merged since (the replay takes about half a second; the choice moves slowly).
RECALIBRATE_EVERY = 50
#: Repositories whose calibration is remembered per guide store (the least recently used go).
CALIBRATIONS_KEPT = 4096
# Per guide store (so two apps in one process never share a choice): repository -> the
# newest pull request the calibration saw, its merge time, the thresholds chosen and their score. Never
# the history it replayed: a thousand merged pull requests with their paths per repository.
_calibrations: weakref.WeakKeyDictionary[Any, LRUCache] = weakref.WeakKeyDictionary()


async def coupling_history(services: Any, repository: str, merged_at: str | None) -> Any:
    """The repository's merged history before ``merged_at`` from the tag view's stored guides,
    with the thresholds its own replay chose (:class:`bot.engine.history.coupling.History`),
    for the guide's "usually changes with" follow-ups; ``None`` without a guide store or a
    history. An optional read: a store that fails costs the guide nothing (logged).
    """
    from bot.engine.history.coupling import History, calibrate

    store = getattr(services, "guides", None)
    if store is None:
        return None
    try:
        changes = await run_store(store, store.merged_changes, repository, before=merged_at or None, limit=COUPLING_HISTORY)
    except Exception as exc:  # noqa: BLE001 -- optional read: the guide is built without it
        log.warning("%s: the merged history could not be read: %s", repository, exc)
        return None
    if not changes:
        return None
    chosen = _calibrations.setdefault(store, LRUCache(maxsize=CALIBRATIONS_KEPT))
    key = repository.casefold()
    known = chosen.get(key)
    newest = changes[-1]
    # A choice made on a later history still holds for an older pull request (a refresh):
    # the thresholds are the repository's, only the partners must come from before it.
    if known is None or (known[0] not in {c.number for c in changes[-RECALIBRATE_EVERY:]}
                         and not (known[1] and newest.merged_at and known[1] >= newest.merged_at)):  # fmt: skip
        calibrated = await asyncio.to_thread(calibrate, changes)
        known = chosen[key] = (newest.number, newest.merged_at, calibrated.thresholds, calibrated.score)
    return History(tuple(changes), known[2], known[3])


# ----- reverts ------------------------------------------------------------------------

#: The internal event of a revert note (:mod:`bot.features.reverts`): a merged revert's
#: job queues it on the reverted pull request's key.
REVERT_EVENT = "prguide.revert"


async def queue_revert_note(ctx: Any, job: Any, guide: Any) -> bool:
    """Queue the note on the pull request ``guide`` (a just-built guide) reverts, if any:
    its guide comment and stored guide then say "Reverted by #M N days after it was merged".

    The job runs on the reverted pull request's own key (``owner/repo#N``), so it never runs
    beside that pull request's guide jobs; its delivery id names both pull requests, so a
    redelivered merge queues nothing twice. Returns True when queued.
    """
    reverted = guide.data.get("reverted") if isinstance(guide.data, Mapping) else None
    if not isinstance(reverted, int) or isinstance(reverted, bool) or reverted < 1 or reverted == guide.number:
        return False
    payload = {"repository": guide.repository, "reverted": reverted, "by": guide.number, "merged_at": guide.data.get("merged_at")}
    return await ctx.enqueue(REVERT_EVENT, None, payload, key=f"{guide.repository}#{reverted}",
                             delivery_id=f"revert:{guide.repository}#{reverted}:{guide.number}",
                             installation_id=job.installation_id)  # fmt: skip
