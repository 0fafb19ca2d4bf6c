"""The facts of one pull request, as GitHub's REST API shapes them.

Every source (a bundle file, a local git repository, the GitHub API) produces the
same :class:`PullRequestSnapshot`; everything downstream reads only this.

Shapes follow GitHub's REST docs: "Get a pull request", "List pull requests
files", "List reviews for a pull request", "List review comments on a pull
request".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

#: GitHub lists at most this many files for a pull request ("List pull requests files").
GITHUB_FILE_LIST_CAP = 3000

#: Logins GitHub uses for deleted accounts.
GHOST_LOGIN = "ghost"


class SnapshotError(ValueError):
    """Raised when GitHub data lacks a field the snapshot cannot do without."""


def _login(user: Mapping[str, Any] | None) -> str:
    if not user:
        return GHOST_LOGIN
    return str(user.get("login") or GHOST_LOGIN)


def _count(data: Mapping[str, Any], key: str, where: str) -> int:
    """A non-negative integer field; ``None``/missing is 0. Raises :class:`SnapshotError`."""
    value = data.get(key)
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise SnapshotError(f"{where}: {key} must be a non-negative integer, got {value!r:.40}")
    return value


def _is_bot(user: Mapping[str, Any] | None) -> bool:
    if not user:
        return False
    return user.get("type") == "Bot" or str(user.get("login", "")).endswith("[bot]")


@dataclass(frozen=True, slots=True)
class ChangedFile:
    """One entry of "List pull requests files".

    ``status`` is one of GitHub's ``added``, ``removed``, ``modified``, ``renamed``,
    ``copied``, ``changed``, ``unchanged``. ``patch`` is ``None`` when GitHub omits it
    (binary files, or diffs too large to show). ``additions``/``deletions`` are lines.
    """

    filename: str
    status: str = "modified"
    additions: int = 0
    deletions: int = 0
    patch: str | None = None
    previous_filename: str | None = None

    @classmethod
    def from_github(cls, data: Mapping[str, Any]) -> ChangedFile:
        """Build from one REST file object; raises :class:`SnapshotError` without ``filename``."""
        name = data.get("filename")
        if not isinstance(name, str) or not name:
            raise SnapshotError("file entry without a filename")
        patch = data.get("patch")
        return cls(
            filename=name,
            status=str(data.get("status") or "modified"),
            additions=_count(data, "additions", f"file {name!r}"),
            deletions=_count(data, "deletions", f"file {name!r}"),
            patch=patch if isinstance(patch, str) else None,
            previous_filename=data.get("previous_filename") or None,
        )

    @property
    def changes(self) -> int:
        """Lines added plus lines deleted."""
        return self.additions + self.deletions


@dataclass(frozen=True, slots=True)
class Review:
    """One entry of "List reviews for a pull request".

    ``state`` is GitHub's ``APPROVED``, ``CHANGES_REQUESTED``, ``COMMENTED``,
    ``DISMISSED`` or ``PENDING``.
    """

    id: int
    user: str
    state: str
    body: str = ""
    submitted_at: str | None = None
    user_is_bot: bool = False

    @classmethod
    def from_github(cls, data: Mapping[str, Any]) -> Review:
        """Build from one REST review object (``user`` may be null for deleted accounts)."""
        return cls(
            id=int(data.get("id") or 0),
            user=_login(data.get("user")),
            state=str(data.get("state") or "COMMENTED"),
            body=str(data.get("body") or ""),
            submitted_at=data.get("submitted_at"),
            user_is_bot=_is_bot(data.get("user")),
        )


@dataclass(frozen=True, slots=True)
class ReviewComment:
    """One entry of "List review comments on a pull request" (a comment on a diff line).

    ``in_reply_to_id`` links a reply to the first comment of its thread.
    ``line`` is the line in the file the comment is anchored to, or ``None`` when outdated.
    """

    id: int
    user: str
    body: str
    path: str
    line: int | None = None
    in_reply_to_id: int | None = None
    created_at: str | None = None
    diff_hunk: str = ""
    user_is_bot: bool = False

    @classmethod
    def from_github(cls, data: Mapping[str, Any]) -> ReviewComment:
        """Build from one REST review comment object."""
        line = data.get("line") or data.get("original_line")
        return cls(
            id=int(data.get("id") or 0),
            user=_login(data.get("user")),
            body=str(data.get("body") or ""),
            path=str(data.get("path") or ""),
            line=int(line) if isinstance(line, int) else None,
            in_reply_to_id=data.get("in_reply_to_id"),
            created_at=data.get("created_at"),
            diff_hunk=str(data.get("diff_hunk") or ""),
            user_is_bot=_is_bot(data.get("user")),
        )

    @property
    def thread_id(self) -> int:
        """The id of the comment that started this comment's thread."""
        return self.in_reply_to_id or self.id


@dataclass(frozen=True, slots=True)
class PullRequestSnapshot:
    """Everything prguide knows about one pull request at one moment.

    ``repository`` is ``"owner/name"``. ``changed_files`` is the PR object's own count,
    which can exceed ``len(files)`` when GitHub's list stops at
    :data:`GITHUB_FILE_LIST_CAP` entries; :attr:`truncated` tells.
    """

    repository: str
    number: int
    title: str
    body: str = ""
    author: str = GHOST_LOGIN
    author_is_bot: bool = False
    base_branch: str = "main"
    head_sha: str = ""
    merge_commit_sha: str | None = None
    merged: bool = False
    merged_at: str | None = None
    html_url: str = ""
    changed_files: int = 0
    additions: int = 0
    deletions: int = 0
    files: tuple[ChangedFile, ...] = ()
    reviews: tuple[Review, ...] = ()
    review_comments: tuple[ReviewComment, ...] = ()
    labels: tuple[str, ...] = ()
    state: str = "closed"
    extra: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def truncated(self) -> bool:
        """True when GitHub listed fewer files than the PR changed."""
        return self.changed_files > len(self.files)

    @property
    def missing_patches(self) -> tuple[str, ...]:
        """Files with changed lines whose patch GitHub omitted (binary or too large)."""
        return tuple(f.filename for f in self.files if f.patch is None and f.changes > 0)

    @classmethod
    def from_github(
        cls,
        pull: Mapping[str, Any],
        files: Sequence[Mapping[str, Any]] = (),
        reviews: Sequence[Mapping[str, Any]] = (),
        review_comments: Sequence[Mapping[str, Any]] = (),
        *,
        repository: str | None = None,
    ) -> PullRequestSnapshot:
        """Build a snapshot from REST shapes ("Get a pull request" and the three lists).

        ``repository`` defaults to ``pull["base"]["repo"]["full_name"]`` or, failing that,
        the owner/name in ``pull["url"]``. Raises :class:`SnapshotError` when the PR has no
        number or no repository can be found.
        """
        number = pull.get("number")
        if isinstance(number, bool) or not isinstance(number, int) or not 0 < number < 2**31:
            raise SnapshotError(f"pull request number must be a positive integer, got {number!r:.40}")
        repo = repository or _repository_of(pull)
        if not repo:
            raise SnapshotError(f"pull request #{number}: cannot tell its repository")
        base = pull.get("base") or {}
        head = pull.get("head") or {}
        changed = [ChangedFile.from_github(f) for f in files]
        labels = tuple(
            str(lab.get("name")) for lab in pull.get("labels") or () if isinstance(lab, Mapping) and lab.get("name")
        )
        return cls(
            repository=repo,
            number=number,
            title=str(pull.get("title") or ""),
            body=str(pull.get("body") or ""),
            author=_login(pull.get("user")),
            author_is_bot=_is_bot(pull.get("user")),
            base_branch=str(base.get("ref") or "main"),
            head_sha=str(head.get("sha") or ""),
            merge_commit_sha=pull.get("merge_commit_sha"),
            merged=bool(pull.get("merged") or pull.get("merged_at")),
            merged_at=pull.get("merged_at"),
            html_url=str(pull.get("html_url") or ""),
            changed_files=_count(pull, "changed_files", f"pull request #{number}") or len(changed),
            additions=_count(pull, "additions", f"pull request #{number}") or sum(f.additions for f in changed),
            deletions=_count(pull, "deletions", f"pull request #{number}") or sum(f.deletions for f in changed),
            files=tuple(changed),
            reviews=tuple(Review.from_github(r) for r in reviews),
            review_comments=tuple(ReviewComment.from_github(c) for c in review_comments),
            labels=labels,
            state=str(pull.get("state") or "closed"),
        )


def _repository_of(pull: Mapping[str, Any]) -> str | None:
    base_repo = (pull.get("base") or {}).get("repo") or {}
    if base_repo.get("full_name"):
        return str(base_repo["full_name"])
    for key in ("url", "html_url"):
        url = str(pull.get(key) or "")
        parts = url.split("/")
        if "pulls" in parts:
            i = parts.index("pulls")
            return "/".join(parts[i - 2 : i])
        if "pull" in parts:
            i = parts.index("pull")
            return "/".join(parts[i - 2 : i])
    return None
