"""Repositories, pull requests and their files, and repository contents ("Pulls", "Repository contents").

A mixin of :class:`bot.sandbox.state.SandboxState`: its methods use the state's
core (``repo``, ``now``, ``_new_id``, ``user_json``) and the stores it sets up.
"""

from __future__ import annotations

import base64
import copy
from collections.abc import Mapping
from pathlib import Path, PurePosixPath
from typing import Any

from bot import github_objects as objects
from bot.sandbox.errors import BundleError, not_found
from bot.sandbox.records import (
    CONTENTS_INLINE_MAX_BYTES,
    Repository,
    bundle_in_repo,
    git_blob_sha,
    iso,
    repo_of_bundle,
)
from bot.engine.snapshot import GITHUB_FILE_LIST_CAP


#: Repository fields the sandbox derives itself; a bundle's ``base.repo`` does not override them.
_DERIVED_REPO_FIELDS = frozenset({"id", "node_id", "name", "full_name", "private", "visibility", "owner", "default_branch"})


def _names_repo(bundle: Mapping[str, Any]) -> bool:
    """True when the bundle tells its repository (so it can be moved to another)."""
    try:
        repo_of_bundle(bundle)
    except BundleError:
        return False
    return True


class PullsMixin:
    """Repositories, pull requests and their files, and repository contents."""

    def repo(self, owner: str, name: str) -> Repository:
        """Return a known repository (names are case-insensitive, as on GitHub); 404 otherwise."""
        found = self.repos.get(f"{owner}/{name}".lower())
        if found is None:
            raise not_found("https://docs.github.com/rest/repos/repos#get-a-repository")
        return found

    def add_bundle(self, bundle: Mapping[str, Any], *, repo: str | None = None, git_dir: Path | None = None) -> str:
        """Serve one pull request bundle ``{"pull", "files", "reviews", "review_comments"}``.

        ``repo`` overrides the repository read by :func:`repo_of_bundle`; the pull
        request is then served as merged there (its ``base.repo`` and URLs rewritten by
        :func:`bundle_in_repo`). A bundle for a number already served replaces it. Labels in ``pull.labels`` become
        the issue's labels. Returns the repository's ``owner/name``; raises
        :class:`BundleError` on a malformed bundle.
        """
        if not isinstance(bundle, Mapping):
            raise BundleError("a bundle must be a JSON object")
        full_name = repo or repo_of_bundle(bundle)
        if full_name.count("/") != 1 or not all(full_name.split("/")):
            raise BundleError(f"repository must be 'owner/name', got {full_name!r}")
        if repo is not None and isinstance(bundle.get("pull"), Mapping) and _names_repo(bundle):
            bundle = bundle_in_repo(bundle, full_name)
        pull = bundle.get("pull")
        if not isinstance(pull, Mapping) or not isinstance(pull.get("number"), int):
            raise BundleError("bundle.pull must be an object with an integer 'number'")
        for key in ("files", "reviews", "review_comments"):
            if not isinstance(bundle.get(key, []), list):
                raise BundleError(f"bundle.{key} must be a list")
        stored = {
            "pull": copy.deepcopy(dict(pull)),
            "files": list(bundle.get("files") or []),
            "reviews": list(bundle.get("reviews") or []),
            "review_comments": list(bundle.get("review_comments") or []),
        }
        record = self._ensure_repo(full_name, pull, git_dir)
        record.pulls[pull["number"]] = stored
        self._seed_labels(record, pull["number"])
        return record.full_name

    def add_merged_pulls(self, repo: str, count: int, *, start: int = 1, files: int = 2) -> list[int]:
        """Serve ``count`` small merged pull requests in ``repo``, numbered ``start``, ``start + 1``, ...

        Cheap stand-ins for a repository's history (backfill, reconcile): each changes
        ``files`` Python files with a one-line patch, has no reviews, and was created,
        merged and last updated one minute after the one before it, starting at the
        sandbox clock minus ``count`` minutes. Returns the numbers; raises
        ``ValueError`` for a count outside 1..5000 or a bad repository name.
        """
        if not 1 <= count <= 5000 or files < 0:
            raise ValueError(f"count must be 1..5000 and files >= 0, got {count} and {files}")
        owner, _, name = repo.partition("/")
        if not owner or not name or "/" in name:
            raise BundleError(f"repository must be 'owner/name', got {repo!r}")
        first = self.now() - 60 * (count + 1)
        numbers = []
        for offset in range(count):
            number = start + offset
            at = iso(first + 60 * offset)
            merged = iso(first + 60 * offset + 30)
            pull = {
                "url": f"{self.api_url}/repos/{repo}/pulls/{number}",
                "html_url": f"{self.html_url}/{repo}/pull/{number}",
                "id": 500_000 + number,
                "number": number,
                "state": "closed",
                "title": f"Tidy module {number}",
                "body": f"Renames a helper in module {number}.",
                "user": {"login": "contributor", "type": "User"},
                "labels": [],
                "merged": True,
                "merged_at": merged,
                "closed_at": merged,
                "created_at": at,
                "updated_at": merged,
                "merge_commit_sha": f"{number:040x}",
                "changed_files": files,
                "base": {"ref": "main", "sha": "1" * 40, "repo": {
                    "full_name": repo, "name": name, "owner": {"login": owner, "type": "Organization"},
                    "default_branch": "main", "private": False}},
                "head": {"ref": f"tidy-{number}", "sha": f"{number:040x}"},
            }
            patch = f"@@ -1,2 +1,2 @@\n def helper_{number}():\n-    return old()\n+    return new()"
            changed = [
                {"filename": f"pkg/module_{number}_{i}.py", "status": "modified", "additions": 1, "deletions": 1,
                 "changes": 2, "patch": patch}
                for i in range(files)
            ]
            self.add_bundle({"pull": pull, "files": changed, "reviews": [], "review_comments": []}, repo=repo)
            numbers.append(number)
        return numbers

    def _ensure_repo(self, full_name: str, pull: Mapping[str, Any], git_dir: Path | None) -> Repository:
        key = full_name.lower()
        if key in self.repos:
            record = self.repos[key]
            if git_dir is not None:
                record.git_dir = git_dir
            return record
        base_repo = (pull.get("base") or {}).get("repo") or {}
        owner = base_repo.get("owner") or (pull.get("base") or {}).get("user") or {}
        record = Repository(
            full_name=full_name,
            id=int(base_repo.get("id") or objects.stable_id("repository", full_name)),
            private=bool(base_repo.get("private", False)),
            default_branch=str(base_repo.get("default_branch") or (pull.get("base") or {}).get("ref") or "main"),
            owner_type=str(owner.get("type") or "User"),
            extra={k: v for k, v in base_repo.items() if not isinstance(v, (dict, list))},
            git_dir=git_dir,
        )
        self.repos[key] = record
        return record

    def move_repo(self, full_name: str, *, write_status: int = 307) -> None:
        """Answer requests under ``/repos/{owner}/{name}`` with redirects, as GitHub does for
        a renamed or transferred repository ("Best practices for using the REST API",
        follow redirects): 301 for GET and HEAD, ``write_status`` (307, or 301/302/308)
        for other methods, to the same path under ``/repositories/{id}``, which keeps
        being served. Raises :class:`ValueError` for an unknown repository or status.
        """
        if full_name.lower() not in self.repos:
            raise ValueError(f"unknown repository {full_name!r}")
        if write_status not in (301, 302, 307, 308):
            raise ValueError(f"a redirect status is 301, 302, 307 or 308, got {write_status!r}")
        self.moved[full_name.lower()] = write_status

    def repo_by_id(self, repository_id: int) -> Repository:
        """The repository with this id ("/repositories/{id}" paths); 404 otherwise."""
        for record in self.repos.values():
            if record.id == repository_id:
                return record
        raise not_found()

    def pull(self, owner: str, name: str, number: int) -> tuple[Repository, dict[str, Any]]:
        """Return the repository and stored bundle of a pull request; 404 when unknown."""
        record = self.repo(owner, name)
        bundle = record.pulls.get(number)
        if bundle is None:
            raise not_found("https://docs.github.com/rest/pulls/pulls#get-a-pull-request")
        return record, bundle

    def repo_json(self, record: Repository) -> dict[str, Any]:
        """A repository object ("Get a repository", the ``full-repository`` schema): the bundle's
        ``base.repo`` facts (description, dates, counts...) over :func:`objects.repository`'s defaults."""
        data = objects.repository(
            record.full_name,
            id=record.id,
            private=record.private,
            owner_type=record.owner_type,
            default_branch=record.default_branch,
            created_at=iso(self.created_at),
            site=self.site,
        )
        data.update({k: v for k, v in record.extra.items() if k not in _DERIVED_REPO_FIELDS and not k.endswith("url")})
        return data

    def pull_json(self, record: Repository, number: int) -> dict[str, Any]:
        """The stored pull request, complete ("Get a pull request", the ``pull-request`` schema), with
        ``labels`` as they are now and ``additions``/``deletions``/``changed_files`` from its files
        when the bundle does not say."""
        bundle = record.pulls[number]
        pull = objects.pull_request(
            bundle["pull"],
            self.repo_json(record),
            files=bundle["files"],
            review_comments=len(bundle["review_comments"]),
            now=iso(self.created_at),
            site=self.site,
        )
        pull["labels"] = [self.label_json(record, label) for label in self._issue_labels(record, number)]
        return pull

    def files_of(self, record: Repository, number: int) -> list[dict[str, Any]]:
        """The pull request's files, complete (``diff-entry``), cut at GitHub's 3000 ("List pull requests files")."""
        bundle = record.pulls[number]
        head = bundle["pull"].get("head") if isinstance(bundle["pull"].get("head"), Mapping) else {}
        ref = str(head.get("sha") or "0" * 40)
        return [
            objects.fill_file(item, record.full_name, ref, site=self.site) for item in bundle["files"][:GITHUB_FILE_LIST_CAP]
        ]

    def reviews_of(self, record: Repository, number: int) -> list[dict[str, Any]]:
        """The pull request's reviews, complete ("List reviews for a pull request")."""
        pull = self.pull_json(record, number)
        return [objects.fill_review(item, pull, site=self.site) for item in record.pulls[number]["reviews"]]

    def review_comments_of(self, record: Repository, number: int) -> list[dict[str, Any]]:
        """The pull request's review comments, complete ("List review comments on a pull request")."""
        pull = self.pull_json(record, number)
        return [objects.fill_review_comment(item, pull, site=self.site) for item in record.pulls[number]["review_comments"]]

    def set_file(self, repo: str, path: str, content: str | bytes, ref: str | None = None) -> None:
        """Serve ``content`` at ``path`` of ``repo`` (``owner/name``); ``ref=None`` serves it at every ref.

        Raises :class:`ValueError` for an unknown repository or an empty path.
        """
        if repo.lower() not in self.repos:
            raise ValueError(f"unknown repository {repo!r}; add a pull request bundle for it first")
        clean = str(PurePosixPath(path.strip("/")))
        if not path.strip("/") or clean == ".":
            raise ValueError("path must name a file")
        data = content.encode("utf-8") if isinstance(content, str) else bytes(content)
        self.files.setdefault((repo.lower(), clean), {})[ref] = data

    def stored_file(self, record: Repository, path: str, ref: str | None) -> bytes | None:
        """The bytes set with :meth:`set_file` for this ref (or for every ref), else ``None``."""
        versions = self.files.get((record.full_name.lower(), str(PurePosixPath(path.strip("/")))), {})
        if ref is not None and ref in versions:
            return versions[ref]
        return versions.get(None)

    def content_json(self, record: Repository, path: str, ref: str, data: bytes) -> dict[str, Any]:
        """A file object of "Get repository content": base64 ``content`` in 60-char lines, blob ``sha``.

        Over 1 MB, ``encoding`` is ``"none"`` and ``content`` empty, as GitHub sends them.
        """
        clean = str(PurePosixPath(path.strip("/")))
        if len(data) > CONTENTS_INLINE_MAX_BYTES:
            encoding, wrapped = "none", ""
        else:
            encoded = base64.b64encode(data).decode()
            encoding = "base64"
            wrapped = "".join(encoded[i : i + 60] + "\n" for i in range(0, len(encoded), 60))
        sha = git_blob_sha(data)
        api = f"{self.api_url}/repos/{record.full_name}"
        html = f"{self.html_url}/{record.full_name}/blob/{ref}/{clean}"
        self_url = f"{api}/contents/{clean}?ref={ref}"
        return {
            "type": "file",
            "encoding": encoding,
            "size": len(data),
            "name": PurePosixPath(clean).name,
            "path": clean,
            "content": wrapped,
            "sha": sha,
            "url": self_url,
            "git_url": f"{api}/git/blobs/{sha}",
            "html_url": html,
            "download_url": f"{self.html_url}/{record.full_name}/raw/{ref}/{clean}",
            "_links": {"self": self_url, "git": f"{api}/git/blobs/{sha}", "html": html},
        }
