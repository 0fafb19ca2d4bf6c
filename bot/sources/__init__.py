"""Where pull request snapshots come from besides the GitHub API.

* :mod:`bot.sources.bundle`: JSON bundle files in GitHub's REST shapes (the corpus format).
* :mod:`bot.sources.gitrepo`: merged pull requests rebuilt from a local git repository
  (found on its history by :mod:`bot.sources.gitpulls`, diffed by :mod:`bot.sources.gitdiff`,
  git run by :mod:`bot.sources.gitrun`).
"""

from bot.sources.bundle import (
    BundleError,
    check_bundle,
    iter_bundles,
    load_bundle,
    read_bundle,
    snapshot_from_bundle,
)
from bot.sources.gitrepo import (
    GitRepositoryError,
    load_merged_pull_requests,
    merged_pull_requests,
    why_no_pull_requests,
)

__all__ = [
    "BundleError",
    "GitRepositoryError",
    "check_bundle",
    "iter_bundles",
    "load_bundle",
    "load_merged_pull_requests",
    "merged_pull_requests",
    "read_bundle",
    "snapshot_from_bundle",
    "why_no_pull_requests",
]
