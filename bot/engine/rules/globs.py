"""File globs, matched fast against thousands of changed files.

Globs follow ``wcmatch.glob`` with ``GLOBSTAR | DOTGLOB | BRACE``: ``*`` and ``?``
stay inside one path segment, ``**`` spans any number of folders, dot-folders such
as ``.github/`` are matched like any other, and ``{a,b}`` expands. Paths are the
repository-relative names GitHub gives in "List pull requests files" (a renamed
file matches by its new name). Matching is case-sensitive.

Speed matters: a 3000-file pull request meets every glob of every rule. Each glob
is brace-expanded and sorted into a shape:

* a literal path compares for equality;
* ``DIR/**`` is a prefix test, ``**/*.EXT`` or ``**/NAME`` a suffix test and
  ``**/DIR/**`` a folder-name test;
* anything else runs wcmatch's regex, but only on files that share the glob's
  literal prefix (found by bisecting the sorted paths) and literal suffix.

:class:`FileIndex` caches each glob's result for one pull request, so rules that
share a glob pay for it once.
"""

from __future__ import annotations

import bisect
import itertools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import bracex
from wcmatch import glob as wcglob

#: wcmatch flags every rule glob is matched with.
GLOB_FLAGS = wcglob.GLOBSTAR | wcglob.DOTGLOB | wcglob.BRACE

_SPECIAL = frozenset("*?[\\")
_BRACE_LIMIT = 256
#: What a glob matching no file gives (shared, so the many misses of a pull request allocate nothing).
_EMPTY: frozenset[int] = frozenset()
#: Paths a :class:`GlobTable` remembers the answer for (then it starts over).
_KNOWN_PATHS = 8192
#: Below this many files sharing a glob's literal prefix, testing them all beats a text scan.
_FEW = 64


class GlobProblem(ValueError):
    """Raised by :func:`compile_glob` for a pattern prguide cannot use."""


@dataclass(frozen=True, slots=True)
class _Shape:
    kind: str  # "exact", "prefix", "suffix", "name", "folder", "all", "regex"
    text: str = ""
    prefix: str = ""
    suffix: str = ""
    pieces: tuple[str, ...] = ()
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
        if self.kind == "folder":
            return path.startswith(self.text + "/") or f"/{self.text}/" in path
        return bool(
            path.startswith(self.prefix)
            and path.endswith(self.suffix)
            and all(p in path for p in self.pieces)
            and self.regex.fullmatch(path)
        )


@dataclass(frozen=True, slots=True)
class Glob:
    """One glob as written in a rule file, compiled into its brace-expanded shapes."""

    pattern: str
    shapes: tuple[_Shape, ...]


def compile_glob(pattern: object) -> Glob:
    """Compile one glob; raises :class:`GlobProblem` for a non-string, empty, absolute or invalid pattern,
    or one no pull request file can match (``./docs/**``, ``docs/[a-``, ``docs/[z-a]``: see :func:`_never_matches`)."""
    if not isinstance(pattern, str):
        raise GlobProblem(f"expected a glob string, got {type(pattern).__name__}")
    if not pattern.strip():
        raise GlobProblem("empty glob")
    if pattern.startswith("/"):
        raise GlobProblem(
            f"glob {pattern!r} starts with '/'; globs are relative to the repository root, write {pattern.lstrip('/')!r}"
        )
    if pattern.startswith("!"):
        raise GlobProblem(f"glob {pattern!r} starts with '!'; list files to leave out under 'exclude:' instead")
    never = _never_matches(pattern)
    if never:
        raise GlobProblem(f"glob {pattern!r}: {never}")
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


def _never_matches(pattern: str) -> str | None:
    """Why ``pattern`` cannot mean what it says (``None`` when it can).

    GitHub's file names are relative to the repository root: they never start with
    ``./``, never hold a ``.`` or ``..`` folder or ``//`` and never end in ``/``. A ``[`` or
    ``{`` left open, or a range such as ``[z-a]``, is a typo: wcmatch would quietly
    read the first two as literal text and the last as matching nothing.
    """
    segments = pattern.split("/")
    if segments[0] in (".", ".."):
        fixed = "/".join(s for s in segments if s not in (".", ".."))
        hint = f"; write {fixed!r}" if segments[0] == "." and fixed else ""
        return f"can never match: pull request paths are relative to the repository root and never start with {segments[0] + '/'!r}{hint}"
    if any(s in (".", "..") for s in segments):
        return "can never match: pull request paths never hold a '.' or '..' folder"
    if "//" in pattern:
        # wcmatch reads "//" as "/", the fast shapes do not: refuse it rather than disagree.
        return f"'//' makes an empty folder name, which no path has; write {re.sub('/+', '/', pattern)!r}"
    if pattern.endswith("/"):
        return f"can never match: a pull request lists files, not folders, and no path ends in '/'; write {pattern + '**'!r}"
    depth, i = 0, 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            i += 2
            continue
        if c == "[":
            end, problem = _bracket(pattern, i)
            if problem:
                return problem
            if end is None:
                return "'[' is never closed (write '[[]' to match a literal '[')"
            i = end + 1
            continue
        if c == "{":
            depth += 1
        elif c == "}" and depth:
            depth -= 1
        i += 1
    if depth:
        return "'{' is never closed (write '\\{' to match a literal '{')"
    return None


def _bracket(pattern: str, start: int) -> tuple[int | None, str | None]:
    """``(index of the closing ']', problem)`` for the bracket expression at ``start``."""
    i, n = start + 1, len(pattern)
    if i < n and pattern[i] in "!^":
        i += 1
    first = True
    while i < n:
        c = pattern[i]
        if c == "]" and not first:
            return i, None
        first = False
        if pattern.startswith("[:", i):
            close = pattern.find(":]", i + 2)
            if close != -1:  # a POSIX class such as [:alpha:]
                i = close + 2
                continue
        width = 2 if c == "\\" and i + 1 < n else 1
        low = pattern[i + width - 1]
        i += width
        if i + 1 < n and pattern[i] == "-" and pattern[i + 1] != "]":
            width = 2 if pattern[i + 1] == "\\" and i + 2 < n else 1
            high = pattern[i + width]
            if high < low:
                return None, f"the range '{low}-{high}' is empty, so it can never match ({low!r} comes after {high!r}); write '{high}-{low}'"
            i += 1 + width
    return None, None


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
        if rest.endswith("/**") and _is_literal(rest[:-3]) and "/" not in rest[:-3] and rest[:-3]:
            return _Shape("folder", rest[:-3])
    include, _ = wcglob.translate(pattern, flags=GLOB_FLAGS)
    regex = re.compile("|".join(f"(?:{r})" for r in include))
    prefix = _literal_prefix(pattern)
    # Pieces inside the prefix add nothing to the prefix test.
    pieces = tuple(p for p in _pieces(pattern) if p not in prefix)
    return _Shape("regex", pattern, prefix=prefix, suffix=_literal_suffix(pattern), pieces=pieces, regex=regex)


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


def _pieces(pattern: str) -> tuple[str, ...]:
    """Runs of literal characters without '/' that every match contains ('**/' may vanish, literal text never)."""
    runs = re.split(r"\[[^\]]*\]|[*?\\/\[\]]", pattern)
    return tuple(sorted({r for r in runs if len(r) >= 2}, key=len, reverse=True))


class GlobTable:
    """Every glob of a rule set, sorted by shape once, so that one pass over a pull
    request's paths finds what each of them matches.

    A small pull request meets every glob of every rule, and most match none of its
    few files: asking each glob in turn costs a bisect and a scan per glob, while a
    path answers for all of them with a few dictionary look-ups (its folders, file
    name, ``DIR/`` prefixes) and substring tests (the literal pieces regex globs need).
    Every candidate is confirmed by the same :meth:`_Shape.test` the per-glob search
    ends with, so both give the same files.
    """

    def __init__(self, globs: Iterable[Glob]):
        self.patterns: dict[str, None] = {}
        self._exact: dict[str, list[str]] = {}
        self._prefix: dict[str, list[str]] = {}
        self._name: dict[str, list[str]] = {}
        self._folder: dict[str, list[str]] = {}
        self._suffix: dict[str, list[str]] = {}
        self._all: list[str] = []
        gated: dict[str, list[tuple[_Shape, str]]] = {}
        self._ungated: list[tuple[_Shape, str]] = []
        #: ``{path: patterns it matches}``: pull requests of one repository share most paths.
        self._known: dict[str, tuple[str, ...]] = {}
        for glob in globs:
            if glob.pattern in self.patterns:
                continue
            self.patterns[glob.pattern] = None
            for shape in glob.shapes:
                kind = shape.kind
                if kind == "regex":
                    # A path it matches holds its literal prefix and its pieces: the
                    # longest of them (a piece on a tie: prefixes are shared more) is its gate.
                    gate = max((shape.pieces[0] if shape.pieces else "", shape.prefix), key=len)
                    if gate:
                        gated.setdefault(gate, []).append((shape, glob.pattern))
                    else:
                        self._ungated.append((shape, glob.pattern))
                elif kind == "all":
                    self._all.append(glob.pattern)
                else:
                    table = {"exact": self._exact, "prefix": self._prefix, "name": self._name,
                             "folder": self._folder, "suffix": self._suffix}[kind]  # fmt: skip
                    table.setdefault(shape.text, []).append(glob.pattern)
        self._gated = tuple((gate, tuple(members)) for gate, members in gated.items())
        self._suffixes = tuple(self._suffix)

    def match_all(self, paths: Sequence[str]) -> dict[str, frozenset[int]]:
        """``{pattern: positions of the paths it matches}`` for every glob of the table."""
        found: dict[str, list[int]] = {}
        known = self._known
        for i, path in enumerate(paths):
            hits = known.get(path)
            if hits is None:
                hits = self._path_hits(path)
                if len(known) >= _KNOWN_PATHS:
                    known.clear()
                known[path] = hits
            for pattern in hits:
                found.setdefault(pattern, []).append(i)
        out = dict.fromkeys(self.patterns, _EMPTY)
        for pattern, positions in found.items():
            out[pattern] = frozenset(positions)
        return out

    def _path_hits(self, path: str) -> tuple[str, ...]:
        """The patterns that match ``path``."""
        hits: set[str] = set(self._all)
        more = self._exact.get(path)
        if more:
            hits.update(more)
        prefix, folder = self._prefix, self._folder
        cut = path.find("/")
        start = 0
        while cut >= 0:
            # ``path[:cut + 1]`` is a ``DIR/`` prefix, ``path[start:cut]`` a folder name.
            more = prefix.get(path[: cut + 1])
            if more:
                hits.update(more)
            more = folder.get(path[start:cut])
            if more:
                hits.update(more)
            start = cut + 1
            cut = path.find("/", start)
        more = self._name.get(path[start:])
        if more:
            hits.update(more)
        if path.endswith(self._suffixes):
            hits.update(p for text in self._suffixes if path.endswith(text) for p in self._suffix[text])
        for members in [members for gate, members in self._gated if gate in path]:
            hits.update(p for shape, p in members if p not in hits and shape.test(path))
        if self._ungated:
            hits.update(p for shape, p in self._ungated if p not in hits and shape.test(path))
        return tuple(hits)


#: Up to this many files, a rule set's :class:`GlobTable` answers every glob in one pass over
#: the paths; past it, each glob searches the sorted and joined paths (its cost barely grows
#: with the number of files).
TABLE_FILES = 128


@dataclass
class FileIndex:
    """The changed files of one pull request, indexed for glob matching.

    ``paths`` keeps GitHub's order; results are sets of positions in it. Results are
    cached per glob text for the life of the index (one evaluation). Literal parts
    of globs are found by scanning all paths joined by newlines (one C-speed search
    instead of a Python loop), so a glob costs little more than its matches.
    ``table``: the rule set's globs, answered at once for a pull request of at most
    :data:`TABLE_FILES` files (others are still answered one by one).
    """

    paths: Sequence[str]
    table: GlobTable | None = field(default=None, repr=False)
    _sorted: list[str] = field(default_factory=list, repr=False)
    _order: list[int] = field(default_factory=list, repr=False)
    _cache: dict[str, frozenset[int]] = field(default_factory=dict, repr=False)
    _joined: str | None = field(default=None, repr=False)
    _starts: list[int] = field(default_factory=list, repr=False)
    _pieces: dict[str, list[int]] = field(default_factory=dict, repr=False)
    _ready: bool = field(default=False, repr=False)

    def __post_init__(self) -> None:
        if self.table is not None and len(self.paths) <= TABLE_FILES:
            self._cache = self.table.match_all(self.paths)

    def _prepare(self) -> None:
        """Sort and join the paths (on the first glob the table did not answer)."""
        self._ready = True
        order = sorted(range(len(self.paths)), key=self.paths.__getitem__)
        self._order = order
        self._sorted = [self.paths[i] for i in order]
        joined = "\n".join(self.paths)
        if joined.count("\n") == max(len(self.paths) - 1, 0):  # no path holds a newline
            self._joined = joined
            self._starts = [0, *itertools.accumulate(len(p) + 1 for p in self.paths)][: len(self.paths)]

    def match(self, glob: Glob) -> frozenset[int]:
        """Positions of the files ``glob`` matches."""
        hit = self._cache.get(glob.pattern)
        if hit is None:
            if not self._ready:
                self._prepare()
            shapes = glob.shapes
            if len(shapes) == 1:
                hit = self._match_shape(shapes[0])
                hit = frozenset(hit) if hit else _EMPTY
            else:
                found: set[int] = set()
                for shape in shapes:
                    found.update(self._match_shape(shape))
                hit = frozenset(found) if found else _EMPTY
            self._cache[glob.pattern] = hit
        return hit

    def _match_shape(self, shape: _Shape) -> Sequence[int]:
        # Most globs of a rule set match nothing in a given pull request: every branch
        # gives up as soon as the sorted paths or the joined text say so.
        kind = shape.kind
        if kind == "prefix":
            return self._range(shape.text)
        if kind == "regex":
            return self._match_regex(shape)
        if kind == "suffix" or kind == "name":
            found = self._containing(shape.text)
            if not found:
                return found
            paths, test = self.paths, shape.test
            return [i for i in found if test(paths[i])]
        if kind == "exact":
            return self._range(shape.text, exact=True)
        if kind == "all":
            return range(len(self.paths))
        # "folder"
        return [*self._range(shape.text + "/"), *self._containing(f"/{shape.text}/")]

    def _match_regex(self, shape: _Shape) -> Sequence[int]:
        # A regex glob: start from the files sharing its literal prefix when few do,
        # else from those containing its longest literal piece; the regex decides.
        candidates: Sequence[int] | None = None
        if shape.prefix:
            candidates = self._range(shape.prefix)
            if not candidates:
                return candidates
        if shape.pieces and (candidates is None or len(candidates) > _FEW):
            candidates = self._containing(shape.pieces[0])
            if not candidates:
                return candidates
        paths = self.paths
        if candidates is None:
            candidates = range(len(paths))
        test = shape.test
        return [i for i in candidates if test(paths[i])]

    def _containing(self, text: str) -> list[int]:
        """Positions of paths containing ``text`` (which holds no newline); cached per text."""
        found = self._pieces.get(text)
        if found is None:
            found = self._pieces[text] = self._scan(text)
        return found

    def _scan(self, text: str) -> list[int]:
        if self._joined is None:
            return [i for i, p in enumerate(self.paths) if text in p]
        joined, starts = self._joined, self._starts
        found: list[int] = []
        pos = joined.find(text)
        while pos >= 0:
            line = bisect.bisect_right(starts, pos) - 1
            found.append(line)
            nxt = starts[line + 1] if line + 1 < len(starts) else len(joined)
            pos = joined.find(text, nxt)
        return found

    def _range(self, prefix: str, *, exact: bool = False) -> list[int]:
        ordered = self._sorted
        lo = bisect.bisect_left(ordered, prefix)
        # The first path not below ``prefix`` decides whether any path starts with it.
        if lo == len(ordered) or not ordered[lo].startswith(prefix):
            return []
        if exact:
            if ordered[lo] != prefix:
                return []
            hi = bisect.bisect_right(ordered, prefix, lo)
        else:
            hi = bisect.bisect_left(ordered, prefix + "\U0010ffff", lo)
        return self._order[lo:hi]
