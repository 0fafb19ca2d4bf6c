"""Reading a pull request's facts (and prguide's config file) from the GitHub REST API.

GitHub docs: "Get a pull request", "List pull requests files" (``per_page`` up to 100,
at most 3000 files), "List reviews for a pull request", "List review comments on a
pull request", "Get repository content".
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import math
from collections.abc import Mapping
from typing import Any

from bot.app.github import GitHubClient, NotFound
from bot.engine.snapshot import GITHUB_FILE_LIST_CAP, PullRequestSnapshot

#: The largest page GitHub serves.
PER_PAGE = 100

_PULL = "/repos/{owner}/{repo}/pulls/{pull_number}"
_FILES = _PULL + "/files{?per_page,page}"
_REVIEWS = _PULL + "/reviews{?per_page}"
_REVIEW_COMMENTS = _PULL + "/comments{?per_page}"
_CONTENTS = "/repos/{owner}/{repo}/contents/{+path}{?ref}"


def split_repository(repository: str) -> tuple[str, str]:
    """``"owner/name"`` -> ``("owner", "name")``; raises ``ValueError`` for anything else."""
    owner, sep, name = repository.partition("/")
    if not sep or not owner or not name or "/" in name:
        raise ValueError(f"repository must be 'owner/name', got {repository!r}")
    return owner, name


async def fetch_pull(client: GitHubClient, repository: str, number: int) -> Mapping[str, Any]:
    """The pull request object ("Get a pull request"); raises the client's errors (``NotFound``...)."""
    owner, repo = split_repository(repository)
    pull = await client.getitem(_PULL, {"owner": owner, "repo": repo, "pull_number": int(number)})
    if not isinstance(pull, Mapping):
        raise ValueError(f"{repository}#{number}: GitHub's pull request answer is not an object")
    return pull


async def fetch_snapshot(
    client: GitHubClient,
    repository: str,
    number: int,
    *,
    pull: Mapping[str, Any] | None = None,
) -> PullRequestSnapshot:
    """Build the :class:`PullRequestSnapshot` of pull request ``number`` in ``repository``.

    ``pull`` is the pull request object from a webhook payload or a "List pull
    requests" item; without it the PR is fetched first (one more call). Files, reviews
    and review comments are then fetched concurrently, 100 per page. When
    ``changed_files`` is known, all file pages (up to GitHub's 3000-file cap) are
    requested at once; should the last of them still link to a next page, the rest are
    read by following the links. A list item carries no ``changed_files``,
    ``additions`` or ``deletions``: when its files fill GitHub's 3000, the pull request
    is read ("Get a pull request", one more call) for its own counts, so the snapshot
    knows that files were left out (:attr:`PullRequestSnapshot.truncated`).
    A PR with at most 100 files and short review lists costs 3 calls.

    Raises ``ValueError`` for a malformed ``repository``, ``SnapshotError`` for a PR
    object without a number, and the client's errors (``NotFound`` when the PR is gone).
    """
    owner, repo = split_repository(repository)
    where = {"owner": owner, "repo": repo, "pull_number": int(number)}
    if pull is None:
        pull = await client.getitem(_PULL, where)
    changed = pull.get("changed_files")
    files, reviews, review_comments = await asyncio.gather(
        _files(client, where, changed if isinstance(changed, int) else None),
        client.getlist(_REVIEWS, {**where, "per_page": PER_PAGE}),
        client.getlist(_REVIEW_COMMENTS, {**where, "per_page": PER_PAGE}),
    )
    if not isinstance(changed, int) and len(files) >= GITHUB_FILE_LIST_CAP:
        # The list stops at 3000 whatever the pull request changed: only GitHub's own counts tell.
        full = await client.getitem(_PULL, where)
        if isinstance(full, Mapping):
            pull = {**pull, **{k: full[k] for k in ("changed_files", "additions", "deletions") if k in full}}
    return PullRequestSnapshot.from_github(pull, files, reviews, review_comments, repository=repository)


async def _files(client: GitHubClient, where: Mapping[str, Any], changed: int | None) -> list[Any]:
    if changed is None:
        return await client.getlist(_FILES, {**where, "per_page": PER_PAGE})
    pages = max(1, math.ceil(min(changed, GITHUB_FILE_LIST_CAP) / PER_PAGE))
    results = await asyncio.gather(
        *(client.get_page(_FILES, {**where, "per_page": PER_PAGE, "page": n}) for n in range(1, pages + 1))
    )
    files = [f for page in results for f in page.items]
    # More pages than changed_files promised: follow GitHub's links from the last one.
    next_url = results[-1].next_url
    while next_url and len(files) < GITHUB_FILE_LIST_CAP:
        page = await client.get_page(next_url)
        files.extend(page.items)
        next_url = page.next_url
    return files[:GITHUB_FILE_LIST_CAP]


async def fetch_file(
    client: GitHubClient, repository: str, path: str, ref: str | None = None, *, max_bytes: int | None = None
) -> str | None:
    """The text of one file at ``ref`` (a branch, tag or commit; default branch when ``None``).

    Uses "Get repository content" and decodes its base64 ``content``; files over 1 MB,
    which GitHub sends without content, are read again as raw text. Returns ``None``
    when the file (or ref) does not exist. Raises ``ValueError`` when the path is a
    directory, the file is not UTF-8 text, or it is larger than ``max_bytes`` (checked
    on the answer's ``size`` before any raw download, and again on the bytes).
    """
    owner, repo = split_repository(repository)
    where: dict[str, Any] = {"owner": owner, "repo": repo, "path": path.lstrip("/")}
    if ref:
        where["ref"] = ref
    try:
        data = await client.getitem(_CONTENTS, where, expect=(404,))
        if isinstance(data, list) or (isinstance(data, Mapping) and data.get("type") not in (None, "file")):
            raise ValueError(f"{repository}:{path} is not a file")
        size = data.get("size") if isinstance(data, Mapping) else None
        if max_bytes is not None and isinstance(size, int) and size > max_bytes:
            raise ValueError(_too_large(size, max_bytes))
        if isinstance(data, Mapping) and data.get("encoding") == "base64":
            try:
                raw = base64.b64decode(str(data.get("content") or ""), validate=False)
            except binascii.Error as exc:
                raise ValueError(f"{repository}:{path}: GitHub sent invalid base64 ({exc})") from None
        else:
            text = await client.getitem(_CONTENTS, where, accept="application/vnd.github.raw+json")
            raw = text.encode("utf-8") if isinstance(text, str) else bytes(text or b"")
    except NotFound:
        return None
    if max_bytes is not None and len(raw) > max_bytes:
        raise ValueError(_too_large(len(raw), max_bytes))
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{repository}:{path} is not UTF-8 text (byte {exc.start})") from None


def _too_large(size: int, max_bytes: int) -> str:
    return f"the file is {size:,} bytes; prguide reads files of at most {max_bytes:,} bytes"
