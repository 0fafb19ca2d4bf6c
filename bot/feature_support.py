"""What several features share: the repository's config file and the tag view's copy of a guide.

The merged pull request guide (:mod:`bot.features.guide`) and the ``/prguide``
commands (:mod:`bot.commands.handler`) both read ``.github/prguide.yml``, word its
problems as a notice on the guide, and store what they publish for the tag view.
"""

from __future__ import annotations

import logging
from typing import Any

from cachetools import TTLCache

import bot.locale as catalogue
from bot.app.fetch import fetch_file
from bot.render.messages import t
from bot.repo_config import DEFAULT_SOURCE, RepoConfig, load_repo_config
from bot.rules.model import Problem
from bot.snapshot import PullRequestSnapshot

log = logging.getLogger("prguide.jobs")


#: Where a repository keeps its prguide settings, on its default branch.
REPO_CONFIG_PATH = DEFAULT_SOURCE
#: Problems of an invalid repository config shown in the guide's notice, at most.
MAX_NOTICE_PROBLEMS = 3


async def read_repo_config(
    client: Any, repository: str, ref: str | None, *, missing: TTLCache | None = None, fresh: bool = False
) -> RepoConfig:
    """The repository's ``.github/prguide.yml`` at ``ref`` (its default branch).

    A missing file gives the defaults; an unreadable or invalid one gives the defaults
    with the problem kept. ``missing`` remembers repositories without the file: no call
    while remembered, unless ``fresh`` (a refresh, or a PR that changed the file), which
    asks GitHub and updates the memory. GitHub errors other than 404 propagate
    (``RetryLater``...).
    """
    key = (repository, ref or "")
    if missing is not None and not fresh and key in missing:
        return RepoConfig.default()
    try:
        text = await fetch_file(client, repository, REPO_CONFIG_PATH, ref or None)
    except ValueError as exc:
        return RepoConfig.default(problems=(Problem(REPO_CONFIG_PATH, 1, str(exc)),))
    if missing is not None:
        if text is None:
            missing[key] = True
        else:
            missing.pop(key, None)
    return load_repo_config(text, REPO_CONFIG_PATH)


def changes_repo_config(snapshot: PullRequestSnapshot) -> bool:
    """True when the pull request adds or edits ``.github/prguide.yml``."""
    return any(f.filename == REPO_CONFIG_PATH and f.status != "removed" for f in snapshot.files)


def config_check_notices(config: RepoConfig) -> dict[str, tuple[str, ...]]:
    """The guide's check of a config file the pull request changed: valid, or its problems."""
    if not config.problems:
        return {lang: (t("config.ok", lang, {"file": config.source}),) for lang in catalogue.languages()}
    lines = tuple(f"`{config.source}:{p.line}`: {_problem_text(p)}" for p in config.problems[:MAX_NOTICE_PROBLEMS])
    return {lang: (t("config.bad", lang, {"file": config.source}),) + lines for lang in catalogue.languages()}


def config_notices(source: str, problems: tuple[Problem, ...]) -> dict[str, tuple[str, ...]] | None:
    """One notice per language saying the repository's config file was not used, and why."""
    if not problems:
        return None
    shown = "; ".join(_problem_text(p) for p in problems[:MAX_NOTICE_PROBLEMS])
    more = len(problems) - MAX_NOTICE_PROBLEMS
    key = "config.unusable_more" if more > 0 else "config.unusable"
    params = {"file": source, "problems": shown, "more": more}
    return {lang: (catalogue.message(key, lang, params),) for lang in catalogue.languages()}


def _problem_text(problem: Problem) -> str:
    text = f"line {problem.line}: {problem.message}"
    return text.replace("`", "'")


def save_guide(store: Any, guide: Any, *, private: bool) -> None:
    """Store a published guide for the tag view; a store failure is logged, never fatal.

    A repository seen private stays private in the tag view (pages behind the view token).
    """
    try:
        # Private is sticky: a payload saying "public" may be an old one redelivered after the
        # repository was made private, so it never opens a repository the store holds as private.
        public = not private and store.visibility(guide.repository) != "private"
        store.save(
            dict(guide.data, markdown=guide.markdown),
            visibility="public" if public else "private",
            label_descriptions={name: spec.description for name, spec in guide.label_specs.items()},
        )
    except Exception:  # the comment is published; the tag view catches up on the next refresh
        log.exception("cannot store the guide of %s#%s for the tag view", guide.repository, guide.number)

