"""How fast the guide engine is: corpus guides per second, one 3000-file PR, glob matching.

Every engine figure comes in two kinds, because the engine keeps per-word caches that a
repeat finds full:

* **first pass**: the first round in a fresh process (one per measurement, ``--rounds`` of
  them), as a server meets pull requests it has never seen;
* **repeat**: later rounds in the same processes, caches full.

Each is given as wall time, CPU time of the one thread that builds (the targets say "on
one core"; on a shared machine wall time also holds other work's turns) and, when
valgrind is installed, instructions (``valgrind --tool=callgrind`` on one more process,
split between rounds at marks: they do not move with the machine's load). The verdicts
are on the first pass's CPU time; the header's host reference (a fixed pure-Python loop)
lets runs on different hosts be compared, and the instructions divided by the loop's
instructions per second give what the round would take on this host unloaded.

1. **Corpus**: :func:`bot.engine.build.build_guide` on every bundle of the corpora
   (default ``../shared/corpus/verl`` and ``verl-2026h1`` next to the project root;
   ``--corpus DIR``, repeatable) with the shipped rules plus ``config/examples/verl.yml``.
   Reference in the same process: one Python pass over every diff line of the same
   bundles. Target: >= 200 pull requests per second.
2. **3000 files**: a synthetic merged PR of 3000 changed files (GitHub's cap for
   "List pull requests files"), ~12 diff lines each, against the same ~60 rules, end
   to end: snapshot from REST shapes, analysis, rules, rendering. Target: < 200 ms.
   Where its time goes is measured inside the same ``build_guide`` calls (the stages
   are wrapped where ``bot.engine.build`` calls them), so parts and total share one
   garbage-collector state (``build_guide`` pauses the collector) and add up; what no
   stage holds is shown as the rest.
3. **Glob matching alone**: every glob of those rules against the 3000 paths plus
   the corpus's paths, by prguide's :class:`bot.engine.rules.globs.FileIndex`, by plain
   ``wcmatch`` (the library whose semantics prguide follows) and by ``minimatch`` (the
   engine of GitHub's actions/labeler) under node, when node and npm are available
   (installed once into ``bench/.cache``). Target: >= 3x minimatch's throughput.
   Match counts per glob are compared; disagreements are listed. Measured in this
   process (repeat rounds; prguide builds a fresh index per round); no instruction count,
   as minimatch runs JIT-compiled under node.

    python bench/guide_speed.py [--quick] [--rounds N] [--corpus DIR]... [--no-node] [--no-instructions]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import random
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from common import (
    CORPORA,
    CORPUS,
    MIN_ROUNDS,
    ROOT,
    calibrate,
    calibration_loop,
    count_instructions,
    header,
    mark,
    median,
    need_corpus,
    table,
    valgrind,
    verdict_line,
)

CACHE = Path(__file__).resolve().parent / ".cache"
NODE_SCRIPT = Path(__file__).resolve().parent / "minimatch_speed.cjs"
#: The major version actions/labeler v5 depends on.
MINIMATCH_SPEC = "minimatch@10"
RULE_FILES = [ROOT / "config" / "examples" / "verl.yml"]

TARGET_PRS_PER_S = 200.0
TARGET_BIG_MS = 200.0
TARGET_VS_MINIMATCH = 3.0
BIG_FILES = 3000


# --- inputs --------------------------------------------------------------------------------------


def load_snapshots(folder: Path) -> list[Any]:
    """The bundles of ``folder`` as snapshots, by file name."""
    from bot.sources.bundle import snapshot_from_bundle

    out = []
    for path in sorted(need_corpus(folder).glob("*.json")):
        out.append(snapshot_from_bundle(json.loads(path.read_text(encoding="utf-8")), str(path)))
    return out


_TREE = [
    ("verl/trainer/{w}", ".py", 18), ("verl/workers/rollout/{w}", ".py", 14), ("verl/models/{w}", ".py", 10),
    ("verl/utils/{w}", ".py", 12), ("verl/experimental/{w}", ".py", 6), ("verl/trainer/config/{w}", ".yaml", 6),
    ("tests/{w}", ".py", 10), ("tests/special_e2e/{w}", ".sh", 3), ("docs/{w}", ".md", 6), ("docs/{w}", ".rst", 4),
    ("examples/{w}", ".sh", 4), ("recipe/{w}", ".py", 4), (".github/workflows/{w}", ".yml", 2),
    ("scripts/{w}", ".py", 1),
]  # fmt: skip
_WORDS = ["megatron", "fsdp", "vllm", "sglang", "rollout", "ckpt", "reward", "ppo", "grpo", "lora", "ray", "npu", "agent", "dataset"]


def synthetic_files(count: int = BIG_FILES, seed: int = 7) -> list[dict[str, Any]]:
    """``count`` changed files in "List pull requests files" shape, with paths like verl's tree.

    Each file adds ~8 and removes ~4 lines: Python files a function and an import,
    YAML files config keys, Markdown prose; deterministic for a ``seed``.
    """
    rnd = random.Random(seed)
    weights = [w for _, _, w in _TREE]
    files, seen = [], set()
    while len(files) < count:
        folder, ext, _ = rnd.choices(_TREE, weights)[0]
        a, b = rnd.sample(_WORDS, 2)
        path = folder.format(w=f"{a}/{b}_{len(files) % 97}_{rnd.randrange(10**6)}{ext}")
        if path in seen:
            continue
        seen.add(path)
        if ext == ".py":
            added = [f"import {a}_support", "", f"def {a}_{b}_step(batch, config):", f'    """Run one {b} step."""',
                     f"    total = len(batch) * config.{b}_scale", "    if total > 0:", f"        return {a}_support.run(batch)",
                     "    return None"]  # fmt: skip
            removed = [f"def old_{a}_step(batch):", "    return batch", f"# TODO: drop {b}", ""]
        elif ext in (".yaml", ".yml"):
            added = [f"{a}:", f"  {b}_batch_size: {rnd.randrange(1, 512)}", f"  {b}_enable: true", "  micro_batch: 4",
                     f"  name: {a}-{b}", "  seed: 1", "  retries: 2", "  timeout_s: 30"]  # fmt: skip
            removed = [f"  {b}_batch_size: 8", "  micro_batch: 2", "  seed: 0", "  retries: 1"]
        else:
            added = [f"## {a.title()} and {b}", "", f"Use `{a}` with `{b}` when the batch is large.", "", "```bash",
                     f"python -m verl.trainer.main_ppo {b}.enable=True", "```", ""]  # fmt: skip
            removed = [f"## Old {a}", f"See the {b} page.", "", "More text."]
        body = [f"+{line}" for line in added] + [f"-{line}" for line in removed] + [" unchanged context line"]
        patch = f"@@ -1,{len(removed) + 1} +1,{len(added) + 1} @@\n" + "\n".join(body)
        files.append({
            "sha": f"{rnd.getrandbits(160):040x}", "filename": path, "status": "modified",
            "additions": len(added), "deletions": len(removed), "changes": len(added) + len(removed),
            "patch": patch,
        })  # fmt: skip
    return files


def synthetic_pull(files: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """A merged "Get a pull request" object for ``files``."""
    return {
        "number": 9000, "title": "[trainer, rollout] refactor: move every worker onto the new engine API",
        "body": "Large mechanical refactor.\n\n### Test\nCI.", "state": "closed", "merged": True,
        "merged_at": "2026-01-02T03:04:05Z", "html_url": "https://github.com/bench/verl/pull/9000",
        "user": {"login": "dev", "type": "User"}, "merged_by": {"login": "lead", "type": "User"},
        "base": {"ref": "main", "repo": {"full_name": "bench/verl"}}, "head": {"ref": "refactor"},
        "labels": [], "changed_files": len(files), "additions": sum(f["additions"] for f in files),
        "deletions": sum(f["deletions"] for f in files), "commits": 40,
    }  # fmt: skip


def rule_globs(rules: Any) -> list[str]:
    """Every distinct glob pattern in ``rules``, in first-use order."""
    from bot.engine.rules.globs import Glob

    found: dict[str, None] = {}

    def walk(obj: Any) -> Iterator[Glob]:
        if isinstance(obj, Glob):
            yield obj
        elif dataclasses.is_dataclass(obj) and not isinstance(obj, type):
            for f in dataclasses.fields(obj):
                yield from walk(getattr(obj, f.name))
        elif isinstance(obj, (tuple, list)):
            for item in obj:
                yield from walk(item)

    for rule in rules.rules:
        for glob in walk(rule.conditions):
            found.setdefault(glob.pattern, None)
    return list(found)


# --- the child: one fresh process, rounds of one workload ---------------------------------------

#: The attribute of ``bot.engine.build`` each stage is called through -> the stage shown.
STAGES = {
    "analyse": "diff analysis (analyse)",
    "evaluate": "rules (RuleSet.evaluate)",
    "rename_map": "classify (rename_map, classify)",
    "classify": "classify (rename_map, classify)",
    "review_summary": "review and description (review_summary, parse_description, check_against_diff)",
    "parse_description": "review and description (review_summary, parse_description, check_against_diff)",
    "check_against_diff": "review and description (review_summary, parse_description, check_against_diff)",
    "promised_missing": "review and description (review_summary, parse_description, check_against_diff)",
    "housekeeping": "focus points and follow-ups (housekeeping, focus_points, follow_ups)",
    "focus_points": "focus points and follow-ups (housekeeping, focus_points, follow_ups)",
    "follow_ups": "focus points and follow-ups (housekeeping, focus_points, follow_ups)",
    "guide_claims": "rendering (guide_claims, render_claims, JSON data)",
    "render_claims": "rendering (guide_claims, render_claims, JSON data)",
    "_guide_data": "rendering (guide_claims, render_claims, JSON data)",
    "_area_data": "rendering (guide_claims, render_claims, JSON data)",
    "_language_data": "rendering (guide_claims, render_claims, JSON data)",
    "_collect_owed": "the collection the collector pause held back (_collect_owed)",
}
SNAPSHOT_STAGE = "snapshot from REST shapes"
REST_STAGE = "the rest of build_guide (glue; total minus the stages)"


class StageClock:
    """Wall time per stage inside real ``build_guide`` calls.

    Wraps the functions where :mod:`bot.engine.build` looks them up (and the rule set's
    ``evaluate``), so the stages run in the guide's own garbage-collector state and add
    up to the total; a stage called from inside another is counted in the outer one.
    """

    def __init__(self) -> None:
        from bot.engine import build

        self.spent: dict[str, float] = {}
        self.missing: list[str] = []
        self._depth = 0
        for attr, stage in STAGES.items():
            if attr == "evaluate":
                continue
            fn = getattr(build, attr, None)
            if fn is None:  # the engine changed: say so rather than guess
                self.missing.append(attr)
            else:
                setattr(build, attr, self.timed(stage, fn))

    def timed(self, stage: str, fn: Any) -> Any:
        """``fn`` whose outermost calls add their wall time to ``stage``."""

        def call(*args: Any, **kwargs: Any) -> Any:
            if self._depth:
                return fn(*args, **kwargs)
            self._depth += 1
            started = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                self.spent[stage] = self.spent.get(stage, 0.0) + time.perf_counter() - started
                self._depth -= 1

        return call

    def rules(self, rules: Any) -> Any:
        """``rules`` with ``evaluate`` timed (everything else passed through)."""
        return _TimedRules(rules, self.timed(STAGES["evaluate"], rules.evaluate))


class _TimedRules:
    def __init__(self, rules: Any, evaluate: Any) -> None:
        self._rules = rules
        self.evaluate = evaluate

    def __getattr__(self, name: str) -> Any:
        return getattr(self._rules, name)


def child(args: argparse.Namespace) -> int:
    """One fresh process: set up, then ``--child-rounds`` rounds, a JSON line per round on stdout.

    A :func:`common.mark` ends the set-up and each round, so that under callgrind each
    round's instructions are counted apart (the JSON line is printed after the mark).
    """
    if args.child == "calibrate":
        mark()
        calibration_loop()
        mark()
        return 0
    from bot.engine.build import build_guide
    from bot.engine.rules import load_rules
    from bot.engine.snapshot import PullRequestSnapshot

    rules = load_rules(RULE_FILES)
    clock = StageClock() if args.stages else None
    used = clock.rules(rules) if clock else rules
    if args.child == "corpus":
        snapshots = [s for folder in args.corpus for s in load_snapshots(folder)]
    else:
        files = synthetic_files(args.big_files)
        pull = synthetic_pull(files)
    mark()
    for _ in range(args.child_rounds):
        if clock:
            clock.spent.clear()
        per_pr = []
        wall, cpu = time.perf_counter(), time.process_time()
        if args.child == "corpus":
            for s in snapshots:
                started = time.perf_counter()
                build_guide(s, used)
                per_pr.append((f"{s.repository}#{s.number}", len(s.files), time.perf_counter() - started))
        else:
            started = time.perf_counter()
            snapshot = PullRequestSnapshot.from_github(pull, files, [], [], repository="bench/verl")
            snapshot_s = time.perf_counter() - started
            build_guide(snapshot, used)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        mark()
        stages = dict(clock.spent) if clock else {}
        if clock and args.child == "big":
            stages[SNAPSHOT_STAGE] = snapshot_s
        print(json.dumps({"wall": wall, "cpu": cpu, "stages": stages, "per_pr": per_pr,
                          "missing": clock.missing if clock else []}), flush=True)  # fmt: skip
    return 0


def child_argv(args: argparse.Namespace, what: str, rounds: int, *, stages: bool) -> list[str]:
    """The command line of a child process measuring ``what`` for ``rounds`` rounds."""
    argv = [sys.executable, str(Path(__file__).resolve()), "--child", what, "--child-rounds", str(rounds), "--big-files", str(args.big_files)]
    for folder in args.corpus:
        argv += ["--corpus", str(folder)]
    return argv + ([] if stages else ["--no-stages"])


def run_children(args: argparse.Namespace, what: str) -> list[list[dict[str, Any]]]:
    """``args.rounds`` fresh processes of ``1 + args.repeats`` rounds each; their rounds, in order."""
    out = []
    for _ in range(args.rounds):
        done = subprocess.run(child_argv(args, what, 1 + args.repeats, stages=True), cwd=ROOT, capture_output=True, text=True, timeout=1800)
        if done.returncode != 0:
            raise RuntimeError(f"the {what} child failed: {done.stderr.strip()[-800:]}")
        out.append([json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")])
    return out


def instructions(args: argparse.Namespace, what: str) -> dict[str, float] | None:
    """Instructions of the first and of a repeated round of ``what`` (one process under callgrind), or None."""
    if args.no_instructions or valgrind() is None:
        return None
    parts = count_instructions(child_argv(args, what, 2, stages=False))
    return {"first": parts[1], "repeat": parts[2]}


def host_speed(args: argparse.Namespace) -> dict[str, float] | None:
    """The calibration loop's instructions and this host's instructions per CPU second on it, or None."""
    if args.no_instructions or valgrind() is None:
        return None
    count = count_instructions([sys.executable, str(Path(__file__).resolve()), "--child", "calibrate"])[1]
    cpu_s = calibrate()["cpu_ms"] / 1000
    return {"instructions": count, "per_s": count / cpu_s}


def time_rounds(fn, rounds: int) -> list[float]:
    """Seconds each of ``rounds`` calls of ``fn()`` took (after one untimed warm-up call)."""
    fn()
    out = []
    for _ in range(rounds):
        started = time.perf_counter()
        fn()
        out.append(time.perf_counter() - started)
    return out


def line_pass(snapshots: Sequence[Any]) -> int:
    """The reference: look at the first character of every diff line once."""
    n = 0
    for s in snapshots:
        for f in s.files:
            for line in (f.patch or "").split("\n"):
                if line[:1] in "+-":
                    n += 1
    return n


def split(runs: list[list[dict[str, Any]]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """First rounds (one per fresh process) and repeated rounds."""
    return [r[0] for r in runs], [x for r in runs for x in r[1:]]


def stage_table(first: list[dict[str, Any]], repeat: list[dict[str, Any]], scale: float, unit: str) -> str:
    """Median time per stage (``scale`` x seconds), first pass and repeat, with the rest and the total."""
    names = list(dict.fromkeys([SNAPSHOT_STAGE] + list(STAGES.values())))
    rows = []
    totals = {"first": median(r["wall"] for r in first), "repeat": median(r["wall"] for r in repeat)}
    for name in names:
        if not any(name in r["stages"] for r in first):
            continue
        a = median(r["stages"].get(name, 0.0) for r in first)
        b = median(r["stages"].get(name, 0.0) for r in repeat)
        rows.append([name, a * scale, f"{a / totals['first']:.0%}", b * scale, f"{b / totals['repeat']:.0%}"])
    rest_a = median(r["wall"] - sum(r["stages"].values()) for r in first)
    rest_b = median(r["wall"] - sum(r["stages"].values()) for r in repeat)
    rows.append([REST_STAGE, rest_a * scale, f"{rest_a / totals['first']:.0%}", rest_b * scale, f"{rest_b / totals['repeat']:.0%}"])
    rows.append(["total (wall)", totals["first"] * scale, "100%", totals["repeat"] * scale, "100%"])
    return table(["stage (inside build_guide)", f"first pass {unit}", "share", f"repeat {unit}", "share"], rows)


def ensure_minimatch() -> tuple[Path | None, str]:
    """``(folder, "")`` with minimatch installed under ``bench/.cache``, or ``(None, why not)``."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if not node or not npm:
        return None, "node or npm not found: minimatch comparison skipped"
    folder = CACHE / "minimatch"
    if not (folder / "node_modules" / "minimatch" / "package.json").exists():
        folder.mkdir(parents=True, exist_ok=True)
        done = subprocess.run(
            [npm, "install", "--no-audit", "--no-fund", "--silent", "--prefix", str(folder), MINIMATCH_SPEC],
            capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        if done.returncode != 0:
            return None, f"npm install {MINIMATCH_SPEC} failed: minimatch comparison skipped ({done.stderr.strip()[:200]})"
    return folder, ""


def run_minimatch(folder: Path, paths: Sequence[str], globs: Sequence[str], rounds: int) -> dict[str, Any]:
    """Run ``minimatch_speed.cjs``; returns its JSON answer."""
    CACHE.mkdir(parents=True, exist_ok=True)
    data = CACHE / "minimatch-input.json"
    data.write_text(json.dumps({"paths": list(paths), "globs": list(globs), "rounds": rounds + 1}))
    done = subprocess.run(["node", str(NODE_SCRIPT), str(folder), str(data)], capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        raise RuntimeError(f"node failed: {done.stderr.strip()[:500]}")
    answer = json.loads(done.stdout)
    answer["round_ms"] = answer["round_ms"][1:]  # the first round warms the JIT up
    return answer


def pass_rows(first: list[dict[str, Any]], repeat: list[dict[str, Any]], count: dict[str, float] | None,
              speed: dict[str, float] | None, *, per: int, scale: float) -> list[list[Any]]:
    """Rows of a pass table: wall, CPU, rate, instructions, time at the host's reference speed."""
    rows = []
    for name, rounds, key in (("first pass (fresh process)", first, "first"), ("repeat (caches full)", repeat, "repeat")):
        wall, cpu = median(r["wall"] for r in rounds), median(r["cpu"] for r in rounds)
        instr = count[key] if count else float("nan")
        at_ref = instr / speed["per_s"] if count and speed else float("nan")
        rate = [per / cpu] if per else []
        rows.append([f"{name}, {len(rounds)} rounds", wall * scale, min(r["wall"] for r in rounds) * scale,
                     cpu * scale, *rate, instr / 1e6, at_ref * scale])  # fmt: skip
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    """Run the three measurements and print their tables; exit 0 (targets are reported, not enforced)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--corpus", type=Path, action="append", help="folder of bundle *.json files (repeatable; default: "
                        + ", ".join(str(c) for c in CORPORA) + ")")  # fmt: skip
    parser.add_argument("--rounds", type=int, default=MIN_ROUNDS, help="fresh processes per measurement (at least 5; default 5)")
    parser.add_argument("--repeats", type=int, default=2, help="repeated rounds in each of those processes (default 2)")
    parser.add_argument("--quick", action="store_true", help="1000-file synthetic PR, no instruction counts: under a minute")
    parser.add_argument("--no-node", action="store_true", help="skip the minimatch comparison")
    parser.add_argument("--no-instructions", action="store_true", help="skip the instruction counts (valgrind; several minutes)")
    parser.add_argument("--child", choices=("corpus", "big", "calibrate"), help=argparse.SUPPRESS)
    parser.add_argument("--child-rounds", type=int, default=1, help=argparse.SUPPRESS)
    parser.add_argument("--big-files", type=int, default=BIG_FILES, help=argparse.SUPPRESS)
    parser.add_argument("--no-stages", dest="stages", action="store_false", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    args.corpus = args.corpus or [c for c in CORPORA if c.exists()] or [CORPUS]
    if args.child:
        return child(args)
    args.rounds = max(MIN_ROUNDS, args.rounds)
    args.repeats = max(1, args.repeats)
    if args.quick:
        args.big_files, args.no_instructions = 1000, True

    from bot.engine.rules import load_rules
    from bot.engine.rules.globs import GLOB_FLAGS, FileIndex, compile_glob
    from wcmatch import glob as wcglob

    print(header("prguide engine speed"))
    rules = load_rules(RULE_FILES)
    snapshots = [s for folder in args.corpus for s in load_snapshots(folder)]
    speed = host_speed(args)
    if speed:
        print(f"host speed: the calibration loop is {speed['instructions'] / 1e6:,.0f} M instructions: "
              f"{speed['per_s'] / 1e9:.2f} G instructions per CPU second on this host now\n")  # fmt: skip
    else:
        print("instructions: not counted (" + ("--no-instructions or --quick" if args.no_instructions else "valgrind not found") + ")\n")

    # 1. corpus
    first, repeat = split(run_children(args, "corpus"))
    count = instructions(args, "corpus")
    floor_s = median(time_rounds(lambda: line_pass(snapshots), args.rounds))
    lines = sum((f.patch or "").count("\n") + 1 for s in snapshots for f in s.files)
    n = len(snapshots)
    print(f"## 1. Corpus: {n} pull requests ({lines:,} diff lines) from {', '.join(p.name for p in args.corpus)}, "
          f"{len(rules.rules)} rules; {args.rounds} fresh processes of 1 + {args.repeats} rounds\n")  # fmt: skip
    rows = pass_rows(first, repeat, count, speed, per=n, scale=1.0)
    rows.append(["reference: one pass over every diff line (this process)", floor_s, float("nan"), float("nan"), float("nan"), float("nan"), float("nan")])
    print(table(["pass", "median wall s/round", "min wall s", "median CPU s/round", "PRs per CPU s", "M instructions/round",
                 "s/round at the host's reference speed"], rows))  # fmt: skip
    prs_first = n / median(r["cpu"] for r in first)
    prs_first_wall = n / median(r["wall"] for r in first)
    prs_repeat = n / median(r["cpu"] for r in repeat)
    extra = f"; instructions first / repeat {count['first'] / count['repeat']:.3f}x" if count else ""
    print(f"\nfirst pass / repeat: {prs_repeat / prs_first:.3f}x the CPU time{extra}; wall: {prs_first_wall:.0f} PRs/s first pass")
    by_pr: dict[str, list[float]] = {}
    for r in first:
        for name, files, secs in r["per_pr"]:
            by_pr.setdefault(f"{name} ({files} files)", []).append(secs)
    slowest = sorted(((median(v), k) for k, v in by_pr.items()), reverse=True)[:5]
    print("slowest pull requests, first pass: " + ", ".join(f"{k} {t * 1000:.1f} ms" for t, k in slowest) + "\n")
    print(stage_table(first, repeat, 1000, "ms/round") + "\n")
    if first[0]["missing"]:
        print(f"not found in bot.engine.build (not timed apart, in the rest): {', '.join(first[0]['missing'])}\n")
    estimate = f"; at the host's reference speed {n / (count['first'] / speed['per_s']):.0f}" if count and speed else ""
    print(verdict_line(f"corpus >= {TARGET_PRS_PER_S:.0f} guides/s on one core (first pass, CPU time)",
                       f"{prs_first:.0f} PRs/s (wall {prs_first_wall:.0f}, repeat {prs_repeat:.0f}{estimate})",
                       prs_first >= TARGET_PRS_PER_S) + "\n")  # fmt: skip

    # 2. one 3000-file pull request
    files = synthetic_files(args.big_files)
    big_first, big_repeat = split(run_children(args, "big"))
    big_count = instructions(args, "big")
    print(f"## 2. One synthetic pull request: {args.big_files} files, {sum(f['changes'] for f in files):,} changed lines, "
          f"{len(rules.rules)} rules; snapshot from REST shapes + build_guide; {args.rounds} fresh processes of 1 + {args.repeats} rounds\n")  # fmt: skip
    print(table(["pass", "median wall ms", "min wall ms", "median CPU ms", "M instructions", "ms at the host's reference speed"],
                pass_rows(big_first, big_repeat, big_count, speed, per=0, scale=1000)))  # fmt: skip
    print()
    print(stage_table(big_first, big_repeat, 1000, "ms") + "\n")
    big_ms = median(r["cpu"] for r in big_first) * 1000
    big_wall = median(r["wall"] for r in big_first) * 1000
    big_rep = median(r["cpu"] for r in big_repeat) * 1000
    estimate = f"; at the host's reference speed {big_count['first'] / speed['per_s'] * 1000:.0f} ms" if big_count and speed else ""
    if args.big_files == BIG_FILES:
        print(verdict_line(f"{BIG_FILES}-file PR < {TARGET_BIG_MS:.0f} ms on one core (first pass, CPU time)",
                           f"{big_ms:.0f} ms (wall {big_wall:.0f}, repeat {big_rep:.0f}{estimate})", big_ms < TARGET_BIG_MS) + "\n")  # fmt: skip
    else:
        print(f"{args.big_files}-file PR: {big_ms:.0f} ms first pass (no verdict: the target is for {BIG_FILES} files)\n")

    # 3. glob matching alone
    globs = rule_globs(rules)
    compiled = [compile_glob(g) for g in globs]
    paths = list(dict.fromkeys([f["filename"] for f in files] + [f.filename for s in snapshots for f in s.files]))
    tests = len(paths) * len(globs)
    ours: dict[str, int] = {}

    def prguide_match() -> None:
        index = FileIndex(paths)
        for g in compiled:
            ours[g.pattern] = len(index.match(g))

    wc_counts: dict[str, int] = {}
    matchers = [(g, wcglob.compile(g, flags=GLOB_FLAGS)) for g in globs]

    def wcmatch_match() -> None:
        for g, m in matchers:
            wc_counts[g] = sum(1 for p in paths if m.match(p))

    ours_s = median(time_rounds(prguide_match, args.rounds))
    wc_s = median(time_rounds(wcmatch_match, args.rounds))
    rows = [
        ["prguide FileIndex (fresh index per round)", ours_s * 1000, tests / ours_s / 1e6, 1.0],
        ["wcmatch, compiled, path by path", wc_s * 1000, tests / wc_s / 1e6, wc_s / ours_s],
    ]
    notes = []
    mm_s = None
    disagree: dict[str, dict[str, int]] = {}
    if args.no_node:
        notes.append("minimatch comparison skipped (--no-node)")
    else:
        folder, why = ensure_minimatch()
        if folder is None:
            notes.append(why)
        else:
            answer = run_minimatch(folder, paths, globs, args.rounds)
            mm_s = median(answer["round_ms"]) / 1000
            rows.append([f"minimatch {answer['version']} under node {subprocess.check_output(['node', '--version'], text=True).strip()}, {{dot: true}}", mm_s * 1000, tests / mm_s / 1e6, mm_s / ours_s])
            disagree = {g: {"prguide": ours[g], "minimatch": answer["counts"][g]} for g in globs if answer["counts"].get(g) != ours[g]}
    disagree_wc = [g for g in globs if wc_counts[g] != ours[g]]
    print(f"## 3. Glob matching alone: {len(globs)} globs x {len(paths):,} paths = {tests:,} tests, {args.rounds} rounds\n")
    print(table(["matcher", "median ms/round", "M tests per s", "time / prguide's"], rows))
    if mm_s is not None:
        ratio = mm_s / ours_s
        print("\n" + verdict_line(f"glob matching >= {TARGET_VS_MINIMATCH:.0f}x minimatch's throughput (repeat rounds, wall)",
                                  f"{ratio:.1f}x", ratio >= TARGET_VS_MINIMATCH))
        print(f"globs where minimatch counts differently: {len(disagree)}" + "".join(f"\n  {g!r}: {c}" for g, c in disagree.items()))
    print(f"globs where wcmatch counts differently: {len(disagree_wc)}" + "".join(f"\n  {g!r}" for g in disagree_wc))
    for note in notes:
        print(note)
    return 0


if __name__ == "__main__":
    sys.exit(main())
