"""How far a dependency moved, read with PEP 440 (``packaging``), as behaviour facts.

A dependency change (:class:`~bot.engine.analysis.model.DependencyChange`) holds the raw spec
text of each side: ``>=0.27.0``, ``==1.10.0``, ``^4.2.0`` (npm), ``1.2.3`` (lock
files), ``24.04`` (image tags) or a git hash. This module reads the versions in that
text and says what kind of move it is:

* :func:`bump_of` -- ``"major"``, ``"minor"``, ``"patch"``, ``"pre-1.0 minor"``
  (``0.23.0 -> 0.24.0``: a new minor of a pre-1.0 package, which semver lets break,
  but *not* a major bump), ``"commit"`` (a git hash moved) or ``""``;
* :func:`dependency_facts` -- one :class:`~bot.engine.analysis.model.BehaviourFact` per
  change: ``dep_added``, ``dep_removed``, ``dep_floor_raised`` (the lowest accepted
  version went up), ``dep_ceiling_added`` (an upper bound appeared), ``dep_pin_changed``
  (an exact version, or any other change of the spec) and ``dep_commit_moved`` (a git
  hash or submodule pointer moved: never read as a version).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Sequence
from functools import lru_cache

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from bot.engine.analysis.model import BehaviourFact, DependencyChange

_HASH = re.compile(r"(?:^|[@#/=:\s])([0-9a-f]{7,64})(?:-dirty)?\s*$")
_LOOSE_VERSION = re.compile(r"v?(\d+(?:\.\d+)*(?:[-.]?(?:a|b|rc|alpha|beta|pre|post|dev)\.?\d*)?)")
_FLOOR_OPS = (">=", ">", "==", "~=", "===")
_MAX_SPEC = 200

#: Files whose dependencies are those of the package itself (what users install).
_PACKAGE_FILES = frozenset({"pyproject.toml", "setup.py", "setup.cfg", "package.json", "cargo.toml", "go.mod", "pipfile"})
_NOT_PACKAGE_DIRS = ("docker/", ".github/", "docs/", "tests/", "test/", "ci/", "examples/", "recipe/", "scripts/")


def commit_of(spec: str) -> str | None:
    """The git hash at the end of ``spec`` (``git+https://...@<sha>``, ``<sha>``), or ``None``."""
    spec = spec.strip()
    if not spec or len(spec) > _MAX_SPEC:
        return None
    m = _HASH.search(spec)
    if m is None:
        return None
    sha = m.group(1)
    # All-digit runs (dates, build numbers) are not hashes.
    return sha if any(c.isalpha() for c in sha) else None


_PARENS = re.compile(r"\s*\(|\)\s*$")


@lru_cache(maxsize=2048)
def _specifiers(spec: str) -> SpecifierSet | None:
    text = spec.split(";", 1)[0].strip().strip("\"'")
    if not text or len(text) > _MAX_SPEC or not text[0] in "<>=!~":
        return None
    text = _PARENS.sub("", text)
    try:
        return SpecifierSet(text)
    except InvalidSpecifier:
        return None


def _version(text: str) -> Version | None:
    try:
        return Version(text)
    except InvalidVersion:
        return None


@lru_cache(maxsize=2048)
def bounds(spec: str) -> tuple[Version | None, Version | None, Version | None]:
    """``(floor, ceiling, pin)`` of a version spec; each ``None`` when the spec has none.

    PEP 440 specs (``>=1.2,<2``) are read with :class:`packaging.specifiers.SpecifierSet`;
    other text (lock-file and image versions ``1.2.3``, npm ``^1.2.3``/``~1.2``, ``v1.2``)
    counts as a pin of the first version it holds. ``~=1.4.2`` has floor and pin-free
    ceiling ``1.4.2``/``1.5``-ish: only the floor is reported for it.
    """
    specs = _specifiers(spec)
    if specs is not None:
        floor = ceiling = pin = None
        for s in specs:
            v = _version(s.version.rstrip(".*")) if s.version else None
            if v is None:
                continue
            if s.operator in ("==", "===") and not s.version.endswith(".*"):
                pin = v
            if s.operator in _FLOOR_OPS and (floor is None or v > floor):
                floor = v
            if s.operator in ("<", "<=") and (ceiling is None or v < ceiling):
                ceiling = v
        if pin is not None:
            floor = ceiling = pin
        return floor, ceiling, pin
    text = spec.strip().lstrip("^~=v ")
    if commit_of(spec) is not None and not re.match(r"\d+(?:\.\d+)+", text):
        return None, None, None
    m = _LOOSE_VERSION.match(text)
    if m is None:
        return None, None, None
    v = _version(m.group(1))
    return v, None, v


def _release(v: Version) -> tuple[int, int, int]:
    r = v.release + (0, 0, 0)
    return r[0], r[1], r[2]


def version_bump(old: Version | None, new: Version | None) -> str:
    """``"major"``, ``"minor"``, ``"patch"``, ``"pre-1.0 minor"`` or ``""`` between two versions.

    A move in either direction counts (a downgrade from 2.0 to 1.9 is ``"major"``).
    Equal releases that differ in pre/post/dev parts are ``"patch"``; equal versions ``""``.
    """
    if old is None or new is None or old == new:
        return ""
    a, b = _release(old), _release(new)
    if a[0] != b[0]:
        return "major"
    if a[1] != b[1]:
        return "pre-1.0 minor" if a[0] == 0 else "minor"
    return "patch"


def bump_of(old_spec: str, new_spec: str) -> str:
    """How far a dependency moved from ``old_spec`` to ``new_spec`` (see :data:`~bot.engine.analysis.model.BUMPS`).

    ``"commit"`` when both sides are git hashes; otherwise the bump between the pins
    (or, for ranges, the floors: ``>=0.27`` -> ``>=1.10`` is ``"major"``); ``""`` when a
    side has no version. Never raises.
    """
    if not old_spec or not new_spec:
        return ""
    if commit_of(old_spec) is not None and commit_of(new_spec) is not None:
        return "commit"
    old_floor, _c, old_pin = bounds(old_spec)
    new_floor, _c, new_pin = bounds(new_spec)
    if old_pin is not None and new_pin is not None:
        return version_bump(old_pin, new_pin)
    return version_bump(old_floor, new_floor)


def install_script(path: str) -> bool:
    """True when ``path`` installs packages rather than declaring them (a Dockerfile, a shell
    script): a line it drops stops one install, and the package may still come from a base
    image or a requirements file."""
    name = posixpath.basename(path).lower()
    return name.startswith("dockerfile") or name.endswith((".dockerfile", ".sh"))


def named_on(name: str, lines: Sequence[str]) -> bool:
    """True when package ``name`` is named on one of ``lines`` (``git clone …/transformers``,
    ``cd vllm && pip install -e .``): an install script that dropped its registry install
    may still build it from source, so "no longer installs" would be false."""
    text = "\n".join(lines)
    if name.isascii() and text.isascii() and name.lower() not in text.lower():
        # In ASCII text an ASCII name matches case-insensitively only where its lower-cased
        # letters are (re.I folds some non-ASCII letters onto ASCII ones: those texts are searched).
        return False
    pattern = re.compile(rf"(?<![\w-]){re.escape(name)}(?![\w-])", re.I)
    if "\n" in name:
        return any(pattern.search(line) for line in lines)
    # A line end is neither a word character nor a dash, as the start and end of a line
    # are none: the joined lines hold a match exactly when one line does (one search).
    return pattern.search(text) is not None


def package_file(path: str) -> bool:
    """True when ``path`` declares the dependencies of the package itself (not CI, Docker, docs or locks)."""
    name = posixpath.basename(path).lower()
    lowered = path.lower()
    if lowered.startswith(_NOT_PACKAGE_DIRS) or any(f"/{d}" in lowered for d in _NOT_PACKAGE_DIRS):
        return False
    if name in _PACKAGE_FILES:
        return True
    return name.startswith("requirements") and name.endswith((".txt", ".in")) and "/" not in path.strip("/")


def _fact(kind: str, change: DependencyChange, detail: str, user_facing: bool, old: str = "", new: str = "") -> BehaviourFact:
    return BehaviourFact(
        kind=kind,
        path=change.file,
        symbol=change.name,
        old=old or change.old_spec,
        new=new or change.new_spec,
        detail=detail,
        user_facing=user_facing,
    )


def dependency_facts(changes: Iterable[DependencyChange], *, submodule: bool = False) -> tuple[BehaviourFact, ...]:
    """One behaviour fact per dependency change (see the module text for the kinds).

    ``submodule`` marks the changes of a git submodule pointer. ``detail`` holds the
    bump (``"major"``...) where there is one, and says ``"lower floor"``/``"ceiling
    removed"`` for changes that widen a range. Never raises.
    """
    out: list[BehaviourFact] = []
    for change in changes:
        user_facing = package_file(change.file) and not submodule
        if change.action == "added":
            out.append(_fact("dep_added", change, "", user_facing))
            continue
        if change.action == "removed":
            out.append(_fact("dep_removed", change, "", user_facing))
            continue
        if submodule or change.bump == "commit":
            out.append(_fact("dep_commit_moved", change, "commit", user_facing))
            continue
        old_floor, old_ceiling, old_pin = bounds(change.old_spec)
        new_floor, new_ceiling, new_pin = bounds(change.new_spec)
        if old_pin is not None and new_pin is not None:
            out.append(_fact("dep_pin_changed", change, change.bump, user_facing))
            continue
        words = []
        if change.new_spec.lstrip().startswith("@") or "git+" in change.new_spec:
            words.append("now a direct reference")
        elif old_pin is None and new_pin is not None:
            words.append("now pinned")
        elif old_pin is not None and new_pin is None and new_floor is None:
            words.append("no longer pinned")
        if old_ceiling is not None and new_ceiling is not None and new_ceiling < old_ceiling:
            words.append(f"ceiling lowered to <{new_ceiling}")
        emitted = False
        if new_floor is not None and (old_floor is None or new_floor > old_floor) and new_pin is None:
            detail = "; ".join(w for w in (change.bump or version_bump(old_floor, new_floor), *words) if w)
            out.append(_fact("dep_floor_raised", change, detail, user_facing))
            emitted = True
        if new_ceiling is not None and old_ceiling is None and new_pin is None:
            out.append(_fact("dep_ceiling_added", change, "", user_facing))
            emitted = True
        if not emitted:
            if old_floor is not None and new_floor is not None and new_floor < old_floor:
                words.append("lower floor")
            if old_ceiling is not None and new_ceiling is None and new_pin is None and not words:
                words.append("ceiling removed")
            out.append(_fact("dep_pin_changed", change, "; ".join(w for w in (change.bump, *words) if w), user_facing))
    return tuple(out)
