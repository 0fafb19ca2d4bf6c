"""The narrator's cache and daily token cap are shared by every replica on PostgreSQL (issue 21, class 7).

Before, each replica kept them in its own SQLite file, so N replicas spent N x
``PRGUIDE_LLM_DAILY_TOKENS`` and asked the model again for a narration another replica
had. Skipped, with the reason, without a PostgreSQL server (failing under ``CI``).
"""

from __future__ import annotations

import threading
from datetime import UTC, datetime

import pytest
from loopback import pr_delivery
from sandbox_helpers import APP_ID, app_private_key, start_sandbox  # noqa: F401
from test_end_to_end import SECRET, Harness, start_app
from test_narrator_app import KEY, NARRATION, PR, REPO, comment_writes

from bot.app import pg
from bot.app.server import STATE, wait_idle
from bot.app.settings import Settings
from bot.feature_support import narration_store
from bot.sandbox.llm import Reply, ScriptedModel


def _replica(pg_schema):
    import bot.feature_support  # noqa: F401 - registers the narrator's migrations

    url, schema = pg_schema
    return pg.connect(url, schema=schema, min_size=1, max_size=4, timeout=5.0, migrate_components=None)


def test_two_replicas_share_the_cache_and_never_spend_more_than_the_cap_together(pg_schema):
    from bot.narrator.store import PgNarrations

    a_db, b_db = _replica(pg_schema), _replica(pg_schema)
    try:
        a, b = PgNarrations(a_db), PgNarrations(b_db)
        a.put("k1", {"model": "m", "summary": "s"})
        assert b.get("k1") == {"model": "m", "summary": "s"} and b.get("k2") is None
        day = "2026-12-02"
        a.add_tokens(7, day, 300)
        assert b.tokens(7, day) == 300 and b.tokens(8, day) == 0

        # Sixteen narrations of 100 tokens each, on two replicas at once, under a cap of 1,000.
        granted: list[bool] = []

        def spend(store):
            granted.append(store.reserve_tokens(7, day, 100, 1000))

        threads = [threading.Thread(target=spend, args=(s,)) for s in (a, b) * 8]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert granted.count(True) == 7 and a.tokens(7, day) == 1000  # 300 + 7 x 100, never more
        assert not b.reserve_tokens(7, day, 1, 1000)
        a.add_tokens(7, day, -60)  # a call that used less than its reservation gives the rest back
        assert b.reserve_tokens(7, day, 50, 1000) and b.tokens(7, day) == 990
    finally:
        a_db.close()
        b_db.close()


@pytest.mark.corpus
async def test_a_narration_made_on_one_replica_is_reused_by_another(pg_schema, app_private_key, load_bundle_json, tmp_path):  # noqa: F811
    url, schema = pg_schema
    bundle = load_bundle_json(PR)
    async with ScriptedModel([Reply.json(NARRATION)]) as model, start_sandbox(app_private_key, bundles=[bundle]) as sandbox:

        def settings(name: str) -> Settings:
            return Settings(app_id=APP_ID, private_key=app_private_key.decode(), webhook_secret=SECRET, api_url=sandbox.base_url,
                            db_path=tmp_path / name / "prguide.db", workers=2, llm_url=model.base_url, llm_model="qwen2.5-coder:7b",
                            llm_api_key=KEY, llm_timeout=5, llm_daily_tokens=100_000, database_url=url, database_schema=schema,
                            reconcile_interval=0)  # fmt: skip

        first = await start_app(settings("a"), sandbox)
        try:
            harness = Harness(first, sandbox, {PR: bundle})
            await harness.merged(PR, delivery="r-1")
            assert len(model.requests) == 1 and "narrated by" in sandbox.comments(REPO, PR)[0].body
            day = datetime.now(UTC).strftime("%Y-%m-%d")
            spent = narration_store(first.app[STATE].services).tokens(1, day)
            assert spent == 160
        finally:
            await first.close()
        second = await start_app(settings("b"), sandbox)  # another replica: its own local file, the same database
        try:
            harness = Harness(second, sandbox, {PR: bundle})
            before = len(comment_writes(harness))
            resp = await harness.deliver(pr_delivery(bundle), delivery="r-2")
            assert resp.status == 202
            await wait_idle(second.app)
            assert len(model.requests) == 1  # no second call: the narration is the database's
            assert len(comment_writes(harness)) == before  # the narrated comment stands as it is
            assert narration_store(second.app[STATE].services).tokens(1, day) == spent
        finally:
            await second.close()
