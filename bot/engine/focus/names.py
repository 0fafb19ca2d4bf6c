"""Names a reader can search for: what the description names, what a file brings in, which files a design bullet is about."""

from __future__ import annotations

import ast
import functools
import keyword
import re
from collections import Counter
from collections.abc import Callable, Mapping
from typing import Any

from bot.engine.analysis.model import (
    DiffAnalysis,
    Evidence,
    FileAnalysis,
)
from bot.engine.focus.model import (
    CARRIER_WEIGHT,
    COMMENT_LINE,
    MAX_DESCRIBED_FILES,
    FocusPoint,
)
from bot.engine.analysis.pybehaviour import code_only
from bot.engine.snapshot import PullRequestSnapshot

_LITERALS = frozenset({"True", "False", "None", "true", "false", "null", "none", "self", "this", "cls"})
_SPAN_NAME = re.compile(r"`([^`\n]{3,80})`")
#: Design bullets read per description.
_MAX_DESIGN = 8


def design_points(texts: Mapping[str, str], description: Any, added: Mapping[str, str] | None = None,
                  touched: Mapping[str, str] | None = None) -> list[FocusPoint]:
    """The author's design bullets that name code the diff changes, each on the one file
    it is about, with the bullet as evidence.

    A bullet that names a file (``fsdp_workers.py``, ``verl/a/b.yaml``) goes on that
    file when it changed, and nowhere when it did not (it is about another file).
    Otherwise it goes on the file whose changed lines hold the most of its names, as
    whole identifiers; a tie between files leaves the bullet out rather than guess.
    With ``added`` (path -> the file's added lines, joined: :func:`added_texts`), a
    bullet that is a line of code found only among the removed lines (the old side of a
    diff the description shows) is left out: it is what the pull request replaces.
    ``touched`` (path -> the names of the definitions its changed lines are in) lets a
    bullet that names its file quote the function it changes.
    """
    bullets = getattr(description, "design_points", ())[:_MAX_DESIGN]
    if not bullets:
        return []
    out = []
    for bullet in bullets:
        path, name = _bullet_file(bullet, texts, touched)
        if path and added is not None and _removed_code(bullet, texts.get(path, ""), added.get(path, "")):
            continue
        if path and not _contradicted(bullet, texts.get(path, "")):
            ev = (Evidence(path, new=bullet[:300], source="description"),)
            out.append(FocusPoint(path, name, "focus.design", {"text": bullet}, weight=CARRIER_WEIGHT - 2, evidence=ev))
    return out


def _removed_code(bullet: str, changed: str, added: str) -> bool:
    """True when ``bullet`` is a statement of code (it parses, and calls or assigns) found
    among the file's changed lines but on no added line: only a removed line has it."""
    code = bullet.strip().strip("`").strip()
    if not code or ("(" not in code and "=" not in code):
        return False
    try:
        ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    bare = _SPACES.sub("", code)
    return bare in _SPACES.sub("", changed) and bare not in _SPACES.sub("", added)


_SPACES = re.compile(r"\s+")


def added_texts(analysis: DiffAnalysis, house: set[str]) -> dict[str, str]:
    """The added lines of the files :func:`changed_texts` reads, joined per file."""
    return {
        f.path: "\n".join(f.added_lines[:600])
        for f in analysis.files[:MAX_DESCRIBED_FILES]
        if f.kind in ("source", "config", "build") and f.path not in house and (f.added_lines or f.removed_lines)
    }


#: A code span that sets a value: ``flag: bool = False``, ``flag=False``.
_SPAN_SETTING = re.compile(r"`\s*([A-Za-z_][\w.]*)\s*(?::[^`=]*)?=\s*([^`=][^`]*?)\s*`")


def _contradicted(bullet: str, text: str) -> bool:
    """True when the bullet quotes a setting (``x: bool = False``) that the file's changed
    lines set to something else only (``x: bool = True``): the description is out of date,
    and quoting it would teach the reader the wrong value."""
    for name, value in _SPAN_SETTING.findall(bullet):
        leaf = name.rpartition(".")[2]
        if leaf not in text:
            continue  # the pattern holds the name itself: it finds nothing (and is not compiled)
        found = re.findall(rf"(?<![\w.]){re.escape(leaf)}\s*(?::[^=\n]*)?=\s*([^\s,)#]+)", text)
        if found and value.strip().rstrip(",") not in {v.rstrip(",") for v in found}:
            return True
    return False


#: A match never starts inside a run of name characters (one that could would start with the
#: run, and the longest is taken), so the look-behind changes no match, only saves the retries.
_FILE_NAME = re.compile(r"(?<![\w./-])[\w./-]*\w\.(?:py|pyi|ya?ml|toml|json|cfg|ini|sh|cc|cpp|cu|h|rs|go|js|ts)\b")


_LETTERS = re.compile(r"[A-Za-z]{2,}")
_IDENT = re.compile(r"[A-Za-z_][\w-]{2,}")
#: How much of a design bullet a guide quotes (``bot.engine.render.messages`` cuts params there).
_SHOWN = 120


def _bullet_file(bullet: str, texts: Mapping[str, str], touched: Mapping[str, str] | None = None) -> tuple[str | None, str | None]:
    """``(path, name)`` the bullet is about, or ``(None, None)``; ``touched`` maps a path to the
    names of the definitions its changed lines are in (space-separated)."""
    files = _FILE_NAME.findall(bullet)
    if len(_LETTERS.findall(_FILE_NAME.sub(" ", bullet))) < 3:
        return None, None  # a bare file name (a sub-list's heading) says nothing
    if files:
        hits = [p for p in texts if any(p == f or p.endswith("/" + f.lstrip("./")) for f in files)]
        if len(hits) != 1:
            return None, None
        # The code it quotes must be in that file's change (its changed lines, or the names of
        # the definitions they are in): "if `kv_store.enable`, append …" on a file whose diff has
        # no kv_store describes a design the merged code does not have.
        # Only the part a guide shows is read (a bullet is quoted up to 120 characters).
        quoted = [n.strip() for n in _SPAN_NAME.findall(bullet[:_SHOWN]) if not _FILE_NAME.fullmatch(n.strip())]
        around = texts[hits[0]] + "\n" + (touched or {}).get(hits[0], "")
        found = sum(1 for n in quoted if all(word in around for word in _IDENT.findall(n)))
        if quoted and found * 2 < len(quoted):
            return None, None
        return hits[0], None
    spans = [n.strip().rstrip("()") for n in _SPAN_NAME.findall(bullet)]
    names = spans or [w for w in _WORD.findall(bullet) if CODE_LIKE.search(w)]
    # Literals and keywords (`True`, `None`) are in every file: they say nothing of which one.
    names = list(dict.fromkeys(n for n in names if len(n) >= 4 and n not in _LITERALS and not keyword.iskeyword(n)))
    if not names:
        return None, None
    scores: dict[str, list[str]] = {}
    for path, text in texts.items():
        found = [n for n in names if n in text and _whole(n, text)]
        if found:
            scores[path] = found
    if not scores:
        return None, None
    best = max(len(v) for v in scores.values())
    top = [p for p, v in scores.items() if len(v) == best]
    if len(top) != 1:
        return None, None
    if spans and best < len(names):
        return None, None  # the bullet quotes code this file's change does not hold: it is about other code
    return top[0], scores[top[0]][0]


def _whole(name: str, text: str) -> bool:
    """True when ``name`` is a whole identifier of ``text`` (a dotted name: its last part
    is one and the whole is in the text), not part of a longer word."""
    if not _DOTTED.fullmatch(name):
        return True  # a code expression found as written (``name.rsplit(".", 1)[-1]``)
    word = name.rpartition(".")[2]
    start = text.find(word)
    while start >= 0:
        end = start + len(word)
        if (start == 0 or not _is_word(text[start - 1])) and (end == len(text) or not _is_word(text[end])):
            return True
        start = text.find(word, start + 1)
    return False


def _is_word(ch: str) -> bool:
    return ch == "_" or ch.isalnum()


_DOTTED = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")


def changed_texts(analysis: DiffAnalysis, house: set[str]) -> dict[str, str]:
    """The changed lines of source, config and build files, joined per file."""
    return {
        f.path: "\n".join(f.added_lines[:600] + f.removed_lines[:600])
        for f in analysis.files[:MAX_DESCRIBED_FILES]
        if f.kind in ("source", "config", "build") and f.path not in house and (f.added_lines or f.removed_lines)
    }


def described_files(texts: Mapping[str, str], named: set[str]) -> dict[str, int]:
    """How many identifiers the title or description names appear in the changed lines
    of each source, config or build file (the author's own pointers, checked against
    the diff); files with fewer than two are left out."""
    wanted = sorted(n for n in named if len(n) >= 5 and "/" not in n)[:80]
    if not wanted:
        return {}
    scored = {}
    for path, text in texts.items():
        present = [n for n in wanted if n in text and _whole(n, text)]
        found = [n for n in present if not any(n != m and n in m for m in present)] if len(present) >= 2 else present
        if len(found) >= 2:
            scored[path] = len(found)
    return scored


def short_name(name: str) -> str:
    return name.rpartition(".")[2]


_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:[.\-/][A-Za-z_][A-Za-z0-9_]*)*")
CODE_LIKE = re.compile(r"_|[a-z][A-Z]|\.|\(\)")


def named_in_text(snapshot: PullRequestSnapshot, description: Any = None) -> set[str]:
    """Identifiers the title and description name: snake/Camel/dotted words and ALL_CAPS
    names, each also by its dotted components. The description is read without its
    template's boilerplate when ``description`` (a parsed one) is given."""
    sections = getattr(description, "sections", None)
    body = "\n".join(v for k, v in sections.items() if k != "checklist") if sections else (snapshot.body or "")
    text = f"{snapshot.title}\n{body[:8_000]}"
    out: set[str] = set()
    for token in set(_WORD.findall(text)):
        if len(token) >= 4 and _names_code(token):
            out.add(token)
            if "." in token:
                out.update(p for p in token.split(".") if _names_code(p))
    return out


#: Words remembered by the per-word verdicts below: the same words recur in every
#: title, description and diff of a project, and the bound keeps untrusted text from
#: growing the caches without end.
_WORD_CACHE = 50_000


@functools.lru_cache(maxsize=_WORD_CACHE)
def _names_code(word: str) -> bool:
    """True for a snake_case, CamelCase, dotted or ``name()`` word, or an ALL_CAPS name."""
    # The cheap tests first: a lower-case word holds no CamelCase and no capitals.
    if "_" in word or "." in word:
        return True
    if word.islower():
        return "()" in word
    return bool(CODE_LIKE.search(word) or _CAPS.match(word))


def tested_names(analysis: DiffAnalysis) -> set[str]:
    """Lower-cased words of added test names (``test_save_ckpt_async`` -> ``save_ckpt_async``, ...),
    used to find the functions the tests exercise."""
    out: set[str] = set()
    names = [n for f in analysis.files for n in f.tests_added[:40]][:80]
    for name in names:
        base = short_name(name).lower()
        base = base.removeprefix("test_")
        parts = base.split("_")[:12]
        for i in range(len(parts)):
            for j in range(i + 2, min(len(parts), i + 4) + 1):
                out.add("_".join(parts[i:j]))
            if len(parts[i]) >= 5:
                out.add(parts[i])
    return out


#: ``/?[A-Za-z_][A-Za-z0-9_]*(?:[.\-/][A-Za-z0-9_]+)*|\d+(?:\.\d+)+(?:[.\-]?[A-Za-z]\w*)?`` written to
#: start with a character class (the first character, then the rest by what it was), so
#: that the search skips the characters no token starts with instead of trying each. Never
#: from inside a word: ``a21da4`` is no name of ``@0a21da4``.
_TOKEN = re.compile(
    r"(?<!\w)[/A-Za-z_\d](?:(?<=/)[A-Za-z_][A-Za-z0-9_]*(?:[.\-/][A-Za-z0-9_]+)*|(?<=[A-Za-z_])[A-Za-z0-9_]*(?:[.\-/][A-Za-z0-9_]+)*"
    r"|(?<=\d)\d*(?:\.\d+)+(?:[.\-]?[A-Za-z]\w*)?)"
)
_CAPS = re.compile(r"^[A-Z][A-Z0-9_]{4,}$")
_STOP = frozenset(keyword.kwlist) | {
    "self", "None", "True", "False", "print", "range", "return", "isinstance", "getattr", "setattr", "hasattr",
    "kwargs", "args", "torch", "from", "import", "else", "elif", "raise", "assert", "lambda", "logger",
    "ImportError", "ValueError", "TypeError", "KeyError", "RuntimeError", "AttributeError", "Exception",
}


def introduced_names(f: FileAnalysis, named: set[str] = frozenset(), limit: int = 3) -> tuple[str, ...]:
    """Code-like names (``snake_case``, ``CamelCase``, ``dotted.names``, ``kebab-names``)
    that one replaced line of ``f`` brings in or drops: only when the file's change is
    exactly one removed and one added line, so a name is one of the line's own words
    that differ (``fsdp-vlm`` -> ``megatron-vlm`` in a CI ``needs:`` list). A bigger
    change gives nothing: a name from anywhere in it may sit on an unchanged, moved or
    prose line elsewhere, and the point then says less rather than something untrue.
    Names the title or description use come first. At most ``limit``."""
    if len(f.added_lines) != 1 or len(f.removed_lines) != 1 or f.kind == "docs":
        return ()
    added, removed = f.added_lines[0], f.removed_lines[0]
    if COMMENT_LINE.match(added) or COMMENT_LINE.match(removed) or added.strip() == removed.strip():
        return ()
    plus = _tokens(added, named)
    minus = _tokens(removed, named)
    new = [t for t in plus if t not in minus and t not in removed]
    gone = [t for t in minus if t not in plus and t not in added]
    if not new and not gone:
        return ()
    ranked = sorted(dict.fromkeys(new + gone), key=lambda t: -(t in named))
    touched = set(f.symbols_touched)
    return tuple(t for t in ranked if t not in touched and not _NUMBERISH.match(t))[:limit]


#: Pieces of numbers (``_000`` of ``50_000``) and versions are not names.
_NUMBERISH = re.compile(r"^[_\d.]*\d[_\d.]*$|^_\d")


_GIT_SUFFIX = re.compile(r"\.git$")


def _tokens(text: str, named: set[str] = frozenset()) -> dict[str, int]:
    """Code-like words of ``text`` and how often they occur. A dotted chain
    (``logits.full_tensor``) counts as its parts unless the description names it whole
    (``ast.literal_eval``)."""
    if "://" in text:
        # A URL stands for what it names last: a repository, a file, a page.
        text = _URL.sub(lambda m: " " + _GIT_SUFFIX.sub("", m.group(1)) + " ", text)
    counts: dict[str, int] = {}
    for token, n in Counter(_TOKEN.findall(text)).items():
        if len(token) < 4:
            continue
        if token[0] == "/" and not _starts_a_line(token, text):
            token = token[1:]  # a path inside an argument, not a path of its own
        whole, whole_ok, parts = _forms(token)
        if parts is None or whole in named:
            parts = (whole,) if whole_ok else ()
        for part in parts:
            counts[part] = counts.get(part, 0) + n
    return counts


@functools.lru_cache(maxsize=_WORD_CACHE)
def _forms(token: str) -> tuple[str, bool, tuple[str, ...] | None]:
    """How :func:`_tokens` counts ``token``: ``(word, word is code-like, its code-like
    dotted parts or None)``; the parts count instead of the word unless the title or
    description names the word. A URL-ish token counts as nothing."""
    if "www." in token or token.startswith(("http", "/www")):
        return "", False, ()
    token = token.rstrip("./-").lstrip(".-")
    parts = None
    if "." in token and not _VERSIONISH.search(token):
        parts = tuple(p for p in token.split(".") if _code_like(p))
    return token, _code_like(token), parts


def _starts_a_line(token: str, text: str) -> bool:
    """True when ``token`` begins a line of ``text``, after spaces or tabs only."""
    pos = text.find(token)
    while pos >= 0:
        if not text[text.rfind("\n", 0, pos) + 1 : pos].strip(" \t"):
            return True
        pos = text.find(token, pos + 1)
    return False


_CODEISH = re.compile(r"_|[a-z][A-Z]|\.|\(\)|-|\d|^[A-Z][A-Z0-9_]{4,}$|[A-Z].*[a-z].*[A-Z]")


@functools.lru_cache(maxsize=_WORD_CACHE)
def _code_like(word: str) -> bool:
    """True for a word that reads as code: snake_case, CamelCase, dotted, kebab, with digits, ALL_CAPS."""
    if len(word) < 4 or word in _STOP:
        return False
    if "_" in word or "." in word or "-" in word:
        return True
    if word.islower() and word.isalpha():
        return False  # no capital, digit or bracket for the other tests to find
    return _CODEISH.search(word) is not None


_URL = re.compile(r"(?:https?|git|ssh)://[^\s\"'`<>()]*?([^/\s\"'`<>()#?]+)/?(?=[\s\"'`<>()#?]|$)")
_VERSIONISH = re.compile(r"^\d|\.\d")


def uses_limit(points: int) -> int:
    """Names a point may add: four, and more when there are few points (a one-file fix
    has room to say more about its one file)."""
    return max(4, 9 - points)


_USES_KEYS = {"focus.largest": "focus.largest_uses", "focus.largest_symbols": "focus.largest_symbols_uses"}
_NEW_KEYS = {"focus.largest": "focus.largest_new", "focus.largest_symbols": "focus.largest_symbols_new", "focus.tests": "focus.tests_new"}
_GONE_KEYS = {"focus.largest": "focus.largest_gone", "focus.largest_symbols": "focus.largest_symbols_gone"}


def with_uses(point: FocusPoint, f: FileAnalysis | None, named: set[str], shown: set[str] = frozenset(), limit: int = 4,
              removed_text: Callable[[], str] | None = None, added_text: Callable[[], str] | None = None) -> FocusPoint:
    """A "largest change" point names what its lines changed: on a one-line change the
    words that line changed (:func:`introduced_names`); on a bigger change the names its
    added code uses that no removed line of the pull request has, else the names its
    removed code used that no added line has (:func:`changed_names`; ``removed_text()`` and
    ``added_text()`` give the pull request's removed and added lines). A tests point names
    the names its added tests use that no removed line has. Names in ``shown`` are left out."""
    if f is None or point.text or point.key not in (*_USES_KEYS, "focus.tests"):
        return point
    if point.key in _USES_KEYS:
        if f.status == "added":
            # A new file: what it is and what it defines (or, defining nothing, the names
            # its code uses), never "+70/−0 lines; ... which no removed line had": nothing
            # of it was removed.
            if point.params.get("names"):
                return point._replace(key="focus.new_file_defines")
            new = tuple(n for n in changed_names(f, "added", named, removed_text, limit + len(shown)) if n not in shown)[:limit] if removed_text else ()
            return point._replace(key="focus.new_file_uses", params={**point.params, "uses": new}) if new else point._replace(key="focus.new_file")
        uses = tuple(n for n in introduced_names(f, named, limit + len(shown)) if n not in shown)[:limit]
        if uses:
            return point._replace(key=_USES_KEYS[point.key], params={**point.params, "uses": uses})
    if removed_text is not None:
        new = tuple(n for n in changed_names(f, "added", named, removed_text, limit + len(shown)) if n not in shown)[:limit]
        if new:
            return point._replace(key=_NEW_KEYS[point.key], params={**point.params, "uses": new})
    if added_text is not None and point.key in _GONE_KEYS:
        gone = tuple(n for n in changed_names(f, "removed", named, added_text, limit + len(shown)) if n not in shown)[:limit]
        if gone:
            return point._replace(key=_GONE_KEYS[point.key], params={**point.params, "uses": gone})
    return point


#: A Python name, dotted or not, each part at least two characters (no ``w.r.t``, no ``e.g``).
_PY_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]+(?:\.[A-Za-z_][A-Za-z0-9_]+)*$")
#: Four plain words in a row: a line of a docstring or message whose opening quotes sit
#: on an unchanged line, not code.
_PROSE = re.compile(r"(?:^|\s)[A-Za-z]+(?:\s+[A-Za-z]+,?){3}(?:\s|[.,:;]|$)")
#: A statement that starts with a keyword reads like words ("if a and not b") but is code.
_KEYWORD_START = re.compile(r"^\s*(?:" + "|".join(keyword.kwlist) + r")\b")
#: What :data:`_KEYWORD_START` and :data:`COMMENT_LINE` can find first after the indent: a
#: line starting with anything else is tested without a regex call.
_KEYWORD_INITIALS = frozenset(k[0] for k in keyword.kwlist)
_COMMENT_STARTS = frozenset("#/*-<;")
#: A string literal whose whole content is one name (``"gate_up_proj"``): a name the code uses.
_NAME_STRING = re.compile(r"([\"'])([A-Za-z_][A-Za-z0-9_.]*)\1")
#: Lines of one side of one file read for names (a 3,000-file diff has no time for more).
_MAX_NEW_NAME_LINES = 300
#: File kinds whose lines are code or configuration (docs are prose; generated files say nothing).
_NAMED_KINDS = ("source", "config", "build", "example", "ci", "test")


def new_code_names(f: FileAnalysis, named: set[str], removed_text: Callable[[], str], limit: int = 4) -> tuple[str, ...]:
    """The names the added lines of ``f`` use that no removed line has (:func:`changed_names`)."""
    return changed_names(f, "added", named, removed_text, limit)


def changed_names(f: FileAnalysis, side: str, named: set[str], other_text: Callable[[], str], limit: int = 4) -> tuple[str, ...]:
    """Code-like names (``snake_case``, ``CamelCase``, ``CONSTANTS``, ``dotted.names``, and in
    other languages than Python ``kebab-names`` and paths) on the ``side`` (``"added"`` or
    ``"removed"``) lines of ``f`` that appear on no line of the other side of the pull
    request (``other_text()``), so a moved block names nothing. Comments never count; in
    Python neither do docstrings and strings, except a string that is one name
    (``"gate_up_proj"``). What it states is exactly that: these lines use the names and the
    other side does not. Names the title or description use first, then the most used. At most ``limit``."""
    lines = f.added_lines if side == "added" else f.removed_lines
    if f.kind not in _NAMED_KINDS or not lines:
        return ()
    python = f.language == "python"
    code: list[str] = []
    in_doc = False
    for line in lines[:_MAX_NEW_NAME_LINES]:
        if line.lstrip()[:1] in _COMMENT_STARTS and COMMENT_LINE.match(line):
            continue
        if not python:
            code.append(line)
            continue
        quotes = line.count('"""') + line.count("'''")
        if in_doc or quotes:
            # Inside or at the edge of a docstring: prose, not code.
            if quotes % 2:
                in_doc = not in_doc
            continue
        text = code_only(line) + " " + (" ".join(m.group(2) for m in _NAME_STRING.finditer(line)) if "\"" in line or "'" in line else "")
        if (text.lstrip()[:1] in _KEYWORD_INITIALS and _KEYWORD_START.match(text)) or not _PROSE.search(text):
            code.append(text)
    if not code:
        return ()
    counts = _tokens("\n".join(code), named)
    other = other_text()
    touched = set(f.symbols_touched)
    found = [t for t in counts if t not in _STOP and t not in touched and (_PY_NAME.match(t) or not python)
             and _code_like(t) and not _NUMBERISH.match(t) and t not in other]
    found.sort(key=lambda t: (-(t in named), -counts[t]))
    return tuple(found[:limit])
