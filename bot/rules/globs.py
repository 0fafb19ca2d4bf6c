"""File globs, matched fast against thousands of changed files.

Globs follow ``wcmatch.glob`` with ``GLOBSTAR | DOTGLOB | BRACE``: ``*`` and ``?``
stay inside one path segment, ``**`` spans any number of folders, dot-folders such
as ``.github/`` are matched like any other, and ``{a,b}`` expands. Paths are the
repository-relative names GitHub gives in "List pull requests files" (a renamed
file matches by its new name). Matching is case-sensitive.

Speed matters: a 3000-file pull request meets every glob of every rule. Each glob
is brace-expanded and sorted into a shape:

* a literal path compares for equality;
* ``DIR/**`` is a prefix test and ``**/*.EXT`` or ``**/NAME`` a suffix test;
* anything else runs wcmatch's regex, but only on files that share the glob's
  literal prefix (found by bisecting the sorted paths) and literal suffix.

:class:`FileIndex` caches each glob's result for one pull request, so rules that
share a glob pay for it once.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

import bracex
from wcmatch import glob as wcglob

#: wcmatch flags every rule glob is matched with.
GLOB_FLAGS = wcglob.GLOBSTAR | wcglob.DOTGLOB | wcglob.BRACE

_SPECIAL = frozenset("*?[\\")
_BRACE_LIMIT = 256


class GlobProblem(ValueError):
    """Raised by :func:`compile_glob` for a pattern prguide cannot use."""


@dataclass(frozen=True, slots=True)
class _Shape:
    kind: str  # "exact", "prefix", "suffix", "name", "all", "regex"
    text: str = ""
    prefix: str = ""
    suffix: str = ""
    regex: re.Pattern | None = None

    def test(self, path: str) -> bool:
        if self.kind == "exact":
            return path == self.text
        if self.kind == "prefix":
            return path.startswith(self.text)
        if self.kind == "suffix":
            return path.endswith(self.text)
        if self.kind == "name":
            return path == self.text or path.endswith("/" + self.text)
        if self.kind == "all":
            return True
        return bool(path.startswith(self.prefix) and path.endswith(self.suffix) and self.regex.fullmatch(path))


@dataclass(frozen=True, slots=True)
class Glob:
    """One glob as written in a rule file, compiled into its brace-expanded shapes."""

    pattern: str
    shapes: tuple[_Shape, ...]


def compile_glob(pattern: object) -> Glob:
    """Compile one glob; raises :class:`GlobProblem` for a non-string, empty, absolute or invalid pattern."""
    if not isinstance(pattern, str):
        raise GlobProblem(f"expected a glob string, got {type(pattern).__name__}")
    if not pattern.strip():
        raise GlobProblem("empty glob")
    if pattern.startswith("/"):
        raise GlobProblem(f"glob {pattern!r} starts with '/'; globs are relative to the repository root, write {pattern.lstrip('/')!r}")
    if pattern.startswith("!"):
        raise GlobProblem(f"glob {pattern!r} starts with '!'; list files to leave out under 'exclude:' instead")
    try:
        expanded = bracex.expand(pattern, limit=_BRACE_LIMIT)
    except (ValueError, RuntimeError) as exc:
        raise GlobProblem(f"glob {pattern!r}: {exc}") from None
    shapes = []
    for one in dict.fromkeys(expanded):
        try:
            shapes.append(_shape(one))
        except (ValueError, re.error) as exc:
            raise GlobProblem(f"invalid glob {pattern!r}: {exc}") from None
    return Glob(pattern, tuple(shapes))


def _is_literal(text: str) -> bool:
    return not any(c in _SPECIAL for c in text)


def _shape(pattern: str) -> _Shape:
    if _is_literal(pattern):
        return _Shape("exact", pattern)
    if pattern in ("**", "**/*"):
        return _Shape("all")
    if pattern.endswith("/**") and _is_literal(pattern[:-3]) and pattern[:-3]:
        return _Shape("prefix", pattern[:-2])
    if pattern.startswith("**/"):
        rest = pattern[3:]
        if rest.startswith("*") and _is_literal(rest[1:]) and "/" not in rest[1:] and rest[1:]:
            return _Shape("suffix", rest[1:])
        if _is_literal(rest) and "/" not in rest and rest:
            return _Shape("name", rest)
    include, _ = wcglob.translate(pattern, flags=GLOB_FLAGS)
    regex = re.compile("|".join(f"(?:{r})" for r in include))
    return _Shape("regex", pattern, prefix=_literal_prefix(pattern), suffix=_literal_suffix(pattern), regex=regex)


def _literal_prefix(pattern: str) -> str:
    """Literal text every match starts with (a trailing '/' dropped: ``a/**`` may need none)."""
    i = 0
    while i < len(pattern) and pattern[i] not in _SPECIAL:
        i += 1
    return pattern[:i].rstrip("/")


def _literal_suffix(pattern: str) -> str:
    """Literal text every match ends with (a leading '/' dropped: ``**/b`` matches ``b``)."""
    i = len(pattern)
    while i > 0 and pattern[i - 1] not in _SPECIAL and pattern[i - 1] != "]":
        i -= 1
    return pattern[i:].lstrip("/")


@dataclass
class FileIndex:
    """The changed files of one pull request, indexed for glob matching.

    ``paths`` keeps GitHub's order; results are sets of positions in it. Results are
    cached per glob text for the life of the index (one evaluation).
    """

    paths: Sequence[str]
    _sorted: list[str] = field(default_factory=list, repr=False)
    _order: list[int] = field(default_factory=list, repr=False)
    _cache: dict[str, frozenset[int]] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        order = sorted(range(len(self.paths)), key=self.paths.__getitem__)
        self._order = order
        self._sorted = [self.paths[i] for i in order]

    def match(self, glob: Glob) -> frozenset[int]:
        """Positions of the files ``glob`` matches."""
        hit = self._cache.get(glob.pattern)
        if hit is None:
            found: set[int] = set()
            for shape in glob.shapes:
                found.update(self._match_shape(shape))
            hit = self._cache[glob.pattern] = frozenset(found)
        return hit

    def _match_shape(self, shape: _Shape) -> list[int]:
        if shape.kind == "all":
            return list(range(len(self.paths)))
        if shape.kind == "exact":
            return self._range(shape.text, exact=True)
        if shape.kind == "prefix":
            return self._range(shape.text)
        if shape.kind == "regex" and shape.prefix:
            candidates = self._range(shape.prefix)
            return [i for i in candidates if shape.test(self.paths[i])]
        test = shape.test
        return [i for i, p in enumerate(self.paths) if test(p)]

    def _range(self, prefix: str, *, exact: bool = False) -> list[int]:
        lo = bisect.bisect_left(self._sorted, prefix)
        if exact:
            hi = bisect.bisect_right(self._sorted, prefix, lo)
        else:
            hi = bisect.bisect_left(self._sorted, prefix + "\U0010ffff", lo)
        return self._order[lo:hi]
