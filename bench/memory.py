"""Memory of ``prguide serve``: idle, under 64 concurrent jobs, and over 10,000 deliveries.

``prguide serve`` runs as its own process (64 workers, job queue in a SQLite file),
its GitHub API pointed at ``prguide sandbox`` (another process, 50 ms per answer)
serving the corpus. Resident set size (``VmRSS`` in ``/proc/<pid>/status``) is read:

1. **idle**: after start-up, before any delivery;
2. **under load**: one merged delivery for each of the 64 largest corpus pull requests
   at once, sampled every 50 ms for ``--load-seconds`` (the jobs fetch, build their
   guides and then wait for GitHub's write budget, holding everything they built), plus
   the peak (``VmHWM``);
3. **growth**: 10,000 more signed deliveries (fresh delivery ids, the 64 pull requests in
   turn, 16 at a time), RSS after every 1,000. Growth is the change from the first 1,000 to
   the last: the job queue lives in SQLite, and the caches in memory (tokens,
   conditional requests, metrics) are bounded, so it should be flat.

Reference in the same run: the idle RSS of the minimal verifying aiohttp server of
``bench/webhook_ack.py``. Targets (issue 7): <= 80 MB idle, <= 200 MB under load, no
growth over 10,000 deliveries. Each measurement is taken ``--rounds`` times on fresh
processes (default 5 for idle; 1 for load and growth, which take longer), medians shown.

    python bench/memory.py [--quick] [--rounds N] [--deliveries N]
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
    start_sandbox_process,
    start_serve_process,
    table,
    verdict,
    wait_http,
    write_key,
)

TARGET_IDLE_MB = 80.0
TARGET_LOAD_MB = 200.0
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


async def one_run(tmp: Path, key_pem: str, sandbox_url: str, bodies: Sequence[bytes], *, jobs: int, deliveries: int, load_seconds: float) -> dict[str, Any]:
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

            statuses = await asyncio.gather(*(send(b) for b in bodies[:jobs]))
            samples = []
            stop_at = time.monotonic() + load_seconds
            while time.monotonic() < stop_at:
                samples.append(rss_kb(child.pid)[0])
                await asyncio.sleep(0.05)
            async with http.get(url + "/healthz") as answer:
                out["queue_after_load"] = (await answer.json())["queue"]
            out["load"] = mb(max(samples))
            out["hwm"] = mb(rss_kb(child.pid)[1])
            out["accepted"] = sum(1 for s in statuses if s == 202)

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
                steps.append((sent, mb(rss_kb(child.pid)[0])))
            out["steps"] = steps
            out["growth"] = steps[-1][1] - steps[0][1]
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
                    result = await one_run(tmp, key_pem, sandbox_url, bodies, jobs=jobs, deliveries=deliveries, load_seconds=args.load_seconds)
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
    growth = median(r["growth"] for r in runs)
    print(f"{jobs} largest corpus pull requests ({sum(len(b['files']) for b in bundles):,} files, "
          f"{sum(bundle_weight(b) for b in bundles) / 1e6:.1f} MB of patches) from {args.corpus}; {deliveries:,} deliveries for growth\n")  # fmt: skip
    print(table(
        ["what", "RSS MiB", "x reference idle", "target", "verdict"],
        [
            ["reference: minimal verifying aiohttp server, idle", reference, 1.0, "", ""],
            [f"prguide serve idle (median of {len(idles)})", idle, idle / reference, f"<= {TARGET_IDLE_MB:.0f}", verdict(idle <= TARGET_IDLE_MB)],
            [f"prguide serve, {jobs} concurrent jobs (peak sample)", load, load / reference, f"<= {TARGET_LOAD_MB:.0f}", verdict(load <= TARGET_LOAD_MB)],
            ["prguide serve, peak (VmHWM) by then", hwm, hwm / reference, "", ""],
            [f"growth from delivery {runs[0]['steps'][0][0]:,} to {deliveries:,}", growth, float("nan"), f"< {FLAT_MB:.0f} (flat)", verdict(growth < FLAT_MB)],
        ],
    ))  # fmt: skip
    print("\nRSS (MiB) after each batch of deliveries, first run: "
          + ", ".join(f"{n:,}: {m:.1f}" for n, m in runs[0]["steps"]))  # fmt: skip
    print(f"job queue when the load sample ended (first run): {runs[0]['queue_after_load']}; "
          f"accepted at once: {runs[0]['accepted']} of {jobs}")  # fmt: skip
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
    parser.add_argument("--load-seconds", type=float, default=8.0, help="how long RSS is sampled under load (default 8)")
    parser.add_argument("--quick", action="store_true", help="16 jobs, 1,000 deliveries")
    args = parser.parse_args(argv)
    if args.quick:
        args.load_seconds = min(args.load_seconds, 3.0)
    return asyncio.run(run(args))


if __name__ == "__main__":
    sys.exit(main())
