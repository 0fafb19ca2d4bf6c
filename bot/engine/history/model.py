"""The history facts a source hands the guide engine, and what the engine concludes from them.

Pure data. A source (:mod:`bot.sources.githistory` for a local clone) blames the lines
:func:`bot.engine.history.lines.trace_plan` picks at the commit before the pull request
and says, for each, which commit wrote it and which merged pull request that commit
belongs to; :func:`bot.engine.history.links.find_link` ranks those pull requests.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

#: How far back (days before the pull request's base) lines are traced: older lines have
#: no origin commit (they count, but name no pull request). Every source uses it.
WINDOW_DAYS = 120

#: Where GitHub and git read revisions a blame sees through (``blame.ignoreRevsFile``):
#: formatting sweeps, which wrote no line's meaning
#: (https://docs.github.com/en/repositories/working-with-files/using-files/viewing-and-understanding-files#ignore-commits-in-the-blame-view).
IGNORE_REVS_FILE = ".git-blame-ignore-revs"
_REV = re.compile(r"^([0-9a-fA-F]{7,64})\b")


def listed_revisions(listing: str) -> tuple[str, ...]:
    """The revisions a ``.git-blame-ignore-revs`` text lists, lower-case, in order: one hash
    (7 to 64 hex digits) at the start of a line; comments (``#``), blank lines and anything
    else are skipped."""
    found = (_REV.match(line.strip()) for line in (listing or "").splitlines())
    return tuple(dict.fromkeys(m[1].lower() for m in found if m))


#: :attr:`HistoryFacts.status` values: the history was read, or why it could not be.
STATUSES = ("ok", "shallow", "missing", "no-base", "error")


@dataclass(frozen=True, slots=True)
class LineOrigin:
    """Who wrote one traced line: ``path``/``line`` as in the file before the pull request
    (:class:`bot.engine.history.lines.ChangedLine`), ``commit`` the commit that last
    changed it (``""`` when it is older than the history searched), ``pull`` the merged
    pull request that commit belongs to (``None`` when it belongs to none: a direct push,
    or a line older than the history searched)."""

    path: str
    line: int
    commit: str
    pull: int | None


@dataclass(frozen=True, slots=True)
class PullOrigin:
    """A merged pull request that wrote traced lines: its ``number``, the ``commit`` that
    carries it on the base branch, ``merged_at`` (Unix seconds: when that commit reached
    the branch), its ``author`` (a GitHub login when known, else the git author name) and
    ``title``."""

    number: int
    commit: str
    merged_at: int
    author: str
    title: str = ""


@dataclass(frozen=True, slots=True)
class EarlierAdded:
    """An earlier merged pull request that added some of the lines a pull request adds
    (:mod:`bot.engine.history.copies`): its ``number``; ``texts`` those lines (whitespace
    collapsed), in the later pull request's order; ``files`` where the earlier one added
    each (one path per text, parallel to ``texts``)."""

    number: int
    texts: tuple[str, ...]
    files: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class HistoryFacts:
    """What a source found about the history of one pull request's changed lines.

    ``status`` is one of :data:`STATUSES`: ``"ok"`` when the lines were blamed;
    ``"shallow"`` (the commit before the pull request is not in a shallow clone),
    ``"missing"`` (the clone lacks that commit), ``"no-base"`` (the pull request has no
    known commit before it) or ``"error"`` (git failed) when not, with ``detail`` saying
    more. ``origins`` has one entry per traced line that was blamed; ``pulls`` describes
    every pull request they name; ``since`` is the earliest time (Unix seconds) the search
    reached: lines older than it have no origin commit (0: the whole history).
    ``traced``, when the source kept it, is how it traced: ``trace_plan(files)`` of the pull
    request's files (a :class:`bot.engine.history.lines.TracePlan`), so the engine does not
    trace the same files again; ``None`` when not kept. ``added``: the merged pull requests of
    the :data:`bot.engine.history.copies.WINDOW_DAYS` days before this one that added some of
    the lines it adds (:class:`EarlierAdded`, newest first; their :class:`PullOrigin` in
    ``pulls``); empty when the source does not read earlier diffs (the app does not).
    """

    status: str
    origins: tuple[LineOrigin, ...] = ()
    pulls: Mapping[int, PullOrigin] = field(default_factory=dict)
    since: int = 0
    detail: str = ""
    traced: Any = field(default=None, compare=False, repr=False)  # a TracePlan (lines.py imports this module)
    added: tuple[EarlierAdded, ...] = ()

    @property
    def available(self) -> bool:
        """True when the lines could be blamed."""
        return self.status == "ok"


@dataclass(frozen=True, slots=True)
class Candidate:
    """A pull request that wrote some of the traced lines: ``lines`` of the ``total``
    traced lines, spread over ``paths`` (most first), ``first`` of them in ``paths[0]``
    (0 when not counted)."""

    number: int
    lines: int
    total: int
    paths: tuple[str, ...]
    first: int = 0

    @property
    def share(self) -> float:
        """The part of the traced lines this pull request wrote (0..1)."""
        return self.lines / self.total if self.total else 0.0


@dataclass(frozen=True, slots=True)
class NamedCulprit:
    """A pull request the description blames (``"introduced in #N"``): ``number``, the
    ``phrase`` that names it, and how many of the traced lines it wrote (``lines`` of
    ``total``; 0 when none, or when the history was not available), ``first`` one of them."""

    number: int
    phrase: str
    lines: int
    total: int
    #: One of its lines ``(path, line, text, commit)``, when it wrote any.
    first: tuple[str, int, str, str] | None = None


@dataclass(frozen=True, slots=True)
class HistoryLink:
    """The engine's conclusion about where a pull request's changed code came from.

    ``top`` is the pull request that clearly wrote the traced lines (``None`` when none
    clearly dominates); ``origin`` describes it; ``evidence`` are up to three of its
    lines ``(path, line, text, commit)``; ``candidates`` every pull request that wrote
    traced lines, most first; ``named`` the culprits the description names, checked
    against the blame; ``days`` how long before this pull request's merge ``top`` was
    merged (``None`` when either date is unknown); ``fix`` whether this pull request is
    a fix (the sentence says "this fix"); ``adds_only`` whether the blamed lines are those
    around what the pull request only adds (it changes none of them: the sentence says
    so), ``traced`` how many lines were blamed. When no pull request clearly wrote the
    traced lines of a fix, ``same`` is the earlier pull request that added the same lines
    as the fix (:func:`bot.engine.history.copies.same_lines`), ``origin`` and ``days`` then
    describe it, and ``added`` is how many lines the fix adds that could match.
    """

    top: Candidate | None
    origin: PullOrigin | None
    evidence: tuple[tuple[str, int, str, str], ...]
    candidates: tuple[Candidate, ...]
    named: tuple[NamedCulprit, ...]
    days: int | None
    fix: bool
    traced: int
    adds_only: bool = False
    same: EarlierAdded | None = None
    added: int = 0
