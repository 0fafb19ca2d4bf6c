"""Repositories without ``.github/prguide.yml``: remembered for days, forgotten as soon as the file may exist.

GitHub's 404 for a missing file carries no ETag, so every read of it counts against the
rate limit; merges an hour or a day apart must not each pay for it.
"""

from __future__ import annotations

import pytest

from bot import feature_support
from bot.app.config_memory import MISSING_CONFIG_TTL, MissingConfigs
from bot.app.shared_state import LocalState, PgSharedState


class Files:
    """``fetch_file`` over a dict of paths, counting the reads."""

    def __init__(self):
        self.files: dict[str, str] = {}
        self.reads = 0

    async def __call__(self, client, repository, path, ref=None, *, max_bytes=None):
        self.reads += 1
        return self.files.get(path)


@pytest.fixture
def files(monkeypatch):
    found = Files()
    monkeypatch.setattr(feature_support, "fetch_file", found)
    return found


class Clock:
    def __init__(self):
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


async def test_a_missing_config_is_remembered_for_days_not_minutes(files):
    clock = Clock()
    memory = MissingConfigs(clock=clock)
    config = await feature_support.read_repo_config(object(), "acme/rocket", "main", missing=memory)
    assert config == feature_support.RepoConfig.default() and files.reads == 2  # .yml, then .yaml
    for hours in (1 / 6, 1, 24, 24 * 5):  # merges ten minutes, an hour, a day, five days apart
        clock.now += hours * 3600
        assert await feature_support.read_repo_config(object(), "acme/rocket", "main", missing=memory) is feature_support.REMEMBERED_MISSING
    assert files.reads == 2
    clock.now += 24 * 3600  # past the week since it was learnt (no hit extends it): asked again
    await feature_support.read_repo_config(object(), "acme/rocket", "main", missing=memory)
    assert files.reads == 4
    assert MISSING_CONFIG_TTL >= 7 * 24 * 3600


async def test_a_fresh_read_that_finds_the_file_forgets_and_the_next_guide_reads_it(files):
    memory = MissingConfigs(clock=Clock())
    await feature_support.read_repo_config(object(), "acme/rocket", "main", missing=memory)
    files.files[".github/prguide.yml"] = "lang: zh\n"
    # A merged pull request that changed the file (or a command) reads it fresh.
    assert (await feature_support.read_repo_config(object(), "acme/rocket", "main", missing=memory, fresh=True)).lang == "zh"
    assert not await memory.known("acme/rocket", "main")
    assert (await feature_support.read_repo_config(object(), "acme/rocket", "main", missing=memory)).lang == "zh"
    assert await memory.known("ACME/Rocket", "other") is False


@pytest.fixture(params=["local", "postgresql"])
def shared_pair(request):
    """Two replicas' views of one shared state (in one process's memory: the same object)."""
    if request.param == "local":
        state = LocalState(clock=Clock())
        return state, state
    db = request.getfixturevalue("pg_database")
    return PgSharedState(db), PgSharedState(db)


async def test_replicas_share_what_they_learn_about_a_repositorys_config(files, shared_pair):
    """A replica that reads a new config file makes the others forget the repository had none:
    with a memory of days per process, the others would build guides without it for days."""
    first, second = (MissingConfigs(shared=state) for state in shared_pair)
    await feature_support.read_repo_config(object(), "acme/rocket", "main", missing=first)
    assert files.reads == 2
    assert await feature_support.read_repo_config(object(), "acme/rocket", "main", missing=second) is feature_support.REMEMBERED_MISSING
    files.files[".github/prguide.yml"] = "lang: zh\n"
    await feature_support.read_repo_config(object(), "acme/rocket", "main", missing=first, fresh=True)
    assert (await feature_support.read_repo_config(object(), "acme/rocket", "main", missing=second)).lang == "zh"


async def test_the_shared_memory_lapses_and_can_be_forgotten(shared_pair):
    state = shared_pair[0]
    state.remember("k", 60)
    assert state.recall("k") and not state.recall("other")
    state.forget("k")
    assert not state.recall("k")
    state.remember("k", -1)  # already past
    assert not state.recall("k")
