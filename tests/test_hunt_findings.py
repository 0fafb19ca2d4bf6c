"""Bugs found by probing the webhook, ``prguide send``, the repository config, the tag view's feeds
and the export with hostile or careless input. Each test reproduces one finding and failed
before its fix.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import xml.etree.ElementTree as ET

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer
from test_tagview_store import make_guide

from bot import cli, feature_support
from bot.app.jobstore import JobStore, QueuedDelivery
from bot.app.webhook import BadDelivery, parse_delivery, sign
from bot.engine.repo_config import load_repo_config
from bot.tagview.export import export_site
from bot.tagview.store import GuideStore
from bot.tagview.web import create_app

SECRET = "hunt-secret"
#: Characters XML 1.0 forbids; a pull request's title or body can hold them (an escape sequence pasted from a terminal).
CONTROL = "\x1b[31m\x0bred\x00"
#: Deeper than PyYAML's recursive composer can follow within the interpreter's stack.
DEEP = "[" * 5000 + "]" * 5000


def _delivery(payload: dict, event: str = "installation") -> tuple[dict[str, str], bytes]:
    body = json.dumps(payload).encode()
    headers = {
        "X-GitHub-Event": event,
        "X-GitHub-Delivery": "hunt-1",
        "Content-Type": "application/json",
        "X-Hub-Signature-256": sign(SECRET, body),
    }
    return headers, body


# --- the webhook ---------------------------------------------------------------------------------


def test_an_installation_id_no_database_can_hold_is_a_bad_delivery_not_a_500(tmp_path):
    """installation.id 2**63 passed parse_delivery, then the SQLite insert raised OverflowError: a 500,
    and every other delivery committed in the same batch (the same event-loop turn) failed with it."""
    headers, body = _delivery({"action": "created", "installation": {"id": 2**63}})
    with pytest.raises(BadDelivery, match="installation.id"):
        parse_delivery(headers, body, secret=SECRET)
    # The largest id a BIGINT holds is still taken, and the job database stores it.
    headers, body = _delivery({"action": "created", "installation": {"id": 2**63 - 1}})
    delivery = parse_delivery(headers, body, secret=SECRET)
    assert delivery.installation_id == 2**63 - 1
    queued = QueuedDelivery(delivery.id, delivery.event, delivery.key, delivery.body, delivery.installation_id, delivery.action)
    store = JobStore.open(str(tmp_path / "jobs.db"))
    try:
        assert store.enqueue_many([queued]) == [True]
    finally:
        store.close()


# --- prguide send --------------------------------------------------------------------------------


async def test_send_says_a_refusal_with_a_multi_line_body_in_one_line(capsys):
    """A webhook answering 500 with aiohttp's two-paragraph text made ``prguide send`` print three lines."""

    async def webhook(request: web.Request) -> web.Response:
        return web.Response(status=500, text="500 Internal Server Error\n\nServer got itself in trouble")

    app = web.Application()
    app.router.add_post("/webhook", webhook)
    async with TestClient(TestServer(app)) as client:
        url = str(client.make_url("/webhook"))
        code = await asyncio.to_thread(cli.main, ["send", "ping", "--url", url, "--secret", SECRET])
    out, err = capsys.readouterr()
    assert code == 1
    assert len(out.splitlines()) == 1, out
    assert "refused 500" in out and "Server got itself in trouble" in out


def test_send_refuses_a_timeout_that_is_not_a_number_of_seconds(capsys):
    """``--timeout nan`` was taken: no clock is ever past a NaN deadline, so a job that stays queued
    was waited for forever (and the HTTP timeout silently became 30 s)."""
    with pytest.raises(SystemExit) as exit_:
        cli.build_parser().parse_args(["send", "ping", "--timeout", "nan"])
    assert exit_.value.code == 2
    assert "nan" in capsys.readouterr().err


# --- the repository config -------------------------------------------------------------------------


async def test_a_config_nested_too_deeply_is_unreadable_not_a_failed_job(monkeypatch):
    """``x: [[[[...]]]]`` 5000 deep (10 kB, under the 64 kB cap) raised RecursionError out of the YAML
    parser: every guide job of the repository failed and was retried until parked."""

    async def fetch_file(client, repository, path, ref=None, *, max_bytes=None):
        return f"narrator: off\nx: {DEEP}\n" if path == ".github/prguide.yml" else None

    monkeypatch.setattr(feature_support, "fetch_file", fetch_file)
    config = await feature_support.read_repo_config(object(), "acme/rocket", None)
    assert config.narrator is False and config.backfill == 0
    assert config.problems and str(config.problems[0]).startswith(".github/prguide.yml:1")


def test_load_repo_config_never_raises_on_deep_nesting():
    config = load_repo_config(f"narrator: off\nlabels: {DEEP}\n")
    assert config.narrator is False
    assert config.problems


def test_a_misspelt_opt_out_key_takes_the_safe_side():
    config = load_repo_config("narator: off\n")
    assert any("narrator" in p.message for p in config.problems)
    assert config.narrator is False


# --- the tag view's feeds and export -------------------------------------------------------------------


@pytest.fixture
def control_store(tmp_path):
    with GuideStore(tmp_path / "prguide.db") as store:
        store.save(make_guide(1, title=f"fix {CONTROL} colours", summary=f"Strips {CONTROL}.", author="octocat",
                              labels=["bug", f"ci{CONTROL}"]), visibility="public")
        store.save(make_guide(2), visibility="public")
        yield store


async def test_a_title_with_control_characters_keeps_the_feed_well_formed(control_store):
    """A control character in a title, summary or label made tags.atom a 500 for the whole repository."""
    async with TestClient(TestServer(create_app(control_store, None))) as client:
        answer = await client.get("/repos/acme/rocket/tags.atom")
        assert answer.status == 200
        root = ET.fromstring(await answer.read())
    titles = [e.text for e in root.iter("{http://www.w3.org/2005/Atom}title")]
    assert any(t and "colours" in t for t in titles), titles


def test_a_title_with_control_characters_does_not_stop_the_export(control_store, tmp_path):
    """The static export died with lxml's ValueError (a traceback from ``prguide view --export``)."""
    out = tmp_path / "site"
    export_site(control_store, out)
    feeds = list(out.rglob("*.atom"))
    assert feeds
    for feed in feeds:
        ET.fromstring(feed.read_bytes())


def test_sqlite_refuses_what_the_webhook_now_refuses():
    """Why the bound is 2**63 - 1: SQLite's INTEGER (and PostgreSQL's bigint) hold no more."""
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE t (v INTEGER)")
    conn.execute("INSERT INTO t VALUES (?)", (2**63 - 1,))
    with pytest.raises(OverflowError):
        conn.execute("INSERT INTO t VALUES (?)", (2**63,))
