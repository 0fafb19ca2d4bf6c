"""Who wrote the lines a merged pull request changes, read from GitHub's GraphQL blame.

The in-app source of :class:`bot.engine.history.model.HistoryFacts` (the offline one is
:mod:`bot.sources.githistory`, on a local clone). The lines are those
:func:`bot.engine.history.lines.trace_plan` picks (``to_blame``: the traced lines, else
those of CI files and example scripts, else those around what the pull request only
adds), numbered as in the file before the pull request; they are blamed at the commit
the pull request was merged onto: the first parent of ``merge_commit_sha`` (for a squash
or a merge commit, the base branch right before it).

The patches' old side is the merge base, not that parent: when the base branch changed a
file in between, the patch's line numbers name other lines there, and their blame other
pull requests. So the same query reads each blamed file at the parent (``Repository.object``
with the expression ``<merge commit>~1:<path>``, a ``Blob``) and finds each hunk's old side
in it (:mod:`bot.engine.history.drift`): the lines of a hunk found once are blamed where
they are now, those of a hunk the base branch changed (not found, or found twice, or
found elsewhere while the lines by its changes are in the file twice: a copy) are
left out, and a file that cannot be read whole (missing, binary, cut at GitHub's 512 KiB
``Blob.text`` limit) gives no line: exact or silent.

GitHub docs: "Objects" in the GraphQL reference, ``Blame``, ``BlameRange`` and ``Commit``
(https://docs.github.com/en/graphql/reference/objects#blame,
https://docs.github.com/en/graphql/reference/objects#commit); "Forming calls with
GraphQL" (``POST /graphql``, answers ``{"data", "errors"}``). A blame answers the whole
file in ranges of lines (``startingLine``..``endingLine``, 1-based) and the commit that
last changed them; ``associatedPullRequests`` names the merged pull request that brought
that commit to the repository.

Cost: one ``POST /graphql`` per :data:`FILES_PER_QUERY` files (the parent commit, and each
file's text there, are reached inside the same query: more bytes, no more requests; each
file's blame is under an object of its own, so an error about one file, which GitHub
answers by nulling the nearest nullable object above the non-null ``blame``, costs that
file alone), for at most :data:`MAX_FILES` files, most traced lines
first; nothing for a pull request without traced lines. The first of them also reads the
repository's ``.git-blame-ignore-revs`` as the merge left it (``Repository.object`` with
the expression ``<merge commit>:.git-blame-ignore-revs``, a ``Blob``; ``null`` when there
is none): GitHub's GraphQL blame does not see through the revisions it lists, as the
offline blame does (``git blame --ignore-rev``), so lines a listed revision last touched
have no origin (as offline, a line git cannot see through a sweep to), and no request
or REST call is spent on the file. Its trouble costs nothing: an error about it alone
leaves the blame as it is, without the file. Each request goes through the
installation's client, so it is counted in its calls and metrics, as an optional request:
sent once, never again after a 5xx or a time-out, and no rate limit waited out (so a
failing endpoint costs one request per batch, at most two). A blame is an extra: any
failure (an error status, a time-out past :data:`DEADLINE_S`, a rate limit, GraphQL
``errors``) gives ``None`` and the guide is built without it.
"""

from __future__ import annotations

import asyncio
import logging
from bisect import bisect_left, bisect_right
from collections.abc import Collection, Mapping, Sequence
from datetime import datetime
from typing import Any

from bot.app.fetch import split_repository
from bot.engine.history.drift import lines_at_parent
from bot.engine.history.lines import ChangedLine, trace_plan
from bot.engine.history.model import IGNORE_REVS_FILE, WINDOW_DAYS, HistoryFacts, LineOrigin, PullOrigin, listed_revisions
from bot.engine.snapshot import PullRequestSnapshot

log = logging.getLogger("prguide.jobs")

#: Files blamed for one pull request, at most (those with the most traced lines).
MAX_FILES = 10
#: Files blamed in one GraphQL request: a blame is one of GitHub's costlier fields and a
#: request must answer within GitHub's own time limit, so a big pull request's files are
#: split over a few requests sent at once.
FILES_PER_QUERY = 5
#: Seconds all the blame requests of one pull request may take together.
DEADLINE_S = 10.0
#: GitHub's GraphQL endpoint, relative to the REST root (github.com: ``https://api.github.com/graphql``;
#: GitHub Enterprise Server serves REST at ``/api/v3`` and GraphQL at ``/api/graphql``).
GRAPHQL_PATH = "/graphql"

#: The alias of the ``.git-blame-ignore-revs`` blob in the first query.
IGNORE_ALIAS = "ignoreRevs"
#: A ``.git-blame-ignore-revs`` longer than this is not read (GitHub's ``Blob.text`` is cut anyway).
MAX_IGNORE_BYTES = 512 * 1024

_RANGE_FIELDS = (
    "ranges { startingLine endingLine age commit { oid committedDate author { name user { login } } "
    "associatedPullRequests(first: 1) { nodes { number title mergedAt author { login } } } } }"
)


def graphql_url(api_url: str) -> str:
    """The GraphQL endpoint for a REST root ``api_url`` (``https://HOST/api/v3`` -> ``https://HOST/api/graphql``)."""
    root = api_url.rstrip("/")
    if root.endswith("/api/v3"):
        return root[: -len("/v3")] + GRAPHQL_PATH
    return root + GRAPHQL_PATH


def blame_query(count: int, *, ignore_revs: bool = False) -> str:
    """The GraphQL query blaming ``count`` files (variables ``$p0``..) at the first parent of
    ``$oid`` in ``$owner/$name`` (the variable ``$parent``: ``"<oid>~1"``, see :func:`parent_revision`).

    The merge commit (``object``) answers its first parent's ``oid``, ``committedDate`` and
    pull request; each file's blame is under an object of its own, aliased ``f0``, ``f1``...
    (``object(expression: $parent) { ... on Commit { blame(path: $p0) ... } }``): GitHub's
    ``Commit.blame`` is non-null (``Blame!``), so an error about one file's blame (a path the
    base branch renamed since: ``NOT_FOUND``) nulls its nearest nullable ancestor, which is
    then that file's ``fN`` alone, not a commit shared by every file of the request. The file
    there, as a blob (``text``, ``isTruncated``, ``isBinary``), is ``t0``, ``t1``... (variables
    ``$t0``.. name it: ``"<oid>~1:<path>"``, see :func:`parent_expression`). With
    ``ignore_revs``, the repository's :data:`IGNORE_ALIAS` is the blob ``$ignore`` names
    (``"<oid>:.git-blame-ignore-revs"``), with its ``text``, ``byteSize`` and ``isTruncated``."""
    paths = ", ".join(f"$p{i}: String!, $t{i}: String!" for i in range(count))
    blames = "".join(
        f"f{i}: object(expression: $parent) {{ ... on Commit {{ blame(path: $p{i}) {{ {_RANGE_FIELDS} }} }} }} " for i in range(count)
    )
    texts = "".join(f"t{i}: object(expression: $t{i}) {{ ... on Blob {{ text isTruncated isBinary }} }} " for i in range(count))
    ignore = f"{IGNORE_ALIAS}: object(expression: $ignore) {{ ... on Blob {{ text byteSize isTruncated }} }} " if ignore_revs else ""
    return (
        f"query($owner: String!, $name: String!, $oid: GitObjectID!, $parent: String!, "
        f"{'$ignore: String!, ' if ignore_revs else ''}{paths}) {{ "
        f"repository(owner: $owner, name: $name) {{ {ignore}{texts}{blames}object(oid: $oid) {{ ... on Commit {{ "
        "parents(first: 1) { nodes { oid committedDate associatedPullRequests(first: 1) { nodes { number } } } } "
        "} } } }"
    )


def merge_commit(repository: Mapping[str, Any], count: int, failed: Collection[str] = ()) -> Mapping[str, Any] | None:
    """The merge commit of a :func:`blame_query` answer's ``repository`` (its ``object``), with each
    file's blame (``fN``'s ``blame``) set on its first parent as ``fN``, the shape
    :func:`facts_from_answers` reads: ``{"parents": {"nodes": [{..., "f0": {"ranges": [...]}}]}}``.
    A file among ``failed`` (aliases an ``errors`` entry names), or whose object is ``null``,
    has no blame. ``None`` without the commit; the parent is left as it is when it is none."""
    commit = repository.get("object")
    if not isinstance(commit, Mapping):
        return None
    nodes = (commit.get("parents") or {}).get("nodes") or []
    if not nodes or not isinstance(nodes[0], Mapping):
        return commit
    parent = dict(nodes[0])
    for i in range(count):
        node = repository.get(f"f{i}")
        blame = node.get("blame") if isinstance(node, Mapping) and f"f{i}" not in failed else None
        if isinstance(blame, Mapping):
            parent[f"f{i}"] = blame
    return {**commit, "parents": {**commit["parents"], "nodes": [parent, *nodes[1:]]}}


def wanted_files(lines: Sequence[ChangedLine], limit: int = MAX_FILES) -> list[str]:
    """The old paths of ``lines`` to blame: those with the most traced lines first, at most ``limit``."""
    counts: dict[str, int] = {}
    for line in lines:
        counts[line.path] = counts.get(line.path, 0) + 1
    return sorted(counts, key=lambda p: (-counts[p], p))[:limit]


async def fetch_blame(client: Any, snapshot: PullRequestSnapshot, *, deadline: float = DEADLINE_S) -> HistoryFacts | None:
    """History facts for the traced lines of the merged pull request ``snapshot``, or ``None``.

    ``client`` is the job's :class:`bot.app.github.GitHubClient`. ``None`` when there is
    nothing worth blaming (no traced line, no ``merge_commit_sha``) or when the blame could
    not be read (logged); a :class:`HistoryFacts` with status ``"no-base"`` when the commit
    before the merge belongs to the pull request itself (a rebase merge of several commits,
    whose base this query cannot see). Never raises, except ``asyncio.CancelledError``.
    """
    traced = trace_plan(snapshot.files).to_blame
    if not traced or not snapshot.merge_commit_sha:
        return None
    files = wanted_files(traced)
    where = f"{snapshot.repository}#{snapshot.number}"
    try:
        owner, name = split_repository(snapshot.repository)
        batches = [files[i : i + FILES_PER_QUERY] for i in range(0, len(files), FILES_PER_QUERY)]
        asked = await asyncio.wait_for(
            asyncio.gather(*(_ask(client, owner, name, snapshot.merge_commit_sha, batch, ignore_revs=i == 0)
                             for i, batch in enumerate(batches))), deadline
        )  # fmt: skip
        ignored = _ignored(asked[0][2], where)
        patches: dict[str, str | None] = {}
        for f in snapshot.files:
            patches.setdefault(f.previous_filename or f.filename, f.patch)
        at_parent = {path: _lines_at_parent(patches.get(path), blob) for _, _, _, texts in asked for path, blob in texts.items()}
        return facts_from_answers(
            [(paths, commit) for paths, commit, _, _ in asked], traced, own=snapshot.number, ignored=ignored, at_parent=at_parent,
        )
    except asyncio.TimeoutError:
        log.warning("%s: GitHub's blame did not answer within %.0fs; the guide is built without it", where, deadline)
    except Exception as exc:  # noqa: BLE001 -- an optional read: the guide is built without it
        log.warning("%s: GitHub's blame could not be read (%s); the guide is built without it", where, exc)
    return None


def parent_revision(oid: str) -> str:
    """The revision expression of the first parent of commit ``oid`` (``"<oid>~1"``), which
    ``Repository.object(expression:)`` resolves to that commit."""
    return f"{oid}~1"


def parent_expression(oid: str, path: str) -> str:
    """The revision expression of ``path`` at the first parent of commit ``oid`` (``"<oid>~1:<path>"``,
    git's rev-parse syntax, which ``Repository.object(expression:)`` takes)."""
    return f"{oid}~1:{path}"


async def _ask(
    client: Any, owner: str, name: str, oid: str, paths: Sequence[str], *, ignore_revs: bool = False
) -> tuple[Sequence[str], Mapping[str, Any], Any, dict[str, Any]]:
    """POST one blame query; returns ``(paths, the Commit object of the merge, the ignore-revs
    blob or None, {path: its blob at the parent or None})``, the commit as :func:`merge_commit`
    gives it. Raises ``ValueError`` for GraphQL ``errors`` (other than about the ignore-revs
    blob, a file's blob or a file's blame alone, which are then ``None`` or left out) or an
    answer without the commit."""
    variables: dict[str, Any] = {"owner": owner, "name": name, "oid": oid, "parent": parent_revision(oid)}
    if ignore_revs:
        variables["ignore"] = f"{oid}:{IGNORE_REVS_FILE}"
    variables.update({f"p{i}": p for i, p in enumerate(paths)})
    variables.update({f"t{i}": parent_expression(oid, p) for i, p in enumerate(paths)})
    url = graphql_url(getattr(client, "api_url", ""))
    query = blame_query(len(paths), ignore_revs=ignore_revs)
    # Optional: not repeated after a 5xx, a time-out or a rate limit, though a query could be:
    # a blame is an extra, and a failing endpoint asked again by every batch cost up to 4
    # requests each, past the few a pull request's history may spend.
    answer = await client.post(url, data={"query": query, "variables": variables}, optional=True)
    if not isinstance(answer, Mapping):
        raise ValueError("the GraphQL answer is not an object")
    errors = answer.get("errors")
    # Errors about one file (its blob, its blame) or the ignore-revs blob cost that file or
    # that blob alone; any other is the whole request's.
    files = {f"f{i}" for i in range(len(paths))}
    blobs = {IGNORE_ALIAS, *(f"t{i}" for i in range(len(paths)))}
    one_file = isinstance(errors, list) and all(_about(e, blobs | files) for e in errors)
    if errors and not one_file:
        first = errors[0] if isinstance(errors, list) and errors and isinstance(errors[0], Mapping) else {}
        raise ValueError(f"GraphQL errors: {first.get('message') or errors!r}"[:300])
    repository = (answer.get("data") or {}).get("repository") or {}
    failed = {alias for alias in blobs | files if errors and any(_about(e, {alias}) for e in errors)}
    commit = merge_commit(repository, len(paths), failed)
    if not isinstance(commit, Mapping):
        raise ValueError(f"no commit {oid} in {owner}/{name}")
    texts = {p: None if f"t{i}" in failed else repository.get(f"t{i}") for i, p in enumerate(paths)}
    return paths, commit, None if IGNORE_ALIAS in failed else repository.get(IGNORE_ALIAS), texts


def _about(error: Any, aliases: set[str]) -> bool:
    """Whether a GraphQL error entry is about one of the blobs ``aliases`` names (its ``path`` names the alias)."""
    path = error.get("path") if isinstance(error, Mapping) else None
    return isinstance(path, list) and any(alias in path for alias in aliases)


def _lines_at_parent(patch: str | None, blob: Any) -> dict[int, int]:
    """:func:`bot.engine.history.drift.lines_at_parent` of a file's patch in its blob at the
    parent; ``{}`` (nothing said of the file) without a readable, whole text."""
    if not isinstance(blob, Mapping) or not isinstance(blob.get("text"), str) or blob.get("isTruncated") or blob.get("isBinary"):
        return {}
    return lines_at_parent(patch, blob["text"])


def _ignored(blob: Any, where: str) -> tuple[str, ...]:
    """The revisions an ignore-revs blob lists (``()`` without one, or for one too large or cut)."""
    if not isinstance(blob, Mapping) or not isinstance(blob.get("text"), str):
        return ()
    size = blob.get("byteSize")
    if blob.get("isTruncated") or (isinstance(size, int) and size > MAX_IGNORE_BYTES):
        log.warning("%s: %s is too large to read; lines are blamed without it", where, IGNORE_REVS_FILE)
        return ()
    return listed_revisions(blob["text"])


def facts_from_answers(
    answers: Sequence[tuple[Sequence[str], Mapping[str, Any]]],
    lines: Sequence[ChangedLine],
    *,
    own: int,
    window_days: float = WINDOW_DAYS,
    ignored: Sequence[str] = (),
    at_parent: Mapping[str, Mapping[int, int]] | None = None,
) -> HistoryFacts | None:
    """:class:`HistoryFacts` from the merge commits' objects of the blame queries
    (``(paths, {"parents": {"nodes": [{... "f0": {"ranges": [...]}}]}})``) for ``lines``.

    As :mod:`bot.sources.githistory` gives them: one :class:`LineOrigin` per traced line a
    range covers; a commit older than ``window_days`` before the base commit is no origin
    (``commit=""``); a commit with a merged pull request names it (``pull``), with its
    ``merged_at`` (Unix seconds), author login (else the commit author's login, else
    name) and title. A line whose commit ``ignored`` lists (full hashes or their prefixes,
    from ``.git-blame-ignore-revs``) has no origin either: the revision only re-formatted
    it, and GitHub's blame cannot see through it to who wrote it. ``at_parent``, when given,
    maps each blamed path's traced line numbers (the patch's, at the merge base) to the same
    lines' numbers at the parent (:func:`bot.engine.history.drift.lines_at_parent`): a line
    it does not place (the base branch changed it since) has no origin and is left out,
    and a path it does not name is read as it is. ``None`` when no traced
    line was covered (nothing was blamed);
    status ``"no-base"`` when the parent belongs to the pull request ``own`` itself.
    Raises ``ValueError`` when the merge commit has no parent.
    """
    covered: dict[tuple[str, int], Mapping[str, Any]] = {}
    since = 0
    # Sorted lines per path, found per range by bisection, and the listed revisions by length:
    # a 20,000-line deletion blamed in thousands of ranges, against a 512 KiB ignore file,
    # must not cost ranges x lines x revisions steps (this runs on the app's event loop).
    by_path: dict[str, list[int]] = {}
    for line in lines:
        by_path.setdefault(line.path, []).append(line.line)
    by_path = {path: sorted(set(numbers)) for path, numbers in by_path.items()}
    listed = {rev.lower() for rev in ignored}
    lengths = sorted({len(rev) for rev in listed})
    for paths, commit in answers:
        parents = (commit.get("parents") or {}).get("nodes") or []
        if not parents or not isinstance(parents[0], Mapping):
            raise ValueError("the merge commit has no parent")
        parent = parents[0]
        if own in _numbers(parent):
            return HistoryFacts("no-base", detail="the commit before the merge belongs to the pull request (a rebase merge)")
        base_time = _unix(parent.get("committedDate"))
        since = max(0, int(base_time - window_days * 86400)) if base_time and window_days else 0
        for i, path in enumerate(paths):
            wanted = by_path.get(path, [])
            placed = at_parent.get(path) if at_parent is not None else None
            if placed is not None:
                # Blamed at the parent's numbers, told at the patch's: {parent line: patch line}.
                back = {placed[n]: n for n in wanted if n in placed}
                wanted = sorted(back)
            blame = parent.get(f"f{i}") or {}
            for r in blame.get("ranges") or ():
                if not isinstance(r, Mapping):
                    continue
                first, last = r.get("startingLine"), r.get("endingLine")
                if not isinstance(first, int) or not isinstance(last, int):
                    continue
                for n in wanted[bisect_left(wanted, first) : bisect_right(wanted, last)]:
                    covered[(path, back[n] if placed is not None else n)] = r.get("commit") or {}
    if not covered:
        return None
    origins: list[LineOrigin] = []
    pulls: dict[int, PullOrigin] = {}
    for (path, n), commit in sorted(covered.items()):
        sha = str(commit.get("oid") or "")
        committed = _unix(commit.get("committedDate"))
        if since and committed and committed < since:
            sha = ""  # older than the search reaches, as the offline source says it
        elif sha and any(sha[:n].lower() in listed for n in lengths):
            sha = ""  # a listed sweep: as offline, a line git cannot see through one to is unknown
        number = None
        if sha:
            node = _merged_pull(commit)
            if node is not None:
                number = int(node["number"])
                if number not in pulls:
                    author = (node.get("author") or {}).get("login") or _commit_author(commit)
                    merged = _unix(node.get("mergedAt")) or committed
                    pulls[number] = PullOrigin(number, sha, merged, str(author), str(node.get("title") or ""))
        origins.append(LineOrigin(path, n, sha, number))
    return HistoryFacts("ok", tuple(origins), pulls, since)


def _numbers(commit: Mapping[str, Any]) -> set[int]:
    nodes = (commit.get("associatedPullRequests") or {}).get("nodes") or []
    return {n["number"] for n in nodes if isinstance(n, Mapping) and isinstance(n.get("number"), int)}


def _merged_pull(commit: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The merged pull request that brought ``commit`` to the branch (an open one it is also on is none)."""
    for node in (commit.get("associatedPullRequests") or {}).get("nodes") or []:
        if isinstance(node, Mapping) and isinstance(node.get("number"), int) and node.get("mergedAt"):
            return node
    return None


def _commit_author(commit: Mapping[str, Any]) -> str:
    author = commit.get("author") or {}
    return str((author.get("user") or {}).get("login") or author.get("name") or "")


def _unix(value: Any) -> int:
    """Unix seconds of an ISO 8601 time (GitHub's ``DateTime``), 0 when absent or unreadable."""
    if not isinstance(value, str) or not value:
        return 0
    try:
        return int(datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp())
    except ValueError:
        return 0
