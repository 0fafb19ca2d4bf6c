"""The digest of a busy repository: time, size, and how long the event loop stalls meanwhile.

Fills a database with synthetic guides (default 3,000, one every ~3 hours: a year of a
busy repository; see ``tagview_speed.synthetic_guide``), serves the tag view in this
process on 127.0.0.1 and asks for the digest page and the digest feed of the whole
year, one request at a time. Meanwhile a probe coroutine wakes every millisecond and
records how late it runs: the longest stall is how long a webhook delivery arriving
during the request would have waited for the event loop. Prints a Markdown table.

    python bench/digest_speed.py [--rows 3000] [--rounds 5] [--quick] [--db PATH]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from tagview_speed import REPOSITORY, synthetic_guide  # noqa: E402 - the bench folder is not a package

#: The window asked for: the year the synthetic guides cover.
WINDOW = "since=2024-01-01&until=2024-12-30"


def fill(db: Path, rows: int) -> None:
    """Store ``rows`` synthetic guides, all public, in one transaction."""
    from bot.tagview.store import GuideStore

    rnd = random.Random(7)
    with GuideStore(db) as store:
        store.connection.execute("BEGIN")
        for number in range(1, rows + 1):
            store.save(synthetic_guide(number, rnd), visibility="public")
        store.connection.execute("COMMIT")


async def measure(db: Path, rounds: int) -> list[tuple[str, list[float], list[float], int]]:
    """``(path, seconds per request, longest loop stall per request, bytes)`` for each path."""
    from aiohttp.test_utils import TestClient, TestServer

    from bot.tagview.store import GuideStore
    from bot.tagview.web import create_app

    results = []
    with GuideStore(db) as store:
        client = TestClient(TestServer(create_app(store), host="127.0.0.1"))
        await client.start_server()
        stalls: list[float] = []
        running = True

        async def probe() -> None:
            last = time.perf_counter()
            while running:
                await asyncio.sleep(0.001)
                now = time.perf_counter()
                stalls.append(now - last - 0.001)
                last = now

        task = asyncio.create_task(probe())
        try:
            for path in (f"/repos/{REPOSITORY}/digest?{WINDOW}", f"/repos/{REPOSITORY}/digest.atom?{WINDOW}"):
                times, longest, size = [], [], 0
                for i in range(rounds + 1):
                    stalls.clear()
                    started = time.perf_counter()
                    response = await client.get(path)
                    body = await response.read()
                    if response.status != 200:
                        raise SystemExit(f"{path}: HTTP {response.status}")
                    if i:  # the first request warms caches
                        times.append(time.perf_counter() - started)
                        longest.append(max(stalls, default=0.0))
                        size = len(body)
                results.append((path, times, longest, size))
        finally:
            running = False
            await task
            await client.close()
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=3000, help="guides to store (default 3000)")
    parser.add_argument("--rounds", type=int, default=5, help="timed requests per URL (default 5)")
    parser.add_argument("--quick", action="store_true", help="2 rounds")
    parser.add_argument("--db", type=Path, help="reuse or create this database (default: a temporary one)")
    args = parser.parse_args(argv)
    rounds = 2 if args.quick else args.rounds
    with tempfile.TemporaryDirectory() as tmp:
        db = args.db or Path(tmp) / "bench.db"
        if not db.exists():
            fill(db, args.rows)
        results = asyncio.run(measure(db, rounds))
    print(f"command: python {' '.join([Path(__file__).as_posix(), *(argv if argv is not None else sys.argv[1:])])}")
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}")
    print()
    print("| URL | median ms | max ms | longest loop stall, median ms | KB |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for path, times, longest, size in results:
        print(f"| `{path.split('/', 4)[-1]}` | {statistics.median(times) * 1000:.0f} | {max(times) * 1000:.0f} "
              f"| {statistics.median(longest) * 1000:.0f} | {size / 1024:.0f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
