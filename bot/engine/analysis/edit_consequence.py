"""Who an exact statement change can affect: :func:`mark_new_only` marks the raises and
new branches of :mod:`bot.engine.analysis.edits` whose condition can hold only where an
option, parameter, key or field the same pull request introduces is set ("new options
only"), so that they are not said to break existing configurations. Pure.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Sequence
from dataclasses import replace

from bot.engine.analysis.model import Edit

# --- consequence -------------------------------------------------------------------------------

#: Edits whose condition decides who they can affect.
#: Only a raise or a new branch fires exactly when its condition holds: an assert fails
#: when it does not, and a guard stops existing code from running, so neither is
#: "new options only". The condition is ``new`` of a raise, ``detail`` of a branch.
CONDITIONED = ("raise_added", "branch_added")


def introduced_names(files: Iterable[object]) -> frozenset[str]:
    """Option, parameter, key and field names the pull request adds (last dotted part):
    config keys and class fields added, parameters added to signatures."""
    out: set[str] = set()
    for f in files:
        for key in getattr(f, "config_keys_added", ()):
            out.add(key.rpartition(".")[2])
        for fact in getattr(f, "behaviour", ()):
            if fact.kind in ("parameter_added", "signature_changed"):
                out.update(m.group(1) for m in _ADDED_PARAM.finditer(fact.detail))
    out.discard("")
    return frozenset(out)


_ADDED_PARAM = re.compile(r"added (?:required parameter )?`\**([A-Za-z_]\w*)")


def new_only(condition: str, fresh: frozenset[str]) -> bool:
    """True when ``condition`` can hold only where a name in ``fresh`` is set: a
    conjunction with such a term, or a term that tests a fresh name for being set,
    equal or in range (``not x``, ``x != v`` hold by default, so they never count)."""
    if not fresh or not condition:
        return False
    try:
        node = ast.parse(condition, mode="eval").body
    except (SyntaxError, ValueError, RecursionError):
        return False
    return _fresh_term(node, fresh)


def _names(node: ast.AST) -> set[str]:
    out = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Attribute):
            out.add(sub.attr)
        elif isinstance(sub, ast.Name):
            out.add(sub.id)
        elif isinstance(sub, ast.Constant) and isinstance(sub.value, str):
            out.add(sub.value)
    return out


def _fresh_term(node: ast.AST, fresh: frozenset[str]) -> bool:
    if isinstance(node, ast.BoolOp):
        terms = [_fresh_term(v, fresh) for v in node.values]
        return any(terms) if isinstance(node.op, ast.And) else all(terms)
    if isinstance(node, (ast.Name, ast.Attribute)):
        return bool(_names(node) & fresh)
    if isinstance(node, ast.Call):
        return bool(_names(node) & fresh)  # `cfg.get("new_key")`, `getattr(cfg, "new_opt", False)`
    if isinstance(node, ast.Compare) and len(node.ops) == 1:
        op, right = node.ops[0], node.comparators[0]
        if isinstance(op, (ast.NotEq, ast.NotIn)):
            return False
        if isinstance(op, ast.IsNot) and not (isinstance(right, ast.Constant) and right.value is None):
            return False
        if isinstance(op, ast.Is) and isinstance(right, ast.Constant) and right.value is None:
            return False  # `x is None` holds by default
        return bool(_names(node.left) & fresh) or (isinstance(op, ast.In) and bool(_names(right) & fresh))
    return False


def mark_new_only(edits: Sequence[Edit], fresh: frozenset[str]) -> list[Edit]:
    """``edits`` with ``consequence`` set on raises, asserts and guards: ``"new_only"``
    when their condition can only hold for something in ``fresh``, else ``"existing"``."""
    out = []
    for e in edits:
        if e.kind in CONDITIONED and e.consequence in ("", "unknown"):
            # In a block the diff opens, a condition that does not name a new option
            # still says nothing about who reaches the check: unknown ("").
            otherwise = "" if e.consequence == "unknown" else "existing"
            cond = e.detail if e.kind == "branch_added" else e.new
            e = replace(e, consequence="new_only" if new_only(cond, fresh) else otherwise)
        out.append(e)
    return out
