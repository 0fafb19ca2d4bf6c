"""Edits that are no change after all, found once a file's edits are all known.

Pure. :mod:`bot.engine.analysis.edits` reads one change block at a time; some of what it
finds is undone elsewhere in the same file: a check removed in one place and added in
another (moved), a condition replaced by a name the diff assigns that same condition, a
condition whose dropped tests moved into the block it guards.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence

from bot.engine.analysis.model import Edit
from bot.engine.analysis.patch import ADDED, Hunk

#: A bare name or ``self.name``: what a condition reads when it was given a name.
_ATTR = re.compile(r"^(?:self\.)?[A-Za-z_]\w*$")


def drop_moved_checks(edits: list[Edit]) -> list[Edit]:
    """Without checks removed in one place and added with the same condition in another
    place of the same definition: the check moved, it did not come or go."""
    added = {(e.kind[:-6], e.symbol, e.new) for e in edits if e.kind.endswith("_added")}
    removed = {(e.kind[:-8], e.symbol, e.old) for e in edits if e.kind.endswith("_removed")}
    both = added & removed
    if not both:
        return edits
    return [
        e
        for e in edits
        if not (e.kind.endswith("_added") and (e.kind[:-6], e.symbol, e.new) in both)
        and not (e.kind.endswith("_removed") and (e.kind[:-8], e.symbol, e.old) in both)
    ]


def drop_named_conditions(edits: list[Edit], hunks: Sequence[Hunk]) -> list[Edit]:
    """Without a condition now read from a name this diff defines (``if a and b:`` ->
    ``x = a and b`` ... ``if x:``, or a new property): most often the same test, named."""
    named = [e for e in edits if e.kind == "condition_changed" and _ATTR.match(e.new)]
    if not named:
        return edits
    added = "\n".join(line.text for h in hunks for line in h.lines if line.kind == ADDED)
    return [e for e in edits if e not in named or not re.search(rf"\b(?:def\s+{e.new.rpartition('.')[2]}\b|{re.escape(e.new)}\s*=[^=])", added)]


def sentinel_default(symbol: str, old: str, new: str, added_text: str) -> bool:
    """Whether a parameter default that became ``None`` (``symbol`` is ``func(param)``) is a
    sentinel the body resolves to the old default (``param = param or Old``, ``if param
    is None: ...``): the effective default did not change."""
    if new != "None" or not symbol.endswith(")") or "(" not in symbol:
        return False
    param = symbol[:-1].partition("(")[2]
    if not param.isidentifier():
        return False
    return re.search(rf"\b{param}\s+or\s+{re.escape(old)}\b|\bif\s+{param}\s+is\s+None\b", added_text) is not None


def drop_split_conditions(edits: list[Edit], hunks: Sequence[Hunk]) -> list[Edit]:
    """Without a condition that lost tests the added lines still make (``if not p or not
    p.check_step():`` -> ``if p is None:`` with ``p.check_step()`` tested further in): the
    check was split or moved, and "the condition is now `p is None`" would be false."""
    changed = [e for e in edits if e.kind == "condition_changed"]
    if not changed:
        return edits
    added = None
    dropped_out = []
    for e in changed:
        gone = _terms(e.old) - _terms(e.new)
        # Only tests that call or read an attribute say something; "not p" is everywhere.
        telling = [t for t in gone if "(" in t or "." in t]
        if not telling:
            continue
        if added is None:
            added = "\n".join(line.text for h in hunks for line in h.lines if line.kind == ADDED)
        if all(t in added for t in telling):
            dropped_out.append(e)
    return [e for e in edits if e not in dropped_out] if dropped_out else edits


def _terms(condition: str) -> set[str]:
    """The tests of ``condition`` joined by ``and``/``or``, each without a leading ``not``
    (``not a or b.c()`` -> ``{"a", "b.c()"}``); the whole text when it does not parse."""
    try:
        node = ast.parse(condition, mode="eval").body
    except (SyntaxError, ValueError, RecursionError):
        return {condition}
    out: set[str] = set()
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, ast.BoolOp):
            stack.extend(n.values)
        elif isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.Not):
            stack.append(n.operand)
        else:
            out.add(ast.unparse(n))
    return out
