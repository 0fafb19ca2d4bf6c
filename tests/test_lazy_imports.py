"""Heavy optional libraries are imported only when used: the narrator's ``openai`` client,
the PostgreSQL driver and the tag view's feed writer (feedgen, with lxml) cost memory (~20,
~10 and ~7 MiB) and start-up time in every process that imports them, so a command without
a narrator, or a server on SQLite that serves no feed, must not.

Each check runs in a fresh interpreter and reads its ``sys.modules``: this test process has
long imported both libraries through other tests.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from sandbox_helpers import app_private_key  # noqa: F401

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("openai", "psycopg", "psycopg_pool", "feedgen", "lxml")

#: Prints which of HEAVY are loaded when the interpreter exits (after main() returned).
_REPORT = (
    "import atexit, json, sys\n"
    f"atexit.register(lambda: print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]), flush=True))\n"
)


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PRGUIDE_", "GITHUB_"))}
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return {**env, **extra}


def _loaded(stdout: str) -> list[str]:
    return json.loads(stdout.strip().splitlines()[-1])


def test_importing_the_cli_loads_neither_openai_nor_psycopg():
    done = subprocess.run(
        [sys.executable, "-c", _REPORT + "import bot.cli"], cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert _loaded(done.stdout) == []


def test_history_without_a_narrator_does_not_load_openai(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    git_env = {"GIT_AUTHOR_NAME": "Ada", "GIT_AUTHOR_EMAIL": "a@x", "GIT_COMMITTER_NAME": "Ada",
               "GIT_COMMITTER_EMAIL": "a@x", "PATH": "/usr/bin:/bin"}  # fmt: skip
    for args in (["init", "-q", "-b", "main"], None, ["add", "."], ["commit", "-qm", "init"], None, ["commit", "-qam", "feat: stop (#3)"]):
        if args is None:
            source = repo / "app.py"
            source.write_text("def run():\n    return 1\n" + ("\n\ndef stop():\n    return 0\n" if source.exists() else ""))
            continue
        subprocess.run(["git", "-C", str(repo), *args], check=True, env=git_env, capture_output=True)
    code = _REPORT + f"from bot.cli import main\nsys.exit(main(['history', '--repo', {str(repo)!r}, '--last', '1']))"
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "#3" in done.stdout  # the guide was built: the command really ran
    assert _loaded(done.stdout) == []


def test_engine_commands_do_not_load_the_server_sandbox_or_http_libraries(tmp_path):
    """``prguide history`` (and ``--version``) build the argument parser without importing the
    other commands' modules: the sandbox's alone (aiohttp, jwt, cryptography) cost a fifth of
    a second of CPU on every run."""
    server_side = ("aiohttp", "jwt", "cryptography", "bot.sandbox", "bot.send", "bot.demo", "bot.dbcli", "asyncio", "bot.narrator.run")
    report = (
        "import atexit, json, sys\n"
        f"atexit.register(lambda: print(json.dumps([m for m in {server_side!r} if m in sys.modules]), flush=True))\n"
    )
    for argv in (["--version"], ["history", "--repo", str(tmp_path), "--last", "1"], ["rules", "check", str(ROOT / "config")]):
        code = report + f"from bot.cli import main\ntry:\n    main({argv!r})\nexcept SystemExit:\n    pass"
        done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=120)
        assert _loaded(done.stdout) == [], (argv, done.stderr)


def test_a_chosen_optional_command_still_gets_its_arguments():
    code = "from bot.cli import main\nmain(['view', '--help'])"
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=120)
    assert "--export" in done.stdout and "--per-label" in done.stdout


async def test_serve_on_sqlite_does_not_load_openai_or_psycopg(tmp_path, app_private_key):  # noqa: F811
    env = _env(
        GITHUB_APP_ID="4242",
        GITHUB_PRIVATE_KEY=app_private_key.decode().replace("\n", "\\n"),
        GITHUB_WEBHOOK_SECRET="lazy-secret",
        GITHUB_API_URL="http://127.0.0.1:9",  # never answers: the credential check only logs a warning
        HOST="127.0.0.1",
        PORT="0",
        PRGUIDE_DB=str(tmp_path / "prguide.db"),
        PRGUIDE_LOG_LEVEL="INFO",
    )
    code = _REPORT + "from bot.cli import main\nsys.exit(main(['serve']))"
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-c", code, cwd=ROOT, env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    try:
        while True:  # start-up is over (features loaded, stores open, workers running) once it listens
            line = await asyncio.wait_for(proc.stderr.readline(), 60)
            assert line, "the server exited before listening"
            if b'"listening on' in line:
                break
        proc.send_signal(signal.SIGTERM)
        stdout, stderr = await asyncio.wait_for(proc.communicate(), 60)
        assert proc.returncode == 0, stderr.decode()
        assert _loaded(stdout.decode()) == []
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()


def test_database_errors_name_psycopg_once_it_is_loaded():
    import sqlite3

    import psycopg

    from bot.app.errors import database_errors

    assert database_errors() == (sqlite3.Error, psycopg.Error)
    try:
        raise psycopg.OperationalError("server closed the connection")
    except database_errors() as exc:  # what the webhook and the pool catch to answer 503 / retry
        assert isinstance(exc, psycopg.Error)
