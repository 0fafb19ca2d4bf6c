"""What a diff does to a Python file, read line by line from its hunks.

A real parser cannot read diff fragments, so scopes are followed by indentation:
each side of the diff (old file = context and removed lines, new file = context and
added lines) keeps a stack of the ``class``/``def`` blocks that enclose the current
line, seeded with the hunk header's section text (git puts the last top-level line
above the hunk there, e.g. ``class AgentLoopOutput(BaseModel):``).

Recognised:

* definitions added, removed and modified (a ``def``/``class`` line on both sides, for
  example with a new signature), qualified with their enclosing classes
  (``AgentLoopOutput.as_dict``); functions nested in functions are local helpers and
  count only as touching their outer function;
* the symbols whose bodies the diff touches;
* fields of data classes: annotated names directly in a class body
  (``name: int = 3``), reported as ``Class.field``. Dataclasses, pydantic models,
  attrs classes, ``TypedDict`` and ``NamedTuple`` all declare fields this way, and the
  decorator or base class is seldom visible in a hunk; ``ClassVar`` names are skipped;
* tests added (``test*`` functions and ``Test*`` classes);
* compatibility shims added -- only code that names another version of something:
  ``except ImportError``/``ModuleNotFoundError`` fallbacks and version comparisons
  (``version.parse(``, ``Version(``, ``sys.version_info``, ``__version__`` compared,
  ``is_version_ge(``-style helpers...), outside string literals and comments.
  ``hasattr``/``isinstance`` checks are duck typing or input checks, not compatibility
  evidence, and are not reported;
* behaviour facts (:mod:`bot.engine.analysis.pybehaviour`): field defaults changed, fields
  removed, signatures changed, checks (``raise``/``assert``) added or removed.
"""

from __future__ import annotations

import keyword
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import NamedTuple

from bot.engine.analysis.model import BehaviourFact, Definition
from bot.engine.analysis.patch import ADDED, CONTEXT, REMOVED, DiffLine, Hunk
from bot.engine.analysis.pybehaviour import (
    DefSite,
    block_opener,
    check_facts,
    code_only,
    field_facts,
    header_key,
    metric_facts,
    removal_facts,
    replaced_by_a_call,
    signature_facts,
)

_DEF = re.compile(r"(?:async\s+)?(def|class)\s+([A-Za-z_]\w*)")
_DEF_PREFIXES = ("def ", "class ", "async ")
_FIELD = re.compile(r"([A-Za-z_]\w*)\s*:\s*([^=#]+?)\s*(?:=(.*)|#.*)?")
# An annotation holds only names, brackets, quotes and ``|``/``,`` separators; this keeps
# docstring prose ("Note: see https://...") that a hunk shows without its opening quotes
# from passing as a field.
_ANNOTATION = re.compile(r"[\w.\[\]'\"()-]+(?:\s*[|,]\s*[\w.\[\]'\"()-]+)*")
_FIELD_SKIP_ENDS = (",", ":", "(", "[", "{", "\\")
_VERSION_CHECK = re.compile(
    r"version\.parse\(|\bVersion\(|\bparse_version\(|sys\.version_info|__version__\s*[<>!=]=?"
    r"|[<>!=]=?\s*[\w.]*__version__|\b\w{0,40}version_(?:ge|gt|le|lt|greater|less|at_least|atleast)\w*\("
    r"|\b\w{0,40}version\w{0,40}(?:\(\))?\s*[<>]=?\s*['\"(\d]"
)
_SHIM_TEXT_LIMIT = 160
#: Longer lines are data, not declarations; skipping them keeps the regexes linear.
_MAX_LINE = 400

_SKIP, _STRING, _COMMENT, _CODE, _DEFLINE = range(5)


class PythonFacts(NamedTuple):
    """The facts :func:`analyse_python` finds in one Python file's hunks.

    Definitions and fields are qualified names; ``*_changed`` are names present on both
    sides of the diff (moved or edited). Each shim is one line of added code prefixed
    with what it is: ``import fallback: <the import guarded>`` or ``version check: ...``
    (cut to 160 characters). ``behaviour`` holds the file's own behaviour facts (field
    defaults, removed fields, signatures, checks); ``sites`` the added and removed
    definitions with their bodies, for finding renames and moves
    (:func:`bot.engine.analysis.pybehaviour.match_definitions`). A named tuple: one is made
    per Python file, and tuples are much cheaper to build than frozen dataclasses.
    """

    symbols_touched: tuple[str, ...] = ()
    definitions_added: tuple[Definition, ...] = ()
    definitions_removed: tuple[Definition, ...] = ()
    definitions_modified: tuple[Definition, ...] = ()
    fields_added: tuple[str, ...] = ()
    fields_removed: tuple[str, ...] = ()
    fields_changed: tuple[str, ...] = ()
    tests_added: tuple[str, ...] = ()
    shims: tuple[str, ...] = ()
    behaviour: tuple[BehaviourFact, ...] = ()
    sites: tuple[DefSite, ...] = ()


class _Block(NamedTuple):
    """A ``class``/``def`` block open around the current line (one per definition line read)."""

    indent: int
    is_class: bool
    symbol: str  # what a change inside this block touches
    nested: bool  # inside a function: a local helper, not an API definition
    kind: str


class _Side:
    """Scope tracking for one side (old or new) of one hunk."""

    __slots__ = ("stack", "quote", "last_import", "fallback")

    def __init__(self, stack: list[_Block]):
        self.stack = list(stack)
        self.quote = ""
        self.last_import = ""
        self.fallback = None

    def feed(self, text: str) -> tuple[int, int, str]:
        """Update the scope with one line; return (line class, indent, stripped text)."""
        if self.quote:
            if self.quote in text and text.count(self.quote) % 2 == 1:
                self.quote = ""
            return _STRING, 0, ""
        stripped = text.lstrip()
        if not stripped:
            return _SKIP, 0, ""
        indent = len(text) - len(stripped)
        first = stripped[0]
        if first == "#":
            return _COMMENT, indent, stripped
        if '"""' in stripped or "'''" in stripped:
            self._track_quotes(stripped)
        if first in ")]}":
            return _CODE, indent, stripped  # the end of a bracket opened above, not a new statement
        stack = self.stack
        while stack and stack[-1].indent >= indent:
            stack.pop()
        if stripped.startswith(_DEF_PREFIXES):
            m = _DEF.match(stripped)
            if m is not None:
                stack.append(_block(stack, indent, m.group(2), m.group(1) == "class"))
                return _DEFLINE, indent, stripped
        return _CODE, indent, stripped

    def _track_quotes(self, stripped: str) -> None:
        d = stripped.find('"""')
        s = stripped.find("'''")
        quote = '"""' if s < 0 or (0 <= d < s) else "'''"
        if stripped.count(quote) % 2 == 1:
            self.quote = quote


def _block(stack: list[_Block], indent: int, name: str, is_class: bool) -> _Block:
    # tuple.__new__ with the fields in order: one is made per definition line read, and
    # the named tuple's own __new__ is a Python function.
    parent = stack[-1] if stack else None
    if parent is None:
        return _new_block(_Block, (indent, is_class, name, False, "class" if is_class else "function"))
    # A def more than one level inside its class is inside a method whose own def line the
    # hunk does not show (it starts in the method's body): a local function, not a method.
    if parent.nested or not parent.is_class or indent - parent.indent > 4:
        return _new_block(_Block, (indent, is_class, parent.symbol, True, "class" if is_class else "function"))
    return _new_block(_Block, (indent, is_class, f"{parent.symbol}.{name}", False, "class" if is_class else "method"))


_new_block = tuple.__new__


#: Lines that are code, never the words of a docstring.
_CODE_STARTS = ("def ", "async def ", "class ", "@", "return ", "return(")


def _starts_in_string(lines: Sequence[DiffLine], side: str) -> str:
    """The triple quote a hunk starts inside, or ``""``: a hunk that starts in the middle
    of a docstring shows its closing triple quote first, which read as an opening puts
    the code after it (a new ``def``) into a string. Of the two readings, the one
    that leaves fewer code lines (``def``, ``class``, ``@``, ``return``) inside strings wins;
    a tie reads the hunk as starting outside, and so does a hunk at the top of the file or
    with a code line (a block opener, a comment) above its first triple quote. Only
    ``side``'s and context lines are read."""
    first = ""
    for line in lines:
        if line.kind != side and line.kind != CONTEXT:
            continue
        if (line.new_line if side == ADDED else line.old_line) <= 1:
            return ""  # the top of the file is in no string
        d, q = line.text.find('"""'), line.text.find("'''")
        if d >= 0 or q >= 0:
            first = '"""' if q < 0 or 0 <= d < q else "'''"
            break
        stripped = line.text.strip()
        if stripped.endswith(":") or stripped.startswith(_CODE_STARTS) or stripped.startswith("#"):
            return ""  # code before the first quote: the hunk starts outside any string
    if not first:
        return ""
    return first if _code_in_strings(lines, side, first) < _code_in_strings(lines, side, "") else ""


def _code_in_strings(lines: Sequence[DiffLine], side: str, quote: str) -> int:
    """How many code lines (:data:`_CODE_STARTS`) read as string text when the hunk starts inside ``quote``."""
    count = 0
    for line in lines:
        if line.kind != side and line.kind != CONTEXT:
            continue
        stripped = line.text.lstrip()
        if quote:
            if stripped.startswith(_CODE_STARTS):
                count += 1
            if quote in stripped and stripped.count(quote) % 2 == 1:
                quote = ""
        elif '"""' in stripped or "'''" in stripped:
            d, q = stripped.find('"""'), stripped.find("'''")
            mark = '"""' if q < 0 or (0 <= d < q) else "'''"
            if stripped.count(mark) % 2 == 1:
                quote = mark
    return count


def _section_stack(section: str) -> list[_Block]:
    m = _DEF.match(section)
    if m is None:
        return []
    return [_block([], 0, m.group(2), m.group(1) == "class")]


def _shim_text(prefix: str, text: str) -> str:
    text = text.strip()
    if len(text) > _SHIM_TEXT_LIMIT:
        text = text[: _SHIM_TEXT_LIMIT - 1] + "…"
    return f"{prefix}: {text}"


def _field(side: _Side, stripped: str) -> tuple[str, str] | None:
    """``(Class.field, default text)`` when ``stripped`` declares a field of the class around it."""
    stack = side.stack
    if not stack or not stack[-1].is_class or stack[-1].nested:
        return None
    if stripped.endswith(_FIELD_SKIP_ENDS) or ":" not in stripped or len(stripped) > _MAX_LINE:
        return None
    m = _FIELD.fullmatch(stripped)
    if m is None or keyword.iskeyword(m.group(1)) or not _ANNOTATION.fullmatch(m.group(2)):
        return None
    if m.group(2).startswith(("ClassVar", "typing.ClassVar")):
        return None
    return f"{stack[-1].symbol}.{m.group(1)}", (m.group(3) or "").strip()


def _shims_of(side: _Side, stripped: str, added: bool, out: dict[str, None]) -> None:
    pending = side.fallback
    if pending is not None:
        # An `except ImportError:` whose body imports something else is a fallback (another
        # version's path); one that warns or sets None guards an optional backend.
        side.fallback = None
        if stripped.startswith(("import ", "from ")):
            out[_shim_text("import fallback", pending)] = None
    if stripped.startswith(("import ", "from ")):
        side.last_import = stripped
        return
    if stripped.startswith("try:"):
        side.last_import = ""
        return
    if not added or len(stripped) > _MAX_LINE:
        return
    if stripped.startswith("except") and ("ImportError" in stripped or "ModuleNotFoundError" in stripped):
        side.fallback = side.last_import or stripped
    if "ersion" in stripped and _VERSION_CHECK.search(code_only(stripped)):
        out[_shim_text("version check", stripped)] = None


def _read_context(side: _Side, lines: tuple[DiffLine, ...], start: int, end: int, shims: dict[str, None] | None) -> None:
    """Feed ``side`` the context lines of ``lines[start:end]``; on the new side (``shims``
    given) their imports and ``try:`` lines also go to :func:`_shims_of`."""
    for i in range(start, end):
        line = lines[i]
        if line[0] == CONTEXT:
            what, _indent, stripped = side.feed(line[1])
            if shims is not None and what == _CODE and stripped.startswith(_SHIM_TRACK):
                _shims_of(side, stripped, False, shims)


def _pair(old: Mapping[str, object], new: Mapping[str, object]) -> tuple[list[str], list[str], list[str]]:
    if not old or not new:  # most files: no fields, or definitions on one side only
        return list(new), list(old), []
    added = [n for n in new if n not in old]
    removed = [n for n in old if n not in new]
    changed = [n for n in new if n in old]
    return added, removed, changed


_CHECK_PREFIXES = ("raise ", "assert ", "assert(")
#: Lines :func:`_shims_of` needs to see: imports and ``try:`` (context), and those plus
#: ``except`` or any line naming a version (added).
_SHIM_TRACK = ("import ", "from ", "try:")
_SHIM_START = ("import ", "from ", "try:", "except")


def analyse_python(
    hunks: Iterable[Hunk], *, path: str = "", kind: str = "source", check_hint: bool = True, metric_hint: bool = True,
    shim_hint: bool = True,
) -> PythonFacts:
    """Find definitions, fields, tests, shims and behaviour facts in one Python file's hunks.

    ``hunks`` come from :func:`bot.engine.analysis.patch.parse_patch`; ``path`` and ``kind``
    (:data:`~bot.engine.analysis.model.KINDS`) are put on behaviour facts and decide what is
    user facing (public names in ``source`` files) and whether ``raise``/``assert``
    lines count as checks (not in tests). ``check_hint=False`` says no changed line
    holds ``raise``/``assert`` and ``metric_hint=False`` that no changed line holds a
    ``/`` (so no metric key can have been renamed) and ``shim_hint=False`` that no added
    line names ``ImportError``, ``ModuleNotFoundError`` or a version (so no shim can be
    found); they skip those searches. Line
    numbers of definitions are in the new file (old file for removed ones). Never raises.
    """
    hunks = tuple(hunks)
    touched: dict[str, None] = {}
    old_defs: dict[str, Definition] = {}
    new_defs: dict[str, Definition] = {}
    old_fields: dict[str, tuple[str, int]] = {}
    new_fields: dict[str, tuple[str, int]] = {}
    shims: dict[str, None] = {}
    where: dict[tuple[str, str], DefSite] = {}  # (side, symbol) -> where its def line is
    checks: list[tuple[str, str, str, int, str]] = []  # (side, symbol, text, line, opener)
    # A whole file added or deleted is new or gone code, not a changed check.
    whole = len(hunks) == 1 and (hunks[0].old_length == 0 or hunks[0].new_length == 0)
    want_checks = check_hint and kind in ("source", "example", "build") and not whole
    for hunk in hunks:
        start = _section_stack(hunk.section)
        old, new = _Side(start), _Side(start)
        lines = hunk.lines
        old.quote, new.quote = _starts_in_string(lines, REMOVED), _starts_in_string(lines, ADDED)
        # Each side reads the context lines before one of its own changed lines only when it
        # gets there: a side's scope is read only at its changed lines, so the context after
        # a side's last change (and all of it for a side without changes) is never read.
        # ``*_read``: the line up to which a side has read the context; ``context``: the last
        # context line seen (a side has some to read when it is past the side's mark).
        old_read = new_read = context = -1
        # Unpacked rather than read by attribute: this loop runs once per changed line.
        for index, (line_kind, text, old_no, new_no) in enumerate(lines):
            if line_kind == ADDED:
                side = new
                if context > new_read:
                    _read_context(new, lines, new_read + 1, index, shims if shim_hint else None)
                    new_read = index
            elif line_kind == REMOVED:
                side = old
                if context > old_read:
                    _read_context(old, lines, old_read + 1, index, None)
                    old_read = index
            else:
                context = index
                continue
            # What side.feed(text) does, written out: this runs once per changed line.
            stack = side.stack
            quote = side.quote
            if quote:
                if quote in text and text.count(quote) % 2 == 1:
                    side.quote = ""
                if stack:
                    touched[stack[-1].symbol] = None  # an edited docstring or multi-line string
                continue
            stripped = text.lstrip()
            if not stripped:
                continue
            indent = len(text) - len(stripped)
            first = stripped[0]
            if first == "#":
                if stack and indent > stack[-1].indent:
                    touched[stack[-1].symbol] = None
                continue
            if '"""' in stripped or "'''" in stripped:
                side._track_quotes(stripped)
            what = _CODE
            if first not in ")]}":  # a closing bracket ends a statement begun above: no new scope
                while stack and stack[-1].indent >= indent:
                    stack.pop()
                if stripped.startswith(_DEF_PREFIXES):
                    m = _DEF.match(stripped)
                    if m is not None:
                        stack.append(_block(stack, indent, m.group(2), m.group(1) == "class"))
                        what = _DEFLINE
            if want_checks and what == _CODE and stripped.startswith(_CHECK_PREFIXES) and not (
                line_kind == REMOVED and replaced_by_a_call(lines, index)
            ):
                opener = block_opener(lines, index, line_kind, indent)
                checks.append((line_kind, stack[-1].symbol if stack else "", stripped, new_no if line_kind == ADDED else old_no, opener))
            if not stack:
                if shim_hint and what == _CODE and line_kind == ADDED and (stripped.startswith(_SHIM_START) or "ersion" in stripped):
                    _shims_of(side, stripped, True, shims)
                continue
            block = stack[-1]
            touched[block.symbol] = None
            if what == _DEFLINE:
                if not block.nested:
                    defs = new_defs if line_kind == ADDED else old_defs
                    if block.symbol not in defs:
                        definition = defs[block.symbol] = Definition(block.symbol, block.kind, new_no if line_kind == ADDED else old_no)
                        where[(line_kind, block.symbol)] = _new_block(DefSite, (
                            path, kind, line_kind, definition, lines, index, indent,
                            header_key(stripped),
                        ))  # every field, in order: a DefSite without its __new__
                continue
            # A field sits one level inside its class; deeper, it is a method's local
            # variable (a hunk that starts inside a method knows only the class around it).
            if block.is_class and not block.nested and indent - block.indent <= 4:
                found = _field(side, stripped)
                if found is not None:
                    (new_fields if line_kind == ADDED else old_fields).setdefault(found[0], (found[1], new_no if line_kind == ADDED else old_no))
            # Shims are read from added lines only; the new side follows imports through
            # context and added lines (the old side's imports are never needed).
            if shim_hint and line_kind == ADDED and (stripped.startswith(_SHIM_START) or "ersion" in stripped):
                _shims_of(side, stripped, True, shims)
        if new.fallback is not None:
            # An added `except ImportError:` still waits for the import below it.
            _read_context(new, lines, new_read + 1, len(lines), shims)
    added, removed, modified = _pair(old_defs, new_defs)
    f_added, f_removed, f_changed = _pair(old_fields, new_fields)
    definitions_added = tuple(map(new_defs.__getitem__, added))
    definitions_removed = tuple(map(old_defs.__getitem__, removed))
    # Tests are the test functions and methods; a ``TestX`` class holds tests but is not
    # one (counting both said "10 tests" for 7).
    tests = tuple(d.name for d in definitions_added if d.kind != "class" and d.name.rsplit(".", 1)[-1].startswith("test")) if added else ()
    behaviour: list[BehaviourFact] = []
    if old_fields and kind != "test":
        gone = {d.name for d in definitions_removed if d.kind == "class"}
        if gone:  # fields of a removed class go with it (``symbol_removed``)
            old_fields = {k: v for k, v in old_fields.items() if k.rpartition(".")[0] not in gone}
        behaviour.extend(field_facts(path, kind, old_fields, new_fields))
    if modified:
        behaviour.extend(signature_facts(path, kind, [new_defs[n] for n in modified], where))
    if checks:
        behaviour.extend(check_facts(path, kind, checks))
    if metric_hint and kind != "test":
        behaviour.extend(metric_facts(path, kind, hunks))
    sites = [where[(REMOVED, n)] for n in removed] if removed else []
    if sites and kind != "test" and kind != "docs":
        behaviour.extend(removal_facts(sites, ()))
    if added:
        sites += [where[(ADDED, n)] for n in added]
    # Made as a tuple of the fields in their order: the named tuple's keyword handling
    # costs more than the rest of this tail for a small file.
    return _new_facts(PythonFacts, (
        tuple(touched),
        definitions_added,
        definitions_removed,
        tuple(map(new_defs.__getitem__, modified)),
        tuple(f_added),
        tuple(f_removed),
        tuple(f_changed),
        tests,
        tuple(shims),
        tuple(behaviour),
        tuple(sites),
    ))


_new_facts = tuple.__new__
