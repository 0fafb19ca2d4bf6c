"""Behaviour facts of Python code, read from diff hunks: defaults, signatures, checks, renames.

:mod:`bot.engine.analysis.python` walks a file's hunks once and hands over what it saw; the
work here runs only on those candidates, so a large pull request pays for it only
where something changed:

* :func:`field_facts` -- a field's default changed (``default_changed``, symbol
  ``Class.field``) or a field removed (``field_removed``; not when its whole class
  goes). ``Field(default=...)`` and
  ``field(default=...)`` are read for their default, so a changed ``description=`` is
  not a new default;
* :func:`signature_facts` -- for a ``def`` line on both sides of the diff, the two
  headers are parsed with :mod:`ast` and compared: ``signature_changed`` (parameters
  removed, renamed, reordered, a required one added, a default dropped, the return
  annotation changed), ``parameter_added`` (only parameters with defaults or
  ``*args``/``**kwargs`` added: callers keep working) and ``default_changed`` with
  symbol ``func(param)`` (``Trainer.fit(epochs)``);
* :func:`check_facts` -- ``raise X(...)`` and ``assert`` lines added or removed
  (``check_added``/``check_removed``); a raise inside an ``except`` block, a bare
  ``raise``, ``raise ... from`` and ``NotImplementedError`` are error handling or
  abstract methods, not checks; a line on both sides (moved) is neither, and files
  added or deleted whole have none (their code is new or gone, not re-checked);
* :func:`match_definitions` -- definitions removed and added in the same pull
  request with the same body (normalised lines, :class:`difflib.SequenceMatcher`
  ratio >= 0.8, at least two lines) are ``symbol_renamed`` (same file) or
  ``symbol_moved`` (another file); the public rest of the removed ones are
  ``symbol_removed``.
"""

from __future__ import annotations

import ast
import difflib
import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from bot.engine.analysis.model import BehaviourFact, Definition
from bot.engine.analysis.patch import ADDED, CONTEXT, REMOVED, DiffLine, Hunk, change_blocks

#: Similarity of two bodies (normalised lines) for a rename or move.
SIMILARITY = 0.8
#: Fewer body lines say too little to call two definitions the same.
MIN_BODY_LINES = 2
#: A definition of the same name in another file is the moved one when half its body is
#: (code moved into a new module is often edited on the way).
SAME_NAME_SIMILARITY = 0.5
#: Body comparisons a pull request may cost (beyond it only identical bodies match).
MAX_COMPARISONS = 4000
_MAX_HEADER_LINES = 40
_MAX_BODY_LINES = 300
_TEXT_LIMIT = 160

_STRINGS = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|\'[^\'\\]*(?:\\.[^\'\\]*)*\'')
_RAISE = re.compile(r"raise\s+([A-Za-z_][\w.]*)")
_SPACES = re.compile(r"\s+")
_FIELD_CALLS = ("Field(", "field(", "dataclasses.field(", "pydantic.Field(", "attr.ib(", "attrs.field(", "attr.field(")


def _short(text: str) -> str:
    text = " ".join(text.split())  # whitespace runs as one space, none at the ends
    return text if len(text) <= _TEXT_LIMIT else text[: _TEXT_LIMIT - 1] + "…"


def _public(name: str) -> bool:
    return not any(part.startswith("_") and not part.startswith("__") for part in name.replace("(", ".").split("."))


def code_only(text: str) -> str:
    """``text`` with string literals emptied and without a trailing comment."""
    if '"' in text or "'" in text:
        text = _STRINGS.sub('""', text)
    return text.split("#", 1)[0]


# --- fields ------------------------------------------------------------------------------------


def default_of(value: str) -> str:
    """The default a field declaration's right-hand side gives, as source text.

    ``Field(default=3, description="x")`` and ``field(default_factory=list)`` give ``3``
    and ``list()``-like ``default_factory=list``; plain values are returned trimmed and
    without a trailing comment. Unparseable text is returned as written.
    """
    value = value.strip()
    code = code_only(value)
    if "#" in value and len(code) < len(value) and '"' not in value and "'" not in value:
        value = code.strip()
    if not value.startswith(_FIELD_CALLS):
        return _short(value)
    try:
        call = ast.parse(value, mode="eval").body
    except (SyntaxError, ValueError, RecursionError):
        return _short(value)
    if not isinstance(call, ast.Call):
        return _short(value)
    for kw in call.keywords:
        if kw.arg == "default":
            return _short(ast.unparse(kw.value))
        if kw.arg in ("default_factory", "factory"):
            return _short(f"{kw.arg}={ast.unparse(kw.value)}")
    if call.args:
        first = call.args[0]
        return "" if isinstance(first, ast.Constant) and first.value is Ellipsis else _short(ast.unparse(first))
    return ""


def field_facts(
    path: str, kind: str, old: Mapping[str, tuple[str, int]], new: Mapping[str, tuple[str, int]]
) -> list[BehaviourFact]:
    """``default_changed`` and ``field_removed`` facts from fields seen on each side.

    ``old``/``new`` map ``Class.field`` to ``(right-hand side text, line)``. A field on
    both sides whose default reads the same (moved, re-annotated) gives nothing.
    """
    out = []
    for name, (old_value, old_line) in old.items():
        user_facing = kind == "source" and _public(name)
        if name not in new:
            out.append(BehaviourFact("field_removed", path, name, old=default_of(old_value), line=old_line, user_facing=user_facing))
            continue
        new_value, new_line = new[name]
        if old_value == new_value:
            continue
        before, after = default_of(old_value), default_of(new_value)
        if before == after:
            continue
        detail = "default added" if not before else "default removed" if not after else ""
        out.append(BehaviourFact("default_changed", path, name, before, after, detail, new_line, user_facing))
    return out


# --- signatures ----------------------------------------------------------------------------------


def _side_lines(lines: Sequence[DiffLine], index: int, side: str) -> Iterable[DiffLine]:
    for line in lines[index:]:
        if line.kind == CONTEXT or line.kind == side:
            yield line


def header_text(lines: Sequence[DiffLine], index: int, side: str) -> str:
    """The ``def``/``class`` header starting at ``lines[index]`` on one side, up to its closing ``:``."""
    parts: list[str] = []
    depth = 0
    for line in _side_lines(lines, index, side):
        code = code_only(line.text)
        parts.append(line.text.strip())
        depth += code.count("(") + code.count("[") + code.count("{") - code.count(")") - code.count("]") - code.count("}")
        if depth <= 0 and code.rstrip().endswith(":"):
            return "\n".join(parts)
        if len(parts) >= _MAX_HEADER_LINES:
            break
    return ""


@dataclass(slots=True, unsafe_hash=True)  # read-only by convention: see bot.engine.analysis.model
class _Param:
    name: str
    default: str | None
    kind: str  # "positional", "vararg", "keyword", "kwarg"

    def shown(self) -> str:
        star = "*" if self.kind == "vararg" else "**" if self.kind == "kwarg" else ""
        return f"{star}{self.name}" + (f"={self.default}" if self.default is not None else "")


def parse_header(text: str) -> tuple[list[_Param], str] | None:
    """Parameters and return annotation of a ``def`` header, or ``None`` when it does not parse."""
    if not text:
        return None
    try:
        tree = ast.parse(text + "\n    pass\n")
    except (SyntaxError, ValueError, RecursionError):
        return None
    if not tree.body or not isinstance(tree.body[0], (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    fn = tree.body[0]
    a = fn.args
    positional = [*a.posonlyargs, *a.args]
    defaults: list[ast.expr | None] = [None] * (len(positional) - len(a.defaults)) + list(a.defaults)
    params = [_Param(p.arg, ast.unparse(d) if d is not None else None, "positional") for p, d in zip(positional, defaults)]
    if a.vararg is not None:
        params.append(_Param(a.vararg.arg, None, "vararg"))
    for p, d in zip(a.kwonlyargs, a.kw_defaults):
        params.append(_Param(p.arg, ast.unparse(d) if d is not None else None, "keyword"))
    if a.kwarg is not None:
        params.append(_Param(a.kwarg.arg, None, "kwarg"))
    return params, ast.unparse(fn.returns) if fn.returns is not None else ""


def compare_signatures(
    old: tuple[list[_Param], str], new: tuple[list[_Param], str], *, method: bool
) -> tuple[list[str], list[str], list[tuple[str, str, str]]]:
    """``(breaking changes, compatible additions, default changes (param, old, new))`` in words."""
    old_params, old_return = old
    new_params, new_return = new
    if method:
        old_params = old_params[1:] if old_params and old_params[0].name in ("self", "cls") else old_params
        new_params = new_params[1:] if new_params and new_params[0].name in ("self", "cls") else new_params
    old_by = {p.name: p for p in old_params}
    new_by = {p.name: p for p in new_params}
    breaking: list[str] = []
    compatible: list[str] = []
    defaults: list[tuple[str, str, str]] = []
    gone = [p for p in old_params if p.name not in new_by]
    fresh = [p for p in new_params if p.name not in old_by]
    renamed = set()
    if len(gone) == len(fresh):
        for g, f in zip(gone, fresh):
            if old_params.index(g) == new_params.index(f) and g.kind == f.kind:
                breaking.append(f"parameter `{g.name}` is now `{f.name}`")  # a name, maybe a type: not "renamed"
                renamed.update((g.name, f.name))
    for p in gone:
        if p.name not in renamed:
            breaking.append(f"removed parameter `{p.shown()}`")
    for p in fresh:
        if p.name in renamed:
            continue
        if p.default is not None or p.kind in ("vararg", "kwarg"):
            compatible.append(f"added `{p.shown()}`")
        else:
            breaking.append(f"added required parameter `{p.name}`")
    common_old = [p.name for p in old_params if p.name in new_by and p.kind == "positional"]
    common_new = [p.name for p in new_params if p.name in old_by and p.kind == "positional"]
    if common_old != common_new:
        breaking.append("reordered parameters")
    for p in old_params:
        q = new_by.get(p.name)
        if q is None:
            continue
        if p.kind == "positional" and q.kind == "keyword":
            breaking.append(f"`{p.name}` is now keyword-only")
        if p.default is not None and q.default is None and q.kind not in ("vararg", "kwarg"):
            breaking.append(f"`{p.name}` no longer has a default")
        elif p.default is not None and q.default is not None and p.default != q.default:
            defaults.append((p.name, p.default, q.default))
    if old_return and new_return and old_return != new_return:
        breaking.append(f"return annotation `{old_return or 'none'}` -> `{new_return or 'none'}`")
    return breaking, compatible, defaults


def signature_facts(
    path: str,
    kind: str,
    modified: Iterable[Definition],
    where: Mapping[tuple[str, str], DefSite],
) -> list[BehaviourFact]:
    """Facts for functions whose ``def`` line is on both sides: signature, parameter and default changes.

    ``where`` maps ``(side, name)`` to the :class:`DefSite` of the ``def`` line on
    that side. Headers that do not parse (cut by the hunk) give no facts.
    """
    out: list[BehaviourFact] = []
    for d in modified:
        if d.kind == "class":
            continue
        old_at, new_at = where.get((REMOVED, d.name)), where.get((ADDED, d.name))
        if old_at is None or new_at is None:
            continue
        old_text = header_text(old_at.lines, old_at.index, REMOVED)
        new_text = header_text(new_at.lines, new_at.index, ADDED)
        if not old_text or not new_text or "".join(old_text.split()) == "".join(new_text.split()):
            continue
        old_sig, new_sig = parse_header(old_text), parse_header(new_text)
        if old_sig is None or new_sig is None:
            continue
        breaking, compatible, defaults = compare_signatures(old_sig, new_sig, method=d.kind == "method")
        user_facing = kind == "source" and d.public
        if breaking:
            out.append(BehaviourFact("signature_changed", path, d.name, _short(old_text), _short(new_text),
                                     "; ".join(breaking + compatible), d.line, user_facing))
        elif compatible:
            out.append(BehaviourFact("parameter_added", path, d.name, _short(old_text), _short(new_text),
                                     "; ".join(compatible), d.line, user_facing))
        for param, before, after in defaults:
            out.append(BehaviourFact("default_changed", path, f"{d.name}({param})", _short(before), _short(after),
                                     "", d.line, user_facing))
    return out


# --- checks --------------------------------------------------------------------------------------


def block_opener(lines: Sequence[DiffLine], index: int, side: str, indent: int) -> str:
    """The line opening the block that ``lines[index]`` (indented ``indent``) sits in, on one side, or ``""``.

    Looks back over the hunk for the nearest code line indented less; returns it
    stripped when it ends with ``:`` (``if x < 0:``, ``except KeyError:``).
    """
    i = index - 1
    while i >= 0:
        line = lines[i]
        i -= 1
        if line.kind != CONTEXT and line.kind != side:
            continue
        stripped = line.text.strip()
        if not stripped or stripped[0] == "#":
            continue
        if len(line.text) - len(line.text.lstrip()) < indent:
            return stripped if code_only(stripped).rstrip().endswith(":") else ""
    return ""


# --- metric names -----------------------------------------------------------------------------

_METRIC = re.compile(r"[A-Za-z_][\w.@-]*(?:/[\w.@-]+)+")


def _metric_pair(old: str, new: str) -> tuple[str, str] | None:
    """The two metric keys when ``old`` and ``new`` differ only in one string literal holding one."""
    a = list(_STRINGS.finditer(old))
    b = list(_STRINGS.finditer(new))
    if not a or len(a) != len(b) or _STRINGS.sub('""', old).strip() != _STRINGS.sub('""', new).strip():
        return None
    diffs = [(x.group()[1:-1], y.group()[1:-1]) for x, y in zip(a, b) if x.group()[1:-1] != y.group()[1:-1]]
    if len(diffs) != 1:
        return None
    before, after = diffs[0]
    for key in (before, after):
        if not _METRIC.fullmatch(key) or "." in key.rpartition("/")[2]:
            return None  # not a metric key, or a file path
    return before, after


def metric_facts(path: str, kind: str, hunks: Sequence[Hunk]) -> list[BehaviourFact]:
    """``metric_renamed`` where a removed line is replaced, at the same place, by a line
    that differs only in one string literal shaped like a metric key (``"actor/pg_loss"``
    -> ``"actor/policy_loss"``; the last part holds no ``.``, so file paths do not count)."""
    out = []
    for hunk in hunks:
        lines = hunk.lines
        for i, j, k in change_blocks(lines):
            if j > i and j - i == k - j:
                for a, b in zip(lines[i:j], lines[j:k]):
                    if "/" in a.text and "/" in b.text and a.text != b.text:
                        pair = _metric_pair(a.text, b.text)
                        if pair is not None:
                            out.append(BehaviourFact("metric_renamed", path, pair[1], pair[0], pair[1], "", b.new_line, kind == "source"))
    return out


def _check_type(text: str) -> str | None:
    if text.startswith("assert"):
        return "AssertionError"
    m = _RAISE.match(text)
    if m is None:
        return None
    name = m.group(1)
    if name in ("NotImplementedError", "NotImplemented", "StopIteration", "StopAsyncIteration"):
        return None
    if " from " in code_only(text):
        return None
    return name


#: Removed lines around a check that make its block a body taken out (see :func:`replaced_by_a_call`).
_EXTRACTED_RUN = 5


def replaced_by_a_call(lines: Sequence[DiffLine], index: int) -> bool:
    """True when the removed line at ``index`` is inside a run of at least
    :data:`_EXTRACTED_RUN` removed lines that one or two added lines holding a call replace
    (``self._sync_weights(model, params)``): the block went into a function that diff may
    not show, with its checks, so "check removed" cannot be said of them."""
    start = index
    while start > 0 and lines[start - 1].kind == REMOVED:
        start -= 1
    end = index
    while end < len(lines) and lines[end].kind == REMOVED:
        end += 1
    if end - start < _EXTRACTED_RUN:
        return False
    added = end
    while added < len(lines) and lines[added].kind == ADDED:
        added += 1
    new = [line.text.strip() for line in lines[end:added] if line.text.strip()]
    return 0 < len(new) <= 2 and all("(" in text for text in new)


def check_facts(path: str, kind: str, checks: Iterable[tuple[str, str, str, int, str]]) -> list[BehaviourFact]:
    """``check_added``/``check_removed`` from ``(side, symbol, line text, line, opener)`` tuples.

    ``opener`` is the block line above the check (``if x < 0:``, ``except KeyError:``),
    or ``""``; a check under an ``if`` is reported with its condition in ``new``/``old``.
    """
    items = list(checks)
    seen = {side: {_SPACES.sub(" ", text) for s, _sym, text, _n, _o in items if s == side} for side in (ADDED, REMOVED)}
    # A check of the same function raising the same exception on the other side is the same
    # check reworded, moved or widened (an assert that gained a message, a `ValueError` with a
    # new text): neither a new check nor a removed one.
    typed = {side: {(sym, _check_type(text)) for s, sym, text, _n, _o in items if s == side} for side in (ADDED, REMOVED)}
    out = []
    for side, symbol, text, number, opener in items:
        if opener.startswith(("except", "try", "finally")):
            continue
        other = REMOVED if side == ADDED else ADDED
        if _SPACES.sub(" ", text) in seen[other]:
            continue
        exc = _check_type(text)
        if exc is None or (symbol, exc) in typed[other]:
            continue
        shown = _short(f"{opener} {text}" if opener.startswith(("if ", "elif ")) else text)
        user_facing = kind == "source" and _public(symbol)
        if side == ADDED:
            out.append(BehaviourFact("check_added", path, symbol, "", shown, exc, number, user_facing))
        else:
            out.append(BehaviourFact("check_removed", path, symbol, shown, "", exc, number, user_facing))
    return out


# --- renames and moves ---------------------------------------------------------------------------


class DefSite(NamedTuple):
    """A definition added (``side`` ``"+"``) or removed (``"-"``) in one file, with where its lines are.

    ``lines`` are the lines of the hunk holding its ``def``/``class`` line at
    ``index``; the body is read from them only when needed (:func:`body_of`). A named
    tuple: a large pull request has thousands of these.
    """

    path: str
    kind: str
    side: str
    definition: Definition
    lines: tuple[DiffLine, ...] = ()
    index: int = 0
    indent: int = 0
    key: str = ""


def body_of(site: DefSite) -> tuple[str, ...]:
    """The definition's lines after its header on its side, stripped, without blanks and comments."""
    lines, side, indent = site.lines, site.side, site.indent
    out: list[str] = []
    n = len(lines)
    i = site.index
    code = code_only(lines[i].text) if i < n else ""
    depth = code.count("(") + code.count("[") - code.count(")") - code.count("]")
    started = depth <= 0 and code.rstrip().endswith(":")
    i += 1
    while i < n:
        line = lines[i]
        i += 1
        if line.kind != CONTEXT and line.kind != side:
            continue
        text = line.text
        stripped = text.strip()
        if not started:
            code = code_only(text)
            depth += code.count("(") + code.count("[") - code.count(")") - code.count("]")
            started = depth <= 0 and code.rstrip().endswith(":")
            continue
        if not stripped or stripped[0] == "#":
            continue
        if len(text) - len(text.lstrip()) <= indent:
            break
        out.append(stripped)
        if len(out) >= _MAX_BODY_LINES:
            break
    return tuple(out)


def _outermost(sites: Sequence[DefSite]) -> list[DefSite]:
    names = {(s.path, s.definition.name) for s in sites}
    return [s for s in sites if "." not in s.definition.name or (s.path, s.definition.name.rsplit(".", 1)[0]) not in names]


def _similar(a: tuple[str, ...], b: tuple[str, ...]) -> float:
    if a == b:
        return 1.0
    m = difflib.SequenceMatcher(None, a, b, autojunk=False)
    if m.real_quick_ratio() < SIMILARITY or m.quick_ratio() < SIMILARITY:
        return 0.0
    return m.ratio()


@dataclass(frozen=True, slots=True)
class Relocation:
    """A definition found again under another name or in another file: ``old`` and ``new`` sites."""

    old: DefSite
    new: DefSite
    score: float

    @property
    def moved(self) -> bool:
        """True when the definition changed files."""
        return self.old.path != self.new.path


def header_key(text: str) -> str:
    """What follows the first ``(`` of a definition's line, without spaces: ``batch,config):``.

    A rename or move keeps its parameters (or bases), so only definitions with the same
    key are compared; it spares reading the bodies of the rest. A return annotation is
    left out (``batch,config)``): a rename may add one (``-> None``) and stay the same code.
    """
    key = text.partition("(")[2].replace(" ", "")
    arrow = key.rfind(")->")
    return key[: arrow + 1] + ":" if arrow >= 0 and key.endswith(":") else key


def match_definitions(sites: Iterable[DefSite]) -> list[Relocation]:
    """Pair removed with added definitions whose bodies are the same or nearly (ratio >= 0.8;
    0.5 for a definition of the same name in another file).

    Only outermost definitions are paired (a class's methods go with it), only those
    whose first lines end alike (:func:`header_key`: same parameters or bases) and whose
    kinds agree (a class with a class). Same-file pairs are tried first, then the same
    name in another file, then any other file. At most :data:`MAX_COMPARISONS` body
    comparisons are made; beyond that only identical bodies pair.
    """
    removed: list[DefSite] = []
    added: list[DefSite] = []
    for s in sites:
        if s.lines:
            (removed if s.side == REMOVED else added).append(s)
    if not removed or not added:
        return []
    keys = {s.key for s in removed}
    added = [s for s in added if s.key in keys]
    if not added:
        return []
    buckets: dict[tuple[str, bool], list[DefSite]] = {}
    for s in _outermost(added):
        buckets.setdefault((s.key, s.definition.kind == "class"), []).append(s)
    pairs: list[tuple[DefSite, list[DefSite]]] = []
    for s in _outermost(removed):
        found = buckets.get((s.key, s.definition.kind == "class"))
        if found:
            pairs.append((s, found))
    if not pairs:
        return []
    bodies: dict[int, tuple[str, ...]] = {}

    def body(site: DefSite) -> tuple[str, ...]:
        key = id(site)
        if key not in bodies:
            bodies[key] = body_of(site)
        return bodies[key]

    taken_old: set[int] = set()
    taken_new: set[int] = set()
    out: list[Relocation] = []
    budget = MAX_COMPARISONS
    for tier in (0, 1, 2):
        for old, candidates in pairs:
            if id(old) in taken_old:
                continue
            old_body = body(old)
            if tier == 0:
                twin = next((new for new in candidates if id(new) not in taken_new and _in_place(old, new)), None)
                if twin is not None:
                    taken_old.add(id(old))
                    taken_new.add(id(twin))
                    out.append(Relocation(old, twin, 1.0))
                    continue
            if len(old_body) < MIN_BODY_LINES:
                continue
            best: tuple[float, DefSite] | None = None
            for new in candidates:
                if id(new) in taken_new or _tier(old, new) != tier:
                    continue
                new_body = body(new)
                if len(new_body) < MIN_BODY_LINES:
                    continue
                if new_body == old_body:
                    best = (1.0, new)
                    break
                if budget <= 0:
                    continue
                budget -= 1
                score = _similar(old_body, new_body)
                if score >= (SAME_NAME_SIMILARITY if tier == 1 else SIMILARITY) and (best is None or score > best[0]):
                    best = (score, new)
            if best is not None:
                taken_old.add(id(old))
                taken_new.add(id(best[1]))
                out.append(Relocation(old, best[1], best[0]))
    return out


def _in_place(old: DefSite, new: DefSite) -> bool:
    """True when ``new``'s one-line header replaced ``old``'s in the same hunk (only removed
    lines between them) and the first unchanged line after it is still in its body (indented
    deeper): a rename in place, the body kept at least in part under the new name."""
    if old.lines is not new.lines or old.path != new.path or new.index <= old.index or _tier(old, new) != 0:
        return False
    lines = old.lines
    if not (code_only(lines[old.index].text).rstrip().endswith(":") and code_only(lines[new.index].text).rstrip().endswith(":")):
        return False
    if not all(lines[i].kind == REMOVED for i in range(old.index + 1, new.index)):
        return False
    for line in lines[new.index + 1:]:
        if line.kind == CONTEXT and line.text.strip():
            return len(line.text) - len(line.text.lstrip()) > new.indent
    return False


def _tier(old: DefSite, new: DefSite) -> int:
    """0: same file, other name; 1: other file, same name; 2: other file, other name; 3: no pair."""
    same_file = old.path == new.path
    same_name = old.definition.name == new.definition.name
    if not same_name and _private(new.definition.name) and not _private(old.definition.name):
        return 3  # a public name's body behind a private one: callers were given something else
    if same_file:
        return 3 if same_name else 0
    return 1 if same_name else 2


def _private(name: str) -> bool:
    return name.rpartition(".")[2].startswith("_")


def relocation_facts(relocations: Iterable[Relocation], old_names: Mapping[str, str] | None = None) -> list[BehaviourFact]:
    """``symbol_renamed`` / ``symbol_moved`` facts, on the new file, for :func:`match_definitions`'s pairs.

    ``old_names`` maps a renamed file's path to its name before the pull request: a
    definition moved out of it was imported from the old name (GitHub's
    ``previous_filename``, https://docs.github.com/en/rest/pulls/pulls#list-pull-requests-files).
    """
    out = []
    old_names = old_names or {}
    for r in relocations:
        old, new = r.old.definition, r.new.definition
        user_facing = r.old.kind == "source" and old.public
        if r.moved:
            source = old_names.get(r.old.path, r.old.path)
            out.append(BehaviourFact("symbol_moved", r.new.path, new.name, old.name, new.name, f"from {source}", new.line, user_facing))
        else:
            out.append(BehaviourFact("symbol_renamed", r.new.path, new.name, old.name, new.name, "", new.line, user_facing))
    return out


def removal_facts(sites: Sequence[DefSite], relocated: Collection[tuple[str, str]]) -> list[BehaviourFact]:
    """``symbol_removed`` for removed (``"-"``) public outermost definitions outside tests and docs, not relocated."""
    out = []
    names = {(s.path, s.definition.name) for s in sites} if len(sites) > 1 else ()
    for s in sites:
        d = s.definition
        name = d.name
        if s.side != REMOVED or s.kind == "test" or s.kind == "docs" or (relocated and (s.path, name) in relocated):
            continue
        if name[0] == "_" or "._" in name:
            if not d.public:
                continue
        if "." in name and (s.path, name.rpartition(".")[0]) in names:
            continue  # goes with its class
        out.append(BehaviourFact("symbol_removed", s.path, name, name, "", d.kind, d.line, s.kind == "source"))
    return out
