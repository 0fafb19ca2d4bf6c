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
follows the number of stored guides shows ~10x, one that reads a page of rows ~1x. Some
pages show more at the larger size (the unfiltered tags page: rare labels have fewer
than ten pull requests among 1,000 guides), so the table gives the page's growth in
bytes too. The digest pages are asked for one fixed week inside the smaller store, so
they show the same pull requests at both sizes.

After filling a PostgreSQL store the bench runs the store's ``analyze()`` when it has
one, as ``db copy`` and a long backfill do (autovacuum would take a minute or more).
``--baseline REV`` measures the code of git revision ``REV`` the same way first (its
``bot`` and ``config`` folders, exported into a temporary folder; its own stores) and
prints the growth before and after side by side. Target: the unfiltered tags page and
the digest at the larger size cost at most 1.5x their CPU at the smaller, on each
backend (the server's CPU, plus on PostgreSQL its backends').

    python bench/tagview_speed.py [--quick] [--sizes 1000,10000] [--requests N] [--page-seconds S] [--backend sqlite|postgresql]...
                                  [--database-url URL] [--baseline REV]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import subprocess
import sys
import tempfile
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from common import (
    ChildProcess, cpu_seconds, export_revision, free_port, header, median, percentile, table, verdict_line, wait_http,
)
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
#: Most a target page may cost at the larger size, as a multiple of its cost at the smaller.
TARGET_GROWTH = 1.5
HERE = Path(__file__).resolve()


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


def fill_child(backend: str, where: str, schema: str | None, start: int, end: int) -> None:
    """Child process (the code under test on its path): fill, analyse as a bulk write does, print what happened as JSON."""
    store = open_store(backend, where, schema)
    try:
        seconds = fill(store, range(start, end + 1))
        analysed = hasattr(store, "analyze") and backend == "postgresql"
        if analysed:
            store.analyze()
        biggest = max(store.labels(REPOSITORY), key=lambda item: item.count).name
    finally:
        store.close()
    print(json.dumps({"seconds": seconds, "analysed": analysed, "biggest": biggest}))


def serve(backend: str, where: str, schema: str | None, port: int) -> None:
    """Child process: serve the tag view of the store on 127.0.0.1:``port``."""
    from aiohttp import web

    from bot.tagview.web import create_app

    web.run_app(create_app(open_store(backend, where, schema)), host="127.0.0.1", port=port, print=None)


def paths(biggest: str, number: int, since: str, until: str) -> list[str]:
    """The pages measured: every list page, both feeds, the digest of ``since``-``until``, the guide page of PR ``number``."""
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
        f"{repo}/digest?since={since}&until={until}",
        f"{repo}/digest.atom?since={since}&until={until}",
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
    backend: str, where: str, schema: str | None, requests: int, budget: float, url: str, pages: list[str], code: Path
) -> list[dict[str, Any]]:
    """Start a server on the store with the code in ``code``, measure every page, stop it."""
    port = free_port()
    argv = [sys.executable, str(HERE), "--serve", backend, "--where", where, "--port", str(port), "--code", str(code)]
    argv += ["--schema", schema] if schema else []
    child = ChildProcess(argv)
    meter = None
    try:
        await wait_http(f"http://127.0.0.1:{port}/repos", child=child)
        if backend == "postgresql":
            meter = BackendMeter(url, [child.pid])
        return await measure(f"http://127.0.0.1:{port}", pages, requests, budget, child.pid, meter)
    finally:
        if meter is not None:
            meter.close()
        child.stop()


def fill_in_child(backend: str, where: str, schema: str | None, start: int, end: int, code: Path) -> dict[str, Any]:
    """Run :func:`fill_child` with the code in ``code``; its JSON answer."""
    argv = [sys.executable, str(HERE), "--fill", backend, "--where", where, "--start", str(start), "--end", str(end), "--code", str(code)]
    argv += ["--schema", schema] if schema else []
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"filling {backend} failed: {done.stderr.strip()[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def week_of(number: int) -> tuple[str, str]:
    """A window of seven days around guide ``number``'s merge: ``(since, until)``."""
    merged = datetime.fromisoformat(synthetic_guide(number)["merged_at"].replace("Z", "+00:00")).date()
    return (merged - timedelta(days=3)).isoformat(), (merged + timedelta(days=3)).isoformat()


def short(path: str) -> str:
    return path.removeprefix(f"/repos/{REPOSITORY}") or path


#: The pages the target is on: the unfiltered tags page and the digest.
TARGET_PAGES = ("/tags", "/digest")


async def measure_code(args: argparse.Namespace, code: Path, label: str, tmp: Path) -> tuple[dict, list]:
    """Fill and measure each backend at each size with the code in ``code``; results by (backend, size) and the fill rows."""
    results: dict[tuple[str, int], list[dict[str, Any]]] = {}
    fills: list[list[Any]] = []
    for backend in args.backend:
        schema = f"bench_{uuid.uuid4().hex[:8]}" if backend == "postgresql" else None
        where = args.database_url if backend == "postgresql" else str(tmp / f"tagview-{label}.db")
        try:
            stored, pages = 0, None
            for size in args.sizes:
                filled = fill_in_child(backend, where, schema, stored + 1, size, code)
                fills.append([label, backend, f"{stored + 1:,}-{size:,}", filled["seconds"], (size - stored) / filled["seconds"],
                              "yes" if filled["analysed"] else "no"])  # fmt: skip
                stored = size
                if pages is None:  # the same pages at every size: the smaller store's largest label
                    pages = paths(filled["biggest"], min(args.sizes) // 2, *week_of(min(args.sizes) // 2))
                results[(backend, size)] = await measure_store(
                    backend, where, schema, args.requests, args.page_seconds, args.database_url, pages, code
                )
                print(f"{label}: {backend} at {size:,} guides measured (largest label {filled['biggest']!r})", file=sys.stderr)
        finally:
            if schema:
                from bot.app import pg

                pg.drop_schema(args.database_url, schema)
    return results, fills


def growth(results: dict, backend: str, small: int, large: int) -> list[tuple[str, float, float, float]]:
    """``(page, x latency, x total CPU, x bytes)`` from ``small`` to ``large`` guides, page by page."""
    out = []
    for a, b in zip(results[(backend, small)], results[(backend, large)], strict=True):
        cpu_a, cpu_b = a["cpu_ms"] + a["db_ms"], b["cpu_ms"] + b["db_ms"]
        # CPU is read in clock ticks: a page cheaper than one tick per request reads 0.
        cpu = cpu_b / cpu_a if cpu_a > 0 else float("nan")
        out.append((short(a["path"]), b["total"] / a["total"], cpu, b["kb"] / a["kb"] if a["kb"] else float("nan")))
    return out


async def run(args: argparse.Namespace) -> int:
    """Fill and measure each backend at each size (and first with ``--baseline``'s code); print the tables."""
    print(header("prguide tag view: pages at several store sizes, SQLite and PostgreSQL"))
    import sqlite3

    codes: list[tuple[str, Path]] = []
    with tempfile.TemporaryDirectory(prefix="prguide-tagview-") as tmp_name:
        tmp = Path(tmp_name)
        if args.baseline:
            codes.append((f"before ({args.baseline})", export_revision(args.baseline, tmp / "baseline")))
        codes.append(("after" if args.baseline else "this tree", HERE.parents[1]))
        measured = {label: await measure_code(args, code, label.split()[0], tmp) for label, code in codes}

    print(f"SQLite {sqlite3.sqlite_version}; up to {args.requests} requests per page after {WARM_UP} untimed (at least "
          f"{MIN_REQUESTS}, fewer past {args.page_seconds:g} s of requests), one keep-alive connection; "
          f"CPU: the server process, and on PostgreSQL its backends, per request\n")  # fmt: skip
    print(table(["code", "backend", "guides stored", "seconds", "guides/s", "analysed after"],
                [row for _, fills in measured.values() for row in fills]) + "\n")  # fmt: skip
    rows = []
    for label, (results, _) in measured.items():
        for (backend, size), found in results.items():
            for r in found:
                rows.append([label, backend, f"{size:,}", f"`{short(r['path'])}`", r["first"], r["total"], r["p95"], r["cpu_ms"],
                             r["db_ms"] if backend == "postgresql" else "-", r["cpu_ms"] + r["db_ms"], r["kb"], r["requests"]])  # fmt: skip
    print(table(["code", "backend", "guides", "page", "first byte median ms", "whole median ms", "whole p95 ms", "server CPU ms/request",
                 "backends' CPU ms/request", "total CPU ms/request", "KB", "requests"], rows) + "\n")  # fmt: skip
    small, large = min(args.sizes), max(args.sizes)
    if small == large:
        return 0
    print(f"Growth from {small:,} to {large:,} stored guides ({large / small:g}x the guides); 'x KB': how much more the page shows:\n")
    labels = list(measured)
    head = ["backend", "page"]
    for label in labels:
        head += [f"{label}: x latency", f"{label}: x total CPU"]
    head.append("x KB")
    by_label = {label: {backend: growth(results, backend, small, large) for backend in args.backend}
                for label, (results, _) in measured.items()}  # fmt: skip
    grow_rows = []
    for backend in args.backend:
        for i, (page, *_rest) in enumerate(by_label[labels[-1]][backend]):
            row: list[Any] = [backend, f"`{page}`"]
            for label in labels:
                _, latency, cpu, _kb = by_label[label][backend][i]
                row += [latency, cpu]
            row.append(by_label[labels[-1]][backend][i][3])
            grow_rows.append(row)
    print(table(head, grow_rows) + "\n")
    for label in labels:
        for backend in args.backend:
            pages = [page for page, _lat, cpu, _kb in by_label[label][backend] if cpu >= 2]
            print(f"{label}, {backend}: {len(pages)} of {len(by_label[label][backend])} pages cost 2x or more CPU per request at "
                  f"{large:,} guides than at {small:,}" + (f": {', '.join(pages)}" if pages else ""))  # fmt: skip
    print()
    final = by_label[labels[-1]]
    for backend in args.backend:
        for page, _lat, cpu, kb in final[backend]:
            if page.split("?")[0] in TARGET_PAGES and not page.startswith("/tags?"):
                print(verdict_line(
                    f"tag view {page} on {backend}: CPU at {large:,} guides <= {TARGET_GROWTH:g}x at {small:,}",
                    f"{cpu:.2f}x (the page shows {kb:.2f}x the bytes)", cpu <= TARGET_GROWTH,
                ))  # fmt: skip
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
    parser.add_argument("--baseline", metavar="REV", help="also measure git revision REV's code first, for a before/after")
    parser.add_argument("--fill", choices=("sqlite", "postgresql"), help=argparse.SUPPRESS)
    parser.add_argument("--start", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--end", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--code", help=argparse.SUPPRESS)
    parser.add_argument("--serve", choices=("sqlite", "postgresql"), help=argparse.SUPPRESS)
    parser.add_argument("--where", help=argparse.SUPPRESS)
    parser.add_argument("--schema", help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.code:
        # A child measuring some revision's code: its tree comes before this checkout (common.py puts that first).
        sys.path.insert(0, args.code)
        import bot

        if Path(bot.__file__).resolve().parents[1] != Path(args.code).resolve():
            raise SystemExit(f"--code {args.code}: imported bot from {bot.__file__}")
    if args.serve:
        serve(args.serve, args.where, args.schema, args.port)
        return 0
    if args.fill:
        fill_child(args.fill, args.where, args.schema, args.start, args.end)
        return 0
    args.backend = args.backend or ["sqlite", "postgresql"]
    if args.quick:
        args.sizes, args.requests = [200, 2000], 10
    if min(args.sizes) < 2:
        parser.error("the smallest size must be at least 2")
    return asyncio.run(run(args))


if __name__ == "__main__":
    sys.exit(main())
