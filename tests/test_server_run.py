"""``prguide serve``'s entry point in a real process: it serves, then stops cleanly on SIGTERM."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from pathlib import Path

import aiohttp
from sandbox_helpers import app_private_key  # noqa: F401

from bot.app.webhook import sign

ROOT = Path(__file__).resolve().parents[1]
SECRET = "run-secret"


async def next_record(stream: asyncio.StreamReader, want) -> dict:
    """The next JSON log line for which ``want(record)`` holds (fails at end of output)."""
    while True:
        line = await stream.readline()
        assert line, "the server stopped before logging the expected line"
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if want(record):
            return record


async def test_serve_until_sigterm_then_stop_cleanly(tmp_path, app_private_key):  # noqa: F811
    env = {
        **os.environ,
        "GITHUB_APP_ID": "4242",
        "GITHUB_PRIVATE_KEY": app_private_key.decode().replace("\n", "\\n"),
        "GITHUB_WEBHOOK_SECRET": SECRET,
        "GITHUB_API_URL": "http://127.0.0.1:9",  # never called: no delivery needs GitHub here
        "HOST": "127.0.0.1",
        "PORT": "0",
        "PRGUIDE_DB": str(tmp_path / "prguide.db"),
        "PRGUIDE_LOG_LEVEL": "INFO",
    }
    code = "from bot.app.settings import from_env; from bot.app.server import run; run(from_env())"
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-c", code, cwd=ROOT, env=env, stderr=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.DEVNULL
    )
    try:
        listening = await next_record(proc.stderr, lambda r: r.get("msg", "").startswith("listening on"))
        address = listening["addresses"][0]
        async with aiohttp.ClientSession() as session:
            async with session.get(f"http://{address}/healthz") as resp:
                assert resp.status == 200
                assert (await resp.json())["ok"] is True
            body = b'{"zen": "Design for failure.", "hook_id": 1}'
            headers = {
                "X-GitHub-Event": "ping",
                "X-GitHub-Delivery": "p-1",
                "Content-Type": "application/json",
                "X-Hub-Signature-256": sign(SECRET, body),
            }
            async with session.post(f"http://{address}/webhook", data=body, headers=headers) as resp:
                assert resp.status == 200 and await resp.text() == "pong"

        proc.send_signal(signal.SIGTERM)
        stopped = await next_record(proc.stderr, lambda r: r.get("msg") == "prguide stopped")
        assert stopped["level"] == "info"
        assert await proc.wait() == 0
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()

