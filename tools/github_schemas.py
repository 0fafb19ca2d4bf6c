"""Regenerate ``tests/data/github_schemas.json``: GitHub's own schemas for what prguide exchanges with GitHub.

Reads GitHub's published descriptions from the npm registry (``npm pack``, nothing else):
the REST API description ``@octokit/openapi`` (``generated/api.github.com.json``) and the
webhook description ``@octokit/openapi-webhooks`` (same file name), at the versions pinned
below. Keeps only

- the response schemas of the REST operations the sandbox serves (``OPERATIONS``), by
  status code, plus GitHub's generic error schemas, and
- the request-body schemas of the webhook events prguide receives (``WEBHOOKS``),

as plain JSON Schema (draft 2020-12): the components they use are copied into one
``$defs`` table (every ``$ref`` points into the file itself), OpenAPI 3.0's
``nullable: true`` becomes a ``"null"`` type, and what only documents (descriptions,
examples, formats) is dropped, so the file stays small.

    python tools/github_schemas.py [--rest FILE] [--webhooks FILE] [--out FILE]

``--rest``/``--webhooks`` take an already downloaded package (``.tgz``) or its
``api.github.com.json``; without them the pinned versions are fetched with ``npm pack``
into a temporary folder. Exit status 0 when written, 1 (one line on stderr) otherwise.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "tests" / "data" / "github_schemas.json"

REST_PACKAGE = "@octokit/openapi"
REST_VERSION = "23.0.2"
WEBHOOKS_PACKAGE = "@octokit/openapi-webhooks"
WEBHOOKS_VERSION = "12.1.0"
#: The description of github.com inside both packages (the others are GHES/GHEC).
MEMBER = "package/generated/api.github.com.json"

#: The REST operations the sandbox answers (bot/sandbox/rest.py), as ``METHOD /path/template``.
OPERATIONS = (
    "GET /app",
    "GET /app/installations",
    "GET /app/installations/{installation_id}",
    "POST /app/installations/{installation_id}/access_tokens",
    "GET /installation/repositories",
    "DELETE /installation/token",
    "GET /repos/{owner}/{repo}",
    "GET /repos/{owner}/{repo}/installation",
    "GET /repos/{owner}/{repo}/pulls",
    "GET /repos/{owner}/{repo}/pulls/{pull_number}",
    "GET /repos/{owner}/{repo}/pulls/{pull_number}/files",
    "GET /repos/{owner}/{repo}/pulls/{pull_number}/reviews",
    "GET /repos/{owner}/{repo}/pulls/{pull_number}/comments",
    "POST /repos/{owner}/{repo}/pulls/{pull_number}/comments/{comment_id}/replies",
    "GET /repos/{owner}/{repo}/pulls/comments/{comment_id}",
    "POST /repos/{owner}/{repo}/pulls/comments/{comment_id}/reactions",
    "GET /repos/{owner}/{repo}/issues/{issue_number}",
    "GET /repos/{owner}/{repo}/issues/{issue_number}/comments",
    "POST /repos/{owner}/{repo}/issues/{issue_number}/comments",
    "GET /repos/{owner}/{repo}/issues/comments/{comment_id}",
    "PATCH /repos/{owner}/{repo}/issues/comments/{comment_id}",
    "DELETE /repos/{owner}/{repo}/issues/comments/{comment_id}",
    "GET /repos/{owner}/{repo}/issues/comments/{comment_id}/reactions",
    "POST /repos/{owner}/{repo}/issues/comments/{comment_id}/reactions",
    "GET /repos/{owner}/{repo}/labels",
    "POST /repos/{owner}/{repo}/labels",
    "GET /repos/{owner}/{repo}/labels/{name}",
    "PATCH /repos/{owner}/{repo}/labels/{name}",
    "GET /repos/{owner}/{repo}/issues/{issue_number}/labels",
    "POST /repos/{owner}/{repo}/issues/{issue_number}/labels",
    "PUT /repos/{owner}/{repo}/issues/{issue_number}/labels",
    "DELETE /repos/{owner}/{repo}/issues/{issue_number}/labels/{name}",
    "GET /repos/{owner}/{repo}/issues/{issue_number}/events",
    "GET /repos/{owner}/{repo}/collaborators/{username}/permission",
    "GET /repos/{owner}/{repo}/contents/{path}",
)
#: Where the published description contradicts itself: the path in the output, the schema put
#: there instead, and why. Each makes one schema agree with the description's own other schemas.
CORRECTIONS = (
    (
        ("rest", "operations", "GET /app/installations", "responses", "200"),
        {"type": "array", "items": {"$ref": "#/$defs/installation"}},
        "List installations for the authenticated app: its inline copy of the installation schema has "
        "account allOf [simple-user, enterprise] (both at once); the installation component, used by every "
        "other installation operation, says anyOf",
    ),
    (
        ("rest", "$defs", "pull-request-simple", "properties", "labels", "items", "properties", "description"),
        {"type": ["string", "null"]},
        "pull-request-simple: a label's description is a non-null string here, but nullable in the label, "
        "pull-request and webhook schemas of the same labels (a label without a description has null)",
    ),
)
#: Error bodies for statuses an operation does not list (GitHub answers them anyway: 403, 429, 5xx...).
ERROR_SCHEMAS = ("basic-error", "validation-error")

#: The webhook events prguide acts on (its routes in bot/features and bot/commands, and the installation
#: changes after which bot/app/server.py forgets a token), ``event.action`` as X-GitHub-Event and ``action`` name them.
#: The ``repository`` actions are the visibility changes bot/features/visibility.py follows.
WEBHOOKS = (
    "ping",
    "installation.created",
    "installation.deleted",
    "installation.suspend",
    "installation.unsuspend",
    "installation.new_permissions_accepted",
    "installation_repositories.added",
    "installation_repositories.removed",
    "pull_request.opened",
    "pull_request.closed",
    "pull_request.synchronize",
    "issue_comment.created",
    "issue_comment.edited",
    "pull_request_review.submitted",
    "pull_request_review_comment.created",
    "repository.privatized",
    "repository.publicized",
    "repository.deleted",
    "repository.renamed",
    "repository.transferred",
)

#: Keywords that only document; dropped from every schema object.
_DOC_ONLY = frozenset(
    {"description", "example", "examples", "title", "summary", "externalDocs", "format", "deprecated",
     "readOnly", "writeOnly", "default", "discriminator", "xml", "contentMediaType"}
)
#: Keywords whose value is a map of names to schemas (the names are data, not keywords).
_SCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
_COMPONENT = re.compile(r"^#/components/schemas/(.+)$")


class SchemaError(Exception):
    """A package or description that is not what this script expects."""


def npm_pack(spec: str, folder: Path) -> Path:
    """``npm pack SPEC`` into ``folder``; returns the tarball. Raises :class:`SchemaError` on failure."""
    done = subprocess.run(["npm", "pack", spec, "--silent"], cwd=folder, capture_output=True, text=True, check=False)
    name = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ""
    if done.returncode != 0 or not (folder / name).is_file():
        raise SchemaError(f"npm pack {spec} failed: {(done.stderr or done.stdout).strip()[:300]}")
    return folder / name


def read_description(path: Path) -> dict[str, Any]:
    """The github.com description from a package tarball or an ``api.github.com.json``."""
    if path.suffix in (".tgz", ".gz"):
        with tarfile.open(path) as archive:
            member = archive.extractfile(MEMBER)
            if member is None:
                raise SchemaError(f"{path}: no {MEMBER}")
            return json.load(member)
    return json.loads(path.read_text(encoding="utf-8"))


def _clean(node: Any, refs: set[str]) -> Any:
    """``node`` as JSON Schema 2020-12, documentation dropped; collects component names into ``refs``."""
    if isinstance(node, list):
        return [_clean(item, refs) for item in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in _DOC_ONLY or key.startswith("x-") or key == "nullable":
            continue
        if key == "$ref":
            found = _COMPONENT.match(value)
            if found is None:
                raise SchemaError(f"unexpected $ref {value!r}")
            refs.add(found.group(1))
            out[key] = f"#/$defs/{found.group(1)}"
        elif key in _SCHEMA_MAPS and isinstance(value, dict):
            out[key] = {name: _clean(item, refs) for name, item in value.items()}
        else:
            out[key] = _clean(value, refs)
    if node.get("nullable") is True:
        out = _nullable(out)
    return out


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    """OpenAPI 3.0's ``nullable: true`` in JSON Schema terms: ``null`` is valid too."""
    kind = schema.get("type")
    if isinstance(kind, str) and "$ref" not in schema and not any(k in schema for k in ("allOf", "anyOf", "oneOf")):
        schema = {**schema, "type": [kind, "null"]}
        if isinstance(schema.get("enum"), list) and None not in schema["enum"]:
            schema["enum"] = [*schema["enum"], None]
        return schema
    return {"anyOf": [schema, {"type": "null"}]}


def _resolve(description: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    """Follow a ``$ref`` to ``#/components/...`` (responses, request bodies) once."""
    while "$ref" in node:
        parts = node["$ref"].removeprefix("#/").split("/")
        target: Any = description
        for part in parts:
            target = target[part]
        node = target
    return node


def _json_schema(description: dict[str, Any], response: dict[str, Any], refs: set[str]) -> Any:
    content = _resolve(description, response).get("content") or {}
    for media, body in content.items():
        if media == "application/json" or media.endswith("+json"):
            return _clean(body.get("schema", {}), refs)
    return None


def extract(rest: dict[str, Any], webhooks: dict[str, Any]) -> dict[str, Any]:
    """The pinned file's content from the two descriptions; raises :class:`SchemaError` for a missing entry."""
    rest_refs: set[str] = set()
    operations: dict[str, Any] = {}
    for key in OPERATIONS:
        method, path = key.split(" ", 1)
        operation = (rest["paths"].get(path) or {}).get(method.lower())
        if operation is None:
            raise SchemaError(f"{REST_PACKAGE} has no operation {key}")
        responses = {
            status: _json_schema(rest, response, rest_refs) for status, response in sorted(operation["responses"].items())
        }
        operations[key] = {"operationId": operation["operationId"], "responses": responses}
    errors = {}
    for name in ERROR_SCHEMAS:
        rest_refs.add(name)
        errors[name] = {"$ref": f"#/$defs/{name}"}
    hook_refs: set[str] = set()
    events: dict[str, Any] = {}
    for key in WEBHOOKS:
        name = key.replace("_", "-").replace(".", "-")
        hook = (webhooks["webhooks"].get(name) or {}).get("post")
        if hook is None:
            raise SchemaError(f"{WEBHOOKS_PACKAGE} has no webhook {name}")
        body = _resolve(webhooks, hook["requestBody"])["content"]["application/json"]["schema"]
        events[key] = _clean(body, hook_refs)
    rest_refs.add("installation")  # named by a correction
    out = {
        "comment": "Generated by tools/github_schemas.py from GitHub's published descriptions; do not edit.",
        "sources": {
            "rest": {"package": REST_PACKAGE, "version": REST_VERSION, "file": MEMBER.removeprefix("package/"),
                     "openapi": rest.get("openapi"), "info_version": rest["info"].get("version")},
            "webhooks": {"package": WEBHOOKS_PACKAGE, "version": WEBHOOKS_VERSION, "file": MEMBER.removeprefix("package/"),
                         "openapi": webhooks.get("openapi"), "info_version": webhooks["info"].get("version")},
        },
        "rest": {"operations": operations, "errors": errors, "$defs": _closure(rest, rest_refs)},
        "webhooks": {"events": events, "$defs": _closure(webhooks, hook_refs)},
        "corrections": [],
    }
    for path, schema, why in CORRECTIONS:
        target: Any = out
        for part in path[:-1]:
            target = target[part]
        if path[-1] not in target:
            raise SchemaError(f"nothing to correct at {'/'.join(path)}: has the description changed?")
        target[path[-1]] = schema
        out["corrections"].append({"at": "/".join(path), "why": why})
    return out


def _closure(description: dict[str, Any], refs: set[str]) -> dict[str, Any]:
    """Every component schema named in ``refs`` and those they name in turn, cleaned, sorted by name."""
    schemas = description["components"]["schemas"]
    done: dict[str, Any] = {}
    todo = sorted(refs)
    while todo:
        name = todo.pop()
        if name in done:
            continue
        if name not in schemas:
            raise SchemaError(f"no component schema {name!r}")
        more: set[str] = set()
        done[name] = _clean(schemas[name], more)
        todo.extend(sorted(more - done.keys()))
    return dict(sorted(done.items()))


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point (see the module text)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rest", type=Path, help=f"{REST_PACKAGE} tarball or api.github.com.json")
    parser.add_argument("--webhooks", type=Path, help=f"{WEBHOOKS_PACKAGE} tarball or api.github.com.json")
    parser.add_argument("--out", type=Path, default=OUT, help="where to write (default tests/data/github_schemas.json)")
    args = parser.parse_args(argv)
    try:
        with tempfile.TemporaryDirectory(prefix="github-schemas-") as tmp:
            rest_path = args.rest or npm_pack(f"{REST_PACKAGE}@{REST_VERSION}", Path(tmp))
            hooks_path = args.webhooks or npm_pack(f"{WEBHOOKS_PACKAGE}@{WEBHOOKS_VERSION}", Path(tmp))
            data = extract(read_description(rest_path), read_description(hooks_path))
    except (OSError, ValueError, KeyError, tarfile.TarError, SchemaError) as exc:
        print(f"github_schemas: {exc}", file=sys.stderr)
        return 1
    args.out.write_text(json.dumps(data, indent=None, separators=(",", ":"), sort_keys=False) + "\n", encoding="utf-8")
    print(f"{args.out}: {len(data['rest']['operations'])} operations, {len(data['webhooks']['events'])} webhook events, "
          f"{args.out.stat().st_size // 1024} KiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
