"""The benchmarks' own machinery measures what it says: stage times add up inside one build,
an injected clock ages what the app remembers, verdict lines reach the results summary."""

from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT / "bench") not in sys.path:
    sys.path.insert(0, str(ROOT / "bench"))

import common  # noqa: E402
import guide_speed  # noqa: E402
import report  # noqa: E402


def test_stage_clock_times_inside_the_build_and_changes_nothing(monkeypatch):
    from bot.engine import build
    from bot.engine.rules import load_rules
    from bot.engine.snapshot import PullRequestSnapshot

    files = guide_speed.synthetic_files(60)
    snapshot = PullRequestSnapshot.from_github(guide_speed.synthetic_pull(files), files, [], [], repository="bench/verl")
    rules = load_rules()
    plain = build.build_guide(snapshot, rules)
    for attr in guide_speed.STAGES:  # the clock patches the module: undo it after the test
        if hasattr(build, attr):
            monkeypatch.setattr(build, attr, getattr(build, attr))
    clock = guide_speed.StageClock()
    assert clock.missing == []  # every stage is still called where the bench looks for it
    timed_rules = clock.rules(rules)
    started = time.perf_counter()
    timed = build.build_guide(snapshot, timed_rules)
    total = time.perf_counter() - started
    assert timed.markdown == plain.markdown and timed.labels == plain.labels
    stages = set(guide_speed.STAGES.values())
    assert set(clock.spent) == stages  # every stage ran, the collector's held-back pass included
    assert 0 < sum(clock.spent.values()) <= total  # nested stages are not counted twice


async def test_a_stack_clock_ages_the_missing_config_memory():
    from bot.app.routing import MISSING_CONFIG_TTL

    bundles = [_bundle(1), _bundle(2), _bundle(3)]
    offset = 0.0

    def clock() -> float:
        return time.time() + offset  # only ever ahead of real time, as the Stack needs

    async with common.Stack(bundles, clock=clock, client_options={"write_rate": 1e3, "write_burst": 1e3, "hourly_rate": None}) as stack:
        reads = []
        for step, (repository, bundle) in zip((0.0, MISSING_CONFIG_TTL - 60, MISSING_CONFIG_TTL + 1), stack.pulls, strict=True):
            offset += step
            before = len(stack.requests)
            assert await stack.deliver(stack.body(repository, bundle)) == 202
            await stack.wait_idle()
            reads.append(sum(1 for r in stack.requests[before:] if "/contents/" in r["path"]))
    # The first guide learns there is no config file; the second, 4 minutes later, remembers;
    # the third comes more than five minutes after the 404 was stored and asks again.
    assert reads == [1, 0, 1]


def test_verdict_lines_reach_the_summary():
    line = common.verdict_line("corpus >= 200 guides/s on one core (first pass, CPU time)", "150 PRs/s (wall 90)", False)
    body = (
        "## prguide engine speed\n\nmachine: 2 CPU(s), AMD EPYC, Python 3.11.7, load average 1.00 1.00 1.00, 2026-12-02 06:00 UTC\n"
        "host reference: calibration loop (bench/common.py calibration_loop) 55.0 ms (best of 5; CPU 48.0 ms): divide ...\n\n"
        + line + "\n"
    )
    assert report.verdicts("guide_speed", body) == [[
        "guide_speed", "corpus >= 200 guides/s on one core (first pass, CPU time)", "150 PRs/s (wall 90)", "MISSED",
        "2026-12-02 06:00 UTC", "55.0 ms (CPU 48.0 ms)",
    ]]  # fmt: skip
    page = report.render({"guide_speed": body})
    assert report.sections(page)["guide_speed"] == body  # a section not run next time is kept as it was
    assert "| guide_speed | corpus >= 200 guides/s" in page


def _bundle(number: int) -> dict:
    """A small merged pull request of the sandbox's bundle shape."""
    patch = "@@ -1,1 +1,2 @@\n def run():\n+    return 1"
    return {
        "pull": {
            "number": number, "title": f"fix: run returns ({number})", "body": "", "state": "closed", "merged": True,
            "merged_at": "2026-01-02T03:04:05Z", "user": {"login": "dev", "type": "User"}, "merged_by": {"login": "lead", "type": "User"},
            "base": {"ref": "main", "repo": {"full_name": "bench/tools"}}, "head": {"ref": f"b{number}"}, "labels": [],
            "changed_files": 1, "additions": 1, "deletions": 0, "commits": 1,
        },
        "files": [{"sha": "0" * 40, "filename": f"src/m{number}.py", "status": "modified", "additions": 1, "deletions": 0,
                   "changes": 1, "patch": patch}],
        "reviews": [], "review_comments": [],
    }  # fmt: skip
