"""``prguide history`` next to ``git log -p`` over the same pull requests.

``prguide history --repo REPO --last N --out DIR`` (its own process, as a user runs it:
start-up, the history walk, the diffs, the guides, the files written) is timed against
``git log -p --first-parent -M`` over the same stretch of the first-parent history (from
the newest of the N pull requests back to the first commit of the oldest), the cheapest
way to read the same diffs. Each is run ``--rounds`` times; the best round of each is
compared, wall time and CPU time (user + system of the process and the git processes it
waited for). The verdict is on CPU time: on a machine shared with other work the wall
time of a run moves by 2x from one run to the next, its CPU time much less.

``prguide history`` also reads what ``git log -p`` does not: the whole first-parent
history once (its change coupling is calibrated on it: ``git log --name-status -M``) and,
to name the pull request each fixed line came from, the diffs of the 120 days before the
oldest pull request. Its fixed cost is shown apart: the interpreter's start-up alone, and
with the modules ``prguide history`` imports.

``--repo`` is a git clone (``git clone https://github.com/OWNER/NAME``; GitHub's squash
merges name their pull request as ``(#N)``); without it, a synthetic repository is
built first (``--synthetic-prs`` squash-merged pull requests of a few Python and
Markdown files each). ``--baseline REV`` also times the code of git revision ``REV`` of
this checkout (its ``bot`` and ``config`` folders exported to a temporary folder), in
the same run, for a before/after. Target: ``prguide history`` within 4x of ``git log -p``.

    python bench/history_speed.py [--quick] [--repo PATH] [--last N,...] [--rounds R] [--baseline REV] [--synthetic-prs N]
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from common import ROOT, export_revision, header, shown, table, verdict_line

TARGET = 4.0


def run_timed(argv: list[str], *, cwd: Path | None = None, env: dict[str, str] | None = None) -> tuple[float, float]:
    """Run ``argv`` to the end (output discarded); ``(wall seconds, CPU seconds of it and the children it waited for)``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv[:4])}...: exit {done.returncode}: {done.stderr.decode(errors='replace').strip()[-1500:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def synthetic_repository(where: Path, prs: int, seed: int = 7) -> Path:
    """A git repository of ``prs`` squash-merged pull requests (``subject (#N)``), each editing 1-10 places in 1-12 files."""
    rnd = random.Random(seed)
    where.mkdir(parents=True)
    env = {**os.environ, "GIT_AUTHOR_NAME": "dev", "GIT_AUTHOR_EMAIL": "dev@example.com",
           "GIT_COMMITTER_NAME": "dev", "GIT_COMMITTER_EMAIL": "dev@example.com"}  # fmt: skip
    subprocess.run(["git", "init", "-q", "-b", "main", str(where)], check=True, env=env)
    modules = [f"pkg/{area}/{name}.py" for area in ("rollout", "trainer", "workers", "utils") for name in ("core", "io", "config", "step")]
    files: dict[str, list[str]] = {m: [f"def {Path(m).stem}_{i}(x):\n    return x + {i}\n" for i in range(300)] for m in modules}
    files["docs/guide.md"] = [f"## Section {i}\n\nSome text about part {i}.\n" for i in range(300)]
    stream = []
    for number in range(1, prs + 1):
        touched = rnd.sample(sorted(files), rnd.randint(1, 12))
        for path in touched:
            blocks = files[path]
            for _ in range(rnd.randint(1, 10)):
                at = rnd.randrange(len(blocks))
                if path.endswith(".py"):
                    stem = Path(path).stem
                    blocks[at] = f"def {stem}_{at}(x, scale={number}):\n    y = x * scale\n    return y + {at}  # pr {number}\n"
                else:
                    blocks[at] = f"## Section {at}\n\nRewritten in pull request {number}.\n"
        when = 1_700_000_000 + number * 3600
        subject = f"[{rnd.choice(['rollout', 'trainer', 'ci', 'docs'])}] {rnd.choice(['fix', 'feat', 'refactor'])}: change {number} (#{number})"
        stream.append(f"commit refs/heads/main\ncommitter dev <dev@example.com> {when} +0000\n")
        message = f"{subject}\n\nWhat this pull request does, {number}.\n"
        stream.append(f"data {len(message.encode())}\n{message}\n")
        for path in touched:
            content = "\n".join(files[path])
            stream.append(f"M 100644 inline {path}\ndata {len(content.encode())}\n{content}\n")
        stream.append("\n")
    subprocess.run(["git", "-C", str(where), "fast-import", "--quiet"], input="".join(stream).encode(), check=True, env=env)
    subprocess.run(["git", "-C", str(where), "checkout", "-q", "main"], check=True)
    return where


def commits_spanned(repo: Path, last: int) -> int:
    """First-parent commits from the tip back to the first commit of the ``last``-th newest pull request."""
    from bot.sources.gitpulls import HistoryWalk, find_merged
    from bot.sources.gitrun import open_repository, resolve_commit

    where = open_repository(repo)
    merged = list(find_merged(where, resolve_commit(where, "HEAD"), HistoryWalk("HEAD"), last))
    if not merged:
        raise SystemExit(f"{repo}: no merged pull requests found")
    oldest = merged[-1].commits[0].sha
    listed = subprocess.run(["git", "-C", str(repo), "rev-list", "--first-parent", "HEAD"], capture_output=True, text=True, check=True)
    return listed.stdout.split().index(oldest) + 1


def main(argv: list[str] | None = None) -> int:
    """Parse options, time both commands, print the table and the verdict."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", type=Path, help="a git clone (default: a synthetic repository)")
    parser.add_argument("--last", default="10,100,300", help="pull requests per run, comma-separated (default 10,100,300)")
    parser.add_argument("--rounds", type=int, default=3, help="runs of each command; the best counts (default 3)")
    parser.add_argument("--baseline", metavar="REV", help="also time git revision REV's code, for a before/after")
    parser.add_argument("--synthetic-prs", type=int, default=400, help="pull requests of the synthetic repository (default 400)")
    parser.add_argument("--quick", action="store_true", help="10 and 100 pull requests, 2 rounds")
    args = parser.parse_args(argv)
    if args.quick:
        args.last, args.rounds = "10,100", 2
    lasts = [int(x) for x in args.last.split(",")]
    print(header("prguide history next to git log -p", paths=[str(args.repo)] if args.repo else ()))
    with tempfile.TemporaryDirectory(prefix="prguide-history-") as tmp_name:
        tmp = Path(tmp_name)
        repo = args.repo.resolve() if args.repo else synthetic_repository(tmp / "repo", args.synthetic_prs)
        codes = []
        if args.baseline:
            codes.append((f"before ({args.baseline})", export_revision(args.baseline, tmp / "baseline")))
        codes.append(("after" if args.baseline else "this tree", ROOT))
        env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "", "PRGUIDE_LLM_URL": ""}
        bare = [run_timed([sys.executable, "-c", "pass"], env=env) for _ in range(args.rounds)]
        imports = "import bot.cli, bot.guide_pool, bot.sources.gitrepo, bot.sources.githistory, bot.sources.gitfiles, bot.engine.rules"
        imported = [run_timed([sys.executable, "-c", imports], cwd=codes[-1][1], env=env) for _ in range(args.rounds + 1)][1:]
        rows: list[list[Any]] = []
        worst: dict[str, float] = {}
        for last in lasts:
            spanned = commits_spanned(repo, last)
            git = [run_timed(["git", "-C", str(repo), "log", "-p", "--first-parent", "-M", f"-{spanned}"]) for _ in range(args.rounds)]
            git_wall, git_cpu = min(w for w, _ in git), min(c for _, c in git)
            for label, code in codes:
                out = tmp / "out"
                runs = []
                for _ in range(args.rounds + 1):  # the first run writes the code's bytecode caches: not counted
                    shutil.rmtree(out, ignore_errors=True)
                    runs.append(run_timed(
                        [sys.executable, "-m", "bot", "history", "--repo", str(repo), "--last", str(last), "--out", str(out),
                         "--repository", "bench/history"], cwd=code, env=env,
                    ))  # fmt: skip
                wall, cpu = min(w for w, _ in runs[1:]), min(c for _, c in runs[1:])
                rows.append([label, last, spanned, wall, cpu, git_wall, git_cpu, wall / git_wall, cpu / git_cpu])
                worst[label] = max(worst.get(label, 0.0), cpu / git_cpu)
    print(f"repository: {f'a clone ({shown(args.repo)})' if args.repo else f'synthetic, {args.synthetic_prs} squash-merged pull requests'}; "
          f"best of {args.rounds} runs each (prguide after one untimed run); CPU: user + system, git children included\n")
    print(table(["code", "PRs", "first-parent commits", "prguide wall s", "prguide CPU s", "git log -p wall s",
                 "git log -p CPU s", "x wall", "x CPU"], rows) + "\n")  # fmt: skip
    start_cpu, import_cpu = min(c for _, c in bare), min(c for _, c in imported)
    print(f"fixed cost, CPU (best of {args.rounds}): the interpreter's start-up {start_cpu:.3f} s; start-up and prguide history's "
          f"imports {import_cpu:.3f} s\n")  # fmt: skip
    final = codes[-1][0]
    print(verdict_line(f"prguide history within {TARGET:g}x of git log -p (CPU, {', '.join(map(str, lasts))} PRs)",
                       f"worst {worst[final]:.1f}x", worst[final] <= TARGET))  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
