"""Definitions touched in files that are not Python: C/C++/CUDA, Go, Rust, JavaScript,
TypeScript, shell, Java/Kotlin/C#.

Two sources, both line-based: the hunk header's section text (git's "function name"
for the hunk, usually the enclosing function) and definition lines among the added and
removed lines (``func``, ``fn``, ``function``, ``class``, ``name() {``...). Names are
not qualified by enclosing blocks, except Go methods (``Server.Start``) and C++
``Class::method`` definitions, whose line says it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from bot.engine.analysis.model import Definition
from bot.engine.analysis.patch import ADDED, REMOVED, Hunk

_Matcher = tuple[re.Pattern[str], str]

_GO = (
    (re.compile(r"func\s+\(\s*\w*\s*\*?\s*([A-Za-z_]\w*)(?:\[[^\]]*\])?\s*\)\s*([A-Za-z_]\w*)"), "method"),
    (re.compile(r"func\s+([A-Za-z_]\w*)"), "function"),
    (re.compile(r"type\s+([A-Za-z_]\w*)\s+(?:struct|interface)\b"), "type"),
)
_RUST = (
    (
        re.compile(
            r"(?:pub(?:\([^)]*\))?\s+)?(?:default\s+)?(?:const\s+)?(?:async\s+)?(?:unsafe\s+)?"
            r"(?:extern\s+\"[^\"]*\"\s+)?fn\s+([A-Za-z_]\w*)"
        ),
        "function",
    ),
    (re.compile(r"(?:pub(?:\([^)]*\))?\s+)?(?:struct|enum|trait|union)\s+([A-Za-z_]\w*)"), "type"),
    (re.compile(r"(?:pub(?:\([^)]*\))?\s+)?mod\s+([A-Za-z_]\w*)\s*\{"), "module"),
    (re.compile(r"impl(?:<[^>]*>)?\s+(?:[\w:]+(?:<[^>]*>)?\s+for\s+)?([\w:]+)"), "impl"),
)
_JS = (
    (re.compile(r"(?:export\s+)?(?:default\s+)?(?:async\s+)?function\s*\*?\s*([A-Za-z_$][\w$]*)"), "function"),
    (re.compile(r"(?:export\s+)?(?:default\s+)?(?:abstract\s+)?class\s+([A-Za-z_$][\w$]*)"), "class"),
    (re.compile(r"(?:export\s+)?(?:interface|enum)\s+([A-Za-z_$][\w$]*)"), "type"),
    (re.compile(r"(?:export\s+)?type\s+([A-Za-z_$][\w$]*)\s*(?:<[^>]*>)?\s*="), "type"),
    (
        re.compile(
            r"(?:export\s+)?(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*(?::[^=]+)?=\s*(?:async\s+)?"
            r"(?:function\b|\([^)]*\)\s*(?::[^=]+)?=>|[A-Za-z_$][\w$]*\s*=>)"
        ),
        "function",
    ),
)
_C_KEYWORDS = frozenset("if for while switch return sizeof else do case catch new delete throw".split())
_C = (
    (re.compile(r"(?:template\s*<[^>]*>\s*)?(?:class|struct|namespace|union|enum(?:\s+class)?)\s+([A-Za-z_]\w*)\s*(?:[:{]|$)"), "class"),
    (
        re.compile(r"(?:[\w:<>,~\[\]]+[\s*&]+)*?((?:[A-Za-z_]\w*::)*~?[A-Za-z_]\w*)\s*\((?!\s*\*)[^;]*$"),
        "function",
    ),
)
_SHELL = (
    (re.compile(r"function\s+([A-Za-z_][\w:.-]*)"), "function"),
    (re.compile(r"([A-Za-z_][\w:.-]*)\s*\(\)\s*(?:\{|$)"), "function"),
)
_JAVA = (
    (re.compile(r"(?:(?:public|private|protected|internal|abstract|final|static|sealed|data|open)\s+)*(?:class|interface|enum|object|record)\s+([A-Za-z_]\w*)"), "class"),
    (re.compile(r"(?:(?:public|private|protected|internal|override|suspend|inline|open)\s+)*fun\s+(?:<[^>]*>\s*)?(?:[\w.]+\.)?([A-Za-z_]\w*)"), "function"),
    (
        re.compile(r"(?:(?:public|private|protected|static|final|abstract|synchronized|native)\s+)+[\w<>\[\],.?\s]+?\s+([A-Za-z_]\w*)\s*\([^;]*$"),
        "method",
    ),
)

_BY_LANGUAGE: dict[str, tuple[_Matcher, ...]] = {
    "go": _GO,
    "rust": _RUST,
    "javascript": _JS,
    "typescript": _JS,
    "c": _C,
    "cpp": _C,
    "cuda": _C,
    "shell": _SHELL,
    "java": _JAVA,
    "kotlin": _JAVA,
    "csharp": _JAVA,
}

#: Cheap substring tests: a line containing none of these cannot be a definition line.
_HINTS: dict[str, tuple[str, ...]] = {
    "go": ("func ", "type "),
    "rust": ("fn ", "struct ", "enum ", "trait ", "impl", "mod ", "union "),
    "javascript": ("function", "class ", "=>", "interface ", "enum ", "type "),
    "typescript": ("function", "class ", "=>", "interface ", "enum ", "type "),
    "c": ("(", "class ", "struct ", "namespace ", "enum ", "union "),
    "cpp": ("(", "class ", "struct ", "namespace ", "enum ", "union "),
    "cuda": ("(", "class ", "struct ", "namespace ", "enum ", "union "),
    "shell": ("()", "function "),
    "java": ("(", "class ", "interface ", "enum ", "record ", "object "),
    "kotlin": ("fun ", "class ", "interface ", "object "),
    "csharp": ("(", "class ", "interface ", "enum ", "record "),
}

#: Languages whose definitions start at column 0 (indented lines are statements or members).
_TOP_LEVEL_ONLY = frozenset({"c", "cpp", "cuda"})

#: Longer lines are minified or data; skipping them keeps the regexes linear in practice.
_MAX_LINE = 400

_JS_TEST = re.compile(r"(?:it|test)(?:\.only|\.skip|\.each\([^)]*\))?\s*\(\s*(['\"`])(.+?)\1")


@dataclass(slots=True, unsafe_hash=True)  # read-only by convention: see bot.engine.analysis.model
class SymbolFacts:
    """What :func:`analyse_symbols` finds: touched names and definitions on each side."""

    symbols_touched: tuple[str, ...] = ()
    definitions_added: tuple[Definition, ...] = ()
    definitions_removed: tuple[Definition, ...] = ()
    definitions_modified: tuple[Definition, ...] = ()
    tests_added: tuple[str, ...] = ()


def supports(language: str | None) -> bool:
    """True when :func:`analyse_symbols` knows the definition syntax of ``language``."""
    return language in _BY_LANGUAGE


def definition_in(line: str, language: str) -> tuple[str, str] | None:
    """``(name, kind)`` when ``line`` defines something in ``language``, else ``None``.

    Go methods are named ``Type.Method``; kinds are ``function``, ``method``,
    ``class``, ``type``, ``module`` or ``impl``.
    """
    matchers = _BY_LANGUAGE.get(language)
    if matchers is None:
        return None
    stripped = line.lstrip()
    if not stripped or len(stripped) > _MAX_LINE or not any(h in stripped for h in _HINTS[language]):
        return None
    if language in _TOP_LEVEL_ONLY and len(line) != len(stripped):
        return None
    if stripped.startswith(("//", "#", "/*", "*")):
        return None
    for regex, kind in matchers:
        m = regex.match(stripped)
        if m is None:
            continue
        if kind == "method" and language == "go":
            return f"{m.group(1)}.{m.group(2)}", kind
        name = m.group(1)
        if name.rsplit("::", 1)[-1] in _C_KEYWORDS:
            return None
        return name, kind
    return None


def analyse_symbols(hunks: Iterable[Hunk], language: str) -> SymbolFacts:
    """Touched symbols and definitions added/removed/modified in one file's hunks.

    ``language`` is a :func:`bot.engine.analysis.kinds.language_of` value; unsupported languages
    give empty facts. A definition on both sides (new signature, moved) is modified.
    Tests added are Go ``func Test*`` and JavaScript/TypeScript ``it(...)``/``test(...)``
    titles. Never raises.
    """
    if language not in _BY_LANGUAGE:
        return SymbolFacts()
    touched: dict[str, None] = {}
    old_defs: dict[str, Definition] = {}
    new_defs: dict[str, Definition] = {}
    js_tests: dict[str, None] = {}
    js = language in ("javascript", "typescript")
    for hunk in hunks:
        found = definition_in(hunk.section, language) if hunk.section else None
        if found is not None:
            touched[found[0]] = None
        for line in hunk.lines:
            if line.kind != ADDED and line.kind != REMOVED:
                continue
            found = definition_in(line.text, language)
            if js and line.kind == ADDED and ("it" in line.text or "test" in line.text):
                m = _JS_TEST.match(line.text.lstrip())
                if m is not None:
                    js_tests[m.group(2)] = None
            if found is None:
                continue
            name, kind = found
            touched[name] = None
            if line.kind == ADDED:
                new_defs.setdefault(name, Definition(name, kind, line.new_line))
            else:
                old_defs.setdefault(name, Definition(name, kind, line.old_line))
    added = tuple(d for n, d in new_defs.items() if n not in old_defs)
    tests = tuple(d.name for d in added if language == "go" and d.name.startswith("Test")) + tuple(js_tests)
    return SymbolFacts(
        symbols_touched=tuple(touched),
        definitions_added=added,
        definitions_removed=tuple(d for n, d in old_defs.items() if n not in new_defs),
        definitions_modified=tuple(d for n, d in new_defs.items() if n in old_defs),
        tests_added=tests,
    )
