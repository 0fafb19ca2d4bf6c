"""Change coupling precision: is "`a` usually changes with `b`; this PR did not touch it" right?

Replays a repository's merged history: for each of the last ``--last`` (200) merged pull
requests, the usual partners (:func:`bot.engine.history.coupling.usual_partners`, at most two
per guide, as the guide shows them) are predicted from the pull requests merged before it
only. A named partner counts as **right** when the repository changed it soon after: in one
of the next ``--next`` (5) merged pull requests, or in the same author's next merged pull
request within ``--days`` (14) days (their own follow-up, however many others merged in
between). Precision = right / named. Each row also gives the **base rate**: how often the
same partner files change within the next ``--next`` pull requests of a random point of the
replayed stretch, so a row whose precision only reflects busy files shows it.

    python bench/change_coupling.py PATH/TO/CLONE [--last 200] [--next 5] [--days 14] [--json]

The guide makes the same replay of each repository's own history
(:func:`bot.engine.history.coupling.calibrate`) and shows the line only with thresholds
whose precision there is at least 0.6 over at least 20 lines; the last line here says
which it chose for this clone, if any. Reads the clone with git (``bot.sources.gitfiles``);
needs no network.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # runnable from a checkout without installing prguide
    sys.path.insert(0, str(ROOT))

from bot.engine.history.coupling import (  # noqa: E402
    GRID,
    MIN_LINES,
    TARGET_PRECISION,
    Horizon,
    MergedChange,
    Score,
    calibrate,
    replay,
)


def table(scores: Sequence[Score]) -> str:
    """The Markdown table of ``scores``."""
    lines = [
        "| support (min changes) | confidence (min share) | tests/docs partners | lines | guides with a line | right | precision | base rate |",
        "|---:|---:|:---|---:|---:|---:|---:|---:|",
    ]
    for s in scores:
        t = s.thresholds
        lines.append(
            f"| {t.min_changes} | {t.min_share:.1f} | {'left out' if t.skip_kinds else 'kept'} | {s.named} | "
            f"{s.guides} of {s.replayed} | {s.right} | {s.precision:.2f} | {s.base:.2f} |"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Print the precision table for a clone (see the module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("clone", type=Path, help="a local clone of the repository (its merged history is replayed)")
    parser.add_argument("--last", type=int, default=200, help="how many merged pull requests to replay (default 200)")
    parser.add_argument("--next", type=int, default=5, help="a partner changed within this many next merged PRs is right (default 5)")
    parser.add_argument("--days", type=float, default=14.0, help="or in the author's next merged PR within this many days (default 14)")
    parser.add_argument("--json", action="store_true", help="print the rows as JSON")
    args = parser.parse_args(argv)
    from bot.sources.gitfiles import merged_changes
    from bot.sources.gitrun import GitRepositoryError

    try:
        history = merged_changes(args.clone, last=None)
    except (GitRepositoryError, ValueError) as exc:
        print(f"change_coupling: {exc}", file=sys.stderr)
        return 1
    if len(history) < 2:
        print(f"change_coupling: {args.clone}: fewer than two merged pull requests found", file=sys.stderr)
        return 1
    horizon = Horizon(prs=args.next, days=args.days)
    grid = list(GRID) + [replace(t, skip_kinds=()) for t in GRID]
    rows = replay(history, grid[: len(GRID)], last=args.last, horizon=horizon, base_rate=True)
    rows += replay(history, grid[len(GRID) :], last=args.last, horizon=horizon, base_rate=True)
    if args.json:
        print(json.dumps([{"min_changes": s.thresholds.min_changes, "min_share": s.thresholds.min_share,
                           "skip_kinds": list(s.thresholds.skip_kinds), "named": s.named, "right": s.right,
                           "guides": s.guides, "replayed": s.replayed, "precision": round(s.precision, 3),
                           "base_rate": round(s.base, 3)} for s in rows], indent=2))  # fmt: skip
        return 0
    shown = " ".join(sys.argv[1:] if argv is None else argv)
    first = GRID[0]
    print(f"command: python bench/change_coupling.py {shown}")
    print(f"history: {len(history)} merged pull requests (#{history[0].number} .. #{history[-1].number}, "
          f"{history[0].merged_at[:10]} .. {history[-1].merged_at[:10]}); replayed: the last {rows[0].replayed} "
          f"before the newest {horizon.prs}")  # fmt: skip
    print(f"right: the partner changed in one of the next {horizon.prs} merged PRs, or in the author's next merged PR "
          f"within {horizon.days:g} days; base rate: how often the same files changed so soon after a random replayed PR")  # fmt: skip
    print(f"each file's last {first.window} changes; PRs with more than {first.max_files} files left out; "
          "at most 2 lines per guide\n")  # fmt: skip
    print(table(rows))
    chosen = calibrate(history)
    if chosen.thresholds is None:
        best = chosen.score
        said = f"best {best.precision:.2f} over {best.named} lines" if best else "no line named"
        print(f"\nchosen by the guide's own replay (the last 200): none reaches precision >= {TARGET_PRECISION} "
              f"over >= {MIN_LINES} lines ({said}): the guide names no partner for this repository")  # fmt: skip
    else:
        t, s = chosen.thresholds, chosen.score
        print(f"\nchosen by the guide's own replay (the last 200): support {t.min_changes}, confidence "
              f"{t.min_share:.1f}: precision {s.precision:.2f} over {s.named} lines")  # fmt: skip
    print("\nthe loosest thresholds' lines judged by other ideas of 'soon after':\n")
    print("| right when the partner changed in | precision | base rate |\n|:---|---:|---:|")
    for what, score in _other_horizons(history, args.last, args.next, args.days):
        print(f"| {what} | {score.precision:.2f} ({score.right} of {score.named}) | {score.base:.2f} |")
    return 0


def _other_horizons(history: Sequence[MergedChange], last: int, prs: int, days: float) -> list[tuple[str, Score]]:
    """The loosest thresholds' lines scored with narrower and wider horizons than the chosen one."""
    out = []
    for h in (Horizon(1, days, author=False), Horizon(prs, days, author=False), Horizon(prs, days),
              Horizon(2 * prs, days, author=False)):  # fmt: skip
        (score,) = replay(history, [GRID[0]], last=last, horizon=h, base_rate=True)
        what = f"the next {h.prs} merged PR{'s' if h.prs != 1 else ''}"
        out.append((what + (f", or the author's next within {days:g} days" if h.author else ""), score))
    out.append((f"the next {days:g} days (any author)", _days_only(history, last, days, prs)))
    return out


def _days_only(history: Sequence[MergedChange], last: int, days: float, skip: int) -> Score:
    """The loosest thresholds judged by "changed within ``days`` days" (any author), on the same stretch."""
    from bot.engine.history import coupling

    def within(i: int, path: str) -> bool:
        start = coupling.utc_moment(history[i].merged_at)
        for later in history[i + 1 :]:
            when = coupling.utc_moment(later.merged_at)
            if start is None or when is None or when - start > timedelta(days=days):
                return False
            if path in later.paths:
                return True
        return False

    end = max(0, len(history) - skip)
    stretch = range(max(1, end - last), end)
    named = right = 0
    base = 0.0
    for i in stretch:
        change = history[i]
        for p in coupling.usual_partners((*change.paths, *change.gone), history[:i],
                                         focal=[x for x in change.paths if x not in change.gone], thresholds=GRID[0]):  # fmt: skip
            named += 1
            right += within(i, p.partner)
            base += sum(within(j, p.partner) for j in stretch) / len(stretch)
    return Score(GRID[0], named, right, 0, len(stretch), base / named if named else 0.0)


if __name__ == "__main__":
    sys.exit(main())
