"""Exact statement changes (:class:`bot.engine.analysis.model.Edit`) as focus points and sentences.

Pure. An edit is said as what the line does now and where: ``in `Parser.parse`, line
287: now calls `ast.literal_eval` instead of `eval`, with the same arguments``. The
message of an edit is ``focus.edit.<form>`` (with its enclosing definition) or
``focus.edit.<form>.at`` (a statement at module level or where the hunk does not show
its definition); :func:`edit_message` gives the key and parameters, so a focus point
and a sentence say the same words.
"""

from __future__ import annotations

from typing import Any

from bot.engine.analysis.model import DiffAnalysis, Edit
from bot.engine.focus.model import API_WEIGHT, ASSERT_WEIGHT, FACT_WEIGHT, FocusPoint
from bot.engine.render import sanitize
from bot.engine.render.messages import t
from bot.locale import N_

#: Message keys of each form: (with the enclosing definition, at a line only).
_KEYS = {
    "call_args_added": (N_("focus.edit.call_args_added"), N_("focus.edit.call_args_added.at")),
    "call_args_removed": (N_("focus.edit.call_args_removed"), N_("focus.edit.call_args_removed.at")),
    "call_args_changed": (N_("focus.edit.call_args_changed"), N_("focus.edit.call_args_changed.at")),
    "call_arg_replaced": (N_("focus.edit.call_arg_replaced"), N_("focus.edit.call_arg_replaced.at")),
    "call_replaced": (N_("focus.edit.call_replaced"), N_("focus.edit.call_replaced.at")),
    "parameter_default_changed": (N_("focus.edit.parameter_default_changed"), N_("focus.edit.parameter_default_changed.at")),
    "return_changed": (N_("focus.edit.return_changed"), N_("focus.edit.return_changed.at")),
    "constant_changed": (N_("focus.edit.constant_changed"), N_("focus.edit.constant_changed.at")),
    "guard_added": (N_("focus.edit.guard_added"), N_("focus.edit.guard_added.at")),
    "guard_removed": (N_("focus.edit.guard_removed"), N_("focus.edit.guard_removed.at")),
    "condition_changed": (N_("focus.edit.condition_changed"), N_("focus.edit.condition_changed.at")),
    "raise_added": (N_("focus.edit.raise_added"), N_("focus.edit.raise_added.at")),
    "raise_added_new": (N_("focus.edit.raise_added_new"), N_("focus.edit.raise_added_new.at")),
    "raise_removed": (N_("focus.edit.raise_removed"), N_("focus.edit.raise_removed.at")),
    "assert_added": (N_("focus.edit.assert_added"), N_("focus.edit.assert_added.at")),
    "assert_removed": (N_("focus.edit.assert_removed"), N_("focus.edit.assert_removed.at")),
    "assert_replaced": (N_("focus.edit.assert_replaced"), N_("focus.edit.assert_replaced.at")),
    "cast_added": (N_("focus.edit.cast_added"), N_("focus.edit.cast_added.at")),
    "cast_removed": (N_("focus.edit.cast_removed"), N_("focus.edit.cast_removed.at")),
    "branch_added": (N_("focus.edit.branch_added"), N_("focus.edit.branch_added.at")),
    "assignment_changed": (N_("focus.edit.assignment_changed"), N_("focus.edit.assignment_changed.at")),
    "branch_added_new": (N_("focus.edit.branch_added_new"), N_("focus.edit.branch_added_new.at")),
    "call_added": (N_("focus.edit.call_added"), N_("focus.edit.call_added.at")),
    "call_removed": (N_("focus.edit.call_removed"), N_("focus.edit.call_removed.at")),
    "continuation_broken": (N_("focus.edit.continuation_broken"), N_("focus.edit.continuation_broken.at")),
    "continuation_broken_blank": (N_("focus.edit.continuation_broken_blank"), N_("focus.edit.continuation_broken_blank.at")),
    "lines_replaced": (N_("focus.edit.lines_replaced"), N_("focus.edit.lines_replaced.at")),
    "lines_added": (N_("focus.edit.lines_added"), N_("focus.edit.lines_added.at")),
    "lines_removed": (N_("focus.edit.lines_removed"), N_("focus.edit.lines_removed.at")),
}

#: How much each form of edit weighs as a focus point (orders points; behaviour a
#: reader cannot see from the call site first).
_WEIGHTS = {
    # A command cut short fails or drops arguments whatever the script is for.
    "continuation_broken": FACT_WEIGHT + 30,
    "continuation_broken_blank": FACT_WEIGHT + 30,
    "cast_removed": FACT_WEIGHT + 8,
    "guard_removed": FACT_WEIGHT + 8,
    "call_replaced": FACT_WEIGHT + 6,
    "raise_removed": FACT_WEIGHT + 4,
    "condition_changed": FACT_WEIGHT + 4,
    "parameter_default_changed": FACT_WEIGHT + 4,
    "constant_changed": FACT_WEIGHT + 2,
    "cast_added": FACT_WEIGHT + 2,
    "guard_added": FACT_WEIGHT + 2,
    "return_changed": FACT_WEIGHT + 2,
    "raise_added": FACT_WEIGHT + 2,
    "call_removed": FACT_WEIGHT,
    "call_added": FACT_WEIGHT - 6,
    "call_args_added": FACT_WEIGHT,
    "call_args_removed": FACT_WEIGHT,
    "assert_removed": FACT_WEIGHT - 2,
    "assert_replaced": FACT_WEIGHT - 4,
    "assert_added": ASSERT_WEIGHT,
    "assignment_changed": FACT_WEIGHT - 4,
    "call_arg_replaced": FACT_WEIGHT - 2,
    "call_args_changed": FACT_WEIGHT - 8,
    "raise_added_new": API_WEIGHT - 10,
    "branch_added": FACT_WEIGHT + 2,
    # An opt-in path is what a feature adds: above its config keys, below changed behaviour.
    "branch_added_new": FACT_WEIGHT - 10,
}
#: Edits of example scripts and build files weigh this much less than edits of the package.
_SCRIPT_DISCOUNT = 20
#: Changed lines of a file above which its added or removed calls make no point of their own.
_CALL_FILE_LINES = 12
#: Edits turned into candidate points per pull request (six points are shown).
_MAX_EDIT_POINTS = 60
#: The file kinds whose edits make points.
_KINDS = ("source", "example", "build")


def _form(edit: Edit) -> str:
    """The message form of ``edit``: its kind, split where the words differ."""
    if edit.kind == "call_args_changed":
        if edit.detail.startswith("~") and " -> " in edit.detail:
            return "call_arg_replaced"
        return {"+": "call_args_added", "-": "call_args_removed"}.get(edit.detail[:1], "call_args_changed")
    if edit.kind == "lines":
        return "lines_replaced" if edit.old and edit.new else "lines_added" if edit.new else "lines_removed"
    if edit.kind == "continuation_broken" and not edit.new:
        return "continuation_broken_blank"
    if edit.kind in ("raise_added", "branch_added") and edit.consequence == "new_only":
        return edit.kind + "_new"
    return edit.kind


def edit_message(edit: Edit) -> tuple[str, dict[str, Any]]:
    """``(message key, parameters)`` stating ``edit`` with its line and enclosing definition."""
    form = _form(edit)
    params: dict[str, Any] = {"line": str(edit.line or edit.old_line), "old": edit.old, "new": edit.new}
    if edit.symbol:
        params["name"] = edit.symbol
    if edit.kind == "lines":
        # The lines themselves, each its own code span.
        del params["old"], params["new"]
        olds, news = tuple(edit.old.split("\n")) if edit.old else (), tuple(edit.new.split("\n")) if edit.new else ()
        if form == "lines_replaced":
            params["changes"] = tuple(zip(olds, news))
        else:
            params["olds" if olds else "news"] = olds or news
        if form == "lines_removed":
            params["line"] = str(edit.old_line)
    elif form in ("call_args_added", "call_args_removed"):
        params["code"] = edit.detail[1:]
    elif form == "call_arg_replaced":
        before, _, after = edit.detail[1:].partition(" -> ")
        params["code"], params["new"] = before, after
    elif form == "call_replaced":
        before, _, after = edit.detail.partition(" -> ")
        params["old"], params["new"] = before, after
    elif form in ("raise_added", "raise_added_new", "raise_removed", "constant_changed", "parameter_default_changed",
                  "guard_added", "guard_removed", "cast_added", "cast_removed", "branch_added", "branch_added_new",
                  "assignment_changed", "continuation_broken", "continuation_broken_blank"):
        params["code"] = edit.detail
    return _KEYS[form][0 if edit.symbol else 1], params


def quote_point(edit: Edit, weight: int) -> FocusPoint:
    """The focus point quoting a file's whole small change (:attr:`FileAnalysis.quote`),
    weighing ``weight`` (the place of the file's change among the others)."""
    key, params = edit_message(edit)
    return FocusPoint(edit.path, edit.symbol or None, key, params, weight=weight, evidence=(edit.evidence,))


def edit_weight(edit: Edit, file_kind: str = "source") -> int:
    """How much ``edit`` weighs as a focus point."""
    weight = _WEIGHTS[_form(edit)]
    return weight - _SCRIPT_DISCOUNT if file_kind != "source" and edit.kind != "continuation_broken" else weight


def edit_sentence(edit: Edit, lang: str) -> str:
    """One Markdown sentence stating ``edit`` with its location, in ``lang`` ("en"/"zh"),
    PR text neutralised (code spans). Raises ``KeyError`` for an unknown language."""
    key, params = edit_message(edit)
    return f"{sanitize.code(edit.path)} — {t(key, lang, params)}"


def _ranked(analysis: DiffAnalysis) -> list[tuple[int, Edit]]:
    kinds = {f.path: f.kind for f in analysis.files}
    # An edit inside a definition this diff adds changes nothing that ran before: "now raises
    # ValueError" of a new class's method (fresh-o #1190) is no change of behaviour.
    fresh = {(f.path, d.name) for f in analysis.files if f.definitions_added for d in f.definitions_added}
    # A command cut short is said in any script, a test's or a CI job's too.
    ranked = [(edit_weight(e, kinds.get(e.path, "source")), e) for e in analysis.edits
              if (kinds.get(e.path) in _KINDS or e.kind == "continuation_broken") and not (fresh and in_new(e, fresh))]  # fmt: skip
    ranked.sort(key=lambda pair: -pair[0])  # stable: file order within a weight
    return ranked


def in_new(edit: Edit, fresh: set[tuple[str, str]]) -> bool:
    """True when ``edit``'s enclosing definition, or one around it, is added by the diff
    (``fresh``: ``(path, name)`` of the definitions added)."""
    symbol = edit.symbol
    while symbol:
        if (edit.path, symbol) in fresh:
            return True
        symbol = symbol.rpartition(".")[0]
    return False


def main_edit(analysis: DiffAnalysis) -> Edit | None:
    """The one exact change that best says what a small pull request does, or None when
    no edit clearly dominates (then the summary says less): the only edit of the package
    code, or one that outweighs every other of at most three."""
    ranked = [pair for pair in _ranked(analysis) if pair[1].consequence != "new_only"]
    if not ranked or len(ranked) > 4:
        return None
    if len(ranked) == 1 or ranked[0][0] > ranked[1][0]:
        edit = ranked[0][1]
        return edit if edit.kind != "call_args_changed" or edit.detail[:1] in "+-" else None
    return None


def leading_edit(analysis: DiffAnalysis) -> Edit | None:
    """The weightiest exact change of the package code (never one that only affects what
    the same pull request adds), whatever else the pull request does, or None. Unlike
    :func:`main_edit` it need not dominate: a summary built on it says it is one of the
    changes."""
    ranked = [pair for pair in _ranked(analysis) if pair[1].consequence != "new_only"]
    for _weight, edit in ranked:
        if edit.kind != "call_args_changed" or edit.detail[:1] in "+-":
            return edit
    return None


def edit_points(analysis: DiffAnalysis) -> list[FocusPoint]:
    """Focus points stating exact edits, heaviest first, each with its evidence.

    The point's ``symbol`` is the enclosing definition (the path when at module level),
    so two edits of one definition are one point (the heavier). A call added or removed
    makes a point only in a file that changed little else (:data:`_CALL_FILE_LINES`): in a
    bigger change one call stands for the file less well than the file's own point."""
    changes = {f.path: f.changes for f in analysis.files}
    # The same edit in several files (one condition fixed in two managers) is one point.
    groups: dict[tuple[str, str, str, str], list[tuple[int, Edit]]] = {}
    for weight, edit in _ranked(analysis)[:_MAX_EDIT_POINTS]:
        if edit.kind in ("call_added", "call_removed") and changes.get(edit.path, 0) > _CALL_FILE_LINES:
            continue
        groups.setdefault((edit.kind, edit.old, edit.new, edit.detail), []).append((weight, edit))
    out = []
    for members in groups.values():
        weight, edit = members[0]
        key, params = edit_message(edit)
        paths = dict.fromkeys(e.path for _w, e in members)
        if len(paths) > 1:
            params["files"] = len(paths) - 1
        evidence = tuple(e.evidence for _w, e in members[:3])
        out.append(FocusPoint(edit.path, edit.symbol or None, key, params, weight=weight, evidence=evidence))
    return out


def assert_condition(text: str) -> str:
    """``assert cond`` of a check line (``if x: assert cond, (`` -> ``assert cond``): the
    statement without its message, which may go on over lines the fact does not hold."""
    text = text[text.find("assert") :] if "assert" in text else text
    depth = 0
    for i, ch in enumerate(text):
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            return text[:i].rstrip()
    return text.rstrip(" (")
