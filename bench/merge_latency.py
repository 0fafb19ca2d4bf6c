"""Merge-to-comment latency through the sandbox with a realistic GitHub latency.

Every corpus pull request is delivered (``pull_request`` ``closed``, merged) to prguide's
real webhook server, one at a time, with the GitHub sandbox delaying every API answer by
``--latency-ms`` (default 50 ms). Latency is measured from sending the delivery until the
sandbox has created the guide comment. After a warm-up delivery (installation token,
``GET /app``, labels created and styled), each round replays the whole corpus on a fresh
sandbox and server.

The reference, per pull request, is ``calls x latency``: the same GitHub calls made one
after another, with no work of prguide's own. Target (issue 7): p50 <= (calls x latency)
+ 100 ms, i.e. prguide's own work adds under 100 ms; independent calls (files pages,
reviews, review comments, the config file, the earlier comment) run concurrently. The
sandbox also reports the most requests it answered at once (GitHub's secondary limits
allow no more than 100 concurrent requests). A second reference is the critical path:
the round trips that must follow one another (reads at once, labels, each new label's
look, the comment) times the latency; prguide's own work is what the latency exceeds it by.

    python bench/merge_latency.py [--quick] [--rounds N] [--latency-ms MS] [--corpus DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from common import (
    CORPUS,
    MIN_ROUNDS,
    Stack,
    header,
    load_bundles,
    median,
    percentile,
    shown,
    table,
    verdict,
    verdict_line,
)

TARGET_OWN_MS = 100.0
#: Writes are not paced here: the subject is one guide's latency, not the write budget.
UNPACED = {"write_rate": 1000.0, "write_burst": 1000.0, "hourly_rate": None}


async def one_round(bundles: Sequence[Mapping[str, Any]], latency_ms: float, warm: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Latency and calls of every bundle's guide on a fresh sandbox and server, after one warm-up guide."""
    out = []
    async with Stack([warm, *bundles], latency_ms=latency_ms, client_options=UNPACED) as stack:
        pulls = list(stack.pulls)
        repository, bundle = pulls[0]
        await stack.deliver(stack.body(repository, bundle))
        await stack.wait_idle()
        # A second guide in the repository styles whatever labels the first did not.
        for repository, bundle in pulls[1:]:
            number = int(bundle["pull"]["number"])
            issue = f"{repository}#{number}"
            body = stack.body(repository, bundle)
            before = len(stack.requests)
            stack.max_in_flight = 0
            sent = time.perf_counter()
            status = await stack.deliver(body)
            await stack.wait_idle()
            landed = stack.comment_times.get(issue, [None])[-1]
            calls = stack.requests[before:]
            out.append({
                "number": number, "files": len(bundle["files"]), "status": status,
                "ms": (landed - sent) * 1000 if landed else float("nan"),
                "calls": len(calls), "in_flight": stack.max_in_flight,
                "looks": sum(1 for r in calls if r["method"] == "PATCH" and "/labels/" in r["path"] and "/issues/" not in r["path"]),
            })  # fmt: skip
    return out


async def run(args: argparse.Namespace) -> int:
    """Replay the corpus ``--rounds`` times and print latency percentiles against both references; returns 0."""
    bundles = load_bundles(args.corpus)
    warm = min(bundles, key=lambda b: len(b["files"]))
    rest = [b for b in bundles if b is not warm]
    if args.quick:
        rest = sorted(rest, key=lambda b: len(b["files"]))[::12]
    rounds = max(MIN_ROUNDS, args.rounds) if not args.quick else MIN_ROUNDS
    print(header("prguide merge-to-comment latency"))
    results: dict[int, list[dict[str, Any]]] = {}
    for r in range(rounds):
        for item in await one_round(rest, args.latency_ms, warm):
            results.setdefault(item["number"], []).append(item)
        print(f"round {r + 1}/{rounds} done", file=sys.stderr)

    per_pr = []
    for number, items in results.items():
        ms = median(i["ms"] for i in items)
        calls = median(i["calls"] for i in items)
        per_pr.append({"number": number, "files": items[0]["files"], "ms": ms, "calls": calls,
                       "reference": calls * args.latency_ms, "own": ms - calls * args.latency_ms,
                       "in_flight": max(i["in_flight"] for i in items), "looks": max(i["looks"] for i in items)})  # fmt: skip
        # The round trips that must follow one another: the reads (all at once), adding
        # labels, giving each new label its look, writing the comment.
        per_pr[-1]["critical"] = (3 + per_pr[-1]["looks"]) * args.latency_ms
    latencies = [p["ms"] for p in per_pr]
    references = [p["reference"] for p in per_pr]
    own = [p["own"] for p in per_pr]
    p50, p99 = percentile(latencies, 50), percentile(latencies, 99)
    ref50 = percentile(references, 50)
    within = sum(1 for p in per_pr if p["ms"] <= p["reference"] + TARGET_OWN_MS)
    print(f"{len(per_pr)} pull requests from {shown(args.corpus)}, {args.latency_ms:g} ms per GitHub answer, "
          f"{rounds} rounds (per PR: median over rounds; then percentiles over PRs)\n")  # fmt: skip
    print(table(
        ["what", "p50 ms", "p99 ms", "max ms"],
        [
            ["merge to comment (prguide)", p50, p99, max(latencies)],
            ["reference: calls x latency", ref50, percentile(references, 99), max(references)],
            ["prguide minus reference", percentile(own, 50), percentile(own, 99), max(own)],
            ["critical path: (3 + label looks) x latency", percentile([p["critical"] for p in per_pr], 50),
             percentile([p["critical"] for p in per_pr], 99), max(p["critical"] for p in per_pr)],
            ["prguide minus critical path (its own work)", percentile([p["ms"] - p["critical"] for p in per_pr], 50),
             percentile([p["ms"] - p["critical"] for p in per_pr], 99), max(p["ms"] - p["critical"] for p in per_pr)],
        ],
    ))  # fmt: skip
    ok = p50 <= ref50 + TARGET_OWN_MS
    print(f"\ntarget p50 <= calls x latency + {TARGET_OWN_MS:.0f} ms = {ref50 + TARGET_OWN_MS:.0f} ms: {verdict(ok)} (p50 {p50:.0f} ms); "
          f"{within} of {len(per_pr)} PRs within their own bound; most requests in flight at once: {max(p['in_flight'] for p in per_pr)}")  # fmt: skip
    print(verdict_line(f"merge to comment p50 <= calls x latency + {TARGET_OWN_MS:.0f} ms", f"p50 {p50:.0f} ms, bound {ref50 + TARGET_OWN_MS:.0f} ms", ok))
    print("\nslowest pull requests:\n")
    slow = sorted(per_pr, key=lambda p: p["ms"], reverse=True)[:6]
    print(table(["PR", "files", "calls", "label looks", "ms", "calls x latency", "critical path ms", "in flight"],
                [[f"#{p['number']}", p["files"], p["calls"], p["looks"], p["ms"], p["reference"], p["critical"], p["in_flight"]] for p in slow]))  # fmt: skip
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Parse options and run."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--corpus", type=Path, default=CORPUS, help=f"folder of bundle *.json files (default {CORPUS})")
    parser.add_argument("--rounds", type=int, default=MIN_ROUNDS, help="rounds (at least 5; default 5)")
    parser.add_argument("--latency-ms", type=float, default=50.0, help="delay of every GitHub answer (default 50)")
    parser.add_argument("--quick", action="store_true", help="every twelfth pull request only")
    args = parser.parse_args(argv)
    return asyncio.run(run(args))


if __name__ == "__main__":
    sys.exit(main())
