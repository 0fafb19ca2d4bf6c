"""Kinds of evidence beyond blamed lines for "fixes code from #N", measured on the oracle of
``bench/history_links.py`` (``bench/HISTORY.md``, section 22); the guide uses the first,
"same added lines" (:mod:`bot.engine.history.copies`, with the setting chosen on the odd
half), and none of the others.

Each kind answers only for the fixes prguide names nobody for, and only when its evidence
points at exactly one pull request:

* **same added lines**: the lines the fix adds (as :func:`bot.engine.history.copies.added_lines`
  counts them) were added by one pull request merged within ``window`` days before it: the
  only one, or with ``lead`` times as many of them as the next, and at least 2 of them or
  all (``copies.MIN_LINES``). Claim: "#N added K of the M code lines this fix adds": the fix
  completes or repeats what #N did (the oracle's ``adds`` pairs: a key added to one
  configuration and not another);
* **function**: the functions this fix changes (:func:`bot.engine.history.follows.changed_definitions`)
  were changed by exactly one pull request merged within ``window`` days before it (sweeps
  of more than :data:`bot.engine.history.follows.MAX_DEFINITIONS` left out). Its claim would
  be "`f`, which this fix changes, was last changed in #N";
* **identifier**: a name the fix's added lines of source use (4 characters or more, not a
  dunder, not one the fix defines) was defined (``FileAnalysis.definitions_added``) by exactly one
  pull request merged within ``window`` days before it (with ``same_file``: in a file the fix
  changes). Claim: "`name`, which this fix uses, was added in #N";
* **wider window**: the traced lines blamed ``window`` days back (0: the whole history)
  instead of 120, and one pull request wrote every blamed line, at least ``least``. Claim:
  the guide's own "the lines this fix changes were written in #N", older.

Settings are chosen on one half of the oracle by pull request parity (odd or even number)
and scored on the other (:func:`chosen_on_half`), so a kind is judged on fixes its setting
was not picked on.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from bot.engine.analysis import analyse
from bot.engine.analysis.kinds import kind_of
from bot.engine.analysis.patch import ADDED, parse_patch
from bot.engine.history.copies import MIN_LINES, added_lines
from bot.engine.history.coupling import utc_moment
from bot.engine.history.follows import MAX_DEFINITIONS, changed_definitions
from bot.engine.history.links import find_link
from bot.sources.bundle import snapshot_from_bundle
from bot.sources.gitrepo import merged_pull_requests


@dataclass(frozen=True, slots=True)
class Merged:
    """One merged pull request of the clone: ``merged_at`` (Unix seconds), the definitions it
    changed (``path::name``) and those it added (``(path, last name part)``)."""

    number: int
    merged_at: float
    changed: frozenset[str]
    added: frozenset[tuple[str, str]]


def definitions_history(repo: str) -> list[Merged]:
    """Every merged pull request of ``repo`` with its changed and added definitions, oldest first
    (the engine's analysis of each diff, as ``prguide history`` builds guides)."""
    out = []
    for bundle in merged_pull_requests(repo):
        snapshot = snapshot_from_bundle(bundle)
        moment = utc_moment(snapshot.merged_at)
        if moment is None:
            continue
        analysis = analyse(snapshot)
        added = {(f.path, d.name.rpartition(".")[2]) for f in analysis.files if f.kind == "source" for d in f.definitions_added}
        out.append(Merged(snapshot.number, moment.timestamp(), frozenset(changed_definitions(analysis)), frozenset(added)))
    return sorted(out, key=lambda m: m.merged_at)


def _before(history: Sequence[Merged], number: int, window: float) -> list[Merged]:
    """The pull requests merged within ``window`` days before ``number`` was."""
    mine = next((m for m in history if m.number == number), None)
    if mine is None:
        return []
    return [m for m in history if m.number != number and mine.merged_at - window * 86400 <= m.merged_at < mine.merged_at]


def function_answers(cases, first, history: Sequence[Merged], *, window: float) -> dict[int, int | None]:
    """``first``, and for the fixes it names nobody for, the one pull request within ``window``
    days that changed a function the fix changes."""
    by_number = {m.number: m for m in history}
    out = dict(first)
    for c in cases:
        mine = by_number.get(c.number)
        if out.get(c.number) is not None or mine is None or not mine.changed:
            continue
        found = {m.number for m in _before(history, c.number, window) if len(m.changed) <= MAX_DEFINITIONS and m.changed & mine.changed}
        if len(found) == 1:
            out[c.number] = found.pop()
    return out


_NAME = re.compile(r"[A-Za-z_]\w{3,}")


def used_names(case) -> set[str]:
    """The names of 4 characters or more on the fix's added lines of source (comment lines skipped)."""
    names: set[str] = set()
    for f in case.snapshot.files:
        if kind_of(f.filename, status=f.status, patch=f.patch, changes=f.changes) != "source":
            continue
        for hunk in parse_patch(f.patch):
            for d in hunk.lines:
                if d.kind == ADDED and not d.text.lstrip().startswith(("#", "//")):
                    names.update(_NAME.findall(d.text))
    return names


def identifier_answers(cases, first, history: Sequence[Merged], *, window: float, same_file: bool) -> dict[int, int | None]:
    """``first``, and for the fixes it names nobody for, the one pull request within ``window``
    days that defined a name the fix's added lines use."""
    by_number = {m.number: m for m in history}
    out = dict(first)
    for c in cases:
        mine = by_number.get(c.number)
        if out.get(c.number) is not None or mine is None:
            continue
        files = {f.filename for f in c.snapshot.files}
        names = used_names(c) - {name for _, name in mine.added}
        found = set()
        for m in _before(history, c.number, window):
            defined = {name for path, name in m.added if not name.startswith("__") and (not same_file or path in files)}
            if names & defined:
                found.add(m.number)
        if len(found) == 1:
            out[c.number] = found.pop()
    return out


@dataclass(frozen=True, slots=True)
class Added:
    """The lines one merged pull request adds, as the guide compares them
    (:func:`bot.engine.history.copies.added_lines`: ``{text: first file}``)."""

    number: int
    merged_at: float
    lines: dict[str, str]


def added_history(repo: str) -> list[Added]:
    """Every merged pull request of ``repo`` with the lines it adds (:class:`Added`), oldest first."""
    out = []
    for bundle in merged_pull_requests(repo):
        snapshot = snapshot_from_bundle(bundle)
        moment = utc_moment(snapshot.merged_at)
        if moment is not None:
            out.append(Added(snapshot.number, moment.timestamp(), added_lines(snapshot.files)))
    return sorted(out, key=lambda m: m.merged_at)


def same_lines_answers(cases, first, history: Sequence[Added], *, window: float, lead: float | None) -> dict[int, int | None]:
    """``first``, and for the fixes it names nobody for, the pull request merged within
    ``window`` days before that added the most of the lines the fix adds: when it is the
    only one (``lead`` None) or has ``lead`` times as many as the next."""
    by_number = {m.number: m for m in history}
    out = dict(first)
    for c in cases:
        mine = by_number.get(c.number)
        if out.get(c.number) is not None or mine is None or not mine.lines:
            continue
        counts = {}
        for m in history:
            if m.number != c.number and mine.merged_at - window * 86400 <= m.merged_at < mine.merged_at:
                shared = sum(1 for k in mine.lines if k in m.lines)
                if shared:
                    counts[m.number] = (shared, m.merged_at)
        ranked = sorted(counts, key=lambda n: (-counts[n][0], -counts[n][1]))
        if not ranked:
            continue
        top = counts[ranked[0]][0]
        runner = counts[ranked[1]][0] if len(ranked) > 1 else 0
        # As the guide: at least MIN_LINES of the lines, or all of them.
        if ((not runner) if lead is None else top >= lead * runner) and (top >= MIN_LINES or top >= len(mine.lines)):
            out[c.number] = ranked[0]
    return out


def wider_answers(cases, first, lines, wide_facts, *, least: int) -> dict[int, int | None]:
    """``first``, and for the fixes it names nobody for, the pull request that wrote every
    traced line blamed in ``wide_facts`` (a wider window), at least ``least`` of them."""
    out = dict(first)
    for c in cases:
        if out.get(c.number) is not None:
            continue
        link = find_link(c.snapshot, lines[c.number], wide_facts[c.number], fix=True, min_share=1.0, min_lines=least)
        out[c.number] = link.top.number if link.top else None
    return out


def halves(cases) -> dict[str, list]:
    """The oracle's fixes split by pull request number: ``{"odd": [...], "even": [...]}``."""
    return {"odd": [c for c in cases if c.number % 2], "even": [c for c in cases if c.number % 2 == 0]}


def added_answers(first, answers, cases) -> tuple[int, int]:
    """``(right, answered)`` among the answers ``answers`` gives that ``first`` does not."""
    extra = [c for c in cases if first.get(c.number) is None and answers.get(c.number) is not None]
    return sum(1 for c in extra if answers[c.number] in c.truth), len(extra)


def chosen_on_half(cases, first, grid: dict[str, Callable[[], dict[int, int | None]]], score) -> list[tuple[str, str, tuple[int, int], tuple[int, int], tuple, tuple]]:
    """For each direction (develop on odd, score on even; and the reverse): the setting of
    ``grid`` (``{label: answers}``, strictest first) whose extra answers are most often right
    on the development half at a precision of 0.85 or more (else the most precise; ties: the
    stricter), and its extra answers and overall ``score`` on both halves:
    ``[(development half, label, (right, answered) on it, on the held-out half, overall score
    there, on the held-out)]``."""
    parts = halves(cases)
    computed = {label: make() for label, make in grid.items()}
    out = []
    for dev, held in (("odd", "even"), ("even", "odd")):
        scored = []
        for i, (label, answers) in enumerate(computed.items()):
            right, answered = added_answers(first, answers, parts[dev])
            precision = right / answered if answered else 0.0
            scored.append((precision >= 0.85 and answered > 0, right if precision >= 0.85 else 0, precision, -i, label))
        best = max(scored)
        label = best[-1]
        answers = computed[label]
        out.append((dev, label, added_answers(first, answers, parts[dev]), added_answers(first, answers, parts[held]),
                    score(answers, parts[dev]), score(answers, parts[held])))  # fmt: skip
    return out


def grids(cases, first, lines, history, wide: dict[float, dict], added: Sequence[Added]) -> dict[str, dict[str, Callable[[], dict[int, int | None]]]]:
    """The settings tried for each kind, strictest first: ``{kind: {label: answers}}``;
    ``wide`` maps each wider window (days; 0: the whole history) to its blame facts;
    ``added`` is :func:`added_history`."""
    windows = (14, 30, 60, 120)
    return {
        "same added lines": {
            f"{w} days, {'the only one' if lead is None else f'lead >= {lead}x'}": (lambda w=w, lead=lead: same_lines_answers(cases, first, added, window=w, lead=lead))
            for w, lead in itertools.product((30, 60, 120), (None, 3, 2))
        },
        "function": {f"{w} days": (lambda w=w: function_answers(cases, first, history, window=w)) for w in windows},
        "identifier": {
            f"{w} days{', same file' if same else ''}": (lambda w=w, same=same: identifier_answers(cases, first, history, window=w, same_file=same))
            for same, w in itertools.product((True, False), windows)
        },
        "wider window": {
            f"{w or 'all'} days, >= {least} lines": (lambda w=w, least=least: wider_answers(cases, first, lines, wide[w], least=least))
            for least, w in itertools.product((2, 1), sorted(wide, key=lambda d: d or 10**9))
        },
    }
