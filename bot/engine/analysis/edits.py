"""Exact statement changes of a Python file (:class:`~bot.engine.analysis.model.Edit`), read from its hunks.

The hunks are those :func:`bot.engine.analysis.patch.parse_patch` already made. Only
*change blocks* are read: a run of removed lines followed at once by a run of added
lines in the same hunk (a replacement), or a run on one side only. Each run is cut
into logical statements (bracket depth of :func:`~bot.engine.analysis.pybehaviour.code_only`
text), and a removed statement is paired with an added one only when the pairing is
unambiguous: the runs hold the same number of changed statements (identical ones --
moved or re-indented -- are set aside first), both statements sit in the same enclosing
definition, and both parse with :mod:`ast` to the same shape. Then:

* a call with the same callee and other arguments: ``call_args_changed``; ``detail`` is
  ``"+<args>"`` (arguments only added), ``"-<args>"`` (only removed), ``"~<old> -> <new>"``
  (one argument in place of another) or ``"~"``;
* another callee with the same arguments: ``call_replaced`` (``eval(x)`` ->
  ``ast.literal_eval(x)``); ``detail`` is ``"<old callee> -> <new callee>"``;
* the statement with a cast or device move added or dropped and otherwise equal
  (``.to(dtype)``, ``.float()``, ``.cuda()``, ``dtype=``/``device=`` keywords):
  ``cast_added``/``cast_removed``, ``detail`` the cast (``.to(torch.float32)``);
* ``return`` statements: ``return_changed``; an ``if``/``elif``/``while`` line:
  ``condition_changed``; a module or class level ``NAME = value``: ``constant_changed``
  (``detail`` the name);
* a removed block re-added one level deeper under a new ``if cond:`` line:
  ``guard_added`` (``new`` the condition, ``detail`` the first guarded statement); the
  reverse: ``guard_removed``;
* ``raise X(...)`` under an ``if`` and ``assert cond`` added or removed (not paired with
  an equal statement elsewhere in the hunk): ``raise_added``/``raise_removed``/
  ``assert_added``/``assert_removed``; ``new``/``old`` the condition, ``detail`` the
  exception type. Raises under ``except``, bare ``raise``, ``NotImplementedError`` are
  error handling, not checks, and are skipped. One ``assert`` for another in a change
  block is ``assert_replaced``; any other check swapped for another gives no edit;
* ``parameter_default_changed`` comes from the signature facts
  (:func:`edits_from_facts`), which already compare ``def`` headers.

:func:`mark_new_only` then sets ``consequence`` on raises, asserts and guards across the
whole pull request. Work is capped (:class:`Budget`): a 3,000-file pull request pays
for a bounded number of statement parses.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Sequence

from bot.engine.analysis.edit_filters import drop_moved_checks, drop_named_conditions, drop_split_conditions
from bot.engine.analysis.model import BehaviourFact, Edit
from bot.engine.analysis.patch import ADDED, CONTEXT, REMOVED, DiffLine, Hunk, change_blocks
from bot.engine.analysis.pybehaviour import block_opener, code_only

_TEXT_LIMIT = 160
#: Longer statements are data, not code worth stating.
_MAX_STATEMENT = 400
#: Lines a statement may span.
_MAX_STATEMENT_LINES = 12
#: Changed lines of one file read for edits.
_MAX_FILE_LINES = 800
#: Edits kept per file (the first ones, in file order).
_MAX_FILE_EDITS = 24
_DEF = re.compile(r"(?:async\s+)?(def|class)\s+([A-Za-z_]\w*)")
#: Method calls that change a tensor's dtype or device.
_CAST_METHODS = frozenset({"to", "float", "half", "bfloat16", "double", "cuda", "cpu", "npu", "type", "long", "int", "bool"})
_CAST_KEYWORDS = frozenset({"dtype", "device", "torch_dtype"})
#: Exceptions whose ``raise`` marks an abstract or unfinished method, not a check.
_TO_KEYWORDS = frozenset({"dtype", "device", "non_blocking", "copy"})
_NOT_CHECKS = frozenset({"NotImplementedError", "NotImplemented", "StopIteration", "StopAsyncIteration"})
_LOG_CALLS = ("print", "logger.", "logging.", "log.", "warnings.warn", "self.logger.", "self.log")


class Budget:
    """How many statement parses, files and quoted small changes an analysis may still spend
    (shared by all files of one pull request)."""

    __slots__ = ("files", "parses", "quotes")

    def __init__(self, parses: int = 3000, files: int = 400, quotes: int = 100):
        self.parses = parses
        self.files = files
        self.quotes = quotes


class _Stmt:
    """One logical statement of one side of a change block."""

    __slots__ = ("indent", "index", "line", "norm", "text")

    def __init__(self, text: str, indent: int, index: int, line: int):
        self.text = text
        self.indent = indent
        self.index = index  # index of its first line in the hunk
        self.line = line  # 1-based line of its first line on its side
        self.norm = "".join(text.split())  # without any whitespace (as \s+ removed, cheaper)


def _short(text: str) -> str:
    text = " ".join(text.split())  # whitespace runs as one space
    return text if len(text) <= _TEXT_LIMIT else text[: _TEXT_LIMIT - 1] + "…"


def _statements(lines: Sequence[DiffLine], start: int, end: int, side: str) -> list[_Stmt] | None:
    """Logical statements of ``lines[start:end]`` (all on one side); None when a run
    holds a string that spans lines (a docstring) or a statement too long to read."""
    if _continues(lines, start, side):
        return None
    out: list[_Stmt] = []
    parts: list[str] = []
    depth = 0
    first = 0
    for i in range(start, end):
        raw = lines[i].text
        stripped = raw.strip()
        if not parts:
            if not stripped or stripped[0] == "#":
                continue
            first = i
        if '"""' in raw or "'''" in raw:
            return None
        code = code_only(stripped)
        parts.append(stripped)
        depth += code.count("(") + code.count("[") + code.count("{") - code.count(")") - code.count("]") - code.count("}")
        if depth <= 0 and not code.rstrip().endswith("\\"):
            text = _join(parts)
            if len(text) > _MAX_STATEMENT:
                return None
            raw0 = lines[first].text
            line = lines[first].new_line if side == ADDED else lines[first].old_line
            out.append(_Stmt(text, len(raw0) - len(raw0.lstrip()), first, line))
            parts, depth = [], 0
        elif len(parts) > _MAX_STATEMENT_LINES:
            return None
    return None if parts else out


_CONTINUING = ("(", "[", "{", ",", "\\", "=", "+", "-", "*", "/", " and", " or", " if", " else")


def _continues(lines: Sequence[DiffLine], start: int, side: str) -> bool:
    """True when ``lines[start]`` continues a statement begun above it (an argument of a
    call opened on a context line): read alone, ``x=1,`` would pass for an assignment."""
    first = lines[start].text
    indent = len(first) - len(first.lstrip())
    i = start - 1
    while i >= 0:
        line = lines[i]
        i -= 1
        if line.kind != CONTEXT and line.kind != side:
            continue
        stripped = line.text.strip()
        if not stripped or stripped[0] == "#":
            continue
        code = code_only(stripped).rstrip()
        if code.endswith(_CONTINUING):
            return True
        return len(line.text) - len(line.text.lstrip()) < indent and not code.endswith(":")
    return False  # the hunk starts here: git starts hunks at statement lines (context precedes)


def _join(parts: list[str]) -> str:
    """The lines of one statement as one line: ``f(\n    a,\n)`` reads ``f(a)``."""
    if len(parts) == 1:
        return parts[0]
    out = parts[0]
    for part in parts[1:]:
        if part[:1] in ")]}":
            out = out.rstrip().removesuffix(",") + part
        elif out.endswith(("(", "[", "{")):
            out += part
        else:
            out += " " + part
    return out


def _parse(text: str, budget: Budget) -> ast.stmt | None:
    """One statement as an AST node; a block opener (``if x:``) is given a body first."""
    if budget.parses <= 0:
        return None
    budget.parses -= 1
    code = text
    if code.startswith("elif "):
        code = code[2:]
    if code_only(code).rstrip().endswith(":"):
        code += " pass"
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    return tree.body[0] if len(tree.body) == 1 else None


def enclosing(lines: Sequence[DiffLine], index: int, side: str, indent: int, section: str) -> tuple[str, bool]:
    """``(qualified enclosing definition, directly in a class or module body)`` of the
    statement at ``lines[index]`` on ``side``: the ``def``/``class`` lines above it with
    less indent, then the hunk header's section. Functions nested in functions count as
    their outer function, as in :mod:`bot.engine.analysis.python`."""
    chain: list[tuple[str, bool]] = []  # innermost first: (name, is_class)
    level = indent
    inner_indent = -1  # indent of the innermost definition line
    i = index - 1
    while i >= 0 and level > 0:
        line = lines[i]
        i -= 1
        if line.kind != CONTEXT and line.kind != side:
            continue
        text = line.text
        stripped = text.lstrip()
        if not stripped or stripped[0] == "#":
            continue
        ind = len(text) - len(stripped)
        if ind < level:
            level = ind
            m = _DEF.match(stripped)
            if m is not None:
                if not chain:
                    inner_indent = ind
                chain.append((m.group(2), m.group(1) == "class"))
            elif not stripped.startswith(("@", ")", "]", "}")) and not code_only(stripped).rstrip().endswith(":"):
                return "", False  # a line we cannot place: inside a string or a bracket
    if level > 0:
        m = _DEF.match(section)
        if m is None:
            return "", False  # the hunk starts inside something git did not name
        if not chain:
            inner_indent = 0
        chain.append((m.group(2), m.group(1) == "class"))
    if not chain:
        return "", True
    # Directly in a class body: one level below the class line (the hunk may start
    # inside a method git did not name, which must not pass as the class body).
    body_level = chain[0][1] and indent <= inner_indent + 4
    names: list[str] = []
    for name, is_class in reversed(chain):
        names.append(name)
        if not is_class:
            break  # nested functions belong to their outer function
    else:
        return ".".join(names), body_level
    return ".".join(names), False


def _unparse(node: ast.AST) -> str:
    try:
        return ast.unparse(node)
    except (ValueError, RecursionError, AttributeError):
        return ""


class _StripCasts(ast.NodeTransformer):
    """Removes casts and device moves; ``found`` collects them as source text."""

    def __init__(self) -> None:
        self.found: list[str] = []

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        func = node.func
        if (
            isinstance(func, ast.Attribute)
            and func.attr in _CAST_METHODS
            and len(node.args) <= 1
            and all(k.arg in _TO_KEYWORDS for k in node.keywords)
            and (func.attr != "type" or node.args)  # `x.type()` reads a type, it casts nothing
        ):
            self.found.append("." + _unparse(ast.Call(ast.Name(func.attr), node.args, node.keywords)))
            return func.value
        kept = [k for k in node.keywords if k.arg not in _CAST_KEYWORDS]
        if len(kept) != len(node.keywords):
            self.found.extend(f"{k.arg}={_unparse(k.value)}" for k in node.keywords if k.arg in _CAST_KEYWORDS)
            node.keywords = kept
        return node


#: Text one of two statements holds more often than the other when a cast came or went.
_CAST_TEXTS = tuple(f".{m}(" for m in sorted(_CAST_METHODS)) + tuple(f"{k}=" for k in sorted(_CAST_KEYWORDS))


def _cast_edit(old: ast.stmt, new: ast.stmt) -> tuple[str, str] | None:
    """``(kind, cast text)`` when one statement is the other with casts added or removed."""
    old_text, new_text = _unparse(old), _unparse(new)
    if not any(old_text.count(c) != new_text.count(c) for c in _CAST_TEXTS):
        return None  # the cheap test first: unparsing twice more costs milliseconds
    if not old_text or not new_text or old_text == new_text:
        return None
    strip_new = _StripCasts()
    stripped_new = _unparse(strip_new.visit(ast.parse(new_text).body[0]))
    if strip_new.found and stripped_new == old_text:
        return "cast_added", ", ".join(strip_new.found)
    strip_old = _StripCasts()
    stripped_old = _unparse(strip_old.visit(ast.parse(old_text).body[0]))
    if strip_old.found and stripped_old == new_text:
        return "cast_removed", ", ".join(strip_old.found)
    return None


def _call_of(node: ast.stmt) -> tuple[str, ast.Call] | None:
    """``(target text, call)`` of ``call(...)``, ``x = call(...)``, ``return call(...)``."""
    value: ast.AST | None = None
    target = ""
    if isinstance(node, ast.Expr):
        value = node.value
    elif isinstance(node, ast.Assign) and len(node.targets) == 1:
        value, target = node.value, "=" + _unparse(node.targets[0])
    elif isinstance(node, ast.AnnAssign) and node.value is not None:
        value, target = node.value, "=" + _unparse(node.target)
    elif isinstance(node, ast.Return):
        value, target = node.value, "return"
    if isinstance(value, ast.Await):
        value, target = value.value, target + " await"
    if isinstance(value, ast.Call):
        return target, value
    return None


def _args(call: ast.Call) -> list[str]:
    return [_unparse(a) for a in call.args] + [(f"{k.arg}=" if k.arg else "**") + _unparse(k.value) for k in call.keywords]


def _call_edit(old: ast.stmt, new: ast.stmt) -> tuple[str, str] | None:
    """``(kind, detail)`` for the same call with other arguments, or another callee with the same ones."""
    a, b = _call_of(old), _call_of(new)
    if a is None or b is None or a[0] != b[0]:
        return None
    old_call, new_call = a[1], b[1]
    old_func, new_func = _unparse(old_call.func), _unparse(new_call.func)
    if old_func.startswith(_LOG_CALLS) and new_func.startswith(_LOG_CALLS):
        return None  # a log message's words are not behaviour
    old_args, new_args = _args(old_call), _args(new_call)
    if old_func == new_func and old_args != new_args:
        gone = [x for x in old_args if x not in new_args]
        fresh = [x for x in new_args if x not in old_args]
        if fresh and not gone:
            return "call_args_changed", "+" + ", ".join(fresh)
        if gone and not fresh:
            return "call_args_changed", "-" + ", ".join(gone)
        if len(old_args) == len(new_args) and len(gone) == 1 and len(fresh) == 1:
            return "call_args_changed", f"~{gone[0]} -> {fresh[0]}"  # one argument passed in place of another
        return "call_args_changed", "~"
    if old_func != new_func and old_args == new_args:
        return "call_replaced", f"{old_func} -> {new_func}"
    return None


def _condition(node: ast.stmt) -> str:
    if isinstance(node, (ast.If, ast.While)):
        return _unparse(node.test)
    return ""


def _pair_edit(old: _Stmt, new: _Stmt, old_node: ast.stmt, new_node: ast.stmt, at_body: bool) -> tuple[str, str, str, str] | None:
    """``(kind, old, new, detail)`` of one paired statement change, or None."""
    cast = _cast_edit(old_node, new_node) if any(old.text.count(c) != new.text.count(c) for c in _CAST_TEXTS) else None
    if cast is not None:
        return cast[0], old.text, new.text, cast[1]
    call = _call_edit(old_node, new_node)
    if call is not None:
        return call[0], old.text, new.text, call[1]
    if isinstance(old_node, ast.Return) and isinstance(new_node, ast.Return):
        return "return_changed", _unparse(old_node.value) if old_node.value else "None", _unparse(new_node.value) if new_node.value else "None", ""
    if type(old_node) is type(new_node) and isinstance(old_node, (ast.If, ast.While)) and old.text.split()[0] == new.text.split()[0]:
        before, after = _condition(old_node), _condition(new_node)
        if before and after and before != after:
            return "condition_changed", before, after, old.text.split()[0]
    if (
        at_body
        and isinstance(old_node, ast.Assign)
        and isinstance(new_node, ast.Assign)
        and len(old_node.targets) == 1
        and len(new_node.targets) == 1
        and isinstance(old_node.targets[0], ast.Name)
    ):
        name = old_node.targets[0].id
        if name == _unparse(new_node.targets[0]) and not name.startswith("__"):  # `__all__` lists exports
            return "constant_changed", _unparse(old_node.value), _unparse(new_node.value), name
    if not at_body and type(old_node) is type(new_node) and isinstance(old_node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
        # `lr = base_lr` -> `lr = base_lr / n`: the value a function computes, stated whole.
        before, after = _assigned(old_node), _assigned(new_node)
        if before is not None and after is not None and before[0] == after[0] and before[1] != after[1]:
            return "assignment_changed", before[1], after[1], before[0]
    return None


def _assigned(node: ast.stmt) -> tuple[str, str] | None:
    """``(target, value)`` of a one-target assignment (``x += 1`` reads ``x +=``, ``1``)."""
    if isinstance(node, ast.Assign) and len(node.targets) == 1:
        return _unparse(node.targets[0]), _unparse(node.value)
    if isinstance(node, ast.AugAssign):
        return _unparse(node.target) + " " + _OPS.get(type(node.op), "?") + "=", _unparse(node.value)
    if isinstance(node, ast.AnnAssign) and node.value is not None:
        return _unparse(node.target), _unparse(node.value)
    return None


_OPS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//", ast.Mod: "%", ast.Pow: "**"}


def _check(stmt: _Stmt, node: ast.stmt, lines: Sequence[DiffLine], side: str, budget: Budget) -> tuple[str, str, str] | None:
    """``(kind, condition, exception)`` for a ``raise`` under an ``if`` or an ``assert``."""
    if isinstance(node, ast.Assert):
        return "assert", _unparse(node.test), "AssertionError"
    if not isinstance(node, ast.Raise) or node.exc is None or node.cause is not None:
        return None
    exc = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
    name = _unparse(exc)
    if not name or name.rpartition(".")[2] in _NOT_CHECKS or not (name[:1].isupper() or "." in name):
        return None
    opener = block_opener(lines, stmt.index, side, stmt.indent)
    if not opener.startswith(("if ", "elif ")):
        return None  # under else/except/for...: no condition of its own to state
    head = _parse(opener, budget)
    if not isinstance(head, ast.If):
        return None  # a one-line `if x: raise ...` or an opener cut by the hunk
    return "raise", _unparse(head.test), name


def _opener_is_new(lines: Sequence[DiffLine], index: int, indent: int, skip_if: bool) -> bool:
    """True when the block holding ``lines[index]`` (or, with ``skip_if``, the block
    around its own ``if`` line) is opened by an added line."""
    i = index - 1
    level = indent
    skipped = not skip_if
    while i >= 0:
        line = lines[i]
        i -= 1
        if line.kind == REMOVED:
            continue
        stripped = line.text.strip()
        if not stripped or stripped[0] == "#":
            continue
        ind = len(line.text) - len(line.text.lstrip())
        if ind < level:
            if not skipped:
                skipped, level = True, ind
                continue
            return line.kind == ADDED and code_only(stripped).rstrip().endswith(":") and not _DEF.match(stripped)
    return False


def _branch(old: list[_Stmt], new: list[_Stmt], budget: Budget) -> tuple[str, str] | None:
    """``(condition, first statement of the new path)`` when ``new`` is ``if cond:`` + a new
    path + ``else:`` + exactly ``old`` one level deeper: the old code still runs, but only
    when ``cond`` does not hold."""
    if len(new) < len(old) + 3 or not new[0].text.startswith("if ") or new[0].indent != old[0].indent:
        return None
    head = new[0]
    tail = new[len(new) - len(old) :]
    other = new[len(new) - len(old) - 1]
    if other.text != "else:" or other.indent != head.indent:
        return None
    shift = tail[0].indent - old[0].indent
    if shift <= 0 or any(b.norm != o.norm or b.indent - o.indent != shift for b, o in zip(tail, old)):
        return None
    path = new[1 : len(new) - len(old) - 1]
    if not path or any(s.indent <= head.indent for s in path):
        return None  # an `elif` or code at the `if`'s level: not one new path
    node = _parse(head.text, budget)
    if not isinstance(node, ast.If):
        return None
    return _unparse(node.test), path[0].text


def _guard(outer: list[_Stmt], inner: list[_Stmt], budget: Budget) -> tuple[str, str] | None:
    """``(condition, first guarded statement)`` when ``inner`` is ``if cond:`` followed by
    exactly ``outer`` one level deeper (so ``outer`` now runs only when ``cond`` holds)."""
    if len(inner) != len(outer) + 1 or not outer or not inner[0].text.startswith("if "):
        return None
    head = inner[0]
    body = inner[1:]
    shift = body[0].indent - outer[0].indent
    if shift <= 0 or head.indent != outer[0].indent:
        return None
    if any(b.norm != o.norm or b.indent - o.indent != shift for b, o in zip(body, outer)):
        return None
    node = _parse(head.text, budget)
    if not isinstance(node, ast.If):
        return None
    return _unparse(node.test), outer[0].text


def file_edits(hunks: Sequence[Hunk], path: str, kind: str, budget: Budget) -> tuple[Edit, ...]:
    """The exact statement changes of one Python file's hunks (see the module docstring).

    ``kind`` is the file's kind: only ``source``, ``example`` and ``build`` files are read,
    and not when the file is added or deleted whole (its code is new or gone, not changed).
    """
    if kind not in ("source", "example", "build") or not hunks or budget.files <= 0 or budget.parses <= 0:
        return ()
    if len(hunks) == 1 and (hunks[0].old_length == 0 or hunks[0].new_length == 0):
        return ()
    budget.files -= 1
    out: list[Edit] = []
    seen_lines = 0
    for hunk in hunks:
        lines = hunk.lines
        n = len(lines)
        seen_lines += n
        if seen_lines > _MAX_FILE_LINES or len(out) >= _MAX_FILE_EDITS or budget.parses <= 0:
            break
        for i, j, k in change_blocks(lines):
            _block(lines, i, j, k, hunk.section, path, budget, out)
    if out:
        out = _drop_moved_calls(_drop_reraised(drop_split_conditions(drop_named_conditions(drop_moved_checks(out), hunks), hunks), hunks), hunks)
    return tuple(out[:_MAX_FILE_EDITS])


def _block(lines: Sequence[DiffLine], i: int, j: int, k: int, section: str, path: str, budget: Budget, out: list[Edit]) -> None:
    """Edits of one change block: removed ``lines[i:j]`` replaced by added ``lines[j:k]``."""
    old = _statements(lines, i, j, REMOVED) if j > i else []
    new = _statements(lines, j, k, ADDED) if k > j else []
    if old is None or new is None or (not old and not new):
        return
    # Statements on both sides (moved, re-wrapped) are not changes.
    old_norms = {s.norm for s in old}
    new_norms = {s.norm for s in new}
    if old and new:
        branch = _branch(old, new, budget)
        if branch is not None:
            symbol, _ = enclosing(lines, j, ADDED, new[0].indent, section)
            out.append(Edit("branch_added", path, symbol, _short(old[0].text), _short(branch[1]), _short(branch[0]), new[0].line, old[0].line))
            return
        guard = _guard(old, new, budget)
        if guard is not None:
            symbol, _ = enclosing(lines, j, ADDED, new[0].indent, section)
            out.append(Edit("guard_added", path, symbol, "", _short(guard[0]), _short(guard[1]), new[0].line, old[0].line))
            return
        guard = _guard(new, old, budget)
        if guard is not None:
            symbol, _ = enclosing(lines, i, REMOVED, old[0].indent, section)
            out.append(Edit("guard_removed", path, symbol, _short(guard[0]), "", _short(guard[1]), new[0].line, old[0].line))
            return
    old_left = [s for s in old if s.norm not in new_norms]
    new_left = [s for s in new if s.norm not in old_norms]
    if old_left and new_left and len(old_left) == len(new_left) and len(old_left) <= 8:
        for a, b in zip(old_left, new_left):
            if a.indent != b.indent:
                return  # the block's shape changed: no statement-by-statement pairing
            sym_a, body_a = enclosing(lines, a.index, REMOVED, a.indent, section)
            sym_b, body_b = enclosing(lines, b.index, ADDED, b.indent, section)
            if sym_a != sym_b:
                continue
            na, nb = _parse(a.text, budget), _parse(b.text, budget)
            if na is None or nb is None:
                continue
            found = _pair_edit(a, b, na, nb, body_a and body_b)
            if found is not None:
                kind, before, after, detail = found
                out.append(Edit(kind, path, sym_b, _short(before), _short(after), _short(detail), b.line, a.line))
        return
    # One-sided statements: checks added or removed.
    checks: dict[str, list[tuple[_Stmt, str, str, str, str]]] = {REMOVED: [], ADDED: []}  # (stmt, kind, cond, exc, symbol)
    for side, stmts, other in ((REMOVED, old_left, new_left), (ADDED, new_left, old_left)):
        if other and len(stmts) > 3:
            continue  # a rewritten block: which check replaced which is a guess
        for s in stmts:
            node = _parse(s.text, budget) if s.text.startswith(("raise ", "assert ", "assert(")) else None
            check = _check(s, node, lines, side, budget) if node is not None else None
            if check is not None:
                checks[side].append((s, *check, enclosing(lines, s.index, side, s.indent, section)[0]))
    if bool(old_left) != bool(new_left):
        _calls(old_left or new_left, REMOVED if old_left else ADDED, lines, section, path, budget, out)
    gone, came = checks[REMOVED], checks[ADDED]
    if gone and came:
        # A check removed where another is added was rewritten, not dropped ("no longer asserts X"
        # read as validation lost): one assertion for another is said so, any other mix is not.
        if len(gone) == len(came) == 1 and gone[0][1] == came[0][1] == "assert" and gone[0][4] == came[0][4]:
            (a, _w, before, exc, _s), (b, _w, after, _e, symbol) = gone[0], came[0]
            out.append(Edit("assert_replaced", path, symbol, _short(before), _short(after), exc, b.line, a.line))
        return
    for s, what, cond, exc, symbol in gone:
        out.append(Edit(f"{what}_removed", path, symbol, _short(cond), "", exc, 0, s.line))
    for s, what, cond, exc, symbol in came:
        # A check in a block this diff opens (its `if`/`for` line is added) is reached only
        # through that new block: stating its own condition alone would drop the outer one
        # ("raises when x is None" when it raises only when also `y is None`).
        if not _opener_is_new(lines, s.index, s.indent, what == "raise"):
            out.append(Edit(f"{what}_added", path, symbol, "", _short(cond), exc, s.line, 0, ""))


#: Calls that fill a list, set or dict: bookkeeping, not behaviour worth a focus point.
_CONTAINER_CALLS = (".append", ".extend", ".insert", ".add", ".update", ".setdefault")
#: Openings of statements that are no call statement.
_NOT_CALL_STARTS = ("raise ", "assert", "return", "yield", "del ", "if ", "elif ", "for ", "while ", "with ", "def ", "class ",
                    "async def", "async for", "async with", "import ", "from ", "global ", "nonlocal ", "@", "lambda")
#: One-sided call statements stated per change block; more is a rewritten block.
_MAX_CALLS = 3


def _calls(stmts: list[_Stmt], side: str, lines: Sequence[DiffLine], section: str, path: str, budget: Budget, out: list[Edit]) -> None:
    """``call_added``/``call_removed`` for a run of one to :data:`_MAX_CALLS` statements on
    one side only that are all call statements (``self._init_executor()``, ``await
    x.sync()``) inside an existing function: "now also calls" / "no longer calls". Log and
    print calls say nothing of behaviour and are left out; a call in a block the diff
    opens is part of that block, not a call added to existing code."""
    if len(stmts) > _MAX_CALLS:
        return
    found: list[tuple[_Stmt, str, str]] = []
    for s in stmts:
        if not s.text.rstrip().endswith(")") or s.text.startswith(_NOT_CALL_STARTS):
            return  # a call statement ends with its closing bracket; keywords open other statements
        node = _parse(s.text, budget)
        value = node.value if isinstance(node, ast.Expr) else None
        if isinstance(value, ast.Await):
            value = value.value
        if not isinstance(value, ast.Call):
            return  # the run does more than call: a rewrite, said (or not) by the other edits
        callee = _unparse(value.func)
        last = callee.rpartition(".")[2]
        if not callee or callee.startswith(_LOG_CALLS) or callee.endswith(_CONTAINER_CALLS) or last.startswith(("log_", "print_")):
            continue
        symbol = enclosing(lines, s.index, side, s.indent, section)[0]
        if not symbol or (side == ADDED and _opener_is_new(lines, s.index, s.indent, False)):
            return
        found.append((s, symbol, callee))
    for s, symbol, callee in found:
        if side == ADDED:
            out.append(Edit("call_added", path, symbol, "", _short(s.text), callee, s.line, 0))
        else:
            out.append(Edit("call_removed", path, symbol, _short(s.text), "", callee, 0, s.line))


def _drop_moved_calls(edits: list[Edit], hunks: Sequence[Hunk]) -> list[Edit]:
    """``edits`` without a call said added (removed) whose statement a removed (added) line
    of the file still holds, nor an assert said removed that an added line still makes (it
    went into a block the diff opens, #3404): moved within the file, not added or dropped."""
    if not any(e.kind in ("call_added", "call_removed", "assert_removed") for e in edits):
        return edits
    sides: dict[str, set[str]] = {ADDED: set(), REMOVED: set()}
    for hunk in hunks:
        for line in hunk.lines:
            if line.kind != CONTEXT:
                sides[line.kind].add(" ".join(line.text.split()))
    asserts = {text.partition(",")[0].rstrip() for text in sides[ADDED] if text.startswith("assert ")}
    # A call statement re-wrapped over lines (or its spacing changed) where it moved is the
    # same call: compared without white space and a trailing comma before the bracket, with
    # the other side's lines and its call statements.
    keys = {ADDED: {_call_key(e.new) for e in edits if e.kind == "call_added"}, REMOVED: {_call_key(e.old) for e in edits if e.kind == "call_removed"}}
    if keys[ADDED] and keys[REMOVED]:
        for side in (ADDED, REMOVED):
            keys[side] |= {_call_key(text) for text in sides[side]}
    return [e for e in edits if not ((e.kind == "call_added" and (e.new in sides[REMOVED] or _call_key(e.new) in keys[REMOVED]))
                                     or (e.kind == "call_removed" and (e.old in sides[ADDED] or _call_key(e.old) in keys[ADDED]))
                                     or (e.kind == "assert_removed" and not e.old.endswith("…") and f"assert {e.old}" in asserts))]  # fmt: skip


def _call_key(text: str) -> str:
    """A call statement without white space and with no comma before its closing bracket."""
    return "".join(text.split()).replace(",)", ")")


def _drop_reraised(edits: list[Edit], hunks: Sequence[Hunk]) -> list[Edit]:
    """``edits`` without a removed ``raise E`` when an added line of the file still raises
    ``E`` in the same function: the check was rewritten (its condition moved or widened),
    and "no longer raises E when …" would be false."""
    gone = {(e.symbol, e.detail) for e in edits if e.kind == "raise_removed" and e.detail}
    if not gone:
        return edits
    kept = set()
    for hunk in hunks:
        for i, line in enumerate(hunk.lines):
            if line.kind == ADDED and "raise" in line.text:
                for symbol, exc in gone:
                    if re.search(rf"\braise\s+{re.escape(exc)}\b", line.text):
                        indent = len(line.text) - len(line.text.lstrip())
                        if enclosing(hunk.lines, i, ADDED, indent, hunk.section)[0] == symbol:
                            kept.add((symbol, exc))
    return [e for e in edits if not (e.kind == "raise_removed" and (e.symbol, e.detail) in kept)]


def edits_from_facts(facts: Iterable[BehaviourFact]) -> list[Edit]:
    """``parameter_default_changed`` edits from the ``default_changed`` facts of
    parameters (symbol ``func(param)``), which the signature comparison already found."""
    out = []
    for fact in facts:
        if fact.kind == "default_changed" and fact.symbol.endswith(")") and "(" in fact.symbol:
            func, _, param = fact.symbol[:-1].partition("(")
            out.append(Edit("parameter_default_changed", fact.path, func, fact.old, fact.new, param, fact.line, fact.line))
    return out
