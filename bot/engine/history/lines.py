"""Which lines of a pull request are worth tracing back to the pull request that wrote them.

Pure. The SZZ algorithm (Śliwerski, Zimmermann and Zeller, "When do changes induce
fixes?", MSR 2005) blames the lines a fix deletes or modifies, at the commit before
the fix, and calls the changes that wrote them "fix-inducing". Rosa et al. ("Evaluating
SZZ implementations", ICSE 2021) measured that most of its false links come from lines
that carry no behaviour. So a deleted line is only traced when it is *meaningful*:

* not blank, not a comment (``#``, ``//``, ``/* */``, docstrings...), not only an import
  (``import``/``from``/``use``/``#include``/``require``/``source``...), for the languages
  :data:`COMMENT_PREFIXES` lists;
* not only punctuation or a bare keyword (``)``, ``},``, ``else:``, ``fi``);
* not changed only in whitespace: its twin without whitespace is added in the same
  change block (in Python and YAML, where indentation is meaning, a line moved to
  another indentation level still counts);
* not moved: the same line is added to another file of the pull request (re-added in
  its own file, a line only changed place among its neighbours: that order is behaviour);
* in a file that is code: documentation, generated files, lock files, binaries, CI
  files, example and build scripts are skipped (see :data:`_SKIPPED_KINDS`), as are
  files whose patch GitHub omitted. When a pull request changes no line of code, the
  meaningful lines of its CI files and example scripts are the ones to blame
  (:attr:`TracePlan.fallback`), and only a unanimous origin is named; when it deletes
  none of those either, the lines around what it adds (:func:`insertion_context`).

Deleted lines are numbered as in the file before the pull request, under the file's
old name for a rename (``previous_filename``), since that is where blame finds them.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from bot.engine.analysis.kinds import kind_of, language_of
from bot.engine.analysis.prose import docstring_lines
from bot.engine.analysis.pybehaviour import code_only
from bot.engine.analysis.patch import ADDED, CONTEXT, REMOVED, Hunk, parse_patch
from bot.engine.snapshot import ChangedFile


@dataclass(frozen=True, slots=True)
class ChangedLine:
    """One deleted (or modified) line of a pull request.

    ``path`` is the file before the pull request (its old name when renamed) and
    ``line`` the 1-based line number there; ``file`` is the file's name in the pull
    request; ``text`` the line as it was written.
    """

    path: str
    line: int
    text: str
    file: str


#: Why a deleted line is not traced (the keys of :func:`trace_plan`'s ``dropped``).
DROP_REASONS = ("blank", "comment", "import", "trivial", "formatting", "moved", "file")

#: Line comment and block comment markers of each language (as :func:`bot.engine.analysis.kinds.language_of` names them).
COMMENT_PREFIXES: dict[str, tuple[str, ...]] = {
    "python": ("#",),
    "cython": ("#",),
    "shell": ("#",),
    "yaml": ("#",),
    "toml": ("#",),
    "ini": ("#", ";"),
    "dockerfile": ("#",),
    "make": ("#",),
    "cmake": ("#",),
    "pip-requirements": ("#",),
    "ruby": ("#",),
    "r": ("#",),
    "julia": ("#",),
    "sql": ("--",),
    "lua": ("--",),
    **{
        lang: ("//", "/*", "*", "*/")
        for lang in ("c", "cpp", "cuda", "go", "rust", "java", "kotlin", "scala", "swift",
                     "javascript", "typescript", "csharp", "php", "protobuf", "css")
    },  # fmt: skip
}

#: Languages where a line's indentation is part of its meaning.
INDENT_SENSITIVE = frozenset({"python", "cython", "yaml"})

#: A whole line that only imports, per language.
_IMPORT = {
    "python": re.compile(r"(?:import\s+[\w.]|from\s+\.*[\w.]*\s+import\b)"),
    "go": re.compile(r"import\s*(?:\(|[\w.]*\s*\")"),
    "rust": re.compile(r"(?:pub(?:\([\w:]+\))?\s+)?(?:use\s+[\w:{]|extern\s+crate\s|mod\s+\w+\s*;)"),
    "java": re.compile(r"(?:import|package)\s+[\w.*]+\s*;"),
    "kotlin": re.compile(r"(?:import|package)\s+[\w.*`]+"),
    "scala": re.compile(r"(?:import|package)\s+[\w.{}*, ]+$"),
    "javascript": re.compile(
        r"(?:import\s+(?:[\w*{}\s,$]+\s+from\s+)?['\"]|import\s*\{|export\s+(?:\*|\{[^}]*\})\s+from\s|"
        r"(?:const|let|var)\s+[\w{}\s,$]+=\s*require\(\s*['\"][^'\"]+['\"]\s*\)\s*;?$)"
    ),
    "c": re.compile(r"#\s*include\b"),
    "shell": re.compile(r"(?:source|\.)\s+\S+$"),
}
_IMPORT["typescript"] = _IMPORT["javascript"]
_IMPORT["cython"] = _IMPORT["python"]
_IMPORT["cpp"] = _IMPORT["cuda"] = _IMPORT["c"]

#: Openers of a multi-line import whose following lines, up to the closer, only name imports.
_IMPORT_BLOCK = {
    "python": (re.compile(r"from\s+\.*[\w.]*\s+import\s*\((?!.*\))"), ")"),
    "go": (re.compile(r"import\s*\($"), ")"),
    "rust": (re.compile(r"(?:pub\s+)?use\s+[\w:]*\{(?!.*\})"), "}"),
    "javascript": (re.compile(r"(?:import|export)\s*(?:type\s+)?\{(?!.*\})"), "}"),
}
_IMPORT_BLOCK["typescript"] = _IMPORT_BLOCK["javascript"]
_IMPORT_BLOCK["cython"] = _IMPORT_BLOCK["python"]

#: Lines that say nothing on their own: bare keywords that only close or open a block.
_KEYWORDS = frozenset({
    "else", "else:", "try:", "finally:", "except:", "pass", "return", "break", "continue", "fi", "done",
    "esac", "then", "do", "end", "else {", "} else {", "default:", "return;", "break;", "continue;",
})  # fmt: skip
_ALNUM = re.compile(r"\w")

#: File kinds whose lines are not traced (:data:`bot.engine.analysis.model.KINDS`): documents,
#: generated files and binaries are not code; CI files, example and build scripts are
#: mostly edited to follow code changed elsewhere, so who wrote their lines says little
#: about where a bug came from (on the oracle of ``bench/history_links.py``, tracing them
#: cost more right answers than it gave).
_SKIPPED_KINDS = frozenset({"docs", "generated", "binary", "ci", "example", "build"})
#: Skipped kinds whose lines are still blamed when a pull request changes no line of
#: code: a fix of a CI workflow or of an example script fixes those lines. One pull
#: request must then have written all of them (see :class:`TracePlan`). Build files are
#: not among them: a Dockerfile's pinned versions are mostly bumped to follow releases.
_FALLBACK_KINDS = frozenset({"ci", "example"})


@dataclass(frozen=True, slots=True)
class TracePlan:
    """The lines of a pull request to blame, in file order.

    ``traced``: its meaningful deleted lines of code; ``dropped``: how many deleted lines
    were left out, by reason of :data:`DROP_REASONS`. Only when nothing is traced:
    ``fallback``, the meaningful deleted lines of its CI files and example scripts (also
    counted as dropped ``"file"`` lines); and only when there are none either, ``around``,
    the lines around what it only adds (:func:`insertion_context`). A link to either
    must be unanimous (:attr:`unanimous`).
    """

    traced: tuple[ChangedLine, ...]
    dropped: dict[str, int]
    fallback: tuple[ChangedLine, ...] = ()
    around: tuple[ChangedLine, ...] = ()

    @property
    def to_blame(self) -> tuple[ChangedLine, ...]:
        """The lines to blame: ``traced``, else ``fallback``, else ``around``."""
        return self.traced or self.fallback or self.around

    @property
    def unanimous(self) -> bool:
        """True when the lines to blame are ``fallback`` or ``around``: one pull request
        must have written all of them (:data:`bot.engine.history.links.FALLBACK_LINES`)."""
        return not self.traced and bool(self.fallback or self.around)

    @property
    def adds_only(self) -> bool:
        """True when the lines to blame are ``around``: the pull request changes none of them."""
        return not self.traced and not self.fallback and bool(self.around)

    def ranges(self) -> dict[str, list[tuple[int, int]]]:
        """``{old path: [(first, last), ...]}``: the traced lines as sorted, merged 1-based ranges."""
        return line_ranges(self.traced)


def line_ranges(lines: Iterable[ChangedLine]) -> dict[str, list[tuple[int, int]]]:
    """``{path: [(first, last), ...]}`` of ``lines``: sorted, adjacent lines merged into one range."""
    by_path: dict[str, list[int]] = {}
    for line in lines:
        by_path.setdefault(line.path, []).append(line.line)
    out: dict[str, list[tuple[int, int]]] = {}
    for path, numbers in by_path.items():
        ranges: list[tuple[int, int]] = []
        for n in sorted(set(numbers)):
            if ranges and n == ranges[-1][1] + 1:
                ranges[-1] = (ranges[-1][0], n)
            else:
                ranges.append((n, n))
        out[path] = ranges
    return out


def deleted_lines(files: Sequence[ChangedFile]) -> tuple[ChangedLine, ...]:
    """Every deleted line of ``files``, unfiltered (what plain SZZ blames)."""
    out = []
    for f in files:
        old = f.previous_filename or f.filename
        for hunk in parse_patch(f.patch):
            for d in hunk.lines:
                if d.kind == REMOVED:
                    out.append(ChangedLine(old, d.old_line, d.text, f.filename))
    return tuple(out)


def trace_plan(files: Sequence[ChangedFile], *, keep: Iterable[str] = ()) -> TracePlan:
    """The meaningful deleted lines of ``files`` (GitHub's "List pull requests files"
    entries) and what was left out; see the module docstring for the rules. Reasons in
    ``keep`` (of :data:`DROP_REASONS`) do not drop a line (to measure each rule)."""
    kept = frozenset(keep)
    dropped: Counter[str] = Counter()
    code: list[tuple[ChangedFile, str | None, tuple[Hunk, ...]]] = []
    scripts: list[tuple[ChangedFile, str | None, tuple[Hunk, ...]]] = []
    for f in files:
        hunks = parse_patch(f.patch)
        if not hunks:
            continue
        kind = kind_of(f.filename, status=f.status, patch=f.patch, changes=f.changes)
        if (kind in _SKIPPED_KINDS or _is_lock(f.filename)) and "file" not in kept:
            dropped["file"] += sum(1 for h in hunks for d in h.lines if d.kind == REMOVED)
            if kind in _FALLBACK_KINDS and not _is_lock(f.filename):
                scripts.append((f, language_of(f.filename), hunks))
            continue
        code.append((f, language_of(f.filename), hunks))
    traced = _meaningful(code, _additions(code), kept, dropped)
    # The scripts' lines are only blamed when no line of code is: a move into them counts too.
    fallback = () if traced else _meaningful(scripts, _additions(code + scripts), kept, Counter())
    around = () if traced or fallback else insertion_context(files)
    return TracePlan(traced, {r: dropped[r] for r in DROP_REASONS if dropped[r]}, fallback, around)


def _additions(parsed) -> tuple[Counter[str], dict[str, Counter[str]]]:
    """The added lines of ``parsed`` files by :func:`_key`: all of them, and per file."""
    added: Counter[str] = Counter()
    added_in: dict[str, Counter[str]] = {}
    for f, _language, hunks in parsed:
        mine = added_in.setdefault(f.filename, Counter())
        for hunk in hunks:
            for d in hunk.lines:
                if d.kind == ADDED:
                    key = _key(d.text)
                    added[key] += 1
                    mine[key] += 1
    return added, added_in


#: Removed lines in a row, all re-added in their own file, that make a block moved (a body
#: taken into a new function), not statements put in another order.
MOVED_BLOCK = 3


def _moved_blocks(lines: list, added_here: Counter[str]) -> set[int]:
    """``id()`` of the removed lines of runs of at least :data:`MOVED_BLOCK` that are all
    re-added in the same file (verl #2901: ``finalize``'s five lines became the body of a
    new helper, and the guide blamed them as lines the fix rewrote)."""
    out: set[int] = set()
    run: list[int] = []
    last = -2  # old-file line of the run's last line: a run is lines next to each other
    for d, reason in [*lines, (None, "")]:
        adjacent = d is not None and d.kind == REMOVED and d.old_line == last + 1
        if adjacent and reason in ("blank", "comment"):
            last = d.old_line  # a blank or comment line inside the block does not end it
            continue
        if adjacent and reason == "moved" and added_here[_key(d.text)] > 0:
            run.append(id(d))
            last = d.old_line
            continue
        if len(run) >= MOVED_BLOCK:
            out.update(run)
        run = []
        if d is not None and d.kind == REMOVED and reason == "moved" and added_here[_key(d.text)] > 0:
            run, last = [id(d)], d.old_line
        else:
            last = -2
    return out


def _meaningful(parsed, additions, kept: frozenset[str], dropped: Counter[str]) -> tuple[ChangedLine, ...]:
    """The meaningful deleted lines of ``parsed`` files; the others counted in ``dropped`` by reason."""
    added, added_in = additions
    traced: list[ChangedLine] = []
    for f, language, hunks in parsed:
        old = f.previous_filename or f.filename
        for hunk in hunks:
            lines = list(_classified(hunk, language, added))
            block = _moved_blocks(lines, added_in[f.filename])
            for d, reason in lines:
                if reason == "moved" and added_in[f.filename][_key(d.text)] > 0 and id(d) not in block:
                    # Re-added in the same file: the order of statements changed, which is
                    # behaviour (a call moved before another), not a move of code elsewhere.
                    reason = ""
                if reason and reason not in kept:
                    dropped[reason] += 1
                else:
                    traced.append(ChangedLine(old, d.old_line, d.text, f.filename))
    return tuple(traced)


#: Context lines taken on each side of an insertion, at most (GitHub's patches carry three).
CONTEXT_LINES = 3


def insertion_context(files: Sequence[ChangedFile], *, per_side: int = CONTEXT_LINES) -> tuple[ChangedLine, ...]:
    """The lines around what ``files`` only add: for each run of added lines with no
    deleted line (an insertion) in a file of code (as :func:`trace_plan` picks files)
    and with an added line that is not blank or a comment, the nearest ``per_side``
    meaningful context lines above and below it in the patch, numbered as in the file
    before the pull request. (An added import counts: moving an import into a function
    is how a fix makes it lazy.)

    SZZ cannot blame a fix that only adds lines; variants blame the code around the
    insertion instead (Sahal and Tosun, ESEM 2018: the enclosing block). In Python and
    YAML the lines stay inside the insertion's block: above, up to and including the
    first less indented line (the block's header); below, up to the first less indented
    one. The walk stops at a changed line and at the hunk's edge. On the oracle of
    ``bench/history_links.py`` the pull request that wrote these lines is often not the
    one the fix completes, so :func:`trace_plan` only falls back on them when nothing
    else is blamed, and a link to them must be unanimous.
    """
    out: dict[tuple[str, int], ChangedLine] = {}
    for f in files:
        if f.status == "added":
            continue
        hunks = parse_patch(f.patch)
        kind = kind_of(f.filename, status=f.status, patch=f.patch, changes=f.changes) if hunks else None
        if not hunks or kind in _SKIPPED_KINDS or _is_lock(f.filename):
            continue
        language = language_of(f.filename)
        old = f.previous_filename or f.filename
        nested = language in INDENT_SENSITIVE
        comment = COMMENT_PREFIXES.get(language or "", ())
        for hunk in hunks:
            meaningful = {id(d) for d, reason in _classified(hunk, language, Counter(), context=True) if not reason}
            rows = hunk.lines
            start = 0
            while start < len(rows):
                if rows[start].kind != ADDED:
                    start += 1
                    continue
                end = start
                while end < len(rows) and rows[end].kind == ADDED:
                    end += 1
                if (start and rows[start - 1].kind == REMOVED) or (end < len(rows) and rows[end].kind == REMOVED):
                    start = end  # a replacement, not an insertion: its deleted lines are traced
                    continue
                block = rows[start:end]
                texts = [d.text for d in block if d.text.strip() and not (comment and d.text.strip().startswith(comment))]
                if texts:
                    level = min(len(_indent(t)) for t in texts)
                    for d in _around(rows, start, end, meaningful, per_side, level if nested else None):
                        out.setdefault((old, d.old_line), ChangedLine(old, d.old_line, d.text, f.filename))
                start = end
    return tuple(sorted(out.values(), key=lambda ln: (ln.path, ln.line)))


def _around(rows, start: int, end: int, meaningful: set[int], per_side: int, level: int | None):
    """The meaningful context rows nearest to ``rows[start:end]`` (see :func:`insertion_context`)."""
    # Walked by index: a copy of the rows before and after each insertion made a hunk of
    # 20,000 interleaved lines cost 6 s (this runs on the app's event loop, before the blame).
    above = []
    for i in range(start - 1, -1, -1):
        d = rows[i]
        if d.kind != CONTEXT or len(above) >= per_side:
            break
        outer = level is not None and d.text.strip() and len(_indent(d.text)) < level
        if id(d) in meaningful:
            above.append(d)
        if outer:
            break  # the header of the block the lines are added to: nothing above it
    below = []
    for i in range(end, len(rows)):
        d = rows[i]
        if d.kind != CONTEXT or len(below) >= per_side:
            break
        if level is not None and d.text.strip() and len(_indent(d.text)) < level:
            break  # past the end of the block
        if id(d) in meaningful:
            below.append(d)
    return above + below


def _is_lock(path: str) -> bool:
    name = path.rpartition("/")[2].lower()
    return name.endswith((".lock", "-lock.json", "-lock.yaml")) or name in {"go.sum", "uv.lock", "poetry.lock"}


def _key(text: str) -> str:
    """A line's text for comparison: trimmed, inner runs of whitespace made one space."""
    return " ".join(text.split())  # = re.sub(r"\s+", " ", text.strip()): str.split splits on what \s matches


def _classified(hunk: Hunk, language: str | None, added: Counter[str], *, context: bool = False):
    """Yield ``(removed line, reason or "")`` for the removed lines of ``hunk``; with
    ``context``, for its context lines instead (only blank, comment, import and trivial
    lines have a reason)."""
    comment = COMMENT_PREFIXES.get(language or "", ())
    import_line = _IMPORT.get(language or "")
    block = _IMPORT_BLOCK.get(language or "")
    python = language in ("python", "cython")
    in_import = False
    blocks = _change_blocks(hunk)
    twins, reindented = _whitespace_twins(blocks, language in INDENT_SENSITIVE)
    docstrings = docstring_lines(hunk, REMOVED) if python else set()
    for d in hunk.lines:
        if d.kind == ADDED:
            continue
        text = d.text.strip()
        # The old file's state (import block, docstring) follows its own lines: context and removed.
        reason = ""
        if in_import:
            reason = "import"
            if block and block[1] in text:
                in_import = False
        elif id(d) in docstrings:
            reason = "comment"
        elif not text:
            reason = "blank"
        elif comment and text.startswith(comment):
            reason = "comment"
        elif import_line and import_line.match(text):
            reason = "import"
            if block and block[0].match(text):
                in_import = True
        elif not _ALNUM.search(text) or text in _KEYWORDS:
            reason = "trivial"
        if context:
            if d.kind == CONTEXT:
                yield d, reason
            continue
        if d.kind != REMOVED:
            continue
        if not reason:
            if id(d) in twins:
                reason = "formatting"
            elif id(d) not in reindented and added[_key(d.text)] > 0:
                reason = "moved"
        yield d, reason


def _change_blocks(hunk: Hunk) -> list[tuple[list, list]]:
    """The hunk's runs of removed lines and the added lines right after them."""
    blocks: list[tuple[list, list]] = []
    removed: list = []
    added: list = []
    for d in hunk.lines:
        if d.kind == REMOVED:
            if added:
                blocks.append((removed, added))
                removed, added = [], []
            removed.append(d)
        elif d.kind == ADDED:
            added.append(d)
        elif removed or added:
            blocks.append((removed, added))
            removed, added = [], []
    if removed or added:
        blocks.append((removed, added))
    return blocks


def _whitespace_twins(blocks: list[tuple[list, list]], indent_matters: bool) -> tuple[set[int], set[int]]:
    """``id()`` of removed lines that only changed in whitespace within their change block,
    and (where indentation is meaning) of those that only moved to another indentation level.

    A block whose removed text equals its added text once all whitespace is gone was
    only re-wrapped or re-spaced (a formatter's work), unless, where indentation is
    meaning, its first line moved to another level.
    """
    same: set[int] = set()
    reindented: set[int] = set()
    for removed, added in blocks:
        if not removed or not added:
            continue
        if _bare("".join(d.text for d in removed)) == _bare("".join(d.text for d in added)) and (
            not indent_matters or _indent(removed[0].text) == _indent(added[0].text)
        ):
            same.update(id(d) for d in removed)
            continue
        pool = Counter(_twin_key(d.text, indent_matters) for d in added)
        bare_pool = Counter(_bare(d.text) for d in added) if indent_matters else Counter()
        for d in removed:
            key = _twin_key(d.text, indent_matters)
            if pool[key] > 0:
                pool[key] -= 1
                same.add(id(d))
            elif bare_pool[key[0]] > 0:
                bare_pool[key[0]] -= 1
                # Inside brackets indentation means nothing: an argument or element line
                # re-indented with its call (fresh-o #960, `LLM(...)` moved one level) was
                # only re-wrapped.
                (same if continuation_line(d.text) else reindented).add(id(d))
    return same, reindented


#: A line inside brackets: a keyword argument or an element, ending with a comma, or a
#: closing bracket line.
# Matched against the stripped line: a leading ``\s*`` before ``[^=(…]+`` (which takes spaces
# too) backtracked once per leading space over the whole line (quadratic in a hostile line's indent).
_CONTINUATION = re.compile(r"[)\]}].*|\*{0,2}[\w.]+\s*=[^=].*,|\*{0,2}[^=(\[{:#]+,")


def continuation_line(text: str) -> bool:
    """True for a line that continues a bracketed expression (see :data:`_CONTINUATION`):
    balanced in itself (``x = foo(a,`` opens a statement) and not a statement keyword's."""
    stripped = text.strip()
    if _closes_more(stripped):
        return True  # it closes a bracket opened above: it starts inside brackets (`post_process=x)`)
    if _CONTINUATION.fullmatch(stripped) is None:
        return False
    if stripped[:1] in ")]}":
        return True
    first = stripped.split(None, 1)[0].rstrip(",")
    return first not in _STATEMENT_WORDS and all(stripped.count(a) == stripped.count(b) for a, b in ("()", "[]", "{}"))


def _closes_more(stripped: str) -> bool:
    """True when the line's code (its comment and strings aside) closes more brackets than
    it opens: a line can only do that when it starts inside brackets opened above, where
    indentation means nothing to Python (the last argument line of a re-indented call)."""
    code = code_only(stripped)
    if code[-1:] not in ")]}":
        return False
    return sum(map(code.count, ")]}")) > sum(map(code.count, "([{"))


_STATEMENT_WORDS = frozenset({"return", "yield", "raise", "assert", "del", "import", "from", "global", "nonlocal", "print", "await"})


def _twin_key(text: str, indent_matters: bool) -> tuple[str, str]:
    return _bare(text), _indent(text) if indent_matters else ""


def _bare(text: str) -> str:
    return "".join(text.split())  # = re.sub(r"\s+", "", text)


def _indent(text: str) -> str:
    return text[: len(text) - len(text.lstrip())].expandtabs(4)
