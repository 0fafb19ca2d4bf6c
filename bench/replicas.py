"""Replicas: deliveries per second, merge-to-comment latency, memory and CPU per delivery,
for one prguide on SQLite, one on PostgreSQL and three on PostgreSQL, in one run.

Each configuration gets a fresh ``prguide sandbox`` process serving the corpus (68 merged
verl pull requests, every GitHub answer delayed ``--latency-ms``, default 20) and fresh
``prguide serve`` processes (role ``all``, 4 workers each) on free loopback ports:
SQLite in a temporary file, or PostgreSQL (``--database-url``, default
``postgresql://127.0.0.1:5432/test``) in a schema of its own, dropped afterwards. After one
warm-up guide (installation token, labels created), ``--one-by-one`` merges (default 12)
are delivered one at a time, then every other corpus pull request's merge delivery at
once (the burst), round-robin over the replicas; the sandbox is polled (every 20 ms)
until each has its guide comment:

* **latency one at a time**: send -> comment first seen, nothing else running (p50, p95);
* **burst deliveries/s**: deliveries / (first send -> last comment);
* **burst latency**: the same per pull request while the burst queues up behind the workers;
* **CPU per delivery**: user+system CPU time the prguide processes spent during the burst
  (``/proc/PID/stat``) / deliveries; for PostgreSQL also the server's backends serving
  them, as SQLite does that work inside prguide. Backends are found by the replicas'
  client ports in ``pg_stat_activity`` every 100 ms during the burst (a connection
  opened meanwhile counts from its start; one that both opens and closes between two
  looks is missed). The server's shared background processes (WAL writer, checkpointer,
  background writer) are shown apart: other users of the same server move them too;
* **memory**: each replica's RSS after the burst.

Target: PostgreSQL mode's CPU per delivery, prguide's processes and their backends
together, <= 2x SQLite mode's, with one replica and with three.

``--baseline REV`` runs the code of git revision ``REV`` too (its ``bot`` and ``config``
folders, exported into a temporary folder, first on the replicas' ``sys.path``): each
round runs every configuration with that code, then with this tree's, so load from others
falls on both alike, and the tables put them side by side.

The write budget is lifted (GitHub's 80 writes a minute per installation would otherwise
set the pace): the subject is prguide's own cost. The replicas share this machine's cores
with the sandbox and PostgreSQL, so three replicas cannot be faster than the cores allow.

    python bench/replicas.py [--quick] [--rounds N] [--latency-ms MS] [--database-url URL] [--baseline REV]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from common import (
    CORPUS,
    ChildProcess,
    cpu_seconds,
    delivery_body,
    delivery_headers,
    export_revision,
    free_port,
    header,
    load_bundles,
    median,
    percentile,
    rss_kb,
    serve_env,
    start_sandbox_process,
    table,
    verdict_line,
    wait_http,
    write_key,
)
from pgmeter import BackendMeter

DEFAULT_URL = "postgresql://127.0.0.1:5432/test"
#: The PostgreSQL mode's CPU per delivery may be at most this many times SQLite's.
TARGET_RATIO = 2.0

# The child: ``prguide serve`` as ``bot.app.server.run`` starts it, with the write budget lifted.
_SERVE = """
import asyncio
from bot.app import shared_state
from bot.app.logging import configure_logging
from bot.app.server import serve
from bot.app.settings import from_env
unpaced = ((1e6, 1e6),)
shared_state.PgSharedState.__init__.__defaults__ = (unpaced,)
settings = from_env()
configure_logging(settings.log_level)
asyncio.run(serve(settings, client_options={"write_rate": 1e6, "write_burst": 1e6, "hourly_rate": None}))
"""


def serve_code(code: Path | None) -> str:
    """The child's program: :data:`_SERVE`, importing ``bot`` from ``code`` when given (a ``--baseline`` export)."""
    if code is None:
        return _SERVE
    return (
        f"import sys\nsys.path.insert(0, {str(code)!r})\nimport bot\n"
        f"assert bot.__file__.startswith({str(code)!r}), bot.__file__\n" + _SERVE
    )


def with_params(url: str, **params: str) -> str:
    from urllib.parse import urlencode

    return url + ("&" if "?" in url else "?") + urlencode(params)


async def comments(http: Any, sandbox_url: str) -> dict[str, int]:
    async with http.get(f"{sandbox_url}/_sandbox/state") as answer:
        state = await answer.json()
    return {issue: len(found) for issue, found in state["comments"].items()}


async def one_config(
    backend: str, replicas: int, bundles: Sequence[dict], key_pem: str, key_path: Path, args: argparse.Namespace,
    code: Path | None = None,
) -> dict[str, Any]:
    import aiohttp

    from bot.sandbox import Sandbox

    sandbox, sandbox_url = await start_sandbox_process(key_path, latency_ms=args.latency_ms)
    secret = uuid.uuid4().hex
    tag = f"prguide-bench-{uuid.uuid4().hex[:8]}"
    schema = f"bench_{uuid.uuid4().hex[:8]}"
    children: list[ChildProcess] = []
    tmp = tempfile.TemporaryDirectory(prefix="prguide-replicas-")
    try:
        urls = []
        for n in range(replicas):
            port = free_port()
            env = serve_env(key_pem=key_pem, secret=secret, api_url=sandbox_url, port=port, db=f"{tmp.name}/prguide.db", log_level="WARNING")
            if backend == "postgresql":
                env["PRGUIDE_DATABASE_URL"] = with_params(args.database_url, application_name=tag)
                env["PRGUIDE_DATABASE_SCHEMA"] = schema
            child = ChildProcess([sys.executable, "-c", serve_code(code)], env=env)
            children.append(child)
            await wait_http(f"http://127.0.0.1:{port}/healthz", child=child, timeout=60)
            urls.append(f"http://127.0.0.1:{port}")
        # Repository objects as the sandbox serves them, for the delivery bodies.
        local = Sandbox(1, key_pem.encode(), installation_id=1)
        bodies = []
        for bundle in bundles:
            owner, name = local.add_bundle(bundle).split("/", 1)
            issue = f"{owner}/{name}#{bundle['pull']['number']}"
            bodies.append((issue, delivery_body(bundle, local.state.repo_json(local.state.repo(owner, name)))))
        async with aiohttp.ClientSession() as http:
            async def deliver(url: str, body: bytes) -> None:
                async with http.post(f"{url}/webhook", data=body, headers=delivery_headers(body, secret)) as answer:
                    assert answer.status == 202, answer.status

            async def until(issues: set[str], seen: dict[str, float], timeout: float) -> None:
                deadline = time.monotonic() + timeout
                while not issues <= set(seen):
                    if time.monotonic() > deadline:
                        raise RuntimeError(f"{backend} x{replicas}: {len(issues - set(seen))} guides missing after {timeout:g} s")
                    for child in children:
                        if child.proc.poll() is not None:
                            raise RuntimeError(f"a replica exited:\n{child.log_tail()}")
                    now = time.perf_counter()
                    for issue, count in (await comments(http, sandbox_url)).items():
                        if count and issue not in seen:
                            seen[issue] = now
                    await asyncio.sleep(0.02)  # bounded polling of a condition

            warm_issue, warm_body = bodies[0]
            await deliver(urls[0], warm_body)
            await until({warm_issue}, {}, 60)
            # Unloaded latency: one merge at a time, each to the next replica.
            quiet: list[float] = []
            for i, (issue, body) in enumerate(bodies[1 : 1 + args.one_by_one]):
                seen_one: dict[str, float] = {}
                began = time.perf_counter()
                await deliver(urls[i % replicas], body)
                await until({issue}, seen_one, 60)
                quiet.append((seen_one[issue] - began) * 1000)
            rest = bodies[1 + args.one_by_one :]
            meter = BackendMeter(args.database_url, [c.pid for c in children]) if backend == "postgresql" else None
            polling = None
            if meter is not None:
                meter.start()

                async def poll_backends() -> None:
                    while True:
                        await asyncio.to_thread(meter.poll)
                        await asyncio.sleep(0.1)  # sampling period, not a wait for an event

                polling = asyncio.create_task(poll_backends())
            cpu0 = {c.pid: cpu_seconds(c.pid) for c in children}
            sent: dict[str, float] = {}
            seen: dict[str, float] = {}
            start = time.perf_counter()
            sends = []
            for i, (issue, body) in enumerate(rest):
                sent[issue] = time.perf_counter()
                sends.append(deliver(urls[i % replicas], body))
            await asyncio.gather(*sends)
            await until(set(sent), seen, 300)
            elapsed = max(seen.values()) - start
            cpu = sum(cpu_seconds(c.pid) - cpu0[c.pid] for c in children)
            pg_cpu = aux_cpu = 0.0
            backends_seen = 0
            if meter is not None and polling is not None:
                polling.cancel()
                await asyncio.gather(polling, return_exceptions=True)
                await asyncio.to_thread(meter.poll)
                pg_cpu, aux_cpu, backends_seen = meter.seconds(), meter.aux_seconds(), len(meter.last)
                meter.close()
            rss = [rss_kb(c.pid)[0] / 1024 for c in children]
            final = await comments(http, sandbox_url)
        latencies = [(seen[i] - sent[i]) * 1000 for i in sent]
        return {
            "backend": backend, "replicas": replicas, "deliveries": len(rest),
            "per_s": len(rest) / elapsed, "p50": percentile(latencies, 50), "p95": percentile(latencies, 95),
            "quiet_p50": percentile(quiet, 50), "quiet_p95": percentile(quiet, 95),
            "cpu_ms": cpu / len(rest) * 1000, "pg_cpu_ms": pg_cpu / len(rest) * 1000,
            "aux_cpu_ms": aux_cpu / len(rest) * 1000, "backends": backends_seen,
            "rss": rss, "doubled": sum(1 for n in final.values() if n != 1),
        }
    finally:
        for child in children:
            child.stop()
        sandbox.stop()
        tmp.cleanup()
        if backend == "postgresql":
            from bot.app import pg

            pg.drop_schema(args.database_url, schema)


async def run(args: argparse.Namespace) -> int:
    bundles = load_bundles(CORPUS)
    configs = [("sqlite", 1), ("postgresql", 1), ("postgresql", 3)]
    with tempfile.TemporaryDirectory(prefix="prguide-replicas-key-") as keys:
        codes: list[tuple[str, Path | None]] = []
        if args.baseline:
            codes.append((f"before ({args.baseline})", export_revision(args.baseline, Path(keys) / "baseline")))
        codes.append(("after" if args.baseline else "this tree", None))
        results: dict[tuple[str, str, int], list[dict[str, Any]]] = {(label, *c): [] for label, _ in codes for c in configs}
        key_pem, key_path = write_key(Path(keys))
        for round_number in range(args.rounds):
            # Interleaved, so load from others on the machine falls on every configuration alike.
            for label, code in codes:
                for backend, replicas in configs:
                    result = await one_config(backend, replicas, bundles, key_pem, key_path, args, code)
                    results[(label, backend, replicas)].append(result)
                    print(f"round {round_number + 1} {label} {backend} x{replicas}: "
                          f"{json.dumps({k: v for k, v in result.items() if k != 'rss'})}", file=sys.stderr)  # fmt: skip
    print(header("Replicas: SQLite and PostgreSQL, one and three prguide processes"))
    print(f"Per run: one warm-up guide, {args.one_by_one} merges one at a time (unloaded latency), then the other "
          f"{len(bundles) - 1 - args.one_by_one} sent at once (the burst: throughput, latency under load, CPU, memory); "
          f"GitHub latency {args.latency_ms:g} ms; "
          f"medians over {args.rounds} rounds; {os.cpu_count()} cores shared by the replicas, the sandbox and PostgreSQL.\n")
    rows = []
    for (label, backend, replicas), runs in results.items():
        pg = backend == "postgresql"
        rows.append([
            *([label] if args.baseline else []), backend, replicas, median(r["per_s"] for r in runs),
            median(r["quiet_p50"] for r in runs), median(r["quiet_p95"] for r in runs),
            median(r["p50"] for r in runs), median(r["p95"] for r in runs),
            median(r["cpu_ms"] for r in runs), median(r["pg_cpu_ms"] for r in runs) if pg else "-",
            median(r["cpu_ms"] + r["pg_cpu_ms"] for r in runs),
            median(r["aux_cpu_ms"] for r in runs) if pg else "-", median(r["backends"] for r in runs) if pg else "-",
            " / ".join(f"{median(r['rss'][i] for r in runs):.0f}" for i in range(replicas)),
            sum(r["doubled"] for r in runs),
        ])  # fmt: skip
    print(table(
        [*(["code"] if args.baseline else []), "backend", "replicas", "burst deliveries/s", "one at a time: latency p50 ms",
         "p95 ms", "burst: latency p50 ms", "p95 ms", "prguide CPU ms/delivery", "backends' CPU ms/delivery",
         "prguide + backends CPU ms/delivery", "server background CPU ms/delivery (shared)", "backends seen",
         "RSS MiB per replica", "PRs without exactly 1 comment"],
        rows,
    ))  # fmt: skip

    def total(label: str, backend: str, replicas: int) -> float:
        return median(r["cpu_ms"] + r["pg_cpu_ms"] for r in results[(label, backend, replicas)])

    print()
    for label, _ in codes:
        lite = total(label, "sqlite", 1)
        one_pg, three_pg = total(label, "postgresql", 1), total(label, "postgresql", 3)
        own_one = median(r["cpu_ms"] for r in results[(label, "postgresql", 1)]) / lite
        own_three = median(r["cpu_ms"] for r in results[(label, "postgresql", 3)]) / lite
        prefix = f"{label}: " if args.baseline else ""
        print(f"{prefix}prguide's processes alone on PostgreSQL / SQLite: {own_one:.2f}x (1 replica), {own_three:.2f}x (3 replicas)")
        print(f"{prefix}PostgreSQL mode's CPU per delivery (prguide + its backends) / SQLite mode's: "
              f"{one_pg / lite:.2f}x (1 replica), {three_pg / lite:.2f}x (3 replicas)")  # fmt: skip
    label = codes[-1][0]  # the verdict is on this tree's code
    lite = total(label, "sqlite", 1)
    one_pg, three_pg = total(label, "postgresql", 1), total(label, "postgresql", 3)
    ok = max(one_pg, three_pg) <= TARGET_RATIO * lite
    print(verdict_line(f"PostgreSQL mode's CPU per delivery (prguide + its backends) <= {TARGET_RATIO:g}x SQLite mode's",
                       f"{one_pg / lite:.2f}x (1 replica), {three_pg / lite:.2f}x (3 replicas)", ok))  # fmt: skip
    return 0 if ok and not any(r[-1] for r in rows) else 1


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--latency-ms", type=float, default=20.0)
    parser.add_argument("--one-by-one", type=int, default=12, help="merges sent one at a time before the burst")
    parser.add_argument("--database-url", default=os.environ.get("PRGUIDE_TEST_DATABASE_URL", DEFAULT_URL))
    parser.add_argument("--baseline", metavar="REV", help="also run git revision REV's code in every round, for a before/after")
    args = parser.parse_args(argv)
    if args.quick:
        args.rounds = 1
    return asyncio.run(run(args))


if __name__ == "__main__":
    sys.exit(main())
