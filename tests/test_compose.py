"""compose.yaml (PostgreSQL, a web and a worker replica, the sandbox) checked without Docker,
and the trial it describes run for real: two ``prguide serve`` processes sharing PostgreSQL,
one taking the delivery, the other posting the guide in the sandbox."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import re
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


def send_delivery_module():
    spec = importlib.util.spec_from_file_location("send_delivery", ROOT / "tools" / "send_delivery.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


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
    # What the README's trial command sends matches what compose publishes.
    tool = send_delivery_module()
    defaults = tool.main.__code__.co_consts
    assert "http://127.0.0.1:8080/webhook" in defaults and "http://127.0.0.1:9000" in defaults
    assert "127.0.0.1:8080:8080" in services["web"]["ports"] and "127.0.0.1:9000:9000" in services["sandbox"]["ports"]
    assert env["GITHUB_WEBHOOK_SECRET"] == "compose-trial-secret" and "compose-trial-secret" in defaults
    # Only published on loopback: the trial is not reachable from the network.
    for service in services.values():
        assert all(str(p).startswith("127.0.0.1:") for p in service.get("ports", []))
    assert "ports" not in services["worker"]


def test_readme_shows_the_compose_trial():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "docker compose up --build -d" in readme and "tools/send_delivery.py" in readme


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


async def test_a_web_and_a_worker_replica_on_postgresql_post_one_guide(pg_url, app_private_key, tmp_path):  # noqa: F811
    tool = send_delivery_module()
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
            result = await asyncio.to_thread(
                tool.send, f"http://{addresses['web']}/webhook", sandbox.base_url.rstrip("/"), secret, bundle, timeout=60
            )
            assert result["status"] == 202 and result["comment"] is not None, result
            assert f"Reading guide for #{bundle['pull']['number']}" in result["comment"]
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
