"""Memory of ``prguide serve``: idle, under 64 concurrent jobs, and over 10,000 deliveries.

``prguide serve`` runs as its own process (64 workers, job queue in a SQLite file),
its GitHub API pointed at ``prguide sandbox`` (another process, 50 ms per answer)
serving the corpus. Resident set size (``VmRSS`` in ``/proc/<pid>/status``) is read:

1. **idle**: after start-up, before any delivery;
2. **under load**: one merged delivery for each of the 64 largest corpus pull requests
   at once; RSS is sampled every 50 ms until every job has finished (``/healthz`` shows
   nothing queued or running: the jobs fetch, build their guides, wait for GitHub's write
   budget holding everything they built, and publish: with the shipped budget, 72 writes a
   minute and 500 an hour, the 64 first guides, about 140 writes, take several minutes),
   then the peak the process ever had (``VmHWM``) is read: the verdict is on it, so no
   spike between samples escapes. There is no deadline on the wait, which a loaded machine
   would miss: it gives up only when the queue has not moved (no job finished or started)
   for ``--stall-timeout`` seconds, or after ``--load-timeout`` in all; progress goes to
   stderr every minute;
3. **growth**: 10,000 more signed deliveries (fresh delivery ids, the 64 pull requests in
   turn, 16 at a time), in batches of 1,000, each left to finish its jobs (a pull
   request's jobs run one at a time, so never more than 64 run at once) before RSS is
   read. Growth is the change from the first batch to the last: the job queue lives in
   SQLite, and the caches in memory (tokens, conditional requests, metrics) are bounded,
   so it should be flat. The process's peak (``VmHWM``) at the end covers both phases,
   each with at most 64 jobs at once: the 64-jobs verdict is on it.

Reference in the same run: the idle RSS of the minimal verifying aiohttp server of
``bench/webhook_ack.py``. Targets: <= 80 MiB idle, <= 120 MiB with 64 jobs, no growth
over 10,000 deliveries. Each measurement is taken ``--rounds`` times on fresh processes
(default 5 for idle; 1 for load and growth, which take longer), medians shown.

    python bench/memory.py [--quick] [--rounds N] [--deliveries N] [--load-timeout S] [--stall-timeout S]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from common import (
    CORPUS,
    MIN_ROUNDS,
    ChildProcess,
    bundle_weight,
    delivery_bodies,
    delivery_headers,
    free_port,
    header,
    load_bundles,
    median,
    rss_kb,
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

TARGET_IDLE_MB = 80.0
TARGET_LOAD_MB = 120.0
#: Growth over the deliveries below this counts as none (allocator and SQLite cache noise).
FLAT_MB = 5.0
JOBS = 64
LATENCY_MS = 50.0


def mb(kb: int | float) -> float:
    """KiB to MiB."""
    return kb / 1024


async def idle_reference(secret: str) -> float:
    """Idle RSS (MiB) of the minimal verifying aiohttp server."""
    port = free_port()
    ref = ChildProcess([sys.executable, str(Path(__file__).with_name("webhook_ack.py")), "--serve-reference", str(port)],
                       env={"BENCH_WEBHOOK_SECRET": secret})  # fmt: skip
    try:
        await wait_http(f"http://127.0.0.1:{port}/healthz", child=ref)
        await asyncio.sleep(0.5)
        return mb(rss_kb(ref.pid)[0])
    finally:
        ref.stop()


async def one_run(tmp: Path, key_pem: str, sandbox_url: str, bodies: Sequence[bytes], *, jobs: int, deliveries: int, load_timeout: float, stall_timeout: float) -> dict[str, Any]:
    """Start ``prguide serve``, measure idle, load and growth; stop it."""
    import aiohttp

    secret = uuid.uuid4().hex
    env = serve_env(key_pem=key_pem, secret=secret, api_url=sandbox_url, port=free_port(),
                    db=str(tmp / f"prguide-{uuid.uuid4().hex[:8]}.db"), workers=jobs)  # fmt: skip
    child, url = await start_serve_process(env)
    out: dict[str, Any] = {}
    try:
        await asyncio.sleep(0.5)
        out["idle"] = mb(rss_kb(child.pid)[0])
        async with aiohttp.ClientSession() as http:

            async def send(body: bytes) -> int:
                async with http.post(url + "/webhook", data=body, headers=delivery_headers(body, secret)) as answer:
                    await answer.read()
                    return answer.status

            async def queue() -> dict[str, int]:
                async with http.get(url + "/healthz") as answer:
                    return (await answer.json())["queue"]

            async def until_finished(what: str) -> tuple[list[int], dict[str, int]]:
                # RSS every 50 ms until nothing is queued or running (asked every 250 ms). No
                # deadline on the whole: the write budget paces the jobs, and a loaded machine
                # builds guides slower. Given up only when the queue has not moved (no job
                # finished, none started) for stall_timeout seconds, or after load_timeout.
                began = last_move = time.monotonic()
                samples: list[int] = []
                counts: dict[str, int] = {}
                seen: tuple[int, ...] | None = None
                told = began
                while True:
                    if child.proc.poll() is not None:
                        raise RuntimeError(f"prguide serve exited with {child.proc.returncode} while waiting for the jobs of {what}:\n{child.log_tail()}")
                    samples.append(rss_kb(child.pid)[0])
                    if len(samples) % 5 == 1:
                        counts = await queue()
                        if not counts.get("queued") and not counts.get("running"):
                            return samples, counts
                        now = time.monotonic()
                        state = tuple(counts.get(k, 0) for k in ("queued", "running", "done", "parked"))
                        if state != seen:
                            seen, last_move = state, now
                        if now - told >= 60:
                            told = now
                            print(f"waiting for the jobs of {what}: {counts} after {now - began:,.0f} s", file=sys.stderr, flush=True)
                        if now - last_move > stall_timeout:
                            raise RuntimeError(f"the jobs of {what} made no progress for {stall_timeout:g} s (queue {counts}, "
                                               f"{now - began:,.0f} s after they were sent)")  # fmt: skip
                        if now - began > load_timeout:
                            raise RuntimeError(f"the jobs of {what} had not finished after {load_timeout:g} s (queue {counts})")
                    await asyncio.sleep(0.05)  # the sampling period

            began = time.monotonic()
            statuses = await asyncio.gather(*(send(b) for b in bodies[:jobs]))
            samples, counts = await until_finished(f"{jobs} deliveries")
            out["load_seconds"] = time.monotonic() - began
            out["queue_after_load"] = counts
            out["load"] = mb(max(samples))
            out["after_load"] = mb(samples[-1])
            out["hwm"] = mb(rss_kb(child.pid)[1])
            out["accepted"] = sum(1 for s in statuses if s == 202)
            async with http.get(sandbox_url + "/_sandbox/state") as answer:
                out["commented"] = sum(1 for found in (await answer.json())["comments"].values() if found)

            steps = []
            sem = asyncio.Semaphore(16)

            async def limited(body: bytes) -> int:
                async with sem:
                    return await send(body)

            sent = 0
            chunk = max(1, deliveries // 10)
            while sent < deliveries:
                n = min(chunk, deliveries - sent)
                await asyncio.gather(*(limited(bodies[(sent + i) % len(bodies)]) for i in range(n)))
                sent += n
                batch, _counts = await until_finished(f"deliveries up to {sent:,}")
                steps.append((sent, mb(batch[-1])))
                out["growth_peak_sample"] = max(out.get("growth_peak_sample", 0.0), mb(max(batch)))
            out["steps"] = steps
            out["growth"] = steps[-1][1] - steps[0][1]
            out["hwm_end"] = mb(rss_kb(child.pid)[1])
    finally:
        child.stop()
    return out


async def run(args: argparse.Namespace) -> int:
    """Measure the reference and ``prguide serve`` (idle, load, growth) and print the table; returns 0."""

    jobs = 16 if args.quick else JOBS
    deliveries = 1000 if args.quick else args.deliveries
    rounds = max(MIN_ROUNDS, args.rounds)
    bundles = sorted(load_bundles(args.corpus), key=bundle_weight, reverse=True)[:jobs]
    print(header("prguide serve memory"))
    with tempfile.TemporaryDirectory(prefix="prguide-bench-") as tmp_name:
        tmp = Path(tmp_name)
        key_pem, key_path = write_key(tmp)
        bodies = delivery_bodies(bundles, key_pem)
        sandbox, sandbox_url = await start_sandbox_process(key_path, bundles=args.corpus, latency_ms=LATENCY_MS)
        try:
            reference = median([await idle_reference(uuid.uuid4().hex) for _ in range(rounds)])
            idles, runs = [], []
            for r in range(rounds):
                if r < args.load_rounds:
                    result = await one_run(tmp, key_pem, sandbox_url, bodies, jobs=jobs, deliveries=deliveries, load_timeout=args.load_timeout,
                                             stall_timeout=args.stall_timeout)
                    runs.append(result)
                    idles.append(result["idle"])
                else:
                    idles.append(await idle_only(tmp, key_pem, sandbox_url))
                print(f"round {r + 1}/{rounds} done", file=sys.stderr)
        finally:
            sandbox.stop()

    idle = median(idles)
    load = median(r["load"] for r in runs)
    hwm = median(r["hwm"] for r in runs)
    hwm_end = median(r["hwm_end"] for r in runs)
    growth = median(r["growth"] for r in runs)
    print(f"{jobs} largest corpus pull requests ({sum(len(b['files']) for b in bundles):,} files, "
          f"{sum(bundle_weight(b) for b in bundles) / 1e6:.1f} MB of patches) from {shown(args.corpus)}; {deliveries:,} deliveries for growth\n")  # fmt: skip
    first = runs[0]
    print(table(
        ["what", "RSS MiB", "x reference idle", "target", "verdict"],
        [
            ["reference: minimal verifying aiohttp server, idle", reference, 1.0, "", ""],
            [f"prguide serve idle (median of {len(idles)} fresh processes)", idle, idle / reference, f"<= {TARGET_IDLE_MB:.0f}", verdict(idle <= TARGET_IDLE_MB)],
            [f"{jobs} deliveries at once: highest 50 ms sample until their jobs finished", load, load / reference, "", ""],
            [f"{jobs} deliveries at once: peak (VmHWM) once their jobs finished", hwm, hwm / reference, "", ""],
            [f"{jobs} deliveries at once: when their jobs had finished", median(r["after_load"] for r in runs), float("nan"), "", ""],
            [f"{deliveries:,} more deliveries: highest 50 ms sample", median(r["growth_peak_sample"] for r in runs), float("nan"), "", ""],
            [f"peak (VmHWM) over both phases, <= {jobs} jobs at once", hwm_end, hwm_end / reference, f"<= {TARGET_LOAD_MB:.0f}", verdict(hwm_end <= TARGET_LOAD_MB)],
            [f"growth, jobs finished, from delivery {first['steps'][0][0]:,} to {deliveries:,}", growth, float("nan"), f"< {FLAT_MB:.0f} (flat)", verdict(growth < FLAT_MB)],
        ],
    ))  # fmt: skip
    print(f"\nthe {jobs} jobs ran {first['load_seconds']:.1f} s (GitHub's write budget paces their comments and labels; waited until "
          f"/healthz showed nothing queued or running, giving up only after {args.stall_timeout:g} s without a job finishing or starting); "
          f"accepted at once: {first['accepted']} of {jobs}; pull requests with a guide comment: {first['commented']}; "
          f"queue then: {first['queue_after_load']}")  # fmt: skip
    print("RSS (MiB) after each batch of deliveries had finished its jobs, first run: " + ", ".join(f"{n:,}: {m:.1f}" for n, m in first["steps"]) + "\n")
    print(verdict_line(f"idle RSS of prguide serve <= {TARGET_IDLE_MB:.0f} MiB", f"{idle:.1f} MiB (median of {len(idles)})", idle <= TARGET_IDLE_MB))
    print(verdict_line(f"RSS of prguide serve with {jobs} jobs at once <= {TARGET_LOAD_MB:.0f} MiB (peak, VmHWM, once they finished)",
                       f"{hwm_end:.1f} MiB ({hwm:.1f} after the first {jobs})", hwm_end <= TARGET_LOAD_MB))  # fmt: skip
    print(verdict_line(f"no growth over {deliveries:,} deliveries (< {FLAT_MB:.0f} MiB)", f"{growth:+.1f} MiB", growth < FLAT_MB))
    return 0


async def idle_only(tmp: Path, key_pem: str, sandbox_url: str) -> float:
    """Idle RSS (MiB) of a freshly started ``prguide serve``."""
    env = serve_env(key_pem=key_pem, secret=uuid.uuid4().hex, api_url=sandbox_url, port=free_port(),
                    db=str(tmp / f"prguide-{uuid.uuid4().hex[:8]}.db"), workers=JOBS)  # fmt: skip
    child, _url = await start_serve_process(env)
    try:
        await asyncio.sleep(0.5)
        return mb(rss_kb(child.pid)[0])
    finally:
        child.stop()


def main(argv: Sequence[str] | None = None) -> int:
    """Parse options and run."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--corpus", type=Path, default=CORPUS, help=f"folder of bundle *.json files (default {CORPUS})")
    parser.add_argument("--rounds", type=int, default=MIN_ROUNDS, help="idle measurements on fresh processes (at least 5)")
    parser.add_argument("--load-rounds", type=int, default=1, help="of those, how many also run the load and growth phases (default 1)")
    parser.add_argument("--deliveries", type=int, default=10_000, help="deliveries for the growth check (default 10,000)")
    parser.add_argument("--load-timeout", type=float, default=4 * 3600.0,
                        help="give up when a phase's jobs have not finished after this many seconds (default 14400)")  # fmt: skip
    parser.add_argument("--stall-timeout", type=float, default=900.0,
                        help="give up when no job of a phase finished or started for this many seconds (default 900)")  # fmt: skip
    parser.add_argument("--quick", action="store_true", help="16 jobs, 1,000 deliveries")
    args = parser.parse_args(argv)
    return asyncio.run(run(args))


if __name__ == "__main__":
    sys.exit(main())
