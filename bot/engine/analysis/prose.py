"""Whether a file's change is prose only: comments, docstrings and blank lines.

Pure. A pull request that only rewords a docstring or drops commented-out lines changes
no code, so the facts that speak of code ("a fix that changes source code", "changes
code in N definitions", "N % of the changed code lines") must not count it. Python is
read for docstrings (triple-quoted text standing alone as a statement) on each side of
the diff; other languages for their line comments.
"""

from __future__ import annotations

import io
import keyword
import re
import textwrap
import tokenize
import warnings
from collections.abc import Sequence

from bot.engine.analysis.patch import ADDED, CONTEXT, REMOVED, Hunk, change_blocks

#: Line comment markers by language (as :func:`bot.engine.analysis.kinds.language_of` names them).
_COMMENTS: dict[str, tuple[str, ...]] = {
    "python": ("#",),
    "cython": ("#",),
    "shell": ("#",),
    **{lang: ("//", "/*", "*", "*/") for lang in ("c", "cpp", "cuda", "go", "rust", "java", "javascript", "typescript")},
}
_TRIPLE = re.compile(r"\"\"\"|'''")
_DOCSTRING = re.compile(r"^[rRbBuU]{0,2}(?:\"\"\"|''')")


def docstring_lines(hunk: Hunk, side: str) -> set[int]:
    """``id()`` of the lines of ``side`` (``"+"`` or ``"-"``, with the context) inside a
    triple-quoted string standing alone as a statement. A hunk may start inside one: a
    line that *ends* one before any line opened one marks the lines above it too."""
    inside = False
    seen = False
    above: list[int] = []
    marks: set[int] = set()
    previous = ""
    for d in hunk.lines:
        if d.kind != CONTEXT and d.kind != side:
            continue
        text = d.text.strip()
        quotes = len(_TRIPLE.findall(text)) if "'''" in text or '"""' in text else 0
        if inside:
            marks.add(id(d))
            inside = quotes % 2 == 0
        elif quotes % 2 == 1 and not seen and text.endswith(('"""', "'''")) and (
            text in ('"""', "'''") and not previous.endswith(":") or not _DOCSTRING.match(text)
        ):
            marks.update(above)
            marks.add(id(d))
        elif quotes and _DOCSTRING.match(text):
            marks.add(id(d))
            inside = quotes % 2 == 1
        seen = seen or bool(quotes)
        above.append(id(d))
        previous = text or previous
    if not seen and _in_docstring_body(hunk, side):
        return {id(d) for d in hunk.lines if d.kind == CONTEXT or d.kind == side}
    return marks


#: A docstring section header (Google and NumPy styles) or a NumPy underline.
_SECTION_HEADER = re.compile(r"(?:Args|Arguments|Parameters|Params|Returns?|Raises|Yields?|Examples?|Notes?|Attributes|Warnings?|See Also)\s*:?|-{3,}")
_DEF_SECTION = re.compile(r"(?:async\s+)?(?:def|class)\s")
#: Two names side by side (``Target sequence``): prose, never Python outside a string.
_NAME_PAIR = re.compile(r"\b([A-Za-z_]\w*)[ \t]+(?=([A-Za-z_]\w*)\b)")
_KEYWORDS = frozenset(keyword.kwlist) | frozenset(keyword.softkwlist)


def _reads_as_prose(text: str) -> bool:
    """True when a line with no quote, comment or backslash holds two names side by side that
    are no keywords (``max_length: Target sequence length``): code outside a string never does,
    and a line with a quote or a line end backslash may be inside a string that code holds."""
    if "'" in text or '"' in text or "#" in text or "\\" in text:
        return False
    return any(a not in _KEYWORDS and b not in _KEYWORDS for a, b in (m.groups() for m in _NAME_PAIR.finditer(text)))


def _in_docstring_body(hunk: Hunk, side: str) -> bool:
    """True when a hunk that shows no triple quote at all sits in the middle of a docstring:
    its header names a ``def``/``class``, a line beside the change is a docstring section
    header (``Args:``, ``Returns:``, ``----``), and no line of the hunk on ``side`` is Python
    (each is a syntax error: ``max_length: Target sequence length``). Verl #2462 changed one
    line of an ``Args:`` list, read as code changed in ``postprocess_data``."""
    if not _DEF_SECTION.match(hunk.section):
        return False
    lines = [d.text.strip() for d in hunk.lines if d.kind == CONTEXT or d.kind == side]
    if not any(text[-1:] == ":" or text[:3] == "---" for text in lines) or not any(_SECTION_HEADER.fullmatch(text) for text in lines):
        return False
    if any(_TRIPLE.search(d.text) for d in hunk.lines):
        return False
    # Lines that are no Python alone may still be code (the items of a dict opened above the
    # hunk, with an ``Args:`` key): a line of the side must read as prose, and none may go on
    # past its end with a backslash (a string continued over lines).
    if not any(_reads_as_prose(text) for text in lines) or any(text[-1:] == "\\" for text in lines):
        return False
    for text in lines:
        if not text:
            continue
        try:
            compile(text, "<docstring line>", "exec")
        except (SyntaxError, ValueError):
            continue
        return False  # a line that is Python: this may be code after all
    return True


def prose_only(hunks: Sequence[Hunk], language: str | None) -> bool:
    """True when every added and removed line of ``hunks`` is blank, a comment or (Python)
    inside a docstring, and there is at least one; False for languages without comment
    markers here."""
    markers = _COMMENTS.get(language or "")
    if not markers or not hunks:
        return False
    python = language in ("python", "cython")
    changed = False
    for hunk in hunks:
        # Each side's docstring lines are read when a line of that side needs them: the
        # first code line of a side usually settles the answer.
        docs: dict[str, set[int]] = {}
        for d in hunk.lines:
            kind = d.kind
            if kind == CONTEXT:
                continue
            changed = True
            text = d.text.strip()
            if not text or text.startswith(markers):
                continue
            if not python:
                return False
            marks = docs.get(kind)
            if marks is None:
                marks = docs[kind] = docstring_lines(hunk, ADDED if kind == ADDED else REMOVED)
            if id(d) not in marks:
                if "#" not in d.text:
                    return False  # code, or a line whose comment went with it (counted as code)
                if "comments" not in docs:
                    docs["comments"] = comment_edits(hunk)
                if id(d) in docs["comments"]:
                    continue
                return False
    return changed


def comment_edits(hunk: Hunk) -> set[int]:
    """``id()`` of the removed and added Python lines of ``hunk`` that changed only in their
    trailing comment: a run of removed lines replaced by as many added lines whose code,
    comments left out, is the same token for token (verl #1912 fixed typos in two
    ``x = y  # …`` comments, read as source code changed).

    Only when the hunk shows the ``#`` starts a comment: a hunk inside a multi-line string
    whose quotes are out of it (an SQL query: ``WHERE a = 1 # AND admin = 0``) reads line by
    line as Python, but its other lines do not (``SELECT * FROM users``). So a line inside a
    triple-quoted string the hunk shows, or a hunk with a line outside one that is no Python
    in any place a line of code can be (:func:`_plausible`), changes no comment here: its
    change is code. Precision first: never a change hidden as "comment only" unless sure."""
    out: set[int] = set()
    lines = hunk.lines
    trusted: set[int] | None = None
    for i, j, k in change_blocks(lines):
        if j > i and j - i == k - j:
            pairs = list(zip(lines[i:j], lines[j:k]))
            if all("#" in a.text or "#" in b.text for a, b in pairs):
                codes = [(_code(a.text), _code(b.text)) for a, b in pairs]
                if all(x is not None and x == y for x, y in codes):
                    if trusted is None:
                        trusted = _code_lines(hunk)
                    if all(id(d) in trusted for d in lines[i:k]):
                        out.update(id(d) for d in lines[i:k])
    return out


def _code_lines(hunk: Hunk) -> set[int]:
    """``id()`` of the lines of ``hunk`` out of any triple-quoted string it shows, on each side
    (the context with the removed lines, and with the added ones), read from its top as out
    of a string; empty when a line of either side out of a string is no Python
    (:func:`_plausible`): the hunk may then be inside a string whose quotes it does not show."""
    out: set[int] = set()
    for side in (REMOVED, ADDED):
        inside = False
        for d in hunk.lines:
            if d.kind != CONTEXT and d.kind != side:
                continue
            quotes = len(_TRIPLE.findall(d.text))
            if inside or quotes:
                inside = inside != (quotes % 2 == 1)
                continue
            if not _plausible(d.text):
                return set()
            out.add(id(d))
    return out


#: Brackets: each closer's opener.
_OPENER_OF = {")": "(", "]": "[", "}": "{"}
_CLOSER_OF = {v: k for k, v in _OPENER_OF.items()}


def _plausible(text: str) -> bool:
    """Whether one line (a triple quote aside) may be a line of Python code somewhere: alone, in
    brackets opened above or going on below (``"key": value,``, ``x=1,``, ``)``), after an
    operator (``and ready``) or before one, as a block's header (``else:``, ``except E:``), a
    decorator, or in a function's loop (``return x``, ``break``). Prose or another language
    (``SELECT * FROM users``) is none of these; nor is a line with an unclosed quote or a
    backslash at its end (a string may go on)."""
    text = text.strip()
    if not text or text.startswith("#"):
        return True
    if text.endswith("\\"):
        return False
    tokens: list[tokenize.TokenInfo] = []
    try:
        for t in tokenize.generate_tokens(io.StringIO(text + "\n").readline):
            tokens.append(t)
    except (tokenize.TokenError, SyntaxError):
        pass  # brackets left open: the tokens so far say which
    if any(t.type == tokenize.ERRORTOKEN and t.string.strip() for t in tokens):
        return False
    end, unmatched, stack = len(text), [], []
    for t in tokens:
        if t.type == tokenize.COMMENT:
            end = t.start[1]
        elif t.type == tokenize.OP and t.string in _CLOSER_OF:
            stack.append(t.string)
        elif t.type == tokenize.OP and t.string in _OPENER_OF:
            if stack and stack[-1] == _OPENER_OF[t.string]:
                stack.pop()
            else:
                unmatched.append(t.string)
    code = text[:end].rstrip()
    if not code:
        return True
    before, after = "".join(_OPENER_OF[c] for c in reversed(unmatched)), "".join(_CLOSER_OF[c] for c in reversed(stack))
    forms = []
    for body in (code, "_ " + code, code + " _", "_ " + code + " _"):
        line = before + body + after
        forms += [line, f"_({line})", f"{{{line}}}", f"[{line}]"]
        if after:
            forms.append(line + ": pass")  # a block's header going on below (``if (ready``)
        if line.endswith(":"):
            forms += [line + " pass", f"if {line} pass", f"if 1: pass\n{line} pass", f"try: pass\n{line} pass", f"match _:\n {line} pass"]
    if code.startswith("@"):
        forms.append(code + "\ndef _(): pass")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for form in forms:
            for source in (form, "async def _():\n while 1:\n" + textwrap.indent(form, "  ")):
                try:
                    compile(source, "<line>", "exec", dont_inherit=True)
                except (SyntaxError, ValueError):
                    continue
                return True
    return False


def _code(text: str) -> str | None:
    """The tokens of one line of Python without its comment, or None when the line does not
    tokenize alone (a string or bracket that goes on over lines)."""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(text.strip() + "\n").readline))
    except (tokenize.TokenError, SyntaxError):
        return None
    if any(t.type == tokenize.ERRORTOKEN for t in tokens):
        return None  # an unclosed quote: the line is inside a string, its "comment" is text
    return " ".join(t.string for t in tokens if t.type not in _NOT_CODE)


_NOT_CODE = frozenset({tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.ENDMARKER, tokenize.INDENT, tokenize.DEDENT})
