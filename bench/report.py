"""Write ``bench/RESULTS.md`` from the benchmarks' own output.

Runs each named benchmark (default: all of :data:`BENCHES`) as ``python bench/NAME.py``
and puts what it printed, headings moved one level down, into the benchmark's section of
``RESULTS.md``; sections of benchmarks not run this time are kept as they were, so heavy
benchmarks can be run one at a time. The summary at the top gathers every section's
``verdict:`` lines (see :func:`common.verdict_line`) with the date and the host reference
figure the section was measured with (a fixed pure-Python loop's time: divide by it to
compare hosts). Nothing in the file is typed by hand; earlier runs and their analysis are
in ``bench/HISTORY.md``.

    python bench/report.py [NAME ...] [--quick] [--out FILE] [-- ARGS for a single benchmark]
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from common import ROOT, table

BENCH = Path(__file__).resolve().parent
LOGS = BENCH / ".cache" / "report"
#: The benchmarks the report covers, in the order of its sections, with their subject.
BENCHES = {
    "guide_speed": "engine speed",
    "api_calls": "GitHub API calls per guide",
    "memory": "memory of prguide serve",
    "replicas": "replicas: SQLite and PostgreSQL",
    "tagview_speed": "tag view pages by store size",
    "history_speed": "prguide history next to git log -p",
    "merge_latency": "merge-to-comment latency",
    "webhook_ack": "webhook acknowledgement",
    "backlog": "throughput under a backlog",
    "pg_loop": "PostgreSQL mode: event-loop stall, next_due",
    "narrator": "narrator: tokens and validator cost",
    "history_links": "history links: \"fixes code from #N\"",
}
_SECTION = re.compile(r"<!-- bench: (\w+) -->\n(.*?)<!-- /bench: \1 -->\n", re.DOTALL)


def sections(text: str) -> dict[str, str]:
    """The generated sections of an earlier ``RESULTS.md``: name -> body."""
    return {m.group(1): m.group(2) for m in _SECTION.finditer(text)}


def run_bench(name: str, extra: Sequence[str]) -> str:
    """Run ``bench/NAME.py``; its section body (command, time taken, exit status, output)."""
    argv = [sys.executable, str(BENCH / f"{name}.py"), *extra]
    started = time.perf_counter()
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True)
    took = time.perf_counter() - started
    out = "\n".join("#" + line if line.startswith("#") else line for line in done.stdout.rstrip().splitlines())
    # Its stderr (progress, and a traceback if it failed) goes to a file that is not committed:
    # a traceback names paths of this machine.
    LOGS.mkdir(parents=True, exist_ok=True)
    (LOGS / f"{name}.log").write_text(done.stderr, encoding="utf-8")
    status = "" if done.returncode == 0 else f"; exit status {done.returncode}, stderr in bench/.cache/report/{name}.log"
    last = [line for line in done.stderr.strip().splitlines() if line.strip()][-1:]
    if done.returncode != 0 and last and not last[0].startswith(("round ", "running ")):
        status += f": {last[0].strip()[:200]}"
    return f"{out}\n\n(run time {took:,.0f} s{status})\n"


def verdicts(name: str, body: str) -> list[list[str]]:
    """Rows ``[benchmark, target, measured, verdict, date, host reference]`` from a section's ``verdict:`` lines."""
    date = re.search(r"machine: .*?, (\d{4}-\d\d-\d\d \d\d:\d\d UTC)", body)
    ref = re.search(r"host reference: .*? ([\d.,]+ ms) \(best of \d+; CPU ([\d.,]+ ms)\)", body)
    rows = []
    for line in body.splitlines():
        if not line.startswith("verdict: "):
            continue
        rest, outcome = line[len("verdict: ") :].rsplit(": ", 1)
        target, _, measured = rest.partition(": ")
        rows.append([name, target, measured, outcome, date.group(1) if date else "", f"{ref.group(1)} (CPU {ref.group(2)})" if ref else ""])
    return rows


def render(found: dict[str, str]) -> str:
    """The whole ``RESULTS.md``."""
    summary = [row for name in BENCHES if name in found for row in verdicts(name, found[name])]
    parts = [
        "# Benchmark results\n",
        "Written by `python bench/report.py` from the benchmarks' own output; do not edit by hand (earlier runs,",
        "with their analysis, are in [HISTORY.md](HISTORY.md)). Each section says when and on what it ran and",
        "gives the host reference: a fixed pure-Python loop's best time in that run (`bench/common.py`",
        "`calibration_loop`). Divide a time by it to compare runs on different hosts or under different load;",
        "instruction counts (valgrind's callgrind), where given, do not depend on either. The machine these ran",
        "on is shared: its load average is in each section's header.\n",
        "## Summary\n",
        table(["benchmark", "target", "measured", "verdict", "date", "host reference"], summary) if summary else "(no verdicts yet)",
        "",
    ]
    for name, subject in BENCHES.items():
        if name in found:
            parts.append(f"<!-- bench: {name} -->\n{found[name]}<!-- /bench: {name} -->\n")
        else:
            parts.append(f"<!-- bench: {name} -->\n## {subject}\n\nnot run yet: `python bench/report.py {name}`\n<!-- /bench: {name} -->\n")
    return "\n".join(parts)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the named benchmarks and rewrite the results file; returns 0."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("names", nargs="*", metavar="NAME", help=f"benchmarks to run (default all: {', '.join(BENCHES)})")
    parser.add_argument("--quick", action="store_true", help="pass --quick to each benchmark")
    parser.add_argument("--out", type=Path, default=BENCH / "RESULTS.md", help="the file to write (default bench/RESULTS.md)")
    parser.add_argument("--render-only", action="store_true", help="run nothing; rewrite the file from its sections")
    argv = list(sys.argv[1:] if argv is None else argv)
    extra: list[str] = []
    if "--" in argv:
        at = argv.index("--")
        argv, extra = argv[:at], argv[at + 1 :]
    args = parser.parse_args(argv)
    unknown = [n for n in args.names if n not in BENCHES]
    if unknown:
        parser.error(f"unknown benchmark {', '.join(unknown)}; choose from {', '.join(BENCHES)}")
    names = [] if args.render_only else (args.names or list(BENCHES))
    if extra and len(names) != 1:
        parser.error("arguments after -- go to one benchmark: name exactly one")
    found = sections(args.out.read_text(encoding="utf-8")) if args.out.exists() else {}
    for name in names:
        print(f"running bench/{name}.py ...", file=sys.stderr)
        found[name] = run_bench(name, [*extra, *(["--quick"] if args.quick else [])])
        args.out.write_text(render(found), encoding="utf-8")  # after each one: a later failure loses nothing
    args.out.write_text(render(found), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
