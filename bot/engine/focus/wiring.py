"""Which new definitions a pull request wires in: called, named or registered by its other
added code (:func:`entry_points`), for the focus points that say so. Pure."""

from __future__ import annotations

import re
from collections import Counter

from bot.engine.analysis.model import DiffAnalysis
from bot.engine.focus.model import MAX_DESCRIBED_FILES
from bot.engine.focus.names import short_name

def entry_points(analysis: DiffAnalysis, called: set[str]) -> dict[str, tuple[str, str]]:
    """Of the new symbols ``called``, those the change wires in, each with how:
    ``("call", path)`` when the added lines of another file ``path`` call it (or apply it
    as a decorator), ``("name", path)`` when they only quote its name, ``("register", "@decorator")`` when a ``@...register...``
    decorator registers it where it is defined. A helper only its own new file calls is
    structure, left out."""
    if not called:
        return {}
    out: dict[str, tuple[str, str]] = {}
    home = {d.name: f.path for f in analysis.files for d in f.definitions_added if d.name in called}
    # A short name several new definitions share ("get_model_parallel_group" added to four
    # engine classes) cannot be traced from a call: a call in one of their files is another's.
    defined = Counter(short_name(d.name) for f in analysis.files[:MAX_DESCRIBED_FILES] for d in f.definitions_added)
    everything = "\n".join([line for f in analysis.files[:MAX_DESCRIBED_FILES] if f.kind not in ("docs", "generated", "binary") for line in f.added_lines])
    for name in sorted(called):
        short = short_name(name)
        if len(short) < 6 or short in _GENERIC_NAMES or everything.count(short) < 2 or defined[short] > 1:
            continue  # `main(` in another file is more likely another `main`; one mention is the definition
        register = None  # compiled only for a file that registers something: most names have none
        for f in analysis.files[:MAX_DESCRIBED_FILES]:
            if f.kind in ("docs", "generated", "binary") or not f.added_lines:
                continue
            if f.path != home.get(name):
                lines = [line for line in f.added_lines if short in line]
                if not lines:
                    continue
                how = max((_mentions(line, short) for line in lines), key=("", "name", "call").index)
                if how:
                    out[name] = (how, f.path)
                    break
            else:
                text = "\n".join(f.added_lines)
                if "regist" not in text:
                    continue
                if register is None:
                    register = re.compile(rf"(@[\w.]*regist\w*)[^\n]*\n(?:[ \t]*@[^\n]*\n)*[ \t]*(?:async\s+)?(?:def|class)\s+{re.escape(short)}\b")
                found = register.search(text)
                if found:
                    out[name] = ("register", found.group(1))
                    break
    return out


def _is_word(ch: str) -> bool:
    """True for what a regex's ``\\w`` matches."""
    return ch.isalnum() or ch == "_"


def _mentions(line: str, short: str) -> str:
    """``"call"`` when ``line`` calls ``short`` (``short(``, ``obj.short (``, not
    ``other_short(``) or applies it as a decorator (``@short``), ``"name"`` when it only
    quotes it (``"short"``), else ``""``: what the regex
    ``(?<![\\w.])(?:[\\w.]*\\.)?short\\s*\\(|["']short["']|@short\\b`` finds, without
    compiling one per name."""
    quoted = ""
    size = len(short)
    at = line.find(short)
    while at >= 0:
        before = line[at - 1] if at else ""
        end = at + size
        after = line[end : end + 1]
        if not (before and _is_word(before)) and line[end:].lstrip().startswith("("):
            return "call"
        if before and before in "\"'" and after and after in "\"'":
            quoted = "name"
        if before == "@" and _is_word(short[-1]) != bool(after and _is_word(after)):
            return "call"
        at = line.find(short, at + 1)
    return quoted


#: Names too common for a call in another file to be a call of *this* definition.
_GENERIC_NAMES = frozenset({"main", "run", "setup", "build", "apply", "create", "forward", "update", "process", "execute", "start", "launch", "handler", "wrapper", "helper", "compute"})


