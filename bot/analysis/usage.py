"""Whether new definitions are used in the same pull request, and what a diff is about as a whole.

* :func:`called_new_symbols` -- for each public function or class a pull request adds
  (outside tests), whether the diff's added lines call or register it: ``name(`` in
  another file or later in its own file, a decorator ``@name``, the name as a string
  (``__all__`` entries, registry keys), the name as a value in a mapping or assignment
  (``{"x": name}``), or the definition itself decorated with a ``@...register...``
  decorator. A new symbol that nothing in the diff reaches is not, by this evidence,
  an entry point.
* :func:`content_kind` -- ``"test"``, ``"docs"``, ``"ci"`` or ``"deps"`` when every
  changed file is of that one sort, else ``""``.

Both are computed on demand from a :class:`~bot.analysis.model.DiffAnalysis` (they
read its added lines), so :func:`bot.analysis.analyse` does not pay for them.
"""

from __future__ import annotations

import posixpath
import re
import string
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # annotations only: bot.analysis.model imports this module in its properties
    from bot.analysis.model import DiffAnalysis

_WORD = frozenset(string.ascii_letters + string.digits + "_")
_SPLIT = bytes.maketrans(
    bytes(c for c in range(128) if chr(c) not in _WORD), b" " * sum(1 for c in range(128) if chr(c) not in _WORD)
)
_CALLER_KINDS = ("source", "test", "example", "config", "build", "ci")
_MIN_NAME = 3

_DEPENDENCY_NAMES = frozenset(
    {"pyproject.toml", "setup.py", "setup.cfg", "package.json", "go.mod", "go.sum", "cargo.toml", "pipfile",
     "uv.lock", "poetry.lock", "pdm.lock", "cargo.lock", "package-lock.json", "npm-shrinkwrap.json", "yarn.lock",
     "pipfile.lock", "pnpm-lock.yaml"}
)  # fmt: skip


def _tokens(text: str) -> set[bytes]:
    return set(text.encode("utf-8", "replace").translate(_SPLIT).split())


def _used(text: str, name: str, own: bool) -> bool:
    n = re.escape(name)
    pattern = rf"(?<!def )(?<!class )(?<![\w.])(?:[\w.]*\.)?{n}\s*\(|(?<![\w.])\w+\.{n}\s*\(|@{n}\b|[\"']{n}[\"']|[:=]\s*{n}\s*(?:[,}})\]]|$)"
    if re.search(pattern, text, re.M) is not None:
        return True
    if own and "regist" in text:
        decorated = rf"@[\w.]*regist\w*[^\n]*\n(?:[ \t]*@[^\n]*\n)*[ \t]*(?:async\s+)?(?:def|class)\s+{n}\b"
        return re.search(decorated, text) is not None
    return False


def called_new_symbols(analysis: DiffAnalysis) -> frozenset[str]:
    """Qualified names of added public definitions (not in tests) that the diff's added lines call or register.

    Reads the added lines of source, test, example, config, build and CI files (not
    docs). Never raises.
    """
    candidates: dict[str, list[tuple[str, str]]] = {}
    for f in analysis.files:
        if f.kind not in ("source", "example", "build"):
            continue
        for d in f.definitions_added:
            short = d.name.rpartition(".")[2]
            if d.public and len(short) >= _MIN_NAME and not short.startswith("__"):
                candidates.setdefault(short, []).append((f.path, d.name))
    if not candidates:
        return frozenset()
    wanted = {name.encode(): name for name in candidates}
    found: set[str] = set()
    for f in analysis.files:
        if f.kind not in _CALLER_KINDS or not f.added_lines:
            continue
        text = "\n".join(f.added_lines)
        hits = _tokens(text).intersection(wanted)
        for raw in hits:
            name = wanted[raw]
            for path, qualified in candidates[name]:
                if qualified not in found and _used(text, name, path == f.path):
                    found.add(qualified)
    return frozenset(found)


def _dependency_file(path: str) -> bool:
    name = posixpath.basename(path).lower()
    return (
        name in _DEPENDENCY_NAMES
        or (name.startswith(("requirements", "constraints")) and name.endswith((".txt", ".in")))
        or (name.startswith("environment") and name.endswith((".yml", ".yaml")))
        or (name.startswith("pylock.") and name.endswith(".toml"))
    )


def content_kind(analysis: DiffAnalysis) -> str:
    """``"test"``, ``"docs"``, ``"ci"`` or ``"deps"`` when every changed file is of that sort, else ``""``.

    ``test``/``docs``/``ci`` follow the file kinds; ``deps`` means every file is a
    dependency manifest or lock file (``requirements*.txt``, ``pyproject.toml``,
    ``uv.lock``...) and at least one dependency changed. An empty diff gives ``""``.
    """
    files = analysis.files
    if not files:
        return ""
    kinds = {f.kind for f in files}
    if len(kinds) == 1 and next(iter(kinds)) in ("test", "docs", "ci"):
        return next(iter(kinds))
    if all(_dependency_file(f.path) for f in files) and any(f.dependency_changes for f in files):
        return "deps"
    return ""
