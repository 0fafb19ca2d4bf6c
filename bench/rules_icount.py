"""Rule evaluation alone: ``RuleSet.run`` on pre-analysed pull requests (corpus and one 3000-file PR).

    python bench/rules_icount.py corpus|big [warm] [run]   # under valgrind (see main)
    python bench/rules_icount.py dump OUT             # repr of every hit, to compare two checkouts
    python bench/rules_icount.py time                 # wall time of rule evaluation, median of 5
"""

from __future__ import annotations

import sys
import time

sys.path.insert(0, "bench")
sys.path.insert(0, ".")
import guide_speed as gs  # noqa: E402

from bot.engine.analysis import analyse  # noqa: E402
from bot.engine.rules import load_rules  # noqa: E402
from bot.engine.snapshot import PullRequestSnapshot  # noqa: E402


def inputs(what: str):
    if what == "corpus":
        snaps = gs.load_snapshots(gs.CORPUS) + gs.load_snapshots(gs.CORPUS.parent / "verl-2026h1")
    else:
        files = gs.synthetic_files(3000)
        snaps = [PullRequestSnapshot.from_github(gs.synthetic_pull(files), files, [], [], repository="bench/verl")]
    return [(s, analyse(s)) for s in snaps]


def main() -> None:
    what = sys.argv[1]
    if what == "dump":
        out = []
        for rules in (load_rules(), load_rules(gs.RULE_FILES)):
            for w in ("corpus", "big"):
                for s, a in inputs(w):
                    ev = rules.run(s, a)
                    out.append(repr(ev))
                    out.append(repr([[r.key for r in h.reasons] for h in ev.hits]))
        open(sys.argv[2], "w").write("\n".join(out))
        return
    rules = load_rules(gs.RULE_FILES)
    if what == "time":
        for w in ("corpus", "big"):
            pairs = inputs(w)
            ts = []
            for _ in range(5):
                t = time.perf_counter()
                for s, a in pairs:
                    rules.run(s, a)
                ts.append(time.perf_counter() - t)
            print(w, f"{sorted(ts)[2] * 1000:.1f} ms")
        return
    pairs = inputs(what)
    # "corpus" sets up only; "corpus run" adds one round; "corpus warm" one round, "corpus warm run" two
    # (their difference leaves out one-time costs such as loading the message catalogue).
    for _ in range(len(sys.argv) - 2):
        for s, a in pairs:
            rules.run(s, a)

if __name__ == "__main__":
    main()
