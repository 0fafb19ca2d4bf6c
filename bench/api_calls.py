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

Merges rarely arrive seconds apart, and prguide remembers some answers only for a while
(a repository without ``.github/prguide.yml``: ``MISSING_CONFIG_TTL``, a week; an
installation token: about an hour), so the first deliveries are also sent with the app's
clock moved forward by ``--spacing`` seconds before each one (default 0, 60, 240, 360,
600, 3,600 and 86,400: back to back, a minute, four, six and ten minutes, an hour and a
day apart), without and with a config file. (That memory starts when a 404 is stored,
and a hit does not extend it.) The sandbox keeps real time; only what the app remembers ages.

Target (issue 7): <= 6 calls for a merged PR with <= 100 files (files, reviews, review
comments, find our comment, write comment, write labels), +1 per extra 100 files, at any
spacing of merges: the verdict is on the worst spacing.
Calls answered ``304 Not Modified`` do not count against GitHub's primary rate limit
("Best practices for using the REST API"); they are shown apart. Calls made once per
process (``GET /app``), once per installation and hour (the installation token: GitHub's
tokens expire after an hour) or once per label and repository (giving a new label its
colour) are also shown apart from the per-guide count, the tokens per pull request in
a column of their own.
The blame of the lines a pull request changes is one GraphQL request (``POST /graphql``,
a rate limit of its own) per five traced files, ten at most: shown in columns of their
own, not in the REST count, with a verdict of <= 3 for pull requests under 20 changed
source files. (The sandbox serves bundles here, so the blames find no lines; the number
of requests does not depend on what they find.)
Counts do not depend on timing, so one round is exact; the run is repeated
``--rounds`` times only to report a median duration.

    python bench/api_calls.py [--quick] [--corpus DIR] [--spacing S,S,...]
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

from common import (
    APP_ID,
    CORPUS,
    INSTALLATION_ID,
    Stack,
    header,
    load_bundles,
    median,
    shown,
    table,
    verdict,
    verdict_line,
)

TARGET_BASE = 6
CONFIG_PATH = ".github/prguide.yml"
#: A repository config file that changes nothing (the language prguide uses anyway).
CONFIG_TEXT = "lang: en\n"
#: No pacing of writes: counts do not depend on it, and the run stays short.
UNPACED = {"write_rate": 1000.0, "write_burst": 1000.0, "hourly_rate": None}
TARGET_REDELIVERY = 1
#: GraphQL blame requests a merged pull request under BLAME_FILES changed source files may cost.
TARGET_BLAME = 3
BLAME_FILES = 20
#: Seconds between merges simulated by default: back to back, a minute, four, six and ten
#: minutes (around what was once a five-minute missing-config memory), an hour (a token's
#: life), a day.
SPACINGS = (0.0, 60.0, 240.0, 360.0, 600.0, 3600.0, 86400.0)


def budget(files: int) -> int:
    """The issue's call budget for a merged pull request with ``files`` changed files."""
    return TARGET_BASE + max(0, math.ceil((files - 100) / 100))


def classify(request: Mapping[str, Any]) -> str:
    """What a sandbox request was for: ``token`` (installation token), ``app`` (``GET /app``), ``label look``,
    ``blame`` (``POST /graphql``, who wrote the lines the pull request changes; GraphQL's own rate limit) or ``guide``."""
    path = str(request.get("path", "")).split("?", 1)[0]
    if path.endswith("/access_tokens"):
        return "token"
    if path == "/app":
        return "app"
    if path == "/graphql":
        return "blame"
    if request.get("method") == "PATCH" and "/labels/" in path and "/issues/" not in path:
        return "label look"
    return "guide"


def endpoint(request: Mapping[str, Any]) -> str:
    """``METHOD /path/template`` of a sandbox request."""
    from bot.app.github import path_template

    return f"{request['method']} {path_template('http://x' + str(request['path']), 'http://x')}"


async def prguide_flow(
    bundles: Sequence[Mapping[str, Any]], *, config: str | None = None, spacing: float = 0.0, again: bool = True
) -> dict[str, Any]:
    """Deliver every bundle once, then (with ``again``) redeliver, then deliver again with a new id; calls per job.

    ``config``: the text of a ``.github/prguide.yml`` the repositories have (default: none).
    ``spacing``: seconds the app's clock moves forward before each first delivery, as if
    the merges were that far apart.
    """
    out: dict[str, Any] = {"first": [], "redelivery": [], "again": [], "endpoints": Counter()}
    offset = 0.0

    def clock() -> float:
        return time.time() + offset

    async with Stack(bundles, client_options=UNPACED, clock=clock) as stack:
        if config is not None:
            for repository in {repo for repo, _ in stack.pulls}:
                stack.sandbox.set_file(repository, CONFIG_PATH, config)
        ids = {}
        for n, (repository, bundle) in enumerate(stack.pulls):
            if n:
                offset += spacing
            number = int(bundle["pull"]["number"])
            ids[number] = str(uuid.uuid4())
            before = len(stack.requests)
            status = await stack.deliver(stack.body(repository, bundle), ids[number])
            await stack.wait_idle()
            calls = stack.requests[before:]
            out["endpoints"].update(endpoint(r) for r in calls if classify(r) == "guide")
            out["first"].append((number, len(bundle["files"]), status, calls))
        if again:
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
            "token": sum(1 for r in calls if classify(r) == "token"), "app": sum(1 for r in calls if classify(r) == "app"),
            "look": sum(1 for r in calls if classify(r) == "label look"),
            "blame": sum(1 for r in calls if classify(r) == "blame"),
        })  # fmt: skip
    return {"rows": rows}


def bucket_rows(label: str, summary: dict[str, Any], *, target: bool, spacing: str = "0 s") -> list[list[Any]]:
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
            label, spacing, files, len(rows), median(r["guide"] for r in rows), max(r["guide"] for r in rows),
            typical, max(r["limited"] for r in rows), sum(r["not_modified"] for r in rows),
            sum(r["token"] for r in rows) / len(rows), sum(r["app"] for r in rows), sum(r["look"] for r in rows),
            median(r["blame"] for r in rows), max(r["blame"] for r in rows),
            f"median <= {limit}" if target else "", verdict(typical <= limit) if target else "",
        ])  # fmt: skip
    return out


def worst(summaries: Sequence[tuple[str, str, dict[str, Any]]]) -> tuple[bool, str]:
    """Whether every (flow, spacing, bucket) median meets its budget, and the worst excess in words."""
    ok, worst_over, where = True, -math.inf, ""
    for label, spacing, summary in summaries:
        for row in bucket_rows(label, summary, target=True, spacing=spacing):
            over = row[6] - budget(int(row[2].split("-")[1]))
            if over > worst_over:
                worst_over, where = over, f"{row[6]:g} calls for {row[2]} files ({label}, merges {spacing} apart)"
            ok = ok and over <= 0
    return ok, where


def blame_line(bundles: Sequence[Mapping[str, Any]], first: dict[str, Any]) -> str:
    """The verdict on the GraphQL blame requests (``POST /graphql``) of pull requests under
    :data:`BLAME_FILES` changed source files: at most :data:`TARGET_BLAME` each."""
    from bot.engine.analysis.kinds import kind_of

    sources = {int(b["pull"]["number"]): sum(1 for f in b["files"] if kind_of(f["filename"], status=f.get("status") or "modified", patch=f.get("patch")) == "source")
               for b in bundles}  # fmt: skip
    small = [r for r in first["rows"] if sources.get(r["number"], 0) < BLAME_FILES]
    asked = [r for r in first["rows"] if r["blame"]]
    worst_small = max((r["blame"] for r in small), default=0)
    spread = Counter(r["blame"] for r in first["rows"])
    return verdict_line(
        f"blame (GraphQL) requests per merged PR under {BLAME_FILES} source files <= {TARGET_BLAME}",
        f"at most {worst_small} over {len(small)} such PRs; {len(asked)} of {len(first['rows'])} PRs asked any "
        f"(requests per PR: {dict(sorted(spread.items()))}); REST calls are counted without them",
        worst_small <= TARGET_BLAME,
    )


def spacing_label(seconds: float) -> str:
    """``90 s``, ``6 min``, ``1 h``, ``1 d``."""
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size and seconds % size == 0:
            return f"{seconds / size:g} {unit}"
    return f"{seconds:g} s"


async def run(args: argparse.Namespace) -> int:
    """Run prguide's flow (without and with a config file, at each spacing) and the naive one; print the tables; returns 0."""
    bundles = load_bundles(args.corpus)
    if args.quick:
        bundles = sorted(bundles, key=lambda b: len(b["files"]))[::6]
    print(header("prguide GitHub API calls per guide"))
    durations = []
    for _ in range(max(1, args.rounds)):
        started = time.perf_counter()
        ours = await prguide_flow(bundles)
        durations.append(time.perf_counter() - started)
    spaced: list[tuple[str, str, dict[str, Any]]] = []
    for config in (None, CONFIG_TEXT):
        label = "prguide, no config file" if config is None else f"prguide, repository has {CONFIG_PATH}"
        for spacing in args.spacing:
            if spacing == 0 and config is None:
                flow = ours  # the run above
            else:
                flow = await prguide_flow(bundles, config=config, spacing=spacing, again=False)
            spaced.append((label, spacing_label(spacing), summarise(flow["first"])))
    naive = await naive_flow(bundles)

    again, redelivery, plain = summarise(ours["again"]), summarise(ours["redelivery"]), summarise(naive)
    heads = ["flow", "merges apart", "files", "PRs", "guide calls median", "max", "rate-limited median", "max", "304s",
             "tokens per PR", "GET /app", "label looks", "blame queries median", "max", "target", "verdict"]  # fmt: skip
    rows = [row for label, spacing, summary in spaced for row in bucket_rows(label, summary, target=True, spacing=spacing)]
    rows += bucket_rows("prguide, new delivery of a guided PR", again, target=False) + bucket_rows("naive: fetch everything", plain, target=False)
    print(f"{len(bundles)} pull requests from {shown(args.corpus)}; a PR's calls are the sandbox requests made while its job ran; "
          f"'rate-limited' leaves out 304 answers; 'merges apart': how far the app's clock moved before each first delivery; "
          f"median prguide run {median(durations):.1f} s\n")  # fmt: skip
    print(table(heads, rows))
    ok, where = worst(spaced)
    print("\n" + verdict_line(f"<= {TARGET_BASE} calls per merged PR (+1 per 100 files over 100; rate-limited, median per size, "
                              f"installation token apart) at any spacing of merges ({', '.join(spacing_label(s) for s in args.spacing)})",
                              f"worst {where}", ok))  # fmt: skip
    worst_redelivery = max(r["all"] for r in redelivery["rows"])
    statuses = Counter(r["status"] for r in redelivery["rows"])
    print(verdict_line(f"redelivery (same X-GitHub-Delivery) <= {TARGET_REDELIVERY} call",
                       f"at most {worst_redelivery} over {len(redelivery['rows'])} redeliveries, answers {dict(statuses)}",
                       worst_redelivery <= TARGET_REDELIVERY))  # fmt: skip
    first = summarise(ours["first"])
    total_ours = sum(r["all"] for r in first["rows"])
    total_naive = sum(r["all"] for r in plain["rows"])
    print(f"\nall requests for the {len(bundles)} first guides (back to back): prguide {total_ours}, naive {total_naive} "
          f"({total_naive / total_ours:.1f}x); comments posted by prguide: {ours['comments']}")  # fmt: skip
    print(blame_line(bundles, first))
    print("\nprguide's per-guide calls by endpoint (first deliveries, back to back, no config file):\n")
    print(table(["endpoint", "calls", "per guide"], [[e, n, n / len(bundles)] for e, n in ours["endpoints"].most_common()]))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Parse options and run."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--corpus", type=Path, default=CORPUS, help=f"folder of bundle *.json files (default {CORPUS})")
    parser.add_argument("--rounds", type=int, default=1, help="repeat prguide's run this many times (counts are exact; default 1)")
    parser.add_argument("--quick", action="store_true", help="every sixth pull request only")
    parser.add_argument("--spacing", type=lambda text: [float(x) for x in text.split(",")], default=list(SPACINGS),
                        help="seconds between merges to simulate, comma-separated (default " + ",".join(f"{s:g}" for s in SPACINGS) + ")")  # fmt: skip
    args = parser.parse_args(argv)
    if 0 not in args.spacing:
        args.spacing.insert(0, 0.0)
    return asyncio.run(run(args))


if __name__ == "__main__":
    sys.exit(main())
