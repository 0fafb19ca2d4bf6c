"""Throughput under a backlog: is prguide limited by GitHub's rules or by itself?

2,000 jobs for 500 merged pull requests (the corpus served again in copies of its
repository, all in one installation; 4 deliveries per pull request: the merged event
and three more with new delivery ids, as from refreshes or repeated events) are queued
in the job database before prguide's server starts. The sandbox answers every GitHub
call after ``--latency-ms`` (default 50). The server runs with its default settings
(4 workers) and the time until its pool is idle is measured:

* **unpaced**, the whole backlog with no write budget at all, so only prguide's own
  speed limits it. It is compared with the ideal set by GitHub's rules for the requests
  it made: ``W`` content-creating requests at 80 per minute per installation (the
  secondary limit), and ``R`` requests counting against the primary limit (not 304s)
  at 5,000 per hour ("Rate limits for the REST API"). Target: well under the ideal.
* **paced**, the first ``--paced-jobs`` jobs (first guides: nearly all the writes) with
  prguide's shipped write budget, a token bucket of 20 plus 1 per second, time-scaled
  ``--speedup`` times (rate x speedup, same burst: the shape of a 60 s window squeezed
  into 60/speedup s) so the run stays short. Compared with the scaled ideal
  ``W / (80 x speedup)`` minutes; the sandbox's log is checked that no 60/speedup s
  window saw more than 80 writes.

Each run is one long measurement over many jobs; ``--rounds`` repeats both.

    python bench/backlog.py [--quick] [--jobs N] [--pulls N] [--paced-jobs N] [--speedup S] [--rounds N]
"""

from __future__ import annotations

import argparse
import asyncio
import bisect
import sys
import tempfile
import time
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from common import APP_ID, CORPUS, INSTALLATION_ID, Stack, header, load_bundles, median, table, verdict, verdict_line

from bot.app.github import WRITE_BURST, WRITE_RATE

GITHUB_WRITES_PER_MIN = 80
GITHUB_REQUESTS_PER_HOUR = 5000
UNPACED = {"write_rate": 1e6, "write_burst": 1e6, "hourly_rate": None}
#: The write budget prguide ships with (bot.app.github.ClientFactory): 72 a minute, bursts of 8.
SHIPPED_RATE, SHIPPED_BURST = WRITE_RATE, WRITE_BURST
#: Paced time within this factor of the scaled ideal counts as "limited by GitHub".
CLOSE = 1.25


def plan(bundles: Sequence[Mapping[str, Any]], pulls: int, jobs: int) -> tuple[int, list[tuple[str, Mapping[str, Any]]]]:
    """How many repository copies serve ``pulls`` pull requests, and the job order (by round, then pull request)."""
    copies = -(-pulls // len(bundles))
    targets: list[tuple[str, Mapping[str, Any]]] = []
    from bot.sandbox.state import repo_of_bundle

    for k in range(copies):
        for bundle in bundles:
            base = repo_of_bundle(bundle)
            targets.append((f"{base}-{k}" if k else base, bundle))
    targets = targets[:pulls]
    per_pull = -(-jobs // pulls)
    order = [t for _ in range(per_pull) for t in targets][:jobs]
    return copies, order


def fill_queue(db: Path, key_pem: str, bundles: Sequence[Mapping[str, Any]], copies: int, order: Sequence[tuple[str, Mapping[str, Any]]]) -> None:
    """Queue one job per entry of ``order`` in the job database at ``db``, as the webhook would."""
    from bot.app.jobs import JobStore
    from bot.sandbox import Sandbox
    from common import delivery_body

    local = Sandbox(APP_ID, key_pem, installation_id=INSTALLATION_ID)
    for k in range(copies):
        for bundle in bundles:
            repo = local.add_bundle(bundle)
            if k:
                local.add_bundle(bundle, repo=f"{repo}-{k}")
    bodies: dict[tuple[str, int], bytes] = {}
    store = JobStore.open(str(db))
    try:
        for repository, bundle in order:
            number = int(bundle["pull"]["number"])
            if (repository, number) not in bodies:
                owner, name = repository.split("/", 1)
                bodies[(repository, number)] = delivery_body(bundle, local.state.repo_json(local.state.repo(owner, name)))
            store.enqueue(str(uuid.uuid4()), "pull_request", f"{repository}#{number}", bodies[(repository, number)],
                          installation_id=INSTALLATION_ID, action="closed")  # fmt: skip
    finally:
        store.close()


def max_in_window(times: Sequence[float], window: float) -> int:
    """The most of ``times`` (sorted seconds) falling in any ``window``-second interval."""
    best = 0
    for i, t in enumerate(times):
        best = max(best, bisect.bisect_right(times, t + window, i) - i)
    return best


async def one_run(bundles: Sequence[Mapping[str, Any]], copies: int, order: Sequence[tuple[str, Mapping[str, Any]]], *,
                  latency_ms: float, client_options: Mapping[str, Any], key_pem: str) -> dict[str, Any]:  # fmt: skip
    """Fill a fresh queue, start the server, wait for an idle pool; what it took."""
    with tempfile.TemporaryDirectory(prefix="prguide-bench-") as tmp:
        db = Path(tmp) / "prguide.db"
        fill_queue(db, key_pem, bundles, copies, order)
        # The sandbox's primary limit is lifted so the run is not stopped for an hour;
        # the requests that would count against it are counted instead.
        async with Stack(bundles, copies=copies, latency_ms=latency_ms, client_options=client_options,
                         key_pem=key_pem, db_path=db, rate_limit=10**9) as stack:  # fmt: skip
            await stack.wait_idle(timeout=3600)
            took = time.perf_counter() - stack.started
            requests = list(stack.requests)
            writes = sorted(t - stack.started for t in stack.write_times)
            comments = sum(len(v) for v in stack.comment_times.values())
            queue = _queue_counts(stack)
    return {
        "seconds": took,
        "writes": len(writes),
        "write_times": writes,
        "limited": sum(1 for r in requests if r["status"] != 304 and not r["path"].startswith("/app/installations")),
        "requests": len(requests),
        "comments": comments,
        "queue": queue,
    }


def _queue_counts(stack: Stack) -> dict[str, int]:
    """The job queue's counts by state at the end of a run."""
    from bot.app.server import STATE

    return stack.app[STATE].store.counts()


async def run(args: argparse.Namespace) -> int:
    """Run the unpaced and the paced backlog and print them against GitHub's limits; returns 0."""
    from bot.demo import generate_private_key

    jobs, pulls = (200, 50) if args.quick else (args.jobs, args.pulls)
    bundles = load_bundles(args.corpus)
    copies, order = plan(bundles, pulls, jobs)
    key_pem = generate_private_key()
    paced_jobs = 25 if args.quick else args.paced_jobs
    # Time-scaled: the rate grows with the speed-up, the burst stays, so any window of
    # 60/speedup s holds what 60 s would.
    # The hour bucket (500/h) is left out here: it is GitHub's rule too, and would make the run hours long.
    paced = {"write_rate": SHIPPED_RATE * args.speedup, "write_burst": SHIPPED_BURST, "hourly_rate": None}
    print(header("prguide throughput under a backlog"))
    unpaced_runs, paced_runs = [], []
    for r in range(max(1, args.rounds)):
        unpaced_runs.append(await one_run(bundles, copies, order, latency_ms=args.latency_ms, client_options=UNPACED, key_pem=key_pem))
        print(f"round {r + 1}: unpaced done in {unpaced_runs[-1]['seconds']:.1f} s", file=sys.stderr)
        paced_runs.append(await one_run(bundles, copies, order[:paced_jobs], latency_ms=args.latency_ms, client_options=paced, key_pem=key_pem))
        print(f"round {r + 1}: paced done in {paced_runs[-1]['seconds']:.1f} s", file=sys.stderr)

    first = unpaced_runs[0]
    writes, limited = first["writes"], first["limited"]
    ideal_write_s = writes / GITHUB_WRITES_PER_MIN * 60
    ideal_primary_s = limited / GITHUB_REQUESTS_PER_HOUR * 3600
    ideal_s = max(ideal_write_s, ideal_primary_s)
    unpaced_s = median(r["seconds"] for r in unpaced_runs)
    paced_s = median(r["seconds"] for r in paced_runs)
    scaled_ideal = paced_runs[0]["writes"] / (GITHUB_WRITES_PER_MIN * args.speedup) * 60
    window = 60 / args.speedup
    worst_window = max(max_in_window(r["write_times"], window) for r in paced_runs)

    print(f"{jobs:,} queued jobs for {len({(r, b['pull']['number']) for r, b in order}):,} pull requests "
          f"({copies} cop{'y' if copies == 1 else 'ies'} of the {len(bundles)}-PR corpus), {args.latency_ms:g} ms per GitHub answer, "
          f"4 workers, {len(unpaced_runs)} round(s)\n")  # fmt: skip
    print(table(
        ["what", "value"],
        [
            ["content-creating requests W (writes)", writes],
            ["requests counting against the primary limit R (not 304)", limited],
            ["all GitHub requests", first["requests"]],
            ["comments written", first["comments"]],
            [f"ideal by the secondary limit: W / {GITHUB_WRITES_PER_MIN} per min", f"{ideal_write_s:,.0f} s"],
            [f"ideal by the primary limit: R / {GITHUB_REQUESTS_PER_HOUR:,} per hour", f"{ideal_primary_s:,.0f} s"],
        ],
    ))  # fmt: skip
    print()
    self_ok = unpaced_s <= ideal_s / 2
    paced_ok = paced_s <= scaled_ideal * CLOSE and worst_window <= GITHUB_WRITES_PER_MIN
    paced_writes = paced_runs[0]["writes"]
    bucket_s = max(0.0, paced_writes - SHIPPED_BURST) / (SHIPPED_RATE * args.speedup)
    print(table(
        ["run", "jobs", "writes", "completion s", "jobs per s", "ideal s (GitHub's rules)", "x ideal", "target", "verdict"],
        [
            ["unpaced: prguide's own limit", jobs, writes, unpaced_s, jobs / unpaced_s, ideal_s, unpaced_s / ideal_s,
             "<= 0.5x (limited by GitHub)", verdict(self_ok)],
            [f"shipped write budget, sped up {args.speedup:g}x", paced_jobs, paced_writes, paced_s, paced_jobs / paced_s,
             scaled_ideal, paced_s / scaled_ideal, f"<= {CLOSE}x, <= {GITHUB_WRITES_PER_MIN} writes per {window:g} s", verdict(paced_ok)],
            [f"  the bucket alone: (writes - {SHIPPED_BURST:g}) / rate", paced_jobs, paced_writes, bucket_s, paced_jobs / bucket_s if bucket_s else float("nan"),
             scaled_ideal, bucket_s / scaled_ideal, "", ""],
        ],
    ))  # fmt: skip
    print(f"\nmost writes in any {window:g} s window of the paced run: {worst_window} (GitHub allows {GITHUB_WRITES_PER_MIN} per minute); "
          f"prguide's bucket: {SHIPPED_BURST:g} burst + {SHIPPED_RATE:g}/s, i.e. {SHIPPED_RATE * 60:g} writes per minute once the burst is spent")
    print(f"at GitHub's real pace the whole backlog's {writes} writes need {ideal_write_s / 60:.1f} min at 80/min; "
          f"prguide's bucket takes {max(0.0, writes - SHIPPED_BURST) / SHIPPED_RATE / 60:.1f} min; prguide's own work {unpaced_s / 60:.1f} min")  # fmt: skip
    print(f"queue at the end: {first['queue']}")
    print(verdict_line("a backlog is limited by GitHub's rules, not by prguide (its own time <= 0.5x the ideal)",
                       f"{unpaced_s / ideal_s:.2f}x of {ideal_s:,.0f} s", self_ok))
    print(verdict_line(f"the write budget keeps GitHub's pace (<= {CLOSE}x the ideal, <= {GITHUB_WRITES_PER_MIN} writes a minute)",
                       f"{paced_s / scaled_ideal:.2f}x, at most {worst_window} writes in a window", paced_ok))  # fmt: skip
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Parse options and run."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--corpus", type=Path, default=CORPUS, help=f"folder of bundle *.json files (default {CORPUS})")
    parser.add_argument("--jobs", type=int, default=2000, help="queued jobs (default 2,000)")
    parser.add_argument("--pulls", type=int, default=500, help="distinct pull requests (default 500)")
    parser.add_argument("--latency-ms", type=float, default=50.0, help="delay of every GitHub answer (default 50)")
    parser.add_argument("--paced-jobs", type=int, default=125, help="jobs in the paced run (default 125: first guides)")
    parser.add_argument("--speedup", type=float, default=10.0, help="how much faster the paced run's write budget is (default 10)")
    parser.add_argument("--rounds", type=int, default=1, help="repeat both runs (default 1)")
    parser.add_argument("--quick", action="store_true", help="200 jobs for 50 pull requests")
    args = parser.parse_args(argv)
    return asyncio.run(run(args))


if __name__ == "__main__":
    sys.exit(main())
