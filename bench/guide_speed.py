"""How fast the guide engine is: corpus guides per second, one 3000-file PR, glob matching.

Three measurements, each a median over ``--rounds`` rounds (at least 5):

1. **Corpus**: :func:`bot.engine.build.build_guide` on every bundle of a folder (default
   ``../shared/corpus/verl`` next to the project root; ``--corpus DIR``) with the shipped
   rules plus ``config/examples/verl.yml``. Reference in the same run: one Python pass
   over every diff line of the same bundles (split into lines, look at the first
   character), the least any diff analysis written in Python does.
   Target: >= 200 pull requests per second.
2. **3000 files**: a synthetic merged PR of 3000 changed files (GitHub's cap for
   "List pull requests files"), ~12 diff lines each, against the same ~60 rules, end
   to end: snapshot from REST shapes, analysis, rules, rendering. Target: < 200 ms.
3. **Glob matching alone**: every glob of those rules against the 3000 paths plus
   the corpus's paths, by prguide's :class:`bot.engine.rules.globs.FileIndex`, by plain
   ``wcmatch`` (the library whose semantics prguide follows) and by ``minimatch`` (the
   engine of GitHub's actions/labeler) under node, when node and npm are available
   (installed once into ``bench/.cache``). Target: >= 3x minimatch's throughput.
   Match counts per glob are compared; disagreements are listed.

    python bench/guide_speed.py [--quick] [--rounds N] [--corpus DIR] [--no-node]
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

from common import CORPUS, MIN_ROUNDS, ROOT, header, median, need_corpus, table, verdict

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


# --- measurements ------------------------------------------------------------------------------------


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


def stage_rows(pull: Any, files: Sequence[Any], rules: Any, rounds: int, total_ms: float) -> list[list[Any]]:
    """Where the time of one big guide goes: snapshot, diff analysis, rules, the rest (classify, focus, render)."""
    from bot.engine.analysis import analyse
    from bot.engine.snapshot import PullRequestSnapshot

    snapshot = PullRequestSnapshot.from_github(pull, files, [], [], repository="bench/verl")
    analysis = analyse(snapshot)
    stages = {
        "snapshot from REST shapes": median(time_rounds(lambda: PullRequestSnapshot.from_github(pull, files, [], [], repository="bench/verl"), rounds)) * 1000,
        "diff analysis (bot.engine.analysis.analyse)": median(time_rounds(lambda: analyse(snapshot), rounds)) * 1000,
        "rules (RuleSet.evaluate)": median(time_rounds(lambda: rules.evaluate(snapshot, analysis), rounds)) * 1000,
    }
    stages["classify, focus points, render (the rest)"] = max(0.0, total_ms - sum(stages.values()))
    return [[name, ms, f"{ms / total_ms:.0%}"] for name, ms in stages.items()]


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


def main(argv: Sequence[str] | None = None) -> int:
    """Run the three measurements and print their tables; exit 0 (targets are reported, not enforced)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--corpus", type=Path, default=CORPUS, help=f"folder of bundle *.json files (default {CORPUS})")
    parser.add_argument("--rounds", type=int, default=7, help="rounds per measurement (at least 5; default 7)")
    parser.add_argument("--quick", action="store_true", help="5 rounds, 1000-file synthetic PR: a few seconds")
    parser.add_argument("--no-node", action="store_true", help="skip the minimatch comparison")
    args = parser.parse_args(argv)
    rounds = max(MIN_ROUNDS, 5 if args.quick else args.rounds)
    big_files = 1000 if args.quick else BIG_FILES

    from bot.engine.build import build_guide
    from bot.engine.rules import load_rules
    from bot.engine.rules.globs import GLOB_FLAGS, FileIndex, compile_glob
    from bot.engine.snapshot import PullRequestSnapshot
    from wcmatch import glob as wcglob

    print(header("prguide engine speed"))
    rules = load_rules(RULE_FILES)
    snapshots = load_snapshots(args.corpus)

    # 1. corpus
    corpus_times = time_rounds(lambda: [build_guide(s, rules) for s in snapshots], rounds)
    floor_times = time_rounds(lambda: line_pass(snapshots), rounds)
    per_pr = []
    for s in snapshots:
        started = time.perf_counter()
        build_guide(s, rules)
        per_pr.append((time.perf_counter() - started, s.number, len(s.files)))
    per_pr.sort(reverse=True)
    corpus_s, floor_s = median(corpus_times), median(floor_times)
    prs_per_s = len(snapshots) / corpus_s
    lines = sum((f.patch or "").count("\n") + 1 for s in snapshots for f in s.files)
    print(f"## 1. Corpus: {len(snapshots)} pull requests ({lines:,} diff lines) from {args.corpus}, {len(rules.rules)} rules, {rounds} rounds\n")
    print(table(
        ["what", "median s/round", "PRs per s", "x reference time", "target", "verdict"],
        [
            ["build_guide over the corpus", corpus_s, prs_per_s, corpus_s / floor_s, f">= {TARGET_PRS_PER_S:.0f} PRs/s", verdict(prs_per_s >= TARGET_PRS_PER_S)],
            ["reference: one pass over every diff line", floor_s, len(snapshots) / floor_s, 1.0, "", ""],
        ],
    ))  # fmt: skip
    print("\nslowest pull requests: " + ", ".join(f"#{n} {t * 1000:.1f} ms ({k} files)" for t, n, k in per_pr[:5]) + "\n")

    # 2. one 3000-file pull request
    files = synthetic_files(big_files)
    pull = synthetic_pull(files)

    def big() -> Any:
        snapshot = PullRequestSnapshot.from_github(pull, files, [], [], repository="bench/verl")
        return build_guide(snapshot, rules)

    big_times = time_rounds(big, rounds)
    guide = big()
    big_ms = median(big_times) * 1000
    print(f"## 2. One synthetic pull request: {big_files} files, {sum(f['changes'] for f in files):,} changed lines, {len(rules.rules)} rules, {rounds} rounds\n")
    print(table(
        ["what", "median ms", "min ms", "max ms", "target", "verdict"],
        [[f"snapshot + build_guide, {big_files} files", big_ms, min(big_times) * 1000, max(big_times) * 1000,
          f"< {TARGET_BIG_MS:.0f} ms" + (" (at 3000 files)" if big_files != BIG_FILES else ""),
          verdict(big_ms < TARGET_BIG_MS) if big_files == BIG_FILES else "n/a (--quick)"]],
    ))  # fmt: skip
    print(f"\nguide: {len(guide.markdown):,} characters, labels {', '.join(guide.labels) or '(none)'}\n")
    print(table(["stage (same PR)", "median ms", "share"], stage_rows(pull, files, rules, rounds, big_ms)) + "\n")

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

    ours_s = median(time_rounds(prguide_match, rounds))
    wc_s = median(time_rounds(wcmatch_match, rounds))
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
            answer = run_minimatch(folder, paths, globs, rounds)
            mm_s = median(answer["round_ms"]) / 1000
            rows.append([f"minimatch {answer['version']} under node {subprocess.check_output(['node', '--version'], text=True).strip()}, {{dot: true}}", mm_s * 1000, tests / mm_s / 1e6, mm_s / ours_s])
            disagree = {g: {"prguide": ours[g], "minimatch": answer["counts"][g]} for g in globs if answer["counts"].get(g) != ours[g]}
    disagree_wc = [g for g in globs if wc_counts[g] != ours[g]]
    print(f"## 3. Glob matching alone: {len(globs)} globs x {len(paths):,} paths = {tests:,} tests, {rounds} rounds\n")
    print(table(["matcher", "median ms/round", "M tests per s", "time / prguide's"], rows))
    if mm_s is not None:
        ratio = mm_s / ours_s
        print(f"\nprguide vs minimatch: {ratio:.1f}x minimatch's throughput (target >= {TARGET_VS_MINIMATCH:.0f}x: {verdict(ratio >= TARGET_VS_MINIMATCH)})")
        print(f"globs where minimatch counts differently: {len(disagree)}" + "".join(f"\n  {g!r}: {c}" for g, c in disagree.items()))
    print(f"globs where wcmatch counts differently: {len(disagree_wc)}" + "".join(f"\n  {g!r}" for g in disagree_wc))
    for note in notes:
        print(note)
    return 0


if __name__ == "__main__":
    sys.exit(main())
