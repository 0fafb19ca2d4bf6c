"""The job store's interface: what the platform may call, and that the SQLite store provides it."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest

from bot.app.db import open_database
from bot.app.jobs_protocol import JobStorage
from bot.app.jobstore import JobStore, QueuedDelivery
from bot.app.pgjobs import PgJobStore

ROOT = Path(__file__).resolve().parent.parent


def protocol_methods() -> list[str]:
    return [name for name, value in vars(JobStorage).items() if inspect.isfunction(value) and not name.startswith("_")]


@pytest.mark.parametrize("store_class", [JobStore, PgJobStore])
def test_each_store_has_every_method_of_the_interface_with_compatible_parameters(store_class):
    assert set(protocol_methods()) >= {"enqueue_many", "claim", "complete", "retry", "park", "release", "counts"}
    for name in protocol_methods():
        wanted = inspect.signature(getattr(JobStorage, name)).parameters
        have = inspect.signature(getattr(store_class, name)).parameters
        for param in wanted.values():
            if param.kind is inspect.Parameter.VAR_KEYWORD:
                continue
            assert param.name in have, f"{store_class.__name__}.{name} lacks {param.name}"
            assert have[param.name].kind == param.kind, f"{store_class.__name__}.{name}: {param.name} is {have[param.name].kind}"


def test_the_worker_pool_calls_the_store_only_through_the_interface():
    tree = ast.parse((ROOT / "bot" / "app" / "workers.py").read_text(encoding="utf-8"))
    called = {
        node.attr
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Attribute)
        and node.value.attr == "store"
    }
    assert called and called <= set(protocol_methods())


def test_a_store_behind_the_interface_queues_and_claims():
    store: JobStorage = JobStore(open_database(":memory:"), clock=lambda: 1000.0)
    assert store.enqueue_many([QueuedDelivery("d1", "pull_request", "o/r#1", b"{}")]) == [True]
    job = store.claim(1000.0)
    assert job is not None and job.delivery_id == "d1"
    store.complete(job.id, now=1001.0)
    assert store.counts()["done"] == 1
    store.close()
