"""The GitHub App manifest, the Dockerfile and the package metadata, checked without Docker."""

from __future__ import annotations

import asyncio
import fnmatch
import json
import os
import re
import sys
import tomllib
from pathlib import Path

import pytest
import yaml

from bot.app.routing import default_router

ROOT = Path(__file__).resolve().parents[1]

#: Keys of "GitHub App manifest parameters" ("Registering a GitHub App from a manifest").
MANIFEST_KEYS = {
    "name", "url", "hook_attributes", "redirect_url", "callback_urls", "setup_url", "description",
    "public", "default_events", "default_permissions", "request_oauth_on_install", "setup_on_update",
}  # fmt: skip


# --- app.yml ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def manifest() -> dict:
    return yaml.safe_load((ROOT / "app.yml").read_text(encoding="utf-8"))


def test_manifest_subscribes_to_exactly_the_events_prguide_handles(manifest):
    assert manifest["default_events"] == [
        "pull_request", "issue_comment", "pull_request_review", "pull_request_review_comment", "repository",
    ]
    # GitHub sends these to every app; listing them is an error.
    assert not {"installation", "installation_repositories"} & set(manifest["default_events"])
    assert set(default_router().events) <= set(manifest["default_events"])


def test_manifest_asks_for_exactly_the_permissions_prguide_uses(manifest):
    assert manifest["default_permissions"] == {
        "pull_requests": "write",
        "issues": "write",
        "contents": "read",
        "metadata": "read",
    }


def test_manifest_uses_only_documented_keys_and_points_the_webhook_at_the_server(manifest):
    assert set(manifest) <= MANIFEST_KEYS
    assert manifest["name"] == "prguide"
    assert manifest["url"].startswith("https://")  # required: the app's homepage
    assert isinstance(manifest["public"], bool)
    hook = manifest["hook_attributes"]
    assert hook["active"] is True
    assert hook["url"].startswith("https://") and hook["url"].endswith("/webhook")
    # GitHub takes the manifest as JSON; everything in it must survive the conversion.
    assert json.loads(json.dumps(manifest)) == manifest


# --- Dockerfile ------------------------------------------------------------------------------


def instructions(text: str) -> list[tuple[str, str]]:
    """``(INSTRUCTION, arguments)`` pairs, with ``\\`` continuations joined and comments dropped."""
    out: list[tuple[str, str]] = []
    pending = ""
    for line in text.splitlines():
        stripped = line.strip()
        if not pending and (not stripped or stripped.startswith("#")):
            continue
        if stripped.endswith("\\"):
            pending += stripped[:-1] + " "
            continue
        whole = (pending + stripped).strip()
        pending = ""
        if whole:
            word, _, rest = whole.partition(" ")
            out.append((word.upper(), rest.strip()))
    return out


@pytest.fixture(scope="module")
def final_stage() -> list[tuple[str, str]]:
    """The instructions of the image's last stage (the one that runs)."""
    steps = instructions((ROOT / "Dockerfile").read_text(encoding="utf-8"))
    last_from = max(i for i, (word, _) in enumerate(steps) if word == "FROM")
    return steps[last_from:]


def env_of(stage: list[tuple[str, str]]) -> dict[str, str]:
    env: dict[str, str] = {}
    for word, args in stage:
        if word == "ENV":
            for pair in args.split():
                name, _, value = pair.partition("=")
                env[name] = value
    return env


DIGEST = re.compile(r"@sha256:[0-9a-f]{64}(?:\s|$)")


def test_image_runs_prguide_serve_from_slim_python_312(final_stage):
    assert final_stage[0][1].startswith("python:3.12")
    assert "slim-bookworm" in final_stage[0][1]
    cmd = [args for word, args in final_stage if word == "CMD"]
    assert [json.loads(c) for c in cmd] == [["prguide", "serve"]]
    assert ("EXPOSE", "8080") in final_stage
    assert env_of(final_stage).get("PORT") == "8080"


def test_image_runs_as_a_non_root_user(final_stage):
    users = [args for word, args in final_stage if word == "USER"]
    assert users, "no USER: the server would run as root"
    user = users[-1].split(":")[0]
    assert user not in ("root", "0")
    # USER comes after the last RUN, so nothing set up later needs root.
    last_run = max(i for i, (word, _) in enumerate(final_stage) if word == "RUN")
    assert max(i for i, (word, _) in enumerate(final_stage) if word == "USER") > last_run


def test_image_carries_the_shipped_rules_and_says_where(final_stage):
    config_dir = env_of(final_stage)["PRGUIDE_CONFIG_DIR"]
    copies = [args.split() for word, args in final_stage if word == "COPY" and not args.startswith("--from")]
    assert ["config", config_dir] in copies
    assert any((ROOT / "config" / "rules").glob("*.yml")), "config/rules has no rule files to ship"


def test_image_keeps_the_job_database_on_a_volume(final_stage):
    db = Path(env_of(final_stage)["PRGUIDE_DB"])
    volumes = [json.loads(args) for word, args in final_stage if word == "VOLUME"]
    assert any(str(db.parent) in v for v in volumes)


def healthcheck_code(final_stage) -> str:
    (args,) = [args for word, args in final_stage if word == "HEALTHCHECK"]
    assert "--interval=" in args and "--timeout=" in args
    command = json.loads(args[args.index("CMD") + 3 :].strip())
    assert command[:2] == ["python", "-c"], "slim images have no curl"
    return command[2]


async def run_healthcheck(code: str, port: int) -> int:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-c", code, env={**os.environ, "PORT": str(port)},
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL,
    )  # fmt: skip
    return await asyncio.wait_for(proc.wait(), 30)


async def test_healthcheck_passes_against_a_running_server_and_fails_without_one(final_stage, tmp_path):
    from aiohttp import web

    from bot.app.server import create_app
    from bot.app.settings import Settings
    from bot.demo import generate_private_key
    from bot.engine.rules import load_rules

    code = healthcheck_code(final_stage)
    assert "/healthz" in code
    settings = Settings(
        app_id=1, private_key=generate_private_key(), webhook_secret="s", api_url="http://127.0.0.1:9",
        host="127.0.0.1", port=0, db_path=tmp_path / "jobs.db",
    )  # fmt: skip
    runner = web.AppRunner(create_app(settings, rules=load_rules([])))
    await runner.setup()
    try:
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        port = runner.addresses[0][1]
        assert await run_healthcheck(code, port) == 0
    finally:
        await runner.cleanup()
    assert await run_healthcheck(code, port) != 0  # nothing listens there any more


def dockerignore_patterns() -> list[str]:
    lines = (ROOT / ".dockerignore").read_text(encoding="utf-8").splitlines()
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")]


def ignored(path: str, patterns: list[str]) -> bool:
    return any(fnmatch.fnmatch(path, p) or fnmatch.fnmatch(path, p.removeprefix("**/")) for p in patterns)


def test_what_the_dockerfile_copies_exists_and_is_not_dockerignored():
    patterns = dockerignore_patterns()
    steps = instructions((ROOT / "Dockerfile").read_text(encoding="utf-8"))
    sources = [s for word, args in steps if word == "COPY" and not args.startswith("--from") for s in args.split()[:-1]]
    assert {"pyproject.toml", "README.md", "bot", "config"} <= set(sources)
    for source in sources:
        assert (ROOT / source).exists(), source
        assert not ignored(source, patterns), source


def test_dockerignore_keeps_secrets_history_and_local_state_out_of_the_image():
    patterns = dockerignore_patterns()
    for path in (".git", "tests", "app.private-key.pem", "prguide.db", ".venv", "bot/__pycache__"):
        assert ignored(path, patterns), path


# --- pyproject.toml -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def test_the_prguide_console_script_runs_the_cli(pyproject):
    from bot import cli

    assert pyproject["project"]["scripts"]["prguide"] == "bot.cli:main"
    assert callable(cli.main)
    assert pyproject["project"]["requires-python"] == ">=3.11"


def test_the_cli_offers_serve_and_demo():
    from bot.cli import build_parser

    parser = build_parser()
    assert parser.parse_args(["serve"]).func.__name__ == "_cmd_serve"
    args = parser.parse_args(["demo", "--json"])
    assert args.json is True and args.func.__module__ == "bot.demo"


def test_every_non_python_file_of_the_package_is_package_data(pyproject):
    # The image installs a wheel, not the checkout: templates left out would be missing there.
    patterns = pyproject["tool"]["setuptools"]["package-data"]["bot"]
    included = {p for pattern in patterns for p in (ROOT / "bot").glob(pattern) if p.is_file()}
    data_files = {
        p for p in (ROOT / "bot").rglob("*")
        if p.is_file() and p.suffix not in (".py", ".pyc") and "__pycache__" not in p.parts
    }  # fmt: skip
    assert data_files, "expected templates in the package"
    assert sorted(map(str, data_files - included)) == []


# --- reproducible image: pinned base, locked dependencies ----------------------------------------


def test_every_stage_starts_from_the_same_base_image_pinned_by_digest():
    steps = instructions((ROOT / "Dockerfile").read_text(encoding="utf-8"))
    bases = [args.split()[0] for word, args in steps if word == "FROM"]
    assert len(bases) >= 2
    assert len(set(bases)) == 1, bases
    assert DIGEST.search(bases[0] + " "), f"{bases[0]} is not pinned by digest"


def run_commands(stage: list[tuple[str, str]]) -> list[str]:
    return [part.strip() for word, args in stage if word == "RUN" for part in args.split("&&")]


def test_image_installs_dependencies_from_the_lock_file_with_hashes_then_runs_pip_check(final_stage):
    copies = [args.split() for word, args in final_stage if word == "COPY" and not args.startswith("--from")]
    lock_target = next(dest for *sources, dest in copies if sources == ["requirements.lock"])
    commands = run_commands(final_stage)
    installs = [i for i, c in enumerate(commands) if c.startswith("pip install")]
    assert installs, "the image installs nothing"
    locked = [i for i in installs if f"-r {lock_target}" in commands[i]]
    assert locked, "the dependencies are not installed from requirements.lock"
    assert "--require-hashes" in commands[locked[0]]
    # Everything else pip installs is prguide's own wheel, without dependencies and off the network.
    for i in installs:
        if i not in locked:
            assert "--no-deps" in commands[i] and "--no-index" in commands[i], commands[i]
    assert any(c == "pip check" for c in commands[max(installs) + 1 :]), "no pip check after the last install"


def test_build_stage_builds_the_wheel_with_locked_tools_only():
    steps = instructions((ROOT / "Dockerfile").read_text(encoding="utf-8"))
    last_from = max(i for i, (word, _) in enumerate(steps) if word == "FROM")
    commands = run_commands(steps[:last_from])
    assert any("--require-hashes" in c and "-r requirements-build.lock" in c for c in commands)
    wheel = [c for c in commands if c.startswith("pip wheel")]
    assert wheel and all("--no-build-isolation" in c and "--no-deps" in c for c in wheel)


def locked(name: str) -> dict[str, tuple[str, str, list[str]]]:
    """``{canonical name: (version, marker, hashes)}`` of a ``pip-compile``/``uv pip compile`` lock file."""
    from packaging.utils import canonicalize_name

    text = (ROOT / name).read_text(encoding="utf-8")
    entries = {}
    for entry in re.sub(r"\\\n\s*", " ", text).splitlines():
        entry = entry.split("#", 1)[0].strip()
        if not entry:
            continue
        head, *hashes = entry.split("--hash=")
        requirement, _, marker = head.partition(";")
        project, _, version = requirement.partition("==")
        assert version, f"{name}: {entry!r} is not pinned with =="
        entries[canonicalize_name(project)] = (version.strip(), marker.strip(), [h.strip() for h in hashes])
    return entries


def test_lock_file_pins_every_runtime_dependency_with_hashes(pyproject):
    from packaging.markers import Marker
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    lock = locked("requirements.lock")
    assert lock, "requirements.lock is empty"
    for project, (version, marker, hashes) in lock.items():
        assert hashes and all(h.startswith("sha256:") for h in hashes), project
    linux = {"sys_platform": "linux", "platform_system": "Linux", "python_version": "3.12",
             "platform_python_implementation": "CPython", "implementation_name": "cpython"}  # fmt: skip
    for text in pyproject["project"]["dependencies"]:
        wanted = Requirement(text)
        name = canonicalize_name(wanted.name)
        assert name in lock, f"{wanted.name} is a dependency but not in requirements.lock"
        version, marker, _ = lock[name]
        assert wanted.specifier.contains(version), f"requirements.lock pins {name}=={version}, pyproject wants {text}"
        assert not marker or Marker(marker).evaluate(linux), f"{name} is locked only for {marker}"
    # Extras pull in more: PyJWT[crypto] needs cryptography.
    assert "cryptography" in lock


def test_build_lock_covers_the_build_requirements(pyproject):
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    lock = locked("requirements-build.lock")
    inputs = [
        line.strip() for line in (ROOT / "requirements-build.in").read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.startswith("#")
    ]  # fmt: skip
    assert inputs == pyproject["build-system"]["requires"]
    for text in inputs:
        wanted = Requirement(text)
        version, _, hashes = lock[canonicalize_name(wanted.name)]
        assert wanted.specifier.contains(version) and hashes


def test_lock_files_say_how_to_refresh_them():
    for name, source in (("requirements.lock", "pyproject.toml"), ("requirements-build.lock", "requirements-build.in")):
        header = (ROOT / name).read_text(encoding="utf-8").splitlines()[:2]
        assert header[1].startswith(f"#    uv pip compile {source} ") and "--generate-hashes" in header[1], header
        assert f"--output-file {name}" in header[1]
        assert header[1].removeprefix("#    ") in (ROOT / "docs" / "deploy.md").read_text(encoding="utf-8")
