"""GitHub API calls per guide, counted by the sandbox, next to a naive flow that fetches everything.

Every corpus pull request is delivered once (``pull_request`` ``closed``, merged) to
prguide's real webhook server running against the GitHub sandbox on loopback, and the
sandbox's request log says what each job cost. Then:

* each delivery is sent again with the same ``X-GitHub-Delivery`` id, as GitHub's
  "Redeliver" does (target: <= 1 call);
* each pull request gets a second delivery with a new id (a second merged event, or
  a refresh): the guide is rebuilt and found unchanged;
* a **naive flow** builds the same guides on a fresh sandbox the obvious way: a new
  installation token and ``GET /app`` per guide, ``GET`` the pull request although the
  payload has it, files pages one after another, the config file without a
  conditional-request cache, the issue's labels and comments listed before writing.

Target (issue 7): <= 6 calls for a merged PR with <= 100 files (files, reviews, review
comments, find our comment, write comment, write labels), +1 per extra 100 files.
Calls answered ``304 Not Modified`` do not count against GitHub's primary rate limit
("Best practices for using the REST API"); they are shown apart. Calls made once per
process (the installation token, ``GET /app``) or once per label and repository
(giving a new label its colour) are also shown apart from the per-guide count.
Counts do not depend on timing, so one round is exact; the run is repeated
``--rounds`` times only to report a median duration.

    python bench/api_calls.py [--quick] [--corpus DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import math
import sys
import time
import uuid
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from common import APP_ID, CORPUS, INSTALLATION_ID, Stack, header, load_bundles, median, table, verdict

TARGET_BASE = 6
CONFIG_PATH = ".github/prguide.yml"
#: A repository config file that changes nothing (the language prguide uses anyway).
CONFIG_TEXT = "lang: en\n"
#: No pacing of writes: counts do not depend on it, and the run stays short.
UNPACED = {"write_rate": 1000.0, "write_burst": 1000.0, "hourly_rate": None}
TARGET_REDELIVERY = 1


def budget(files: int) -> int:
    """The issue's call budget for a merged pull request with ``files`` changed files."""
    return TARGET_BASE + max(0, math.ceil((files - 100) / 100))


def classify(request: Mapping[str, Any]) -> str:
    """What a sandbox request was for: ``once`` (token, app), ``label look`` or ``guide``."""
    path = str(request.get("path", "")).split("?", 1)[0]
    if path.endswith("/access_tokens") or path == "/app":
        return "once per process"
    if request.get("method") == "PATCH" and "/labels/" in path and "/issues/" not in path:
        return "label look"
    return "guide"


def endpoint(request: Mapping[str, Any]) -> str:
    """``METHOD /path/template`` of a sandbox request."""
    from bot.app.github import path_template

    return f"{request['method']} {path_template('http://x' + str(request['path']), 'http://x')}"


async def prguide_flow(bundles: Sequence[Mapping[str, Any]], *, config: str | None = None) -> dict[str, Any]:
    """Deliver every bundle once, then redeliver, then deliver again with a new id; count calls per job.

    ``config``: the text of a ``.github/prguide.yml`` the repositories have (default: none).
    """
    out: dict[str, Any] = {"first": [], "redelivery": [], "again": [], "endpoints": Counter()}
    async with Stack(bundles, client_options=UNPACED) as stack:
        if config is not None:
            for repository in {repo for repo, _ in stack.pulls}:
                stack.sandbox.set_file(repository, CONFIG_PATH, config)
        ids = {}
        for repository, bundle in stack.pulls:
            number = int(bundle["pull"]["number"])
            ids[number] = str(uuid.uuid4())
            before = len(stack.requests)
            status = await stack.deliver(stack.body(repository, bundle), ids[number])
            await stack.wait_idle()
            calls = stack.requests[before:]
            out["endpoints"].update(endpoint(r) for r in calls if classify(r) == "guide")
            out["first"].append((number, len(bundle["files"]), status, calls))
        for repository, bundle in stack.pulls:
            number = int(bundle["pull"]["number"])
            before = len(stack.requests)
            status = await stack.deliver(stack.body(repository, bundle), ids[number])
            await stack.wait_idle()
            out["redelivery"].append((number, len(bundle["files"]), status, stack.requests[before:]))
        for repository, bundle in stack.pulls:
            number = int(bundle["pull"]["number"])
            before = len(stack.requests)
            status = await stack.deliver(stack.body(repository, bundle))
            await stack.wait_idle()
            out["again"].append((number, len(bundle["files"]), status, stack.requests[before:]))
        out["comments"] = sum(len(v) for v in stack.comment_times.values())
    return out


async def naive_flow(bundles: Sequence[Mapping[str, Any]]) -> list[tuple[int, int, int, list[dict[str, Any]]]]:
    """The same guides built the obvious way on a fresh sandbox; calls per guide."""
    from bot.app.auth import AppAuth
    from bot.app.fetch import fetch_file, fetch_snapshot
    from bot.app.github import GitHubClient
    from bot.app.publish import publish_guide
    from bot.engine.build import build_guide
    from bot.engine.repo_config import load_repo_config
    from bot.engine.rules import load_rules

    out = []
    async with Stack(bundles, client_options=UNPACED) as stack:
        rules = load_rules()
        for repository, bundle in stack.pulls:
            number = int(bundle["pull"]["number"])
            before = len(stack.requests)
            auth = AppAuth(str(APP_ID), stack.key_pem, api_url=stack.sandbox_url, session=stack.http)
            token = await auth.installation_token(INSTALLATION_ID)
            bot_login = await auth.bot_login()

            async def authorization(token: str = token) -> str:
                return f"token {token}"

            client = GitHubClient(stack.http, authorization=authorization, api_url=stack.sandbox_url)
            snapshot = await fetch_snapshot(client, repository, number)
            text = await fetch_file(client, repository, ".github/prguide.yml")
            config = load_repo_config(text, ".github/prguide.yml")
            guide = build_guide(snapshot, rules, lang=config.lang or "en")
            await publish_guide(client, repository, number, guide, bot_login=bot_login)
            out.append((number, len(bundle["files"]), 200, stack.requests[before:]))
    return out


def summarise(jobs: Sequence[tuple[int, int, int, list[dict[str, Any]]]]) -> dict[str, Any]:
    """Per-job counts: all calls, per-guide calls, calls that count against the rate limit."""
    rows = []
    for number, files, status, calls in jobs:
        guide = [r for r in calls if classify(r) == "guide"]
        rows.append({
            "number": number, "files": files, "status": status, "all": len(calls), "guide": len(guide),
            "limited": sum(1 for r in guide if r["status"] != 304), "not_modified": sum(1 for r in calls if r["status"] == 304),
            "once": sum(1 for r in calls if classify(r) == "once per process"),
            "look": sum(1 for r in calls if classify(r) == "label look"),
        })  # fmt: skip
    return {"rows": rows}


def bucket_rows(label: str, summary: dict[str, Any], *, target: bool) -> list[list[Any]]:
    """One table row per files bucket (<= 100, 101-200, ...)."""
    by: dict[int, list[dict[str, Any]]] = {}
    for row in summary["rows"]:
        by.setdefault(max(0, math.ceil(row["files"] / 100) - 1), []).append(row)
    out = []
    for b in sorted(by):
        rows = by[b]
        files = f"{b * 100 + (1 if b else 0)}-{(b + 1) * 100}"
        limit = budget((b + 1) * 100)
        # Judged on the median: the first guide of a repository also fills the conditional-request cache.
        typical = median(r["limited"] for r in rows)
        out.append([
            label, files, len(rows), median(r["guide"] for r in rows), max(r["guide"] for r in rows),
            typical, max(r["limited"] for r in rows), sum(r["not_modified"] for r in rows),
            sum(r["once"] for r in rows), sum(r["look"] for r in rows),
            f"median <= {limit}" if target else "", verdict(typical <= limit) if target else "",
        ])  # fmt: skip
    return out


async def run(args: argparse.Namespace) -> int:
    """Run prguide's flow (without and with a config file) and the naive one; print the tables; returns 0."""
    bundles = load_bundles(args.corpus)
    if args.quick:
        bundles = sorted(bundles, key=lambda b: len(b["files"]))[::6]
    print(header("prguide GitHub API calls per guide"))
    durations = []
    for _ in range(max(1, args.rounds)):
        started = time.perf_counter()
        ours = await prguide_flow(bundles)
        durations.append(time.perf_counter() - started)
    with_config = await prguide_flow(bundles, config=CONFIG_TEXT)
    naive = await naive_flow(bundles)

    first, again, redelivery, plain = summarise(ours["first"]), summarise(ours["again"]), summarise(ours["redelivery"]), summarise(naive)
    heads = ["flow", "files", "PRs", "guide calls median", "max", "rate-limited median", "max", "304s", "token+app", "label looks", "target", "verdict"]
    rows = (
        bucket_rows("prguide, first delivery, no config file", first, target=True)
        + bucket_rows(f"prguide, first delivery, repository has {CONFIG_PATH}", summarise(with_config["first"]), target=True)
        + bucket_rows("prguide, new delivery of a guided PR", again, target=False)
        + bucket_rows("naive: fetch everything", plain, target=False)
    )
    print(f"{len(bundles)} pull requests from {args.corpus}; a PR's calls are the sandbox requests made while its job ran; "
          f"'rate-limited' leaves out 304 answers; median prguide run {median(durations):.1f} s\n")  # fmt: skip
    print(table(heads, rows))
    worst_redelivery = max(r["all"] for r in redelivery["rows"])
    statuses = Counter(r["status"] for r in redelivery["rows"])
    print(f"\nredelivery (same X-GitHub-Delivery): at most {worst_redelivery} call(s) per delivery over {len(redelivery['rows'])} redeliveries, "
          f"answers {dict(statuses)} (target <= {TARGET_REDELIVERY}: {verdict(worst_redelivery <= TARGET_REDELIVERY)})")  # fmt: skip
    total_ours = sum(r["all"] for r in first["rows"])
    total_naive = sum(r["all"] for r in plain["rows"])
    print(f"all requests for the {len(bundles)} first guides: prguide {total_ours}, naive {total_naive} ({total_naive / total_ours:.1f}x); comments posted by prguide: {ours['comments']}")
    print("\nprguide's per-guide calls by endpoint (first deliveries):\n")
    print(table(["endpoint", "calls", "per guide"], [[e, n, n / len(bundles)] for e, n in ours["endpoints"].most_common()]))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Parse options and run."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--corpus", type=Path, default=CORPUS, help=f"folder of bundle *.json files (default {CORPUS})")
    parser.add_argument("--rounds", type=int, default=1, help="repeat prguide's run this many times (counts are exact; default 1)")
    parser.add_argument("--quick", action="store_true", help="every sixth pull request only")
    args = parser.parse_args(argv)
    return asyncio.run(run(args))


if __name__ == "__main__":
    sys.exit(main())
