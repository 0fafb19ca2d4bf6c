"""How fast the tag view answers with many stored guides.

Fills a database with synthetic guides (default 5,000; 30 labels of uneven size,
1-4 labels and ~4 KB of Markdown per guide), starts the tag-view server in a child
process on 127.0.0.1, and measures time to first byte (response headers) and to the
last byte of the tags page, its JSON form and a guide page, on one keep-alive
connection. Prints a Markdown table: rows, URL, median and p99 in milliseconds.

    python bench/tagview_speed.py [--rows 5000] [--requests 200] [--db PATH]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import aiohttp

REPOSITORY = "bench/rocket"
WORDS = ["rollout", "ckpt", "vllm", "megatron", "fsdp", "ray", "docs", "ci", "reward", "trainer", "sglang", "lora"]
LABELS = [f"area/{w}" for w in WORDS] + [f"type/{t}" for t in ("fix", "feature", "perf", "refactor", "test", "docs", "ci", "chore")] + [
    f"team/{i}" for i in range(10)
]


def synthetic_guide(number: int, rnd: random.Random) -> dict:
    """One guide shaped like ``Guide.data``; merge times one every ~3 hours from 2024-01-01."""
    merged = datetime(2024, 1, 1, tzinfo=UTC) + timedelta(hours=3 * number + rnd.random())
    words = rnd.sample(WORDS, 3)
    # Uneven label sizes, like real repositories: a few labels carry most PRs.
    labels = sorted({LABELS[min(int(rnd.paretovariate(1.2)) - 1, len(LABELS) - 1)] for _ in range(rnd.randint(1, 4))})
    importance = rnd.randint(1, 10)
    return {
        "repository": REPOSITORY,
        "number": number,
        "title": f"[{words[0]}] fix: {words[1]} handles {words[2]} #{number}",
        "url": f"https://github.com/{REPOSITORY}/pull/{number}",
        "author": f"dev{number % 97}",
        "merged_at": merged.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "labels": labels,
        "label_details": [{"name": n, "source": "rule", "rule": n.split("/")[0]} for n in labels],
        "areas": words[:2],
        "change_type": "fix",
        "breaking": False,
        "importance": importance,
        "reading_level": "deep" if importance >= 8 else "quick" if importance >= 5 else "skim" if importance >= 2 else "skip",
        "reading_minutes": rnd.randint(1, 40),
        "summary": f"Changes how {words[1]} handles {words[2]}.",
        "focus": [{"file": f"src/{w}.py", "symbol": f"{w}_step", "reason": f"{w} loop changed"} for w in words],
        "lang": "en",
        "markdown": "## What changed\n\n" + ("Lorem ipsum dolor sit amet. " * 150),
    }


def fill(db: Path, rows: int) -> float:
    """Store ``rows`` synthetic guides; returns seconds taken."""
    from bot.tagview.store import GuideStore

    rnd = random.Random(7)
    started = time.perf_counter()
    with GuideStore(db) as store:
        conn = store.connection
        conn.execute("BEGIN")
        for number in range(1, rows + 1):
            store.save(synthetic_guide(number, rnd), visibility="public")
        conn.execute("COMMIT")
    return time.perf_counter() - started


def serve(db: Path, port: int) -> None:
    """Child process: serve the tag view of ``db`` on 127.0.0.1:``port``."""
    from aiohttp import web

    from bot.tagview.store import GuideStore
    from bot.tagview.web import create_app

    web.run_app(create_app(GuideStore(db)), host="127.0.0.1", port=port, print=None)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def measure(base: str, paths: list[str], requests: int) -> list[tuple[str, list[float], list[float], int]]:
    results = []
    connector = aiohttp.TCPConnector(limit=1)
    async with aiohttp.ClientSession(connector=connector) as session:
        for _ in range(200):  # wait for the child to listen
            try:
                async with session.get(f"{base}/repos") as response:
                    await response.read()
                    break
            except aiohttp.ClientConnectionError:
                await asyncio.sleep(0.05)
        for path in paths:
            first, total, size = [], [], 0
            for i in range(requests + 5):
                started = time.perf_counter()
                async with session.get(base + path) as response:
                    headers_at = time.perf_counter()
                    body = await response.read()
                    done = time.perf_counter()
                    if response.status != 200:
                        raise SystemExit(f"{path}: HTTP {response.status}")
                if i >= 5:  # the first few warm caches
                    first.append((headers_at - started) * 1000)
                    total.append((done - started) * 1000)
                    size = len(body)
            results.append((path, first, total, size))
    return results


def p99(values: list[float]) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[98]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=5000, help="guides to store (default 5000)")
    parser.add_argument("--requests", type=int, default=200, help="timed requests per URL (default 200)")
    parser.add_argument("--db", type=Path, help="reuse or create this database (default: a temporary one)")
    parser.add_argument("--serve", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve:
        serve(args.serve, args.port)
        return 0

    with tempfile.TemporaryDirectory() as tmp:
        db = args.db or Path(tmp) / "bench.db"
        fresh = not db.exists()
        seconds = fill(db, args.rows) if fresh else None
        port = free_port()
        child = subprocess.Popen(
            [sys.executable, __file__, "--serve", str(db), "--port", str(port)],
            env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])},
        )
        try:
            from bot.tagview.store import GuideStore

            with GuideStore(db) as store:
                rows = store.query(REPOSITORY, limit=1).total
                biggest = max(store.labels(REPOSITORY), key=lambda item: item.count)
            repo = f"/repos/{REPOSITORY}"
            paths = [
                f"{repo}/tags",
                f"{repo}/tags?level=deep",
                f"{repo}/tags?q=rollout",
                f"{repo}/tags?min_importance=7&from=2025-01-01",
                f"{repo}/tags?label={biggest.name}",
                f"{repo}/tags?label={biggest.name}&page=20",
                f"{repo}/tags.json?per_page=100",
                f"{repo}/tags.json?q=ckpt%20loop&per_page=100&page=3",
                f"{repo}/pulls/{rows // 2}/guide",
            ]
            results = asyncio.run(measure(f"http://127.0.0.1:{port}", paths, args.requests))
        finally:
            child.terminate()
            child.wait()

    print(f"command: python {' '.join([Path(__file__).as_posix(), *(argv if argv is not None else sys.argv[1:])])}")
    print(f"python {sys.version.split()[0]}, sqlite {__import__('sqlite3').sqlite_version}, {os.cpu_count()} CPUs")
    if seconds is not None:
        print(f"stored {rows} guides in {seconds:.1f} s ({biggest.name!r} is the largest label: {biggest.count} PRs)")
    print()
    print("| rows | URL | first byte median ms | first byte p99 ms | whole response median ms | KB |")
    print("| ---: | --- | ---: | ---: | ---: | ---: |")
    for path, first, total, size in results:
        print(
            f"| {rows} | `{path.removeprefix(repo)}` | {statistics.median(first):.1f} | {p99(first):.1f} "
            f"| {statistics.median(total):.1f} | {size / 1024:.0f} |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
