"""Deciding what a comment's commands should do, without doing any of it.

Pure: :func:`decide` maps (commands, who wrote them, what the guide's marker
remembers, the pull request's state) to a list of actions, which
:mod:`bot.commands.handler` then carries out. Keeping the decision apart from the
GitHub calls lets every permission rule be tested as a table.

Who may do what:

============  ==================================================================
level         commands
============  ==================================================================
anyone        ``help``, ``why``
author        ``refresh``, ``lang`` (and ``label`` when the repository's
              ``.github/prguide.yml`` says ``relabel: [authors]``)
write access  everything (role ``write``, ``maintain`` or ``admin``); ``backfill``
              only with write access
============  ==================================================================

``refresh``, ``lang`` and ``label`` need a merged pull request, or an open one (the
guide is then a preview); a pull request closed without merging gets no guide.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from bot.commands.parse import BACKFILL, HELP, LABEL_ADD, LABEL_REMOVE, LANG, REFRESH, WHY, Command

#: Roles of "Get repository permissions for a user" that grant write access.
WRITE_ROLES = frozenset({"admin", "maintain", "write"})

#: Commands that rebuild and publish the guide.
REBUILDING = frozenset({REFRESH, LANG, LABEL_ADD, LABEL_REMOVE})

ANYONE, AUTHOR, WRITER = 0, 1, 2


@dataclass(frozen=True, slots=True)
class Actor:
    """Who wrote the commands.

    ``login`` is the comment's author; ``role`` their role in the repository
    (``admin``, ``maintain``, ``write``, ``triage``, ``read`` or ``none``; ``None``
    when it was not looked up because no command needed it); ``is_author`` whether
    they opened the pull request.
    """

    login: str
    role: str | None = None
    is_author: bool = False

    @property
    def can_write(self) -> bool:
        """True for write access or more."""
        return self.role in WRITE_ROLES


@dataclass(frozen=True, slots=True)
class PullState:
    """The pull request's state: ``merged``, or else ``open`` (a preview) or closed."""

    merged: bool
    open: bool = False


@dataclass(frozen=True, slots=True)
class Remembered:
    """What the guide's marker remembers (see :class:`bot.engine.marker.MarkerState`).

    ``lang`` is ``None`` when there is no guide yet.
    """

    lang: str | None = None
    human_added: tuple[str, ...] = ()
    human_removed: tuple[str, ...] = ()

    @classmethod
    def from_marker(cls, state: Any) -> Remembered:
        """From a :class:`~bot.engine.marker.MarkerState`, or nothing remembered for ``None``."""
        if state is None:
            return cls()
        return cls(lang=state.human_lang, human_added=tuple(state.human_added), human_removed=tuple(state.human_removed))


# ----- actions --------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class AddLabels:
    """Put these labels on the pull request ("Add labels to an issue")."""

    names: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class RemoveLabels:
    """Take these labels off the pull request ("Remove a label from an issue")."""

    names: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Rebuild:
    """Rebuild the guide from fresh API data and publish it, honouring these overrides.

    ``lang`` is ``None`` to keep the configured language; ``labels_added`` and
    ``labels_removed`` are what the marker will remember; ``preview`` is True for a
    pull request that is not merged yet.
    """

    lang: str | None
    labels_added: tuple[str, ...] = ()
    labels_removed: tuple[str, ...] = ()
    preview: bool = False


@dataclass(frozen=True, slots=True)
class Explain:
    """Reply with why the guide has its labels and score (``label``: just that one)."""

    label: str | None = None


@dataclass(frozen=True, slots=True)
class ShowHelp:
    """Reply with the list of commands."""


@dataclass(frozen=True, slots=True)
class Backfill:
    """Store guides for the repository's last ``limit`` merged pull requests (``None``: its ``backfill`` setting)."""

    limit: int | None = None


@dataclass(frozen=True, slots=True)
class Refuse:
    """Tell the commenter ``command`` did not run: ``reason`` is a catalog key with ``params``."""

    command: Command
    reason: str
    params: dict[str, Any] = field(default_factory=dict)


Action = AddLabels | RemoveLabels | Rebuild | Explain | ShowHelp | Backfill | Refuse


def required_level(command: Command, *, authors_relabel: bool = False) -> int:
    """The least level (``ANYONE``, ``AUTHOR`` or ``WRITER``) that may run ``command``."""
    if command.name in (HELP, WHY) or not command.ok:
        return ANYONE
    if command.name in (REFRESH, LANG):
        return AUTHOR
    if command.name in (LABEL_ADD, LABEL_REMOVE):
        return AUTHOR if authors_relabel else WRITER
    if command.name == BACKFILL:
        return WRITER
    return ANYONE


def needs_role(commands: Sequence[Command], *, is_author: bool, authors_relabel: bool = False) -> bool:
    """True when deciding needs the commenter's repository role (one API call)."""
    level = max((required_level(c, authors_relabel=authors_relabel) for c in commands), default=ANYONE)
    return level == WRITER or (level == AUTHOR and not is_author)


def decide(
    commands: Sequence[Command],
    actor: Actor,
    remembered: Remembered,
    pull: PullState,
    *,
    relabel: Sequence[str] = ("maintainers",),
) -> list[Action]:
    """The actions for ``commands``, in the order they should happen.

    ``relabel`` is the ``relabel`` setting of ``.github/prguide.yml``: with
    ``"authors"`` the pull request's author may use ``label`` too (people with write
    access always may). Label changes go first, then at most one :class:`Rebuild`
    (carrying the final language and label overrides, so several commands in one
    comment publish once), then explanations, help and refusals in command order.
    When one comment adds and removes the same label, the later command wins.
    """
    authors_relabel = "authors" in relabel
    level = WRITER if actor.can_write else AUTHOR if actor.is_author else ANYONE
    refusals: list[Refuse] = []
    replies: list[Action] = []
    lang: str | None = None
    rebuild = False
    touched: dict[str, tuple[str, str]] = {}

    for command in commands:
        if not command.ok:
            refusals.append(Refuse(command, command.error or "cmd.err.unknown", dict(command.error_params)))
            continue
        needed = required_level(command, authors_relabel=authors_relabel)
        if level < needed:
            reason = _denial(command, authors_relabel)
            refusals.append(Refuse(command, reason))
            continue
        if command.name in REBUILDING and not pull.merged and not pull.open:
            refusals.append(Refuse(command, "cmd.deny.closed"))
            continue
        if command.name == HELP:
            replies.append(ShowHelp())
        elif command.name == WHY:
            replies.append(Explain(command.args[0] if command.args else None))
        elif command.name == BACKFILL:
            if not any(isinstance(r, Backfill) for r in replies):  # one run per comment
                replies.append(Backfill(int(command.args[0]) if command.args else None))
        elif command.name == LANG:
            lang, rebuild = command.args[0], True
        elif command.name == REFRESH:
            rebuild = True
        elif command.name in (LABEL_ADD, LABEL_REMOVE):
            verb = "add" if command.name == LABEL_ADD else "remove"
            for name in command.args:
                touched.pop(name.casefold(), None)  # re-insert so the order is the latest
                touched[name.casefold()] = (name, verb)
            rebuild = True

    actions: list[Action] = []
    added = tuple(name for name, verb in touched.values() if verb == "add")
    removed = tuple(name for name, verb in touched.values() if verb == "remove")
    if removed:
        actions.append(RemoveLabels(removed))
    if added:
        actions.append(AddLabels(added))
    if rebuild:
        human_added, human_removed = _remember(remembered, touched)
        actions.append(
            Rebuild(
                lang=lang or remembered.lang,
                labels_added=human_added,
                labels_removed=human_removed,
                preview=not pull.merged,
            )
        )
    return actions + replies + refusals


def _denial(command: Command, authors_relabel: bool) -> str:
    if command.name == BACKFILL:
        return "cmd.deny.backfill"
    if command.name in (LABEL_ADD, LABEL_REMOVE):
        return "cmd.deny.label_authors" if authors_relabel else "cmd.deny.label"
    return "cmd.deny.author"


def _remember(remembered: Remembered, touched: dict[str, tuple[str, str]]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The marker's human-decided labels after this comment's label commands."""
    added = {n.casefold(): n for n in remembered.human_added}
    removed = {n.casefold(): n for n in remembered.human_removed}
    for key, (name, verb) in touched.items():
        added.pop(key, None)
        removed.pop(key, None)
        (added if verb == "add" else removed)[key] = name
    return tuple(added.values()), tuple(removed.values())
