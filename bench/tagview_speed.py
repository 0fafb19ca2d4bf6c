"""How the tag view's pages cost as the store grows: 1,000 and 10,000 guides, SQLite and PostgreSQL.

A store is filled with synthetic guides (30 labels of uneven size, 1-4 labels and ~4 KB
of Markdown per guide, one merge every ~3 hours): first ``--sizes``'s smaller count,
measured, then topped up to the larger one, measured again. Each backend is measured:
a SQLite file, and PostgreSQL (``--database-url``, default
``postgresql://127.0.0.1:5432/test``) in a schema of its own, dropped afterwards. The
tag-view server runs in a child process on 127.0.0.1 (``bot.tagview.web.create_app``
on the store, as ``prguide view`` serves it), and every page is fetched ``--requests``
times (after 3 untimed; fewer, but at least 5, when they pass ``--page-seconds``) on one
keep-alive connection:

* **latency**: time to the response's headers and to its last byte (median, p95);
* **CPU per request**: the server process's user+system CPU (``/proc/<pid>/stat``) over
  the page's requests, and on PostgreSQL also the CPU of the backends serving the server's
  connections (as SQLite does that work inside the server).

The growth table divides the larger store's figures by the smaller's: a page whose cost
follows the number of stored guides shows ~10x, one that reads a page of rows ~1x.

    python bench/tagview_speed.py [--quick] [--sizes 1000,10000] [--requests N] [--page-seconds S] [--backend sqlite|postgresql]...
                                  [--database-url URL]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import sys
import tempfile
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from common import ChildProcess, cpu_seconds, free_port, header, median, percentile, table, wait_http
from pgmeter import BackendMeter

REPOSITORY = "bench/rocket"
WORDS = ["rollout", "ckpt", "vllm", "megatron", "fsdp", "ray", "docs", "ci", "reward", "trainer", "sglang", "lora"]
LABELS = [f"area/{w}" for w in WORDS] + [f"type/{t}" for t in ("fix", "feature", "perf", "refactor", "test", "docs", "ci", "chore")] + [
    f"team/{i}" for i in range(10)
]
DEFAULT_URL = "postgresql://127.0.0.1:5432/test"
WARM_UP = 3
#: Timed requests of a page are at least this many, even past its time budget.
MIN_REQUESTS = 5


def synthetic_guide(number: int) -> dict[str, Any]:
    """Guide ``number``, shaped like ``Guide.data``; the same for a number whatever else is stored."""
    rnd = random.Random(number)
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


def open_store(backend: str, where: str, schema: str | None) -> Any:
    """The tag view's store: a :class:`GuideStore` on the file ``where`` or a :class:`PgGuideStore` on URL ``where``."""
    if backend == "sqlite":
        from bot.tagview.store import GuideStore

        return GuideStore(Path(where))
    from bot.tagview.pgstore import PgGuideStore

    return PgGuideStore.open(where, schema=schema)


def fill(store: Any, numbers: range) -> float:
    """Store the guides ``numbers``; returns seconds taken (SQLite: one transaction; PostgreSQL: one per guide, as saved)."""
    started = time.perf_counter()
    conn = getattr(store, "connection", None)
    if conn is not None:
        conn.execute("BEGIN")
    for number in numbers:
        store.save(synthetic_guide(number), visibility="public")
    if conn is not None:
        conn.execute("COMMIT")
    return time.perf_counter() - started


def serve(backend: str, where: str, schema: str | None, port: int) -> None:
    """Child process: serve the tag view of the store on 127.0.0.1:``port``."""
    from aiohttp import web

    from bot.tagview.web import create_app

    web.run_app(create_app(open_store(backend, where, schema)), host="127.0.0.1", port=port, print=None)


def paths(biggest: str, number: int) -> list[str]:
    """The pages measured: every list page, both feeds, the digest, the guide page of PR ``number``."""
    repo = f"/repos/{REPOSITORY}"
    return [
        "/repos",
        f"{repo}/tags",
        f"{repo}/tags?level=deep",
        f"{repo}/tags?q=rollout",
        f"{repo}/tags?min_importance=7&from=2025-01-01",
        f"{repo}/tags?label={biggest}",
        f"{repo}/tags?label={biggest}&page=5",
        f"{repo}/tags.json?per_page=100",
        f"{repo}/tags.json?q=ckpt%20loop&per_page=100&page=3",
        f"{repo}/tags.atom",
        f"{repo}/digest",
        f"{repo}/digest.atom",
        f"{repo}/pulls/{number}/guide",
    ]


async def measure(base: str, pages: list[str], requests: int, budget: float, server_pid: int, meter: Any) -> list[dict[str, Any]]:
    """Fetch each page ``requests`` times (after :data:`WARM_UP`; stop early, after at least
    :data:`MIN_REQUESTS`, once its timed requests took ``budget`` seconds); latency and CPU per request."""
    import aiohttp

    results = []
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=1)) as session:
        for path in pages:
            first, total, size = [], [], 0
            for i in range(WARM_UP + requests):
                if len(total) >= MIN_REQUESTS and sum(total) > budget * 1000:
                    break
                if i == WARM_UP:
                    cpu0 = cpu_seconds(server_pid)
                    if meter is not None:
                        await asyncio.to_thread(meter.start)
                started = time.perf_counter()
                async with session.get(base + path) as response:
                    headers_at = time.perf_counter()
                    body = await response.read()
                    done = time.perf_counter()
                    if response.status != 200:
                        raise SystemExit(f"{path}: HTTP {response.status}")
                if i >= WARM_UP:
                    first.append((headers_at - started) * 1000)
                    total.append((done - started) * 1000)
                    size = len(body)
            cpu, timed = cpu_seconds(server_pid) - cpu0, len(total)
            backends = 0.0
            if meter is not None:
                await asyncio.to_thread(meter.poll)
                backends = meter.seconds()
            results.append({
                "path": path, "first": median(first), "total": median(total), "p95": percentile(total, 95),
                "cpu_ms": cpu / timed * 1000, "db_ms": backends / timed * 1000, "kb": size / 1024, "requests": timed,
            })  # fmt: skip
    return results


async def measure_store(
    backend: str, where: str, schema: str | None, requests: int, budget: float, url: str, number: int
) -> tuple[list[dict[str, Any]], str]:
    """Start a server on the store, measure every page, stop it; also the largest label's name."""
    store = open_store(backend, where, schema)
    try:
        biggest = max(store.labels(REPOSITORY), key=lambda item: item.count).name
    finally:
        store.close()
    port = free_port()
    here = Path(__file__).resolve()
    argv = [sys.executable, str(here), "--serve", backend, "--where", where, "--port", str(port)] + (["--schema", schema] if schema else [])
    child = ChildProcess(argv, env={"PYTHONPATH": str(here.parents[1])})
    meter = None
    try:
        await wait_http(f"http://127.0.0.1:{port}/repos", child=child)
        if backend == "postgresql":
            meter = BackendMeter(url, [child.pid])
        return await measure(f"http://127.0.0.1:{port}", paths(biggest, number), requests, budget, child.pid, meter), biggest
    finally:
        if meter is not None:
            meter.close()
        child.stop()


async def run(args: argparse.Namespace) -> int:
    """Fill and measure each backend at each size; print the tables."""
    print(header("prguide tag view: pages at several store sizes, SQLite and PostgreSQL"))
    import sqlite3

    results: dict[tuple[str, int], list[dict[str, Any]]] = {}
    fills: list[list[Any]] = []
    with tempfile.TemporaryDirectory(prefix="prguide-tagview-") as tmp:
        for backend in args.backend:
            schema = f"bench_{uuid.uuid4().hex[:8]}" if backend == "postgresql" else None
            where = args.database_url if backend == "postgresql" else str(Path(tmp) / "tagview.db")
            try:
                stored = 0
                for size in args.sizes:
                    store = open_store(backend, where, schema)
                    try:
                        seconds = fill(store, range(stored + 1, size + 1))
                    finally:
                        store.close()
                    fills.append([backend, f"{stored + 1:,}-{size:,}", seconds, (size - stored) / seconds])
                    stored = size
                    results[(backend, size)], biggest = await measure_store(
                        backend, where, schema, args.requests, args.page_seconds, args.database_url, min(args.sizes) // 2
                    )
                    print(f"{backend} at {size:,} guides measured (largest label {biggest!r})", file=sys.stderr)
            finally:
                if schema:
                    from bot.app import pg

                    pg.drop_schema(args.database_url, schema)

    print(f"SQLite {sqlite3.sqlite_version}; up to {args.requests} requests per page after {WARM_UP} untimed (at least "
          f"{MIN_REQUESTS}, fewer past {args.page_seconds:g} s of requests), one keep-alive connection; "
          f"CPU: the server process, and on PostgreSQL its backends, per request\n")  # fmt: skip
    print(table(["backend", "guides stored", "seconds", "guides/s"], fills) + "\n")
    rows = []
    for (backend, size), found in results.items():
        for r in found:
            rows.append([backend, f"{size:,}", f"`{r['path'].removeprefix(f'/repos/{REPOSITORY}')}`", r["first"], r["total"], r["p95"],
                         r["cpu_ms"], r["db_ms"] if backend == "postgresql" else "-", r["cpu_ms"] + r["db_ms"], r["kb"], r["requests"]])  # fmt: skip
    print(table(["backend", "guides", "page", "first byte median ms", "whole median ms", "whole p95 ms", "server CPU ms/request",
                 "backends' CPU ms/request", "total CPU ms/request", "KB", "requests"], rows) + "\n")  # fmt: skip
    small, large = min(args.sizes), max(args.sizes)
    if small != large:
        growth_rows = []
        grew: dict[str, list[str]] = {}
        for backend in args.backend:
            for a, b in zip(results[(backend, small)], results[(backend, large)], strict=True):
                cpu = (b["cpu_ms"] + b["db_ms"]) / (a["cpu_ms"] + a["db_ms"])
                latency = b["total"] / a["total"]
                growth_rows.append([backend, f"`{a['path'].removeprefix(f'/repos/{REPOSITORY}')}`", latency, cpu])
                if cpu >= 2:
                    grew.setdefault(backend, []).append(a["path"].removeprefix(f"/repos/{REPOSITORY}") or a["path"])
        print(f"Growth from {small:,} to {large:,} stored guides ({large / small:g}x the guides):\n")
        print(table(["backend", "page", "x whole median latency", "x total CPU per request"], growth_rows) + "\n")
        for backend in args.backend:
            pages = grew.get(backend, [])
            print(f"{backend}: {len(pages)} of {len(results[(backend, small)])} pages cost 2x or more CPU per request at "
                  f"{large:,} guides than at {small:,}" + (f": {', '.join(pages)}" if pages else ""))  # fmt: skip
    return 0


def main(argv: list[str] | None = None) -> int:
    """Parse options; measure, or (``--serve``) be the server child."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=lambda text: sorted({int(x) for x in text.split(",")}), default=[1000, 10000],
                        help="store sizes to measure, comma-separated (default 1000,10000)")  # fmt: skip
    parser.add_argument("--requests", type=int, default=40, help="timed requests per page at most (default 40)")
    parser.add_argument("--page-seconds", type=float, default=10.0, help="stop timing a page after this much (default 10; at least 5 requests)")
    parser.add_argument("--backend", action="append", choices=("sqlite", "postgresql"), help="backend to measure (repeatable; default both)")
    parser.add_argument("--database-url", default=os.environ.get("PRGUIDE_TEST_DATABASE_URL", DEFAULT_URL))
    parser.add_argument("--quick", action="store_true", help="200 and 2,000 guides, 10 requests per page")
    parser.add_argument("--serve", choices=("sqlite", "postgresql"), help=argparse.SUPPRESS)
    parser.add_argument("--where", help=argparse.SUPPRESS)
    parser.add_argument("--schema", help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve:
        serve(args.serve, args.where, args.schema, args.port)
        return 0
    args.backend = args.backend or ["sqlite", "postgresql"]
    if args.quick:
        args.sizes, args.requests = [200, 2000], 10
    if min(args.sizes) < 2:
        parser.error("the smallest size must be at least 2")
    return asyncio.run(run(args))


if __name__ == "__main__":
    sys.exit(main())
