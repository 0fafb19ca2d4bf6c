"""What every benchmark in ``bench/`` shares: paths, statistics, tables, and the loopback stack.

The scripts are plain Python (``python bench/NAME.py [--quick]``) and talk to nothing but
127.0.0.1. Each prints the exact command line it ran, the machine, and Markdown tables
with medians over several rounds next to a reference measured in the same run: on a
shared machine only such ratios mean much.

Pieces:

* :data:`ROOT`, :data:`SHARED`, :data:`CORPUS`, :data:`WEBHOOKS`: the project and the
  shared real data (``../shared`` next to the project root, or ``$PRGUIDE_SHARED``);
* :func:`median`, :func:`percentile`, :func:`table`, :func:`header`, :func:`verdict_line`:
  reporting; every header carries the host's reference figure (:func:`calibrate`: a fixed
  pure-Python loop's time), so runs on different machines can be compared;
* :func:`count_instructions`, :func:`mark`: instructions executed between marks of a child
  process, counted by ``valgrind --tool=callgrind`` (they do not move with the machine's load);
* :func:`cpu_seconds`, :func:`rss_kb`: a process's CPU time and memory from ``/proc``
  (the CPU of PostgreSQL's backends serving a process: ``bench/pgmeter.py``);
* :func:`delivery_body`: a signed-delivery-ready ``pull_request`` ``closed`` payload
  (GitHub's full shape, ~25 KB) for a corpus pull request;
* :class:`Stack`: the GitHub sandbox and prguide's webhook server in this process, as
  ``prguide demo`` runs them, with a client session to send deliveries;
* :class:`ChildProcess`, :func:`start_sandbox_process`, :func:`start_serve_process`:
  ``prguide sandbox`` and ``prguide serve`` as separate processes on free ports.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import json
import math
import os
import platform
import re
import shlex
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # runnable from a checkout without installing prguide
    sys.path.insert(0, str(ROOT))

SHARED = Path(os.environ.get("PRGUIDE_SHARED", ROOT.parent / "shared"))
CORPUS = SHARED / "corpus" / "verl"
#: Every corpus of real merged pull requests (the engine benchmarks use them all).
CORPORA = (CORPUS, SHARED / "corpus" / "verl-2026h1")
WEBHOOKS = SHARED / "fixtures" / "webhooks"
#: A real ``pull_request`` ``closed`` delivery from GitHub's docs, the shape our payloads copy.
CLOSED_FIXTURE = WEBHOOKS / "pull_request" / "closed.payload.json"

APP_ID = 1
INSTALLATION_ID = 1
#: At least this many rounds per measurement (issue 7: medians over >= 5 rounds).
MIN_ROUNDS = 5


# --- reporting ---------------------------------------------------------------------------


def command_line(paths: Sequence[str | Path] = ()) -> str:
    """The command that started this script, as a user would type it; each of ``paths``
    given in it is shown by :func:`shown` (no machine paths in a report)."""
    script = Path(sys.argv[0])
    with contextlib.suppress(ValueError):
        script = script.resolve().relative_to(Path.cwd())
    hidden = {str(p): shown(Path(p)) for p in paths}
    return shlex.join(["python", str(script), *(hidden.get(a, a) for a in sys.argv[1:])])


def machine() -> dict[str, str]:
    """Date (UTC), CPU count, CPU model (``/proc/cpuinfo``), Python version, load average."""
    model = platform.processor() or platform.machine()
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    load = ""
    with contextlib.suppress(OSError):
        load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    return {
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "nproc": str(os.cpu_count()),
        "cpu": model,
        "python": platform.python_version(),
        "load average": load,
    }


def header(title: str, *, calibrate_host: bool = True, paths: Sequence[str | Path] = ()) -> str:
    """The lines every script prints first: title, command line (``paths`` in it shown by
    :func:`shown`), machine, the host's reference figure."""
    m = machine()
    text = (
        f"# {title}\n\n"
        f"command: `{command_line(paths)}`\n"
        f"machine: {m['nproc']} CPU(s), {m['cpu']}, Python {m['python']}, "
        f"load average {m['load average']}, {m['date']}\n"
    )
    if calibrate_host:
        ref = calibrate()
        text += (
            f"host reference: {CALIBRATION_NAME} {ref['ms']:.1f} ms "
            f"(best of {ref['rounds']}; CPU {ref['cpu_ms']:.1f} ms): divide a time by it to compare hosts\n"
        )
    return text


# --- the host's reference figure ----------------------------------------------------------------

CALIBRATION_NAME = "calibration loop (bench/common.py calibration_loop)"
CALIBRATION_N = 100_000


def calibration_loop(n: int = CALIBRATION_N) -> int:
    """A fixed pure-Python workload (string formatting, dict and list operations, integer
    arithmetic, a method call per step), the host's reference: its instruction count is the same on every
    host for one Python build, its time says how fast this host runs Python right now."""
    counts: dict[str, int] = {}
    words: list[str] = []
    total = 0
    for i in range(n):
        key = f"w{i % 997}"
        counts[key] = counts.get(key, 0) + 1
        if i % 7 == 0:
            words.append(key.upper())
        total += (i * 31) ^ (total >> 3)
        total &= 0xFFFFFFFF
    return total + len(words) + len(counts)


def calibrate(rounds: int = 5) -> dict[str, float]:
    """:func:`calibration_loop`'s best wall and CPU milliseconds over ``rounds`` runs (after one untimed run)."""
    calibration_loop()
    walls, cpus = [], []
    for _ in range(rounds):
        w, c = time.perf_counter(), time.process_time()
        calibration_loop()
        cpus.append((time.process_time() - c) * 1000)
        walls.append((time.perf_counter() - w) * 1000)
    return {"ms": min(walls), "cpu_ms": min(cpus), "rounds": rounds}


# --- instruction counts ---------------------------------------------------------------------------


def mark() -> None:
    """A mark between parts of a process run under :func:`count_instructions`: the
    instructions before and after it are counted apart (callgrind dumps its counters
    whenever ``getppid`` is entered; nothing else in a benchmark child calls it)."""
    os.getppid()


def valgrind() -> str | None:
    """The ``valgrind`` executable, or None (``perf stat -e instructions`` needs hardware
    counters that virtual machines often hide; callgrind counts in software)."""
    return shutil.which("valgrind")


def count_instructions(argv: Sequence[str], *, env: Mapping[str, str] | None = None, timeout: float = 3600) -> list[int]:
    """Instructions (callgrind's ``Ir``) the process ``argv`` executes, split at each :func:`mark`.

    Returns one count per part: before the first mark, between marks, after the last
    one (program exit). Runs with ``PYTHONHASHSEED=0`` so that a run is repeatable.
    Raises ``RuntimeError`` when valgrind is missing or the process fails.
    """
    tool = valgrind()
    if tool is None:
        raise RuntimeError("valgrind not found")
    with tempfile.TemporaryDirectory(prefix="prguide-callgrind-") as tmp:
        out = Path(tmp) / "cg.out"
        done = subprocess.run(
            [tool, "--tool=callgrind", f"--callgrind-out-file={out}", "--dump-before=getppid", *argv],
            env={**os.environ, "PYTHONHASHSEED": "0", **(env or {})},
            cwd=ROOT, capture_output=True, text=True, timeout=timeout,
        )  # fmt: skip
        if done.returncode != 0:
            raise RuntimeError(f"{argv[:3]} under callgrind exited with {done.returncode}: {done.stderr.strip()[-500:]}")
        parts: dict[int, int] = {}
        for path in Path(tmp).glob("cg.out*"):
            text = path.read_text(errors="replace")
            part = re.search(r"^part: (\d+)$", text, re.MULTILINE)
            total = re.search(r"^totals: (\d+)", text, re.MULTILINE)
            if total:
                parts[int(part.group(1)) if part else 1] = int(total.group(1))
    return [parts[k] for k in sorted(parts)]


def export_revision(revision: str, into: Path) -> Path:
    """The ``bot`` and ``config`` folders of git revision ``revision`` of this checkout, written under ``into``.

    For a before/after in one run (``--baseline``): a child process measuring that
    revision puts ``into`` first on its ``sys.path``. Exits with git's message for an
    unknown revision.
    """
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", revision, "bot", "config"], capture_output=True, check=False)
    if archive.returncode != 0:
        raise SystemExit(f"--baseline {revision}: {archive.stderr.decode(errors='replace').strip()}")
    into.mkdir(parents=True, exist_ok=True)
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)
    return into


def median(values: Iterable[float]) -> float:
    """The median of ``values`` (NaN when there are none)."""
    data = list(values)
    return statistics.median(data) if data else math.nan


def percentile(values: Sequence[float], p: float) -> float:
    """The ``p``-th percentile (0-100) of ``values``, nearest-rank; NaN when empty."""
    data = sorted(values)
    if not data:
        return math.nan
    rank = max(1, math.ceil(p / 100 * len(data)))
    return data[min(rank, len(data)) - 1]


def table(headers: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    """A Markdown table; floats are shown with up to 3 significant decimals."""

    def cell(value: Any) -> str:
        if isinstance(value, float):
            if math.isnan(value):
                return "-"
            if abs(value) >= 100:
                return f"{value:,.0f}"
            if abs(value) >= 10:
                return f"{value:.1f}"
            return f"{value:.2f}"
        return str(value)

    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---:" if i else "---" for i in range(len(headers))) + "|"]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def verdict(ok: bool) -> str:
    """``met`` or ``MISSED``, for the target column."""
    return "met" if ok else "MISSED"


def verdict_line(target: str, measured: str, ok: bool) -> str:
    """One line ``verdict: TARGET: MEASURED: met|MISSED``; ``bench/report.py`` collects them into the summary."""
    return f"verdict: {target}: {measured}: {verdict(ok)}"


# --- data ------------------------------------------------------------------------------------


def shown(path: Path) -> str:
    """``path`` as a report shows it: under the shared data as ``shared/...``, else its name (no machine paths)."""
    with contextlib.suppress(ValueError):
        return str(Path("shared") / Path(path).resolve().relative_to(SHARED.resolve()))
    return Path(path).name


def need_corpus(folder: Path = CORPUS) -> Path:
    """``folder`` if it holds bundles, else exit with a message naming ``PRGUIDE_SHARED``."""
    if not any(folder.glob("*.json")):
        raise SystemExit(f"no pull request bundles in {folder} (set PRGUIDE_SHARED to the shared/ folder)")
    return folder


def load_bundles(folder: Path = CORPUS) -> list[dict[str, Any]]:
    """Every ``*.json`` bundle in ``folder``, by file name."""
    return [json.loads(p.read_text(encoding="utf-8")) for p in sorted(need_corpus(folder).glob("*.json"))]


def bundle_weight(bundle: Mapping[str, Any]) -> int:
    """How much diff a bundle carries (characters of patches), to pick the largest."""
    return sum(len(f.get("patch") or "") for f in bundle.get("files") or ())


def delivery_bodies(bundles: Sequence[Mapping[str, Any]], key_pem: bytes) -> list[bytes]:
    """:func:`delivery_body` for each bundle, with the repository as the sandbox serves it."""
    from bot.sandbox import Sandbox

    local = Sandbox(APP_ID, key_pem, installation_id=INSTALLATION_ID)
    bodies = []
    for bundle in bundles:
        owner, name = local.add_bundle(bundle).split("/", 1)
        bodies.append(delivery_body(bundle, local.state.repo_json(local.state.repo(owner, name))))
    return bodies


def delivery_body(bundle: Mapping[str, Any], repository: Mapping[str, Any], *, installation_id: int = INSTALLATION_ID) -> bytes:
    """The JSON body of the ``pull_request`` ``closed`` (merged) delivery of ``bundle``'s pull request.

    Built with :func:`bot.demo.merged_event`; the pull request's ``head``/``base`` repository
    objects and the top-level ``repository`` are filled out from GitHub's example delivery
    (``closed.payload.json``) as real deliveries carry them, so the body is ~25 KB like
    GitHub's ("Webhook events and payloads", ``pull_request``).
    """
    from bot.demo import merged_event

    payload = merged_event(bundle["pull"], repository, installation_id=installation_id)
    if CLOSED_FIXTURE.exists():
        example = json.loads(CLOSED_FIXTURE.read_text(encoding="utf-8"))
        full = {**copy.deepcopy(example["repository"]), **payload["repository"]}
        payload["repository"] = full
        pull = payload["pull_request"]
        for side in ("head", "base"):
            ref = dict(pull.get(side) or {})
            ref["repo"] = full
            pull[side] = {**example["pull_request"][side], **ref}
        for key in ("assignees", "requested_reviewers", "_links", "labels"):
            pull.setdefault(key, example["pull_request"].get(key))
    return json.dumps(payload).encode("utf-8")


def delivery_headers(body: bytes, secret: str, delivery_id: str | None = None) -> dict[str, str]:
    """Headers of a signed delivery of ``body`` (a fresh GUID unless ``delivery_id`` is given)."""
    from bot.demo import delivery_headers as demo_headers

    return demo_headers(body, secret, delivery_id or str(uuid.uuid4()))


# --- processes ---------------------------------------------------------------------------------


def free_port() -> int:
    """A TCP port on 127.0.0.1 nobody listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds process ``pid`` has used so far (``/proc/<pid>/stat``; 0 when it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_kb(pid: int) -> tuple[int, int]:
    """``(VmRSS, VmHWM)`` of process ``pid`` in KiB, from ``/proc/<pid>/status``."""
    rss = hwm = 0
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            rss = int(line.split()[1])
        elif line.startswith("VmHWM:"):
            hwm = int(line.split()[1])
    return rss, hwm


class ChildProcess:
    """A child process with its stderr in a temporary file (so a chatty log never blocks it).

    Stopped with SIGTERM (then SIGKILL after ``grace`` seconds) by :meth:`stop`.
    """

    def __init__(self, argv: Sequence[str], *, env: Mapping[str, str] | None = None, stdout: int | None = None):
        self.argv = list(argv)
        self._log = tempfile.NamedTemporaryFile(prefix="prguide-bench-", suffix=".log", delete=False)
        self.proc = subprocess.Popen(
            self.argv,
            env={**os.environ, **(env or {})},
            stdout=stdout if stdout is not None else subprocess.DEVNULL,
            stderr=self._log,
            cwd=ROOT,
        )

    @property
    def pid(self) -> int:
        """The child's process id."""
        return self.proc.pid

    def log_tail(self, lines: int = 20) -> str:
        """The last lines of the child's stderr."""
        self._log.flush()
        text = Path(self._log.name).read_text(encoding="utf-8", errors="replace")
        return "\n".join(text.splitlines()[-lines:])

    def stop(self, grace: float = 10.0) -> int | None:
        """Terminate the child and wait for it; returns its exit status."""
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(grace)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._log.close()
        with contextlib.suppress(OSError):
            os.unlink(self._log.name)
        return self.proc.returncode


async def wait_http(url: str, *, timeout: float = 30.0, child: ChildProcess | None = None) -> None:
    """Wait until ``GET url`` answers 200; raises ``RuntimeError`` on time-out or when ``child`` dies."""
    import aiohttp

    deadline = time.monotonic() + timeout
    async with aiohttp.ClientSession() as http:
        while True:
            if child is not None and child.proc.poll() is not None:
                raise RuntimeError(f"{child.argv[:4]} exited with {child.proc.returncode}:\n{child.log_tail()}")
            with contextlib.suppress(aiohttp.ClientError, OSError):
                async with http.get(url) as answer:
                    if answer.status == 200:
                        return
            if time.monotonic() > deadline:
                raise RuntimeError(f"{url} did not answer within {timeout:g} s")
            await asyncio.sleep(0.05)


def write_key(folder: Path) -> tuple[str, Path]:
    """A fresh app private key (PEM text) and the file it was written to in ``folder``."""
    from bot.demo import generate_private_key

    pem = generate_private_key()
    path = folder / "app-key.pem"
    path.write_text(pem)
    return pem, path


async def start_sandbox_process(key_path: Path, *, bundles: Path = CORPUS, latency_ms: float = 0.0) -> tuple[ChildProcess, str]:
    """``prguide sandbox`` serving ``bundles`` on a free loopback port; returns it and its base URL."""
    port = free_port()
    argv = [
        sys.executable, "-m", "bot", "sandbox", "--host", "127.0.0.1", "--port", str(port),
        "--app-id", str(APP_ID), "--app-key", str(key_path), "--installation-id", str(INSTALLATION_ID),
        "--bundles", str(bundles), "--latency-ms", str(latency_ms),
    ]  # fmt: skip
    child = ChildProcess(argv)
    url = f"http://127.0.0.1:{port}"
    await wait_http(url + "/_sandbox/faults", child=child)
    return child, url


def serve_env(*, key_pem: str, secret: str, api_url: str, port: int, db: str, workers: int = 4, log_level: str = "INFO") -> dict[str, str]:
    """The environment ``prguide serve`` reads (see :func:`bot.app.settings.from_env`)."""
    return {
        "GITHUB_APP_ID": str(APP_ID),
        "GITHUB_PRIVATE_KEY": key_pem,
        "GITHUB_WEBHOOK_SECRET": secret,
        "GITHUB_API_URL": api_url,
        "HOST": "127.0.0.1",
        "PORT": str(port),
        "PRGUIDE_DB": db,
        "PRGUIDE_WORKERS": str(workers),
        "PRGUIDE_LOG_LEVEL": log_level,
    }


async def start_serve_process(env: Mapping[str, str]) -> tuple[ChildProcess, str]:
    """``prguide serve`` with ``env`` (see :func:`serve_env`); returns it and its base URL once healthy."""
    child = ChildProcess([sys.executable, "-m", "bot", "serve"], env=env)
    url = f"http://127.0.0.1:{env['PORT']}"
    await wait_http(url + "/healthz", child=child)
    return child, url


# --- the whole app in this process ---------------------------------------------------------------


class Stack:
    """The sandbox and prguide's webhook server on loopback in this process, as ``prguide demo`` runs them.

    ``bundles`` are served by the sandbox in their own repository (``verl-project/verl``
    for the corpus), and ``copies - 1`` more times in repositories named ``<repo>-1``,
    ``<repo>-2``... of the same installation; :attr:`pulls` lists ``(repository, bundle)``.
    ``latency_ms`` delays every GitHub API answer; ``workers`` is the pool's concurrency;
    ``client_options`` go to :class:`bot.app.github.ClientFactory` (e.g.
    ``write_rate``/``write_burst``); ``db_path`` is the job database (default: a fresh
    temporary file, which may already hold queued jobs); ``rate_limit`` is the sandbox's
    primary rate limit per hour. ``clock`` (epoch seconds; default the real one) is the
    app's clock for what it remembers over time: installation tokens (about an hour) and
    repositories without a config file (``MISSING_CONFIG_TTL``); moving it forward between
    deliveries simulates merges that far apart (the sandbox keeps real time, so ``clock``
    must never run behind it: the sandbox would refuse tokens it sees as expired). Use as
    ``async with Stack(...) as stack``.

    Measured on the sandbox's side: :attr:`comment_times` (``"owner/repo#N"`` -> the
    ``perf_counter()`` times comments were created there), :attr:`write_times`
    (content-creating requests), :attr:`max_in_flight` (most GitHub API requests
    answered at once).
    """

    def __init__(
        self,
        bundles: Sequence[Mapping[str, Any]],
        *,
        copies: int = 1,
        latency_ms: float = 0.0,
        workers: int = 4,
        client_options: Mapping[str, Any] | None = None,
        key_pem: str | None = None,
        db_path: Path | None = None,
        rate_limit: int = 5000,
        clock: Callable[[], float] | None = None,
    ):
        self.bundles = list(bundles)
        self.clock = clock
        self.rate_limit = rate_limit
        self.copies = copies
        self.latency_ms = latency_ms
        self.workers = workers
        self.client_options = dict(client_options or {})
        self.key_pem = key_pem
        self.db_path = db_path
        self.pulls: list[tuple[str, Mapping[str, Any]]] = []
        self.comment_times: dict[str, list[float]] = {}
        self.write_times: list[float] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self.secret = uuid.uuid4().hex

    async def __aenter__(self) -> Stack:
        import aiohttp
        from aiohttp import web

        from bot.app.server import create_app
        from bot.app.settings import Settings
        from bot.demo import generate_private_key
        from bot.engine.rules import load_rules
        from bot.sandbox import Sandbox

        self._tmp = tempfile.TemporaryDirectory(prefix="prguide-bench-")
        self.key_pem = key = self.key_pem or generate_private_key()
        self.sandbox = Sandbox(
            APP_ID, key, installation_id=INSTALLATION_ID, latency_ms=self.latency_ms, rate_limit=self.rate_limit
        )
        for copy_number in range(self.copies):
            for bundle in self.bundles:
                repo = self.sandbox.add_bundle(bundle)
                if copy_number:
                    repo = self.sandbox.add_bundle(bundle, repo=f"{repo}-{copy_number}")
                self.pulls.append((repo, bundle))
        self._instrument()
        if self.clock is not None:
            self._simulated_tokens(self.clock)
        self.sandbox_url = await self.sandbox.start("127.0.0.1", 0)
        self.settings = Settings(
            app_id=APP_ID, private_key=key, webhook_secret=self.secret, api_url=self.sandbox_url,
            host="127.0.0.1", port=0, db_path=self.db_path or Path(self._tmp.name) / "prguide.db",
            workers=self.workers, log_level="WARNING",
        )  # fmt: skip
        extra: dict[str, Any] = {}
        self._app_http = None
        if self.clock is not None:
            from bot.app.auth import AppAuth

            self._app_http = extra["session"] = aiohttp.ClientSession()
            extra["auth"] = AppAuth(str(APP_ID), key, api_url=self.sandbox_url, session=self._app_http, clock=self.clock)
        self.app = create_app(self.settings, rules=load_rules(), client_options=self.client_options, **extra)
        self.runner = web.AppRunner(self.app, access_log=None)
        #: When the worker pool started (``perf_counter()``): jobs already queued run from here.
        self.started = time.perf_counter()
        await self.runner.setup()
        if self.clock is not None:
            from bot.app.config_memory import MissingConfigs
            from bot.app.server import STATE

            services = self.app[STATE].services
            services.missing_configs = MissingConfigs(ttl=services.missing_configs.ttl, clock=self.clock)
        site = web.TCPSite(self.runner, "127.0.0.1", 0)
        await site.start()
        host, port = self.runner.addresses[0][:2]
        self.app_url = f"http://{host}:{port}"
        self.http = aiohttp.ClientSession()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.http.close()
        await self.runner.cleanup()
        if self._app_http is not None:
            await self._app_http.close()
        await self.sandbox.close()
        self._tmp.cleanup()

    def _instrument(self) -> None:
        # Wrap the sandbox so the benchmark knows when writes landed and how many
        # requests were answered at once.
        from aiohttp import web

        sandbox, state = self.sandbox, self.sandbox.state
        create_comment, record, middleware = state.create_comment, state.record, sandbox._middleware
        times, writes = self.comment_times, self.write_times

        def timed_create_comment(owner: str, name: str, number: int, *args: Any, **kwargs: Any) -> Any:
            comment = create_comment(owner, name, number, *args, **kwargs)
            times.setdefault(f"{owner}/{name}#{number}", []).append(time.perf_counter())
            return comment

        def timed_record(method: str, path: str, status: int) -> None:
            if method in ("POST", "PATCH", "PUT", "DELETE") and "/access_tokens" not in path:
                writes.append(time.perf_counter())
            record(method, path, status)

        @web.middleware
        async def counting(request: web.Request, handler: Any) -> web.StreamResponse:
            if request.path.startswith("/_sandbox/"):
                return await middleware(request, handler)
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            try:
                return await middleware(request, handler)
            finally:
                self.in_flight -= 1

        state.create_comment = timed_create_comment  # type: ignore[method-assign]
        state.record = timed_record  # type: ignore[method-assign]
        sandbox._middleware = counting  # type: ignore[method-assign]

    def _simulated_tokens(self, clock: Callable[[], float]) -> None:
        # Installation tokens expire on the app's simulated clock (GitHub's would, as the
        # merges are really that far apart); the sandbox checks JWTs on real time, as the
        # app signs them on its system clock.
        state = self.sandbox.state
        issue = state.issue_token

        def issue_token(installation_id: int) -> Any:
            token = issue(installation_id)
            token.expires_at = clock() + state.token_lifetime
            return token

        state.issue_token = issue_token  # type: ignore[method-assign]

    def repository_json(self, repository: str) -> dict[str, Any]:
        """The sandbox's "Get a repository" object of ``repository`` (``owner/name``)."""
        owner, name = repository.split("/", 1)
        return self.sandbox.state.repo_json(self.sandbox.state.repo(owner, name))

    def body(self, repository: str, bundle: Mapping[str, Any]) -> bytes:
        """The merged delivery body of ``bundle``'s pull request in ``repository`` (see :func:`delivery_body`)."""
        return delivery_body(bundle, self.repository_json(repository))

    async def deliver(self, body: bytes, delivery_id: str | None = None) -> int:
        """POST one signed delivery to ``/webhook``; returns the HTTP status."""
        headers = delivery_headers(body, self.secret, delivery_id)
        async with self.http.post(self.app_url + "/webhook", data=body, headers=headers) as answer:
            await answer.read()
            return answer.status

    async def wait_idle(self, timeout: float = 300.0) -> None:
        """Wait until the worker pool has nothing due and nothing running."""
        from bot.app.server import wait_idle

        await asyncio.wait_for(wait_idle(self.app), timeout)

    @property
    def requests(self) -> list[dict[str, Any]]:
        """The sandbox's request log, ``{method, path, status}``, oldest first."""
        return self.sandbox.requests
