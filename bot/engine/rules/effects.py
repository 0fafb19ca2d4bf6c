"""Rule effects: what a matching rule contributes, rendered into a :class:`~bot.engine.rules.model.RuleHit`.

Placeholders (see :mod:`bot.engine.rules.templates`): named captures of the rule's
``title``/``body`` regexes, ``{scope}`` from a ``scopes`` condition, ``{area}``
(the rule's areas), ``{author}``; focus notes also take ``{file}``, ``{symbol}``
and ``{key}``. A focus note whose template uses ``{key}`` is written once per
config key removed or added in the matched files, one using ``{symbol}`` once per
matched (or touched) symbol, one using ``{file}`` once per matched file, any
other note once -- at most ``max_focus`` notes per rule.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from bot.engine.rules.conditions import MatchState
from bot.engine.rules.facts import Facts
from bot.engine.rules.model import FocusNote
from bot.engine.rules.templates import Template

#: GitHub's longest label name ("Create a label": name max 50 characters).
MAX_LABEL_CHARS = 50

#: Placeholders every effect may use, besides captures.
BASE_FIELDS = frozenset({"area", "author", "scope"})
#: Placeholders only focus notes may use.
FOCUS_FIELDS = frozenset({"file", "symbol", "key"})


@dataclass(frozen=True, slots=True)
class Effects:
    """A rule's effects as written: templates still unfilled."""

    labels: tuple[Template, ...] = ()
    areas: tuple[Template, ...] = ()
    change_type: str | None = None
    importance: int = 0
    breaking: bool = False
    audience: Mapping[str, Template] = field(default_factory=dict)
    focus: Mapping[str, Template] = field(default_factory=dict)
    skip: bool = False

    @property
    def empty(self) -> bool:
        """True when the rule would change nothing."""
        return not (
            self.labels
            or self.areas
            or self.change_type
            or self.importance
            or self.breaking
            or self.audience
            or self.focus
            or self.skip
        )


@dataclass(slots=True, unsafe_hash=True)  # read-only by convention: see bot.engine.analysis.model
class Rendered:
    """Effects with placeholders filled, ready for a :class:`~bot.engine.rules.model.RuleHit`."""

    labels: tuple[str, ...]
    areas: tuple[str, ...]
    audience: Mapping[str, str]
    focus: tuple[FocusNote, ...]
    files: tuple[str, ...]


def render(effects: Effects, facts: Facts, state: MatchState, *, rule_id: str, max_focus: int) -> Rendered:
    """Fill ``effects``' templates from what the conditions matched; labels over 50 characters are dropped with a warning."""
    multi: dict[str, list[str]] = {k: [v] for k, v in state.captures.items()}
    multi.setdefault("author", [facts.snapshot.author])
    areas = _expand(effects.areas, multi)
    multi["area"] = areas
    labels = []
    for name in _expand(effects.labels, multi):
        if len(name) > MAX_LABEL_CHARS:
            facts.warnings.append(
                f"rule {rule_id}: label {name!r} is longer than {MAX_LABEL_CHARS} characters; not added"
            )
            continue
        labels.append(name)
    single = dict(state.captures)
    single.setdefault("author", facts.snapshot.author)
    single["area"] = ", ".join(areas)
    audience = {lang: t.render(single).strip() for lang, t in effects.audience.items()}
    focus = _focus(effects.focus, facts, state, single, max_focus) if effects.focus else ()
    files = tuple(facts.paths[i] for i in sorted(state.files)) if state.files else ()
    return Rendered(tuple(labels), tuple(areas), {k: v for k, v in audience.items() if v}, focus, files)


def _expand(templates: tuple[Template, ...], values: Mapping[str, list[str]]) -> list[str]:
    out: list[str] = []
    for t in templates:
        out.extend(t.expand(values))
    return list(dict.fromkeys(out))


def _focus(
    templates: Mapping[str, Template], facts: Facts, state: MatchState, values: dict[str, str], cap: int
) -> tuple[FocusNote, ...]:
    fields = frozenset().union(*(t.fields for t in templates.values()))
    files = _focus_files(facts, state)
    units: list[tuple[int | None, str | None]]
    if "key" in fields:
        if state.keys:
            units = list(state.keys)
        else:
            units = [
                (i, k) for i in files for k in (*facts.files[i].config_keys_removed, *facts.files[i].config_keys_added)
            ]
    elif "symbol" in fields:
        units = (
            list(state.symbols) if state.symbols else [(i, s) for i in files for s in facts.files[i].symbols_touched]
        )
    elif "file" in fields:
        units = [(i, None) for i in files]
    else:
        units = [(None, None)]
    notes = []
    for file_pos, name in list(dict.fromkeys(units))[:cap]:
        path = facts.paths[file_pos] if file_pos is not None else None
        here = dict(values, file=path or "", symbol=name or "", key=name or "")
        text = {lang: t.render(here).strip() for lang, t in templates.items()}
        notes.append(FocusNote(text={k: v for k, v in text.items() if v}, file=path, symbol=name))
    return tuple(notes)


def _focus_files(facts: Facts, state: MatchState) -> list[int]:
    """Files a note may be about: where line conditions matched, else the files matched, else all."""
    if state.line_files:
        chosen = set(state.line_files)
        if state.files is not None:
            chosen &= state.files
        return sorted(chosen or state.line_files)
    if state.files is not None:
        return sorted(state.files)
    return list(range(len(facts.paths)))
