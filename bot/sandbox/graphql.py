"""``POST /graphql``: the part of GitHub's GraphQL API prguide asks, the blame of files at a commit.

GitHub docs: "Forming calls with GraphQL" (a JSON body ``{"query", "variables"}``, an answer
``{"data"}`` plus ``{"errors": [{"type", "path", "message", "locations"}]}`` when a part
could not be resolved) and the reference's objects ``Repository.object``, ``Commit``
(``oid``, ``committedDate``, ``author``, ``parents``, ``associatedPullRequests``,
``blame(path)``), ``Blob`` (``oid``, ``text``, ``byteSize``, ``isTruncated``, ``isBinary``: ``object(expression:
"<commit>:<path>")``, the commit perhaps followed by rev-parse's ``~N``/``^N``, as in
``"<commit>~1:<path>"`` for the file at its first parent) and ``Blame``/``BlameRange`` (``startingLine``, ``endingLine``, ``age``,
``commit``): https://docs.github.com/en/graphql/reference/objects#blame.

A small GraphQL reader runs the query: fields with aliases and arguments (strings,
numbers, names, ``$variables``), selection sets and ``... on Type`` fragments. For a
repository read from a local git repository (``prguide sandbox --repo``) a commit is
the repository's own (``git log``) and a blame is ``git blame --porcelain
--first-parent``; a commit's pull request is the one its subject names (``... (#N)`` or
``Merge pull request #N``, as :func:`bot.sources.githistory.pull_number` reads it).
A repository served from bundles alone knows the merge commits of its pull requests,
each with one parent, and blames every file with no ranges. An unknown repository,
commit or file is ``null`` with an ``errors`` entry (``NOT_FOUND``), as on GitHub; as there,
a non-null field's ``null`` (``Commit.blame`` is ``Blame!``) nulls its nearest nullable
ancestor instead (the ``object`` holding the blame, or a connection's node), the error's
``path`` still naming the field. ``object(expression: "<oid>~1")`` is a commit's first
parent; a revision there is none of is ``null`` without an error.
"""

from __future__ import annotations

import asyncio
import re
import subprocess
from collections.abc import Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from aiohttp import web

from bot.sandbox.errors import ApiError
from bot.sandbox.handling import CALLER, json_response, needs, permission, read_body, state_of
from bot.sandbox.records import Repository
from bot.sandbox.state import SandboxState

_TOKEN = re.compile(r'\s*(?:(\.\.\.)|([{}()\[\]:!$=@,])|("(?:[^"\\]|\\.)*")|(-?\d+(?:\.\d+)?)|([_A-Za-z][_0-9A-Za-z]*))')
_SHA = re.compile(r"^[0-9a-f]{4,64}$")
# A commit named by its hash and then, perhaps, ancestors (``~1``, ``^2``) as rev-parse reads them.
_REV = re.compile(r"^[0-9a-f]{4,64}(?:[~^][0-9]{0,3})*$")
_NO_PARENT = "0" * 40


class GraphQLError(Exception):
    """A query the reader cannot read (answered 200 with ``errors``, as GitHub does for a parse error)."""


# ----- reading the query --------------------------------------------------------------


def _tokens(text: str) -> list[str]:
    out, pos = [], 0
    text = re.sub(r"#[^\n]*", "", text)
    while pos < len(text):
        if text[pos:].strip() == "":
            break
        m = _TOKEN.match(text, pos)
        if m is None:
            raise GraphQLError(f"Parse error on {text[pos:pos + 20].strip()!r}")
        out.append(m.group(0).strip())
        pos = m.end()
    return out


class _Reader:
    def __init__(self, text: str, variables: Mapping[str, Any]):
        self.tokens = [t for t in _tokens(text) if t != ","]
        self.i = 0
        self.variables = variables

    def peek(self) -> str:
        return self.tokens[self.i] if self.i < len(self.tokens) else ""

    def take(self, expected: str | None = None) -> str:
        token = self.peek()
        if not token or (expected is not None and token != expected):
            raise GraphQLError(f"Parse error: expected {expected or 'more'}, found {token or 'the end'!r}")
        self.i += 1
        return token

    def document(self) -> list:
        if self.peek() in ("query", "mutation"):
            if self.take() == "mutation":
                raise GraphQLError("the sandbox answers queries only")
            if self.peek() not in ("{", "("):
                self.take()  # the operation's name
            if self.peek() == "(":
                while self.take() != ")":
                    pass  # variable definitions: the values come from ``variables``
        return self.selections()

    def selections(self) -> list:
        self.take("{")
        out = []
        while self.peek() != "}":
            if self.peek() == "...":
                self.take()
                self.take("on")
                out.append(("on", self.take(), self.selections()))
                continue
            name = self.take()
            alias = name
            if self.peek() == ":":
                self.take()
                name = self.take()
            args = self.arguments() if self.peek() == "(" else {}
            sub = self.selections() if self.peek() == "{" else None
            out.append((alias, name, args, sub))
        self.take("}")
        return out

    def arguments(self) -> dict[str, Any]:
        self.take("(")
        args = {}
        while self.peek() != ")":
            name = self.take()
            self.take(":")
            args[name] = self.value()
        self.take(")")
        return args

    def value(self) -> Any:
        token = self.take()
        if token == "$":
            name = self.take()
            if name not in self.variables:
                raise GraphQLError(f"Variable ${name} is not given")
            return self.variables[name]
        if token.startswith('"'):
            return token[1:-1].encode().decode("unicode_escape")
        if re.fullmatch(r"-?\d+", token):
            return int(token)
        return {"true": True, "false": False, "null": None}.get(token, token)


# ----- the objects ----------------------------------------------------------------------


class _Context:
    """One query's answers so far: the ``errors`` entries and the git commands' results."""

    def __init__(self, state: SandboxState, installation_id: int | None = None):
        self.state = state
        self.installation_id = installation_id
        self.record: Repository | None = None
        self.errors: list[dict[str, Any]] = []
        self.commits: dict[str, dict[str, Any] | None] = {}

    def not_found(self, path: list[Any], message: str) -> None:
        self.errors.append({"type": "NOT_FOUND", "path": path, "locations": [{"line": 1, "column": 1}], "message": message})


def _git(git_dir: Path, *args: str) -> bytes | None:
    done = subprocess.run(["git", "-C", str(git_dir), *args], capture_output=True, check=False)
    return done.stdout if done.returncode == 0 else None


def _iso(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _commit(ctx: _Context, oid: str) -> dict[str, Any] | None:
    """``{oid, parents, committed, author, subject}`` of a commit of the served repository, or ``None``."""
    if oid in ctx.commits:
        return ctx.commits[oid]
    record = ctx.record
    found = None
    if record is not None and record.git_dir is not None:
        if _SHA.match(oid):
            out = _git(record.git_dir, "log", "-1", "--no-walk", "--format=%H%x00%P%x00%ct%x00%aN%x00%s", oid, "--")
            if out:
                sha, parents, committed, author, subject = out.decode("utf-8", "replace").rstrip("\n").split("\0", 4)
                if sha.startswith(oid):
                    found = {"oid": sha, "parents": parents.split(), "committed": int(committed or 0), "author": author, "subject": subject}
    elif record is not None:
        # Bundles alone: a pull request's merge commit, on a parent the sandbox knows nothing of.
        for bundle in record.pulls.values():
            pull = bundle["pull"]
            if oid and oid in (pull.get("merge_commit_sha"), _NO_PARENT):
                when = str(pull.get("merged_at") or "1970-01-01T00:00:00Z")
                seconds = datetime.fromisoformat(when.replace("Z", "+00:00")).timestamp()
                found = {"oid": oid, "parents": [] if oid == _NO_PARENT else [_NO_PARENT], "committed": int(seconds),
                         "author": str((pull.get("user") or {}).get("login") or ""), "subject": ""}  # fmt: skip
                break
    ctx.commits[oid] = found
    return found


def _pull_nodes(ctx: _Context, commit: Mapping[str, Any]) -> list[dict[str, Any]]:
    """``associatedPullRequests`` of a commit: the merged pull request its subject names."""
    from bot.sources.githistory import pull_number

    number = pull_number(str(commit.get("subject") or ""))
    if number is None:
        return []
    bundle = ctx.record.pulls.get(number) if ctx.record is not None else None
    pull = bundle["pull"] if bundle else {}
    return [{
        "number": number,
        "title": pull.get("title") or commit["subject"],
        "mergedAt": pull.get("merged_at") or _iso(commit["committed"]),
        "author": {"login": (pull.get("user") or {}).get("login") or commit["author"]},
    }]  # fmt: skip


def _blame(ctx: _Context, commit: Mapping[str, Any], path: str) -> dict[str, Any] | None:
    """``{"ranges": [...]}`` of ``path`` at ``commit``: consecutive lines of one commit make one range."""
    record = ctx.record
    if record is None or record.git_dir is None:
        return {"ranges": []}
    if path.startswith("-"):
        return None
    out = _git(record.git_dir, "blame", "--porcelain", "--first-parent", "--root", commit["oid"], "--", path)
    if out is None:
        return None
    from bot.sources.gitblame import parse_porcelain

    lines = parse_porcelain(out)
    newest = max((b.commit.committed for b in lines), default=0)
    ranges: list[dict[str, Any]] = []
    for b in lines:
        if ranges and ranges[-1]["commit"]["oid"] == b.commit.sha and ranges[-1]["endingLine"] == b.line - 1:
            ranges[-1]["endingLine"] = b.line
            continue
        ranges.append({"startingLine": b.line, "endingLine": b.line, "commit": {"oid": b.commit.sha}})
    for r in ranges:
        r["commit"] = _commit(ctx, r["commit"]["oid"]) or {"oid": r["commit"]["oid"], "parents": [], "committed": 0, "author": "", "subject": ""}
        # GitHub's age: 1 (old) to 10 (recent), here by days before the newest line.
        r["age"] = max(1, 10 - int((newest - r["commit"]["committed"]) // (30 * 86400)))
    return {"ranges": ranges}


def _revision(ctx: _Context, rev: str) -> dict[str, Any] | None:
    """The commit ``rev`` names (a hash, then perhaps ``~N`` / ``^N`` steps as rev-parse reads
    them: ``~N`` the N-th first-parent ancestor, ``^N`` the N-th parent), or ``None``."""
    if not _REV.match(rev):
        return None
    head = re.match(r"[0-9a-f]+", rev)
    found = _commit(ctx, head.group(0)) if head else None
    for step, digits in re.findall(r"([~^])([0-9]{0,3})", rev[head.end() if head else 0 :]):
        n = int(digits or 1)
        if found is None:
            return None
        if step == "^":
            if n:
                found = _commit(ctx, found["parents"][n - 1]) if len(found["parents"]) >= n else None
            continue
        for _ in range(n):
            found = _commit(ctx, found["parents"][0]) if found and found["parents"] else None
    return found


#: GitHub's ``Blob.text`` holds at most this many bytes (``isTruncated`` says when it was cut).
BLOB_TEXT_BYTES = 512 * 1024


def _blob(ctx: _Context, rev: str, path: str) -> dict[str, Any] | None:
    """``{oid, text, byteSize, isTruncated, isBinary}`` of ``path`` at commit ``rev`` (a hash,
    perhaps followed by ``~N``/``^N`` ancestry steps: ``<oid>~1`` is its first parent) of a
    git-served repository, or ``None`` (no such commit or file, or a repository served from bundles)."""
    record = ctx.record
    if record is None or record.git_dir is None or not _REV.match(rev) or not path or path.startswith("-"):
        return None
    data = _git(record.git_dir, "cat-file", "blob", f"{rev}:{path}")
    if data is None:
        return None
    binary = b"\0" in data[:8000]
    oid = (_git(record.git_dir, "rev-parse", "--verify", "-q", f"{rev}:{path}") or b"").decode().strip()
    return {"oid": oid, "text": None if binary else data[:BLOB_TEXT_BYTES].decode("utf-8", "replace"), "byteSize": len(data),
            "isTruncated": len(data) > BLOB_TEXT_BYTES, "isBinary": binary}  # fmt: skip


def _field(ctx: _Context, typename: str, obj: Any, name: str, args: Mapping[str, Any], path: list[Any]) -> tuple[str | None, Any]:
    """``(type of the value, value)`` of field ``name`` of ``obj`` (a ``typename``)."""
    if name == "__typename":
        return None, typename
    if typename == "Query" and name == "repository":
        record = ctx.state.repos.get(f"{args.get('owner')}/{args.get('name')}".lower())
        if record is not None and ctx.installation_id is not None:
            try:
                ctx.state.check_reach(ctx.installation_id, record, write=False)
            except ApiError:
                record = None  # another installation's private repository: as if there were none
        if record is None:
            ctx.not_found(path, f"Could not resolve to a Repository with the name '{args.get('owner')}/{args.get('name')}'.")
            return None, None
        ctx.record = record
        return "Repository", record
    if typename == "Repository":
        if name == "object" and ":" in str(args.get("expression") or ""):
            # "<rev>:<path>": a file's blob at a commit, ``null`` (no error) when there is none, as on GitHub.
            return "Blob", _blob(ctx, *str(args["expression"]).split(":", 1))
        if name == "object" and "expression" in args:
            # "<rev>", perhaps with ancestry steps ("<oid>~1": its first parent); ``null`` when there is none.
            return "Commit", _revision(ctx, str(args.get("expression") or ""))
        if name == "object":
            oid = str(args.get("oid") or "")
            found = _commit(ctx, oid)
            if found is None:
                ctx.not_found(path, f"Could not resolve to a Commit with the oid '{oid}'.")
            return "Commit", found
        if name in ("nameWithOwner", "name"):
            return None, obj.full_name if name == "nameWithOwner" else obj.name
    if typename == "Commit":
        if name == "oid":
            return None, obj["oid"]
        if name in ("committedDate", "authoredDate"):
            return None, _iso(obj["committed"])
        if name in ("message", "messageHeadline"):
            return None, obj["subject"]
        if name == "author":
            return "GitActor", {"name": obj["author"], "user": None}
        if name == "parents":
            nodes = [c for c in (_commit(ctx, p) for p in obj["parents"][: int(args.get("first") or 100)]) if c]
            return "CommitConnection", {"nodes": nodes, "totalCount": len(obj["parents"])}
        if name == "associatedPullRequests":
            nodes = _pull_nodes(ctx, obj)[: int(args.get("first") or 100)]
            return "PullRequestConnection", {"nodes": nodes, "totalCount": len(nodes)}
        if name == "blame":
            blame = _blame(ctx, obj, str(args.get("path") or ""))
            if blame is None:
                ctx.not_found(path, f"Could not resolve file for path '{args.get('path')}'.")
            return "Blame", blame
    if typename in ("CommitConnection", "PullRequestConnection", "Blame", "BlameRange", "GitActor", "PullRequest", "User", "Blob"):
        value = obj.get(name) if isinstance(obj, Mapping) else None
        kinds = {"nodes": typename.replace("Connection", ""), "ranges": "BlameRange", "commit": "Commit", "user": "User", "author": "User"}
        return kinds.get(name), value
    raise GraphQLError(f"Field '{name}' doesn't exist on type '{typename}'")


class _Null(Exception):
    """A non-null field answered ``null``: GitHub nulls its nearest nullable ancestor instead."""


#: Fields GitHub's schema marks non-null that may be ``null`` here: ``Commit.blame`` is ``Blame!``,
#: so a file that cannot be blamed nulls the object holding the blame (with the field's error).
_NON_NULL = {("Commit", "blame")}


def _run(ctx: _Context, typename: str, obj: Any, selections: list, path: list[Any]) -> dict[str, Any]:
    """The answer to ``selections`` on ``obj``. Raises :class:`_Null` when a non-null field is ``null``."""
    out: dict[str, Any] = {}
    for selection in selections:
        if selection[0] == "on" and len(selection) == 3:
            if selection[1] == typename:
                out.update(_run(ctx, typename, obj, selection[2], path))
            continue
        alias, name, args, sub = selection
        kind, value = _field(ctx, typename, obj, name, args, [*path, alias])
        non_null = (typename, name) in _NON_NULL
        if value is None and non_null:
            raise _Null
        if sub is None or value is None:
            out[alias] = value
        elif isinstance(value, list):
            # A connection's nodes are nullable one by one ([Commit]): a null stops at the node.
            out[alias] = [_nullable(ctx, kind or "", v, sub, [*path, alias, i]) for i, v in enumerate(value)]
        else:
            try:
                out[alias] = _run(ctx, kind or "", value, sub, [*path, alias])
            except _Null:
                if non_null:
                    raise
                out[alias] = None
    return out


def _nullable(ctx: _Context, typename: str, obj: Any, selections: list, path: list[Any]) -> dict[str, Any] | None:
    try:
        return _run(ctx, typename, obj, selections, path)
    except _Null:
        return None


def run_query(state: SandboxState, query: str, variables: Mapping[str, Any] | None = None, *,
              installation_id: int | None = None) -> dict[str, Any]:
    """GitHub's answer to ``query``: ``{"data": ...}``, with ``"errors"`` when something was not
    found or the query could not be read (then without ``data``). ``installation_id``: the
    caller's, which does not see another installation's private repositories."""
    ctx = _Context(state, installation_id)
    try:
        data: dict[str, Any] | None = _nullable(ctx, "Query", None, _Reader(query, variables or {}).document(), [])
    except GraphQLError as exc:
        return {"errors": [{"message": str(exc), "locations": [{"line": 1, "column": 1}]}]}
    return {"data": data, "errors": ctx.errors} if ctx.errors else {"data": data}


@needs("installation")
@permission(("contents", "read"))
async def graphql(request: web.Request) -> web.Response:
    """POST /graphql ("Forming calls with GraphQL"): runs the query (see the module docstring)."""
    body = await read_body(request)
    if not isinstance(body, Mapping) or not isinstance(body.get("query"), str):
        raise ApiError(400, "Problems parsing JSON", documentation_url="https://docs.github.com/graphql")
    variables = body.get("variables") if isinstance(body.get("variables"), Mapping) else {}
    caller = request[CALLER]
    answer = await asyncio.to_thread(run_query, state_of(request), body["query"], variables, installation_id=caller.installation_id)
    return json_response(answer)


GRAPHQL_ROUTES = [("POST", "/graphql", graphql)]
