"""How fast prguide acknowledges webhook deliveries, next to a minimal verifying server.

A load generator sends signed ~25 KB ``pull_request`` ``closed`` (merged) deliveries, each
with its own ``X-GitHub-Delivery`` id, at concurrency 1, 16 and 64 to three servers, each
its own process on 127.0.0.1:

* **reference**: a minimal aiohttp server that reads the body, checks the HMAC
  (``X-Hub-Signature-256``) and parses the JSON, then answers 202: the limit of the stack;
* **prguide durable**: ``prguide serve`` with its job queue in a SQLite file (WAL), its
  workers pointed at ``prguide sandbox`` (50 ms per GitHub answer), default settings
  (4 workers, INFO logs);
* **prguide memory queue**: the same with ``PRGUIDE_DB=:memory:``;
* **reference + JobStore.enqueue only**: the reference server that also queues each
  delivery with prguide's :meth:`bot.app.jobs.JobStore.enqueue` in a SQLite file, to
  show what durability alone costs (not with ``--quick``).

The load generator is ``wrk`` (Debian package ``wrk``) with a Lua script that cycles
through pre-signed bodies of 16 corpus pull requests and numbers the delivery ids; without
wrk, an aiohttp client does the same from this process. Servers are measured in turn
within each round, so they share the machine's mood; after its window each prguide server
is left to finish the window's jobs (``/healthz`` shows none queued or running) before the
next server is measured, so no server is measured while another one works. The tables give
the median over the rounds of throughput and p99 latency, and prguide's ratio to the
reference's.
Targets (issue 7): durable >= 0.6x the reference's throughput and p99 <= 2x its p99 at
every concurrency; memory queue >= 0.85x.

With ``--bounds`` it measures instead, at concurrency 16, the reference against bare variants
of itself that store each delivery before answering (a SQLite enqueue per request, prguide's
group commit, the body appended to a file with a small SQLite row per request or
group-committed): where durability alone puts the ceiling.

    python bench/webhook_ack.py [--quick] [--bounds] [--rounds N] [--seconds S] [--no-wrk]
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import hmac
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Sequence
from pathlib import Path

from common import (
    CORPUS,
    MIN_ROUNDS,
    ChildProcess,
    delivery_bodies,
    free_port,
    header,
    load_bundles,
    median,
    percentile,
    serve_env,
    shown,
    start_sandbox_process,
    start_serve_process,
    table,
    verdict,
    verdict_line,
    wait_http,
    write_key,
)

CONCURRENCY = (1, 16, 64)
POOL = 16
BODY_BYTES = 25 * 1024
LATENCY_MS = 50.0
TARGET_DURABLE = 0.6
TARGET_MEMORY = 0.85
TARGET_P99 = 2.0
DURABLE_REFERENCE = "reference + JobStore.enqueue only"

LUA = r"""
-- Signed webhook deliveries for wrk: args[1] lists "signature<TAB>body file" lines,
-- args[2] prefixes the delivery ids (unique per run).
local bodies, sigs, counter, prefix = {}, {}, 0, ""
local threads = 0
function setup(thread)
  threads = threads + 1
  thread:set("tid", threads)
end
function init(args)
  for line in io.lines(args[1]) do
    local sig, path = line:match("([^\t]+)\t(.+)")
    local f = io.open(path, "rb")
    bodies[#bodies + 1] = f:read("*a")
    f:close()
    sigs[#sigs + 1] = sig
  end
  prefix = args[2] .. "-" .. tostring(tid) .. "-"
end
function request()
  counter = counter + 1
  local i = (counter % #bodies) + 1
  return wrk.format("POST", "/webhook", {
    ["Content-Type"] = "application/json",
    ["X-GitHub-Event"] = "pull_request",
    ["X-GitHub-Delivery"] = prefix .. counter,
    ["X-GitHub-Hook-ID"] = "1",
    ["X-Hub-Signature-256"] = sigs[i],
    ["User-Agent"] = "GitHub-Hookshot/bench",
  }, bodies[i])
end
function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    '{"requests":%d,"duration_us":%d,"status_errors":%d,"other_errors":%d,"p50_us":%d,"p99_us":%d}\n',
    summary.requests, summary.duration, e.status, e.connect + e.read + e.write + e.timeout,
    latency:percentile(50), latency:percentile(99)))
end
"""


# --- the reference server -------------------------------------------------------------------------


#: Bare variants of the reference that also store each delivery before answering (``--bounds``).
BOUND_MODES = {
    "enqueue": "+ JobStore.enqueue per request",
    "group": "+ prguide's group commit (Intake)",
    "append": "+ body appended to a file, small SQLite row per request",
    "append-group": "+ body appended to a file, small rows group-committed",
}


def serve_reference(port: int, db: str | None = None, mode: str = "enqueue") -> None:
    """The reference: read the body, verify ``X-Hub-Signature-256``, parse JSON, answer 202.

    With ``db``, it also stores the delivery before answering, the way ``mode`` says
    (:data:`BOUND_MODES`): the cost of durability alone, without anything else prguide does.
    """
    from aiohttp import web

    key = os.environ["BENCH_WEBHOOK_SECRET"].encode()
    store = intake = None
    log_fd = None
    pending: list = []
    if db:
        from bot.app.jobs import JobStore

        store = JobStore.open(db)
        if mode.startswith("append"):
            log_fd = os.open(db + ".bodies", os.O_WRONLY | os.O_CREAT | os.O_APPEND)
            store.conn.execute("CREATE TABLE bodies (id INTEGER PRIMARY KEY, delivery_id TEXT UNIQUE, key TEXT,"
                               " offset INTEGER, length INTEGER, state TEXT)")  # fmt: skip

    def commit_rows() -> None:
        rows = pending[:]
        pending.clear()
        store.conn.execute("BEGIN IMMEDIATE")
        store.conn.executemany("INSERT INTO bodies (delivery_id, key, offset, length, state) VALUES (?, ?, ?, ?, 'queued')",
                               [row for row, _ in rows])  # fmt: skip
        store.conn.execute("COMMIT")
        for _, future in rows:
            future.set_result(True)

    async def start(_app: web.Application) -> None:
        nonlocal intake
        if store is not None and mode in ("group", "append-group"):
            from bot.app.db import Checkpointer
            from bot.app.intake import Intake

            checkpointer = Checkpointer(db)
            checkpointer.start()
            checkpointer.adopt(store.conn)
            intake = Intake(store)

    async def webhook(request: web.Request) -> web.Response:
        body = await request.read()
        given = request.headers.get("X-Hub-Signature-256", "").encode()
        expected = b"sha256=" + hmac.new(key, body, hashlib.sha256).hexdigest().encode()
        if not hmac.compare_digest(given, expected):
            return web.Response(status=401)
        payload = json.loads(body)
        if store is not None:
            from bot.app.jobs import QueuedDelivery

            pull = payload["pull_request"]
            key_ = f"{payload['repository']['full_name']}#{pull['number']}"
            delivery = request.headers["X-GitHub-Delivery"]
            if mode == "enqueue":
                store.enqueue(delivery, request.headers["X-GitHub-Event"], key_, body,
                              installation_id=payload["installation"]["id"], action=payload.get("action"))  # fmt: skip
            elif mode == "group":
                await intake.enqueue(QueuedDelivery(delivery, request.headers["X-GitHub-Event"], key_, body,
                                                    installation_id=payload["installation"]["id"], action=payload.get("action")))  # fmt: skip
            else:
                offset = os.lseek(log_fd, 0, os.SEEK_END)
                os.write(log_fd, body)
                row = (delivery, key_, offset, len(body))
                if mode == "append":
                    store.conn.execute("INSERT INTO bodies (delivery_id, key, offset, length, state) VALUES (?, ?, ?, ?, 'queued')", row)
                else:
                    future = asyncio.get_running_loop().create_future()
                    if not pending:
                        asyncio.get_running_loop().call_soon(commit_rows)
                    pending.append((row, future))
                    await future
        return web.Response(status=202)

    async def ok(_request: web.Request) -> web.Response:
        return web.Response(text="ok")

    app = web.Application(client_max_size=26 * 1024 * 1024)
    app.router.add_post("/webhook", webhook)
    app.router.add_get("/healthz", ok)
    app.on_startup.append(start)
    web.run_app(app, host="127.0.0.1", port=port, access_log=None, print=None)


# --- load generators ----------------------------------------------------------------------------------


def run_wrk(url: str, manifest: Path, lua: Path, concurrency: int, seconds: int) -> dict[str, float]:
    """One wrk run; returns ``{"rps", "p50_ms", "p99_ms", "errors", "requests"}``."""
    argv = ["wrk", "-t1", f"-c{concurrency}", f"-d{seconds}s", "--timeout", "10s", "-s", str(lua), url + "/webhook",
            "--", str(manifest), uuid.uuid4().hex]  # fmt: skip
    done = subprocess.run(argv, capture_output=True, text=True, timeout=seconds + 60)
    line = [x for x in done.stdout.splitlines() if x.startswith("{")]
    if done.returncode != 0 or not line:
        raise RuntimeError(f"wrk failed ({done.returncode}): {done.stderr.strip() or done.stdout.strip()}")
    r = json.loads(line[-1])
    return {
        "rps": r["requests"] / (r["duration_us"] / 1e6),
        "p50_ms": r["p50_us"] / 1000,
        "p99_ms": r["p99_us"] / 1000,
        "errors": r["status_errors"] + r["other_errors"],
        "requests": r["requests"],
    }


async def run_aiohttp(url: str, bodies: Sequence[tuple[bytes, str]], concurrency: int, seconds: float) -> dict[str, float]:
    """The same load from an aiohttp client in this process (when wrk is absent)."""
    import aiohttp

    latencies: list[float] = []
    errors = 0
    prefix = uuid.uuid4().hex
    counter = 0
    stop_at = time.perf_counter() + seconds
    connector = aiohttp.TCPConnector(limit=concurrency)

    async with aiohttp.ClientSession(connector=connector) as http:

        async def one_connection() -> None:
            nonlocal counter, errors
            while time.perf_counter() < stop_at:
                counter += 1
                body, signature = bodies[counter % len(bodies)]
                headers = {"Content-Type": "application/json", "X-GitHub-Event": "pull_request",
                           "X-GitHub-Delivery": f"{prefix}-{counter}", "X-Hub-Signature-256": signature}  # fmt: skip
                started = time.perf_counter()
                async with http.post(url + "/webhook", data=body, headers=headers) as answer:
                    await answer.read()
                    errors += answer.status >= 400
                latencies.append(time.perf_counter() - started)

        started = time.perf_counter()
        await asyncio.gather(*(one_connection() for _ in range(concurrency)))
        elapsed = time.perf_counter() - started
    return {
        "rps": len(latencies) / elapsed,
        "p50_ms": percentile(latencies, 50) * 1000,
        "p99_ms": percentile(latencies, 99) * 1000,
        "errors": errors,
        "requests": len(latencies),
    }


# --- the run ---------------------------------------------------------------------------------------------


async def run(args: argparse.Namespace) -> int:
    """Start the sandbox and the servers, load them in turn, print the table; returns 0."""
    from bot.app.webhook import sign

    concurrencies = (16,) if args.quick or args.bounds else CONCURRENCY
    rounds = max(MIN_ROUNDS, args.rounds)
    seconds = 1 if args.quick else args.seconds
    use_wrk = shutil.which("wrk") is not None and not args.no_wrk
    secret = uuid.uuid4().hex

    bundles = load_bundles(args.corpus)
    with tempfile.TemporaryDirectory(prefix="prguide-bench-") as tmp_name:
        tmp = Path(tmp_name)
        key_pem, key_path = write_key(tmp)
        candidates = delivery_bodies(bundles, key_pem)
        # The deliveries closest to 25 KB, GitHub's typical merged pull_request delivery.
        chosen = sorted(candidates, key=lambda b: abs(len(b) - BODY_BYTES))[:POOL]
        manifest_lines, pool = [], []
        for i, body in enumerate(chosen):
            path = tmp / f"body-{i}.json"
            path.write_bytes(body)
            signature = sign(secret, body)
            manifest_lines.append(f"{signature}\t{path}")
            pool.append((body, signature))
        manifest = tmp / "bodies.tsv"
        manifest.write_text("\n".join(manifest_lines) + "\n")
        lua = tmp / "deliveries.lua"
        lua.write_text(LUA)
        mean_kb = sum(len(b) for b, _ in pool) / len(pool) / 1024

        print(header("prguide webhook acknowledgement"))
        print(f"deliveries: {len(pool)} merged pull requests from {shown(args.corpus)}, mean body {mean_kb:.1f} KB, "
              f"fresh delivery id per request; load generator: {'wrk ' + wrk_version() if use_wrk else 'aiohttp client (wrk not found)'}; "
              f"{rounds} rounds x {seconds} s per server and concurrency\n")  # fmt: skip

        children: list[ChildProcess] = []
        try:
            if not args.bounds:
                sandbox, sandbox_url = await start_sandbox_process(key_path, bundles=args.corpus, latency_ms=LATENCY_MS)
                children.append(sandbox)
            servers: dict[str, str] = {}
            pids: dict[str, int] = {}
            ref_port = free_port()
            ref = ChildProcess([sys.executable, __file__, "--serve-reference", str(ref_port)], env={"BENCH_WEBHOOK_SECRET": secret})
            children.append(ref)
            servers["reference"] = f"http://127.0.0.1:{ref_port}"
            pids["reference"] = ref.pid
            await wait_http(servers["reference"] + "/healthz", child=ref)
            if args.bounds:
                for mode, what in BOUND_MODES.items():
                    port = free_port()
                    argv = [sys.executable, __file__, "--serve-reference", str(port), "--reference-db", str(tmp / f"{mode}.db"),
                            "--reference-mode", mode]  # fmt: skip
                    child = ChildProcess(argv, env={"BENCH_WEBHOOK_SECRET": secret})
                    children.append(child)
                    servers[f"reference {what}"] = f"http://127.0.0.1:{port}"
                    pids[f"reference {what}"] = child.pid
                    await wait_http(servers[f"reference {what}"] + "/healthz", child=child)
            elif not args.quick:
                durable_port = free_port()
                durable_ref = ChildProcess(
                    [sys.executable, __file__, "--serve-reference", str(durable_port), "--reference-db", str(tmp / "reference.db")],
                    env={"BENCH_WEBHOOK_SECRET": secret},
                )
                children.append(durable_ref)
                servers[DURABLE_REFERENCE] = f"http://127.0.0.1:{durable_port}"
                pids[DURABLE_REFERENCE] = durable_ref.pid
                await wait_http(servers[DURABLE_REFERENCE] + "/healthz", child=durable_ref)
            variants = {"prguide durable": str(tmp / "prguide.db"), "prguide memory queue": ":memory:"}
            if args.quick:
                variants.pop("prguide memory queue")
            if args.bounds:
                variants.clear()
            serve_children: dict[str, ChildProcess] = {}
            for label, db in variants.items():
                env = serve_env(key_pem=key_pem, secret=secret, api_url=sandbox_url, port=free_port(), db=db)
                child, url = await start_serve_process(env)
                children.append(child)
                serve_children[label] = child
                servers[label] = url
                pids[label] = child.pid

            results: dict[tuple[str, int], list[dict[str, float]]] = {}
            for r in range(rounds):
                for c in concurrencies:
                    names = list(servers)
                    names = names[r % len(names):] + names[: r % len(names)]  # rotate who goes first
                    for label in names:
                        before = cpu_seconds(pids[label])
                        if use_wrk:
                            res = await asyncio.to_thread(run_wrk, servers[label], manifest, lua, c, seconds)
                        else:
                            res = await run_aiohttp(servers[label], pool, c, seconds)
                        res["cpu_us"] = (cpu_seconds(pids[label]) - before) / max(1, res["requests"]) * 1e6
                        results.setdefault((label, c), []).append(res)
                        if label in serve_children:
                            # Its workers finish the window's jobs before the next server is
                            # measured, so no server is measured while another one works.
                            res["drain_s"] = await drain(servers[label])
                print(f"round {r + 1}/{rounds} done", file=sys.stderr)

            queue = {}
            import aiohttp

            async with aiohttp.ClientSession() as http:
                for label, child in serve_children.items():
                    async with http.get(servers[label] + "/healthz") as answer:
                        queue[label] = (await answer.json()).get("queue")
        finally:
            for child in reversed(children):
                child.stop()

    rows = []
    met_all = True
    verdicts: list[str] = []
    for c in concurrencies:
        ref_rps = median(x["rps"] for x in results[("reference", c)])
        ref_p99 = median(x["p99_ms"] for x in results[("reference", c)])
        for label in servers:
            runs = results[(label, c)]
            rps, p50, p99 = median(x["rps"] for x in runs), median(x["p50_ms"] for x in runs), median(x["p99_ms"] for x in runs)
            errors = sum(int(x["errors"]) for x in runs)
            cpu = median(x["cpu_us"] for x in runs)
            if label == "reference":
                ref_cpu = cpu
                rows.append([c, label, rps, 1.0, p50, p99, 1.0, cpu, 1.0, errors, "", ""])
                continue
            if label.startswith("reference +"):
                rows.append([c, label, rps, rps / ref_rps, p50, p99, p99 / ref_p99, cpu, cpu / ref_cpu, errors, "", ""])
                continue
            need = TARGET_MEMORY if "memory" in label else TARGET_DURABLE
            ok_rps, ok_p99 = rps / ref_rps >= need, p99 / ref_p99 <= TARGET_P99
            met_all &= ok_rps and ok_p99
            verdicts.append(verdict_line(f"{label} at concurrency {c}: >= {need}x the reference's deliveries/s, p99 <= {TARGET_P99:g}x its p99",
                                         f"{rps / ref_rps:.2f}x, p99 {p99 / ref_p99:.2f}x", ok_rps and ok_p99))  # fmt: skip
            rows.append([c, label, rps, rps / ref_rps, p50, p99, p99 / ref_p99, cpu, cpu / ref_cpu, errors,
                         f">= {need}x, p99 <= {TARGET_P99:g}x", verdict(ok_rps and ok_p99)])  # fmt: skip
    print(table(["concurrency", "server", "deliveries/s", "x ref", "p50 ms", "p99 ms", "p99 x ref", "CPU µs/delivery", "CPU x ref", "errors", "target", "verdict"], rows))
    if args.bounds:
        print(f"\nmedians of {rounds} rounds: how much of the reference's throughput storing each delivery leaves, before anything else prguide does")
    else:
        print(f"\nall targets {'met' if met_all else 'NOT met'}; medians of {rounds} rounds")
        print("\n".join(verdicts))
    for label, counts in queue.items():
        drains = [x["drain_s"] for (name, _c), runs in results.items() if name == label for x in runs]
        print(f"{label}: job queue at the end {counts}; after a window its workers took {median(drains):.1f} s (median) to finish")
    return 0


async def drain(url: str, timeout: float = 120.0) -> float:
    """Wait until prguide at ``url`` has no queued or running job (``GET /healthz``); returns the seconds waited."""
    import aiohttp

    started = time.perf_counter()
    async with aiohttp.ClientSession() as http:
        while time.perf_counter() - started < timeout:
            async with http.get(url + "/healthz") as answer:
                queue = (await answer.json())["queue"]
            if queue["queued"] == 0 and queue["running"] == 0:
                break
            await asyncio.sleep(0.2)
    return time.perf_counter() - started


def cpu_seconds(pid: int) -> float:
    """User plus system CPU seconds process ``pid`` (all its threads) has used, from ``/proc/<pid>/stat``."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def wrk_version() -> str:
    """The installed wrk's version line."""
    done = subprocess.run(["wrk", "-v"], capture_output=True, text=True)
    return (done.stdout + done.stderr).split()[1] if (done.stdout + done.stderr).split()[1:] else "?"


def main(argv: Sequence[str] | None = None) -> int:
    """Parse options and run (or serve the reference server when asked to)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--corpus", type=Path, default=CORPUS, help=f"folder of bundle *.json files (default {CORPUS})")
    parser.add_argument("--rounds", type=int, default=MIN_ROUNDS, help="rounds (at least 5; default 5)")
    parser.add_argument("--seconds", type=int, default=1, help="seconds per server, concurrency and round (default 1)")
    parser.add_argument("--quick", action="store_true", help="concurrency 16 only, reference and durable prguide only")
    parser.add_argument("--no-wrk", action="store_true", help="use the aiohttp client even when wrk is installed")
    parser.add_argument("--serve-reference", type=int, metavar="PORT", help=argparse.SUPPRESS)
    parser.add_argument("--bounds", action="store_true",
                        help="instead: the reference against bare variants of it that store each delivery (c=16)")  # fmt: skip
    parser.add_argument("--reference-db", help=argparse.SUPPRESS)
    parser.add_argument("--reference-mode", default="enqueue", choices=sorted(BOUND_MODES), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve_reference:
        serve_reference(args.serve_reference, args.reference_db, args.reference_mode)
        return 0
    return asyncio.run(run(args))


if __name__ == "__main__":
    sys.exit(main())
