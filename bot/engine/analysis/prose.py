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
import tokenize
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
    ``x = y  # …`` comments, read as source code changed)."""
    out: set[int] = set()
    lines = hunk.lines
    for i, j, k in change_blocks(lines):
        if j > i and j - i == k - j:
            pairs = list(zip(lines[i:j], lines[j:k]))
            if all("#" in a.text or "#" in b.text for a, b in pairs):
                codes = [(_code(a.text), _code(b.text)) for a, b in pairs]
                if all(x is not None and x == y for x, y in codes):
                    out.update(id(d) for d in lines[i:k])
    return out


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
