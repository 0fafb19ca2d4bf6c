"""A small change said by quoting it: the lines a file's change removed and added, verbatim.

Pure. When a file's whole change is a line or two (``seq_len_effective =
seq_len_effective.long()`` added before a call; one ``env_vars`` entry replaced by
another), the exactest statement of it is the lines themselves, with where they are.
:func:`small_change` gives that as an :class:`~bot.engine.analysis.model.Edit` of kind
``lines`` (``old``/``new`` hold the lines, one per ``\\n``), or None for any bigger or
less certain change; the syntax-level edits of :mod:`bot.engine.analysis.edits` are
preferred where they exist.
"""

from __future__ import annotations

import ast
import keyword
import re
from collections.abc import Sequence

from bot.engine.analysis.edits import enclosing
from bot.engine.analysis.model import Edit
from bot.engine.analysis.patch import ADDED, REMOVED, DiffLine, Hunk

#: At most this many meaningful lines on each side: beyond that a quote is not a summary.
MAX_LINES = 2
#: More lines are quoted when each removed line pairs with the added line that sets the
#: same key (``NGPUS_PER_NODE=16`` → ``NGPUS_PER_NODE=8``): a list of settings changed.
MAX_KEYED_LINES = 4
#: A line longer than this is not quoted (a reader cannot take it in at a glance). A line
#: of prose (docs) may be longer: its start says what it is, and the guide shows that start.
MAX_LINE_CHARS = 120
MAX_DOCS_LINE_CHARS = 400
#: Files of these kinds are quoted (generated files say nothing; a test's lines are read by
#: the tests section).
QUOTED_KINDS = frozenset({"source", "example", "build", "config", "ci", "docs"})
_KEY = re.compile(r"[=:(]")
_LINK = re.compile(r"!?\[([^\]\n]*)\]\([^)\s]*\)")
_URL = re.compile(r"\b(?:https?|ftp)://|\bwww\.")
#: Comment openers by language family: a comment-only line is not the change.
_COMMENT = ("#", "//", "/*", "*", "--", "<!--", ";")


def _meaningful(line: DiffLine, docs: bool) -> bool:
    text = line.text.strip()
    if not text:
        return False
    return docs or not text.startswith(_COMMENT)


def _clean(text: str, docs: bool = False) -> str:
    """A line as quoted: without indentation and a shell line continuation; in docs, a
    Markdown link as its text (a summary is never a link)."""
    text = text.strip().removesuffix("\\").rstrip()
    return _LINK.sub(r"\1", text) if docs else text


def _key(line: str) -> str:
    """What a line sets or calls (the text before its first ``=``, ``:`` or ``(``), to pair
    a removed line with the added line that replaced it; one line alone always pairs."""
    return _KEY.split(line, maxsplit=1)[0].strip() if line else ""


def _statement(text: str) -> bool:
    """Whether ``text`` is a whole Python statement (or a block's opening line)."""
    if text.endswith(","):
        return _entry(text)  # "cfg.a," parses as a tuple, but is one argument of a wrapped call
    if text.endswith(":"):
        text += " pass"
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return _entry(text)
    if text[:1] in "\"'":
        # A lone string is a docstring line; a string and its comma is one entry of a list
        # written one per line (``"mlp.gate.weight",  # MoE router``): that entry is the change.
        body = tree.body
        return (len(body) == 1 and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Tuple)
                and len(body[0].value.elts) == 1 and isinstance(body[0].value.elts[0], ast.Constant))
    # A lone name is a fragment (part of a wrapped expression), but a keyword alone
    # (``break``, ``return``, ``continue``) is a whole statement.
    return not text.isidentifier() or keyword.iskeyword(text)


def _entry(text: str) -> bool:
    """Whether ``text`` is one whole entry of a call or a dict literal that names what it
    sets: ``seed=cfg.seed,`` or ``"seed": cfg.seed,`` (a line of a wrapped call or dict
    says that much alone; a positional argument or a list item does not)."""
    body = text.removesuffix(",")
    try:
        call = ast.parse(f"f({body})", mode="eval").body
    except (SyntaxError, ValueError):
        call = None
    if isinstance(call, ast.Call) and not call.args and len(call.keywords) == 1 and call.keywords[0].arg:
        return True
    try:
        mapping = ast.parse(f"{{{body}}}", mode="eval").body
    except (SyntaxError, ValueError):
        return False
    return isinstance(mapping, ast.Dict) and len(mapping.keys) == 1 and isinstance(mapping.keys[0], ast.Constant)


def _eof_newline(hunk: Hunk) -> set[int]:
    """Indexes of the removed and added line that differ only by the newline at the end of
    the file (``\\ No newline at end of file``): the same text, so no change to quote."""
    if not (hunk.old_missing_newline or hunk.new_missing_newline):
        return set()
    last_removed = max((i for i, x in enumerate(hunk.lines) if x.kind == REMOVED), default=None)
    last_added = max((i for i, x in enumerate(hunk.lines) if x.kind == ADDED), default=None)
    if last_removed is None or last_added is None:
        return set()
    if hunk.lines[last_removed].text.rstrip() != hunk.lines[last_added].text.rstrip():
        return set()
    return {last_removed, last_added}


def small_change(hunks: Sequence[Hunk], path: str, kind: str, language: str | None) -> Edit | None:
    """The change of one file as a quote, when it is at most :data:`MAX_LINES` meaningful
    lines removed and added, or :data:`MAX_KEYED_LINES` that pair up by what they set
    (blank and comment-only lines, and a line changed only by the newline at the end of
    the file, do not count, except blank lines in docs),
    none longer than :data:`MAX_LINE_CHARS`, and a line present on both sides (moved or
    re-indented) is not a change. Returns an ``Edit(kind="lines")`` whose ``old``/``new``
    are the removed/added lines (stripped, ``\\n``-joined), ``line``/``old_line`` the
    first added/removed line's number, ``symbol`` the enclosing Python definition when the
    hunk shows it; None otherwise. Never raises."""
    if kind not in QUOTED_KINDS or not hunks or path.endswith(".ipynb"):
        return None  # a notebook's lines are JSON strings, not its code
    docs = kind == "docs"
    removed: list[tuple[int, DiffLine]] = []
    added: list[tuple[int, DiffLine]] = []
    where: tuple[Hunk, int] | None = None
    removed_in: set[int] = set()  # which hunks hold the meaningful removed and added lines
    added_in: set[int] = set()
    for number, hunk in enumerate(hunks):
        eof = _eof_newline(hunk)
        for i, line in enumerate(hunk.lines):
            if line.kind not in (ADDED, REMOVED) or not _meaningful(line, docs) or i in eof:
                continue
            (added if line.kind == ADDED else removed).append((i, line))
            (added_in if line.kind == ADDED else removed_in).add(number)
            if where is None:
                where = (hunk, i)
            if len(added) > MAX_KEYED_LINES or len(removed) > MAX_KEYED_LINES:
                return None
    if where is None:
        return None
    # A line that is only a shell continuation (``    \\``) quotes as nothing: left out.
    old = [x for x in dict.fromkeys(_clean(line.text, docs) for _i, line in removed) if x]
    new = [x for x in dict.fromkeys(_clean(line.text, docs) for _i, line in added) if x]
    if not old and not new:
        return None
    if language == "python" and len(old) + len(new) < sum(1 for _i, line in removed + added if _clean(line.text, docs)):
        return None  # the same lines in two places: "in f: adds X" would hide the second function
    if docs and any(_URL.search(x) for x in old + new):
        return None  # a bare address left: quoting it would make the summary a link
    keyed = len(old) == len(new) and all(_key(a) and _key(a) == _key(b) for a, b in zip(old, new))
    if max(len(old), len(new)) > MAX_LINES and not keyed:
        return None
    if old and new and (len(old) != len(new) or len(old) > 1 and not keyed):
        return None  # lines that do not pair up: "A becomes B" would guess which became which
    if old and new and not keyed and removed_in != added_in:
        return None  # a line dropped in one place and another added elsewhere: no "A becomes B"
    limit = MAX_DOCS_LINE_CHARS if docs else MAX_LINE_CHARS
    if set(old) & set(new) or any(len(x) > limit for x in old + new):
        return None
    if language == "python" and not all(_statement(x) for x in old + new):
        return None  # a docstring's prose or part of a wrapped statement says nothing alone
    symbol = ""
    hunk, index = where
    if language == "python":
        first = hunk.lines[index]
        indent = len(first.text) - len(first.text.lstrip())
        symbol, _body = enclosing(hunk.lines, index, first.kind, indent, hunk.section)
    line_no = added[0][1].new_line if added else 0
    old_no = removed[0][1].old_line if removed else 0
    return Edit("lines", path, symbol, "\n".join(old), "\n".join(new), line=line_no, old_line=old_no)
