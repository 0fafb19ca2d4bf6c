"""Snapshots from GitHub REST shapes survive what real PRs contain and reject nonsense clearly."""

import pytest

from bot.engine.snapshot import ChangedFile, PullRequestSnapshot, SnapshotError


def pull(**kw):
    base = {"number": 5, "title": "t", "base": {"ref": "main", "repo": {"full_name": "o/r"}}}
    base.update(kw)
    return base


def test_nulls_and_ghosts_are_tolerated():
    s = PullRequestSnapshot.from_github(pull(body=None, user=None, labels=[{"name": "x"}, {}], merged_at="2026-01-01T00:00:00Z"))
    assert (s.body, s.author, s.labels, s.merged) == ("", "ghost", ("x",), True)


def test_bot_authors_are_recognised():
    assert PullRequestSnapshot.from_github(pull(user={"login": "dependabot[bot]", "type": "Bot"})).author_is_bot
    assert PullRequestSnapshot.from_github(pull(user={"login": "renovate[bot]"})).author_is_bot
    assert not PullRequestSnapshot.from_github(pull(user={"login": "ada", "type": "User"})).author_is_bot


def test_truncation_and_missing_patches():
    files = [{"filename": "a.png", "additions": 0, "deletions": 0}, {"filename": "big.py", "additions": 9000, "deletions": 0}]
    s = PullRequestSnapshot.from_github(pull(changed_files=3500), files)
    assert s.truncated and s.missing_patches == ("big.py",)


def test_repository_from_url_when_base_repo_is_missing():
    s = PullRequestSnapshot.from_github({"number": 1, "url": "https://api.github.com/repos/a/b/pulls/1"})
    assert s.repository == "a/b"
    with pytest.raises(SnapshotError, match="repository"):
        PullRequestSnapshot.from_github({"number": 1})


@pytest.mark.parametrize("number", [None, -1, 0, 2**70, "7", True])
def test_bad_numbers_are_refused(number):
    with pytest.raises(SnapshotError, match="positive integer"):
        PullRequestSnapshot.from_github(pull(number=number))


def test_bad_counts_name_the_field():
    with pytest.raises(SnapshotError, match="file 'a.py': additions must be a non-negative integer"):
        ChangedFile.from_github({"filename": "a.py", "additions": "many"})
    with pytest.raises(SnapshotError, match="without a filename"):
        ChangedFile.from_github({"additions": 1})
