"""Bundle files: one merged pull request saved as JSON in GitHub's REST shapes.

A bundle is ``{"pull": {...}, "files": [...], "reviews": [...], "review_comments": [...]}``:
the answers of "Get a pull request", "List pull requests files", "List reviews for a
pull request" and "List review comments on a pull request". Other top-level keys (such
as ``_meta``, which says how a bundle was made) are kept by :func:`read_bundle` and
ignored by :func:`load_bundle`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from bot.engine.snapshot import PullRequestSnapshot, SnapshotError


class BundleError(ValueError):
    """A bundle file or dict that is not a valid pull request bundle.

    ``source`` names the file (or ``"<bundle>"`` for an in-memory dict); the message
    starts with it and says what is wrong.
    """

    def __init__(self, source: str, problem: str):
        self.source = source
        self.problem = problem
        super().__init__(f"{source}: {problem}")


def check_bundle(data: Any, source: str = "<bundle>") -> dict[str, Any]:
    """Validate a bundle dict and return it with ``reviews``/``review_comments`` defaulted to ``[]``.

    Checks that ``pull`` is an object with an integer ``number``, that ``files`` is a list
    of objects each with a non-empty string ``filename``, and that ``reviews`` and
    ``review_comments`` (optional) are lists of objects. Raises :class:`BundleError`
    naming ``source`` and the first problem found. The input is not modified.
    """
    if not isinstance(data, Mapping):
        raise BundleError(source, f"a bundle must be a JSON object, not {_kind(data)}")
    pull = data.get("pull")
    if pull is None:
        raise BundleError(source, '"pull" is missing')
    if not isinstance(pull, Mapping):
        raise BundleError(source, f'"pull" must be an object, not {_kind(pull)}')
    number = pull.get("number")
    if not isinstance(number, int) or isinstance(number, bool):
        raise BundleError(source, f'"pull.number" must be an integer, not {_kind(number)}')
    if "files" not in data:
        raise BundleError(source, '"files" is missing')
    files = data["files"]
    if not isinstance(files, list):
        raise BundleError(source, f'"files" must be a list, not {_kind(files)}')
    for i, entry in enumerate(files):
        if not isinstance(entry, Mapping):
            raise BundleError(source, f'"files[{i}]" must be an object, not {_kind(entry)}')
        name = entry.get("filename")
        if not isinstance(name, str) or not name:
            raise BundleError(source, f'"files[{i}]" has no "filename"')
    checked = dict(data)
    for key in ("reviews", "review_comments"):
        items = data.get(key)
        if items is None:
            checked[key] = []
            continue
        if not isinstance(items, list):
            raise BundleError(source, f'"{key}" must be a list, not {_kind(items)}')
        for i, item in enumerate(items):
            if not isinstance(item, Mapping):
                raise BundleError(source, f'"{key}[{i}]" must be an object, not {_kind(item)}')
    return checked


def snapshot_from_bundle(data: Any, source: str = "<bundle>") -> PullRequestSnapshot:
    """Build a :class:`PullRequestSnapshot` from a bundle dict (validated by :func:`check_bundle`).

    Raises :class:`BundleError` naming ``source`` when the bundle is malformed or the
    snapshot cannot be built (for example, no repository can be told from ``pull``).
    """
    bundle = check_bundle(data, source)
    try:
        return PullRequestSnapshot.from_github(
            bundle["pull"], bundle["files"], bundle["reviews"], bundle["review_comments"]
        )
    except (SnapshotError, TypeError, ValueError) as exc:
        raise BundleError(source, str(exc)) from exc


def read_bundle(path: str | Path) -> dict[str, Any]:
    """Read and validate one bundle file (UTF-8 JSON); return the raw dict in REST shapes.

    Raises :class:`BundleError` naming the file when it cannot be read, is not JSON, or
    is not a valid bundle (see :func:`check_bundle`).
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise BundleError(str(path), f"not UTF-8 text ({exc.reason} at byte {exc.start})") from exc
    except OSError as exc:
        raise BundleError(str(path), f"cannot be read ({exc.strerror or exc})") from exc
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise BundleError(str(path), f"not JSON ({exc.msg} at line {exc.lineno} column {exc.colno})") from exc
    return check_bundle(data, str(path))


def load_bundle(path: str | Path) -> PullRequestSnapshot:
    """Read one bundle file into a :class:`PullRequestSnapshot`; raises :class:`BundleError`."""
    return snapshot_from_bundle(read_bundle(path), str(path))


def iter_bundles(folder: str | Path) -> Iterator[tuple[Path, PullRequestSnapshot]]:
    """Yield ``(path, snapshot)`` for every ``*.json`` file directly in ``folder``, by PR number.

    Every file is read when this is called (the order needs their numbers), so a
    malformed file raises :class:`BundleError` before anything is yielded, as does a
    ``folder`` that is not a folder.
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise BundleError(str(folder), "not a folder")
    loaded = [(path, load_bundle(path)) for path in sorted(folder.glob("*.json")) if path.is_file()]
    loaded.sort(key=lambda item: (item[1].number, item[0].name))
    return iter(loaded)


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    return {
        bool: "a boolean",
        int: "a number",
        float: "a number",
        str: "a string",
        list: "a list",
        dict: "an object",
    }.get(type(value), type(value).__name__)
