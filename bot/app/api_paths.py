"""The route of a GitHub REST API URL, for metrics and call counts: owner, repository,
numbers and names replaced by their placeholders, as GitHub's REST reference writes them
(https://docs.github.com/rest)."""

from __future__ import annotations

from urllib.parse import urlsplit

#: The public GitHub REST API; GitHub Enterprise Server uses ``https://HOST/api/v3``.
DEFAULT_API_URL = "https://api.github.com"


def path_template(url: str, base_url: str = DEFAULT_API_URL) -> str:
    """Return the route of an API URL with owner, repository, numbers and names replaced.

    ``https://api.github.com/repos/o/r/issues/5/labels/bug?x=1`` ->
    ``/repos/{owner}/{repo}/issues/{issue_number}/labels/{name}``. Keeps metric labels
    few, whatever the repository.
    """
    path = urlsplit(url).path
    base_path = urlsplit(base_url).path.rstrip("/")
    if base_path and path.startswith(base_path + "/"):
        path = path[len(base_path) :]
    parts = [p for p in path.split("/") if p]
    out: list[str] = []
    i = 0
    while i < len(parts):
        part = parts[i]
        prev = parts[i - 1] if i else ""
        if prev == "repos" and i == 1 and len(parts) >= 3:
            out += ["{owner}", "{repo}"]
            i += 2
            continue
        if prev == "contents":
            out.append("{path}")
            break
        if prev == "labels" and not part.isdigit():
            out.append("{name}")
        elif part.isdigit():
            out.append(_NUMBER_NAMES.get(prev, "{id}"))
        else:
            out.append(part)
        i += 1
    return "/" + "/".join(out)


_NUMBER_NAMES = {
    "pulls": "{pull_number}",
    "issues": "{issue_number}",
    "comments": "{comment_id}",
    "installations": "{installation_id}",
    "reviews": "{review_id}",
    "repositories": "{repository_id}",
}
