"""compose.yaml (PostgreSQL, a web and a worker replica, the sandbox) checked without Docker,
and the trial it describes run for real: two ``prguide serve`` processes sharing PostgreSQL,
one taking the delivery, the other posting the guide in the sandbox."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shlex
import sys
from pathlib import Path

import aiohttp
import pytest
import yaml
from sandbox_helpers import APP_ID, app_private_key, start_sandbox, synthetic_bundle  # noqa: F401 - fixture

from bot.app.settings import from_env
from bot.cli import build_parser
from pg_helpers import pg_url  # noqa: F401 - fixture

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def compose() -> dict:
    return yaml.safe_load((ROOT / "compose.yaml").read_text(encoding="utf-8"))


def environment(service: dict) -> dict[str, str]:
    """The service's environment with ``${VAR:-default}`` taken as the default, as Compose does when VAR is unset."""
    return {k: re.sub(r"\$\{[A-Z_]+:-([^}]*)\}", r"\1", str(v)) for k, v in service.get("environment", {}).items()}


def test_compose_runs_postgresql_a_web_and_a_worker_replica_and_the_sandbox(compose, app_private_key):  # noqa: F811
    services = compose["services"]
    assert {"postgres", "sandbox", "web", "worker"} <= set(services)
    parser = build_parser()
    roles = {}
    for name in ("web", "worker"):
        service = services[name]
        args = parser.parse_args(service["command"][1:])  # every option exists in this prguide
        roles[name] = args.role
        env = environment(service)
        settings = from_env({**env, "GITHUB_PRIVATE_KEY": app_private_key.decode(), "GITHUB_PRIVATE_KEY_PATH": ""})
        assert settings.backend == "postgresql" and "@postgres:5432/" in settings.database_url
        assert set(service["depends_on"]) == {"postgres", "sandbox"}
        assert service["depends_on"]["postgres"]["condition"] == "service_healthy"
    assert roles == {"web": "web", "worker": "worker"}
    # Both replicas and the sandbox agree on the app, the key and the API address.
    sandbox = parser.parse_args(services["sandbox"]["command"][1:])
    env = environment(services["web"])
    assert str(sandbox.app_id) == env["GITHUB_APP_ID"] and str(sandbox.app_key) == env["GITHUB_PRIVATE_KEY_PATH"]
    assert env["GITHUB_API_URL"] == f"http://sandbox:{sandbox.port}"
    pg_env = services["postgres"]["environment"]
    assert env["PRGUIDE_DATABASE_URL"] == (
        f"postgresql://{pg_env['POSTGRES_USER']}:{pg_env['POSTGRES_PASSWORD']}@postgres:5432/{pg_env['POSTGRES_DB']}"
    )
    # The sandbox delivers comments made in it to the web replica, signed with the same secret.
    assert sandbox.webhook_url == "http://web:8080/webhook"
    assert environment(services["sandbox"])["PRGUIDE_WEBHOOK_SECRET"] == env["GITHUB_WEBHOOK_SECRET"] == "compose-trial-secret"
    # What the README's trial commands send reaches what compose publishes.
    assert "127.0.0.1:8080:8080" in services["web"]["ports"] and "127.0.0.1:9000:9000" in services["sandbox"]["ports"]
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "export PRGUIDE_WEBHOOK_SECRET=compose-trial-secret" in readme
    sends = [shlex.split(line, comments=True)[1:] for line in readme.splitlines() if line.startswith(".venv/bin/prguide send ")]
    assert len(sends) >= 2, "the README shows the trial's prguide send commands"
    for argv in sends:
        args = parser.parse_args(["1" if word == "N" else word for word in argv])  # every option exists in this prguide
        assert (args.url, args.sandbox) == ("http://127.0.0.1:8080/webhook", "http://127.0.0.1:9000")
    # Only published on loopback: the trial is not reachable from the network.
    for service in services.values():
        assert all(str(p).startswith("127.0.0.1:") for p in service.get("ports", []))
    assert "ports" not in services["worker"]


def test_readme_shows_the_compose_trial():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "docker compose up --build -d" in readme and "prguide send pull_request.closed" in readme


async def _listening(proc: asyncio.subprocess.Process) -> str:
    while True:
        line = await asyncio.wait_for(proc.stderr.readline(), timeout=60)
        assert line, "prguide serve exited before listening"
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if str(record.get("msg", "")).startswith("listening on"):
            return record["addresses"][0]


async def send_command(*argv: str, secret: str) -> tuple[int, str, str]:
    """``prguide send ARGV`` as a process of its own; (exit status, stdout, stderr)."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot", "send", *argv, cwd=ROOT, env={**os.environ, "PRGUIDE_WEBHOOK_SECRET": secret},
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, err = await asyncio.wait_for(proc.communicate(), timeout=120)
    return proc.returncode, out.decode(), err.decode()


async def test_a_web_and_a_worker_replica_on_postgresql_post_one_guide(pg_url, app_private_key, tmp_path):  # noqa: F811
    secret = "two-replica-secret"
    procs = []
    async with start_sandbox(app_private_key) as sandbox:
        try:
            addresses = {}
            for role in ("web", "worker"):
                env = {
                    **os.environ,
                    "GITHUB_APP_ID": str(APP_ID),
                    "GITHUB_PRIVATE_KEY": app_private_key.decode().replace("\n", "\\n"),
                    "GITHUB_WEBHOOK_SECRET": secret,
                    "GITHUB_API_URL": sandbox.base_url,
                    "HOST": "127.0.0.1",
                    "PORT": "0",
                    "PRGUIDE_DATABASE_URL": pg_url,
                    "PRGUIDE_DB": str(tmp_path / f"{role}.db"),
                    "PRGUIDE_LOG_LEVEL": "INFO",
                }
                proc = await asyncio.create_subprocess_exec(
                    sys.executable, "-m", "bot", "serve", "--role", role, cwd=ROOT, env=env,
                    stderr=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.DEVNULL,
                )
                procs.append(proc)
                addresses[role] = await _listening(proc)
            bundle = synthetic_bundle(7, repo="octo-org/demo")
            path = tmp_path / "7.json"
            path.write_text(json.dumps(bundle), encoding="utf-8")
            webhook = f"http://{addresses['web']}/webhook"
            code, out, err = await send_command(
                "pull_request.closed", "--bundle", str(path), "--sandbox", sandbox.base_url, "--url", webhook, "--timeout", "60",
                secret=secret,
            )  # fmt: skip
            # The web replica took the delivery, the worker ran it, and the web replica told how it ended.
            assert code == 0 and err == "" and re.search(r" pull_request\.closed octo-org/demo#7: done \(created, after ", out), (out, err)
            comments = sandbox.state.snapshot()["comments"]["octo-org/demo#7"]
            assert f"Reading guide for #{bundle['pull']['number']}" in comments[0]["body"]
            async with aiohttp.ClientSession() as http:
                # The comment lands before the worker stores the guide for the tag view and
                # records the job as done: wait (bounded) for that, as the shared queue shows it.
                async with asyncio.timeout(60):
                    while True:
                        async with http.get(f"http://{addresses['web']}/healthz") as answer:
                            if (await answer.json())["queue"]["done"] == 1:
                                break
                        await asyncio.sleep(0.05)  # polling a condition, bounded by the timeout
                for address in addresses.values():
                    async with http.get(f"http://{address}/healthz") as answer:
                        assert answer.status == 200
                # The guide is in the shared tag view, whichever replica serves it.
                async with http.get(f"http://{addresses['web']}/repos/octo-org/demo/tags.json") as answer:
                    assert answer.status == 200
                    assert [item["number"] for item in (await answer.json())["items"]] == [7]
            state = sandbox.state.snapshot()
            assert len(state["comments"]["octo-org/demo#7"]) == 1

            # A comment made in the sandbox reaches the web replica as GitHub's delivery; the worker answers it.
            sandbox.set_webhook(webhook, secret)
            async with aiohttp.ClientSession() as http:
                made_at = f"{sandbox.base_url}/_sandbox/comments"
                async with http.post(made_at, json={"repo": "octo-org/demo", "number": 7, "user": "alice", "body": "/prguide why"}) as answer:
                    made = await answer.json()
            assert made["delivery"]["status"] == 202, made
            deadline = asyncio.get_running_loop().time() + 60
            while [r["content"] for r in sandbox.state.snapshot()["reactions"].get(str(made["id"]), [])] != ["eyes", "+1"]:
                assert asyncio.get_running_loop().time() < deadline, sandbox.state.snapshot()["reactions"]
                await asyncio.sleep(0.05)  # polling a condition another process brings about, with a deadline
        finally:
            for proc in procs:
                if proc.returncode is None:
                    proc.terminate()
            for proc in procs:
                try:
                    await asyncio.wait_for(proc.wait(), timeout=20)
                except TimeoutError:
                    proc.kill()
                    await proc.wait()
